/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util.h"
#include "zone.h"

static const char *const zone_table[] = {
        [ZONE_UNSET] = "unset",
        [ZONE_SKIP] = "skip",
        [ZONE_ONLINE] = "online",
        [ZONE_MOVABLE] = "online_movable",
        [ZONE_KERNEL] = "online_kernel",
};

const char *zone_to_string(enum zone z) {
        if ((size_t) z >= ELEMENTSOF(zone_table))
                return NULL;
        return zone_table[z];
}

int zone_from_string(const char *s, enum zone *ret) {
        if (!s)
                return -EINVAL;
        for (size_t i = ZONE_SKIP; i < ELEMENTSOF(zone_table); i++)
                if (streq(s, zone_table[i])) {
                        *ret = (enum zone) i;
                        return 0;
                }
        return -EINVAL;
}
