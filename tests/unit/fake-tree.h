/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Fake sysfs trees in a temp dir, laid out like the kernel's:
 *   devices/system/cpu/cpuN/{online,topology/thread_siblings_list,nodeM}
 *   devices/system/node/nodeN/{cpulist,distance,memoryM,access1/initiators/nodeK}
 *   devices/system/memory/{block_size_bytes,auto_online_blocks,memoryN/{state,valid_zones,phys_index,nodeK}}
 * Helpers abort the test on failure (they are test scaffolding).
 */

#include <stdbool.h>
#include <stdint.h>

char *fake_tree_new(void);                      /* mkdtemp; returns the root */
/* On tmpfs (/dev/shm) when there is one, for trees with many thousand files. */
char *fake_tree_new_fast(void);
void fake_tree_free(char *root);                /* rm -rf and free */

void fake_write(const char *root, const char *rel, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void fake_symlink(const char *root, const char *rel_link, const char *target);
void fake_mkdir(const char *root, const char *rel);
void fake_unlink(const char *root, const char *rel);
/* Contents of a file, newline stripped; caller frees. NULL if missing. */
char *fake_read(const char *root, const char *rel);

/* memory/block_size_bytes in hex, plus auto_online_blocks = "offline". */
void fake_memory_init(const char *root, uint64_t block_size);
/* cpuN on node, with its thread_siblings_list; online "1" unless !online. */
void fake_add_cpu(const char *root, unsigned cpu, int node, const char *siblings, bool online);
/* nodeN with cpulist and distance line ("10 20 30"); updates node/online, has_cpu lists are not kept. */
void fake_add_node(const char *root, int node, const char *cpulist, const char *distance);
/* HMAT: node's access1/initiators/nodeK link. */
void fake_add_initiator(const char *root, int node, int initiator);
/* memoryN with state and valid_zones; node < 0 means no node link (yet). */
void fake_add_block(const char *root, uint64_t id, int node, const char *state, const char *valid_zones);
/* Many blocks at once (first..first+count-1), quicker than fake_add_block() per block. */
void fake_add_blocks(const char *root, uint64_t first, uint64_t count, int node, const char *state,
                     const char *valid_zones);
/* Remove an empty directory. */
void fake_rmdir(const char *root, const char *rel);
/* Add the nodeK link to memoryN (and memoryN under nodeK) later, as the kernel does. */
void fake_link_block(const char *root, uint64_t id, int node);

/*
 * A standard test machine:
 *   node0: CPUs 0-3 (cores {0,2},{1,3}), node1: CPUs 4-7 (cores {4,6},{5,7}),
 *   node2: CPU-less, distance 0-1 20, 0-2 30, 1-2 17 (node1 nearer node2).
 *   block size 128 MiB; boot blocks 0-7 online Normal on node0, 8-15 on node1.
 */
void fake_standard_machine(const char *root);
