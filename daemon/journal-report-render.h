/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `memonlined report`: the output of joined and selected records. */

#include <stdio.h>
#include <sys/types.h>
#include "journal-report-select.h"

enum jr_format {
        JR_FORMAT_TEXT,                 /* tables for people, with summaries */
        JR_FORMAT_RAW,                  /* the main table, unaligned, every unsafe byte encoded (-r) */
        JR_FORMAT_JSON,                 /* one JSON document of every table (-J) */
};

struct jr_view {
        const struct jr_records *records;
        const struct jr_filter *filter;
        const size_t *vis;              /* visible batches, oldest first */
        size_t n_vis;
        enum jr_format format;
        bool noheadings;                /* -n: no column headings, no summaries */
        bool bytes;                     /* sizes in bytes, not 1.5G */
        bool color, utf8;
        const unsigned *columns;        /* of the main table; NULL: the defaults */
        size_t n_columns;
};

/*
 * The main table's columns from -o: "COL,COL" replaces the defaults,
 * "+COL,COL" adds to them. Names are case-insensitive. -EINVAL names the
 * bad column in *ret_bad.
 */
int jr_columns_parse(bool failures, const char *list, unsigned **ret, size_t *ret_n, const char **ret_bad,
                     size_t *ret_bad_len);
/* The columns of both main tables, for --help. */
void jr_columns_help(FILE *out);

/* The batch table; in text, its totals, the per-node and per-host summaries and the conversions. */
int jr_print_tables(FILE *out, const struct jr_view *v);
/* The failed blocks; returns how many, or -ENOMEM. */
ssize_t jr_print_failures(FILE *out, const struct jr_view *v);

/*
 * --svg: per host and node, the blocks onlined against onlining time (idle
 * time between batches left out), with the batch boundaries; the latest
 * 2000 visible batches.
 */
int jr_write_svg(FILE *f, const struct jr_view *v);

/* JSON lines: one object per visible batch, then one per conversion no batch claimed. */
void jr_print_json_lines(FILE *out, const struct jr_view *v);
/* JSON lines: one object per visible failure; returns how many. */
size_t jr_print_failures_json(FILE *out, const struct jr_view *v);
