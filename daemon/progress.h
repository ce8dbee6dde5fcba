/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

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
