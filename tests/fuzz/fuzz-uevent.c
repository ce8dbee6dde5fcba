/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * uevent classification: the input is ACTION, SUBSYSTEM, SYSNAME and
 * SEQNUM separated by NULs, as libudev hands them over. A memory event
 * must name exactly the block its sysname does, a dax event exactly its
 * device, a machine or device event come from a node, CPU, CXL region or
 * ACPI memory device, and anything else must be ignored.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "monitor.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size);
        const char *field[4] = { "", "", "", "" };
        struct monitor_event ev;
        uint64_t seqnum = 0;
        size_t k = 0;
        int r;

        if (!text)
                return 0;
        /* Fields at the NULs; the copy's own terminator ends the last one. */
        for (size_t i = 0; k < 4; i++) {
                if (i == 0 || text[i - 1] == '\0')
                        field[k++] = text + i;
                if (i >= size)
                        break;
        }
        (void) parse_u64(field[3], 10, &seqnum);

        memset(&ev, 0x5a, sizeof(ev));
        r = monitor_classify(field[0], field[1], field[2], seqnum, &ev);
        if (r < 0) {
                FUZZ_ASSERT(r == -ENAMETOOLONG && streq(field[1], "dax"));
                free(text);
                return 0;
        }
        FUZZ_ASSERT(ev.seqnum == seqnum);
        switch (ev.kind) {
        case MONITOR_MEMORY_ADD:
        case MONITOR_MEMORY_ONLINE:
        case MONITOR_MEMORY_OFFLINE:
        case MONITOR_MEMORY_REMOVE: {
                char name[32];

                FUZZ_ASSERT(streq(field[1], "memory"));
                snprintf(name, sizeof(name), "memory%" PRIu64, ev.block_id);
                FUZZ_ASSERT(streq(name, field[2]));
                break;
        }
        case MONITOR_DAX_ADD:
        case MONITOR_DAX_REMOVE:
                FUZZ_ASSERT(streq(field[1], "dax"));
                FUZZ_ASSERT(streq(ev.devname, field[2]));
                break;
        case MONITOR_MACHINE:
                FUZZ_ASSERT((streq(field[1], "node") && startswith(field[2], "node")) ||
                            (streq(field[1], "cpu") && startswith(field[2], "cpu")));
                break;
        case MONITOR_DEVICE:
                FUZZ_ASSERT((streq(field[1], "cxl") && startswith(field[2], "region")) ||
                            (streq(field[1], "acpi") && startswith(field[2], "PNP0C80:")));
                FUZZ_ASSERT(ev.acpi_memory == streq(field[1], "acpi"));
                break;
        case MONITOR_IGNORE:
                break;
        default:
                FUZZ_ASSERT(!"unknown event kind");
        }
        free(text);
        return 0;
}
