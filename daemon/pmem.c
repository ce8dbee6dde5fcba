/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <limits.h>
#include <unistd.h>
#include "pmem.h"
#include "sysfs.h"
#include "topology.h"
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
