/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Evidence that a superblock the late pass leaves out holds nothing the kernel's own sync would
 * write or wait for, read without touching the mount (its server may be frozen by then).
 *
 * One rule, for plain FUSE superblocks of unprivileged servers (plan.h PlanEntry.fuse_evidence):
 * the kernel's sync can only write back their dirty pages and inodes and wait for writeback in
 * flight. So the superblock is clean when
 *   - its bdi's writeback lists (debugfs bdi/<0:N>/stats: b_dirty, b_io, b_more_io, b_dirty_time;
 *     exact counts, walked under the list lock, summed over every cgroup writeback of the bdi) are
 *     all empty: no inode with dirty pages, metadata or timestamps; and
 *   - no page anywhere is under writeback: proc/meminfo Writeback and WritebackTmp are 0 right
 *     after proc/sys/vm/stat_refresh folded the per-CPU counter deltas into them (without the
 *     refresh, and in the bdi's own BdiWriteback, up to a batch of pages per CPU can hide).
 * The lists are read first, the global writeback after: a write already in flight at the list
 * read either ended before the writeback read or is seen by it. Writes that start after the
 * lists were read are the window every pass leaves (see docs/CLEAN-EVIDENCE.md). "Ended" means
 * answered by the server, which may have written the data into a local filesystem: the late pass
 * reads the evidence before its workers too and needs both looks clean (review AP, AP-1; verb-run.c).
 * Anything missing (no debugfs, a key absent, the refresh refused) is no evidence.
 */

#include <stdbool.h>

#include "bdi-stats.h"
#include "meminfo.h"
#include "shared/bounded-child.h"
#include "shared/time-util.h"

/* Pure: whether a bdi's writeback lists (b_dirty, b_io, b_more_io, b_dirty_time) are shown and all
 * empty; false with a reason (static string) otherwise. bdi_r: the result of loading it. */
bool evidence_bdi_lists_empty(const BdiStats *bdi, int bdi_r, const char **ret_why);

/* The newest kernel the FUSE rule was checked on: that fuse_sync_fs() sends FUSE_SYNCFS to no plain
 * FUSE server of an unprivileged user (docs/CLEAN-EVIDENCE.md, item 5: series under discussion would
 * change it). Pure: whether a kernel release ("6.18.44-...", proc/sys/kernel/osrelease) is that one
 * or older; anything that does not parse is not (review AZ, AZ-3: fail closed). */
#define EVIDENCE_FUSE_KERNEL_MAJOR 6U
#define EVIDENCE_FUSE_KERNEL_MINOR 18U
bool evidence_fuse_kernel_checked(const char *osrelease);

/* Pure: whether global (read, has_writeback set) counts pages under writeback, WritebackTmp too. */
bool evidence_writeback_pending(const Meminfo *global);

/* Pure: whether an unrefreshed read of proc/meminfo leaves room for no page to be under writeback:
 * Writeback and WritebackTmp each within drift_bytes (meminfo_drift_load()) of 0; true when it does
 * not show Writeback. Says only when a refreshed read (evidence_load_global()) is worth making;
 * never evidence. */
bool evidence_writeback_may_be_done(const Meminfo *unrefreshed, uint64_t drift_bytes);

/* Pure: Sample.writeback_idle from evidence_load_global()'s result r and what it read: 1 when the
 * refreshed count shows Writeback and no page under writeback (WritebackTmp too), 0 when it does not
 * (a proc/meminfo without the line proves nothing), r when r < 0. */
int evidence_writeback_idle(int r, const Meminfo *global);

/* Pure. bdi_r/global_r: the results of loading them (negative errno: not available). Returns
 * true when the facts prove the superblock clean; false with a reason (static string) otherwise. */
bool evidence_fuse_clean(const BdiStats *bdi, int bdi_r, const Meminfo *global, int global_r,
                         const char **ret_why);

/* Writes "1" to <root_fd>/proc/sys/vm/stat_refresh, then loads <root_fd>/proc/meminfo, in a child
 * bounded by timeout (shared/bounded-child.h): the refresh queues work on every CPU and waits for
 * it (schedule_on_each_cpu()), which does not end while a CPU cannot run its kworker (a busy
 * real-time task with throttling off) or CPU hotplug holds its lock (review O, O4). Returns 0, or a
 * negative errno: -ETIMEDOUT past the timeout (and with 0), the refresh's or the read's error (the
 * refresh needs root), the child's. */
int evidence_load_global(int root_fd, usec_t timeout, Meminfo *ret);
/* Its bound in a pass (~1 ms when a CPU is not held; under a second sample's or a raw look's). */
#define EVIDENCE_GLOBAL_MAX (50U * USEC_PER_MSEC)

/* evidence_load_global() with its child forked ahead, off a path that is waited for
 * (bounded_child_prepare()): prepare forks it, waiting; load lets it go, bounded by timeout from
 * then, and returns what evidence_load_global() would, or -ESTALE when the child could not be told
 * (gone meanwhile: load again without it). Either way c is used up; one never loaded:
 * bounded_child_cancel(). */
int evidence_global_prepare(int root_fd, BoundedChild *ret);
int evidence_global_load_prepared(BoundedChild *c, usec_t timeout, Meminfo *ret);

/* Whether bdi 'name' (under <debugfs_fd>/bdi/) shows writeback lists that are empty and all of its
 * lists: before Linux 6.10 (no wb_stats) `stats` shows only the root cgroup's, which proves nothing
 * where cgroup writeback can be (see below). *cgwb caches that look at <sysfs_fd>/fs/cgroup (-1: not
 * yet looked). Returns 1 proven empty; 0 not, with a static reason in *ret_why; -ENOENT the bdi is
 * gone; -ENOMEM. Reads debugfs and sysfs only. */
int evidence_bdi_empty(int debugfs_fd, int sysfs_fd, const char *name, int *cgwb, const char **ret_why);

/*
 * Data no planned filesystem explains, for the late pass's knob decision. The kernel's own sync
 * also writes what no mount table shows: the page cache of every block device (a dd straight to a
 * disk), and superblocks no table lists (a vfat or exfat lazily unmounted with files still open,
 * which no sysfs list names either). Both keep inodes on their disk's bdi writeback lists until
 * written. So: every bdi under <debugfs_fd>/bdi/ whose name is not in 'known' (the bdis of the
 * superblocks of the sample: what the plan did with those decides) must have empty lists. Such data
 * on a disk that also holds a known superblock, whose inodes look alike: raw-cache.h. Writeback already in flight is not counted: its I/O is
 * submitted and completes before the device suspends, as after the kernel's sync, which does not
 * flush an unmounted device's cache either.
 * Before Linux 6.10 (no bdi/<name>/wb_stats) `stats` shows only the root cgroup's writeback context,
 * and a block device's inode written from a cgroup goes on that cgroup's lists (cgroup writeback):
 * there, unless the cgroup v2 root under <sysfs_fd>/fs/cgroup shows no memory controller for its
 * children (cgroup.subtree_control) or io or memory bound to v1 (cgroup.controllers), every such bdi
 * counts as not proven clean.
 * A bdi named after a filesystem type ("<type>-<n>": cifs, 9p, ceph, zfs, ...; bdi-stats.h) does not
 * give its superblock's device (review G, G3): more of them of a type than 'types' (the filesystem
 * types of the sample's superblocks, one per superblock) has superblocks of it is a superblock no
 * mount table shows, not proven clean whatever its lists say (ZFS keeps its dirty data in its
 * transaction group, ceph its metadata in requests not yet safe); one whose name gives neither a
 * device nor a type is not proven clean either.
 * Returns 0 when every such bdi is clean; 1 with the first that is not (*ret_name, free it;
 * *ret_why a static reason); -E2BIG past EVIDENCE_BDIS_MAX bdis; another negative errno when
 * debugfs cannot be read (no evidence). Reads debugfs only (kernel memory, no filesystem server).
 */
#define EVIDENCE_BDIS_MAX 4096U
int evidence_unexplained_dirty(int debugfs_fd, int sysfs_fd, const char *const *known, size_t n_known,
                               const char *const *types, size_t n_types, char **ret_name,
                               const char **ret_why);
