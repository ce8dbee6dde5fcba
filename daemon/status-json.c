/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include "format.h"
#include "json.h"
#include "status-render.h"
#include "util.h"

/*
 * `memonlined status --json`: one document. The tables are smartcols'
 * own JSON (status-table.c); the members around them are written here,
 * every string through json_write_string(), which escapes what a
 * terminal would act on. Unknown values are null.
 */

static void json_member(FILE *out, const char *key, const char *v) {
        fprintf(out, "\"%s\": ", key);
        if (v)
                json_write_string(out, v);
        else
                fputs("null", out);
}

static void json_u64(FILE *out, const char *key, uint64_t v) {
        fprintf(out, "\"%s\": %" PRIu64, key, v);
}

/* A size: bytes with --bytes, else "1.5G", as the tables have it. */
static void json_size(FILE *out, const struct table_style *st, const char *key, uint64_t bytes) {
        char buf[64];

        if (st->bytes)
                json_u64(out, key, bytes);
        else
                json_member(out, key, format_size_iec(buf, sizeof(buf), bytes));
}

static void json_totals(FILE *out, const struct table_style *st, const struct status_machine *m) {
        uint64_t bs = m->block_size;
        struct block_tally t;

        status_sum_nodes(m, &t);
        fputs(",\n   \"totals\": {", out);
        json_u64(out, "blocks", t.blocks);
        fputs(", ", out);
        json_u64(out, "online_blocks", t.online);
        fputs(", ", out);
        json_u64(out, "offline_blocks", t.offline);
        fputs(", ", out);
        json_size(out, st, "size", t.blocks * bs);
        fputs(", ", out);
        json_size(out, st, "normal", t.kernel * bs);
        fputs(", ", out);
        json_size(out, st, "movable", t.movable * bs);
        fputs(", ", out);
        json_size(out, st, "offline_size", t.offline * bs);
        fputc('}', out);
}

/* Three "key": string-or-null members, comma separated. */
static void json_three(FILE *out, const char *k1, const char *v1, const char *k2, const char *v2, const char *k3,
                       const char *v3) {
        json_member(out, k1, v1);
        fputs(", ", out);
        json_member(out, k2, v2);
        fputs(", ", out);
        json_member(out, k3, v3);
}

static void json_batch(FILE *out, const struct status_sections *s) {
        const struct status_batch *b = &s->batch;

        fputs(",\n   \"batch\": ", out);
        if (s->batch_result <= 0) {
                fputs("null", out);
                return;
        }
        fputc('{', out);
        json_member(out, "status", b->status);
        fputs(", ", out);
        json_member(out, "trigger", b->trigger);
        if (b->node >= 0)
                fprintf(out, ", \"node\": %d", b->node);
        else
                fputs(", \"node\": null", out);
        fprintf(out, ", \"blocks_done\": %" PRIu64 ", \"blocks_total\": %" PRIu64 ", \"block_size\": %" PRIu64
                ", \"elapsed_usec\": %" PRIu64, b->blocks_done, b->blocks_total, b->block_size, b->elapsed_usec);
        if (b->age_usec != UINT64_MAX)
                fprintf(out, ", \"age_usec\": %" PRIu64, b->age_usec);
        else
                fputs(", \"age_usec\": null", out);
        fputc('}', out);
}

/* "errors": what could not be read, by table or section; left out when everything was. */
static void json_errors(FILE *out, const struct status_view *v, const struct status_sections *s) {
        const char *names[_STATUS_TABLE_MAX + 7];
        int errors[_STATUS_TABLE_MAX + 7];
        size_t n = 0;

        for (unsigned t = 0; t < _STATUS_TABLE_MAX; t++)
                if (status_view_wants(v, t) && status_table_error(v->m, t) < 0) {
                        names[n] = status_table_name(t);
                        errors[n++] = status_table_error(v->m, t);
                }
        if (status_view_wants(v, STATUS_TABLE_DAX) && v->m->dax.n_unreadable > 0) {
                names[n] = "dax_unreadable";
                errors[n++] = v->m->dax.unreadable_error;
        }
        if (status_view_wants(v, STATUS_TABLE_CXL) && v->m->cxl.n_unreadable > 0) {
                names[n] = "cxl_unreadable";
                errors[n++] = v->m->cxl.unreadable_error;
        }
        if (status_view_wants(v, STATUS_TABLE_MEMDEVS) && v->m->memdevs.n_unreadable > 0) {
                names[n] = "memdevs_unreadable";
                errors[n++] = v->m->memdevs.unreadable_error;
        }
        if ((status_view_wants(v, STATUS_TABLE_NVDIMM) || status_view_wants(v, STATUS_TABLE_NAMESPACES)) &&
            v->m->nd.n_unreadable > 0) {
                names[n] = "nvdimm_unreadable";
                errors[n++] = v->m->nd.unreadable_error;
        }
        if (!v->only_tables) {
                if (s->kernel_error < 0) {
                        names[n] = "kernel";
                        errors[n++] = s->kernel_error;
                }
                if (s->conflicts_error < 0) {
                        names[n] = "conflicts";
                        errors[n++] = s->conflicts_error;
                }
                if (s->batch_result < 0) {
                        names[n] = "batch";
                        errors[n++] = s->batch_result;
                }
        }
        for (size_t i = 0; i < n; i++) {
                fputs(i == 0 ? ",\n   \"errors\": {" : ", ", out);
                json_member(out, names[i], strerror(-errors[i]));
        }
        if (n > 0)
                fputc('}', out);
}

static void json_sections(FILE *out, const struct status_sections *s) {
        fputs(",\n   \"kernel\": {", out);
        json_three(out, "auto_online_blocks", s->auto_online, "online_policy", s->online_policy,
                   "auto_movable_ratio", s->auto_movable_ratio);
        fputs("},\n   \"conflicts\": [", out);
        for (size_t i = 0; i < s->conflicts.n; i++) {
                const struct conflict *c = &s->conflicts.items[i];

                fputs(i ? ", {" : "{", out);
                json_three(out, "what", c->what, "where", c->where, "fix", c->fix);
                fputc('}', out);
        }
        fputc(']', out);
        json_batch(out, s);
        fputs(",\n   \"daemon\": {", out);
        json_three(out, "active_state", s->daemon.active_state, "status_text", s->daemon.status_text, "error",
                   s->daemon.error);
        fputc('}', out);
        if (s->policy_warning) {
                fputs(",\n   ", out);
                json_member(out, "policy_warning", s->policy_warning);
        }
}

int status_print_json(FILE *out, const struct status_view *v, const struct status_sections *s) {
        struct libscols_table *tables[_STATUS_TABLE_MAX] = {};
        size_t n = 0;
        int r = 0;

        for (unsigned t = 0; r >= 0 && t < _STATUS_TABLE_MAX; t++)
                if (status_view_wants(v, t))
                        r = status_table_build(v, t, &tables[n++]);
        if (r >= 0) {
                fprintf(out, "{\n   \"block_size\": %" PRIu64 ",\n", v->m->block_size);
                r = table_print_json_members(out, tables, n);
        }
        if (r >= 0) {
                if (status_view_wants(v, STATUS_TABLE_NODES))
                        json_totals(out, &v->style, v->m);
                if (!v->only_tables)
                        json_sections(out, s);
                json_errors(out, v, s);
                fputs("\n}\n", out);
        }
        for (size_t i = 0; i < n; i++)
                scols_unref_table(tables[i]);
        return r;
}
