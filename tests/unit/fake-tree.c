/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "escape.h"
#include "fake-tree.h"

static void die(const char *what, const char *path) {
        fprintf(stderr, "fake-tree: %s %s: %s\n", what, path, strerror(errno));
        abort();
}

static char *join(const char *root, const char *rel) {
        char *p;

        if (asprintf(&p, "%s/%s", root, rel) < 0)
                abort();
        return p;
}

static void mkdir_parents(char *path) {
        for (char *s = path + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        die("mkdir", path);
                *s = '/';
        }
}

char *fake_tree_new(void) {
        char tmpl[] = "/tmp/memonline-fake-XXXXXX";

        if (!mkdtemp(tmpl))
                die("mkdtemp", tmpl);
        return strdup(tmpl);
}

char *fake_tree_new_fast(void) {
        char tmpl[] = "/dev/shm/memonline-fake-XXXXXX";

        if (!mkdtemp(tmpl))
                return fake_tree_new();
        return strdup(tmpl);
}

void fake_tree_free(char *root) {
        char *cmd;

        if (!root)
                return;
        /* Only ever remove what fake_tree_new*() made. */
        if ((strncmp(root, "/tmp/memonline-fake-", 20) == 0 || strncmp(root, "/dev/shm/memonline-fake-", 24) == 0) &&
            asprintf(&cmd, "rm -rf '%s'", root) >= 0) {
                if (system(cmd) != 0)
                        fprintf(stderr, "fake-tree: could not remove %s\n", root);
                free(cmd);
        }
        free(root);
}

void fake_mkdir(const char *root, const char *rel) {
        char *p = join(root, rel);
        size_t n = strlen(p);
        char *q = malloc(n + 2);

        memcpy(q, p, n);
        q[n] = '/';
        q[n + 1] = '\0';
        mkdir_parents(q);
        free(q);
        free(p);
}

void fake_write(const char *root, const char *rel, const char *fmt, ...) {
        char *p = join(root, rel);
        va_list ap;
        FILE *f;

        mkdir_parents(p);
        f = fopen(p, "we");
        if (!f)
                die("open", p);
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        if (fclose(f) != 0)
                die("close", p);
        free(p);
}

void fake_symlink(const char *root, const char *rel_link, const char *target) {
        char *p = join(root, rel_link);

        mkdir_parents(p);
        if (symlink(target, p) < 0 && errno != EEXIST)
                die("symlink", p);
        free(p);
}

void fake_unlink(const char *root, const char *rel) {
        char *p = join(root, rel);

        if (unlink(p) < 0 && errno != ENOENT)
                die("unlink", p);
        free(p);
}

char *fake_read(const char *root, const char *rel) {
        char *p = join(root, rel), *buf = NULL;
        size_t n = 0;
        FILE *f = fopen(p, "re");

        free(p);
        if (!f)
                return NULL;
        if (getline(&buf, &n, f) < 0) {
                free(buf);
                buf = strdup("");
        }
        fclose(f);
        buf[strcspn(buf, "\n")] = '\0';
        return buf;
}

void fake_memory_init(const char *root, uint64_t block_size) {
        fake_write(root, "devices/system/memory/block_size_bytes", "%llx\n", (unsigned long long) block_size);
        fake_write(root, "devices/system/memory/auto_online_blocks", "offline\n");
}

void fake_add_cpu(const char *root, unsigned cpu, int node, const char *siblings, bool online) {
        char rel[256], target[64];

        snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%u/online", cpu);
        fake_write(root, rel, "%d\n", online ? 1 : 0);
        snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%u/topology/thread_siblings_list", cpu);
        fake_write(root, rel, "%s\n", siblings);
        if (node >= 0) {
                snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%u/node%d", cpu, node);
                snprintf(target, sizeof(target), "../../node/node%d", node);
                fake_symlink(root, rel, target);
        }
}

void fake_add_node(const char *root, int node, const char *cpulist, const char *distance) {
        char rel[256];

        snprintf(rel, sizeof(rel), "devices/system/node/node%d/cpulist", node);
        fake_write(root, rel, "%s\n", cpulist);
        snprintf(rel, sizeof(rel), "devices/system/node/node%d/distance", node);
        fake_write(root, rel, "%s\n", distance);
}

void fake_add_initiator(const char *root, int node, int initiator) {
        char rel[256], target[64];

        snprintf(rel, sizeof(rel), "devices/system/node/node%d/access1/initiators/node%d", node, initiator);
        snprintf(target, sizeof(target), "../../../node%d", initiator);
        fake_symlink(root, rel, target);
}

void fake_link_block(const char *root, uint64_t id, int node) {
        char rel[256], target[64];

        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/node%d", (unsigned long long) id, node);
        snprintf(target, sizeof(target), "../../node/node%d", node);
        fake_symlink(root, rel, target);
        snprintf(rel, sizeof(rel), "devices/system/node/node%d/memory%llu", node, (unsigned long long) id);
        snprintf(target, sizeof(target), "../../memory/memory%llu", (unsigned long long) id);
        fake_symlink(root, rel, target);
}

void fake_add_block(const char *root, uint64_t id, int node, const char *state, const char *valid_zones) {
        char rel[256];
        unsigned long long n = (unsigned long long) id;

        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", n);
        fake_write(root, rel, "%s\n", state);
        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/valid_zones", n);
        fake_write(root, rel, "%s\n", valid_zones);
        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/phys_index", n);
        fake_write(root, rel, "%08llx\n", n);
        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/removable", n);
        fake_write(root, rel, "1\n");
        if (node >= 0)
                fake_link_block(root, id, node);
}

void fake_remove_block(const char *root, uint64_t id, int node) {
        static const char *const files[] = { "state", "valid_zones", "phys_index", "removable" };
        unsigned long long n = (unsigned long long) id;
        char rel[256];

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/%s", n, files[i]);
                fake_unlink(root, rel);
        }
        if (node >= 0) {
                snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/node%d", n, node);
                fake_unlink(root, rel);
                snprintf(rel, sizeof(rel), "devices/system/node/node%d/memory%llu", node, n);
                fake_unlink(root, rel);
        }
        snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu", n);
        fake_rmdir(root, rel);
}

void fake_standard_machine(const char *root) {
        fake_memory_init(root, 128ULL << 20);
        fake_write(root, "devices/system/cpu/online", "0-7\n");
        fake_write(root, "devices/system/cpu/possible", "0-7\n");
        fake_write(root, "devices/system/cpu/present", "0-7\n");
        fake_write(root, "devices/system/cpu/isolated", "\n");
        fake_write(root, "devices/system/node/online", "0-2\n");
        fake_write(root, "devices/system/node/possible", "0-2\n");
        fake_write(root, "devices/system/node/has_cpu", "0-1\n");
        fake_write(root, "devices/system/node/has_memory", "0-1\n");
        fake_add_node(root, 0, "0-3", "10 20 30");
        fake_add_node(root, 1, "4-7", "20 10 17");
        fake_add_node(root, 2, "", "30 17 10");
        fake_add_cpu(root, 0, 0, "0,2", true);
        fake_add_cpu(root, 1, 0, "1,3", true);
        fake_add_cpu(root, 2, 0, "0,2", true);
        fake_add_cpu(root, 3, 0, "1,3", true);
        fake_add_cpu(root, 4, 1, "4,6", true);
        fake_add_cpu(root, 5, 1, "5,7", true);
        fake_add_cpu(root, 6, 1, "4,6", true);
        fake_add_cpu(root, 7, 1, "5,7", true);
        for (uint64_t b = 0; b < 8; b++)
                fake_add_block(root, b, 0, "online", b == 0 ? "DMA32" : "Normal");
        for (uint64_t b = 8; b < 16; b++)
                fake_add_block(root, b, 1, "online", "Normal");
}

void fake_remove_dir_tree(const char *root, const char *rel) {
        char *cmd;

        /* Never above the tree, never a quote to break out of. */
        if (!*rel || rel[0] == '/' || strstr(rel, "..") || strchr(rel, '\''))
                die("remove", rel);
        if (asprintf(&cmd, "rm -rf '%s/%s'", root, rel) < 0)
                abort();
        if (system(cmd) != 0)
                die("rm -rf", rel);
        free(cmd);
}

void fake_rmdir(const char *root, const char *rel) {
        char *p = join(root, rel);

        if (rmdir(p) < 0)
                die("rmdir", p);
        free(p);
}

static void put(const char *dir, const char *name, const char *content) {
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        if (!f || fputs(content, f) < 0 || fclose(f) != 0)
                die("write", path);
}

/* Same layout as fake_add_block(), without creating every parent each time. */
void fake_add_blocks(const char *root, uint64_t first, uint64_t count, int node, const char *state,
                     const char *valid_zones) {
        char dir[4096], path[4096 + 64], target[64], buf[256];

        fake_mkdir(root, "devices/system/memory");
        if (node >= 0) {
                snprintf(dir, sizeof(dir), "devices/system/node/node%d", node);
                fake_mkdir(root, dir);
        }
        for (uint64_t id = first; id < first + count; id++) {
                unsigned long long n = (unsigned long long) id;

                snprintf(dir, sizeof(dir), "%s/devices/system/memory/memory%llu", root, n);
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        die("mkdir", dir);
                snprintf(buf, sizeof(buf), "%s\n", state);
                put(dir, "state", buf);
                snprintf(buf, sizeof(buf), "%s\n", valid_zones);
                put(dir, "valid_zones", buf);
                snprintf(buf, sizeof(buf), "%08llx\n", n);
                put(dir, "phys_index", buf);
                put(dir, "removable", "1\n");
                if (node < 0)
                        continue;
                snprintf(path, sizeof(path), "%s/node%d", dir, node);
                snprintf(target, sizeof(target), "../../node/node%d", node);
                if (symlink(target, path) < 0 && errno != EEXIST)
                        die("symlink", path);
                snprintf(path, sizeof(path), "%s/devices/system/node/node%d/memory%llu", root, node, n);
                snprintf(target, sizeof(target), "../../memory/memory%llu", n);
                if (symlink(target, path) < 0 && errno != EEXIST)
                        die("symlink", path);
        }
}

void fake_add_acpi_dimm(const char *root, const char *name, uint64_t first, uint64_t n) {
        for (uint64_t i = 0; i < n; i++) {
                char *rel = NULL, *target = NULL;

                if ((i == 0 ? asprintf(&rel, "bus/acpi/devices/%s/physical_node", name)
                            : asprintf(&rel, "bus/acpi/devices/%s/physical_node%llu", name, (unsigned long long) i)) < 0 ||
                    asprintf(&target, "../../../../devices/system/memory/memory%llu",
                             (unsigned long long) (first + i)) < 0)
                        abort();
                fake_symlink(root, rel, target);
                free(rel);
                free(target);
        }
}

/* "../" once per component of dir plus one: from a file in dir back up to the root. Static buffer. */
static const char *up_to_root(const char *dir) {
        static char buf[512];

        buf[0] = '\0';
        for (const char *s = dir; *s; s++)
                if (*s == '/')
                        strncat(buf, "../", sizeof(buf) - strlen(buf) - 1);
        strncat(buf, "../", sizeof(buf) - strlen(buf) - 1);
        return buf;
}

/* A dev_dax's own files, its driver link and its bus/dax/devices link. */
static void dax_device_files(const char *root, const char *dev_dir, int region, int id, uint64_t start,
                             uint64_t size, int target_node, const char *driver) {
        char rel[512], target[512];

        snprintf(rel, sizeof(rel), "%s/size", dev_dir);
        fake_write(root, rel, "%llu\n", (unsigned long long) size);
        snprintf(rel, sizeof(rel), "%s/resource", dev_dir);
        fake_write(root, rel, "%#llx\n", (unsigned long long) start);
        snprintf(rel, sizeof(rel), "%s/numa_node", dev_dir);
        fake_write(root, rel, "%d\n", target_node >= 0 ? target_node : -1);
        if (target_node >= 0) {
                snprintf(rel, sizeof(rel), "%s/target_node", dev_dir);
                fake_write(root, rel, "%d\n", target_node);
        }
        if (driver) {
                fake_mkdir(root, "bus/dax/drivers/kmem");
                fake_mkdir(root, "bus/dax/drivers/device_dax");
                snprintf(rel, sizeof(rel), "%s/driver", dev_dir);
                snprintf(target, sizeof(target), "%sbus/dax/drivers/%s", up_to_root(dev_dir), driver);
                fake_symlink(root, rel, target);
        }
        snprintf(rel, sizeof(rel), "bus/dax/devices/dax%d.%d", region, id);
        snprintf(target, sizeof(target), "../../../%s", dev_dir);
        fake_symlink(root, rel, target);
}

char *fake_add_dax_device(const char *root, const struct fake_dax *d) {
        char *region_dir, *dev_dir, rel[512];

        if (d->no_nd) {
                if (asprintf(&region_dir, "devices/platform/hmem.%d", d->region) < 0)
                        abort();
                if (asprintf(&dev_dir, "%s/dax%d.%d", region_dir, d->region, d->id) < 0)
                        abort();
        } else {
                if (asprintf(&region_dir, "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region%d",
                             d->region) < 0)
                        abort();
                snprintf(rel, sizeof(rel), "%s/uevent", region_dir);
                fake_write(root, rel, "DEVTYPE=%s\nMODALIAS=nd:t%d\n",
                           d->volatile_region ? "nd_volatile" : "nd_pmem", d->volatile_region ? 5 : 2);
                snprintf(rel, sizeof(rel), "%s/nstype", region_dir);
                fake_write(root, rel, "%d\n", d->volatile_region ? 4 : 5);
                snprintf(rel, sizeof(rel), "%s/dax_seed", region_dir);
                fake_write(root, rel, "dax%d.%d\n", d->region, d->id + 1);
                snprintf(rel, sizeof(rel), "%s/pfn_seed", region_dir);
                fake_write(root, rel, "pfn%d.0\n", d->region);
                snprintf(rel, sizeof(rel), "%s/resource", region_dir);
                fake_write(root, rel, "%#llx\n", (unsigned long long) (d->region_start ?: d->start));
                snprintf(rel, sizeof(rel), "%s/badblocks", region_dir);
                if (!d->no_badblocks)
                        fake_write(root, rel, "%s", d->badblocks ?: "");
                if (d->ns_uuid) {
                        snprintf(rel, sizeof(rel), "%s/namespace%d.%d/uuid", region_dir, d->region, d->id);
                        fake_write(root, rel, "%s\n", d->ns_uuid);
                }
                snprintf(rel, sizeof(rel), "%s/dax%d.%d/namespace", region_dir, d->region, d->id);
                fake_write(root, rel, "namespace%d.%d\n", d->region, d->id);
                if (d->dax_uuid) {
                        snprintf(rel, sizeof(rel), "%s/dax%d.%d/uuid", region_dir, d->region, d->id);
                        fake_write(root, rel, "%s\n", d->dax_uuid);
                }
                if (asprintf(&dev_dir, "%s/dax%d.%d/dax%d.%d", region_dir, d->region, d->id, d->region, d->id) < 0)
                        abort();
        }

        dax_device_files(root, dev_dir, d->region, d->id, d->start, d->size, d->target_node, d->driver);
        if (d->memmap_on_memory) {
                snprintf(rel, sizeof(rel), "%s/memmap_on_memory", dev_dir);
                fake_write(root, rel, "%s\n", d->memmap_on_memory);
        }
        free(region_dir);
        return dev_dir;
}

/* A driver link under dir to bus/nd/drivers/DRIVER. */
static void nd_driver(const char *root, const char *dir, const char *driver) {
        char rel[512], target[512];

        snprintf(rel, sizeof(rel), "%s/driver", dir);
        snprintf(target, sizeof(target), "%sbus/nd/drivers/%s", up_to_root(dir), driver);
        fake_symlink(root, rel, target);
}

void fake_add_nd_namespace(const char *root, const struct fake_nd_namespace *ns) {
        char region_dir[256], ns_dir[320], rel[512], target[512];

        snprintf(region_dir, sizeof(region_dir), "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/region%d",
                 ns->region);
        snprintf(rel, sizeof(rel), "%s/uevent", region_dir);
        fake_write(root, rel, "DEVTYPE=nd_pmem\nMODALIAS=nd:t2\n");
        snprintf(rel, sizeof(rel), "%s/size", region_dir);
        fake_write(root, rel, "%llu\n", (unsigned long long) ns->region_size);
        if (ns->target_node >= 0) {
                snprintf(rel, sizeof(rel), "%s/target_node", region_dir);
                fake_write(root, rel, "%d\n", ns->target_node);
        }
        if (!ns->region_disabled)
                nd_driver(root, region_dir, "nd_region");
        snprintf(rel, sizeof(rel), "bus/nd/devices/region%d", ns->region);
        snprintf(target, sizeof(target), "../../../%s", region_dir);
        fake_symlink(root, rel, target);

        snprintf(ns_dir, sizeof(ns_dir), "%s/namespace%d.%d", region_dir, ns->region, ns->id);
        snprintf(rel, sizeof(rel), "%s/size", ns_dir);
        fake_write(root, rel, "%llu\n", (unsigned long long) ns->size);
        snprintf(rel, sizeof(rel), "%s/mode", ns_dir);
        fake_write(root, rel, "%s\n", ns->mode);
        snprintf(rel, sizeof(rel), "%s/holder", ns_dir);
        fake_write(root, rel, "%s\n", ns->claim ?: "");
        if (ns->target_node >= 0) {
                snprintf(rel, sizeof(rel), "%s/target_node", ns_dir);
                fake_write(root, rel, "%d\n", ns->target_node);
        }
        if (ns->uuid) {
                snprintf(rel, sizeof(rel), "%s/uuid", ns_dir);
                fake_write(root, rel, "%s\n", ns->uuid);
        }
        if (!ns->claim) {
                if (ns->enabled)
                        nd_driver(root, ns_dir, "nd_pmem");
                return;
        }
        snprintf(ns_dir, sizeof(ns_dir), "%s/%s", region_dir, ns->claim);
        snprintf(rel, sizeof(rel), "%s/namespace", ns_dir);
        fake_write(root, rel, "namespace%d.%d\n", ns->region, ns->id);
        if (ns->enabled) {
                snprintf(rel, sizeof(rel), "%s/size", ns_dir);
                fake_write(root, rel, "%llu\n", (unsigned long long) ns->claim_size);
                nd_driver(root, ns_dir, strncmp(ns->claim, "dax", 3) == 0 ? "dax_pmem" : "nd_pmem");
        }
        if (ns->claim_uuid) {
                snprintf(rel, sizeof(rel), "%s/uuid", ns_dir);
                fake_write(root, rel, "%s\n", ns->claim_uuid);
        }
}

/* The endpoint behind memM: port1/endpoint<M+2>, as the 6.12 guest numbers them. */
static void cxl_memdev_files(const char *root, int memdev, int region) {
        char ep_dir[256], mem_dir[256], rel[512], target[512];
        int ep = memdev + 2;

        snprintf(mem_dir, sizeof(mem_dir), "devices/pci0000:0c/0000:0c:00.0/0000:0d:%02x.0/mem%d", memdev, memdev);
        snprintf(rel, sizeof(rel), "%s/serial", mem_dir);
        fake_write(root, rel, "%#x\n", memdev);
        snprintf(rel, sizeof(rel), "%s/ram/size", mem_dir);
        fake_write(root, rel, "0x20000000\n");
        snprintf(rel, sizeof(rel), "%s/numa_node", mem_dir);
        fake_write(root, rel, "-1\n");
        snprintf(rel, sizeof(rel), "%s/driver", mem_dir);
        snprintf(target, sizeof(target), "%sbus/cxl/drivers/cxl_mem", up_to_root(mem_dir));
        fake_symlink(root, rel, target);
        snprintf(rel, sizeof(rel), "bus/cxl/devices/mem%d", memdev);
        snprintf(target, sizeof(target), "../../../%s", mem_dir);
        fake_symlink(root, rel, target);

        snprintf(ep_dir, sizeof(ep_dir), "devices/platform/ACPI0017:00/root0/port1/endpoint%d", ep);
        snprintf(rel, sizeof(rel), "%s/decoder%d.%d/region", ep_dir, ep, region);
        fake_write(root, rel, "region%d\n", region);
        snprintf(rel, sizeof(rel), "%s/decoder%d.%d/mode", ep_dir, ep, region);
        fake_write(root, rel, "ram\n");
        snprintf(rel, sizeof(rel), "%s/uport", ep_dir);
        snprintf(target, sizeof(target), "%s%s", up_to_root(ep_dir), mem_dir);
        fake_symlink(root, rel, target);
        snprintf(rel, sizeof(rel), "bus/cxl/devices/decoder%d.%d", ep, region);
        snprintf(target, sizeof(target), "../../../%s/decoder%d.%d", ep_dir, ep, region);
        fake_symlink(root, rel, target);
}

char *fake_add_cxl_region(const char *root, const struct fake_cxl_region *r) {
        char region_dir[256], rel[512], target[512];
        char *dev_dir;

        snprintf(region_dir, sizeof(region_dir), "devices/platform/ACPI0017:00/root0/decoder0.%d/region%d",
                 r->root_decoder, r->region);
        snprintf(rel, sizeof(rel), "devices/platform/ACPI0017:00/root0/decoder0.%d/start", r->root_decoder);
        fake_write(root, rel, "%#llx\n", (unsigned long long) r->start);
        snprintf(rel, sizeof(rel), "%s/mode", region_dir);
        fake_write(root, rel, "ram\n");
        snprintf(rel, sizeof(rel), "%s/resource", region_dir);
        fake_write(root, rel, "%#llx\n", (unsigned long long) r->start);
        snprintf(rel, sizeof(rel), "%s/size", region_dir);
        fake_write(root, rel, "%#llx\n", (unsigned long long) r->size);
        snprintf(rel, sizeof(rel), "%s/interleave_ways", region_dir);
        fake_write(root, rel, "%zu\n", r->n_memdevs);
        snprintf(rel, sizeof(rel), "%s/devtype", region_dir);
        fake_write(root, rel, "cxl_region\n");
        snprintf(rel, sizeof(rel), "%s/commit", region_dir);
        fake_write(root, rel, "%d\n", r->uncommitted ? 0 : 1);
        for (size_t i = 0; i < r->n_memdevs; i++) {
                snprintf(rel, sizeof(rel), "%s/target%zu", region_dir, i);
                fake_write(root, rel, "decoder%d.%d\n", r->memdevs[i] + 2, r->region);
                cxl_memdev_files(root, r->memdevs[i], r->region);
        }
        snprintf(rel, sizeof(rel), "bus/cxl/devices/region%d", r->region);
        snprintf(target, sizeof(target), "../../../%s", region_dir);
        fake_symlink(root, rel, target);
        if (r->no_dax)
                return NULL;

        if (asprintf(&dev_dir, "%s/dax_region%d/dax%d.0", region_dir, r->region, r->region) < 0)
                abort();
        dax_device_files(root, dev_dir, r->region, 0, r->start, r->size, r->target_node, r->driver);
        snprintf(rel, sizeof(rel), "%s/mapping0/start", dev_dir);
        fake_write(root, rel, "%#llx\n", (unsigned long long) r->start);
        snprintf(rel, sizeof(rel), "%s/mapping0/end", dev_dir);
        fake_write(root, rel, "%#llx\n", (unsigned long long) (r->start + r->size - 1));
        if (r->memmap_on_memory >= 0) {
                snprintf(rel, sizeof(rel), "%s/memmap_on_memory", dev_dir);
                fake_write(root, rel, "%d\n", r->memmap_on_memory);
        }
        return dev_dir;
}

char *jq(const char *text, const char *filter) {
        char tmpl[] = "/tmp/memonline-json-XXXXXX", *cmd = NULL, *buf = NULL;
        size_t n = 0;
        int fd = mkstemp(tmpl);
        FILE *f, *p;

        if (fd < 0 || !(f = fdopen(fd, "w")))
                abort();
        fputs(text, f);
        fclose(f);
        if (asprintf(&cmd, "jq -c -r '%s' '%s'", filter, tmpl) < 0 || !(p = popen(cmd, "re")))
                abort();
        if (getdelim(&buf, &n, '\0', p) < 0) {
                free(buf);
                buf = strdup("");
        }
        /* jq failed: not JSON, or a bad filter */
        if (pclose(p) != 0 || !buf)
                abort();
        unlink(tmpl);
        free(cmd);
        while (*buf && buf[strlen(buf) - 1] == '\n')
                buf[strlen(buf) - 1] = '\0';
        return buf;
}

char *line_with(const char *s, const char *needle) {
        const char *p = strstr(s, needle), *b, *e;

        if (!p)
                return NULL;
        for (b = p; b > s && b[-1] != '\n'; b--)
                ;
        e = strchr(p, '\n');
        return strndup(b, e ? (size_t) (e - b) : strlen(b));
}

void assert_inert_text(const char *what, const char *s, bool ascii) {
        size_t n = strlen(s);

        for (size_t i = 0; i < n; ) {
                uint32_t cp = 0;
                size_t l = utf8_decode(s + i, n - i, &cp);

                if (l == 0 || (cp != '\n' && unicode_is_unsafe(cp)) || (ascii && cp > 0x7f)) {
                        fprintf(stderr, "%s: unsafe byte 0x%02x at %zu in:\n%s\n", what, (unsigned char) s[i], i, s);
                        abort();
                }
                i += l;
        }
}

char *env_set(const char *name, const char *value) {
        const char *old = getenv(name);
        char *saved = old ? strdup(old) : NULL;

        if (old && !saved)
                abort();
        setenv(name, value, 1);
        return saved;
}

void env_restore(const char *name, char *saved) {
        if (saved)
                setenv(name, saved, 1);
        else
                unsetenv(name);
        free(saved);
}
