/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>
#include "escape.h"

#define REPLACEMENT "\xef\xbf\xbd"  /* U+FFFD */

size_t utf8_decode(const char *str, size_t avail, uint32_t *ret_cp) {
        const unsigned char *s = (const unsigned char *) str;
        uint32_t cp, min;
        size_t len;

        if (avail == 0)
                return 0;
        if (s[0] < 0x80) {
                *ret_cp = s[0];
                return 1;
        }
        if ((s[0] & 0xe0) == 0xc0) {
                len = 2, cp = s[0] & 0x1f, min = 0x80;
        } else if ((s[0] & 0xf0) == 0xe0) {
                len = 3, cp = s[0] & 0x0f, min = 0x800;
        } else if ((s[0] & 0xf8) == 0xf0) {
                len = 4, cp = s[0] & 0x07, min = 0x10000;
        } else
                return 0;
        if (len > avail)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        /* Overlong forms, UTF-16 surrogates and code points past Unicode are not UTF-8. */
        if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
                return 0;
        *ret_cp = cp;
        return len;
}

bool unicode_is_unsafe(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
               cp == 0x061c ||                          /* ARABIC LETTER MARK */
               cp == 0x200e || cp == 0x200f ||          /* LRM, RLM */
               (cp >= 0x2028 && cp <= 0x202e) ||        /* line/paragraph separators, LRE..RLO */
               (cp >= 0x2066 && cp <= 0x2069);          /* LRI..PDI */
}

/*
 * s rewritten one code point at a time (an invalid byte alone, with
 * valid false) by emit, into a buffer of room for grow bytes per byte of s.
 */
typedef char *(*emit_fn)(char *o, const char *p, size_t len, uint32_t cp, bool valid, bool flag);

static char *rewrite(const char *s, size_t grow, emit_fn emit, bool flag) {
        size_t n = strlen(s ?: "");
        char *out = malloc(n * grow + 1), *o = out;

        if (!out)
                return NULL;
        for (size_t i = 0; i < n; ) {
                uint32_t cp = 0;
                size_t l = utf8_decode(s + i, n - i, &cp);

                o = emit(o, s + i, l ?: 1, cp, l > 0, flag);
                i += l ?: 1;
        }
        *o = '\0';
        return out;
}

static char *emit_escaped(char *o, const char *p, size_t len, uint32_t cp, bool valid, bool ascii_only) {
        static const char hex[] = "0123456789abcdef";

        if (valid && cp == '\\') {
                *o++ = '\\';
                *o++ = '\\';
        } else if (valid && !unicode_is_unsafe(cp) && !(ascii_only && cp > 0x7f)) {
                memcpy(o, p, len);
                o += len;
        } else
                for (size_t k = 0; k < len; k++) {
                        unsigned char c = (unsigned char) p[k];

                        *o++ = '\\';
                        *o++ = 'x';
                        *o++ = hex[c >> 4];
                        *o++ = hex[c & 0xf];
                }
        return o;
}

char *escape_untrusted(const char *s, bool ascii_only) {
        /* Every byte grows to at most 4 ("\xNN"). */
        return rewrite(s, 4, emit_escaped, ascii_only);
}

static char *emit_sanitized(char *o, const char *p, size_t len, uint32_t cp, bool valid, bool unused) {
        if (!valid || (cp >= 0x7f && cp <= 0x9f)) {
                memcpy(o, REPLACEMENT, 3);
                return o + 3;
        }
        memcpy(o, p, len);
        return o + len;
}

char *utf8_sanitize(const char *s) {
        /* One invalid byte grows to three (U+FFFD). */
        return rewrite(s, 3, emit_sanitized, false);
}
