/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
#define NSEC_PER_USEC 1000ULL
#define USEC_PER_MSEC 1000ULL
#define USEC_PER_SEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

static inline void freep(void *p) { free(*(void **) p); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closedirp(DIR **d) { if (*d) closedir(*d); }

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Hand ownership out of a cleanup variable. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

/*
 * Keep the first failure: ret takes expr's value only if ret holds none
 * yet (ret >= 0) and expr failed (< 0). Evaluates to expr's value, so
 * steps that should all run can each be gathered: RET_GATHER(r, step()).
 */
#define RET_GATHER(ret, expr) ({ int _g = (expr); if ((ret) >= 0 && _g < 0) (ret) = _g; _g; })

static inline bool streq(const char *a, const char *b) { return strcmp(a, b) == 0; }
static inline const char *strempty(const char *s) { return s ? s : ""; }
static inline bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* qsort() comparator for uint64_t, ascending. */
int cmp_u64(const void *a, const void *b);

/* qsort(), after one pass that finds an array already in order (ids mostly arrive so) and leaves it. */
void sort_unless_sorted(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* Ascending, in O(n): a radix sort; leaves an array already in order as it is. */
void sort_u64(uint64_t *v, size_t n);
/*
 * Binary search of base[0..n), ascending under cmp(key, element), as
 * bsearch() takes them. bsearch_safe() is bsearch() that takes an empty
 * array, whose base may be NULL: nothing found. upper_bound() is the index
 * of the first element above key (n if none): the one before it, if any,
 * is the last at or below key.
 */
void *bsearch_safe(const void *key, const void *base, size_t n, size_t size,
                   int (*cmp)(const void *key, const void *element));
size_t upper_bound(const void *key, const void *base, size_t n, size_t size,
                   int (*cmp)(const void *key, const void *element));
/* The pct (0..100) percentile of an ascending array by nearest rank; 0 if empty. */
uint64_t percentile_usec(const uint64_t *sorted, size_t n, unsigned pct);
/* v in decimal at buf, which has room for 21 bytes; NUL-terminated. Returns the length. */
size_t format_u64(char *buf, uint64_t v);

/* CLOCK_MONOTONIC in microseconds. */
uint64_t now_usec(void);
/* CLOCK_REALTIME in microseconds: wall-clock time, for what leaves the process. */
uint64_t realtime_usec(void);
/* The process's CPU time (user + system) in microseconds; 0 if getrusage() fails. */
uint64_t cpu_time_usec(void);
/* CPU time of the calling thread alone. */
uint64_t thread_cpu_usec(void);

/*
 * Strict number parsing: whole string, no sign or blank surprises; base 16
 * takes one optional 0x prefix. Return -EINVAL/-ERANGE.
 */
int parse_u64(const char *s, int base, uint64_t *ret);
int parse_unsigned(const char *s, unsigned *ret);
/*
 * NUMA node ids, from sysfs and config alike. The kernel's MAX_NUMNODES is
 * 1 << CONFIG_NODES_SHIFT, at most 1 << 10 on every architecture; one bound
 * everywhere, so no id from outside can size an array beyond it.
 */
#define NODE_ID_MAX 1023
/* No node: a block without a node link (yet), or no node to write from. */
#define NODE_NONE (-1)
/* Decimal 0..NODE_ID_MAX: -ERANGE above it, -EINVAL for anything else ("-1", blanks, signs). */
int parse_node_id(const char *s, int *ret);
/*
 * "<prefix><decimal>" ("node12" with prefix "node") -> 12, as the kernel
 * writes it (no leading zero); -EINVAL/-ERANGE as parse_u64().
 */
int parse_prefixed_id(const char *name, const char *prefix, uint64_t *ret);
/*
 * A copy of argv whose argv[0] is name, so that getopt's messages name the
 * subcommand as typed ("memonlined status"); the strings are shared, the
 * array is the caller's to free. NULL on ENOMEM.
 */
char **argv_named(int argc, char **argv, const char *name);

/* "1", "yes", "true", "on" / "0", "no", "false", "off" */
int parse_bool(const char *s, bool *ret);

/* Is item one of the entries of a comma-separated list ("mem0,mem1")? Whole entries only; NULLs are empty. */
bool strlist_contains(const char *list, const char *item);
/* Append item to the comma-separated list *list (NULL: empty) unless it is there; NULL or "" adds nothing. */
int strlist_add_unique(char **list, const char *item);

/* Trim leading and trailing white space in place; returns s. */
char *strstrip(char *s);

/* Growable array helper: make room for need elements of size sz. */
int grow_array(void **array, size_t *allocated, size_t need, size_t sz);
#define GROW(array, allocated, need) grow_array((void **) &(array), &(allocated), (need), sizeof(*(array)))
