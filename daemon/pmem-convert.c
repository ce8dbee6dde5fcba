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

/* libdaxctl's last error line, so the failure report says what the library saw. */
struct daxctl_log {
        char last[256];
};

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

static void daxctl_unrefp(struct daxctl_ctx **ctx) {
        if (*ctx)
                daxctl_unref(*ctx);
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

static enum pmem_mode live_mode(const char *device) {
        _cleanup_free_ char *abs_dev = NULL, *driver = NULL;

        if (sysfs_path(&abs_dev, "/sys", "bus/dax/devices/%s", device) < 0 || pmem_read_driver(abs_dev, &driver) < 0)
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

int pmem_convert(const char *sysfs_root, const char *device, struct pmem_convert_result *ret) {
        _cleanup_(daxctl_unrefp) struct daxctl_ctx *ctx = NULL;
        _cleanup_free_ char *auto_online = NULL;
        struct pmem_convert_result res = {
                .mode_before = PMEM_MODE_UNKNOWN, .mode_after = PMEM_MODE_UNKNOWN, .target_node = NODE_NONE,
        };
        struct daxctl_log log = {};
        struct daxctl_region *region;
        struct daxctl_dev *dev = NULL;
        uint64_t t0;
        int r;

        if (!ret)
                return -EINVAL;
        if (pmem_dax_name_parse(device, NULL, NULL) < 0) {
                r = convert_fail(&res, NULL, -EINVAL, "'%s' is not a dax device name (daxR.N)", device ?: "");
                goto out;
        }
        if (!sysfs_root) {
                r = convert_fail(&res, NULL, -EINVAL, "%s: no sysfs root given", device);
                goto out;
        }
        r = is_real_sys(sysfs_root);
        if (r < 0) {
                r = convert_fail(&res, NULL, r, "%s: cannot check the sysfs root %s: %s", device, sysfs_root,
                                 strerror(-r));
                goto out;
        }
        if (r == 0) {
                r = convert_fail(&res, NULL, -EXDEV, "%s: not converting: libdaxctl acts on only the real /sys, "
                                 "and the sysfs root is %s", device, sysfs_root);
                goto out;
        }

        r = daxctl_new(&ctx);
        if (r < 0) {
                ctx = NULL;
                r = convert_fail(&res, NULL, r, "libdaxctl cannot start: %s", strerror(-r));
                goto out;
        }
        daxctl_set_userdata(ctx, &log);
        daxctl_set_log_fn(ctx, daxctl_log_capture);
        daxctl_set_log_priority(ctx, LOG_ERR);

        daxctl_region_foreach(ctx, region) {
                struct daxctl_dev *d;

                daxctl_dev_foreach(region, d)
                        if (streq(daxctl_dev_get_devname(d), device)) {
                                dev = d;
                                break;
                        }
                if (dev)
                        break;
        }
        if (!dev) {
                r = convert_fail(&res, &log, -ENOENT, "%s: no such dax device (removed, or not on the dax bus)", device);
                goto out;
        }
        res.size = daxctl_dev_get_size(dev);
        res.target_node = daxctl_dev_get_target_node(dev);
        if (res.target_node < 0)
                res.target_node = NODE_NONE;

        res.mode_before = daxctl_dev_get_memory(dev) ? PMEM_MODE_SYSTEM_RAM : live_mode(device);
        if (res.mode_before == PMEM_MODE_SYSTEM_RAM) {
                /* Converted by hand or by daxctl meanwhile: its blocks come as memory events. */
                res.already = true;
                res.mode_after = PMEM_MODE_SYSTEM_RAM;
                snprintf(res.reason, sizeof(res.reason), "%s: already system-ram, nothing to convert", device);
                r = 0;
                goto out;
        }
        if (daxctl_dev_is_enabled(dev) && res.mode_before != PMEM_MODE_DEVDAX) {
                _cleanup_free_ char *bus_path = NULL;

                if (sysfs_path(&bus_path, "/sys", "bus/dax/devices/%s", device) >= 0 && access(bus_path, F_OK) < 0) {
                        r = convert_fail(&res, NULL, -EOPNOTSUPP, "%s: the old dax class device model cannot be "
                                         "reconfigured; see daxctl-migrate-device-model(1)", device);
                        goto out;
                }
                r = convert_fail(&res, NULL, -EINVAL, "%s: bound to a driver that is neither device_dax nor kmem; "
                                 "not converting a device someone else drives", device);
                goto out;
        }
        if (res.size == 0) {
                r = convert_fail(&res, NULL, -EINVAL, "%s: size 0 (an unallocated seed device): nothing to convert",
                                 device);
                goto out;
        }

        /*
         * With auto_online_blocks "online*" the kernel onlines the new blocks
         * itself during the bind, into its default zone, and our zone policy
         * and pinned workers never get a say. daxctl refuses --no-online in
         * that case for the same reason; so do we.
         */
        r = sysfs_read("/sys", "devices/system/memory/auto_online_blocks", &auto_online);
        if (r >= 0 && startswith(auto_online, "online")) {
                r = convert_fail(&res, NULL, -EBUSY,
                                 "%s: /sys/devices/system/memory/auto_online_blocks is '%s': the kernel would online "
                                 "the new memory itself, bypassing memonlined's zone policy (daxctl refuses "
                                 "--no-online for the same reason); set it to 'offline' (memhp_default_state=offline)",
                                 device, auto_online);
                goto out;
        }

        if (daxctl_dev_is_enabled(dev)) {
                t0 = now_usec();
                r = daxctl_dev_disable(dev);
                res.disable_usec = now_usec() - t0;
                if (r < 0) {
                        if (r == -EOPNOTSUPP)
                                r = convert_fail(&res, &log, r, "%s: the old dax class device model cannot be "
                                                 "reconfigured; see daxctl-migrate-device-model(1)", device);
                        else
                                r = convert_fail(&res, &log, r, "%s: unbinding device_dax failed: %s%s", device,
                                                 strerror(-r), r == -EBUSY ? " (device busy: in use?)" : "");
                        goto out;
                }
        }

        log.last[0] = '\0';
        t0 = now_usec();
        r = daxctl_dev_enable_ram(dev);
        res.bind_usec = now_usec() - t0;
        if (r < 0) {
                int bind_error = r;
                const char *after = "left unbound";

                /* Do not leave the admin's device without a driver. */
                if (res.mode_before == PMEM_MODE_DEVDAX && daxctl_dev_enable_devdax(dev) >= 0) {
                        res.rolled_back = true;
                        after = "restored to devdax";
                }
                res.mode_after = live_mode(device);
                r = convert_fail(&res, &log, bind_error, "%s: %s: %s; device %s", device, bind_hint(bind_error),
                                 strerror(-bind_error), after);
                goto out;
        }

        res.mode_after = live_mode(device);
        if (res.mode_after != PMEM_MODE_SYSTEM_RAM || !daxctl_dev_get_memory(dev)) {
                r = convert_fail(&res, &log, -EIO, "%s: kmem bind returned success but the device is %s, not system-ram",
                                 device, pmem_mode_to_string(res.mode_after));
                goto out;
        }
        snprintf(res.reason, sizeof(res.reason), "%s: converted to system-ram (kmem bind %" PRIu64 " us), memory left "
                 "offline for memonlined", device, res.bind_usec);
        r = 0;
out:
        res.error = r;
        *ret = res;
        return r;
}
