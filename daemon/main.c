/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memonlined: onlines hot-added memory blocks, node-aware, with timing
 * records in the journal. main.c holds the options and the short-lived
 * modes; loop.c holds the daemon's event loop, the stages their own files.
 */
#include <getopt.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/mman.h>
#include "cli-error.h"
#include "coexist.h"
#include "instance.h"
#include "interface.h"
#include "journal-report.h"
#include "loop.h"
#include "policy.h"
#include "progress.h"
#include "report.h"
#include "runner.h"
#include "status.h"
#include "util.h"


/* Exit codes, as memonlined(8) lists them; 64 as chmem(8) has it. */
enum {
        EXIT_USAGE = 2,                 /* bad option or argument */
        EXIT_CONFIG = 3,                /* the policy file is refused */
        EXIT_PARTIAL = 64,              /* --once: some blocks came online, some did not */
};

struct context {
        const char *config_path;
        const char *sysfs_root;
        bool once, dry_run, check_config;
        enum log_target log_target;
        bool config_explicit;
        struct reporter reporter;
        struct runner runner_ctx;      /* --once and --dry-run */
        atomic_bool stop;
};

/* MEMONLINED_LOG_LEVEL=debug|info|notice|warning|err: how much goes to the log. */
static int log_level_from_env(struct reporter *r) {
        static const char *const levels[] = {
                [LOG_ERR] = "err", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
                [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
        };
        const char *e = getenv("MEMONLINED_LOG_LEVEL");

        if (!e || !*e)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(levels); i++)
                if (levels[i] && strcasecmp(e, levels[i]) == 0) {
                        r->max_priority = (int) i;
                        return 0;
                }
        return -EINVAL;
}

/* One warning per finding, then the list is emptied for the next check. */
static void warn_each(struct context *c, struct conflicts *conf, const char *message_id) {
        for (size_t i = 0; i < conf->n; i++)
                report_log(&c->reporter, LOG_WARNING, message_id, "%s: %s. Fix: %s", conf->items[i].where,
                           conf->items[i].what, conf->items[i].fix);
        conflicts_clear(conf);
}

static void warn_conflicts(struct context *c) {
        struct conflicts conf = {};
        int r;

        r = coexist_check(c->sysfs_root, coexist_default_rules_dirs, &conf);
        if (r < 0)
                report_log_errno(&c->reporter, LOG_DEBUG, NULL, r, "coexistence check incomplete: %m");
        warn_each(c, &conf, MESSAGE_ID_CONFLICT);

        r = coexist_slow_settings(c->sysfs_root, &conf);
        if (r < 0)
                report_log_errno(&c->reporter, LOG_DEBUG, NULL, r, "kernel settings check incomplete: %m");
        warn_each(c, &conf, MESSAGE_ID_SLOW_KERNEL);
}

/*
 * The runtime directory: systemd's RuntimeDirectory= (the first of
 * $RUNTIME_DIRECTORY's entries); else, on the real /sys, /run/memonlined,
 * so a daemon started by hand takes the service's lock and finds its saved
 * auto_online_blocks; else (a test tree) none.
 */
static int runtime_directory(const char *sysfs_root, char **ret) {
        const char *dir = getenv("RUNTIME_DIRECTORY");

        *ret = NULL;
        if (!dir || dir[0] != '/') {
                if (!streq(sysfs_root, "/sys"))
                        return 0;
                dir = RUNTIME_DIR_DEFAULT;
        }
        *ret = strndup(dir, strcspn(dir, ":"));
        return *ret ? 0 : -ENOMEM;
}

/* One daemon at a time: a second one refuses, naming the first. 0, or an exit code. */
static int lock_instance(struct context *c, const char *dir, struct instance **ret) {
        pid_t holder = 0;
        int r;

        r = instance_lock(dir, &holder, ret);
        if (r == -EBUSY) {
                if (holder > 0)
                        report_log(&c->reporter, LOG_ERR, NULL,
                                   "another memonlined (pid %d) is running: it holds %s/" RUNTIME_LOCK_FILE
                                   "; not starting a second one", (int) holder, dir);
                else
                        report_log(&c->reporter, LOG_ERR, NULL,
                                   "another memonlined is running: it holds %s/" RUNTIME_LOCK_FILE
                                   "; not starting a second one", dir);
                return EXIT_FAILURE;
        }
        if (r < 0)
                /* Memory still has to come online: run, and say that nothing keeps a second daemon out. */
                report_log_errno(&c->reporter, LOG_WARNING, NULL, r,
                                 "cannot lock %s/" RUNTIME_LOCK_FILE ": %m; running without the lock", dir);
        return 0;
}

/* Returns an exit code. */
static int run_daemon(struct context *c) {
        struct loop_config cfg = {
                .config_path = c->config_path,
                .config_explicit = c->config_explicit,
                .sysfs_root = c->sysfs_root,
                .reporter = &c->reporter,
        };
        _cleanup_instance_ struct instance *inst = NULL;
        _cleanup_loop_ struct loop *l = NULL;
        _cleanup_free_ char *runtime_dir = NULL;
        int r;

        r = runtime_directory(c->sysfs_root, &runtime_dir);
        if (r < 0)
                return EXIT_FAILURE;
        cfg.runtime_dir = runtime_dir;
        if (runtime_dir) {
                r = lock_instance(c, runtime_dir, &inst);
                if (r != 0)
                        return r;       /* the other daemon's setting: not ours to touch */
        }

        /* loop_new() fails on the policy (logged with FILE:LINE), or for want of memory. */
        r = loop_new(&cfg, &l);
        if (r < 0) {
                loop_give_back_saved(&cfg);
                return r == -ENOMEM ? EXIT_FAILURE : EXIT_CONFIG;
        }
        /* Hotplug happens when memory is short: do not get paged out then. */
        if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0)
                report_log_errno(&c->reporter, LOG_DEBUG, NULL, errno, "mlockall: %m");
        /* Started first: once auto-online is taken over it is no competitor to warn about. */
        r = loop_start(l);
        if (r >= 0) {
                warn_conflicts(c);
                r = loop_run(l);
        }
        if (r < 0) {
                report_log_errno(&c->reporter, LOG_ERR, NULL, r, "fatal: %m");
                /* loop_run() gave back what it had taken; a start that failed before it has a predecessor's. */
                loop_give_back_saved(&cfg);
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}

/* --once and --dry-run: one pass over every offline block. Returns an exit code. */
static int single_pass(struct context *c) {
        struct loop_config cfg = {
                .config_path = c->config_path,
                .config_explicit = c->config_explicit,
                .sysfs_root = c->sysfs_root,
                .reporter = &c->reporter,
        };
        _cleanup_policy_ struct policy *p = NULL;
        struct job j = { .trigger = "once" };
        struct progress_bar bar;
        size_t undone;
        int r;

        r = loop_load_policy(&cfg, &p);
        if (r < 0)
                return r == -ENOMEM ? EXIT_FAILURE : EXIT_CONFIG;
        j.policy = p;
        if (!c->dry_run)
                warn_conflicts(c);
        /* A long pass on a terminal shows how far it got; a failed start only costs the bar. */
        if (!c->dry_run && progress_bar_start(&bar, stderr) > 0)
                c->runner_ctx.progress = &bar.progress;
        r = runner_process(&c->runner_ctx, &j);
        if (c->runner_ctx.progress) {
                progress_bar_stop(&bar);
                c->runner_ctx.progress = NULL;
        }
        if (r < 0)
                return EXIT_FAILURE;
        if (c->dry_run)
                return EXIT_SUCCESS;
        undone = j.failed + j.undecided + j.not_attempted + j.dax_failed + j.unreadable;
        report_log(&c->reporter, LOG_INFO, NULL,
                   "%zu blocks onlined, %zu failed, %zu undecided, %zu unreadable, %zu not attempted", j.onlined,
                   j.failed, j.undecided, j.unreadable, j.not_attempted);
        if (undone == 0)
                return EXIT_SUCCESS;
        return j.onlined > 0 ? EXIT_PARTIAL : EXIT_FAILURE;
}

/* ---- options ----------------------------------------------------------- */

static void help(void) {
        printf("Usage: memonlined [OPTIONS]\n"
               "       memonlined report [OPTIONS]   (see memonlined-report(8))\n"
               "       memonlined status [OPTIONS]   (see memonlined-status(8))\n"
               "\n"
               "Online hot-added memory blocks per policy, node-aware, with timing records.\n"
               "\n"
               "  -c --config FILE          Policy file (default %s)\n"
               "     --sysfs-root DIR       Read and write sysfs under DIR (default /sys)\n"
               "     --once                 Online every offline block now, then exit\n"
               "     --dry-run              Print the plan (and dax decisions); write nothing\n"
               "     --check-config         Validate the policy file and exit\n"
               "     --log-target TARGET    auto, journal or console\n"
               "  -V --version              Print the version\n"
               "  -h --help                 Show this help\n"
               "\n"
               "Exit status: 0 success; 1 failure; 2 bad option or argument; 3 the policy file\n"
               "is refused; 64 partial: --once onlined some blocks but not all.\n",
               DEFAULT_CONFIG);
}

enum { ARG_SYSFS_ROOT = 0x100, ARG_ONCE, ARG_DRY_RUN, ARG_CHECK_CONFIG, ARG_LOG_TARGET };

static int parse_argv(struct context *c, int argc, char **argv) {
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "sysfs-root", required_argument, NULL, ARG_SYSFS_ROOT },
                { "once", no_argument, NULL, ARG_ONCE },
                { "dry-run", no_argument, NULL, ARG_DRY_RUN },
                { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
                { "log-target", required_argument, NULL, ARG_LOG_TARGET },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int opt;

        while ((opt = getopt_long(argc, argv, "c:Vh", options, NULL)) >= 0)
                switch (opt) {
                case 'c':
                        c->config_path = optarg;
                        c->config_explicit = true;
                        break;
                case ARG_SYSFS_ROOT:
                        c->sysfs_root = optarg;
                        break;
                case ARG_ONCE:
                        c->once = true;
                        break;
                case ARG_DRY_RUN:
                        c->dry_run = true;
                        break;
                case ARG_CHECK_CONFIG:
                        c->check_config = true;
                        break;
                case ARG_LOG_TARGET:
                        if (log_target_from_string(optarg, &c->log_target) < 0) {
                                cli_error("memonlined", "unknown log target \"%s\" (auto, journal, console)", optarg);
                                return -EINVAL;
                        }
                        break;
                case 'V':
                        printf("memonlined %s\n", PACKAGE_VERSION);
                        return 0;
                case 'h':
                        help();
                        return 0;
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                cli_error("memonlined", "unexpected argument \"%s\"", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char **argv) {
        struct context c = {
                .config_path = DEFAULT_CONFIG,
                .sysfs_root = "/sys",
        };
        int r;

        if (argc > 1 && streq(argv[1], "report"))
                return journal_report_main(argc - 1, argv + 1, stdout);
        if (argc > 1 && streq(argv[1], "status")) {
                const char *root = getenv("MEMONLINED_SYSFS_ROOT");

                return status_main(argc - 1, argv + 1, root ? root : "/sys", stdout);
        }

        r = parse_argv(&c, argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        /*
         * --dry-run and --check-config answer on the console. --once, like
         * the daemon, writes its records to the journal when run by systemd
         * (memonlined report and journalctl -x must see them), else to the
         * console.
         */
        if ((c.dry_run || c.check_config) && c.log_target == LOG_TARGET_AUTO)
                c.log_target = LOG_TARGET_CONSOLE;
        reporter_init(&c.reporter, c.log_target);
        r = log_level_from_env(&c.reporter);
        if (r < 0)
                report_log(&c.reporter, LOG_WARNING, NULL, "MEMONLINED_LOG_LEVEL=%s: unknown level, keeping info",
                           getenv("MEMONLINED_LOG_LEVEL"));
        c.runner_ctx = (struct runner) {
                .sysfs_root = c.sysfs_root,
                .reporter = &c.reporter,
                .stop = &c.stop,
                .dry_run = c.dry_run,
                .need_memory = true,
                .out = stdout,
        };

        if (c.check_config) {
                struct policy_error err = {};
                char message[POLICY_ERROR_MAX];
                struct policy *p = NULL;
                bool defaulted;

                r = policy_load_or_default(c.config_path, c.config_explicit, &p, &defaulted, &err);
                if (r < 0) {
                        policy_error_format(&err, c.config_path, r, message, sizeof(message));
                        cli_error(NULL, "%s", message);
                        return EXIT_CONFIG;
                }
                policy_unref(p);
                if (defaulted)
                        printf("%s: not found, the built-in defaults apply\n", c.config_path);
                else
                        printf("%s: OK\n", c.config_path);
                return EXIT_SUCCESS;
        }

        if (c.once || c.dry_run) {
                r = single_pass(&c);
                runner_done(&c.runner_ctx);
                return r;
        }
        r = run_daemon(&c);
        runner_done(&c.runner_ctx);
        return r;
}
