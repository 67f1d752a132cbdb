/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "last-resume.h"
#include "shared/macro.h"
#include "shared/fileio.h"
#include "tests.h"

static char test_root[] = "/tmp/test-last-resume.XXXXXX";

static void put(const char *path, const char *text) {
        FILE *w;

        ASSERT_TRUE((w = fopen(path, "we")));
        fputs(text, w);
        ASSERT_TRUE(fclose(w) == 0);
}

/* The text systemd-sleep's post phase leaves, field by field. */
TEST(format) {
        struct timespec ts = { .tv_sec = 1767236400, .tv_nsec = 123456789 };
        char *t = NULL;

        ASSERT_OK(last_resume_format("suspend", "suspend", &ts, 1234 * USEC_PER_SEC + 567890, 600000123, &t));
        ASSERT_STREQ(
                t,
                "ACTION=suspend\nSYSTEMD_SLEEP_ACTION=suspend\n"
                "REALTIME=2026-01-01T03:00:00.123456789Z\nBOOTTIME_SEC=1234.56\nSUSPENDED_USEC=600000123\n");
        free(t);
        ts.tv_nsec = 5;
        ASSERT_OK(last_resume_format(NULL, NULL, &ts, 7 * USEC_PER_SEC, 0, &t));
        ASSERT_STREQ(t, "ACTION=unknown\nSYSTEMD_SLEEP_ACTION=\nREALTIME=2026-01-01T03:00:00.000000005Z\n"
                        "BOOTTIME_SEC=7.00\nSUSPENDED_USEC=0\n");
        free(t);
}

/* To the microsecond: a sleep shorter than a second still ends after it began (status "Slept"). */
TEST(load) {
        char f[sizeof(test_root) + 16];

        snprintf(f, sizeof(f), "%s/last-resume", test_root);
        (void) unlink(f);
        ASSERT_U64_EQ(last_resume_load(test_root), 0); /* none */
        put(f, "ACTION=suspend\nREALTIME=2026-01-01T03:00:00.123456789Z\nBOOTTIME_SEC=1.00\n");
        ASSERT_U64_EQ(last_resume_load(test_root), 1767236400123456ULL);
        put(f, "REALTIME=2026-01-01T03:00:00Z\n");
        ASSERT_U64_EQ(last_resume_load(test_root), 1767236400000000ULL);
        put(f, "REALTIME=garbage\n");
        ASSERT_U64_EQ(last_resume_load(test_root), 0);
}

/* Who wrote it (review AW, L3): the post hook names the action; restore-knob, for a sleep no hook of
 * ours ran in, names none. Keys only at the start of a line. */
TEST(parse) {
        LastResume lr;

        last_resume_parse("ACTION=suspend\nSYSTEMD_SLEEP_ACTION=suspend\nREALTIME=2026-01-01T03:00:00.5Z\n"
                          "BOOTTIME_SEC=1.00\n",
                          &lr);
        ASSERT_U64_EQ(lr.realtime, 1767236400500000ULL);
        ASSERT_TRUE(lr.by_hook);
        /* an action systemd-sleep named that main() did not take, with $SYSTEMD_SLEEP_ACTION */
        last_resume_parse("ACTION=unknown\nSYSTEMD_SLEEP_ACTION=suspend-then-hibernate\n", &lr);
        ASSERT_TRUE(lr.by_hook);
        ASSERT_U64_EQ(lr.realtime, 0);
        /* restore-knob's (last_resume_save(dir, NULL, NULL)) */
        last_resume_parse("ACTION=unknown\nSYSTEMD_SLEEP_ACTION=\nREALTIME=2026-01-01T03:00:00Z\n", &lr);
        ASSERT_TRUE(!lr.by_hook);
        ASSERT_U64_EQ(lr.realtime, 1767236400000000ULL);
        last_resume_parse("ACTION=unknownx\n", &lr);
        ASSERT_TRUE(lr.by_hook);
        last_resume_parse("XACTION=suspend\nX_REALTIME=2026-01-01T03:00:00Z\nACTION=\n", &lr);
        ASSERT_TRUE(!lr.by_hook);
        ASSERT_U64_EQ(lr.realtime, 0);
        last_resume_parse("", &lr);
        ASSERT_TRUE(!lr.by_hook);
        ASSERT_U64_EQ(lr.suspended, USEC_INFINITY);

        /* how long this boot has been suspended; absent (older versions) or malformed: not known */
        last_resume_parse("ACTION=suspend\nSUSPENDED_USEC=0\n", &lr);
        ASSERT_U64_EQ(lr.suspended, 0);
        last_resume_parse("SUSPENDED_USEC=3600000123\nREALTIME=2026-01-01T03:00:00Z\n", &lr);
        ASSERT_U64_EQ(lr.suspended, 3600000123ULL);
        ASSERT_U64_EQ(lr.realtime, 1767236400000000ULL);
        static const char *const bad[] = {
                "SUSPENDED_USEC=\n",
                "SUSPENDED_USEC=-1\n",
                "SUSPENDED_USEC=12x\n",
                "SUSPENDED_USEC= 1\n",
                "SUSPENDED_USEC=18446744073709551616\n",
                "SUSPENDED_USEC=18446744073709551615\n",
                "SUSPENDED_USEC=123456789012345678901\n",
                "XSUSPENDED_USEC=1\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                last_resume_parse(bad[i], &lr);
                ASSERT_U64_EQ(lr.suspended, USEC_INFINITY);
        }
}

/* The pair save records SUSPENDED_USEC= from (and a pass its started_suspended): one moment's, so
 * that with no sleep in between two counts differ by far less than the millisecond status allows
 * (review BB: two plain reads differ by however long the process was preempted between them). */
TEST(monotonic_boottime_pair) {
        usec_t m0, b0;

        now_monotonic_boottime(&m0, &b0);
        ASSERT_TRUE(m0 > 0 && b0 >= m0);
        for (unsigned i = 0; i < 100000; i++) {
                usec_t m, b;

                now_monotonic_boottime(&m, &b);
                ASSERT_TRUE(m >= m0 && b >= m);
                ASSERT_TRUE(b - m + USEC_PER_MSEC / 4 > b0 - m0 && b - m < b0 - m0 + USEC_PER_MSEC / 4);
        }
}

/* What save writes, load reads back (within the time the two calls took); public, no leftovers;
 * a missing directory is not made. */
TEST(save) {
        char f[sizeof(test_root) + 16], missing[sizeof(test_root) + 16];
        usec_t before = now(CLOCK_REALTIME), got;
        LastResume lr;
        struct stat st;

        snprintf(f, sizeof(f), "%s/last-resume", test_root);
        snprintf(missing, sizeof(missing), "%s/nope", test_root);
        (void) unlink(f);
        ASSERT_OK(last_resume_save(test_root, "hibernate", "suspend-after-failed-hibernate"));
        got = last_resume_load(test_root);
        ASSERT_TRUE(got >= before && got <= now(CLOCK_REALTIME));
        last_resume_read(test_root, &lr);
        ASSERT_TRUE(lr.by_hook && lr.realtime == got);
        /* this boot's time suspended so far, read with the two clocks */
        ASSERT_TRUE(lr.suspended != USEC_INFINITY &&
                    lr.suspended <= now(CLOCK_BOOTTIME) - now(CLOCK_MONOTONIC) + USEC_PER_MSEC);
        ASSERT_OK(last_resume_save(test_root, NULL, NULL));
        last_resume_read(test_root, &lr);
        ASSERT_TRUE(!lr.by_hook && lr.realtime >= got);
        ASSERT_TRUE(stat(f, &st) == 0);
        ASSERT_TRUE((st.st_mode & 07777) == PUBLIC_FILE_MODE);
        ASSERT_TRUE(last_resume_save(missing, "suspend", NULL) == -ENOENT);
        ASSERT_TRUE(access(missing, F_OK) < 0);
}

int main(void) {
        ASSERT_TRUE(test_mkdtemp(test_root));
        RUN(format);
        RUN(load);
        RUN(parse);
        RUN(monotonic_boottime_pair);
        RUN(save);
        /* Only the record is left: no temporary file. */
        char f[sizeof(test_root) + 16];
        snprintf(f, sizeof(f), "%s/last-resume", test_root);
        ASSERT_TRUE(unlink(f) == 0);
        ASSERT_TRUE(rmdir(test_root) == 0);
        return 0;
}
