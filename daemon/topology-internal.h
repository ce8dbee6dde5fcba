/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Between the two halves of topology.h: machine.c (nodes, CPUs) and
 * block-cache.c (blocks, and the topology's life), which loads the
 * machine through these and counts blocks into its nodes.
 */

#include "topology.h"
#include "util.h"

#define NODE_DIR "devices/system/node"

/*
 * The node and CPU directories, isolated CPUs, and the signature (read
 * first: a change while loading shows next time). Fails only when the
 * node or CPU directories cannot be listed, e (may be NULL) saying which.
 */
int machine_load(struct topology *t, struct topology_error *e);
/*
 * The same, but when the CPU half of the fresh signature is known's (no
 * CPU came, went or went on- or offline: only nodes changed), the CPUs,
 * their cores and the isolated CPUs are known's, not read again, and so
 * are the initiators of the nodes known has, unless known is stale (a
 * CPU-less node got memory: its initiators came). signature, when not
 * NULL, is the one just read (taken, also on failure).
 */
int machine_load_known(struct topology *t, const struct topology *known, char *signature,
                       struct topology_error *e);
/* What node or CPU hotplug changes: the online node and CPU lists, "NODES|CPUS". */
int machine_read_signature(const char *root, char **ret);
/* Exchange everything machine_load() fills; the blocks stay. */
void machine_swap(struct topology *a, struct topology *b);
/* Free everything machine_load() filled. */
void machine_done(struct topology *t);

static inline struct topo_node *machine_node_mut(struct topology *t, int node_id) {
        return (struct topo_node *) topology_node(t, node_id);
}

/* Why a load failed, into e->reason; e may be NULL. */
_printf_(2, 3) void topology_error_set(struct topology_error *e, const char *fmt, ...);
