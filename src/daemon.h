/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What suspend-sync-daemon.service and suspend-sync.service agree on (verb-daemon.c), and the
 * daemon's decision whether its pass stands for the unit's. Pure.
 */

#include <stdbool.h>
#include <stddef.h>

#include "shared/macro.h"
#include "shared/time-util.h"

typedef struct RunRecord RunRecord;

/* The daemon's RuntimeDirectory= (units/suspend-sync-daemon.service.in): systemd removes it, and
 * the mark with it, whenever the daemon stops. The daemon refuses to run without it. */
#define DAEMON_RUNTIME_DIR "/run/suspend-sync-daemon"
/* This sleep's pass is done: suspend-sync.service has ConditionPathExists=!DAEMON_PASS_MARK
 * (units/suspend-sync.service.in; integration/units-verify.sh checks that the two agree). */
#define DAEMON_PASS_MARK DAEMON_RUNTIME_DIR "/pass-done"
/* The name (comm) of the standby pass while it waits for its sleep (verb-daemon.c standby_child()) */
#define DAEMON_STANDBY_COMM "ss-next-pass"

/* What the wait keeps back from logind's: a fifth of it, at most 1 s (5 s: 4 s). */
#define DAEMON_MARGIN_MAX (1 * USEC_PER_SEC)
/* No pass at all under this (a tiny InhibitDelayMaxSec=): the unit runs it. */
#define DAEMON_PASS_MIN (500 * USEC_PER_MSEC)
/* The unit's pass waits this long for a state lock the daemon's pass holds (verb-run.c), inside the
 * unit's TimeoutStartSec=45s (it asks for more before it waits: EXTEND_TIMEOUT_USEC=) ... */
#define DAEMON_UNIT_LOCK_WAIT (40 * USEC_PER_SEC)
/* ... so the daemon's pass gets at most this (--deadline-max=), and none at all when DeadlineSec=
 * is above it: the unit's pass then runs it, with all of it, as without the daemon. */
#define DAEMON_PASS_DEADLINE_MAX (35 * USEC_PER_SEC)
_Static_assert(DAEMON_PASS_DEADLINE_MAX + 5 * USEC_PER_SEC <= DAEMON_UNIT_LOCK_WAIT,
               "the unit's pass must outwait the daemon's, its exit included");
/* A pass that has ended is decided as soon as its answers are in, or a known one withholds the mark;
 * at most this long after its exit (and never past the bound): one not in by then counts as none. */
#define DAEMON_ANSWERS_WAIT (100 * USEC_PER_MSEC)
/* The daemon's own calls to logind (the lock, its InhibitDelayMaxUSec). */
#define DAEMON_BUS_TIMEOUT (10 * USEC_PER_SEC)
/* restore-knob and record-cycle after a sleep the mark stood for: the unit's TimeoutStopSec=. */
#define DAEMON_POST_TIMEOUT (10 * USEC_PER_SEC)
/* Taking the lock again after a sleep: tries, one a second, before the daemon exits (and systemd
 * restarts it). */
#define DAEMON_RELOCK_TRIES 30
/* The post steps a daemon before us owed (verb-daemon.c, owed_check()) wait while PID 1 says
 * suspend-sync.service is neither inactive nor failed (a sleep logind did not start, or its
 * ExecStopPost= still running): asked again after this, at most this many times (a second each,
 * while awake), then run all the same. */
#define DAEMON_OWED_RETRY (1 * USEC_PER_SEC)
#define DAEMON_OWED_TRIES 600

/* How long the daemon waits for its pass while logind waits at most delay_max for delay locks; 0:
 * too short for a pass. A pass still running then goes on (it has its own deadline); the lock is
 * released and the unit waits for the pass's state lock. */
static inline usec_t daemon_pass_bound(usec_t delay_max) {
        usec_t margin = MIN(delay_max / 5, (usec_t) DAEMON_MARGIN_MAX);

        return delay_max != USEC_INFINITY && delay_max > margin + DAEMON_PASS_MIN ? delay_max - margin : 0;
}

/* The late pass the daemon runs for the system-sleep hook ends by this, which its ack tells the hook
 * (review O, O3): DeadlineSec= as the daemon last read it, capped by cap (what systemd-sleep gives
 * its hooks, less the pass's record and knob); cap when it read none. A longer DeadlineSec= written
 * since the last read is capped to it as well (the pass says so: "--deadline-max="). */
static inline usec_t daemon_late_bound(usec_t deadline, usec_t cap) {
        return deadline == 0 || deadline == USEC_INFINITY ? cap : MIN(deadline, cap);
}

/* What is known as logind announces the sleep, before any pass. */
typedef struct DaemonStartFacts {
        usec_t bound;    /* daemon_pass_bound(): 0, too short for a pass */
        usec_t deadline; /* DeadlineSec=, as last read */
        bool unread;     /* the last read of the configuration failed: nothing of it is known */
        bool busy;       /* a pass, restore-knob or record-cycle of the last sleep still runs */
        bool replaced;   /* we do not run the installed binary (an upgrade replaced it since we started),
                          * or that is not known: a pass forked from us would run the old code */
} DaemonStartFacts;

/* NULL when the daemon runs a pass for this sleep, else why not (the unit runs it, as without the
 * daemon). Pure; buf holds the text when it needs formatting. */
const char *daemon_pass_why_not(const DaemonStartFacts *f, char *buf, size_t size);

/* What is known when the pass has ended, or its bound has passed: the answers to the questions sent
 * as it began, before the fork (logind: other delay locks; PID 1: requirers of suspend-sync.service,
 * its state), each as of when it was answered. */
typedef struct DaemonPassFacts {
        bool ended;             /* the pass exited within the bound */
        int status;             /* its exit status (ended); -1: killed by a signal */
        const char *record;     /* NULL: its record is this pass's and says "success"; else why not */
        bool same_sleep;        /* no PrepareForSleep since the pass began */
        int required;           /* some unit requires suspend-sync.service: 1, none: 0, unknown: <0 */
        const char *unit_state; /* suspend-sync.service's ActiveState when PID 1 answered; NULL: unknown */
        int inhibitors;         /* 0: no other delay lock for sleep; 1: one (other_who); <0: unknown */
        const char *other_who;  /* the other lock's holder ("who"), may be NULL */
} DaemonPassFacts;

/* NULL when the daemon may mark its pass done (suspend-sync.service skipped for this sleep), else
 * the reason it may not, for the log: the unit then runs its own pass. Pure; buf holds the text
 * when it needs formatting. */
const char *daemon_mark_why_not(const DaemonPassFacts *f, char *buf, size_t size);

/* Whether the record read back from last.json is the pass's own and says "success": a unit's pass's,
 * written by the pass's process (the fork, or what it exec'd: the same PID) and begun since the
 * daemon started the pass by CLOCK_BOOTTIME, which no setting of the clock moves (matched by its
 * wall-clock start, an earlier sleep's record passed after the clock was set back: review AF, F6;
 * by the PID alone, an earlier process's of the same PID). Records without the two fields (older
 * versions) are never the pass's. NULL when it is, else why not, for the log. Pure. */
const char *daemon_record_why_not(const RunRecord *rec, pid_t pass_pid, usec_t pass_started_boottime);

/* The pass's report, written by its child to the daemon through a pipe as soon as the pass's record
 * and handover are saved and its state lock is released (RunDone, verbs.h), before it logs its
 * outcome, flushes its log and exits: the daemon decides (and releases logind's lock) without
 * waiting for those. The exit stays the fallback (a child that dies before reporting).
 * 'R', the exit status (0-255), 1 when its record was saved and says "success" else 0, '\n'. */
#define DAEMON_REPORT_SIZE 4
void daemon_report_format(int code, bool recorded, unsigned char buf[static DAEMON_REPORT_SIZE]);
/* 0 and the fields, or -EBADMSG for anything but one whole report. Pure. */
int daemon_report_parse(const unsigned char *buf, size_t n, int *ret_code, bool *ret_recorded);
