/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.h: how long the daemon's pass may take under logind's InhibitDelayMaxUSec, and that its
 * own deadline leaves the exec and exit inside that bound.
 */

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
        /* Every bound leaves the pass a positive deadline, and the margin under logind's wait. */
        for (usec_t d = 0; d <= 10 * USEC_PER_SEC; d += 50 * USEC_PER_MSEC) {
                usec_t b = daemon_pass_bound(d);

                if (b == 0)
                        continue;
                ASSERT_TRUE(b > DAEMON_EXIT_SLACK);
                ASSERT_TRUE(b < d);
                ASSERT_TRUE(d - b >= MIN(d / 5, (usec_t) DAEMON_MARGIN_MAX));
        }
}

int main(void) {
        RUN(pass_bound);
        return 0;
}
