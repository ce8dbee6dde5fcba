/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <numa.h>

/*
 * CPU and node sets are libnuma bitmasks. We parse kernel cpulists
 * ourselves because libnuma's parsers validate against the running
 * system, and fake sysfs trees describe other machines.
 */

#define CPUSET_MAX 8192

/* "0-3,8,10-11\n" -> bitmask of CPUSET_MAX bits. Empty string is an empty set. */
int cpulist_parse(const char *s, struct bitmask **ret);
/* Bitmask -> "0-3,8". Empty set -> "". */
int cpulist_format(const struct bitmask *m, char **ret);

struct bitmask *cpuset_new(void);
void cpuset_freep(struct bitmask **m);
#define _cleanup_cpuset_ __attribute__((cleanup(cpuset_freep)))

unsigned cpuset_count(const struct bitmask *m);
bool cpuset_isset(const struct bitmask *m, unsigned cpu);
/* Lowest set bit >= from, or -1. */
int cpuset_next(const struct bitmask *m, unsigned from);
#define CPUSET_FOREACH(cpu, m) for (int cpu = cpuset_next((m), 0); cpu >= 0; cpu = cpuset_next((m), (unsigned) cpu + 1))

/* A glibc CPU set of cpu alone, sized for it (free with CPU_FREE), for affinity calls. */
int cpu_set_one(int cpu, cpu_set_t **ret, size_t *ret_size);
