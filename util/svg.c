/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "format.h"
#include "svg.h"

int svg_write_text(FILE *f, const char *s) {
        char *safe = escape_untrusted(s ?: "", false);
        size_t n;

        if (!safe)
                return -ENOMEM;
        n = strlen(safe);
        for (size_t i = 0; i < n; ) {
                uint32_t cp = 0;
                size_t l = utf8_decode(safe + i, n - i, &cp) ?: 1;     /* always well-formed here */

                switch (cp) {
                case '&':  fputs("&amp;", f); break;
                case '<':  fputs("&lt;", f); break;
                case '>':  fputs("&gt;", f); break;
                case '"':  fputs("&quot;", f); break;
                case '\'': fputs("&apos;", f); break;
                /* the two code points XML forbids that escape_untrusted() lets through */
                case 0xfffe: fputs("\\xef\\xbf\\xbe", f); break;
                case 0xffff: fputs("\\xef\\xbf\\xbf", f); break;
                default:   fwrite(safe + i, 1, l, f);
                }
                i += l;
        }
        free(safe);
        return 0;
}

void svg_begin(FILE *f, unsigned width, unsigned height, const char *title) {
        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" height=\"%u\" "
                   "viewBox=\"0 0 %u %u\" font-family=\"sans-serif\" font-size=\"12\">\n<title>",
                width, height, width, height);
        (void) svg_write_text(f, title);
        fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
}

void svg_end(FILE *f) {
        fputs("</svg>\n", f);
}

const char *svg_num(char *buf, size_t size, double v) {
        return format_fixed(buf, size, v, 1);
}
