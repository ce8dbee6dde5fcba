/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a CXL region's batch does before its first write, on a fake tree
 * laid out as the 6.12 test guest has it (tests/vm/vm.py): nodes 0 and 1
 * with 4 CPUs each (2 cores x 2 threads), 48 boot blocks, and then
 * `cxl create-region -t ram`: region0, dax0.0 bound to kmem, a new
 * CPU-less node 2 and its blocks, linked. The daemon's runner read the
 * machine at its coldplug and warmed the hotplug devices at the region's
 * event, which comes well before the memory (unless --cold), as the
 * daemon does between batches. The dax device's event comes with the
 * memory's, so the batch reads the device (--dax-warm: a warm job read it
 * first); then the blocks' add events make one job.
 *
 * The clock on a tmpfs tree says little about a guest, where every
 * syscall of the preparation competes with udevd's storm. So the harness
 * marks the job's start and its first write with write(-1, ...) calls,
 * and tests/bench/prepare-syscalls.sh counts under strace what lies
 * between the two: the syscalls a batch makes before its first write.
 *
 * Usage: bench-prepare [--blocks N] [--cold] [--dax-warm] [--policy FILE]
 * Prints the daemon's own account of the preparation (its debug line)
 * and one line "first_write_usec=N onlined=N".
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "online.h"
#include "policy.h"
#include "report.h"
#include "runner.h"
#include "topology.h"
#include "util.h"
#include "tests/unit/fake-tree.h"

#define BLOCK_SIZE      (128ULL << 20)
#define BOOT_BLOCKS     48              /* 6 GiB: 24 on each CPU node */
#define REGION_FIRST    256             /* the CXL window's first block: 32 GiB */

struct first_write {
        atomic_bool seen;
        uint64_t usec;
};

/* The marker strace shows: write(-1, "...") = -1 EBADF. */
static void mark(const char *what) {
        ssize_t r = write(-1, what, strlen(what));

        (void) r;
}

static int first_write_file(void *userdata, uint64_t block_id, int fd, const char *value) {
        struct first_write *fw = userdata;

        (void) block_id;
        if (!atomic_exchange(&fw->seen, true)) {
                fw->usec = now_usec();
                mark("memonline-bench: first write");
        }
        return online_write_state_file(fd, value);
}

static void make_machine(const char *root) {
        fake_memory_init(root, BLOCK_SIZE);
        fake_write(root, "devices/system/cpu/online", "0-7\n");
        fake_write(root, "devices/system/cpu/possible", "0-7\n");
        fake_write(root, "devices/system/cpu/present", "0-7\n");
        fake_write(root, "devices/system/cpu/isolated", "\n");
        fake_write(root, "devices/system/node/online", "0-1\n");
        fake_write(root, "devices/system/node/possible", "0-2\n");
        fake_write(root, "devices/system/node/has_cpu", "0-1\n");
        fake_write(root, "devices/system/node/has_memory", "0-1\n");
        fake_add_node(root, 0, "0-3", "10 20");
        fake_add_node(root, 1, "4-7", "20 10");
        for (unsigned c = 0; c < 8; c++) {
                char siblings[16];
                unsigned base = c & ~3U, core = c & 1U;

                snprintf(siblings, sizeof(siblings), "%u,%u", base + core, base + core + 2);
                fake_add_cpu(root, c, (int) (c / 4), siblings, true);
        }
        fake_add_blocks(root, 0, BOOT_BLOCKS / 2, 0, "online", "Normal");
        fake_add_blocks(root, BOOT_BLOCKS / 2, BOOT_BLOCKS / 2, 1, "online", "Normal");
}

/*
 * cxl create-region: the region first (its event comes well before the
 * memory: the tool configures and commits it), then, with dax, its dax
 * device on kmem, whose event comes with the memory's.
 */
static void create_region(const char *root, uint64_t blocks, bool dax) {
        static const int mem0[] = { 0 };
        struct fake_cxl_region r = {
                .region = 0, .start = REGION_FIRST * BLOCK_SIZE, .size = blocks * BLOCK_SIZE, .target_node = 2,
                .driver = "kmem", .memdevs = mem0, .n_memdevs = 1, .memmap_on_memory = 0, .no_dax = !dax,
        };

        free(fake_add_cxl_region(root, &r));
}

/* kmem's add: node 2 comes online, its blocks appear offline and are linked to it. */
static void add_memory(const char *root, uint64_t blocks) {
        fake_write(root, "devices/system/node/online", "0-2\n");
        fake_write(root, "devices/system/node/has_memory", "0-2\n");
        fake_add_node(root, 0, "0-3", "10 20 30");
        fake_add_node(root, 1, "4-7", "20 10 17");
        fake_add_node(root, 2, "", "30 17 10");
        fake_add_blocks(root, REGION_FIRST, blocks, 2, "offline", "Movable Normal");
}

static int run(const char *root, struct policy *p, uint64_t blocks, bool cold, bool dax_warm_first) {
        struct first_write fw = {};
        struct online_ops ops = { .write_file = first_write_file, .userdata = &fw };
        struct reporter rep;
        atomic_bool stop = false;
        atomic_uint device_events = 0;  /* the event loop's count of DIMM events: none came */
        struct runner runner = { .sysfs_root = root, .stop = &stop, .ops = &ops, .keep_writers = true,
                                 .device_events = &device_events };
        struct job coldplug = { .trigger = "coldplug", .policy = p };
        struct job region_warm = { .trigger = "warm", .policy = p, .warm = WARM_DEVICES };
        struct job dax_warm = { .trigger = "warm", .policy = p, .warm = WARM_DAX };
        struct job batch = { .trigger = "udev", .policy = p, .adopt_linked = true };
        uint64_t start;
        int r;

        reporter_init(&rep, LOG_TARGET_CONSOLE);
        rep.max_priority = LOG_DEBUG;
        runner.reporter = &rep;

        /* The daemon's start: it reads the machine whole (nothing offline yet). */
        r = runner_process(&runner, &coldplug);
        if (r < 0)
                return r;
        create_region(root, blocks, false);
        if (!cold) {
                r = runner_process(&runner, &region_warm);
                if (r < 0)
                        return r;
        }
        create_region(root, blocks, true);
        if (dax_warm_first) {
                r = runner_process(&runner, &dax_warm);
                if (r < 0)
                        return r;
        }
        add_memory(root, blocks);
        batch.ids = calloc(blocks, sizeof(*batch.ids));
        if (!batch.ids)
                return -ENOMEM;
        for (uint64_t i = 0; i < blocks; i++)
                batch.ids[i] = REGION_FIRST + i;
        batch.n_ids = blocks;
        batch.first_event_usec = start = now_usec();

        mark("memonline-bench: batch");
        r = runner_process(&runner, &batch);
        mark("memonline-bench: batch done");
        free(batch.ids);
        runner_done(&runner);
        if (r < 0)
                return r;
        printf("first_write_usec=%" PRIu64 " onlined=%zu\n", fw.seen ? fw.usec - start : 0, batch.onlined);
        return batch.onlined == blocks ? 0 : -EIO;
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "blocks", required_argument, NULL, 'b' },
                { "cold", no_argument, NULL, 'c' },
                { "dax-warm", no_argument, NULL, 'd' },
                { "policy", required_argument, NULL, 'p' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_policy_ struct policy *p = NULL;
        const char *policy_file = NULL;
        uint64_t blocks = 32;
        bool cold = false, dax_warm_first = false;
        char *root;
        int c, r;

        while ((c = getopt_long(argc, argv, "b:cdp:h", opts, NULL)) >= 0)
                switch (c) {
                case 'b':
                        blocks = strtoull(optarg, NULL, 10);
                        if (blocks == 0 || blocks > 4096) {
                                fprintf(stderr, "bench-prepare: --blocks wants 1-4096\n");
                                return 2;
                        }
                        break;
                case 'c':
                        cold = true;
                        break;
                case 'd':
                        dax_warm_first = true;
                        break;
                case 'p':
                        policy_file = optarg;
                        break;
                case 'h':
                        printf("Usage: bench-prepare [--blocks N] [--cold] [--dax-warm] [--policy FILE]\n");
                        return 0;
                default:
                        return 2;
                }
        if (policy_file) {
                struct policy_error e = {};

                r = policy_load(policy_file, &p, &e);
                if (r < 0) {
                        fprintf(stderr, "%s:%u: %s\n", e.file, e.line, e.reason);
                        return 2;
                }
        } else {
                r = policy_new_default(&p);
                if (r < 0)
                        return 1;
        }
        root = fake_tree_new_fast();
        make_machine(root);
        r = run(root, p, blocks, cold, dax_warm_first);
        fake_tree_free(root);
        if (r < 0) {
                fprintf(stderr, "bench-prepare: %s\n", strerror(-r));
                return 1;
        }
        return 0;
}
