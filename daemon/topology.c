/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include "blocks.h"
#include "cpuset.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

#define NODE_DIR "devices/system/node"
#define CPU_DIR "devices/system/cpu"
#define MEMORY_DIR "devices/system/memory"

/* Say what was left out and why; past TOPO_NOTES_MAX only counted. Out of memory drops the note. */
_printf_(2, 3)
static void note(struct topology *t, const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        if (t->n_notes >= TOPO_NOTES_MAX) {
                t->n_notes_dropped++;
                return;
        }
        if (!t->notes) {
                t->notes = calloc(TOPO_NOTES_MAX, sizeof(char *));
                if (!t->notes)
                        return;
        }
        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0) {
                t->n_notes_dropped++;
                return;
        }
        t->notes[t->n_notes++] = s;
}

static void free_notes(struct topology *t) {
        for (size_t i = 0; i < t->n_notes; i++)
                free(t->notes[i]);
        free(t->notes);
        t->notes = NULL;
        t->n_notes = t->n_notes_dropped = 0;
}

void topology_free(struct topology *t) {
        if (!t)
                return;
        for (size_t i = 0; i < t->n_nodes; i++) {
                cpuset_freep(&t->nodes[i].cpus);
                cpuset_freep(&t->nodes[i].initiators);
                free(t->nodes[i].distance);
        }
        free(t->nodes);
        free(t->cpus);
        free(t->blocks);
        free(t->signature);
        memdev_set_clear(&t->devices);
        cpuset_freep(&t->isolated);
        free_notes(t);
        free(t->sysfs_root);
        free(t);
}

void topology_freep(struct topology **t) {
        topology_free(*t);
}

/* A block id (the key) against a table entry, for bsearch(). */
static int cmp_block_id(const void *key, const void *entry) {
        return cmp_u64(key, &((const struct topo_block *) entry)->id);
}

const struct topo_block *topology_block(const struct topology *t, uint64_t id) {
        if (!t)
                return NULL;
        return bsearch_safe(&id, t->blocks, t->n_blocks, sizeof(*t->blocks), cmp_block_id);
}

/* A node id (the key) against an entry of nodes[], for bsearch(). */
static int cmp_node_id(const void *key, const void *entry) {
        int a = *(const int *) key, b = ((const struct topo_node *) entry)->id;

        return (a > b) - (a < b);
}

const struct topo_node *topology_node(const struct topology *t, int node_id) {
        if (!t)
                return NULL;
        /* nodes[] is sorted by id. */
        return bsearch_safe(&node_id, t->nodes, t->n_nodes, sizeof(*t->nodes), cmp_node_id);
}

static struct topo_node *node_mut(struct topology *t, int node_id) {
        return (struct topo_node *) topology_node(t, node_id);
}

/* A cpulist attribute; a missing file is an empty set when optional. */
static int read_cpulist(const char *root, const char *rel, bool optional, struct bitmask **ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        r = sysfs_read(root, rel, &s);
        if (r == -ENOENT && optional)
                s = strdup("");
        else if (r < 0)
                return r;
        if (!s)
                return -ENOMEM;
        /* nohz_full reads "  (null)" on kernels built with NO_HZ_FULL but booted without it. */
        if (streq(strstrip(s), "(null)"))
                return cpulist_parse("", ret);
        return cpulist_parse(s, ret);
}

/* A cpulist the machine can do without: on any error but ENOMEM, a note and NULL (an empty set). */
static int read_cpulist_or_note(struct topology *t, const char *rel, const char *without, struct bitmask **ret) {
        int r;

        r = read_cpulist(t->sysfs_root, rel, true, ret);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                note(t, "%s: %s: %s", rel, strerror(-r), without);
                *ret = NULL;
        }
        return 0;
}

int topology_parse_distance(const char *s, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0, allocated = 0;

        if (!s || !ret || !ret_n)
                return -EINVAL;
        for (const char *p = s;;) {
                char word[16];
                size_t len;
                unsigned d;
                int r;

                p += strspn(p, " \t\n");
                len = strcspn(p, " \t\n");
                if (len == 0)
                        break;
                if (len >= sizeof(word))
                        return -EINVAL;
                /* One entry per node: more than there can be nodes is no distance line. */
                if (n > NODE_ID_MAX)
                        return -E2BIG;
                memcpy(word, p, len);
                word[len] = '\0';
                r = parse_unsigned(word, &d);
                if (r < 0)
                        return -EINVAL;
                if (GROW(v, allocated, n + 1) < 0)
                        return -ENOMEM;
                v[n++] = d;
                p += len;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

/* Fills node->distance from its distance line; a line it cannot use leaves all unknown (0). */
static int read_node_distance(struct topology *t, struct topo_node *node,
                              const uint64_t *online, size_t n_online,
                              const uint64_t *dirs, size_t n_dirs) {
        _cleanup_free_ char *s = NULL;
        _cleanup_free_ unsigned *v = NULL;
        const uint64_t *order;
        char rel[128];
        size_t n;
        int r;

        snprintf(rel, sizeof(rel), NODE_DIR "/node%d/distance", node->id);
        r = sysfs_read(t->sysfs_root, rel, &s);
        if (r == -ENOENT)
                return 0;       /* unknown: all 0 */
        if (r >= 0)
                r = topology_parse_distance(s, &v, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                note(t, "%s: %s: distances from node %d unknown", rel, strerror(-r), node->id);
                return 0;
        }

        /* The kernel prints for_each_online_node(); node/online is that list. */
        if (online && n == n_online)
                order = online;
        else if (n == n_dirs)
                order = dirs;
        else {
                note(t, "%s: %zu entries for %zu nodes: distances from node %d unknown", rel, n,
                     n_online > 0 ? n_online : n_dirs, node->id);
                return 0;
        }
        for (size_t i = 0; i < n; i++)
                node->distance[order[i]] = v[i];
        return 0;
}

static int load_node_initiators(struct topology *t, struct topo_node *node) {
        _cleanup_cpuset_ struct bitmask *m = NULL;
        _cleanup_free_ uint64_t *ids = NULL;
        char rel[128];
        size_t n;
        int r;

        snprintf(rel, sizeof(rel), NODE_DIR "/node%d/access1/initiators", node->id);
        r = sysfs_list_ids(t->sysfs_root, rel, "node", &ids, &n);
        /* Appears only once the node has online memory, and only with HMAT. */
        if (r == -ENOENT || r == -ENOTDIR)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                note(t, "%s: %s: no HMAT initiator for node %d", rel, strerror(-r), node->id);
                return 0;
        }
        if (n == 0)
                return 0;
        m = cpuset_new();
        if (!m)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (ids[i] > NODE_ID_MAX) {
                        note(t, "%s/node%" PRIu64 ": node id beyond %d, left out", rel, ids[i], NODE_ID_MAX);
                        continue;
                }
                numa_bitmask_setbit(m, (unsigned) ids[i]);
        }
        if (cpuset_count(m) > 0)
                node->initiators = TAKE_PTR(m);
        return 0;
}

/* Drop the ids beyond NODE_ID_MAX from a sorted list, with a note per id. */
static size_t keep_node_ids(struct topology *t, const char *what, uint64_t *ids, size_t n) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (ids[i] <= NODE_ID_MAX)
                        ids[k++] = ids[i];
                else
                        note(t, "%s%" PRIu64 ": node id beyond %d, left out", what, ids[i], NODE_ID_MAX);
        return k;
}

/*
 * Node directories, cpulists (kept in ret_cpulists, by index into nodes[],
 * to map CPUs without a nodeM link), distances and initiators.
 */
static int load_nodes(struct topology *t, struct bitmask ***ret_cpulists) {
        _cleanup_free_ uint64_t *dirs = NULL, *online = NULL;
        _cleanup_cpuset_ struct bitmask *online_mask = NULL;
        struct bitmask **cpulists;
        size_t n_dirs, n_online = 0;
        int r;

        r = sysfs_list_ids(t->sysfs_root, NODE_DIR, "node", &dirs, &n_dirs);
        if (r == -ENOENT) {
                /* CONFIG_NUMA=n: no node directory at all; everything is node 0. */
                dirs = calloc(1, sizeof(uint64_t));
                if (!dirs)
                        return -ENOMEM;
                n_dirs = 1;
        } else if (r < 0)
                return r;
        n_dirs = keep_node_ids(t, NODE_DIR "/node", dirs, n_dirs);

        r = read_cpulist_or_note(t, NODE_DIR "/online", "distances follow the node directories", &online_mask);
        if (r < 0)
                return r;
        n_online = cpuset_count(online_mask);
        if (n_online > 0) {
                size_t i = 0;

                online = calloc(n_online, sizeof(uint64_t));
                if (!online)
                        return -ENOMEM;
                CPUSET_FOREACH(k, online_mask)
                        online[i++] = (uint64_t) k;
                n_online = keep_node_ids(t, NODE_DIR "/online: node", online, n_online);
        }

        t->max_node = 0;
        for (size_t i = 0; i < n_dirs; i++)
                t->max_node = MAX(t->max_node, (int) dirs[i]);
        if (n_online > 0)
                t->max_node = MAX(t->max_node, (int) online[n_online - 1]);

        t->nodes = calloc(n_dirs ? n_dirs : 1, sizeof(struct topo_node));
        cpulists = calloc(n_dirs ? n_dirs : 1, sizeof(struct bitmask *));
        if (!t->nodes || !cpulists) {
                free(cpulists);
                return -ENOMEM;
        }
        /* Owned by the caller from here on, also on failure. */
        *ret_cpulists = cpulists;

        for (size_t i = 0; i < n_dirs; i++) {
                struct topo_node *node = &t->nodes[i];
                char rel[128];

                node->id = (int) dirs[i];
                t->n_nodes++;
                node->cpus = cpuset_new();
                node->distance = calloc((size_t) t->max_node + 1, sizeof(unsigned));
                if (!node->cpus || !node->distance)
                        return -ENOMEM;

                snprintf(rel, sizeof(rel), NODE_DIR "/node%d/cpulist", node->id);
                r = read_cpulist_or_note(t, rel, "its CPUs go by their own node links", &cpulists[i]);
                if (r < 0)
                        return r;
                r = read_node_distance(t, node, online, n_online, dirs, n_dirs);
                if (r < 0)
                        return r;
                if (node->distance[node->id] == 0 && n_dirs == 1)
                        node->distance[node->id] = 10;  /* local distance, also for the non-NUMA node */
                r = load_node_initiators(t, node);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* cpuN/online: "1" or "0"; cpu0 usually cannot be offlined and has none. Anything else: offline, noted. */
static int read_cpu_online(struct topology *t, unsigned cpu, bool *ret) {
        _cleanup_free_ char *online = NULL;
        char rel[128];
        int r;

        snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u/online", cpu);
        r = sysfs_read(t->sysfs_root, rel, &online);
        if (r == -ENOENT) {
                *ret = true;
                return 0;
        }
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && (streq(online, "1") || streq(online, "0"))) {
                *ret = streq(online, "1");
                return 0;
        }
        note(t, "%s: %s: CPU %u taken as offline, never written from", rel,
             r < 0 ? strerror(-r) : "neither 1 nor 0", cpu);
        *ret = false;
        return 0;
}

static int load_cpu(struct topology *t, unsigned cpu, struct bitmask *const *cpulists) {
        _cleanup_cpuset_ struct bitmask *siblings = NULL;
        _cleanup_free_ uint64_t *nodes = NULL;
        struct topo_cpu *c = &t->cpus[cpu];
        char rel[128];
        size_t n = 0;
        int r;

        r = read_cpu_online(t, cpu, &c->online);
        if (r < 0)
                return r;
        c->present = true;
        c->node = NODE_NONE;

        snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u", cpu);
        r = sysfs_list_ids(t->sysfs_root, rel, "node", &nodes, &n);
        if (r == -ENOENT) {
                /* Gone since the listing (hot-removed): not a CPU to write from. */
                *c = (struct topo_cpu) { .node = NODE_NONE, .core = (int) cpu };
                return 0;
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                note(t, "%s: %s: node from the node cpulists", rel, strerror(-r));
        else {
                snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u/node", cpu);
                if (keep_node_ids(t, rel, nodes, n) > 0)
                        c->node = (int) nodes[0];
        }
        if (c->node == NODE_NONE)
                for (size_t i = 0; i < t->n_nodes; i++)
                        if (cpuset_isset(cpulists[i], cpu)) {
                                c->node = t->nodes[i].id;
                                break;
                        }

        /* Offline CPUs lose their topology directory: a core of their own. */
        snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u/topology/thread_siblings_list", cpu);
        r = read_cpulist_or_note(t, rel, "a core of its own", &siblings);
        if (r < 0)
                return r;
        r = cpuset_next(siblings, 0);
        c->core = r >= 0 && (unsigned) r < cpu ? r : (int) cpu;
        return 0;
}

static int load_cpus(struct topology *t, struct bitmask *const *cpulists) {
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n;
        int r;

        r = sysfs_list_ids(t->sysfs_root, CPU_DIR, "cpu", &ids, &n);
        if (r == -ENOENT)
                n = 0;
        else if (r < 0)
                return r;
        /* Sorted: the ones past the bitmasks come last. */
        while (n > 0 && ids[n - 1] >= CPUSET_MAX) {
                note(t, CPU_DIR "/cpu%" PRIu64 ": CPU id beyond %d, left out", ids[n - 1], CPUSET_MAX - 1);
                n--;
        }

        t->n_cpus = n > 0 ? (unsigned) ids[n - 1] + 1 : 0;
        t->cpus = calloc(t->n_cpus ? t->n_cpus : 1, sizeof(struct topo_cpu));
        if (!t->cpus)
                return -ENOMEM;
        for (unsigned i = 0; i < t->n_cpus; i++) {
                t->cpus[i].node = NODE_NONE;
                t->cpus[i].core = (int) i;
        }
        for (size_t i = 0; i < n; i++) {
                r = load_cpu(t, (unsigned) ids[i], cpulists);
                if (r < 0)
                        return r;
        }

        /* Without node directories every CPU is on the single node 0. */
        for (unsigned i = 0; i < t->n_cpus; i++) {
                struct topo_cpu *c = &t->cpus[i];
                struct topo_node *node;

                if (c->node == NODE_NONE && t->n_nodes == 1 && t->nodes[0].id == 0)
                        c->node = 0;
                if (!c->present || !c->online)
                        continue;
                node = node_mut(t, c->node);
                if (node)
                        numa_bitmask_setbit(node->cpus, i);
        }
        return 0;
}

static int load_isolated(struct topology *t) {
        static const char *const files[] = { CPU_DIR "/isolated", CPU_DIR "/nohz_full" };
        int r;

        t->isolated = cpuset_new();
        if (!t->isolated)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_cpuset_ struct bitmask *m = NULL;

                r = read_cpulist(t->sysfs_root, files[i], true, &m);
                if (r == -ENOMEM)
                        return r;
                /* An odd format here must not stop onlining: avoid nothing extra. */
                if (r < 0)
                        continue;
                CPUSET_FOREACH(cpu, m)
                        numa_bitmask_setbit(t->isolated, (unsigned) cpu);
        }
        return 0;
}

struct block_node {
        uint64_t id;
        int node;
};

static int cmp_block_node(const void *a, const void *b) {
        const struct block_node *x = a, *y = b;

        if (x->id != y->id)
                return x->id < y->id ? -1 : 1;
        return (x->node > y->node) - (x->node < y->node);
}

/*
 * By id, then node, so the lowest node wins a block linked twice. Packed as
 * (id << bits of max_node | node) in one u64 each, sort_u64() does it in
 * O(n); qsort() only if an id does not fit or memory is short.
 */
static void sort_block_nodes(struct block_node *map, size_t n, int max_node) {
        _cleanup_free_ uint64_t *packed = NULL;
        unsigned shift = 0;

        while (shift < 32 && ((unsigned) max_node >> shift) != 0)
                shift++;
        packed = malloc(n * sizeof(*packed));
        for (size_t j = 0; packed && j < n; j++) {
                if (shift > 0 && map[j].id >> (64 - shift) != 0) {
                        free(TAKE_PTR(packed));
                        break;
                }
                packed[j] = map[j].id << shift | (unsigned) map[j].node;
        }
        if (!packed) {
                qsort(map, n, sizeof(*map), cmp_block_node);
                return;
        }
        sort_u64(packed, n);
        for (size_t j = 0; j < n; j++)
                map[j] = (struct block_node) {
                        .id = packed[j] >> shift,
                        .node = (int) (packed[j] & ((UINT64_C(1) << shift) - 1)),
                };
}

/*
 * Block id -> node from the node/nodeN/memoryM links, ascending by id:
 * one listing per node instead of a directory read per block. The kernel
 * makes these links together with memoryM/nodeN. Old kernels could link
 * a block to several nodes: the lowest wins, as in block_read().
 */
static int load_block_nodes(const struct topology *t, struct block_node **ret, size_t *ret_n) {
        _cleanup_free_ struct block_node *map = NULL;
        size_t n = 0, allocated = 0, k = 0;
        int r;

        for (size_t i = 0; i < t->n_nodes; i++) {
                _cleanup_free_ uint64_t *ids = NULL;
                size_t n_ids;
                char rel[128];

                snprintf(rel, sizeof(rel), NODE_DIR "/node%d", t->nodes[i].id);
                r = sysfs_list_ids(t->sysfs_root, rel, "memory", &ids, &n_ids);
                if (r == -ENOENT)
                        continue;       /* CONFIG_NUMA=n, or the node went away */
                if (r < 0)
                        return r;
                if (n_ids > 0 && GROW(map, allocated, n + n_ids) < 0)
                        return -ENOMEM;
                for (size_t j = 0; j < n_ids; j++)
                        map[n++] = (struct block_node) { .id = ids[j], .node = t->nodes[i].id };
        }
        if (n > 0) {
                sort_block_nodes(map, n, t->max_node);
                for (size_t j = 0; j < n; j++)
                        if (k == 0 || map[j].id != map[k - 1].id)
                                map[k++] = map[j];
        }
        *ret = TAKE_PTR(map);
        *ret_n = k;
        return 0;
}

/* memoryN/<attr>, or -errno. */
static int read_block_attr(const struct topology *t, uint64_t id, const char *attr, char **ret) {
        char rel[128];

        if ((size_t) snprintf(rel, sizeof(rel), MEMORY_DIR "/memory%llu/%s", (unsigned long long) id, attr) >=
            sizeof(rel))
                return -ENAMETOOLONG;
        return sysfs_read(t->sysfs_root, rel, ret);
}

/*
 * The zone an online block is in: its valid_zones names it. Without
 * CONFIG_MEMORY_HOTREMOVE there is no valid_zones and all memory is
 * kernel memory; "none" (a block spanning zones) counts as kernel too.
 */
static int read_block_zone(const struct topology *t, uint64_t id, enum topo_zone *ret) {
        _cleanup_free_ char *zones = NULL;
        int r;

        r = read_block_attr(t, id, "valid_zones", &zones);
        if (r == -ENOENT) {
                *ret = TOPO_ZONE_KERNEL;
                return 0;
        }
        if (r < 0)
                return r;
        *ret = block_valid_zones_parse(zones) == VALID_MOVABLE ? TOPO_ZONE_MOVABLE : TOPO_ZONE_KERNEL;
        return 0;
}

/* The node a block counts for. Non-NUMA kernels have no node links: the one node owns everything. */
static struct topo_node *block_owner(struct topology *t, const struct topo_block *b) {
        return node_mut(t, b->node == NODE_NONE && t->n_nodes == 1 ? t->nodes[0].id : b->node);
}

static void span_block(struct topology *t, const struct topo_block *b) {
        struct topo_node *node = block_owner(t, b);

        /* A block not read spans nothing, as one not there. */
        if (!node || b->error < 0)
                return;
        if (!node->has_blocks || b->id < node->first_block)
                node->first_block = b->id;
        if (!node->has_blocks || b->id > node->last_block)
                node->last_block = b->id;
        node->has_blocks = true;
}

/* Add (sign > 0) or take away an online block's bytes from its node's zone totals. */
static void count_block(struct topology *t, const struct topo_block *b, int sign) {
        struct topo_node *node = block_owner(t, b);
        uint64_t *total;

        if (!node || b->state != BLOCK_STATE_ONLINE || b->zone == TOPO_ZONE_UNKNOWN)
                return;
        /* A CPU-less node's HMAT initiators appear with its first online memory. */
        if (sign > 0 && node->kernel_bytes == 0 && node->movable_bytes == 0 && cpuset_count(node->cpus) == 0)
                t->stale = true;
        total = b->zone == TOPO_ZONE_MOVABLE ? &node->movable_bytes : &node->kernel_bytes;
        if (sign > 0)
                *total += t->block_size;
        else
                *total -= MIN(*total, t->block_size);
}

static int cmp_link_id(const void *key, const void *entry) {
        return cmp_u64(key, &((const struct block_node *) entry)->id);
}

static const struct block_node *find_block_node(const struct block_node *map, size_t n, uint64_t id) {
        return bsearch_safe(&id, map, n, sizeof(*map), cmp_link_id);
}

/*
 * Online bytes per zone kind, block spans per node, and the state and
 * node link of every block, in one pass. It reads only what it needs:
 * the state of each block and valid_zones of the online ones (not a
 * directory listing per block for its node). The runner keeps the result
 * between batches (topology_refresh) and takes new blocks' state and node
 * from it instead of reading them again.
 */
_printf_(2, 3)
static void load_error(struct topology_error *e, const char *fmt, ...) {
        va_list ap;

        if (!e)
                return;
        va_start(ap, fmt);
        vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
        va_end(ap);
}

/* block_size_bytes, in hex; nothing can be planned without it. */
static int read_block_size(struct topology *t, unsigned flags, struct topology_error *e) {
        _cleanup_free_ char *s = NULL;
        char shown[64];
        uint64_t v;
        int r;

        r = sysfs_read(t->sysfs_root, MEMORY_DIR "/block_size_bytes", &s);
        if (r == -ENOENT) {
                if (!(flags & TOPO_LOAD_NEED_MEMORY))
                        return 0;       /* no memory hotplug support: nothing to online */
                load_error(e, "%s/" MEMORY_DIR "/block_size_bytes does not exist: this kernel has no memory "
                           "hotplug, or %s is not a sysfs tree", t->sysfs_root, t->sysfs_root);
                return -ENODEV;
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                load_error(e, MEMORY_DIR "/block_size_bytes: cannot read: %s", strerror(-r));
                return r;
        }
        r = parse_u64(s, 16, &v);
        if (r < 0 || v == 0) {
                escape_text(shown, sizeof(shown), s);
                load_error(e, MEMORY_DIR "/block_size_bytes is \"%s\", not a block size in hex: "
                           "nothing can be planned without it", shown);
                return -EINVAL;
        }
        t->block_size = v;
        return 0;
}

/*
 * The block's state into b. A block whose state cannot be read, or whose
 * address would wrap, gets BLOCK_STATE_UNKNOWN and the error, for the
 * caller to report. -ENOENT if it is gone, -ENOMEM.
 */
static int read_block_state(const struct topology *t, struct topo_block *b) {
        _cleanup_free_ char *state = NULL;
        uint64_t start;
        int r;

        r = block_phys_start(b->id, t->block_size, &start);
        if (r >= 0)
                r = read_block_attr(t, b->id, "state", &state);
        if (r == -ENOMEM || r == -ENOENT)
                return r;
        b->state = r < 0 ? BLOCK_STATE_UNKNOWN : block_state_from_string(state);
        b->error = r < 0 ? r : 0;
        return 0;
}

static int load_memory(struct topology *t, unsigned flags, struct topology_error *e) {
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_free_ struct block_node *map = NULL;
        size_t n_ids, n_map, m = 0;
        int r;

        r = read_block_size(t, flags, e);
        if (r < 0 || t->block_size == 0)
                return r;

        r = sysfs_list_ids(t->sysfs_root, MEMORY_DIR, "memory", &ids, &n_ids);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                load_error(e, "cannot list " MEMORY_DIR ": %s", strerror(-r));
                return r;
        }
        r = load_block_nodes(t, &map, &n_map);
        if (r < 0)
                return r;
        if (n_ids > 0) {
                t->blocks = calloc(n_ids, sizeof(*t->blocks));
                if (!t->blocks)
                        return -ENOMEM;
        }

        for (size_t i = 0; i < n_ids; i++) {
                struct topo_block *b = &t->blocks[t->n_blocks];

                *b = (struct topo_block) { .id = ids[i] };
                r = read_block_state(t, b);
                if (r == -ENOMEM)
                        return r;
                if (r == -ENOENT)
                        continue;       /* gone since the listing */
                t->n_blocks++;
                while (m < n_map && map[m].id < ids[i])
                        m++;
                b->node = m < n_map && map[m].id == ids[i] ? map[m].node : NODE_NONE;
                if (b->state == BLOCK_STATE_ONLINE) {
                        r = read_block_zone(t, b->id, &b->zone);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                continue;       /* unreadable: neither counted nor spanned */
                }
                span_block(t, b);
                count_block(t, b, +1);
        }
        /* Loading reads every initiator there is. */
        t->stale = false;
        return 0;
}

/* A list for the signature; one that cannot be read is the same "?" every time. */
static int read_signature_part(const char *root, const char *rel, char **ret) {
        int r = sysfs_read(root, rel, ret);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                *ret = strdup(r == -ENOENT ? "" : "?");
        return *ret ? 0 : -ENOMEM;
}

/* What node or CPU hotplug changes: the online node and CPU lists. */
static int read_signature(const char *root, char **ret) {
        _cleanup_free_ char *nodes = NULL, *cpus = NULL;
        char *s;
        int r;

        r = read_signature_part(root, NODE_DIR "/online", &nodes);
        if (r >= 0)
                r = read_signature_part(root, CPU_DIR "/online", &cpus);
        if (r < 0)
                return r;
        if (asprintf(&s, "%s|%s", nodes, cpus) < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* Nodes, CPUs and isolated CPUs, with the signature read first: a change while loading shows next time. */
static int load_machine(struct topology *t, struct topology_error *e) {
        struct bitmask **cpulists = NULL;
        int r;

        r = read_signature(t->sysfs_root, &t->signature);
        if (r < 0)
                return r;
        r = load_nodes(t, &cpulists);
        if (r < 0 && r != -ENOMEM)
                load_error(e, "cannot list " NODE_DIR ": %s", strerror(-r));
        if (r >= 0) {
                r = load_cpus(t, cpulists);
                if (r < 0 && r != -ENOMEM)
                        load_error(e, "cannot list " CPU_DIR ": %s", strerror(-r));
        }
        if (cpulists) {
                for (size_t i = 0; i < t->n_nodes; i++)
                        cpuset_freep(&cpulists[i]);
                free(cpulists);
        }
        if (r < 0)
                return r;
        return load_isolated(t);
}

static struct topology *topology_new(const char *sysfs_root) {
        struct topology *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->sysfs_root = strdup(sysfs_root);
        if (!t->sysfs_root) {
                free(t);
                return NULL;
        }
        return t;
}

int topology_load_full(const char *sysfs_root, unsigned flags, struct topology **ret,
                       struct topology_error *ret_error) {
        _cleanup_topology_ struct topology *t = NULL;
        struct topology_error e = {};
        int r;

        if (!sysfs_root || !ret)
                return -EINVAL;

        t = topology_new(sysfs_root);
        if (!t)
                return -ENOMEM;
        r = load_machine(t, &e);
        if (r >= 0)
                r = load_memory(t, flags, &e);
        if (r < 0) {
                if (ret_error)
                        *ret_error = e;
                return r;
        }

        *ret = TAKE_PTR(t);
        return 0;
}

int topology_load(const char *sysfs_root, struct topology **ret) {
        return topology_load_full(sysfs_root, 0, ret, NULL);
}

#define SWAP(a, b) do { __typeof__(a) _tmp = (a); (a) = (b); (b) = _tmp; } while (0)

/*
 * Nodes or CPUs came or went, or a CPU-less node got memory (and HMAT
 * initiators): read them again, keep the block table, and count the
 * zone totals and spans from it again. Cheap: a few files per node and CPU.
 */
static int reload_machine(struct topology *t) {
        _cleanup_topology_ struct topology *fresh = topology_new(t->sysfs_root);
        int r;

        if (!fresh)
                return -ENOMEM;
        r = load_machine(fresh, NULL);
        if (r < 0)
                return r;
        /* The old machine goes with fresh. */
        SWAP(t->nodes, fresh->nodes);
        SWAP(t->n_nodes, fresh->n_nodes);
        SWAP(t->max_node, fresh->max_node);
        SWAP(t->cpus, fresh->cpus);
        SWAP(t->n_cpus, fresh->n_cpus);
        SWAP(t->isolated, fresh->isolated);
        SWAP(t->signature, fresh->signature);
        SWAP(t->notes, fresh->notes);
        SWAP(t->n_notes, fresh->n_notes);
        SWAP(t->n_notes_dropped, fresh->n_notes_dropped);
        for (size_t i = 0; i < t->n_blocks; i++) {
                span_block(t, &t->blocks[i]);
                count_block(t, &t->blocks[i], +1);
        }
        /* The initiators were just read, with the memory already online. */
        t->stale = false;
        return 0;
}

/* Merge the sorted new entries into the sorted table. */
static int merge_blocks(struct topology *t, const struct topo_block *add, size_t n_add) {
        struct topo_block *merged;
        size_t i = 0, j = 0, k = 0;

        if (n_add == 0)
                return 0;
        merged = calloc(t->n_blocks + n_add, sizeof(*merged));
        if (!merged)
                return -ENOMEM;
        while (i < t->n_blocks || j < n_add)
                if (j == n_add || (i < t->n_blocks && t->blocks[i].id < add[j].id))
                        merged[k++] = t->blocks[i++];
                else
                        merged[k++] = add[j++];
        free(t->blocks);
        t->blocks = merged;
        t->n_blocks = k;
        return 0;
}

static void remove_block(struct topology *t, struct topo_block *b) {
        size_t i = (size_t) (b - t->blocks);

        count_block(t, b, -1);
        memmove(b, b + 1, (t->n_blocks - i - 1) * sizeof(*b));
        t->n_blocks--;
}

int topology_sync_machine(struct topology *t) {
        _cleanup_free_ char *signature = NULL;
        int r;

        if (!t)
                return -EINVAL;
        if (t->block_size == 0)
                return -ESTALE;         /* no memory hotplug when loaded: load it all again */
        r = read_signature(t->sysfs_root, &signature);
        if (r < 0)
                return r;
        if (t->stale || !streq(signature, strempty(t->signature)))
                return reload_machine(t);
        return 0;
}

int topology_refresh(struct topology *t, const uint64_t *ids, size_t n, unsigned flags) {
        _cleanup_free_ uint64_t *sorted = NULL;
        _cleanup_free_ struct block_node *map = NULL;
        _cleanup_free_ struct topo_block *add = NULL;
        size_t n_map = 0, n_add = 0, n_sorted = 0;
        int r;

        if (!t || (n > 0 && !ids))
                return -EINVAL;
        if (t->block_size == 0)
                return -ESTALE;         /* no memory hotplug when loaded: load it all again */
        if (n == 0)
                return 0;

        sorted = malloc(n * sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct topo_block *b = topology_block(t, ids[i]);

                if (!((flags & TOPO_REFRESH_SKIP_ONLINE) && b && b->state == BLOCK_STATE_ONLINE))
                        sorted[n_sorted++] = ids[i];
        }
        if (n_sorted == 0)
                return 0;
        sort_u64(sorted, n_sorted);
        r = load_block_nodes(t, &map, &n_map);
        if (r < 0)
                return r;
        add = calloc(n_sorted, sizeof(*add));
        if (!add)
                return -ENOMEM;

        for (size_t i = 0; i < n_sorted; i++) {
                struct topo_block *old = (struct topo_block *) topology_block(t, sorted[i]);
                const struct block_node *link = find_block_node(map, n_map, sorted[i]);
                struct topo_block fresh = { .id = sorted[i], .node = link ? link->node : NODE_NONE };

                if (i > 0 && sorted[i] == sorted[i - 1])
                        continue;
                if (!old && (flags & TOPO_REFRESH_TRUST_NEW)) {
                        uint64_t start;

                        fresh.state = BLOCK_STATE_OFFLINE;
                        fresh.error = block_phys_start(fresh.id, t->block_size, &start);
                        if (fresh.error < 0)
                                fresh.state = BLOCK_STATE_UNKNOWN;
                        add[n_add++] = fresh;
                        span_block(t, &fresh);
                        continue;
                }
                r = read_block_state(t, &fresh);
                if (r == -ENOMEM)
                        return r;
                if (r == -ENOENT) {
                        /* Gone: as topology_load() would see it. */
                        if (old)
                                remove_block(t, old);
                        continue;
                }
                if (fresh.state == BLOCK_STATE_ONLINE) {
                        if (old && old->state == BLOCK_STATE_ONLINE && old->zone != TOPO_ZONE_UNKNOWN)
                                fresh.zone = old->zone;
                        else {
                                r = read_block_zone(t, fresh.id, &fresh.zone);
                                if (r == -ENOMEM)
                                        return r;
                                if (r < 0)
                                        fresh.zone = TOPO_ZONE_UNKNOWN;
                        }
                }
                if (old) {
                        count_block(t, old, -1);
                        *old = fresh;
                } else
                        add[n_add++] = fresh;
                span_block(t, &fresh);
                count_block(t, &fresh, +1);
        }
        r = merge_blocks(t, add, n_add);
        if (r < 0)
                return r;
        /* Another agent onlined a CPU-less node's first memory. */
        return t->stale ? reload_machine(t) : 0;
}

int topology_read_links(const struct topology *t, const uint64_t *ids, size_t n, int *ret_nodes) {
        _cleanup_free_ struct block_node *map = NULL;
        size_t n_map;
        int r;

        if (!t || (n > 0 && (!ids || !ret_nodes)))
                return -EINVAL;
        if (n == 0)
                return 0;
        r = load_block_nodes(t, &map, &n_map);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const struct block_node *link = find_block_node(map, n_map, ids[i]);

                ret_nodes[i] = link ? link->node : NODE_NONE;
        }
        return 0;
}

void topology_set_online(struct topology *t, uint64_t id, int node, enum zone written) {
        struct topo_block *b = (struct topo_block *) topology_block(t, id);

        if (!b)
                return;
        count_block(t, b, -1);
        if (b->node == NODE_NONE)
                b->node = node;
        b->state = BLOCK_STATE_ONLINE;
        b->zone = written == ZONE_MOVABLE ? TOPO_ZONE_MOVABLE :
                  written == ZONE_KERNEL ? TOPO_ZONE_KERNEL : TOPO_ZONE_UNKNOWN;
        count_block(t, b, +1);
}

const struct memdev *topology_block_device(const struct topology *t, uint64_t id) {
        uint64_t start;

        if (!t || !t->devices_known || block_phys_start(id, t->block_size, &start) < 0)
                return NULL;
        return memdev_find(&t->devices, start, t->block_size);
}

void topology_set_devices(struct topology *t, struct memdev_set *devices, const struct ram_ranges *fw) {
        memdev_set_clear(&t->devices);
        t->devices = *devices;
        *devices = (struct memdev_set) {};
        t->devices_known = true;
        for (size_t i = 0; i < t->n_nodes; i++)
                t->nodes[i].kernel_early_bytes = 0;
        for (size_t i = 0; i < t->n_blocks; i++) {
                const struct topo_block *b = &t->blocks[i];
                struct topo_node *n = block_owner(t, b);

                uint64_t start;

                if (n && b->state == BLOCK_STATE_ONLINE && b->zone == TOPO_ZONE_KERNEL &&
                    !topology_block_device(t, b->id) && block_phys_start(b->id, t->block_size, &start) >= 0 &&
                    (!fw || fw->n == 0 || ram_ranges_touch(fw, start, t->block_size)))
                        n->kernel_early_bytes += t->block_size;
        }
}

uint64_t topology_kernel_early(const struct topology *t, int node) {
        uint64_t sum = 0;

        for (size_t i = 0; i < t->n_nodes; i++)
                if (node == NODE_NONE || t->nodes[i].id == node)
                        sum += t->devices_known ? t->nodes[i].kernel_early_bytes : t->nodes[i].kernel_bytes;
        return sum;
}

int topology_read_zones(struct topology *t) {
        int r;

        for (size_t i = 0; i < t->n_blocks; i++) {
                struct topo_block *b = &t->blocks[i];

                if (b->state != BLOCK_STATE_ONLINE || b->zone != TOPO_ZONE_UNKNOWN)
                        continue;
                r = read_block_zone(t, b->id, &b->zone);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;       /* unreadable: as topology_load() */
                count_block(t, b, +1);
        }
        return 0;
}


static bool cpu_usable(const struct topology *t, int cpu, const struct bitmask *banned) {
        const struct topo_cpu *c;

        if (cpu < 0 || (unsigned) cpu >= t->n_cpus)
                return false;
        c = &t->cpus[cpu];
        return c->present && c->online &&
                !cpuset_isset(banned, (unsigned) cpu) &&
                !cpuset_isset(t->isolated, (unsigned) cpu);
}

static bool node_usable(const struct topology *t, const struct topo_node *node, const struct bitmask *banned) {
        if (!node)
                return false;
        CPUSET_FOREACH(cpu, node->cpus)
                if (cpu_usable(t, cpu, banned))
                        return true;
        return false;
}

int topology_writer_node(const struct topology *t, int node_id, const struct bitmask *banned) {
        const struct topo_node *node;
        int best = NODE_NONE;
        unsigned best_dist = UINT_MAX;

        if (!t)
                return NODE_NONE;
        node = topology_node(t, node_id);
        if (!node)
                return NODE_NONE;
        if (node_usable(t, node, banned))
                return node_id;

        /* HMAT names the best initiator; bitmask order gives the lowest id first. */
        CPUSET_FOREACH(k, node->initiators)
                if (k != node_id && node_usable(t, topology_node(t, k), banned))
                        return k;

        /* Nearest by SLIT distance; unknown (0) distances rank last. Ties: lowest id. */
        for (size_t i = 0; i < t->n_nodes; i++) {
                const struct topo_node *o = &t->nodes[i];
                unsigned d;

                if (o->id == node_id || !node_usable(t, o, banned))
                        continue;
                d = node->distance[o->id] ? node->distance[o->id] : UINT_MAX;
                if (best == NODE_NONE || d < best_dist) {
                        best = o->id;
                        best_dist = d;
                }
        }
        return best;
}

/*
 * best[core] = the lowest usable thread of each physical core on the node,
 * or -1. A core whose first thread is banned is represented by a sibling.
 */
static int node_cores(const struct topology *t, int node_id, const struct bitmask *banned, int **ret_best) {
        const struct topo_node *node = topology_node(t, node_id);
        _cleanup_free_ int *best = NULL;
        int n = 0;

        best = malloc((t->n_cpus ? t->n_cpus : 1) * sizeof(int));
        if (!best)
                return -ENOMEM;
        for (unsigned i = 0; i < t->n_cpus; i++)
                best[i] = -1;
        if (node)
                CPUSET_FOREACH(cpu, node->cpus) {
                        int core;

                        if (!cpu_usable(t, cpu, banned))
                                continue;
                        core = t->cpus[cpu].core;
                        if (best[core] < 0) {
                                best[core] = cpu;
                                n++;
                        }
                }
        *ret_best = TAKE_PTR(best);
        return n;
}

int topology_pick_cpus(const struct topology *t, int node_id, const struct bitmask *banned,
                       unsigned max, int *ret_cpus) {
        _cleanup_free_ int *best = NULL;
        unsigned n = 0;
        int r;

        if (!t || (max > 0 && !ret_cpus))
                return -EINVAL;
        r = node_cores(t, node_id, banned, &best);
        if (r < 0)
                return r;
        /* Lowest core first; core ids are CPU ids, so walk them in order. */
        for (unsigned core = 0; core < t->n_cpus && n < max; core++)
                if (best[core] >= 0)
                        ret_cpus[n++] = best[core];
        return (int) n;
}

unsigned topology_usable_cores(const struct topology *t, int node_id, const struct bitmask *banned) {
        _cleanup_free_ int *best = NULL;
        int r;

        if (!t)
                return 0;
        r = node_cores(t, node_id, banned, &best);
        return r < 0 ? 0 : (unsigned) r;
}
