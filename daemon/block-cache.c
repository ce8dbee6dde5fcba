/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The block-state cache: every memoryN with its state, node link and
 * zone, kept between batches (refreshed, merged, counted into the
 * nodes' zone totals and spans), and the hotplug devices the blocks
 * belong to. Also the topology's life: load, sync with the machine,
 * free. The machine itself is machine.c's.
 */
#include "blocks.h"
#include "cpuset.h"
#include "escape.h"
#include "sysfs.h"
#include "topology-internal.h"
#include "util.h"

#define MEMORY_DIR "devices/system/memory"

void topology_free(struct topology *t) {
        if (!t)
                return;
        machine_done(t);
        free(t->blocks);
        memdev_set_clear(&t->devices);
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
        return machine_node_mut(t, b->node == NODE_NONE && t->n_nodes == 1 ? t->nodes[0].id : b->node);
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
                topology_error_set(e, "%s/" MEMORY_DIR "/block_size_bytes does not exist: this kernel has no memory "
                           "hotplug, or %s is not a sysfs tree", t->sysfs_root, t->sysfs_root);
                return -ENODEV;
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                topology_error_set(e, MEMORY_DIR "/block_size_bytes: cannot read: %s", strerror(-r));
                return r;
        }
        r = parse_u64(s, 16, &v);
        if (r < 0 || v == 0) {
                escape_text(shown, sizeof(shown), s);
                topology_error_set(e, MEMORY_DIR "/block_size_bytes is \"%s\", not a block size in hex: "
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

/*
 * Online bytes per zone kind, block spans per node, and the state and
 * node link of every block, in one pass. It reads only what it needs:
 * the state of each block and valid_zones of the online ones (not a
 * directory listing per block for its node). The runner keeps the result
 * between batches (topology_refresh) and takes new blocks' state and node
 * from it instead of reading them again.
 */
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
                topology_error_set(e, "cannot list " MEMORY_DIR ": %s", strerror(-r));
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
        r = machine_load(t, &e);
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

/*
 * Nodes or CPUs came or went, or a CPU-less node got memory (and HMAT
 * initiators): read them again, keep the block table, and count the
 * zone totals and spans from it again. Cheap: a few files per node and CPU.
 */
static int reload_machine(struct topology *t, char *signature) {
        _cleanup_topology_ struct topology *fresh = topology_new(t->sysfs_root);
        int r;

        if (!fresh) {
                free(signature);
                return -ENOMEM;
        }
        r = machine_load_known(fresh, t, signature, NULL);
        if (r < 0)
                return r;
        /* The old machine goes with fresh. */
        machine_swap(t, fresh);
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
        r = machine_read_signature(t->sysfs_root, &signature);
        if (r < 0)
                return r;
        if (t->stale || !streq(signature, strempty(t->signature)))
                return reload_machine(t, TAKE_PTR(signature));
        return 0;
}

/*
 * Read one block again (or, new with TOPO_REFRESH_TRUST_NEW, take it as
 * offline) and count it anew: updated in place, removed when gone, or
 * appended to add[] for merge_blocks(). -ENOMEM only.
 */
static int refresh_block(struct topology *t, uint64_t id, const struct block_node *link, unsigned flags,
                         struct topo_block *add, size_t *n_add) {
        struct topo_block *old = (struct topo_block *) topology_block(t, id);
        struct topo_block fresh = { .id = id, .node = link ? link->node : NODE_NONE };
        int r;

        if (!old && (flags & TOPO_REFRESH_TRUST_NEW)) {
                uint64_t start;

                fresh.state = BLOCK_STATE_OFFLINE;
                fresh.error = block_phys_start(fresh.id, t->block_size, &start);
                if (fresh.error < 0)
                        fresh.state = BLOCK_STATE_UNKNOWN;
                add[(*n_add)++] = fresh;
                span_block(t, &fresh);
                return 0;
        }
        r = read_block_state(t, &fresh);
        if (r == -ENOMEM)
                return r;
        if (r == -ENOENT) {
                /* Gone: as topology_load() would see it. */
                if (old)
                        remove_block(t, old);
                return 0;
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
                add[(*n_add)++] = fresh;
        span_block(t, &fresh);
        count_block(t, &fresh, +1);
        return 0;
}

/*
 * Linked blocks the table does not have, taken as new (as an add event's
 * with TOPO_REFRESH_TRUST_NEW) and listed in *ret_ids, ascending.
 */
static int adopt_linked(struct topology *t, const struct block_node *map, size_t n_map, uint64_t **ret_ids,
                        size_t *ret_n) {
        _cleanup_free_ struct topo_block *add = NULL;
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n_add = 0, n = 0;
        int r;

        for (size_t i = 0; i < n_map; i++)
                n += !topology_block(t, map[i].id);
        if (n == 0)
                return 0;
        add = calloc(n, sizeof(*add));
        ids = calloc(n, sizeof(*ids));
        if (!add || !ids)
                return -ENOMEM;
        n = 0;
        for (size_t i = 0; i < n_map; i++) {
                if (topology_block(t, map[i].id))
                        continue;
                r = refresh_block(t, map[i].id, &map[i], TOPO_REFRESH_TRUST_NEW, add, &n_add);
                if (r < 0)
                        return r;
                ids[n++] = map[i].id;
        }
        r = merge_blocks(t, add, n_add);
        if (r < 0)
                return r;
        *ret_ids = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}

int topology_refresh_adopt(struct topology *t, const uint64_t *ids, size_t n, unsigned flags,
                           uint64_t **ret_adopted, size_t *ret_n_adopted) {
        _cleanup_free_ uint64_t *sorted = NULL, *adopted = NULL;
        _cleanup_free_ struct block_node *map = NULL;
        _cleanup_free_ struct topo_block *add = NULL;
        size_t n_map = 0, n_add = 0, n_sorted = 0, n_adopted = 0;
        int r;

        if (!t || (n > 0 && !ids) || !ret_adopted != !ret_n_adopted)
                return -EINVAL;
        if (t->block_size == 0)
                return -ESTALE;         /* no memory hotplug when loaded: load it all again */

        if (n > 0) {
                sorted = malloc(n * sizeof(*sorted));
                if (!sorted)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                const struct topo_block *b = topology_block(t, ids[i]);

                if (!((flags & TOPO_REFRESH_SKIP_ONLINE) && b && b->state == BLOCK_STATE_ONLINE))
                        sorted[n_sorted++] = ids[i];
        }
        if (n_sorted == 0 && !ret_adopted)
                return 0;
        sort_u64(sorted, n_sorted);
        r = load_block_nodes(t, &map, &n_map);
        if (r < 0)
                return r;
        if (n_sorted > 0) {
                add = calloc(n_sorted, sizeof(*add));
                if (!add)
                        return -ENOMEM;
        }

        for (size_t i = 0; i < n_sorted; i++) {
                if (i > 0 && sorted[i] == sorted[i - 1])
                        continue;
                r = refresh_block(t, sorted[i], find_block_node(map, n_map, sorted[i]), flags, add, &n_add);
                if (r < 0)
                        return r;
        }
        r = merge_blocks(t, add, n_add);
        if (r < 0)
                return r;
        if (ret_adopted) {
                r = adopt_linked(t, map, n_map, &adopted, &n_adopted);
                if (r < 0)
                        return r;
        }
        /* Another agent onlined a CPU-less node's first memory. */
        r = t->stale ? reload_machine(t, NULL) : 0;
        if (r < 0)
                return r;
        if (ret_adopted) {
                *ret_adopted = TAKE_PTR(adopted);
                *ret_n_adopted = n_adopted;
        }
        return 0;
}

int topology_refresh(struct topology *t, const uint64_t *ids, size_t n, unsigned flags) {
        return topology_refresh_adopt(t, ids, n, flags, NULL, NULL);
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
                        sum += topology_node_kernel_early(t, &t->nodes[i]);
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
