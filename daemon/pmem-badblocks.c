/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <unistd.h>
#include "pmem-badblocks.h"
#include "sysfs.h"
#include "util.h"

void pmem_badblocks_clear(struct pmem_badblocks *bb) {
        if (!bb)
                return;
        free(bb->extents);
        *bb = (struct pmem_badblocks) {};
}

/* Decimal digits only, as the kernel's "%llu" and "%u" print them. */
static int parse_decimal(const char *s, size_t len, uint64_t *ret) {
        uint64_t v = 0;

        if (len == 0)
                return -EBADMSG;
        for (size_t i = 0; i < len; i++) {
                unsigned d = (unsigned) (s[i] - '0');

                if (!isdigit((unsigned char) s[i]) || v > (UINT64_MAX - d) / 10)
                        return -EBADMSG;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

/* One "SECTOR COUNT" line, without its newline. */
static int parse_extent(const char *line, size_t len, struct pmem_bad_extent *ret) {
        const char *blank = memchr(line, ' ', len);
        uint64_t sector, count;

        if (!blank || parse_decimal(line, (size_t) (blank - line), &sector) < 0 ||
            parse_decimal(blank + 1, len - (size_t) (blank - line) - 1, &count) < 0)
                return -EBADMSG;
        if (count == 0 || count > UINT32_MAX)
                return -EBADMSG;
        /* Its end in bytes must fit: (sector + count) * 512 <= 2^64 - 1. */
        if (sector > UINT64_MAX / PMEM_SECTOR_SIZE - count)
                return -EBADMSG;
        *ret = (struct pmem_bad_extent) { sector, count };
        return 0;
}

int pmem_badblocks_parse(const char *text, size_t len, size_t page_size, struct pmem_badblocks *ret) {
        _cleanup_(pmem_badblocks_clearp) struct pmem_badblocks bb = {};
        bool cut;
        size_t pos = 0;

        if (page_size < 64 || (!text && len > 0) || !ret)
                return -EINVAL;
        /* sysfs hands out at most page_size - 1 bytes of an attribute. */
        if (len >= page_size || (len > 0 && memchr(text, '\0', len)))
                return -EBADMSG;
        cut = len == page_size - 1;
        while (pos < len) {
                const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
                struct pmem_bad_extent e;
                int r;

                if (!nl) {
                        if (!cut)
                                return -EBADMSG;
                        break;          /* the rest of the line was beyond the page */
                }
                pos += (size_t) (nl - line) + 1;
                r = parse_extent(line, (size_t) (nl - line), &e);
                if (r < 0)
                        return r;
                if (bb.n > 0 && e.sector < bb.extents[bb.n - 1].sector + bb.extents[bb.n - 1].count)
                        return -EBADMSG;
                if (GROW(bb.extents, bb.allocated, bb.n + 1) < 0)
                        return -ENOMEM;
                bb.extents[bb.n++] = e;
        }
        bb.incomplete = cut || bb.n >= page_size / 8;

        pmem_badblocks_clear(ret);
        *ret = bb;
        bb = (struct pmem_badblocks) {};
        return 0;
}

int pmem_badblocks_in_ranges(const struct pmem_badblocks *bb, uint64_t region_start, const struct pmem_range *ranges,
                             size_t n_ranges, uint64_t *ret_sectors, uint64_t *ret_first) {
        uint64_t sectors = 0, first = UINT64_MAX;

        for (size_t i = 0; bb && i < bb->n; i++) {
                const struct pmem_bad_extent *e = &bb->extents[i];
                uint64_t start, end;

                if (e->count == 0 || e->sector > UINT64_MAX / PMEM_SECTOR_SIZE - e->count)
                        return -ERANGE;
                start = e->sector * PMEM_SECTOR_SIZE;
                end = (e->sector + e->count) * PMEM_SECTOR_SIZE;
                if (region_start > UINT64_MAX - end)
                        return -ERANGE;
                start += region_start;
                end += region_start;
                for (size_t k = 0; k < n_ranges; k++) {
                        uint64_t lo = MAX(start, ranges[k].start), hi = MIN(end, ranges[k].end), n;

                        if (lo >= hi)
                                continue;
                        /* A range that is not sector-aligned still loses the whole sector. */
                        n = (hi - lo) / PMEM_SECTOR_SIZE + ((hi - lo) % PMEM_SECTOR_SIZE != 0);
                        sectors = sectors > UINT64_MAX - n ? UINT64_MAX : sectors + n;
                        first = MIN(first, lo);
                }
        }
        *ret_sectors = sectors;
        *ret_first = first;
        return 0;
}

int pmem_badblocks_read(const char *sysfs_root, const char *rel_region, struct pmem_device *dev) {
        _cleanup_(pmem_badblocks_clearp) struct pmem_badblocks bb = {};
        _cleanup_free_ char *rel = NULL, *text = NULL;
        uint64_t region_start = 0, sectors = 0, first = UINT64_MAX;
        long page_size = sysconf(_SC_PAGESIZE);
        size_t len = 0;
        int r;

        if (asprintf(&rel, "%s/badblocks", rel_region) < 0) {
                rel = NULL;
                return -ENOMEM;
        }
        r = sysfs_read_raw(sysfs_root, rel, &text, &len);
        if (r >= 0)
                r = pmem_badblocks_parse(text, len, page_size > 0 ? (size_t) page_size : 4096, &bb);
        /* The region's start (root-only) matters only when there is something to place. */
        if (r >= 0 && bb.n > 0) {
                r = pmem_read_attr_u64(sysfs_root, rel_region, "resource", 16, &region_start);
                if (r >= 0 && dev->n_ranges == 0)
                        r = -ENODATA;
                if (r >= 0)
                        r = pmem_badblocks_in_ranges(&bb, region_start, dev->ranges, dev->n_ranges, &sectors, &first);
        }
        if (r == -ENOMEM)
                return r;
        dev->bad_sectors = r >= 0 ? sectors : 0;
        dev->first_bad = r >= 0 && sectors > 0 ? first : 0;
        dev->badblocks_error = r < 0 ? r : bb.incomplete ? -E2BIG : 0;
        return 0;
}

const char *pmem_badblocks_describe(int error) {
        switch (error) {
        case 0:
                return "known";
        case -ENOENT:
                return "the region has no badblocks file";
        case -ENXIO:
                return "the region is disabled (no driver)";
        case -EBADMSG:
                return "the region's badblocks list is not as the kernel writes it";
        case -ERANGE:
                return "a bad block of the region's list lies past the end of the address space";
        case -E2BIG:
                return "the region's badblocks list is incomplete (cut at a page, or the kernel's table is full)";
        case -ENODATA:
                return "the region's start or the device's ranges are not known";
        default:
                return strerror(error < 0 ? -error : error);
        }
}
