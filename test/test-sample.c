/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Sample tests: one record per superblock, bind mounts and subvolumes folded, overmounted mounts
 * flagged, the loaders joined on fixture roots (proc, sysfs, debugfs), and degraded roots.
 */

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "sample.h"
#include "tests.h"

static const Superblock *find_sb(const Sample *s, unsigned ma, unsigned mi) {
        for (size_t k = 0; k < s->n_sbs; k++)
                if (s->sbs[k].dev == makedev(ma, mi))
                        return &s->sbs[k];
        return NULL;
}

static Sample *build(const char *root) {
        _cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        MountTable *t = NULL;
        Sample *s = NULL;

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mount_table_load(fd, &t, NULL));
        ASSERT_OK(sample_build(&t, NULL, &s));
        return s;
}

TEST(laptop_superblocks) {
        _cleanup_(sample_freep) Sample *s = build(FIXTURES_DIR "/roots/laptop");
        const Superblock *root, *btrfs, *squash;

        root = find_sb(s, 259, 2);
        ASSERT_TRUE(root);
        ASSERT_EQ(root->n_mounts, 3U); /* /, /srv/www, /opt/vendor */
        ASSERT_STREQ(root->fstype, "ext4");
        ASSERT_TRUE(!root->all_read_only); /* /opt/vendor is ro per mount only */
        btrfs = find_sb(s, 0, 35);
        ASSERT_TRUE(btrfs && btrfs->n_mounts == 2);
        squash = find_sb(s, 7, 0);
        ASSERT_TRUE(squash && squash->all_read_only);
        ASSERT_EQ(find_sb(s, 0, 21)->fs_class, FS_CLASS_PSEUDO);
        ASSERT_EQ(find_sb(s, 0, 53)->fs_class, FS_CLASS_OVERLAY);
        ASSERT_EQ(find_sb(s, 0, 52)->fs_class, FS_CLASS_NETWORK);

        /* Without classification every superblock is its own group. */
        ASSERT_STREQ(root->group, "sb:259:2");

        /* Inverse map is consistent, and records follow mount table order. */
        for (size_t i = 0; i < s->table->n_entries; i++)
                ASSERT_TRUE(s->sbs[s->sb_of_mount[i]].dev == s->table->entries[i].dev);
        for (size_t k = 1; k < s->n_sbs; k++)
                ASSERT_TRUE(s->sbs[k - 1].mounts[0] < s->sbs[k].mounts[0]);
}

TEST(overmounted) {
        _cleanup_(sample_freep) Sample *s = build(FIXTURES_DIR "/roots/odd-paths");
        size_t n = 0;

        for (size_t i = 0; i < s->table->n_entries; i++)
                if (s->overmounted[i]) {
                        ASSERT_STREQ(s->table->entries[i].mount_point, "/mnt/stack");
                        ASSERT_EQ(s->table->entries[i].mount_id, 51);
                        n++;
                }
        ASSERT_EQ(n, 1U);
        ASSERT_TRUE(find_sb(s, 0, 60)->all_read_only);
}

TEST(load_fixture_root) {
        _cleanup_close_ int root_fd = open(FIXTURES_DIR "/roots/laptop", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int dbg = -EBADF;
        _cleanup_(sample_freep) Sample *s = NULL;
        SampleSources src;
        const Superblock *root;

        ASSERT_TRUE(root_fd >= 0);
        dbg = openat(root_fd, "debugfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(dbg >= 0);
        src = (SampleSources) { .root_fd = root_fd, .sysfs_root = FIXTURES_DIR "/sysfs/laptop", .debugfs_fd = dbg };
        ASSERT_OK(sample_load(&src, &s));
        ASSERT_TRUE(s->has_meminfo && s->has_debugfs);
        ASSERT_U64_EQ(s->meminfo.dirty_bytes, 14880ULL * 1024);
        root = find_sb(s, 259, 2);
        ASSERT_TRUE(root);
        ASSERT_STREQ(root->device.bdi_name, "259:0");
        ASSERT_TRUE(root->has_bdi_stats);
        ASSERT_U64_EQ(root->bdi.value[BDI_STAT_RECLAIMABLE], 14336ULL * 1024);
        /* The EFI partition is on the same disk: same group. */
        ASSERT_STREQ(root->group, find_sb(s, 259, 1)->group);
}

TEST(degraded_root) {
        _cleanup_close_ int root_fd = open(FIXTURES_DIR "/roots/degraded", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_(sample_freep) Sample *s = NULL;
        SampleSources src = { .root_fd = root_fd, .sysfs_root = "/nonexistent", .debugfs_fd = -EBADF };

        ASSERT_TRUE(root_fd >= 0);
        ASSERT_OK(sample_load(&src, &s));
        ASSERT_TRUE(!s->has_meminfo);
        ASSERT_TRUE(!s->has_debugfs);
        for (size_t k = 0; k < s->n_sbs; k++) {
                ASSERT_TRUE(!s->sbs[k].has_bdi_stats);
                ASSERT_TRUE(!s->sbs[k].device.classified);
        }
}

TEST(container_host_1000) {
        usec_t t0 = now(CLOCK_MONOTONIC);
        _cleanup_(sample_freep) Sample *s = build(FIXTURES_DIR "/roots/container-host-1000");

        fprintf(stderr, "read+sample of %zu mounts: %llu us (informational)\n", s->table->n_entries,
                (unsigned long long) (now(CLOCK_MONOTONIC) - t0));
        ASSERT_EQ(s->table->n_entries, 1000U);
        ASSERT_TRUE(s->n_sbs > 0 && s->n_sbs <= 1000U);
}

int main(void) {
        RUN(laptop_superblocks);
        RUN(overmounted);
        RUN(load_fixture_root);
        RUN(degraded_root);
        RUN(container_host_1000);
        return 0;
}
