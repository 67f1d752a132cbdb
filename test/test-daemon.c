/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.h: how long the daemon waits for its pass under logind's InhibitDelayMaxUSec; whether it
 * runs a pass at all (daemon_pass_why_not()); and when its pass stands for the unit's
 * (daemon_mark_why_not()): only an exit 0 within the bound, with a "success" record, in the same
 * sleep, no requirer of the unit, the unit not running, no other program delaying the sleep. Each
 * fact alone withholds the pass or the mark.
 */

#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "state.h"
#include "tests.h"

/* Review O, O3: the hook waits for the late pass as long as DeadlineSec= (as last read), not 80 s. */
TEST(late_bound) {
        ASSERT_U64_EQ(daemon_late_bound(30 * USEC_PER_SEC, 80 * USEC_PER_SEC), 30 * USEC_PER_SEC);
        ASSERT_U64_EQ(daemon_late_bound(120 * USEC_PER_SEC, 80 * USEC_PER_SEC), 80 * USEC_PER_SEC);
        ASSERT_U64_EQ(daemon_late_bound(USEC_INFINITY, 80 * USEC_PER_SEC), 80 * USEC_PER_SEC);
        ASSERT_U64_EQ(daemon_late_bound(0, 80 * USEC_PER_SEC), 80 * USEC_PER_SEC);
}

TEST(pass_bound) {
        /* logind's default, 5 s: a fifth, at most 1 s, kept back. */
        ASSERT_U64_EQ(daemon_pass_bound(5 * USEC_PER_SEC), 4 * USEC_PER_SEC);
        ASSERT_U64_EQ(daemon_pass_bound(30 * USEC_PER_SEC), 29 * USEC_PER_SEC);
        ASSERT_U64_EQ(daemon_pass_bound(2 * USEC_PER_SEC), 1600 * USEC_PER_MSEC);
        /* Too short for a pass: the unit runs it. */
        ASSERT_U64_EQ(daemon_pass_bound(600 * USEC_PER_MSEC), 0);
        ASSERT_U64_EQ(daemon_pass_bound(0), 0);
        ASSERT_U64_EQ(daemon_pass_bound(USEC_INFINITY), 0);
        /* Every bound is under logind's wait by the margin, and leaves a pass at least PASS_MIN. */
        for (usec_t d = 0; d <= 10 * USEC_PER_SEC; d += 50 * USEC_PER_MSEC) {
                usec_t b = daemon_pass_bound(d);

                if (b == 0)
                        continue;
                ASSERT_TRUE(b >= DAEMON_PASS_MIN);
                ASSERT_TRUE(d - b >= MIN(d / 5, (usec_t) DAEMON_MARGIN_MAX));
        }
}

static void assert_says(const char *why, const char *what, size_t i) {
        ASSERT_TRUE(why != NULL);
        if (!strstr(why, what)) {
                fprintf(stderr, "case %zu: '%s' does not say '%s'\n", i, why, what);
                ASSERT_TRUE(false);
        }
}

static const DaemonStartFacts start_ok = { .bound = 4 * USEC_PER_SEC, .deadline = 30 * USEC_PER_SEC };

TEST(pass) {
        DaemonStartFacts f = start_ok;
        char buf[128];

        ASSERT_TRUE(daemon_pass_why_not(&f, buf, sizeof buf) == NULL);
        f.deadline = DAEMON_PASS_DEADLINE_MAX; /* at the cap: still ours */
        ASSERT_TRUE(daemon_pass_why_not(&f, buf, sizeof buf) == NULL);
}

TEST(no_pass) {
        struct {
                DaemonStartFacts f;
                const char *why;
        } cases[] = {
                { .why = "too briefly" },
                { .why = "DeadlineSec= is above 35s" },
                { .why = "still runs" },
                { .why = "does not run the installed binary" },
                { .why = "configuration could not be read" },
        };
        char buf[128];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cases[i].f = start_ok;
        cases[0].f.bound = 0;
        cases[1].f.deadline = DAEMON_PASS_DEADLINE_MAX + 1;
        cases[2].f.busy = true;
        cases[3].f.replaced = true; /* review AH, M1: the pass forked from us would be the old code */
        /* its read failed (out of memory): no DeadlineSec= known, which is not one above the cap */
        cases[4].f.unread = true;
        cases[4].f.deadline = USEC_INFINITY;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_says(daemon_pass_why_not(&cases[i].f, buf, sizeof buf), cases[i].why, i);
}

static const DaemonPassFacts mark_ok = { .ended = true,
                                         .status = 0,
                                         .same_sleep = true,
                                         .required = 0,
                                         .unit_state = "inactive",
                                         .inhibitors = 0 };

TEST(mark) {
        DaemonPassFacts f = mark_ok;
        char buf[128];

        ASSERT_TRUE(daemon_mark_why_not(&f, buf, sizeof buf) == NULL);
        f.unit_state = "failed"; /* the last sleep's unit failed: not running */
        ASSERT_TRUE(daemon_mark_why_not(&f, buf, sizeof buf) == NULL);
}

TEST(no_mark) {
        struct {
                DaemonPassFacts f;
                const char *why;
        } cases[] = {
                { .why = "another sleep" },
                { .why = "did not end" },
                { .why = "status 74" },
                { .why = "killed" },
                { .why = "did not sync everything" },
                { .why = "did not say which units" },
                { .why = "a unit requires" },
                { .why = "did not say whether" },
                { .why = "is deactivating" },
                { .why = "is active" },
                { .why = "did not say which other" },
                { .why = "gnome-shell" },
                { .why = "(unknown)" },
        };
        char buf[128];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cases[i].f = mark_ok;
        cases[0].f.same_sleep = false;
        cases[1].f.ended = false;
        cases[2].f.status = 74;
        cases[3].f.status = -1;
        cases[4].f.record = "it did not sync everything (see its record)";
        cases[5].f.required = -ETIMEDOUT;
        cases[6].f.required = 1;
        cases[7].f.unit_state = NULL;
        cases[8].f.unit_state = "deactivating";
        cases[9].f.unit_state = "active";
        cases[10].f.inhibitors = -ETIMEDOUT;
        cases[11].f.inhibitors = 1;
        cases[11].f.other_who = "gnome-shell";
        cases[12].f.inhibitors = 1; /* its holder not known: still no mark */
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_says(daemon_mark_why_not(&cases[i].f, buf, sizeof buf), cases[i].why, i);
}

/* Review AF, F6: the record read back is the pass's only when its PID wrote it and it began since
 * the pass did by CLOCK_BOOTTIME. An earlier sleep's record whose wall-clock start is later than the
 * pass's (the clock set back in between) is not, nor one of an older version without the fields. */
TEST(record) {
        const pid_t pid = 4242;
        const usec_t began = 1000 * USEC_PER_SEC;
        RunRecord ok = {
                .started_realtime = 1, /* before the pass's wall-clock start: not read */
                .started_boottime = began + 5 * USEC_PER_MSEC,
                .pid = pid,
                .trigger = (char *) "unit",
                .result = (char *) "success",
        };
        RunRecord r;

        ASSERT_TRUE(daemon_record_why_not(&ok, pid, began) == NULL);
        r = ok;
        r.started_boottime = began; /* the same microsecond */
        ASSERT_TRUE(daemon_record_why_not(&r, pid, began) == NULL);
        r = ok;
        r.started_boottime = began - 1; /* an earlier pass's, whatever its wall-clock start */
        r.started_realtime = UINT64_MAX / 2;
        assert_says(daemon_record_why_not(&r, pid, began), "not there", 1);
        r = ok;
        r.pid = pid + 1; /* another process's: the unit's pass, a manual run */
        assert_says(daemon_record_why_not(&r, pid, began), "not there", 2);
        r = ok;
        r.pid = 0;
        r.started_boottime = 0; /* written by an older version */
        assert_says(daemon_record_why_not(&r, pid, began), "not there", 3);
        r = ok;
        r.started_boottime = 0;
        assert_says(daemon_record_why_not(&r, pid, 0), "not there", 4);
        assert_says(daemon_record_why_not(&ok, 0, began), "not there", 5); /* no pass known */
        assert_says(daemon_record_why_not(NULL, pid, began), "not there", 6);
        r = ok;
        r.trigger = (char *) "manual";
        assert_says(daemon_record_why_not(&r, pid, began), "not there", 7);
        r = ok;
        r.result = (char *) "timeout";
        assert_says(daemon_record_why_not(&r, pid, began), "did not sync everything", 8);
}

/* The pass child's report: what it formats parses back; anything else is refused, so the exit
 * decides. */
TEST(report) {
        unsigned char buf[DAEMON_REPORT_SIZE + 1];
        bool recorded;
        int code;

        for (int c = 0; c <= 255; c += 85)
                for (int rec = 0; rec <= 1; rec++) {
                        daemon_report_format(c, rec, buf);
                        ASSERT_TRUE(daemon_report_parse(buf, DAEMON_REPORT_SIZE, &code, &recorded) == 0);
                        ASSERT_TRUE(code == c && recorded == (rec == 1));
                }
        daemon_report_format(3, true, buf);
        ASSERT_TRUE(daemon_report_parse(buf, 0, &code, &recorded) == -EBADMSG); /* EOF: it died */
        ASSERT_TRUE(daemon_report_parse(buf, 3, &code, &recorded) == -EBADMSG);
        buf[4] = 'R';
        ASSERT_TRUE(daemon_report_parse(buf, 5, &code, &recorded) == -EBADMSG);
        buf[0] = 'X';
        ASSERT_TRUE(daemon_report_parse(buf, 4, &code, &recorded) == -EBADMSG);
        daemon_report_format(0, true, buf);
        buf[2] = 2;
        ASSERT_TRUE(daemon_report_parse(buf, 4, &code, &recorded) == -EBADMSG);
        daemon_report_format(0, true, buf);
        buf[3] = 0;
        ASSERT_TRUE(daemon_report_parse(buf, 4, &code, &recorded) == -EBADMSG);
}

int main(void) {
        RUN(report);
        RUN(pass_bound);
        RUN(late_bound);
        RUN(pass);
        RUN(no_pass);
        RUN(mark);
        RUN(no_mark);
        RUN(record);
        return 0;
}
