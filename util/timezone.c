/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "timezone.h"
#include "util.h"

static bool zone_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-_+/", c);
}

bool timezone_name_valid(const char *name) {
        _cleanup_close_ int dir = -1, fd = -1;
        char magic[4];
        struct stat st;

        /* No dot at all, so no "..": with no leading, doubled or trailing "/" the name stays beneath the directory. */
        if (!name || !*name || name[0] == '/' || strlen(name) >= NAME_MAX || strstr(name, "//") ||
            name[strlen(name) - 1] == '/')
                return false;
        for (const char *p = name; *p; p++)
                if (!zone_char(*p))
                        return false;
        dir = open(TIMEZONE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return false;
        fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return false;
        return read(fd, magic, sizeof(magic)) == (ssize_t) sizeof(magic) && memcmp(magic, "TZif", 4) == 0;
}

struct zone_result {
        int r;
        uint64_t v;
};

int timezone_run(const char *zone, int (*fn)(void *userdata, uint64_t *ret), void *userdata, uint64_t *ret) {
        _cleanup_close_ int rfd = -1, wfd = -1;
        _cleanup_free_ char *tz = NULL;
        struct zone_result res = { .r = -EIO };
        int pipefd[2], status, r = 0;
        ssize_t n;
        pid_t pid;

        if (!timezone_name_valid(zone))
                return -EINVAL;
        /* the leading colon: a file of the tz database, never a POSIX rule string */
        if (asprintf(&tz, ":%s", zone) < 0)
                return -ENOMEM;
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        rfd = pipefd[0];
        wfd = pipefd[1];
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /*
                 * The child changes its own TZ only, answers and leaves: _exit() runs
                 * no atexit handler and flushes no stdio buffer it shares with the parent.
                 */
                struct zone_result c = {};

                if (setenv("TZ", tz, 1) < 0)
                        c.r = -errno;
                else {
                        tzset();
                        c.r = fn(userdata, &c.v);
                }
                _exit(write(wfd, &c, sizeof(c)) == (ssize_t) sizeof(c) ? EXIT_SUCCESS : EXIT_FAILURE);
        }
        close(TAKE_FD(wfd));
        do
                n = read(rfd, &res, sizeof(res));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                r = -errno;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return r < 0 ? r : -errno;
        if (r < 0)
                return r;
        if (n != (ssize_t) sizeof(res) || !WIFEXITED(status) || WEXITSTATUS(status) != EXIT_SUCCESS)
                return -EIO;    /* the child died before it answered */
        if (res.r >= 0)
                *ret = res.v;
        return res.r;
}

static bool same_wall_time(const struct tm *a, const struct tm *b) {
        return a->tm_year == b->tm_year && a->tm_mon == b->tm_mon && a->tm_mday == b->tm_mday &&
               a->tm_hour == b->tm_hour && a->tm_min == b->tm_min && a->tm_sec == b->tm_sec;
}

int timezone_local_to_time(struct tm *tm, time_t *ret) {
        long offset[2];
        bool found = false;
        time_t g, best = 0;

        tm->tm_isdst = 0;
        g = timegm(tm);         /* the wall time read as UTC, normalised */
        if (g == (time_t) -1)
                return -EINVAL;
        /* The offsets in force a day before and a day after: no zone changes twice in between. */
        for (int i = 0; i < 2; i++) {
                time_t probe = g + (i == 0 ? -86400 : 86400);
                struct tm around;

                if (!localtime_r(&probe, &around))
                        return -EINVAL;
                offset[i] = around.tm_gmtoff;
        }
        for (int i = 0; i < 2; i++) {
                time_t t = g - offset[i];
                struct tm back;

                if (localtime_r(&t, &back) && same_wall_time(&back, tm) && (!found || t < best)) {
                        best = t;
                        found = true;
                }
        }
        *ret = found ? best : g - offset[0];
        return 0;
}

int timezone_abbrev_isdst(int tm_year, const char *abbrev) {
        for (int mon = 0; mon <= 6; mon += 6) {
                struct tm tm = { .tm_year = tm_year, .tm_mon = mon, .tm_mday = 1, .tm_hour = 12, .tm_isdst = -1 };

                if (mktime(&tm) != (time_t) -1 && tm.tm_zone && streq(tm.tm_zone, abbrev))
                        return tm.tm_isdst > 0;
        }
        return -1;
}
