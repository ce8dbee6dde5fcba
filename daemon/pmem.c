/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <limits.h>
#include <unistd.h>
#include <dirent.h>
#include "pmem.h"
#include "sysfs.h"
#include "util.h"

/* The device record and what every dax file needs: names, modes, drivers. */

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

void pmem_device_done(struct pmem_device *dev) {
        if (!dev)
                return;
        free(dev->name);
        free(dev->driver);
        free(dev->ranges);
        free(dev->namespace_name);
        free(dev->namespace_uuid);
        free(dev->namespace_raw_uuid);
        free(dev->region_rel);
        free(dev->cxl_region);
        free(dev->cxl_decoder);
        free(dev->cxl_memdevs);
        *dev = (struct pmem_device) { .target_node = NODE_NONE, .numa_node = NODE_NONE, .region = -1,
                                      .memmap_on_memory = -1 };
}

void pmem_devices_clear(struct pmem_devices *d) {
        if (!d)
                return;
        for (size_t i = 0; i < d->n; i++)
                pmem_device_done(&d->devices[i]);
        free(d->devices);
        *d = (struct pmem_devices) {};
}

const struct pmem_device *pmem_devices_find(const struct pmem_devices *d, const char *name) {
        if (!d || !name)
                return NULL;
        for (size_t i = 0; i < d->n; i++)
                if (streq(d->devices[i].name, name))
                        return &d->devices[i];
        return NULL;
}

/* "<prefix>N" with N in decimal digits only, at most INT_MAX. */
static int parse_index(const char *s, const char *prefix, size_t len, unsigned *ret) {
        size_t plen = strlen(prefix);
        unsigned v = 0;

        if (len <= plen || strncmp(s, prefix, plen) != 0)
                return -EINVAL;
        for (size_t i = plen; i < len; i++) {
                if (!isdigit((unsigned char) s[i]))
                        return -EINVAL;
                if (v > (INT_MAX - (unsigned) (s[i] - '0')) / 10)
                        return -EINVAL;
                v = v * 10 + (unsigned) (s[i] - '0');
        }
        if (ret)
                *ret = v;
        return 0;
}

int pmem_name_index(const char *name, const char *prefix, unsigned *ret) {
        if (!name || !prefix)
                return -EINVAL;
        return parse_index(name, prefix, strlen(name), ret);
}

int pmem_name_pair(const char *name, const char *prefix, unsigned *ret_a, unsigned *ret_b) {
        const char *dot;
        unsigned a, b;

        if (!name || !prefix)
                return -EINVAL;
        dot = strchr(name, '.');
        if (!dot || parse_index(name, prefix, (size_t) (dot - name), &a) < 0 ||
            parse_index(dot + 1, "", strlen(dot + 1), &b) < 0)
                return -EINVAL;
        if (ret_a)
                *ret_a = a;
        if (ret_b)
                *ret_b = b;
        return 0;
}

int pmem_dax_name_parse(const char *name, unsigned *ret_region, unsigned *ret_id) {
        return pmem_name_pair(name, "dax", ret_region, ret_id);
}

enum pmem_mode pmem_mode_from_driver(const char *driver) {
        if (!driver)
                return PMEM_MODE_UNKNOWN;
        if (streq(driver, "kmem"))
                return PMEM_MODE_SYSTEM_RAM;
        if (streq(driver, "device_dax"))
                return PMEM_MODE_DEVDAX;
        return PMEM_MODE_UNKNOWN;
}

int pmem_read_driver(const char *abs_dev, char **ret) {
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

int pmem_read_attr(const char *root, const char *dir, const char *attr, char **ret) {
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

int pmem_read_attr_node(const char *root, const char *dir, const char *attr) {
        _cleanup_free_ char *v = NULL;
        int node;

        /* Past NODE_ID_MAX is no node either: it must not size anything downstream. */
        if (pmem_read_attr(root, dir, attr, &v) < 0 || parse_node_id(v, &node) < 0)
                return NODE_NONE;
        return node;
}

int pmem_read_attr_u64(const char *root, const char *dir, const char *attr, int base, uint64_t *ret) {
        _cleanup_free_ char *v = NULL;
        int r;

        r = pmem_read_attr(root, dir, attr, &v);
        if (r < 0)
                return r;
        return parse_u64(v, base, ret);
}

int pmem_resolve_in_root(const char *sysfs_root, const char *rel, char **ret_rel) {
        _cleanup_free_ char *path = NULL, *canon = NULL, *root_canon = NULL;
        size_t root_len;
        char *s;
        int r;

        r = sysfs_resolve_beneath(sysfs_root, rel, ret_rel);
        if (r != -ENOSYS)
                return r;
        /* realpath() reads every component's link: a dozen syscalls a device where the above takes six. */
        r = sysfs_path(&path, sysfs_root, "%s", rel);
        if (r < 0)
                return r;
        canon = realpath(path, NULL);
        if (!canon)
                return -errno;
        root_canon = realpath(sysfs_root, NULL);
        if (!root_canon)
                return -errno;
        root_len = streq(root_canon, "/") ? 0 : strlen(root_canon);
        if (strncmp(canon, root_canon, root_len) != 0 || canon[root_len] != '/')
                return -EXDEV;
        s = strdup(canon + root_len + 1);
        if (!s)
                return -ENOMEM;
        *ret_rel = s;
        return 0;
}

struct bus_entry {
        unsigned index;
        char *name;
};

static int cmp_bus_entry(const void *a, const void *b) {
        const struct bus_entry *x = a, *y = b;

        return x->index < y->index ? -1 : x->index > y->index;
}

static void bus_entries_free(struct bus_entry *e, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(e[i].name);
        free(e);
}

/* The names <prefix>N in the directory, by N. */
static int bus_entries(DIR *d, const char *prefix, struct bus_entry **ret, size_t *ret_n) {
        struct bus_entry *e = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        unsigned index;

        while (d && (errno = 0, de = readdir(d))) {
                if (pmem_name_index(de->d_name, prefix, &index) < 0)
                        continue;
                if (GROW(e, allocated, n + 1) < 0 || !(e[n].name = strdup(de->d_name))) {
                        bus_entries_free(e, n);
                        return -ENOMEM;
                }
                e[n++].index = index;
        }
        if (d && errno != 0) {
                int r = -errno;

                bus_entries_free(e, n);
                return r;
        }
        if (n > 1)
                qsort(e, n, sizeof(*e), cmp_bus_entry);
        *ret = e;
        *ret_n = n;
        return 0;
}

int pmem_scan_bus(const char *sysfs_root, const struct pmem_bus_scan *scan, void **ret_items, size_t *ret_n,
                  size_t *n_unreadable, int *unreadable_error) {
        _cleanup_closedir_ DIR *d = NULL;
        struct bus_entry *e = NULL;
        size_t n_entries = 0, n = 0;
        char *items;
        int r;

        r = sysfs_opendir_optional(sysfs_root, scan->dir, NULL, &d);
        if (r >= 0)
                r = bus_entries(d, scan->prefix, &e, &n_entries);
        if (r < 0)
                return r;
        items = calloc(n_entries ?: 1, scan->item_size);
        if (!items) {
                bus_entries_free(e, n_entries);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_entries; i++) {
                r = scan->read(sysfs_root, e[i].name, items + n * scan->item_size, scan->userdata);
                if (r == -ENOMEM)
                        break;
                if (r == -ENOENT)
                        continue;       /* gone between readdir and reading it */
                if (r < 0) {
                        if ((*n_unreadable)++ == 0)
                                *unreadable_error = r;
                        continue;
                }
                n++;
        }
        bus_entries_free(e, n_entries);
        if (r == -ENOMEM) {
                for (size_t i = 0; i < n; i++)
                        scan->done(items + i * scan->item_size);
                free(items);
                return r;
        }
        *ret_items = items;
        *ret_n = n;
        return 0;
}
