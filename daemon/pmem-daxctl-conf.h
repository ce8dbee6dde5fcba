/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* daxctl's own configuration (daxctl.conf.d), read as daxctl reads it. */

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

static inline void pmem_daxctl_conf_clearp(struct daxctl_conf *c) {
        pmem_daxctl_conf_clear(c);
}
