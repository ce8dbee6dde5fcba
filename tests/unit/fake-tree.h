/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Fake sysfs trees in a temp dir, laid out like the kernel's:
 *   devices/system/cpu/cpuN/{online,topology/thread_siblings_list,nodeM}
 *   devices/system/node/nodeN/{cpulist,distance,memoryM,access1/initiators/nodeK}
 *   devices/system/memory/{block_size_bytes,auto_online_blocks,memoryN/{state,valid_zones,phys_index,nodeK}}
 * Helpers abort the test on failure (they are test scaffolding).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

char *fake_tree_new(void);                      /* mkdtemp; returns the root */
/* On tmpfs (/dev/shm) when there is one, for trees with many thousand files. */
char *fake_tree_new_fast(void);
void fake_tree_free(char *root);                /* rm -rf and free */

void fake_write(const char *root, const char *rel, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void fake_symlink(const char *root, const char *rel_link, const char *target);
void fake_mkdir(const char *root, const char *rel);
void fake_unlink(const char *root, const char *rel);
/* Contents of a file, newline stripped; caller frees. NULL if missing. */
char *fake_read(const char *root, const char *rel);

/* memory/block_size_bytes in hex, plus auto_online_blocks = "offline". */
void fake_memory_init(const char *root, uint64_t block_size);
/* cpuN on node, with its thread_siblings_list; online "1" unless !online. */
void fake_add_cpu(const char *root, unsigned cpu, int node, const char *siblings, bool online);
/* nodeN with cpulist and distance line ("10 20 30"); updates node/online, has_cpu lists are not kept. */
void fake_add_node(const char *root, int node, const char *cpulist, const char *distance);
/* HMAT: node's access1/initiators/nodeK link. */
void fake_add_initiator(const char *root, int node, int initiator);
/* memoryN with state and valid_zones; node < 0 means no node link (yet). */
void fake_add_block(const char *root, uint64_t id, int node, const char *state, const char *valid_zones);
/* Many blocks at once (first..first+count-1), quicker than fake_add_block() per block. */
void fake_add_blocks(const char *root, uint64_t first, uint64_t count, int node, const char *state,
                     const char *valid_zones);
/* Take memoryN and its node links away, as a hot-remove does. */
void fake_remove_block(const char *root, uint64_t id, int node);
/* Remove an empty directory. */
void fake_rmdir(const char *root, const char *rel);
/* Remove a directory and all beneath it, as a device going away takes its sysfs directory. */
void fake_remove_dir_tree(const char *root, const char *rel);
/* Add the nodeK link to memoryN (and memoryN under nodeK) later, as the kernel does. */
void fake_link_block(const char *root, uint64_t id, int node);
/*
 * An ACPI memory device (a DIMM) PNP0C80:name holding blocks first..first+n-1,
 * linked as the kernel does: bus/acpi/devices/NAME/physical_node, physical_node1, ...
 */
void fake_add_acpi_dimm(const char *root, const char *name, uint64_t first, uint64_t n);

/*
 * A standard test machine:
 *   node0: CPUs 0-3 (cores {0,2},{1,3}), node1: CPUs 4-7 (cores {4,6},{5,7}),
 *   node2: CPU-less, distance 0-1 20, 0-2 30, 1-2 17 (node1 nearer node2).
 *   block size 128 MiB; boot blocks 0-7 online Normal on node0, 8-15 on node1.
 */
void fake_standard_machine(const char *root);

/*
 * A dax device on an nd bus, laid out as the kernel does (see daemon/pmem.c):
 *   devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0012:00/ndbus0/regionR/{uevent,nstype,dax_seed,pfn_seed,
 *                                                               resource,badblocks}
 *   .../regionR/namespaceR.N/uuid                      (ns_uuid)
 *   .../regionR/daxR.N/{namespace,uuid}                (the nd_dax; uuid = dax_uuid)
 *   .../regionR/daxR.N/daxR.N/{size,resource,target_node,numa_node,memmap_on_memory,driver}
 *   bus/dax/devices/daxR.N -> the last directory
 * With no_nd the device sits under devices/platform/hmem.R instead (no region).
 */
struct fake_dax {
        int region, id;                 /* daxR.N claiming namespaceR.N */
        const char *driver;             /* "kmem", "device_dax", NULL = unbound */
        uint64_t start, size;
        int target_node;                /* < 0: no target_node attribute (as the kernel hides it) */
        const char *ns_uuid;            /* NULL: no namespace uuid file */
        const char *dax_uuid;           /* NULL: no nd_dax uuid file */
        bool volatile_region;           /* DEVTYPE=nd_volatile instead of nd_pmem */
        bool no_nd;                     /* not under an nd bus (hmem-like) */
        const char *memmap_on_memory;   /* the attribute's text ("0", "1"); NULL: none (before 6.8) */
        uint64_t region_start;          /* the region's resource; 0: the device's start */
        const char *badblocks;          /* the region's badblocks text, as written; NULL: empty (none) */
        bool no_badblocks;              /* the region has no badblocks file */
};
/* Returns the device directory relative to root (caller frees), e.g. for mappingK or removal. */
char *fake_add_dax_device(const char *root, const struct fake_dax *d);

/*
 * What `ndctl list -R -N` reads of a region and one of its namespaces,
 * beside what fake_add_dax_device() lays out (6.1 and 6.12 alike):
 *   bus/nd/devices/regionR -> devices/.../ndbus0/regionR/{size,target_node,uevent,driver}
 *   .../regionR/namespaceR.N/{size,mode,holder,target_node,uuid,driver}
 *   .../regionR/<claim>/{size,uuid,namespace,driver}
 */
struct fake_nd_namespace {
        int region, id;                 /* namespaceR.N in regionR */
        uint64_t region_size;
        int target_node;                /* region's and namespace's; < 0: no attribute */
        const char *mode;               /* the kernel's: "raw", "memory", "dax", "safe" */
        uint64_t size;                  /* the namespace's own (0: a seed) */
        const char *claim;              /* "dax0.0", "pfn0.0", "btt0.0"; NULL: unclaimed */
        uint64_t claim_size;            /* usable bytes after the claim's info block */
        bool enabled;                   /* the claim's driver bound, or the namespace's when unclaimed */
        const char *uuid, *claim_uuid;  /* NULL: no such attribute */
        bool region_disabled;           /* no driver on the region */
};
void fake_add_nd_namespace(const char *root, const struct fake_nd_namespace *ns);

/*
 * A CXL RAM region as Debian 13's 6.12 kernel lays it out (tests/vm/README.md,
 * "CXL in the 6.12 guest"):
 *   devices/platform/ACPI0017:00/root0/decoder0.D/regionR/{mode,resource,size,interleave_ways,targetI}
 *   .../regionR/dax_regionR/daxR.0/{size,resource,target_node,numa_node,mapping0/,memmap_on_memory,driver}
 *   devices/platform/ACPI0017:00/root0/port1/endpointE/{uport,decoderE.R/}, E = M + 2 for memM
 *   devices/pci0000:0c/0000:0c:00.0/0000:0d:MM.0/memM/{serial,numa_node,ram/size (512 MiB),driver}
 *   bus/dax/devices/daxR.0, bus/cxl/devices/{regionR,decoderE.R,memM}
 * targetI names position I's endpoint decoder (decoderE.R).
 */
struct fake_cxl_region {
        int region;                     /* regionR, dax_regionR, daxR.0 */
        int root_decoder;               /* decoder0.D, the CXL window */
        uint64_t start, size;
        int target_node;
        const char *driver;             /* "kmem" (6.12 binds it at once), "device_dax", NULL */
        const int *memdevs;             /* memM of each interleave position */
        size_t n_memdevs;
        int memmap_on_memory;           /* the dax device's attribute: 0, 1, or -1 for none (before 6.8) */
        bool no_dax;                    /* no dax device on it (yet) */
        bool uncommitted;               /* commit reads 0 */
};
/* Returns the dax device directory relative to root (caller frees), NULL with no_dax. */
char *fake_add_cxl_region(const char *root, const struct fake_cxl_region *r);

/* Run jq -c -r with filter over text; its stdout, trailing newlines cut. Aborts if jq fails. Caller frees. */
char *jq(const char *text, const char *filter);
/* The first line of s that contains needle, copied; NULL if none. */
char *line_with(const char *s, const char *needle);

/*
 * Text that tries everything on a terminal: every C0 control but NUL, DEL,
 * every C1 control (as UTF-8 and as raw bytes), the bidi controls, the line
 * and paragraph separators, invalid UTF-8 (stray bytes, overlong forms,
 * surrogates, past U+10FFFF, a cut sequence), a literal "\x1b" and XML's
 * specials. Printable ends, so nothing trims it; no '/', so it can name a
 * file too.
 */
#define HOSTILE_C0 \
        "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10" \
        "\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f"
#define HOSTILE_C1 \
        "\xc2\x80\xc2\x81\xc2\x82\xc2\x83\xc2\x84\xc2\x85\xc2\x86\xc2\x87" \
        "\xc2\x88\xc2\x89\xc2\x8a\xc2\x8b\xc2\x8c\xc2\x8d\xc2\x8e\xc2\x8f" \
        "\xc2\x90\xc2\x91\xc2\x92\xc2\x93\xc2\x94\xc2\x95\xc2\x96\xc2\x97" \
        "\xc2\x98\xc2\x99\xc2\x9a\xc2\x9b\xc2\x9c\xc2\x9d\xc2\x9e\xc2\x9f"
/* U+061C, U+200E/F, U+202A..E, U+2066..9, U+2028/9 */
#define HOSTILE_BIDI \
        "\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae" \
        "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9\xe2\x80\xa8\xe2\x80\xa9"
/* 25 bytes that are no UTF-8 */
#define HOSTILE_INVALID \
        "\x85\x9b\xff\xfe\xc0\xaf\xe0\x80\xaf\xf0\x80\x80\xaf\xed\xa0\x80\xed\xbf\xbf\xf4\x90\x80\x80\xe2\x80"
#define HOSTILE_FFFD_25 \
        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" \
        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" \
        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" \
        "\xef\xbf\xbd"
#define HOSTILE_TEXT "h:" HOSTILE_C0 HOSTILE_C1 HOSTILE_BIDI HOSTILE_INVALID "x\\x1b<&>\"'!"
/* HOSTILE_TEXT as a JSON parser gives it back: every byte that is no UTF-8 a U+FFFD. */
#define HOSTILE_DECODED "h:" HOSTILE_C0 HOSTILE_C1 HOSTILE_BIDI HOSTILE_FFFD_25 "x\\x1b<&>\"'!"

/*
 * Abort, saying what and where, unless s is inert on a terminal:
 * well-formed UTF-8 with no unsafe code point (unicode_is_unsafe()) but
 * the newline, and only ASCII with ascii.
 */
void assert_inert_text(const char *what, const char *s, bool ascii);

/* setenv(name, value); what it was before (NULL: unset), for env_restore(), which frees it. */
char *env_set(const char *name, const char *value);
void env_restore(const char *name, char *saved);
