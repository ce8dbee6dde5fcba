/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Where events come from: udev's netlink group (after its rules ran), or the kernel's. */
enum event_source {
        EVENT_SOURCE_UDEV = 0,
        EVENT_SOURCE_KERNEL,
};

const char *event_source_to_string(enum event_source s);         /* "udev", "kernel": netlink group names */
int event_source_from_string(const char *s, enum event_source *ret);
