/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Which mount, and which superblock, holds a path in a mount namespace of the sample: mount points
 * sorted by (namespace, path, table index), to find it with a few binary searches instead of a scan
 * per overlay (container hosts have hundreds). Pure.
 */

#include <sys/types.h>

#include "sample.h"

typedef struct PathIndex {
        const Sample *sample;
        size_t *order;
        size_t n;
} PathIndex;

int path_index_build(const Sample *sample, PathIndex *ret);
void path_index_done(PathIndex *pi);
/* The mount holding 'path' in namespace ns (table index): the one with the longest mount point that
 * is a component-wise prefix of path, the last one in table order when stacked. -1 when none. */
ssize_t mount_of_path(const PathIndex *pi, const char *path, unsigned ns);
/* The superblock holding 'path' in namespace ns, as mount_of_path(). -1 when none. */
ssize_t sb_of_path(const PathIndex *pi, const char *path, unsigned ns);
