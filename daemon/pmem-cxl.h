/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "pmem.h"

/*
 * Which CXL region a dax device belongs to, the region's root decoder and
 * the memdev behind each of its interleave positions. rel_dev is the
 * device's canonical directory relative to the root. A device that is not
 * under a CXL region is left alone. Sets cxl_region, cxl_decoder,
 * cxl_memdevs and cxl_memdevs_unknown; only -ENOMEM fails: a missing or
 * hostile link only makes the memdevs unknown.
 */
int pmem_read_cxl_attribution(const char *sysfs_root, const char *rel_dev, struct pmem_device *dev);

/* A CXL region, whether or not a dax device is on it yet. */
struct cxl_region {
        char *name;                     /* "region0" */
        char *decoder;                  /* its root decoder, "decoder0.0" */
        char *mode;                     /* "ram" or "pmem"; NULL when absent (before 6.3 pmem only) or odd */
        uint64_t size;
        uint64_t resource;              /* start address; UINT64_MAX when not known */
        int committed;                  /* its commit attribute: 1, 0, -1 unknown */
        char *memdevs;                  /* as pmem_device.cxl_memdevs */
        bool memdevs_unknown;
};

struct cxl_regions {
        struct cxl_region *regions;     /* by region number */
        size_t n;
        size_t n_unreadable;            /* left out: a hostile or half-gone region */
        int unreadable_error;           /* the first one's -errno */
};

void cxl_regions_clear(struct cxl_regions *set);

/*
 * Every region under bus/cxl/devices. A region whose directory leaves the
 * root or the kernel's layout, or whose size cannot be read, is counted in
 * n_unreadable, not listed. No CXL bus: an empty set. -ENOMEM, or -errno
 * when the bus directory cannot be listed.
 */
int cxl_regions_scan(const char *sysfs_root, struct cxl_regions *ret);

/* A CXL memory device (an expander), as `cxl list -M` shows it. */
struct cxl_memdev {
        char *name;                     /* "mem0" */
        uint64_t ram_size, pmem_size;   /* its partitions; 0 when it has none */
        int numa_node;                  /* the device's own node (its PCI function's), not where its memory
                                           goes (that is its region's dax device's target_node); NODE_NONE if none */
        uint64_t serial;                /* UINT64_MAX when unknown */
        char *host;                     /* the device it sits on, "0000:0d:00.0" */
        bool enabled;                   /* bound to its driver (cxl_mem) */
};

struct cxl_memdevs {
        struct cxl_memdev *memdevs;     /* by memdev number */
        size_t n;
        size_t n_unreadable;            /* left out: a hostile or half-gone memdev */
        int unreadable_error;           /* the first one's -errno */
};

void cxl_memdevs_clear(struct cxl_memdevs *set);

/*
 * Every memdev under bus/cxl/devices (memN). One whose link leaves the
 * root or does not end in its own name is counted in n_unreadable, not
 * listed. No CXL bus: an empty set. -ENOMEM, or -errno when the bus
 * directory cannot be listed.
 */
int cxl_memdevs_scan(const char *sysfs_root, struct cxl_memdevs *ret);
