/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CXL attribution of dax devices on fake trees laid out as Debian 13's 6.12 kernel does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake-tree.h"
#include "pmem.h"
#include "pmem-decide.h"
#include "pmem-record.h"
#include "pmem-scan.h"
#include "report.h"
#include "rules.h"
#include "topology.h"
#include "util.h"

#define MiB (UINT64_C(1) << 20)
#define BS (128 * MiB)
/* Where the guest's CXL window puts region0 (tests/vm/README.md). */
#define REGION0_START UINT64_C(0x2490000000)

struct ctx {
        char *root;
        struct pmem_devices devs;
};

static int setup(void **state) {
        struct ctx *c = calloc(1, sizeof(*c));

        assert_non_null(c);
        c->root = fake_tree_new();
        fake_standard_machine(c->root);
        *state = c;
        return 0;
}

static int teardown(void **state) {
        struct ctx *c = *state;

        pmem_devices_clear(&c->devs);
        fake_tree_free(c->root);
        free(c);
        return 0;
}

static const int two_memdevs[] = { 0, 1 };
static const int memdev1[] = { 1 };

/* region0: 512 MiB interleaved over mem0 and mem1, kmem, node 2 (as create-region -w 2 would). */
static const struct fake_cxl_region region0 = {
        .region = 0, .root_decoder = 0, .start = REGION0_START, .size = 512 * MiB, .target_node = 2,
        .driver = "kmem", .memdevs = two_memdevs, .n_memdevs = 2, .memmap_on_memory = 1,
};
/* region1: the next 512 MiB of the same window, on mem1 only. */
static const struct fake_cxl_region region1 = {
        .region = 1, .root_decoder = 0, .start = REGION0_START + 512 * MiB, .size = 512 * MiB, .target_node = 2,
        .driver = "kmem", .memdevs = memdev1, .n_memdevs = 1, .memmap_on_memory = 1,
};

static void add_region(struct ctx *c, const struct fake_cxl_region *r) {
        free(fake_add_cxl_region(c->root, r));
}

/* A new tree with only region0, so that each hostile variant starts from a sound one. */
static void fresh_region0(struct ctx *c) {
        pmem_devices_clear(&c->devs);
        fake_tree_free(c->root);
        c->root = fake_tree_new();
        fake_standard_machine(c->root);
        add_region(c, &region0);
}

static const struct pmem_device *scan_find(struct ctx *c, const char *name) {
        const struct pmem_device *d;

        assert_true(pmem_scan(c->root, &c->devs) >= 1);
        assert_int_equal(c->devs.n_unreadable, 0);
        d = pmem_devices_find(&c->devs, name);
        assert_non_null(d);
        return d;
}

/* ---- scan ----------------------------------------------------------------- */

static void test_cxl_scan(void **state) {
        struct ctx *c = *state;
        const struct pmem_device *d;

        add_region(c, &region0);
        add_region(c, &region1);
        assert_int_equal(pmem_scan(c->root, &c->devs), 2);

        d = pmem_devices_find(&c->devs, "dax0.0");
        assert_non_null(d);
        assert_int_equal(d->mode, PMEM_MODE_SYSTEM_RAM);
        assert_int_equal(d->target_node, 2);
        assert_string_equal(d->cxl_region, "region0");
        assert_string_equal(d->cxl_decoder, "decoder0.0");
        assert_string_equal(d->cxl_memdevs, "mem0,mem1");
        assert_false(d->cxl_memdevs_unknown);
        /* Not libnvdimm: no namespace, no nd region, not pmem. */
        assert_null(d->namespace_name);
        assert_null(d->namespace_uuid);
        assert_int_equal(d->region, -1);
        assert_false(d->on_pmem_region);
        assert_int_equal(d->n_ranges, 1);
        assert_int_equal(d->ranges[0].start, REGION0_START);
        assert_int_equal(d->ranges[0].end, REGION0_START + 512 * MiB);

        /* The second region of the window: same root decoder, its own memdev. */
        d = pmem_devices_find(&c->devs, "dax1.0");
        assert_non_null(d);
        assert_string_equal(d->cxl_region, "region1");
        assert_string_equal(d->cxl_decoder, "decoder0.0");
        assert_string_equal(d->cxl_memdevs, "mem1");
        assert_false(d->cxl_memdevs_unknown);
}

/* A memdev at two positions of a region is named once. */
static void test_cxl_scan_memdev_twice(void **state) {
        struct ctx *c = *state;
        struct fake_cxl_region r = region0;
        const struct pmem_device *d;
        _cleanup_free_ char *dir = fake_add_cxl_region(c->root, &r);

        assert_non_null(dir);
        fake_write(c->root, "devices/platform/ACPI0017:00/root0/decoder0.0/region0/target1", "decoder2.0\n");
        d = scan_find(c, "dax0.0");
        assert_string_equal(d->cxl_memdevs, "mem0");
        assert_false(d->cxl_memdevs_unknown);
}

/* Devices elsewhere (nd, hmem) are not CXL, nor is a region not below a root decoder. */
static void test_cxl_not_cxl(void **state) {
        struct ctx *c = *state;
        struct fake_dax hmem = {
                .region = 3, .id = 0, .driver = "kmem", .start = 64ULL << 30, .size = BS, .target_node = 2,
                .no_nd = true,
        };
        const struct pmem_device *d;

        free(fake_add_dax_device(c->root, &hmem));
        /* A region directory under a decoder of another port (decoder1.0 is not root0's). */
        fake_write(c->root, "devices/platform/ACPI0017:00/root0/decoder1.0/region7/dax_region7/dax7.0/size",
                   "134217728\n");
        fake_symlink(c->root, "bus/dax/devices/dax7.0",
                     "../../../devices/platform/ACPI0017:00/root0/decoder1.0/region7/dax_region7/dax7.0");
        d = scan_find(c, "dax3.0");
        assert_null(d->cxl_region);
        assert_null(d->cxl_memdevs);
        assert_null(d->cxl_decoder);
        d = pmem_devices_find(&c->devs, "dax7.0");
        assert_non_null(d);
        assert_null(d->cxl_region);
}

#define REGION0_DIR "devices/platform/ACPI0017:00/root0/decoder0.0/region0"
#define EP2 "devices/platform/ACPI0017:00/root0/port1/endpoint2"

/* Scan region0 after breaking something: still read, mem1 still known, mem0 not. */
static void expect_mem0_unknown(struct ctx *c, const char *what) {
        const struct pmem_device *d = scan_find(c, "dax0.0");

        if (!streq(d->cxl_region ?: "", "region0") || !d->cxl_memdevs_unknown ||
            !streq(d->cxl_memdevs ?: "", "mem1"))
                fail_msg("%s: region %s memdevs %s unknown %d", what, d->cxl_region ?: "(null)",
                         d->cxl_memdevs ?: "(null)", d->cxl_memdevs_unknown);
}

static void test_cxl_missing_links(void **state) {
        struct ctx *c = *state;

        fresh_region0(c);
        fake_unlink(c->root, EP2 "/uport");
        expect_mem0_unknown(c, "no uport");

        fresh_region0(c);
        fake_unlink(c->root, "bus/cxl/devices/decoder2.0");
        expect_mem0_unknown(c, "no bus/cxl link for the endpoint decoder");

        fresh_region0(c);
        fake_unlink(c->root, REGION0_DIR "/target0");
        expect_mem0_unknown(c, "no target0");

        fresh_region0(c);
        fake_write(c->root, REGION0_DIR "/target0", "\n");
        expect_mem0_unknown(c, "empty target0 (a position not set)");
}

static void test_cxl_link_loops(void **state) {
        struct ctx *c = *state;

        fresh_region0(c);
        fake_unlink(c->root, "bus/cxl/devices/decoder2.0");
        fake_symlink(c->root, "bus/cxl/devices/decoder2.0", "loop-a");
        fake_symlink(c->root, "bus/cxl/devices/loop-a", "decoder2.0");
        expect_mem0_unknown(c, "decoder link loop");

        fresh_region0(c);
        fake_unlink(c->root, EP2 "/uport");
        fake_symlink(c->root, EP2 "/uport", "uport");
        expect_mem0_unknown(c, "uport pointing at itself");
}

static void test_cxl_links_out_of_tree(void **state) {
        struct ctx *c = *state;
        _cleanup_free_ char *outside = fake_tree_new(), *target = NULL;

        /* A memdev-looking directory outside the sysfs root. */
        fake_mkdir(outside, "mem0");
        assert_true(asprintf(&target, "%s/mem0", outside) > 0);
        fresh_region0(c);
        fake_unlink(c->root, EP2 "/uport");
        fake_symlink(c->root, EP2 "/uport", target);
        expect_mem0_unknown(c, "uport leaving the root");

        fresh_region0(c);
        fake_unlink(c->root, "bus/cxl/devices/decoder2.0");
        fake_symlink(c->root, "bus/cxl/devices/decoder2.0", "/");
        expect_mem0_unknown(c, "decoder link to /");

        /* A target that is a path, not a decoder name. */
        fresh_region0(c);
        fake_write(c->root, REGION0_DIR "/target0", "../../../../port1/endpoint2/decoder2.0\n");
        expect_mem0_unknown(c, "target0 a path");
        fake_tree_free(TAKE_PTR(outside));
}

static void test_cxl_names_wrong_or_too_long(void **state) {
        struct ctx *c = *state;
        char longname[400];

        memset(longname, '7', sizeof(longname));
        memcpy(longname, "decoder2.", 9);
        longname[sizeof(longname) - 1] = '\0';
        fresh_region0(c);
        fake_write(c->root, REGION0_DIR "/target0", "%s\n", longname);
        expect_mem0_unknown(c, "target0 name too long");

        /* The link leads to a decoder other than the one named. */
        fresh_region0(c);
        fake_unlink(c->root, "bus/cxl/devices/decoder2.0");
        fake_symlink(c->root, "bus/cxl/devices/decoder2.0", "decoder3.0");
        expect_mem0_unknown(c, "link to another endpoint's decoder");
        fresh_region0(c);
        fake_mkdir(c->root, EP2 "/decoder2.5");
        fake_unlink(c->root, "bus/cxl/devices/decoder2.0");
        fake_symlink(c->root, "bus/cxl/devices/decoder2.0", "../../../" EP2 "/decoder2.5");
        expect_mem0_unknown(c, "link to another decoder of the endpoint");

        /* uport to something that is not a memdev. */
        fresh_region0(c);
        fake_mkdir(c->root, "devices/pci0000:0c/memory0");
        fake_unlink(c->root, EP2 "/uport");
        fake_symlink(c->root, EP2 "/uport", "../../../../../pci0000:0c/memory0");
        expect_mem0_unknown(c, "uport to memory0");

        /* A region number past INT_MAX is no region name: the device is not taken for CXL at all. */
        fake_write(c->root, "devices/platform/ACPI0017:00/root0/decoder0.0/region99999999999/dax_region9/dax9.0/size",
                   "134217728\n");
        fake_symlink(c->root, "bus/dax/devices/dax9.0",
                     "../../../devices/platform/ACPI0017:00/root0/decoder0.0/region99999999999/dax_region9/dax9.0");
        assert_true(pmem_scan(c->root, &c->devs) >= 2);
        assert_null(pmem_devices_find(&c->devs, "dax9.0")->cxl_region);
}

/* Without a sane interleave_ways the memdevs read are kept, but the set may be short. */
static void test_cxl_interleave_ways(void **state) {
        struct ctx *c = *state;
        const struct pmem_device *d;

        add_region(c, &region0);
        fake_unlink(c->root, REGION0_DIR "/interleave_ways");
        d = scan_find(c, "dax0.0");
        assert_string_equal(d->cxl_memdevs, "mem0,mem1");
        assert_true(d->cxl_memdevs_unknown);

        fake_write(c->root, REGION0_DIR "/interleave_ways", "4096\n");
        d = scan_find(c, "dax0.0");
        assert_string_equal(d->cxl_memdevs, "mem0,mem1");
        assert_true(d->cxl_memdevs_unknown);

        /* Three ways but two targets: position 2 is unknown. */
        fake_write(c->root, REGION0_DIR "/interleave_ways", "3\n");
        d = scan_find(c, "dax0.0");
        assert_string_equal(d->cxl_memdevs, "mem0,mem1");
        assert_true(d->cxl_memdevs_unknown);

        fake_write(c->root, REGION0_DIR "/interleave_ways", "2\n");
        d = scan_find(c, "dax0.0");
        assert_false(d->cxl_memdevs_unknown);
}

/* ---- blocks, rules, records ------------------------------------------------ */

static void add_block(struct block_set *s, uint64_t id) {
        assert_int_equal(GROW(s->blocks, s->allocated, s->n + 1), 0);
        s->blocks[s->n++] = (struct mem_block) {
                .id = id, .phys_start = id * BS, .state = BLOCK_STATE_OFFLINE, .node = NODE_NONE, .region = -1,
        };
}

static void test_cxl_attribute_blocks(void **state) {
        struct ctx *c = *state;
        uint64_t first = REGION0_START / BS;
        struct block_set s = {};

        add_region(c, &region0);
        add_region(c, &region1);
        assert_int_equal(pmem_scan(c->root, &c->devs), 2);
        for (uint64_t id = first - 1; id < first + 9; id++)
                add_block(&s, id);
        assert_int_equal(pmem_attribute_blocks(&c->devs, BS, &s), 8);
        for (size_t i = 0; i < s.n; i++) {
                const struct mem_block *b = &s.blocks[i];

                if (b->id < first || b->id >= first + 8) {
                        assert_null(b->cxl_region);
                        assert_null(b->cxl_memdevs);
                        continue;
                }
                assert_string_equal(b->device, b->id < first + 4 ? "dax0.0" : "dax1.0");
                assert_string_equal(b->cxl_region, b->id < first + 4 ? "region0" : "region1");
                assert_string_equal(b->cxl_memdevs, b->id < first + 4 ? "mem0,mem1" : "mem1");
                assert_false(b->cxl_memdevs_unknown);
                assert_int_equal(b->region, -1);
                assert_int_equal(b->node, 2);
        }
        block_set_clear(&s);
}

static struct policy *load(struct ctx *c, const char *text) {
        _cleanup_free_ char *path = NULL;
        struct policy_error e = {};
        struct policy *p = NULL;

        fake_write(c->root, "p.conf", "%s", text);
        assert_true(asprintf(&path, "%s/p.conf", c->root) > 0);
        if (policy_load(path, &p, &e) < 0)
                fail_msg("%s:%u: %s", e.file, e.line, e.reason);
        return p;
}

static void test_cxl_decide(void **state) {
        struct ctx *c = *state;
        struct fake_cxl_region r = region1;
        _cleanup_policy_ struct policy *p = NULL, *by_memdev = NULL;
        const struct pmem_device *d;
        struct pmem_decision dec;

        r.driver = "device_dax";
        add_region(c, &r);
        d = scan_find(c, "dax1.0");

        /* convert_devdax is for pmem: a CXL devdax device needs a rule. */
        p = load(c, "[pmem]\nconvert_devdax = yes\n[device other]\nmatch_cxl_region = region0\nconvert = yes\n"
                    "zone = online_kernel\n");
        assert_int_equal(pmem_decide(d, p, NULL, &dec), 0);
        assert_int_equal(dec.action, PMEM_ACTION_SKIP);
        assert_non_null(strstr(dec.reason, "not on a pmem region"));
        assert_int_equal(dec.zone, ZONE_MOVABLE);

        by_memdev = load(c, "[device cxl]\nmatch_cxl_memdev = mem1\nconvert = yes\nzone = online_kernel\n");
        assert_int_equal(pmem_decide(d, by_memdev, NULL, &dec), 0);
        assert_int_equal(dec.action, PMEM_ACTION_CONVERT);
        assert_string_equal(dec.reason, "device rule cxl");
        assert_int_equal(dec.zone, ZONE_KERNEL);

        /* Its memdevs not all known: a memdev rule cannot be checked, so no conversion for now. */
        fake_unlink(c->root, "devices/platform/ACPI0017:00/root0/decoder0.0/region1/interleave_ways");
        d = scan_find(c, "dax1.0");
        assert_true(d->cxl_memdevs_unknown);
        assert_int_equal(pmem_decide(d, by_memdev, NULL, &dec), 0);
        assert_int_equal(dec.action, PMEM_ACTION_SKIP);
        assert_string_equal(dec.reason, "undecided: the memdevs of region1 could not all be read and "
                            "match_cxl_memdev rules apply");
        /* A region rule needs no memdevs. */
        policy_unrefp(&p);
        p = load(c, "[device cxl]\nmatch_cxl_region = 1\nconvert = yes\n");
        assert_int_equal(pmem_decide(d, p, NULL, &dec), 0);
        assert_int_equal(dec.action, PMEM_ACTION_CONVERT);
}

/* The zone of a CXL block by rules, as the planner asks (rules.c through struct memory_identity). */
static void test_cxl_rules_zone(void **state) {
        struct ctx *c = *state;
        _cleanup_policy_ struct policy *p = NULL;
        struct memory_identity id = {
                .start = REGION0_START, .end = REGION0_START + BS, .block_id = REGION0_START / BS, .node = 2,
                .dax_device = "dax0.0", .region = -1, .cxl_region = "region0", .cxl_memdevs = "mem0,mem1",
        };
        struct rule_decision rd;

        p = load(c, "[zones]\ndefault = online_movable\n[pmem]\nzone = online_movable\n"
                    "[device r1]\nmatch_cxl_region = region1\nzone = online_kernel\n"
                    "[device m1]\nmatch_cxl_memdev = mem1\nzone = online\n");
        assert_int_equal(rules_decide(p, &id, &rd), 0);
        assert_int_equal(rd.origin, RULE_DEVICE);
        assert_string_equal(rd.name, "m1");
        assert_int_equal(rd.zone, ZONE_ONLINE);

        id.cxl_region = "region1";
        assert_int_equal(rules_decide(p, &id, &rd), 0);
        assert_string_equal(rd.name, "r1");
        assert_int_equal(rd.zone, ZONE_KERNEL);

        /* mem10 is not mem1; no CXL attribution matches no CXL rule. */
        id.cxl_region = "region2";
        id.cxl_memdevs = "mem10";
        assert_int_equal(rules_decide(p, &id, &rd), 0);
        assert_int_equal(rd.origin, RULE_PMEM_DEFAULT);
        id.cxl_region = id.cxl_memdevs = NULL;
        assert_int_equal(rules_decide(p, &id, &rd), 0);
        assert_int_equal(rd.origin, RULE_PMEM_DEFAULT);

        /* Memdevs not all known while a memdev rule applies: the block stays offline for now. */
        id.cxl_region = "region2";
        id.cxl_memdevs = "mem0";
        id.cxl_memdevs_unknown = true;
        assert_int_equal(rules_decide(p, &id, &rd), 0);
        assert_int_equal(rd.origin, RULE_UNDECIDED);
        assert_int_equal(rd.zone, ZONE_SKIP);
        assert_non_null(strstr(rd.undecided, "match_cxl_memdev"));
}

static void test_cxl_dry_run_and_record(void **state) {
        struct ctx *c = *state;
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ char *buf = NULL, *rec = NULL;
        const struct pmem_device *d;
        struct reporter rep;
        size_t size = 0;
        FILE *f;

        add_region(c, &region0);
        /* Debian 13's default: the kernel's switch off, so a CXL device's own 1 has no effect. */
        fake_write(c->root, "module/memory_hotplug/parameters/memmap_on_memory", "N\n");
        d = scan_find(c, "dax0.0");
        p = load(c, "[pmem]\nzone = online_movable\n");
        f = open_memstream(&buf, &size);
        assert_non_null(f);
        assert_int_equal(pmem_print_decisions(&c->devs, p, NULL, f), 0);
        assert_int_equal(fclose(f), 0);
        assert_string_equal(buf, "device=dax0.0 action=skip zone=online_movable reason=\"not devdax (mode "
                            "system-ram)\" namespace=- region=-1 node=2 size=536870912 mode=system-ram "
                            "cxl_region=region0 cxl_decoder=decoder0.0 cxl_memdev=mem0,mem1 memmap_on_memory=no "
                            "memmap_reason=\"the device's memmap_on_memory reads 1, but memory_hotplug.memmap_on_memory "
                            "is off (a boot parameter: add memory_hotplug.memmap_on_memory=1 to the kernel command "
                            "line)\"\n");

        reporter_init(&rep, LOG_TARGET_CONSOLE);
        size = 0;
        rep.out = open_memstream(&rec, &size);
        assert_non_null(rep.out);
        assert_int_equal(pmem_report_device(&rep, d, NULL, 1000, 2000, 4, 4 * BS), 0);
        assert_int_equal(fclose(rep.out), 0);
        assert_non_null(strstr(rec, " MEMONLINE_DEVICE=dax0.0"));
        assert_non_null(strstr(rec, " MEMONLINE_CXL_REGION=region0"));
        assert_non_null(strstr(rec, " MEMONLINE_CXL_MEMDEV=mem0,mem1"));
        assert_non_null(strstr(rec, " MEMONLINE_REGION=-1"));
        assert_null(strstr(rec, "MEMONLINE_NAMESPACE"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_cxl_scan, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_scan_memdev_twice, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_not_cxl, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_missing_links, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_link_loops, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_links_out_of_tree, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_names_wrong_or_too_long, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_interleave_ways, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_attribute_blocks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_decide, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_rules_zone, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cxl_dry_run_and_record, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
