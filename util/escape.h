/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Text from outside (journal fields, sysfs, config files) on its way to a
 * terminal or into JSON, SVG and tables.
 */

/*
 * The length of the well-formed UTF-8 sequence at s (at most avail bytes),
 * 0 if there is none (a stray, overlong, surrogate or out-of-range
 * sequence, or a cut one). Its code point in *ret_cp.
 */
size_t utf8_decode(const char *s, size_t avail, uint32_t *ret_cp);

/*
 * Code points a terminal acts on, or that change how the text around
 * them reads: C0 and C1 controls, DEL, the bidirectional controls, and
 * the line and paragraph separators.
 */
bool unicode_is_unsafe(uint32_t cp);

/*
 * s made safe to print: every byte of an unsafe code point or of invalid
 * UTF-8 as \xNN, a backslash as \\, so nothing moves the cursor, starts
 * an escape sequence, forges a line, or reads ambiguously. With
 * ascii_only (a terminal that is not UTF-8) every byte over 0x7f too.
 * NULL on ENOMEM.
 */
char *escape_untrusted(const char *s, bool ascii_only);

/*
 * s as well-formed UTF-8 for writers that escape C0 controls themselves
 * (libsmartcols JSON): invalid bytes, DEL and C1 controls become U+FFFD.
 * NULL on ENOMEM.
 */
char *utf8_sanitize(const char *s);
