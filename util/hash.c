/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include "hash.h"

struct idx_slot {
        uint64_t hash;
        size_t idx1;            /* index + 1; 0: empty */
};

void hash_key_random(uint8_t key[HASH_KEY_SIZE]) {
        struct timespec ts;
        uint64_t mix[2];

        if (getrandom(key, HASH_KEY_SIZE, GRND_NONBLOCK) == HASH_KEY_SIZE)
                return;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        mix[0] = (uint64_t) ts.tv_nsec ^ ((uint64_t) ts.tv_sec << 32);
        mix[1] = (uint64_t) getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t) (uintptr_t) &ts;
        memcpy(key, mix, HASH_KEY_SIZE);
}

static uint64_t rotl(uint64_t x, unsigned b) {
        return (x << b) | (x >> (64 - b));
}

static uint64_t load_le64(const uint8_t *p) {
        uint64_t v = 0;

        for (unsigned i = 0; i < 8; i++)
                v |= (uint64_t) p[i] << (8 * i);
        return v;
}

static void sip_rounds(uint64_t v[4], unsigned n) {
        while (n-- > 0) {
                v[0] += v[1];
                v[1] = rotl(v[1], 13);
                v[1] ^= v[0];
                v[0] = rotl(v[0], 32);
                v[2] += v[3];
                v[3] = rotl(v[3], 16);
                v[3] ^= v[2];
                v[0] += v[3];
                v[3] = rotl(v[3], 21);
                v[3] ^= v[0];
                v[2] += v[1];
                v[1] = rotl(v[1], 17);
                v[1] ^= v[2];
                v[2] = rotl(v[2], 32);
        }
}

uint64_t siphash24(const void *data, size_t len, const uint8_t key[HASH_KEY_SIZE]) {
        const uint8_t *p = data;
        uint64_t k0 = load_le64(key), k1 = load_le64(key + 8), last = (uint64_t) len << 56;
        uint64_t v[4] = {
                k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
                k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL,
        };
        size_t whole = len - len % 8;

        for (size_t i = 0; i < whole; i += 8) {
                uint64_t m = load_le64(p + i);

                v[3] ^= m;
                sip_rounds(v, 2);
                v[0] ^= m;
        }
        for (size_t i = whole; i < len; i++)
                last |= (uint64_t) p[i] << (8 * (i - whole));
        v[3] ^= last;
        sip_rounds(v, 2);
        v[0] ^= last;
        v[2] ^= 0xff;
        sip_rounds(v, 4);
        return v[0] ^ v[1] ^ v[2] ^ v[3];
}

void idx_map_done(struct idx_map *m) {
        free(m->slots);
        *m = (struct idx_map) {};
}

static void slot_insert(struct idx_slot *slots, size_t cap, uint64_t hash, size_t idx1) {
        size_t i = (size_t) hash & (cap - 1);

        while (slots[i].idx1 != 0)
                i = (i + 1) & (cap - 1);
        slots[i] = (struct idx_slot) { hash, idx1 };
}

static int idx_map_grow(struct idx_map *m) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        struct idx_slot *slots;

        if (cap < m->cap || cap > SIZE_MAX / sizeof(*slots))
                return -ENOMEM;
        slots = calloc(cap, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < m->cap; i++)
                if (m->slots[i].idx1 != 0)
                        slot_insert(slots, cap, m->slots[i].hash, m->slots[i].idx1);
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
        return 0;
}

int idx_map_put(struct idx_map *m, uint64_t hash, size_t idx) {
        if ((m->n + 1) * 2 > m->cap) {
                int r = idx_map_grow(m);

                if (r < 0)
                        return r;
        }
        slot_insert(m->slots, m->cap, hash, idx + 1);
        m->n++;
        return 0;
}

size_t idx_map_next(const struct idx_map *m, uint64_t hash, size_t *cursor) {
        if (m->cap == 0)
                return SIZE_MAX;
        for (;;) {
                const struct idx_slot *s = &m->slots[((size_t) hash + *cursor) & (m->cap - 1)];

                if (s->idx1 == 0)
                        return SIZE_MAX;
                (*cursor)++;
                if (s->hash == hash)
                        return s->idx1 - 1;
        }
}
