/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "defer-commit.h"
#include "shared/macro.h"
#include "tests.h"

/* Every fact alone withholds deferral (a control flips it back), and only "not the unit's pass"
 * and DeferCommit=no withhold it without a reason for the journal. */
TEST(allowed) {
        const DeferFacts ok = {
                .unit_pass = true,
                .policy = true,
                .writeback_first = true,
                .knob = 1,
                .required = 0,
                .handover_ok = true,
        };
        DeferFacts f;
        const char *why = "unset";

        ASSERT_TRUE(defer_commit_allowed(&ok, &why));
        ASSERT_TRUE(why == NULL);

        f = ok;
        f.unit_pass = false; /* the late pass, a manual run */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why == NULL);
        f = ok;
        f.policy = false;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why == NULL);

        f = ok;
        f.writeback_first = false;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "WritebackFirst"));
        f = ok;
        f.knob = 0; /* no backstop */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "off"));
        f.knob = -ENOENT; /* a kernel without the knob: unknown, so no */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "cannot be read"));
        f = ok;
        f.required = 1;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "require-sync.conf"));
        f.required = -EACCES; /* unknown counts as required */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        f = ok;
        f.fail_on_timeout = true; /* OnTimeout=fail: the unit's result tells of every timeout */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "OnTimeout=fail"));
        f = ok;
        f.handover_ok = false; /* the late pass would not learn what was left to it */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "state directory"));
        f = ok;
        f.kick_failed = true;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "flusher"));
}

static void make_link(int fd, const char *dir) {
        char path[256];

        ASSERT_OK(mkdirat(fd, dir, 0755) < 0 && errno != EEXIST ? -errno : 0);
        snprintf(path, sizeof path, "%s/suspend-sync.service", dir);
        ASSERT_OK(symlinkat("/usr/lib/systemd/system/suspend-sync.service", fd, path));
}

static void drop_link(int fd, const char *dir) {
        char path[256];

        snprintf(path, sizeof path, "%s/suspend-sync.service", dir);
        ASSERT_OK(unlinkat(fd, path, 0));
}

/* The drop-in's variable, or the link that enabling it made (an older drop-in sets nothing). */
TEST(sleep_requires) {
        static const char *const dirs[] = {
                "etc", "etc/systemd", "etc/systemd/system", "etc/systemd/system/sleep.target.requires",
                "run", "run/systemd", "run/systemd/system", "run/systemd/system/sleep.target.requires"
        };
        char tmp[] = "/tmp/test-defer-commit-XXXXXX";
        int fd;

        ASSERT_TRUE(mkdtemp(tmp));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);

        ASSERT_EQ(defer_commit_sleep_requires(fd, NULL), 0);
        ASSERT_EQ(defer_commit_sleep_requires(fd, ""), 0);
        ASSERT_EQ(defer_commit_sleep_requires(fd, "0"), 0);
        ASSERT_EQ(defer_commit_sleep_requires(fd, "no"), 0);
        ASSERT_EQ(defer_commit_sleep_requires(fd, "1"), 1);
        ASSERT_EQ(defer_commit_sleep_requires(fd, "yes"), 1);
        ASSERT_EQ(defer_commit_sleep_requires(fd, "garbage"), 1); /* unknown: fail closed */

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                ASSERT_OK(mkdirat(fd, dirs[i], 0755));
        ASSERT_EQ(defer_commit_sleep_requires(fd, NULL), 0); /* control: directories alone */
        make_link(fd, "etc/systemd/system/sleep.target.requires");
        ASSERT_EQ(defer_commit_sleep_requires(fd, NULL), 1);
        ASSERT_EQ(defer_commit_sleep_requires(fd, "no"), 1);
        drop_link(fd, "etc/systemd/system/sleep.target.requires");
        make_link(fd, "run/systemd/system/sleep.target.requires");
        ASSERT_EQ(defer_commit_sleep_requires(fd, NULL), 1);
        drop_link(fd, "run/systemd/system/sleep.target.requires");
        ASSERT_EQ(defer_commit_sleep_requires(fd, NULL), 0);

        for (size_t i = ELEMENTSOF(dirs); i > 0; i--)
                ASSERT_OK(unlinkat(fd, dirs[i - 1], AT_REMOVEDIR));
        close(fd);
        ASSERT_OK(rmdir(tmp));
}

int main(void) {
        RUN(allowed);
        RUN(sleep_requires);
        return 0;
}
