/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <strings.h>
#include "pmem.h"
#include "pmem-memmap.h"
#include "string-table.h"
#include "sysfs.h"
#include "util.h"

#define MEMMAP_PARAM "module/memory_hotplug/parameters/memmap_on_memory"

static const char *const pmem_memmap_table[] = {
        [PMEM_MEMMAP_UNSUPPORTED] = "unsupported",
        [PMEM_MEMMAP_NO] = "no",
        [PMEM_MEMMAP_YES] = "yes",
};

DEFINE_STRING_TABLE_TO_STRING(pmem_memmap, enum pmem_memmap, "unsupported")

enum pmem_memmap_global pmem_memmap_parse_global(const char *v) {
        /* A bool parameter prints Y or N; since 6.6 "force" is on too. */
        if (streq(v, "Y") || strcasecmp(v, "force") == 0)
                return PMEM_MEMMAP_GLOBAL_ON;
        if (streq(v, "N"))
                return PMEM_MEMMAP_GLOBAL_OFF;
        return PMEM_MEMMAP_GLOBAL_UNKNOWN;
}

enum pmem_memmap_global pmem_memmap_read_global(const char *sysfs_root) {
        _cleanup_free_ char *v = NULL;
        int r;

        r = sysfs_read(sysfs_root, MEMMAP_PARAM, &v);
        if (r == -ENOENT)
                return PMEM_MEMMAP_GLOBAL_ABSENT;
        if (r < 0)
                return PMEM_MEMMAP_GLOBAL_UNKNOWN;
        return pmem_memmap_parse_global(v);
}

static void outcome_reason(struct pmem_memmap_outcome *o, const char *fmt, ...) _printf_(2, 3);
static void outcome_reason(struct pmem_memmap_outcome *o, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(o->reason, sizeof(o->reason), fmt, ap);
        va_end(ap);
}

/* Why the kernel will not put the memmap on the memory, whatever the device says; NULL if it may. */
static const char *global_refusal(enum pmem_memmap_global global) {
        switch (global) {
        case PMEM_MEMMAP_GLOBAL_ABSENT:
                return "the kernel is built without CONFIG_MHP_MEMMAP_ON_MEMORY";
        case PMEM_MEMMAP_GLOBAL_OFF:
                return "memory_hotplug.memmap_on_memory is off (a boot parameter: add "
                       "memory_hotplug.memmap_on_memory=1 to the kernel command line)";
        default:
                return NULL;
        }
}

/* What a bind does with the attribute as it is. */
static enum pmem_memmap as_is(int attr, enum pmem_memmap_global global) {
        if (attr < 0)
                return PMEM_MEMMAP_UNSUPPORTED;
        return attr == 1 && global == PMEM_MEMMAP_GLOBAL_ON ? PMEM_MEMMAP_YES : PMEM_MEMMAP_NO;
}

void pmem_memmap_plan(enum memmap_setting setting, int attr, enum pmem_memmap_global global,
                      int *ret_write, struct pmem_memmap_outcome *ret) {
        struct pmem_memmap_outcome o = { .effective = as_is(attr, global) };
        const char *refusal = global_refusal(global);
        int write = -1;

        if (attr < 0) {
                /* Before 6.8 kmem always put the memmap in ordinary memory: "no" is met, "yes" is not. */
                o.unmet = setting == MEMMAP_ON;
                if (o.unmet)
                        outcome_reason(&o, "this kernel has no per-device memmap_on_memory (the dax attribute "
                                       "came in Linux 6.8): the memmap goes to ordinary memory");
        } else if (setting == MEMMAP_OFF) {
                if (attr != 0)
                        write = 0;
                o.effective = PMEM_MEMMAP_NO;
        } else if (setting == MEMMAP_ON) {
                if (refusal) {
                        o.unmet = true;
                        o.effective = PMEM_MEMMAP_NO;
                        outcome_reason(&o, "%s", refusal);
                } else {
                        /* Even when it reads 1: the kernel checks its support on every write of 1. */
                        write = 1;
                        o.effective = PMEM_MEMMAP_YES;
                }
        } else if (attr == 1 && o.effective == PMEM_MEMMAP_NO)
                outcome_reason(&o, "the device's memmap_on_memory reads 1, but %s", refusal ?: "the state of "
                               "memory_hotplug.memmap_on_memory is unknown");
        if (ret_write)
                *ret_write = write;
        if (ret)
                *ret = o;
}

/* The device directory itself: bus/dax/devices/DEVICE resolved, so the write follows no link. */
static int device_dir(const char *sysfs_root, const char *device, char **ret) {
        _cleanup_free_ char *link = NULL;

        if (pmem_dax_name_parse(device, NULL, NULL) < 0)
                return -EINVAL;
        if (asprintf(&link, "bus/dax/devices/%s", device) < 0) {
                link = NULL;
                return -ENOMEM;
        }
        return pmem_resolve_in_root(sysfs_root, link, ret);
}

int pmem_memmap_read_attr(const char *sysfs_root, const char *rel_dev, int *ret) {
        _cleanup_free_ char *v = NULL;
        int r;

        if (!rel_dev || !ret)
                return -EINVAL;
        r = pmem_read_attr(sysfs_root, rel_dev, "memmap_on_memory", &v);
        if (r < 0)
                return r;
        return pmem_memmap_parse_attr(v, ret);
}

int pmem_memmap_parse_attr(const char *v, int *ret) {
        if (!v || !ret || (!streq(v, "0") && !streq(v, "1")))
                return -EINVAL;
        *ret = v[0] == '1';
        return 0;
}

static const char *write_refusal(int error) {
        switch (-error) {
        case EOPNOTSUPP:
                return "the kernel refuses memmap_on_memory for this memory (memory_hotplug.memmap_on_memory "
                       "is off, or a memory block's memmap does not fill whole pageblocks and 2 MiB pages)";
        case EBUSY:
                return "the device is bound to kmem already: the setting counts only before the bind";
        case ENXIO:
                return "the device's dax region has no driver";
        default:
                return NULL;
        }
}

void pmem_memmap_settle(enum memmap_setting setting, enum pmem_memmap_global global, int write, int error,
                        int attr, struct pmem_memmap_outcome *ret) {
        struct pmem_memmap_outcome o = {};
        const char *why;

        if (error >= 0 && attr == write) {
                pmem_memmap_plan(setting, attr, global, NULL, &o);
                *ret = o;
                return;
        }
        if (error >= 0)
                error = -EIO;
        o.error = error;
        /* EOPNOTSUPP is the kernel saying it cannot, whatever the device reads. */
        o.effective = error == -EOPNOTSUPP ? PMEM_MEMMAP_NO : as_is(attr, global);
        o.unmet = (setting == MEMMAP_ON && o.effective != PMEM_MEMMAP_YES) ||
                  (setting == MEMMAP_OFF && o.effective != PMEM_MEMMAP_NO);
        why = write_refusal(error);
        if (error == -EIO && attr >= 0)
                outcome_reason(&o, "wrote %d to memmap_on_memory, but it reads %d", write, attr);
        else
                outcome_reason(&o, "writing %d to memmap_on_memory failed: %s%s%s", write, strerror(-error),
                               why ? ": " : "", why ?: "");
        *ret = o;
}

int pmem_memmap_apply(const char *sysfs_root, const char *device, enum memmap_setting setting,
                      struct pmem_memmap_outcome *ret) {
        enum pmem_memmap_global global;
        _cleanup_free_ char *dir = NULL, *rel = NULL;
        int attr = -1, write, r;

        if (!ret)
                return -EINVAL;
        global = pmem_memmap_read_global(sysfs_root);
        r = device_dir(sysfs_root, device, &dir);
        if (r >= 0)
                r = pmem_memmap_read_attr(sysfs_root, dir, &attr);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && r != -ENOENT) {
                /* Unreadable: write nothing; the bind does what the kernel set. */
                *ret = (struct pmem_memmap_outcome) {
                        .effective = PMEM_MEMMAP_UNSUPPORTED,
                        .unmet = setting == MEMMAP_ON || setting == MEMMAP_OFF,
                        .error = r,
                };
                outcome_reason(ret, "cannot read the device's memmap_on_memory: %s; left as the kernel set it",
                               strerror(-r));
                return r;
        }
        pmem_memmap_plan(setting, attr, global, &write, ret);
        if (write < 0)
                return 0;

        if (asprintf(&rel, "%s/memmap_on_memory", dir) < 0) {
                rel = NULL;
                return -ENOMEM;
        }
        r = sysfs_write(sysfs_root, rel, write ? "1" : "0");
        /* Read back what the bind will see. */
        if (pmem_memmap_read_attr(sysfs_root, dir, &attr) < 0)
                attr = -1;
        pmem_memmap_settle(setting, global, write, r, attr, ret);
        return ret->error;
}
