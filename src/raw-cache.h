/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The page cache of block devices written straight to, on a disk that also holds a writable
 * superblock of the sample (evidence.h looks at disks without one). The kernel's own sync wakes every
 * flusher first (block devices' inodes included) and ends with sync_bdevs() (every block device
 * someone holds open; a device nobody holds open has no page cache: its last close wrote it back and
 * dropped it); our syncfs() writes only its filesystem's own device. Such a device's dirty pages put
 * its inode on the disk's bdi writeback lists, where the inodes of the disk's filesystems look alike,
 * and every jbd2 commit leaves the in-place copies of the metadata it journaled as dirty buffers of
 * the filesystem's own block device until its checkpoint: the lists of a disk with an ext4 are
 * rarely empty after a pass. So, per disk (a bdi named MAJ:MIN, major not 0) of a superblock of the
 * sample:
 *   - its writeback lists proven empty (evidence_bdi_empty()): nothing on any of its devices waits
 *     to be written, nothing to ask;
 *   - else its other devices: the disk itself unless a writable superblock of the sample is on it,
 *     and each partition no writable superblock of the sample is on (<sysfs>/dev/block/<bdi>/:
 *     entries holding a "partition" file; the "dev" attribute and the kernel's name, never the
 *     uevent, whose read took the device lock in some kernels). A read-only superblock's device is
 *     asked: sync_filesystem() leaves a read-only superblock's device alone;
 *   - cachestat(2) (Linux 6.5+) of each, in one bounded child that opens the node devtmpfs gives
 *     the kernel's name ('!' as '/') below the root's "dev", which must be that device (st_rdev).
 *     A device with dirty pages is synced there (fsync(2): what sync_bdevs() would write, and a
 *     cache flush) and asked again: a dirty page left keeps the kernel's sync on. Writeback in
 *     flight is not counted (evidence.h).
 * What cannot be told (no cachestat, no node, no answer in time, an fsync that fails, a sysfs that
 * cannot be read) keeps the sync on, and says why. But a disk that is a leaf of a device proven
 * stuck is asked last, and its devices' failures are no reason: a leaf truly stuck is written by
 * no one (the kernel's sync blocks there too), and one that only sits below a stuck layer (a
 * suspended dm device over another partition) answers, and is synced, like any other. A child
 * killed inside fsync() stays until its writes end (bounded_child_abandoned(): a pass started by
 * systemd hands it to the scope of its stuck workers), and a task in the kernel holds the freezer
 * off: the sleep waits for it, or fails.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/time-util.h"

#define RAW_CACHE_DEVICES_MAX 256U

typedef enum RawCacheStage {
        RAW_CACHE_ASKED, /* no answer (the child's failure, a timeout) */
        RAW_CACHE_OPEN,  /* opening the node */
        RAW_CACHE_NODE,  /* the node is not that block device */
        RAW_CACHE_STAT,  /* cachestat(2) */
        RAW_CACHE_SYNC,  /* fsync(2) of a dirty device */
} RawCacheStage;

typedef struct RawDevice {
        dev_t dev;           /* the block device (MAJ:MIN) */
        char *name;          /* its node below "dev": the kernel's name, '!' as '/' */
        char *disk;          /* the bdi (disk) it belongs to */
        bool on_stuck_disk;  /* the disk is a leaf of a device proven stuck */
        bool answered;       /* after the query: the child's final word on it arrived */
        bool current;        /* after the query: not answered, the child was on it when it stopped */
        int error;           /* after the query: 0 or a negative errno, at stage */
        RawCacheStage stage; /* where error happened (RAW_CACHE_SYNC: also while the fsync runs) */
        uint64_t dirty;      /* after the query, when error is 0: its dirty pages (after any fsync) */
        uint64_t found;      /* the dirty pages the first cachestat found (0: no fsync) */
        uint64_t synced;     /* ... written by an fsync that succeeded */
} RawDevice;

void raw_devices_free(RawDevice *d, size_t n);

/* The block devices of the disk named 'bdi' under <sysfs_fd>/dev/block/ that are not in
 * known[0..n_known): appended to *devs (n of them, at most RAW_CACHE_DEVICES_MAX in all: -E2BIG).
 * Nothing when 'bdi' names no whole disk (an anonymous bdi, "btrfs-N", a partition). Returns 0 or
 * a negative errno (the disk's sysfs directory or a "dev" attribute cannot be read). Reads sysfs
 * only: directories, symlinks and "dev" attributes. */
int raw_cache_others(int sysfs_fd, const char *bdi, const dev_t *known, size_t n_known, RawDevice **devs,
                     size_t *n);

/* What the child says of one device, as it travels on the pipe: START as it begins looking (in
 * order), DIRTY when it found dirty pages (the fsync comes after every device was looked at),
 * SYNCING as that fsync begins, FINAL its last word. */
typedef enum RawCacheKind {
        RAW_CACHE_FINAL,
        RAW_CACHE_START,
        RAW_CACHE_DIRTY,
        RAW_CACHE_SYNCING,
} RawCacheKind;

typedef struct RawCacheRecord {
        uint32_t index;
        int32_t error;
        uint32_t stage;
        uint32_t kind;
        uint64_t dirty;
        uint64_t found;
        uint64_t synced;
} RawCacheRecord;

/* The parent's side of the pipe (a BoundedChildFeed, pure): applies the whole records that arrived
 * beyond those applied. 1 when every device has its final record, 0 to wait, -EBADMSG for a record
 * out of order (a START not next, anything else for a device not started or already answered, a
 * SYNCING for a device not found dirty), with a positive error, an unknown stage or kind. */
typedef struct RawCacheRun {
        RawDevice *d;
        size_t n;
        size_t done;    /* devices with their final record */
        size_t pos;     /* records consumed */
        size_t started; /* devices the child began (START) */
        size_t current; /* the device of the last record (SIZE_MAX: none yet) */
} RawCacheRun;
int raw_cache_feed(const char *buf, size_t size, void *userdata);

/* cachestat(2) of d[0..n) through the nodes below <root_fd>/dev, in order, in one child bounded by
 * timeout; then each device found dirty is fsync()ed and asked again. Fills each device's error,
 * stage, dirty, found, synced, answered and current; a device without an answer gets the reason. */
void raw_cache_query(int root_fd, RawDevice *d, size_t n, usec_t timeout);

/* Pure: 1 with the reason in *ret_why (free it) when a device still holds dirty pages (the first
 * such), else when one could not be asked or synced (the first such) but for a failure of the
 * device itself on a leaf of a device proven stuck (the child stopped on it, or the kernel failed
 * its open or fsync with EIO, ENXIO, ENODEV, ENOMEDIUM); 0 when every device answered clean; -ENOMEM. */
int raw_cache_verdict(const RawDevice *d, size_t n, char **ret_why);

/* Whether this kernel has cachestat(2) (it answers EBADF for the fd -1 where it exists). */
bool raw_cache_supported(void);

/* Appends the whole disks of a device group key (sample.h Superblock.group: "8:0,8:16"; "sb:..."
 * names none) to *disks. 0, -EINVAL for a malformed key, -ENOMEM. */
int raw_cache_group_disks(const char *group, dev_t **disks, size_t *n);

typedef struct RawCacheLook {
        const char *const *bdis; /* the disks of the superblocks of the sample (any bdi names: those
                                  * of no block disk are passed over) */
        size_t n_bdis;
        const dev_t *known; /* the devices of its writable superblocks */
        size_t n_known;
        const dev_t *stuck; /* leaf disks of the devices proven stuck (their group keys): asked last,
                             * their devices' failures no reason */
        size_t n_stuck;
        usec_t until;       /* CLOCK_MONOTONIC: the child gets what is left until then */
        usec_t max_timeout; /* ... at most this */
} RawCacheLook;

/*
 * The whole look, for the late pass. Nothing left until 'until', or no cachestat(2) in this kernel,
 * is a reason without a child. Returns 0 when no other device of those disks holds a dirty page
 * after the child synced those it found dirty; 1 when one does, or when it cannot be told, with the
 * reason in *ret_why (free it); -ENOMEM. *ret_synced (free it; NULL when none) names the devices the
 * child synced, for the journal.
 */
int raw_cache_unexplained(int root_fd, int sysfs_fd, int debugfs_fd, const RawCacheLook *look, char **ret_why,
                          char **ret_synced);
