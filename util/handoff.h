/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <pthread.h>
#include <stdbool.h>

/*
 * One item at a time from one thread to another that sleeps until it
 * comes: the event loop's jobs to the runner thread, a pass's workers to
 * the writer threads. Waking only the taker costs one futex call.
 */
struct handoff {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        void *item;
        bool closed;
};

void handoff_init(struct handoff *h);
void handoff_done(struct handoff *h);
/* Give item (not NULL) to the taker; the one given before must have been taken. */
void handoff_give(struct handoff *h, void *item);
/* Wait for the next item; NULL once closed. */
void *handoff_take(struct handoff *h);
/* The taker's next handoff_take() returns NULL: it is to end. */
void handoff_close(struct handoff *h);
