/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include "escape.h"
#include "json.h"

/*
 * Well-formed UTF-8 passes; every unsafe code point (controls, bidi,
 * separators) is a \u escape, so the string stays intact for a parser and
 * inert on a terminal; invalid UTF-8, which JSON cannot carry, is U+FFFD.
 */
void json_write_string(FILE *f, const char *s) {
        fputc('"', f);
        escape_write(f, ESCAPE_JSON, s ?: "", strlen(s ?: ""));
        fputc('"', f);
}
