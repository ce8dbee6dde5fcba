/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>
#include "interface.h"

/*
 * One daemon per runtime directory (/run/memonlined: the unit's
 * RuntimeDirectory=, kept for the whole boot): a lock with its holder's
 * pid in it, and the marker the udev rule tests to know whether a daemon
 * runs. The names are in interface.h: memonlined status reads them too.
 */

struct instance;

/*
 * Creates dir if it is missing (mode 0755), locks <dir>/lock (flock, not
 * waiting) and writes our pid into it, then points <dir>/running at
 * /proc/<our pid>. -EBUSY when another process holds the lock:
 * *ret_holder gets its pid, 0 if unknown.
 */
int instance_lock(const char *dir, pid_t *ret_holder, struct instance **ret);
/* Removes the marker if it is still ours, and releases the lock. */
void instance_unlockp(struct instance **i);
#define _cleanup_instance_ __attribute__((cleanup(instance_unlockp)))
