/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runner across jobs on a fake tree: it keeps the topology between
 * batches, reads only the blocks a batch's events name, counts its own
 * writes, and reads everything again when blocks went offline.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include "fake-tree.h"
#include "runner.h"
#include "util.h"
#include "monitor.h"
#include "online.h"
#include "policy.h"
#include "progress.h"
#include "report.h"
#include "topology.h"

struct fixture {
        char *root;
        struct reporter rep;
        atomic_bool stop;
        struct runner runner;
        char *out, *err;
        size_t out_len, err_len;
        FILE *out_f, *err_f;
        atomic_uint device_events;      /* the event loop's DIMM event count, for the tests that keep devices */
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->root = fake_tree_new();
        fake_standard_machine(f->root);
        f->out_f = open_memstream(&f->out, &f->out_len);
        f->err_f = open_memstream(&f->err, &f->err_len);
        assert_non_null(f->out_f);
        assert_non_null(f->err_f);
        reporter_init(&f->rep, LOG_TARGET_CONSOLE);
        f->rep.out = f->out_f;
        f->rep.err = f->err_f;
        f->runner = (struct runner) { .sysfs_root = f->root, .reporter = &f->rep, .stop = &f->stop };
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        runner_done(&f->runner);
        fclose(f->out_f);
        fclose(f->err_f);
        free(f->out);
        free(f->err);
        fake_tree_free(f->root);
        free(f);
        return 0;
}

static struct policy *policy_from(const struct fixture *f, const char *text) {
        struct policy_error e = {};
        struct policy *p = NULL;
        _cleanup_free_ char *path = NULL;

        fake_write(f->root, "policy.conf", "%s", text);
        assert_true(asprintf(&path, "%s/policy.conf", f->root) > 0);
        if (policy_load(path, &p, &e) < 0)
                fail_msg("%s:%u: %s", e.file, e.line, e.reason);
        return p;
}

/* Movable memory up to the size of each node's kernel memory. */
#define RATIO_100 "[zones]\ndefault = online_movable\nmovable_ratio = 100\nratio_per_node = yes\n"

/* Run one batch of add events (and online events), as the daemon's runner thread does. */
static size_t run_batch(struct fixture *f, struct policy *p, uint64_t first, uint64_t count,
                        const uint64_t *touched, size_t n_touched, bool reload) {
        struct job j = {
                .trigger = "udev",
                .policy = p,
                .n_ids = count,
                .reload_topology = reload,
                .n_touched = n_touched,
        };

        j.ids = calloc(count, sizeof(uint64_t));
        assert_non_null(j.ids);
        for (uint64_t i = 0; i < count; i++)
                j.ids[i] = first + i;
        if (n_touched > 0) {
                j.touched = malloc(n_touched * sizeof(uint64_t));
                assert_non_null(j.touched);
                memcpy(j.touched, touched, n_touched * sizeof(uint64_t));
        }
        assert_int_equal(runner_process(&f->runner, &j), 0);
        assert_int_equal(j.failed, 0);
        free(j.ids);
        free(j.touched);
        return j.onlined;
}

static void assert_state(const struct fixture *f, uint64_t id, const char *want) {
        char rel[128];
        _cleanup_free_ char *got = NULL;

        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", (unsigned long long) id);
        got = fake_read(f->root, rel);
        assert_non_null(got);
        if (!streq(got, want))
                fail_msg("memory%llu: state %s, want %s", (unsigned long long) id, got, want);
}

/* What the kernel shows once it onlined a block into a zone. */
static void kernel_onlined(const struct fixture *f, uint64_t id, const char *zone) {
        char rel[128];

        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", (unsigned long long) id);
        fake_write(f->root, rel, "online\n");
        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/valid_zones", (unsigned long long) id);
        fake_write(f->root, rel, "%s\n", zone);
}

/* The second batch uses the kept topology, reads only its own blocks and counts the first batch's writes. */
static void test_topology_kept(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, RATIO_100);
        struct topology *kept;

        fake_add_blocks(f->root, 32, 10, 1, "offline", "Movable Normal");
        run_batch(f, p, 32, 6, NULL, 0, false);
        for (uint64_t id = 32; id < 38; id++)
                assert_state(f, id, "online_movable");
        kept = f->runner.topology;
        assert_non_null(kept);

        /* A boot block that cannot be read now: a full pass would drop it from node 1's kernel total. */
        fake_unlink(f->root, "devices/system/memory/memory9/state");
        fake_mkdir(f->root, "devices/system/memory/memory9/state");

        /* Node 1 has 8 blocks of kernel memory and 6 movable: room for 2 more. */
        run_batch(f, p, 38, 4, NULL, 0, false);
        assert_ptr_equal(f->runner.topology, kept);
        assert_non_null(topology_block(kept, 9));
        assert_state(f, 38, "online_movable");
        assert_state(f, 39, "online_movable");
        assert_state(f, 40, "online_kernel");
        assert_state(f, 41, "online_kernel");
        assert_int_equal(topology_node(kept, 1)->movable_bytes, 8 * (128ULL << 20));
        assert_int_equal(topology_node(kept, 1)->kernel_bytes, 10 * (128ULL << 20));
        assert_non_null(strstr(f->out, "MEMONLINE_PREPARE_USEC="));
}

/* Another agent's onlines come as online events: the next batch counts them. */
static void test_touched_blocks(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *skip = policy_from(f, RATIO_100 "[node 1]\nzone = skip\n");
        _cleanup_policy_ struct policy *p = policy_from(f, RATIO_100);
        const uint64_t others[] = { 50, 51, 52, 53, 54, 55, 32 };

        fake_add_blocks(f->root, 50, 6, 1, "offline", "Movable Normal");
        fake_add_blocks(f->root, 32, 1, 0, "offline", "Movable Normal");
        run_batch(f, skip, 50, 6, NULL, 0, false);
        assert_state(f, 50, "offline");
        run_batch(f, skip, 32, 1, NULL, 0, false);
        assert_state(f, 32, "online_movable");

        /* An admin onlines the skipped blocks by hand; 32 is our own write's event. */
        for (uint64_t id = 50; id < 56; id++)
                kernel_onlined(f, id, "Movable");
        fake_add_blocks(f->root, 60, 3, 1, "offline", "Movable Normal");
        run_batch(f, p, 60, 3, others, ELEMENTSOF(others), false);
        assert_state(f, 60, "online_movable");
        assert_state(f, 61, "online_movable");
        assert_state(f, 62, "online_kernel");
        /* Our own write was not read again (the fake file still says what we wrote). */
        assert_int_equal(topology_block(f->runner.topology, 32)->state, BLOCK_STATE_ONLINE);
}

/* A batch of add events for first..first+count-1, as the loop makes it; the job's results. */
static struct job run_adopting(struct fixture *f, struct policy *p, uint64_t first, size_t count) {
        struct job j = { .trigger = "udev", .policy = p, .n_ids = count, .adopt_linked = true };

        j.ids = calloc(count, sizeof(uint64_t));
        assert_non_null(j.ids);
        for (size_t i = 0; i < count; i++)
                j.ids[i] = first + i;
        assert_int_equal(runner_process(&f->runner, &j), 0);
        free(TAKE_PTR(j.ids));
        return j;
}

/*
 * An add-event batch also takes the blocks the kernel has linked whose
 * events udev has not handed over yet; other batches (a stop's held
 * blocks) take only their own.
 */
static void test_adopt_linked(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n");
        struct job j;
        atomic_bool more = true;

        /* Events are queued (the adopted blocks' own): no zone's hole is held back for them. */
        f->runner.more_work = &more;
        fake_add_blocks(f->root, 32, 1, 1, "offline", "Movable Normal");
        assert_int_equal(run_batch(f, p, 32, 1, NULL, 0, false), 1);

        fake_add_blocks(f->root, 33, 3, 1, "offline", "Movable Normal");
        fake_add_block(f->root, 36, -1, "offline", "Movable Normal");  /* its add still runs: no link */
        j = run_adopting(f, p, 34, 1);
        assert_int_equal(j.onlined, 3);
        assert_int_equal(j.adopted, 2);
        for (uint64_t id = 33; id < 36; id++)
                assert_state(f, id, "online_movable");
        assert_state(f, 36, "offline");
        assert_int_equal(f->runner.n_held, 0);

        /*
         * Their late events find them online in the table and are not read
         * again: here the file says offline, which without an offline event
         * (it would make the batch read everything) cannot happen.
         */
        fake_write(f->root, "devices/system/memory/memory33/state", "offline\n");
        j = run_adopting(f, p, 33, 3);
        assert_int_equal(j.onlined, 0);
        assert_int_equal(j.adopted, 0);
        assert_state(f, 33, "offline");
        kernel_onlined(f, 33, "Movable");

        /* Not adopting: only the job's own blocks, and the hole is held for the queued batch. */
        fake_add_blocks(f->root, 40, 4, 1, "offline", "Movable Normal");
        assert_int_equal(run_batch(f, p, 40, 3, NULL, 0, false), 2);
        assert_state(f, 41, "offline");
        assert_int_equal(f->runner.n_held, 1);
        assert_state(f, 43, "offline");
}

/* An adopted block is planned like an evented one: an exclusion keeps it offline. */
static void test_adopt_linked_excluded(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p =
                policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n[exclude]\nblock = memory34\n");
        struct job j;

        fake_add_blocks(f->root, 32, 1, 1, "offline", "Movable Normal");
        assert_int_equal(run_batch(f, p, 32, 1, NULL, 0, false), 1);
        fake_add_blocks(f->root, 33, 3, 1, "offline", "Movable Normal");
        j = run_adopting(f, p, 33, 1);
        assert_int_equal(j.adopted, 2);
        assert_int_equal(j.onlined, 2);
        assert_state(f, 33, "online_movable");
        assert_state(f, 34, "offline");
        assert_state(f, 35, "online_movable");
}

/* Blocks went offline (an offline event): the next batch reads every block again. */
static void test_reload_after_offline(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, RATIO_100);
        struct topology *kept;

        fake_add_blocks(f->root, 32, 1, 1, "offline", "Movable Normal");
        fake_add_blocks(f->root, 60, 2, 1, "offline", "Movable Normal");
        run_batch(f, p, 32, 1, NULL, 0, false);
        kept = f->runner.topology;
        assert_non_null(kept);

        /* Node 1's kernel memory goes offline: no room for movable memory there any more. */
        for (uint64_t id = 8; id < 16; id++) {
                char rel[128];

                snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", (unsigned long long) id);
                fake_write(f->root, rel, "offline\n");
        }
        run_batch(f, p, 60, 2, NULL, 0, true);
        assert_state(f, 60, "online_kernel");
        assert_state(f, 61, "online_kernel");
        assert_int_equal(topology_node(f->runner.topology, 1)->movable_bytes, 0);
}

/* A rescan (no ids) always reads everything. */
static void test_rescan_reloads(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, RATIO_100);
        struct job j = { .trigger = "rescan" };

        j.policy = p;
        fake_add_blocks(f->root, 32, 1, 1, "offline", "Movable Normal");
        run_batch(f, p, 32, 1, NULL, 0, false);
        kernel_onlined(f, 32, "Movable");
        fake_add_blocks(f->root, 33, 1, 1, "offline", "Movable Normal");
        fake_write(f->root, "devices/system/memory/memory8/state", "offline\n");
        assert_int_equal(runner_process(&f->runner, &j), 0);
        assert_int_equal(j.onlined, 2);        /* 33 and the boot block 8 */
        assert_state(f, 33, "online_movable");
        assert_int_equal(topology_block(f->runner.topology, 8)->state, BLOCK_STATE_ONLINE);
        assert_int_equal(topology_node(f->runner.topology, 1)->movable_bytes, 2 * (128ULL << 20));
}

/* A node that came online since the last batch is read before its blocks are planned. */
static void test_new_node(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, RATIO_100);

        fake_add_blocks(f->root, 32, 1, 1, "offline", "Movable Normal");
        run_batch(f, p, 32, 1, NULL, 0, false);
        assert_non_null(f->runner.topology);
        assert_null(topology_node(f->runner.topology, 3));

        /* CPU-less node 3, nearest to node 1. */
        fake_add_node(f->root, 3, "", "40 30 40 10");
        fake_write(f->root, "devices/system/node/node0/distance", "10 20 30 40\n");
        fake_write(f->root, "devices/system/node/node1/distance", "20 10 17 30\n");
        fake_write(f->root, "devices/system/node/node2/distance", "30 17 10 40\n");
        fake_write(f->root, "devices/system/node/online", "0-3\n");
        fake_add_blocks(f->root, 96, 2, 3, "offline", "Movable Normal");
        fflush(f->out_f);
        fseek(f->out_f, 0, SEEK_SET);
        run_batch(f, p, 96, 2, NULL, 0, false);
        fflush(f->out_f);
        assert_non_null(topology_node(f->runner.topology, 3));
        assert_non_null(strstr(f->out, "MEMONLINE_NODE=3 "));
        assert_non_null(strstr(f->out, "MEMONLINE_WRITER_NODE=1 "));
        /* Node 3 has no kernel memory: the per-node ratio guard keeps it out of ZONE_MOVABLE. */
        assert_state(f, 96, "online_kernel");
}

/*
 * While another batch is queued, each zone's deferred block stays offline
 * and joins the next batch, deferred again: the kernel's zone walk keeps
 * stopping at it. The last batch writes it.
 */
static void test_held_for_next_batch(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, "[zones]\ndefault = online_movable\n");
        atomic_bool more = true;

        f->runner.more_work = &more;
        fake_add_blocks(f->root, 32, 10, 1, "offline", "Movable Normal");
        assert_int_equal(run_batch(f, p, 32, 4, NULL, 0, false), 3);
        assert_state(f, 32, "online_movable");
        assert_state(f, 33, "offline");
        assert_state(f, 34, "online_movable");
        assert_state(f, 35, "online_movable");
        assert_int_equal(f->runner.n_held, 1);
        assert_int_equal(f->runner.held[0], 33);

        /* Still more to come: 33 stays the hole; the new blocks' second one is written. */
        assert_int_equal(run_batch(f, p, 36, 3, NULL, 0, false), 3);
        assert_state(f, 33, "offline");
        assert_state(f, 37, "online_movable");
        assert_int_equal(f->runner.n_held, 1);
        assert_int_equal(f->runner.held[0], 33);

        /* The last batch: everything is written. */
        atomic_store(&more, false);
        assert_int_equal(run_batch(f, p, 39, 3, NULL, 0, false), 4);
        for (uint64_t id = 32; id < 42; id++)
                assert_state(f, id, "online_movable");
        assert_int_equal(f->runner.n_held, 0);
        assert_null(strstr(f->out, "MEMONLINE_FAILED=1"));
}

/*
 * A block whose node link is not there yet (its add still runs) waits for
 * the next batch while one is queued, and is then planned on its node. With
 * nothing queued it is onlined at once, without a node.
 */
static void test_unresolved_node_deferred(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p =
                policy_from(f, "[daemon]\nnode_link_wait_ms = 0\n[zones]\ndefault = online_movable\n");
        atomic_bool more = true;

        /* Past every node's span of blocks, so no span guesses its node either. */
        f->runner.more_work = &more;
        fake_add_blocks(f->root, 40, 2, 1, "offline", "Movable Normal");
        fake_add_block(f->root, 42, -1, "offline", "Movable Normal");
        run_batch(f, p, 40, 3, NULL, 0, false);
        assert_state(f, 40, "online_movable");
        assert_state(f, 42, "offline");
        assert_int_equal(f->runner.n_deferred, 1);
        assert_int_equal(f->runner.deferred[0], 42);
        /* Not a zone hole: the held list is order_writes' alone. */
        assert_null(memmem(f->runner.held, f->runner.n_held * sizeof(uint64_t), &(uint64_t) { 42 },
                           sizeof(uint64_t)));

        /* The add ended: the link is there, and this is the last batch. */
        fake_link_block(f->root, 42, 1);
        fake_add_blocks(f->root, 43, 1, 1, "offline", "Movable Normal");
        atomic_store(&more, false);
        fseek(f->out_f, 0, SEEK_SET);
        run_batch(f, p, 43, 1, NULL, 0, false);
        fflush(f->out_f);
        for (uint64_t id = 40; id < 44; id++)
                assert_state(f, id, "online_movable");
        assert_int_equal(f->runner.n_held, 0);
        assert_int_equal(f->runner.n_deferred, 0);
        assert_null(strstr(f->out, "MEMONLINE_NODE=-1"));
        assert_non_null(strstr(f->out, "MEMONLINE_NODE=1 "));

        /* Nothing queued: no reason to wait, it goes now, without a node. */
        fake_add_block(f->root, 60, -1, "offline", "Movable Normal");
        assert_int_equal(run_batch(f, p, 60, 1, NULL, 0, false), 1);
        assert_state(f, 60, "online_movable");
        assert_int_equal(f->runner.n_held, 0);
}

/* After a delay, what the kernel or the daemon's main loop does while the runner waits. */
struct later {
        const char *root;
        unsigned delay_ms;
        uint64_t link_block;            /* links it to node 1 when non-zero */
        atomic_bool *more;              /* sets it when non-NULL */
};

static void *do_later(void *userdata) {
        const struct later *l = userdata;

        usleep(l->delay_ms * 1000);
        if (l->link_block)
                fake_link_block(l->root, l->link_block, 1);
        if (l->more)
                atomic_store(l->more, true);
        return NULL;
}

static void run_batch_while(struct fixture *f, struct policy *p, uint64_t id, const struct later *l) {
        pthread_t th;

        assert_int_equal(pthread_create(&th, NULL, do_later, (void *) l), 0);
        run_batch(f, p, id, 1, NULL, 0, false);
        assert_int_equal(pthread_join(th, NULL), 0);
}

/*
 * Past node_link_wait_ms with nothing queued, the runner keeps waiting, up
 * to 10 times as long, for the link or for more events: a lull in the
 * add's events must not online its blocks without their node.
 */
static void test_unresolved_node_patience(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p =
                policy_from(f, "[daemon]\nnode_link_wait_ms = 40\n[zones]\ndefault = online_movable\n");
        atomic_bool more = false;
        uint64_t t0;

        f->runner.more_work = &more;

        /* The link comes at 150 ms, past the wait: the block is onlined on its node. */
        fake_add_block(f->root, 70, -1, "offline", "Movable Normal");
        run_batch_while(f, p, 70, &(struct later) { .root = f->root, .delay_ms = 150, .link_block = 70 });
        fflush(f->out_f);
        assert_state(f, 70, "online_movable");
        assert_null(strstr(f->out, "MEMONLINE_NODE=-1"));
        assert_non_null(strstr(f->out, "MEMONLINE_NODE=1 "));

        /* More events come instead: the block waits for their batch. */
        fake_add_block(f->root, 72, -1, "offline", "Movable Normal");
        run_batch_while(f, p, 72, &(struct later) { .root = f->root, .delay_ms = 150, .more = &more });
        assert_state(f, 72, "offline");
        assert_int_equal(f->runner.n_deferred, 1);
        assert_int_equal(f->runner.deferred[0], 72);

        /* Neither, ever: after 10 x 40 ms it goes without a node, as before. */
        atomic_store(&more, false);
        fseek(f->out_f, 0, SEEK_SET);
        fake_add_block(f->root, 74, -1, "offline", "Movable Normal");
        t0 = now_usec();
        run_batch(f, p, 74, 1, NULL, 0, false);
        assert_true(now_usec() - t0 >= 400 * USEC_PER_MSEC);
        fflush(f->out_f);
        assert_state(f, 72, "online_movable");   /* the deferred block came along */
        assert_state(f, 74, "online_movable");
        assert_non_null(strstr(f->out, "MEMONLINE_NODE=-1"));
}

#define BS (128ULL << 20)

/* A rescan job: every offline block. */
static struct job rescan_job(struct policy *p) {
        return (struct job) { .trigger = "rescan", .policy = p };
}

/*
 * One dax device cannot be read. Before, the whole scan failed and every
 * block lost its device, so `[exclude] device = dax0.0` no longer held.
 * Now dax0.0 is still known and excluded, and the blocks no readable
 * device claims wait (undecided) while device rules apply.
 */
static void test_dax_unreadable_fail_safe(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p =
                policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n[exclude]\ndevice = dax0.0\n");
        struct fake_dax d0 = { .region = 0, .id = 0, .driver = "kmem", .start = 300 * BS, .size = 4 * BS,
                               .target_node = 2 };
        struct fake_dax d1 = { .region = 1, .id = 0, .driver = "kmem", .start = 400 * BS, .size = 4 * BS,
                               .target_node = 2 };
        _cleanup_free_ char *dir0 = NULL, *dir1 = NULL, *size1 = NULL;
        struct job j = rescan_job(p);

        dir0 = fake_add_dax_device(f->root, &d0);
        dir1 = fake_add_dax_device(f->root, &d1);
        /* dax1.0's size reads as EISDIR. */
        assert_true(asprintf(&size1, "%s/size", dir1) > 0);
        fake_unlink(f->root, size1);
        fake_mkdir(f->root, size1);
        fake_add_blocks(f->root, 300, 4, 2, "offline", "Movable Normal");
        fake_add_blocks(f->root, 400, 4, 2, "offline", "Movable Normal");

        assert_int_equal(runner_process(&f->runner, &j), 0);
        for (uint64_t id = 300; id < 304; id++)
                assert_state(f, id, "offline");         /* excluded: dax0.0 is still known */
        for (uint64_t id = 400; id < 404; id++)
                assert_state(f, id, "offline");         /* undecided: whose are they? */
        assert_int_equal(j.undecided, 4);
        assert_int_equal(j.onlined, 0);
        fflush(f->out_f);
        fflush(f->err_f);
        assert_non_null(strstr(f->out, "MEMONLINE_BLOCK=memory400"));
        assert_non_null(strstr(f->out, "MEMONLINE_ERRNO_NAME=EAGAIN"));
        assert_non_null(strstr(f->err, "cannot read 1 dax device (dax1.0: Is a directory)"));
}

/*
 * The dax devices are kept from batch to batch. dax0.0 destroyed and made
 * again elsewhere between two batches (a CXL region created anew) is
 * read again: its rule still finds its new blocks. Kept as it was, they
 * would belong to no device and take the default zone.
 */
static void test_dax_remade_between_batches(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p =
                policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n[device dax0.0]\n"
                               "zone = online_kernel\n");
        struct fake_dax d = { .region = 0, .id = 0, .driver = "kmem", .start = 300 * BS, .size = 4 * BS,
                              .target_node = 2 };
        _cleanup_free_ char *dir = NULL, *again = NULL;

        dir = fake_add_dax_device(f->root, &d);
        fake_add_blocks(f->root, 300, 4, 2, "offline", "Movable Normal");
        assert_int_equal(run_batch(f, p, 300, 4, NULL, 0, false), 4);
        for (uint64_t id = 300; id < 304; id++)
                assert_state(f, id, "online_kernel");

        /* Made again at 400 * BS: a new directory (an hmem-like parent here), then the old one goes. */
        d.start = 400 * BS;
        d.no_nd = true;
        fake_unlink(f->root, "bus/dax/devices/dax0.0");
        again = fake_add_dax_device(f->root, &d);
        fake_remove_dir_tree(f->root, dir);
        fake_add_blocks(f->root, 400, 4, 2, "offline", "Movable Normal");
        assert_int_equal(run_batch(f, p, 400, 4, NULL, 0, false), 4);
        for (uint64_t id = 400; id < 404; id++)
                assert_state(f, id, "online_kernel");
}

#define REUSED "blocks of dax devices: the other hotplug devices as last read"

/* How often the log (both streams) says text. */
static size_t log_count(struct fixture *f, const char *text) {
        size_t n = 0;

        fflush(f->out_f);
        fflush(f->err_f);
        for (const char *s = f->out; s && (s = strstr(s, text)); s++)
                n++;
        for (const char *s = f->err; s && (s = strstr(s, text)); s++)
                n++;
        return n;
}

static void dax_at(struct fixture *f, int region, uint64_t first) {
        struct fake_dax d = { .region = region, .id = 0, .driver = "kmem", .start = first * BS, .size = 4 * BS,
                              .target_node = 2 };

        free(fake_add_dax_device(f->root, &d));
        fake_add_blocks(f->root, first, 4, 2, "offline", "Movable Normal");
}

/*
 * A batch of dax memory alone (a CXL region) takes the DIMMs, virtio-mem
 * and firmware ranges as last read while no DIMM event came since, and
 * its dax devices as just scanned: dax1.0's rule holds for its blocks.
 * A DIMM event makes the next batch read them all again, and so does a
 * batch with a DIMM's blocks, which the records name.
 */
static void test_dax_batch_reuses_devices(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p =
                policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n[pmem]\nzone = online_kernel\n"
                               "[device fast]\nmatch_device = dax1.0\nzone = online_movable\n");

        f->runner.device_events = &f->device_events;
        f->rep.max_priority = LOG_DEBUG;
        dax_at(f, 0, 300);
        assert_int_equal(run_batch(f, p, 300, 4, NULL, 0, false), 4);
        assert_int_equal(log_count(f, REUSED), 0);      /* nothing read yet */

        dax_at(f, 1, 400);
        assert_int_equal(run_batch(f, p, 400, 4, NULL, 0, false), 4);
        assert_int_equal(log_count(f, REUSED), 1);
        for (uint64_t id = 300; id < 304; id++)
                assert_state(f, id, "online_kernel");
        for (uint64_t id = 400; id < 404; id++)
                assert_state(f, id, "online_movable");
        assert_true(log_count(f, "MEMONLINE_DEVICE=dax1.0") > 0);

        /* A DIMM came: its event counted, the next dax batch reads everything. */
        fake_add_blocks(f->root, 32, 16, 1, "offline", "Movable Normal");
        fake_add_acpi_dimm(f->root, "PNP0C80:00", 32, 16);
        atomic_fetch_add(&f->device_events, 1);
        dax_at(f, 2, 500);
        assert_int_equal(run_batch(f, p, 500, 4, NULL, 0, false), 4);
        assert_int_equal(log_count(f, REUSED), 1);
        /* Read since: a dax batch takes them as kept again. */
        dax_at(f, 3, 600);
        assert_int_equal(run_batch(f, p, 600, 4, NULL, 0, false), 4);
        assert_int_equal(log_count(f, REUSED), 2);
        /* A batch with the DIMM's blocks and a dax device's is not dax alone. */
        dax_at(f, 4, 48);
        assert_int_equal(run_batch(f, p, 32, 20, NULL, 0, false), 20);
        assert_int_equal(log_count(f, REUSED), 2);
        for (uint64_t id = 32; id < 48; id++)
                assert_state(f, id, "online_movable");
        assert_true(log_count(f, "MEMONLINE_DEVICE=PNP0C80:00") > 0);
}

/*
 * Without the event loop's count (NULL), nothing says whether a DIMM
 * came: every batch reads the devices whole.
 */
static void test_dax_batch_without_event_count(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n");

        f->rep.max_priority = LOG_DEBUG;
        dax_at(f, 0, 300);
        assert_int_equal(run_batch(f, p, 300, 4, NULL, 0, false), 4);
        dax_at(f, 1, 400);
        assert_int_equal(run_batch(f, p, 400, 4, NULL, 0, false), 4);
        assert_int_equal(log_count(f, REUSED), 0);
}

/*
 * The kept devices went stale with no event (one lost): DIMM PNP0C80:00's
 * blocks 300..303 are dax0.0's now. Kept, the DIMM would overlap dax0.0:
 * the batch reads everything again, and its records name a dax device,
 * not a DIMM. No event changed the count: only the overlap tells.
 */
static void test_reused_devices_stale_fail_safe(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p =
                policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n[device fast]\n"
                               "match_device = dax0.0\nzone = online_kernel\n");
        struct fake_dax d = { .region = 0, .id = 0, .driver = "kmem", .start = 300 * BS, .size = 4 * BS,
                              .target_node = 2 };

        f->runner.device_events = &f->device_events;
        f->rep.max_priority = LOG_DEBUG;
        fake_add_blocks(f->root, 300, 4, 2, "offline", "Movable Normal");
        fake_add_acpi_dimm(f->root, "PNP0C80:00", 300, 4);
        assert_int_equal(run_batch(f, p, 300, 4, NULL, 0, false), 4);
        for (uint64_t id = 300; id < 304; id++)
                assert_state(f, id, "online_movable");
        assert_true(log_count(f, "MEMONLINE_DEVICE_KIND=dimm") > 0);

        fake_remove_dir_tree(f->root, "bus/acpi/devices/PNP0C80:00");
        for (uint64_t id = 300; id < 304; id++) {
                char rel[96];

                snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", (unsigned long long) id);
                fake_write(f->root, rel, "offline");
        }
        free(fake_add_dax_device(f->root, &d));
        assert_int_equal(run_batch(f, p, 300, 4, NULL, 0, false), 4);
        assert_int_equal(log_count(f, REUSED), 0);
        for (uint64_t id = 300; id < 304; id++)
                assert_state(f, id, "online_kernel");
        assert_true(log_count(f, "MEMONLINE_DEVICE_KIND=dax") > 0);
}

/* A devdax device present at start is considered by the coldplug pass, not only by live dax events. */
static void test_devdax_on_rescan(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, "[pmem]\nconvert_devdax = yes\n");
        struct fake_dax d = { .region = 0, .id = 0, .driver = "device_dax", .start = 300 * BS, .size = 4 * BS,
                              .target_node = 2 };
        struct job j = rescan_job(p);

        free(fake_add_dax_device(f->root, &d));
        j.scan_dax = true;
        assert_int_equal(runner_process(&f->runner, &j), 0);
        /* A fake tree never reaches libdaxctl, so the conversion is refused, and counted for a retry. */
        assert_int_equal(j.dax_failed, 1);
        fflush(f->err_f);
        assert_non_null(strstr(f->err, "dax0.0: conversion to system-ram failed: dax0.0: not converting: "
                                        "libdaxctl acts on only the real /sys"));
}

/* Count the lines of s that hold needle. */
static size_t count_lines(const char *s, const char *needle) {
        size_t n = 0;

        for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* dax0.0 on region0 at blocks 300-303, 16 bad sectors in its third block (the region starts 2 MiB below it). */
#define BAD_REGION_START (300 * BS - (2ULL << 20))
static struct fake_dax bad_dax(const char *driver) {
        static char text[64];

        snprintf(text, sizeof(text), "0 8\n%llu 16\n", (302 * BS - BAD_REGION_START) / 512);
        return (struct fake_dax) { .region = 0, .id = 0, .driver = driver, .start = 300 * BS, .size = 4 * BS,
                                   .target_node = 2, .region_start = BAD_REGION_START, .badblocks = text };
}

/*
 * A devdax device with bad blocks in its memory is not converted: a bad-media
 * record, once, and no retry (it is a verdict, not a failure). Before, the
 * conversion was tried (on a fake tree libdaxctl refuses it, counted as failed).
 */
static void test_bad_media_not_converted(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, "[pmem]\nconvert_devdax = yes\n");
        struct fake_dax d = bad_dax("device_dax");
        struct job j = rescan_job(p), again = rescan_job(p);

        free(fake_add_dax_device(f->root, &d));
        j.scan_dax = again.scan_dax = true;
        assert_int_equal(runner_process(&f->runner, &j), 0);
        assert_int_equal(j.dax_failed, 0);
        assert_int_equal(j.undecided, 0);
        assert_int_equal(runner_process(&f->runner, &again), 0);
        fflush(f->out_f);
        fflush(f->err_f);
        assert_null(strstr(f->err, "conversion to system-ram failed"));
        assert_int_equal(count_lines(f->out, "MESSAGE_ID=" MESSAGE_ID_BAD_MEDIA), 1);
        assert_non_null(strstr(f->out, " MEMONLINE_DEVICE=dax0.0 "));
        assert_non_null(strstr(f->out, " MEMONLINE_MODE=devdax MEMONLINE_MEDIA=refused MEMONLINE_BADBLOCKS=16 "
                                       "MEMONLINE_BAD_ADDRESS=0x970000000 MEMONLINE_BLOCKS=0 "));
        assert_non_null(strstr(f->out, "not converted to system-ram: refused: 16 bad 512-byte sectors"));
}

/*
 * An admin converted a device with bad blocks (daxctl reconfigure-device
 * --no-online): its blocks stay offline with one record, and no retry,
 * until a [device] rule allows them. Before, they were onlined.
 */
static void test_bad_media_blocks_left_offline(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p =
                policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n");
        struct fake_dax d = bad_dax("kmem");
        struct job j = rescan_job(p), again = rescan_job(p);

        free(fake_add_dax_device(f->root, &d));
        fake_add_blocks(f->root, 300, 4, 2, "offline", "Movable Normal");
        fake_add_blocks(f->root, 310, 2, 2, "offline", "Movable Normal");  /* no device's: onlined */
        assert_int_equal(runner_process(&f->runner, &j), 0);
        for (uint64_t id = 300; id < 304; id++)
                assert_state(f, id, "offline");
        assert_state(f, 310, "online_movable");
        assert_int_equal(j.onlined, 2);
        assert_int_equal(j.undecided, 0);
        assert_int_equal(j.failed, 0);
        assert_int_equal(runner_process(&f->runner, &again), 0);
        assert_int_equal(again.onlined, 0);
        fflush(f->out_f);
        assert_int_equal(count_lines(f->out, "MESSAGE_ID=" MESSAGE_ID_BAD_MEDIA), 1);
        assert_non_null(strstr(f->out, " MEMONLINE_MODE=system-ram MEMONLINE_MEDIA=refused MEMONLINE_BADBLOCKS=16 "));
        assert_non_null(strstr(f->out, " MEMONLINE_BLOCKS=4 "));
        assert_non_null(strstr(f->out, "dax0.0 (namespace0.0): 4 blocks left offline: bad media: 16 bad 512-byte "
                                       "sectors in dax0.0"));

        /* The admin's word: they come online. */
        _cleanup_policy_ struct policy *allow = policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n"
                                                               "[device poisoned]\nmatch_device = dax0.0\n"
                                                               "allow_badblocks = yes\n");
        struct job third = rescan_job(allow);

        assert_int_equal(runner_process(&f->runner, &third), 0);
        assert_int_equal(third.onlined, 4);
        for (uint64_t id = 300; id < 304; id++)
                assert_state(f, id, "online_movable");
}

/*
 * A badblocks list that cannot be read: unknown is not "none". The blocks
 * stay offline, undecided (failure records with EAGAIN, a retry), and so
 * does a devdax device; once the list reads empty, they come online.
 */
static void test_bad_media_unknown(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p =
                policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n[pmem]\nconvert_devdax = yes\n");
        struct fake_dax d = bad_dax("kmem"), dd = bad_dax("device_dax");
        static const char bb[] = "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region0/badblocks";
        struct job j = rescan_job(p), later = rescan_job(p);

        dd.region = 1;
        dd.start = 400 * BS;
        dd.no_badblocks = true;
        free(fake_add_dax_device(f->root, &d));
        free(fake_add_dax_device(f->root, &dd));
        fake_unlink(f->root, bb);
        fake_mkdir(f->root, bb);                /* reads as EISDIR */
        fake_add_blocks(f->root, 300, 4, 2, "offline", "Movable Normal");
        j.scan_dax = true;
        assert_int_equal(runner_process(&f->runner, &j), 0);
        for (uint64_t id = 300; id < 304; id++)
                assert_state(f, id, "offline");
        assert_int_equal(j.undecided, 4 + 1);   /* the blocks, and dax1.0 not converted */
        assert_int_equal(j.onlined, 0);
        fflush(f->out_f);
        assert_non_null(strstr(f->out, "MEMONLINE_BLOCK=memory300"));
        assert_non_null(strstr(f->out, "MEMONLINE_ERRNO_NAME=EAGAIN"));
        assert_non_null(strstr(f->out, "its dax device's bad blocks could not be read"));
        assert_non_null(strstr(f->out, " MEMONLINE_MODE=system-ram MEMONLINE_MEDIA=unknown MEMONLINE_BADBLOCKS=0 "
                                       "MEMONLINE_BLOCKS=4 MEMONLINE_ERRNO=21 "));
        assert_non_null(strstr(f->out, "dax0.0 (namespace0.0): 4 blocks left offline: undecided: the bad blocks of "
                                       "region0 cannot be known (Is a directory)"));
        assert_non_null(strstr(f->out, "dax1.0 (namespace1.0): not converted to system-ram: undecided: the bad blocks "
                                       "of region1 cannot be known (the region has no badblocks file)"));

        fake_rmdir(f->root, bb);
        fake_write(f->root, bb, "%s", "");
        assert_int_equal(runner_process(&f->runner, &later), 0);
        assert_int_equal(later.onlined, 4);
        assert_int_equal(later.undecided, 0);
}

/* Two CXL RAM regions of one window on node 2, as cxl create-region leaves them on 6.12 (blocks 1170-1177). */
static void two_cxl_regions(struct fixture *f) {
        static const int mem01[] = { 0, 1 }, mem1[] = { 1 };
        struct fake_cxl_region r0 = {
                .region = 0, .start = 1170 * BS, .size = 4 * BS, .target_node = 2, .driver = "kmem",
                .memdevs = mem01, .n_memdevs = 2, .memmap_on_memory = 1,
        };
        struct fake_cxl_region r1 = r0;

        r1.region = 1;
        r1.start = 1174 * BS;
        r1.memdevs = mem1;
        r1.n_memdevs = 1;
        free(fake_add_cxl_region(f->root, &r0));
        free(fake_add_cxl_region(f->root, &r1));
        fake_add_blocks(f->root, 1170, 8, 2, "offline", "Movable Normal");
}

/* A [device] rule by CXL region sends that region kernel while the default is movable; records name both. */
static void test_cxl_region_rule(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n"
                                                           "[device expander]\nmatch_cxl_region = region0\n"
                                                           "zone = online_kernel\n");
        struct job j = rescan_job(p);

        two_cxl_regions(f);
        assert_int_equal(runner_process(&f->runner, &j), 0);
        assert_int_equal(j.onlined, 8);
        for (uint64_t id = 1170; id < 1174; id++)
                assert_state(f, id, "online_kernel");
        for (uint64_t id = 1174; id < 1178; id++)
                assert_state(f, id, "online_movable");
        fflush(f->out_f);
        assert_non_null(strstr(f->out, "MEMONLINE_CXL_REGION=region0,region1"));
        assert_non_null(strstr(f->out, "MEMONLINE_CXL_MEMDEV=mem0,mem1"));
        assert_non_null(strstr(f->out, "MEMONLINE_DEVICE=dax0.0,dax1.0"));
}

/* --dry-run names the CXL region and memdevs on each block line and each device line. */
static void test_cxl_dry_run(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n"
                                                           "[device m0]\nmatch_cxl_memdev = mem0\n"
                                                           "zone = online_kernel\n");
        struct job j = rescan_job(p);

        two_cxl_regions(f);
        f->runner.dry_run = true;
        f->runner.out = f->out_f;
        assert_int_equal(runner_process(&f->runner, &j), 0);
        fflush(f->out_f);
        assert_non_null(strstr(f->out, "block=memory1170 node=2 zone=online_kernel cpu=4 reason=\"device rule m0\" "
                                        "writer_node=1 device=dax0.0 cxl_region=region0 cxl_memdev=mem0,mem1\n"));
        assert_non_null(strstr(f->out, "block=memory1177 node=2 zone=online_movable cpu=4 reason=\"pmem default\" "
                                        "writer_node=1 device=dax1.0 cxl_region=region1 cxl_memdev=mem1\n"));
        assert_non_null(strstr(f->out, "device=dax1.0 action=skip zone=online_movable reason=\"not devdax (mode "
                                        "system-ram)\" namespace=- region=-1 node=2 size=536870912 mode=system-ram "
                                        "cxl_region=region1 cxl_decoder=decoder0.0 cxl_memdev=mem1 "
                                        "memmap_on_memory=no memmap_reason=\"the device's memmap_on_memory reads 1, "
                                        "but the kernel is built without CONFIG_MHP_MEMMAP_ON_MEMORY\"\n"));
        assert_state(f, 1170, "offline");
}

/* A block whose state cannot be read is reported with a failure record and counted for a retry. */
static void test_unreadable_block_reported(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n");
        struct job j = rescan_job(p);

        fake_add_blocks(f->root, 32, 2, 1, "offline", "Movable Normal");
        /* memory33's state reads as EISDIR. */
        fake_unlink(f->root, "devices/system/memory/memory33/state");
        fake_mkdir(f->root, "devices/system/memory/memory33/state");

        assert_int_equal(runner_process(&f->runner, &j), 0);
        assert_state(f, 32, "online_movable");
        assert_int_equal(j.unreadable, 1);
        fflush(f->out_f);
        assert_non_null(strstr(f->out, "MEMONLINE_BLOCK=memory33"));
        assert_non_null(strstr(f->out, "its state cannot be read (Is a directory)"));
}

/*
 * Zones by device. Node 1 has 1 GiB of boot kernel memory: with
 * movable_ratio = 301 per node, one 2 GiB DIMM fits in its movable
 * budget, two do not. The guard decides per DIMM, never splitting one,
 * and the layout is the same however the events are cut into batches.
 */
#define RATIO_301 "[zones]\ndefault = online_movable\nmovable_ratio = 301\nratio_per_node = yes\n"
#define DIMM_A 32               /* PNP0C80:00: blocks 32..47 on node 1 */
#define DIMM_B 48               /* PNP0C80:01: blocks 48..63 on node 1 */

static void two_dimms(struct fixture *f) {
        fake_add_blocks(f->root, DIMM_A, 32, 1, "offline", "Movable Normal");
        fake_add_acpi_dimm(f->root, "PNP0C80:00", DIMM_A, 16);
        fake_add_acpi_dimm(f->root, "PNP0C80:01", DIMM_B, 16);
}

/* The zone of every block of both DIMMs, as "mmm...kkk" (m movable, k kernel, o offline). */
static void layout(const struct fixture *f, char *buf) {
        for (uint64_t id = DIMM_A; id < DIMM_B + 16; id++) {
                char rel[128];
                _cleanup_free_ char *s = NULL;

                snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", (unsigned long long) id);
                s = fake_read(f->root, rel);
                buf[id - DIMM_A] = !s ? '?' : streq(s, "online_movable") ? 'm' : streq(s, "online_kernel") ? 'k' : 'o';
        }
        buf[32] = 0;
}

static void run_cuts(struct fixture *f, const uint64_t *cuts, size_t n_cuts, char *ret_layout) {
        _cleanup_policy_ struct policy *p = policy_from(f, RATIO_301);
        uint64_t first = DIMM_A;

        for (size_t i = 0; i < n_cuts; i++) {
                run_batch(f, p, first, cuts[i] - first, NULL, 0, false);
                first = cuts[i];
        }
        layout(f, ret_layout);
}

static void test_zones_by_device(void **state) {
        struct fixture *f = *state;
        char want[33];

        /* One burst with both DIMMs. */
        two_dimms(f);
        run_cuts(f, (uint64_t[]) { DIMM_B + 16 }, 1, want);
        assert_string_equal(want, "mmmmmmmmmmmmmmmmkkkkkkkkkkkkkkkk");
        fflush(f->err_f);
        assert_non_null(strstr(f->err, "ratio guard: dimm PNP0C80:01 (2.0 GiB) -> online_kernel: movable would be "
                                        "4.0 GiB > 301% of 1.0 GiB boot kernel memory on node 1"));
        fflush(f->out_f);
        assert_non_null(strstr(f->out, "MEMONLINE_DEVICE=PNP0C80:00"));
        assert_non_null(strstr(f->out, "MEMONLINE_DEVICE_KIND=dimm"));
}

/* The same machine, the events cut into batches in other places: the same layout. */
static void test_zones_by_device_any_cut(void **state) {
        static const uint64_t cut_sets[][3] = {
                { DIMM_B, DIMM_B + 16 },                        /* one batch per DIMM */
                { DIMM_A + 5, DIMM_B + 3, DIMM_B + 16 },        /* cuts inside both DIMMs */
                { DIMM_A + 1, DIMM_B + 15, DIMM_B + 16 },
        };
        static const size_t n_cuts[] = { 2, 3, 3 };

        for (size_t k = 0; k < ELEMENTSOF(cut_sets); k++) {
                struct fixture *f = NULL;
                char got[33];

                setup((void **) &f);
                two_dimms(f);
                run_cuts(f, cut_sets[k], n_cuts[k], got);
                if (!streq(got, "mmmmmmmmmmmmmmmmkkkkkkkkkkkkkkkk"))
                        fail_msg("cut %zu: layout %s", k, got);
                teardown((void **) &f);
        }
}

/*
 * Boot memory is what the firmware described (firmware/memmap). A
 * virtio-mem block (outside it, iomem unreadable as in the sandbox) is
 * named after the virtio_mem device, and a hot-added kernel block outside
 * it buys no movable budget.
 */
static void test_virtio_mem_without_iomem(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, RATIO_301);

        /* Boot RAM: blocks 0..15 (2 GiB). */
        fake_write(f->root, "firmware/memmap/0/start", "0x0\n");
        fake_write(f->root, "firmware/memmap/0/end", "0x7fffffff\n");
        fake_write(f->root, "firmware/memmap/0/type", "System RAM\n");
        fake_symlink(f->root, "bus/virtio/drivers/virtio_mem/virtio3", "../../../../devices/pci/virtio3");
        /* 1 GiB of it hot-added into node 1's kernel zone earlier: not boot memory. */
        fake_add_blocks(f->root, 24, 8, 1, "online", "Normal");
        fake_add_blocks(f->root, 40, 8, 1, "offline", "Movable Normal");

        run_batch(f, p, 40, 8, NULL, 0, true);
        fflush(f->out_f);
        assert_non_null(strstr(f->out, "MEMONLINE_DEVICE=virtio3"));
        assert_non_null(strstr(f->out, "MEMONLINE_DEVICE_KIND=virtio-mem"));
        /* Node 1: 1 GiB boot kernel memory (the hot-added kernel block buys nothing), 301% = 3 GiB: all 1 GiB fits. */
        for (uint64_t id = 40; id < 48; id++)
                assert_state(f, id, "online_movable");
        assert_int_equal(topology_kernel_early(f->runner.topology, 1), 1ULL << 30);
}

/* ---- a batch's records wait for the next batch's first write ---- */

struct record_watch {
        struct fixture *f;
        bool written;                   /* atomic: a write of this batch entered */
        uint64_t seq_at_first_write;    /* the last batch record out when the batch's first write entered */
};

/* Only the batch's first write reads the reporter: the runner says the
 * last batch's records once a write returned, so this read comes before
 * them; later writes of the batch run beside them. */
static int watch_write(void *userdata, uint64_t id, int fd, const char *value) {
        struct record_watch *w = userdata;

        (void) id;
        if (!__atomic_exchange_n(&w->written, true, __ATOMIC_SEQ_CST))
                w->seq_at_first_write = __atomic_load_n(&w->f->rep.batch_seq, __ATOMIC_SEQ_CST);
        return online_write_state_file(fd, value);
}

static bool out_has(struct fixture *f, const char *text) {
        fflush(f->out_f);
        return f->out && strstr(f->out, text);
}

static void test_records_after_next_write(void **state) {
        struct fixture *f = *state;
        _cleanup_policy_ struct policy *p = policy_from(f, "[zones]\ndefault = online_movable\nmovable_ratio = 0\n");
        struct record_watch w = { .f = f };
        struct online_ops ops = { .write_file = watch_write, .userdata = &w };
        atomic_bool more = true;
        const char *one, *two;

        f->runner.ops = &ops;
        f->runner.more_work = &more;
        fake_add_blocks(f->root, 32, 4, 1, "offline", "Movable Normal");
        fake_add_blocks(f->root, 40, 2, 1, "offline", "Movable Normal");
        fake_add_blocks(f->root, 50, 1, 1, "offline", "Movable Normal");

        /* Another batch is queued: the records wait (and memory33, the zone's hole, waits for it too). */
        assert_int_equal(run_batch(f, p, 32, 4, NULL, 0, false), 3);
        assert_int_equal(f->rep.batch_seq, 0);
        assert_false(out_has(f, "MEMONLINE_BATCH="));

        /* The next batch's first write went out before them; then they, then its own (nothing queued now). */
        atomic_store(&more, false);
        __atomic_store_n(&w.written, false, __ATOMIC_SEQ_CST);
        assert_int_equal(run_batch(f, p, 40, 2, NULL, 0, false), 3);
        assert_int_equal(w.seq_at_first_write, 0);
        assert_int_equal(f->rep.batch_seq, 2);
        one = strstr(f->out, "MEMONLINE_BATCH=1 ");
        two = strstr(f->out, "MEMONLINE_BATCH=2 ");
        assert_non_null(one);
        assert_non_null(two);
        assert_true(one < two);
        assert_non_null(strstr(one, "MEMONLINE_BLOCKS=3 "));
        assert_non_null(strstr(two, "MEMONLINE_BLOCKS=3 "));
        assert_state(f, 33, "online_movable");

        /* Kept again; a job with nothing to write says them at its end. */
        atomic_store(&more, true);
        assert_int_equal(run_batch(f, p, 50, 1, NULL, 0, false), 1);
        assert_int_equal(f->rep.batch_seq, 2);
        assert_int_equal(run_batch(f, p, 32, 1, NULL, 0, false), 0);
        assert_int_equal(f->rep.batch_seq, 3);
        assert_true(out_has(f, "MEMONLINE_BATCH=3 "));

        /* And the runner's end says what it still keeps. */
        fake_add_blocks(f->root, 60, 1, 1, "offline", "Movable Normal");
        assert_int_equal(run_batch(f, p, 60, 1, NULL, 0, false), 1);
        assert_int_equal(f->rep.batch_seq, 3);
        runner_done(&f->runner);
        assert_int_equal(f->rep.batch_seq, 4);
        assert_true(out_has(f, "MEMONLINE_BATCH=4 "));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_records_after_next_write, setup, teardown),
                cmocka_unit_test_setup_teardown(test_topology_kept, setup, teardown),
                cmocka_unit_test_setup_teardown(test_adopt_linked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_adopt_linked_excluded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_touched_blocks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reload_after_offline, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rescan_reloads, setup, teardown),
                cmocka_unit_test_setup_teardown(test_new_node, setup, teardown),
                cmocka_unit_test_setup_teardown(test_held_for_next_batch, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unresolved_node_deferred, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unresolved_node_patience, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dax_unreadable_fail_safe, setup, teardown),
                cmocka_unit_test_setup_teardown(test_devdax_on_rescan, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_media_not_converted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_media_blocks_left_offline, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_media_unknown, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dax_remade_between_batches, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dax_batch_reuses_devices, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dax_batch_without_event_count, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reused_devices_stale_fail_safe, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_region_rule, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_dry_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unreadable_block_reported, setup, teardown),
                cmocka_unit_test_setup_teardown(test_zones_by_device, setup, teardown),
                cmocka_unit_test(test_zones_by_device_any_cut),
                cmocka_unit_test_setup_teardown(test_virtio_mem_without_iomem, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
