/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy parser: the text as one file (policy_load_buffer()), or,
 * when it holds "\n%%%\n", as a main file and drop-ins on disk
 * (policy_load()). A policy that loads must be whole and within its
 * bounds; a refusal must name a place and say why in printable text.
 */
#include <stdlib.h>
#include <string.h>
#include "cpuset.h"
#include "fuzz.h"
#include "policy.h"
#include "util.h"

static void check_policy(const struct policy *p) {
        FUZZ_ASSERT(p->settle_ms >= 1 && p->settle_ms <= p->max_wait_ms);
        FUZZ_ASSERT(p->retry_backoff_ms <= p->retry_backoff_max_ms);
        FUZZ_ASSERT(p->max_concurrent_writes >= 1 && p->max_concurrent_writes <= 64);
        FUZZ_ASSERT(p->banned_cpus);
        FUZZ_ASSERT(p->n_files >= 1);
        for (size_t i = 0; i < p->n_nodes; i++) {
                FUZZ_ASSERT(p->nodes[i].node >= 0 && p->nodes[i].node <= NODE_ID_MAX);
                FUZZ_ASSERT(p->nodes[i].zone != ZONE_UNSET || p->nodes[i].has_workers);
                FUZZ_ASSERT(p->nodes[i].file && p->nodes[i].line > 0);
                for (size_t k = 0; k < i; k++)
                        FUZZ_ASSERT(p->nodes[k].node != p->nodes[i].node);
        }
        for (size_t i = 0; i < p->n_ranges; i++) {
                const struct range_rule *r = &p->ranges[i];

                FUZZ_ASSERT(r->start < r->end && r->zone != ZONE_UNSET && r->file);
                for (size_t k = 0; k < i; k++)
                        FUZZ_ASSERT(r->end <= p->ranges[k].start || p->ranges[k].end <= r->start);
        }
        for (size_t i = 0; i < p->n_devices; i++) {
                FUZZ_ASSERT(p->devices[i].name && p->devices[i].file);
                FUZZ_ASSERT(p->devices[i].zone != ZONE_UNSET || p->devices[i].convert >= 0);
                FUZZ_ASSERT(p->devices[i].target_node >= -1 && p->devices[i].target_node <= NODE_ID_MAX);
        }
        for (size_t i = 0; i < p->n_exclusions; i++) {
                const struct exclusion *e = &p->exclusions[i];

                FUZZ_ASSERT(e->file && e->line > 0);
                if (e->kind == EXCLUDE_NODE)
                        FUZZ_ASSERT(e->node >= 0 && e->node <= NODE_ID_MAX);
                if (e->kind == EXCLUDE_RANGE || e->kind == EXCLUDE_BLOCK)
                        FUZZ_ASSERT(e->start < e->end);
                if (e->kind == EXCLUDE_DEVICE)
                        FUZZ_ASSERT(e->device);
        }
        for (unsigned node = 0; node < 4; node++)
                FUZZ_ASSERT(policy_workers_for_node(p, (int) node, 8) >= 1);
}

static void check_result(int r, struct policy *p, const struct policy_error *err) {
        if (r >= 0) {
                FUZZ_ASSERT(p);
                check_policy(p);
                policy_unref(p);
                return;
        }
        FUZZ_ASSERT(!p);
        FUZZ_ASSERT(err->reason[0]);
        fuzz_assert_printable(err->file, 0);
        fuzz_assert_printable(err->reason, 0);
}

/* Main file and drop-ins; the last part may name none (a missing main file) when it is empty. */
static void load_files(char **parts, const size_t *sizes, size_t n) {
        const char *dir = fuzz_scratch_dir();
        char main_conf[256], dropins[256];
        struct policy_error err = {};
        struct policy *p = NULL;
        int r;

        fuzz_clear_dir(dir);
        snprintf(main_conf, sizeof(main_conf), "%s/m.conf", dir);
        snprintf(dropins, sizeof(dropins), "%s/m.conf.d", dir);
        if (sizes[0] > 0)
                fuzz_write_file(dir, "m.conf", parts[0], sizes[0]);
        for (size_t i = 1; i < n; i++) {
                char name[32];

                snprintf(name, sizeof(name), "%02zu.conf", i);
                fuzz_write_file(dropins, name, parts[i], sizes[i]);
        }
        r = policy_load(main_conf, &p, &err);
        check_result(r, p, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size);
        char *parts[8];
        size_t sizes[8], n;
        struct policy_error err = {};
        struct policy *p = NULL;
        int r;

        if (!text)
                return 0;
        n = fuzz_split(text, size, parts, sizes, 8);
        if (n > 1)
                load_files(parts, sizes, n);
        else {
                r = policy_load_buffer("fuzz.conf", text, size, &p, &err);
                check_result(r, p, &err);
        }
        free(text);
        return 0;
}
