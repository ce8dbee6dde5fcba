/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "plan.h"
#include "pmem-cxl.h"
#include "pmem-decide.h"
#include "pmem-nd.h"
#include "pmem-scan.h"
#include "policy.h"
#include "status-read.h"
#include "topology.h"
#include "util.h"

/* The planner's writers for a large batch; more than any machine has cores per node. */
#define MAX_WRITE_CPUS 1024

void status_machine_done(struct status_machine *m) {
        for (size_t i = 0; i < m->n_nodes; i++) {
                free(m->nodes[i].cpus);
                free(m->nodes[i].writer_cpus);
        }
        free(m->nodes);
        for (size_t i = 0; i < m->n_devices; i++) {
                free(m->devices[i].name);
                free(m->devices[i].nodes);
        }
        free(m->devices);
        pmem_devices_clear(&m->dax);
        free(m->dax_tallies);
        cxl_regions_clear(&m->cxl);
        cxl_memdevs_clear(&m->memdevs);
        nd_regions_clear(&m->nd);
        *m = (struct status_machine) {};
}

void block_tally_add(struct block_tally *t, const struct topo_block *b) {
        t->blocks++;
        if (b->state == BLOCK_STATE_OFFLINE)
                t->offline++;
        if (b->state != BLOCK_STATE_ONLINE)
                return;
        t->online++;
        if (b->zone == TOPO_ZONE_MOVABLE)
                t->movable++;
        else if (b->zone == TOPO_ZONE_KERNEL)
                t->kernel++;
        else
                t->zone_unknown++;
}

bool block_tally_removable(const struct block_tally *t) {
        return t->kernel == 0 && t->zone_unknown == 0;
}

/* The first block of t with an id >= id. */
static size_t block_lower_bound(const struct topology *t, uint64_t id) {
        size_t lo = 0, hi = t->n_blocks;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (t->blocks[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

void status_tally_range(const struct topology *t, uint64_t start, uint64_t end, struct block_tally *tally,
                        struct bitmask *nodes) {
        uint64_t bs = t->block_size, first;

        if (bs == 0 || end <= start)
                return;
        /* whole blocks only: from the first that starts in the range to the last that ends in it */
        first = start / bs + (start % bs != 0);
        for (size_t i = block_lower_bound(t, first); i < t->n_blocks; i++) {
                const struct topo_block *b = &t->blocks[i];

                if (b->id >= end / bs)
                        break;
                block_tally_add(tally, b);
                if (nodes && b->node >= 0)
                        numa_bitmask_setbit(nodes, (unsigned) b->node);
        }
}

const char *status_dax_state(const struct status_dax *x) {
        const struct pmem_device *dev = x->dev;
        const struct block_tally *t = &x->tally;

        if (!dev->driver)
                return "disabled";
        if (x->held_back == BAD_MEDIA_REFUSED)
                return "refused";
        if (x->held_back == BAD_MEDIA_UNKNOWN)
                return "undecided";
        if (dev->mode != PMEM_MODE_SYSTEM_RAM)
                return "enabled";
        if (t->online > 0 && t->online == t->blocks)
                return "online";
        return t->online > 0 ? "partial" : "offline";
}

/* ---- nodes ------------------------------------------------------------------ */

static struct status_node *node_get(struct status_machine *m, int node) {
        for (size_t i = 0; i < m->n_nodes; i++)
                if (m->nodes[i].node == node)
                        return &m->nodes[i];
        if (GROW(m->nodes, m->a_nodes, m->n_nodes + 1) < 0)
                return NULL;
        m->nodes[m->n_nodes] = (struct status_node) { .node = node, .writer_node = NODE_NONE };
        return &m->nodes[m->n_nodes++];
}

static int node_cmp(const void *a, const void *b) {
        const struct status_node *x = a, *y = b;

        /* Blocks without a node (NODE_NONE) go last. */
        if (x->node == NODE_NONE || y->node == NODE_NONE)
                return (x->node == NODE_NONE) - (y->node == NODE_NONE);
        return (x->node > y->node) - (x->node < y->node);
}

/* The CPUs the planner would write node's memory from, for a large batch, as a cpulist. */
static int writer_cpus(const struct topology *t, const struct policy *p, struct status_node *n) {
        _cleanup_cpuset_ struct bitmask *set = cpuset_new();
        _cleanup_free_ int *cpus = calloc(MAX_WRITE_CPUS, sizeof(int));
        int count;

        if (!set || !cpus)
                return -ENOMEM;
        count = plan_writer_cpus(t, p, n->node, SIZE_MAX, MAX_WRITE_CPUS, cpus, &n->writer_node);
        for (int k = 0; k < count; k++)
                if (cpus[k] >= 0 && cpus[k] < CPUSET_MAX)
                        numa_bitmask_setbit(set, (unsigned) cpus[k]);
        return cpulist_format(set, &n->writer_cpus);
}

static int read_nodes(struct status_machine *m, const struct topology *t, const struct policy *p) {
        int r;

        for (size_t i = 0; i < t->n_nodes; i++) {
                const struct topo_node *tn = &t->nodes[i];
                struct status_node *n = node_get(m, tn->id);

                if (!n)
                        return -ENOMEM;
                n->in_topology = true;
                n->cpuless = !tn->cpus || cpuset_count(tn->cpus) == 0;
                if (tn->cpus)
                        r = cpulist_format(tn->cpus, &n->cpus);
                else
                        r = (n->cpus = strdup("")) ? 0 : -ENOMEM;
                if (r >= 0)
                        r = writer_cpus(t, p, n);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < t->n_blocks; i++) {
                const struct topo_block *b = &t->blocks[i];
                struct status_node *n = node_get(m, b->node < 0 ? NODE_NONE : b->node);

                if (!n)
                        return -ENOMEM;
                block_tally_add(&n->tally, b);
        }
        qsort(m->nodes, m->n_nodes, sizeof(*m->nodes), node_cmp);
        return 0;
}

/* ---- devices ------------------------------------------------------------------ */

/* One row per device: the runs of blocks found for one virtio-mem device join. */
static struct status_device *device_get(struct status_machine *m, const struct memdev *d) {
        for (size_t i = 0; i < m->n_devices; i++)
                if (m->devices[i].kind == d->kind && streq(m->devices[i].name, d->name)) {
                        m->devices[i].start = MIN(m->devices[i].start, d->start);
                        m->devices[i].end = MAX(m->devices[i].end, d->end);
                        return &m->devices[i];
                }
        if (GROW(m->devices, m->a_devices, m->n_devices + 1) < 0)
                return NULL;
        m->devices[m->n_devices] = (struct status_device) {
                .kind = d->kind, .name = strdup(d->name), .start = d->start, .end = d->end,
                .dax = d->kind == MEMDEV_DAX ? pmem_devices_find(&m->dax, d->name) : NULL,
        };
        if (!m->devices[m->n_devices].name)
                return NULL;
        return &m->devices[m->n_devices++];
}

static int read_devices(struct status_machine *m, const struct topology *t) {
        _cleanup_(memdev_set_clear) struct memdev_set set = {};
        _cleanup_(ram_ranges_clear) struct ram_ranges fw = {};
        _cleanup_free_ struct bitmask **nodes = NULL;
        int r;

        r = memdev_load(t->sysfs_root, t, &m->dax, NULL, &set, &fw);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                m->devices_error = r;
                return 0;
        }
        nodes = calloc(set.n ?: 1, sizeof(*nodes));
        if (!nodes)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < set.n; i++) {
                struct status_device *d = device_get(m, &set.devs[i]);
                size_t k;

                if (!d) {
                        r = -ENOMEM;
                        break;
                }
                k = (size_t) (d - m->devices);
                if (!nodes[k] && !(nodes[k] = cpuset_new()))
                        r = -ENOMEM;
                else
                        status_tally_range(t, set.devs[i].start, set.devs[i].end, &d->tally, nodes[k]);
        }
        for (size_t k = 0; r >= 0 && k < m->n_devices; k++)
                r = cpulist_format(nodes[k], &m->devices[k].nodes);
        for (size_t k = 0; k < set.n; k++)
                cpuset_freep(&nodes[k]);
        return r;
}

/* ---- dax devices ------------------------------------------------ */

/* Does memonlined keep the device's memory out for its media, as the runner would decide now? */
static enum bad_media held_back(const struct pmem_device *dev, const struct block_tally *tally,
                                const struct policy *p) {
        struct pmem_decision d;

        if (dev->mode == PMEM_MODE_DEVDAX)
                return pmem_decide_conf(dev, p, NULL, &d) >= 0 ? d.media : BAD_MEDIA_NONE;
        if (dev->mode == PMEM_MODE_SYSTEM_RAM && tally->offline > 0) {
                enum bad_media m = pmem_bad_media(dev, p, NULL);

                return m == BAD_MEDIA_REFUSED || m == BAD_MEDIA_UNKNOWN ? m : BAD_MEDIA_NONE;
        }
        return BAD_MEDIA_NONE;
}

static int read_dax(struct status_machine *m, const struct topology *t, const struct policy *p) {
        int r;

        r = pmem_scan(t->sysfs_root, &m->dax);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                m->dax_error = r;
                return 0;
        }
        m->dax_tallies = calloc(m->dax.n ?: 1, sizeof(*m->dax_tallies));
        if (!m->dax_tallies)
                return -ENOMEM;
        for (size_t i = 0; i < m->dax.n; i++) {
                const struct pmem_device *d = &m->dax.devices[i];

                m->dax_tallies[i].dev = d;
                for (size_t k = 0; k < d->n_ranges; k++)
                        status_tally_range(t, d->ranges[k].start, d->ranges[k].end, &m->dax_tallies[i].tally,
                                           NULL);
                m->dax_tallies[i].held_back = held_back(d, &m->dax_tallies[i].tally, p);
        }
        return 0;
}

/* ---- CXL regions ------------------------------------------------ */

static int read_cxl(struct status_machine *m, const struct topology *t) {
        int r = cxl_regions_scan(t->sysfs_root, &m->cxl);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                m->cxl_error = r;
        r = cxl_memdevs_scan(t->sysfs_root, &m->memdevs);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                m->memdevs_error = r;
        return 0;
}

/* ---- nvdimm regions and namespaces ------------------------------------------ */

static int read_nd(struct status_machine *m, const struct topology *t) {
        int r = nd_regions_scan(t->sysfs_root, &m->nd);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                m->nd_error = r;
        return 0;
}

const struct status_dax *status_region_dax(const struct status_machine *m, const char *region, size_t *ret_n) {
        const struct status_dax *first = NULL;
        size_t n = 0;

        for (size_t i = 0; i < m->dax.n; i++) {
                const char *r = m->dax.devices[i].cxl_region;

                if (!r || !streq(r, region))
                        continue;
                if (!first)
                        first = &m->dax_tallies[i];
                n++;
        }
        *ret_n = n;
        return first;
}

int status_machine_read(const struct topology *t, const struct policy *p, struct status_machine *ret) {
        _cleanup_(status_machine_done) struct status_machine m = { .block_size = t->block_size };
        int r;

        r = read_nodes(&m, t, p);
        /* the device set takes the dax devices in system-ram mode: read them first */
        if (r >= 0)
                r = read_dax(&m, t, p);
        if (r >= 0 && t->block_size > 0)
                r = read_devices(&m, t);
        if (r >= 0)
                r = read_cxl(&m, t);
        if (r >= 0)
                r = read_nd(&m, t);
        if (r < 0)
                return r;
        status_machine_done(ret);
        *ret = m;
        m = (struct status_machine) {};
        return 0;
}
