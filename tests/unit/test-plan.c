/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "cpuset.h"
#include "blocks-scan.h"
#include "fake-tree.h"
#include "plan.h"
#include "rules.h"
#include "util.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define BS (128 * MiB)

/* ---- in-memory machines ----------------------------------------------- */

/*
 * A topology with nodes 0..n_nodes-1 and room for n_cpus CPUs, none
 * present. Distances default to 10 local, 20 remote.
 */
static struct topology *topo_new(int n_nodes, unsigned n_cpus) {
        struct topology *t = calloc(1, sizeof(*t));

        assert_non_null(t);
        t->block_size = BS;
        t->n_nodes = (size_t) n_nodes;
        t->max_node = n_nodes - 1;
        t->nodes = calloc((size_t) n_nodes, sizeof(struct topo_node));
        assert_non_null(t->nodes);
        for (int i = 0; i < n_nodes; i++) {
                struct topo_node *n = &t->nodes[i];

                n->id = i;
                n->cpus = cpuset_new();
                assert_non_null(n->cpus);
                n->distance = calloc((size_t) n_nodes, sizeof(unsigned));
                assert_non_null(n->distance);
                for (int j = 0; j < n_nodes; j++)
                        n->distance[j] = i == j ? 10 : 20;
        }
        t->n_cpus = n_cpus;
        t->cpus = calloc(n_cpus ? n_cpus : 1, sizeof(struct topo_cpu));
        assert_non_null(t->cpus);
        for (unsigned c = 0; c < n_cpus; c++)
                t->cpus[c] = (struct topo_cpu) { .node = NODE_NONE, .core = (int) c };
        t->isolated = cpuset_new();
        assert_non_null(t->isolated);
        return t;
}

static void topo_cpu(struct topology *t, unsigned cpu, int node, int core) {
        t->cpus[cpu] = (struct topo_cpu) { .present = true, .online = true, .node = node, .core = core };
        numa_bitmask_setbit(t->nodes[node].cpus, cpu);
}

static void topo_distance(struct topology *t, int a, int b, unsigned d) {
        t->nodes[a].distance[b] = d;
        t->nodes[b].distance[a] = d;
}

/*
 * Like fake_standard_machine(): node0 CPUs 0-3 (cores {0,2},{1,3}), node1
 * CPUs 4-7 (cores {4,6},{5,7}), node2 CPU-less; distances 0-1 20, 0-2 30,
 * 1-2 17. 1 GiB online Normal on node0 and node1.
 */
static struct topology *standard_machine(void) {
        struct topology *t = topo_new(3, 8);

        for (unsigned c = 0; c < 8; c++)
                topo_cpu(t, c, c < 4 ? 0 : 1, (int) (c < 4 ? c % 2 : 4 + c % 2));
        topo_distance(t, 0, 1, 20);
        topo_distance(t, 0, 2, 30);
        topo_distance(t, 1, 2, 17);
        t->nodes[0].kernel_bytes = 1 * GiB;
        t->nodes[1].kernel_bytes = 1 * GiB;
        return t;
}

static struct policy *policy_plain(void) {
        struct policy *p = NULL;

        assert_int_equal(policy_new_default(&p), 0);
        /* Most tests look at precedence; the ratio guard has its own tests. */
        p->movable_ratio = 0;
        return p;
}

static struct mem_block *add_block(struct block_set *s, uint64_t id, int node, enum block_state state,
                                   unsigned valid_zones) {
        struct mem_block *b;

        assert_int_equal(GROW(s->blocks, s->allocated, s->n + 1), 0);
        b = &s->blocks[s->n++];
        *b = (struct mem_block) {
                .id = id,
                .phys_start = id * BS,
                .state = state,
                .node = node,
                .valid_zones = valid_zones,
                .region = -1,
        };
        return b;
}

static void add_blocks(struct block_set *s, uint64_t first, uint64_t n, int node) {
        for (uint64_t i = 0; i < n; i++)
                add_block(s, first + i, node, BLOCK_STATE_OFFLINE, 0);
}

static void set_device(struct mem_block *b, const char *dev, const char *ns, const char *uuid, int region) {
        b->device = strdup(dev);
        assert_non_null(b->device);
        if (ns)
                assert_non_null(b->namespace_name = strdup(ns));
        if (uuid)
                assert_non_null(b->namespace_uuid = strdup(uuid));
        b->region = region;
}

static struct device_rule *add_device_rule(struct policy *p, const char *name, enum zone zone, unsigned line) {
        struct device_rule *d;

        p->devices = realloc(p->devices, (p->n_devices + 1) * sizeof(*d));
        assert_non_null(p->devices);
        d = &p->devices[p->n_devices++];
        *d = (struct device_rule) {
                .name = strdup(name),
                .region = -1,
                .target_node = -1,
                .zone = zone,
                .convert = -1,
                .line = line,
        };
        assert_non_null(d->name);
        return d;
}

static void add_range_rule(struct policy *p, uint64_t start, uint64_t end, enum zone zone, unsigned line) {
        p->ranges = realloc(p->ranges, (p->n_ranges + 1) * sizeof(*p->ranges));
        assert_non_null(p->ranges);
        p->ranges[p->n_ranges++] = (struct range_rule) { .start = start, .end = end, .zone = zone, .line = line };
}

static struct node_rule *add_node_rule(struct policy *p, int node, enum zone zone, unsigned line) {
        p->nodes = realloc(p->nodes, (p->n_nodes + 1) * sizeof(*p->nodes));
        assert_non_null(p->nodes);
        p->nodes[p->n_nodes] = (struct node_rule) { .node = node, .zone = zone, .line = line };
        return &p->nodes[p->n_nodes++];
}

static struct exclusion *add_exclusion(struct policy *p, int kind) {
        p->exclusions = realloc(p->exclusions, (p->n_exclusions + 1) * sizeof(*p->exclusions));
        assert_non_null(p->exclusions);
        p->exclusions[p->n_exclusions] = (struct exclusion) { .kind = kind, .node = -1 };
        return &p->exclusions[p->n_exclusions++];
}

/* ---- looking at a plan ---------------------------------------------------- */

struct found {
        const struct plan_item *item;
        const struct plan_group *group;         /* NULL when skipped */
};

static struct found find(const struct plan *plan, uint64_t id) {
        for (size_t g = 0; g < plan->n_groups; g++)
                for (size_t i = 0; i < plan->groups[g].n_items; i++)
                        if (plan->groups[g].items[i].block->id == id)
                                return (struct found) { &plan->groups[g].items[i], &plan->groups[g] };
        for (size_t i = 0; i < plan->n_skipped; i++)
                if (plan->skipped[i].block->id == id)
                        return (struct found) { &plan->skipped[i], NULL };
        return (struct found) {};
}

static void expect(const struct plan *plan, uint64_t id, enum zone zone, const char *reason) {
        struct found f = find(plan, id);

        if (!f.item)
                fail_msg("memory%" PRIu64 " is not in the plan", id);
        assert_non_null(f.item);
        assert_string_equal(zone_to_string(f.item->zone), zone_to_string(zone));
        assert_string_equal(f.item->reason, reason);
        assert_true((f.group == NULL) == (zone == ZONE_SKIP));
}

/* The group of a node; the test fails (and never returns NULL) if there is none. */
static const struct plan_group *group_of(const struct plan *plan, int node) {
        for (size_t g = 0; g < plan->n_groups; g++)
                if (plan->groups[g].node == node)
                        return &plan->groups[g];
        fail_msg("no group for node %d", node);
        abort();
}

static char *print_plan(const struct plan *plan) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(f);
        assert_int_equal(plan_print(plan, f), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static struct plan *build(const struct block_set *s, const struct topology *t, const struct policy *p) {
        struct plan *plan = NULL;

        assert_int_equal(plan_build(s, t, p, &plan), 0);
        assert_non_null(plan);
        return plan;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_empty(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        _cleanup_free_ char *out = NULL;
        struct block_set s = {};

        plan = build(&s, t, p);
        assert_int_equal(plan->n_groups, 0);
        assert_int_equal(plan->n_skipped, 0);
        assert_int_equal(plan->n_items, 0);
        out = print_plan(plan);
        assert_string_equal(out, "");
}

static void test_bad_args(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        struct plan *plan = (struct plan *) 0x1;
        struct block_set s = {};

        assert_int_equal(plan_build(&s, t, NULL, &plan), -EINVAL);
        assert_int_equal(plan_build(NULL, t, p, &plan), -EINVAL);
        assert_ptr_equal(plan, (struct plan *) 0x1);
}

static void test_only_offline_planned(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};

        add_block(&s, 20, 0, BLOCK_STATE_ONLINE, 0);
        add_block(&s, 21, 0, BLOCK_STATE_OFFLINE, 0);
        add_block(&s, 22, 0, BLOCK_STATE_GOING_OFFLINE, 0);
        add_block(&s, 23, 0, BLOCK_STATE_UNKNOWN, 0);
        /* An excluded online block is not ours either: not even listed as skipped. */
        add_exclusion(p, EXCLUDE_BLOCK)->start = 20;

        plan = build(&s, t, p);
        assert_int_equal(plan->n_items, 1);
        assert_int_equal(plan->n_skipped, 0);
        expect(plan, 21, ZONE_MOVABLE, "default");
        assert_null(find(plan, 20).item);
        assert_null(find(plan, 22).item);
        assert_null(find(plan, 23).item);
        block_set_clear(&s);
}

static void test_precedence(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};
        struct device_rule *d;

        /* 100: everything matches; the exclusion wins. */
        set_device(add_block(&s, 100, 2, BLOCK_STATE_OFFLINE, 0), "dax0.0", "namespace0.0", NULL, 0);
        /* 101: device, range and node rules match; the device rule wins. */
        set_device(add_block(&s, 101, 2, BLOCK_STATE_OFFLINE, 0), "dax0.0", "namespace0.0", NULL, 0);
        /* 102: other dax device, range and node rules match; the range rule wins. */
        set_device(add_block(&s, 102, 2, BLOCK_STATE_OFFLINE, 0), "dax1.0", NULL, NULL, 1);
        /* 110: node rule only. */
        add_block(&s, 110, 2, BLOCK_STATE_OFFLINE, 0);
        /* 120: dax memory on a node without rules: pmem default. */
        set_device(add_block(&s, 120, 1, BLOCK_STATE_OFFLINE, 0), "dax3.0", NULL, NULL, 3);
        /* 121: plain memory: default. */
        add_block(&s, 121, 1, BLOCK_STATE_OFFLINE, 0);

        add_exclusion(p, EXCLUDE_BLOCK)->start = 100;
        d = add_device_rule(p, "fast", ZONE_KERNEL, 40);
        d->device = strdup("dax0.0");
        add_range_rule(p, 100 * BS, 103 * BS, ZONE_SKIP, 30);
        add_node_rule(p, 2, ZONE_ONLINE, 20);
        p->pmem_zone = ZONE_KERNEL;
        p->default_zone = ZONE_MOVABLE;

        plan = build(&s, t, p);
        expect(plan, 100, ZONE_SKIP, "excluded");
        expect(plan, 101, ZONE_KERNEL, "device rule fast");
        expect(plan, 102, ZONE_SKIP, "range rule line 30");
        expect(plan, 110, ZONE_ONLINE, "node rule");
        expect(plan, 120, ZONE_KERNEL, "pmem default");
        expect(plan, 121, ZONE_MOVABLE, "default");
        assert_int_equal(plan->n_items, 4);
        assert_int_equal(plan->n_skipped, 2);
        /* Skipped blocks are in no group. */
        assert_null(find(plan, 100).group);
        assert_null(find(plan, 102).group);
        block_set_clear(&s);
}

static void test_unset_rules_fall_through(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};

        set_device(add_block(&s, 100, 2, BLOCK_STATE_OFFLINE, 0), "dax0.0", NULL, NULL, 0);
        add_block(&s, 101, 2, BLOCK_STATE_OFFLINE, 0);
        /* A convert-only device rule and a workers-only node rule have no zone. */
        add_device_rule(p, "convert-only", ZONE_UNSET, 10)->convert = 1;
        add_device_rule(p, "second", ZONE_SKIP, 12);
        add_node_rule(p, 2, ZONE_UNSET, 14)->has_workers = true;

        plan = build(&s, t, p);
        expect(plan, 100, ZONE_SKIP, "device rule second");
        expect(plan, 101, ZONE_MOVABLE, "default");
        block_set_clear(&s);
}

static void test_exclusion_kinds(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};
        struct exclusion *e;

        add_blocks(&s, 100, 4, 0);      /* 100..103 on node0 */
        add_blocks(&s, 200, 2, 1);      /* 200, 201 on node1 */
        set_device(add_block(&s, 300, 2, BLOCK_STATE_OFFLINE, 0), "dax1.0", NULL, NULL, 0);
        set_device(add_block(&s, 301, 2, BLOCK_STATE_OFFLINE, 0), "dax1.1", NULL, NULL, 0);
        add_block(&s, 400, NODE_NONE, BLOCK_STATE_OFFLINE, 0);

        add_exclusion(p, EXCLUDE_NODE)->node = 1;
        add_exclusion(p, EXCLUDE_BLOCK)->start = 100;
        /* One byte inside block 102 and the first byte of 103: overlap is enough. */
        e = add_exclusion(p, EXCLUDE_RANGE);
        e->start = 102 * BS + BS - 1;
        e->end = 103 * BS + 1;
        e = add_exclusion(p, EXCLUDE_DEVICE);
        e->device = strdup("dax1.0");

        plan = build(&s, t, p);
        expect(plan, 100, ZONE_SKIP, "excluded");
        expect(plan, 101, ZONE_MOVABLE, "default");
        expect(plan, 102, ZONE_SKIP, "excluded");
        expect(plan, 103, ZONE_SKIP, "excluded");
        expect(plan, 200, ZONE_SKIP, "excluded");
        expect(plan, 201, ZONE_SKIP, "excluded");
        expect(plan, 300, ZONE_SKIP, "excluded");
        expect(plan, 301, ZONE_MOVABLE, "pmem default");
        /* Fail safe: whether a node exclusion applies to a block of unknown node cannot be told. */
        expect(plan, 400, ZONE_SKIP, "undecided: node not known (no node link yet) and node rules apply");
        assert_int_equal(plan->n_skipped, 7);
        assert_int_equal(plan->n_undecided, 1);
        assert_int_equal(plan->n_items, 2);
        /* Skipped items are in ascending id order too. */
        for (size_t i = 1; i < plan->n_skipped; i++)
                assert_true(plan->skipped[i - 1].block->id < plan->skipped[i].block->id);
        block_set_clear(&s);
}

static void test_range_rule_block_start(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};

        add_blocks(&s, 10, 4, 0);       /* 10..13 */
        /* Starts in the middle of block 10, ends at the end of block 12. */
        add_range_rule(p, 10 * BS + 64 * MiB, 13 * BS, ZONE_KERNEL, 7);
        add_range_rule(p, 13 * BS, 14 * BS, ZONE_ONLINE, 9);

        plan = build(&s, t, p);
        expect(plan, 10, ZONE_MOVABLE, "default");
        expect(plan, 11, ZONE_KERNEL, "range rule line 7");
        expect(plan, 12, ZONE_KERNEL, "range rule line 7");
        expect(plan, 13, ZONE_ONLINE, "range rule line 9");
        /* The formatted reason is shared by the blocks of one rule. */
        assert_ptr_equal(find(plan, 11).item->reason, find(plan, 12).item->reason);
        block_set_clear(&s);
}

/* rules_match_device() for a dax device with these attributes. */
static const struct device_rule *match(const struct policy *p, const char *device, const char *ns_name,
                                       const char *ns_uuid, int region, int node, uint64_t size, bool on_pmem) {
        struct memory_identity id = {
                .dax_device = device, .namespace_name = ns_name, .namespace_uuid = ns_uuid, .region = region,
                .node = node, .dax_size = size, .on_pmem_region = on_pmem, .block_id = UINT64_MAX,
                .whole_device = true,
        };

        return rules_match_device(p, &id);
}

static void test_match_device(void **state) {
        _cleanup_policy_ struct policy *p = policy_plain();
        struct device_rule *any, *d;

        assert_null(match(p, "dax0.0", NULL, NULL, 0, 0, 0, true));

        d = add_device_rule(p, "by-name", ZONE_KERNEL, 1);
        d->device = strdup("dax0.0");
        d = add_device_rule(p, "by-ns", ZONE_KERNEL, 2);
        d->namespace_name = strdup("namespace1.0");
        d = add_device_rule(p, "by-uuid", ZONE_KERNEL, 3);
        d->namespace_name = strdup("6d2c1d43-8c84-4d6c-9a0b-0d5f6a7c1e11");
        d = add_device_rule(p, "by-region", ZONE_KERNEL, 4);
        d->region = 5;
        d = add_device_rule(p, "by-node", ZONE_KERNEL, 5);
        d->target_node = 3;
        d = add_device_rule(p, "big", ZONE_KERNEL, 6);
        d->min_size = 16 * GiB;
        d->pmem_only = true;
        any = add_device_rule(p, "any", ZONE_MOVABLE, 7);

#define M(...) match(p, __VA_ARGS__)->name
        assert_string_equal(M("dax0.0", NULL, NULL, -1, -1, 0, false), "by-name");
        /* First matching rule in file order wins even when later ones match too. */
        assert_string_equal(M("dax0.0", "namespace1.0", NULL, 5, 3, 32 * GiB, true), "by-name");
        assert_string_equal(M("dax1.0", "namespace1.0", NULL, -1, -1, 0, false), "by-ns");
        assert_string_equal(M("dax2.0", "namespace2.0", "6d2c1d43-8c84-4d6c-9a0b-0d5f6a7c1e11", -1, -1, 0, false),
                            "by-uuid");
        assert_string_equal(M("dax5.0", NULL, NULL, 5, -1, 0, false), "by-region");
        assert_string_equal(M("dax6.0", NULL, NULL, 6, 3, 0, false), "by-node");
        /* min_size: unknown size does not exclude, a small one does. */
        assert_string_equal(M("dax7.0", NULL, NULL, 7, 1, 0, true), "big");
        assert_string_equal(M("dax7.0", NULL, NULL, 7, 1, 16 * GiB, true), "big");
        assert_string_equal(M("dax7.0", NULL, NULL, 7, 1, 8 * GiB, true), "any");
        /* pmem_only: soft-reserved/CXL memory falls through. */
        assert_string_equal(M("dax7.0", NULL, NULL, 7, 1, 32 * GiB, false), "any");
        /* A rule naming a criterion never matches an unknown value. */
        assert_string_equal(M(NULL, NULL, NULL, -1, -1, 0, true), "big");
        assert_ptr_equal(match(p, NULL, NULL, NULL, -1, -1, 1, false), any);
#undef M
}

static void test_device_rule_in_block_path(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};
        struct device_rule *d;

        set_device(add_block(&s, 100, 2, BLOCK_STATE_OFFLINE, 0), "dax0.0", "namespace0.0",
                   "aaaa-uuid", 0);
        set_device(add_block(&s, 101, 1, BLOCK_STATE_OFFLINE, 0), "dax1.0", "namespace1.0", NULL, 1);
        set_device(add_block(&s, 102, 2, BLOCK_STATE_OFFLINE, 0), "dax2.0", NULL, NULL, 2);
        add_block(&s, 103, 2, BLOCK_STATE_OFFLINE, 0);

        /* min_size and pmem_only cannot exclude a block: size unknown, kmem is pmem. */
        d = add_device_rule(p, "uuid", ZONE_KERNEL, 1);
        d->namespace_name = strdup("aaaa-uuid");
        d->min_size = 1024 * GiB;
        d->pmem_only = true;
        /* Target node is the block's node. */
        d = add_device_rule(p, "node2", ZONE_SKIP, 2);
        d->target_node = 2;
        d = add_device_rule(p, "region1", ZONE_ONLINE, 3);
        d->region = 1;

        plan = build(&s, t, p);
        expect(plan, 100, ZONE_KERNEL, "device rule uuid");
        expect(plan, 101, ZONE_ONLINE, "device rule region1");
        expect(plan, 102, ZONE_SKIP, "device rule node2");
        /* Device rules never apply to memory without a device. */
        expect(plan, 103, ZONE_MOVABLE, "default");
        block_set_clear(&s);
}

static void test_valid_zones(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};

        add_block(&s, 100, 0, BLOCK_STATE_OFFLINE, VALID_NORMAL);                  /* default movable */
        add_block(&s, 101, 0, BLOCK_STATE_OFFLINE, VALID_NORMAL | VALID_MOVABLE);
        add_block(&s, 102, 0, BLOCK_STATE_OFFLINE, 0);                             /* unknown */
        add_block(&s, 200, 1, BLOCK_STATE_OFFLINE, VALID_MOVABLE);                 /* node rule kernel */
        add_block(&s, 201, 1, BLOCK_STATE_OFFLINE, VALID_NORMAL);
        add_node_rule(p, 1, ZONE_KERNEL, 5);

        plan = build(&s, t, p);
        /* The default falls back to the kernel's choice, counted for a notice... */
        expect(plan, 100, ZONE_ONLINE, "movable not valid");
        assert_int_equal(plan->n_fell_back, 1);
        expect(plan, 101, ZONE_MOVABLE, "default");
        expect(plan, 102, ZONE_MOVABLE, "default");
        /* ...an admin's rule is never changed quietly: the block waits, reported. */
        expect(plan, 200, ZONE_SKIP,
               "undecided: a rule asks online_kernel, which the kernel does not offer for this block (valid_zones)");
        assert_int_equal(plan->n_undecided, 1);
        expect(plan, 201, ZONE_KERNEL, "node rule");
        block_set_clear(&s);
}

/* Count the leading MOVABLE blocks and check every later one is KERNEL by the guard. */
static size_t movable_then_kernel(const struct plan *plan, uint64_t first, uint64_t n) {
        size_t movable = 0;

        for (uint64_t id = first; id < first + n; id++) {
                struct found f = find(plan, id);

                assert_non_null(f.item);
                if (id - first == movable && f.item->zone == ZONE_MOVABLE) {
                        assert_string_equal(f.item->reason, "default");
                        movable++;
                } else {
                        assert_int_equal(f.item->zone, ZONE_KERNEL);
                        assert_string_equal(f.item->reason, "ratio guard");
                }
        }
        return movable;
}

static void test_ratio_global(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};

        /* Kernel 1 GiB in all, ratio 301%: 3.01 GiB may be movable, that is 24 blocks
         * of 128 MiB (3 GiB); the 25th would make 3.125 GiB. Kernel blocks we plan do
         * not raise the budget, so no movable block follows the first kernel one. */
        t->nodes[1].kernel_bytes = 0;
        p->movable_ratio = 301;
        p->ratio_per_node = false;
        add_blocks(&s, 100, 40, 1);

        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 100, 40), 24);
        plan_free(TAKE_PTR(plan));

        /* Movable memory already online uses up budget: 1 GiB less, 8 blocks fewer. */
        t->nodes[2].movable_bytes = 1 * GiB;
        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 100, 40), 16);
        plan_free(TAKE_PTR(plan));

        /* The boundary is inclusive: ratio 300% allows exactly 3 GiB = 24 blocks. */
        t->nodes[2].movable_bytes = 0;
        p->movable_ratio = 300;
        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 100, 40), 24);
        p->movable_ratio = 299;
        plan_free(TAKE_PTR(plan));
        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 100, 40), 23);
        block_set_clear(&s);
}

static void test_ratio_per_node(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};

        /* node0 1 GiB kernel, node1 3 GiB; ratio 100%. */
        t->nodes[1].kernel_bytes = 3 * GiB;
        p->movable_ratio = 100;
        p->ratio_per_node = true;
        add_blocks(&s, 100, 16, 0);
        add_blocks(&s, 200, 16, 1);
        add_blocks(&s, 300, 4, 2);                      /* node2 has no kernel memory */
        add_blocks(&s, 400, 4, NODE_NONE);              /* only the global check */

        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 100, 16), 8);
        assert_int_equal(movable_then_kernel(plan, 200, 16), 16);
        assert_int_equal(movable_then_kernel(plan, 300, 4), 0);
        /* Global: 4 GiB kernel = 32 blocks, 24 used by node0 and node1. */
        assert_int_equal(movable_then_kernel(plan, 400, 4), 4);
        plan_free(TAKE_PTR(plan));

        /* Only the global check: 32 blocks of budget, taken in ascending id order. */
        p->ratio_per_node = false;
        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 100, 16), 16);
        assert_int_equal(movable_then_kernel(plan, 200, 16), 16);
        assert_int_equal(movable_then_kernel(plan, 300, 4), 0);
        assert_int_equal(movable_then_kernel(plan, 400, 4), 0);
        block_set_clear(&s);
}

static void test_ratio_disabled(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};

        p->movable_ratio = 0;
        add_blocks(&s, 100, 100, 2);
        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 100, 100), 100);
        block_set_clear(&s);
}

static void test_ratio_not_for_rules(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};

        /* 2 GiB kernel, ratio 100%: 16 blocks of budget. */
        p->movable_ratio = 100;
        p->ratio_per_node = false;
        add_node_rule(p, 1, ZONE_MOVABLE, 3);
        add_blocks(&s, 100, 4, 0);                      /* default, lower ids */
        add_blocks(&s, 200, 12, 1);                     /* node rule */
        for (uint64_t i = 0; i < 8; i++)               /* pmem default */
                set_device(add_block(&s, 300 + i, 2, BLOCK_STATE_OFFLINE, 0), "dax0.0", NULL, NULL, 0);

        plan = build(&s, t, p);
        /* Rules and the pmem default stay movable beyond the budget ... */
        for (uint64_t i = 0; i < 12; i++)
                expect(plan, 200 + i, ZONE_MOVABLE, "node rule");
        for (uint64_t i = 0; i < 8; i++)
                expect(plan, 300 + i, ZONE_MOVABLE, "pmem default");
        /* ... and use it up first, though their ids are higher. */
        assert_int_equal(movable_then_kernel(plan, 100, 4), 0);
        plan_free(TAKE_PTR(plan));

        /* With room left, the default blocks get exactly what remains. */
        t->nodes[1].kernel_bytes = 2 * GiB + 256 * MiB;         /* 26 blocks of budget, 20 used */
        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 100, 4), 4);
        block_set_clear(&s);
}

static bool cpus_distinct_cores(const struct topology *t, const struct plan_group *g) {
        for (size_t i = 0; i < g->n_cpus; i++)
                for (size_t j = i + 1; j < g->n_cpus; j++)
                        if (t->cpus[g->cpus[i]].core == t->cpus[g->cpus[j]].core)
                                return false;
        return true;
}

static void test_cpuless_node(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        const struct plan_group *g;
        struct block_set s = {};

        /* node2 has no CPU; node1 is nearer (17) than node0 (30). */
        p->workers = (struct worker_count) { .count = 8 };
        add_blocks(&s, 100, 16, 2);
        plan = build(&s, t, p);
        assert_int_equal(plan->n_groups, 1);
        g = group_of(plan, 2);
        assert_non_null(g);
        assert_int_equal(g->writer_node, 1);
        /* node1 has 4 threads but 2 physical cores: one thread each, never 4 and 6. */
        assert_int_equal(g->n_cpus, 2);
        assert_int_equal(g->cpus[0], 4);
        assert_int_equal(g->cpus[1], 5);
        assert_true(cpus_distinct_cores(t, g));
        for (size_t i = 0; i < g->n_items; i++)
                assert_int_equal(t->cpus[g->cpus[g->items[i].worker]].node, 1);
        block_set_clear(&s);
}

static void test_workers(void **state) {
        _cleanup_topology_ struct topology *t = topo_new(2, 16);
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        const struct plan_group *g;
        struct block_set s = {};

        /* node0: 8 cores without siblings (CPUs 0-7); node1: 4 cores x 2 threads (8-15). */
        for (unsigned c = 0; c < 8; c++)
                topo_cpu(t, c, 0, (int) c);
        for (unsigned c = 8; c < 16; c++)
                topo_cpu(t, c, 1, (int) (8 + (c - 8) % 4));
        add_blocks(&s, 100, 64, 0);
        add_blocks(&s, 200, 64, 1);

        /* Default: one worker per node, on the lowest core. */
        plan = build(&s, t, p);
        assert_int_equal(group_of(plan, 0)->n_cpus, 1);
        assert_int_equal(group_of(plan, 0)->cpus[0], 0);
        assert_int_equal(group_of(plan, 1)->n_cpus, 1);
        assert_int_equal(group_of(plan, 1)->cpus[0], 8);
        plan_free(TAKE_PTR(plan));

        /* A count: 6 workers on node0; node1 is capped at its 4 physical cores. */
        p->workers = (struct worker_count) { .count = 6 };
        plan = build(&s, t, p);
        assert_int_equal(group_of(plan, 0)->n_cpus, 6);
        g = group_of(plan, 1);
        assert_int_equal(g->n_cpus, 4);
        for (size_t i = 0; i < 4; i++)
                assert_int_equal(g->cpus[i], 8 + (int) i);
        assert_true(cpus_distinct_cores(t, g));
        plan_free(TAKE_PTR(plan));

        /* A percentage of usable cores, rounded up: 50% of 8 = 4, 50% of 4 = 2. */
        p->workers = (struct worker_count) { .percent = 50 };
        plan = build(&s, t, p);
        assert_int_equal(group_of(plan, 0)->n_cpus, 4);
        assert_int_equal(group_of(plan, 1)->n_cpus, 2);
        plan_free(TAKE_PTR(plan));

        /* 30% of 8 = 2.4 -> 3; a node rule's worker count overrides [daemon]. */
        p->workers = (struct worker_count) { .percent = 30 };
        add_node_rule(p, 1, ZONE_UNSET, 9)->has_workers = true;
        p->nodes[0].workers = (struct worker_count) { .count = 1 };
        plan = build(&s, t, p);
        assert_int_equal(group_of(plan, 0)->n_cpus, 3);
        assert_int_equal(group_of(plan, 1)->n_cpus, 1);
        block_set_clear(&s);
        plan_free(TAKE_PTR(plan));

        /* Never more workers than blocks. */
        add_blocks(&s, 100, 2, 0);
        p->workers = (struct worker_count) { .count = 8 };
        plan = build(&s, t, p);
        assert_int_equal(group_of(plan, 0)->n_cpus, 2);
        assert_int_equal(group_of(plan, 0)->items[0].worker, 0);
        assert_int_equal(group_of(plan, 0)->items[1].worker, 1);
        block_set_clear(&s);
}

static void test_banned_cpus(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        const struct plan_group *g;
        struct block_set s = {};

        p->workers = (struct worker_count) { .count = 4 };
        add_blocks(&s, 100, 8, 0);
        add_blocks(&s, 200, 8, 2);

        /* CPU 0 banned: its core is still used through sibling 2. */
        numa_bitmask_setbit(p->banned_cpus, 0);
        plan = build(&s, t, p);
        g = group_of(plan, 0);
        assert_int_equal(g->writer_node, 0);
        assert_int_equal(g->n_cpus, 2);
        for (size_t i = 0; i < g->n_cpus; i++)
                assert_true(g->cpus[i] == 1 || g->cpus[i] == 2);
        assert_true(cpus_distinct_cores(t, g));
        plan_free(TAKE_PTR(plan));

        /* All of node1 banned: node2's writer is now node0 (30), node0 writes its own. */
        for (unsigned c = 4; c < 8; c++)
                numa_bitmask_setbit(p->banned_cpus, c);
        plan = build(&s, t, p);
        g = group_of(plan, 2);
        assert_int_equal(g->writer_node, 0);
        for (size_t i = 0; i < g->n_cpus; i++) {
                assert_false(cpuset_isset(p->banned_cpus, (unsigned) g->cpus[i]));
                assert_int_equal(t->cpus[g->cpus[i]].node, 0);
        }
        plan_free(TAKE_PTR(plan));

        /* Everything banned: one unpinned worker per group. */
        for (unsigned c = 0; c < 8; c++)
                numa_bitmask_setbit(p->banned_cpus, c);
        plan = build(&s, t, p);
        for (size_t i = 0; i < plan->n_groups; i++) {
                assert_int_equal(plan->groups[i].writer_node, NODE_NONE);
                assert_int_equal(plan->groups[i].n_cpus, 1);
                assert_int_equal(plan->groups[i].cpus[0], -1);
                for (size_t k = 0; k < plan->groups[i].n_items; k++)
                        assert_int_equal(plan->groups[i].items[k].worker, 0);
        }
        block_set_clear(&s);
}

static void test_isolated_cpus(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};

        /* isolcpus take a whole core out when both threads are isolated. */
        numa_bitmask_setbit(t->isolated, 1);
        numa_bitmask_setbit(t->isolated, 3);
        p->workers = (struct worker_count) { .count = 2 };
        add_blocks(&s, 100, 8, 0);
        plan = build(&s, t, p);
        assert_int_equal(plan->groups[0].n_cpus, 1);
        assert_int_equal(plan->groups[0].cpus[0], 0);
        block_set_clear(&s);
}

static void test_groups_and_unknown_node(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        _cleanup_free_ char *out = NULL;
        struct block_set s = {};

        /* Given out of order; a node the topology does not know (5) still gets a group. */
        add_blocks(&s, 500, 2, NODE_NONE);
        add_blocks(&s, 300, 2, 2);
        add_blocks(&s, 100, 2, 0);
        add_blocks(&s, 700, 1, 5);

        plan = build(&s, t, p);
        assert_int_equal(plan->n_groups, 4);
        assert_int_equal(plan->n_items, 7);
        assert_int_equal(plan->groups[0].node, 0);
        assert_int_equal(plan->groups[1].node, 2);
        assert_int_equal(plan->groups[2].node, 5);
        assert_int_equal(plan->groups[3].node, NODE_NONE);
        /* Unknown memory nodes write unpinned. */
        for (size_t g = 2; g < 4; g++) {
                assert_int_equal(plan->groups[g].writer_node, NODE_NONE);
                assert_int_equal(plan->groups[g].n_cpus, 1);
                assert_int_equal(plan->groups[g].cpus[0], -1);
        }
        assert_int_equal(plan->groups[3].items[0].block->id, 500);
        assert_int_equal(plan->groups[3].items[1].block->id, 501);

        out = print_plan(plan);
        assert_non_null(strstr(out, "block=memory500 node=-1 zone=online_movable cpu=-1 reason=\"default\" "
                                    "writer_node=-1\n"));
        assert_non_null(strstr(out, "block=memory700 node=5 zone=online_movable cpu=-1 "));
        block_set_clear(&s);
}

/* A node id past NODE_ID_MAX sized the group slots: INT_MAX overflowed them. */
static void test_node_out_of_range(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        struct plan *plan = (struct plan *) 0x1;
        struct block_set s = {};
        static const int bad[] = { NODE_ID_MAX + 1, 99999999, INT_MAX };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                add_blocks(&s, 100, 1, 0);
                add_blocks(&s, 700, 1, bad[i]);
                assert_int_equal(plan_build(&s, t, p, &plan), -ERANGE);
                assert_ptr_equal(plan, (struct plan *) 0x1);
                block_set_clear(&s);
        }
        add_blocks(&s, 700, 1, NODE_ID_MAX);
        plan = build(&s, t, p);
        assert_int_equal(plan->n_groups, 1);
        assert_int_equal(plan->groups[0].node, NODE_ID_MAX);
        plan_free(plan);
        block_set_clear(&s);
}

static void test_chunking(void **state) {
        _cleanup_topology_ struct topology *t = topo_new(1, 4);
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        const struct plan_group *g;
        struct block_set s = {};
        static const size_t sizes[][5] = {
                /* blocks, then items per worker for 4 workers */
                { 10, 3, 3, 2, 2 },
                { 8, 2, 2, 2, 2 },
                { 5, 2, 1, 1, 1 },
                { 3, 1, 1, 1, 0 },
        };

        for (unsigned c = 0; c < 4; c++)
                topo_cpu(t, c, 0, (int) c);
        p->workers = (struct worker_count) { .count = 4 };

        for (size_t k = 0; k < ELEMENTSOF(sizes); k++) {
                size_t per[4] = {};

                /* Ids with a hole and given in reverse: chunks follow ascending ids. */
                for (size_t i = sizes[k][0]; i > 0; i--)
                        add_block(&s, 1000 + (i - 1) * (i % 3 ? 1 : 7), 0, BLOCK_STATE_OFFLINE, 0);
                plan = build(&s, t, p);
                g = &plan->groups[0];
                assert_int_equal(g->n_items, sizes[k][0]);
                assert_int_equal(g->n_cpus, sizes[k][0] < 4 ? sizes[k][0] : 4);
                for (size_t i = 0; i < g->n_items; i++) {
                        if (i > 0) {
                                assert_true(g->items[i - 1].block->id < g->items[i].block->id);
                                /* Workers change only forward: contiguous runs. */
                                assert_true(g->items[i - 1].worker <= g->items[i].worker);
                        }
                        per[g->items[i].worker]++;
                }
                for (size_t w = 0; w < 4; w++)
                        assert_int_equal(per[w], sizes[k][1 + w]);
                plan_free(TAKE_PTR(plan));
                block_set_clear(&s);
        }
}

/* Parse "key=value key=\"v a l\"" into a lookup; returns the value of key or NULL. */
static char *field(const char *line, const char *key) {
        const char *p = line;
        size_t klen = strlen(key);

        while (*p) {
                const char *k = p, *eq = strchr(p, '=');
                char *v;
                size_t n = 0;

                assert_non_null(eq);
                p = eq + 1;
                v = calloc(strlen(p) + 1, 1);
                assert_non_null(v);
                if (*p == '"') {
                        for (p++; *p && *p != '"'; p++) {
                                if (*p == '\\')
                                        p++;
                                v[n++] = *p;
                        }
                        assert_int_equal(*p, '"');
                        p++;
                } else
                        while (*p && *p != ' ')
                                v[n++] = *p++;
                if ((size_t) (eq - k) == klen && strncmp(k, key, klen) == 0)
                        return v;
                free(v);
                if (*p == ' ')
                        p++;
                else
                        assert_int_equal(*p, '\0');
        }
        return NULL;
}

static void test_print(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        _cleanup_free_ char *out = NULL;
        struct block_set s = {};
        struct device_rule *d;
        char *line, *save = NULL;
        uint64_t last = 0;
        size_t n = 0;

        add_blocks(&s, 300, 2, 2);
        add_blocks(&s, 100, 2, 0);
        add_block(&s, 150, 0, BLOCK_STATE_OFFLINE, 0);
        set_device(add_block(&s, 200, 1, BLOCK_STATE_OFFLINE, 0), "dax0.0", NULL, NULL, 0);
        set_device(add_block(&s, 201, 1, BLOCK_STATE_OFFLINE, 0), "dax 9", NULL, NULL, 0);
        add_exclusion(p, EXCLUDE_BLOCK)->start = 150;
        d = add_device_rule(p, "fast \"pmem\"", ZONE_KERNEL, 4);
        d->device = strdup("dax0.0");

        plan = build(&s, t, p);
        out = print_plan(plan);

        assert_string_equal(out,
                "block=memory100 node=0 zone=online_movable cpu=0 reason=\"default\" writer_node=0\n"
                "block=memory101 node=0 zone=online_movable cpu=0 reason=\"default\" writer_node=0\n"
                "block=memory150 node=0 zone=skip cpu=-1 reason=\"excluded\"\n"
                "block=memory200 node=1 zone=online_kernel cpu=4 reason=\"device rule fast \\\"pmem\\\"\" "
                "writer_node=1 device=dax0.0\n"
                "block=memory201 node=1 zone=online_movable cpu=4 reason=\"pmem default\" writer_node=1 "
                "device=\"dax 9\"\n"
                "block=memory300 node=2 zone=online_movable cpu=4 reason=\"default\" writer_node=1\n"
                "block=memory301 node=2 zone=online_movable cpu=4 reason=\"default\" writer_node=1\n");

        /* And parse it back the way a test script would. */
        for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                _cleanup_free_ char *block = field(line, "block"), *node = field(line, "node"),
                        *zone = field(line, "zone"), *cpu = field(line, "cpu"), *reason = field(line, "reason"),
                        *device = field(line, "device");
                struct found f;
                uint64_t id;

                assert_non_null(block);
                assert_non_null(node);
                assert_non_null(zone);
                assert_non_null(cpu);
                assert_non_null(reason);
                assert_int_equal(block_id_from_name(block, &id), 0);
                assert_true(n == 0 || id > last);
                last = id;
                f = find(plan, id);
                assert_non_null(f.item);
                assert_int_equal(atoi(node), f.item->block->node);
                assert_string_equal(zone, zone_to_string(f.item->zone));
                assert_int_equal(atoi(cpu), f.group ? f.group->cpus[f.item->worker] : -1);
                assert_string_equal(reason, f.item->reason);
                if (f.item->block->device)
                        assert_string_equal(device, f.item->block->device);
                else
                        assert_null(device);
                n++;
        }
        assert_int_equal(n, 7);
        block_set_clear(&s);
}

static char *plan_text(const struct block_set *s, const struct topology *t, const struct policy *p) {
        _cleanup_plan_ struct plan *plan = build(s, t, p);

        return print_plan(plan);
}

static void test_deterministic(void **state) {
        _cleanup_topology_ struct topology *t = standard_machine();
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;
        struct block_set s = {}, r = {};

        p->movable_ratio = 150;
        p->workers = (struct worker_count) { .count = 2 };
        add_range_rule(p, 130 * BS, 140 * BS, ZONE_KERNEL, 3);
        for (uint64_t i = 0; i < 60; i++)
                add_block(&s, 100 + i, (int) (i % 4) - 1, BLOCK_STATE_OFFLINE, 0);
        /* The same blocks in reverse order. */
        for (size_t i = s.n; i > 0; i--)
                add_block(&r, s.blocks[i - 1].id, s.blocks[i - 1].node, BLOCK_STATE_OFFLINE, 0);

        a = plan_text(&s, t, p);
        b = plan_text(&s, t, p);
        c = plan_text(&r, t, p);
        assert_string_equal(a, b);
        assert_string_equal(a, c);
        /* The guard did something, so the order mattered. */
        assert_non_null(strstr(a, "reason=\"ratio guard\""));
        block_set_clear(&s);
        block_set_clear(&r);
}

static void test_scaling(void **state) {
        _cleanup_topology_ struct topology *t = topo_new(8, 64);
        _cleanup_policy_ struct policy *p = policy_plain();
        _cleanup_plan_ struct plan *plan = NULL;
        _cleanup_free_ char *out = NULL;
        struct block_set s = {};
        size_t lines = 0;

        /* 8 nodes x 8 CPUs, 3 TiB in 24,576 blocks, with the guard on. */
        for (unsigned c = 0; c < 64; c++)
                topo_cpu(t, c, (int) (c / 8), (int) c);
        for (int n = 0; n < 8; n++)
                t->nodes[n].kernel_bytes = 64 * GiB;
        p->movable_ratio = 301;
        p->workers = (struct worker_count) { .percent = 50 };
        add_exclusion(p, EXCLUDE_BLOCK)->start = 5;
        for (uint64_t i = 0; i < 24576; i++)
                add_block(&s, i, (int) (i / 3072), BLOCK_STATE_OFFLINE, 0);

        plan = build(&s, t, p);
        assert_int_equal(plan->n_groups, 8);
        assert_int_equal(plan->n_items + plan->n_skipped, 24576);
        for (size_t g = 0; g < 8; g++)
                assert_int_equal(plan->groups[g].n_cpus, 4);
        out = print_plan(plan);
        for (const char *c = out; *c; c++)
                lines += *c == '\n';
        assert_int_equal(lines, 24576);
        block_set_clear(&s);
}

/* ---- end to end: fake sysfs tree and INI text ------------------------------ */

static char *write_conf(const char *root, const char *text) {
        char *path = NULL;

        fake_write(root, "memonlined.conf", "%s", text);
        assert_true(asprintf(&path, "%s/memonlined.conf", root) > 0);
        return path;
}

static void test_e2e_standard_machine(void **state) {
        _cleanup_topology_ struct topology *t = NULL;
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_plan_ struct plan *plan = NULL;
        _cleanup_free_ char *conf = NULL, *out = NULL;
        struct policy_error err = {};
        struct block_set s = {};
        char *root = fake_tree_new();

        fake_standard_machine(root);
        /* 2 GiB hot-added on node2 (CPU-less), 1 GiB on node1. */
        for (uint64_t b = 32; b < 48; b++)
                fake_add_block(root, b, 2, "offline", "Movable Normal");
        for (uint64_t b = 48; b < 56; b++)
                fake_add_block(root, b, 1, "offline", "Normal");
        conf = write_conf(root,
                          "[daemon]\n"
                          "workers = 100%\n"
                          "[zones]\n"
                          "default = online_movable\n"
                          "movable_ratio = 301\n"
                          "ratio_per_node = no\n"
                          "[exclude]\n"
                          "block = memory33\n"
                          "[range 0x120000000+256M]\n"      /* blocks 36, 37 */
                          "zone = online_kernel\n");

        assert_int_equal(topology_load(root, &t), 0);
        assert_int_equal(policy_load(conf, &p, &err), 0);
        assert_int_equal(blocks_scan(root, t->block_size, BLOCK_STATE_OFFLINE, &s), 0);
        assert_int_equal(s.n, 24);

        plan = build(&s, t, p);
        out = print_plan(plan);
        expect(plan, 32, ZONE_MOVABLE, "default");
        expect(plan, 33, ZONE_SKIP, "excluded");
        /* A range rule is named by its [range] header line. */
        expect(plan, 36, ZONE_KERNEL, "range rule line 9");
        expect(plan, 37, ZONE_KERNEL, "range rule line 9");
        /* node1 blocks have no Movable in valid_zones. */
        expect(plan, 48, ZONE_ONLINE, "movable not valid");

        /* node2 is written from node1 (distance 17), one thread per core. */
        assert_int_equal(group_of(plan, 2)->writer_node, 1);
        assert_int_equal(group_of(plan, 2)->n_cpus, 2);
        assert_true(cpus_distinct_cores(t, group_of(plan, 2)));
        assert_non_null(strstr(out, "block=memory32 node=2 zone=online_movable cpu=4 reason=\"default\" "
                                    "writer_node=1\n"));
        assert_non_null(strstr(out, "block=memory47 node=2 zone=online_movable cpu=5 "));
        block_set_clear(&s);
        fake_tree_free(root);
}

/* The standard machine with 24 offline blocks 16..39 on node 1, read back, and a ratio of 100% over all nodes. */
static char *guard_machine(struct topology **t, struct policy **p, struct block_set *s) {
        _cleanup_free_ char *conf = NULL;
        struct policy_error err = {};
        char *root = fake_tree_new();

        fake_standard_machine(root);
        for (uint64_t b = 16; b < 40; b++)
                fake_add_block(root, b, 1, "offline", "Movable Normal");
        conf = write_conf(root, "[zones]\nmovable_ratio = 100\nratio_per_node = no\n");
        assert_int_equal(topology_load(root, t), 0);
        assert_int_equal(policy_load(conf, p, &err), 0);
        assert_int_equal(blocks_scan(root, (*t)->block_size, BLOCK_STATE_OFFLINE, s), 0);
        return root;
}

static void test_e2e_ratio_guard(void **state) {
        _cleanup_topology_ struct topology *t = NULL;
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_plan_ struct plan *plan = NULL;
        struct block_set s = {};
        char *root = guard_machine(&t, &p, &s);

        /* 2 GiB online Normal (node0 + node1) at 100%: 16 blocks movable, then kernel. */
        assert_int_equal(t->nodes[0].kernel_bytes + t->nodes[1].kernel_bytes, 2 * GiB);
        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 16, 24), 16);
        plan_free(TAKE_PTR(plan));

        /* Per node, node1 alone has 1 GiB: 8 blocks. */
        p->ratio_per_node = true;
        plan = build(&s, t, p);
        assert_int_equal(movable_then_kernel(plan, 16, 24), 8);
        block_set_clear(&s);
        fake_tree_free(root);
}

/*
 * The blocks of a static device share its verdict, marked as the device's
 * (the runner says it once per device); blocks of no device are guarded
 * one by one, not so marked.
 */
static void test_ratio_device_verdict(void **state) {
        _cleanup_topology_ struct topology *t = NULL;
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_plan_ struct plan *plan = NULL;
        _cleanup_(memdev_set_clear) struct memdev_set devs = {};
        struct block_set s = {};
        /* 2 GiB boot kernel memory at 100%; a 3 GiB DIMM (blocks 16..39) would exceed it as a whole. */
        char *root = guard_machine(&t, &p, &s);

        plan = build(&s, t, p);
        for (uint64_t id = 16; id < 40; id++) {
                struct found f = find(plan, id);

                assert_false(f.item->guarded_by_device);
                assert_int_equal(f.item->ratio_guarded, id >= 32);
        }
        plan_free(TAKE_PTR(plan));

        assert_int_equal(memdev_set_add(&devs, MEMDEV_ACPI, "PNP0C80:00", 16 * t->block_size, 40 * t->block_size), 0);
        assert_int_equal(memdev_set_seal(&devs), 0);
        topology_set_devices(t, &devs, NULL);
        plan = build(&s, t, p);
        for (uint64_t id = 16; id < 40; id++) {
                struct found f = find(plan, id);

                assert_int_equal(f.item->zone, ZONE_KERNEL);
                assert_true(f.item->ratio_guarded);
                assert_true(f.item->guarded_by_device);
                assert_true(startswith(f.item->reason, "ratio guard: dimm PNP0C80:00 (3.0 GiB) -> online_kernel"));
                /* One text for the whole device. */
                assert_ptr_equal(f.item->reason, find(plan, 16).item->reason);
        }
        assert_int_equal(plan->n_ratio_guarded, 24);
        block_set_clear(&s);
        fake_tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_bad_args),
                cmocka_unit_test(test_only_offline_planned),
                cmocka_unit_test(test_precedence),
                cmocka_unit_test(test_unset_rules_fall_through),
                cmocka_unit_test(test_exclusion_kinds),
                cmocka_unit_test(test_range_rule_block_start),
                cmocka_unit_test(test_match_device),
                cmocka_unit_test(test_device_rule_in_block_path),
                cmocka_unit_test(test_valid_zones),
                cmocka_unit_test(test_ratio_global),
                cmocka_unit_test(test_ratio_per_node),
                cmocka_unit_test(test_ratio_disabled),
                cmocka_unit_test(test_ratio_not_for_rules),
                cmocka_unit_test(test_ratio_device_verdict),
                cmocka_unit_test(test_cpuless_node),
                cmocka_unit_test(test_workers),
                cmocka_unit_test(test_banned_cpus),
                cmocka_unit_test(test_isolated_cpus),
                cmocka_unit_test(test_groups_and_unknown_node),
                cmocka_unit_test(test_node_out_of_range),
                cmocka_unit_test(test_chunking),
                cmocka_unit_test(test_print),
                cmocka_unit_test(test_deterministic),
                cmocka_unit_test(test_scaling),
                cmocka_unit_test(test_e2e_standard_machine),
                cmocka_unit_test(test_e2e_ratio_guard),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
