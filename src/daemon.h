/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon's bounds and its mark (verb-daemon.c): what suspend-sync-daemon.service and
 * suspend-sync.service agree on. Pure.
 */

#include "shared/macro.h"
#include "shared/time-util.h"

/* The daemon's RuntimeDirectory= (units/suspend-sync-daemon.service.in): systemd removes it, and
 * the mark with it, whenever the daemon stops. */
#define DAEMON_RUNTIME_DIR "/run/suspend-sync-daemon"
/* This sleep's pass is done: suspend-sync.service has ConditionPathExists=!DAEMON_PASS_MARK
 * (units/suspend-sync.service.in; integration/units-verify.sh checks that the two agree). */
#define DAEMON_PASS_MARK DAEMON_RUNTIME_DIR "/pass-done"

/* What the bound keeps back from logind's wait: a fifth of it, at most 1 s (5 s: a 4 s pass). */
#define DAEMON_MARGIN_MAX (1 * USEC_PER_SEC)
/* No pass at all under this bound (a tiny InhibitDelayMaxSec=): the unit runs it. */
#define DAEMON_PASS_MIN (500 * USEC_PER_MSEC)
/* The pass's own deadline ends this much before the bound: its exec, exit and our answer. */
#define DAEMON_EXIT_SLACK (250 * USEC_PER_MSEC)
/* How long PID 1's answer (which units require suspend-sync.service) is waited for once the pass
 * has ended; it was asked when the pass began. */
#define DAEMON_REQUIRERS_TIMEOUT (100 * USEC_PER_MSEC)

/* The daemon's own calls to logind (the lock, its InhibitDelayMaxUSec). */
#define DAEMON_BUS_TIMEOUT (10 * USEC_PER_SEC)

/* How long the daemon's pass may take when logind waits at most delay_max for delay locks; 0: too
 * short for a pass. */
static inline usec_t daemon_pass_bound(usec_t delay_max) {
        usec_t margin = MIN(delay_max / 5, (usec_t) DAEMON_MARGIN_MAX);

        return delay_max != USEC_INFINITY && delay_max > margin + DAEMON_PASS_MIN ? delay_max - margin : 0;
}
