/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Defer commit: in the unit's pass, a local block filesystem whose syncfs sends a cache FLUSH even
 * when clean (ext4: ext4_sync_fs() flushes when no commit will; types flushed through their device)
 * gets its data written back (writeback.h) but no syncfs: the late pass, which syncs it anyway right
 * before the kernel's sync, commits it once. Without this the journal commits in the unit's pass
 * and the late pass pays one more FLUSH (200 ms per disk on the test bed, docs/PERFORMANCE.md): as
 * in sync(2), one commit per filesystem, after its data.
 *
 * Both promises stay whole, because the commit is left only where something else is certain to
 * make it before the sleep:
 * - the late pass syncs every local block filesystem of our namespace, and only it may turn the
 *   kernel's own sync off, after its own syncfs (a late pass that does not sync a deferred
 *   superblock finds it on the handover's list and keeps the kernel's sync on);
 * - until then the kernel's own sync is the backstop: deferral needs sync_on_suspend to read 1 at
 *   the unit's pass (a late pass that never runs leaves it so; on hibernation the kernel always
 *   syncs);
 * - a sleep that requires this unit (require-sync.conf: RequiredBy=sleep.target) is called off by
 *   the unit's failure, which the late pass cannot do: the unit commits everything itself;
 * - a device is deferred only when its wait shows it wrote back its data in this pass
 *   (writeback.h settle_written_back(): drained, more than the counters' error written since the
 *   pass sampled it); one whose writeback did not drain, or that wrote nothing and so proved
 *   nothing, is synced now, where a stuck one is proven and handed over (the late pass then never
 *   waits on it);
 * - a device that gets stuck after that is proven stuck by the late pass, and a deferred superblock
 *   on it counts as such, not as left unsynced (run_unsynced_carried()): the kernel's serial sync
 *   would block there.
 */

#include <stdbool.h>

typedef struct DeferFacts {
        bool unit_pass;       /* --trigger=unit without --late: the late pass of the sleep follows */
        bool policy;          /* DeferCommit=yes */
        bool writeback_first; /* WritebackFirst=yes: the wait that tells "written back" */
        int knob;             /* sync_on_suspend as read now: 1, 0, or a negative errno */
        int required;         /* the sleep requires the unit: 1, 0, or a negative errno (unknown) */
} DeferFacts;

/* Whether the unit's pass may leave commits to the late pass; otherwise *ret_why says why not
 * (NULL when deferral was never in question: not the unit's pass, or DeferCommit=no). Pure. */
bool defer_commit_allowed(const DeferFacts *f, const char **ret_why);

/* The environment variable require-sync.conf sets. */
#define DEFER_COMMIT_REQUIRED_ENV "SUSPEND_SYNC_REQUIRED"

/* Whether the sleep requires this unit: env_value (DEFER_COMMIT_REQUIRED_ENV) a true boolean, or a
 * sleep.target.requires/suspend-sync.service link where systemctl enable puts it (etc/ or
 * run/systemd/system below root_fd; an older copy of the drop-in sets no variable). 1 or 0; a value
 * that does not parse counts as 1. */
int defer_commit_sleep_requires(int root_fd, const char *env_value);
