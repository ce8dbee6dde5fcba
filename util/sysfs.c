/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include "sysfs.h"
#include "util.h"

int sysfs_path(char **ret, const char *root, const char *relfmt, ...) {
        _cleanup_free_ char *rel = NULL;
        char *path;
        va_list ap;
        int r;

        va_start(ap, relfmt);
        r = vasprintf(&rel, relfmt, ap);
        va_end(ap);
        if (r < 0) {
                rel = NULL;
                return -ENOMEM;
        }
        if (asprintf(&path, "%s/%s", root, rel) < 0)
                return -ENOMEM;
        *ret = path;
        return 0;
}

int read_full_file(const char *path, char **ret_value, size_t *ret_size) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;

        for (;;) {
                ssize_t n;

                if (allocated - size < 4096) {
                        size_t na = allocated ? allocated * 2 : 4096;
                        char *p;

                        if (na > 64U * 1024 * 1024)
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
        }
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

int sysfs_read(const char *root, const char *rel, char **ret_value) {
        _cleanup_free_ char *path = NULL, *buf = NULL;
        size_t len;
        int r;

        r = sysfs_path(&path, root, "%s", rel);
        if (r < 0)
                return r;
        r = read_full_file(path, &buf, &len);
        if (r < 0)
                return r;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
                buf[--len] = '\0';
        *ret_value = TAKE_PTR(buf);
        return 0;
}

int sysfs_read_u64(const char *root, const char *rel, int base, uint64_t *ret_value) {
        _cleanup_free_ char *s = NULL;
        const char *p;
        uint64_t v;
        int r;

        r = sysfs_read(root, rel, &s);
        if (r < 0)
                return r;
        p = s;
        if (base == 16 && (startswith(p, "0x") || startswith(p, "0X")))
                p += 2;
        r = parse_u64(p, base, &v);
        if (r < 0)
                return r;
        *ret_value = v;
        return 0;
}

int sysfs_write(const char *root, const char *rel, const char *value) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        r = sysfs_path(&path, root, "%s", rel);
        if (r < 0)
                return r;
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
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

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

int sysfs_list_ids(const char *root, const char *rel, const char *prefix, uint64_t **ret_ids, size_t *ret_n) {
        _cleanup_free_ char *path = NULL;
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        size_t n = 0, allocated = 0, plen = strlen(prefix);
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
                if (strncmp(de->d_name, prefix, plen) != 0 || !isdigit((unsigned char) de->d_name[plen]))
                        continue;
                if (parse_u64(de->d_name + plen, 10, &id) < 0)
                        continue;
                if (GROW(ids, allocated, n + 1) < 0)
                        return -ENOMEM;
                ids[n++] = id;
        }
        /* readdir order is arbitrary, and memory10 sorts before memory9 as text. */
        if (n > 0)
                qsort(ids, n, sizeof(*ids), cmp_u64);
        *ret_ids = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}
