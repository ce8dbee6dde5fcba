/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include "format.h"
#include "journal-report-render.h"
#include "json.h"
#include "util.h"

static void json_kv_str(FILE *f, const char *key, const char *value) {
        fprintf(f, ",\"%s\":", key);
        json_write_string(f, value);
}

static void json_kv_u64(FILE *f, const char *key, uint64_t v) {
        fprintf(f, ",\"%s\":%" PRIu64, key, v);
}

/* "host" is the hostname as logged; "machine_id" tells apart machines that share it. */
static void json_host(FILE *out, const struct jr_host *h) {
        char id[SD_ID128_STRING_MAX];

        json_kv_str(out, "host", h->name);
        if (h->have_machine)
                json_kv_str(out, "machine_id", sd_id128_to_string(h->machine, id));
}

/* An object's start: "{"time":..., "host":..." */
static void json_head(FILE *out, uint64_t realtime, const struct jr_host *host) {
        char t[64];

        format_time_iso_utc(t, sizeof(t), realtime);
        fputs("{\"time\":", out);
        json_write_string(out, t);
        json_host(out, host);
}

static void json_failure(FILE *out, const struct jr_records *r, const struct jr_failure *f) {
        json_head(out, f->realtime, &r->hosts[f->host]);
        json_kv_str(out, "block", f->block);
        fprintf(out, ",\"node\":%d,\"errno\":%d", f->node, f->err);
        json_kv_str(out, "errno_name", f->errno_name);
        json_kv_u64(out, "attempts", f->attempts);
        json_kv_str(out, "message", f->message);
        if (f->batch != JR_NONE)
                json_kv_u64(out, "batch", r->batches[f->batch].seq);
        fputc('}', out);
}

static void json_counters(FILE *out, const struct jr_counters *k) {
        char g[64];

        json_kv_u64(out, "blocks", k->blocks);
        json_kv_u64(out, "bytes", k->bytes);
        json_kv_u64(out, "failed", k->failed);
        json_kv_u64(out, "skipped", k->skipped);
        json_kv_u64(out, "duration_usec", k->duration_usec);
        fprintf(out, ",\"gibps\":%s", format_fixed(g, sizeof(g), jr_counters_gibps(k), 3));
        json_kv_u64(out, "p50_usec", k->p50_usec);
        json_kv_u64(out, "p99_usec", k->p99_usec);
        json_kv_u64(out, "max_usec", k->max_usec);
        if (k->have_first_latency)
                json_kv_u64(out, "first_latency_usec", k->first_latency_usec);
        if (k->have_latency)
                json_kv_u64(out, "latency_usec", k->latency_usec);
        json_kv_u64(out, "cpu_usec", k->cpu_usec);
}

static void json_device(FILE *out, const struct jr_records *r, const struct jr_device *d) {
        json_head(out, d->realtime, &r->hosts[d->host]);
        json_kv_str(out, "device", d->device);
        if (d->namespace_name)
                json_kv_str(out, "namespace", d->namespace_name);
        if (d->region)
                json_kv_str(out, "region", d->region);
        json_kv_u64(out, "bind_usec", d->bind_usec);
        json_kv_u64(out, "online_usec", d->online_usec);
        json_kv_u64(out, "total_usec", d->total_usec);
        json_kv_u64(out, "blocks", d->blocks);
        json_kv_u64(out, "bytes", d->bytes);
        fputc('}', out);
}

static void json_batch_head(FILE *out, const struct jr_records *r, const struct jr_batch *b) {
        char t[64], boot[SD_ID128_STRING_MAX];

        format_time_iso_utc(t, sizeof(t), b->realtime);
        fputs("{\"type\":\"batch\",\"time\":", out);
        json_write_string(out, t);
        json_host(out, &r->hosts[b->host]);
        json_kv_str(out, "boot_id", sd_id128_to_string(b->boot, boot));
        json_kv_u64(out, "pid", b->pid);
        json_kv_u64(out, "batch", b->seq);
        json_kv_str(out, "trigger", b->trigger ?: (b->device ? "dax" : ""));
        if (b->device)
                json_kv_str(out, "device", b->device);
        if (b->namespace_name)
                json_kv_str(out, "namespace", b->namespace_name);
        if (b->region)
                json_kv_str(out, "region", b->region);
        if (b->node_list) {
                uint64_t v;

                /* MEMONLINE_NODES counts the batch's node groups. */
                if (parse_u64(b->node_list, 10, &v) >= 0)
                        json_kv_u64(out, "node_count", v);
                else
                        json_kv_str(out, "node_count", b->node_list);
        }
}

static void json_batch_nodes(FILE *out, const struct jr_view *v, const struct jr_batch *b) {
        bool first = true;

        fputs(",\"nodes\":[", out);
        for (size_t i = 0; i < b->n_nodes; i++) {
                const struct jr_node *n = &b->nodes[i];

                if (!jr_node_visible(v->filter, n->node))
                        continue;
                fprintf(out, "%s{\"node\":%d,\"writer_node\":%d", first ? "" : ",", n->node, n->writer_node);
                json_kv_str(out, "zone", n->zone);
                json_kv_str(out, "cpus", n->cpus);
                json_counters(out, &n->c);
                fputc('}', out);
                first = false;
        }
        fputc(']', out);
}

static void json_batch_failures(FILE *out, const struct jr_view *v, const struct jr_batch *b) {
        bool first = true;

        fputs(",\"failures\":[", out);
        for (size_t i = 0; i < b->n_failures; i++) {
                const struct jr_failure *f = &v->records->failures[b->failures[i]];

                if (!jr_failure_visible(v->records, v->filter, f))
                        continue;
                if (!first)
                        fputc(',', out);
                json_failure(out, v->records, f);
                first = false;
        }
        fputc(']', out);
}

static void json_batch(FILE *out, const struct jr_view *v, const struct jr_batch *b) {
        struct jr_counters k;

        jr_batch_totals(b, &k);
        json_batch_head(out, v->records, b);
        json_counters(out, &k);
        json_batch_nodes(out, v, b);
        json_batch_failures(out, v, b);
        if (b->device_rec != JR_NONE) {
                fputs(",\"conversion\":", out);
                json_device(out, v->records, &v->records->devices[b->device_rec]);
        }
        fputs("}\n", out);
}

void jr_print_json_lines(FILE *out, const struct jr_view *v) {
        const struct jr_records *r = v->records;

        for (size_t i = 0; i < v->n_vis; i++)
                json_batch(out, v, &r->batches[v->vis[i]]);
        /* Conversions no batch claimed still deserve a line. */
        for (size_t i = 0; i < r->n_devices; i++) {
                const struct jr_device *d = &r->devices[i];

                if (d->batch != JR_NONE || !jr_device_visible(r, v->filter, d))
                        continue;
                fputs("{\"type\":\"conversion\",\"conversion\":", out);
                json_device(out, r, d);
                fputs("}\n", out);
        }
}

size_t jr_print_failures_json(FILE *out, const struct jr_view *v) {
        const struct jr_records *r = v->records;
        size_t n = 0;

        for (size_t i = 0; i < r->n_failures; i++) {
                if (!jr_failure_visible(r, v->filter, &r->failures[i]))
                        continue;
                json_failure(out, r, &r->failures[i]);
                fputc('\n', out);
                n++;
        }
        return n;
}
