/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "defer-commit.h"
#include "shared/fileio.h"
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

TEST(text_requires) {
        static const char *const yes[] = {
                "Requires=suspend-sync.service\n",
                "[Unit]\n  Requires = foo.service suspend-sync.service\n",
                "[Unit]\nRequisite=suspend-sync.service",
                "BindsTo=suspend-sync.service\n",
                "Requires=a.service \\\n  suspend-sync.service\n", /* continued */
                "# comment\nWants=x.service\nRequires=suspend-sync.service\n",
                "Requires=my-suspend-sync.service\n", /* a false yes only costs the deferral */
        };
        static const char *const no[] = {
                "",
                "Wants=suspend-sync.service\n",
                "After=suspend-sync.service\nBefore=suspend-sync.service\n",
                "# Requires=suspend-sync.service\n",
                "; Requires=suspend-sync.service\n",
                "Requires=other.service\n",
                "RequiresMountsFor=/suspend-sync.service\n",
                "Requires=a.service\nsuspend-sync.service\n", /* not continued */
                "Requires\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                ASSERT_TRUE(defer_commit_text_requires(yes[i]));
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                ASSERT_TRUE(!defer_commit_text_requires(no[i]));
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st, (void) flag, (void) ftw;
        return remove(path) < 0 ? -errno : 0;
}

/* dir_fd/path with text, its directories made. */
static void put(int dir_fd, const char *path, const char *text) {
        char buf[512];

        snprintf(buf, sizeof buf, "%s", path);
        for (char *slash = strchr(buf, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = 0;
                ASSERT_OK(mkdirat_public(dir_fd, buf));
                *slash = '/';
        }
        ASSERT_OK(write_file_atomic_at(dir_fd, path, text, strlen(text)));
}

/* Every place of the unit search path where a requirement can be written is found; a control
 * (the same place without it) is not. */
TEST(sleep_requires_places) {
        static const struct {
                const char *path, *text;
                int expect;
        } cases[] = {
                { "etc/systemd/system/sleep.target.d/x.conf", "[Unit]\nRequires=suspend-sync.service\n", 1 },
                { "etc/systemd/system/sleep.target.d/x.conf", "[Unit]\nWants=suspend-sync.service\n", 0 },
                { "etc/systemd/system/sleep.target.d/x.conf.off", "Requires=suspend-sync.service\n", 0 },
                { "usr/lib/systemd/system/suspend.target.d/x.conf", "BindsTo=suspend-sync.service\n", 1 },
                { "run/systemd/system/systemd-.service.d/x.conf", "Requires=suspend-sync.service\n", 1 },
                { "run/systemd/system/systemd-suspend-.service.d/x.conf", "Requisite=suspend-sync.service\n",
                  1 },
                { "run/systemd/system/systemd-sleep-.service.d/x.conf", "Requires=suspend-sync.service\n",
                  0 },
                { "etc/systemd/system/target.d/x.conf", "Requires=suspend-sync.service\n", 1 },
                { "etc/systemd/system/socket.d/x.conf", "Requires=suspend-sync.service\n", 0 },
                { "etc/systemd/system/sleep.target", "[Unit]\nRequires=suspend-sync.service\n", 1 },
                { "etc/systemd/system/sleep.target", "[Unit]\nDescription=Sleep\n", 0 },
                { "etc/systemd/system/sleepy.target", "[Unit]\nRequires=suspend-sync.service\n", 0 },
                { "usr/local/lib/systemd/system/sleep.target", "Requires=suspend-sync.service\n", 1 },
                { "usr/lib/systemd/system/sleep.target", "Requires=suspend-sync.service\n", 0 }, /* vendor */
                { "run/systemd/transient/hibernate.target.d/x.conf", "Requires=suspend-sync.service\n", 1 },
                { "run/systemd/generator/hybrid-sleep.target.requires/suspend-sync.service", "", 1 },
                { "usr/lib/systemd/system/suspend-then-hibernate.target.requires/suspend-sync.service", "",
                  1 },
                { "usr/local/lib/systemd/system/systemd-hibernate.service.requires/suspend-sync.service", "",
                  1 },
                { "etc/systemd/system/suspend.target.requires/other.service", "", 0 },
                { "etc/systemd/system/suspend.target.wants/suspend-sync.service", "", 0 },
                { "etc/systemd/system/sleep.target.d/x.conf", NULL /* too large */, 1 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char tmp[] = "/tmp/test-defer-commit-XXXXXX";
                _cleanup_free_ char *big = NULL;
                int fd;

                ASSERT_TRUE(mkdtemp(tmp));
                fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ASSERT_TRUE(fd >= 0);
                if (!cases[i].text) {
                        big = malloc(70000);
                        ASSERT_TRUE(big);
                        memset(big, '#', 69999);
                        big[69999] = 0;
                }
                put(fd, cases[i].path, cases[i].text ?: big);
                if (cases[i].expect != defer_commit_sleep_requires(fd, NULL))
                        fprintf(stderr, "case %zu: %s\n", i, cases[i].path);
                ASSERT_EQ(defer_commit_sleep_requires(fd, NULL), cases[i].expect);
                close(fd);
                ASSERT_OK(nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS));
        }
}

int main(void) {
        RUN(allowed);
        RUN(sleep_requires);
        RUN(text_requires);
        RUN(sleep_requires_places);
        return 0;
}
