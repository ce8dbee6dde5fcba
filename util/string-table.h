/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>
#include "util.h"

/*
 * Enum <-> string tables, as systemd's src/basic does them: a table
 * `static const char *const NAME_table[]` indexed by the enum (holes are
 * NULL), and the macros below write NAME_to_string() and
 * NAME_from_string() from it.
 */

/* The index of s in table[0..n) (NULL entries never match), or -EINVAL; a NULL s is -EINVAL. */
ssize_t string_table_lookup(const char *const *table, size_t n, const char *s);

/* const char *NAME_to_string(type): fallback for a value past the table or a hole in it. */
#define DEFINE_STRING_TABLE_TO_STRING(name, type, fallback)                             \
        const char *name##_to_string(type v) {                                          \
                if ((size_t) v >= ELEMENTSOF(name##_table) || !name##_table[v])         \
                        return (fallback);                                              \
                return name##_table[v];                                                 \
        }

/* int NAME_from_string(const char *s, type *ret): 0, or -EINVAL with *ret untouched. */
#define DEFINE_STRING_TABLE_FROM_STRING(name, type)                                     \
        int name##_from_string(const char *s, type *ret) {                              \
                ssize_t i = string_table_lookup(name##_table, ELEMENTSOF(name##_table), s); \
                                                                                        \
                if (i < 0)                                                              \
                        return (int) i;                                                 \
                *ret = (type) i;                                                        \
                return 0;                                                               \
        }

#define DEFINE_STRING_TABLE(name, type, fallback)                                       \
        DEFINE_STRING_TABLE_TO_STRING(name, type, fallback)                             \
        DEFINE_STRING_TABLE_FROM_STRING(name, type)
