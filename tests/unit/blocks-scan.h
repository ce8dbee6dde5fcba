/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include "blocks.h"

/*
 * The tests' way to collect a tree's blocks into a set (the daemon reads
 * only the blocks its events name, and the block cache): every memoryN
 * whose state matches want (or all for BLOCK_STATE_UNKNOWN), appended to
 * set ascending by id, through block_read(). Blocks that vanish mid-scan
 * are left out; blocks that cannot be read (EIO, EISDIR, ...) are left out
 * and counted: returns that count (>= 0), or -errno if the memory
 * directory cannot be listed or memory runs out (set then as it was).
 */
int blocks_scan(const char *sysfs_root, uint64_t block_size, enum block_state want, struct block_set *set);
