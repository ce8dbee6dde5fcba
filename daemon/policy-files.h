/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The files of a policy, found, checked and read; policy.c parses them.
 * Whoever can write them can make memonlined turn a devdax namespace that
 * holds data into system RAM, so a file and every directory it is read
 * from must belong to root (or to the user memonlined runs as) and be
 * writable by nobody else, as sshd's StrictModes and sudo ask of theirs.
 * Every check is made on what was opened (fstat() of the descriptor), and
 * a file is opened beneath its directory's descriptor, without following
 * a link: what is checked is what is read.
 */

#include <stddef.h>

/* All files together, the main one and its drop-ins. */
#define POLICY_FILE_MAX (1024 * 1024)
#define POLICY_DROPINS_MAX 256

/*
 * Open the directory dir to read config files from, checked: owned by
 * root or by us, writable by neither group nor others (sticky or not).
 * -EPERM when it is not, -errno when it cannot be opened (-ENOTDIR).
 */
int config_dir_open(const char *dir, int *ret_fd, char *reason, size_t reason_size);

/*
 * The drop-in files of dir (NAME.conf, not hidden, no directories), as
 * paths in strcmp() order, and dir opened and checked (config_dir_open())
 * in *ret_fd; none and -1 if there is no such directory.
 */
int config_list_dropins(const char *dir, int *ret_fd, char ***ret, size_t *ret_n, char *reason, size_t reason_size);

/*
 * The whole file name in the directory dir_fd (path names it in reasons),
 * at most max bytes. Only a regular file, opened without blocking, owned
 * by root or by us and writable by neither group nor others. A symbolic
 * link is judged by its target and the target's directory. -EISDIR,
 * -EINVAL (a FIFO, device or socket), -ENOLINK (dangling link), -EFBIG,
 * -EPERM (owner or mode), -EAGAIN (replaced or grown meanwhile), -errno.
 */
int config_read(int dir_fd, const char *name, const char *path, size_t max, char **ret, size_t *ret_size, char *reason,
                size_t reason_size);

/* Frees what config_list_dropins() returned. */
void config_dropins_free(char **v, size_t n);
