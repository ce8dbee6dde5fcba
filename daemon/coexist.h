/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * Other agents that online memory: the kernel's auto_online_blocks, and
 * udev rules that write a memory block's state. Two onliners race, and the
 * loser sees EINVAL; worse, a rule that picks another zone wins silently.
 */

struct conflict {
        char *what;     /* "kernel auto-online is online_movable" */
        char *where;    /* file (and line), e.g. "/usr/lib/udev/rules.d/40-hotplug.rules:12" */
        char *fix;      /* "mask it: ln -s /dev/null /etc/udev/rules.d/40-hotplug.rules" */
};

struct conflicts {
        struct conflict *items;
        size_t n, allocated;
};

/* Default udev rules directories, in udev's precedence order; NULL-terminated. */
extern const char *const coexist_default_rules_dirs[];

/*
 * Check <sysfs_root>/devices/system/memory/auto_online_blocks and every
 * *.rules file in rules_dirs (same-name files earlier in the list
 * override later ones; a link to /dev/null masks). Our own rule
 * (99-memonline.rules) is ignored. Appends to ret.
 */
int coexist_check(const char *sysfs_root, const char *const *rules_dirs, struct conflicts *ret);
void conflicts_clear(struct conflicts *c);
