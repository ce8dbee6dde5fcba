/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/*
 * The batcher: block ids from add events collect until the settle window
 * passes with no new event, or max_wait after the first event. Ids are
 * deduplicated (add and online events for one block, rescans). Pure state
 * machine: the caller feeds it times and arms a timer for batcher_deadline().
 */

struct batcher {
        unsigned settle_usec;
        unsigned max_wait_usec;
        uint64_t first_usec;            /* 0 = empty */
        uint64_t last_usec;
        uint64_t *ids;                  /* pending, insertion order */
        uint64_t *event_usec;           /* arrival per id */
        size_t n, allocated;
        /* Open-addressing set of pending ids for O(1) dedupe. */
        uint64_t *set;
        size_t set_size;                /* power of two, 0 = none */
};

void batcher_init(struct batcher *b, unsigned settle_ms, unsigned max_wait_ms);
void batcher_done(struct batcher *b);
/* Drop everything pending, and the memory it held; keep the window. */
void batcher_clear(struct batcher *b);
void batcher_set_window(struct batcher *b, unsigned settle_ms, unsigned max_wait_ms);

/* Add an id seen at now_usec. Returns 1 if new, 0 if already pending, -ENOMEM. */
int batcher_add(struct batcher *b, uint64_t id, uint64_t now_usec);

/* When the pending batch is due (CLOCK_MONOTONIC µs); 0 if empty. */
uint64_t batcher_deadline(const struct batcher *b);
bool batcher_due(const struct batcher *b, uint64_t now_usec);
/*
 * When a batch whose blocks the kernel has finished adding may start:
 * settle after its first event, not after its last (a trickle of events
 * for blocks already linked need not be waited for). 0 if empty.
 */
uint64_t batcher_added_deadline(const struct batcher *b);
/* The id of the latest event pending; false if empty. */
bool batcher_last_id(const struct batcher *b, uint64_t *ret_id);

/*
 * Take the pending ids (ascending) and their first event time; the
 * batcher is empty afterwards. ret_ids is malloc'd; NULL with n=0 if empty.
 */
int batcher_take(struct batcher *b, uint64_t **ret_ids, size_t *ret_n, uint64_t *ret_first_usec);
