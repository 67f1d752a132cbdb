/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Progress: is a device still completing I/O? Tells a slow device that is still writing from a
 * stuck one by its completion counters, never by the age of a sync. Sources, summed: the block
 * layer's per-disk completion counters (sysfs dev/block/MAJ:MIN/stat: read, write, discard and
 * flush requests and sectors completed — never the in-flight or time fields, which move while a
 * device is stuck) of every leaf disk, and the bdi's BdiWritten (debugfs bdi/<name>/stats: pages
 * whose writeback completed), which covers FUSE, NFS and btrfs superblock bdis. Read from the
 * parent, on sysfs and debugfs only: never touches a mounted filesystem, never blocks on a device.
 * Not queue/iostats: with iostats 0 the counters freeze, but reading it takes the queue's limits
 * lock, which a task stuck in the device's revalidation holds; the worker reads it and says so with
 * its syncfs report (worker.h WORKER_SYNCING_ACCOUNTED), without which frozen counters prove no hang.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct ProgressProbe {
        int sysfs_fd;        /* borrowed: "/sys" or a fixture tree; -EBADF: none */
        int debugfs_fd;      /* borrowed: debugfs root (holds bdi/); -EBADF: none */
        const dev_t *leaves; /* borrowed: leaf whole disks (DeviceInfo.leaves) */
        size_t n_leaves;
        const char *bdi_name; /* borrowed, may be NULL */
} ProgressProbe;

/* Sums the completion counters of one dev/block/.../stat text (Documentation/block/stat.rst:
 * fields 1, 3, 5, 7, 12, 14, 16 — I/Os and sectors completed for reads, writes, discards, and
 * flushes completed). At least the 11 fields of old kernels. -EBADMSG otherwise. ret_in_flight
 * (may be NULL) gets field 9, the requests the device holds and has not completed (a pending cache
 * FLUSH counts). Pure. */
int progress_parse_block_stat(const char *text, uint64_t *ret, uint64_t *ret_in_flight);

/* Reads every source of p and returns the sum in *ret. -ENODATA when the sources give no evidence:
 * a leaf whose counters cannot be read (its I/O would look like a stall of the others), or no
 * leaves and no bdi stats. The caller cannot tell slow from stuck. *ret_held (may be NULL): a leaf
 * disk holds requests it has not completed (true for a probe without leaves, which run.c never
 * makes: FUSE, NFS and btrfs get no sysfs, hence no evidence, and are never proven stuck). Quiet
 * leaves that hold nothing are not stuck: what waits does so above them (a dm-thin pool out of
 * space, a suspended dm device, a filesystem's own long commit), and the other filesystems of those
 * disks may still be written. Where the kernel does not count a request in field 9 (a cache FLUSH,
 * a request being requeued, on some kernels), a disk stuck on it alone is not proven stuck either:
 * the kernel's sync stays on. */
int progress_read(const ProgressProbe *p, uint64_t *ret, bool *ret_held);
