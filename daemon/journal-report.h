/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/*
 * `memonlined report`: read the batch, node, failure and device records
 * (report.h MESSAGE_IDs) from the local journal, a journal directory (for
 * example systemd-journal-remote output from many hosts) or journal files,
 * and summarise them as a table, JSON lines, or a failure list.
 */

/*
 * argv[0] is the subcommand name. Prints to out, errors to stderr.
 * Returns 0 (also when no records match), 1 for bad usage, -errno on failure.
 */
int journal_report_main(int argc, char **argv, FILE *out);
