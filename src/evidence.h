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
 * lists were read are the window every pass leaves (see docs/CLEAN-EVIDENCE.md).
 * Anything missing (no debugfs, a key absent, the refresh refused) is no evidence.
 */

#include <stdbool.h>

#include "bdi-stats.h"
#include "meminfo.h"

/* Pure. bdi_r/global_r: the results of loading them (negative errno: not available). Returns
 * true when the facts prove the superblock clean; false with a reason (static string) otherwise. */
bool evidence_fuse_clean(const BdiStats *bdi, int bdi_r, const Meminfo *global, int global_r,
                         const char **ret_why);

/* Writes "1" to <root_fd>/proc/sys/vm/stat_refresh, then loads <root_fd>/proc/meminfo. Returns 0
 * or negative errno (the refresh needs root and CAP_SYS_ADMIN-free /proc/sys write access). */
int evidence_load_global(int root_fd, Meminfo *ret);
