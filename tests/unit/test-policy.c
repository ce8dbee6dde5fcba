/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include "cpuset.h"
#include "fake-tree.h"
#include "policy.h"
#include "util.h"

#define GiB (UINT64_C(1) << 30)

/* Any pointer policy_load() must leave alone on failure. */
#define SENTINEL ((struct policy *) (uintptr_t) 0x5e47)

static int setup(void **state) {
        *state = fake_tree_new();
        return 0;
}

static int teardown(void **state) {
        fake_tree_free(*state);
        return 0;
}

/* Writes text (may hold NULs) as DIR/name; returns the path, caller frees. */
static char *write_conf(void **state, const char *name, const char *text, size_t len) {
        char *path;
        FILE *f;

        assert_true(asprintf(&path, "%s/%s", (const char *) *state, name) > 0);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        return path;
}

static struct policy *load_path_ok(const char *path) {
        struct policy_error err = {};
        struct policy *p = NULL;
        int r;

        r = policy_load(path, &p, &err);
        if (r < 0)
                fail_msg("unexpected error %d: %s:%u: %s", r, err.file, err.line, err.reason);
        return p;
}

static struct policy *load_ok(void **state, const char *text) {
        _cleanup_free_ char *path = write_conf(state, "ok.conf", text, strlen(text));
        struct policy *p = load_path_ok(path);

        assert_non_null(p);
        assert_string_equal(p->path, path);
        return p;
}

/* The file must fail with -EINVAL at line, naming the file, with reason containing what. */
static void expect_error(void **state, const char *text, unsigned line, const char *what) {
        _cleanup_free_ char *path = write_conf(state, "bad.conf", text, strlen(text));
        struct policy_error err = {};
        struct policy *p = SENTINEL;

        assert_int_equal(policy_load(path, &p, &err), -EINVAL);
        assert_ptr_equal(p, SENTINEL);
        assert_string_equal(err.file, path);
        if (err.line != line || !strstr(err.reason, what))
                fail_msg("want line %u with \"%s\", got %s:%u: %s", line, what, err.file, err.line, err.reason);
}

static void assert_defaults(const struct policy *p) {
        assert_int_equal(p->settle_ms, 30);
        assert_int_equal(p->max_wait_ms, 500);
        assert_int_equal(p->max_concurrent_writes, 1);
        assert_int_equal(p->workers.count, 1);
        assert_int_equal(p->workers.percent, 0);
        assert_non_null(p->banned_cpus);
        assert_int_equal(cpuset_count(p->banned_cpus), 0);
        assert_int_equal(p->retries, 5);
        assert_int_equal(p->retry_backoff_ms, 5);
        assert_int_equal(p->retry_backoff_max_ms, 200);
        assert_int_equal(p->node_link_wait_ms, 200);
        assert_int_equal(p->event_source, EVENT_SOURCE_UDEV);
        assert_true(p->take_over_auto_online);
        assert_true(p->write_chain);
        assert_int_equal(p->default_zone, ZONE_MOVABLE);
        assert_int_equal(p->movable_ratio, 301);
        assert_true(p->ratio_per_node);
        assert_false(p->convert_devdax);
        assert_int_equal(p->pmem_zone, ZONE_MOVABLE);
        assert_true(p->respect_daxctl);
        assert_int_equal(p->memmap_on_memory, MEMMAP_KEEP);
        assert_null(p->textfile_dir);
        assert_int_equal(p->n_nodes, 0);
        assert_int_equal(p->n_ranges, 0);
        assert_int_equal(p->n_devices, 0);
        assert_int_equal(p->n_exclusions, 0);
}

static void test_defaults(void **state) {
        _cleanup_policy_ struct policy *p = NULL;

        (void) state;
        assert_int_equal(policy_new_default(&p), 0);
        assert_null(p->path);
        assert_defaults(p);
}

/* conf/memonlined.conf in the sources; NULL outside the harness, which alone knows where they are. */
static char *shipped_path(void) {
        const char *top = getenv("top_srcdir");
        char *path = NULL;

        if (!top)
                return NULL;
        assert_true(asprintf(&path, "%s/conf/memonlined.conf", top) > 0);
        return path;
}

/* The shipped file's text, or NULL as shipped_path(). */
static char *shipped_text(void) {
        _cleanup_free_ char *path = shipped_path();
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        if (!path)
                return NULL;
        f = fopen(path, "re");
        assert_non_null(f);
        assert_int_equal(getdelim(&text, &len, '\0', f) > 0, 1);
        fclose(f);
        return text;
}

static void test_shipped_conf(void **state) {
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ char *text = shipped_text(), *path = NULL;
        struct policy_error err = {};
        int r;

        if (!text)
                skip();
        /* a copy: the checkout may be another user's, or group-writable, which policy_load() refuses */
        path = write_conf(state, "memonlined.conf", text, strlen(text));
        r = policy_load(path, &p, &err);
        if (r < 0)
                fail_msg("%s:%u: %s", err.file, err.line, err.reason);
        /* test_defaults checks the built-in against the same values. */
        assert_defaults(p);
}

/*
 * Its header promises every key commented out, at its default: a live line
 * would be a conffile change on upgrade. Only [section] headers are live.
 */
static void test_shipped_no_live_keys(void **state) {
        _cleanup_free_ char *text = shipped_text();
        unsigned lineno = 0, headers = 0;

        (void) state;
        if (!text) {
                skip();
                return;
        }
        for (char *line = text, *next; *line; line = next) {
                const char *s = line + strspn(line, " \t");

                next = line + strcspn(line, "\n");
                if (*next)
                        *next++ = '\0';
                lineno++;
                if (!*s || *s == '#' || *s == ';')
                        continue;
                if (*s != '[' || !strchr(s, ']'))
                        fail_msg("conf/memonlined.conf:%u: a live line that is not a [section] header: %s",
                                 lineno, s);
                headers++;
        }
        assert_true(headers > 0);
}

/* The shipped file with its commented keys and sections enabled. */
static char *shipped_uncommented(void) {
        char *text = shipped_text();

        if (!text)
                return NULL;
        /* "#[node 2]" -> " [node 2]", "#zone = ..." -> " zone = ...", prose stays a comment. */
        for (char *s = text; (s = strstr(s, "\n#")); s++)
                if (s[2] == '[' || (s[2] >= 'a' && s[2] <= 'z'))
                        s[1] = ' ';
        return text;
}

/* The commented keys show the built-in defaults: enabled, they change nothing. */
static void test_shipped_defaults(void **state) {
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ char *text = shipped_uncommented();
        char *rules;

        if (!text)
                skip();
        rules = strstr(text, "\n# ---- Rules");
        assert_non_null(rules);
        rules[1] = '\0';
        assert_non_null(strstr(text, "\n settle_ms = "));
        p = load_ok(state, text);
        assert_defaults(p);
}

/* The shipped examples, uncommented, must be valid too. */
static void test_shipped_examples(void **state) {
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ char *text = shipped_uncommented();

        if (!text)
                skip();
        p = load_ok(state, text);
        assert_int_equal(p->n_nodes, 1);
        assert_int_equal(p->n_ranges, 2);
        assert_int_equal(p->n_devices, 2);
        assert_string_equal(p->devices[1].cxl_region, "region0");
        assert_string_equal(p->devices[1].cxl_memdev, "mem0");
        assert_int_equal(p->devices[0].memmap_on_memory, MEMMAP_ON);
        assert_int_equal(p->devices[1].memmap_on_memory, MEMMAP_UNSET);
        assert_int_equal(p->devices[0].allow_badblocks, 0);
        assert_int_equal(p->devices[1].allow_badblocks, -1);
        assert_int_equal(p->n_exclusions, 4);
}

/* allow_badblocks: a [device] key, yes or no, unset (-1) unless given; a rule may set only it. */
static void test_allow_badblocks_key(void **state) {
        _cleanup_policy_ struct policy *p = NULL;

        p = load_ok(state, "[device a]\nmatch_device = dax0.0\nallow_badblocks = yes\n"
                           "[device b]\nmatch_region = 1\nallow_badblocks = off\n"
                           "[device c]\nzone = skip\n");
        assert_int_equal(p->n_devices, 3);
        assert_int_equal(p->devices[0].allow_badblocks, 1);
        assert_int_equal(p->devices[1].allow_badblocks, 0);
        assert_int_equal(p->devices[2].allow_badblocks, -1);

        expect_error(state, "[device x]\nmatch_device = dax0.0\nallow_badblocks = maybe\n", 3,
                     "allow_badblocks: expected yes or no, got \"maybe\"");
        expect_error(state, "[pmem]\nallow_badblocks = yes\n", 2, "unknown key \"allow_badblocks\" in [pmem]");
        expect_error(state, "[device x]\nmatch_device = dax0.0\nallow_badblock = yes\n", 3,
                     "unknown key \"allow_badblock\" in [device x]");
}

/* memmap_on_memory: yes, no (any boolean spelling) or keep, in [pmem] and [device]; a rule may set only it. */
static void test_memmap_keys(void **state) {
        _cleanup_policy_ struct policy *p = NULL;

        p = load_ok(state, "[pmem]\nmemmap_on_memory = No\n"
                           "[device a]\nmatch_device = dax0.0\nmemmap_on_memory = on\n"
                           "[device b]\nmatch_device = dax1.0\nmemmap_on_memory = KEEP\n"
                           "[device c]\nmatch_device = dax2.0\nzone = skip\n");
        assert_int_equal(p->memmap_on_memory, MEMMAP_OFF);
        assert_int_equal(p->n_devices, 3);
        assert_int_equal(p->devices[0].memmap_on_memory, MEMMAP_ON);
        assert_int_equal(p->devices[1].memmap_on_memory, MEMMAP_KEEP);
        assert_int_equal(p->devices[2].memmap_on_memory, MEMMAP_UNSET);
        assert_string_equal(memmap_setting_to_string(MEMMAP_ON), "yes");
        assert_string_equal(memmap_setting_to_string(MEMMAP_OFF), "no");
        assert_string_equal(memmap_setting_to_string(MEMMAP_KEEP), "keep");
        assert_string_equal(memmap_setting_to_string((enum memmap_setting) 99), "unset");

        expect_error(state, "[pmem]\nmemmap_on_memory = force\n", 2,
                     "memmap_on_memory: expected yes, no or keep, got \"force\"");
        expect_error(state, "[device x]\nmatch_device = dax0.0\nmemmap_on_memory = 2\n", 3,
                     "memmap_on_memory: expected yes, no or keep, got \"2\"");
        expect_error(state, "[device x]\nmatch_device = dax0.0\nmemmap_on_memory =\n", 3, "got \"\"");
}

static void test_full_file(void **state) {
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ char *cpus = NULL;

        p = load_ok(state,
                    "# every section\n"
                    "[daemon]\n"
                    "settle_ms = 50\n"
                    "max_wait_ms = 1000\n"
                    "max_concurrent_writes = 2\n"
                    "workers = 50%\n"
                    "banned_cpus = 0,8-9\n"
                    "retries = 0\n"
                    "retry_backoff_ms = 10\n"
                    "retry_backoff_max_ms = 1000\n"
                    "node_link_wait_ms = 0\n"
                    "event_source = kernel\n"
                    "[zones]\n"
                    "default = online\n"
                    "movable_ratio = 0\n"
                    "ratio_per_node = no\n"
                    "[pmem]\n"
                    "convert_devdax = yes\n"
                    "zone = online_kernel\n"
                    "respect_daxctl = off\n"
                    "[node 2]\n"                                        /* line 21 */
                    "zone = online_kernel\n"
                    "workers = 2\n"
                    "[node 0]\n"
                    "zone = skip\n"
                    "[range 0x100000000-0x17fffffff]\n"                 /* line 26 */
                    "zone = skip\n"
                    "[range 8G+2G]\n"
                    "zone = online_movable\n"
                    "[device pmem-fast]\n"                              /* line 30 */
                    "match_device = dax0.0\n"
                    "match_namespace = namespace0.0\n"
                    "match_region = region3\n"
                    "match_node = 2\n"
                    "min_size = 16G\n"
                    "pmem_only = yes\n"
                    "zone = online_movable\n"
                    "convert = yes\n"
                    "[device rest]\n"
                    "convert = no\n"
                    "[exclude]\n"
                    "node = 3\n"
                    "block = memory42\n"
                    "range = 0x200000000+1G\n"
                    "device = dax1.0\n");

        assert_int_equal(p->settle_ms, 50);
        assert_int_equal(p->max_wait_ms, 1000);
        assert_int_equal(p->max_concurrent_writes, 2);
        assert_int_equal(p->workers.percent, 50);
        assert_int_equal(p->workers.count, 0);
        assert_int_equal(cpulist_format(p->banned_cpus, &cpus), 0);
        assert_string_equal(cpus, "0,8-9");
        assert_int_equal(p->retries, 0);
        assert_int_equal(p->retry_backoff_ms, 10);
        assert_int_equal(p->retry_backoff_max_ms, 1000);
        assert_int_equal(p->node_link_wait_ms, 0);
        assert_int_equal(p->event_source, EVENT_SOURCE_KERNEL);
        assert_int_equal(p->default_zone, ZONE_ONLINE);
        assert_int_equal(p->movable_ratio, 0);
        assert_false(p->ratio_per_node);
        assert_true(p->convert_devdax);
        assert_int_equal(p->pmem_zone, ZONE_KERNEL);
        assert_false(p->respect_daxctl);

        assert_int_equal(p->n_nodes, 2);
        assert_int_equal(p->nodes[0].node, 2);
        assert_int_equal(p->nodes[0].zone, ZONE_KERNEL);
        assert_true(p->nodes[0].has_workers);
        assert_int_equal(p->nodes[0].workers.count, 2);
        assert_int_equal(p->nodes[0].line, 21);
        assert_int_equal(p->nodes[1].node, 0);
        assert_int_equal(p->nodes[1].zone, ZONE_SKIP);
        assert_false(p->nodes[1].has_workers);

        assert_int_equal(p->n_ranges, 2);
        assert_int_equal(p->ranges[0].start, 0x100000000);
        assert_int_equal(p->ranges[0].end, 0x180000000);
        assert_int_equal(p->ranges[0].zone, ZONE_SKIP);
        assert_int_equal(p->ranges[0].line, 26);
        assert_int_equal(p->ranges[1].start, 8 * GiB);
        assert_int_equal(p->ranges[1].end, 10 * GiB);
        assert_int_equal(p->ranges[1].zone, ZONE_MOVABLE);

        assert_int_equal(p->n_devices, 2);
        assert_string_equal(p->devices[0].name, "pmem-fast");
        assert_string_equal(p->devices[0].device, "dax0.0");
        assert_string_equal(p->devices[0].namespace_name, "namespace0.0");
        assert_int_equal(p->devices[0].region, 3);
        assert_int_equal(p->devices[0].target_node, 2);
        assert_int_equal(p->devices[0].min_size, 16 * GiB);
        assert_true(p->devices[0].pmem_only);
        assert_int_equal(p->devices[0].zone, ZONE_MOVABLE);
        assert_int_equal(p->devices[0].convert, 1);
        assert_int_equal(p->devices[0].line, 30);
        assert_string_equal(p->devices[1].name, "rest");
        assert_null(p->devices[1].device);
        assert_null(p->devices[1].namespace_name);
        assert_int_equal(p->devices[1].region, -1);
        assert_int_equal(p->devices[1].target_node, -1);
        assert_int_equal(p->devices[1].min_size, 0);
        assert_false(p->devices[1].pmem_only);
        assert_int_equal(p->devices[1].zone, ZONE_UNSET);
        assert_int_equal(p->devices[1].convert, 0);

        assert_int_equal(p->n_exclusions, 4);
        assert_int_equal(p->exclusions[0].kind, EXCLUDE_NODE);
        assert_int_equal(p->exclusions[0].node, 3);
        assert_int_equal(p->exclusions[0].line, 42);
        assert_int_equal(p->exclusions[1].kind, EXCLUDE_BLOCK);
        assert_int_equal(p->exclusions[1].start, 42);
        assert_int_equal(p->exclusions[2].kind, EXCLUDE_RANGE);
        assert_int_equal(p->exclusions[2].start, 8 * GiB);
        assert_int_equal(p->exclusions[2].end, 9 * GiB);
        assert_int_equal(p->exclusions[3].kind, EXCLUDE_DEVICE);
        assert_string_equal(p->exclusions[3].device, "dax1.0");
}

/* Comments, blanks, indentation, CRLF, a BOM, later-wins and case-insensitive keys. */
static void test_syntax(void **state) {
        _cleanup_policy_ struct policy *p = NULL;

        p = load_ok(state,
                    "\xEF\xBB\xBF; leading comment\r\n"
                    "  [daemon]   # trailing comment\r\n"
                    "\n"
                    "    settle_ms = 10    # indented, with a comment\r\n"
                    "SETTLE_MS = 20 ; semicolon comment\n"
                    "Max_Wait_Ms: 40\n"
                    "banned_cpus =\n"
                    "[zones]\n"
                    "[daemon]\n"
                    "retries = 7");             /* no final newline */
        assert_int_equal(p->settle_ms, 20);
        assert_int_equal(p->max_wait_ms, 40);
        assert_int_equal(p->retries, 7);
        assert_int_equal(cpuset_count(p->banned_cpus), 0);
}

static void test_empty_file(void **state) {
        _cleanup_policy_ struct policy *p = NULL;

        p = load_ok(state, "");
        assert_defaults(p);
}

static void test_structure_errors(void **state) {
        expect_error(state, "[daemon]\nsettle_ms = 10\n\n[deamon]\n", 4, "unknown section [deamon]");
        expect_error(state, "[Daemon]\n", 1, "unknown section [Daemon]");
        expect_error(state, "[node]\nzone = skip\n", 1, "needs an argument");
        expect_error(state, "[node2]\nzone = skip\n", 1, "unknown section [node2]");
        expect_error(state, "# c\nsettle_ms = 5\n", 2, "outside of any section");
        expect_error(state, "[daemon\n", 1, "without ']'");
        expect_error(state, "[daemon] x\n", 1, "after section header");
        expect_error(state, "[daemon]\nsettle_ms 30\n", 2, "key = value");
}

static void test_unknown_key(void **state) {
        expect_error(state, "[daemon]\nsettle_ms = 30\nsettle = 30\n", 3, "unknown key \"settle\" in [daemon]");
        expect_error(state, "[zones]\nzone = skip\n", 2, "unknown key \"zone\" in [zones]");
        expect_error(state, "[pmem]\nconvert = yes\n", 2, "unknown key \"convert\" in [pmem]");
        expect_error(state, "[node 1]\nzone = skip\nratio = 5\n", 3, "unknown key \"ratio\" in [node 1]");
        expect_error(state, "[range 4G+1G]\nworkers = 1\n", 2, "unknown key \"workers\"");
        expect_error(state, "[device x]\nmatch_dev = dax0.0\n", 2, "unknown key \"match_dev\" in [device x]");
        expect_error(state, "[exclude]\nnodes = 1\n", 2, "unknown key \"nodes\" in [exclude]");
}

static void test_bad_numbers(void **state) {
        expect_error(state, "[daemon]\nsettle_ms = -5\n", 2, "expected a whole number from 1 to 10000, got \"-5\"");
        expect_error(state, "[daemon]\nsettle_ms = 99999999999999999999\n", 2, "out of range (1..10000)");
        expect_error(state, "[daemon]\nsettle_ms = 4294967296\n", 2, "out of range");
        expect_error(state, "[daemon]\nsettle_ms = 30ms\n", 2, "got \"30ms\"");
        expect_error(state, "[daemon]\nsettle_ms = 0\n", 2, "settle_ms = 0 is out of range");
        expect_error(state, "[daemon]\nsettle_ms = 10001\n", 2, "out of range");
        expect_error(state, "[daemon]\nsettle_ms =\n", 2, "expected a whole number");
        expect_error(state, "[daemon]\nmax_wait_ms = 60001\n", 2, "out of range");
        expect_error(state, "[daemon]\nmax_concurrent_writes = 65\n", 2, "out of range (1..64)");
        expect_error(state, "[daemon]\nretries = 101\n", 2, "out of range (0..100)");
        expect_error(state, "[daemon]\nretry_backoff_ms = 0x10\n", 2, "got \"0x10\"");
        expect_error(state, "[daemon]\nnode_link_wait_ms = 5001\n", 2, "out of range (0..5000)");
        expect_error(state, "[zones]\nmovable_ratio = 10001\n", 2, "out of range (0..10000)");
        expect_error(state, "[device d]\nmin_size = 16X\n", 2, "expected a size");
        expect_error(state, "[device d]\nmin_size = -1G\n", 2, "expected a size");
        expect_error(state, "[device d]\nmin_size = 99999999999T\n", 2, "out of range");
        expect_error(state, "[device d]\nmin_size = 0x0x10\n", 2, "expected a size");
        expect_error(state, "[device d]\nmin_size = 0x\n", 2, "expected a size");
        expect_error(state, "[range 0x0x100000+1M]\nzone = skip\n", 1, "expected START-END");
        expect_error(state, "[device d]\nmatch_region = regionX\n", 2, "expected a region id");
        expect_error(state, "[device d]\nmatch_node = 1024\n", 2, "out of range (0..1023)");
        expect_error(state, "[node 1024]\nzone = skip\n", 1, "out of range");
        expect_error(state, "[node -1]\nzone = skip\n", 1, "expected a NUMA node number");
        expect_error(state, "[exclude]\nblock = memoryX\n", 2, "expected a memory block");
}

/* [device] rules for CXL regions and memdevs: the kernel's names or their numbers. */
static void test_device_cxl_keys(void **state) {
        _cleanup_policy_ struct policy *p = load_ok(state, "[device a]\nmatch_cxl_region = region0\nzone = online_kernel\n"
                                                           "[device b]\nmatch_cxl_region = 12\n"
                                                           "match_cxl_memdev = 3\nconvert = yes\n"
                                                           "[device c]\nmatch_cxl_memdev = mem1\nzone = skip\n");

        assert_int_equal(p->n_devices, 3);
        assert_string_equal(p->devices[0].cxl_region, "region0");
        assert_null(p->devices[0].cxl_memdev);
        assert_string_equal(p->devices[1].cxl_region, "region12");
        assert_string_equal(p->devices[1].cxl_memdev, "mem3");
        assert_null(p->devices[2].cxl_region);
        assert_string_equal(p->devices[2].cxl_memdev, "mem1");

        expect_error(state, "[device d]\nzone = skip\nmatch_cxl_region = region\n", 3,
                     "match_cxl_region: expected a CXL region name like region0 (or its number), got \"region\"");
        expect_error(state, "[device d]\nmatch_cxl_region = dax0.0\n", 2, "expected a CXL region name");
        expect_error(state, "[device d]\nmatch_cxl_region = region-1\n", 2, "expected a CXL region name");
        expect_error(state, "[device d]\nmatch_cxl_region = region2147483648\n", 2,
                     "match_cxl_region = region2147483648 is out of range");
        expect_error(state, "[device d]\nmatch_cxl_memdev = mem0,mem1\n", 2,
                     "match_cxl_memdev: expected a CXL memdev name like mem0 (or its number), got \"mem0,mem1\"");
        expect_error(state, "[device d]\nmatch_cxl_memdev = 99999999999999999999\n", 2, "out of range");
        /* A dax device is on an nd region or a CXL region: a rule asking both matches nothing. */
        expect_error(state, "[zones]\n[device d]\nmatch_cxl_region = 0\nmatch_region = 0\nzone = skip\n", 2,
                     "[device d] matches both a CXL region and an nd region (match_region)");
        expect_error(state, "[device d]\nmatch_cxl_memdev = 0\nmatch_namespace = namespace0.0\nzone = skip\n", 1,
                     "matches both a CXL memdev and an nd namespace (match_namespace)");
        expect_error(state, "[device d]\npmem_only = yes\nmatch_cxl_region = 0\nzone = skip\n", 1,
                     "and an nd pmem region (pmem_only)");
}

static void test_take_over_auto_online(void **state) {
        _cleanup_policy_ struct policy *p = load_ok(state, "[daemon]\ntake_over_auto_online = no\n");

        assert_false(p->take_over_auto_online);
}

static void test_write_chain(void **state) {
        _cleanup_policy_ struct policy *p = load_ok(state, "[daemon]\nwrite_chain = no\n");

        assert_false(p->write_chain);
        expect_error(state, "[daemon]\nmax_wait_ms = 600\nwrite_chain = sometimes\n", 3,
                     "write_chain: expected yes or no");
}

/* [metrics] textfile_dir: an absolute directory; empty (a drop-in's way back to the default) is none. */
static void test_metrics_keys(void **state) {
        const char *dir = *state;
        _cleanup_policy_ struct policy *p = NULL, *q = NULL;
        _cleanup_free_ char *main_conf = NULL, *long_dir = NULL, *long_conf = NULL;

        p = load_ok(state, "[metrics]\nTextfile_Dir = /var/lib/prometheus/node-exporter\n");
        assert_string_equal(p->textfile_dir, "/var/lib/prometheus/node-exporter");
        main_conf = write_conf(state, "m.conf", "[metrics]\ntextfile_dir = /srv/prom\n", 35);
        fake_write(dir, "m.conf.d/10-off.conf", "[metrics]\ntextfile_dir =\n");
        q = load_path_ok(main_conf);
        assert_null(q->textfile_dir);

        expect_error(state, "[metrics]\ntextfile_dir = prom\n", 2,
                     "textfile_dir: expected an absolute directory like /var/lib/prometheus/node-exporter, "
                     "got \"prom\"");
        expect_error(state, "[metrics]\ntextfile_dir = /srv/\033[2Jprom\n", 2,
                     "textfile_dir: a control character in \"/srv/\\x1b[2Jprom\"");
        expect_error(state, "[metrics]\ndirectory = /srv\n", 2, "unknown key \"directory\" in [metrics]");
        long_dir = malloc(PATH_MAX);
        assert_non_null(long_dir);
        memset(long_dir, 'a', PATH_MAX - 1);
        long_dir[0] = '/';
        long_dir[PATH_MAX - 1] = '\0';
        assert_true(asprintf(&long_conf, "[metrics]\ntextfile_dir = %s\n", long_dir) > 0);
        expect_error(state, long_conf, 2, "textfile_dir: longer than 2048 bytes");
}

static void test_bad_values(void **state) {
        expect_error(state, "[zones]\ndefault = movable\n", 2,
                     "expected online, online_movable, online_kernel or skip, got \"movable\"");
        expect_error(state, "[zones]\ndefault = unset\n", 2, "got \"unset\"");
        expect_error(state, "[zones]\nratio_per_node = maybe\n", 2, "expected yes or no");
        expect_error(state, "[daemon]\nevent_source = netlink\n", 2, "expected udev or kernel");
        expect_error(state, "[daemon]\ntake_over_auto_online = auto\n", 2,
                     "take_over_auto_online: expected yes or no");
        expect_error(state, "[daemon]\nbanned_cpus = 0,a\n", 2, "expected a CPU list");
        expect_error(state, "[daemon]\nbanned_cpus = 5-2\n", 2, "expected a CPU list");
        expect_error(state, "[daemon]\nbanned_cpus = 9000\n", 2, "out of range");
        expect_error(state, "[device d]\nmatch_device = pmem0\n", 2, "expected a dax device name");
        expect_error(state, "[exclude]\ndevice = dax0\n", 2, "expected a dax device name");
        expect_error(state, "[device d]\nmatch_namespace =\n", 2, "expected a namespace");
}

static void test_workers_values(void **state) {
        _cleanup_policy_ struct policy *p = NULL;

        expect_error(state, "[daemon]\nworkers = 0\n", 2, "out of range");
        expect_error(state, "[daemon]\nworkers = 257\n", 2, "out of range");
        expect_error(state, "[daemon]\nworkers = 0%\n", 2, "out of range (1%..100%)");
        expect_error(state, "[daemon]\nworkers = 101%\n", 2, "out of range");
        expect_error(state, "[daemon]\nworkers = x%\n", 2, "percentage like 50%");
        expect_error(state, "[daemon]\nworkers = %\n", 2, "percentage like 50%");
        expect_error(state, "[node 0]\nworkers = -1\n", 2, "percentage like 50%");

        p = load_ok(state, "[daemon]\nworkers = 256\n[node 1]\nworkers = 100%\n");
        assert_int_equal(p->workers.count, 256);
        assert_int_equal(p->nodes[0].workers.percent, 100);
        assert_int_equal(p->nodes[0].zone, ZONE_UNSET);
}

static void test_cross_checks(void **state) {
        /* Reported at the later of the two lines. */
        expect_error(state, "[daemon]\nmax_wait_ms = 20\nsettle_ms = 40\n", 3,
                     "max_wait_ms = 20 is shorter than settle_ms = 40");
        expect_error(state, "[daemon]\nsettle_ms = 40\n\nmax_wait_ms = 20\n", 4, "shorter than settle_ms");
        expect_error(state, "[daemon]\nretry_backoff_max_ms = 2\n", 2,
                     "retry_backoff_max_ms = 2 is shorter than retry_backoff_ms = 5");
        /* A later key may repair an earlier one: checks run on the final values. */
        {
                _cleanup_policy_ struct policy *p =
                        load_ok(state, "[daemon]\nmax_wait_ms = 20\nsettle_ms = 10\n");
                assert_int_equal(p->max_wait_ms, 20);
        }
}

static void test_ranges(void **state) {
        _cleanup_policy_ struct policy *p = NULL;

        p = load_ok(state,
                    "[range 4G+2G]\nzone = skip\n"
                    "[range 0x180000000 - 0x1ffffffff]\nzone = online\n"
                    "[range 1024m+512M]\nzone = online_kernel\n"
                    "[range 0+1M]\nzone = skip\n"
                    "[range 17179869184-18253611007]\nzone = skip\n");
        assert_int_equal(p->n_ranges, 5);
        assert_int_equal(p->ranges[0].start, 4 * GiB);
        assert_int_equal(p->ranges[0].end, 6 * GiB);
        assert_int_equal(p->ranges[1].start, 0x180000000);
        assert_int_equal(p->ranges[1].end, 0x200000000);
        assert_int_equal(p->ranges[2].start, GiB);
        assert_int_equal(p->ranges[2].end, GiB + GiB / 2);
        assert_int_equal(p->ranges[3].start, 0);
        assert_int_equal(p->ranges[3].end, 1 << 20);
        assert_int_equal(p->ranges[4].start, 16 * GiB);
        assert_int_equal(p->ranges[4].end, 17 * GiB);
        assert_int_equal(p->ranges[4].line, 9);

        expect_error(state, "[range 6G-0x17fffffff]\nzone = skip\n", 1, "inverted");
        expect_error(state, "[range 4G+2G]\nzone = skip\n\n[range 5G+2G]\nzone = skip\n", 4,
                     "overlaps [range 0x100000000-0x17fffffff] at line 1");
        expect_error(state, "[range 4G+2G]\nzone = skip\n[range 2G-0x13fffffff]\nzone = skip\n", 3,
                     "at line 1");
        /* Touching ranges do not overlap (end is exclusive). */
        {
                _cleanup_policy_ struct policy *q =
                        load_ok(state, "[range 4G+2G]\nzone = skip\n[range 6G+2G]\nzone = skip\n");
                assert_int_equal(q->n_ranges, 2);
        }
        expect_error(state, "[range 4G-6G]\nzone = skip\n", 1, "did you mean 0x17fffffff");
        expect_error(state, "[range 4G+0]\nzone = skip\n", 1, "is empty");
        expect_error(state, "[range 4G+1000]\nzone = skip\n", 1, "1 MiB boundary");
        expect_error(state, "[range 4097+1G]\nzone = skip\n", 1, "not 1 MiB aligned");
        expect_error(state, "[range 4G]\nzone = skip\n", 1, "expected START-END");
        expect_error(state, "[range 4Q+1G]\nzone = skip\n", 1, "expected START-END");
        expect_error(state, "[range 0xffffffffffffffff+1G]\nzone = skip\n", 1, "out of range");
        expect_error(state, "[range 16777216T+1G]\nzone = skip\n", 1, "out of range");
        expect_error(state, "[range 0-0xffffffffffffffff]\nzone = skip\n", 1, "out of range");
        expect_error(state, "[range 4G+1G]\n\n# only a comment\n", 1, "has no zone key");
        expect_error(state, "[exclude]\nnode = 1\nrange = 4G-5G\n", 3, "range \"4G-5G\": END is the last byte");
}

static void test_rule_sections(void **state) {
        expect_error(state, "[node 2]\nzone = skip\n[node 1]\nzone = skip\n[node 2]\nworkers = 2\n", 5,
                     "duplicate section [node 2], first at line 1");
        expect_error(state, "[device a]\nconvert = yes\n[device a]\nconvert = no\n", 3,
                     "duplicate section [device a], first at line 1");
        expect_error(state, "[node 3]\n[daemon]\n", 1, "[node 3] sets neither zone nor workers");
        expect_error(state, "[daemon]\n[device x]\nmatch_device = dax0.0\n", 2, "sets none of zone, convert, memmap_on_memory and allow_badblocks");
}

static void test_exclusions_accumulate(void **state) {
        _cleanup_policy_ struct policy *p = NULL;

        p = load_ok(state,
                    "[exclude]\n"
                    "node = 3\n"
                    "node = 4\n"
                    "block = 7\n"
                    "[daemon]\n"
                    "settle_ms = 30\n"
                    "[exclude]\n"
                    "BLOCK = memory8\n"
                    "range = 0x200000000-0x23fffffff\n"
                    "range = 0x200000000+1G\n"      /* overlapping exclusions are fine */
                    "device = dax2.1\n"
                    "device = dax2.1\n");
        assert_int_equal(p->n_exclusions, 8);
        assert_int_equal(p->exclusions[0].kind, EXCLUDE_NODE);
        assert_int_equal(p->exclusions[0].node, 3);
        assert_int_equal(p->exclusions[1].node, 4);
        assert_int_equal(p->exclusions[1].line, 3);
        assert_int_equal(p->exclusions[2].kind, EXCLUDE_BLOCK);
        assert_int_equal(p->exclusions[2].start, 7);
        assert_int_equal(p->exclusions[3].kind, EXCLUDE_BLOCK);
        assert_int_equal(p->exclusions[3].start, 8);
        assert_int_equal(p->exclusions[3].line, 8);
        assert_int_equal(p->exclusions[4].kind, EXCLUDE_RANGE);
        assert_int_equal(p->exclusions[4].end, 0x240000000);
        assert_int_equal(p->exclusions[5].end, 0x240000000);
        assert_int_equal(p->exclusions[6].kind, EXCLUDE_DEVICE);
        assert_string_equal(p->exclusions[7].device, "dax2.1");
        assert_int_equal(p->exclusions[7].line, 12);
}

static void test_workers_for_node(void **state) {
        _cleanup_policy_ struct policy *p = NULL;

        (void) state;
        assert_int_equal(policy_new_default(&p), 0);
        assert_int_equal(policy_workers_for_node(p, 0, 8), 1);
        assert_int_equal(policy_workers_for_node(p, 0, 0), 1);

        p->workers = (struct worker_count) { .count = 4 };
        assert_int_equal(policy_workers_for_node(p, 0, 8), 4);
        assert_int_equal(policy_workers_for_node(p, 0, 2), 2);       /* capped at usable cores */
        assert_int_equal(policy_workers_for_node(p, 0, 0), 1);       /* unpinned */

        p->workers = (struct worker_count) { .percent = 50 };
        assert_int_equal(policy_workers_for_node(p, 0, 8), 4);
        assert_int_equal(policy_workers_for_node(p, 0, 3), 2);       /* 1.5 rounds up */
        assert_int_equal(policy_workers_for_node(p, 0, 1), 1);
        p->workers = (struct worker_count) { .percent = 1 };
        assert_int_equal(policy_workers_for_node(p, 0, 8), 1);       /* at least 1 */
        assert_int_equal(policy_workers_for_node(p, 0, 101), 2);
        p->workers = (struct worker_count) { .percent = 100 };
        assert_int_equal(policy_workers_for_node(p, 0, 6), 6);
        assert_int_equal(policy_workers_for_node(p, 0, 4096), 4096);

        /* A node rule overrides, but only for its node and only with workers set. */
        policy_unref(TAKE_PTR(p));
        p = load_ok(state,
                    "[daemon]\nworkers = 25%\n"
                    "[node 1]\nworkers = 3\n"
                    "[node 2]\nzone = online_kernel\n"
                    "[node 3]\nworkers = 75%\n");
        assert_int_equal(policy_workers_for_node(p, 0, 8), 2);
        assert_int_equal(policy_workers_for_node(p, 1, 8), 3);
        assert_int_equal(policy_workers_for_node(p, 1, 2), 2);
        assert_int_equal(policy_workers_for_node(p, 2, 8), 2);
        assert_int_equal(policy_workers_for_node(p, 3, 8), 6);
        assert_int_equal(policy_workers_for_node(p, 3, 0), 1);
}

static void test_missing_file(void **state) {
        _cleanup_free_ char *path = NULL;
        struct policy_error err = {};
        struct policy *p = SENTINEL;

        assert_true(asprintf(&path, "%s/does-not-exist.conf", (const char *) *state) > 0);
        assert_int_equal(policy_load(path, &p, &err), -ENOENT);
        assert_ptr_equal(p, SENTINEL);
        assert_string_equal(err.file, path);
        assert_int_equal(err.line, 0);
        /* A NULL error pointer is allowed. */
        assert_int_equal(policy_load(path, &p, NULL), -ENOENT);
        assert_ptr_equal(p, SENTINEL);
}

static void test_not_text(void **state) {
        static const char nul[] = "[daemon]\nsettle_ms = 30\nretries\0 = 5\n";
        _cleanup_free_ char *path = write_conf(state, "nul.conf", nul, sizeof(nul) - 1);
        _cleanup_free_ char *big = NULL, *bigpath = NULL, *longline = NULL;
        struct policy_error err = {};
        struct policy *p = SENTINEL;
        size_t n = 1024 * 1024 + 1;

        assert_int_equal(policy_load(path, &p, &err), -EINVAL);
        assert_ptr_equal(p, SENTINEL);
        assert_int_equal(err.line, 3);
        assert_non_null(strstr(err.reason, "NUL"));

        /* Over 1 MiB, even if it is all comments. */
        big = malloc(n);
        assert_non_null(big);
        memset(big, '#', n);
        for (size_t i = 80; i < n; i += 80)
                big[i] = '\n';
        bigpath = write_conf(state, "big.conf", big, n);
        assert_int_equal(policy_load(bigpath, &p, &err), -EFBIG);
        assert_ptr_equal(p, SENTINEL);
        assert_int_equal(err.line, 0);
        assert_non_null(strstr(err.reason, "1 MiB"));
        /* Exactly 1 MiB is fine. */
        free(bigpath);
        bigpath = write_conf(state, "big.conf", big, n - 1);
        assert_int_equal(policy_load(bigpath, &p, &err), 0);
        policy_unref(p);
        p = SENTINEL;

        /* Long lines are fine; their numbers are still checked. */
        assert_true(asprintf(&longline, "[daemon]\n#%0300d\nbanned_cpus = 1%0300d\n", 0, 0) > 0);
        expect_error(state, longline, 3, "banned_cpus: CPU number out of range");
}

/* A banned_cpus list longer than inih's 200-byte line: the admin of a big machine writes one. */
static void test_long_lines(void **state) {
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ char *text = NULL;
        char *list = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&list, &len);

        assert_non_null(f);
        for (unsigned cpu = 0; cpu < 2048; cpu += 2)
                fprintf(f, "%s%u", cpu ? "," : "", cpu);
        assert_int_equal(fclose(f), 0);
        assert_true(len > 4000);
        assert_true(asprintf(&text, "[daemon]\nbanned_cpus = %s\n[zones]\ndefault = online\n", list) > 0);
        free(list);
        p = load_ok(state, text);
        assert_int_equal(cpuset_count(p->banned_cpus), 1024);
        assert_true(cpuset_isset(p->banned_cpus, 2046));
        assert_false(cpuset_isset(p->banned_cpus, 2047));
        assert_int_equal(p->default_zone, ZONE_ONLINE);
}

/* The file must be refused as a whole, fast, with reason containing what. */
static void expect_file_error(const char *path, int want, const char *what) {
        struct policy_error err = {};
        struct policy *p = SENTINEL;
        uint64_t start = now_usec();
        int r;

        /* A FIFO once blocked here for good: fail the test, do not hang it. */
        alarm(10);
        r = policy_load(path, &p, &err);
        alarm(0);
        if (r != want || err.line != 0 || !strstr(err.reason, what))
                fail_msg("%s: want %d with \"%s\", got %d: %s:%u: %s", path, want, what, r, err.file, err.line,
                         err.reason);
        assert_ptr_equal(p, SENTINEL);
        assert_string_equal(err.file, path);
        assert_true(now_usec() - start < 5 * USEC_PER_SEC);
}

/* Only a regular file is a config file: never block on or open anything else. */
static void test_not_regular(void **state) {
        const char *dir = *state;
        _cleanup_free_ char *fifo = NULL, *dangling = NULL, *dev = NULL, *big = NULL;
        _cleanup_close_ int fd = -1;

        assert_true(asprintf(&fifo, "%s/fifo.conf", dir) > 0);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        expect_file_error(fifo, -EINVAL, "is a FIFO, not a regular file");

        /* a directory of its own: the state's parent is /tmp, which no policy is read from */
        fake_mkdir(dir, "dir.conf");
        free(fifo);
        assert_true(asprintf(&fifo, "%s/dir.conf", dir) > 0);
        expect_file_error(fifo, -EISDIR, "is a directory");

        assert_true(asprintf(&dev, "%s/null.conf", dir) > 0);
        assert_int_equal(symlink("/dev/null", dev), 0);
        expect_file_error(dev, -EINVAL, "is a character device, not a regular file");

        assert_true(asprintf(&dangling, "%s/dangling.conf", dir) > 0);
        assert_int_equal(symlink("nowhere.conf", dangling), 0);
        expect_file_error(dangling, -ENOLINK, "dangling symbolic link");

        /* Sparse: over the limit by its size, without writing a byte. */
        assert_true(asprintf(&big, "%s/sparse.conf", dir) > 0);
        fd = open(big, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t) 16 << 30), 0);
        expect_file_error(big, -EFBIG, "is larger than 1048576 bytes (1 MiB)");
}

/* Text from the file reaches a terminal: control characters are shown escaped. */
static void test_error_escapes(void **state) {
        _cleanup_free_ char *path = NULL;
        static const char text[] = "[zones]\ndefault = \x1b]52;c;b3duZWQ=\x07\x1b[2J\r\n";
        struct policy_error err = {};
        struct policy *p = SENTINEL;

        path = write_conf(state, "esc.conf", text, sizeof(text) - 1);
        assert_int_equal(policy_load(path, &p, &err), -EINVAL);
        assert_int_equal(err.line, 2);
        for (const char *c = err.reason; *c; c++)
                assert_true((unsigned char) *c >= 0x20 && *c != 0x7f);
        assert_non_null(strstr(err.reason, "got \"\\x1b]52;c;b3duZWQ=\\x07\\x1b[2J\""));
        expect_error(state, "[device \x1b[31mred]\nzone = skip\n[device \x1b[31mred]\nzone = skip\n", 3,
                     "duplicate section [device \\x1b[31mred]");
}

/* ---- drop-ins: FILE.d/NAME.conf after FILE, in lexical order --------------- */

static void expect_path_error(const char *path, int want, const char *file, unsigned line, const char *what) {
        struct policy_error err = {};
        struct policy *p = SENTINEL;
        int r;

        r = policy_load(path, &p, &err);
        if (r != want || !streq(err.file, file) || err.line != line || !strstr(err.reason, what))
                fail_msg("want %d at %s:%u with \"%s\", got %d at %s:%u: %s", want, file, line, what, r, err.file,
                         err.line, err.reason);
        assert_ptr_equal(p, SENTINEL);
}

static void test_dropins(void **state) {
        const char *dir = *state;
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ char *main_conf = NULL, *a = NULL, *b = NULL;

        main_conf = write_conf(state, "m.conf",
                               "[daemon]\nsettle_ms = 10\n[node 1]\nzone = online_kernel\n[exclude]\nnode = 3\n"
                               "[range 4G+1G]\nzone = skip\n", 99);
        fake_write(dir, "m.conf.d/10-a.conf",
                   "[daemon]\nsettle_ms = 20\n[node 1]\nworkers = 2\n[exclude]\nnode = 4\n"
                   "[device x]\nzone = skip\n[range 4G+1G]\nzone = online\n");
        /* Lexical order: "9-b" sorts after "10-a". */
        fake_write(dir, "m.conf.d/9-b.conf", "[node 1]\nzone = online_movable\n[daemon]\nsettle_ms = 25\n");
        /* Not drop-ins: other names, hidden files, a directory. */
        fake_write(dir, "m.conf.d/99-c.conf.bak", "[daemon]\nsettle_ms = 1\n");
        fake_write(dir, "m.conf.d/.99-hidden.conf", "[daemon]\nsettle_ms = 2\n");
        fake_write(dir, "m.conf.d/README", "not a config\n");
        fake_write(dir, "m.conf.d/sub.conf/x.conf", "[daemon]\nsettle_ms = 3\n");
        p = load_path_ok(main_conf);

        assert_string_equal(p->path, main_conf);
        assert_int_equal(p->settle_ms, 25);
        assert_int_equal(p->n_nodes, 1);
        assert_int_equal(p->nodes[0].zone, ZONE_MOVABLE);
        assert_true(p->nodes[0].has_workers);
        assert_int_equal(p->nodes[0].workers.count, 2);
        assert_int_equal(p->n_ranges, 1);
        assert_int_equal(p->ranges[0].zone, ZONE_ONLINE);
        assert_int_equal(p->n_devices, 1);
        assert_int_equal(p->n_exclusions, 2);
        assert_int_equal(p->exclusions[1].node, 4);
        assert_int_equal(p->exclusions[1].line, 6);
        assert_true(asprintf(&a, "%s/m.conf.d/10-a.conf", dir) > 0);
        assert_true(asprintf(&b, "%s/m.conf.d/9-b.conf", dir) > 0);
        assert_string_equal(p->exclusions[0].file, main_conf);
        assert_string_equal(p->exclusions[1].file, a);
        assert_string_equal(p->devices[0].file, a);
        /* A rule names the file that last set it. */
        assert_string_equal(p->nodes[0].file, b);
        assert_int_equal(p->nodes[0].line, 1);
        assert_int_equal(p->n_files, 3);
        assert_string_equal(p->files[0], main_conf);
        assert_string_equal(p->files[1], a);
        assert_string_equal(p->files[2], b);
}

static void test_dropin_errors(void **state) {
        const char *dir = *state;
        _cleanup_free_ char *main_conf = NULL, *a = NULL, *fifo = NULL, *big = NULL;

        main_conf = write_conf(state, "m.conf", "[daemon]\nmax_wait_ms = 100\n[range 4G+1G]\nzone = skip\n", 53);
        assert_true(asprintf(&a, "%s/m.conf.d/a.conf", dir) > 0);

        /* Each error names the drop-in and its line. */
        fake_write(dir, "m.conf.d/a.conf", "[zones]\n\ndefault = sideways\n");
        expect_path_error(main_conf, -EINVAL, a, 3, "expected online");
        fake_write(dir, "m.conf.d/a.conf", "[node 2]\nzone = skip\n[node 2]\nzone = online\n");
        expect_path_error(main_conf, -EINVAL, a, 3, "duplicate section [node 2], first at line 1");
        fake_write(dir, "m.conf.d/a.conf", "[range 4G+2G]\nzone = skip\n");
        expect_path_error(main_conf, -EINVAL, a, 1, "overlaps [range 0x100000000-0x13fffffff]");
        /* Checks across keys point at the later one, in the later file. */
        fake_write(dir, "m.conf.d/a.conf", "\n[daemon]\nsettle_ms = 200\n");
        expect_path_error(main_conf, -EINVAL, a, 3, "max_wait_ms = 100 is shorter than settle_ms = 200");
        /* A section does not carry over from the file before. */
        fake_write(dir, "m.conf.d/a.conf", "settle_ms = 20\n");
        expect_path_error(main_conf, -EINVAL, a, 1, "outside of any section");
        fake_write(dir, "m.conf.d/a.conf", "[daemon]\nsettle_ms = 20\n");

        /* Whole-file faults of a drop-in, as of the main file. */
        assert_true(asprintf(&fifo, "%s/m.conf.d/b.conf", dir) > 0);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        alarm(10);
        expect_path_error(main_conf, -EINVAL, fifo, 0, "is a FIFO");
        alarm(0);
        assert_int_equal(unlink(fifo), 0);

        /* All files together are bounded too. */
        big = malloc(700 * 1024);
        assert_non_null(big);
        memset(big, '#', 700 * 1024);
        big[700 * 1024 - 1] = '\0';
        fake_write(dir, "m.conf.d/c.conf", "%s\n", big);
        fake_write(dir, "m.conf.d/d.conf", "%s\n", big);
        free(big);
        big = NULL;
        assert_true(asprintf(&big, "%s/m.conf.d/d.conf", dir) > 0);
        expect_path_error(main_conf, -EFBIG, big, 0, "all files together");
        fake_unlink(dir, "m.conf.d/c.conf");
        fake_unlink(dir, "m.conf.d/d.conf");

        /* The drop-in directory must be one. */
        fake_unlink(dir, "m.conf.d/a.conf");
        fake_rmdir(dir, "m.conf.d");
        fake_write(dir, "m.conf.d", "x\n");
        free(fifo);
        fifo = NULL;
        assert_true(asprintf(&fifo, "%s/m.conf.d", dir) > 0);
        expect_path_error(main_conf, -ENOTDIR, fifo, 0, "not a directory");
}

/* ---- who may write the policy: root (or we) alone ------------------------- */

/*
 * Writable by group or others, a file, its directory or the drop-in
 * directory: refused as a whole (-EPERM, "FILE: reason"), sticky or not.
 * The state directory is 0700 in /tmp: /tmp (1777) is no directory a
 * policy is read from, so it does not count.
 */
static void test_writable_refused(void **state) {
        enum { MAIN, DROPIN, DROPIN_DIR, DIR, _PATHS };
        static const struct {
                unsigned which;
                mode_t mode, restore;
                const char *why;
        } cases[] = {
                { MAIN, 0666, 0644, "is writable by group and others (mode 0666)" },
                { MAIN, 0620, 0644, "is writable by group (mode 0620)" },
                { MAIN, 0602, 0644, "is writable by others (mode 0602)" },
                { DROPIN, 0664, 0444, "is writable by group (mode 0664)" },
                { DROPIN_DIR, 0777, 0755, "is writable by group and others (mode 0777)" },
                { DROPIN_DIR, 01777, 0755, "is writable by group and others (mode 1777)" },
                { DIR, 0770, 0700, "is writable by group (mode 0770)" },
        };
        const char *dir = *state;
        _cleanup_policy_ struct policy *p = NULL;
        char *paths[_PATHS] = {};

        paths[MAIN] = write_conf(state, "m.conf", "[daemon]\nsettle_ms = 10\n", 24);
        assert_true(asprintf(&paths[DROPIN_DIR], "%s.d", paths[MAIN]) > 0);
        assert_true(asprintf(&paths[DROPIN], "%s/a.conf", paths[DROPIN_DIR]) > 0);
        paths[DIR] = strdup(dir);
        fake_write(dir, "m.conf.d/a.conf", "[daemon]\nretries = 7\n");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *path = paths[cases[i].which];

                assert_int_equal(chmod(path, cases[i].mode), 0);
                expect_path_error(paths[MAIN], -EPERM, path, 0, cases[i].why);
                /* the file's own directory counts whether or not the file is there */
                if (cases[i].which == DIR) {
                        assert_int_equal(unlink(paths[MAIN]), 0);
                        expect_path_error(paths[MAIN], -EPERM, path, 0, cases[i].why);
                }
                assert_int_equal(chmod(path, cases[i].restore), 0);
        }

        /* read-only for all, and 0700 above it: fine */
        p = load_path_ok(paths[MAIN]);
        assert_int_equal(p->retries, 7);
        for (size_t i = 0; i < _PATHS; i++)
                free(paths[i]);
}

/* A linked drop-in (or main file) is judged by its target and the target's directory. */
static void test_links_judged_by_target(void **state) {
        const char *dir = *state;
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ char *main_conf = NULL, *link = NULL, *target = NULL, *target_dir = NULL, *want = NULL;

        main_conf = write_conf(state, "m.conf", "[daemon]\nsettle_ms = 10\n", 24);
        fake_write(dir, "shared/t.conf", "[daemon]\nretries = 5\n");
        assert_true(asprintf(&target_dir, "%s/shared", dir) > 0);
        assert_true(asprintf(&target, "%s/t.conf", target_dir) > 0);
        assert_true(asprintf(&link, "%s.d/50-t.conf", main_conf) > 0);
        fake_symlink(dir, "m.conf.d/50-t.conf", "../shared/t.conf");

        p = load_path_ok(main_conf);
        assert_int_equal(p->retries, 5);

        /* the target anyone may write: the link is no way round it */
        assert_int_equal(chmod(target, 0646), 0);
        assert_true(asprintf(&want, "links to %s, which is writable by others (mode 0646)", target) > 0);
        expect_path_error(main_conf, -EPERM, link, 0, want);
        assert_int_equal(chmod(target, 0644), 0);

        /* a safe file in a directory anyone may write: it can be swapped */
        assert_int_equal(chmod(target_dir, 0777), 0);
        free(want);
        assert_true(asprintf(&want, "links into %s, which is writable by group and others (mode 0777)",
                             target_dir) > 0);
        expect_path_error(main_conf, -EPERM, link, 0, want);
        assert_int_equal(chmod(target_dir, 0755), 0);

        /* the main file as a link: the same */
        assert_int_equal(unlink(main_conf), 0);
        fake_symlink(dir, "m.conf", "shared/t.conf");
        policy_unrefp(&p);
        p = load_path_ok(main_conf);
        assert_int_equal(p->retries, 5);
        assert_int_equal(chmod(target, 0666), 0);
        free(want);
        assert_true(asprintf(&want, "links to %s, which is writable by group and others (mode 0666)", target) > 0);
        expect_path_error(main_conf, -EPERM, main_conf, 0, want);
}

/* Owned by another user (root runs the tests in CI): refused, the file, a directory or a link's target. */
static void test_foreign_owner_refused(void **state) {
        const char *dir = *state;
        _cleanup_free_ char *main_conf = NULL, *dropins = NULL, *link = NULL, *target = NULL, *want = NULL;

        if (geteuid() != 0)
                skip();         /* only root gives a file away */
        main_conf = write_conf(state, "m.conf", "[daemon]\nsettle_ms = 10\n", 24);
        assert_true(asprintf(&dropins, "%s.d", main_conf) > 0);
        fake_write(dir, "shared/t.conf", "[daemon]\nretries = 5\n");
        fake_symlink(dir, "m.conf.d/50-t.conf", "../shared/t.conf");
        assert_true(asprintf(&target, "%s/shared/t.conf", dir) > 0);
        assert_true(asprintf(&link, "%s/50-t.conf", dropins) > 0);

        assert_int_equal(chown(main_conf, 65534, 65534), 0);
        expect_path_error(main_conf, -EPERM, main_conf, 0, "is owned by uid 65534, not by root");
        assert_int_equal(chown(main_conf, 0, 0), 0);

        assert_int_equal(chown(dropins, 65534, 0), 0);
        expect_path_error(main_conf, -EPERM, dropins, 0, "is owned by uid 65534, not by root");
        assert_int_equal(chown(dropins, 0, 0), 0);

        assert_int_equal(chown(dir, 65534, 0), 0);
        expect_path_error(main_conf, -EPERM, dir, 0, "is owned by uid 65534, not by root");
        assert_int_equal(chown(dir, 0, 0), 0);

        assert_int_equal(chown(target, 65534, 0), 0);
        assert_true(asprintf(&want, "links to %s, which is owned by uid 65534, not by root", target) > 0);
        expect_path_error(main_conf, -EPERM, link, 0, want);
        assert_int_equal(chown(target, 0, 0), 0);

        /* the link itself may be anyone's: its directory and target are what count */
        assert_int_equal(lchown(link, 65534, 65534), 0);
        {
                _cleanup_policy_ struct policy *p = load_path_ok(main_conf);

                assert_int_equal(p->retries, 5);
        }
}

/* Drop-ins apply without the main file; with neither there is nothing (-ENOENT). */
static void test_dropins_without_main(void **state) {
        const char *dir = *state;
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ char *main_conf = NULL;
        struct policy *q = SENTINEL;

        assert_true(asprintf(&main_conf, "%s/absent.conf", dir) > 0);
        assert_int_equal(policy_load(main_conf, &q, NULL), -ENOENT);
        assert_ptr_equal(q, SENTINEL);
        fake_mkdir(dir, "absent.conf.d");
        assert_int_equal(policy_load(main_conf, &q, NULL), -ENOENT);
        fake_write(dir, "absent.conf.d/a.conf", "[daemon]\nretries = 9\n");
        p = load_path_ok(main_conf);
        assert_int_equal(p->retries, 9);
        assert_int_equal(p->settle_ms, 30);
        assert_int_equal(p->n_files, 1);
}

static void test_zone_strings(void **state) {
        static const struct {
                const char *s;
                enum zone z;
        } table[] = {
                { "skip", ZONE_SKIP },
                { "online", ZONE_ONLINE },
                { "online_movable", ZONE_MOVABLE },
                { "online_kernel", ZONE_KERNEL },
        };
        enum zone z = ZONE_UNSET;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                assert_int_equal(zone_from_string(table[i].s, &z), 0);
                assert_int_equal(z, table[i].z);
                assert_string_equal(zone_to_string(table[i].z), table[i].s);
        }
        z = ZONE_KERNEL;
        assert_int_equal(zone_from_string("Online", &z), -EINVAL);
        assert_int_equal(zone_from_string("unset", &z), -EINVAL);
        assert_int_equal(zone_from_string("", &z), -EINVAL);
        assert_int_equal(zone_from_string(NULL, &z), -EINVAL);
        assert_int_equal(z, ZONE_KERNEL);
        assert_null(zone_to_string((enum zone) 42));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),
                cmocka_unit_test_setup_teardown(test_shipped_conf, setup, teardown),
                cmocka_unit_test(test_shipped_no_live_keys),
                cmocka_unit_test_setup_teardown(test_shipped_defaults, setup, teardown),
                cmocka_unit_test_setup_teardown(test_shipped_examples, setup, teardown),
                cmocka_unit_test_setup_teardown(test_full_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_memmap_keys, setup, teardown),
                cmocka_unit_test_setup_teardown(test_allow_badblocks_key, setup, teardown),
                cmocka_unit_test_setup_teardown(test_syntax, setup, teardown),
                cmocka_unit_test_setup_teardown(test_device_cxl_keys, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_over_auto_online, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_chain, setup, teardown),
                cmocka_unit_test_setup_teardown(test_metrics_keys, setup, teardown),
                cmocka_unit_test_setup_teardown(test_empty_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_structure_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unknown_key, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_numbers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_values, setup, teardown),
                cmocka_unit_test_setup_teardown(test_workers_values, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cross_checks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_ranges, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rule_sections, setup, teardown),
                cmocka_unit_test_setup_teardown(test_exclusions_accumulate, setup, teardown),
                cmocka_unit_test_setup_teardown(test_workers_for_node, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_not_text, setup, teardown),
                cmocka_unit_test_setup_teardown(test_long_lines, setup, teardown),
                cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
                cmocka_unit_test_setup_teardown(test_error_escapes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dropins, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dropin_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dropins_without_main, setup, teardown),
                cmocka_unit_test_setup_teardown(test_writable_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_links_judged_by_target, setup, teardown),
                cmocka_unit_test_setup_teardown(test_foreign_owner_refused, setup, teardown),
                cmocka_unit_test(test_zone_strings),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
