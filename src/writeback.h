/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Writeback first: let a device's data reach it before syncfs() asks its filesystem to commit.
 *
 * syncfs() starts the data writeback of one filesystem and, without waiting for it, asks the
 * filesystem to commit (sync_filesystem(): writeback_inodes_sb(), then ->sync_fs(sb, 0)); a
 * journaled filesystem (ext4, jbd2) then commits the block allocations of that writeback while the
 * data is still in flight, and commits again for what its completion changed (unwritten extents
 * converted): two commits, each a cache FLUSH plus a FUA write. sync(2) waits for every
 * filesystem's data first and commits once. Measured on the test bed (docs/PERFORMANCE.md): 4 MiB
 * on a serial 8 MiB/s disk with 200 ms flushes, syncfs 1.32 s where sync(2) takes 0.92 s; after
 * the writeback in flight has drained, the same syncfs takes 0.41 s.
 *
 * So, before a worker calls syncfs(), it waits (bounded) until its device's writeback in flight
 * has drained, read from debugfs bdi/<name>/stats (settle_step(), pure). Data that is dirty but not
 * in flight is started for every device at once by waking the kernel's flusher threads — the first
 * step of sync(2) — which user space can do only through the documented side effect of writing a
 * different value to vm.dirty_writeback_centisecs (the value is put back at once; writeback_kick()).
 * syncfs() is called afterwards in every case: this changes only when the data is written, never
 * whether a filesystem is synced.
 */

#include <stdbool.h>
#include <stdint.h>

#include "bdi-stats.h"
#include "shared/time-util.h"

typedef enum SettleMode {
        SETTLE_NONE,      /* syncfs() at once */
        SETTLE_IN_FLIGHT, /* wait for the writeback in flight */
        SETTLE_ALL,       /* the flushers were woken: wait for the dirty data to be written too */
} SettleMode;

typedef enum SettleResult {
        SETTLE_WAIT,
        SETTLE_DRAINED,     /* nothing (left) in flight, within the counters' error */
        SETTLE_STALLED,     /* nothing in flight and no page completed for the idle window */
        SETTLE_QUIET,       /* data in flight, but no page completed for the quiet window: the
                             * device may be stuck; syncfs() now, the executor judges it */
        SETTLE_CAPPED,      /* waited the longest allowed */
        SETTLE_NO_EVIDENCE, /* the stats lack a key that is needed */
} SettleResult;

typedef struct SettleWindows {
        usec_t idle;  /* nothing in flight and nothing completing this long: the flushers are not
                       * coming (SETTLE_STALLED) */
        usec_t quiet; /* in flight, nothing completing this long (SETTLE_QUIET). Shorter than the
                       * executor's stall window, so that a worker on a stuck device is in syncfs(),
                       * where SIGKILL cannot end it, before the executor gives up on it: an
                       * abandoned worker that is still alive is what proves the device still stuck */
        usec_t cap;   /* the longest wait (SETTLE_CAPPED) */
} SettleWindows;

typedef struct SettleState {
        usec_t started, last_progress;
        uint64_t written;
        uint64_t goal;      /* BdiWritten once what was in flight (and dirty, SETTLE_ALL) at the
                              * first sample is written */
        bool seen;          /* a sample was taken */
        bool saw_writeback; /* writeback above the slack was seen: the flushers did their pass */
} SettleState;

/* The polls of settle_wait(): the first after SETTLE_POLL_FIRST_USEC, each next one twice as far,
 * then every SETTLE_POLL_USEC. A few hundred KiB in flight on a fast disk drain within a
 * millisecond: a fixed 2 ms poll made each such wait 2 ms, longer than sync(2) takes for them (the
 * late pass of a clean sleep, docs/PERFORMANCE.md). A long wait reads the stats as often as before:
 * 3 reads more in its first 2 ms. */
#define SETTLE_POLL_FIRST_USEC (250U)
#define SETTLE_POLL_USEC (2U * USEC_PER_MSEC)
#define SETTLE_IDLE_USEC (100U * USEC_PER_MSEC)

/* The error of the kernel's per-CPU bdi counters (wb_stat_error(): nr_cpu_ids * WB_STAT_BATCH
 * pages, WB_STAT_BATCH = 8 * (1 + ilog2(nr_cpu_ids))), in bytes. */
uint64_t settle_slack(unsigned n_cpus, uint64_t page_size);
/* The same for this machine (sysconf). */
uint64_t settle_slack_local(void);

/* One step: feeds the stats read at 'now' into s and says whether to go on waiting. Pure. */
SettleResult settle_step(SettleState *s, SettleMode mode, const BdiStats *st, uint64_t slack, usec_t now,
                         const SettleWindows *w);

/* The time to the next poll after one prev_usec after the last (0: the first). Pure. */
usec_t settle_poll_next(usec_t prev_usec);

/* The worker side: polls the stats file stats_fd (debugfs bdi/<name>/stats, read with pread) at
 * settle_poll_next()'s times until settle_step() says stop. Returns the result; SETTLE_NO_EVIDENCE when the
 * file cannot be read or parsed. */
SettleResult settle_wait(int stats_fd, SettleMode mode, const SettleWindows *w);

/* Wakes the kernel's flusher threads for every device (wakeup_flusher_threads(), as sync(2) does
 * first) by writing another value to <proc_fd>/sys/vm/dirty_writeback_centisecs and then its own
 * value back, under an flock(2) of that file (one kick at a time: two runs at once would otherwise
 * put each other's value back). No blockable signal ends it between its two writes, and the value
 * goes back only over its own: one another writer set in between stays, unless it was set in the
 * few system calls between the read of the value and the first write, or between the re-read and
 * the write back (no compare-and-swap on a sysctl). 0 on success; -EBUSY when another run holds the lock (nothing
 * done); a negative errno when the value could not be read or the first write failed (nothing
 * changed); -EUCLEAN when the value could not be put back (*ret_left says what is left in it). */
int writeback_kick(int proc_fd, unsigned *ret_value, unsigned *ret_left);

const char *settle_result_to_string(SettleResult r);
