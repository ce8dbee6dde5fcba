/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "pmem.h"
#include "pmem-convert.h"
#include "rules.h"

struct reporter;

/*
 * One MESSAGE_ID_DEVICE record for a device whose memory was onlined:
 * MEMONLINE_DEVICE, _NAMESPACE, _REGION, _CXL_REGION and _CXL_MEMDEV (on a
 * CXL region), _NODE, _BIND_USEC (0 if not
 * converted by us), _ONLINE_USEC, _TOTAL_USEC, _BLOCKS, _BYTES, MESSAGE, and
 * for a conversion of ours _MEMMAP_ON_MEMORY (yes, no, unsupported), with
 * _MEMMAP_REASON when that is not what the policy asked;
 * conv may be NULL (converted by hand or by daxctl).
 */
int pmem_report_device(struct reporter *r, const struct pmem_device *dev, const struct pmem_convert_result *conv,
                       uint64_t online_usec, uint64_t total_usec, size_t blocks, uint64_t bytes);

/*
 * One MESSAGE_ID_BAD_MEDIA record for a dax device whose memory stays out
 * of system RAM for its bad media: media REFUSED (known bad blocks) or
 * UNKNOWN (they could not be read: tried again). A devdax device is not
 * converted; of a system-ram one, blocks stay offline. MEMONLINE_DEVICE,
 * _NAMESPACE, _NAMESPACE_UUID, _REGION, _NODE, _MODE (devdax or
 * system-ram), _MEDIA (refused or unknown), _BADBLOCKS (bad 512-byte
 * sectors in its memory, a lower bound while the list is incomplete),
 * _BAD_ADDRESS (the first, when there is one), _BLOCKS (left offline),
 * _ERRNO when the list could not be read whole, _REASON, MESSAGE.
 */
int pmem_report_bad_media(struct reporter *r, const struct pmem_device *dev, enum bad_media media, size_t blocks,
                          const char *reason);
