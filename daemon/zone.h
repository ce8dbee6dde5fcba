/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What to write to a block's state file: the word policy rules decide,
 * the planner plans, writers write and records name.
 */
enum zone {
        ZONE_UNSET = 0,         /* no opinion: fall through to the next rule */
        ZONE_SKIP,              /* leave the block alone */
        ZONE_ONLINE,            /* "online": the kernel's default zone */
        ZONE_MOVABLE,           /* "online_movable" */
        ZONE_KERNEL,            /* "online_kernel" */
};

const char *zone_to_string(enum zone z);        /* "skip", "online", ... */
/* ZONE_UNSET is internal: "unset" is no zone anybody may write. */
int zone_from_string(const char *s, enum zone *ret);
