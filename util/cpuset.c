/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include "cpuset.h"
#include "util.h"

struct bitmask *cpuset_new(void) {
        return numa_bitmask_alloc(CPUSET_MAX);
}

void cpuset_freep(struct bitmask **m) {
        if (*m)
                numa_bitmask_free(*m);
}

bool cpuset_isset(const struct bitmask *m, unsigned cpu) {
        if (!m || cpu >= m->size)
                return false;
        return numa_bitmask_isbitset(m, cpu);
}

unsigned cpuset_count(const struct bitmask *m) {
        return m ? numa_bitmask_weight(m) : 0;
}

int cpuset_next(const struct bitmask *m, unsigned from) {
        if (!m)
                return -1;
        for (unsigned i = from; i < m->size; i++) {
                /* Skip empty words quickly. */
                if (i % (8 * sizeof(unsigned long)) == 0 &&
                    m->maskp[i / (8 * sizeof(unsigned long))] == 0) {
                        i += 8 * sizeof(unsigned long) - 1;
                        continue;
                }
                if (numa_bitmask_isbitset(m, i))
                        return (int) i;
        }
        return -1;
}

static int parse_cpu(const char **p, unsigned *ret) {
        unsigned long v = 0;
        const char *s = *p;

        if (!isdigit((unsigned char) *s))
                return -EINVAL;
        while (isdigit((unsigned char) *s)) {
                v = v * 10 + (unsigned long) (*s - '0');
                if (v >= CPUSET_MAX)
                        return -ERANGE;
                s++;
        }
        *p = s;
        *ret = (unsigned) v;
        return 0;
}

int cpulist_parse(const char *s, struct bitmask **ret) {
        _cleanup_cpuset_ struct bitmask *m = NULL;
        const char *p = s;
        int r;

        m = cpuset_new();
        if (!m)
                return -ENOMEM;

        while (isspace((unsigned char) *p))
                p++;
        /* Ranges separated by commas; only white space may follow the last one. */
        while (*p) {
                unsigned a, b;

                r = parse_cpu(&p, &a);
                if (r < 0)
                        return r;
                b = a;
                if (*p == '-') {
                        p++;
                        r = parse_cpu(&p, &b);
                        if (r < 0)
                                return r;
                        if (b < a)
                                return -EINVAL;
                }
                for (unsigned i = a; i <= b; i++)
                        numa_bitmask_setbit(m, i);
                /* Config files may say "0, 8": blanks around commas are fine. */
                p += strspn(p, " \t");
                if (*p != ',')
                        break;
                p++;
                p += strspn(p, " \t");
                if (!*p)
                        return -EINVAL;         /* trailing comma */
        }
        while (isspace((unsigned char) *p))
                p++;
        if (*p)
                return -EINVAL;
        *ret = TAKE_PTR(m);
        return 0;
}

int cpulist_format(const struct bitmask *m, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, allocated = 0;
        int cpu = cpuset_next(m, 0);

        buf = strdup("");
        if (!buf)
                return -ENOMEM;
        while (cpu >= 0) {
                int end = cpu, next;
                char part[32];
                int n;

                while ((next = cpuset_next(m, (unsigned) end + 1)) == end + 1)
                        end = next;
                if (end == cpu)
                        n = snprintf(part, sizeof(part), "%s%d", len ? "," : "", cpu);
                else
                        n = snprintf(part, sizeof(part), "%s%d-%d", len ? "," : "", cpu, end);
                if (GROW(buf, allocated, len + (size_t) n + 1) < 0)
                        return -ENOMEM;
                memcpy(buf + len, part, (size_t) n + 1);
                len += (size_t) n;
                cpu = next;
        }
        *ret = TAKE_PTR(buf);
        return 0;
}

int cpu_set_one(int cpu, cpu_set_t **ret, size_t *ret_size) {
        cpu_set_t *set;
        size_t size;

        if (cpu < 0)
                return -EINVAL;
        set = CPU_ALLOC((size_t) cpu + 1);
        if (!set)
                return -ENOMEM;
        size = CPU_ALLOC_SIZE((size_t) cpu + 1);
        CPU_ZERO_S(size, set);
        CPU_SET_S((size_t) cpu, size, set);
        *ret = set;
        *ret_size = size;
        return 0;
}
