/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memonlined: onlines hot-added memory blocks, node-aware, with timing
 * records in the journal. main.c holds the options, config load and
 * reload, and the event loop; the stages live in their own files.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include "batch.h"
#include "blocks.h"
#include "coexist.h"
#include "cpuset.h"
#include "journal-report.h"
#include "monitor.h"
#include "online.h"
#include "plan.h"
#include "pmem.h"
#include "policy.h"
#include "report.h"
#include "runner.h"
#include "status.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

#define MAX_RETRY_ROUNDS 6
/* Online events kept for the next job; past this it reads the topology again instead. */
#define TOUCHED_MAX (1U << 16)

#define DEFAULT_CONFIG SYSCONFDIR "/memonlined.conf"

struct context {
        /* options */
        const char *config_path;
        const char *sysfs_root;
        bool once, dry_run, check_config;
        enum log_target log_target;
        bool config_explicit;

        struct reporter reporter;
        struct runner runner_ctx;       /* what the runner thread needs */
        struct policy *policy;
        struct policy *retired_policy;  /* replaced while a job used it */

        sd_event *event;
        sd_event_source *monitor_source, *timer_source, *done_source, *retry_source;
        unsigned retry_rounds;          /* consecutive passes that left work undone */
        struct monitor *monitor;
        struct batcher batcher;
        /* Online events since the last job, and whether blocks went offline or away. */
        struct batcher touched;
        bool topology_reload;

        /* dax devices seen since the last job */
        char **dax_pending;
        uint64_t *dax_pending_usec;
        size_t n_dax_pending, dax_allocated, dax_usec_allocated;

        bool rescan_pending;
        const char *rescan_trigger;

        pthread_t runner;
        bool runner_busy;
        struct job *job;
        int done_fd;                    /* eventfd: the runner finished */
        atomic_bool stop;
        atomic_bool more_work;          /* another job is queued: the runner may hold a block for it */
        bool exiting;

        uint64_t total_blocks, total_bytes, total_failed, batches;
        int exit_status;

        /* Kernel auto-online taken over: the value to give back at stop (NULL: none). */
        bool auto_online_taken;
        char *auto_online_previous;
        char *auto_online_state;        /* $RUNTIME_DIRECTORY/auto_online_blocks, or NULL */
};

static void context_done(struct context *c) {
        for (size_t i = 0; i < c->n_dax_pending; i++)
                free(c->dax_pending[i]);
        free(c->dax_pending);
        free(c->dax_pending_usec);
        batcher_done(&c->batcher);
        batcher_done(&c->touched);
        runner_done(&c->runner_ctx);
        sd_event_source_unref(c->monitor_source);
        sd_event_source_unref(c->timer_source);
        sd_event_source_unref(c->done_source);
        sd_event_source_unref(c->retry_source);
        sd_event_unref(c->event);
        monitor_free(c->monitor);
        if (c->done_fd >= 0)
                close(c->done_fd);
        policy_free(c->policy);
        policy_free(c->retired_policy);
        free(c->auto_online_previous);
        free(c->auto_online_state);
}

/* MEMONLINED_LOG_LEVEL=debug|info|notice|warning|err: how much goes to the log. */
static int log_level_from_env(struct reporter *r) {
        static const char *const levels[] = {
                [LOG_ERR] = "err", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
                [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
        };
        const char *e = getenv("MEMONLINED_LOG_LEVEL");

        if (!e || !*e)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(levels); i++)
                if (levels[i] && strcasecmp(e, levels[i]) == 0) {
                        r->max_priority = (int) i;
                        return 0;
                }
        return -EINVAL;
}

/* ---- config ------------------------------------------------------------ */

static void log_policy_error(struct context *c, const struct policy_error *e, int r) {
        if (e->line > 0)
                report_log(&c->reporter, LOG_ERR, MESSAGE_ID_CONFIG, "%s:%u: %s", e->file, e->line, e->reason);
        else if (e->reason[0])
                report_log(&c->reporter, LOG_ERR, MESSAGE_ID_CONFIG, "%s: %s", e->file, e->reason);
        else
                report_log(&c->reporter, LOG_ERR, MESSAGE_ID_CONFIG, "%s: %s", c->config_path, strerror(-r));
}

/* Load the configured file; a missing default file means built-in defaults. */
static int load_policy(struct context *c, struct policy **ret) {
        struct policy_error err = {};
        struct policy *p = NULL;
        int r;

        r = policy_load(c->config_path, &p, &err);
        if (r == -ENOENT && !c->config_explicit) {
                r = policy_new_default(&p);
                if (r < 0)
                        return r;
                report_log(&c->reporter, LOG_INFO, NULL, "%s not found, using built-in defaults", c->config_path);
        } else if (r < 0) {
                log_policy_error(c, &err, r);
                return r;
        }
        *ret = p;
        return 0;
}

static void *runner_main(void *userdata) {
        struct context *c = userdata;
        uint64_t one = 1;

        c->job->error = runner_run_job(&c->runner_ctx, c->job);
        /* Wake the event loop; it joins us. */
        if (write(c->done_fd, &one, sizeof(one)) < 0)
                c->job->error = c->job->error ?: -errno;
        return NULL;
}

/* ---- kernel auto-online ------------------------------------------------ */

/* Where the value to restore survives a restart: the unit's RuntimeDirectory. */
static int auto_online_state_path(char **ret) {
        const char *dir = getenv("RUNTIME_DIRECTORY");
        char *path = NULL;

        /* Not under systemd (tests, by hand): the value is kept in memory only. */
        if (dir && dir[0] == '/' &&
            asprintf(&path, "%.*s/auto_online_blocks", (int) strcspn(dir, ":"), dir) < 0)
                return -ENOMEM;
        *ret = path;
        return 0;
}

static void give_back_auto_online(struct context *c) {
        _cleanup_free_ char *found = NULL;
        int r;

        r = auto_online_restore(c->sysfs_root, c->auto_online_state, c->auto_online_previous, &found);
        if (r < 0)
                report_log(&c->reporter, LOG_WARNING, MESSAGE_ID_AUTO_ONLINE,
                           "cannot restore auto_online_blocks to \"%s\": %s; it stays offline",
                           strempty(c->auto_online_previous), strerror(-r));
        else if (r > 0)
                report_log(&c->reporter, LOG_INFO, MESSAGE_ID_AUTO_ONLINE,
                           "restored auto_online_blocks to \"%s\": the kernel onlines hot-added memory itself again",
                           strempty(c->auto_online_previous));
        else if (found)
                report_log(&c->reporter, LOG_NOTICE, MESSAGE_ID_AUTO_ONLINE,
                           "auto_online_blocks was set to \"%s\" while memonlined ran; leaving it", found);
        free(c->auto_online_previous);
        c->auto_online_previous = NULL;
        c->auto_online_taken = false;
}

/* At start and reload: own onlining while we run, or give it back, as the policy says. */
static void apply_auto_online_policy(struct context *c) {
        _cleanup_free_ char *previous = NULL;
        int r;

        if (!c->policy->take_over_auto_online) {
                give_back_auto_online(c);
                return;
        }
        if (c->auto_online_taken)
                return;
        r = auto_online_take_over(c->sysfs_root, c->auto_online_state, &previous);
        if (r < 0) {
                report_log(&c->reporter, LOG_WARNING, MESSAGE_ID_AUTO_ONLINE,
                           "cannot take over from kernel auto-online: %s", strerror(-r));
                return;
        }
        if (r > 0)
                report_log(&c->reporter, LOG_NOTICE, MESSAGE_ID_AUTO_ONLINE,
                           "kernel auto-online was \"%s\": set auto_online_blocks to offline, so memonlined "
                           "onlines hot-added memory per policy; \"%s\" is restored when it stops",
                           previous, previous);
        else if (previous)
                report_log(&c->reporter, LOG_INFO, MESSAGE_ID_AUTO_ONLINE,
                           "auto_online_blocks is offline since an earlier memonlined took over; "
                           "\"%s\" is restored when this one stops", previous);
        c->auto_online_taken = true;
        c->auto_online_previous = TAKE_PTR(previous);
}

/* ---- event loop -------------------------------------------------------- */

static void update_status(struct context *c, const struct job *j) {
        double secs = j ? (double) j->duration_usec / 1e6 : 0;

        if (!j) {
                sd_notifyf(false, "STATUS=Waiting for memory; %llu blocks onlined so far",
                           (unsigned long long) c->total_blocks);
                return;
        }
        sd_notifyf(false,
                   "STATUS=%llu blocks onlined so far, %llu failed; last batch: %zu blocks in %.3f s (%.2f GiB/s)",
                   (unsigned long long) c->total_blocks, (unsigned long long) c->total_failed, j->onlined, secs,
                   secs > 0 ? (double) j->bytes / (1ULL << 30) / secs : 0.0);
}

static int maybe_start_job(struct context *c);
static void request_rescan(struct context *c, const char *trigger);

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        struct context *c = userdata;

        c->retry_source = sd_event_source_unref(c->retry_source);
        request_rescan(c, "retry");
        return maybe_start_job(c);
}

/*
 * A pass that failed, or left blocks failed, is retried with a rescan
 * after 1, 2, 4 ... 32 s; then we wait for the next event. No timer runs
 * while all is well.
 */
static void schedule_retry(struct context *c, bool needed) {
        uint64_t delay;
        int r;

        if (!needed) {
                c->retry_rounds = 0;
                return;
        }
        if (c->retry_source)
                return;
        if (c->retry_rounds >= MAX_RETRY_ROUNDS) {
                report_log(&c->reporter, LOG_WARNING, NULL,
                           "giving up retrying after %u rescans; blocks that failed stay offline until the next "
                           "event, reload or restart", c->retry_rounds);
                c->retry_rounds = 0;
                return;
        }
        delay = USEC_PER_SEC << c->retry_rounds;
        c->retry_rounds++;
        r = sd_event_add_time_relative(c->event, &c->retry_source, CLOCK_MONOTONIC, delay, 0, on_retry, c);
        if (r < 0)
                report_log(&c->reporter, LOG_WARNING, NULL, "cannot arm the retry timer: %s", strerror(-r));
        else
                report_log(&c->reporter, LOG_INFO, NULL, "work left undone: rescanning in %llu s",
                           (unsigned long long) (delay / USEC_PER_SEC));
}

static int on_job_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct context *c = userdata;
        uint64_t v;

        if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                return 0;
        if (!c->runner_busy)
                return 0;
        pthread_join(c->runner, NULL);
        c->runner_busy = false;

        c->total_blocks += c->job->onlined;
        c->total_bytes += c->job->bytes;
        c->total_failed += c->job->failed;
        c->batches++;
        if (c->job->onlined || c->job->failed)
                update_status(c, c->job);
        if (!c->exiting)
                schedule_retry(c, c->job->error < 0 || c->job->failed > 0);
        job_free(c->job);
        c->job = NULL;
        policy_free(c->retired_policy);
        c->retired_policy = NULL;

        if (c->exiting) {
                sd_event_exit(c->event, 0);
                return 0;
        }
        (void) maybe_start_job(c);
        return 0;
}

static int start_job(struct context *c, struct job *j) {
        int r;

        j->policy = c->policy;
        c->job = j;
        r = -pthread_create(&c->runner, NULL, runner_main, c);
        if (r < 0) {
                c->job = NULL;
                job_free(j);
                report_log(&c->reporter, LOG_ERR, NULL, "cannot start the worker thread: %s", strerror(-r));
                return r;
        }
        c->runner_busy = true;
        return 0;
}

static int arm_timer(struct context *c) {
        uint64_t deadline = batcher_deadline(&c->batcher);

        if (deadline == 0)
                return sd_event_source_set_enabled(c->timer_source, SD_EVENT_OFF);
        (void) sd_event_source_set_time(c->timer_source, deadline);
        return sd_event_source_set_enabled(c->timer_source, SD_EVENT_ONESHOT);
}

/* Another job will follow the running one: add events wait in the batcher, or a rescan. */
static void update_more_work(struct context *c) {
        atomic_store(&c->more_work, !c->exiting && (c->batcher.n > 0 || c->rescan_pending));
}

static int start_due_job(struct context *c);

/* Start the next job if the runner is idle and work is due. */
static int maybe_start_job(struct context *c) {
        int r = start_due_job(c);

        update_more_work(c);
        return r;
}

static int start_due_job(struct context *c) {
        _cleanup_free_ struct job *j = NULL;
        uint64_t now = now_usec();
        bool due = batcher_due(&c->batcher, now);
        int r;

        if (c->runner_busy || c->exiting)
                return 0;
        if (!c->rescan_pending && !due && c->n_dax_pending == 0)
                return arm_timer(c);

        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        if (c->rescan_pending) {
                /* A rescan covers every pending id too. */
                uint64_t *ids;
                size_t n;

                r = batcher_take(&c->batcher, &ids, &n, &j->first_event_usec);
                if (r < 0)
                        return r;
                free(ids);
                j->trigger = c->rescan_trigger;
                c->rescan_pending = false;
        } else if (due) {
                r = batcher_take(&c->batcher, &j->ids, &j->n_ids, &j->first_event_usec);
                if (r < 0)
                        return r;
                j->trigger = "udev";
        } else {
                j->ids = calloc(1, sizeof(uint64_t));   /* dax only: no blocks */
                if (!j->ids)
                        return -ENOMEM;
                j->trigger = "dax";
        }
        if (!j->ids) {
                batcher_clear(&c->touched);     /* a rescan reads everything anyway */
                c->topology_reload = false;
        } else if (j->n_ids > 0) {
                r = batcher_take(&c->touched, &j->touched, &j->n_touched, NULL);
                if (r < 0)
                        return r;
                j->reload_topology = c->topology_reload;
                c->topology_reload = false;
        }
        j->dax_devices = TAKE_PTR(c->dax_pending);
        j->dax_event_usec = TAKE_PTR(c->dax_pending_usec);
        j->n_dax = c->n_dax_pending;
        c->n_dax_pending = c->dax_allocated = c->dax_usec_allocated = 0;

        r = start_job(c, TAKE_PTR(j));
        if (r < 0)
                return r;
        return arm_timer(c);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        return maybe_start_job(userdata);
}

static void request_rescan(struct context *c, const char *trigger) {
        c->rescan_pending = true;
        c->rescan_trigger = trigger;
}

static int queue_dax(struct context *c, const char *name) {
        for (size_t i = 0; i < c->n_dax_pending; i++)
                if (streq(c->dax_pending[i], name))
                        return 0;
        if (GROW(c->dax_pending, c->dax_allocated, c->n_dax_pending + 1) < 0 ||
            GROW(c->dax_pending_usec, c->dax_usec_allocated, c->n_dax_pending + 1) < 0)
                return -ENOMEM;
        c->dax_pending[c->n_dax_pending] = strdup(name);
        if (!c->dax_pending[c->n_dax_pending])
                return -ENOMEM;
        c->dax_pending_usec[c->n_dax_pending++] = now_usec();
        return 0;
}

static int on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct context *c = userdata;
        struct monitor_event ev;
        int r;

        /* Drain everything pending, then decide once. */
        for (;;) {
                r = monitor_receive(c->monitor, &ev);
                if (r == 0)
                        break;
                if (r == -ENOBUFS) {
                        report_log(&c->reporter, LOG_WARNING, NULL,
                                   "event receive buffer overflowed: events were lost, rescanning all blocks");
                        request_rescan(c, "rescan");
                        continue;
                }
                if (r < 0) {
                        report_log(&c->reporter, LOG_WARNING, NULL, "receiving an event failed: %s; rescanning",
                                   strerror(-r));
                        request_rescan(c, "rescan");
                        break;
                }
                switch (ev.kind) {
                case MONITOR_MEMORY_ADD:
                        r = batcher_add(&c->batcher, ev.block_id, now_usec());
                        if (r < 0)
                                request_rescan(c, "rescan");
                        break;
                case MONITOR_MEMORY_ONLINE:
                        /* The runner reads these again unless it onlined them itself. */
                        if (c->touched.n >= TOUCHED_MAX || batcher_add(&c->touched, ev.block_id, 0) < 0) {
                                batcher_clear(&c->touched);
                                c->topology_reload = true;
                        }
                        break;
                case MONITOR_MEMORY_OFFLINE:
                case MONITOR_MEMORY_REMOVE:
                        c->topology_reload = true;
                        break;
                case MONITOR_DAX_ADD:
                        if (c->policy->convert_devdax || c->policy->n_devices > 0)
                                if (queue_dax(c, ev.devname) < 0)
                                        report_log(&c->reporter, LOG_WARNING, NULL, "%s: dropped: out of memory",
                                                   ev.devname);
                        break;
                default:
                        break;
                }
        }
        return maybe_start_job(c);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct context *c = userdata;
        struct policy *p = NULL;
        int r;

        sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading %s", c->config_path);
        r = load_policy(c, &p);
        if (r < 0) {
                report_log(&c->reporter, LOG_ERR, MESSAGE_ID_CONFIG,
                           "reload of %s failed; keeping the previous policy", c->config_path);
        } else {
                if (c->runner_busy) {
                        policy_free(c->retired_policy);
                        c->retired_policy = c->policy;
                } else
                        policy_free(c->policy);
                c->policy = p;
                batcher_set_window(&c->batcher, p->settle_ms, p->max_wait_ms);
                report_log(&c->reporter, LOG_INFO, NULL, "reloaded %s", c->policy->path ? c->policy->path : "defaults");
                apply_auto_online_policy(c);
                /* Blocks the old policy skipped may be wanted now. */
                request_rescan(c, "reload");
                (void) maybe_start_job(c);
        }
        sd_notify(false, "READY=1");
        update_status(c, NULL);
        return 0;
}

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct context *c = userdata;

        sd_notify(false, "STOPPING=1\nSTATUS=Stopping: finishing in-flight writes");
        c->exiting = true;
        atomic_store(&c->stop, true);
        update_more_work(c);
        if (!c->runner_busy)
                sd_event_exit(c->event, 0);
        return 0;
}

static void warn_conflicts(struct context *c) {
        struct conflicts conf = {};
        int r;

        r = coexist_check(c->sysfs_root, coexist_default_rules_dirs, &conf);
        if (r < 0)
                report_log(&c->reporter, LOG_DEBUG, NULL, "coexistence check incomplete: %s", strerror(-r));
        for (size_t i = 0; i < conf.n; i++)
                report_log(&c->reporter, LOG_WARNING, MESSAGE_ID_CONFLICT, "%s: %s. Fix: %s", conf.items[i].where,
                           conf.items[i].what, conf.items[i].fix);
        conflicts_clear(&conf);
}

static int run_daemon(struct context *c) {
        static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };
        sigset_t mask;
        int r;

        /* Hotplug happens when memory is short: do not get paged out then. */
        if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0)
                report_log(&c->reporter, LOG_DEBUG, NULL, "mlockall: %s", strerror(errno));

        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaddset(&mask, sigs[i]);
        if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
                return -errno;

        r = sd_event_default(&c->event);
        if (r < 0)
                return r;
        r = sd_event_add_signal(c->event, NULL, SIGHUP, on_sighup, c);
        if (r >= 0)
                r = sd_event_add_signal(c->event, NULL, SIGTERM, on_terminate, c);
        if (r >= 0)
                r = sd_event_add_signal(c->event, NULL, SIGINT, on_terminate, c);
        if (r < 0)
                return r;
        r = sd_event_set_watchdog(c->event, true);
        if (r < 0)
                return r;

        r = monitor_open(c->policy->event_source, true, &c->monitor);
        if (r < 0) {
                report_log(&c->reporter, LOG_ERR, NULL, "cannot listen for %s events: %s",
                           c->policy->event_source == EVENT_SOURCE_KERNEL ? "kernel" : "udev", strerror(-r));
                return r;
        }
        r = sd_event_add_io(c->event, &c->monitor_source, monitor_fd(c->monitor), EPOLLIN, on_monitor, c);
        if (r < 0)
                return r;

        c->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (c->done_fd < 0)
                return -errno;
        r = sd_event_add_io(c->event, &c->done_source, c->done_fd, EPOLLIN, on_job_done, c);
        if (r < 0)
                return r;
        r = sd_event_add_time(c->event, &c->timer_source, CLOCK_MONOTONIC, UINT64_MAX, 0, on_timer, c);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(c->timer_source, SD_EVENT_OFF);

        apply_auto_online_policy(c);
        warn_conflicts(c);
        report_log(&c->reporter, LOG_INFO, MESSAGE_ID_STARTED, "memonlined %s started (policy %s, sysfs %s)",
                   PACKAGE_VERSION, c->policy->path ? c->policy->path : "built-in", c->sysfs_root);

        /* Coldplug: whatever is offline now was added before we listened. */
        request_rescan(c, "coldplug");
        r = maybe_start_job(c);
        if (r < 0)
                return r;
        sd_notify(false, "READY=1");
        update_status(c, NULL);

        r = sd_event_loop(c->event);
        if (r < 0)
                return r;
        report_log(&c->reporter, LOG_INFO, NULL, "stopped after %llu blocks in %llu batches",
                   (unsigned long long) c->total_blocks, (unsigned long long) c->batches);
        return 0;
}

/* --once and --dry-run: one pass over every offline block. */
static int run_once(struct context *c) {
        struct job j = { .trigger = "once", .policy = c->policy };
        int r;

        if (!c->dry_run)
                warn_conflicts(c);
        r = runner_run_job(&c->runner_ctx, &j);
        if (r < 0)
                return r;
        if (c->dry_run)
                return 0;
        report_log(&c->reporter, LOG_INFO, NULL, "%zu blocks onlined, %zu failed, %zu not attempted", j.onlined,
                   j.failed, j.not_attempted);
        return j.failed || j.not_attempted ? -EIO : 0;
}

/* ---- options ----------------------------------------------------------- */

static void help(void) {
        printf("Usage: memonlined [OPTIONS]\n"
               "       memonlined report [OPTIONS]   (see memonlined-report(8))\n"
               "       memonlined status [--json]\n"
               "\n"
               "Online hot-added memory blocks per policy, node-aware, with timing records.\n"
               "\n"
               "  -c --config FILE          Policy file (default %s)\n"
               "     --sysfs-root DIR       Read and write sysfs under DIR (default /sys)\n"
               "     --once                 Online every offline block now, then exit\n"
               "     --dry-run              Print the plan (and dax decisions); write nothing\n"
               "     --check-config         Validate the policy file and exit\n"
               "     --log-target TARGET    auto, journal or console\n"
               "  -V --version              Print the version\n"
               "  -h --help                 Show this help\n",
               DEFAULT_CONFIG);
}

enum { ARG_SYSFS_ROOT = 0x100, ARG_ONCE, ARG_DRY_RUN, ARG_CHECK_CONFIG, ARG_LOG_TARGET };

static int parse_argv(struct context *c, int argc, char **argv) {
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "sysfs-root", required_argument, NULL, ARG_SYSFS_ROOT },
                { "once", no_argument, NULL, ARG_ONCE },
                { "dry-run", no_argument, NULL, ARG_DRY_RUN },
                { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
                { "log-target", required_argument, NULL, ARG_LOG_TARGET },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int opt;

        while ((opt = getopt_long(argc, argv, "c:Vh", options, NULL)) >= 0)
                switch (opt) {
                case 'c':
                        c->config_path = optarg;
                        c->config_explicit = true;
                        break;
                case ARG_SYSFS_ROOT:
                        c->sysfs_root = optarg;
                        break;
                case ARG_ONCE:
                        c->once = true;
                        break;
                case ARG_DRY_RUN:
                        c->dry_run = true;
                        break;
                case ARG_CHECK_CONFIG:
                        c->check_config = true;
                        break;
                case ARG_LOG_TARGET:
                        if (log_target_from_string(optarg, &c->log_target) < 0) {
                                fprintf(stderr, "memonlined: unknown log target \"%s\" (auto, journal, console)\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case 'V':
                        printf("memonlined %s\n", PACKAGE_VERSION);
                        return 0;
                case 'h':
                        help();
                        return 0;
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                fprintf(stderr, "memonlined: unexpected argument \"%s\"\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char **argv) {
        struct context c = {
                .config_path = DEFAULT_CONFIG,
                .sysfs_root = "/sys",
                .done_fd = -1,
        };
        int r;

        if (argc > 1 && streq(argv[1], "report"))
                return journal_report_main(argc - 1, argv + 1, stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        if (argc > 1 && streq(argv[1], "status")) {
                const char *root = getenv("MEMONLINED_SYSFS_ROOT");

                return status_main(argc - 1, argv + 1, root ? root : "/sys", stdout) == 0 ? EXIT_SUCCESS
                                                                                           : EXIT_FAILURE;
        }

        r = parse_argv(&c, argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        /* Short-lived modes talk to the console unless told otherwise. */
        if ((c.once || c.dry_run || c.check_config) && c.log_target == LOG_TARGET_AUTO)
                c.log_target = LOG_TARGET_CONSOLE;
        reporter_init(&c.reporter, c.log_target);
        r = log_level_from_env(&c.reporter);
        if (r < 0)
                report_log(&c.reporter, LOG_WARNING, NULL, "MEMONLINED_LOG_LEVEL=%s: unknown level, keeping info",
                           getenv("MEMONLINED_LOG_LEVEL"));
        c.runner_ctx = (struct runner) {
                .sysfs_root = c.sysfs_root,
                .reporter = &c.reporter,
                .stop = &c.stop,
                .more_work = &c.more_work,
                .dry_run = c.dry_run,
                .out = stdout,
        };

        if (c.check_config) {
                struct policy_error err = {};
                struct policy *p = NULL;

                r = policy_load(c.config_path, &p, &err);
                if (r == -ENOENT && !c.config_explicit) {
                        printf("%s: not found, the built-in defaults apply\n", c.config_path);
                        return EXIT_SUCCESS;
                }
                if (r < 0) {
                        if (err.line > 0)
                                fprintf(stderr, "%s:%u: %s\n", err.file, err.line, err.reason);
                        else
                                fprintf(stderr, "%s: %s\n", c.config_path, err.reason[0] ? err.reason : strerror(-r));
                        return EXIT_FAILURE;
                }
                printf("%s: OK\n", c.config_path);
                policy_free(p);
                return EXIT_SUCCESS;
        }

        r = load_policy(&c, &c.policy);
        if (r < 0) {
                context_done(&c);
                return EXIT_FAILURE;
        }
        batcher_init(&c.batcher, c.policy->settle_ms, c.policy->max_wait_ms);
        batcher_init(&c.touched, 0, 0);

        if (c.once || c.dry_run)
                r = run_once(&c);
        else {
                r = auto_online_state_path(&c.auto_online_state);
                if (r >= 0)
                        r = run_daemon(&c);
                if (r < 0)
                        report_log(&c.reporter, LOG_ERR, NULL, "fatal: %s", strerror(-r));
                /* Stopped (or given up): the kernel's own onlining applies again. */
                if (c.auto_online_taken)
                        give_back_auto_online(&c);
        }
        context_done(&c);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
