/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "blocks.h"
#include "blocks-scan.h"
#include "fake-tree.h"
#include "topology.h"
#include "util.h"

#define BS (128ULL << 20)

static int setup(void **state) {
        char *root = fake_tree_new();

        fake_memory_init(root, BS);
        *state = root;
        return 0;
}

static int teardown(void **state) {
        fake_tree_free(*state);
        return 0;
}

static void test_state_strings(void **state) {
        (void) state;
        assert_int_equal(block_state_from_string("online"), BLOCK_STATE_ONLINE);
        assert_int_equal(block_state_from_string("offline"), BLOCK_STATE_OFFLINE);
        assert_int_equal(block_state_from_string("going-offline"), BLOCK_STATE_GOING_OFFLINE);
        assert_int_equal(block_state_from_string("online_movable"), BLOCK_STATE_UNKNOWN);
        assert_int_equal(block_state_from_string("ERROR-UNKNOWN-5"), BLOCK_STATE_UNKNOWN);
        assert_int_equal(block_state_from_string(""), BLOCK_STATE_UNKNOWN);
        assert_int_equal(block_state_from_string(NULL), BLOCK_STATE_UNKNOWN);

        for (enum block_state s = BLOCK_STATE_OFFLINE; s <= BLOCK_STATE_GOING_OFFLINE; s++)
                assert_int_equal(block_state_from_string(block_state_to_string(s)), s);
        assert_string_equal(block_state_to_string(BLOCK_STATE_GOING_OFFLINE), "going-offline");
        assert_string_equal(block_state_to_string(BLOCK_STATE_UNKNOWN), "unknown");
        assert_string_equal(block_state_to_string((enum block_state) 99), "unknown");
}

static void test_id_from_name(void **state) {
        uint64_t id = 5;

        (void) state;
        assert_int_equal(block_id_from_name("memory0", &id), 0);
        assert_int_equal(id, 0);
        assert_int_equal(block_id_from_name("memory24575", &id), 0);
        assert_int_equal(id, 24575);
        id = 5;
        assert_int_equal(block_id_from_name("memory", &id), -EINVAL);
        assert_int_equal(block_id_from_name("memory-1", &id), -EINVAL);
        assert_int_equal(block_id_from_name("memory+1", &id), -EINVAL);
        assert_int_equal(block_id_from_name("memory 1", &id), -EINVAL);
        assert_int_equal(block_id_from_name("memory1a", &id), -EINVAL);
        assert_int_equal(block_id_from_name("memory_failure", &id), -EINVAL);
        assert_int_equal(block_id_from_name("node1", &id), -EINVAL);
        assert_int_equal(block_id_from_name(NULL, &id), -EINVAL);
        assert_int_equal(id, 5);
}

static unsigned zones_of(const char *root, const char *valid_zones) {
        struct mem_block b = {};

        fake_add_block(root, 1, 0, "offline", valid_zones);
        assert_int_equal(block_read(root, BS, 1, &b), 0);
        return b.valid_zones;
}

static void test_valid_zones(void **state) {
        const char *root = *state;

        assert_int_equal(zones_of(root, "Normal"), VALID_NORMAL);
        assert_int_equal(zones_of(root, "Movable"), VALID_MOVABLE);
        assert_int_equal(zones_of(root, "Normal Movable"), VALID_NORMAL | VALID_MOVABLE);
        assert_int_equal(zones_of(root, "Movable Normal"), VALID_NORMAL | VALID_MOVABLE);
        assert_int_equal(zones_of(root, "DMA32"), VALID_NORMAL);
        assert_int_equal(zones_of(root, "DMA"), VALID_NORMAL);
        assert_int_equal(zones_of(root, "DMA32 Movable"), VALID_NORMAL | VALID_MOVABLE);
        assert_int_equal(zones_of(root, "none"), 0);
        assert_int_equal(zones_of(root, ""), 0);
        assert_int_equal(zones_of(root, "Normalish Movables"), 0);   /* whole words only */
        assert_int_equal(zones_of(root, "Device"), 0);

        /* No valid_zones attribute (CONFIG_MEMORY_HOTREMOVE=n): unknown, not an error. */
        fake_unlink(root, "devices/system/memory/memory1/valid_zones");
        struct mem_block b = { .valid_zones = 77 };
        assert_int_equal(block_read(root, BS, 1, &b), 0);
        assert_int_equal(b.valid_zones, 0);
}

static void test_block_read(void **state) {
        const char *root = *state;
        struct mem_block b = {};

        fake_add_block(root, 40, 2, "offline", "Movable Normal");
        assert_int_equal(block_read(root, BS, 40, &b), 0);
        assert_int_equal(b.id, 40);
        assert_int_equal(b.phys_start, 40 * BS);
        assert_int_equal(b.state, BLOCK_STATE_OFFLINE);
        assert_int_equal(b.node, 2);
        assert_false(b.node_guessed);
        assert_int_equal(b.valid_zones, VALID_NORMAL | VALID_MOVABLE);
        assert_int_equal(b.region, -1);
        assert_null(b.device);
        assert_null(b.namespace_name);
        assert_null(b.namespace_uuid);

        /* A fresh block whose nodeK link is not there yet. */
        fake_add_block(root, 41, -1, "offline", "Normal");
        assert_int_equal(block_read(root, BS, 41, &b), 0);
        assert_int_equal(b.id, 41);
        assert_int_equal(b.node, NODE_NONE);
        fake_link_block(root, 41, 3);
        assert_int_equal(block_read(root, BS, 41, &b), 0);
        assert_int_equal(b.node, 3);
        assert_int_equal(b.valid_zones, VALID_NORMAL);

        fake_add_block(root, 42, 0, "going-offline", "Normal");
        assert_int_equal(block_read(root, BS, 42, &b), 0);
        assert_int_equal(b.state, BLOCK_STATE_GOING_OFFLINE);
}

/*
 * Reading valid_zones of a block the add has not linked to its node yet
 * oopses 6.1 (NODE_DATA(NUMA_NO_NODE) in valid_zones_show): on a NUMA
 * kernel it must stay unread until the nodeK link is there.
 */
static void test_no_valid_zones_before_link(void **state) {
        const char *root = *state;
        struct mem_block b = {};

        fake_add_block(root, 50, -1, "offline", "Movable Normal");
        /* No node directory: CONFIG_NUMA=n, where the read is safe and the zones count. */
        assert_int_equal(block_read(root, BS, 50, &b), 0);
        assert_int_equal(b.valid_zones, VALID_NORMAL | VALID_MOVABLE);

        fake_mkdir(root, "devices/system/node/node0");
        /* Unreadable if read at all: the test fails if valid_zones is opened. */
        fake_unlink(root, "devices/system/memory/memory50/valid_zones");
        fake_mkdir(root, "devices/system/memory/memory50/valid_zones");
        assert_int_equal(block_read(root, BS, 50, &b), 0);
        assert_int_equal(b.node, NODE_NONE);
        assert_int_equal(b.valid_zones, 0);
        assert_int_equal(b.state, BLOCK_STATE_OFFLINE);

        fake_rmdir(root, "devices/system/memory/memory50/valid_zones");
        fake_write(root, "devices/system/memory/memory50/valid_zones", "Movable\n");
        fake_link_block(root, 50, 0);
        assert_int_equal(block_read(root, BS, 50, &b), 0);
        assert_int_equal(b.node, 0);
        assert_int_equal(b.valid_zones, VALID_MOVABLE);
}

static void test_block_vanished(void **state) {
        const char *root = *state;
        struct mem_block b = { .id = 1234, .node = 9 };

        assert_int_equal(block_read(root, BS, 77, &b), -ENOENT);
        /* Untouched on failure. */
        assert_int_equal(b.id, 1234);
        assert_int_equal(b.node, 9);
}

static void test_scan_order(void **state) {
        const char *root = *state;
        struct block_set set = {};
        static const uint64_t created[] = { 100, 9, 10, 1, 0, 99, 11 };
        static const uint64_t want[] = { 0, 1, 9, 10, 11, 99, 100 };

        for (size_t i = 0; i < ELEMENTSOF(created); i++)
                fake_add_block(root, created[i], 0, "offline", "Normal");
        /* Not blocks: must be skipped. */
        fake_mkdir(root, "devices/system/memory/power");
        fake_mkdir(root, "devices/system/memory/memoryX");
        fake_write(root, "devices/system/memory/soft_offline_page", "\n");

        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_UNKNOWN, &set), 0);
        assert_int_equal(set.n, ELEMENTSOF(want));
        for (size_t i = 0; i < set.n; i++) {
                assert_int_equal(set.blocks[i].id, want[i]);
                assert_int_equal(set.blocks[i].phys_start, want[i] * BS);
        }
        block_set_clear(&set);
        assert_null(set.blocks);
        assert_int_equal(set.n, 0);
        assert_int_equal(set.allocated, 0);
}

static void test_scan_filter(void **state) {
        const char *root = *state;
        struct block_set set = {};

        fake_add_block(root, 0, 0, "online", "Normal");
        fake_add_block(root, 1, 0, "online", "Normal");
        fake_add_block(root, 2, 1, "offline", "Movable Normal");
        fake_add_block(root, 3, -1, "offline", "Normal");
        fake_add_block(root, 4, 1, "going-offline", "Movable");

        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_OFFLINE, &set), 0);
        assert_int_equal(set.n, 2);
        assert_int_equal(set.blocks[0].id, 2);
        assert_int_equal(set.blocks[0].node, 1);
        assert_int_equal(set.blocks[1].id, 3);
        assert_int_equal(set.blocks[1].node, NODE_NONE);

        /* Scans append to what is there. */
        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_ONLINE, &set), 0);
        assert_int_equal(set.n, 4);
        assert_int_equal(set.blocks[2].id, 0);
        assert_int_equal(set.blocks[2].state, BLOCK_STATE_ONLINE);
        assert_int_equal(set.blocks[3].id, 1);
        block_set_clear(&set);

        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_GOING_OFFLINE, &set), 0);
        assert_int_equal(set.n, 1);
        assert_int_equal(set.blocks[0].id, 4);
        block_set_clear(&set);

        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_UNKNOWN, &set), 0);
        assert_int_equal(set.n, 5);
        block_set_clear(&set);
}

/* A block directory without its state file looks like one removed mid-scan. */
static void test_scan_skips_vanished(void **state) {
        const char *root = *state;
        struct block_set set = {};

        fake_add_block(root, 5, 0, "offline", "Normal");
        fake_add_block(root, 6, 0, "offline", "Normal");
        fake_add_block(root, 7, 0, "offline", "Normal");
        fake_unlink(root, "devices/system/memory/memory6/state");
        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_UNKNOWN, &set), 0);
        assert_int_equal(set.n, 2);
        assert_int_equal(set.blocks[0].id, 5);
        assert_int_equal(set.blocks[1].id, 7);
        block_set_clear(&set);
}

/* An unreadable block is left out and counted; the others still come back. */
static void test_scan_skips_unreadable(void **state) {
        const char *root = *state;
        struct block_set set = {};

        fake_add_block(root, 5, 0, "offline", "Normal");
        fake_add_block(root, 6, 0, "offline", "Normal");
        fake_add_block(root, 7, 0, "offline", "Normal");
        fake_add_block(root, 8, 0, "online", "Normal");
        fake_unlink(root, "devices/system/memory/memory6/state");
        fake_mkdir(root, "devices/system/memory/memory6/state");    /* read gives EISDIR */
        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_OFFLINE, &set), 1);
        assert_int_equal(set.n, 2);
        assert_int_equal(set.blocks[0].id, 5);
        assert_int_equal(set.blocks[1].id, 7);
        block_set_clear(&set);

        struct mem_block b = { .id = 99 };
        assert_int_equal(block_read(root, BS, 6, &b), -EISDIR);
        assert_int_equal(b.id, 99);

        /* Broken valid_zones counts the same way. */
        fake_unlink(root, "devices/system/memory/memory7/valid_zones");
        fake_mkdir(root, "devices/system/memory/memory7/valid_zones");
        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_UNKNOWN, &set), 2);
        assert_int_equal(set.n, 2);
        assert_int_equal(set.blocks[0].id, 5);
        assert_int_equal(set.blocks[1].id, 8);
        block_set_clear(&set);
}

/* A node link past NODE_ID_MAX is no node: it must not reach the planner as one. */
static void test_node_link_out_of_range(void **state) {
        const char *root = *state;
        struct mem_block b = {};

        fake_add_block(root, 5, -1, "offline", "Movable");
        fake_symlink(root, "devices/system/memory/memory5/node99999999", "../../node/node99999999");
        assert_int_equal(block_read(root, BS, 5, &b), 0);
        assert_int_equal(b.node, NODE_NONE);
        fake_symlink(root, "devices/system/memory/memory5/node1024", "../../node/node1024");
        assert_int_equal(block_read(root, BS, 5, &b), 0);
        assert_int_equal(b.node, NODE_NONE);
        fake_symlink(root, "devices/system/memory/memory5/node1023", "../../node/node1023");
        assert_int_equal(block_read(root, BS, 5, &b), 0);
        assert_int_equal(b.node, 1023);
}

/*
 * Whether a block's add is over, for a batch's early start: only a node
 * link the planner could use counts; a bogus one or none keeps it waiting.
 */
static void test_block_linked(void **state) {
        const char *root = *state;

        assert_int_equal(block_linked(root, 9), -ENOENT);
        fake_add_block(root, 9, -1, "offline", "Movable");
        assert_int_equal(block_linked(root, 9), 0);
        fake_symlink(root, "devices/system/memory/memory9/nodes", "../../node/node1");
        fake_symlink(root, "devices/system/memory/memory9/node-1", "../../node/node1");
        fake_symlink(root, "devices/system/memory/memory9/node99999999999999999999", "../../node/node1");
        fake_symlink(root, "devices/system/memory/memory9/node1024", "../../node/node1024");
        assert_int_equal(block_linked(root, 9), 0);
        fake_symlink(root, "devices/system/memory/memory9/node1", "../../node/node1");
        assert_int_equal(block_linked(root, 9), 1);
}

/*
 * The kernel creates an add's blocks, then links them to the node in
 * ascending order: the first block linked says only that the linking
 * began. The add is over when the last block of the run is linked too.
 */
static void test_block_add_over(void **state) {
        const char *root = *state;

        assert_int_equal(block_add_over(root, 40), -ENOENT);
        /* A 300-block DIMM, created, its linking a third of the way. */
        for (uint64_t id = 40; id < 340; id++)
                fake_add_block(root, id, -1, "offline", "Movable Normal");
        assert_int_equal(block_add_over(root, 40), 0);
        for (uint64_t id = 40; id < 140; id++)
                fake_link_block(root, id, 0);
        assert_int_equal(block_add_over(root, 40), 0);
        assert_int_equal(block_add_over(root, 139), 0);
        assert_int_equal(block_linked(root, 40), 1);    /* what the early start used to look at */
        for (uint64_t id = 140; id < 339; id++)
                fake_link_block(root, id, 0);
        assert_int_equal(block_add_over(root, 40), 0);  /* all but the last */
        fake_link_block(root, 339, 0);
        assert_int_equal(block_add_over(root, 40), 1);
        assert_int_equal(block_add_over(root, 200), 1);
        assert_int_equal(block_add_over(root, 339), 1);  /* the last itself: a run of one */

        /* A second DIMM right after it, still being added: its run is the first's too. */
        for (uint64_t id = 340; id < 345; id++)
                fake_add_block(root, id, -1, "offline", "Movable Normal");
        assert_int_equal(block_add_over(root, 40), 0);
        for (uint64_t id = 340; id < 345; id++)
                fake_link_block(root, id, 0);
        assert_int_equal(block_add_over(root, 40), 1);

        /*
         * A hole, and a device beyond it still being added: the halving may
         * land past the hole. Then it waits for that add too, never
         * starting on a block whose add may run.
         */
        fake_add_block(root, 346, -1, "offline", "Movable Normal");
        assert_int_equal(block_add_over(root, 346), 0);
        assert_int_equal(block_add_over(root, 40), 0);
        fake_link_block(root, 346, 0);
        assert_int_equal(block_add_over(root, 40), 1);
        assert_int_equal(block_add_over(root, 346), 1);

        /* Ids at the top of the range do not wrap. */
        assert_int_equal(block_add_over(root, UINT64_MAX), -ENOENT);
}

/* Running is "not over" on a NUMA kernel; gone, or no NUMA, tells nothing: then no batch waits for it. */
static void test_block_add_running(void **state) {
        const char *root = *state;

        fake_mkdir(root, "devices/system/node");
        assert_int_equal(block_add_running(root, 40), 0);       /* gone */
        for (uint64_t id = 40; id < 44; id++)
                fake_add_block(root, id, -1, "offline", "Movable Normal");
        assert_int_equal(block_add_running(root, 40), 1);
        fake_link_block(root, 40, 0);
        assert_int_equal(block_add_running(root, 40), 1);       /* linking begun, not over */
        for (uint64_t id = 41; id < 44; id++)
                fake_link_block(root, id, 0);
        assert_int_equal(block_add_running(root, 40), 0);
        /* Without CONFIG_NUMA no block is ever linked: nothing to wait for. */
        fake_add_block(root, 50, -1, "offline", "Movable Normal");
        assert_int_equal(block_add_running(root, 50), 1);
        fake_remove_dir_tree(root, "devices/system/node");
        assert_int_equal(block_add_running(root, 50), 0);
}

/* id * block_size must not wrap: a wrapped start could match a range rule. */
static void test_phys_start(void **state) {
        const char *root = *state;
        const uint64_t top = UINT64_MAX / BS;   /* the first id whose end passes 2^64 */
        struct mem_block b = { .id = 7 };
        uint64_t start = 5;

        (void) state;
        assert_int_equal(block_phys_start(0, BS, &start), 0);
        assert_int_equal(start, 0);
        assert_int_equal(block_phys_start(32, BS, &start), 0);
        assert_int_equal(start, 32 * BS);
        assert_int_equal(block_phys_start(top - 1, BS, &start), 0);
        assert_true(start == (top - 1) * BS);
        start = 5;
        assert_int_equal(block_phys_start(top, BS, &start), -ERANGE);
        assert_int_equal(block_phys_start(UINT64_C(1) << 37, BS, &start), -ERANGE);
        assert_int_equal(block_phys_start(UINT64_MAX, 1, &start), -ERANGE);
        assert_int_equal(block_phys_start(1, 0, &start), -EINVAL);
        assert_int_equal(start, 5);

        /* memory137438953472 * 128 MiB is 2^64: refused, not read as address 0. */
        fake_add_block(root, UINT64_C(1) << 37, 0, "offline", "Movable");
        assert_int_equal(block_read(root, BS, UINT64_C(1) << 37, &b), -ERANGE);
        assert_int_equal(b.id, 7);
}

static void test_scan_no_memory_dir(void **state) {
        char *root = fake_tree_new();
        struct block_set set = {};

        (void) state;
        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_UNKNOWN, &set), -ENOENT);
        assert_int_equal(set.n, 0);
        fake_tree_free(root);
}

static void test_clear_frees_strings(void **state) {
        const char *root = *state;
        struct block_set set = {};

        fake_add_block(root, 3, 0, "offline", "Movable");
        assert_int_equal(blocks_scan(root, BS, BLOCK_STATE_UNKNOWN, &set), 0);
        assert_int_equal(set.n, 1);
        /* Attribution strings are owned by the set; leak checkers catch a miss. */
        set.blocks[0].device = strdup("dax0.0");
        set.blocks[0].namespace_name = strdup("namespace0.0");
        set.blocks[0].namespace_uuid = strdup("c5d7e2b4-0000-0000-0000-000000000000");
        block_set_clear(&set);
        assert_null(set.blocks);
        block_set_clear(&set);          /* idempotent */
        block_set_clear(NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_state_strings),
                cmocka_unit_test(test_id_from_name),
                cmocka_unit_test_setup_teardown(test_valid_zones, setup, teardown),
                cmocka_unit_test_setup_teardown(test_block_read, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_valid_zones_before_link, setup, teardown),
                cmocka_unit_test_setup_teardown(test_block_vanished, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_order, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_filter, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_skips_vanished, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_skips_unreadable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_block_linked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_block_add_running, setup, teardown),
                cmocka_unit_test_setup_teardown(test_block_add_over, setup, teardown),
                cmocka_unit_test_setup_teardown(test_node_link_out_of_range, setup, teardown),
                cmocka_unit_test_setup_teardown(test_phys_start, setup, teardown),
                cmocka_unit_test(test_scan_no_memory_dir),
                cmocka_unit_test_setup_teardown(test_clear_frees_strings, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
