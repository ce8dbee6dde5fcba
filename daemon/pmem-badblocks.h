/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmem.h"

/*
 * The known bad media ("poison") of a dax device's memory. libnvdimm keeps
 * one list per nd region, in regionR/badblocks: "SECTOR COUNT" lines in
 * 512-byte sectors from the region's start (regionR/resource), as
 * badblocks_show() writes them (drivers/nvdimm/region_devs.c,
 * block/badblocks.c). A devdax namespace has no list of its own (libndctl's
 * ndctl_namespace_get_first_badblock() gives none for device-dax; `ndctl
 * list --media-errors` intersects the region's list with the nd_dax
 * resource, which is where the dev_dax's range starts), so the region's
 * list is intersected with the device's own ranges here: exactly the
 * memory kmem would add, without the namespace's info block and reserve.
 * CXL and soft-reserved (hmem) memory keep no such list in sysfs.
 */

#define PMEM_SECTOR_SIZE 512U

struct pmem_bad_extent {
        uint64_t sector, count;         /* 512-byte sectors from the region's start; count >= 1 */
};

struct pmem_badblocks {
        struct pmem_bad_extent *extents; /* ascending, not overlapping, as the kernel keeps them */
        size_t n, allocated;
        /*
         * More bad blocks may exist than the list shows: sysfs cut it at a
         * page (page_size - 1 bytes), or it holds page_size / 8 extents, a
         * full kernel table (MAX_BADBLOCKS), which records no more.
         */
        bool incomplete;
};

void pmem_badblocks_clear(struct pmem_badblocks *bb);

static inline void pmem_badblocks_clearp(struct pmem_badblocks *bb) {
        pmem_badblocks_clear(bb);
}

/*
 * Parse len bytes of a badblocks file, page_size being the kernel's page
 * size. A last line without its newline is dropped if the text was cut at
 * the page, and is an error otherwise. -EBADMSG for anything the kernel
 * does not write: a line that is not two decimal numbers with one blank
 * between, a count of 0 or above UINT32_MAX, an extent ending past 2^64
 * bytes, extents out of order or overlapping, a text of page_size bytes or
 * more, a NUL byte. -EINVAL for a page_size below 64. -ENOMEM. *ret is
 * replaced on success only.
 */
int pmem_badblocks_parse(const char *text, size_t len, size_t page_size, struct pmem_badblocks *ret);

/*
 * The bad 512-byte sectors that lie in ranges (sorted or not, physical, end
 * exclusive), for a list whose region starts at region_start, and the
 * physical address of the first (UINT64_MAX when none). -ERANGE when an
 * extent ends past 2^64 counted from region_start.
 */
int pmem_badblocks_in_ranges(const struct pmem_badblocks *bb, uint64_t region_start, const struct pmem_range *ranges,
                             size_t n_ranges, uint64_t *ret_sectors, uint64_t *ret_first);

/*
 * Read the badblocks of the nd region at rel_region (relative to the root)
 * and, if it lists any, its resource; set dev's bad_sectors, first_bad and
 * badblocks_error from them and dev's ranges. What cannot be read or
 * trusted goes into badblocks_error (as in pmem_badblocks_describe()); only
 * -ENOMEM is returned.
 */
int pmem_badblocks_read(const char *sysfs_root, const char *rel_region, struct pmem_device *dev);

/* Why a device's bad blocks are unknown, from its badblocks_error: static text, or strerror()'s. */
const char *pmem_badblocks_describe(int error);
