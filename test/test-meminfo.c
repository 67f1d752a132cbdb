/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <unistd.h>

#include "meminfo.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "tests.h"

static int parse_fixture(const char *name, Meminfo *ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        char path[256];

        fd = open(FIXTURES_DIR "/meminfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        snprintf(path, sizeof(path), "%s.meminfo", name);
        ASSERT_OK(read_full_file_at(fd, path, 1 << 20, &buf, NULL));
        return meminfo_parse(buf, ret);
}

TEST(real) {
        Meminfo m;

        ASSERT_OK(parse_fixture("real-kernel-6.18", &m));
        ASSERT_TRUE(m.has_dirty);
        ASSERT_TRUE(m.has_writeback);
        ASSERT_U64_EQ(m.dirty_bytes, 292 * 1024);
        ASSERT_U64_EQ(m.writeback_bytes, 0);
        ASSERT_U64_EQ(m.nfs_unstable_bytes, 0); /* 6.18 still prints "NFS_Unstable: 0 kB" */
        ASSERT_TRUE(m.has_writeback_tmp);       /* "WritebackTmp: 0 kB" (evidence.h) */
        ASSERT_U64_EQ(m.writeback_tmp_bytes, 0);
}

TEST(writeback_tmp) {
        Meminfo m;

        ASSERT_OK(meminfo_parse("Dirty: 1 kB\nWriteback: 2 kB\nWritebackTmp: 3 kB\n", &m));
        ASSERT_TRUE(m.has_writeback_tmp);
        ASSERT_U64_EQ(m.writeback_tmp_bytes, 3 * 1024);
        /* Not confused with Writeback, either way round; absent or garbled: not present. */
        ASSERT_OK(meminfo_parse("WritebackTmp: 3 kB\nWriteback: 2 kB\n", &m));
        ASSERT_U64_EQ(m.writeback_bytes, 2 * 1024);
        ASSERT_OK(meminfo_parse("Dirty: 1 kB\nWritebackTmp: x kB\n", &m));
        ASSERT_TRUE(!m.has_writeback_tmp);
}

TEST(nfs_unstable) {
        Meminfo m;

        ASSERT_OK(parse_fixture("kernel-5.4-nfs-unstable", &m));
        ASSERT_U64_EQ(m.dirty_bytes, 2048 * 1024);
        ASSERT_U64_EQ(m.writeback_bytes, 12 * 1024);
        ASSERT_U64_EQ(m.nfs_unstable_bytes, 340 * 1024);
}

TEST(missing_writeback) {
        Meminfo m;

        ASSERT_OK(parse_fixture("missing-writeback", &m));
        ASSERT_TRUE(m.has_dirty);
        ASSERT_TRUE(!m.has_writeback);
        ASSERT_U64_EQ(m.dirty_bytes, 1234 * 1024);
        ASSERT_U64_EQ(m.writeback_bytes, 0);
}

TEST(garbage) {
        Meminfo m;

        /* Invalid values are skipped, later valid lines of the same key are used; WritebackTmp is
         * not Writeback. */
        ASSERT_OK(parse_fixture("garbage", &m));
        ASSERT_TRUE(m.has_dirty);
        ASSERT_TRUE(m.has_writeback);
        ASSERT_U64_EQ(m.dirty_bytes, 77 * 1024);
        ASSERT_U64_EQ(m.writeback_bytes, 8 * 1024);
        ASSERT_U64_EQ(m.nfs_unstable_bytes, 0);
}

TEST(neither) {
        Meminfo m = { .dirty_bytes = 4242 };

        ASSERT_ERR(parse_fixture("neither", &m), EBADMSG);
        ASSERT_U64_EQ(m.dirty_bytes, 4242); /* untouched on failure */
        ASSERT_ERR(meminfo_parse("", &m), EBADMSG);
        ASSERT_ERR(meminfo_parse(NULL, &m), EINVAL);
}

TEST(overflow) {
        Meminfo m;

        ASSERT_OK(parse_fixture("overflow", &m));
        ASSERT_TRUE(!m.has_dirty); /* 2^54 kB does not fit in bytes */
        ASSERT_TRUE(m.has_writeback);
        ASSERT_U64_EQ(m.writeback_bytes, UINT64_MAX - 1023);
}

TEST(inline_strings) {
        Meminfo m;

        ASSERT_OK(meminfo_parse("Dirty: 1 kB", &m)); /* no final newline */
        ASSERT_U64_EQ(m.dirty_bytes, 1024);
        ASSERT_TRUE(!m.has_writeback);
        ASSERT_OK(meminfo_parse("Writeback:\t5 kB\r\n", &m));
        ASSERT_U64_EQ(m.writeback_bytes, 5120);
        ASSERT_ERR(meminfo_parse("Dirty: 1 kBx\n", &m), EBADMSG);
        ASSERT_ERR(meminfo_parse("Dirty: 1\n", &m), EBADMSG);
        ASSERT_ERR(meminfo_parse(" Dirty: 1 kB\n", &m), EBADMSG);
        ASSERT_ERR(meminfo_parse("Dirty: +1 kB\n", &m), EBADMSG);
}

TEST(load) {
        _cleanup_close_ int laptop = -EBADF, degraded = -EBADF, root = -EBADF;
        Meminfo m;

        laptop = open(FIXTURES_DIR "/roots/laptop", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(laptop >= 0);
        ASSERT_OK(meminfo_load(laptop, &m));
        ASSERT_U64_EQ(m.dirty_bytes, 14880 * 1024);
        ASSERT_U64_EQ(m.writeback_bytes, 0);

        degraded = open(FIXTURES_DIR "/roots/degraded", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(degraded >= 0);
        ASSERT_ERR(meminfo_load(degraded, &m), ENOENT);

        root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_OK(meminfo_load(root, &m));
        ASSERT_TRUE(m.has_dirty && m.has_writeback);
}

TEST(drift) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF, root = -EBADF, degraded = -EBADF;
        uint64_t pages = 0, bytes = 0;

        /* This kernel's: one node, its populated zones (DMA, DMA32, Normal) each listing CPUs 0 and 1;
         * Movable and Device, unpopulated, none. */
        fd = open(FIXTURES_DIR "/meminfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(read_full_file_at(fd, "real-kernel-6.18.zoneinfo", 1 << 20, &buf, NULL));
        ASSERT_OK(meminfo_drift_parse(buf, &pages));
        ASSERT_U64_EQ(pages, 2 * VMSTAT_THRESHOLD_MAX);

        /* Two nodes: CPUs counted per node (the most of its zones), then summed. */
        ASSERT_OK(meminfo_drift_parse("Node 0, zone DMA32\n  pagesets\n    cpu: 0\n    cpu: 1\n"
                                      "Node 0, zone Normal\n  pagesets\n    cpu: 0\n    cpu: 1\n    cpu: 2\n"
                                      "Node 0, zone Movable\n"
                                      "Node 1, zone Normal\n  pagesets\n    cpu: 0\n    cpu: 1\n    cpu: 2\n"
                                      "    cpu: 3\n",
                                      &pages));
        ASSERT_U64_EQ(pages, (3 + 4) * VMSTAT_THRESHOLD_MAX);
        /* A "cpu:" before any node, no CPU at all, nothing: no bound. */
        ASSERT_ERR(meminfo_drift_parse("    cpu: 0\n", &pages), EBADMSG);
        ASSERT_ERR(meminfo_drift_parse("Node 0, zone   Movable\n  pages free     0\n", &pages), EBADMSG);
        ASSERT_ERR(meminfo_drift_parse("", &pages), EBADMSG);
        ASSERT_ERR(meminfo_drift_parse(NULL, &pages), EINVAL);

        /* Loaded in bytes; a root without it. */
        root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_OK(meminfo_drift_load(root, &bytes));
        ASSERT_TRUE(bytes >= VMSTAT_THRESHOLD_MAX * (uint64_t) sysconf(_SC_PAGESIZE));
        ASSERT_TRUE(bytes % (VMSTAT_THRESHOLD_MAX * (uint64_t) sysconf(_SC_PAGESIZE)) == 0);
        degraded = open(FIXTURES_DIR "/roots/degraded", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(degraded >= 0);
        ASSERT_ERR(meminfo_drift_load(degraded, &bytes), ENOENT);
}

int main(void) {
        RUN(real);
        RUN(writeback_tmp);
        RUN(nfs_unstable);
        RUN(missing_writeback);
        RUN(garbage);
        RUN(neither);
        RUN(overflow);
        RUN(inline_strings);
        RUN(load);
        RUN(drift);
        return 0;
}
