/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <strings.h>
#include "format.h"
#include "journal-report-render.h"
#include "table.h"
#include "util.h"

/*
 * Tables through libsmartcols (util/table.h), as lsmem and lsblk print
 * them: aligned for people, -r raw, -J JSON, -n without headings. Every
 * string from the journal goes through text_cell(), which makes it safe
 * for the format.
 */

#define BAR_WIDTH 30

/* The main tables' columns: -o names them. */
enum {
        BC_TIME, BC_HOST, BC_MACHINE, BC_BOOT, BC_PID, BC_BATCH, BC_TRIGGER, BC_BLOCKS, BC_SIZE, BC_WALL,
        BC_RATE, BC_P50, BC_P99, BC_MAX, BC_FAILED, BC_SKIPPED, BC_NODES, BC_CPU, BC_FIRST, BC_LATENCY, _BC_MAX,
};

static const struct table_column batch_columns[_BC_MAX] = {
        [BC_TIME]    = { "TIME",    19, 0,               COL_STRING, "when the batch ended, local time (UTC in JSON)", NULL },
        [BC_HOST]    = { "HOST",     8, SCOLS_FL_TRUNC,  COL_STRING, "host name (machines that share one: NAME/MACHINE)", NULL },
        [BC_MACHINE] = { "MACHINE", 32, 0,               COL_STRING, "machine ID", NULL },
        [BC_BOOT]    = { "BOOT",    32, 0,               COL_STRING, "boot ID", NULL },
        [BC_PID]     = { "PID",      5, SCOLS_FL_RIGHT,  COL_NUMBER, "daemon process ID", NULL },
        [BC_BATCH]   = { "BATCH",    5, SCOLS_FL_RIGHT,  COL_NUMBER, "batch number (restarts with the daemon)", NULL },
        [BC_TRIGGER] = { "TRIGGER",  7, SCOLS_FL_TRUNC,  COL_STRING, "dax device(s), or udev, dax, coldplug, rescan, reload, retry, once, stop", NULL },
        [BC_BLOCKS]  = { "BLOCKS",   6, SCOLS_FL_RIGHT,  COL_NUMBER, "memory blocks onlined", NULL },
        [BC_SIZE]    = { "SIZE",     5, SCOLS_FL_RIGHT,  COL_SIZE,   "memory onlined", NULL },
        [BC_WALL]    = { "WALL",     6, SCOLS_FL_RIGHT,  COL_NUMBER, "wall time, seconds", NULL },
        [BC_RATE]    = { "RATE",     5, SCOLS_FL_RIGHT,  COL_NUMBER, "GiB onlined per second", NULL },
        [BC_P50]     = { "P50",      6, SCOLS_FL_RIGHT,  COL_NUMBER, "median time to online a block, microseconds", NULL },
        [BC_P99]     = { "P99",      6, SCOLS_FL_RIGHT,  COL_NUMBER, "99th percentile time per block, microseconds", NULL },
        [BC_MAX]     = { "MAX",      6, SCOLS_FL_RIGHT,  COL_NUMBER, "slowest block, microseconds", NULL },
        [BC_FAILED]  = { "FAILED",   6, SCOLS_FL_RIGHT,  COL_NUMBER, "blocks that failed", NULL },
        [BC_SKIPPED] = { "SKIPPED",  7, SCOLS_FL_RIGHT,  COL_NUMBER, "blocks the policy skipped", NULL },
        [BC_NODES]   = { "NODES",    5, SCOLS_FL_RIGHT,  COL_STRING, "node groups in the batch", NULL },
        [BC_CPU]     = { "CPU",      6, SCOLS_FL_RIGHT,  COL_NUMBER, "CPU time of the writers, microseconds", NULL },
        [BC_FIRST]   = { "FIRST",    6, SCOLS_FL_RIGHT,  COL_NUMBER, "first event to first block online, seconds (empty: not recorded)", NULL },
        [BC_LATENCY] = { "LATENCY",  7, SCOLS_FL_RIGHT,  COL_NUMBER, "first event to last block online, seconds (empty: not recorded)", NULL },
};

enum {
        FC_TIME, FC_HOST, FC_MACHINE, FC_BATCH, FC_BLOCK, FC_NODE, FC_ERRNO, FC_ERRNUM, FC_ATTEMPTS, FC_MESSAGE,
        _FC_MAX,
};

static const struct table_column failure_columns[_FC_MAX] = {
        [FC_TIME]     = { "TIME",     19, 0,              COL_STRING, "when the block failed, local time (UTC in JSON)", NULL },
        [FC_HOST]     = { "HOST",      8, SCOLS_FL_TRUNC, COL_STRING, "host name", NULL },
        [FC_MACHINE]  = { "MACHINE",  32, 0,              COL_STRING, "machine ID", NULL },
        [FC_BATCH]    = { "BATCH",     5, SCOLS_FL_RIGHT, COL_NUMBER, "batch number", NULL },
        [FC_BLOCK]    = { "BLOCK",    11, 0,              COL_STRING, "memory block", NULL },
        [FC_NODE]     = { "NODE",      4, SCOLS_FL_RIGHT, COL_NUMBER, "NUMA node (-1: unknown)", NULL },
        [FC_ERRNO]    = { "ERRNO",     6, 0,              COL_STRING, "error name", NULL },
        [FC_ERRNUM]   = { "ERRNUM",    3, SCOLS_FL_RIGHT, COL_NUMBER, "error number", NULL },
        [FC_ATTEMPTS] = { "ATTEMPTS",  8, SCOLS_FL_RIGHT, COL_NUMBER, "writes tried", NULL },
        [FC_MESSAGE]  = { "MESSAGE",  20, SCOLS_FL_TRUNC, COL_STRING, "the record's message", NULL },
};

static const unsigned batch_defaults[] = { BC_TIME, BC_HOST, BC_TRIGGER, BC_BLOCKS, BC_SIZE, BC_WALL, BC_RATE, BC_P99,
                                           BC_FAILED };
static const unsigned failure_defaults[] = { FC_TIME, FC_HOST, FC_BLOCK, FC_NODE, FC_ERRNO, FC_ATTEMPTS, FC_MESSAGE };

/* ---- columns from -o ------------------------------------------------------- */

int jr_columns_parse(bool failures, const char *list, unsigned **ret, size_t *ret_n, const char **ret_bad,
                     size_t *ret_bad_len) {
        if (failures)
                return table_columns_parse(failure_columns, _FC_MAX, failure_defaults, ELEMENTSOF(failure_defaults),
                                           list, ret, ret_n, ret_bad, ret_bad_len);
        return table_columns_parse(batch_columns, _BC_MAX, batch_defaults, ELEMENTSOF(batch_defaults), list, ret,
                                   ret_n, ret_bad, ret_bad_len);
}

void jr_columns_help(FILE *out) {
        table_columns_help(out, "Columns of the batch table (-o)", batch_columns, _BC_MAX);
        table_columns_help(out, "Columns of the failure list (--failures -o)", failure_columns, _FC_MAX);
}

/* ---- cells -------------------------------------------------------------------- */

static struct table_style style_of(const struct jr_view *v) {
        return (struct table_style) {
                .format = v->format == JR_FORMAT_JSON ? TABLE_FORMAT_JSON :
                          v->format == JR_FORMAT_RAW ? TABLE_FORMAT_RAW : TABLE_FORMAT_TEXT,
                .noheadings = v->noheadings, .bytes = v->bytes, .color = v->color, .utf8 = v->utf8,
        };
}

/* Journal text in the form the output needs (table_text_cell()). NULL on ENOMEM. */
static char *text_cell(const struct jr_view *v, const char *s) {
        struct table_style st = style_of(v);

        return table_text_cell(&st, s);
}

static char *size_cell(const struct jr_view *v, uint64_t bytes) {
        struct table_style st = style_of(v);

        return table_size_cell(&st, bytes);
}

/* Local time for people; in JSON ISO 8601 in UTC, as --json-lines has it: a time without its zone is no time. */
static char *time_cell(const struct jr_view *v, uint64_t usec) {
        char buf[64];

        if (v->format == JR_FORMAT_JSON)
                format_time_iso_utc(buf, sizeof(buf), usec);
        else
                format_time_local(buf, sizeof(buf), usec);
        return strdup(buf);
}

static char *id_cell(const struct jr_view *v, bool have, sd_id128_t id) {
        char s[SD_ID128_STRING_MAX];

        return have ? strdup(sd_id128_to_string(id, s)) : text_cell(v, NULL);
}

static char *host_cell(const struct jr_view *v, size_t host) {
        return text_cell(v, v->records->hosts[host].label);
}

static char *machine_cell(const struct jr_view *v, size_t host) {
        const struct jr_host *h = &v->records->hosts[host];

        return id_cell(v, h->have_machine, h->machine);
}

/* ---- tables ------------------------------------------------------------------- */

static struct libscols_table *table_new_view(const struct jr_view *v, const char *name) {
        struct table_style st = style_of(v);

        return table_new(&st, name);
}

static int table_columns(const struct jr_view *v, struct libscols_table *tb, const struct table_column *cols,
                         const unsigned *ids, size_t n) {
        struct table_style st = style_of(v);

        return table_add_columns(&st, tb, cols, ids, n);
}

static void color_cell(const struct jr_view *v, struct libscols_line *ln, const unsigned *ids, size_t n, unsigned col,
                       const char *color) {
        struct table_style st = style_of(v);

        table_color_cell(&st, ln, ids, n, col, color);
}

/* The visible batches are from more than one host: the text tables show a host column. */
static bool several_hosts(const struct jr_view *v) {
        for (size_t i = 1; i < v->n_vis; i++)
                if (v->records->batches[v->vis[i]].host != v->records->batches[v->vis[0]].host)
                        return true;
        return false;
}

/* The columns asked for, or the defaults, which drop HOST when the text shows one host only. */
static unsigned *main_columns(const struct jr_view *v, const unsigned *defaults, size_t n_defaults, unsigned host_col,
                              bool one_host, size_t *ret_n) {
        unsigned *ids = calloc(MAX(v->n_columns, n_defaults) ?: 1, sizeof(unsigned));
        size_t n = 0;

        if (!ids)
                return NULL;
        if (v->columns) {
                memcpy(ids, v->columns, v->n_columns * sizeof(unsigned));
                *ret_n = v->n_columns;
                return ids;
        }
        for (size_t i = 0; i < n_defaults; i++)
                if (!(defaults[i] == host_col && one_host))
                        ids[n++] = defaults[i];
        *ret_n = n;
        return ids;
}

/* ---- the batch table ------------------------------------------------------------- */

static char *seconds_cell(uint64_t usec) {
        return table_fixed_cell((double) usec / USEC_PER_SEC, 3);
}

struct batch_row {
        const struct jr_view *v;
        const struct jr_batch *b;
        struct jr_counters k;
        uint64_t failed;                /* counted, or failure records seen, whichever is more */
};

static char *batch_cell(const void *row, unsigned col) {
        const struct batch_row *r = row;
        const struct jr_view *v = r->v;
        const struct jr_batch *b = r->b;

        switch (col) {
        case BC_TIME:    return time_cell(v, b->realtime);
        case BC_HOST:    return host_cell(v, b->host);
        case BC_MACHINE: return machine_cell(v, b->host);
        case BC_BOOT:    return id_cell(v, !sd_id128_is_null(b->boot), b->boot);
        case BC_PID:     return table_u64_cell(b->pid);
        case BC_BATCH:   return table_u64_cell(b->seq);
        case BC_TRIGGER: return text_cell(v, jr_batch_trigger(v->records, b));
        case BC_BLOCKS:  return table_u64_cell(r->k.blocks);
        case BC_SIZE:    return size_cell(v, r->k.bytes);
        case BC_WALL:    return seconds_cell(r->k.duration_usec);
        case BC_RATE:    return table_fixed_cell(jr_counters_gibps(&r->k), 2);
        case BC_P50:     return table_u64_cell(r->k.p50_usec);
        case BC_P99:     return table_u64_cell(r->k.p99_usec);
        case BC_MAX:     return table_u64_cell(r->k.max_usec);
        case BC_FAILED:  return table_u64_cell(r->failed);
        case BC_SKIPPED: return table_u64_cell(r->k.skipped);
        case BC_NODES:   return text_cell(v, b->node_list);
        case BC_CPU:     return table_u64_cell(r->k.cpu_usec);
        case BC_FIRST:   return r->k.have_first_latency ? seconds_cell(r->k.first_latency_usec) : text_cell(v, NULL);
        case BC_LATENCY: return r->k.have_latency ? seconds_cell(r->k.latency_usec) : text_cell(v, NULL);
        default:         return NULL;
        }
}

struct totals {
        uint64_t blocks, bytes, failed;
};

static struct libscols_table *batch_table(const struct jr_view *v, struct totals *ret_totals) {
        _cleanup_table_ struct libscols_table *tb = table_new_view(v, "batches");
        _cleanup_free_ unsigned *ids = NULL;
        struct totals t = {};
        size_t n;

        ids = main_columns(v, batch_defaults, ELEMENTSOF(batch_defaults), BC_HOST,
                           v->format != JR_FORMAT_JSON && !several_hosts(v), &n);
        if (!tb || !ids || table_columns(v, tb, batch_columns, ids, n) < 0)
                return NULL;
        for (size_t i = 0; i < v->n_vis; i++) {
                struct batch_row row = { .v = v, .b = &v->records->batches[v->vis[i]] };
                struct libscols_line *ln;

                jr_batch_totals(row.b, &row.k);
                row.failed = MAX(row.k.failed, (uint64_t) row.b->n_failures);
                ln = table_add_row(tb, ids, n, batch_cell, &row);
                if (!ln)
                        return NULL;
                if (row.failed > 0)
                        color_cell(v, ln, ids, n, BC_FAILED, "red");
                t.blocks += row.k.blocks;
                t.bytes += row.k.bytes;
                t.failed += row.failed;
        }
        *ret_totals = t;
        return TAKE_PTR(tb);
}

/* ---- the failure list ------------------------------------------------------------- */

struct failure_row {
        const struct jr_view *v;
        const struct jr_failure *f;
};

static char *failure_cell(const void *row, unsigned col) {
        const struct failure_row *r = row;
        const struct jr_view *v = r->v;
        const struct jr_failure *f = r->f;

        switch (col) {
        case FC_TIME:     return time_cell(v, f->realtime);
        case FC_HOST:     return host_cell(v, f->host);
        case FC_MACHINE:  return machine_cell(v, f->host);
        case FC_BATCH:    return f->batch == JR_NONE ? text_cell(v, NULL) : table_u64_cell(v->records->batches[f->batch].seq);
        case FC_BLOCK:    return text_cell(v, f->block);
        case FC_NODE:     return table_printf_cell("%d", f->node);
        case FC_ERRNO:    return text_cell(v, f->errno_name);
        case FC_ERRNUM:   return table_printf_cell("%d", f->err);
        case FC_ATTEMPTS: return table_u64_cell(f->attempts);
        case FC_MESSAGE:  return text_cell(v, f->message);
        default:          return NULL;
        }
}

static struct libscols_table *failure_table(const struct jr_view *v, size_t *ret_n) {
        _cleanup_table_ struct libscols_table *tb = table_new_view(v, "failures");
        const struct jr_records *r = v->records;
        _cleanup_free_ unsigned *ids = NULL;
        size_t n, count = 0;

        ids = main_columns(v, failure_defaults, ELEMENTSOF(failure_defaults), FC_HOST, false, &n);
        if (!tb || !ids || table_columns(v, tb, failure_columns, ids, n) < 0)
                return NULL;
        for (size_t i = 0; i < r->n_failures; i++) {
                struct failure_row row = { .v = v, .f = &r->failures[i] };
                struct libscols_line *ln;

                if (!jr_failure_visible(r, v->filter, row.f))
                        continue;
                ln = table_add_row(tb, ids, n, failure_cell, &row);
                if (!ln)
                        return NULL;
                color_cell(v, ln, ids, n, FC_ERRNO, "red");
                count++;
        }
        *ret_n = count;
        return TAKE_PTR(tb);
}

/* ---- summaries --------------------------------------------------------------------- */

enum { NC_HOST, NC_NODE, NC_BATCHES, NC_BLOCKS, NC_SIZE, NC_WALL, NC_RATE, NC_BAR, _NC_MAX };

static const struct table_column node_columns[_NC_MAX] = {
        [NC_HOST]    = { "HOST",     8, SCOLS_FL_TRUNC, COL_STRING, NULL, NULL },
        [NC_NODE]    = { "NODE",     4, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [NC_BATCHES] = { "BATCHES",  7, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [NC_BLOCKS]  = { "BLOCKS",   6, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [NC_SIZE]    = { "SIZE",     5, SCOLS_FL_RIGHT, COL_SIZE, NULL, NULL },
        [NC_WALL]    = { "WALL",     6, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [NC_RATE]    = { "RATE",     5, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [NC_BAR]     = { "",   BAR_WIDTH, 0,            COL_STRING, NULL, NULL },
};

struct node_row {
        const struct jr_view *v;
        const struct jr_node_sum *s;
        double max_gibps;
};

/* GiB/s as a bar: whole blocks and eighths in UTF-8, '#' otherwise. */
static char *bar_cell(const struct jr_view *v, double x, double max) {
        static const char *const eighths[] = { "", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589" };
        unsigned units = max > 0 && x > 0 ? (unsigned) (x / max * BAR_WIDTH * 8 + 0.5) : 0;
        char *bar = malloc(BAR_WIDTH * 3 + 4), *p = bar;

        if (!bar)
                return NULL;
        if (v->utf8) {
                for (unsigned i = 0; i < units / 8; i++)
                        p = stpcpy(p, "\u2588");
                p = stpcpy(p, eighths[units % 8]);
        } else
                for (unsigned i = 0; i < (units + 4) / 8; i++)
                        *p++ = '#';
        *p = '\0';
        return bar;
}

static char *node_cell(const void *row, unsigned col) {
        const struct node_row *r = row;
        const struct jr_node_sum *s = r->s;

        switch (col) {
        case NC_HOST:    return host_cell(r->v, s->host);
        case NC_NODE:    return table_printf_cell("%d", s->node);
        case NC_BATCHES: return table_u64_cell(s->batches);
        case NC_BLOCKS:  return table_u64_cell(s->blocks);
        case NC_SIZE:    return size_cell(r->v, s->bytes);
        case NC_WALL:    return table_fixed_cell((double) s->usec / USEC_PER_SEC, 3);
        case NC_RATE:    return table_fixed_cell(jr_node_sum_gibps(s), 2);
        case NC_BAR:     return bar_cell(r->v, jr_node_sum_gibps(s), r->max_gibps);
        default:         return NULL;
        }
}

/* Per host and node: batches, blocks, size, time and GiB/s, with a bar in text. NULL table: no node records. */
static int node_table(const struct jr_view *v, bool show_host, struct libscols_table **ret) {
        _cleanup_table_ struct libscols_table *tb = table_new_view(v, "nodes");
        _cleanup_free_ struct jr_node_sum *sums = NULL;
        unsigned ids[_NC_MAX];
        struct node_row row = { .v = v };
        size_t n_sums, n = 0;

        if (!tb || jr_node_sums(v->records, v->filter, v->vis, v->n_vis, &sums, &n_sums) < 0)
                return -ENOMEM;
        for (unsigned c = 0; c < _NC_MAX; c++)
                if ((c != NC_HOST || show_host) && (c != NC_BAR || v->format == JR_FORMAT_TEXT))
                        ids[n++] = c;
        if (table_columns(v, tb, node_columns, ids, n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n_sums; i++)
                row.max_gibps = MAX(row.max_gibps, jr_node_sum_gibps(&sums[i]));
        for (size_t i = 0; i < n_sums; i++) {
                struct libscols_line *ln;

                row.s = &sums[i];
                ln = table_add_row(tb, ids, n, node_cell, &row);
                if (!ln)
                        return -ENOMEM;
                color_cell(v, ln, ids, n, NC_BAR, "green");
        }
        *ret = n_sums > 0 || v->format == JR_FORMAT_JSON ? TAKE_PTR(tb) : NULL;
        return 0;
}

enum { HC_HOST, HC_MACHINE, HC_BATCHES, HC_BLOCKS, HC_SIZE, HC_MEDIAN, HC_SLOWEST, _HC_MAX };

static const struct table_column host_columns[_HC_MAX] = {
        [HC_HOST]    = { "HOST",     8, SCOLS_FL_TRUNC, COL_STRING, NULL, NULL },
        [HC_MACHINE] = { "MACHINE", 32, 0,              COL_STRING, NULL, NULL },
        [HC_BATCHES] = { "BATCHES",  7, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [HC_BLOCKS]  = { "BLOCKS",   6, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [HC_SIZE]    = { "SIZE",     5, SCOLS_FL_RIGHT, COL_SIZE, NULL, NULL },
        [HC_MEDIAN]  = { "MEDIAN-RATE", 5, SCOLS_FL_RIGHT, COL_STRING, NULL, NULL },
        [HC_SLOWEST] = { "SLOWEST",  7, 0,              COL_STRING, NULL, NULL },
};

struct host_row {
        const struct jr_view *v;
        size_t host;
        const struct jr_host_sum *s;
        bool slowest;
};

static char *host_sum_cell(const void *row, unsigned col) {
        const struct host_row *r = row;
        const struct jr_host_sum *s = r->s;
        bool json = r->v->format == JR_FORMAT_JSON;

        switch (col) {
        case HC_HOST:    return host_cell(r->v, r->host);
        case HC_MACHINE: return machine_cell(r->v, r->host);
        case HC_BATCHES: return table_u64_cell(s->batches);
        case HC_BLOCKS:  return table_u64_cell(s->blocks);
        case HC_SIZE:    return size_cell(r->v, s->bytes);
        case HC_MEDIAN:  return s->median_gibps < 0 ? strdup(json ? "" : "-") : table_fixed_cell(s->median_gibps, 2);
        case HC_SLOWEST: return strdup(r->slowest ? (json ? "1" : "slowest") : (json ? "0" : ""));
        default:         return NULL;
        }
}

/* Per host: batches, blocks, size, the median GiB/s of a batch, and which host is the slowest. */
static int host_table(const struct jr_view *v, struct libscols_table **ret) {
        _cleanup_table_ struct libscols_table *tb = table_new_view(v, "hosts");
        _cleanup_free_ struct jr_host_sum *sums = NULL;
        bool json = v->format == JR_FORMAT_JSON;
        unsigned ids[_HC_MAX];
        size_t slowest, n = 0;

        if (!tb || jr_host_sums(v->records, v->vis, v->n_vis, &sums, &slowest) < 0)
                return -ENOMEM;
        for (unsigned c = 0; c < _HC_MAX; c++)
                if (c != HC_MACHINE || json)
                        ids[n++] = c;
        if (table_columns(v, tb, host_columns, ids, n) < 0)
                return -ENOMEM;
        if (json) {
                /* a rate that is unknown is null, not a string */
                scols_column_set_json_type(scols_table_get_column(tb, n - 2), SCOLS_JSON_NUMBER);
                scols_column_set_json_type(scols_table_get_column(tb, n - 1), SCOLS_JSON_BOOLEAN);
        } else
                scols_column_set_name(scols_table_get_column(tb, n - 1), "");
        for (size_t h = 0; h < v->records->n_hosts; h++) {
                struct host_row row = { .v = v, .host = h, .s = &sums[h], .slowest = h == slowest };
                struct libscols_line *ln;

                if (sums[h].batches == 0)
                        continue;
                ln = table_add_row(tb, ids, n, host_sum_cell, &row);
                if (!ln)
                        return -ENOMEM;
                if (row.slowest)
                        color_cell(v, ln, ids, n, HC_SLOWEST, "yellow");
        }
        *ret = TAKE_PTR(tb);
        return 0;
}

enum { DC_TIME, DC_HOST, DC_DEVICE, DC_NAMESPACE, DC_REGION, DC_BLOCKS, DC_SIZE, DC_BIND, DC_ONLINE, DC_TOTAL, _DC_MAX };

static const struct table_column device_columns[_DC_MAX] = {
        [DC_TIME]      = { "TIME",     19, 0,              COL_STRING, NULL, NULL },
        [DC_HOST]      = { "HOST",      8, SCOLS_FL_TRUNC, COL_STRING, NULL, NULL },
        [DC_DEVICE]    = { "DEVICE",    7, 0,              COL_STRING, NULL, NULL },
        [DC_NAMESPACE] = { "NAMESPACE", 9, 0,              COL_STRING, NULL, NULL },
        [DC_REGION]    = { "REGION",    7, 0,              COL_STRING, NULL, NULL },
        [DC_BLOCKS]    = { "BLOCKS",    6, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [DC_SIZE]      = { "SIZE",      5, SCOLS_FL_RIGHT, COL_SIZE, NULL, NULL },
        [DC_BIND]      = { "BIND",      6, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [DC_ONLINE]    = { "ONLINE",    6, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
        [DC_TOTAL]     = { "TOTAL",     6, SCOLS_FL_RIGHT, COL_NUMBER, NULL, NULL },
};

struct device_row {
        const struct jr_view *v;
        const struct jr_device *d;
};

static char *device_cell(const void *row, unsigned col) {
        const struct device_row *r = row;
        const struct jr_device *d = r->d;

        switch (col) {
        case DC_TIME:      return time_cell(r->v, d->realtime);
        case DC_HOST:      return host_cell(r->v, d->host);
        case DC_DEVICE:    return text_cell(r->v, d->device);
        case DC_NAMESPACE: return text_cell(r->v, d->namespace_name);
        case DC_REGION:    return text_cell(r->v, d->region);
        case DC_BLOCKS:    return table_u64_cell(d->blocks);
        case DC_SIZE:      return size_cell(r->v, d->bytes);
        case DC_BIND:      return table_fixed_cell((double) d->bind_usec / USEC_PER_SEC, 3);
        case DC_ONLINE:    return table_fixed_cell((double) d->online_usec / USEC_PER_SEC, 3);
        case DC_TOTAL:     return table_fixed_cell((double) d->total_usec / USEC_PER_SEC, 3);
        default:           return NULL;
        }
}

/* The dax conversions: binding to kmem, onlining, in total (seconds). NULL table in text: none. */
static int device_table(const struct jr_view *v, bool show_host, struct libscols_table **ret) {
        _cleanup_table_ struct libscols_table *tb = table_new_view(v, "conversions");
        const struct jr_records *r = v->records;
        unsigned ids[_DC_MAX];
        size_t n = 0, rows = 0;

        for (unsigned c = 0; c < _DC_MAX; c++)
                if (c != DC_HOST || show_host)
                        ids[n++] = c;
        if (!tb || table_columns(v, tb, device_columns, ids, n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < r->n_devices; i++) {
                struct device_row row = { .v = v, .d = &r->devices[i] };

                if (!jr_device_visible(r, v->filter, row.d))
                        continue;
                if (!table_add_row(tb, ids, n, device_cell, &row))
                        return -ENOMEM;
                rows++;
        }
        *ret = rows > 0 || v->format == JR_FORMAT_JSON ? TAKE_PTR(tb) : NULL;
        return 0;
}

/* ---- output ---------------------------------------------------------------------- */

static int print_text(FILE *out, const struct jr_view *v, const char *heading, struct libscols_table *tb) {
        struct table_style st = style_of(v);

        return table_print(out, &st, heading, tb);
}

/* One JSON document of every table. */
static int print_json(FILE *out, struct libscols_table *const *tables, size_t n) {
        int r;

        fputs("{\n", out);
        r = table_print_json_members(out, tables, n);
        if (r < 0)
                return r;
        fputs("\n}\n", out);
        return 0;
}

static void print_totals(FILE *out, const struct jr_view *v, const struct totals *t) {
        char size[64];

        fprintf(out, "%zu batches, %" PRIu64 " blocks, %s, %" PRIu64 " failed\n", v->n_vis, t->blocks,
                v->bytes ? (snprintf(size, sizeof(size), "%" PRIu64 " bytes", t->bytes), size)
                         : format_size_iec(size, sizeof(size), t->bytes),
                t->failed);
}

static void unref_all(struct libscols_table **tables, size_t n) {
        for (size_t i = 0; i < n; i++)
                scols_unref_table(tables[i]);
}

int jr_print_tables(FILE *out, const struct jr_view *v) {
        static const char *const headings[] = { NULL, "Per node:", "Per host:", "Device conversions:" };
        struct libscols_table *tables[4] = {};
        bool json = v->format == JR_FORMAT_JSON, show_host = json || several_hosts(v);
        bool summaries = json || (v->format == JR_FORMAT_TEXT && !v->noheadings);
        struct totals t;
        int r = 0;

        tables[0] = batch_table(v, &t);
        if (!tables[0])
                r = -ENOMEM;
        if (r >= 0 && summaries)
                r = node_table(v, show_host, &tables[1]);
        if (r >= 0 && summaries && show_host)
                r = host_table(v, &tables[2]);
        if (r >= 0 && summaries)
                r = device_table(v, show_host, &tables[3]);
        if (r >= 0 && json)
                r = print_json(out, tables, 4);
        else if (r >= 0) {
                r = print_text(out, v, NULL, tables[0]);
                if (r >= 0 && summaries)
                        print_totals(out, v, &t);
                for (size_t i = 1; i < 4 && r >= 0; i++)
                        r = print_text(out, v, headings[i], tables[i]);
        }
        unref_all(tables, 4);
        return r;
}

ssize_t jr_print_failures(FILE *out, const struct jr_view *v) {
        _cleanup_table_ struct libscols_table *tb = NULL;
        size_t n = 0;
        int r;

        tb = failure_table(v, &n);
        if (!tb)
                return -ENOMEM;
        if (v->format == JR_FORMAT_JSON)
                r = print_json(out, &tb, 1);
        else
                r = n > 0 ? print_text(out, v, NULL, tb) : 0;
        return r < 0 ? r : (ssize_t) n;
}
