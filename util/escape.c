/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>
#include "escape.h"

/* What one unit of input (a code point, or one byte of invalid UTF-8) can grow to: four bytes as \xNN. */
#define UNIT_MAX 16

static const char hex[] = "0123456789abcdef";

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

static size_t put(char *o, const char *s) {
        size_t n = strlen(s);

        memcpy(o, s, n);
        return n;
}

static size_t put_hex(char *o, const char *p, size_t len) {
        for (size_t k = 0; k < len; k++) {
                unsigned char c = (unsigned char) p[k];

                o[4 * k] = '\\';
                o[4 * k + 1] = 'x';
                o[4 * k + 2] = hex[c >> 4];
                o[4 * k + 3] = hex[c & 0xf];
        }
        return 4 * len;
}

static size_t escape_json_unit(enum escape_style style, char *o, const char *p, size_t len, uint32_t cp,
                               bool valid) {
        if (!valid)
                return put(o, "\\ufffd");
        if (style == ESCAPE_JSON_TEXT && cp < 0x7f) {
                *o = *p;
                return 1;
        }
        switch (cp) {
        case '"':  return put(o, "\\\"");
        case '\\': return put(o, "\\\\");
        case '\n': return put(o, "\\n");
        case '\r': return put(o, "\\r");
        case '\t': return put(o, "\\t");
        }
        if (!unicode_is_unsafe(cp)) {
                memcpy(o, p, len);
                return len;
        }
        /* every unsafe code point is in the BMP */
        o[0] = '\\', o[1] = 'u';
        for (unsigned k = 0; k < 4; k++)
                o[2 + k] = hex[(cp >> (12 - 4 * k)) & 0xf];
        return 6;
}

static size_t escape_xml_unit(char *o, uint32_t cp) {
        switch (cp) {
        case '&':  return put(o, "&amp;");
        case '<':  return put(o, "&lt;");
        case '>':  return put(o, "&gt;");
        case '"':  return put(o, "&quot;");
        case '\'': return put(o, "&apos;");
        }
        return 0;
}

/*
 * The unit at s (at most avail bytes, avail > 0) in style, into out: its
 * length there. *ret_used: how many bytes of s it took.
 */
static size_t escape_unit(enum escape_style style, const char *s, size_t avail, char out[static UNIT_MAX],
                          size_t *ret_used) {
        uint32_t cp = 0;
        size_t len = utf8_decode(s, avail, &cp), n;
        bool valid = len > 0;

        if (!valid)
                len = 1;
        *ret_used = len;
        switch (style) {
        case ESCAPE_JSON:
        case ESCAPE_JSON_TEXT:
                return escape_json_unit(style, out, s, len, cp, valid);
        case ESCAPE_XML:
                if (valid && (n = escape_xml_unit(out, cp)) > 0)
                        return n;
                if (valid && (cp == 0xfffe || cp == 0xffff))
                        return put_hex(out, s, len);
                break;
        case ESCAPE_TERMINAL:
        case ESCAPE_TERMINAL_ASCII:
                break;
        }
        if (valid && cp == '\\')
                return put(out, "\\\\");
        if (valid && !unicode_is_unsafe(cp) && !(style == ESCAPE_TERMINAL_ASCII && cp > 0x7f)) {
                memcpy(out, s, len);
                return len;
        }
        return put_hex(out, s, len);
}

char *escape_untrusted(const char *s, bool ascii_only) {
        enum escape_style style = ascii_only ? ESCAPE_TERMINAL_ASCII : ESCAPE_TERMINAL;
        size_t n = strlen(s ?: ""), total = 0;
        char unit[UNIT_MAX], *out;

        /* two passes: the length, then the text */
        for (size_t i = 0, used; i < n; i += used)
                total += escape_unit(style, s + i, n - i, unit, &used);
        out = malloc(total + 1);
        if (!out)
                return NULL;
        total = 0;
        for (size_t i = 0, used; i < n; i += used) {
                size_t l = escape_unit(style, s + i, n - i, unit, &used);

                memcpy(out + total, unit, l);
                total += l;
        }
        out[total] = '\0';
        return out;
}

size_t escape_text(char *buf, size_t size, const char *s) {
        size_t n = strlen(s ?: ""), len = 0;

        if (size == 0)
                return 0;
        for (size_t i = 0, used; i < n; i += used) {
                char unit[UNIT_MAX];
                size_t l = escape_unit(ESCAPE_TERMINAL, s + i, n - i, unit, &used);

                if (len + l >= size)
                        break;
                memcpy(buf + len, unit, l);
                len += l;
        }
        buf[len] = '\0';
        return len;
}

void escape_write(FILE *f, enum escape_style style, const char *s, size_t n) {
        for (size_t i = 0, used; i < n; i += used) {
                char unit[UNIT_MAX];

                /* a library's JSON is mostly ASCII: write it in runs */
                if (style == ESCAPE_JSON_TEXT) {
                        size_t run = 0;

                        while (i + run < n && (unsigned char) s[i + run] < 0x7f)
                                run++;
                        fwrite(s + i, 1, run, f);
                        if ((i += run) >= n)
                                break;
                }
                fwrite(unit, 1, escape_unit(style, s + i, n - i, unit, &used), f);
        }
}
