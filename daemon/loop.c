/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's event loop: udev events into the batcher, jobs on one
 * runner thread, reload, stop, retries and the watchdog.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include "batch.h"
#include "blocks.h"
#include "coexist.h"
#include "handoff.h"
#include "loop.h"
#include "metrics.h"
#include "monitor.h"
#include "online.h"
#include "policy.h"
#include "progress.h"
#include "report.h"
#include "runner.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

/* Retries of undone work back off to this and stay there. */
#define RETRY_MAX_USEC (300 * USEC_PER_SEC)
/* A stop waits this long for the runner by default (well within systemd's TimeoutStopSec). */
#define STOP_TIMEOUT_USEC (10 * USEC_PER_SEC)
/* STATUS= updates while a batch runs. */
#define PROGRESS_INTERVAL_USEC (500 * USEC_PER_MSEC)
/* Online events kept for the next job; past this it reads the topology again instead. */
#define TOUCHED_MAX (1U << 16)
/* A batch closed while its add still runs waits for the add's end, looked at this often, this long at most. */
#define ADD_HOLD_LOOK_USEC (20 * USEC_PER_MSEC)
#define ADD_HOLD_MAX_USEC (30 * USEC_PER_SEC)
/*
 * While a job runs, the events waiting are taken this often, not with a
 * wakeup each: a 512-block job's online events woke the loop 550 times for
 * 1.2-1.6 s of CPU (6.12 guest), beside the writes. Nothing plans on them
 * before the job's end, which takes them first; the runner's looks at
 * more_work and device_events see them this much later at most.
 */
#define EVENT_DRAIN_USEC (50 * USEC_PER_MSEC)
/* Last jobs at a stop, each for the add events that came during the one before; all within one stop timeout. */
#define STOP_JOBS_MAX 4

struct loop {
        char *config_path;
        bool config_explicit;
        char *sysfs_root;
        struct reporter *reporter;
        uint64_t stop_timeout_usec;
        int runtime_dir_fd;             /* -1: no progress file */
        /* Kernel auto-online taken over: the value to give back at stop. */
        bool auto_online_taken;
        char *auto_online_previous;
        char *auto_online_state;        /* <runtime dir>/auto_online_blocks: kept for the boot; NULL: none */
        int auto_online_watch_fd;       /* inotify on auto_online_blocks while taken; -1: none */
        sd_event_source *auto_online_source;
        bool auto_online_foreign;       /* someone else wrote it while we held it: theirs until a restart */

        struct runner runner_ctx;       /* what the runner thread needs */
        struct policy *policy;          /* jobs hold their own references */

        sd_event *event;
        sd_event_source *monitor_source, *timer_source, *done_source, *retry_source;
        sd_event_source *watchdog_source, *stop_source, *progress_source;
        sd_event_source *drain_source;  /* takes the waiting events while a job runs */
        bool monitor_deferred;          /* the monitor's wakeups are off until the drain or the job's end */
        uint64_t monitor_wakeups, drains;
        unsigned retry_rounds;          /* consecutive passes that left work undone */
        struct monitor *monitor;
        enum event_source monitor_source_kind;  /* what monitor listens to */
        struct event_feed feed;
        struct batcher batcher;
        uint64_t looked_on_arrival;     /* first_usec of the pending batch whose link was looked at as it came */
        uint64_t held_batch;            /* first_usec of the pending batch held for its add; 0: none */
        uint64_t held_next_look;        /* when to look at that add again */
        /* Online events since the last job, and whether blocks went offline or away. */
        struct batcher touched;
        bool topology_reload;

        /* dax devices seen since the last job */
        char **dax_pending;
        uint64_t *dax_pending_usec;
        size_t n_dax_pending, dax_allocated, dax_usec_allocated;

        bool rescan_pending;
        const char *rescan_trigger;
        unsigned warm_pending;          /* WARM_*: what changed of the machine: warm the runner when idle */

        /*
         * The runner thread, started with the first job and kept: a job is
         * handed to it through runner_jobs, and it says it is done through
         * done_fd. job is the running job, the loop's to free.
         */
        pthread_t runner;
        bool runner_started;
        struct handoff runner_jobs;
        atomic_bool job_finished;       /* the runner is done with job */
        bool runner_busy;
        struct job *job;
        int done_fd;                    /* eventfd: the runner finished */
        atomic_bool stop;
        atomic_bool more_work;          /* another job is queued: the runner may hold a block for it */
        atomic_uint device_events;      /* DIMM events seen: the runner's kept devices may be older */
        struct job_progress progress;   /* the running job's, written by the runner thread */
        bool exiting;
        unsigned stop_jobs;             /* the stop's last jobs so far */

        /* Watchdog: the last sign of progress. */
        uint64_t watchdog_usec;         /* 0: systemd asked for none */
        uint64_t last_beat, adds_seen, adds_at_last_beat, last_alive_usec;
        bool starving;                  /* pings withheld */

        uint64_t total_blocks, total_bytes, total_failed, batches;
        uint64_t timer_wakeups, runner_starts, warm_jobs, batches_started;

        /* The textfile for node_exporter ([metrics] textfile_dir). */
        uint64_t start_time_usec;       /* CLOCK_REALTIME */
        uint64_t total_excluded, batch_records;
        bool have_last_batch;           /* a job onlined a block: the two below are known */
        uint64_t last_first_block_usec, last_last_block_usec;
        struct metrics_machine metrics_machine;         /* the block cache as the last job left it */
        bool metrics_machine_known;
        bool metrics_failing;           /* the last write failed (logged once) */
};

static void remove_progress_file(struct loop *c);

bool loop_reap_runner(struct loop *c) {
        if (c->runner_busy && atomic_load(&c->job_finished)) {
                c->runner_busy = false;
                job_free(TAKE_PTR(c->job));
        }
        return !c->runner_busy;
}

/* The idle runner thread ends. */
static void stop_runner(struct loop *c) {
        if (!c->runner_started)
                return;
        handoff_close(&c->runner_jobs);
        pthread_join(c->runner, NULL);
        c->runner_started = false;
}

/* A warm job: no blocks, no batch; it only brings what the runner keeps up to date. */
static int new_warm_job(struct loop *c, struct job **ret) {
        struct job *j = calloc(1, sizeof(*j));

        if (!j)
                return -ENOMEM;
        j->ids = calloc(1, sizeof(uint64_t));
        if (!j->ids) {
                free(j);
                return -ENOMEM;
        }
        j->policy = policy_ref(c->policy);
        j->trigger = "warm";
        j->warm = c->warm_pending;
        c->warm_pending = 0;
        *ret = j;
        return 0;
}

void loop_free(struct loop *c) {
        if (!c)
                return;
        if (!loop_reap_runner(c))
                /*
                 * The stop timed out with the runner stuck in the kernel: it
                 * still uses the job, the runner state and done_fd. The
                 * process exits next; leave them to it.
                 */
                return;
        stop_runner(c);
        handoff_done(&c->runner_jobs);
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
        sd_event_source_unref(c->watchdog_source);
        sd_event_source_unref(c->stop_source);
        sd_event_source_unref(c->progress_source);
        sd_event_source_unref(c->drain_source);
        sd_event_source_unref(c->auto_online_source);
        if (c->auto_online_watch_fd >= 0)
                close(c->auto_online_watch_fd);
        sd_event_unref(c->event);
        monitor_free(c->monitor);
        if (c->done_fd >= 0)
                close(c->done_fd);
        if (c->runtime_dir_fd >= 0) {
                remove_progress_file(c);
                close(c->runtime_dir_fd);
        }
        policy_unref(c->policy);
        metrics_machine_done(&c->metrics_machine);
        free(c->auto_online_previous);
        free(c->auto_online_state);
        free(c->config_path);
        free(c->sysfs_root);
        free(c);
}

void loop_freep(struct loop **l) {
        loop_free(*l);
}

/* ---- config ------------------------------------------------------------ */

int loop_load_policy(const struct loop_config *cfg, struct policy **ret) {
        struct policy_error err = {};
        char message[POLICY_ERROR_MAX];
        bool defaulted;
        int r;

        r = policy_load_or_default(cfg->config_path, cfg->config_explicit, ret, &defaulted, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                policy_error_format(&err, cfg->config_path, r, message, sizeof(message));
                report_log(cfg->reporter, LOG_ERR, MESSAGE_ID_CONFIG, "%s", message);
                return r;
        }
        if (defaulted)
                report_log(cfg->reporter, LOG_INFO, NULL, "%s not found, using built-in defaults", cfg->config_path);
        return 0;
}

static int load_policy(struct loop *c, struct policy **ret) {
        struct loop_config cfg = {
                .config_path = c->config_path,
                .config_explicit = c->config_explicit,
                .reporter = c->reporter,
        };

        return loop_load_policy(&cfg, ret);
}

/* ---- kernel auto-online ------------------------------------------------ */

static void unwatch_auto_online(struct loop *c) {
        c->auto_online_source = sd_event_source_disable_unref(c->auto_online_source);
        if (c->auto_online_watch_fd >= 0)
                close(c->auto_online_watch_fd);
        c->auto_online_watch_fd = -1;
}

static void drop_auto_online(struct loop *c) {
        unwatch_auto_online(c);
        free(c->auto_online_previous);
        c->auto_online_previous = NULL;
        c->auto_online_taken = false;
}

/*
 * Whether someone else wrote auto_online_blocks since we took it over:
 * a write seen by the watch (even of "offline", which reads the same as
 * ours), or, without a watch, a value other than ours. Then it is theirs:
 * nothing is restored at stop, and a reload does not take it again.
 */
static void check_auto_online(struct loop *c) {
        _cleanup_free_ char *now = NULL;
        int written = 0, r;

        if (!c->auto_online_taken)
                return;
        if (c->auto_online_watch_fd >= 0) {
                written = auto_online_watch_read(c->auto_online_watch_fd);
                if (written == 0)
                        return;
                if (written < 0)
                        unwatch_auto_online(c);         /* broken: the value decides from now on */
        }
        r = sysfs_read(c->sysfs_root, AUTO_ONLINE_ATTR, &now);
        if (written <= 0 && (r < 0 || streq(now, "offline")))
                return;         /* unreadable now: the restore at stop says so */
        /* A test tree's file between a writer's truncation and its write: that write's own event follows. */
        if (written > 0 && r >= 0 && now[0] == '\0')
                return;
        r = auto_online_release(c->auto_online_state);
        if (r < 0)
                report_log_errno(c->reporter, LOG_WARNING, MESSAGE_ID_AUTO_ONLINE, r, "cannot remove %s: %m",
                                 c->auto_online_state);
        report_log(c->reporter, LOG_NOTICE, MESSAGE_ID_AUTO_ONLINE,
                   "auto_online_blocks was written by someone else while memonlined ran (it reads \"%s\"): "
                   "memonlined leaves it so, also when it stops, and will not restore \"%s\"",
                   now && auto_online_value_ok(now) ? now : "?", strempty(c->auto_online_previous));
        drop_auto_online(c);
        c->auto_online_foreign = true;
}

static int on_auto_online_written(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        check_auto_online(userdata);
        return 0;
}

/* After a takeover: a write by anyone else wakes us. Without the watch, only a changed value is seen. */
static void watch_auto_online(struct loop *c) {
        int r;

        r = auto_online_watch(c->sysfs_root, &c->auto_online_watch_fd);
        if (r >= 0 && c->event)
                r = sd_event_add_io(c->event, &c->auto_online_source, c->auto_online_watch_fd, EPOLLIN,
                                    on_auto_online_written, c);
        if (r < 0) {
                unwatch_auto_online(c);
                report_log_errno(c->reporter, LOG_INFO, MESSAGE_ID_AUTO_ONLINE, r,
                                 "cannot watch auto_online_blocks: %m; a value written by someone else is noticed "
                                 "only if it is not \"offline\"");
        }
}

/* The value an earlier memonlined saved when it took over and never gave back (it was killed), if any. */
static void give_back_saved(struct reporter *rep, const char *sysfs_root, const char *state, const char *why) {
        _cleanup_free_ char *saved = NULL, *found = NULL;
        int r;

        r = auto_online_saved(state, &saved);
        if (r >= 0 && !saved)
                return;
        if (r >= 0)
                r = auto_online_restore(sysfs_root, state, saved, &found);
        if (r < 0)
                report_log_errno(rep, LOG_ERR, MESSAGE_ID_AUTO_ONLINE, r,
                                 "%scannot restore auto_online_blocks from %s: %m", why, state);
        else if (r > 0)
                report_log(rep, LOG_NOTICE, MESSAGE_ID_AUTO_ONLINE,
                           "%srestored auto_online_blocks to \"%s\", saved when an earlier memonlined took over; "
                           "the kernel onlines hot-added memory itself", why, saved);
        else if (found)
                report_log(rep, LOG_NOTICE, MESSAGE_ID_AUTO_ONLINE,
                           "%sauto_online_blocks was set to \"%s\" since an earlier memonlined took over; leaving it",
                           why, found);
}

/* Whether the kernel onlines what is added from now on because of this: it was offline, and now is not. */
static bool give_back_auto_online(struct loop *c) {
        _cleanup_free_ char *found = NULL;
        bool restored = false;
        int r;

        check_auto_online(c);
        if (!c->auto_online_taken) {
                if (c->auto_online_state)
                        give_back_saved(c->reporter, c->sysfs_root, c->auto_online_state, "");
                return false;
        }
        unwatch_auto_online(c);         /* our own write is no news */
        r = auto_online_restore(c->sysfs_root, c->auto_online_state, c->auto_online_previous, &found);
        if (r < 0)
                report_log_errno(c->reporter, LOG_WARNING, MESSAGE_ID_AUTO_ONLINE, r,
                                 "cannot restore auto_online_blocks to \"%s\": %m; it stays offline",
                                 strempty(c->auto_online_previous));
        else if (r > 0) {
                restored = true;
                report_log(c->reporter, LOG_INFO, MESSAGE_ID_AUTO_ONLINE,
                           "restored auto_online_blocks to \"%s\": the kernel onlines hot-added memory itself again",
                           strempty(c->auto_online_previous));
        } else if (found)
                report_log(c->reporter, LOG_NOTICE, MESSAGE_ID_AUTO_ONLINE,
                           "auto_online_blocks was set to \"%s\" while memonlined ran; leaving it", found);
        drop_auto_online(c);
        return restored;
}

/* At start and reload: own onlining while we run, or give it back, as the policy says. */
static void apply_auto_online_policy(struct loop *c) {
        _cleanup_free_ char *previous = NULL;
        int r;

        if (!c->policy->take_over_auto_online) {
                (void) give_back_auto_online(c);
                return;
        }
        check_auto_online(c);
        if (c->auto_online_taken)
                return;
        if (c->auto_online_foreign) {
                report_log(c->reporter, LOG_INFO, MESSAGE_ID_AUTO_ONLINE,
                           "auto_online_blocks was written by someone else while memonlined ran: not taking it "
                           "over again until memonlined restarts");
                return;
        }
        r = auto_online_take_over(c->sysfs_root, c->auto_online_state, &previous);
        if (r < 0) {
                report_log_errno(c->reporter, LOG_WARNING, MESSAGE_ID_AUTO_ONLINE, r,
                                 "cannot take over from kernel auto-online: %m");
                return;
        }
        if (r > 0)
                report_log(c->reporter, LOG_NOTICE, MESSAGE_ID_AUTO_ONLINE,
                           "kernel auto-online was \"%s\": set auto_online_blocks to offline, so memonlined "
                           "onlines hot-added memory per policy; \"%s\" is restored when it stops",
                           previous, previous);
        else if (previous)
                report_log(c->reporter, LOG_INFO, MESSAGE_ID_AUTO_ONLINE,
                           "auto_online_blocks is offline since an earlier memonlined took over; "
                           "\"%s\" is restored when this one stops", previous);
        c->auto_online_taken = true;
        c->auto_online_previous = TAKE_PTR(previous);
        if (c->auto_online_previous)
                watch_auto_online(c);
}

void loop_give_back_saved(const struct loop_config *cfg) {
        _cleanup_free_ char *state = NULL;

        if (!cfg->runtime_dir)
                return;
        if (asprintf(&state, "%s/" AUTO_ONLINE_STATE_FILE, cfg->runtime_dir) < 0)
                report_log(cfg->reporter, LOG_ERR, MESSAGE_ID_AUTO_ONLINE,
                           "memonlined cannot run, and is out of memory to restore auto_online_blocks");
        else
                give_back_saved(cfg->reporter, cfg->sysfs_root, state, "memonlined cannot run: ");
}

/* ---- event loop -------------------------------------------------------- */

static void update_status(struct loop *c, const struct job *j) {
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

static void maybe_start_job(struct loop *c);
static void resume_monitor(struct loop *c);
static void request_rescan(struct loop *c, const char *trigger);
static void finish_stop(struct loop *c);

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        struct loop *c = userdata;

        c->retry_source = sd_event_source_disable_unref(c->retry_source);
        request_rescan(c, "retry");
        maybe_start_job(c);
        return 0;
}

/*
 * A pass that failed, or left blocks failed or undecided, is retried with
 * a rescan after 1, 2, 4 ... 256 s, then every RETRY_MAX_USEC while work
 * stays undone: what policy wants online must come online once the
 * kernel or sysfs lets it. No timer runs while all is well.
 */
static void schedule_retry(struct loop *c, bool needed) {
        uint64_t delay;
        int r;

        if (!needed) {
                c->retry_rounds = 0;
                return;
        }
        if (c->retry_source || c->exiting)
                return;
        delay = c->retry_rounds < 9 ? USEC_PER_SEC << c->retry_rounds : RETRY_MAX_USEC;
        delay = MIN(delay, RETRY_MAX_USEC);
        c->retry_rounds++;
        r = sd_event_add_time_relative(c->event, &c->retry_source, CLOCK_MONOTONIC, delay, 0, on_retry, c);
        if (r < 0)
                report_log_errno(c->reporter, LOG_WARNING, NULL, r,
                                 "cannot arm the retry timer: %m; work left undone waits for the next event");
        else
                report_log(c->reporter, c->retry_rounds > 6 ? LOG_WARNING : LOG_INFO, NULL,
                           "work left undone: rescanning in %llu s", (unsigned long long) (delay / USEC_PER_SEC));
}

/* Something kept a job from starting: its work is found again by a rescan. */
static void retry_later(struct loop *c, const char *what, int error) {
        report_log_errno(c->reporter, LOG_ERR, NULL, error, "%s: %m; rescanning later", what);
        schedule_retry(c, true);
}

/* ---- metrics ------------------------------------------------------------ */

/* What sysfs showed when the runner last stopped: its block cache is ours only while it is idle. */
static void read_metrics_machine(struct loop *c) {
        int r;

        if (c->runner_busy || !c->runner_ctx.topology)
                return;
        if (!c->policy->textfile_dir) {
                /* not kept up to date while off: a later reload must not write what this one saw */
                c->metrics_machine_known = false;
                return;
        }
        r = metrics_machine_read(c->runner_ctx.topology, &c->metrics_machine);
        if (r < 0)
                report_log_errno(c->reporter, LOG_DEBUG, NULL, r, "metrics: cannot tally the blocks: %m");
        else
                c->metrics_machine_known = true;
}

/*
 * <textfile_dir>/memonlined.prom, replaced whole. A failure is logged once,
 * until a write succeeds again; onlining never depends on it.
 */
static void write_metrics(struct loop *c) {
        const char *dir = c->policy->textfile_dir;
        struct metrics_daemon d = {
                .start_time_usec = c->start_time_usec,
                .batches = c->batch_records,
                .blocks_onlined = c->total_blocks,
                .bytes_onlined = c->total_bytes,
                .blocks_failed = c->total_failed,
                .blocks_excluded = c->total_excluded,
                .have_last_batch = c->have_last_batch,
                .last_first_block_usec = c->last_first_block_usec,
                .last_last_block_usec = c->last_last_block_usec,
        };
        struct metrics m = {
                .machine = c->metrics_machine_known ? &c->metrics_machine : NULL,
                .auto_online_taken = c->auto_online_taken && c->auto_online_previous,
                .daemon = &d,
        };
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        FILE *f;
        int r;

        if (!dir)
                return;
        f = open_memstream(&text, &len);
        if (!f)
                r = -ENOMEM;
        else {
                r = metrics_print(f, &m);
                if (fclose(f) != 0 && r >= 0)
                        r = -ENOMEM;
        }
        if (r >= 0)
                r = metrics_write_file(dir, text, len);
        if (r < 0 && !c->metrics_failing)
                report_log_errno(c->reporter, LOG_WARNING, NULL, r,
                                 "cannot write %s/" METRICS_FILE ": %m; its metrics stay as they were until a write "
                                 "succeeds (said once)", dir);
        else if (r >= 0 && c->metrics_failing)
                report_log(c->reporter, LOG_INFO, NULL, "%s/" METRICS_FILE " written again", dir);
        c->metrics_failing = r < 0;
}

/* The job's share of the counters; time to its first and last block from its first event, or its start. */
static void count_job(struct loop *c, const struct job *j) {
        uint64_t from = j->first_event_usec ?: j->start_usec;

        c->total_blocks += j->onlined;
        c->total_bytes += j->bytes;
        c->total_failed += j->failed;
        c->total_excluded += j->excluded;
        c->batches++;
        /* the runner thread is joined: its reporter's count is ours to read */
        c->batch_records = c->reporter->batch_seq;
        if (j->onlined == 0)
                return;
        c->have_last_batch = true;
        c->last_first_block_usec = j->first_online_usec > from ? j->first_online_usec - from : 0;
        c->last_last_block_usec = j->last_online_usec > from ? j->last_online_usec - from : 0;
}

/* The runner thread: one job after another, as the loop hands them over, until told to quit. */
static void *runner_main(void *userdata) {
        struct loop *c = userdata;
        uint64_t one = 1;
        struct job *j;

        /* Its CPU apart from the loop's in top -H, ps -L and the benchmarks' per-thread tally. */
        (void) pthread_setname_np(pthread_self(), "mo-runner");
        while ((j = handoff_take(&c->runner_jobs))) {
                j->error = runner_process(&c->runner_ctx, j);
                /* The job is the loop's again: wake it. */
                atomic_store(&c->job_finished, true);
                if (write(c->done_fd, &one, sizeof(one)) < 0)
                        report_log_errno(c->reporter, LOG_ERR, NULL, errno, "cannot wake the event loop: %m");
        }
        return NULL;
}

static int on_job_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct loop *c = userdata;
        struct job *j;
        uint64_t v;

        if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                return 0;
        if (!c->runner_busy || !atomic_load(&c->job_finished))
                return 0;
        c->runner_busy = false;
        j = TAKE_PTR(c->job);
        (void) sd_event_source_set_enabled(c->progress_source, SD_EVENT_OFF);
        remove_progress_file(c);

        c->warm_pending |= j->warm_after;
        if (j->warm)
                c->warm_jobs++;
        else {
                count_job(c, j);
                if (j->onlined || j->failed)
                        update_status(c, j);
                schedule_retry(c, j->error < 0 || j->failed > 0 || j->undecided > 0 || j->unreadable > 0 ||
                               j->dax_failed > 0);
        }
        job_free(j);
        /* Before the next job takes the block cache; the file is written once that job runs. */
        read_metrics_machine(c);
        /* What came during the job, before the next plan. */
        resume_monitor(c);

        if (c->exiting)
                finish_stop(c);
        else
                maybe_start_job(c);
        write_metrics(c);
        return 0;
}

/*
 * The running batch for `memonlined status`, replaced whole (rename) so
 * a reader never sees half of it. Best effort: status only shows less.
 * Any user may read it (block counts, no secret): 0644 whatever the
 * unit's UMask= made of the open(), in a runtime directory of 0755.
 */
static void write_progress_file(struct loop *c, const struct job_progress_view *v, const char *status) {
        char buf[512];
        int fd, n;

        if (c->runtime_dir_fd < 0)
                return;
        n = snprintf(buf, sizeof(buf),
                     PROGRESS_STATUS "=%s\n" PROGRESS_TRIGGER "=%s\n" PROGRESS_NODE "=%d\n"
                     PROGRESS_BLOCKS_DONE "=%" PRIu64 "\n" PROGRESS_BLOCKS_TOTAL "=%" PRIu64 "\n"
                     PROGRESS_BLOCK_SIZE "=%" PRIu64 "\n" PROGRESS_ELAPSED_USEC "=%" PRIu64 "\n",
                     status, c->job && c->job->trigger ? c->job->trigger : "unknown", v->node, v->blocks_done,
                     v->blocks_total, v->block_size, v->elapsed_usec);
        if (n < 0 || (size_t) n >= sizeof(buf))
                return;
        fd = openat(c->runtime_dir_fd, PROGRESS_FILE ".new", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                    0644);
        if (fd < 0)
                return;
        if (fchmod(fd, 0644) == 0 && write(fd, buf, (size_t) n) == n)
                (void) renameat(c->runtime_dir_fd, PROGRESS_FILE ".new", c->runtime_dir_fd, PROGRESS_FILE);
        else
                (void) unlinkat(c->runtime_dir_fd, PROGRESS_FILE ".new", 0);
        close(fd);
}

static void remove_progress_file(struct loop *c) {
        if (c->runtime_dir_fd >= 0)
                (void) unlinkat(c->runtime_dir_fd, PROGRESS_FILE, 0);
}

/* STATUS= and the progress file while a job runs, at most twice a second; the timer is off while idle. */
static int on_progress(sd_event_source *s, uint64_t usec, void *userdata) {
        struct loop *c = userdata;
        struct job_progress_view v;
        char status[160];

        if (!c->runner_busy) {
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                return 0;
        }
        job_progress_read(&c->progress, now_usec(), &v);
        if (job_progress_format(&v, status, sizeof(status)) > 0) {
                sd_notifyf(false, "STATUS=%s", status);
                write_progress_file(c, &v, status);
        }
        (void) sd_event_source_set_time_relative(s, PROGRESS_INTERVAL_USEC);
        return 0;
}

/* Takes the job: on success the runner thread has it, on failure it is freed. */
static int start_job(struct loop *c, struct job *j) {
        int r;

        if (!c->runner_started) {
                r = -pthread_create(&c->runner, NULL, runner_main, c);
                if (r < 0) {
                        job_free(j);
                        return r;
                }
                c->runner_started = true;
                c->runner_starts++;
        }
        job_progress_reset(&c->progress);
        if (!j->warm)
                c->batches_started++;
        j->start_usec = now_usec();
        c->job = j;
        atomic_store(&c->job_finished, false);
        handoff_give(&c->runner_jobs, j);
        c->runner_busy = true;
        c->last_alive_usec = now_usec();
        if (c->progress_source) {
                (void) sd_event_source_set_time_relative(c->progress_source, PROGRESS_INTERVAL_USEC);
                (void) sd_event_source_set_enabled(c->progress_source, SD_EVENT_ON);
        }
        return 0;
}

static int arm_timer(struct loop *c) {
        uint64_t deadline = batcher_deadline(&c->batcher), added = batcher_added_deadline(&c->batcher);

        /*
         * While the runner works, its end starts the next job. A timer armed
         * then at a deadline already passed would fire again at once, on
         * every turn of the loop, for the whole job.
         */
        if (deadline == 0 || c->runner_busy || c->exiting)
                return sd_event_source_set_enabled(c->timer_source, SD_EVENT_OFF);
        /* A look at the node link first, while it can still start the batch early. */
        if (added > now_usec())
                deadline = added;
        else if (c->held_batch == c->batcher.first_usec && c->held_next_look > deadline)
                deadline = c->held_next_look;
        (void) sd_event_source_set_time(c->timer_source, deadline);
        return sd_event_source_set_enabled(c->timer_source, SD_EVENT_ONESHOT);
}

/* Another job will follow the running one: add events wait in the batcher, or a rescan. */
static void update_more_work(struct loop *c) {
        atomic_store(&c->more_work, !c->exiting && (c->batcher.n > 0 || c->rescan_pending));
}

/* Whether the policy converts devdax devices: then rescans look for them too. */
static bool policy_converts(const struct policy *p) {
        if (p->convert_devdax)
                return true;
        for (size_t i = 0; i < p->n_devices; i++)
                if (p->devices[i].convert > 0)
                        return true;
        return false;
}

/*
 * Whether the pending add events may start their batch before the settle
 * window closes: once the latest one's block and the last block of its
 * run are linked to their node, its add is over (block_add_over()), and
 * the batch takes the linked blocks whose events are still on the way
 * (topology_refresh_adopt()). A batch started while the kernel was still
 * linking took the lower blocks alone, and onlining them first made every
 * later write walk them in the kernel (6.12 guest: 8 s more at 512 blocks). Waiting on for udev's
 * trickle of their events (about 10 ms each) would only delay them. The
 * link is looked at as the batch's first events come (a single device's
 * add is usually over by then: its first block goes online at once), and
 * again settle_ms after the first, when the add was still running.
 */
static bool batch_added(struct loop *c, uint64_t now) {
        bool arriving = c->batcher.n > 0 && c->looked_on_arrival != c->batcher.first_usec;
        uint64_t id;

        if ((!arriving && now < batcher_added_deadline(&c->batcher)) || !batcher_last_id(&c->batcher, &id))
                return false;
        c->looked_on_arrival = c->batcher.first_usec;
        if (block_add_over(c->sysfs_root, id) <= 0)
                return false;
        report_log(c->reporter, LOG_DEBUG, NULL,
                   "memory%" PRIu64 " is linked to its node, and the last block of its run too: its add is over, "
                   "the batch starts %" PRIu64 " ms after its first event",
                   id, (uint64_t) ((now - c->batcher.first_usec) / USEC_PER_MSEC));
        return true;
}

/*
 * Whether a batch the settle window (or max_wait_ms) closed waits on for
 * its add: while the latest event's block or the last block of its run is
 * not linked to its node, the add still runs. Its writes would wait for
 * its end anyway (the add holds the hotplug lock), but a batch planned now
 * takes only the blocks linked so far, and the rest, in a later batch,
 * then pays in the kernel for every block onlined below it (a 64 GiB DIMM
 * in a 6.12 guest: 12-19 s to its last block against 8-11 s). Only on NUMA
 * kernels (elsewhere nothing is ever linked), looked at every
 * ADD_HOLD_LOOK_USEC, and for ADD_HOLD_MAX_USEC after the first event at
 * most: a link that never comes then costs a late batch, not a lost one.
 */
static bool batch_held_for_add(struct loop *c, uint64_t now) {
        uint64_t id;

        if (c->held_batch == c->batcher.first_usec && now < c->held_next_look)
                return true;
        if (now - c->batcher.first_usec >= ADD_HOLD_MAX_USEC || !batcher_last_id(&c->batcher, &id) ||
            block_add_running(c->sysfs_root, id) <= 0) {
                if (c->held_batch == c->batcher.first_usec)
                        report_log(c->reporter, LOG_DEBUG, NULL,
                                   "the batch held for its add starts %" PRIu64 " ms after its first event",
                                   (uint64_t) ((now - c->batcher.first_usec) / USEC_PER_MSEC));
                c->held_batch = 0;
                return false;
        }
        if (c->held_batch != c->batcher.first_usec)
                report_log(c->reporter, LOG_DEBUG, NULL,
                           "memory%" PRIu64 "'s add still runs (its run is not all linked to its node): "
                           "the batch waits for it", id);
        c->held_batch = c->batcher.first_usec;
        c->held_next_look = now + ADD_HOLD_LOOK_USEC;
        return true;
}

/* The next job, or NULL when nothing is due; stopping: whatever waits is due, and a job comes even with no blocks. */
static int take_due_job(struct loop *c, bool stopping, struct job **ret) {
        _cleanup_(job_freep) struct job *j = NULL;
        uint64_t now = now_usec();
        /* Once the settle window closed, the hold alone looks at the add: one look, not two. */
        bool due = stopping ? c->batcher.n > 0 :
                   batcher_due(&c->batcher, now) ? c->rescan_pending || !batch_held_for_add(c, now) :
                   !c->rescan_pending && batch_added(c, now);
        int r;

        *ret = NULL;
        if (!c->rescan_pending && !due && c->n_dax_pending == 0 && !stopping)
                /* Nothing due: time to warm up, if the machine changed. */
                return c->warm_pending ? new_warm_job(c, ret) : 0;

        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->policy = policy_ref(c->policy);
        if (c->rescan_pending) {
                /* A rescan covers every pending id too, and every devdax device. */
                _cleanup_free_ uint64_t *ids = NULL;
                size_t n;

                r = batcher_take(&c->batcher, &ids, &n, &j->first_event_usec);
                if (r < 0)
                        return r;
                j->trigger = c->rescan_trigger;
                j->scan_dax = policy_converts(c->policy);
                c->rescan_pending = false;
        } else if (due) {
                r = batcher_take(&c->batcher, &j->ids, &j->n_ids, &j->first_event_usec);
                if (r < 0)
                        return r;
                j->trigger = "udev";
                j->adopt_linked = true;
        } else {
                j->ids = calloc(1, sizeof(uint64_t));   /* dax only: no blocks */
                if (!j->ids)
                        return -ENOMEM;
                j->trigger = "dax";     /* or, stopping, only what the last job carried over */
        }
        if (stopping)
                j->trigger = "stop";
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
        *ret = TAKE_PTR(j);
        return 0;
}

/*
 * Start the next job if the runner is idle and work is due. Nothing here
 * may stop the loop: what could not start is found by a rescan later.
 */
static void maybe_start_job(struct loop *c) {
        struct job *j = NULL;
        int r;

        if (!c->runner_busy && !c->exiting) {
                r = take_due_job(c, false, &j);
                if (r < 0) {
                        request_rescan(c, "retry");
                        retry_later(c, "cannot prepare the next batch", r);
                } else if (j) {
                        check_auto_online(c);   /* without a watch, the only look between start and stop */
                        r = start_job(c, j);
                        if (r < 0) {
                                request_rescan(c, "retry");
                                retry_later(c, "cannot start the runner thread", r);
                        }
                }
        }
        r = arm_timer(c);
        if (r < 0)
                retry_later(c, "cannot arm the batch timer", r);
        update_more_work(c);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct loop *c = userdata;

        c->timer_wakeups++;
        maybe_start_job(c);
        return 0;
}

static void request_rescan(struct loop *c, const char *trigger) {
        c->rescan_pending = true;
        c->rescan_trigger = trigger;
}

static int queue_dax(struct loop *c, const char *name) {
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

static void handle_event(struct loop *c, const struct monitor_event *ev) {
        switch (ev->kind) {
        case MONITOR_MEMORY_ADD:
                c->adds_seen++;
                if (batcher_add(&c->batcher, ev->block_id, now_usec()) < 0)
                        request_rescan(c, "rescan");
                break;
        case MONITOR_MEMORY_ONLINE:
                /* The runner reads these again unless it onlined them itself. */
                if (c->touched.n >= TOUCHED_MAX || batcher_add(&c->touched, ev->block_id, 0) < 0) {
                        batcher_clear(&c->touched);
                        c->topology_reload = true;
                }
                break;
        case MONITOR_MEMORY_OFFLINE:
        case MONITOR_MEMORY_REMOVE:
                c->topology_reload = true;
                break;
        case MONITOR_MACHINE:
                c->warm_pending |= WARM_MACHINE;
                break;
        case MONITOR_DEVICE:
                /* A CXL region's memory is a dax device's, read in every batch: not what the runner keeps. */
                if (ev->acpi_memory)
                        atomic_fetch_add(&c->device_events, 1);
                c->warm_pending |= WARM_DEVICES;
                break;
        case MONITOR_DAX_REMOVE:
                c->warm_pending |= WARM_DAX;
                break;
        case MONITOR_DAX_ADD:
                c->warm_pending |= WARM_DAX;
                if (!c->policy->convert_devdax && c->policy->n_devices == 0)
                        break;
                if (queue_dax(c, ev->devname) < 0) {
                        /* The rescan looks at every devdax device. */
                        report_log(c->reporter, LOG_WARNING, NULL, "%s: out of memory queueing it; rescanning",
                                   ev->devname);
                        request_rescan(c, "rescan");
                }
                break;
        default:
                break;
        }
}

/* Everything the feed holds now, into the batcher. */
static void receive_events(struct loop *c) {
        struct monitor_event ev;
        int r;

        for (;;) {
                r = c->feed.receive(c->feed.userdata, &ev);
                if (r == 0)
                        break;
                if (r == -ENOBUFS) {
                        report_log(c->reporter, LOG_WARNING, NULL,
                                   "event receive buffer overflowed: events were lost, rescanning all blocks");
                        request_rescan(c, "rescan");
                        continue;
                }
                if (r < 0) {
                        report_log_errno(c->reporter, LOG_WARNING, NULL, r,
                                         "receiving an event failed: %m; rescanning");
                        request_rescan(c, "rescan");
                        break;
                }
                handle_event(c, &ev);
        }
}

/* The monitor wakes the loop again, and whatever waits on it is taken now. */
static void resume_monitor(struct loop *c) {
        if (!c->monitor_deferred)
                return;
        receive_events(c);
        /* If the socket cannot wake us again, the drain goes on looking at it. */
        if (sd_event_source_set_enabled(c->monitor_source, SD_EVENT_ON) < 0 &&
            sd_event_source_set_time_relative(c->drain_source, EVENT_DRAIN_USEC) >= 0 &&
            sd_event_source_set_enabled(c->drain_source, SD_EVENT_ONESHOT) >= 0)
                return;
        c->monitor_deferred = false;
        (void) sd_event_source_set_enabled(c->drain_source, SD_EVENT_OFF);
}

/* While the runner works: no wakeup per event, a look every EVENT_DRAIN_USEC. Idle: at once. */
static bool defer_monitor(struct loop *c) {
        if (!c->runner_busy || c->exiting || !c->drain_source)
                return false;
        if (sd_event_source_set_time_relative(c->drain_source, EVENT_DRAIN_USEC) < 0 ||
            sd_event_source_set_enabled(c->drain_source, SD_EVENT_ONESHOT) < 0)
                return false;
        (void) sd_event_source_set_enabled(c->monitor_source, SD_EVENT_OFF);
        c->monitor_deferred = true;
        return true;
}

static int on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct loop *c = userdata;

        c->monitor_wakeups++;
        /* Drain everything pending, then decide once. */
        receive_events(c);
        maybe_start_job(c);
        (void) defer_monitor(c);
        return 0;
}

static int on_drain(sd_event_source *s, uint64_t usec, void *userdata) {
        struct loop *c = userdata;

        c->drains++;
        receive_events(c);
        maybe_start_job(c);
        /* Still busy: the next look in EVENT_DRAIN_USEC, the monitor left off; else it wakes the loop again. */
        if (!c->runner_busy || c->exiting || sd_event_source_set_time_relative(s, EVENT_DRAIN_USEC) < 0 ||
            sd_event_source_set_enabled(s, SD_EVENT_ONESHOT) < 0)
                resume_monitor(c);
        return 0;
}

static void use_monitor(struct loop *c, struct monitor *m, enum event_source kind);

/*
 * A reload that names another event source: listen there from now on. The
 * reload's rescan covers whatever arrived while the sockets changed. If the
 * new one cannot be opened, the old one stays.
 */
static void apply_event_source(struct loop *c) {
        enum event_source want = c->policy->event_source;
        struct monitor *m = NULL;
        sd_event_source *s = NULL;
        int r;

        if (!c->monitor || want == c->monitor_source_kind)
                return;         /* a test feed, or no change */
        r = monitor_open(want, true, &m);
        if (r >= 0)
                r = sd_event_add_io(c->event, &s, monitor_fd(m), EPOLLIN, on_monitor, c);
        if (r < 0) {
                monitor_free(m);
                report_log_errno(c->reporter, LOG_WARNING, NULL, r,
                                 "cannot listen for %s events: %m; still listening for %s events",
                                 event_source_to_string(want), event_source_to_string(c->monitor_source_kind));
                return;
        }
        sd_event_source_disable_unref(c->monitor_source);
        monitor_free(c->monitor);
        c->monitor_source = s;
        use_monitor(c, m, want);
}

static int reload(struct loop *c) {
        struct policy *p = NULL;
        int r;

        sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading %s", c->config_path);
        r = load_policy(c, &p);
        if (r < 0)
                report_log(c->reporter, LOG_ERR, MESSAGE_ID_CONFIG,
                           "reload of %s failed; keeping the previous policy", c->config_path);
        else {
                /* A running job keeps its own reference to the policy it was planned under. */
                if (!streq(strempty(p->textfile_dir), strempty(c->policy->textfile_dir)))
                        c->metrics_failing = false;     /* another directory: its failure is news */
                policy_unref(c->policy);
                c->policy = p;
                batcher_set_window(&c->batcher, p->settle_ms, p->max_wait_ms);
                report_log(c->reporter, LOG_INFO, NULL, "reloaded %s", c->policy->path ? c->policy->path : "defaults");
                apply_auto_online_policy(c);
                apply_event_source(c);
                /* Blocks the old policy skipped may be wanted now. */
                request_rescan(c, "reload");
                read_metrics_machine(c);
                maybe_start_job(c);
                write_metrics(c);
        }
        sd_notify(false, "READY=1");
        update_status(c, NULL);
        return r;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) reload(userdata);
        return 0;
}

static int on_stop_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        struct loop *c = userdata;

        int r;

        if (!c->runner_busy)
                return 0;
        if (c->stop_jobs > 0 && !atomic_load(&c->stop)) {
                /* The stop's own jobs had their time: end the running one as SIGTERM ended the batch. */
                report_log(c->reporter, LOG_WARNING, NULL,
                           "stopping: the last jobs are still writing after %.1f s; finishing the writes in flight, "
                           "the rest waits for the next start", (double) c->stop_timeout_usec / (double) USEC_PER_SEC);
                atomic_store(&c->stop, true);
                c->stop_jobs = STOP_JOBS_MAX;
                r = sd_event_source_set_time_relative(s, c->stop_timeout_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                if (r >= 0)
                        return 0;
        }
        report_log(c->reporter, LOG_WARNING, NULL,
                   "stopping: the runner is still busy after %.1f s (memory%llu was its last block); exiting without "
                   "it, the next start's coldplug finishes its work",
                   (double) c->stop_timeout_usec / (double) USEC_PER_SEC,
                   (unsigned long long) atomic_load(&c->progress.block));
        return sd_event_exit(c->event, -ETIMEDOUT);
}

/*
 * Add events that no job will take now: after the stop's last jobs, or
 * when its job could not start. Each block still offline is named.
 */
static void report_left_offline(struct loop *c) {
        char names[256] = "";
        size_t n = 0, len = 0;

        for (size_t i = 0; i < c->batcher.n; i++) {
                _cleanup_free_ char *state = NULL;
                char rel[64];

                snprintf(rel, sizeof(rel), "devices/system/memory/memory%" PRIu64 "/state", c->batcher.ids[i]);
                if (sysfs_read(c->sysfs_root, rel, &state) < 0 || !streq(state, "offline"))
                        continue;
                if (n++ < 8 && len < sizeof(names))
                        len += (size_t) snprintf(names + len, sizeof(names) - len, "%smemory%" PRIu64,
                                                 len ? ", " : "", c->batcher.ids[i]);
        }
        if (n > 0)
                report_log(c->reporter, LOG_WARNING, NULL,
                           "stopping: %zu block(s) added during the stop stay offline until memonlined runs again: "
                           "%s%s", n, names, n > 8 ? ", ..." : "");
}

/*
 * The runner is idle and we are stopping; auto_online_blocks is given
 * back already (on_terminate), so blocks added from then on are the
 * kernel's. What came before is onlined now, in last jobs: the add events
 * that arrived during the stop, the blocks held back or deferred for a
 * next batch that will not come, and, when auto-online was given back,
 * whatever a read of every block finds offline. A job's own time lets more events in,
 * so each job is followed by another while events came, up to
 * STOP_JOBS_MAX and the stop's timeout; then exit.
 */
static void finish_stop(struct loop *c) {
        struct job *j = NULL;
        bool work;
        int r;

        receive_events(c);
        work = c->batcher.n > 0 || c->rescan_pending || c->n_dax_pending > 0 ||
               (c->stop_jobs == 0 && runner_has_carried_over(&c->runner_ctx));
        if (work && c->stop_jobs < STOP_JOBS_MAX) {
                c->stop_jobs++;
                r = take_due_job(c, true, &j);
                if (r >= 0) {
                        atomic_store(&c->stop, false);
                        r = start_job(c, j);
                        if (r >= 0)
                                return;
                }
                report_log_errno(c->reporter, LOG_WARNING, NULL, r, "stopping: cannot start the last job: %m; "
                                 "the next start onlines what it had");
        }
        report_left_offline(c);
        sd_event_exit(c->event, 0);
}

static int on_terminate(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct loop *c = userdata;
        int r;

        if (c->exiting)
                return 0;
        sd_notify(false, "STOPPING=1\nSTATUS=Stopping: finishing in-flight writes");
        c->exiting = true;
        atomic_store(&c->stop, true);
        /*
         * Before the last look: from now on the kernel's own setting takes
         * what is added. An add that read "offline" before this created its
         * blocks first, but its events may come after our last job: the
         * stop's first job reads every block instead.
         */
        if (c->auto_online_taken && give_back_auto_online(c))
                request_rescan(c, "stop");
        update_more_work(c);
        c->retry_source = sd_event_source_disable_unref(c->retry_source);
        (void) sd_event_source_set_enabled(c->timer_source, SD_EVENT_OFF);
        r = sd_event_add_time_relative(c->event, &c->stop_source, CLOCK_MONOTONIC, c->stop_timeout_usec, 0,
                                       on_stop_timeout, c);
        if (r < 0)
                report_log_errno(c->reporter, LOG_WARNING, NULL, r, "cannot bound the stop: %m");
        if (!c->runner_busy)
                finish_stop(c);
        return 0;
}

/*
 * WATCHDOG=1 only while batches make progress: the runner finished a
 * step, or the kernel still adds blocks (its add holds the lock our
 * write waits for). A runner stuck in a sysfs read or write stops the
 * pings, and systemd restarts us; coldplug then finishes the work.
 */
static int on_watchdog(sd_event_source *s, uint64_t usec, void *userdata) {
        struct loop *c = userdata;
        uint64_t now = now_usec(), beat = atomic_load(&c->progress.beat);
        int r;

        if (!c->runner_busy || beat != c->last_beat || c->adds_seen != c->adds_at_last_beat) {
                c->last_beat = beat;
                c->adds_at_last_beat = c->adds_seen;
                c->last_alive_usec = now;
                c->starving = false;
        }
        if (now - c->last_alive_usec < c->watchdog_usec)
                sd_notify(false, "WATCHDOG=1");
        else if (!c->starving) {
                c->starving = true;
                report_log(c->reporter, LOG_ERR, MESSAGE_ID_STALLED,
                           "no progress for %llu s: the runner is stuck (memory%llu was its last block); no longer "
                           "feeding the watchdog, so that systemd restarts us",
                           (unsigned long long) ((now - c->last_alive_usec) / USEC_PER_SEC),
                           (unsigned long long) atomic_load(&c->progress.block));
        }
        r = sd_event_source_set_time(s, now + c->watchdog_usec / 2);
        if (r < 0)
                /* Then the pings stop and systemd restarts us: safe, but say why. */
                report_log_errno(c->reporter, LOG_ERR, NULL, r, "cannot rearm the watchdog timer: %m");
        return 0;
}

static int feed_receive_monitor(void *userdata, struct monitor_event *ret) {
        return monitor_receive(userdata, ret);
}

int loop_new(const struct loop_config *cfg, struct loop **ret) {
        _cleanup_loop_ struct loop *c = NULL;
        int r;

        if (!cfg || !cfg->config_path || !cfg->sysfs_root || !cfg->reporter || !ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->done_fd = -1;
        c->runtime_dir_fd = -1;
        c->auto_online_watch_fd = -1;
        handoff_init(&c->runner_jobs);
        c->reporter = cfg->reporter;
        c->config_explicit = cfg->config_explicit;
        c->config_path = strdup(cfg->config_path);
        c->sysfs_root = strdup(cfg->sysfs_root);
        if (!c->config_path || !c->sysfs_root)
                return -ENOMEM;
        if (cfg->feed)
                c->feed = *cfg->feed;
        if (cfg->runtime_dir) {
                if (asprintf(&c->auto_online_state, "%s/" AUTO_ONLINE_STATE_FILE, cfg->runtime_dir) < 0) {
                        c->auto_online_state = NULL;
                        return -ENOMEM;
                }
                c->runtime_dir_fd = open(cfg->runtime_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (c->runtime_dir_fd < 0)
                        report_log_errno(c->reporter, LOG_WARNING, NULL, errno,
                                         "%s: %m; status will not show running batches", cfg->runtime_dir);
                else
                        remove_progress_file(c);        /* a crashed run's */
        }
        c->runner_ctx = (struct runner) {
                .sysfs_root = c->sysfs_root,
                .reporter = c->reporter,
                .stop = &c->stop,
                .more_work = &c->more_work,
                .device_events = &c->device_events,
                .progress = &c->progress,
                .ops = cfg->ops,
                .out = stdout,
                .keep_writers = true,
        };
        c->stop_timeout_usec = cfg->stop_timeout_usec ?: STOP_TIMEOUT_USEC;

        r = load_policy(c, &c->policy);
        if (r < 0)
                return r;
        batcher_init(&c->batcher, c->policy->settle_ms, c->policy->max_wait_ms);
        batcher_init(&c->touched, 0, 0);
        *ret = TAKE_PTR(c);
        return 0;
}

sd_event *loop_get_event(struct loop *c) {
        return c->event;
}

int loop_reload(struct loop *c) {
        return reload(c);
}

void loop_terminate(struct loop *c) {
        (void) on_terminate(NULL, NULL, c);
}

void loop_get_stats(const struct loop *c, struct loop_stats *ret) {
        *ret = (struct loop_stats) {
                .blocks = c->total_blocks,
                .bytes = c->total_bytes,
                .failed = c->total_failed,
                .batches = c->batches,
                .timer_wakeups = c->timer_wakeups,
                .monitor_wakeups = c->monitor_wakeups,
                .drains = c->drains,
                .runner_starts = c->runner_starts,
                .warm_jobs = c->warm_jobs,
                .batches_started = c->batches_started,
                .runner_busy = c->runner_busy,
                /* The runner's state is its thread's while it runs. */
                .held = !c->runner_busy && runner_has_carried_over(&c->runner_ctx),
                .listening = c->monitor,
                .event_source = c->monitor_source_kind,
        };
}

/* Events come from m from now on (the caller freed the old one), and the journal says from where. */
static void use_monitor(struct loop *c, struct monitor *m, enum event_source kind) {
        c->monitor = m;
        c->monitor_source_kind = kind;
        c->feed = (struct event_feed) {
                .fd = monitor_fd(m),
                .receive = feed_receive_monitor,
                .userdata = m,
        };
        report_log(c->reporter, LOG_INFO, NULL, "listening for %s events", event_source_to_string(kind));
}

/* The monitor the policy names, unless a feed was given. */
static int open_feed(struct loop *c) {
        struct monitor *m = NULL;
        int r;

        if (c->feed.receive)
                return 0;
        r = monitor_open(c->policy->event_source, true, &m);
        if (r < 0)
                return report_log_errno(c->reporter, LOG_ERR, NULL, r, "cannot listen for %s events: %m",
                                        event_source_to_string(c->policy->event_source));
        use_monitor(c, m, c->policy->event_source);
        return 0;
}

static int loop_setup(struct loop *c) {
        static const int sigs[] = { SIGHUP, SIGTERM, SIGINT };
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaddset(&mask, sigs[i]);
        if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
                return -errno;

        r = sd_event_new(&c->event);
        if (r < 0)
                return r;
        r = sd_event_add_signal(c->event, NULL, SIGHUP, on_sighup, c);
        if (r >= 0)
                r = sd_event_add_signal(c->event, NULL, SIGTERM, on_terminate, c);
        if (r >= 0)
                r = sd_event_add_signal(c->event, NULL, SIGINT, on_terminate, c);
        if (r < 0)
                return r;
        if (sd_watchdog_enabled(false, &c->watchdog_usec) > 0 && c->watchdog_usec > 0) {
                r = sd_event_add_time_relative(c->event, &c->watchdog_source, CLOCK_MONOTONIC,
                                               c->watchdog_usec / 2, c->watchdog_usec / 20, on_watchdog, c);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_enabled(c->watchdog_source, SD_EVENT_ON);
        }
        r = sd_event_add_time_relative(c->event, &c->progress_source, CLOCK_MONOTONIC, PROGRESS_INTERVAL_USEC,
                                       PROGRESS_INTERVAL_USEC / 10,
                                       on_progress, c);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(c->progress_source, SD_EVENT_OFF);

        r = open_feed(c);
        if (r < 0)
                return r;
        r = sd_event_add_io(c->event, &c->monitor_source, c->feed.fd, EPOLLIN, on_monitor, c);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(c->event, &c->drain_source, CLOCK_MONOTONIC, EVENT_DRAIN_USEC,
                                       EVENT_DRAIN_USEC / 10, on_drain, c);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(c->drain_source, SD_EVENT_OFF);

        c->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (c->done_fd < 0)
                return -errno;
        r = sd_event_add_io(c->event, &c->done_source, c->done_fd, EPOLLIN, on_job_done, c);
        if (r < 0)
                return r;
        /* Accuracy 1 µs: sd-event's default (250 ms) would start batches that late. */
        r = sd_event_add_time(c->event, &c->timer_source, CLOCK_MONOTONIC, UINT64_MAX, 1, on_timer, c);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(c->timer_source, SD_EVENT_OFF);
}

int loop_start(struct loop *c) {
        int r;

        if (c->event)
                return 0;
        r = loop_setup(c);
        if (r < 0)
                return r;
        apply_auto_online_policy(c);
        c->start_time_usec = realtime_usec();
        /* A predecessor's counters go at once; the blocks follow when the coldplug pass ends. */
        write_metrics(c);
        report_log(c->reporter, LOG_INFO, MESSAGE_ID_STARTED, "memonlined %s started (policy %s, sysfs %s)",
                   PACKAGE_VERSION, c->policy->path ? c->policy->path : "built-in", c->sysfs_root);

        /* Coldplug: whatever is offline now was added before we listened. */
        request_rescan(c, "coldplug");
        maybe_start_job(c);
        sd_notify(false, "READY=1");
        update_status(c, NULL);
        return 0;
}

int loop_run(struct loop *c) {
        int r;

        r = loop_start(c);
        if (r >= 0)
                r = sd_event_loop(c->event);
        /* Stopped, or given up: the kernel's own onlining applies again. */
        if (c->auto_online_taken)
                (void) give_back_auto_online(c);
        if (r < 0)
                return r;
        report_log(c->reporter, LOG_INFO, NULL, "stopped after %llu blocks in %llu batches",
                   (unsigned long long) c->total_blocks, (unsigned long long) c->batches);
        return 0;
}
