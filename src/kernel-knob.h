/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Kernel knob: /sys/power/sync_on_suspend (Linux 5.6+), the switch for the kernel's own unbounded
 * ksys_sync() in enter_state(). This module owns reading and writing it through a sysfs root dir fd
 * (production: an fd for "/sys"; tests: a fixture tree with power/sync_on_suspend as a plain file),
 * the record of the original value in the state directory (knob.orig), and the pure decision
 * whether to change it for one sleep cycle ([Kernel] SyncOnSuspend=).
 *
 * Crash safety: the original value is recorded (atomically, only if no record exists yet) BEFORE
 * the knob is written, and the record is removed only AFTER the original value is back. A run that
 * is killed at any point therefore leaves either nothing changed or a record holding the true
 * original, which the next knob_restore() (ExecStopPost=, the post hook, or the next start) puts
 * back. Only the late pass (verb-run.c) calls knob_save_and_set(): it runs only when the sleep
 * goes ahead.
 */

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "shared/time-util.h"

#define KNOB_SYSFS_PATH "power/sync_on_suspend" /* relative to the sysfs root */
#define KNOB_RECORD_FILE "knob.orig"            /* relative to the state directory */
#define KNOB_SAFE_VALUE 1                       /* kernel default: the kernel syncs */
#define KNOB_FILE_MAX 64U                       /* bytes read from the knob or the record */
/* How long the knob's lock (knob_save_and_set(), knob_restore()) is waited for: its holders keep it
 * for a few system calls, so only a stopped holder makes anyone wait. A pass waits little (its
 * deadline), restore-knob longer (bounded by its caller); either then fails closed. */
#define KNOB_LOCK_WAIT_PASS_USEC (5U * USEC_PER_MSEC)
#define KNOB_LOCK_WAIT_RESTORE_USEC (1U * USEC_PER_SEC)
#define KNOB_LOCK_POLL_USEC 500U

/* Parses the knob's (or the record's) text: "0" or "1", optionally followed by one newline.
 * Returns 0 and the value, or -EBADMSG for anything else. Pure. */
int knob_parse(const char *text, size_t size, int *ret_value);

/* The knob below the sysfs root sysfs (a path), opened for reading and writing before anything
 * else of a process that may have to put the kernel's sync back on: knob_read() and knob_write()
 * use it when they cannot open the knob themselves (sysfs_fd < 0, or the process or the system out
 * of file descriptors or memory: EMFILE, ENFILE, ENOMEM), so that a 0 left by an earlier sleep can
 * still be turned back to 1 (review AS, AS-1). Process-wide, as the knob is; kept for the process's
 * life (close-on-exec). 0, or negative errno (nothing reserved: callers carry on as before). */
int knob_keep_open(const char *sysfs);
/* In a child that closed the fds it inherited: that fd is not the knob's any more (never closed
 * here: its number may be another file's). */
void knob_keep_forget(void);

/* Reads the knob below sysfs_fd. -ENOENT when the kernel has no such knob (older than 5.6 or
 * built without CONFIG_PM_SLEEP): callers say so and carry on. -EBADMSG on unexpected content. */
int knob_read(int sysfs_fd, int *ret_value);

/* Writes value (0 or 1) to the knob. -ENOENT when absent, -EINVAL for other values. */
int knob_write(int sysfs_fd, int value);

/* The kernel's sync back on where a restore could not be done (a 0 of ours may stand, and cannot be
 * told from an administrator's): writes KNOB_SAFE_VALUE unless the knob reads 1. 0 when it reads 1
 * now or there is no knob, else negative errno (the kernel's own sync may stay off). */
int knob_fail_safe(int sysfs_fd);

/* Reads the record of the original value. -ENOENT when there is none, -EBADMSG when garbled. */
int knob_record_read(int state_dir_fd, int *ret_value);

/* Both of the following change the knob and its record only under the knob's lock, an flock(2) of
 * the state directory, waited for at most lock_wait.
 *
 * Sets the knob to new_value (0 or 1) for this sleep cycle, recording the original value first.
 * If a record already exists (a run that was interrupted before it could restore), it is kept: it
 * holds the true original, and the knob's current value may be our own leftover. A garbled record
 * is replaced by the safe value (KNOB_SAFE_VALUE), never by the current one.
 * Returns 1 if the knob was written, 0 if it already had new_value and no record was needed,
 * -ENOENT if the knob is absent, -EBADMSG if its content is unexpected (nothing changed), -EBUSY
 * if the lock was not had (nothing changed), other negative errno on I/O errors (in which case the
 * knob was not written, or the record exists). */
int knob_save_and_set(int sysfs_fd, int state_dir_fd, int new_value, usec_t lock_wait);

/* What must still hold, under the knob's lock, when a pass writes a value other than
 * KNOB_SAFE_VALUE: the system-sleep hook still waits for this pass, its last look at the mounts is
 * still recent. A check made before the lock is a check followed by a write: a pass stalled in
 * between (a page fault on a hung root disk, a frozen cgroup) would write its 0 after the hook gave
 * up and after the resume's restores ran, and nothing would put the knob back (review AF, F1 and
 * F4). closed() returns NULL while the gate is open, else why it is closed. */
typedef struct KnobGate {
        const char *(*closed)(void *userdata);
        void *userdata;
} KnobGate;

/* knob_save_and_set() through a gate (NULL: none), asked right after the lock is had and again
 * right after the write. -ESTALE: closed before anything changed (nothing written, no record made).
 * -ECANCELED: closed by the time the write was done: KNOB_SAFE_VALUE is written back and the record
 * kept (the next restore puts the original back), as a restore that cannot have the lock does; the
 * write back's own error, should it fail (the knob left at new_value). *ret_why (may be NULL) is set
 * whenever the gate closed, and says why. */
int knob_save_and_set_gated(int sysfs_fd, int state_dir_fd, int new_value, usec_t lock_wait,
                            const KnobGate *gate, const char **ret_why);

typedef enum KnobRestore {
        KNOB_RESTORE_NOTHING,   /* no record: nothing was changed by us */
        KNOB_RESTORE_ORIGINAL,  /* the recorded original value was put back */
        KNOB_RESTORE_SAFE,      /* the record was garbled: KNOB_SAFE_VALUE written instead */
        KNOB_RESTORE_UNCHANGED, /* the knob already read the recorded original (a write of ours that
                                 * failed, or was put back at once): nothing written, record dropped */
} KnobRestore;

/* Puts the recorded original value back and removes the record (in that order). Idempotent.
 * Returns a KnobRestore (>= 0) and, unless KNOB_RESTORE_NOTHING, the value now in the knob in
 * *ret_value (may be NULL). If the knob has disappeared, the record is removed and -ENOENT
 * returned. Without the lock (-EBUSY: a holder that does not let go; or its error), or with a record
 * that cannot be read, it writes KNOB_SAFE_VALUE, keeps the record (the next restore puts the
 * original back) and returns that error. */
int knob_restore(int sysfs_fd, int state_dir_fd, usec_t lock_wait, int *ret_value);

/* What one pass found, for the knob decision. */
typedef struct KnobFacts {
        bool unsynced;        /* a planned mount ended neither synced nor on a device proven stuck (an
                             * error, a timeout of a slow or evidence-free device, not started): the
                             * kernel's sync is its only remaining chance */
        bool hung;            /* a mount's device was proven stuck (no I/O completed for the proof
                             * window, its worker inside syncfs) and its worker still is: the
                             * kernel's serial sync would block on it before tasks are frozen. Not
                             * "unsynced": nothing can sync it */
        bool complete;        /* our view was complete: every mount namespace read, no superblock
                             * outside the scanned tables, nothing gone or unreachable since the
                             * plan */
        bool covered;         /* this pass left nothing out that the kernel sync would write (false
                             * for a late pass that skipped FUSE/network/file-backed mounts, for
                             * Action=skip) AND it is the last pass before the kernel sync: false
                             * from the unit's main pass, because writes may follow it */
        bool records_on_disk; /* this pass wrote its record and handover after its syncs to a state
                               * directory that is not on tmpfs: writes only the kernel sync would
                               * still make durable, as if a mount were left out */
        bool other_hooks;     /* another system-sleep hook runs alongside this pass (sleep-hooks.h), or
                               * whether one does is not known: what it writes may land after our
                               * syncs, as if a mount were left out */
        bool unit_pass;       /* the unit's pass of this sleep ran with a complete view and left its
                               * record (handover.h): what this pass left out (network, FUSE) was
                               * synced by it or is listed as unsynced. Without it, mounts left out
                               * may never have been synced by anyone */
        bool unexplained;     /* the bdi of a device without a superblock of the sample holds dirty
                               * inodes: the device's own page cache (written straight to the disk)
                               * or a superblock no table shows (evidence.h
                               * evidence_unexplained_dirty()); or a block device of a disk with
                               * such a superblock, other than those of its writable superblocks,
                               * still holds dirty pages after the pass synced it (raw-cache.h); or
                               * that could not be checked. Data
                               * only the kernel sync would write: like an incomplete view, it keeps
                               * that sync on in every mode */
        bool changed;         /* a sample taken again right before the knob's write shows a superblock
                               * the pass's plan cannot account for (sample_changed_since(): mounted,
                               * remounted writable or given another's device number since), or could
                               * not be taken, or the last look is older than KNOB_LOOK_MAX at the
                               * write (knob_look_stale()): like an incomplete view, it keeps the sync on */
        bool requester_gone;  /* the late pass run by the daemon for the system-sleep hook
                               * (hook-socket.h): the hook no longer waits for it (it gave up,
                               * systemd-sleep may have gone on to sleep or resumed already), or the
                               * pass is past the limit it gave the hook. Nothing says this pass is the
                               * last before the kernel's sync: it stays on, in every mode */
        /* Of unsynced, only that what the unit's pass of this sleep left unsynced is not known (the
         * state directory not locked, a read-only one, or its handover not read): said as such, not
         * as a mount left unsynced (review AW, L3). */
        bool unit_left_unknown;
} KnobFacts;

/* Pure decision for one sleep cycle, after a pass. The kernel sync is never turned off while a
 * mount may be left unsynced by it (f->unsynced), while our view was incomplete, or (auto) while a
 * mount was left out of the pass or writes may still follow it:
 * SYNC_ON_SUSPEND_KEEP: never touch the knob.
 * Every mode but KEEP below also needs !requester_gone.
 * SYNC_ON_SUSPEND_AUTO: 0 when !unsynced && complete && !unexplained &&
 *                       ((covered && !records_on_disk && !other_hooks) ||
 *                        (hung && (covered || unit_pass))):
 *                       the last pass before the kernel sync synced everything that sync would
 *                       write (its own record included, no other hook writing alongside), except
 *                       devices proven stuck, on which it
 *                       would block before tasks are frozen — and with such a device, even if
 *                       mounts were left out, as long as the unit's pass synced those (unit_pass):
 *                       the kernel sync would never end; otherwise leave it.
 * SYNC_ON_SUSPEND_OFF:  0 when !unsynced && complete && !unexplained && (covered || unit_pass): even
 *                       if this pass left mounts out, when the unit's pass synced them (the
 *                       administrator gave up the kernel sync as a second chance for writes after
 *                       our passes, not as the only chance of mounts no pass synced); otherwise
 *                       leave it (a sync error, a slow device or an incomplete view keeps it).
 * Returns 1 and *ret_new_value when the knob should be set, 0 when it should be left alone,
 * -EINVAL for an invalid mode. Never asks for 1: restoring is knob_restore()'s job. */
int knob_decide(SyncOnSuspendMode mode, const KnobFacts *f, int *ret_new_value);

/* The late pass's last look at the mounts (the second sample) is what the decision knows of them at
 * the knob's write: a filesystem mounted after the look is the window every pass leaves. A look that
 * took long (a search for hidden superblocks through a loaded machine's processes takes up to the
 * second sample's bound, 250 ms, after the tables were read) stretches that window (review AD, AD1),
 * so a look begun longer than this before the write counts as KnobFacts.changed. It takes 0.3-0.5 ms
 * on a machine's own root, 1.4-2.6 ms in the end-to-end container (no kernel list of namespaces:
 * every process read), a few times that in a sanitizer build. */
#define KNOB_LOOK_MAX (50U * USEC_PER_MSEC)

/* Whether a look begun at started (CLOCK_MONOTONIC) is older than KNOB_LOOK_MAX at now. Pure. */
bool knob_look_stale(usec_t started, usec_t now);
