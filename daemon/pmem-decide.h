/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include "pmem.h"
#include "pmem-daxctl-conf.h"
#include "policy.h"
#include "rules.h"

/* Whether memonlined converts a dax device, and what --dry-run prints about it. */

enum pmem_action {
        PMEM_ACTION_SKIP = 0,
        PMEM_ACTION_CONVERT,            /* devdax -> system-ram, no onlining */
};

const char *pmem_action_to_string(enum pmem_action a);  /* "skip", "convert" */

struct pmem_decision {
        enum pmem_action action;
        enum zone zone;                 /* for its blocks: rule, pmem_zone, default_zone; never UNSET */
        const struct device_rule *rule; /* borrowed from the policy, NULL if none matched */
        bool daxctl_claimed;            /* daxctl.conf.d has an entry for it */
        enum memmap_setting memmap_on_memory;   /* for the conversion: a rule's, else [pmem]'s; never UNSET */
        const struct device_rule *memmap_rule;  /* the rule that set it, NULL for [pmem] */
        /*
         * Its bad media, looked at only when it would be converted otherwise:
         * REFUSED or UNKNOWN then is why it is skipped (UNKNOWN: retried).
         */
        enum bad_media media;
        const struct device_rule *media_rule;   /* the rule that set allow_badblocks, NULL if none */
        char reason[320];
};

/*
 * Should memonlined convert this device? Order: EXCLUDE_DEVICE exclusions
 * (by device, namespace name or uuid), mode (only devdax converts), a CXL
 * device whose memdevs are not all known while match_cxl_memdev rules
 * apply (undecided: skipped for now), the first matching [device] rule's convert=, else convert_devdax (which only
 * covers devices on pmem regions; others need a rule), then daxctl's own
 * config when respect_daxctl=yes, then its bad media (refused when known,
 * undecided when unknown, unless a rule sets allow_badblocks = yes).
 * daxctl_confdir NULL skips the daxctl check.
 */
int pmem_decide(const struct pmem_device *dev, const struct policy *p, const char *daxctl_confdir,
                struct pmem_decision *ret);
/* Same with an already loaded daxctl config (NULL = none). */
int pmem_decide_conf(const struct pmem_device *dev, const struct policy *p, const struct daxctl_conf *conf,
                     struct pmem_decision *ret);

/* The verdict on a device's bad media under p, as rules_bad_media() gives it for all of the device. */
enum bad_media pmem_bad_media(const struct pmem_device *dev, const struct policy *p,
                              const struct device_rule **ret_rule);

/*
 * Its bad 512-byte sectors as text: "8"; "8+" when the list is incomplete
 * (at least 8); "?" when unknown; "-" for a device on no nd region (no list).
 */
void pmem_bad_sectors_format(const struct pmem_device *dev, char *buf, size_t size);

/*
 * Dry-run lines, one per device:
 * device=daxX.Y action=convert|skip zone=Z reason="..." namespace=N region=R node=N size=BYTES mode=M
 * (namespace=- when unknown, region/node -1), then for a device on a CXL region
 * cxl_region=regionN cxl_decoder=decoderK.D cxl_memdev=memM[,...] (- when unknown), and
 * cxl_memdev_unknown=1 when some of its memdevs could not be read; then
 * memmap_on_memory=yes|no|unsupported (for action=convert what the kmem bind gets if the kernel
 * takes the write; else what a bind would get as the device is), and memmap_reason="..." when that
 * is not what the policy asks, or the device's own 1 has no effect; last, when it has bad media
 * or its media is unknown, badblocks=B (as pmem_bad_sectors_format()). Then one
 * "daxctl-conf-ignored=\"...\"" line per ignored daxctl.conf.d entry. Returns 0 or -errno from the stream.
 */
int pmem_print_decisions(const struct pmem_devices *d, const struct policy *p, const char *daxctl_confdir,
                         FILE *out);
