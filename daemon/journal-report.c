/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
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
              "  -b --boot[=ID|0]     Only this boot (0: the current boot)\n"
              "     --host=NAME       Only records from this _HOSTNAME\n"
              "     --node=N          Only batches that touched node N, and only node N's records\n"
              "     --device=DAX      Only batches and conversions of this dax device (e.g. dax0.0)\n"
              "     --json            One JSON object per batch, per line\n"
              "     --failures        List failed blocks instead of batches\n"
              "     --all-sources     Also records that journald did not stamp as memonlined's\n"
              "     --no-color        No colour (also NO_COLOR=1)\n"
              "     --no-pager        Accepted for journalctl habits; output is never paged\n"
              "  -h --help            Show this help\n", out);
}

static int parse_boot(struct options *o, const char *s) {
        int r;

        if (streq(s, "0"))
                r = sd_id128_get_boot(&o->query.boot);
        else
                r = sd_id128_from_string(s, &o->query.boot);
        if (r < 0)
                return r;
        o->query.have_boot = true;
        return 0;
}

static void options_done(struct options *o) {
        free(o->files);
}

/* 1: go on; 0: done (help); < 0: usage error already printed. */
static int parse_argv(struct options *o, int argc, char **argv) {
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
        struct jr_query *q = &o->query;
        struct timespec ts;
        uint64_t now;
        unsigned u;
        int opt, r;

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
                                fprintf(stderr, "report: cannot parse %s time \"%s\"\n",
                                        opt == 'S' ? "--since" : "--until", optarg);
                                return -EINVAL;
                        }
                        break;
                case 'b': {
                        /* Like journalctl: "--boot ID" with a separate word as well as "--boot=ID". */
                        const char *arg = optarg;

                        if (!arg && optind < argc && argv[optind][0] != '-')
                                arg = argv[optind++];
                        r = parse_boot(o, arg ?: "0");
                        if (r < 0) {
                                fprintf(stderr, "report: cannot use boot \"%s\": %s\n", arg ?: "0", strerror(-r));
                                return -EINVAL;
                        }
                        break;
                }
                case ARG_HOST:
                        q->host = optarg;
                        break;
                case ARG_NODE:
                        if (parse_unsigned(optarg, &u) < 0 || u > INT32_MAX) {
                                fprintf(stderr, "report: invalid --node \"%s\"\n", optarg);
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
                fprintf(stderr, "report: unexpected argument \"%s\"\n", argv[optind]);
                return -EINVAL;
        }
        if (q->directory && o->n_files > 0) {
                fprintf(stderr, "report: --directory and --file exclude each other\n");
                return -EINVAL;
        }
        if (q->since > q->until) {
                fprintf(stderr, "report: --since is later than --until\n");
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
                fprintf(stderr, "report: out of memory\n");
        else if (startswith(what, "open") && q->files && q->files[0])
                fprintf(stderr, "report: cannot open journal file %s: %s\n", q->files[0], strerror(-r));
        else if (startswith(what, "open") && q->directory)
                fprintf(stderr, "report: cannot open journal directory %s: %s\n", q->directory, strerror(-r));
        else
                fprintf(stderr, "report: cannot %s: %s\n", what, strerror(-r));
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

int journal_report_main(int argc, char **argv, FILE *out) {
        _cleanup_(options_done) struct options o = {
                .query.until = UINT64_MAX,
                .filter.node = -1,
        };
        _cleanup_(jr_records_done) struct jr_records rec = {};
        _cleanup_free_ size_t *vis = NULL;
        struct jr_view view = {};
        const char *what = NULL;
        int r;

        r = parse_argv(&o, argc, argv);
        if (r == -ENOMEM) {
                fprintf(stderr, "report: out of memory\n");
                return r;
        }
        if (r <= 0)
                return r < 0 ? 1 : 0;

        r = jr_records_init(&rec);
        if (r < 0) {
                fprintf(stderr, "report: cannot create the C locale: %s\n", strerror(-r));
                return r;
        }
        rec.all_sources = o.all_sources;
        r = jr_read_journal(&o.query, &rec, &what);
        if (r < 0) {
                log_read_error(&o.query, what, r);
                return r;
        }
        if (rec.n_untrusted > 0)
                fprintf(stderr, "report: left out %" PRIu64 " record%s with memonlined's MESSAGE_IDs that journald did "
                        "not stamp as memonlined's (--all-sources includes them)\n", rec.n_untrusted,
                        rec.n_untrusted == 1 ? "" : "s");
        r = jr_records_finish(&rec);
        if (r >= 0 && !o.failures)
                r = jr_visible_batches(&rec, &o.filter, &vis, &view.n_vis);
        if (r >= 0) {
                view = (struct jr_view) {
                        .records = &rec, .filter = &o.filter, .vis = vis, .n_vis = view.n_vis,
                        .color = color_wanted(&o, out), .utf8 = locale_is_utf8(),
                };
                r = print_report(out, &o, &view);
        }
        if (r < 0) {
                fprintf(stderr, "report: out of memory\n");
                return r;
        }
        if (fflush(out) != 0 || ferror(out)) {
                fprintf(stderr, "report: cannot write output: %m\n");
                return -EIO;
        }
        return 0;
}
