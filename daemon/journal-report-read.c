/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <systemd/sd-journal.h>
#include "journal-report-read.h"
#include "interface.h"
#include "util.h"

static int open_journal(const struct jr_query *q, sd_journal **ret, const char **ret_what) {
        int r;

        if (q->files && q->files[0]) {
                r = sd_journal_open_files(ret, (const char **) q->files, 0);
                *ret_what = "open the journal file";
        } else if (q->directory) {
                r = sd_journal_open_directory(ret, q->directory, 0);
                *ret_what = "open the journal directory";
        } else {
                r = sd_journal_open(ret, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM);
                *ret_what = "open the system journal";
        }
        return r;
}

static int add_match(sd_journal *j, const char *field, const char *value) {
        _cleanup_free_ char *m = NULL;

        if (asprintf(&m, "%s=%s", field, value) < 0)
                return -ENOMEM;
        return sd_journal_add_match(j, m, 0);
}

/* Same-field matches are OR'd, different fields AND'd: (id1|id2|...) & host & (boot1|boot2|...). */
static int add_matches(sd_journal *j, const struct jr_query *q, const sd_id128_t *boots, size_t n_boots) {
        const char *message_id;
        int r;

        for (size_t i = 0; (message_id = jr_record_message_id(i)); i++) {
                r = add_match(j, "MESSAGE_ID", message_id);
                if (r < 0)
                        return r;
        }
        if (q->host) {
                sd_id128_t id;

                /* a machine ID names one machine, a hostname maybe several */
                r = add_match(j, sd_id128_from_string(q->host, &id) >= 0 ? "_MACHINE_ID" : "_HOSTNAME", q->host);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < n_boots; i++) {
                char s[SD_ID128_STRING_MAX];

                r = add_match(j, "_BOOT_ID", sd_id128_to_string(boots[i], s));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The entry under the cursor, one pass over its fields: get_data per field would rescan it each time. */
static int entry_read(sd_journal *j, uint64_t realtime, struct jr_entry *e) {
        const void *d;
        size_t l;
        int r;

        jr_entry_clear(e);
        e->realtime = realtime;
        sd_journal_restart_data(j);
        while ((r = sd_journal_enumerate_available_data(j, &d, &l)) > 0)
                jr_entry_add(e, d, l);
        return r;
}

/*
 * Every matching entry from the head, each judged by its own timestamp.
 * Neither bound seeks or stops: a journal's realtime is not monotonic (a
 * clock set late, a forged record, files collected off other hosts), and
 * journalctl's seek by realtime bisects as if it were, so one entry
 * stamped far ahead or behind would hide others. The matches keep this to
 * our records, and an entry out of range costs its timestamp only.
 */
static int read_entries(sd_journal *j, const struct jr_query *q, struct jr_records *rec, const char **ret_what) {
        _cleanup_free_ struct jr_entry *e = malloc(sizeof(*e));
        uint64_t realtime;
        int r;

        if (!e)
                return -ENOMEM;
        for (;;) {
                r = sd_journal_next(j);
                if (r < 0) {
                        *ret_what = "read the next journal entry";
                        return r;
                }
                if (r == 0)
                        return 0;
                r = sd_journal_get_realtime_usec(j, &realtime);
                if (r >= 0 && (realtime < q->since || realtime > q->until))
                        continue;
                if (r >= 0)
                        r = entry_read(j, realtime, e);
                if (r < 0) {
                        *ret_what = "read journal entry data";
                        return r;
                }
                r = jr_records_add(rec, e);
                if (r < 0)
                        return r;
        }
}

int jr_read_journal(const struct jr_query *q, struct jr_records *rec, const char **ret_what) {
        _cleanup_free_ sd_id128_t *boots = NULL;
        size_t n_boots = 0;
        sd_journal *j = NULL;
        int r;

        r = open_journal(q, &j, ret_what);
        if (r < 0)
                return r;
        if (q->boot.set) {
                *ret_what = "find the boot";
                r = jr_select_boots(j, &q->boot, !q->directory && !(q->files && q->files[0]), &boots, &n_boots);
                if (r < 0) {
                        sd_journal_close(j);
                        return r;
                }
        }
        *ret_what = "set up the journal query";
        r = add_matches(j, q, boots, n_boots);
        if (r >= 0)
                r = sd_journal_set_data_threshold(j, 4096);
        if (r >= 0)
                r = sd_journal_seek_head(j);
        if (r >= 0)
                r = read_entries(j, q, rec, ret_what);
        sd_journal_close(j);
        return r;
}
