/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "string-table.h"
#include "zone.h"

static const char *const zone_table[] = {
        [ZONE_UNSET] = "unset",
        [ZONE_SKIP] = "skip",
        [ZONE_ONLINE] = "online",
        [ZONE_MOVABLE] = "online_movable",
        [ZONE_KERNEL] = "online_kernel",
};

DEFINE_STRING_TABLE_TO_STRING(zone, enum zone, NULL)

int zone_from_string(const char *s, enum zone *ret) {
        ssize_t i = string_table_lookup(zone_table, ELEMENTSOF(zone_table), s);

        if (i <= (ssize_t) ZONE_UNSET)
                return -EINVAL;
        *ret = (enum zone) i;
        return 0;
}
