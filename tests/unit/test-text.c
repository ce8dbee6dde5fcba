/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared text helpers: escaping untrusted text, JSON strings, number and time formats. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <time.h>
#include "escape.h"
#include "format.h"
#include "hash.h"
#include "timeparse.h"
#include "json.h"
#include "svg.h"
#include "term.h"
#include "util.h"

#define T0 1700000000ULL        /* 2023-11-14 22:13:20 UTC */

static char *json_of(const char *s) {
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);

        assert_non_null(f);
        json_write_string(f, s);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static void check_escape(const char *in, bool ascii_only, const char *want) {
        _cleanup_free_ char *got = escape_untrusted(in, ascii_only);

        assert_non_null(got);
        assert_string_equal(got, want);
}

static void test_utf8_decode(void **state) {
        uint32_t cp = 0;

        assert_int_equal(utf8_decode("a", 1, &cp), 1);
        assert_int_equal(cp, 'a');
        assert_int_equal(utf8_decode("\xc2\xb5", 2, &cp), 2);
        assert_int_equal(cp, 0xb5);
        assert_int_equal(utf8_decode("\xe2\x80\xae", 3, &cp), 3);
        assert_int_equal(cp, 0x202e);
        assert_int_equal(utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
        assert_int_equal(cp, 0x1f600);
        cp = 42;
        assert_int_equal(utf8_decode("\xc0\xaf", 2, &cp), 0);          /* overlong "/" */
        assert_int_equal(utf8_decode("\xe0\x80\xaf", 3, &cp), 0);      /* overlong */
        assert_int_equal(utf8_decode("\xed\xa0\x80", 3, &cp), 0);      /* surrogate */
        assert_int_equal(utf8_decode("\xf4\x90\x80\x80", 4, &cp), 0);  /* past U+10FFFF */
        assert_int_equal(utf8_decode("\xe2\x80", 2, &cp), 0);          /* cut */
        assert_int_equal(utf8_decode("\xe2\x80\xae", 2, &cp), 0);      /* cut by avail */
        assert_int_equal(utf8_decode("\x80", 1, &cp), 0);              /* stray continuation */
        assert_int_equal(utf8_decode("\xff", 1, &cp), 0);
        assert_int_equal(utf8_decode("", 0, &cp), 0);
        assert_int_equal(cp, 42);
}

static void test_escape_untrusted(void **state) {
        check_escape("memory300", false, "memory300");
        check_escape("", false, "");
        check_escape(NULL, false, "");
        /* clear screen, window title (OSC 0), clipboard write (OSC 52), bell */
        check_escape("a\x1b[2Jb", false, "a\\x1b[2Jb");
        check_escape("\x1b]0;owned\x07", false, "\\x1b]0;owned\\x07");
        check_escape("\x1b]52;c;ZXZpbA==\x1b\\", false, "\\x1b]52;c;ZXZpbA==\\x1b\\\\");
        /* a newline or carriage return cannot start a forged row */
        check_escape("udev\n2023-11-14 22:13:20  forged", false, "udev\\x0a2023-11-14 22:13:20  forged");
        check_escape("x\ry", false, "x\\x0dy");
        check_escape("tab\there", false, "tab\\x09here");
        check_escape("del\x7f", false, "del\\x7f");
        /* C1 CSI as UTF-8, and as a raw byte (invalid UTF-8) */
        check_escape("c1\xc2\x9b" "31m", false, "c1\\xc2\\x9b31m");
        check_escape("raw\x9b" "31m", false, "raw\\x9b31m");
        check_escape("bad\xff\xfe", false, "bad\\xff\\xfe");
        check_escape("cut\xe2\x80", false, "cut\\xe2\\x80");
        /* right-to-left override and line separator */
        check_escape("abc\xe2\x80\xae" "fed", false, "abc\\xe2\\x80\\xaefed");
        check_escape("a\xe2\x80\xa8" "b", false, "a\\xe2\\x80\\xa8b");
        /* backslash stays unambiguous: a literal "\x1b" is not an escape */
        check_escape("\\x1b", false, "\\\\x1b");
        /* printable UTF-8 passes, unless the terminal is not UTF-8 */
        check_escape("P99 \xc2\xb5s \xe2\x96\x88", false, "P99 \xc2\xb5s \xe2\x96\x88");
        check_escape("P99 \xc2\xb5s", true, "P99 \\xc2\\xb5s");
}

/* JSON that smartcols wrote: C0, " and \ it escaped itself; DEL, C1, bidi, separators and invalid bytes it did not. */
static void test_escape_json_text(void **state) {
        static const char in[] = "{\n   \"a\": \"\\\"q\\\\ \\u001b del\x7f c1\xc2\x9b rlo\xe2\x80\xae" "ls\xe2\x80\xa8"
                                 " bad\xff\xe2\x80\" \xc2\xb5s\"\n}\n";
        static const char want[] = "{\n   \"a\": \"\\\"q\\\\ \\u001b del\\u007f c1\\u009b rlo\\u202els\\u2028"
                                   " bad\\ufffd\\ufffd\\ufffd\" \xc2\xb5s\"\n}\n";
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);

        assert_non_null(f);
        escape_write(f, ESCAPE_JSON_TEXT, in, strlen(in));
        assert_int_equal(fclose(f), 0);
        assert_string_equal(buf, want);
        free(buf);
}

/*
 * One policy: for every code point, each style passes it as it is exactly
 * when it is safe (and not a character the style must quote), and an
 * unsafe one never comes out raw.
 */
static void test_escape_styles_agree(void **state) {
        static const enum escape_style styles[] = { ESCAPE_TERMINAL, ESCAPE_TERMINAL_ASCII, ESCAPE_XML, ESCAPE_JSON,
                                                    ESCAPE_JSON_TEXT };

        for (uint32_t cp = 1; cp <= 0x10ffff; cp++) {
                char in[8] = "", out[64];
                size_t len;
                FILE *f;

                if (cp >= 0xd800 && cp <= 0xdfff)
                        continue;
                /* UTF-8 by hand: the decoder must not judge its own input */
                if (cp < 0x80)
                        in[0] = (char) cp;
                else if (cp < 0x800)
                        snprintf(in, sizeof(in), "%c%c", 0xc0 | cp >> 6, 0x80 | (cp & 0x3f));
                else if (cp < 0x10000)
                        snprintf(in, sizeof(in), "%c%c%c", 0xe0 | cp >> 12, 0x80 | (cp >> 6 & 0x3f), 0x80 | (cp & 0x3f));
                else
                        snprintf(in, sizeof(in), "%c%c%c%c", 0xf0 | cp >> 18, 0x80 | (cp >> 12 & 0x3f),
                                 0x80 | (cp >> 6 & 0x3f), 0x80 | (cp & 0x3f));
                len = strlen(in);
                for (size_t i = 0; i < ELEMENTSOF(styles); i++) {
                        enum escape_style st = styles[i];
                        bool quoted = (st == ESCAPE_TERMINAL || st == ESCAPE_TERMINAL_ASCII || st == ESCAPE_XML ||
                                       st == ESCAPE_JSON) && cp == '\\';
                        bool passes;

                        quoted |= st == ESCAPE_TERMINAL_ASCII && cp > 0x7f;
                        quoted |= st == ESCAPE_XML && ((cp < 0x80 && strchr("&<>\"'", (int) cp)) || cp == 0xfffe || cp == 0xffff);
                        quoted |= st == ESCAPE_JSON && (cp == '"' || cp == '\n' || cp == '\r' || cp == '\t');
                        /* JSON text: its ASCII is the writer's, escaped already */
                        if (st == ESCAPE_JSON_TEXT && cp < 0x7f) {
                                quoted = false;
                                passes = true;
                        } else
                                passes = !unicode_is_unsafe(cp) && !quoted;
                        f = fmemopen(out, sizeof(out), "w");
                        assert_non_null(f);
                        escape_write(f, st, in, len);
                        assert_int_equal(fclose(f), 0);
                        if (passes ? !streq(out, in) : streq(out, in) || (unicode_is_unsafe(cp) && strstr(out, in)))
                                fail_msg("style %d, U+%04X: \"%s\"", (int) st, (unsigned) cp, out);
                }
        }
}

static void test_json_string(void **state) {
        struct { const char *in, *want; } cases[] = {
                { "plain", "\"plain\"" },
                { NULL, "\"\"" },
                { "q\"b\\", "\"q\\\"b\\\\\"" },
                { "nl\ncr\rtab\t", "\"nl\\ncr\\rtab\\t\"" },
                { "\x1b[2J\x07", "\"\\u001b[2J\\u0007\"" },
                { "del\x7f c1\xc2\x9b", "\"del\\u007f c1\\u009b\"" },
                { "rlo\xe2\x80\xae", "\"rlo\\u202e\"" },
                { "\xc2\xb5s", "\"\xc2\xb5s\"" },
                { "bad\xff\xfe!", "\"bad\\ufffd\\ufffd!\"" },
                { "cut\xe2\x80", "\"cut\\ufffd\\ufffd\"" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *got = json_of(cases[i].in);

                assert_string_equal(got, cases[i].want);
        }
}

static void test_siphash(void **state) {
        uint8_t key[HASH_KEY_SIZE], msg[64], other[HASH_KEY_SIZE];

        /* The reference vectors: key 00..0f, message 00..len-1. */
        for (unsigned i = 0; i < sizeof(key); i++)
                key[i] = (uint8_t) i;
        for (unsigned i = 0; i < sizeof(msg); i++)
                msg[i] = (uint8_t) i;
        assert_true(siphash24(msg, 0, key) == 0x726fdb47dd0e0e31ULL);
        assert_true(siphash24(msg, 15, key) == 0xa129ca6149be45e5ULL);
        /* another key, another hash */
        hash_key_random(other);
        assert_true(memcmp(key, other, sizeof(key)) != 0);
        assert_true(siphash24(msg, 15, other) != siphash24(msg, 15, key));
}

static void test_idx_map(void **state) {
        _cleanup_(idx_map_done) struct idx_map m = {};
        size_t cur, seen[3] = {}, i;

        cur = 0;
        assert_true(idx_map_next(&m, 7, &cur) == SIZE_MAX);
        /* 3 indices share hash 7: every one comes back, none of the others */
        for (size_t k = 0; k < 999; k++)
                assert_int_equal(idx_map_put(&m, k % 333 == 0 ? 7 : k * 0x9e3779b97f4a7c15ULL, k), 0);
        assert_true(m.cap >= 2 * m.n);
        cur = 0;
        while ((i = idx_map_next(&m, 7, &cur)) != SIZE_MAX) {
                assert_true(i % 333 == 0 && i / 333 < 3);
                seen[i / 333]++;
        }
        assert_int_equal(seen[0] + seen[1] + seen[2], 3);
        assert_int_equal(seen[0] * seen[1] * seen[2], 1);
        for (size_t k = 1; k < 999; k++) {
                if (k % 333 == 0)
                        continue;
                cur = 0;
                assert_int_equal(idx_map_next(&m, k * 0x9e3779b97f4a7c15ULL, &cur), k);
        }
}

static void test_parse_time(void **state) {
        const uint64_t now = (T0 + 3600) * USEC_PER_SEC;        /* 2023-11-14 23:13:20 UTC */
        uint64_t t;

        assert_int_equal(parse_timestamp_usec("2023-11-14 22:13:20", now, &t), 0);
        assert_int_equal(t, T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("2023-11-14 22:13", now, &t), 0);
        assert_int_equal(t, (T0 - 20) * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("2023-11-14", now, &t), 0);
        assert_int_equal(t, 1699920000 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("today", now, &t), 0);
        assert_int_equal(t, 1699920000 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("yesterday", now, &t), 0);
        assert_int_equal(t, (1699920000 - 86400) * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("now", now, &t), 0);
        assert_int_equal(t, now);
        assert_int_equal(parse_timestamp_usec("-1h", now, &t), 0);
        assert_int_equal(t, T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("-30m", now, &t), 0);
        assert_int_equal(t, (T0 + 1800) * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("-2d", now, &t), 0);
        assert_int_equal(t, now - 2 * 86400 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("+10s", now, &t), 0);
        assert_int_equal(t, now + 10 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("@1700000000", now, &t), 0);
        assert_int_equal(t, T0 * USEC_PER_SEC);

        t = 42;
        assert_int_equal(parse_timestamp_usec("-1x", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("-h", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("2023-11-14 22", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("tuesday", now, &t), -EINVAL);
        assert_int_equal(t, 42);
}

static void check_span(const char *s, uint64_t want) {
        uint64_t v = 0;

        assert_int_equal(parse_timespan_usec(s, &v), 0);
        assert_true(v == want);
}

static void test_parse_timespan(void **state) {
        uint64_t v = 42;

        check_span("90", 90 * USEC_PER_SEC);
        check_span("1h30min", 5400 * USEC_PER_SEC);
        check_span("1h 30min", 5400 * USEC_PER_SEC);
        check_span("1.5h", 5400 * USEC_PER_SEC);
        check_span("2 days", 2 * 86400 * USEC_PER_SEC);
        check_span("1 hour", 3600 * USEC_PER_SEC);
        check_span("5m", 300 * USEC_PER_SEC);
        check_span("1M", 2629800 * USEC_PER_SEC);
        check_span("1y", 31557600 * USEC_PER_SEC);
        check_span("250ms", 250 * USEC_PER_MSEC);
        check_span("7\xc2\xb5s", 7);
        check_span("1w 2d 3h 4min 5s 6ms 7us", ((9 * 24 + 3) * 3600 + 4 * 60 + 5) * USEC_PER_SEC + 6007);
        assert_int_equal(parse_timespan_usec("", &v), -EINVAL);
        assert_int_equal(parse_timespan_usec("h", &v), -EINVAL);
        assert_int_equal(parse_timespan_usec("1x", &v), -EINVAL);
        assert_int_equal(parse_timespan_usec("1 hourish", &v), -EINVAL);
        assert_int_equal(parse_timespan_usec("1.h", &v), -EINVAL);
        assert_int_equal(parse_timespan_usec("99999999999999y", &v), -ERANGE);
        assert_int_equal(v, 42);
}

/* The forms journalctl --since takes that the report refused before. */
static void test_parse_timestamp_journalctl(void **state) {
        const uint64_t now = (T0 + 3600) * USEC_PER_SEC;        /* Tue 2023-11-14 23:13:20 UTC */
        uint64_t t;

        assert_int_equal(parse_timestamp_usec("-1h30min", now, &t), 0);
        assert_true(t == now - 5400 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("1 hour ago", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("90min ago", now, &t), 0);
        assert_true(t == now - 5400 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("2h left", now, &t), 0);
        assert_true(t == now + 7200 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("2023-11-14T22:13:20", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("2023-11-14T22:13", now, &t), 0);
        assert_true(t == (T0 - 20) * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("2023-11-14 22:13:20.250000", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC + 250000);
        assert_int_equal(parse_timestamp_usec("Tue 2023-11-14 22:13:20", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("tuesday 2023-11-14", now, &t), 0);
        assert_true(t == 1699920000 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("23-11-14 22:13:20", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("22:13:20", now, &t), 0);           /* today */
        assert_true(t == T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("22:13", now, &t), 0);
        assert_true(t == (T0 - 20) * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("@1700000000.5", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC + 500000);
        assert_int_equal(parse_timestamp_usec("epoch", now, &t), 0);
        assert_true(t == 0);
        assert_int_equal(parse_timestamp_usec("tomorrow", now, &t), 0);
        assert_true(t == (1699920000 + 86400) * USEC_PER_SEC);
        /* zones: the test runs with TZ=UTC, so an offset shows */
        assert_int_equal(parse_timestamp_usec("2023-11-14 22:13:20 UTC", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("2023-11-14T22:13:20Z", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("2023-11-14T23:13:20+01:00", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC);
        assert_int_equal(parse_timestamp_usec("2023-11-14 21:13:20 -0100", now, &t), 0);
        assert_true(t == T0 * USEC_PER_SEC);

        t = 42;
        assert_int_equal(parse_timestamp_usec("Mon 2023-11-14", now, &t), -EINVAL);      /* a Tuesday */
        assert_int_equal(parse_timestamp_usec("2023-02-30", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("2023-13-01", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("2023-11-14 24:00", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("2023-11-14 22:13:20 CEST", now, &t), -EINVAL);     /* not UTC's */
        assert_int_equal(parse_timestamp_usec("2023-11-14T", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("1 hour", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("ago", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("@", now, &t), -EINVAL);
        assert_int_equal(parse_timestamp_usec("@12x", now, &t), -EINVAL);
        assert_int_equal(t, 42);
}

/* The point, in Unix seconds, or -1: parse_timestamp_usec() refused it and left its output alone. */
static int64_t seconds_at(const char *s, uint64_t now) {
        uint64_t t = 42;

        if (parse_timestamp_usec(s, now, &t) < 0) {
                assert_true(t == 42);
                return -1;
        }
        assert_true(t % USEC_PER_SEC == 0);
        return (int64_t) (t / USEC_PER_SEC);
}

static void set_tz(const char *tz) {
        assert_int_equal(setenv("TZ", tz, 1), 0);
        tzset();
}

/*
 * Zone names after the time, as journalctl takes them: the points are
 * those systemd 257's parse_timestamp() gives (systemd-analyze timestamp),
 * across both DST changes of 2024 in Berlin, but for the hour that occurs
 * twice: there systemd's answer follows glibc mktime()'s guess from its
 * previous call (Berlin's second 02:30, New York's first 01:30), ours is
 * always the earlier.
 */
static void test_parse_timestamp_zone_names(void **state) {
        const uint64_t now = (T0 + 3600) * USEC_PER_SEC;        /* 2023-11-14 23:13:20 UTC, 15 Nov 08:13 in Tokyo */
        static const struct { const char *s; int64_t want; } cases[] = {
                { "2024-07-01 12:00 Europe/Berlin", 1719828000 },       /* CEST, +2 */
                { "2024-01-15 12:00 Europe/Berlin", 1705316400 },       /* CET, +1 */
                { "2024-03-31 01:59:59 Europe/Berlin", 1711846799 },    /* the last second of CET */
                { "2024-03-31 03:00 Europe/Berlin", 1711846800 },       /* the first of CEST */
                { "2024-03-31 02:30 Europe/Berlin", 1711848600 },       /* no such time: mktime moves it on */
                { "2024-10-27 02:30 Europe/Berlin", 1729989000 },       /* twice that day: the first, CEST */
                { "2024-10-27 01:59:59 Europe/Berlin", 1729987199 },    /* once */
                { "2024-10-27 03:00 Europe/Berlin", 1729994400 },       /* CET again */
                { "Mon 2024-07-01 12:00:00 Europe/Berlin", 1719828000 },
                { "2024-07-01 12:00 America/New_York", 1719849600 },
                { "2024-11-03 01:30 America/New_York", 1730611800 },    /* twice: the first, EDT */
                { "2024-03-10 02:30 America/New_York", 1710055800 },    /* no such time: EST's offset */
                { "2024-07-01 12:00 Asia/Kolkata", 1719815400 },       /* +5:30 */
                { "2024-07-01 12:00 Etc/GMT+1", 1719838800 },          /* POSIX sign: -1 */
                { "2024-07-01 12:00 GMT", 1719835200 },
                { "2024-07-01 Asia/Tokyo", 1719759600 },
                { "today Asia/Tokyo", 1699974000 },                     /* Tokyo's today, not ours */
                { "22:13 Asia/Tokyo", 1700053980 },
                { "2024-07-01 12:00 CEST", -1 },                        /* not our zone's abbreviation */
                { "2024-07-01 12:00 Europe/Nowhere", -1 },
                { "2024-07-01 12:00 zone.tab", -1 },                    /* a file there, but no zone */
                { "2024-07-01 12:00 ../zoneinfo/Europe/Berlin", -1 },
                { "2024-07-01 12:00 /usr/share/zoneinfo/Europe/Berlin", -1 },
                { "2024-07-01 12:00 Europe//Berlin", -1 },
                { "2024-07-01 12:00 Europe/", -1 },
                { "2024-07-01 12:00 Europe", -1 },                      /* a directory */
                { "2024-07-01 12:00 +02:00 Europe/Berlin", -1 },       /* two zones */
                { "2024-07-01 12:00 Europe/Berlin UTC", -1 },
                { "-1h Europe/Berlin", -1 },
                { "2024-02-30 12:00 Europe/Berlin", -1 },
                { "Tue 2024-07-01 12:00 Europe/Berlin", -1 },           /* a Monday */
        };
        time_t t0 = (time_t) T0;
        struct tm tm;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int64_t got = seconds_at(cases[i].s, now);

                if (got != cases[i].want)
                        fail_msg("\"%s\": %" PRId64 ", not %" PRId64, cases[i].s, got, cases[i].want);
        }
        /* Nothing leaks into this process: TZ and local time are UTC still. */
        assert_string_equal(getenv("TZ"), "UTC");
        assert_non_null(localtime_r(&t0, &tm));
        assert_int_equal(tm.tm_hour, 22);
        assert_string_equal(tm.tm_zone, "UTC");

        /* The local zone's abbreviations fix standard or daylight time, whatever the date. */
        set_tz("Europe/Berlin");
        assert_true(seconds_at("2024-07-01 12:00 CEST", now) == 1719828000);
        assert_true(seconds_at("2024-01-15 12:00 CEST", now) == 1705312800);
        assert_true(seconds_at("2024-07-01 12:00 CET", now) == 1719831600);
        assert_true(seconds_at("2024-01-15 12:00 CET", now) == 1705316400);
        assert_true(seconds_at("2024-07-01 12:00", now) == 1719828000);
        assert_true(seconds_at("2024-07-01 12:00 JST", now) == -1);
        assert_true(seconds_at("2024-07-01 12:00 America/New_York", now) == 1719849600);
        assert_string_equal(getenv("TZ"), "Europe/Berlin");
        set_tz("UTC");
}

static void test_svg_text(void **state) {
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);

        assert_non_null(f);
        svg_write_text(f, "<a href=\"x\">&'\x1b[2J\xff\xef\xbf\xbe\xc2\xb5\xe2\x80\xae");
        assert_int_equal(fclose(f), 0);
        assert_string_equal(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&apos;\\x1b[2J\\xff\\xef\\xbf\\xbe\xc2\xb5"
                                 "\\xe2\\x80\\xae");
        free(buf);
}

static void test_format_size(void **state) {
        static const struct { uint64_t bytes; const char *want; } cases[] = {
                { 0, "0B" }, { 1023, "1023B" }, { 1024, "1K" }, { 1536, "1.5K" },
                { 128ULL << 20, "128M" }, { 1ULL << 30, "1G" }, { 9ULL << 30, "9G" },
                { (3ULL << 30) / 2, "1.5G" }, { (1ULL << 30) + (1ULL << 20), "1G" },     /* 1.001: one decimal */
                { (2ULL << 30) - 1, "2G" },                                            /* 1.99...: rounds up */
                { 1ULL << 40, "1T" }, { 5ULL << 50, "5P" }, { UINT64_MAX, "16E" },
        };
        char buf[32];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_string_equal(format_size_iec(buf, sizeof(buf), cases[i].bytes), cases[i].want);
}

static void test_colors_decide(void **state) {
        /* a terminal: on, unless NO_COLOR or TERM=dumb */
        assert_true(colors_decide(NULL, NULL, "xterm", true));
        assert_false(colors_decide(NULL, "1", "xterm", true));
        assert_true(colors_decide(NULL, "", "xterm", true));           /* NO_COLOR counts only when not empty */
        assert_false(colors_decide(NULL, NULL, "dumb", true));
        assert_false(colors_decide(NULL, NULL, "xterm", false));
        /* SYSTEMD_COLORS wins either way, also into a pipe */
        assert_true(colors_decide("1", "1", "dumb", false));
        assert_true(colors_decide("yes", NULL, NULL, false));
        assert_true(colors_decide("256", NULL, NULL, false));
        assert_true(colors_decide("24bit", NULL, NULL, false));
        assert_false(colors_decide("0", NULL, "xterm", true));
        assert_false(colors_decide("false", NULL, "xterm", true));
        /* an unknown value is ignored */
        assert_true(colors_decide("purple", NULL, "xterm", true));
        assert_false(colors_decide("purple", NULL, "xterm", false));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utf8_decode),
                cmocka_unit_test(test_escape_untrusted),
                cmocka_unit_test(test_escape_json_text),
                cmocka_unit_test(test_escape_styles_agree),
                cmocka_unit_test(test_json_string),
                cmocka_unit_test(test_siphash),
                cmocka_unit_test(test_idx_map),
                cmocka_unit_test(test_svg_text),
                cmocka_unit_test(test_format_size),
                cmocka_unit_test(test_colors_decide),
                cmocka_unit_test(test_parse_time),
                cmocka_unit_test(test_parse_timespan),
                cmocka_unit_test(test_parse_timestamp_journalctl),
                cmocka_unit_test(test_parse_timestamp_zone_names),
        };

        /* Times are local time; pin it. */
        setenv("TZ", "UTC", 1);
        tzset();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
