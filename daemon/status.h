/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/*
 * `memonlined status`: what the machine looks like to the daemon, read
 * from sysfs (through sysfs_root) with no daemon needed: per node, blocks
 * online and offline, memory per zone and offline, the writer node and
 * CPUs the planner would use; the hotplug devices (DIMMs, virtio-mem, dax
 * kmem) with their zones, CXL region and memdevs, and whether they can be
 * unplugged now; dax devices; the kernel's onlining policy; competing
 * onliners; the running batch (from the daemon's progress file in
 * $MEMONLINED_RUNTIME_DIR, default /run/memonlined) and the daemon's state
 * over the system bus when one is reachable. Tables through libsmartcols,
 * text, raw or one JSON document; see memonlined-status(8).
 */

/* Exit statuses, as memonlined-status(8) documents them; the daemon's numbers (main.c). */
enum {
        STATUS_EXIT_SUCCESS = 0,
        STATUS_EXIT_FAILURE = 1,        /* no topology under the sysfs root, out of memory, output failed */
        STATUS_EXIT_USAGE = 2,          /* bad option or argument */
        STATUS_EXIT_CONFIG = 3,         /* the policy file is refused: shown with the built-in defaults */
        STATUS_EXIT_PARTIAL = 64,       /* shown, but some table or section could not be read (as chmem) */
};

/* argv[0] is the subcommand name. Prints to out, errors to stderr. Returns an exit status above. */
int status_main(int argc, char **argv, const char *sysfs_root, FILE *out);
