/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <limits.h>
#include "plan.h"
#include "rules.h"
#include "util.h"


/*
 * The planner is a pure function: it reads blocks, topology and policy and
 * allocates the plan, nothing else. No I/O, no clock, and every ordering
 * is by block id or node id so equal inputs give equal plans.
 *
 * Phases: the offline blocks in id order; each one's zone by the rules
 * (rules.c) and valid_zones; the ratio guard over the defaults; then the
 * per-node groups and their writer CPUs.
 */

/* One block's decision while planning. */
struct decision {
        enum zone zone;
        const char *reason;
        enum rule_origin origin;
        bool ratio_guarded;
        bool guarded_by_device;
        bool fell_back;
        bool bad_media;
};

/* Running MOVABLE and KERNEL byte totals, global and per node id. */
struct ratio_totals {
        uint64_t kernel, movable;
        uint64_t *node_kernel, *node_movable;
        size_t n_nodes;                 /* slots: node ids 0..n_nodes-1 */
};

/* What the rules may know about a block. */
static struct memory_identity block_identity(const struct mem_block *b, uint64_t block_size) {
        uint64_t size = block_size > 0 ? block_size : 1;

        return (struct memory_identity) {
                .start = b->phys_start,
                /* An unknown block size still gives a one-byte range at the start. */
                .end = b->phys_start > UINT64_MAX - size ? UINT64_MAX : b->phys_start + size,
                .block_id = b->id,
                .node = b->node,
                .node_guessed = b->node_guessed,
                .dax_device = b->device,
                .namespace_name = b->namespace_name,
                .namespace_uuid = b->namespace_uuid,
                .region = b->region,
                /* Only dax kmem memory has a device; we take its region to be pmem unless it is CXL. */
                .on_pmem_region = b->device != NULL && !b->cxl_region,
                .cxl_region = b->cxl_region,
                .cxl_memdevs = b->cxl_memdevs,
                .cxl_memdevs_unknown = b->cxl_memdevs_unknown,
                .dax_unknown = b->attribution_unknown,
                .bad_sectors = b->bad_sectors,
                .badblocks_unknown = b->badblocks_unknown,
        };
}

/* Reasons naming a rule are formatted once per text and owned by the plan. */
static int intern_reason(struct plan *plan, const char *text, const char **ret) {
        char *s;

        for (size_t i = 0; i < plan->n_reasons; i++)
                if (streq(plan->reasons[i], text)) {
                        *ret = plan->reasons[i];
                        return 0;
                }
        if (GROW(plan->reasons, plan->reasons_allocated, plan->n_reasons + 1) < 0)
                return -ENOMEM;
        s = strdup(text);
        if (!s)
                return -ENOMEM;
        plan->reasons[plan->n_reasons++] = s;
        *ret = s;
        return 0;
}

/* The zone by rule precedence, before valid_zones and the ratio guard. */
static int decide(struct plan *plan, const struct policy *p, const struct mem_block *b, uint64_t block_size,
                  struct decision *ret) {
        struct memory_identity id = block_identity(b, block_size);
        struct rule_decision rd;
        const char *reason;
        char buf[320];
        int r;

        r = rules_decide(p, &id, &rd);
        if (r < 0)
                return r;
        reason = rules_reason(&rd, buf, sizeof(buf));
        if (reason == buf) {
                r = intern_reason(plan, buf, &reason);
                if (r < 0)
                        return r;
        }
        *ret = (struct decision) { .zone = rd.zone, .reason = reason, .origin = rd.origin, .bad_media = rd.bad_media };
        return 0;
}

/*
 * valid_zones of an offline block says what the kernel accepts; 0 =
 * unknown, trust the plan. A default falls back to the kernel's choice
 * (and is counted, for a notice); an admin's rule is not changed behind
 * their back: the block stays offline, reported, and is tried again.
 */
static void apply_valid_zones(const struct mem_block *b, struct decision *d) {
        bool movable_invalid = d->zone == ZONE_MOVABLE && !(b->valid_zones & VALID_MOVABLE);
        bool kernel_invalid = d->zone == ZONE_KERNEL && !(b->valid_zones & VALID_NORMAL);

        if (b->valid_zones == 0 || (!movable_invalid && !kernel_invalid))
                return;
        if (rule_is_explicit(d->origin))
                *d = (struct decision) {
                        .zone = ZONE_SKIP,
                        .reason = movable_invalid ? "undecided: a rule asks online_movable, which the kernel "
                                                    "does not offer for this block (valid_zones)"
                                                  : "undecided: a rule asks online_kernel, which the kernel "
                                                    "does not offer for this block (valid_zones)",
                        .origin = RULE_UNDECIDED,
                };
        else
                *d = (struct decision) {
                        .zone = ZONE_ONLINE,
                        .reason = movable_invalid ? "movable not valid" : "kernel not valid",
                        .origin = d->origin,
                        .ratio_guarded = d->ratio_guarded,
                        .guarded_by_device = d->guarded_by_device,
                        .fell_back = true,
                };
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
                /* The budget's base is boot kernel memory, as the kernel's KERNEL_EARLY. */
                uint64_t k = topology_node_kernel_early(t, n);

                rt.kernel += k;
                rt.movable += n->movable_bytes;
                if (n->id >= 0 && (size_t) n->id < rt.n_nodes) {
                        rt.node_kernel[n->id] += k;
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

/* Why the guard refused: which budget, and its numbers. */
struct ratio_refusal {
        int node;                       /* NODE_NONE: the system-wide budget */
        uint64_t movable_after;         /* movable memory had it been allowed */
        uint64_t kernel;                /* the boot kernel memory it is measured against */
};

/*
 * Mirrors the kernel's auto-movable policy (mm/memory_hotplug.c,
 * auto_movable_can_online_movable): memory may go MOVABLE only if the
 * MOVABLE total including it stays within ratio% of KERNEL_EARLY (boot
 * kernel memory: hot-added kernel memory never buys more MOVABLE),
 * checked globally and, like memory_hotplug.auto_movable_numa_aware, per
 * node. extra_kernel is kernel memory that counts for this memory only
 * (a dynamic group's own, as the kernel has it). Returns true, or false
 * with *ret_refusal saying which budget it would break.
 */
static bool ratio_guard_allows(const struct policy *p, const struct ratio_totals *rt, int node, uint64_t size,
                               uint64_t extra_kernel, struct ratio_refusal *ret_refusal) {
        if (!ratio_allows(rt->kernel + extra_kernel, rt->movable, size, p->movable_ratio)) {
                *ret_refusal = (struct ratio_refusal) { NODE_NONE, rt->movable + size, rt->kernel + extra_kernel };
                return false;
        }
        if (p->ratio_per_node && node >= 0) {
                uint64_t k = ((size_t) node < rt->n_nodes ? rt->node_kernel[node] : 0) + extra_kernel;
                uint64_t m = (size_t) node < rt->n_nodes ? rt->node_movable[node] : 0;

                if (!ratio_allows(k, m, size, p->movable_ratio)) {
                        *ret_refusal = (struct ratio_refusal) { node, m + size, k };
                        return false;
                }
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

int plan_writer_cpus(const struct topology *t, const struct policy *p, int node, size_t n_blocks, unsigned max,
                     int *ret_cpus, int *ret_writer) {
        unsigned want = 0, usable = 0;
        int writer = NODE_NONE, n = 0;

        if (node != NODE_NONE)
                writer = topology_writer_node(t, node, p->banned_cpus);
        if (writer != NODE_NONE)
                usable = topology_usable_cores(t, writer, p->banned_cpus);
        if (usable > 0) {
                want = policy_workers_for_node(p, node, usable);
                /* More workers than blocks would only add idle pinned threads. */
                if (want > n_blocks)
                        want = (unsigned) n_blocks;
                want = MIN(want, max);
        }
        if (want > 0) {
                n = topology_pick_cpus(t, writer, p->banned_cpus, want, ret_cpus);
                if (n < 0)
                        return n;
                if ((unsigned) n > want)
                        return -EIO;
        }
        *ret_writer = writer;
        return n;
}

static int build_group(const struct topology *t, const struct policy *p, int node,
                       struct plan_item *items, size_t n_items, struct plan_group *g) {
        unsigned max = (unsigned) MIN(n_items, (size_t) UINT_MAX);
        _cleanup_free_ int *cpus = NULL;
        int writer, n;

        /* Workers never outnumber the node's usable cores, nor the blocks. */
        max = MIN(max, t->n_cpus > 0 ? t->n_cpus : 1U);
        cpus = calloc(MAX(max, 1u), sizeof(int));
        if (!cpus)
                return -ENOMEM;
        n = plan_writer_cpus(t, p, node, n_items, max, cpus, &writer);
        if (n < 0)
                return n;
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

/* Phase 1: only offline blocks are planned, in id order; the rest are not ours to touch. */
static int offline_in_order(const struct block_set *blocks, struct mem_block ***ret, size_t *ret_n,
                            int *ret_max_node) {
        _cleanup_free_ struct mem_block **order = NULL;
        size_t n = 0;
        int max_node = -1;

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
        *ret = TAKE_PTR(order);
        *ret_n = n;
        *ret_max_node = max_node;
        return 0;
}

/* Phase 2: each block's zone by the rules, as valid_zones allows. */
static int decide_all(struct plan *plan, const struct topology *t, const struct policy *p,
                      struct mem_block *const *order, size_t n, struct decision **ret) {
        _cleanup_free_ struct decision *dec = calloc(MAX(n, (size_t) 1), sizeof(*dec));
        int r;

        if (!dec)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = decide(plan, p, order[i], t->block_size, &dec[i]);
                if (r < 0)
                        return r;
                apply_valid_zones(order[i], &dec[i]);
        }
        *ret = TAKE_PTR(dec);
        return 0;
}

/* A device's memory online now, by zone, over its whole span, and the node of its online blocks. */
struct device_online {
        uint64_t kernel, movable;
        int node;
};

static struct device_online device_online(const struct topology *t, const struct memdev *d) {
        struct device_online o = { .node = NODE_NONE };

        for (uint64_t id = d->start / t->block_size; id < d->end / t->block_size; id++) {
                const struct topo_block *b = topology_block(t, id);

                if (!b || b->state != BLOCK_STATE_ONLINE)
                        continue;
                o.node = b->node;
                /* A zone not read yet is taken as kernel: then the device could not be removed. */
                if (b->zone == TOPO_ZONE_MOVABLE)
                        o.movable += t->block_size;
                else
                        o.kernel += t->block_size;
        }
        return o;
}

/* The guard's verdict on a static device (an ACPI DIMM, a dax device), once per plan. */
struct device_verdict {
        const struct memdev *device;
        bool movable;
        const char *reason;             /* for the kernel verdict: owned by the plan */
};

struct guard {
        struct plan *plan;
        const struct topology *t;
        const struct policy *p;
        struct ratio_totals rt;
        struct device_verdict *verdicts;
        size_t n_verdicts, verdicts_allocated;
};

static double gib(uint64_t bytes) {
        return (double) bytes / (double) (1ULL << 30);
}

/*
 * All movable or all kernel, like the kernel's static memory groups:
 * kernel if any of it is online in a kernel zone already, movable if any
 * of it is online movable (decided before), else by the guard for all of
 * it that is not online yet.
 */
static int device_verdict(struct guard *g, const struct memdev *d, int node, struct device_verdict *ret) {
        struct device_online o = device_online(g->t, d);
        uint64_t rest = d->end - d->start - MIN(d->end - d->start, o.kernel + o.movable);
        struct ratio_refusal why;
        char text[320], where[32];
        int r;

        *ret = (struct device_verdict) { .device = d, .movable = true };
        if (o.kernel > 0) {
                snprintf(text, sizeof(text),
                         "ratio guard: %s %s has memory in a kernel zone already, so all of it goes there",
                         memdev_kind_to_string(d->kind), d->name);
        } else if (o.movable > 0) {
                return 0;               /* decided before: its rest is counted already (guard_ratio()) */
        } else if (ratio_guard_allows(g->p, &g->rt, node, rest, 0, &why)) {
                ratio_add_movable(&g->rt, node, rest);
                return 0;
        } else {
                if (why.node == NODE_NONE)
                        snprintf(where, sizeof(where), "system-wide");
                else
                        snprintf(where, sizeof(where), "on node %d", why.node);
                snprintf(text, sizeof(text),
                         "ratio guard: %s %s (%.1f GiB) -> online_kernel: movable would be %.1f GiB > %u%% of "
                         "%.1f GiB boot kernel memory %s", memdev_kind_to_string(d->kind), d->name, gib(rest),
                         gib(why.movable_after), g->p->movable_ratio, gib(why.kernel), where);
        }
        ret->movable = false;
        r = intern_reason(g->plan, text, &ret->reason);
        return r < 0 ? r : 0;
}

static int device_verdict_of(struct guard *g, const struct memdev *d, int node, const struct device_verdict **ret) {
        struct device_verdict v;
        int r;

        for (size_t i = 0; i < g->n_verdicts; i++)
                if (g->verdicts[i].device == d) {
                        *ret = &g->verdicts[i];
                        return 0;
                }
        r = device_verdict(g, d, node, &v);
        if (r < 0)
                return r;
        if (GROW(g->verdicts, g->verdicts_allocated, g->n_verdicts + 1) < 0)
                return -ENOMEM;
        g->verdicts[g->n_verdicts] = v;
        *ret = &g->verdicts[g->n_verdicts++];
        return 0;
}

/* One default movable block: its device's verdict, or the guard for the block alone. */
static int guard_block(struct guard *g, const struct mem_block *b, struct decision *d) {
        const struct memdev *dev = topology_block_device(g->t, b->id);
        const struct device_verdict *v;
        struct ratio_refusal why;
        uint64_t own_kernel = 0;
        int r;

        if (dev && !dev->dynamic) {
                r = device_verdict_of(g, dev, b->node, &v);
                if (r < 0)
                        return r;
                if (!v->movable)
                        *d = (struct decision) { .zone = ZONE_KERNEL, .reason = v->reason, .origin = RULE_DEFAULT,
                                                 .ratio_guarded = true, .guarded_by_device = true };
                return 0;
        }
        /* A dynamic group (virtio-mem) is decided per block; its own kernel memory counts for it. */
        if (dev)
                own_kernel = device_online(g->t, dev).kernel;
        if (ratio_guard_allows(g->p, &g->rt, b->node, g->t->block_size, own_kernel, &why))
                ratio_add_movable(&g->rt, b->node, g->t->block_size);
        else
                *d = (struct decision) { .zone = ZONE_KERNEL, .reason = "ratio guard", .origin = RULE_DEFAULT,
                                         .ratio_guarded = true };
        return 0;
}

/*
 * Phase 3: the MOVABLE:KERNEL ratio guard turns default movable memory
 * into kernel memory, a whole static device at a time. Blocks are taken
 * in ascending id order, so the cut is the same whatever the batches.
 */
static int guard_ratio(struct plan *plan, const struct topology *t, const struct policy *p,
                       struct mem_block *const *order, size_t n, int max_node, struct decision *dec) {
        struct guard g = { .plan = plan, .t = t, .p = p };
        int r;

        if (p->movable_ratio == 0)
                return 0;
        r = ratio_totals_init(t, max_node, &g.rt);
        if (r < 0)
                return r;
        /*
         * A static device already partly online movable will be all
         * movable: what of it is not online yet is spoken for, whether or
         * not this batch holds it. Then no cut of the events changes which
         * device fits the budget.
         */
        for (size_t i = 0; t->devices_known && i < t->devices.n; i++) {
                const struct memdev *d = &t->devices.devs[i];
                struct device_online o = d->dynamic ? (struct device_online) {} : device_online(t, d);

                if (o.movable > 0 && o.kernel == 0)
                        ratio_add_movable(&g.rt, o.node, d->end - d->start - MIN(d->end - d->start, o.movable));
        }
        /* Rule-made MOVABLE blocks go MOVABLE whatever the guard says, so they
         * take their share of the budget before any default block. */
        for (size_t i = 0; i < n; i++)
                if (dec[i].zone == ZONE_MOVABLE && dec[i].origin != RULE_DEFAULT)
                        ratio_add_movable(&g.rt, order[i]->node, t->block_size);
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (dec[i].zone != ZONE_MOVABLE || dec[i].origin != RULE_DEFAULT)
                        continue;
                r = guard_block(&g, order[i], &dec[i]);
                if (r >= 0 && dec[i].ratio_guarded)
                        apply_valid_zones(order[i], &dec[i]);
        }
        free(g.verdicts);
        ratio_totals_done(&g.rt);
        return r < 0 ? r : 0;
}

static struct plan_item plan_item_of(struct mem_block *b, const struct decision *d) {
        return (struct plan_item) {
                .block = b,
                .zone = d->zone,
                .reason = d->reason,
                .worker = -1,
                .by_rule = rule_is_explicit(d->origin),
                .ratio_guarded = d->ratio_guarded,
                .guarded_by_device = d->guarded_by_device,
                .undecided = d->origin == RULE_UNDECIDED,
                .bad_media = d->bad_media,
        };
}

/*
 * Phase 4: skipped items aside, the rest in per-node groups with their
 * writer CPUs. Group slots: node ids 0..max_node, then NODE_NONE.
 */
static int group_items(struct plan *plan, const struct topology *t, const struct policy *p,
                       struct mem_block *const *order, size_t n, int max_node, const struct decision *dec) {
        size_t n_slots = (size_t) (max_node + 1) + 1, n_skip = 0;
        _cleanup_free_ size_t *counts = calloc(n_slots, sizeof(size_t)), *fill = calloc(n_slots, sizeof(size_t));
        _cleanup_free_ struct plan_item **slot_items = calloc(n_slots, sizeof(*slot_items));
        int r = 0;

        if (!counts || !fill || !slot_items)
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
        for (size_t s = 0; s < n_slots; s++)
                if (counts[s] > 0) {
                        slot_items[s] = calloc(counts[s], sizeof(struct plan_item));
                        if (!slot_items[s]) {
                                r = -ENOMEM;
                                goto finish;
                        }
                }

        /* Stable bucketing keeps ascending ids inside each group. */
        for (size_t i = 0; i < n; i++) {
                struct plan_item item = plan_item_of(order[i], &dec[i]);
                size_t s = node_slot(order[i]->node, n_slots);

                plan->n_undecided += item.undecided;
                plan->n_ratio_guarded += item.ratio_guarded;
                plan->n_fell_back += dec[i].fell_back;
                if (item.zone == ZONE_SKIP)
                        plan->skipped[plan->n_skipped++] = item;
                else
                        slot_items[s][fill[s]++] = item;
        }

        /* Groups in slot order: ascending node id, NODE_NONE last. */
        for (size_t s = 0, gi = 0; s < n_slots; s++) {
                if (counts[s] == 0)
                        continue;
                r = build_group(t, p, s == n_slots - 1 ? NODE_NONE : (int) s, slot_items[s], counts[s],
                                &plan->groups[gi]);
                if (r < 0)
                        goto finish;
                slot_items[s] = NULL;   /* owned by the group now */
                gi++;
                plan->n_items += counts[s];
        }
finish:
        for (size_t s = 0; s < n_slots; s++)
                free(slot_items[s]);
        return r;
}

int plan_build(const struct block_set *blocks, const struct topology *t, const struct policy *p,
               struct plan **ret) {
        _cleanup_plan_ struct plan *plan = NULL;
        _cleanup_free_ struct mem_block **order = NULL;
        _cleanup_free_ struct decision *dec = NULL;
        size_t n;
        int max_node, r;

        if (!blocks || !t || !p || !ret)
                return -EINVAL;
        plan = calloc(1, sizeof(*plan));
        if (!plan)
                return -ENOMEM;

        r = offline_in_order(blocks, &order, &n, &max_node);
        if (r >= 0)
                r = decide_all(plan, t, p, order, n, &dec);
        if (r >= 0)
                r = guard_ratio(plan, t, p, order, n, max_node, dec);
        if (r >= 0)
                r = group_items(plan, t, p, order, n, max_node, dec);
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
                if (it->block->cxl_region)
                        print_value(out, "cxl_region", it->block->cxl_region, false);
                if (it->block->cxl_memdevs)
                        print_value(out, "cxl_memdev", it->block->cxl_memdevs, false);
                fputc('\n', out);
        }

        if (fflush(out) != 0 || ferror(out))
                return errno > 0 ? -errno : -EIO;
        return 0;
}
