/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fake-tree.h"
#include "pmem.h"
#include "pmem-badblocks.h"
#include "pmem-convert.h"
#include "pmem-decide.h"
#include "pmem-record.h"
#include "pmem-scan.h"
#include "report.h"
#include "topology.h"
#include "util.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define BS (128 * MiB)

#define UUID_NS0 "11111111-2222-3333-4444-555555555555"
#define UUID_DAX0 "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
#define UUID_DAX1 "0f0f0f0f-1e1e-2d2d-3c3c-4b4b4b4b4b4b"

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

static void add_dax(struct ctx *c, const struct fake_dax *d) {
        free(fake_add_dax_device(c->root, d));
}

/* dax0.0: 4 GiB..5 GiB on region0 (pmem), kmem, node 2. */
static const struct fake_dax kmem0 = {
        .region = 0, .id = 0, .driver = "kmem", .start = 4 * GiB, .size = GiB, .target_node = 2,
        .ns_uuid = UUID_NS0, .dax_uuid = UUID_DAX0,
};
/* dax1.0: 8 GiB..10 GiB on region1 (pmem), devdax, node 2. */
static const struct fake_dax devdax1 = {
        .region = 1, .id = 0, .driver = "device_dax", .start = 8 * GiB, .size = 2 * GiB, .target_node = 2,
        .ns_uuid = "22222222-2222-2222-2222-222222222222", .dax_uuid = UUID_DAX1,
};

/* ---- scan --------------------------------------------------------------- */

static void test_scan_fields(void **state) {
        struct ctx *c = *state;
        const struct pmem_device *d;

        add_dax(c, &kmem0);
        add_dax(c, &devdax1);
        assert_int_equal(pmem_scan(c->root, &c->devs), 2);

        d = pmem_devices_find(&c->devs, "dax0.0");
        assert_non_null(d);
        assert_int_equal(d->mode, PMEM_MODE_SYSTEM_RAM);
        assert_string_equal(d->driver, "kmem");
        assert_int_equal(d->resource, 4 * GiB);
        assert_int_equal(d->size, GiB);
        assert_int_equal(d->target_node, 2);
        assert_int_equal(d->numa_node, 2);
        assert_string_equal(d->namespace_name, "namespace0.0");
        /* ndctl's "uuid" for a devdax namespace is the nd_dax one; the namespace's own is raw_uuid. */
        assert_string_equal(d->namespace_uuid, UUID_DAX0);
        assert_string_equal(d->namespace_raw_uuid, UUID_NS0);
        assert_int_equal(d->region, 0);
        assert_true(d->on_pmem_region);
        assert_int_equal(d->n_ranges, 1);
        assert_int_equal(d->ranges[0].start, 4 * GiB);
        assert_int_equal(d->ranges[0].end, 5 * GiB);

        d = pmem_devices_find(&c->devs, "dax1.0");
        assert_non_null(d);
        assert_int_equal(d->mode, PMEM_MODE_DEVDAX);
        assert_int_equal(d->region, 1);
        assert_string_equal(d->namespace_name, "namespace1.0");
        assert_null(pmem_devices_find(&c->devs, "dax2.0"));
}

static void test_scan_order(void **state) {
        struct ctx *c = *state;
        static const int ids[][2] = { { 1, 0 }, { 0, 10 }, { 0, 2 }, { 0, 0 } };
        static const char *const want[] = { "dax0.0", "dax0.2", "dax0.10", "dax1.0" };

        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                struct fake_dax d = kmem0;

                d.region = ids[i][0];
                d.id = ids[i][1];
                d.start = (i + 1) * 16 * GiB;
                add_dax(c, &d);
        }
        fake_write(c->root, "bus/dax/devices/not-a-dax", "x\n");
        assert_int_equal(pmem_scan(c->root, &c->devs), 4);
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                assert_string_equal(c->devs.devices[i].name, want[i]);
}

static void test_scan_namespace_from_nd_dax(void **state) {
        struct ctx *c = *state;
        _cleanup_free_ char *dir = fake_add_dax_device(c->root, &kmem0);
        char rel[512];

        /* The nd_dax's namespace attribute wins over the name. */
        snprintf(rel, sizeof(rel), "%.*s/namespace", (int) (strrchr(dir, '/') - dir), dir);
        fake_write(c->root, rel, "namespace0.3\n");
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_string_equal(c->devs.devices[0].namespace_name, "namespace0.3");
        /* namespace0.3 has no uuid file: no raw uuid, the nd_dax uuid stays. */
        assert_null(c->devs.devices[0].namespace_raw_uuid);
        assert_string_equal(c->devs.devices[0].namespace_uuid, UUID_DAX0);

        /* No namespace attribute (or an empty one): dax_pmem named daxR.N after namespaceR.N. */
        fake_write(c->root, rel, "\n");
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_string_equal(c->devs.devices[0].namespace_name, "namespace0.0");
        assert_string_equal(c->devs.devices[0].namespace_raw_uuid, UUID_NS0);
        fake_unlink(c->root, rel);
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_string_equal(c->devs.devices[0].namespace_name, "namespace0.0");
}

static void test_scan_not_nd(void **state) {
        struct ctx *c = *state;
        struct fake_dax hmem = kmem0, vol = devdax1;
        const struct pmem_device *d;

        hmem.no_nd = true;
        hmem.region = 3;
        vol.volatile_region = true;
        vol.target_node = -1;
        add_dax(c, &hmem);
        add_dax(c, &vol);
        assert_int_equal(pmem_scan(c->root, &c->devs), 2);

        d = pmem_devices_find(&c->devs, "dax3.0");
        assert_non_null(d);
        assert_int_equal(d->region, -1);
        assert_null(d->namespace_name);
        assert_null(d->namespace_uuid);
        assert_false(d->on_pmem_region);
        assert_int_equal(d->target_node, 2);

        d = pmem_devices_find(&c->devs, "dax1.0");
        assert_non_null(d);
        assert_int_equal(d->region, 1);
        assert_false(d->on_pmem_region);
        assert_int_equal(d->target_node, NODE_NONE);
}

/* A target_node past NODE_ID_MAX is no node (99999999 once cost 8 s and 1.5 GiB in the planner). */
static void test_scan_target_node_out_of_range(void **state) {
        struct ctx *c = *state;
        struct fake_dax big = kmem0;
        _cleanup_free_ char *dir = NULL, *rel = NULL;
        const struct pmem_device *d;

        big.target_node = 99999999;
        dir = fake_add_dax_device(c->root, &big);
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        d = pmem_devices_find(&c->devs, "dax0.0");
        assert_non_null(d);
        assert_int_equal(d->target_node, NODE_NONE);

        assert_true(asprintf(&rel, "%s/target_node", dir) > 0);
        fake_write(c->root, rel, "%d\n", NODE_ID_MAX + 1);
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_int_equal(c->devs.devices[0].target_node, NODE_NONE);
        fake_write(c->root, rel, "%d\n", NODE_ID_MAX);
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_int_equal(c->devs.devices[0].target_node, NODE_ID_MAX);
}

static void test_scan_pmem_from_nstype(void **state) {
        struct ctx *c = *state;

        add_dax(c, &kmem0);
        /* Without a DEVTYPE line, nstype 5 (ND_DEVICE_NAMESPACE_PMEM) decides. */
        fake_write(c->root, "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region0/uevent", "MODALIAS=nd:t2\n");
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_true(c->devs.devices[0].on_pmem_region);
        fake_write(c->root, "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region0/nstype", "4\n");
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_false(c->devs.devices[0].on_pmem_region);
}

static void test_scan_modes(void **state) {
        struct ctx *c = *state;
        struct fake_dax unbound = kmem0, other = devdax1;

        unbound.driver = NULL;
        other.driver = "vfio_dax";
        add_dax(c, &unbound);
        add_dax(c, &other);
        assert_int_equal(pmem_scan(c->root, &c->devs), 2);
        assert_int_equal(c->devs.devices[0].mode, PMEM_MODE_UNKNOWN);
        assert_null(c->devs.devices[0].driver);
        assert_int_equal(c->devs.devices[1].mode, PMEM_MODE_UNKNOWN);
        assert_string_equal(c->devs.devices[1].driver, "vfio_dax");
        assert_string_equal(pmem_mode_to_string(PMEM_MODE_SYSTEM_RAM), "system-ram");
        assert_string_equal(pmem_mode_to_string(PMEM_MODE_DEVDAX), "devdax");
}

static void test_scan_mappings(void **state) {
        struct ctx *c = *state;
        _cleanup_free_ char *dir = fake_add_dax_device(c->root, &kmem0);
        char rel[512];

        snprintf(rel, sizeof(rel), "%s/mapping1/start", dir);
        fake_write(c->root, rel, "0x300000000\n");
        snprintf(rel, sizeof(rel), "%s/mapping1/end", dir);
        fake_write(c->root, rel, "0x307ffffff\n");
        snprintf(rel, sizeof(rel), "%s/mapping0/start", dir);
        fake_write(c->root, rel, "0x100000000\n");
        snprintf(rel, sizeof(rel), "%s/mapping0/end", dir);
        fake_write(c->root, rel, "0x10fffffff\n");
        /* The write-only "mapping" attribute is no range. */
        snprintf(rel, sizeof(rel), "%s/mapping", dir);
        fake_write(c->root, rel, "\n");

        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_int_equal(c->devs.devices[0].n_ranges, 2);
        assert_int_equal(c->devs.devices[0].ranges[0].start, 4 * GiB);
        assert_int_equal(c->devs.devices[0].ranges[0].end, 4 * GiB + 256 * MiB);
        assert_int_equal(c->devs.devices[0].ranges[1].start, 12 * GiB);
        assert_int_equal(c->devs.devices[0].ranges[1].end, 12 * GiB + 128 * MiB);
}

static void test_scan_no_dax_bus(void **state) {
        struct ctx *c = *state;

        add_dax(c, &kmem0);
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        /* A tree without bus/dax replaces the old set with an empty one. */
        fake_tree_free(c->root);
        c->root = fake_tree_new();
        assert_int_equal(pmem_scan(c->root, &c->devs), 0);
        assert_int_equal(c->devs.n, 0);
}

static void rm_rf(const char *root, const char *rel) {
        char cmd[1024];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", root, rel);
        assert_int_equal(system(cmd), 0);
}

static void test_scan_removed_device(void **state) {
        struct ctx *c = *state;
        _cleanup_free_ char *dir = fake_add_dax_device(c->root, &kmem0);
        _cleanup_free_ char *dir1 = fake_add_dax_device(c->root, &devdax1);
        struct pmem_device d = { .name = NULL };
        char rel[512];

        /* The directory went away after readdir saw the bus link. */
        rm_rf(c->root, dir);
        assert_int_equal(pmem_read_device(c->root, "dax0.0", &d), -ENOENT);
        assert_null(d.name);
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_string_equal(c->devs.devices[0].name, "dax1.0");

        /* Half gone: size already removed while the directory lingers. */
        snprintf(rel, sizeof(rel), "%s/size", dir1);
        fake_unlink(c->root, rel);
        assert_int_equal(pmem_read_device(c->root, "dax1.0", &d), -ENOENT);
        assert_int_equal(pmem_scan(c->root, &c->devs), 0);

        assert_int_equal(pmem_read_device(c->root, "dax7.7", &d), -ENOENT);
        assert_int_equal(pmem_read_device(c->root, "memory7", &d), -EINVAL);
        assert_int_equal(pmem_read_device(c->root, "dax-1.0", &d), -EINVAL);
}

/* Point a device's driver link at another driver (NULL: unbind), as a rebind does. */
static void rebind(struct ctx *c, const char *dir, const char *driver) {
        char rel[512], target[512];

        snprintf(rel, sizeof(rel), "%s/driver", dir);
        fake_unlink(c->root, rel);
        if (!driver)
                return;
        fake_mkdir(c->root, "bus/dax/drivers/device_dax");
        snprintf(target, sizeof(target), "%s/bus/dax/drivers/%s", c->root, driver);
        fake_symlink(c->root, rel, target);
}

/* An update keeps a device still bound to the same driver as read: nothing of it changes while bound. */
static void test_scan_update_keeps_bound(void **state) {
        struct ctx *c = *state;
        _cleanup_free_ char *dir = fake_add_dax_device(c->root, &kmem0);
        const struct pmem_device *d;
        char rel[512];

        add_dax(c, &devdax1);
        assert_int_equal(pmem_scan(c->root, &c->devs), 2);
        assert_true(c->devs.scanned);
        /* Behind the update's back (the kernel does not while a driver is bound): not read again. */
        snprintf(rel, sizeof(rel), "%s/target_node", dir);
        fake_write(c->root, rel, "3\n");
        assert_int_equal(pmem_scan_update(c->root, &c->devs), 2);
        d = pmem_devices_find(&c->devs, "dax0.0");
        assert_non_null(d);
        assert_int_equal(d->target_node, 2);
        assert_non_null(pmem_devices_find(&c->devs, "dax1.0"));

        /* Rebound (daxctl reconfigure-device --mode=devdax): read again. */
        rebind(c, dir, "device_dax");
        assert_int_equal(pmem_scan_update(c->root, &c->devs), 2);
        d = pmem_devices_find(&c->devs, "dax0.0");
        assert_non_null(d);
        assert_int_equal(d->mode, PMEM_MODE_DEVDAX);
        assert_int_equal(d->target_node, 3);
}

/*
 * What an update must not miss: a device made again under its name (a
 * new directory), an unbound one resized (no event says so), one gone,
 * one new. A set with an unreadable device is read whole next time.
 */
static void test_scan_update_sees_changes(void **state) {
        struct ctx *c = *state;
        _cleanup_free_ char *dir = fake_add_dax_device(c->root, &kmem0), *again = NULL, *unbound_dir = NULL;
        struct fake_dax remade = kmem0, unbound = kmem0;
        const struct pmem_device *d;
        char rel[512];

        unbound.region = 2;
        unbound.start = 12 * GiB;
        unbound.driver = NULL;
        unbound_dir = fake_add_dax_device(c->root, &unbound);
        assert_int_equal(pmem_scan(c->root, &c->devs), 2);

        /* dax0.0 destroyed and made again at another address (a region created anew): a new directory. */
        remade.no_nd = true;
        remade.start = 6 * GiB;
        fake_unlink(c->root, "bus/dax/devices/dax0.0");
        again = fake_add_dax_device(c->root, &remade);
        rm_rf(c->root, dir);
        /* The unbound device resized: no event, no new directory, no driver to tell. */
        snprintf(rel, sizeof(rel), "%s/size", unbound_dir);
        fake_write(c->root, rel, "%llu\n", (unsigned long long) (2 * GiB));
        assert_int_equal(pmem_scan_update(c->root, &c->devs), 2);
        d = pmem_devices_find(&c->devs, "dax0.0");
        assert_non_null(d);
        assert_int_equal(d->ranges[0].start, 6 * GiB);
        assert_int_equal(d->region, -1);
        d = pmem_devices_find(&c->devs, "dax2.0");
        assert_non_null(d);
        assert_int_equal(d->size, 2 * GiB);

        /* Gone, and new. */
        rm_rf(c->root, again);
        fake_unlink(c->root, "bus/dax/devices/dax0.0");
        add_dax(c, &devdax1);
        assert_int_equal(pmem_scan_update(c->root, &c->devs), 2);
        assert_null(pmem_devices_find(&c->devs, "dax0.0"));
        assert_non_null(pmem_devices_find(&c->devs, "dax1.0"));

        /* Unreadable: counted as by a scan; the next update reads everything again. */
        snprintf(rel, sizeof(rel), "%s/size", unbound_dir);
        fake_write(c->root, rel, "bogus\n");
        assert_int_equal(pmem_scan_update(c->root, &c->devs), 1);
        assert_int_equal(c->devs.n_unreadable, 1);
        assert_string_equal(c->devs.unreadable_name, "dax2.0");
        fake_write(c->root, rel, "%llu\n", (unsigned long long) GiB);
        assert_int_equal(pmem_scan_update(c->root, &c->devs), 2);
        assert_int_equal(c->devs.n_unreadable, 0);
}

/* ---- attribution --------------------------------------------------------- */

static void add_block(struct block_set *s, uint64_t id, int node, bool guessed) {
        assert_int_equal(GROW(s->blocks, s->allocated, s->n + 1), 0);
        s->blocks[s->n++] = (struct mem_block) {
                .id = id, .phys_start = id * BS, .state = BLOCK_STATE_OFFLINE, .node = node,
                .node_guessed = guessed, .region = -1,
        };
}

static void test_attribute_blocks(void **state) {
        struct ctx *c = *state;
        struct block_set s = {};

        add_dax(c, &kmem0);     /* blocks 32..39 */
        add_dax(c, &devdax1);   /* 64..79, but devdax: no memory blocks of its own */
        assert_int_equal(pmem_scan(c->root, &c->devs), 2);

        for (uint64_t id = 30; id < 42; id++)
                add_block(&s, id, id == 33 ? 1 : id == 34 ? 0 : NODE_NONE, id == 34);
        add_block(&s, 64, NODE_NONE, false);

        assert_int_equal(pmem_attribute_blocks(&c->devs, BS, &s), 8);
        for (size_t i = 0; i < s.n; i++) {
                struct mem_block *b = &s.blocks[i];

                if (b->id >= 32 && b->id < 40) {
                        assert_string_equal(b->device, "dax0.0");
                        assert_string_equal(b->namespace_name, "namespace0.0");
                        assert_string_equal(b->namespace_uuid, UUID_DAX0);
                        assert_int_equal(b->region, 0);
                } else {
                        assert_null(b->device);
                        assert_null(b->namespace_name);
                        assert_int_equal(b->region, -1);
                        assert_int_equal(b->node, NODE_NONE);
                }
        }
        /* target_node fills unknown and guessed nodes; a real node link stays. */
        assert_int_equal(s.blocks[32 - 30].node, 2);
        assert_int_equal(s.blocks[33 - 30].node, 1);
        assert_int_equal(s.blocks[34 - 30].node, 2);
        assert_false(s.blocks[34 - 30].node_guessed);

        /* Attributing again replaces, not leaks (valgrind/ASan check the rest). */
        assert_int_equal(pmem_attribute_blocks(&c->devs, BS, &s), 8);
        assert_int_equal(pmem_attribute_blocks(&c->devs, 0, &s), -EINVAL);
        block_set_clear(&s);
}

static void test_attribute_partial_and_split(void **state) {
        struct ctx *c = *state;
        struct fake_dax odd = kmem0;
        struct block_set s = {};
        _cleanup_free_ char *dir = NULL;
        char rel[512];

        /* Starts 64 MiB into block 32: block 32 is only half the device's, so not kmem's. */
        odd.start = 4 * GiB + 64 * MiB;
        odd.size = 320 * MiB;
        add_dax(c, &odd);
        /* dax2.0: two adjacent mappings that split block 81 between them. */
        struct fake_dax split = kmem0;
        split.region = 2;
        split.start = 10 * GiB;
        split.size = 384 * MiB;
        split.dax_uuid = UUID_DAX1;
        dir = fake_add_dax_device(c->root, &split);
        snprintf(rel, sizeof(rel), "%s/mapping0/start", dir);
        fake_write(c->root, rel, "%#llx\n", (unsigned long long) (10 * GiB));
        snprintf(rel, sizeof(rel), "%s/mapping0/end", dir);
        fake_write(c->root, rel, "%#llx\n", (unsigned long long) (10 * GiB + 192 * MiB - 1));
        snprintf(rel, sizeof(rel), "%s/mapping1/start", dir);
        fake_write(c->root, rel, "%#llx\n", (unsigned long long) (10 * GiB + 192 * MiB));
        snprintf(rel, sizeof(rel), "%s/mapping1/end", dir);
        fake_write(c->root, rel, "%#llx\n", (unsigned long long) (10 * GiB + 384 * MiB - 1));
        assert_int_equal(pmem_scan(c->root, &c->devs), 2);

        for (uint64_t id = 31; id < 36; id++)
                add_block(&s, id, NODE_NONE, false);
        for (uint64_t id = 79; id < 84; id++)
                add_block(&s, id, NODE_NONE, false);
        /* 33 and 34 lie inside dax0.0; 80..82 inside dax2.0 (81 across its two mappings). */
        assert_int_equal(pmem_attribute_blocks(&c->devs, BS, &s), 5);
        for (size_t i = 0; i < s.n; i++) {
                uint64_t id = s.blocks[i].id;

                if (id == 33 || id == 34)
                        assert_string_equal(s.blocks[i].device, "dax0.0");
                else if (id >= 80 && id <= 82)
                        assert_string_equal(s.blocks[i].device, "dax2.0");
                else
                        assert_null(s.blocks[i].device);
        }
        block_set_clear(&s);
}

static void test_attribute_many(void **state) {
        struct ctx *c = *state;
        struct block_set s = {};
        size_t n_dev = 64;

        /* Devices at odd GiB, 512 MiB each; blocks everywhere in 0..2*n_dev GiB. */
        for (size_t i = 0; i < n_dev; i++) {
                struct fake_dax d = kmem0;

                d.region = (int) i;
                d.start = (2 * i + 1) * GiB;
                d.size = 512 * MiB;
                d.target_node = (int) (i % 3);
                add_dax(c, &d);
        }
        assert_int_equal(pmem_scan(c->root, &c->devs), (int) n_dev);
        for (uint64_t id = 0; id < 2 * n_dev * (GiB / BS); id++)
                add_block(&s, id, NODE_NONE, false);
        assert_int_equal(pmem_attribute_blocks(&c->devs, BS, &s), (int) (n_dev * 4));
        for (size_t i = 0; i < s.n; i++) {
                uint64_t addr = s.blocks[i].id * BS, gib = addr / GiB;
                bool inside = (gib % 2) == 1 && addr % GiB < 512 * MiB;

                if (!inside) {
                        assert_null(s.blocks[i].device);
                        continue;
                }
                char want[32];
                snprintf(want, sizeof(want), "dax%llu.0", (unsigned long long) (gib / 2));
                assert_string_equal(s.blocks[i].device, want);
                assert_int_equal(s.blocks[i].region, (int) (gib / 2));
                assert_int_equal(s.blocks[i].node, (int) ((gib / 2) % 3));
        }
        block_set_clear(&s);
}

/* ---- daxctl.conf.d ------------------------------------------------------ */

static void test_daxctl_conf_parse(void **state) {
        struct ctx *c = *state;
        struct daxctl_conf conf = {};
        const struct daxctl_claim *cl;
        char dir[512];
        size_t count;

        snprintf(dir, sizeof(dir), "%s/daxctl.conf.d", c->root);
        fake_write(c->root, "daxctl.conf.d/10-pmem.conf",
                   "# comment\n"
                   "; another\n"
                   "[Reconfigure-Device Pmem0]\n"
                   "  NVDIMM.UUID = " UUID_DAX0 "\n"
                   "mode = \"system-ram\"\n"
                   "online = false   # inline comment\n"
                   "movable = no\n"
                   "\n"
                   "[something-else x]\n"
                   "nvdimm.uuid = " UUID_DAX1 "\n"
                   "mode = system-ram\n"
                   "[reconfigure-device pmem1]\n"
                   "nvdimm.uuid=" UUID_DAX1 "\n"
                   "mode=devdax\n");
        fake_write(c->root, "daxctl.conf.d/20-broken.conf",
                   "[reconfigure-device bad]\n"
                   "nvdimm.uuid = 99999999-9999-9999-9999-999999999999\n"
                   "mode = system-ram\n"
                   "this line has no equals sign\n");
        fake_write(c->root, "daxctl.conf.d/30-incomplete.conf",
                   "[reconfigure-device nouuid]\n"
                   "mode = system-ram\n"
                   "[reconfigure-device badmode]\n"
                   "nvdimm.uuid = 88888888-8888-8888-8888-888888888888\n"
                   "mode = ram\n"
                   "[reconfigure-device upper]\n"
                   "nvdimm.uuid = 7777AAAA-7777-7777-7777-777777777777\n"
                   "mode = system-ram\n");
        fake_write(c->root, "daxctl.conf.d/40-unterminated.conf", "[reconfigure-device x\n");
        /* Not *.conf, or just ".conf": daxctl skips them. */
        fake_write(c->root, "daxctl.conf.d/50-skip.conf.bak",
                   "[reconfigure-device s]\nnvdimm.uuid = 66666666-6666-6666-6666-666666666666\nmode = system-ram\n");
        fake_write(c->root, "daxctl.conf.d/.conf",
                   "[reconfigure-device s]\nnvdimm.uuid = 66666666-6666-6666-6666-666666666666\nmode = system-ram\n");

        assert_int_equal(pmem_daxctl_conf_load(dir, &conf), 0);
        assert_int_equal(conf.n_claims, 2);

        cl = pmem_daxctl_conf_find(&conf, UUID_DAX0, &count);
        assert_non_null(cl);
        assert_int_equal(count, 1);
        assert_string_equal(cl->file, "daxctl.conf.d/10-pmem.conf");
        assert_string_equal(cl->section, "pmem0");
        assert_string_equal(cl->mode, "system-ram");
        assert_int_equal(cl->online, 0);
        assert_int_equal(cl->movable, 0);

        cl = pmem_daxctl_conf_find(&conf, UUID_DAX1, &count);
        assert_non_null(cl);
        assert_int_equal(count, 1);
        assert_string_equal(cl->section, "pmem1");
        assert_string_equal(cl->mode, "devdax");
        assert_int_equal(cl->online, -1);

        /* The broken file is ignored whole, with its line. */
        assert_null(pmem_daxctl_conf_find(&conf, "99999999-9999-9999-9999-999999999999", NULL));
        assert_null(pmem_daxctl_conf_find(&conf, "66666666-6666-6666-6666-666666666666", NULL));
        assert_null(pmem_daxctl_conf_find(&conf, "88888888-8888-8888-8888-888888888888", NULL));
        assert_int_equal(conf.n_ignored, 5);
        assert_string_equal(conf.ignored[0], "daxctl.conf.d/20-broken.conf:4: syntax error: daxctl rejects the whole file");
        assert_non_null(strstr(conf.ignored[1], "daxctl.conf.d/30-incomplete.conf: [reconfigure-device nouuid] has no nvdimm.uuid"));
        assert_non_null(strstr(conf.ignored[2], "30-incomplete.conf: [reconfigure-device badmode] mode = 'ram'"));
        assert_non_null(strstr(conf.ignored[3], "30-incomplete.conf: [reconfigure-device upper] nvdimm.uuid"));
        assert_non_null(strstr(conf.ignored[4], "40-unterminated.conf:1: syntax error"));
        pmem_daxctl_conf_clear(&conf);
}

/* Where libiniparser reads a file differently from a plain INI reading: as daxctl sees it. */
static void test_daxctl_conf_iniparser(void **state) {
        struct ctx *c = *state;
        struct daxctl_conf conf = {};
        const struct daxctl_claim *cl;
        _cleanup_free_ char *long_line = NULL, *fifo = NULL;
        char dir[512];
        size_t count;

        snprintf(dir, sizeof(dir), "%s/d", c->root);
        /* A section given twice is one section: the later keys win. */
        fake_write(c->root, "d/10-twice.conf",
                   "[reconfigure-device a]\nnvdimm.uuid = " UUID_DAX0 "\nmode = devdax\n"
                   "[reconfigure-device a]\nmode = system-ram\nonline = no\n");
        /* A quoted value keeps its ';', an unquoted one ends there; a key before any section is no claim. */
        fake_write(c->root, "d/20-values.conf",
                   "nvdimm.uuid = " UUID_DAX1 "\n"
                   "[reconfigure-device b]\nnvdimm.uuid = '" UUID_DAX1 "'\nmode = system-ram;devdax\n"
                   "movable = \"no;really\"\n");
        /* A ':' in the section name hides it from iniparser's section list: daxctl never sees it. */
        fake_write(c->root, "d/30-colon.conf",
                   "[reconfigure-device c:d]\nnvdimm.uuid = 77777777-7777-7777-7777-777777777777\nmode = system-ram\n");
        /* A line of 1024 bytes or more makes iniparser refuse the file, naming the line. */
        long_line = malloc(1100);
        assert_non_null(long_line);
        memset(long_line, 'x', 1099);
        long_line[1099] = '\0';
        fake_write(c->root, "d/40-long.conf",
                   "[reconfigure-device e]\nnvdimm.uuid = 66666666-6666-6666-6666-666666666666\n"
                   "mode = system-ram\n# %s\n", long_line);
        /* A continued line (trailing backslash) is one line. */
        fake_write(c->root, "d/50-continued.conf",
                   "[reconfigure-device f]\nnvdimm.uuid = 55555555-5555-5555-\\\n5555-555555555555\n"
                   "mode = system-ram\n");
        /* Text from the files is escaped where it is printed, and so are their names in any message. */
        fake_write(c->root, "d/70-escape.conf", "[reconfigure-device \x1b[2Jx]\nmode = system-ram\n");
        fake_write(c->root, "d/80-\x1b]0;name\x07.conf", "[reconfigure-device n]\nmode = system-ram\n");
        /* Not a regular file: daxctl's scandir() filter skips it, and we never open (or block on) it. */
        assert_true(asprintf(&fifo, "%s/60-fifo.conf", dir) > 0);
        assert_int_equal(mkfifo(fifo, 0600), 0);

        alarm(10);
        assert_int_equal(pmem_daxctl_conf_load(dir, &conf), 0);
        alarm(0);

        cl = pmem_daxctl_conf_find(&conf, UUID_DAX0, &count);
        assert_non_null(cl);
        assert_int_equal(count, 1);
        assert_string_equal(cl->mode, "system-ram");
        assert_int_equal(cl->online, 0);

        /* "system-ram;devdax" is "system-ram" to iniparser. */
        cl = pmem_daxctl_conf_find(&conf, UUID_DAX1, &count);
        assert_non_null(cl);
        assert_int_equal(count, 1);
        assert_string_equal(cl->section, "b");
        assert_string_equal(cl->mode, "system-ram");
        assert_int_equal(cl->movable, 0);

        assert_null(pmem_daxctl_conf_find(&conf, "77777777-7777-7777-7777-777777777777", NULL));
        assert_null(pmem_daxctl_conf_find(&conf, "66666666-6666-6666-6666-666666666666", NULL));
        cl = pmem_daxctl_conf_find(&conf, "55555555-5555-5555-5555-555555555555", NULL);
        assert_non_null(cl);
        assert_string_equal(cl->section, "f");
        assert_int_equal(conf.n_claims, 3);
        assert_int_equal(conf.n_ignored, 3);
        assert_string_equal(conf.ignored[2], "d/80-\\x1b]0;name\\x07.conf: [reconfigure-device n] has no nvdimm.uuid: "
                            "daxctl never matches it");
        assert_string_equal(conf.ignored[0], "d/40-long.conf:4: line too long for iniparser (1023 bytes at most): "
                            "daxctl rejects the whole file");
        pmem_daxctl_conf_clear(&conf);

        {
                _cleanup_free_ char *out = NULL;
                struct policy p = { .respect_daxctl = true };
                size_t len = 0;
                FILE *f = open_memstream(&out, &len);

                assert_non_null(f);
                assert_int_equal(pmem_print_decisions(NULL, &p, dir, f), 0);
                assert_int_equal(fclose(f), 0);
                assert_null(strchr(out, '\x1b'));
                assert_non_null(strstr(out, "[reconfigure-device \\x1b[2jx] has no nvdimm.uuid"));
        }
}

static void test_daxctl_conf_missing_dir(void **state) {
        struct ctx *c = *state;
        struct daxctl_conf conf = {};
        char dir[512];

        snprintf(dir, sizeof(dir), "%s/no-such-dir", c->root);
        assert_int_equal(pmem_daxctl_conf_load(dir, &conf), 0);
        assert_int_equal(conf.n_claims, 0);
        assert_int_equal(conf.n_ignored, 0);
        assert_null(pmem_daxctl_conf_find(&conf, UUID_DAX0, NULL));
        assert_null(pmem_daxctl_conf_find(NULL, UUID_DAX0, NULL));
}

static void test_daxctl_conf_duplicate_claims(void **state) {
        struct ctx *c = *state;
        struct daxctl_conf conf = {};
        const struct daxctl_claim *cl;
        char dir[512];
        size_t count;

        snprintf(dir, sizeof(dir), "%s/d", c->root);
        fake_write(c->root, "d/b.conf", "[reconfigure-device two]\nnvdimm.uuid = " UUID_DAX0 "\nmode = system-ram\n");
        fake_write(c->root, "d/a.conf", "[reconfigure-device one]\nnvdimm.uuid = " UUID_DAX0 "\nmode = system-ram\n"
                   "online = yes\n");
        assert_int_equal(pmem_daxctl_conf_load(dir, &conf), 0);
        cl = pmem_daxctl_conf_find(&conf, UUID_DAX0, &count);
        assert_non_null(cl);
        assert_int_equal(count, 2);
        assert_string_equal(cl->file, "d/a.conf");
        assert_int_equal(cl->online, 1);
        pmem_daxctl_conf_clear(&conf);
}

/* ---- decisions ----------------------------------------------------------- */

static struct policy base_policy(void) {
        return (struct policy) {
                .convert_devdax = true,
                .respect_daxctl = true,
                .pmem_zone = ZONE_MOVABLE,
                .default_zone = ZONE_ONLINE,
        };
}

static struct device_rule rule(const char *name) {
        return (struct device_rule) { .name = (char *) name, .region = -1, .target_node = -1, .convert = -1,
                                      .allow_badblocks = -1 };
}

static struct pmem_device *scan_one(struct ctx *c, const struct fake_dax *d) {
        add_dax(c, d);
        assert_true(pmem_scan(c->root, &c->devs) >= 1);
        for (size_t i = 0; i < c->devs.n; i++) {
                char name[32];

                snprintf(name, sizeof(name), "dax%d.%d", d->region, d->id);
                if (streq(c->devs.devices[i].name, name))
                        return &c->devs.devices[i];
        }
        fail();
        return NULL;
}

static void decide_expect(const struct pmem_device *dev, const struct policy *p, const char *confdir,
                          struct pmem_decision *d, enum pmem_action action, const char *reason) {
        assert_int_equal(pmem_decide(dev, p, confdir, d), 0);
        assert_int_equal(d->action, action);
        assert_string_equal(d->reason, reason);
}

static void test_decide_defaults(void **state) {
        struct ctx *c = *state;
        struct pmem_device *dev = scan_one(c, &devdax1);
        struct policy p = base_policy();
        struct pmem_decision d;

        assert_int_equal(pmem_decide(dev, &p, NULL, &d), 0);
        assert_int_equal(d.action, PMEM_ACTION_CONVERT);
        assert_int_equal(d.zone, ZONE_MOVABLE);
        assert_string_equal(d.reason, "convert_devdax=yes");
        assert_null(d.rule);

        p.convert_devdax = false;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP, "convert_devdax=no");

        /* No pmem_zone: the default zone. */
        p.pmem_zone = ZONE_UNSET;
        assert_int_equal(pmem_decide(dev, &p, NULL, &d), 0);
        assert_int_equal(d.zone, ZONE_ONLINE);
}

static void test_decide_not_devdax(void **state) {
        struct ctx *c = *state;
        struct pmem_device *dev = scan_one(c, &kmem0);
        struct policy p = base_policy();
        struct pmem_decision d;

        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP, "not devdax (mode system-ram)");
        /* Its blocks still get the pmem zone. */
        assert_int_equal(d.zone, ZONE_MOVABLE);
}

static void test_decide_rules(void **state) {
        struct ctx *c = *state;
        struct pmem_device *dev = scan_one(c, &devdax1);
        struct policy p = base_policy();
        struct device_rule rules[2];
        struct pmem_decision d;

        p.convert_devdax = false;
        p.devices = rules;
        p.n_devices = 1;

        /* By namespace uuid (ndctl's "uuid"), converting although convert_devdax=no. */
        rules[0] = rule("by-uuid");
        rules[0].namespace_name = (char *) UUID_DAX1;
        rules[0].convert = 1;
        rules[0].zone = ZONE_KERNEL;
        assert_int_equal(pmem_decide(dev, &p, NULL, &d), 0);
        assert_int_equal(d.action, PMEM_ACTION_CONVERT);
        assert_int_equal(d.zone, ZONE_KERNEL);
        assert_string_equal(d.reason, "device rule by-uuid");
        assert_ptr_equal(d.rule, &rules[0]);

        /* By region, convert=no beats convert_devdax=yes. */
        p.convert_devdax = true;
        rules[0] = rule("by-region");
        rules[0].region = 1;
        rules[0].convert = 0;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP, "device rule by-region: convert=no");

        /* A rule for another region does not match: convert_devdax applies. */
        rules[0].region = 0;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_CONVERT, "convert_devdax=yes");

        /* By node; first match in file order wins. */
        p.convert_devdax = false;
        rules[0] = rule("node2");
        rules[0].target_node = 2;
        rules[0].convert = 1;
        rules[0].zone = ZONE_MOVABLE;
        rules[1] = rule("any");
        rules[1].convert = 0;
        p.n_devices = 2;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_CONVERT, "device rule node2");

        /* min_size above the device's 2 GiB: the next rule matches. */
        rules[0].min_size = 4 * GiB;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP, "device rule any: convert=no");
        rules[0].min_size = 2 * GiB;
        assert_int_equal(pmem_decide(dev, &p, NULL, &d), 0);
        assert_string_equal(d.reason, "device rule node2");

        /* A rule with only a zone leaves conversion to convert_devdax. */
        p.n_devices = 1;
        rules[0] = rule("zone-only");
        rules[0].zone = ZONE_KERNEL;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP, "convert_devdax=no");
        assert_int_equal(d.zone, ZONE_KERNEL);
}

static void test_decide_pmem_only(void **state) {
        struct ctx *c = *state;
        struct fake_dax vd = devdax1;
        struct pmem_device *dev;
        struct policy p = base_policy();
        struct device_rule rules[1] = { rule("pmem") };
        struct pmem_decision d;

        vd.volatile_region = true;
        dev = scan_one(c, &vd);
        rules[0].pmem_only = true;
        rules[0].convert = 1;
        p.devices = rules;
        p.n_devices = 1;

        /* The pmem_only rule skips it and convert_devdax covers pmem regions only. */
        assert_int_equal(pmem_decide(dev, &p, NULL, &d), 0);
        assert_int_equal(d.action, PMEM_ACTION_SKIP);
        assert_null(d.rule);
        assert_true(startswith(d.reason, "not on a pmem region"));

        /* Without pmem_only the rule converts it. */
        rules[0].pmem_only = false;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_CONVERT, "device rule pmem");
}

static void test_decide_excluded(void **state) {
        struct ctx *c = *state;
        struct pmem_device *dev = scan_one(c, &devdax1);
        struct policy p = base_policy();
        struct exclusion ex[3] = {
                { .kind = EXCLUDE_NODE, .node = 1, .line = 7 },
                { .kind = EXCLUDE_DEVICE, .device = (char *) "dax1.0", .line = 9 },
                { .kind = EXCLUDE_RANGE, .start = 9 * GiB, .end = 16 * GiB, .line = 11 },
        };
        struct device_rule rules[1] = { rule("yes") };
        struct pmem_decision d;

        rules[0].convert = 1;
        p.devices = rules;
        p.n_devices = 1;
        p.exclusions = ex;
        p.n_exclusions = 3;
        assert_int_equal(pmem_decide(dev, &p, NULL, &d), 0);
        assert_int_equal(d.action, PMEM_ACTION_SKIP);
        assert_int_equal(d.zone, ZONE_SKIP);
        assert_string_equal(d.reason, "excluded (line 9)");

        /* Another device's exclusion, another node, a range holding only part of it: convert. */
        ex[1].device = (char *) "dax0.0";
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_CONVERT, "device rule yes");

        /* All of its memory excluded, by range or by its target node: nothing would online it. */
        ex[2].start = 8 * GiB;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP, "excluded: range (line 11)");
        ex[2].start = 9 * GiB;
        ex[0].node = 2;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP, "excluded: node 2 (line 7)");
}

static void test_decide_daxctl(void **state) {
        struct ctx *c = *state;
        struct pmem_device *dev = scan_one(c, &devdax1);
        struct policy p = base_policy();
        struct pmem_decision d;
        char dir[512];

        snprintf(dir, sizeof(dir), "%s/daxctl.conf.d", c->root);
        fake_write(c->root, "daxctl.conf.d/pmem.conf",
                   "[reconfigure-device ns1]\nnvdimm.uuid = " UUID_DAX1 "\nmode = system-ram\nonline = false\n");

        assert_int_equal(pmem_decide(dev, &p, dir, &d), 0);
        assert_int_equal(d.action, PMEM_ACTION_SKIP);
        assert_true(d.daxctl_claimed);
        assert_string_equal(d.reason, "claimed by daxctl.conf.d/pmem.conf: daxctl will reconfigure it "
                            "(respect_daxctl=yes); memonlined onlines its memory (online=false)");

        fake_write(c->root, "daxctl.conf.d/pmem.conf",
                   "[reconfigure-device ns1]\nnvdimm.uuid = " UUID_DAX1 "\nmode = system-ram\n");
        assert_int_equal(pmem_decide(dev, &p, dir, &d), 0);
        assert_int_equal(d.action, PMEM_ACTION_SKIP);
        assert_true(strstr(d.reason, "daxctl onlines its memory itself (online=true)") != NULL);

        fake_write(c->root, "daxctl.conf.d/pmem.conf",
                   "[reconfigure-device ns1]\nnvdimm.uuid = " UUID_DAX1 "\nmode = devdax\n");
        decide_expect(dev, &p, dir, &d, PMEM_ACTION_SKIP, "claimed by daxctl.conf.d/pmem.conf: daxctl keeps it devdax (respect_daxctl=yes)");

        /* respect_daxctl=no: we convert and say daxctl is also on it. */
        p.respect_daxctl = false;
        assert_int_equal(pmem_decide(dev, &p, dir, &d), 0);
        assert_int_equal(d.action, PMEM_ACTION_CONVERT);
        assert_true(d.daxctl_claimed);
        assert_true(startswith(d.reason, "convert_devdax=yes; daxctl.conf.d/pmem.conf also claims it (respect_daxctl=no)"));

        /* A claim for another uuid, or a malformed file, changes nothing. */
        p.respect_daxctl = true;
        fake_write(c->root, "daxctl.conf.d/pmem.conf",
                   "[reconfigure-device ns1]\nnvdimm.uuid = " UUID_DAX0 "\nmode = system-ram\n");
        fake_write(c->root, "daxctl.conf.d/zz.conf",
                   "[reconfigure-device ns1]\nnvdimm.uuid = " UUID_DAX1 "\nmode = system-ram\ngarbage\n");
        assert_int_equal(pmem_decide(dev, &p, dir, &d), 0);
        assert_int_equal(d.action, PMEM_ACTION_CONVERT);
        assert_false(d.daxctl_claimed);
        assert_string_equal(d.reason, "convert_devdax=yes");

        /* Not convertible anyway: the claim is not even looked at. */
        p.convert_devdax = false;
        assert_int_equal(pmem_decide(dev, &p, dir, &d), 0);
        assert_string_equal(d.reason, "convert_devdax=no");
}

static void test_decide_bad_media(void **state) {
        struct ctx *c = *state;
        struct pmem_device *dev = scan_one(c, &devdax1);
        struct policy p = base_policy();
        struct device_rule rules[2] = { rule("no"), rule("yes") };
        struct pmem_decision d;
        char buf[16];

        dev->bad_sectors = 16;
        dev->first_bad = 9 * GiB;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP,
                      "refused: 16 bad 512-byte sectors in its memory, the first at 0x240000000 (region1 badblocks); "
                      "a [device] rule with allow_badblocks = yes converts it anyway");
        assert_int_equal(d.media, BAD_MEDIA_REFUSED);
        assert_null(d.media_rule);
        assert_int_equal(d.zone, ZONE_SKIP);
        pmem_bad_sectors_format(dev, buf, sizeof(buf));
        assert_string_equal(buf, "16");

        /* The first matching rule that sets allow_badblocks decides. */
        p.devices = rules;
        p.n_devices = 2;
        rules[0].region = 1;
        rules[0].allow_badblocks = 0;
        rules[1].allow_badblocks = 1;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP,
                      "refused: 16 bad 512-byte sectors in its memory, the first at 0x240000000 (region1 badblocks); "
                      "device rule no says allow_badblocks = no");
        assert_ptr_equal(d.media_rule, &rules[0]);
        rules[0].region = 0;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_CONVERT,
                      "convert_devdax=yes; 16 bad sectors: device rule yes says allow_badblocks = yes");
        assert_int_equal(d.media, BAD_MEDIA_ALLOWED);
        assert_int_equal(d.zone, ZONE_MOVABLE);

        /* A list that cannot be read whole: undecided; at least what it shows is refused. */
        p.n_devices = 0;
        dev->bad_sectors = 0;
        dev->badblocks_error = -E2BIG;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP,
                      "undecided: the bad blocks of region1 cannot be known (the region's badblocks list is incomplete "
                      "(cut at a page, or the kernel's table is full)); a [device] rule with allow_badblocks = yes "
                      "converts it anyway");
        assert_int_equal(d.media, BAD_MEDIA_UNKNOWN);
        pmem_bad_sectors_format(dev, buf, sizeof(buf));
        assert_string_equal(buf, "?");
        dev->bad_sectors = 8;
        assert_int_equal(pmem_decide(dev, &p, NULL, &d), 0);
        assert_int_equal(d.media, BAD_MEDIA_REFUSED);
        assert_non_null(strstr(d.reason, "refused: 8 or more bad 512-byte sectors"));
        pmem_bad_sectors_format(dev, buf, sizeof(buf));
        assert_string_equal(buf, "8+");
        p.devices = rules;
        p.n_devices = 2;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_CONVERT,
                      "convert_devdax=yes; 8 or more bad sectors: device rule yes says allow_badblocks = yes");
        dev->bad_sectors = 0;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_CONVERT,
                      "convert_devdax=yes; bad blocks unknown: device rule yes says allow_badblocks = yes");

        /* A device the policy would not convert anyway is not judged on its media. */
        p.n_devices = 0;
        p.convert_devdax = false;
        decide_expect(dev, &p, NULL, &d, PMEM_ACTION_SKIP, "convert_devdax=no");
        assert_int_equal(d.media, BAD_MEDIA_NONE);
}

static void test_print_decisions(void **state) {
        struct ctx *c = *state;
        struct fake_dax hm = devdax1;
        struct policy p = base_policy();
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        char dir[512];
        FILE *f;

        struct fake_dax bad = devdax1;

        hm.no_nd = true;
        hm.region = 5;
        hm.target_node = -1;
        bad.region = 6;
        bad.start = 16 * GiB;
        bad.badblocks = "8 8\n";
        add_dax(c, &kmem0);
        add_dax(c, &devdax1);
        add_dax(c, &hm);
        add_dax(c, &bad);
        assert_int_equal(pmem_scan(c->root, &c->devs), 4);
        snprintf(dir, sizeof(dir), "%s/daxctl.conf.d", c->root);
        fake_write(c->root, "daxctl.conf.d/x.conf", "[reconfigure-device q]\nmode = system-ram\n");

        f = open_memstream(&buf, &size);
        assert_non_null(f);
        assert_int_equal(pmem_print_decisions(&c->devs, &p, dir, f), 0);
        assert_int_equal(fclose(f), 0);
        assert_string_equal(buf,
                "device=dax0.0 action=skip zone=online_movable reason=\"not devdax (mode system-ram)\" "
                "namespace=namespace0.0 region=0 node=2 size=1073741824 mode=system-ram "
                "memmap_on_memory=unsupported\n"
                "device=dax1.0 action=convert zone=online_movable reason=\"convert_devdax=yes\" "
                "namespace=namespace1.0 region=1 node=2 size=2147483648 mode=devdax memmap_on_memory=unsupported\n"
                "device=dax5.0 action=skip zone=online_movable reason=\"not on a pmem region (convert_devdax "
                "covers pmem; add a [device] rule with convert=yes)\" namespace=- region=-1 node=-1 "
                "size=2147483648 mode=devdax memmap_on_memory=unsupported\n"
                "device=dax6.0 action=skip zone=skip reason=\"refused: 8 bad 512-byte sectors in its memory, the "
                "first at 0x400001000 (region6 badblocks); a [device] rule with allow_badblocks = yes converts it "
                "anyway\" namespace=namespace6.0 region=6 node=2 size=2147483648 mode=devdax "
                "memmap_on_memory=unsupported badblocks=8\n"
                "daxctl-conf-ignored=\"daxctl.conf.d/x.conf: [reconfigure-device q] has no nvdimm.uuid: "
                "daxctl never matches it\"\n");
}

/* ---- bad blocks ------------------------------------------------------------ */

/* dax1.0's region starts 2 MiB below it: the namespace's info block and reserve. */
#define REGION1 (8 * GiB - 2 * MiB)
/* The region-relative sector of a physical address in region1. */
#define SECTOR1(addr) (((addr) - REGION1) / 512)

static int parse(const char *text, size_t page_size, struct pmem_badblocks *bb) {
        return pmem_badblocks_parse(text, strlen(text), page_size, bb);
}

static void test_badblocks_parse(void **state) {
        _cleanup_(pmem_badblocks_clearp) struct pmem_badblocks bb = {};

        (void) state;
        /* As badblocks_show() writes them: ascending, adjacent extents apart. */
        assert_int_equal(parse("", 4096, &bb), 0);
        assert_int_equal(bb.n, 0);
        assert_false(bb.incomplete);
        assert_int_equal(parse("8 8\n16 512\n4096 1\n", 4096, &bb), 0);
        assert_int_equal(bb.n, 3);
        assert_int_equal(bb.extents[1].sector, 16);
        assert_int_equal(bb.extents[1].count, 512);
        assert_false(bb.incomplete);
        assert_int_equal(parse("0 4294967295\n", 4096, &bb), 0);
        /* The largest extent whose end in bytes still fits in 64 bits. */
        assert_int_equal(parse("36028797018963966 1\n", 4096, &bb), 0);

        /* Garbage of every kind is no list, and bb keeps the last one read. */
        static const char *const bad[] = {
                "x\n", "8\n", "8 \n", " 8 8\n", "8  8\n", "8\t8\n", "8 8 \n", "8 8 8\n", "+8 8\n", "-8 8\n",
                "8 -1\n", "0x8 8\n", "8 8",                    /* no newline, not cut at a page */
                "8 0\n",                                         /* a count of nothing */
                "8 4294967296\n",                                /* past the kernel's %u */
                "18446744073709551616 1\n",                      /* past 64 bits */
                "99999999999999999999999 1\n",
                "36028797018963967 1\n",                         /* ends at 2^64 bytes */
                "18446744073709551615 4294967295\n",             /* start + count wraps */
                "16 8\n8 8\n",                                  /* out of order */
                "8 16\n16 8\n",                                 /* overlapping */
                "\n", "8 8\n\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = parse(bad[i], 4096, &bb);

                if (r != -EBADMSG)
                        fail_msg("\"%s\": %d, want -EBADMSG", bad[i], r);
                assert_int_equal(bb.n, 1);      /* untouched */
        }
        assert_int_equal(pmem_badblocks_parse("8 8\n\0", 5, 4096, &bb), -EBADMSG);
        assert_int_equal(pmem_badblocks_parse("8 8\n", 4, 32, &bb), -EINVAL);
        assert_int_equal(pmem_badblocks_parse(NULL, 1, 4096, &bb), -EINVAL);
        assert_int_equal(pmem_badblocks_parse(NULL, 0, 4096, &bb), 0);
}

/* The kernel's limits: one page of text (sysfs cuts the rest), page_size / 8 extents. */
static void test_badblocks_incomplete(void **state) {
        _cleanup_(pmem_badblocks_clearp) struct pmem_badblocks bb = {};
        char text[4096 + 64];
        size_t len = 0;

        (void) state;
        /* Cut mid-line at page_size - 1: the partial line is dropped, the list is incomplete. */
        for (unsigned i = 0; len < 4095; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, "%u 1\n", 1000000 + 2 * i);
        assert_int_equal(pmem_badblocks_parse(text, 4095, 4096, &bb), 0);
        assert_true(bb.incomplete);
        assert_int_equal(bb.n, 4095 / 10);      /* "1000000 1\n" is 10 bytes: 409 whole lines */
        assert_int_equal(bb.extents[bb.n - 1].sector, 1000000 + 2 * (bb.n - 1));
        /* A page's worth or more is not what sysfs hands out. */
        assert_int_equal(pmem_badblocks_parse(text, 4096, 4096, &bb), -EBADMSG);
        /* Ending on a whole line at page_size - 1 may still have been cut. */
        assert_int_equal(pmem_badblocks_parse(text, 4090, 4096, &bb), 0);
        assert_false(bb.incomplete);
        assert_int_equal(pmem_badblocks_parse(text, 4090, 4091, &bb), 0);
        assert_true(bb.incomplete);

        /* A full table: 512 extents on 4 KiB pages record no more. */
        len = 0;
        for (unsigned i = 0; i < 512; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, "%u 1\n", 2 * i);
        assert_true(len < 4095);
        assert_int_equal(pmem_badblocks_parse(text, len, 4096, &bb), 0);
        assert_int_equal(bb.n, 512);
        assert_true(bb.incomplete);
        len -= strlen("1022 1\n");
        assert_int_equal(pmem_badblocks_parse(text, len, 4096, &bb), 0);
        assert_int_equal(bb.n, 511);
        assert_false(bb.incomplete);
}

static void test_badblocks_in_ranges(void **state) {
        _cleanup_(pmem_badblocks_clearp) struct pmem_badblocks bb = {};
        const struct pmem_range dev[] = { { 8 * GiB, 10 * GiB } };
        const struct pmem_range split[] = { { 12 * GiB, 12 * GiB + 4096 }, { 8 * GiB, 8 * GiB + 4096 } };
        uint64_t sectors, first;
        char text[256];

        (void) state;
        /* Below the device (its info block), and ending right at its start: none of its memory. */
        snprintf(text, sizeof(text), "0 8\n%llu 8\n", (unsigned long long) SECTOR1(8 * GiB - 4096));
        assert_int_equal(parse(text, 4096, &bb), 0);
        assert_int_equal(pmem_badblocks_in_ranges(&bb, REGION1, dev, 1, &sectors, &first), 0);
        assert_int_equal(sectors, 0);
        assert_int_equal(first, UINT64_MAX);

        /* Its first sector, its last, and an extent across its end: only what is inside counts. */
        snprintf(text, sizeof(text), "%llu 1\n%llu 1\n%llu 8\n", (unsigned long long) SECTOR1(8 * GiB),
                 (unsigned long long) SECTOR1(10 * GiB - 1024), (unsigned long long) SECTOR1(10 * GiB - 512));
        assert_int_equal(parse(text, 4096, &bb), 0);
        assert_int_equal(pmem_badblocks_in_ranges(&bb, REGION1, dev, 1, &sectors, &first), 0);
        assert_int_equal(sectors, 3);
        assert_int_equal(first, 8 * GiB);

        /* Ranges in any order; a gap between them holds nothing of the device. */
        snprintf(text, sizeof(text), "%llu 16\n%llu 16\n", (unsigned long long) SECTOR1(8 * GiB + 2048),
                 (unsigned long long) SECTOR1(12 * GiB));
        assert_int_equal(parse(text, 4096, &bb), 0);
        assert_int_equal(pmem_badblocks_in_ranges(&bb, REGION1, split, 2, &sectors, &first), 0);
        assert_int_equal(sectors, 4 + 8);
        assert_int_equal(first, 8 * GiB + 2048);

        /* A region start that pushes an extent past 2^64. */
        assert_int_equal(parse("0 8\n", 4096, &bb), 0);
        assert_int_equal(pmem_badblocks_in_ranges(&bb, UINT64_MAX - 2048, dev, 1, &sectors, &first), -ERANGE);
        assert_int_equal(pmem_badblocks_in_ranges(&bb, UINT64_MAX - 4096, dev, 1, &sectors, &first), 0);
        assert_int_equal(sectors, 0);
}

static const struct pmem_device *scan_bad(struct ctx *c, const char *badblocks) {
        struct fake_dax d = devdax1;

        d.region_start = REGION1;
        d.badblocks = badblocks;
        add_dax(c, &d);
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        return &c->devs.devices[0];
}

static void test_scan_badblocks(void **state) {
        struct ctx *c = *state;
        const struct pmem_device *d;
        char text[128];

        /* The kernel's empty list: nothing bad, and the region's start is not even needed. */
        d = scan_bad(c, "");
        assert_int_equal(d->bad_sectors, 0);
        assert_int_equal(d->badblocks_error, 0);

        snprintf(text, sizeof(text), "0 8\n%llu 16\n", (unsigned long long) SECTOR1(9 * GiB));
        d = scan_bad(c, text);
        assert_int_equal(d->bad_sectors, 16);
        assert_int_equal(d->first_bad, 9 * GiB);
        assert_int_equal(d->badblocks_error, 0);

        /* What the region's list cannot tell: unknown, never "none". */
        d = scan_bad(c, "0 8 junk\n");
        assert_int_equal(d->badblocks_error, -EBADMSG);
        assert_int_equal(d->bad_sectors, 0);
        fake_unlink(c->root, "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region1/badblocks");
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_int_equal(c->devs.devices[0].badblocks_error, -ENOENT);
        /* A file that cannot be read. */
        fake_mkdir(c->root, "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region1/badblocks");
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_int_equal(c->devs.devices[0].badblocks_error, -EISDIR);
        fake_rmdir(c->root, "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region1/badblocks");
        /* Bad blocks listed, but no region start to place them. */
        d = scan_bad(c, text);
        fake_unlink(c->root, "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region1/resource");
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_int_equal(c->devs.devices[0].badblocks_error, -ENOENT);
        assert_string_equal(pmem_badblocks_describe(-EBADMSG),
                            "the region's badblocks list is not as the kernel writes it");
        assert_string_equal(pmem_badblocks_describe(-EISDIR), "Is a directory");
}

/*
 * A device kept between batches (pmem_scan_update()) has its region's list
 * read again every time: poison that came (an MCE) or was cleared
 * (ndctl clear-errors) without an event is seen before the next plan.
 */
static void test_scan_update_reads_badblocks(void **state) {
        struct ctx *c = *state;
        const char *bb = "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region1/badblocks";
        uint64_t ino;

        scan_bad(c, "");
        ino = c->devs.devices[0].ino;
        assert_int_equal(c->devs.devices[0].bad_sectors, 0);
        fake_write(c->root, bb, "%llu 8\n", (unsigned long long) SECTOR1(9 * GiB));
        assert_int_equal(pmem_scan_update(c->root, &c->devs), 1);
        /* the same device, kept, not read whole */
        assert_int_equal(c->devs.devices[0].ino, ino);
        assert_int_equal(c->devs.devices[0].bad_sectors, 8);
        assert_int_equal(c->devs.devices[0].first_bad, 9 * GiB);
        /* unreadable now: unknown, not the old answer */
        fake_write(c->root, bb, "8 x\n");
        assert_int_equal(pmem_scan_update(c->root, &c->devs), 1);
        assert_int_equal(c->devs.devices[0].badblocks_error, -EBADMSG);
        /* cleared */
        fake_write(c->root, bb, "%s", "");
        assert_int_equal(pmem_scan_update(c->root, &c->devs), 1);
        assert_int_equal(c->devs.devices[0].bad_sectors, 0);
        assert_int_equal(c->devs.devices[0].badblocks_error, 0);
}

/* Devices on no nd region have no list: nothing known, nothing unknown. */
static void test_scan_badblocks_not_nd(void **state) {
        struct ctx *c = *state;
        struct fake_dax hm = devdax1;
        char buf[16];

        hm.no_nd = true;
        add_dax(c, &hm);
        assert_int_equal(pmem_scan(c->root, &c->devs), 1);
        assert_int_equal(c->devs.devices[0].badblocks_error, 0);
        assert_int_equal(c->devs.devices[0].bad_sectors, 0);
        pmem_bad_sectors_format(&c->devs.devices[0], buf, sizeof(buf));
        assert_string_equal(buf, "-");
}

/* ---- report and convert --------------------------------------------------- */

static void test_report_device(void **state) {
        struct ctx *c = *state;
        struct pmem_device *dev = scan_one(c, &kmem0);
        struct pmem_convert_result conv = { .bind_usec = 1500, .mode_after = PMEM_MODE_SYSTEM_RAM };
        _cleanup_free_ char *buf = NULL;
        struct reporter r;
        size_t size = 0;

        reporter_init(&r, LOG_TARGET_CONSOLE);
        r.out = open_memstream(&buf, &size);
        assert_non_null(r.out);
        assert_int_equal(pmem_report_device(&r, dev, &conv, 250000, 260000, 8, GiB), 0);
        conv.error = -EBUSY;
        assert_int_equal(pmem_report_device(&r, dev, &conv, 0, 10, 0, 0), 0);
        assert_int_equal(pmem_report_device(&r, dev, NULL, 1000, 2000, 1, BS), 0);
        assert_int_equal(fclose(r.out), 0);

        char *l1 = buf, *l2 = strchr(l1, '\n'), *l3;
        assert_non_null(l2);
        *l2++ = '\0';
        l3 = strchr(l2, '\n');
        assert_non_null(l3);
        *l3++ = '\0';

        assert_non_null(strstr(l1, "MESSAGE_ID=" MESSAGE_ID_DEVICE));
        assert_non_null(strstr(l1, " MEMONLINE_DEVICE=dax0.0"));
        assert_non_null(strstr(l1, " MEMONLINE_NAMESPACE=namespace0.0"));
        assert_non_null(strstr(l1, " MEMONLINE_REGION=0"));
        assert_non_null(strstr(l1, " MEMONLINE_NODE=2"));
        assert_non_null(strstr(l1, " MEMONLINE_BIND_USEC=1500"));
        assert_non_null(strstr(l1, " MEMONLINE_ONLINE_USEC=250000"));
        assert_non_null(strstr(l1, " MEMONLINE_TOTAL_USEC=260000"));
        assert_non_null(strstr(l1, " MEMONLINE_BLOCKS=8"));
        assert_non_null(strstr(l1, " MEMONLINE_BYTES=1073741824"));
        assert_non_null(strstr(l1, "converted to system-ram in 1.5 ms, 8 blocks (1.00 GiB) online on node 2"));
        assert_null(strstr(l1, "MEMONLINE_ERRNO"));

        assert_non_null(strstr(l2, " MEMONLINE_ERRNO=16"));
        assert_non_null(strstr(l2, " PRIORITY=3"));        /* err: the memory stays unused */
        assert_non_null(strstr(l2, "conversion to system-ram failed"));

        /* Converted by someone else: no bind time of ours. */
        assert_non_null(strstr(l3, " MEMONLINE_BIND_USEC=0"));
        assert_null(strstr(l3, "converted to system-ram in"));
        assert_non_null(strchr(l3, '\n'));
        assert_string_equal(strchr(l3, '\n'), "\n");
}

static void test_report_bad_media(void **state) {
        struct ctx *c = *state;
        struct pmem_device *dev = scan_one(c, &devdax1);
        _cleanup_free_ char *buf = NULL;
        struct reporter r;
        size_t size = 0;
        char *l2;

        dev->bad_sectors = 16;
        dev->first_bad = 9 * GiB;
        reporter_init(&r, LOG_TARGET_CONSOLE);
        r.out = open_memstream(&buf, &size);
        assert_non_null(r.out);
        assert_int_equal(pmem_report_bad_media(&r, dev, BAD_MEDIA_REFUSED, 0, "refused: why"), 0);
        dev->mode = PMEM_MODE_SYSTEM_RAM;
        dev->badblocks_error = -E2BIG;
        assert_int_equal(pmem_report_bad_media(&r, dev, BAD_MEDIA_REFUSED, 8, "bad media: why"), 0);
        assert_int_equal(pmem_report_bad_media(&r, dev, BAD_MEDIA_ALLOWED, 8, "x"), -EINVAL);
        assert_int_equal(fclose(r.out), 0);

        l2 = strchr(buf, '\n');
        assert_non_null(l2);
        *l2++ = '\0';
        assert_non_null(strstr(buf, "MESSAGE_ID=" MESSAGE_ID_BAD_MEDIA));
        assert_non_null(strstr(buf, " PRIORITY=4"));
        assert_non_null(strstr(buf, " MEMONLINE_DEVICE=dax1.0 MEMONLINE_NAMESPACE=namespace1.0"));
        assert_non_null(strstr(buf, " MEMONLINE_REGION=1 MEMONLINE_NODE=2 MEMONLINE_MODE=devdax MEMONLINE_MEDIA=refused "
                                    "MEMONLINE_BADBLOCKS=16 MEMONLINE_BAD_ADDRESS=0x240000000 MEMONLINE_BLOCKS=0 "));
        assert_null(strstr(buf, "MEMONLINE_ERRNO"));
        assert_non_null(strstr(buf, "dax1.0 (namespace1.0): not converted to system-ram: refused: why"));
        assert_non_null(strstr(l2, " MEMONLINE_MODE=system-ram "));
        assert_non_null(strstr(l2, " MEMONLINE_BLOCKS=8 MEMONLINE_ERRNO=7 "));
        assert_non_null(strstr(l2, "dax1.0 (namespace1.0): 8 blocks left offline: bad media: why"));
}

static void test_convert_errors(void **state) {
        struct pmem_convert_result res;

        /* Bad names never reach libdaxctl. */
        assert_int_equal(pmem_convert("/sys", "memory12", MEMMAP_KEEP, &res), -EINVAL);
        assert_int_equal(res.error, -EINVAL);
        assert_non_null(strstr(res.reason, "not a dax device name"));
        assert_int_equal(pmem_convert("/sys", NULL, MEMMAP_KEEP, &res), -EINVAL);

        /* Only reads /sys: no dax device has this name on any machine we run tests on. */
        int r = pmem_convert("/sys/", "dax4095.4095", MEMMAP_KEEP, &res);
        if (r != -ENOENT)
                skip();         /* libdaxctl cannot start here (no kmod); nothing to assert */
        assert_int_equal(res.error, -ENOENT);
        assert_non_null(strstr(res.reason, "dax4095.4095: no such dax device"));
        assert_false(res.already);
        assert_int_equal(res.bind_usec, 0);
}

/* libdaxctl acts on the real /sys whatever the root: a test tree's device is refused, not looked up there. */
static void test_convert_other_root(void **state) {
        struct ctx *c = *state;
        struct pmem_convert_result res;
        struct fake_dax dev = devdax1;
        _cleanup_free_ char *missing = NULL;

        dev.region = 4095;
        dev.id = 4095;
        add_dax(c, &dev);
        memset(&res, 0x55, sizeof(res));
        assert_int_equal(pmem_convert(c->root, "dax4095.4095", MEMMAP_KEEP, &res), -EXDEV);
        assert_int_equal(res.error, -EXDEV);
        assert_non_null(strstr(res.reason, "only the real /sys"));
        assert_non_null(strstr(res.reason, c->root));
        assert_int_equal(res.mode_before, PMEM_MODE_UNKNOWN);
        assert_int_equal(res.bind_usec, 0);

        assert_true(asprintf(&missing, "%s/no-such-dir", c->root) > 0);
        assert_int_equal(pmem_convert(missing, "dax4095.4095", MEMMAP_KEEP, &res), -ENOENT);
        assert_non_null(strstr(res.reason, "no-such-dir"));
        assert_int_equal(pmem_convert(NULL, "dax4095.4095", MEMMAP_KEEP, &res), -EINVAL);
}

static void test_strings(void **state) {
        assert_string_equal(pmem_action_to_string(PMEM_ACTION_CONVERT), "convert");
        assert_string_equal(pmem_action_to_string(PMEM_ACTION_SKIP), "skip");
        assert_string_equal(pmem_mode_to_string(PMEM_MODE_UNKNOWN), "unknown");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_scan_fields, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_order, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_namespace_from_nd_dax, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_not_nd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_convert_other_root, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_target_node_out_of_range, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_pmem_from_nstype, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_modes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_mappings, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_no_dax_bus, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_removed_device, setup, teardown),
                cmocka_unit_test(test_badblocks_parse),
                cmocka_unit_test(test_badblocks_incomplete),
                cmocka_unit_test(test_badblocks_in_ranges),
                cmocka_unit_test_setup_teardown(test_scan_badblocks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_badblocks_not_nd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_update_keeps_bound, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_update_sees_changes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_scan_update_reads_badblocks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_attribute_blocks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_attribute_partial_and_split, setup, teardown),
                cmocka_unit_test_setup_teardown(test_attribute_many, setup, teardown),
                cmocka_unit_test_setup_teardown(test_daxctl_conf_parse, setup, teardown),
                cmocka_unit_test_setup_teardown(test_daxctl_conf_missing_dir, setup, teardown),
                cmocka_unit_test_setup_teardown(test_daxctl_conf_iniparser, setup, teardown),
                cmocka_unit_test_setup_teardown(test_daxctl_conf_duplicate_claims, setup, teardown),
                cmocka_unit_test_setup_teardown(test_decide_defaults, setup, teardown),
                cmocka_unit_test_setup_teardown(test_decide_not_devdax, setup, teardown),
                cmocka_unit_test_setup_teardown(test_decide_rules, setup, teardown),
                cmocka_unit_test_setup_teardown(test_decide_pmem_only, setup, teardown),
                cmocka_unit_test_setup_teardown(test_decide_excluded, setup, teardown),
                cmocka_unit_test_setup_teardown(test_decide_daxctl, setup, teardown),
                cmocka_unit_test_setup_teardown(test_decide_bad_media, setup, teardown),
                cmocka_unit_test_setup_teardown(test_print_decisions, setup, teardown),
                cmocka_unit_test_setup_teardown(test_report_device, setup, teardown),
                cmocka_unit_test_setup_teardown(test_report_bad_media, setup, teardown),
                cmocka_unit_test_setup_teardown(test_convert_errors, setup, teardown),
                cmocka_unit_test(test_strings),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
