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

#include "raw-cache.h"
#include "shared/macro.h"
#include "tests.h"

static void put_file(int fd, const char *path, const char *text) {
        _cleanup_close_ int f = openat(fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ASSERT_TRUE(f >= 0);
        ASSERT_EQ(write(f, text, strlen(text)), (ssize_t) strlen(text));
}

static void put_dir(int fd, const char *path) {
        char cmd[PATH_MAX + 16];
        _cleanup_close_ int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ASSERT_TRUE(cwd >= 0);
        ASSERT_OK(fchdir(fd));
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_OK(fchdir(cwd));
}

/* A block device's sysfs directory: its uevent, and "partition" for a partition. */
static void put_device(int fd, const char *dir, unsigned maj, unsigned min, const char *name, bool part) {
        char path[PATH_MAX], text[128];

        put_dir(fd, dir);
        snprintf(path, sizeof path, "%s/uevent", dir);
        snprintf(text, sizeof text, "MAJOR=%u\nMINOR=%u\nDEVNAME=%s\nDEVTYPE=%s\n", maj, min, name,
                 part ? "partition" : "disk");
        put_file(fd, path, text);
        if (part) {
                snprintf(path, sizeof path, "%s/partition", dir);
                put_file(fd, path, "1\n");
        }
}

/* A partitioned disk 7:1 (loop1p1 259:0, loop1p2 259:1), a disk 7:2 with no partition, and a
 * partition's own directory under dev/block/. */
static int fixture_sysfs(char *root) {
        int fd;

        ASSERT_TRUE(mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        put_device(fd, "dev/block/7:1", 7, 1, "loop1", false);
        put_device(fd, "dev/block/7:1/loop1p1", 259, 0, "loop1p1", true);
        put_device(fd, "dev/block/7:1/loop1p2", 259, 1, "loop1p2", true);
        put_dir(fd, "dev/block/7:1/queue"); /* no partition file: an attribute directory */
        put_dir(fd, "dev/block/7:1/holders");
        put_device(fd, "dev/block/7:2", 7, 2, "loop2", false);
        put_device(fd, "dev/block/259:0", 259, 0, "loop1p1", true);
        return fd;
}

/* Which devices of a disk no superblock of the sample explains. */
TEST(others) {
        char root[] = "/tmp/test-raw-cache.XXXXXX", cmd[96];
        _cleanup_close_ int fd = fixture_sysfs(root);
        dev_t p1[] = { makedev(259, 0) }, whole[] = { makedev(7, 2) };
        RawDevice *d = NULL;
        size_t n = 0;

        /* An ext4 on loop1p1: the disk itself and loop1p2 are the others. */
        ASSERT_OK(raw_cache_others(fd, "7:1", p1, 1, &d, &n));
        ASSERT_EQ(n, 2U);
        ASSERT_STREQ(d[0].name, "loop1");
        ASSERT_EQ(d[0].dev, makedev(7, 1));
        ASSERT_STREQ(d[0].disk, "7:1");
        ASSERT_STREQ(d[1].name, "loop1p2");
        ASSERT_EQ(d[1].dev, makedev(259, 1));
        ASSERT_EQ(d[1].error, -ENODATA);
        raw_devices_free(d, n);
        d = NULL, n = 0;

        /* Negative control: nothing known, every device of the disk is another. */
        ASSERT_OK(raw_cache_others(fd, "7:1", NULL, 0, &d, &n));
        ASSERT_EQ(n, 3U);
        raw_devices_free(d, n);
        d = NULL, n = 0;

        /* A filesystem on the whole disk, no partition: nothing else. */
        ASSERT_OK(raw_cache_others(fd, "7:2", whole, 1, &d, &n));
        ASSERT_EQ(n, 0U);
        ASSERT_OK(raw_cache_others(fd, "7:2", p1, 1, &d, &n)); /* its control */
        ASSERT_EQ(n, 1U);
        ASSERT_STREQ(d[0].name, "loop2");
        raw_devices_free(d, n);
        d = NULL, n = 0;

        /* No disk by that name: an anonymous bdi, btrfs's, a partition's number. */
        ASSERT_OK(raw_cache_others(fd, "0:52", NULL, 0, &d, &n));
        ASSERT_OK(raw_cache_others(fd, "btrfs-1", NULL, 0, &d, &n));
        ASSERT_OK(raw_cache_others(fd, "259:0", NULL, 0, &d, &n));
        ASSERT_EQ(n, 0U);

        /* A uevent that names no single node: an error, never "nothing". */
        put_file(fd, "dev/block/7:1/loop1p2/uevent", "MAJOR=259\nMINOR=1\nDEVNAME=../sda\n");
        ASSERT_ERR(raw_cache_others(fd, "7:1", p1, 1, &d, &n), EINVAL);
        put_file(fd, "dev/block/7:1/loop1p2/uevent", "MAJOR=259\nMINOR=1\n");
        ASSERT_ERR(raw_cache_others(fd, "7:1", p1, 1, &d, &n), EINVAL);
        raw_devices_free(d, n);

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

/* The child's records: in order, no positive error, complete when every device is answered. */
TEST(feed) {
        RawDevice d[2] = { { .error = -ETIMEDOUT }, { .error = -ETIMEDOUT } };
        RawCacheRun x = { .d = d, .n = 2 };
        RawCacheRecord rec[2] = { { .index = 0, .dirty = 5 }, { .index = 1, .error = -ENOTBLK, .dirty = 9 } };

        ASSERT_EQ(raw_cache_feed((const char *) rec, sizeof rec[0] + 3, &x), 0);
        ASSERT_EQ(d[0].error, 0);
        ASSERT_EQ(d[0].dirty, 5U);
        ASSERT_EQ(d[1].error, -ETIMEDOUT);
        ASSERT_EQ(raw_cache_feed((const char *) rec, sizeof rec, &x), 1);
        ASSERT_EQ(d[1].error, -ENOTBLK);
        ASSERT_EQ(d[1].dirty, 0U);

        x.done = 0;
        rec[0].index = 1;
        ASSERT_ERR(raw_cache_feed((const char *) rec, sizeof rec, &x), EBADMSG);
        x.done = 0;
        rec[0] = (RawCacheRecord) { .index = 0, .error = 5 };
        ASSERT_ERR(raw_cache_feed((const char *) rec, sizeof rec, &x), EBADMSG);
}

static void put_stats(int fd, const char *bdi, unsigned b_dirty) {
        char path[128], text[256];

        snprintf(path, sizeof path, "bdi/%s", bdi);
        put_dir(fd, path);
        snprintf(path, sizeof path, "bdi/%s/stats", bdi);
        snprintf(text, sizeof text, "b_dirty: %u\nb_io: 0\nb_more_io: 0\nb_dirty_time: 0\n", b_dirty);
        put_file(fd, path, text);
        snprintf(path, sizeof path, "bdi/%s/wb_stats", bdi); /* Linux 6.10+: the lists are all of it */
        put_file(fd, path, "");
}

/* The whole look: no child while the disk's lists are empty; once they are not, every device that
 * cannot be asked (no node, a node of another device) keeps the sync on, with its name. */
TEST(unexplained) {
        char root[] = "/tmp/test-raw-cache-root.XXXXXX", dbg[] = "/tmp/test-raw-cache-dbg.XXXXXX", cmd[160];
        _cleanup_close_ int sysfs = -EBADF, debugfs = -EBADF, rootfd = -EBADF;
        const char *bdis[] = { "7:1", "7:1", "0:52" };
        dev_t known[] = { makedev(259, 0) };
        _cleanup_free_ char *why = NULL;

        sysfs = fixture_sysfs(root);
        rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(mkdtemp(dbg));
        debugfs = open(dbg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(rootfd >= 0 && debugfs >= 0);

        put_stats(debugfs, "7:1", 0);
        ASSERT_EQ(raw_cache_unexplained(rootfd, sysfs, debugfs, bdis, 3, known, 1, USEC_PER_SEC, &why), 0);
        ASSERT_TRUE(!why);

        /* Lists not empty: the devices are asked, and this root has no "dev". */
        put_stats(debugfs, "7:1", 2);
        ASSERT_EQ(raw_cache_unexplained(rootfd, sysfs, debugfs, bdis, 3, known, 1, USEC_PER_SEC, &why), 1);
        ASSERT_TRUE(strstr(why, "whether block device loop1 (7:1, on disk 7:1"));
        ASSERT_TRUE(strstr(why, "cannot be told (cachestat: No such file or directory)"));
        why = mfree(why);

        /* A node that is not that device. */
        put_dir(rootfd, "dev");
        put_file(rootfd, "dev/loop1", "");
        ASSERT_EQ(raw_cache_unexplained(rootfd, sysfs, debugfs, bdis, 3, known, 1, USEC_PER_SEC, &why), 1);
        ASSERT_TRUE(strstr(why, "Block device required"));
        why = mfree(why);

        /* No debugfs: the lists prove nothing, the devices are asked. */
        ASSERT_EQ(raw_cache_unexplained(rootfd, sysfs, -EBADF, bdis, 3, known, 1, USEC_PER_SEC, &why), 1);
        why = mfree(why);

        /* A disk whose devices cannot be listed. */
        put_file(sysfs, "dev/block/7:1/loop1p2/uevent", "MAJOR=x\n");
        ASSERT_EQ(raw_cache_unexplained(rootfd, sysfs, debugfs, bdis, 3, known, 1, USEC_PER_SEC, &why), 1);
        ASSERT_TRUE(strstr(
                why,
                "the block devices of disk 7:1, which holds a filesystem of this pass, cannot be listed"));
        why = mfree(why);

        /* Nothing but anonymous bdis: nothing to look at. */
        ASSERT_EQ(raw_cache_unexplained(rootfd, sysfs, debugfs, bdis + 2, 1, known, 1, USEC_PER_SEC, &why),
                  0);

        snprintf(cmd, sizeof cmd, "rm -rf %s %s", root, dbg);
        ASSERT_EQ(system(cmd), 0);
}

int main(void) {
        RUN(others);
        RUN(feed);
        RUN(unexplained);
        return 0;
}
