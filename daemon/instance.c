/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "instance.h"
#include "util.h"

struct instance {
        int dir_fd;
        int lock_fd;
        char marker_target[32];
};

/* The pid the holder wrote, or 0: it may not have written it yet. */
static pid_t lock_holder(int fd) {
        char buf[32];
        uint64_t pid;
        ssize_t n;

        n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        if (parse_u64(buf, 10, &pid) < 0 || pid == 0 || pid > INT_MAX)
                return 0;
        return (pid_t) pid;
}

/* Replaced whole (rename), so the rule never finds the marker missing while a daemon runs. */
static int write_marker(int dir_fd, const char *target) {
        (void) unlinkat(dir_fd, RUNTIME_MARKER ".new", 0);
        if (symlinkat(target, dir_fd, RUNTIME_MARKER ".new") < 0)
                return -errno;
        if (renameat(dir_fd, RUNTIME_MARKER ".new", dir_fd, RUNTIME_MARKER) < 0) {
                int r = -errno;

                (void) unlinkat(dir_fd, RUNTIME_MARKER ".new", 0);
                return r;
        }
        return 0;
}

int instance_lock(const char *dir, pid_t *ret_holder, struct instance **ret) {
        _cleanup_close_ int dir_fd = -1, fd = -1;
        struct instance *i;
        char pid_text[32];
        int n, r;

        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        fd = openat(dir_fd, RUNTIME_LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK)
                        return -errno;
                *ret_holder = lock_holder(fd);
                return -EBUSY;
        }
        n = snprintf(pid_text, sizeof(pid_text), "%d\n", (int) getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, pid_text, (size_t) n, 0) != n)
                return errno ? -errno : -EIO;

        i = calloc(1, sizeof(*i));
        if (!i)
                return -ENOMEM;
        snprintf(i->marker_target, sizeof(i->marker_target), "/proc/%d", (int) getpid());
        r = write_marker(dir_fd, i->marker_target);
        if (r < 0) {
                free(i);
                return r;
        }
        i->dir_fd = TAKE_FD(dir_fd);
        i->lock_fd = TAKE_FD(fd);
        *ret = i;
        return 0;
}

static void instance_unlock(struct instance *i) {
        char target[sizeof(i->marker_target)];
        ssize_t n;

        if (!i)
                return;
        n = readlinkat(i->dir_fd, RUNTIME_MARKER, target, sizeof(target) - 1);
        if (n > 0) {
                target[n] = '\0';
                if (streq(target, i->marker_target))
                        (void) unlinkat(i->dir_fd, RUNTIME_MARKER, 0);
        }
        /* The lock file stays: another daemon may have it open already, waiting for it. */
        close(i->lock_fd);
        close(i->dir_fd);
        free(i);
}

void instance_unlockp(struct instance **i) {
        instance_unlock(*i);
}
