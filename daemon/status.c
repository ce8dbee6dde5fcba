/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <locale.h>
#include <stdarg.h>
#include <fcntl.h>
#include <unistd.h>
#include "cli-error.h"
#include "interface.h"
#include "metrics.h"
#include "pmem-scan.h"
#include "policy.h"
#include "status.h"
#include "status-render.h"
#include "term.h"
#include "topology.h"
#include "util.h"

/*
 * `memonlined status`: the command line and the exit status. What it
 * reads is in status-read.c, status-sections.c and status-progress.c;
 * what it prints in status-table.c, status-text.c and status-json.c.
 */


#define PROG "memonlined status"

struct options {
        const char *root;
        const char *config;
        bool config_explicit;
        const char **rules_dirs;
        size_t n_rules_dirs, a_rules_dirs;
        bool no_daemon, json, raw, noheadings, bytes, no_color, prometheus;
        bool tables[_STATUS_TABLE_MAX];         /* --tables: only these */
        bool only_tables;
        unsigned *columns[_STATUS_TABLE_MAX];
        size_t n_columns[_STATUS_TABLE_MAX];
};

static void options_done(struct options *o) {
        free(o->rules_dirs);
        for (unsigned t = 0; t < _STATUS_TABLE_MAX; t++)
                free(o->columns[t]);
}

/*
 * The policy for the writer CPUs. A refused file (or a missing one named
 * with --config, as the daemon has it) does not stop status: it plans
 * with the built-in defaults and says why in *ret_warning. 1 when the
 * file was refused, 0, -ENOMEM.
 */
static int load_policy(const char *path, bool explicit, struct policy **ret, char **ret_warning) {
        struct policy_error err = {};
        char message[POLICY_ERROR_MAX];
        int r;

        r = policy_load_or_default(path, explicit, ret, NULL, &err);
        if (r >= 0 || r == -ENOMEM)
                return r;
        /* policy_load() escaped the file name and reason: they are safe to print */
        policy_error_format(&err, path, r, message, sizeof(message));
        if (asprintf(ret_warning, "%s (using built-in defaults)", message) < 0) {
                *ret_warning = NULL;
                return -ENOMEM;
        }
        r = policy_new_default(ret);
        return r < 0 ? r : 1;
}

static void help(FILE *out) {
        fputs("memonlined status [OPTIONS]\n\n"
              "Show memory blocks per node, hotplug devices, dax devices, CXL regions and memdevs,\n"
              "nvdimm regions and namespaces, the kernel's onlining policy, competing onliners, the\n"
              "running batch and the daemon.\n\n"
              "  -o --output=[TABLE:]LIST  Columns of a table (nodes, devices, dax, cxl, memdevs, nvdimm,\n"
              "                            namespaces; nodes without TABLE:); +LIST adds to the\n"
              "                            defaults (repeatable)\n"
              "     --tables=LIST          Only these tables, nothing else (nodes,devices,dax,cxl,\n"
              "                            memdevs,nvdimm,namespaces)\n"
              "  -J --json                 One JSON document (every column unless -o)\n"
              "  -r --raw                  Only the tables, unaligned, for scripts\n"
              "     --prometheus           Blocks and memory per node, zone and device, and\n"
              "                            auto_online_blocks, as the daemon's metrics textfile\n"
              "                            has them (without its counters)\n"
              "  -n --noheadings           No column headings, no totals\n"
              "  -b --bytes                Sizes in bytes, not 1.5G\n"
              "     --no-color             No colour (SYSTEMD_COLORS, NO_COLOR and TERM=dumb count too)\n"
              "     --config=FILE          Policy for banned CPUs and worker counts\n"
              "                            (default " DEFAULT_CONFIG ")\n"
              "     --rules-dir=DIR        Look for competing udev rules in DIR (repeatable)\n"
              "     --no-daemon            Do not ask systemd about memonlined.service\n"
              "     --sysfs-root=DIR       Read sysfs from DIR instead of /sys\n"
              "  -V --version              Print the version\n"
              "  -h --help                 Show this help\n"
              "\n"
              "Exit status: 0 shown; 1 failure (no sysfs topology, output failed); 2 bad option\n"
              "or argument; 3 the policy file is refused (shown with the built-in defaults);\n"
              "64 partial: some table or section could not be read (see \"errors\" in --json).\n", out);
        status_columns_help(out);
}

enum {
        ARG_CONFIG = 0x100, ARG_RULES_DIR, ARG_NO_DAEMON, ARG_SYSFS_ROOT, ARG_TABLES, ARG_NO_COLOR, ARG_PROMETHEUS,
};

static const struct option long_options[] = {
        { "help",       no_argument,       NULL, 'h'            },
        { "version",    no_argument,       NULL, 'V'            },
        { "output",     required_argument, NULL, 'o'            },
        { "tables",     required_argument, NULL, ARG_TABLES     },
        { "json",       no_argument,       NULL, 'J'            },
        { "raw",        no_argument,       NULL, 'r'            },
        { "prometheus", no_argument,       NULL, ARG_PROMETHEUS },
        { "noheadings", no_argument,       NULL, 'n'            },
        { "bytes",      no_argument,       NULL, 'b'            },
        { "no-color",   no_argument,       NULL, ARG_NO_COLOR   },
        { "config",     required_argument, NULL, ARG_CONFIG     },
        { "rules-dir",  required_argument, NULL, ARG_RULES_DIR  },
        { "no-daemon",  no_argument,       NULL, ARG_NO_DAEMON  },
        { "sysfs-root", required_argument, NULL, ARG_SYSFS_ROOT },
        {}
};

/* -o [TABLE:]LIST. 0, -EINVAL (said), -ENOMEM. */
static int parse_output(struct options *o, const char *arg) {
        const char *colon = strchr(arg, ':'), *list = arg, *bad = NULL;
        int t = STATUS_TABLE_NODES, r;
        size_t bad_len = 0;

        if (colon) {
                t = status_table_from_name(arg, (size_t) (colon - arg));
                if (t < 0) {
                        cli_error(PROG, "unknown table \"%.*s\" in -o (nodes, devices, dax, cxl, memdevs, nvdimm, "
                                     "namespaces)", (int) (colon - arg), arg);
                        return -EINVAL;
                }
                list = colon + 1;
        }
        free(o->columns[t]);
        o->columns[t] = NULL;
        r = status_columns_parse(t, list, &o->columns[t], &o->n_columns[t], &bad, &bad_len);
        if (r == -EINVAL)
                cli_error(PROG, "unknown column \"%.*s\" of the %s table (--help lists them)", (int) bad_len, bad,
                             status_table_name(t));
        return r;
}

/* --tables nodes,dax. 0, -EINVAL (said). */
static int parse_tables(struct options *o, const char *arg) {
        for (const char *p = arg;;) {
                size_t len = strcspn(p, ",");
                int t = status_table_from_name(p, len);

                if (t < 0) {
                        cli_error(PROG, "unknown table \"%.*s\" (nodes, devices, dax, cxl, memdevs, nvdimm, namespaces)",
                                     (int) len, p);
                        return -EINVAL;
                }
                o->tables[t] = true;
                if (p[len] == '\0')
                        break;
                p += len + 1;
        }
        o->only_tables = true;
        return 0;
}

/* One option. 0, or < 0: a usage error, said, or -ENOMEM. */
static int parse_option(struct options *o, int opt, const char *arg) {
        switch (opt) {
        case 'o':            return parse_output(o, arg);
        case ARG_TABLES:     return parse_tables(o, arg);
        case 'J':            o->json = true; return 0;
        case 'r':            o->raw = true; return 0;
        case 'n':            o->noheadings = true; return 0;
        case 'b':            o->bytes = true; return 0;
        case ARG_NO_COLOR:   o->no_color = true; return 0;
        case ARG_PROMETHEUS: o->prometheus = true; return 0;
        case ARG_NO_DAEMON:  o->no_daemon = true; return 0;
        case ARG_SYSFS_ROOT: o->root = arg; return 0;
        case ARG_CONFIG:
                o->config = arg;
                o->config_explicit = true;
                return 0;
        case ARG_RULES_DIR:
                if (GROW(o->rules_dirs, o->a_rules_dirs, o->n_rules_dirs + 2) < 0)
                        return -ENOMEM;
                o->rules_dirs[o->n_rules_dirs++] = arg;
                o->rules_dirs[o->n_rules_dirs] = NULL;
                return 0;
        default:
                return -EINVAL;
        }
}

/* 1: go on; 0: done (help, version); < 0: usage error already said, or -ENOMEM. */
static int parse_argv(struct options *o, int argc, char **argv_in, FILE *out) {
        _cleanup_free_ char **argv = argv_named(argc, argv_in, "memonlined status");
        int opt, r;

        if (!argv)
                return -ENOMEM;
        optind = 0;     /* full getopt reset: main() may have parsed its own options */
        while ((opt = getopt_long(argc, argv, "+hVo:Jrnb", long_options, NULL)) >= 0) {
                if (opt == 'h') {
                        help(stdout);
                        return 0;
                }
                if (opt == 'V') {
                        fprintf(out, "memonlined %s\n", PACKAGE_VERSION);
                        return 0;
                }
                r = parse_option(o, opt, optarg);
                if (r < 0)
                        return r;
        }
        if (optind < argc) {
                cli_error(PROG, "unexpected argument \"%s\"", argv[optind]);
                return -EINVAL;
        }
        if (o->json + o->raw + o->prometheus > 1) {
                cli_error(PROG, "--json, --raw and --prometheus exclude each other");
                return -EINVAL;
        }
        return 1;
}

static int render(FILE *out, const struct options *o, const struct status_machine *m,
                  const struct status_sections *s) {
        bool text = !o->json && !o->raw;
        struct status_view v = {
                .style = {
                        .format = o->json ? TABLE_FORMAT_JSON : o->raw ? TABLE_FORMAT_RAW : TABLE_FORMAT_TEXT,
                        .noheadings = o->noheadings, .bytes = o->bytes,
                        .color = text && !o->no_color && colors_wanted(fileno(out)),
                        .utf8 = locale_is_utf8(),
                        .wrap_lists = text && fileno(out) >= 0 && isatty(fileno(out)) > 0,
                },
                .m = m,
                .only_tables = o->only_tables,
        };

        for (unsigned t = 0; t < _STATUS_TABLE_MAX; t++) {
                v.columns[t] = o->columns[t];
                v.n_columns[t] = o->n_columns[t];
                v.tables[t] = o->tables[t];
        }
        return o->json ? status_print_json(out, &v, s) : status_print_text(out, &v, s);
}

/* A table shown is incomplete: its source, or the dax devices it is built from, could not all be read. */
static bool tables_partial(const struct options *o, const struct status_machine *m) {
        bool devices = !o->only_tables || o->tables[STATUS_TABLE_DEVICES];
        bool dax = !o->only_tables || o->tables[STATUS_TABLE_DAX];
        bool cxl = !o->only_tables || o->tables[STATUS_TABLE_CXL];
        bool memdevs = !o->only_tables || o->tables[STATUS_TABLE_MEMDEVS];
        bool nd = !o->only_tables || o->tables[STATUS_TABLE_NVDIMM] || o->tables[STATUS_TABLE_NAMESPACES];
        bool dax_partial = m->dax_error < 0 || m->dax.n_unreadable > 0;
        bool cxl_partial = m->cxl_error < 0 || m->cxl.n_unreadable > 0;

        /* the hotplug devices take the dax devices in system-ram mode; a region's state is its dax device's;
         * a memdev's regions come from the region table */
        return (devices && (m->devices_error < 0 || dax_partial)) || (dax && dax_partial) ||
               (cxl && (cxl_partial || dax_partial)) ||
               (memdevs && (m->memdevs_error < 0 || m->memdevs.n_unreadable > 0 || cxl_partial)) ||
               (nd && (m->nd_error < 0 || m->nd.n_unreadable > 0));
}

/* What was read and the policy file's fate as an exit status: a refused file first, then anything unread. */
static int exit_status(const struct options *o, bool policy_refused, const struct status_machine *m,
                       const struct status_sections *s) {
        bool sections = !o->only_tables && !o->raw;

        if (policy_refused)
                return STATUS_EXIT_CONFIG;
        if (tables_partial(o, m) || (sections && status_sections_partial(s)))
                return STATUS_EXIT_PARTIAL;
        return STATUS_EXIT_SUCCESS;
}

/* The daemon holds auto_online_blocks while its saved value is in the runtime directory: 1, 0, -1 unknown. */
static int auto_online_held(const char *runtime_dir) {
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/auto_online_blocks", runtime_dir) < 0)
                return -1;
        if (faccessat(AT_FDCWD, path, F_OK, AT_EACCESS) >= 0)
                return 1;
        return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

/*
 * --prometheus: the daemon's textfile as sysfs shows it now, through the
 * same renderer, without the counters only the running daemon has. 1 when
 * the hotplug devices could not all be read (their series are incomplete).
 */
static int print_prometheus(FILE *out, struct topology *t, const char *runtime_dir) {
        _cleanup_(metrics_machine_done) struct metrics_machine m = {};
        _cleanup_(pmem_devices_clearp) struct pmem_devices dax = {};
        _cleanup_(memdev_set_clear) struct memdev_set devices = {};
        _cleanup_(ram_ranges_clear) struct ram_ranges fw = {};
        struct metrics metrics = { .machine = &m, .auto_online_taken = auto_online_held(runtime_dir) };
        int r, partial;

        /* the hotplug devices take the dax devices in system-ram mode */
        r = pmem_scan(t->sysfs_root, &dax);
        if (r >= 0 && t->block_size > 0)
                r = memdev_load(t->sysfs_root, t, &dax, NULL, &devices, &fw);
        if (r == -ENOMEM)
                return r;
        partial = r < 0 || dax.n_unreadable > 0;
        if (r >= 0 && t->block_size > 0)
                topology_set_devices(t, &devices, &fw);
        r = metrics_machine_read(t, &m);
        if (r >= 0)
                r = metrics_print(out, &metrics);
        return r < 0 ? r : partial;
}

int status_main(int argc, char **argv, const char *sysfs_root, FILE *out) {
        _cleanup_(options_done) struct options o = {
                .root = sysfs_root ?: "/sys",
                .config = DEFAULT_CONFIG,
        };
        _cleanup_(status_sections_done) struct status_sections s = { .batch = { .node = NODE_NONE } };
        _cleanup_(status_machine_done) struct status_machine m = {};
        _cleanup_topology_ struct topology *t = NULL;
        _cleanup_policy_ struct policy *p = NULL;
        const char *runtime_dir = getenv("MEMONLINED_RUNTIME_DIR");
        struct topology_error terr = {};
        int r, refused = 0;

        /* Character widths and what is printable, for the tables; this is the command's own process. */
        setlocale(LC_CTYPE, "");
        r = parse_argv(&o, argc, argv, out);
        if (r == -ENOMEM)
                cli_error(PROG, "out of memory");
        if (r <= 0)
                return r == 0 ? STATUS_EXIT_SUCCESS : r == -ENOMEM ? STATUS_EXIT_FAILURE : STATUS_EXIT_USAGE;

        r = topology_load_full(o.root, TOPO_LOAD_NEED_MEMORY, &t, &terr);
        if (r < 0) {
                cli_error(PROG, "cannot read the topology under %s: %s", o.root, terr.reason[0] ? terr.reason
                                                                                            : strerror(-r));
                return STATUS_EXIT_FAILURE;
        }
        runtime_dir = runtime_dir && *runtime_dir ? runtime_dir : RUNTIME_DIR_DEFAULT;
        if (o.prometheus) {
                r = print_prometheus(out, t, runtime_dir);
                if (r >= 0 && (fflush(out) != 0 || ferror(out)))
                        r = -EIO;
                if (r == -ENOMEM)
                        cli_error(PROG, "out of memory");
                else if (r < 0)
                        cli_error(PROG, "cannot write output: %s", strerror(-r));
                return r < 0 ? STATUS_EXIT_FAILURE : r > 0 ? STATUS_EXIT_PARTIAL : STATUS_EXIT_SUCCESS;
        }
        r = refused = load_policy(o.config, o.config_explicit, &p, &s.policy_warning);
        if (r >= 0)
                r = status_machine_read(t, p, &m);
        /* --raw and --tables show tables only: the sections are not read */
        if (r >= 0 && !o.only_tables && !o.raw)
                r = status_sections_read(o.root, o.rules_dirs ?: coexist_default_rules_dirs,
                                         runtime_dir, !o.no_daemon, &s);
        if (r >= 0)
                r = render(out, &o, &m, &s);
        if (r == -ENOMEM) {
                cli_error(PROG, "out of memory");
                return STATUS_EXIT_FAILURE;
        }
        if (r < 0 || fflush(out) != 0 || ferror(out)) {
                cli_error(PROG, "cannot write output: %s", strerror(r < 0 ? -r : errno ?: EIO));
                return STATUS_EXIT_FAILURE;
        }
        /* With --raw, --json or --tables the output has no place for the warning: say it here. */
        if (refused > 0 && (o.raw || o.json || o.only_tables))
                cli_error(PROG, "%s", s.policy_warning);
        return exit_status(&o, refused > 0, &m, &s);
}
