/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <fcntl.h>

#include <sched.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bdi-stats.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "tests.h"

#define KB 1024ULL

static int parse_fixture(const char *name, BdiStats *ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        char path[256];

        fd = open(FIXTURES_DIR "/bdi", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        snprintf(path, sizeof(path), "%s.stats", name);
        ASSERT_OK(read_full_file_at(fd, path, 1 << 20, &buf, NULL));
        return bdi_stats_parse(buf, ret);
}

/* What a bdi's name gives (review G, G3): a device, or only a filesystem type. */
TEST(name_kind) {
        char type[BDI_TYPE_MAX];
        dev_t dev = 0;

        ASSERT_EQ(bdi_name_kind("8:16", &dev, type), BDI_NAME_DEVICE);
        ASSERT_EQ(dev, makedev(8, 16));
        ASSERT_EQ(bdi_name_kind("0:52", &dev, type), BDI_NAME_DEVICE);
        ASSERT_EQ(dev, makedev(0, 52));
        ASSERT_EQ(bdi_name_kind("8:17-fuseblk", &dev, type), BDI_NAME_FUSEBLK);
        ASSERT_EQ(dev, makedev(8, 17));
        ASSERT_EQ(bdi_name_kind("zfs-1", &dev, type), BDI_NAME_TYPE);
        ASSERT_STREQ(type, "zfs");
        ASSERT_EQ(bdi_name_kind("btrfs-12", &dev, type), BDI_NAME_TYPE);
        ASSERT_STREQ(type, "btrfs");
        ASSERT_EQ(bdi_name_kind("fuse-like-name-3", &dev, type), BDI_NAME_TYPE); /* the last dash */
        ASSERT_STREQ(type, "fuse-like-name");
        ASSERT_EQ(bdi_name_kind("aaaaaaaaaaaaaaaaaaaaaaaaaaaa-7", &dev, type), BDI_NAME_TYPE); /* 28 bytes */
        ASSERT_EQ(bdi_name_kind("aaaaaaaaaaaaaaaaaaaaaaaaaaaaa-7", &dev, type), BDI_NAME_OTHER);
        ASSERT_EQ(bdi_name_kind("ubifs_0_0", &dev, type), BDI_NAME_OTHER);
        ASSERT_EQ(bdi_name_kind("8:16-other", &dev, type), BDI_NAME_OTHER);
        ASSERT_EQ(bdi_name_kind("8:16x", &dev, type), BDI_NAME_OTHER);
        ASSERT_EQ(bdi_name_kind(" 8:16", &dev, type), BDI_NAME_OTHER);
        ASSERT_EQ(bdi_name_kind("zfs-", &dev, type), BDI_NAME_OTHER);
        ASSERT_EQ(bdi_name_kind("-1", &dev, type), BDI_NAME_OTHER);
        ASSERT_EQ(bdi_name_kind("zfs-1a", &dev, type), BDI_NAME_OTHER);
        ASSERT_EQ(bdi_name_kind("8:1-2", &dev, type), BDI_NAME_OTHER);
        ASSERT_EQ(bdi_name_kind("", &dev, type), BDI_NAME_OTHER);
}

TEST(key_strings) {
        ASSERT_STREQ(bdi_stat_key_to_string(BDI_STAT_WRITEBACK), "BdiWriteback");
        ASSERT_STREQ(bdi_stat_key_to_string(BDI_STAT_WRITE_BANDWIDTH), "BdiWriteBandwidth");
        ASSERT_STREQ(bdi_stat_key_to_string(BDI_STAT_B_DIRTY_TIME), "b_dirty_time");
        ASSERT_TRUE(!bdi_stat_key_to_string(_BDI_STAT_MAX));
        ASSERT_TRUE(!bdi_stat_key_to_string((BdiStatKey) -1));
        for (unsigned k = 0; k < _BDI_STAT_MAX; k++)
                ASSERT_TRUE(bdi_stat_key_to_string(k));
}

TEST(real_6_18) {
        BdiStats s;

        ASSERT_EQ(parse_fixture("kernel-6.18-real-254_0", &s), _BDI_STAT_MAX);
        ASSERT_EQ(s.present, (1U << _BDI_STAT_MAX) - 1);
        ASSERT_U64_EQ(s.value[BDI_STAT_WRITEBACK], 4 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_RECLAIMABLE], 252 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_DIRTY_THRESH], 4878872 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_DIRTIED], 341500 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_WRITTEN], 246216 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_WRITE_BANDWIDTH], 4980 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY], 82);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_IO], 0);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_MORE_IO], 0);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY_TIME], 0);

        ASSERT_EQ(parse_fixture("kernel-6.18-real-idle-7_0", &s), _BDI_STAT_MAX);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY], 0);
        ASSERT_U64_EQ(s.value[BDI_STAT_DIRTY_THRESH], 609820 * KB);
}

TEST(older_layouts) {
        BdiStats s;

        ASSERT_EQ(parse_fixture("kernel-3.0-layout", &s), 6);
        ASSERT_TRUE(bdi_stats_has(&s, BDI_STAT_WRITEBACK));
        ASSERT_TRUE(!bdi_stats_has(&s, BDI_STAT_DIRTIED));
        ASSERT_TRUE(!bdi_stats_has(&s, BDI_STAT_WRITTEN));
        ASSERT_TRUE(!bdi_stats_has(&s, BDI_STAT_WRITE_BANDWIDTH));
        ASSERT_TRUE(!bdi_stats_has(&s, BDI_STAT_B_DIRTY_TIME));
        ASSERT_U64_EQ(s.value[BDI_STAT_WRITEBACK], 8 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_RECLAIMABLE], 1536 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY], 12);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_IO], 2);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_MORE_IO], 1);
        ASSERT_U64_EQ(s.value[BDI_STAT_DIRTIED], 0);

        ASSERT_EQ(parse_fixture("kernel-2.6.32-layout", &s), 6);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY], 5);
        ASSERT_U64_EQ(s.value[BDI_STAT_RECLAIMABLE], 256 * KB);
}

TEST(missing_keys) {
        BdiStats s;

        ASSERT_EQ(parse_fixture("missing-keys", &s), 3);
        ASSERT_EQ(s.present,
                  (1U << BDI_STAT_WRITEBACK) | (1U << BDI_STAT_DIRTIED) | (1U << BDI_STAT_B_DIRTY));
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY], 79);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_IO], 0);
}

TEST(garbage) {
        BdiStats s;

        /* Only b_dirty_time and BdiWritten are well-formed; wrong units, signs, trailing junk and
         * missing values make a key absent, unknown keys are ignored. */
        ASSERT_EQ(parse_fixture("garbage", &s), 2);
        ASSERT_EQ(s.present, (1U << BDI_STAT_B_DIRTY_TIME) | (1U << BDI_STAT_WRITTEN));
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY_TIME], 2);
        ASSERT_U64_EQ(s.value[BDI_STAT_WRITTEN], 99 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY], 0);

        ASSERT_EQ(bdi_stats_parse("", &s), 0);
        ASSERT_EQ(s.present, 0);
        ASSERT_ERR(bdi_stats_parse(NULL, &s), EINVAL);
}

TEST(overflow) {
        BdiStats s;

        ASSERT_EQ(parse_fixture("overflow", &s), 3);
        ASSERT_TRUE(!bdi_stats_has(&s, BDI_STAT_WRITEBACK));
        ASSERT_TRUE(!bdi_stats_has(&s, BDI_STAT_DIRTY_THRESH));
        ASSERT_TRUE(!bdi_stats_has(&s, BDI_STAT_DIRTIED));
        ASSERT_TRUE(!bdi_stats_has(&s, BDI_STAT_B_IO));
        ASSERT_U64_EQ(s.value[BDI_STAT_WRITEBACK], 0);
        ASSERT_U64_EQ(s.value[BDI_STAT_RECLAIMABLE], UINT64_MAX - 1023);
        ASSERT_U64_EQ(s.value[BDI_STAT_WRITTEN], 42 * KB);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY], UINT64_MAX);
}

TEST(duplicates_first_wins) {
        BdiStats s;

        ASSERT_EQ(bdi_stats_parse("b_dirty: 3\nb_dirty: 9\nb_io:x\nb_io: 4", &s), 2);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY], 3);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_IO], 4);
        /* key must match exactly */
        ASSERT_EQ(bdi_stats_parse("b_dirty_times: 3\nxb_io: 1\nB_IO: 1\n", &s), 0);
}

TEST(load_fixture_root) {
        _cleanup_close_ int fd = -EBADF, degraded = -EBADF;
        BdiStats s = {}, before;

        fd = open(FIXTURES_DIR "/roots/laptop/debugfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(bdi_stats_load(fd, "259:0", &s), _BDI_STAT_MAX);
        ASSERT_U64_EQ(s.value[BDI_STAT_B_DIRTY], 37);
        ASSERT_U64_EQ(s.value[BDI_STAT_RECLAIMABLE], 14336 * KB);
        ASSERT_EQ(bdi_stats_load(fd, "btrfs-1", &s), _BDI_STAT_MAX);
        ASSERT_U64_EQ(s.value[BDI_STAT_WRITEBACK], 128 * KB);
        ASSERT_EQ(bdi_stats_load(fd, "0:52", &s), _BDI_STAT_MAX);

        before = s;
        ASSERT_ERR(bdi_stats_load(fd, "259:9", &s), ENOENT);
        ASSERT_ERR(bdi_stats_load(fd, "../debugfs/bdi/259:0", &s), EINVAL);
        ASSERT_ERR(bdi_stats_load(fd, "..", &s), EINVAL);
        ASSERT_ERR(bdi_stats_load(fd, ".", &s), EINVAL);
        ASSERT_ERR(bdi_stats_load(fd, "a/b", &s), EINVAL);
        ASSERT_ERR(bdi_stats_load(fd, "", &s), EINVAL);
        ASSERT_ERR(bdi_stats_load(fd, NULL, &s), EINVAL);
        ASSERT_TRUE(memcmp(&before, &s, sizeof(s)) == 0); /* untouched on failure */

        degraded = open(FIXTURES_DIR "/roots/degraded", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(degraded >= 0);
        ASSERT_ERR(bdi_stats_load(degraded, "259:0", &s), ENOENT);
        ASSERT_ERR(bdi_stats_load(-EBADF, "259:0", &s), EBADF);
}

/* debugfs in a mount namespace of this test's own, as root: other processes share this machine, and
 * the host's mounts stay as they are. Whether it is there now. */
static bool debugfs_private(void) {
        if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return false;
        return mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) >= 0;
}

/* Reads the live debugfs: the host's when mounted, else one mounted for this test alone. */
TEST(load_live) {
        _cleanup_close_ int fd = -EBADF;
        BdiStats s;

        fd = open("/sys/kernel/debug", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if ((fd < 0 || faccessat(fd, "bdi", F_OK, 0) < 0) && debugfs_private()) {
                safe_close(fd);
                fd = open("/sys/kernel/debug", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        if (fd < 0 || faccessat(fd, "bdi", F_OK, 0) < 0) {
                test_skip("debugfs not mounted or not accessible: the live check needs it");
                return;
        }
        ASSERT_ERR(bdi_stats_load(fd, "no-such-bdi", &s), ENOENT);

        /* Every live bdi must parse with all keys of the 4.0+ layout. */
        {
                _cleanup_close_ int bdi_fd = openat(fd, "bdi", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                DIR *d = bdi_fd >= 0 ? fdopendir(TAKE_FD(bdi_fd)) : NULL;
                struct dirent *de;
                unsigned n = 0;

                ASSERT_TRUE(d);
                while ((de = readdir(d))) {
                        if (de->d_name[0] == '.')
                                continue;
                        ASSERT_EQ(bdi_stats_load(fd, de->d_name, &s), _BDI_STAT_MAX);
                        n++;
                }
                closedir(d);
                fprintf(stderr, "live debugfs: %u bdis parsed with all %d keys\n", n, _BDI_STAT_MAX);
        }
}

int main(void) {
        RUN(name_kind);
        RUN(key_strings);
        RUN(real_6_18);
        RUN(older_layouts);
        RUN(missing_keys);
        RUN(garbage);
        RUN(overflow);
        RUN(duplicates_first_wins);
        RUN(load_fixture_root);
        RUN(load_live);
        return test_result();
}
