/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Mount table: the host's mounts as read from proc/self/mountinfo (via libmount), with unescaped
 * paths, the superblock's device number, fstype, source, options and read-only state.
 * Pure parser on text + a loader on a root dir fd.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shared/macro.h"

#define MOUNT_TABLE_MAX_ENTRIES 65536U
#define MOUNT_TABLE_MAX_BYTES (64U * 1024U * 1024U)

typedef struct MountEntry {
        int mount_id;
        int parent_id;
        dev_t dev;              /* superblock device (major:minor field) */
        char *root;             /* root of the mount within its filesystem (unescaped) */
        char *mount_point;      /* unescaped */
        char *fstype;           /* "ext4", "fuse.sshfs", ... (type.subtype joined with '.') */
        char *source;           /* unescaped; may be "none" */
        char *vfs_options;      /* per-mount options */
        char *fs_options;       /* superblock options */
        bool read_only;         /* mount or superblock is read-only */
        bool unlisted;          /* in no mount table (see unlisted.h): our root directory, or a
                                 * superblock reached through a process's open file; mount_point is
                                 * the path to open */
} MountEntry;

/* Frees the strings of one entry (not the entry itself). */
void mount_entry_done(MountEntry *e);

typedef struct MountTable {
        MountEntry *entries;
        size_t n_entries;
} MountTable;

/* Parses mountinfo text (size bytes, need not be NUL-terminated). Malformed lines are skipped and
 * counted in *ret_n_bad (may be NULL). Returns 0 or negative errno (-ENOMEM, -E2BIG over max). */
int mount_table_parse(const char *text, size_t size, MountTable **ret, unsigned *ret_n_bad);

/* Reads <root_fd>/proc/self/mountinfo. */
int mount_table_load(int root_fd, MountTable **ret, unsigned *ret_n_bad);

/* Moves every entry of *from to the end of into and frees *from. -E2BIG over the maximum. */
int mount_table_merge(MountTable *into, MountTable **from);

MountTable *mount_table_free(MountTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(MountTable *, mount_table_free);
