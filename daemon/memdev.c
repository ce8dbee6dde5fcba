/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include "blocks.h"
#include "memdev.h"
#include "pmem.h"
#include "string-table.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

/* An iomem line longer than this is not the kernel's: skipped. */
#define IOMEM_LINE_MAX 256

static const char *const memdev_kind_table[_MEMDEV_KIND_MAX] = {
        [MEMDEV_NONE] = "boot",
        [MEMDEV_ACPI] = "dimm",
        [MEMDEV_DAX] = "dax",
        [MEMDEV_VIRTIO_MEM] = "virtio-mem",
};

DEFINE_STRING_TABLE_TO_STRING(memdev_kind, enum memdev_kind, "unknown")

void memdev_set_clear(struct memdev_set *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++)
                free(s->devs[i].name);
        free(s->devs);
        *s = (struct memdev_set) {};
}

int memdev_set_add(struct memdev_set *s, enum memdev_kind kind, const char *name, uint64_t start, uint64_t end) {
        char *copy;

        if (!name || start >= end || kind <= MEMDEV_NONE || kind >= _MEMDEV_KIND_MAX)
                return -EINVAL;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        if (GROW(s->devs, s->allocated, s->n + 1) < 0) {
                free(copy);
                return -ENOMEM;
        }
        s->devs[s->n++] = (struct memdev) {
                .kind = kind,
                .name = copy,
                .start = start,
                .end = end,
                .dynamic = kind == MEMDEV_VIRTIO_MEM,
        };
        return 0;
}

/* The devices of src but those of kind skip (MEMDEV_NONE: all of them), added to s as they are. */
static int add_copies(struct memdev_set *s, const struct memdev_set *src, enum memdev_kind skip) {
        int r;

        for (size_t i = 0; i < src->n; i++) {
                const struct memdev *d = &src->devs[i];

                if (d->kind == skip)
                        continue;
                r = memdev_set_add(s, d->kind, d->name, d->start, d->end);
                if (r < 0)
                        return r;
                s->devs[s->n - 1].dynamic = d->dynamic;
        }
        return 0;
}

int memdev_set_copy(const struct memdev_set *src, struct memdev_set *ret) {
        _cleanup_(memdev_set_clear) struct memdev_set s = {};
        int r;

        r = add_copies(&s, src, MEMDEV_NONE);
        if (r < 0)
                return r;
        memdev_set_clear(ret);
        *ret = s;
        s = (struct memdev_set) {};
        return 0;
}

static int cmp_memdev(const void *a, const void *b) {
        const struct memdev *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

int memdev_set_seal(struct memdev_set *s) {
        sort_unless_sorted(s->devs, s->n, sizeof(*s->devs), cmp_memdev);
        for (size_t i = 1; i < s->n; i++)
                if (s->devs[i].start < s->devs[i - 1].end)
                        return -EEXIST;
        return 0;
}

/* An address (the key) against a device's start, for upper_bound(). */
static int cmp_start_memdev(const void *key, const void *entry) {
        return cmp_u64(key, &((const struct memdev *) entry)->start);
}

const struct memdev *memdev_find(const struct memdev_set *s, uint64_t start, uint64_t size) {
        size_t i;

        if (!s || s->n == 0 || size == 0 || start > UINT64_MAX - size)
                return NULL;
        /* The last device starting at or below start. */
        i = upper_bound(&start, s->devs, s->n, sizeof(*s->devs), cmp_start_memdev);
        if (i == 0)
                return NULL;
        return start + size <= s->devs[i - 1].end ? &s->devs[i - 1] : NULL;
}

void acpi_span_cache_clear(struct acpi_span_cache *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->spans[i].name);
        free(c->spans);
        *c = (struct acpi_span_cache) {};
}

static struct acpi_span *acpi_span_find(struct acpi_span_cache *c, const char *name) {
        for (size_t i = 0; c && i < c->n; i++)
                if (streq(c->spans[i].name, name))
                        return &c->spans[i];
        return NULL;
}

/* A device with no memory now: its next links are read afresh. */
static void acpi_span_forget(struct acpi_span_cache *c, const char *name) {
        struct acpi_span *e = acpi_span_find(c, name);

        if (!e)
                return;
        free(e->name);
        *e = c->spans[--c->n];
}

/* Remember a device's span; a failure only costs the next scan a full read. */
static void acpi_span_remember(struct acpi_span_cache *c, const char *name, const struct acpi_span *span) {
        struct acpi_span *e = acpi_span_find(c, name);
        char *copy;

        if (!c)
                return;
        if (!e) {
                copy = strdup(name);
                if (!copy || GROW(c->spans, c->allocated, c->n + 1) < 0) {
                        free(copy);
                        return;
                }
                e = &c->spans[c->n++];
                e->name = copy;
        }
        e->n_links = span->n_links;
        e->first_link_block = span->first_link_block;
        e->last_link_block = span->last_link_block;
        e->first = span->first;
        e->last = span->last;
}

/* The memory block a physical_node link names: 0, or -errno when it names none. */
static int link_block(int dfd, const char *link, uint64_t *ret) {
        char target[PATH_MAX];
        const char *base;
        ssize_t n;

        n = readlinkat(dfd, link, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;  /* unbound again, or not a link: not a block of it */
        target[n] = 0;
        base = strrchr(target, '/');
        /* a physical node that is no memory block is none of ours */
        return block_id_from_name(base ? base + 1 : target, ret) < 0 ? -EINVAL : 0;
}

#define PHYSICAL_NODE_NAME_MAX 40

/* The name of physical node link number index: "physical_node", "physical_node1", ... */
static void physical_node_name(size_t index, char buf[static PHYSICAL_NODE_NAME_MAX]) {
        if (index == 0)
                strcpy(buf, "physical_node");
        else
                snprintf(buf, PHYSICAL_NODE_NAME_MAX, "physical_node%zu", index);
}

/* The block device dev's link number index names, dev a directory under bus_fd: as link_block(). */
static int device_link_block(int bus_fd, const char *dev, size_t index, uint64_t *ret) {
        char name[PHYSICAL_NODE_NAME_MAX], link[NAME_MAX + 1 + PHYSICAL_NODE_NAME_MAX];

        physical_node_name(index, name);
        snprintf(link, sizeof(link), "%s/%s", dev, name);
        return link_block(bus_fd, link, ret);
}

/* Read every physical_node* link of the device: the span of the blocks they name, and how many. */
static int acpi_links_read(DIR *d, struct acpi_span *ret) {
        struct acpi_span span = { .first = UINT64_MAX, .first_link_block = UINT64_MAX,
                                  .last_link_block = UINT64_MAX };
        char name[PHYSICAL_NODE_NAME_MAX];
        struct dirent *de;
        uint64_t id;

        rewinddir(d);
        while ((errno = 0, de = readdir(d))) {
                if (!startswith(de->d_name, "physical_node"))
                        continue;
                span.n_links++;
                if (link_block(dirfd(d), de->d_name, &id) < 0)
                        continue;
                if (streq(de->d_name, "physical_node"))
                        span.first_link_block = id;
                span.first = MIN(span.first, id);
                span.last = MAX(span.last, id);
        }
        if (errno != 0)
                return -errno;
        if (span.first == UINT64_MAX)
                return -ENOENT;
        /* What the cache checks next time; none (UINT64_MAX) makes it list the device again. */
        physical_node_name(span.n_links - 1, name);
        if (link_block(dirfd(d), name, &id) >= 0)
                span.last_link_block = id;
        *ret = span;
        return 0;
}

/*
 * The span from a device's first and last links alone. The kernel binds a
 * DIMM's blocks in ascending order (acpi_bind_memory_blocks() walks them
 * so), each to the lowest free physical_node index: link 0 names the
 * lowest block and link n-1 the highest. Taken only when the n links fit
 * the span exactly, so a device bound otherwise is read link by link.
 */
static int acpi_link_ends(DIR *d, size_t n_links, struct acpi_span *ret) {
        char name[PHYSICAL_NODE_NAME_MAX];
        uint64_t first, last;

        if (n_links == 0 || link_block(dirfd(d), "physical_node", &first) < 0)
                return -ENOENT;
        last = first;
        if (n_links > 1) {
                physical_node_name(n_links - 1, name);
                if (link_block(dirfd(d), name, &last) < 0)
                        return -ENOENT;
        }
        if (last < first || last - first != n_links - 1)
                return -ERANGE;
        *ret = (struct acpi_span) { .n_links = n_links, .first_link_block = first, .last_link_block = last,
                                    .first = first, .last = last };
        return 0;
}

/*
 * Are dev's links still those known: link 0 and link n-1 naming the same
 * blocks as then, and no link n? Three readlinks instead of listing the
 * device, whose directory holds a link per block (512 for a 64 GiB DIMM).
 */
static bool acpi_links_as_known(int bus_fd, const char *dev, uint64_t first_link_block,
                                const struct acpi_span *known) {
        uint64_t id;

        if (first_link_block != known->first_link_block || known->n_links == 0)
                return false;
        if (known->n_links > 1 && (device_link_block(bus_fd, dev, known->n_links - 1, &id) < 0 ||
                                   id != known->last_link_block))
                return false;
        return device_link_block(bus_fd, dev, known->n_links, &id) == -ENOENT;
}

/*
 * The memory block ids an ACPI memory device's physical_node* links name:
 * their span. A device whose link 0 is absent has no memory: the kernel
 * gives each block it binds the lowest free index, and unbinds from 0 up
 * only while it removes the device's blocks, so one readlink tells for
 * the empty slots, most of them. A device known with links is listed all
 * the same. From the cache when the links are as known (first, last, and
 * no more); else from the first and last links when they account for all
 * of them; else from every link.
 */
static int acpi_device_span(int bus_fd, const char *name, struct acpi_span_cache *cache,
                            uint64_t *ret_first, uint64_t *ret_last) {
        _cleanup_closedir_ DIR *d = NULL;
        const struct acpi_span *known = acpi_span_find(cache, name);
        struct acpi_span span = {};
        struct dirent *de;
        size_t n_links = 0;
        uint64_t first_link_block;
        int fd, r;

        r = device_link_block(bus_fd, name, 0, &first_link_block);
        if (r == -ENOENT && !known)
                return -ENOENT;
        if (r >= 0 && known && acpi_links_as_known(bus_fd, name, first_link_block, known)) {
                *ret_first = known->first;
                *ret_last = known->last;
                return 0;
        }
        fd = openat(bus_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((errno = 0, de = readdir(d)))
                if (startswith(de->d_name, "physical_node"))
                        n_links++;
        if (errno != 0)
                return -errno;
        r = acpi_link_ends(d, n_links, &span);
        if (r < 0)
                r = acpi_links_read(d, &span);
        if (r == -ENOENT)
                acpi_span_forget(cache, name);
        if (r < 0)
                return r;
        acpi_span_remember(cache, name, &span);
        *ret_first = span.first;
        *ret_last = span.last;
        return 0;
}

int memdev_scan_acpi(const char *sysfs_root, uint64_t block_size, struct acpi_span_cache *cache,
                     struct memdev_set *s) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        if (block_size == 0)
                return -EINVAL;
        r = sysfs_opendir_optional(sysfs_root, "bus/acpi/devices", NULL, &d);
        if (r < 0 || !d)
                return r;
        while ((errno = 0, de = readdir(d))) {
                uint64_t first = 0, last = 0;

                /* ACPI0012 is the NVDIMM root, not memory of its own; PNP0C80 is a memory device. */
                if (!startswith(de->d_name, "PNP0C80:"))
                        continue;
                r = acpi_device_span(dirfd(d), de->d_name, cache, &first, &last);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;       /* no memory (yet), or gone: nothing of ours */
                if (last >= UINT64_MAX / block_size)
                        continue;       /* an address past the end of memory: not a device */
                r = memdev_set_add(s, MEMDEV_ACPI, de->d_name, first * block_size, (last + 1) * block_size);
                if (r < 0)
                        return r;
        }
        return errno != 0 ? -errno : 0;
}

/* "virtio3" bound to virtio_mem? */
static bool is_virtio_mem(const char *sysfs_root, const char *name) {
        _cleanup_free_ char *link = NULL;
        char target[PATH_MAX];
        const char *base;
        ssize_t n;

        if (sysfs_path(&link, sysfs_root, "bus/virtio/devices/%s/driver", name) < 0)
                return false;
        n = readlink(link, target, sizeof(target) - 1);
        if (n < 0)
                return false;
        target[n] = 0;
        base = strrchr(target, '/');
        return streq(base ? base + 1 : target, "virtio_mem");
}

/*
 * One /proc/iomem line: "<indent>START-END : NAME", hex, END inclusive.
 * 0 and the range and name (pointing into line), or -EINVAL.
 */
static int iomem_parse_line(char *line, uint64_t *ret_start, uint64_t *ret_end, const char **ret_name) {
        char *dash, *sep, *name;
        uint64_t start, end;

        line += strspn(line, " ");
        line[strcspn(line, "\n")] = 0;
        dash = strchr(line, '-');
        sep = strstr(line, " : ");
        if (!dash || !sep || dash > sep)
                return -EINVAL;
        *dash = 0;
        *sep = 0;
        name = sep + 3;
        if (parse_u64(line, 16, &start) < 0 || parse_u64(dash + 1, 16, &end) < 0 || end < start ||
            end == UINT64_MAX || !*name)
                return -EINVAL;
        *ret_start = start;
        *ret_end = end + 1;
        *ret_name = name;
        return 0;
}

int memdev_scan_virtio_mem(const char *sysfs_root, const char *iomem_path, struct memdev_set *s) {
        _cleanup_fclose_ FILE *f = NULL;
        char line[IOMEM_LINE_MAX];
        int r;

        f = fopen(iomem_path, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (fgets(line, sizeof(line), f)) {
                uint64_t start, end, id;
                const char *name;

                if (!strchr(line, '\n') && !feof(f)) {
                        /* Longer than any the kernel writes: skip the rest of it. */
                        int ch;

                        while ((ch = fgetc(f)) != EOF && ch != '\n')
                                ;
                        continue;
                }
                if (iomem_parse_line(line, &start, &end, &name) < 0)
                        continue;
                if (!startswith(name, "virtio") || parse_u64(name + strlen("virtio"), 10, &id) < 0 ||
                    !is_virtio_mem(sysfs_root, name))
                        continue;
                /* Addresses read as 0 without CAP_SYS_ADMIN: nothing to tell then. */
                if (start == 0)
                        continue;
                r = memdev_set_add(s, MEMDEV_VIRTIO_MEM, name, start, end);
                if (r < 0)
                        return r;
        }
        return ferror(f) ? -EIO : 0;
}

int memdev_iomem_path(const char *sysfs_root, char **ret) {
        return sysfs_proc_path(sysfs_root, "iomem", ret);
}

void ram_ranges_clear(struct ram_ranges *rr) {
        if (!rr)
                return;
        free(rr->r);
        *rr = (struct ram_ranges) {};
}

static int cmp_range_start(const void *a, const void *b) {
        const uint64_t *x = a, *y = b;

        return *x < *y ? -1 : *x > *y;
}

bool ram_ranges_touch(const struct ram_ranges *rr, uint64_t start, uint64_t size) {
        if (size == 0 || start > UINT64_MAX - size)
                return false;
        /* A boot block may hold firmware holes (the first one, ACPI tables at a node's end): any RAM will do. */
        for (size_t i = 0; i < rr->n; i++)
                if (start < rr->r[i].end && rr->r[i].start < start + size)
                        return true;
        return false;
}

int ram_ranges_copy(const struct ram_ranges *src, struct ram_ranges *ret) {
        struct ram_ranges rr = {};

        if (src->n > 0) {
                rr.r = calloc(src->n, sizeof(*rr.r));
                if (!rr.r)
                        return -ENOMEM;
                memcpy(rr.r, src->r, src->n * sizeof(*rr.r));
                rr.n = rr.allocated = src->n;
        }
        ram_ranges_clear(ret);
        *ret = rr;
        return 0;
}

void fw_cache_clear(struct fw_cache *c) {
        free(c->entries);
        *c = (struct fw_cache) {};
}

void memdev_cache_clear(struct memdev_cache *c) {
        acpi_span_cache_clear(&c->acpi);
        fw_cache_clear(&c->fw);
}

static const struct fw_entry *fw_cache_find(const struct fw_cache *c, const char *name) {
        for (size_t i = 0; c && i < c->n; i++)
                if (streq(c->entries[i].name, name))
                        return &c->entries[i];
        return NULL;
}

/* firmware/memmap/NAME: 1 and *ret, 0 when it is no entry to go by (odd, or gone), -ENOMEM. */
static int fw_entry_read(const char *sysfs_root, const char *name, struct fw_entry *ret) {
        _cleanup_free_ char *type = NULL;
        struct fw_entry e = {};
        char rel[64];
        int r;

        snprintf(e.name, sizeof(e.name), "%s", name);
        snprintf(rel, sizeof(rel), "firmware/memmap/%s/type", name);
        r = sysfs_read(sysfs_root, rel, &type);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        e.ram = streq(type, "System RAM");
        if (e.ram) {
                snprintf(rel, sizeof(rel), "firmware/memmap/%s/start", name);
                if (sysfs_read_u64(sysfs_root, rel, 16, &e.start) < 0)
                        return 0;
                snprintf(rel, sizeof(rel), "firmware/memmap/%s/end", name);
                /* end is the last byte, inclusive */
                if (sysfs_read_u64(sysfs_root, rel, 16, &e.end) < 0 || e.end < e.start || e.end == UINT64_MAX)
                        return 0;
                e.end++;
        }
        *ret = e;
        return 1;
}

int memdev_scan_firmware_ram(const char *sysfs_root, struct fw_cache *cache, struct ram_ranges *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_(ram_ranges_clear) struct ram_ranges rr = {};
        _cleanup_(fw_cache_clear) struct fw_cache seen = {};
        struct dirent *de;
        int r;

        r = sysfs_opendir_optional(sysfs_root, "firmware/memmap", NULL, &d);
        if (r < 0)
                return r;
        while (d && (errno = 0, de = readdir(d))) {
                const struct fw_entry *known;
                struct fw_entry e;

                if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(e.name))
                        continue;
                known = fw_cache_find(cache, de->d_name);
                if (known)
                        e = *known;
                else {
                        r = fw_entry_read(sysfs_root, de->d_name, &e);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                continue;       /* not remembered: read again next time */
                }
                if (GROW(seen.entries, seen.allocated, seen.n + 1) < 0)
                        return -ENOMEM;
                seen.entries[seen.n++] = e;
                if (!e.ram)
                        continue;
                if (GROW(rr.r, rr.allocated, rr.n + 1) < 0)
                        return -ENOMEM;
                rr.r[rr.n].start = e.start;
                rr.r[rr.n++].end = e.end;
        }
        if (d && errno != 0)
                return -errno;
        if (rr.n > 1)
                qsort(rr.r, rr.n, sizeof(*rr.r), cmp_range_start);
        ram_ranges_clear(ret);
        *ret = rr;
        rr = (struct ram_ranges) {};
        /* The names listed now, and only those. */
        if (cache) {
                fw_cache_clear(cache);
                *cache = seen;
                seen = (struct fw_cache) {};
        }
        return 0;
}

int memdev_virtio_mem_name(const char *sysfs_root, char **ret) {
        _cleanup_free_ char *name = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        size_t n = 0;
        int r;

        r = sysfs_opendir_optional(sysfs_root, "bus/virtio/drivers/virtio_mem", NULL, &d);
        if (r < 0)
                return r;
        if (!d) {
                *ret = NULL;
                return 0;
        }
        while ((de = readdir(d))) {
                uint64_t id;

                if (!startswith(de->d_name, "virtio") || parse_u64(de->d_name + 6, 10, &id) < 0)
                        continue;
                if (n++ == 0) {
                        name = strdup(de->d_name);
                        if (!name)
                                return -ENOMEM;
                }
        }
        if (n > 1) {
                free(name);
                name = strdup("virtio-mem");
                if (!name)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(name);
        return 0;
}

/* The span of a dax device's ranges, for the device as a whole. */
static bool dax_span(const struct pmem_device *d, uint64_t *ret_start, uint64_t *ret_end) {
        uint64_t start = UINT64_MAX, end = 0;

        for (size_t i = 0; i < d->n_ranges; i++) {
                start = MIN(start, d->ranges[i].start);
                end = MAX(end, d->ranges[i].end);
        }
        if (start >= end)
                return false;
        *ret_start = start;
        *ret_end = end;
        return true;
}

/*
 * Driver-managed memory with no device of its own yet: blocks outside the
 * firmware's RAM ranges that no device holds. Where virtio-mem is bound
 * and iomem could not say its region (it shows addresses only with
 * CAP_SYS_ADMIN), these are virtio-mem's: one entry per run of blocks.
 */
static int add_driver_managed(const char *sysfs_root, const struct topology *t, const struct ram_ranges *fw,
                              struct memdev_set *s) {
        _cleanup_free_ char *name = NULL;
        uint64_t run_start = 0, run_end = 0;
        int r;

        if (fw->n == 0)
                return 0;
        for (size_t i = 0; i < s->n; i++)
                if (s->devs[i].kind == MEMDEV_VIRTIO_MEM)
                        return 0;       /* iomem named them */
        r = memdev_virtio_mem_name(sysfs_root, &name);
        if (r < 0 || !name)
                return r;
        for (size_t i = 0; i <= t->n_blocks; i++) {
                uint64_t start = 0;
                bool ours = i < t->n_blocks && block_phys_start(t->blocks[i].id, t->block_size, &start) >= 0 &&
                            !ram_ranges_touch(fw, start, t->block_size) && !memdev_find(s, start, t->block_size);

                if (ours && run_end == start && run_end > run_start) {
                        run_end += t->block_size;
                        continue;
                }
                if (run_end > run_start) {
                        r = memdev_set_add(s, MEMDEV_VIRTIO_MEM, name, run_start, run_end);
                        if (r < 0)
                                return r;
                }
                run_start = run_end = ours ? start : 0;
                if (ours)
                        run_end = start + t->block_size;
        }
        return 0;
}

/* The dax devices of devs onlined through kmem (system-ram), added to s. */
static int add_dax_devices(struct memdev_set *s, const struct pmem_devices *devs) {
        uint64_t start, end;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < devs->n; i++)
                if (devs->devices[i].mode == PMEM_MODE_SYSTEM_RAM && dax_span(&devs->devices[i], &start, &end))
                        r = memdev_set_add(s, MEMDEV_DAX, devs->devices[i].name, start, end);
        return r;
}

int memdev_set_with_dax(const struct memdev_set *known, const struct pmem_devices *devs, struct memdev_set *ret) {
        _cleanup_(memdev_set_clear) struct memdev_set s = {};
        int r;

        r = add_copies(&s, known, MEMDEV_DAX);
        if (r >= 0)
                r = add_dax_devices(&s, devs);
        if (r >= 0)
                r = memdev_set_seal(&s);
        if (r < 0)
                return r;
        memdev_set_clear(ret);
        *ret = s;
        s = (struct memdev_set) {};
        return 0;
}

int memdev_load(const char *sysfs_root, const struct topology *t, const struct pmem_devices *devs,
                struct memdev_cache *cache, struct memdev_set *ret, struct ram_ranges *ret_fw) {
        _cleanup_(memdev_set_clear) struct memdev_set s = {};
        _cleanup_(ram_ranges_clear) struct ram_ranges fw = {};
        _cleanup_free_ char *iomem = NULL;
        int r;

        r = memdev_scan_acpi(sysfs_root, t->block_size, cache ? &cache->acpi : NULL, &s);
        if (r >= 0)
                r = memdev_iomem_path(sysfs_root, &iomem);
        if (r >= 0)
                r = memdev_scan_virtio_mem(sysfs_root, iomem, &s);
        if (r >= 0)
                r = add_dax_devices(&s, devs);
        if (r >= 0)
                r = memdev_scan_firmware_ram(sysfs_root, cache ? &cache->fw : NULL, &fw);
        if (r >= 0)
                r = memdev_set_seal(&s);
        if (r >= 0)
                r = add_driver_managed(sysfs_root, t, &fw, &s);
        if (r >= 0)
                r = memdev_set_seal(&s);
        if (r < 0)
                return r;
        memdev_set_clear(ret);
        *ret = s;
        s = (struct memdev_set) {};
        ram_ranges_clear(ret_fw);
        *ret_fw = fw;
        fw = (struct ram_ranges) {};
        return 0;
}
