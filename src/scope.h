/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Scope: hands processes over to a transient systemd scope unit. A sync worker abandoned in
 * uninterruptible sleep on a hung device outlives the pass that started it; left in the cgroup of
 * the unit that ran us it keeps systemd-suspend.service "deactivating" after resume (late pass, run
 * by systemd-sleep) or draws "left-over process" warnings at suspend-sync.service's next start
 * (unit pass). Moved to a scope of its own, it ends there when the device wakes, and the scope is
 * collected. A task in D state can be migrated between cgroups: no signal is involved.
 *
 * Talks to PID 1 directly on its private bus (unix:path=/run/systemd/private: root only, no
 * dbus-daemon needed, which may not run this early or this late in a sleep). Does not log.
 */

#include <stddef.h>
#include <sys/types.h>

#include "shared/time-util.h"

/* "suspend-sync-stuck-" + a pid + ".scope" + NUL. */
#define SCOPE_NAME_MAX 48

/* The name of the scope for processes whose first is 'first': suspend-sync-stuck-PID.scope. */
const char *scope_name(pid_t first, char buf[static SCOPE_NAME_MAX]);

/* Parses the text of /proc/PID/cgroup: the path in the unified hierarchy ("0::PATH") and the one
 * in the name=systemd hierarchy (cgroup v1, legacy and hybrid setups); NULL for one not listed.
 * Returns -ENODATA when neither is listed. Pure. */
int scope_cgroup_parse(const char *text, char **ret_unified, char **ret_named);

/* Asks PID 1 (StartTransientUnit, mode "fail") for a scope scope_name(pids[0]) in system.slice
 * holding 'pids' (CollectMode=inactive-or-failed, TimeoutStopUSec=1s: its processes ignore
 * signals while stuck, stopping it must not hold up a shutdown), then waits until each pid has
 * left our own cgroup (moved, exited or a zombie). Everything, connecting included, is bounded by
 * 'timeout'. Returns 0, -ENOMEDIUM when systemd is not PID 1 (callers ignore it quietly),
 * -ETIMEDOUT when a pid had not left in time (PID 1 may still move it later), or another negative
 * errno (-EACCES: not root; -EEXIST: such a scope exists). ret_unit (may be NULL) gets the scope's
 * name on success. */
int scope_adopt(const pid_t *pids, size_t n, usec_t timeout, char **ret_unit);
