/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The end of a pass started by systemd (unit and hook), and of record-cycle (the unit's
 * ExecStopPost=, which reads the configuration): its processes still in the kernel leave the unit's
 * cgroup (verb-scope.c, scope.h). Logs. */

#include <stddef.h>

#include "executor.h"
#include "shared/time-util.h"

/* The workers of jobs[0..n) proven still there (executor_check_stuck()) and the bounded children
 * still there (bounded_child_abandoned()) go to a transient scope of their own, within what is left
 * before deadline (CLOCK_MONOTONIC) less a few ms; says what moved, or why not. */
void verb_stuck_to_scope(ExecJob *jobs, size_t n, usec_t deadline);

/* The bound on record-cycle's move: one round trip to PID 1, well within the unit's TimeoutStopSec=. */
#define RECORD_CYCLE_SCOPE_TIMEOUT (1U * USEC_PER_SEC)
/* The bound on its metrics write (a bounded child: TextfileDirectory= may be on a hung server); with
 * the configuration read (1 s) and the move, well within TimeoutStopSec=10s. */
#define RECORD_CYCLE_TEXTFILE_TIMEOUT (2U * USEC_PER_SEC)
/* The bound on its history write and read (a bounded child: /var/lib may be on a hung NFS root);
 * with the rest, within TimeoutStopSec=10s. */
#define RECORD_CYCLE_HISTORY_TIMEOUT (3U * USEC_PER_SEC)
