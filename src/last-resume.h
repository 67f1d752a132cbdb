/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The last resume, as the system-sleep hook's post phase records it in DIR/last-resume (tmpfs,
 * key=value lines, written atomically):
 *
 *   ACTION=suspend                    the action systemd-sleep named ("unknown" when none was valid)
 *   SYSTEMD_SLEEP_ACTION=...          $SYSTEMD_SLEEP_ACTION as given (may be empty)
 *   REALTIME=2026-01-01T03:00:00.123456789Z    CLOCK_REALTIME, UTC, nanoseconds
 *   BOOTTIME_SEC=1234.56              CLOCK_BOOTTIME in seconds, as /proc/uptime shows it
 *   SUSPENDED_USEC=3600000123         CLOCK_BOOTTIME less CLOCK_MONOTONIC: how long this boot has
 *                                     been suspended as the kernel counts it (a late pass records
 *                                     the same at its start: the difference is how long the machine
 *                                     slept; 0 when the state write failed, and for a sleep the
 *                                     clocks do not count: verb-status.c cycle_suspended(); absent
 *                                     in records of older versions)
 *
 * status and record-cycle read REALTIME: the end of the last sleep. restore-knob writes the record
 * when no hook of ours ran in the sleep (its link was down): ACTION=unknown and SYSTEMD_SLEEP_ACTION=
 * empty, which is how status tells that the post hook ran (review AW, L3).
 */

#include <stdbool.h>
#include <time.h>

#include "shared/time-util.h"

/* The record's text (pure): action NULL reads "unknown", systemd_sleep_action NULL empty. Returns
 * 0 or -ENOMEM; free *ret. */
int last_resume_format(const char *action, const char *systemd_sleep_action, const struct timespec *realtime,
                       usec_t boottime, usec_t suspended, char **ret);

/* Writes DIR/last-resume now, atomically. A missing DIR is not made: -ENOENT. Returns 0 or
 * negative errno. */
int last_resume_save(const char *dir, const char *action, const char *systemd_sleep_action);

typedef struct LastResume {
        usec_t realtime;  /* REALTIME= in usec; 0: none, or it does not parse */
        usec_t suspended; /* SUSPENDED_USEC=; USEC_INFINITY: none, or it does not parse */
        bool by_hook;     /* written by the post hook: ACTION= names an action, or SYSTEMD_SLEEP_ACTION= is
                          * set (systemd-sleep ran its hooks, ours among them); not by restore-knob
                          * for a sleep no hook of ours ran in */
} LastResume;

/* The record's text (pure): what is missing or does not parse reads as 0 / false. */
void last_resume_parse(const char *text, LastResume *ret);
/* DIR/last-resume; all 0 / false when there is none. */
void last_resume_read(const char *dir, LastResume *ret);
/* REALTIME= of DIR/last-resume in usec; 0 when there is none or it does not parse. */
usec_t last_resume_load(const char *dir);
