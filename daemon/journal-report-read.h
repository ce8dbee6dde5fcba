/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `memonlined report`: reading our records from the journal into joined records. */

#include <systemd/sd-id128.h>
#include "journal-report-join.h"

struct jr_query {
        const char *directory;          /* NULL and no files: the local system journal */
        const char *const *files;       /* NULL-terminated, or NULL */
        uint64_t since, until;
        const char *host;               /* _HOSTNAME, or NULL */
        bool have_boot;
        sd_id128_t boot;
};

/*
 * Read the batch, node, failure and device records matching q into r.
 * On failure *ret_what says what failed ("open the journal directory", ...),
 * for the caller's message.
 */
int jr_read_journal(const struct jr_query *q, struct jr_records *r, const char **ret_what);
