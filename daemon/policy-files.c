/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include "policy-files.h"
#include "util.h"

/*
 * st, of something opened to read config from: owned by root or by the
 * user we run as, writable by neither group nor others. A sticky bit does
 * not help: anyone may still add a file or a link to a sticky directory.
 * subject goes before "is": "" for the thing itself.
 */
static int check_owner_mode(const struct stat *st, const char *subject, char *reason, size_t reason_size) {
        uid_t me = geteuid();

        if (st->st_uid != 0 && st->st_uid != me) {
                if (me == 0)
                        snprintf(reason, reason_size, "%sis owned by uid %u, not by root", subject,
                                 (unsigned) st->st_uid);
                else
                        snprintf(reason, reason_size, "%sis owned by uid %u, not by root or uid %u", subject,
                                 (unsigned) st->st_uid, (unsigned) me);
                return -EPERM;
        }
        if (st->st_mode & (S_IWGRP | S_IWOTH)) {
                snprintf(reason, reason_size, "%sis writable by %s (mode %04o)", subject,
                         (st->st_mode & S_IWGRP) && (st->st_mode & S_IWOTH) ? "group and others" :
                         st->st_mode & S_IWGRP ? "group" : "others",
                         (unsigned) (st->st_mode & 07777));
                return -EPERM;
        }
        return 0;
}

static int dir_open(const char *dir, const char *subject, int *ret_fd, char *reason, size_t reason_size) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                snprintf(reason, reason_size, r == -ENOTDIR ? "%sis not a directory" : "%scannot read: %s", subject,
                         strerror(-r));
                return r;
        }
        r = check_owner_mode(&st, subject, reason, reason_size);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int config_dir_open(const char *dir, int *ret_fd, char *reason, size_t reason_size) {
        return dir_open(dir, "", ret_fd, reason, reason_size);
}

static int too_big(size_t max, char *reason, size_t reason_size) {
        if (max < POLICY_FILE_MAX)
                snprintf(reason, reason_size, "makes all files together larger than %d bytes (1 MiB)",
                         POLICY_FILE_MAX);
        else
                snprintf(reason, reason_size, "is larger than %d bytes (1 MiB)", POLICY_FILE_MAX);
        return -EFBIG;
}

static const char *file_kind(mode_t mode) {
        switch (mode & S_IFMT) {
        case S_IFDIR:
                return "a directory";
        case S_IFIFO:
                return "a FIFO";
        case S_IFCHR:
                return "a character device";
        case S_IFBLK:
                return "a block device";
        case S_IFSOCK:
                return "a socket";
        default:
                return "not a regular file";
        }
}

/*
 * The regular file name in dir_fd, whose fstatat() is st. A FIFO would
 * block the reader (and the event loop with it on reload), and opening a
 * device can do things (a watchdog starts counting): so only a regular
 * file is opened, without blocking or following a link, and must still be
 * that file. target: the path a link led to, for the reasons; NULL.
 */
static int read_regular(int dir_fd, const char *name, const struct stat *st, const char *target, size_t max,
                        char **ret, size_t *ret_size, char *reason, size_t reason_size) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL, *subject = NULL;
        struct stat fst;
        size_t size = 0;
        int r;

        if (!S_ISREG(st->st_mode)) {
                snprintf(reason, reason_size, S_ISDIR(st->st_mode) ? "is %s" : "is %s, not a regular file",
                         file_kind(st->st_mode));
                return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
        }
        if ((uint64_t) st->st_size > max)
                return too_big(max, reason, reason_size);
        fd = openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                if (r == -ELOOP) {
                        snprintf(reason, reason_size, "was replaced while being opened");
                        return -EAGAIN;
                }
                snprintf(reason, reason_size, "cannot open: %s", strerror(-r));
                return r;
        }
        if (fstat(fd, &fst) < 0 || fst.st_dev != st->st_dev || fst.st_ino != st->st_ino || !S_ISREG(fst.st_mode)) {
                snprintf(reason, reason_size, "was replaced while being opened");
                return -EAGAIN;
        }
        if (target && asprintf(&subject, "links to %s, which ", target) < 0) {
                snprintf(reason, reason_size, "out of memory");
                return -ENOMEM;
        }
        r = check_owner_mode(&fst, subject ?: "", reason, reason_size);
        if (r < 0)
                return r;
        /* One byte more than allowed shows a file that grew meanwhile. */
        buf = malloc((size_t) st->st_size + 2);
        if (!buf) {
                snprintf(reason, reason_size, "out of memory");
                return -ENOMEM;
        }
        while (size <= (size_t) st->st_size) {
                ssize_t n = read(fd, buf + size, (size_t) st->st_size + 1 - size);

                if (n < 0) {
                        r = -errno;
                        if (r == -EINTR)
                                continue;
                        snprintf(reason, reason_size, "cannot read: %s", strerror(-r));
                        return r;
                }
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        if (size > (size_t) st->st_size) {
                snprintf(reason, reason_size, "grew while being read");
                return -EAGAIN;
        }
        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

/*
 * A link, judged by where it leads: the target's directory is opened and
 * checked, and the target read beneath it. realpath() leaves no link in
 * the way, so a link there now was put there meanwhile.
 */
static int read_link_target(const char *path, size_t max, char **ret, size_t *ret_size, char *reason,
                            size_t reason_size) {
        _cleanup_free_ char *target = NULL, *dir = NULL, *subject = NULL;
        _cleanup_close_ int dir_fd = -1;
        const char *slash, *name;
        struct stat st;
        int r;

        target = realpath(path, NULL);
        if (!target) {
                r = -errno;
                if (r == -ENOENT) {
                        snprintf(reason, reason_size, "is a dangling symbolic link");
                        return -ENOLINK;
                }
                snprintf(reason, reason_size, "cannot open: %s", strerror(-r));
                return r;
        }
        slash = strrchr(target, '/');           /* realpath() gives an absolute path */
        dir = slash == target ? strdup("/") : strndup(target, (size_t) (slash - target));
        name = slash[1] ? slash + 1 : ".";
        if (!dir || asprintf(&subject, "links into %s, which ", dir) < 0) {
                snprintf(reason, reason_size, "out of memory");
                return -ENOMEM;
        }
        r = dir_open(dir, subject, &dir_fd, reason, reason_size);
        if (r < 0)
                return r;
        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                r = -errno;
                snprintf(reason, reason_size, "cannot open: %s", strerror(-r));
                return r;
        }
        if (S_ISLNK(st.st_mode)) {
                snprintf(reason, reason_size, "was replaced while being opened");
                return -EAGAIN;
        }
        return read_regular(dir_fd, name, &st, target, max, ret, ret_size, reason, reason_size);
}

int config_read(int dir_fd, const char *name, const char *path, size_t max, char **ret, size_t *ret_size, char *reason,
                size_t reason_size) {
        struct stat st;
        int r;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                r = -errno;
                snprintf(reason, reason_size, "cannot open: %s", strerror(-r));
                return r;
        }
        if (S_ISLNK(st.st_mode))
                return read_link_target(path, max, ret, ret_size, reason, reason_size);
        return read_regular(dir_fd, name, &st, NULL, max, ret, ret_size, reason, reason_size);
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

void config_dropins_free(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* "name.conf", not hidden (editors' and package managers' leftovers are). */
static bool dropin_name(const char *name) {
        size_t n = strlen(name);

        return name[0] != '.' && n > 5 && streq(name + n - 5, ".conf");
}

/* Subdirectories are skipped; every other *.conf is read (and refused if it is not a regular file). */
int config_list_dropins(const char *dir, int *ret_fd, char ***ret, size_t *ret_n, char *reason, size_t reason_size) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_close_ int fd = -1, dup_fd = -1;
        char **names = NULL;
        size_t n = 0, allocated = 0;
        int r;

        r = config_dir_open(dir, &fd, reason, reason_size);
        if (r == -ENOENT) {
                *ret_fd = -1;
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return r;
        /* readdir() on a duplicate: fd stays ours to open the drop-ins beneath */
        dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd >= 0)
                d = fdopendir(dup_fd);
        if (!d) {
                r = -errno;
                snprintf(reason, reason_size, "cannot read: %s", strerror(-r));
                return r;
        }
        dup_fd = -1;            /* the DIR's now */
        for (;;) {
                struct dirent *de;
                struct stat st;
                char *path;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        r = -errno;
                        if (r < 0)
                                snprintf(reason, reason_size, "cannot read: %s", strerror(-r));
                        break;
                }
                if (!dropin_name(de->d_name))
                        continue;
                if (de->d_type == DT_DIR ||
                    (de->d_type == DT_UNKNOWN && fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode)))
                        continue;
                if (n >= POLICY_DROPINS_MAX) {
                        snprintf(reason, reason_size, "has more than %d drop-ins", POLICY_DROPINS_MAX);
                        r = -E2BIG;
                        break;
                }
                if (GROW(names, allocated, n + 1) < 0 || asprintf(&path, "%s/%s", dir, de->d_name) < 0) {
                        snprintf(reason, reason_size, "out of memory");
                        r = -ENOMEM;
                        break;
                }
                names[n++] = path;
        }
        if (r < 0) {
                config_dropins_free(names, n);
                return r;
        }
        if (n > 1)
                qsort(names, n, sizeof(*names), cmp_names);
        *ret_fd = TAKE_FD(fd);
        *ret = names;
        *ret_n = n;
        return 0;
}
