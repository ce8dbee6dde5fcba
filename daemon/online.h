/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "plan.h"
#include "policy.h"
#include "progress.h"

/*
 * Node workers: one pinned writer thread per planned CPU (kept in a pool
 * between passes). Workers open their blocks' state files in parallel;
 * an arbiter hands out at most max_concurrent_writes kernel writes at a
 * time (the kernel serialises onlining under device_hotplug_lock anyway
 * and punishes contention with a 5 ms sleep-and-restart).
 */

/*
 * Test seams: how a state write is done. Without ops, through each
 * block's state file under sysfs_root (opened and read ahead by a
 * helper, written with online_write_state_file()).
 */
struct online_ops {
        /*
         * No file at all: the test keeps the blocks' states. 0 or -errno,
         * as write(2) would fail; read_state: 0 and the current state.
         */
        int (*write_state)(void *userdata, const char *sysfs_root, uint64_t block_id, const char *value);
        int (*read_state)(void *userdata, const char *sysfs_root, uint64_t block_id, enum block_state *ret);
        /*
         * Or, without write_state: the files as without ops, but the write
         * through the open file is the test's, to fail, block or cut it
         * short; it may call online_write_state_file() with its arguments.
         */
        int (*write_file)(void *userdata, uint64_t block_id, int fd, const char *value);
        /*
         * Or, with neither: the files and the chained writes as without
         * ops, but each chained write's result (bytes or -errno) is the
         * test's to answer as the kernel would: a failed link, the links
         * after it -ECANCELED, -EINTR for a busy hotplug lock.
         */
        int (*chain_result)(void *userdata, uint64_t block_id, int res);
        void *userdata;
};

/*
 * One write of value and a newline at offset 0 of an open state file, on
 * sysfs and on a test tree of regular files alike: 0, or -errno (-EIO
 * when it was cut short).
 */
int online_write_state_file(int fd, const char *value);

struct block_result {
        uint64_t id;
        int node;                       /* memory's node */
        enum zone zone;                 /* what was written */
        int error;                      /* 0 or -errno after retries */
        int cpu;                        /* sched_getcpu() at the write, -1 unknown */
        unsigned attempts;              /* writes issued (1 = first try) */
        bool already_online;            /* EINVAL but state says online: another agent did it */
        bool skipped;                   /* not offline (or gone) when its turn came: not written */
        bool held;                      /* kept offline for the next job (hold_last); also skipped */
        bool not_attempted;             /* stopped before its turn (SIGTERM) */
        bool fell_back;                 /* EINVAL for the default zone: the kernel's choice instead */
        uint64_t usec;                  /* the successful write's duration */
        uint64_t done_usec;             /* CLOCK_MONOTONIC when it finished */
};

struct group_result {
        int node;
        int writer_node;
        unsigned zones_used;            /* 1 << enum zone for every zone written */
        char *cpus_used;                /* cpulist of CPUs that really wrote */
        size_t blocks, failed;
        uint64_t bytes;
        uint64_t start_usec, end_usec;
        uint64_t first_online_usec;     /* when its first block came online (CLOCK_MONOTONIC), 0 if none did */
        uint64_t *lat_sorted;           /* per-block write µs of successes, ascending */
        size_t n_lat;
};

/* Steps of the first writer from online_write()'s start to its first write (debug log). */
enum online_step {
        ONLINE_STEP_THREAD,             /* until its thread ran */
        ONLINE_STEP_OPEN,               /* its first block's file opened and read, its helper started */
        ONLINE_STEP_PIN,                /* pinned to its CPU */
        ONLINE_STEP_SLOT,               /* until the write slot was its */
        _ONLINE_STEP_MAX,
};

struct online_result {
        struct block_result *blocks;    /* one per plan item, plan order */
        size_t n_blocks;
        struct group_result *groups;    /* one per plan group */
        size_t n_groups;
        size_t failed;
        uint64_t bytes;                 /* of blocks that came online */
        uint64_t start_usec, end_usec;
        uint64_t first_online_usec;     /* the earliest of the groups', 0 if no block came online */
        uint64_t first_steps_usec[_ONLINE_STEP_MAX];
        size_t chained;                 /* blocks written through a linked chain of writes */
        int chain_errno;                /* why some worker wrote block by block instead, 0 if none did */
        bool pin_failed;                /* some worker could not pin */
        int pin_errno;
        int pin_cpu;
};

/*
 * Writer threads kept from pass to pass: one per CPU a pass writes from
 * (more when passes put several workers on one CPU), each with the helper
 * that opens its next state files. A thread is started when a pass first
 * needs it, pins itself to its CPU, and sleeps between passes.
 */
struct online_pool;

int online_pool_new(struct online_pool **ret);
/* Ends and joins the threads; no pass may be running. */
void online_pool_free(struct online_pool *p);
void online_pool_freep(struct online_pool **p);
/*
 * An idle thread, started and pinned, for each of the n cpus (-1:
 * unpinned), ahead of the pass that will need it: its start and its pin
 * (a migration to a CPU that may be busy) then come before no write.
 * 0, or -EAGAIN when one could not be started (a pass tries again).
 */
int online_pool_prepare(struct online_pool *p, const int *cpus, size_t n);
/* CPUs went on- or offline: every thread pins itself again at its next pass. */
void online_pool_repin(struct online_pool *p);
/* How many writer threads the pool has started. */
size_t online_pool_threads(struct online_pool *p);

struct online_request {
        const char *sysfs_root;
        struct online_pool *pool;       /* NULL: threads for this pass only */
        uint64_t block_size;
        const struct plan *plan;
        const struct policy *policy;
        const struct online_ops *ops;   /* NULL = real sysfs */
        atomic_bool *stop;              /* set by SIGTERM: finish in-flight writes, start no more */
        unsigned writes_per_turn;             /* writes per slot hold; 0 = ONLINE_WRITES_PER_TURN */
        /*
         * Each zone's second block is written last (see order_writes). While
         * *hold_last is set when its turn comes (more add events are queued),
         * it is left offline and marked held: the next job writes it, last
         * again. held_in lists such blocks from the last job.
         */
        const atomic_bool *hold_last;
        const uint64_t *held_in;
        size_t n_held_in;
        struct job_progress *progress;  /* NULL: nobody watches */
        /*
         * Run on the caller's thread once the pass's first write returned,
         * while the pass goes on (or at its end, if nothing was written):
         * work that would otherwise sit between two passes.
         */
        void (*after_first_write)(void *userdata);
        void *userdata;
};

/*
 * A worker keeps its write slot for this many consecutive blocks before
 * the next waiter (another node's worker) gets it. Handing over per block
 * wakes a thread on another CPU for every block; runs keep the nodes
 * interleaved at a coarser grain.
 */
#define ONLINE_WRITES_PER_TURN 16U

int online_write(const struct online_request *req, struct online_result **ret);
void online_result_free(struct online_result *r);
void online_result_freep(struct online_result **r);
#define _cleanup_online_result_ __attribute__((cleanup(online_result_freep)))
