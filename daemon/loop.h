/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include "event-source.h"

struct monitor_event;
struct online_ops;
struct policy;
struct reporter;

/*
 * The daemon's event loop (sd-event): events from the monitor into the
 * batcher, the settle timer, one runner thread at a time, SIGHUP reload,
 * SIGTERM stop, retries, the watchdog and sd_notify. main.c parses the
 * options and hands over; tests drive the loop through the hooks below.
 */

/* Where events come from: the udev/kernel monitor, or a test's stand-in. */
struct event_feed {
        int fd;                                 /* readable when events wait */
        /* As monitor_receive(): 1 with *ret, 0 when drained, -ENOBUFS, -errno. */
        int (*receive)(void *userdata, struct monitor_event *ret);
        void *userdata;
};

struct loop_config {
        const char *config_path;
        bool config_explicit;                   /* a missing file is an error, not the defaults */
        const char *sysfs_root;
        struct reporter *reporter;
        const struct event_feed *feed;          /* NULL: open the monitor the policy names */
        const struct online_ops *ops;           /* NULL: write sysfs; tests stand in for the kernel */
        uint64_t stop_timeout_usec;             /* how long a stop waits for the runner; 0: the default */
        const char *runtime_dir;                /* progress file, saved auto_online_blocks; NULL: none */
};

/* In runtime_dir while a batch runs: KEY=value lines for `memonlined status`. */

struct loop;

/* The configured file's policy; a missing default file means the built-in defaults. Errors are logged. */
int loop_load_policy(const struct loop_config *cfg, struct policy **ret);

/*
 * A daemon that cannot run (its policy refused, or any other error before
 * or instead of its loop): give auto_online_blocks the value an earlier
 * memonlined saved in runtime_dir when it took over, if it still reads
 * "offline", so the kernel onlines hot-added memory while none runs.
 * Logged; nothing to do without a saved value.
 */
void loop_give_back_saved(const struct loop_config *cfg);

/* Loads the policy (errors logged once, with FILE:LINE). */
int loop_new(const struct loop_config *cfg, struct loop **ret);
/* Listen, start the coldplug job and tell systemd we are ready (loop_run() does it if not done). */
int loop_start(struct loop *l);
/*
 * Until SIGTERM/SIGINT or loop_terminate(). 0 on a clean stop;
 * -ETIMEDOUT when the runner was still stuck when the stop timed out
 * (then loop_free() leaves it what it uses: exit the process next).
 */
int loop_run(struct loop *l);
/* After loop_run() timed out: true once the runner thread has ended (and is joined). */
bool loop_reap_runner(struct loop *l);
void loop_free(struct loop *l);
void loop_freep(struct loop **l);
#define _cleanup_loop_ __attribute__((cleanup(loop_freep)))

/* For tests: the event loop to add timers to, and what SIGHUP and SIGTERM do. */
sd_event *loop_get_event(struct loop *l);
int loop_reload(struct loop *l);
void loop_terminate(struct loop *l);

struct loop_stats {
        uint64_t blocks, bytes, failed, batches;  /* batches: finished */
        uint64_t batches_started;       /* handed to the runner, finished or not */
        uint64_t timer_wakeups;         /* batch timer firings */
        uint64_t monitor_wakeups;       /* the event socket woke the loop */
        uint64_t drains;                /* looks at the event socket while a job ran */
        uint64_t runner_starts;         /* runner threads started: one, kept from job to job */
        uint64_t warm_jobs;             /* jobs that only warmed up what the runner keeps */
        bool runner_busy;
        bool held;                      /* blocks wait offline for a next batch (known while idle) */
        bool listening;                 /* on a udev or kernel socket, not a test's feed */
        enum event_source event_source; /* which, when listening */
};
void loop_get_stats(const struct loop *l, struct loop_stats *ret);
