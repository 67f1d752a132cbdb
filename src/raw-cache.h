/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The page cache of block devices written straight to, on a disk that also holds a superblock of the
 * sample (evidence.h looks at disks without one). The kernel's own sync ends with sync_bdevs(); our
 * syncfs() never writes another device's cache. Such a device's dirty pages put its inode on the
 * disk's bdi writeback lists, where the inodes of the disk's filesystems look alike, and every jbd2
 * commit leaves the in-place copies of the metadata it journaled as dirty buffers of the
 * filesystem's own block device until its checkpoint: the lists of a disk with an ext4 are rarely
 * empty after a pass. So, per disk (bdi named MAJ:MIN) of a superblock of the sample:
 *   - its other devices: the disk itself unless a superblock of the sample is on it, and each of its
 *     partitions no superblock of the sample is on (<sysfs>/dev/block/<bdi>/: entries holding a
 *     "partition" file). None: nothing to look at;
 *   - its writeback lists proven empty (evidence_bdi_empty()): nothing dirty on any of its devices;
 *   - else cachestat(2) (Linux 6.5+) of each other device, in one bounded child that opens the node
 *     the device's uevent names (DEVNAME, below the root's "dev"; it must be that device: st_rdev).
 *     Any dirty page keeps the kernel's sync on. Writeback in flight is not counted (evidence.h).
 *     A device nobody holds open has no page cache (its last close wrote it back and dropped it);
 *     our close may be that last one, in the child all the same.
 * What cannot be told (no cachestat, no node, no answer in time, a sysfs that cannot be read) keeps
 * the sync on, and says why.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/time-util.h"

#define RAW_CACHE_DEVICES_MAX 256U

typedef struct RawDevice {
        dev_t dev;      /* the block device (MAJ:MIN) */
        char *name;     /* its node below "dev", as its uevent names it (DEVNAME) */
        char *disk;     /* the bdi (disk) it belongs to */
        int error;      /* after raw_cache_query(): 0 or a negative errno (-ENOTBLK: the node is
                         * another device, -ETIMEDOUT: no answer in time, -EPROTO: the child died) */
        uint64_t dirty; /* after raw_cache_query(), when error is 0: its dirty pages */
} RawDevice;

void raw_devices_free(RawDevice *d, size_t n);

/* The block devices of the disk named 'bdi' under <sysfs_fd>/dev/block/ that are not in
 * known[0..n_known): appended to *devs (n of them, at most RAW_CACHE_DEVICES_MAX in all: -E2BIG).
 * Nothing when 'bdi' names no whole disk (an anonymous bdi, "btrfs-N", a partition). Returns 0 or
 * a negative errno (the disk's sysfs directory or a device's uevent cannot be read). Reads sysfs
 * only (attributes that take no device lock). */
int raw_cache_others(int sysfs_fd, const char *bdi, const dev_t *known, size_t n_known, RawDevice **devs,
                     size_t *n);

/* The child's answer about one device, as it travels on the pipe. */
typedef struct RawCacheRecord {
        uint32_t index;
        int32_t error;
        uint64_t dirty;
} RawCacheRecord;

/* The parent's side of the pipe (a BoundedChildFeed, pure): applies the whole records that arrived
 * beyond those applied. 1 when every device is answered, 0 to wait, -EBADMSG for a record out of
 * order or with a positive error. */
typedef struct RawCacheRun {
        RawDevice *d;
        size_t n, done;
} RawCacheRun;
int raw_cache_feed(const char *buf, size_t size, void *userdata);

/* cachestat(2) of d[0..n) through the nodes below <root_fd>/dev, in one child bounded by timeout.
 * Fills each device's error and dirty; a device without an answer gets the reason as its error. */
void raw_cache_query(int root_fd, RawDevice *d, size_t n, usec_t timeout);

/*
 * The whole look, for the late pass: bdis[0..n_bdis) are the disks of the superblocks of the sample,
 * known[0..n_known) their devices. Returns 0 when no other device of those disks holds a dirty page;
 * 1 when one does, or when it cannot be told, with the reason in *ret_why (free it); -ENOMEM.
 */
int raw_cache_unexplained(int root_fd, int sysfs_fd, int debugfs_fd, const char *const *bdis, size_t n_bdis,
                          const dev_t *known, size_t n_known, usec_t timeout, char **ret_why);
