/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Journal MESSAGE_IDs, one per event kind. Each has an entry in catalog/suspend-sync.catalog (keep
 * both in sync: test/integration/units-verify.sh checks that every ID here has a catalog entry).
 * Generated with systemd-id128 new; never reuse or change an ID once released.
 *
 * Structured fields that go with them: SUSPEND_SYNC_MOUNT= (mount point), SUSPEND_SYNC_OUTCOME=
 * (synced|timeout|error|skipped, or the run result), SUSPEND_SYNC_DURATION_USEC=, ERRNO=,
 * SUSPEND_SYNC_TRIGGER= (unit|hook|manual), SUSPEND_SYNC_SLEEP_ACTION=, SUSPEND_SYNC_KNOB_OLD=,
 * SUSPEND_SYNC_KNOB_NEW=, SUSPEND_SYNC_CONFIG_FILE=, SUSPEND_SYNC_CONFIG_LINE=.
 *
 * Which of them each ID sends: log_event_specs in log.c (test-log checks the catalog against it).
 * Use as: log_event(LOG_INFO, SUSPEND_SYNC_MESSAGE_RUN_SUMMARY_STR, &(LogEvent) { ... }, ...) (log.h).
 */

#include <systemd/sd-id128.h>

/* One line per ID, whatever its length: test/integration/units-verify.sh reads them with sed. */
/* clang-format off */

/* one per run (unit main pass, hook late pass, manual): outcome and duration */
#define SUSPEND_SYNC_MESSAGE_RUN_SUMMARY SD_ID128_MAKE(68, 60, 4c, fc, df, 45, 43, a8, af, 21, 7e, 49, 55, 9d, f3, e8)
#define SUSPEND_SYNC_MESSAGE_RUN_SUMMARY_STR SD_ID128_MAKE_STR(68, 60, 4c, fc, df, 45, 43, a8, af, 21, 7e, 49, 55, 9d, f3, e8)

/* a mount did not finish syncing within its MountTimeoutSec= (worker abandoned) */
#define SUSPEND_SYNC_MESSAGE_MOUNT_TIMEOUT SD_ID128_MAKE(5b, 36, db, e4, 4b, 46, 4e, 85, be, 0b, ea, 08, 26, 26, e6, 3a)
#define SUSPEND_SYNC_MESSAGE_MOUNT_TIMEOUT_STR SD_ID128_MAKE_STR(5b, 36, db, e4, 4b, 46, 4e, 85, be, 0b, ea, 08, 26, 26, e6, 3a)

/* syncfs() on a mount reported an error (ERRNO=) */
#define SUSPEND_SYNC_MESSAGE_MOUNT_ERROR SD_ID128_MAKE(df, d0, 5f, f7, f0, 5d, 43, 6c, aa, f9, d8, 65, ed, 60, 1c, 79)
#define SUSPEND_SYNC_MESSAGE_MOUNT_ERROR_STR SD_ID128_MAKE_STR(df, d0, 5f, f7, f0, 5d, 43, 6c, aa, f9, d8, 65, ed, 60, 1c, 79)

/* /sys/power/sync_on_suspend was changed for this sleep cycle */
#define SUSPEND_SYNC_MESSAGE_KNOB_CHANGED SD_ID128_MAKE(17, bb, e5, 5a, ff, ee, 4e, 61, b9, c3, 70, 23, 10, f3, 96, 97)
#define SUSPEND_SYNC_MESSAGE_KNOB_CHANGED_STR SD_ID128_MAKE_STR(17, bb, e5, 5a, ff, ee, 4e, 61, b9, c3, 70, 23, 10, f3, 96, 97)

/* /sys/power/sync_on_suspend was put back to its recorded original value */
#define SUSPEND_SYNC_MESSAGE_KNOB_RESTORED SD_ID128_MAKE(13, ac, 51, 63, 74, 70, 45, f2, a6, 15, 9d, 82, a6, 2f, a7, c1)
#define SUSPEND_SYNC_MESSAGE_KNOB_RESTORED_STR SD_ID128_MAKE_STR(13, ac, 51, 63, 74, 70, 45, f2, a6, 15, 9d, 82, a6, 2f, a7, c1)

/* a configuration value was invalid and ignored (file:line in the message) */
#define SUSPEND_SYNC_MESSAGE_CONFIG_WARNING SD_ID128_MAKE(9b, 6b, 79, 49, 3e, b4, 4e, 81, ae, 37, a0, fc, 46, b7, bb, 9b)
#define SUSPEND_SYNC_MESSAGE_CONFIG_WARNING_STR SD_ID128_MAKE_STR(9b, 6b, 79, 49, 3e, b4, 4e, 81, ae, 37, a0, fc, 46, b7, bb, 9b)

/* a file or drop-in directory of the configuration was not read (in full): no line, named in FILE */
#define SUSPEND_SYNC_MESSAGE_CONFIG_NOT_READ SD_ID128_MAKE(e6, 68, b2, 44, e3, 67, 40, a4, 8a, af, 5a, 0f, 7c, 8d, aa, 57)
#define SUSPEND_SYNC_MESSAGE_CONFIG_NOT_READ_STR SD_ID128_MAKE_STR(e6, 68, b2, 44, e3, 67, 40, a4, 8a, af, 5a, 0f, 7c, 8d, aa, 57)

/* the configuration could not be read in time (hung filesystem) or at all: defaults used */
#define SUSPEND_SYNC_MESSAGE_CONFIG_UNREADABLE SD_ID128_MAKE(8d, f0, 24, 35, ba, 10, 41, f5, af, 70, c2, e7, 35, fe, 12, 89)
#define SUSPEND_SYNC_MESSAGE_CONFIG_UNREADABLE_STR SD_ID128_MAKE_STR(8d, f0, 24, 35, ba, 10, 41, f5, af, 70, c2, e7, 35, fe, 12, 89)

/* SyncOnSuspend= asked for a change but the kernel has no sync_on_suspend knob */
#define SUSPEND_SYNC_MESSAGE_KNOB_ABSENT SD_ID128_MAKE(9c, ea, 40, 85, 61, 2c, 4e, 10, a0, c7, c4, 97, 18, 4b, 74, 54)
#define SUSPEND_SYNC_MESSAGE_KNOB_ABSENT_STR SD_ID128_MAKE_STR(9c, ea, 40, 85, 61, 2c, 4e, 10, a0, c7, c4, 97, 18, 4b, 74, 54)

/* clang-format on */
