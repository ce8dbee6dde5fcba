/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <numa.h>
#include "event-source.h"
#include "zone.h"

/*
 * memmap_on_memory of a dax device memonlined converts: where the kmem
 * bind puts the memory map of the added blocks.
 */
enum memmap_setting {
        MEMMAP_UNSET = 0,       /* a [device] rule without the key: the next rule, then [pmem], decides */
        MEMMAP_KEEP,            /* "keep": leave the device's attribute as the kernel set it */
        MEMMAP_OFF,             /* "no": the memmap goes to ordinary memory (the nearest node with memory) */
        MEMMAP_ON,              /* "yes": the memmap lives on the added memory itself */
};

const char *memmap_setting_to_string(enum memmap_setting m);   /* "unset", "keep", "no", "yes" */

/* How many workers a node gets: a fixed count or a percentage of its cores. */
struct worker_count {
        unsigned count;         /* used when percent == 0 */
        unsigned percent;       /* 1..100 of usable cores, rounded up, at least 1 */
};

struct node_rule {
        int node;
        enum zone zone;
        struct worker_count workers;
        bool has_workers;
        const char *file;       /* the file that set it last: one of policy->files */
        unsigned line;          /* of its section header there */
};

struct range_rule {
        uint64_t start, end;    /* physical, inclusive start, exclusive end */
        enum zone zone;
        const char *file;       /* as in node_rule */
        unsigned line;
};

/* Matches a dax device (kmem memory) by name, namespace, region, CXL region or memdev, or node. */
struct device_rule {
        char *name;             /* section name, for logs */
        char *device;           /* "dax0.0"; NULL = any */
        char *namespace_name;   /* namespace uuid, "namespace0.0" or alt name; NULL = any */
        int region;             /* region id, -1 = any */
        int target_node;        /* -1 = any */
        uint64_t min_size;      /* bytes, 0 = any */
        bool pmem_only;         /* only devices on pmem regions */
        char *cxl_region;       /* CXL region "region0"; NULL = any */
        char *cxl_memdev;       /* one of the CXL region's memdevs, "mem0"; NULL = any */
        enum zone zone;
        int convert;            /* -1 unset, 0 no, 1 convert devdax -> system-ram */
        enum memmap_setting memmap_on_memory;   /* for its conversion; UNSET: not this rule's say */
        int allow_badblocks;    /* -1 unset, 0 no, 1 convert and online it with known bad media */
        const char *file;       /* as in node_rule */
        unsigned line;
};

struct exclusion {
        enum { EXCLUDE_NODE, EXCLUDE_RANGE, EXCLUDE_BLOCK, EXCLUDE_DEVICE } kind;
        int node;
        uint64_t start, end;    /* range; for EXCLUDE_BLOCK start = block id */
        char *device;
        const char *file;       /* the file of the key: one of policy->files */
        unsigned line;
};

struct policy {
        /*
         * References: the loop's current policy and every job planned under
         * it. A reload replaces the loop's; a job keeps its own to the end.
         */
        atomic_uint n_ref;
        char *path;                     /* file it came from, NULL for built-in */
        char **files;                   /* read in this order: path (if it exists), then path.d/ drop-ins */
        size_t n_files;

        /* [daemon] */
        unsigned settle_ms;             /* quiet time that closes a batch */
        unsigned max_wait_ms;           /* a batch never waits longer than this */
        unsigned max_concurrent_writes; /* kernel writes at once, default 1 */
        bool write_chain;               /* a worker's run of writes as one linked io_uring chain, default yes */
        struct worker_count workers;    /* per node, default 1 */
        struct bitmask *banned_cpus;    /* never write from these; may be empty */
        unsigned retries;               /* EBUSY/EAGAIN retries per block */
        unsigned retry_backoff_ms;      /* first backoff, doubles, capped */
        unsigned retry_backoff_max_ms;
#define POLICY_DEFAULT_RETRIES 5U
#define POLICY_DEFAULT_RETRY_BACKOFF_MS 5U
#define POLICY_DEFAULT_RETRY_BACKOFF_MAX_MS 200U
        unsigned node_link_wait_ms;     /* wait for memoryN/nodeX to appear */
        enum event_source event_source;
        bool take_over_auto_online;     /* auto_online_blocks = offline while we run */

        /* [zones] */
        enum zone default_zone;
        unsigned movable_ratio;         /* percent; 0 disables the guard */
        bool ratio_per_node;            /* apply the guard per node too */

        /* [pmem] */
        bool convert_devdax;            /* convert matching devdax to system-ram */
        enum zone pmem_zone;            /* default zone for dax kmem memory */
        bool respect_daxctl;            /* stand back if daxctl's own config claims a device */
        enum memmap_setting memmap_on_memory;   /* for conversions; never UNSET */

        /* [metrics] */
        char *textfile_dir;             /* where memonlined.prom goes (node_exporter's textfile collector); NULL: none */

        struct node_rule *nodes;
        size_t n_nodes;
        struct range_rule *ranges;
        size_t n_ranges;
        struct device_rule *devices;
        size_t n_devices;
        struct exclusion *exclusions;
        size_t n_exclusions;
};

/* Where parsing failed, for "FILE:LINE: reason". */
struct policy_error {
        char file[512];
        unsigned line;          /* 0 when not tied to a line (e.g. cannot open) */
        char reason[256];
};

/* Built-in defaults, used when no config file exists. */
int policy_new_default(struct policy **ret);

/*
 * Parse and validate an INI file, then its drop-ins: the files PATH.d/NAME.conf
 * (not hidden ones), in lexical (strcmp) order, each read as if it went
 * on where the one before ended, but with no section carried over: later
 * keys override, a rule section ([node N], [range SPEC], [device NAME]) of
 * an earlier file is reopened, [exclude] entries add up; within one file
 * a rule section twice is still an error. Errors name the drop-in and its
 * line. Drop-ins apply over the built-in defaults when PATH does not exist.
 * On failure returns -EINVAL (or -errno for I/O) and fills *ret_error;
 * *ret is untouched. No PATH and no drop-ins is -ENOENT.
 * Only a regular file of at most 1 MiB is read, never blocking: anything
 * else fails as a whole ("FILE: reason", line 0): -EISDIR, -EINVAL (a FIFO,
 * a device, a socket), -ENOLINK (a dangling symbolic link), -EFBIG. So
 * does a file, its directory, the drop-in directory or a link's target
 * (and its directory) that someone but root or us owns or may write:
 * -EPERM (policy-files.h).
 * Names and reasons in ret_error are escaped (escape_text()): safe to print.
 */
int policy_load(const char *path, struct policy **ret, struct policy_error *ret_error);

/*
 * The daemon's, status's and --check-config's one way in: policy_load(),
 * and for a missing file not named explicitly (-ENOENT, explicit false)
 * the built-in defaults, *ret_defaulted then true. Logs nothing.
 */
int policy_load_or_default(const char *path, bool explicit, struct policy **ret, bool *ret_defaulted,
                           struct policy_error *ret_error);

/* Enough for any policy_error_format(). */
#define POLICY_ERROR_MAX (sizeof(((struct policy_error *) NULL)->file) + \
                          sizeof(((struct policy_error *) NULL)->reason) + 16)

/*
 * The one way a refused policy is put: "FILE:LINE: reason", or "FILE:
 * reason" (path when e names no file; strerror(-error) when it gives no
 * reason). policy_load() escaped what came from the file.
 */
void policy_error_format(const struct policy_error *e, const char *path, int error, char *buf, size_t size);

/* The same for text in memory, named name in errors: for tests and fuzzing. */
int policy_load_buffer(const char *name, const char *data, size_t size, struct policy **ret,
                       struct policy_error *ret_error);

/* Reference counting, safe across threads (the runner drops the job's). unref returns NULL. */
struct policy *policy_ref(struct policy *p);
struct policy *policy_unref(struct policy *p);
void policy_unrefp(struct policy **p);
#define _cleanup_policy_ __attribute__((cleanup(policy_unrefp)))

/* Workers for a node given its usable core count (>= 1 if cores >= 1). */
unsigned policy_workers_for_node(const struct policy *p, int node, unsigned usable_cores);
