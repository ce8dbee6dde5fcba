/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Memory devices: which hotplug device each memory block belongs to. The
 * kernel's auto-movable policy decides per such device (a "memory
 * group"): an ACPI memory device or a dax/kmem device is all movable or
 * all kernel (static group); virtio-mem is decided per unit (dynamic
 * group). Blocks of no device are boot memory.
 *
 * Read from sysfs alone, plus /proc/iomem for virtio-mem:
 *   ACPI DIMM:   <root>/bus/acpi/devices/PNP0C80:NN/physical_node* -> memoryN
 *   dax/kmem:    the dax device's ranges (pmem.c)
 *   virtio-mem:  the "virtioN" region in /proc/iomem whose device is bound
 *                to virtio_mem (<root>/bus/virtio/devices/virtioN/driver)
 * Under a --sysfs-root other than /sys, iomem is read from <root>/proc/iomem.
 */

enum memdev_kind {
        MEMDEV_NONE = 0,                /* boot memory, or a device we cannot tell */
        MEMDEV_ACPI,                    /* ACPI memory device (PNP0C80): a DIMM */
        MEMDEV_DAX,                     /* dax device onlined through kmem (pmem, CXL, hmem) */
        MEMDEV_VIRTIO_MEM,
        _MEMDEV_KIND_MAX,
};

const char *memdev_kind_to_string(enum memdev_kind k);         /* "boot", "dimm", "dax", "virtio-mem" */

struct memdev {
        enum memdev_kind kind;
        char *name;                     /* "PNP0C80:01", "dax0.0", "virtio3" */
        uint64_t start, end;            /* physical span, end exclusive */
        bool dynamic;                   /* decided per unit (virtio-mem), not as a whole */
};

struct memdev_set {
        struct memdev *devs;            /* ascending by start, spans do not overlap */
        size_t n, allocated;
};

void memdev_set_clear(struct memdev_set *s);

/* Add one device; its span must not overlap another's (-EEXIST), name is copied. */
int memdev_set_add(struct memdev_set *s, enum memdev_kind kind, const char *name, uint64_t start, uint64_t end);

/* A copy of src, in the same order, into *ret (replaced on success). */
int memdev_set_copy(const struct memdev_set *src, struct memdev_set *ret);

/* Sort by start and check that no spans overlap: call once after the adds. -EEXIST on overlap. */
int memdev_set_seal(struct memdev_set *s);

/*
 * What memdev_scan_acpi() learned of each ACPI memory device with memory,
 * so that a later scan need neither list the device nor read every
 * physical_node link again (one per block: 256 for a 32 GiB DIMM, every
 * batch) while the device's links are as they were: link 0 and link n-1
 * leading to the same blocks, and no link n. A DIMM's links come and go
 * all together (bind, unbind), and a slot refilled elsewhere has another
 * first block.
 */
struct acpi_span {
        char *name;
        size_t n_links;
        uint64_t first_link_block, last_link_block;     /* what links 0 and n-1 name */
        uint64_t first, last;           /* the block ids its links name */
};
struct acpi_span_cache {
        struct acpi_span *spans;
        size_t n, allocated;
};
void acpi_span_cache_clear(struct acpi_span_cache *c);

/* ACPI memory devices from sysfs, added to s. Devices with no blocks are left out. cache may be NULL. */
int memdev_scan_acpi(const char *sysfs_root, uint64_t block_size, struct acpi_span_cache *cache,
                     struct memdev_set *s);

/* virtio-mem regions from an iomem file, added to s. A missing iomem file adds nothing. */
int memdev_scan_virtio_mem(const char *sysfs_root, const char *iomem_path, struct memdev_set *s);

/*
 * Memory the firmware described at boot: the "System RAM" entries of
 * <root>/firmware/memmap/N/{start,end,type}. ACPI hot-added DIMMs are
 * entered there too; driver-managed memory (virtio-mem, kmem) never is.
 * Empty when the kernel does not show it (no CONFIG_FIRMWARE_MEMMAP).
 */
struct ram_ranges {
        struct { uint64_t start, end; } *r;     /* end exclusive, ascending */
        size_t n, allocated;
};
/*
 * The firmware memmap entries read so far, by name. The kernel names an
 * entry from a counter it never winds back (add_sysfs_fw_map_entry()), and
 * an entry's start, end and type never change: a name once read is known
 * for good. Only names not seen before are read; names gone are dropped.
 */
struct fw_entry {
        char name[24];
        uint64_t start, end;            /* end exclusive */
        bool ram;                       /* "System RAM" */
};
struct fw_cache {
        struct fw_entry *entries;
        size_t n, allocated;
};
void fw_cache_clear(struct fw_cache *c);

/* cache may be NULL: every entry is read. */
int memdev_scan_firmware_ram(const char *sysfs_root, struct fw_cache *cache, struct ram_ranges *ret);
/* Does any of [start, start + size) lie in the firmware's RAM? */
bool ram_ranges_touch(const struct ram_ranges *rr, uint64_t start, uint64_t size);
void ram_ranges_clear(struct ram_ranges *rr);
/* A copy of src into *ret (replaced on success). */
int ram_ranges_copy(const struct ram_ranges *src, struct ram_ranges *ret);

/*
 * The virtio devices bound to virtio_mem: the one name there is, NULL when
 * there are none, "virtio-mem" when there are several (which region is
 * whose needs iomem with CAP_SYS_ADMIN). Caller frees.
 */
int memdev_virtio_mem_name(const char *sysfs_root, char **ret);

/* Where /proc/iomem is for this sysfs root (see above); caller frees. */
int memdev_iomem_path(const char *sysfs_root, char **ret);

/* The device whose span holds [start, start + size), or NULL. */
const struct memdev *memdev_find(const struct memdev_set *s, uint64_t start, uint64_t size);

struct topology;
struct pmem_devices;

/* What memdev_load() keeps from one call to the next: the ACPI spans and the firmware entries. */
struct memdev_cache {
        struct acpi_span_cache acpi;
        struct fw_cache fw;
};
void memdev_cache_clear(struct memdev_cache *c);

/*
 * The machine's hotplug devices: ACPI DIMMs, virtio-mem regions (from
 * iomem; without its addresses, the runs of t's blocks outside the
 * firmware's RAM that no other device holds), and the dax devices of devs
 * onlined through kmem; and the firmware's RAM ranges. Replaces *ret and
 * *ret_fw on success. cache (may be NULL) carries what may be kept over.
 */
int memdev_load(const char *sysfs_root, const struct topology *t, const struct pmem_devices *devs,
                struct memdev_cache *cache, struct memdev_set *ret, struct ram_ranges *ret_fw);

/*
 * The devices of known with its dax devices replaced by those of devs (as
 * memdev_load() adds them): what memdev_load() would find when only the
 * dax devices changed since known was read. Replaces *ret on success;
 * -EEXIST when a span of known overlaps a dax device now (known is stale).
 */
int memdev_set_with_dax(const struct memdev_set *known, const struct pmem_devices *devs, struct memdev_set *ret);
