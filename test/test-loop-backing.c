/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "loop-backing.h"
#include "shared/devnum-util.h"
#include "shared/macro.h"
#include "tests.h"

static char test_root[] = "/tmp/test-loop-backing.XXXXXX";

static void make_nodes(void) {
        char p[sizeof(test_root) + 16];
        int fd;

        snprintf(p, sizeof p, "%s/dev", test_root);
        ASSERT_TRUE(mkdir(p, 0755) == 0);
        snprintf(p, sizeof p, "%s/dev/file", test_root);
        ASSERT_TRUE((fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0);
        close(fd);
        snprintf(p, sizeof p, "%s/dev/fifo", test_root);
        ASSERT_TRUE(mkfifo(p, 0600) == 0);
        snprintf(p, sizeof p, "%s/dev/link", test_root);
        ASSERT_TRUE(symlink("/dev/loop0", p) == 0);
}

/* What is not the loop device asked for is never taken for it; a node that blocks costs the bound,
 * and what was answered before it still counts. The same answers whether the parent may look for
 * missing nodes itself (a /dev in memory) or leaves everything to the child. */
TEST(fixture_nodes) {
        for (int in_memory = 0; in_memory <= 1; in_memory++) {
                LoopBackingQuery q[] = {
                        { .loop = makedev(7, 1), .name = "file" },    /* a regular file */
                        { .loop = makedev(7, 2), .name = "missing" }, /* no such node */
                        { .loop = makedev(7, 3), .name = "a/b" },     /* not one path component */
                        { .loop = makedev(7, 4), .name = ".." },      { .loop = makedev(7, 5), .name = NULL },
                        { .loop = makedev(7, 6), .name = "link" }, /* a symlink to a block device */
                        { .loop = makedev(7, 7), .name = "fifo" }, /* open() blocks: no writer */
                        { .loop = makedev(7, 8), .name = "file" }, /* after it: never asked */
                };
                int fd;

                ASSERT_TRUE((fd = open(test_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0);
                ASSERT_OK(loop_backing_query(fd, in_memory, q, ELEMENTSOF(q), 300 * USEC_PER_MSEC));
                ASSERT_EQ(q[0].error, -ENOTBLK);
                ASSERT_EQ(q[1].error, -ENOENT);
                ASSERT_EQ(q[2].error, -EINVAL);
                ASSERT_EQ(q[3].error, -EINVAL);
                ASSERT_EQ(q[4].error, -EINVAL);
                ASSERT_EQ(q[5].error, -ELOOP);
                ASSERT_EQ(q[6].error, -ETIMEDOUT);
                ASSERT_EQ(q[7].error, -ETIMEDOUT);
                close(fd);
        }
}

/* The real /dev: a character device is not a block device. A root without dev/: every query gets
 * why, whoever looks. Bounds. */
TEST(dev_and_bounds) {
        LoopBackingQuery q[] = { { .loop = makedev(1, 3), .name = "null" } };
        LoopBackingQuery many[LOOP_BACKING_QUERY_MAX + 1] = {};
        int fd;

        ASSERT_TRUE((fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0);
        ASSERT_OK(loop_backing_query(fd, false, q, 1, USEC_PER_SEC));
        ASSERT_EQ(q[0].error, -ENOTBLK);
        ASSERT_OK(loop_backing_query(fd, true, q, 1, USEC_PER_SEC));
        ASSERT_EQ(q[0].error, -ENOTBLK);
        ASSERT_ERR(loop_backing_query(fd, false, many, ELEMENTSOF(many), USEC_PER_SEC), E2BIG);
        ASSERT_OK(loop_backing_query(fd, false, many, 0, USEC_PER_SEC));
        close(fd);
        ASSERT_TRUE((fd = open("/proc/self/fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0);
        for (int in_memory = 0; in_memory <= 1; in_memory++) {
                ASSERT_OK(loop_backing_query(fd, in_memory, q, 1, USEC_PER_SEC));
                ASSERT_EQ(q[0].error, -ENOENT);
        }
        close(fd);
}

/* The parent's side of the pipe: records arrive in pieces, in order, each applied once; one out of
 * order or with a positive error ends the run as malformed. */
TEST(feed) {
        LoopBackingQuery q[3] = {};
        size_t ask[] = { 2, 0 }; /* q[1] was answered without the child */
        LoopBackingRecord rec[2] = {
                { .index = 0, .error = 0, .dev = makedev(254, 1), .ino = 12, .rdev = 0 },
                { .index = 1, .error = -ENOENT },
        };
        LoopBackingRun x = { .q = q, .ask = ask, .n_ask = 2 };
        const char *buf = (const char *) rec;

        q[0].error = q[2].error = -ETIMEDOUT;
        ASSERT_EQ(loop_backing_feed(buf, sizeof rec[0] - 1, &x), 0); /* half a record: wait */
        ASSERT_EQ(x.done, 0U);
        ASSERT_EQ(loop_backing_feed(buf, sizeof rec[0] + 3, &x), 0); /* one, and a piece */
        ASSERT_EQ(x.done, 1U);
        ASSERT_EQ(q[2].error, 0);
        ASSERT_TRUE(q[2].backing_dev == makedev(254, 1) && q[2].backing_ino == 12 && q[2].backing_rdev == 0);
        ASSERT_EQ(q[0].error, -ETIMEDOUT);
        ASSERT_EQ(loop_backing_feed(buf, 2 * sizeof rec[0], &x), 1); /* complete */
        ASSERT_EQ(q[0].error, -ENOENT);
        ASSERT_TRUE(q[0].backing_dev == 0);

        /* out of order: the second record claims index 0 again */
        x = (LoopBackingRun) { .q = q, .ask = ask, .n_ask = 2 };
        rec[1].index = 0;
        ASSERT_EQ(loop_backing_feed(buf, 2 * sizeof rec[0], &x), -EBADMSG);
        /* a positive error */
        x = (LoopBackingRun) { .q = q, .ask = ask, .n_ask = 2 };
        rec[1] = (LoopBackingRecord) { .index = 1, .error = EIO };
        ASSERT_EQ(loop_backing_feed(buf, 2 * sizeof rec[0], &x), -EBADMSG);
        /* the control: the same two records, well formed */
        x = (LoopBackingRun) { .q = q, .ask = ask, .n_ask = 2 };
        rec[1].error = -EIO;
        ASSERT_EQ(loop_backing_feed(buf, 2 * sizeof rec[0], &x), 1);
        ASSERT_EQ(q[0].error, -EIO);
}

/* test-loop-backing --query MAJ:MIN NAME: the answer for a node of the real /dev, for
 * integration/device-loop.sh ("dev=MAJ:MIN ino=N rdev=MAJ:MIN" or "error=ERRNO"). */
static int query(const char *devnum, const char *name) {
        LoopBackingQuery q = { .name = name };
        int fd, r;

        if (parse_devnum(devnum, &q.loop) < 0)
                return fprintf(stderr, "bad MAJ:MIN '%s'\n", devnum), 2;
        fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = loop_backing_query(fd, true, &q, 1, 5 * USEC_PER_SEC);
        if (r < 0)
                return fprintf(stderr, "query: %s\n", strerror(-r)), 1;
        if (q.error < 0)
                printf("error=%d\n", -q.error);
        else
                printf("dev=%u:%u ino=%llu rdev=%u:%u\n", major(q.backing_dev), minor(q.backing_dev),
                       (unsigned long long) q.backing_ino, major(q.backing_rdev), minor(q.backing_rdev));
        return 0;
}

int main(int argc, char **argv) {
        char cmd[sizeof(test_root) + 16];

        if (argc == 4 && streq(argv[1], "--query"))
                return query(argv[2], argv[3]);
        ASSERT_TRUE(test_mkdtemp(test_root));
        make_nodes();
        RUN(fixture_nodes);
        RUN(dev_and_bounds);
        RUN(feed);
        snprintf(cmd, sizeof cmd, "rm -rf %s", test_root);
        return system(cmd) == 0 ? 0 : 1;
}
