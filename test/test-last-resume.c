/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "last-resume.h"
#include "shared/fd-util.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "tests.h"

static char test_root[] = "/tmp/test-last-resume.XXXXXX";

static void put(const char *path, const char *text) {
        FILE *w;

        ASSERT_TRUE((w = fopen(path, "we")));
        fputs(text, w);
        ASSERT_TRUE(fclose(w) == 0);
}

/* The text systemd-sleep's post phase leaves, field by field; what is not known is left out. */
TEST(format) {
        struct timespec ts = { .tv_sec = 1767236400, .tv_nsec = 123456789 };
        LastResume facts = {
                .boottime = 1234 * USEC_PER_SEC + 567890,
                .suspended = 600000123,
                .boot_id = "0123456789abcdef0123456789abcdef",
                .stats = { .success = 12,
                           .fail = 1,
                           .last_failed_errno = -16,
                           .last_failed_step = "suspend",
                           .last_failed_dev = "usb1" },
        };
        char *t = NULL;

        ASSERT_OK(last_resume_format("suspend", "suspend", &ts, &facts, &t));
        ASSERT_STREQ(
                t, "ACTION=suspend\nSYSTEMD_SLEEP_ACTION=suspend\n"
                   "REALTIME=2026-01-01T03:00:00.123456789Z\nBOOTTIME_SEC=1234.56\nSUSPENDED_USEC=600000123\n"
                   "BOOTTIME_USEC=1234567890\nBOOT_ID=0123456789abcdef0123456789abcdef\n"
                   "SUSPEND_SUCCESS=12\nSUSPEND_FAIL=1\nSUSPEND_LAST_FAILED_STEP=suspend\n"
                   "SUSPEND_LAST_FAILED_DEV=usb1\nSUSPEND_LAST_FAILED_ERRNO=-16\n");
        free(t);
        ts.tv_nsec = 5;
        facts = (LastResume) { .boottime = 7 * USEC_PER_SEC, .suspended = 0, .stats = SUSPEND_STATS_NULL };
        ASSERT_OK(last_resume_format(NULL, NULL, &ts, &facts, &t));
        ASSERT_STREQ(t, "ACTION=unknown\nSYSTEMD_SLEEP_ACTION=\nREALTIME=2026-01-01T03:00:00.000000005Z\n"
                        "BOOTTIME_SEC=7.00\nSUSPENDED_USEC=0\nBOOTTIME_USEC=7000000\n");
        free(t);
        /* what it writes, parse reads back */
        LastResume back;
        facts = (LastResume) { .boottime = 99,
                               .suspended = 5,
                               .boot_id = "ffffffffffffffffffffffffffffffff",
                               .stats = { .success = 0, .fail = SUSPEND_STATS_UNKNOWN } };
        ASSERT_OK(last_resume_format("suspend", NULL, &ts, &facts, &t));
        last_resume_parse(t, &back);
        free(t);
        ASSERT_U64_EQ(back.boottime, 99);
        ASSERT_U64_EQ(back.suspended, 5);
        ASSERT_STREQ(back.boot_id, facts.boot_id);
        ASSERT_U64_EQ(back.stats.success, 0);
        ASSERT_U64_EQ(back.stats.fail, SUSPEND_STATS_UNKNOWN);
        ASSERT_TRUE(back.stats.last_failed_errno == 0 && !back.stats.last_failed_step[0] &&
                    !back.stats.last_failed_dev[0]);
        /* a device name as suspend_stats_name() keeps it, '?' for what it does not (review BD, L1) */
        suspend_stats_name("cciss!c0d0 x\n", facts.stats.last_failed_dev, sizeof facts.stats.last_failed_dev);
        ASSERT_STREQ(facts.stats.last_failed_dev, "cciss?c0d0?x");
        facts.stats.last_failed_errno = -5;
        ASSERT_OK(last_resume_format("suspend", NULL, &ts, &facts, &t));
        last_resume_parse(t, &back);
        free(t);
        ASSERT_STREQ(back.stats.last_failed_dev, "cciss?c0d0?x");
        ASSERT_TRUE(back.stats.last_failed_errno == -5);
}

/* To the microsecond: a sleep shorter than a second still ends after it began (status "Slept"). */
static usec_t load(void) {
        LastResume lr;

        last_resume_read(test_root, &lr);
        return lr.realtime;
}

TEST(load) {
        char f[sizeof(test_root) + 16];

        snprintf(f, sizeof(f), "%s/last-resume", test_root);
        (void) unlink(f);
        ASSERT_U64_EQ(load(), 0); /* none */
        put(f, "ACTION=suspend\nREALTIME=2026-01-01T03:00:00.123456789Z\nBOOTTIME_SEC=1.00\n");
        ASSERT_U64_EQ(load(), 1767236400123456ULL);
        put(f, "REALTIME=2026-01-01T03:00:00Z\n");
        ASSERT_U64_EQ(load(), 1767236400000000ULL);
        put(f, "REALTIME=garbage\n");
        ASSERT_U64_EQ(load(), 0);
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

        /* the boot, the exact boottime, the kernel's counts; older records have none of them */
        last_resume_parse("ACTION=suspend\nBOOTTIME_SEC=1.00\n", &lr);
        ASSERT_TRUE(lr.boottime == 0 && !lr.boot_id[0]);
        ASSERT_TRUE(lr.stats.success == SUSPEND_STATS_UNKNOWN && lr.stats.fail == SUSPEND_STATS_UNKNOWN);
        last_resume_parse(
                "BOOTTIME_USEC=1000001\nBOOT_ID=0123456789abcdef0123456789abcdef\nSUSPEND_SUCCESS=3\n"
                "SUSPEND_FAIL=0\nSUSPEND_LAST_FAILED_STEP=suspend_noirq\nSUSPEND_LAST_FAILED_DEV=0000:00:14.0\n"
                "SUSPEND_LAST_FAILED_ERRNO=-110\n",
                &lr);
        ASSERT_U64_EQ(lr.boottime, 1000001);
        ASSERT_STREQ(lr.boot_id, "0123456789abcdef0123456789abcdef");
        ASSERT_U64_EQ(lr.stats.success, 3);
        ASSERT_U64_EQ(lr.stats.fail, 0);
        ASSERT_STREQ(lr.stats.last_failed_step, "suspend_noirq");
        ASSERT_STREQ(lr.stats.last_failed_dev, "0000:00:14.0");
        ASSERT_TRUE(lr.stats.last_failed_errno == -110);
        static const char *const bad_new[] = {
                "BOOT_ID=0123456789ABCDEF0123456789abcdef\nSUSPEND_SUCCESS=x\nSUSPEND_LAST_FAILED_ERRNO=16\n",
                "BOOT_ID=0123456789abcdef0123456789abcde\nSUSPEND_SUCCESS=-1\nSUSPEND_LAST_FAILED_ERRNO=-\n",
                "BOOT_ID=0123456789abcdef0123456789abcdef0\nSUSPEND_SUCCESS=\nSUSPEND_LAST_FAILED_DEV=a b\n"
                "SUSPEND_LAST_FAILED_ERRNO=-0\n",
                "SUSPEND_LAST_FAILED_DEV=\x1b[31m\nSUSPEND_LAST_FAILED_STEP=aaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
                "SUSPEND_LAST_FAILED_ERRNO=-4096\n",
        };
        /* at the bounds: a step of 23 bytes fits, 24 do not; errno -4095 is one, -4096 none */
        last_resume_parse(
                "SUSPEND_LAST_FAILED_STEP=aaaaaaaaaaaaaaaaaaaaaaa\nSUSPEND_LAST_FAILED_ERRNO=-4095\n", &lr);
        ASSERT_STREQ(lr.stats.last_failed_step, "aaaaaaaaaaaaaaaaaaaaaaa");
        ASSERT_TRUE(lr.stats.last_failed_errno == -4095);
        last_resume_parse(
                "SUSPEND_LAST_FAILED_STEP=aaaaaaaaaaaaaaaaaaaaaaaa\nSUSPEND_LAST_FAILED_ERRNO=-4096\n", &lr);
        ASSERT_TRUE(!lr.stats.last_failed_step[0] && lr.stats.last_failed_errno == 0);
        for (size_t i = 0; i < ELEMENTSOF(bad_new); i++) {
                last_resume_parse(bad_new[i], &lr);
                ASSERT_TRUE(!lr.boot_id[0] && lr.stats.success == SUSPEND_STATS_UNKNOWN);
                ASSERT_TRUE(!lr.stats.last_failed_dev[0] && !lr.stats.last_failed_step[0]);
                ASSERT_TRUE(lr.stats.last_failed_errno == 0);
        }
}

/* Review BB, L2: a resume is after a pass by CLOCK_BOOTTIME within one boot (the wall clock may
 * step back at a resume), never after a pass of another boot, by the wall clock when either is
 * not known. */
TEST(after) {
        const char *boot = "0123456789abcdef0123456789abcdef", *other = "ffffffffffffffffffffffffffffffff";
        LastResume lr = { .realtime = 1000 * USEC_PER_SEC, .boottime = 500 * USEC_PER_SEC };

        strcpy(lr.boot_id, boot);
        /* the wall clock stepped back by 10 min at the resume: still after, by boottime */
        ASSERT_TRUE(last_resume_after(&lr, boot, 1500 * USEC_PER_SEC, 400 * USEC_PER_SEC, USEC_PER_SEC));
        /* a resume before the pass's end, though the wall clock says after */
        ASSERT_TRUE(!last_resume_after(&lr, boot, 900 * USEC_PER_SEC, 499 * USEC_PER_SEC, 2 * USEC_PER_SEC));
        /* another boot's pass */
        ASSERT_TRUE(!last_resume_after(&lr, other, 900 * USEC_PER_SEC, 400 * USEC_PER_SEC, USEC_PER_SEC));
        /* the pass's boot or boottime not known: the wall clock */
        ASSERT_TRUE(last_resume_after(&lr, NULL, 900 * USEC_PER_SEC, 600 * USEC_PER_SEC, USEC_PER_SEC));
        ASSERT_TRUE(!last_resume_after(&lr, "", 1500 * USEC_PER_SEC, 400 * USEC_PER_SEC, USEC_PER_SEC));
        ASSERT_TRUE(last_resume_after(&lr, boot, 900 * USEC_PER_SEC, 0, USEC_PER_SEC));
        lr.boot_id[0] = 0;
        ASSERT_TRUE(!last_resume_after(&lr, boot, 1500 * USEC_PER_SEC, 400 * USEC_PER_SEC, USEC_PER_SEC));
        ASSERT_TRUE(last_resume_after(&lr, other, 900 * USEC_PER_SEC, 400 * USEC_PER_SEC, USEC_PER_SEC));
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
        ASSERT_OK(last_resume_save(test_root, -EBADF, "hibernate", "suspend-after-failed-hibernate"));
        got = load();
        ASSERT_TRUE(got >= before && got <= now(CLOCK_REALTIME));
        last_resume_read(test_root, &lr);
        ASSERT_TRUE(lr.by_hook && lr.realtime == got);
        /* this boot's time suspended so far, read with the two clocks */
        ASSERT_TRUE(lr.suspended != USEC_INFINITY &&
                    lr.suspended <= now(CLOCK_BOOTTIME) - now(CLOCK_MONOTONIC) + USEC_PER_MSEC);
        ASSERT_TRUE(lr.stats.success == SUSPEND_STATS_UNKNOWN && lr.boottime > 0 && lr.boot_id[0]);
        ASSERT_TRUE(lr.boottime <= now(CLOCK_BOOTTIME));
        /* the kernel's counts, from a sysfs root */
        _cleanup_close_ int sys_fd = -EBADF;
        char d[sizeof(test_root) + 64];
        snprintf(d, sizeof(d), "%s/sys/power/suspend_stats", test_root);
        ASSERT_OK(mkdir_p_public(d));
        snprintf(d, sizeof(d), "%s/sys/power/suspend_stats/success", test_root);
        put(d, "41\n");
        snprintf(d, sizeof(d), "%s/sys/power/suspend_stats/fail", test_root);
        put(d, "2\n");
        snprintf(d, sizeof(d), "%s/sys", test_root);
        ASSERT_TRUE((sys_fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0);
        ASSERT_OK(last_resume_save(test_root, sys_fd, NULL, NULL));
        last_resume_read(test_root, &lr);
        ASSERT_TRUE(!lr.by_hook && lr.realtime >= got);
        ASSERT_TRUE(lr.stats.success == 41 && lr.stats.fail == 2);
        ASSERT_TRUE(stat(f, &st) == 0);
        ASSERT_TRUE((st.st_mode & 07777) == PUBLIC_FILE_MODE);
        ASSERT_TRUE(last_resume_save(missing, sys_fd, "suspend", NULL) == -ENOENT);
        ASSERT_TRUE(access(missing, F_OK) < 0);
}

int main(void) {
        ASSERT_TRUE(test_mkdtemp(test_root));
        RUN(format);
        RUN(load);
        RUN(parse);
        RUN(after);
        RUN(monotonic_boottime_pair);
        RUN(save);
        /* Only the record is left: no temporary file. */
        char f[sizeof(test_root) + 16];
        snprintf(f, sizeof(f), "%s/last-resume", test_root);
        ASSERT_TRUE(unlink(f) == 0);
        char sys[sizeof(test_root) + 64];
        static const char *const gone[] = { "sys/power/suspend_stats/success", "sys/power/suspend_stats/fail",
                                            "sys/power/suspend_stats", "sys/power", "sys" };
        for (size_t i = 0; i < ELEMENTSOF(gone); i++) {
                snprintf(sys, sizeof(sys), "%s/%s", test_root, gone[i]);
                ASSERT_TRUE(remove(sys) == 0);
        }
        ASSERT_TRUE(rmdir(test_root) == 0);
        return 0;
}
