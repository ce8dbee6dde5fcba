/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
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

/*
 * Kernel settings that make every online slower whatever userspace does:
 * page_alloc.shuffle (<root>/module/page_alloc/parameters/shuffle) and
 * init_on_free=1 on the command line (/proc/cmdline; <root>/proc/cmdline
 * under a test tree). init_on_free built in as the default
 * (CONFIG_INIT_ON_FREE_DEFAULT_ON) without the parameter is not visible.
 * Appends to ret.
 */
int coexist_slow_settings(const char *sysfs_root, struct conflicts *ret);

/*
 * Taking over from kernel auto-online: while memonlined runs,
 * auto_online_blocks reads "offline" and hot-added memory waits for us.
 * The value found first is kept in state_path (in the runtime directory,
 * kept for the whole boot), so a daemon started after a crash or a failed
 * start restores the original, not its predecessor's "offline". The file
 * exists exactly while memonlined owns the setting. A NULL state_path
 * keeps it in memory only.
 */
#define AUTO_ONLINE_ATTR "devices/system/memory/auto_online_blocks"
/* The file in the runtime directory. */
#define AUTO_ONLINE_STATE_FILE "auto_online_blocks"

/* "online", "online_movable", ...: short, lower case; anything else is not ours to write back or show. */
bool auto_online_value_ok(const char *v);
/* The value saved in state_path, or *ret NULL (no file, or a malformed one). */
int auto_online_saved(const char *state_path, char **ret);

/*
 * Write "offline" unless auto_online_blocks already says so. *ret_previous
 * is the value to restore at stop: the one a predecessor saved in
 * state_path, else the one found; NULL when there is nothing to restore
 * (already offline and nothing saved, or no such attribute). Returns 1 if
 * this call wrote "offline", 0 if not.
 */
int auto_online_take_over(const char *sysfs_root, const char *state_path, char **ret_previous);

/*
 * Write previous (NULL: the value saved in state_path) back, but only if
 * auto_online_blocks still reads "offline": a value someone set while we
 * ran wins. Removes state_path. *ret_found (optional) gets the value read
 * before writing. Returns 1 if written back, 0 if nothing was saved or the
 * value had been changed.
 */
int auto_online_restore(const char *sysfs_root, const char *state_path, const char *previous,
                        char **ret_found);

/* Someone else wrote the setting: it is theirs now, nothing is restored. Removes state_path. */
int auto_online_release(const char *state_path);

/*
 * An inotify descriptor (non-blocking) that becomes readable when anyone
 * writes auto_online_blocks: every successful write(2), even of the value
 * it already holds, which no read can tell. The link itself is not followed.
 */
int auto_online_watch(const char *sysfs_root, int *ret_fd);
/* Drains it: 1 if a write was seen (or events were lost), 0 if none, -errno. */
int auto_online_watch_read(int fd);
