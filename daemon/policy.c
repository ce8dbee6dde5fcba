/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The INI policy, read line by line by its own small reader: it knows the
 * line of every key, sees every section header (empty ones too), strips
 * '#' and ';' comments and leading blanks, and has no line length limit
 * (inih's is 200 bytes, too short for a banned_cpus list of a big
 * machine). Only the whole file is bounded: POLICY_FILE_MAX.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <strings.h>
#include <sys/stat.h>
#include "cpuset.h"
#include "escape.h"
#include "policy.h"
#include "policy-files.h"
#include "string-table.h"
#include "util.h"

/* No architecture has memory blocks smaller than this. */
#define POLICY_RANGE_ALIGN (UINT64_C(1) << 20)

static const char *const memmap_setting_table[] = {
        [MEMMAP_UNSET] = "unset",
        [MEMMAP_KEEP] = "keep",
        [MEMMAP_OFF] = "no",
        [MEMMAP_ON] = "yes",
};

DEFINE_STRING_TABLE_TO_STRING(memmap_setting, enum memmap_setting, "unset")

static void policy_free(struct policy *p) {
        free(p->path);
        for (size_t i = 0; i < p->n_files; i++)
                free(p->files[i]);
        free(p->files);
        cpuset_freep(&p->banned_cpus);
        free(p->nodes);
        free(p->ranges);
        for (size_t i = 0; i < p->n_devices; i++) {
                free(p->devices[i].name);
                free(p->devices[i].device);
                free(p->devices[i].namespace_name);
                free(p->devices[i].cxl_region);
                free(p->devices[i].cxl_memdev);
        }
        free(p->devices);
        for (size_t i = 0; i < p->n_exclusions; i++)
                free(p->exclusions[i].device);
        free(p->exclusions);
        free(p->textfile_dir);
        free(p);
}

struct policy *policy_ref(struct policy *p) {
        if (p)
                atomic_fetch_add(&p->n_ref, 1);
        return p;
}

struct policy *policy_unref(struct policy *p) {
        if (p && atomic_fetch_sub(&p->n_ref, 1) == 1)
                policy_free(p);
        return NULL;
}

void policy_unrefp(struct policy **p) {
        policy_unref(*p);
}

int policy_new_default(struct policy **ret) {
        _cleanup_policy_ struct policy *p = NULL;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        /* Keep in sync with conf/memonlined.conf; test-policy checks that. */
        *p = (struct policy) {
                .n_ref = 1,
                .settle_ms = 30,
                .max_wait_ms = 500,
                .max_concurrent_writes = 1,
                .write_chain = true,
                .workers = { .count = 1 },
                .retries = POLICY_DEFAULT_RETRIES,
                .retry_backoff_ms = POLICY_DEFAULT_RETRY_BACKOFF_MS,
                .retry_backoff_max_ms = POLICY_DEFAULT_RETRY_BACKOFF_MAX_MS,
                .node_link_wait_ms = 200,
                .event_source = EVENT_SOURCE_UDEV,
                .take_over_auto_online = true,
                .default_zone = ZONE_MOVABLE,
                .movable_ratio = 301,
                .ratio_per_node = true,
                .convert_devdax = false,
                .pmem_zone = ZONE_MOVABLE,
                .respect_daxctl = true,
                .memmap_on_memory = MEMMAP_KEEP,
        };
        p->banned_cpus = cpuset_new();
        if (!p->banned_cpus)
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

unsigned policy_workers_for_node(const struct policy *p, int node, unsigned usable_cores) {
        const struct worker_count *wc = &p->workers;
        uint64_t n;

        /* No usable core: the planner runs one unpinned worker. */
        if (usable_cores == 0)
                return 1;
        for (size_t i = 0; i < p->n_nodes; i++)
                if (p->nodes[i].node == node && p->nodes[i].has_workers) {
                        wc = &p->nodes[i].workers;
                        break;
                }
        if (wc->percent > 0)
                n = ((uint64_t) usable_cores * wc->percent + 99) / 100;
        else
                n = wc->count;
        if (n < 1)
                n = 1;
        if (n > usable_cores)
                n = usable_cores;
        return (unsigned) n;
}

/* ---- parsing ----------------------------------------------------------- */

enum section {
        SECTION_NONE,
        SECTION_DAEMON,
        SECTION_ZONES,
        SECTION_PMEM,
        SECTION_METRICS,
        SECTION_NODE,
        SECTION_RANGE,
        SECTION_DEVICE,
        SECTION_EXCLUDE,
};

/* Where a key was set: file by its place in the reading order, for "which came later". */
struct where {
        const char *file;
        unsigned file_index, line;
};

struct parser {
        /* The file being read. */
        const char *file;               /* as errors name it */
        unsigned file_index;            /* 0 for the main file, then the drop-ins in order */
        const char *data;
        size_t size, pos;
        unsigned line;

        struct policy *p;
        size_t nodes_allocated, ranges_allocated, devices_allocated, exclusions_allocated, files_allocated;
        enum section section;
        size_t rule;                    /* the current [node], [range] or [device] rule */

        /* Keys checked against each other once all is read. */
        struct where at_settle, at_max_wait, at_backoff, at_backoff_max;

        int error;                      /* first error, -errno */
        const char *error_file;
        unsigned error_line;
        char reason[sizeof(((struct policy_error *) NULL)->reason)];
};

static struct where where_now(const struct parser *ps) {
        return (struct where) { ps->file, ps->file_index, ps->line };
}

/* The later of two places, where a conflict between them is best shown. */
static struct where later(struct where a, struct where b) {
        if (a.file_index != b.file_index)
                return a.file_index > b.file_index ? a : b;
        return a.line > b.line ? a : b;
}

_printf_(4, 0)
static int vfail_at(struct parser *ps, const char *file, unsigned line, const char *fmt, va_list ap) {
        if (ps->error < 0)
                return ps->error;
        vsnprintf(ps->reason, sizeof(ps->reason), fmt, ap);
        ps->error = -EINVAL;
        ps->error_file = file;
        ps->error_line = line;
        return -EINVAL;
}

_printf_(4, 5)
static int fail_at(struct parser *ps, const char *file, unsigned line, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vfail_at(ps, file, line, fmt, ap);
        va_end(ap);
        return r;
}

/* An error at a line of the file being read. */
_printf_(3, 4)
static int fail(struct parser *ps, unsigned line, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vfail_at(ps, ps->file, line, fmt, ap);
        va_end(ap);
        return r;
}

static int fail_oom(struct parser *ps) {
        if (ps->error < 0)
                return ps->error;
        snprintf(ps->reason, sizeof(ps->reason), "out of memory");
        ps->error = -ENOMEM;
        ps->error_file = ps->file;
        ps->error_line = ps->line;
        return -ENOMEM;
}

/* Decimal only: a leading 0 is not octal, and "30ms" is an error. */
static int parse_uint_key(struct parser *ps, const char *key, const char *value,
                          unsigned min, unsigned max, unsigned *ret) {
        unsigned v;
        int r;

        r = parse_unsigned(value, &v);
        if (r == -ERANGE || (r >= 0 && (v < min || v > max)))
                return fail(ps, ps->line, "%s = %s is out of range (%u..%u)", key, value, min, max);
        if (r < 0)
                return fail(ps, ps->line, "%s: expected a whole number from %u to %u, got \"%s\"",
                            key, min, max, value);
        *ret = v;
        return 0;
}

static int parse_bool_key(struct parser *ps, const char *key, const char *value, bool *ret) {
        if (parse_bool(value, ret) < 0)
                return fail(ps, ps->line, "%s: expected yes or no, got \"%s\"", key, value);
        return 0;
}

/* yes or no (spelled as any boolean), or keep. */
static int parse_memmap_key(struct parser *ps, const char *key, const char *value, enum memmap_setting *ret) {
        bool b;

        if (strcasecmp(value, "keep") == 0) {
                *ret = MEMMAP_KEEP;
                return 0;
        }
        if (parse_bool(value, &b) < 0)
                return fail(ps, ps->line, "%s: expected yes, no or keep, got \"%s\"", key, value);
        *ret = b ? MEMMAP_ON : MEMMAP_OFF;
        return 0;
}

static int parse_zone_key(struct parser *ps, const char *key, const char *value, enum zone *ret) {
        if (zone_from_string(value, ret) < 0)
                return fail(ps, ps->line,
                            "%s: expected online, online_movable, online_kernel or skip, got \"%s\"",
                            key, value);
        return 0;
}

static int parse_node_key(struct parser *ps, const char *key, const char *value, int *ret) {
        int r;

        r = parse_node_id(value, ret);
        if (r == -ERANGE)
                return fail(ps, ps->line, "%s = %s is out of range (0..%d)", key, value, NODE_ID_MAX);
        if (r < 0)
                return fail(ps, ps->line, "%s: expected a NUMA node number, got \"%s\"", key, value);
        return 0;
}

/* "4" or "50%". */
static int parse_workers_key(struct parser *ps, const char *key, const char *value,
                             struct worker_count *ret) {
        size_t len = strlen(value);
        unsigned v;
        int r;

        if (len > 1 && value[len - 1] == '%') {
                _cleanup_free_ char *num = strndup(value, len - 1);

                if (!num)
                        return fail_oom(ps);
                r = parse_unsigned(num, &v);
                if (r == -ERANGE || (r >= 0 && (v < 1 || v > 100)))
                        return fail(ps, ps->line, "%s = %s is out of range (1%%..100%%)", key, value);
                if (r < 0)
                        return fail(ps, ps->line,
                                    "%s: expected a count from 1 to 256 or a percentage like 50%%, got \"%s\"",
                                    key, value);
                *ret = (struct worker_count) { .percent = v };
                return 0;
        }
        r = parse_unsigned(value, &v);
        if (r == -ERANGE || (r >= 0 && (v < 1 || v > 256)))
                return fail(ps, ps->line, "%s = %s is out of range (1..256, or 1%%..100%%)", key, value);
        if (r < 0)
                return fail(ps, ps->line,
                            "%s: expected a count from 1 to 256 or a percentage like 50%%, got \"%s\"",
                            key, value);
        *ret = (struct worker_count) { .count = v };
        return 0;
}

/* Decimal or 0x hex, optional binary K/M/G/T suffix. */
static int parse_size(const char *s, uint64_t *ret) {
        _cleanup_free_ char *num = NULL;
        size_t len = strlen(s);
        unsigned shift = 0;
        uint64_t v;
        int r;

        if (len == 0)
                return -EINVAL;
        switch (s[len - 1]) {
        case 'K': case 'k': shift = 10; break;
        case 'M': case 'm': shift = 20; break;
        case 'G': case 'g': shift = 30; break;
        case 'T': case 't': shift = 40; break;
        default: break;
        }
        num = strndup(s, shift ? len - 1 : len);
        if (!num)
                return -ENOMEM;
        /* parse_u64() takes the one 0x itself: "0x0x10" stays an error. */
        if (startswith(num, "0x") || startswith(num, "0X"))
                r = parse_u64(num, 16, &v);
        else
                r = parse_u64(num, 10, &v);
        if (r < 0)
                return r;
        if (shift && v > (UINT64_MAX >> shift))
                return -ERANGE;
        *ret = v << shift;
        return 0;
}

static int parse_size_key(struct parser *ps, const char *key, const char *value, uint64_t *ret) {
        int r;

        r = parse_size(value, ret);
        if (r == -ENOMEM)
                return fail_oom(ps);
        if (r == -ERANGE)
                return fail(ps, ps->line, "%s = %s is out of range", key, value);
        if (r < 0)
                return fail(ps, ps->line,
                            "%s: expected a size like 16G (decimal or 0x hex, optional K, M, G or T), got \"%s\"",
                            key, value);
        return 0;
}

/* "START-END" (END inclusive) or "START+SIZE"; stores [start, end). */
static int parse_range(struct parser *ps, const char *what, const char *spec,
                       uint64_t *ret_start, uint64_t *ret_end) {
        _cleanup_free_ char *copy = strdup(spec);
        uint64_t start, second, end;
        char *sep, *a, *b;
        bool plus;
        int r;

        if (!copy)
                return fail_oom(ps);
        sep = strpbrk(copy, "-+");
        if (!sep)
                return fail(ps, ps->line,
                            "%s \"%s\": expected START-END (END inclusive) or START+SIZE, like 4G+2G",
                            what, spec);
        plus = *sep == '+';
        *sep = '\0';
        a = strstrip(copy);
        b = strstrip(sep + 1);

        r = parse_size(a, &start);
        if (r == 0)
                r = parse_size(b, &second);
        if (r == -ENOMEM)
                return fail_oom(ps);
        if (r == -ERANGE)
                return fail(ps, ps->line, "%s \"%s\" is out of range", what, spec);
        if (r < 0)
                return fail(ps, ps->line,
                            "%s \"%s\": expected START-END (END inclusive) or START+SIZE, "
                            "each decimal or 0x hex with optional K, M, G or T",
                            what, spec);
        if (plus) {
                if (second == 0)
                        return fail(ps, ps->line, "%s \"%s\" is empty", what, spec);
                if (second > UINT64_MAX - start)
                        return fail(ps, ps->line, "%s \"%s\" is out of range", what, spec);
                end = start + second;
        } else {
                if (second < start)
                        return fail(ps, ps->line, "%s \"%s\" is inverted: end 0x%" PRIx64 " is below start 0x%" PRIx64,
                                    what, spec, second, start);
                if (second == UINT64_MAX)
                        return fail(ps, ps->line, "%s \"%s\" is out of range", what, spec);
                end = second + 1;
        }
        if (start % POLICY_RANGE_ALIGN != 0)
                return fail(ps, ps->line, "%s \"%s\": start 0x%" PRIx64 " is not 1 MiB aligned",
                            what, spec, start);
        /* The classic slip: "4G-6G" takes in the first byte of the block at 6G. */
        if (!plus && second != 0 && second % POLICY_RANGE_ALIGN == 0)
                return fail(ps, ps->line,
                            "%s \"%s\": END is the last byte (inclusive), did you mean 0x%" PRIx64
                            "? Or write START+SIZE",
                            what, spec, second - 1);
        if (end % POLICY_RANGE_ALIGN != 0)
                return fail(ps, ps->line, "%s \"%s\" does not end on a 1 MiB boundary (it ends before 0x%" PRIx64 ")",
                            what, spec, end);
        *ret_start = start;
        *ret_end = end;
        return 0;
}

/* "dax0.0" */
static bool dax_name_is_valid(const char *s) {
        const char *p;

        if (!startswith(s, "dax"))
                return false;
        p = s + 3;
        if (!isdigit((unsigned char) *p))
                return false;
        while (isdigit((unsigned char) *p))
                p++;
        if (*p++ != '.' || !isdigit((unsigned char) *p))
                return false;
        while (isdigit((unsigned char) *p))
                p++;
        return *p == '\0';
}

/* The name of a hotplug memory device: an ACPI memory device ("PNP0C80:0a") or a virtio device ("virtio3"). */
static bool memdev_name_is_valid(const char *s) {
        size_t n;

        if (startswith(s, "PNP0C80:")) {
                s += strlen("PNP0C80:");
                n = strspn(s, "0123456789abcdefABCDEF");
                return n >= 1 && n <= 8 && s[n] == '\0';
        }
        if (startswith(s, "virtio")) {
                s += strlen("virtio");
                n = strspn(s, "0123456789");
                return n >= 1 && n <= 9 && s[n] == '\0' && !(s[0] == '0' && n > 1);
        }
        return false;
}

static int parse_dax_key(struct parser *ps, const char *key, const char *value, char **ret) {
        char *s;

        /* [exclude] device also names the other hotplug devices: a DIMM, virtio-mem. */
        if (!dax_name_is_valid(value) && !(streq(key, "device") && memdev_name_is_valid(value)))
                return fail(ps, ps->line, "%s: expected a dax device name like dax0.0, got \"%s\"%s", key, value,
                            streq(key, "device") ? " (or a DIMM's PNP0C80:NN, or virtioN)" : "");
        s = strdup(value);
        if (!s)
                return fail_oom(ps);
        free(*ret);
        *ret = s;
        return 0;
}

/*
 * A CXL device name as the kernel and the cxl tool spell it, "region0" or
 * "mem1", or just its number: stored as the kernel's name.
 */
static int parse_cxl_name_key(struct parser *ps, const char *key, const char *value, const char *prefix,
                              char **ret) {
        const char *num = startswith(value, prefix) ? value + strlen(prefix) : value;
        unsigned v;
        char *s;
        int r;

        r = parse_unsigned(num, &v);
        if (r == -ERANGE || (r >= 0 && v > INT_MAX))
                return fail(ps, ps->line, "%s = %s is out of range", key, value);
        if (r < 0)
                return fail(ps, ps->line, "%s: expected a CXL %s name like %s0 (or its number), got \"%s\"", key,
                            streq(prefix, "mem") ? "memdev" : prefix, prefix, value);
        if (asprintf(&s, "%s%u", prefix, v) < 0)
                return fail_oom(ps);
        free(*ret);
        *ret = s;
        return 0;
}

/* ---- sections ---------------------------------------------------------- */

/* A rule section must say something, or it is almost surely a mistake. */
static int section_finish(struct parser *ps) {
        switch (ps->section) {
        case SECTION_NODE: {
                const struct node_rule *n = &ps->p->nodes[ps->rule];

                if (n->zone == ZONE_UNSET && !n->has_workers)
                        return fail(ps, n->line, "[node %d] sets neither zone nor workers", n->node);
                break;
        }
        case SECTION_RANGE: {
                const struct range_rule *rr = &ps->p->ranges[ps->rule];

                if (rr->zone == ZONE_UNSET)
                        return fail(ps, rr->line, "[range 0x%" PRIx64 "-0x%" PRIx64 "] has no zone key",
                                    rr->start, rr->end - 1);
                break;
        }
        case SECTION_DEVICE: {
                const struct device_rule *d = &ps->p->devices[ps->rule];

                if (d->zone == ZONE_UNSET && d->convert < 0 && d->memmap_on_memory == MEMMAP_UNSET &&
                    d->allow_badblocks < 0)
                        return fail(ps, d->line, "[device %s] sets none of zone, convert, memmap_on_memory and "
                                    "allow_badblocks", d->name);
                /* A dax device sits on an nd region or on a CXL region, never both. */
                if ((d->cxl_region || d->cxl_memdev) && (d->region >= 0 || d->namespace_name || d->pmem_only))
                        return fail(ps, d->line, "[device %s] matches both a CXL %s and an nd %s: no dax device "
                                    "is on both", d->name, d->cxl_region ? "region" : "memdev",
                                    d->region >= 0 ? "region (match_region)" :
                                    d->namespace_name ? "namespace (match_namespace)" : "pmem region (pmem_only)");
                break;
        }
        default:
                break;
        }
        return 0;
}

/*
 * A rule section seen before. From an earlier file it is reopened, and its
 * keys go on from there: true. In the same file it is a duplicate: false.
 */
static bool reopen_rule(struct parser *ps, size_t i, const char **file, unsigned *line) {
        if (*file == ps->file)
                return false;
        *file = ps->file;
        *line = ps->line;
        ps->rule = i;
        return true;
}

static int section_node(struct parser *ps, const char *arg) {
        struct policy *p = ps->p;
        int node, r;

        r = parse_node_id(arg, &node);
        if (r == -ERANGE)
                return fail(ps, ps->line, "[node %s]: node number is out of range (0..%d)", arg, NODE_ID_MAX);
        if (r < 0)
                return fail(ps, ps->line, "[node %s]: expected a NUMA node number, like [node 2]", arg);
        ps->section = SECTION_NODE;
        for (size_t i = 0; i < p->n_nodes; i++)
                if (p->nodes[i].node == node) {
                        if (reopen_rule(ps, i, &p->nodes[i].file, &p->nodes[i].line))
                                return 0;
                        return fail(ps, ps->line, "duplicate section [node %d], first at line %u",
                                    node, p->nodes[i].line);
                }
        if (GROW(p->nodes, ps->nodes_allocated, p->n_nodes + 1) < 0)
                return fail_oom(ps);
        ps->rule = p->n_nodes;
        p->nodes[p->n_nodes++] = (struct node_rule) {
                .node = node,
                .zone = ZONE_UNSET,
                .file = ps->file,
                .line = ps->line,
        };
        return 0;
}

static int section_range(struct parser *ps, const char *arg) {
        struct policy *p = ps->p;
        uint64_t start, end;
        int r;

        r = parse_range(ps, "range", arg, &start, &end);
        if (r < 0)
                return r;
        ps->section = SECTION_RANGE;
        for (size_t i = 0; i < p->n_ranges; i++) {
                struct range_rule *o = &p->ranges[i];

                if (start == o->start && end == o->end && reopen_rule(ps, i, &o->file, &o->line))
                        return 0;
                if (start < o->end && o->start < end) {
                        if (o->file == ps->file)
                                return fail(ps, ps->line,
                                            "[range %s] overlaps [range 0x%" PRIx64 "-0x%" PRIx64 "] at line %u",
                                            arg, o->start, o->end - 1, o->line);
                        return fail(ps, ps->line,
                                    "[range %s] overlaps [range 0x%" PRIx64 "-0x%" PRIx64 "] at %s:%u",
                                    arg, o->start, o->end - 1, o->file, o->line);
                }
        }
        if (GROW(p->ranges, ps->ranges_allocated, p->n_ranges + 1) < 0)
                return fail_oom(ps);
        ps->rule = p->n_ranges;
        p->ranges[p->n_ranges++] = (struct range_rule) {
                .start = start,
                .end = end,
                .zone = ZONE_UNSET,
                .file = ps->file,
                .line = ps->line,
        };
        return 0;
}

static int section_device(struct parser *ps, const char *arg) {
        struct policy *p = ps->p;
        char *name;

        ps->section = SECTION_DEVICE;
        for (size_t i = 0; i < p->n_devices; i++)
                if (streq(p->devices[i].name, arg)) {
                        if (reopen_rule(ps, i, &p->devices[i].file, &p->devices[i].line))
                                return 0;
                        return fail(ps, ps->line, "duplicate section [device %s], first at line %u",
                                    arg, p->devices[i].line);
                }
        if (GROW(p->devices, ps->devices_allocated, p->n_devices + 1) < 0)
                return fail_oom(ps);
        name = strdup(arg);
        if (!name)
                return fail_oom(ps);
        ps->rule = p->n_devices;
        p->devices[p->n_devices++] = (struct device_rule) {
                .name = name,
                .region = -1,
                .target_node = -1,
                .zone = ZONE_UNSET,
                .convert = -1,
                .allow_badblocks = -1,
                .file = ps->file,
                .line = ps->line,
        };
        return 0;
}

/* "[node 2]" -> "2" when the header is "node" plus blanks plus something. */
static const char *section_arg(const char *header, const char *kind) {
        size_t n = strlen(kind);

        if (strncmp(header, kind, n) != 0)
                return NULL;
        if (header[n] == '\0')
                return "";
        if (header[n] != ' ' && header[n] != '\t')
                return NULL;
        header += n;
        while (*header == ' ' || *header == '\t')
                header++;
        return header;
}

/* line is stripped and starts with '['. */
static int section_begin(struct parser *ps, char *line) {
        static const struct {
                const char *name;
                enum section section;
        } plain[] = {
                { "daemon", SECTION_DAEMON },
                { "zones", SECTION_ZONES },
                { "pmem", SECTION_PMEM },
                { "metrics", SECTION_METRICS },
                { "exclude", SECTION_EXCLUDE },
        };
        static const struct {
                const char *kind;
                int (*begin)(struct parser *ps, const char *arg);
                const char *example;
        } with_arg[] = {
                { "node", section_node, "[node 2]" },
                { "range", section_range, "[range 4G+2G]" },
                { "device", section_device, "[device pmem-fast]" },
        };
        char *close, *name;
        int r;

        close = strchr(line, ']');
        if (!close)
                return fail(ps, ps->line, "section header without ']'");
        if (close[1] != '\0')
                return fail(ps, ps->line, "unexpected text after section header: \"%s\"", close + 1);
        *close = '\0';
        name = strstrip(line + 1);

        r = section_finish(ps);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(plain); i++)
                if (streq(name, plain[i].name)) {
                        ps->section = plain[i].section;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(with_arg); i++) {
                const char *arg = section_arg(name, with_arg[i].kind);

                if (!arg)
                        continue;
                if (!*arg)
                        return fail(ps, ps->line, "section [%s] needs an argument, like %s",
                                    name, with_arg[i].example);
                return with_arg[i].begin(ps, arg);
        }
        return fail(ps, ps->line,
                    "unknown section [%s] (expected daemon, zones, pmem, metrics, exclude, node N, range SPEC or device NAME)",
                    name);
}

/* ---- keys -------------------------------------------------------------- */

static const struct uint_key {
        const char *name;
        size_t offset;
        unsigned min, max;
} daemon_uint_keys[] = {
        { "settle_ms", offsetof(struct policy, settle_ms), 1, 10000 },
        { "max_wait_ms", offsetof(struct policy, max_wait_ms), 1, 60000 },
        { "max_concurrent_writes", offsetof(struct policy, max_concurrent_writes), 1, 64 },
        { "retries", offsetof(struct policy, retries), 0, 100 },
        { "retry_backoff_ms", offsetof(struct policy, retry_backoff_ms), 1, 1000 },
        { "retry_backoff_max_ms", offsetof(struct policy, retry_backoff_max_ms), 1, 60000 },
        { "node_link_wait_ms", offsetof(struct policy, node_link_wait_ms), 0, 5000 },
};

static int unknown_key(struct parser *ps, const char *section, const char *key) {
        return fail(ps, ps->line, "unknown key \"%s\" in [%s]", key, section);
}

static int key_daemon(struct parser *ps, const char *key, const char *value) {
        struct policy *p = ps->p;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(daemon_uint_keys); i++) {
                const struct uint_key *k = &daemon_uint_keys[i];

                if (strcasecmp(key, k->name) != 0)
                        continue;
                r = parse_uint_key(ps, k->name, value, k->min, k->max,
                                   (unsigned *) ((char *) p + k->offset));
                if (r < 0)
                        return r;
                if (k->offset == offsetof(struct policy, settle_ms))
                        ps->at_settle = where_now(ps);
                else if (k->offset == offsetof(struct policy, max_wait_ms))
                        ps->at_max_wait = where_now(ps);
                else if (k->offset == offsetof(struct policy, retry_backoff_ms))
                        ps->at_backoff = where_now(ps);
                else if (k->offset == offsetof(struct policy, retry_backoff_max_ms))
                        ps->at_backoff_max = where_now(ps);
                return 0;
        }
        if (strcasecmp(key, "workers") == 0)
                return parse_workers_key(ps, "workers", value, &p->workers);
        if (strcasecmp(key, "banned_cpus") == 0) {
                struct bitmask *m = NULL;

                r = cpulist_parse(value, &m);
                if (r == -ENOMEM)
                        return fail_oom(ps);
                if (r == -ERANGE)
                        return fail(ps, ps->line, "banned_cpus: CPU number out of range (0..%d) in \"%s\"",
                                    CPUSET_MAX - 1, value);
                if (r < 0)
                        return fail(ps, ps->line, "banned_cpus: expected a CPU list like 0,8-9, got \"%s\"",
                                    value);
                cpuset_freep(&p->banned_cpus);
                p->banned_cpus = m;
                return 0;
        }
        if (strcasecmp(key, "event_source") == 0) {
                if (event_source_from_string(value, &p->event_source) < 0)
                        return fail(ps, ps->line, "event_source: expected udev or kernel, got \"%s\"", value);
                return 0;
        }
        if (strcasecmp(key, "take_over_auto_online") == 0)
                return parse_bool_key(ps, "take_over_auto_online", value, &p->take_over_auto_online);
        if (strcasecmp(key, "write_chain") == 0)
                return parse_bool_key(ps, "write_chain", value, &p->write_chain);
        return unknown_key(ps, "daemon", key);
}

static int key_zones(struct parser *ps, const char *key, const char *value) {
        struct policy *p = ps->p;

        if (strcasecmp(key, "default") == 0)
                return parse_zone_key(ps, "default", value, &p->default_zone);
        if (strcasecmp(key, "movable_ratio") == 0)
                return parse_uint_key(ps, "movable_ratio", value, 0, 10000, &p->movable_ratio);
        if (strcasecmp(key, "ratio_per_node") == 0)
                return parse_bool_key(ps, "ratio_per_node", value, &p->ratio_per_node);
        return unknown_key(ps, "zones", key);
}

static int key_pmem(struct parser *ps, const char *key, const char *value) {
        struct policy *p = ps->p;

        if (strcasecmp(key, "convert_devdax") == 0)
                return parse_bool_key(ps, "convert_devdax", value, &p->convert_devdax);
        if (strcasecmp(key, "zone") == 0)
                return parse_zone_key(ps, "zone", value, &p->pmem_zone);
        if (strcasecmp(key, "respect_daxctl") == 0)
                return parse_bool_key(ps, "respect_daxctl", value, &p->respect_daxctl);
        if (strcasecmp(key, "memmap_on_memory") == 0)
                return parse_memmap_key(ps, "memmap_on_memory", value, &p->memmap_on_memory);
        return unknown_key(ps, "pmem", key);
}

/* Empty: no file. Else an absolute path with room for the file names under it, no control character. */
static int parse_dir_key(struct parser *ps, const char *key, const char *value, char **ret) {
        char *s = NULL;

        for (const char *c = value; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        return fail(ps, ps->line, "%s: a control character in \"%s\"", key, value);
        if (*value && value[0] != '/')
                return fail(ps, ps->line, "%s: expected an absolute directory like /var/lib/prometheus/node-exporter, "
                            "got \"%s\"", key, value);
        if (strlen(value) > PATH_MAX / 2)
                return fail(ps, ps->line, "%s: longer than %d bytes", key, PATH_MAX / 2);
        if (*value && !(s = strdup(value)))
                return fail_oom(ps);
        free(*ret);
        *ret = s;
        return 0;
}

static int key_metrics(struct parser *ps, const char *key, const char *value) {
        if (strcasecmp(key, "textfile_dir") == 0)
                return parse_dir_key(ps, "textfile_dir", value, &ps->p->textfile_dir);
        return unknown_key(ps, "metrics", key);
}

static int key_node(struct parser *ps, const char *key, const char *value) {
        struct node_rule *n = &ps->p->nodes[ps->rule];
        int r;

        if (strcasecmp(key, "zone") == 0)
                return parse_zone_key(ps, "zone", value, &n->zone);
        if (strcasecmp(key, "workers") == 0) {
                r = parse_workers_key(ps, "workers", value, &n->workers);
                if (r < 0)
                        return r;
                n->has_workers = true;
                return 0;
        }
        return fail(ps, ps->line, "unknown key \"%s\" in [node %d] (expected zone or workers)", key, n->node);
}

static int key_range(struct parser *ps, const char *key, const char *value) {
        struct range_rule *rr = &ps->p->ranges[ps->rule];

        if (strcasecmp(key, "zone") == 0)
                return parse_zone_key(ps, "zone", value, &rr->zone);
        return fail(ps, ps->line, "unknown key \"%s\" in [range 0x%" PRIx64 "-0x%" PRIx64 "] (expected zone)",
                    key, rr->start, rr->end - 1);
}

/* A yes/no key of a rule, which is -1 while not given. */
static int parse_rule_bool_key(struct parser *ps, const char *key, const char *value, int *ret) {
        bool b;
        int r;

        r = parse_bool_key(ps, key, value, &b);
        if (r < 0)
                return r;
        *ret = b;
        return 0;
}

static int key_device(struct parser *ps, const char *key, const char *value) {
        struct device_rule *d = &ps->p->devices[ps->rule];
        int r;

        if (strcasecmp(key, "match_device") == 0)
                return parse_dax_key(ps, "match_device", value, &d->device);
        if (strcasecmp(key, "match_namespace") == 0) {
                char *s;

                if (!*value || strpbrk(value, " \t"))
                        return fail(ps, ps->line,
                                    "match_namespace: expected a namespace name or UUID, got \"%s\"", value);
                s = strdup(value);
                if (!s)
                        return fail_oom(ps);
                free(d->namespace_name);
                d->namespace_name = s;
                return 0;
        }
        if (strcasecmp(key, "match_region") == 0) {
                const char *num = startswith(value, "region") ? value + strlen("region") : value;
                unsigned v;

                r = parse_unsigned(num, &v);
                if (r == -ERANGE || (r >= 0 && v > INT_MAX))
                        return fail(ps, ps->line, "match_region = %s is out of range", value);
                if (r < 0)
                        return fail(ps, ps->line, "match_region: expected a region id like 0 or region0, got \"%s\"",
                                    value);
                d->region = (int) v;
                return 0;
        }
        if (strcasecmp(key, "match_cxl_region") == 0)
                return parse_cxl_name_key(ps, "match_cxl_region", value, "region", &d->cxl_region);
        if (strcasecmp(key, "match_cxl_memdev") == 0)
                return parse_cxl_name_key(ps, "match_cxl_memdev", value, "mem", &d->cxl_memdev);
        if (strcasecmp(key, "match_node") == 0)
                return parse_node_key(ps, "match_node", value, &d->target_node);
        if (strcasecmp(key, "min_size") == 0)
                return parse_size_key(ps, "min_size", value, &d->min_size);
        if (strcasecmp(key, "pmem_only") == 0)
                return parse_bool_key(ps, "pmem_only", value, &d->pmem_only);
        if (strcasecmp(key, "zone") == 0)
                return parse_zone_key(ps, "zone", value, &d->zone);
        if (strcasecmp(key, "memmap_on_memory") == 0)
                return parse_memmap_key(ps, "memmap_on_memory", value, &d->memmap_on_memory);
        if (strcasecmp(key, "convert") == 0)
                return parse_rule_bool_key(ps, "convert", value, &d->convert);
        if (strcasecmp(key, "allow_badblocks") == 0)
                return parse_rule_bool_key(ps, "allow_badblocks", value, &d->allow_badblocks);
        return fail(ps, ps->line, "unknown key \"%s\" in [device %s]", key, d->name);
}

static int key_exclude(struct parser *ps, const char *key, const char *value) {
        struct policy *p = ps->p;
        struct exclusion e = { .file = ps->file, .line = ps->line };
        int r;

        if (strcasecmp(key, "node") == 0) {
                e.kind = EXCLUDE_NODE;
                r = parse_node_key(ps, "node", value, &e.node);
        } else if (strcasecmp(key, "block") == 0) {
                const char *num = startswith(value, "memory") ? value + strlen("memory") : value;

                e.kind = EXCLUDE_BLOCK;
                r = parse_u64(num, 10, &e.start);
                if (r == -ERANGE || (r >= 0 && e.start == UINT64_MAX))
                        r = fail(ps, ps->line, "block = %s is out of range", value);
                else if (r < 0)
                        r = fail(ps, ps->line, "block: expected a memory block like memory42 or 42, got \"%s\"",
                                 value);
                else
                        e.end = e.start + 1;
        } else if (strcasecmp(key, "range") == 0) {
                e.kind = EXCLUDE_RANGE;
                r = parse_range(ps, "range", value, &e.start, &e.end);
        } else if (strcasecmp(key, "device") == 0) {
                e.kind = EXCLUDE_DEVICE;
                r = parse_dax_key(ps, "device", value, &e.device);
        } else
                return fail(ps, ps->line, "unknown key \"%s\" in [exclude] (expected node, block, range or device)",
                            key);
        if (r < 0)
                return r;

        if (GROW(p->exclusions, ps->exclusions_allocated, p->n_exclusions + 1) < 0) {
                free(e.device);
                return fail_oom(ps);
        }
        p->exclusions[p->n_exclusions++] = e;
        return 0;
}

static int key_value(struct parser *ps, const char *name, const char *value) {
        switch (ps->section) {
        case SECTION_NONE:
                return fail(ps, ps->line, "key \"%s\" outside of any section", name);
        case SECTION_DAEMON:
                return key_daemon(ps, name, value);
        case SECTION_ZONES:
                return key_zones(ps, name, value);
        case SECTION_PMEM:
                return key_pmem(ps, name, value);
        case SECTION_METRICS:
                return key_metrics(ps, name, value);
        case SECTION_NODE:
                return key_node(ps, name, value);
        case SECTION_RANGE:
                return key_range(ps, name, value);
        case SECTION_DEVICE:
                return key_device(ps, name, value);
        case SECTION_EXCLUDE:
                return key_exclude(ps, name, value);
        default:
                return fail(ps, ps->line, "internal error: bad section state");
        }
}

/* Cut a '#' or ';' comment that starts a line or follows a blank. */
static void strip_comment(char *s) {
        for (char *c = s; *c; c++)
                if ((*c == '#' || *c == ';') && (c == s || isspace((unsigned char) c[-1]))) {
                        *c = '\0';
                        return;
                }
}

/* One line, NUL-terminated, comments not yet cut. */
static int parse_line(struct parser *ps, char *s) {
        char *sep, *key, *value;

        if (ps->line == 1 && startswith(s, "\xEF\xBB\xBF"))
                s += 3;
        strip_comment(s);
        s = strstrip(s);
        if (*s == '\0')
                return 0;
        if (*s == '[')
                return section_begin(ps, s);
        /* "key = value" or "key: value": the first of the two splits. */
        sep = strpbrk(s, "=:");
        if (!sep || sep == s)
                return fail(ps, ps->line, "expected \"key = value\" or a [section], got \"%s\"", s);
        *sep = '\0';
        key = strstrip(s);
        value = strstrip(sep + 1);
        return key_value(ps, key, value);
}

/* The text of one file, ps->file and ps->data set. Stops at the first error. */
static int parse_text(struct parser *ps) {
        _cleanup_free_ char *copy = NULL;
        char *line, *next;

        copy = malloc(ps->size + 1);
        if (!copy)
                return fail_oom(ps);
        memcpy(copy, ps->data, ps->size);
        copy[ps->size] = '\0';
        ps->section = SECTION_NONE;
        ps->line = 0;
        for (line = copy; line && ps->error == 0; line = next) {
                next = memchr(line, '\n', (size_t) (copy + ps->size - line));
                if (next)
                        *next++ = '\0';
                ps->line++;
                (void) parse_line(ps, line);
                if (next == copy + ps->size)
                        break;          /* the final newline starts no line */
        }
        if (ps->error == 0)
                (void) section_finish(ps);
        return ps->error;
}

static int check_policy(struct parser *ps) {
        const struct policy *p = ps->p;
        struct where w;

        if (p->max_wait_ms < p->settle_ms) {
                w = later(ps->at_settle, ps->at_max_wait);
                return fail_at(ps, w.file, w.line, "max_wait_ms = %u is shorter than settle_ms = %u",
                               p->max_wait_ms, p->settle_ms);
        }
        if (p->retry_backoff_max_ms < p->retry_backoff_ms) {
                w = later(ps->at_backoff, ps->at_backoff_max);
                return fail_at(ps, w.file, w.line, "retry_backoff_max_ms = %u is shorter than retry_backoff_ms = %u",
                               p->retry_backoff_max_ms, p->retry_backoff_ms);
        }
        return 0;
}

/* Names and reasons carry text from files: escaped, so they are safe to print. */
static void set_error(struct policy_error *e, const char *file, unsigned line, const char *reason) {
        if (!e)
                return;
        escape_text(e->file, sizeof(e->file), strempty(file));
        e->line = line;
        escape_text(e->reason, sizeof(e->reason), reason);
}

/* A NUL byte makes it no text file; the line it is on. */
static int check_text(struct parser *ps) {
        const char *nul = memchr(ps->data, '\0', ps->size);
        unsigned line = 1;

        if (!nul)
                return 0;
        for (const char *c = ps->data; c < nul; c++)
                line += *c == '\n';
        return fail(ps, line, "contains a NUL byte: not a text file");
}

/* The next file to read: the policy keeps its name for the rules and errors. */
static int add_file(struct parser *ps, const char *file) {
        char *name;

        if (GROW(ps->p->files, ps->files_allocated, ps->p->n_files + 1) < 0)
                return fail_oom(ps);
        name = strdup(file);
        if (!name)
                return fail_oom(ps);
        ps->file_index = (unsigned) ps->p->n_files;
        ps->p->files[ps->p->n_files++] = name;
        ps->file = name;
        ps->line = 0;
        return 0;
}

/* Parse the text of the file add_file() named into ps->p. */
static int parse_data(struct parser *ps, const char *data, size_t size) {
        ps->data = data;
        ps->size = size;
        if (check_text(ps) < 0)
                return ps->error;
        return parse_text(ps);
}

static int parser_start(struct parser *ps, const char *path, struct policy_error *ret_error) {
        _cleanup_policy_ struct policy *p = NULL;
        int r;

        r = policy_new_default(&p);
        if (r >= 0) {
                p->path = strdup(path);
                if (!p->path)
                        r = -ENOMEM;
        }
        if (r < 0) {
                set_error(ret_error, path, 0, "out of memory");
                return r;
        }
        *ps = (struct parser) { .p = TAKE_PTR(p) };
        return 0;
}

/* Checks across keys, then the result or the first error. */
static int parser_finish(struct parser *ps, struct policy **ret, struct policy_error *ret_error) {
        _cleanup_policy_ struct policy *p = NULL;

        if (ps->error == 0)
                (void) check_policy(ps);
        p = TAKE_PTR(ps->p);
        if (ps->error < 0) {
                set_error(ret_error, ps->error_file, ps->error_line, ps->reason);
                return ps->error;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

int policy_load_buffer(const char *name, const char *data, size_t size, struct policy **ret,
                       struct policy_error *ret_error) {
        struct parser ps;
        int r;

        if (!name || (!data && size > 0) || !ret) {
                set_error(ret_error, name ?: "", 0, "no text given");
                return -EINVAL;
        }
        if (size > POLICY_FILE_MAX) {
                set_error(ret_error, name, 0, "is larger than 1048576 bytes (1 MiB)");
                return -EFBIG;
        }
        r = parser_start(&ps, name, ret_error);
        if (r < 0)
                return r;
        if (add_file(&ps, name) >= 0)
                (void) parse_data(&ps, data ?: "", size);
        return parser_finish(&ps, ret, ret_error);
}

/* Read and parse one more file, name in dir_fd, within what is left of POLICY_FILE_MAX. */
static int load_one(struct parser *ps, int dir_fd, const char *name, const char *path, size_t *total) {
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int r;

        if (add_file(ps, path) < 0)
                return ps->error;
        r = config_read(dir_fd, name, path, POLICY_FILE_MAX - *total, &data, &size, ps->reason, sizeof(ps->reason));
        if (r < 0) {
                ps->error = r;
                ps->error_file = ps->file;
                ps->error_line = 0;
                return r;
        }
        *total += size;
        return parse_data(ps, data, size);
}

/* path's directory and its last component (trailing slashes dropped). NULL on ENOMEM. */
static char *split_path(const char *path, const char **ret_name) {
        size_t n = strlen(path);
        const char *slash;
        char *dir;

        while (n > 1 && path[n - 1] == '/')
                n--;
        dir = strndup(path, n);
        if (!dir)
                return NULL;
        slash = strrchr(dir, '/');
        if (!slash) {
                *ret_name = path;
                free(dir);
                return strdup(".");
        }
        *ret_name = path + (slash - dir) + 1;
        if (**ret_name == '\0')
                *ret_name = ".";                /* path is "/" */
        dir[slash == dir ? 1 : (size_t) (slash - dir)] = '\0';
        return dir;
}

int policy_load(const char *path, struct policy **ret, struct policy_error *ret_error) {
        _cleanup_free_ char *dropin_dir = NULL, *dir = NULL;
        _cleanup_close_ int dir_fd = -1, dropin_fd = -1;
        char reason[sizeof(((struct policy_error *) NULL)->reason)];
        char **dropins = NULL;
        size_t n_dropins = 0, total = 0;
        const char *name = NULL;
        struct parser ps;
        struct stat st;
        bool have_main;
        int r;

        if (!path || !ret) {
                set_error(ret_error, path ?: "", 0, "no file given");
                return -EINVAL;
        }
        dir = split_path(path, &name);
        if (!dir || asprintf(&dropin_dir, "%s.d", path) < 0) {
                set_error(ret_error, path, 0, "out of memory");
                return -ENOMEM;
        }
        /* Both the file and its drop-in directory are read from here. */
        r = config_dir_open(dir, &dir_fd, reason, sizeof(reason));
        if (r == -ENOENT) {
                set_error(ret_error, path, 0, "cannot open: No such file or directory");
                return -ENOENT;
        }
        if (r < 0) {
                set_error(ret_error, dir, 0, reason);
                return r;
        }
        r = config_list_dropins(dropin_dir, &dropin_fd, &dropins, &n_dropins, reason, sizeof(reason));
        if (r < 0) {
                set_error(ret_error, dropin_dir, 0, reason);
                return r;
        }
        /* Without the main file the drop-ins apply over the defaults; with neither, there is nothing. */
        have_main = fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (n_dropins == 0 && !have_main && errno == ENOENT) {
                set_error(ret_error, path, 0, "cannot open: No such file or directory");
                return -ENOENT;
        }
        r = parser_start(&ps, path, ret_error);
        if (r < 0) {
                config_dropins_free(dropins, n_dropins);
                return r;
        }
        if (n_dropins == 0 || have_main)
                (void) load_one(&ps, dir_fd, name, path, &total);
        for (size_t i = 0; i < n_dropins && ps.error == 0; i++)
                (void) load_one(&ps, dropin_fd, strrchr(dropins[i], '/') + 1, dropins[i], &total);
        config_dropins_free(dropins, n_dropins);
        return parser_finish(&ps, ret, ret_error);
}

int policy_load_or_default(const char *path, bool explicit, struct policy **ret, bool *ret_defaulted,
                           struct policy_error *ret_error) {
        struct policy *p = NULL;
        bool defaulted = false;
        int r;

        r = policy_load(path, &p, ret_error);
        if (r == -ENOENT && !explicit) {
                r = policy_new_default(&p);
                defaulted = true;
        }
        if (r < 0)
                return r;
        *ret = p;
        if (ret_defaulted)
                *ret_defaulted = defaulted;
        return 0;
}

void policy_error_format(const struct policy_error *e, const char *path, int error, char *buf, size_t size) {
        if (e->line > 0)
                snprintf(buf, size, "%s:%u: %s", e->file, e->line, e->reason);
        else
                snprintf(buf, size, "%s: %s", e->file[0] ? e->file : path,
                         e->reason[0] ? e->reason : strerror(error < 0 ? -error : error));
}
