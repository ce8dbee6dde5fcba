/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The --once progress bar: its line, and that it shows on a terminal only. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "progress.h"
#include "util.h"

#define MIB (1ULL << 20)

static void test_bar_line(void **state) {
        struct job_progress_view v = { .blocks_total = 4, .blocks_done = 2, .block_size = 128 * MIB, .node = 1 };
        char buf[256];
        size_t n;

        (void) state;
        n = job_progress_bar(&v, 20, buf, sizeof(buf));
        assert_int_equal(n, strlen(buf));
        assert_non_null(strstr(buf, "[##########..........] onlining node 1: 2/4 blocks, 0.2/0.5 GiB"));
        v.blocks_done = 4;
        job_progress_bar(&v, 10, buf, sizeof(buf));
        assert_true(strncmp(buf, "[##########] onlining node 1: 4/4 blocks", 40) == 0);
        /* More done than planned (read without a lock) never overflows the bar. */
        v.blocks_done = 9;
        job_progress_bar(&v, 10, buf, sizeof(buf));
        assert_true(strncmp(buf, "[##########] ", 13) == 0);
        /* Truncated to the buffer, terminated. */
        assert_int_equal(job_progress_bar(&v, 10, buf, 8), 7);
        assert_string_equal(buf, "[######");
        /* Nothing planned, no width, a width past the cells: nothing to draw. */
        v.blocks_total = 0;
        assert_int_equal(job_progress_bar(&v, 10, buf, sizeof(buf)), 0);
        v.blocks_total = 4;
        assert_int_equal(job_progress_bar(&v, 0, buf, sizeof(buf)), 0);
        assert_int_equal(job_progress_bar(&v, 500, buf, sizeof(buf)), 0);
}

/* Everything written to the other side of fd, until it is drained and closed. */
static char *drain(int fd) {
        static char buf[8192];
        size_t len = 0;
        ssize_t n;

        while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
                len += (size_t) n;
        buf[len] = '\0';
        return buf;
}

static int open_pty(int *ret_slave) {
        int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

        assert_true(master >= 0);
        assert_int_equal(grantpt(master), 0);
        assert_int_equal(unlockpt(master), 0);
        *ret_slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
        assert_true(*ret_slave >= 0);
        return master;
}

static void run_pass(struct progress_bar *b) {
        job_progress_plan(&b->progress, 8, 128 * MIB);
        for (uint64_t id = 16; id < 24; id++) {
                job_progress_block(&b->progress, 1, id);
                job_progress_finished(&b->progress);
        }
}

static void test_bar_on_terminal(void **state) {
        struct progress_bar b;
        int master, slave;
        FILE *out;
        char *got;

        (void) state;
        unsetenv("TERM");
        master = open_pty(&slave);
        out = fdopen(slave, "w");
        assert_non_null(out);
        assert_int_equal(progress_bar_start(&b, out), 1);
        run_pass(&b);
        usleep(700 * 1000);             /* at least one redraw while running */
        progress_bar_stop(&b);
        fclose(out);
        got = drain(master);
        close(master);
        /* The final bar, on its own line (the pty turns \n into \r\n). */
        assert_non_null(strstr(got, "\r[####################] onlining node 1: 8/8 blocks, 1.0/1.0 GiB"));
        assert_true(strlen(got) >= 2 && strcmp(got + strlen(got) - 2, "\r\n") == 0);
        /* Drawn more than once: the redraw and the final one. */
        assert_non_null(strstr(strstr(got, "\r[") + 1, "\r["));
}

static void test_bar_not_on_pipe_or_dumb_terminal(void **state) {
        struct progress_bar b;
        int fds[2], master, slave;
        FILE *out;

        (void) state;
        assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
        out = fdopen(fds[1], "w");
        assert_non_null(out);
        assert_int_equal(progress_bar_start(&b, out), 0);
        run_pass(&b);
        progress_bar_stop(&b);
        fclose(out);
        assert_string_equal(drain(fds[0]), "");
        close(fds[0]);

        setenv("TERM", "dumb", 1);
        master = open_pty(&slave);
        out = fdopen(slave, "w");
        assert_non_null(out);
        assert_int_equal(progress_bar_start(&b, out), 0);
        run_pass(&b);
        progress_bar_stop(&b);
        fclose(out);
        assert_string_equal(drain(master), "");
        close(master);
        unsetenv("TERM");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bar_line),
                cmocka_unit_test(test_bar_on_terminal),
                cmocka_unit_test(test_bar_not_on_pipe_or_dumb_terminal),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
