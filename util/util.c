/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <strings.h>
#include <limits.h>
#include <time.h>
#include "util.h"

uint64_t now_nsec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

uint64_t now_usec(void) {
        return now_nsec() / NSEC_PER_USEC;
}

int parse_u64(const char *s, int base, uint64_t *ret) {
        unsigned long long v;
        char *end;

        if (!s || !*s || isspace((unsigned char) *s) || *s == '-' || *s == '+')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, base);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || end == s || *end != '\0')
                return -EINVAL;
        *ret = (uint64_t) v;
        return 0;
}

int parse_unsigned(const char *s, unsigned *ret) {
        uint64_t v;
        int r;

        r = parse_u64(s, 10, &v);
        if (r < 0)
                return r;
        if (v > UINT_MAX)
                return -ERANGE;
        *ret = (unsigned) v;
        return 0;
}

int parse_bool(const char *s, bool *ret) {
        static const char *const yes[] = { "1", "yes", "true", "on" };
        static const char *const no[] = { "0", "no", "false", "off" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}

char *strstrip(char *s) {
        char *e;

        while (isspace((unsigned char) *s))
                s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char) e[-1]))
                *--e = '\0';
        return s;
}

int grow_array(void **array, size_t *allocated, size_t need, size_t sz) {
        size_t n;
        void *p;

        if (need <= *allocated)
                return 0;
        n = *allocated ? *allocated * 2 : 16;
        if (n < need)
                n = need;
        if (n > SIZE_MAX / sz)
                return -ENOMEM;
        p = realloc(*array, n * sz);
        if (!p)
                return -ENOMEM;
        memset((char *) p + *allocated * sz, 0, (n - *allocated) * sz);
        *array = p;
        *allocated = n;
        return 0;
}

int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return (x > y) - (x < y);
}

void sort_unless_sorted(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
        const char *p = base;

        for (size_t i = 1; i < n; i++)
                if (cmp(p + (i - 1) * size, p + i * size) > 0) {
                        qsort(base, n, size, cmp);
                        return;
                }
}
