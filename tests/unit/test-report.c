/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/stat.h>
#include "batch-records.h"
#include "report.h"
#include "sysfs.h"
#include "util.h"

#define MIB (1ULL << 20)
#define BS (128 * MIB)

/* ---- parsing console lines back ---------------------------------------- */

#define MAX_FIELDS 64

struct parsed {
        char *key[MAX_FIELDS];
        char *value[MAX_FIELDS];
        size_t n;
};

static void parsed_free(struct parsed *p) {
        for (size_t i = 0; i < p->n; i++) {
                free(p->key[i]);
                free(p->value[i]);
        }
        p->n = 0;
}

/* The inverse of record_format_line: KEY=value or KEY="quoted \" value". */
static void parse_line(const char *line, struct parsed *p) {
        const char *s = line;

        memset(p, 0, sizeof(*p));
        while (*s) {
                const char *eq = strchr(s, '=');
                char *v = calloc(strlen(s) + 1, 1);
                size_t n = 0;

                assert_non_null(eq);
                assert_non_null(v);
                assert_true(p->n < MAX_FIELDS);
                p->key[p->n] = strndup(s, (size_t) (eq - s));
                s = eq + 1;
                if (*s == '"') {
                        for (s++; *s && *s != '"'; s++) {
                                if (*s != '\\') {
                                        v[n++] = *s;
                                        continue;
                                }
                                s++;
                                switch (*s) {
                                case 'n': v[n++] = '\n'; break;
                                case 't': v[n++] = '\t'; break;
                                case 'r': v[n++] = '\r'; break;
                                case 'x': v[n++] = (char) strtol((char[]) { s[1], s[2], 0 }, NULL, 16); s += 2; break;
                                default: v[n++] = *s;
                                }
                        }
                        assert_int_equal(*s, '"');
                        s++;
                } else
                        while (*s && *s != ' ')
                                v[n++] = *s++;
                p->value[p->n++] = v;
                assert_true(*s == ' ' || *s == '\0');
                if (*s == ' ')
                        s++;
        }
}

static const char *get(const struct parsed *p, const char *key) {
        const char *found = NULL;

        for (size_t i = 0; i < p->n; i++)
                if (streq(p->key[i], key)) {
                        assert_null(found);     /* no key twice */
                        found = p->value[i];
                }
        return found;
}

static void assert_field(const struct parsed *p, const char *key, const char *value) {
        const char *v = get(p, key);

        if (!v)
                fail_msg("field %s missing", key);
        if (!streq(v, value))
                fail_msg("%s=%s, expected %s", key, v, value);
}

/* Split the captured output into parsed records. */
static size_t parse_output(const char *buf, struct parsed *out, size_t max) {
        size_t n = 0;

        for (const char *s = buf; *s; ) {
                const char *nl = strchr(s, '\n');
                char *line;

                assert_non_null(nl);
                assert_true(n < max);
                line = strndup(s, (size_t) (nl - s));
                parse_line(line, &out[n++]);
                free(line);
                s = nl + 1;
        }
        return n;
}

/* ---- a reporter writing into memory ------------------------------------ */

struct capture {
        struct reporter r;
        char *out, *err;
        size_t out_size, err_size;
};

static void capture_open(struct capture *c) {
        memset(c, 0, sizeof(*c));
        reporter_init(&c->r, LOG_TARGET_CONSOLE);
        c->r.out = open_memstream(&c->out, &c->out_size);
        c->r.err = open_memstream(&c->err, &c->err_size);
        assert_non_null(c->r.out);
        assert_non_null(c->r.err);
}

static void capture_close(struct capture *c) {
        fclose(c->r.out);
        fclose(c->r.err);
        free(c->out);
        free(c->err);
}

/* ---- basics -------------------------------------------------------------- */

static void test_log_target(void **state) {
        enum log_target t = LOG_TARGET_CONSOLE;

        assert_int_equal(log_target_from_string("auto", &t), 0);
        assert_int_equal(t, LOG_TARGET_AUTO);
        assert_int_equal(log_target_from_string("journal", &t), 0);
        assert_int_equal(t, LOG_TARGET_JOURNAL);
        assert_int_equal(log_target_from_string("console", &t), 0);
        assert_int_equal(t, LOG_TARGET_CONSOLE);
        t = LOG_TARGET_JOURNAL;
        assert_int_equal(log_target_from_string("syslog", &t), -EINVAL);
        assert_int_equal(log_target_from_string("", &t), -EINVAL);
        assert_int_equal(log_target_from_string(NULL, &t), -EINVAL);
        assert_int_equal(t, LOG_TARGET_JOURNAL);
}

static void test_reporter_init(void **state) {
        _cleanup_free_ char *js = getenv("JOURNAL_STREAM") ? strdup(getenv("JOURNAL_STREAM")) : NULL;
        _cleanup_free_ char *inv = getenv("INVOCATION_ID") ? strdup(getenv("INVOCATION_ID")) : NULL;
        struct reporter r;

        unsetenv("JOURNAL_STREAM");
        unsetenv("INVOCATION_ID");
        reporter_init(&r, LOG_TARGET_AUTO);
        assert_int_equal(r.target, LOG_TARGET_CONSOLE);
        assert_ptr_equal(r.out, stdout);
        assert_ptr_equal(r.err, stderr);
        assert_int_equal(r.max_priority, LOG_INFO);
        assert_int_equal(r.batch_seq, 0);

        /* Inherited from an ancestor, but not our stderr: the console. */
        setenv("JOURNAL_STREAM", "8:12345", 1);
        reporter_init(&r, LOG_TARGET_AUTO);
        assert_int_equal(r.target, LOG_TARGET_CONSOLE);
        /* Our stderr is the stream systemd named: the journal. */
        {
                struct stat st;
                char js_self[64];

                assert_int_equal(fstat(STDERR_FILENO, &st), 0);
                snprintf(js_self, sizeof(js_self), "%llu:%llu", (unsigned long long) st.st_dev,
                         (unsigned long long) st.st_ino);
                setenv("JOURNAL_STREAM", js_self, 1);
                reporter_init(&r, LOG_TARGET_AUTO);
                assert_int_equal(r.target, LOG_TARGET_JOURNAL);
        }
        unsetenv("JOURNAL_STREAM");

        /* A service of ours without a terminal: the journal; on a terminal, the console. */
        setenv("INVOCATION_ID", "0123456789abcdef0123456789abcdef", 1);
        reporter_init(&r, LOG_TARGET_AUTO);
        assert_int_equal(r.target, isatty(STDERR_FILENO) ? LOG_TARGET_CONSOLE : LOG_TARGET_JOURNAL);
        /* An explicit choice wins over the environment. */
        reporter_init(&r, LOG_TARGET_CONSOLE);
        assert_int_equal(r.target, LOG_TARGET_CONSOLE);
        unsetenv("INVOCATION_ID");

        reporter_init(&r, LOG_TARGET_JOURNAL);
        assert_int_equal(r.target, LOG_TARGET_JOURNAL);

        if (js)
                setenv("JOURNAL_STREAM", js, 1);
        if (inv)
                setenv("INVOCATION_ID", inv, 1);
}

static void test_format_line(void **state) {
        _cleanup_(record_clear) struct record rec = {};
        _cleanup_free_ char *line = NULL;
        struct parsed p;

        assert_int_equal(record_add(&rec, "PRIORITY=%d", 6), 0);
        assert_int_equal(record_add(&rec, "MEMONLINE_PLAIN=%s", "memory12"), 0);
        assert_int_equal(record_add(&rec, "MESSAGE=%s", "Onlined 2 blocks"), 0);
        assert_int_equal(record_add(&rec, "MEMONLINE_QUOTE=%s", "say \"hi\""), 0);
        assert_int_equal(record_add(&rec, "MEMONLINE_EQ=%s", "a=b"), 0);
        assert_int_equal(record_add(&rec, "MEMONLINE_BS=%s", "c:\\d"), 0);
        assert_int_equal(record_add(&rec, "MEMONLINE_NL=%s", "one\ntwo"), 0);
        assert_int_equal(record_add(&rec, "MEMONLINE_EMPTY="), 0);
        assert_int_equal(rec.n, 8);

        assert_int_equal(record_format_line(&rec, &line), 0);
        assert_string_equal(line,
                            "MESSAGE=\"Onlined 2 blocks\" PRIORITY=6 MEMONLINE_PLAIN=memory12 "
                            "MEMONLINE_QUOTE=\"say \\\"hi\\\"\" MEMONLINE_EQ=\"a=b\" MEMONLINE_BS=\"c:\\\\d\" "
                            "MEMONLINE_NL=\"one\\ntwo\" MEMONLINE_EMPTY=");

        /* And it parses back to the same values. */
        parse_line(line, &p);
        assert_int_equal(p.n, 8);
        assert_string_equal(p.key[0], "MESSAGE");
        assert_field(&p, "MESSAGE", "Onlined 2 blocks");
        assert_field(&p, "MEMONLINE_QUOTE", "say \"hi\"");
        assert_field(&p, "MEMONLINE_EQ", "a=b");
        assert_field(&p, "MEMONLINE_BS", "c:\\d");
        assert_field(&p, "MEMONLINE_NL", "one\ntwo");
        assert_field(&p, "MEMONLINE_EMPTY", "");
        parsed_free(&p);

        record_clear(&rec);
        assert_int_equal(rec.n, 0);
        assert_null(rec.fields);
}

static void test_emit_console(void **state) {
        _cleanup_(record_clear) struct record rec = {};
        _cleanup_(record_clear) struct record dbg = {};
        struct capture c;

        capture_open(&c);
        assert_int_equal(record_add(&rec, "MESSAGE_ID=%s", MESSAGE_ID_BATCH), 0);
        assert_int_equal(record_add(&rec, "MESSAGE=hello"), 0);
        assert_int_equal(record_add(&rec, "PRIORITY=%d", LOG_INFO), 0);
        assert_int_equal(record_emit(&c.r, &rec), 0);
        /* Flushed per record: visible without closing the stream. */
        assert_string_equal(c.out, "MESSAGE=hello MESSAGE_ID=" MESSAGE_ID_BATCH " PRIORITY=6\n");

        assert_int_equal(record_add(&dbg, "MESSAGE=noise"), 0);
        assert_int_equal(record_add(&dbg, "PRIORITY=%d", LOG_DEBUG), 0);
        assert_int_equal(record_emit(&c.r, &dbg), 0);
        assert_string_equal(c.out, "MESSAGE=hello MESSAGE_ID=" MESSAGE_ID_BATCH " PRIORITY=6\n");
        c.r.max_priority = LOG_DEBUG;
        assert_int_equal(record_emit(&c.r, &dbg), 0);
        assert_string_equal(c.out, "MESSAGE=hello MESSAGE_ID=" MESSAGE_ID_BATCH " PRIORITY=6\n"
                                   "MESSAGE=noise PRIORITY=7\n");
        assert_int_equal(c.err_size, 0);
        capture_close(&c);
}

static void test_report_log_console(void **state) {
        struct capture c;

        capture_open(&c);
        report_log(&c.r, LOG_WARNING, NULL, "cannot pin to CPU %d", 4000);
        report_log(&c.r, LOG_ERR, MESSAGE_ID_CONFIG, "%s:%u: %s", "/etc/memonlined.conf", 3u, "bad zone");
        report_log(&c.r, LOG_INFO, NULL, "started");
        report_log(&c.r, LOG_DEBUG, NULL, "hidden");
        assert_string_equal(c.err, "warning: cannot pin to CPU 4000\n"
                                   "error: /etc/memonlined.conf:3: bad zone\n"
                                   "info: started\n");
        c.r.max_priority = LOG_WARNING;
        report_log(&c.r, LOG_NOTICE, NULL, "quiet now");
        report_log(&c.r, LOG_DEBUG, NULL, "still hidden");
        assert_string_equal(c.err, "warning: cannot pin to CPU 4000\n"
                                   "error: /etc/memonlined.conf:3: bad zone\n"
                                   "info: started\n");
        assert_int_equal(c.out_size, 0);
        capture_close(&c);
}

static void test_report_log_errno(void **state) {
        struct capture c;

        capture_open(&c);
        errno = EBADF;
        /* Logs once, %m as the error's text, and hands the error back as -errno, given either way. */
        assert_int_equal(report_log_errno(&c.r, LOG_ERR, NULL, -ENOENT, "cannot read %s: %m", "state"), -ENOENT);
        assert_int_equal(report_log_errno(&c.r, LOG_WARNING, MESSAGE_ID_CONFIG, EACCES, "open: %m; later"), -EACCES);
        /* Below the threshold: nothing said, the error still returned. */
        assert_int_equal(report_log_errno(&c.r, LOG_DEBUG, NULL, -EIO, "hidden: %m"), -EIO);
        assert_int_equal(errno, EBADF);         /* the caller's errno survives */
        assert_string_equal(c.err, "error: cannot read state: No such file or directory\n"
                                   "warning: open: Permission denied; later\n");
        assert_int_equal(c.out_size, 0);
        capture_close(&c);
}

/* A failed record_add() stays with the record: emitting it fails with that error and prints nothing. */
static void test_record_first_error(void **state) {
        _cleanup_(record_clear) struct record rec = {};
        _cleanup_free_ char *line = NULL;
        struct capture c;

        capture_open(&c);
        assert_int_equal(record_add(&rec, "MESSAGE=kept"), 0);
        rec.error = -ENOMEM;    /* as record_add() leaves it when an allocation fails */
        assert_int_equal(record_add(&rec, "PRIORITY=%d", LOG_INFO), 0);
        assert_int_equal(rec.error, -ENOMEM);
        assert_int_equal(record_emit(&c.r, &rec), -ENOMEM);
        assert_int_equal(record_format_line(&rec, &line), -ENOMEM);
        assert_null(line);
        assert_int_equal(c.out_size, 0);
        capture_close(&c);
}

/* ---- batches -------------------------------------------------------------- */

struct fixture {
        struct plan plan;
        struct plan_group groups[2];
        struct mem_block *blocks;
        struct plan_item *items;
        struct plan_item skipped[2];
        struct online_result res;
        struct group_result gres[2];
        struct block_result *bres;
        uint64_t lat0[8], lat1[8];
        int cpus[2][1];
};

static void fixture_free(struct fixture *f) {
        free(f->blocks);
        free(f->items);
        free(f->bres);
}

/* Blocks in plan order over the groups; results prefilled as successful writes. */
static void fixture_init(struct fixture *f, size_t n0, size_t n1, uint64_t id0, uint64_t id1) {
        size_t n = n0 + n1;

        memset(f, 0, sizeof(*f));
        f->blocks = calloc(n, sizeof(*f->blocks));
        f->items = calloc(n, sizeof(*f->items));
        f->bres = calloc(n, sizeof(*f->bres));
        assert_true(f->blocks && f->items && f->bres);
        for (size_t i = 0; i < n; i++) {
                uint64_t id = i < n0 ? id0 + i : id1 + (i - n0);
                int node = i < n0 ? 0 : 2;

                f->blocks[i] = (struct mem_block) { .id = id, .node = node, .region = -1 };
                f->items[i] = (struct plan_item) { .block = &f->blocks[i], .zone = ZONE_MOVABLE, .reason = "t" };
                f->bres[i] = (struct block_result) {
                        .id = id, .node = node, .zone = ZONE_MOVABLE, .cpu = 0, .attempts = 1, .usec = 100,
                };
        }
        f->cpus[0][0] = 0;
        f->cpus[1][0] = 4;
        f->groups[0] = (struct plan_group) {
                .node = 0, .writer_node = 0, .cpus = f->cpus[0], .n_cpus = 1, .items = f->items, .n_items = n0,
        };
        f->groups[1] = (struct plan_group) {
                .node = 2, .writer_node = 1, .cpus = f->cpus[1], .n_cpus = 1, .items = f->items + n0, .n_items = n1,
        };
        f->plan = (struct plan) { .groups = f->groups, .n_groups = n1 > 0 ? 2 : 1, .n_items = n };
        f->gres[0] = (struct group_result) { .node = 0, .writer_node = 0 };
        f->gres[1] = (struct group_result) { .node = 2, .writer_node = 1 };
        f->res = (struct online_result) {
                .blocks = f->bres, .n_blocks = n, .groups = f->gres, .n_groups = f->plan.n_groups, .pin_cpu = -1,
        };
}

/*
 * Two nodes: node0 memory16-20, four written, one onlined by someone else;
 * node2 (CPU-less, written from node1) memory40 ok, memory41 EBUSY,
 * memory42 stopped, all three on pmem.
 */
static void fixture_mixed(struct fixture *f) {
        fixture_init(f, 5, 3, 16, 40);
        for (size_t i = 0; i < 4; i++)
                f->bres[i].usec = f->lat0[i] = 100 * (i + 1);
        f->bres[4].already_online = true;
        f->bres[4].usec = 0;
        f->gres[0].zones_used = 1U << ZONE_MOVABLE;
        f->gres[0].cpus_used = (char *) "0-1";
        f->gres[0].blocks = 4;
        f->gres[0].bytes = 4 * BS;
        f->gres[0].start_usec = 1000000;
        f->gres[0].end_usec = 1500000;
        f->gres[0].first_online_usec = 1100000;
        f->gres[0].lat_sorted = f->lat0;
        f->gres[0].n_lat = 4;

        for (size_t i = 5; i < 8; i++)
                f->bres[i].zone = f->items[i].zone = ZONE_ONLINE;
        f->bres[5].usec = f->lat1[0] = 1000;
        f->bres[6].error = -EBUSY;
        f->bres[6].attempts = 6;
        f->bres[6].usec = 0;
        f->bres[7] = (struct block_result) {
                .id = 42, .node = 2, .zone = ZONE_ONLINE, .error = -ECANCELED, .cpu = -1, .not_attempted = true,
        };
        f->gres[1].zones_used = 1U << ZONE_ONLINE;
        f->gres[1].cpus_used = (char *) "4";
        f->gres[1].blocks = 1;
        f->gres[1].failed = 1;
        f->gres[1].bytes = BS;
        f->gres[1].start_usec = 1200000;
        f->gres[1].end_usec = 2000000;
        f->gres[1].first_online_usec = 1300000;
        f->gres[1].lat_sorted = f->lat1;
        f->gres[1].n_lat = 1;
        for (size_t i = 5; i < 8; i++) {
                f->blocks[i].device = (char *) (i < 7 ? "dax0.0" : "dax1.0");
                f->blocks[i].namespace_name = (char *) (i < 7 ? "namespace0.0" : "namespace1.0");
                f->blocks[i].region = i < 7 ? 0 : 1;
        }

        f->res.failed = 1;
        f->res.bytes = 5 * BS;
        f->res.start_usec = 1000000;
        f->res.end_usec = 2000000;
        f->res.first_online_usec = 1100000;
        f->plan.skipped = f->skipped;
        f->plan.n_skipped = 2;

}

/* The same batch with node2's blocks on CXL regions: region0 over mem0 and mem1, region1 on mem1. */
static void fixture_cxl(struct fixture *f) {
        fixture_mixed(f);
        for (size_t i = 5; i < 8; i++) {
                f->blocks[i].namespace_name = NULL;
                f->blocks[i].region = -1;
                f->blocks[i].cxl_region = (char *) (i < 7 ? "region0" : "region1");
                f->blocks[i].cxl_memdevs = (char *) (i < 7 ? "mem0,mem1" : "mem1");
        }
}

static void test_cxl_records(void **state) {
        struct batch_info info = { .trigger = "udev", .block_size = BS };
        struct fixture f;
        struct capture c;
        struct parsed p[8];
        size_t n;

        fixture_cxl(&f);
        capture_open(&c);
        assert_int_equal(report_batch(&c.r, &info, &f.plan, &f.res), 0);
        n = parse_output(c.out, p, ELEMENTSOF(p));
        assert_int_equal(n, 4);
        assert_field(&p[0], "MEMONLINE_DEVICE", "dax0.0,dax1.0");
        assert_field(&p[0], "MEMONLINE_CXL_REGION", "region0,region1");
        /* Each memdev once, over both regions. */
        assert_field(&p[0], "MEMONLINE_CXL_MEMDEV", "mem0,mem1");
        assert_null(get(&p[0], "MEMONLINE_NAMESPACE"));
        assert_null(get(&p[0], "MEMONLINE_REGION"));
        assert_null(get(&p[1], "MEMONLINE_CXL_REGION"));
        assert_null(get(&p[1], "MEMONLINE_CXL_MEMDEV"));
        assert_field(&p[2], "MEMONLINE_CXL_REGION", "region0,region1");
        assert_field(&p[2], "MEMONLINE_CXL_MEMDEV", "mem0,mem1");
        /* The failed block memory41 is region0's. */
        assert_field(&p[3], "MEMONLINE_BLOCK", "memory41");
        assert_field(&p[3], "MEMONLINE_CXL_REGION", "region0");
        assert_field(&p[3], "MEMONLINE_CXL_MEMDEV", "mem0,mem1");
        for (size_t i = 0; i < n; i++)
                parsed_free(&p[i]);
        capture_close(&c);
        fixture_free(&f);
}

static void test_batch_records(void **state) {
        struct batch_info info = {
                .trigger = "udev", .first_event_usec = 500000, .cpu_usec = 1234, .prepare_usec = 4321, .block_size = BS,
        };
        struct fixture f;
        struct capture c;
        struct parsed p[8];
        size_t n;
        char msg[256];

        fixture_mixed(&f);
        capture_open(&c);
        c.r.batch_seq = 6;
        assert_int_equal(report_batch(&c.r, &info, &f.plan, &f.res), 0);
        assert_int_equal(c.r.batch_seq, 7);
        n = parse_output(c.out, p, ELEMENTSOF(p));
        assert_int_equal(n, 4);         /* batch, two nodes, one failure */

        /* The batch record. */
        assert_string_equal(p[0].key[0], "MESSAGE");
        assert_field(&p[0], "MESSAGE_ID", MESSAGE_ID_BATCH);
        assert_field(&p[0], "MESSAGE",
                     "Onlined 5 blocks (640.0 MiB) on 2 nodes in 1.000 s, 0.62 GiB/s, 1 failed, "
                     "1 already online, 1 not attempted (stopping)");
        assert_field(&p[0], "PRIORITY", "4");
        assert_field(&p[0], "MEMONLINE_BATCH", "7");
        assert_field(&p[0], "MEMONLINE_TRIGGER", "udev");
        assert_field(&p[0], "MEMONLINE_BLOCKS", "7");
        assert_field(&p[0], "MEMONLINE_BYTES", "671088640");
        assert_field(&p[0], "MEMONLINE_FAILED", "1");
        assert_field(&p[0], "MEMONLINE_SKIPPED", "2");
        assert_field(&p[0], "MEMONLINE_NODES", "2");
        assert_field(&p[0], "MEMONLINE_DURATION_USEC", "1000000");
        assert_field(&p[0], "MEMONLINE_GIBPS", "0.625");
        assert_field(&p[0], "MEMONLINE_P50_USEC", "300");
        assert_field(&p[0], "MEMONLINE_P99_USEC", "1000");
        assert_field(&p[0], "MEMONLINE_MAX_USEC", "1000");
        assert_field(&p[0], "MEMONLINE_LATENCY_USEC", "1500000");
        /* From the first event (0.5 s) to the first block online (node0's, at 1.1 s). */
        assert_field(&p[0], "MEMONLINE_FIRST_LATENCY_USEC", "600000");
        assert_field(&p[0], "MEMONLINE_CPU_USEC", "1234");
        assert_field(&p[0], "MEMONLINE_PREPARE_USEC", "4321");
        assert_field(&p[0], "MEMONLINE_ALREADY_ONLINE", "1");
        assert_field(&p[0], "MEMONLINE_NOT_ATTEMPTED", "1");
        assert_field(&p[0], "MEMONLINE_DEVICE", "dax0.0,dax1.0");
        assert_field(&p[0], "MEMONLINE_NAMESPACE", "namespace0.0,namespace1.0");
        assert_field(&p[0], "MEMONLINE_REGION", "0,1");

        /* node0 */
        assert_field(&p[1], "MESSAGE_ID", MESSAGE_ID_NODE);
        assert_field(&p[1], "MESSAGE",
                     "Node 0: onlined 4 blocks (512.0 MiB) as online_movable from CPUs 0-1 in 0.500 s, "
                     "1.00 GiB/s, 0 failed, 1 already online");
        assert_field(&p[1], "PRIORITY", "6");
        assert_field(&p[1], "MEMONLINE_BATCH", "7");
        assert_field(&p[1], "MEMONLINE_NODE", "0");
        assert_field(&p[1], "MEMONLINE_WRITER_NODE", "0");
        assert_field(&p[1], "MEMONLINE_ZONE", "online_movable");
        assert_field(&p[1], "MEMONLINE_CPUS", "0-1");
        assert_field(&p[1], "MEMONLINE_BLOCKS", "5");
        assert_field(&p[1], "MEMONLINE_BYTES", "536870912");
        assert_field(&p[1], "MEMONLINE_FAILED", "0");
        assert_field(&p[1], "MEMONLINE_DURATION_USEC", "500000");
        assert_field(&p[1], "MEMONLINE_GIBPS", "1.000");
        assert_field(&p[1], "MEMONLINE_P50_USEC", "200");
        assert_field(&p[1], "MEMONLINE_P99_USEC", "400");
        assert_field(&p[1], "MEMONLINE_MAX_USEC", "400");
        assert_field(&p[1], "MEMONLINE_ALREADY_ONLINE", "1");
        assert_field(&p[1], "MEMONLINE_NOT_ATTEMPTED", "0");
        assert_field(&p[1], "MEMONLINE_FIRST_LATENCY_USEC", "600000");
        assert_field(&p[1], "MEMONLINE_LATENCY_USEC", "1000000");
        assert_null(get(&p[1], "MEMONLINE_DEVICE"));
        assert_null(get(&p[1], "MEMONLINE_REGION"));

        /* node2, written from node1 */
        assert_field(&p[2], "MESSAGE_ID", MESSAGE_ID_NODE);
        assert_field(&p[2], "PRIORITY", "4");
        assert_field(&p[2], "MEMONLINE_NODE", "2");
        assert_field(&p[2], "MEMONLINE_WRITER_NODE", "1");
        assert_field(&p[2], "MEMONLINE_ZONE", "online");
        assert_field(&p[2], "MEMONLINE_CPUS", "4");
        assert_field(&p[2], "MEMONLINE_BLOCKS", "2");
        assert_field(&p[2], "MEMONLINE_BYTES", "134217728");
        assert_field(&p[2], "MEMONLINE_FAILED", "1");
        assert_field(&p[2], "MEMONLINE_DURATION_USEC", "800000");
        assert_field(&p[2], "MEMONLINE_GIBPS", "0.156");
        assert_field(&p[2], "MEMONLINE_P50_USEC", "1000");
        assert_field(&p[2], "MEMONLINE_NOT_ATTEMPTED", "1");
        assert_field(&p[2], "MEMONLINE_FIRST_LATENCY_USEC", "800000");
        assert_field(&p[2], "MEMONLINE_LATENCY_USEC", "1500000");
        assert_field(&p[2], "MEMONLINE_DEVICE", "dax0.0,dax1.0");
        assert_field(&p[2], "MEMONLINE_REGION", "0,1");

        /* The failure: memory41 only; the stopped block is not a failure. */
        assert_field(&p[3], "MESSAGE_ID", MESSAGE_ID_FAILURE);
        assert_field(&p[3], "PRIORITY", "3");         /* err: journalctl -p err shows a block left offline */
        assert_field(&p[3], "MEMONLINE_BATCH", "7");
        assert_field(&p[3], "MEMONLINE_BLOCK", "memory41");
        assert_field(&p[3], "MEMONLINE_NODE", "2");
        assert_field(&p[3], "MEMONLINE_ZONE", "online");
        assert_field(&p[3], "MEMONLINE_ERRNO", "16");
        assert_field(&p[3], "MEMONLINE_ERRNO_NAME", "EBUSY");
        assert_field(&p[3], "MEMONLINE_ATTEMPTS", "6");
        assert_field(&p[3], "MEMONLINE_DEVICE", "dax0.0");
        assert_field(&p[3], "MEMONLINE_NAMESPACE", "namespace0.0");
        assert_field(&p[3], "MEMONLINE_REGION", "0");
        snprintf(msg, sizeof(msg), "Failed to online memory41 (node 2) as online after 6 attempts: %s",
                 strerror(EBUSY));
        assert_field(&p[3], "MESSAGE", msg);

        for (size_t i = 0; i < n; i++)
                parsed_free(&p[i]);

        /* At max_priority err only the failure record is printed: the batch and node records are above it. */
        c.r.max_priority = LOG_ERR;
        assert_int_equal(report_batch(&c.r, &info, &f.plan, &f.res), 0);
        assert_int_equal(c.r.batch_seq, 8);
        assert_int_equal(parse_output(c.out, p, ELEMENTSOF(p)), 5);
        assert_field(&p[4], "MESSAGE_ID", MESSAGE_ID_FAILURE);
        assert_field(&p[4], "MEMONLINE_BATCH", "8");
        for (size_t i = 0; i < 5; i++)
                parsed_free(&p[i]);

        capture_close(&c);
        fixture_free(&f);
}

static void test_gibps(void **state) {
        struct batch_info info = { .trigger = "coldplug", .block_size = BS };
        struct fixture f;
        struct capture c;
        struct parsed p[2];

        /* 128 blocks of 128 MiB = 16 GiB in 1.234 s. */
        fixture_init(&f, 128, 0, 1000, 0);
        f.gres[0].zones_used = 1U << ZONE_MOVABLE;
        f.gres[0].cpus_used = (char *) "0";
        f.gres[0].blocks = 128;
        f.gres[0].bytes = 128 * BS;
        f.gres[0].start_usec = 10;
        f.gres[0].end_usec = 10 + 1234000;
        f.res.bytes = 128 * BS;
        f.res.start_usec = 10;
        f.res.end_usec = 10 + 1234000;

        capture_open(&c);
        assert_int_equal(report_batch(&c.r, &info, &f.plan, &f.res), 0);
        assert_int_equal(parse_output(c.out, p, ELEMENTSOF(p)), 2);
        assert_field(&p[0], "MESSAGE", "Onlined 128 blocks (16.0 GiB) on 1 node in 1.234 s, 12.97 GiB/s, 0 failed");
        assert_field(&p[0], "PRIORITY", "6");
        assert_field(&p[0], "MEMONLINE_BATCH", "1");
        assert_field(&p[0], "MEMONLINE_TRIGGER", "coldplug");
        assert_field(&p[0], "MEMONLINE_BYTES", "17179869184");
        assert_field(&p[0], "MEMONLINE_BLOCKS", "128");
        assert_field(&p[0], "MEMONLINE_DURATION_USEC", "1234000");
        assert_field(&p[0], "MEMONLINE_GIBPS", "12.966");
        /* No event time for coldplug: no latency field. */
        assert_null(get(&p[0], "MEMONLINE_LATENCY_USEC"));
        assert_null(get(&p[0], "MEMONLINE_FIRST_LATENCY_USEC"));
        assert_null(get(&p[1], "MEMONLINE_LATENCY_USEC"));
        assert_null(get(&p[1], "MEMONLINE_FIRST_LATENCY_USEC"));
        assert_null(get(&p[0], "MEMONLINE_DEVICE"));
        assert_field(&p[1], "MEMONLINE_GIBPS", "12.966");
        parsed_free(&p[0]);
        parsed_free(&p[1]);

        capture_close(&c);
        fixture_free(&f);
}

static void test_zero_duration(void **state) {
        struct batch_info info = { .trigger = "once", .block_size = BS };
        struct fixture f;
        struct capture c;
        struct parsed p[3];

        /* Everything failed before a timed write: no division by zero. */
        fixture_init(&f, 1, 0, 5, 0);
        f.bres[0].error = -ENOENT;
        f.bres[0].attempts = 0;
        f.gres[0].failed = 1;
        f.res.failed = 1;

        capture_open(&c);
        assert_int_equal(report_batch(&c.r, &info, &f.plan, &f.res), 0);
        /* Batch, node, failure. */
        assert_int_equal(parse_output(c.out, p, ELEMENTSOF(p)), 3);
        assert_field(&p[0], "MEMONLINE_GIBPS", "0.000");
        assert_field(&p[0], "MEMONLINE_DURATION_USEC", "0");
        assert_field(&p[0], "MEMONLINE_P99_USEC", "0");
        assert_field(&p[1], "MEMONLINE_ZONE", "");
        assert_field(&p[1], "MEMONLINE_CPUS", "");
        assert_field(&p[2], "MEMONLINE_ERRNO_NAME", "ENOENT");
        assert_field(&p[2], "MEMONLINE_ATTEMPTS", "0");
        for (size_t i = 0; i < 3; i++)
                parsed_free(&p[i]);

        capture_close(&c);
        fixture_free(&f);
}

static void test_zero_blocks(void **state) {
        struct batch_info info = { .trigger = "rescan", .block_size = BS };
        struct plan plan = { .n_skipped = 3 };
        struct online_result res = { .pin_cpu = -1 };
        struct capture c;

        capture_open(&c);
        c.r.batch_seq = 4;
        assert_int_equal(report_batch(&c.r, &info, &plan, &res), 0);
        assert_int_equal(c.out_size, 0);
        assert_int_equal(c.err_size, 0);
        assert_int_equal(c.r.batch_seq, 4);
        capture_close(&c);
}

static void test_mismatch(void **state) {
        struct batch_info info = { .trigger = "udev", .block_size = BS };
        struct fixture f;
        struct capture c;

        fixture_init(&f, 2, 1, 0, 10);
        f.res.n_blocks = 2;             /* does not match the plan */
        capture_open(&c);
        assert_int_equal(report_batch(&c.r, &info, &f.plan, &f.res), -EINVAL);
        assert_int_equal(c.out_size, 0);
        assert_int_equal(c.r.batch_seq, 0);
        capture_close(&c);
        fixture_free(&f);
}

/* Every MEMONLINE_ field a record carries is explained in its catalog entry. */
/* Every MESSAGE_ID of report.h. */
static const char *const message_ids[] = {
        MESSAGE_ID_BATCH, MESSAGE_ID_NODE, MESSAGE_ID_FAILURE, MESSAGE_ID_DEVICE,
        MESSAGE_ID_CONFIG, MESSAGE_ID_CONFLICT, MESSAGE_ID_STARTED, MESSAGE_ID_RATIO,
        MESSAGE_ID_AUTO_ONLINE, MESSAGE_ID_STALLED, MESSAGE_ID_SLOW_KERNEL, MESSAGE_ID_BAD_MEDIA,
        MESSAGE_ID_OLD_BATCH, MESSAGE_ID_OLD_NODE, MESSAGE_ID_OLD_FAILURE, MESSAGE_ID_OLD_DEVICE,
        MESSAGE_ID_OLD_CONFIG, MESSAGE_ID_OLD_CONFLICT, MESSAGE_ID_OLD_STARTED, MESSAGE_ID_OLD_RATIO,
};

static void test_catalog(void **state) {
        struct batch_info info = {
                .trigger = "udev", .first_event_usec = 500000, .cpu_usec = 1234, .block_size = BS,
        };
        const char *srcdir = getenv("top_srcdir");
        _cleanup_free_ char *path = NULL, *text = NULL;
        struct fixture f;
        struct capture c;
        struct parsed p[8];
        size_t n;

        if (!srcdir)
                skip();
        assert_true(asprintf(&path, "%s/catalog/memonlined.catalog", srcdir) > 0);
        assert_int_equal(read_full_file(path, &text, NULL), 0);

        for (size_t i = 0; i < ELEMENTSOF(message_ids); i++) {
                char head[64];
                const char *sec;

                snprintf(head, sizeof(head), "\n-- %s\nSubject: ", message_ids[i]);
                sec = strstr(text, head);
                if (!sec)
                        fail_msg("no catalog entry for %s", message_ids[i]);
                assert_null(strstr(sec + 1, head));
        }

        for (int variant = 0; variant < 2; variant++) {
                if (variant == 0)
                        fixture_mixed(&f);
                else
                        fixture_cxl(&f);
                capture_open(&c);
                assert_int_equal(report_batch(&c.r, &info, &f.plan, &f.res), 0);
                n = parse_output(c.out, p, ELEMENTSOF(p));
                assert_int_equal(n, 4);
                for (size_t i = 0; i < n; i++) {
                        _cleanup_free_ char *section = NULL;
                        const char *id = get(&p[i], "MESSAGE_ID"), *start, *end;
                        char head[64];

                        assert_non_null(id);
                        snprintf(head, sizeof(head), "\n-- %s\n", id);
                        start = strstr(text, head);
                        assert_non_null(start);
                        end = strstr(start + 1, "\n-- ");
                        section = strndup(start, end ? (size_t) (end - start) : strlen(start));
                        for (size_t k = 0; k < p[i].n; k++)
                                if (startswith(p[i].key[k], "MEMONLINE_") && !strstr(section, p[i].key[k]))
                                        fail_msg("%s is not documented in the catalog entry %s", p[i].key[k], id);
                        parsed_free(&p[i]);
                }
                capture_close(&c);
                fixture_free(&f);
        }
}

static bool is_hex32(const char *p) {
        for (size_t i = 0; i < 32; i++)
                if (!strchr("0123456789abcdef", p[i]))
                        return false;
        return !strchr("0123456789abcdefABCDEF", p[32]);
}

/*
 * The VM tests, the guest scripts and the benchmarks carry copies of the
 * MESSAGE_IDs (they run where report.h is not at hand): every 32-digit
 * hex word in them is one of report.h's, so a changed ID cannot leave a
 * copy behind.
 */
static void test_message_id_copies(void **state) {
        static const char *const files[] = {
                "tests/vm/vm.py", "tests/vm/run-scenarios.py", "tests/vm/faults.py",
                "tests/vm/guest/journal-records", "tests/vm/stub/memonlined", "tests/bench/vm-bench.py",
        };
        const char *srcdir = getenv("top_srcdir");
        size_t n_copies = 0;

        if (!srcdir)
                skip();
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *path = NULL, *text = NULL;
                size_t size;

                assert_true(asprintf(&path, "%s/%s", srcdir, files[i]) > 0);
                if (read_full_file(path, &text, &size) == -ENOENT)
                        continue;
                assert_non_null(text);
                for (const char *p = text; p + 32 <= text + size; p++) {
                        bool known = false;

                        if ((p > text && strchr("0123456789abcdefABCDEF", p[-1])) || !is_hex32(p))
                                continue;
                        for (size_t k = 0; k < ELEMENTSOF(message_ids) && !known; k++)
                                known = strncmp(p, message_ids[k], 32) == 0;
                        if (!known)
                                fail_msg("%s: %.32s is no MESSAGE_ID of report.h", files[i], p);
                        n_copies++;
                        p += 31;
                }
        }
        /* The copies this test exists for are there. */
        assert_true(n_copies >= 10);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_log_target),
                cmocka_unit_test(test_reporter_init),
                cmocka_unit_test(test_format_line),
                cmocka_unit_test(test_emit_console),
                cmocka_unit_test(test_report_log_console),
                cmocka_unit_test(test_report_log_errno),
                cmocka_unit_test(test_record_first_error),
                cmocka_unit_test(test_batch_records),
                cmocka_unit_test(test_gibps),
                cmocka_unit_test(test_zero_duration),
                cmocka_unit_test(test_zero_blocks),
                cmocka_unit_test(test_mismatch),
                cmocka_unit_test(test_cxl_records),
                cmocka_unit_test(test_catalog),
                cmocka_unit_test(test_message_id_copies),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
