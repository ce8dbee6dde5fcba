/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * memonlined's state in Prometheus's text exposition format: one renderer
 * for the daemon's textfile (node_exporter's textfile collector reads
 * <dir>/memonlined.prom) and `memonlined status --prometheus`. What sysfs
 * shows (blocks and bytes per node and zone, per hotplug device,
 * auto_online_blocks) comes from a topology: the daemon's block cache as
 * its last batch left it, or status's own fresh read. The daemon adds its
 * counters since its start. Every label value from sysfs is escaped.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "memdev.h"
#include "status-read.h"

struct topology;

/* The file in the textfile directory, and the temporary one beside it (no .prom: the collector skips it). */
#define METRICS_FILE "memonlined.prom"
#define METRICS_FILE_TMP ".memonlined.prom.new"

struct metrics_node {
        int node;                       /* NODE_NONE: blocks with no node link (yet) */
        struct block_tally tally;
};

struct metrics_device {
        enum memdev_kind kind;
        char *name;                     /* from sysfs: untrusted */
        struct block_tally tally;
};

/* What sysfs showed, copied out of the topology: it stays valid while the topology changes. */
struct metrics_machine {
        uint64_t block_size;
        struct metrics_node *nodes;     /* ascending, NODE_NONE last */
        size_t n_nodes;
        struct metrics_device *devices; /* those with blocks, ascending by start */
        size_t n_devices;
        char *auto_online;              /* auto_online_blocks; NULL: not there or unreadable */
};

void metrics_machine_done(struct metrics_machine *m);

/*
 * The blocks of t per node and per hotplug device (t->devices, once
 * topology_set_devices() gave them), and auto_online_blocks read from t's
 * sysfs root. Replaces *ret; -ENOMEM.
 */
int metrics_machine_read(const struct topology *t, struct metrics_machine *ret);

/* The daemon's own numbers since its start. */
struct metrics_daemon {
        uint64_t start_time_usec;       /* CLOCK_REALTIME */
        uint64_t batches;               /* batch records written (MEMONLINE_BATCH) */
        uint64_t blocks_onlined, bytes_onlined, blocks_failed;
        uint64_t blocks_excluded;       /* left offline by policy, counted in each pass that planned them */
        bool have_last_batch;           /* a batch onlined a block: the two below are known */
        uint64_t last_first_block_usec, last_last_block_usec;   /* from its first event (or start) */
};

struct metrics {
        const struct metrics_machine *machine;  /* NULL: not read yet (the daemon before its first pass) */
        int auto_online_taken;                  /* memonlined holds auto_online_blocks: 1, 0, or -1 unknown */
        const struct metrics_daemon *daemon;    /* NULL: not the daemon (status): no counters */
};

/*
 * The exposition: HELP and TYPE for each family, then its samples. Label
 * values from sysfs go through escape_untrusted() (no control character,
 * valid UTF-8) and then the format's own escapes (\\, \", \n). -EIO when
 * out fails.
 */
int metrics_print(FILE *out, const struct metrics *m);

/*
 * Replace <dir>/memonlined.prom with text at once: written whole to
 * METRICS_FILE_TMP in dir, made 0644 whatever the umask (node_exporter runs
 * as another user), then renamed over it. Not synced: the daemon writes
 * it again at every start and batch, and a flush must not hold up the
 * event loop. -errno.
 */
int metrics_write_file(const char *dir, const char *text, size_t len);
