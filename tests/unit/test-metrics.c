/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Prometheus metrics (daemon/metrics.c): what is read from a topology
 * (blocks per node and zone, per hotplug device, auto_online_blocks), the
 * exposition text with and without the daemon's counters, label values
 * from hostile sysfs names, and the textfile written whole with mode 0644
 * under any umask.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "fake-tree.h"
#include "metrics.h"
#include "pmem.h"
#include "topology.h"
#include "util.h"

/* Standard machine, 4 offline blocks on node 1 (a DIMM), 2 online Movable on CPU-less node 2, one with no node. */
static char *machine(const char *dimm_name) {
        char *root = fake_tree_new();

        fake_standard_machine(root);
        fake_add_blocks(root, 16, 4, 1, "offline", "Normal Movable");
        fake_add_acpi_dimm(root, dimm_name, 16, 4);
        fake_add_blocks(root, 38, 2, 2, "online", "Movable");
        fake_add_block(root, 64, -1, "offline", "Normal");
        return root;
}

/* The topology of root with its hotplug devices, as status and the daemon's passes have it. */
static struct topology *load(const char *root) {
        struct memdev_set devices = {};
        struct ram_ranges fw = {};
        struct pmem_devices dax = {};
        struct topology *t = NULL;

        assert_int_equal(topology_load(root, &t), 0);
        assert_int_equal(memdev_load(root, t, &dax, NULL, &devices, &fw), 0);
        topology_set_devices(t, &devices, &fw);
        memdev_set_clear(&devices);
        ram_ranges_clear(&fw);
        return t;
}

static char *render(const struct metrics *m) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        assert_non_null(f);
        assert_int_equal(metrics_print(f, m), 0);
        assert_int_equal(fclose(f), 0);
        return text;
}

static void assert_has(const char *text, const char *line) {
        if (!strstr(text, line))
                fail_msg("no \"%s\" in:\n%s", line, text);
}

static void test_machine(void **state) {
        _cleanup_(metrics_machine_done) struct metrics_machine m = {};
        _cleanup_topology_ struct topology *t = NULL;
        _cleanup_free_ char *text = NULL;
        char *root = machine("PNP0C80:00");
        struct metrics metrics = { .machine = &m, .auto_online_taken = 0 };

        (void) state;
        t = load(root);
        assert_int_equal(metrics_machine_read(t, &m), 0);
        /* nodes in order, the blocks without a node last */
        assert_int_equal(m.n_nodes, 4);
        assert_int_equal(m.nodes[0].node, 0);
        assert_int_equal(m.nodes[2].node, 2);
        assert_int_equal(m.nodes[3].node, NODE_NONE);
        assert_int_equal(m.n_devices, 1);
        assert_string_equal(m.devices[0].name, "PNP0C80:00");
        assert_string_equal(m.auto_online, "offline");

        text = render(&metrics);
        assert_has(text, "# HELP memonlined_blocks_offline ");
        assert_has(text, "# TYPE memonlined_blocks_offline gauge\n");
        assert_has(text, "\nmemonlined_blocks_offline{node=\"0\"} 0\n");
        assert_has(text, "\nmemonlined_blocks_offline{node=\"1\"} 4\n");
        assert_has(text, "\nmemonlined_blocks_offline{node=\"none\"} 1\n");
        assert_has(text, "\nmemonlined_blocks_online{node=\"1\"} 8\n");
        assert_has(text, "\nmemonlined_blocks_online{node=\"2\"} 2\n");
        assert_has(text, "\nmemonlined_memory_online_bytes{node=\"0\",zone=\"kernel\"} 1073741824\n");
        assert_has(text, "\nmemonlined_memory_online_bytes{node=\"2\",zone=\"movable\"} 268435456\n");
        assert_has(text, "\nmemonlined_memory_offline_bytes{node=\"1\"} 536870912\n");
        assert_has(text, "\nmemonlined_device_blocks_offline{kind=\"dimm\",device=\"PNP0C80:00\"} 4\n");
        assert_has(text, "\nmemonlined_device_blocks_online{kind=\"dimm\",device=\"PNP0C80:00\"} 0\n");
        assert_has(text, "\nmemonlined_auto_online_blocks{value=\"offline\"} 1\n");
        assert_has(text, "\nmemonlined_auto_online_taken_over 0\n");
        assert_has(text, "\nmemonlined_block_size_bytes 134217728\n");
        assert_has(text, "memonlined_build_info{version=\"" PACKAGE_VERSION "\"} 1\n");
        /* every zone known: no unknown series; no daemon: no counters */
        assert_null(strstr(text, "zone=\"unknown\""));
        assert_null(strstr(text, "_total"));
        assert_null(strstr(text, "memonlined_start_time_seconds"));
        fake_tree_free(root);
}

/* Each family's HELP and TYPE once, before its samples, which are contiguous. */
static void test_families_contiguous(void **state) {
        _cleanup_(metrics_machine_done) struct metrics_machine m = {};
        _cleanup_topology_ struct topology *t = NULL;
        _cleanup_free_ char *text = NULL;
        struct metrics_daemon d = { .have_last_batch = true };
        struct metrics metrics = { .machine = &m, .auto_online_taken = 1, .daemon = &d };
        char *root = machine("PNP0C80:00"), *names[64];
        size_t n = 0;

        (void) state;
        t = load(root);
        assert_int_equal(metrics_machine_read(t, &m), 0);
        text = render(&metrics);
        for (char *line = text, *next; *line; line = next) {
                size_t len = strcspn(line, "{ ");
                char *name;

                next = line + strcspn(line, "\n") + 1;
                if (startswith(line, "# TYPE ")) {
                        name = line + 7;
                        len = strcspn(name, " ");
                        for (size_t i = 0; i < n; i++)
                                if (strlen(names[i]) == len && strncmp(names[i], name, len) == 0)
                                        fail_msg("TYPE of %.*s twice", (int) len, name);
                        assert_true(n < ELEMENTSOF(names));
                        names[n++] = strndup(name, len);
                        continue;
                }
                if (line[0] == '#')
                        continue;
                assert_true(n > 0);
                if (strlen(names[n - 1]) != len || strncmp(names[n - 1], line, len) != 0)
                        fail_msg("sample %.*s after TYPE of %s", (int) len, line, names[n - 1]);
        }
        assert_int_equal(n, 18);
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        fake_tree_free(root);
}

/* Names and values from sysfs that try to break the format or reach a terminal. */
static void test_hostile_labels(void **state) {
        static const char evil[] = "PNP0C80:\"}\\ 1\nmemonlined_blocks_offline{node=\"0\"} 99\033[2J\xff";
        _cleanup_(metrics_machine_done) struct metrics_machine m = {};
        _cleanup_topology_ struct topology *t = NULL;
        _cleanup_free_ char *text = NULL;
        char *root = machine(evil);
        struct metrics metrics = { .machine = &m, .auto_online_taken = -1 };

        (void) state;
        fake_write(root, "devices/system/memory/auto_online_blocks", "online\"\\\n");
        t = load(root);
        assert_int_equal(metrics_machine_read(t, &m), 0);
        assert_int_equal(m.n_devices, 1);
        assert_string_equal(m.devices[0].name, evil);
        text = render(&metrics);
        /* the name's quote and backslashes escaped, its newline and escape made text: one sample line */
        assert_has(text, "\nmemonlined_device_blocks_offline{kind=\"dimm\",device=\"PNP0C80:\\\"}\\\\\\\\ 1"
                         "\\\\x0amemonlined_blocks_offline{node=\\\"0\\\"} 99\\\\x1b[2J\\\\xff\"} 4\n");
        assert_has(text, "\nmemonlined_auto_online_blocks{value=\"online\\\"\\\\\\\\\"} 1\n");
        assert_null(strstr(text, "memonlined_blocks_offline{node=\"0\"} 99"));
        assert_null(strchr(text, '\033'));
        assert_null(strchr(text, '\xff'));
        /* unknown: the series is left out */
        assert_null(strstr(text, "memonlined_auto_online_taken_over"));
        fake_tree_free(root);
}

/* The daemon's counters, and the last batch's times only once a batch onlined a block. */
static void test_daemon(void **state) {
        _cleanup_free_ char *text = NULL, *before = NULL;
        struct metrics_daemon d = {
                .start_time_usec = 1700000000123456ULL,
                .batches = 3, .blocks_onlined = 40, .bytes_onlined = 40ULL << 27, .blocks_failed = 2,
                .blocks_excluded = 5,
        };
        struct metrics metrics = { .auto_online_taken = 1, .daemon = &d };

        (void) state;
        before = render(&metrics);
        assert_null(strstr(before, "memonlined_last_batch_"));
        /* not read yet (the daemon before its first pass): no block series */
        assert_null(strstr(before, "memonlined_blocks_offline"));
        assert_null(strstr(before, "memonlined_block_size_bytes"));
        d.have_last_batch = true;
        d.last_first_block_usec = 12345;
        d.last_last_block_usec = 2000001;
        text = render(&metrics);
        assert_has(text, "# TYPE memonlined_batches_total counter\nmemonlined_batches_total 3\n");
        assert_has(text, "\nmemonlined_blocks_onlined_total 40\n");
        assert_has(text, "\nmemonlined_onlined_bytes_total 5368709120\n");
        assert_has(text, "\nmemonlined_blocks_failed_total 2\n");
        assert_has(text, "\nmemonlined_blocks_excluded_total 5\n");
        assert_has(text, "# TYPE memonlined_start_time_seconds gauge\nmemonlined_start_time_seconds 1700000000.123456\n");
        assert_has(text, "\nmemonlined_last_batch_first_block_seconds 0.012345\n");
        assert_has(text, "\nmemonlined_last_batch_last_block_seconds 2.000001\n");
        assert_has(text, "\nmemonlined_auto_online_taken_over 1\n");
}

static mode_t file_mode(const char *root, const char *rel) {
        _cleanup_free_ char *path = NULL;
        struct stat st;

        assert_true(asprintf(&path, "%s/%s", root, rel) > 0);
        assert_int_equal(lstat(path, &st), 0);
        return st.st_mode;
}

/* Replaced whole, 0644 under the unit's UMask=0077, never through a link left in the temporary name. */
static void test_write_file(void **state) {
        _cleanup_free_ char *dir = NULL, *text = NULL, *outside = NULL, *file = NULL;
        char *root = fake_tree_new();
        mode_t old = umask(0077);

        (void) state;
        fake_mkdir(root, "prom");
        assert_true(asprintf(&dir, "%s/prom", root) > 0);
        assert_int_equal(metrics_write_file(dir, "a 1\n", 4), 0);
        text = fake_read(root, "prom/" METRICS_FILE);
        assert_string_equal(text, "a 1");
        assert_int_equal(file_mode(root, "prom/" METRICS_FILE) & 07777, 0644);

        /* a link where the temporary file goes: removed, not followed */
        fake_write(root, "outside", "keep\n");
        assert_true(asprintf(&outside, "%s/outside", root) > 0);
        fake_symlink(root, "prom/" METRICS_FILE_TMP, outside);
        assert_int_equal(metrics_write_file(dir, "b 2\n", 4), 0);
        free(text);
        text = fake_read(root, "outside");
        assert_string_equal(text, "keep");
        free(text);
        text = fake_read(root, "prom/" METRICS_FILE);
        assert_string_equal(text, "b 2");
        assert_int_equal(access(outside, F_OK), 0);
        assert_true(asprintf(&file, "%s/prom/" METRICS_FILE_TMP, root) > 0);
        assert_int_equal(access(file, F_OK), -1);

        /* no directory: the error, and the old file in another place untouched */
        free(dir);
        assert_true(asprintf(&dir, "%s/missing", root) > 0);
        assert_int_equal(metrics_write_file(dir, "c 3\n", 4), -ENOENT);
        free(dir);
        assert_true(asprintf(&dir, "%s/outside", root) > 0);
        assert_int_equal(metrics_write_file(dir, "c 3\n", 4), -ENOTDIR);
        umask(old);
        fake_tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_machine),
                cmocka_unit_test(test_families_contiguous),
                cmocka_unit_test(test_hostile_labels),
                cmocka_unit_test(test_daemon),
                cmocka_unit_test(test_write_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
