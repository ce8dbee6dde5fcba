/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The least of io_uring a writer needs: a ring of a few entries to queue
 * linked writes at offset 0 and reap their completions, by raw system
 * calls (no library). One thread owns a ring: the kernel's io-wq that runs
 * its writes belongs to the thread that submits.
 */
struct uring {
        int fd;
        unsigned entries;
        unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
        unsigned *cq_head, *cq_tail, *cq_mask;
        struct io_uring_sqe *sqes;
        struct io_uring_cqe *cqes;
        void *sq_map, *cq_map;
        size_t sq_map_len, cq_map_len, sqes_len;
        unsigned queued;                /* sqes filled since the last submit */
};

/* A ring of at least `entries` entries in *ret; -errno (-ENOSYS, -EPERM under a filter) when there is none. */
int uring_open(unsigned entries, struct uring *ret);
void uring_close(struct uring *r);
/* The kernel threads that run this thread's punted writes run on cpu only. */
int uring_bind_cpu(struct uring *r, int cpu);
/* Queue a write of buf[0..len) at offset 0 of fd, linked to the next one queued when link. -EBUSY when full. */
int uring_queue_write(struct uring *r, int fd, const void *buf, size_t len, uint64_t user_data, bool link);
/* Submit what is queued; *ret_submitted of them reached the kernel. Fewer, or an error: close the ring. */
int uring_submit(struct uring *r, unsigned *ret_submitted);
/* Wait until n completions are ready, with one wakeup: none for each one before. */
int uring_wait_ready(struct uring *r, unsigned n);
/* The next completion, waiting for it: its user_data and result (bytes or -errno). */
int uring_wait(struct uring *r, uint64_t *ret_user_data, int *ret_res);
