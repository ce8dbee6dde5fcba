/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>
#if HAVE_INIPARSER_INIPARSER_H
#include <iniparser/iniparser.h>
#else
#include <iniparser.h>
#endif
#include "escape.h"
#include "pmem.h"
#include "pmem-daxctl-conf.h"
#include "util.h"

#define DAXCTL_SECTION "reconfigure-device"
/* Bounds on what is read: daxctl's own files are a few lines each. */
#define DAXCTL_CONF_MAX (1024 * 1024)
#define DAXCTL_CONF_FILES_MAX 1024

static void claim_done(struct daxctl_claim *c) {
        free(c->file);
        free(c->section);
        free(c->uuid);
        free(c->mode);
        *c = (struct daxctl_claim) { .online = -1, .movable = -1 };
}

void pmem_daxctl_conf_clear(struct daxctl_conf *c) {
        if (!c)
                return;
        for (size_t i = 0; i < c->n_claims; i++)
                claim_done(&c->claims[i]);
        free(c->claims);
        for (size_t i = 0; i < c->n_ignored; i++)
                free(c->ignored[i]);
        free(c->ignored);
        *c = (struct daxctl_conf) {};
}

static int conf_ignore(struct daxctl_conf *c, const char *fmt, ...) _printf_(2, 3);
static int conf_ignore(struct daxctl_conf *c, const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (GROW(c->ignored, c->allocated_ignored, c->n_ignored + 1) < 0) {
                free(s);
                return -ENOMEM;
        }
        c->ignored[c->n_ignored++] = s;
        return 0;
}

/* daxctl's reading of a boolean (conf_string_to_bool): the first letter decides; -1 when it is none of them. */
static int conf_bool(const char *s) {
        if (!s || !*s)
                return -1;
        if (strchr("tTyY1", s[0]))
                return 1;
        if (strchr("fFnN0", s[0]))
                return 0;
        return -1;
}

/*
 * iniparser reports errors through one process-wide callback, with no
 * userdata: this thread's last one is kept here, and only its line and
 * kind are used (the message would echo the file's text raw).
 */
struct ini_error {
        unsigned line;
        const char *what;
};
static _Thread_local struct ini_error ini_last_error;

static int ini_error_capture(const char *fmt, ...) {
        struct ini_error e = { .what = "cannot be parsed" };
        va_list ap;

        if (ini_last_error.what)
                return 0;       /* the first error is the one to show */
        va_start(ap, fmt);
        /* The formats are the same in iniparser 4.1 and 4.2: "... in %s (%d)...". */
        if (strstr(fmt, "%s (%d)")) {
                int line;

                (void) va_arg(ap, const char *);
                line = va_arg(ap, int);
                e.line = line > 0 ? (unsigned) line : 0;
                e.what = strstr(fmt, "too long") ? "line too long for iniparser (1023 bytes at most)" :
                                                   "syntax error";
        } else if (strstr(fmt, "memory"))
                e.what = "out of memory";
        va_end(ap);
        ini_last_error = e;
        return 0;
}

static void ini_error_setup(void) {
        iniparser_set_error_callback(ini_error_capture);
}

/* Only a regular file of at most DAXCTL_CONF_MAX, opened without blocking; returns the fd. */
static int open_conf_file(const char *path) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size > DAXCTL_CONF_MAX)
                return -EFBIG;
        return TAKE_FD(fd);
}

/* "reconfigure-device NAME" -> NAME, as daxctl matches it: the first word decides. */
static const char *reconfigure_section(const char *secname) {
        size_t n = strlen(DAXCTL_SECTION);

        secname += strspn(secname, " \t\n\r");
        if (strncmp(secname, DAXCTL_SECTION, n) != 0 || (secname[n] && !strchr(" \t\n\r", secname[n])))
                return NULL;
        return secname + n + strspn(secname + n, " \t\n\r");
}

static const char *section_value(dictionary *d, const char *secname, const char *key, char *buf, size_t size) {
        if ((size_t) snprintf(buf, size, "%s:%s", secname, key) >= size)
                return NULL;
        return iniparser_getstring(d, buf, NULL);
}

/* One [reconfigure-device NAME] section: a claim, or a note on why daxctl never acts on it. */
static int conf_section(dictionary *d, const char *secname, const char *label, struct daxctl_conf *c) {
        struct daxctl_claim claim = { .online = -1, .movable = -1 };
        const char *name = reconfigure_section(secname), *uuid, *mode, *online, *movable;
        size_t keylen = strlen(secname) + 32;
        _cleanup_free_ char *key = NULL;

        if (!name)
                return 0;
        key = malloc(keylen);
        if (!key)
                return -ENOMEM;
        uuid = section_value(d, secname, "nvdimm.uuid", key, keylen);
        if (!uuid)
                return conf_ignore(c, "%s: [%s %s] has no nvdimm.uuid: daxctl never matches it", label,
                                   DAXCTL_SECTION, name);
        for (const char *u = uuid; *u; u++)
                if (isupper((unsigned char) *u))
                        return conf_ignore(c, "%s: [%s %s] nvdimm.uuid %s has upper-case letters: daxctl "
                                           "compares it verbatim with the lower-case sysfs uuid and never matches",
                                           label, DAXCTL_SECTION, name, uuid);
        mode = section_value(d, secname, "mode", key, keylen);
        if (!mode || !(streq(mode, "system-ram") || streq(mode, "devdax")))
                return conf_ignore(c, "%s: [%s %s] mode = '%s' is not system-ram or devdax: daxctl fails on it",
                                   label, DAXCTL_SECTION, name, mode ?: "");
        online = section_value(d, secname, "online", key, keylen);
        movable = section_value(d, secname, "movable", key, keylen);

        claim.file = strdup(label);
        claim.section = strdup(name);
        claim.uuid = strdup(uuid);
        claim.mode = strdup(mode);
        claim.online = conf_bool(online);
        claim.movable = conf_bool(movable);
        if (!claim.file || !claim.section || !claim.uuid || !claim.mode ||
            GROW(c->claims, c->allocated_claims, c->n_claims + 1) < 0) {
                claim_done(&claim);
                return -ENOMEM;
        }
        c->claims[c->n_claims++] = claim;
        return 0;
}

static void dictionary_freep(dictionary **d) {
        if (*d)
                iniparser_freedict(*d);
}

/*
 * Parse one file with libiniparser, as daxctl does: a file iniparser
 * rejects is rejected whole (daxctl fails on it), and noted with the line
 * iniparser names.
 */
static int conf_parse_file(const char *path, const char *label, struct daxctl_conf *c) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        _cleanup_(dictionary_freep) dictionary *d = NULL;
        _cleanup_close_ int fd = -1;
        char fd_path[64];
        const char *load_path = path;
        int n, r;

        fd = open_conf_file(path);
        if (fd < 0)
                return conf_ignore(c, "%s: not read: %s", label,
                                   fd == -EBADFD ? "not a regular file" :
                                   fd == -EFBIG ? "larger than 1 MiB" : strerror(-fd));
        /* iniparser opens by name: the name of the file just checked, where /proc has it. */
        snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fd);
        if (access(fd_path, R_OK) == 0)
                load_path = fd_path;

        (void) pthread_once(&once, ini_error_setup);
        ini_last_error = (struct ini_error) {};
        errno = 0;
        d = iniparser_load(load_path);
        if (!d) {
                if (errno == ENOMEM || (ini_last_error.what && streq(ini_last_error.what, "out of memory")))
                        return -ENOMEM;
                if (ini_last_error.line > 0)
                        return conf_ignore(c, "%s:%u: %s: daxctl rejects the whole file", label,
                                           ini_last_error.line, ini_last_error.what);
                return conf_ignore(c, "%s: %s: daxctl rejects the whole file", label,
                                   ini_last_error.what ?: "cannot be parsed");
        }

        n = iniparser_getnsec(d);
        for (int i = 0; i < n; i++) {
                const char *secname = iniparser_getsecname(d, i);

                if (!secname)
                        continue;
                r = conf_section(d, secname, label, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* daxctl takes regular files named *.conf (not ".conf" itself), in alphabetical order. */
static int conf_filter(const struct dirent *de) {
        const char *ext = strrchr(de->d_name, '.');

        return de->d_type == DT_REG && ext && ext != de->d_name && streq(ext, ".conf");
}

int pmem_daxctl_conf_load(const char *dir, struct daxctl_conf *ret) {
        _cleanup_(pmem_daxctl_conf_clearp) struct daxctl_conf c = {};
        struct dirent **names = NULL;
        const char *dirbase;
        int n, r = 0;

        dirbase = strrchr(dir, '/');
        dirbase = dirbase && dirbase[1] ? dirbase + 1 : dir;
        n = scandir(dir, &names, conf_filter, alphasort);
        if (n < 0) {
                /* daxctl would not read it either; say so, but never fail over it. */
                if (errno == ENOMEM)
                        return -ENOMEM;
                if (errno != ENOENT && conf_ignore(&c, "%s: cannot read the directory: %s", dir, strerror(errno)) < 0)
                        return -ENOMEM;
                n = 0;
        }

        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL, *label = NULL, *shown = NULL;

                if (r >= 0 && i == DAXCTL_CONF_FILES_MAX)
                        r = conf_ignore(&c, "%s: %d more files not read (at most %d)", dir, n - i,
                                        DAXCTL_CONF_FILES_MAX);
                if (r >= 0 && i < DAXCTL_CONF_FILES_MAX) {
                        size_t size = 4 * (strlen(dirbase) + strlen(names[i]->d_name)) + 2;

                        /* The name goes into every message about the file: escaped once, here. */
                        if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0 ||
                            asprintf(&label, "%s/%s", dirbase, names[i]->d_name) < 0 || !(shown = malloc(size)))
                                r = -ENOMEM;
                        else {
                                escape_text(shown, size, label);
                                r = conf_parse_file(path, shown, &c);
                        }
                }
                free(names[i]);
        }
        free(names);
        if (r < 0)
                return r;

        pmem_daxctl_conf_clear(ret);
        *ret = c;
        c = (struct daxctl_conf) {};
        return 0;
}

const struct daxctl_claim *pmem_daxctl_conf_find(const struct daxctl_conf *c, const char *uuid, size_t *ret_count) {
        const struct daxctl_claim *first = NULL;
        size_t count = 0;

        if (c && uuid)
                for (size_t i = 0; i < c->n_claims; i++)
                        if (streq(c->claims[i].uuid, uuid)) {
                                if (!first)
                                        first = &c->claims[i];
                                count++;
                        }
        if (ret_count)
                *ret_count = count;
        return first;
}
