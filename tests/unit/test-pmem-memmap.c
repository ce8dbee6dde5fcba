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
#include "fake-tree.h"
#include "pmem.h"
#include "pmem-decide.h"
#include "pmem-memmap.h"
#include "pmem-record.h"
#include "pmem-scan.h"
#include "policy.h"
#include "report.h"
#include "util.h"

#define GiB (UINT64_C(1) << 30)
#define PARAM "module/memory_hotplug/parameters/memmap_on_memory"

/* Where fake_add_dax_device() puts dax1.0. */
#define DEV_DIR "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region1/dax1.0/dax1.0"

/* The state is the root of a fake tree with the standard machine. */
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

/* dax1.0: devdax on a pmem region, 2 GiB for node 2; memmap_on_memory as given (NULL: a 6.1 kernel). */
static void add_devdax(const char *root, const char *memmap) {
        struct fake_dax d = {
                .region = 1, .id = 0, .driver = "device_dax", .start = 8 * GiB, .size = 2 * GiB,
                .target_node = 2, .ns_uuid = "22222222-2222-2222-2222-222222222222",
                .dax_uuid = "0f0f0f0f-1e1e-2d2d-3c3c-4b4b4b4b4b4b", .memmap_on_memory = memmap,
        };
        _cleanup_free_ char *dir = fake_add_dax_device(root, &d);

        assert_string_equal(dir, DEV_DIR);
}

static char *attr(const char *root) {
        return fake_read(root, DEV_DIR "/memmap_on_memory");
}

/* ---- the kernel's switch ------------------------------------------------- */

static void test_read_global(void **state) {
        const char *root = *state;

        assert_int_equal(pmem_memmap_read_global(root), PMEM_MEMMAP_GLOBAL_ABSENT);
        fake_write(root, PARAM, "N\n");
        assert_int_equal(pmem_memmap_read_global(root), PMEM_MEMMAP_GLOBAL_OFF);
        fake_write(root, PARAM, "Y\n");
        assert_int_equal(pmem_memmap_read_global(root), PMEM_MEMMAP_GLOBAL_ON);
        fake_write(root, PARAM, "force\n");
        assert_int_equal(pmem_memmap_read_global(root), PMEM_MEMMAP_GLOBAL_ON);
        /* Anything else is not taken for on or off. */
        fake_write(root, PARAM, "yes please\n");
        assert_int_equal(pmem_memmap_read_global(root), PMEM_MEMMAP_GLOBAL_UNKNOWN);
        fake_write(root, PARAM, "\n");
        assert_int_equal(pmem_memmap_read_global(root), PMEM_MEMMAP_GLOBAL_UNKNOWN);
}

static void test_read_attr(void **state) {
        const char *root = *state;
        _cleanup_(pmem_devices_clearp) struct pmem_devices devs = {};
        int v = -7;

        add_devdax(root, NULL);
        assert_int_equal(pmem_memmap_read_attr(root, "bus/dax/devices/dax1.0", &v), -ENOENT);
        assert_int_equal(v, -7);
        add_devdax(root, "1");
        assert_int_equal(pmem_memmap_read_attr(root, "bus/dax/devices/dax1.0", &v), 0);
        assert_int_equal(v, 1);
        assert_int_equal(pmem_memmap_read_attr(root, DEV_DIR, &v), 0);
        assert_int_equal(v, 1);
        add_devdax(root, "2");
        v = -7;
        assert_int_equal(pmem_memmap_read_attr(root, DEV_DIR, &v), -EINVAL);
        assert_int_equal(v, -7);

        /* The scan keeps it per device, and the kernel's switch with the set. */
        fake_write(root, PARAM, "Y\n");
        add_devdax(root, "0");
        assert_int_equal(pmem_scan(root, &devs), 1);
        assert_int_equal(devs.devices[0].memmap_on_memory, 0);
        assert_int_equal(devs.memmap_global, PMEM_MEMMAP_GLOBAL_ON);
        add_devdax(root, "x");
        assert_int_equal(pmem_scan(root, &devs), 1);
        assert_int_equal(devs.devices[0].memmap_on_memory, -1);
}

/* ---- the plan ------------------------------------------------------------ */

struct plan_case {
        enum memmap_setting setting;
        int attr;
        enum pmem_memmap_global global;
        int write;
        enum pmem_memmap effective;
        bool unmet;
        const char *reason;             /* a part of it; NULL: none */
};

/* Hostile values: only the kernel's exact spellings count, and a refusal leaves the output alone. */
static void test_parse_hostile(void **state) {
        static const char *const bad_attr[] = { "", "2", "01", "1 ", " 1", "Y", "true", "1\x1b[2J", "-1", "0x1" };
        static const char *const unknown_global[] = { "", "y", "Yes", "N ", "forced", "1", "Y\x1b]52;c;", "NN" };
        int v;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(bad_attr); i++) {
                v = -7;
                assert_int_equal(pmem_memmap_parse_attr(bad_attr[i], &v), -EINVAL);
                assert_int_equal(v, -7);
        }
        assert_int_equal(pmem_memmap_parse_attr(NULL, &v), -EINVAL);
        assert_int_equal(pmem_memmap_parse_attr("1", NULL), -EINVAL);
        assert_int_equal(pmem_memmap_parse_attr("1", &v), 0);
        assert_int_equal(v, 1);
        assert_int_equal(pmem_memmap_parse_attr("0", &v), 0);
        assert_int_equal(v, 0);
        for (size_t i = 0; i < ELEMENTSOF(unknown_global); i++)
                assert_int_equal(pmem_memmap_parse_global(unknown_global[i]), PMEM_MEMMAP_GLOBAL_UNKNOWN);
        assert_int_equal(pmem_memmap_parse_global("Y"), PMEM_MEMMAP_GLOBAL_ON);
        assert_int_equal(pmem_memmap_parse_global("Force"), PMEM_MEMMAP_GLOBAL_ON);
        assert_int_equal(pmem_memmap_parse_global("N"), PMEM_MEMMAP_GLOBAL_OFF);
}

static void test_plan(void **state) {
        static const struct plan_case cases[] = {
                /* 6.1: no attribute. "no" is what the kernel does anyway; "yes" cannot be had. */
                { MEMMAP_KEEP, -1, PMEM_MEMMAP_GLOBAL_ABSENT, -1, PMEM_MEMMAP_UNSUPPORTED, false, NULL },
                { MEMMAP_OFF, -1, PMEM_MEMMAP_GLOBAL_ON, -1, PMEM_MEMMAP_UNSUPPORTED, false, NULL },
                { MEMMAP_ON, -1, PMEM_MEMMAP_GLOBAL_ON, -1, PMEM_MEMMAP_UNSUPPORTED, true, "Linux 6.8" },
                { MEMMAP_UNSET, -1, PMEM_MEMMAP_GLOBAL_ON, -1, PMEM_MEMMAP_UNSUPPORTED, false, NULL },
                /* keep: never written; a 1 counts only with the kernel's switch on. */
                { MEMMAP_KEEP, 0, PMEM_MEMMAP_GLOBAL_ON, -1, PMEM_MEMMAP_NO, false, NULL },
                { MEMMAP_KEEP, 1, PMEM_MEMMAP_GLOBAL_ON, -1, PMEM_MEMMAP_YES, false, NULL },
                { MEMMAP_KEEP, 1, PMEM_MEMMAP_GLOBAL_OFF, -1, PMEM_MEMMAP_NO, false, "reads 1, but" },
                { MEMMAP_KEEP, 1, PMEM_MEMMAP_GLOBAL_UNKNOWN, -1, PMEM_MEMMAP_NO, false, "unknown" },
                /* no: written only when it is not 0 already. */
                { MEMMAP_OFF, 0, PMEM_MEMMAP_GLOBAL_ON, -1, PMEM_MEMMAP_NO, false, NULL },
                { MEMMAP_OFF, 1, PMEM_MEMMAP_GLOBAL_ON, 0, PMEM_MEMMAP_NO, false, NULL },
                { MEMMAP_OFF, 1, PMEM_MEMMAP_GLOBAL_OFF, 0, PMEM_MEMMAP_NO, false, NULL },
                /* yes: written even over a 1, the kernel checks its support on the write. */
                { MEMMAP_ON, 0, PMEM_MEMMAP_GLOBAL_ON, 1, PMEM_MEMMAP_YES, false, NULL },
                { MEMMAP_ON, 1, PMEM_MEMMAP_GLOBAL_ON, 1, PMEM_MEMMAP_YES, false, NULL },
                { MEMMAP_ON, 0, PMEM_MEMMAP_GLOBAL_UNKNOWN, 1, PMEM_MEMMAP_YES, false, NULL },
                /* ... but not when the kernel's switch is off: it would refuse, and a 1 would not count. */
                { MEMMAP_ON, 0, PMEM_MEMMAP_GLOBAL_OFF, -1, PMEM_MEMMAP_NO, true,
                  "add memory_hotplug.memmap_on_memory=1 to the kernel command line" },
                { MEMMAP_ON, 1, PMEM_MEMMAP_GLOBAL_OFF, -1, PMEM_MEMMAP_NO, true, "is off" },
                { MEMMAP_ON, 0, PMEM_MEMMAP_GLOBAL_ABSENT, -1, PMEM_MEMMAP_NO, true, "CONFIG_MHP_MEMMAP_ON_MEMORY" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const struct plan_case *k = &cases[i];
                struct pmem_memmap_outcome o;
                int write = 7;

                memset(&o, 0x55, sizeof(o));
                pmem_memmap_plan(k->setting, k->attr, k->global, &write, &o);
                print_message("# case %zu: %s attr %d global %d\n", i, memmap_setting_to_string(k->setting), k->attr,
                              k->global);
                assert_int_equal(write, k->write);
                assert_string_equal(pmem_memmap_to_string(o.effective), pmem_memmap_to_string(k->effective));
                assert_int_equal(o.unmet, k->unmet);
                assert_int_equal(o.error, 0);
                if (k->reason)
                        assert_non_null(strstr(o.reason, k->reason));
                else
                        assert_string_equal(o.reason, "");
        }
}

static void test_settle(void **state) {
        struct pmem_memmap_outcome o;

        /* Taken and read back. */
        pmem_memmap_settle(MEMMAP_ON, PMEM_MEMMAP_GLOBAL_ON, 1, 0, 1, &o);
        assert_int_equal(o.effective, PMEM_MEMMAP_YES);
        assert_false(o.unmet);
        assert_int_equal(o.error, 0);
        assert_string_equal(o.reason, "");

        /* The kernel cannot (block size, architecture): no, whatever the attribute still reads. */
        pmem_memmap_settle(MEMMAP_ON, PMEM_MEMMAP_GLOBAL_ON, 1, -EOPNOTSUPP, 1, &o);
        assert_int_equal(o.effective, PMEM_MEMMAP_NO);
        assert_true(o.unmet);
        assert_int_equal(o.error, -EOPNOTSUPP);
        assert_non_null(strstr(o.reason, "writing 1 to memmap_on_memory failed"));
        assert_non_null(strstr(o.reason, "pageblocks"));

        /* Bound to kmem meanwhile: the bind keeps what it had. */
        pmem_memmap_settle(MEMMAP_OFF, PMEM_MEMMAP_GLOBAL_ON, 0, -EBUSY, 1, &o);
        assert_int_equal(o.effective, PMEM_MEMMAP_YES);
        assert_true(o.unmet);
        assert_non_null(strstr(o.reason, "bound to kmem already"));
        pmem_memmap_settle(MEMMAP_OFF, PMEM_MEMMAP_GLOBAL_OFF, 0, -EBUSY, 1, &o);
        assert_int_equal(o.effective, PMEM_MEMMAP_NO);
        assert_false(o.unmet);

        /* Written, but it does not read back: what it reads counts. */
        pmem_memmap_settle(MEMMAP_ON, PMEM_MEMMAP_GLOBAL_ON, 1, 0, 0, &o);
        assert_int_equal(o.effective, PMEM_MEMMAP_NO);
        assert_true(o.unmet);
        assert_int_equal(o.error, -EIO);
        assert_string_equal(o.reason, "wrote 1 to memmap_on_memory, but it reads 0");

        /* Gone after the write. */
        pmem_memmap_settle(MEMMAP_ON, PMEM_MEMMAP_GLOBAL_ON, 1, -ENOENT, -1, &o);
        assert_int_equal(o.effective, PMEM_MEMMAP_UNSUPPORTED);
        assert_true(o.unmet);
        assert_non_null(strstr(o.reason, strerror(ENOENT)));
}

/* ---- applied to a tree ---------------------------------------------------- */

static void test_apply_writes(void **state) {
        const char *root = *state;
        struct pmem_memmap_outcome o;
        _cleanup_free_ char *a = NULL, *b = NULL, *k = NULL;

        fake_write(root, PARAM, "Y\n");
        add_devdax(root, "0");
        assert_int_equal(pmem_memmap_apply(root, "dax1.0", MEMMAP_ON, &o), 0);
        a = attr(root);
        assert_string_equal(a, "1");
        assert_int_equal(o.effective, PMEM_MEMMAP_YES);
        assert_false(o.unmet);

        assert_int_equal(pmem_memmap_apply(root, "dax1.0", MEMMAP_OFF, &o), 0);
        b = attr(root);
        assert_string_equal(b, "0");
        assert_int_equal(o.effective, PMEM_MEMMAP_NO);

        /* keep writes nothing. */
        add_devdax(root, "1");
        fake_write(root, PARAM, "N\n");
        assert_int_equal(pmem_memmap_apply(root, "dax1.0", MEMMAP_KEEP, &o), 0);
        k = attr(root);
        assert_string_equal(k, "1");
        assert_int_equal(o.effective, PMEM_MEMMAP_NO);
        assert_false(o.unmet);
        assert_int_equal(o.error, 0);
        assert_non_null(strstr(o.reason, "reads 1, but memory_hotplug.memmap_on_memory is off"));
}

static void test_apply_fail_safe(void **state) {
        const char *root = *state;
        struct pmem_memmap_outcome o;
        const char *rel = DEV_DIR "/memmap_on_memory";
        char target[600];
        _cleanup_free_ char *a = NULL, *b = NULL, *d = NULL;

        /* 6.1: no attribute, nothing written, yes unmet. */
        fake_write(root, PARAM, "Y\n");
        add_devdax(root, NULL);
        assert_int_equal(pmem_memmap_apply(root, "dax1.0", MEMMAP_ON, &o), 0);
        assert_null(attr(root));
        assert_int_equal(o.effective, PMEM_MEMMAP_UNSUPPORTED);
        assert_true(o.unmet);

        /* The kernel's switch off: no write (the kernel would refuse it), yes unmet with the boot parameter named. */
        fake_write(root, PARAM, "N\n");
        add_devdax(root, "0");
        assert_int_equal(pmem_memmap_apply(root, "dax1.0", MEMMAP_ON, &o), 0);
        a = attr(root);
        assert_string_equal(a, "0");
        assert_int_equal(o.effective, PMEM_MEMMAP_NO);
        assert_true(o.unmet);
        assert_non_null(strstr(o.reason, "memory_hotplug.memmap_on_memory=1"));

        /* A write that fails (here: the attribute is a link, which no write follows) leaves it, and says why. */
        fake_write(root, PARAM, "Y\n");
        fake_unlink(root, rel);
        fake_write(root, "elsewhere", "0\n");
        snprintf(target, sizeof(target), "%s/elsewhere", root);
        fake_symlink(root, rel, target);
        assert_int_equal(pmem_memmap_apply(root, "dax1.0", MEMMAP_ON, &o), -ELOOP);
        b = fake_read(root, "elsewhere");
        assert_string_equal(b, "0");
        assert_int_equal(o.effective, PMEM_MEMMAP_NO);
        assert_true(o.unmet);
        assert_int_equal(o.error, -ELOOP);
        assert_non_null(strstr(o.reason, "writing 1 to memmap_on_memory failed"));

        /* Unreadable: nothing written either. */
        fake_unlink(root, rel);
        add_devdax(root, "maybe");
        assert_int_equal(pmem_memmap_apply(root, "dax1.0", MEMMAP_OFF, &o), -EINVAL);
        assert_true(o.unmet);
        assert_non_null(strstr(o.reason, "cannot read"));
        d = attr(root);
        assert_string_equal(d, "maybe");
}

/* ---- decision and --dry-run ----------------------------------------------- */

static struct policy *load(const char *text) {
        struct policy *p = NULL;
        struct policy_error e = {};

        assert_int_equal(policy_load_buffer("t.conf", text, strlen(text), &p, &e), 0);
        return p;
}

static void test_decide_setting(void **state) {
        const char *root = *state;
        _cleanup_(pmem_devices_clearp) struct pmem_devices devs = {};
        _cleanup_policy_ struct policy *def = NULL, *pm = NULL, *rules = NULL;
        struct pmem_decision d;

        add_devdax(root, "0");
        assert_int_equal(pmem_scan(root, &devs), 1);

        def = load("[pmem]\nconvert_devdax = yes\n");
        assert_int_equal(pmem_decide(&devs.devices[0], def, NULL, &d), 0);
        assert_int_equal(d.action, PMEM_ACTION_CONVERT);
        assert_int_equal(d.memmap_on_memory, MEMMAP_KEEP);
        assert_null(d.memmap_rule);

        pm = load("[pmem]\nconvert_devdax = yes\nmemmap_on_memory = yes\n");
        assert_int_equal(pmem_decide(&devs.devices[0], pm, NULL, &d), 0);
        assert_int_equal(d.memmap_on_memory, MEMMAP_ON);

        /* The first matching rule that sets it; a rule that does not match, or sets only a zone, has no say. */
        rules = load("[pmem]\nconvert_devdax = yes\nmemmap_on_memory = yes\n"
                     "[device other]\nmatch_device = dax9.0\nmemmap_on_memory = keep\n"
                     "[device zone-only]\nmatch_device = dax1.0\nzone = online_kernel\n"
                     "[device this]\nmatch_region = 1\nmemmap_on_memory = no\n"
                     "[device later]\nmemmap_on_memory = yes\n");
        assert_int_equal(pmem_decide(&devs.devices[0], rules, NULL, &d), 0);
        assert_int_equal(d.memmap_on_memory, MEMMAP_OFF);
        assert_non_null(d.memmap_rule);
        assert_string_equal(d.memmap_rule->name, "this");
        assert_int_equal(d.zone, ZONE_KERNEL);
        assert_int_equal(d.action, PMEM_ACTION_CONVERT);
}

/* The --dry-run device lines for the tree as it is now (caller frees). */
static char *dry_run(const char *root, const struct policy *p) {
        _cleanup_(pmem_devices_clearp) struct pmem_devices devs = {};
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        assert_int_equal(pmem_scan(root, &devs), 1);
        f = open_memstream(&buf, &size);
        assert_non_null(f);
        assert_int_equal(pmem_print_decisions(&devs, p, NULL, f), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static void test_dry_run(void **state) {
        const char *root = *state;
        _cleanup_policy_ struct policy *p = load("[pmem]\nconvert_devdax = yes\nmemmap_on_memory = yes\n");
        _cleanup_free_ char *off = NULL, *on = NULL, *a = NULL;

        fake_write(root, PARAM, "N\n");
        add_devdax(root, "0");
        off = dry_run(root, p);
        assert_non_null(strstr(off, "device=dax1.0 action=convert "));
        assert_non_null(strstr(off, " mode=devdax memmap_on_memory=no memmap_reason=\"memory_hotplug.memmap_on_memory "
                                    "is off (a boot parameter: add memory_hotplug.memmap_on_memory=1 to the kernel "
                                    "command line)\"\n"));

        /* With the switch on it is planned as asked, and nothing is written by a dry run. */
        fake_write(root, PARAM, "Y\n");
        on = dry_run(root, p);
        assert_non_null(strstr(on, " mode=devdax memmap_on_memory=yes\n"));
        a = attr(root);
        assert_string_equal(a, "0");
}

/* The device record says what the bind got, and why when not as asked; nothing for a device not ours. */
static void test_record(void **state) {
        const char *root = *state;
        _cleanup_(pmem_devices_clearp) struct pmem_devices devs = {};
        struct pmem_convert_result yes = { .bind_usec = 900, .memmap = { .effective = PMEM_MEMMAP_YES } };
        struct pmem_convert_result no = { .bind_usec = 900 };
        _cleanup_free_ char *buf = NULL;
        struct reporter rep;
        size_t size = 0;
        char *l2, *l3;

        add_devdax(root, "0");
        assert_int_equal(pmem_scan(root, &devs), 1);
        pmem_memmap_plan(MEMMAP_ON, 0, PMEM_MEMMAP_GLOBAL_OFF, NULL, &no.memmap);
        reporter_init(&rep, LOG_TARGET_CONSOLE);
        rep.out = open_memstream(&buf, &size);
        assert_non_null(rep.out);
        assert_int_equal(pmem_report_device(&rep, &devs.devices[0], &yes, 1000, 2000, 15, 15 * 128 * (1 << 20)), 0);
        assert_int_equal(pmem_report_device(&rep, &devs.devices[0], &no, 1000, 2000, 15, 15 * 128 * (1 << 20)), 0);
        assert_int_equal(pmem_report_device(&rep, &devs.devices[0], NULL, 1000, 2000, 15, 15 * 128 * (1 << 20)), 0);
        assert_int_equal(fclose(rep.out), 0);
        l2 = strchr(buf, '\n');
        assert_non_null(l2);
        *l2++ = '\0';
        l3 = strchr(l2, '\n');
        assert_non_null(l3);
        *l3++ = '\0';
        assert_non_null(strstr(buf, " MEMONLINE_MEMMAP_ON_MEMORY=yes"));
        assert_null(strstr(buf, "MEMONLINE_MEMMAP_REASON"));
        assert_non_null(strstr(l2, " MEMONLINE_MEMMAP_ON_MEMORY=no"));
        assert_non_null(strstr(l2, "MEMONLINE_MEMMAP_REASON=\"memory_hotplug.memmap_on_memory is off"));
        assert_null(strstr(l3, "MEMMAP"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_read_global, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_attr, setup, teardown),
                cmocka_unit_test(test_parse_hostile),
                cmocka_unit_test(test_plan),
                cmocka_unit_test(test_settle),
                cmocka_unit_test_setup_teardown(test_apply_writes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_apply_fail_safe, setup, teardown),
                cmocka_unit_test_setup_teardown(test_decide_setting, setup, teardown),
                cmocka_unit_test_setup_teardown(test_dry_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_record, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
