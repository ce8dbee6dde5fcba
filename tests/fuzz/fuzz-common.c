/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "escape.h"
#include "fuzz.h"

void fuzz_fail(const char *file, int line, const char *what) {
        fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
        abort();
}

char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                return NULL;
        if (size > 0)
                memcpy(s, data, size);
        s[size] = '\0';
        return s;
}

size_t fuzz_split(char *text, size_t size, char **parts, size_t *sizes, size_t max) {
        static const char sep[] = "\n%%%\n";
        char *p = text, *end = text + size;
        size_t n = 0;

        while (n < max) {
                char *hit = n + 1 < max ? memmem(p, (size_t) (end - p), sep, sizeof(sep) - 1) : NULL;

                parts[n] = p;
                sizes[n] = hit ? (size_t) (hit - p) : (size_t) (end - p);
                n++;
                if (!hit)
                        break;
                p = hit + sizeof(sep) - 1;
        }
        return n;
}

static char scratch[64];

static void remove_scratch(void) {
        fuzz_clear_dir(scratch);
        (void) rmdir(scratch);
}

const char *fuzz_scratch_dir(void) {
        if (!scratch[0]) {
                const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

                snprintf(scratch, sizeof(scratch), "%s/memonlined-fuzz-%ld", base, (long) getpid());
                if (mkdir(scratch, 0700) < 0 && errno != EEXIST)
                        fuzz_fail(__FILE__, __LINE__, "mkdir scratch dir");
                /* Gone when the run ends; a crash leaves it, next to its finding. */
                atexit(remove_scratch);
        }
        return scratch;
}

void fuzz_write_file(const char *dir, const char *name, const char *data, size_t size) {
        char path[512];
        FILE *f;

        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                fuzz_fail(__FILE__, __LINE__, "mkdir");
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        /* 0600 whatever the umask: memonlined refuses a policy that group or others may write */
        if (!f || fchmod(fileno(f), 0600) < 0 || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
                fuzz_fail(__FILE__, __LINE__, "write file");
}

void fuzz_clear_dir(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                char path[512];

                if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (unlink(path) < 0 && errno == EISDIR) {
                        fuzz_clear_dir(path);
                        (void) rmdir(path);
                }
        }
        closedir(d);
}

void fuzz_assert_printable(const char *s, int allow_newlines) {
        size_t n = strlen(s);

        for (size_t i = 0; i < n; ) {
                uint32_t cp = 0;
                size_t l = utf8_decode(s + i, n - i, &cp);

                if (l == 0)
                        fuzz_fail(__FILE__, __LINE__, "invalid UTF-8 in output");
                if (unicode_is_unsafe(cp) && !(allow_newlines && cp == '\n'))
                        fuzz_fail(__FILE__, __LINE__, "unescaped control, bidi control or separator in output");
                i += l;
        }
}
