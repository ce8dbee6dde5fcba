/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `memonlined report`: the output of joined and selected records. */

#include <stdio.h>
#include <sys/types.h>
#include "journal-report-select.h"

struct jr_view {
        const struct jr_records *records;
        const struct jr_filter *filter;
        const size_t *vis;              /* visible batches, oldest first */
        size_t n_vis;
        bool color, utf8;
};

/* The batch table, totals, per-node and per-host summaries and conversions. */
int jr_print_table(FILE *out, const struct jr_view *v);
/* The failed blocks; returns how many were printed, or -ENOMEM. */
ssize_t jr_print_failures(FILE *out, const struct jr_view *v);

/* JSON lines: one object per visible batch, then one per conversion no batch claimed. */
void jr_print_json_lines(FILE *out, const struct jr_view *v);
/* JSON lines: one object per visible failure; returns how many. */
size_t jr_print_failures_json(FILE *out, const struct jr_view *v);
