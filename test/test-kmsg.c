/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/kmsg: the kernel's suspend sync as its log tells it.
 */

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "kmsg.h"
#include "shared/macro.h"
#include "tests.h"

static KernelSync parse(const char *s) {
        return kmsg_last_sleep_sync(s, strlen(s));
}

TEST(parse) {
        KernelSync k;

        k = parse("6,1,10,-;PM: suspend entry (deep)\n6,2,11,-;Filesystems sync: 1.234 seconds\n");
        ASSERT_EQ(k.state, KERNEL_SYNC_DONE);
        ASSERT_U64_EQ(k.usec, 1234 * USEC_PER_MSEC);
        ASSERT_STREQ(k.action, "suspend");

        /* older kernels: with the PM: prefix */
        k = parse("6,1,10,-;PM: suspend entry (deep)\n6,2,11,-;PM: Filesystems sync: 0.004 seconds\n");
        ASSERT_EQ(k.state, KERNEL_SYNC_DONE);
        ASSERT_U64_EQ(k.usec, 4 * USEC_PER_MSEC);

        /* sync_on_suspend = 0: the freezer starts without a sync */
        k = parse("6,1,10,-;PM: suspend entry (s2idle)\n6,2,11,-;Freezing user space processes\n");
        ASSERT_EQ(k.state, KERNEL_SYNC_SKIPPED);

        /* a sync line outside a sleep entry (e.g. /sys/power/state written by hand earlier) */
        k = parse("6,2,11,-;Filesystems sync: 9.000 seconds\n");
        ASSERT_EQ(k.state, KERNEL_SYNC_UNKNOWN);
        ASSERT_STREQ(k.action, "");

        k = parse("6,1,10,-;PM: hibernation: hibernation entry\n6,2,11,-;Filesystems sync: 0.500 seconds\n");
        ASSERT_EQ(k.state, KERNEL_SYNC_DONE);
        ASSERT_STREQ(k.action, "hibernation");

        /* garbage, continuation lines, a malformed number */
        k = parse(
                "garbage\n SUBSYSTEM=x\n6,1,10,-;PM: suspend entry\n6,2,11,-;Filesystems sync: 1.2 seconds\n");
        ASSERT_EQ(k.state, KERNEL_SYNC_UNKNOWN);
        ASSERT_STREQ(k.action, "suspend");
        k = parse("");
        ASSERT_EQ(k.state, KERNEL_SYNC_UNKNOWN);
}

TEST(fixture_last_sleep) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        char root[] = "/tmp/test-kmsg.XXXXXX", path[256];
        size_t size;
        KernelSync k;

        /* the last of two sleeps, which the kernel did not sync */
        ASSERT_TRUE(test_mkdtemp(root));
        snprintf(path, sizeof path, "%s/dev", root);
        ASSERT_TRUE(mkdir(path, 0755) == 0);
        snprintf(path, sizeof path, "cp %s/kmsg/two-sleeps %s/dev/kmsg", FIXTURES_DIR, root);
        ASSERT_TRUE(system(path) == 0);
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(kmsg_read(fd, &text, &size));
        k = kmsg_last_sleep_sync(text, size);
        ASSERT_EQ(k.state, KERNEL_SYNC_SKIPPED);
        /* only the first sleep */
        k = kmsg_last_sleep_sync(text, (size_t) (strstr(text, "4,1005") - text));
        ASSERT_EQ(k.state, KERNEL_SYNC_DONE);
        ASSERT_U64_EQ(k.usec, 123 * USEC_PER_MSEC);
        snprintf(path, sizeof path, "rm -rf %s", root);
        ASSERT_TRUE(system(path) == 0);
        ASSERT_ERR(kmsg_read(fd, &text, &size), ENOENT);
}

int main(void) {
        RUN(parse);
        RUN(fixture_last_sleep);
        return 0;
}
