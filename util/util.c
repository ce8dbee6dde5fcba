/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <strings.h>
#include <limits.h>
#include <sys/resource.h>
#include <time.h>
#include "util.h"

static uint64_t now_nsec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

uint64_t now_usec(void) {
        return now_nsec() / NSEC_PER_USEC;
}

uint64_t realtime_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

uint64_t cpu_time_usec(void) {
        struct rusage ru;

        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return 0;
        return (uint64_t) ru.ru_utime.tv_sec * USEC_PER_SEC + (uint64_t) ru.ru_utime.tv_usec +
               (uint64_t) ru.ru_stime.tv_sec * USEC_PER_SEC + (uint64_t) ru.ru_stime.tv_usec;
}

uint64_t thread_cpu_usec(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
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

int parse_node_id(const char *s, int *ret) {
        uint64_t v;
        int r;

        r = parse_u64(s, 10, &v);
        if (r < 0)
                return r;
        if (v > NODE_ID_MAX)
                return -ERANGE;
        *ret = (int) v;
        return 0;
}

int parse_prefixed_id(const char *name, const char *prefix, uint64_t *ret) {
        size_t n;

        if (!name || !prefix)
                return -EINVAL;
        n = strlen(prefix);
        /* parse_u64() refuses signs and blanks; "memory" alone has no digit at all. */
        if (strncmp(name, prefix, n) != 0 || !isdigit((unsigned char) name[n]))
                return -EINVAL;
        /* The kernel writes ids one way only: "memory065" is not memory65's name. */
        if (name[n] == '0' && name[n + 1] != '\0')
                return -EINVAL;
        return parse_u64(name + n, 10, ret);
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

bool strlist_contains(const char *list, const char *item) {
        size_t len;

        if (!list || !item || !*item)
                return false;
        len = strlen(item);
        for (const char *p = list; p; ) {
                const char *comma = strchr(p, ',');
                size_t n = comma ? (size_t) (comma - p) : strlen(p);

                if (n == len && strncmp(p, item, len) == 0)
                        return true;
                p = comma ? comma + 1 : NULL;
        }
        return false;
}

int strlist_add_unique(char **list, const char *item) {
        char *n;

        if (!item || !*item || strlist_contains(*list, item))
                return 0;
        if (asprintf(&n, "%s%s%s", *list ?: "", *list ? "," : "", item) < 0)
                return -ENOMEM;
        free(*list);
        *list = n;
        return 0;
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

static void insertion_sort_u64(uint64_t *v, size_t n) {
        for (size_t i = 1; i < n; i++) {
                uint64_t x = v[i];
                size_t j = i;

                for (; j > 0 && v[j - 1] > x; j--)
                        v[j] = v[j - 1];
                v[j] = x;
        }
}

/*
 * LSD radix sort, one byte per pass. Passes over a byte that is the same in
 * every value are skipped: block ids and latencies need two or three.
 * qsort() through a comparator cost more than the writes it sorted for.
 */
void sort_u64(uint64_t *v, size_t n) {
        size_t (*count)[256];
        uint64_t *tmp, *src = v, *dst;
        size_t i;

        for (i = 1; i < n && v[i - 1] <= v[i]; i++)
                ;
        if (i >= n)
                return;
        if (n < 64) {
                insertion_sort_u64(v, n);
                return;
        }
        tmp = malloc(n * sizeof(*tmp));
        count = calloc(8, sizeof(*count));
        if (!tmp || !count) {
                free(tmp);
                free(count);
                qsort(v, n, sizeof(*v), cmp_u64);
                return;
        }
        for (i = 0; i < n; i++)
                for (unsigned d = 0; d < 8; d++)
                        count[d][(v[i] >> (8 * d)) & 0xff]++;
        dst = tmp;
        for (unsigned d = 0; d < 8; d++) {
                uint64_t *swap;
                size_t sum = 0;

                if (count[d][(v[0] >> (8 * d)) & 0xff] == n)
                        continue;       /* this byte is the same everywhere */
                for (unsigned b = 0; b < 256; b++) {
                        size_t c = count[d][b];

                        count[d][b] = sum;
                        sum += c;
                }
                for (i = 0; i < n; i++)
                        dst[count[d][(src[i] >> (8 * d)) & 0xff]++] = src[i];
                swap = src;
                src = dst;
                dst = swap;
        }
        if (src != v)
                memcpy(v, src, n * sizeof(*v));
        free(tmp);
        free(count);
}

void *bsearch_safe(const void *key, const void *base, size_t n, size_t size,
                   int (*cmp)(const void *key, const void *element)) {
        if (n == 0)
                return NULL;
        return bsearch(key, base, n, size, cmp);
}

size_t upper_bound(const void *key, const void *base, size_t n, size_t size,
                   int (*cmp)(const void *key, const void *element)) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (cmp(key, (const char *) base + mid * size) >= 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

uint64_t percentile_usec(const uint64_t *sorted, size_t n, unsigned pct) {
        size_t rank;

        if (!sorted || n == 0)
                return 0;
        if (pct >= 100)
                return sorted[n - 1];
        /* Nearest rank: ceil(pct/100 * n), 1-based; pct 0 is the minimum. */
        rank = ((size_t) pct * n + 99) / 100;
        if (rank == 0)
                rank = 1;
        return sorted[rank - 1];
}

size_t format_u64(char *buf, uint64_t v) {
        char digits[20];
        size_t n = 0;

        do {
                digits[n++] = (char) ('0' + v % 10);
                v /= 10;
        } while (v > 0);
        for (size_t i = 0; i < n; i++)
                buf[i] = digits[n - 1 - i];
        buf[n] = 0;
        return n;
}

char **argv_named(int argc, char **argv, const char *name) {
        char **copy = calloc((size_t) argc + 1, sizeof(char *));

        if (!copy)
                return NULL;
        if (argc > 0)
                memcpy(copy, argv, (size_t) argc * sizeof(char *));
        copy[0] = (char *) name;
        return copy;
}
