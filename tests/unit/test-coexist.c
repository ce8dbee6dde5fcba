/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "coexist.h"
#include "fake-tree.h"
#include "util.h"

static int setup(void **state) {
        char *root = fake_tree_new();

        fake_memory_init(root, 128ULL << 20);
        fake_mkdir(root, "etc/udev/rules.d");
        fake_mkdir(root, "usr/lib/udev/rules.d");
        *state = root;
        return 0;
}

static int teardown(void **state) {
        fake_tree_free(*state);
        return 0;
}

static int check(const char *root, struct conflicts *c) {
        char etc[512], usr[512];
        const char *dirs[] = { etc, usr, NULL };

        snprintf(etc, sizeof(etc), "%s/etc/udev/rules.d", root);
        snprintf(usr, sizeof(usr), "%s/usr/lib/udev/rules.d", root);
        return coexist_check(root, dirs, c);
}

static void test_clean(void **state) {
        const char *root = *state;
        struct conflicts c = {};

        fake_write(root, "usr/lib/udev/rules.d/50-other.rules",
                   "SUBSYSTEM==\"memory\", ACTION==\"add\", ATTR{state}==\"offline\", TAG+=\"x\"\n");
        /* Our own rule never counts. */
        fake_write(root, "usr/lib/udev/rules.d/99-memonline.rules",
                   "SUBSYSTEM==\"memory\", ACTION==\"add\", ATTR{state}=\"online\"\n");
        assert_int_equal(check(root, &c), 0);
        assert_int_equal(c.n, 0);
        conflicts_clear(&c);
}

static void test_auto_online(void **state) {
        const char *root = *state;
        struct conflicts c = {};

        fake_write(root, "devices/system/memory/auto_online_blocks", "online_movable\n");
        assert_int_equal(check(root, &c), 0);
        assert_int_equal(c.n, 1);
        assert_non_null(strstr(c.items[0].what, "online_movable"));
        assert_non_null(strstr(c.items[0].where, "auto_online_blocks"));
        assert_non_null(strstr(c.items[0].fix, "offline"));
        conflicts_clear(&c);
}

static void test_rule_writes_state(void **state) {
        const char *root = *state;
        struct conflicts c = {};

        fake_write(root, "usr/lib/udev/rules.d/40-vm-hotadd.rules",
                   "# comment\n"
                   "SUBSYSTEM==\"cpu\", ACTION==\"add\", ATTR{online}=\"1\"\n"
                   "SUBSYSTEM==\"memory\", ACTION==\"add\", ATTR{state}==\"offline\", ATTR{state}=\"online\"\n");
        assert_int_equal(check(root, &c), 0);
        assert_int_equal(c.n, 1);
        assert_non_null(strstr(c.items[0].where, "40-vm-hotadd.rules:3"));
        assert_non_null(strstr(c.items[0].fix, "/dev/null /etc/udev/rules.d/40-vm-hotadd.rules"));
        conflicts_clear(&c);
}

static void test_rule_spaced_and_run(void **state) {
        const char *root = *state;
        struct conflicts c = {};

        fake_write(root, "usr/lib/udev/rules.d/41-a.rules",
                   "SUBSYSTEM==\"memory\", ACTION==\"add\", ATTR{state} = \"online_movable\"\n");
        fake_write(root, "usr/lib/udev/rules.d/42-b.rules",
                   "SUBSYSTEM==\"memory\", ACTION==\"add\", RUN+=\"/bin/sh -c 'echo online > /sys$devpath/state'\"\n");
        fake_write(root, "usr/lib/udev/rules.d/43-c.rules",
                   "#SUBSYSTEM==\"memory\", ACTION==\"add\", ATTR{state}=\"online\"\n");
        assert_int_equal(check(root, &c), 0);
        assert_int_equal(c.n, 2);
        conflicts_clear(&c);
}

static void test_masked_and_overridden(void **state) {
        const char *root = *state;
        struct conflicts c = {};

        fake_write(root, "usr/lib/udev/rules.d/40-vm-hotadd.rules",
                   "SUBSYSTEM==\"memory\", ACTION==\"add\", ATTR{state}=\"online\"\n");
        fake_write(root, "usr/lib/udev/rules.d/41-other.rules",
                   "SUBSYSTEM==\"memory\", ACTION==\"add\", ATTR{state}=\"online\"\n");
        /* Masked in /etc, and overridden by a harmless copy. */
        fake_symlink(root, "etc/udev/rules.d/40-vm-hotadd.rules", "/dev/null");
        fake_write(root, "etc/udev/rules.d/41-other.rules", "# nothing\n");
        assert_int_equal(check(root, &c), 0);
        assert_int_equal(c.n, 0);
        conflicts_clear(&c);
}

static void test_missing_dirs(void **state) {
        const char *root = *state;
        struct conflicts c = {};
        const char *dirs[] = { "/nonexistent/rules.d", NULL };

        fake_unlink(root, "devices/system/memory/auto_online_blocks");
        assert_int_equal(coexist_check(root, dirs, &c), 0);
        assert_int_equal(c.n, 0);
        conflicts_clear(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_clean, setup, teardown),
                cmocka_unit_test_setup_teardown(test_auto_online, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rule_writes_state, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rule_spaced_and_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_masked_and_overridden, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_dirs, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
