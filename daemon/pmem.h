/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * dax devices as memonlined knows them: one record per device, with the
 * names, ranges, node and libnvdimm attribution read from sysfs. The jobs
 * around it live in their own files:
 *
 *   pmem-scan.c          reading bus/dax/devices; blocks to devices
 *   pmem-cxl.c           which CXL region, root decoder and memdevs a device is on; every region, memdev
 *   pmem-nd.c            every nvdimm region and namespace, from the region down (status)
 *   pmem-daxctl-conf.c   daxctl's own configuration (daxctl.conf.d)
 *   pmem-decide.c        whether memonlined converts a device, and --dry-run
 *   pmem-memmap.c        memmap_on_memory: where the kmem bind puts the memmap
 *   pmem-badblocks.c     the known bad media of a device's memory (its region's badblocks)
 *   pmem-convert.c       devdax -> system-ram through libdaxctl
 *   pmem-record.c        the journal record of a handled device
 */

/* Where daxctl looks for its own reconfigure-device entries by default. */
#define PMEM_DAXCTL_CONFDIR "/etc/daxctl.conf.d"

enum pmem_mode {
        PMEM_MODE_UNKNOWN = 0,          /* no driver bound, or a driver we do not know */
        PMEM_MODE_DEVDAX,               /* bound to device_dax */
        PMEM_MODE_SYSTEM_RAM,           /* bound to kmem */
};

const char *pmem_mode_to_string(enum pmem_mode m);     /* "unknown", "devdax", "system-ram" */

/* The kernel's memory_hotplug.memmap_on_memory (pmem-memmap.h). */
enum pmem_memmap_global {
        PMEM_MEMMAP_GLOBAL_UNKNOWN = 0, /* could not be read */
        PMEM_MEMMAP_GLOBAL_ABSENT,      /* no such parameter: no CONFIG_MHP_MEMMAP_ON_MEMORY */
        PMEM_MEMMAP_GLOBAL_OFF,         /* "N", the default */
        PMEM_MEMMAP_GLOBAL_ON,          /* "Y" or "force" */
};

struct pmem_range {
        uint64_t start, end;            /* physical, end exclusive */
};

struct pmem_device {
        char *name;                     /* "dax0.0" */
        enum pmem_mode mode;
        char *driver;                   /* driver link basename, NULL if unbound */
        uint64_t resource;              /* start of the first range (0 if unreadable) */
        uint64_t size;                  /* bytes */
        int target_node;                /* node kmem adds the memory to; NODE_NONE if absent */
        int numa_node;                  /* node of the device itself; NODE_NONE if absent */
        int memmap_on_memory;           /* its attribute: 0, 1; -1 if absent (before 6.8) or unreadable */
        struct pmem_range *ranges;      /* ascending, from mappingN or resource+size */
        size_t n_ranges;
        /* libnvdimm attribution, NULL / -1 when the device is not on an nd bus */
        char *namespace_name;           /* "namespace0.0" */
        char *namespace_uuid;           /* what `ndctl list` shows as "uuid" and daxctl.conf
                                           matches as nvdimm.uuid: the nd_dax info-block uuid */
        char *namespace_raw_uuid;       /* the namespace's own uuid (`ndctl list` "raw_uuid") */
        int region;                     /* nd region id */
        char *region_rel;               /* its directory, relative to the sysfs root: badblocks read again */
        bool on_pmem_region;            /* the region is an nd_pmem region */
        /*
         * Known bad media in its ranges, from the nd region's badblocks
         * (pmem-badblocks.c); only a device on an nd region (region >= 0)
         * has such a list. bad_sectors is a lower bound when the list is
         * incomplete (badblocks_error -E2BIG).
         */
        uint64_t bad_sectors;           /* 512-byte sectors */
        uint64_t first_bad;             /* physical address of the first, when bad_sectors > 0 */
        int badblocks_error;            /* 0 known; -errno: the list could not be read, is malformed or incomplete */
        /* CXL attribution, NULL when the device is not under a CXL region */
        char *cxl_region;               /* "region0" */
        char *cxl_decoder;              /* its root decoder (the CFMWS window), "decoder0.0" */
        char *cxl_memdevs;              /* "mem0,mem1": the memdev of each interleave position, unique */
        bool cxl_memdevs_unknown;       /* some position's memdev could not be read */
        uint64_t ino;                   /* its directory's inode when read: a device made again has another */
};

struct pmem_devices {
        struct pmem_device *devices;    /* ascending by (region, id) of the daxR.N name */
        size_t n, allocated;
        /* Devices that exist but could not be read: which blocks are theirs is unknown. */
        size_t n_unreadable;
        char unreadable_name[32];       /* the first of them, and why */
        int unreadable_error;
        enum pmem_memmap_global memmap_global;  /* read with the devices */
        bool scanned;                   /* filled by pmem_scan() (or kept current by pmem_scan_update()) */
};

void pmem_device_done(struct pmem_device *dev);         /* frees contents */
void pmem_devices_clear(struct pmem_devices *d);        /* frees contents, keeps struct */
const struct pmem_device *pmem_devices_find(const struct pmem_devices *d, const char *name);

static inline void pmem_device_donep(struct pmem_device *d) {
        pmem_device_done(d);
}

static inline void pmem_devices_clearp(struct pmem_devices *d) {
        pmem_devices_clear(d);
}

/*
 * Kernel device names, strict: decimal digits only (no sign, no trailing
 * junk), each number at most INT_MAX; -EINVAL otherwise. Outputs may be NULL.
 * "region12" with prefix "region" -> 12; "decoder2.0" with "decoder" -> 2, 0.
 */
int pmem_name_index(const char *name, const char *prefix, unsigned *ret);
int pmem_name_pair(const char *name, const char *prefix, unsigned *ret_a, unsigned *ret_b);
/* "dax3.12" -> 3, 12. */
int pmem_dax_name_parse(const char *name, unsigned *ret_region, unsigned *ret_id);

/* kmem -> system-ram, device_dax -> devdax, anything else (or NULL) -> unknown. */
enum pmem_mode pmem_mode_from_driver(const char *driver);

/* Basename of the driver link under an absolute device path; *ret = NULL if unbound. */
int pmem_read_driver(const char *abs_dev, char **ret);

/* An attribute under a directory relative to the root; empty values count as absent (-ENODATA). */
int pmem_read_attr(const char *root, const char *dir, const char *attr, char **ret);
int pmem_read_attr_u64(const char *root, const char *dir, const char *attr, int base, uint64_t *ret);
/* A node attribute (target_node, numa_node): "-1", a missing file or anything past NODE_ID_MAX is NODE_NONE. */
int pmem_read_attr_node(const char *root, const char *dir, const char *attr);

/*
 * Every entry <prefix>N (N decimal) of the bus directory dir under the
 * root ("bus/cxl/devices", "region"), read by read() into an item of
 * item_size bytes, in the order of N. An entry read() says is gone
 * (-ENOENT) is skipped; one it cannot read is left out and counted in
 * *n_unreadable (the first error in *unreadable_error). No such
 * directory: no items. Returns 0 with *ret_items (the caller frees each
 * item's contents and the array) and *ret_n; -ENOMEM, or -errno when the
 * directory cannot be listed.
 */
struct pmem_bus_scan {
        const char *dir, *prefix;
        size_t item_size;
        int (*read)(const char *root, const char *name, void *ret_item, void *userdata);
        void (*done)(void *item);       /* frees an item's contents */
        void *userdata;
};
int pmem_scan_bus(const char *sysfs_root, const struct pmem_bus_scan *scan, void **ret_items, size_t *ret_n,
                  size_t *n_unreadable, int *unreadable_error);

/*
 * Where rel (a link, or a path through links) really leads, relative to the
 * root: -EXDEV when it leaves the root; -ENOENT, -ELOOP, ... as realpath.
 */
int pmem_resolve_in_root(const char *sysfs_root, const char *rel, char **ret_rel);
