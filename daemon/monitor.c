/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <libudev.h>
#include "blocks.h"
#include "monitor.h"
#include "util.h"

/* What every monitor listens to: memory blocks, and what changes the machine the daemon keeps. */
static const char *const machine_subsystems[] = { "memory", "node", "cpu", "cxl", "acpi" };

struct monitor {
        struct udev *udev;
        struct udev_monitor *mon;
        bool kernel;
        bool watch_dax;
};

int monitor_classify(const char *action, const char *subsystem, const char *sysname, uint64_t seqnum,
                     struct monitor_event *ret) {
        struct monitor_event ev = { .kind = MONITOR_IGNORE, .seqnum = seqnum };

        if (!action || !subsystem || !sysname)
                return -EINVAL;

        if (streq(subsystem, "memory")) {
                uint64_t id;

                /* memory/ also holds non-block devices on some kernels. */
                if (block_id_from_name(sysname, &id) < 0) {
                        *ret = ev;
                        return 0;
                }
                ev.block_id = id;
                if (streq(action, "add"))
                        ev.kind = MONITOR_MEMORY_ADD;
                else if (streq(action, "remove"))
                        ev.kind = MONITOR_MEMORY_REMOVE;
                else if (streq(action, "online"))
                        ev.kind = MONITOR_MEMORY_ONLINE;
                else if (streq(action, "offline") || streq(action, "change"))
                        ev.kind = MONITOR_MEMORY_OFFLINE;
        } else if ((streq(subsystem, "node") && startswith(sysname, "node")) ||
                   (streq(subsystem, "cpu") && startswith(sysname, "cpu"))) {
                if (streq(action, "add") || streq(action, "remove") || streq(action, "online") ||
                    streq(action, "offline"))
                        ev.kind = MONITOR_MACHINE;
        } else if ((streq(subsystem, "cxl") && startswith(sysname, "region")) ||
                   (streq(subsystem, "acpi") && startswith(sysname, "PNP0C80:"))) {
                /* A region is a dax device's once bound (committed); a DIMM's links come at the end of its add. */
                if (streq(action, "add") || streq(action, "remove") || streq(action, "bind") ||
                    streq(action, "unbind")) {
                        ev.kind = MONITOR_DEVICE;
                        ev.acpi_memory = streq(subsystem, "acpi");
                }
        } else if (streq(subsystem, "dax")) {
                if (strlen(sysname) >= sizeof(ev.devname))
                        return -ENAMETOOLONG;
                strcpy(ev.devname, sysname);
                /* A re-bind to device_dax after "daxctl reconfigure" is a "bind". */
                if (streq(action, "add") || streq(action, "bind"))
                        ev.kind = MONITOR_DAX_ADD;
                else if (streq(action, "remove") || streq(action, "unbind"))
                        ev.kind = MONITOR_DAX_REMOVE;
        }
        *ret = ev;
        return 0;
}

void monitor_free(struct monitor *m) {
        if (!m)
                return;
        if (m->mon)
                udev_monitor_unref(m->mon);
        if (m->udev)
                udev_unref(m->udev);
        free(m);
}

int monitor_open(enum event_source source, bool watch_dax, struct monitor **ret) {
        struct monitor *m;
        int r;

        if (!event_source_to_string(source))
                return -EINVAL;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->kernel = source == EVENT_SOURCE_KERNEL;
        m->watch_dax = watch_dax;

        m->udev = udev_new();
        if (!m->udev) {
                r = -errno ?: -ENOMEM;
                goto fail;
        }
        m->mon = udev_monitor_new_from_netlink(m->udev, event_source_to_string(source));
        if (!m->mon) {
                r = errno > 0 ? -errno : -EPROTO;
                goto fail;
        }
        /* Filters are BPF on libudev's header: udev-sourced messages only. */
        for (size_t i = 0; !m->kernel && i < ELEMENTSOF(machine_subsystems); i++) {
                r = udev_monitor_filter_add_match_subsystem_devtype(m->mon, machine_subsystems[i], NULL);
                if (r < 0)
                        goto fail;
        }
        if (!m->kernel && watch_dax) {
                r = udev_monitor_filter_add_match_subsystem_devtype(m->mon, "dax", NULL);
                if (r < 0)
                        goto fail;
        }
        /* Best effort: needs CAP_NET_ADMIN for the forced size. */
        (void) udev_monitor_set_receive_buffer_size(m->mon, MONITOR_RCVBUF);
        r = udev_monitor_enable_receiving(m->mon);
        if (r < 0)
                goto fail;

        *ret = m;
        return 0;
fail:
        monitor_free(m);
        return r;
}

static bool watched(const struct monitor *m, const char *subsystem) {
        for (size_t i = 0; i < ELEMENTSOF(machine_subsystems); i++)
                if (streq(subsystem, machine_subsystems[i]))
                        return true;
        return m->watch_dax && streq(subsystem, "dax");
}

int monitor_fd(const struct monitor *m) {
        return udev_monitor_get_fd(m->mon);
}

int monitor_receive(struct monitor *m, struct monitor_event *ret) {
        struct udev_device *dev;
        const char *action, *subsystem, *sysname, *seq;
        uint64_t seqnum = 0;
        int r;

        for (;;) {
                errno = 0;
                dev = udev_monitor_receive_device(m->mon);
                if (!dev) {
                        if (errno == ENOBUFS)
                                return -ENOBUFS;
                        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == 0)
                                return 0;
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                action = udev_device_get_action(dev);
                subsystem = udev_device_get_subsystem(dev);
                sysname = udev_device_get_sysname(dev);
                seq = udev_device_get_property_value(dev, "SEQNUM");
                if (seq)
                        (void) parse_u64(seq, 10, &seqnum);

                if (m->kernel && subsystem && !watched(m, subsystem)) {
                        udev_device_unref(dev);
                        continue;
                }
                r = monitor_classify(action, subsystem, sysname, seqnum, ret);
                udev_device_unref(dev);
                if (r < 0 || ret->kind == MONITOR_IGNORE)
                        continue;
                return 1;
        }
}
