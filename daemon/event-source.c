/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "event-source.h"
#include "string-table.h"
#include "util.h"

static const char *const event_source_table[] = {
        [EVENT_SOURCE_UDEV] = "udev",
        [EVENT_SOURCE_KERNEL] = "kernel",
};

DEFINE_STRING_TABLE(event_source, enum event_source, NULL)
