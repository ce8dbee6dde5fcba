/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdlib.h>
#include "format.h"
#include "journal-report-render.h"
#include "svg.h"
#include "util.h"

/*
 * --svg: per node (and host), the blocks onlined so far against time,
 * one line each, with the batches' boundaries. The time axis leaves out
 * the idle time between batches, which would otherwise squash hours of
 * idleness and seconds of onlining into vertical steps.
 */

#define WIDTH 960
#define HEIGHT 540
#define LEFT 70
#define RIGHT 230                       /* room for the legend */
#define TOP 50
#define BOTTOM 60
#define PLOT_W (WIDTH - LEFT - RIGHT)
#define PLOT_H (HEIGHT - TOP - BOTTOM)
#define MAX_BATCHES 2000                /* the most recent ones */
#define MAX_BATCH_LABELS 24

static const char *const palette[] = {
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};

struct span {
        uint64_t start, end;
        size_t batch;                   /* index into the records' batches */
};

/* Busy time: the batches' spans merged; x is the busy time before a moment. */
struct timeline {
        struct span *segs;
        uint64_t *before;               /* busy µs before each segment */
        size_t n;
        uint64_t total;
};

struct point {
        double x, y;                    /* busy µs, blocks */
};

struct series {
        struct point *pts;
        size_t n, a;
        uint64_t blocks;
};

struct picture {
        const struct jr_view *v;
        struct span *spans;             /* by start */
        size_t n_spans;
        struct timeline tl;
        struct jr_node_sum *keys;       /* one series per host and node, sorted */
        struct series *series;
        size_t n_series;
        uint64_t max_blocks;
};

static void picture_done(struct picture *p) {
        free(p->spans);
        free(p->tl.segs);
        free(p->tl.before);
        free(p->keys);
        for (size_t i = 0; i < p->n_series && p->series; i++)
                free(p->series[i].pts);
        free(p->series);
}

static int span_cmp(const void *a, const void *b) {
        const struct span *x = a, *y = b;

        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return (x->batch > y->batch) - (x->batch < y->batch);
}

/* A batch ends when its record is written and lasts its wall time (or its longest node's). */
static struct span batch_span(const struct jr_records *r, size_t idx) {
        const struct jr_batch *b = &r->batches[idx];
        struct jr_counters k;
        uint64_t d;

        jr_batch_totals(b, &k);
        d = k.duration_usec;
        for (size_t i = 0; i < b->n_nodes; i++)
                d = MAX(d, b->nodes[i].c.duration_usec);
        return (struct span) { .start = b->realtime > d ? b->realtime - d : 0, .end = b->realtime, .batch = idx };
}

static int build_spans(struct picture *p) {
        const struct jr_view *v = p->v;
        size_t first = v->n_vis > MAX_BATCHES ? v->n_vis - MAX_BATCHES : 0;

        p->n_spans = v->n_vis - first;
        p->spans = calloc(p->n_spans ?: 1, sizeof(struct span));
        if (!p->spans)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_spans; i++)
                p->spans[i] = batch_span(v->records, v->vis[first + i]);
        qsort(p->spans, p->n_spans, sizeof(struct span), span_cmp);
        return 0;
}

static int build_timeline(struct picture *p) {
        struct timeline *t = &p->tl;

        t->segs = calloc(p->n_spans ?: 1, sizeof(struct span));
        t->before = calloc(p->n_spans ?: 1, sizeof(uint64_t));
        if (!t->segs || !t->before)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_spans; i++) {
                const struct span *s = &p->spans[i];

                if (t->n > 0 && s->start <= t->segs[t->n - 1].end) {
                        t->segs[t->n - 1].end = MAX(t->segs[t->n - 1].end, s->end);
                        continue;
                }
                t->segs[t->n++] = *s;
        }
        for (size_t i = 0; i < t->n; i++) {
                t->before[i] = t->total;
                t->total += t->segs[i].end - t->segs[i].start;
        }
        return 0;
}

/* A time (the key) against a segment's start, for upper_bound(). */
static int cmp_start_span(const void *key, const void *entry) {
        return cmp_u64(key, &((const struct span *) entry)->start);
}

/* Busy µs before usec: the segment it falls in, by binary search; idle time counts as none. */
static double timeline_x(const struct timeline *t, uint64_t usec) {
        size_t i = upper_bound(&usec, t->segs, t->n, sizeof(*t->segs), cmp_start_span);

        if (i == 0)
                return 0;
        i--;
        return (double) (t->before[i] + MIN(usec, t->segs[i].end) - t->segs[i].start);
}

static int series_add(struct series *s, double x, uint64_t blocks) {
        if (GROW(s->pts, s->a, s->n + 1) < 0)
                return -ENOMEM;
        s->pts[s->n++] = (struct point) { x, (double) blocks };
        return 0;
}

static struct series *series_of(struct picture *p, size_t host, int node) {
        struct jr_node_sum key = { .host = host, .node = node };
        struct jr_node_sum *k;

        if (p->n_series == 0)
                return NULL;    /* keys is NULL, which bsearch() may not see */
        k = bsearch(&key, p->keys, p->n_series, sizeof(key), jr_node_sum_cmp);
        return k ? &p->series[k - p->keys] : NULL;
}

/* Each node record of a batch ramps its series from the batch's start over the node's own time. */
static int add_batch(struct picture *p, const struct span *sp) {
        const struct jr_batch *b = &p->v->records->batches[sp->batch];

        for (size_t i = 0; i < b->n_nodes; i++) {
                const struct jr_node *n = &b->nodes[i];
                uint64_t end = n->c.duration_usec > 0 ? MIN(sp->start + n->c.duration_usec, sp->end) : sp->end;
                struct series *s;

                if (!jr_node_visible(p->v->filter, n->node))
                        continue;
                s = series_of(p, b->host, n->node);
                if (!s)
                        continue;
                if (series_add(s, timeline_x(&p->tl, sp->start), s->blocks) < 0)
                        return -ENOMEM;
                s->blocks += n->c.blocks;
                if (series_add(s, timeline_x(&p->tl, end), s->blocks) < 0)
                        return -ENOMEM;
                p->max_blocks = MAX(p->max_blocks, s->blocks);
        }
        return 0;
}

static int build_series(struct picture *p) {
        const struct jr_view *v = p->v;
        size_t first = v->n_vis > MAX_BATCHES ? v->n_vis - MAX_BATCHES : 0;
        int r;

        r = jr_node_sums(v->records, v->filter, v->vis + first, v->n_vis - first, &p->keys, &p->n_series);
        if (r < 0)
                return r;
        p->series = calloc(p->n_series ?: 1, sizeof(struct series));
        if (!p->series)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_spans; i++) {
                r = add_batch(p, &p->spans[i]);
                if (r < 0)
                        return r;
        }
        /* every line runs to the right edge */
        for (size_t i = 0; i < p->n_series; i++)
                if (series_add(&p->series[i], (double) p->tl.total, p->series[i].blocks) < 0)
                        return -ENOMEM;
        return 0;
}

/* ---- drawing --------------------------------------------------------------- */

static double px_x(const struct picture *p, double busy) {
        return LEFT + (p->tl.total > 0 ? busy / (double) p->tl.total * PLOT_W : 0);
}

static double px_y(const struct picture *p, double blocks) {
        return TOP + PLOT_H - blocks / (double) MAX(p->max_blocks, 1) * PLOT_H;
}

static void draw_axes(FILE *f, const struct picture *p) {
        char a[32], b[32], c[32];

        fprintf(f, "<g class=\"axes\" stroke=\"black\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n"
                   "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n",
                LEFT, TOP, LEFT, TOP + PLOT_H, LEFT, TOP + PLOT_H, LEFT + PLOT_W, TOP + PLOT_H);
        fputs("<g class=\"ticks\" fill=\"black\">\n", f);
        for (unsigned i = 0; i <= 4; i++) {
                double blocks = (double) MAX(p->max_blocks, 1) * i / 4, busy = (double) p->tl.total * i / 4;

                fprintf(f, "<text x=\"%d\" y=\"%s\" text-anchor=\"end\">%s</text>\n", LEFT - 6,
                        svg_num(a, sizeof(a), px_y(p, blocks) + 4), format_fixed(b, sizeof(b), blocks, 0));
                fprintf(f, "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                        svg_num(a, sizeof(a), px_x(p, busy)), TOP + PLOT_H + 16,
                        format_fixed(c, sizeof(c), busy / USEC_PER_SEC, 2));
        }
        fprintf(f, "</g>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">onlining time, s "
                   "(idle time between batches left out)</text>\n"
                   "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">"
                   "blocks onlined</text>\n",
                LEFT + PLOT_W / 2, HEIGHT - 16, TOP + PLOT_H / 2, TOP + PLOT_H / 2);
}

/* A dashed line where each batch starts, and at the end; its tooltip says which batch it is. */
static void draw_batches(FILE *f, const struct picture *p) {
        const struct jr_records *r = p->v->records;
        char x[32], t[64];

        fputs("<g class=\"batches\" stroke=\"#999999\" stroke-dasharray=\"4 3\">\n", f);
        for (size_t i = 0; i < p->n_spans; i++) {
                const struct jr_batch *b = &r->batches[p->spans[i].batch];
                struct jr_counters k;

                jr_batch_totals(b, &k);
                format_time_local(t, sizeof(t), b->realtime);
                svg_num(x, sizeof(x), px_x(p, timeline_x(&p->tl, p->spans[i].start)));
                fputs("<g class=\"batch\"><title>", f);
                svg_write_text(f, r->hosts[b->host].label);
                fprintf(f, " batch %" PRIu64 ", %s: %" PRIu64 " blocks</title>"
                           "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/></g>\n",
                        b->seq, t, k.blocks, x, TOP, x, TOP + PLOT_H);
        }
        fprintf(f, "<line class=\"batch-end\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n", LEFT + PLOT_W,
                TOP, LEFT + PLOT_W, TOP + PLOT_H);
        if (p->n_spans > MAX_BATCH_LABELS)
                return;
        /* few batches: each one's time of day over its line */
        fputs("<g class=\"batch-labels\" font-size=\"9\" fill=\"#666666\">\n", f);
        for (size_t i = 0; i < p->n_spans; i++) {
                format_time_local(t, sizeof(t), r->batches[p->spans[i].batch].realtime);
                svg_num(x, sizeof(x), px_x(p, timeline_x(&p->tl, p->spans[i].start)));
                fprintf(f, "<text transform=\"translate(%s %d) rotate(-30)\">%s</text>\n", x, TOP - 4,
                        strlen(t) > 11 ? t + 11 : t);
        }
        fputs("</g>\n", f);
}

/* "HOST node N" */
static void write_series_name(FILE *f, const struct picture *p, size_t i) {
        svg_write_text(f, p->v->records->hosts[p->keys[i].host].label);
        fprintf(f, " node %d", p->keys[i].node);
}

static void draw_series(FILE *f, const struct picture *p) {
        char a[32], b[32];

        for (size_t i = 0; i < p->n_series; i++) {
                const struct series *s = &p->series[i];

                fputs("<g><title>", f);
                write_series_name(f, p, i);
                fprintf(f, ": %" PRIu64 " blocks</title>\n<polyline class=\"series\" data-node=\"%d\" data-host=\"",
                        s->blocks, p->keys[i].node);
                svg_write_text(f, p->v->records->hosts[p->keys[i].host].label);
                fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"",
                        palette[i % ELEMENTSOF(palette)], i >= ELEMENTSOF(palette) ? " stroke-dasharray=\"6 2\"" : "");
                for (size_t k = 0; k < s->n; k++)
                        fprintf(f, "%s%s,%s", k ? " " : "", svg_num(a, sizeof(a), px_x(p, s->pts[k].x)),
                                svg_num(b, sizeof(b), px_y(p, s->pts[k].y)));
                fputs("\"/></g>\n", f);
        }
}

static void draw_legend(FILE *f, const struct picture *p) {
        const size_t max_rows = (PLOT_H - 20) / 16;
        int x = LEFT + PLOT_W + 20;

        fputs("<g class=\"legend\">\n", f);
        for (size_t i = 0; i < p->n_series && i < max_rows; i++) {
                int y = TOP + 10 + (int) i * 16;

                fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>"
                           "<text x=\"%d\" y=\"%d\">", x, y, x + 18, y, palette[i % ELEMENTSOF(palette)], x + 24, y + 4);
                write_series_name(f, p, i);
                fprintf(f, " (%" PRIu64 ")</text>\n", p->series[i].blocks);
        }
        if (p->n_series > max_rows)
                fprintf(f, "<text x=\"%d\" y=\"%d\">and %zu more</text>\n", x, TOP + 14 + (int) max_rows * 16,
                        p->n_series - max_rows);
        fputs("</g>\n", f);
}

int jr_write_svg(FILE *f, const struct jr_view *v) {
        _cleanup_(picture_done) struct picture p = { .v = v };
        _cleanup_free_ char *title = NULL;
        int r;

        r = build_spans(&p);
        if (r >= 0)
                r = build_timeline(&p);
        if (r >= 0)
                r = build_series(&p);
        if (r < 0)
                return r;
        if (asprintf(&title, "memonlined: blocks onlined per node, %zu batch%s%s", p.n_spans,
                     p.n_spans == 1 ? "" : "es", v->n_vis > p.n_spans ? " (the latest)" : "") < 0)
                return -ENOMEM;
        svg_begin(f, WIDTH, HEIGHT, title);
        fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"15\">", LEFT);
        svg_write_text(f, title);
        fputs("</text>\n", f);
        draw_axes(f, &p);
        draw_batches(f, &p);
        draw_series(f, &p);
        draw_legend(f, &p);
        svg_end(f);
        return 0;
}
