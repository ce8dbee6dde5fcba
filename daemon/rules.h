/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "policy.h"

/*
 * The policy's rules, evaluated in one place: from what is known about
 * some memory (a block, or a dax device before conversion) to the zone
 * the rules give it and which rule decided, as data. The planner, the
 * devdax conversion decision and `memonlined status` all ask here.
 *
 * Precedence, first match wins: [exclude]; the first [device] rule with a
 * zone that matches the dax device; the first [range] holding the start;
 * the node's [node] rule; [pmem] zone for dax kmem memory; [zones]
 * default. A rule that needs a fact the memory lacks (its node, its dax
 * device) makes the memory undecided: fail safe, it stays offline. Known
 * bad media in a dax device keeps its memory offline, right after
 * [exclude], unless a [device] rule allows it (allow_badblocks); media
 * whose state cannot be known makes the memory undecided.
 */

struct memory_identity {
        uint64_t start, end;            /* physical, end exclusive */
        bool whole_device;              /* a device before conversion: ranges must hold it whole to exclude it */
        uint64_t block_id;              /* memoryN, for [exclude] block; UINT64_MAX for a device */
        int node;                       /* NODE_NONE (-1) when unknown */
        bool node_guessed;              /* from the span of a node's blocks, not a link */
        /* dax attribution; NULL / -1 / 0 when none */
        const char *dax_device;
        const char *namespace_name, *namespace_uuid;
        int region;
        uint64_t dax_size;
        bool on_pmem_region;
        const char *cxl_region;         /* "region0" for a dax device on a CXL region */
        const char *cxl_memdevs;        /* "mem0,mem1" */
        bool cxl_memdevs_unknown;       /* the region's memdevs could not all be read */
        bool dax_unknown;               /* the dax devices could not all be read */
        uint64_t bad_sectors;           /* known bad media of its dax device, 512-byte sectors */
        bool badblocks_unknown;         /* its dax device's bad media could not be known */
        const char *memdev;             /* hotplug device name ("PNP0C80:01", "virtio3"), NULL: boot */
};

enum rule_origin {
        RULE_EXCLUDE,                   /* an [exclude] line */
        RULE_DEVICE,                    /* a [device] section */
        RULE_RANGE,                     /* a [range] section */
        RULE_NODE,                      /* a [node] section */
        RULE_PMEM_DEFAULT,              /* [pmem] zone: dax kmem memory no rule named */
        RULE_DEFAULT,                   /* [zones] default: the ratio guard may change it */
        RULE_BAD_MEDIA,                 /* its dax device has known bad blocks, not allowed */
        RULE_UNDECIDED,                 /* a rule needs a fact the memory lacks */
        _RULE_ORIGIN_MAX,
};

struct rule_decision {
        enum zone zone;                 /* ZONE_SKIP for RULE_EXCLUDE, _BAD_MEDIA, _UNDECIDED; never UNSET */
        enum rule_origin origin;
        unsigned line;                  /* the deciding rule's line, 0 for defaults */
        const char *name;               /* [device NAME], else NULL */
        bool bad_media;                 /* left offline for its dax device's media: RULE_BAD_MEDIA, or
                                           RULE_UNDECIDED while the media is unknown */
        const char *dax_device;         /* for bad_media: its dax device, borrowed from the identity */
        uint64_t bad_sectors;           /* for bad_media: as in the identity */
        const struct exclusion *exclusion;      /* for RULE_EXCLUDE, borrowed from the policy */
        const char *undecided;          /* why, for RULE_UNDECIDED */
};

/* An admin's rule (not a default), whose zone is never changed quietly. */
static inline bool rule_is_explicit(enum rule_origin o) {
        return o == RULE_EXCLUDE || o == RULE_DEVICE || o == RULE_RANGE || o == RULE_NODE;
}

const char *rule_origin_to_string(enum rule_origin o);    /* "exclude", "device", ... */

/* Decide: 0 and *ret, or -EINVAL for missing arguments. */
int rules_decide(const struct policy *p, const struct memory_identity *id, struct rule_decision *ret);

/*
 * The first [device] rule, in file order, that matches the dax
 * attribution (with or without a zone). A rule that names a criterion
 * does not match an unknown value; size 0 = unknown: min_size then does
 * not exclude. NULL when none.
 */
const struct device_rule *rules_match_device(const struct policy *p, const struct memory_identity *id);

/*
 * memmap_on_memory for converting the device: the first matching [device]
 * rule that sets it (*ret_rule, may be NULL), else [pmem]'s (*ret_rule = NULL).
 * Never MEMMAP_UNSET.
 */
enum memmap_setting rules_memmap_setting(const struct policy *p, const struct memory_identity *id,
                                         const struct device_rule **ret_rule);

/* What known bad media of a dax device means for its memory. */
enum bad_media {
        BAD_MEDIA_NONE = 0,             /* none known in it, no dax device, or no list to know from (CXL, hmem) */
        BAD_MEDIA_ALLOWED,              /* bad or unknown media, and a [device] rule allows it */
        BAD_MEDIA_REFUSED,              /* known bad blocks: it stays out of system RAM */
        BAD_MEDIA_UNKNOWN,              /* its media could not be known: undecided, tried again */
};

const char *bad_media_to_string(enum bad_media m);     /* "none", "allowed", "refused", "unknown" */

/*
 * The verdict on id's bad media: the first matching [device] rule that
 * sets allow_badblocks decides (*ret_rule, may be NULL), else it is
 * refused (known) or unknown.
 */
enum bad_media rules_bad_media(const struct policy *p, const struct memory_identity *id,
                               const struct device_rule **ret_rule);

/*
 * Does a rule need the memdevs of a CXL region (match_cxl_memdev)? Then
 * memory whose memdevs could not all be read is undecided: fail safe.
 */
bool rules_use_cxl_memdev(const struct policy *p);

/*
 * The planner's reason for the decision: "excluded", "device rule NAME",
 * "range rule line N", "node rule", "pmem default", "default", "bad
 * media: ...", or the undecided text. Static or borrowed from the policy
 * when it can be; otherwise written to buf (size >= 256), which is
 * returned.
 */
const char *rules_reason(const struct rule_decision *d, char *buf, size_t size);
