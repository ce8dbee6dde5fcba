/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <strings.h>
#include "escape.h"
#include "format.h"
#include "table.h"

void table_unrefp(struct libscols_table **t) {
        scols_unref_table(*t);
}

struct libscols_table *table_new(const struct table_style *s, const char *name) {
        struct libscols_table *tb = scols_new_table();

        if (!tb)
                return NULL;
        if (scols_table_set_name(tb, name) < 0 || scols_table_enable_json(tb, s->format == TABLE_FORMAT_JSON) < 0 ||
            scols_table_enable_raw(tb, s->format == TABLE_FORMAT_RAW) < 0 ||
            scols_table_enable_noheadings(tb, s->noheadings) < 0 || scols_table_enable_colors(tb, s->color) < 0 ||
            /* text cells come escaped (table_text_cell()): smartcols would escape the escapes */
            scols_table_enable_noencoding(tb, s->format == TABLE_FORMAT_TEXT) < 0) {
                scols_unref_table(tb);
                return NULL;
        }
        return tb;
}

static int json_type(const struct table_style *s, enum table_value v) {
        switch (v) {
        case COL_NUMBER:  return SCOLS_JSON_NUMBER;
        case COL_SIZE:    return s->bytes ? SCOLS_JSON_NUMBER : SCOLS_JSON_STRING;
        case COL_BOOLEAN: return SCOLS_JSON_BOOLEAN;
        default:          return SCOLS_JSON_STRING;
        }
}

int table_add_columns(const struct table_style *s, struct libscols_table *tb, const struct table_column *cols,
                      const unsigned *ids, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const struct table_column *c = &cols[ids[i]];
                const char *name = s->format == TABLE_FORMAT_JSON && c->json_key ? c->json_key : c->name;
                struct libscols_column *cl = scols_table_new_column(tb, name, c->whint, c->flags);

                if (!cl || scols_column_set_json_type(cl, json_type(s, c->json)) < 0)
                        return -ENOMEM;
                if (s->color)
                        scols_cell_set_color(scols_column_get_header(cl), "bold");
        }
        return 0;
}

struct libscols_line *table_add_row(struct libscols_table *tb, const unsigned *ids, size_t n, table_cell_fn cell,
                                    const void *row) {
        struct libscols_line *ln = scols_table_new_line(tb, NULL);

        if (!ln)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                char *data = cell(row, ids[i]);

                if (!data || scols_line_refer_data(ln, i, data) < 0) {
                        free(data);
                        return NULL;
                }
        }
        return ln;
}

void table_color_cell(const struct table_style *s, struct libscols_line *ln, const unsigned *ids, size_t n,
                      unsigned col, const char *color) {
        if (!s->color)
                return;
        for (size_t i = 0; i < n; i++)
                if (ids[i] == col)
                        (void) scols_cell_set_color(scols_line_get_cell(ln, i), color);
}

static int column_lookup(const struct table_column *cols, size_t n, const char *name, size_t len) {
        for (size_t i = 0; i < n; i++)
                if (strlen(cols[i].name) == len && strncasecmp(cols[i].name, name, len) == 0)
                        return (int) i;
        return -1;
}

int table_columns_parse(const struct table_column *cols, size_t n_cols, const unsigned *defaults, size_t n_defaults,
                        const char *list, unsigned **ret, size_t *ret_n, const char **ret_bad, size_t *ret_bad_len) {
        _cleanup_free_ unsigned *ids = NULL;
        size_t n = 0, a = 0;
        const char *p = list;

        if (*p == '+') {
                if (GROW(ids, a, n_defaults) < 0)
                        return -ENOMEM;
                memcpy(ids, defaults, n_defaults * sizeof(unsigned));
                n = n_defaults;
                p++;
        }
        for (;;) {
                size_t len = strcspn(p, ",");
                int c = column_lookup(cols, n_cols, p, len);

                if (c < 0) {
                        *ret_bad = p;
                        *ret_bad_len = len;
                        return -EINVAL;
                }
                if (GROW(ids, a, n + 1) < 0)
                        return -ENOMEM;
                ids[n++] = (unsigned) c;
                if (p[len] == '\0')
                        break;
                p += len + 1;
        }
        *ret = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}

void table_columns_help(FILE *out, const char *title, const struct table_column *cols, size_t n) {
        int width = 8;

        for (size_t i = 0; i < n; i++)
                width = MAX(width, (int) strlen(cols[i].name));
        fprintf(out, "\n%s:\n", title);
        for (size_t i = 0; i < n; i++)
                fprintf(out, "  %-*s  %s\n", width, cols[i].name, cols[i].help);
}

char *table_text_cell(const struct table_style *s, const char *text) {
        switch (s->format) {
        case TABLE_FORMAT_RAW:
                return strdup(text ?: "-");
        case TABLE_FORMAT_JSON:
                return strdup(text ?: "");
        default:
                return escape_untrusted(text ?: "-", !s->utf8);
        }
}

char *table_printf_cell(const char *format, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

char *table_u64_cell(uint64_t x) {
        return table_printf_cell("%" PRIu64, x);
}

char *table_fixed_cell(double x, unsigned decimals) {
        char buf[64];

        return strdup(format_fixed(buf, sizeof(buf), x, decimals));
}

char *table_size_cell(const struct table_style *s, uint64_t bytes) {
        char buf[64];

        return s->bytes ? table_u64_cell(bytes) : strdup(format_size_iec(buf, sizeof(buf), bytes));
}

char *table_bool_cell(const struct table_style *s, bool b) {
        if (s->format == TABLE_FORMAT_JSON)
                return strdup(b ? "1" : "0");
        return strdup(b ? "yes" : "no");
}

char *table_list_cell(const struct table_style *s, const char *list, size_t width) {
        size_t len = strlen(list), line = 0;
        char *out, *p;

        if (!s->wrap_lists || s->format != TABLE_FORMAT_TEXT || len <= width)
                return strdup(list);
        /* at most one newline per comma */
        out = malloc(len * 2 + 1);
        if (!out)
                return NULL;
        p = out;
        for (const char *item = list; *item; ) {
                size_t n = strcspn(item, ",");

                if (item[n] == ',')
                        n++;
                if (line > 0 && line + n > width) {
                        *p++ = '\n';
                        line = 0;
                }
                memcpy(p, item, n);
                p += n;
                line += n;
                item += n;
        }
        *p = '\0';
        return out;
}

int table_wrap_lists(const struct table_style *s, struct libscols_column *cl) {
        if (!s->wrap_lists || s->format != TABLE_FORMAT_TEXT)
                return 0;
        if (scols_column_set_flags(cl, scols_column_get_flags(cl) | SCOLS_FL_WRAP) < 0)
                return -ENOMEM;
        return scols_column_set_wrapfunc(cl, scols_wrapnl_chunksize, scols_wrapnl_nextchunk, NULL) < 0 ? -ENOMEM
                                                                                                       : 0;
}

/*
 * smartcols' JSON, with what its strings carry raw (DEL, C1, bidi,
 * separators, invalid UTF-8) escaped; only the members, without the
 * "{\n" and "\n}\n" around them, with members.
 */
static int print_json(FILE *out, struct libscols_table *tb, bool members) {
        _cleanup_free_ char *s = NULL;
        size_t len;

        if (scols_print_table_to_string(tb, &s) < 0 || !s)
                return -ENOMEM;
        len = strlen(s);
        if (!members) {
                escape_write(out, ESCAPE_JSON_TEXT, s, len);
                return 0;
        }
        if (len < 5 || !startswith(s, "{\n") || !streq(s + len - 3, "\n}\n"))
                return -EIO;
        escape_write(out, ESCAPE_JSON_TEXT, s + 2, len - 5);
        return 0;
}

int table_print(FILE *out, const struct table_style *s, const char *heading, struct libscols_table *tb) {
        if (!tb)
                return 0;
        if (s->format == TABLE_FORMAT_JSON)
                return print_json(out, tb, false);
        if (heading)
                fprintf(out, "\n%s%s%s\n", s->color ? "\033[1m" : "", heading, s->color ? "\033[0m" : "");
        if (scols_table_set_stream(tb, out) < 0 || scols_print_table(tb) < 0)
                return -EIO;
        return 0;
}

int table_print_json_members(FILE *out, struct libscols_table *const *tables, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r;

                if (i > 0)
                        fputs(",\n", out);
                r = print_json(out, tables[i], true);
                if (r < 0)
                        return r;
        }
        return 0;
}
