/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The nvdimm (nd bus) regions and namespaces, read from
 * <root>/bus/nd/devices as `ndctl list -R -N -c` lists them, for
 * `memonlined status`. The daemon itself reaches a namespace only from
 * its dax device (pmem-scan.c); this is the view from the other side.
 */

/* A namespace's personality, named as ndctl names it. */
enum nd_mode {
        ND_MODE_UNKNOWN = 0,
        ND_MODE_RAW,                    /* the kernel's "raw" */
        ND_MODE_FSDAX,                  /* "memory": a pfn device (or none, label-less) */
        ND_MODE_DEVDAX,                 /* "dax": claimed by an nd_dax, a dax device on the dax bus */
        ND_MODE_SECTOR,                 /* "safe": claimed by a btt */
};

const char *nd_mode_to_string(enum nd_mode m);  /* "unknown", "raw", "fsdax", "devdax", "sector" */
/* A namespace's mode attribute as the kernel spells it; ND_MODE_UNKNOWN for anything else. */
enum nd_mode nd_mode_from_kernel(const char *v);

struct nd_namespace {
        char *name;                     /* "namespace0.0" */
        enum nd_mode mode;
        bool enabled;                   /* its claim (pfn, dax, btt) bound to a driver, or, unclaimed, itself */
        uint64_t size;                  /* usable bytes, the claim's (after its info block); UINT64_MAX unknown */
        int target_node;                /* NODE_NONE if absent */
        char *uuid;                     /* the claim's uuid, else its own; NULL when it has none (label-less) */
        char *dax;                      /* devdax: the dax device on the dax bus, "dax0.0"; else NULL */
};

struct nd_region {
        char *name;                     /* "region0" */
        bool volatile_region;           /* DEVTYPE=nd_volatile (ndctl's type is "pmem" for both) */
        bool enabled;                   /* bound to its driver */
        uint64_t size;
        int target_node;                /* the node its memory would go to; NODE_NONE if absent */
        struct nd_namespace *namespaces;        /* those with a size or enabled, by name */
        size_t n_namespaces;
};

struct nd_regions {
        struct nd_region *regions;      /* by region number */
        size_t n;
        size_t n_unreadable;            /* left out: hostile or half-gone regions and namespaces */
        int unreadable_error;           /* the first one's -errno */
};

void nd_regions_clear(struct nd_regions *set);

/*
 * Every region under bus/nd/devices, with its namespaces that have a size
 * or are enabled (ndctl's seed namespaces, size 0 and idle, are left
 * out, as `ndctl list -c` leaves them). A region whose directory leaves
 * the root or the kernel's layout (.../ndbusB/regionN), or whose size
 * cannot be read, and a namespace that cannot be read (a hostile claim,
 * say) are counted in n_unreadable, not listed. No nd bus: an empty set.
 * -ENOMEM, or -errno when the bus directory cannot be listed.
 */
int nd_regions_scan(const char *sysfs_root, struct nd_regions *ret);
