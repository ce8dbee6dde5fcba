/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "sysfs.h"
#include "util.h"

/* root + "/" + rel into buf, no formatting: this runs for every sysfs file we touch. */
static int path_join(char *buf, size_t size, const char *root, const char *rel) {
        size_t a = strlen(root), b = strlen(rel);

        if (a + 1 + b + 1 > size)
                return -ENAMETOOLONG;
        memcpy(buf, root, a);
        buf[a] = '/';
        memcpy(buf + a + 1, rel, b + 1);
        return 0;
}

int sysfs_path(char **ret, const char *root, const char *relfmt, ...) {
        char rel[PATH_MAX], path[PATH_MAX], *p;
        va_list ap;
        int n, r;

        va_start(ap, relfmt);
        n = vsnprintf(rel, sizeof(rel), relfmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        if ((size_t) n >= sizeof(rel))
                return -ENAMETOOLONG;
        r = path_join(path, sizeof(path), root, rel);
        if (r < 0)
                return r;
        p = strdup(path);
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/*
 * A sysfs attribute's show() fills at most one page and the first read
 * returns all of it: a read that leaves room in the buffer is the end,
 * which saves the read that would return 0. Regular files (fake trees)
 * behave the same unless they grow meanwhile.
 */
static int read_file(const char *path, bool short_read_is_eof, size_t max, char **ret_value, size_t *ret_size) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        /* A FIFO in a test tree must not block us: it reads as empty. */
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;

        if (short_read_is_eof) {
                char page[4096];
                ssize_t n;

                /* Most attributes are a few bytes: read to the stack, allocate what it holds. */
                do
                        n = read(fd, page, sizeof(page));
                while (n < 0 && errno == EINTR);
                if (n < 0)
                        return -errno;
                allocated = (size_t) n < sizeof(page) ? (size_t) n : 2 * sizeof(page);
                buf = malloc(allocated + 1);
                if (!buf)
                        return -ENOMEM;
                memcpy(buf, page, (size_t) n);
                size = (size_t) n;
                if (size < sizeof(page))
                        goto done;
        }

        for (;;) {
                ssize_t n;

                if (allocated - size < 4096) {
                        size_t na = allocated ? allocated * 2 : 4096;
                        char *p;

                        if (na > max)
                                return -EFBIG;
                        p = realloc(buf, na + 1);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        allocated = na;
                }
                n = read(fd, buf + size, allocated - size);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                size += (size_t) n;
                if (short_read_is_eof && size < allocated)
                        break;
        }
done:
        if (!buf) {
                buf = strdup("");
                if (!buf)
                        return -ENOMEM;
        }
        buf[size] = '\0';
        if (ret_size)
                *ret_size = size;
        *ret_value = TAKE_PTR(buf);
        return 0;
}

int read_full_file(const char *path, char **ret_value, size_t *ret_size) {
        return read_file(path, false, 64U * 1024 * 1024, ret_value, ret_size);
}

int sysfs_read(const char *root, const char *rel, char **ret_value) {
        _cleanup_free_ char *buf = NULL;
        char path[PATH_MAX];
        size_t len;
        int r;

        r = path_join(path, sizeof(path), root, rel);
        if (r < 0)
                return r;
        r = read_file(path, true, SYSFS_ATTR_MAX, &buf, &len);
        if (r < 0)
                return r;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
                buf[--len] = '\0';
        *ret_value = TAKE_PTR(buf);
        return 0;
}

int sysfs_read_raw(const char *root, const char *rel, char **ret_value, size_t *ret_size) {
        char path[PATH_MAX];
        int r;

        r = path_join(path, sizeof(path), root, rel);
        if (r < 0)
                return r;
        return read_file(path, true, SYSFS_ATTR_MAX, ret_value, ret_size);
}

int sysfs_read_u64(const char *root, const char *rel, int base, uint64_t *ret_value) {
        _cleanup_free_ char *s = NULL;
        uint64_t v;
        int r;

        r = sysfs_read(root, rel, &s);
        if (r < 0)
                return r;
        /* Base 16 takes one optional 0x itself; stripping one first would let "0x0x10" through. */
        r = parse_u64(s, base, &v);
        if (r < 0)
                return r;
        *ret_value = v;
        return 0;
}

int sysfs_open_beneath_walk(int dir_fd, const char *rel, int flags) {
        _cleanup_close_ int cur = -1;
        const char *p = rel;

        if (!rel || *rel == '/')
                return -EXDEV;
        for (;;) {
                char comp[NAME_MAX + 1];
                size_t len;
                int fd;

                p += strspn(p, "/");
                len = strcspn(p, "/");
                if (len == 0)
                        return -EISDIR;         /* "" or a trailing slash: no file named */
                if (len > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(comp, p, len);
                comp[len] = '\0';
                p += len;
                if (streq(comp, ".."))
                        return -EXDEV;
                if (p[strspn(p, "/")] == '\0') {
                        fd = openat(cur >= 0 ? cur : dir_fd, comp, flags | O_NOFOLLOW | O_CLOEXEC);
                        return fd < 0 ? -errno : fd;
                }
                if (streq(comp, "."))
                        continue;
                /* A symbolic link here fails with ENOTDIR (O_DIRECTORY does not follow it with O_NOFOLLOW). */
                fd = openat(cur >= 0 ? cur : dir_fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return errno == ENOTDIR ? -ELOOP : -errno;
                closep(&cur);
                cur = fd;
        }
}

int sysfs_open_beneath(int dir_fd, const char *rel, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_NOFOLLOW | O_CLOEXEC),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
        };
        long fd;

        if (!rel)
                return -EINVAL;
        fd = syscall(SYS_openat2, dir_fd, rel, &how, sizeof(how));
        if (fd >= 0)
                return (int) fd;
        /* Kernels before 5.6, and seccomp filters that do not know the call. */
        if (errno == ENOSYS || errno == EPERM)
                return sysfs_open_beneath_walk(dir_fd, rel, flags);
        return -errno;
}

#define DELETED " (deleted)"

/* Where fd is, by the kernel's own account; -ENOENT for a directory removed since. */
static int fd_path(int fd, char **ret) {
        char link[64], buf[PATH_MAX];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, buf, sizeof(buf) - 1);
        if (n < 0)
                return -errno;
        if ((size_t) n >= sizeof(buf) - 1)
                return -ENAMETOOLONG;
        buf[n] = 0;
        if (buf[0] != '/')
                return -EINVAL;         /* not a path: an anonymous or pseudo file */
        if ((size_t) n > strlen(DELETED) && streq(buf + n - strlen(DELETED), DELETED))
                return -ENOENT;
        *ret = strdup(buf);
        return *ret ? 0 : -ENOMEM;
}

int sysfs_resolve_beneath(const char *root, const char *rel, char **ret_rel) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
        };
        _cleanup_close_ int root_fd = -1, fd = -1;
        _cleanup_free_ char *root_path = NULL, *path = NULL;
        size_t len;
        char *s;
        int r;

        if (!root || !rel || !ret_rel)
                return -EINVAL;
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return -errno;
        fd = (int) syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
        if (fd < 0)
                return errno == EPERM ? -ENOSYS : -errno;
        /* Without /proc there is no answer here: the caller walks the path itself. */
        r = fd_path(root_fd, &root_path);
        if (r >= 0)
                r = fd_path(fd, &path);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return -ENOSYS;
        len = streq(root_path, "/") ? 0 : strlen(root_path);
        /* RESOLVE_BENEATH kept it inside; the root itself is no answer. */
        if (strncmp(path, root_path, len) != 0 || path[len] != '/' || path[len + 1] == '\0')
                return -EXDEV;
        s = strdup(path + len + 1);
        if (!s)
                return -ENOMEM;
        *ret_rel = s;
        return 0;
}

int sysfs_open(const char *root, const char *rel, int flags) {
        _cleanup_close_ int root_fd = -1;

        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return -errno;
        return sysfs_open_beneath(root_fd, rel, flags);
}

int sysfs_write(const char *root, const char *rel, const char *value) {
        _cleanup_close_ int fd = -1;

        fd = sysfs_open(root, rel, O_WRONLY | O_NOCTTY);
        if (fd < 0)
                return fd;
        return sysfs_write_fd(fd, value);
}

int sysfs_write_fd(int fd, const char *value) {
        size_t len = strlen(value);
        ssize_t n;

        /* One write from offset 0: sysfs stores take the whole value at once. */
        do
                n = pwrite(fd, value, len, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

int sysfs_list_ids(const char *root, const char *rel, const char *prefix, uint64_t **ret_ids, size_t *ret_n) {
        _cleanup_free_ char *path = NULL;
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        size_t n = 0, allocated = 0;
        int r;

        r = sysfs_path(&path, root, "%s", rel);
        if (r < 0)
                return r;
        d = opendir(path);
        if (!d)
                return -errno;
        for (;;) {
                struct dirent *de;
                uint64_t id;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return -errno;
                        break;
                }
                if (parse_prefixed_id(de->d_name, prefix, &id) < 0)
                        continue;
                if (GROW(ids, allocated, n + 1) < 0)
                        return -ENOMEM;
                ids[n++] = id;
        }
        /* readdir order is arbitrary, and memory10 sorts before memory9 as text. */
        if (n > 0)
                sort_u64(ids, n);
        *ret_ids = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}

int sysfs_proc_path(const char *root, const char *name, char **ret) {
        _cleanup_free_ char *canon = realpath(root, NULL);
        char *p;

        if (canon && streq(canon, "/sys")) {
                if (asprintf(&p, "/proc/%s", name) < 0)
                        return -ENOMEM;
        } else if (asprintf(&p, "%s/proc/%s", root, name) < 0)
                return -ENOMEM;
        *ret = p;
        return 0;
}

int sysfs_opendir_optional(const char *root, const char *rel, char **ret_path, DIR **ret) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = sysfs_path(&path, root, "%s", rel);
        if (r < 0)
                return r;
        *ret = opendir(path);
        if (!*ret && errno != ENOENT)
                return -errno;
        if (ret_path)
                *ret_path = TAKE_PTR(path);
        return 0;
}
