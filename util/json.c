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
        size_t n = strlen(s ?: "");

        fputc('"', f);
        for (size_t i = 0; i < n; ) {
                uint32_t cp = 0;
                size_t l = utf8_decode(s + i, n - i, &cp);

                if (l == 0) {
                        fputs("\\ufffd", f);
                        i++;
                        continue;
                }
                switch (cp) {
                case '"':  fputs("\\\"", f); break;
                case '\\': fputs("\\\\", f); break;
                case '\n': fputs("\\n", f); break;
                case '\r': fputs("\\r", f); break;
                case '\t': fputs("\\t", f); break;
                default:
                        if (unicode_is_unsafe(cp))
                                fprintf(f, "\\u%04x", (unsigned) cp);
                        else
                                fwrite(s + i, 1, l, f);
                }
                i += l;
        }
        fputc('"', f);
}
