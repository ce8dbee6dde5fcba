/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include "cli-error.h"

_printf_(3, 0) static void cli_error_va(const char *prog, int error, const char *format, va_list ap) {
        int saved = errno;

        if (prog)
                fprintf(stderr, "%s: ", prog);
        errno = error < 0 ? -error : error;
        vfprintf(stderr, format, ap);
        fputc('\n', stderr);
        errno = saved;
}

void cli_error(const char *prog, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        cli_error_va(prog, errno, format, ap);
        va_end(ap);
}

int cli_error_errno(const char *prog, int error, const char *format, ...) {
        va_list ap;

        error = error < 0 ? -error : error;
        va_start(ap, format);
        cli_error_va(prog, error, format, ap);
        va_end(ap);
        return -error;
}

int cli_oom(const char *prog) {
        cli_error(prog, "out of memory");
        return -ENOMEM;
}
