/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/*
 * Times as journalctl --since/--until and systemd.time(7) write them.
 *
 * A span: numbers with units, optionally spaced: "90" (seconds), "1h30min",
 * "1h 30min", "1.5h", "2 days". Units: us usec µs, ms msec, s sec second(s),
 * m min minute(s), h hr hour(s), d day(s), w week(s), M month(s) (30.44 d),
 * y year(s) (365.25 d).
 */
int parse_timespan_usec(const char *s, uint64_t *ret);

/*
 * A point in CLOCK_REALTIME µs, local time unless a zone is given:
 *   now, today, yesterday, tomorrow, epoch
 *   @SECONDS[.FRACTION]
 *   +SPAN, -SPAN, "SPAN ago", "SPAN left"       relative to now
 *   [WEEKDAY] YYYY-MM-DD[( |T)HH:MM[:SS[.FRACTION]]][ ZONE]   (YY-MM-DD too)
 *   [WEEKDAY] HH:MM[:SS[.FRACTION]][ ZONE]                    today
 *   today, yesterday, tomorrow ZONENAME
 * ZONE: UTC, Z, or an offset +HH:MM, +HHMM, +HH (or -); or, after a space,
 * ZONENAME: a zone of the tz database (Europe/Berlin; the time is that
 * zone's local time, worked out in a child process so that our own TZ
 * stays as it is) or an abbreviation of the local zone (CEST), which, like
 * a zone's own abbreviation (CET), fixes standard or daylight time, as
 * journalctl takes them. A weekday must match the date. now is
 * CLOCK_REALTIME µs. ret is left alone on error. It may fork: single-threaded
 * callers only.
 */
int parse_timestamp_usec(const char *s, uint64_t now, uint64_t *ret);
