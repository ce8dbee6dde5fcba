/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include "rules.h"
#include "string-table.h"
#include "util.h"

static const char *const rule_origin_table[_RULE_ORIGIN_MAX] = {
        [RULE_EXCLUDE] = "exclude",
        [RULE_DEVICE] = "device",
        [RULE_RANGE] = "range",
        [RULE_NODE] = "node",
        [RULE_PMEM_DEFAULT] = "pmem-default",
        [RULE_DEFAULT] = "default",
        [RULE_BAD_MEDIA] = "bad-media",
        [RULE_UNDECIDED] = "undecided",
};

DEFINE_STRING_TABLE_TO_STRING(rule_origin, enum rule_origin, "unknown")

static const char *const bad_media_table[] = {
        [BAD_MEDIA_NONE] = "none",
        [BAD_MEDIA_ALLOWED] = "allowed",
        [BAD_MEDIA_REFUSED] = "refused",
        [BAD_MEDIA_UNKNOWN] = "unknown",
};

DEFINE_STRING_TABLE_TO_STRING(bad_media, enum bad_media, "unknown")

static bool overlaps(uint64_t a_start, uint64_t a_end, uint64_t b_start, uint64_t b_end) {
        return a_start < b_end && b_start < a_end;
}

/* A node a rule may rely on: from a link or a device, not guessed from spans. */
static bool node_known(const struct memory_identity *id) {
        return id->node >= 0 && !id->node_guessed;
}

static bool exclusion_matches(const struct exclusion *e, const struct memory_identity *id) {
        switch (e->kind) {
        case EXCLUDE_NODE:
                return node_known(id) && id->node == e->node;
        case EXCLUDE_BLOCK:
                return !id->whole_device && id->block_id == e->start;
        case EXCLUDE_RANGE:
                /* A block: one byte of it excluded is enough. A device: only when all of it is. */
                if (id->whole_device)
                        return id->start >= e->start && id->end <= e->end && id->start < id->end;
                return overlaps(id->start, id->end, e->start, e->end);
        case EXCLUDE_DEVICE:
                return e->device && ((id->dax_device && streq(e->device, id->dax_device)) ||
                                     (id->memdev && streq(e->device, id->memdev)));
        }
        return false;
}

static bool device_rule_matches(const struct device_rule *r, const struct memory_identity *id) {
        if (r->device && !(id->dax_device && streq(r->device, id->dax_device)))
                return false;
        if (r->namespace_name &&
            !(id->namespace_name && streq(r->namespace_name, id->namespace_name)) &&
            !(id->namespace_uuid && streq(r->namespace_name, id->namespace_uuid)))
                return false;
        if (r->region >= 0 && r->region != id->region)
                return false;
        if (r->target_node >= 0 && !(node_known(id) && r->target_node == id->node))
                return false;
        if (r->min_size > 0 && id->dax_size > 0 && id->dax_size < r->min_size)
                return false;
        if (r->pmem_only && !id->on_pmem_region)
                return false;
        if (r->cxl_region && !(id->cxl_region && streq(r->cxl_region, id->cxl_region)))
                return false;
        if (r->cxl_memdev && !strlist_contains(id->cxl_memdevs, r->cxl_memdev))
                return false;
        return true;
}

const struct device_rule *rules_match_device(const struct policy *p, const struct memory_identity *id) {
        for (size_t i = 0; p && id && i < p->n_devices; i++)
                if (device_rule_matches(&p->devices[i], id))
                        return &p->devices[i];
        return NULL;
}

enum memmap_setting rules_memmap_setting(const struct policy *p, const struct memory_identity *id,
                                         const struct device_rule **ret_rule) {
        const struct device_rule *rule = NULL;
        enum memmap_setting m = MEMMAP_KEEP;

        for (size_t i = 0; p && id && i < p->n_devices && !rule; i++)
                if (p->devices[i].memmap_on_memory != MEMMAP_UNSET && device_rule_matches(&p->devices[i], id))
                        rule = &p->devices[i];
        if (rule)
                m = rule->memmap_on_memory;
        else if (p && p->memmap_on_memory != MEMMAP_UNSET)
                m = p->memmap_on_memory;
        if (ret_rule)
                *ret_rule = rule;
        return m;
}

enum bad_media rules_bad_media(const struct policy *p, const struct memory_identity *id,
                               const struct device_rule **ret_rule) {
        const struct device_rule *rule = NULL;

        if (!id || !id->dax_device || (id->bad_sectors == 0 && !id->badblocks_unknown)) {
                if (ret_rule)
                        *ret_rule = NULL;
                return BAD_MEDIA_NONE;
        }
        for (size_t i = 0; p && i < p->n_devices && !rule; i++)
                if (p->devices[i].allow_badblocks >= 0 && device_rule_matches(&p->devices[i], id))
                        rule = &p->devices[i];
        if (ret_rule)
                *ret_rule = rule;
        if (rule && rule->allow_badblocks > 0)
                return BAD_MEDIA_ALLOWED;
        return id->bad_sectors > 0 ? BAD_MEDIA_REFUSED : BAD_MEDIA_UNKNOWN;
}

static bool policy_uses_node(const struct policy *p) {
        for (size_t i = 0; i < p->n_exclusions; i++)
                if (p->exclusions[i].kind == EXCLUDE_NODE)
                        return true;
        for (size_t i = 0; i < p->n_nodes; i++)
                if (p->nodes[i].zone != ZONE_UNSET)
                        return true;
        for (size_t i = 0; i < p->n_devices; i++)
                if (p->devices[i].zone != ZONE_UNSET && p->devices[i].target_node >= 0)
                        return true;
        return false;
}

static bool policy_uses_device(const struct policy *p) {
        for (size_t i = 0; i < p->n_exclusions; i++)
                if (p->exclusions[i].kind == EXCLUDE_DEVICE)
                        return true;
        for (size_t i = 0; i < p->n_devices; i++)
                if (p->devices[i].zone != ZONE_UNSET)
                        return true;
        return p->pmem_zone != ZONE_UNSET && p->pmem_zone != p->default_zone;
}

bool rules_use_cxl_memdev(const struct policy *p) {
        for (size_t i = 0; p && i < p->n_devices; i++)
                if (p->devices[i].cxl_memdev)
                        return true;
        return false;
}

/* Fail safe: why a rule cannot be checked for this memory, or NULL. */
static const char *undecidable(const struct policy *p, const struct memory_identity *id) {
        if (!node_known(id) && policy_uses_node(p))
                return id->node >= 0 ? "undecided: node only guessed (no node link yet) and node rules apply"
                                     : "undecided: node not known (no node link yet) and node rules apply";
        if (id->dax_unknown && !id->dax_device && policy_uses_device(p))
                return "undecided: dax devices could not all be read and device rules apply";
        if (id->cxl_memdevs_unknown && rules_use_cxl_memdev(p))
                return "undecided: the memdevs of its CXL region could not all be read and match_cxl_memdev "
                       "rules apply";
        return NULL;
}

int rules_decide(const struct policy *p, const struct memory_identity *id, struct rule_decision *ret) {
        const struct device_rule *media_rule;
        const char *missing;

        if (!p || !id || !ret)
                return -EINVAL;

        for (size_t i = 0; i < p->n_exclusions; i++)
                if (exclusion_matches(&p->exclusions[i], id)) {
                        *ret = (struct rule_decision) { .zone = ZONE_SKIP, .origin = RULE_EXCLUDE,
                                                        .line = p->exclusions[i].line,
                                                        .exclusion = &p->exclusions[i] };
                        return 0;
                }
        /* Poisoned pages in system RAM go to whoever allocates them next: not without an admin's word. */
        switch (rules_bad_media(p, id, &media_rule)) {
        case BAD_MEDIA_REFUSED:
                *ret = (struct rule_decision) { .zone = ZONE_SKIP, .origin = RULE_BAD_MEDIA, .bad_media = true,
                                                .line = media_rule ? media_rule->line : 0,
                                                .name = media_rule ? (media_rule->name ?: "(unnamed)") : NULL,
                                                .dax_device = id->dax_device, .bad_sectors = id->bad_sectors };
                return 0;
        case BAD_MEDIA_UNKNOWN:
                *ret = (struct rule_decision) {
                        .zone = ZONE_SKIP, .origin = RULE_UNDECIDED, .bad_media = true,
                        .dax_device = id->dax_device,
                        .undecided = "undecided: its dax device's bad blocks could not be read, and no [device] "
                                     "rule allows bad blocks (allow_badblocks)",
                };
                return 0;
        default:
                break;
        }
        missing = undecidable(p, id);
        if (missing) {
                *ret = (struct rule_decision) { .zone = ZONE_SKIP, .origin = RULE_UNDECIDED, .undecided = missing };
                return 0;
        }

        /* [device] rules are about dax kmem memory. */
        for (size_t i = 0; id->dax_device && i < p->n_devices; i++) {
                const struct device_rule *d = &p->devices[i];

                if (d->zone != ZONE_UNSET && device_rule_matches(d, id)) {
                        *ret = (struct rule_decision) { .zone = d->zone, .origin = RULE_DEVICE, .line = d->line,
                                                        .name = d->name ?: "(unnamed)" };
                        return 0;
                }
        }
        for (size_t i = 0; i < p->n_ranges; i++) {
                const struct range_rule *rr = &p->ranges[i];

                if (rr->zone != ZONE_UNSET && id->start >= rr->start && id->start < rr->end) {
                        *ret = (struct rule_decision) { .zone = rr->zone, .origin = RULE_RANGE, .line = rr->line };
                        return 0;
                }
        }
        if (node_known(id))
                for (size_t i = 0; i < p->n_nodes; i++)
                        if (p->nodes[i].node == id->node && p->nodes[i].zone != ZONE_UNSET) {
                                *ret = (struct rule_decision) { .zone = p->nodes[i].zone, .origin = RULE_NODE,
                                                                .line = p->nodes[i].line };
                                return 0;
                        }
        if (id->dax_device && p->pmem_zone != ZONE_UNSET) {
                *ret = (struct rule_decision) { .zone = p->pmem_zone, .origin = RULE_PMEM_DEFAULT };
                return 0;
        }
        *ret = (struct rule_decision) {
                .zone = p->default_zone != ZONE_UNSET ? p->default_zone : ZONE_ONLINE,
                .origin = RULE_DEFAULT,
        };
        return 0;
}

const char *rules_reason(const struct rule_decision *d, char *buf, size_t size) {
        switch (d->origin) {
        case RULE_EXCLUDE:
                return "excluded";
        case RULE_DEVICE:
                snprintf(buf, size, "device rule %s", d->name ?: "(unnamed)");
                return buf;
        case RULE_RANGE:
                snprintf(buf, size, "range rule line %u", d->line);
                return buf;
        case RULE_NODE:
                return "node rule";
        case RULE_PMEM_DEFAULT:
                return "pmem default";
        case RULE_BAD_MEDIA:
                if (d->name)
                        snprintf(buf, size, "bad media: %" PRIu64 " bad 512-byte sectors in %s; device rule %s "
                                 "says allow_badblocks = no", d->bad_sectors, d->dax_device ?: "its dax device",
                                 d->name);
                else
                        snprintf(buf, size, "bad media: %" PRIu64 " bad 512-byte sectors in %s, and no [device] "
                                 "rule allows them (allow_badblocks)", d->bad_sectors,
                                 d->dax_device ?: "its dax device");
                return buf;
        case RULE_UNDECIDED:
                return d->undecided ?: "undecided";
        case RULE_DEFAULT:
        default:
                return "default";
        }
}
