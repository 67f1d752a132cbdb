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
 *   BOOTTIME_USEC=1234567890          CLOCK_BOOTTIME exactly, the same moment
 *   BOOT_ID=0123...cdef               the boot (32 lowercase hex digits; absent when not known): the
 *                                     times above compare only with a pass's of the same boot
 *   SUSPEND_SUCCESS=12                the kernel's counts of its suspends (suspend-stats.h), each
 *   SUSPEND_FAIL=1                    absent when not known
 *   SUSPEND_LAST_FAILED_STEP=suspend  its last failure: step, device, errno (absent when none)
 *   SUSPEND_LAST_FAILED_DEV=usb1
 *   SUSPEND_LAST_FAILED_ERRNO=-16
 *
 * status and record-cycle read REALTIME: the end of the last sleep, paired with the late pass before
 * it by BOOT_ID and BOOTTIME_USEC where both have them (last_resume_after()); status compares the
 * counts with the late pass's to tell whether it slept. restore-knob writes the record
 * when no hook of ours ran in the sleep (its link was down): ACTION=unknown and SYSTEMD_SLEEP_ACTION=
 * empty, which is how status tells that the post hook ran (review AW, L3).
 */

#include <stdbool.h>
#include <time.h>

#include "shared/time-util.h"
#include "suspend-stats.h"

typedef struct LastResume {
        usec_t realtime;    /* REALTIME= in usec; 0: none, or it does not parse */
        usec_t suspended;   /* SUSPENDED_USEC=; USEC_INFINITY: none, or it does not parse */
        usec_t boottime;    /* BOOTTIME_USEC=; 0: none, or it does not parse */
        char boot_id[33];   /* BOOT_ID=; "": none, or not 32 lowercase hex digits */
        SuspendStats stats; /* SUSPEND_*=; unknown where absent or malformed */
        bool by_hook;       /* written by the post hook: ACTION= names an action, or SYSTEMD_SLEEP_ACTION= is
                          * set (systemd-sleep ran its hooks, ours among them); not by restore-knob
                          * for a sleep no hook of ours ran in */
} LastResume;

/* The record's text (pure), from realtime and facts' boottime, suspended, boot_id and stats (what is
 * unknown there is left out; by_hook and realtime are not read): action NULL reads "unknown",
 * systemd_sleep_action NULL empty. Returns 0 or -ENOMEM; free *ret. */
int last_resume_format(const char *action, const char *systemd_sleep_action, const struct timespec *realtime,
                       const LastResume *facts, char **ret);

/* Writes DIR/last-resume now, atomically, with the kernel's suspend counts below the sysfs root
 * sysfs_fd (< 0: not known). A missing DIR is not made: -ENOENT. Returns 0 or negative errno. */
int last_resume_save(const char *dir, int sysfs_fd, const char *action, const char *systemd_sleep_action);

/* Whether a resume recorded as lr came after a pass that began at realtime / boottime (CLOCK_BOOTTIME)
 * in the boot boot_id and lasted duration (pure). By CLOCK_BOOTTIME, which no clock setting moves,
 * when both are known and of one boot (review BB, L2: the wall clock can step back at a resume); not
 * after it when the boots differ; else by the wall clock. */
bool last_resume_after(const LastResume *lr, const char *boot_id, usec_t realtime, usec_t boottime,
                       usec_t duration);

/* The record's text (pure): what is missing or does not parse reads as 0 / false. */
void last_resume_parse(const char *text, LastResume *ret);
/* DIR/last-resume; all 0 / false when there is none. */
void last_resume_read(const char *dir, LastResume *ret);
