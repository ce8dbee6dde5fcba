/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/*
 * Time zones by name, as journalctl takes them after a timestamp
 * ("2024-05-01 10:00 Europe/Berlin").
 */

#define TIMEZONE_DIR "/usr/share/zoneinfo"

/*
 * Is name a zone of the system's tz database (Europe/Berlin, CET,
 * America/Argentina/Salta)? A relative name of letters, digits and
 * "/_+-." with no "." or ".." component, naming a TZif file under
 * TIMEZONE_DIR: zone.tab and the like are not zones.
 */
bool timezone_name_valid(const char *name);

/*
 * fn(userdata, &v) computed where local time is zone's: in a child
 * process with TZ=:zone, so that the caller's TZ, tzname and the C
 * library's zone cache stay as they are. fn's result (< 0: -errno), and
 * v in *ret when it is >= 0. -EINVAL for a zone that is no valid name;
 * fork and pipe failures as -errno. It forks: single-threaded callers only.
 */
int timezone_run(const char *zone, int (*fn)(void *userdata, uint64_t *ret), void *userdata, uint64_t *ret);

/*
 * The local time *tm as a point in *ret, the same in every process:
 * mktime() with tm_isdst -1 starts from the offset of its previous call
 * (glibc), so a time that occurs twice could come out either way. The
 * earlier of the two, then; a time in the gap of a change (02:30 on the
 * day DST starts) is read with the offset before it, as mktime() does.
 * *tm is normalised as timegm() does it (31 June is 1 July); tm_isdst
 * is ignored. -EINVAL when the time cannot be converted.
 */
int timezone_local_to_time(struct tm *tm, time_t *ret);

/*
 * 0 or 1: abbrev is the local zone's name for standard (CET) or daylight
 * (CEST) time in year (a struct tm year: since 1900), as mktime() names
 * them on 1 January and 1 July; -1: neither.
 */
int timezone_abbrev_isdst(int tm_year, const char *abbrev);
