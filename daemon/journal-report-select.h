/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `memonlined report`: which joined records a report shows, and the summaries over them. */

#include "journal-report-join.h"

struct jr_filter {
        int node;                       /* -1: every node */
        const char *device;             /* NULL: every device */
};

bool jr_node_visible(const struct jr_filter *f, int node);
bool jr_failure_visible(const struct jr_records *r, const struct jr_filter *f, const struct jr_failure *x);
/* A device (conversion) record: of the filtered device, and with --node, of a visible batch. */
bool jr_device_visible(const struct jr_records *r, const struct jr_filter *f, const struct jr_device *d);

/* What started a batch: its dax device(s), else MEMONLINE_TRIGGER, else "-". */
const char *jr_batch_trigger(const struct jr_records *r, const struct jr_batch *b);

/* Indices of the visible batches, oldest first. */
int jr_visible_batches(const struct jr_records *r, const struct jr_filter *f, size_t **ret, size_t *ret_n);

/* Per host and node over the visible batches, in host and node order. */
struct jr_node_sum {
        size_t host;
        int node;
        uint64_t batches, blocks, bytes, usec, failed;
};
int jr_node_sums(const struct jr_records *r, const struct jr_filter *f, const size_t *vis, size_t n_vis,
                 struct jr_node_sum **ret, size_t *ret_n);
double jr_node_sum_gibps(const struct jr_node_sum *s);
/* The order of the sums: by host, then node (qsort() and bsearch()). */
int jr_node_sum_cmp(const void *a, const void *b);

/* Per host (indexed by host) over the visible batches. */
struct jr_host_sum {
        uint64_t batches, blocks, bytes;
        double median_gibps;            /* < 0: no batch with a rate */
};
/* ret_slowest: the host with the lowest median, JR_NONE when all hosts run alike. */
int jr_host_sums(const struct jr_records *r, const size_t *vis, size_t n_vis, struct jr_host_sum **ret,
                 size_t *ret_slowest);
