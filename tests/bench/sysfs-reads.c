/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each sysfs read of a batch's preparation costs on a live machine:
 * the topology, the dax scan and the hotplug devices (memdev_load() and
 * its parts), each timed alone, with and without their caches. Reads
 * only: nothing is written. Built with --as-needed so that it runs in
 * the test guests (it needs libnuma and libc alone);
 * tests/bench/sysfs-reads-ab.py runs two builds of it in turns there.
 *
 * Usage: sysfs-reads [SYSFS_ROOT] [REPEAT]
 *
 * Prints "NAME USEC RESULT" lines, REPEAT (default 1) rounds of them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "memdev.h"
#include "pmem-scan.h"
#include "topology.h"
#include "util.h"

static uint64_t mono_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static void say(const char *name, uint64_t start, int r) {
        printf("%s %" PRIu64 " %d\n", name, mono_usec() - start, r);
}

static int round_once(const char *root) {
        _cleanup_topology_ struct topology *t = NULL;
        struct pmem_devices devs = {};
        struct memdev_cache cache = {};
        struct memdev_set s = {};
        struct ram_ranges fw = {};
        _cleanup_free_ char *iomem = NULL, *virtio = NULL;
        uint64_t a;
        int r;

        a = mono_usec();
        r = topology_load(root, &t);
        say("topology_load", a, r);
        if (r < 0)
                return r;
        a = mono_usec();
        say("topology_sync_machine", a, topology_sync_machine(t));
        a = mono_usec();
        say("pmem_scan", a, pmem_scan(root, &devs));

        /* The ACPI scan: no cache, filling the cache, and from it. */
        for (int i = 0; i < 3; i++) {
                static const char *const names[] = { "acpi_scan_uncached", "acpi_scan_filling", "acpi_scan_cached" };

                a = mono_usec();
                r = memdev_scan_acpi(root, t->block_size, i == 0 ? NULL : &cache.acpi, &s);
                say(names[i], a, r);
                memdev_set_clear(&s);
        }
        a = mono_usec();
        r = memdev_iomem_path(root, &iomem);
        if (r >= 0)
                r = memdev_scan_virtio_mem(root, iomem, &s);
        say("virtio_mem_scan", a, r);
        memdev_set_clear(&s);
        a = mono_usec();
        say("virtio_mem_name", a, memdev_virtio_mem_name(root, &virtio));
        for (int i = 0; i < 2; i++) {
                a = mono_usec();
                r = memdev_scan_firmware_ram(root, &cache.fw, &fw);
                say(i == 0 ? "firmware_ram_filling" : "firmware_ram_cached", a, r);
                ram_ranges_clear(&fw);
        }
        /* The whole read, as a batch after the first does it: with both caches. */
        a = mono_usec();
        r = memdev_load(root, t, &devs, &cache, &s, &fw);
        say("memdev_load_cached", a, r);
        memdev_set_clear(&s);
        ram_ranges_clear(&fw);
        memdev_cache_clear(&cache);
        pmem_devices_clear(&devs);
        return 0;
}

int main(int argc, char **argv) {
        const char *root = argc > 1 ? argv[1] : "/sys";
        long repeat = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
        int r;

        if (argc > 3 || repeat < 1 || repeat > 1000) {
                fprintf(stderr, "usage: sysfs-reads [SYSFS_ROOT] [REPEAT (1-1000)]\n");
                return 2;
        }
        for (long i = 0; i < repeat; i++) {
                r = round_once(root);
                if (r < 0) {
                        fprintf(stderr, "sysfs-reads: cannot read the topology under %s: %s\n", root, strerror(-r));
                        return 1;
                }
        }
        return 0;
}
