/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include "format.h"
#include "util.h"

const char *format_fixed(char *buf, size_t size, double v, unsigned decimals) {
        uint64_t scale = 1, x;
        bool neg = v < 0;

        for (unsigned i = 0; i < decimals; i++)
                scale *= 10;
        if (v != v)             /* NaN */
                v = 0;
        if (neg)
                v = -v;
        if (v > 1e15)
                v = 1e15;
        x = (uint64_t) (v * (double) scale + 0.5);
        if (decimals == 0)
                snprintf(buf, size, "%s%" PRIu64, neg && x ? "-" : "", x);
        else
                snprintf(buf, size, "%s%" PRIu64 ".%0*" PRIu64, neg && x ? "-" : "", x / scale,
                         (int) decimals, x % scale);
        return buf;
}

const char *format_size_iec(char *buf, size_t size, uint64_t bytes) {
        static const char suffix[] = "KMGTPE";
        uint64_t unit = 1024, whole, tenths;
        unsigned e = 0;

        if (bytes < 1024) {
                snprintf(buf, size, "%" PRIu64 "B", bytes);
                return buf;
        }
        while (e + 1 < sizeof(suffix) - 1 && bytes / unit >= 1024) {
                unit *= 1024;
                e++;
        }
        whole = bytes / unit;
        /* the remainder in tenths, rounded; no product overflows: remainder < unit <= 2^60 */
        tenths = (uint64_t) (((double) (bytes % unit) / (double) unit) * 10 + 0.5);
        if (tenths == 10) {
                whole++;
                tenths = 0;
        }
        if (tenths == 0)
                snprintf(buf, size, "%" PRIu64 "%c", whole, suffix[e]);
        else
                snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "%c", whole, tenths, suffix[e]);
        return buf;
}

void format_time_local(char *buf, size_t size, uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                snprintf(buf, size, "@%" PRIu64, (uint64_t) (usec / USEC_PER_SEC));
}

void format_time_iso_utc(char *buf, size_t size, uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        char s[40];
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                snprintf(s, sizeof(s), "1970-01-01T00:00:00");
        snprintf(buf, size, "%.24s.%06" PRIu64 "Z", s, (uint64_t) (usec % USEC_PER_SEC));
}
