/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Memory devices on fake trees: ACPI DIMMs from physical_node links,
 * virtio-mem from iomem and the virtio bus, lookups, and hostile input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "fake-tree.h"
#include "memdev.h"
#include "pmem.h"
#include "util.h"

#define BS (128ULL << 20)

static int setup(void **state) {
        char *root = fake_tree_new();

        fake_standard_machine(root);
        *state = root;
        return 0;
}

static int teardown(void **state) {
        fake_tree_free(*state);
        return 0;
}

static void test_acpi(void **state) {
        const char *root = *state;
        struct memdev_set s = {};
        const struct memdev *d;

        fake_add_acpi_dimm(root, "PNP0C80:00", 32, 8);
        fake_add_acpi_dimm(root, "PNP0C80:01", 48, 4);
        /* No memory of its own (yet): left out. The NVDIMM root is not a memory device. */
        fake_mkdir(root, "bus/acpi/devices/PNP0C80:02");
        fake_mkdir(root, "bus/acpi/devices/ACPI0012:00");
        /* A physical node that is not a memory block is not counted. */
        fake_symlink(root, "bus/acpi/devices/PNP0C80:01/physical_node9", "../../../../devices/platform/foo");

        assert_int_equal(memdev_scan_acpi(root, BS, NULL, &s), 0);
        assert_int_equal(memdev_set_seal(&s), 0);
        assert_int_equal(s.n, 2);
        d = memdev_find(&s, 35 * BS, BS);
        assert_non_null(d);
        assert_string_equal(d->name, "PNP0C80:00");
        assert_int_equal(d->kind, MEMDEV_ACPI);
        assert_false(d->dynamic);
        assert_int_equal(d->start, 32 * BS);
        assert_int_equal(d->end, 40 * BS);
        assert_string_equal(memdev_find(&s, 51 * BS, BS)->name, "PNP0C80:01");
        assert_null(memdev_find(&s, 40 * BS, BS));      /* between the two */
        assert_null(memdev_find(&s, 8 * BS, BS));       /* boot memory */
        assert_null(memdev_find(&s, 39 * BS, 2 * BS));  /* straddles the end */
        assert_string_equal(memdev_kind_to_string(d->kind), "dimm");
        assert_string_equal(memdev_kind_to_string(MEMDEV_NONE), "boot");
        assert_string_equal(memdev_kind_to_string(MEMDEV_VIRTIO_MEM), "virtio-mem");
        assert_string_equal(memdev_kind_to_string(_MEMDEV_KIND_MAX), "unknown");
        memdev_set_clear(&s);
}

/* PNP0C80:00, read with cache into a fresh set, spans blocks first to end (exclusive). */
static void assert_acpi_span(const char *root, struct acpi_span_cache *cache, uint64_t first, uint64_t end) {
        struct memdev_set s = {};
        const struct memdev *d;

        assert_int_equal(memdev_scan_acpi(root, BS, cache, &s), 0);
        assert_int_equal(memdev_set_seal(&s), 0);
        assert_int_equal(s.n, 1);
        d = &s.devs[0];
        assert_string_equal(d->name, "PNP0C80:00");
        assert_int_equal(d->start, first * BS);
        assert_int_equal(d->end, end * BS);
        memdev_set_clear(&s);
}

/* Point PNP0C80:00's physical_node link INDEX at DEVICE (beneath devices/). */
static void relink(const char *root, unsigned index, const char *device) {
        char rel[64], target[96];

        snprintf(rel, sizeof(rel), index ? "bus/acpi/devices/PNP0C80:00/physical_node%u" :
                 "bus/acpi/devices/PNP0C80:00/physical_node", index);
        snprintf(target, sizeof(target), "../../../../devices/%s", device);
        fake_unlink(root, rel);
        fake_symlink(root, rel, target);
}

/*
 * Each batch asks for the DIMMs again: a DIMM whose link 0 and link n-1
 * name the blocks they did, with no link n, keeps its span without
 * listing the device or reading a link per block; a change in any of
 * them reads it again.
 */
static void test_acpi_span_cache(void **state) {
        const char *root = *state;
        struct acpi_span_cache cache = {};
        fake_add_acpi_dimm(root, "PNP0C80:00", 32, 8);
        assert_acpi_span(root, &cache, 32, 40);
        assert_int_equal(cache.n, 1);
        assert_int_equal(cache.spans[0].n_links, 8);
        assert_int_equal(cache.spans[0].first_link_block, 32);
        assert_int_equal(cache.spans[0].last_link_block, 39);

        /*
         * The cache answers without listing the device: an entry that only
         * a listing would count, and a middle link bent elsewhere (the
         * kernel never does that), change nothing. Without the cache the
         * count no longer fits the ends, so every link is read.
         */
        fake_write(root, "bus/acpi/devices/PNP0C80:00/physical_node_stray", "%s", "stray");
        relink(root, 3, "system/memory/memory60");
        assert_acpi_span(root, &cache, 32, 40);
        assert_acpi_span(root, NULL, 32, 61);
        fake_unlink(root, "bus/acpi/devices/PNP0C80:00/physical_node_stray");
        relink(root, 3, "system/memory/memory35");

        /* The last link bent elsewhere: read again, link by link (the ends no longer fit). */
        relink(root, 7, "system/memory/memory60");
        assert_acpi_span(root, &cache, 32, 61);
        assert_int_equal(cache.spans[0].last_link_block, 60);
        relink(root, 7, "system/memory/memory39");
        assert_acpi_span(root, &cache, 32, 40);

        /* One more link (a DIMM still binding): read again. */
        fake_add_acpi_dimm(root, "PNP0C80:00", 32, 9);
        assert_acpi_span(root, &cache, 32, 41);
        assert_int_equal(cache.spans[0].n_links, 9);

        /* As many links, but the slot refilled elsewhere: the first link says so. */
        for (unsigned i = 0; i < 9; i++) {
                char rel[64];

                snprintf(rel, sizeof(rel), i ? "bus/acpi/devices/PNP0C80:00/physical_node%u" :
                         "bus/acpi/devices/PNP0C80:00/physical_node", i);
                fake_unlink(root, rel);
        }
        fake_add_acpi_dimm(root, "PNP0C80:00", 80, 9);
        assert_acpi_span(root, &cache, 80, 89);
        assert_int_equal(cache.n, 1);
        acpi_span_cache_clear(&cache);
        assert_int_equal(cache.n, 0);
}

/*
 * Most ACPI memory devices are empty slots: one readlink of link 0 tells,
 * since the kernel gives each block it binds the lowest free index. Only
 * while it removes a DIMM's blocks (from link 0 up) is link 0 gone before
 * the others: a device known with memory is then listed and read whole,
 * and forgotten once it has none.
 */
static void test_acpi_empty_slots(void **state) {
        const char *root = *state;
        struct acpi_span_cache cache = {};
        struct memdev_set s = {};

        fake_mkdir(root, "bus/acpi/devices/PNP0C80:01");
        fake_mkdir(root, "bus/acpi/devices/PNP0C80:02");
        fake_add_acpi_dimm(root, "PNP0C80:00", 32, 8);
        assert_acpi_span(root, &cache, 32, 40);
        assert_int_equal(cache.n, 1);

        /* Being removed: link 0 and 1 gone first. The rest still make the span. */
        fake_unlink(root, "bus/acpi/devices/PNP0C80:00/physical_node");
        fake_unlink(root, "bus/acpi/devices/PNP0C80:00/physical_node1");
        assert_acpi_span(root, &cache, 34, 40);
        assert_int_equal(cache.n, 1);
        assert_int_equal(cache.spans[0].n_links, 6);

        /* All gone: no device, and nothing kept of it. */
        for (unsigned i = 2; i < 8; i++) {
                char rel[64];

                snprintf(rel, sizeof(rel), "bus/acpi/devices/PNP0C80:00/physical_node%u", i);
                fake_unlink(root, rel);
        }
        assert_int_equal(memdev_scan_acpi(root, BS, &cache, &s), 0);
        assert_int_equal(s.n, 0);
        assert_int_equal(cache.n, 0);

        /* Link 0 naming no memory block (hostile or odd): listed and read link by link, as before. */
        fake_add_acpi_dimm(root, "PNP0C80:02", 96, 4);
        fake_unlink(root, "bus/acpi/devices/PNP0C80:02/physical_node");
        fake_symlink(root, "bus/acpi/devices/PNP0C80:02/physical_node", "../../../../devices/platform/foo");
        assert_int_equal(memdev_scan_acpi(root, BS, &cache, &s), 0);
        assert_int_equal(memdev_set_seal(&s), 0);
        assert_int_equal(s.n, 1);
        assert_string_equal(s.devs[0].name, "PNP0C80:02");
        assert_int_equal(s.devs[0].start, 97 * BS);
        assert_int_equal(s.devs[0].end, 100 * BS);
        memdev_set_clear(&s);
        for (unsigned i = 0; i < 4; i++) {
                char rel[64];

                snprintf(rel, sizeof(rel), i ? "bus/acpi/devices/PNP0C80:02/physical_node%u" :
                         "bus/acpi/devices/PNP0C80:02/physical_node", i);
                fake_unlink(root, rel);
        }
        assert_int_equal(memdev_scan_acpi(root, BS, &cache, &s), 0);
        assert_int_equal(s.n, 0);
        assert_int_equal(cache.n, 0);

        /* A slot never seen with memory whose link 0 is missing is taken as empty (the kernel binds 0 first). */
        fake_symlink(root, "bus/acpi/devices/PNP0C80:01/physical_node1", "../../../../devices/system/memory/memory70");
        assert_int_equal(memdev_scan_acpi(root, BS, &cache, &s), 0);
        assert_int_equal(s.n, 0);

        /* Its link 0 bound: read, and the new DIMM in another slot too. */
        fake_symlink(root, "bus/acpi/devices/PNP0C80:01/physical_node", "../../../../devices/system/memory/memory69");
        fake_add_acpi_dimm(root, "PNP0C80:02", 96, 4);
        assert_int_equal(memdev_scan_acpi(root, BS, &cache, &s), 0);
        assert_int_equal(memdev_set_seal(&s), 0);
        assert_int_equal(s.n, 2);
        assert_string_equal(memdev_find(&s, 70 * BS, BS)->name, "PNP0C80:01");
        assert_int_equal(memdev_find(&s, 70 * BS, BS)->start, 69 * BS);
        assert_string_equal(memdev_find(&s, 99 * BS, BS)->name, "PNP0C80:02");
        assert_int_equal(cache.n, 2);
        memdev_set_clear(&s);
        acpi_span_cache_clear(&cache);
}

/*
 * The kernel binds a DIMM's blocks in ascending order, each to the lowest
 * free link index: the first and last links give the span when the count
 * fits it. Links bound in another order are read one by one.
 */
static void test_acpi_link_ends(void **state) {
        const char *root = *state;
        fake_add_acpi_dimm(root, "PNP0C80:00", 32, 8);
        /* A middle link is not read when the ends account for all eight. */
        relink(root, 3, "system/memory/memory90");
        assert_acpi_span(root, NULL, 32, 40);

        /* Bound highest first: the ends are reversed, so every link is read. */
        relink(root, 3, "system/memory/memory35");
        relink(root, 0, "system/memory/memory39");
        relink(root, 7, "system/memory/memory32");
        assert_acpi_span(root, NULL, 32, 40);

        /* A hole: two ranges with a gap, the count short of the ends' distance. */
        relink(root, 0, "system/memory/memory32");
        relink(root, 7, "system/memory/memory48");
        assert_acpi_span(root, NULL, 32, 49);

        /* The last link names no memory block: read one by one, and it is not counted in the span. */
        relink(root, 7, "platform/foo");
        assert_acpi_span(root, NULL, 32, 39);
}

static void test_virtio_mem(void **state) {
        const char *root = *state;
        struct memdev_set s = {};
        const struct memdev *d;

        fake_symlink(root, "bus/virtio/devices/virtio3/driver", "../../../../bus/virtio/drivers/virtio_mem");
        fake_symlink(root, "bus/virtio/devices/virtio1/driver", "../../../../bus/virtio/drivers/virtio_blk");
        fake_write(root, "proc/iomem",
                   "00000000-00000fff : Reserved\n"
                   "00100000-7fffffff : System RAM\n"
                   "  01000000-01ffffff : Kernel code\n"
                   "100000000-1ffffffff : virtio3\n"
                   "  100000000-107ffffff : System RAM (virtio_mem)\n"
                   "200000000-2ffffffff : virtio1\n"            /* not virtio-mem */
                   "300000000-3ffffffff : virtio9\n"            /* no such device */
                   "zz-400000000 : virtio3\n"                   /* garbage */
                   "500000000-4ffffffff : virtio3\n");          /* end before start */
        {
                _cleanup_free_ char *iomem = NULL;

                assert_int_equal(memdev_iomem_path(root, &iomem), 0);
                assert_int_equal(memdev_scan_virtio_mem(root, iomem, &s), 0);
        }
        assert_int_equal(memdev_set_seal(&s), 0);
        assert_int_equal(s.n, 1);
        d = memdev_find(&s, 0x180000000, BS);
        assert_non_null(d);
        assert_string_equal(d->name, "virtio3");
        assert_int_equal(d->kind, MEMDEV_VIRTIO_MEM);
        assert_true(d->dynamic);
        assert_int_equal(d->end, 0x200000000);
        memdev_set_clear(&s);
}

/* A line longer than the kernel ever writes, and addresses hidden (read as 0) without privilege. */
static void test_iomem_hostile(void **state) {
        const char *root = *state;
        _cleanup_free_ char *iomem = NULL, *big = malloc(100001);
        struct memdev_set s = {};

        assert_non_null(big);
        memset(big, 'a', 100000);
        big[100000] = 0;
        fake_symlink(root, "bus/virtio/devices/virtio3/driver", "../../../../bus/virtio/drivers/virtio_mem");
        fake_write(root, "proc/iomem", "%s\n00000000-00000000 : virtio3\n100000000-1ffffffff : virtio3\n", big);
        assert_int_equal(memdev_iomem_path(root, &iomem), 0);
        assert_int_equal(memdev_scan_virtio_mem(root, iomem, &s), 0);
        assert_int_equal(s.n, 1);
        assert_int_equal(s.devs[0].start, 0x100000000);
        memdev_set_clear(&s);

        /* No iomem at all: nothing to add, no error. */
        assert_int_equal(memdev_scan_virtio_mem(root, "/nonexistent/iomem", &s), 0);
        assert_int_equal(s.n, 0);
}

static void test_firmware_ram(void **state) {
        const char *root = *state;
        struct ram_ranges rr = {};
        _cleanup_free_ char *name = NULL;

        /* No firmware memmap at all: empty, no error. */
        assert_int_equal(memdev_scan_firmware_ram(root, NULL, &rr), 0);
        assert_int_equal(rr.n, 0);

        fake_write(root, "firmware/memmap/0/start", "0x0\n");
        fake_write(root, "firmware/memmap/0/end", "0x9fbff\n");
        fake_write(root, "firmware/memmap/0/type", "System RAM\n");
        fake_write(root, "firmware/memmap/1/start", "0x100000000\n");
        fake_write(root, "firmware/memmap/1/end", "0x17fffffff\n");
        fake_write(root, "firmware/memmap/1/type", "System RAM\n");
        fake_write(root, "firmware/memmap/2/start", "0x180000000\n");
        fake_write(root, "firmware/memmap/2/end", "0x1ffffffff\n");
        fake_write(root, "firmware/memmap/2/type", "Reserved\n");
        fake_write(root, "firmware/memmap/3/start", "zz\n");   /* hostile: skipped */
        fake_write(root, "firmware/memmap/3/end", "0x1\n");
        fake_write(root, "firmware/memmap/3/type", "System RAM\n");
        assert_int_equal(memdev_scan_firmware_ram(root, NULL, &rr), 0);
        assert_int_equal(rr.n, 2);
        assert_true(ram_ranges_touch(&rr, 0x100000000, BS));
        assert_true(ram_ranges_touch(&rr, 0x180000000 - BS, BS));
        assert_false(ram_ranges_touch(&rr, 0x180000000, BS));    /* reserved is no RAM */
        /* A block with a firmware hole in it is still boot RAM. */
        assert_true(ram_ranges_touch(&rr, 0x180000000 - BS, 2 * BS));
        assert_true(ram_ranges_touch(&rr, 0, BS));
        assert_false(ram_ranges_touch(&rr, 0x200000000, BS));
        ram_ranges_clear(&rr);

        assert_int_equal(memdev_virtio_mem_name(root, &name), 0);
        assert_null(name);
        fake_symlink(root, "bus/virtio/drivers/virtio_mem/virtio3", "../../../../devices/pci/virtio3");
        assert_int_equal(memdev_virtio_mem_name(root, &name), 0);
        assert_string_equal(name, "virtio3");
        free(TAKE_PTR(name));
        fake_symlink(root, "bus/virtio/drivers/virtio_mem/virtio4", "../../../../devices/pci/virtio4");
        assert_int_equal(memdev_virtio_mem_name(root, &name), 0);
        assert_string_equal(name, "virtio-mem");
}

/* A firmware memmap entry as the kernel shows it. */
static void fw_entry(const char *root, unsigned n, const char *start, const char *end, const char *type) {
        char rel[64];

        snprintf(rel, sizeof(rel), "firmware/memmap/%u/start", n);
        fake_write(root, rel, "%s\n", start);
        snprintf(rel, sizeof(rel), "firmware/memmap/%u/end", n);
        fake_write(root, rel, "%s\n", end);
        snprintf(rel, sizeof(rel), "firmware/memmap/%u/type", n);
        fake_write(root, rel, "%s\n", type);
}

/* Entries are read once by name; a new one (a DIMM hot-added) is read, one gone is dropped. */
static void test_firmware_ram_cache(void **state) {
        const char *root = *state;
        struct ram_ranges rr = {};
        struct fw_cache cache = {};

        fw_entry(root, 0, "0x0", "0x7fffffff", "System RAM");
        fw_entry(root, 1, "0x80000000", "0x8fffffff", "Reserved");
        assert_int_equal(memdev_scan_firmware_ram(root, &cache, &rr), 0);
        assert_int_equal(rr.n, 1);
        assert_int_equal(cache.n, 2);

        /* Read once: what the kernel never changes is not read again (here it "changed" behind our back). */
        fake_write(root, "firmware/memmap/0/end", "0x3fffffff\n");
        fw_entry(root, 2, "0x100000000", "0x17fffffff", "System RAM");
        assert_int_equal(memdev_scan_firmware_ram(root, &cache, &rr), 0);
        assert_int_equal(rr.n, 2);
        assert_true(ram_ranges_touch(&rr, 0x40000000, BS));
        assert_true(ram_ranges_touch(&rr, 0x100000000, BS));

        /* The DIMM went: its entry with it. Kept, its memory would still count as boot RAM. */
        fake_remove_dir_tree(root, "firmware/memmap/2");
        assert_int_equal(memdev_scan_firmware_ram(root, &cache, &rr), 0);
        assert_int_equal(rr.n, 1);
        assert_false(ram_ranges_touch(&rr, 0x100000000, BS));
        assert_int_equal(cache.n, 2);

        /* An entry that cannot be read is not remembered: read again, and taken once it reads. */
        fw_entry(root, 3, "zz", "0x1ffffffff", "System RAM");
        assert_int_equal(memdev_scan_firmware_ram(root, &cache, &rr), 0);
        assert_int_equal(rr.n, 1);
        fake_write(root, "firmware/memmap/3/start", "0x180000000\n");
        assert_int_equal(memdev_scan_firmware_ram(root, &cache, &rr), 0);
        assert_int_equal(rr.n, 2);
        assert_true(ram_ranges_touch(&rr, 0x180000000, BS));
        ram_ranges_clear(&rr);
        fw_cache_clear(&cache);
}

static void test_overlap_refused(void **state) {
        struct memdev_set s = {};

        assert_int_equal(memdev_set_add(&s, MEMDEV_DAX, "dax0.0", 4 * BS, 8 * BS), 0);
        assert_int_equal(memdev_set_add(&s, MEMDEV_ACPI, "PNP0C80:00", 0, 5 * BS), 0);
        assert_int_equal(memdev_set_seal(&s), -EEXIST);
        assert_int_equal(memdev_set_add(&s, MEMDEV_NONE, "x", 0, BS), -EINVAL);
        assert_int_equal(memdev_set_add(&s, MEMDEV_DAX, "x", BS, BS), -EINVAL);
        memdev_set_clear(&s);
        assert_null(memdev_find(&s, 0, BS));
}

/*
 * The kept devices with the dax devices of a new scan: the DIMM and
 * virtio-mem entries as they were (virtio-mem still decided per unit),
 * the old dax device gone, the new one in; a kept span that overlaps a
 * dax device now is stale (-EEXIST) and *ret untouched.
 */
static void test_set_with_dax(void **state) {
        _cleanup_(memdev_set_clear) struct memdev_set known = {}, got = {};
        struct pmem_range r1 = { 40 * BS, 44 * BS }, r2 = { 8 * BS, 10 * BS };
        struct pmem_device devs[] = {
                { .name = (char *) "dax1.0", .mode = PMEM_MODE_SYSTEM_RAM, .ranges = &r1, .n_ranges = 1 },
                { .name = (char *) "dax2.0", .mode = PMEM_MODE_DEVDAX, .ranges = &r2, .n_ranges = 1 },
        };
        struct pmem_devices scan = { .devices = devs, .n = 2 };
        const struct memdev *d;

        (void) state;
        assert_int_equal(memdev_set_add(&known, MEMDEV_ACPI, "PNP0C80:00", 0, 4 * BS), 0);
        assert_int_equal(memdev_set_add(&known, MEMDEV_VIRTIO_MEM, "virtio3", 16 * BS, 24 * BS), 0);
        assert_int_equal(memdev_set_add(&known, MEMDEV_DAX, "dax0.0", 30 * BS, 34 * BS), 0);
        assert_int_equal(memdev_set_seal(&known), 0);

        assert_int_equal(memdev_set_with_dax(&known, &scan, &got), 0);
        assert_int_equal(got.n, 3);
        assert_null(memdev_find(&got, 30 * BS, BS));            /* dax0.0 is gone */
        assert_null(memdev_find(&got, 8 * BS, BS));             /* devdax: not system memory */
        d = memdev_find(&got, 41 * BS, BS);
        assert_non_null(d);
        assert_string_equal(d->name, "dax1.0");
        assert_int_equal(d->kind, MEMDEV_DAX);
        d = memdev_find(&got, 17 * BS, BS);
        assert_non_null(d);
        assert_true(d->dynamic);
        assert_string_equal(memdev_find(&got, BS, BS)->name, "PNP0C80:00");

        /* The DIMM's span was taken by a dax device since: stale. */
        r1 = (struct pmem_range) { 2 * BS, 6 * BS };
        assert_int_equal(memdev_set_with_dax(&known, &scan, &got), -EEXIST);
        assert_string_equal(memdev_find(&got, 41 * BS, BS)->name, "dax1.0");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_acpi, setup, teardown),
                cmocka_unit_test_setup_teardown(test_acpi_span_cache, setup, teardown),
                cmocka_unit_test_setup_teardown(test_acpi_empty_slots, setup, teardown),
                cmocka_unit_test_setup_teardown(test_acpi_link_ends, setup, teardown),
                cmocka_unit_test_setup_teardown(test_virtio_mem, setup, teardown),
                cmocka_unit_test_setup_teardown(test_iomem_hostile, setup, teardown),
                cmocka_unit_test_setup_teardown(test_firmware_ram, setup, teardown),
                cmocka_unit_test_setup_teardown(test_firmware_ram_cache, setup, teardown),
                cmocka_unit_test(test_overlap_refused),
                cmocka_unit_test(test_set_with_dax),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
