/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The contract between the daemon and the tools that read what it leaves
 * behind: `memonlined report` reads its journal records, `memonlined
 * status` its runtime directory. Both sides take every name from here, as
 * systemd's keep theirs in sd-messages.h. All of it is API once released:
 * scripts, journalctl filters and older or newer tools depend on it.
 */

/* The policy file and the runtime directory (the unit's RuntimeDirectory=, kept for the boot). */
#define DEFAULT_CONFIG SYSCONFDIR "/memonlined.conf"
#define RUNTIME_DIR_DEFAULT "/run/memonlined"
#define RUNTIME_LOCK_FILE "lock"
/* A link to /proc/<pid>: it resolves exactly while that process lives, however it ended. */
#define RUNTIME_MARKER "running"

/*
 * While a batch runs, <runtime dir>/progress: KEY=value lines, replaced
 * whole (rename) at most twice a second, removed when the batch ends.
 */
#define PROGRESS_FILE "progress"
#define PROGRESS_STATUS "STATUS"                /* the daemon's STATUS= text */
#define PROGRESS_TRIGGER "TRIGGER"              /* udev, coldplug, dax, rescan ... */
#define PROGRESS_NODE "NODE"                    /* the node being written, -1 none */
#define PROGRESS_BLOCKS_DONE "BLOCKS_DONE"
#define PROGRESS_BLOCKS_TOTAL "BLOCKS_TOTAL"
#define PROGRESS_BLOCK_SIZE "BLOCK_SIZE"        /* bytes */
#define PROGRESS_ELAPSED_USEC "ELAPSED_USEC"

/*
 * Journal records. MESSAGE_IDs are fixed (made with systemd-id128 new) and
 * API: scripts and journalctl filters name them. catalog/memonlined.catalog
 * explains each.
 */

#define MESSAGE_ID_BATCH    "8a75c3204edc4026aea27aaeda486899"
#define MESSAGE_ID_NODE     "a251eb01963d4e9abecfe2f5aa23b7e8"
#define MESSAGE_ID_FAILURE  "4760fcae4d4f45179c8ac4c18983bc6c"
#define MESSAGE_ID_DEVICE   "3e18456c06c244deb807603c81f317e9"
#define MESSAGE_ID_CONFIG   "31b255296e2e45c4baa570bba1bd0f06"
#define MESSAGE_ID_CONFLICT "68aea79758d8470489a2d0d5cf9410a9"
#define MESSAGE_ID_STARTED  "5503814ab9be4e42b0ec2b9e0af8065c"
#define MESSAGE_ID_RATIO    "e2920e93701e4e3ab810fafbb375d1f0"
#define MESSAGE_ID_STALLED  "b6e8f99665a04b6891481fbc07dc4af6"
#define MESSAGE_ID_AUTO_ONLINE "8216f73b38044dc69bcef47433573c8f"
#define MESSAGE_ID_SLOW_KERNEL "375bcbd18c6343a7b49c89878b6ab86e"
#define MESSAGE_ID_BAD_MEDIA "315806877ee24d9bbc1971810891426a"

/*
 * Before 0.2 memonlined wrote these hand-patterned IDs for the same records.
 * memonlined report still reads journals that hold them, and the catalog
 * still explains them.
 */
#define MESSAGE_ID_OLD_BATCH    "6a1c2b3e4d5f47a8b9c0d1e2f3a4b5c6"
#define MESSAGE_ID_OLD_NODE     "7b2d3c4f5e6048b9a0c1d2e3f4a5b6c7"
#define MESSAGE_ID_OLD_FAILURE  "8c3e4d5a6f7149c0b1d2e3f4a5b6c7d8"
#define MESSAGE_ID_OLD_DEVICE   "9d4f5e6b7a8240d1c2e3f4a5b6c7d8e9"
#define MESSAGE_ID_OLD_CONFIG   "ae5a6f7c8b9351e2d3f4a5b6c7d8e9fa"
#define MESSAGE_ID_OLD_CONFLICT "bf6b7a8d9ca462f3e4a5b6c7d8e9fa0b"
#define MESSAGE_ID_OLD_STARTED  "c07c8b9eadb573a4f5b6c7d8e9fa0b1c"
#define MESSAGE_ID_OLD_RATIO    "d18d9cafbec684b5a6c7d8e9fa0b1c2d"

/* The records' fields (catalog/memonlined.catalog and memonlined(8) say what each holds). */
#define FIELD_ALREADY_ONLINE "MEMONLINE_ALREADY_ONLINE"
#define FIELD_ATTEMPTS "MEMONLINE_ATTEMPTS"
#define FIELD_BADBLOCKS "MEMONLINE_BADBLOCKS"
#define FIELD_BAD_ADDRESS "MEMONLINE_BAD_ADDRESS"
#define FIELD_BATCH "MEMONLINE_BATCH"
#define FIELD_BIND_USEC "MEMONLINE_BIND_USEC"
#define FIELD_BLOCK "MEMONLINE_BLOCK"
#define FIELD_BLOCKS "MEMONLINE_BLOCKS"
#define FIELD_BYTES "MEMONLINE_BYTES"
#define FIELD_CPUS "MEMONLINE_CPUS"
#define FIELD_CPU_USEC "MEMONLINE_CPU_USEC"
#define FIELD_CXL_MEMDEV "MEMONLINE_CXL_MEMDEV"
#define FIELD_CXL_REGION "MEMONLINE_CXL_REGION"
#define FIELD_DEVICE "MEMONLINE_DEVICE"
#define FIELD_DEVICE_KIND "MEMONLINE_DEVICE_KIND"
#define FIELD_DURATION_USEC "MEMONLINE_DURATION_USEC"
#define FIELD_ERRNO "MEMONLINE_ERRNO"
#define FIELD_ERRNO_NAME "MEMONLINE_ERRNO_NAME"
#define FIELD_FAILED "MEMONLINE_FAILED"
#define FIELD_FIRST_LATENCY_USEC "MEMONLINE_FIRST_LATENCY_USEC"
#define FIELD_GIBPS "MEMONLINE_GIBPS"
#define FIELD_LATENCY_USEC "MEMONLINE_LATENCY_USEC"
#define FIELD_MAX_USEC "MEMONLINE_MAX_USEC"
#define FIELD_MEDIA "MEMONLINE_MEDIA"
#define FIELD_MEMMAP_ON_MEMORY "MEMONLINE_MEMMAP_ON_MEMORY"
#define FIELD_MEMMAP_REASON "MEMONLINE_MEMMAP_REASON"
#define FIELD_MODE "MEMONLINE_MODE"
#define FIELD_NAMESPACE "MEMONLINE_NAMESPACE"
#define FIELD_NAMESPACE_UUID "MEMONLINE_NAMESPACE_UUID"
#define FIELD_NODE "MEMONLINE_NODE"
#define FIELD_NODES "MEMONLINE_NODES"
#define FIELD_NOT_ATTEMPTED "MEMONLINE_NOT_ATTEMPTED"
#define FIELD_ONLINE_USEC "MEMONLINE_ONLINE_USEC"
#define FIELD_P50_USEC "MEMONLINE_P50_USEC"
#define FIELD_P99_USEC "MEMONLINE_P99_USEC"
#define FIELD_PREPARE_USEC "MEMONLINE_PREPARE_USEC"
#define FIELD_REASON "MEMONLINE_REASON"
#define FIELD_REGION "MEMONLINE_REGION"
#define FIELD_SKIPPED "MEMONLINE_SKIPPED"
#define FIELD_TOTAL_USEC "MEMONLINE_TOTAL_USEC"
#define FIELD_TRIGGER "MEMONLINE_TRIGGER"
#define FIELD_WRITER_NODE "MEMONLINE_WRITER_NODE"
#define FIELD_ZONE "MEMONLINE_ZONE"
