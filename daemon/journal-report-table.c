/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include "escape.h"
#include "format.h"
#include "journal-report-render.h"
#include "util.h"

#define BAR_WIDTH 30

#define ANSI_RED    "\033[31m"
#define ANSI_YELLOW "\033[33m"
#define ANSI_GREEN  "\033[32m"
#define ANSI_BOLD   "\033[1m"
#define ANSI_RESET  "\033[0m"

static const char *on(const struct jr_view *v, const char *code) {
        return v->color ? code : "";
}

static const char *off(const struct jr_view *v) {
        return v->color ? ANSI_RESET : "";
}

/* Journal text made safe for the terminal, or fallback for a missing field; NULL on ENOMEM. */
static char *text(const struct jr_view *v, const char *s, const char *fallback) {
        return escape_untrusted(s ?: fallback, !v->utf8);
}

/* Column width of journal text: its length once escaped. */
static size_t text_width(const struct jr_view *v, const char *s) {
        _cleanup_free_ char *t = text(v, s, "-");

        return t ? strlen(t) : 0;
}

static void print_bar(FILE *out, const struct jr_view *v, double x, double max) {
        /* U+2588 and the eighth blocks U+258F..U+2589 for sub-character resolution. */
        static const char *const eighths[] = { "", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589" };
        unsigned units;

        if (max <= 0 || x <= 0)
                return;
        units = (unsigned) (x / max * BAR_WIDTH * 8 + 0.5);
        fputs(on(v, ANSI_GREEN), out);
        if (v->utf8) {
                for (unsigned i = 0; i < units / 8; i++)
                        fputs("\u2588", out);
                fputs(eighths[units % 8], out);
        } else
                for (unsigned i = 0; i < (units + 4) / 8; i++)
                        fputc('#', out);
        fputs(off(v), out);
}

static int print_node_summary(FILE *out, const struct jr_view *v, bool show_host, size_t host_w) {
        _cleanup_free_ struct jr_node_sum *sums = NULL;
        size_t n;
        double max = 0;
        char g1[32], g2[32], g3[32];
        int r;

        r = jr_node_sums(v->records, v->filter, v->vis, v->n_vis, &sums, &n);
        if (r < 0 || n == 0)
                return r;
        for (size_t i = 0; i < n; i++)
                max = MAX(max, jr_node_sum_gibps(&sums[i]));

        fprintf(out, "\n%sPer node:%s\n", on(v, ANSI_BOLD), off(v));
        if (show_host)
                fprintf(out, "%-*s  ", (int) host_w, "HOST");
        fprintf(out, "%4s %8s %8s %10s %10s %8s\n", "NODE", "BATCHES", "BLOCKS", "GiB", "TIME s", "GiB/s");
        for (size_t i = 0; i < n; i++) {
                const struct jr_node_sum *s = &sums[i];
                double g = jr_node_sum_gibps(s);
                _cleanup_free_ char *host = text(v, v->records->hosts[s->host].label, "");

                if (!host)
                        return -ENOMEM;
                if (show_host)
                        fprintf(out, "%-*s  ", (int) host_w, host);
                fprintf(out, "%4d %8" PRIu64 " %8" PRIu64 " %10s %10s %8s  ", s->node, s->batches, s->blocks,
                        format_fixed(g1, sizeof(g1), (double) s->bytes / JR_GIB, 2),
                        format_fixed(g2, sizeof(g2), (double) s->usec / USEC_PER_SEC, 3),
                        format_fixed(g3, sizeof(g3), g, 2));
                print_bar(out, v, g, max);
                fputc('\n', out);
        }
        return 0;
}

static int print_host_summary(FILE *out, const struct jr_view *v, size_t host_w) {
        _cleanup_free_ struct jr_host_sum *sums = NULL;
        size_t slowest;
        char g1[32], g2[32];
        int r;

        r = jr_host_sums(v->records, v->vis, v->n_vis, &sums, &slowest);
        if (r < 0)
                return r;
        fprintf(out, "\n%sPer host:%s\n", on(v, ANSI_BOLD), off(v));
        fprintf(out, "%-*s  %8s %8s %10s %13s\n", (int) host_w, "HOST", "BATCHES", "BLOCKS", "GiB", "MEDIAN GiB/s");
        for (size_t h = 0; h < v->records->n_hosts; h++) {
                const struct jr_host_sum *s = &sums[h];
                _cleanup_free_ char *host = NULL;

                if (s->batches == 0)
                        continue;
                host = text(v, v->records->hosts[h].label, "");
                if (!host)
                        return -ENOMEM;
                fprintf(out, "%-*s  %8" PRIu64 " %8" PRIu64 " %10s %13s", (int) host_w, host,
                        s->batches, s->blocks, format_fixed(g1, sizeof(g1), (double) s->bytes / JR_GIB, 2),
                        s->median_gibps < 0 ? "-" : format_fixed(g2, sizeof(g2), s->median_gibps, 2));
                if (h == slowest)
                        fprintf(out, "  %sslowest%s", on(v, ANSI_YELLOW), off(v));
                fputc('\n', out);
        }
        return 0;
}

static int print_devices(FILE *out, const struct jr_view *v, bool show_host, size_t host_w) {
        const struct jr_records *r = v->records;
        bool header = false;
        char t[64], g1[32], g2[32], g3[32], g4[32];

        for (size_t i = 0; i < r->n_devices; i++) {
                const struct jr_device *d = &r->devices[i];
                _cleanup_free_ char *host = NULL, *dev = NULL, *ns = NULL, *region = NULL;

                if (!jr_device_visible(r, v->filter, d))
                        continue;
                host = text(v, r->hosts[d->host].label, "");
                dev = text(v, d->device, "-");
                ns = text(v, d->namespace_name, "-");
                region = text(v, d->region, "-");
                if (!host || !dev || !ns || !region)
                        return -ENOMEM;
                if (!header) {
                        fprintf(out, "\n%sDevice conversions:%s\n", on(v, ANSI_BOLD), off(v));
                        fprintf(out, "%-19s  ", "TIME");
                        if (show_host)
                                fprintf(out, "%-*s  ", (int) host_w, "HOST");
                        fprintf(out, "%-10s %-14s %-8s %7s %9s %8s %9s %8s\n", "DEVICE", "NAMESPACE", "REGION",
                                "BLOCKS", "GiB", "BIND s", "ONLINE s", "TOTAL s");
                        header = true;
                }
                format_time_local(t, sizeof(t), d->realtime);
                fprintf(out, "%-19s  ", t);
                if (show_host)
                        fprintf(out, "%-*s  ", (int) host_w, host);
                fprintf(out, "%-10s %-14s %-8s %7" PRIu64 " %9s %8s %9s %8s\n", dev, ns, region, d->blocks,
                        format_fixed(g1, sizeof(g1), (double) d->bytes / JR_GIB, 2),
                        format_fixed(g2, sizeof(g2), (double) d->bind_usec / USEC_PER_SEC, 3),
                        format_fixed(g3, sizeof(g3), (double) d->online_usec / USEC_PER_SEC, 3),
                        format_fixed(g4, sizeof(g4), (double) d->total_usec / USEC_PER_SEC, 3));
        }
        return 0;
}

static size_t hosts_width(const struct jr_view *v, size_t *ret_n_hosts) {
        const struct jr_records *r = v->records;
        _cleanup_free_ bool *seen = calloc(r->n_hosts ?: 1, sizeof(bool));
        size_t w = 4, n = 0;

        for (size_t i = 0; i < v->n_vis; i++) {
                size_t h = r->batches[v->vis[i]].host;

                if (seen && !seen[h]) {
                        seen[h] = true;
                        n++;
                }
                w = MAX(w, text_width(v, r->hosts[h].label));
        }
        *ret_n_hosts = seen ? n : 2;
        return w;
}

static int print_batch_rows(FILE *out, const struct jr_view *v, bool show_host, size_t host_w) {
        const struct jr_records *r = v->records;
        uint64_t blocks = 0, bytes = 0, failed = 0;
        size_t trig_w = 7;
        char t[64], g1[32], g2[32], g3[32];

        for (size_t i = 0; i < v->n_vis; i++)
                trig_w = MAX(trig_w, text_width(v, jr_batch_trigger(r, &r->batches[v->vis[i]])));

        fprintf(out, "%s%-19s  ", on(v, ANSI_BOLD), "TIME");
        if (show_host)
                fprintf(out, "%-*s  ", (int) host_w, "HOST");
        /* "µ" is two bytes in UTF-8 but one column. */
        fprintf(out, "%-*s %8s %10s %9s %8s %*s %6s%s\n", (int) trig_w, "TRIGGER", "BLOCKS", "GiB", "WALL s",
                "GiB/s", v->utf8 ? 10 : 9, v->utf8 ? "P99 \u00b5s" : "P99 us", "FAILED", off(v));

        for (size_t i = 0; i < v->n_vis; i++) {
                const struct jr_batch *b = &r->batches[v->vis[i]];
                _cleanup_free_ char *host = text(v, r->hosts[b->host].label, "");
                _cleanup_free_ char *trigger = text(v, jr_batch_trigger(r, b), "-");
                struct jr_counters k;
                uint64_t nfail;

                if (!host || !trigger)
                        return -ENOMEM;
                jr_batch_totals(b, &k);
                nfail = MAX(k.failed, (uint64_t) b->n_failures);
                blocks += k.blocks;
                bytes += k.bytes;
                failed += nfail;
                format_time_local(t, sizeof(t), b->realtime);
                fprintf(out, "%-19s  ", t);
                if (show_host)
                        fprintf(out, "%-*s  ", (int) host_w, host);
                fprintf(out, "%-*s %8" PRIu64 " %10s %9s %8s %9" PRIu64 " %s%6" PRIu64 "%s\n", (int) trig_w,
                        trigger, k.blocks, format_fixed(g1, sizeof(g1), (double) k.bytes / JR_GIB, 2),
                        format_fixed(g2, sizeof(g2), (double) k.duration_usec / USEC_PER_SEC, 3),
                        format_fixed(g3, sizeof(g3), jr_counters_gibps(&k), 2), k.p99_usec,
                        nfail ? on(v, ANSI_RED) : "", nfail, nfail ? off(v) : "");
        }
        fprintf(out, "%zu batches, %" PRIu64 " blocks, %s GiB, %" PRIu64 " failed\n", v->n_vis, blocks,
                format_fixed(g1, sizeof(g1), (double) bytes / JR_GIB, 2), failed);
        return 0;
}

int jr_print_table(FILE *out, const struct jr_view *v) {
        size_t n_hosts, host_w;
        bool show_host;
        int r;

        host_w = hosts_width(v, &n_hosts);
        show_host = n_hosts > 1;
        r = print_batch_rows(out, v, show_host, host_w);
        if (r < 0)
                return r;
        r = print_node_summary(out, v, show_host, host_w);
        if (r < 0)
                return r;
        if (show_host) {
                r = print_host_summary(out, v, host_w);
                if (r < 0)
                        return r;
        }
        return print_devices(out, v, show_host, host_w);
}

ssize_t jr_print_failures(FILE *out, const struct jr_view *v) {
        const struct jr_records *r = v->records;
        size_t w = 4, n = 0;
        char t[64];

        for (size_t i = 0; i < r->n_failures; i++)
                if (jr_failure_visible(r, v->filter, &r->failures[i]))
                        w = MAX(w, text_width(v, r->hosts[r->failures[i].host].label));

        for (size_t i = 0; i < r->n_failures; i++) {
                const struct jr_failure *f = &r->failures[i];
                _cleanup_free_ char *host = NULL, *block = NULL, *err = NULL, *msg = NULL;

                if (!jr_failure_visible(r, v->filter, f))
                        continue;
                host = text(v, r->hosts[f->host].label, "");
                block = text(v, f->block, "-");
                err = text(v, f->errno_name, "-");
                msg = text(v, f->message, "");
                if (!host || !block || !err || !msg)
                        return -ENOMEM;
                if (n++ == 0)
                        fprintf(out, "%s%-19s  %-*s  %-14s %4s %-10s %8s  %s%s\n", on(v, ANSI_BOLD), "TIME", (int) w,
                                "HOST", "BLOCK", "NODE", "ERRNO", "ATTEMPTS", "MESSAGE", off(v));
                format_time_local(t, sizeof(t), f->realtime);
                fprintf(out, "%-19s  %-*s  %-14s %4d %s%-10s%s %8" PRIu64 "  %s\n", t, (int) w, host, block,
                        f->node, on(v, ANSI_RED), err, off(v), f->attempts, msg);
        }
        return (ssize_t) n;
}
