/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "cpuset.h"
#include "fake-tree.h"
#include "topology.h"
#include "topology-internal.h"
#include "util.h"

#define BS (128ULL << 20)

static int setup_standard(void **state) {
        char *root = fake_tree_new();

        fake_standard_machine(root);
        *state = root;
        return 0;
}

static int setup_standard_fast(void **state) {
        char *root = fake_tree_new_fast();

        fake_standard_machine(root);
        *state = root;
        return 0;
}

static int setup_empty(void **state) {
        *state = fake_tree_new();
        return 0;
}

static int teardown(void **state) {
        fake_tree_free(*state);
        return 0;
}

static struct topology *load(const char *root) {
        struct topology *t = NULL;
        int r = topology_load(root, &t);

        if (r < 0)
                fail_msg("topology_load: %s", strerror(-r));
        assert_non_null(t);
        return t;
}

static struct bitmask *set_of(const char *list) {
        struct bitmask *m = NULL;

        assert_int_equal(cpulist_parse(list, &m), 0);
        return m;
}

/* Picked CPUs as a string like "0,1" for readable assertions. */
static char *picks(const struct topology *t, int node, const char *banned_list, unsigned max) {
        _cleanup_cpuset_ struct bitmask *banned = banned_list ? set_of(banned_list) : NULL;
        int cpus[64];
        char *s = NULL;
        size_t len = 0;
        FILE *f;
        int n;

        assert_true(max <= ELEMENTSOF(cpus));
        n = topology_pick_cpus(t, node, banned, max, cpus);
        assert_true(n >= 0);
        assert_true((unsigned) n <= max);
        /* The usable-core count agrees with an unlimited pick. */
        if (max >= t->n_cpus)
                assert_int_equal(topology_usable_cores(t, node, banned), (unsigned) n);
        f = open_memstream(&s, &len);
        assert_non_null(f);
        for (int i = 0; i < n; i++)
                fprintf(f, "%s%d", i ? "," : "", cpus[i]);
        fclose(f);
        return s;
}

#define assert_picks(t, node, banned, max, want)                         \
        do {                                                            \
                _cleanup_free_ char *_s = picks((t), (node), (banned), (max)); \
                assert_string_equal(_s, (want));                        \
        } while (0)

static int writer(const struct topology *t, int node, const char *banned_list) {
        _cleanup_cpuset_ struct bitmask *banned = banned_list ? set_of(banned_list) : NULL;

        return topology_writer_node(t, node, banned);
}

static void test_standard(void **state) {
        _cleanup_topology_ struct topology *t = load(*state);
        const struct topo_node *n0, *n1, *n2;
        _cleanup_free_ char *c0 = NULL, *c1 = NULL, *c2 = NULL;

        assert_string_equal(t->sysfs_root, *state);
        assert_int_equal(t->block_size, BS);
        assert_int_equal(t->n_nodes, 3);
        assert_int_equal(t->max_node, 2);
        assert_int_equal(t->n_cpus, 8);
        n0 = topology_node(t, 0);
        n1 = topology_node(t, 1);
        n2 = topology_node(t, 2);
        assert_non_null(n0);
        assert_non_null(n1);
        assert_non_null(n2);
        assert_null(topology_node(t, 3));
        assert_null(topology_node(t, -1));

        assert_int_equal(cpulist_format(n0->cpus, &c0), 0);
        assert_int_equal(cpulist_format(n1->cpus, &c1), 0);
        assert_int_equal(cpulist_format(n2->cpus, &c2), 0);
        assert_string_equal(c0, "0-3");
        assert_string_equal(c1, "4-7");
        assert_string_equal(c2, "");
        assert_null(n0->initiators);

        assert_int_equal(n0->distance[0], 10);
        assert_int_equal(n0->distance[1], 20);
        assert_int_equal(n0->distance[2], 30);
        assert_int_equal(n2->distance[1], 17);

        for (unsigned i = 0; i < 8; i++) {
                assert_true(t->cpus[i].present);
                assert_true(t->cpus[i].online);
                assert_int_equal(t->cpus[i].node, i < 4 ? 0 : 1);
        }
        assert_int_equal(t->cpus[2].core, 0);
        assert_int_equal(t->cpus[3].core, 1);
        assert_int_equal(t->cpus[6].core, 4);
        assert_int_equal(t->cpus[7].core, 5);
        assert_int_equal(cpuset_count(t->isolated), 0);
}

static void test_siblings(void **state) {
        _cleanup_topology_ struct topology *t = load(*state);

        /* Two physical cores per node: never a sibling pair. */
        assert_picks(t, 0, NULL, 8, "0,1");
        assert_picks(t, 1, NULL, 8, "4,5");
        assert_picks(t, 0, NULL, 1, "0");
        assert_picks(t, 0, NULL, 0, "");
        assert_picks(t, 2, NULL, 8, "");
        assert_picks(t, 9, NULL, 8, "");
        assert_int_equal(topology_usable_cores(t, 0, NULL), 2);
        assert_int_equal(topology_usable_cores(t, 2, NULL), 0);
        assert_int_equal(topology_pick_cpus(t, 0, NULL, 4, NULL), -EINVAL);
}

static void test_wide_core(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        /* node0: 4 cores × 2 threads, siblings numbered n and n+4 as on x86. */
        fake_memory_init(root, BS);
        fake_add_node(root, 0, "0-7", "10");
        for (unsigned c = 0; c < 8; c++) {
                char sib[16];

                snprintf(sib, sizeof(sib), "%u,%u", c % 4, c % 4 + 4);
                fake_add_cpu(root, c, 0, sib, true);
        }
        t = load(root);
        assert_picks(t, 0, NULL, 64, "0,1,2,3");
        assert_picks(t, 0, NULL, 3, "0,1,2");
        /* Banned first threads: the siblings stand in, still in core order. */
        assert_picks(t, 0, "0,2", 64, "4,1,6,3");
        assert_picks(t, 0, "0,2", 2, "4,1");
        assert_picks(t, 0, "0,4", 64, "1,2,3");
        assert_int_equal(topology_usable_cores(t, 0, NULL), 4);
}

static void test_banned_isolated_offline(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        t = load(root);
        /* Banned first sibling, free second: the second represents core 0. */
        assert_picks(t, 0, "0", 8, "2,1");
        assert_picks(t, 0, "0", 1, "2");
        assert_picks(t, 0, "0,2", 8, "1");
        assert_picks(t, 0, "0-3", 8, "");
        topology_free(TAKE_PTR(t));

        /* isolcpus and nohz_full both count, as a union. */
        fake_write(root, "devices/system/cpu/isolated", "1\n");
        fake_write(root, "devices/system/cpu/nohz_full", "3,4\n");
        t = load(root);
        assert_true(cpuset_isset(t->isolated, 1));
        assert_true(cpuset_isset(t->isolated, 3));
        assert_true(cpuset_isset(t->isolated, 4));
        assert_int_equal(cpuset_count(t->isolated), 3);
        assert_picks(t, 0, NULL, 8, "0");               /* core 1 = {1,3} fully isolated */
        assert_picks(t, 1, NULL, 8, "6,5");              /* 4 isolated: 6 stands in */
        assert_picks(t, 0, "0", 8, "2");
        topology_free(TAKE_PTR(t));

        /* Kernels with NO_HZ_FULL but no nohz_full= print "  (null)", as Debian 6.1 does. */
        fake_write(root, "devices/system/cpu/isolated", "\n");
        fake_write(root, "devices/system/cpu/nohz_full", "  (null)\n");
        t = load(root);
        assert_int_equal(cpuset_count(t->isolated), 0);
        topology_free(TAKE_PTR(t));

        /* Offline CPU: excluded, its sibling takes the core. */
        fake_write(root, "devices/system/cpu/cpu0/online", "0\n");
        fake_write(root, "devices/system/cpu/cpu5/online", "0\n");
        t = load(root);
        assert_false(t->cpus[0].online);
        assert_true(t->cpus[0].present);
        assert_false(cpuset_isset(topology_node(t, 0)->cpus, 0));
        assert_picks(t, 0, NULL, 8, "2,1");
        assert_picks(t, 1, NULL, 8, "4,7");
}

static void test_missing_online_file(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        /* cpu0 has no online file on most kernels: it cannot be offlined. */
        fake_unlink(root, "devices/system/cpu/cpu0/online");
        fake_write(root, "devices/system/cpu/cpu1/online", "0\n");
        t = load(root);
        assert_true(t->cpus[0].online);
        assert_false(t->cpus[1].online);
        assert_picks(t, 0, NULL, 8, "0,3");
}

static void test_missing_siblings_and_links(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        fake_memory_init(root, BS);
        fake_write(root, "devices/system/node/online", "0-1\n");
        fake_add_node(root, 0, "0-1", "10 21");
        fake_add_node(root, 1, "2-3", "21 10");
        /* No thread_siblings_list, no cpuN/nodeM link: cpulists give the node. */
        for (unsigned c = 0; c < 4; c++) {
                char rel[64];

                snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%u/online", c);
                fake_write(root, rel, "1\n");
        }
        t = load(root);
        for (unsigned c = 0; c < 4; c++) {
                assert_int_equal(t->cpus[c].core, (int) c);
                assert_int_equal(t->cpus[c].node, c < 2 ? 0 : 1);
        }
        assert_picks(t, 0, NULL, 8, "0,1");
        assert_picks(t, 1, NULL, 8, "2,3");
}

static void test_cpuless_nearest(void **state) {
        _cleanup_topology_ struct topology *t = load(*state);

        assert_int_equal(writer(t, 0, NULL), 0);
        assert_int_equal(writer(t, 1, NULL), 1);
        /* node2 is CPU-less; node1 is at 17, node0 at 30. */
        assert_int_equal(writer(t, 2, NULL), 1);
        /* node1's CPUs banned: next nearest. */
        assert_int_equal(writer(t, 2, "4-7"), 0);
        assert_int_equal(writer(t, 1, "4-7"), 0);
        /* A node whose CPUs are all banned is not its own writer. */
        assert_int_equal(writer(t, 0, "0-3"), 1);
        assert_int_equal(writer(t, 2, "0-7"), NODE_NONE);
        assert_int_equal(writer(t, 7, NULL), NODE_NONE);
}

static void test_cpuless_tie(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        fake_memory_init(root, BS);
        fake_write(root, "devices/system/node/online", "0-2\n");
        fake_add_node(root, 0, "0", "10 20 25");
        fake_add_node(root, 1, "1", "20 10 25");
        fake_add_node(root, 2, "", "25 25 10");
        fake_add_cpu(root, 0, 0, "0", true);
        fake_add_cpu(root, 1, 1, "1", true);
        t = load(root);
        assert_int_equal(writer(t, 2, NULL), 0);
        assert_int_equal(writer(t, 2, "0"), 1);
}

static void test_hmat_initiator(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        /* HMAT says node0 is node2's best initiator, though SLIT ranks node1 nearer. */
        fake_add_initiator(root, 2, 0);
        fake_write(root, "devices/system/node/node2/access1/initiators/read_latency", "100\n");
        t = load(root);
        assert_non_null(topology_node(t, 2)->initiators);
        assert_int_equal(cpuset_count(topology_node(t, 2)->initiators), 1);
        assert_int_equal(writer(t, 2, NULL), 0);
        /* Initiator without usable CPUs: back to distance. */
        assert_int_equal(writer(t, 2, "0-3"), 1);
        topology_free(TAKE_PTR(t));

        /* Several initiators: the lowest one with usable CPUs. */
        fake_add_initiator(root, 2, 1);
        t = load(root);
        assert_int_equal(cpuset_count(topology_node(t, 2)->initiators), 2);
        assert_int_equal(writer(t, 2, NULL), 0);
        assert_int_equal(writer(t, 2, "0-3"), 1);
        assert_int_equal(writer(t, 2, "0-7"), NODE_NONE);
}

static void test_sparse_nodes(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;
        const struct topo_node *n4, *n6;

        fake_memory_init(root, BS);
        fake_write(root, "devices/system/node/online", "0,4,6\n");
        fake_add_node(root, 0, "0-1", "10 21 40");
        fake_add_node(root, 4, "2-3", "21 10 18");
        fake_add_node(root, 6, "", "40 18 10");
        fake_add_cpu(root, 0, 0, "0", true);
        fake_add_cpu(root, 1, 0, "1", true);
        fake_add_cpu(root, 2, 4, "2", true);
        fake_add_cpu(root, 3, 4, "3", true);
        fake_add_block(root, 0, 0, "online", "Normal");
        fake_add_block(root, 100, 6, "online", "Movable");
        t = load(root);
        assert_int_equal(t->n_nodes, 3);
        assert_int_equal(t->max_node, 6);
        assert_int_equal(t->nodes[0].id, 0);
        assert_int_equal(t->nodes[1].id, 4);
        assert_int_equal(t->nodes[2].id, 6);
        assert_null(topology_node(t, 1));
        n4 = topology_node(t, 4);
        n6 = topology_node(t, 6);
        assert_non_null(n4);
        assert_non_null(n6);
        assert_int_equal(n6->distance[0], 40);
        assert_int_equal(n6->distance[4], 18);
        assert_int_equal(n6->distance[6], 10);
        assert_int_equal(n6->distance[1], 0);           /* no node1: unknown */
        assert_int_equal(n4->distance[0], 21);
        assert_int_equal(writer(t, 6, NULL), 4);
        assert_int_equal(writer(t, 6, "2-3"), 0);
        assert_picks(t, 4, NULL, 8, "2,3");
        assert_int_equal(n6->movable_bytes, BS);
        assert_true(n6->has_blocks);
        assert_int_equal(n6->first_block, 100);
        topology_free(TAKE_PTR(t));

        /*
         * Node listings interleave by id, and an old kernel's block linked
         * from two nodes belongs to the lower one.
         */
        fake_add_block(root, 50, 6, "offline", "Movable");
        fake_add_block(root, 51, 0, "offline", "Movable");
        fake_add_block(root, 52, 6, "offline", "Movable");
        fake_link_block(root, 52, 4);
        t = load(root);
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 52, 50, 51 }, 3, TOPO_REFRESH_TRUST_NEW), 0);
        assert_int_equal(topology_block(t, 50)->node, 6);
        assert_int_equal(topology_block(t, 51)->node, 0);
        assert_int_equal(topology_block(t, 52)->node, 4);
        assert_int_equal(topology_block(t, 100)->node, 6);
        topology_free(TAKE_PTR(t));
        t = load(root);
        assert_int_equal(topology_block(t, 52)->node, 4);
        assert_int_equal(topology_block(t, 0)->node, 0);
        topology_free(TAKE_PTR(t));

        /* Without node/online the directory listing gives the order. */
        fake_unlink(root, "devices/system/node/online");
        t = load(root);
        assert_int_equal(topology_node(t, 6)->distance[4], 18);
        assert_int_equal(writer(t, 6, NULL), 4);
}

static void test_memory_by_zone(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;
        const struct topo_node *n0, *n1, *n2;

        for (uint64_t b = 16; b < 20; b++)
                fake_add_block(root, b, 1, "online", "Movable");
        fake_add_block(root, 20, 2, "offline", "Movable Normal");
        fake_add_block(root, 21, 2, "offline", "Movable");
        fake_add_block(root, 22, 2, "online", "Movable");
        fake_add_block(root, 23, 2, "online", "none");  /* spans zones: kernel memory */
        fake_add_block(root, 30, -1, "online", "Normal"); /* no link yet: no node */
        fake_add_block(root, 5, 0, "going-offline", "Normal");
        t = load(root);
        n0 = topology_node(t, 0);
        n1 = topology_node(t, 1);
        n2 = topology_node(t, 2);

        /* Block 0 is DMA32, still kernel memory; block 5 is going offline. */
        assert_int_equal(n0->kernel_bytes, 7 * BS);
        assert_int_equal(n0->movable_bytes, 0);
        assert_int_equal(n1->kernel_bytes, 8 * BS);
        assert_int_equal(n1->movable_bytes, 4 * BS);
        assert_int_equal(n2->kernel_bytes, BS);
        assert_int_equal(n2->movable_bytes, BS);

        assert_true(n0->has_blocks);
        assert_int_equal(n0->first_block, 0);
        assert_int_equal(n0->last_block, 7);
        assert_true(n1->has_blocks);
        assert_int_equal(n1->first_block, 8);
        assert_int_equal(n1->last_block, 19);
        /* Offline blocks count for the span too. */
        assert_true(n2->has_blocks);
        assert_int_equal(n2->first_block, 20);
        assert_int_equal(n2->last_block, 23);
}

/* One broken block must not take the whole topology down. */
static void test_unreadable_block(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        fake_unlink(root, "devices/system/memory/memory3/state");
        fake_mkdir(root, "devices/system/memory/memory3/state");
        t = load(root);
        assert_int_equal(topology_node(t, 0)->kernel_bytes, 7 * BS);
        assert_int_equal(topology_node(t, 1)->kernel_bytes, 8 * BS);
        /* In the table, unread and said so, for the runner to report: never skipped in silence. */
        assert_non_null(topology_block(t, 3));
        assert_int_equal(topology_block(t, 3)->state, BLOCK_STATE_UNKNOWN);
        assert_int_equal(topology_block(t, 3)->error, -EISDIR);
        assert_int_equal(topology_block(t, 2)->error, 0);
        assert_int_equal(topology_block(t, 4)->state, BLOCK_STATE_ONLINE);

        /* A refresh says so too, and forgets it once the block reads again. */
        fake_add_block(root, 20, 1, "offline", "Movable");
        fake_unlink(root, "devices/system/memory/memory20/state");
        fake_mkdir(root, "devices/system/memory/memory20/state");
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 3, 20 }, 2, 0), 0);
        assert_int_equal(topology_block(t, 3)->error, -EISDIR);
        assert_int_equal(topology_block(t, 20)->error, -EISDIR);
        assert_int_equal(topology_block(t, 20)->state, BLOCK_STATE_UNKNOWN);
        fake_rmdir(root, "devices/system/memory/memory3/state");
        fake_write(root, "devices/system/memory/memory3/state", "online\n");
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 3 }, 1, 0), 0);
        assert_int_equal(topology_block(t, 3)->error, 0);
        assert_int_equal(topology_block(t, 3)->state, BLOCK_STATE_ONLINE);
        assert_int_equal(topology_node(t, 0)->kernel_bytes, 8 * BS);
        topology_free(TAKE_PTR(t));

        /* A block whose address would wrap is as unreadable: it must not look like address 0. */
        fake_add_block(root, UINT64_C(1) << 37, 1, "offline", "Movable");
        t = load(root);
        assert_int_equal(topology_block(t, UINT64_C(1) << 37)->error, -ERANGE);
        assert_int_equal(topology_block(t, UINT64_C(1) << 37)->state, BLOCK_STATE_UNKNOWN);
        assert_int_equal(topology_node(t, 1)->last_block, 15);   /* unread blocks span nothing */
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { (UINT64_C(1) << 37) + 1 }, 1,
                                          TOPO_REFRESH_TRUST_NEW), 0);
        assert_int_equal(topology_block(t, (UINT64_C(1) << 37) + 1)->error, -ERANGE);
}

/* Every readable block's state and node link, for the runner to reuse. */
static void test_block_table(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;
        const struct topo_block *b;

        fake_add_block(root, 20, 2, "offline", "Movable Normal");
        fake_add_block(root, 30, -1, "offline", "Normal");     /* no link yet */
        fake_add_block(root, 100, 1, "going-offline", "Normal");
        fake_add_block(root, 9999, 0, "weird", "Normal");
        t = load(root);

        assert_int_equal(t->n_blocks, 16 + 4);
        for (size_t i = 1; i < t->n_blocks; i++)
                assert_true(t->blocks[i - 1].id < t->blocks[i].id);

        b = topology_block(t, 0);
        assert_non_null(b);
        assert_int_equal(b->node, 0);
        assert_int_equal(b->state, BLOCK_STATE_ONLINE);
        b = topology_block(t, 15);
        assert_int_equal(b->node, 1);
        b = topology_block(t, 20);
        assert_int_equal(b->node, 2);
        assert_int_equal(b->state, BLOCK_STATE_OFFLINE);
        b = topology_block(t, 30);
        assert_int_equal(b->node, NODE_NONE);
        assert_int_equal(b->state, BLOCK_STATE_OFFLINE);
        assert_int_equal(topology_block(t, 100)->state, BLOCK_STATE_GOING_OFFLINE);
        assert_int_equal(topology_block(t, 9999)->state, BLOCK_STATE_UNKNOWN);
        assert_null(topology_block(t, 16));
        assert_null(topology_block(t, 10000));
        assert_null(topology_block(NULL, 0));
}

static void test_no_blocks_span(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = load(root);

        assert_false(topology_node(t, 2)->has_blocks);
        assert_int_equal(topology_node(t, 2)->kernel_bytes, 0);
        assert_int_equal(topology_node(t, 2)->movable_bytes, 0);
}

/* Some note of t's contains what. */
static void assert_note(const struct topology *t, const char *what) {
        for (size_t i = 0; i < t->n_notes; i++)
                if (strstr(t->notes[i], what))
                        return;
        for (size_t i = 0; i < t->n_notes; i++)
                print_message("note: %s\n", t->notes[i]);
        fail_msg("no note says \"%s\"", what);
}

/* One bad attribute costs that piece, with a note saying why, never the whole machine. */
static void test_malformed(void **state) {
        const char *root = *state;
        static const char *const bad_online[] = { "2\n", "yes\n", "" };
        _cleanup_free_ char *saved = NULL, *long_line = NULL;
        size_t long_len = 100000;

        for (size_t i = 0; i < ELEMENTSOF(bad_online); i++) {
                _cleanup_topology_ struct topology *t = NULL;

                if (bad_online[i][0])
                        fake_write(root, "devices/system/cpu/cpu2/online", "%s", bad_online[i]);
                else {
                        fake_unlink(root, "devices/system/cpu/cpu2/online");
                        fake_mkdir(root, "devices/system/cpu/cpu2/online");
                }
                t = load(root);
                assert_true(t->cpus[2].present);
                assert_false(t->cpus[2].online);        /* never written from */
                assert_true(t->cpus[3].online);
                assert_note(t, "cpu2/online");
                assert_picks(t, 0, NULL, 8, "0,1");     /* core {0,2} still has cpu0 */
                if (!bad_online[i][0])
                        fake_rmdir(root, "devices/system/cpu/cpu2/online");
        }
        fake_write(root, "devices/system/cpu/cpu2/online", "1\n");

        saved = fake_read(root, "devices/system/node/node1/distance");
        long_line = malloc(long_len + 1);
        assert_non_null(long_line);
        for (size_t i = 0; i < long_len; i += 3)
                memcpy(long_line + i, "10 ", MIN((size_t) 3, long_len - i));
        long_line[long_len] = '\0';
        const char *bad_distances[] = { "20 ten 17", "20 10", "20 99999999999 17", long_line };
        for (size_t i = 0; i < ELEMENTSOF(bad_distances); i++) {
                _cleanup_topology_ struct topology *t = NULL;

                fake_write(root, "devices/system/node/node1/distance", "%s\n", bad_distances[i]);
                t = load(root);
                assert_int_equal(t->n_nodes, 3);
                /* Node 1's distances are unknown; the others' still count. */
                for (int k = 0; k <= t->max_node; k++)
                        assert_int_equal(topology_node(t, 1)->distance[k], 0);
                assert_int_equal(topology_node(t, 2)->distance[1], 17);
                assert_int_equal(writer(t, 2, NULL), 1);
                assert_note(t, "node1/distance");
        }
        fake_write(root, "devices/system/node/node1/distance", "%s\n", saved);

        {
                _cleanup_topology_ struct topology *t = NULL;

                /* node0's cpulist is only the fallback for CPUs without a node link. */
                fake_write(root, "devices/system/node/node0/cpulist", "0-\n");
                fake_write(root, "devices/system/cpu/cpu1/topology/thread_siblings_list", "1;3\n");
                t = load(root);
                assert_int_equal(t->cpus[0].node, 0);
                assert_int_equal(t->cpus[1].core, 1);   /* a core of its own */
                assert_note(t, "node0/cpulist");
                assert_note(t, "cpu1/topology/thread_siblings_list");
                fake_write(root, "devices/system/node/node0/cpulist", "0-3\n");
                fake_write(root, "devices/system/cpu/cpu1/topology/thread_siblings_list", "1,3\n");
        }

        {
                _cleanup_topology_ struct topology *t = NULL;

                /* Node ids past NODE_ID_MAX: directories, node/online, initiators, CPU links. */
                fake_mkdir(root, "devices/system/node/node99999999");
                fake_write(root, "devices/system/node/node99999999/cpulist", "0\n");
                fake_write(root, "devices/system/node/online", "0-2,1024\n");
                fake_symlink(root, "devices/system/node/node2/access1/initiators/node5000", "../../../node5000");
                fake_symlink(root, "devices/system/node/node2/access1/initiators/node1", "../../../node1");
                fake_symlink(root, "devices/system/cpu/cpu7/node2000", "../../node/node2000");
                fake_unlink(root, "devices/system/cpu/cpu7/node1");
                fake_write(root, "devices/system/cpu/cpu7/topology/thread_siblings_list", "5,7\n");
                t = load(root);
                assert_int_equal(t->n_nodes, 3);
                assert_int_equal(t->max_node, 2);
                assert_null(topology_node(t, 99999999));
                assert_int_equal(topology_node(t, 2)->distance[1], 17);
                assert_true(cpuset_isset(topology_node(t, 2)->initiators, 1));
                assert_int_equal(cpuset_count(topology_node(t, 2)->initiators), 1);
                assert_int_equal(t->cpus[7].node, 1);   /* from node1's cpulist */
                assert_note(t, "node99999999");
                assert_note(t, "node/online");
                assert_note(t, "initiators/node5000");
                assert_note(t, "cpu7/node2000");
        }
}

static void test_cpu_out_of_range(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        fake_add_cpu(root, CPUSET_MAX, 0, "8192", true);
        t = load(root);
        assert_int_equal(t->n_cpus, 8);
        assert_note(t, "cpu8192");
}

static void assert_load_error(const char *root, unsigned flags, int want, const char *what) {
        struct topology sentinel, *t = &sentinel;
        struct topology_error err = {};
        int r = topology_load_full(root, flags, &t, &err);

        if (r != want)
                fail_msg("topology_load_full: got %d, want %d (%s)", r, want, err.reason);
        assert_ptr_equal(t, &sentinel);         /* untouched on failure */
        if (!strstr(err.reason, what))
                fail_msg("reason \"%s\" does not say \"%s\"", err.reason, what);
        assert_int_equal(topology_load(root, &t), flags ? 0 : want);
        if (flags)
                topology_free(t);
}

/* Without the block size nothing can be planned: a clear error, not a guess. */
static void test_bad_block_size(void **state) {
        const char *root = *state;
        static const char *const bad[] = { "0x8z", "0", "", "0x0x8000000", "-8000000", "8000000 8000000",
                                           "\x1b]0;owned\x07" };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                fake_write(root, "devices/system/memory/block_size_bytes", "%s\n", bad[i]);
                assert_load_error(root, 0, -EINVAL, "devices/system/memory/block_size_bytes");
        }
        {
                struct topology *t = NULL;
                struct topology_error err = {};

                /* The value is shown escaped: it comes from the tree. */
                assert_int_equal(topology_load_full(root, 0, &t, &err), -EINVAL);
                assert_null(strchr(err.reason, '\x1b'));
                assert_non_null(strstr(err.reason, "\\x1b]0;owned\\x07"));
        }
        fake_unlink(root, "devices/system/memory/block_size_bytes");
        fake_mkdir(root, "devices/system/memory/block_size_bytes");
        assert_load_error(root, 0, -EISDIR, "devices/system/memory/block_size_bytes");
        fake_rmdir(root, "devices/system/memory/block_size_bytes");
        fake_write(root, "devices/system/memory/block_size_bytes", "0x8000000\n");

        _cleanup_topology_ struct topology *t = load(root);
        assert_int_equal(t->block_size, BS);
        assert_int_equal(topology_load(NULL, &t), -EINVAL);
}

/* --once and --dry-run on a tree with no memory directory: an error, not "0 blocks". */
static void test_need_memory(void **state) {
        const char *root = *state;

        fake_add_node(root, 0, "0", "10");
        fake_add_cpu(root, 0, 0, "0", true);
        assert_load_error(root, TOPO_LOAD_NEED_MEMORY, -ENODEV, "devices/system/memory");
        /* A memory directory without block_size_bytes has no hotplug either. */
        fake_mkdir(root, "devices/system/memory");
        assert_load_error(root, TOPO_LOAD_NEED_MEMORY, -ENODEV, "block_size_bytes");
        fake_memory_init(root, BS);
        {
                _cleanup_topology_ struct topology *t = NULL;

                assert_int_equal(topology_load_full(root, TOPO_LOAD_NEED_MEMORY, &t, NULL), 0);
                assert_int_equal(t->block_size, BS);
        }
}

static void test_no_numa(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        /* CONFIG_NUMA=n: no node directory, no node links anywhere. */
        fake_memory_init(root, BS);
        fake_write(root, "devices/system/cpu/cpu0/topology/thread_siblings_list", "0-1\n");
        fake_write(root, "devices/system/cpu/cpu1/topology/thread_siblings_list", "0-1\n");
        fake_write(root, "devices/system/cpu/cpu1/online", "1\n");
        fake_add_block(root, 0, -1, "online", "Normal");
        fake_add_block(root, 1, -1, "offline", "Normal Movable");
        t = load(root);
        assert_int_equal(t->n_nodes, 1);
        assert_int_equal(t->nodes[0].id, 0);
        assert_int_equal(t->nodes[0].distance[0], 10);
        assert_int_equal(t->cpus[1].node, 0);
        assert_int_equal(t->nodes[0].kernel_bytes, BS);
        assert_int_equal(t->nodes[0].last_block, 1);
        assert_int_equal(writer(t, 0, NULL), 0);
        assert_picks(t, 0, NULL, 8, "0");
}

static void test_no_memory(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        fake_add_node(root, 0, "0", "10");
        fake_add_cpu(root, 0, 0, "0", true);
        t = load(root);
        assert_int_equal(t->block_size, 0);
        assert_false(t->nodes[0].has_blocks);
}

static void test_empty_node_dir(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        /* A node directory with no nodes in it: nothing to write from, no crash. */
        fake_mkdir(root, "devices/system/node");
        fake_add_cpu(root, 0, -1, "0", true);
        t = load(root);
        assert_int_equal(t->n_nodes, 0);
        assert_int_equal(t->cpus[0].node, NODE_NONE);
        assert_null(topology_node(t, 0));
        assert_int_equal(writer(t, 0, NULL), NODE_NONE);
        assert_picks(t, 0, NULL, 8, "");
}

/* A 3 TiB pmem range in 128 MiB blocks: one pass, no per-block rescans. */
static void test_many_blocks(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;
        uint64_t start;

        fake_add_blocks(root, 16, 24576, 2, "online", "Movable");
        start = now_usec();
        t = load(root);
        /* Generous: valgrind is slow, a quadratic scan takes minutes. */
        assert_true(now_usec() - start < 60 * USEC_PER_SEC);
        assert_int_equal(topology_node(t, 2)->movable_bytes, 24576 * BS);
        assert_int_equal(topology_node(t, 2)->first_block, 16);
        assert_int_equal(topology_node(t, 2)->last_block, 16 + 24575);
        assert_int_equal(topology_node(t, 1)->last_block, 15);
}

/* Only the named blocks are read again; totals, spans and the table follow. */
static void test_refresh_blocks(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = load(root);
        const uint64_t first[] = { 21, 20, 22, 23, 20 };
        const struct topo_node *n1 = topology_node(t, 1);
        const struct topo_block *b;

        fake_add_block(root, 20, 1, "offline", "Movable Normal");
        fake_add_block(root, 21, 1, "offline", "Movable");
        fake_add_block(root, 22, 1, "online", "Movable");       /* another agent onlined it */
        fake_add_block(root, 23, -1, "offline", "Normal");      /* no link yet */
        assert_int_equal(topology_refresh(t, first, ELEMENTSOF(first), 0), 0);

        assert_int_equal(t->n_blocks, 16 + 4);
        for (size_t i = 1; i < t->n_blocks; i++)
                assert_true(t->blocks[i - 1].id < t->blocks[i].id);
        b = topology_block(t, 20);
        assert_int_equal(b->node, 1);
        assert_int_equal(b->state, BLOCK_STATE_OFFLINE);
        b = topology_block(t, 22);
        assert_int_equal(b->state, BLOCK_STATE_ONLINE);
        assert_int_equal(b->zone, TOPO_ZONE_MOVABLE);
        assert_int_equal(topology_block(t, 23)->node, NODE_NONE);
        assert_int_equal(n1->kernel_bytes, 8 * BS);
        assert_int_equal(n1->movable_bytes, BS);
        assert_int_equal(n1->last_block, 22);

        /* 21 is removed again, 20 came online. */
        fake_remove_block(root, 21, 1);
        fake_write(root, "devices/system/memory/memory20/state", "online\n");
        fake_write(root, "devices/system/memory/memory20/valid_zones", "Movable\n");
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 20, 21 }, 2, 0), 0);
        assert_null(topology_block(t, 21));
        assert_int_equal(t->n_blocks, 16 + 3);
        assert_int_equal(topology_block(t, 20)->state, BLOCK_STATE_ONLINE);
        assert_int_equal(n1->movable_bytes, 2 * BS);

        /* Online events for blocks the table has online are our own writes: not read. */
        fake_write(root, "devices/system/memory/memory22/state", "offline\n");
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 22 }, 1, TOPO_REFRESH_SKIP_ONLINE), 0);
        assert_int_equal(topology_block(t, 22)->state, BLOCK_STATE_ONLINE);
        assert_int_equal(n1->movable_bytes, 2 * BS);
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 22 }, 1, 0), 0);
        assert_int_equal(topology_block(t, 22)->state, BLOCK_STATE_OFFLINE);
        assert_int_equal(n1->movable_bytes, BS);

        /* New blocks from add events are taken as offline, unread; their links still count. */
        fake_add_block(root, 30, 1, "online", "Movable");
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 30 }, 1, TOPO_REFRESH_TRUST_NEW), 0);
        assert_int_equal(topology_block(t, 30)->state, BLOCK_STATE_OFFLINE);
        assert_int_equal(topology_block(t, 30)->node, 1);
        assert_int_equal(n1->last_block, 30);
        assert_int_equal(n1->movable_bytes, BS);
        /* Blocks it has are read as before. */
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 30 }, 1, TOPO_REFRESH_TRUST_NEW), 0);
        assert_int_equal(topology_block(t, 30)->state, BLOCK_STATE_ONLINE);
        assert_int_equal(n1->movable_bytes, 2 * BS);

        /* Nothing to read is fine, and reads nothing. */
        assert_int_equal(topology_refresh(t, NULL, 0, 0), 0);
        assert_int_equal(topology_refresh(t, NULL, 1, 0), -EINVAL);
}

/*
 * A range's blocks the kernel has linked join the batch of the first add
 * event that arrived: udev hands the rest over one by one, long after.
 */
static void test_refresh_adopt(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = load(root);
        const struct topo_node *n1 = topology_node(t, 1);
        uint64_t *adopted = (uint64_t *) 1, event[] = { 40 };
        size_t n_adopted = 7;

        fake_add_blocks(root, 40, 4, 1, "offline", "Movable Normal");
        fake_add_block(root, 44, -1, "offline", "Movable Normal");     /* no link yet: its add still runs */

        /* One out parameter without the other: refused, both untouched. */
        assert_int_equal(topology_refresh_adopt(t, event, 1, TOPO_REFRESH_TRUST_NEW, &adopted, NULL), -EINVAL);
        assert_ptr_equal(adopted, (uint64_t *) 1);
        assert_int_equal(topology_refresh_adopt(t, NULL, 1, 0, &adopted, &n_adopted), -EINVAL);
        assert_int_equal(n_adopted, 7);

        assert_int_equal(topology_refresh_adopt(t, event, 1, TOPO_REFRESH_TRUST_NEW, &adopted, &n_adopted), 0);
        assert_int_equal(n_adopted, 3);
        assert_int_equal(adopted[0], 41);
        assert_int_equal(adopted[1], 42);
        assert_int_equal(adopted[2], 43);
        free(adopted);
        for (uint64_t id = 40; id < 44; id++) {
                assert_non_null(topology_block(t, id));
                assert_int_equal(topology_block(t, id)->state, BLOCK_STATE_OFFLINE);
                assert_int_equal(topology_block(t, id)->node, 1);
        }
        assert_null(topology_block(t, 44));
        assert_int_equal(n1->last_block, 43);

        /* Once in the table, a block is not adopted again; the unlinked one is once linked. */
        fake_link_block(root, 44, 1);
        assert_int_equal(topology_refresh_adopt(t, NULL, 0, 0, &adopted, &n_adopted), 0);
        assert_int_equal(n_adopted, 1);
        assert_int_equal(adopted[0], 44);
        free(adopted);
        assert_int_equal(topology_refresh_adopt(t, NULL, 0, 0, &adopted, &n_adopted), 0);
        assert_int_equal(n_adopted, 0);
        assert_null(adopted);
}

/* Our own writes update the totals without reading; "online" leaves the zone to read. */
static void test_set_online(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;
        const struct topo_node *n1;

        fake_add_block(root, 20, 1, "offline", "Movable Normal");
        fake_add_block(root, 21, 1, "offline", "Movable Normal");
        fake_add_block(root, 22, 1, "offline", "Movable Normal");
        t = load(root);
        n1 = topology_node(t, 1);

        topology_set_online(t, 20, NODE_NONE, ZONE_MOVABLE);
        topology_set_online(t, 21, NODE_NONE, ZONE_KERNEL);
        topology_set_online(t, 99, NODE_NONE, ZONE_KERNEL);        /* not in the table: nothing to do */
        assert_null(topology_block(t, 99));
        assert_int_equal(n1->movable_bytes, BS);
        assert_int_equal(n1->kernel_bytes, 9 * BS);
        /* Counted once, however often it is set. */
        topology_set_online(t, 20, NODE_NONE, ZONE_MOVABLE);
        assert_int_equal(n1->movable_bytes, BS);

        topology_set_online(t, 22, NODE_NONE, ZONE_ONLINE);
        assert_int_equal(topology_block(t, 22)->state, BLOCK_STATE_ONLINE);
        assert_int_equal(topology_block(t, 22)->zone, TOPO_ZONE_UNKNOWN);
        assert_int_equal(n1->movable_bytes, BS);
        assert_int_equal(n1->kernel_bytes, 9 * BS);
        /* The kernel put it in ZONE_MOVABLE: valid_zones of an online block names its zone. */
        fake_write(root, "devices/system/memory/memory22/state", "online\n");
        fake_write(root, "devices/system/memory/memory22/valid_zones", "Movable\n");
        assert_int_equal(topology_read_zones(t), 0);
        assert_int_equal(topology_block(t, 22)->zone, TOPO_ZONE_MOVABLE);
        assert_int_equal(n1->movable_bytes, 2 * BS);
        assert_false(t->stale);
}

/* Links of blocks named, as they are now; a block whose link came late gets it when onlined. */
static void test_read_links(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = load(root);
        const uint64_t ids[] = { 3, 12, 40, 41 };
        int nodes[4];

        fake_add_block(root, 40, 1, "offline", "Movable");
        fake_add_block(root, 41, -1, "offline", "Movable");     /* link not made yet */
        assert_int_equal(topology_read_links(t, ids, 4, nodes), 0);
        assert_int_equal(nodes[0], 0);
        assert_int_equal(nodes[1], 1);
        assert_int_equal(nodes[2], 1);
        assert_int_equal(nodes[3], NODE_NONE);
        assert_int_equal(topology_read_links(t, NULL, 0, NULL), 0);
        assert_int_equal(topology_read_links(t, NULL, 1, nodes), -EINVAL);

        assert_int_equal(topology_refresh(t, ids + 3, 1, TOPO_REFRESH_TRUST_NEW), 0);
        assert_int_equal(topology_block(t, 41)->node, NODE_NONE);
        topology_set_online(t, 41, 1, ZONE_MOVABLE);
        assert_int_equal(topology_block(t, 41)->node, 1);
        assert_int_equal(topology_node(t, 1)->movable_bytes, BS);
        /* A node it has stays. */
        topology_set_online(t, 3, 1, ZONE_KERNEL);
        assert_int_equal(topology_block(t, 3)->node, 0);
}

/* Node and CPU hotplug, a CPU-less node's first memory: nodes and CPUs read again, blocks kept. */
/* CPU-less node 3 comes online, nearest node 1, as kmem's add begins. */
static void node3_online(const char *root) {
        fake_add_node(root, 3, "", "40 30 40 10");
        fake_write(root, "devices/system/node/node0/distance", "10 20 30 40\n");
        fake_write(root, "devices/system/node/node1/distance", "20 10 17 30\n");
        fake_write(root, "devices/system/node/node2/distance", "30 17 10 40\n");
        fake_write(root, "devices/system/node/online", "0-3\n");
}

static void test_refresh_machine(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = load(root);
        const uint64_t ids[] = { 40 };
        size_t n_blocks;

        fake_add_block(root, 40, 1, "offline", "Movable");
        assert_int_equal(topology_refresh(t, ids, 1, 0), 0);
        n_blocks = t->n_blocks;
        assert_true(numa_bitmask_isbitset(topology_node(t, 1)->cpus, 7));

        /* CPU 7 goes offline. */
        fake_write(root, "devices/system/cpu/cpu7/online", "0\n");
        fake_write(root, "devices/system/cpu/online", "0-6\n");
        assert_int_equal(topology_sync_machine(t), 0);
        assert_false(numa_bitmask_isbitset(topology_node(t, 1)->cpus, 7));
        assert_int_equal(t->n_blocks, n_blocks);
        assert_int_equal(topology_node(t, 0)->kernel_bytes, 8 * BS);
        assert_int_equal(topology_node(t, 1)->kernel_bytes, 8 * BS);
        assert_int_equal(topology_node(t, 1)->last_block, 40);

        /* Node 3 comes online (CPU-less, memory to follow). */
        node3_online(root);
        fake_add_block(root, 96, 3, "offline", "Movable");
        assert_int_equal(topology_sync_machine(t), 0);
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 96 }, 1, TOPO_REFRESH_TRUST_NEW), 0);
        assert_non_null(topology_node(t, 3));
        assert_int_equal(topology_block(t, 96)->node, 3);
        assert_true(topology_node(t, 3)->has_blocks);

        /* Node 2 has no CPUs and no memory: its HMAT initiators come with its first online block. */
        fake_add_block(root, 64, 2, "offline", "Movable");
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 64 }, 1, TOPO_REFRESH_TRUST_NEW), 0);
        assert_null(topology_node(t, 2)->initiators);
        topology_set_online(t, 64, 2, ZONE_MOVABLE);
        assert_true(t->stale);
        fake_add_initiator(root, 2, 1);
        assert_int_equal(topology_sync_machine(t), 0);
        assert_false(t->stale);
        assert_non_null(topology_node(t, 2)->initiators);
        assert_int_equal(writer(t, 2, NULL), 1);
        assert_int_equal(topology_node(t, 2)->movable_bytes, BS);
        assert_int_equal(t->n_blocks, n_blocks + 2);

        /* Another agent onlined node-3 memory: seen through its online event, nodes read again. */
        fake_write(root, "devices/system/memory/memory96/state", "online\n");
        fake_add_initiator(root, 3, 0);
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 96 }, 1, TOPO_REFRESH_SKIP_ONLINE), 0);
        assert_false(t->stale);
        assert_non_null(topology_node(t, 3)->initiators);
        assert_int_equal(topology_node(t, 3)->movable_bytes, BS);
}

/*
 * Only nodes changed (the CPU half of the signature is as it was): the
 * nodes are read again, the CPUs kept. A CPU gone offline at the same
 * time changes that half: then the CPUs are read again too.
 */
static void test_reload_keeps_cpus(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = load(root);

        /* Not how CPUs change (that comes with cpu/online): if read again, it would show. */
        fake_write(root, "devices/system/cpu/cpu6/topology/thread_siblings_list", "6\n");
        node3_online(root);
        assert_int_equal(topology_sync_machine(t), 0);
        assert_non_null(topology_node(t, 3));
        assert_int_equal(topology_node(t, 3)->distance[1], 30);
        assert_int_equal(topology_node(t, 1)->distance[3], 30);
        assert_int_equal(t->cpus[6].core, 4);
        assert_true(numa_bitmask_isbitset(topology_node(t, 1)->cpus, 6));
        assert_int_equal(writer(t, 3, NULL), 1);

        /* CPU 7 offline and node 3 gone at once: both seen. */
        fake_write(root, "devices/system/cpu/cpu7/online", "0\n");
        fake_write(root, "devices/system/cpu/online", "0-6\n");
        fake_write(root, "devices/system/node/online", "0-2\n");
        fake_remove_dir_tree(root, "devices/system/node/node3");
        assert_int_equal(topology_sync_machine(t), 0);
        assert_null(topology_node(t, 3));
        assert_false(numa_bitmask_isbitset(topology_node(t, 1)->cpus, 7));
        assert_int_equal(t->cpus[6].core, 6);
}

/*
 * A CPU-less node came and nothing else: the nodes known keep their
 * initiators (they change only when a CPU-less node gets its first
 * memory, which makes the topology stale), the new node's are read, and
 * every node's distances are read again for the new column. Once a
 * CPU-less node got memory, the initiators are read again.
 */
static void test_new_node_keeps_initiators(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = NULL;

        fake_add_initiator(root, 2, 0);
        t = load(root);
        assert_int_equal(writer(t, 2, NULL), 0);

        /* Not how initiators change (that comes with memory): if read again, it would show. */
        fake_remove_dir_tree(root, "devices/system/node/node2/access1");
        fake_add_initiator(root, 2, 1);
        node3_online(root);
        fake_add_initiator(root, 3, 1);
        assert_int_equal(topology_sync_machine(t), 0);
        assert_int_equal(writer(t, 2, NULL), 0);
        assert_non_null(topology_node(t, 3)->initiators);
        assert_int_equal(writer(t, 3, NULL), 1);
        assert_int_equal(topology_node(t, 0)->distance[3], 40);
        assert_int_equal(topology_node(t, 3)->distance[1], 30);

        /* Node 2's first memory: stale, and its initiators are read again. */
        fake_add_block(root, 64, 2, "offline", "Movable");
        assert_int_equal(topology_refresh(t, (const uint64_t[]) { 64 }, 1, TOPO_REFRESH_TRUST_NEW), 0);
        topology_set_online(t, 64, 2, ZONE_MOVABLE);
        assert_true(t->stale);
        assert_int_equal(topology_sync_machine(t), 0);
        assert_false(t->stale);
        assert_int_equal(writer(t, 2, NULL), 1);
}

/* The seam between machine.c and block-cache.c: the machine loads, swaps and frees apart from the blocks. */
static void test_machine_apart(void **state) {
        const char *root = *state;
        _cleanup_topology_ struct topology *t = load(root);
        _cleanup_free_ char *signature = NULL;
        struct topology fresh = { .sysfs_root = (char *) root };
        struct topology_error e = {};
        const struct topo_block *b;
        size_t n_blocks = t->n_blocks;
        uint64_t kernel1 = topology_node(t, 1)->kernel_bytes;
        char *bad;

        assert_true(kernel1 > 0);
        assert_int_equal(machine_read_signature(root, &signature), 0);
        assert_string_equal(signature, t->signature);

        /* CPU 7 goes offline; a fresh machine sees it, with no block read. */
        fake_write(root, "devices/system/cpu/cpu7/online", "0\n");
        fake_write(root, "devices/system/cpu/online", "0-6\n");
        assert_int_equal(machine_load(&fresh, &e), 0);
        assert_string_equal(e.reason, "");
        assert_null(fresh.blocks);
        assert_int_equal(fresh.n_nodes, t->n_nodes);
        assert_false(numa_bitmask_isbitset(topology_node(&fresh, 1)->cpus, 7));
        assert_int_equal(topology_node(&fresh, 1)->kernel_bytes, 0);
        assert_string_not_equal(fresh.signature, t->signature);

        /* Swapped: t has the new machine and keeps its blocks; fresh has the old machine. */
        machine_swap(t, &fresh);
        assert_false(numa_bitmask_isbitset(topology_node(t, 1)->cpus, 7));
        assert_true(numa_bitmask_isbitset(topology_node(&fresh, 1)->cpus, 7));
        assert_int_equal(t->n_blocks, n_blocks);
        b = topology_block(t, t->blocks[0].id);
        assert_ptr_equal(b, &t->blocks[0]);
        assert_null(fresh.blocks);
        /* The zone totals are the cache's to count again; a swap alone leaves them with the new nodes at 0. */
        assert_int_equal(topology_node(t, 1)->kernel_bytes, 0);
        assert_int_equal(topology_node(&fresh, 1)->kernel_bytes, kernel1);

        machine_done(&fresh);
        assert_null(fresh.nodes);
        assert_int_equal(fresh.n_nodes, 0);
        assert_null(fresh.cpus);
        assert_null(fresh.signature);
        assert_null(fresh.notes);

        /* A node directory that cannot be listed: the machine fails, saying which. */
        bad = fake_tree_new();
        fake_write(bad, "devices/system/node", "not a directory\n");
        fresh = (struct topology) { .sysfs_root = bad };
        assert_int_equal(machine_load(&fresh, &e), -ENOTDIR);
        assert_string_equal(e.reason, "cannot list devices/system/node: Not a directory");
        machine_done(&fresh);
        fake_tree_free(bad);
        topology_error_set(NULL, "no error to fill: %d", 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_standard, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_siblings, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_wide_core, setup_empty, teardown),
                cmocka_unit_test_setup_teardown(test_banned_isolated_offline, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_missing_online_file, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_missing_siblings_and_links, setup_empty, teardown),
                cmocka_unit_test_setup_teardown(test_cpuless_nearest, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_cpuless_tie, setup_empty, teardown),
                cmocka_unit_test_setup_teardown(test_hmat_initiator, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_sparse_nodes, setup_empty, teardown),
                cmocka_unit_test_setup_teardown(test_memory_by_zone, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_unreadable_block, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_block_table, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_no_blocks_span, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_malformed, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_no_numa, setup_empty, teardown),
                cmocka_unit_test_setup_teardown(test_no_memory, setup_empty, teardown),
                cmocka_unit_test_setup_teardown(test_empty_node_dir, setup_empty, teardown),
                cmocka_unit_test_setup_teardown(test_cpu_out_of_range, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_bad_block_size, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_need_memory, setup_empty, teardown),
                cmocka_unit_test_setup_teardown(test_many_blocks, setup_standard_fast, teardown),
                cmocka_unit_test_setup_teardown(test_refresh_adopt, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_refresh_blocks, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_set_online, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_refresh_machine, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_reload_keeps_cpus, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_new_node_keeps_initiators, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_read_links, setup_standard, teardown),
                cmocka_unit_test_setup_teardown(test_machine_apart, setup_standard, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
