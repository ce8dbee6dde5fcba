/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <syslog.h>
#include "interface.h"


enum log_target {
        LOG_TARGET_AUTO = 0,
        LOG_TARGET_JOURNAL,
        LOG_TARGET_CONSOLE,
};

int log_target_from_string(const char *s, enum log_target *ret);

struct reporter {
        enum log_target target;         /* resolved: JOURNAL or CONSOLE */
        FILE *out;                      /* console records (default stdout) */
        FILE *err;                      /* console log lines (default stderr) */
        int max_priority;               /* LOG_DEBUG shows everything */
        uint64_t batch_seq;             /* last batch number */
        bool pin_warned;
};

/* AUTO: journal if stderr is the journal (JOURNAL_STREAM) or we run under systemd, else console. */
void reporter_init(struct reporter *r, enum log_target target);

/*
 * A record under construction: "KEY=value" strings. The first failure of
 * record_add() stays in error, and record_emit() and record_format_line()
 * return it instead of a record that lacks a field: builders add their
 * fields and check once, at the end.
 */
struct record {
        char **fields;
        size_t n, allocated;
        int error;                      /* first failure, -errno */
};

int record_add(struct record *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void record_clear(struct record *rec);
/* Emit: journal, or "KEY=value KEY=value" on one line (values with spaces are quoted). */
int record_emit(struct reporter *r, const struct record *rec);
/* Format the console line into a malloc'd string (for tests). */
int record_format_line(const struct record *rec, char **ret);

/* Plain log message with an optional MESSAGE_ID (NULL for none). */
void report_log(struct reporter *r, int priority, const char *message_id, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/*
 * The same for a failure: %m in fmt stands for error's text. Returns
 * error as -errno (it may be given either way), so a caller logs and
 * fails in one step: return report_log_errno(r, LOG_ERR, NULL, r, "...: %m").
 */
int report_log_errno(struct reporter *r, int priority, const char *message_id, int error, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
