/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include "interface.h"
#include "status-read.h"
#include "topology.h"
#include "util.h"

/*
 * The running batch, from the KEY=value file the daemon rewrites twice a
 * second while a batch runs (loop.c write_progress_file()) and removes
 * when it ends. It is outside input like sysfs: bounded and checked here,
 * escaped by the renderers.
 */

/* Longer than the daemon ever writes (its STATUS= is at most 160 bytes): not its file. */
#define PROGRESS_TEXT_MAX 256

void status_batch_done(struct status_batch *b) {
        free(b->status);
        free(b->trigger);
        *b = (struct status_batch) { .node = NODE_NONE };
}

static int set_text(char **dst, const char *value, size_t len) {
        char *copy;

        if (len > PROGRESS_TEXT_MAX || memchr(value, '\0', len))
                return 0;
        copy = strndup(value, len);
        if (!copy)
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

static void set_u64(uint64_t *dst, const char *value, size_t len) {
        char buf[24];
        uint64_t v;

        if (len == 0 || len >= sizeof(buf))
                return;
        memcpy(buf, value, len);
        buf[len] = '\0';
        if (parse_u64(buf, 10, &v) >= 0)
                *dst = v;
}

static void set_node(int *dst, const char *value, size_t len) {
        char buf[16];
        int node;

        if (len == 0 || len >= sizeof(buf))
                return;
        memcpy(buf, value, len);
        buf[len] = '\0';
        if (streq(buf, "-1"))
                *dst = NODE_NONE;
        else if (parse_node_id(buf, &node) >= 0)
                *dst = node;
}

int status_batch_parse(const char *text, size_t len, struct status_batch *ret) {
        _cleanup_(status_batch_done) struct status_batch b = { .node = NODE_NONE, .age_usec = UINT64_MAX };
        bool have_total = false;
        int r;

        for (const char *p = text, *end = text + len; p < end; ) {
                const char *nl = memchr(p, '\n', (size_t) (end - p)), *line_end = nl ?: end, *eq;
                size_t key_len, value_len;
                const char *value;

                eq = memchr(p, '=', (size_t) (line_end - p));
                if (eq) {
                        key_len = (size_t) (eq - p);
                        value = eq + 1;
                        value_len = (size_t) (line_end - value);
#define KEY_IS(k) (key_len == strlen(k) && memcmp(p, k, key_len) == 0)
                        r = 0;
                        if (KEY_IS(PROGRESS_STATUS))
                                r = set_text(&b.status, value, value_len);
                        else if (KEY_IS(PROGRESS_TRIGGER))
                                r = set_text(&b.trigger, value, value_len);
                        else if (KEY_IS(PROGRESS_NODE))
                                set_node(&b.node, value, value_len);
                        else if (KEY_IS(PROGRESS_BLOCKS_DONE))
                                set_u64(&b.blocks_done, value, value_len);
                        else if (KEY_IS(PROGRESS_BLOCKS_TOTAL)) {
                                have_total = true;
                                set_u64(&b.blocks_total, value, value_len);
                        } else if (KEY_IS(PROGRESS_BLOCK_SIZE))
                                set_u64(&b.block_size, value, value_len);
                        else if (KEY_IS(PROGRESS_ELAPSED_USEC))
                                set_u64(&b.elapsed_usec, value, value_len);
#undef KEY_IS
                        if (r < 0)
                                return r;
                }
                p = nl ? nl + 1 : end;
        }
        if (!b.status && !have_total)
                return -EINVAL;
        status_batch_done(ret);
        *ret = b;
        b = (struct status_batch) { .node = NODE_NONE };
        return 0;
}

static uint64_t age_of(const struct stat *st) {
        struct timespec now;
        uint64_t then, n;

        if (clock_gettime(CLOCK_REALTIME, &now) < 0)
                return UINT64_MAX;
        then = (uint64_t) st->st_mtim.tv_sec * USEC_PER_SEC + (uint64_t) st->st_mtim.tv_nsec / NSEC_PER_USEC;
        n = (uint64_t) now.tv_sec * USEC_PER_SEC + (uint64_t) now.tv_nsec / NSEC_PER_USEC;
        return n >= then ? n - then : 0;
}

int status_batch_read(const char *dir, struct status_batch *ret) {
        _cleanup_close_ int dir_fd = -1, fd = -1;
        char buf[STATUS_PROGRESS_MAX + 1];
        struct status_batch b = {};
        struct stat st;
        size_t len = 0;
        int r;

        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return errno == ENOENT ? 0 : -errno;
        /* The directory outlives the daemon: a killed daemon's marker no longer resolves, and no batch runs. */
        if (fstatat(dir_fd, RUNTIME_MARKER, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
            fstatat(dir_fd, RUNTIME_MARKER, &st, 0) < 0 && errno == ENOENT)
                return 0;
        /* O_NONBLOCK: a FIFO put there must not hang us; fstat() then refuses it */
        fd = openat(dir_fd, PROGRESS_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADF;
        if (st.st_size > STATUS_PROGRESS_MAX)
                return -EFBIG;
        while (len < sizeof(buf)) {
                ssize_t n = read(fd, buf + len, sizeof(buf) - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        /* it grew since fstat() */
        if (len > STATUS_PROGRESS_MAX)
                return -EFBIG;
        r = status_batch_parse(buf, len, &b);
        if (r < 0)
                return r;
        b.age_usec = age_of(&st);
        status_batch_done(ret);
        *ret = b;
        return 1;
}
