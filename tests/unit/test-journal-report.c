/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `memonlined report` on real journal files: records are written in the
 * journal export format and turned into .journal files by
 * systemd-journal-remote, as a collector host would have them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "fake-tree.h"
#include "journal-report.h"
#include "journal-report-join.h"
#include "report.h"
#include "util.h"

#define T0 1700000000ULL        /* 2023-11-14 22:13:20 UTC */
#define GIB_BYTES ((uint64_t) 1 << 30)
#define BLOCK_BYTES ((uint64_t) 128 << 20)
#define USEC(s) ((uint64_t) (s) * 1000000)
#define BOOT_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1"
#define BOOT_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2"

struct fixture {
        char *dir;              /* holds remote-hosta.journal, remote-hostb.journal */
        char *file_a;
};

static const char *journal_remote(void) {
        static const char *const paths[] = {
                "/lib/systemd/systemd-journal-remote",
                "/usr/lib/systemd/systemd-journal-remote",
        };

        for (size_t i = 0; i < ELEMENTSOF(paths); i++)
                if (access(paths[i], X_OK) == 0)
                        return paths[i];
        return NULL;
}

/* ---- export format writers ----------------------------------------------- */

/* An entry's head; source: the trusted fields that say who logged it. */
static void head_from(FILE *f, const char *host, const char *boot, unsigned pid, uint64_t sec, const char *id,
                      const char *source) {
        fprintf(f, "__REALTIME_TIMESTAMP=%" PRIu64 "\n__MONOTONIC_TIMESTAMP=%" PRIu64 "\n", USEC(sec),
                USEC(sec - T0 + 100));
        fprintf(f, "_BOOT_ID=%s\n_HOSTNAME=%s\n_PID=%u\n%sMESSAGE_ID=%s\n", boot, host, pid, source, id);
}

static void head(FILE *f, const char *host, const char *boot, unsigned pid, uint64_t sec, const char *id) {
        head_from(f, host, boot, pid, sec, id, "_COMM=memonlined\n_UID=0\n");
}

static void counters(FILE *f, unsigned blocks, uint64_t dur_usec, unsigned failed) {
        uint64_t bytes = (uint64_t) blocks * BLOCK_BYTES;
        double g = dur_usec ? (double) bytes / GIB_BYTES / ((double) dur_usec / 1e6) : 0;

        fprintf(f, "MEMONLINE_BLOCKS=%u\nMEMONLINE_BYTES=%" PRIu64 "\nMEMONLINE_FAILED=%u\nMEMONLINE_SKIPPED=0\n"
                "MEMONLINE_DURATION_USEC=%" PRIu64 "\nMEMONLINE_GIBPS=%.2f\nMEMONLINE_P50_USEC=%" PRIu64
                "\nMEMONLINE_P99_USEC=%" PRIu64 "\nMEMONLINE_MAX_USEC=%" PRIu64 "\nMEMONLINE_CPU_USEC=1000\n",
                blocks, bytes, failed, dur_usec, g, blocks ? dur_usec / blocks : 0,
                blocks ? 2 * dur_usec / blocks : 0, blocks ? 3 * dur_usec / blocks : 0);
}

static void batch(FILE *f, const char *host, const char *boot, unsigned pid, uint64_t sec, unsigned seq,
                  const char *trigger, const char *device, unsigned blocks, uint64_t dur_usec, unsigned failed) {
        unsigned nodes = device ? 1 : 2;

        head(f, host, boot, pid, sec, MESSAGE_ID_BATCH);
        fprintf(f, "MESSAGE=batch %u: %u blocks\nMEMONLINE_BATCH=%u\nMEMONLINE_TRIGGER=%s\nMEMONLINE_NODES=%u\n",
                seq, blocks, seq, trigger, nodes);
        if (device)
                fprintf(f, "MEMONLINE_DEVICE=%s\nMEMONLINE_NAMESPACE=namespace0.0\nMEMONLINE_REGION=region0\n", device);
        counters(f, blocks, dur_usec, failed);
        fputc('\n', f);
}

static void node(FILE *f, const char *host, const char *boot, unsigned pid, uint64_t sec, unsigned seq, int nd,
                 int writer, const char *zone, unsigned blocks, uint64_t dur_usec) {
        head(f, host, boot, pid, sec, MESSAGE_ID_NODE);
        fprintf(f, "MESSAGE=node %d\nMEMONLINE_BATCH=%u\nMEMONLINE_NODE=%d\nMEMONLINE_WRITER_NODE=%d\n"
                "MEMONLINE_ZONE=%s\nMEMONLINE_CPUS=4-5\n", nd, seq, nd, writer, zone);
        counters(f, blocks, dur_usec, 0);
        fputc('\n', f);
}

/*
 * The record just written (its blank line taken back) gets the latencies:
 * first and last block after the first event; 0 leaves a field out, as
 * records older than it have no MEMONLINE_FIRST_LATENCY_USEC.
 */
static void latency(FILE *f, uint64_t first_usec, uint64_t last_usec) {
        assert_int_equal(fseek(f, -1, SEEK_CUR), 0);
        if (first_usec)
                fprintf(f, "MEMONLINE_FIRST_LATENCY_USEC=%" PRIu64 "\n", first_usec);
        if (last_usec)
                fprintf(f, "MEMONLINE_LATENCY_USEC=%" PRIu64 "\n", last_usec);
        fputc('\n', f);
}

static void failure(FILE *f, const char *host, const char *boot, unsigned pid, uint64_t sec, unsigned seq,
                    const char *block, int nd) {
        head(f, host, boot, pid, sec, MESSAGE_ID_FAILURE);
        fprintf(f, "MESSAGE=Failed to online %s: \"Device or resource busy\"\nMEMONLINE_BATCH=%u\n"
                "MEMONLINE_BLOCK=%s\nMEMONLINE_NODE=%d\nMEMONLINE_ERRNO=16\nMEMONLINE_ERRNO_NAME=EBUSY\n"
                "MEMONLINE_ATTEMPTS=5\n\n", block, seq, block, nd);
}

static void device(FILE *f, const char *host, const char *boot, unsigned pid, uint64_t sec, unsigned seq,
                   const char *dev, unsigned blocks) {
        head(f, host, boot, pid, sec, MESSAGE_ID_DEVICE);
        /* pmem.c writes no MEMONLINE_BATCH: seq 0 leaves it out, as the daemon does */
        if (seq > 0)
                fprintf(f, "MEMONLINE_BATCH=%u\n", seq);
        fprintf(f, "MESSAGE=converted %s\nMEMONLINE_DEVICE=%s\nMEMONLINE_NAMESPACE=namespace0.0\n"
                "MEMONLINE_REGION=region0\nMEMONLINE_BIND_USEC=300000\nMEMONLINE_ONLINE_USEC=2000000\n"
                "MEMONLINE_TOTAL_USEC=2300000\nMEMONLINE_BLOCKS=%u\nMEMONLINE_BYTES=%" PRIu64 "\n\n",
                dev, dev, blocks, (uint64_t) blocks * BLOCK_BYTES);
}

/* An unrelated entry that the MESSAGE_ID match must skip. */
static void noise(FILE *f, const char *host, const char *boot, uint64_t sec) {
        fprintf(f, "__REALTIME_TIMESTAMP=%" PRIu64 "\n__MONOTONIC_TIMESTAMP=%" PRIu64 "\n_BOOT_ID=%s\n"
                "_HOSTNAME=%s\n_PID=1\nMESSAGE=Started something\nMEMONLINE_BATCH=99\n\n",
                USEC(sec), USEC(sec - T0 + 100), boot, host);
}

/* Everything in fd from its start, closing it. */
static char *read_all(int fd) {
        FILE *f = fdopen(fd, "r");
        char *buf = NULL;
        size_t n = 0;

        assert_non_null(f);
        rewind(f);
        if (getdelim(&buf, &n, '\0', f) < 0) {
                free(buf);
                buf = strdup("");
        }
        fclose(f);
        return buf;
}

/* Convert export data (binary fields hold NULs) into a journal file with systemd-journal-remote. */
static void make_journal_n(const char *export_data, size_t len, const char *out_path) {
        char tmpl[] = "/tmp/memonline-jr-export-XXXXXX";
        _cleanup_free_ char *cmd = NULL;
        int fd = mkstemp(tmpl);
        FILE *f;

        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(export_data, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        assert_true(asprintf(&cmd, "%s -o '%s' '%s' >/dev/null 2>&1", journal_remote(), out_path, tmpl) > 0);
        assert_int_equal(system(cmd), 0);
        unlink(tmpl);
}

static void make_journal(const char *export_text, const char *out_path) {
        make_journal_n(export_text, strlen(export_text), out_path);
}

static char *export_host_a(void) {
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);

        assert_non_null(f);
        /* batch 1: 16 blocks, 2 GiB in 1 s, two nodes */
        batch(f, "hosta", BOOT_A, 100, T0, 1, "udev", NULL, 16, 1000000, 0);
        latency(f, 250000, 1250000);
        node(f, "hosta", BOOT_A, 100, T0, 1, 0, 0, "online_movable", 8, 500000);
        latency(f, 250000, 750000);
        node(f, "hosta", BOOT_A, 100, T0, 1, 1, 1, "online_movable", 8, 500000);
        latency(f, 400000, 1250000);
        noise(f, "hosta", BOOT_A, T0 + 10);
        /* batch 2: dax0.0, 32 blocks on CPU-less node 2 written from node 1, one failure */
        batch(f, "hosta", BOOT_A, 100, T0 + 3600, 2, "dax", "dax0.0,dax1.0", 32, 2000000, 1);
        node(f, "hosta", BOOT_A, 100, T0 + 3600, 2, 2, 1, "online_movable", 32, 2000000);
        failure(f, "hosta", BOOT_A, 100, T0 + 3600, 2, "memory300", 2);
        device(f, "hosta", BOOT_A, 100, T0 + 3600, 0, "dax0.0", 32);
        /* the daemon restarted: seq 1 again, new pid */
        batch(f, "hosta", BOOT_A, 101, T0 + 5400, 1, "coldplug", NULL, 8, 500000, 0);
        node(f, "hosta", BOOT_A, 101, T0 + 5400, 1, 0, 0, "online", 8, 500000);
        fclose(f);
        return buf;
}

static char *export_host_b(void) {
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);

        assert_non_null(f);
        batch(f, "hostb", BOOT_B, 200, T0 + 1800, 1, "udev", NULL, 8, 1000000, 0);
        latency(f, 0, 1100000);         /* an older daemon's record: no first block time */
        node(f, "hostb", BOOT_B, 200, T0 + 1800, 1, 0, 0, "online", 8, 1000000);
        batch(f, "hostb", BOOT_B, 200, T0 + 7200, 2, "once", NULL, 8, 2000000, 0);
        node(f, "hostb", BOOT_B, 200, T0 + 7200, 2, 1, 1, "online", 8, 2000000);
        fclose(f);
        return buf;
}

static int setup(void **state) {
        char tmpl[] = "/tmp/memonline-jr-XXXXXX";
        _cleanup_free_ char *a = NULL, *b = NULL, *pb = NULL;
        struct fixture *fx;

        fx = calloc(1, sizeof(*fx));
        assert_non_null(fx);
        *state = fx;
        if (!journal_remote())
                return 0;       /* the report tests skip themselves */
        assert_non_null(mkdtemp(tmpl));
        fx->dir = strdup(tmpl);
        assert_true(asprintf(&fx->file_a, "%s/remote-hosta.journal", fx->dir) > 0);
        assert_true(asprintf(&pb, "%s/remote-hostb.journal", fx->dir) > 0);
        a = export_host_a();
        b = export_host_b();
        make_journal(a, fx->file_a);
        make_journal(b, pb);
        return 0;
}

static void rm_rf(const char *dir) {
        _cleanup_free_ char *cmd = NULL;

        if (dir && startswith(dir, "/tmp/memonline-jr-") && asprintf(&cmd, "rm -rf '%s'", dir) > 0)
                (void) !system(cmd);
}

static int teardown(void **state) {
        struct fixture *fx = *state;

        if (!fx)
                return 0;
        rm_rf(fx->dir);
        free(fx->dir);
        free(fx->file_a);
        free(fx);
        return 0;
}

/* ---- running the subcommands ---------------------------------------------- */

/* Run report with a NULL-terminated argument list; output in *ret_out. */
static int run_va(char **ret_out, va_list ap) {
        char *argv[32] = { (char *) "report" };
        int argc = 1, r;
        char *buf = NULL;
        size_t n = 0;
        FILE *out;

        for (const char *a; (a = va_arg(ap, const char *)); )
                argv[argc++] = (char *) a;
        out = open_memstream(&buf, &n);
        assert_non_null(out);
        r = journal_report_main(argc, argv, out);
        fclose(out);
        *ret_out = buf;
        return r;
}

static int run_report(char **ret_out, ...) {
        va_list ap;
        int r;

        va_start(ap, ret_out);
        r = run_va(ret_out, ap);
        va_end(ap);
        return r;
}

static unsigned count_lines(const char *s, const char *needle) {
        unsigned n = 0;

        for (const char *p = s; p && *p; ) {
                const char *e = strchr(p, '\n');
                size_t len = e ? (size_t) (e - p) : strlen(p);

                if (!needle || memmem(p, len, needle, strlen(needle)))
                        n++;
                p = e ? e + 1 : p + len;
        }
        return n;
}

/* Section of the table output from a heading up to the next blank line. */
static char *section(const char *s, const char *heading) {
        const char *p = strstr(s, heading), *e;

        if (!p)
                return NULL;
        e = strstr(p, "\n\n");
        return strndup(p, e ? (size_t) (e - p + 1) : strlen(p));
}

/* The "Per node:" row of host and node, copied. */
static char *node_row(const char *out, const char *host, int nd) {
        _cleanup_free_ char *sec = section(out, "Per node:");

        for (const char *p = sec; p && *p; ) {
                const char *e = strchr(p, '\n');
                char h[64];
                int n;

                if (sscanf(p, "%63s %d", h, &n) == 2 && streq(h, host) && n == nd)
                        return strndup(p, e ? (size_t) (e - p) : strlen(p));
                p = e ? e + 1 : p + strlen(p);
        }
        return NULL;
}

/* Export text a test writes into a memstream, then into fx->dir/NAME.journal. */
struct export {
        char *text;
        size_t n;
        FILE *f;
};

static FILE *export_begin(struct export *x) {
        *x = (struct export) {};
        x->f = open_memstream(&x->text, &x->n);
        assert_non_null(x->f);
        return x->f;
}

/* The journal file's path; the caller unlinks and frees it. */
static char *export_to_journal(struct export *x, const struct fixture *fx, const char *name) {
        char *path;

        assert_int_equal(fclose(x->f), 0);
        assert_true(asprintf(&path, "%s/%s.journal", fx->dir, name) > 0);
        make_journal_n(x->text, x->n, path);
        free(x->text);
        return path;
}

/* ---- hostile records -------------------------------------------------------- */

/* One field; values with a newline in the export format's binary form, as journald exports them. */
static void field(FILE *f, const char *name, const char *value) {
        uint64_t len = strlen(value);
        unsigned char le[8];

        if (!strchr(value, '\n')) {
                fprintf(f, "%s=%s\n", name, value);
                return;
        }
        for (unsigned i = 0; i < 8; i++)
                le[i] = (unsigned char) (len >> (8 * i));
        fprintf(f, "%s\n", name);
        fwrite(le, 1, sizeof(le), f);
        fprintf(f, "%s\n", value);
}

#define EVIL_HOST "evil\x1b]0;owned\x07host"
#define EVIL_FORGED "\n2023-11-14 22:13:20  forged     1     0.12    0.100   1.00     1      0"

/* Every text field of every record kind carries escape sequences, C1, bidi, invalid UTF-8 or a newline. */
static char *export_hostile(size_t *ret_len) {
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);

        assert_non_null(f);
        head(f, EVIL_HOST, BOOT_A, 66, T0, MESSAGE_ID_BATCH);
        field(f, "MEMONLINE_BATCH", "1");
        field(f, "MEMONLINE_TRIGGER", "udev" EVIL_FORGED);
        field(f, "MEMONLINE_DEVICE", "dax0.0\x1b[2J\x1b[H");
        field(f, "MEMONLINE_NAMESPACE", "ns\xc2\x9b" "31m");
        field(f, "MEMONLINE_REGION", "region\xff\xfe");
        counters(f, 8, 1000000, 1);
        fputc('\n', f);
        head(f, EVIL_HOST, BOOT_A, 66, T0, MESSAGE_ID_NODE);
        field(f, "MEMONLINE_BATCH", "1");
        field(f, "MEMONLINE_NODE", "0");
        field(f, "MEMONLINE_ZONE", "online\x1b[31m");
        field(f, "MEMONLINE_CPUS", "0-3\r");
        counters(f, 8, 1000000, 1);
        fputc('\n', f);
        head(f, EVIL_HOST, BOOT_A, 66, T0, MESSAGE_ID_FAILURE);
        field(f, "MEMONLINE_BATCH", "1");
        field(f, "MEMONLINE_BLOCK", "memory1\x1b]52;c;ZXZpbA==\x07");
        field(f, "MEMONLINE_NODE", "0");
        field(f, "MEMONLINE_ERRNO", "16");
        field(f, "MEMONLINE_ERRNO_NAME", "EBUSY\x9b" "2J");
        field(f, "MESSAGE", "busy \xe2\x80\xae" "desrever" EVIL_FORGED);
        fputc('\n', f);
        head(f, EVIL_HOST, BOOT_A, 66, T0, MESSAGE_ID_DEVICE);
        field(f, "MEMONLINE_DEVICE", "dax0.0\x1b[2J\x1b[H");
        field(f, "MEMONLINE_NAMESPACE", "ns\x7f");
        field(f, "MEMONLINE_REGION", "region" EVIL_FORGED);
        field(f, "MEMONLINE_BLOCKS", "8");
        fputc('\n', f);
        fclose(f);
        *ret_len = n;
        return buf;
}

/* Nothing in s acts on a terminal: well-formed UTF-8, no control but the line ends, no bidi. */
static void assert_inert(const char *s) {
        assert_inert_text("report", s, false);
}

static void test_hostile_fields(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *text = NULL, *path = NULL, *out = NULL, *v = NULL;
        char *saved;
        size_t text_len;

        if (!fx->dir)
                skip();

        text = export_hostile(&text_len);
        assert_true(asprintf(&path, "%s/hostile.journal", fx->dir) > 0);
        make_journal_n(text, text_len, path);
        /* UTF-8 lets the most through; a C locale escapes all non-ASCII on top */
        saved = env_set("LC_ALL", "C.UTF-8");

        assert_int_equal(run_report(&out, "--file", path, "--no-color", NULL), 0);
        assert_inert(out);
        /* the batch table: header, one row, totals: the newline forged no row */
        {
                _cleanup_free_ char *table = section(out, "TIME");

                assert_int_equal(count_lines(table, NULL), 3);
                assert_int_equal(count_lines(out, "forged"), 1);
        }
        assert_non_null(strstr(out, "region\\x0a2023-11-14"));
        assert_non_null(strstr(out, "dax0.0\\x1b[2J"));
        free(out);

        assert_int_equal(run_report(&out, "--file", path, "--failures", "--no-color", NULL), 0);
        assert_inert(out);
        assert_int_equal(count_lines(out, NULL), 2);    /* header + one failure */
        assert_non_null(strstr(out, "evil\\x1b]0;owned\\x07host"));
        assert_non_null(strstr(out, "memory1\\x1b]52;c;ZXZpbA==\\x07"));
        assert_non_null(strstr(out, "EBUSY\\x9b2J"));
        assert_non_null(strstr(out, "busy \\xe2\\x80\\xaedesrever"));
        free(out);

        /* raw and the JSON document: smartcols encodes; what it leaves raw in JSON, table_print_json_members() */
        assert_int_equal(run_report(&out, "--file", path, "-r", "-o", "+MACHINE,NODES", NULL), 0);
        assert_inert(out);
        assert_int_equal(count_lines(out, NULL), 2);
        free(out);
        assert_int_equal(run_report(&out, "--file", path, "-J", NULL), 0);
        assert_inert(out);
        free(v);
        v = jq(out, "[.batches[0].trigger, .conversions[0].namespace, .conversions[0].region] | @csv");
        /* decoded: ESC, the newline and DEL (which smartcols would print raw) come back */
        assert_string_equal(v, "\"dax0.0\x1b[2J\x1b[H\",\"ns\x7f\",\"region" EVIL_FORGED "\"");
        free(v);
        v = NULL;
        free(out);
        assert_int_equal(run_report(&out, "--file", path, "--failures", "-r", NULL), 0);
        assert_inert(out);
        assert_int_equal(count_lines(out, NULL), 2);
        free(out);

        /* JSON: escaped, inert, and the values decode back to what was logged */
        assert_int_equal(run_report(&out, "--file", path, "--json-lines", NULL), 0);
        assert_inert(out);
        assert_int_equal(count_lines(out, NULL), 1);
        v = jq(out, "[.host == \"evil\\u001b]0;owned\\u0007host\", .trigger == \"udev" EVIL_FORGED "\","
                    " .nodes[0].zone == \"online\\u001b[31m\", .region] | @csv");
        assert_string_equal(v, "true,true,true,\"region\xef\xbf\xbd\xef\xbf\xbd\"");
        free(out);
        assert_int_equal(run_report(&out, "--file", path, "--failures", "--json-lines", NULL), 0);
        assert_inert(out);
        assert_int_equal(count_lines(out, NULL), 1);

        env_restore("LC_ALL", saved);
        unlink(path);
}

/* A record's head with HOSTILE_TEXT as the host name. */
static void hostile_head(FILE *f, const char *id) {
        fprintf(f, "__REALTIME_TIMESTAMP=%" PRIu64 "\n__MONOTONIC_TIMESTAMP=%" PRIu64 "\n_BOOT_ID=%s\n_PID=77\n"
                "_COMM=memonlined\n_UID=0\nMESSAGE_ID=%s\n", USEC(T0), USEC(100), BOOT_A, id);
        field(f, "_HOSTNAME", HOSTILE_TEXT);
}

/* HOSTILE_TEXT in every text field of every record kind. */
static char *export_every_field_hostile(size_t *ret_len) {
        static const struct {
                const char *id, *fixed;
                const char *hostile[5];
                bool counters;
        } records[] = {
                { MESSAGE_ID_BATCH, "MEMONLINE_BATCH=1\n", { "MEMONLINE_TRIGGER", "MEMONLINE_DEVICE",
                  "MEMONLINE_NAMESPACE", "MEMONLINE_REGION", "MEMONLINE_NODES" }, true },
                { MESSAGE_ID_NODE, "MEMONLINE_BATCH=1\nMEMONLINE_NODE=0\nMEMONLINE_WRITER_NODE=0\n",
                  { "MEMONLINE_ZONE", "MEMONLINE_CPUS" }, true },
                { MESSAGE_ID_FAILURE, "MEMONLINE_BATCH=1\nMEMONLINE_NODE=0\nMEMONLINE_ERRNO=16\nMEMONLINE_ATTEMPTS=1\n",
                  { "MEMONLINE_BLOCK", "MEMONLINE_ERRNO_NAME", "MESSAGE" }, false },
                { MESSAGE_ID_DEVICE, "MEMONLINE_BLOCKS=8\nMEMONLINE_BYTES=1073741824\n",
                  { "MEMONLINE_DEVICE", "MEMONLINE_NAMESPACE", "MEMONLINE_REGION" }, false },
        };
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);

        assert_non_null(f);
        for (size_t i = 0; i < ELEMENTSOF(records); i++) {
                hostile_head(f, records[i].id);
                fputs(records[i].fixed, f);
                for (size_t k = 0; k < ELEMENTSOF(records[i].hostile) && records[i].hostile[k]; k++)
                        field(f, records[i].hostile[k], HOSTILE_TEXT);
                if (records[i].counters)
                        counters(f, 8, 1000000, 1);
                fputc('\n', f);
        }
        fclose(f);
        *ret_len = n;
        return buf;
}

/*
 * Every output mode of report, in a UTF-8 and a C locale, over records
 * whose every text field is HOSTILE_TEXT: nothing unsafe comes out raw
 * (in the C locale nothing but ASCII), and the JSON values decode back to
 * what was logged, with U+FFFD for the bytes that are no UTF-8.
 */
static void test_hostile_every_mode(void **state) {
        static const struct {
                const char *args[4];
                const char *decoded;            /* jq filter of values that must decode to HOSTILE_DECODED */
        } modes[] = {
                { { NULL }, NULL },
                { { "--failures" }, NULL },
                { { "-r", "-o", "+MACHINE,BOOT,NODES" }, NULL },
                { { "--failures", "-r", "-o", "+MACHINE,MESSAGE" }, NULL },
                { { "-J", "-o", "+NODES" }, ".batches[0].host, .batches[0].trigger, .batches[0].nodes, .nodes[0].host,"
                                              " .hosts[0].host, .conversions[0].device, .conversions[0].region" },
                { { "--failures", "-J", "-o", "+MESSAGE" }, ".failures[0].host, .failures[0].block,"
                                                            " .failures[0].errno, .failures[0].message" },
                { { "--json-lines" }, ".host, .trigger, .device, .namespace, .nodes[0].zone, .nodes[0].cpus,"
                                      " .failures[0].message, .conversion.region" },
                { { "--failures", "--json-lines" }, ".host, .block, .errno_name, .message" },
        };
        static const char *const locales[] = { "C.UTF-8", "C" };
        struct fixture *fx = *state;
        _cleanup_free_ char *text = NULL, *path = NULL, *svg = NULL;
        char *saved = env_set("LC_ALL", "C");
        size_t text_len;

        if (!fx->dir)
                skip();

        text = export_every_field_hostile(&text_len);
        assert_true(asprintf(&path, "%s/every-mode.journal", fx->dir) > 0);
        assert_true(asprintf(&svg, "%s/every-mode.svg", fx->dir) > 0);
        make_journal_n(text, text_len, path);
        for (size_t l = 0; l < ELEMENTSOF(locales); l++) {
                bool ascii = !streq(locales[l], "C.UTF-8");

                setenv("LC_ALL", locales[l], 1);
                for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                        _cleanup_free_ char *out = NULL, *label = NULL;
                        const char *const *a = modes[m].args;

                        assert_int_equal(run_report(&out, "--file", path, "--no-color", a[0], a[1], a[2], a[3], NULL), 0);
                        assert_true(asprintf(&label, "%s %s %s", locales[l], strempty(a[0]), strempty(a[1])) > 0);
                        /* raw is smartcols' \xNN for every byte that is not printable ASCII, in any locale */
                        assert_inert_text(label, out, ascii || (a[0] && streq(a[0], "-r")) ||
                                                      (a[1] && streq(a[1], "-r")));
                        if (modes[m].decoded) {
                                _cleanup_free_ char *got = jq(out, modes[m].decoded), *want = NULL;
                                size_t n_values = 1;

                                for (const char *c = modes[m].decoded; *c; c++)
                                        n_values += *c == ',';
                                /* jq prints each value on its own line */
                                want = calloc(n_values, sizeof(HOSTILE_DECODED));
                                assert_non_null(want);
                                for (size_t k = 0; k < n_values; k++)
                                        strcat(strcat(want, k > 0 ? "\n" : ""), HOSTILE_DECODED);
                                if (!streq(got, want))
                                        fail_msg("%s: %s decodes to\n%s", label, modes[m].decoded, got);
                        }
                }
                {
                        _cleanup_free_ char *out = NULL, *drawn = NULL;

                        unlink(svg);
                        assert_int_equal(run_report(&out, "--file", path, "--svg", svg, NULL), 0);
                        drawn = read_all(open(svg, O_RDONLY | O_CLOEXEC));
                        assert_inert_text("svg", drawn, ascii);
                        /* the host label's markup is text */
                        assert_non_null(strstr(drawn, "x\\\\x1b&lt;&amp;&gt;&quot;&apos;!"));
                }
        }
        env_restore("LC_ALL", saved);
        unlink(svg);
        unlink(path);
}

/* ---- report tests ---------------------------------------------------------- */

static void test_table_several_hosts(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL, *row = NULL, *nodes = NULL, *hosts = NULL, *slow = NULL;
        const char *first_a, *first_b;

        if (!fx->dir)
                skip();

        assert_int_equal(run_report(&out, "--directory", fx->dir, "--no-color", "--no-pager", NULL), 0);
        /* five batches: hosta's seq 1 twice (pid 100 and 101) must not merge; sizes as lsmem prints them */
        assert_non_null(strstr(out, "5 batches, 72 blocks, 9G, 1 failed"));
        assert_non_null(strstr(out, "HOST"));
        {
                _cleanup_free_ char *table = section(out, "TIME");

                assert_int_equal(count_lines(table, "2023-11-"), 5);
        }
        assert_null(strstr(out, "\033["));

        /* newest last: hosta 22:13:20, hostb 22:43:20, ..., hostb 00:13:20; one space between columns */
        first_a = strstr(out, "2023-11-14 22:13:20 hosta");
        first_b = strstr(out, "2023-11-15 00:13:20 hostb");
        assert_non_null(first_a);
        assert_non_null(first_b);
        assert_true(first_a < first_b);

        row = line_with(out, "dax0.0");
        assert_non_null(row);
        /* dax batch: 32 blocks, 4 GiB, 2.000 s, 2.00 GiB/s, p99 125000 µs, 1 failure */
        {
                char t1[16], t2[16], host[16], trig[16], gib[16], wall[16], rate[16];
                unsigned blocks, p99, failed;

                assert_int_equal(sscanf(row, "%15s %15s %15s %15s %u %15s %15s %15s %u %u", t1, t2, host, trig, &blocks,
                                        gib, wall, rate, &p99, &failed), 10);
                assert_string_equal(host, "hosta");
                assert_int_equal(blocks, 32);
                assert_string_equal(gib, "4G");
                assert_string_equal(wall, "2.000");
                assert_string_equal(rate, "2.00");
                assert_int_equal(p99, 125000);
                assert_int_equal(failed, 1);
        }

        nodes = section(out, "Per node:");
        assert_non_null(nodes);
        /* hosta node 0: batches 1 and the restarted daemon's batch 1 */
        {
                _cleanup_free_ char *l = node_row(out, "hosta", 0);
                char host[16], gib[16], secs[16], rate[16];
                unsigned nd, batches, blocks;

                assert_non_null(l);
                assert_int_equal(sscanf(l, "%15s %u %u %u %15s %15s %15s", host, &nd, &batches, &blocks, gib, secs,
                                        rate), 7);
                assert_int_equal(nd, 0);
                assert_int_equal(batches, 2);
                assert_int_equal(blocks, 16);
                assert_string_equal(gib, "2G");
                assert_string_equal(secs, "1.000");
                assert_string_equal(rate, "2.00");
        }
        assert_int_equal(count_lines(nodes, "host"), 5);    /* a0 a1 a2 b0 b1 */

        hosts = section(out, "Per host:");
        assert_non_null(hosts);
        slow = line_with(hosts, "slowest");
        assert_non_null(slow);
        /* hostb: batches at 1.00 and 0.50 GiB/s, median 0.75 */
        assert_true(startswith(slow, "hostb"));
        assert_non_null(strstr(slow, "0.75"));
        assert_int_equal(count_lines(hosts, "slowest"), 1);

        assert_non_null(strstr(out, "Device conversions:"));
        assert_non_null(strstr(out, "namespace0.0"));
}

static void test_json(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL, *v = NULL;

        if (!fx->dir)
                skip();

        assert_int_equal(run_report(&out, "-D", fx->dir, "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 5);
        free(v);
        v = jq(out, "select(.type == \"batch\") | .host");
        assert_string_equal(v, "hosta\nhostb\nhosta\nhosta\nhostb");
        free(v);
        /*
         * the device record has no seq: it joins the batch of the same daemon that onlined that device.
         * jq 1.7 (Debian 13) prints a number as written ("2.000"), 1.6 canonically: "+ 0" makes both canonical.
         */
        v = jq(out, "select(.conversion.device == \"dax0.0\") | [.batch, .device, .blocks, .bytes, .failed,"
                    " .node_count, .nodes[0].node, .nodes[0].writer_node, .failures[0].errno_name,"
                    " .failures[0].block, .conversion.bind_usec, .boot_id, .time, .gibps + 0] | @csv");
        assert_string_equal(v, "2,\"dax0.0,dax1.0\",32,4294967296,1,1,2,1,\"EBUSY\",\"memory300\",300000,"
                               "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1\",\"2023-11-14T23:13:20.000000Z\",2");
        free(v);
        /* the failure message has quotes: escaped and intact */
        v = jq(out, ".failures[]? | .message");
        assert_string_equal(v, "Failed to online memory300: \"Device or resource busy\"");
        free(v);
        v = jq(out, "select(.host == \"hosta\" and .batch == 1) | [.pid, (.nodes | length)] | @csv");
        assert_string_equal(v, "100,2\n101,1");
        free(v);
        /* First and last block after the first event, per batch and per node; absent when not recorded. */
        v = jq(out, "select(.type == \"batch\") | [.host, .batch, .first_latency_usec, .latency_usec,"
                    " .nodes[0].first_latency_usec, .nodes[1].latency_usec] | @csv");
        assert_string_equal(v, "\"hosta\",1,250000,1250000,250000,1250000\n\"hostb\",1,,1100000,,\n"
                               "\"hosta\",2,,,,\n\"hosta\",1,,,,\n\"hostb\",2,,,,");
}

static void test_filters(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL;

        if (!fx->dir)
                skip();

        assert_int_equal(run_report(&out, "-D", fx->dir, "--host", "hostb", "--no-color", NULL), 0);
        assert_non_null(strstr(out, "2 batches, 16 blocks"));
        assert_null(strstr(out, "HOST"));       /* one host: no host column, no host comparison */
        assert_null(strstr(out, "Per host:"));
        assert_null(strstr(out, "hosta"));
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "--node", "2", "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 1);
        assert_non_null(strstr(out, "\"device\":\"dax0.0,dax1.0\""));
        free(out);

        /* --node 1 keeps hosta batch 1 and hostb batch 2, and only node 1's records */
        assert_int_equal(run_report(&out, "-D", fx->dir, "--node", "1", "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 2);
        assert_int_equal(count_lines(out, "\"node\":0"), 0);
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "--since", "2023-11-14 23:00:00", "--until",
                                    "2023-11-15 00:00:00", "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 2);
        assert_int_equal(count_lines(out, "\"time\":\"2023-11-14T23:13:20"), 1);
        assert_int_equal(count_lines(out, "\"time\":\"2023-11-14T23:43:20"), 1);
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "--since", "2023-11-15", "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 1);
        free(out);

        /* journalctl's forms: ISO 8601 with a T, a zone, "ago" */
        assert_int_equal(run_report(&out, "-D", fx->dir, "-S", "2023-11-14T23:00:00", "-U", "2023-11-15T01:00+01:00",
                                    "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 2);
        free(out);
        /* a zone by name: 00:00 in Berlin is 23:00 UTC, 09:00 in Tokyo 00:00 UTC */
        assert_int_equal(run_report(&out, "-D", fx->dir, "-S", "2023-11-15 00:00 Europe/Berlin", "-U",
                                    "2023-11-15 09:00 Asia/Tokyo", "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 2);
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "-S", "2023-11-15 00:00 Europe/Nowhere", NULL), 2);
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "--since", "1 hour ago", "--json-lines", NULL), 0);
        assert_string_equal(out, "");
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "--since", "-1h30min", "--json-lines", NULL), 0);
        assert_string_equal(out, "");
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "--until", "-1h30min", "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 5);
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "--device", "dax0.0", "--no-color", NULL), 0);
        assert_non_null(strstr(out, "1 batches, 32 blocks"));
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "--device", "dax1.0", "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 1);
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "--device", "dax1", "--json-lines", NULL), 0);
        assert_string_equal(out, "");
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "--boot", BOOT_B, "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 2);
        assert_int_equal(count_lines(out, "\"host\":\"hostb\""), 2);
        free(out);

        /* nothing matches: success, no output */
        assert_int_equal(run_report(&out, "-D", fx->dir, "--host", "nohost", "--json-lines", NULL), 0);
        assert_string_equal(out, "");
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "--host", "nohost", NULL), 0);
        assert_string_equal(out, "");
}

/* -o chooses the columns, -r and -n are for scripts. */
static void test_columns(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL, *head = NULL, *v = NULL;

        if (!fx->dir)
                skip();

        assert_int_equal(run_report(&out, "-D", fx->dir, "-o", "time,BATCH,pid,Machine,size", "-n", NULL), 0);
        /* no headings, no summaries: five rows of five columns (one machine ID missing: "-") */
        assert_int_equal(count_lines(out, NULL), 5);
        head = line_with(out, "2023-11-14 22:13:20");
        assert_non_null(head);
        {
                char t1[16], t2[16], machine[40], size[16];
                unsigned batch, pid;

                assert_int_equal(sscanf(head, "%15s %15s %u %u %39s %15s", t1, t2, &batch, &pid, machine, size), 6);
                assert_int_equal(batch, 1);
                assert_int_equal(pid, 100);
                assert_string_equal(machine, "-");
                assert_string_equal(size, "2G");
        }
        free(out);

        /* +LIST adds to the defaults */
        assert_int_equal(run_report(&out, "-D", fx->dir, "-o", "+BOOT", "--no-color", NULL), 0);
        free(head);
        head = line_with(out, "TRIGGER");
        assert_non_null(head);
        assert_true(startswith(head, "TIME"));
        assert_non_null(strstr(head, "FAILED BOOT"));
        free(out);

        /* raw: the batch table only, one space between fields, blanks encoded */
        assert_int_equal(run_report(&out, "-D", fx->dir, "-r", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 6);
        assert_true(startswith(out, "TIME HOST TRIGGER BLOCKS SIZE WALL RATE P99 FAILED\n"));
        assert_non_null(strstr(out, "\n2023-11-14\\x2023:13:20 hosta dax0.0,dax1.0 32 4G 2.000 2.00 125000 1\n"));
        assert_null(strstr(out, "Per node"));
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "-r", "-n", "--bytes", "-o", "SIZE", NULL), 0);
        assert_string_equal(out, "2147483648\n1073741824\n4294967296\n1073741824\n1073741824\n");
        free(out);

        /* The time to the first and the last block: "-" where the record has none (old, or no event). */
        assert_int_equal(run_report(&out, "-D", fx->dir, "-r", "-o", "HOST,BATCH,FIRST,LATENCY", NULL), 0);
        assert_string_equal(out, "HOST BATCH FIRST LATENCY\nhosta 1 0.250 1.250\nhostb 1 - 1.100\nhosta 2 - -\n"
                                 "hosta 1 - -\nhostb 2 - -\n");
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "-J", "-o", "BATCH,FIRST,LATENCY", NULL), 0);
        /* in ms: jq 1.7 (Debian 13) keeps a number's literal text, 1.6 does not */
        v = jq(out, "def ms: if . == null then null else . * 1000 | round end; "
                    ".batches[] | [.batch, (.first | ms), (.latency | ms)] | @csv");
        assert_string_equal(v, "1,250,1250\n1,,1100\n2,,\n1,,\n2,,");
        free(v);
        v = NULL;
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "--failures", "-o", "BLOCK,ERRNUM,BATCH", "-r", NULL), 0);
        assert_string_equal(out, "BLOCK ERRNUM BATCH\nmemory300 16 2\n");
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "-o", "TIME,NOPE", NULL), REPORT_EXIT_USAGE);
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "-o", "BLOCK", NULL), REPORT_EXIT_USAGE);  /* a failure column */
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "-J", "-r", NULL), REPORT_EXIT_USAGE);
}

/* -J: one JSON document of every table, numbers as numbers. */
static void test_json_document(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL, *v = NULL;

        if (!fx->dir)
                skip();

        assert_int_equal(run_report(&out, "-D", fx->dir, "-J", NULL), 0);
        v = jq(out, "[(.batches | length), (.nodes | length), (.hosts | length), (.conversions | length)] | @csv");
        assert_string_equal(v, "5,5,2,1");
        free(v);
        /* jq 1.7 (Debian 13) prints a number as written ("2.000"), 1.6 canonically: "+ 0" makes both canonical. */
        v = jq(out, ".batches[] | select(.trigger == \"dax0.0,dax1.0\") | [.host, .blocks, .size, .wall + 0, .rate + 0,"
                    " .p99, .failed] | @csv");
        assert_string_equal(v, "\"hosta\",32,\"4G\",2,2,125000,1");
        free(v);
        v = jq(out, ".hosts[] | select(.slowest) | [.host, .\"median-rate\" + 0, .batches] | @csv");
        assert_string_equal(v, "\"hostb\",0.75,2");
        free(v);
        v = jq(out, "[.nodes[] | select(.host == \"hosta\") | .node] | @csv");
        assert_string_equal(v, "0,1,2");
        free(v);
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "-J", "--bytes", NULL), 0);
        v = jq(out, "[.batches[0].size, .conversions[0].size, .conversions[0].bind + 0] | @csv");
        assert_string_equal(v, "2147483648,4294967296,0.3");
        free(v);
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "--failures", "-J", NULL), 0);
        v = jq(out, ".failures[] | [.host, .block, .node, .errno, .attempts] | @csv");
        assert_string_equal(v, "\"hosta\",\"memory300\",2,\"EBUSY\",5");
        free(v);
        free(out);

        /* In a zone of the reader's own, a JSON time is UTC all the same and says so; the table's is local. */
        assert_int_equal(setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1), 0);
        tzset();
        assert_int_equal(run_report(&out, "-D", fx->dir, "-J", NULL), 0);
        v = jq(out, "[.batches[0].time, .conversions[0].time] | @csv");
        assert_string_equal(v, "\"2023-11-14T22:13:20.000000Z\",\"2023-11-14T23:13:20.000000Z\"");
        free(v);
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "--failures", "-J", NULL), 0);
        v = jq(out, ".failures[0].time");
        assert_string_equal(v, "2023-11-14T23:13:20.000000Z");
        free(v);
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "-r", "-n", "-o", "TIME", NULL), 0);
        assert_true(startswith(out, "2023-11-14\\x2023:13:20\n"));   /* raw escapes the space */
        free(out);
        assert_int_equal(setenv("TZ", "UTC", 1), 0);
        tzset();

        /* nothing matches: still a document */
        assert_int_equal(run_report(&out, "-D", fx->dir, "--host", "nohost", "-J", NULL), 0);
        v = jq(out, "[(.batches | length), (.nodes | length), (.hosts | length)] | @csv");
        assert_string_equal(v, "0,0,0");
}

/* Colour as systemd decides it: SYSTEMD_COLORS forces it either way, even into a pipe. */
static void test_colors(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL;

        if (!fx->dir)
                skip();

        assert_int_equal(run_report(&out, "-D", fx->dir, NULL), 0);
        assert_null(strstr(out, "\033["));     /* not a terminal */
        free(out);
        setenv("SYSTEMD_COLORS", "1", 1);
        assert_int_equal(run_report(&out, "-D", fx->dir, NULL), 0);
        assert_non_null(strstr(out, "\033[31m"));      /* the failed batch */
        assert_non_null(strstr(out, "\033[1m"));
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "--no-color", NULL), 0);
        assert_null(strstr(out, "\033["));
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "-J", NULL), 0);
        assert_null(strstr(out, "\033["));
        free(out);
        setenv("SYSTEMD_COLORS", "0", 1);
        assert_int_equal(run_report(&out, "-D", fx->dir, NULL), 0);
        assert_null(strstr(out, "\033["));
        unsetenv("SYSTEMD_COLORS");
}

static void test_single_file(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL;

        if (!fx->dir)
                skip();

        assert_int_equal(run_report(&out, "--file", fx->file_a, "--no-color", NULL), 0);
        assert_non_null(strstr(out, "3 batches, 56 blocks, 7G, 1 failed"));
        assert_null(strstr(out, "hostb"));
        assert_null(strstr(out, "Per host:"));
        assert_non_null(strstr(out, "coldplug"));
}

static void test_failures(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL, *row = NULL, *v = NULL;
        char t1[16], t2[16], host[16], block[16], err[16];
        unsigned nd, attempts;

        if (!fx->dir)
                skip();

        assert_int_equal(run_report(&out, "-D", fx->dir, "--failures", "--no-color", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 2);    /* header + one failure */
        row = line_with(out, "memory300");
        assert_non_null(row);
        assert_int_equal(sscanf(row, "%15s %15s %15s %15s %u %15s %u", t1, t2, host, block, &nd, err, &attempts), 7);
        assert_string_equal(host, "hosta");
        assert_int_equal(nd, 2);
        assert_string_equal(err, "EBUSY");
        assert_int_equal(attempts, 5);
        assert_non_null(strstr(row, "Device or resource busy"));
        free(out);

        assert_int_equal(run_report(&out, "-D", fx->dir, "--failures", "--json-lines", NULL), 0);
        v = jq(out, "[.block, .node, .errno, .attempts, .batch] | @csv");
        assert_string_equal(v, "\"memory300\",2,16,5,2");
        free(out);

        /* node 0 never failed */
        assert_int_equal(run_report(&out, "-D", fx->dir, "--failures", "--node", "0", NULL), 0);
        assert_string_equal(out, "");
}

static void test_bars(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL;
        const char *saved = getenv("LC_ALL");
        _cleanup_free_ char *keep = saved ? strdup(saved) : NULL;

        if (!fx->dir)
                skip();

        setenv("LC_ALL", "C.UTF-8", 1);
        assert_int_equal(run_report(&out, "-D", fx->dir, NULL), 0);
        assert_non_null(strstr(out, "\u2588"));
        /* the column is P99 in every locale now (a name -o takes); its unit, µs, is in --help */
        assert_non_null(strstr(out, " P99 "));
        free(out);
        setenv("LC_ALL", "C", 1);
        assert_int_equal(run_report(&out, "-D", fx->dir, NULL), 0);
        assert_null(strstr(out, "\u2588"));
        for (const char *p = out; *p; p++)
                assert_true((unsigned char) *p < 0x80);
        assert_non_null(strstr(out, "####"));
        /* hosta node 0 at 2 GiB/s draws the full bar, hostb node 1 at 0.5 a quarter */
        {
                _cleanup_free_ char *full = node_row(out, "hosta", 0), *quarter = node_row(out, "hostb", 1);

                assert_non_null(full);
                assert_non_null(quarter);
                assert_non_null(strstr(full, "##############################"));
                assert_null(strstr(quarter, "#########"));
                assert_non_null(strstr(quarter, "#######"));
        }
        if (keep)
                setenv("LC_ALL", keep, 1);
        else
                unsetenv("LC_ALL");
}

/* Usage errors exit 2 (they exited 1, like every other failure, before exit statuses were told apart). */
static void test_usage_errors(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *out = NULL;

        if (!fx->dir)
                skip();

        assert_int_equal(run_report(&out, "--bogus", NULL), REPORT_EXIT_USAGE);
        free(out);
        assert_int_equal(run_report(&out, "--since", "yesterdayish", NULL), REPORT_EXIT_USAGE);
        free(out);
        assert_int_equal(run_report(&out, "--node", "x", NULL), REPORT_EXIT_USAGE);
        free(out);
        assert_int_equal(run_report(&out, "-D", fx->dir, "--file", fx->file_a, NULL), REPORT_EXIT_USAGE);
        free(out);
        assert_int_equal(run_report(&out, "--boot", "nothex", NULL), REPORT_EXIT_USAGE);
        free(out);
        assert_int_equal(run_report(&out, "-D", "/nonexistent/memonline", NULL), REPORT_EXIT_FAILURE);
        free(out);
        assert_int_equal(run_report(&out, "--file", "/nonexistent/memonline.journal", NULL), REPORT_EXIT_FAILURE);
}

/*
 * Run the report as another user (nobody, when we are root: root reads
 * every file), with stderr captured; its exit status, stdout in *ret_out,
 * stderr in *ret_err.
 */
static int run_report_unprivileged(char **ret_out, char **ret_err, const char *opt, const char *path) {
        char err_tmpl[] = "/tmp/memonline-jr-err-XXXXXX", out_tmpl[] = "/tmp/memonline-jr-out-XXXXXX";
        int err_fd = mkstemp(err_tmpl), out_fd = mkstemp(out_tmpl), status;
        pid_t pid;

        assert_true(err_fd >= 0 && out_fd >= 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char *argv[] = { (char *) "report", (char *) opt, (char *) path, (char *) "--no-color", NULL };
                FILE *out;

                if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                                       setresuid(65534, 65534, 65534) < 0))
                        _exit(99);
                dup2(err_fd, STDERR_FILENO);
                out = fdopen(out_fd, "w");
                _exit(out ? journal_report_main(4, argv, out) : 98);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        *ret_err = read_all(err_fd);
        *ret_out = read_all(out_fd);
        unlink(err_tmpl);
        unlink(out_tmpl);
        return WEXITSTATUS(status);
}

/* A journal the user cannot read is an error, as with journalctl; some unreadable files, a partial report. */
static void test_unreadable(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *dir = NULL, *a = NULL, *b = NULL, *text_a = NULL, *text_b = NULL;
        char *out = NULL, *err = NULL;
        /* as root the other user is nobody, who cannot read a 0600 file; as a user, not even the owner reads 0000 */
        mode_t closed = geteuid() == 0 ? 0600 : 0000;

        if (!fx->dir)
                skip();

        assert_true(asprintf(&dir, "/tmp/memonline-jr-perm-%d", (int) getpid()) > 0);
        assert_int_equal(mkdir(dir, 0755), 0);
        assert_true(asprintf(&a, "%s/remote-hosta.journal", dir) > 0);
        assert_true(asprintf(&b, "%s/remote-hostb.journal", dir) > 0);
        text_a = export_host_a();
        text_b = export_host_b();
        make_journal(text_a, a);
        make_journal(text_b, b);
        assert_int_equal(chmod(a, closed), 0);
        assert_int_equal(chmod(b, closed), 0);

        /* nothing readable: an error, not "no records" */
        assert_int_equal(run_report_unprivileged(&out, &err, "-D", dir), REPORT_EXIT_FAILURE);
        assert_string_equal(out, "");
        assert_non_null(strstr(err, "memonlined report: no journal files were opened due to insufficient permissions"));
        assert_null(strstr(err, "No memonlined records found"));
        free(out);
        free(err);
        assert_int_equal(run_report_unprivileged(&out, &err, "--file", a), REPORT_EXIT_FAILURE);
        assert_non_null(strstr(err, "insufficient permissions"));
        free(out);
        free(err);

        /* one of two readable: the report of that one, a warning, exit 64 */
        assert_int_equal(chmod(b, 0644), 0);
        assert_int_equal(run_report_unprivileged(&out, &err, "-D", dir), REPORT_EXIT_PARTIAL);
        assert_non_null(strstr(out, "2 batches, 16 blocks"));
        assert_non_null(strstr(err, "1 journal file was not opened due to insufficient permissions"));
        free(out);
        free(err);

        /* all readable again: exit 0, no warning */
        assert_int_equal(chmod(a, 0644), 0);
        assert_int_equal(run_report_unprivileged(&out, &err, "-D", dir), REPORT_EXIT_SUCCESS);
        assert_non_null(strstr(out, "5 batches"));
        assert_null(strstr(err, "not opened"));
        free(out);
        free(err);

        unlink(a);
        unlink(b);
        rmdir(dir);
}

#define MACHINE_1 "11111111111111111111111111111111"
#define MACHINE_2 "22222222222222222222222222222222"
#define MACHINE_3 "33333333333333333333333333333333"

/* One batch with one node record from a machine and boot. */
static void machine_boot_batch(FILE *f, const char *machine, const char *boot, const char *host, unsigned seq,
                               uint64_t sec, unsigned blocks) {
        char source[128];

        snprintf(source, sizeof(source), "_MACHINE_ID=%s\n_COMM=memonlined\n_UID=0\n", machine);
        head_from(f, host, boot, 500, sec, MESSAGE_ID_BATCH, source);
        fprintf(f, "MEMONLINE_BATCH=%u\nMEMONLINE_TRIGGER=udev\n", seq);
        counters(f, blocks, 1000000, 0);
        fputc('\n', f);
        head_from(f, host, boot, 500, sec, MESSAGE_ID_NODE, source);
        fprintf(f, "MEMONLINE_BATCH=%u\nMEMONLINE_NODE=0\nMEMONLINE_WRITER_NODE=0\nMEMONLINE_ZONE=online\n", seq);
        counters(f, blocks, 1000000, 0);
        fputc('\n', f);
}

static void machine_batch(FILE *f, const char *machine, const char *host, unsigned seq, uint64_t sec, unsigned blocks) {
        machine_boot_batch(f, machine, BOOT_A, host, seq, sec, blocks);
}

#define BOOT_1A "1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define BOOT_1B "1bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define BOOT_1C "1ccccccccccccccccccccccccccccccc"
#define BOOT_2D "2ddddddddddddddddddddddddddddddd"
#define BOOT_2E "2eeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

/* The boot IDs of the batches -b selects (their first two digits, oldest batch first), or "rc=N". */
static char *boots_of(const char *path, const char *boot_arg, const char *boot_word) {
        _cleanup_free_ char *out = NULL;
        char *v;
        int r;

        r = boot_word ? run_report(&out, "--file", path, boot_arg, boot_word, "--json-lines", NULL)
                      : run_report(&out, "--file", path, boot_arg, "--json-lines", NULL);
        if (r != 0) {
                assert_true(asprintf(&v, "rc=%d", r) > 0);
                return v;
        }
        return jq(out, "[.boot_id[0:2]] | @csv");
}

/* -b counts the boots of the journal it reads, per machine, as journalctl does for one. */
static void test_boots(void **state) {
        static const struct { const char *arg, *word, *want; } cases[] = {
                { "-b", NULL, "\"2e\"\n\"1c\"" },            /* every machine's latest */
                { "-b", "0", "\"2e\"\n\"1c\"" },
                { "--boot=0", NULL, "\"2e\"\n\"1c\"" },
                { "-b", "-1", "\"2d\"\n\"1b\"" },
                { "--boot=-1", NULL, "\"2d\"\n\"1b\"" },
                { "-b", "1", "\"1a\"\n\"2d\"" },              /* the first */
                { "-b", "2", "\"1b\"\n\"2e\"" },
                { "-b", "-2", "\"1a\"" },                      /* machine 2 has two boots */
                { "-b", "-3", "rc=1" },                          /* nobody has four */
                { "-b", BOOT_1B, "\"1b\"" },
                { "-b", BOOT_1B "+1", "\"1c\"" },
                { "-b", BOOT_1B "-1", "\"1a\"" },
                { "-b", BOOT_1B "+2", "rc=1" },
                { "-b", BOOT_1B "x", "rc=2" },
                { "-b", "--1", "rc=2" },
        };
        struct fixture *fx = *state;
        _cleanup_free_ char *path = NULL;
        struct export x;
        FILE *f;

        if (!fx->dir)
                skip();

        f = export_begin(&x);
        /* machine 1: boots 1a, 1b, 1c; machine 2: 2d, 2e; interleaved in time */
        machine_boot_batch(f, MACHINE_1, BOOT_1A, "one", 1, T0, 8);
        machine_boot_batch(f, MACHINE_2, BOOT_2D, "two", 1, T0 + 50, 8);
        machine_boot_batch(f, MACHINE_1, BOOT_1B, "one", 1, T0 + 100, 8);
        machine_boot_batch(f, MACHINE_2, BOOT_2E, "two", 1, T0 + 150, 8);
        machine_boot_batch(f, MACHINE_1, BOOT_1C, "one", 1, T0 + 200, 8);
        path = export_to_journal(&x, fx, "boots");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *got = boots_of(path, cases[i].arg, cases[i].word);

                if (!streq(got, cases[i].want))
                        fail_msg("%s %s: got %s, want %s", cases[i].arg, strempty(cases[i].word), got, cases[i].want);
        }
        unlink(path);
}

/* Hosts are machines: cloned VMs that share a name stay apart, a renamed machine stays one. */
static void test_machine_ids(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *path = NULL, *out = NULL, *v = NULL;
        struct export x;
        FILE *f;

        if (!fx->dir)
                skip();

        f = export_begin(&x);
        machine_batch(f, MACHINE_1, "clone", 1, T0, 8);
        machine_batch(f, MACHINE_2, "clone", 1, T0 + 1, 16);
        machine_batch(f, MACHINE_3, "oldname", 1, T0 + 2, 8);
        machine_batch(f, MACHINE_3, "newname", 2, T0 + 3, 8);
        path = export_to_journal(&x, fx, "machines");

        assert_int_equal(run_report(&out, "--file", path, "--no-color", NULL), 0);
        {
                _cleanup_free_ char *hosts = section(out, "Per host:");
                _cleanup_free_ char *c1 = line_with(hosts, "clone/11111111"), *c2 = line_with(hosts, "clone/22222222");
                _cleanup_free_ char *renamed = line_with(hosts, "newname");

                assert_non_null(c1);
                assert_non_null(c2);
                assert_non_null(renamed);
                assert_int_equal(count_lines(hosts, NULL), 5);  /* heading, header, three machines */
                assert_null(strstr(hosts, "oldname"));
        }
        free(out);

        assert_int_equal(run_report(&out, "--file", path, "--json-lines", NULL), 0);
        v = jq(out, "[.host, .machine_id, .blocks] | @csv");
        assert_string_equal(v, "\"clone\",\"" MACHINE_1 "\",8\n\"clone\",\"" MACHINE_2 "\",16\n"
                               "\"newname\",\"" MACHINE_3 "\",8\n\"newname\",\"" MACHINE_3 "\",8");
        free(out);

        /* --host takes a machine ID too */
        assert_int_equal(run_report(&out, "--file", path, "--host", MACHINE_2, "--json-lines", NULL), 0);
        free(v);
        v = jq(out, ".blocks");
        assert_string_equal(v, "16");
        free(out);
        assert_int_equal(run_report(&out, "--file", path, "--host", "clone", "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 2);
        unlink(path);
}

/* By default only records journald stamped as memonlined's count. */
static void test_sources(void **state) {
        static const char *const sources[] = {
                "_SYSTEMD_UNIT=memonlined.service\n_UID=0\n",                  /* trusted */
                "_COMM=memonlined\n_UID=0\n",                                   /* trusted */
                "_EXE=/usr/local/sbin/memonlined\n_UID=0\n",                    /* trusted */
                "_COMM=memonlined\n_EXE=/home/mallory/memonlined\n_UID=1000\n", /* another user's */
                "_COMM=logger\n_EXE=/usr/bin/logger\n_UID=0\n",                  /* logger(1) */
                "_EXE=/tmp/notmemonlined\n_UID=0\n",
                "",                                                             /* no trusted fields */
        };
        struct fixture *fx = *state;
        _cleanup_free_ char *path = NULL, *out = NULL, *v = NULL;
        struct export x;
        FILE *f;

        if (!fx->dir)
                skip();

        f = export_begin(&x);
        for (unsigned i = 0; i < ELEMENTSOF(sources); i++) {
                head_from(f, "src", BOOT_A, 400, T0 + i, MESSAGE_ID_BATCH, sources[i]);
                fprintf(f, "MEMONLINE_BATCH=%u\nMEMONLINE_TRIGGER=udev\n", i + 1);
                counters(f, 8, 1000000, 0);
                fputc('\n', f);
        }
        path = export_to_journal(&x, fx, "sources");

        assert_int_equal(run_report(&out, "--file", path, "--json-lines", NULL), 0);
        v = jq(out, ".batch");
        assert_string_equal(v, "1\n2\n3");
        free(v);
        free(out);
        assert_int_equal(run_report(&out, "--file", path, "--all-sources", "--json-lines", NULL), 0);
        v = jq(out, ".batch");
        assert_string_equal(v, "1\n2\n3\n4\n5\n6\n7");
        unlink(path);
}

/* A batch stamped real_sec by a clock that may be wrong, logged mono_sec into the boot. */
static void batch_stamped(FILE *f, uint64_t real_sec, uint64_t mono_sec, unsigned seq) {
        fprintf(f, "__REALTIME_TIMESTAMP=%" PRIu64 "\n__MONOTONIC_TIMESTAMP=%" PRIu64 "\n_BOOT_ID=%s\n"
                "_HOSTNAME=clock\n_PID=400\n_COMM=memonlined\n_UID=0\nMESSAGE_ID=%s\nMEMONLINE_BATCH=%u\n"
                "MEMONLINE_TRIGGER=udev\n", USEC(real_sec), USEC(mono_sec), BOOT_A, MESSAGE_ID_BATCH, seq);
        counters(f, 8, 1000000, 0);
        fputc('\n', f);
}

/*
 * One record stamped far ahead (a clock wrong before NTP, or forged), one
 * far behind, in a journal otherwise in order: --since and --until judge
 * every record by its own time, and neither hides the records after it.
 */
static void test_clock_jumps(void **state) {
        static const struct {
                const char *since, *until, *want;
        } cases[] = {
                { NULL, NULL, "1,2,3,4,5,6" },
                { NULL, "@1700000150", "1,2,3,4" },             /* read on past the far-future 5 */
                { "@1700000030", NULL, "2,4,5,6" },             /* 3, far behind, misleads no seek */
                { "@1700000030", "@1700000150", "2,4" },
                { "@1700000200", "@1900000000", "" },
        };
        struct fixture *fx = *state;
        _cleanup_free_ char *path = NULL;
        struct export x;
        FILE *f;

        if (!fx->dir)
                skip();

        f = export_begin(&x);
        batch_stamped(f, T0, 100, 1);
        batch_stamped(f, T0 + 60, 160, 2);
        batch_stamped(f, T0 - 365 * 86400ULL, 170, 3);
        batch_stamped(f, T0 + 120, 220, 4);
        batch_stamped(f, T0 + 20 * 365 * 86400ULL, 230, 5);
        batch_stamped(f, T0 + 180, 280, 6);
        path = export_to_journal(&x, fx, "clock");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = NULL, *got = NULL;
                const char *argv[9] = { "--file", path, "-J", "-o", "BATCH" };
                size_t n = 5;

                if (cases[i].since) {
                        argv[n++] = "--since";
                        argv[n++] = cases[i].since;
                }
                if (cases[i].until) {
                        argv[n++] = "--until";
                        argv[n++] = cases[i].until;
                }
                assert_int_equal(run_report(&out, argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], argv[6],
                                            argv[7], argv[8], NULL), 0);
                got = jq(out, "[.batches[].batch] | sort | @csv");
                if (!streq(got, cases[i].want))
                        fail_msg("since %s until %s: got %s, want %s", cases[i].since ?: "-", cases[i].until ?: "-",
                                 got, cases[i].want);
        }
        unlink(path);
}

/* Every MESSAGE_ID=from in s becomes MESSAGE_ID=to: the IDs have one length, so in place. */
static void swap_message_id(char *s, const char *from, const char *to) {
        assert_int_equal(strlen(from), strlen(to));
        for (char *p = s; (p = strstr(p, from)); p += strlen(from))
                if (p - s >= 11 && memcmp(p - 11, "MESSAGE_ID=", 11) == 0)
                        memcpy(p, to, strlen(to));
}

/* A journal a daemon before 0.2 wrote to, then the upgraded daemon: every record of both is read. */
static void test_old_message_ids(void **state) {
        static const char *const ids[][2] = {
                { MESSAGE_ID_BATCH, MESSAGE_ID_OLD_BATCH },
                { MESSAGE_ID_NODE, MESSAGE_ID_OLD_NODE },
                { MESSAGE_ID_FAILURE, MESSAGE_ID_OLD_FAILURE },
                { MESSAGE_ID_DEVICE, MESSAGE_ID_OLD_DEVICE },
        };
        struct fixture *fx = *state;
        _cleanup_free_ char *old = NULL, *path = NULL, *out = NULL, *v = NULL;
        size_t n_old = 0;
        struct export x;
        FILE *f;

        if (!fx->dir)
                skip();

        /* pid 300 ran the old version: a dax batch with a failure and its conversion */
        f = open_memstream(&old, &n_old);
        assert_non_null(f);
        batch(f, "upgraded", BOOT_A, 300, T0, 1, "dax", "dax0.0", 8, 1000000, 1);
        node(f, "upgraded", BOOT_A, 300, T0, 1, 2, 1, "online_movable", 8, 1000000);
        failure(f, "upgraded", BOOT_A, 300, T0, 1, "memory40", 2);
        device(f, "upgraded", BOOT_A, 300, T0, 0, "dax0.0", 8);
        assert_int_equal(fclose(f), 0);
        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                swap_message_id(old, ids[i][0], ids[i][1]);
                assert_null(strstr(old, ids[i][0]));
                assert_non_null(strstr(old, ids[i][1]));
        }
        /* pid 301, after the upgrade, writes today's IDs */
        f = export_begin(&x);
        fputs(old, f);
        batch(f, "upgraded", BOOT_A, 301, T0 + 60, 1, "coldplug", NULL, 16, 1000000, 1);
        node(f, "upgraded", BOOT_A, 301, T0 + 60, 1, 0, 0, "online_movable", 8, 500000);
        node(f, "upgraded", BOOT_A, 301, T0 + 60, 1, 1, 1, "online_movable", 8, 500000);
        failure(f, "upgraded", BOOT_A, 301, T0 + 60, 1, "memory50", 1);
        path = export_to_journal(&x, fx, "upgraded");

        assert_int_equal(run_report(&out, "--file", path, "--json-lines", NULL), 0);
        v = jq(out, "[.pid, .blocks, (.nodes | map(.node) | tostring), .failures[0].block, .conversion.device] | @csv");
        assert_string_equal(v, "300,8,\"[2]\",\"memory40\",\"dax0.0\"\n301,16,\"[0,1]\",\"memory50\",");
        free(out);
        assert_int_equal(run_report(&out, "--file", path, "--failures", "-r", "-n", "-o", "BLOCK", NULL), 0);
        assert_string_equal(out, "memory40\nmemory50\n");
        unlink(path);
}

/* 20,000 records from one host: read and summarised without trouble. */
static void test_large(void **state) {
        struct fixture *fx = *state;
        _cleanup_free_ char *path = NULL, *out = NULL;
        struct export x;
        FILE *f;
        unsigned records = 0;

        if (!fx->dir)
                skip();

        f = export_begin(&x);
        for (unsigned seq = 1; records < 20000; seq++) {
                uint64_t t = T0 + 86400 + seq;

                batch(f, "big", BOOT_A, 300, t, seq, "udev", NULL, 24, 1500000, 0);
                for (int nd = 0; nd < 3; nd++)
                        node(f, "big", BOOT_A, 300, t, seq, nd, nd == 2 ? 1 : nd, "online_movable", 8, 500000);
                records += 4;
        }
        path = export_to_journal(&x, fx, "big");

        assert_int_equal(run_report(&out, "--file", path, "--json-lines", NULL), 0);
        assert_int_equal(count_lines(out, NULL), 5000);
        assert_int_equal(count_lines(out, "\"nodes\":[{\"node\":0"), 5000);
        free(out);
        assert_int_equal(run_report(&out, "--file", path, "--no-color", NULL), 0);
        assert_non_null(strstr(out, "5000 batches, 120000 blocks"));
        unlink(path);
}

/* A batch whose batch record is missing (filtered, lost): its latencies come from the node records. */
static void test_totals_from_nodes(void **state) {
        struct jr_node nodes[3] = {
                { .c = { .first_latency_usec = 400000, .have_first_latency = true,
                         .latency_usec = 900000, .have_latency = true } },
                { .c = { .first_latency_usec = 250000, .have_first_latency = true,
                         .latency_usec = 1250000, .have_latency = true } },
                { .c = { .blocks = 1 } },         /* an older record: neither field */
        };
        struct jr_batch b = { .nodes = nodes, .n_nodes = 3 };
        struct jr_counters k;

        jr_batch_totals(&b, &k);
        assert_true(k.have_first_latency);
        assert_int_equal(k.first_latency_usec, 250000);
        assert_true(k.have_latency);
        assert_int_equal(k.latency_usec, 1250000);
        b.n_nodes = 1;
        b.nodes = &nodes[2];
        jr_batch_totals(&b, &k);
        assert_false(k.have_first_latency);
        assert_false(k.have_latency);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_totals_from_nodes),
                cmocka_unit_test(test_table_several_hosts),
                cmocka_unit_test(test_json),
                cmocka_unit_test(test_filters),
                cmocka_unit_test(test_columns),
                cmocka_unit_test(test_json_document),
                cmocka_unit_test(test_colors),
                cmocka_unit_test(test_single_file),
                cmocka_unit_test(test_failures),
                cmocka_unit_test(test_bars),
                cmocka_unit_test(test_usage_errors),
                cmocka_unit_test(test_unreadable),
                cmocka_unit_test(test_large),
                cmocka_unit_test(test_hostile_fields),
                cmocka_unit_test(test_hostile_every_mode),
                cmocka_unit_test(test_sources),
                cmocka_unit_test(test_old_message_ids),
                cmocka_unit_test(test_machine_ids),
                cmocka_unit_test(test_boots),
                cmocka_unit_test(test_clock_jumps),
        };
        /* Table times are local time; pin it. */
        setenv("TZ", "UTC", 1);
        tzset();
        unsetenv("NO_COLOR");
        return cmocka_run_group_tests(tests, setup, teardown);
}
