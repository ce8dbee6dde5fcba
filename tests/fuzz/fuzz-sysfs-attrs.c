/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parsers of sysfs attributes and names: the first byte picks one,
 * the rest is the attribute. Each must refuse or give a value within its
 * bounds, and what it prints must read back the same.
 */
#include <stdlib.h>
#include <string.h>
#include "blocks.h"
#include "cpuset.h"
#include "escape.h"
#include "fuzz.h"
#include "pmem-memmap.h"
#include "pmem-nd.h"
#include "topology.h"
#include "util.h"

/* A cpulist: formatted back, it parses to the same set. */
static void fuzz_cpulist(const char *s) {
        _cleanup_cpuset_ struct bitmask *m = NULL, *again = NULL;
        _cleanup_free_ char *out = NULL;

        if (cpulist_parse(s, &m) < 0) {
                FUZZ_ASSERT(!m);
                return;
        }
        FUZZ_ASSERT(cpulist_format(m, &out) == 0);
        FUZZ_ASSERT(strspn(out, "0123456789,-") == strlen(out));
        FUZZ_ASSERT(cpulist_parse(out, &again) == 0);
        FUZZ_ASSERT(numa_bitmask_equal(m, again));
        FUZZ_ASSERT(cpuset_count(m) <= CPUSET_MAX);
}

static void fuzz_distance(const char *s) {
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0;

        if (topology_parse_distance(s, &v, &n) < 0)
                return;
        FUZZ_ASSERT(n <= NODE_ID_MAX + 1);
        FUZZ_ASSERT(n == 0 || v);
}

static void fuzz_ids(const char *s) {
        uint64_t v = 0;
        int node = -7;

        if (parse_node_id(s, &node) >= 0)
                FUZZ_ASSERT(node >= 0 && node <= NODE_ID_MAX);
        else
                FUZZ_ASSERT(node == -7);
        /* One 0x at most: "0x0x10" is no number. */
        if (parse_u64(s, 16, &v) >= 0 && strlen(s) > 2)
                FUZZ_ASSERT(!strchr(s + 2, 'x') && !strchr(s + 2, 'X'));
        if (block_id_from_name(s, &v) >= 0) {
                uint64_t start;

                FUZZ_ASSERT(strncmp(s, "memory", 6) == 0);
                if (block_phys_start(v, UINT64_C(1) << 27, &start) >= 0)
                        FUZZ_ASSERT(start / (UINT64_C(1) << 27) == v && start <= UINT64_MAX - (UINT64_C(1) << 27));
        }
        if (parse_prefixed_id(s, "node", &v) >= 0)
                FUZZ_ASSERT(strncmp(s, "node", 4) == 0);
        /* a namespace's mode: one of the kernel's four words, else unknown; always a name for ndctl's column */
        if (nd_mode_from_kernel(s) != ND_MODE_UNKNOWN)
                FUZZ_ASSERT(strlen(s) >= 3 && strlen(s) <= 6 && strspn(s, "adefilmorswxy") == strlen(s));
        FUZZ_ASSERT(*nd_mode_to_string(nd_mode_from_kernel(s)) != '\0');
}

/* memmap_on_memory: the parameter (Y, N, force) and a dax device's attribute (0, 1). */
static void fuzz_memmap(const char *s) {
        enum pmem_memmap_global g = pmem_memmap_parse_global(s);
        int v = -7;

        FUZZ_ASSERT(g == PMEM_MEMMAP_GLOBAL_ON || g == PMEM_MEMMAP_GLOBAL_OFF || g == PMEM_MEMMAP_GLOBAL_UNKNOWN);
        if (g != PMEM_MEMMAP_GLOBAL_UNKNOWN)
                FUZZ_ASSERT(strlen(s) == 1 || strlen(s) == 5);
        if (pmem_memmap_parse_attr(s, &v) >= 0)
                FUZZ_ASSERT(strlen(s) == 1 && v == s[0] - '0' && (v == 0 || v == 1));
        else
                FUZZ_ASSERT(v == -7);
}

/* Every escaping style: nothing unsafe passes raw; ASCII only when asked; JSON and XML quote their specials. */
static void fuzz_escape(const char *s, size_t size) {
        static const enum escape_style styles[] = { ESCAPE_TERMINAL, ESCAPE_TERMINAL_ASCII, ESCAPE_XML, ESCAPE_JSON,
                                                    ESCAPE_JSON_TEXT };
        char buf[256];
        size_t len = escape_text(buf, size % sizeof(buf) + 1, s);

        FUZZ_ASSERT(len == strlen(buf) && len <= size % sizeof(buf));
        fuzz_assert_printable(buf, 0);
        for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++) {
                char *out = NULL;
                size_t n = 0;
                FILE *f = open_memstream(&out, &n);

                if (!f)
                        return;
                escape_write(f, styles[i], s, strlen(s));
                if (fclose(f) != 0 || !out)
                        return;
                FUZZ_ASSERT(strlen(out) == n);
                /* JSON text's ASCII is its writer's, escaped already: look only at the rest */
                if (styles[i] == ESCAPE_JSON_TEXT)
                        for (char *c = out; *c; c++)
                                if ((unsigned char) *c < 0x20)
                                        *c = ' ';
                fuzz_assert_printable(out, 0);
                for (const char *c = out; *c; c++) {
                        if (styles[i] == ESCAPE_TERMINAL_ASCII)
                                FUZZ_ASSERT((unsigned char) *c < 0x80);
                        if (styles[i] == ESCAPE_XML)
                                FUZZ_ASSERT(*c != '<' && *c != '>' && *c != '"' && *c != '\'');
                        /* every backslash starts an escape and no quote is bare: the string cannot end early */
                        if (styles[i] == ESCAPE_JSON && *c == '\\') {
                                FUZZ_ASSERT(c[1] && strchr("\"\\nrtu", c[1]));
                                c++;
                        } else if (styles[i] == ESCAPE_JSON)
                                FUZZ_ASSERT(*c != '"');
                }
                free(out);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s;

        if (size == 0)
                return 0;
        s = fuzz_strndup(data + 1, size - 1);
        if (!s)
                return 0;
        switch (data[0] % 6) {
        case 0:
                fuzz_cpulist(s);
                break;
        case 1:
                fuzz_distance(s);
                break;
        case 2:
                FUZZ_ASSERT((block_valid_zones_parse(s) & ~(unsigned) (VALID_NORMAL | VALID_MOVABLE)) == 0);
                break;
        case 3:
                fuzz_ids(s);
                break;
        case 4:
                fuzz_memmap(s);
                break;
        default:
                fuzz_escape(s, size);
                break;
        }
        free(s);
        return 0;
}
