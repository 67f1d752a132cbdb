/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Shared by unlisted.c, unlisted-nsfs.c and unlisted-reach.c only (and their tests). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "unlisted.h"

void hidden_sb_done(HiddenSb *s);
/* Appends an entry for a superblock no table lists (MountEntry.unlisted), reached at path. */
int append_unlisted(MountTable *t, const char *path, dev_t dev, int mount_id, const char *fstype,
                    const char *source, bool read_only);

/* Parses an nsfs mount's root "mnt:[INO]". 0 or -EINVAL. */
int unlisted_parse_ns_root(const char *root, uint64_t *ret);
/* Appends x to *v (*n entries), growing it 16 at a time. 0 or -ENOMEM. */
int unlisted_u64_append(uint64_t **v, size_t *n, uint64_t x);

/* Whether the mount table of pid (0: ours) lists mount mnt_id as the nsfs mount of namespace
 * ns_ino, read from proc_fd, our own procfs (the fd whose mount this is, is ours). Mount ids are
 * reused, lowest first: an nsfs mount swapped for another mount between the table's read and the
 * walk can hand the new one the old id, which fdinfo then shows. Our fd holds the mount it is on, so
 * while we look no other mount can have its id: a listed mount with that id is that mount. 1, 0,
 * or a negative errno. */
int unlisted_nsfs_mount_listed(int proc_fd, int pid, int mnt_id, uint64_t ns_ino);
