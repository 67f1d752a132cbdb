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
/* Both readers take a device's kernel name as a path component below a directory fd: no name (not
 * a block device here), one that is no name, a bad fd. */
/* NULL is a bad name too, unless f takes it (ext4_options_nobarrier(): every superblock's). */
static void bad_names(int (*f)(int dir_fd, const char *name), int fd, const char *with_slash,
                      const char *good) {
        char longname[NAME_MAX + 2];

        if (f != ext4_options_nobarrier)
                ASSERT_EQ(f(fd, NULL), -ENOENT);
        ASSERT_EQ(f(fd, ""), -EINVAL);
        ASSERT_EQ(f(fd, ".."), -EINVAL);
        ASSERT_EQ(f(fd, with_slash), -EINVAL);
        memset(longname, 'a', sizeof longname - 1);
        longname[sizeof longname - 1] = 0;
        ASSERT_EQ(f(fd, longname), -ENAMETOOLONG);
        ASSERT_EQ(f(-EBADF, good), -EBADF);
}

TEST(load) {
        char dir[] = "/tmp/test-ext4-journal.XXXXXX", cmd[600];
        int fd;

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
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
        bad_names(ext4_journal_load, fd, "../ext4/loop1", "loop1");
        close(fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        ASSERT_EQ(system(cmd), 0);
}

/* jbd2's directory names (fs/jbd2/): "<device>-<inode>" for a journal in the filesystem, "<device>"
 * for a journal device (seen on 6.18: "loop0-8", "loop1"). */
TEST(internal_entry) {
        static const struct {
                const char *entry, *name;
                bool internal;
        } cases[] = {
                { "loop0-8", "loop0", true },
                { "sda1-8", "sda1", true },
                { "nvme0n1p2-8", "nvme0n1p2", true },
                { "dm-0-8", "dm-0", true },                 /* a '-' in the device's name */
                { "cciss!c0d0p1-8", "cciss!c0d0p1", true }, /* '/' written '!' */
                { "sdb3-4294967297", "sdb3", true },
                { "sda1-12345678901234567890", "sda1", true },
                { "loop1", "loop1", false },  /* a journal device */
                { "loop1", "loop2", false },  /* the journal device of loop2's ext4 */
                { "loop0-8", "loop", false }, /* another device's */
                { "loop0-8", "loop0-", false },
                { "loop10-8", "loop1", false },
                { "loop1-8", "loop10", false },
                { "dm-0-8", "dm", false },
                { "dm-0-8", "dm-0-8", false },
                { "sda1-", "sda1", false },
                { "sda1--8", "sda1", false },
                { "sda1-+8", "sda1", false },
                { "sda1-08", "sda1", false }, /* "%lu" never pads */
                { "sda1-0", "sda1", false },
                { "sda1-8 ", "sda1", false },
                { "sda1-8x", "sda1", false },
                { "sda1-0x8", "sda1", false },
                { "sda1-123456789012345678901", "sda1", false }, /* 21 digits */
                { "sda1_8", "sda1", false },
                { "SDA1-8", "sda1", false },
                { ".", "sda1", false },
                { "", "sda1", false },
                { "-8", "", false },
                { "sda1-8", "", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                if (ext4_journal_internal_entry(cases[i].entry, cases[i].name) != cases[i].internal)
                        fprintf(stderr, "'%s' of '%s'\n", cases[i].entry, cases[i].name);
                ASSERT_EQ(ext4_journal_internal_entry(cases[i].entry, cases[i].name), cases[i].internal);
        }
        ASSERT_TRUE(!ext4_journal_internal_entry(NULL, "sda1"));
        ASSERT_TRUE(!ext4_journal_internal_entry("sda1-8", NULL));
}

/* A proc tree: fs/jbd2/ with loop0-8 (internal) and loop1 (the journal device of loop2's ext4). */
TEST(internal_load) {
        char dir[] = "/tmp/test-ext4-journal.XXXXXX", empty[] = "/tmp/test-ext4-journal.XXXXXX", cmd[600];
        int fd, fd_empty;

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        ASSERT_TRUE(test_mkdtemp(empty) != NULL);
        mk(dir, "fs");
        mk(dir, "fs/jbd2");
        mk(dir, "fs/jbd2/loop0-8");
        mk(dir, "fs/jbd2/loop1");
        mk(dir, "fs/jbd2/dm-3-12");
        put(dir, "fs/jbd2/loop0-8/info", "0 transactions (0 requested), each up to 1365 blocks\n");

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(ext4_journal_internal(fd, "loop0"), 1);
        ASSERT_EQ(ext4_journal_internal(fd, "dm-3"), 1);
        ASSERT_EQ(ext4_journal_internal(fd, "loop2"), 0); /* external journal: not proven */
        ASSERT_EQ(ext4_journal_internal(fd, "loop1"), 0); /* the journal device itself */
        ASSERT_EQ(ext4_journal_internal(fd, "sda1"), 0);  /* no journal, or not ours to know */
        ASSERT_EQ(ext4_journal_internal(fd, "dm"), 0);
        bad_names(ext4_journal_internal, fd, "x/loop0", "loop0");

        /* no fs/jbd2/ at all (no jbd2 loaded, /proc masked): cannot be told */
        fd_empty = open(empty, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd_empty >= 0);
        ASSERT_EQ(ext4_journal_internal(fd_empty, "loop0"), -ENOENT);
        mk(empty, "fs");
        put(empty, "fs/jbd2", "not a directory\n");
        ASSERT_EQ(ext4_journal_internal(fd_empty, "loop0"), -ENOTDIR);
        close(fd_empty);
        close(fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, empty);
        ASSERT_EQ(system(cmd), 0);
}

/* More entries than are looked at: cannot be told, unless the answer came first. */
TEST(internal_bound) {
        char dir[] = "/tmp/test-ext4-journal.XXXXXX", cmd[600], name[64];
        int fd;

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        mk(dir, "fs");
        mk(dir, "fs/jbd2");
        for (unsigned i = 0; i <= EXT4_JOURNAL_JBD2_MAX; i++) {
                snprintf(name, sizeof name, "fs/jbd2/nbd%u", i);
                mk(dir, name);
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(ext4_journal_internal(fd, "sda1"), -E2BIG);
        close(fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        ASSERT_EQ(system(cmd), 0);
}

/* Where the late pass reaches the journal with the device: none, or one proven in the filesystem. */
TEST(on_own_device) {
        ASSERT_TRUE(ext4_journal_on_own_device(EXT4_JOURNAL_NONE, -ENODATA));
        ASSERT_TRUE(ext4_journal_on_own_device(EXT4_JOURNAL_YES, 1));
        ASSERT_TRUE(ext4_journal_on_own_device(-EOPNOTSUPP, 1));
        ASSERT_TRUE(!ext4_journal_on_own_device(EXT4_JOURNAL_YES, 0));
        ASSERT_TRUE(!ext4_journal_on_own_device(EXT4_JOURNAL_YES, -ENOENT));
        ASSERT_TRUE(!ext4_journal_on_own_device(-ENOENT, 0));
        ASSERT_TRUE(!ext4_journal_on_own_device(-ENOENT, -ENOENT));
}

/* The running kernel, as the sample reads it (the device's name from the classifier): every ext4
 * superblock sysfs lists answers yes or no. */
TEST(live) {
        _cleanup_(device_classifier_freep) DeviceClassifier *c = NULL;
        int fd = open("/sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
                /* and where a journal lies, when proc has fs/jbd2/ */
                int q = ext4_journal_internal(proc_fd, d.name);
                ASSERT_TRUE(q == 1 || q == 0 || q == -ENOENT);
                printf("live: %s journal %d internal %d\n", d.name ? d.name : "n/a", r, q);
                device_info_done(&d);
                n++;
        }
        fclose(f);
        close(fd);
        printf("live: %u ext4 mounts read\n", n);
}

/* proc fs/ext4/<device>/options lists every option, one a line (review AA, AA1): the text of an
 * ext4 with nobarrier set by tune2fs -o, which /proc/self/mountinfo shows as "rw" only. */
TEST(nobarrier) {
        char dir[] = "/tmp/test-ext4-journal.XXXXXX", cmd[600];
        int fd;

        ASSERT_EQ(ext4_options_nobarrier_parse("rw\nnobarrier\nerrors=continue\n"), 1);
        ASSERT_EQ(ext4_options_nobarrier_parse("rw\nbarrier\nerrors=continue\n"), 0);
        ASSERT_EQ(ext4_options_nobarrier_parse("nobarrier"), 1);
        /* a line is the option, nothing around it */
        ASSERT_EQ(ext4_options_nobarrier_parse("rw\nnobarrier2\n"), -EINVAL);
        ASSERT_EQ(ext4_options_nobarrier_parse("rw\n nobarrier\n"), -EINVAL);
        ASSERT_EQ(ext4_options_nobarrier_parse("rw,nobarrier\n"), -EINVAL);
        ASSERT_EQ(ext4_options_nobarrier_parse(""), -EINVAL);
        ASSERT_EQ(ext4_options_nobarrier_parse(NULL), -EINVAL);

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        mk(dir, "fs");
        mk(dir, "fs/ext4");
        mk(dir, "fs/ext4/loop1");
        mk(dir, "fs/ext4/loop2");
        put(dir, "fs/ext4/loop1/options", "rw\nnobarrier\ndata=ordered\n");
        put(dir, "fs/ext4/loop2/options", "rw\nbarrier\ndata=ordered\n");
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(ext4_options_nobarrier(fd, "loop1"), 1);
        ASSERT_EQ(ext4_options_nobarrier(fd, "loop2"), 0);
        ASSERT_EQ(ext4_options_nobarrier(fd, "sda1"), -ENOENT);
        bad_names(ext4_options_nobarrier, fd, "../ext4/loop1", "loop1");

        /* No name (sysfs could not tell it, review AC): every ext4 of the kernel is listed, the one
         * asked about among them. One says nobarrier: it may be that one, unknown. */
        ASSERT_EQ(ext4_options_nobarrier(fd, NULL), -ENODEV);
        put(dir, "fs/ext4/loop1/options", "rw\nbarrier\n");
        ASSERT_EQ(ext4_options_nobarrier(fd, NULL), 0); /* every one says barrier */
        mk(dir, "fs/ext4/loop3");                       /* one without its options file */
        ASSERT_EQ(ext4_options_nobarrier(fd, NULL), -ENOENT);
        put(dir, "fs/ext4/loop3/options", "rw\n"); /* one that says neither */
        ASSERT_EQ(ext4_options_nobarrier(fd, NULL), -EINVAL);
        close(fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'/fs/ext4/*", dir);
        ASSERT_EQ(system(cmd), 0);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(ext4_options_nobarrier(fd, NULL), -ENOENT); /* none listed */
        close(fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        ASSERT_EQ(system(cmd), 0);
        fd = open("/nonexistent-dir-of-test-ext4-journal", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_EQ(ext4_options_nobarrier(fd, NULL), -EBADF);
}

int main(void) {
        RUN(parse);
        RUN(nobarrier);
        RUN(readable);
        RUN(load);
        RUN(internal_entry);
        RUN(internal_load);
        RUN(internal_bound);
        RUN(on_own_device);
        RUN(live);
        return 0;
}
