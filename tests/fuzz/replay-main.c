/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replays inputs through a harness without libFuzzer, so any compiler
 * (and the sanitizers configure was given) runs the committed corpus in
 * make check: replay-NAME FILE|DIR...
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"

static int replay_file(const char *path) {
        uint8_t *buf = NULL;
        size_t size = 0, allocated = 0;
        FILE *f = fopen(path, "re");

        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -1;
        }
        for (;;) {
                size_t n;

                if (allocated - size < 4096) {
                        uint8_t *p = realloc(buf, allocated + 65536);

                        if (!p) {
                                fclose(f);
                                free(buf);
                                return -1;
                        }
                        buf = p;
                        allocated += 65536;
                }
                n = fread(buf + size, 1, allocated - size, f);
                size += n;
                if (n == 0)
                        break;
        }
        fclose(f);
        (void) LLVMFuzzerTestOneInput(buf, size);
        free(buf);
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Every regular file of dir, in name order: a replay that fails shows the same file each time. */
static int replay_dir(const char *dir, unsigned *count) {
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *d = opendir(dir);
        int r = 0;

        if (!d) {
                fprintf(stderr, "%s: %s\n", dir, strerror(errno));
                return -1;
        }
        while ((de = readdir(d))) {
                char **p;

                if (de->d_name[0] == '.')
                        continue;
                p = realloc(names, (n + 1) * sizeof(*names));
                if (!p || !(p[n] = malloc(strlen(dir) + strlen(de->d_name) + 2))) {
                        free(p ? p : names);
                        closedir(d);
                        return -1;
                }
                names = p;
                sprintf(names[n++], "%s/%s", dir, de->d_name);
        }
        closedir(d);
        if (n > 1)
                qsort(names, n, sizeof(*names), cmp_str);
        for (size_t i = 0; i < n; i++) {
                if (r == 0 && replay_file(names[i]) < 0)
                        r = -1;
                else if (r == 0)
                        (*count)++;
                free(names[i]);
        }
        free(names);
        return r;
}

int main(int argc, char **argv) {
        unsigned count = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return EXIT_FAILURE;
                }
                if (S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) < 0 : replay_file(argv[i]) < 0)
                        return EXIT_FAILURE;
                if (!S_ISDIR(st.st_mode))
                        count++;
        }
        printf("replayed %u inputs\n", count);
        return EXIT_SUCCESS;
}
