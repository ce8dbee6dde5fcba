/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "string-table.h"

ssize_t string_table_lookup(const char *const *table, size_t n, const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (ssize_t) i;
        return -EINVAL;
}
