/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include "escape.h"
#include "pmem-badblocks.h"
#include "pmem-decide.h"
#include "pmem-memmap.h"
#include "rules.h"
#include "util.h"

const char *pmem_action_to_string(enum pmem_action a) {
        return a == PMEM_ACTION_CONVERT ? "convert" : "skip";
}

static void reasonf(struct pmem_decision *d, const char *fmt, ...) _printf_(2, 3);
static void reasonf(struct pmem_decision *d, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
        va_end(ap);
}

/* What the rules may know about a dax device before it is converted: all of it, as one. */
static struct memory_identity device_identity(const struct pmem_device *dev) {
        struct memory_identity id = {
                .whole_device = true,
                .block_id = UINT64_MAX,
                .node = dev->target_node,
                .dax_device = dev->name,
                .namespace_name = dev->namespace_name,
                .namespace_uuid = dev->namespace_uuid,
                .region = dev->region,
                .dax_size = dev->size,
                .on_pmem_region = dev->on_pmem_region,
                .cxl_region = dev->cxl_region,
                .cxl_memdevs = dev->cxl_memdevs,
                .cxl_memdevs_unknown = dev->cxl_memdevs_unknown,
                .memdev = dev->name,
                .bad_sectors = dev->bad_sectors,
                .badblocks_unknown = dev->badblocks_error < 0,
        };

        /* The span of its ranges; a device without ranges is excluded by no range. */
        for (size_t i = 0; i < dev->n_ranges; i++) {
                if (i == 0 || dev->ranges[i].start < id.start)
                        id.start = dev->ranges[i].start;
                if (dev->ranges[i].end > id.end)
                        id.end = dev->ranges[i].end;
        }
        /* Ranges with a gap are not one span: a range exclusion must hold each of them. */
        for (size_t i = 1; i < dev->n_ranges; i++)
                if (dev->ranges[i].start != dev->ranges[i - 1].end)
                        id.start = id.end = 0;
        return id;
}

enum bad_media pmem_bad_media(const struct pmem_device *dev, const struct policy *p,
                              const struct device_rule **ret_rule) {
        struct memory_identity id = device_identity(dev);

        return rules_bad_media(p, &id, ret_rule);
}

/* "8", "8+" (at least: the list is incomplete), "?" (unknown); "-" with no list (not on an nd region). */
void pmem_bad_sectors_format(const struct pmem_device *dev, char *buf, size_t size) {
        if (dev->region < 0)
                snprintf(buf, size, "-");
        else if (dev->badblocks_error < 0 && dev->bad_sectors == 0)
                snprintf(buf, size, "?");
        else
                snprintf(buf, size, "%" PRIu64 "%s", dev->bad_sectors, dev->badblocks_error < 0 ? "+" : "");
}

/*
 * Known bad media keeps a device out of system RAM, and media that cannot
 * be known does for now (retried), unless a [device] rule allows it: true
 * with the reason set. An allowance is added to why.
 */
static bool media_refuses(struct pmem_decision *d, const struct pmem_device *dev, const struct policy *p,
                          char *why, size_t why_size) {
        const char *name;
        char said[160] = "";

        d->media = pmem_bad_media(dev, p, &d->media_rule);
        name = d->media_rule ? (d->media_rule->name ?: "(unnamed)") : NULL;
        if (name)
                snprintf(said, sizeof(said), "device rule %s says allow_badblocks = %s", name,
                         d->media_rule->allow_badblocks > 0 ? "yes" : "no");
        switch (d->media) {
        case BAD_MEDIA_REFUSED:
                reasonf(d, "refused: %" PRIu64 "%s bad 512-byte sectors in its memory, the first at 0x%" PRIx64
                        " (region%d badblocks); %s", dev->bad_sectors, dev->badblocks_error < 0 ? " or more" : "",
                        dev->first_bad, dev->region,
                        name ? said : "a [device] rule with allow_badblocks = yes converts it anyway");
                return true;
        case BAD_MEDIA_UNKNOWN:
                reasonf(d, "undecided: the bad blocks of region%d cannot be known (%s); %s", dev->region,
                        pmem_badblocks_describe(dev->badblocks_error),
                        name ? said : "a [device] rule with allow_badblocks = yes converts it anyway");
                return true;
        case BAD_MEDIA_ALLOWED: {
                size_t len = strlen(why);

                if (dev->bad_sectors > 0)
                        snprintf(why + len, why_size - len, "; %" PRIu64 "%s bad sectors: %s", dev->bad_sectors,
                                 dev->badblocks_error < 0 ? " or more" : "", said);
                else
                        snprintf(why + len, why_size - len, "; bad blocks unknown: %s", said);
                return false;
        }
        default:
                return false;
        }
}

/* Why the rules exclude the device, for the decision's reason. */
static void exclusion_reason(const struct rule_decision *rd, char *why, size_t why_size) {
        const struct exclusion *e = rd->exclusion;

        if (e && e->kind == EXCLUDE_NODE)
                snprintf(why, why_size, "excluded: node %d (line %u)", e->node, e->line);
        else if (e && e->kind == EXCLUDE_RANGE)
                snprintf(why, why_size, "excluded: range (line %u)", e->line);
        else
                snprintf(why, why_size, "excluded (line %u)", rd->line);
}

int pmem_decide_conf(const struct pmem_device *dev, const struct policy *p, const struct daxctl_conf *conf,
                     struct pmem_decision *ret) {
        struct pmem_decision d = { .action = PMEM_ACTION_SKIP };
        const struct daxctl_claim *claim;
        struct memory_identity id;
        struct rule_decision rd;
        const char *rule_name;
        char why[256];
        size_t n_claims = 0;
        int r;

        if (!dev || !p || !ret)
                return -EINVAL;

        id = device_identity(dev);
        d.rule = rules_match_device(p, &id);
        rule_name = d.rule ? (d.rule->name ?: "(unnamed)") : NULL;
        r = rules_decide(p, &id, &rd);
        if (r < 0)
                return r;
        d.zone = rd.zone;
        d.memmap_on_memory = rules_memmap_setting(p, &id, &d.memmap_rule);
        if (rd.origin == RULE_EXCLUDE) {
                exclusion_reason(&rd, d.reason, sizeof(d.reason));
                goto done;
        }
        if (dev->mode != PMEM_MODE_DEVDAX) {
                reasonf(&d, "not devdax (mode %s)", pmem_mode_to_string(dev->mode));
                goto done;
        }
        if (dev->cxl_memdevs_unknown && rules_use_cxl_memdev(p)) {
                /* A rule naming a memdev may be about this device: convert only once that is known. */
                reasonf(&d, "undecided: the memdevs of %s could not all be read and match_cxl_memdev rules apply",
                        dev->cxl_region);
                goto done;
        }
        if (d.rule && d.rule->convert == 0) {
                reasonf(&d, "device rule %s: convert=no", rule_name);
                goto done;
        }
        if (d.rule && d.rule->convert > 0)
                snprintf(why, sizeof(why), "device rule %s", rule_name);
        else if (!p->convert_devdax) {
                reasonf(&d, "convert_devdax=no");
                goto done;
        } else if (!dev->on_pmem_region) {
                /* convert_devdax is for pmem; hmem/CXL memory needs a rule that names it. */
                reasonf(&d, "not on a pmem region (convert_devdax covers pmem; add a [device] rule with convert=yes)");
                goto done;
        } else
                snprintf(why, sizeof(why), "convert_devdax=yes");

        claim = pmem_daxctl_conf_find(conf, dev->namespace_uuid, &n_claims);
        d.daxctl_claimed = claim != NULL;
        if (claim && p->respect_daxctl) {
                char more[64] = "";

                if (n_claims > 1)
                        snprintf(more, sizeof(more), " (and %zu more entries)", n_claims - 1);
                if (streq(claim->mode, "devdax"))
                        reasonf(&d, "claimed by %s%s: daxctl keeps it devdax (respect_daxctl=yes)", claim->file,
                                more);
                else
                        reasonf(&d, "claimed by %s%s: daxctl will reconfigure it (respect_daxctl=yes); %s",
                                claim->file, more,
                                claim->online == 0 ? "memonlined onlines its memory (online=false)" :
                                "daxctl onlines its memory itself (online=true)");
                goto done;
        }
        if (media_refuses(&d, dev, p, why, sizeof(why)))
                goto done;
        d.action = PMEM_ACTION_CONVERT;
        if (claim)
                reasonf(&d, "%s; %s also claims it (respect_daxctl=no): whichever runs second finds it converted",
                        why, claim->file);
        else
                reasonf(&d, "%s", why);
done:
        *ret = d;
        return 0;
}

/* daxctl's configuration in dir; none (empty) without a dir. */
static int load_daxctl_conf(const char *dir, struct daxctl_conf *conf) {
        return dir ? pmem_daxctl_conf_load(dir, conf) : 0;
}

int pmem_decide(const struct pmem_device *dev, const struct policy *p, const char *daxctl_confdir,
                struct pmem_decision *ret) {
        _cleanup_(pmem_daxctl_conf_clearp) struct daxctl_conf conf = {};
        int r;

        r = load_daxctl_conf(daxctl_confdir, &conf);
        if (r < 0)
                return r;
        return pmem_decide_conf(dev, p, daxctl_confdir ? &conf : NULL, ret);
}

/* The reason goes in double quotes: keep it one parseable token, with the files' text escaped. */
static void fprint_quoted(FILE *out, const char *s) {
        size_t size = 4 * strlen(s) + 1;
        _cleanup_free_ char *buf = malloc(size);

        if (buf)
                escape_text(buf, size, s);
        fputc('"', out);
        for (const char *c = buf ?: ""; *c; c++)
                fputc(*c == '"' ? '\'' : *c, out);
        fputc('"', out);
}

int pmem_print_decisions(const struct pmem_devices *d, const struct policy *p, const char *daxctl_confdir,
                         FILE *out) {
        _cleanup_(pmem_daxctl_conf_clearp) struct daxctl_conf conf = {};
        int r;

        r = load_daxctl_conf(daxctl_confdir, &conf);
        if (r < 0)
                return r;
        for (size_t i = 0; d && i < d->n; i++) {
                const struct pmem_device *dev = &d->devices[i];
                struct pmem_memmap_outcome memmap;
                struct pmem_decision dec;
                char bad[32];

                r = pmem_decide_conf(dev, p, &conf, &dec);
                if (r < 0)
                        return r;
                fprintf(out, "device=%s action=%s zone=%s reason=", dev->name, pmem_action_to_string(dec.action),
                        zone_to_string(dec.zone));
                fprint_quoted(out, dec.reason);
                pmem_memmap_plan(dec.action == PMEM_ACTION_CONVERT ? dec.memmap_on_memory : MEMMAP_KEEP,
                                 dev->memmap_on_memory, d->memmap_global, NULL, &memmap);
                fprintf(out, " namespace=%s region=%d node=%d size=%" PRIu64 " mode=%s",
                        dev->namespace_name ?: "-", dev->region, dev->target_node, dev->size,
                        pmem_mode_to_string(dev->mode));
                if (dev->cxl_region)
                        fprintf(out, " cxl_region=%s cxl_decoder=%s cxl_memdev=%s%s", dev->cxl_region,
                                dev->cxl_decoder ?: "-", dev->cxl_memdevs ?: "-",
                                dev->cxl_memdevs_unknown ? " cxl_memdev_unknown=1" : "");
                fprintf(out, " memmap_on_memory=%s", pmem_memmap_to_string(memmap.effective));
                if (memmap.reason[0]) {
                        fputs(" memmap_reason=", out);
                        fprint_quoted(out, memmap.reason);
                }
                if (dev->bad_sectors > 0 || dev->badblocks_error < 0) {
                        pmem_bad_sectors_format(dev, bad, sizeof(bad));
                        fprintf(out, " badblocks=%s", bad);
                }
                fputc('\n', out);
        }
        for (size_t i = 0; i < conf.n_ignored; i++) {
                fputs("daxctl-conf-ignored=", out);
                fprint_quoted(out, conf.ignored[i]);
                fputc('\n', out);
        }
        if (fflush(out) != 0 || ferror(out))
                return -EIO;
        return 0;
}
