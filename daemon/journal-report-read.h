/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `memonlined report`: reading our records from the journal into joined records. */

#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>
#include "journal-report-join.h"

/* -b: a boot ID, an offset, or both (journal-report-boots.c). */
struct jr_boot_spec {
        bool set;
        bool have_id;
        sd_id128_t id;
        int offset;                     /* 0 and -N from the latest boot, +N from the first */
};

/* "[ID][±N]" or "N"; NULL or "" is 0, the latest boot. -EINVAL. */
int jr_boot_spec_parse(const char *s, struct jr_boot_spec *ret);

struct jr_query {
        const char *directory;          /* NULL and no files: the local system journal */
        const char *const *files;       /* NULL-terminated, or NULL */
        uint64_t since, until;
        const char *host;               /* _HOSTNAME or _MACHINE_ID, or NULL */
        struct jr_boot_spec boot;
};

/*
 * The boots spec selects in the open journal, one per machine (local: the
 * local system journal, whose boot 0 is the running one). -ENODATA when
 * no machine has such a boot.
 */
int jr_select_boots(sd_journal *j, const struct jr_boot_spec *spec, bool local, sd_id128_t **ret, size_t *ret_n);

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
