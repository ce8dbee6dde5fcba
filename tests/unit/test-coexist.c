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

/* ---- taking over from kernel auto-online ---- */

#define AUTO "devices/system/memory/auto_online_blocks"
#define SAVED "run/auto_online_blocks"

static char *saved_path(const char *root) {
        char *p;

        fake_mkdir(root, "run");
        assert_true(asprintf(&p, "%s/" SAVED, root) > 0);
        return p;
}

static void assert_file(const char *root, const char *rel, const char *want) {
        _cleanup_free_ char *v = fake_read(root, rel);

        if (!want) {
                assert_null(v);
                return;
        }
        assert_non_null(v);
        assert_string_equal(v, want);
}

static void test_take_over_and_restore(void **state) {
        const char *root = *state;
        _cleanup_free_ char *saved = saved_path(root), *prev = NULL, *found = NULL;

        fake_write(root, AUTO, "online_movable\n");
        assert_int_equal(auto_online_take_over(root, saved, &prev), 1);
        assert_string_equal(prev, "online_movable");
        assert_file(root, AUTO, "offline");
        /* Saved before "offline" was written, so a crash cannot lose it. */
        assert_file(root, SAVED, "online_movable");

        assert_int_equal(auto_online_restore(root, saved, prev, &found), 1);
        assert_string_equal(found, "offline");
        assert_file(root, AUTO, "online_movable");
        assert_file(root, SAVED, NULL);
}

static void test_take_over_nothing_to_do(void **state) {
        const char *root = *state;
        _cleanup_free_ char *saved = saved_path(root), *prev = (char *) 1;

        /* Booted with memhp_default_state=offline: nothing to take, nothing to give back. */
        assert_int_equal(auto_online_take_over(root, saved, &prev), 0);
        assert_null(prev);
        assert_file(root, SAVED, NULL);
        assert_int_equal(auto_online_restore(root, saved, NULL, NULL), 0);
        assert_file(root, AUTO, "offline");

        /* A kernel without memory hotplug has no such attribute. */
        fake_unlink(root, AUTO);
        prev = (char *) 1;
        assert_int_equal(auto_online_take_over(root, saved, &prev), 0);
        assert_null(prev);
}

static void test_take_over_after_crash(void **state) {
        const char *root = *state;
        _cleanup_free_ char *saved = saved_path(root), *prev = NULL, *prev2 = NULL;

        fake_write(root, AUTO, "online\n");
        assert_int_equal(auto_online_take_over(root, saved, &prev), 1);
        /* kill -9: no restore. The restarted daemon finds "offline" and the saved value. */
        assert_int_equal(auto_online_take_over(root, saved, &prev2), 0);
        assert_non_null(prev2);
        assert_string_equal(prev2, "online");
        assert_file(root, AUTO, "offline");
        /* It restores the original, not its predecessor's "offline". */
        assert_int_equal(auto_online_restore(root, saved, prev2, NULL), 1);
        assert_file(root, AUTO, "online");
        assert_file(root, SAVED, NULL);

        /* The same with the value read from the file alone (policy now says no). */
        free(prev);
        prev = NULL;
        assert_int_equal(auto_online_take_over(root, saved, &prev), 1);
        assert_int_equal(auto_online_restore(root, saved, NULL, NULL), 1);
        assert_file(root, AUTO, "online");
}

static void test_take_over_newer_value_wins(void **state) {
        const char *root = *state;
        _cleanup_free_ char *saved = saved_path(root), *prev = NULL;

        /* Saved by a crashed run, then an admin chose another value before the restart. */
        fake_write(root, SAVED, "online_movable\n");
        fake_write(root, AUTO, "online_kernel\n");
        assert_int_equal(auto_online_take_over(root, saved, &prev), 1);
        assert_string_equal(prev, "online_kernel");
        assert_file(root, SAVED, "online_kernel");
        assert_file(root, AUTO, "offline");
}

static void test_restore_leaves_a_changed_value(void **state) {
        const char *root = *state;
        _cleanup_free_ char *saved = saved_path(root), *prev = NULL, *found = NULL;

        fake_write(root, AUTO, "online\n");
        assert_int_equal(auto_online_take_over(root, saved, &prev), 1);
        fake_write(root, AUTO, "online_movable\n");
        assert_int_equal(auto_online_restore(root, saved, prev, &found), 0);
        assert_string_equal(found, "online_movable");
        assert_file(root, AUTO, "online_movable");
        assert_file(root, SAVED, NULL);
}

static void test_saved_file_is_checked(void **state) {
        const char *root = *state;
        _cleanup_free_ char *saved = saved_path(root), *prev = (char *) 1;
        static const char *const bad[] = {
                "", "offline\n", "online; reboot\n", "ONLINE\n", "online\nonline_kernel\n",
                "online_movable_online_movable_online\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                fake_write(root, SAVED, "%s", bad[i]);
                prev = (char *) 1;
                assert_int_equal(auto_online_take_over(root, saved, &prev), 0);
                assert_null(prev);
                assert_int_equal(auto_online_restore(root, saved, NULL, NULL), 0);
                assert_file(root, AUTO, "offline");
        }
        /* Nor is a strange value in sysfs taken as something to write back. */
        fake_write(root, AUTO, "on line\n");
        assert_int_equal(auto_online_take_over(root, saved, &prev), -EINVAL);
        assert_file(root, AUTO, "on line");
}

static void test_take_over_without_state_file(void **state) {
        const char *root = *state;
        _cleanup_free_ char *prev = NULL;

        fake_write(root, AUTO, "online\n");
        assert_int_equal(auto_online_take_over(root, NULL, &prev), 1);
        assert_string_equal(prev, "online");
        assert_file(root, AUTO, "offline");
        assert_int_equal(auto_online_restore(root, NULL, prev, NULL), 1);
        assert_file(root, AUTO, "online");
}

/*
 * A link in a test tree must not take the write out of it: auto_online_blocks
 * is opened beneath the root like every state file. It was opened with
 * open(), and "offline" landed in the file the link named.
 */
static void test_take_over_link_out_of_tree(void **state) {
        const char *root = *state;
        char *outside = fake_tree_new();
        _cleanup_free_ char *saved = saved_path(root), *target = NULL, *prev = NULL;

        fake_write(outside, "victim", "online\n");
        assert_true(asprintf(&target, "%s/victim", outside) > 0);
        fake_unlink(root, AUTO);
        fake_symlink(root, AUTO, target);
        assert_int_equal(auto_online_take_over(root, saved, &prev), -ELOOP);
        assert_null(prev);
        assert_file(outside, "victim", "online");
        fake_tree_free(outside);
}

/* Every write is seen, even one of the value it holds, which no read can tell from ours. */
static void test_watch_sees_every_write(void **state) {
        const char *root = *state;
        _cleanup_free_ char *saved = saved_path(root), *prev = NULL, *path = NULL;
        _cleanup_close_ int fd = -1;
        FILE *f;

        fake_write(root, AUTO, "online\n");
        assert_int_equal(auto_online_take_over(root, saved, &prev), 1);
        assert_int_equal(auto_online_watch(root, &fd), 0);
        assert_int_equal(auto_online_watch_read(fd), 0);
        /* echo offline > auto_online_blocks, over our own "offline" */
        assert_true(asprintf(&path, "%s/%s", root, AUTO) > 0);
        f = fopen(path, "we");
        assert_non_null(f);
        fputs("offline\n", f);
        fclose(f);
        assert_int_equal(auto_online_watch_read(fd), 1);
        assert_int_equal(auto_online_watch_read(fd), 0);
        /* Then it is theirs: the saved value goes, and nothing is restored. */
        assert_int_equal(auto_online_release(saved), 0);
        assert_file(root, SAVED, NULL);
        assert_int_equal(auto_online_restore(root, saved, NULL, NULL), 0);
        assert_file(root, AUTO, "offline");
        /* A missing attribute cannot be watched. */
        fake_unlink(root, AUTO);
        closep(&fd);
        assert_int_equal(auto_online_watch(root, &fd), -ENOENT);
}

/* Kernel settings that slow every online: named with their file and the fix; absent when off. */
static void test_slow_settings(void **state) {
        char *root = fake_tree_new();
        struct conflicts c = {};

        fake_write(root, "module/page_alloc/parameters/shuffle", "N\n");
        fake_write(root, "proc/cmdline", "root=/dev/vda init_on_free=0 quiet\n");
        assert_int_equal(coexist_slow_settings(root, &c), 0);
        assert_int_equal(c.n, 0);

        fake_write(root, "module/page_alloc/parameters/shuffle", "Y\n");
        fake_write(root, "proc/cmdline", "BOOT_IMAGE=/vmlinuz xinit_on_free=1 init_on_free=1 quiet\n");
        assert_int_equal(coexist_slow_settings(root, &c), 0);
        assert_int_equal(c.n, 2);
        assert_non_null(strstr(c.items[0].what, "page_alloc.shuffle is on"));
        assert_non_null(strstr(c.items[0].where, "module/page_alloc/parameters/shuffle"));
        assert_non_null(strstr(c.items[1].what, "init_on_free is on"));
        assert_non_null(strstr(c.items[1].fix, "boot without init_on_free=1"));
        conflicts_clear(&c);

        /* A look-alike word is not the parameter. */
        fake_write(root, "module/page_alloc/parameters/shuffle", "N\n");
        fake_write(root, "proc/cmdline", "xinit_on_free=1\n");
        assert_int_equal(coexist_slow_settings(root, &c), 0);
        assert_int_equal(c.n, 0);
        fake_tree_free(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_slow_settings),
                cmocka_unit_test_setup_teardown(test_clean, setup, teardown),
                cmocka_unit_test_setup_teardown(test_auto_online, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rule_writes_state, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rule_spaced_and_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_masked_and_overridden, setup, teardown),
                cmocka_unit_test_setup_teardown(test_missing_dirs, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_over_and_restore, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_over_nothing_to_do, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_over_after_crash, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_over_newer_value_wins, setup, teardown),
                cmocka_unit_test_setup_teardown(test_restore_leaves_a_changed_value, setup, teardown),
                cmocka_unit_test_setup_teardown(test_saved_file_is_checked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_over_without_state_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_over_link_out_of_tree, setup, teardown),
                cmocka_unit_test_setup_teardown(test_watch_sees_every_write, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
