/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <inttypes.h>
#include <systemd/sd-bus.h>
#include "blocks.h"
#include "coexist.h"
#include "cpuset.h"
#include "format.h"
#include "json.h"
#include "plan.h"
#include "policy.h"
#include "status.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MAX_WRITE_CPUS 64

struct node_status {
        int node;                       /* NODE_NONE: blocks with no node link */
        unsigned online, offline;
        uint64_t normal_bytes, movable_bytes;
        bool in_topology, cpuless;
        char *cpus;                     /* cpulist of the node, "" if none */
        int writer_node;
        int write_cpus[MAX_WRITE_CPUS];
        int n_write_cpus;
};

struct daemon_status {
        bool known;
        char *active_state, *status_text, *error;
};

struct status {
        const char *root;
        uint64_t block_size;
        struct node_status *nodes;
        size_t n_nodes, a_nodes;
        char *auto_online, *online_policy, *auto_movable_ratio;
        struct conflicts conflicts;
        struct daemon_status daemon;
        char *policy_warning;
};

static void status_done(struct status *s) {
        for (size_t i = 0; i < s->n_nodes; i++)
                free(s->nodes[i].cpus);
        free(s->nodes);
        free(s->auto_online);
        free(s->online_policy);
        free(s->auto_movable_ratio);
        conflicts_clear(&s->conflicts);
        free(s->daemon.active_state);
        free(s->daemon.status_text);
        free(s->daemon.error);
        free(s->policy_warning);
}

static struct node_status *node_get(struct status *s, int node) {
        for (size_t i = 0; i < s->n_nodes; i++)
                if (s->nodes[i].node == node)
                        return &s->nodes[i];
        if (GROW(s->nodes, s->a_nodes, s->n_nodes + 1) < 0)
                return NULL;
        s->nodes[s->n_nodes] = (struct node_status) { .node = node, .writer_node = NODE_NONE };
        return &s->nodes[s->n_nodes++];
}

static int node_cmp(const void *a, const void *b) {
        const struct node_status *x = a, *y = b;

        /* Blocks without a node (NODE_NONE) go last. */
        if (x->node == NODE_NONE || y->node == NODE_NONE)
                return (x->node == NODE_NONE) - (y->node == NODE_NONE);
        return (x->node > y->node) - (x->node < y->node);
}

static int load_policy(const char *path, struct status *s, struct policy **ret) {
        struct policy_error err = {};
        int r;

        r = policy_load(path, ret, &err);
        if (r >= 0 || r == -ENOMEM)
                return r;
        /* Status still helps with a broken file: say so and plan with the defaults. */
        if (r != -ENOENT) {
                if (err.line > 0)
                        r = asprintf(&s->policy_warning, "%s:%u: %s (using built-in defaults)", err.file, err.line,
                                     err.reason);
                else
                        r = asprintf(&s->policy_warning, "%s: %s (using built-in defaults)", path,
                                     err.reason[0] ? err.reason : strerror(-r));
                if (r < 0) {
                        s->policy_warning = NULL;
                        return -ENOMEM;
                }
        }
        return policy_new_default(ret);
}

static int collect_nodes(struct status *s, const struct topology *t, const struct policy *p) {
        struct block_set set = {};
        int r;

        for (size_t i = 0; i < t->n_nodes; i++) {
                const struct topo_node *tn = &t->nodes[i];
                struct node_status *ns = node_get(s, tn->id);

                if (!ns)
                        return -ENOMEM;
                ns->in_topology = true;
                ns->cpuless = !tn->cpus || cpuset_count(tn->cpus) == 0;
                if (tn->cpus)
                        r = cpulist_format(tn->cpus, &ns->cpus);
                else
                        r = (ns->cpus = strdup("")) ? 0 : -ENOMEM;
                if (r < 0)
                        return r;
                /* As the planner would choose them for a large batch. */
                r = plan_writer_cpus(t, p, tn->id, SIZE_MAX, MAX_WRITE_CPUS, ns->write_cpus, &ns->writer_node);
                ns->n_write_cpus = r < 0 ? 0 : r;
        }

        r = blocks_scan(s->root, s->block_size, BLOCK_STATE_UNKNOWN, &set);
        if (r < 0) {
                block_set_clear(&set);
                return r;
        }
        for (size_t i = 0; i < set.n; i++) {
                const struct mem_block *b = &set.blocks[i];
                struct node_status *ns = node_get(s, b->node < 0 ? NODE_NONE : b->node);

                if (!ns) {
                        block_set_clear(&set);
                        return -ENOMEM;
                }
                if (b->state == BLOCK_STATE_OFFLINE) {
                        ns->offline++;
                        continue;
                }
                if (b->state != BLOCK_STATE_ONLINE)
                        continue;
                ns->online++;
                /* An online block's valid_zones names the zone it is in. */
                if (b->valid_zones & VALID_MOVABLE)
                        ns->movable_bytes += s->block_size;
                else
                        ns->normal_bytes += s->block_size;
        }
        block_set_clear(&set);
        qsort(s->nodes, s->n_nodes, sizeof(*s->nodes), node_cmp);
        return 0;
}

static int read_optional(const char *root, const char *rel, char **ret) {
        int r = sysfs_read(root, rel, ret);

        /* Absent or unreadable (old kernel, module parameter not exported) is not an error. */
        if (r == -ENOENT || r == -EACCES || r == -EPERM || r == -ENOTDIR) {
                *ret = NULL;
                return 0;
        }
        return r;
}

/*
 * As root, talk to systemd on its private socket, like systemctl does: it
 * works without a D-Bus daemon (minimal images, early boot). Else the bus.
 */
static int open_systemd_bus(sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        if (geteuid() == 0) {
                r = sd_bus_new(&bus);
                if (r < 0)
                        return r;
                r = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
                if (r >= 0)
                        r = sd_bus_start(bus);
                if (r >= 0) {
                        *ret = bus;
                        return 0;
                }
                sd_bus_unref(bus);
                bus = NULL;
        }
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        *ret = bus;
        return 0;
}

static int query_daemon(struct daemon_status *d) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *path = NULL;
        sd_bus *bus = NULL;
        int r;

        r = open_systemd_bus(&bus);
        if (r < 0) {
                d->error = strdup("no system bus");
                return d->error ? 0 : -ENOMEM;
        }
        (void) sd_bus_set_method_call_timeout(bus, 2 * USEC_PER_SEC);
        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", "memonlined.service", &path);
        if (r < 0)
                goto finish;
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Unit",
                                       "ActiveState", &error, &d->active_state);
        if (r < 0 && r != -ENOMEM) {
                d->error = strdup(error.message ?: strerror(-r));
                r = d->error ? 0 : -ENOMEM;
                goto finish;
        }
        if (r < 0)
                goto finish;
        d->known = true;
        sd_bus_error_free(&error);
        /* A unit that is not loaded has no Service interface; ActiveState alone says enough. */
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Service",
                                       "StatusText", &error, &d->status_text);
        if (r == -ENOMEM)
                goto finish;
        r = 0;
finish:
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(bus);
        return r < 0 ? r : 0;
}

/* ---- output ----------------------------------------------------------------- */

static void json_opt_string(FILE *out, const char *key, const char *v) {
        fprintf(out, "\"%s\":", key);
        if (v)
                json_write_string(out, v);
        else
                fputs("null", out);
}

/* Three "key":string-or-null members, comma separated. */
static void json_three(FILE *out, const char *k1, const char *v1, const char *k2, const char *v2, const char *k3,
                       const char *v3) {
        json_opt_string(out, k1, v1);
        fputc(',', out);
        json_opt_string(out, k2, v2);
        fputc(',', out);
        json_opt_string(out, k3, v3);
}

static void print_json(FILE *out, const struct status *s) {
        fprintf(out, "{\"block_size\":%" PRIu64 ",\"nodes\":[", s->block_size);
        for (size_t i = 0; i < s->n_nodes; i++) {
                const struct node_status *n = &s->nodes[i];

                fputs(i ? ",{" : "{", out);
                if (n->node == NODE_NONE)
                        fputs("\"node\":null", out);
                else
                        fprintf(out, "\"node\":%d", n->node);
                fprintf(out, ",\"online_blocks\":%u,\"offline_blocks\":%u,\"normal_bytes\":%" PRIu64
                        ",\"movable_bytes\":%" PRIu64 ",\"cpuless\":%s,", n->online, n->offline, n->normal_bytes,
                        n->movable_bytes, n->cpuless ? "true" : "false");
                json_opt_string(out, "cpus", n->cpus);
                if (n->writer_node == NODE_NONE)
                        fputs(",\"writer_node\":null", out);
                else
                        fprintf(out, ",\"writer_node\":%d", n->writer_node);
                fputs(",\"writer_cpus\":[", out);
                for (int k = 0; k < n->n_write_cpus; k++)
                        fprintf(out, "%s%d", k ? "," : "", n->write_cpus[k]);
                fputs("]}", out);
        }
        fputs("],\"kernel\":{", out);
        json_three(out, "auto_online_blocks", s->auto_online, "online_policy", s->online_policy,
                   "auto_movable_ratio", s->auto_movable_ratio);
        fputs("},\"conflicts\":[", out);
        for (size_t i = 0; i < s->conflicts.n; i++) {
                const struct conflict *c = &s->conflicts.items[i];

                fputs(i ? ",{" : "{", out);
                json_three(out, "what", c->what, "where", c->where, "fix", c->fix);
                fputc('}', out);
        }
        fputs("],\"daemon\":{", out);
        json_three(out, "active_state", s->daemon.active_state, "status_text", s->daemon.status_text, "error",
                   s->daemon.error);
        fputs("}", out);
        if (s->policy_warning) {
                fputc(',', out);
                json_opt_string(out, "policy_warning", s->policy_warning);
        }
        fputs("}\n", out);
}

static void print_text(FILE *out, const struct status *s) {
        unsigned online = 0, offline = 0;
        char g1[32], g2[32];

        fprintf(out, "Memory blocks (block size %" PRIu64 " MiB):\n", s->block_size >> 20);
        fprintf(out, "%-5s %-12s %7s %8s %11s %12s %7s  %s\n", "NODE", "CPUS", "ONLINE", "OFFLINE", "NORMAL GiB",
                "MOVABLE GiB", "WRITER", "WRITE CPUS");
        for (size_t i = 0; i < s->n_nodes; i++) {
                const struct node_status *n = &s->nodes[i];
                char node[16], writer[16];

                online += n->online;
                offline += n->offline;
                if (n->node == NODE_NONE)
                        snprintf(node, sizeof(node), "?");
                else
                        snprintf(node, sizeof(node), "%d", n->node);
                if (n->writer_node == NODE_NONE)
                        snprintf(writer, sizeof(writer), "-");
                else
                        snprintf(writer, sizeof(writer), "%d", n->writer_node);
                fprintf(out, "%-5s %-12s %7u %8u %11s %12s %7s  ", node,
                        !n->in_topology ? "?" : n->cpuless ? "(CPU-less)" : n->cpus, n->online, n->offline,
                        format_fixed(g1, sizeof(g1), (double) n->normal_bytes / GIB, 2),
                        format_fixed(g2, sizeof(g2), (double) n->movable_bytes / GIB, 2), writer);
                for (int k = 0; k < n->n_write_cpus; k++)
                        fprintf(out, "%s%d", k ? "," : "", n->write_cpus[k]);
                fputs(n->n_write_cpus ? "\n" : "-\n", out);
        }
        fprintf(out, "%-5s %-12s %7u %8u\n", "total", "", online, offline);

        fputs("\nKernel policy:\n", out);
        fprintf(out, "  auto_online_blocks  %s\n", s->auto_online ?: "(unknown)");
        fprintf(out, "  online_policy       %s\n", s->online_policy ?: "(unknown)");
        fprintf(out, "  auto_movable_ratio  %s\n", s->auto_movable_ratio ?: "(unknown)");

        fputs("\nCompeting onliners:\n", out);
        if (s->conflicts.n == 0)
                fputs("  none found\n", out);
        for (size_t i = 0; i < s->conflicts.n; i++) {
                const struct conflict *c = &s->conflicts.items[i];

                fprintf(out, "  %s", c->what ?: "?");
                if (c->where)
                        fprintf(out, " (%s)", c->where);
                fputc('\n', out);
                if (c->fix)
                        fprintf(out, "    fix: %s\n", c->fix);
        }
        if (s->policy_warning)
                fprintf(out, "\nPolicy: %s\n", s->policy_warning);

        fputc('\n', out);
        if (s->daemon.known)
                fprintf(out, "daemon: %s%s%s\n", s->daemon.active_state,
                        s->daemon.status_text && *s->daemon.status_text ? " - " : "",
                        s->daemon.status_text ?: "");
        else
                fprintf(out, "daemon: unknown (%s)\n", s->daemon.error ?: "not queried");
}

static void help(FILE *out) {
        fputs("memonlined status [OPTIONS]\n\n"
              "Show memory blocks per node, the kernel's onlining policy, competing onliners\n"
              "and the running daemon, read from sysfs.\n\n"
              "     --json           One JSON object\n"
              "     --config=FILE    Policy for banned CPUs and worker counts (default " SYSCONFDIR "/memonlined.conf)\n"
              "     --rules-dir=DIR  Look for competing udev rules in DIR (repeatable)\n"
              "     --no-daemon      Do not ask systemd about memonlined.service\n"
              "     --sysfs-root=DIR Read sysfs from DIR instead of /sys\n"
              "  -h --help           Show this help\n", out);
}

int status_main(int argc, char **argv, const char *sysfs_root, FILE *out) {
        enum { ARG_JSON = 0x100, ARG_CONFIG, ARG_RULES_DIR, ARG_NO_DAEMON, ARG_SYSFS_ROOT };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h'           },
                { "json",      no_argument,       NULL, ARG_JSON      },
                { "config",    required_argument, NULL, ARG_CONFIG    },
                { "rules-dir", required_argument, NULL, ARG_RULES_DIR },
                { "no-daemon", no_argument,       NULL, ARG_NO_DAEMON },
                { "sysfs-root", required_argument, NULL, ARG_SYSFS_ROOT },
                {}
        };
        _cleanup_(status_done) struct status s = { .root = sysfs_root ?: "/sys" };
        _cleanup_topology_ struct topology *t = NULL;
        _cleanup_policy_ struct policy *p = NULL;
        _cleanup_free_ const char **dirs = NULL;
        const char *config = SYSCONFDIR "/memonlined.conf";
        size_t n_dirs = 0, a_dirs = 0;
        bool json = false, no_daemon = false;
        int opt, r;

        optind = 0;     /* full getopt reset: main() may have parsed its own options */
        while ((opt = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help(stdout);
                        return 0;
                case ARG_JSON:
                        json = true;
                        break;
                case ARG_CONFIG:
                        config = optarg;
                        break;
                case ARG_RULES_DIR:
                        if (GROW(dirs, a_dirs, n_dirs + 2) < 0) {
                                fprintf(stderr, "status: out of memory\n");
                                return -ENOMEM;
                        }
                        dirs[n_dirs++] = optarg;
                        dirs[n_dirs] = NULL;
                        break;
                case ARG_NO_DAEMON:
                        no_daemon = true;
                        break;
                case ARG_SYSFS_ROOT:
                        s.root = optarg;
                        break;
                default:
                        return 1;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "status: unexpected argument \"%s\"\n", argv[optind]);
                return 1;
        }

        r = topology_load(s.root, &t);
        if (r < 0) {
                fprintf(stderr, "status: cannot read the topology under %s: %s\n", s.root, strerror(-r));
                return r;
        }
        s.block_size = t->block_size;
        r = load_policy(config, &s, &p);
        if (r < 0) {
                fprintf(stderr, "status: cannot set up the policy: %s\n", strerror(-r));
                return r;
        }
        r = collect_nodes(&s, t, p);
        if (r < 0) {
                fprintf(stderr, "status: cannot read memory blocks under %s: %s\n", s.root, strerror(-r));
                return r;
        }
        if (read_optional(s.root, "devices/system/memory/auto_online_blocks", &s.auto_online) < 0 ||
            read_optional(s.root, "module/memory_hotplug/parameters/online_policy", &s.online_policy) < 0 ||
            read_optional(s.root, "module/memory_hotplug/parameters/auto_movable_ratio", &s.auto_movable_ratio) < 0) {
                fprintf(stderr, "status: cannot read the kernel's hotplug policy under %s\n", s.root);
                return -EIO;
        }
        r = coexist_check(s.root, dirs ?: coexist_default_rules_dirs, &s.conflicts);
        if (r < 0) {
                fprintf(stderr, "status: cannot check for competing onliners: %s\n", strerror(-r));
                return r;
        }
        if (no_daemon)
                s.daemon.error = strdup("not queried");
        else
                r = query_daemon(&s.daemon);
        if (r < 0 || (no_daemon && !s.daemon.error)) {
                fprintf(stderr, "status: out of memory\n");
                return -ENOMEM;
        }

        if (json)
                print_json(out, &s);
        else
                print_text(out, &s);
        if (fflush(out) != 0 || ferror(out)) {
                fprintf(stderr, "status: cannot write output: %m\n");
                return -EIO;
        }
        return 0;
}
