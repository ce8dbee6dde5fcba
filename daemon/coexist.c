/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <limits.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include "coexist.h"
#include "sysfs.h"
#include "util.h"

#define OUR_RULE "99-memonline.rules"

const char *const coexist_default_rules_dirs[] = {
        "/etc/udev/rules.d",
        "/run/udev/rules.d",
        "/usr/local/lib/udev/rules.d",
        "/usr/lib/udev/rules.d",
        "/lib/udev/rules.d",
        NULL,
};

void conflicts_clear(struct conflicts *c) {
        for (size_t i = 0; i < c->n; i++) {
                free(c->items[i].what);
                free(c->items[i].where);
                free(c->items[i].fix);
        }
        free(c->items);
        *c = (struct conflicts) {};
}

static int conflict_add(struct conflicts *c, char *what, char *where, char *fix) {
        if (!what || !where || !fix || GROW(c->items, c->allocated, c->n + 1) < 0) {
                free(what);
                free(where);
                free(fix);
                return -ENOMEM;
        }
        c->items[c->n++] = (struct conflict) { .what = what, .where = where, .fix = fix };
        return 0;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        return s;
}

static int check_auto_online(const char *root, struct conflicts *c) {
        _cleanup_free_ char *value = NULL;
        int r;

        r = sysfs_read(root, "devices/system/memory/auto_online_blocks", &value);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        if (streq(value, "offline"))
                return 0;
        return conflict_add(c,
                xasprintf("kernel auto-online is \"%s\": the kernel onlines hot-added memory itself, "
                          "serially and without node-aware placement", value),
                xasprintf("%s/devices/system/memory/auto_online_blocks", root),
                strdup("echo offline > /sys/devices/system/memory/auto_online_blocks, and drop "
                       "memhp_default_state= from the kernel command line (CONFIG_MEMORY_HOTPLUG_DEFAULT_ONLINE)"));
}

/* Is word (like "init_on_free=") set to true in the command line? 1, 0, or -errno. */
static int cmdline_true(const char *cmdline, const char *word) {
        size_t n = strlen(word);

        for (const char *p = cmdline; (p = strstr(p, word)); p += n) {
                const char *v = p + n;
                size_t len = strcspn(v, " \t\n");

                /* A whole word: the start of the line or after a blank. */
                if (p != cmdline && p[-1] != ' ' && p[-1] != '\t')
                        continue;
                if ((len == 1 && (*v == '1' || *v == 'y' || *v == 'Y')) || (len == 2 && strncmp(v, "on", 2) == 0))
                        return 1;
                return 0;       /* the kernel takes the first setting it parses: no, here */
        }
        return 0;
}

int coexist_slow_settings(const char *sysfs_root, struct conflicts *ret) {
        _cleanup_free_ char *shuffle = NULL, *cmdline_path = NULL, *cmdline = NULL;
        int r;

        /* page_alloc.shuffle=1 shuffles the whole zone's free lists after every online. */
        r = sysfs_read(sysfs_root, "module/page_alloc/parameters/shuffle", &shuffle);
        if (r >= 0 && (streq(shuffle, "Y") || streq(shuffle, "1"))) {
                r = conflict_add(ret,
                        strdup("page_alloc.shuffle is on: after every online the kernel shuffles the free lists of "
                               "the whole zone, so each block costs more the larger the zone, whoever onlines it"),
                        xasprintf("%s/module/page_alloc/parameters/shuffle", sysfs_root),
                        strdup("boot without page_alloc.shuffle=1 (it defaults to off)"));
                if (r < 0)
                        return r;
        }

        /* init_on_free=1 zeroes every page as it is freed, so onlining writes all of the new memory. */
        r = sysfs_proc_path(sysfs_root, "cmdline", &cmdline_path);
        if (r < 0)
                return r;
        if (read_full_file(cmdline_path, &cmdline, NULL) >= 0 && cmdline_true(cmdline, "init_on_free=") > 0) {
                r = conflict_add(ret,
                        strdup("init_on_free is on: the writer zeroes every page of a block as the kernel frees "
                               "it into the buddy allocator, so onlining costs a write of all the new memory"),
                        strdup(cmdline_path),
                        strdup("boot without init_on_free=1, if the security it buys is not needed on this machine"));
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * A rule line competes if it is for the memory subsystem and assigns the
 * state attribute, or runs something that writes it.
 */
static bool line_writes_memory_state(const char *line) {
        const char *p = line;

        while (*p == ' ' || *p == '\t')
                p++;
        if (*p == '#')
                return false;
        if (!strstr(line, "\"memory\""))
                return false;
        /* ATTR{state}=="offline" is a match; a single '=' is an assignment. */
        for (const char *s = strstr(line, "ATTR{state}"); s; s = strstr(s + 1, "ATTR{state}")) {
                const char *q = s + strlen("ATTR{state}");

                while (*q == ' ')
                        q++;
                if (q[0] == '=' && q[1] != '=')
                        return true;
        }
        if (strstr(line, "RUN") && strstr(line, "/state"))
                return true;
        return false;
}

static int scan_rules_file(const char *path, const char *shown, struct conflicts *c) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t n = 0;
        unsigned lineno = 0;

        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (getline(&line, &n, f) >= 0) {
                lineno++;
                if (!line_writes_memory_state(line))
                        continue;
                return conflict_add(c,
                        strdup("a udev rule writes memory block state: it races memonlined and may pick another zone"),
                        xasprintf("%s:%u", shown, lineno),
                        xasprintf("mask it: ln -s /dev/null /etc/udev/rules.d/%s && udevadm control --reload",
                                  strrchr(shown, '/') ? strrchr(shown, '/') + 1 : shown));
        }
        return 0;
}

static bool seen(char **names, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(names[i], name))
                        return true;
        return false;
}

int coexist_check(const char *sysfs_root, const char *const *rules_dirs, struct conflicts *ret) {
        char **names = NULL;
        size_t n_names = 0, allocated = 0;
        int r;

        r = check_auto_online(sysfs_root, ret);
        if (r < 0)
                return r;

        for (size_t d = 0; rules_dirs && rules_dirs[d]; d++) {
                _cleanup_closedir_ DIR *dir = NULL;
                struct dirent *de;
                char real_dir[PATH_MAX];

                dir = opendir(rules_dirs[d]);
                if (!dir)
                        continue;
                /* /lib is often a link to /usr/lib: do not read it twice. */
                if (realpath(rules_dirs[d], real_dir)) {
                        bool dup = false;

                        for (size_t e = 0; e < d; e++) {
                                char other[PATH_MAX];

                                if (realpath(rules_dirs[e], other) && streq(other, real_dir))
                                        dup = true;
                        }
                        if (dup)
                                continue;
                }
                while ((de = readdir(dir))) {
                        _cleanup_free_ char *path = NULL;
                        char target[PATH_MAX];
                        ssize_t len;

                        if (fnmatch("*.rules", de->d_name, 0) != 0 || streq(de->d_name, OUR_RULE))
                                continue;
                        /* Earlier directories override same-name files in later ones. */
                        if (seen(names, n_names, de->d_name))
                                continue;
                        if (GROW(names, allocated, n_names + 1) < 0) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        names[n_names] = strdup(de->d_name);
                        if (!names[n_names]) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        n_names++;

                        if (asprintf(&path, "%s/%s", rules_dirs[d], de->d_name) < 0) {
                                path = NULL;
                                r = -ENOMEM;
                                goto finish;
                        }
                        len = readlink(path, target, sizeof(target) - 1);
                        if (len > 0) {
                                target[len] = '\0';
                                if (streq(target, "/dev/null"))
                                        continue;       /* masked */
                        }
                        r = scan_rules_file(path, path, ret);
                        if (r < 0 && r != -EACCES)
                                goto finish;
                }
        }
        r = 0;
finish:
        for (size_t i = 0; i < n_names; i++)
                free(names[i]);
        free(names);
        return r;
}

bool auto_online_value_ok(const char *v) {
        size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyz_");

        return n > 0 && n <= 32 && v[n] == '\0';
}

int auto_online_saved(const char *state_path, char **ret) {
        _cleanup_free_ char *v = NULL;
        int r;

        *ret = NULL;
        if (!state_path)
                return 0;
        r = read_full_file(state_path, &v, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        strstrip(v);
        if (!auto_online_value_ok(v) || streq(v, "offline"))
                return 0;
        *ret = TAKE_PTR(v);
        return 0;
}

/* Written through a temporary file so a crash never leaves half a value. */
static int write_saved(const char *state_path, const char *value) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        int r = 0;

        if (!state_path)
                return 0;
        if (asprintf(&tmp, "%s.tmp", state_path) < 0)
                return -ENOMEM;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        if (dprintf(fd, "%s\n", value) < 0)
                r = -errno;
        else if (rename(tmp, state_path) < 0)
                r = -errno;
        if (r < 0)
                (void) unlink(tmp);
        return r;
}

/*
 * Like "echo value > attr": O_TRUNC is a no-op on sysfs and keeps a test
 * tree's file exact. Opened beneath the root like every state write, so a
 * link in a test tree cannot take the write out of it.
 */
static int write_auto_online(const char *root, const char *value) {
        _cleanup_close_ int fd = -1;

        fd = sysfs_open(root, AUTO_ONLINE_ATTR, O_WRONLY | O_TRUNC | O_NOCTTY);
        if (fd < 0)
                return fd;
        return sysfs_write_fd(fd, value);
}

int auto_online_take_over(const char *sysfs_root, const char *state_path, char **ret_previous) {
        _cleanup_free_ char *current = NULL, *saved = NULL;
        int r;

        r = sysfs_read(sysfs_root, AUTO_ONLINE_ATTR, &current);
        if (r == -ENOENT) {
                *ret_previous = NULL;
                return 0;
        }
        if (r < 0)
                return r;
        r = auto_online_saved(state_path, &saved);
        if (r < 0)
                return r;
        if (streq(current, "offline")) {
                *ret_previous = TAKE_PTR(saved);
                return 0;
        }
        if (!auto_online_value_ok(current))
                return -EINVAL;
        /* Set since the last save (by an admin, or saved value lost): the newer word wins. */
        if (!saved || !streq(saved, current)) {
                r = write_saved(state_path, current);
                if (r < 0)
                        return r;
        }
        r = write_auto_online(sysfs_root, "offline");
        if (r < 0)
                return r;
        *ret_previous = TAKE_PTR(current);
        return 1;
}

int auto_online_restore(const char *sysfs_root, const char *state_path, const char *previous,
                        char **ret_found) {
        _cleanup_free_ char *current = NULL, *saved = NULL;
        int r;

        if (!previous) {
                r = auto_online_saved(state_path, &saved);
                if (r < 0)
                        return r;
                previous = saved;
        }
        if (!previous) {
                if (state_path)
                        (void) unlink(state_path);
                return 0;
        }
        r = sysfs_read(sysfs_root, AUTO_ONLINE_ATTR, &current);
        if (r < 0)
                return r;
        if (streq(current, "offline")) {
                r = write_auto_online(sysfs_root, previous);
                if (r < 0)
                        return r;
        }
        if (state_path)
                (void) unlink(state_path);
        r = streq(current, "offline");
        if (ret_found)
                *ret_found = TAKE_PTR(current);
        return r;
}

int auto_online_release(const char *state_path) {
        if (state_path && unlink(state_path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int auto_online_watch(const char *sysfs_root, int *ret_fd) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        r = sysfs_path(&path, sysfs_root, AUTO_ONLINE_ATTR);
        if (r < 0)
                return r;
        fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (inotify_add_watch(fd, path, IN_MODIFY | IN_DONT_FOLLOW) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int auto_online_watch_read(int fd) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        int written = 0;

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? written : -errno;
                if (n == 0)
                        return written;
                /* IN_MODIFY; or IN_Q_OVERFLOW, IN_IGNORED: events lost or the watch gone, so maybe written. */
                written = 1;
        }
}
