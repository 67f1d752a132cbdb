/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "progress.h"
#include "shared/macro.h"
#include "tests.h"
#include "wrap-bounded-child.h"

TEST(parse_block_stat) {
        uint64_t v = 7, in_flight = 0;

        /* kernel 6.18, 17 fields: completion fields 1 3 5 7 12 14 16 = 1+3+5+7+12+14+16 */
        ASSERT_OK(progress_parse_block_stat("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", &v, &in_flight));
        ASSERT_U64_EQ(v, 58);
        ASSERT_U64_EQ(in_flight, 9); /* what the device holds: told apart */
        /* in-flight (9), io_ticks (10), time_in_queue (11) move while a device is stuck: ignored */
        ASSERT_OK(progress_parse_block_stat("1 2 3 4 5 6 7 8 999 999 999 12 13 14 15 16 17", &v, NULL));
        ASSERT_U64_EQ(v, 58);
        /* old kernels: 11 fields (no discard, no flush) */
        ASSERT_OK(progress_parse_block_stat("    1    0    3    0    5    0    7    0    0    0    0\n", &v,
                                            NULL));
        ASSERT_U64_EQ(v, 16);
        v = 7;
        ASSERT_ERR(progress_parse_block_stat("1 2 3\n", &v, NULL), EBADMSG);
        ASSERT_ERR(progress_parse_block_stat("", &v, NULL), EBADMSG);
        ASSERT_ERR(progress_parse_block_stat("1 2 3 4 5 6 7 8 9 10 x\n", &v, NULL), EBADMSG);
        ASSERT_ERR(progress_parse_block_stat("99999999999999999999999 2 3 4 5 6 7 8 9 10 11\n", &v, NULL),
                   EBADMSG);
        ASSERT_ERR(progress_parse_block_stat(NULL, &v, NULL), EINVAL);
        ASSERT_U64_EQ(v, 7); /* untouched on failure */
}

static void put(int dir_fd, const char *path, const char *text) {
        _cleanup_close_ int fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, text, strlen(text)), (ssize_t) strlen(text));
}

/* test_mkdtemp(root), then each directory of the NULL-terminated list below it, in order; its fd. */
static int fixture(char *root, ...) {
        va_list ap;
        int fd;

        ASSERT_TRUE(test_mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        va_start(ap, root);
        for (const char *d; (d = va_arg(ap, const char *));)
                ASSERT_OK(mkdirat(fd, d, 0755));
        va_end(ap);
        return fd;
}

TEST(read_fixture) {
        char root[] = "/tmp/test-progress.XXXXXX";
        _cleanup_close_ int fd = -EBADF;
        dev_t leaves[2] = { makedev(7, 1), makedev(8, 0) };
        ProgressProbe p;
        uint64_t v = 0;
        bool held = false;

        fd = fixture(root, "dev", "dev/block", "dev/block/7:1", "dev/block/7:1/queue", "dev/block/8:0",
                     "dev/block/8:0/queue", NULL);
        put(fd, "dev/block/7:1/stat", "1 0 1 0 1 0 1 0 4 9 9 0 0 0 0 1 0\n");
        put(fd, "dev/block/7:1/queue/iostats", "1\n");
        put(fd, "dev/block/8:0/stat", "100 0 100 0 100 0 100 0 0 0 0 0 0 0 0 100 0\n");
        put(fd, "dev/block/8:0/queue/iostats", "0\n");

        p = (ProgressProbe) { .sysfs_fd = fd, .debugfs_fd = -EBADF, .leaves = leaves, .n_leaves = 2 };
        /* held: 7:1 has 4 requests in flight; 8:0 alone holds none */
        ASSERT_OK(progress_read(&p, &v, &held));
        ASSERT_TRUE(held);
        p.leaves = leaves + 1;
        p.n_leaves = 1;
        ASSERT_OK(progress_read(&p, &v, &held));
        ASSERT_TRUE(!held);
        ASSERT_U64_EQ(v, 500);
        p.leaves = leaves;
        p.n_leaves = 2;
        /* queue/iostats is never read here (its lock may be held by a stuck task: review, stop 27);
         * whether frozen counters are evidence is the worker's report (executor: hung_needs_accounting) */
        ASSERT_OK(progress_read(&p, &v, NULL));
        ASSERT_U64_EQ(v, 505);
        ASSERT_TRUE(unlinkat(fd, "dev/block/8:0/queue/iostats", 0) == 0);
        ASSERT_OK(progress_read(&p, &v, NULL));
        ASSERT_U64_EQ(v, 505);
        /* a leaf whose counters cannot be read: no evidence either */
        ASSERT_TRUE(unlinkat(fd, "dev/block/8:0/stat", 0) == 0);
        ASSERT_ERR(progress_read(&p, &v, NULL), ENODATA);
        p.n_leaves = 1; /* 7:1 alone is evidence */
        ASSERT_OK(progress_read(&p, &v, NULL));
        ASSERT_U64_EQ(v, 5);
        p.n_leaves = 2;
        put(fd, "dev/block/8:0/stat", "100 0 100 0 100 0 100 0 0 0 0 0 0 0 0 100 0\n");
        /* leaves but no sysfs to read them from */
        p.sysfs_fd = -EBADF;
        ASSERT_ERR(progress_read(&p, &v, NULL), ENODATA);
        p.sysfs_fd = fd;
        /* no leaves and no bdi: no evidence at all */
        p.n_leaves = 0;
        ASSERT_ERR(progress_read(&p, &v, NULL), ENODATA);
        ASSERT_ERR(progress_read(NULL, &v, NULL), ENODATA);

        char cmd[64];
        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

TEST(busy_needed) {
        /* field 9 counts a pending preflush from 6.10 on (7be835694dae) */
        ASSERT_TRUE(progress_busy_needed("6.1.0-28-amd64"));
        ASSERT_TRUE(progress_busy_needed("6.9.12"));
        ASSERT_TRUE(progress_busy_needed("5.10.0-33-amd64"));
        ASSERT_TRUE(progress_busy_needed("4.19.0"));
        ASSERT_TRUE(!progress_busy_needed("6.10.0"));
        ASSERT_TRUE(!progress_busy_needed("6.18.44"));
        ASSERT_TRUE(!progress_busy_needed("7.0-rc1"));
        /* unknown: field 9 alone, no debugfs read that might wait */
        ASSERT_TRUE(!progress_busy_needed(NULL));
        ASSERT_TRUE(!progress_busy_needed(""));
        ASSERT_TRUE(!progress_busy_needed("linux"));
        ASSERT_TRUE(!progress_busy_needed("6"));
}

/* n reads of p; whether the last one said held */
static bool reads(const ProgressProbe *p, unsigned n) {
        uint64_t v;
        bool held = false;

        for (unsigned i = 0; i < n; i++) {
                /* The budget is tested on its own: a fork can be slow on a loaded machine. */
                if (p->busy)
                        p->busy->spent = 0;
                ASSERT_OK(progress_read(p, &v, &held));
        }
        return held;
}

#define FLUSH_A \
        "000000003e0b8a6e {.op=FLUSH, .cmd_flags=, .rq_flags=FLUSH_SEQ|MQ_INFLIGHT, .state=in_flight, .tag=12}\n"
#define FLUSH_B \
        "00000000deadbeef {.op=FLUSH, .cmd_flags=, .rq_flags=FLUSH_SEQ|MQ_INFLIGHT, .state=in_flight, .tag=12}\n"

/* A kernel before 6.10: field 9 shows 0 while the driver holds a flush request; debugfs busy shows
 * it. Asked at the 1st, 2nd, 4th, 8th ... quiet read; held when one request is seen at two asks. */
TEST(busy_fallback) {
        char root[] = "/tmp/test-progress.XXXXXX";
        _cleanup_close_ int fd = -EBADF, sys = -EBADF, dbg = -EBADF;
        dev_t leaves[2] = { makedev(7, 3), makedev(8, 0) };
        ProgressMemo memo = {};
        ProgressBusy busy = {};
        ProgressProbe p;
        uint64_t v = 0;
        bool held;

        fd = fixture(root, "sys", "sys/dev", "sys/dev/block", "sys/devices", "sys/devices/loop3",
                     "sys/devices/sda", "dbg", "dbg/block", "dbg/block/loop3", "dbg/block/loop3/hctx0",
                     "dbg/block/loop3/hctx1", "dbg/block/sda", "dbg/block/sda/hctx0", NULL);
        ASSERT_OK(symlinkat("../../devices/loop3", fd, "sys/dev/block/7:3"));
        ASSERT_OK(symlinkat("../../devices/sda", fd, "sys/dev/block/8:0"));
        put(fd, "sys/devices/loop3/stat", "1 0 1 0 1 0 1 0 0 9 9 0 0 0 0 1 0\n");
        put(fd, "sys/devices/sda/stat", "1 0 1 0 1 0 1 0 0 9 9 0 0 0 0 1 0\n");
        put(fd, "dbg/block/loop3/hctx0/busy", "");
        put(fd, "dbg/block/loop3/hctx1/busy", "");
        put(fd, "dbg/block/sda/hctx0/busy", "");
        sys = openat(fd, "sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        dbg = openat(fd, "dbg", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(sys >= 0 && dbg >= 0);

        p = (ProgressProbe) { .sysfs_fd = sys,
                              .debugfs_fd = dbg,
                              .leaves = leaves,
                              .n_leaves = 2,
                              .memo = &memo,
                              .busy = &busy };
        /* control: nothing in flight, nothing busy, however long the spell */
        ASSERT_TRUE(!reads(&p, 1));
        ASSERT_U64_EQ(memo.sum, 10);
        ASSERT_TRUE(!reads(&p, 9));
        /* the flush request on the second hardware queue of the first leaf, from a completion on */
        put(fd, "sys/devices/sda/stat", "2 0 1 0 1 0 1 0 0 9 9 0 0 0 0 1 0\n");
        put(fd, "dbg/block/loop3/hctx1/busy", FLUSH_A);
        ASSERT_TRUE(!reads(&p, 1)); /* a completion: a new spell, nothing asked */
        ASSERT_TRUE(!reads(&p, 1)); /* 1st quiet read: seen once, could be a stale tag entry */
        ASSERT_TRUE(reads(&p, 1));  /* 2nd: the same request again */
        ASSERT_OK(progress_read(&p, &v, NULL));
        ASSERT_U64_EQ(v, 11); /* the counters are the same with or without it */
        /* a yes is kept while nothing completes (not asked again) ... */
        put(fd, "dbg/block/loop3/hctx1/busy", "");
        ASSERT_TRUE(reads(&p, 3));
        /* ... and ends with the spell, even at a read that did not ask for held */
        put(fd, "sys/devices/sda/stat", "3 0 1 0 1 0 1 0 0 9 9 0 0 0 0 1 0\n");
        ASSERT_OK(progress_read(&p, &v, NULL));
        ASSERT_TRUE(!memo.held);
        /* two different requests at two asks: not one request held across them */
        put(fd, "dbg/block/loop3/hctx1/busy", FLUSH_A);
        ASSERT_TRUE(!reads(&p, 1));
        put(fd, "dbg/block/loop3/hctx1/busy", FLUSH_B);
        ASSERT_TRUE(!reads(&p, 1));
        /* asked again at the 4th quiet read only: B seen at the 2nd and 4th */
        ASSERT_TRUE(!reads(&p, 1));
        ASSERT_TRUE(reads(&p, 1));
        /* negative control: a kernel whose field 9 counts the flush is not asked */
        p.memo = NULL;
        ASSERT_TRUE(!reads(&p, 4));
        p.memo = &memo;
        memo = (ProgressMemo) {};
        /* only the other leaf is probed: its busy file is empty */
        p.leaves = leaves + 1;
        p.n_leaves = 1;
        ASSERT_TRUE(!reads(&p, 5));
        p.leaves = leaves;
        p.n_leaves = 2;
        memo = (ProgressMemo) {};
        /* no debugfs, or no blk-mq directory for the disk: no evidence of a held request */
        p.debugfs_fd = -EBADF;
        ASSERT_TRUE(!reads(&p, 5));
        p.debugfs_fd = dbg;
        memo = (ProgressMemo) {};
        ASSERT_TRUE(renameat(fd, "dbg/block/loop3", fd, "dbg/block/loop9") == 0);
        ASSERT_TRUE(!reads(&p, 5));
        ASSERT_TRUE(renameat(fd, "dbg/block/loop9", fd, "dbg/block/loop3") == 0);
        memo = (ProgressMemo) {};
        ASSERT_TRUE(reads(&p, 3));
        memo = (ProgressMemo) {};
        /* a sysfs whose dev/block entry is not a link (a fixture of another shape): no */
        ASSERT_TRUE(unlinkat(fd, "sys/dev/block/7:3", 0) == 0);
        ASSERT_OK(mkdirat(fd, "sys/dev/block/7:3", 0755));
        put(fd, "sys/dev/block/7:3/stat", "1 0 1 0 1 0 1 0 0 9 9 0 0 0 0 1 0\n");
        ASSERT_TRUE(!reads(&p, 5));
        /* field 9 alone still says held, busy or not */
        put(fd, "sys/dev/block/7:3/stat", "1 0 1 0 1 0 1 0 2 9 9 0 0 0 0 1 0\n");
        ASSERT_TRUE(reads(&p, 1));
        ASSERT_TRUE(unlinkat(fd, "sys/dev/block/7:3/stat", 0) == 0);
        ASSERT_TRUE(unlinkat(fd, "sys/dev/block/7:3", AT_REMOVEDIR) == 0);
        ASSERT_OK(symlinkat("../../devices/loop3", fd, "sys/dev/block/7:3"));

        /* busy_only (this path tested on 6.10+): field 9 is not read for held I/O, the busy files are */
        put(fd, "sys/devices/loop3/stat", "1 0 1 0 1 0 1 0 3 9 9 0 0 0 0 1 0\n");
        put(fd, "dbg/block/loop3/hctx1/busy", "");
        memo = (ProgressMemo) {};
        ASSERT_TRUE(reads(&p, 1)); /* control: field 9 says held */
        p.busy_only = true;
        memo = (ProgressMemo) {};
        ASSERT_TRUE(!reads(&p, 5));
        put(fd, "dbg/block/loop3/hctx1/busy", FLUSH_B);
        memo = (ProgressMemo) {};
        ASSERT_TRUE(reads(&p, 3));
        p.busy_only = false;
        put(fd, "sys/devices/loop3/stat", "1 0 1 0 1 0 1 0 0 9 9 0 0 0 0 1 0\n");

        /* only flush requests count, by a hexadecimal address: a passthrough command seen at two
         * asks moves no counter either, and "(____ptrval____)" is every request's address early on */
        put(fd, "dbg/block/loop3/hctx1/busy",
            "00000000deadbeef {.op=DRV_IN, .cmd_flags=, .state=in_flight}\n");
        memo = (ProgressMemo) {};
        ASSERT_TRUE(!reads(&p, 9));
        put(fd, "dbg/block/loop3/hctx1/busy",
            "(____ptrval____) {.op=FLUSH, .cmd_flags=, .state=in_flight}\n");
        memo = (ProgressMemo) {};
        ASSERT_TRUE(!reads(&p, 9));
        /* several lines and files: the flush is found among other requests */
        put(fd, "dbg/block/loop3/hctx0/busy",
            "0000000011111111 {.op=WRITE, .cmd_flags=SYNC, .state=in_flight}\n"
            "0000000022222222 {.op=READ, .state=in_flight}\n");
        put(fd, "dbg/block/loop3/hctx1/busy", "0000000033333333 {.op=WRITE, .state=in_flight}\n" FLUSH_B);
        memo = (ProgressMemo) {};
        ASSERT_TRUE(reads(&p, 3));
        put(fd, "dbg/block/loop3/hctx0/busy", "");

        /* the asks' cost: past PROGRESS_BUSY_BUDGET in a pass, no more asks in it */
        memo = (ProgressMemo) {};
        ASSERT_OK(progress_read(&p, &v, &held)); /* the spell's first read */
        busy.spent = PROGRESS_BUSY_BUDGET - 1;
        ASSERT_OK(progress_read(&p, &v, &held)); /* the 1st quiet read asks, and its cost ends the budget */
        ASSERT_TRUE(!held);
        ASSERT_TRUE(busy.off);
        ASSERT_TRUE(!reads(&p, 7)); /* the 2nd and 4th do not ask */
        busy = (ProgressBusy) {};   /* the next pass asks again */
        memo = (ProgressMemo) {};
        ASSERT_TRUE(reads(&p, 3));

        /* a busy read that blocks, a FIFO nobody writes. The child is killed after
         * PROGRESS_BUSY_TIMEOUT: no, and no more asks in this pass, even where the files would now
         * say yes. */
        memo = (ProgressMemo) {};
        ASSERT_TRUE(reads(&p, 3)); /* control: the fixture says yes */
        ASSERT_TRUE(unlinkat(fd, "dbg/block/loop3/hctx0/busy", 0) == 0);
        ASSERT_OK(mkfifoat(fd, "dbg/block/loop3/hctx0/busy", 0600));
        memo = (ProgressMemo) {};
        wrap_bounded_child_timeout = 0; /* the caller's own, for this read alone (review AG, F4) */
        ASSERT_TRUE(!reads(&p, 3));
        wrap_bounded_child_timeout = 30 * USEC_PER_SEC;
        ASSERT_TRUE(unlinkat(fd, "dbg/block/loop3/hctx0/busy", 0) == 0);
        put(fd, "dbg/block/loop3/hctx0/busy", FLUSH_A);
        memo = (ProgressMemo) {};
        ASSERT_TRUE(!reads(&p, 9));
        ASSERT_TRUE(busy.off);
        busy = (ProgressBusy) {};
        memo = (ProgressMemo) {};
        ASSERT_TRUE(reads(&p, 3));

        char cmd[64];
        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

int main(void) {
        /* What an answer means, not how fast a fork runs here: the timeout itself is tested with
         * the caller's own (busy_fallback's FIFO). */
        wrap_bounded_child_timeout = 30 * USEC_PER_SEC;
        RUN(parse_block_stat);
        RUN(read_fixture);
        RUN(busy_needed);
        RUN(busy_fallback);
        return 0;
}
