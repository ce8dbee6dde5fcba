/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <syslog.h>
#include <pthread.h>
#include <daxctl/libdaxctl.h>
#if HAVE_INIPARSER_INIPARSER_H
#include <iniparser/iniparser.h>
#else
#include <iniparser.h>
#endif
#include "plan.h"
#include "pmem.h"
#include "report.h"
#include "rules.h"
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
 *                                       pfn_seed and dax_seed live here.
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
 * get no namespace and region -1.
 */

const char *pmem_mode_to_string(enum pmem_mode m) {
        switch (m) {
        case PMEM_MODE_DEVDAX:
                return "devdax";
        case PMEM_MODE_SYSTEM_RAM:
                return "system-ram";
        default:
                return "unknown";
        }
}

const char *pmem_action_to_string(enum pmem_action a) {
        return a == PMEM_ACTION_CONVERT ? "convert" : "skip";
}

void pmem_device_done(struct pmem_device *dev) {
        if (!dev)
                return;
        free(dev->name);
        free(dev->driver);
        free(dev->ranges);
        free(dev->namespace_name);
        free(dev->namespace_uuid);
        free(dev->namespace_raw_uuid);
        *dev = (struct pmem_device) { .target_node = NODE_NONE, .numa_node = NODE_NONE, .region = -1 };
}

void pmem_devices_clear(struct pmem_devices *d) {
        if (!d)
                return;
        for (size_t i = 0; i < d->n; i++)
                pmem_device_done(&d->devices[i]);
        free(d->devices);
        *d = (struct pmem_devices) {};
}

static void pmem_devices_clearp(struct pmem_devices *d) {
        pmem_devices_clear(d);
}

static void pmem_device_donep(struct pmem_device *d) {
        pmem_device_done(d);
}

/* "dax3.12" -> 3, 12; strict (no sign, no trailing junk). */
static int dax_name_parse(const char *name, unsigned *ret_region, unsigned *ret_id) {
        const char *dot;
        _cleanup_free_ char *a = NULL;
        uint64_t x, y;

        if (!name || !startswith(name, "dax") || !isdigit((unsigned char) name[3]))
                return -EINVAL;
        dot = strchr(name + 3, '.');
        if (!dot || !isdigit((unsigned char) dot[1]))
                return -EINVAL;
        a = strndup(name + 3, (size_t) (dot - name - 3));
        if (!a)
                return -ENOMEM;
        if (parse_u64(a, 10, &x) < 0 || parse_u64(dot + 1, 10, &y) < 0 || x > INT_MAX || y > INT_MAX)
                return -EINVAL;
        if (ret_region)
                *ret_region = (unsigned) x;
        if (ret_id)
                *ret_id = (unsigned) y;
        return 0;
}

/* Read an attribute under a directory; empty values count as absent (-ENODATA). */
static int read_attr(const char *root, const char *dir, const char *attr, char **ret) {
        _cleanup_free_ char *rel = NULL, *v = NULL;
        int r;

        if (asprintf(&rel, "%s/%s", dir, attr) < 0)
                return -ENOMEM;
        r = sysfs_read(root, rel, &v);
        if (r < 0)
                return r;
        if (!*strstrip(v))
                return -ENODATA;
        *ret = TAKE_PTR(v);
        return 0;
}

static int read_attr_u64(const char *root, const char *dir, const char *attr, int base, uint64_t *ret) {
        _cleanup_free_ char *v = NULL;
        int r;

        r = read_attr(root, dir, attr, &v);
        if (r < 0)
                return r;
        return parse_u64(v, base, ret);
}

/* A node attribute: "-1" or a missing file mean NODE_NONE. */
static int read_attr_node(const char *root, const char *dir, const char *attr) {
        _cleanup_free_ char *v = NULL;
        int node;

        /* Past NODE_ID_MAX is no node either: it must not size anything downstream. */
        if (read_attr(root, dir, attr, &v) < 0 || parse_node_id(v, &node) < 0)
                return NODE_NONE;
        return node;
}

static enum pmem_mode mode_from_driver(const char *driver) {
        if (!driver)
                return PMEM_MODE_UNKNOWN;
        if (streq(driver, "kmem"))
                return PMEM_MODE_SYSTEM_RAM;
        if (streq(driver, "device_dax"))
                return PMEM_MODE_DEVDAX;
        return PMEM_MODE_UNKNOWN;
}

/* Basename of the driver link under an absolute device path; NULL if unbound. */
static int read_driver(const char *abs_dev, char **ret) {
        _cleanup_free_ char *link = NULL;
        char buf[PATH_MAX];
        const char *base;
        ssize_t n;

        if (asprintf(&link, "%s/driver", abs_dev) < 0)
                return -ENOMEM;
        n = readlink(link, buf, sizeof(buf) - 1);
        if (n < 0) {
                if (errno == ENOENT) {
                        *ret = NULL;
                        return 0;
                }
                return -errno;
        }
        buf[n] = '\0';
        base = strrchr(buf, '/');
        base = base ? base + 1 : buf;
        if (!*base)
                return -EINVAL;
        *ret = strdup(base);
        return *ret ? 0 : -ENOMEM;
}

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
                r = read_attr_u64(root, dir, "start", 16, &start);
                if (r >= 0)
                        r = read_attr_u64(root, dir, "end", 16, &end);
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

/* Does the region's uevent say nd_pmem? Without a DEVTYPE line, nstype 5 (PMEM) decides. */
static bool region_is_pmem(const char *root, const char *rel_region) {
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
        return read_attr_u64(root, rel_region, "nstype", 10, &nstype) >= 0 && nstype == 5;
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
        dev->on_pmem_region = region_is_pmem(root, rel_region);

        /* The nd_dax is the device's parent, below the region; without one only the name tells. */
        below_region = rel_parent[prefix_len] == '/';
        r = below_region ? read_attr(root, rel_parent, "namespace", &ns) : -ENOENT;
        if (r == -ENOMEM)
                return r;
        if (r < 0 && dax_name_parse(dev->name, &a, &b) >= 0 && a == region_id) {
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
                r = read_attr(root, ns_dir, "uuid", &dev->namespace_raw_uuid);
                if (r == -ENOMEM)
                        return r;
                dev->namespace_name = TAKE_PTR(ns);
        }
        if (below_region) {
                r = read_attr(root, rel_parent, "uuid", &dev->namespace_uuid);
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
                .target_node = NODE_NONE, .numa_node = NODE_NONE, .region = -1,
        };
        _cleanup_free_ char *link = NULL, *canon = NULL, *root_canon = NULL, *abs_dev = NULL, *rel_owned = NULL;
        const char *rel_dev;
        size_t root_len;
        struct stat st;
        int r;

        if (dax_name_parse(name, NULL, NULL) < 0)
                return -EINVAL;
        dev.name = strdup(name);
        if (!dev.name)
                return -ENOMEM;

        r = sysfs_path(&link, sysfs_root, "bus/dax/devices/%s", name);
        if (r < 0)
                return r;
        canon = realpath(link, NULL);
        if (!canon)
                return -errno;
        root_canon = realpath(sysfs_root, NULL);
        if (!root_canon)
                return -errno;
        root_len = strlen(root_canon);
        if (streq(root_canon, "/"))
                root_len = 0;
        if (strncmp(canon, root_canon, root_len) != 0 || canon[root_len] != '/')
                return -EXDEV;          /* a link leaving the root: not a device of this tree */
        rel_owned = strdup(canon + root_len + 1);
        if (!rel_owned)
                return -ENOMEM;
        rel_dev = rel_owned;
        r = sysfs_path(&abs_dev, sysfs_root, "%s", rel_dev);
        if (r < 0)
                return r;

        r = read_attr_u64(sysfs_root, rel_dev, "size", 10, &dev.size);
        if (r < 0)
                return r;
        /* resource is root-only (0400); without it only mappingK can give ranges. */
        r = read_attr_u64(sysfs_root, rel_dev, "resource", 16, &dev.resource);
        if (r == -ENOENT && stat(abs_dev, &st) < 0)
                return -ENOENT;
        dev.target_node = read_attr_node(sysfs_root, rel_dev, "target_node");
        dev.numa_node = read_attr_node(sysfs_root, rel_dev, "numa_node");

        r = read_driver(abs_dev, &dev.driver);
        if (r < 0)
                return r;
        dev.mode = mode_from_driver(dev.driver);

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
        if (r < 0)
                return r;

        /* Gone while we read it? Then what we read may be half a device. */
        if (stat(abs_dev, &st) < 0)
                return -errno;

        *ret = dev;
        dev = (struct pmem_device) {};
        return 0;
}

static int cmp_device(const void *a, const void *b) {
        const struct pmem_device *x = a, *y = b;
        unsigned xr = 0, xi = 0, yr = 0, yi = 0;

        if (dax_name_parse(x->name, &xr, &xi) < 0 || dax_name_parse(y->name, &yr, &yi) < 0)
                return strcmp(x->name, y->name);
        if (xr != yr)
                return xr < yr ? -1 : 1;
        return xi < yi ? -1 : xi > yi;
}

int pmem_scan(const char *sysfs_root, struct pmem_devices *ret) {
        _cleanup_(pmem_devices_clearp) struct pmem_devices set = {};
        _cleanup_free_ char *path = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = sysfs_path(&path, sysfs_root, "bus/dax/devices");
        if (r < 0)
                return r;
        d = opendir(path);
        if (!d && errno != ENOENT)
                return -errno;
        while (d && (errno = 0, de = readdir(d))) {
                struct pmem_device dev;

                if (dax_name_parse(de->d_name, NULL, NULL) < 0)
                        continue;
                r = pmem_read_device(sysfs_root, de->d_name, &dev);
                if (r == -ENOENT)
                        continue;       /* removed between readdir and reading it */
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        /* One bad device must not hide the others; the caller decides what unknown means. */
                        if (set.n_unreadable++ == 0) {
                                /* dax_name_parse() bounds the name: daxR.N with two unsigned ints. */
                                size_t len = strnlen(de->d_name, sizeof(set.unreadable_name) - 1);

                                memcpy(set.unreadable_name, de->d_name, len);
                                set.unreadable_name[len] = 0;
                                set.unreadable_error = r;
                        }
                        continue;
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

        pmem_devices_clear(ret);
        *ret = set;
        set = (struct pmem_devices) {};
        return (int) ret->n;
}

const struct pmem_device *pmem_devices_find(const struct pmem_devices *d, const char *name) {
        if (!d || !name)
                return NULL;
        for (size_t i = 0; i < d->n; i++)
                if (streq(d->devices[i].name, name))
                        return &d->devices[i];
        return NULL;
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
                size_t lo = 0, hi = m;

                if (block_phys_start(b->id, block_size, &start) < 0)
                        continue;
                end = start + block_size;

                /* Last interval starting at or below the block. */
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;

                        if (iv[mid].start <= start)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                if (lo == 0)
                        continue;
                hit = &iv[lo - 1];
                /* kmem adds only whole blocks inside its range: a partial overlap is someone else's. */
                if (end > hit->end)
                        continue;

                if (set_string(&b->device, hit->dev->name) < 0 ||
                    set_string(&b->namespace_name, hit->dev->namespace_name) < 0 ||
                    set_string(&b->namespace_uuid, hit->dev->namespace_uuid) < 0)
                        return -ENOMEM;
                b->region = hit->dev->region;
                if (hit->dev->target_node >= 0 && (b->node == NODE_NONE || b->node_guessed)) {
                        b->node = hit->dev->target_node;
                        b->node_guessed = false;
                }
                count++;
        }
        return count;
}

/* ---- daxctl.conf.d ---------------------------------------------------- */

#define DAXCTL_SECTION "reconfigure-device"
/* Bounds on what is read: daxctl's own files are a few lines each. */
#define DAXCTL_CONF_MAX (1024 * 1024)
#define DAXCTL_CONF_FILES_MAX 1024

static void claim_done(struct daxctl_claim *c) {
        free(c->file);
        free(c->section);
        free(c->uuid);
        free(c->mode);
        *c = (struct daxctl_claim) { .online = -1, .movable = -1 };
}

void pmem_daxctl_conf_clear(struct daxctl_conf *c) {
        if (!c)
                return;
        for (size_t i = 0; i < c->n_claims; i++)
                claim_done(&c->claims[i]);
        free(c->claims);
        for (size_t i = 0; i < c->n_ignored; i++)
                free(c->ignored[i]);
        free(c->ignored);
        *c = (struct daxctl_conf) {};
}

static void daxctl_conf_clearp(struct daxctl_conf *c) {
        pmem_daxctl_conf_clear(c);
}

static int conf_ignore(struct daxctl_conf *c, const char *fmt, ...) _printf_(2, 3);
static int conf_ignore(struct daxctl_conf *c, const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (GROW(c->ignored, c->allocated_ignored, c->n_ignored + 1) < 0) {
                free(s);
                return -ENOMEM;
        }
        c->ignored[c->n_ignored++] = s;
        return 0;
}

/* daxctl's reading of a boolean (conf_string_to_bool): the first letter decides; -1 when it is none of them. */
static int conf_bool(const char *s) {
        if (!s || !*s)
                return -1;
        if (strchr("tTyY1", s[0]))
                return 1;
        if (strchr("fFnN0", s[0]))
                return 0;
        return -1;
}

/*
 * iniparser reports errors through one process-wide callback, with no
 * userdata: this thread's last one is kept here, and only its line and
 * kind are used (the message would echo the file's text raw).
 */
struct ini_error {
        unsigned line;
        const char *what;
};
static _Thread_local struct ini_error ini_last_error;

static int ini_error_capture(const char *fmt, ...) {
        struct ini_error e = { .what = "cannot be parsed" };
        va_list ap;

        if (ini_last_error.what)
                return 0;       /* the first error is the one to show */
        va_start(ap, fmt);
        /* The formats are the same in iniparser 4.1 and 4.2: "... in %s (%d)...". */
        if (strstr(fmt, "%s (%d)")) {
                int line;

                (void) va_arg(ap, const char *);
                line = va_arg(ap, int);
                e.line = line > 0 ? (unsigned) line : 0;
                e.what = strstr(fmt, "too long") ? "line too long for iniparser (1023 bytes at most)" :
                                                   "syntax error";
        } else if (strstr(fmt, "memory"))
                e.what = "out of memory";
        va_end(ap);
        ini_last_error = e;
        return 0;
}

static void ini_error_setup(void) {
        iniparser_set_error_callback(ini_error_capture);
}

/* Only a regular file of at most DAXCTL_CONF_MAX, opened without blocking; returns the fd. */
static int open_conf_file(const char *path) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size > DAXCTL_CONF_MAX)
                return -EFBIG;
        return TAKE_FD(fd);
}

/* "reconfigure-device NAME" -> NAME, as daxctl matches it: the first word decides. */
static const char *reconfigure_section(const char *secname) {
        size_t n = strlen(DAXCTL_SECTION);

        secname += strspn(secname, " \t\n\r");
        if (strncmp(secname, DAXCTL_SECTION, n) != 0 || (secname[n] && !strchr(" \t\n\r", secname[n])))
                return NULL;
        return secname + n + strspn(secname + n, " \t\n\r");
}

static const char *section_value(dictionary *d, const char *secname, const char *key, char *buf, size_t size) {
        if ((size_t) snprintf(buf, size, "%s:%s", secname, key) >= size)
                return NULL;
        return iniparser_getstring(d, buf, NULL);
}

/* One [reconfigure-device NAME] section: a claim, or a note on why daxctl never acts on it. */
static int conf_section(dictionary *d, const char *secname, const char *label, struct daxctl_conf *c) {
        struct daxctl_claim claim = { .online = -1, .movable = -1 };
        const char *name = reconfigure_section(secname), *uuid, *mode, *online, *movable;
        size_t keylen = strlen(secname) + 32;
        _cleanup_free_ char *key = NULL;

        if (!name)
                return 0;
        key = malloc(keylen);
        if (!key)
                return -ENOMEM;
        uuid = section_value(d, secname, "nvdimm.uuid", key, keylen);
        if (!uuid)
                return conf_ignore(c, "%s: [%s %s] has no nvdimm.uuid: daxctl never matches it", label,
                                   DAXCTL_SECTION, name);
        for (const char *u = uuid; *u; u++)
                if (isupper((unsigned char) *u))
                        return conf_ignore(c, "%s: [%s %s] nvdimm.uuid %s has upper-case letters: daxctl "
                                           "compares it verbatim with the lower-case sysfs uuid and never matches",
                                           label, DAXCTL_SECTION, name, uuid);
        mode = section_value(d, secname, "mode", key, keylen);
        if (!mode || !(streq(mode, "system-ram") || streq(mode, "devdax")))
                return conf_ignore(c, "%s: [%s %s] mode = '%s' is not system-ram or devdax: daxctl fails on it",
                                   label, DAXCTL_SECTION, name, mode ?: "");
        online = section_value(d, secname, "online", key, keylen);
        movable = section_value(d, secname, "movable", key, keylen);

        claim.file = strdup(label);
        claim.section = strdup(name);
        claim.uuid = strdup(uuid);
        claim.mode = strdup(mode);
        claim.online = conf_bool(online);
        claim.movable = conf_bool(movable);
        if (!claim.file || !claim.section || !claim.uuid || !claim.mode ||
            GROW(c->claims, c->allocated_claims, c->n_claims + 1) < 0) {
                claim_done(&claim);
                return -ENOMEM;
        }
        c->claims[c->n_claims++] = claim;
        return 0;
}

static void dictionary_freep(dictionary **d) {
        if (*d)
                iniparser_freedict(*d);
}

/*
 * Parse one file with libiniparser, as daxctl does: a file iniparser
 * rejects is rejected whole (daxctl fails on it), and noted with the line
 * iniparser names.
 */
static int conf_parse_file(const char *path, const char *label, struct daxctl_conf *c) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        _cleanup_(dictionary_freep) dictionary *d = NULL;
        _cleanup_close_ int fd = -1;
        char fd_path[64];
        const char *load_path = path;
        int n, r;

        fd = open_conf_file(path);
        if (fd < 0)
                return conf_ignore(c, "%s: not read: %s", label,
                                   fd == -EBADFD ? "not a regular file" :
                                   fd == -EFBIG ? "larger than 1 MiB" : strerror(-fd));
        /* iniparser opens by name: the name of the file just checked, where /proc has it. */
        snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fd);
        if (access(fd_path, R_OK) == 0)
                load_path = fd_path;

        (void) pthread_once(&once, ini_error_setup);
        ini_last_error = (struct ini_error) {};
        errno = 0;
        d = iniparser_load(load_path);
        if (!d) {
                if (errno == ENOMEM || (ini_last_error.what && streq(ini_last_error.what, "out of memory")))
                        return -ENOMEM;
                if (ini_last_error.line > 0)
                        return conf_ignore(c, "%s:%u: %s: daxctl rejects the whole file", label,
                                           ini_last_error.line, ini_last_error.what);
                return conf_ignore(c, "%s: %s: daxctl rejects the whole file", label,
                                   ini_last_error.what ?: "cannot be parsed");
        }

        n = iniparser_getnsec(d);
        for (int i = 0; i < n; i++) {
                const char *secname = iniparser_getsecname(d, i);

                if (!secname)
                        continue;
                r = conf_section(d, secname, label, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* daxctl takes regular files named *.conf (not ".conf" itself), in alphabetical order. */
static int conf_filter(const struct dirent *de) {
        const char *ext = strrchr(de->d_name, '.');

        return de->d_type == DT_REG && ext && ext != de->d_name && streq(ext, ".conf");
}

int pmem_daxctl_conf_load(const char *dir, struct daxctl_conf *ret) {
        _cleanup_(daxctl_conf_clearp) struct daxctl_conf c = {};
        struct dirent **names = NULL;
        const char *dirbase;
        int n, r = 0;

        dirbase = strrchr(dir, '/');
        dirbase = dirbase && dirbase[1] ? dirbase + 1 : dir;
        n = scandir(dir, &names, conf_filter, alphasort);
        if (n < 0) {
                /* daxctl would not read it either; say so, but never fail over it. */
                if (errno == ENOMEM)
                        return -ENOMEM;
                if (errno != ENOENT && conf_ignore(&c, "%s: cannot read the directory: %s", dir, strerror(errno)) < 0)
                        return -ENOMEM;
                n = 0;
        }

        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL, *label = NULL, *shown = NULL;

                if (r >= 0 && i == DAXCTL_CONF_FILES_MAX)
                        r = conf_ignore(&c, "%s: %d more files not read (at most %d)", dir, n - i,
                                        DAXCTL_CONF_FILES_MAX);
                if (r >= 0 && i < DAXCTL_CONF_FILES_MAX) {
                        size_t size = 4 * (strlen(dirbase) + strlen(names[i]->d_name)) + 2;

                        /* The name goes into every message about the file: escaped once, here. */
                        if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0 ||
                            asprintf(&label, "%s/%s", dirbase, names[i]->d_name) < 0 || !(shown = malloc(size)))
                                r = -ENOMEM;
                        else {
                                escape_text(shown, size, label);
                                r = conf_parse_file(path, shown, &c);
                        }
                }
                free(names[i]);
        }
        free(names);
        if (r < 0)
                return r;

        pmem_daxctl_conf_clear(ret);
        *ret = c;
        c = (struct daxctl_conf) {};
        return 0;
}

const struct daxctl_claim *pmem_daxctl_conf_find(const struct daxctl_conf *c, const char *uuid, size_t *ret_count) {
        const struct daxctl_claim *first = NULL;
        size_t count = 0;

        if (c && uuid)
                for (size_t i = 0; i < c->n_claims; i++)
                        if (streq(c->claims[i].uuid, uuid)) {
                                if (!first)
                                        first = &c->claims[i];
                                count++;
                        }
        if (ret_count)
                *ret_count = count;
        return first;
}

int pmem_daxctl_confdir(char **ret) {
        struct daxctl_ctx *ctx = NULL;
        const char *dir = NULL;
        char *s;

        if (daxctl_new(&ctx) >= 0)
                dir = daxctl_get_config_path(ctx);
        s = strdup(dir ?: PMEM_DAXCTL_CONFDIR);
        if (ctx)
                daxctl_unref(ctx);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* ---- decisions -------------------------------------------------------- */

static void reasonf(struct pmem_decision *d, const char *fmt, ...) _printf_(2, 3);
static void reasonf(struct pmem_decision *d, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
        va_end(ap);
}

/* Is every range of the device inside [start, end)? */
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
                .memdev = dev->name,
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
        char why[160];
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
        if (rd.origin == RULE_EXCLUDE) {
                exclusion_reason(&rd, d.reason, sizeof(d.reason));
                goto done;
        }
        if (dev->mode != PMEM_MODE_DEVDAX) {
                reasonf(&d, "not devdax (mode %s)", pmem_mode_to_string(dev->mode));
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
        if (claim) {
                char more[64] = "";

                d.daxctl_claimed = true;
                if (n_claims > 1)
                        snprintf(more, sizeof(more), " (and %zu more entries)", n_claims - 1);
                if (p->respect_daxctl) {
                        if (streq(claim->mode, "devdax"))
                                reasonf(&d, "claimed by %s%s: daxctl keeps it devdax (respect_daxctl=yes)",
                                        claim->file, more);
                        else
                                reasonf(&d, "claimed by %s%s: daxctl will reconfigure it (respect_daxctl=yes); %s",
                                        claim->file, more,
                                        claim->online == 0 ? "memonlined onlines its memory (online=false)" :
                                        "daxctl onlines its memory itself (online=true)");
                        goto done;
                }
                d.action = PMEM_ACTION_CONVERT;
                reasonf(&d, "%s; %s also claims it (respect_daxctl=no): whichever runs second finds it converted",
                        why, claim->file);
                goto done;
        }
        d.action = PMEM_ACTION_CONVERT;
        reasonf(&d, "%s", why);
done:
        *ret = d;
        return 0;
}

int pmem_decide(const struct pmem_device *dev, const struct policy *p, const char *daxctl_confdir,
                struct pmem_decision *ret) {
        _cleanup_(daxctl_conf_clearp) struct daxctl_conf conf = {};
        int r;

        if (daxctl_confdir) {
                r = pmem_daxctl_conf_load(daxctl_confdir, &conf);
                if (r < 0)
                        return r;
        }
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
        _cleanup_(daxctl_conf_clearp) struct daxctl_conf conf = {};
        int r;

        if (daxctl_confdir) {
                r = pmem_daxctl_conf_load(daxctl_confdir, &conf);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; d && i < d->n; i++) {
                const struct pmem_device *dev = &d->devices[i];
                struct pmem_decision dec;

                r = pmem_decide_conf(dev, p, &conf, &dec);
                if (r < 0)
                        return r;
                fprintf(out, "device=%s action=%s zone=%s reason=", dev->name, pmem_action_to_string(dec.action),
                        zone_to_string(dec.zone));
                fprint_quoted(out, dec.reason);
                fprintf(out, " namespace=%s region=%d node=%d size=%" PRIu64 " mode=%s\n",
                        dev->namespace_name ?: "-", dev->region, dev->target_node, dev->size,
                        pmem_mode_to_string(dev->mode));
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

/* ---- conversion ------------------------------------------------------- */

/* libdaxctl's last error line, so the failure report says what the library saw. */
struct daxctl_log {
        char last[256];
};

static void daxctl_log_capture(struct daxctl_ctx *ctx, int priority, const char *file, int line, const char *fn,
                               const char *format, va_list args) _printf_(6, 0);
static void daxctl_log_capture(struct daxctl_ctx *ctx, int priority, const char *file, int line, const char *fn,
                               const char *format, va_list args) {
        struct daxctl_log *log = daxctl_get_userdata(ctx);
        size_t n;

        if (!log)
                return;
        vsnprintf(log->last, sizeof(log->last), format, args);
        n = strlen(log->last);
        while (n > 0 && (log->last[n - 1] == '\n' || log->last[n - 1] == ' '))
                log->last[--n] = '\0';
}

static void daxctl_unrefp(struct daxctl_ctx **ctx) {
        if (*ctx)
                daxctl_unref(*ctx);
}

static int convert_fail(struct pmem_convert_result *res, const struct daxctl_log *log, int error,
                        const char *fmt, ...) _printf_(4, 5);
static int convert_fail(struct pmem_convert_result *res, const struct daxctl_log *log, int error,
                        const char *fmt, ...) {
        va_list ap;
        size_t n;

        va_start(ap, fmt);
        vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
        va_end(ap);
        n = strlen(res->reason);
        if (log && log->last[0] && n < sizeof(res->reason))
                snprintf(res->reason + n, sizeof(res->reason) - n, " (libdaxctl: %s)", log->last);
        res->error = error;
        return error;
}

static enum pmem_mode live_mode(const char *device) {
        _cleanup_free_ char *abs_dev = NULL, *driver = NULL;

        if (sysfs_path(&abs_dev, "/sys", "bus/dax/devices/%s", device) < 0 || read_driver(abs_dev, &driver) < 0)
                return PMEM_MODE_UNKNOWN;
        return mode_from_driver(driver);
}

/* Why a kmem bind failed, in the admin's terms. */
static const char *bind_hint(int error) {
        switch (-error) {
        case EBUSY:
                return "the range is busy: another driver or earlier hotplug owns part of it";
        case EINVAL:
                return "kmem rejected the device: no valid target node, or a range not aligned to the memory block size";
        case ENOENT:
                return "the kmem module is not available";
        case ENOMEM:
                return "the kernel ran out of memory for the new memory map";
        case ENXIO:
                return "the kmem driver did not bind";
        default:
                return "binding kmem failed";
        }
}

/* Is root the /sys libdaxctl works on (the same directory, however named)? 1, 0, or -errno. */
static int is_real_sys(const char *root) {
        struct stat a, b;

        if (stat(root, &a) < 0)
                return -errno;
        if (stat("/sys", &b) < 0)
                return errno == ENOENT ? 0 : -errno;
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int pmem_convert(const char *sysfs_root, const char *device, struct pmem_convert_result *ret) {
        _cleanup_(daxctl_unrefp) struct daxctl_ctx *ctx = NULL;
        _cleanup_free_ char *auto_online = NULL;
        struct pmem_convert_result res = {
                .mode_before = PMEM_MODE_UNKNOWN, .mode_after = PMEM_MODE_UNKNOWN, .target_node = NODE_NONE,
        };
        struct daxctl_log log = {};
        struct daxctl_region *region;
        struct daxctl_dev *dev = NULL;
        uint64_t t0;
        int r;

        if (!ret)
                return -EINVAL;
        if (dax_name_parse(device, NULL, NULL) < 0) {
                r = convert_fail(&res, NULL, -EINVAL, "'%s' is not a dax device name (daxR.N)", device ?: "");
                goto out;
        }
        if (!sysfs_root) {
                r = convert_fail(&res, NULL, -EINVAL, "%s: no sysfs root given", device);
                goto out;
        }
        r = is_real_sys(sysfs_root);
        if (r < 0) {
                r = convert_fail(&res, NULL, r, "%s: cannot check the sysfs root %s: %s", device, sysfs_root,
                                 strerror(-r));
                goto out;
        }
        if (r == 0) {
                r = convert_fail(&res, NULL, -EXDEV, "%s: not converting: libdaxctl acts on only the real /sys, "
                                 "and the sysfs root is %s", device, sysfs_root);
                goto out;
        }

        r = daxctl_new(&ctx);
        if (r < 0) {
                ctx = NULL;
                r = convert_fail(&res, NULL, r, "libdaxctl cannot start: %s", strerror(-r));
                goto out;
        }
        daxctl_set_userdata(ctx, &log);
        daxctl_set_log_fn(ctx, daxctl_log_capture);
        daxctl_set_log_priority(ctx, LOG_ERR);

        daxctl_region_foreach(ctx, region) {
                struct daxctl_dev *d;

                daxctl_dev_foreach(region, d)
                        if (streq(daxctl_dev_get_devname(d), device)) {
                                dev = d;
                                break;
                        }
                if (dev)
                        break;
        }
        if (!dev) {
                r = convert_fail(&res, &log, -ENOENT, "%s: no such dax device (removed, or not on the dax bus)", device);
                goto out;
        }
        res.size = daxctl_dev_get_size(dev);
        res.target_node = daxctl_dev_get_target_node(dev);
        if (res.target_node < 0)
                res.target_node = NODE_NONE;

        res.mode_before = daxctl_dev_get_memory(dev) ? PMEM_MODE_SYSTEM_RAM : live_mode(device);
        if (res.mode_before == PMEM_MODE_SYSTEM_RAM) {
                /* Converted by hand or by daxctl meanwhile: its blocks come as memory events. */
                res.already = true;
                res.mode_after = PMEM_MODE_SYSTEM_RAM;
                snprintf(res.reason, sizeof(res.reason), "%s: already system-ram, nothing to convert", device);
                r = 0;
                goto out;
        }
        if (daxctl_dev_is_enabled(dev) && res.mode_before != PMEM_MODE_DEVDAX) {
                _cleanup_free_ char *bus_path = NULL;

                if (sysfs_path(&bus_path, "/sys", "bus/dax/devices/%s", device) >= 0 && access(bus_path, F_OK) < 0) {
                        r = convert_fail(&res, NULL, -EOPNOTSUPP, "%s: the old dax class device model cannot be "
                                         "reconfigured; see daxctl-migrate-device-model(1)", device);
                        goto out;
                }
                r = convert_fail(&res, NULL, -EINVAL, "%s: bound to a driver that is neither device_dax nor kmem; "
                                 "not converting a device someone else drives", device);
                goto out;
        }
        if (res.size == 0) {
                r = convert_fail(&res, NULL, -EINVAL, "%s: size 0 (an unallocated seed device): nothing to convert",
                                 device);
                goto out;
        }

        /*
         * With auto_online_blocks "online*" the kernel onlines the new blocks
         * itself during the bind, into its default zone, and our zone policy
         * and pinned workers never get a say. daxctl refuses --no-online in
         * that case for the same reason; so do we.
         */
        r = sysfs_read("/sys", "devices/system/memory/auto_online_blocks", &auto_online);
        if (r >= 0 && startswith(auto_online, "online")) {
                r = convert_fail(&res, NULL, -EBUSY,
                                 "%s: /sys/devices/system/memory/auto_online_blocks is '%s': the kernel would online "
                                 "the new memory itself, bypassing memonlined's zone policy (daxctl refuses "
                                 "--no-online for the same reason); set it to 'offline' (memhp_default_state=offline)",
                                 device, auto_online);
                goto out;
        }

        if (daxctl_dev_is_enabled(dev)) {
                t0 = now_usec();
                r = daxctl_dev_disable(dev);
                res.disable_usec = now_usec() - t0;
                if (r < 0) {
                        if (r == -EOPNOTSUPP)
                                r = convert_fail(&res, &log, r, "%s: the old dax class device model cannot be "
                                                 "reconfigured; see daxctl-migrate-device-model(1)", device);
                        else
                                r = convert_fail(&res, &log, r, "%s: unbinding device_dax failed: %s%s", device,
                                                 strerror(-r), r == -EBUSY ? " (device busy: in use?)" : "");
                        goto out;
                }
        }

        log.last[0] = '\0';
        t0 = now_usec();
        r = daxctl_dev_enable_ram(dev);
        res.bind_usec = now_usec() - t0;
        if (r < 0) {
                int bind_error = r;
                const char *after = "left unbound";

                /* Do not leave the admin's device without a driver. */
                if (res.mode_before == PMEM_MODE_DEVDAX && daxctl_dev_enable_devdax(dev) >= 0) {
                        res.rolled_back = true;
                        after = "restored to devdax";
                }
                res.mode_after = live_mode(device);
                r = convert_fail(&res, &log, bind_error, "%s: %s: %s; device %s", device, bind_hint(bind_error),
                                 strerror(-bind_error), after);
                goto out;
        }

        res.mode_after = live_mode(device);
        if (res.mode_after != PMEM_MODE_SYSTEM_RAM || !daxctl_dev_get_memory(dev)) {
                r = convert_fail(&res, &log, -EIO, "%s: kmem bind returned success but the device is %s, not system-ram",
                                 device, pmem_mode_to_string(res.mode_after));
                goto out;
        }
        snprintf(res.reason, sizeof(res.reason), "%s: converted to system-ram (kmem bind %" PRIu64 " us), memory left "
                 "offline for memonlined", device, res.bind_usec);
        r = 0;
out:
        res.error = r;
        *ret = res;
        return r;
}

/* ---- reporting -------------------------------------------------------- */

int pmem_report_device(struct reporter *r, const struct pmem_device *dev, const struct pmem_convert_result *conv,
                       uint64_t online_usec, uint64_t total_usec, size_t blocks, uint64_t bytes) {
        struct record rec = {};
        char how[160];
        bool failed = conv && conv->error < 0;
        int k = 0;

        if (!r || !dev)
                return -EINVAL;

        if (failed)
                snprintf(how, sizeof(how), "conversion to system-ram failed: %s", strerror(-conv->error));
        else if (conv && !conv->already)
                snprintf(how, sizeof(how), "converted to system-ram in %.1f ms, ", (double) conv->bind_usec / 1000.0);
        else
                how[0] = '\0';

        if (k >= 0)
                k = record_add(&rec, "MESSAGE_ID=%s", MESSAGE_ID_DEVICE);
        if (k >= 0)
                k = record_add(&rec, "PRIORITY=%d", failed ? LOG_WARNING : LOG_INFO);
        if (k >= 0)
                k = record_add(&rec, "MEMONLINE_DEVICE=%s", dev->name);
        if (k >= 0 && dev->namespace_name)
                k = record_add(&rec, "MEMONLINE_NAMESPACE=%s", dev->namespace_name);
        if (k >= 0 && dev->namespace_uuid)
                k = record_add(&rec, "MEMONLINE_NAMESPACE_UUID=%s", dev->namespace_uuid);
        if (k >= 0)
                k = record_add(&rec, "MEMONLINE_REGION=%d", dev->region);
        if (k >= 0)
                k = record_add(&rec, "MEMONLINE_NODE=%d", dev->target_node);
        if (k >= 0)
                k = record_add(&rec, "MEMONLINE_BIND_USEC=%" PRIu64, conv && !conv->already ? conv->bind_usec : 0);
        if (k >= 0)
                k = record_add(&rec, "MEMONLINE_ONLINE_USEC=%" PRIu64, online_usec);
        if (k >= 0)
                k = record_add(&rec, "MEMONLINE_TOTAL_USEC=%" PRIu64, total_usec);
        if (k >= 0)
                k = record_add(&rec, "MEMONLINE_BLOCKS=%zu", blocks);
        if (k >= 0)
                k = record_add(&rec, "MEMONLINE_BYTES=%" PRIu64, bytes);
        if (k >= 0 && failed)
                k = record_add(&rec, "MEMONLINE_ERRNO=%d", -conv->error);
        if (k >= 0) {
                if (failed)
                        k = record_add(&rec, "MESSAGE=%s: %s", dev->name, how);
                else
                        k = record_add(&rec, "MESSAGE=%s%s%s%s: %s%zu blocks (%.2f GiB) online on node %d in %.1f ms, "
                                       "%.1f ms in all", dev->name, dev->namespace_name ? " (" : "",
                                       dev->namespace_name ?: "", dev->namespace_name ? ")" : "", how, blocks,
                                       (double) bytes / (double) (1ULL << 30), dev->target_node,
                                       (double) online_usec / 1000.0, (double) total_usec / 1000.0);
        }
        if (k >= 0)
                k = record_emit(r, &rec);
        record_clear(&rec);
        return k < 0 ? k : 0;
}
