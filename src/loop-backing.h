/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Where a loop device's backing file lives, exactly: LOOP_GET_STATUS64 through the device node
 * answers with the st_dev and inode of the file (lo_device, lo_inode), in whatever mount namespace it
 * was attached. The path the driver reports in sysfs (loop/backing_file) is only a name: resolved in
 * another namespace, or after the mount under it changed, it names another filesystem, or none.
 *
 * The ioctl stats the file (vfs_getattr()), which a dead FUSE, NFS or CIFS server can hold forever,
 * so the queries run in one bounded child (shared/bounded-child.h), which opens "dev" below the root
 * fd itself. Only when the caller knows /dev to be a memory filesystem (devtmpfs, tmpfs: a lookup
 * there never waits for a server) does the parent look first, and answer a node that does not exist
 * (a container's /dev) with -ENOENT, without a child. The node is opened read-only, by the name the
 * device's uevent gives (DEVNAME), and must be the block device the same uevent gives (MAJOR, MINOR:
 * st_rdev); the uevent is taken as the kernel's (tests redirect it to a decoy on purpose). Only loop
 * devices of mounted superblocks are asked, so our close is normally not the last one; after a
 * concurrent umount it may be (the driver then detaches an autoclear device, and the block layer
 * writes the device's cache back), in the bounded child all the same.
 *
 * Not placed, and so never left to the late pass: a file on btrfs (its st_dev is the subvolume's
 * anonymous device, not the superblock's) or on an overlay over several filesystems (a pseudo
 * device number), whatever the path says.
 */

#include <stdbool.h>
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
        dev_t backing_rdev;   /* out, when error is 0: its st_rdev (lo_rdevice): not 0 when the "file"
                               * is a device node, whose writes go to that device, not to st_dev */
} LoopBackingQuery;

/* The child's answer to one query, as it travels on the pipe. */
typedef struct LoopBackingRecord {
        uint32_t index; /* position in the run's ask list */
        int32_t error;  /* 0 or a negative errno */
        uint64_t dev;   /* lo_device: the kernel's huge_encode_dev(), glibc's dev_t encoding */
        uint64_t ino;
        uint64_t rdev; /* lo_rdevice, the same encoding */
} LoopBackingRecord;

typedef struct LoopBackingRun {
        LoopBackingQuery *q;
        size_t *ask; /* indices into q of the queries the child answers, in order */
        size_t n_ask;
        size_t done; /* records applied */
} LoopBackingRun;

/* The parent's side of the pipe (a BoundedChildFeed, pure): applies the whole records in buf (all that
 * arrived so far) beyond those applied. 1 when every query of the run is answered, 0 to wait for
 * more, -EBADMSG for a record out of order or with a positive error. */
int loop_backing_feed(const char *buf, size_t size, void *userdata);

/* Answers q[0..n) (n ≤ LOOP_BACKING_QUERY_MAX, else -E2BIG) for the nodes below root_fd's "dev", in
 * one child bounded by timeout; dev_in_memory allows the look for missing nodes in the parent. A
 * query without an answer gets the reason as its error (the child's failure included: the answer is
 * optional, it never fails the caller). Returns 0 or -E2BIG. */
int loop_backing_query(int root_fd, bool dev_in_memory, LoopBackingQuery *q, size_t n, usec_t timeout);
