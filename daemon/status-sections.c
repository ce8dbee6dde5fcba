/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <systemd/sd-bus.h>
#include <unistd.h>
#include "status-read.h"
#include "sysfs.h"
#include "util.h"

/*
 * The sections around the tables of `memonlined status`: the kernel's
 * onlining policy, competing onliners, the running batch and the state of
 * memonlined.service. Each one that cannot be read keeps its error for
 * the renderers and the exit status; none stops the others.
 */

void status_sections_done(struct status_sections *s) {
        free(s->auto_online);
        free(s->online_policy);
        free(s->auto_movable_ratio);
        conflicts_clear(&s->conflicts);
        status_batch_done(&s->batch);
        free(s->daemon.active_state);
        free(s->daemon.status_text);
        free(s->daemon.error);
        free(s->policy_warning);
        *s = (struct status_sections) { .batch = { .node = NODE_NONE } };
}

/* An attribute that old kernels or a module not loaded leave out: NULL then. */
static int read_optional(const char *root, const char *rel, char **ret) {
        int r = sysfs_read(root, rel, ret);

        if (r == -ENOENT || r == -ENOTDIR) {
                *ret = NULL;
                return 0;
        }
        return r;
}

static int read_kernel_policy(const char *root, struct status_sections *s) {
        int r;

        r = read_optional(root, AUTO_ONLINE_ATTR, &s->auto_online);
        if (r >= 0)
                r = read_optional(root, "module/memory_hotplug/parameters/online_policy", &s->online_policy);
        if (r >= 0)
                r = read_optional(root, "module/memory_hotplug/parameters/auto_movable_ratio",
                                  &s->auto_movable_ratio);
        return r;
}

/*
 * As root, talk to systemd on its private socket, like systemctl does: it
 * works without a D-Bus daemon (minimal images, early boot). Else the bus.
 */
static int open_systemd_bus(sd_bus **ret) {
        sd_bus *bus = NULL;
        int r;

        if (geteuid() == 0) {
                r = sd_bus_new(&bus);
                if (r < 0)
                        return r;
                r = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
                if (r >= 0)
                        r = sd_bus_start(bus);
                if (r >= 0) {
                        *ret = bus;
                        return 0;
                }
                sd_bus_unref(bus);
                bus = NULL;
        }
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        *ret = bus;
        return 0;
}

/* ActiveState and StatusText of memonlined.service; without a bus, the reason in d->error. -ENOMEM. */
static int query_daemon(struct status_daemon *d) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *path = NULL;
        sd_bus *bus = NULL;
        int r;

        r = open_systemd_bus(&bus);
        if (r < 0) {
                d->error = strdup("no system bus");
                return d->error ? 0 : -ENOMEM;
        }
        (void) sd_bus_set_method_call_timeout(bus, 2 * USEC_PER_SEC);
        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", "memonlined.service", &path);
        if (r < 0)
                goto finish;
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Unit",
                                       "ActiveState", &error, &d->active_state);
        if (r < 0 && r != -ENOMEM) {
                d->error = strdup(error.message ?: strerror(-r));
                r = d->error ? 0 : -ENOMEM;
                goto finish;
        }
        if (r < 0)
                goto finish;
        d->known = true;
        sd_bus_error_free(&error);
        /* A unit that is not loaded has no Service interface; ActiveState alone says enough. */
        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Service",
                                       "StatusText", &error, &d->status_text);
        if (r == -ENOMEM)
                goto finish;
        r = 0;
finish:
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(bus);
        return r < 0 ? r : 0;
}

int status_sections_read(const char *root, const char *const *rules_dirs, const char *runtime_dir, bool ask_daemon,
                         struct status_sections *s) {
        int r;

        s->runtime_dir = runtime_dir;
        s->kernel_error = read_kernel_policy(root, s);
        s->conflicts_error = coexist_check(root, rules_dirs, &s->conflicts);
        s->batch_result = status_batch_read(runtime_dir, &s->batch);
        if (s->kernel_error == -ENOMEM || s->conflicts_error == -ENOMEM || s->batch_result == -ENOMEM)
                return -ENOMEM;
        if (!ask_daemon)
                return (s->daemon.error = strdup("not queried")) ? 0 : -ENOMEM;
        r = query_daemon(&s->daemon);
        return r;
}

bool status_sections_partial(const struct status_sections *s) {
        return s->kernel_error < 0 || s->conflicts_error < 0 || s->batch_result < 0;
}
