/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include "coexist.h"
#include "escape.h"
#include "metrics.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

/*
 * The Prometheus text exposition format, version 0.0.4: for each family
 * "# HELP", "# TYPE", then its samples, contiguous. Names follow
 * Prometheus's conventions: base units (_bytes, _seconds), _total on
 * counters only, _info for the build's labels.
 */

void metrics_machine_done(struct metrics_machine *m) {
        free(m->nodes);
        for (size_t i = 0; i < m->n_devices; i++)
                free(m->devices[i].name);
        free(m->devices);
        free(m->auto_online);
        *m = (struct metrics_machine) {};
}

/* Per node: index id for nodes 0..max, max + 1 for NODE_NONE, so the result is in order without a sort. */
static int read_nodes(const struct topology *t, struct metrics_machine *m) {
        _cleanup_free_ struct metrics_node *all = NULL;
        _cleanup_free_ bool *present = NULL;
        int max = MAX(t->max_node, 0);
        size_t n_all;

        for (size_t i = 0; i < t->n_blocks; i++)
                max = MAX(max, t->blocks[i].node);
        n_all = (size_t) max + 2;
        all = calloc(n_all, sizeof(*all));
        present = calloc(n_all, sizeof(*present));
        if (!all || !present)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_nodes; i++)
                if (t->nodes[i].id >= 0 && t->nodes[i].id <= max)
                        present[t->nodes[i].id] = true;
        for (size_t i = 0; i < t->n_blocks; i++) {
                size_t k = t->blocks[i].node < 0 ? n_all - 1 : (size_t) t->blocks[i].node;

                present[k] = true;
                block_tally_add(&all[k].tally, &t->blocks[i]);
        }
        m->nodes = calloc(n_all, sizeof(*m->nodes));
        if (!m->nodes)
                return -ENOMEM;
        for (size_t k = 0; k < n_all; k++)
                if (present[k]) {
                        m->nodes[m->n_nodes] = all[k];
                        m->nodes[m->n_nodes++].node = k == n_all - 1 ? NODE_NONE : (int) k;
                }
        return 0;
}

static int read_devices(const struct topology *t, struct metrics_machine *m) {
        if (!t->devices_known || t->devices.n == 0)
                return 0;
        m->devices = calloc(t->devices.n, sizeof(*m->devices));
        if (!m->devices)
                return -ENOMEM;
        for (size_t i = 0; i < t->devices.n; i++) {
                const struct memdev *d = &t->devices.devs[i];
                struct metrics_device *md = &m->devices[m->n_devices];

                *md = (struct metrics_device) { .kind = d->kind };
                status_tally_range(t, d->start, d->end, &md->tally, NULL);
                /* a device whose blocks are gone since it was read */
                if (md->tally.blocks == 0)
                        continue;
                md->name = strdup(d->name);
                if (!md->name)
                        return -ENOMEM;
                m->n_devices++;
        }
        return 0;
}

int metrics_machine_read(const struct topology *t, struct metrics_machine *ret) {
        _cleanup_(metrics_machine_done) struct metrics_machine m = { .block_size = t->block_size };
        int r;

        r = read_nodes(t, &m);
        if (r >= 0)
                r = read_devices(t, &m);
        if (r < 0)
                return r;
        r = sysfs_read(t->sysfs_root, AUTO_ONLINE_ATTR, &m.auto_online);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                m.auto_online = NULL;   /* an old kernel, or unreadable: the series is left out */
        metrics_machine_done(ret);
        *ret = m;
        m = (struct metrics_machine) {};
        return 0;
}

/* ---- rendering ------------------------------------------------------------ */

static void family(FILE *out, const char *name, const char *type, const char *help) {
        fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * A label value in its quotes. Text from sysfs is first made safe for a
 * terminal and valid UTF-8 (the format requires it, and a file that fails
 * to parse loses all our series), then the format's escapes apply.
 */
static int label_value(FILE *out, const char *untrusted) {
        _cleanup_free_ char *safe = escape_untrusted(untrusted, false);

        if (!safe)
                return -ENOMEM;
        fputc('"', out);
        for (const char *c = safe; *c; c++)
                switch (*c) {
                case '\\': fputs("\\\\", out); break;
                case '"':  fputs("\\\"", out); break;
                case '\n': fputs("\\n", out); break;
                default:   fputc(*c, out); break;
                }
        fputc('"', out);
        return 0;
}

static void node_label(FILE *out, int node) {
        if (node == NODE_NONE)
                fputs("node=\"none\"", out);
        else
                fprintf(out, "node=\"%d\"", node);
}

/* One sample per node of a value picked from its tally. */
static void node_samples(FILE *out, const struct metrics_machine *m, const char *name, const char *extra_labels,
                         uint64_t (*value)(const struct metrics_machine *m, const struct block_tally *t)) {
        for (size_t i = 0; i < m->n_nodes; i++) {
                fprintf(out, "%s{", name);
                node_label(out, m->nodes[i].node);
                fprintf(out, "%s} %" PRIu64 "\n", extra_labels, value(m, &m->nodes[i].tally));
        }
}

static uint64_t online_blocks(const struct metrics_machine *m, const struct block_tally *t) {
        return t->online;
}

static uint64_t offline_blocks(const struct metrics_machine *m, const struct block_tally *t) {
        return t->offline;
}

static uint64_t kernel_bytes(const struct metrics_machine *m, const struct block_tally *t) {
        return t->kernel * m->block_size;
}

static uint64_t movable_bytes(const struct metrics_machine *m, const struct block_tally *t) {
        return t->movable * m->block_size;
}

static uint64_t offline_bytes(const struct metrics_machine *m, const struct block_tally *t) {
        return t->offline * m->block_size;
}

static int device_samples(FILE *out, const struct metrics_machine *m, const char *name, bool online) {
        int r;

        for (size_t i = 0; i < m->n_devices; i++) {
                const struct metrics_device *d = &m->devices[i];

                fprintf(out, "%s{kind=\"%s\",device=", name, memdev_kind_to_string(d->kind));
                r = label_value(out, d->name);
                if (r < 0)
                        return r;
                fprintf(out, "} %" PRIu64 "\n", online ? d->tally.online : d->tally.offline);
        }
        return 0;
}

static int print_machine(FILE *out, const struct metrics_machine *m) {
        bool unknown_zone = false;
        int r;

        family(out, "memonlined_block_size_bytes", "gauge", "Size of a memory block.");
        fprintf(out, "memonlined_block_size_bytes %" PRIu64 "\n", m->block_size);
        if (m->n_nodes > 0) {
                family(out, "memonlined_blocks_online", "gauge", "Memory blocks online, per node.");
                node_samples(out, m, "memonlined_blocks_online", "", online_blocks);
                family(out, "memonlined_blocks_offline", "gauge",
                       "Memory blocks offline, per node (node=\"none\": not linked to a node yet).");
                node_samples(out, m, "memonlined_blocks_offline", "", offline_blocks);
                family(out, "memonlined_memory_online_bytes", "gauge",
                       "Online memory per node and zone (kernel: Normal, DMA32, DMA; unknown: zone not read).");
                node_samples(out, m, "memonlined_memory_online_bytes", ",zone=\"kernel\"", kernel_bytes);
                node_samples(out, m, "memonlined_memory_online_bytes", ",zone=\"movable\"", movable_bytes);
                for (size_t i = 0; i < m->n_nodes; i++)
                        unknown_zone = unknown_zone || m->nodes[i].tally.zone_unknown > 0;
                for (size_t i = 0; unknown_zone && i < m->n_nodes; i++) {
                        fputs("memonlined_memory_online_bytes{", out);
                        node_label(out, m->nodes[i].node);
                        fprintf(out, ",zone=\"unknown\"} %" PRIu64 "\n",
                                m->nodes[i].tally.zone_unknown * m->block_size);
                }
                family(out, "memonlined_memory_offline_bytes", "gauge", "Offline memory per node.");
                node_samples(out, m, "memonlined_memory_offline_bytes", "", offline_bytes);
        }
        if (m->n_devices > 0) {
                family(out, "memonlined_device_blocks_online", "gauge",
                       "Memory blocks online per hotplug device (dimm, dax, virtio-mem).");
                r = device_samples(out, m, "memonlined_device_blocks_online", true);
                if (r < 0)
                        return r;
                family(out, "memonlined_device_blocks_offline", "gauge",
                       "Memory blocks offline per hotplug device (dimm, dax, virtio-mem).");
                r = device_samples(out, m, "memonlined_device_blocks_offline", false);
                if (r < 0)
                        return r;
        }
        if (m->auto_online) {
                family(out, "memonlined_auto_online_blocks", "gauge",
                       "The kernel's auto_online_blocks, as the value label; always 1.");
                fputs("memonlined_auto_online_blocks{value=", out);
                r = label_value(out, m->auto_online);
                if (r < 0)
                        return r;
                fputs("} 1\n", out);
        }
        return 0;
}

static void counter(FILE *out, const char *name, const char *help, uint64_t value) {
        family(out, name, "counter", help);
        fprintf(out, "%s %" PRIu64 "\n", name, value);
}

static void seconds_gauge(FILE *out, const char *name, const char *help, uint64_t usec) {
        family(out, name, "gauge", help);
        fprintf(out, "%s %" PRIu64 ".%06" PRIu64 "\n", name, usec / (uint64_t) USEC_PER_SEC,
                usec % (uint64_t) USEC_PER_SEC);
}

static void print_daemon(FILE *out, const struct metrics_daemon *d) {
        seconds_gauge(out, "memonlined_start_time_seconds", "When the daemon started, in seconds since the epoch.",
                      d->start_time_usec);
        counter(out, "memonlined_batches_total", "Batches that onlined or failed blocks (batch records).",
                d->batches);
        counter(out, "memonlined_blocks_onlined_total", "Memory blocks onlined.", d->blocks_onlined);
        counter(out, "memonlined_onlined_bytes_total", "Memory onlined.", d->bytes_onlined);
        counter(out, "memonlined_blocks_failed_total", "Memory blocks whose online failed (failure records).",
                d->blocks_failed);
        counter(out, "memonlined_blocks_excluded_total",
                "Memory blocks the policy left offline, counted in every pass that planned them.", d->blocks_excluded);
        if (!d->have_last_batch)
                return;
        seconds_gauge(out, "memonlined_last_batch_first_block_seconds",
                      "From the last batch's first add event (a rescan's start) to its first block online.",
                      d->last_first_block_usec);
        seconds_gauge(out, "memonlined_last_batch_last_block_seconds",
                      "From the last batch's first add event (a rescan's start) to its last block online.",
                      d->last_last_block_usec);
}

int metrics_print(FILE *out, const struct metrics *m) {
        int r;

        family(out, "memonlined_build_info", "gauge", "memonlined's version, as the version label; always 1.");
        fputs("memonlined_build_info{version=", out);
        r = label_value(out, PACKAGE_VERSION);
        if (r < 0)
                return r;
        fputs("} 1\n", out);
        if (m->machine) {
                r = print_machine(out, m->machine);
                if (r < 0)
                        return r;
        }
        if (m->auto_online_taken >= 0) {
                family(out, "memonlined_auto_online_taken_over", "gauge",
                       "1 while memonlined holds auto_online_blocks at offline, to restore the kernel's value "
                       "when it stops.");
                fprintf(out, "memonlined_auto_online_taken_over %d\n", m->auto_online_taken > 0);
        }
        if (m->daemon)
                print_daemon(out, m->daemon);
        return ferror(out) ? -EIO : 0;
}

/* ---- the textfile ----------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EIO;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int metrics_write_file(const char *dir, const char *text, size_t len) {
        _cleanup_close_ int dir_fd = -1, fd = -1;
        int r;

        dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        /* A fresh file: O_EXCL after the unlink, so no link left there makes us write elsewhere. */
        (void) unlinkat(dir_fd, METRICS_FILE_TMP, 0);
        fd = openat(dir_fd, METRICS_FILE_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        /* The unit's UMask=0077 took the others' read bit from the mode above: node_exporter needs it. */
        r = fchmod(fd, 0644) < 0 ? -errno : 0;
        if (r >= 0)
                r = write_all(fd, text, len);
        if (r >= 0 && renameat(dir_fd, METRICS_FILE_TMP, dir_fd, METRICS_FILE) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dir_fd, METRICS_FILE_TMP, 0);
        return r;
}
