/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>
#include <daxctl/libdaxctl.h>
#include "pmem-convert.h"
#include "sysfs.h"
#include "topology.h"
#include "util.h"

/*
 * The conversion in the steps daxctl's reconfigure-device takes: find the
 * device, check it may be converted, set memmap_on_memory, unbind
 * device_dax, bind kmem, check the result. Each step fills the report and returns 0 to go on, 1 when
 * there is nothing left to do, or -errno.
 */

/* libdaxctl's last error line, so the failure report says what the library saw. */
struct daxctl_log {
        char last[256];
};

struct conversion {
        const char *sysfs_root;         /* the real /sys, however named (checked first) */
        const char *device;
        enum memmap_setting memmap;
        struct daxctl_ctx *ctx;
        struct daxctl_dev *dev;         /* borrowed from ctx */
        struct daxctl_log log;
        struct pmem_convert_result res;
};

static void conversion_done(struct conversion *c) {
        if (c->ctx)
                daxctl_unref(c->ctx);
        c->ctx = NULL;
        c->dev = NULL;
}

static void daxctl_log_capture(struct daxctl_ctx *ctx, int priority, const char *file, int line, const char *fn,
                               const char *format, va_list args) _printf_(6, 0);
static void daxctl_log_capture(struct daxctl_ctx *ctx, int priority, const char *file, int line, const char *fn,
                               const char *format, va_list args) {
        struct daxctl_log *log = daxctl_get_userdata(ctx);
        size_t n;

        if (!log)
                return;
        vsnprintf(log->last, sizeof(log->last), format, args);
        n = strlen(log->last);
        while (n > 0 && (log->last[n - 1] == '\n' || log->last[n - 1] == ' '))
                log->last[--n] = '\0';
}

static int convert_fail(struct pmem_convert_result *res, const struct daxctl_log *log, int error,
                        const char *fmt, ...) _printf_(4, 5);
static int convert_fail(struct pmem_convert_result *res, const struct daxctl_log *log, int error,
                        const char *fmt, ...) {
        va_list ap;
        size_t n;

        va_start(ap, fmt);
        vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
        va_end(ap);
        n = strlen(res->reason);
        if (log && log->last[0] && n < sizeof(res->reason))
                snprintf(res->reason + n, sizeof(res->reason) - n, " (libdaxctl: %s)", log->last);
        res->error = error;
        return error;
}

static enum pmem_mode live_mode(const struct conversion *c) {
        _cleanup_free_ char *abs_dev = NULL, *driver = NULL;

        if (sysfs_path(&abs_dev, c->sysfs_root, "bus/dax/devices/%s", c->device) < 0 ||
            pmem_read_driver(abs_dev, &driver) < 0)
                return PMEM_MODE_UNKNOWN;
        return pmem_mode_from_driver(driver);
}

/* Why a kmem bind failed, in the admin's terms. */
static const char *bind_hint(int error) {
        switch (-error) {
        case EBUSY:
                return "the range is busy: another driver or earlier hotplug owns part of it";
        case EINVAL:
                return "kmem rejected the device: no valid target node, or a range not aligned to the memory block size";
        case ENOENT:
                return "the kmem module is not available";
        case ENOMEM:
                return "the kernel ran out of memory for the new memory map";
        case ENXIO:
                return "the kmem driver did not bind";
        default:
                return "binding kmem failed";
        }
}

/* Is root the /sys libdaxctl works on (the same directory, however named)? 1, 0, or -errno. */
static int is_real_sys(const char *root) {
        struct stat a, b;

        if (stat(root, &a) < 0)
                return -errno;
        if (stat("/sys", &b) < 0)
                return errno == ENOENT ? 0 : -errno;
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A dax device name, and a root libdaxctl really acts on. */
static int check_request(struct conversion *c) {
        int r;

        if (pmem_dax_name_parse(c->device, NULL, NULL) < 0)
                return convert_fail(&c->res, NULL, -EINVAL, "'%s' is not a dax device name (daxR.N)",
                                    c->device ?: "");
        if (!c->sysfs_root)
                return convert_fail(&c->res, NULL, -EINVAL, "%s: no sysfs root given", c->device);
        r = is_real_sys(c->sysfs_root);
        if (r < 0)
                return convert_fail(&c->res, NULL, r, "%s: cannot check the sysfs root %s: %s", c->device,
                                    c->sysfs_root, strerror(-r));
        if (r == 0)
                return convert_fail(&c->res, NULL, -EXDEV, "%s: not converting: libdaxctl acts on only the real "
                                    "/sys, and the sysfs root is %s", c->device, c->sysfs_root);
        return 0;
}

static int open_library(struct conversion *c) {
        int r;

        r = daxctl_new(&c->ctx);
        if (r < 0) {
                c->ctx = NULL;
                return convert_fail(&c->res, NULL, r, "libdaxctl cannot start: %s", strerror(-r));
        }
        daxctl_set_userdata(c->ctx, &c->log);
        daxctl_set_log_fn(c->ctx, daxctl_log_capture);
        daxctl_set_log_priority(c->ctx, LOG_ERR);
        return 0;
}

/* libdaxctl's handle on the device, and its size, node and mode as it is now. */
static int find_device(struct conversion *c) {
        struct daxctl_region *region;

        daxctl_region_foreach(c->ctx, region) {
                struct daxctl_dev *d;

                daxctl_dev_foreach(region, d)
                        if (streq(daxctl_dev_get_devname(d), c->device)) {
                                c->dev = d;
                                break;
                        }
                if (c->dev)
                        break;
        }
        if (!c->dev)
                return convert_fail(&c->res, &c->log, -ENOENT, "%s: no such dax device (removed, or not on the "
                                    "dax bus)", c->device);
        c->res.size = daxctl_dev_get_size(c->dev);
        c->res.target_node = daxctl_dev_get_target_node(c->dev);
        if (c->res.target_node < 0)
                c->res.target_node = NODE_NONE;
        c->res.mode_before = daxctl_dev_get_memory(c->dev) ? PMEM_MODE_SYSTEM_RAM : live_mode(c);
        return 0;
}

/* devdax (or unbound) with a size: convertible. Already system-ram: 1, nothing to do. */
static int check_convertible(struct conversion *c) {
        _cleanup_free_ char *bus_path = NULL;

        if (c->res.mode_before == PMEM_MODE_SYSTEM_RAM) {
                /* Converted by hand or by daxctl meanwhile: its blocks come as memory events. */
                c->res.already = true;
                c->res.mode_after = PMEM_MODE_SYSTEM_RAM;
                snprintf(c->res.reason, sizeof(c->res.reason), "%s: already system-ram, nothing to convert",
                         c->device);
                return 1;
        }
        if (daxctl_dev_is_enabled(c->dev) && c->res.mode_before != PMEM_MODE_DEVDAX) {
                if (sysfs_path(&bus_path, c->sysfs_root, "bus/dax/devices/%s", c->device) >= 0 &&
                    access(bus_path, F_OK) < 0)
                        return convert_fail(&c->res, NULL, -EOPNOTSUPP, "%s: the old dax class device model "
                                            "cannot be reconfigured; see daxctl-migrate-device-model(1)", c->device);
                return convert_fail(&c->res, NULL, -EINVAL, "%s: bound to a driver that is neither device_dax "
                                    "nor kmem; not converting a device someone else drives", c->device);
        }
        if (c->res.size == 0)
                return convert_fail(&c->res, NULL, -EINVAL, "%s: size 0 (an unallocated seed device): nothing to "
                                    "convert", c->device);
        return 0;
}

/*
 * With auto_online_blocks "online*" the kernel onlines the new blocks
 * itself during the bind, into its default zone, and our zone policy and
 * pinned workers never get a say. daxctl refuses --no-online in that case
 * for the same reason; so do we.
 */
static int check_auto_online(struct conversion *c) {
        _cleanup_free_ char *auto_online = NULL;

        if (sysfs_read(c->sysfs_root, "devices/system/memory/auto_online_blocks", &auto_online) < 0 ||
            !startswith(auto_online, "online"))
                return 0;
        return convert_fail(&c->res, NULL, -EBUSY,
                            "%s: /sys/devices/system/memory/auto_online_blocks is '%s': the kernel would online "
                            "the new memory itself, bypassing memonlined's zone policy (daxctl refuses "
                            "--no-online for the same reason); set it to 'offline' (memhp_default_state=offline)",
                            c->device, auto_online);
}

/*
 * kmem reads the attribute when it binds, so it is set before. Fail safe:
 * when the kernel will not have it, the conversion goes on without it and
 * the outcome says why.
 */
static int set_memmap_on_memory(struct conversion *c) {
        int r;

        r = pmem_memmap_apply(c->sysfs_root, c->device, c->memmap, &c->res.memmap);
        if (r == -ENOMEM)
                return convert_fail(&c->res, NULL, r, "%s: out of memory", c->device);
        return 0;
}

static int unbind_devdax(struct conversion *c) {
        uint64_t t0;
        int r;

        if (!daxctl_dev_is_enabled(c->dev))
                return 0;
        t0 = now_usec();
        r = daxctl_dev_disable(c->dev);
        c->res.disable_usec = now_usec() - t0;
        if (r == -EOPNOTSUPP)
                return convert_fail(&c->res, &c->log, r, "%s: the old dax class device model cannot be "
                                    "reconfigured; see daxctl-migrate-device-model(1)", c->device);
        if (r < 0)
                return convert_fail(&c->res, &c->log, r, "%s: unbinding device_dax failed: %s%s", c->device,
                                    strerror(-r), r == -EBUSY ? " (device busy: in use?)" : "");
        return 0;
}

/* The kernel adds the memory blocks in this bind. On failure the device goes back to devdax. */
static int bind_kmem(struct conversion *c) {
        const char *after = "left unbound";
        uint64_t t0;
        int r;

        c->log.last[0] = '\0';
        t0 = now_usec();
        r = daxctl_dev_enable_ram(c->dev);
        c->res.bind_usec = now_usec() - t0;
        if (r >= 0)
                return 0;

        /* Do not leave the admin's device without a driver. */
        if (c->res.mode_before == PMEM_MODE_DEVDAX && daxctl_dev_enable_devdax(c->dev) >= 0) {
                c->res.rolled_back = true;
                after = "restored to devdax";
        }
        c->res.mode_after = live_mode(c);
        return convert_fail(&c->res, &c->log, r, "%s: %s: %s; device %s", c->device, bind_hint(r), strerror(-r),
                            after);
}

static int verify_system_ram(struct conversion *c) {
        c->res.mode_after = live_mode(c);
        if (c->res.mode_after != PMEM_MODE_SYSTEM_RAM || !daxctl_dev_get_memory(c->dev))
                return convert_fail(&c->res, &c->log, -EIO, "%s: kmem bind returned success but the device is "
                                    "%s, not system-ram", c->device, pmem_mode_to_string(c->res.mode_after));
        snprintf(c->res.reason, sizeof(c->res.reason), "%s: converted to system-ram (kmem bind %" PRIu64 " us, "
                 "memmap_on_memory=%s), memory left offline for memonlined", c->device, c->res.bind_usec,
                 pmem_memmap_to_string(c->res.memmap.effective));
        return 0;
}

int pmem_convert(const char *sysfs_root, const char *device, enum memmap_setting memmap,
                 struct pmem_convert_result *ret) {
        _cleanup_(conversion_done) struct conversion c = {
                .sysfs_root = sysfs_root,
                .device = device,
                .memmap = memmap,
                .res = { .mode_before = PMEM_MODE_UNKNOWN, .mode_after = PMEM_MODE_UNKNOWN,
                         .target_node = NODE_NONE },
        };
        int r;

        if (!ret)
                return -EINVAL;
        r = check_request(&c);
        if (r == 0)
                r = open_library(&c);
        if (r == 0)
                r = find_device(&c);
        if (r == 0)
                r = check_convertible(&c);
        if (r == 0)
                r = check_auto_online(&c);
        if (r == 0)
                r = set_memmap_on_memory(&c);
        if (r == 0)
                r = unbind_devdax(&c);
        if (r == 0)
                r = bind_kmem(&c);
        if (r == 0)
                r = verify_system_ram(&c);
        if (r > 0)
                r = 0;          /* nothing left to do */
        c.res.error = r;
        *ret = c.res;
        return r;
}
