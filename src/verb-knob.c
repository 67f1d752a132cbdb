/* SPDX-License-Identifier: GPL-2.0-or-later */

/* The kernel's sync_on_suspend knob: restore-knob (after resume, or when the sleep did not happen)
 * and what a pass does with knob_decide()'s answer (verb-knob.h). */

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "daemon.h"
#include "handover.h"
#include "kernel-knob.h"
#include "last-resume.h"
#include "log.h"
#include "message-ids.h"
#include "run.h"
#include "shared/string-util.h"
#include "state.h"
#include "verb-knob.h"
#include "verbs.h"

/* A restore that could not be done (error): the kernel's sync on, said; negative errno when that
 * failed too. */
static int knob_restore_failed(int sysfs_fd, int error, const char *what) {
        int r = knob_fail_safe(sysfs_fd);

        if (r < 0)
                return log_error_errno(r,
                                       "%s (%s), and failed to set /sys/power/sync_on_suspend to %d: the "
                                       "kernel's own sync may stay off for the next sleep: %m",
                                       what, strerror(-error), KNOB_SAFE_VALUE);
        log_warning("%s (%s): /sys/power/sync_on_suspend reads %d (set so if it read 0: the kernel syncs), "
                    "any record kept for the next restore.",
                    what, strerror(-error), KNOB_SAFE_VALUE);
        return 0;
}

int verb_knob_restore(int sysfs_fd, const char *state_dir, usec_t lock_wait, const char *why) {
        _cleanup_close_ int dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int value = -1, r;

        /* No state directory, no record: nothing of ours to put back. Any other failure (out of file
         * descriptors or memory, EACCES): a 0 of ours may stand, which nothing can tell from an
         * administrator's (review AS, AS-1). */
        if (dir_fd < 0)
                return errno == ENOENT ? 0
                                       : knob_restore_failed(sysfs_fd, negative_errno(),
                                                             "Cannot open the state directory to tell "
                                                             "whether suspend-sync left sync_on_suspend "
                                                             "changed");
        r = knob_restore(sysfs_fd, dir_fd, lock_wait, &value);
        if (r == -ENOENT)
                log_notice("The kernel has no sync_on_suspend knob any more; dropped the record.");
        else if (r == -EBUSY)
                log_warning("Another process holds the lock of /sys/power/sync_on_suspend: set it to %d "
                            "(the kernel syncs) and kept the record of the original for the next restore.",
                            KNOB_SAFE_VALUE);
        else if (r < 0)
                return knob_restore_failed(sysfs_fd, r, "Failed to restore /sys/power/sync_on_suspend");
        else if (r == KNOB_RESTORE_UNCHANGED)
                log_info(
                        "/sys/power/sync_on_suspend already reads %d, the original (%s): dropped the record of "
                        "it.",
                        value, why);
        else if (r != KNOB_RESTORE_NOTHING)
                log_event(LOG_NOTICE, SUSPEND_SYNC_MESSAGE_KNOB_RESTORED_STR,
                          &(LogEvent) { .knob_new = value },
                          "Restored /sys/power/sync_on_suspend to %d (%s)%s.", value, why,
                          r == KNOB_RESTORE_SAFE ? ", record was garbled: used the kernel default" : "");
        return 0;
}

/* The sleep happened or was called off: what the unit's pass left unsynced is no longer news for a
 * late pass. Stuck workers stay listed until they end. With token (the daemon's, for the pass it ran),
 * only that pass's cycle: a restore still running when the next sleep's unit pass has begun leaves
 * that pass's mark and record alone (review I, I4): -ESTALE then. Otherwise 0, and whether the
 * system-sleep hook's link was down (the unit's pass left the late pass out): then no post hook ran. */
static int handover_end_cycle(const char *state_dir, const char *token, bool *ret_hook_was_down) {
        _cleanup_(handover_done) Handover h = {};
        _cleanup_close_ int lock_fd = -EBADF, dir_fd = -EBADF;
        bool locked;
        int r;

        *ret_hook_was_down = false;

        dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0) {
                if (errno != ENOENT)
                        log_warning_errno(negative_errno(),
                                          "Failed to open '%s', the unit's record of this sleep stays: %m",
                                          state_dir);
                return 0;
        }
        /* Under the lock when it is free. A unit's pass writes its first mark without it, so that
         * mark may still come between the check of the token and the removal; that pass then writes
         * it again under the lock after ours (the unit's, which waits for it), or refuses to run
         * (the daemon's, and the unit runs). Without the lock all the same (a manual run may hold
         * it): the unit's record, wherever it stays, no longer stands for a sleep, nor leaves a late
         * pass out (handover.h). */
        locked = state_lock(state_dir, &lock_fd) >= 0;
        r = handover_unit_mark_end(dir_fd, token, ret_hook_was_down);
        if (r == -ESTALE) {
                log_debug("The next sleep's unit pass has begun: its mark and record stay.");
                return r;
        }
        if (r < 0)
                log_warning_errno(r,
                                  "Failed to reset '%s/" HANDOVER_UNIT_MARK_FILE "' and the system-sleep "
                                  "hook's link, ignoring (without the link no late pass runs, and the "
                                  "kernel's sync stays on): %m",
                                  state_dir);
        if (!locked)
                return 0;
        if (handover_load(dir_fd, &h) < 0 || (h.n_unsynced == 0 && h.n_synced == 0 && h.unit_pass == 0))
                return 0;
        /* Under the lock, with no other token standing, every line is this cycle's or older (a
         * pass writes its mark before it takes the lock), but for another pass's "unit" line, whose
         * mark a restore of no token removed: it vouches for nothing now, and stays. */
        if (token && h.unit_pass != 0 && !streq(h.unit_token, token))
                return 0;
        handover_clear_unsynced(&h);
        if (handover_save(dir_fd, &h) < 0)
                log_debug("Failed to update the handover file, ignoring.");
        return 0;
}

int verb_restore_knob(const Args *a) {
        _cleanup_close_ int sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        bool hook_was_down;
        int restored;

        /* Without it, through the knob held open from the start (knob_keep_open()). */
        if (sysfs_fd < 0)
                log_warning_errno(negative_errno(), "Failed to open '%s': %m", a->sysfs);
        restored = verb_knob_restore(sysfs_fd, a->state_dir, KNOB_LOCK_WAIT_RESTORE_USEC, "resume");
        /* The next sleep has begun (a daemon's restore run late): the daemon's mark is that sleep's
         * (review L, L1: a restore of a daemon restarted since). */
        if (handover_end_cycle(a->state_dir, a->token, &hook_was_down) == -ESTALE)
                return restored;
        /* With its link down no post hook ran to record the resume: this is the first call after it
         * (the daemon's resume handler or the unit's ExecStopPost=), a few ms later. */
        if (hook_was_down) {
                int r = last_resume_save(a->state_dir, sysfs_fd, NULL, NULL);

                if (r < 0)
                        log_warning_errno(r, "Failed to record the resume in '%s': %m", a->state_dir);
                else
                        log_debug("No system-sleep hook of ours ran (the late pass was left out): "
                                  "recorded the resume now.");
        }
        /* The daemon's mark stood for the sleep that just ended and for no other (the daemon
         * removes it too, when logind tells it; this also covers a sleep logind lost track of). */
        if (unlink(DAEMON_PASS_MARK) < 0 && errno != ENOENT)
                log_warning_errno(negative_errno(), "Failed to remove " DAEMON_PASS_MARK ": %m");
        /* A failure: the kernel's own sync may stay off for the next sleep. */
        return restored;
}

/* The knob was kept for want of the unit's record only: a rule that lets the late pass turn it off over
 * mounts it left out (off, auto with a hung device) needed it (knob_decide()). */
static bool kept_for_no_unit_record(SyncOnSuspendMode mode, const KnobFacts *f) {
        return !f->covered && !f->unit_pass && (mode == SYNC_ON_SUSPEND_OFF || f->hung);
}

static const char *knob_kept_why(SyncOnSuspendMode mode, const KnobFacts *f) {
        if (f->requester_gone)
                return "the system-sleep hook that asked the daemon for this pass no longer waits for it "
                       "(or the pass is past the limit it gave the hook)";
        if (f->unsynced && f->unit_left_unknown)
                return "what the unit's pass of this sleep left unsynced is not known (the state directory "
                       "could not be locked, or its handover read)";
        if (f->unsynced)
                return "a mount was left unsynced (error, slow device, timeout without proof of a hang, or "
                       "an Action=skip rule)";
        if (!f->complete)
                return "the view of the mounts was incomplete";
        if (f->unexplained)
                return "a device without a mounted filesystem holds dirty data, or that cannot be told";
        if (f->changed)
                return "the mounts changed since this pass looked at them, or that cannot be told";
        if (kept_for_no_unit_record(mode, f))
                return "this pass left mounts out, and there is no record of the unit's pass of this sleep "
                       "that synced them (suspend-sync.service not enabled, it did not finish or saw only "
                       "part, a later sleep of suspend-then-hibernate, or a mount made since it ran)";
        if (!f->covered)
                return "this pass left mounts out, or writes may still follow it";
        if (f->records_on_disk)
                return "the state directory is not on tmpfs, and this pass recorded its run there after "
                       "its syncs";
        if (f->other_hooks)
                return "another system-sleep hook runs alongside this pass and may write after it";
        return NULL;
}

void verb_knob_apply(const Args *a, const Policy *p, const KnobFacts *f, const char *detail,
                     const RunMount *uncovered, size_t n_uncovered, const KnobGate *gate) {
        _cleanup_close_ int sysfs_fd = -EBADF, dir_fd = -EBADF;
        const char *why = NULL, *lead;
        int value, now_value, level, r;
        bool off;

        r = knob_decide(p->sync_on_suspend, f, &value);
        if (r < 0)
                return;
        if (r == 0) {
                why = knob_kept_why(p->sync_on_suspend, f);
                if (!why || p->sync_on_suspend == SYNC_ON_SUSPEND_KEEP)
                        return;
                /* An earlier pass of this cycle (the unit's) may have turned the kernel sync off:
                 * what this pass found wins, so put the original back. */
                sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                (void) verb_knob_restore(sysfs_fd, a->state_dir, KNOB_LOCK_WAIT_PASS_USEC, why);
                /* Still 0 with no change of ours recorded: an administrator's setting (or a record
                 * lost, review AF F5). Not ours to turn on; said as it is, not as "on". */
                off = sysfs_fd >= 0 && knob_read(sysfs_fd, &now_value) >= 0 && now_value == 0;
                lead = off ? "The kernel's own sync stays off (sync_on_suspend reads 0, set so outside this pass)"
                           : "Leaving the kernel's own sync on";
                level = off ? LOG_WARNING : LOG_NOTICE;
                /* Left out of the pass: which mount is said below. Any other reason, as such. */
                if (detail)
                        (void) log_internal(level, 0, "%s: %s.", lead, detail);
                else if (f->requester_gone || f->unsynced || !f->complete || f->covered ||
                         kept_for_no_unit_record(p->sync_on_suspend, f))
                        (void) log_internal(level, 0, "%s: %s.", lead, why);
                else if (uncovered) {
                        /* Which mount kept it on, so that an administrator can tell; a mount point
                         * too long for the line (escaped) shortened in its middle, so the reason
                         * still shows. */
                        char mp[RUN_NOTE_PATH_MAX + 1];

                        (void) log_internal(level, 0, "%s: this pass left %s out (%s)%s.", lead,
                                            run_note_path(uncovered->mount_point, mp), uncovered->reason,
                                            n_uncovered > 1 ? ", and more mounts" : "");
                }
                return;
        }
        sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        dir_fd = open(a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sysfs_fd < 0 || dir_fd < 0) {
                log_warning_errno(negative_errno(), "Cannot reach sysfs or the state directory, leaving "
                                                    "sync_on_suspend alone: %m");
                return;
        }
        r = knob_save_and_set_gated(sysfs_fd, dir_fd, value, KNOB_LOCK_WAIT_PASS_USEC, gate, &why);
        if (r < 0 && r != -ESTALE && r != -ECANCELED && why)
                /* The gate closed after the write, and the write back failed (review AG, F5). */
                log_error_errno(
                        r,
                        "Failed to set /sys/power/sync_on_suspend back to 1 after this pass wrote %d (%s): "
                        "it stays %d until a restore puts the original back: %m",
                        value, why, value);
        else if (r == -ESTALE)
                log_notice("Leaving the kernel's own sync on: %s.", why);
        else if (r == -ECANCELED)
                log_notice("Set /sys/power/sync_on_suspend back to 1 right after this pass wrote %d: %s.",
                           value, why);
        else if (r == -EBUSY)
                log_notice(
                        "Leaving the kernel's own sync on: another process (restore-knob) holds the lock of "
                        "/sys/power/sync_on_suspend.");
        else if (r == -ENOENT)
                log_event(LOG_NOTICE, SUSPEND_SYNC_MESSAGE_KNOB_ABSENT_STR, NULL,
                          "SyncOnSuspend=%s: this kernel has no /sys/power/sync_on_suspend, carrying on.",
                          sync_on_suspend_mode_to_string(p->sync_on_suspend));
        else if (r < 0)
                log_warning_errno(r, "Failed to set /sys/power/sync_on_suspend, ignoring: %m");
        else if (r > 0)
                /* r > 0: the knob (0 or 1, else -EBADMSG) was written, so it held the other value. */
                log_event(LOG_NOTICE, SUSPEND_SYNC_MESSAGE_KNOB_CHANGED_STR,
                          &(LogEvent) { .knob_old = !value, .knob_new = value },
                          "Set /sys/power/sync_on_suspend to %d for this sleep (%s).", value,
                          f->hung ? "a mount is hung, the kernel sync would block on it"
                                  : "everything the kernel sync would write was just synced");
}
