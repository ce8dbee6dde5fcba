/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `memonlined status` on fake sysfs trees: the node table (interleaved CPU
 * numbering, hyperthread siblings, CPU-less nodes), hotplug devices, dax
 * devices with their CXL regions and memdevs, the running batch from the
 * progress file, the options, exit statuses and hostile names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fake-tree.h"
#include "status.h"
#include "status-read.h"
#include "table.h"
#include "topology.h"
#include "util.h"

#define MIB ((uint64_t) 1 << 20)
#define BLOCK ((uint64_t) 128 << 20)

/* Run status on root with a NULL-terminated argument list; stdout in *ret_out, the exit status returned. */
static int run_status(const char *root, char **ret_out, ...) {
        char *argv[32] = { (char *) "status" };
        int argc = 1, r;
        char *buf = NULL;
        size_t n = 0;
        va_list ap;
        FILE *out;

        va_start(ap, ret_out);
        for (const char *a; (a = va_arg(ap, const char *)); )
                argv[argc++] = (char *) a;
        va_end(ap);
        out = open_memstream(&buf, &n);
        assert_non_null(out);
        r = status_main(argc, argv, root, out);
        fclose(out);
        *ret_out = buf;
        return r;
}

/* An empty policy file in root: the built-in defaults, whatever the host has in /etc. */
static const char *empty_config(const char *root) {
        static char path[4096];

        fake_write(root, "empty.conf", "%s", "");
        snprintf(path, sizeof(path), "%s/empty.conf", root);
        return path;
}

/* Run status with stdout on a terminal (a pty); what it wrote in *ret_out, the exit status returned. */
static int run_status_tty(const char *root, char **ret_out, const char *arg) {
        char *argv[] = { (char *) "status", (char *) "--no-daemon", (char *) "--config", NULL,
                         (char *) "--rules-dir", (char *) root, (char *) arg, NULL };
        char config[4096], buf[65536];
        int master, slave, r, argc = arg ? 7 : 6;
        size_t len = 0;
        ssize_t n;
        FILE *out;

        snprintf(config, sizeof(config), "%s/empty.conf", root);
        fake_write(root, "empty.conf", "%s", "");
        argv[3] = config;
        master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        assert_true(master >= 0);
        assert_int_equal(grantpt(master), 0);
        assert_int_equal(unlockpt(master), 0);
        slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
        assert_true(slave >= 0);
        out = fdopen(slave, "w");
        assert_non_null(out);
        r = status_main(argc, argv, root, out);
        fclose(out);
        /* the output is far below what the pty holds; EIO once it is drained and the other side closed */
        while (len < sizeof(buf) - 1 && (n = read(master, buf + len, sizeof(buf) - 1 - len)) > 0)
                len += (size_t) n;
        close(master);
        buf[len] = '\0';
        *ret_out = strdup(buf);
        return r;
}

/* status with the arguments every test wants: no bus, the default policy, no udev rules of the host. */
#define STATUS(root, out, ...) \
        run_status(root, out, "--no-daemon", "--config", empty_config(root), "--rules-dir", root, __VA_ARGS__, NULL)

/* Standard machine plus hot-added memory: offline blocks on node 1 and CPU-less node 2, movable online ones. */
static char *status_machine(void) {
        char *root = fake_tree_new();

        fake_standard_machine(root);
        for (uint64_t b = 16; b < 20; b++)
                fake_add_block(root, b, 1, "offline", "Normal Movable");
        for (uint64_t b = 32; b < 38; b++)
                fake_add_block(root, b, 2, "offline", "Movable");
        for (uint64_t b = 38; b < 40; b++)
                fake_add_block(root, b, 2, "online", "Movable");
        fake_add_block(root, 64, -1, "offline", "Normal");      /* node link not there yet */
        fake_write(root, "module/memory_hotplug/parameters/online_policy", "auto-movable\n");
        fake_write(root, "devices/system/memory/auto_online_blocks", "online_movable\n");
        return root;
}

/*
 * Two nodes of 32 cores with two threads each, numbered as many servers
 * do: node0 = 0,2,4,...,126 and node1 = 1,3,...,127; CPU k's sibling is
 * k + 64. A CPU-less node 2 (CXL) is nearest to node 1.
 */
static char *interleaved_machine(void) {
        char *root = fake_tree_new(), list0[512] = "", list1[512] = "";

        fake_memory_init(root, BLOCK);
        fake_write(root, "devices/system/cpu/online", "0-127\n");
        fake_write(root, "devices/system/cpu/possible", "0-127\n");
        fake_write(root, "devices/system/cpu/present", "0-127\n");
        fake_write(root, "devices/system/cpu/isolated", "\n");
        fake_write(root, "devices/system/node/online", "0-2\n");
        fake_write(root, "devices/system/node/possible", "0-2\n");
        for (unsigned c = 0; c < 128; c++) {
                char siblings[32];

                snprintf(siblings, sizeof(siblings), "%u,%u", c % 64, c % 64 + 64);
                fake_add_cpu(root, c, (int) (c % 2), siblings, true);
                snprintf((c % 2 ? list1 : list0) + strlen(c % 2 ? list1 : list0), 8, "%s%u",
                         c < 2 ? "" : ",", c);
        }
        fake_add_node(root, 0, list0, "10 21 30");
        fake_add_node(root, 1, list1, "21 10 17");
        fake_add_node(root, 2, "", "30 17 10");
        for (uint64_t b = 0; b < 16; b++)
                fake_add_block(root, b, 0, "online", "Normal");
        for (uint64_t b = 16; b < 32; b++)
                fake_add_block(root, b, 1, "online", "Normal");
        for (uint64_t b = 32; b < 40; b++)
                fake_add_block(root, b, 1, "offline", "Normal Movable");
        for (uint64_t b = 40; b < 44; b++)
                fake_add_block(root, b, 2, b < 42 ? "online" : "offline", "Movable");
        return root;
}

static const char *const every_cpu_even =
        "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,"
        "72,74,76,78,80,82,84,86,88,90,92,94,96,98,100,102,104,106,108,110,112,114,116,118,120,122,124,126";

/* Where heading's column name starts and ends in the header line; asserts it is there. */
static void column_span(const char *header, const char *name, size_t *ret_start, size_t *ret_end) {
        size_t len = strlen(name);

        for (const char *p = header; (p = strstr(p, name)); p++)
                if ((p == header || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) {
                        *ret_start = (size_t) (p - header);
                        *ret_end = *ret_start + len;
                        return;
                }
        fail_msg("no column %s in \"%s\"", name, header);
}

/*
 * Every row of the table whose header line starts with header_start, up
 * to an empty line or the totals, has its cells under the headings:
 * left-aligned cells start where the heading starts, right-aligned ones
 * end where it ends.
 */
static void assert_aligned(const char *text, const char *header_start, const char *const *left,
                           const char *const *right, unsigned want_rows) {
        _cleanup_free_ char *header = line_with(text, header_start);
        const char *p;
        unsigned rows = 0;

        assert_non_null(header);
        p = strstr(text, header) + strlen(header) + 1;
        for (const char *e; *p && *p != '\n'; p = e + 1, rows++) {
                _cleanup_free_ char *row = NULL;
                size_t s, end;

                e = strchr(p, '\n');
                assert_non_null(e);
                row = strndup(p, (size_t) (e - p));
                if (strstr(row, " blocks, "))
                        break;  /* the totals line */
                for (const char *const *c = left; *c; c++) {
                        column_span(header, *c, &s, &end);
                        assert_true(strlen(row) > s);
                        assert_true(row[s] != ' ');
                        assert_true(s == 0 || row[s - 1] == ' ');
                }
                for (const char *const *c = right; *c; c++) {
                        column_span(header, *c, &s, &end);
                        assert_true(strlen(row) >= end);
                        assert_true(row[end - 1] != ' ');
                        assert_true(row[end] == ' ' || row[end] == '\0');
                }
        }
        assert_int_equal(rows, want_rows);
}

/* jq's answer for filter over json is want. */
static void assert_jq(const char *json, const char *filter, const char *want) {
        _cleanup_free_ char *v = jq(json, filter);

        assert_string_equal(v, want);
}

/* ---- nodes ------------------------------------------------------------------- */

static void test_json(void **state) {
        _cleanup_free_ char *out = NULL, *v = NULL;
        char *root = status_machine();

        assert_int_equal(STATUS(root, &out, "--json"), 0);
        /* what the VM scenario report-and-status reads */
        assert_jq(out, "[([.nodes[].offline_blocks] | add), (.daemon | has(\"active_state\"))] | @csv",
                  "11,true");
        assert_jq(out, ".nodes[] | [.node, .cpus, .cpuless, .blocks, .online_blocks, .offline_blocks, .size, .normal,"
                    " .movable, .offline_size, .writer_node] | @csv",
                  "0,\"0-3\",false,8,8,0,\"1G\",\"1G\",\"0B\",\"0B\",0\n"
                               "1,\"4-7\",false,12,8,4,\"1.5G\",\"1G\",\"0B\",\"512M\",1\n"
                               "2,,true,8,2,6,\"1G\",\"0B\",\"256M\",\"768M\",1\n"
                               ",,false,1,0,1,\"128M\",\"0B\",\"0B\",\"128M\",");
        /* default policy: one worker per node; node 2 is written from node 1's first core */
        assert_jq(out, "[.nodes[] | .writer_cpus] | @csv",
                  "\"0\",\"4\",\"4\",");
        assert_jq(out, "[.block_size, .totals.blocks, .totals.online_blocks, .totals.offline_blocks, .totals.size,"
                    " .totals.normal, .totals.movable, .totals.offline_size] | @csv",
                  "134217728,29,18,11,\"3.6G\",\"2G\",\"256M\",\"1.4G\"");
        assert_jq(out, "[.kernel.auto_online_blocks, .kernel.online_policy, .kernel.auto_movable_ratio, .daemon.error,"
                    " .batch] | @csv",
                  "\"online_movable\",\"auto-movable\",,\"not queried\",");
        /* kernel auto-online competes with us */
        v = jq(out, ".conflicts | length");
        assert_true(atoi(v) >= 1);
        free(out);

        /* -b: sizes are numbers of bytes */
        assert_int_equal(STATUS(root, &out, "-J", "-b"), 0);
        assert_jq(out, "[.nodes[1].size, .nodes[1].offline_size, .totals.movable] | @csv",
                  "1610612736,536870912,268435456");
        fake_tree_free(root);
}

static void test_text(void **state) {
        static const char *const left[] = { "CPUS", "WRITER-CPUS", NULL };
        static const char *const right[] = { "NODE", "ONLINE", "OFFLINE", "NORMAL", "MOVABLE", "OFFLINE-SIZE",
                                             "WRITER", NULL };
        _cleanup_free_ char *out = NULL, *n2 = NULL, *total = NULL;
        char *root = status_machine();

        fake_write(root, "devices/system/memory/auto_online_blocks", "offline\n");
        assert_int_equal(STATUS(root, &out, "--no-color"), 0);
        assert_non_null(strstr(out, "Memory blocks per node (block size 128M):\n"));
        assert_aligned(out, "NODE CPUS", left, right, 4);
        n2 = line_with(out, "CPU-less");
        assert_non_null(n2);
        {
                char cpus[16], normal[16], movable[16], offline[16], wcpus[16];
                unsigned nd, on, off, writer;

                assert_int_equal(sscanf(n2, "%u %15s %u %u %15s %15s %15s %u %15s", &nd, cpus, &on, &off, normal,
                                        movable, offline, &writer, wcpus), 9);
                assert_int_equal(nd, 2);
                assert_int_equal(on, 2);
                assert_int_equal(off, 6);
                assert_string_equal(normal, "0B");
                assert_string_equal(movable, "256M");
                assert_string_equal(offline, "768M");
                assert_int_equal(writer, 1);
                assert_string_equal(wcpus, "4");
        }
        total = line_with(out, " blocks, ");
        assert_string_equal(total, "29 blocks, 3.6G: 18 online (2G Normal, 256M Movable), 11 offline (1.4G)");
        assert_non_null(strstr(out, "auto_online_blocks  offline"));
        assert_non_null(strstr(out, "online_policy       auto-movable"));
        assert_non_null(strstr(out, "auto_movable_ratio  (unknown)"));
        assert_non_null(strstr(out, "Competing onliners:\n  none found"));
        assert_non_null(strstr(out, "running batch: none\n"));
        assert_non_null(strstr(out, "daemon: unknown (not queried)"));
        /* nothing to list: no device tables */
        assert_null(strstr(out, "Hotplug devices"));
        assert_null(strstr(out, "CXL regions"));
        assert_null(strchr(out, '\033'));
        fake_tree_free(root);
}

/* The defect: with node0 = 0,2,4,... the CPUS column overflowed and every column after it shifted. */
static void test_interleaved_cpus(void **state) {
        static const char *const left[] = { "CPUS", "WRITER-CPUS", NULL };
        static const char *const right[] = { "NODE", "ONLINE", "OFFLINE", "NORMAL", "MOVABLE", "OFFLINE-SIZE",
                                             "WRITER", NULL };
        _cleanup_free_ char *out = NULL, *conf = NULL, *row = NULL;
        char *root = interleaved_machine();

        assert_int_equal(STATUS(root, &out, "--no-color"), 0);
        assert_aligned(out, "NODE CPUS", left, right, 3);
        row = line_with(out, every_cpu_even);
        assert_non_null(row);
        free(out);

        /* four workers: one thread per core, siblings (k + 64) never, lowest cores first */
        assert_true(asprintf(&conf, "%s/memonlined.conf", root) > 0);
        fake_write(root, "memonlined.conf", "[daemon]\nworkers = 4\n");
        assert_int_equal(run_status(root, &out, "--no-daemon", "--config", conf, "--rules-dir", root, "-J", NULL), 0);
        assert_jq(out, ".nodes[] | [.node, .cpus, .writer_node, .writer_cpus, .cpuless] | @csv",
                  "0,\"0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,"
                               "56,58,60,62,64,66,68,70,72,74,76,78,80,82,84,86,88,90,92,94,96,98,100,102,104,106,"
                               "108,110,112,114,116,118,120,122,124,126\",0,\"0,2,4,6\",false\n"
                               "1,\"1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43,45,47,49,51,53,55,"
                               "57,59,61,63,65,67,69,71,73,75,77,79,81,83,85,87,89,91,93,95,97,99,101,103,105,107,"
                               "109,111,113,115,117,119,121,123,125,127\",1,\"1,3,5,7\",false\n"
                               "2,,1,\"1,3,5,7\",true");
        free(out);

        /* -r: one line per node, every field one word */
        assert_int_equal(STATUS(root, &out, "-r", "-n", "--tables", "nodes", "-o", "NODE,CPUS,OFFLINE,WRITER-CPUS"),
                         0);
        {
                _cleanup_free_ char *want = NULL;

                assert_true(asprintf(&want, "0 %s 0 0\n", every_cpu_even) > 0);
                assert_true(startswith(out, want));
                assert_non_null(strstr(out, "\n2 CPU-less 2 1\n"));
        }
        fake_tree_free(root);
}

static void test_wrap_lists(void **state) {
        struct table_style wrap = { .format = TABLE_FORMAT_TEXT, .wrap_lists = true };
        struct table_style json = { .format = TABLE_FORMAT_JSON, .wrap_lists = true };
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

        /* cut after commas, never inside a number; each line at most 12 bytes */
        a = table_list_cell(&wrap, "0,2,4,6,8,10,12,14,100,1023,5", 12);
        assert_string_equal(a, "0,2,4,6,8,\n10,12,14,\n100,1023,5");
        /* an item longer than the width stands alone */
        b = table_list_cell(&wrap, "1-1000000000000,3", 6);
        assert_string_equal(b, "1-1000000000000,\n3");
        /* short enough, or not for a terminal: as it is */
        c = table_list_cell(&wrap, "0-3", 12);
        assert_string_equal(c, "0-3");
        d = table_list_cell(&json, "0,2,4,6,8,10,12,14,100,1023,5", 12);
        assert_string_equal(d, "0,2,4,6,8,10,12,14,100,1023,5");
}

/* ---- hotplug devices, dax, CXL ------------------------------------------------------ */

/*
 * On the standard machine: a DIMM half online Movable, a DIMM with one
 * block in Normal (cannot be unplugged), virtio-mem from iomem, a dax
 * device onlined through kmem, a devdax device and an unbound one.
 */
static char *device_machine(void) {
        char *root = fake_tree_new();
        struct fake_dax kmem = { .region = 0, .id = 0, .driver = "kmem", .start = 48 * BLOCK, .size = 4 * BLOCK,
                                 .target_node = 2, .ns_uuid = "11111111-2222-3333-4444-555555555555" };
        struct fake_dax devdax = { .region = 1, .id = 0, .driver = "device_dax", .start = 0x1000000000ULL,
                                   .size = 2048 * MIB, .target_node = 2 };
        struct fake_dax unbound = { .region = 3, .id = 0, .start = 0x2000000000ULL, .size = 512 * MIB,
                                    .target_node = -1, .no_nd = true };

        fake_standard_machine(root);
        for (uint64_t b = 16; b < 20; b++)
                fake_add_block(root, b, 1, b < 18 ? "online" : "offline", b < 18 ? "Movable" : "Normal Movable");
        fake_add_acpi_dimm(root, "PNP0C80:00", 16, 4);
        for (uint64_t b = 20; b < 24; b++)
                fake_add_block(root, b, 1, "online", b == 20 ? "Normal" : "Movable");
        fake_add_acpi_dimm(root, "PNP0C80:01", 20, 4);
        /* virtio-mem: a 512M region at block 40, three blocks plugged */
        fake_symlink(root, "bus/virtio/devices/virtio0/driver", "../../../../bus/virtio/drivers/virtio_mem");
        fake_write(root, "proc/iomem", "140000000-15fffffff : virtio0\n  140000000-157ffffff : System RAM (virtio_mem)\n");
        for (uint64_t b = 40; b < 43; b++)
                fake_add_block(root, b, 1, b < 42 ? "online" : "offline", "Movable");
        free(fake_add_dax_device(root, &kmem));
        for (uint64_t b = 48; b < 52; b++)
                fake_add_block(root, b, 2, "online", "Movable");
        free(fake_add_dax_device(root, &devdax));
        free(fake_add_dax_device(root, &unbound));
        return root;
}

static void test_devices(void **state) {
        static const char *const left[] = { "DEVICE", "KIND", "NODES", "ZONES", "REMOVABLE", NULL };
        static const char *const right[] = { "ONLINE", "OFFLINE", "SIZE", NULL };
        _cleanup_free_ char *out = NULL, *row = NULL;
        char *root = device_machine();

        assert_int_equal(STATUS(root, &out, "-J"), 0);
        assert_jq(out, ".devices[] | [.device, .kind, .nodes, .zones, .blocks, .online_blocks, .offline_blocks, .size,"
                    " .range, .removable] | @csv",
                "\"PNP0C80:00\",\"dimm\",\"1\",\"Movable\",4,2,2,\"512M\",\"0x0000000080000000-0x000000009fffffff\",true\n"
                "\"PNP0C80:01\",\"dimm\",\"1\",\"Normal,Movable\",4,4,0,\"512M\",\"0x00000000a0000000-0x00000000bfffffff\",false\n"
                "\"virtio0\",\"virtio-mem\",\"1\",\"Movable\",3,2,1,\"384M\",\"0x0000000140000000-0x000000015fffffff\",true\n"
                "\"dax0.0\",\"dax\",\"2\",\"Movable\",4,4,0,\"512M\",\"0x0000000180000000-0x000000019fffffff\",true");
        assert_jq(out, ".dax[] | [.device, .mode, .state, .size, .node, .blocks, .online_blocks, .namespace, .region]"
                    " | @csv",
                  "\"dax0.0\",\"system-ram\",\"online\",\"512M\",2,4,4,\"namespace0.0\",\"region0\"\n"
                               "\"dax1.0\",\"devdax\",\"enabled\",\"2G\",2,0,0,\"namespace1.0\",\"region1\"\n"
                               "\"dax3.0\",\"unknown\",\"disabled\",\"512M\",,0,0,,");
        /* nothing under a CXL region; everything read */
        assert_jq(out, "[([.devices[].cxl_region] | unique), ([.dax[].memdevs] | unique), has(\"errors\")] | tostring",
                  "[[null],[null],false]");
        free(out);

        assert_int_equal(STATUS(root, &out, "--no-color"), 0);
        assert_non_null(strstr(out, "\nHotplug devices:\nDEVICE "));
        assert_aligned(out, "DEVICE     KIND", left, right, 4);
        row = line_with(out, "PNP0C80:01");
        {
                char dev[16], kind[16], nodes[8], zones[16], size[16], removable[8], region[16], memdevs[32];
                unsigned on, off;

                /* one block in Normal: cannot be unplugged */
                assert_int_equal(sscanf(row, "%15s %15s %7s %15s %u %u %15s %7s %15s %31s", dev, kind, nodes, zones,
                                        &on, &off, size, removable, region, memdevs), 10);
                assert_string_equal(zones, "Normal,Movable");
                assert_int_equal(on, 4);
                assert_int_equal(off, 0);
                assert_string_equal(removable, "no");
                assert_string_equal(region, "-");
                assert_string_equal(memdevs, "-");
        }
        assert_non_null(strstr(out, "\ndax devices:\nDEVICE "));
        fake_tree_free(root);
}

/*
 * dax devices with bad media: their row says whether memonlined keeps them
 * out (refused, or undecided while the list cannot be read) and how many
 * bad sectors their memory has; an allowed one is just offline.
 */
static void test_bad_media(void **state) {
        static const char *const bb2 = "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region2/badblocks";
        char *root = fake_tree_new();
        struct fake_dax kmem = { .region = 0, .id = 0, .driver = "kmem", .start = 48 * BLOCK, .size = 4 * BLOCK,
                                 .target_node = 2, .badblocks = "0 8\n1024 8\n" };
        struct fake_dax devdax = { .region = 1, .id = 0, .driver = "device_dax", .start = 0x1000000000ULL,
                                   .size = 2048 * MIB, .target_node = 2, .badblocks = "4096 16\n" };
        struct fake_dax unknown = { .region = 2, .id = 0, .driver = "kmem", .start = 56 * BLOCK, .size = 4 * BLOCK,
                                    .target_node = 2 };
        struct fake_dax allowed = { .region = 4, .id = 0, .driver = "kmem", .start = 64 * BLOCK, .size = 4 * BLOCK,
                                    .target_node = 2, .badblocks = "8 8\n" };
        _cleanup_free_ char *out = NULL, *conf = NULL;
        char *row;

        (void) state;
        fake_standard_machine(root);
        free(fake_add_dax_device(root, &kmem));
        free(fake_add_dax_device(root, &devdax));
        free(fake_add_dax_device(root, &unknown));
        free(fake_add_dax_device(root, &allowed));
        fake_unlink(root, bb2);
        fake_mkdir(root, bb2);
        fake_add_blocks(root, 48, 4, 2, "offline", "Movable Normal");
        fake_add_blocks(root, 56, 4, 2, "offline", "Movable Normal");
        fake_add_blocks(root, 64, 4, 2, "offline", "Movable Normal");
        fake_write(root, "bad.conf", "[pmem]\nconvert_devdax = yes\n[device ok]\nmatch_region = 4\n"
                                     "allow_badblocks = yes\n");
        assert_true(asprintf(&conf, "%s/bad.conf", root) > 0);

        assert_int_equal(run_status(root, &out, "--no-daemon", "--config", conf, "--rules-dir", root, "-J", NULL), 0);
        assert_jq(out, ".dax[] | [.device, .mode, .state, .badblocks] | @csv",
                  "\"dax0.0\",\"system-ram\",\"refused\",\"16\"\n"
                  "\"dax1.0\",\"devdax\",\"refused\",\"16\"\n"
                  "\"dax2.0\",\"system-ram\",\"undecided\",\"?\"\n"
                  "\"dax4.0\",\"system-ram\",\"offline\",\"8\"");
        free(out);
        out = NULL;

        assert_int_equal(run_status(root, &out, "--no-daemon", "--config", conf, "--rules-dir", root, "--no-color",
                                    "--tables", "dax", "-o", "dax:DEVICE,STATE,BADBLOCKS", NULL), 0);
        row = line_with(out, "dax0.0");
        assert_non_null(row);
        assert_non_null(strstr(row, "refused"));
        assert_non_null(strstr(row, " 16"));
        free(row);
        free(out);
        out = NULL;

        /* Without convert_devdax the devdax device is not memonlined's to refuse. */
        assert_int_equal(STATUS(root, &out, "-J"), 0);
        assert_jq(out, ".dax[] | select(.device == \"dax1.0\") | .state", "enabled");
        fake_tree_free(root);
}

/*
 * Two CXL regions in one window on CPU-less node 3, as in the 6.12 guest:
 * region0 on mem0, its blocks online; region1 interleaved over mem1 and
 * mem2, half of its blocks offline.
 */
static char *cxl_machine(void) {
        static const int mem0[] = { 0 }, mem12[] = { 1, 2 };
        struct fake_cxl_region r0 = { .region = 0, .root_decoder = 0, .start = 0x2490000000ULL, .size = 512 * MIB,
                                      .target_node = 3, .driver = "kmem", .memdevs = mem0, .n_memdevs = 1,
                                      .memmap_on_memory = -1 };
        struct fake_cxl_region r1 = { .region = 1, .root_decoder = 0, .start = 0x24b0000000ULL, .size = 512 * MIB,
                                      .target_node = 3, .driver = "kmem", .memdevs = mem12, .n_memdevs = 2,
                                      .memmap_on_memory = -1 };
        char *root = fake_tree_new();

        fake_standard_machine(root);
        fake_write(root, "devices/system/node/online", "0-3\n");
        fake_add_node(root, 3, "", "20 20 30 10");
        free(fake_add_cxl_region(root, &r0));
        free(fake_add_cxl_region(root, &r1));
        /* region0: blocks 1170-1173, online; region1: 1174-1177, two offline */
        for (uint64_t b = 1170; b < 1178; b++)
                fake_add_block(root, b, 3, b < 1176 ? "online" : "offline", b < 1176 ? "Movable" : "Movable Normal");
        return root;
}

static void test_cxl(void **state) {
        _cleanup_free_ char *out = NULL, *r0 = NULL, *r1 = NULL;
        char *root = cxl_machine();

        assert_int_equal(STATUS(root, &out, "-J"), 0);
        /* the hotplug devices: each region's dax device, with the region and its memdevs */
        assert_jq(out, ".devices[] | [.device, .kind, .nodes, .zones, .online_blocks, .offline_blocks, .size,"
                    " .removable, .cxl_region, .memdevs] | @csv",
                  "\"dax0.0\",\"dax\",\"3\",\"Movable\",4,0,\"512M\",true,\"region0\",\"mem0\"\n"
                  "\"dax1.0\",\"dax\",\"3\",\"Movable\",2,2,\"512M\",true,\"region1\",\"mem1,mem2\"");
        assert_jq(out, ".dax[] | [.device, .mode, .state, .node, .blocks, .online_blocks, .cxl_region, .decoder,"
                    " .memdevs] | @csv",
                  "\"dax0.0\",\"system-ram\",\"online\",3,4,4,\"region0\",\"decoder0.0\",\"mem0\"\n"
                  "\"dax1.0\",\"system-ram\",\"partial\",3,4,2,\"region1\",\"decoder0.0\",\"mem1,mem2\"");
        /* the CPU-less CXL node is written from its nearest node with CPUs */
        assert_jq(out, "[.nodes[] | select(.node == 3) | .writer_node, .cpuless, .offline_blocks] | @csv",
                  "0,true,2");
        free(out);

        /* a memdev whose endpoint decoder cannot be followed is unknown, not guessed */
        fake_unlink(root, "bus/cxl/devices/decoder4.1");
        assert_int_equal(STATUS(root, &out, "--no-color", "--tables", "devices"), 0);
        assert_non_null(strstr(out, "Hotplug devices:\nDEVICE "));
        r0 = line_with(out, "dax0.0 ");
        r1 = line_with(out, "dax1.0 ");
        {
                char dev[16], kind[16], nodes[8], zones[16], size[16], removable[8], region[16], memdevs[32];
                unsigned on, off;

                assert_int_equal(sscanf(r0, "%15s %15s %7s %15s %u %u %15s %7s %15s %31s", dev, kind, nodes, zones,
                                        &on, &off, size, removable, region, memdevs), 10);
                assert_string_equal(region, "region0");
                assert_string_equal(memdevs, "mem0");
                assert_int_equal(sscanf(r1, "%15s %15s %7s %15s %u %u %15s %7s %15s %31s", dev, kind, nodes, zones,
                                        &on, &off, size, removable, region, memdevs), 10);
                assert_int_equal(on, 2);
                assert_int_equal(off, 2);
                assert_string_equal(region, "region1");
                assert_string_equal(memdevs, "mem1,?");
        }
        fake_tree_free(root);
}

/*
 * Every CXL region, also one with no dax device yet and one not committed;
 * a region link that leaves the kernel's layout is counted, not listed,
 * and makes the output partial.
 */
static void test_cxl_regions(void **state) {
        static const int mem3[] = { 3 }, mem4[] = { 4 };
        struct fake_cxl_region r2 = { .region = 2, .root_decoder = 0, .start = 0x24d0000000ULL, .size = 256 * MIB,
                                      .target_node = 3, .memdevs = mem3, .n_memdevs = 1, .memmap_on_memory = -1,
                                      .no_dax = true };
        struct fake_cxl_region r3 = { .region = 3, .root_decoder = 1, .start = 0x24e0000000ULL, .size = 256 * MIB,
                                      .target_node = 3, .memdevs = mem4, .n_memdevs = 1, .memmap_on_memory = -1,
                                      .no_dax = true, .uncommitted = true };
        _cleanup_free_ char *out = NULL, *row = NULL;
        char *root = cxl_machine();

        (void) state;
        assert_null(fake_add_cxl_region(root, &r2));
        assert_null(fake_add_cxl_region(root, &r3));
        assert_int_equal(STATUS(root, &out, "-J"), 0);
        assert_jq(out, ".cxl[] | [.region, .mode, .state, .size, .decoder, .memdevs, .dax] | @csv",
                  "\"region0\",\"ram\",\"online\",\"512M\",\"decoder0.0\",\"mem0\",\"dax0.0\"\n"
                  "\"region1\",\"ram\",\"partial\",\"512M\",\"decoder0.0\",\"mem1,mem2\",\"dax1.0\"\n"
                  "\"region2\",\"ram\",\"no dax device\",\"256M\",\"decoder0.0\",\"mem3\",\n"
                  "\"region3\",\"ram\",\"uncommitted\",\"256M\",\"decoder0.1\",\"mem4\",");
        assert_jq(out, "[.cxl[] | .range] | .[2]", "0x00000024d0000000-0x00000024dfffffff");
        assert_jq(out, "has(\"errors\")", "false");
        free(out);

        /* text: titled, one row per region */
        assert_int_equal(STATUS(root, &out, "--no-color", "--tables", "cxl"), 0);
        assert_non_null(strstr(out, "CXL regions:\nREGION "));
        row = line_with(out, "region2 ");
        assert_non_null(row);
        assert_non_null(strstr(row, "no dax device"));
        free(out);

        /* hostile: a region link out of the layout, named as another region */
        fake_write(root, "devices/platform/elsewhere/region7/size", "0x10000000\n");
        fake_symlink(root, "bus/cxl/devices/region7", "../../../devices/platform/elsewhere/region7");
        fake_symlink(root, "bus/cxl/devices/region8", "../../../devices/platform/ACPI0017:00/root0/decoder0.0/region2");
        assert_int_equal(STATUS(root, &out, "-J", "--tables", "cxl"), STATUS_EXIT_PARTIAL);
        assert_jq(out, "[.cxl[] | .region] | join(\",\")", "region0,region1,region2,region3");
        assert_jq(out, ".errors.cxl_unreadable != null", "true");
        free(out);
        assert_int_equal(STATUS(root, &out, "--no-color", "--tables", "cxl"), STATUS_EXIT_PARTIAL);
        assert_non_null(strstr(out, "2 CXL regions could not be read"));
        fake_tree_free(root);
}

/*
 * CXL memdevs as `cxl list -M` lists them: each with the regions it is
 * in; one in no region, with a pmem partition, on node 1 and unbound; one
 * whose link leaves the layout is counted, not listed.
 */
static void test_memdevs(void **state) {
        _cleanup_free_ char *out = NULL, *row = NULL;
        char *root = cxl_machine();
        const char *mem5 = "devices/pci0000:0c/0000:0c:00.0/0000:0d:05.0/mem5";
        char rel[256];

        (void) state;
        snprintf(rel, sizeof(rel), "%s/pmem/size", mem5);
        fake_write(root, rel, "0x40000000\n");
        snprintf(rel, sizeof(rel), "%s/numa_node", mem5);
        fake_write(root, rel, "1\n");
        snprintf(rel, sizeof(rel), "../../../%s", mem5);
        fake_symlink(root, "bus/cxl/devices/mem5", rel);
        assert_int_equal(STATUS(root, &out, "-J", "-b", "--tables", "memdevs"), 0);
        assert_jq(out, ".memdevs[] | [.memdev, .state, .ram_size, .pmem_size, .numa_node, .serial, .host, .regions]"
                    " | @csv",
                  "\"mem0\",\"enabled\",536870912,0,,0,\"0000:0d:00.0\",\"region0\"\n"
                  "\"mem1\",\"enabled\",536870912,0,,1,\"0000:0d:01.0\",\"region1\"\n"
                  "\"mem2\",\"enabled\",536870912,0,,2,\"0000:0d:02.0\",\"region1\"\n"
                  "\"mem5\",\"disabled\",0,1073741824,1,,\"0000:0d:05.0\",");
        free(out);

        assert_int_equal(STATUS(root, &out, "--no-color"), 0);
        assert_non_null(strstr(out, "\nCXL memdevs:\nMEMDEV "));
        row = line_with(out, "mem5 ");
        assert_non_null(row);
        assert_non_null(strstr(row, " disabled "));
        free(out);

        /* hostile: a memdev link to a directory of another name */
        fake_symlink(root, "bus/cxl/devices/mem7", "../../../devices/pci0000:0c/0000:0c:00.0/0000:0d:00.0/mem0");
        assert_int_equal(STATUS(root, &out, "-J", "--tables", "memdevs"), STATUS_EXIT_PARTIAL);
        assert_jq(out, "[([.memdevs[] | .memdev] | join(\",\")), (.errors | keys[])] | @csv",
                  "\"mem0,mem1,mem2,mem5\",\"memdevs_unreadable\"");
        free(out);
        assert_int_equal(STATUS(root, &out, "--no-color", "--tables", "memdevs"), STATUS_EXIT_PARTIAL);
        assert_non_null(strstr(out, "1 CXL memdev could not be read"));
        fake_tree_free(root);
}

/*
 * nvdimm regions and namespaces as `ndctl list -R -N -c` lists them, laid
 * out as the 6.1 guest has them: region0's devdax namespace (converted,
 * its dax device on kmem) next to the region's seed (size 0, idle: not
 * listed); an fsdax namespace on region1; a label-less raw one on
 * region2; on the disabled region3 a configured devdax namespace whose
 * claim is disabled (its size unknown, as ndctl has it).
 */
static char *nvdimm_machine(void) {
        struct fake_dax kmem = { .region = 0, .id = 0, .driver = "kmem", .start = 0x1902200000ULL,
                                 .size = 2111832064, .target_node = 2,
                                 .ns_uuid = "0305695d-39bb-4d89-b1e4-ec7e65e78b25",
                                 .dax_uuid = "c531245b-2d06-4111-86f2-91dd1c0eefaf" };
        struct fake_nd_namespace ns[] = {
                { .region = 0, .id = 0, .region_size = 2048 * MIB, .target_node = 2, .mode = "dax",
                  .size = 2048 * MIB, .claim = "dax0.0", .claim_size = 2111832064, .enabled = true,
                  .uuid = "0305695d-39bb-4d89-b1e4-ec7e65e78b25", .claim_uuid = "c531245b-2d06-4111-86f2-91dd1c0eefaf" },
                { .region = 0, .id = 1, .region_size = 2048 * MIB, .target_node = 2, .mode = "raw" },
                { .region = 1, .id = 0, .region_size = 1024 * MIB, .target_node = 2, .mode = "memory",
                  .size = 1024 * MIB, .claim = "pfn1.0", .claim_size = 1006632960, .enabled = true,
                  .uuid = "aaaaaaaa-0000-0000-0000-000000000001", .claim_uuid = "bbbbbbbb-0000-0000-0000-000000000001" },
                { .region = 2, .id = 0, .region_size = 512 * MIB, .target_node = -1, .mode = "raw",
                  .size = 512 * MIB, .enabled = true },
                { .region = 3, .id = 0, .region_size = 1024 * MIB, .target_node = 2, .mode = "dax",
                  .size = 1024 * MIB, .claim = "dax3.1", .uuid = "cccccccc-0000-0000-0000-000000000003",
                  .claim_uuid = "dddddddd-0000-0000-0000-000000000003", .region_disabled = true },
        };
        char *root = fake_tree_new();

        fake_standard_machine(root);
        free(fake_add_dax_device(root, &kmem));
        for (size_t i = 0; i < ELEMENTSOF(ns); i++)
                fake_add_nd_namespace(root, &ns[i]);
        for (uint64_t b = 201; b < 216; b++)
                fake_add_block(root, b, 2, "online", "Movable");
        return root;
}

static void test_nvdimm(void **state) {
        _cleanup_free_ char *out = NULL, *row = NULL;
        char *root = nvdimm_machine();

        (void) state;
        assert_int_equal(STATUS(root, &out, "-J", "-b"), 0);
        assert_jq(out, ".nvdimm[] | [.region, .type, .state, .size, .node, .namespaces] | @csv",
                  "\"region0\",\"pmem\",\"enabled\",2147483648,2,\"namespace0.0\"\n"
                  "\"region1\",\"pmem\",\"enabled\",1073741824,2,\"namespace1.0\"\n"
                  "\"region2\",\"pmem\",\"enabled\",536870912,,\"namespace2.0\"\n"
                  "\"region3\",\"pmem\",\"disabled\",1073741824,2,\"namespace3.0\"");
        /* sizes and uuids are the claim's, where there is one: what ndctl shows */
        assert_jq(out, ".namespaces[] | [.namespace, .region, .mode, .state, .size, .node, .uuid, .dax] | @csv",
                  "\"namespace0.0\",\"region0\",\"devdax\",\"enabled\",2111832064,2,"
                  "\"c531245b-2d06-4111-86f2-91dd1c0eefaf\",\"dax0.0\"\n"
                  "\"namespace1.0\",\"region1\",\"fsdax\",\"enabled\",1006632960,2,"
                  "\"bbbbbbbb-0000-0000-0000-000000000001\",\n"
                  "\"namespace2.0\",\"region2\",\"raw\",\"enabled\",536870912,,,\n"
                  "\"namespace3.0\",\"region3\",\"devdax\",\"disabled\",,2,\"dddddddd-0000-0000-0000-000000000003\",");
        /* the dax table names the same namespace and region from the dax device's side */
        assert_jq(out, ".dax[] | [.device, .namespace, .region, .size, .node] | @csv",
                  "\"dax0.0\",\"namespace0.0\",\"region0\",2111832064,2");
        assert_jq(out, "has(\"errors\")", "false");
        free(out);

        /* text: both tables titled, the UUID only when asked for */
        assert_int_equal(STATUS(root, &out, "--no-color"), 0);
        assert_non_null(strstr(out, "\nnvdimm regions:\nREGION "));
        assert_non_null(strstr(out, "\nnvdimm namespaces:\nNAMESPACE "));
        assert_null(strstr(out, "c531245b"));
        row = line_with(out, "namespace3.0 ");
        assert_non_null(row);
        assert_non_null(strstr(row, " disabled "));
        free(out);
        assert_int_equal(STATUS(root, &out, "-r", "--tables", "namespaces", "-o", "namespaces:namespace,uuid"), 0);
        assert_string_equal(out, "NAMESPACE UUID\nnamespace0.0 c531245b-2d06-4111-86f2-91dd1c0eefaf\n"
                                 "namespace1.0 bbbbbbbb-0000-0000-0000-000000000001\nnamespace2.0 -\n"
                                 "namespace3.0 dddddddd-0000-0000-0000-000000000003\n");
        free(out);

        /* hostile: a holder naming another region's claim, a region link out of the nd layout */
        fake_write(root, "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region1/namespace1.0/holder", "pfn0.0\n");
        fake_write(root, "devices/platform/elsewhere/region9/size", "1024\n");
        fake_symlink(root, "bus/nd/devices/region9", "../../../devices/platform/elsewhere/region9");
        assert_int_equal(STATUS(root, &out, "-J", "--tables", "nvdimm,namespaces"), STATUS_EXIT_PARTIAL);
        assert_jq(out, "[([.nvdimm[] | .region] | join(\",\")), ([.namespaces[] | .namespace] | join(\",\")),"
                    " (.errors | keys[])] | @csv",
                  "\"region0,region1,region2,region3\",\"namespace0.0,namespace2.0,namespace3.0\",\"nvdimm_unreadable\"");
        free(out);
        assert_int_equal(STATUS(root, &out, "--no-color", "--tables", "nvdimm,namespaces"), STATUS_EXIT_PARTIAL);
        assert_non_null(strstr(out, "2 nvdimm regions or namespaces could not be read"));
        free(out);
        /* a table not shown does not make the output partial */
        assert_int_equal(STATUS(root, &out, "--tables", "nodes"), 0);
        fake_tree_free(root);
}

/* ---- the running batch ------------------------------------------------------------- */

static void test_batch_parse(void **state) {
        static const char good[] = "STATUS=onlining node 1: 320/512 blocks, 40.0/64.0 GiB, 3.1 GiB/s\n"
                                   "TRIGGER=udev\nNODE=1\nBLOCKS_DONE=320\nBLOCKS_TOTAL=512\n"
                                   "BLOCK_SIZE=134217728\nELAPSED_USEC=12900000\n";
        static const char mixed[] = "junk\nNODE=-7\nBLOCKS_DONE=1x\nX=1\nBLOCKS_TOTAL=18446744073709551616\n"
                                    "STATUS=ok\nBLOCK_SIZE=0x10\nTRIGGER=dax0.0";
        static const char nul[] = "STATUS=a\0b\nBLOCKS_TOTAL=3\n";
        struct status_batch b = { .node = NODE_NONE };
        char long_value[320];

        assert_int_equal(status_batch_parse(good, strlen(good), &b), 0);
        assert_string_equal(b.status, "onlining node 1: 320/512 blocks, 40.0/64.0 GiB, 3.1 GiB/s");
        assert_string_equal(b.trigger, "udev");
        assert_int_equal(b.node, 1);
        assert_int_equal(b.blocks_done, 320);
        assert_int_equal(b.blocks_total, 512);
        assert_int_equal(b.block_size, 134217728);
        assert_int_equal(b.elapsed_usec, 12900000);
        status_batch_done(&b);

        /* bad numbers, unknown keys, lines without "=", no final newline: what is good stays */
        assert_int_equal(status_batch_parse(mixed, sizeof(mixed) - 1, &b), 0);
        assert_string_equal(b.status, "ok");
        assert_string_equal(b.trigger, "dax0.0");
        assert_int_equal(b.node, NODE_NONE);
        assert_int_equal(b.blocks_done, 0);
        assert_int_equal(b.blocks_total, 0);
        assert_int_equal(b.block_size, 0);
        status_batch_done(&b);

        /* a NUL inside, or a value longer than any the daemon writes, is left out */
        assert_int_equal(status_batch_parse(nul, sizeof(nul) - 1, &b), 0);
        assert_null(b.status);
        assert_int_equal(b.blocks_total, 3);
        status_batch_done(&b);
        strcpy(long_value, "STATUS=");
        memset(long_value + 7, 'x', 300);
        long_value[307] = '\0';
        assert_int_equal(status_batch_parse(long_value, strlen(long_value), &b), -EINVAL);
        assert_int_equal(status_batch_parse("", 0, &b), -EINVAL);
        assert_int_equal(status_batch_parse("NODE=1\n", 7, &b), -EINVAL);
        assert_null(b.status);
}

static void test_batch(void **state) {
        _cleanup_free_ char *out = NULL, *dir = NULL, *line = NULL, *big = NULL, *fifo = NULL;
        char *root = status_machine();

        assert_true(asprintf(&dir, "%s/run", root) > 0);
        setenv("MEMONLINED_RUNTIME_DIR", dir, 1);

        /* no runtime directory, or no file in it: no batch runs */
        assert_int_equal(STATUS(root, &out, "--no-color"), 0);
        assert_non_null(strstr(out, "running batch: none\n"));
        free(out);
        fake_mkdir(root, "run");
        assert_int_equal(STATUS(root, &out, "-J"), 0);
        assert_jq(out, ".batch",
                  "null");
        free(out);

        fake_write(root, "run/progress", "STATUS=onlining node 2: 3/6 blocks, 0.4/0.8 GiB, 1.5 GiB/s\n"
                                         "TRIGGER=udev\nNODE=2\nBLOCKS_DONE=3\nBLOCKS_TOTAL=6\n"
                                         "BLOCK_SIZE=134217728\nELAPSED_USEC=250000\n");
        assert_int_equal(STATUS(root, &out, "--no-color"), 0);
        line = line_with(out, "running batch: ");
        assert_true(startswith(line, "running batch: onlining node 2: 3/6 blocks, 0.4/0.8 GiB, 1.5 GiB/s "
                                     "(trigger udev, running 0.3 s, updated "));
        free(out);
        assert_int_equal(STATUS(root, &out, "-J"), 0);
        assert_jq(out, ".batch | [.status, .trigger, .node, .blocks_done, .blocks_total, .block_size, .elapsed_usec,"
                    " (.age_usec | type)] | @csv",
                  "\"onlining node 2: 3/6 blocks, 0.4/0.8 GiB, 1.5 GiB/s\",\"udev\",2,3,6,134217728,"
                               "250000,\"number\"");
        free(out);

        /* hostile: terminal escapes in the text, escaped in text, intact in JSON */
        fake_write(root, "run/progress", "STATUS=\033]0;owned\007onlining\033[2J\nTRIGGER=x\r\nBLOCKS_TOTAL=1\n");
        assert_int_equal(STATUS(root, &out, "--no-color"), 0);
        assert_null(strchr(out, '\033'));
        assert_null(strchr(out, '\007'));
        assert_non_null(strstr(out, "running batch: \\x1b]0;owned\\x07onlining\\x1b[2J (trigger x\\x0d,"));
        free(out);
        assert_int_equal(STATUS(root, &out, "-J"), 0);
        assert_jq(out, ".batch.status == \"\\u001b]0;owned\\u0007onlining\\u001b[2J\"",
                  "true");
        free(out);

        /* too long, or nothing usable: said, and the output is partial (64) */
        big = malloc(STATUS_PROGRESS_MAX + 2);
        assert_non_null(big);
        memset(big, 'A', STATUS_PROGRESS_MAX + 1);
        big[STATUS_PROGRESS_MAX + 1] = '\0';
        fake_write(root, "run/progress", "%s", big);
        assert_int_equal(STATUS(root, &out, "--no-color"), 64);
        assert_non_null(strstr(out, "running batch: unknown ("));
        assert_non_null(strstr(out, "/progress: File too large)\n"));
        free(out);
        assert_int_equal(STATUS(root, &out, "-J"), 64);
        assert_jq(out, "[.batch, .errors.batch] | @csv",
                  ",\"File too large\"");
        free(out);

        /* the tables alone do not need it */
        assert_int_equal(STATUS(root, &out, "--tables", "nodes"), 0);
        free(out);
        assert_int_equal(STATUS(root, &out, "-r"), 0);
        free(out);

        /* a FIFO in its place does not hang status */
        fake_unlink(root, "run/progress");
        assert_true(asprintf(&fifo, "%s/run/progress", root) > 0);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        assert_int_equal(STATUS(root, &out, "--no-color"), 64);
        assert_non_null(strstr(out, "running batch: unknown ("));
        unlink(fifo);
        setenv("MEMONLINED_RUNTIME_DIR", "/nonexistent/memonlined-run", 1);
        fake_tree_free(root);
}

/* ---- options, colour, hostile names ----------------------------------------------------- */

static void test_options(void **state) {
        _cleanup_free_ char *out = NULL;
        char *root = device_machine();

        /* -o per table; names are case-insensitive; --tables keeps only those */
        assert_int_equal(STATUS(root, &out, "-J", "-o", "node,offline", "-o", "devices:device,removable",
                                "--tables", "nodes,devices"), 0);
        assert_jq(out, "[(.nodes[0] | keys_unsorted), (.devices[0] | keys_unsorted), has(\"dax\"), has(\"daemon\")]"
                    " | tostring",
                  "[[\"node\",\"offline_blocks\"],[\"device\",\"removable\"],false,false]");
        free(out);
        /* +LIST adds to the defaults */
        assert_int_equal(STATUS(root, &out, "-r", "-o", "dax:+BLOCKS", "--tables", "dax"), 0);
        assert_true(startswith(out, "DEVICE MODE STATE SIZE NODE ONLINE BLOCKS NAMESPACE REGION BADBLOCKS CXL-REGION "
                                    "MEMDEVS BLOCKS\n"
                                    "dax0.0 system-ram online 512M 2 4 4 namespace0.0 region0 0 - - 4\n"));
        free(out);

        /* -r: the tables only, an empty line between them, no titles */
        assert_int_equal(STATUS(root, &out, "-r", "-n"), 0);
        assert_true(startswith(out, "0 0-3 8 0 1G 0B 0B 0 0\n"));
        assert_non_null(strstr(out, "\n\nPNP0C80:00 dimm 1 Movable 2 2 512M yes - -\n"));
        assert_null(strstr(out, "Kernel policy"));
        assert_null(strstr(out, "daemon:"));
        free(out);

        /* -n: no headings, no totals */
        assert_int_equal(STATUS(root, &out, "-n", "--no-color"), 0);
        assert_null(strstr(out, "NODE "));
        assert_null(strstr(out, " blocks, "));
        assert_non_null(strstr(out, "Kernel policy:"));
        free(out);

        /* usage errors: 2 */
        assert_int_equal(STATUS(root, &out, "-o", "BOGUS"), 2);
        free(out);
        assert_int_equal(STATUS(root, &out, "-o", "bogus:NODE"), 2);
        free(out);
        assert_int_equal(STATUS(root, &out, "-o", "dax:NODE,"), 2);
        free(out);
        assert_int_equal(STATUS(root, &out, "--tables", "nodes,x"), 2);
        free(out);
        assert_int_equal(STATUS(root, &out, "-J", "-r"), 2);
        free(out);
        assert_int_equal(STATUS(root, &out, "extra"), 2);
        free(out);
        assert_int_equal(run_status(root, &out, "--bogus", NULL), 2);
        free(out);
        /* failures: 1 */
        assert_int_equal(run_status("/nonexistent/memonline-root", &out, "--no-daemon", NULL), 1);
        free(out);
        /* --sysfs-root wins over the root the caller passes */
        assert_int_equal(run_status("/nonexistent/memonline-root", &out, "--sysfs-root", root, "--no-daemon", "-J",
                                    "--config", empty_config(root), "--rules-dir", root, NULL), 0);
        assert_jq(out, ".nodes[1].offline_blocks",
                  "3");
        fake_tree_free(root);
}

static void test_colors(void **state) {
        _cleanup_free_ char *out = NULL;
        char *root = device_machine();

        setenv("SYSTEMD_COLORS", "1", 1);
        assert_int_equal(STATUS(root, &out, "-b"), 0);
        /* bold headings, offline counts in yellow */
        assert_non_null(strstr(out, "\033[1m"));
        assert_non_null(strstr(out, "33m      2\033[0m"));
        free(out);
        assert_int_equal(STATUS(root, &out, "--no-color"), 0);
        assert_null(strchr(out, '\033'));
        free(out);
        assert_int_equal(STATUS(root, &out, "-J"), 0);
        assert_null(strchr(out, '\033'));
        free(out);
        setenv("SYSTEMD_COLORS", "0", 1);
        assert_int_equal(STATUS(root, &out, "-b"), 0);
        assert_null(strchr(out, '\033'));
        free(out);
        unsetenv("SYSTEMD_COLORS");

        /* not a terminal: no colour */
        assert_int_equal(STATUS(root, &out, "-b"), 0);
        assert_null(strchr(out, '\033'));
        free(out);
        /* a terminal: colour, unless NO_COLOR, TERM=dumb or --no-color */
        setenv("TERM", "xterm", 1);
        assert_int_equal(run_status_tty(root, &out, NULL), 0);
        assert_non_null(strstr(out, "\033[1mMemory blocks per node"));
        free(out);
        assert_int_equal(run_status_tty(root, &out, "--no-color"), 0);
        assert_non_null(strstr(out, "Memory blocks per node"));
        assert_null(strchr(out, '\033'));
        free(out);
        setenv("NO_COLOR", "1", 1);
        assert_int_equal(run_status_tty(root, &out, NULL), 0);
        assert_non_null(strstr(out, "Memory blocks per node"));
        assert_null(strchr(out, '\033'));
        free(out);
        unsetenv("NO_COLOR");
        setenv("TERM", "dumb", 1);
        assert_int_equal(run_status_tty(root, &out, NULL), 0);
        assert_non_null(strstr(out, "Memory blocks per node"));
        assert_null(strchr(out, '\033'));
        unsetenv("TERM");
        fake_tree_free(root);
}

/* --prometheus: the daemon's metrics as sysfs shows them, every kind of device, without the daemon's counters. */
static void test_prometheus(void **state) {
        static const char *const want[] = {
                "\nmemonlined_blocks_offline{node=\"1\"} 3\n",
                "\nmemonlined_blocks_offline{node=\"2\"} 0\n",
                "\nmemonlined_blocks_online{node=\"1\"} 16\n",
                "\nmemonlined_blocks_online{node=\"2\"} 4\n",
                "\nmemonlined_memory_online_bytes{node=\"1\",zone=\"movable\"} 939524096\n",
                "\nmemonlined_memory_online_bytes{node=\"1\",zone=\"kernel\"} 1207959552\n",
                "\nmemonlined_memory_offline_bytes{node=\"1\"} 402653184\n",
                "\nmemonlined_device_blocks_offline{kind=\"dimm\",device=\"PNP0C80:00\"} 2\n",
                "\nmemonlined_device_blocks_online{kind=\"dimm\",device=\"PNP0C80:01\"} 4\n",
                "\nmemonlined_device_blocks_offline{kind=\"virtio-mem\",device=\"virtio0\"} 1\n",
                "\nmemonlined_device_blocks_online{kind=\"dax\",device=\"dax0.0\"} 4\n",
                "\nmemonlined_auto_online_blocks{value=\"offline\"} 1\n",
                "\nmemonlined_auto_online_taken_over 0\n",
        };
        _cleanup_free_ char *out = NULL, *run = NULL, *bad = NULL;
        char *root = device_machine();

        assert_int_equal(STATUS(root, &out, "--prometheus"), 0);
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                if (!strstr(out, want[i]))
                        fail_msg("no \"%s\" in:\n%s", want[i], out);
        /* the daemon's own, since its start: not status's to show */
        assert_null(strstr(out, "_total"));
        assert_null(strstr(out, "memonlined_start_time_seconds"));
        free(out);

        /* the daemon holds auto_online_blocks while its saved value is in the runtime directory */
        fake_write(root, "run/auto_online_blocks", "online\n");
        assert_true(asprintf(&run, "%s/run", root) > 0);
        setenv("MEMONLINED_RUNTIME_DIR", run, 1);
        assert_int_equal(STATUS(root, &out, "--prometheus"), 0);
        setenv("MEMONLINED_RUNTIME_DIR", "/nonexistent/memonlined-run", 1);
        assert_non_null(strstr(out, "\nmemonlined_auto_online_taken_over 1\n"));
        free(out);

        /* no policy is needed: a refused file changes nothing */
        fake_write(root, "bad.conf", "[daemon]\nworkers = many\n");
        assert_true(asprintf(&bad, "%s/bad.conf", root) > 0);
        assert_int_equal(run_status(root, &out, "--prometheus", "--config", bad, NULL), 0);
        assert_non_null(strstr(out, "\nmemonlined_blocks_offline{node=\"1\"} 3\n"));
        free(out);
        assert_int_equal(STATUS(root, &out, "--prometheus", "-J"), 2);
        free(out);
        assert_int_equal(STATUS(root, &out, "-r", "--prometheus"), 2);
        free(out);
        out = NULL;
        fake_tree_free(root);
}

/* Exit statuses: 3 for a refused policy file and 64 for what could not be read, the output shown in both. */
static void test_exit_status(void **state) {
        _cleanup_free_ char *out = NULL, *bad = NULL, *missing = NULL, *err = NULL;
        char *root = device_machine();

        assert_true(asprintf(&bad, "%s/bad.conf", root) > 0);
        assert_true(asprintf(&missing, "%s/missing.conf", root) > 0);
        fake_write(root, "bad.conf", "[daemon]\nworkers = many\n");
        assert_int_equal(run_status(root, &out, "--no-daemon", "--rules-dir", root, "--no-color", "--config", bad,
                                    NULL), 3);
        err = line_with(out, "Policy: ");
        assert_non_null(err);
        assert_non_null(strstr(err, "bad.conf:2: "));
        assert_non_null(strstr(err, "(using built-in defaults)"));
        /* planned with the defaults: one writer per node */
        assert_non_null(strstr(out, "Memory blocks per node"));
        free(out);
        assert_int_equal(run_status(root, &out, "--no-daemon", "--rules-dir", root, "-J", "--config", bad, NULL), 3);
        assert_jq(out, "[(.policy_warning | test(\"bad.conf:2: \")), ([.nodes[].writer_cpus] | length)] | @csv",
                  "true,3");
        free(out);
        /* a file named with --config that is not there is refused, as the daemon refuses it */
        assert_int_equal(run_status(root, &out, "--no-daemon", "--rules-dir", root, "-J", "--config", missing, NULL),
                         3);
        assert_jq(out, ".policy_warning | test(\"missing.conf: \")",
                  "true");
        free(out);

        /* the kernel's policy unreadable: shown as unknown, 64 */
        fake_unlink(root, "devices/system/memory/auto_online_blocks");
        fake_mkdir(root, "devices/system/memory/auto_online_blocks");
        assert_int_equal(STATUS(root, &out, "--no-color"), 64);
        assert_non_null(strstr(out, "Kernel policy:\n  unknown ("));
        free(out);
        /* the check for competing onliners reads it too */
        assert_int_equal(STATUS(root, &out, "-J"), 64);
        assert_jq(out, "[.errors | keys[]] | @csv",
                  "\"conflicts\",\"kernel\"");
        free(out);
        /* only the tables asked for: what they need was read */
        assert_int_equal(STATUS(root, &out, "--tables", "nodes,devices"), 0);
        free(out);

        /* a dax device that cannot be read: its blocks are in no row, and the output says so */
        fake_rmdir(root, "devices/system/memory/auto_online_blocks");
        fake_write(root, "devices/system/memory/auto_online_blocks", "offline\n");
        fake_unlink(root, "bus/dax/devices/dax1.0");
        fake_symlink(root, "bus/dax/devices/dax1.0", "/");        /* leaves the root */
        assert_int_equal(STATUS(root, &out, "--no-color", "--tables", "dax"), 64);
        assert_non_null(strstr(out, "1 dax device could not be read (dax1.0: "));
        free(out);
        assert_int_equal(STATUS(root, &out, "-J", "--tables", "dax"), 64);
        assert_jq(out, "[(.dax | map(.device) | join(\",\")), (.errors | keys[])] | @csv",
                  "\"dax0.0,dax3.0\",\"dax_unreadable\"");
        free(out);
        assert_int_equal(STATUS(root, &out, "--tables", "nodes"), 0);
        fake_tree_free(root);
}

/* Names and values from sysfs and udev rules that try to drive the terminal or forge lines. */
static void test_hostile_names(void **state) {
        static const char evil[] = "PNP0C80:\033]0;owned\007\n\033[31mX";
        _cleanup_free_ char *out = NULL, *rules = NULL;
        char *root = status_machine();

        fake_add_acpi_dimm(root, evil, 16, 4);
        fake_write(root, "module/memory_hotplug/parameters/online_policy", "auto\033[2Jmovable\n");
        /* a competing rule in a file whose name carries an escape */
        fake_write(root, "rules/40-\033[1mhot.rules",
                   "SUBSYSTEM==\"memory\", ACTION==\"add\", ATTR{state}=\"online\"\n");
        assert_true(asprintf(&rules, "%s/rules", root) > 0);
        assert_int_equal(run_status(root, &out, "--no-daemon", "--config", empty_config(root), "--rules-dir", rules,
                                    "--no-color", NULL), 0);
        assert_null(strchr(out, '\033'));
        assert_null(strchr(out, '\007'));
        assert_non_null(strstr(out, "PNP0C80:\\x1b]0;owned\\x07\\x0a\\x1b[31mX dimm "));
        assert_non_null(strstr(out, "online_policy       auto\\x1b[2Jmovable\n"));
        assert_non_null(strstr(out, "40-\\x1b[1mhot.rules:1"));
        free(out);
        assert_int_equal(STATUS(root, &out, "-r"), 0);
        assert_null(strchr(out, '\033'));
        free(out);
        assert_int_equal(STATUS(root, &out, "--prometheus"), 0);
        assert_null(strchr(out, '\033'));
        assert_null(strchr(out, '\007'));
        assert_non_null(strstr(out, "\nmemonlined_device_blocks_offline{kind=\"dimm\",device=\"PNP0C80:"
                                    "\\\\x1b]0;owned\\\\x07\\\\x0a\\\\x1b[31mX\"} "));
        free(out);
        assert_int_equal(run_status(root, &out, "--no-daemon", "--config", empty_config(root), "--rules-dir", rules,
                                    "-J", NULL), 0);
        assert_null(strchr(out, '\033'));
        assert_jq(out, "[.devices[0].device == \"PNP0C80:\\u001b]0;owned\\u0007\\n\\u001b[31mX\", "
                    ".kernel.online_policy == \"auto\\u001b[2Jmovable\", "
                    "(.conflicts | map(.where) | any(test(\"40-\\u001b\\\\[1mhot.rules:1\")))] | @csv",
                  "true,true,true");
        fake_tree_free(root);
}

/*
 * Every output mode of status, in a UTF-8 and a C locale, with HOSTILE_TEXT
 * in a device's name, kernel settings, a rules file's name and the running
 * batch: nothing unsafe comes out raw (in the C locale, and raw, nothing
 * but ASCII), and JSON gives the name back with U+FFFD for what is no UTF-8.
 */
static void test_hostile_every_mode(void **state) {
        static const char *const modes[] = { "--no-color", "-r", "-J" };
        static const char *const locales[] = { "C.UTF-8", "C" };
        _cleanup_free_ char *rules = NULL, *run = NULL;
        char *saved = env_set("LC_ALL", "C"), *root = status_machine();

        fake_add_acpi_dimm(root, "PNP0C80:" HOSTILE_TEXT, 16, 4);
        fake_write(root, "module/memory_hotplug/parameters/online_policy", "%s\n", HOSTILE_TEXT);
        fake_write(root, "devices/system/memory/auto_online_blocks", "%s\n", HOSTILE_TEXT);
        fake_write(root, "rules/40-" HOSTILE_TEXT ".rules",
                   "SUBSYSTEM==\"memory\", ACTION==\"add\", ATTR{state}=\"online\"\n");
        /* the progress file is lines of KEY=value: no C0 in a value */
        fake_write(root, "run/progress", "STATUS=%s\nTRIGGER=%s\nBLOCKS_TOTAL=1\n",
                   HOSTILE_C1 HOSTILE_BIDI HOSTILE_INVALID, HOSTILE_BIDI "x" HOSTILE_INVALID);
        assert_true(asprintf(&rules, "%s/rules", root) > 0);
        assert_true(asprintf(&run, "%s/run", root) > 0);
        setenv("MEMONLINED_RUNTIME_DIR", run, 1);
        for (size_t l = 0; l < ELEMENTSOF(locales); l++) {
                setenv("LC_ALL", locales[l], 1);
                for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                        _cleanup_free_ char *out = NULL, *label = NULL;

                        assert_int_equal(run_status(root, &out, "--no-daemon", "--config", empty_config(root),
                                                    "--rules-dir", rules, modes[m], NULL), 0);
                        assert_true(asprintf(&label, "status %s %s", locales[l], modes[m]) > 0);
                        assert_inert_text(label, out, l > 0 || streq(modes[m], "-r"));
                        /* the hostile texts were read and shown, not dropped */
                        if (streq(modes[m], "--no-color"))
                                assert_non_null(strstr(out, "running batch: \\xc2\\x80"));
                }
        }
        {
                _cleanup_free_ char *out = NULL, *got = NULL;

                setenv("LC_ALL", "C.UTF-8", 1);
                assert_int_equal(run_status(root, &out, "--no-daemon", "--config", empty_config(root), "--rules-dir",
                                            rules, "-J", NULL), 0);
                got = jq(out, ".devices[] | select(.device | startswith(\"PNP0C80:h\")) | .device");
                assert_string_equal(got, "PNP0C80:" HOSTILE_DECODED);
        }
        env_restore("LC_ALL", saved);
        setenv("MEMONLINED_RUNTIME_DIR", "/nonexistent/memonlined-run", 1);
        fake_tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_json),
                cmocka_unit_test(test_text),
                cmocka_unit_test(test_interleaved_cpus),
                cmocka_unit_test(test_wrap_lists),
                cmocka_unit_test(test_devices),
                cmocka_unit_test(test_bad_media),
                cmocka_unit_test(test_cxl),
                cmocka_unit_test(test_cxl_regions),
                cmocka_unit_test(test_memdevs),
                cmocka_unit_test(test_nvdimm),
                cmocka_unit_test(test_batch_parse),
                cmocka_unit_test(test_batch),
                cmocka_unit_test(test_options),
                cmocka_unit_test(test_colors),
                cmocka_unit_test(test_exit_status),
                cmocka_unit_test(test_prometheus),
                cmocka_unit_test(test_hostile_names),
                cmocka_unit_test(test_hostile_every_mode),
        };

        unsetenv("NO_COLOR");
        unsetenv("SYSTEMD_COLORS");
        /* no daemon's progress file from the host */
        setenv("MEMONLINED_RUNTIME_DIR", "/nonexistent/memonlined-run", 1);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
