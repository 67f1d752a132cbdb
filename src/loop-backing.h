/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Where a loop device's backing file lives, exactly: LOOP_GET_STATUS64 through the device node
 * answers with the st_dev and inode of the file (lo_device, lo_inode), in whatever mount namespace it
 * was attached. The path the driver reports in sysfs (loop/backing_file) is only a name: resolved in
 * another namespace, or after the mount under it changed, it names another filesystem, or none.
 *
 * The ioctl stats the file (vfs_getattr()), which a dead FUSE, NFS or CIFS server can hold forever,
 * so the queries run in one bounded child (shared/bounded-child.h); a node that does not exist (a
 * container's /dev) is answered -ENOENT without one. The node is opened read-only, by
 * the name the device's uevent gives (DEVNAME) below a /dev directory fd, and must be the block
 * device the same uevent gives (MAJOR, MINOR: st_rdev). Only loop devices held open by a mounted superblock are asked, so our
 * close is never the last one (which would write the device's cache back, or detach an autoclear
 * loop device).
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/time-util.h"

#define LOOP_BACKING_QUERY_MAX 256U

typedef struct LoopBackingQuery {
        dev_t loop;           /* in: the loop device (MAJ:MIN) */
        const char *name;     /* in: its node below the /dev fd (uevent DEVNAME), a single component */
        int error;            /* out: 0, or a negative errno: -ENOTBLK the node is not that device,
                              * -ETIMEDOUT no answer in time, -EPROTO the child died */
        dev_t backing_dev;    /* out, when error is 0: st_dev of the backing file */
        uint64_t backing_ino; /* out, when error is 0: its inode */
} LoopBackingQuery;

/* Answers q[0..n) (n ≤ LOOP_BACKING_QUERY_MAX, else -E2BIG) in one child bounded by timeout; a query
 * without an answer gets the reason as its error. Returns 0, or -ENOMEM / -E2BIG / -EINVAL (ours). */
int loop_backing_query(int dev_fd, LoopBackingQuery *q, size_t n, usec_t timeout);
