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

#include "shared/time-util.h"

#define PROGRESS_BUSY_IDS_MAX 16U /* requests compared between two asks */
#define PROGRESS_BUSY_ID_MAX 24U  /* the first word of a busy line (%p: 16 hex digits) */

/* The busy fallback's state for all probes of one pass: a busy read that did not answer in time (the
 * kernel takes a lock there after all, 6.16's elevator_lock backported: asking again would hold the
 * executor again), or asks that have cost PROGRESS_BUSY_BUDGET (an executor's tick asks for every
 * quiet worker in a row), turn it off. */
typedef struct ProgressBusy {
        bool off;
        usec_t spent;
} ProgressBusy;

/* What one probe's earlier reads saw, for the busy fallback (progress_busy_needed()). */
typedef struct ProgressMemo {
        bool read;            /* a read before this one */
        uint64_t sum;         /* its completion counters */
        unsigned quiet_reads; /* reads since the last completion (the quiet spell) */
        bool held;            /* a request stayed in the driver during this spell */
        char now[PROGRESS_BUSY_IDS_MAX][PROGRESS_BUSY_ID_MAX + 1],
                before[PROGRESS_BUSY_IDS_MAX][PROGRESS_BUSY_ID_MAX + 1];
        size_t n_now, n_before; /* the requests of this spell's last ask, and of the ask before */
} ProgressMemo;

/* How long the bounded child that reads the busy files may take; one that does not answer turns the
 * fallback off for the process, and so does the total time of the asks reaching the budget: they
 * hold the executor's parent at most PROGRESS_BUSY_BUDGET + PROGRESS_BUSY_TIMEOUT in a pass. */
#define PROGRESS_BUSY_TIMEOUT (50 * USEC_PER_MSEC)
#define PROGRESS_BUSY_BUDGET (100 * USEC_PER_MSEC)

/* Where held I/O is seen (progress_read()): field 9; field 9 or the busy files (kernels before 6.10,
 * progress_busy_needed()); the busy files alone (tests: that path on a 6.10+ kernel). */
typedef enum ProgressHeld {
        PROGRESS_HELD_STAT,
        PROGRESS_HELD_STAT_OR_BUSY,
        PROGRESS_HELD_BUSY,
} ProgressHeld;

typedef struct ProgressProbe {
        int sysfs_fd;        /* borrowed: "/sys" or a fixture tree; -EBADF: none */
        int debugfs_fd;      /* borrowed: debugfs root (holds bdi/); -EBADF: none */
        const dev_t *leaves; /* borrowed: leaf whole disks (DeviceInfo.leaves) */
        size_t n_leaves;
        const char *bdi_name; /* borrowed, may be NULL */
        ProgressMemo *memo;   /* borrowed, mutable; non-NULL where field 9 counts no pending FLUSH
                               * (progress_busy_needed()): the busy fallback */
        ProgressBusy *busy;   /* borrowed, mutable, shared by the pass's probes; with memo */
        bool busy_only;       /* field 9 not read for held I/O (PROGRESS_HELD_BUSY) */
} ProgressProbe;

/* Sums the completion counters of one dev/block/.../stat text (Documentation/block/stat.rst:
 * fields 1, 3, 5, 7, 12, 14, 16 — I/Os and sectors completed for reads, writes, discards, and
 * flushes completed). At least the 11 fields of old kernels. -EBADMSG otherwise. ret_in_flight
 * (may be NULL) gets field 9, the requests the device holds and has not completed (a pending cache
 * FLUSH counts). Pure. */
int progress_parse_block_stat(const char *text, uint64_t *ret, uint64_t *ret_in_flight);

/* Does a kernel of this release (uname -r) need the blk-mq debugfs busy files to see a pending cache
 * FLUSH? Linux 6.10 (7be835694dae, "block: fix that util can be greater than 100%") made field 9
 * of the disk's stat the per-CPU count of requests from submission to completion, a caller's
 * preflush included. Before, field 9 walked the tags for requests with I/O statistics in flight,
 * which neither the flush request blk-flush.c sends (no part, no RQF_IO_STAT) nor the caller's
 * request it holds back (never started) is: a disk stuck on a FLUSH alone showed 0 (Debian 12's
 * 6.1). Before 6.16 the busy file's read takes no lock (it walks the tags); from 6.16 it takes the
 * queue's elevator_lock, which a stuck elevator switch may hold, so it is read only where needed.
 * Unknown or unparsable releases: false (field 9 alone). Pure.
 * Either way a FLUSH still pending after the proof window counts as held, as field 9 counts it from
 * 6.10: a disk spinning up or an SMR disk cleaning its cache for that long is taken for stuck. At
 * most 16 leaves of a device are asked (the others count as holding nothing). */
bool progress_busy_needed(const char *release);
/* progress_busy_needed() of the running kernel, asked once. */
bool progress_busy_needed_here(void);

/* Reads every source of p and returns the sum in *ret. -ENODATA when the sources give no evidence:
 * a leaf whose counters cannot be read (its I/O would look like a stall of the others), or no
 * leaves and no bdi stats. The caller cannot tell slow from stuck. *ret_held (may be NULL): a leaf
 * disk holds requests it has not completed (true for a probe without leaves, which run.c never
 * makes: FUSE, NFS and btrfs get no sysfs, hence no evidence, and are never proven stuck). Quiet
 * leaves that hold nothing are not stuck: what waits does so above them (a dm-thin pool out of
 * space, a suspended dm device, a filesystem's own long commit), and the other filesystems of those
 * disks may still be written. With p->memo, leaves whose field 9 is 0 are also asked in debugfs
 * (block/<disk>/hctx<N>/busy: the requests the driver has started and not completed, the flush
 * request included) when no completion happened since the probe's last read, in a bounded child
 * (PROGRESS_BUSY_TIMEOUT; no answer: no), and a yes is kept until a completion. Where none shows a
 * request (a request being requeued, no debugfs,
 * a driver without blk-mq), a disk stuck on it alone is not proven stuck: the kernel's sync stays
 * on. */
int progress_read(const ProgressProbe *p, uint64_t *ret, bool *ret_held);
