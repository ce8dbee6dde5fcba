/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's event loop on a fake tree, driven by timers: events come
 * from a pipe instead of udev, and a stand-in kernel (online_ops) writes
 * the state files, slowly or not at all, as each test needs. Covers
 * reloads during a job, a runner thread that cannot start, a stuck
 * runner (watchdog, bounded stop), and blocks held back at a stop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "fake-tree.h"
#include "loop.h"
#include "metrics.h"
#include "status-read.h"
#include "util.h"
#include "monitor.h"
#include "online.h"
#include "policy.h"
#include "progress.h"
#include "report.h"
#include "topology.h"

#define MSEC USEC_PER_MSEC

/* The stand-in kernel: each write takes delay_usec; a write of stuck_block waits until released. */
struct fake_kernel {
        const char *root;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        uint64_t delay_usec;
        uint64_t stuck_block;           /* UINT64_MAX: none */
        uint64_t watched_block;         /* UINT64_MAX: none; else auto_online_blocks is read as it is written */
        char *auto_at_watched;
        bool released;
        bool stuck_now;                 /* a writer waits in the stuck block */
        unsigned writes;
        pid_t writer[64];               /* the thread that wrote memoryN, N < 64 */
};

struct fixture {
        char *root;
        char *conf;
        struct reporter rep;
        char *out, *err;
        size_t out_len, err_len;
        FILE *out_f, *err_f;
        int feed_pipe[2];
        struct event_feed feed;
        bool feed_given;                /* false: the loop opens a real udev monitor */
        struct fake_kernel kernel;
        struct online_ops ops;
        struct loop *loop;
        int notify_fd;                  /* our NOTIFY_SOCKET, -1 if none */
        unsigned watchdog_pings;
};

static char *state_rel(uint64_t id) {
        char *rel = NULL;

        assert_true(asprintf(&rel, "devices/system/memory/memory%llu/state", (unsigned long long) id) > 0);
        return rel;
}

static int kernel_write(void *userdata, const char *root, uint64_t id, const char *value) {
        struct fake_kernel *k = userdata;
        _cleanup_free_ char *rel = state_rel(id);

        pthread_mutex_lock(&k->lock);
        if (id == k->stuck_block)
                while (!k->released) {
                        k->stuck_now = true;
                        pthread_cond_wait(&k->cond, &k->lock);
                }
        k->stuck_now = false;
        k->writes++;
        if (id == k->watched_block) {
                free(k->auto_at_watched);
                k->auto_at_watched = fake_read(k->root, "devices/system/memory/auto_online_blocks");
        }
        if (id < ELEMENTSOF(k->writer))
                k->writer[id] = gettid();
        pthread_mutex_unlock(&k->lock);
        if (k->delay_usec)
                usleep((useconds_t) k->delay_usec);
        fake_write(k->root, rel, "%s\n", value);
        return 0;
}

static int kernel_read(void *userdata, const char *root, uint64_t id, enum block_state *ret) {
        struct fake_kernel *k = userdata;
        _cleanup_free_ char *rel = state_rel(id), *s = fake_read(k->root, rel);

        if (!s)
                return -ENOENT;
        *ret = block_state_from_string(s);
        return 0;
}

static void kernel_release(struct fake_kernel *k) {
        pthread_mutex_lock(&k->lock);
        k->released = true;
        pthread_cond_broadcast(&k->cond);
        pthread_mutex_unlock(&k->lock);
}

static bool kernel_stuck(struct fake_kernel *k) {
        bool stuck;

        pthread_mutex_lock(&k->lock);
        stuck = k->stuck_now;
        pthread_mutex_unlock(&k->lock);
        return stuck;
}

static int feed_receive(void *userdata, struct monitor_event *ret) {
        struct fixture *f = userdata;
        ssize_t n = read(f->feed_pipe[0], ret, sizeof(*ret));

        if (n < 0)
                return errno == EAGAIN ? 0 : -errno;
        return n == (ssize_t) sizeof(*ret) ? 1 : 0;
}

static void feed_add(struct fixture *f, uint64_t id) {
        struct monitor_event ev = { .kind = MONITOR_MEMORY_ADD, .block_id = id };

        assert_int_equal(write(f->feed_pipe[1], &ev, sizeof(ev)), (ssize_t) sizeof(ev));
}

static void feed_kind(struct fixture *f, enum monitor_kind kind) {
        struct monitor_event ev = { .kind = kind };

        assert_int_equal(write(f->feed_pipe[1], &ev, sizeof(ev)), (ssize_t) sizeof(ev));
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->root = fake_tree_new();
        fake_standard_machine(f->root);
        assert_true(asprintf(&f->conf, "%s/memonlined.conf", f->root) > 0);
        f->out_f = open_memstream(&f->out, &f->out_len);
        f->err_f = open_memstream(&f->err, &f->err_len);
        assert_non_null(f->out_f);
        assert_non_null(f->err_f);
        reporter_init(&f->rep, LOG_TARGET_CONSOLE);
        f->rep.out = f->out_f;
        f->rep.err = f->err_f;
        assert_int_equal(pipe2(f->feed_pipe, O_CLOEXEC | O_NONBLOCK), 0);
        f->feed = (struct event_feed) { .fd = f->feed_pipe[0], .receive = feed_receive, .userdata = f };
        f->kernel = (struct fake_kernel) { .root = f->root, .stuck_block = UINT64_MAX, .watched_block = UINT64_MAX };
        pthread_mutex_init(&f->kernel.lock, NULL);
        pthread_cond_init(&f->kernel.cond, NULL);
        f->ops = (struct online_ops) { .write_state = kernel_write, .read_state = kernel_read,
                                       .userdata = &f->kernel };
        f->notify_fd = -1;
        f->feed_given = true;
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        kernel_release(&f->kernel);
        loop_free(f->loop);
        free(f->kernel.auto_at_watched);
        close(f->feed_pipe[0]);
        close(f->feed_pipe[1]);
        if (f->notify_fd >= 0)
                close(f->notify_fd);
        unsetenv("NOTIFY_SOCKET");
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
        fclose(f->out_f);
        fclose(f->err_f);
        free(f->out);
        free(f->err);
        free(f->conf);
        fake_tree_free(f->root);
        free(f);
        return 0;
}

static void write_conf(struct fixture *f, const char *text) {
        fake_write(f->root, "memonlined.conf", "%s", text);
}

static void new_loop(struct fixture *f, uint64_t stop_timeout_usec) {
        _cleanup_free_ char *run = NULL;
        struct loop_config cfg = {
                .config_path = f->conf,
                .config_explicit = true,
                .sysfs_root = f->root,
                .reporter = &f->rep,
                .feed = f->feed_given ? &f->feed : NULL,
                .ops = &f->ops,
                .stop_timeout_usec = stop_timeout_usec,
        };

        /* The runtime directory (systemd's RuntimeDirectory=) for the progress file. */
        fake_mkdir(f->root, "run");
        assert_true(asprintf(&run, "%s/run", f->root) > 0);
        cfg.runtime_dir = run;
        assert_int_equal(loop_new(&cfg, &f->loop), 0);
}

/* Blocks 32-35 offline on node1, the policy, a stand-in kernel taking delay_msec a write, and coldplug started. */
static void start_with(struct fixture *f, const char *conf, uint64_t delay_msec, uint64_t stop_timeout_usec) {
        fake_add_blocks(f->root, 32, 4, 1, "offline", "Movable Normal");
        write_conf(f, conf);
        new_loop(f, stop_timeout_usec);
        f->kernel.delay_usec = delay_msec * MSEC;
        assert_int_equal(loop_start(f->loop), 0);
}

/* A hot-add of memoryN on node1: the block appears, then its event. */
static void add_and_feed(struct fixture *f, uint64_t id) {
        fake_add_block(f->root, id, 1, "offline", "Movable Normal");
        feed_add(f, id);
}

static bool has_state(const struct fixture *f, uint64_t id, const char *want) {
        _cleanup_free_ char *rel = state_rel(id), *s = fake_read(f->root, rel);

        return s && streq(s, want);
}

static bool err_has(struct fixture *f, const char *text) {
        fflush(f->err_f);
        return f->err && strstr(f->err, text);
}

/* A step of a test, run from the loop at a given time. */
typedef void (*step_fn)(struct fixture *f);
struct step {
        struct fixture *f;
        step_fn fn;
};

static int on_step(sd_event_source *s, uint64_t usec, void *userdata) {
        struct step *st = userdata;

        st->fn(st->f);
        sd_event_source_disable_unref(s);       /* frees st */
        return 0;
}

/*
 * Run fn at msec after the loop starts; the loop must be running (call from a step) or set up.
 * A step still pending when the loop ends is freed with it.
 */
static void at(struct fixture *f, uint64_t msec, step_fn fn) {
        struct step *st = calloc(1, sizeof(*st));
        sd_event_source *s = NULL;

        assert_non_null(st);
        *st = (struct step) { f, fn };
        assert_true(sd_event_add_time_relative(loop_get_event(f->loop), &s, CLOCK_MONOTONIC, msec * MSEC, 1,
                                               on_step, st) >= 0);
        assert_true(sd_event_source_set_destroy_callback(s, free) >= 0);
        assert_true(sd_event_source_set_floating(s, true) >= 0);
        sd_event_source_unref(s);
}

static void stop(struct fixture *f) {
        loop_terminate(f->loop);
}

static bool runner_idle(struct fixture *f) {
        struct loop_stats st;

        loop_get_stats(f->loop, &st);
        return !st.runner_busy;
}

/* The coldplug of blocks 32-35 has written them, and the runner waits for the next job. */
static bool coldplug_over(struct fixture *f) {
        return has_state(f, 35, "online_movable") && runner_idle(f);
}

/* Stop once the runner is idle. */
static void stop_when_idle(struct fixture *f) {
        struct loop_stats st;

        loop_get_stats(f->loop, &st);
        if (st.runner_busy)
                at(f, 20, stop_when_idle);
        else
                stop(f);
}

#define CONF_MOVABLE "[daemon]\nsettle_ms = 5\nnode_link_wait_ms = 50\n[zones]\ndefault = online_movable\n" \
                     "movable_ratio = 0\n"

/* ---- reload during a job: the job keeps the policy it was planned under ---- */

static void reload_twice(struct fixture *f) {
        write_conf(f, "[daemon]\nsettle_ms = 5\n[zones]\ndefault = online_kernel\nmovable_ratio = 0\n");
        assert_int_equal(loop_reload(f->loop), 0);
        write_conf(f, CONF_MOVABLE);
        assert_int_equal(loop_reload(f->loop), 0);
        at(f, 50, stop_when_idle);
}

static void test_reload_during_job(void **state) {
        struct fixture *f = *state;
        struct loop_stats st;

        start_with(f, CONF_MOVABLE, 40, 0);
        loop_get_stats(f->loop, &st);
        assert_true(st.runner_busy);
        /* Two reloads while the coldplug job writes: the second freed the job's policy before. */
        at(f, 30, reload_twice);
        assert_int_equal(loop_run(f->loop), 0);
        for (uint64_t id = 32; id < 36; id++)
                assert_true(has_state(f, id, "online_movable"));
        assert_int_equal(f->kernel.writes, 4);
}

/* A broken file is refused, and the old policy keeps serving the next batch. */
static void reload_broken(struct fixture *f) {
        write_conf(f, "[zones]\ndefault = online_kernel\n[node 1]\nzone = sideways\n");
        assert_int_equal(loop_reload(f->loop), -EINVAL);
        add_and_feed(f, 40);
        at(f, 100, stop_when_idle);
}

static void test_reload_broken_keeps_policy(void **state) {
        struct fixture *f = *state;

        start_with(f, CONF_MOVABLE, 0, 0);
        at(f, 20, reload_broken);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(err_has(f, "memonlined.conf:4: "));
        assert_true(err_has(f, "keeping the previous policy"));
        assert_true(has_state(f, 40, "online_movable"));
}

/*
 * A reload that names another event source listens there from then on: the
 * socket is opened at start, so this once needed a restart and said nothing.
 */
static void reload_to_kernel_events(struct fixture *f) {
        struct loop_stats st;

        loop_get_stats(f->loop, &st);
        assert_true(st.listening);
        assert_int_equal(st.event_source, EVENT_SOURCE_UDEV);
        write_conf(f, "[daemon]\nsettle_ms = 5\nevent_source = kernel\n[zones]\ndefault = online_movable\n"
                   "movable_ratio = 0\n");
        assert_int_equal(loop_reload(f->loop), 0);
        loop_get_stats(f->loop, &st);
        assert_int_equal(st.event_source, EVENT_SOURCE_KERNEL);
        /* The reload's rescan finds the block whose event the switch could have missed. */
        fake_add_block(f->root, 40, 1, "offline", "Movable Normal");
        assert_int_equal(loop_reload(f->loop), 0);
        at(f, 100, stop_when_idle);
}

static void test_reload_switches_event_source(void **state) {
        struct fixture *f = *state;

        fake_add_blocks(f->root, 32, 4, 1, "offline", "Movable Normal");
        write_conf(f, CONF_MOVABLE);
        f->feed_given = false;          /* a real udev monitor */
        new_loop(f, 0);
        assert_int_equal(loop_start(f->loop), 0);
        at(f, 20, reload_to_kernel_events);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(err_has(f, "listening for udev events"));
        assert_true(err_has(f, "listening for kernel events"));
        assert_true(has_state(f, 40, "online_movable"));
}

/*
 * Every refused case of the bad-config corpus (tests/config-corpus), as a
 * reload: each is refused, the loop keeps running, and the policy it had
 * keeps serving the next hot-add.
 */
static unsigned corpus_refused;

static void feed_after_corpus(struct fixture *f) {
        add_and_feed(f, 40);
        at(f, 200, stop_when_idle);
}

static void reload_corpus(struct fixture *f) {
        const char *srcdir = getenv("top_srcdir");
        _cleanup_free_ char *manifest = NULL, *line = NULL;
        _cleanup_fclose_ FILE *m = NULL;
        size_t n = 0;

        assert_non_null(srcdir);
        assert_true(asprintf(&manifest, "%s/tests/config-corpus/MANIFEST", srcdir) > 0);
        m = fopen(manifest, "re");
        assert_non_null(m);
        while (getline(&line, &n, m) > 0) {
                _cleanup_free_ char *cmd = NULL;
                char *name = line, *outcome;
                int r;

                if (line[0] == '#' || !strchr(line, '\t'))
                        continue;
                *strchr(name, '\t') = 0;
                outcome = name + strlen(name) + 1;
                if (!startswith(outcome, "error"))
                        continue;
                /* Root reads a mode 000 file: the case is for a reader without CAP_DAC_OVERRIDE. */
                if (streq(name, "@unreadable") && geteuid() == 0)
                        continue;
                if (name[0] == '@')
                        assert_true(asprintf(&cmd, "rm -rf '%s' '%s.d' && sh '%s/tests/config-corpus/make-special.sh' "
                                             "'%s' '%s'", f->conf, f->conf, srcdir, name, f->conf) > 0);
                else
                        assert_true(asprintf(&cmd, "rm -rf '%s' '%s.d' && cp '%s/tests/config-corpus/cases/%s' '%s' && "
                                             "{ ! test -d '%s/tests/config-corpus/cases/%s.d' || "
                                             "cp -r '%s/tests/config-corpus/cases/%s.d' '%s.d'; }",
                                             f->conf, f->conf, srcdir, name, f->conf, srcdir, name, srcdir, name,
                                             f->conf) > 0);
                r = system(cmd);
                if (WIFEXITED(r) && WEXITSTATUS(r) == 77)
                        continue;       /* make-special.sh cannot make it here (not root) */
                assert_int_equal(r, 0);
                if (loop_reload(f->loop) < 0)
                        corpus_refused++;
                else
                        fail_msg("the corpus case %s was accepted on reload", name);
        }
        /* Timers count from this loop iteration's start, before all that: a step of its own. */
        at(f, 10, feed_after_corpus);
}

static void test_reload_corpus_keeps_policy(void **state) {
        struct fixture *f = *state;

        /* "online", which the built-in defaults never write (they say online_movable or online_kernel). */
        start_with(f, "[daemon]\nsettle_ms = 5\nnode_link_wait_ms = 50\n[zones]\ndefault = online\n", 0, 0);
        at(f, 20, reload_corpus);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(corpus_refused >= 50);
        /* The policy before every refused reload still decides, not the defaults. */
        assert_true(has_state(f, 40, "online"));
        assert_true(err_has(f, "keeping the previous policy"));
}

/* ---- the runner thread cannot start: the loop goes on, a retry finds the work ---- */

static void nproc_restore(struct fixture *f) {
        struct rlimit rl;

        assert_int_equal(getrlimit(RLIMIT_NPROC, &rl), 0);
        rl.rlim_cur = rl.rlim_max;
        assert_int_equal(setrlimit(RLIMIT_NPROC, &rl), 0);
        /* The event source must still listen after the failed start. */
        add_and_feed(f, 41);
}

static void nproc_check(struct fixture *f) {
        if (!has_state(f, 32, "online_movable") || !has_state(f, 41, "online_movable")) {
                at(f, 100, nproc_check);
                return;
        }
        stop_when_idle(f);
}

/* In a child: it gives up root and limits its own threads. Exit 0 when all went as it should. */
static int thread_failure_child(struct fixture *f) {
        struct rlimit rl;
        int r;

        write_conf(f, CONF_MOVABLE);
        fake_mkdir(f->root, "run");
        if (geteuid() == 0) {
                const struct passwd *pw = getpwnam("nobody");
                _cleanup_free_ char *cmd = NULL;

                /* nobody may write the tree, but a config anyone may write is refused: root's, 0644 */
                if (!pw || asprintf(&cmd, "chmod -R a+rwX '%s' && chmod go-w '%s' '%s'", f->root, f->root, f->conf) < 0 ||
                    system(cmd) != 0)
                        return 10;
                if (setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
                        return 11;
        }
        new_loop(f, 0);
        /* No new thread for this user: pthread_create() fails with EAGAIN. */
        if (getrlimit(RLIMIT_NPROC, &rl) < 0)
                return 12;
        rl.rlim_cur = 0;
        if (setrlimit(RLIMIT_NPROC, &rl) < 0)
                return 13;
        if (loop_start(f->loop) < 0)
                return 14;
        at(f, 200, nproc_restore);
        at(f, 300, nproc_check);
        r = loop_run(f->loop);
        if (r < 0)
                return 15;
        if (!err_has(f, "cannot start the runner thread"))
                return 16;
        if (!err_has(f, "rescanning in 1 s"))
                return 17;
        return 0;
}

static void test_thread_start_failure(void **state) {
        struct fixture *f = *state;
        int status = 0;
        pid_t pid;

        fake_add_blocks(f->root, 32, 4, 1, "offline", "Movable Normal");
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(thread_failure_child(f));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- a stuck runner: the watchdog starves, a stop is bounded ---- */

static void notify_setup(struct fixture *f) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char env[64];
        int n;

        f->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        assert_true(f->notify_fd >= 0);
        n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "memonlined-test-%d", (int) getpid());
        assert_int_equal(bind(f->notify_fd, (struct sockaddr *) &sa,
                              (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + (size_t) n)), 0);
        snprintf(env, sizeof(env), "@memonlined-test-%d", (int) getpid());
        setenv("NOTIFY_SOCKET", env, 1);
        setenv("WATCHDOG_USEC", "300000", 1);
        snprintf(env, sizeof(env), "%d", (int) getpid());
        setenv("WATCHDOG_PID", env, 1);
}

/* STATUS= progress datagrams seen so far, and the first of them. */
static unsigned progress_updates;
static char progress_first[256];

/* WATCHDOG=1 messages since the last call; counts the progress updates on the way. */
static unsigned drain_pings(struct fixture *f) {
        char buf[4096];
        unsigned n = 0;
        ssize_t len;

        while ((len = recv(f->notify_fd, buf, sizeof(buf) - 1, 0)) > 0) {
                const char *status;

                buf[len] = 0;
                if (strstr(buf, "WATCHDOG=1"))
                        n++;
                status = strstr(buf, "STATUS=onlining");
                if (status && progress_updates++ == 0)
                        snprintf(progress_first, sizeof(progress_first), "%.*s", (int) strcspn(status, "\n"),
                                 status);
        }
        return n;
}

static unsigned pings_stuck, pings_adds, pings_after;

static void feed_more(struct fixture *f) {
        static uint64_t next = 50;

        add_and_feed(f, next++);
}

static void watchdog_after_release(struct fixture *f) {
        pings_after = drain_pings(f);
        stop_when_idle(f);
}

static void watchdog_adds_counted(struct fixture *f) {
        pings_adds = drain_pings(f);
        kernel_release(&f->kernel);
        (void) drain_pings(f);
        at(f, 500, watchdog_after_release);
}

static void watchdog_feed(struct fixture *f) {
        (void) drain_pings(f);
        /* The kernel still adds blocks: the add holds the lock our write waits for. That is progress. */
        for (unsigned i = 0; i < 8; i++)
                at(f, 50 * i, feed_more);
        at(f, 400, watchdog_adds_counted);
}

static bool was_stuck;
static char *progress_while_stuck;
static mode_t progress_mode_while_stuck;
static char *progress_read_by_nobody;
static struct status_batch batch_while_stuck = { .node = NODE_NONE };
static int batch_read_while_stuck;

static mode_t file_mode(const char *root, const char *rel) {
        _cleanup_free_ char *path = NULL;
        struct stat st;

        assert_true(asprintf(&path, "%s/%s", root, rel) > 0);
        assert_int_equal(stat(path, &st), 0);
        return st.st_mode & 07777;
}

/*
 * root/rel as the user nobody reads it (setpriv, util-linux), with root
 * and its runtime directory open to all as systemd's RuntimeDirectory is:
 * what a non-root `memonlined status` gets. NULL if refused; "" when the
 * test does not run as root and cannot become another user.
 */
static char *read_as_nobody(const char *root, const char *rel) {
        _cleanup_free_ char *cmd = NULL, *out = NULL, *run = NULL;
        struct passwd *pw = getpwnam("nobody");
        FILE *p;
        size_t n = 0;

        if (geteuid() != 0 || !pw)
                return strdup("");
        assert_true(asprintf(&run, "%s/run", root) > 0);
        assert_int_equal(chmod(root, 0755), 0);
        assert_int_equal(chmod(run, 0755), 0);
        assert_true(asprintf(&cmd, "setpriv --reuid=%u --regid=%u --clear-groups cat '%s/%s' 2>/dev/null",
                             (unsigned) pw->pw_uid, (unsigned) pw->pw_gid, root, rel) > 0);
        p = popen(cmd, "re");
        assert_non_null(p);
        if (getdelim(&out, &n, '\0', p) < 0) {
                free(out);
                out = NULL;
        }
        return pclose(p) == 0 ? TAKE_PTR(out) : NULL;
}

static void watchdog_stuck(struct fixture *f) {
        char run[4096];

        was_stuck = kernel_stuck(&f->kernel);
        progress_while_stuck = fake_read(f->root, "run/" PROGRESS_FILE);
        progress_mode_while_stuck = file_mode(f->root, "run/" PROGRESS_FILE);
        progress_read_by_nobody = read_as_nobody(f->root, "run/" PROGRESS_FILE);
        /* what `memonlined status` reads of it */
        snprintf(run, sizeof(run), "%s/run", f->root);
        batch_read_while_stuck = status_batch_read(run, &batch_while_stuck);
        pings_stuck = drain_pings(f);
        watchdog_feed(f);
}

static void watchdog_drain(struct fixture *f) {
        (void) drain_pings(f);
        at(f, 500, watchdog_stuck);
}

static void test_watchdog_starves_when_stuck(void **state) {
        struct fixture *f = *state;
        uint64_t t0 = now_usec(), elapsed;
        mode_t mask = umask(0077);      /* the unit's UMask= */

        f->kernel.stuck_block = 32;
        notify_setup(f);
        progress_updates = 0;
        start_with(f, CONF_MOVABLE, 0, 0);
        /* 300 ms watchdog, pinged every 150 ms while alive; stuck from the first write. */
        at(f, 700, watchdog_drain);
        assert_int_equal(loop_run(f->loop), 0);
        umask(mask);
        (void) drain_pings(f);
        elapsed = now_usec() - t0;
        /*
         * The batch ran for over a second: systemd heard how far it was, at
         * most twice a second (PROGRESS_INTERVAL_USEC). The bound leaves room
         * for a loaded machine; the timer only ever fires less often.
         */
        assert_true(progress_updates >= 1);
        assert_true(progress_updates <= elapsed * 2 / USEC_PER_SEC + 2);
        assert_string_equal(progress_first, "STATUS=onlining node 1: 0/4 blocks, 0.0/0.5 GiB, 0.00 GiB/s");
        assert_true(was_stuck);
        assert_int_equal(pings_stuck, 0);
        assert_true(err_has(f, "no progress for"));
        assert_true(err_has(f, "memory32 was its last block"));
        assert_true(pings_adds > 0);
        assert_true(pings_after > 0);
        /* While the batch ran, the progress file told how far it was; it is gone after. */
        assert_non_null(progress_while_stuck);
        assert_string_equal(progress_while_stuck, "STATUS=onlining node 1: 0/4 blocks, 0.0/0.5 GiB, 0.00 GiB/s");
        /* for every user, whatever the umask: a non-root status shows the running batch too */
        assert_int_equal(progress_mode_while_stuck, 0644);
        assert_non_null(progress_read_by_nobody);
        if (geteuid() == 0)
                assert_true(startswith(progress_read_by_nobody, "STATUS=onlining node 1: 0/4 blocks, "));
        free(progress_read_by_nobody);
        free(progress_while_stuck);
        assert_int_equal(batch_read_while_stuck, 1);
        assert_string_equal(batch_while_stuck.status, "onlining node 1: 0/4 blocks, 0.0/0.5 GiB, 0.00 GiB/s");
        assert_non_null(batch_while_stuck.trigger);
        assert_int_equal(batch_while_stuck.node, 1);
        assert_int_equal(batch_while_stuck.blocks_done, 0);
        assert_int_equal(batch_while_stuck.blocks_total, 4);
        assert_int_equal(batch_while_stuck.block_size, 128 << 20);
        status_batch_done(&batch_while_stuck);
        assert_null(fake_read(f->root, "run/" PROGRESS_FILE));
        for (uint64_t id = 32; id < 36; id++)
                assert_true(has_state(f, id, "online_movable"));
}

static void test_stop_bounded(void **state) {
        struct fixture *f = *state;
        uint64_t t0;

        f->kernel.stuck_block = 32;
        start_with(f, CONF_MOVABLE, 0, 200 * MSEC);
        at(f, 100, stop);
        t0 = now_usec();
        assert_int_equal(loop_run(f->loop), -ETIMEDOUT);
        assert_true(now_usec() - t0 < 2 * USEC_PER_SEC);
        assert_true(err_has(f, "still busy after 0.2 s (memory32 was its last block)"));
        /* Let the stuck write end, so the runner can be joined and freed. */
        kernel_release(&f->kernel);
        for (unsigned i = 0; i < 500 && !loop_reap_runner(f->loop); i++)
                usleep(10 * MSEC);
        assert_true(loop_reap_runner(f->loop));
}

/* ---- held blocks: onlined at a clean stop, and never held for long ---- */

static void held_feed(struct fixture *f) {
        /*
         * Only once the coldplug writes, so it has read the tree already
         * and block 40 is the waiting batch's alone, however late a loaded
         * machine started the runner.
         */
        if (!has_state(f, 32, "online_movable") && !has_state(f, 34, "online_movable")) {
                at(f, 5, held_feed);
                return;
        }
        /*
         * A batch waits (its add still runs: no node link yet, and a long
         * settle time): the runner holds the zone's hole block for it.
         */
        fake_add_block(f->root, 40, -1, "offline", "Movable Normal");
        feed_add(f, 40);
}

static bool held_was_seen;

/* Between jobs: the first is done, the waiting batch not due; 33 is held for it. Stop now. */
static void held_stop(struct fixture *f) {
        struct loop_stats st;

        loop_get_stats(f->loop, &st);
        if (st.runner_busy) {
                at(f, 20, held_stop);
                return;
        }
        held_was_seen = st.held && has_state(f, 33, "offline");
        stop(f);
}

static void test_held_block_onlined_at_stop(void **state) {
        struct fixture *f = *state;

        start_with(f, "[daemon]\nsettle_ms = 5000\nmax_wait_ms = 10000\n[zones]\ndefault = online_movable\n"
                      "movable_ratio = 0\n", 40, 0);
        at(f, 30, held_feed);
        at(f, 150, held_stop);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(held_was_seen);
        /* Written 32, 34, 35, then 33 held for the waiting batch; the stop onlines it. */
        for (uint64_t id = 32; id < 36; id++)
                assert_true(has_state(f, id, "online_movable"));
        /* And the waiting batch itself, in the same last job: it was left offline, with nothing said. */
        assert_true(has_state(f, 40, "online_movable"));
}

/*
 * Memory added during a stop: its event arrives while the interrupted
 * batch finishes its write. It was left offline, and nothing said so.
 */
static void add_during_stop(struct fixture *f) {
        stop(f);
        add_and_feed(f, 40);
        add_and_feed(f, 41);
}

static void test_add_during_stop(void **state) {
        struct fixture *f = *state;

        f->kernel.watched_block = 40;
        fake_write(f->root, "devices/system/memory/auto_online_blocks", "online_movable\n");
        start_with(f, CONF_MOVABLE, 40, 0);
        at(f, 20, add_during_stop);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(has_state(f, 40, "online_movable"));
        assert_true(has_state(f, 41, "online_movable"));
        fflush(f->out_f);
        assert_non_null(strstr(f->out, "MEMONLINE_TRIGGER=stop"));
        /* The kernel's setting was given back before that last look, so it takes whatever comes after. */
        assert_non_null(f->kernel.auto_at_watched);
        assert_string_equal(f->kernel.auto_at_watched, "online_movable");
        assert_true(err_has(f, "restored auto_online_blocks to \"online_movable\""));
}

/*
 * An add that read auto_online_blocks as "offline" just before the stop
 * gave it back: its block exists, its event has not come. The stop's
 * first job reads every block, so it is not left offline.
 */
static void add_unannounced_then_stop(struct fixture *f) {
        /* After the coldplug: its own rescan would find the block. */
        if (!coldplug_over(f)) {
                at(f, 20, add_unannounced_then_stop);
                return;
        }
        fake_add_block(f->root, 40, 1, "offline", "Movable Normal");
        stop(f);
}

static void test_stop_reads_every_block_after_give_back(void **state) {
        struct fixture *f = *state;

        fake_write(f->root, "devices/system/memory/auto_online_blocks", "online_movable\n");
        start_with(f, CONF_MOVABLE, 0, 0);
        at(f, 20, add_unannounced_then_stop);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(has_state(f, 40, "online_movable"));
        fflush(f->out_f);
        assert_non_null(strstr(f->out, "MEMONLINE_TRIGGER=stop"));
        assert_true(err_has(f, "restored auto_online_blocks to \"online_movable\""));
}

/* Nothing given back, nothing announced: a stop does no job at all. */
static void test_plain_stop_does_no_job(void **state) {
        struct fixture *f = *state;

        start_with(f, CONF_MOVABLE, 0, 0);
        at(f, 20, add_unannounced_then_stop);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(has_state(f, 40, "offline"));
        fflush(f->out_f);
        assert_null(strstr(f->out, "MEMONLINE_TRIGGER=stop"));
}

/* Adds that keep coming through the whole stop: past its last job, the rest is named, not left silently. */
static uint64_t endless_next;

static void endless_feed(struct fixture *f) {
        add_and_feed(f, endless_next++);
        if (endless_next < 300)
                at(f, 10, endless_feed);
}

static void stop_into_stream(struct fixture *f) {
        stop(f);
        endless_next = 100;
        endless_feed(f);
}

static void test_stop_names_what_it_left(void **state) {
        struct fixture *f = *state;
        unsigned long named = 0;
        size_t offline = 0;
        const char *w;

        start_with(f, CONF_MOVABLE, 20, 0);
        at(f, 10, stop_into_stream);
        assert_int_equal(loop_run(f->loop), 0);
        for (uint64_t id = 100; id < endless_next; id++)
                offline += has_state(f, id, "offline");
        /* The last jobs took most of them; the stream outlasted them. */
        assert_true(offline > 0 && offline < endless_next - 100);
        fflush(f->err_f);
        w = strstr(f->err, "stopping: ");
        while (w && !strstr(w, "added during the stop stay offline"))
                w = strstr(w + 1, "stopping: ");
        assert_non_null(w);
        assert_int_equal(sscanf(w, "stopping: %lu block(s)", &named), 1);
        assert_int_equal(named, offline);
}

/* The stop's own jobs are bounded like the batch a SIGTERM interrupts: ended between writes, no error. */
static void feed_thirty(struct fixture *f) {
        for (uint64_t id = 40; id < 70; id++)
                add_and_feed(f, id);
}

static void test_stop_jobs_bounded(void **state) {
        struct fixture *f = *state;
        size_t online = 0;
        uint64_t t0;

        /* 30 adds wait while the coldplug writes (50 ms a block); the stop comes first, its job would take 30 x 50 ms. */
        start_with(f, "[daemon]\nsettle_ms = 5000\nmax_wait_ms = 10000\n[zones]\ndefault = online_movable\n"
                      "movable_ratio = 0\n", 50, 300 * MSEC);
        at(f, 20, feed_thirty);
        at(f, 100, stop);
        t0 = now_usec();
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(now_usec() - t0 < 1200 * MSEC);
        for (uint64_t id = 40; id < 70; id++)
                online += has_state(f, id, "online_movable");
        assert_true(online > 0 && online < 30);
        assert_true(err_has(f, "stopping: the last jobs are still writing after 0.3 s"));
}

static void stream_feed(struct fixture *f) {
        static uint64_t next = 36;

        add_and_feed(f, next++);
}

static bool stream_hole_written;

static void stream_check(struct fixture *f) {
        /* The stream still runs, yet the hole block was written: its hold is bounded. */
        stream_hole_written = has_state(f, 33, "online_movable");
        at(f, 500, stop_when_idle);
}

static void test_hold_bounded(void **state) {
        struct fixture *f = *state;

        /* Batches close 20 ms after their first event; holds end after 10 x 20 ms. */
        start_with(f, "[daemon]\nsettle_ms = 20\nmax_wait_ms = 20\n[zones]\ndefault = online_movable\n"
                      "movable_ratio = 0\n", 5, 0);
        for (unsigned i = 0; i < 60; i++)
                at(f, 15 * i, stream_feed);
        at(f, 700, stream_check);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(stream_hole_written);
}

/* ---- when a batch starts: early once its blocks are linked; no timer turns while the runner works ---- */

static uint64_t trickle_next;
static bool trickle_linked;
static uint64_t trickle_started_before;         /* batches started before the trickle */
static uint64_t trickle_started_inside;         /* ... and once it ran 200 ms */

static uint64_t batches_started(struct fixture *f) {
        struct loop_stats st;

        loop_get_stats(f->loop, &st);
        return st.batches_started;
}

/* An add event every 20 ms for 300 ms: a udev trickle. Linked blocks are an add that is over. */
static void trickle_feed(struct fixture *f) {
        uint64_t id = trickle_next++;

        fake_add_block(f->root, id, trickle_linked ? 1 : -1, "offline", "Movable Normal");
        feed_add(f, id);
        /*
         * 200 ms after the first event, far inside the 1 s settle window: a
         * batch started by then started early. Counted, not timed: the
         * runner's speed does not matter, only that the loop did not wait.
         */
        if (id == 50)
                trickle_started_inside = batches_started(f);
        if (id < 55)
                at(f, 20, trickle_feed);
        else if (trickle_linked)
                at(f, 100, stop_when_idle);     /* the late events' batch too */
        else
                at(f, 10, stop);
}

static void trickle_start(struct fixture *f) {
        /* After the coldplug, so the first event's batch is the one watched. */
        if (!coldplug_over(f)) {
                at(f, 5, trickle_start);
                return;
        }
        trickle_started_before = batches_started(f);
        trickle_next = 40;
        trickle_feed(f);
}

static void run_trickle(struct fixture *f, bool linked) {
        /* The events come 20 ms apart, far inside a settle window of 1 s: it would stay open for all of them. */
        trickle_linked = linked;
        trickle_started_before = trickle_started_inside = 0;
        f->rep.max_priority = LOG_DEBUG;
        start_with(f, "[daemon]\nsettle_ms = 1000\nmax_wait_ms = 10000\n[zones]\ndefault = online_movable\n"
                      "movable_ratio = 0\n", 0, 0);
        at(f, 5, trickle_start);
        assert_int_equal(loop_run(f->loop), 0);
}

static void test_linked_batch_starts_early(void **state) {
        struct fixture *f = *state;

        run_trickle(f, true);
        /* Started while the events still came, not 1 s after the last of them. */
        assert_true(trickle_started_inside > trickle_started_before);
        assert_true(err_has(f, "its add is over, the batch starts"));
        /* Neither the early batch nor the ones after it left a block offline. */
        for (uint64_t id = 40; id < 56; id++)
                assert_true(has_state(f, id, "online_movable"));
}

static void test_unlinked_batch_waits(void **state) {
        struct fixture *f = *state;

        run_trickle(f, false);
        /* No link yet: the add may still run, so the window stays open while events come (the stop's job takes them). */
        assert_int_equal(trickle_started_inside, trickle_started_before);
        assert_false(err_has(f, "its add is over"));
        for (uint64_t id = 40; id < 56; id++)
                assert_true(has_state(f, id, "online_movable"));
}

/* ---- a node or CPU event warms the runner between batches ---- */

static struct loop_stats warm_seen;

static void warm_node3_batch(struct fixture *f) {
        loop_get_stats(f->loop, &warm_seen);
        /* Its memory's add: the batch finds node 3 known already. */
        fake_add_block(f->root, 96, 3, "offline", "Movable Normal");
        feed_add(f, 96);
        at(f, 100, stop_when_idle);
}

static void warm_node3(struct fixture *f) {
        struct loop_stats st;

        loop_get_stats(f->loop, &st);
        if (st.runner_busy) {
                at(f, 5, warm_node3);
                return;
        }
        /* CPU-less node 3 comes online (a CXL window's node, as kmem's add begins). */
        fake_add_node(f->root, 3, "", "40 30 40 10");
        fake_write(f->root, "devices/system/node/node0/distance", "10 20 30 40\n");
        fake_write(f->root, "devices/system/node/node1/distance", "20 10 17 30\n");
        fake_write(f->root, "devices/system/node/node2/distance", "30 17 10 40\n");
        fake_write(f->root, "devices/system/node/online", "0-3\n");
        feed_kind(f, MONITOR_MACHINE);
        at(f, 100, warm_node3_batch);
}

static void test_warm_on_machine_event(void **state) {
        struct fixture *f = *state;
        struct loop_stats st;

        f->rep.max_priority = LOG_DEBUG;
        start_with(f, CONF_MOVABLE, 0, 0);
        at(f, 20, warm_node3);
        assert_int_equal(loop_run(f->loop), 0);
        /* The event brought a warm job, which is no batch. */
        assert_int_equal(warm_seen.warm_jobs, 1);
        assert_int_equal(warm_seen.batches, 1);
        assert_true(err_has(f, "warmed the machine"));
        loop_get_stats(f->loop, &st);
        assert_int_equal(st.batches, 2);
        /* Node 3's memory, written from node 1 (nearest with CPUs). */
        assert_true(has_state(f, 96, "online_movable"));
        fflush(f->out_f);
        assert_non_null(f->out);
        assert_non_null(strstr(f->out, "MEMONLINE_NODE=3 MEMONLINE_WRITER_NODE=1 "));
}

static bool arrival_online;

static void arrival_check(struct fixture *f) {
        arrival_online = has_state(f, 40, "online_movable");
        stop_when_idle(f);
}

static void arrival_feed(struct fixture *f) {
        if (!has_state(f, 35, "online_movable")) {
                at(f, 5, arrival_feed);
                return;
        }
        /* A single device's add is over when its first event comes: its block is linked. */
        add_and_feed(f, 40);
        at(f, 1000, arrival_check);
}

static void test_linked_batch_starts_on_arrival(void **state) {
        struct fixture *f = *state;
        const char *said;
        unsigned long ms = 0;

        f->rep.max_priority = LOG_DEBUG;
        start_with(f, "[daemon]\nsettle_ms = 2000\nmax_wait_ms = 10000\n[zones]\ndefault = online_movable\n"
                      "movable_ratio = 0\n", 0, 0);
        at(f, 5, arrival_feed);
        assert_int_equal(loop_run(f->loop), 0);
        /* Online within 1 s of its event (sanitizers and valgrind included), not after the 2 s settle window. */
        assert_true(arrival_online);
        fflush(f->err_f);
        said = strstr(f->err, "its add is over, the batch starts ");
        assert_non_null(said);
        assert_int_equal(sscanf(said, "its add is over, the batch starts %lu ms", &ms), 1);
        assert_true(ms < 500);
}

/* A DIMM of blocks 40-55, all made, linked to node 1 up to 47 when its first event comes. */
static bool linking_early_online, linking_late_online;

static void linking_check(struct fixture *f) {
        linking_late_online = true;
        for (uint64_t id = 40; id < 56; id++)
                linking_late_online &= has_state(f, id, "online_movable");
        stop_when_idle(f);
}

static void linking_next_event(struct fixture *f) {
        /* It keeps the settle window open until 1.9 s: only the look at 1 s starts the batch before. */
        feed_add(f, 41);
        at(f, 2000, linking_check);
}

static void linking_done(struct fixture *f) {
        /* Not started while the kernel was still linking, though block 40 was linked. */
        linking_early_online = has_state(f, 40, "online_movable");
        for (uint64_t id = 48; id < 56; id++)
                fake_link_block(f->root, id, 1);
        at(f, 500, linking_next_event);
}

static void linking_feed(struct fixture *f) {
        if (!has_state(f, 35, "online_movable")) {
                at(f, 5, linking_feed);
                return;
        }
        for (uint64_t id = 40; id < 56; id++)
                fake_add_block(f->root, id, id < 48 ? 1 : -1, "offline", "Movable Normal");
        feed_add(f, 40);
        at(f, 400, linking_done);
}

static void test_batch_waits_for_linking(void **state) {
        struct fixture *f = *state;
        const char *said;
        unsigned long ms = 0;

        f->rep.max_priority = LOG_DEBUG;
        start_with(f, "[daemon]\nsettle_ms = 1000\nmax_wait_ms = 10000\n[zones]\ndefault = online_movable\n"
                      "movable_ratio = 0\n", 0, 0);
        at(f, 5, linking_feed);
        assert_int_equal(loop_run(f->loop), 0);
        assert_false(linking_early_online);
        assert_true(linking_late_online);
        /*
         * Started by the look settle_ms after the first event, once the last
         * block was linked (the settle window's own close logs nothing of it),
         * not on the first event's arrival.
         */
        fflush(f->err_f);
        said = strstr(f->err, "its add is over, the batch starts ");
        assert_non_null(said);
        assert_int_equal(sscanf(said, "its add is over, the batch starts %lu ms", &ms), 1);
        assert_true(ms >= 900);
}

/*
 * The settle window closes on a DIMM (blocks 40-55) whose add still runs:
 * made, none linked, and only four events through udev so far. The batch
 * waits for the add's end, then takes the whole DIMM, the blocks whose
 * events are still on the way included; not the blocks linked first.
 */
static bool hold_early_online, hold_batch_at_link;

static void hold_trickle(struct fixture *f) {
        for (uint64_t id = 44; id < 56; id++)
                feed_add(f, id);
        at(f, 600, stop_when_idle);
}

static void hold_link_rest(struct fixture *f) {
        for (uint64_t id = 48; id < 56; id++)
                fake_link_block(f->root, id, 1);
        at(f, 300, hold_trickle);
}

static void hold_look_half(struct fixture *f) {
        /* ... nor while the kernel had linked only the lower half. */
        for (uint64_t id = 40; id < 44; id++)
                hold_early_online |= has_state(f, id, "online_movable");
        hold_link_rest(f);
}

static void hold_link_half(struct fixture *f) {
        /* Nothing started while no block was linked... */
        hold_batch_at_link = batches_started(f) > trickle_started_before;
        for (uint64_t id = 40; id < 48; id++)
                fake_link_block(f->root, id, 1);
        at(f, 150, hold_look_half);
}

static void hold_feed(struct fixture *f) {
        if (!coldplug_over(f)) {
                at(f, 5, hold_feed);
                return;
        }
        trickle_started_before = batches_started(f);
        hold_batch_at_link = hold_early_online = false;
        for (uint64_t id = 40; id < 56; id++)
                fake_add_block(f->root, id, -1, "offline", "Movable Normal");
        for (uint64_t id = 40; id < 44; id++)
                feed_add(f, id);
        at(f, 300, hold_link_half);
}

static void test_batch_held_while_add_runs(void **state) {
        struct fixture *f = *state;

        f->rep.max_priority = LOG_DEBUG;
        /* settle_ms and max_wait_ms both pass long before the add is over. */
        start_with(f, "[daemon]\nsettle_ms = 20\nmax_wait_ms = 100\n[zones]\ndefault = online_movable\n"
                      "movable_ratio = 0\n", 0, 0);
        at(f, 5, hold_feed);
        assert_int_equal(loop_run(f->loop), 0);
        assert_false(hold_batch_at_link);
        assert_false(hold_early_online);
        for (uint64_t id = 40; id < 56; id++)
                assert_true(has_state(f, id, "online_movable"));
        /* One batch of all 16, not the linked half first. */
        fflush(f->out_f);
        assert_non_null(strstr(f->out, "MEMONLINE_BLOCKS=16 "));
        assert_true(err_has(f, "memory43's add still runs"));
}

static void busy_feed(struct fixture *f) {
        /* Due 25 ms from now, while the coldplug still writes (4 x 100 ms). */
        add_and_feed(f, 40);
        at(f, 50, stop_when_idle);
}

static void test_no_timer_turns_while_busy(void **state) {
        struct fixture *f = *state;
        struct loop_stats st;

        start_with(f, "[daemon]\nsettle_ms = 5\nmax_wait_ms = 20\n[zones]\ndefault = online_movable\n"
                      "movable_ratio = 0\n", 100, 0);
        at(f, 30, busy_feed);
        assert_int_equal(loop_run(f->loop), 0);
        loop_get_stats(f->loop, &st);
        /* The batch started when the coldplug ended. */
        assert_true(has_state(f, 40, "online_movable"));
        assert_int_equal(st.batches, 2);
        /* The timer fired at most at the deadlines, not on every turn of the loop for 300 ms. */
        assert_in_range(st.timer_wakeups, 0, 3);
}

/* ---- the metrics textfile: at start, after each batch, on reload; a failed write said once ---- */

/* CONF_MOVABLE with [metrics] textfile_dir = <root>/<dir>. */
static char *metrics_conf(struct fixture *f, const char *dir) {
        char *conf = NULL;

        assert_true(asprintf(&conf, CONF_MOVABLE "[metrics]\ntextfile_dir = %s/%s\n", f->root, dir) > 0);
        return conf;
}

/* The whole textfile in dir, NULL if there is none. */
static char *prom(struct fixture *f, const char *dir) {
        _cleanup_free_ char *path = NULL;
        char *text = NULL;
        size_t n = 0;
        FILE *in;

        assert_true(asprintf(&path, "%s/%s/" METRICS_FILE, f->root, dir) > 0);
        in = fopen(path, "re");
        if (!in)
                return NULL;
        if (getdelim(&text, &n, '\0', in) < 0) {
                free(text);
                text = strdup("");
        }
        fclose(in);
        return text;
}

static bool has_line(const char *text, const char *line) {
        size_t n = strlen(line);

        for (const char *p = text; p && (p = strstr(p, line)); p++)
                if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
                        return true;
        return false;
}

static unsigned err_count(struct fixture *f, const char *text) {
        unsigned n = 0;

        fflush(f->err_f);
        for (const char *p = f->err; p && (p = strstr(p, text)); p++)
                n++;
        return n;
}

static void metrics_feed(struct fixture *f) {
        add_and_feed(f, 40);
        at(f, 100, stop_when_idle);
}

static void test_metrics_textfile(void **state) {
        struct fixture *f = *state;
        _cleanup_free_ char *conf = metrics_conf(f, "prom"), *at_start = NULL, *text = NULL;

        fake_mkdir(f->root, "prom");
        start_with(f, conf, 20, 0);
        /* At start: the counters of this run, before its coldplug has read a block */
        at_start = prom(f, "prom");
        assert_non_null(at_start);
        assert_true(has_line(at_start, "memonlined_blocks_onlined_total 0"));
        assert_null(strstr(at_start, "memonlined_blocks_offline"));
        assert_non_null(strstr(at_start, "\nmemonlined_start_time_seconds "));
        at(f, 200, metrics_feed);
        assert_int_equal(loop_run(f->loop), 0);
        text = prom(f, "prom");
        assert_non_null(text);
        /* the coldplug's 4 and the hot-added one, on node 1's 8 boot blocks */
        assert_true(has_line(text, "memonlined_blocks_offline{node=\"1\"} 0"));
        assert_true(has_line(text, "memonlined_blocks_online{node=\"1\"} 13"));
        assert_true(has_line(text, "memonlined_memory_online_bytes{node=\"1\",zone=\"movable\"} 671088640"));
        assert_true(has_line(text, "memonlined_blocks_onlined_total 5"));
        assert_true(has_line(text, "memonlined_onlined_bytes_total 671088640"));
        assert_true(has_line(text, "memonlined_batches_total 2"));
        assert_true(has_line(text, "memonlined_blocks_failed_total 0"));
        assert_non_null(strstr(text, "\nmemonlined_last_batch_first_block_seconds 0."));
        assert_non_null(strstr(text, "\nmemonlined_last_batch_last_block_seconds 0."));
        assert_false(err_has(f, METRICS_FILE));
}

static void metrics_dir_appears(struct fixture *f) {
        fake_mkdir(f->root, "late");
        add_and_feed(f, 41);
        at(f, 100, stop_when_idle);
}

static void metrics_feed_more(struct fixture *f) {
        add_and_feed(f, 40);
        at(f, 100, metrics_dir_appears);
}

/* No directory: said once for the start and two batches, onlining goes on; once there, written and said so. */
static void test_metrics_write_failure(void **state) {
        struct fixture *f = *state;
        _cleanup_free_ char *conf = metrics_conf(f, "late"), *text = NULL;

        start_with(f, conf, 0, 0);
        at(f, 100, metrics_feed_more);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(has_state(f, 40, "online_movable"));
        assert_true(has_state(f, 41, "online_movable"));
        assert_int_equal(err_count(f, "cannot write "), 1);
        assert_true(err_has(f, "/late/" METRICS_FILE ": No such file or directory"));
        assert_int_equal(err_count(f, "/late/" METRICS_FILE " written again"), 1);
        text = prom(f, "late");
        assert_non_null(text);
        assert_true(has_line(text, "memonlined_blocks_onlined_total 6"));
}

static void metrics_reload(struct fixture *f) {
        _cleanup_free_ char *conf = metrics_conf(f, "prom"), *text = NULL;

        write_conf(f, conf);
        assert_int_equal(loop_reload(f->loop), 0);
        /* written by the reload itself, with the blocks as the coldplug left them */
        text = prom(f, "prom");
        assert_non_null(text);
        assert_true(has_line(text, "memonlined_blocks_online{node=\"1\"} 12"));
        assert_true(has_line(text, "memonlined_blocks_onlined_total 4"));
        at(f, 100, stop_when_idle);
}

/* A reload that turns the file on writes it at once, with what the last job saw. */
static void test_metrics_on_reload(void **state) {
        struct fixture *f = *state;
        _cleanup_free_ char *text = NULL;

        fake_mkdir(f->root, "prom");
        start_with(f, CONF_MOVABLE, 0, 0);
        assert_null(prom(f, "prom"));
        at(f, 100, metrics_reload);
        assert_int_equal(loop_run(f->loop), 0);
        /* and after the reload's rescan */
        text = prom(f, "prom");
        assert_non_null(text);
        assert_true(has_line(text, "memonlined_batches_total 1"));
}

/* ---- events during a job: taken every EVENT_DRAIN_USEC, not one wakeup each, all before the next plan ---- */

static unsigned storm_fed, storm_waited;
static uint64_t storm_wakeups_busy, storm_drains_busy, storm_wakeups_idle;
static bool storm_late_seen;

static void storm_late(struct fixture *f) {
        struct loop_stats st;

        /* Idle again: an event wakes the loop at once. */
        loop_get_stats(f->loop, &st);
        storm_late_seen = st.monitor_wakeups > storm_wakeups_idle;
        stop_when_idle(f);
}

static void storm_after(struct fixture *f) {
        struct loop_stats st;

        loop_get_stats(f->loop, &st);
        if (st.runner_busy || !has_state(f, 59, "online_movable")) {
                at(f, 10, storm_after);
                return;
        }
        storm_wakeups_idle = st.monitor_wakeups;
        add_and_feed(f, 60);
        at(f, 30, storm_late);
}

static void storm_feed(struct fixture *f) {
        struct loop_stats st;

        /* From the coldplug's stuck write on: the whole storm comes while its job runs. */
        if (storm_fed == 0 && !kernel_stuck(&f->kernel)) {
                at(f, 2, storm_feed);
                return;
        }
        loop_get_stats(f->loop, &st);
        if (storm_fed == 0)
                storm_wakeups_busy = st.monitor_wakeups;
        if (storm_fed < 20) {
                add_and_feed(f, 40 + storm_fed++);
                at(f, 5, storm_feed);
                return;
        }
        /* A look at the socket since the last event (200 ms at most), then the job may end. */
        if (st.drains < 1 && storm_waited++ < 20) {
                at(f, 10, storm_feed);
                return;
        }
        storm_wakeups_busy = st.monitor_wakeups - storm_wakeups_busy;
        storm_drains_busy = st.drains;
        kernel_release(&f->kernel);
        at(f, 10, storm_after);
}

static void test_events_during_job(void **state) {
        struct fixture *f = *state;
        struct loop_stats st;

        storm_fed = storm_waited = 0;
        storm_drains_busy = 0;
        storm_late_seen = false;
        f->kernel.stuck_block = 32;
        start_with(f, CONF_MOVABLE, 0, 0);
        at(f, 1, storm_feed);
        assert_int_equal(loop_run(f->loop), 0);
        loop_get_stats(f->loop, &st);
        /* 20 events over 100 ms while the job ran: one wakeup, then looks every 50 ms. */
        assert_int_equal(storm_fed, 20);
        assert_in_range(storm_wakeups_busy, 1, 2);
        assert_true(storm_drains_busy >= 1);
        /* All 20 were in the next plan: one batch after the coldplug, then 60's. */
        for (uint64_t id = 32; id <= 60; id++)
                if (id < 36 || id >= 40)
                        assert_true(has_state(f, id, "online_movable"));
        assert_int_equal(st.batches, 3);
        assert_true(storm_late_seen);
}

/* ---- the runner and writer threads are started once, not per batch ---- */

static void warm_feed(struct fixture *f) {
        static uint64_t next = 40;
        struct loop_stats st;

        loop_get_stats(f->loop, &st);
        if (st.runner_busy) {
                at(f, 5, warm_feed);
                return;
        }
        if (next < 43) {
                add_and_feed(f, next++);
                at(f, 50, warm_feed);
        } else
                stop_when_idle(f);
}

/* Whether one of this process's threads is named `name` now. */
static bool thread_named(const char *name) {
        _cleanup_(closedirp) DIR *d = opendir("/proc/self/task");
        struct dirent *de;

        assert_non_null(d);
        while ((de = readdir(d))) {
                char path[300], comm[32] = "";
                FILE *fp;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
                fp = fopen(path, "re");
                if (!fp)
                        continue;       /* a thread that exited meanwhile */
                if (fgets(comm, sizeof(comm), fp))
                        comm[strcspn(comm, "\n")] = 0;
                fclose(fp);
                if (streq(comm, name))
                        return true;
        }
        return false;
}

static bool saw_runner_named;

static void look_for_runner(struct fixture *f) {
        struct loop_stats st;

        loop_get_stats(f->loop, &st);
        if (st.runner_starts > 0 && thread_named("mo-runner")) {
                saw_runner_named = true;
                return;
        }
        at(f, 5, look_for_runner);
}

static void test_threads_kept(void **state) {
        struct fixture *f = *state;
        struct loop_stats st;
        char comm[32] = "";
        FILE *fp;

        start_with(f, CONF_MOVABLE, 0, 0);
        saw_runner_named = false;
        at(f, 20, warm_feed);
        at(f, 1, look_for_runner);
        assert_int_equal(loop_run(f->loop), 0);
        assert_true(saw_runner_named);
        /* The loop's own thread keeps the process's name: only the runner's is set. */
        fp = fopen("/proc/thread-self/comm", "re");
        assert_non_null(fp);
        assert_non_null(fgets(comm, sizeof(comm), fp));
        fclose(fp);
        assert_null(strstr(comm, "mo-runner"));
        loop_get_stats(f->loop, &st);
        /* The coldplug and three batches, one block each after it. */
        assert_int_equal(st.batches, 4);
        assert_int_equal(st.runner_starts, 1);
        for (uint64_t id = 40; id < 43; id++) {
                assert_true(has_state(f, id, "online_movable"));
                /* Every batch wrote from the thread the first one started (node1's writer). */
                assert_int_equal(f->kernel.writer[id], f->kernel.writer[32]);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_threads_kept, setup, teardown),
                cmocka_unit_test_setup_teardown(test_events_during_job, setup, teardown),
                cmocka_unit_test_setup_teardown(test_warm_on_machine_event, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reload_during_job, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reload_broken_keeps_policy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reload_switches_event_source, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reload_corpus_keeps_policy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_thread_start_failure, setup, teardown),
                cmocka_unit_test_setup_teardown(test_watchdog_starves_when_stuck, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stop_bounded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_held_block_onlined_at_stop, setup, teardown),
                cmocka_unit_test_setup_teardown(test_hold_bounded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_add_during_stop, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stop_reads_every_block_after_give_back, setup, teardown),
                cmocka_unit_test_setup_teardown(test_plain_stop_does_no_job, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stop_names_what_it_left, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stop_jobs_bounded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_linked_batch_starts_early, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unlinked_batch_waits, setup, teardown),
                cmocka_unit_test_setup_teardown(test_linked_batch_starts_on_arrival, setup, teardown),
                cmocka_unit_test_setup_teardown(test_batch_waits_for_linking, setup, teardown),
                cmocka_unit_test_setup_teardown(test_batch_held_while_add_runs, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_timer_turns_while_busy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_metrics_textfile, setup, teardown),
                cmocka_unit_test_setup_teardown(test_metrics_write_failure, setup, teardown),
                cmocka_unit_test_setup_teardown(test_metrics_on_reload, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
