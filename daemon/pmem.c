/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <limits.h>
#include <unistd.h>
#include "pmem.h"
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

const struct pmem_device *pmem_devices_find(const struct pmem_devices *d, const char *name) {
        if (!d || !name)
                return NULL;
        for (size_t i = 0; i < d->n; i++)
                if (streq(d->devices[i].name, name))
                        return &d->devices[i];
        return NULL;
}

int pmem_dax_name_parse(const char *name, unsigned *ret_region, unsigned *ret_id) {
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
