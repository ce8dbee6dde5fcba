/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "batch.h"
#include "monitor.h"
#include "util.h"

static void test_dedupe(void **state) {
        struct batcher b;
        uint64_t *ids;
        size_t n;
        uint64_t first;

        batcher_init(&b, 30, 500);
        assert_int_equal(batcher_add(&b, 40, 1000), 1);
        assert_int_equal(batcher_add(&b, 41, 1100), 1);
        /* The online event of the same block, and a rescan, add nothing. */
        assert_int_equal(batcher_add(&b, 40, 1200), 0);
        assert_int_equal(batcher_add(&b, 41, 1300), 0);
        assert_int_equal(batcher_add(&b, 39, 1400), 1);
        assert_int_equal(batcher_take(&b, &ids, &n, &first), 0);
        assert_int_equal(n, 3);
        assert_int_equal(first, 1000);
        /* Ascending, whatever the arrival order. */
        assert_int_equal(ids[0], 39);
        assert_int_equal(ids[1], 40);
        assert_int_equal(ids[2], 41);
        free(ids);
        /* Empty afterwards, and the same id is new again. */
        assert_int_equal(batcher_deadline(&b), 0);
        assert_int_equal(batcher_add(&b, 40, 5000), 1);
        batcher_done(&b);
}

static void test_settle_window(void **state) {
        struct batcher b;

        batcher_init(&b, 30, 500);
        assert_false(batcher_due(&b, 0));
        batcher_add(&b, 1, 1000000);
        assert_int_equal(batcher_deadline(&b), 1000000 + 30000);
        assert_false(batcher_due(&b, 1029999));
        assert_true(batcher_due(&b, 1030000));
        /* A new event pushes the settle deadline. */
        batcher_add(&b, 2, 1020000);
        assert_int_equal(batcher_deadline(&b), 1050000);
        batcher_done(&b);
}

static void test_max_wait(void **state) {
        struct batcher b;
        uint64_t t = 1000000;

        batcher_init(&b, 30, 100);
        /* Events every 20 ms would settle never; max wait caps it. */
        for (uint64_t id = 0; id < 20; id++, t += 20000)
                batcher_add(&b, id, t);
        assert_int_equal(batcher_deadline(&b), 1000000 + 100000);
        assert_true(batcher_due(&b, 1100000));
        batcher_done(&b);
}

static void test_added_deadline(void **state) {
        struct batcher b;
        uint64_t id = 0;

        (void) state;
        batcher_init(&b, 30, 500);
        assert_int_equal(batcher_added_deadline(&b), 0);
        assert_false(batcher_last_id(&b, &id));
        /* A trickle: settle counts from the first event, the last id is the latest event's. */
        batcher_add(&b, 40, 1000000);
        batcher_add(&b, 12, 1020000);
        batcher_add(&b, 41, 1040000);
        assert_int_equal(batcher_added_deadline(&b), 1000000 + 30000);
        assert_int_equal(batcher_deadline(&b), 1040000 + 30000);
        assert_true(batcher_last_id(&b, &id));
        assert_int_equal(id, 41);
        /* Never later than the normal deadline (max_wait below settle). */
        batcher_set_window(&b, 30, 10);
        assert_int_equal(batcher_added_deadline(&b), batcher_deadline(&b));
        batcher_done(&b);
}

static void test_window_floor(void **state) {
        struct batcher b;

        /* max_wait below settle is raised to settle. */
        batcher_init(&b, 50, 10);
        batcher_add(&b, 7, 1000);
        assert_int_equal(batcher_deadline(&b), 1000 + 50000);
        batcher_done(&b);
}

static void test_many(void **state) {
        struct batcher b;
        uint64_t *ids;
        size_t n;

        batcher_init(&b, 30, 500);
        for (uint64_t i = 0; i < 30000; i++)
                assert_int_equal(batcher_add(&b, 30000 - i, 1 + i), 1);
        for (uint64_t i = 1; i <= 30000; i += 7)
                assert_int_equal(batcher_add(&b, i, 99999), 0);
        assert_int_equal(batcher_take(&b, &ids, &n, NULL), 0);
        assert_int_equal(n, 30000);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(ids[i], i + 1);
        free(ids);
        batcher_done(&b);
}

static void test_classify(void **state) {
        struct monitor_event ev;

        assert_int_equal(monitor_classify("add", "memory", "memory42", 7, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MEMORY_ADD);
        assert_int_equal(ev.block_id, 42);
        assert_int_equal(ev.seqnum, 7);
        assert_int_equal(monitor_classify("online", "memory", "memory42", 8, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MEMORY_ONLINE);
        assert_int_equal(monitor_classify("offline", "memory", "memory42", 8, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MEMORY_OFFLINE);
        assert_int_equal(monitor_classify("change", "memory", "memory42", 8, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MEMORY_OFFLINE);
        assert_int_equal(monitor_classify("remove", "memory", "memory42", 9, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MEMORY_REMOVE);
        /* Not a block: memory/ holds other entries on some kernels. */
        assert_int_equal(monitor_classify("add", "memory", "memory_tier1", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_IGNORE);
        assert_int_equal(monitor_classify("add", "dax", "dax1.0", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_DAX_ADD);
        assert_string_equal(ev.devname, "dax1.0");
        assert_int_equal(monitor_classify("unbind", "dax", "dax1.0", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_DAX_REMOVE);
        /* What changes the machine the daemon keeps. */
        assert_int_equal(monitor_classify("add", "cpu", "cpu3", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MACHINE);
        assert_int_equal(monitor_classify("offline", "cpu", "cpu3", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MACHINE);
        assert_int_equal(monitor_classify("online", "cpu", "cpu3", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MACHINE);
        assert_int_equal(monitor_classify("add", "node", "node3", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MACHINE);
        assert_int_equal(monitor_classify("add", "cpu", "cpufreq", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_MACHINE);    /* cheap to look again: nothing to judge */
        assert_int_equal(monitor_classify("change", "cpu", "cpu3", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_IGNORE);
        assert_int_equal(monitor_classify("add", "cxl", "region0", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_DEVICE);
        assert_false(ev.acpi_memory);
        assert_int_equal(monitor_classify("bind", "cxl", "region0", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_DEVICE);
        assert_false(ev.acpi_memory);
        assert_int_equal(monitor_classify("add", "cxl", "mem0", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_IGNORE);
        assert_int_equal(monitor_classify("add", "acpi", "PNP0C80:01", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_DEVICE);
        assert_true(ev.acpi_memory);
        assert_int_equal(monitor_classify("add", "acpi", "LNXCPU:01", 1, &ev), 0);
        assert_int_equal(ev.kind, MONITOR_IGNORE);
        assert_int_equal(monitor_classify(NULL, "memory", "memory1", 1, &ev), -EINVAL);
}

/* The policy's event_source words are the netlink groups monitor_open() listens to. */
static void test_event_source_names(void **state) {
        enum event_source e = EVENT_SOURCE_UDEV;

        assert_string_equal(event_source_to_string(EVENT_SOURCE_UDEV), "udev");
        assert_string_equal(event_source_to_string(EVENT_SOURCE_KERNEL), "kernel");
        assert_null(event_source_to_string((enum event_source) 7));
        assert_int_equal(event_source_from_string("kernel", &e), 0);
        assert_int_equal(e, EVENT_SOURCE_KERNEL);
        assert_int_equal(event_source_from_string("udev", &e), 0);
        assert_int_equal(e, EVENT_SOURCE_UDEV);
        assert_int_equal(event_source_from_string("Kernel", &e), -EINVAL);
        assert_int_equal(event_source_from_string("", &e), -EINVAL);
        assert_int_equal(e, EVENT_SOURCE_UDEV);
        assert_int_equal(monitor_open((enum event_source) 7, false, NULL), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_dedupe),
                cmocka_unit_test(test_settle_window),
                cmocka_unit_test(test_max_wait),
                cmocka_unit_test(test_added_deadline),
                cmocka_unit_test(test_window_floor),
                cmocka_unit_test(test_many),
                cmocka_unit_test(test_classify),
                cmocka_unit_test(test_event_source_names),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
