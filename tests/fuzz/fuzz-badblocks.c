/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An nd region's badblocks list (pmem-badblocks.c). The input: one byte
 * choosing the page size and whether the list also goes through a file,
 * then the region's start and a device's range (8 bytes each, little
 * endian), then the list's text. What the parser accepts is what the
 * kernel could have written, it prints back to the same extents, and no
 * bad sector it counts lies outside the device.
 */
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "pmem-badblocks.h"
#include "util.h"

#define HEADER 25

static uint64_t le64(const uint8_t *p) {
        uint64_t v = 0;

        for (int i = 7; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

static void check_list(const struct pmem_badblocks *bb, size_t len, size_t page_size) {
        _cleanup_(pmem_badblocks_clearp) struct pmem_badblocks again = {};
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;

        FUZZ_ASSERT(bb->n <= len / 4);          /* "0 1\n" is the shortest line */
        FUZZ_ASSERT(bb->incomplete == (len == page_size - 1 || bb->n >= page_size / 8));
        for (size_t i = 0; i < bb->n; i++) {
                const struct pmem_bad_extent *e = &bb->extents[i];

                FUZZ_ASSERT(e->count >= 1 && e->count <= UINT32_MAX);
                FUZZ_ASSERT(e->sector <= UINT64_MAX / PMEM_SECTOR_SIZE - e->count);
                if (i > 0)
                        FUZZ_ASSERT(e->sector >= bb->extents[i - 1].sector + bb->extents[i - 1].count);
        }

        /* Printed as the kernel prints it, it reads back the same. */
        f = open_memstream(&text, &size);
        if (!f)
                return;
        for (size_t i = 0; i < bb->n; i++)
                fprintf(f, "%llu %llu\n", (unsigned long long) bb->extents[i].sector,
                        (unsigned long long) bb->extents[i].count);
        if (fclose(f) != 0)
                return;
        FUZZ_ASSERT(pmem_badblocks_parse(text, size, SIZE_MAX, &again) == 0);
        FUZZ_ASSERT(again.n == bb->n && !again.incomplete);
        for (size_t i = 0; i < bb->n; i++)
                FUZZ_ASSERT(again.extents[i].sector == bb->extents[i].sector &&
                            again.extents[i].count == bb->extents[i].count);
}

static void check_ranges(const struct pmem_badblocks *bb, uint64_t region_start, const struct pmem_range *range) {
        uint64_t sectors = 7, first = 7;
        int r;

        r = pmem_badblocks_in_ranges(bb, region_start, range, 1, &sectors, &first);
        FUZZ_ASSERT(r == 0 || r == -ERANGE);
        if (r < 0)
                return;
        FUZZ_ASSERT(sectors <= (range->end - range->start) / PMEM_SECTOR_SIZE + 2);
        if (sectors > 0)
                FUZZ_ASSERT(first >= range->start && first < range->end && first >= region_start);
        else
                FUZZ_ASSERT(first == UINT64_MAX);
}

/* The same text as the region's file, with a device on it: whatever it holds, the result is consistent. */
static void check_read(const char *text, size_t len, uint64_t region_start, const struct pmem_range *range) {
        struct pmem_device dev = { .ranges = (struct pmem_range *) range, .n_ranges = 1 };
        const char *dir = fuzz_scratch_dir();
        char start[32];

        fuzz_clear_dir(dir);
        fuzz_write_file(dir, "badblocks", text, len);
        snprintf(start, sizeof(start), "%#llx\n", (unsigned long long) region_start);
        fuzz_write_file(dir, "resource", start, strlen(start));
        FUZZ_ASSERT(pmem_badblocks_read("/", dir + 1, &dev) == 0);
        FUZZ_ASSERT(dev.badblocks_error <= 0);
        if (dev.bad_sectors > 0)
                FUZZ_ASSERT(dev.first_bad >= range->start && dev.first_bad < range->end);
        if (dev.badblocks_error == -EBADMSG || dev.badblocks_error == -ERANGE)
                FUZZ_ASSERT(dev.bad_sectors == 0);
        FUZZ_ASSERT(strlen(pmem_badblocks_describe(dev.badblocks_error)) > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const size_t pages[] = { 4096, 64, 128, 65536 };
        _cleanup_(pmem_badblocks_clearp) struct pmem_badblocks bb = {};
        struct pmem_range range;
        uint64_t region_start;
        size_t page_size;
        const char *text;
        size_t len;
        int r;

        if (size < HEADER)
                return 0;
        page_size = pages[data[0] % ELEMENTSOF(pages)];
        region_start = le64(data + 1);
        range.start = le64(data + 9);
        range.end = range.start + (le64(data + 17) % (UINT64_C(1) << 40));
        if (range.end < range.start)
                range.end = UINT64_MAX;
        text = (const char *) data + HEADER;
        len = size - HEADER;

        r = pmem_badblocks_parse(text, len, page_size, &bb);
        FUZZ_ASSERT(r == 0 || r == -EBADMSG);
        if (r < 0)
                FUZZ_ASSERT(bb.n == 0 && !bb.extents);
        else {
                check_list(&bb, len, page_size);
                check_ranges(&bb, region_start, &range);
        }
        if (data[0] & 0x80)
                check_read(text, len, region_start, &range);
        return 0;
}
