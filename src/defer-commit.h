/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Defer commit: in the unit's pass, a local block filesystem whose syncfs sends a cache FLUSH even
 * when clean (ext4: ext4_sync_fs() flushes when no commit will; types flushed through their device)
 * gets no worker: the pass wakes the flusher threads when its device has dirty data (writeback.h)
 * and leaves the rest to the late pass, which syncs it anyway right before the kernel's sync: its
 * worker waits for the data, then commits once. Committing in the unit's pass cost one more FLUSH
 * in the late pass (200 ms per disk on the test bed, docs/PERFORMANCE.md); waiting there for the
 * data put the fixed cost of systemd's way from sleep.target to the hook after it, where it now
 * runs while the device writes. As in sync(2): one commit per filesystem, after its data.
 *
 * Both promises stay whole, because the sync is left only where something else is certain to
 * make it before the sleep:
 * - the late pass syncs every local block filesystem of our namespace, and only it may turn the
 *   kernel's own sync off, after its own syncfs (a late pass that does not sync a deferred
 *   superblock finds it on the handover's list and keeps the kernel's sync on);
 * - until then the kernel's own sync is the backstop: deferral needs sync_on_suspend to read 1 at
 *   the unit's pass (a late pass that never runs leaves it so; on hibernation the kernel always
 *   syncs);
 * - a sleep that requires this unit (require-sync.conf: RequiredBy=sleep.target; any Requires=,
 *   Requisite= or BindsTo= on it, as PID 1 tells) is called off by the unit's failure, which the
 *   late pass cannot do: the unit commits everything itself; with
 *   OnTimeout=fail the unit's result is to tell of every timeout (a hung device), so likewise;
 * - the handover must be writable (the late pass learns there what was left to it, and keeps the
 *   kernel's sync on when it cannot read it), and the flushers woken where a device was dirty;
 * - only a job whose device's writeback the pass can see (debugfs bdi stats: it waits for writeback,
 *   writeback.h) is left, so that a device with dirty data gets its flushers woken here;
 * - only a device the late pass reaches as well as the unit's pass (plan.c late_reachable(): no
 *   disk a process or the network serves, at most one loop device, whose backing file lies on
 *   memory or on a block filesystem that passes the same test; not on a network filesystem nor on
 *   FUSE, whose server may be in a user's session, which systemd 256+ freezes before the hooks):
 *   the unit's pass syncs the others while their servers still run;
 * - the late pass bounds its worker like any other, and a stuck device is proven stuck there: a
 *   deferred superblock on it counts as such, not as left unsynced (run_unsynced_carried()), since
 *   the kernel's serial sync would block there.
 */

#include <stdbool.h>

typedef struct DeferFacts {
        bool unit_pass;       /* --trigger=unit without --late: the late pass of the sleep follows */
        bool policy;          /* DeferCommit=yes */
        bool writeback_first; /* WritebackFirst=yes: dirty data starts here, the late pass waits for it */
        int knob;             /* sync_on_suspend as read now: 1, 0, or a negative errno */
        int required;         /* the sleep requires the unit: 1, 0, or a negative errno (unknown) */
        bool fail_on_timeout; /* OnTimeout=fail: a timeout fails the unit, so the unit syncs it all */
        bool kick_failed;     /* a device was dirty and the flusher threads could not be woken */
        bool handover_ok;     /* the state directory is locked and open: the handover tells the late
                               * pass what was left to it */
        bool hook_reachable;  /* this pass's token is written and the hook's link (late-skip.h
                               * HOOK_LINK_FILE) is up: systemd-sleep will run the late pass */
        int hook_entry;       /* the system-sleep directory's entry for it (sleep-hooks.h
                               * sleep_hook_ours()): 1 as installed, 0 masked, replaced or missing, or
                               * a negative errno (not known) */
} DeferFacts;

/* Whether the unit's pass may leave commits to the late pass; otherwise *ret_why says why not
 * (NULL when deferral was never in question: not the unit's pass, or DeferCommit=no). Pure. */
bool defer_commit_allowed(const DeferFacts *f, const char **ret_why);

/* The negative errno behind why (a reason defer_commit_allowed() gave for f) when it is a fact that
 * could not be read (sync_on_suspend, the system-sleep entry, unless -ENODATA: no answer); 0
 * otherwise. Pure. */
int defer_commit_why_error(const DeferFacts *f, const char *why);

/* The environment variable require-sync.conf sets. */
#define DEFER_COMMIT_REQUIRED_ENV "SUSPEND_SYNC_REQUIRED"

/* Whether the sleep requires this unit, so that its failure calls the sleep off (pure): env_value
 * (DEFER_COMMIT_REQUIRED_ENV, set by require-sync.conf) a true boolean, or a value that does not
 * parse; otherwise, when run by a service manager ('managed': $INVOCATION_ID), what PID 1 says
 * (manager.h: 'requirers' 1 some unit requires it, 0 none, negative errno when it could not tell,
 * which counts as required: a false "yes" costs only the deferral). Not run by a service manager
 * (a manual run, a test): 0. */
int defer_commit_required(const char *env_value, bool managed, int requirers);
