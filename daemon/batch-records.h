/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include "online.h"
#include "plan.h"
#include "report.h"

/*
 * The records a batch leaves (batch-records.c), through the reporter:
 * MESSAGE_ID_BATCH, MESSAGE_ID_NODE and MESSAGE_ID_FAILURE, with the
 * MEMONLINE_* fields catalog/memonlined.catalog explains.
 */

/* Context of a batch, beyond the plan and result. */
struct batch_info {
        const char *trigger;            /* "udev", "coldplug", "rescan", "once" */
        uint64_t first_event_usec;      /* 0 for coldplug */
        uint64_t cpu_usec;              /* daemon CPU time spent on this batch */
        uint64_t prepare_usec;          /* from the pass's start to the first write: reading and planning */
        uint64_t block_size;
};

/*
 * One batch record, one record per node group, one per failed block.
 * Increments r->batch_seq.
 */
int report_batch(struct reporter *r, const struct batch_info *info, const struct plan *plan,
                 const struct online_result *res);

/*
 * A failure record for a block the planner left undecided (a rule could
 * not be checked): MEMONLINE_ERRNO=EAGAIN, MEMONLINE_REASON says why.
 * batch: the sequence of the batch it belongs to (0: none was written).
 */
int report_undecided(struct reporter *r, const struct plan_item *item, uint64_t batch);

/* The same for a block whose state cannot be read: MEMONLINE_ERRNO is the read's (error < 0). */
int report_unreadable(struct reporter *r, uint64_t id, int node, int error, uint64_t batch);
