/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * KeepCheapSync= (suspend-sync.conf(5)): whether the late pass may be left out of a suspend, the
 * kernel's own sync staying on. Pure.
 *
 * The late pass exists to turn that sync off when it would cost the sleep time (slow devices, data
 * left to write, a device proven stuck, on which it would block). When the unit's pass of this sleep
 * has just synced everything, fast, the kernel's sync costs about what those syncs took: less than
 * the late pass itself (its start, configuration, sample, plan, record and knob decision, several
 * milliseconds). Then the late pass is left out and the sync stays on, exactly as without
 * suspend-sync: no promise rests on the late pass there (every superblock is synced by the kernel,
 * which blocks nothing that the unit's pass did not find quick). Anything not known for certain runs
 * the late pass, as before.
 *
 * The unit's pass decides (late_skip_why_not()) and, when the late pass may be left out, writes
 * LATE_SKIP_FILE in the state directory and removes HOOK_LINK_FILE; every unit's pass removes the
 * one and puts the other back first, restore-knob after every sleep (then it records the resume, which
 * the post hook did not). Without the link systemd-sleep runs no hook of ours, for whatever action:
 * the knob stays as it is (1; only the late pass writes it), and hibernation syncs regardless. Should
 * the link be there all the same, the hook sees the marker and, for a suspend, runs no pass.
 */

#include <stdbool.h>
#include <stddef.h>

#include "plan.h"
#include "policy.h"
#include "shared/time-util.h"
#include "state.h"

#define LATE_SKIP_FILE "late-skip" /* relative to the state directory; hook-socket.h too */
/* The link systemd-sleep reaches our hook through (the system-sleep directory's entry points at
 * STATE_DIR/HOOK_LINK_FILE, which points at SLEEP_HOOK_BINARY; tmpfiles.d makes it at boot): the
 * unit's pass removes it with LATE_SKIP_FILE written, so that systemd-sleep finds no executable of
 * ours (a dangling link is skipped by 252-257) and, on 257, forks no executor at all. */
#define HOOK_LINK_FILE "sleep-hook"
/* The kernel's sync is cheap below this: what the late pass itself costs at least (docs/PERFORMANCE.md:
 * 5-10 ms from the hook's start to its end on the hosts measured). */
#define LATE_SKIP_BELOW (5U * USEC_PER_MSEC)

typedef struct LateSkipFacts {
        SyncOnSuspendMode mode; /* only auto leaves the late pass out: off wants the sync off, keep
                                 * never lets the late pass touch it */
        bool keep_cheap_sync;   /* KeepCheapSync= */
        bool unit_pass;         /* this is the unit's pass (or the daemon's, for the unit) */
        int knob;               /* sync_on_suspend as read now: 1, 0, or a negative errno. Only 1
                                 * leaves the late pass out: the kernel's sync must be on (none of
                                 * ours writes it before the late pass, which is then not run) */
        bool complete;          /* it saw every superblock the kernel's sync writes, none gone */
        bool covered;           /* nothing it left out may hold data (RunTally.covered) */
        bool unsynced;          /* a planned mount ended neither synced nor deferred (error, timeout,
                                 * not started, Action=skip) */
        size_t n_hung;          /* devices proven stuck in this pass */
        size_t n_stuck;         /* workers of this or an earlier pass still in the kernel (handover) */
        size_t n_remote;        /* writable superblocks served by a process or the network (FUSE, NFS,
                                 * a loop device on such a file): their sync may wait on a server, and
                                 * the late pass's evidence may spare it */
        usec_t estimate;        /* what the kernel's sync should take, late_skip_estimate() */
        usec_t below;           /* ... cheap under this: LATE_SKIP_BELOW (0 reads as it) */
} LateSkipFacts;

/* The facts the unit's pass's sample gives, and whether a superblock of its plan was unmounted since
 * (RunTally.gone): complete (every superblock the kernel's sync writes was seen, and none is gone: a
 * lazily unmounted one lives on, out of our reach and of the estimate) and n_remote (writable
 * superblocks of a network or FUSE filesystem, or on a device served by a process or the network,
 * device.h). The other fields are left as they are. */
void late_skip_observe(LateSkipFacts *f, const Sample *s, bool gone);

/* NULL: the late pass may be left out of this sleep. Otherwise why it runs (static text). */
const char *late_skip_why_not(const LateSkipFacts *f);

/* What the kernel's sync should take after this pass, done serially as it does: the sum over the
 * record's mounts of what each sync took, and for each one deferred to the late pass (DeferCommit=)
 * its median late sync time in the history (late: the learned entries of the late pass); a deferred
 * one the history does not know, or a mount that timed out or failed, makes it USEC_INFINITY. */
usec_t late_skip_estimate(const RunRecord *rec, const PlanLearned *late, size_t n_late);
