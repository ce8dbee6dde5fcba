/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "progress.h"
#include "util.h"

void job_progress_reset(struct job_progress *p) {
        if (!p)
                return;
        atomic_store(&p->blocks_total, 0);
        atomic_store(&p->blocks_done, 0);
        atomic_store(&p->start_usec, 0);
        atomic_store(&p->node, -1);
        atomic_fetch_add(&p->beat, 1);
}

void job_progress_plan(struct job_progress *p, uint64_t n, uint64_t block_size) {
        if (!p)
                return;
        atomic_store(&p->block_size, block_size);
        atomic_fetch_add(&p->blocks_total, n);
        atomic_fetch_add(&p->beat, 1);
}

void job_progress_block(struct job_progress *p, int node, uint64_t id) {
        uint64_t zero = 0;

        if (!p)
                return;
        atomic_store(&p->node, node);
        atomic_store(&p->block, id);
        (void) atomic_compare_exchange_strong(&p->start_usec, &zero, now_usec());
        atomic_fetch_add(&p->beat, 1);
}

void job_progress_finished(struct job_progress *p) {
        if (!p)
                return;
        atomic_fetch_add(&p->blocks_done, 1);
        atomic_fetch_add(&p->beat, 1);
}

void job_progress_beat(struct job_progress *p) {
        if (p)
                atomic_fetch_add(&p->beat, 1);
}

void job_progress_read(struct job_progress *p, uint64_t now, struct job_progress_view *ret) {
        uint64_t start = atomic_load(&p->start_usec);

        *ret = (struct job_progress_view) {
                .blocks_total = atomic_load(&p->blocks_total),
                .blocks_done = atomic_load(&p->blocks_done),
                .block_size = atomic_load(&p->block_size),
                .elapsed_usec = start > 0 && now > start ? now - start : 0,
                .node = atomic_load(&p->node),
        };
        /* Read without a lock: never show more done than planned. */
        if (ret->blocks_done > ret->blocks_total)
                ret->blocks_done = ret->blocks_total;
}

size_t job_progress_format(const struct job_progress_view *v, char *buf, size_t size) {
        double gib = (double) (1ULL << 30), done = (double) v->blocks_done * (double) v->block_size / gib;
        double total = (double) v->blocks_total * (double) v->block_size / gib;
        char node[32] = "";
        int n;

        if (size == 0 || v->blocks_total == 0)
                return 0;
        if (v->node >= 0)
                snprintf(node, sizeof(node), " node %d", v->node);
        n = snprintf(buf, size, "onlining%s: %llu/%llu blocks, %.1f/%.1f GiB, %.2f GiB/s", node,
                     (unsigned long long) v->blocks_done, (unsigned long long) v->blocks_total, done, total,
                     v->elapsed_usec > 0 ? done / ((double) v->elapsed_usec / 1e6) : 0.0);
        if (n < 0)
                return 0;
        return MIN((size_t) n, size - 1);
}

size_t job_progress_bar(const struct job_progress_view *v, unsigned width, char *buf, size_t size) {
        char text[192], cells[201];
        uint64_t filled;
        int n;

        if (size == 0 || width == 0 || width >= sizeof(cells) || v->blocks_total == 0)
                return 0;
        if (job_progress_format(v, text, sizeof(text)) == 0)
                return 0;
        filled = MIN(v->blocks_done, v->blocks_total) * width / v->blocks_total;
        for (unsigned i = 0; i < width; i++)
                cells[i] = i < filled ? '#' : '.';
        cells[width] = '\0';
        n = snprintf(buf, size, "[%s] %s", cells, text);
        if (n < 0)
                return 0;
        return MIN((size_t) n, size - 1);
}

static void progress_bar_draw(struct progress_bar *b, bool last) {
        struct job_progress_view v;
        char line[320];

        job_progress_read(&b->progress, now_usec(), &v);
        if (job_progress_bar(&v, 20, line, sizeof(line)) == 0)
                return;
        /* Back to the line's start and clear it: a log line may have been written meanwhile. */
        fprintf(b->out, "\r%s\033[K%s", line, last ? "\n" : "");
        fflush(b->out);
}

static void *progress_bar_thread(void *userdata) {
        struct progress_bar *b = userdata;
        const struct timespec tick = { .tv_nsec = 100 * 1000 * 1000 };

        for (unsigned t = 0; !atomic_load(&b->done); t++) {
                if (t % 5 == 4)
                        progress_bar_draw(b, false);
                nanosleep(&tick, NULL);
        }
        return NULL;
}

int progress_bar_start(struct progress_bar *b, FILE *out) {
        const char *term = getenv("TERM");
        int r;

        *b = (struct progress_bar) { .out = out };
        atomic_init(&b->done, false);
        job_progress_reset(&b->progress);
        if (!out || isatty(fileno(out)) <= 0 || (term && strcmp(term, "dumb") == 0))
                return 0;
        r = pthread_create(&b->thread, NULL, progress_bar_thread, b);
        if (r != 0)
                return -r;
        b->running = true;
        return 1;
}

void progress_bar_stop(struct progress_bar *b) {
        if (!b->running)
                return;
        atomic_store(&b->done, true);
        (void) pthread_join(b->thread, NULL);
        b->running = false;
        progress_bar_draw(b, true);
}
