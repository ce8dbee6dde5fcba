/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <strings.h>
#include "pmem-decide.h"
#include "status-render.h"
#include "topology.h"
#include "util.h"

/*
 * The tables of `memonlined status`: nodes, hotplug devices, dax devices
 * (with the CXL region and memdevs under a dax device), CXL regions and
 * memdevs, nvdimm regions and namespaces. Names from sysfs (devices,
 * namespaces, decoders, memdevs) go through table_text_cell(): escaped
 * for the terminal.
 */

/* A cpulist longer than this wraps at its commas on a terminal. */
#define LIST_WIDTH 32

static const char *const table_names[_STATUS_TABLE_MAX] = {
        [STATUS_TABLE_NODES] = "nodes",
        [STATUS_TABLE_DEVICES] = "devices",
        [STATUS_TABLE_DAX] = "dax",
        [STATUS_TABLE_CXL] = "cxl",
        [STATUS_TABLE_MEMDEVS] = "memdevs",
        [STATUS_TABLE_NVDIMM] = "nvdimm",
        [STATUS_TABLE_NAMESPACES] = "namespaces",
};

const char *status_table_name(enum status_table t) {
        return t < _STATUS_TABLE_MAX ? table_names[t] : NULL;
}

int status_table_from_name(const char *name, size_t len) {
        for (unsigned t = 0; t < _STATUS_TABLE_MAX; t++)
                if (strlen(table_names[t]) == len && strncasecmp(table_names[t], name, len) == 0)
                        return (int) t;
        return -EINVAL;
}

/* ---- columns ------------------------------------------------------------------ */

enum {
        NC_NODE, NC_CPUS, NC_CPULESS, NC_BLOCKS, NC_ONLINE, NC_OFFLINE, NC_SIZE, NC_NORMAL, NC_MOVABLE,
        NC_OFFLINE_SIZE, NC_WRITER, NC_WRITER_CPUS, _NC_MAX,
};

static const struct table_column node_columns[_NC_MAX] = {
        [NC_NODE]         = { "NODE",         4, SCOLS_FL_RIGHT, COL_NUMBER,  "NUMA node; ? (JSON null): blocks with no node link yet", "node" },
        [NC_CPUS]         = { "CPUS",         4, 0,              COL_STRING,  "its online CPUs, as a cpulist", "cpus" },
        [NC_CPULESS]      = { "CPULESS",      3, 0,              COL_BOOLEAN, "no online CPU (pmem, CXL)", "cpuless" },
        [NC_BLOCKS]       = { "BLOCKS",       6, SCOLS_FL_RIGHT, COL_NUMBER,  "memory blocks", "blocks" },
        [NC_ONLINE]       = { "ONLINE",       6, SCOLS_FL_RIGHT, COL_NUMBER,  "blocks online", "online_blocks" },
        [NC_OFFLINE]      = { "OFFLINE",      7, SCOLS_FL_RIGHT, COL_NUMBER,  "blocks offline", "offline_blocks" },
        [NC_SIZE]         = { "SIZE",         5, SCOLS_FL_RIGHT, COL_SIZE,    "memory in its blocks", "size" },
        [NC_NORMAL]       = { "NORMAL",       6, SCOLS_FL_RIGHT, COL_SIZE,    "online in kernel zones (Normal, DMA32, DMA)", "normal" },
        [NC_MOVABLE]      = { "MOVABLE",      7, SCOLS_FL_RIGHT, COL_SIZE,    "online in ZONE_MOVABLE", "movable" },
        [NC_OFFLINE_SIZE] = { "OFFLINE-SIZE", 5, SCOLS_FL_RIGHT, COL_SIZE,    "memory offline", "offline_size" },
        [NC_WRITER]       = { "WRITER",       6, SCOLS_FL_RIGHT, COL_NUMBER,  "node whose CPUs write its memory", "writer_node" },
        [NC_WRITER_CPUS]  = { "WRITER-CPUS", 11, 0,              COL_STRING,  "CPUs memonlined would write from, one per core", "writer_cpus" },
};
static const unsigned node_defaults[] = { NC_NODE, NC_CPUS, NC_ONLINE, NC_OFFLINE, NC_NORMAL, NC_MOVABLE,
                                          NC_OFFLINE_SIZE, NC_WRITER, NC_WRITER_CPUS };

enum {
        DC_DEVICE, DC_KIND, DC_NODES, DC_ZONES, DC_BLOCKS, DC_ONLINE, DC_OFFLINE, DC_SIZE, DC_RANGE, DC_REMOVABLE,
        DC_CXL_REGION, DC_MEMDEVS, _DC_MAX,
};

static const struct table_column device_columns[_DC_MAX] = {
        [DC_DEVICE]    = { "DEVICE",    10, 0,              COL_STRING,  "ACPI memory device (DIMM), virtio-mem or dax device", "device" },
        [DC_KIND]      = { "KIND",       4, 0,              COL_STRING,  "dimm, virtio-mem or dax", "kind" },
        [DC_NODES]     = { "NODES",      5, 0,              COL_STRING,  "nodes of its blocks", "nodes" },
        [DC_ZONES]     = { "ZONES",      5, 0,              COL_STRING,  "zones of its online blocks: Normal, Movable", "zones" },
        [DC_BLOCKS]    = { "BLOCKS",     6, SCOLS_FL_RIGHT, COL_NUMBER,  "memory blocks", "blocks" },
        [DC_ONLINE]    = { "ONLINE",     6, SCOLS_FL_RIGHT, COL_NUMBER,  "blocks online", "online_blocks" },
        [DC_OFFLINE]   = { "OFFLINE",    7, SCOLS_FL_RIGHT, COL_NUMBER,  "blocks offline", "offline_blocks" },
        [DC_SIZE]      = { "SIZE",       5, SCOLS_FL_RIGHT, COL_SIZE,    "memory in its blocks", "size" },
        [DC_RANGE]     = { "RANGE",     37, 0,              COL_STRING,  "physical address range", "range" },
        [DC_REMOVABLE] = { "REMOVABLE",  9, 0,              COL_BOOLEAN, "no online block in a kernel zone: can be unplugged now", "removable" },
        [DC_CXL_REGION] = { "CXL-REGION", 7, 0,             COL_STRING,  "CXL region of a dax device", "cxl_region" },
        [DC_MEMDEVS]   = { "MEMDEVS",    7, 0,              COL_STRING,  "CXL memdevs it interleaves (?: one unknown)", "memdevs" },
};
static const unsigned device_defaults[] = { DC_DEVICE, DC_KIND, DC_NODES, DC_ZONES, DC_ONLINE, DC_OFFLINE, DC_SIZE,
                                            DC_REMOVABLE, DC_CXL_REGION, DC_MEMDEVS };

enum {
        XC_DEVICE, XC_MODE, XC_STATE, XC_SIZE, XC_NODE, XC_BLOCKS, XC_ONLINE, XC_NAMESPACE, XC_REGION,
        XC_CXL_REGION, XC_DECODER, XC_MEMDEVS, XC_BADBLOCKS, _XC_MAX,
};

static const struct table_column dax_columns[_XC_MAX] = {
        [XC_DEVICE]    = { "DEVICE",     7, 0,              COL_STRING, "dax device", "device" },
        [XC_MODE]      = { "MODE",      10, 0,              COL_STRING, "devdax, system-ram (kmem) or unknown", "mode" },
        [XC_STATE]     = { "STATE",      7, 0,              COL_STRING, "disabled, enabled; system-ram: online, partial, offline; refused, undecided: kept out for bad media", "state" },
        [XC_SIZE]      = { "SIZE",       5, SCOLS_FL_RIGHT, COL_SIZE,   "size", "size" },
        [XC_NODE]      = { "NODE",       4, SCOLS_FL_RIGHT, COL_NUMBER, "node kmem adds its memory to", "node" },
        [XC_BLOCKS]    = { "BLOCKS",     6, SCOLS_FL_RIGHT, COL_NUMBER, "memory blocks of it", "blocks" },
        [XC_ONLINE]    = { "ONLINE",     6, SCOLS_FL_RIGHT, COL_NUMBER, "of those, online", "online_blocks" },
        [XC_NAMESPACE] = { "NAMESPACE",  9, 0,              COL_STRING, "nvdimm namespace", "namespace" },
        [XC_REGION]    = { "REGION",     6, 0,              COL_STRING, "nvdimm region", "region" },
        [XC_CXL_REGION] = { "CXL-REGION", 7, 0,             COL_STRING, "CXL region", "cxl_region" },
        [XC_DECODER]   = { "DECODER",   10, 0,              COL_STRING, "the CXL region's root decoder (its memory window)", "decoder" },
        [XC_MEMDEVS]   = { "MEMDEVS",    7, 0,              COL_STRING, "CXL memdevs it interleaves (?: one unknown)", "memdevs" },
        [XC_BADBLOCKS] = { "BADBLOCKS",  9, SCOLS_FL_RIGHT, COL_STRING, "bad 512-byte sectors in its memory (its nd region's badblocks; N+: at least, ?: unknown)", "badblocks" },
};
static const unsigned dax_defaults[] = { XC_DEVICE, XC_MODE, XC_STATE, XC_SIZE, XC_NODE, XC_ONLINE, XC_BLOCKS,
                                         XC_NAMESPACE, XC_REGION, XC_BADBLOCKS, XC_CXL_REGION, XC_MEMDEVS };

enum {
        CC_REGION, CC_MODE, CC_STATE, CC_SIZE, CC_RANGE, CC_DECODER, CC_MEMDEVS, CC_DAX, _CC_MAX,
};

static const struct table_column cxl_columns[_CC_MAX] = {
        [CC_REGION]  = { "REGION",   6, 0,              COL_STRING, "CXL region", "region" },
        [CC_MODE]    = { "MODE",     4, 0,              COL_STRING, "ram or pmem", "mode" },
        [CC_STATE]   = { "STATE",    7, 0,              COL_STRING, "uncommitted, no dax device, else its dax device's state", "state" },
        [CC_SIZE]    = { "SIZE",     5, SCOLS_FL_RIGHT, COL_SIZE,   "size", "size" },
        [CC_RANGE]   = { "RANGE",   37, 0,              COL_STRING, "physical address range", "range" },
        [CC_DECODER] = { "DECODER", 10, 0,              COL_STRING, "its root decoder (the memory window)", "decoder" },
        [CC_MEMDEVS] = { "MEMDEVS",  7, 0,              COL_STRING, "CXL memdevs it interleaves (?: one unknown)", "memdevs" },
        [CC_DAX]     = { "DAX",      6, 0,              COL_STRING, "dax device on it (+N: and N more)", "dax" },
};
static const unsigned cxl_defaults[] = { CC_REGION, CC_MODE, CC_STATE, CC_SIZE, CC_DECODER, CC_MEMDEVS, CC_DAX };

enum {
        MC_MEMDEV, MC_STATE, MC_RAM_SIZE, MC_PMEM_SIZE, MC_NUMA_NODE, MC_SERIAL, MC_HOST, MC_REGIONS, _MC_MAX,
};

static const struct table_column memdev_columns[_MC_MAX] = {
        [MC_MEMDEV]    = { "MEMDEV",     6, 0,              COL_STRING, "CXL memdev (a memory expander)", "memdev" },
        [MC_STATE]     = { "STATE",      7, 0,              COL_STRING, "enabled (bound to its driver) or disabled", "state" },
        [MC_RAM_SIZE]  = { "RAM-SIZE",   5, SCOLS_FL_RIGHT, COL_SIZE,   "its volatile capacity", "ram_size" },
        [MC_PMEM_SIZE] = { "PMEM-SIZE",  5, SCOLS_FL_RIGHT, COL_SIZE,   "its persistent capacity", "pmem_size" },
        [MC_NUMA_NODE] = { "NUMA-NODE",  4, SCOLS_FL_RIGHT, COL_NUMBER, "the device's own node, not its memory's", "numa_node" },
        [MC_SERIAL]    = { "SERIAL",     6, SCOLS_FL_RIGHT, COL_NUMBER, "serial number", "serial" },
        [MC_HOST]      = { "HOST",      12, 0,              COL_STRING, "the device it sits on (PCI function)", "host" },
        [MC_REGIONS]   = { "REGIONS",    7, 0,              COL_STRING, "CXL regions it is in", "regions" },
};
static const unsigned memdev_defaults[] = { MC_MEMDEV, MC_STATE, MC_RAM_SIZE, MC_PMEM_SIZE, MC_NUMA_NODE, MC_HOST,
                                            MC_REGIONS };

enum {
        RC_REGION, RC_TYPE, RC_STATE, RC_SIZE, RC_NODE, RC_NAMESPACES, _RC_MAX,
};

static const struct table_column nd_region_columns[_RC_MAX] = {
        [RC_REGION]     = { "REGION",     6, 0,              COL_STRING, "nvdimm region", "region" },
        [RC_TYPE]       = { "TYPE",       4, 0,              COL_STRING, "pmem or volatile", "type" },
        [RC_STATE]      = { "STATE",      7, 0,              COL_STRING, "enabled (bound to its driver) or disabled", "state" },
        [RC_SIZE]       = { "SIZE",       5, SCOLS_FL_RIGHT, COL_SIZE,   "size", "size" },
        [RC_NODE]       = { "NODE",       4, SCOLS_FL_RIGHT, COL_NUMBER, "node its memory would go to (target_node)", "node" },
        [RC_NAMESPACES] = { "NAMESPACES", 10, 0,             COL_STRING, "its namespaces with a size or enabled", "namespaces" },
};
static const unsigned nd_region_defaults[] = { RC_REGION, RC_TYPE, RC_STATE, RC_SIZE, RC_NODE, RC_NAMESPACES };

enum {
        SC_NAMESPACE, SC_REGION, SC_MODE, SC_STATE, SC_SIZE, SC_NODE, SC_UUID, SC_DAX, _SC_MAX,
};

static const struct table_column namespace_columns[_SC_MAX] = {
        [SC_NAMESPACE] = { "NAMESPACE", 9, 0,              COL_STRING, "nvdimm namespace", "namespace" },
        [SC_REGION]    = { "REGION",    6, 0,              COL_STRING, "its region", "region" },
        [SC_MODE]      = { "MODE",      6, 0,              COL_STRING, "devdax, fsdax, sector, raw (as ndctl names them)", "mode" },
        [SC_STATE]     = { "STATE",     7, 0,              COL_STRING, "enabled or disabled (its claim, else itself)", "state" },
        [SC_SIZE]      = { "SIZE",      5, SCOLS_FL_RIGHT, COL_SIZE,   "usable size (after its info block)", "size" },
        [SC_NODE]      = { "NODE",      4, SCOLS_FL_RIGHT, COL_NUMBER, "node its memory would go to (target_node)", "node" },
        [SC_UUID]      = { "UUID",     36, 0,              COL_STRING, "uuid (match_namespace matches it)", "uuid" },
        [SC_DAX]       = { "DAX",       6, 0,              COL_STRING, "its dax device (devdax)", "dax" },
};
static const unsigned namespace_defaults[] = { SC_NAMESPACE, SC_REGION, SC_MODE, SC_STATE, SC_SIZE, SC_NODE,
                                               SC_DAX };

struct table_def {
        const struct table_column *columns;
        size_t n_columns;
        const unsigned *defaults;
        size_t n_defaults;
        const char *title;
};

static const struct table_def tables[_STATUS_TABLE_MAX] = {
        [STATUS_TABLE_NODES]   = { node_columns, _NC_MAX, node_defaults, ELEMENTSOF(node_defaults),
                                   "Columns of the node table (-o nodes:LIST, or -o LIST)" },
        [STATUS_TABLE_DEVICES] = { device_columns, _DC_MAX, device_defaults, ELEMENTSOF(device_defaults),
                                   "Columns of the hotplug device table (-o devices:LIST)" },
        [STATUS_TABLE_DAX]     = { dax_columns, _XC_MAX, dax_defaults, ELEMENTSOF(dax_defaults),
                                   "Columns of the dax device table (-o dax:LIST)" },
        [STATUS_TABLE_CXL]     = { cxl_columns, _CC_MAX, cxl_defaults, ELEMENTSOF(cxl_defaults),
                                   "Columns of the CXL region table (-o cxl:LIST)" },
        [STATUS_TABLE_MEMDEVS] = { memdev_columns, _MC_MAX, memdev_defaults, ELEMENTSOF(memdev_defaults),
                                   "Columns of the CXL memdev table (-o memdevs:LIST)" },
        [STATUS_TABLE_NVDIMM]  = { nd_region_columns, _RC_MAX, nd_region_defaults, ELEMENTSOF(nd_region_defaults),
                                   "Columns of the nvdimm region table (-o nvdimm:LIST)" },
        [STATUS_TABLE_NAMESPACES] = { namespace_columns, _SC_MAX, namespace_defaults, ELEMENTSOF(namespace_defaults),
                                      "Columns of the nvdimm namespace table (-o namespaces:LIST)" },
};

int status_columns_parse(enum status_table t, const char *list, unsigned **ret, size_t *ret_n, const char **ret_bad,
                         size_t *ret_bad_len) {
        const struct table_def *d = &tables[t];

        return table_columns_parse(d->columns, d->n_columns, d->defaults, d->n_defaults, list, ret, ret_n, ret_bad,
                                   ret_bad_len);
}

void status_columns_help(FILE *out) {
        for (unsigned t = 0; t < _STATUS_TABLE_MAX; t++)
                table_columns_help(out, tables[t].title, tables[t].columns, tables[t].n_columns);
}

/* ---- cells ---------------------------------------------------------------------- */

/* A node id; none is null in JSON, else none_text. */
static char *node_cell(const struct table_style *s, int node, const char *none_text) {
        if (node >= 0)
                return table_printf_cell("%d", node);
        return strdup(s->format == TABLE_FORMAT_JSON ? "" : none_text);
}

static char *range_cell(uint64_t start, uint64_t end) {
        if (end <= start)
                return strdup("");
        return table_printf_cell("0x%016" PRIx64 "-0x%016" PRIx64, start, end - 1);
}

struct row {
        const struct status_view *v;
        const void *item;
        const struct block_tally *tally;
};

/* A namespace row's item: the namespace and its region. */
struct namespace_item {
        const struct nd_region *region;
        const struct nd_namespace *ns;
};

static char *node_row_cell(const void *row, unsigned col) {
        const struct row *r = row;
        const struct table_style *s = &r->v->style;
        const struct status_node *n = r->item;
        uint64_t bs = r->v->m->block_size;

        switch (col) {
        case NC_NODE:         return node_cell(s, n->node, "?");
        case NC_CPUS:
                if (!n->in_topology)
                        return table_text_cell(s, NULL);
                if (n->cpuless && s->format != TABLE_FORMAT_JSON)
                        return strdup("CPU-less");
                return table_list_cell(s, n->cpus, LIST_WIDTH);
        case NC_CPULESS:      return table_bool_cell(s, n->cpuless);
        case NC_BLOCKS:       return table_u64_cell(n->tally.blocks);
        case NC_ONLINE:       return table_u64_cell(n->tally.online);
        case NC_OFFLINE:      return table_u64_cell(n->tally.offline);
        case NC_SIZE:         return table_size_cell(s, n->tally.blocks * bs);
        case NC_NORMAL:       return table_size_cell(s, n->tally.kernel * bs);
        case NC_MOVABLE:      return table_size_cell(s, n->tally.movable * bs);
        case NC_OFFLINE_SIZE: return table_size_cell(s, n->tally.offline * bs);
        case NC_WRITER:       return node_cell(s, n->writer_node, "-");
        case NC_WRITER_CPUS:
                if (!n->writer_cpus || !*n->writer_cpus)
                        return table_text_cell(s, NULL);
                return table_list_cell(s, n->writer_cpus, LIST_WIDTH);
        default:              return NULL;
        }
}

/* "Normal,Movable": the zones its online blocks are in; "?" for blocks whose zone could not be read. */
static char *zones_cell(const struct table_style *s, const struct block_tally *t) {
        char zones[32] = "";

        if (t->kernel)
                strcat(zones, "Normal");
        if (t->movable)
                strcat(strcat(zones, *zones ? "," : ""), "Movable");
        if (t->zone_unknown)
                strcat(strcat(zones, *zones ? "," : ""), "?");
        return table_text_cell(s, *zones ? zones : NULL);
}

/* CXL memdevs, "?" standing for those that could not be read. */
static char *memdev_list_cell(const struct table_style *s, const char *memdevs, bool unknown) {
        _cleanup_free_ char *list = NULL;

        if (!unknown)
                return table_text_cell(s, memdevs);
        if (asprintf(&list, "%s%s?", memdevs ?: "", memdevs ? "," : "") < 0) {
                list = NULL;
                return NULL;
        }
        return table_text_cell(s, list);
}

/* A dax device's CXL memdevs. */
static char *memdevs_cell(const struct table_style *s, const struct pmem_device *d) {
        if (!d || !d->cxl_region)
                return table_text_cell(s, NULL);
        return memdev_list_cell(s, d->cxl_memdevs, d->cxl_memdevs_unknown);
}

static char *device_row_cell(const void *row, unsigned col) {
        const struct row *r = row;
        const struct table_style *s = &r->v->style;
        const struct status_device *d = r->item;
        uint64_t bs = r->v->m->block_size;

        switch (col) {
        case DC_DEVICE:    return table_text_cell(s, d->name);
        case DC_KIND:      return strdup(memdev_kind_to_string(d->kind));
        case DC_NODES:     return table_text_cell(s, d->nodes && *d->nodes ? d->nodes : NULL);
        case DC_ZONES:     return zones_cell(s, &d->tally);
        case DC_BLOCKS:    return table_u64_cell(d->tally.blocks);
        case DC_ONLINE:    return table_u64_cell(d->tally.online);
        case DC_OFFLINE:   return table_u64_cell(d->tally.offline);
        case DC_SIZE:      return table_size_cell(s, d->tally.blocks * bs);
        case DC_RANGE:     return range_cell(d->start, d->end);
        case DC_REMOVABLE: return table_bool_cell(s, block_tally_removable(&d->tally));
        case DC_CXL_REGION: return table_text_cell(s, d->dax ? d->dax->cxl_region : NULL);
        case DC_MEMDEVS:   return memdevs_cell(s, d->dax);
        default:           return NULL;
        }
}

/* Bad sectors: a count, "N+" (at least), "?" (unknown); none for a device without a list (null in JSON). */
static char *badblocks_cell(const struct table_style *s, const struct pmem_device *d) {
        char bad[32];

        if (d->region < 0)
                return table_text_cell(s, NULL);
        pmem_bad_sectors_format(d, bad, sizeof(bad));
        return strdup(bad);
}

static char *dax_row_cell(const void *row, unsigned col) {
        const struct row *r = row;
        const struct table_style *s = &r->v->style;
        const struct status_dax *x = r->item;
        const struct pmem_device *d = x->dev;
        char region[32];

        switch (col) {
        case XC_DEVICE:    return table_text_cell(s, d->name);
        case XC_MODE:      return strdup(pmem_mode_to_string(d->mode));
        case XC_STATE:     return strdup(status_dax_state(x));
        case XC_SIZE:      return table_size_cell(s, d->size);
        case XC_NODE:      return node_cell(s, d->target_node, "-");
        case XC_BLOCKS:    return table_u64_cell(r->tally->blocks);
        case XC_ONLINE:    return table_u64_cell(r->tally->online);
        case XC_NAMESPACE: return table_text_cell(s, d->namespace_name);
        case XC_REGION:
                if (d->region < 0)
                        return table_text_cell(s, NULL);
                snprintf(region, sizeof(region), "region%d", d->region);
                return strdup(region);
        case XC_CXL_REGION: return table_text_cell(s, d->cxl_region);
        case XC_DECODER:   return table_text_cell(s, d->cxl_decoder);
        case XC_MEMDEVS:   return memdevs_cell(s, d);
        case XC_BADBLOCKS: return badblocks_cell(s, d);
        default:           return NULL;
        }
}

static char *cxl_state_cell(const struct cxl_region *c, const struct status_dax *dax) {
        if (c->committed == 0)
                return strdup("uncommitted");
        if (!dax)
                return strdup("no dax device");
        return strdup(status_dax_state(dax));
}

static char *cxl_row_cell(const void *row, unsigned col) {
        const struct row *r = row;
        const struct table_style *s = &r->v->style;
        const struct cxl_region *c = r->item;
        const struct status_dax *dax;
        size_t n_dax;

        dax = status_region_dax(r->v->m, c->name, &n_dax);
        switch (col) {
        case CC_REGION:  return table_text_cell(s, c->name);
        case CC_MODE:    return table_text_cell(s, c->mode);
        case CC_STATE:   return cxl_state_cell(c, dax);
        case CC_SIZE:    return table_size_cell(s, c->size);
        case CC_RANGE:
                if (c->resource == UINT64_MAX || c->size > UINT64_MAX - c->resource)
                        return strdup("");
                return range_cell(c->resource, c->resource + c->size);
        case CC_DECODER: return table_text_cell(s, c->decoder);
        case CC_MEMDEVS: return memdev_list_cell(s, c->memdevs, c->memdevs_unknown);
        case CC_DAX:
                if (!dax)
                        return table_text_cell(s, NULL);
                if (n_dax == 1)
                        return table_text_cell(s, dax->dev->name);
                return table_printf_cell("%s+%zu", dax->dev->name, n_dax - 1);
        default:         return NULL;
        }
}

static char *enabled_cell(bool enabled) {
        return strdup(enabled ? "enabled" : "disabled");
}

/* The CXL regions a memdev is in, from the region table. */
static char *memdev_regions_cell(const struct table_style *s, const struct status_machine *m, const char *memdev) {
        _cleanup_free_ char *list = NULL;

        for (size_t i = 0; i < m->cxl.n; i++)
                if (strlist_contains(m->cxl.regions[i].memdevs, memdev) &&
                    strlist_add_unique(&list, m->cxl.regions[i].name) < 0)
                        return NULL;
        return table_text_cell(s, list);
}

static char *memdev_row_cell(const void *row, unsigned col) {
        const struct row *r = row;
        const struct table_style *s = &r->v->style;
        const struct cxl_memdev *d = r->item;

        switch (col) {
        case MC_MEMDEV:    return table_text_cell(s, d->name);
        case MC_STATE:     return enabled_cell(d->enabled);
        case MC_RAM_SIZE:  return table_size_cell(s, d->ram_size);
        case MC_PMEM_SIZE: return table_size_cell(s, d->pmem_size);
        case MC_NUMA_NODE: return node_cell(s, d->numa_node, "-");
        case MC_SERIAL:    return d->serial == UINT64_MAX ? table_text_cell(s, NULL) : table_u64_cell(d->serial);
        case MC_HOST:      return table_text_cell(s, d->host);
        case MC_REGIONS:   return memdev_regions_cell(s, r->v->m, d->name);
        default:           return NULL;
        }
}

static char *nd_region_row_cell(const void *row, unsigned col) {
        const struct row *r = row;
        const struct table_style *s = &r->v->style;
        const struct nd_region *g = r->item;
        _cleanup_free_ char *list = NULL;

        switch (col) {
        case RC_REGION: return table_text_cell(s, g->name);
        case RC_TYPE:   return strdup(g->volatile_region ? "volatile" : "pmem");
        case RC_STATE:  return enabled_cell(g->enabled);
        case RC_SIZE:   return table_size_cell(s, g->size);
        case RC_NODE:   return node_cell(s, g->target_node, "-");
        case RC_NAMESPACES:
                for (size_t i = 0; i < g->n_namespaces; i++)
                        if (strlist_add_unique(&list, g->namespaces[i].name) < 0)
                                return NULL;
                return table_text_cell(s, list);
        default:        return NULL;
        }
}

static char *namespace_row_cell(const void *row, unsigned col) {
        const struct row *r = row;
        const struct table_style *s = &r->v->style;
        const struct namespace_item *it = r->item;
        const struct nd_namespace *ns = it->ns;

        switch (col) {
        case SC_NAMESPACE: return table_text_cell(s, ns->name);
        case SC_REGION:    return table_text_cell(s, it->region->name);
        case SC_MODE:      return strdup(nd_mode_to_string(ns->mode));
        case SC_STATE:     return enabled_cell(ns->enabled);
        case SC_SIZE:      return ns->size == UINT64_MAX ? table_text_cell(s, NULL) : table_size_cell(s, ns->size);
        case SC_NODE:      return node_cell(s, ns->target_node, "-");
        case SC_UUID:      return table_text_cell(s, ns->uuid);
        case SC_DAX:       return table_text_cell(s, ns->dax);
        default:           return NULL;
        }
}

/* ---- tables ---------------------------------------------------------------------- */

static void color_offline(const struct status_view *v, struct libscols_line *ln, const unsigned *ids, size_t n,
                          unsigned col, const struct block_tally *t) {
        if (t->offline > 0)
                table_color_cell(&v->style, ln, ids, n, col, "yellow");
}

/* Columns whose cells are cpulists wrap at their commas on a terminal. */
static int wrap_lists(const struct status_view *v, struct libscols_table *tb, const unsigned *ids, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (ids[i] == NC_CPUS || ids[i] == NC_WRITER_CPUS) {
                        int r = table_wrap_lists(&v->style, scols_table_get_column(tb, i));

                        if (r < 0)
                                return r;
                }
        return 0;
}

static int add_rows(const struct status_view *v, enum status_table t, struct libscols_table *tb, const unsigned *ids,
                    size_t n, size_t *ret_rows) {
        const struct status_machine *m = v->m;
        struct libscols_line *ln;
        size_t rows = 0;

        switch (t) {
        case STATUS_TABLE_NODES:
                for (size_t i = 0; i < m->n_nodes; i++, rows++) {
                        struct row row = { v, &m->nodes[i], &m->nodes[i].tally };

                        ln = table_add_row(tb, ids, n, node_row_cell, &row);
                        if (!ln)
                                return -ENOMEM;
                        color_offline(v, ln, ids, n, NC_OFFLINE, row.tally);
                }
                break;
        case STATUS_TABLE_DEVICES:
                for (size_t i = 0; i < m->n_devices; i++, rows++) {
                        struct row row = { v, &m->devices[i], &m->devices[i].tally };

                        ln = table_add_row(tb, ids, n, device_row_cell, &row);
                        if (!ln)
                                return -ENOMEM;
                        color_offline(v, ln, ids, n, DC_OFFLINE, row.tally);
                }
                break;
        case STATUS_TABLE_DAX:
                for (size_t i = 0; i < m->dax.n; i++, rows++) {
                        struct row row = { v, &m->dax_tallies[i], &m->dax_tallies[i].tally };

                        ln = table_add_row(tb, ids, n, dax_row_cell, &row);
                        if (!ln)
                                return -ENOMEM;
                        if (m->dax_tallies[i].held_back != BAD_MEDIA_NONE)
                                table_color_cell(&v->style, ln, ids, n, XC_STATE, "red");
                }
                break;
        case STATUS_TABLE_CXL:
                for (size_t i = 0; i < m->cxl.n; i++, rows++) {
                        struct row row = { v, &m->cxl.regions[i], NULL };

                        if (!table_add_row(tb, ids, n, cxl_row_cell, &row))
                                return -ENOMEM;
                }
                break;
        case STATUS_TABLE_MEMDEVS:
                for (size_t i = 0; i < m->memdevs.n; i++, rows++) {
                        struct row row = { v, &m->memdevs.memdevs[i], NULL };

                        if (!table_add_row(tb, ids, n, memdev_row_cell, &row))
                                return -ENOMEM;
                }
                break;
        case STATUS_TABLE_NVDIMM:
                for (size_t i = 0; i < m->nd.n; i++, rows++) {
                        struct row row = { v, &m->nd.regions[i], NULL };

                        if (!table_add_row(tb, ids, n, nd_region_row_cell, &row))
                                return -ENOMEM;
                }
                break;
        case STATUS_TABLE_NAMESPACES:
                for (size_t i = 0; i < m->nd.n; i++)
                        for (size_t k = 0; k < m->nd.regions[i].n_namespaces; k++, rows++) {
                                struct namespace_item it = { &m->nd.regions[i], &m->nd.regions[i].namespaces[k] };
                                struct row row = { v, &it, NULL };

                                if (!table_add_row(tb, ids, n, namespace_row_cell, &row))
                                        return -ENOMEM;
                        }
                break;
        default:
                return -EINVAL;
        }
        *ret_rows = rows;
        return 0;
}

int status_table_build(const struct status_view *v, enum status_table t, struct libscols_table **ret) {
        const struct table_def *d = &tables[t];
        _cleanup_table_ struct libscols_table *tb = table_new(&v->style, table_names[t]);
        _cleanup_free_ unsigned *all = NULL;
        const unsigned *ids = v->columns[t];
        size_t n = v->n_columns[t], rows;
        int r;

        if (!tb)
                return -ENOMEM;
        if (!ids && v->style.format == TABLE_FORMAT_JSON) {
                all = calloc(d->n_columns, sizeof(unsigned));
                if (!all)
                        return -ENOMEM;
                for (size_t i = 0; i < d->n_columns; i++)
                        all[i] = (unsigned) i;
                ids = all;
                n = d->n_columns;
        } else if (!ids) {
                ids = d->defaults;
                n = d->n_defaults;
        }
        r = table_add_columns(&v->style, tb, d->columns, ids, n);
        if (r >= 0 && t == STATUS_TABLE_NODES)
                r = wrap_lists(v, tb, ids, n);
        if (r >= 0)
                r = add_rows(v, t, tb, ids, n, &rows);
        if (r < 0)
                return r;
        *ret = rows > 0 || v->style.format == TABLE_FORMAT_JSON ? TAKE_PTR(tb) : NULL;
        return 0;
}

int status_table_error(const struct status_machine *m, enum status_table t) {
        switch (t) {
        case STATUS_TABLE_DEVICES: return m->devices_error;
        case STATUS_TABLE_DAX:     return m->dax_error;
        case STATUS_TABLE_CXL:     return m->cxl_error;
        case STATUS_TABLE_MEMDEVS: return m->memdevs_error;
        case STATUS_TABLE_NVDIMM:
        case STATUS_TABLE_NAMESPACES: return m->nd_error;
        default:                   return 0;
        }
}

void status_sum_nodes(const struct status_machine *m, struct block_tally *ret) {
        struct block_tally t = {};

        for (size_t i = 0; i < m->n_nodes; i++) {
                const struct block_tally *n = &m->nodes[i].tally;

                t.blocks += n->blocks;
                t.online += n->online;
                t.offline += n->offline;
                t.kernel += n->kernel;
                t.movable += n->movable;
                t.zone_unknown += n->zone_unknown;
        }
        *ret = t;
}
