/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * `pre ACTION` / `post ACTION`: the system-sleep hook. systemd-sleep runs every executable of its
 * system-sleep directory with the phase and the action, after the unit's pass (suspend-sync.service,
 * Before=sleep.target). Ours is suspend-sync-sleep-hook (sleep-hook.c), which asks the daemon for
 * the late pass and execs this binary with the same arguments whenever the daemon does not take it
 * (and always for post):
 *   pre:  the late pass (run --late --trigger=hook), as close as possible to the kernel's own sync:
 *         local block filesystems, overlays through their upper layer; FUSE and network
 *         filesystems only checked (user sessions may already be frozen);
 *   post: restore-knob, then the time of the resume in STATE_DIR/last-resume (last-resume.h). The
 *         persistent history and the metrics come from the unit's ExecStopPost= (record-cycle):
 *         nothing here may hold up the end of a resume.
 * A binary rather than a shell script: the script cost a shell's start-up (~1 ms) on every sleep,
 * between the end of the unit's pass and the late pass. main() sets the trigger, --late and the
 * action; the exit status is 0 whatever happens (systemd-sleep ignores it, and nothing here may
 * stop a sleep).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "last-resume.h"
#include "log.h"
#include "shared/fd-util.h"
#include "verbs.h"

int verb_hook(const Args *a, const char *phase) {
        _cleanup_close_ int sysfs_fd = -EBADF;
        int r, code;

        if (streq(phase, "pre")) {
                if (geteuid() != 0)
                        return log_error_errno(EPERM, "The late pass needs root; not syncing.");
                return verb_run(a, NULL, &code, NULL);
        }

        (void) verb_restore_knob(a);
        /* the kernel's suspend counts: a missing sysfs is counts not known */
        sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = last_resume_save(a->state_dir, sysfs_fd, a->sleep_action, getenv("SYSTEMD_SLEEP_ACTION"));
        if (r == -ENOENT) /* no state directory: no pass of ours ran */
                return 0;
        if (r < 0)
                return log_warning_errno(r, "Failed to record the resume in '%s': %m", a->state_dir);
        return 0;
}
