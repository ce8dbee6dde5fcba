/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* v with decimals digits after the point, without printf's %f: no locale's comma leaks into JSON. */
const char *format_fixed(char *buf, size_t size, double v, unsigned decimals);

/*
 * bytes for people, in powers of 1024 as lsmem and lsblk print them: "512B",
 * "128M", "1.5G", "4G" (one decimal, dropped when it is 0). Returns buf.
 */
const char *format_size_iec(char *buf, size_t size, uint64_t bytes);

/* CLOCK_REALTIME µs as "YYYY-MM-DD HH:MM:SS" local time ("@SECONDS" if that fails). */
void format_time_local(char *buf, size_t size, uint64_t usec);
/* CLOCK_REALTIME µs as ISO 8601 UTC with microseconds: "YYYY-MM-DDTHH:MM:SS.uuuuuuZ". */
void format_time_iso_utc(char *buf, size_t size, uint64_t usec);
