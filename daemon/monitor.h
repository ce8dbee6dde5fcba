/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "event-source.h"

/*
 * Memory-block (and dax) events from udev or straight from the kernel.
 * Memory uevents carry only ACTION, DEVPATH, SUBSYSTEM and SEQNUM, so an
 * event is reduced to (kind, block id or dax device name). Node, CPU, CXL
 * region and ACPI memory device events only say that what the daemon
 * keeps of the machine may have changed.
 */

enum monitor_kind {
        MONITOR_IGNORE = 0,
        MONITOR_MEMORY_ADD,             /* a new offline block */
        MONITOR_MEMORY_ONLINE,          /* a block came online (ours, or another agent's) */
        MONITOR_MEMORY_OFFLINE,         /* a block went offline, or changed */
        MONITOR_MEMORY_REMOVE,
        MONITOR_DAX_ADD,                /* a dax device appeared (or was re-bound) */
        MONITOR_DAX_REMOVE,
        MONITOR_MACHINE,                /* a node or a CPU came, went, or went on- or offline */
        MONITOR_DEVICE,                 /* a CXL region or an ACPI memory device (a DIMM) came or went */
};

struct monitor_event {
        enum monitor_kind kind;
        uint64_t block_id;
        char devname[64];               /* "dax0.0" for dax events */
        bool acpi_memory;               /* MONITOR_DEVICE of a DIMM: its spans and the firmware's RAM changed */
        uint64_t seqnum;
};


struct monitor;

/* Receive buffer asked for: bursts of thousands of blocks must not overflow. */
#define MONITOR_RCVBUF (128 * 1024 * 1024)

int monitor_open(enum event_source source, bool watch_dax, struct monitor **ret);
void monitor_free(struct monitor *m);
int monitor_fd(const struct monitor *m);

/*
 * Receive one event: 1 and *ret filled, 0 when nothing is pending,
 * -ENOBUFS when the kernel dropped events (the caller rescans), other
 * -errno on failure.
 */
int monitor_receive(struct monitor *m, struct monitor_event *ret);

/* Pure classification, used by monitor_receive and by tests. */
int monitor_classify(const char *action, const char *subsystem, const char *sysname, uint64_t seqnum,
                     struct monitor_event *ret);
