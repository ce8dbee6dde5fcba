/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <systemd/sd-journal.h>
#include "journal-report-read.h"
#include "util.h"

/*
 * -b as journalctl takes it: [ID][±N] or N. 0 and -N count back from the
 * latest boot, +N forward from the first (1 is the first). A journal of
 * one machine gives journalctl's list of boots; a collector's directory
 * holds many machines, and each one's boots are counted on their own, so
 * -b is every machine's latest boot and -b -1 every machine's previous one.
 */

int jr_boot_spec_parse(const char *s, struct jr_boot_spec *ret) {
        struct jr_boot_spec b = { .set = true };
        const char *off = s ?: "";
        char *end;
        long v;

        if (strlen(off) >= 32) {
                char id[SD_ID128_STRING_MAX];

                memcpy(id, off, 32);
                id[32] = '\0';
                if (sd_id128_from_string(id, &b.id) >= 0) {
                        b.have_id = true;
                        off += 32;
                }
        }
        if (*off != '\0') {
                if (b.have_id && *off != '+' && *off != '-')
                        return -EINVAL;
                errno = 0;
                v = strtol(off, &end, 10);
                if (errno != 0 || end == off || *end != '\0' || v < -1000000 || v > 1000000)
                        return -EINVAL;
                b.offset = (int) v;
        }
        *ret = b;
        return 0;
}

struct boot {
        sd_id128_t machine, id;
        uint64_t first;                 /* realtime of its first entry */
};

static int boot_cmp(const void *a, const void *b) {
        const struct boot *x = a, *y = b;
        int c = memcmp(x->machine.bytes, y->machine.bytes, sizeof(x->machine.bytes));

        if (c != 0)
                return c;
        if (x->first != y->first)
                return x->first < y->first ? -1 : 1;
        return memcmp(x->id.bytes, y->id.bytes, sizeof(x->id.bytes));
}

/* Where a boot begins, and on which machine. 0 if it has no entry (stale field data). */
static int boot_locate(sd_journal *j, struct boot *b) {
        char m[sizeof("_BOOT_ID=") + SD_ID128_STRING_MAX], id[SD_ID128_STRING_MAX];
        const void *d;
        size_t l;
        int r;

        sd_journal_flush_matches(j);
        snprintf(m, sizeof(m), "_BOOT_ID=%s", sd_id128_to_string(b->id, id));
        r = sd_journal_add_match(j, m, 0);
        if (r >= 0)
                r = sd_journal_seek_head(j);
        if (r >= 0)
                r = sd_journal_next(j);
        if (r <= 0)
                return r;
        r = sd_journal_get_realtime_usec(j, &b->first);
        if (r < 0)
                return r;
        b->machine = SD_ID128_NULL;
        if (sd_journal_get_data(j, "_MACHINE_ID", &d, &l) >= 0 && l == strlen("_MACHINE_ID=") + 32) {
                memcpy(id, (const char *) d + strlen("_MACHINE_ID="), 32);
                id[32] = '\0';
                (void) sd_id128_from_string(id, &b->machine);
        }
        return 1;
}

/* Every boot in the journal, by machine and then time. */
static int list_boots(sd_journal *j, struct boot **ret, size_t *ret_n) {
        _cleanup_free_ struct boot *boots = NULL;
        size_t n = 0, a = 0;
        const void *d;
        size_t l;
        int r;

        r = sd_journal_query_unique(j, "_BOOT_ID");
        if (r < 0)
                return r;
        SD_JOURNAL_FOREACH_UNIQUE(j, d, l) {
                char id[SD_ID128_STRING_MAX];

                if (l != strlen("_BOOT_ID=") + 32)
                        continue;
                memcpy(id, (const char *) d + strlen("_BOOT_ID="), 32);
                id[32] = '\0';
                if (GROW(boots, a, n + 1) < 0)
                        return -ENOMEM;
                if (sd_id128_from_string(id, &boots[n].id) >= 0)
                        n++;
        }
        for (size_t i = 0; i < n; i++) {
                r = boot_locate(j, &boots[i]);
                if (r < 0)
                        return r;
                if (r == 0)
                        boots[i--] = boots[--n];
        }
        sd_journal_flush_matches(j);
        qsort(boots, n, sizeof(*boots), boot_cmp);
        *ret = TAKE_PTR(boots);
        *ret_n = n;
        return 0;
}

/* Of one machine's boots, in time order, the one spec names; SIZE_MAX if there is none. */
static size_t pick(const struct boot *boots, size_t n, const struct jr_boot_spec *spec) {
        long target;

        if (spec->have_id) {
                size_t k = 0;

                while (k < n && !sd_id128_equal(boots[k].id, spec->id))
                        k++;
                if (k == n)
                        return SIZE_MAX;
                target = (long) k + spec->offset;
        } else
                target = spec->offset > 0 ? spec->offset - 1 : (long) n - 1 + spec->offset;
        return target >= 0 && target < (long) n ? (size_t) target : SIZE_MAX;
}

int jr_select_boots(sd_journal *j, const struct jr_boot_spec *spec, bool local, sd_id128_t **ret, size_t *ret_n) {
        _cleanup_free_ struct boot *boots = NULL;
        _cleanup_free_ sd_id128_t *out = calloc(1, sizeof(sd_id128_t));
        size_t n, n_out = 0;
        int r;

        if (!out)
                return -ENOMEM;
        /* An ID alone, and the current boot of the local journal, need no list. */
        if ((spec->have_id && spec->offset == 0) || (local && !spec->have_id && spec->offset == 0)) {
                r = spec->have_id ? 0 : sd_id128_get_boot(&out[0]);
                if (r < 0)
                        return r;
                if (spec->have_id)
                        out[0] = spec->id;
                *ret = TAKE_PTR(out);
                *ret_n = 1;
                return 0;
        }
        r = list_boots(j, &boots, &n);
        if (r < 0)
                return r;
        free(out);
        out = calloc(n ?: 1, sizeof(sd_id128_t));
        if (!out)
                return -ENOMEM;
        for (size_t start = 0, end; start < n; start = end) {
                size_t k;

                for (end = start + 1; end < n && sd_id128_equal(boots[end].machine, boots[start].machine); end++)
                        ;
                k = pick(boots + start, end - start, spec);
                if (k != SIZE_MAX)
                        out[n_out++] = boots[start + k].id;
        }
        if (n_out == 0)
                return -ENODATA;
        *ret = TAKE_PTR(out);
        *ret_n = n_out;
        return 0;
}
