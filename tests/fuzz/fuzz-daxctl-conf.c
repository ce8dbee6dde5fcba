/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daxctl.conf.d through libiniparser: the input is one file, or several
 * split at "\n%%%\n", in a scratch directory. Every claim must be one
 * daxctl acts on, and what --dry-run prints of them must be printable.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "pmem-daxctl-conf.h"
#include "pmem-decide.h"
#include "util.h"

static void check_conf(const struct daxctl_conf *c, const char *dir) {
        struct policy p = { .respect_daxctl = true, .pmem_zone = ZONE_MOVABLE, .default_zone = ZONE_MOVABLE };
        char *out = NULL;
        size_t len = 0;
        FILE *f;

        for (size_t i = 0; i < c->n_claims; i++) {
                const struct daxctl_claim *cl = &c->claims[i];
                size_t count = 0;

                FUZZ_ASSERT(cl->file && cl->section && cl->uuid && cl->mode);
                FUZZ_ASSERT(streq(cl->mode, "system-ram") || streq(cl->mode, "devdax"));
                for (const char *u = cl->uuid; *u; u++)
                        FUZZ_ASSERT(!isupper((unsigned char) *u));
                FUZZ_ASSERT(cl->online >= -1 && cl->online <= 1 && cl->movable >= -1 && cl->movable <= 1);
                FUZZ_ASSERT(pmem_daxctl_conf_find(c, cl->uuid, &count) && count >= 1);
        }
        for (size_t i = 0; i < c->n_ignored; i++)
                FUZZ_ASSERT(c->ignored[i]);

        /* What --dry-run shows of the files: escaped, one line each. */
        f = open_memstream(&out, &len);
        if (!f)
                return;
        FUZZ_ASSERT(pmem_print_decisions(NULL, &p, dir, f) == 0);
        FUZZ_ASSERT(fclose(f) == 0);
        fuzz_assert_printable(out, 1);
        free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size);
        char *parts[8], dir[256];
        size_t sizes[8], n;
        struct daxctl_conf conf = {};

        if (!text)
                return 0;
        snprintf(dir, sizeof(dir), "%s/daxctl.conf.d", fuzz_scratch_dir());
        fuzz_clear_dir(dir);
        n = fuzz_split(text, size, parts, sizes, 8);
        for (size_t i = 0; i < n; i++) {
                char name[32];

                snprintf(name, sizeof(name), "%02zu.conf", i);
                fuzz_write_file(dir, name, parts[i], sizes[i]);
        }
        FUZZ_ASSERT(pmem_daxctl_conf_load(dir, &conf) == 0);
        check_conf(&conf, dir);
        pmem_daxctl_conf_clear(&conf);
        free(text);
        return 0;
}
