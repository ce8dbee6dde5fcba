/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `memonlined report` over hostile journal entries: the input is entries
 * in the journal export format (FIELD=value lines, or FIELD, a 64-bit
 * little-endian length and the value for binary data; a blank line ends
 * an entry), after optional "!option" lines: !all (all sources), !utf8,
 * !bytes, !node=N, !device=NAME, !columns=LIST, !failures-columns=LIST.
 * Everything is joined and rendered in every format, and each output must
 * hold its invariants: nothing a terminal acts on in the text and raw
 * tables, one line per batch whatever a field holds, valid JSON, and SVG
 * whose markup no field can open or close. A broken invariant aborts.
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "journal-report-join.h"
#include "journal-report-render.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x) do { if (!(x)) check_failed(__LINE__, #x); } while (0)

_Noreturn static void check_failed(int line, const char *what) {
        fprintf(stderr, "fuzz-journal-entry.c:%d: invariant broken: %s\n", line, what);
        abort();
}

struct input {
        const uint8_t *p, *end;
        bool all_sources, utf8, bytes;
        int node;
        char device[64], columns[128], failure_columns[128];
};

/* ---- the input --------------------------------------------------------------- */

static bool take_line(struct input *in, const char **ret, size_t *ret_len) {
        const uint8_t *nl;

        if (in->p >= in->end)
                return false;
        nl = memchr(in->p, '\n', (size_t) (in->end - in->p));
        *ret = (const char *) in->p;
        *ret_len = nl ? (size_t) (nl - in->p) : (size_t) (in->end - in->p);
        in->p = nl ? nl + 1 : in->end;
        return true;
}

static void copy_option(char *dst, size_t size, const char *s, size_t len) {
        len = MIN(len, size - 1);
        memcpy(dst, s, len);
        dst[len] = '\0';
}

static void parse_options(struct input *in) {
        while (in->p < in->end && *in->p == '!') {
                const char *l;
                size_t n;

                take_line(in, &l, &n);
                if (n >= 4 && memcmp(l, "!all", 4) == 0)
                        in->all_sources = true;
                else if (n >= 5 && memcmp(l, "!utf8", 5) == 0)
                        in->utf8 = true;
                else if (n >= 6 && memcmp(l, "!bytes", 6) == 0)
                        in->bytes = true;
                else if (n > 6 && memcmp(l, "!node=", 6) == 0) {
                        char num[12];

                        copy_option(num, sizeof(num), l + 6, n - 6);
                        in->node = (int) MIN(MAX(strtol(num, NULL, 10), -1L), 100000L);
                }
                else if (n > 8 && memcmp(l, "!device=", 8) == 0)
                        copy_option(in->device, sizeof(in->device), l + 8, n - 8);
                else if (n > 9 && memcmp(l, "!columns=", 9) == 0)
                        copy_option(in->columns, sizeof(in->columns), l + 9, n - 9);
                else if (n > 18 && memcmp(l, "!failures-columns=", 18) == 0)
                        copy_option(in->failure_columns, sizeof(in->failure_columns), l + 18, n - 18);
        }
}

static uint64_t le64(const uint8_t *p) {
        uint64_t v = 0;

        for (unsigned i = 0; i < 8; i++)
                v |= (uint64_t) p[i] << (8 * i);
        return v;
}

/* A binary field: NAME, then the length and the value; handed on as "NAME=value". */
static void binary_field(struct input *in, struct jr_entry *e, const char *name, size_t name_len) {
        char buf[96 + 2 * JR_VALUE_MAX];
        uint64_t len;
        size_t n;

        if (in->end - in->p < 8) {
                in->p = in->end;
                return;
        }
        len = MIN(le64(in->p), (uint64_t) (in->end - in->p - 8));
        in->p += 8;
        name_len = MIN(name_len, (size_t) 95);
        n = MIN((size_t) len, sizeof(buf) - name_len - 1);
        memcpy(buf, name, name_len);
        buf[name_len] = '=';
        memcpy(buf + name_len + 1, in->p, n);
        jr_entry_add(e, buf, name_len + 1 + n);
        in->p += len;
        if (in->p < in->end && *in->p == '\n')
                in->p++;
}

/* One entry's fields into e; false when the input holds no more. */
static bool read_entry(struct input *in, struct jr_entry *e) {
        static const char realtime[] = "__REALTIME_TIMESTAMP=";
        bool any = false;
        const char *l;
        size_t n;

        jr_entry_clear(e);
        while (take_line(in, &l, &n)) {
                if (n == 0) {
                        if (any)
                                return true;
                        continue;
                }
                any = true;
                if (!memchr(l, '=', n))
                        binary_field(in, e, l, n);
                else if (n > sizeof(realtime) - 1 && memcmp(l, realtime, sizeof(realtime) - 1) == 0) {
                        char num[24];

                        copy_option(num, sizeof(num), l + sizeof(realtime) - 1, n - (sizeof(realtime) - 1));
                        (void) parse_u64(num, 10, &e->realtime);
                } else
                        jr_entry_add(e, l, n);
        }
        return any;
}

/* ---- the invariants --------------------------------------------------------------- */

/* Nothing a terminal acts on: well-formed UTF-8 (only ASCII when ascii), no control but the line ends. */
static void check_inert(const char *s, size_t n, bool ascii) {
        for (size_t i = 0; i < n; ) {
                uint32_t cp = 0;
                size_t l = utf8_decode(s + i, n - i, &cp);

                CHECK(l > 0);
                CHECK(cp == '\n' || !unicode_is_unsafe(cp));
                CHECK(!ascii || cp < 0x80);
                i += l;
        }
}

static size_t count_lines(const char *s, size_t n) {
        size_t lines = 0;

        for (size_t i = 0; i < n; i++)
                lines += s[i] == '\n';
        return lines;
}

static const char *json_ws(const char *p) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
        return p;
}

static const char *json_string(const char *p) {
        for (p++; *p != '"'; p++) {
                if ((unsigned char) *p < 0x20)
                        return NULL;
                if (*p != '\\')
                        continue;
                p++;
                if (*p == 'u') {
                        for (int i = 1; i <= 4; i++)
                                if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
                                        return NULL;
                        p += 4;
                } else if (!*p || !strchr("\"\\/bfnrt", *p))
                        return NULL;
        }
        return p + 1;
}

static const char *json_number(const char *p) {
        const char *start;

        if (*p == '-')
                p++;
        start = p;
        if (*p == '0')
                p++;
        else
                while (*p >= '0' && *p <= '9')
                        p++;
        if (p == start)
                return NULL;
        if (*p == '.') {
                start = ++p;
                while (*p >= '0' && *p <= '9')
                        p++;
                if (p == start)
                        return NULL;
        }
        if (*p == 'e' || *p == 'E') {
                p++;
                if (*p == '+' || *p == '-')
                        p++;
                start = p;
                while (*p >= '0' && *p <= '9')
                        p++;
                if (p == start)
                        return NULL;
        }
        return p;
}

static const char *json_value(const char *p, int depth);

/* The members of an object ('}') or the elements of an array (']'). */
static const char *json_items(const char *p, char close, int depth) {
        p = json_ws(p + 1);
        if (*p == close)
                return p + 1;
        for (;;) {
                if (close == '}') {
                        if (*p != '"' || !(p = json_string(p)))
                                return NULL;
                        p = json_ws(p);
                        if (*p++ != ':')
                                return NULL;
                }
                p = json_value(p, depth + 1);
                if (!p)
                        return NULL;
                p = json_ws(p);
                if (*p == close)
                        return p + 1;
                if (*p++ != ',')
                        return NULL;
                p = json_ws(p);
        }
}

static const char *json_value(const char *p, int depth) {
        if (depth > 64)
                return NULL;
        p = json_ws(p);
        switch (*p) {
        case '{': return json_items(p, '}', depth);
        case '[': return json_items(p, ']', depth);
        case '"': return json_string(p);
        case 't': return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
        case 'f': return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
        case 'n': return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
        default:  return json_number(p);
        }
}

/* s is exactly one JSON value (and well-formed UTF-8 with nothing unsafe raw but the newlines between members). */
static void check_json(const char *s, size_t n) {
        const char *end = json_value(s, 0);

        CHECK(end && *json_ws(end) == '\0' && (size_t) (json_ws(end) - s) == n);
        for (size_t i = 0; i < n; ) {
                uint32_t cp = 0;
                size_t l = utf8_decode(s + i, n - i, &cp);

                CHECK(l > 0 && (cp == '\n' || !unicode_is_unsafe(cp)));
                i += l;
        }
}

/* Every line is one JSON value. */
static void check_json_lines(char *s, size_t n, size_t want_lines) {
        size_t lines = 0;

        for (char *line = s, *nl; line < s + n; line = nl + 1) {
                nl = memchr(line, '\n', (size_t) (s + n - line));
                CHECK(nl);
                *nl = '\0';
                check_json(line, (size_t) (nl - line));
                lines++;
        }
        CHECK(lines == want_lines);
}

/* Markup only where the writer put it: '<' and '>' alternate, every '&' starts an entity. */
static void check_svg(const char *s, size_t n) {
        static const char *const entities[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
        bool in_tag = false, in_value = false;

        check_inert(s, n, false);
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '&') {
                        bool ok = false;

                        for (size_t k = 0; k < ELEMENTSOF(entities); k++)
                                ok = ok || strncmp(s + i, entities[k], strlen(entities[k])) == 0;
                        CHECK(ok);
                } else if (in_tag && s[i] == '"')
                        in_value = !in_value;
                else if (s[i] == '<') {
                        CHECK(!in_tag);
                        in_tag = true;
                } else if (s[i] == '>') {
                        CHECK(in_tag && !in_value);
                        in_tag = false;
                }
        }
        CHECK(!in_tag);
}

/* ---- every output ----------------------------------------------------------------- */

struct capture {
        char *buf;
        size_t n;
        FILE *f;
};

static FILE *capture_open(struct capture *c) {
        *c = (struct capture) {};
        c->f = open_memstream(&c->buf, &c->n);
        CHECK(c->f);
        return c->f;
}

/* Closes the stream; false when the output ran out of memory, which is no finding. */
static bool capture_close(struct capture *c, int r) {
        CHECK(fclose(c->f) == 0);
        if (r == -ENOMEM) {
                free(c->buf);
                return false;
        }
        CHECK(r >= 0);
        return true;
}

/* The line after the header and one row per batch is the total: no field forged a row. (No rows, no header.) */
static void check_batch_rows(const char *s, size_t n_vis) {
        char want[64];
        const char *line = s;

        for (size_t i = 0; i < (n_vis > 0 ? n_vis + 1 : 0); i++) {
                line = strchr(line, '\n');
                CHECK(line);
                line++;
        }
        snprintf(want, sizeof(want), "%zu batches, ", n_vis);
        CHECK(strncmp(line, want, strlen(want)) == 0);
}

static void check_batch_tables(struct jr_view v, size_t unclaimed) {
        struct capture c;

        v.format = JR_FORMAT_TEXT;
        if (capture_close(&c, jr_print_tables(capture_open(&c), &v))) {
                check_inert(c.buf, c.n, !v.utf8);
                check_batch_rows(c.buf, v.n_vis);
                free(c.buf);
        }
        v.format = JR_FORMAT_RAW;
        v.noheadings = v.n_vis % 2;
        if (capture_close(&c, jr_print_tables(capture_open(&c), &v))) {
                check_inert(c.buf, c.n, true);
                CHECK(count_lines(c.buf, c.n) == (v.n_vis > 0 ? v.n_vis + !v.noheadings : 0));
                free(c.buf);
        }
        v.format = JR_FORMAT_JSON;
        if (capture_close(&c, jr_print_tables(capture_open(&c), &v))) {
                check_json(c.buf, c.n);
                free(c.buf);
        }
        jr_print_json_lines(capture_open(&c), &v);
        if (capture_close(&c, 0)) {
                check_json_lines(c.buf, c.n, v.n_vis + unclaimed);
                free(c.buf);
        }
        if (capture_close(&c, jr_write_svg(capture_open(&c), &v))) {
                check_svg(c.buf, c.n);
                free(c.buf);
        }
}

static void check_failure_lists(struct jr_view v, size_t want) {
        struct capture c;
        ssize_t n;

        v.format = JR_FORMAT_TEXT;
        n = jr_print_failures(capture_open(&c), &v);
        if (capture_close(&c, n < 0 ? (int) n : 0)) {
                CHECK((size_t) n == want);
                check_inert(c.buf, c.n, !v.utf8);
                CHECK(count_lines(c.buf, c.n) == (want > 0 ? want + 1 : 0));
                free(c.buf);
        }
        v.format = JR_FORMAT_RAW;
        n = jr_print_failures(capture_open(&c), &v);
        if (capture_close(&c, n < 0 ? (int) n : 0)) {
                check_inert(c.buf, c.n, true);
                CHECK(count_lines(c.buf, c.n) == (want > 0 ? want + 1 : 0));
                free(c.buf);
        }
        v.format = JR_FORMAT_JSON;
        n = jr_print_failures(capture_open(&c), &v);
        if (capture_close(&c, n < 0 ? (int) n : 0)) {
                check_json(c.buf, c.n);
                free(c.buf);
        }
        n = (ssize_t) jr_print_failures_json(capture_open(&c), &v);
        if (capture_close(&c, 0)) {
                check_json_lines(c.buf, c.n, (size_t) n);
                CHECK((size_t) n == want);
                free(c.buf);
        }
}

static void render_all(const struct jr_records *rec, const struct input *in) {
        const struct jr_filter filter = { .node = in->node, .device = in->device[0] ? in->device : NULL };
        _cleanup_free_ unsigned *columns = NULL, *failure_columns = NULL;
        _cleanup_free_ size_t *vis = NULL;
        struct jr_view v = { .records = rec, .filter = &filter, .utf8 = in->utf8, .bytes = in->bytes };
        size_t n_columns = 0, n_failure_columns = 0, unclaimed = 0, failures = 0, bad_len;
        const char *bad;

        if (in->columns[0])
                (void) jr_columns_parse(false, in->columns, &columns, &n_columns, &bad, &bad_len);
        if (in->failure_columns[0])
                (void) jr_columns_parse(true, in->failure_columns, &failure_columns, &n_failure_columns, &bad,
                                        &bad_len);
        if (jr_visible_batches(rec, &filter, &vis, &v.n_vis) < 0)
                return;
        v.vis = vis;
        for (size_t i = 0; i < rec->n_devices; i++)
                unclaimed += rec->devices[i].batch == JR_NONE && jr_device_visible(rec, &filter, &rec->devices[i]);
        for (size_t i = 0; i < rec->n_failures; i++)
                failures += jr_failure_visible(rec, &filter, &rec->failures[i]);

        v.columns = columns;
        v.n_columns = n_columns;
        check_batch_tables(v, unclaimed);
        v.columns = failure_columns;
        v.n_columns = n_failure_columns;
        check_failure_lists(v, failures);
}

/* Once per process, whichever driver calls: libFuzzer, or a plain replay of the corpus. */
static void init_once(void) {
        static bool done = false;

        if (done)
                return;
        /* as the command runs in a UTF-8 session: smartcols measures widths by the locale */
        (void) setlocale(LC_CTYPE, "C.UTF-8");
        setenv("TZ", "UTC", 1);
        done = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct input in = { .p = data, .end = data + size, .node = -1 };
        _cleanup_free_ struct jr_entry *e = malloc(sizeof(struct jr_entry));
        _cleanup_(jr_records_done) struct jr_records rec = {};

        init_once();
        if (!e || jr_records_init(&rec) < 0)
                return 0;
        parse_options(&in);
        rec.all_sources = in.all_sources;
        while (read_entry(&in, e))
                if (jr_records_add(&rec, e) < 0)
                        return 0;
        if (jr_records_finish(&rec) < 0)
                return 0;
        render_all(&rec, &in);
        return 0;
}
