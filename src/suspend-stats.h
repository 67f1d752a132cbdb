/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The kernel's own count of its suspends, /sys/power/suspend_stats (CONFIG_PM_SLEEP_DEBUG, on in
 * Debian's and most distributions' kernels): pm_suspend() adds one to "success" when the machine
 * went to sleep (suspend-to-RAM, standby or s2idle) and came back, or to "fail" when it did not, with
 * the failed step, device and errno in "last_failed_*". A hibernation is counted in neither. A late
 * pass records the two counts; the post hook records them at the resume (last-resume.h); status
 * tells from the difference whether the sleep between happened, which the clocks (CLOCK_BOOTTIME less
 * CLOCK_MONOTONIC) cannot for a sleep that they do not count (review BB, M1: s2idle on some machines,
 * a suspend under the RTC's second).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SUSPEND_STATS_DIR "power/suspend_stats" /* relative to the sysfs root */
#define SUSPEND_STATS_UNKNOWN UINT64_MAX

typedef struct SuspendStats {
        uint64_t success, fail;    /* SUSPEND_STATS_UNKNOWN: not there, or unreadable */
        int last_failed_errno;     /* a negative errno; 0: none, or not read */
        char last_failed_step[24]; /* "suspend", "suspend_noirq", ...; "": none, or not read */
        char last_failed_dev[64];  /* a device's name; "": none, or not read */
} SuspendStats;

#define SUSPEND_STATS_NULL \
        ((SuspendStats) { .success = SUSPEND_STATS_UNKNOWN, .fail = SUSPEND_STATS_UNKNOWN })

/* The characters a name keeps: none needs escaping anywhere we print it. */
#define SUSPEND_STATS_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:+@"

/* A name as the kernel prints it (one line), kept to SUSPEND_STATS_NAME_CHARS (any other character
 * is '?') and cut to size - 1 bytes. Pure. */
void suspend_stats_name(const char *text, char *buf, size_t size);

/* Both counts below the sysfs root sysfs_fd (each unknown when it cannot be read: a kernel without
 * them, a fixture); with details, the last failure's step, device and errno too. Two or five small
 * sysfs reads; never fails. */
void suspend_stats_load(int sysfs_fd, bool details, SuspendStats *ret);
