/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The commands. Each returns 0 or a negative errno (already logged); run maps its outcome to the
 * documented exit status itself through *ret_exit.
 */

#include <stdbool.h>
#include <sysexits.h>

#include "context.h"

struct json_object;

/* What verb_run() tells its caller (the daemon's forked passes) before it returns.
 * done: as soon as the outcome is known: its record and handover are saved and its state lock is
 *   released; the main pass's before its knob (which only the late pass decides), the late pass's
 *   once its knob is decided; in both before it logs its outcome and moves stuck workers to a scope.
 *   exit_code is what *ret_exit will be; recorded: the record was saved and says "success".
 * requester_waits (may be NULL, the late pass only): asked right before the knob decision; false
 *   keeps the kernel's own sync on (KnobFacts.requester_gone): whoever asked for the pass no
 *   longer waits for it, so it may not be the last before the kernel's sync. */
typedef struct RunDone {
        void (*done)(int exit_code, bool recorded, void *userdata);
        bool (*requester_waits)(void *userdata);
        void *userdata;
} RunDone;

/* The pass of "run". ret_recorded (may be NULL): its record was saved and says "success". notify
 * (may be NULL): see RunDone; done is not called when the pass fails before its record. */
int verb_run(const Args *a, const RunDone *notify, int *ret_exit, bool *ret_recorded);
int verb_plan(const Args *a);
int verb_status(const Args *a);
int verb_cat_config(const Args *a);
int verb_restore_knob(const Args *a);
int verb_record_cycle(const Args *a);
int verb_daemon(const Args *a);
int verb_history(const Args *a);
int verb_metrics(const Args *a);
int verb_plot(const Args *a);
/* pre|post: the system-sleep hook (phase "pre" or "post"); main() ignores the result, exit 0. */
int verb_hook(const Args *a, const char *phase);

/* WritebackFirst='s wake-up of the kernel's flusher threads through root_fd's proc (writeback_kick()),
 * shared by the run verb and the daemon: 0, -EUCLEAN (woken, the old value not put back: warned),
 * or another negative errno (not woken: logged at debug level). */
int verb_kick_flushers(int root_fd);
/* Whether root_fd's proc/meminfo counts enough dirty data for that wake-up to be worth it. */
bool verb_kick_worth(int root_fd);

int plan_to_json(const Sample *sample, const Plan *plan, struct json_object **ret);

#define SUSPEND_SYNC_UNIT "suspend-sync.service" /* units/suspend-sync.service.in */

/* Exit statuses (documented in --help and suspend-sync(8)). */
#define PID_FMT "%d"
#define EXIT_USAGE 2 /* invalid arguments, or 'run' without root */
/* sysexits(3) values, so that systemctl status and the journal read right
 * ("status=74/IOERR", "status=75/TEMPFAIL"); 3 and 4 read NOTIMPLEMENTED and NOPERMISSION there. */
#define EXIT_SYNC_ERROR EX_IOERR      /* 74: a mount reported a sync error */
#define EXIT_SYNC_TIMEOUT EX_TEMPFAIL /* 75: a mount timed out and OnTimeout=fail */
