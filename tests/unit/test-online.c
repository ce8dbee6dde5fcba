/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include "fake-tree.h"
#include "online.h"
#include "uring.h"
#include "util.h"

/* ---- hand-built plans ------------------------------------------------ */

#define T_GROUPS 4
#define T_ITEMS 64

struct tplan {
        struct plan plan;
        struct plan_group groups[T_GROUPS];
        struct plan_item items[T_GROUPS][T_ITEMS];
        struct mem_block blocks[T_GROUPS][T_ITEMS];
        int cpus[T_GROUPS][4];
};

/* A group of n blocks from first_id, spread round-robin over the given CPUs. */
static void tplan_group(struct tplan *t, int node, const int *cpus, size_t n_cpus, uint64_t first_id,
                        size_t n, enum zone zone) {
        size_t g = t->plan.n_groups++;
        struct plan_group *pg = &t->groups[g];

        assert_true(g < T_GROUPS && n <= T_ITEMS && n_cpus >= 1 && n_cpus <= 4);
        memcpy(t->cpus[g], cpus, n_cpus * sizeof(int));
        for (size_t i = 0; i < n; i++) {
                t->blocks[g][i] = (struct mem_block) {
                        .id = first_id + i,
                        .phys_start = (first_id + i) << 27,
                        .state = BLOCK_STATE_OFFLINE,
                        .node = node,
                        .region = -1,
                };
                t->items[g][i] = (struct plan_item) {
                        .block = &t->blocks[g][i],
                        .zone = zone,
                        .reason = "test",
                        .worker = (int) (i % n_cpus),
                };
        }
        *pg = (struct plan_group) {
                .node = node,
                .writer_node = node,
                .cpus = t->cpus[g],
                .n_cpus = n_cpus,
                .items = t->items[g],
                .n_items = n,
        };
        t->plan.groups = t->groups;
        t->plan.n_items += n;
}

static struct policy test_policy(unsigned max_writes, unsigned retries) {
        return (struct policy) {
                .max_concurrent_writes = max_writes,
                .retries = retries,
                .retry_backoff_ms = 1,
                .retry_backoff_max_ms = 4,
        };
}

/* ---- scripted state writes ------------------------------------------- */

#define S_BLOCKS 64
#define S_ERRS 8

struct sblock {
        int errs[S_ERRS];               /* returned by the first n_errs writes */
        size_t n_errs;
        enum block_state state;         /* what read_state reports */
        bool online_on_einval;          /* another agent onlines it as our write fails */
        unsigned reads;
        unsigned calls;
        char written[32];
        char thread[16];                /* the writing thread's name */
        pid_t tid;                      /* and its id */
};

struct script {
        pthread_mutex_t lock;
        struct sblock b[S_BLOCKS];      /* indexed by block id */
        atomic_int cur, max;
        unsigned sleep_us;
        unsigned first_sleep_us;        /* longer sleep on the very first write */
        unsigned total_calls;
        uint64_t order[S_BLOCKS * 2];   /* block ids in write order */
        atomic_bool *stop;
        unsigned stop_after;            /* set *stop after this many writes */
        unsigned writes_per_turn;             /* online_request.writes_per_turn */
        struct online_pool *pool;       /* online_request.pool */
};

static void sleep_usec(unsigned us) {
        struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long) (us % 1000000) * 1000L };

        while (nanosleep(&ts, &ts) < 0)
                ;
}

static int s_write(void *userdata, const char *root, uint64_t id, const char *value) {
        struct script *s = userdata;
        struct sblock *b;
        unsigned call;
        int c, m, r = 0;

        assert_true(id < S_BLOCKS);
        b = &s->b[id];

        c = atomic_fetch_add(&s->cur, 1) + 1;
        m = atomic_load(&s->max);
        while (c > m && !atomic_compare_exchange_weak(&s->max, &m, c))
                ;

        pthread_mutex_lock(&s->lock);
        call = s->total_calls++;
        if (call < ELEMENTSOF(s->order))
                s->order[call] = id;
        b->calls++;
        if (b->calls <= b->n_errs)
                r = b->errs[b->calls - 1];
        (void) prctl(PR_GET_NAME, b->thread);
        b->tid = gettid();
        if (r == 0) {
                snprintf(b->written, sizeof(b->written), "%s", value);
                b->state = BLOCK_STATE_ONLINE;
        } else if (r == -EINVAL && b->online_on_einval)
                b->state = BLOCK_STATE_ONLINE;
        if (s->stop && s->stop_after > 0 && s->total_calls == s->stop_after)
                atomic_store(s->stop, true);
        pthread_mutex_unlock(&s->lock);

        if (call == 0 && s->first_sleep_us)
                sleep_usec(s->first_sleep_us);
        else if (s->sleep_us)
                sleep_usec(s->sleep_us);

        atomic_fetch_sub(&s->cur, 1);
        return r;
}

static int s_read(void *userdata, const char *root, uint64_t id, enum block_state *ret) {
        struct script *s = userdata;

        assert_true(id < S_BLOCKS);
        pthread_mutex_lock(&s->lock);
        *ret = s->b[id].state;
        s->b[id].reads++;
        pthread_mutex_unlock(&s->lock);
        return 0;
}

static void script_init(struct script *s) {
        memset(s, 0, sizeof(*s));
        pthread_mutex_init(&s->lock, NULL);
        for (size_t i = 0; i < S_BLOCKS; i++)
                s->b[i].state = BLOCK_STATE_OFFLINE;
}

static void script_errs(struct script *s, uint64_t id, size_t n, ...) {
        va_list ap;

        va_start(ap, n);
        for (size_t i = 0; i < n; i++)
                s->b[id].errs[i] = va_arg(ap, int);
        va_end(ap);
        s->b[id].n_errs = n;
}

static struct online_result *run_script_held(struct tplan *t, struct script *s, const struct policy *p,
                                             const atomic_bool *hold_last, const uint64_t *held_in,
                                             size_t n_held_in, atomic_bool *stop) {
        struct online_ops ops = { .write_state = s_write, .read_state = s_read, .userdata = s };
        struct online_request req = {
                .sysfs_root = "/nonexistent",
                .block_size = 128ULL << 20,
                .plan = &t->plan,
                .policy = p,
                .ops = &ops,
                .stop = stop,
                .writes_per_turn = s->writes_per_turn,
                .pool = s->pool,
                .hold_last = hold_last,
                .held_in = held_in,
                .n_held_in = n_held_in,
        };
        struct online_result *res = NULL;

        assert_int_equal(online_write(&req, &res), 0);
        assert_non_null(res);
        assert_int_equal(res->n_blocks, t->plan.n_items);
        assert_int_equal(res->n_groups, t->plan.n_groups);
        return res;
}

static struct online_result *run_script(struct tplan *t, struct script *s, const struct policy *p,
                                        atomic_bool *stop) {
        return run_script_held(t, s, p, NULL, NULL, 0, stop);
}

/* ---- tests ----------------------------------------------------------- */

static int file_write(void *userdata, uint64_t id, int fd, const char *value);

/* A request that writes the fake tree at root, 128 MiB blocks. */
static struct online_request tree_request(const char *root, struct tplan *t, const struct policy *p) {
        return (struct online_request) {
                .sysfs_root = root,
                .block_size = 128ULL << 20,
                .plan = &t->plan,
                .policy = p,
        };
}

static void test_fake_tree(void **state) {
        char *root = fake_tree_new();
        struct tplan t = {};
        const int unpinned[] = { -1, -1 };
        struct policy p = test_policy(1, 2);
        _cleanup_online_result_ struct online_result *res = NULL;
        struct online_request req = tree_request(root, &t, &p);

        fake_standard_machine(root);
        for (uint64_t b = 16; b < 20; b++)
                fake_add_block(root, b, 0, "offline", "Normal Movable");
        for (uint64_t b = 20; b < 24; b++)
                fake_add_block(root, b, 1, "offline", "Normal Movable");

        tplan_group(&t, 0, unpinned, 2, 16, 4, ZONE_MOVABLE);
        tplan_group(&t, 1, unpinned, 1, 20, 5, ZONE_ONLINE);   /* memory24 does not exist */

        assert_int_equal(online_write(&req, &res), 0);

        for (uint64_t b = 16; b < 24; b++) {
                char rel[128];
                _cleanup_free_ char *v = NULL;

                snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", (unsigned long long) b);
                v = fake_read(root, rel);
                assert_non_null(v);
                assert_string_equal(v, b < 20 ? "online_movable" : "online");
        }
        for (size_t i = 0; i < 8; i++) {
                assert_int_equal(res->blocks[i].id, 16 + i);
                assert_int_equal(res->blocks[i].error, 0);
                assert_int_equal(res->blocks[i].attempts, 1);
                assert_true(res->blocks[i].done_usec > 0);
                assert_false(res->blocks[i].not_attempted);
        }
        /* The vanished block (removed since its add event): skipped, no write, no failure. */
        assert_int_equal(res->blocks[8].id, 24);
        assert_int_equal(res->blocks[8].error, 0);
        assert_true(res->blocks[8].skipped);
        assert_int_equal(res->blocks[8].attempts, 0);

        assert_int_equal(res->groups[0].node, 0);
        assert_int_equal(res->groups[0].blocks, 4);
        assert_int_equal(res->groups[0].failed, 0);
        assert_int_equal(res->groups[0].bytes, 4 * (128ULL << 20));
        assert_int_equal(res->groups[0].zones_used, 1U << ZONE_MOVABLE);
        assert_int_equal(res->groups[0].n_lat, 4);
        assert_non_null(res->groups[0].cpus_used);
        assert_true(strlen(res->groups[0].cpus_used) > 0);
        assert_int_equal(res->groups[1].blocks, 4);
        assert_int_equal(res->groups[1].failed, 0);
        assert_int_equal(res->groups[1].zones_used, 1U << ZONE_ONLINE);
        assert_int_equal(res->failed, 0);
        assert_int_equal(res->bytes, 8 * (128ULL << 20));
        assert_true(res->start_usec > 0 && res->start_usec <= res->end_usec);
        assert_false(res->pin_failed);
        /* Each group's first block online is its earliest write's end; the batch's is the earlier of them. */
        for (size_t g = 0; g < 2; g++) {
                uint64_t first = UINT64_MAX;

                for (size_t i = 4 * g; i < 4 * g + 4; i++)
                        first = MIN(first, res->blocks[i].done_usec);
                assert_int_equal(res->groups[g].first_online_usec, first);
        }
        assert_int_equal(res->first_online_usec, MIN(res->groups[0].first_online_usec, res->groups[1].first_online_usec));
        assert_true(res->first_online_usec >= res->start_usec && res->first_online_usec <= res->end_usec);

        fake_tree_free(root);
}

static unsigned open_fds(void) {
        unsigned n = 0;
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;

        assert_non_null(d);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        closedir(d);
        return n;
}

/*
 * The memory directory is opened once per run. Gone, every block counts
 * as removed (skipped); unusable, every block fails with its error.
 */
static void test_memory_dir_unusable(void **state) {
        char *root = fake_tree_new();
        struct tplan t = {};
        const int unpinned[] = { -1 };
        struct policy p = test_policy(1, 2);
        _cleanup_online_result_ struct online_result *res = NULL;
        struct online_request req = tree_request(root, &t, &p);
        unsigned fds_before = open_fds();

        tplan_group(&t, 0, unpinned, 1, 16, 3, ZONE_MOVABLE);
        assert_int_equal(online_write(&req, &res), 0);
        for (size_t i = 0; i < 3; i++) {
                assert_true(res->blocks[i].skipped);
                assert_int_equal(res->blocks[i].error, 0);
        }
        assert_int_equal(res->failed, 0);
        online_result_free(TAKE_PTR(res));

        fake_write(root, "devices/system/memory", "not a directory\n");
        assert_int_equal(online_write(&req, &res), 0);
        for (size_t i = 0; i < 3; i++) {
                assert_false(res->blocks[i].skipped);
                assert_int_equal(res->blocks[i].error, -ENOTDIR);
                assert_int_equal(res->blocks[i].attempts, 0);
        }
        assert_int_equal(res->failed, 3);
        /* Nothing came online: no first block. */
        assert_int_equal(res->first_online_usec, 0);
        assert_int_equal(res->groups[0].first_online_usec, 0);
        assert_int_equal(open_fds(), fds_before);
        fake_tree_free(root);
}

/*
 * On a tree (not ops): each worker's helper opens files ahead of the
 * writes. Many more blocks than it prepares ahead, some not offline by
 * their turn, one gone: every offline one written, nothing left open.
 */
static void test_prefetch_tree(void **state) {
        char *root = fake_tree_new();
        struct tplan t = {};
        const int unpinned[] = { -1, -1 };
        struct policy p = test_policy(1, 2);
        _cleanup_online_result_ struct online_result *res = NULL;
        struct online_request req = tree_request(root, &t, &p);
        unsigned fds_before;

        fake_standard_machine(root);
        fake_add_blocks(root, 100, 60, 0, "offline", "Normal Movable");
        fake_write(root, "devices/system/memory/memory130/state", "online\n");
        fake_write(root, "devices/system/memory/memory131/state", "going-offline\n");
        fake_remove_block(root, 159, 0);
        tplan_group(&t, 0, unpinned, 2, 100, 60, ZONE_MOVABLE);

        fds_before = open_fds();
        assert_int_equal(online_write(&req, &res), 0);
        assert_int_equal(open_fds(), fds_before);

        for (size_t i = 0; i < 60; i++) {
                const struct block_result *br = &res->blocks[i];
                char rel[128];
                _cleanup_free_ char *v = NULL;

                if (br->id == 130 || br->id == 131 || br->id == 159) {
                        assert_true(br->skipped);
                        assert_int_equal(br->attempts, 0);
                        continue;
                }
                assert_false(br->skipped);
                assert_int_equal(br->error, 0);
                snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", (unsigned long long) br->id);
                v = fake_read(root, rel);
                assert_string_equal(v, "online_movable");
        }
        assert_int_equal(res->groups[0].blocks, 57);
        assert_int_equal(res->groups[0].failed, 0);
        online_result_free(TAKE_PTR(res));

        /* Stopped before the first turn: what the helpers opened is closed too. */
        for (unsigned k = 0; k < 5; k++) {
                atomic_bool stop = true;

                req.stop = &stop;
                assert_int_equal(online_write(&req, &res), 0);
                assert_int_equal(open_fds(), fds_before);
                assert_true(res->blocks[0].not_attempted);
                online_result_free(TAKE_PTR(res));
        }
        fake_tree_free(root);
}

static void test_ebusy_then_success(void **state) {
        struct tplan t = {};
        const int cpu[] = { -1 };
        struct policy p = test_policy(1, 3);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        script_errs(&s, 2, 2, -EBUSY, -EBUSY);
        tplan_group(&t, 0, cpu, 1, 1, 3, ZONE_MOVABLE);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->blocks[1].id, 2);
        assert_int_equal(res->blocks[1].error, 0);
        assert_int_equal(res->blocks[1].attempts, 3);
        assert_false(res->blocks[1].already_online);
        assert_string_equal(s.b[2].written, "online_movable");
        assert_int_equal(res->blocks[0].attempts, 1);
        assert_int_equal(res->groups[0].blocks, 3);
        assert_int_equal(res->failed, 0);
        assert_int_equal(s.total_calls, 5);
}

static void test_eagain_exhausted(void **state) {
        struct tplan t = {};
        const int cpu[] = { -1 };
        struct policy p = test_policy(1, 2);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        script_errs(&s, 5, 6, -EAGAIN, -EAGAIN, -EAGAIN, -EAGAIN, -EAGAIN, -EAGAIN);
        tplan_group(&t, 0, cpu, 1, 4, 3, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->blocks[1].id, 5);
        assert_int_equal(res->blocks[1].error, -EAGAIN);
        assert_int_equal(res->blocks[1].attempts, 3);   /* first try + 2 retries */
        assert_int_equal(s.b[5].calls, 3);
        /* One block failing never stops the others. */
        assert_int_equal(res->blocks[2].error, 0);
        assert_int_equal(res->groups[0].blocks, 2);
        assert_int_equal(res->groups[0].failed, 1);
        assert_int_equal(res->failed, 1);
        assert_int_equal(res->bytes, 2 * (128ULL << 20));
        assert_int_equal(res->groups[0].n_lat, 2);
}

static void test_einval(void **state) {
        struct tplan t = {};
        const int cpu[] = { -1 };
        struct policy p = test_policy(1, 5);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        /* Block 1: someone else onlined it as we wrote. Block 2: invalid in any zone. */
        script_errs(&s, 1, 1, -EINVAL);
        s.b[1].online_on_einval = true;
        script_errs(&s, 2, 2, -EINVAL, -EINVAL);
        tplan_group(&t, 0, cpu, 1, 1, 2, ZONE_KERNEL);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->blocks[0].error, 0);
        assert_true(res->blocks[0].already_online);
        assert_int_equal(res->blocks[0].attempts, 1);
        assert_int_equal(res->blocks[1].error, -EINVAL);
        assert_false(res->blocks[1].already_online);
        /* online_kernel, then the kernel's own choice once; no more. */
        assert_int_equal(res->blocks[1].attempts, 2);
        assert_int_equal(s.b[2].calls, 2);
        /* Already-online blocks are neither ours nor failures. */
        assert_int_equal(res->groups[0].blocks, 0);
        assert_int_equal(res->groups[0].failed, 1);
        assert_int_equal(res->groups[0].n_lat, 0);
        assert_int_equal(res->bytes, 0);
}

/* The zone asked for is not valid (valid_zones is not read up front): the kernel's choice instead. */
static void test_zone_fallback(void **state) {
        struct tplan t = {};
        const int cpu[] = { -1 };
        struct policy p = test_policy(1, 5);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        script_errs(&s, 1, 1, -EINVAL);
        script_errs(&s, 3, 1, -EINVAL);
        tplan_group(&t, 0, cpu, 1, 1, 2, ZONE_MOVABLE);
        tplan_group(&t, 1, cpu, 1, 3, 1, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->blocks[0].error, 0);
        assert_int_equal(res->blocks[0].attempts, 2);
        assert_int_equal(res->blocks[0].zone, ZONE_ONLINE);
        assert_true(res->blocks[0].fell_back);
        assert_string_equal(s.b[1].written, "online");
        assert_string_equal(s.b[2].written, "online_movable");
        assert_int_equal(res->groups[0].blocks, 2);
        assert_int_equal(res->groups[0].zones_used, (1U << ZONE_ONLINE) | (1U << ZONE_MOVABLE));
        /* "online" itself refused: nothing to fall back to. */
        assert_int_equal(res->blocks[2].error, -EINVAL);
        assert_int_equal(res->blocks[2].attempts, 1);
        assert_int_equal(res->groups[1].failed, 1);
}

/* An admin's rule is not changed behind their back: EINVAL stands, no fallback, the block stays offline. */
static void test_rule_zone_no_fallback(void **state) {
        struct tplan t = {};
        const int cpu[] = { -1 };
        struct policy p = test_policy(1, 5);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        script_errs(&s, 1, 1, -EINVAL);
        tplan_group(&t, 0, cpu, 1, 1, 1, ZONE_MOVABLE);
        t.items[0][0].by_rule = true;
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->blocks[0].error, -EINVAL);
        assert_int_equal(res->blocks[0].attempts, 1);
        assert_false(res->blocks[0].fell_back);
        assert_int_equal(res->blocks[0].zone, ZONE_MOVABLE);
        assert_int_equal(s.b[1].state, BLOCK_STATE_OFFLINE);
        assert_int_equal(res->groups[0].failed, 1);
}

/* A state file that is a link out of the tree (--sysfs-root) is never written through. */
static void test_state_link_out_of_tree(void **state) {
        char *root = fake_tree_new(), *outside = fake_tree_new();
        _cleanup_free_ char *target = NULL, *left = NULL;
        struct tplan t = {};
        const int unpinned[] = { -1 };
        struct policy p = test_policy(1, 2);
        _cleanup_online_result_ struct online_result *res = NULL;
        struct online_request req = tree_request(root, &t, &p);

        fake_memory_init(root, 128ULL << 20);
        fake_add_block(root, 16, 0, "offline", "Movable Normal");
        fake_write(outside, "precious", "offline\n");
        assert_true(asprintf(&target, "%s/precious", outside) > 0);
        fake_unlink(root, "devices/system/memory/memory16/state");
        fake_symlink(root, "devices/system/memory/memory16/state", target);

        tplan_group(&t, 0, unpinned, 1, 16, 1, ZONE_MOVABLE);
        assert_int_equal(online_write(&req, &res), 0);
        assert_true(res->blocks[0].error == -ELOOP || res->blocks[0].error == -EXDEV);
        assert_int_equal(res->failed, 1);
        left = fake_read(outside, "precious");
        assert_string_equal(left, "offline");
        fake_tree_free(root);
        fake_tree_free(outside);
}

/* Blocks are checked at their turn: online (or going offline) ones are not written and not counted. */
static void test_not_offline_skipped(void **state) {
        struct tplan t = {};
        const int cpu[] = { -1 };
        struct policy p = test_policy(1, 5);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        s.b[2].state = BLOCK_STATE_ONLINE;
        s.b[3].state = BLOCK_STATE_GOING_OFFLINE;
        tplan_group(&t, 0, cpu, 1, 1, 4, ZONE_MOVABLE);
        res = run_script(&t, &s, &p, NULL);

        assert_true(res->blocks[1].skipped);
        assert_true(res->blocks[2].skipped);
        assert_int_equal(s.b[2].calls, 0);
        assert_int_equal(s.b[3].calls, 0);
        assert_int_equal(res->blocks[1].attempts, 0);
        assert_int_equal(res->blocks[1].error, 0);
        assert_false(res->blocks[0].skipped);
        assert_int_equal(s.b[1].reads, 1);     /* one check, before the write */
        assert_int_equal(res->groups[0].blocks, 2);
        assert_int_equal(res->groups[0].failed, 0);
        assert_int_equal(res->bytes, 2 * (128ULL << 20));
}

static void test_enoent(void **state) {
        struct tplan t = {};
        const int cpu[] = { -1 };
        struct policy p = test_policy(1, 5);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        script_errs(&s, 7, 3, -ENOENT, -ENOENT, -ENOENT);
        script_errs(&s, 8, 1, -EIO);
        tplan_group(&t, 0, cpu, 1, 7, 3, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->blocks[0].error, -ENOENT);
        assert_int_equal(res->blocks[0].attempts, 1);
        assert_int_equal(s.b[7].calls, 1);
        assert_int_equal(res->blocks[1].error, -EIO);
        assert_int_equal(res->blocks[1].attempts, 1);
        assert_int_equal(res->blocks[2].error, 0);
        assert_int_equal(res->failed, 2);
}

static void test_mixed_groups(void **state) {
        struct tplan t = {};
        const int one[] = { -1 }, two[] = { -1, -1 };
        struct policy p = test_policy(1, 1);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        script_errs(&s, 11, 1, -EIO);
        script_errs(&s, 21, 1, -EBUSY);                 /* retried once, then fine */
        script_errs(&s, 22, 2, -EBUSY, -EBUSY);         /* beyond one retry */
        tplan_group(&t, 0, one, 1, 10, 3, ZONE_ONLINE);
        tplan_group(&t, 2, two, 2, 20, 5, ZONE_MOVABLE);
        res = run_script(&t, &s, &p, NULL);

        /* Plan order. */
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(res->blocks[i].id, 10 + i);
        for (size_t i = 0; i < 5; i++) {
                assert_int_equal(res->blocks[3 + i].id, 20 + i);
                assert_int_equal(res->blocks[3 + i].node, 2);
                assert_int_equal(res->blocks[3 + i].zone, ZONE_MOVABLE);
        }
        assert_int_equal(res->blocks[1].error, -EIO);
        assert_int_equal(res->blocks[4].error, 0);
        assert_int_equal(res->blocks[4].attempts, 2);
        assert_int_equal(res->blocks[5].error, -EBUSY);
        assert_int_equal(res->blocks[5].attempts, 2);

        assert_int_equal(res->groups[0].node, 0);
        assert_int_equal(res->groups[0].blocks, 2);
        assert_int_equal(res->groups[0].failed, 1);
        assert_int_equal(res->groups[0].zones_used, 1U << ZONE_ONLINE);
        assert_int_equal(res->groups[1].node, 2);
        assert_int_equal(res->groups[1].blocks, 4);
        assert_int_equal(res->groups[1].failed, 1);
        assert_int_equal(res->groups[1].bytes, 4 * (128ULL << 20));
        assert_int_equal(res->groups[1].n_lat, 4);
        for (size_t i = 1; i < res->groups[1].n_lat; i++)
                assert_true(res->groups[1].lat_sorted[i - 1] <= res->groups[1].lat_sorted[i]);
        assert_int_equal(res->failed, 2);
        assert_int_equal(res->bytes, 6 * (128ULL << 20));
        /* Each node's writers are named for it. */
        assert_string_equal(s.b[10].thread, "mo-write-n0");
        assert_string_equal(s.b[23].thread, "mo-write-n2");
        for (size_t g = 0; g < 2; g++) {
                assert_true(res->groups[g].start_usec > 0);
                assert_true(res->groups[g].start_usec <= res->groups[g].end_usec);
                assert_true(res->start_usec <= res->groups[g].start_usec);
                assert_true(res->end_usec >= res->groups[g].end_usec);
        }
}

static void run_limit(unsigned limit) {
        struct tplan t = {};
        const int two[] = { -1, -1 };
        struct policy p = test_policy(limit, 0);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        s.sleep_us = 2000;
        tplan_group(&t, 0, two, 2, 0, 6, ZONE_ONLINE);
        tplan_group(&t, 1, two, 2, 10, 6, ZONE_ONLINE);
        tplan_group(&t, 2, two, 2, 20, 6, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->failed, 0);
        assert_int_equal(s.total_calls, 18);
        assert_true(atomic_load(&s.max) <= (int) limit);
        /* Six ready workers and 2 ms writes: the second slot does get used. */
        assert_int_equal(atomic_load(&s.max), (int) limit);
}

static void test_limit_1(void **state) {
        run_limit(1);
}

static void test_limit_2(void **state) {
        run_limit(2);
}

static void test_fifo_interleave(void **state) {
        struct tplan t = {};
        const int one[] = { -1 };
        struct policy p = test_policy(1, 0);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        /*
         * While the first write sleeps, the other node's worker queues up;
         * each later write gives the idle worker time to queue again.
         */
        s.first_sleep_us = 100000;
        s.sleep_us = 10000;
        s.writes_per_turn = 1;
        tplan_group(&t, 0, one, 1, 0, 4, ZONE_ONLINE);
        tplan_group(&t, 1, one, 1, 10, 4, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(s.total_calls, 8);
        for (size_t i = 1; i < 8; i++)
                assert_true((s.order[i] >= 10) != (s.order[i - 1] >= 10));
}

/* A worker keeps the slot for writes_per_turn blocks, then the waiting node gets a run. */
static void test_write_runs(void **state) {
        struct tplan t = {};
        const int one[] = { -1 };
        struct policy p = test_policy(1, 0);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        s.first_sleep_us = 100000;
        s.sleep_us = 5000;
        s.writes_per_turn = 3;
        tplan_group(&t, 0, one, 1, 0, 6, ZONE_ONLINE);
        tplan_group(&t, 1, one, 1, 10, 6, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->failed, 0);
        assert_int_equal(s.total_calls, 12);
        for (size_t i = 0; i < 12; i++) {
                bool same_run_as_first = (i / 3) % 2 == 0;

                assert_int_equal(s.order[i] >= 10, same_run_as_first == (s.order[0] >= 10));
        }
        /* Each node's blocks still go in write order: ascending, the second one last. */
        const uint64_t node0[] = { 0, 2, 3, 4, 5, 1 };
        size_t k0 = 0, k1 = 0;
        for (size_t i = 0; i < 12; i++)
                if (s.order[i] >= 10)
                        assert_int_equal(s.order[i], 10 + node0[k1++]);
                else
                        assert_int_equal(s.order[i], node0[k0++]);
}

/* A failed write gives the slot up before the backoff, even in the middle of a run. */
static void test_write_run_failure_hands_over(void **state) {
        struct tplan t = {};
        const int one[] = { -1 };
        struct policy p = test_policy(1, 3);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;
        const uint64_t a_first[] = { 0, 10, 12, 13, 11, 0, 2, 3, 1 };
        const uint64_t b_first[] = { 10, 12, 13, 11, 0, 0, 2, 3, 1 };
        const uint64_t *want;

        script_init(&s);
        s.first_sleep_us = 100000;
        s.sleep_us = 5000;
        script_errs(&s, 0, 1, -EBUSY);
        tplan_group(&t, 0, one, 1, 0, 4, ZONE_ONLINE);
        tplan_group(&t, 1, one, 1, 10, 4, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->failed, 0);
        assert_int_equal(s.total_calls, 9);
        /* Whichever worker starts, the default run keeps its blocks together. */
        want = s.order[0] == 0 ? a_first : b_first;
        for (size_t i = 0; i < 9; i++)
                assert_int_equal(s.order[i], want[i]);
}

/*
 * Per worker, ascending ids except each zone's second block, which goes
 * last: the kernel's zone walk after every online stops at that hole.
 */
static void test_write_order_defers_second_of_each_zone(void **state) {
        struct tplan t = {};
        const int one[] = { -1 }, two[] = { -1, -1 };
        struct policy p = test_policy(1, 0);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;
        const uint64_t w0[] = { 0, 2, 3, 4, 6, 1, 5 }, w1[] = { 20, 24, 26, 22 }, w2[] = { 21, 25, 27, 23 },
                       w3[] = { 40, 41 };
        const uint64_t *want[] = { w0, w1, w2, w3 };
        const size_t n_want[] = { ELEMENTSOF(w0), ELEMENTSOF(w1), ELEMENTSOF(w2), ELEMENTSOF(w3) };

        script_init(&s);
        /* One worker: blocks 0-3 movable, 4-6 kernel. */
        tplan_group(&t, 0, one, 1, 0, 7, ZONE_MOVABLE);
        for (size_t i = 4; i < 7; i++)
                t.items[0][i].zone = ZONE_KERNEL;
        /* Two workers (this test plan deals blocks round-robin): each defers its own second block. */
        tplan_group(&t, 1, two, 2, 20, 8, ZONE_MOVABLE);
        /* Two blocks: nothing to gain. */
        tplan_group(&t, 2, one, 1, 40, 2, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_int_equal(res->failed, 0);
        assert_int_equal(s.total_calls, 17);
        /* Workers interleave; each one's own sequence is fixed. */
        for (size_t w = 0; w < ELEMENTSOF(want); w++) {
                size_t k = 0;

                for (size_t i = 0; i < s.total_calls; i++) {
                        bool mine = false;

                        for (size_t j = 0; j < n_want[w]; j++)
                                mine = mine || s.order[i] == want[w][j];
                        if (mine) {
                                assert_true(k < n_want[w]);
                                assert_int_equal(s.order[i], want[w][k++]);
                        }
                }
                assert_int_equal(k, n_want[w]);
        }
        /* Results stay in plan order. */
        for (size_t i = 0; i < 7; i++)
                assert_int_equal(res->blocks[i].id, i);
}

/* While hold_last is set, the deferred blocks are left offline and marked held. */
static void test_hold_last(void **state) {
        struct tplan t = {};
        const int one[] = { -1 };
        struct policy p = test_policy(1, 0);
        atomic_bool more = true;
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        tplan_group(&t, 0, one, 1, 0, 6, ZONE_MOVABLE);
        res = run_script_held(&t, &s, &p, &more, NULL, 0, NULL);

        assert_int_equal(s.total_calls, 5);
        assert_int_equal(s.b[1].calls, 0);
        assert_true(res->blocks[1].held);
        assert_true(res->blocks[1].skipped);
        assert_int_equal(res->blocks[1].attempts, 0);
        for (size_t i = 0; i < 6; i++)
                assert_int_equal(res->blocks[i].held, i == 1);
        assert_int_equal(res->groups[0].blocks, 5);
        assert_int_equal(res->failed, 0);
}

/* A block held over from the last job is its zone's deferred block: written last, the second one in order. */
static void test_held_in_written_last(void **state) {
        struct tplan t = {};
        const int one[] = { -1 };
        struct policy p = test_policy(1, 0);
        atomic_bool more = false;
        const uint64_t held[] = { 5 };
        const uint64_t want[] = { 6, 7, 8, 5 };
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        /* Block 5, held over, is the lowest id and first in plan order. */
        tplan_group(&t, 0, one, 1, 5, 4, ZONE_MOVABLE);
        res = run_script_held(&t, &s, &p, &more, held, 1, NULL);

        assert_int_equal(s.total_calls, 4);
        for (size_t i = 0; i < 4; i++)
                assert_int_equal(s.order[i], want[i]);
        assert_false(res->blocks[0].held);
}

static void test_stop(void **state) {
        struct tplan t = {};
        const int one[] = { -1 };
        struct policy p = test_policy(1, 0);
        atomic_bool stop = false;
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        s.stop = &stop;
        s.stop_after = 3;
        tplan_group(&t, 1, one, 1, 30, 6, ZONE_MOVABLE);
        res = run_script(&t, &s, &p, &stop);

        assert_int_equal(s.total_calls, 3);
        /* Written in order 30, 32, 33 (31 waits until last): results are in plan order. */
        const size_t written[] = { 0, 2, 3 }, left[] = { 1, 4, 5 };
        for (size_t k = 0; k < ELEMENTSOF(written); k++) {
                size_t i = written[k];

                assert_int_equal(res->blocks[i].error, 0);
                assert_false(res->blocks[i].not_attempted);
        }
        for (size_t k = 0; k < ELEMENTSOF(left); k++) {
                size_t i = left[k];

                assert_true(res->blocks[i].not_attempted);
                assert_int_equal(res->blocks[i].error, -ECANCELED);
                assert_int_equal(res->blocks[i].attempts, 0);
        }
        /* Not attempted is not failed: those blocks wait for the next start. */
        assert_int_equal(res->groups[0].blocks, 3);
        assert_int_equal(res->groups[0].failed, 0);
        assert_int_equal(res->failed, 0);
        assert_int_equal(res->bytes, 3 * (128ULL << 20));
}

static void test_stop_before_start(void **state) {
        struct tplan t = {};
        const int two[] = { -1, -1 };
        atomic_bool stop = true;
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        tplan_group(&t, 0, two, 2, 0, 4, ZONE_ONLINE);
        res = run_script(&t, &s, NULL, &stop);

        assert_int_equal(s.total_calls, 0);
        for (size_t i = 0; i < 4; i++)
                assert_true(res->blocks[i].not_attempted);
        assert_int_equal(res->failed, 0);
        assert_int_equal(res->start_usec, 0);
}

static void test_pin_failure(void **state) {
        struct tplan t = {};
        const int bogus[] = { 4000 };
        struct policy p = test_policy(1, 0);
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        tplan_group(&t, 0, bogus, 1, 0, 3, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_true(res->pin_failed);
        assert_int_equal(res->pin_cpu, 4000);
        assert_int_equal(res->pin_errno, EINVAL);
        assert_int_equal(res->failed, 0);
        assert_int_equal(res->groups[0].blocks, 3);
}

static void test_pin_success(void **state) {
        struct tplan t = {};
        int cpu[1];
        struct policy p = test_policy(1, 0);
        struct script s;
        cpu_set_t set;
        char expect[16];
        _cleanup_online_result_ struct online_result *res = NULL;

        /* The highest CPU we may run on: the worker must really write from it. */
        assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
        cpu[0] = -1;
        for (int c = CPU_SETSIZE - 1; c >= 0; c--)
                if (CPU_ISSET(c, &set)) {
                        cpu[0] = c;
                        break;
                }
        assert_true(cpu[0] >= 0);

        script_init(&s);
        tplan_group(&t, 0, cpu, 1, 0, 3, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);

        assert_false(res->pin_failed);
        snprintf(expect, sizeof(expect), "%d", cpu[0]);
        assert_string_equal(res->groups[0].cpus_used, expect);
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(res->blocks[i].cpu, cpu[0]);
}

/* Threads of this process, from /proc/self/task. */
static unsigned count_tasks(void) {
        DIR *d = opendir("/proc/self/task");
        struct dirent *de;
        unsigned n = 0;

        assert_non_null(d);
        while ((de = readdir(d)))
                n += de->d_name[0] != '.';
        closedir(d);
        return n;
}

/* The two CPUs this process may run on with the highest ids; false with fewer than two. */
static bool two_cpus(int *ret_a, int *ret_b) {
        cpu_set_t set;
        int n = 0, cpus[2];

        assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
        for (int c = CPU_SETSIZE - 1; c >= 0 && n < 2; c--)
                if (CPU_ISSET(c, &set))
                        cpus[n++] = c;
        if (n < 2)
                return false;
        *ret_a = cpus[0];
        *ret_b = cpus[1];
        return true;
}

/* A pool's writer threads (and their helpers) outlive the pass: the next pass's writes come from them. */
static void test_pool_keeps_threads(void **state) {
        struct tplan t = {};
        const int unpinned[] = { -1, -1 };
        struct policy p = test_policy(1, 0);
        _cleanup_(online_pool_freep) struct online_pool *pool = NULL;
        struct script s;
        pid_t tids[4];
        unsigned base = count_tasks();

        /* Without a pool the pass's threads end with it. */
        script_init(&s);
        tplan_group(&t, 0, unpinned, 2, 0, 4, ZONE_ONLINE);
        online_result_free(run_script(&t, &s, &p, NULL));
        assert_int_equal(count_tasks(), base);

        assert_int_equal(online_pool_new(&pool), 0);
        script_init(&s);
        s.pool = pool;
        online_result_free(run_script(&t, &s, &p, NULL));
        for (size_t i = 0; i < 4; i++) {
                tids[i] = s.b[i].tid;
                assert_true(tids[i] != gettid());
        }
        /* Two workers on the same CPU (here: none) are two threads, each with its helper, kept. */
        assert_true(tids[0] != tids[1]);
        assert_int_equal(online_pool_threads(pool), 2);
        assert_int_equal(count_tasks(), base + 4);

        script_init(&s);
        s.pool = pool;
        online_result_free(run_script(&t, &s, &p, NULL));
        for (size_t i = 0; i < 4; i++)
                assert_true(s.b[i].tid == tids[0] || s.b[i].tid == tids[1]);
        assert_int_equal(online_pool_threads(pool), 2);
        assert_int_equal(count_tasks(), base + 4);

        online_pool_free(TAKE_PTR(pool));
        assert_int_equal(count_tasks(), base);
}

/*
 * A pool thread pins itself once, and again after online_pool_repin():
 * a CPU that went offline took its threads' pin with it, which pinning
 * only once would never restore.
 */
static void test_pool_repins(void **state) {
        struct tplan t = {};
        int cpu[1] = { -1 }, other = -1;
        struct policy p = test_policy(1, 0);
        _cleanup_(online_pool_freep) struct online_pool *pool = NULL;
        struct online_result *res;
        struct script s;
        cpu_set_t set;
        pid_t tid;

        if (!two_cpus(&cpu[0], &other))
                skip();
        assert_int_equal(online_pool_new(&pool), 0);
        tplan_group(&t, 0, cpu, 1, 0, 2, ZONE_ONLINE);
        script_init(&s);
        s.pool = pool;
        res = run_script(&t, &s, &p, NULL);
        assert_int_equal(res->blocks[0].cpu, cpu[0]);
        online_result_free(res);
        tid = s.b[0].tid;

        /* What the kernel does to a thread pinned to a CPU going offline: it moves it elsewhere. */
        CPU_ZERO(&set);
        CPU_SET(other, &set);
        assert_int_equal(sched_setaffinity(tid, sizeof(set), &set), 0);
        script_init(&s);
        s.pool = pool;
        res = run_script(&t, &s, &p, NULL);
        assert_int_equal(s.b[0].tid, tid);
        assert_int_equal(res->blocks[0].cpu, other);
        online_result_free(res);

        /* CPUs changed: the same thread pins itself again before its next writes. */
        online_pool_repin(pool);
        script_init(&s);
        s.pool = pool;
        res = run_script(&t, &s, &p, NULL);
        assert_int_equal(s.b[0].tid, tid);
        if (res->pin_failed)
                fail_msg("pin to %d failed: %s", res->pin_cpu, strerror(res->pin_errno));
        for (size_t i = 0; i < 2; i++)
                assert_int_equal(res->blocks[i].cpu, cpu[0]);
        online_result_free(res);
}

/* Threads of this process whose affinity is cpu alone. */
static unsigned tasks_pinned_to(int cpu) {
        DIR *d = opendir("/proc/self/task");
        struct dirent *de;
        unsigned n = 0;

        assert_non_null(d);
        while ((de = readdir(d))) {
                cpu_set_t set;

                if (de->d_name[0] == '.' || sched_getaffinity(atoi(de->d_name), sizeof(set), &set) < 0)
                        continue;
                n += CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
        }
        closedir(d);
        return n;
}

/* Writer threads started ahead are started and pinned before any pass; the pass takes them. */
static void test_pool_prepare(void **state) {
        struct tplan t = {};
        int cpu[1] = { -1 }, other = -1;
        struct policy p = test_policy(1, 0);
        _cleanup_(online_pool_freep) struct online_pool *pool = NULL;
        struct online_result *res;
        struct script s;
        unsigned i;

        if (!two_cpus(&cpu[0], &other))
                skip();
        assert_int_equal(online_pool_new(&pool), 0);
        assert_int_equal(online_pool_prepare(pool, cpu, 1), 0);
        assert_int_equal(online_pool_threads(pool), 1);
        /* Pinned on its own, with no pass to run (its helper is not: it runs anywhere). */
        for (i = 0; i < 1000 && tasks_pinned_to(cpu[0]) == 0; i++)
                usleep(1000);
        assert_int_equal(tasks_pinned_to(cpu[0]), 1);
        /* Asked again: it is there, idle. */
        assert_int_equal(online_pool_prepare(pool, cpu, 1), 0);
        assert_int_equal(online_pool_threads(pool), 1);

        script_init(&s);
        s.pool = pool;
        tplan_group(&t, 0, cpu, 1, 0, 3, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);
        assert_int_equal(online_pool_threads(pool), 1);
        for (size_t k = 0; k < 3; k++)
                assert_int_equal(res->blocks[k].cpu, cpu[0]);
        online_result_free(res);
}

/* No thread can be started: the pass writes every block itself, unpinned. */
static int no_threads_child(void) {
        struct tplan t = {};
        const int cpus[] = { 0, 1 };
        struct policy p = test_policy(1, 0);
        _cleanup_(online_pool_freep) struct online_pool *pool = NULL;
        struct rlimit rl = {};
        struct online_result *res;
        struct script s;

        /* root may start threads whatever RLIMIT_NPROC says */
        if (getuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
                return 10;
        if (setrlimit(RLIMIT_NPROC, &rl) < 0 || online_pool_new(&pool) < 0)
                return 11;
        script_init(&s);
        s.pool = pool;
        tplan_group(&t, 0, cpus, 2, 0, 4, ZONE_ONLINE);
        res = run_script(&t, &s, &p, NULL);
        for (size_t i = 0; i < 4; i++)
                if (res->blocks[i].error != 0 || s.b[i].tid != gettid() || res->blocks[i].attempts != 1)
                        return 12;
        online_result_free(res);
        return online_pool_threads(pool) == 0 ? 0 : 13;
}

static void test_pool_no_threads(void **state) {
        int status = 0;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0)
                _exit(no_threads_child());
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_empty_plan(void **state) {
        struct tplan t = {};
        struct script s;
        _cleanup_online_result_ struct online_result *res = NULL;

        script_init(&s);
        res = run_script(&t, &s, NULL, NULL);
        assert_int_equal(res->n_blocks, 0);
        assert_int_equal(res->failed, 0);
        assert_int_equal(res->bytes, 0);
}

static void test_bad_request(void **state) {
        struct online_result *res = (struct online_result *) 0x1;
        struct tplan t = {};
        struct online_request req = { .plan = &t.plan };    /* no root, no ops */
        struct online_ops none = {}, files_only = { .write_file = file_write };

        assert_int_equal(online_write(&req, &res), -EINVAL);
        /* ops that write nothing; write_file without files to write through. */
        req.ops = &none;
        req.sysfs_root = "/nonexistent";
        assert_int_equal(online_write(&req, &res), -EINVAL);
        req.ops = &files_only;
        req.sysfs_root = NULL;
        assert_int_equal(online_write(&req, &res), -EINVAL);
        assert_ptr_equal(res, (struct online_result *) 0x1);
}

/* ---- the write through the state file: the default and the write_file seam ---- */

static char *read_back(const char *path) {
        char buf[64] = "";
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        assert_true(fd >= 0);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_true(n >= 0);
        return strndup(buf, (size_t) n);
}

static int state_file(char *path, const char *content) {
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, content, strlen(content), 0), (ssize_t) strlen(content));
        return fd;
}

static void test_write_state_file(void **state) {
        char path[] = "/tmp/memonline-state-XXXXXX";
        _cleanup_free_ char *v = NULL;
        _cleanup_free_ char *long_value = NULL;
        int fd, devnull, ro;
        pid_t pid;
        int status;

        /* One line, as echo writes it: over "offline\n" the first line reads "online", and sysfs_read() agrees. */
        fd = state_file(path, "offline\n");
        assert_int_equal(online_write_state_file(fd, "online"), 0);
        v = read_back(path);
        assert_string_equal(v, "online\n\n");
        free(TAKE_PTR(v));
        /* Over a file without its newline: exactly the value's line. */
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(pwrite(fd, "offline", 7, 0), 7);
        assert_int_equal(online_write_state_file(fd, "online"), 0);
        v = read_back(path);
        assert_string_equal(v, "online\n");
        free(TAKE_PTR(v));
        /* The longer values replace it whole. */
        assert_int_equal(pwrite(fd, "offline\n", 8, 0), 8);
        assert_int_equal(online_write_state_file(fd, "online_movable"), 0);
        v = read_back(path);
        assert_string_equal(v, "online_movable\n");
        free(TAKE_PTR(v));

        /* The write fails: its errno. */
        ro = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(ro >= 0);
        assert_int_equal(online_write_state_file(ro, "online"), -EBADF);
        close(ro);

        /* A value no state file takes is refused before any write. */
        devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        assert_true(devnull >= 0);
        assert_int_equal(online_write_state_file(devnull, "online"), 0);
        long_value = strdup("online_movable_online_movable_xx");
        assert_non_null(long_value);
        assert_int_equal(online_write_state_file(devnull, long_value), -EINVAL);
        close(devnull);

        /* A short write is -EIO. In a child: the file size limit is per process. */
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(pwrite(fd, "offline\n", 8, 0), 8);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct rlimit rl = { .rlim_cur = 3, .rlim_max = 3 };

                signal(SIGXFSZ, SIG_IGN);
                if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
                        _exit(2);
                _exit(online_write_state_file(fd, "online") == -EIO ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        v = read_back(path);
        assert_string_equal(v, "onlline\n");
        close(fd);
        unlink(path);
}

/* A stand-in for the kernel's side of the write, on the fake tree's real files. */
struct file_script {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        int errs[64][4];                /* per block id: what its writes return first, then the default */
        size_t n_errs[64], calls[64];
        size_t total_calls;
        bool bad_args;                  /* a call without a usable fd or value */
        uint64_t block_on;              /* hold this block's write until released (0: none) */
        bool blocked, released;
};

static int file_write(void *userdata, uint64_t id, int fd, const char *value) {
        struct file_script *f = userdata;
        int r = 0;

        pthread_mutex_lock(&f->lock);
        f->total_calls++;
        if (fd < 0 || !value || id >= 64)
                f->bad_args = true;
        else if (f->calls[id] < f->n_errs[id])
                r = f->errs[id][f->calls[id]];
        if (id < 64)
                f->calls[id]++;
        if (id == f->block_on) {
                f->blocked = true;
                pthread_cond_broadcast(&f->cond);
                while (!f->released)
                        pthread_cond_wait(&f->cond, &f->lock);
        }
        pthread_mutex_unlock(&f->lock);
        return r < 0 ? r : online_write_state_file(fd, value);
}

static void file_script_init(struct file_script *f) {
        memset(f, 0, sizeof(*f));
        pthread_mutex_init(&f->lock, NULL);
        pthread_cond_init(&f->cond, NULL);
}

static char *block_state(const char *root, uint64_t id) {
        char rel[128];

        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", (unsigned long long) id);
        return fake_read(root, rel);
}

/*
 * write_file: the blocks go through their files (opened ahead, read before
 * the write and after EINVAL) and only the write is the test's. Failures
 * there take the same ways as on sysfs.
 */
static void test_write_file_fails(void **state) {
        char *root = fake_tree_new();
        struct tplan t = {};
        const int one[] = { -1 };
        struct policy p = test_policy(1, 2);
        struct file_script f;
        struct online_ops ops = { .write_file = file_write, .userdata = &f };
        _cleanup_online_result_ struct online_result *res = NULL;
        struct online_request req = tree_request(root, &t, &p);
        unsigned fds_before;

        fake_standard_machine(root);
        fake_add_blocks(root, 16, 6, 0, "offline", "Normal Movable");
        tplan_group(&t, 0, one, 1, 16, 6, ZONE_MOVABLE);
        file_script_init(&f);
        f.errs[17][0] = f.errs[17][1] = -EBUSY;         /* retried, then written */
        f.n_errs[17] = 2;
        f.errs[19][0] = -EIO;                           /* fails for good */
        f.n_errs[19] = 1;
        f.errs[20][0] = -EINVAL;                        /* still offline: the kernel's zone instead */
        f.n_errs[20] = 1;
        req.ops = &ops;

        fds_before = open_fds();
        assert_int_equal(online_write(&req, &res), 0);
        assert_int_equal(open_fds(), fds_before);
        assert_false(f.bad_args);

        for (size_t i = 0; i < 6; i++) {
                const struct block_result *br = &res->blocks[i];
                _cleanup_free_ char *v = block_state(root, br->id);

                assert_int_equal(br->id, 16 + i);
                assert_false(br->skipped);
                if (br->id == 19) {
                        assert_int_equal(br->error, -EIO);
                        assert_int_equal(br->attempts, 1);
                        assert_string_equal(v, "offline");
                } else if (br->id == 20) {
                        assert_int_equal(br->error, 0);
                        assert_true(br->fell_back);
                        assert_int_equal(br->attempts, 2);
                        assert_string_equal(v, "online");
                } else {
                        assert_int_equal(br->error, 0);
                        assert_int_equal(br->attempts, br->id == 17 ? 3 : 1);
                        assert_string_equal(v, "online_movable");
                }
        }
        assert_int_equal(f.total_calls, 9);
        assert_int_equal(res->groups[0].blocks, 5);
        assert_int_equal(res->failed, 1);
        fake_tree_free(root);
}

struct stopper {
        struct file_script *f;
        atomic_bool *stop;
};

/* Waits until the write is held in the kernel, then stops the job (SIGTERM) and lets the write end. */
static void *stop_during_write(void *userdata) {
        struct stopper *s = userdata;

        pthread_mutex_lock(&s->f->lock);
        while (!s->f->blocked)
                pthread_cond_wait(&s->f->cond, &s->f->lock);
        atomic_store(s->stop, true);
        s->f->released = true;
        pthread_cond_broadcast(&s->f->cond);
        pthread_mutex_unlock(&s->f->lock);
        return NULL;
}

/*
 * A write that blocks (the kernel busy with the add) while the helper has
 * opened the next files, and a stop comes meanwhile: the write in flight
 * ends and counts, no further block is written, every file is closed.
 */
static void test_write_file_blocks(void **state) {
        char *root = fake_tree_new();
        struct tplan t = {};
        const int one[] = { -1 };
        struct policy p = test_policy(1, 0);
        struct file_script f;
        struct online_ops ops = { .write_file = file_write, .userdata = &f };
        _cleanup_online_result_ struct online_result *res = NULL;
        struct online_request req = tree_request(root, &t, &p);
        atomic_bool stop = false;
        struct stopper stopper = { .f = &f, .stop = &stop };
        unsigned fds_before;
        pthread_t thread;

        fake_standard_machine(root);
        fake_add_blocks(root, 40, 20, 0, "offline", "Normal Movable");
        tplan_group(&t, 0, one, 1, 40, 20, ZONE_MOVABLE);
        file_script_init(&f);
        f.block_on = 42;        /* the third write: 40, then 42 (41 goes last) */
        req.ops = &ops;
        req.stop = &stop;

        fds_before = open_fds();
        assert_int_equal(pthread_create(&thread, NULL, stop_during_write, &stopper), 0);
        assert_int_equal(online_write(&req, &res), 0);
        assert_int_equal(pthread_join(thread, NULL), 0);
        assert_int_equal(open_fds(), fds_before);

        assert_int_equal(f.total_calls, 2);
        for (size_t i = 0; i < 20; i++) {
                const struct block_result *br = &res->blocks[i];
                _cleanup_free_ char *v = block_state(root, br->id);
                bool written = br->id == 40 || br->id == 42;

                assert_int_equal(br->error, written ? 0 : -ECANCELED);
                assert_int_equal(br->not_attempted, !written);
                assert_string_equal(v, written ? "online_movable" : "offline");
        }
        assert_int_equal(res->groups[0].blocks, 2);
        assert_int_equal(res->failed, 0);
        fake_tree_free(root);
}

/* ---- chained writes: a run of writes as one linked io_uring chain ---- */

/* The highest CPU this process may run on. */
static int allowed_cpu(void) {
        cpu_set_t set;

        assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
        for (int c = CPU_SETSIZE - 1; c >= 0; c--)
                if (CPU_ISSET(c, &set))
                        return c;
        fail();
        return -1;
}

/* 0 when this kernel (and whatever filters us) gives a ring, else why not. */
static int ring_error(void) {
        struct uring u;
        int r = uring_open(4, &u);

        if (r == 0)
                uring_close(&u);
        return r;
}

static void test_chain_writes(void **state) {
        char *root = fake_tree_new();
        struct tplan t = {};
        const int cpu[] = { allowed_cpu() };
        struct policy p = test_policy(1, 0);
        _cleanup_online_result_ struct online_result *res = NULL;
        struct online_request req = tree_request(root, &t, &p);
        uint64_t last_done = 0;
        unsigned fds_before;
        int ring = ring_error();

        p.write_chain = true;
        req.writes_per_turn = 64;       /* the chains' lengths alone: 1 (alone), 2, 4, 8, 16, 9 */
        fake_standard_machine(root);
        fake_add_blocks(root, 40, 40, 0, "offline", "Normal Movable");
        tplan_group(&t, 0, cpu, 1, 40, 40, ZONE_MOVABLE);

        fds_before = open_fds();
        assert_int_equal(online_write(&req, &res), 0);
        /* The pass's own threads are gone, and their rings with them. */
        assert_int_equal(open_fds(), fds_before);

        for (size_t i = 0; i < 40; i++) {
                const struct block_result *br = &res->blocks[i];
                _cleanup_free_ char *v = block_state(root, br->id);

                assert_int_equal(br->error, 0);
                assert_int_equal(br->attempts, 1);
                assert_int_equal(br->cpu, cpu[0]);
                assert_string_equal(v, "online_movable");
                if (br->id != 41)
                        last_done = MAX(last_done, br->done_usec);
        }
        /* The zone's second block still goes last, inside the last chain. */
        assert_true(res->blocks[1].id == 41 && res->blocks[1].done_usec >= last_done);
        assert_int_equal(res->groups[0].blocks, 40);
        if (ring == 0) {
                /* All but the run's first block, which goes alone. */
                assert_int_equal(res->chained, 39);
                assert_int_equal(res->chain_errno, 0);
        } else {
                /* No ring here (a filter, a tool that does not know io_uring): block by block, and why. */
                assert_int_equal(res->chained, 0);
                assert_int_equal(res->chain_errno, -ring);
        }

        /* Asked for none: block by block. */
        p.write_chain = false;
        for (uint64_t id = 40; id < 80; id++)
                fake_add_block(root, id, 0, "offline", "Normal Movable");
        online_result_freep(&res);
        assert_int_equal(online_write(&req, &res), 0);
        assert_int_equal(res->chained, 0);
        assert_int_equal(res->chain_errno, 0);
        assert_int_equal(res->groups[0].blocks, 40);
        fake_tree_free(root);
}

/* The kernel's answers to the chained writes, by block id; the rest are the real results. */
struct chain_script {
        pthread_mutex_t lock;
        int answer[128];                /* 0: the real result */
        unsigned calls[128];
        unsigned total;
};

static int chain_answer(void *userdata, uint64_t id, int res) {
        struct chain_script *c = userdata;
        int r = res;

        pthread_mutex_lock(&c->lock);
        c->total++;
        if (id < 128) {
                c->calls[id]++;
                if (c->answer[id] != 0)
                        r = c->answer[id];
        }
        pthread_mutex_unlock(&c->lock);
        return r;
}

static void test_chain_link_fails(void **state) {
        char *root = fake_tree_new();
        struct tplan t = {};
        const int cpu[] = { allowed_cpu() };
        struct policy p = test_policy(1, 2);
        struct chain_script c = { .lock = PTHREAD_MUTEX_INITIALIZER };
        struct online_ops ops = { .chain_result = chain_answer, .userdata = &c };
        _cleanup_online_result_ struct online_result *res = NULL;
        struct online_request req = tree_request(root, &t, &p);

        bool ring = ring_error() == 0;

        p.write_chain = true;
        req.ops = &ops;
        req.writes_per_turn = 64;
        fake_standard_machine(root);
        fake_add_blocks(root, 40, 40, 0, "offline", "Normal Movable");
        tplan_group(&t, 0, cpu, 1, 40, 40, ZONE_MOVABLE);
        /*
         * In write order: 40 alone, then chains of 2, 4, 8, 16 and the
         * rest: 42-43 | 44-47 | 48-55 | 56-71 | 72-79 41. In the second,
         * 45 busy and the kernel cancels 46-47; in the third the hotplug
         * lock busy at 50 (the store never ran), 51-55 cancelled; in the
         * fourth 60 cut short, 61-71 cancelled. The rest go through.
         */
        c.answer[45] = -EBUSY;
        c.answer[50] = -EINTR;
        c.answer[60] = 3;
        for (uint64_t id = 46; id <= 47; id++)
                c.answer[id] = -ECANCELED;
        for (uint64_t id = 51; id <= 55; id++)
                c.answer[id] = -ECANCELED;
        for (uint64_t id = 61; id <= 71; id++)
                c.answer[id] = -ECANCELED;

        assert_int_equal(online_write(&req, &res), 0);

        if (!ring) {
                /* No ring, no chain to break: every block block by block, and the kernel's answers unasked. */
                assert_int_equal(c.total, 0);
                assert_int_equal(res->failed, 0);
                assert_int_equal(res->groups[0].blocks, 40);
                fake_tree_free(root);
                return;
        }
        /* Every block but the first went through a chain once, and none twice. */
        assert_int_equal(c.total, 39);
        for (uint64_t id = 40; id < 80; id++)
                assert_int_equal(c.calls[id], id == 40 ? 0 : 1);
        for (size_t i = 0; i < 40; i++) {
                const struct block_result *br = &res->blocks[i];
                _cleanup_free_ char *v = block_state(root, br->id);

                if (br->id == 60) {
                        /* Cut short: a failure, not retried, as a short write(2) is. */
                        assert_int_equal(br->error, -EIO);
                        assert_int_equal(br->attempts, 1);
                        continue;
                }
                assert_int_equal(br->error, 0);
                assert_string_equal(v, "online_movable");
                /* Busy: a second write, block by block. Cancelled or lock-busy: the one write is block by block. */
                assert_int_equal(br->attempts, br->id == 45 ? 2 : 1);
        }
        assert_int_equal(res->failed, 1);
        assert_int_equal(res->chained, 2 + 1 + 2 + 4 + 9);
        assert_int_equal(res->chain_errno, 0);
        fake_tree_free(root);
}

/* A block not offline at its turn ends the chain before it, is skipped, and the next chain goes on. */
static void test_chain_stray(void **state) {
        char *root = fake_tree_new();
        struct tplan t = {};
        const int cpu[] = { allowed_cpu() };
        struct policy p = test_policy(1, 0);
        _cleanup_online_result_ struct online_result *res = NULL;
        struct online_request req = tree_request(root, &t, &p);
        int ring = ring_error();

        p.write_chain = true;
        fake_standard_machine(root);
        fake_add_blocks(root, 40, 20, 0, "offline", "Normal Movable");
        fake_write(root, "devices/system/memory/memory45/state", "online\n");
        fake_remove_block(root, 50, 0);
        tplan_group(&t, 0, cpu, 1, 40, 20, ZONE_MOVABLE);

        assert_int_equal(online_write(&req, &res), 0);
        for (size_t i = 0; i < 20; i++) {
                const struct block_result *br = &res->blocks[i];
                _cleanup_free_ char *v = NULL;

                if (br->id == 45 || br->id == 50) {
                        assert_true(br->skipped);
                        assert_int_equal(br->attempts, 0);
                        continue;
                }
                v = block_state(root, br->id);
                assert_int_equal(br->error, 0);
                assert_string_equal(v, "online_movable");
        }
        assert_int_equal(res->groups[0].blocks, 18);
        /*
         * 40 alone; 42-43; 44, whose next block (45) ends its chain before
         * it began, alone; 46-49; 51-58; 59 41.
         */
        assert_int_equal(res->chained, ring == 0 ? 16 : 0);
        fake_tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fake_tree),
                cmocka_unit_test(test_prefetch_tree),
                cmocka_unit_test(test_memory_dir_unusable),
                cmocka_unit_test(test_state_link_out_of_tree),
                cmocka_unit_test(test_ebusy_then_success),
                cmocka_unit_test(test_eagain_exhausted),
                cmocka_unit_test(test_einval),
                cmocka_unit_test(test_zone_fallback),
                cmocka_unit_test(test_rule_zone_no_fallback),
                cmocka_unit_test(test_not_offline_skipped),
                cmocka_unit_test(test_enoent),
                cmocka_unit_test(test_mixed_groups),
                cmocka_unit_test(test_limit_1),
                cmocka_unit_test(test_limit_2),
                cmocka_unit_test(test_fifo_interleave),
                cmocka_unit_test(test_write_runs),
                cmocka_unit_test(test_write_run_failure_hands_over),
                cmocka_unit_test(test_write_order_defers_second_of_each_zone),
                cmocka_unit_test(test_hold_last),
                cmocka_unit_test(test_held_in_written_last),
                cmocka_unit_test(test_stop),
                cmocka_unit_test(test_stop_before_start),
                cmocka_unit_test(test_pin_failure),
                cmocka_unit_test(test_pin_success),
                cmocka_unit_test(test_pool_keeps_threads),
                cmocka_unit_test(test_pool_repins),
                cmocka_unit_test(test_pool_no_threads),
                cmocka_unit_test(test_pool_prepare),
                cmocka_unit_test(test_empty_plan),
                cmocka_unit_test(test_bad_request),
                cmocka_unit_test(test_write_state_file),
                cmocka_unit_test(test_write_file_fails),
                cmocka_unit_test(test_write_file_blocks),
                cmocka_unit_test(test_chain_writes),
                cmocka_unit_test(test_chain_link_fails),
                cmocka_unit_test(test_chain_stray),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
