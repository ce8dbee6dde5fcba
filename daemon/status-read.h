/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * `memonlined status`, what it reads: nodes, hotplug devices and dax
 * devices (with their CXL region and memdevs, pmem-cxl.c), CXL regions and
 * memdevs, nvdimm regions and namespaces (pmem-nd.c) from sysfs
 * (status-read.c); the kernel's policy, competing onliners and the daemon
 * (status-sections.c); the running batch from the daemon's progress file
 * (status-progress.c).
 * Everything read is untrusted text: the renderers escape it.
 */

#include <stdbool.h>
#include <stdint.h>
#include "coexist.h"
#include "cpuset.h"
#include "memdev.h"
#include "pmem.h"
#include "pmem-cxl.h"
#include "pmem-nd.h"
#include "rules.h"

struct topology;
struct policy;

/* What the blocks of one node, device or range hold. */
struct block_tally {
        uint64_t blocks;                /* present, in any state */
        uint64_t online, offline;
        uint64_t kernel, movable;       /* online blocks by zone (Normal, DMA32 and DMA count as kernel) */
        uint64_t zone_unknown;          /* online, zone unreadable */
};

struct status_node {
        int node;                       /* NODE_NONE: blocks with no node link (yet) */
        bool in_topology;               /* a node directory, not just a block's link */
        bool cpuless;
        char *cpus;                     /* cpulist of its online CPUs, "" if none */
        int writer_node;                /* whose CPUs write its memory; NODE_NONE if none */
        char *writer_cpus;              /* cpulist the planner would write from, "" if none */
        struct block_tally tally;
};

/* A hotplug device (memdev.h): virtio-mem runs of one device are one. */
struct status_device {
        enum memdev_kind kind;
        char *name;
        uint64_t start, end;            /* span of its ranges, end exclusive */
        char *nodes;                    /* nodes of its blocks as a list ("1", "0-1"), "" if none known */
        const struct pmem_device *dax;  /* kind dax: its record in status_machine.dax (CXL region, memdevs) */
        struct block_tally tally;
};

struct status_dax {
        const struct pmem_device *dev;  /* borrowed from status_machine.dax */
        struct block_tally tally;
        /*
         * REFUSED or UNKNOWN: memonlined keeps its memory out of system RAM
         * for its bad media (a devdax device it would convert otherwise, or
         * a system-ram one with offline blocks); else NONE.
         */
        enum bad_media held_back;
};

struct status_machine {
        uint64_t block_size;
        struct status_node *nodes;      /* ascending, NODE_NONE last */
        size_t n_nodes, a_nodes;
        struct status_device *devices;  /* ascending by start */
        size_t n_devices, a_devices;
        int devices_error;              /* -errno: the device set could not be read */
        struct pmem_devices dax;
        struct status_dax *dax_tallies; /* one per dax.devices[] */
        int dax_error;
        struct cxl_regions cxl;         /* every CXL region, with a dax device or not */
        int cxl_error;
        struct cxl_memdevs memdevs;     /* every CXL memdev, in a region or not */
        int memdevs_error;
        struct nd_regions nd;           /* every nvdimm region, with its namespaces */
        int nd_error;
};

void status_machine_done(struct status_machine *m);

/* The dax devices on a CXL region: the first (dax_tallies order) and how many; NULL and 0 if none. */
const struct status_dax *status_region_dax(const struct status_machine *m, const char *region, size_t *ret_n);

/*
 * Read the machine: nodes and their blocks from t, writer CPUs per p
 * (plan_writer_cpus(), as the planner picks them), the hotplug devices,
 * dax devices, CXL regions and memdevs and nvdimm regions from t's sysfs
 * root. A listing that fails leaves that table empty with its error in
 * *_error; only -ENOMEM fails.
 */
int status_machine_read(const struct topology *t, const struct policy *p, struct status_machine *ret);

/* Tally the blocks of t that lie wholly in [start, end); nodes (may be NULL) gets their nodes. */
void status_tally_range(const struct topology *t, uint64_t start, uint64_t end, struct block_tally *tally,
                        struct bitmask *nodes);

struct topo_block;
/* Count one block in t. */
void block_tally_add(struct block_tally *t, const struct topo_block *b);

/* No online block in a kernel zone (or of unknown zone): it can be offlined and unplugged now. */
bool block_tally_removable(const struct block_tally *t);

/*
 * What a dax device's memory is doing: "disabled" (no driver), "refused"
 * or "undecided" (held back for its bad media), "enabled" (device_dax or
 * another driver), or for system-ram (kmem) "online", "partial" or
 * "offline" by its blocks.
 */
const char *status_dax_state(const struct status_dax *x);

/* ---- the running batch (status-progress.c) ------------------------------ */

/* The daemon's progress file (interface.h PROGRESS_FILE) is at most this long. */
#define STATUS_PROGRESS_MAX 4096

struct status_batch {
        char *status;                   /* STATUS=: "onlining node 1: 320/512 blocks, ..." */
        char *trigger;                  /* TRIGGER= */
        int node;                       /* NODE=, NODE_NONE if absent or bad */
        uint64_t blocks_done, blocks_total, block_size, elapsed_usec;
        uint64_t age_usec;              /* since the file was written, UINT64_MAX unknown */
};

void status_batch_done(struct status_batch *b);

/*
 * Parse the KEY=value lines of a progress file (STATUS, TRIGGER, NODE,
 * BLOCKS_DONE, BLOCKS_TOTAL, BLOCK_SIZE, ELAPSED_USEC). Unknown keys,
 * lines without "=", bad numbers and text values longer than 256 bytes are
 * left out. -EINVAL when nothing usable is in it (no STATUS and no
 * BLOCKS_TOTAL), -ENOMEM.
 */
int status_batch_parse(const char *text, size_t len, struct status_batch *ret);

/*
 * The running batch from <dir>/progress: 1 and *ret, 0 when no batch runs
 * (no file), -errno when the file is there but unreadable, not a regular
 * file, longer than STATUS_PROGRESS_MAX or has nothing usable (-EINVAL).
 */
int status_batch_read(const char *dir, struct status_batch *ret);

/* ---- around the tables (status-sections.c) ------------------------------ */

struct status_daemon {
        bool known;                     /* systemd answered */
        char *active_state, *status_text;
        char *error;                    /* why not known: "no system bus", "not queried", the bus error */
};

struct status_sections {
        char *auto_online, *online_policy, *auto_movable_ratio;        /* NULL: not there (old kernel) */
        int kernel_error;               /* -errno: the kernel's policy could not be read */
        struct conflicts conflicts;
        int conflicts_error;            /* -errno: the check for competing onliners is incomplete */
        const char *runtime_dir;        /* where the progress file is looked for */
        struct status_batch batch;
        int batch_result;               /* status_batch_read(): 1 running, 0 none, -errno */
        struct status_daemon daemon;
        char *policy_warning;           /* the policy file was refused: FILE:LINE: reason (status.c) */
};

void status_sections_done(struct status_sections *s);

/*
 * The kernel's onlining policy and competing onliners under root (udev
 * rules in rules_dirs), the running batch from runtime_dir, and, with
 * ask_daemon, memonlined.service from systemd. What cannot be read keeps
 * its error in s; only -ENOMEM fails.
 */
int status_sections_read(const char *root, const char *const *rules_dirs, const char *runtime_dir, bool ask_daemon,
                         struct status_sections *s);

/* Some section could not be read: the output is incomplete. */
bool status_sections_partial(const struct status_sections *s);
