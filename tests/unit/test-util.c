/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "cli-error.h"
#include "cpuset.h"
#include "escape.h"
#include "handoff.h"
#include "fake-tree.h"
#include "string-table.h"
#include "sysfs.h"
#include "uring.h"
#include "util.h"

static void assert_roundtrip(const char *in, const char *want) {
        _cleanup_cpuset_ struct bitmask *m = NULL;
        _cleanup_free_ char *out = NULL;

        assert_int_equal(cpulist_parse(in, &m), 0);
        assert_int_equal(cpulist_format(m, &out), 0);
        assert_string_equal(out, want);
}

static void test_cpulist_roundtrip(void **state) {
        (void) state;
        assert_roundtrip("", "");
        assert_roundtrip("\n", "");
        assert_roundtrip("0", "0");
        assert_roundtrip("0-3\n", "0-3");
        assert_roundtrip("0-3,8,10-11", "0-3,8,10-11");
        assert_roundtrip("5,4,3", "3-5");              /* unordered input is normalised */
        assert_roundtrip("0-1,1-2", "0-2");            /* overlaps merge */
        assert_roundtrip("1,3,5,7", "1,3,5,7");
        assert_roundtrip("8191", "8191");              /* last bit of CPUSET_MAX */
        assert_roundtrip("63-65", "63-65");            /* across a word boundary */
        assert_roundtrip(" 0-1 , 8,\t9 \n", "0-1,8-9");  /* blanks around commas, as in config files */
}

static void test_cpulist_contents(void **state) {
        _cleanup_cpuset_ struct bitmask *m = NULL;

        (void) state;
        assert_int_equal(cpulist_parse("0-3,8,100-101", &m), 0);
        assert_int_equal(cpuset_count(m), 7);
        assert_true(cpuset_isset(m, 0));
        assert_true(cpuset_isset(m, 3));
        assert_false(cpuset_isset(m, 4));
        assert_true(cpuset_isset(m, 8));
        assert_true(cpuset_isset(m, 101));
        assert_false(cpuset_isset(m, 102));
        assert_false(cpuset_isset(m, 100000));          /* beyond the mask */
        assert_int_equal(cpuset_next(m, 0), 0);
        assert_int_equal(cpuset_next(m, 4), 8);
        assert_int_equal(cpuset_next(m, 9), 100);
        assert_int_equal(cpuset_next(m, 102), -1);
        assert_int_equal(cpuset_next(NULL, 0), -1);
        assert_int_equal(cpuset_count(NULL), 0);
}

static void test_cpulist_errors(void **state) {
        static const char *const bad[] = {
                "a", "-1", "1-", "3-1", ",", "1,,2", "1 2", "1,", "0-3x", "1-2-3", "8192", "0-8192",
                "99999999999999999999",
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct bitmask *m = NULL;
                int r = cpulist_parse(bad[i], &m);

                if (r >= 0)
                        fail_msg("cpulist_parse(\"%s\") accepted", bad[i]);
                assert_true(r == -EINVAL || r == -ERANGE);
                assert_null(m);                         /* untouched on failure */
        }
}

static void test_parse_u64(void **state) {
        uint64_t v = 42;

        (void) state;
        assert_int_equal(parse_u64("0", 10, &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(parse_u64("18446744073709551615", 10, &v), 0);
        assert_true(v == UINT64_MAX);
        assert_int_equal(parse_u64("8000000", 16, &v), 0);
        assert_int_equal(v, 128ULL << 20);
        assert_int_equal(parse_u64("ff", 16, &v), 0);
        assert_int_equal(v, 255);

        v = 7;
        assert_int_equal(parse_u64("18446744073709551616", 10, &v), -ERANGE);
        assert_int_equal(parse_u64("", 10, &v), -EINVAL);
        assert_int_equal(parse_u64(NULL, 10, &v), -EINVAL);
        assert_int_equal(parse_u64("-1", 10, &v), -EINVAL);   /* strtoull would wrap */
        assert_int_equal(parse_u64("+1", 10, &v), -EINVAL);
        assert_int_equal(parse_u64(" 1", 10, &v), -EINVAL);
        assert_int_equal(parse_u64("1 ", 10, &v), -EINVAL);
        assert_int_equal(parse_u64("12abc", 10, &v), -EINVAL);
        assert_int_equal(parse_u64("ff", 10, &v), -EINVAL);
        assert_int_equal(parse_u64("0x10", 10, &v), -EINVAL);
        /* Hex takes one optional 0x: strtoull() alone would take "0x0x10" after we strip one. */
        assert_int_equal(parse_u64("0x0x10", 16, &v), -EINVAL);
        assert_int_equal(parse_u64("0X0x10", 16, &v), -EINVAL);
        assert_int_equal(parse_u64("0x", 16, &v), -EINVAL);
        assert_int_equal(parse_u64("x10", 16, &v), -EINVAL);
        assert_int_equal(parse_u64("0x-1", 16, &v), -EINVAL);
        assert_int_equal(parse_u64("0x 1", 16, &v), -EINVAL);
        assert_int_equal(parse_u64("0x10000000000000000", 16, &v), -ERANGE);
        assert_int_equal(v, 7);                                 /* untouched on failure */
        assert_int_equal(parse_u64("0x10", 16, &v), 0);
        assert_int_equal(v, 16);
        assert_int_equal(parse_u64("0XfF", 16, &v), 0);
        assert_int_equal(v, 255);

        unsigned u = 3;
        assert_int_equal(parse_unsigned("4294967295", &u), 0);
        assert_true(u == 4294967295U);
        assert_int_equal(parse_unsigned("4294967296", &u), -ERANGE);
        assert_true(u == 4294967295U);
}

static void test_parse_ids(void **state) {
        uint64_t id = 5;
        int node = 7;

        (void) state;
        assert_int_equal(parse_node_id("0", &node), 0);
        assert_int_equal(node, 0);
        assert_int_equal(parse_node_id("1023", &node), 0);
        assert_int_equal(node, NODE_ID_MAX);
        assert_int_equal(parse_node_id("1024", &node), -ERANGE);
        assert_int_equal(parse_node_id("99999999", &node), -ERANGE);
        assert_int_equal(parse_node_id("2147483648", &node), -ERANGE);
        assert_int_equal(parse_node_id("99999999999999999999", &node), -ERANGE);
        assert_int_equal(parse_node_id("-1", &node), -EINVAL);
        assert_int_equal(parse_node_id("1 ", &node), -EINVAL);
        assert_int_equal(parse_node_id("0x1", &node), -EINVAL);
        assert_int_equal(parse_node_id("", &node), -EINVAL);
        assert_int_equal(node, NODE_ID_MAX);

        assert_int_equal(parse_prefixed_id("node12", "node", &id), 0);
        assert_int_equal(id, 12);
        assert_int_equal(parse_prefixed_id("node", "node", &id), -EINVAL);
        assert_int_equal(parse_prefixed_id("nodex", "node", &id), -EINVAL);
        assert_int_equal(parse_prefixed_id("node+1", "node", &id), -EINVAL);
        assert_int_equal(parse_prefixed_id("node1a", "node", &id), -EINVAL);
        assert_int_equal(parse_prefixed_id("cpufreq", "cpu", &id), -EINVAL);
        assert_int_equal(parse_prefixed_id("memory065", "memory", &id), -EINVAL);   /* found by fuzzing */
        assert_int_equal(parse_prefixed_id("node00", "node", &id), -EINVAL);
        assert_int_equal(parse_prefixed_id("memory99999999999999999999", "memory", &id), -ERANGE);
        assert_int_equal(parse_prefixed_id(NULL, "node", &id), -EINVAL);
        assert_int_equal(id, 12);
        assert_int_equal(parse_prefixed_id("node0", "node", &id), 0);
        assert_int_equal(id, 0);
}

static void assert_escaped(const char *in, size_t size, const char *want) {
        char buf[256];

        assert_true(size <= sizeof(buf));
        memset(buf, 'Z', sizeof(buf));
        assert_int_equal(escape_text(buf, size, in), strlen(want));
        assert_string_equal(buf, want);
}

static void test_escape_text(void **state) {
        (void) state;
        assert_escaped("plain text, 100%", 64, "plain text, 100%");
        assert_escaped("\x1b]0;title\x07", 64, "\\x1b]0;title\\x07");
        assert_escaped("a\nb\tc\rd\x7f", 64, "a\\x0ab\\x09c\\x0dd\\x7f");
        assert_escaped("back\\slash", 64, "back\\\\slash");
        assert_escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 64, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
        /* C1 controls (8-bit CSI), stray and overlong bytes, surrogates. */
        assert_escaped("\xc2\x9b" "2J", 64, "\\xc2\\x9b2J");
        assert_escaped("\x9b\xff\xc3", 64, "\\x9b\\xff\\xc3");
        assert_escaped("\xc0\xaf\xe0\x80\xaf", 64, "\\xc0\\xaf\\xe0\\x80\\xaf");
        assert_escaped("\xed\xa0\x80", 64, "\\xed\\xa0\\x80");
        /* bidi controls and the line separator read as text but reorder or break it */
        assert_escaped("a\xe2\x80\xae" "b\xe2\x81\xa6" "c\xe2\x80\xa8" "d", 64,
                       "a\\xe2\\x80\\xaeb\\xe2\\x81\\xa6c\\xe2\\x80\\xa8d");
        /* Truncated whole: never half an escape or half a character. */
        assert_escaped("ab\x1b", 6, "ab");
        assert_escaped("ab\x1b", 7, "ab\\x1b");
        assert_escaped("a\xe2\x82\xac", 4, "a");
        assert_escaped("abc", 1, "");
        assert_int_equal(escape_text(NULL, 0, "abc"), 0);
}

static void test_parse_bool_strstrip(void **state) {
        bool b = false;
        char buf[] = "  \t hello world \n";

        (void) state;
        assert_int_equal(parse_bool("YES", &b), 0);
        assert_true(b);
        assert_int_equal(parse_bool("off", &b), 0);
        assert_false(b);
        assert_int_equal(parse_bool("maybe", &b), -EINVAL);
        assert_false(b);
        assert_string_equal(strstrip(buf), "hello world");
}

static void test_strlist_contains(void **state) {
        assert_true(strlist_contains("mem0,mem1", "mem1"));
        assert_true(strlist_contains("mem0,mem1", "mem0"));
        assert_true(strlist_contains("mem1", "mem1"));
        assert_false(strlist_contains("mem0,mem10", "mem1"));
        assert_false(strlist_contains("mem10", "mem1"));
        assert_false(strlist_contains("xmem1", "mem1"));
        assert_false(strlist_contains("mem0,", "mem"));
        assert_false(strlist_contains(NULL, "mem1"));
        assert_false(strlist_contains("mem1", ""));
        assert_false(strlist_contains("mem1", NULL));
}

static void test_strlist_add_unique(void **state) {
        _cleanup_free_ char *list = NULL;

        assert_int_equal(strlist_add_unique(&list, NULL), 0);
        assert_int_equal(strlist_add_unique(&list, ""), 0);
        assert_null(list);
        assert_int_equal(strlist_add_unique(&list, "mem1"), 0);
        assert_int_equal(strlist_add_unique(&list, "mem10"), 0);
        assert_int_equal(strlist_add_unique(&list, "mem1"), 0);
        assert_int_equal(strlist_add_unique(&list, "mem0"), 0);
        assert_string_equal(list, "mem1,mem10,mem0");
}

static void test_grow_array(void **state) {
        _cleanup_free_ int *a = NULL;
        size_t allocated = 0;

        (void) state;
        assert_int_equal(GROW(a, allocated, 3), 0);
        assert_true(allocated >= 3);
        a[0] = 1;
        assert_int_equal(GROW(a, allocated, 1000), 0);
        assert_true(allocated >= 1000);
        assert_int_equal(a[0], 1);
        assert_int_equal(a[999], 0);                    /* new room is zeroed */
}

/* Attributes at and past one page: the short-read shortcut must not cut them. */
static void test_sysfs_read_sizes(void **state) {
        char *root = fake_tree_new();
        const size_t sizes[] = { 1, 4095, 4096, 4097, 8192, 20000 };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                _cleanup_free_ char *want = malloc(sizes[i] + 1), *got = NULL;
                size_t len;

                assert_non_null(want);
                for (size_t k = 0; k < sizes[i]; k++)
                        want[k] = (char) ('a' + (k * 7 + i) % 26);
                want[sizes[i]] = '\0';
                fake_write(root, "a/big", "%s", want);
                assert_int_equal(sysfs_read(root, "a/big", &got), 0);
                len = strlen(got);
                assert_int_equal(len, sizes[i]);
                assert_memory_equal(got, want, len);
        }
        fake_tree_free(root);
}

static bool is_escape(int r) {
        return r == -EXDEV || r == -ELOOP;
}

/* Writes below a test tree stay in it: no symbolic link may carry them out. */
static void test_sysfs_beneath(void **state) {
        char *root = fake_tree_new(), *outside = fake_tree_new();
        int (*const opens[])(int, const char *, int) = { sysfs_open_beneath, sysfs_open_beneath_walk };
        _cleanup_free_ char *target = NULL, *content = NULL;
        _cleanup_close_ int root_fd = -1;

        (void) state;
        fake_write(outside, "victim", "precious\n");
        assert_true(asprintf(&target, "%s/victim", outside) > 0);
        fake_write(root, "devices/system/memory/memory0/state", "offline\n");
        fake_symlink(root, "devices/system/memory/memory1/state", target);
        fake_symlink(root, "devices/system/memory/memory2", outside);
        fake_symlink(root, "devices/system/memory/memory3/state", "../memory0/state");

        assert_true(is_escape(sysfs_write(root, "devices/system/memory/memory1/state", "online")));
        assert_true(sysfs_write(root, "devices/system/memory/memory2/victim", "online") < 0);
        content = fake_read(outside, "victim");
        assert_string_equal(content, "precious");
        assert_int_equal(sysfs_write(root, "devices/system/memory/memory0/state", "online"), 0);

        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        for (size_t i = 0; i < ELEMENTSOF(opens); i++) {
                int fd;

                fd = opens[i](root_fd, "devices/system/memory/memory0/state", O_RDWR);
                assert_true(fd >= 0);
                assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
                close(fd);
                assert_true(is_escape(opens[i](root_fd, "devices/system/memory/memory1/state", O_RDWR)));
                assert_true(opens[i](root_fd, "devices/system/memory/memory2/victim", O_RDWR) < 0);
                /* Even a link that stays inside is not followed as the attribute itself. */
                assert_true(is_escape(opens[i](root_fd, "devices/system/memory/memory3/state", O_RDWR)));
                assert_true(is_escape(opens[i](root_fd, "../x", O_RDONLY)));
                assert_true(is_escape(opens[i](root_fd, "devices/../../x", O_RDONLY)));
                assert_true(is_escape(opens[i](root_fd, target, O_RDONLY)));
                assert_int_equal(opens[i](root_fd, "devices/nonexistent", O_RDONLY), -ENOENT);
        }
        assert_int_equal(sysfs_open_beneath_walk(root_fd, "", O_RDONLY), -EISDIR);
        assert_int_equal(sysfs_open_beneath(root_fd, NULL, O_RDONLY), -EINVAL);

        fake_tree_free(root);
        fake_tree_free(outside);
}

/*
 * Where a device link leads below the root, in a few syscalls: relative
 * links followed (also through a linked directory), and nothing that
 * leaves the root, by ".." or an absolute link, or ends at the root itself.
 */
static void test_sysfs_resolve_beneath(void **state) {
        char *root = fake_tree_new(), *outside = fake_tree_new();
        _cleanup_free_ char *target = NULL, *rel = NULL, *deep = NULL;

        (void) state;
        fake_mkdir(root, "devices/platform/ACPI0017:00/root0/decoder0.0/region0/dax_region0/dax0.0");
        fake_symlink(root, "bus/dax/devices/dax0.0",
                     "../../../devices/platform/ACPI0017:00/root0/decoder0.0/region0/dax_region0/dax0.0");
        fake_symlink(root, "bus/dax/devices/dax9.0", "../../../../../../x");
        assert_true(asprintf(&target, "%s/devices", root) > 0);
        fake_symlink(root, "bus/dax/devices/dax8.0", target);
        fake_symlink(root, "bus/dax/devices/dax7.0", "../../..");
        fake_symlink(root, "bus/cxl/region", "../../devices/platform/ACPI0017:00/root0/decoder0.0/region0");

        if (sysfs_resolve_beneath(root, "bus/dax/devices/dax0.0", &rel) == -ENOSYS) {
                /* No openat2() (valgrind) or no /proc: said every time, and pmem_resolve_in_root() walks instead. */
                assert_int_equal(sysfs_resolve_beneath(root, "bus/dax/devices/dax9.0", &rel), -ENOSYS);
                goto done;
        }
        assert_string_equal(rel, "devices/platform/ACPI0017:00/root0/decoder0.0/region0/dax_region0/dax0.0");
        assert_int_equal(sysfs_resolve_beneath(root, "bus/cxl/region/dax_region0/dax0.0", &deep), 0);
        assert_string_equal(deep, rel);
        assert_int_equal(sysfs_resolve_beneath(root, "bus/dax/devices/dax9.0", &rel), -EXDEV);
        assert_int_equal(sysfs_resolve_beneath(root, "bus/dax/devices/dax8.0", &rel), -EXDEV);
        assert_int_equal(sysfs_resolve_beneath(root, "bus/dax/devices/dax7.0", &rel), -EXDEV);
        assert_int_equal(sysfs_resolve_beneath(root, "../x", &rel), -EXDEV);
        assert_int_equal(sysfs_resolve_beneath(root, "bus/dax/devices/dax1.0", &rel), -ENOENT);
        assert_int_equal(sysfs_resolve_beneath(root, NULL, &rel), -EINVAL);
        assert_int_equal(sysfs_resolve_beneath(outside, "x", &rel), -ENOENT);
done:
        fake_tree_free(root);
        fake_tree_free(outside);
}

/* A test tree is hostile too: a FIFO must not block a read, a huge file must not be read whole. */
static void test_sysfs_read_hostile(void **state) {
        char *root = fake_tree_new();
        _cleanup_free_ char *fifo = NULL, *big = NULL;
        char *s = NULL;
        int fd;

        (void) state;
        fake_write(root, "a/x", "x\n");
        assert_true(asprintf(&fifo, "%s/a/fifo", root) > 0);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        alarm(10);
        assert_int_equal(sysfs_read(root, "a/fifo", &s), 0);
        alarm(0);
        assert_string_equal(s, "");
        free(s);
        s = NULL;

        assert_true(asprintf(&big, "%s/a/big", root) > 0);
        fd = open(big, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t) SYSFS_ATTR_MAX + 8192), 0);
        close(fd);
        assert_int_equal(sysfs_read(root, "a/big", &s), -EFBIG);
        assert_null(s);
        fake_tree_free(root);
}

static void test_sysfs_read_write(void **state) {
        char *root = fake_tree_new();
        _cleanup_free_ char *s = NULL, *path = NULL, *content = NULL;
        uint64_t v = 0;

        (void) state;
        fake_write(root, "a/attr", "online\n");
        assert_int_equal(sysfs_read(root, "a/attr", &s), 0);
        assert_string_equal(s, "online");

        assert_int_equal(sysfs_write(root, "a/attr", "offline"), 0);
        content = fake_read(root, "a/attr");
        assert_string_equal(content, "offline");

        fake_write(root, "a/hex", "8000000\n");
        assert_int_equal(sysfs_read_u64(root, "a/hex", 16, &v), 0);
        assert_int_equal(v, 128ULL << 20);
        fake_write(root, "a/hex0x", "0x10\n");
        assert_int_equal(sysfs_read_u64(root, "a/hex0x", 16, &v), 0);
        assert_int_equal(v, 16);
        fake_write(root, "a/junk", "12 apples\n");
        assert_int_equal(sysfs_read_u64(root, "a/junk", 10, &v), -EINVAL);
        fake_write(root, "a/hex0x0x", "0x0x10\n");
        assert_int_equal(sysfs_read_u64(root, "a/hex0x0x", 16, &v), -EINVAL);
        assert_int_equal(v, 16);

        fake_write(root, "a/empty", "%s", "");
        free(s);
        s = NULL;
        assert_int_equal(sysfs_read(root, "a/empty", &s), 0);
        assert_string_equal(s, "");

        assert_int_equal(sysfs_path(&path, root, "devices/system/memory/memory%u/state", 32u), 0);
        assert_true(startswith(path, root));
        assert_string_equal(path + strlen(root), "/devices/system/memory/memory32/state");

        fake_tree_free(root);
}

static void test_sysfs_errors(void **state) {
        char *root = fake_tree_new();
        char *s = NULL;

        (void) state;
        assert_int_equal(sysfs_read(root, "nonexistent", &s), -ENOENT);
        assert_null(s);
        assert_int_equal(sysfs_write(root, "nonexistent", "x"), -ENOENT);
        fake_mkdir(root, "dir");
        assert_int_equal(sysfs_write(root, "dir", "x"), -EISDIR);
        fake_tree_free(root);
}

/* Root ignores file modes, so drop to nobody in a child to see EACCES. */
static void test_sysfs_write_readonly(void **state) {
        char *root = fake_tree_new();
        _cleanup_free_ char *path = NULL, *dir = NULL, *after = NULL;
        pid_t pid;
        int status;

        (void) state;
        fake_write(root, "ro/attr", "before\n");
        assert_int_equal(asprintf(&path, "%s/ro/attr", root) >= 0, 1);
        assert_int_equal(asprintf(&dir, "%s/ro", root) >= 0, 1);
        assert_int_equal(chmod(root, 0755), 0);
        assert_int_equal(chmod(dir, 0755), 0);
        assert_int_equal(chmod(path, 0444), 0);

        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
                        _exit(2);
                _exit(sysfs_write(root, "ro/attr", "after") == -EACCES ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        after = fake_read(root, "ro/attr");
        assert_string_equal(after, "before");
        fake_tree_free(root);
}

/* A directory this kernel lacks lists as nothing; one that is there opens; a file in the way is an error. */
static void test_sysfs_opendir_optional(void **state) {
        char *root = fake_tree_new();
        _cleanup_free_ char *path = NULL;
        DIR *d = (DIR *) 0x1;

        (void) state;
        assert_int_equal(sysfs_opendir_optional(root, "bus/cxl/devices", NULL, &d), 0);
        assert_null(d);
        fake_mkdir(root, "bus/cxl/devices");
        assert_int_equal(sysfs_opendir_optional(root, "bus/cxl/devices", &path, &d), 0);
        assert_non_null(d);
        assert_non_null(strstr(path, "/bus/cxl/devices"));
        closedir(d);
        fake_write(root, "bus/dax", "not a directory\n");
        assert_int_equal(sysfs_opendir_optional(root, "bus/dax/devices", NULL, &d), -ENOTDIR);
        fake_tree_free(root);
}

static void test_sysfs_list_ids(void **state) {
        char *root = fake_tree_new();
        _cleanup_free_ uint64_t *ids = NULL;
        uint64_t *none = NULL;
        size_t n = 99;

        (void) state;
        fake_mkdir(root, "d/cpu10");
        fake_mkdir(root, "d/cpu9");
        fake_mkdir(root, "d/cpu100");
        fake_mkdir(root, "d/cpu0");
        fake_mkdir(root, "d/cpufreq");
        fake_mkdir(root, "d/cpuidle");
        fake_write(root, "d/cpu-1", "x");
        fake_write(root, "d/cpu1x", "x");
        fake_write(root, "d/online", "0-1");
        assert_int_equal(sysfs_list_ids(root, "d", "cpu", &ids, &n), 0);
        assert_int_equal(n, 4);
        assert_int_equal(ids[0], 0);
        assert_int_equal(ids[1], 9);
        assert_int_equal(ids[2], 10);
        assert_int_equal(ids[3], 100);

        n = 99;
        assert_int_equal(sysfs_list_ids(root, "missing", "cpu", &none, &n), -ENOENT);
        assert_null(none);
        assert_int_equal(n, 99);
        fake_tree_free(root);
}

static void test_sort_unless_sorted(void **state) {
        uint64_t sorted[] = { 1, 2, 2, 9, 100 }, shuffled[] = { 9, 1, 100, 2, 2 }, one[] = { 7 };

        sort_unless_sorted(sorted, 5, sizeof(uint64_t), cmp_u64);
        sort_unless_sorted(shuffled, 5, sizeof(uint64_t), cmp_u64);
        assert_memory_equal(sorted, ((uint64_t[]) { 1, 2, 2, 9, 100 }), sizeof(sorted));
        assert_memory_equal(shuffled, sorted, sizeof(sorted));
        /* Out of order only at the end. */
        shuffled[4] = 0;
        sort_unless_sorted(shuffled, 5, sizeof(uint64_t), cmp_u64);
        assert_memory_equal(shuffled, ((uint64_t[]) { 0, 1, 2, 2, 9 }), sizeof(shuffled));
        sort_unless_sorted(one, 1, sizeof(uint64_t), cmp_u64);
        sort_unless_sorted(NULL, 0, sizeof(uint64_t), cmp_u64);
        assert_int_equal(one[0], 7);
}

/* Against qsort(), on sizes either side of the insertion-sort cutoff and values using every byte. */
static void test_sort_u64(void **state) {
        static const size_t sizes[] = { 0, 1, 2, 63, 64, 65, 1000, 20000 };
        uint64_t seed = 88172645463325252ULL;

        for (size_t s = 0; s < ELEMENTSOF(sizes); s++)
                for (unsigned shape = 0; shape < 5; shape++) {
                        size_t n = sizes[s];
                        _cleanup_free_ uint64_t *v = calloc(n + 1, sizeof(*v)), *want = calloc(n + 1, sizeof(*v));

                        assert_non_null(v);
                        assert_non_null(want);
                        for (size_t i = 0; i < n; i++) {
                                seed ^= seed << 13;
                                seed ^= seed >> 7;
                                seed ^= seed << 17;
                                switch (shape) {
                                case 0: v[i] = seed; break;                     /* all 8 bytes */
                                case 1: v[i] = seed % 5000; break;              /* latencies: duplicates */
                                case 2: v[i] = 1000000 + (n - i); break;        /* descending */
                                case 3: v[i] = (uint64_t) i << 40; break;       /* sorted, one high byte */
                                default: v[i] = i == n / 2 ? UINT64_MAX : i;    /* one out of place */
                                }
                        }
                        memcpy(want, v, n * sizeof(*v));
                        qsort(want, n, sizeof(*want), cmp_u64);
                        sort_u64(v, n);
                        assert_memory_equal(v, want, n * sizeof(*v) + 1);
                }
}

static void test_format_u64(void **state) {
        char buf[21];

        assert_int_equal(format_u64(buf, 0), 1);
        assert_string_equal(buf, "0");
        assert_int_equal(format_u64(buf, 4096), 4);
        assert_string_equal(buf, "4096");
        assert_int_equal(format_u64(buf, UINT64_MAX), 20);
        assert_string_equal(buf, "18446744073709551615");
}

static void test_percentile(void **state) {
        const uint64_t v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
        const uint64_t one[] = { 42 };

        assert_int_equal(percentile_usec(v, 10, 50), 5);
        assert_int_equal(percentile_usec(v, 10, 90), 9);
        assert_int_equal(percentile_usec(v, 10, 91), 10);
        assert_int_equal(percentile_usec(v, 10, 99), 10);
        assert_int_equal(percentile_usec(v, 10, 100), 10);
        assert_int_equal(percentile_usec(v, 10, 0), 1);
        assert_int_equal(percentile_usec(v, 10, 10), 1);
        assert_int_equal(percentile_usec(v, 10, 11), 2);
        assert_int_equal(percentile_usec(one, 1, 50), 42);
        assert_int_equal(percentile_usec(one, 1, 99), 42);
        assert_int_equal(percentile_usec(NULL, 0, 50), 0);
        assert_int_equal(percentile_usec(v, 0, 50), 0);
}

/* Process CPU time advances while this thread spins, and by no more than the wall clock did. */
static void test_cpu_time(void **state) {
        uint64_t cpu0 = cpu_time_usec(), wall0 = now_usec(), cpu1, wall1;

        do
                cpu1 = cpu_time_usec();
        while (cpu1 == cpu0 && now_usec() - wall0 < 5 * USEC_PER_SEC);
        wall1 = now_usec();
        assert_true(cpu1 > cpu0);
        /* getrusage() counts in ticks: allow one scheduler tick over. */
        assert_true(cpu1 - cpu0 <= wall1 - wall0 + 10 * USEC_PER_MSEC);
}

enum fruit {
        FRUIT_APPLE,
        FRUIT_HOLE,             /* no name: neither printed nor parsed */
        FRUIT_PEAR,
        _FRUIT_MAX,
};

static const char *const fruit_table[_FRUIT_MAX] = {
        [FRUIT_APPLE] = "apple",
        [FRUIT_PEAR] = "pear",
};

const char *fruit_to_string(enum fruit f);
int fruit_from_string(const char *s, enum fruit *ret);
DEFINE_STRING_TABLE(fruit, enum fruit, "no fruit")

static void test_string_table(void **state) {
        enum fruit f = FRUIT_HOLE;

        assert_string_equal(fruit_to_string(FRUIT_APPLE), "apple");
        assert_string_equal(fruit_to_string(FRUIT_PEAR), "pear");
        assert_string_equal(fruit_to_string(FRUIT_HOLE), "no fruit");
        assert_string_equal(fruit_to_string(_FRUIT_MAX), "no fruit");
        assert_string_equal(fruit_to_string((enum fruit) -1), "no fruit");

        assert_int_equal(fruit_from_string("pear", &f), 0);
        assert_int_equal(f, FRUIT_PEAR);
        assert_int_equal(fruit_from_string("apple", &f), 0);
        assert_int_equal(f, FRUIT_APPLE);
        /* Failures leave the output alone. */
        f = FRUIT_HOLE;
        assert_int_equal(fruit_from_string("Pear", &f), -EINVAL);
        assert_int_equal(fruit_from_string("", &f), -EINVAL);
        assert_int_equal(fruit_from_string("no fruit", &f), -EINVAL);
        assert_int_equal(fruit_from_string(NULL, &f), -EINVAL);
        assert_int_equal(f, FRUIT_HOLE);

        assert_int_equal(string_table_lookup(fruit_table, _FRUIT_MAX, "pear"), FRUIT_PEAR);
        assert_int_equal(string_table_lookup(fruit_table, FRUIT_PEAR, "pear"), -EINVAL);
        assert_int_equal(string_table_lookup(NULL, 0, "pear"), -EINVAL);
}

static int cmp_int(const void *key, const void *element) {
        int a = *(const int *) key, b = *(const int *) element;

        return (a > b) - (a < b);
}

static void test_binary_search(void **state) {
        const int v[] = { 2, 4, 4, 4, 9 };
        int key;

        key = 4;
        assert_null(bsearch_safe(&key, NULL, 0, sizeof(int), cmp_int));
        assert_int_equal(*(const int *) bsearch_safe(&key, v, ELEMENTSOF(v), sizeof(int), cmp_int), 4);
        key = 5;
        assert_null(bsearch_safe(&key, v, ELEMENTSOF(v), sizeof(int), cmp_int));

        /* upper_bound(): the first element above the key. */
        key = 1;
        assert_int_equal(upper_bound(&key, v, ELEMENTSOF(v), sizeof(int), cmp_int), 0);
        key = 2;
        assert_int_equal(upper_bound(&key, v, ELEMENTSOF(v), sizeof(int), cmp_int), 1);
        key = 3;
        assert_int_equal(upper_bound(&key, v, ELEMENTSOF(v), sizeof(int), cmp_int), 1);
        key = 4;
        assert_int_equal(upper_bound(&key, v, ELEMENTSOF(v), sizeof(int), cmp_int), 4);
        key = 9;
        assert_int_equal(upper_bound(&key, v, ELEMENTSOF(v), sizeof(int), cmp_int), 5);
        key = 100;
        assert_int_equal(upper_bound(&key, v, ELEMENTSOF(v), sizeof(int), cmp_int), 5);
        assert_int_equal(upper_bound(&key, NULL, 0, sizeof(int), cmp_int), 0);
        /* Every index of a longer array, against a linear count. */
        for (int k = -1; k <= 10; k++) {
                size_t linear = 0;

                for (size_t i = 0; i < ELEMENTSOF(v); i++)
                        linear += v[i] <= k;
                assert_int_equal(upper_bound(&k, v, ELEMENTSOF(v), sizeof(int), cmp_int), linear);
        }
}

static int count_calls;

static int step(int r) {
        count_calls++;
        return r;
}

static void test_ret_gather(void **state) {
        int r = 0;

        (void) state;
        /* Every step runs; the first failure stays; the macro gives each step's own value. */
        assert_int_equal(RET_GATHER(r, step(0)), 0);
        assert_int_equal(r, 0);
        assert_int_equal(RET_GATHER(r, step(3)), 3);
        assert_int_equal(r, 0);                         /* success, even positive, is no failure */
        assert_int_equal(RET_GATHER(r, step(-ENOENT)), -ENOENT);
        assert_int_equal(RET_GATHER(r, step(-ENOMEM)), -ENOMEM);
        assert_int_equal(RET_GATHER(r, step(0)), 0);
        assert_int_equal(r, -ENOENT);
        assert_int_equal(count_calls, 5);
        /* A positive ret counts as no failure yet. */
        r = 7;
        RET_GATHER(r, step(-EIO));
        assert_int_equal(r, -EIO);
        assert_int_equal(count_calls, 6);
}

/* getopt's messages name the subcommand; the caller's argv is left alone. */
static void test_argv_named(void **state) {
        char *in[] = { (char *) "status", (char *) "--json", NULL };
        _cleanup_free_ char **out = argv_named(2, in, "memonlined status");

        assert_non_null(out);
        assert_string_equal(out[0], "memonlined status");
        assert_ptr_equal(out[1], in[1]);
        assert_null(out[2]);
        assert_string_equal(in[0], "status");
}

struct taker {
        struct handoff h;
        int *got[4];
        size_t n;
};

static void *take_all(void *userdata) {
        struct taker *t = userdata;
        int *item;

        while ((item = handoff_take(&t->h))) {
                t->got[t->n] = item;
                __atomic_store_n(&t->n, t->n + 1, __ATOMIC_SEQ_CST);
        }
        return NULL;
}

/* Items reach the sleeping taker one by one, in order; after the close it ends. */
static void test_handoff(void **state) {
        struct taker t = { .n = 0 };
        int items[3] = { 1, 2, 3 };
        pthread_t thread;

        handoff_init(&t.h);
        assert_int_equal(pthread_create(&thread, NULL, take_all, &t), 0);
        for (size_t i = 0; i < 3; i++) {
                handoff_give(&t.h, &items[i]);
                /* The next one only once this one is taken. */
                for (unsigned k = 0; k < 1000 && __atomic_load_n(&t.n, __ATOMIC_SEQ_CST) <= i; k++)
                        usleep(1000);
                assert_int_equal(__atomic_load_n(&t.n, __ATOMIC_SEQ_CST), i + 1);
        }
        handoff_close(&t.h);
        assert_int_equal(pthread_join(thread, NULL), 0);
        assert_int_equal(t.n, 3);
        for (size_t i = 0; i < 3; i++)
                assert_ptr_equal(t.got[i], &items[i]);
        handoff_done(&t.h);
}

/* What cli_error() and its kin print on stderr, read back. */
static char *stderr_of(void (*fn)(void)) {
        char path[] = "/tmp/memonline-clierr-XXXXXX";
        int fd = mkstemp(path), saved;
        char *text = NULL;
        size_t n = 0;
        FILE *f;

        assert_true(fd >= 0);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        assert_true(saved >= 0);
        assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        fn();
        fflush(stderr);
        assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        close(saved);
        close(fd);
        f = fopen(path, "re");
        assert_non_null(f);
        if (getdelim(&text, &n, '\0', f) < 0) {
                free(text);
                text = strdup("");
        }
        fclose(f);
        unlink(path);
        return text;
}

static int cli_returned;

static void say_errors(void) {
        errno = ENOENT;
        cli_error("memonlined status", "cannot read %s: %m", "x");
        cli_returned = cli_error_errno("memonlined report", EACCES, "cannot open: %m");
        assert_int_equal(cli_error_errno(NULL, -EIO, "plain: %m"), -EIO);
        assert_int_equal(cli_oom("memonlined"), -ENOMEM);
        /* errno is the caller's again */
        assert_int_equal(errno, ENOENT);
}

static void test_cli_error(void **state) {
        _cleanup_free_ char *out = stderr_of(say_errors);

        assert_int_equal(cli_returned, -EACCES);
        assert_string_equal(out, "memonlined status: cannot read x: No such file or directory\n"
                                 "memonlined report: cannot open: Permission denied\n"
                                 "plain: Input/output error\n"
                                 "memonlined: out of memory\n");
}

/* The ring: linked writes at offset 0, in order; a failed link cancels the rest of its chain. */
static void test_uring_chain(void **state) {
        char path[] = "/tmp/memonline-uring-XXXXXX";
        struct uring u;
        int fd, ro, r, res;
        uint64_t k;
        unsigned submitted;
        char buf[16] = "";

        r = uring_open(8, &u);
        if (r < 0) {
                /* Only a kernel or a filter without io_uring may say no, and it says so. */
                assert_true(r == -ENOSYS || r == -EPERM);
                return;
        }
        fd = mkstemp(path);
        assert_true(fd >= 0);
        ro = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(ro >= 0);
        assert_int_equal(uring_bind_cpu(&u, 0), 0);
        assert_int_equal(uring_bind_cpu(&u, -1), -EINVAL);

        /* Three links: each at offset 0, so the last one's value stands. */
        assert_int_equal(uring_queue_write(&u, fd, "offline\n", 8, 10, true), 0);
        assert_int_equal(uring_queue_write(&u, fd, "online\n", 7, 11, true), 0);
        assert_int_equal(uring_queue_write(&u, fd, "online_movable\n", 15, 12, false), 0);
        assert_int_equal(uring_submit(&u, &submitted), 0);
        assert_int_equal(submitted, 3);
        assert_int_equal(uring_wait_ready(&u, 3), 0);
        for (uint64_t want = 10; want <= 12; want++) {
                assert_int_equal(uring_wait(&u, &k, &res), 0);
                assert_int_equal(k, want);
                assert_int_equal(res, want == 10 ? 8 : want == 11 ? 7 : 15);
        }
        assert_int_equal(pread(fd, buf, sizeof(buf) - 1, 0), 15);
        assert_string_equal(buf, "online_movable\n");

        /* The second link fails (a read-only file): the third is cancelled, never written. */
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(uring_queue_write(&u, fd, "offline\n", 8, 20, true), 0);
        assert_int_equal(uring_queue_write(&u, ro, "online\n", 7, 21, true), 0);
        assert_int_equal(uring_queue_write(&u, fd, "online_movable\n", 15, 22, false), 0);
        assert_int_equal(uring_submit(&u, &submitted), 0);
        assert_int_equal(submitted, 3);
        for (uint64_t want = 20; want <= 22; want++) {
                assert_int_equal(uring_wait(&u, &k, &res), 0);
                assert_int_equal(k, want);
                assert_int_equal(res, want == 20 ? 8 : want == 21 ? -EBADF : -ECANCELED);
        }
        memset(buf, 0, sizeof(buf));
        assert_int_equal(pread(fd, buf, sizeof(buf) - 1, 0), 8);
        assert_string_equal(buf, "offline\n");

        /* A full ring takes no more. */
        for (unsigned i = 0; i < u.entries; i++)
                assert_int_equal(uring_queue_write(&u, fd, "x", 1, i, false), 0);
        assert_int_equal(uring_queue_write(&u, fd, "x", 1, 99, false), -EBUSY);
        uring_close(&u);
        assert_int_equal(u.fd, -1);
        close(ro);
        close(fd);
        unlink(path);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_handoff),
                cmocka_unit_test(test_uring_chain),
                cmocka_unit_test(test_cli_error),
                cmocka_unit_test(test_cpulist_roundtrip),
                cmocka_unit_test(test_cpulist_contents),
                cmocka_unit_test(test_cpulist_errors),
                cmocka_unit_test(test_parse_u64),
                cmocka_unit_test(test_parse_ids),
                cmocka_unit_test(test_escape_text),
                cmocka_unit_test(test_parse_bool_strstrip),
                cmocka_unit_test(test_strlist_contains),
                cmocka_unit_test(test_strlist_add_unique),
                cmocka_unit_test(test_grow_array),
                cmocka_unit_test(test_sort_unless_sorted),
                cmocka_unit_test(test_sort_u64),
                cmocka_unit_test(test_format_u64),
                cmocka_unit_test(test_percentile),
                cmocka_unit_test(test_cpu_time),
                cmocka_unit_test(test_string_table),
                cmocka_unit_test(test_binary_search),
                cmocka_unit_test(test_sysfs_read_write),
                cmocka_unit_test(test_sysfs_beneath),
                cmocka_unit_test(test_sysfs_resolve_beneath),
                cmocka_unit_test(test_sysfs_read_hostile),
                cmocka_unit_test(test_sysfs_read_sizes),
                cmocka_unit_test(test_sysfs_errors),
                cmocka_unit_test(test_sysfs_write_readonly),
                cmocka_unit_test(test_sysfs_list_ids),
                cmocka_unit_test(test_sysfs_opendir_optional),
                cmocka_unit_test(test_ret_gather),
                cmocka_unit_test(test_argv_named),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
