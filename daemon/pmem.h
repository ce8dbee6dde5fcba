/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "blocks.h"
#include "policy.h"

/*
 * dax devices: which memory blocks belong to which device, namespace and
 * region; whether a devdax device should become system-ram; and the
 * conversion itself through libdaxctl (kmem, without onlining: the
 * daemon's workers online the blocks the kernel then adds).
 *
 * Scanning reads <root>/bus/dax/devices, so tests use fake trees. The
 * conversion only works on the real /sys (libdaxctl has it built in).
 */

/* Where daxctl looks for its own reconfigure-device entries by default. */
#define PMEM_DAXCTL_CONFDIR "/etc/daxctl.conf.d"

enum pmem_mode {
        PMEM_MODE_UNKNOWN = 0,          /* no driver bound, or a driver we do not know */
        PMEM_MODE_DEVDAX,               /* bound to device_dax */
        PMEM_MODE_SYSTEM_RAM,           /* bound to kmem */
};

const char *pmem_mode_to_string(enum pmem_mode m);     /* "unknown", "devdax", "system-ram" */

struct pmem_range {
        uint64_t start, end;            /* physical, end exclusive */
};

struct pmem_device {
        char *name;                     /* "dax0.0" */
        enum pmem_mode mode;
        char *driver;                   /* driver link basename, NULL if unbound */
        uint64_t resource;              /* start of the first range (0 if unreadable) */
        uint64_t size;                  /* bytes */
        int target_node;                /* node kmem adds the memory to; NODE_NONE if absent */
        int numa_node;                  /* node of the device itself; NODE_NONE if absent */
        struct pmem_range *ranges;      /* ascending, from mappingN or resource+size */
        size_t n_ranges;
        /* libnvdimm attribution, NULL / -1 when the device is not on an nd bus */
        char *namespace_name;           /* "namespace0.0" */
        char *namespace_uuid;           /* what `ndctl list` shows as "uuid" and daxctl.conf
                                           matches as nvdimm.uuid: the nd_dax info-block uuid */
        char *namespace_raw_uuid;       /* the namespace's own uuid (`ndctl list` "raw_uuid") */
        int region;                     /* nd region id */
        bool on_pmem_region;            /* the region is an nd_pmem region */
};

struct pmem_devices {
        struct pmem_device *devices;    /* ascending by (region, id) of the daxR.N name */
        size_t n, allocated;
        /* Devices that exist but could not be read: which blocks are theirs is unknown. */
        size_t n_unreadable;
        char unreadable_name[32];       /* the first of them, and why */
        int unreadable_error;
};

void pmem_device_done(struct pmem_device *dev);         /* frees contents */
void pmem_devices_clear(struct pmem_devices *d);        /* frees contents, keeps struct */
const struct pmem_device *pmem_devices_find(const struct pmem_devices *d, const char *name);

/*
 * Read one dax device ("dax0.0") from <root>/bus/dax/devices. -ENOENT if
 * it is not there or vanished while being read; -EINVAL for a bad name.
 */
int pmem_read_device(const char *sysfs_root, const char *name, struct pmem_device *ret);

/*
 * Read every dax device. Devices that vanish during the scan are left out;
 * devices that cannot be read are left out and counted in n_unreadable.
 * Replaces the contents of *ret on success (a missing bus/dax is an empty
 * set). Returns the number of devices read; -ENOMEM, or -errno when the
 * bus cannot be listed.
 */
int pmem_scan(const char *sysfs_root, struct pmem_devices *ret);

/*
 * Attribute blocks to the system-ram (kmem) devices whose ranges hold
 * them whole: set device, namespace_name, namespace_uuid and region, and
 * the node from target_node when the block's node is NODE_NONE or only
 * guessed (kmem adds the memory to exactly that node). Blocks outside
 * every device are left alone. O(n log m). Returns the number attributed.
 */
int pmem_attribute_blocks(const struct pmem_devices *d, uint64_t block_size, struct block_set *set);

/* ---- daxctl's own configuration (daxctl.conf.d) ---------------------- */

/*
 * One "[reconfigure-device NAME]" section that daxctl reconfigure-device
 * --check-config (run by its udev rule for every new dax device) acts on.
 */
struct daxctl_claim {
        char *file;                     /* "daxctl.conf.d/NAME.conf" for messages */
        char *section;                  /* NAME */
        char *uuid;                     /* nvdimm.uuid */
        char *mode;                     /* "system-ram" or "devdax" */
        int online;                     /* -1 unset (daxctl then onlines), 0, 1 */
        int movable;                    /* -1 unset (daxctl then uses movable), 0, 1 */
};

struct daxctl_conf {
        struct daxctl_claim *claims;    /* file order (alphabetical), then section order */
        size_t n_claims, allocated_claims;
        char **ignored;                 /* "FILE:LINE: reason" for files/sections ignored */
        size_t n_ignored, allocated_ignored;
};

/*
 * Load every regular *.conf file in dir with libiniparser, the parser
 * daxctl uses, so the files read the same to both. A missing dir is an
 * empty config. Files iniparser rejects (daxctl then fails) and sections
 * daxctl would never act on never fail the load: they are left out and
 * explained in ret->ignored. Only regular files of at most 1 MiB are read.
 * Replaces *ret.
 */
int pmem_daxctl_conf_load(const char *dir, struct daxctl_conf *ret);
void pmem_daxctl_conf_clear(struct daxctl_conf *c);
/* First claim (file order) for this nvdimm.uuid, and how many claim it in total. */
const struct daxctl_claim *pmem_daxctl_conf_find(const struct daxctl_conf *c, const char *uuid, size_t *ret_count);
/* libdaxctl's configured directory (its build-time DAXCTL_CONF_DIR), else PMEM_DAXCTL_CONFDIR. */
int pmem_daxctl_confdir(char **ret);

/* ---- decisions ------------------------------------------------------- */

enum pmem_action {
        PMEM_ACTION_SKIP = 0,
        PMEM_ACTION_CONVERT,            /* devdax -> system-ram, no onlining */
};

const char *pmem_action_to_string(enum pmem_action a);  /* "skip", "convert" */

struct pmem_decision {
        enum pmem_action action;
        enum zone zone;                 /* for its blocks: rule, pmem_zone, default_zone; never UNSET */
        const struct device_rule *rule; /* borrowed from the policy, NULL if none matched */
        bool daxctl_claimed;            /* daxctl.conf.d has an entry for it */
        char reason[320];
};

/*
 * Should memonlined convert this device? Order: EXCLUDE_DEVICE exclusions
 * (by device, namespace name or uuid), mode (only devdax converts), the
 * first matching [device] rule's convert=, else convert_devdax (which only
 * covers devices on pmem regions; others need a rule), then daxctl's own
 * config when respect_daxctl=yes. daxctl_confdir NULL skips the daxctl check.
 */
int pmem_decide(const struct pmem_device *dev, const struct policy *p, const char *daxctl_confdir,
                struct pmem_decision *ret);
/* Same with an already loaded daxctl config (NULL = none). */
int pmem_decide_conf(const struct pmem_device *dev, const struct policy *p, const struct daxctl_conf *conf,
                     struct pmem_decision *ret);

/*
 * Dry-run lines, one per device:
 * device=daxX.Y action=convert|skip zone=Z reason="..." namespace=N region=R node=N size=BYTES mode=M
 * (namespace=- when unknown, region/node -1). Then one "daxctl-conf-ignored=\"...\"" line per
 * ignored daxctl.conf.d entry. Returns 0 or -errno from the stream.
 */
int pmem_print_decisions(const struct pmem_devices *d, const struct policy *p, const char *daxctl_confdir,
                         FILE *out);

/* ---- conversion ------------------------------------------------------ */

struct pmem_convert_result {
        int error;                      /* 0 or -errno, as returned */
        bool already;                   /* was system-ram already: nothing done */
        bool rolled_back;               /* kmem bind failed and the device went back to devdax */
        enum pmem_mode mode_before, mode_after;
        uint64_t disable_usec;          /* unbinding device_dax */
        uint64_t bind_usec;             /* binding kmem: the kernel adds the memory blocks */
        int target_node;
        uint64_t size;
        char reason[512];               /* what happened, or why it failed */
};

/*
 * Convert devdax device to system-ram like `daxctl reconfigure-device
 * --mode=system-ram --no-online`: refuse when auto_online_blocks is not
 * "offline", unbind device_dax, bind kmem, verify system-ram. Unlike the
 * usual rule, *ret is filled on failure too: it is the failure report.
 * libdaxctl only acts on the real /sys, so a sysfs_root that is not /sys
 * (a test tree) is refused with -EXDEV before libdaxctl runs.
 * Returns 0, or -ENOENT (no such device), -EBUSY (kernel auto-online is
 * on, or the device/range is busy), -EINVAL (not convertible: wrong mode,
 * size 0), -EOPNOTSUPP (old dax class model), -EXDEV, or another -errno.
 */
int pmem_convert(const char *sysfs_root, const char *device, struct pmem_convert_result *ret);

/* ---- reporting ------------------------------------------------------- */

struct reporter;

/*
 * One MESSAGE_ID_DEVICE record for a device whose memory was onlined:
 * MEMONLINE_DEVICE, _NAMESPACE, _REGION, _NODE, _BIND_USEC (0 if not
 * converted by us), _ONLINE_USEC, _TOTAL_USEC, _BLOCKS, _BYTES, MESSAGE;
 * conv may be NULL (converted by hand or by daxctl).
 */
int pmem_report_device(struct reporter *r, const struct pmem_device *dev, const struct pmem_convert_result *conv,
                       uint64_t online_usec, uint64_t total_usec, size_t blocks, uint64_t bytes);
