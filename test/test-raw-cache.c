/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "loop-attach.h"
#include "raw-cache.h"
#include "shared/devnum-util.h"
#include "shared/macro.h"
#include "tests.h"
#include "wrap-getdents.h"

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

/* A block device's sysfs directory below devices/virtual/block/: its "dev", and "partition" for a
 * partition; a disk is linked from dev/block/MAJ:MIN as in sysfs. */
static void put_device(int fd, const char *dir, unsigned maj, unsigned min, bool part) {
        char path[PATH_MAX], text[64];

        snprintf(path, sizeof path, "devices/virtual/block/%s", dir);
        put_dir(fd, path);
        snprintf(path, sizeof path, "devices/virtual/block/%s/dev", dir);
        snprintf(text, sizeof text, "%u:%u\n", maj, min);
        put_file(fd, path, text);
        if (part) {
                snprintf(path, sizeof path, "devices/virtual/block/%s/partition", dir);
                put_file(fd, path, "1\n");
        }
        put_dir(fd, "dev/block");
        snprintf(path, sizeof path, "dev/block/%u:%u", maj, min);
        snprintf(text, sizeof text, "../../devices/virtual/block/%s", dir);
        ASSERT_OK(symlinkat(text, fd, path));
}

/* A partitioned disk 7:1 (loop1p1 259:0, loop1p2 259:1), a disk 7:2 with no partition, a disk whose
 * kernel name holds a '!' (104:0, cciss!c0d0, node cciss/c0d0). */
static int fixture_sysfs(char *root) {
        int fd;

        ASSERT_TRUE(test_mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        put_device(fd, "loop1", 7, 1, false);
        put_device(fd, "loop1/loop1p1", 259, 0, true);
        put_device(fd, "loop1/loop1p2", 259, 1, true);
        put_dir(fd, "devices/virtual/block/loop1/queue"); /* no partition file: an attribute directory */
        put_dir(fd, "devices/virtual/block/loop1/holders");
        put_device(fd, "loop2", 7, 2, false);
        put_device(fd, "cciss!c0d0", 104, 0, false);
        put_device(fd, "cciss!c0d0/cciss!c0d0p1", 104, 1, true);
        return fd;
}

/* Which devices of a disk no writable superblock of the sample explains. */
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
        /* devtmpfs's name for a kernel name with '!' */
        ASSERT_OK(raw_cache_others(fd, "104:0", NULL, 0, &d, &n));
        ASSERT_EQ(n, 3U);
        ASSERT_STREQ(d[1].name, "cciss/c0d0");
        ASSERT_STREQ(d[2].name, "cciss/c0d0p1"); /* a partition's: its directory's name */
        raw_devices_free(d, n);
        d = NULL, n = 0;

        /* No disk by that name: an anonymous bdi, btrfs's, a partition's number, one not there. */
        ASSERT_OK(raw_cache_others(fd, "0:52", NULL, 0, &d, &n));
        ASSERT_OK(raw_cache_others(fd, "btrfs-1", NULL, 0, &d, &n));
        ASSERT_OK(raw_cache_others(fd, "259:0", NULL, 0, &d, &n));
        ASSERT_OK(raw_cache_others(fd, "8:0", NULL, 0, &d, &n));
        ASSERT_EQ(n, 0U);

        /* A "dev" that is no device number: an error, never "nothing". */
        put_file(fd, "devices/virtual/block/loop1/loop1p2/dev", "259\n");
        ASSERT_ERR(raw_cache_others(fd, "7:1", p1, 1, &d, &n), EINVAL);
        raw_devices_free(d, n);

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

/* The verdict: a dirty device is named before one that could not be asked; each failure says where. */
TEST(verdict) {
        RawDevice d[3] = {
                { .dev = makedev(7, 1),
                  .name = (char *) "loop1",
                  .disk = (char *) "7:1",
                  .error = -ETIMEDOUT },
                { .dev = makedev(259, 1),
                  .name = (char *) "loop1p2",
                  .disk = (char *) "7:1",
                  .answered = true,
                  .dirty = 1024,
                  .synced = 4096 },
                { .dev = makedev(259, 2),
                  .name = (char *) "loop1p3",
                  .disk = (char *) "7:1",
                  .answered = true },
        };
        _cleanup_free_ char *why = NULL;

        ASSERT_EQ(raw_cache_verdict(d, 3, &why), 1);
        ASSERT_STREQ(why, "block device loop1p2 (259:1, on disk 7:1, which also holds a filesystem of this "
                          "pass) still holds 1024 dirty pages written straight to it, after this pass wrote "
                          "4096");
        why = mfree(why);
        /* Negative control: nothing dirty, nothing failed. */
        ASSERT_EQ(raw_cache_verdict(d + 2, 1, &why), 0);
        ASSERT_TRUE(!why);
        d[1].dirty = 0;
        ASSERT_EQ(raw_cache_verdict(d, 3, &why), 1);
        ASSERT_STREQ(
                why,
                "whether block device loop1 (7:1, on disk 7:1, which also holds a filesystem of this "
                "pass) holds dirty pages written straight to it cannot be told (not reached: no answer in "
                "time)");
        why = mfree(why);
        d[0].current = true; /* the child was on it */
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1);
        ASSERT_TRUE(strstr(why, "cannot be told (no answer in time)"));
        why = mfree(why);
        d[0].current = false, d[0].answered = true;
        d[0].stage = RAW_CACHE_OPEN, d[0].error = -ENOENT;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1);
        ASSERT_TRUE(strstr(why, "(opening /dev/loop1: No such file or directory)"));
        why = mfree(why);
        d[0].stage = RAW_CACHE_NODE, d[0].error = -ENOTBLK;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1);
        ASSERT_TRUE(strstr(why, "(/dev/loop1 is not that block device)"));
        why = mfree(why);
        d[0].stage = RAW_CACHE_STAT, d[0].error = -ENOSYS;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1);
        ASSERT_TRUE(strstr(why, "(cachestat: needs Linux 6.5)"));
        why = mfree(why);
        d[0].stage = RAW_CACHE_SYNC, d[0].error = -EIO, d[0].found = 12;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1);
        ASSERT_TRUE(strstr(why, "(fsync of its 12 dirty pages: Input/output error)"));
        why = mfree(why);
        d[0].answered = false, d[0].current = true, d[0].error = -ETIMEDOUT;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1);
        ASSERT_TRUE(strstr(why, "(fsync of its 12 dirty pages: did not end in time)"));
        why = mfree(why);

        /* On a leaf of a device proven stuck (review of 87cc0de): the device the child stopped on,
         * or one the kernel failed, is no reason; one not reached, no cachestat, a missing node
         * are; a dirty page left is. */
        d[0].on_stuck_disk = true;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 0); /* stopped in its fsync */
        d[0].current = false;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1); /* not reached */
        why = mfree(why);
        d[0].answered = true, d[0].error = -EIO;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 0); /* its fsync failed */
        d[0].stage = RAW_CACHE_OPEN, d[0].error = -ENXIO;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 0); /* gone */
        d[0].error = -ENOENT;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1); /* no node */
        why = mfree(why);
        d[0].stage = RAW_CACHE_STAT, d[0].error = -ENOSYS;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1);
        why = mfree(why);
        d[0].error = 0, d[0].dirty = 3;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1);
        ASSERT_TRUE(strstr(why, "still holds 3 dirty pages"));
        why = mfree(why);
        /* review J (mutation RC1): one dirty page is one too many; none is the control */
        d[0].dirty = 1;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 1);
        ASSERT_TRUE(strstr(why, "still holds 1 dirty pages"));
        why = mfree(why);
        d[0].dirty = 0;
        ASSERT_EQ(raw_cache_verdict(d, 1, &why), 0);
        ASSERT_TRUE(!why);
}

#define REC(i, k, ...) ((RawCacheRecord) { .index = (i), .kind = RAW_CACHE_##k, __VA_ARGS__ })

/* The child's records: a device begun in order, then its final word; one found dirty is synced
 * after all were looked at. */
TEST(feed) {
        RawDevice d[2];
        RawCacheRun x;
        RawCacheRecord ok[] = {
                REC(0, START, .stage = RAW_CACHE_OPEN),
                REC(0, DIRTY, .stage = RAW_CACHE_SYNC, .dirty = 8, .found = 8),
                REC(1, START, .stage = RAW_CACHE_OPEN),
                REC(1, FINAL, .stage = RAW_CACHE_NODE, .error = -ENOTBLK),
                REC(0, SYNCING, .stage = RAW_CACHE_SYNC, .found = 8),
                REC(0, FINAL, .stage = RAW_CACHE_STAT, .found = 8, .synced = 8),
        };
        const RawCacheRecord bad[][2] = {
                { REC(1, START), REC(1, FINAL) },                            /* not in order */
                { REC(0, FINAL), REC(0, START) },                            /* before its start */
                { REC(0, START), REC(0, FINAL, .error = 5) },                /* a positive error */
                { REC(0, START), REC(0, FINAL, .stage = 9) },                /* an unknown stage */
                { REC(0, START), { .index = 0, .kind = 9 } },                /* an unknown kind */
                { REC(0, START), REC(0, SYNCING, .stage = RAW_CACHE_STAT) }, /* syncing what was clean */
                { REC(0, START), REC(2, FINAL) },                            /* no such device */
                { REC(0, START), REC(0, START) },                            /* begun twice */
                { REC(0, START), REC(0, DIRTY, .stage = RAW_CACHE_STAT) },   /* dirty, not to be synced */
        };

        x = (RawCacheRun) { .d = d, .n = 2, .current = SIZE_MAX };
        d[0] = d[1] = (RawDevice) { .error = -ENODATA };
        ASSERT_EQ(raw_cache_feed((const char *) ok, 2 * sizeof ok[0] + 3, &x), 0);
        ASSERT_EQ(d[0].stage, RAW_CACHE_SYNC);
        ASSERT_EQ(d[0].found, 8U);
        ASSERT_EQ(d[0].error, -ENODATA); /* not answered yet */
        ASSERT_TRUE(!d[0].answered);
        ASSERT_EQ(x.current, SIZE_MAX); /* found dirty: not on it any more */
        ASSERT_EQ(raw_cache_feed((const char *) ok, 4 * sizeof ok[0], &x), 0);
        ASSERT_TRUE(d[1].answered);
        ASSERT_EQ(d[1].error, -ENOTBLK);
        ASSERT_EQ(d[1].stage, RAW_CACHE_NODE);
        ASSERT_EQ(raw_cache_feed((const char *) ok, 5 * sizeof ok[0], &x), 0);
        ASSERT_EQ(x.current, 0U); /* the child is in device 0's fsync */
        ASSERT_EQ(raw_cache_feed((const char *) ok, sizeof ok, &x), 1);
        ASSERT_EQ(d[0].error, 0);
        ASSERT_EQ(d[0].synced, 8U);
        ASSERT_EQ(d[0].dirty, 0U);

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                x = (RawCacheRun) { .d = d, .n = 2, .current = SIZE_MAX };
                d[0] = d[1] = (RawDevice) { .error = -ENODATA };
                ASSERT_ERR(raw_cache_feed((const char *) bad[i], sizeof bad[i], &x), EBADMSG);
        }
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

/* raw_cache_unexplained() with the fixture's known device (loop1p1). */
static int look(int rootfd, int sysfs, int debugfs, const char *const *bdis, size_t n, usec_t until,
                const dev_t *stuck, size_t n_stuck, char **why) {
        const dev_t known[] = { makedev(259, 0) };
        _cleanup_free_ char *synced = NULL;
        RawCacheLook l = {
                .bdis = bdis,
                .n_bdis = n,
                .known = known,
                .n_known = 1,
                .stuck = stuck,
                .n_stuck = n_stuck,
                .until = until,
                .max_timeout = USEC_PER_SEC,
        };
        int r = raw_cache_unexplained(rootfd, sysfs, debugfs, &l, why, &synced);

        ASSERT_TRUE(!synced); /* nothing here is a real device */
        return r;
}
/* The sysfs of fixture_sysfs() under root and an empty debugfs under dbg (both mkdtemp templates),
 * their fds and root's. */
static void fixture_open(char *root, char *dbg, int *ret_sysfs, int *ret_root, int *ret_debugfs) {
        *ret_sysfs = fixture_sysfs(root);
        *ret_root = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(test_mkdtemp(dbg));
        *ret_debugfs = open(dbg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(*ret_root >= 0 && *ret_debugfs >= 0);
}

#define LOOK(bdis, n, until, why) look(rootfd, sysfs, debugfs, bdis, n, until, NULL, 0, why)

/* What the child's failure says, or without cachestat(2) (before Linux 6.5) the reason given
 * before any child. */
static void expect_why(const char *why, const char *text) {
        ASSERT_TRUE(why);
        if (!raw_cache_supported())
                text = "(cachestat: needs Linux 6.5)";
        if (!strstr(why, text)) {
                fprintf(stderr, "'%s' lacks '%s'\n", why, text);
                abort();
        }
}

/* The whole look: no child while the disk's lists are empty; once they are not (or not shown), every
 * device that cannot be asked keeps the sync on, with its name. */
TEST(unexplained) {
        char root[] = "/tmp/test-raw-cache-root.XXXXXX", dbg[] = "/tmp/test-raw-cache-dbg.XXXXXX", cmd[160];
        _cleanup_close_ int sysfs = -EBADF, debugfs = -EBADF, rootfd = -EBADF;
        const char *bdis[] = { "7:1", "7:1", "0:52", "btrfs-1" };
        dev_t stuck[] = { makedev(7, 1) };
        _cleanup_free_ char *why = NULL;
        usec_t later = now(CLOCK_MONOTONIC) + 60 * USEC_PER_SEC;

        fixture_open(root, dbg, &sysfs, &rootfd, &debugfs);

        put_stats(debugfs, "7:1", 0);
        ASSERT_EQ(LOOK(bdis, 4, later, &why), 0);
        ASSERT_TRUE(!why);

        /* Lists not empty: the devices are asked, and this root has no "dev". */
        put_stats(debugfs, "7:1", 2);
        ASSERT_EQ(LOOK(bdis, 4, later, &why), 1);
        ASSERT_TRUE(strstr(why, "whether block device loop1 (7:1, on disk 7:1"));
        expect_why(why, "cannot be told (opening /dev/loop1: No such file or directory)");
        why = mfree(why);

        /* A node that is not that device. */
        put_dir(rootfd, "dev");
        put_file(rootfd, "dev/loop1", "");
        ASSERT_EQ(LOOK(bdis, 4, later, &why), 1);
        expect_why(why, "(/dev/loop1 is not that block device)");
        why = mfree(why);

        /* No time left: the reason, without a child. */
        ASSERT_EQ(LOOK(bdis, 4, 1, &why), 1);
        expect_why(why, "(not reached: no answer in time)");
        why = mfree(why);

        /* A leaf of a device proven stuck is asked too (reviews of b63003b and 428fbf9: a healthy
         * leaf below a stuck layer is written by the kernel's sync), and only a failure of the
         * device itself is no reason there (review of 87cc0de; test verdict): not a node of another
         * device, not "no time left" (nothing asked). */
        ASSERT_EQ(look(rootfd, sysfs, debugfs, bdis, 4, later, stuck, 1, &why), 1);
        expect_why(why, "(/dev/loop1 is not that block device)");
        why = mfree(why);
        ASSERT_EQ(look(rootfd, sysfs, debugfs, bdis, 4, 1, stuck, 1, &why), 1);
        expect_why(why, "(not reached: no answer in time)");
        why = mfree(why);

        /* No debugfs, or no entry for the disk in it (review of 4236419: read as "gone", nothing was
         * asked): the lists prove nothing, the devices are asked. */
        ASSERT_EQ(look(rootfd, sysfs, -EBADF, bdis, 4, later, NULL, 0, &why), 1);
        why = mfree(why);
        snprintf(cmd, sizeof cmd, "rm -rf %s/bdi/7:1", dbg);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_EQ(LOOK(bdis, 4, later, &why), 1);
        ASSERT_TRUE(strstr(why, "whether block device loop1 (7:1"));
        why = mfree(why);
        put_stats(debugfs, "7:1", 2);

        /* A disk whose devices cannot be listed. */
        put_file(sysfs, "devices/virtual/block/loop1/loop1p2/dev", "x\n");
        ASSERT_EQ(LOOK(bdis, 4, later, &why), 1);
        ASSERT_STREQ(why,
                     "the block devices of disk 7:1, which holds a filesystem of this pass, cannot be listed "
                     "(sysfs: Invalid argument)");
        why = mfree(why);
        /* ... but its lists empty: nothing to list. */
        put_stats(debugfs, "7:1", 0);
        ASSERT_EQ(LOOK(bdis, 4, later, &why), 0);
        put_file(sysfs, "devices/virtual/block/loop1/loop1p2/dev", "259:1\n");
        put_stats(debugfs, "7:1", 2);

        /* More devices than it asks about: a reason. */
        for (unsigned i = 3; i < RAW_CACHE_DEVICES_MAX + 3; i++) {
                char name[64];

                snprintf(name, sizeof name, "loop1/loop1p%u", i);
                put_device(sysfs, name, 259, i, true);
        }
        ASSERT_EQ(LOOK(bdis, 4, later, &why), 1);
        ASSERT_STREQ(why, "the disks of this pass have more than 256 other block devices to look at");
        why = mfree(why);

        /* Nothing but anonymous bdis: nothing to look at. */
        ASSERT_EQ(LOOK(bdis + 2, 2, later, &why), 0);

        snprintf(cmd, sizeof cmd, "rm -rf %s %s", root, dbg);
        ASSERT_EQ(system(cmd), 0);
}

/* A disk whose partitions cannot be listed (a sysfs read error): the partitions not listed may hold
 * pages written straight to them, so the listing's error is returned, and the look gives it as the
 * reason. The control: the same disk listed, its devices asked (and this root has no "dev"). */
TEST(others_listing_fails) {
        char root[] = "/tmp/test-raw-cache-root.XXXXXX", dbg[] = "/tmp/test-raw-cache-dbg.XXXXXX", cmd[160];
        _cleanup_close_ int sysfs = -EBADF, debugfs = -EBADF, rootfd = -EBADF;
        const char *bdis[] = { "7:1" };
        dev_t p1[] = { makedev(259, 0) };
        _cleanup_free_ char *why = NULL;
        usec_t later = now(CLOCK_MONOTONIC) + 60 * USEC_PER_SEC;
        RawDevice *d = NULL;
        size_t n = 0;

        fixture_open(root, dbg, &sysfs, &rootfd, &debugfs);
        put_stats(debugfs, "7:1", 2);
        ASSERT_OK(fstatat(sysfs, "devices/virtual/block/loop1", &wrap_getdents_fail_dir, 0));

        wrap_getdents_fail_errno = EIO;
        ASSERT_ERR(raw_cache_others(sysfs, "7:1", p1, 1, &d, &n), EIO);
        raw_devices_free(d, n);
        d = NULL, n = 0;
        ASSERT_EQ(LOOK(bdis, 1, later, &why), 1);
        wrap_getdents_fail_errno = 0;
        ASSERT_STREQ(why,
                     "the block devices of disk 7:1, which holds a filesystem of this pass, cannot be listed "
                     "(sysfs: Input/output error)");
        why = mfree(why);

        /* control: listed in full */
        ASSERT_OK(raw_cache_others(sysfs, "7:1", p1, 1, &d, &n));
        ASSERT_EQ(n, 2U);
        raw_devices_free(d, n);
        ASSERT_EQ(LOOK(bdis, 1, later, &why), 1);
        ASSERT_TRUE(!strstr(why, "cannot be listed"));

        snprintf(cmd, sizeof cmd, "rm -rf %s %s", root, dbg);
        ASSERT_EQ(system(cmd), 0);
}


/* A writer that goes on writing to the device while the pass syncs it: test-raw-cache is linked with
 * --wrap=fsync (test/meson.build); with fsync_then_write set, each fsync that succeeds is followed by
 * one page written to the same device, through a file of its own (the child's fd stays open, so the
 * device is not synced at that file's close). */
static bool fsync_then_write;

int __real_fsync(int fd);
int __wrap_fsync(int fd);

int __wrap_fsync(int fd) {
        int r = __real_fsync(fd);

        if (r >= 0 && fsync_then_write) {
                char path[64], page[4096];
                int w;

                snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
                memset(page, 'w', sizeof page);
                w = open(path, O_WRONLY | O_CLOEXEC);
                if (w < 0 || pwrite(w, page, sizeof page, 3 * sizeof page) != (ssize_t) sizeof page)
                        abort();
                close(w);
        }
        return r;
}

/* The child fsyncs a device it found dirty, then asks it again: what is dirty after the fsync was
 * written since (a process writing straight to a partition through the pass) and must count, the
 * device named. On a loop device of our own with pages written to it; the control: nothing written
 * after the fsync, the device clean. */
TEST(dirty_after_fsync) {
        char file[] = "/tmp/test-raw-cache-loop.XXXXXX", node[64], page[4096];
        _cleanup_close_ int root_fd = -EBADF, loop = -EBADF;
        struct stat st;
        int fd;

        if (geteuid() != 0) {
                test_skip("dirty_after_fsync: not root (a loop device is needed)");
                return;
        }
        if (!raw_cache_supported()) {
                test_skip("dirty_after_fsync: no cachestat(2) (Linux 6.5 or later is needed)");
                return;
        }
        fd = mkstemp(file);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(ftruncate(fd, 4 << 20));
        close(fd);
        loop = loop_attach(file, node, sizeof node);
        ASSERT_OK(unlink(file));
        if (loop < 0) {
                test_skip("dirty_after_fsync: no loop device: %s", strerror(-loop));
                return;
        }
        ASSERT_OK(fstat(loop, &st));
        root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(root_fd >= 0);
        memset(page, 'x', sizeof page);

        for (int after = 0; after <= 1; after++) {
                _cleanup_free_ char *why = NULL;
                RawDevice d = {
                        .dev = st.st_rdev,
                        .name = strdup(node + strlen("/dev/")),
                        .disk = strdup(FORMAT_DEVNUM(st.st_rdev)),
                        .error = -ENODATA,
                };

                ASSERT_TRUE(d.name && d.disk);
                for (unsigned i = 0; i < 8; i++)
                        ASSERT_EQ(pwrite(loop, page, sizeof page, i * sizeof page), (ssize_t) sizeof page);
                fsync_then_write = after;
                raw_cache_query(root_fd, &d, 1, 10 * USEC_PER_SEC);
                fsync_then_write = false;
                fprintf(stderr, "  %s: error %d, found %" PRIu64 ", synced %" PRIu64 ", dirty %" PRIu64 "\n",
                        after ? "written after the fsync" : "control", d.error, d.found, d.synced, d.dirty);
                ASSERT_TRUE(d.answered);
                ASSERT_EQ(d.error, 0);
                ASSERT_TRUE(d.found > 0 && d.synced == d.found);
                if (after) {
                        ASSERT_TRUE(d.dirty > 0);
                        ASSERT_EQ(raw_cache_verdict(&d, 1, &why), 1);
                        ASSERT_TRUE(strstr(why, "dirty pages written straight to it"));
                } else {
                        ASSERT_U64_EQ(d.dirty, 0);
                        ASSERT_EQ(raw_cache_verdict(&d, 1, &why), 0);
                }
                free(d.name);
                free(d.disk);
        }
        /* what the last round left dirty, written before the device is let go */
        ASSERT_OK(fsync(loop));
}

/* The disks of a device group key. */
TEST(group_disks) {
        _cleanup_free_ dev_t *d = NULL;
        size_t n = 0;

        ASSERT_OK(raw_cache_group_disks("8:0,8:16", &d, &n));
        ASSERT_OK(raw_cache_group_disks("sb:0:52", &d, &n));
        ASSERT_OK(raw_cache_group_disks(NULL, &d, &n));
        ASSERT_EQ(n, 2U);
        ASSERT_EQ(d[0], makedev(8, 0));
        ASSERT_EQ(d[1], makedev(8, 16));
        ASSERT_ERR(raw_cache_group_disks("8:32,x", &d, &n), EINVAL);
        ASSERT_EQ(n, 2U); /* nothing of a malformed key (review of 87cc0de: its 8:32 counted) */
}

int main(void) {
        RUN(others);
        RUN(verdict);
        RUN(feed);
        RUN(unexplained);
        RUN(others_listing_fails);
        RUN(dirty_after_fsync);
        RUN(group_disks);
        return test_result();
}
