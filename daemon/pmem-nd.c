/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <sys/stat.h>
#include "pmem.h"
#include "pmem-nd.h"
#include "pmem-scan.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

/*
 * The sysfs layout this file relies on (kernel drivers/nvdimm/region_devs.c,
 * namespace_devs.c, claim.c, pfn_devs.c, dax_devs.c, btt_devs.c; the same
 * attributes libndctl's add_region() and add_namespace() read):
 *
 *   bus/nd/devices/regionR -> ../../../devices/.../ndbusB/regionR
 *   .../regionR                 size (decimal), target_node, uevent
 *                               (DEVTYPE nd_pmem or nd_volatile), driver
 *   .../regionR/namespaceR.N    size (decimal; 0 for the seed), mode
 *                               (raw, memory, dax, safe), holder (the
 *                               claiming device's name, empty if none),
 *                               uuid (absent or empty label-less),
 *                               target_node, driver while unclaimed and
 *                               enabled
 *   .../regionR/{pfn,dax,btt}R.M   the claim: size (decimal, usable bytes
 *                               after its info block; unreadable while
 *                               disabled), uuid, driver while enabled
 *   .../regionR/daxR.M/daxR.N   the claim's dax device, on the dax bus
 *
 * What ndctl shows as a namespace's size and uuid are the claim's, when
 * there is one (ndctl/json.c util_namespace_to_json()); so here.
 */

static const char *const mode_names[] = {
        [ND_MODE_UNKNOWN] = "unknown",
        [ND_MODE_RAW] = "raw",
        [ND_MODE_FSDAX] = "fsdax",
        [ND_MODE_DEVDAX] = "devdax",
        [ND_MODE_SECTOR] = "sector",
};

/* The kernel's mode attribute, per mode_names[] index. */
static const char *const kernel_modes[] = {
        [ND_MODE_RAW] = "raw",
        [ND_MODE_FSDAX] = "memory",
        [ND_MODE_DEVDAX] = "dax",
        [ND_MODE_SECTOR] = "safe",
};

const char *nd_mode_to_string(enum nd_mode m) {
        return m < ELEMENTSOF(mode_names) ? mode_names[m] : mode_names[ND_MODE_UNKNOWN];
}

enum nd_mode nd_mode_from_kernel(const char *v) {
        for (unsigned m = ND_MODE_RAW; v && m < ELEMENTSOF(kernel_modes); m++)
                if (streq(v, kernel_modes[m]))
                        return (enum nd_mode) m;
        return ND_MODE_UNKNOWN;
}

static void nd_namespace_done(struct nd_namespace *ns) {
        free(ns->name);
        free(ns->uuid);
        free(ns->dax);
        *ns = (struct nd_namespace) {};
}

static void nd_region_done(struct nd_region *reg) {
        for (size_t i = 0; i < reg->n_namespaces; i++)
                nd_namespace_done(&reg->namespaces[i]);
        free(reg->namespaces);
        free(reg->name);
        *reg = (struct nd_region) {};
}

void nd_regions_clear(struct nd_regions *set) {
        for (size_t i = 0; i < set->n; i++)
                nd_region_done(&set->regions[i]);
        free(set->regions);
        *set = (struct nd_regions) {};
}

/* Bound to a driver: 1, 0; -errno when the link cannot be read. */
static int is_bound(const char *root, const char *rel) {
        _cleanup_free_ char *abs = NULL, *driver = NULL;
        int r;

        r = sysfs_path(&abs, root, "%s", rel);
        if (r >= 0)
                r = pmem_read_driver(abs, &driver);
        return r < 0 ? r : driver != NULL;
}

/* The dax device below a devdax claim: its one child named daxA.B. NULL (0) when there is none (disabled). */
static int claim_dax_device(const char *root, const char *rel_claim, char **ret) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *abs = NULL;
        struct dirent *de;
        int r;

        r = sysfs_path(&abs, root, "%s", rel_claim);
        if (r < 0)
                return r;
        d = opendir(abs);
        if (!d)
                return -errno;
        while ((errno = 0, de = readdir(d)))
                if ((de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) && pmem_dax_name_parse(de->d_name, NULL, NULL) >= 0) {
                        *ret = strdup(de->d_name);
                        return *ret ? 0 : -ENOMEM;
                }
        if (errno != 0)
                return -errno;
        *ret = NULL;
        return 0;
}

/*
 * The claim named by holder: pfnR.M, daxR.M or bttR.M of this region
 * (anything else is not a kernel claim). Its size, uuid, whether it is
 * enabled and, for an nd_dax, its dax device.
 */
static int read_claim(const char *root, const char *rel_region, unsigned region, const char *holder,
                      struct nd_namespace *ns) {
        static const char *const prefixes[] = { "pfn", "dax", "btt" };
        _cleanup_free_ char *rel = NULL;
        bool known = false;
        unsigned a;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (pmem_name_pair(holder, prefixes[i], &a, NULL) >= 0 && a == region)
                        known = true;
        if (!known)
                return -EINVAL;
        if (asprintf(&rel, "%s/%s", rel_region, holder) < 0)
                return -ENOMEM;
        r = is_bound(root, rel);
        if (r < 0)
                return r;
        ns->enabled = r > 0;
        /* A disabled claim has no size to read (ENXIO): unknown, as ndctl has it. */
        if (pmem_read_attr_u64(root, rel, "size", 10, &ns->size) < 0)
                ns->size = UINT64_MAX;
        r = pmem_read_attr(root, rel, "uuid", &ns->uuid);
        if (r == -ENOMEM)
                return r;
        if (startswith(holder, "dax"))
                return claim_dax_device(root, rel, &ns->dax);
        return 0;
}

/* One namespace; 0 with *ret_listed false for a seed (size 0, idle). -ENOENT when it went away. */
static int read_namespace(const char *root, const char *rel_region, unsigned region, const char *name,
                          struct nd_namespace *ret, bool *ret_listed) {
        _cleanup_(nd_namespace_done) struct nd_namespace ns = { .target_node = NODE_NONE };
        _cleanup_free_ char *rel = NULL, *mode = NULL, *holder = NULL;
        uint64_t own_size;
        int r;

        if (asprintf(&rel, "%s/%s", rel_region, name) < 0)
                return -ENOMEM;
        r = pmem_read_attr_u64(root, rel, "size", 10, &own_size);
        if (r < 0)
                return r;
        r = pmem_read_attr(root, rel, "mode", &mode);
        if (r == -ENOMEM)
                return r;
        ns.mode = nd_mode_from_kernel(mode);
        r = pmem_read_attr(root, rel, "holder", &holder);
        if (r == -ENOMEM)
                return r;
        ns.target_node = pmem_read_attr_node(root, rel, "target_node");
        if (holder)
                r = read_claim(root, rel_region, region, holder, &ns);
        else {
                ns.size = own_size;
                r = is_bound(root, rel);
                ns.enabled = r > 0;
                if (r >= 0)
                        r = pmem_read_attr(root, rel, "uuid", &ns.uuid);
                if (r == -ENODATA || r == -ENOENT)
                        r = 0;          /* label-less (namespace_io): no uuid */
        }
        if (r < 0)
                return r;
        *ret_listed = own_size > 0 || ns.enabled;
        if (!*ret_listed)
                return 0;
        ns.name = strdup(name);
        if (!ns.name)
                return -ENOMEM;
        *ret = ns;
        ns = (struct nd_namespace) {};
        return 0;
}

static int cmp_namespace(const void *a, const void *b) {
        const struct nd_namespace *x = a, *y = b;
        unsigned xi = 0, yi = 0;

        (void) pmem_name_pair(x->name, "namespace", NULL, &xi);
        (void) pmem_name_pair(y->name, "namespace", NULL, &yi);
        return xi < yi ? -1 : xi > yi;
}

/* The region's namespaceR.N children; one that cannot be read is counted in *unreadable. */
static int read_namespaces(const char *root, const char *rel_region, unsigned region, struct nd_region *reg,
                           size_t *unreadable, int *unreadable_error) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *abs = NULL;
        size_t allocated = 0;
        struct dirent *de;
        int r;

        r = sysfs_path(&abs, root, "%s", rel_region);
        if (r < 0)
                return r;
        d = opendir(abs);
        if (!d)
                return -errno;
        while ((errno = 0, de = readdir(d))) {
                struct nd_namespace ns;
                bool listed = false;
                unsigned a;

                if (pmem_name_pair(de->d_name, "namespace", &a, NULL) < 0 || a != region)
                        continue;
                r = read_namespace(root, rel_region, region, de->d_name, &ns, &listed);
                if (r == -ENOMEM)
                        return r;
                if (r == -ENOENT)
                        continue;       /* destroyed while we read it */
                if (r < 0) {
                        if ((*unreadable)++ == 0)
                                *unreadable_error = r;
                        continue;
                }
                if (!listed)
                        continue;
                if (GROW(reg->namespaces, allocated, reg->n_namespaces + 1) < 0) {
                        nd_namespace_done(&ns);
                        return -ENOMEM;
                }
                reg->namespaces[reg->n_namespaces++] = ns;
        }
        if (errno != 0)
                return -errno;
        if (reg->n_namespaces > 1)
                qsort(reg->namespaces, reg->n_namespaces, sizeof(*reg->namespaces), cmp_namespace);
        return 0;
}

/* bus/nd/devices/regionR: its directory must be .../ndbusB/regionR, the link's own name. */
static int read_region(const char *root, const char *name, unsigned region, struct nd_region *ret,
                       size_t *unreadable, int *unreadable_error) {
        _cleanup_(nd_region_done) struct nd_region reg = { .target_node = NODE_NONE };
        _cleanup_free_ char *link = NULL, *rel = NULL;
        const char *base, *parent;
        size_t len;
        int r;

        if (asprintf(&link, "bus/nd/devices/%s", name) < 0)
                return -ENOMEM;
        r = pmem_resolve_in_root(root, link, &rel);
        if (r < 0)
                return r;
        base = strrchr(rel, '/');
        if (!base || !streq(base + 1, name))
                return -EINVAL;
        for (parent = base; parent > rel && parent[-1] != '/'; parent--)
                ;
        len = (size_t) (base - parent);
        if (len <= 5 || strncmp(parent, "ndbus", 5) != 0 || strspn(parent + 5, "0123456789") != len - 5)
                return -EINVAL;
        r = pmem_read_attr_u64(root, rel, "size", 10, &reg.size);
        if (r < 0)
                return r;
        reg.target_node = pmem_read_attr_node(root, rel, "target_node");
        reg.volatile_region = !pmem_region_is_pmem(root, rel);
        r = is_bound(root, rel);
        if (r < 0)
                return r;
        reg.enabled = r > 0;
        r = read_namespaces(root, rel, region, &reg, unreadable, unreadable_error);
        if (r < 0)
                return r;
        reg.name = strdup(name);
        if (!reg.name)
                return -ENOMEM;
        *ret = reg;
        reg = (struct nd_region) {};
        return 0;
}

/* Unreadable namespaces count with the regions. */
struct nd_scan_counts {
        size_t *unreadable;
        int *unreadable_error;
};

static int read_region_item(const char *root, const char *name, void *ret, void *userdata) {
        struct nd_scan_counts *c = userdata;
        unsigned id;

        if (pmem_name_index(name, "region", &id) < 0)
                return -EINVAL;
        return read_region(root, name, id, ret, c->unreadable, c->unreadable_error);
}

static void region_item_done(void *item) {
        nd_region_done(item);
}

int nd_regions_scan(const char *sysfs_root, struct nd_regions *ret) {
        struct nd_regions set = {};
        struct nd_scan_counts counts = { &set.n_unreadable, &set.unreadable_error };
        const struct pmem_bus_scan scan = {
                .dir = "bus/nd/devices", .prefix = "region", .item_size = sizeof(struct nd_region),
                .read = read_region_item, .done = region_item_done, .userdata = &counts,
        };
        void *items;
        int r;

        r = pmem_scan_bus(sysfs_root, &scan, &items, &set.n, &set.n_unreadable, &set.unreadable_error);
        if (r < 0)
                return r;
        set.regions = items;
        nd_regions_clear(ret);
        *ret = set;
        return 0;
}
