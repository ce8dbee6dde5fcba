/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include "escape.h"
#include "format.h"
#include "status-render.h"
#include "util.h"

/*
 * `memonlined status` for people (text) and scripts (raw): the tables
 * under their titles, the node totals, then the kernel's policy,
 * competing onliners, the running batch and the daemon. Every string from
 * outside (sysfs, udev rules, the progress file, the bus) is escaped.
 */

static const char *const table_titles[_STATUS_TABLE_MAX] = {
        [STATUS_TABLE_NODES] = "Memory blocks per node",
        [STATUS_TABLE_DEVICES] = "Hotplug devices",
        [STATUS_TABLE_DAX] = "dax devices",
        [STATUS_TABLE_CXL] = "CXL regions",
        [STATUS_TABLE_MEMDEVS] = "CXL memdevs",
        [STATUS_TABLE_NVDIMM] = "nvdimm regions",
        [STATUS_TABLE_NAMESPACES] = "nvdimm namespaces",
};

static void print_escaped(FILE *out, const struct table_style *st, const char *text) {
        _cleanup_free_ char *e = escape_untrusted(text, !st->utf8);

        fputs(e ?: "?", out);
}

static const char *size_text(char *buf, size_t size, const struct table_style *st, uint64_t bytes) {
        if (!st->bytes)
                return format_size_iec(buf, size, bytes);
        snprintf(buf, size, "%" PRIu64 " bytes", bytes);
        return buf;
}

static void print_totals(FILE *out, const struct table_style *st, const struct status_machine *m) {
        uint64_t bs = m->block_size;
        char a[64], b[64], c[64], d[64];
        struct block_tally t;

        status_sum_nodes(m, &t);
        fprintf(out, "%" PRIu64 " blocks, %s: %" PRIu64 " online (%s Normal, %s Movable), %" PRIu64 " offline (%s)\n",
                t.blocks, size_text(a, sizeof(a), st, t.blocks * bs), t.online,
                size_text(b, sizeof(b), st, t.kernel * bs), size_text(c, sizeof(c), st, t.movable * bs), t.offline,
                size_text(d, sizeof(d), st, t.offline * bs));
}

static void print_title(FILE *out, const struct table_style *st, bool first, const char *title) {
        fprintf(out, "%s%s%s%s", first ? "" : "\n", st->color ? "\033[1m" : "", title, st->color ? "\033[0m" : "");
}

/* dax devices that exist but could not be read: their blocks are in no row. */
static void print_dax_unreadable(FILE *out, const struct table_style *st, const struct pmem_devices *d) {
        if (d->n_unreadable == 0)
                return;
        fprintf(out, "%zu dax device%s could not be read (", d->n_unreadable, d->n_unreadable == 1 ? "" : "s");
        print_escaped(out, st, d->unreadable_name);
        fprintf(out, ": %s)\n", strerror(-d->unreadable_error));
}

/* Raw: the tables only, an empty line between two, none for a table with no rows. */
static int print_raw(FILE *out, const struct status_view *v) {
        bool first = true;
        int r;

        for (unsigned t = 0; t < _STATUS_TABLE_MAX; t++) {
                _cleanup_table_ struct libscols_table *tb = NULL;

                if (!status_view_wants(v, t))
                        continue;
                r = status_table_build(v, t, &tb);
                if (r < 0)
                        return r;
                if (!tb)
                        continue;
                if (!first)
                        fputc('\n', out);
                first = false;
                r = table_print(out, &v->style, NULL, tb);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* One titled table. Device tables with nothing to list are left out unless --tables names them. */
static int print_table(FILE *out, const struct status_view *v, enum status_table t, bool *first) {
        _cleanup_table_ struct libscols_table *tb = NULL;
        int error = status_table_error(v->m, t), r;
        char size[64];

        r = status_table_build(v, t, &tb);
        if (r < 0)
                return r;
        if (!tb && !error && !v->only_tables && t != STATUS_TABLE_NODES)
                return 0;
        print_title(out, &v->style, *first, table_titles[t]);
        *first = false;
        if (t == STATUS_TABLE_NODES)
                fprintf(out, " (block size %s)", size_text(size, sizeof(size), &v->style, v->m->block_size));
        if (error) {
                fprintf(out, ": unknown (%s)\n", strerror(-error));
                return 0;
        }
        fputs(tb ? ":\n" : ": none\n", out);
        r = table_print(out, &v->style, NULL, tb);
        if (r < 0)
                return r;
        if (t == STATUS_TABLE_NODES && tb && !v->style.noheadings)
                print_totals(out, &v->style, v->m);
        if (t == STATUS_TABLE_DAX)
                print_dax_unreadable(out, &v->style, &v->m->dax);
        if (t == STATUS_TABLE_CXL && v->m->cxl.n_unreadable > 0)
                fprintf(out, "%zu CXL region%s could not be read (%s)\n", v->m->cxl.n_unreadable,
                        v->m->cxl.n_unreadable == 1 ? "" : "s", strerror(-v->m->cxl.unreadable_error));
        if (t == STATUS_TABLE_MEMDEVS && v->m->memdevs.n_unreadable > 0)
                fprintf(out, "%zu CXL memdev%s could not be read (%s)\n", v->m->memdevs.n_unreadable,
                        v->m->memdevs.n_unreadable == 1 ? "" : "s", strerror(-v->m->memdevs.unreadable_error));
        /* the regions and namespaces are read in one walk: say it once, under the namespaces */
        if (t == STATUS_TABLE_NAMESPACES && v->m->nd.n_unreadable > 0)
                fprintf(out, "%zu nvdimm region%s or namespace%s could not be read (%s)\n", v->m->nd.n_unreadable,
                        v->m->nd.n_unreadable == 1 ? "" : "s", v->m->nd.n_unreadable == 1 ? "" : "s",
                        strerror(-v->m->nd.unreadable_error));
        return 0;
}

static void print_kernel(FILE *out, const struct table_style *st, const struct status_sections *s) {
        print_title(out, st, false, "Kernel policy:\n");
        if (s->kernel_error < 0) {
                fprintf(out, "  unknown (%s)\n", strerror(-s->kernel_error));
                return;
        }
        fputs("  auto_online_blocks  ", out);
        print_escaped(out, st, s->auto_online ?: "(unknown)");
        fputs("\n  online_policy       ", out);
        print_escaped(out, st, s->online_policy ?: "(unknown)");
        fputs("\n  auto_movable_ratio  ", out);
        print_escaped(out, st, s->auto_movable_ratio ?: "(unknown)");
        fputc('\n', out);
}

static void print_conflicts(FILE *out, const struct table_style *st, const struct status_sections *s) {
        print_title(out, st, false, "Competing onliners:\n");
        if (s->conflicts.n == 0)
                fputs(s->conflicts_error < 0 ? "" : "  none found\n", out);
        for (size_t i = 0; i < s->conflicts.n; i++) {
                const struct conflict *c = &s->conflicts.items[i];

                fputs("  ", out);
                print_escaped(out, st, c->what ?: "?");
                if (c->where) {
                        fputs(" (", out);
                        print_escaped(out, st, c->where);
                        fputc(')', out);
                }
                fputc('\n', out);
                if (c->fix) {
                        fputs("    fix: ", out);
                        print_escaped(out, st, c->fix);
                        fputc('\n', out);
                }
        }
        if (s->conflicts_error < 0)
                fprintf(out, "  check incomplete (%s)\n", strerror(-s->conflicts_error));
}

static void print_batch(FILE *out, const struct table_style *st, const struct status_sections *s) {
        const struct status_batch *b = &s->batch;
        char elapsed[32], age[32];

        fputs("running batch: ", out);
        if (s->batch_result < 0) {
                fputs("unknown (", out);
                print_escaped(out, st, s->runtime_dir);
                fprintf(out, "/progress: %s)\n", strerror(-s->batch_result));
                return;
        }
        if (s->batch_result == 0) {
                fputs("none\n", out);
                return;
        }
        print_escaped(out, st, b->status ?: "");
        fputs(" (trigger ", out);
        print_escaped(out, st, b->trigger ?: "unknown");
        fprintf(out, ", running %s s", format_fixed(elapsed, sizeof(elapsed), (double) b->elapsed_usec / USEC_PER_SEC,
                                                      1));
        if (b->age_usec != UINT64_MAX)
                fprintf(out, ", updated %s s ago",
                        format_fixed(age, sizeof(age), (double) b->age_usec / USEC_PER_SEC, 1));
        fputs(")\n", out);
}

static void print_daemon(FILE *out, const struct table_style *st, const struct status_daemon *d) {
        fputs("daemon: ", out);
        if (!d->known) {
                fputs("unknown (", out);
                print_escaped(out, st, d->error ?: "not queried");
                fputs(")\n", out);
                return;
        }
        print_escaped(out, st, d->active_state);
        if (d->status_text && *d->status_text) {
                fputs(" - ", out);
                print_escaped(out, st, d->status_text);
        }
        fputc('\n', out);
}

int status_print_text(FILE *out, const struct status_view *v, const struct status_sections *s) {
        const struct table_style *st = &v->style;
        bool first = true;
        int r;

        if (st->format == TABLE_FORMAT_RAW)
                return print_raw(out, v);
        for (unsigned t = 0; t < _STATUS_TABLE_MAX; t++)
                if (status_view_wants(v, t)) {
                        r = print_table(out, v, t, &first);
                        if (r < 0)
                                return r;
                }
        if (v->only_tables)
                return 0;
        print_kernel(out, st, s);
        print_conflicts(out, st, s);
        if (s->policy_warning) {
                print_title(out, st, false, "Policy: ");
                fputs(s->policy_warning, out);          /* policy_load() escaped what came from the file */
                fputc('\n', out);
        }
        fputc('\n', out);
        print_batch(out, st, s);
        print_daemon(out, st, &s->daemon);
        return 0;
}
