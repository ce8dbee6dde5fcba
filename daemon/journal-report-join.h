/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * `memonlined report`: joining journal entries into batches. Entries come
 * from the journal (journal-report-read.c) or anywhere else (tests, the
 * fuzzer) as fields; the renderers (journal-report-render.h) read the
 * joined records. Everything in an entry is untrusted: values are bounded
 * here and escaped by the renderers.
 *
 * Records are joined into batches by (host, boot id, pid, batch seq): the
 * seq restarts with the daemon, and a collector directory holds many
 * hosts whose entries interleave in time.
 */

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-id128.h>
#include "hash.h"

#define JR_NONE SIZE_MAX
#define JR_VALUE_MAX 512
#define JR_GIB (1024.0 * 1024.0 * 1024.0)

enum jr_field {
        JR_BOOT_ID, JR_HOSTNAME, JR_PID, JR_MESSAGE_ID, JR_MESSAGE,
        JR_BATCH, JR_TRIGGER, JR_BLOCKS, JR_BYTES, JR_FAILED, JR_SKIPPED, JR_NODES,
        JR_DURATION, JR_GIBPS, JR_P50, JR_P99, JR_MAX, JR_LATENCY, JR_FIRST_LATENCY, JR_CPU_USEC,
        JR_DEVICE, JR_NAMESPACE, JR_REGION, JR_NODE, JR_WRITER_NODE, JR_ZONE, JR_CPUS,
        JR_BLOCK, JR_ERRNO, JR_ERRNO_NAME, JR_ATTEMPTS, JR_BIND, JR_ONLINE, JR_TOTAL,
        JR_SYSTEMD_UNIT, JR_COMM, JR_EXE, JR_UID, JR_MACHINE_ID,
        _JR_FIELD_MAX,
};

/* One journal entry's fields that the report reads, copied out and cut at JR_VALUE_MAX - 1 bytes. */
struct jr_entry {
        uint64_t realtime;
        bool have[_JR_FIELD_MAX];
        char v[_JR_FIELD_MAX][JR_VALUE_MAX];
};

void jr_entry_clear(struct jr_entry *e);
/* One "FIELD=value" datum (not NUL-terminated); fields the report does not read are ignored. */
void jr_entry_add(struct jr_entry *e, const void *data, size_t len);

struct jr_counters {
        uint64_t blocks, bytes, failed, skipped;
        uint64_t duration_usec, p50_usec, p99_usec, max_usec, latency_usec, cpu_usec;
        uint64_t first_latency_usec;    /* first event to first block online; older records lack it */
        double gibps;
        bool have_gibps, have_latency, have_first_latency;
};

struct jr_node {
        int node, writer_node;
        char *zone, *cpus;
        struct jr_counters c;
};

struct jr_batch {
        size_t host;
        sd_id128_t boot;
        uint64_t pid, seq, realtime;
        bool have_record;               /* the batch record itself was seen */
        char *trigger, *device, *namespace_name, *region;
        char *node_list;                /* MEMONLINE_NODES: the number of node groups */
        struct jr_counters c;
        struct jr_node *nodes;
        size_t n_nodes, a_nodes;
        size_t *failures;               /* indices into failures of struct jr_records */
        size_t n_failures, a_failures;
        size_t device_rec;              /* index into devices of struct jr_records, or JR_NONE */
};

struct jr_failure {
        uint64_t realtime;
        size_t host, batch;
        char *block, *errno_name, *message;
        int node, err;
        uint64_t attempts;
};

struct jr_device {
        uint64_t realtime;
        size_t host, batch;
        char *device, *namespace_name, *region;
        uint64_t bind_usec, online_usec, total_usec, blocks, bytes;
};

/*
 * A host is a machine (_MACHINE_ID), so cloned VMs that share a hostname
 * stay apart; entries without a machine ID fall back to the hostname.
 */
struct jr_host {
        bool have_machine;
        sd_id128_t machine;
        char *name;                     /* _HOSTNAME, the latest seen */
        char *label;                    /* after jr_records_finish(): the name, made unique with the machine ID */
};

struct jr_proc;

struct jr_records {
        struct jr_host *hosts;
        size_t n_hosts, a_hosts, last_host;
        struct jr_batch *batches;
        size_t n_batches, a_batches;
        struct jr_failure *failures;
        size_t n_failures, a_failures;
        struct jr_device *devices;
        size_t n_devices, a_devices;
        bool all_sources;               /* join records whoever logged them */
        uint64_t n_untrusted;           /* our MESSAGE_IDs from another source, left out */

        uint8_t hash_key[HASH_KEY_SIZE];

        /* only while joining */
        struct idx_map host_map, batch_map, proc_map;
        struct jr_proc *procs;
        size_t n_procs, a_procs;
        locale_t c_locale;
};

int jr_records_init(struct jr_records *r);
void jr_records_done(struct jr_records *r);
/*
 * Join one entry; entries without a MESSAGE_ID of ours are ignored, and
 * unless all_sources so are those journald did not stamp as memonlined's.
 * -ENOMEM is the only error.
 */
int jr_records_add(struct jr_records *r, const struct jr_entry *e);
/* The i-th MESSAGE_ID jr_records_add() joins (today's and those before 0.2), NULL past the last. */
const char *jr_record_message_id(size_t i);
/* After the last entry: hosts in name order (every table lists them alike), and their labels. */
int jr_records_finish(struct jr_records *r);


/* Batch totals; without its batch record (filtered out or lost), from the node records. */
void jr_batch_totals(const struct jr_batch *b, struct jr_counters *ret);
/* The recorded GiB/s, or bytes over duration. */
double jr_counters_gibps(const struct jr_counters *k);
