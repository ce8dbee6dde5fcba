/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "batch.h"
#include "util.h"

/* Empty slot marker in the id set; block ids are far below this. */
#define SLOT_EMPTY UINT64_MAX

void batcher_init(struct batcher *b, unsigned settle_ms, unsigned max_wait_ms) {
        *b = (struct batcher) {};
        batcher_set_window(b, settle_ms, max_wait_ms);
}

void batcher_set_window(struct batcher *b, unsigned settle_ms, unsigned max_wait_ms) {
        b->settle_usec = settle_ms * (unsigned) USEC_PER_MSEC;
        b->max_wait_usec = (max_wait_ms < settle_ms ? settle_ms : max_wait_ms) * (unsigned) USEC_PER_MSEC;
}

void batcher_done(struct batcher *b) {
        free(b->ids);
        free(b->event_usec);
        free(b->set);
        *b = (struct batcher) {};
}

void batcher_clear(struct batcher *b) {
        unsigned settle = b->settle_usec, max_wait = b->max_wait_usec;

        batcher_done(b);
        b->settle_usec = settle;
        b->max_wait_usec = max_wait;
}

static size_t hash_id(uint64_t id, size_t size) {
        /* Fibonacci hashing spreads consecutive ids. */
        return (size_t) ((id * 0x9E3779B97F4A7C15ULL) >> 17) & (size - 1);
}

static bool set_insert(uint64_t *set, size_t size, uint64_t id) {
        for (size_t i = hash_id(id, size);; i = (i + 1) & (size - 1)) {
                if (set[i] == id)
                        return false;
                if (set[i] == SLOT_EMPTY) {
                        set[i] = id;
                        return true;
                }
        }
}

static int set_grow(struct batcher *b, size_t need) {
        size_t size = b->set_size ? b->set_size : 64;
        uint64_t *set;

        /* Keep the load factor under one half. */
        if (b->set_size && need * 2 <= b->set_size)
                return 0;
        while (need * 2 > size)
                size *= 2;
        set = malloc(size * sizeof(*set));
        if (!set)
                return -ENOMEM;
        for (size_t i = 0; i < size; i++)
                set[i] = SLOT_EMPTY;
        for (size_t i = 0; i < b->n; i++)
                set_insert(set, size, b->ids[i]);
        free(b->set);
        b->set = set;
        b->set_size = size;
        return 0;
}

int batcher_add(struct batcher *b, uint64_t id, uint64_t now_usec) {
        size_t allocated_times;
        int r;

        if (id == SLOT_EMPTY)
                return -EINVAL;
        r = set_grow(b, b->n + 1);
        if (r < 0)
                return r;
        if (!set_insert(b->set, b->set_size, id))
                return 0;

        allocated_times = b->allocated;
        if (GROW(b->ids, b->allocated, b->n + 1) < 0 ||
            GROW(b->event_usec, allocated_times, b->n + 1) < 0) {
                /* Undo the set insert so state stays consistent. */
                b->set_size = 0;
                free(b->set);
                b->set = NULL;
                (void) set_grow(b, b->n);
                return -ENOMEM;
        }
        b->ids[b->n] = id;
        b->event_usec[b->n] = now_usec;
        b->n++;
        if (b->first_usec == 0)
                b->first_usec = now_usec ? now_usec : 1;
        b->last_usec = now_usec;
        return 1;
}

uint64_t batcher_deadline(const struct batcher *b) {
        uint64_t settle, cap;

        if (b->n == 0)
                return 0;
        settle = b->last_usec + b->settle_usec;
        cap = b->first_usec + b->max_wait_usec;
        return settle < cap ? settle : cap;
}

bool batcher_due(const struct batcher *b, uint64_t now_usec) {
        return b->n > 0 && now_usec >= batcher_deadline(b);
}

uint64_t batcher_added_deadline(const struct batcher *b) {
        uint64_t added = b->first_usec + b->settle_usec, deadline = batcher_deadline(b);

        /* Empty: deadline is 0. */
        return added < deadline ? added : deadline;
}

bool batcher_last_id(const struct batcher *b, uint64_t *ret_id) {
        if (b->n == 0)
                return false;
        *ret_id = b->ids[b->n - 1];
        return true;
}

int batcher_take(struct batcher *b, uint64_t **ret_ids, size_t *ret_n, uint64_t *ret_first_usec) {
        uint64_t *ids = NULL;
        size_t n = b->n;

        if (n > 0) {
                ids = malloc(n * sizeof(*ids));
                if (!ids)
                        return -ENOMEM;
                memcpy(ids, b->ids, n * sizeof(*ids));
                sort_u64(ids, n);
        }
        *ret_ids = ids;
        *ret_n = n;
        if (ret_first_usec)
                *ret_first_usec = b->first_usec;

        b->n = 0;
        b->first_usec = b->last_usec = 0;
        if (b->set)
                for (size_t i = 0; i < b->set_size; i++)
                        b->set[i] = SLOT_EMPTY;
        return 0;
}
