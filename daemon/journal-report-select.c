/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include "journal-report-select.h"
#include "util.h"

bool jr_node_visible(const struct jr_filter *f, int node) {
        return f->node < 0 || node == f->node;
}

static bool jr_batch_visible(const struct jr_records *r, const struct jr_filter *f, const struct jr_batch *b) {
        if (f->device) {
                const char *dev = b->device;

                if (!dev && b->device_rec != JR_NONE)
                        dev = r->devices[b->device_rec].device;
                if (!strlist_contains(dev, f->device))
                        return false;
        }
        if (f->node >= 0) {
                for (size_t i = 0; i < b->n_nodes; i++)
                        if (b->nodes[i].node == f->node)
                                return true;
                for (size_t i = 0; i < b->n_failures; i++)
                        if (r->failures[b->failures[i]].node == f->node)
                                return true;
                return false;
        }
        return true;
}

bool jr_failure_visible(const struct jr_records *r, const struct jr_filter *f, const struct jr_failure *x) {
        if (!jr_node_visible(f, x->node))
                return false;
        if (f->device)
                return x->batch != JR_NONE && jr_batch_visible(r, f, &r->batches[x->batch]);
        return true;
}

bool jr_device_visible(const struct jr_records *r, const struct jr_filter *f, const struct jr_device *d) {
        if (f->device && (!d->device || !streq(d->device, f->device)))
                return false;
        if (f->node >= 0 && (d->batch == JR_NONE || !jr_batch_visible(r, f, &r->batches[d->batch])))
                return false;
        return true;
}

const char *jr_batch_trigger(const struct jr_records *r, const struct jr_batch *b) {
        if (b->device)
                return b->device;
        if (b->device_rec != JR_NONE && r->devices[b->device_rec].device)
                return r->devices[b->device_rec].device;
        return b->trigger ?: "-";
}

struct sort_item {
        uint64_t realtime;
        size_t idx;
};

static int sort_item_cmp(const void *a, const void *b) {
        const struct sort_item *x = a, *y = b;

        if (x->realtime != y->realtime)
                return x->realtime < y->realtime ? -1 : 1;
        return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int jr_visible_batches(const struct jr_records *r, const struct jr_filter *f, size_t **ret, size_t *ret_n) {
        _cleanup_free_ struct sort_item *items = NULL;
        size_t *out, n = 0;

        items = calloc(r->n_batches ?: 1, sizeof(*items));
        if (!items)
                return -ENOMEM;
        for (size_t i = 0; i < r->n_batches; i++)
                if (jr_batch_visible(r, f, &r->batches[i]))
                        items[n++] = (struct sort_item) { r->batches[i].realtime, i };
        qsort(items, n, sizeof(*items), sort_item_cmp);
        out = calloc(n ?: 1, sizeof(size_t));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                out[i] = items[i].idx;
        *ret = out;
        *ret_n = n;
        return 0;
}

int jr_node_sum_cmp(const void *a, const void *b) {
        const struct jr_node_sum *x = a, *y = b;

        if (x->host != y->host)
                return x->host < y->host ? -1 : 1;
        return (x->node > y->node) - (x->node < y->node);
}

/* The sum of host and node, created on first sight. */
static struct jr_node_sum *node_sum_get(const struct jr_records *r, struct idx_map *map, struct jr_node_sum **sums,
                                        size_t *n, size_t *a, size_t host, int node) {
        struct { uint64_t host; int64_t node; } key = { host, node };
        uint64_t h = siphash24(&key, sizeof(key), r->hash_key);
        size_t cur = 0, i;

        while ((i = idx_map_next(map, h, &cur)) != SIZE_MAX)
                if ((*sums)[i].host == host && (*sums)[i].node == node)
                        return &(*sums)[i];
        if (GROW(*sums, *a, *n + 1) < 0 || idx_map_put(map, h, *n) < 0)
                return NULL;
        (*sums)[*n] = (struct jr_node_sum) { .host = host, .node = node };
        return &(*sums)[(*n)++];
}

int jr_node_sums(const struct jr_records *r, const struct jr_filter *f, const size_t *vis, size_t n_vis,
                 struct jr_node_sum **ret, size_t *ret_n) {
        _cleanup_(idx_map_done) struct idx_map map = {};
        _cleanup_free_ struct jr_node_sum *sums = NULL;
        size_t n = 0, a = 0;

        for (size_t i = 0; i < n_vis; i++) {
                const struct jr_batch *b = &r->batches[vis[i]];

                for (size_t k = 0; k < b->n_nodes; k++) {
                        const struct jr_node *nr = &b->nodes[k];
                        struct jr_node_sum *s;

                        if (!jr_node_visible(f, nr->node))
                                continue;
                        s = node_sum_get(r, &map, &sums, &n, &a, b->host, nr->node);
                        if (!s)
                                return -ENOMEM;
                        s->batches++;
                        s->blocks += nr->c.blocks;
                        s->bytes += nr->c.bytes;
                        s->usec += nr->c.duration_usec;
                        s->failed += nr->c.failed;
                }
        }
        if (n > 0)
                qsort(sums, n, sizeof(*sums), jr_node_sum_cmp);
        *ret = TAKE_PTR(sums);
        *ret_n = n;
        return 0;
}

double jr_node_sum_gibps(const struct jr_node_sum *s) {
        return s->usec ? (double) s->bytes / JR_GIB / ((double) s->usec / USEC_PER_SEC) : 0;
}

static int double_cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

/* The visible batches grouped by host, in one pass: *ret_start[h] .. [h + 1] index into *ret_order. */
static int group_by_host(const struct jr_records *r, const size_t *vis, size_t n_vis, size_t **ret_order,
                         size_t **ret_start) {
        _cleanup_free_ size_t *start = calloc(r->n_hosts + 1, sizeof(size_t));
        _cleanup_free_ size_t *order = calloc(n_vis ?: 1, sizeof(size_t));
        _cleanup_free_ size_t *fill = calloc(r->n_hosts ?: 1, sizeof(size_t));

        if (!start || !order || !fill)
                return -ENOMEM;
        for (size_t i = 0; i < n_vis; i++)
                start[r->batches[vis[i]].host + 1]++;
        for (size_t h = 0; h < r->n_hosts; h++)
                start[h + 1] += start[h];
        for (size_t i = 0; i < n_vis; i++) {
                size_t h = r->batches[vis[i]].host;

                order[start[h] + fill[h]++] = vis[i];
        }
        *ret_order = TAKE_PTR(order);
        *ret_start = TAKE_PTR(start);
        return 0;
}

/* One host's totals and median GiB/s; rates has room for its batches. */
static void host_sum(const struct jr_records *r, const size_t *batches, size_t n, double *rates,
                     struct jr_host_sum *s) {
        size_t n_rates = 0;

        for (size_t i = 0; i < n; i++) {
                struct jr_counters k;

                jr_batch_totals(&r->batches[batches[i]], &k);
                s->batches++;
                s->blocks += k.blocks;
                s->bytes += k.bytes;
                if (k.bytes > 0 && (k.duration_usec > 0 || k.have_gibps))
                        rates[n_rates++] = jr_counters_gibps(&k);
        }
        s->median_gibps = -1;
        if (n_rates == 0)
                return;
        qsort(rates, n_rates, sizeof(double), double_cmp);
        s->median_gibps = n_rates % 2 ? rates[n_rates / 2] : (rates[n_rates / 2 - 1] + rates[n_rates / 2]) / 2;
}

int jr_host_sums(const struct jr_records *r, const size_t *vis, size_t n_vis, struct jr_host_sum **ret,
                 size_t *ret_slowest) {
        _cleanup_free_ double *rates = calloc(n_vis ?: 1, sizeof(double));
        _cleanup_free_ struct jr_host_sum *sums = calloc(r->n_hosts ?: 1, sizeof(struct jr_host_sum));
        _cleanup_free_ size_t *order = NULL, *start = NULL;
        size_t slowest = JR_NONE;
        double fastest = -1;

        if (!rates || !sums || group_by_host(r, vis, n_vis, &order, &start) < 0)
                return -ENOMEM;
        for (size_t h = 0; h < r->n_hosts; h++) {
                struct jr_host_sum *s = &sums[h];

                host_sum(r, order + start[h], start[h + 1] - start[h], rates, s);
                if (s->median_gibps < 0)
                        continue;
                if (slowest == JR_NONE || s->median_gibps < sums[slowest].median_gibps)
                        slowest = h;
                fastest = MAX(fastest, s->median_gibps);
        }
        /* Hosts that all run at the same speed have no slowest one. */
        if (slowest != JR_NONE && !(sums[slowest].median_gibps < fastest))
                slowest = JR_NONE;
        *ret = TAKE_PTR(sums);
        *ret_slowest = slowest;
        return 0;
}
