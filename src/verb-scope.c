/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "scope.h"
#include "shared/bounded-child.h"
#include "verb-scope.h"

/* Abandoned workers still in the kernel would keep the unit that ran us busy after resume
 * (systemd-suspend.service "deactivating", "left-over process" at suspend-sync.service's next start):
 * hand them to a scope of their own, with what is left before the deadline (less a few ms for the
 * summary); so too our bounded children still there (bounded-child.h: the raw-device look's fsync,
 * a read on a hung server), named apart as helper processes. */
void verb_stuck_to_scope(ExecJob *jobs, size_t n, usec_t deadline) {
        _cleanup_free_ pid_t *pids = calloc(n + BOUNDED_CHILD_ABANDONED_MAX, sizeof(pid_t));
        _cleanup_free_ char *unit = NULL;
        usec_t t = now(CLOCK_MONOTONIC), margin = 5 * USEC_PER_MSEC;
        size_t k = 0, m;
        char what[96];
        int r;

        if (!pids) {
                log_oom();
                return;
        }
        executor_check_stuck(jobs, n);
        for (size_t i = 0; i < n; i++) {
                bool seen = false;
                for (size_t j = 0; j < k; j++)
                        seen = seen || pids[j] == jobs[i].abandoned_pid;
                if (!seen && jobs[i].stuck)
                        pids[k++] = jobs[i].abandoned_pid;
        }
        m = bounded_child_abandoned(BOUNDED_CHILD_ABANDONED_MAX, pids + k);
        if (k + m == 0)
                return;
        if (m == 0)
                (void) snprintf(what, sizeof what, "%zu stuck worker(s)", k);
        else if (k == 0)
                (void) snprintf(what, sizeof what, "%zu stuck helper process(es)", m);
        else
                (void) snprintf(what, sizeof what, "%zu stuck worker(s) and %zu helper process(es)", k, m);
        r = t + margin < deadline ? scope_adopt(pids, k + m, deadline - margin - t, &unit) : -ETIMEDOUT;
        if (r == -ENOMEDIUM)
                log_debug("systemd is not PID 1: %s stay in our cgroup.", what);
        else if (r < 0)
                log_warning_errno(r, "Failed to move %s out of this unit to a scope, ignoring: %m", what);
        else
                log_notice("Moved %s out of this unit to %s.", what, unit);
}
