/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <syslog.h>
#include "pmem-record.h"
#include "report.h"
#include "util.h"

/* The device's names and node. */
static void add_device(struct record *rec, const struct pmem_device *dev) {
        record_add(rec, FIELD_DEVICE "=%s", dev->name);
        if (dev->namespace_name)
                record_add(rec, FIELD_NAMESPACE "=%s", dev->namespace_name);
        if (dev->namespace_uuid)
                record_add(rec, FIELD_NAMESPACE_UUID "=%s", dev->namespace_uuid);
        record_add(rec, FIELD_REGION "=%d", dev->region);
        if (dev->cxl_region)
                record_add(rec, FIELD_CXL_REGION "=%s", dev->cxl_region);
        if (dev->cxl_memdevs)
                record_add(rec, FIELD_CXL_MEMDEV "=%s", dev->cxl_memdevs);
        record_add(rec, FIELD_NODE "=%d", dev->target_node);
}

int pmem_report_device(struct reporter *r, const struct pmem_device *dev, const struct pmem_convert_result *conv,
                       uint64_t online_usec, uint64_t total_usec, size_t blocks, uint64_t bytes) {
        _cleanup_(record_clear) struct record rec = {};
        char how[160];
        bool failed = conv && conv->error < 0;

        if (!r || !dev)
                return -EINVAL;

        if (failed)
                snprintf(how, sizeof(how), "conversion to system-ram failed: %s", strerror(-conv->error));
        else if (conv && !conv->already)
                snprintf(how, sizeof(how), "converted to system-ram in %.1f ms, ", (double) conv->bind_usec / 1000.0);
        else
                how[0] = '\0';

        record_add(&rec, "MESSAGE_ID=%s", MESSAGE_ID_DEVICE);
        record_add(&rec, "PRIORITY=%d", failed ? LOG_ERR : LOG_INFO);
        add_device(&rec, dev);
        record_add(&rec, FIELD_BIND_USEC "=%" PRIu64, conv && !conv->already ? conv->bind_usec : 0);
        record_add(&rec, FIELD_ONLINE_USEC "=%" PRIu64, online_usec);
        record_add(&rec, FIELD_TOTAL_USEC "=%" PRIu64, total_usec);
        record_add(&rec, FIELD_BLOCKS "=%zu", blocks);
        record_add(&rec, FIELD_BYTES "=%" PRIu64, bytes);
        if (conv && !conv->already && !failed)
                record_add(&rec, FIELD_MEMMAP_ON_MEMORY "=%s", pmem_memmap_to_string(conv->memmap.effective));
        if (conv && !conv->already && !failed && conv->memmap.unmet)
                record_add(&rec, FIELD_MEMMAP_REASON "=%s", conv->memmap.reason);
        if (failed) {
                record_add(&rec, FIELD_ERRNO "=%d", -conv->error);
                record_add(&rec, "MESSAGE=%s: %s", dev->name, how);
        } else
                record_add(&rec, "MESSAGE=%s%s%s%s: %s%zu blocks (%.2f GiB) online on node %d in %.1f ms, "
                           "%.1f ms in all", dev->name, dev->namespace_name ? " (" : "",
                           dev->namespace_name ?: "", dev->namespace_name ? ")" : "", how, blocks,
                           (double) bytes / (double) (1ULL << 30), dev->target_node,
                           (double) online_usec / 1000.0, (double) total_usec / 1000.0);
        return record_emit(r, &rec);
}

int pmem_report_bad_media(struct reporter *r, const struct pmem_device *dev, enum bad_media media, size_t blocks,
                          const char *reason) {
        _cleanup_(record_clear) struct record rec = {};
        char what[96];

        if (!r || !dev || !reason || (media != BAD_MEDIA_REFUSED && media != BAD_MEDIA_UNKNOWN))
                return -EINVAL;

        if (dev->mode == PMEM_MODE_SYSTEM_RAM)
                snprintf(what, sizeof(what), "%zu block%s left offline", blocks, blocks == 1 ? "" : "s");
        else
                snprintf(what, sizeof(what), "not converted to system-ram");
        record_add(&rec, "MESSAGE_ID=%s", MESSAGE_ID_BAD_MEDIA);
        record_add(&rec, "PRIORITY=%d", LOG_WARNING);
        add_device(&rec, dev);
        record_add(&rec, FIELD_MODE "=%s", pmem_mode_to_string(dev->mode));
        record_add(&rec, FIELD_MEDIA "=%s", bad_media_to_string(media));
        record_add(&rec, FIELD_BADBLOCKS "=%" PRIu64, dev->bad_sectors);
        if (dev->bad_sectors > 0)
                record_add(&rec, FIELD_BAD_ADDRESS "=0x%" PRIx64, dev->first_bad);
        record_add(&rec, FIELD_BLOCKS "=%zu", blocks);
        if (dev->badblocks_error < 0)
                record_add(&rec, FIELD_ERRNO "=%d", -dev->badblocks_error);
        record_add(&rec, FIELD_REASON "=%s", reason);
        record_add(&rec, "MESSAGE=%s%s%s%s: %s: %s", dev->name, dev->namespace_name ? " (" : "",
                   dev->namespace_name ?: "", dev->namespace_name ? ")" : "", what, reason);
        return record_emit(r, &rec);
}
