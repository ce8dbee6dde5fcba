/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "blocks.h"
#include "policy.h"
#include "topology.h"

/*
 * The planner: a pure function of (blocks, topology, policy). It decides
 * per block the zone to write and the CPU that writes it, and groups the
 * blocks into per-node work lists for the workers.
 */

struct plan_item {
        struct mem_block *block;        /* borrowed from the block_set */
        enum zone zone;                 /* never ZONE_UNSET */
        const char *reason;             /* why this zone: static, or owned by the plan */
        int worker;                     /* index into plan_group.cpus */
        bool by_rule;                   /* an admin's rule chose the zone: never changed quietly */
        bool ratio_guarded;             /* the ratio guard turned a movable default into kernel */
        /*
         * ...as the verdict on its whole device (an ACPI DIMM, a dax device),
         * which reason words with the numbers: one text per device.
         */
        bool guarded_by_device;
        /*
         * Skipped because a rule could not be checked (the block's node or
         * dax device is not known): left offline, reported, tried again.
         */
        bool undecided;
        /* Skipped for its dax device's bad media: known and not allowed, or unknown (then undecided too). */
        bool bad_media;
};

struct plan_group {
        int node;                       /* the memory's node (NODE_NONE if unknown) */
        int writer_node;                /* node whose CPUs write it */
        int *cpus;                      /* worker CPUs, n_cpus >= 1; -1 = unpinned */
        size_t n_cpus;
        struct plan_item *items;        /* ascending block id */
        size_t n_items;
};

struct plan {
        struct plan_group *groups;      /* ascending node id */
        size_t n_groups;
        struct plan_item *skipped;      /* zone == ZONE_SKIP, not in any group */
        size_t n_skipped;
        size_t n_undecided;             /* of the skipped, those undecided */
        size_t n_ratio_guarded;
        size_t n_fell_back;             /* default zone not valid: the kernel's choice instead */
        size_t n_items;                 /* blocks to write */
        char **reasons;                 /* formatted reasons the items point to */
        size_t n_reasons, reasons_allocated;
};

/*
 * The CPUs that write node's memory, n_blocks of it: of the writer node
 * (topology_writer_node()), policy workers' worth of its usable cores,
 * one per physical core, never more than n_blocks or max. Returns how
 * many were written to ret_cpus (0: write unpinned) and the writer node.
 */
int plan_writer_cpus(const struct topology *t, const struct policy *p, int node, size_t n_blocks, unsigned max,
                     int *ret_cpus, int *ret_writer);

/* -ERANGE if an offline block's node is beyond NODE_ID_MAX. */
int plan_build(const struct block_set *blocks, const struct topology *t, const struct policy *p,
               struct plan **ret);
void plan_free(struct plan *plan);
void plan_freep(struct plan **plan);
#define _cleanup_plan_ __attribute__((cleanup(plan_freep)))

/*
 * "block=memoryN node=N zone=Z cpu=N reason=\"...\"" lines, ascending block
 * id, followed by writer_node=N for blocks to write and device=NAME when the
 * block is dax kmem memory. Returns 0 or -errno from the stream.
 */
int plan_print(const struct plan *plan, FILE *out);
