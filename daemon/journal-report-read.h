/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `memonlined report`: reading our records from the journal into joined records. */

#include <systemd/sd-id128.h>
#include "journal-report-join.h"

struct jr_query {
        const char *directory;          /* NULL and no files: the local system journal */
        const char *const *files;       /* NULL-terminated, or NULL */
        uint64_t since, until;
        const char *host;               /* _HOSTNAME or _MACHINE_ID, or NULL */
        bool have_boot;
        sd_id128_t boot;
};

/* What could be opened of the journal files a query names (journal-report-files.c). */
struct jr_files {
        char **readable;                /* with --file: those that opened, NULL-terminated */
        size_t n_readable, a_readable;
        size_t n_denied, n_failed;      /* refused for permissions; failed otherwise */
        char *first_bad;                /* the first that did not open */
        int first_error;                /* and why, -errno */
};

/* Try every file: of q->files, in q->directory (and its machine-ID directories), or of the system journal. */
int jr_files_check(const struct jr_query *q, struct jr_files *ret);
void jr_files_done(struct jr_files *f);

/*
 * Read the batch, node, failure and device records matching q into r.
 * On failure *ret_what says what failed ("open the journal directory", ...),
 * for the caller's message.
 */
int jr_read_journal(const struct jr_query *q, struct jr_records *r, const char **ret_what);
