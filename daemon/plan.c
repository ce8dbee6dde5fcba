/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include "plan.h"
#include "util.h"


/*
 * The planner is a pure function: it reads blocks, topology and policy and
 * allocates the plan, nothing else. No I/O, no clock, and every ordering
 * is by block id or node id so equal inputs give equal plans.
 */

/* Where a zone decision came from; only the default is subject to the ratio guard. */
enum origin {
        ORIGIN_RULE,
        ORIGIN_DEFAULT,
};

struct decision {
        enum zone zone;
        const char *reason;
        enum origin origin;
};

/* Running MOVABLE and KERNEL byte totals, global and per node id. */
struct ratio_totals {
        uint64_t kernel, movable;
        uint64_t *node_kernel, *node_movable;
        size_t n_nodes;                 /* slots: node ids 0..n_nodes-1 */
};

static bool ranges_overlap(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end) {
        return a_start < b_end && b_start < a_end;
}

static uint64_t block_end(const struct mem_block *b, uint64_t block_size) {
        /* An unknown block size still gives a one-byte range at the start. */
        uint64_t size = block_size > 0 ? block_size : 1;

        return b->phys_start > UINT64_MAX - size ? UINT64_MAX : b->phys_start + size;
}

static bool excluded(const struct policy *p, const struct mem_block *b, uint64_t block_size) {
        for (size_t i = 0; i < p->n_exclusions; i++) {
                const struct exclusion *e = &p->exclusions[i];

                switch (e->kind) {
                case EXCLUDE_NODE:
                        if (b->node >= 0 && b->node == e->node)
                                return true;
                        break;
                case EXCLUDE_BLOCK:
                        if (b->id == e->start)
                                return true;
                        break;
                case EXCLUDE_RANGE:
                        if (ranges_overlap(b->phys_start, block_end(b, block_size), e->start, e->end))
                                return true;
                        break;
                case EXCLUDE_DEVICE:
                        if (b->device && e->device && streq(b->device, e->device))
                                return true;
                        break;
                }
        }
        return false;
}

static bool device_rule_matches(const struct device_rule *r, const char *device,
                                const char *namespace_name, const char *namespace_uuid,
                                int region, int node, uint64_t size, bool on_pmem_region) {
        if (r->device && !(device && streq(r->device, device)))
                return false;
        if (r->namespace_name &&
            !(namespace_name && streq(r->namespace_name, namespace_name)) &&
            !(namespace_uuid && streq(r->namespace_name, namespace_uuid)))
                return false;
        if (r->region >= 0 && r->region != region)
                return false;
        if (r->target_node >= 0 && r->target_node != node)
                return false;
        if (r->min_size > 0 && size > 0 && size < r->min_size)
                return false;
        if (r->pmem_only && !on_pmem_region)
                return false;
        return true;
}

const struct device_rule *plan_match_device(const struct policy *p, const char *device,
                                            const char *namespace_name, const char *namespace_uuid,
                                            int region, int node, uint64_t size, bool on_pmem_region) {
        for (size_t i = 0; i < p->n_devices; i++)
                if (device_rule_matches(&p->devices[i], device, namespace_name, namespace_uuid,
                                        region, node, size, on_pmem_region))
                        return &p->devices[i];
        return NULL;
}

/* Reasons naming a rule are formatted once per rule and owned by the plan. */
static int rule_reason(struct plan *plan, size_t slot, const char *fmt_name, const char *name,
                       unsigned line, const char **ret) {
        char *s = plan->reasons[slot];

        if (!s) {
                int r = name ? asprintf(&s, "%s %s", fmt_name, name) : asprintf(&s, "%s %u", fmt_name, line);
                if (r < 0)
                        return -ENOMEM;
                plan->reasons[slot] = s;
        }
        *ret = s;
        return 0;
}

/* The zone by rule precedence, before valid_zones and the ratio guard. */
static int decide(struct plan *plan, const struct policy *p, const struct mem_block *b,
                  uint64_t block_size, struct decision *ret) {
        int r;

        if (excluded(p, b, block_size)) {
                *ret = (struct decision) { ZONE_SKIP, "excluded", ORIGIN_RULE };
                return 0;
        }

        if (b->device) {
                /* Only dax kmem memory has a device; we take its region to be pmem. The
                 * size is a device property the block does not know, so it is 0 here. */
                for (size_t i = 0; i < p->n_devices; i++) {
                        const struct device_rule *d = &p->devices[i];
                        const char *reason;

                        if (d->zone == ZONE_UNSET ||
                            !device_rule_matches(d, b->device, b->namespace_name, b->namespace_uuid,
                                                 b->region, b->node, 0, true))
                                continue;
                        r = rule_reason(plan, i, "device rule", d->name ?: "(unnamed)", d->line, &reason);
                        if (r < 0)
                                return r;
                        *ret = (struct decision) { d->zone, reason, ORIGIN_RULE };
                        return 0;
                }
        }

        for (size_t i = 0; i < p->n_ranges; i++) {
                const struct range_rule *rr = &p->ranges[i];
                const char *reason;

                if (rr->zone == ZONE_UNSET || b->phys_start < rr->start || b->phys_start >= rr->end)
                        continue;
                r = rule_reason(plan, p->n_devices + i, "range rule line", NULL, rr->line, &reason);
                if (r < 0)
                        return r;
                *ret = (struct decision) { rr->zone, reason, ORIGIN_RULE };
                return 0;
        }

        if (b->node >= 0)
                for (size_t i = 0; i < p->n_nodes; i++)
                        if (p->nodes[i].node == b->node && p->nodes[i].zone != ZONE_UNSET) {
                                *ret = (struct decision) { p->nodes[i].zone, "node rule", ORIGIN_RULE };
                                return 0;
                        }

        if (b->device && p->pmem_zone != ZONE_UNSET) {
                *ret = (struct decision) { p->pmem_zone, "pmem default", ORIGIN_RULE };
                return 0;
        }

        *ret = (struct decision) {
                p->default_zone != ZONE_UNSET ? p->default_zone : ZONE_ONLINE, "default", ORIGIN_DEFAULT
        };
        return 0;
}

/* valid_zones of an offline block says what the kernel accepts; 0 = unknown, trust the plan. */
static void apply_valid_zones(const struct mem_block *b, struct decision *d) {
        if (b->valid_zones == 0)
                return;
        if (d->zone == ZONE_MOVABLE && !(b->valid_zones & VALID_MOVABLE))
                *d = (struct decision) { ZONE_ONLINE, "movable not valid", d->origin };
        else if (d->zone == ZONE_KERNEL && !(b->valid_zones & VALID_NORMAL))
                *d = (struct decision) { ZONE_ONLINE, "kernel not valid", d->origin };
}

static void ratio_totals_done(struct ratio_totals *rt) {
        free(rt->node_kernel);
        free(rt->node_movable);
}

static int ratio_totals_init(const struct topology *t, int max_block_node, struct ratio_totals *ret) {
        int max_node = MAX(t->max_node, max_block_node);
        struct ratio_totals rt = {};

        rt.n_nodes = max_node >= 0 ? (size_t) max_node + 1 : 0;
        if (rt.n_nodes > 0) {
                rt.node_kernel = calloc(rt.n_nodes, sizeof(uint64_t));
                rt.node_movable = calloc(rt.n_nodes, sizeof(uint64_t));
                if (!rt.node_kernel || !rt.node_movable) {
                        ratio_totals_done(&rt);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; i < t->n_nodes; i++) {
                const struct topo_node *n = &t->nodes[i];

                rt.kernel += n->kernel_bytes;
                rt.movable += n->movable_bytes;
                if (n->id >= 0 && (size_t) n->id < rt.n_nodes) {
                        rt.node_kernel[n->id] += n->kernel_bytes;
                        rt.node_movable[n->id] += n->movable_bytes;
                }
        }
        *ret = rt;
        return 0;
}

/* movable + size <= ratio% of kernel, in 128 bits so no total can overflow. */
static bool ratio_allows(uint64_t kernel, uint64_t movable, uint64_t size, unsigned ratio) {
        return ((unsigned __int128) movable + size) * 100 <= (unsigned __int128) ratio * kernel;
}

static void ratio_add_movable(struct ratio_totals *rt, int node, uint64_t size) {
        rt->movable += size;
        if (node >= 0 && (size_t) node < rt->n_nodes)
                rt->node_movable[node] += size;
}

/*
 * Mirrors the kernel's auto-movable policy (mm/memory_hotplug.c,
 * auto_movable_can_online_movable): a block may go MOVABLE only if the
 * MOVABLE total including it stays within ratio% of KERNEL, checked
 * globally and, like memory_hotplug.auto_movable_numa_aware, per node.
 * The kernel measures against KERNEL_EARLY (boot memory in kernel zones),
 * so hot-added kernel memory never buys more MOVABLE; likewise a block we
 * plan into a kernel zone does not raise the budget here, and the kernel
 * totals stay those the topology read (all online kernel-zone memory: we
 * cannot tell boot from hot-added memory in sysfs). Blocks are taken in
 * ascending id order so the cut is deterministic.
 */
static bool ratio_guard_allows(const struct policy *p, const struct ratio_totals *rt, int node, uint64_t size) {
        if (!ratio_allows(rt->kernel, rt->movable, size, p->movable_ratio))
                return false;
        if (p->ratio_per_node && node >= 0) {
                uint64_t k = (size_t) node < rt->n_nodes ? rt->node_kernel[node] : 0;
                uint64_t m = (size_t) node < rt->n_nodes ? rt->node_movable[node] : 0;

                if (!ratio_allows(k, m, size, p->movable_ratio))
                        return false;
        }
        return true;
}

static int cmp_block_ptr(const void *a, const void *b) {
        const struct mem_block *x = *(const struct mem_block * const *) a, *y = *(const struct mem_block * const *) b;

        if (x->id != y->id)
                return x->id < y->id ? -1 : 1;
        /* Duplicate ids should not happen; order by address to stay total. */
        return x < y ? -1 : x > y;
}

/* Group slot of a node: real nodes 0..max first, NODE_NONE in the last slot. */
static size_t node_slot(int node, size_t n_slots) {
        return node >= 0 ? (size_t) node : n_slots - 1;
}

static int build_group(const struct topology *t, const struct policy *p, int node,
                       struct plan_item *items, size_t n_items, struct plan_group *g) {
        _cleanup_free_ int *cpus = NULL;
        unsigned want = 0, usable = 0;
        int writer = NODE_NONE, n = 0;

        if (node != NODE_NONE)
                writer = topology_writer_node(t, node, p->banned_cpus);
        if (writer != NODE_NONE)
                usable = topology_usable_cores(t, writer, p->banned_cpus);
        if (usable > 0) {
                want = policy_workers_for_node(p, node, usable);
                /* More workers than blocks would only add idle pinned threads. */
                if (want > n_items)
                        want = (unsigned) n_items;
        }

        cpus = calloc(MAX(want, 1u), sizeof(int));
        if (!cpus)
                return -ENOMEM;
        if (want > 0) {
                n = topology_pick_cpus(t, writer, p->banned_cpus, want, cpus);
                if (n < 0)
                        return n;
                if ((unsigned) n > want)
                        return -EIO;
        }
        if (n == 0) {
                cpus[0] = -1;           /* unpinned */
                n = 1;
        }

        /* Contiguous runs of ascending ids, sizes differing by at most one, so
         * each worker walks adjacent memmap. */
        size_t base = n_items / (size_t) n, extra = n_items % (size_t) n, i = 0;
        for (size_t w = 0; w < (size_t) n; w++)
                for (size_t k = 0; k < base + (w < extra); k++)
                        items[i++].worker = (int) w;

        *g = (struct plan_group) {
                .node = node,
                .writer_node = writer,
                .cpus = TAKE_PTR(cpus),
                .n_cpus = (size_t) n,
                .items = items,
                .n_items = n_items,
        };
        return 0;
}

int plan_build(const struct block_set *blocks, const struct topology *t, const struct policy *p,
               struct plan **ret) {
        _cleanup_plan_ struct plan *plan = NULL;
        _cleanup_free_ struct mem_block **order = NULL;
        _cleanup_free_ struct decision *dec = NULL;
        _cleanup_free_ size_t *counts = NULL, *fill = NULL;
        _cleanup_free_ struct plan_item **slot_items = NULL;
        struct ratio_totals rt = {};
        size_t n = 0, n_slots, n_skip = 0;
        int max_node = -1, r;

        if (!blocks || !t || !p || !ret)
                return -EINVAL;

        plan = calloc(1, sizeof(*plan));
        if (!plan)
                return -ENOMEM;
        plan->n_reasons = p->n_devices + p->n_ranges;
        if (plan->n_reasons > 0) {
                plan->reasons = calloc(plan->n_reasons, sizeof(char *));
                if (!plan->reasons)
                        return -ENOMEM;
        }

        /* Only offline blocks are planned; the rest are not ours to touch. */
        order = calloc(MAX(blocks->n, (size_t) 1), sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < blocks->n; i++)
                if (blocks->blocks[i].state == BLOCK_STATE_OFFLINE) {
                        /* Node ids size the group slots below; the parsers never give more. */
                        if (blocks->blocks[i].node > NODE_ID_MAX)
                                return -ERANGE;
                        order[n++] = &blocks->blocks[i];
                        max_node = MAX(max_node, blocks->blocks[i].node);
                }
        sort_unless_sorted(order, n, sizeof(*order), cmp_block_ptr);

        dec = calloc(MAX(n, (size_t) 1), sizeof(*dec));
        if (!dec)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = decide(plan, p, order[i], t->block_size, &dec[i]);
                if (r < 0)
                        return r;
                apply_valid_zones(order[i], &dec[i]);
        }

        if (p->movable_ratio > 0) {
                r = ratio_totals_init(t, max_node, &rt);
                if (r < 0)
                        return r;
                /* Rule-made MOVABLE blocks go MOVABLE whatever the guard says, so they
                 * take their share of the budget before any default block. */
                for (size_t i = 0; i < n; i++)
                        if (dec[i].zone == ZONE_MOVABLE && dec[i].origin == ORIGIN_RULE)
                                ratio_add_movable(&rt, order[i]->node, t->block_size);
                for (size_t i = 0; i < n; i++) {
                        if (dec[i].zone != ZONE_MOVABLE || dec[i].origin != ORIGIN_DEFAULT)
                                continue;
                        if (ratio_guard_allows(p, &rt, order[i]->node, t->block_size))
                                ratio_add_movable(&rt, order[i]->node, t->block_size);
                        else {
                                dec[i] = (struct decision) { ZONE_KERNEL, "ratio guard", ORIGIN_DEFAULT };
                                apply_valid_zones(order[i], &dec[i]);
                        }
                }
                ratio_totals_done(&rt);
        }

        /* Count per group slot; NODE_NONE (and any negative node) is the last slot. */
        n_slots = (size_t) (max_node + 1) + 1;
        counts = calloc(n_slots, sizeof(size_t));
        if (!counts)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (dec[i].zone == ZONE_SKIP)
                        n_skip++;
                else
                        counts[node_slot(order[i]->node, n_slots)]++;
        }

        if (n_skip > 0) {
                plan->skipped = calloc(n_skip, sizeof(struct plan_item));
                if (!plan->skipped)
                        return -ENOMEM;
        }
        for (size_t s = 0; s < n_slots; s++)
                plan->n_groups += counts[s] > 0;
        if (plan->n_groups > 0) {
                plan->groups = calloc(plan->n_groups, sizeof(struct plan_group));
                if (!plan->groups)
                        return -ENOMEM;
        }

        /* Stable bucketing keeps ascending ids inside each group. */
        slot_items = calloc(n_slots, sizeof(*slot_items));
        fill = calloc(n_slots, sizeof(size_t));
        if (!slot_items || !fill)
                return -ENOMEM;
        for (size_t s = 0; s < n_slots; s++)
                if (counts[s] > 0) {
                        slot_items[s] = calloc(counts[s], sizeof(struct plan_item));
                        if (!slot_items[s]) {
                                r = -ENOMEM;
                                goto finish;
                        }
                }
        for (size_t i = 0; i < n; i++) {
                struct plan_item item = {
                        .block = order[i],
                        .zone = dec[i].zone,
                        .reason = dec[i].reason,
                        .worker = -1,
                };
                size_t s = node_slot(order[i]->node, n_slots);

                if (item.zone == ZONE_SKIP)
                        plan->skipped[plan->n_skipped++] = item;
                else
                        slot_items[s][fill[s]++] = item;
        }

        /* Groups in slot order: ascending node id, NODE_NONE last. */
        r = 0;
        for (size_t s = 0, gi = 0; s < n_slots; s++) {
                if (counts[s] == 0)
                        continue;
                r = build_group(t, p, s == n_slots - 1 ? NODE_NONE : (int) s,
                                slot_items[s], counts[s], &plan->groups[gi]);
                if (r < 0)
                        goto finish;
                slot_items[s] = NULL;   /* owned by the group now */
                gi++;
                plan->n_items += counts[s];
        }

finish:
        for (size_t s = 0; s < n_slots; s++)
                free(slot_items[s]);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(plan);
        return 0;
}

void plan_free(struct plan *plan) {
        if (!plan)
                return;
        for (size_t i = 0; i < plan->n_groups; i++) {
                free(plan->groups[i].cpus);
                free(plan->groups[i].items);
        }
        free(plan->groups);
        free(plan->skipped);
        for (size_t i = 0; i < plan->n_reasons; i++)
                free(plan->reasons[i]);
        free(plan->reasons);
        free(plan);
}

void plan_freep(struct plan **plan) {
        plan_free(*plan);
}

struct print_entry {
        const struct plan_item *item;
        const struct plan_group *group;         /* NULL for skipped */
};

static int cmp_entry(const void *a, const void *b) {
        const struct print_entry *x = a, *y = b;

        return cmp_block_ptr(&x->item->block, &y->item->block);
}

static bool needs_quotes(const char *s) {
        if (!*s)
                return true;
        for (; *s; s++)
                if (*s == ' ' || *s == '\t' || *s == '"' || *s == '\\' || *s == '=' || *s == '\n')
                        return true;
        return false;
}

/* key="value" with " and \ escaped, or key=value when nothing needs quoting. */
static void print_value(FILE *out, const char *key, const char *value, bool force_quotes) {
        if (!force_quotes && !needs_quotes(value)) {
                fprintf(out, " %s=%s", key, value);
                return;
        }
        fprintf(out, " %s=\"", key);
        for (const char *c = value; *c; c++) {
                if (*c == '"' || *c == '\\')
                        fputc('\\', out);
                fputc(*c == '\n' ? ' ' : *c, out);
        }
        fputc('"', out);
}

int plan_print(const struct plan *plan, FILE *out) {
        _cleanup_free_ struct print_entry *e = NULL;
        size_t n = 0, total;

        if (!plan || !out)
                return -EINVAL;

        total = plan->n_skipped;
        for (size_t g = 0; g < plan->n_groups; g++)
                total += plan->groups[g].n_items;
        e = calloc(MAX(total, (size_t) 1), sizeof(*e));
        if (!e)
                return -ENOMEM;
        for (size_t g = 0; g < plan->n_groups; g++)
                for (size_t i = 0; i < plan->groups[g].n_items; i++)
                        e[n++] = (struct print_entry) { &plan->groups[g].items[i], &plan->groups[g] };
        for (size_t i = 0; i < plan->n_skipped; i++)
                e[n++] = (struct print_entry) { &plan->skipped[i], NULL };
        qsort(e, n, sizeof(*e), cmp_entry);

        for (size_t i = 0; i < n; i++) {
                const struct plan_item *it = e[i].item;
                const struct plan_group *g = e[i].group;
                int cpu = -1;

                if (g && it->worker >= 0 && (size_t) it->worker < g->n_cpus)
                        cpu = g->cpus[it->worker];
                fprintf(out, "block=memory%" PRIu64 " node=%d zone=%s cpu=%d",
                        it->block->id, it->block->node >= 0 ? it->block->node : -1,
                        zone_to_string(it->zone), cpu);
                print_value(out, "reason", it->reason ?: "", true);
                if (g)
                        fprintf(out, " writer_node=%d", g->writer_node);
                if (it->block->device)
                        print_value(out, "device", it->block->device, false);
                fputc('\n', out);
        }

        if (fflush(out) != 0 || ferror(out))
                return errno > 0 ? -errno : -EIO;
        return 0;
}
