/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <time.h>
#include <systemd/sd-id128.h>
#include "journal-report.h"
#include "journal-report-read.h"
#include "journal-report-render.h"
#include "timeparse.h"
#include "util.h"

_printf_(1, 2) static void report_error(const char *format, ...) {
        int saved = errno;      /* for %m */
        va_list ap;

        fputs("memonlined report: ", stderr);
        va_start(ap, format);
        errno = saved;
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputc('\n', stderr);
}

static int log_oom(void) {
        report_error("out of memory");
        return -ENOMEM;
}

/* The command line: what to read, what to show, how. */
struct options {
        struct jr_query query;
        const char **files;
        size_t n_files, a_files;
        struct jr_filter filter;
        bool json, failures, no_color, all_sources;
};

/* ---- options ------------------------------------------------------------- */

static void help(FILE *out) {
        fputs("memonlined report [OPTIONS]\n\n"
              "Summarise memonlined's batch, node, failure and device records from the journal.\n\n"
              "  -D --directory=DIR   Read the journal files in DIR (e.g. systemd-journal-remote output)\n"
              "     --file=FILE       Read this journal file (repeatable)\n"
              "  -S --since=TIME      Records at or after TIME, as journalctl takes it (\"2024-05-01 10:00:00\",\n"
              "                       \"2024-05-01T10:00\", \"-1h30min\", \"1 hour ago\", \"today\", \"@EPOCH\")\n"
              "  -U --until=TIME      Records at or before TIME\n"
              "  -b --boot[=[ID][±N]] Only one boot: 0 (the default) the latest, -1 the one before,\n"
              "                       1 the first, ID or ID±N; of every machine in the journal\n"
              "     --host=NAME|ID    Only records from this _HOSTNAME or _MACHINE_ID\n"
              "     --node=N          Only batches that touched node N, and only node N's records\n"
              "     --device=DAX      Only batches and conversions of this dax device (e.g. dax0.0)\n"
              "     --json            One JSON object per batch, per line\n"
              "     --failures        List failed blocks instead of batches\n"
              "     --all-sources     Also records that journald did not stamp as memonlined's\n"
              "     --no-color        No colour (also NO_COLOR=1)\n"
              "     --no-pager        Accepted for journalctl habits; output is never paged\n"
              "  -h --help            Show this help\n", out);
}

static void options_done(struct options *o) {
        free(o->files);
}

/* 1: go on; 0: done (help); < 0: usage error already printed. */
static int parse_argv(struct options *o, int argc, char **argv_in) {
        enum {
                ARG_FILE = 0x100, ARG_HOST, ARG_NODE, ARG_DEVICE, ARG_JSON, ARG_FAILURES,
                ARG_NO_COLOR, ARG_NO_PAGER, ARG_ALL_SOURCES,
        };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h'          },
                { "directory", required_argument, NULL, 'D'          },
                { "file",      required_argument, NULL, ARG_FILE     },
                { "since",     required_argument, NULL, 'S'          },
                { "until",     required_argument, NULL, 'U'          },
                { "boot",      optional_argument, NULL, 'b'          },
                { "host",      required_argument, NULL, ARG_HOST     },
                { "node",      required_argument, NULL, ARG_NODE     },
                { "device",    required_argument, NULL, ARG_DEVICE   },
                { "json",      no_argument,       NULL, ARG_JSON     },
                { "failures",  no_argument,       NULL, ARG_FAILURES },
                { "no-color",  no_argument,       NULL, ARG_NO_COLOR },
                { "no-pager",  no_argument,       NULL, ARG_NO_PAGER },
                { "all-sources", no_argument,     NULL, ARG_ALL_SOURCES },
                {}
        };
        /* getopt names argv[0] in its messages: the subcommand as the user typed it */
        _cleanup_free_ char **argv = calloc(argc + 1, sizeof(char *));
        struct jr_query *q = &o->query;
        struct timespec ts;
        uint64_t now;
        unsigned u;
        int opt, r;

        if (!argv)
                return -ENOMEM;
        memcpy(argv, argv_in, argc * sizeof(char *));
        argv[0] = (char *) "memonlined report";
        clock_gettime(CLOCK_REALTIME, &ts);
        now = (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;

        optind = 0;     /* full getopt reset: main() may have parsed its own options */
        while ((opt = getopt_long(argc, argv, "+hD:S:U:b::", options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'D':
                        q->directory = optarg;
                        break;
                case ARG_FILE:
                        if (GROW(o->files, o->a_files, o->n_files + 2) < 0)
                                return -ENOMEM;
                        o->files[o->n_files++] = optarg;
                        o->files[o->n_files] = NULL;
                        break;
                case 'S':
                case 'U':
                        r = parse_timestamp_usec(optarg, now, opt == 'S' ? &q->since : &q->until);
                        if (r < 0) {
                                report_error("cannot parse %s time \"%s\"",
                                        opt == 'S' ? "--since" : "--until", optarg);
                                return -EINVAL;
                        }
                        break;
                case 'b':
                        /* Like journalctl: "-b ID" and "-b -1" with a separate word, as well as "--boot=ID". */
                        if (!optarg && optind < argc && jr_boot_spec_parse(argv[optind], &q->boot) >= 0) {
                                optind++;
                                break;
                        }
                        r = jr_boot_spec_parse(optarg, &q->boot);
                        if (r < 0) {
                                report_error("cannot use boot \"%s\": %s", optarg, strerror(-r));
                                return -EINVAL;
                        }
                        break;
                case ARG_HOST:
                        q->host = optarg;
                        break;
                case ARG_NODE:
                        if (parse_unsigned(optarg, &u) < 0 || u > INT32_MAX) {
                                report_error("invalid --node \"%s\"", optarg);
                                return -EINVAL;
                        }
                        o->filter.node = (int) u;
                        break;
                case ARG_DEVICE:
                        o->filter.device = optarg;
                        break;
                case ARG_JSON:
                        o->json = true;
                        break;
                case ARG_FAILURES:
                        o->failures = true;
                        break;
                case ARG_NO_COLOR:
                        o->no_color = true;
                        break;
                case ARG_NO_PAGER:
                        break;
                case ARG_ALL_SOURCES:
                        o->all_sources = true;
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                report_error("unexpected argument \"%s\"", argv[optind]);
                return -EINVAL;
        }
        if (q->directory && o->n_files > 0) {
                report_error("--directory and --file exclude each other");
                return -EINVAL;
        }
        if (q->since > q->until) {
                report_error("--since is later than --until");
                return -EINVAL;
        }
        q->files = o->files;
        return 1;
}

static bool locale_is_utf8(void) {
        locale_t l = newlocale(LC_CTYPE_MASK, "", (locale_t) 0);
        const char *cs;
        bool utf8;

        /* Ask the environment's locale without touching the process-wide one. */
        if (l == (locale_t) 0)
                return streq(nl_langinfo(CODESET), "UTF-8");
        cs = nl_langinfo_l(CODESET, l);
        utf8 = cs && (streq(cs, "UTF-8") || streq(cs, "utf8"));
        freelocale(l);
        return utf8;
}

static bool color_wanted(const struct options *o, FILE *out) {
        const char *nc = getenv("NO_COLOR");

        return !o->no_color && !(nc && *nc) && isatty(fileno(out)) && !streq(getenv("TERM") ?: "", "dumb");
}

static void log_read_error(const struct jr_query *q, const char *what, int r) {
        if (r == -ENOMEM)
                log_oom();
        else if (r == -ENODATA && streq(what, "find the boot"))
                report_error("no such boot in the journal");
        else if (startswith(what, "open") && q->files && q->files[0])
                report_error("cannot open journal file %s: %s", q->files[0], strerror(-r));
        else if (startswith(what, "open") && q->directory)
                report_error("cannot open journal directory %s: %s", q->directory, strerror(-r));
        else
                report_error("cannot %s: %s", what, strerror(-r));
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
                return log_oom();
        if (r < 0) {
                report_error("cannot read %s%s: %s", q->directory ? "journal directory " : "", source, strerror(-r));
                return r;
        }
        if (files->n_readable == 0 && files->n_denied + files->n_failed > 0) {
                report_error("no journal files were opened due to %s (%s: %s)",
                             files->n_denied > 0 ? "insufficient permissions" : "errors", files->first_bad,
                             strerror(-files->first_error));
                if (files->n_denied > 0 && !q->directory && !o->n_files)
                        report_error("users in the groups 'adm' and 'systemd-journal' can read the system journal");
                return files->first_error;
        }
        if (files->n_denied + files->n_failed > 0) {
                report_error("%zu journal file%s not opened due to %s (%s: %s); the report covers the other %zu",
                             files->n_denied + files->n_failed, files->n_denied + files->n_failed == 1 ? " was" : "s were",
                             files->n_denied > 0 ? "insufficient permissions" : "errors", files->first_bad,
                             strerror(-files->first_error), files->n_readable);
                *ret_partial = true;
        } else if (files->n_readable == 0)
                fprintf(stderr, "No journal files were found.\n");
        if (o->n_files > 0)
                q->files = (const char *const *) files->readable;
        return 0;
}

static int read_records(const struct options *o, struct jr_records *rec) {
        const char *what = NULL;
        int r;

        r = jr_records_init(rec);
        if (r < 0) {
                report_error("cannot create the C locale: %s", strerror(-r));
                return r;
        }
        rec->all_sources = o->all_sources;
        r = jr_read_journal(&o->query, rec, &what);
        if (r < 0) {
                log_read_error(&o->query, what, r);
                return r;
        }
        if (rec->n_untrusted > 0)
                report_error("left out %" PRIu64 " record%s with memonlined's MESSAGE_IDs that journald did not stamp "
                             "as memonlined's (--all-sources includes them)", rec->n_untrusted,
                             rec->n_untrusted == 1 ? "" : "s");
        r = jr_records_finish(rec);
        return r < 0 ? log_oom() : 0;
}

static int print_report(FILE *out, const struct options *o, const struct jr_view *v) {
        if (o->failures) {
                ssize_t n = o->json ? (ssize_t) jr_print_failures_json(out, v) : jr_print_failures(out, v);

                if (n < 0)
                        return (int) n;
                if (n == 0 && !o->json)
                        fprintf(stderr, "No failed memory blocks found.\n");
                return 0;
        }
        if (o->json) {
                jr_print_json_lines(out, v);
                return 0;
        }
        if (v->n_vis == 0 && v->records->n_devices == 0) {
                fprintf(stderr, "No memonlined records found.\n");
                return 0;
        }
        return jr_print_table(out, v);
}

static int render(FILE *out, const struct options *o, const struct jr_records *rec) {
        _cleanup_free_ size_t *vis = NULL;
        struct jr_view view = {
                .records = rec, .filter = &o->filter, .color = color_wanted(o, out), .utf8 = locale_is_utf8(),
        };
        int r = 0;

        if (!o->failures)
                r = jr_visible_batches(rec, &o->filter, &vis, &view.n_vis);
        view.vis = vis;
        if (r >= 0)
                r = print_report(out, o, &view);
        if (r < 0)
                return log_oom();
        if (fflush(out) != 0 || ferror(out)) {
                report_error("cannot write output: %m");
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

        r = parse_argv(&o, argc, argv);
        if (r == -ENOMEM) {
                log_oom();
                return REPORT_EXIT_FAILURE;
        }
        if (r <= 0)
                return r < 0 ? REPORT_EXIT_USAGE : REPORT_EXIT_SUCCESS;
        if (check_files(&o, &files, &partial) < 0 || read_records(&o, &rec) < 0 || render(out, &o, &rec) < 0)
                return REPORT_EXIT_FAILURE;
        return partial ? REPORT_EXIT_PARTIAL : REPORT_EXIT_SUCCESS;
}
