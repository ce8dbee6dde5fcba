/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <libsmartcols/libsmartcols.h>
#include "util.h"

/*
 * Tables through libsmartcols, as lsmem and lsblk print them: aligned for
 * people, raw (-r), JSON (-J), without headings (-n), sizes in bytes (-b).
 * Shared by `memonlined report` and `memonlined status`. Every string
 * from outside goes through table_text_cell(), which makes it safe for
 * the format.
 */

enum table_format {
        TABLE_FORMAT_TEXT,              /* for people: aligned, text cells escaped */
        TABLE_FORMAT_RAW,               /* unaligned, smartcols encodes every byte but printable ASCII */
        TABLE_FORMAT_JSON,              /* smartcols escapes C0, table_print() the rest */
};

struct table_style {
        enum table_format format;
        bool noheadings;
        bool bytes;                     /* sizes in bytes, not 1.5G */
        bool color, utf8;
        bool wrap_lists;                /* text on a terminal: long comma lists wrap at commas */
};

/* What a column holds, for its JSON type. */
enum table_value {
        COL_STRING,
        COL_NUMBER,                     /* "" is null */
        COL_SIZE,                       /* a number with --bytes, else a string */
        COL_BOOLEAN,                    /* "1"/"0" in JSON (table_bool_cell()) */
};

struct table_column {
        const char *name;               /* the heading and the name -o takes */
        double whint;
        int flags;                      /* SCOLS_FL_* */
        enum table_value json;
        const char *help;
        const char *json_key;           /* the JSON member name; NULL: the name, lower case */
};

void table_unrefp(struct libscols_table **t);
#define _cleanup_table_ __attribute__((cleanup(table_unrefp)))

/* A table named name (its JSON member) in the style's format. NULL on ENOMEM. */
struct libscols_table *table_new(const struct table_style *s, const char *name);

/* The columns ids[0..n) of cols, headed for the format. -ENOMEM. */
int table_add_columns(const struct table_style *s, struct libscols_table *tb, const struct table_column *cols,
                      const unsigned *ids, size_t n);

/* A cell of row in column col, allocated (the table takes it); NULL on ENOMEM. */
typedef char *(*table_cell_fn)(const void *row, unsigned col);

/* One line: every column's cell from cell(). NULL on ENOMEM. */
struct libscols_line *table_add_row(struct libscols_table *tb, const unsigned *ids, size_t n, table_cell_fn cell,
                                    const void *row);

/* Colour the cell of column col in ln, when the style has colour. */
void table_color_cell(const struct table_style *s, struct libscols_line *ln, const unsigned *ids, size_t n,
                      unsigned col, const char *color);

/*
 * Columns from -o: "COL,COL" replaces the defaults, "+COL,COL" adds to
 * them. Names are case-insensitive. -EINVAL names the bad column in
 * *ret_bad (ret_bad_len bytes of it); -ENOMEM.
 */
int table_columns_parse(const struct table_column *cols, size_t n_cols, const unsigned *defaults, size_t n_defaults,
                        const char *list, unsigned **ret, size_t *ret_n, const char **ret_bad, size_t *ret_bad_len);

/* "\nTITLE:\n  NAME  help" for --help. */
void table_columns_help(FILE *out, const char *title, const struct table_column *cols, size_t n);

/*
 * Outside text in the form the format needs: escaped for a terminal
 * (escape_untrusted()); as it is for raw, where smartcols writes every
 * blank, backslash and byte that is not printable ASCII as \xNN; as it is
 * for JSON, where smartcols escapes C0, " and \, and table_print() and
 * table_print_json_members() the rest it would pass raw (ESCAPE_JSON_TEXT).
 * NULL text is "-" (JSON: ""). NULL on ENOMEM.
 */
char *table_text_cell(const struct table_style *s, const char *text);
_printf_(1, 2) char *table_printf_cell(const char *format, ...);
char *table_u64_cell(uint64_t x);
char *table_fixed_cell(double x, unsigned decimals);
/* "1.5G", or the bytes with --bytes. */
char *table_size_cell(const struct table_style *s, uint64_t bytes);
/* JSON true/false, else "yes"/"no". */
char *table_bool_cell(const struct table_style *s, bool b);

/*
 * A comma list (a cpulist) for a column made with table_wrap_lists():
 * with wrap_lists, cut into lines of at most width bytes after a comma
 * (an item longer than that stands on its own line), else as it is.
 * NULL on ENOMEM.
 */
char *table_list_cell(const struct table_style *s, const char *list, size_t width);
/* With wrap_lists: column cl wraps at the newlines table_list_cell() put in. */
int table_wrap_lists(const struct table_style *s, struct libscols_column *cl);

/* A table under heading (bold with colour; text and raw only) when not NULL. -EIO, -ENOMEM. */
int table_print(FILE *out, const struct table_style *s, const char *heading, struct libscols_table *tb);

/*
 * smartcols prints each table as its own JSON object, {"name": [...]}.
 * These are the members of such objects, "name": [...], joined with
 * ",\n", for one document that holds them all. -ENOMEM, -EIO.
 */
int table_print_json_members(FILE *out, struct libscols_table *const *tables, size_t n);
