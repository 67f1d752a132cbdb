/* SPDX-License-Identifier: GPL-2.0-or-later */
/* late-skip: when the late pass may be left out of a suspend (KeepCheapSync=), and the estimate of
 * the kernel's own sync it rests on. */

#include <errno.h>
#include <string.h>

#include "late-skip.h"
#include "tests.h"

static LateSkipFacts cheap(void) {
        return (LateSkipFacts) {
                .mode = SYNC_ON_SUSPEND_AUTO,
                .keep_cheap_sync = true,
                .unit_pass = true,
                .knob = 1,
                .complete = true,
                .covered = true,
                .estimate = 2 * USEC_PER_MSEC,
        };
}

TEST(why_not) {
        LateSkipFacts f = cheap();

        ASSERT_TRUE(late_skip_why_not(&f) == NULL);
        /* Each fact on its own runs the late pass. */
        f = cheap(), f.keep_cheap_sync = false;
        ASSERT_STREQ(late_skip_why_not(&f), "KeepCheapSync=no");
        f = cheap(), f.mode = SYNC_ON_SUSPEND_OFF;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f = cheap(), f.mode = SYNC_ON_SUSPEND_KEEP;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f = cheap(), f.unit_pass = false;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        /* The kernel's sync must be known to be on: off, unreadable or no knob runs the late pass. */
        f = cheap(), f.knob = 0;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f = cheap(), f.knob = -ENOENT;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f = cheap(), f.knob = -EBADMSG;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f = cheap(), f.complete = false;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f = cheap(), f.covered = false;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f = cheap(), f.unsynced = true;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f = cheap(), f.n_hung = 1;
        ASSERT_TRUE(strstr(late_skip_why_not(&f), "stuck") != NULL);
        f = cheap(), f.n_stuck = 1;
        ASSERT_TRUE(strstr(late_skip_why_not(&f), "stuck") != NULL);
        f = cheap(), f.n_remote = 1;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f = cheap(), f.estimate = USEC_INFINITY;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        /* The bound itself runs it. */
        f = cheap(), f.estimate = LATE_SKIP_BELOW;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
        f.estimate = LATE_SKIP_BELOW - 1;
        ASSERT_TRUE(late_skip_why_not(&f) == NULL);
        f.estimate = 0;
        ASSERT_TRUE(late_skip_why_not(&f) == NULL);
        /* Another bound (tests): it, not the default. */
        f.estimate = LATE_SKIP_BELOW * 10;
        f.below = LATE_SKIP_BELOW * 10 + 1;
        ASSERT_TRUE(late_skip_why_not(&f) == NULL);
        f.below = LATE_SKIP_BELOW;
        ASSERT_TRUE(late_skip_why_not(&f) != NULL);
}

static RunMount mount_of(const char *path, const char *outcome, usec_t duration) {
        return (RunMount) { .mount_point = (char *) path, .outcome = (char *) outcome, .duration = duration };
}

TEST(estimate) {
        RunMount m[4];
        RunRecord rec = { .mounts = m, .n_mounts = 0 };
        PlanLearned late[] = {
                { .mount_point = "/", .p50 = 1500, .min = 900 },
                { .mount_point = "/", .namespace_ino = 42, .p50 = 7000, .min = 900 },
        };

        /* Nothing to sync: nothing for the kernel either. */
        ASSERT_U64_EQ(late_skip_estimate(&rec, NULL, 0), 0);
        /* Synced: what each took, summed (the kernel's sync is serial). */
        m[0] = mount_of("/", "synced", 1200);
        m[1] = mount_of("/home", "synced", 800);
        m[2] = mount_of("/proc", "skipped", 0);
        m[3] = mount_of("/var", "covered", 0);
        rec.n_mounts = 4;
        ASSERT_U64_EQ(late_skip_estimate(&rec, NULL, 0), 2000);
        /* Deferred: its median late sync, by mount point and namespace; unknown is unknown. */
        m[0] = mount_of("/", "deferred", 0);
        ASSERT_U64_EQ(late_skip_estimate(&rec, NULL, 0), USEC_INFINITY);
        ASSERT_U64_EQ(late_skip_estimate(&rec, late, 2), 1500 + 800);
        m[0].namespace_ino = 42;
        ASSERT_U64_EQ(late_skip_estimate(&rec, late, 2), 7000 + 800);
        m[0].namespace_ino = 7;
        ASSERT_U64_EQ(late_skip_estimate(&rec, late, 2), USEC_INFINITY);
        /* Anything but synced, deferred or left alone: unknown. */
        m[0] = mount_of("/", "timeout", 10);
        ASSERT_U64_EQ(late_skip_estimate(&rec, late, 2), USEC_INFINITY);
        m[0] = mount_of("/", "error", 10);
        ASSERT_U64_EQ(late_skip_estimate(&rec, late, 2), USEC_INFINITY);
        m[0] = mount_of("/", NULL, 10);
        ASSERT_U64_EQ(late_skip_estimate(&rec, late, 2), USEC_INFINITY);
        /* Saturates, never wraps. */
        m[0] = mount_of("/", "synced", USEC_INFINITY - 1);
        ASSERT_U64_EQ(late_skip_estimate(&rec, late, 2), USEC_INFINITY);
}

/* The sample's facts (review AQ, #80 and #82): which writable superblocks make the kernel's sync wait
 * on a server, and a superblock gone since the plan makes the view incomplete. */
TEST(observe) {
        Superblock sbs[4] = {
                { .fs_class = FS_CLASS_BLOCK },
                { .fs_class = FS_CLASS_PSEUDO },
                { .fs_class = FS_CLASS_OVERLAY },
                { .fs_class = FS_CLASS_BLOCK },
        };
        Sample s = { .sbs = sbs, .n_sbs = ELEMENTSOF(sbs), .complete = true };
        LateSkipFacts f = cheap();

        f.n_remote = 7; /* whatever it held */
        late_skip_observe(&f, &s, false);
        ASSERT_TRUE(f.complete);
        ASSERT_EQ(f.n_remote, 0U);
        ASSERT_TRUE(late_skip_why_not(&f) == NULL);
        /* An ext4 on nbd or iSCSI, or on a stack not read in full: remote, as NFS and FUSE are. */
        sbs[3].device.served_remotely = true;
        late_skip_observe(&f, &s, false);
        ASSERT_EQ(f.n_remote, 1U);
        ASSERT_STREQ(late_skip_why_not(&f), "a filesystem is served by a process or the network");
        /* ... unless every mount of it is read-only: the kernel's sync writes nothing there. */
        sbs[3].all_read_only = true;
        late_skip_observe(&f, &s, false);
        ASSERT_EQ(f.n_remote, 0U);
        sbs[3].all_read_only = false;
        sbs[3].device.served_remotely = false;
        sbs[0].fs_class = FS_CLASS_NETWORK;
        sbs[1].fs_class = FS_CLASS_FUSE;
        late_skip_observe(&f, &s, false);
        ASSERT_EQ(f.n_remote, 2U);
        sbs[0].fs_class = FS_CLASS_BLOCK;
        sbs[1].fs_class = FS_CLASS_PSEUDO;
        /* A superblock unmounted since the plan (a lazily unmounted one lives on): incomplete. */
        late_skip_observe(&f, &s, true);
        ASSERT_TRUE(!f.complete);
        ASSERT_STREQ(late_skip_why_not(&f), "the view of the mounts was incomplete");
        s.complete = false;
        late_skip_observe(&f, &s, false);
        ASSERT_TRUE(!f.complete);
        /* Control: the same sample, complete, nothing gone. */
        s.complete = true;
        late_skip_observe(&f, &s, false);
        ASSERT_TRUE(f.complete);
        ASSERT_TRUE(late_skip_why_not(&f) == NULL);
}

int main(void) {
        RUN(why_not);
        RUN(observe);
        RUN(estimate);
        return 0;
}
