/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "pmem.h"
#include "pmem-memmap.h"
#include "policy.h"

/*
 * devdax -> system-ram through libdaxctl (kmem, without onlining: the
 * daemon's workers online the blocks the kernel then adds). libdaxctl has
 * /sys built in, so this only works on the real /sys.
 */

struct pmem_convert_result {
        int error;                      /* 0 or -errno, as returned */
        bool already;                   /* was system-ram already: nothing done */
        bool rolled_back;               /* kmem bind failed and the device went back to devdax */
        enum pmem_mode mode_before, mode_after;
        uint64_t disable_usec;          /* unbinding device_dax */
        uint64_t bind_usec;             /* binding kmem: the kernel adds the memory blocks */
        int target_node;
        uint64_t size;
        struct pmem_memmap_outcome memmap;      /* where the bind put the memmap, and why not as asked */
        char reason[512];               /* what happened, or why it failed */
};

/*
 * Convert devdax device to system-ram like `daxctl reconfigure-device
 * --mode=system-ram --no-online`: refuse when auto_online_blocks is not
 * "offline", set its memmap_on_memory as memmap says (pmem-memmap.h: a
 * refusal there does not stop the conversion, ret->memmap says it),
 * unbind device_dax, bind kmem, verify system-ram. Unlike the
 * usual rule, *ret is filled on failure too: it is the failure report.
 * libdaxctl only acts on the real /sys, so a sysfs_root that is not /sys
 * (a test tree) is refused with -EXDEV before libdaxctl runs.
 * Returns 0, or -ENOENT (no such device), -EBUSY (kernel auto-online is
 * on, or the device/range is busy), -EINVAL (not convertible: wrong mode,
 * size 0), -EOPNOTSUPP (old dax class model), -EXDEV, or another -errno.
 */
int pmem_convert(const char *sysfs_root, const char *device, enum memmap_setting memmap,
                 struct pmem_convert_result *ret);
