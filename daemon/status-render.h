/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * `memonlined status`, what it prints: the tables (status-table.c, through
 * util/table.h), the text and raw output around them (status-text.c) and
 * the JSON document (status-json.c).
 */

#include <stdio.h>
#include "status-read.h"
#include "table.h"

enum status_table {
        STATUS_TABLE_NODES,
        STATUS_TABLE_DEVICES,
        STATUS_TABLE_DAX,
        STATUS_TABLE_CXL,
        STATUS_TABLE_MEMDEVS,
        STATUS_TABLE_NVDIMM,
        STATUS_TABLE_NAMESPACES,
        _STATUS_TABLE_MAX,
};

/* "nodes", "devices", "dax", "cxl", "memdevs", "nvdimm", "namespaces": the -o prefix, --tables name and JSON member. */
const char *status_table_name(enum status_table t);
/* The table named by the len bytes at name; -EINVAL. */
int status_table_from_name(const char *name, size_t len);

struct status_view {
        struct table_style style;
        const struct status_machine *m;
        const unsigned *columns[_STATUS_TABLE_MAX];     /* NULL: the defaults */
        size_t n_columns[_STATUS_TABLE_MAX];
        bool only_tables;                               /* --tables: these tables and nothing else */
        bool tables[_STATUS_TABLE_MAX];
};

/* Table t is to be shown. */
static inline bool status_view_wants(const struct status_view *v, enum status_table t) {
        return !v->only_tables || v->tables[t];
}

/* -ERRNO when table t's source could not be read, else 0. */
int status_table_error(const struct status_machine *m, enum status_table t);

/*
 * -o for table t: "COL,COL" or "+COL,COL" (util/table.h). -EINVAL names
 * the bad column in *ret_bad.
 */
int status_columns_parse(enum status_table t, const char *list, unsigned **ret, size_t *ret_n, const char **ret_bad,
                         size_t *ret_bad_len);
/* Every table's columns, for --help. */
void status_columns_help(FILE *out);

/*
 * Table t of the machine in v. Its columns: as -o asked, else in JSON
 * all of them, else the defaults. In text, *ret is NULL when the table
 * has no rows. -ENOMEM.
 */
int status_table_build(const struct status_view *v, enum status_table t, struct libscols_table **ret);

/* The totals of the node table. */
void status_sum_nodes(const struct status_machine *m, struct block_tally *ret);

/*
 * Text: titled tables, the node totals, then (unless --tables) the
 * sections, every outside string escaped. Raw: the tables only. -ENOMEM, -EIO.
 */
int status_print_text(FILE *out, const struct status_view *v, const struct status_sections *s);

/* One JSON document: block_size, the tables, totals, errors and (unless --tables) the sections. -ENOMEM, -EIO. */
int status_print_json(FILE *out, const struct status_view *v, const struct status_sections *s);
