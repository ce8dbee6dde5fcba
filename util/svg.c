/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include "escape.h"
#include "format.h"
#include "svg.h"

void svg_write_text(FILE *f, const char *s) {
        escape_write(f, ESCAPE_XML, s ?: "", strlen(s ?: ""));
}

void svg_begin(FILE *f, unsigned width, unsigned height, const char *title) {
        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" height=\"%u\" "
                   "viewBox=\"0 0 %u %u\" font-family=\"sans-serif\" font-size=\"12\">\n<title>",
                width, height, width, height);
        svg_write_text(f, title);
        fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
}

void svg_end(FILE *f) {
        fputs("</svg>\n", f);
}

const char *svg_num(char *buf, size_t size, double v) {
        return format_fixed(buf, size, v, 1);
}
