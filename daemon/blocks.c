/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <unistd.h>
#include "blocks.h"
#include "string-table.h"
#include "sysfs.h"
#include "util.h"

#define MEMORY_DIR "devices/system/memory"

void mem_block_done(struct mem_block *b) {
        free(b->device);
        free(b->namespace_name);
        free(b->namespace_uuid);
        free(b->cxl_region);
        free(b->cxl_memdevs);
        b->device = b->namespace_name = b->namespace_uuid = b->cxl_region = b->cxl_memdevs = NULL;
}

void block_set_clear(struct block_set *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++)
                mem_block_done(&s->blocks[i]);
        free(s->blocks);
        s->blocks = NULL;
        s->n = s->allocated = 0;
}

static const char *const block_state_table[] = {
        [BLOCK_STATE_OFFLINE] = "offline",
        [BLOCK_STATE_ONLINE] = "online",
        [BLOCK_STATE_GOING_OFFLINE] = "going-offline",
};

DEFINE_STRING_TABLE_TO_STRING(block_state, enum block_state, "unknown")

enum block_state block_state_from_string(const char *s) {
        ssize_t i = string_table_lookup(block_state_table, ELEMENTSOF(block_state_table), s);

        return i < 0 ? BLOCK_STATE_UNKNOWN : (enum block_state) i;
}

int block_phys_start(uint64_t id, uint64_t block_size, uint64_t *ret) {
        if (block_size == 0)
                return -EINVAL;
        /* (id + 1) * block_size must fit: the block's end is an address too. */
        if (id >= UINT64_MAX / block_size)
                return -ERANGE;
        *ret = id * block_size;
        return 0;
}

int block_id_from_name(const char *name, uint64_t *ret) {
        return parse_prefixed_id(name, "memory", ret);
}

/*
 * valid_zones is a space separated list of zone names. DMA, DMA32 and
 * Normal are all kernel zones; "none" (a block spanning zones) and
 * unknown names set no bit.
 */
unsigned block_valid_zones_parse(const char *s) {
        unsigned bits = 0;

        while (*s) {
                size_t n;

                s += strspn(s, " \t\n");
                n = strcspn(s, " \t\n");
                if (n == 0)
                        break;
                if ((n == 6 && strncmp(s, "Normal", n) == 0) ||
                    (n == 3 && strncmp(s, "DMA", n) == 0) ||
                    (n == 5 && strncmp(s, "DMA32", n) == 0))
                        bits |= VALID_NORMAL;
                else if (n == 7 && strncmp(s, "Movable", n) == 0)
                        bits |= VALID_MOVABLE;
                s += n;
        }
        return bits;
}

/* The lowest nodeK entry in memoryN/. Old kernels could link one block to several nodes. */
static int block_read_node(const char *root, uint64_t id, int *ret_node) {
        _cleanup_free_ uint64_t *nodes = NULL;
        char rel[128];
        size_t n;
        int r;

        if ((size_t) snprintf(rel, sizeof(rel), MEMORY_DIR "/memory%llu", (unsigned long long) id) >= sizeof(rel))
                return -ENAMETOOLONG;
        r = sysfs_list_ids(root, rel, "node", &nodes, &n);
        if (r < 0)
                return r;
        /* Beyond NODE_ID_MAX is no node this daemon can plan for: unresolved. */
        *ret_node = n > 0 && nodes[0] <= NODE_ID_MAX ? (int) nodes[0] : NODE_NONE;
        return 0;
}

int block_linked(const char *sysfs_root, uint64_t id) {
        int node, r;

        r = block_read_node(sysfs_root, id, &node);
        if (r < 0)
                return r;
        return node != NODE_NONE;
}

/* 1 if memoryN exists, 0 if not, -errno. */
static int block_exists(const char *root, uint64_t id) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = sysfs_path(&path, root, MEMORY_DIR "/memory%llu", (unsigned long long) id);
        if (r < 0)
                return r;
        if (access(path, F_OK) == 0)
                return 1;
        return errno == ENOENT ? 0 : -errno;
}

/* Past this many blocks (128 TiB of 128 MiB blocks) a run is taken to end: a bound on the looks. */
#define BLOCK_RUN_MAX (UINT64_C(1) << 20)

/*
 * The last block of the run of existing blocks that begins at id, with
 * about 2 log2(n) looks: the step doubles until a block is missing, then
 * the gap is halved. A device's blocks are consecutive, so this is the
 * last block of id's device, or of the devices right after it. Past a
 * hole the halving may find a later device's block instead: a block
 * whose add is over answers as the latest block alone did, one whose add
 * runs makes the batch wait for it.
 */
static int block_run_end(const char *root, uint64_t id, uint64_t *ret_end) {
        uint64_t present = id, missing = 0, step;
        int r;

        for (step = 1; step <= BLOCK_RUN_MAX && step <= UINT64_MAX - id; step *= 2) {
                r = block_exists(root, id + step);
                if (r < 0)
                        return r;
                if (r == 0) {
                        missing = id + step;
                        break;
                }
                present = id + step;
        }
        while (missing > present + 1) {
                uint64_t mid = present + (missing - present) / 2;

                r = block_exists(root, mid);
                if (r < 0)
                        return r;
                if (r > 0)
                        present = mid;
                else
                        missing = mid;
        }
        *ret_end = present;
        return 0;
}

/* Node directories exist only with CONFIG_NUMA. */
static bool numa_kernel(const char *root) {
        _cleanup_free_ char *path = NULL;

        if (sysfs_path(&path, root, "devices/system/node") < 0)
                return true;    /* assume the worst: skip a read rather than risk the oops */
        return access(path, F_OK) == 0;
}

int block_add_over(const char *sysfs_root, uint64_t id) {
        uint64_t end;
        int r;

        r = block_linked(sysfs_root, id);
        if (r <= 0)
                return r;
        r = block_run_end(sysfs_root, id, &end);
        if (r < 0)
                return r;
        return end == id ? 1 : block_linked(sysfs_root, end);
}

int block_add_running(const char *sysfs_root, uint64_t id) {
        int r;

        if (!numa_kernel(sysfs_root))
                return 0;
        r = block_add_over(sysfs_root, id);
        if (r == -ENOENT)
                return 0;       /* removed meanwhile: its add is not what to wait for */
        return r < 0 ? r : !r;
}

/* Read memoryN/<attr>; the relative path always fits, so no allocation for it. */
static int block_attr_read(const char *root, uint64_t id, const char *attr, char **ret) {
        char rel[128];

        if ((size_t) snprintf(rel, sizeof(rel), MEMORY_DIR "/memory%llu/%s", (unsigned long long) id, attr) >= sizeof(rel))
                return -ENAMETOOLONG;
        return sysfs_read(root, rel, ret);
}

/* Read the block's state only; -ENOENT if the block is gone. */
static int block_read_state(const char *root, uint64_t id, enum block_state *ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        r = block_attr_read(root, id, "state", &s);
        if (r < 0)
                return r;
        *ret = block_state_from_string(s);
        return 0;
}

int block_read_known(const char *root, uint64_t block_size, uint64_t id, enum block_state state, int node,
                     struct mem_block *ret) {
        _cleanup_free_ char *zones = NULL;
        struct mem_block b = {
                .id = id,
                .state = state,
                .node = node,
                .region = -1,
        };
        int r;

        r = block_phys_start(id, block_size, &b.phys_start);
        if (r < 0)
                return r;

        /*
         * valid_zones of a block whose node is not set yet (the add is still
         * linking blocks to nodes) makes 6.1 dereference NODE_DATA(NUMA_NO_NODE)
         * in valid_zones_show(): an oops that kills the reader. The link is
         * made after the nid is set, so without it the zones stay unknown.
         * Non-NUMA kernels have no links at all, and no such problem.
         */
        if (b.node == NODE_NONE && numa_kernel(root))
                goto done;
        /* valid_zones needs CONFIG_MEMORY_HOTREMOVE; without it the zones are unknown. */
        r = block_attr_read(root, id, "valid_zones", &zones);
        if (r >= 0)
                b.valid_zones = block_valid_zones_parse(zones);
        else if (r != -ENOENT)
                return r;
done:
        *ret = b;
        return 0;
}

int block_read(const char *sysfs_root, uint64_t block_size, uint64_t id, struct mem_block *ret) {
        enum block_state state;
        int node, r;

        r = block_read_state(sysfs_root, id, &state);
        if (r < 0)
                return r;
        r = block_read_node(sysfs_root, id, &node);
        if (r < 0)
                return r;
        return block_read_known(sysfs_root, block_size, id, state, node, ret);
}
