/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <time.h>
#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>
#include "journal-report.h"
#include "report.h"
#include "util.h"

/*
 * Records are joined into batches by (host, boot id, pid, batch seq): the
 * seq restarts with the daemon, and a collector directory holds many
 * hosts whose entries interleave in time.
 */

#define NONE SIZE_MAX
#define VALUE_MAX 512
#define BAR_WIDTH 30
#define GIB (1024.0 * 1024.0 * 1024.0)

enum field {
        F_BOOT_ID, F_HOSTNAME, F_PID, F_MESSAGE_ID, F_MESSAGE,
        F_BATCH, F_TRIGGER, F_BLOCKS, F_BYTES, F_FAILED, F_SKIPPED, F_NODES,
        F_DURATION, F_GIBPS, F_P50, F_P99, F_MAX, F_LATENCY, F_CPU_USEC,
        F_DEVICE, F_NAMESPACE, F_REGION, F_NODE, F_WRITER_NODE, F_ZONE, F_CPUS,
        F_BLOCK, F_ERRNO, F_ERRNO_NAME, F_ATTEMPTS, F_BIND, F_ONLINE, F_TOTAL,
        _F_MAX,
};

static const char *const field_names[_F_MAX] = {
        [F_BOOT_ID] = "_BOOT_ID",
        [F_HOSTNAME] = "_HOSTNAME",
        [F_PID] = "_PID",
        [F_MESSAGE_ID] = "MESSAGE_ID",
        [F_MESSAGE] = "MESSAGE",
        [F_BATCH] = "MEMONLINE_BATCH",
        [F_TRIGGER] = "MEMONLINE_TRIGGER",
        [F_BLOCKS] = "MEMONLINE_BLOCKS",
        [F_BYTES] = "MEMONLINE_BYTES",
        [F_FAILED] = "MEMONLINE_FAILED",
        [F_SKIPPED] = "MEMONLINE_SKIPPED",
        [F_NODES] = "MEMONLINE_NODES",
        [F_DURATION] = "MEMONLINE_DURATION_USEC",
        [F_GIBPS] = "MEMONLINE_GIBPS",
        [F_P50] = "MEMONLINE_P50_USEC",
        [F_P99] = "MEMONLINE_P99_USEC",
        [F_MAX] = "MEMONLINE_MAX_USEC",
        [F_LATENCY] = "MEMONLINE_LATENCY_USEC",
        [F_CPU_USEC] = "MEMONLINE_CPU_USEC",
        [F_DEVICE] = "MEMONLINE_DEVICE",
        [F_NAMESPACE] = "MEMONLINE_NAMESPACE",
        [F_REGION] = "MEMONLINE_REGION",
        [F_NODE] = "MEMONLINE_NODE",
        [F_WRITER_NODE] = "MEMONLINE_WRITER_NODE",
        [F_ZONE] = "MEMONLINE_ZONE",
        [F_CPUS] = "MEMONLINE_CPUS",
        [F_BLOCK] = "MEMONLINE_BLOCK",
        [F_ERRNO] = "MEMONLINE_ERRNO",
        [F_ERRNO_NAME] = "MEMONLINE_ERRNO_NAME",
        [F_ATTEMPTS] = "MEMONLINE_ATTEMPTS",
        [F_BIND] = "MEMONLINE_BIND_USEC",
        [F_ONLINE] = "MEMONLINE_ONLINE_USEC",
        [F_TOTAL] = "MEMONLINE_TOTAL_USEC",
};

/* One journal entry's fields we care about, copied out of the mmap. */
struct raw {
        uint64_t realtime;
        bool have[_F_MAX];
        char v[_F_MAX][VALUE_MAX];
};

struct counters {
        uint64_t blocks, bytes, failed, skipped;
        uint64_t duration_usec, p50_usec, p99_usec, max_usec, latency_usec, cpu_usec;
        double gibps;
        bool have_gibps, have_latency;
};

struct node_rec {
        int node, writer_node;
        char *zone, *cpus;
        struct counters c;
};

struct batch {
        size_t host;
        sd_id128_t boot;
        uint64_t pid, seq, realtime;
        bool have_record;               /* the batch record itself was seen */
        char *trigger, *device, *namespace_name, *region;
        char *node_list;                /* MEMONLINE_NODES: the number of node groups */
        struct counters c;
        struct node_rec *nodes;
        size_t n_nodes, a_nodes;
        size_t *failures;               /* indices into jr.failures */
        size_t n_failures, a_failures;
        size_t devrec;                  /* index into jr.devices or NONE */
};

struct failure {
        uint64_t realtime;
        size_t host, batch;
        char *block, *errno_name, *message;
        int node, err;
        uint64_t attempts;
};

struct devrec {
        uint64_t realtime;
        size_t host, batch;
        char *device, *namespace_name, *region;
        uint64_t bind_usec, online_usec, total_usec, blocks, bytes;
};

struct proc {
        size_t host;
        sd_id128_t boot;
        uint64_t pid;
        size_t last_batch;
};

struct jr {
        /* options */
        const char *directory;
        const char **files;
        size_t n_files, a_files;
        uint64_t since, until;
        bool have_boot;
        sd_id128_t boot;
        const char *host_filter;
        int node_filter;
        const char *device_filter;
        bool json, failures_mode, no_color;

        /* what we read */
        char **hosts;
        size_t n_hosts, a_hosts, last_host;
        struct batch *batches;
        size_t n_batches, a_batches;
        size_t *map;                    /* open addressing: batch index + 1, 0 = empty */
        size_t map_cap;
        struct failure *failures;
        size_t n_failures, a_failures;
        struct devrec *devices;
        size_t n_devices, a_devices;
        struct proc *procs;
        size_t n_procs, a_procs;

        locale_t c_locale;
        bool utf8, color;
};

static void jr_done(struct jr *c) {
        free(c->files);
        for (size_t i = 0; i < c->n_hosts; i++)
                free(c->hosts[i]);
        free(c->hosts);
        for (size_t i = 0; i < c->n_batches; i++) {
                struct batch *b = &c->batches[i];

                free(b->trigger);
                free(b->device);
                free(b->namespace_name);
                free(b->region);
                free(b->node_list);
                for (size_t k = 0; k < b->n_nodes; k++) {
                        free(b->nodes[k].zone);
                        free(b->nodes[k].cpus);
                }
                free(b->nodes);
                free(b->failures);
        }
        free(c->batches);
        free(c->map);
        for (size_t i = 0; i < c->n_failures; i++) {
                free(c->failures[i].block);
                free(c->failures[i].errno_name);
                free(c->failures[i].message);
        }
        free(c->failures);
        for (size_t i = 0; i < c->n_devices; i++) {
                free(c->devices[i].device);
                free(c->devices[i].namespace_name);
                free(c->devices[i].region);
        }
        free(c->devices);
        free(c->procs);
        if (c->c_locale != (locale_t) 0)
                freelocale(c->c_locale);
}

/* ---- time parsing -------------------------------------------------------- */

static int local_midnight(uint64_t now, int day_offset, uint64_t *ret) {
        time_t t = (time_t) (now / USEC_PER_SEC);
        struct tm tm;
        time_t m;

        if (!localtime_r(&t, &tm))
                return -EINVAL;
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        tm.tm_mday += day_offset;       /* mktime normalises, also across DST */
        tm.tm_isdst = -1;
        m = mktime(&tm);
        if (m == (time_t) -1 || m < 0)
                return -EINVAL;
        *ret = (uint64_t) m * USEC_PER_SEC;
        return 0;
}

static int parse_relative(const char *s, uint64_t now, uint64_t *ret) {
        static const struct { const char *suffix; uint64_t usec; } units[] = {
                { "",     USEC_PER_SEC },
                { "s",    USEC_PER_SEC },
                { "sec",  USEC_PER_SEC },
                { "m",    60 * USEC_PER_SEC },
                { "min",  60 * USEC_PER_SEC },
                { "h",    3600 * USEC_PER_SEC },
                { "d",    86400 * USEC_PER_SEC },
                { "w",    7 * 86400 * USEC_PER_SEC },
        };
        bool minus = s[0] == '-';
        unsigned long long n;
        char *end;

        if (s[1] < '0' || s[1] > '9')
                return -EINVAL;
        errno = 0;
        n = strtoull(s + 1, &end, 10);
        if (errno != 0)
                return -ERANGE;
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                uint64_t d;

                if (!streq(end, units[i].suffix))
                        continue;
                if (n > UINT64_MAX / units[i].usec)
                        return -ERANGE;
                d = n * units[i].usec;
                if (minus)
                        *ret = d > now ? 0 : now - d;
                else
                        *ret = d > UINT64_MAX - now ? UINT64_MAX : now + d;
                return 0;
        }
        return -EINVAL;
}

int journal_report_parse_time(const char *s, uint64_t now, uint64_t *ret) {
        static const char *const formats[] = { "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d" };

        if (!s || !*s)
                return -EINVAL;
        if (streq(s, "now")) {
                *ret = now;
                return 0;
        }
        if (streq(s, "today"))
                return local_midnight(now, 0, ret);
        if (streq(s, "yesterday"))
                return local_midnight(now, -1, ret);
        if (streq(s, "tomorrow"))
                return local_midnight(now, 1, ret);
        if (s[0] == '-' || s[0] == '+')
                return parse_relative(s, now, ret);
        if (s[0] == '@') {
                uint64_t v;
                int r = parse_u64(s + 1, 10, &v);

                if (r < 0)
                        return r;
                if (v > UINT64_MAX / USEC_PER_SEC)
                        return -ERANGE;
                *ret = v * USEC_PER_SEC;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(formats); i++) {
                struct tm tm = {};
                const char *end;
                time_t t;

                end = strptime(s, formats[i], &tm);
                if (!end || *end != '\0')
                        continue;
                tm.tm_isdst = -1;
                t = mktime(&tm);
                if (t == (time_t) -1 || t < 0)
                        return -EINVAL;
                *ret = (uint64_t) t * USEC_PER_SEC;
                return 0;
        }
        return -EINVAL;
}

/* ---- small formatting helpers ---------------------------------------------- */

/* Fixed-point without printf's %f, so a comma locale never leaks into JSON. */
const char *format_fixed(char *buf, size_t size, double v, unsigned decimals) {
        uint64_t scale = 1, x;
        bool neg = v < 0;

        for (unsigned i = 0; i < decimals; i++)
                scale *= 10;
        if (v != v)             /* NaN */
                v = 0;
        if (neg)
                v = -v;
        if (v > 1e15)
                v = 1e15;
        x = (uint64_t) (v * (double) scale + 0.5);
        if (decimals == 0)
                snprintf(buf, size, "%s%" PRIu64, neg && x ? "-" : "", x);
        else
                snprintf(buf, size, "%s%" PRIu64 ".%0*" PRIu64, neg && x ? "-" : "", x / scale,
                         (int) decimals, x % scale);
        return buf;
}

static void fmt_local_time(char *buf, size_t size, uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                snprintf(buf, size, "@%" PRIu64, (uint64_t) (usec / USEC_PER_SEC));
}

static void fmt_iso_utc(char *buf, size_t size, uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        char s[40];
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                snprintf(s, sizeof(s), "1970-01-01T00:00:00");
        snprintf(buf, size, "%.24s.%06" PRIu64 "Z", s, (uint64_t) (usec % USEC_PER_SEC));
}

void json_write_string(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) (s ?: ""); *p; p++) {
                switch (*p) {
                case '"':  fputs("\\\"", f); break;
                case '\\': fputs("\\\\", f); break;
                case '\n': fputs("\\n", f); break;
                case '\r': fputs("\\r", f); break;
                case '\t': fputs("\\t", f); break;
                default:
                        if (*p < 0x20 || *p == 0x7f)
                                fprintf(f, "\\u%04x", *p);
                        else
                                fputc(*p, f);
                }
        }
        fputc('"', f);
}

static void json_kv_str(FILE *f, const char *key, const char *value) {
        fprintf(f, ",\"%s\":", key);
        json_write_string(f, value);
}

static void json_kv_u64(FILE *f, const char *key, uint64_t v) {
        fprintf(f, ",\"%s\":%" PRIu64, key, v);
}

/* ---- reading entries ----------------------------------------------------- */

static int field_lookup(const char *name, size_t len) {
        for (int i = 0; i < _F_MAX; i++)
                if (strlen(field_names[i]) == len && memcmp(field_names[i], name, len) == 0)
                        return i;
        return -1;
}

static int raw_read(sd_journal *j, struct raw *e) {
        const void *d;
        size_t l;
        int r;

        memset(e->have, 0, sizeof(e->have));
        r = sd_journal_get_realtime_usec(j, &e->realtime);
        if (r < 0)
                return r;
        /* One pass over the entry's fields: get_data per field would rescan it each time. */
        sd_journal_restart_data(j);
        while ((r = sd_journal_enumerate_available_data(j, &d, &l)) > 0) {
                const char *eq = memchr(d, '=', l);
                size_t vl;
                int f;

                if (!eq)
                        continue;
                f = field_lookup(d, (size_t) (eq - (const char *) d));
                if (f < 0)
                        continue;
                vl = l - (size_t) (eq - (const char *) d) - 1;
                if (vl >= VALUE_MAX)
                        vl = VALUE_MAX - 1;
                memcpy(e->v[f], eq + 1, vl);
                e->v[f][vl] = '\0';
                e->have[f] = true;
        }
        return r;
}

static const char *raw_str(const struct raw *e, enum field f) {
        return e->have[f] ? e->v[f] : NULL;
}

static uint64_t raw_u64(const struct raw *e, enum field f, bool *ret_have) {
        uint64_t v = 0;
        bool ok = e->have[f] && parse_u64(e->v[f], 10, &v) >= 0;

        if (ret_have)
                *ret_have = ok;
        return ok ? v : 0;
}

static int raw_int(const struct raw *e, enum field f) {
        const char *s = raw_str(e, f);
        char *end;
        long v;

        if (!s || !*s)
                return -1;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < INT32_MIN || v > INT32_MAX)
                return -1;
        return (int) v;
}

static int strdup_field(const struct raw *e, enum field f, char **ret) {
        if (!e->have[f])
                return 0;
        free(*ret);
        *ret = strdup(e->v[f]);
        return *ret ? 0 : -ENOMEM;
}

static void counters_read(const struct jr *c, const struct raw *e, struct counters *k) {
        k->blocks = raw_u64(e, F_BLOCKS, NULL);
        k->bytes = raw_u64(e, F_BYTES, NULL);
        k->failed = raw_u64(e, F_FAILED, NULL);
        k->skipped = raw_u64(e, F_SKIPPED, NULL);
        k->duration_usec = raw_u64(e, F_DURATION, NULL);
        k->p50_usec = raw_u64(e, F_P50, NULL);
        k->p99_usec = raw_u64(e, F_P99, NULL);
        k->max_usec = raw_u64(e, F_MAX, NULL);
        k->latency_usec = raw_u64(e, F_LATENCY, &k->have_latency);
        k->cpu_usec = raw_u64(e, F_CPU_USEC, NULL);
        k->have_gibps = false;
        if (e->have[F_GIBPS]) {
                char *end;
                double g = strtod_l(e->v[F_GIBPS], &end, c->c_locale);

                if (end != e->v[F_GIBPS] && *end == '\0' && g >= 0) {
                        k->gibps = g;
                        k->have_gibps = true;
                }
        }
}

static double counters_gibps(const struct counters *k) {
        if (k->have_gibps)
                return k->gibps;
        if (k->duration_usec == 0)
                return 0;
        return ((double) k->bytes / GIB) / ((double) k->duration_usec / (double) USEC_PER_SEC);
}

static int host_intern(struct jr *c, const char *name, size_t *ret) {
        char *s;

        if (c->last_host < c->n_hosts && streq(c->hosts[c->last_host], name)) {
                *ret = c->last_host;
                return 0;
        }
        for (size_t i = 0; i < c->n_hosts; i++)
                if (streq(c->hosts[i], name)) {
                        *ret = c->last_host = i;
                        return 0;
                }
        if (GROW(c->hosts, c->a_hosts, c->n_hosts + 1) < 0)
                return -ENOMEM;
        s = strdup(name);
        if (!s)
                return -ENOMEM;
        c->hosts[c->n_hosts] = s;
        *ret = c->last_host = c->n_hosts++;
        return 0;
}

static uint64_t batch_hash(size_t host, sd_id128_t boot, uint64_t pid, uint64_t seq) {
        uint64_t a, b, h;

        memcpy(&a, boot.bytes, 8);
        memcpy(&b, boot.bytes + 8, 8);
        h = a ^ (b * 0x9e3779b97f4a7c15ULL) ^ (pid * 0xc2b2ae3d27d4eb4fULL) ^
            (seq * 0x165667b19e3779f9ULL) ^ ((uint64_t) host * 0x27d4eb2f165667c5ULL);
        /* splitmix64 finaliser */
        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebULL;
        h ^= h >> 31;
        return h;
}

static void map_insert(size_t *map, size_t cap, const struct batch *b, size_t idx) {
        size_t i = (size_t) batch_hash(b->host, b->boot, b->pid, b->seq) & (cap - 1);

        while (map[i] != 0)
                i = (i + 1) & (cap - 1);
        map[i] = idx + 1;
}

static int map_grow(struct jr *c) {
        size_t cap = c->map_cap ? c->map_cap * 2 : 1024;
        size_t *m = calloc(cap, sizeof(size_t));

        if (!m)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_batches; i++)
                map_insert(m, cap, &c->batches[i], i);
        free(c->map);
        c->map = m;
        c->map_cap = cap;
        return 0;
}

static int batch_get(struct jr *c, size_t host, sd_id128_t boot, uint64_t pid, uint64_t seq,
                     uint64_t realtime, size_t *ret) {
        struct batch *b;
        int r;

        if (c->map_cap > 0) {
                size_t i = (size_t) batch_hash(host, boot, pid, seq) & (c->map_cap - 1);

                for (; c->map[i] != 0; i = (i + 1) & (c->map_cap - 1)) {
                        b = &c->batches[c->map[i] - 1];
                        if (b->seq == seq && b->pid == pid && b->host == host && sd_id128_equal(b->boot, boot)) {
                                *ret = c->map[i] - 1;
                                return 0;
                        }
                }
        }
        if ((c->n_batches + 1) * 2 > c->map_cap) {
                r = map_grow(c);
                if (r < 0)
                        return r;
        }
        if (GROW(c->batches, c->a_batches, c->n_batches + 1) < 0)
                return -ENOMEM;
        b = &c->batches[c->n_batches];
        *b = (struct batch) {
                .host = host, .boot = boot, .pid = pid, .seq = seq,
                .realtime = realtime, .devrec = NONE,
        };
        map_insert(c->map, c->map_cap, b, c->n_batches);
        *ret = c->n_batches++;
        return 0;
}

static struct proc *proc_find(struct jr *c, size_t host, sd_id128_t boot, uint64_t pid) {
        for (size_t i = c->n_procs; i > 0; i--) {
                struct proc *p = &c->procs[i - 1];

                if (p->pid == pid && p->host == host && sd_id128_equal(p->boot, boot))
                        return p;
        }
        return NULL;
}

static int proc_note(struct jr *c, size_t host, sd_id128_t boot, uint64_t pid, size_t batch) {
        struct proc *p = proc_find(c, host, boot, pid);

        if (!p) {
                if (GROW(c->procs, c->a_procs, c->n_procs + 1) < 0)
                        return -ENOMEM;
                p = &c->procs[c->n_procs++];
                *p = (struct proc) { .host = host, .boot = boot, .pid = pid };
        }
        p->last_batch = batch;
        return 0;
}

/* The batch MEMONLINE_BATCH names, created on first sight; NONE without the field. */
static int batch_of(struct jr *c, const struct raw *e, size_t host, sd_id128_t boot, uint64_t pid, size_t *ret) {
        bool have_seq;
        uint64_t seq = raw_u64(e, F_BATCH, &have_seq);

        if (!have_seq) {
                *ret = NONE;
                return 0;
        }
        return batch_get(c, host, boot, pid, seq, e->realtime, ret);
}

/*
 * The batch a failure or device record belongs to: by MEMONLINE_BATCH if
 * it has one, else the last batch its daemon process wrote.
 */
static int batch_for_record(struct jr *c, const struct raw *e, size_t host, sd_id128_t boot, uint64_t pid,
                            size_t *ret) {
        struct proc *p;

        if (e->have[F_BATCH])
                return batch_of(c, e, host, boot, pid, ret);
        p = proc_find(c, host, boot, pid);
        *ret = p ? p->last_batch : NONE;
        return 0;
}

static int handle_batch(struct jr *c, const struct raw *e, size_t host, sd_id128_t boot, uint64_t pid) {
        struct batch *b;
        size_t idx;
        int r;

        r = batch_of(c, e, host, boot, pid, &idx);
        if (r < 0 || idx == NONE)
                return r;
        b = &c->batches[idx];
        b->have_record = true;
        b->realtime = e->realtime;
        counters_read(c, e, &b->c);
        if (strdup_field(e, F_TRIGGER, &b->trigger) < 0 || strdup_field(e, F_DEVICE, &b->device) < 0 ||
            strdup_field(e, F_NAMESPACE, &b->namespace_name) < 0 || strdup_field(e, F_REGION, &b->region) < 0 ||
            strdup_field(e, F_NODES, &b->node_list) < 0)
                return -ENOMEM;
        return proc_note(c, host, boot, pid, idx);
}

static int handle_node(struct jr *c, const struct raw *e, size_t host, sd_id128_t boot, uint64_t pid) {
        struct node_rec *n;
        struct batch *b;
        size_t idx;
        int r;

        r = batch_of(c, e, host, boot, pid, &idx);
        if (r < 0 || idx == NONE)
                return r;
        b = &c->batches[idx];
        if (GROW(b->nodes, b->a_nodes, b->n_nodes + 1) < 0)
                return -ENOMEM;
        n = &b->nodes[b->n_nodes++];
        *n = (struct node_rec) { .node = raw_int(e, F_NODE), .writer_node = raw_int(e, F_WRITER_NODE) };
        counters_read(c, e, &n->c);
        if (strdup_field(e, F_ZONE, &n->zone) < 0 || strdup_field(e, F_CPUS, &n->cpus) < 0)
                return -ENOMEM;
        return proc_note(c, host, boot, pid, idx);
}

static int handle_failure(struct jr *c, const struct raw *e, size_t host, sd_id128_t boot, uint64_t pid) {
        struct failure *f;
        size_t idx, fi;
        int r;

        r = batch_for_record(c, e, host, boot, pid, &idx);
        if (r < 0)
                return r;
        if (GROW(c->failures, c->a_failures, c->n_failures + 1) < 0)
                return -ENOMEM;
        fi = c->n_failures++;
        f = &c->failures[fi];
        *f = (struct failure) {
                .realtime = e->realtime, .host = host, .batch = idx,
                .node = raw_int(e, F_NODE), .err = raw_int(e, F_ERRNO),
                .attempts = raw_u64(e, F_ATTEMPTS, NULL),
        };
        if (strdup_field(e, F_BLOCK, &f->block) < 0 || strdup_field(e, F_ERRNO_NAME, &f->errno_name) < 0 ||
            strdup_field(e, F_MESSAGE, &f->message) < 0)
                return -ENOMEM;
        if (idx != NONE) {
                struct batch *b = &c->batches[idx];

                if (GROW(b->failures, b->a_failures, b->n_failures + 1) < 0)
                        return -ENOMEM;
                b->failures[b->n_failures++] = fi;
        }
        return 0;
}

/* Is item one of the comma-separated values of list? (Batch records list every device they touched.) */
static bool list_has(const char *list, const char *item) {
        size_t n = strlen(item);

        for (const char *p = list; p && *p; ) {
                size_t l = strcspn(p, ",");

                if (l == n && memcmp(p, item, n) == 0)
                        return true;
                p += l;
                if (*p == ',')
                        p++;
        }
        return false;
}

static int handle_device(struct jr *c, const struct raw *e, size_t host, sd_id128_t boot, uint64_t pid) {
        struct devrec *d;
        size_t idx, di;
        int r;

        r = batch_for_record(c, e, host, boot, pid, &idx);
        if (r < 0)
                return r;
        /* Without a seq, only join a batch that onlined this very device. */
        if (idx != NONE && !e->have[F_BATCH] &&
            (!e->have[F_DEVICE] || !list_has(c->batches[idx].device, e->v[F_DEVICE])))
                idx = NONE;
        if (GROW(c->devices, c->a_devices, c->n_devices + 1) < 0)
                return -ENOMEM;
        di = c->n_devices++;
        d = &c->devices[di];
        *d = (struct devrec) {
                .realtime = e->realtime, .host = host, .batch = idx,
                .bind_usec = raw_u64(e, F_BIND, NULL), .online_usec = raw_u64(e, F_ONLINE, NULL),
                .total_usec = raw_u64(e, F_TOTAL, NULL), .blocks = raw_u64(e, F_BLOCKS, NULL),
                .bytes = raw_u64(e, F_BYTES, NULL),
        };
        if (strdup_field(e, F_DEVICE, &d->device) < 0 || strdup_field(e, F_NAMESPACE, &d->namespace_name) < 0 ||
            strdup_field(e, F_REGION, &d->region) < 0)
                return -ENOMEM;
        if (idx != NONE)
                c->batches[idx].devrec = di;
        return 0;
}

static int handle_entry(struct jr *c, const struct raw *e) {
        const char *id = raw_str(e, F_MESSAGE_ID);
        sd_id128_t boot = SD_ID128_NULL;
        uint64_t pid;
        size_t host;
        int r;

        if (!id)
                return 0;
        r = host_intern(c, raw_str(e, F_HOSTNAME) ?: "", &host);
        if (r < 0)
                return r;
        if (e->have[F_BOOT_ID])
                (void) sd_id128_from_string(e->v[F_BOOT_ID], &boot);
        pid = raw_u64(e, F_PID, NULL);

        if (streq(id, MESSAGE_ID_BATCH))
                return handle_batch(c, e, host, boot, pid);
        if (streq(id, MESSAGE_ID_NODE))
                return handle_node(c, e, host, boot, pid);
        if (streq(id, MESSAGE_ID_FAILURE))
                return handle_failure(c, e, host, boot, pid);
        if (streq(id, MESSAGE_ID_DEVICE))
                return handle_device(c, e, host, boot, pid);
        return 0;
}

static int add_match(sd_journal *j, const char *field, const char *value) {
        _cleanup_free_ char *m = NULL;

        if (asprintf(&m, "%s=%s", field, value) < 0)
                return -ENOMEM;
        return sd_journal_add_match(j, m, 0);
}

static int read_journal(struct jr *c) {
        static const char *const ids[] = { MESSAGE_ID_BATCH, MESSAGE_ID_NODE, MESSAGE_ID_FAILURE, MESSAGE_ID_DEVICE };
        _cleanup_free_ struct raw *e = NULL;
        sd_journal *j = NULL;
        int r;

        if (c->n_files > 0) {
                r = sd_journal_open_files(&j, c->files, 0);
                if (r < 0) {
                        fprintf(stderr, "report: cannot open journal file %s: %s\n", c->files[0], strerror(-r));
                        return r;
                }
        } else if (c->directory) {
                r = sd_journal_open_directory(&j, c->directory, 0);
                if (r < 0) {
                        fprintf(stderr, "report: cannot open journal directory %s: %s\n", c->directory, strerror(-r));
                        return r;
                }
        } else {
                r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM);
                if (r < 0) {
                        fprintf(stderr, "report: cannot open the system journal: %s\n", strerror(-r));
                        return r;
                }
        }

        e = malloc(sizeof(*e));
        if (!e) {
                r = -ENOMEM;
                goto finish;
        }
        /* Same-field matches are OR'd, different fields AND'd: (id1|id2|id3|id4) & host & boot. */
        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                r = add_match(j, "MESSAGE_ID", ids[i]);
                if (r < 0)
                        goto finish;
        }
        if (c->host_filter) {
                r = add_match(j, "_HOSTNAME", c->host_filter);
                if (r < 0)
                        goto finish;
        }
        if (c->have_boot) {
                char s[SD_ID128_STRING_MAX];

                r = add_match(j, "_BOOT_ID", sd_id128_to_string(c->boot, s));
                if (r < 0)
                        goto finish;
        }
        r = sd_journal_set_data_threshold(j, 4096);
        if (r < 0)
                goto finish;
        r = c->since > 0 ? sd_journal_seek_realtime_usec(j, c->since) : sd_journal_seek_head(j);
        if (r < 0)
                goto finish;

        for (;;) {
                r = sd_journal_next(j);
                if (r < 0) {
                        fprintf(stderr, "report: cannot read the next journal entry: %s\n", strerror(-r));
                        goto finish;
                }
                if (r == 0)
                        break;
                r = raw_read(j, e);
                if (r < 0) {
                        fprintf(stderr, "report: cannot read journal entry data: %s\n", strerror(-r));
                        goto finish;
                }
                if (e->realtime < c->since)
                        continue;
                if (e->realtime > c->until)
                        break;
                r = handle_entry(c, e);
                if (r < 0)
                        goto finish;
        }
        r = 0;
finish:
        sd_journal_close(j);
        if (r < 0 && r != -ENOMEM)
                return r;
        if (r == -ENOMEM)
                fprintf(stderr, "report: out of memory\n");
        return r;
}

static int host_index_cmp(const void *a, const void *b, void *userdata) {
        char *const *hosts = userdata;

        return strcmp(hosts[*(const size_t *) a], hosts[*(const size_t *) b]);
}

/* Hosts in name order, so every table lists them alike. */
static int sort_hosts(struct jr *c) {
        _cleanup_free_ size_t *order = calloc(c->n_hosts ?: 1, sizeof(size_t));
        _cleanup_free_ size_t *rank = calloc(c->n_hosts ?: 1, sizeof(size_t));
        _cleanup_free_ char **sorted = calloc(c->n_hosts ?: 1, sizeof(char *));

        if (!order || !rank || !sorted)
                return -ENOMEM;
        if (c->n_hosts == 0)
                return 0;
        for (size_t i = 0; i < c->n_hosts; i++)
                order[i] = i;
        qsort_r(order, c->n_hosts, sizeof(size_t), host_index_cmp, c->hosts);
        for (size_t i = 0; i < c->n_hosts; i++) {
                rank[order[i]] = i;
                sorted[i] = c->hosts[order[i]];
        }
        memcpy(c->hosts, sorted, c->n_hosts * sizeof(char *));
        for (size_t i = 0; i < c->n_batches; i++)
                c->batches[i].host = rank[c->batches[i].host];
        for (size_t i = 0; i < c->n_failures; i++)
                c->failures[i].host = rank[c->failures[i].host];
        for (size_t i = 0; i < c->n_devices; i++)
                c->devices[i].host = rank[c->devices[i].host];
        /* The batch map and process list hash host indices; reading is over, so drop them. */
        free(TAKE_PTR(c->map));
        c->map_cap = 0;
        free(TAKE_PTR(c->procs));
        c->n_procs = c->a_procs = 0;
        return 0;
}

/* ---- selection ----------------------------------------------------------- */

static bool node_visible(const struct jr *c, int node) {
        return c->node_filter < 0 || node == c->node_filter;
}

static bool batch_visible(const struct jr *c, const struct batch *b) {
        if (c->device_filter) {
                const char *dev = b->device;

                if (!dev && b->devrec != NONE)
                        dev = c->devices[b->devrec].device;
                if (!list_has(dev, c->device_filter))
                        return false;
        }
        if (c->node_filter >= 0) {
                for (size_t i = 0; i < b->n_nodes; i++)
                        if (b->nodes[i].node == c->node_filter)
                                return true;
                for (size_t i = 0; i < b->n_failures; i++)
                        if (c->failures[b->failures[i]].node == c->node_filter)
                                return true;
                return false;
        }
        return true;
}

static bool failure_visible(const struct jr *c, const struct failure *f) {
        if (!node_visible(c, f->node))
                return false;
        if (c->device_filter)
                return f->batch != NONE && batch_visible(c, &c->batches[f->batch]);
        return true;
}

/* Batch totals; without its batch record (filtered out or lost), from the node records. */
static void batch_totals(const struct batch *b, struct counters *ret) {
        if (b->have_record) {
                *ret = b->c;
                return;
        }
        *ret = (struct counters) {};
        for (size_t i = 0; i < b->n_nodes; i++) {
                const struct counters *n = &b->nodes[i].c;

                ret->blocks += n->blocks;
                ret->bytes += n->bytes;
                ret->failed += n->failed;
                ret->skipped += n->skipped;
                ret->cpu_usec += n->cpu_usec;
                if (n->duration_usec > ret->duration_usec)
                        ret->duration_usec = n->duration_usec;
                if (n->p99_usec > ret->p99_usec)
                        ret->p99_usec = n->p99_usec;
                if (n->max_usec > ret->max_usec)
                        ret->max_usec = n->max_usec;
        }
}

static const char *batch_trigger(const struct jr *c, const struct batch *b) {
        if (b->device)
                return b->device;
        if (b->devrec != NONE && c->devices[b->devrec].device)
                return c->devices[b->devrec].device;
        return b->trigger ?: "-";
}

struct sort_item {
        uint64_t realtime;
        size_t idx;
};

static int sort_item_cmp(const void *a, const void *b) {
        const struct sort_item *x = a, *y = b;

        if (x->realtime != y->realtime)
                return x->realtime < y->realtime ? -1 : 1;
        return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int visible_batches(const struct jr *c, size_t **ret, size_t *ret_n) {
        _cleanup_free_ struct sort_item *items = NULL;
        size_t *out, n = 0;

        items = calloc(c->n_batches ?: 1, sizeof(*items));
        if (!items)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_batches; i++)
                if (batch_visible(c, &c->batches[i]))
                        items[n++] = (struct sort_item) { c->batches[i].realtime, i };
        qsort(items, n, sizeof(*items), sort_item_cmp);
        out = calloc(n ?: 1, sizeof(size_t));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                out[i] = items[i].idx;
        *ret = out;
        *ret_n = n;
        return 0;
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_failure_fields(const struct jr *c, FILE *out, const struct failure *f) {
        char t[64];

        fmt_iso_utc(t, sizeof(t), f->realtime);
        fputs("{\"time\":", out);
        json_write_string(out, t);
        json_kv_str(out, "host", c->hosts[f->host]);
        json_kv_str(out, "block", f->block);
        fprintf(out, ",\"node\":%d,\"errno\":%d", f->node, f->err);
        json_kv_str(out, "errno_name", f->errno_name);
        json_kv_u64(out, "attempts", f->attempts);
        json_kv_str(out, "message", f->message);
        if (f->batch != NONE)
                json_kv_u64(out, "batch", c->batches[f->batch].seq);
        fputc('}', out);
}

static void json_counters(FILE *out, const struct counters *k) {
        char g[64];

        json_kv_u64(out, "blocks", k->blocks);
        json_kv_u64(out, "bytes", k->bytes);
        json_kv_u64(out, "failed", k->failed);
        json_kv_u64(out, "skipped", k->skipped);
        json_kv_u64(out, "duration_usec", k->duration_usec);
        fprintf(out, ",\"gibps\":%s", format_fixed(g, sizeof(g), counters_gibps(k), 3));
        json_kv_u64(out, "p50_usec", k->p50_usec);
        json_kv_u64(out, "p99_usec", k->p99_usec);
        json_kv_u64(out, "max_usec", k->max_usec);
        if (k->have_latency)
                json_kv_u64(out, "latency_usec", k->latency_usec);
        json_kv_u64(out, "cpu_usec", k->cpu_usec);
}

static void json_device(FILE *out, const struct jr *c, const struct devrec *d) {
        char t[64];

        fmt_iso_utc(t, sizeof(t), d->realtime);
        fputs("{\"time\":", out);
        json_write_string(out, t);
        json_kv_str(out, "host", c->hosts[d->host]);
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

static void json_batch(FILE *out, const struct jr *c, const struct batch *b) {
        char t[64], boot[SD_ID128_STRING_MAX];
        struct counters k;
        bool first;

        batch_totals(b, &k);
        fmt_iso_utc(t, sizeof(t), b->realtime);
        fputs("{\"type\":\"batch\",\"time\":", out);
        json_write_string(out, t);
        json_kv_str(out, "host", c->hosts[b->host]);
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
        json_counters(out, &k);
        fputs(",\"nodes\":[", out);
        first = true;
        for (size_t i = 0; i < b->n_nodes; i++) {
                const struct node_rec *n = &b->nodes[i];

                if (!node_visible(c, n->node))
                        continue;
                fprintf(out, "%s{\"node\":%d,\"writer_node\":%d", first ? "" : ",", n->node, n->writer_node);
                json_kv_str(out, "zone", n->zone);
                json_kv_str(out, "cpus", n->cpus);
                json_counters(out, &n->c);
                fputc('}', out);
                first = false;
        }
        fputs("],\"failures\":[", out);
        first = true;
        for (size_t i = 0; i < b->n_failures; i++) {
                const struct failure *f = &c->failures[b->failures[i]];

                if (!failure_visible(c, f))
                        continue;
                if (!first)
                        fputc(',', out);
                json_failure_fields(c, out, f);
                first = false;
        }
        fputc(']', out);
        if (b->devrec != NONE) {
                fputs(",\"conversion\":", out);
                json_device(out, c, &c->devices[b->devrec]);
        }
        fputs("}\n", out);
}

/* ---- table ------------------------------------------------------------------ */

#define ANSI_RED    "\033[31m"
#define ANSI_YELLOW "\033[33m"
#define ANSI_GREEN  "\033[32m"
#define ANSI_BOLD   "\033[1m"
#define ANSI_RESET  "\033[0m"

static const char *on(const struct jr *c, const char *code) {
        return c->color ? code : "";
}

static const char *off(const struct jr *c) {
        return c->color ? ANSI_RESET : "";
}

static void print_bar(FILE *out, const struct jr *c, double v, double max) {
        /* U+2588 and the eighth blocks U+258F..U+2589 for sub-character resolution. */
        static const char *const eighths[] = { "", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589" };
        unsigned units;

        if (max <= 0 || v <= 0)
                return;
        units = (unsigned) (v / max * BAR_WIDTH * 8 + 0.5);
        fputs(on(c, ANSI_GREEN), out);
        if (c->utf8) {
                for (unsigned i = 0; i < units / 8; i++)
                        fputs("\u2588", out);
                fputs(eighths[units % 8], out);
        } else
                for (unsigned i = 0; i < (units + 4) / 8; i++)
                        fputc('#', out);
        fputs(off(c), out);
}

struct node_sum {
        size_t host;
        int node;
        uint64_t batches, blocks, bytes, usec, failed;
};

static int node_sum_cmp(const void *a, const void *b) {
        const struct node_sum *x = a, *y = b;

        if (x->host != y->host)
                return x->host < y->host ? -1 : 1;
        return (x->node > y->node) - (x->node < y->node);
}

static int double_cmp(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

static int print_node_summary(FILE *out, const struct jr *c, const size_t *vis, size_t n_vis, bool show_host,
                              size_t host_w) {
        _cleanup_free_ struct node_sum *sums = NULL;
        size_t n = 0, a = 0;
        double max = 0;
        char g1[32], g2[32], g3[32];

        for (size_t i = 0; i < n_vis; i++) {
                const struct batch *b = &c->batches[vis[i]];

                for (size_t k = 0; k < b->n_nodes; k++) {
                        const struct node_rec *nr = &b->nodes[k];
                        struct node_sum *s = NULL;

                        if (!node_visible(c, nr->node))
                                continue;
                        for (size_t q = 0; q < n; q++)
                                if (sums[q].host == b->host && sums[q].node == nr->node) {
                                        s = &sums[q];
                                        break;
                                }
                        if (!s) {
                                if (GROW(sums, a, n + 1) < 0)
                                        return -ENOMEM;
                                s = &sums[n++];
                                *s = (struct node_sum) { .host = b->host, .node = nr->node };
                        }
                        s->batches++;
                        s->blocks += nr->c.blocks;
                        s->bytes += nr->c.bytes;
                        s->usec += nr->c.duration_usec;
                        s->failed += nr->c.failed;
                }
        }
        if (n == 0)
                return 0;
        qsort(sums, n, sizeof(*sums), node_sum_cmp);
        for (size_t i = 0; i < n; i++) {
                double r = sums[i].usec ? (double) sums[i].bytes / GIB / ((double) sums[i].usec / USEC_PER_SEC) : 0;

                if (r > max)
                        max = r;
        }

        fprintf(out, "\n%sPer node:%s\n", on(c, ANSI_BOLD), off(c));
        if (show_host)
                fprintf(out, "%-*s  ", (int) host_w, "HOST");
        fprintf(out, "%4s %8s %8s %10s %10s %8s\n", "NODE", "BATCHES", "BLOCKS", "GiB", "TIME s", "GiB/s");
        for (size_t i = 0; i < n; i++) {
                const struct node_sum *s = &sums[i];
                double r = s->usec ? (double) s->bytes / GIB / ((double) s->usec / USEC_PER_SEC) : 0;

                if (show_host)
                        fprintf(out, "%-*s  ", (int) host_w, c->hosts[s->host]);
                fprintf(out, "%4d %8" PRIu64 " %8" PRIu64 " %10s %10s %8s  ", s->node, s->batches, s->blocks,
                        format_fixed(g1, sizeof(g1), (double) s->bytes / GIB, 2),
                        format_fixed(g2, sizeof(g2), (double) s->usec / USEC_PER_SEC, 3),
                        format_fixed(g3, sizeof(g3), r, 2));
                print_bar(out, c, r, max);
                fputc('\n', out);
        }
        return 0;
}

static int print_host_summary(FILE *out, const struct jr *c, const size_t *vis, size_t n_vis, size_t host_w) {
        _cleanup_free_ double *rates = NULL;
        _cleanup_free_ double *medians = NULL;
        size_t slowest = NONE;
        double fastest = -1;
        char g1[32], g2[32];

        rates = calloc(n_vis ?: 1, sizeof(double));
        medians = calloc(c->n_hosts ?: 1, sizeof(double));
        if (!rates || !medians)
                return -ENOMEM;

        for (size_t h = 0; h < c->n_hosts; h++) {
                size_t n = 0;

                for (size_t i = 0; i < n_vis; i++) {
                        const struct batch *b = &c->batches[vis[i]];
                        struct counters k;

                        if (b->host != h)
                                continue;
                        batch_totals(b, &k);
                        if (k.bytes > 0 && (k.duration_usec > 0 || k.have_gibps))
                                rates[n++] = counters_gibps(&k);
                }
                medians[h] = -1;
                if (n == 0)
                        continue;
                qsort(rates, n, sizeof(double), double_cmp);
                medians[h] = n % 2 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
                if (slowest == NONE || medians[h] < medians[slowest])
                        slowest = h;
                if (medians[h] > fastest)
                        fastest = medians[h];
        }
        /* Hosts that all run at the same speed have no slowest one. */
        if (slowest != NONE && !(medians[slowest] < fastest))
                slowest = NONE;

        fprintf(out, "\n%sPer host:%s\n", on(c, ANSI_BOLD), off(c));
        fprintf(out, "%-*s  %8s %8s %10s %13s\n", (int) host_w, "HOST", "BATCHES", "BLOCKS", "GiB", "MEDIAN GiB/s");
        for (size_t h = 0; h < c->n_hosts; h++) {
                uint64_t batches = 0, blocks = 0, bytes = 0;

                for (size_t i = 0; i < n_vis; i++) {
                        const struct batch *b = &c->batches[vis[i]];
                        struct counters k;

                        if (b->host != h)
                                continue;
                        batch_totals(b, &k);
                        batches++;
                        blocks += k.blocks;
                        bytes += k.bytes;
                }
                if (batches == 0)
                        continue;
                fprintf(out, "%-*s  %8" PRIu64 " %8" PRIu64 " %10s %13s", (int) host_w, c->hosts[h], batches, blocks,
                        format_fixed(g1, sizeof(g1), (double) bytes / GIB, 2),
                        medians[h] < 0 ? "-" : format_fixed(g2, sizeof(g2), medians[h], 2));
                if (h == slowest)
                        fprintf(out, "  %sslowest%s", on(c, ANSI_YELLOW), off(c));
                fputc('\n', out);
        }
        return 0;
}

static void print_devices(FILE *out, const struct jr *c, bool show_host, size_t host_w) {
        bool header = false;
        char t[64], g1[32], g2[32], g3[32], g4[32];

        for (size_t i = 0; i < c->n_devices; i++) {
                const struct devrec *d = &c->devices[i];

                if (c->device_filter && (!d->device || !streq(d->device, c->device_filter)))
                        continue;
                if (c->node_filter >= 0 && (d->batch == NONE || !batch_visible(c, &c->batches[d->batch])))
                        continue;
                if (!header) {
                        fprintf(out, "\n%sDevice conversions:%s\n", on(c, ANSI_BOLD), off(c));
                        fprintf(out, "%-19s  ", "TIME");
                        if (show_host)
                                fprintf(out, "%-*s  ", (int) host_w, "HOST");
                        fprintf(out, "%-10s %-14s %-8s %7s %9s %8s %9s %8s\n", "DEVICE", "NAMESPACE", "REGION",
                                "BLOCKS", "GiB", "BIND s", "ONLINE s", "TOTAL s");
                        header = true;
                }
                fmt_local_time(t, sizeof(t), d->realtime);
                fprintf(out, "%-19s  ", t);
                if (show_host)
                        fprintf(out, "%-*s  ", (int) host_w, c->hosts[d->host]);
                fprintf(out, "%-10s %-14s %-8s %7" PRIu64 " %9s %8s %9s %8s\n", d->device ?: "-",
                        d->namespace_name ?: "-", d->region ?: "-", d->blocks,
                        format_fixed(g1, sizeof(g1), (double) d->bytes / GIB, 2),
                        format_fixed(g2, sizeof(g2), (double) d->bind_usec / USEC_PER_SEC, 3),
                        format_fixed(g3, sizeof(g3), (double) d->online_usec / USEC_PER_SEC, 3),
                        format_fixed(g4, sizeof(g4), (double) d->total_usec / USEC_PER_SEC, 3));
        }
}

static size_t hosts_width(const struct jr *c, const size_t *vis, size_t n_vis, size_t *ret_n_hosts) {
        _cleanup_free_ bool *seen = calloc(c->n_hosts ?: 1, sizeof(bool));
        size_t w = 4, n = 0;

        for (size_t i = 0; i < n_vis; i++) {
                size_t h = c->batches[vis[i]].host;

                if (seen && !seen[h]) {
                        seen[h] = true;
                        n++;
                }
                if (strlen(c->hosts[h]) > w)
                        w = strlen(c->hosts[h]);
        }
        *ret_n_hosts = seen ? n : 2;
        return w;
}

static int print_table(FILE *out, const struct jr *c, const size_t *vis, size_t n_vis) {
        uint64_t blocks = 0, bytes = 0, failed = 0;
        size_t n_hosts, host_w, trig_w = 7;
        bool show_host;
        char t[64], g1[32], g2[32], g3[32];
        int r;

        host_w = hosts_width(c, vis, n_vis, &n_hosts);
        show_host = n_hosts > 1;
        for (size_t i = 0; i < n_vis; i++) {
                size_t l = strlen(batch_trigger(c, &c->batches[vis[i]]));

                if (l > trig_w)
                        trig_w = l;
        }

        fprintf(out, "%s%-19s  ", on(c, ANSI_BOLD), "TIME");
        if (show_host)
                fprintf(out, "%-*s  ", (int) host_w, "HOST");
        /* "µ" is two bytes in UTF-8 but one column. */
        fprintf(out, "%-*s %8s %10s %9s %8s %*s %6s%s\n", (int) trig_w, "TRIGGER", "BLOCKS", "GiB", "WALL s",
                "GiB/s", c->utf8 ? 10 : 9, c->utf8 ? "P99 \u00b5s" : "P99 us", "FAILED", off(c));

        for (size_t i = 0; i < n_vis; i++) {
                const struct batch *b = &c->batches[vis[i]];
                struct counters k;
                uint64_t nfail;

                batch_totals(b, &k);
                nfail = k.failed;
                if (nfail < b->n_failures)
                        nfail = b->n_failures;
                blocks += k.blocks;
                bytes += k.bytes;
                failed += nfail;
                fmt_local_time(t, sizeof(t), b->realtime);
                fprintf(out, "%-19s  ", t);
                if (show_host)
                        fprintf(out, "%-*s  ", (int) host_w, c->hosts[b->host]);
                fprintf(out, "%-*s %8" PRIu64 " %10s %9s %8s %9" PRIu64 " %s%6" PRIu64 "%s\n", (int) trig_w,
                        batch_trigger(c, b), k.blocks, format_fixed(g1, sizeof(g1), (double) k.bytes / GIB, 2),
                        format_fixed(g2, sizeof(g2), (double) k.duration_usec / USEC_PER_SEC, 3),
                        format_fixed(g3, sizeof(g3), counters_gibps(&k), 2), k.p99_usec,
                        nfail ? on(c, ANSI_RED) : "", nfail, nfail ? off(c) : "");
        }
        fprintf(out, "%zu batches, %" PRIu64 " blocks, %s GiB, %" PRIu64 " failed\n", n_vis, blocks,
                format_fixed(g1, sizeof(g1), (double) bytes / GIB, 2), failed);

        r = print_node_summary(out, c, vis, n_vis, show_host, host_w);
        if (r < 0)
                return r;
        if (show_host) {
                r = print_host_summary(out, c, vis, n_vis, host_w);
                if (r < 0)
                        return r;
        }
        print_devices(out, c, show_host, host_w);
        return 0;
}

static int print_failures(FILE *out, const struct jr *c) {
        size_t w = 4, n = 0;
        char t[64];

        for (size_t i = 0; i < c->n_failures; i++)
                if (failure_visible(c, &c->failures[i]) && strlen(c->hosts[c->failures[i].host]) > w)
                        w = strlen(c->hosts[c->failures[i].host]);

        for (size_t i = 0; i < c->n_failures; i++) {
                const struct failure *f = &c->failures[i];

                if (!failure_visible(c, f))
                        continue;
                if (c->json) {
                        json_failure_fields(c, out, f);
                        fputc('\n', out);
                        n++;
                        continue;
                }
                if (n++ == 0)
                        fprintf(out, "%s%-19s  %-*s  %-14s %4s %-10s %8s  %s%s\n", on(c, ANSI_BOLD), "TIME", (int) w,
                                "HOST", "BLOCK", "NODE", "ERRNO", "ATTEMPTS", "MESSAGE", off(c));
                fmt_local_time(t, sizeof(t), f->realtime);
                fprintf(out, "%-19s  %-*s  %-14s %4d %s%-10s%s %8" PRIu64 "  %s\n", t, (int) w, c->hosts[f->host],
                        f->block ?: "-", f->node, on(c, ANSI_RED), f->errno_name ?: "-", off(c), f->attempts,
                        f->message ?: "");
        }
        if (n == 0 && !c->json)
                fprintf(stderr, "No failed memory blocks found.\n");
        return 0;
}

/* ---- options ------------------------------------------------------------- */

static void help(FILE *out) {
        fputs("memonlined report [OPTIONS]\n\n"
              "Summarise memonlined's batch, node, failure and device records from the journal.\n\n"
              "  -D --directory=DIR   Read the journal files in DIR (e.g. systemd-journal-remote output)\n"
              "     --file=FILE       Read this journal file (repeatable)\n"
              "  -S --since=TIME      Records at or after TIME (\"2024-05-01 10:00:00\", \"-1h\", \"today\")\n"
              "  -U --until=TIME      Records at or before TIME\n"
              "  -b --boot[=ID|0]     Only this boot (0: the current boot)\n"
              "     --host=NAME       Only records from this _HOSTNAME\n"
              "     --node=N          Only batches that touched node N, and only node N's records\n"
              "     --device=DAX      Only batches and conversions of this dax device (e.g. dax0.0)\n"
              "     --json            One JSON object per batch, per line\n"
              "     --failures        List failed blocks instead of batches\n"
              "     --no-color        No colour (also NO_COLOR=1)\n"
              "     --no-pager        Accepted for journalctl habits; output is never paged\n"
              "  -h --help            Show this help\n", out);
}

static int parse_boot(struct jr *c, const char *s) {
        int r;

        if (streq(s, "0"))
                r = sd_id128_get_boot(&c->boot);
        else
                r = sd_id128_from_string(s, &c->boot);
        if (r < 0)
                return r;
        c->have_boot = true;
        return 0;
}

/* 1: go on; 0: done (help); < 0: usage error already printed. */
static int parse_argv(struct jr *c, int argc, char **argv) {
        enum {
                ARG_FILE = 0x100, ARG_HOST, ARG_NODE, ARG_DEVICE, ARG_JSON, ARG_FAILURES,
                ARG_NO_COLOR, ARG_NO_PAGER,
        };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h'          },
                { "directory", required_argument, NULL, 'D'          },
                { "file",      required_argument, NULL, ARG_FILE     },
                { "since",     required_argument, NULL, 'S'          },
                { "until",     required_argument, NULL, 'U'          },
                { "boot",      optional_argument, NULL, 'b'          },
                { "host",      required_argument, NULL, ARG_HOST     },
                { "node",      required_argument, NULL, ARG_NODE     },
                { "device",    required_argument, NULL, ARG_DEVICE   },
                { "json",      no_argument,       NULL, ARG_JSON     },
                { "failures",  no_argument,       NULL, ARG_FAILURES },
                { "no-color",  no_argument,       NULL, ARG_NO_COLOR },
                { "no-pager",  no_argument,       NULL, ARG_NO_PAGER },
                {}
        };
        struct timespec ts;
        uint64_t now;
        unsigned u;
        int opt, r;

        clock_gettime(CLOCK_REALTIME, &ts);
        now = (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;

        optind = 0;     /* full getopt reset: main() may have parsed its own options */
        while ((opt = getopt_long(argc, argv, "+hD:S:U:b::", options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'D':
                        c->directory = optarg;
                        break;
                case ARG_FILE:
                        if (GROW(c->files, c->a_files, c->n_files + 2) < 0)
                                return -ENOMEM;
                        c->files[c->n_files++] = optarg;
                        c->files[c->n_files] = NULL;
                        break;
                case 'S':
                case 'U':
                        r = journal_report_parse_time(optarg, now, opt == 'S' ? &c->since : &c->until);
                        if (r < 0) {
                                fprintf(stderr, "report: cannot parse %s time \"%s\"\n",
                                        opt == 'S' ? "--since" : "--until", optarg);
                                return -EINVAL;
                        }
                        break;
                case 'b': {
                        /* Like journalctl: "--boot ID" with a separate word as well as "--boot=ID". */
                        const char *arg = optarg;

                        if (!arg && optind < argc && argv[optind][0] != '-')
                                arg = argv[optind++];
                        r = parse_boot(c, arg ?: "0");
                        if (r < 0) {
                                fprintf(stderr, "report: cannot use boot \"%s\": %s\n", arg ?: "0", strerror(-r));
                                return -EINVAL;
                        }
                        break;
                }
                case ARG_HOST:
                        c->host_filter = optarg;
                        break;
                case ARG_NODE:
                        if (parse_unsigned(optarg, &u) < 0 || u > INT32_MAX) {
                                fprintf(stderr, "report: invalid --node \"%s\"\n", optarg);
                                return -EINVAL;
                        }
                        c->node_filter = (int) u;
                        break;
                case ARG_DEVICE:
                        c->device_filter = optarg;
                        break;
                case ARG_JSON:
                        c->json = true;
                        break;
                case ARG_FAILURES:
                        c->failures_mode = true;
                        break;
                case ARG_NO_COLOR:
                        c->no_color = true;
                        break;
                case ARG_NO_PAGER:
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "report: unexpected argument \"%s\"\n", argv[optind]);
                return -EINVAL;
        }
        if (c->directory && c->n_files > 0) {
                fprintf(stderr, "report: --directory and --file exclude each other\n");
                return -EINVAL;
        }
        if (c->since > c->until) {
                fprintf(stderr, "report: --since is later than --until\n");
                return -EINVAL;
        }
        return 1;
}

static bool locale_is_utf8(void) {
        locale_t l = newlocale(LC_CTYPE_MASK, "", (locale_t) 0);
        const char *cs;
        bool utf8;

        /* Ask the environment's locale without touching the process-wide one. */
        if (l == (locale_t) 0)
                return streq(nl_langinfo(CODESET), "UTF-8");
        cs = nl_langinfo_l(CODESET, l);
        utf8 = cs && (streq(cs, "UTF-8") || streq(cs, "utf8"));
        freelocale(l);
        return utf8;
}

int journal_report_main(int argc, char **argv, FILE *out) {
        _cleanup_(jr_done) struct jr c = { .node_filter = -1, .until = UINT64_MAX };
        _cleanup_free_ size_t *vis = NULL;
        size_t n_vis = 0;
        const char *nc;
        int r;

        r = parse_argv(&c, argc, argv);
        if (r == -ENOMEM) {
                fprintf(stderr, "report: out of memory\n");
                return r;
        }
        if (r < 0)
                return 1;
        if (r == 0)
                return 0;

        c.c_locale = newlocale(LC_ALL_MASK, "C", (locale_t) 0);
        if (c.c_locale == (locale_t) 0) {
                fprintf(stderr, "report: cannot create the C locale: %m\n");
                return -errno;
        }
        c.utf8 = locale_is_utf8();
        nc = getenv("NO_COLOR");
        c.color = !c.no_color && !(nc && *nc) && isatty(fileno(out)) && !streq(getenv("TERM") ?: "", "dumb");

        r = read_journal(&c);
        if (r < 0)
                return r;
        r = sort_hosts(&c);
        if (r < 0) {
                fprintf(stderr, "report: out of memory\n");
                return r;
        }

        if (c.failures_mode)
                r = print_failures(out, &c);
        else {
                r = visible_batches(&c, &vis, &n_vis);
                if (r < 0) {
                        fprintf(stderr, "report: out of memory\n");
                        return r;
                }
                if (c.json) {
                        for (size_t i = 0; i < n_vis; i++)
                                json_batch(out, &c, &c.batches[vis[i]]);
                        /* Conversions no batch claimed still deserve a line. */
                        for (size_t i = 0; i < c.n_devices; i++) {
                                const struct devrec *d = &c.devices[i];

                                if (d->batch != NONE || c.node_filter >= 0 ||
                                    (c.device_filter && (!d->device || !streq(d->device, c.device_filter))))
                                        continue;
                                fputs("{\"type\":\"conversion\",\"conversion\":", out);
                                json_device(out, &c, d);
                                fputs("}\n", out);
                        }
                } else if (n_vis == 0 && c.n_devices == 0)
                        fprintf(stderr, "No memonlined records found.\n");
                else
                        r = print_table(out, &c, vis, n_vis);
        }
        if (r < 0) {
                fprintf(stderr, "report: out of memory\n");
                return r;
        }
        if (fflush(out) != 0 || ferror(out)) {
                fprintf(stderr, "report: cannot write output: %m\n");
                return -EIO;
        }
        return 0;
}
