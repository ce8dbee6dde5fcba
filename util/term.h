/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/*
 * Colour, as systemd and util-linux tools decide it: SYSTEMD_COLORS (a
 * boolean, or 16, 256, 24bit for on) wins, even on a stream that is not
 * a terminal; otherwise NO_COLOR set and non-empty, TERM=dumb, or a
 * stream that is not a terminal turn it off. An unknown SYSTEMD_COLORS
 * value is ignored.
 */
bool colors_decide(const char *systemd_colors, const char *no_color, const char *term, bool tty);
/* The same from the environment, for the stream on fd. */
bool colors_wanted(int fd);
/* The locale's character set (LC_CTYPE, once setlocale() ran) is UTF-8. */
bool locale_is_utf8(void);
