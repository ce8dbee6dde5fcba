/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/stat.h>
#include <systemd/sd-id128.h>
#include "journal-report-read.h"
#include "util.h"

/*
 * sd-journal skips the files it cannot open and says nothing, so an
 * unreadable journal would look empty. Try each file the query names,
 * as journalctl does, to tell "no records" from "could not read".
 */

static bool is_journal_name(const char *name) {
        size_t n = strlen(name);

        return (n > 8 && streq(name + n - 8, ".journal")) || (n > 9 && streq(name + n - 9, ".journal~"));
}

static bool is_id128(const char *name) {
        sd_id128_t id;

        return strlen(name) == 32 && sd_id128_from_string(name, &id) >= 0;
}

static int note_file(struct jr_files *f, const char *path, bool keep) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        char *copy;

        if (fd < 0) {
                int err = errno;

                if (err == EACCES || err == EPERM)
                        f->n_denied++;
                else
                        f->n_failed++;
                if (!f->first_bad) {
                        f->first_bad = strdup(path);
                        f->first_error = -err;
                        if (!f->first_bad)
                                return -ENOMEM;
                }
                return 0;
        }
        if (keep) {
                if (GROW(f->readable, f->a_readable, f->n_readable + 2) < 0)
                        return -ENOMEM;
                copy = strdup(path);
                if (!copy)
                        return -ENOMEM;
                f->readable[f->n_readable] = copy;
                f->readable[f->n_readable + 1] = NULL;
        }
        f->n_readable++;
        return 0;
}

/* The journal files in dir (and with subdirs, in its machine-ID directories); only those whose name starts with prefix. */
static int scan_dir(struct jr_files *f, const char *dir, const char *prefix, bool subdirs) {
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;
        int r;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                _cleanup_free_ char *path = NULL;

                if (de->d_name[0] == '.' || (prefix && !startswith(de->d_name, prefix)))
                        continue;
                if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
                        return -ENOMEM;
                if (subdirs && is_id128(de->d_name) && (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN)) {
                        r = scan_dir(f, path, prefix, false);
                        if (r < 0 && r != -ENOTDIR) {
                                f->n_failed++;
                                if (r == -ENOMEM)
                                        return r;
                        }
                        continue;
                }
                if (!is_journal_name(de->d_name))
                        continue;
                r = note_file(f, path, false);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The local system journal: system*.journal of this machine in /run and /var. */
static int scan_system(struct jr_files *f) {
        static const char *const roots[] = { "/run/log/journal", "/var/log/journal" };
        char id[SD_ID128_STRING_MAX];
        sd_id128_t machine;
        int r;

        r = sd_id128_get_machine(&machine);
        if (r < 0)
                return r;
        sd_id128_to_string(machine, id);
        for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
                _cleanup_free_ char *dir = NULL;

                if (asprintf(&dir, "%s/%s", roots[i], id) < 0)
                        return -ENOMEM;
                r = scan_dir(f, dir, "system", false);
                if (r == -ENOENT)
                        continue;
                if (r == -EACCES || r == -EPERM)
                        f->n_denied++;
                else if (r < 0)
                        return r;
        }
        return 0;
}

int jr_files_check(const struct jr_query *q, struct jr_files *ret) {
        struct jr_files f = {};
        int r = 0;

        if (q->files && q->files[0])
                for (size_t i = 0; q->files[i] && r >= 0; i++)
                        r = note_file(&f, q->files[i], true);
        else if (q->directory)
                r = scan_dir(&f, q->directory, NULL, true);
        else
                r = scan_system(&f);
        if (r < 0) {
                jr_files_done(&f);
                return r;
        }
        *ret = f;
        return 0;
}

void jr_files_done(struct jr_files *f) {
        for (size_t i = 0; i < f->n_readable && f->readable; i++)
                free(f->readable[i]);
        free(f->readable);
        free(f->first_bad);
        *f = (struct jr_files) {};
}
