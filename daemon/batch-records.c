/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a batch leaves in the log: the batch record, one record per node
 * group, one failure record per block that failed or was left offline.
 */
#include <inttypes.h>
#include "batch-records.h"
#include "memdev.h"
#include "util.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* "16.0 GiB" */
static void format_bytes(char *buf, size_t size, uint64_t bytes) {
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double v = (double) bytes;
        size_t u = 0;

        while (v >= 1024.0 && u + 1 < ELEMENTSOF(units)) {
                v /= 1024.0;
                u++;
        }
        if (u == 0)
                snprintf(buf, size, "%" PRIu64 " B", bytes);
        else
                snprintf(buf, size, "%.1f %s", v, units[u]);
}

static double gibps(uint64_t bytes, uint64_t usec) {
        if (usec == 0)
                return 0.0;
        return (double) bytes / GIB / ((double) usec / (double) USEC_PER_SEC);
}

/* Counters shared by the batch and the node records. */
struct tally {
        size_t ok, failed, already, not_attempted;
        uint64_t bytes;
        uint64_t start_usec, end_usec;
        const uint64_t *lat;
        size_t n_lat;
};

static void tally_blocks(struct tally *t, const struct block_result *b, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (b[i].not_attempted)
                        t->not_attempted++;
                else if (b[i].already_online && b[i].error == 0)
                        t->already++;
        }
}

static size_t tally_attempted(const struct tally *t) {
        return t->ok + t->failed + t->already;
}

static uint64_t tally_duration(const struct tally *t) {
        return t->end_usec > t->start_usec ? t->end_usec - t->start_usec : 0;
}

static void add_tally(struct record *rec, const struct tally *t) {
        uint64_t dur = tally_duration(t);

        record_add(rec, FIELD_BLOCKS "=%zu", tally_attempted(t));
        record_add(rec, FIELD_BYTES "=%" PRIu64, t->bytes);
        record_add(rec, FIELD_FAILED "=%zu", t->failed);
        record_add(rec, FIELD_ALREADY_ONLINE "=%zu", t->already);
        record_add(rec, FIELD_NOT_ATTEMPTED "=%zu", t->not_attempted);
        record_add(rec, FIELD_DURATION_USEC "=%" PRIu64, dur);
        record_add(rec, FIELD_GIBPS "=%.3f", gibps(t->bytes, dur));
        record_add(rec, FIELD_P50_USEC "=%" PRIu64, percentile_usec(t->lat, t->n_lat, 50));
        record_add(rec, FIELD_P99_USEC "=%" PRIu64, percentile_usec(t->lat, t->n_lat, 99));
        record_add(rec, FIELD_MAX_USEC "=%" PRIu64, t->n_lat > 0 ? t->lat[t->n_lat - 1] : 0);
}

/* The tail of a summary: ", 2 already online, 3 not attempted (stopping)", or "". */
static int tally_extra(const struct tally *t, char **ret) {
        char a[64] = "", n[64] = "";
        char *s;

        if (t->already > 0)
                snprintf(a, sizeof(a), ", %zu already online", t->already);
        if (t->not_attempted > 0)
                snprintf(n, sizeof(n), ", %zu not attempted (stopping)", t->not_attempted);
        if (asprintf(&s, "%s%s", a, n) < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* pmem attribution of plan items: comma-separated unique values. */
struct attribution {
        char *device, *kind, *namespace_name, *region, *cxl_region, *cxl_memdev;
};

static void attribution_done(struct attribution *a) {
        free(a->device);
        free(a->kind);
        free(a->namespace_name);
        free(a->region);
        free(a->cxl_region);
        free(a->cxl_memdev);
}

/* Each name of a comma-separated list, once. */
static int list_add_each(char **list, const char *names) {
        _cleanup_free_ char *copy = names ? strdup(names) : NULL;
        int r = 0;

        if (names && !copy)
                return -ENOMEM;
        for (char *p = copy, *next; p && r >= 0; p = next) {
                next = strchr(p, ',');
                if (next)
                        *next++ = '\0';
                r = strlist_add_unique(list, p);
        }
        return r;
}

static int attribution_collect(struct attribution *a, const struct plan_item *items, size_t n) {
        int r = 0;

        for (size_t i = 0; i < n; i++) {
                const struct mem_block *b = items[i].block;
                char region[32];

                if (!b)
                        continue;
                /* The dax device's name, else the hotplug device's (a DIMM, virtio-mem). */
                RET_GATHER(r, strlist_add_unique(&a->device, b->device ?: (b->memdev ? b->memdev->name : NULL)));
                if (b->memdev || b->device)
                        RET_GATHER(r, strlist_add_unique(&a->kind, memdev_kind_to_string(b->device ? MEMDEV_DAX : b->memdev->kind)));
                RET_GATHER(r, strlist_add_unique(&a->namespace_name, b->namespace_name));
                RET_GATHER(r, strlist_add_unique(&a->cxl_region, b->cxl_region));
                RET_GATHER(r, list_add_each(&a->cxl_memdev, b->cxl_memdevs));
                if (b->region >= 0) {
                        snprintf(region, sizeof(region), "%d", b->region);
                        RET_GATHER(r, strlist_add_unique(&a->region, region));
                }
        }
        return r;
}

/* MEMONLINE_DEVICE/NAMESPACE/REGION/CXL_REGION/CXL_MEMDEV, only for those present. */
static void attribution_add(struct record *rec, const struct attribution *a) {
        if (a->device)
                record_add(rec, FIELD_DEVICE "=%s", a->device);
        if (a->kind)
                record_add(rec, FIELD_DEVICE_KIND "=%s", a->kind);
        if (a->namespace_name)
                record_add(rec, FIELD_NAMESPACE "=%s", a->namespace_name);
        if (a->region)
                record_add(rec, FIELD_REGION "=%s", a->region);
        if (a->cxl_region)
                record_add(rec, FIELD_CXL_REGION "=%s", a->cxl_region);
        if (a->cxl_memdev)
                record_add(rec, FIELD_CXL_MEMDEV "=%s", a->cxl_memdev);
}

static int add_attribution(struct record *rec, const struct plan_item *items, size_t n) {
        _cleanup_(attribution_done) struct attribution a = {};
        int r;

        r = attribution_collect(&a, items, n);
        if (r < 0)
                return r;
        attribution_add(rec, &a);
        return 0;
}

static int zones_format(unsigned mask, char **ret) {
        _cleanup_free_ char *list = NULL;

        for (unsigned z = 0; z < 8 * sizeof(mask); z++)
                if (mask & (1U << z))
                        if (strlist_add_unique(&list, zone_to_string((enum zone) z)) < 0)
                                return -ENOMEM;
        if (!list) {
                list = strdup("");
                if (!list)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(list);
        return 0;
}

static const char *errno_name(int err, char *buf, size_t size) {
        const char *n = NULL;

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
        n = strerrorname_np(err);
#endif
        if (n)
                return n;
        snprintf(buf, size, "%d", err);
        return buf;
}

/*
 * From the first event to the first block online and to the last write's
 * end; each absent without an event (coldplug) or without such a block.
 */
static void add_latency(struct record *rec, uint64_t first_event_usec, uint64_t first_online_usec,
                        uint64_t end_usec) {
        if (first_event_usec == 0)
                return;
        if (first_online_usec >= first_event_usec)
                record_add(rec, FIELD_FIRST_LATENCY_USEC "=%" PRIu64, first_online_usec - first_event_usec);
        if (end_usec >= first_event_usec)
                record_add(rec, FIELD_LATENCY_USEC "=%" PRIu64, end_usec - first_event_usec);
}

static int emit_batch(struct reporter *r, const struct batch_info *info, const struct plan *plan,
                      const struct online_result *res, uint64_t seq) {
        _cleanup_(record_clear) struct record rec = {};
        _cleanup_(attribution_done) struct attribution a = {};
        _cleanup_free_ uint64_t *lat = NULL;
        _cleanup_free_ char *extra = NULL;
        struct tally t = {
                .failed = res->failed,
                .bytes = res->bytes,
                .start_usec = res->start_usec,
                .end_usec = res->end_usec,
        };
        char size[32];
        size_t n_lat = 0;
        int k = 0;

        for (size_t g = 0; g < res->n_groups; g++) {
                t.ok += res->groups[g].blocks;
                n_lat += res->groups[g].n_lat;
        }
        if (n_lat > 0) {
                lat = calloc(n_lat, sizeof(*lat));
                if (!lat)
                        return -ENOMEM;
                n_lat = 0;
                for (size_t g = 0; g < res->n_groups; g++)
                        for (size_t i = 0; i < res->groups[g].n_lat; i++)
                                lat[n_lat++] = res->groups[g].lat_sorted[i];
                sort_u64(lat, n_lat);
        }
        t.lat = lat;
        t.n_lat = n_lat;
        tally_blocks(&t, res->blocks, res->n_blocks);
        if (tally_extra(&t, &extra) < 0)
                return -ENOMEM;

        format_bytes(size, sizeof(size), t.bytes);
        record_add(&rec, "MESSAGE_ID=%s", MESSAGE_ID_BATCH);
        record_add(&rec, "MESSAGE=Onlined %zu block%s (%s) on %zu node%s in %.3f s, %.2f GiB/s, %zu failed%s",
                   t.ok, t.ok == 1 ? "" : "s", size, res->n_groups, res->n_groups == 1 ? "" : "s",
                   (double) tally_duration(&t) / (double) USEC_PER_SEC,
                   gibps(t.bytes, tally_duration(&t)), t.failed, extra);
        record_add(&rec, "PRIORITY=%d", t.failed > 0 ? LOG_WARNING : LOG_INFO);
        record_add(&rec, FIELD_BATCH "=%" PRIu64, seq);
        record_add(&rec, FIELD_TRIGGER "=%s", info->trigger ? info->trigger : "unknown");
        add_tally(&rec, &t);
        record_add(&rec, FIELD_SKIPPED "=%zu", plan->n_skipped);
        record_add(&rec, FIELD_NODES "=%zu", res->n_groups);
        add_latency(&rec, info->first_event_usec, res->first_online_usec, res->end_usec);
        record_add(&rec, FIELD_CPU_USEC "=%" PRIu64, info->cpu_usec);
        record_add(&rec, FIELD_PREPARE_USEC "=%" PRIu64, info->prepare_usec);
        for (size_t g = 0; g < plan->n_groups; g++)
                RET_GATHER(k, attribution_collect(&a, plan->groups[g].items, plan->groups[g].n_items));
        if (k < 0)
                return k;
        attribution_add(&rec, &a);
        return record_emit(r, &rec);
}

static int emit_node(struct reporter *r, const struct batch_info *info, const struct plan_group *pg,
                     const struct group_result *gr, const struct block_result *blocks, uint64_t seq) {
        _cleanup_(record_clear) struct record rec = {};
        _cleanup_free_ char *zones = NULL, *extra = NULL;
        struct tally t = {
                .ok = gr->blocks,
                .failed = gr->failed,
                .bytes = gr->bytes,
                .start_usec = gr->start_usec,
                .end_usec = gr->end_usec,
                .lat = gr->lat_sorted,
                .n_lat = gr->n_lat,
        };
        const char *cpus = gr->cpus_used ? gr->cpus_used : "";
        char size[32];
        int k = 0;

        tally_blocks(&t, blocks, pg->n_items);
        if (zones_format(gr->zones_used, &zones) < 0 || tally_extra(&t, &extra) < 0)
                return -ENOMEM;

        format_bytes(size, sizeof(size), t.bytes);
        record_add(&rec, "MESSAGE_ID=%s", MESSAGE_ID_NODE);
        record_add(&rec, "MESSAGE=Node %d: onlined %zu block%s (%s) as %s from CPUs %s in %.3f s, %.2f GiB/s, %zu failed%s",
                   gr->node, t.ok, t.ok == 1 ? "" : "s", size, *zones ? zones : "-", *cpus ? cpus : "-",
                   (double) tally_duration(&t) / (double) USEC_PER_SEC,
                   gibps(t.bytes, tally_duration(&t)), t.failed, extra);
        record_add(&rec, "PRIORITY=%d", t.failed > 0 ? LOG_WARNING : LOG_INFO);
        record_add(&rec, FIELD_BATCH "=%" PRIu64, seq);
        record_add(&rec, FIELD_TRIGGER "=%s", info->trigger ? info->trigger : "unknown");
        record_add(&rec, FIELD_NODE "=%d", gr->node);
        record_add(&rec, FIELD_WRITER_NODE "=%d", gr->writer_node);
        record_add(&rec, FIELD_ZONE "=%s", zones);
        record_add(&rec, FIELD_CPUS "=%s", cpus);
        add_tally(&rec, &t);
        add_latency(&rec, info->first_event_usec, gr->first_online_usec, gr->end_usec);
        k = add_attribution(&rec, pg->items, pg->n_items);
        if (k < 0)
                return k;
        return record_emit(r, &rec);
}

static int emit_failure(struct reporter *r, const struct plan_item *item, const struct block_result *b,
                        uint64_t seq) {
        _cleanup_(record_clear) struct record rec = {};
        char name[16];
        int err = b->error < 0 ? -b->error : b->error;
        const char *zone = zone_to_string(b->zone);
        int k = 0;

        record_add(&rec, "MESSAGE_ID=%s", MESSAGE_ID_FAILURE);
        record_add(&rec, "MESSAGE=Failed to online memory%" PRIu64 " (node %d) as %s after %u attempt%s: %s",
                   b->id, b->node, zone, b->attempts, b->attempts == 1 ? "" : "s", strerror(err));
        record_add(&rec, "PRIORITY=%d", LOG_ERR);
        record_add(&rec, FIELD_BATCH "=%" PRIu64, seq);
        record_add(&rec, FIELD_BLOCK "=memory%" PRIu64, b->id);
        record_add(&rec, FIELD_NODE "=%d", b->node);
        record_add(&rec, FIELD_ZONE "=%s", zone);
        record_add(&rec, FIELD_ERRNO "=%d", err);
        record_add(&rec, FIELD_ERRNO_NAME "=%s", errno_name(err, name, sizeof(name)));
        record_add(&rec, FIELD_ATTEMPTS "=%u", b->attempts);
        if (item && item->by_rule && b->error == -EINVAL)
                record_add(&rec, FIELD_REASON "=the kernel refused %s, which %s asks; the rule stands and the "
                           "block stays offline", zone, item->reason ?: "a rule");
        if (item) {
                k = add_attribution(&rec, item, 1);
                if (k < 0)
                        return k;
        }
        return record_emit(r, &rec);
}

/* A failure record for a block the daemon left offline on purpose: nothing was written. */
static int emit_left_offline(struct reporter *r, uint64_t id, int node, int error, const char *reason,
                             const struct plan_item *item, uint64_t batch) {
        _cleanup_(record_clear) struct record rec = {};
        char name[16];
        int k = 0;

        record_add(&rec, "MESSAGE_ID=%s", MESSAGE_ID_FAILURE);
        record_add(&rec, "MESSAGE=Left memory%" PRIu64 " (node %d) offline: %s; trying again later", id, node,
                   reason);
        record_add(&rec, "PRIORITY=%d", LOG_ERR);
        record_add(&rec, FIELD_BATCH "=%" PRIu64, batch);
        record_add(&rec, FIELD_BLOCK "=memory%" PRIu64, id);
        record_add(&rec, FIELD_NODE "=%d", node);
        record_add(&rec, FIELD_ZONE "=skip");
        record_add(&rec, FIELD_ERRNO "=%d", error);
        record_add(&rec, FIELD_ERRNO_NAME "=%s", errno_name(error, name, sizeof(name)));
        record_add(&rec, FIELD_ATTEMPTS "=0");
        record_add(&rec, FIELD_REASON "=%s", reason);
        if (item) {
                k = add_attribution(&rec, item, 1);
                if (k < 0)
                        return k;
        }
        return record_emit(r, &rec);
}

int report_undecided(struct reporter *r, const struct plan_item *item, uint64_t batch) {
        if (!r || !item || !item->block)
                return -EINVAL;
        return emit_left_offline(r, item->block->id, item->block->node, EAGAIN, item->reason ?: "undecided", item,
                                 batch);
}

int report_unreadable(struct reporter *r, uint64_t id, int node, int error, uint64_t batch) {
        char reason[128];

        if (!r || error >= 0)
                return -EINVAL;
        snprintf(reason, sizeof(reason), "its state cannot be read (%s)", strerror(-error));
        return emit_left_offline(r, id, node, -error, reason, NULL, batch);
}

int report_batch(struct reporter *r, const struct batch_info *info, const struct plan *plan,
                 const struct online_result *res) {
        size_t first = 0;
        uint64_t seq;
        int ret = 0;

        if (!r || !info || !plan || !res)
                return -EINVAL;
        if (res->n_blocks == 0)
                return 0;
        /* Results are in plan order, group by group; anything else is a caller bug. */
        if (res->n_groups != plan->n_groups)
                return -EINVAL;
        for (size_t g = 0; g < plan->n_groups; g++)
                first += plan->groups[g].n_items;
        if (first != res->n_blocks)
                return -EINVAL;

        seq = ++r->batch_seq;
        RET_GATHER(ret, emit_batch(r, info, plan, res, seq));

        first = 0;
        for (size_t g = 0; g < plan->n_groups; g++) {
                RET_GATHER(ret, emit_node(r, info, &plan->groups[g], &res->groups[g], res->blocks + first, seq));
                first += plan->groups[g].n_items;
        }

        first = 0;
        for (size_t g = 0; g < plan->n_groups; g++) {
                for (size_t i = 0; i < plan->groups[g].n_items; i++) {
                        const struct block_result *b = &res->blocks[first + i];

                        if (b->not_attempted || b->error == 0)
                                continue;
                        RET_GATHER(ret, emit_failure(r, &plan->groups[g].items[i], b, seq));
                }
                first += plan->groups[g].n_items;
        }
        return ret;
}
