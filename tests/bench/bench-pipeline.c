/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The userspace path at scale, with no kernel: a fake sysfs tree on tmpfs
 * (8 nodes, 4 of them CPU-less, 128 MiB blocks), add uevents pushed
 * through monitor_classify() and the batcher, then runner_process() as the
 * daemon's runner thread calls it (block reading, node resolution, dax
 * scan, planning, pinned workers, report), with the topology the daemon
 * read at its start. The state "writes" land in tmpfs files, so what is
 * measured is our CPU, not the kernel's onlining. On tmpfs each write
 * also truncates the file (a sysfs write needs no truncate): one
 * syscall per block more than on sysfs.
 *
 * Usage: bench-pipeline [--blocks N[,N...]] [--repeat R] [--workers W]
 *                       [--concurrent C] [--policy FILE]
 *
 * After each pass it also times what the daemon does for its metrics
 * textfile with [metrics] textfile_dir set: tallying the block cache on
 * the loop's side, then rendering and replacing the file (here on the
 * tree's tmpfs; not synced, as the daemon does not sync it either).
 *
 * Prints one JSON line per run, then one summary line per block count
 * and a growth line (CPU µs per block at the largest count over the
 * smallest): linear growth means a ratio near 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "batch.h"
#include "metrics.h"
#include "monitor.h"
#include "policy.h"
#include "report.h"
#include "runner.h"
#include "topology.h"
#include "util.h"
#include "tests/unit/fake-tree.h"
#include "online.h"
#include "progress.h"

#define N_NODES         8
#define N_CPU_NODES     4
#define BOOT_BLOCKS     64      /* online Normal blocks per CPU node: 8 GiB each */
#define BLOCK_SIZE      (128ULL << 20)
#define MAX_SIZES       16

struct run {
        uint64_t blocks;
        uint64_t wall_usec, user_usec, sys_usec;
        uint64_t classify_usec;         /* wall time of event classification + batching */
        uint64_t batch_cpu_usec;        /* MEMONLINE_CPU_USEC of the batch record */
        uint64_t written;               /* state files no longer "offline" */
        uint64_t topology_cpu_usec;     /* one topology_load() alone, for the breakdown */
        uint64_t metrics_read_usec;     /* the metrics' tally of the block cache (before the next job) */
        uint64_t metrics_write_usec;    /* rendering and replacing the textfile (while the next job runs) */
        size_t onlined, failed;
};

static uint64_t mono_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

static void rusage_usec(uint64_t *ret_user, uint64_t *ret_sys) {
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        *ret_user = (uint64_t) ru.ru_utime.tv_sec * 1000000 + (uint64_t) ru.ru_utime.tv_usec;
        *ret_sys = (uint64_t) ru.ru_stime.tv_sec * 1000000 + (uint64_t) ru.ru_stime.tv_usec;
}

/* 8 nodes: 0-3 with 4 CPUs each (2 cores x 2 threads), 4-7 CPU-less, each near one CPU node. */
static void make_machine(const char *root) {
        char cpulist[32], siblings[32], dist[128];
        unsigned ncpu = N_CPU_NODES * 4;

        fake_memory_init(root, BLOCK_SIZE);
        fake_write(root, "devices/system/cpu/online", "0-%u\n", ncpu - 1);
        fake_write(root, "devices/system/cpu/possible", "0-%u\n", ncpu - 1);
        fake_write(root, "devices/system/cpu/present", "0-%u\n", ncpu - 1);
        fake_write(root, "devices/system/cpu/isolated", "\n");
        fake_write(root, "devices/system/node/online", "0-%d\n", N_NODES - 1);
        fake_write(root, "devices/system/node/possible", "0-%d\n", N_NODES - 1);
        fake_write(root, "devices/system/node/has_cpu", "0-%d\n", N_CPU_NODES - 1);
        fake_write(root, "devices/system/node/has_memory", "0-%d\n", N_NODES - 1);
        for (int n = 0; n < N_NODES; n++) {
                size_t off = 0;

                for (int m = 0; m < N_NODES; m++) {
                        int d;

                        if (m == n)
                                d = 10;
                        else if (n < N_CPU_NODES && m < N_CPU_NODES)
                                d = 21;
                        else if (m % N_CPU_NODES == n % N_CPU_NODES)
                                d = 17;         /* a CPU-less node and its CPU node */
                        else
                                d = 28;
                        off += (size_t) snprintf(dist + off, sizeof(dist) - off, "%s%d", m ? " " : "", d);
                }
                if (n < N_CPU_NODES)
                        snprintf(cpulist, sizeof(cpulist), "%d-%d", 4 * n, 4 * n + 3);
                else
                        cpulist[0] = '\0';
                fake_add_node(root, n, cpulist, dist);
        }
        for (unsigned c = 0; c < ncpu; c++) {
                unsigned base = c & ~3U, core = c & 1U;

                snprintf(siblings, sizeof(siblings), "%u,%u", base + core, base + core + 2);
                fake_add_cpu(root, c, (int) (c / 4), siblings, true);
        }
        for (int n = 0; n < N_CPU_NODES; n++)
                fake_add_blocks(root, (uint64_t) n * BOOT_BLOCKS, BOOT_BLOCKS, n, "online", "Normal");
}

/* Hot-added blocks: contiguous, evenly over the 8 nodes, after the boot blocks. */
static uint64_t first_hot_block(void) {
        return (uint64_t) N_CPU_NODES * BOOT_BLOCKS;
}

static void add_hot_blocks(const char *root, uint64_t n) {
        uint64_t first = first_hot_block(), per = (n + N_NODES - 1) / N_NODES;

        for (int node = 0; node < N_NODES && n > 0; node++) {
                uint64_t k = n < per ? n : per;

                fake_add_blocks(root, first, k, node, "offline", "Normal Movable");
                first += k;
                n -= k;
        }
}

static int state_path(char *buf, size_t size, const char *root, uint64_t id) {
        int r = snprintf(buf, size, "%s/devices/system/memory/memory%" PRIu64 "/state", root, id);

        return r < 0 || (size_t) r >= size ? -ENAMETOOLONG : 0;
}

/* Back to offline for the next repeat; returns how many were not offline. */
static uint64_t reset_states(const char *root, uint64_t n) {
        uint64_t written = 0;
        char path[4096], buf[64];

        for (uint64_t id = first_hot_block(); id < first_hot_block() + n; id++) {
                FILE *f;

                if (state_path(path, sizeof(path), root, id) < 0)
                        abort();
                f = fopen(path, "r+e");
                if (!f)
                        abort();
                if (!fgets(buf, sizeof(buf), f))
                        buf[0] = '\0';
                if (strncmp(buf, "offline", 7) != 0)
                        written++;
                rewind(f);
                if (ftruncate(fileno(f), 0) < 0 || fputs("offline\n", f) < 0)
                        abort();
                fclose(f);
        }
        return written;
}

/*
 * The least any onliner does per block, on the same tree: read the state,
 * write it (open, read, close; open, write, close). CPU time per block;
 * the pipeline's cost is reported against it.
 */
static uint64_t floor_cpu_usec(const char *root, uint64_t n) {
        uint64_t u0, s0, u1, s1;
        char path[4096], buf[64];

        rusage_usec(&u0, &s0);
        for (uint64_t id = first_hot_block(); id < first_hot_block() + n; id++) {
                int fd;

                if (state_path(path, sizeof(path), root, id) < 0)
                        abort();
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
                        abort();
                close(fd);
                fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
                if (fd < 0 || pwrite(fd, "online_movable", 14, 0) != 14)
                        abort();
                close(fd);
        }
        rusage_usec(&u1, &s1);
        return (u1 - u0) + (s1 - s0);
}

/*
 * The file work the daemon itself does per block on this tree: one open
 * relative to the memory directory, read, write of the value's line,
 * close. What is left over it is the daemon's.
 */
static uint64_t least_cpu_usec(const char *root, uint64_t n) {
        uint64_t u0, s0, u1, s1;
        char path[4096], rel[64], buf[64];
        int dir_fd;

        if (snprintf(path, sizeof(path), "%s/devices/system/memory", root) >= (int) sizeof(path))
                abort();
        dir_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                abort();
        rusage_usec(&u0, &s0);
        for (uint64_t id = first_hot_block(); id < first_hot_block() + n; id++) {
                int fd;

                snprintf(rel, sizeof(rel), "memory%" PRIu64 "/state", id);
                fd = openat(dir_fd, rel, O_RDWR | O_CLOEXEC | O_NOCTTY);
                if (fd < 0 || pread(fd, buf, sizeof(buf), 0) < 0 ||
                    pwrite(fd, "online_movable\n", 15, 0) != 15)
                        abort();
                close(fd);
        }
        rusage_usec(&u1, &s1);
        close(dir_fd);
        return (u1 - u0) + (s1 - s0);
}

static uint64_t record_field(const char *text, const char *key) {
        const char *p = strstr(text, key);

        return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* The daemon's metrics after a batch: the tally, then the file in <root>/prom. -errno. */
static int metrics_pass(const char *root, const struct topology *t, uint64_t *ret_read_usec,
                        uint64_t *ret_write_usec) {
        _cleanup_(metrics_machine_done) struct metrics_machine m = {};
        struct metrics_daemon d = { .start_time_usec = realtime_usec() };
        struct metrics metrics = { .machine = &m, .auto_online_taken = 0, .daemon = &d };
        _cleanup_free_ char *dir = NULL, *text = NULL;
        size_t len = 0;
        uint64_t t0 = mono_usec(), t1;
        FILE *f;
        int r;

        r = metrics_machine_read(t, &m);
        t1 = mono_usec();
        if (r < 0)
                return r;
        if (asprintf(&dir, "%s/prom", root) < 0)
                return -ENOMEM;
        (void) mkdir(dir, 0755);
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        r = metrics_print(f, &metrics);
        fclose(f);
        if (r >= 0)
                r = metrics_write_file(dir, text, len);
        *ret_read_usec = t1 - t0;
        *ret_write_usec = mono_usec() - t1;
        return r;
}

static int single_pass(const char *root, struct policy *p, uint64_t n, struct run *ret) {
        struct batcher b;
        struct reporter rep;
        struct job job = { .trigger = "udev", .policy = p };
        atomic_bool stop = false;
        struct runner runner = { .sysfs_root = root, .stop = &stop };
        char *text = NULL;
        size_t text_len = 0;
        FILE *mem, *devnull;
        uint64_t t0, t1, t2, u0, s0, u1, s1, topo_usec, seq = 1, metrics_read = 0, metrics_write = 0;
        int r;

        mem = open_memstream(&text, &text_len);
        devnull = fopen("/dev/null", "we");
        if (!mem || !devnull)
                return -errno;
        reporter_init(&rep, LOG_TARGET_CONSOLE);
        rep.out = mem;
        rep.err = devnull;
        runner.reporter = &rep;
        batcher_init(&b, p->settle_ms, p->max_wait_ms);

        /*
         * A running daemon read the topology at its start, before the
         * hot-add: load it and forget the hot blocks, which come as events.
         */
        r = topology_load(root, &runner.topology);
        if (r < 0)
                return r;
        while (runner.topology->n_blocks > 0 &&
               runner.topology->blocks[runner.topology->n_blocks - 1].id >= first_hot_block())
                runner.topology->n_blocks--;

        rusage_usec(&u0, &s0);
        t0 = mono_usec();
        for (uint64_t id = first_hot_block(); id < first_hot_block() + n; id++) {
                struct monitor_event ev;
                char name[32];

                snprintf(name, sizeof(name), "memory%" PRIu64, id);
                r = monitor_classify("add", "memory", name, seq++, &ev);
                if (r < 0 || ev.kind != MONITOR_MEMORY_ADD)
                        return r < 0 ? r : -EINVAL;
                r = batcher_add(&b, ev.block_id, mono_usec());
                if (r < 0)
                        return r;
        }
        r = batcher_take(&b, &job.ids, &job.n_ids, &job.first_event_usec);
        if (r < 0)
                return r;
        t1 = mono_usec();
        r = runner_process(&runner, &job);
        /* The kernel's "online" uevent per block: classified and dropped. */
        for (uint64_t id = first_hot_block(); id < first_hot_block() + n; id++) {
                struct monitor_event ev;
                char name[32];

                snprintf(name, sizeof(name), "memory%" PRIu64, id);
                (void) monitor_classify("online", "memory", name, seq++, &ev);
        }
        t2 = mono_usec();
        rusage_usec(&u1, &s1);
        if (r >= 0)
                r = metrics_pass(root, runner.topology, &metrics_read, &metrics_write);
        runner_done(&runner);   /* the daemon keeps it for the next batch: not part of this one */
        batcher_done(&b);
        free(job.ids);
        fclose(mem);
        fclose(devnull);
        if (r < 0) {
                free(text);
                return r;
        }

        {
                struct topology *t = NULL;
                uint64_t c0 = cpu_time_usec();

                if (topology_load(root, &t) >= 0)
                        topology_free(t);
                topo_usec = cpu_time_usec() - c0;
        }
        *ret = (struct run) {
                .metrics_read_usec = metrics_read,
                .metrics_write_usec = metrics_write,
                .topology_cpu_usec = topo_usec,
                .blocks = n,
                .wall_usec = t2 - t0,
                .user_usec = u1 - u0,
                .sys_usec = s1 - s0,
                .classify_usec = t1 - t0,
                .batch_cpu_usec = text ? record_field(text, "MEMONLINE_CPU_USEC=") : 0,
                .onlined = job.onlined,
                .failed = job.failed,
        };
        free(text);
        return 0;
}

static uint64_t median(uint64_t *v, size_t n) {
        qsort(v, n, sizeof(*v), cmp_u64);
        return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int parse_sizes(const char *s, uint64_t *sizes, size_t *n) {
        char *copy = strdup(s), *save = NULL;

        if (!copy)
                return -ENOMEM;
        *n = 0;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                char *end;
                unsigned long long v = strtoull(tok, &end, 10);

                if (*end || v == 0 || *n >= MAX_SIZES) {
                        free(copy);
                        return -EINVAL;
                }
                sizes[(*n)++] = v;
        }
        free(copy);
        return *n > 0 ? 0 : -EINVAL;
}

static void usage(FILE *f) {
        fprintf(f, "Usage: bench-pipeline [--blocks N[,N...]] [--repeat R] [--workers W] [--concurrent C] "
                   "[--policy FILE]\n");
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "blocks", required_argument, NULL, 'b' },
                { "repeat", required_argument, NULL, 'r' },
                { "workers", required_argument, NULL, 'w' },
                { "concurrent", required_argument, NULL, 'c' },
                { "policy", required_argument, NULL, 'p' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        uint64_t sizes[MAX_SIZES] = { 2457, 24576 };
        size_t n_sizes = 2;
        unsigned repeat = 5, workers = 0, concurrent = 0;
        const char *policy_file = NULL;
        double per_block[MAX_SIZES] = {};
        struct policy *p = NULL;
        int c, r, failed = 0;

        while ((c = getopt_long(argc, argv, "b:r:w:c:p:h", opts, NULL)) >= 0)
                switch (c) {
                case 'b':
                        if (parse_sizes(optarg, sizes, &n_sizes) < 0) {
                                usage(stderr);
                                return 2;
                        }
                        break;
                case 'r':
                        repeat = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'w':
                        workers = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'c':
                        concurrent = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                case 'p':
                        policy_file = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        if (repeat == 0 || repeat > 1000) {
                usage(stderr);
                return 2;
        }

        if (policy_file) {
                struct policy_error e = {};

                r = policy_load(policy_file, &p, &e);
                if (r < 0) {
                        fprintf(stderr, "%s:%u: %s\n", e.file, e.line, e.reason);
                        return 1;
                }
        } else if (policy_new_default(&p) < 0)
                return 1;
        if (workers > 0)
                p->workers = (struct worker_count) { .count = workers };
        if (concurrent > 0)
                p->max_concurrent_writes = concurrent;

        for (size_t s = 0; s < n_sizes; s++) {
                uint64_t cpu[1000], wall[1000], batch_cpu[1000], floor_cpu[1000], least_cpu[1000], user[1000], sys[1000];
                char *root = fake_tree_new_fast();
                uint64_t t0 = mono_usec(), med_cpu;
                double floor_per_block, least_per_block;

                make_machine(root);
                add_hot_blocks(root, sizes[s]);
                fprintf(stderr, "bench-pipeline: %" PRIu64 " blocks: tree built in %.1f s under %s\n", sizes[s],
                        (double) (mono_usec() - t0) / 1e6, root);
                for (unsigned i = 0; i < repeat; i++) {
                        struct run run = {};

                        r = single_pass(root, p, sizes[s], &run);
                        if (r < 0) {
                                fprintf(stderr, "bench-pipeline: run failed: %s\n", strerror(-r));
                                fake_tree_free(root);
                                policy_unref(p);
                                return 1;
                        }
                        run.written = reset_states(root, sizes[s]);
                        floor_cpu[i] = floor_cpu_usec(root, sizes[s]);
                        (void) reset_states(root, sizes[s]);
                        least_cpu[i] = least_cpu_usec(root, sizes[s]);
                        (void) reset_states(root, sizes[s]);
                        if (run.written != sizes[s] || run.onlined != sizes[s] || run.failed > 0) {
                                fprintf(stderr, "bench-pipeline: %" PRIu64 " blocks: %" PRIu64
                                        " written, %zu onlined, %zu failed\n", sizes[s], run.written,
                                        run.onlined, run.failed);
                                failed++;
                        }
                        cpu[i] = run.user_usec + run.sys_usec;
                        user[i] = run.user_usec;
                        sys[i] = run.sys_usec;
                        wall[i] = run.wall_usec;
                        batch_cpu[i] = run.batch_cpu_usec;
                        printf("{\"bench\":\"pipeline\",\"blocks\":%" PRIu64 ",\"nodes\":%d,\"cpu_less_nodes\":%d,"
                               "\"repeat\":%u,\"wall_usec\":%" PRIu64 ",\"user_usec\":%" PRIu64
                               ",\"sys_usec\":%" PRIu64 ",\"classify_batch_usec\":%" PRIu64
                               ",\"batch_record_cpu_usec\":%" PRIu64 ",\"topology_load_cpu_usec\":%" PRIu64
                               ",\"cpu_usec_per_block\":%.3f,\"floor_cpu_usec_per_block\":%.3f"
                               ",\"least_cpu_usec_per_block\":%.3f"
                               ",\"metrics_read_usec\":%" PRIu64 ",\"metrics_write_usec\":%" PRIu64
                               ",\"onlined\":%zu,\"failed\":%zu}\n",
                               run.blocks, N_NODES, N_NODES - N_CPU_NODES, i, run.wall_usec, run.user_usec,
                               run.sys_usec, run.classify_usec, run.batch_cpu_usec, run.topology_cpu_usec,
                               (double) cpu[i] / (double) run.blocks, (double) floor_cpu[i] / (double) run.blocks,
                               (double) least_cpu[i] / (double) run.blocks, run.metrics_read_usec,
                               run.metrics_write_usec, run.onlined, run.failed);
                        fflush(stdout);
                }
                med_cpu = median(cpu, repeat);
                per_block[s] = (double) med_cpu / (double) sizes[s];
                floor_per_block = (double) median(floor_cpu, repeat) / (double) sizes[s];
                least_per_block = (double) median(least_cpu, repeat) / (double) sizes[s];
                printf("{\"bench\":\"pipeline-summary\",\"blocks\":%" PRIu64 ",\"repeats\":%u"
                       ",\"median_cpu_usec\":%" PRIu64 ",\"min_cpu_usec\":%" PRIu64 ",\"max_cpu_usec\":%" PRIu64
                       ",\"median_wall_usec\":%" PRIu64 ",\"median_batch_record_cpu_usec\":%" PRIu64
                       ",\"cpu_usec_per_block\":%.3f,\"floor_cpu_usec_per_block\":%.3f"
                       ",\"over_floor_usec_per_block\":%.3f"
                       ",\"least_cpu_usec_per_block\":%.3f,\"over_least_usec_per_block\":%.3f"
                       ",\"user_usec_per_block\":%.3f,\"sys_usec_per_block\":%.3f}\n",
                       sizes[s], repeat, med_cpu, cpu[0], cpu[repeat - 1], median(wall, repeat),
                       median(batch_cpu, repeat), per_block[s], floor_per_block,
                       per_block[s] - floor_per_block, least_per_block, per_block[s] - least_per_block,
                       /* Separate medians: user mode is the daemon's code, system mode the kernel's file work. */
                       (double) median(user, repeat) / (double) sizes[s],
                       (double) median(sys, repeat) / (double) sizes[s]);
                fflush(stdout);
                fake_tree_free(root);
        }
        if (n_sizes > 1)
                printf("{\"bench\":\"pipeline-growth\",\"from_blocks\":%" PRIu64 ",\"to_blocks\":%" PRIu64
                       ",\"per_block_ratio\":%.3f}\n",
                       sizes[0], sizes[n_sizes - 1], per_block[n_sizes - 1] / per_block[0]);
        policy_unref(p);
        return failed ? 1 : 0;
}
