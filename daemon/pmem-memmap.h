/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include "pmem.h"
#include "policy.h"

/*
 * Where the kmem bind puts the memory map of a dax device's blocks: on
 * ordinary memory (for a memoryless pmem node, the nearest node with
 * memory: usually the boot node), or on the added memory itself.
 *
 * Kernel facts (drivers/dax/bus.c, drivers/dax/kmem.c, mm/memory_hotplug.c,
 * 6.8 to 6.12):
 * - daxX.Y/memmap_on_memory (since 6.8) reads 0 or 1: 0 by default for pmem
 *   and hmem devices, 1 for CXL. kmem passes MHP_MEMMAP_ON_MEMORY at probe
 *   when it is 1; it is read only then, so it must be written before the
 *   bind. A write that changes it while kmem is bound fails with EBUSY.
 * - Writing 1 fails with EOPNOTSUPP unless mhp_supports_memmap_on_memory():
 *   the boot parameter memory_hotplug.memmap_on_memory is on ("Y" or
 *   "force"; the parameter is read-only at run time, and absent without
 *   CONFIG_MHP_MEMMAP_ON_MEMORY) and a block's memmap fills whole
 *   pageblocks and, on x86, whole 2 MiB pages (true for every x86 block
 *   size: 128 MiB of memory has 2 MiB of memmap).
 * - A device that reads 1 while the parameter is off gets no memmap on
 *   memory: add_memory_resource() falls back silently.
 */

/* memory_hotplug.memmap_on_memory, from <root>/module/memory_hotplug/parameters. */
enum pmem_memmap_global pmem_memmap_read_global(const char *sysfs_root);
/* Its value as read (newline stripped): on, off, or unknown for anything else. */
enum pmem_memmap_global pmem_memmap_parse_global(const char *v);

/* What a kmem bind of the device does with the memmap. */
enum pmem_memmap {
        PMEM_MEMMAP_UNSUPPORTED = 0,    /* the kernel has no per-device attribute (before 6.8) */
        PMEM_MEMMAP_NO,
        PMEM_MEMMAP_YES,
};

const char *pmem_memmap_to_string(enum pmem_memmap m);  /* "unsupported", "no", "yes" */

struct pmem_memmap_outcome {
        enum pmem_memmap effective;     /* what the bind gives */
        bool unmet;                     /* the policy asked for yes or no, and the device gets otherwise */
        int error;                      /* the attribute write's -errno, or 0 */
        char reason[256];               /* why, when the device gets other than the policy says; else "" */
};

/*
 * The plan, without writing: setting from the policy (KEEP, OFF, ON; UNSET
 * counts as KEEP), attr the device's attribute (0, 1, or < 0 when it has
 * none). *ret_write is the value to write (0 or 1), or -1 for none; the
 * outcome is what the bind gives if that write succeeds.
 */
void pmem_memmap_plan(enum memmap_setting setting, int attr, enum pmem_memmap_global global,
                      int *ret_write, struct pmem_memmap_outcome *ret);

/*
 * The outcome after writing write (0 or 1), whose result was error (0 or
 * -errno), with the attribute reading attr afterwards (-1: unreadable).
 * A write that succeeded but does not read back counts as -EIO.
 */
void pmem_memmap_settle(enum memmap_setting setting, enum pmem_memmap_global global, int write, int error,
                        int attr, struct pmem_memmap_outcome *ret);

/*
 * The attribute of the dax device in directory rel_dev (relative to the
 * root; bus/dax/devices/daxX.Y too): 0 or 1; -ENOENT when the kernel has
 * none, -EINVAL for a value that is neither.
 */
int pmem_memmap_read_attr(const char *sysfs_root, const char *rel_dev, int *ret);
/* The attribute's value as read: "0" or "1", else -EINVAL and *ret untouched. */
int pmem_memmap_parse_attr(const char *v, int *ret);

/*
 * Before the kmem bind: plan as above and write the attribute. Fails
 * safe: a write the kernel refuses leaves the device as it was, and the
 * outcome (always filled, unlike the usual rule) says what it gets and why.
 * Returns 0, or the write's -errno (the conversion goes on either way).
 */
int pmem_memmap_apply(const char *sysfs_root, const char *device, enum memmap_setting setting,
                      struct pmem_memmap_outcome *ret);
