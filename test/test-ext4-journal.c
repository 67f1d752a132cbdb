/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device.h"
#include "ext4-journal.h"
#include "shared/macro.h"
#include "tests.h"

TEST(parse) {
        ASSERT_EQ(ext4_journal_parse("<none>\n"), EXT4_JOURNAL_NONE);
        ASSERT_EQ(ext4_journal_parse("<none>"), EXT4_JOURNAL_NONE);
        ASSERT_EQ(ext4_journal_parse("2571\n"), EXT4_JOURNAL_YES);
        /* the jbd2 thread outside our pid namespace */
        ASSERT_EQ(ext4_journal_parse("0\n"), EXT4_JOURNAL_YES);
        ASSERT_EQ(ext4_journal_parse("4194304"), EXT4_JOURNAL_YES);

        /* anything else is not an answer: the caller keeps the device flush */
        static const char *const bad[] = {
                "",         "\n",       "<none>\n\n", "<none> \n", " 12\n",         "12 \n",   "-1\n",
                "12\n13\n", "<NONE>\n", "none\n",     "0x10\n",    "99999999999\n", "<none>x", "1\n\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                if (ext4_journal_parse(bad[i]) != -EINVAL)
                        fprintf(stderr, "accepted: '%s'\n", bad[i]);
                ASSERT_EQ(ext4_journal_parse(bad[i]), -EINVAL);
        }
        ASSERT_EQ(ext4_journal_parse(NULL), -EINVAL);
}

TEST(readable) {
        static const char *const yes[] = { "5.7.0", "5.10.0-28-amd64", "6.18.0", "10.0", "5.7" };
        static const char *const no[] = {
                "5.6.19", "5.4.0-150-generic", "4.19.0-25-amd64", "3.10.0", "", "x", "5", "5.x"
        };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                ASSERT_TRUE(ext4_journal_readable(yes[i]));
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                ASSERT_TRUE(!ext4_journal_readable(no[i]));
        ASSERT_TRUE(!ext4_journal_readable(NULL));
}

static void put(const char *root, const char *path, const char *text) {
        char p[512];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", root, path);
        f = fopen(p, "we");
        ASSERT_TRUE(f != NULL);
        fputs(text, f);
        ASSERT_EQ(fclose(f), 0);
}

static void mk(const char *root, const char *path) {
        char p[512];

        snprintf(p, sizeof p, "%s/%s", root, path);
        ASSERT_OK(mkdir(p, 0755));
}

/* A sysfs tree: fs/ext4/loop1 (journal), loop2 (none), sda2 (garbage); sda1 has no entry. */
TEST(load) {
        char dir[] = "/tmp/test-ext4-journal.XXXXXX", cmd[600], longname[NAME_MAX + 2];
        int fd;

        ASSERT_TRUE(mkdtemp(dir) != NULL);
        mk(dir, "fs");
        mk(dir, "fs/ext4");
        mk(dir, "fs/ext4/loop1");
        mk(dir, "fs/ext4/loop2");
        mk(dir, "fs/ext4/sda2");
        put(dir, "fs/ext4/loop1/journal_task", "812\n");
        put(dir, "fs/ext4/loop2/journal_task", "<none>\n");
        put(dir, "fs/ext4/sda2/journal_task", "yes\n");

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(ext4_journal_load(fd, "loop1"), EXT4_JOURNAL_YES);
        ASSERT_EQ(ext4_journal_load(fd, "loop2"), EXT4_JOURNAL_NONE);
        ASSERT_EQ(ext4_journal_load(fd, "sda1"), -ENOENT);
        ASSERT_EQ(ext4_journal_load(fd, "sda2"), -EINVAL);
        /* no name (not a block device here), or one that is no name */
        ASSERT_EQ(ext4_journal_load(fd, NULL), -ENOENT);
        ASSERT_EQ(ext4_journal_load(fd, ""), -EINVAL);
        ASSERT_EQ(ext4_journal_load(fd, ".."), -EINVAL);
        ASSERT_EQ(ext4_journal_load(fd, "../ext4/loop1"), -EINVAL);
        memset(longname, 'a', sizeof longname - 1);
        longname[sizeof longname - 1] = 0;
        ASSERT_EQ(ext4_journal_load(fd, longname), -ENAMETOOLONG);
        ASSERT_EQ(ext4_journal_load(-EBADF, "loop1"), -EBADF);
        close(fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        ASSERT_EQ(system(cmd), 0);
}

/* The running kernel, as the sample reads it (the device's name from the classifier): every ext4
 * superblock sysfs lists answers yes or no. */
TEST(live) {
        _cleanup_(device_classifier_freep) DeviceClassifier *c = NULL;
        int fd = open("/sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[4096];
        unsigned n = 0;

        if (fd < 0 || !f || device_classifier_new("/sys", SYSFS_DIRFD, &c) < 0) {
                if (f)
                        fclose(f);
                if (fd >= 0)
                        close(fd);
                return;
        }
        while (fgets(line, sizeof line, f)) {
                DeviceInfo d = {};
                unsigned ma, mi;
                char *sep = strstr(line, " - ");

                if (!sep || strncmp(sep, " - ext4 ", 8) != 0 || sscanf(line, "%*d %*d %u:%u", &ma, &mi) != 2)
                        continue;
                ASSERT_OK(device_classifier_classify(c, makedev(ma, mi), "ext4", "", &d));
                int r = ext4_journal_load(fd, d.name);
                ASSERT_TRUE(r == EXT4_JOURNAL_YES || r == EXT4_JOURNAL_NONE || r == -ENOENT);
                device_info_done(&d);
                n++;
        }
        fclose(f);
        close(fd);
        printf("live: %u ext4 mounts read\n", n);
}

int main(void) {
        RUN(parse);
        RUN(readable);
        RUN(load);
        RUN(live);
        return 0;
}
