/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * What the running job has done so far. The runner thread writes it; the
 * event loop reads it for the watchdog and STATUS=, without a lock.
 */
struct job_progress {
        atomic_uint_fast64_t beat;              /* bumped at every step: the runner is not stuck */
        atomic_uint_fast64_t blocks_total;      /* planned for writing in this job so far */
        atomic_uint_fast64_t blocks_done;       /* of those, finished, whatever the outcome */
        atomic_uint_fast64_t block_size;
        atomic_uint_fast64_t block;             /* the block last taken up */
        atomic_int node;                        /* its node */
        atomic_uint_fast64_t start_usec;        /* the job's first write, 0 before */
};

/* Every function takes NULL, for passes nobody watches (--once, tests). */
void job_progress_reset(struct job_progress *p);
/* n more blocks of block_size bytes are planned for writing. */
void job_progress_plan(struct job_progress *p, uint64_t n, uint64_t block_size);
/* A block's turn came (node, id), or it finished; both count as a beat. */
void job_progress_block(struct job_progress *p, int node, uint64_t id);
void job_progress_finished(struct job_progress *p);
void job_progress_beat(struct job_progress *p);

/* A consistent-enough copy, and its one-line rendering for STATUS= and `status`. */
struct job_progress_view {
        uint64_t blocks_total, blocks_done, block_size, elapsed_usec;
        int node;
};
void job_progress_read(struct job_progress *p, uint64_t now_usec, struct job_progress_view *ret);
/* "onlining node 1: 320/512 blocks, 40.0/64.0 GiB, 3.1 GiB/s"; the length, or 0 when nothing to say. */
size_t job_progress_format(const struct job_progress_view *v, char *buf, size_t size);
/* "[#####...............] " and the line above, the bar `width` cells wide; the length, or 0. */
size_t job_progress_bar(const struct job_progress_view *v, unsigned width, char *buf, size_t size);

/*
 * A progress bar on a terminal for a long `--once`: a thread redraws the
 * bar on `out` twice a second while the pass runs, and the stop leaves the
 * final bar on its own line. Not on anything but a terminal (nor TERM=dumb):
 * then start does nothing and stop prints nothing.
 */
struct progress_bar {
        struct job_progress progress;
        FILE *out;
        atomic_bool done;
        bool running;
        pthread_t thread;
};
/* 1: drawing; 0: not a terminal, nothing to do; -errno: no thread (the pass runs without a bar). */
int progress_bar_start(struct progress_bar *b, FILE *out);
void progress_bar_stop(struct progress_bar *b);
