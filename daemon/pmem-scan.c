/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <limits.h>
#include <sys/stat.h>
#include "pmem-badblocks.h"
#include "pmem-cxl.h"
#include "pmem-memmap.h"
#include "pmem-scan.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

/*
 * The sysfs layout this file relies on (kernel drivers/dax/bus.c,
 * drivers/dax/pmem.c, drivers/nvdimm/{region,namespace,dax}_devs.c; the
 * same walk libdaxctl's dax_region_path() and libndctl's add_dax() do):
 *
 *   bus/dax/devices/daxR.N -> ../../../devices/.../ndbusB/regionR/daxR.M/daxR.N
 *
 *   .../ndbusB/regionR                  the nd region. Its uevent has
 *                                       DEVTYPE=nd_pmem for a pmem region
 *                                       (nd_volatile otherwise); nstype,
 *                                       pfn_seed and dax_seed live here,
 *                                       and badblocks and resource
 *                                       (pmem-badblocks.c).
 *   .../regionR/namespaceR.N            the namespace; uuid = its own uuid
 *                                       (`ndctl list` calls it raw_uuid).
 *   .../regionR/daxR.M                  the nd_dax device (nd bus, once the
 *                                       region's dax_seed) that claims the
 *                                       namespace: "namespace" names it,
 *                                       "uuid" is the info-block uuid that
 *                                       `ndctl list` shows as "uuid" and
 *                                       daxctl.conf matches as nvdimm.uuid.
 *                                       Its dax_region/ group is the parent
 *                                       of the device-dax instance.
 *   .../daxR.M/daxR.N                   the dev_dax on the dax bus. dax_pmem
 *                                       names it after the namespace
 *                                       (namespaceR.N -> daxR.N). Attributes:
 *                                       size (decimal), resource (hex, start
 *                                       of the first range, root-only),
 *                                       target_node (absent when < 0),
 *                                       numa_node, driver -> .../device_dax
 *                                       or .../kmem, and mappingK/{start,end}
 *                                       (hex, end inclusive) per range on
 *                                       kernels with dynamic dax regions.
 *
 * Devices not under an nd bus (hmem soft-reserved memory, CXL dax_region)
 * get no namespace and region -1; pmem-cxl.c reads a CXL region's names.
 */

static int cmp_range(const void *a, const void *b) {
        const struct pmem_range *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

/* mappingK/{start,end} children; -ENOENT if the device directory is gone. */
static int read_mappings(const char *root, const char *rel_dev, const char *abs_dev,
                         struct pmem_range **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ struct pmem_range *ranges = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;

        d = opendir(abs_dev);
        if (!d)
                return -errno;
        while ((errno = 0, de = readdir(d))) {
                _cleanup_free_ char *dir = NULL;
                uint64_t idx, start, end;
                int r;

                if (!startswith(de->d_name, "mapping") || parse_u64(de->d_name + 7, 10, &idx) < 0 ||
                    !isdigit((unsigned char) de->d_name[7]))
                        continue;
                if (asprintf(&dir, "%s/%s", rel_dev, de->d_name) < 0)
                        return -ENOMEM;
                r = pmem_read_attr_u64(root, dir, "start", 16, &start);
                if (r >= 0)
                        r = pmem_read_attr_u64(root, dir, "end", 16, &end);
                if (r == -ENOENT)
                        continue;       /* a mapping going away with a shrink */
                if (r < 0)
                        return r;
                if (end < start || end == UINT64_MAX)
                        continue;
                if (GROW(ranges, allocated, n + 1) < 0)
                        return -ENOMEM;
                ranges[n++] = (struct pmem_range) { start, end + 1 };
        }
        if (errno != 0)
                return -errno;
        if (n > 1)
                qsort(ranges, n, sizeof(*ranges), cmp_range);
        *ret = TAKE_PTR(ranges);
        *ret_n = n;
        return 0;
}

bool pmem_region_is_pmem(const char *root, const char *rel_region) {
        _cleanup_free_ char *uevent = NULL, *rel = NULL;
        uint64_t nstype;

        if (asprintf(&rel, "%s/uevent", rel_region) < 0)
                return false;
        if (sysfs_read(root, rel, &uevent) >= 0) {
                for (char *line = uevent, *next; line && *line; line = next) {
                        next = strchr(line, '\n');
                        if (next)
                                *next++ = '\0';
                        if (startswith(line, "DEVTYPE="))
                                return streq(line + 8, "nd_pmem");
                }
        }
        return pmem_read_attr_u64(root, rel_region, "nstype", 10, &nstype) >= 0 && nstype == 5;
}

/*
 * From the canonical path relative to the root, find ndbusB/regionR and
 * the dax device's parent (the nd_dax), then the namespace it claims.
 */
static int read_nd_attribution(const char *root, const char *rel_dev, struct pmem_device *dev) {
        _cleanup_free_ char *copy = NULL, *rel_region = NULL, *rel_parent = NULL, *ns = NULL, *ns_dir = NULL;
        char *slash, *region_comp = NULL;
        unsigned region_id, a, b;
        size_t prefix_len;
        bool below_region;
        uint64_t v;
        int r;

        copy = strdup(rel_dev);
        if (!copy)
                return -ENOMEM;
        slash = strrchr(copy, '/');
        if (!slash)
                return 0;
        *slash = '\0';
        rel_parent = strdup(copy);
        if (!rel_parent)
                return -ENOMEM;

        /* The last ndbusB component, then regionR right below it, above the parent. */
        for (char *p = copy, *next; p; p = next) {
                next = strchr(p, '/');
                if (next)
                        *next++ = '\0';
                if (startswith(p, "ndbus") && isdigit((unsigned char) p[5]) && parse_u64(p + 5, 10, &v) >= 0 &&
                    next && startswith(next, "region"))
                        region_comp = next;
        }
        if (!region_comp)
                return 0;
        /* region_comp points into copy, whose offsets match rel_parent's; the component ends at a NUL. */
        if (!isdigit((unsigned char) region_comp[6]) || parse_u64(region_comp + 6, 10, &v) < 0 || v > INT_MAX)
                return 0;
        region_id = (unsigned) v;
        prefix_len = (size_t) (region_comp - copy) + strlen(region_comp);
        rel_region = strndup(rel_parent, prefix_len);
        if (!rel_region)
                return -ENOMEM;

        dev->region = (int) region_id;
        dev->on_pmem_region = pmem_region_is_pmem(root, rel_region);
        r = pmem_badblocks_read(root, rel_region, dev);
        if (r < 0)
                return r;
        dev->region_rel = strdup(rel_region);
        if (!dev->region_rel)
                return -ENOMEM;

        /* The nd_dax is the device's parent, below the region; without one only the name tells. */
        below_region = rel_parent[prefix_len] == '/';
        r = below_region ? pmem_read_attr(root, rel_parent, "namespace", &ns) : -ENOENT;
        if (r == -ENOMEM)
                return r;
        if (r < 0 && pmem_dax_name_parse(dev->name, &a, &b) >= 0 && a == region_id) {
                /* dax_pmem names the device after the namespace: daxR.N <- namespaceR.N. */
                if (asprintf(&ns, "namespace%u.%u", a, b) < 0) {
                        ns = NULL;
                        return -ENOMEM;
                }
        }
        if (ns) {
                if (asprintf(&ns_dir, "%s/%s", rel_region, ns) < 0) {
                        ns_dir = NULL;
                        return -ENOMEM;
                }
                r = pmem_read_attr(root, ns_dir, "uuid", &dev->namespace_raw_uuid);
                if (r == -ENOMEM)
                        return r;
                dev->namespace_name = TAKE_PTR(ns);
        }
        if (below_region) {
                r = pmem_read_attr(root, rel_parent, "uuid", &dev->namespace_uuid);
                if (r == -ENOMEM)
                        return r;
        }
        if (!dev->namespace_uuid && dev->namespace_raw_uuid) {
                dev->namespace_uuid = strdup(dev->namespace_raw_uuid);
                if (!dev->namespace_uuid)
                        return -ENOMEM;
        }
        return 0;
}

int pmem_read_device(const char *sysfs_root, const char *name, struct pmem_device *ret) {
        _cleanup_(pmem_device_donep) struct pmem_device dev = {
                .target_node = NODE_NONE, .numa_node = NODE_NONE, .region = -1, .memmap_on_memory = -1,
        };
        _cleanup_free_ char *link = NULL, *abs_dev = NULL, *rel_owned = NULL;
        const char *rel_dev;
        struct stat st;
        int r;

        if (pmem_dax_name_parse(name, NULL, NULL) < 0)
                return -EINVAL;
        dev.name = strdup(name);
        if (!dev.name)
                return -ENOMEM;

        if (asprintf(&link, "bus/dax/devices/%s", name) < 0) {
                link = NULL;
                return -ENOMEM;
        }
        /* -EXDEV for a link leaving the root: not a device of this tree. */
        r = pmem_resolve_in_root(sysfs_root, link, &rel_owned);
        if (r < 0)
                return r;
        rel_dev = rel_owned;
        r = sysfs_path(&abs_dev, sysfs_root, "%s", rel_dev);
        if (r < 0)
                return r;

        r = pmem_read_attr_u64(sysfs_root, rel_dev, "size", 10, &dev.size);
        if (r < 0)
                return r;
        /* resource is root-only (0400); without it only mappingK can give ranges. */
        r = pmem_read_attr_u64(sysfs_root, rel_dev, "resource", 16, &dev.resource);
        if (r == -ENOENT && stat(abs_dev, &st) < 0)
                return -ENOENT;
        dev.target_node = pmem_read_attr_node(sysfs_root, rel_dev, "target_node");
        dev.numa_node = pmem_read_attr_node(sysfs_root, rel_dev, "numa_node");
        r = pmem_memmap_read_attr(sysfs_root, rel_dev, &dev.memmap_on_memory);
        if (r == -ENOMEM)
                return r;

        r = pmem_read_driver(abs_dev, &dev.driver);
        if (r < 0)
                return r;
        dev.mode = pmem_mode_from_driver(dev.driver);

        r = read_mappings(sysfs_root, rel_dev, abs_dev, &dev.ranges, &dev.n_ranges);
        if (r < 0)
                return r;
        if (dev.n_ranges == 0 && dev.resource > 0 && dev.size > 0 && dev.resource <= UINT64_MAX - dev.size) {
                dev.ranges = malloc(sizeof(*dev.ranges));
                if (!dev.ranges)
                        return -ENOMEM;
                dev.ranges[0] = (struct pmem_range) { dev.resource, dev.resource + dev.size };
                dev.n_ranges = 1;
        }
        if (dev.resource == 0 && dev.n_ranges > 0)
                dev.resource = dev.ranges[0].start;

        r = read_nd_attribution(sysfs_root, rel_dev, &dev);
        if (r >= 0)
                r = pmem_read_cxl_attribution(sysfs_root, rel_dev, &dev);
        if (r < 0)
                return r;

        /* Gone while we read it? Then what we read may be half a device. */
        if (stat(abs_dev, &st) < 0)
                return -errno;
        dev.ino = (uint64_t) st.st_ino;

        *ret = dev;
        dev = (struct pmem_device) {};
        return 0;
}

static int cmp_device(const void *a, const void *b) {
        const struct pmem_device *x = a, *y = b;
        unsigned xr = 0, xi = 0, yr = 0, yi = 0;

        if (pmem_dax_name_parse(x->name, &xr, &xi) < 0 || pmem_dax_name_parse(y->name, &yr, &yi) < 0)
                return strcmp(x->name, y->name);
        if (xr != yr)
                return xr < yr ? -1 : 1;
        return xi < yi ? -1 : xi > yi;
}

/* A device that exists but could not be read: counted, the first named. */
static void note_unreadable(struct pmem_devices *set, const char *name, int error) {
        size_t len;

        if (set->n_unreadable++ > 0)
                return;
        /* pmem_dax_name_parse() bounds the name: daxR.N with two unsigned ints. */
        len = strnlen(name, sizeof(set->unreadable_name) - 1);
        memcpy(set->unreadable_name, name, len);
        set->unreadable_name[len] = 0;
        set->unreadable_error = error;
}

/* Who bus/dax/devices/NAME is now: its directory's inode and its driver (NULL: none). -ENOENT if gone. */
static int device_identity(int bus_fd, const char *name, uint64_t *ret_ino, char **ret_driver) {
        char rel[96], target[PATH_MAX];
        const char *base;
        struct stat st;
        ssize_t n;

        if (fstatat(bus_fd, name, &st, 0) < 0)
                return -errno;
        snprintf(rel, sizeof(rel), "%s/driver", name);
        n = readlinkat(bus_fd, rel, target, sizeof(target) - 1);
        if (n < 0 && errno != ENOENT)
                return -errno;
        *ret_ino = (uint64_t) st.st_ino;
        *ret_driver = NULL;
        if (n < 0)
                return 0;
        target[n] = 0;
        base = strrchr(target, '/');
        *ret_driver = strdup(base ? base + 1 : target);
        return *ret_driver ? 0 : -ENOMEM;
}

/* The device of the old set that may be kept for name: same directory, same driver, bound. */
static struct pmem_device *keepable(struct pmem_devices *old, const char *name, uint64_t ino, const char *driver) {
        for (size_t i = 0; i < old->n; i++) {
                struct pmem_device *d = &old->devices[i];

                /* A device moved out already has no name. */
                if (d->name && streq(d->name, name))
                        return d->driver && driver && d->ino == ino && streq(d->driver, driver) ? d : NULL;
        }
        return NULL;
}

/*
 * Every device under bus/dax/devices into *ret (replaced on success): from
 * old (may be NULL) those keepable() allows, moved out of it; the others
 * read.
 */
static int scan_devices(const char *sysfs_root, struct pmem_devices *old, struct pmem_devices *ret) {
        _cleanup_(pmem_devices_clearp) struct pmem_devices set = {};
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = sysfs_opendir_optional(sysfs_root, "bus/dax/devices", NULL, &d);
        if (r < 0)
                return r;
        while (d && (errno = 0, de = readdir(d))) {
                _cleanup_free_ char *driver = NULL;
                struct pmem_device dev, *kept = NULL;
                uint64_t ino;

                if (pmem_dax_name_parse(de->d_name, NULL, NULL) < 0)
                        continue;
                if (old) {
                        r = device_identity(dirfd(d), de->d_name, &ino, &driver);
                        if (r == -ENOMEM)
                                return r;
                        kept = r >= 0 ? keepable(old, de->d_name, ino, driver) : NULL;
                }
                if (kept) {
                        dev = *kept;
                        *kept = (struct pmem_device) {};        /* moved: the old set no longer frees it */
                        /* Poison comes and goes (an MCE, ARS, ndctl clear-errors) with no event: always read again. */
                        if (dev.region_rel && pmem_badblocks_read(sysfs_root, dev.region_rel, &dev) == -ENOMEM) {
                                pmem_device_done(&dev);
                                return -ENOMEM;
                        }
                } else {
                        r = pmem_read_device(sysfs_root, de->d_name, &dev);
                        if (r == -ENOENT)
                                continue;       /* removed between readdir and reading it */
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0) {
                                /* One bad device must not hide the others; the caller decides what unknown means. */
                                note_unreadable(&set, de->d_name, r);
                                continue;
                        }
                }
                if (GROW(set.devices, set.allocated, set.n + 1) < 0) {
                        pmem_device_done(&dev);
                        return -ENOMEM;
                }
                set.devices[set.n++] = dev;
        }
        if (d && errno != 0)
                return -errno;
        if (set.n > 1)
                qsort(set.devices, set.n, sizeof(*set.devices), cmp_device);
        /* A kernel parameter fixed at boot (0444): read once. */
        set.memmap_global = old ? old->memmap_global : pmem_memmap_read_global(sysfs_root);
        set.scanned = true;

        pmem_devices_clear(ret);
        *ret = set;
        set = (struct pmem_devices) {};
        return (int) ret->n;
}

int pmem_scan(const char *sysfs_root, struct pmem_devices *ret) {
        return scan_devices(sysfs_root, NULL, ret);
}

int pmem_scan_update(const char *sysfs_root, struct pmem_devices *devs) {
        _cleanup_(pmem_devices_clearp) struct pmem_devices old = *devs;

        *devs = (struct pmem_devices) {};
        /* A set with unreadable devices (its set is incomplete), or never scanned: whole. */
        return scan_devices(sysfs_root, old.scanned && old.n_unreadable == 0 ? &old : NULL, devs);
}

/* ---- attribution ------------------------------------------------------ */

struct interval {
        uint64_t start, end;
        const struct pmem_device *dev;
};

static int cmp_interval(const void *a, const void *b) {
        const struct interval *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

/* An address (the key) against an interval's start, for upper_bound(). */
static int cmp_interval_start(const void *key, const void *entry) {
        return cmp_u64(key, &((const struct interval *) entry)->start);
}

/* Replace an owned string; NULL clears it. */
static int set_string(char **dst, const char *src) {
        char *s = NULL;

        if (src) {
                s = strdup(src);
                if (!s)
                        return -ENOMEM;
        }
        free(*dst);
        *dst = s;
        return 0;
}

/* The block is the device's: its names, and the node kmem adds it to. */
static int attribute_block(struct mem_block *b, const struct pmem_device *dev) {
        if (set_string(&b->device, dev->name) < 0 ||
            set_string(&b->namespace_name, dev->namespace_name) < 0 ||
            set_string(&b->namespace_uuid, dev->namespace_uuid) < 0 ||
            set_string(&b->cxl_region, dev->cxl_region) < 0 ||
            set_string(&b->cxl_memdevs, dev->cxl_memdevs) < 0)
                return -ENOMEM;
        b->region = dev->region;
        b->cxl_memdevs_unknown = dev->cxl_memdevs_unknown;
        b->bad_sectors = dev->bad_sectors;
        b->badblocks_unknown = dev->badblocks_error < 0;
        if (dev->target_node >= 0 && (b->node == NODE_NONE || b->node_guessed)) {
                b->node = dev->target_node;
                b->node_guessed = false;
        }
        return 0;
}

int pmem_attribute_blocks(const struct pmem_devices *d, uint64_t block_size, struct block_set *set) {
        _cleanup_free_ struct interval *iv = NULL;
        size_t n = 0, allocated = 0;
        int count = 0;

        if (block_size == 0)
                return -EINVAL;
        if (!d || !set)
                return 0;

        for (size_t i = 0; i < d->n; i++) {
                const struct pmem_device *dev = &d->devices[i];

                if (dev->mode != PMEM_MODE_SYSTEM_RAM)
                        continue;
                for (size_t k = 0; k < dev->n_ranges; k++) {
                        if (GROW(iv, allocated, n + 1) < 0)
                                return -ENOMEM;
                        iv[n++] = (struct interval) { dev->ranges[k].start, dev->ranges[k].end, dev };
                }
        }
        if (n == 0)
                return 0;
        qsort(iv, n, sizeof(*iv), cmp_interval);

        /* Adjacent ranges of one device hold a block that straddles them. */
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
                if (m > 0 && iv[m - 1].dev == iv[i].dev && iv[m - 1].end == iv[i].start)
                        iv[m - 1].end = iv[i].end;
                else
                        iv[m++] = iv[i];
        }

        for (size_t i = 0; i < set->n; i++) {
                struct mem_block *b = &set->blocks[i];
                const struct interval *hit;
                uint64_t start, end;
                size_t above;

                if (block_phys_start(b->id, block_size, &start) < 0)
                        continue;
                end = start + block_size;

                /* The last interval starting at or below the block. */
                above = upper_bound(&start, iv, m, sizeof(*iv), cmp_interval_start);
                if (above == 0)
                        continue;
                hit = &iv[above - 1];
                /* kmem adds only whole blocks inside its range: a partial overlap is someone else's. */
                if (end > hit->end)
                        continue;

                if (attribute_block(b, hit->dev) < 0)
                        return -ENOMEM;
                count++;
        }
        return count;
}
