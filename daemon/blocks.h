/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/*
 * Memory blocks as the planner sees them. Filled from
 * <root>/devices/system/memory/memoryN and, for dax kmem memory, the
 * pmem attribution (device, namespace, region, CXL region and memdevs).
 */

enum block_state {
        BLOCK_STATE_UNKNOWN = 0,
        BLOCK_STATE_OFFLINE,
        BLOCK_STATE_ONLINE,
        BLOCK_STATE_GOING_OFFLINE,
};

/* Zones a plain online may choose, from valid_zones of an offline block. */
enum {
        VALID_NORMAL  = 1 << 0,         /* "Normal" or DMA/DMA32 */
        VALID_MOVABLE = 1 << 1,
};

struct memdev;

struct mem_block {
        uint64_t id;                    /* memoryN */
        uint64_t phys_start;            /* id * block_size */
        enum block_state state;
        int node;                       /* NODE_NONE if unresolved */
        bool node_guessed;              /* node from the span fallback, not a link */
        unsigned valid_zones;           /* VALID_* bits; 0 = unknown */
        /* pmem attribution (owned strings, NULL if none) */
        char *device;                   /* "dax0.0" */
        char *namespace_name;           /* "namespace0.0" */
        char *namespace_uuid;
        int region;                     /* -1 if none */
        char *cxl_region;               /* "region0" when the dax device is on a CXL region */
        char *cxl_memdevs;              /* "mem0,mem1" */
        bool cxl_memdevs_unknown;       /* the region's memdevs could not all be read */
        bool attribution_unknown;       /* the dax devices could not all be read: device unknown */
        uint64_t bad_sectors;           /* known bad media of its dax device, in 512-byte sectors */
        bool badblocks_unknown;         /* its dax device's bad media could not be known */
        const struct memdev *memdev;    /* its hotplug device, borrowed from the topology; NULL: boot, unknown */
        uint64_t event_usec;            /* when its add event arrived, 0 = coldplug */
};

struct block_set {
        struct mem_block *blocks;
        size_t n, allocated;
};

void block_set_clear(struct block_set *s);   /* frees contents, keeps struct */
void mem_block_done(struct mem_block *b);    /* frees one block's owned strings */

enum block_state block_state_from_string(const char *s);
const char *block_state_to_string(enum block_state s);

/* VALID_* bits of a valid_zones string ("Normal Movable", "DMA32", "none", ...). */
unsigned block_valid_zones_parse(const char *s);

/*
 * Where block id starts: id * block_size. -ERANGE when the block would end
 * past 2^64 (a wrapped start could match a range rule), -EINVAL for a
 * block_size of 0.
 */
int block_phys_start(uint64_t id, uint64_t block_size, uint64_t *ret);

/* "memory123" -> 123. -EINVAL otherwise. */
int block_id_from_name(const char *name, uint64_t *ret);

/*
 * Read one block: state, valid_zones, node link. Missing node link leaves
 * node = NODE_NONE. -ENOENT if the block directory is gone, -ERANGE as
 * block_phys_start().
 */
int block_read(const char *sysfs_root, uint64_t block_size, uint64_t id, struct mem_block *ret);

/*
 * 1 if memoryN has its node link, 0 if not yet, -errno. The kernel links a
 * range to its node at the end of its add, so a linked block's add is over.
 */
int block_linked(const char *sysfs_root, uint64_t id);

/*
 * 1 if the add that made memoryN is over, 0 if it may still run, -errno.
 * The kernel creates all of an add's blocks first, then links them to the
 * node in ascending order: a linked block says only that the linking got
 * that far. Over when memoryN is linked and so is the last block of the
 * run of blocks that begins at it (all of its device's, and of any device
 * added right after it).
 */
int block_add_over(const char *sysfs_root, uint64_t id);

/*
 * 1 if the add that made memoryN still runs, as far as block_add_over()
 * can tell; 0 if it is over, memoryN is gone, or nothing can tell (a
 * kernel without NUMA links no block to a node); -errno.
 */
int block_add_running(const char *sysfs_root, uint64_t id);

/* The same for a block whose state and node link the caller has read already (topology_load()). */
int block_read_known(const char *sysfs_root, uint64_t block_size, uint64_t id, enum block_state state, int node,
                     struct mem_block *ret);

