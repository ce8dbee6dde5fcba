/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/*
 * `memonlined report`: read the batch, node, failure and device records
 * (report.h MESSAGE_IDs) from the local journal, a journal directory (for
 * example systemd-journal-remote output from many hosts) or journal files,
 * and summarise them: tables (text, raw, one JSON document), JSON lines,
 * a failure list, an SVG picture. The files are named for their jobs:
 * -files, -boots and -read read, -join joins, -select filters and sums,
 * -table, -json and -svg render.
 */

/* Exit statuses, as memonlined-report(8) documents them. */
enum {
        REPORT_EXIT_SUCCESS = 0,        /* also when no records match */
        REPORT_EXIT_FAILURE = 1,        /* no journal could be read, or output failed */
        REPORT_EXIT_USAGE = 2,          /* bad option or argument */
        REPORT_EXIT_PARTIAL = 64,       /* some journal files could not be read; the rest were (as chmem) */
};

/* argv[0] is the subcommand name. Prints to out, errors to stderr. Returns an exit status above. */
int journal_report_main(int argc, char **argv, FILE *out);
