/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include "blocks-scan.h"
#include "sysfs.h"
#include "util.h"

int blocks_scan(const char *sysfs_root, uint64_t block_size, enum block_state want, struct block_set *set) {
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n_ids, n_before = set->n;
        int r, skipped = 0;

        /* Sorted by number: memory10 must come after memory9. */
        r = sysfs_list_ids(sysfs_root, "devices/system/memory", "memory", &ids, &n_ids);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_ids; i++) {
                struct mem_block b;

                r = block_read(sysfs_root, block_size, ids[i], &b);
                if (r == -ENOENT)
                        continue;       /* removed since readdir */
                if (r == -ENOMEM)
                        goto fail;
                if (r < 0) {
                        if (skipped < INT_MAX)
                                skipped++;
                        continue;
                }
                if (want != BLOCK_STATE_UNKNOWN && b.state != want) {
                        mem_block_done(&b);
                        continue;
                }
                if (GROW(set->blocks, set->allocated, set->n + 1) < 0) {
                        mem_block_done(&b);
                        r = -ENOMEM;
                        goto fail;
                }
                set->blocks[set->n++] = b;
        }
        return skipped;

fail:
        set->n = n_before;
        return r;
}
