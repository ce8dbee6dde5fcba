/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include "util.h"

/*
 * The command line's one way to say what went wrong, as util-linux's
 * warnx() and err(): "PROG: message" on stderr (no prefix when prog is
 * NULL), where %m is error's text (an errno, either sign). The daemon's
 * own logging is report.c's; this is for what runs at a terminal before
 * or instead of it: option errors, `memonlined report`, `memonlined status`.
 */
/* errno is %m's. */
_printf_(2, 3) void cli_error(const char *prog, const char *format, ...);
/* Returns -error (error may be given either way). */
_printf_(3, 4) int cli_error_errno(const char *prog, int error, const char *format, ...);
/* "PROG: out of memory"; -ENOMEM. */
int cli_oom(const char *prog);
