/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/*
 * A small SVG writer: the document frame, and text that is safe in
 * element content and attribute values whatever it holds.
 */

/* The XML declaration and the <svg> element of width x height pixels. */
void svg_begin(FILE *f, unsigned width, unsigned height, const char *title);
void svg_end(FILE *f);

/*
 * s as XML text (ESCAPE_XML): controls, bidi controls and invalid UTF-8
 * shown as \xNN, as on a terminal, and & < > " ' as entities. Good for
 * attribute values in double quotes too.
 */
void svg_write_text(FILE *f, const char *s);

/* A coordinate or length, with one decimal and a point whatever the locale. */
const char *svg_num(char *buf, size_t size, double v);
