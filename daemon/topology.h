/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <numa.h>
#include "blocks.h"
#include "memdev.h"
#include "zone.h"

/*
 * The machine as sysfs describes it: nodes, CPUs, physical cores,
 * distances, HMAT initiators (machine.c), and the memory blocks with
 * what each node already has online per zone, for the MOVABLE:KERNEL
 * ratio guard (block-cache.c, which also loads, syncs and frees). There
 * is no topology.c: this is the header of both.
 */

struct topo_node {
        int id;
        struct bitmask *cpus;           /* online CPUs of the node (may be empty: CPU-less) */
        struct bitmask *initiators;     /* HMAT access1/initiators node set, or NULL */
        unsigned *distance;             /* indexed by node id, 0..max_node; 0 = unknown */
        uint64_t kernel_bytes;          /* online memory in non-movable zones */
        uint64_t movable_bytes;         /* online memory in ZONE_MOVABLE */
        /*
         * Online kernel-zone memory of no hotplug device: how sysfs shows the
         * kernel's KERNEL_EARLY (boot memory), the base of the ratio guard.
         * Set by topology_set_devices(); before, kernel_bytes stands in.
         */
        uint64_t kernel_early_bytes;
        uint64_t first_block, last_block;  /* span of block ids linked to the node */
        bool has_blocks;
};

/* Which zone counter an online block is in. */
enum topo_zone {
        TOPO_ZONE_UNKNOWN = 0,          /* not online, or onlined with plain "online" and not read yet */
        TOPO_ZONE_KERNEL,
        TOPO_ZONE_MOVABLE,
};

/* One memoryN as last read (or as we last set it). */
struct topo_block {
        uint64_t id;
        int node;                       /* from the node link; NODE_NONE if none (yet) */
        enum block_state state;         /* BLOCK_STATE_UNKNOWN when error != 0 */
        enum topo_zone zone;
        int error;                      /* -errno: its state could not be read; the caller reports it */
};

struct topo_cpu {
        bool present;                   /* cpuN exists */
        bool online;
        int node;                       /* NODE_NONE if unknown */
        int core;                       /* lowest CPU id among its thread siblings */
};

struct topology {
        char *sysfs_root;
        uint64_t block_size;            /* bytes, from memory/block_size_bytes (hex) */
        struct topo_node *nodes;        /* sorted by id */
        size_t n_nodes;
        int max_node;
        struct topo_cpu *cpus;          /* indexed by CPU id, 0..n_cpus-1 */
        unsigned n_cpus;
        struct bitmask *isolated;       /* isolcpus + nohz_full, never used for writes */
        struct topo_block *blocks;      /* every readable memoryN, ascending by id */
        size_t n_blocks;
        char *signature;                /* node/online + cpu/online when loaded */
        bool stale;                     /* a CPU-less node got memory: read the nodes again */
        /*
         * What loading the machine left out, and why ("devices/system/node/
         * node1/distance: ...: distances from node 1 unknown"), for a debug
         * log. At most TOPO_NOTES_MAX; n_notes_dropped counts the rest.
         */
        char **notes;
        size_t n_notes, n_notes_dropped;
        /* The hotplug devices, once topology_set_devices() gave them. */
        struct memdev_set devices;
        bool devices_known;
};

#define TOPO_NOTES_MAX 32

/* Why topology_load_full() failed, in words naming the sysfs file; "" if the errno says it all. */
struct topology_error {
        char reason[256];
};

enum {
        /* A tree without memory hotplug (no devices/system/memory/block_size_bytes) is -ENODEV. */
        TOPO_LOAD_NEED_MEMORY = 1 << 0,
};

/*
 * Load from <root>/devices/system/{node,cpu,memory}. A bad attribute of a
 * node or CPU (a node id past NODE_ID_MAX, an odd distance line or cpulist)
 * leaves that piece out with a note; an unreadable block stays in the
 * table with its error. Only what planning cannot do without fails the
 * load: the node and CPU directories unlistable, or block_size_bytes
 * unreadable or not a hex number (-EINVAL), with ret_error (may be NULL)
 * saying which. Without TOPO_LOAD_NEED_MEMORY a tree without memory
 * hotplug loads with block_size 0.
 */
int topology_load_full(const char *sysfs_root, unsigned flags, struct topology **ret,
                       struct topology_error *ret_error);
/* topology_load_full(sysfs_root, 0, ret, NULL). */
int topology_load(const char *sysfs_root, struct topology **ret);

/* "10 20 30" (a node's distance line) -> array of at most NODE_ID_MAX + 1 values. */
int topology_parse_distance(const char *s, unsigned **ret, size_t *ret_n);
void topology_free(struct topology *t);
void topology_freep(struct topology **t);
#define _cleanup_topology_ __attribute__((cleanup(topology_freep)))

const struct topo_node *topology_node(const struct topology *t, int node_id);

/* The block as topology_load() read it, or NULL if it did not exist or was unreadable then. */
const struct topo_block *topology_block(const struct topology *t, uint64_t id);

/* How topology_refresh() treats the blocks it is given. */
enum {
        /* Blocks the table has online are not read: our own writes' online events. */
        TOPO_REFRESH_SKIP_ONLINE = 1 << 0,
        /*
         * Blocks the table does not have are new (add events): taken as
         * offline without reading; the writer checks the state at its write.
         */
        TOPO_REFRESH_TRUST_NEW = 1 << 1,
};

/*
 * When nodes or CPUs came or went, or a CPU-less node got its first
 * memory (its HMAT initiators appear then), read the nodes and CPUs again
 * and keep the block table. Two small reads when nothing changed. -ESTALE
 * when the topology had no memory hotplug when loaded: load it again.
 */
int topology_sync_machine(struct topology *t);

/*
 * Keep a loaded topology current without reading every block again: read
 * only the given blocks (state, node link, zone if online; a block whose
 * state cannot be read gets its error, as in topology_load()) and adjust the
 * zone totals and spans; if another agent onlined a CPU-less node's first
 * memory, the nodes are read again too. Call topology_sync_machine()
 * first, once per batch. -ESTALE as there.
 */
int topology_refresh(struct topology *t, const uint64_t *ids, size_t n, unsigned flags);

/*
 * topology_refresh(), and then take in every block linked to a node that
 * the table does not have: added since it was read, its add event still on
 * the way (udev hands a range's events over one by one, well after the
 * kernel linked the whole range). Taken as new, like an add event's block
 * under TOPO_REFRESH_TRUST_NEW, and listed in *ret_adopted (malloc'd,
 * ascending, NULL when none). Both out parameters untouched on failure.
 */
int topology_refresh_adopt(struct topology *t, const uint64_t *ids, size_t n, unsigned flags,
                           uint64_t **ret_adopted, size_t *ret_n_adopted);

/* The node links of the given blocks as they are now (NODE_NONE: none yet), one listing per node. */
int topology_read_links(const struct topology *t, const uint64_t *ids, size_t n, int *ret_nodes);

/*
 * Record a write that onlined the block, on node (kept if the table has
 * no node for it yet). ZONE_ONLINE (the kernel chose) leaves the zone
 * unknown until topology_read_zones().
 */
void topology_set_online(struct topology *t, uint64_t id, int node, enum zone written);

/* Read valid_zones of online blocks whose zone is unknown, so the zone totals are exact. */
int topology_read_zones(struct topology *t);

/*
 * Take the machine's hotplug devices (the set is moved, *devices left
 * empty) and count each node's kernel_early_bytes: its online kernel-zone
 * blocks that belong to none of them and, when the firmware's RAM ranges
 * are known (fw not empty), lie in them. Call after topology_read_zones().
 */
void topology_set_devices(struct topology *t, struct memdev_set *devices, const struct ram_ranges *fw);

/* The hotplug device a block belongs to, NULL for boot memory (or before topology_set_devices()). */
const struct memdev *topology_block_device(const struct topology *t, uint64_t id);

/* The budget's base for node (NODE_NONE: all nodes): kernel_early_bytes, or kernel_bytes without devices. */
uint64_t topology_kernel_early(const struct topology *t, int node);
static inline uint64_t topology_node_kernel_early(const struct topology *t, const struct topo_node *n) {
        return t->devices_known ? n->kernel_early_bytes : n->kernel_bytes;
}

/*
 * The node whose CPUs write this node's memory: the node itself if it has
 * usable CPUs; else the HMAT best initiator; else the nearest node with
 * usable CPUs by distance (ties: lowest id). NODE_NONE if none.
 */
int topology_writer_node(const struct topology *t, int node_id, const struct bitmask *banned);

/*
 * Pick up to max CPUs of node_id to write from: one hardware thread per
 * physical core, never two siblings, skipping offline, banned and isolated
 * CPUs. Lowest core first. Returns count (>= 0) written to ret_cpus.
 */
int topology_pick_cpus(const struct topology *t, int node_id, const struct bitmask *banned,
                       unsigned max, int *ret_cpus);

/* Number of physical cores usable on the node (same filters as above). */
unsigned topology_usable_cores(const struct topology *t, int node_id, const struct bitmask *banned);
