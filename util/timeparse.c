/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "timeparse.h"
#include "timezone.h"
#include "util.h"

#define USEC_PER_MINUTE (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MINUTE)
#define USEC_PER_DAY (24 * USEC_PER_HOUR)

static const struct {
        const char *name;
        uint64_t usec;
} span_units[] = {
        { "us", 1 }, { "usec", 1 }, { "\xc2\xb5s", 1 }, { "\xce\xbcs", 1 },
        { "ms", USEC_PER_MSEC }, { "msec", USEC_PER_MSEC },
        { "s", USEC_PER_SEC }, { "sec", USEC_PER_SEC }, { "second", USEC_PER_SEC }, { "seconds", USEC_PER_SEC },
        { "m", USEC_PER_MINUTE }, { "min", USEC_PER_MINUTE }, { "minute", USEC_PER_MINUTE },
        { "minutes", USEC_PER_MINUTE },
        { "h", USEC_PER_HOUR }, { "hr", USEC_PER_HOUR }, { "hour", USEC_PER_HOUR }, { "hours", USEC_PER_HOUR },
        { "d", USEC_PER_DAY }, { "day", USEC_PER_DAY }, { "days", USEC_PER_DAY },
        { "w", 7 * USEC_PER_DAY }, { "week", 7 * USEC_PER_DAY }, { "weeks", 7 * USEC_PER_DAY },
        { "M", 2629800 * USEC_PER_SEC }, { "month", 2629800 * USEC_PER_SEC }, { "months", 2629800 * USEC_PER_SEC },
        { "y", 31557600 * USEC_PER_SEC }, { "year", 31557600 * USEC_PER_SEC }, { "years", 31557600 * USEC_PER_SEC },
};

static bool is_unit_byte(char c) {
        return isalpha((unsigned char) c) || (unsigned char) c >= 0x80;
}

/* The unit word at *p (empty: seconds), advancing past it. */
static int span_unit(const char **p, uint64_t *ret) {
        const char *s = *p;
        size_t n = 0;

        while (is_unit_byte(s[n]))
                n++;
        if (n == 0) {
                *ret = USEC_PER_SEC;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(span_units); i++)
                if (strlen(span_units[i].name) == n && memcmp(span_units[i].name, s, n) == 0) {
                        *ret = span_units[i].usec;
                        *p = s + n;
                        return 0;
                }
        return -EINVAL;
}

/* Digits at *p as a number, at most 18 of them; -EINVAL when there are none. */
static int digits(const char **p, uint64_t *ret, unsigned *ret_count) {
        uint64_t v = 0;
        unsigned n = 0;

        for (; isdigit((unsigned char) **p); (*p)++, n++) {
                if (n >= 18)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (**p - '0');
        }
        if (n == 0)
                return -EINVAL;
        *ret = v;
        if (ret_count)
                *ret_count = n;
        return 0;
}

/* "N[.F][ ]UNIT" at *p: N.F times the unit. */
static int span_part(const char **p, uint64_t *ret) {
        uint64_t whole, frac = 0, unit, f = 0;
        unsigned frac_digits = 0;
        int r;

        r = digits(p, &whole, NULL);
        if (r < 0)
                return r;
        if (**p == '.') {
                (*p)++;
                r = digits(p, &frac, &frac_digits);
                if (r < 0)
                        return r;
        }
        while (**p == ' ')
                (*p)++;
        r = span_unit(p, &unit);
        if (r < 0)
                return r;
        if (whole > UINT64_MAX / unit)
                return -ERANGE;
        if (frac_digits > 0) {
                double scale = 1;

                for (unsigned i = 0; i < frac_digits; i++)
                        scale *= 10;
                f = (uint64_t) ((double) frac / scale * (double) unit + 0.5);   /* at most unit */
        }
        if (f > UINT64_MAX - whole * unit)
                return -ERANGE;
        *ret = whole * unit + f;
        return 0;
}

int parse_timespan_usec(const char *s, uint64_t *ret) {
        uint64_t total = 0;
        const char *p = s;

        while (*p == ' ')
                p++;
        if (!*p)
                return -EINVAL;
        while (*p) {
                uint64_t v;
                int r = span_part(&p, &v);

                if (r < 0)
                        return r;
                if (v > UINT64_MAX - total)
                        return -ERANGE;
                total += v;
                while (*p == ' ')
                        p++;
        }
        *ret = total;
        return 0;
}

/* ---- points in time ------------------------------------------------------- */

/* base ± delta, clamped to the clock's range. */
static uint64_t add_signed(uint64_t base, uint64_t delta, bool minus) {
        if (minus)
                return delta > base ? 0 : base - delta;
        return delta > UINT64_MAX - base ? UINT64_MAX : base + delta;
}

/*
 * A zone name after the time, which decides standard or daylight time
 * when it is an abbreviation, as journalctl has it: one of the local
 * zone's (CEST where local time is Europe/Berlin's), which it must be, or
 * the name of the zone the caller runs in (CET under TZ=:CET), which it
 * may be.
 */
struct zone_word {
        const char *name;
        bool local;
};

/* -1 (let mktime decide), 0 or 1 for the zone word in tm_year; -EINVAL when a local abbreviation is none. */
static int zone_isdst(const struct zone_word *z, int tm_year) {
        int isdst;

        if (!z)
                return -1;
        isdst = timezone_abbrev_isdst(tm_year, z->name);
        return isdst < 0 && z->local ? -EINVAL : isdst;
}

/* Midnight, local time, day_offset days from now's day. */
static int local_midnight(uint64_t now, int day_offset, const struct zone_word *z, uint64_t *ret) {
        time_t t = (time_t) (now / USEC_PER_SEC), m;
        struct tm tm;

        if (!localtime_r(&t, &tm) || zone_isdst(z, tm.tm_year) == -EINVAL)
                return -EINVAL;
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        tm.tm_mday += day_offset;       /* normalised, also across DST */
        if (timezone_local_to_time(&tm, &m) < 0 || m < 0)
                return -EINVAL;
        *ret = (uint64_t) m * USEC_PER_SEC;
        return 0;
}

static bool endswith_word(const char *s, size_t n, const char *word, size_t *ret_len) {
        size_t w = strlen(word);

        if (n <= w + 1 || s[n - w - 1] != ' ' || memcmp(s + n - w, word, w) != 0)
                return false;
        *ret_len = n - w - 1;
        return true;
}

/* "-SPAN", "+SPAN", "SPAN ago", "SPAN left"; 1 if s was one of those. */
static int parse_relative(const char *s, uint64_t now, uint64_t *ret) {
        _cleanup_free_ char *span = NULL;
        size_t n = strlen(s), len;
        bool minus;
        uint64_t d;
        int r;

        if (s[0] == '-' || s[0] == '+') {
                r = parse_timespan_usec(s + 1, &d);
                if (r < 0)
                        return r;
                *ret = add_signed(now, d, s[0] == '-');
                return 1;
        }
        if (endswith_word(s, n, "ago", &len))
                minus = true;
        else if (endswith_word(s, n, "left", &len))
                minus = false;
        else
                return 0;
        span = strndup(s, len);
        if (!span)
                return -ENOMEM;
        r = parse_timespan_usec(span, &d);
        if (r < 0)
                return r;
        *ret = add_signed(now, d, minus);
        return 1;
}

/* "@SECONDS[.FRACTION]" */
static int parse_epoch(const char *s, uint64_t *ret) {
        uint64_t sec, frac = 0, scale = 1;
        unsigned n = 0;
        int r;

        r = digits(&s, &sec, NULL);
        if (r < 0)
                return r;
        if (*s == '.') {
                s++;
                r = digits(&s, &frac, &n);
                if (r < 0)
                        return r;
        }
        if (*s != '\0')
                return -EINVAL;
        for (; n > 6; n--)
                frac /= 10;
        for (; n < 6; n++)
                scale *= 10;
        if (sec > UINT64_MAX / USEC_PER_SEC)
                return -ERANGE;
        *ret = sec * USEC_PER_SEC + frac * scale;
        return 0;
}

/* A date and time as written, before it becomes a point. */
struct when {
        bool have_date;
        int year, mon, mday, hour, min, sec;
        uint64_t usec;
        int wday;                       /* -1: no weekday given */
        bool utc;                       /* UTC or an offset, else local time */
        long offset;                    /* seconds east of UTC */
};

/* At most max_digits digits (at least min_digits) at *p, in lo..hi. */
static int number(const char **p, unsigned min_digits, unsigned max_digits, int lo, int hi, int *ret) {
        const char *s = *p;
        unsigned n = 0;
        int v = 0;

        for (; n < max_digits && isdigit((unsigned char) s[n]); n++)
                v = v * 10 + (s[n] - '0');
        if (n < min_digits || v < lo || v > hi)
                return -EINVAL;
        *p = s + n;
        *ret = v;
        return 0;
}

/* "Mon " or "Monday ": its number in *ret_wday, or -1 with no word there. */
static int weekday(const char **p, int *ret_wday) {
        static const char *const names[] = { "sunday", "monday", "tuesday", "wednesday", "thursday", "friday",
                                             "saturday" };
        size_t n = 0;

        *ret_wday = -1;
        while (isalpha((unsigned char) (*p)[n]))
                n++;
        if (n == 0)
                return 0;
        for (int i = 0; i < 7; i++)
                if ((n == 3 || n == strlen(names[i])) && strncasecmp(*p, names[i], n) == 0 && (*p)[n] == ' ') {
                        *ret_wday = i;
                        *p += n + 1;
                        return 0;
                }
        return -EINVAL;
}

/* "YYYY-MM-DD" or "YY-MM-DD" */
static int date_part(const char **p, struct when *w) {
        const char *s = *p;
        int year;

        if (number(&s, 2, 4, 0, 9999, &year) < 0 || (s - *p != 2 && s - *p != 4) || *s++ != '-' ||
            number(&s, 2, 2, 1, 12, &w->mon) < 0 || *s++ != '-' || number(&s, 2, 2, 1, 31, &w->mday) < 0)
                return -EINVAL;
        if (s - *p == 8)                /* two-digit year, as strptime's %y */
                year += year < 69 ? 2000 : 1900;
        w->year = year;
        w->have_date = true;
        *p = s;
        return 0;
}

/* "HH:MM[:SS[.FRACTION]]" */
static int time_part(const char **p, struct when *w) {
        const char *s = *p;

        if (number(&s, 2, 2, 0, 23, &w->hour) < 0 || *s++ != ':' || number(&s, 2, 2, 0, 59, &w->min) < 0)
                return -EINVAL;
        if (*s == ':') {
                s++;
                if (number(&s, 2, 2, 0, 60, &w->sec) < 0)
                        return -EINVAL;
                if (*s == '.') {
                        uint64_t frac;
                        unsigned n;

                        s++;
                        if (digits(&s, &frac, &n) < 0)
                                return -EINVAL;
                        for (; n > 6; n--)
                                frac /= 10;
                        for (; n < 6; n++)
                                frac *= 10;
                        w->usec = frac;
                }
        }
        *p = s;
        return 0;
}

/* " UTC", "Z", "+HH:MM", "+HHMM", "+HH" (or -), with or without a space before; or nothing. */
static int zone_part(const char **p, struct when *w) {
        const char *s = *p;
        int hh, mm = 0;
        char sign;

        if (*s == ' ')
                s++;
        if (streq(s, "UTC") || streq(s, "Z")) {
                w->utc = true;
                *p = s + strlen(s);
                return 0;
        }
        if (*s != '+' && *s != '-')
                return *s == '\0' && s == *p ? 0 : -EINVAL;
        sign = *s++;
        if (number(&s, 2, 2, 0, 23, &hh) < 0)
                return -EINVAL;
        if (*s == ':')
                s++;
        if (*s != '\0' && number(&s, 2, 2, 0, 59, &mm) < 0)
                return -EINVAL;
        w->utc = true;
        w->offset = (sign == '-' ? -1 : 1) * ((long) hh * 3600 + (long) mm * 60);
        *p = s;
        return 0;
}

static int parse_when(const char *s, struct when *w) {
        *w = (struct when) {};
        if (weekday(&s, &w->wday) < 0)
                return -EINVAL;
        if (date_part(&s, w) == 0) {
                if ((*s == ' ' || *s == 'T') && isdigit((unsigned char) s[1])) {
                        s++;
                        if (time_part(&s, w) < 0)
                                return -EINVAL;
                }
        } else if (time_part(&s, w) < 0)
                return -EINVAL;
        if (zone_part(&s, w) < 0 || *s != '\0')
                return -EINVAL;
        return 0;
}

/* The point w names; today's date when it has none. */
static int when_to_usec(const struct when *w, uint64_t now, const struct zone_word *z, uint64_t *ret) {
        time_t t = (time_t) (now / USEC_PER_SEC);
        struct tm tm = {}, today;

        if (!(w->utc ? gmtime_r(&t, &today) : localtime_r(&t, &today)))
                return -EINVAL;
        tm.tm_year = w->have_date ? w->year - 1900 : today.tm_year;
        tm.tm_mon = w->have_date ? w->mon - 1 : today.tm_mon;
        tm.tm_mday = w->have_date ? w->mday : today.tm_mday;
        tm.tm_hour = w->hour;
        tm.tm_min = w->min;
        tm.tm_sec = w->sec;
        tm.tm_isdst = -1;
        if (z && w->utc)
                return -EINVAL;         /* two zones */
        if (z) {
                tm.tm_isdst = zone_isdst(z, tm.tm_year);
                if (tm.tm_isdst == -EINVAL)
                        return -EINVAL;
        }
        if (w->utc)
                t = timegm(&tm);
        else if (tm.tm_isdst >= 0)
                t = mktime(&tm);        /* an abbreviation said standard or daylight time */
        else if (timezone_local_to_time(&tm, &t) < 0)
                return -EINVAL;
        /* normalising moved the date: there is no such day (February 30) */
        if (t == (time_t) -1 || tm.tm_mday != (w->have_date ? w->mday : today.tm_mday))
                return -EINVAL;
        if (w->wday >= 0 && tm.tm_wday != w->wday)
                return -EINVAL;
        t -= w->offset;
        if (t < 0)
                return -ERANGE;
        *ret = (uint64_t) t * USEC_PER_SEC + w->usec;
        return 0;
}

/* A point in local time, with no zone name after it, or with z: a date, a time or a day's name before one. */
static int parse_point(const char *s, uint64_t now, const struct zone_word *z, uint64_t *ret) {
        static const struct { const char *word; int day; } days[] = {
                { "today", 0 }, { "yesterday", -1 }, { "tomorrow", 1 },
        };
        struct when w;
        uint64_t v;
        int r;

        if (!s || !*s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(days); i++)
                if (streq(s, days[i].word))
                        return local_midnight(now, days[i].day, z, ret);
        if (z) {
                r = parse_when(s, &w);
                return r < 0 ? r : when_to_usec(&w, now, z, ret);
        }
        if (streq(s, "now")) {
                *ret = now;
                return 0;
        }
        if (streq(s, "epoch")) {
                *ret = 0;
                return 0;
        }
        if (s[0] == '@')
                return parse_epoch(s + 1, ret);
        r = parse_relative(s, now, &v);
        if (r < 0)
                return r;
        if (r > 0) {
                *ret = v;
                return 0;
        }
        r = parse_when(s, &w);
        if (r < 0)
                return r;
        return when_to_usec(&w, now, NULL, ret);
}

struct zone_job {
        const char *point;
        uint64_t now;
        struct zone_word zone;
};

/* In the child process whose local time is job->zone's. */
static int parse_in_zone(void *userdata, uint64_t *ret) {
        const struct zone_job *job = userdata;

        return parse_point(job->point, job->now, &job->zone, ret);
}

int parse_timestamp_usec(const char *s, uint64_t now, uint64_t *ret) {
        _cleanup_free_ char *point = NULL;
        const char *name;
        int r;

        r = parse_point(s, now, NULL, ret);
        if (r != -EINVAL || !s || !(name = strrchr(s, ' ')))
                return r;
        point = strndup(s, (size_t) (name - s));
        if (!point)
                return -ENOMEM;
        name++;
        /* As journalctl: a zone of the tz database is parsed in a process of its own, where it is local time. */
        if (timezone_name_valid(name)) {
                struct zone_job job = { .point = point, .now = now, .zone = { .name = name } };

                return timezone_run(name, parse_in_zone, &job, ret);
        }
        return parse_point(point, now, &(const struct zone_word) { .name = name, .local = true }, ret);
}
