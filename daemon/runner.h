/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "memdev.h"
#include "pmem.h"

struct job_progress;
struct online_ops;
struct online_pool;
struct policy;
struct reporter;
struct topology;

/*
 * One pass of the pipeline after the batcher: convert selected dax
 * devices, read the blocks, resolve their nodes, attribute them to dax
 * devices, plan, online and report. The daemon runs it on its runner
 * thread; --once, --dry-run and the benchmarks call it directly.
 */

struct pass_report;

struct runner {
        const char *sysfs_root;
        struct reporter *reporter;
        atomic_bool *stop;              /* SIGTERM: finish in-flight writes, start no more */
        bool dry_run;                   /* print the plan to out, write nothing */
        bool need_memory;               /* a tree without memory hotplug is an error (--once, --dry-run) */
        FILE *out;                      /* dry-run output */
        struct topology *topology;      /* kept between jobs; the runner thread's alone */
        const atomic_bool *more_work;   /* set by the event loop while another job is queued */
        struct job_progress *progress;  /* NULL: nobody watches */
        const struct online_ops *ops;   /* NULL: write sysfs; tests stand in for the kernel */
        uint64_t *held;                 /* blocks the last job left offline for this one */
        uint64_t *held_since_usec;      /* per held block: when it was first held */
        size_t n_held;
        uint64_t *deferred;             /* blocks of a node not known yet, for the next job */
        size_t n_deferred;
        bool memmap_warned;             /* a memmap_on_memory the kernel would not give was warned about */
        struct memdev_cache devices;    /* DIMM spans and firmware memmap entries, kept between jobs */
        const atomic_uint *device_events;       /* counted by the event loop: a DIMM came or went */
        unsigned devices_read_at;       /* *device_events when the topology's devices were last read whole */
        bool devices_read;              /* the topology's devices and fw_ranges are of that read */
        struct ram_ranges fw_ranges;    /* the firmware's RAM ranges of that read */
        struct pmem_devices dax;        /* the dax devices, kept between jobs (pmem_scan_update()) */
        bool keep_writers;              /* keep the writer threads between jobs (the daemon) */
        struct online_pool *pool;       /* those threads, once a job has started them */
        struct pass_report *pending_report; /* a batch's records, said after the next batch's first write */
        bool pending_kept_now;          /* the running job kept it */
        char *pool_cpus;                /* the topology's signature when they last pinned */
        struct media_reported *media_reported;  /* devices kept out for bad media, with their records' facts */
        size_t n_media_reported, media_reported_allocated;
};

/* A device whose bad media was recorded: a rescan records it again only when a fact changed. */
struct media_reported {
        char name[32];                  /* daxR.N */
        int media;                      /* enum bad_media */
        int mode;                       /* enum pmem_mode */
        uint64_t bad_sectors;
        size_t blocks;
};

/* Say what the last job kept back, and drop what the runner keeps between jobs. */
void runner_done(struct runner *c);
/* Blocks wait offline for a next job: held back in their zone, or of a node not known yet. */
bool runner_has_carried_over(const struct runner *c);

/* One unit of work. */
struct job {
        uint64_t *ids;                  /* blocks to consider; NULL = rescan all offline */
        size_t n_ids;
        uint64_t first_event_usec;
        uint64_t start_usec;            /* CLOCK_MONOTONIC: when the loop started it */
        uint64_t *touched;              /* blocks with online events since the last job */
        size_t n_touched;
        bool reload_topology;           /* blocks went offline or away: read everything again */
        bool adopt_linked;              /* add events: also the linked blocks whose events are still coming */
        unsigned warm;                  /* WARM_*: no blocks, bring that of what the runner keeps up to date */
        const char *trigger;
        bool scan_dax;                  /* consider every devdax device, not just dax_devices */
        char **dax_devices;             /* dax devices to consider converting */
        uint64_t *dax_event_usec;
        size_t n_dax;
        struct policy *policy;          /* a reference of the job's own, dropped by job_free() */
        /* results, read by the main thread after the join */
        size_t onlined, failed, not_attempted;
        size_t undecided;               /* left offline because a rule could not be checked */
        size_t dax_failed;              /* dax devices that could not be scanned or converted */
        size_t unreadable;              /* blocks whose state could not be read */
        size_t adopted;                 /* linked blocks taken in before their add events */
        size_t excluded;                /* left offline by policy (zone skip, [exclude]) */
        uint64_t first_online_usec, last_online_usec;   /* CLOCK_MONOTONIC: its first and last block online; 0 none */
        unsigned warm_after;            /* WARM_*: what changed under the job (HMAT initiators came) */
        uint64_t bytes, duration_usec;
        int error;
};

/* What a warm job reads again, as the events said what changed. */
enum {
        WARM_MACHINE = 1 << 0,          /* nodes, CPUs: a node or CPU came, went, on- or offline */
        WARM_DAX = 1 << 1,              /* the dax devices: one came, went, was bound or unbound */
        WARM_DEVICES = 1 << 2,          /* the hotplug devices: a DIMM, a CXL region came or went */
};

void job_free(struct job *j);
void job_freep(struct job **j);

/* 0, or -errno when the pass could not run at all (block failures are in the counters). */
int runner_process(struct runner *c, struct job *j);
