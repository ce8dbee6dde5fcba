/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/*
 * `memonlined status`: what the machine looks like to the daemon, read
 * from sysfs (through sysfs_root) with no daemon needed: blocks online and
 * offline per node, bytes per zone, the writer node and CPUs the planner
 * would use, the kernel's onlining policy, competing onliners, and the
 * running daemon's state over the system bus when one is reachable.
 *
 * Options: --json, --config FILE (policy for banned CPUs and worker
 * counts), --rules-dir DIR (repeatable; replaces the default udev rules
 * directories), --no-daemon (skip the bus query), --sysfs-root DIR
 * (overrides sysfs_root).
 *
 * argv[0] is the subcommand name. Returns 0, 1 for bad usage, or -errno.
 */
int status_main(int argc, char **argv, const char *sysfs_root, FILE *out);
