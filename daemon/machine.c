/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The machine model: nodes, CPUs and their cores, distances, HMAT
 * initiators and isolated CPUs, the signature that shows node or CPU
 * hotplug, the notes on what was left out, and the choice of writer
 * node and CPUs. The blocks are block-cache.c's.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include "cpuset.h"
#include "sysfs.h"
#include "topology-internal.h"
#include "util.h"

#define CPU_DIR "devices/system/cpu"

/* Say what was left out and why; past TOPO_NOTES_MAX only counted. Out of memory drops the note. */
_printf_(2, 3)
static void note(struct topology *t, const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        if (t->n_notes >= TOPO_NOTES_MAX) {
                t->n_notes_dropped++;
                return;
        }
        if (!t->notes) {
                t->notes = calloc(TOPO_NOTES_MAX, sizeof(char *));
                if (!t->notes)
                        return;
        }
        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0) {
                t->n_notes_dropped++;
                return;
        }
        t->notes[t->n_notes++] = s;
}

static void free_notes(struct topology *t) {
        for (size_t i = 0; i < t->n_notes; i++)
                free(t->notes[i]);
        free(t->notes);
        t->notes = NULL;
        t->n_notes = t->n_notes_dropped = 0;
}

void machine_done(struct topology *t) {
        for (size_t i = 0; i < t->n_nodes; i++) {
                cpuset_freep(&t->nodes[i].cpus);
                cpuset_freep(&t->nodes[i].initiators);
                free(t->nodes[i].distance);
        }
        free(TAKE_PTR(t->nodes));
        t->n_nodes = 0;
        free(TAKE_PTR(t->cpus));
        t->n_cpus = 0;
        free(TAKE_PTR(t->signature));
        cpuset_freep(&t->isolated);
        free_notes(t);
}

#define SWAP(a, b) do { __typeof__(a) _tmp = (a); (a) = (b); (b) = _tmp; } while (0)

void machine_swap(struct topology *a, struct topology *b) {
        SWAP(a->nodes, b->nodes);
        SWAP(a->n_nodes, b->n_nodes);
        SWAP(a->max_node, b->max_node);
        SWAP(a->cpus, b->cpus);
        SWAP(a->n_cpus, b->n_cpus);
        SWAP(a->isolated, b->isolated);
        SWAP(a->signature, b->signature);
        SWAP(a->notes, b->notes);
        SWAP(a->n_notes, b->n_notes);
        SWAP(a->n_notes_dropped, b->n_notes_dropped);
}

void topology_error_set(struct topology_error *e, const char *fmt, ...) {
        va_list ap;

        if (!e)
                return;
        va_start(ap, fmt);
        vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
        va_end(ap);
}

/* A node id (the key) against an entry of nodes[], for bsearch(). */
static int cmp_node_id(const void *key, const void *entry) {
        int a = *(const int *) key, b = ((const struct topo_node *) entry)->id;

        return (a > b) - (a < b);
}

const struct topo_node *topology_node(const struct topology *t, int node_id) {
        if (!t)
                return NULL;
        /* nodes[] is sorted by id. */
        return bsearch_safe(&node_id, t->nodes, t->n_nodes, sizeof(*t->nodes), cmp_node_id);
}

/* A cpulist attribute; a missing file is an empty set when optional. */
static int read_cpulist(const char *root, const char *rel, bool optional, struct bitmask **ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        r = sysfs_read(root, rel, &s);
        if (r == -ENOENT && optional)
                s = strdup("");
        else if (r < 0)
                return r;
        if (!s)
                return -ENOMEM;
        /* nohz_full reads "  (null)" on kernels built with NO_HZ_FULL but booted without it. */
        if (streq(strstrip(s), "(null)"))
                return cpulist_parse("", ret);
        return cpulist_parse(s, ret);
}

/* A cpulist the machine can do without: on any error but ENOMEM, a note and NULL (an empty set). */
static int read_cpulist_or_note(struct topology *t, const char *rel, const char *without, struct bitmask **ret) {
        int r;

        r = read_cpulist(t->sysfs_root, rel, true, ret);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                note(t, "%s: %s: %s", rel, strerror(-r), without);
                *ret = NULL;
        }
        return 0;
}

int topology_parse_distance(const char *s, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0, allocated = 0;

        if (!s || !ret || !ret_n)
                return -EINVAL;
        for (const char *p = s;;) {
                char word[16];
                size_t len;
                unsigned d;
                int r;

                p += strspn(p, " \t\n");
                len = strcspn(p, " \t\n");
                if (len == 0)
                        break;
                if (len >= sizeof(word))
                        return -EINVAL;
                /* One entry per node: more than there can be nodes is no distance line. */
                if (n > NODE_ID_MAX)
                        return -E2BIG;
                memcpy(word, p, len);
                word[len] = '\0';
                r = parse_unsigned(word, &d);
                if (r < 0)
                        return -EINVAL;
                if (GROW(v, allocated, n + 1) < 0)
                        return -ENOMEM;
                v[n++] = d;
                p += len;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

/* Fills node->distance from its distance line; a line it cannot use leaves all unknown (0). */
static int read_node_distance(struct topology *t, struct topo_node *node,
                              const uint64_t *online, size_t n_online,
                              const uint64_t *dirs, size_t n_dirs) {
        _cleanup_free_ char *s = NULL;
        _cleanup_free_ unsigned *v = NULL;
        const uint64_t *order;
        char rel[128];
        size_t n;
        int r;

        snprintf(rel, sizeof(rel), NODE_DIR "/node%d/distance", node->id);
        r = sysfs_read(t->sysfs_root, rel, &s);
        if (r == -ENOENT)
                return 0;       /* unknown: all 0 */
        if (r >= 0)
                r = topology_parse_distance(s, &v, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                note(t, "%s: %s: distances from node %d unknown", rel, strerror(-r), node->id);
                return 0;
        }

        /* The kernel prints for_each_online_node(); node/online is that list. */
        if (online && n == n_online)
                order = online;
        else if (n == n_dirs)
                order = dirs;
        else {
                note(t, "%s: %zu entries for %zu nodes: distances from node %d unknown", rel, n,
                     n_online > 0 ? n_online : n_dirs, node->id);
                return 0;
        }
        for (size_t i = 0; i < n; i++)
                node->distance[order[i]] = v[i];
        return 0;
}

static int load_node_initiators(struct topology *t, struct topo_node *node) {
        _cleanup_cpuset_ struct bitmask *m = NULL;
        _cleanup_free_ uint64_t *ids = NULL;
        char rel[128];
        size_t n;
        int r;

        snprintf(rel, sizeof(rel), NODE_DIR "/node%d/access1/initiators", node->id);
        r = sysfs_list_ids(t->sysfs_root, rel, "node", &ids, &n);
        /* Appears only once the node has online memory, and only with HMAT. */
        if (r == -ENOENT || r == -ENOTDIR)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                note(t, "%s: %s: no HMAT initiator for node %d", rel, strerror(-r), node->id);
                return 0;
        }
        if (n == 0)
                return 0;
        m = cpuset_new();
        if (!m)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (ids[i] > NODE_ID_MAX) {
                        note(t, "%s/node%" PRIu64 ": node id beyond %d, left out", rel, ids[i], NODE_ID_MAX);
                        continue;
                }
                numa_bitmask_setbit(m, (unsigned) ids[i]);
        }
        if (cpuset_count(m) > 0)
                node->initiators = TAKE_PTR(m);
        return 0;
}

/* Drop the ids beyond NODE_ID_MAX from a sorted list, with a note per id. */
static size_t keep_node_ids(struct topology *t, const char *what, uint64_t *ids, size_t n) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (ids[i] <= NODE_ID_MAX)
                        ids[k++] = ids[i];
                else
                        note(t, "%s%" PRIu64 ": node id beyond %d, left out", what, ids[i], NODE_ID_MAX);
        return k;
}

/* The node half of t's signature ("NODES|CPUS"), parsed; unreadable ("?"): read the file for its note. */
static int read_online_nodes(struct topology *t, struct bitmask **ret) {
        const char *bar = t->signature ? strrchr(t->signature, '|') : NULL;
        _cleanup_free_ char *nodes = bar ? strndup(t->signature, (size_t) (bar - t->signature)) : NULL;

        if (bar && !nodes)
                return -ENOMEM;
        if (nodes && !streq(nodes, "?") && cpulist_parse(nodes, ret) >= 0)
                return 0;
        return read_cpulist_or_note(t, NODE_DIR "/online", "distances follow the node directories", ret);
}

/* known's initiators of node_id, copied into node (NULL when it had none). */
static int keep_node_initiators(struct topo_node *node, const struct topology *known) {
        const struct topo_node *was = topology_node(known, node->id);

        if (!was || !was->initiators)
                return 0;
        node->initiators = cpuset_new();
        if (!node->initiators)
                return -ENOMEM;
        copy_bitmask_to_bitmask(was->initiators, node->initiators);
        return 0;
}

/*
 * Node directories, cpulists (kept in ret_cpulists, by index into nodes[],
 * to map CPUs without a nodeM link; NULL: not wanted, the CPUs are kept),
 * distances and initiators. A node known has (it may be NULL) keeps its
 * initiators: they change only when its first memory comes online, and
 * then known is stale and not passed.
 */
static int load_nodes(struct topology *t, struct bitmask ***ret_cpulists, const struct topology *known) {
        _cleanup_free_ uint64_t *dirs = NULL, *online = NULL;
        _cleanup_cpuset_ struct bitmask *online_mask = NULL;
        struct bitmask **cpulists = NULL;
        size_t n_dirs, n_online = 0;
        int r;

        r = sysfs_list_ids(t->sysfs_root, NODE_DIR, "node", &dirs, &n_dirs);
        if (r == -ENOENT) {
                /* CONFIG_NUMA=n: no node directory at all; everything is node 0. */
                dirs = calloc(1, sizeof(uint64_t));
                if (!dirs)
                        return -ENOMEM;
                n_dirs = 1;
        } else if (r < 0)
                return r;
        n_dirs = keep_node_ids(t, NODE_DIR "/node", dirs, n_dirs);

        r = read_online_nodes(t, &online_mask);
        if (r < 0)
                return r;
        n_online = cpuset_count(online_mask);
        if (n_online > 0) {
                size_t i = 0;

                online = calloc(n_online, sizeof(uint64_t));
                if (!online)
                        return -ENOMEM;
                CPUSET_FOREACH(k, online_mask)
                        online[i++] = (uint64_t) k;
                n_online = keep_node_ids(t, NODE_DIR "/online: node", online, n_online);
        }

        t->max_node = 0;
        for (size_t i = 0; i < n_dirs; i++)
                t->max_node = MAX(t->max_node, (int) dirs[i]);
        if (n_online > 0)
                t->max_node = MAX(t->max_node, (int) online[n_online - 1]);

        t->nodes = calloc(n_dirs ? n_dirs : 1, sizeof(struct topo_node));
        if (!t->nodes)
                return -ENOMEM;
        if (ret_cpulists) {
                cpulists = calloc(n_dirs ? n_dirs : 1, sizeof(struct bitmask *));
                if (!cpulists)
                        return -ENOMEM;
                /* Owned by the caller from here on, also on failure. */
                *ret_cpulists = cpulists;
        }

        for (size_t i = 0; i < n_dirs; i++) {
                struct topo_node *node = &t->nodes[i];
                char rel[128];

                node->id = (int) dirs[i];
                t->n_nodes++;
                node->cpus = cpuset_new();
                node->distance = calloc((size_t) t->max_node + 1, sizeof(unsigned));
                if (!node->cpus || !node->distance)
                        return -ENOMEM;

                if (ret_cpulists) {
                        snprintf(rel, sizeof(rel), NODE_DIR "/node%d/cpulist", node->id);
                        r = read_cpulist_or_note(t, rel, "its CPUs go by their own node links", &cpulists[i]);
                        if (r < 0)
                                return r;
                }
                /* Read again: a new node is a new column. */
                r = read_node_distance(t, node, online, n_online, dirs, n_dirs);
                if (r < 0)
                        return r;
                if (node->distance[node->id] == 0 && n_dirs == 1)
                        node->distance[node->id] = 10;  /* local distance, also for the non-NUMA node */
                r = known && topology_node(known, node->id) ? keep_node_initiators(node, known) :
                    load_node_initiators(t, node);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* cpuN/online: "1" or "0"; cpu0 usually cannot be offlined and has none. Anything else: offline, noted. */
static int read_cpu_online(struct topology *t, unsigned cpu, bool *ret) {
        _cleanup_free_ char *online = NULL;
        char rel[128];
        int r;

        snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u/online", cpu);
        r = sysfs_read(t->sysfs_root, rel, &online);
        if (r == -ENOENT) {
                *ret = true;
                return 0;
        }
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && (streq(online, "1") || streq(online, "0"))) {
                *ret = streq(online, "1");
                return 0;
        }
        note(t, "%s: %s: CPU %u taken as offline, never written from", rel,
             r < 0 ? strerror(-r) : "neither 1 nor 0", cpu);
        *ret = false;
        return 0;
}

static int load_cpu(struct topology *t, unsigned cpu, struct bitmask *const *cpulists) {
        _cleanup_cpuset_ struct bitmask *siblings = NULL;
        _cleanup_free_ uint64_t *nodes = NULL;
        struct topo_cpu *c = &t->cpus[cpu];
        char rel[128];
        size_t n = 0;
        int r;

        r = read_cpu_online(t, cpu, &c->online);
        if (r < 0)
                return r;
        c->present = true;
        c->node = NODE_NONE;

        snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u", cpu);
        r = sysfs_list_ids(t->sysfs_root, rel, "node", &nodes, &n);
        if (r == -ENOENT) {
                /* Gone since the listing (hot-removed): not a CPU to write from. */
                *c = (struct topo_cpu) { .node = NODE_NONE, .core = (int) cpu };
                return 0;
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                note(t, "%s: %s: node from the node cpulists", rel, strerror(-r));
        else {
                snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u/node", cpu);
                if (keep_node_ids(t, rel, nodes, n) > 0)
                        c->node = (int) nodes[0];
        }
        if (c->node == NODE_NONE)
                for (size_t i = 0; i < t->n_nodes; i++)
                        if (cpuset_isset(cpulists[i], cpu)) {
                                c->node = t->nodes[i].id;
                                break;
                        }

        /* Offline CPUs lose their topology directory: a core of their own. */
        snprintf(rel, sizeof(rel), CPU_DIR "/cpu%u/topology/thread_siblings_list", cpu);
        r = read_cpulist_or_note(t, rel, "a core of its own", &siblings);
        if (r < 0)
                return r;
        r = cpuset_next(siblings, 0);
        c->core = r >= 0 && (unsigned) r < cpu ? r : (int) cpu;
        return 0;
}

/* Each online CPU into its node's set. */
static void cpus_into_nodes(struct topology *t) {
        for (unsigned i = 0; i < t->n_cpus; i++) {
                struct topo_cpu *c = &t->cpus[i];
                struct topo_node *node;

                if (!c->present || !c->online)
                        continue;
                node = machine_node_mut(t, c->node);
                if (node)
                        numa_bitmask_setbit(node->cpus, i);
        }
}

static int load_cpus(struct topology *t, struct bitmask *const *cpulists) {
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n;
        int r;

        r = sysfs_list_ids(t->sysfs_root, CPU_DIR, "cpu", &ids, &n);
        if (r == -ENOENT)
                n = 0;
        else if (r < 0)
                return r;
        /* Sorted: the ones past the bitmasks come last. */
        while (n > 0 && ids[n - 1] >= CPUSET_MAX) {
                note(t, CPU_DIR "/cpu%" PRIu64 ": CPU id beyond %d, left out", ids[n - 1], CPUSET_MAX - 1);
                n--;
        }

        t->n_cpus = n > 0 ? (unsigned) ids[n - 1] + 1 : 0;
        t->cpus = calloc(t->n_cpus ? t->n_cpus : 1, sizeof(struct topo_cpu));
        if (!t->cpus)
                return -ENOMEM;
        for (unsigned i = 0; i < t->n_cpus; i++) {
                t->cpus[i].node = NODE_NONE;
                t->cpus[i].core = (int) i;
        }
        for (size_t i = 0; i < n; i++) {
                r = load_cpu(t, (unsigned) ids[i], cpulists);
                if (r < 0)
                        return r;
        }

        /* Without node directories every CPU is on the single node 0. */
        for (unsigned i = 0; i < t->n_cpus; i++)
                if (t->cpus[i].node == NODE_NONE && t->n_nodes == 1 && t->nodes[0].id == 0)
                        t->cpus[i].node = 0;
        cpus_into_nodes(t);
        return 0;
}

static int load_isolated(struct topology *t) {
        static const char *const files[] = { CPU_DIR "/isolated", CPU_DIR "/nohz_full" };
        int r;

        t->isolated = cpuset_new();
        if (!t->isolated)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_cpuset_ struct bitmask *m = NULL;

                r = read_cpulist(t->sysfs_root, files[i], true, &m);
                if (r == -ENOMEM)
                        return r;
                /* An odd format here must not stop onlining: avoid nothing extra. */
                if (r < 0)
                        continue;
                CPUSET_FOREACH(cpu, m)
                        numa_bitmask_setbit(t->isolated, (unsigned) cpu);
        }
        return 0;
}

/* A list for the signature; one that cannot be read is the same "?" every time. */
static int read_signature_part(const char *root, const char *rel, char **ret) {
        int r = sysfs_read(root, rel, ret);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                *ret = strdup(r == -ENOENT ? "" : "?");
        return *ret ? 0 : -ENOMEM;
}

/* What node or CPU hotplug changes: the online node and CPU lists. */
int machine_read_signature(const char *root, char **ret) {
        _cleanup_free_ char *nodes = NULL, *cpus = NULL;
        char *s;
        int r;

        r = read_signature_part(root, NODE_DIR "/online", &nodes);
        if (r >= 0)
                r = read_signature_part(root, CPU_DIR "/online", &cpus);
        if (r < 0)
                return r;
        if (asprintf(&s, "%s|%s", nodes, cpus) < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* The CPU half of a signature ("NODES|CPUS"): what CPU hotplug changes. */
static const char *signature_cpus(const char *signature) {
        const char *bar = signature ? strrchr(signature, '|') : NULL;

        return bar ? bar + 1 : NULL;
}

/* Whether t's fresh signature has known's CPU half (no CPU came, went, or went on- or offline) and known its CPUs. */
static bool cpus_unchanged(const struct topology *t, const struct topology *known) {
        const char *was = signature_cpus(known->signature), *now = signature_cpus(t->signature);

        return was && now && streq(was, now) && known->cpus && known->isolated;
}

/* The CPUs and isolated CPUs as known has them. */
static int keep_cpus(struct topology *t, const struct topology *known) {
        t->cpus = malloc((known->n_cpus ?: 1) * sizeof(*t->cpus));
        t->isolated = cpuset_new();
        if (!t->cpus || !t->isolated)
                return -ENOMEM;
        if (known->n_cpus > 0)
                memcpy(t->cpus, known->cpus, known->n_cpus * sizeof(*t->cpus));
        t->n_cpus = known->n_cpus;
        copy_bitmask_to_bitmask(known->isolated, t->isolated);
        cpus_into_nodes(t);
        return 0;
}

/* Nodes, CPUs and isolated CPUs, with the signature read first: a change while loading shows next time. */
int machine_load(struct topology *t, struct topology_error *e) {
        return machine_load_known(t, NULL, NULL, e);
}

int machine_load_known(struct topology *t, const struct topology *known, char *signature, struct topology_error *e) {
        struct bitmask **cpulists = NULL;
        bool keep;
        int r;

        if (signature)
                t->signature = signature;
        else {
                r = machine_read_signature(t->sysfs_root, &t->signature);
                if (r < 0)
                        return r;
        }
        /* Only nodes changed (a CPU-less node came): the CPUs, their nodes' cpulists and the initiators are as they were. */
        keep = known && cpus_unchanged(t, known);
        r = load_nodes(t, keep ? NULL : &cpulists, keep && !known->stale ? known : NULL);
        if (r < 0 && r != -ENOMEM)
                topology_error_set(e, "cannot list " NODE_DIR ": %s", strerror(-r));
        if (r >= 0 && keep)
                r = keep_cpus(t, known);
        else if (r >= 0) {
                r = load_cpus(t, cpulists);
                if (r < 0 && r != -ENOMEM)
                        topology_error_set(e, "cannot list " CPU_DIR ": %s", strerror(-r));
        }
        if (cpulists) {
                for (size_t i = 0; i < t->n_nodes; i++)
                        cpuset_freep(&cpulists[i]);
                free(cpulists);
        }
        if (r < 0 || keep)
                return r;
        return load_isolated(t);
}

static bool cpu_usable(const struct topology *t, int cpu, const struct bitmask *banned) {
        const struct topo_cpu *c;

        if (cpu < 0 || (unsigned) cpu >= t->n_cpus)
                return false;
        c = &t->cpus[cpu];
        return c->present && c->online &&
                !cpuset_isset(banned, (unsigned) cpu) &&
                !cpuset_isset(t->isolated, (unsigned) cpu);
}

static bool node_usable(const struct topology *t, const struct topo_node *node, const struct bitmask *banned) {
        if (!node)
                return false;
        CPUSET_FOREACH(cpu, node->cpus)
                if (cpu_usable(t, cpu, banned))
                        return true;
        return false;
}

int topology_writer_node(const struct topology *t, int node_id, const struct bitmask *banned) {
        const struct topo_node *node;
        int best = NODE_NONE;
        unsigned best_dist = UINT_MAX;

        if (!t)
                return NODE_NONE;
        node = topology_node(t, node_id);
        if (!node)
                return NODE_NONE;
        if (node_usable(t, node, banned))
                return node_id;

        /* HMAT names the best initiator; bitmask order gives the lowest id first. */
        CPUSET_FOREACH(k, node->initiators)
                if (k != node_id && node_usable(t, topology_node(t, k), banned))
                        return k;

        /* Nearest by SLIT distance; unknown (0) distances rank last. Ties: lowest id. */
        for (size_t i = 0; i < t->n_nodes; i++) {
                const struct topo_node *o = &t->nodes[i];
                unsigned d;

                if (o->id == node_id || !node_usable(t, o, banned))
                        continue;
                d = node->distance[o->id] ? node->distance[o->id] : UINT_MAX;
                if (best == NODE_NONE || d < best_dist) {
                        best = o->id;
                        best_dist = d;
                }
        }
        return best;
}

/*
 * best[core] = the lowest usable thread of each physical core on the node,
 * or -1. A core whose first thread is banned is represented by a sibling.
 */
static int node_cores(const struct topology *t, int node_id, const struct bitmask *banned, int **ret_best) {
        const struct topo_node *node = topology_node(t, node_id);
        _cleanup_free_ int *best = NULL;
        int n = 0;

        best = malloc((t->n_cpus ? t->n_cpus : 1) * sizeof(int));
        if (!best)
                return -ENOMEM;
        for (unsigned i = 0; i < t->n_cpus; i++)
                best[i] = -1;
        if (node)
                CPUSET_FOREACH(cpu, node->cpus) {
                        int core;

                        if (!cpu_usable(t, cpu, banned))
                                continue;
                        core = t->cpus[cpu].core;
                        if (best[core] < 0) {
                                best[core] = cpu;
                                n++;
                        }
                }
        *ret_best = TAKE_PTR(best);
        return n;
}

int topology_pick_cpus(const struct topology *t, int node_id, const struct bitmask *banned,
                       unsigned max, int *ret_cpus) {
        _cleanup_free_ int *best = NULL;
        unsigned n = 0;
        int r;

        if (!t || (max > 0 && !ret_cpus))
                return -EINVAL;
        r = node_cores(t, node_id, banned, &best);
        if (r < 0)
                return r;
        /* Lowest core first; core ids are CPU ids, so walk them in order. */
        for (unsigned core = 0; core < t->n_cpus && n < max; core++)
                if (best[core] >= 0)
                        ret_cpus[n++] = best[core];
        return (int) n;
}

unsigned topology_usable_cores(const struct topology *t, int node_id, const struct bitmask *banned) {
        _cleanup_free_ int *best = NULL;
        int r;

        if (!t)
                return 0;
        r = node_cores(t, node_id, banned, &best);
        return r < 0 ? 0 : (unsigned) r;
}
