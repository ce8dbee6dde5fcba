/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <syslog.h>

/*
 * Structured records: journal (sd_journal_sendv) or one console line of
 * KEY=value pairs. MESSAGE_IDs are fixed (made with systemd-id128 new) and
 * API: scripts and journalctl filters name them. catalog/memonlined.catalog
 * explains each.
 */

#define MESSAGE_ID_BATCH    "8a75c3204edc4026aea27aaeda486899"
#define MESSAGE_ID_NODE     "a251eb01963d4e9abecfe2f5aa23b7e8"
#define MESSAGE_ID_FAILURE  "4760fcae4d4f45179c8ac4c18983bc6c"
#define MESSAGE_ID_DEVICE   "3e18456c06c244deb807603c81f317e9"
#define MESSAGE_ID_CONFIG   "31b255296e2e45c4baa570bba1bd0f06"
#define MESSAGE_ID_CONFLICT "68aea79758d8470489a2d0d5cf9410a9"
#define MESSAGE_ID_STARTED  "5503814ab9be4e42b0ec2b9e0af8065c"
#define MESSAGE_ID_RATIO    "e2920e93701e4e3ab810fafbb375d1f0"
#define MESSAGE_ID_STALLED  "b6e8f99665a04b6891481fbc07dc4af6"
#define MESSAGE_ID_AUTO_ONLINE "8216f73b38044dc69bcef47433573c8f"
#define MESSAGE_ID_SLOW_KERNEL "375bcbd18c6343a7b49c89878b6ab86e"
#define MESSAGE_ID_BAD_MEDIA "315806877ee24d9bbc1971810891426a"

/*
 * Before 0.2 memonlined wrote these hand-patterned IDs for the same records.
 * memonlined report still reads journals that hold them, and the catalog
 * still explains them.
 */
#define MESSAGE_ID_OLD_BATCH    "6a1c2b3e4d5f47a8b9c0d1e2f3a4b5c6"
#define MESSAGE_ID_OLD_NODE     "7b2d3c4f5e6048b9a0c1d2e3f4a5b6c7"
#define MESSAGE_ID_OLD_FAILURE  "8c3e4d5a6f7149c0b1d2e3f4a5b6c7d8"
#define MESSAGE_ID_OLD_DEVICE   "9d4f5e6b7a8240d1c2e3f4a5b6c7d8e9"
#define MESSAGE_ID_OLD_CONFIG   "ae5a6f7c8b9351e2d3f4a5b6c7d8e9fa"
#define MESSAGE_ID_OLD_CONFLICT "bf6b7a8d9ca462f3e4a5b6c7d8e9fa0b"
#define MESSAGE_ID_OLD_STARTED  "c07c8b9eadb573a4f5b6c7d8e9fa0b1c"
#define MESSAGE_ID_OLD_RATIO    "d18d9cafbec684b5a6c7d8e9fa0b1c2d"

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
