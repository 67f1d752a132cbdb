/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/cycle (sleep cycles from run records) and src/metrics (Prometheus text).
 */

#include <stdlib.h>

#include "cycle.h"
#include "metrics.h"
#include "tests.h"

#define T0 ((usec_t) 1764576000 * USEC_PER_SEC) /* 2025-12-01 08:00:00 UTC */

static RunRecord rec(const char *trigger, const char *action, usec_t start, usec_t duration) {
        return (RunRecord) {
                .started_realtime = start,
                .duration = duration,
                .result = (char *) "success",
                .trigger = (char *) trigger,
                .sleep_action = (char *) action,
                .deadline = 30 * USEC_PER_SEC,
        };
}

TEST(cycles) {
        RunRecord r[] = {
                /* newest first, as state_load_history() returns them; deliberately not sorted */
                rec("hook", "suspend", T0 + 3600 * USEC_PER_SEC + 900 * USEC_PER_MSEC, 20 * USEC_PER_MSEC),
                rec("unit", "suspend", T0 + 3600 * USEC_PER_SEC, 800 * USEC_PER_MSEC),
                rec("run", NULL, T0 + 1800 * USEC_PER_SEC, 5 * USEC_PER_MSEC),   /* manual: no cycle */
                rec("unit", "hibernate", T0 + 600 * USEC_PER_SEC, USEC_PER_SEC), /* called off */
                rec("hook", "suspend", T0 + 10 * USEC_PER_SEC, USEC_PER_SEC),    /* other action */
                rec("unit", "suspend", T0, USEC_PER_SEC),
                rec("hook", "suspend", T0 - 7200 * USEC_PER_SEC, USEC_PER_SEC), /* its unit's pass aged out */
        };
        _cleanup_free_ SleepCycle *c = NULL;

        ASSERT_EQ(sleep_cycles_build(r, ELEMENTSOF(r), &c), 4);
        ASSERT_TRUE(c[0].unit == &r[1] && c[0].late == &r[0]);
        ASSERT_STREQ(sleep_cycle_action(&c[0]), "suspend");
        ASSERT_U64_EQ(sleep_cycle_start(&c[0]), T0 + 3600 * USEC_PER_SEC);
        ASSERT_TRUE(c[1].unit == &r[3] && !c[1].late);
        ASSERT_STREQ(sleep_cycle_action(&c[1]), "hibernate");
        ASSERT_TRUE(c[2].unit == &r[5] && c[2].late == &r[4]);
        ASSERT_TRUE(!c[3].unit && c[3].late == &r[6]);
        ASSERT_U64_EQ(sleep_cycle_start(&c[3]), T0 - 7200 * USEC_PER_SEC);
        c = mfree(c);

        /* A hook record long after its unit's pass, or of another sleep action, opens its own. */
        RunRecord far[] = {
                rec("unit", "suspend", T0, USEC_PER_SEC),
                rec("hook", "suspend", T0 + USEC_PER_SEC + CYCLE_PAIR_WINDOW_USEC + 1, USEC_PER_SEC),
        };
        ASSERT_EQ(sleep_cycles_build(far, ELEMENTSOF(far), &c), 2);
        ASSERT_TRUE(c[0].late == &far[1] && !c[0].unit);
        c = mfree(c);
        far[1].started_realtime = T0 + USEC_PER_SEC + CYCLE_PAIR_WINDOW_USEC;
        ASSERT_EQ(sleep_cycles_build(far, ELEMENTSOF(far), &c), 1);
        c = mfree(c);
        far[1].sleep_action = (char *) "hibernate";
        ASSERT_EQ(sleep_cycles_build(far, ELEMENTSOF(far), &c), 2);
        c = mfree(c);

        ASSERT_EQ(sleep_cycles_build(r + 2, 1, &c), 0);
        ASSERT_TRUE(c == NULL);
        ASSERT_EQ(sleep_cycles_build(NULL, 0, &c), 0);
}

static const char expected[] =
        "# HELP suspend_sync_cycles Sleep cycles in the recorded history.\n"
        "# TYPE suspend_sync_cycles gauge\n"
        "suspend_sync_cycles 3\n"
        "# HELP suspend_sync_cycle_info The last sleep cycle's sleep action, as a label.\n"
        "# TYPE suspend_sync_cycle_info gauge\n"
        "suspend_sync_cycle_info{sleep_action=\"suspend\"} 1\n"
        "# HELP suspend_sync_pass_start_timestamp_seconds When the pass of the last sleep cycle started (Unix time).\n"
        "# TYPE suspend_sync_pass_start_timestamp_seconds gauge\n"
        "suspend_sync_pass_start_timestamp_seconds{pass=\"unit\"} 1764576000.000000\n"
        "suspend_sync_pass_start_timestamp_seconds{pass=\"late\"} 1764576001.250000\n"
        "# HELP suspend_sync_pass_duration_seconds How long the pass of the last sleep cycle took.\n"
        "# TYPE suspend_sync_pass_duration_seconds gauge\n"
        "suspend_sync_pass_duration_seconds{pass=\"unit\"} 1.200000\n"
        "suspend_sync_pass_duration_seconds{pass=\"late\"} 0.020000\n"
        "# HELP suspend_sync_pass_deadline_seconds The pass's DeadlineSec=.\n"
        "# TYPE suspend_sync_pass_deadline_seconds gauge\n"
        "suspend_sync_pass_deadline_seconds{pass=\"unit\"} 30.000000\n"
        "suspend_sync_pass_deadline_seconds{pass=\"late\"} 30.000000\n"
        "# HELP suspend_sync_pass_success 1 if the pass ended with result success, else 0.\n"
        "# TYPE suspend_sync_pass_success gauge\n"
        "suspend_sync_pass_success{pass=\"unit\"} 0\n"
        "suspend_sync_pass_success{pass=\"late\"} 1\n"
        "# HELP suspend_sync_pass_complete_view 1 if the pass saw every superblock the kernel's sync writes.\n"
        "# TYPE suspend_sync_pass_complete_view gauge\n"
        "suspend_sync_pass_complete_view{pass=\"unit\"} 1\n"
        "# HELP suspend_sync_pass_mounts Mounts of the pass by outcome (synced, deferred, skipped, timeout, error).\n"
        "# TYPE suspend_sync_pass_mounts gauge\n"
        "suspend_sync_pass_mounts{pass=\"unit\",outcome=\"synced\"} 1\n"
        "suspend_sync_pass_mounts{pass=\"unit\",outcome=\"deferred\"} 1\n"
        "suspend_sync_pass_mounts{pass=\"unit\",outcome=\"skipped\"} 1\n"
        "suspend_sync_pass_mounts{pass=\"unit\",outcome=\"timeout\"} 1\n"
        "suspend_sync_pass_mounts{pass=\"unit\",outcome=\"error\"} 0\n"
        "suspend_sync_pass_mounts{pass=\"late\",outcome=\"synced\"} 0\n"
        "suspend_sync_pass_mounts{pass=\"late\",outcome=\"deferred\"} 0\n"
        "suspend_sync_pass_mounts{pass=\"late\",outcome=\"skipped\"} 0\n"
        "suspend_sync_pass_mounts{pass=\"late\",outcome=\"timeout\"} 0\n"
        "suspend_sync_pass_mounts{pass=\"late\",outcome=\"error\"} 0\n"
        "# HELP suspend_sync_pass_mounts_omitted Mounts of the pass left out of its record (past its size bound), in no other series.\n"
        "# TYPE suspend_sync_pass_mounts_omitted gauge\n"
        "suspend_sync_pass_mounts_omitted{pass=\"unit\"} 0\n"
        "suspend_sync_pass_mounts_omitted{pass=\"late\"} 7\n"
        "# HELP suspend_sync_mount_duration_seconds How long syncing the mount took in the last sleep cycle (mounts with action sync).\n"
        "# TYPE suspend_sync_mount_duration_seconds gauge\n"
        "suspend_sync_mount_duration_seconds{pass=\"unit\",mount_point=\"/\",fstype=\"ext4\",outcome=\"synced\"} 0.250000\n"
        "suspend_sync_mount_duration_seconds{pass=\"unit\",mount_point=\"/home\",fstype=\"ext4\",outcome=\"deferred\"} 0.500000\n"
        "suspend_sync_mount_duration_seconds{pass=\"unit\",mount_point=\"/mnt/a\\nb \\\"q\\\" \\\\ \\\\xff é\",fstype=\"\",outcome=\"timeout\",namespace=\"mnt:[4026532000]\"} 1.000000\n";

TEST(metrics) {
        RunMount m[] = {
                { .mount_point = (char *) "/",
                  .fstype = (char *) "ext4",
                  .action = (char *) "sync",
                  .outcome = (char *) "synced",
                  .duration = 250 * USEC_PER_MSEC },
                { .mount_point = (char *) "/home",
                  .fstype = (char *) "ext4",
                  .action = (char *) "sync",
                  .outcome = (char *) "deferred",
                  .duration = 500 * USEC_PER_MSEC },
                { .mount_point = (char *) "/proc",
                  .fstype = (char *) "proc",
                  .action = (char *) "skip",
                  .outcome = (char *) "skipped" },
                { .mount_point = (char *) "/mnt/a\nb \"q\" \\ \xff \xc3\xa9",
                  .fstype = NULL,
                  .action = (char *) "sync",
                  .outcome = (char *) "timeout",
                  .duration = USEC_PER_SEC,
                  .namespace_ino = 4026532000ULL },
        };
        RunRecord unit = rec("unit", "suspend", T0, 1200 * USEC_PER_MSEC);
        RunRecord late = rec("hook", "suspend", T0 + 1250 * USEC_PER_MSEC, 20 * USEC_PER_MSEC);
        SleepCycle c = { .unit = &unit, .late = &late };
        _cleanup_free_ char *text = NULL, *empty = NULL;

        unit.mounts = m;
        unit.n_mounts = ELEMENTSOF(m);
        unit.result = (char *) "timeout";
        unit.has_complete = unit.complete = true;
        late.n_mounts_omitted = 7; /* a record past its size bound: counted, not listed */
        ASSERT_OK(metrics_format(&c, 3, &text));
        if (!streq(text, expected))
                fprintf(stderr, "got:\n%s\n", text);
        ASSERT_STREQ(text, expected);

        ASSERT_OK(metrics_format(NULL, 0, &empty));
        ASSERT_STREQ(empty, "# HELP suspend_sync_cycles Sleep cycles in the recorded history.\n"
                            "# TYPE suspend_sync_cycles gauge\n"
                            "suspend_sync_cycles 0\n");
}

int main(void) {
        RUN(cycles);
        RUN(metrics);
        return 0;
}
