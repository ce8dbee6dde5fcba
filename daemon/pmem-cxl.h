/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "pmem.h"

/*
 * Which CXL region a dax device belongs to, the region's root decoder and
 * the memdev behind each of its interleave positions. rel_dev is the
 * device's canonical directory relative to the root. A device that is not
 * under a CXL region is left alone. Sets cxl_region, cxl_decoder,
 * cxl_memdevs and cxl_memdevs_unknown; only -ENOMEM fails: a missing or
 * hostile link only makes the memdevs unknown.
 */
int pmem_read_cxl_attribution(const char *sysfs_root, const char *rel_dev, struct pmem_device *dev);
