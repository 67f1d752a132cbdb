/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "shared/fd-util.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "suspend-stats.h"
#include "tests.h"

static void put(const char *dir, const char *name, const char *text) {
        char path[512];
        FILE *w;

        snprintf(path, sizeof path, "%s/power/suspend_stats/%s", dir, name);
        ASSERT_TRUE((w = fopen(path, "we")));
        fputs(text, w);
        ASSERT_TRUE(fclose(w) == 0);
}

/* Names as the kernel prints them, kept to characters nothing needs to escape. */
TEST(name) {
        char b[8];

        suspend_stats_name("usb1-port2\n", b, sizeof b);
        ASSERT_STREQ(b, "usb1-po");
        suspend_stats_name("a b\x1b[1m\n", b, sizeof b);
        ASSERT_STREQ(b, "a?b??1m");
        suspend_stats_name("0000:00:14.0\nmore", b, 5);
        ASSERT_STREQ(b, "0000");
        suspend_stats_name("\n", b, sizeof b);
        ASSERT_STREQ(b, "");
}

/* The counts and the last failure from a sysfs root; what is not there, or not a count, is unknown. */
TEST(load) {
        char root[] = "/tmp/test-suspend-stats.XXXXXX", d[128];
        _cleanup_close_ int fd = -EBADF;
        SuspendStats s;

        ASSERT_TRUE(test_mkdtemp(root));
        ASSERT_TRUE((fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0);
        suspend_stats_load(fd, true, &s); /* no power/suspend_stats: a kernel without it */
        ASSERT_TRUE(s.success == SUSPEND_STATS_UNKNOWN && s.fail == SUSPEND_STATS_UNKNOWN);
        ASSERT_TRUE(s.last_failed_errno == 0 && !s.last_failed_step[0] && !s.last_failed_dev[0]);
        suspend_stats_load(-EBADF, true, &s);
        ASSERT_TRUE(s.success == SUSPEND_STATS_UNKNOWN && s.fail == SUSPEND_STATS_UNKNOWN);

        snprintf(d, sizeof d, "%s/power/suspend_stats", root);
        ASSERT_OK(mkdir_p_public(d));
        put(root, "success", "17\n");
        put(root, "fail", "3\n");
        put(root, "last_failed_errno", "-16\n");
        put(root, "last_failed_step", "suspend_noirq\n");
        put(root, "last_failed_dev", "0000:00:14.0\n");
        suspend_stats_load(fd, true, &s);
        ASSERT_U64_EQ(s.success, 17);
        ASSERT_U64_EQ(s.fail, 3);
        ASSERT_TRUE(s.last_failed_errno == -16);
        ASSERT_STREQ(s.last_failed_step, "suspend_noirq");
        ASSERT_STREQ(s.last_failed_dev, "0000:00:14.0");
        /* without details: the two counts only */
        suspend_stats_load(fd, false, &s);
        ASSERT_TRUE(s.success == 17 && s.fail == 3 && s.last_failed_errno == 0 && !s.last_failed_dev[0]);

        /* no failure yet: errno 0, step and device empty */
        put(root, "last_failed_errno", "0\n");
        put(root, "last_failed_step", "\n");
        put(root, "last_failed_dev", "\n");
        put(root, "fail", "x\n");
        suspend_stats_load(fd, true, &s);
        ASSERT_TRUE(s.success == 17 && s.fail == SUSPEND_STATS_UNKNOWN);
        ASSERT_TRUE(s.last_failed_errno == 0 && !s.last_failed_step[0] && !s.last_failed_dev[0]);
        put(root, "last_failed_errno", "-4095\n");
        suspend_stats_load(fd, true, &s);
        ASSERT_TRUE(s.last_failed_errno == -4095);
        put(root, "last_failed_errno", "-4096\n");
        suspend_stats_load(fd, true, &s);
        ASSERT_TRUE(s.last_failed_errno == 0);
        put(root, "last_failed_errno", "16\n");
        put(root, "success", "-1\n");
        suspend_stats_load(fd, true, &s);
        ASSERT_TRUE(s.success == SUSPEND_STATS_UNKNOWN && s.last_failed_errno == 0);

        static const char *const names[] = { "success", "fail", "last_failed_errno", "last_failed_step",
                                             "last_failed_dev" };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                snprintf(d, sizeof d, "%s/power/suspend_stats/%s", root, names[i]);
                ASSERT_TRUE(unlink(d) == 0);
        }
        static const char *const dirs[] = { "power/suspend_stats", "power", "" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                snprintf(d, sizeof d, "%s/%s", root, dirs[i]);
                ASSERT_TRUE(rmdir(d) == 0);
        }
}

int main(void) {
        RUN(name);
        RUN(load);
        return 0;
}
