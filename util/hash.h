/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Hashing of untrusted keys. SipHash-2-4 with a random key per run, so
 * input crafted to collide (a hostile journal) cannot make the tables
 * below quadratic.
 */

#define HASH_KEY_SIZE 16

/* A fresh random key (getrandom; if that fails, the clock and pid, which still differ per run). */
void hash_key_random(uint8_t key[HASH_KEY_SIZE]);
uint64_t siphash24(const void *data, size_t len, const uint8_t key[HASH_KEY_SIZE]);

/*
 * An index: hash -> indices into the caller's array, which does the
 * comparing. Open addressing, linear probing, at most half full.
 */
struct idx_map {
        struct idx_slot *slots;
        size_t cap, n;
};

void idx_map_done(struct idx_map *m);
/* Store idx under hash (the caller looks it up first if it must be unique). -ENOMEM. */
int idx_map_put(struct idx_map *m, uint64_t hash, size_t idx);
/*
 * The indices stored under hash, one per call, SIZE_MAX after the last.
 * *cursor is 0 on the first call and carries the probe between calls.
 */
size_t idx_map_next(const struct idx_map *m, uint64_t hash, size_t *cursor);
