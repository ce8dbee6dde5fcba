/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Text from outside (journal fields, sysfs, config files) on its way to a
 * terminal or into JSON, SVG and tables. One decoder and one list of
 * unsafe code points; every renderer escapes through here.
 */

/*
 * The length of the well-formed UTF-8 sequence at s (at most avail bytes),
 * 0 if there is none (a stray, overlong, surrogate or out-of-range
 * sequence, or a cut one). Its code point in *ret_cp.
 */
size_t utf8_decode(const char *s, size_t avail, uint32_t *ret_cp);

/*
 * Code points a terminal acts on, or that change how the text around
 * them reads: C0 and C1 controls, DEL, the bidirectional controls
 * (U+061C, U+200E/F, U+202A..E, U+2066..9), and the line and paragraph
 * separators (U+2028/9).
 */
bool unicode_is_unsafe(uint32_t cp);

/* How unsafe code points and invalid UTF-8 are written. */
enum escape_style {
        /* every byte of an unsafe code point or invalid UTF-8 as \xNN, a backslash as \\ */
        ESCAPE_TERMINAL,
        /* and every byte past 0x7f too, for a terminal that is not UTF-8 */
        ESCAPE_TERMINAL_ASCII,
        /* the terminal's, then & < > " ' as entities and U+FFFE/F (not XML characters) as \xNN */
        ESCAPE_XML,
        /* a JSON string's body: " \ \n \r \t, unsafe code points as \uXXXX, invalid UTF-8 as \ufffd */
        ESCAPE_JSON,
        /*
         * JSON a library wrote, whose strings escape C0, " and \ themselves
         * (libsmartcols): ASCII passes, the rest as ESCAPE_JSON.
         */
        ESCAPE_JSON_TEXT,
};

/*
 * s made safe to print (ESCAPE_TERMINAL, or ESCAPE_TERMINAL_ASCII with
 * ascii_only), so nothing moves the cursor, starts an escape sequence,
 * forges a line, or reads ambiguously. NULL is "". NULL on ENOMEM.
 */
char *escape_untrusted(const char *s, bool ascii_only);

/*
 * s in ESCAPE_TERMINAL into buf: at most size bytes, NUL included, never
 * cutting an escape or a character in two. The length written.
 */
size_t escape_text(char *buf, size_t size, const char *s);

/* The n bytes of s to f in style. */
void escape_write(FILE *f, enum escape_style style, const char *s, size_t n);
