/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <locale.h>
#include <time.h>
#include <systemd/sd-id128.h>
#include "journal-report.h"
#include "journal-report-read.h"
#include "journal-report-render.h"
#include "cli-error.h"
#include "term.h"
#include "timeparse.h"
#include "util.h"

#define PROG "memonlined report"

/* The command line: what to read, what to show, how. */
struct options {
        struct jr_query query;
        const char **files;
        size_t n_files, a_files;
        struct jr_filter filter;
        bool failures, all_sources;
        /* output */
        bool json, json_lines, raw, noheadings, bytes, no_color;
        const char *output;             /* -o as given; parsed once --failures is known */
        unsigned *columns;
        size_t n_columns;
        const char *svg;                /* --svg FILE */
};

/* ---- options ------------------------------------------------------------- */

static void help(FILE *out) {
        fputs("memonlined report [OPTIONS]\n\n"
              "Summarise memonlined's batch, node, failure and device records from the journal.\n\n"
              "What to read:\n"
              "  -D --directory=DIR   The journal files in DIR (e.g. systemd-journal-remote output)\n"
              "     --file=FILE       This journal file (repeatable)\n"
              "  -S --since=TIME      Records at or after TIME, as journalctl takes it (\"2024-05-01 10:00:00\",\n"
              "                       \"2024-05-01T10:00\", \"2024-05-01 10:00 Europe/Berlin\", \"-1h30min\",\n"
              "                       \"1 hour ago\", \"today\", \"@EPOCH\")\n"
              "  -U --until=TIME      Records at or before TIME\n"
              "  -b --boot[=BOOT]     Only one boot of every machine in the journal: 0 (the default)\n"
              "                       the latest, -1 the one before, 1 the first, an ID, ID+N, ID-N\n"
              "     --host=NAME|ID    Only records from this _HOSTNAME or _MACHINE_ID\n"
              "     --node=N          Only batches that touched node N, and only node N's records\n"
              "     --device=DAX      Only batches and conversions of this dax device (e.g. dax0.0)\n"
              "     --all-sources     Also records that journald did not stamp as memonlined's\n"
              "\nWhat to show, and how:\n"
              "     --failures        List failed blocks instead of batches\n"
              "  -o --output=LIST     Columns of the batch table (or failure list); +LIST adds to the default\n"
              "  -J --json            One JSON document: batches, nodes, hosts, conversions (or failures)\n"
              "     --json-lines      One JSON object per batch (or failure) per line, records nested\n"
              "  -r --raw             Only the batch table (or failure list), unaligned, for scripts\n"
              "  -n --noheadings      No column headings, no summaries\n"
              "     --bytes           Sizes in bytes, not 1.5G\n"
              "     --svg=FILE        Also draw the batches, blocks onlined per node over time, in FILE\n"
              "     --no-color        No colour (SYSTEMD_COLORS, NO_COLOR and TERM=dumb count too)\n"
              "     --no-pager        Accepted for journalctl habits; output is never paged\n"
              "  -V --version         Print the version\n"
              "  -h --help            Show this help\n", out);
        jr_columns_help(out);
}

static void options_done(struct options *o) {
        free(o->files);
        free(o->columns);
}

enum {
        ARG_FILE = 0x100, ARG_HOST, ARG_NODE, ARG_DEVICE, ARG_JSON_LINES, ARG_FAILURES,
        ARG_NO_COLOR, ARG_NO_PAGER, ARG_ALL_SOURCES, ARG_BYTES, ARG_SVG,
};

static const struct option long_options[] = {
        { "help",        no_argument,       NULL, 'h'             },
        { "version",     no_argument,       NULL, 'V'             },
        { "directory",   required_argument, NULL, 'D'             },
        { "file",        required_argument, NULL, ARG_FILE        },
        { "since",       required_argument, NULL, 'S'             },
        { "until",       required_argument, NULL, 'U'             },
        { "boot",        optional_argument, NULL, 'b'             },
        { "host",        required_argument, NULL, ARG_HOST        },
        { "node",        required_argument, NULL, ARG_NODE        },
        { "device",      required_argument, NULL, ARG_DEVICE      },
        { "all-sources", no_argument,       NULL, ARG_ALL_SOURCES },
        { "failures",    no_argument,       NULL, ARG_FAILURES    },
        { "output",      required_argument, NULL, 'o'             },
        { "json",        no_argument,       NULL, 'J'             },
        { "json-lines",  no_argument,       NULL, ARG_JSON_LINES  },
        { "raw",         no_argument,       NULL, 'r'             },
        { "noheadings",  no_argument,       NULL, 'n'             },
        { "bytes",       no_argument,       NULL, ARG_BYTES       },
        { "svg",         required_argument, NULL, ARG_SVG         },
        { "no-color",    no_argument,       NULL, ARG_NO_COLOR    },
        { "no-pager",    no_argument,       NULL, ARG_NO_PAGER    },
        {}
};

static uint64_t realtime_now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

/* What to read: -D, --file, --since, --until, -b, --host, --node, --device. 0, or -EINVAL (said). */
static int parse_query_option(struct options *o, int opt, const char *arg, char **argv, int argc) {
        struct jr_query *q = &o->query;
        unsigned u;
        int r;

        switch (opt) {
        case 'D':
                q->directory = arg;
                return 0;
        case ARG_FILE:
                if (GROW(o->files, o->a_files, o->n_files + 2) < 0)
                        return -ENOMEM;
                o->files[o->n_files++] = arg;
                o->files[o->n_files] = NULL;
                return 0;
        case 'S':
        case 'U':
                r = parse_timestamp_usec(arg, realtime_now(), opt == 'S' ? &q->since : &q->until);
                if (r < 0)
                        cli_error(PROG, "cannot parse %s time \"%s\"", opt == 'S' ? "--since" : "--until", arg);
                return r < 0 ? -EINVAL : 0;
        case 'b':
                /* Like journalctl: "-b ID" and "-b -1" with a separate word, as well as "--boot=ID". */
                if (!arg && optind < argc && jr_boot_spec_parse(argv[optind], &q->boot) >= 0) {
                        optind++;
                        return 0;
                }
                r = jr_boot_spec_parse(arg, &q->boot);
                if (r < 0)
                        cli_error_errno(PROG, r, "cannot use boot \"%s\": %m", arg);
                return r < 0 ? -EINVAL : 0;
        case ARG_HOST:
                q->host = arg;
                return 0;
        case ARG_NODE:
                if (parse_unsigned(arg, &u) < 0 || u > INT32_MAX) {
                        cli_error(PROG, "invalid --node \"%s\"", arg);
                        return -EINVAL;
                }
                o->filter.node = (int) u;
                return 0;
        case ARG_DEVICE:
                o->filter.device = arg;
                return 0;
        default:
                return -EINVAL;
        }
}

/* What to show and how. 1: not one of these. */
static int parse_output_option(struct options *o, int opt, const char *arg) {
        switch (opt) {
        case ARG_ALL_SOURCES: o->all_sources = true; break;
        case ARG_FAILURES:    o->failures = true; break;
        case 'o':             o->output = arg; break;
        case 'J':             o->json = true; break;
        case ARG_JSON_LINES:  o->json_lines = true; break;
        case 'r':             o->raw = true; break;
        case 'n':             o->noheadings = true; break;
        case ARG_BYTES:       o->bytes = true; break;
        case ARG_SVG:         o->svg = arg; break;
        case ARG_NO_COLOR:    o->no_color = true; break;
        case ARG_NO_PAGER:    break;
        default:              return 1;
        }
        return 0;
}

/* The options that exclude each other, and -o against the table it is for. */
static int check_options(struct options *o) {
        const char *bad = NULL;
        size_t bad_len = 0;
        int r;

        if (o->query.directory && o->n_files > 0) {
                cli_error(PROG, "--directory and --file exclude each other");
                return -EINVAL;
        }
        if (o->query.since > o->query.until) {
                cli_error(PROG, "--since is later than --until");
                return -EINVAL;
        }
        if (o->svg && o->failures) {
                cli_error(PROG, "--svg draws batches; it excludes --failures");
                return -EINVAL;
        }
        if (o->json + o->json_lines + o->raw > 1) {
                cli_error(PROG, "--json, --json-lines and --raw exclude each other");
                return -EINVAL;
        }
        if (o->output) {
                r = jr_columns_parse(o->failures, o->output, &o->columns, &o->n_columns, &bad, &bad_len);
                if (r == -EINVAL)
                        cli_error(PROG, "unknown column \"%.*s\" (--help lists them)", (int) bad_len, bad);
                if (r < 0)
                        return r;
        }
        o->query.files = o->files;
        return 0;
}

/* 1: go on; 0: done (help, version); < 0: usage error already printed. */
static int parse_argv(struct options *o, int argc, char **argv_in, FILE *out) {
        _cleanup_free_ char **argv = argv_named(argc, argv_in, "memonlined report");
        int opt, r;

        if (!argv)
                return -ENOMEM;
        optind = 0;     /* full getopt reset: main() may have parsed its own options */
        while ((opt = getopt_long(argc, argv, "+hVD:S:U:b::o:Jrn", long_options, NULL)) >= 0) {
                if (opt == 'h') {
                        help(stdout);
                        return 0;
                }
                if (opt == 'V') {
                        fprintf(out, "memonlined %s\n", PACKAGE_VERSION);
                        return 0;
                }
                if (opt == '?')
                        return -EINVAL;
                r = parse_output_option(o, opt, optarg);
                if (r > 0)
                        r = parse_query_option(o, opt, optarg, argv, argc);
                if (r < 0)
                        return r;
        }
        if (optind < argc) {
                cli_error(PROG, "unexpected argument \"%s\"", argv[optind]);
                return -EINVAL;
        }
        r = check_options(o);
        return r < 0 ? r : 1;
}

static void log_read_error(const struct jr_query *q, const char *what, int r) {
        if (r == -ENOMEM)
                cli_oom(PROG);
        else if (r == -ENODATA && streq(what, "find the boot"))
                cli_error(PROG, "no such boot in the journal");
        else if (startswith(what, "open") && q->files && q->files[0])
                cli_error_errno(PROG, r, "cannot open journal file %s: %m", q->files[0]);
        else if (startswith(what, "open") && q->directory)
                cli_error_errno(PROG, r, "cannot open journal directory %s: %m", q->directory);
        else
                cli_error_errno(PROG, r, "cannot %s: %m", what);
}

/*
 * Like journalctl: no readable journal file is an error, some is a
 * warning (and the exit status says partial); with --file only the
 * readable files are opened.
 */
static int check_files(struct options *o, struct jr_files *files, bool *ret_partial) {
        struct jr_query *q = &o->query;
        const char *source = q->directory ?: "the system journal";
        int r;

        r = jr_files_check(q, files);
        if (r == -ENOMEM)
                return cli_oom(PROG);
        if (r < 0)
                return cli_error_errno(PROG, r, "cannot read %s%s: %m", q->directory ? "journal directory " : "", source);
        if (files->n_readable == 0 && files->n_denied + files->n_failed > 0) {
                cli_error_errno(PROG, files->first_error, "no journal files were opened due to %s (%s: %m)",
                                   files->n_denied > 0 ? "insufficient permissions" : "errors", files->first_bad);
                if (files->n_denied > 0 && !q->directory && !o->n_files)
                        cli_error(PROG, "users in the groups 'adm' and 'systemd-journal' can read the system journal");
                return files->first_error;
        }
        if (files->n_denied + files->n_failed > 0) {
                cli_error_errno(PROG, files->first_error,
                                   "%zu journal file%s not opened due to %s (%s: %m); the report covers the other %zu",
                                   files->n_denied + files->n_failed,
                                   files->n_denied + files->n_failed == 1 ? " was" : "s were",
                                   files->n_denied > 0 ? "insufficient permissions" : "errors", files->first_bad,
                                   files->n_readable);
                *ret_partial = true;
        } else if (files->n_readable == 0)
                cli_error(NULL, "No journal files were found.");
        if (o->n_files > 0)
                q->files = (const char *const *) files->readable;
        return 0;
}

static int read_records(const struct options *o, struct jr_records *rec) {
        const char *what = NULL;
        int r;

        r = jr_records_init(rec);
        if (r < 0)
                return cli_error_errno(PROG, r, "cannot create the C locale: %m");
        rec->all_sources = o->all_sources;
        r = jr_read_journal(&o->query, rec, &what);
        if (r < 0) {
                log_read_error(&o->query, what, r);
                return r;
        }
        if (rec->n_untrusted > 0)
                cli_error(PROG, "left out %" PRIu64 " record%s with memonlined's MESSAGE_IDs that journald did not stamp "
                             "as memonlined's (--all-sources includes them)", rec->n_untrusted,
                             rec->n_untrusted == 1 ? "" : "s");
        r = jr_records_finish(rec);
        return r < 0 ? cli_oom(PROG) : 0;
}

static int print_report(FILE *out, const struct options *o, const struct jr_view *v) {
        ssize_t n;

        if (o->failures) {
                n = o->json_lines ? (ssize_t) jr_print_failures_json(out, v) : jr_print_failures(out, v);
                if (n == 0 && v->format == JR_FORMAT_TEXT && !o->json_lines)
                        cli_error(NULL, "No failed memory blocks found.");
                return n < 0 ? (int) n : 0;
        }
        if (o->json_lines) {
                jr_print_json_lines(out, v);
                return 0;
        }
        if (v->format == JR_FORMAT_TEXT && v->n_vis == 0 && v->records->n_devices == 0) {
                cli_error(NULL, "No memonlined records found.");
                return 0;
        }
        return jr_print_tables(out, v);
}

static int write_svg(const char *path, const struct jr_view *v) {
        _cleanup_fclose_ FILE *f = fopen(path, "we");
        int r;

        if (!f) {
                cli_error(PROG, "cannot write %s: %m", path);
                return -EIO;
        }
        r = jr_write_svg(f, v);
        if (r < 0)
                return r;
        if (fflush(f) != 0 || ferror(f)) {
                cli_error(PROG, "cannot write %s: %m", path);
                return -EIO;
        }
        return 0;
}

static int render(FILE *out, const struct options *o, const struct jr_records *rec) {
        _cleanup_free_ size_t *vis = NULL;
        struct jr_view view = {
                .records = rec, .filter = &o->filter,
                .format = o->json ? JR_FORMAT_JSON : o->raw ? JR_FORMAT_RAW : JR_FORMAT_TEXT,
                .noheadings = o->noheadings, .bytes = o->bytes,
                .color = !o->no_color && !o->json && !o->raw && colors_wanted(fileno(out)),
                .utf8 = locale_is_utf8(),
                .columns = o->columns, .n_columns = o->n_columns,
        };
        int r = 0;

        if (!o->failures)
                r = jr_visible_batches(rec, &o->filter, &vis, &view.n_vis);
        view.vis = vis;
        if (r >= 0)
                r = print_report(out, o, &view);
        if (r >= 0 && o->svg)
                r = write_svg(o->svg, &view);
        if (r == -EIO)
                return r;       /* said */
        if (r == -ENOMEM)
                return cli_oom(PROG);
        if (r < 0 || fflush(out) != 0 || ferror(out)) {
                cli_error_errno(PROG, r < 0 ? r : errno, "cannot write output: %m");
                return -EIO;
        }
        return 0;
}

int journal_report_main(int argc, char **argv, FILE *out) {
        _cleanup_(options_done) struct options o = {
                .query.until = UINT64_MAX,
                .filter.node = -1,
        };
        _cleanup_(jr_files_done) struct jr_files files = {};
        _cleanup_(jr_records_done) struct jr_records rec = {};
        bool partial = false;
        int r;

        /* Character widths and what is printable, for the tables; this is the command's own process. */
        setlocale(LC_CTYPE, "");
        r = parse_argv(&o, argc, argv, out);
        if (r == -ENOMEM) {
                cli_oom(PROG);
                return REPORT_EXIT_FAILURE;
        }
        if (r <= 0)
                return r < 0 ? REPORT_EXIT_USAGE : REPORT_EXIT_SUCCESS;
        if (check_files(&o, &files, &partial) < 0 || read_records(&o, &rec) < 0 || render(out, &o, &rec) < 0)
                return REPORT_EXIT_FAILURE;
        return partial ? REPORT_EXIT_PARTIAL : REPORT_EXIT_SUCCESS;
}
