/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include "blocks.h"
#include "pmem.h"

/*
 * Reading dax devices from <root>/bus/dax/devices (so tests use fake
 * trees), and which memory blocks belong to which device.
 */

/* Does the nd region's uevent say nd_pmem? Without a DEVTYPE line, nstype 5 (PMEM) decides. */
bool pmem_region_is_pmem(const char *sysfs_root, const char *rel_region);

/*
 * Read one dax device ("dax0.0") from <root>/bus/dax/devices. -ENOENT if
 * it is not there or vanished while being read; -EINVAL for a bad name.
 */
int pmem_read_device(const char *sysfs_root, const char *name, struct pmem_device *ret);

/*
 * Read every dax device. Devices that vanish during the scan are left out;
 * devices that cannot be read are left out and counted in n_unreadable.
 * Replaces the contents of *ret on success (a missing bus/dax is an empty
 * set). Returns the number of devices read; -ENOMEM, or -errno when the
 * bus cannot be listed.
 */
int pmem_scan(const char *sysfs_root, struct pmem_devices *ret);

/*
 * Bring a set pmem_scan() filled up to date, reading only what may have
 * changed: a device that is gone is dropped; one that is new, was made
 * again (its directory has another inode), changed driver, or has none
 * is read. A device still bound to the same driver is kept as read: the
 * kernel resizes and realigns a dax device only while no driver is bound
 * (dev_dax_resize(), align_store() answer EBUSY), and its names, node and
 * CXL attribution are its own for life. A set that had unreadable devices,
 * or was never scanned, is scanned whole. Returns as pmem_scan(); on
 * failure *devs is left empty (unscanned), so nothing stale outlives it.
 */
int pmem_scan_update(const char *sysfs_root, struct pmem_devices *devs);

/*
 * Attribute blocks to the system-ram (kmem) devices whose ranges hold
 * them whole: set device, namespace_name, namespace_uuid, region, the CXL
 * region and memdevs, the device's bad media, and the node from
 * target_node when the block's node is NODE_NONE or only guessed (kmem
 * adds the memory to exactly that node). Blocks outside every device are left alone. O(n log m). Returns the number attributed.
 */
int pmem_attribute_blocks(const struct pmem_devices *d, uint64_t block_size, struct block_set *set);
