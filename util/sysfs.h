/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <stddef.h>
#include <dirent.h>

/*
 * Every sysfs access goes through a root directory (default "/sys"), so
 * tests can point the daemon at a fake tree. rel is relative to the root,
 * e.g. "devices/system/memory/memory32/state".
 */

/* Build "<root>/<rel>" with printf-style rel. Returns -ENOMEM. */
int sysfs_path(char **ret, const char *root, const char *relfmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Read a small attribute, trailing newline stripped. -errno on failure;
 * -EFBIG past SYSFS_ATTR_MAX (a sysfs attribute is one page). A FIFO (in a
 * test tree) reads as empty instead of blocking.
 */
#define SYSFS_ATTR_MAX (1024 * 1024)
int sysfs_read(const char *root, const char *rel, char **ret_value);
int sysfs_read_u64(const char *root, const char *rel, int base, uint64_t *ret_value);
/* The same, as the kernel wrote it: nothing stripped, *ret_size bytes (a list whose last line may be cut). */
int sysfs_read_raw(const char *root, const char *rel, char **ret_value, size_t *ret_size);

/*
 * Open rel below the directory dir_fd and nowhere else: no absolute path,
 * no ".." or symbolic link that leaves it, and no symbolic link as the last
 * component (O_NOFOLLOW), so a write through a test tree never lands
 * outside it. openat2() with RESOLVE_BENEATH where the kernel has it (5.6);
 * else sysfs_open_beneath_walk(). O_CLOEXEC is always added. Returns the
 * fd, or -errno (-EXDEV or -ELOOP for a path that would leave the tree).
 */
int sysfs_open_beneath(int dir_fd, const char *rel, int flags);
/* The fallback: one component at a time, following no symbolic link at all (stricter). */
int sysfs_open_beneath_walk(int dir_fd, const char *rel, int flags);
/* The same below <root> (opened as given: the root itself is the admin's choice). */
int sysfs_open(const char *root, const char *rel, int flags);

/*
 * Where rel, followed through its symbolic links, leads below root, as a
 * path relative to root, in a few syscalls: openat2() with
 * RESOLVE_BENEATH (a link that leaves the root fails: -EXDEV), then the
 * kernel's name for what it opened (/proc/self/fd). -ENOSYS when that
 * cannot be had (no openat2(), no /proc): the caller resolves it itself.
 */
int sysfs_resolve_beneath(const char *root, const char *rel, char **ret_rel);

/*
 * The /proc file that goes with this sysfs root: /proc/NAME for the real
 * /sys; under another root (a test tree), <root>/proc/NAME. Caller frees.
 */
int sysfs_proc_path(const char *root, const char *name, char **ret);

/* Write value to an attribute with a single write(), opened with sysfs_open(). -errno on failure. */
int sysfs_write(const char *root, const char *rel, const char *value);
/* The same on an open attribute: one pwrite() at offset 0, EINTR retried. */
int sysfs_write_fd(int fd, const char *value);

/*
 * Numeric suffixes of the entries "<prefix><digits>" in directory <root>/<rel>
 * ("cpu" matches cpu0 but not cpufreq), sorted ascending. -errno if the
 * directory cannot be read.
 */
int sysfs_list_ids(const char *root, const char *rel, const char *prefix, uint64_t **ret_ids, size_t *ret_n);

/*
 * <root>/<rel> opened for listing, or *ret NULL when it does not exist
 * (what this kernel lacks: nothing to read). ret_path (may be NULL) gets
 * the full path. -errno for any other failure.
 */
int sysfs_opendir_optional(const char *root, const char *rel, char **ret_path, DIR **ret);

/* Read the whole file at an absolute path (small files only). */
int read_full_file(const char *path, char **ret_value, size_t *ret_size);
