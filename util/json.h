/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/* s as a JSON string literal, quotes included; NULL as "". */
void json_write_string(FILE *f, const char *s);
