/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.h: how long the daemon waits for its pass under logind's InhibitDelayMaxUSec, and when its
 * pass stands for the unit's (daemon_mark_why_not()): only an exit 0 within the bound, with a
 * "success" record, in the same sleep, while no other program delays the sleep; each fact alone
 * withholds the mark.
 */

#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "tests.h"

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

static const DaemonPassFacts good = { .ended = true, .status = 0, .same_sleep = true, .inhibitors = 0 };

TEST(mark) {
        char buf[128];

        ASSERT_TRUE(daemon_mark_why_not(&good, buf, sizeof buf) == NULL);
}

/* Each fact against the mark, alone, withholds it; the reason names it. */
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
                { .why = "did not say" },
                { .why = "gnome-shell" },
        };
        char buf[128];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cases[i].f = good;
        cases[0].f.same_sleep = false;
        cases[1].f.ended = false;
        cases[2].f.status = 74;
        cases[3].f.status = -1;
        cases[4].f.record = "it did not sync everything (see its record)";
        cases[5].f.inhibitors = -ETIMEDOUT;
        cases[6].f.inhibitors = 1;
        cases[6].f.other_who = "gnome-shell";

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *why = daemon_mark_why_not(&cases[i].f, buf, sizeof buf);

                ASSERT_TRUE(why != NULL);
                if (!strstr(why, cases[i].why)) {
                        fprintf(stderr, "case %zu: '%s' does not say '%s'\n", i, why, cases[i].why);
                        ASSERT_TRUE(false);
                }
        }
        /* Another delay lock whose holder is not known still withholds it. */
        cases[6].f.other_who = NULL;
        ASSERT_TRUE(daemon_mark_why_not(&cases[6].f, buf, sizeof buf) != NULL);
}

static const DaemonStartFacts start_ok = {
        .bound = 4 * USEC_PER_SEC, .deadline = 30 * USEC_PER_SEC, .required = 0, .unit_state = "inactive"
};

TEST(pass) {
        DaemonStartFacts f = start_ok;
        char buf[128];

        ASSERT_TRUE(daemon_pass_why_not(&f, buf, sizeof buf) == NULL);
        f.unit_state = "failed"; /* the last sleep's unit failed: not running */
        ASSERT_TRUE(daemon_pass_why_not(&f, buf, sizeof buf) == NULL);
        f.deadline = DAEMON_PASS_DEADLINE_MAX; /* at the cap: still ours */
        ASSERT_TRUE(daemon_pass_why_not(&f, buf, sizeof buf) == NULL);
}

/* Each fact against a pass, alone, leaves it to the unit; the reason names it. */
TEST(no_pass) {
        struct {
                DaemonStartFacts f;
                const char *why;
        } cases[] = {
                { .why = "too briefly" },     { .why = "DeadlineSec= is above 35s" },
                { .why = "still runs" },      { .why = "did not say which units" },
                { .why = "a unit requires" }, { .why = "did not say whether" },
                { .why = "is deactivating" }, { .why = "is active" },
        };
        char buf[128];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cases[i].f = start_ok;
        cases[0].f.bound = 0;
        cases[1].f.deadline = DAEMON_PASS_DEADLINE_MAX + 1;
        cases[2].f.busy = true;
        cases[3].f.required = -ETIMEDOUT;
        cases[4].f.required = 1;
        cases[5].f.unit_state = NULL;
        cases[6].f.unit_state = "deactivating";
        cases[7].f.unit_state = "active";
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *why = daemon_pass_why_not(&cases[i].f, buf, sizeof buf);

                ASSERT_TRUE(why != NULL);
                if (!strstr(why, cases[i].why)) {
                        fprintf(stderr, "case %zu: '%s' does not say '%s'\n", i, why, cases[i].why);
                        ASSERT_TRUE(false);
                }
        }
}

int main(void) {
        RUN(pass_bound);
        RUN(pass);
        RUN(no_pass);
        RUN(mark);
        RUN(no_mark);
        return 0;
}
