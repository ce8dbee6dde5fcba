/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>
#include "pmem-cxl.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

/*
 * The sysfs layout this file relies on (kernel drivers/cxl/core/region.c,
 * port.c, drivers/dax/cxl.c; read in the 6.12 guest, tests/vm/README.md
 * "CXL in the 6.12 guest"):
 *
 *   bus/dax/devices/daxN.M -> .../ACPI0017:00/rootK/decoderK.D/regionN/dax_regionN/daxN.M
 *
 *   .../rootK/decoderK.D          the root decoder: one CXL window (CFMWS)
 *   .../decoderK.D/regionN        the region; interleave_ways, and targetI
 *                                 (I < ways): the endpoint decoder name of
 *                                 position I, e.g. decoder2.0
 *   bus/cxl/devices/decoderE.F -> .../portP/endpointE/decoderE.F
 *   .../endpointE/uport        -> .../memM, the memdev (the expander)
 *
 * Every name is checked against its kernel pattern and every link must
 * stay inside the root: a sysfs tree is outside input.
 */

/* Positions in one region: CXL interleaves at most 16 ways. */
#define CXL_WAYS_MAX 16

/* The directory part of a relative path, and its last component. */
static int split_last(const char *rel, char **ret_dir, const char **ret_base) {
        const char *slash = strrchr(rel, '/');
        char *dir;

        if (!slash || slash == rel || !slash[1])
                return -EINVAL;
        dir = strndup(rel, (size_t) (slash - rel));
        if (!dir)
                return -ENOMEM;
        *ret_dir = dir;
        *ret_base = slash + 1;
        return 0;
}

/*
 * In the device's path, the component regionN right below a root
 * decoder decoderK.D right below rootK, with the device further down.
 * Returns the region's directory (relative) and the two names, or 0 with
 * nothing set when the device is not under a CXL region.
 */
static int find_region(const char *rel_dev, char **ret_rel_region, char **ret_region, char **ret_decoder) {
        _cleanup_free_ char *copy = strdup(rel_dev), *rel_region = NULL, *region = NULL, *decoder = NULL;
        char *comp[3] = {}, *p, *next;
        unsigned root_id, dec_a, dec_b;

        if (!copy)
                return -ENOMEM;
        for (p = copy; p; p = next) {
                next = strchr(p, '/');
                if (next)
                        *next++ = '\0';
                comp[0] = comp[1];
                comp[1] = comp[2];
                comp[2] = p;
                if (!comp[0] || !next || pmem_name_index(comp[2], "region", NULL) < 0 ||
                    pmem_name_pair(comp[1], "decoder", &dec_a, &dec_b) < 0 ||
                    pmem_name_index(comp[0], "root", &root_id) < 0 || dec_a != root_id)
                        continue;
                rel_region = strndup(rel_dev, (size_t) (comp[2] - copy) + strlen(comp[2]));
                region = strdup(comp[2]);
                decoder = strdup(comp[1]);
                if (!rel_region || !region || !decoder)
                        return -ENOMEM;
                *ret_rel_region = TAKE_PTR(rel_region);
                *ret_region = TAKE_PTR(region);
                *ret_decoder = TAKE_PTR(decoder);
                return 1;
        }
        return 0;
}

/* Where bus/cxl/devices/NAME really is, relative to the root (pmem_resolve_in_root()). */
static int cxl_bus_device(const char *root, const char *name, char **ret_rel) {
        _cleanup_free_ char *link = NULL;

        if (asprintf(&link, "bus/cxl/devices/%s", name) < 0) {
                link = NULL;
                return -ENOMEM;
        }
        return pmem_resolve_in_root(root, link, ret_rel);
}

/*
 * The memdev behind one endpoint decoder: bus/cxl/devices/decoderE.F
 * leads to .../endpointE/decoderE.F, whose endpointE/uport leads to
 * .../memM. -ENOMEM, or another -errno when any step is missing or
 * leaves the pattern or the root.
 */
static int endpoint_memdev(const char *root, const char *decoder, char **ret) {
        _cleanup_free_ char *rel_decoder = NULL, *rel_port = NULL, *uport = NULL, *rel_mem = NULL;
        const char *base, *port_name, *mem_name;
        unsigned e, f, port_id;
        int r;

        if (pmem_name_pair(decoder, "decoder", &e, &f) < 0)
                return -EINVAL;
        r = cxl_bus_device(root, decoder, &rel_decoder);
        if (r < 0)
                return r;
        r = split_last(rel_decoder, &rel_port, &base);
        if (r < 0)
                return r;
        port_name = strrchr(rel_port, '/');
        port_name = port_name ? port_name + 1 : rel_port;
        /* The link must name the decoder it claims to, below its own endpoint port. */
        if (!streq(base, decoder) || pmem_name_index(port_name, "endpoint", &port_id) < 0 || port_id != e)
                return -EINVAL;
        if (asprintf(&uport, "%s/uport", rel_port) < 0) {
                uport = NULL;
                return -ENOMEM;
        }
        r = pmem_resolve_in_root(root, uport, &rel_mem);
        if (r < 0)
                return r;
        mem_name = strrchr(rel_mem, '/');
        mem_name = mem_name ? mem_name + 1 : rel_mem;
        if (pmem_name_index(mem_name, "mem", NULL) < 0)
                return -EINVAL;
        *ret = strdup(mem_name);
        return *ret ? 0 : -ENOMEM;
}

/* The memdev of every interleave position; a position that cannot be read makes them unknown. */
static int read_memdevs(const char *root, const char *rel_region, char **ret_list, bool *ret_unknown) {
        _cleanup_free_ char *list = NULL;
        uint64_t ways;
        bool unknown = false;
        unsigned n;

        /* Without a sane interleave_ways, read what is there and say the set may be short. */
        if (pmem_read_attr_u64(root, rel_region, "interleave_ways", 10, &ways) < 0 || ways == 0 ||
            ways > CXL_WAYS_MAX) {
                unknown = true;
                ways = CXL_WAYS_MAX;
        }
        n = (unsigned) ways;
        for (unsigned i = 0; i < n; i++) {
                _cleanup_free_ char *attr = NULL, *decoder = NULL, *memdev = NULL;
                int r;

                if (asprintf(&attr, "target%u", i) < 0)
                        return -ENOMEM;
                r = pmem_read_attr(root, rel_region, attr, &decoder);
                if (r >= 0)
                        r = endpoint_memdev(root, decoder, &memdev);
                if (r >= 0)
                        r = strlist_add_unique(&list, memdev);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && unknown && i > 0 && (r == -ENOENT || r == -ENODATA))
                        break;          /* past the last position we could guess */
                if (r < 0)
                        unknown = true;
        }
        *ret_list = TAKE_PTR(list);
        *ret_unknown = unknown;
        return 0;
}

int pmem_read_cxl_attribution(const char *sysfs_root, const char *rel_dev, struct pmem_device *dev) {
        _cleanup_free_ char *rel_region = NULL, *region = NULL, *decoder = NULL;
        int r;

        r = find_region(rel_dev, &rel_region, &region, &decoder);
        if (r <= 0)
                return r;
        r = read_memdevs(sysfs_root, rel_region, &dev->cxl_memdevs, &dev->cxl_memdevs_unknown);
        if (r < 0)
                return r;
        dev->cxl_region = TAKE_PTR(region);
        dev->cxl_decoder = TAKE_PTR(decoder);
        return 0;
}

/* ---- every CXL region, with or without a dax device (memonlined status) ---- */

static void cxl_region_done(struct cxl_region *r) {
        free(r->name);
        free(r->decoder);
        free(r->mode);
        free(r->memdevs);
        *r = (struct cxl_region) {};
}

void cxl_regions_clear(struct cxl_regions *set) {
        for (size_t i = 0; i < set->n; i++)
                cxl_region_done(&set->regions[i]);
        free(set->regions);
        *set = (struct cxl_regions) {};
}

/*
 * bus/cxl/devices/regionN: its directory must lie right below a root
 * decoder below rootK (find_region() checks that of a path below the
 * region, so ask for one) and carry the link's own name.
 */
static int read_region(const char *root, const char *name, struct cxl_region *ret) {
        _cleanup_(cxl_region_done) struct cxl_region reg = {};
        _cleanup_free_ char *rel = NULL, *below = NULL, *rel_region = NULL, *commit = NULL;
        int r;

        r = cxl_bus_device(root, name, &rel);
        if (r < 0)
                return r;
        if (asprintf(&below, "%s/-", rel) < 0) {
                below = NULL;
                return -ENOMEM;
        }
        r = find_region(below, &rel_region, &reg.name, &reg.decoder);
        if (r < 0)
                return r;
        if (r == 0 || !streq(reg.name, name))
                return -EINVAL;
        r = pmem_read_attr_u64(root, rel, "size", 16, &reg.size);
        if (r < 0)
                return r;
        if (pmem_read_attr_u64(root, rel, "resource", 16, &reg.resource) < 0)
                reg.resource = UINT64_MAX;      /* not committed yet, or not a number */
        r = pmem_read_attr(root, rel, "mode", &reg.mode);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !streq(reg.mode, "ram") && !streq(reg.mode, "pmem")) {
                free(reg.mode);         /* printed only as the kernel spells it */
                reg.mode = NULL;
        }
        r = pmem_read_attr(root, rel, "commit", &commit);
        if (r == -ENOMEM)
                return r;
        reg.committed = r >= 0 && streq(commit, "1") ? 1 : r >= 0 && streq(commit, "0") ? 0 : -1;
        r = read_memdevs(root, rel, &reg.memdevs, &reg.memdevs_unknown);
        if (r < 0)
                return r;
        *ret = reg;
        reg = (struct cxl_region) {};
        return 0;
}

static int read_region_item(const char *root, const char *name, void *ret, void *userdata) {
        return read_region(root, name, ret);
}

static void region_item_done(void *item) {
        cxl_region_done(item);
}

int cxl_regions_scan(const char *sysfs_root, struct cxl_regions *ret) {
        static const struct pmem_bus_scan scan = {
                .dir = "bus/cxl/devices", .prefix = "region", .item_size = sizeof(struct cxl_region),
                .read = read_region_item, .done = region_item_done,
        };
        struct cxl_regions set = {};
        void *items;
        int r;

        r = pmem_scan_bus(sysfs_root, &scan, &items, &set.n, &set.n_unreadable, &set.unreadable_error);
        if (r < 0)
                return r;
        set.regions = items;
        cxl_regions_clear(ret);
        *ret = set;
        return 0;
}

/* ---- every CXL memdev (memonlined status) ---- */

static void cxl_memdev_done(struct cxl_memdev *m) {
        free(m->name);
        free(m->host);
        *m = (struct cxl_memdev) {};
}

void cxl_memdevs_clear(struct cxl_memdevs *set) {
        for (size_t i = 0; i < set->n; i++)
                cxl_memdev_done(&set->memdevs[i]);
        free(set->memdevs);
        *set = (struct cxl_memdevs) {};
}

/* A partition's size ("0x20000000"); 0 when there is no such partition, as libcxl has it. */
static uint64_t partition_size(const char *root, const char *rel_mem, const char *partition) {
        _cleanup_free_ char *dir = NULL;
        uint64_t size;

        if (asprintf(&dir, "%s/%s", rel_mem, partition) < 0)
                return 0;
        return pmem_read_attr_u64(root, dir, "size", 16, &size) < 0 ? 0 : size;
}

/* bus/cxl/devices/memN: its directory must carry the link's own name, below the device it sits on. */
static int read_memdev(const char *root, const char *name, struct cxl_memdev *ret) {
        _cleanup_(cxl_memdev_done) struct cxl_memdev m = { .numa_node = NODE_NONE };
        _cleanup_free_ char *rel = NULL, *host_dir = NULL, *abs = NULL, *driver = NULL;
        const char *base, *host;
        int r;

        r = cxl_bus_device(root, name, &rel);
        if (r < 0)
                return r;
        r = split_last(rel, &host_dir, &base);
        if (r < 0)
                return r;
        if (!streq(base, name))
                return -EINVAL;
        host = strrchr(host_dir, '/');
        m.host = strdup(host ? host + 1 : host_dir);
        m.name = strdup(name);
        if (!m.host || !m.name)
                return -ENOMEM;
        m.ram_size = partition_size(root, rel, "ram");
        m.pmem_size = partition_size(root, rel, "pmem");
        if (pmem_read_attr_u64(root, rel, "serial", 16, &m.serial) < 0)
                m.serial = UINT64_MAX;
        m.numa_node = pmem_read_attr_node(root, rel, "numa_node");
        r = sysfs_path(&abs, root, "%s", rel);
        if (r >= 0)
                r = pmem_read_driver(abs, &driver);
        if (r < 0)
                return r;
        m.enabled = driver != NULL;
        *ret = m;
        m = (struct cxl_memdev) {};
        return 0;
}

static int read_memdev_item(const char *root, const char *name, void *ret, void *userdata) {
        return read_memdev(root, name, ret);
}

static void memdev_item_done(void *item) {
        cxl_memdev_done(item);
}

int cxl_memdevs_scan(const char *sysfs_root, struct cxl_memdevs *ret) {
        static const struct pmem_bus_scan scan = {
                .dir = "bus/cxl/devices", .prefix = "mem", .item_size = sizeof(struct cxl_memdev),
                .read = read_memdev_item, .done = memdev_item_done,
        };
        struct cxl_memdevs set = {};
        void *items;
        int r;

        r = pmem_scan_bus(sysfs_root, &scan, &items, &set.n, &set.n_unreadable, &set.unreadable_error);
        if (r < 0)
                return r;
        set.memdevs = items;
        cxl_memdevs_clear(ret);
        *ret = set;
        return 0;
}
