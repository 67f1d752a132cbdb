/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verb_run()'s RunDone (verbs.h), in process: the main pass tells its caller once, with its state
 * lock already released, its record saved and what its exit status and record will say; the late
 * pass never does. The daemon's pass reports through it (pass_child()), so logind's lock goes
 * before the pass logs its outcome. A manual pass of this machine (root: it syncs), its state and
 * configuration in a temporary directory on /dev/shm.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "state.h"
#include "tests.h"
#include "verbs.h"

static char work[] = "/dev/shm/test-verb-run.XXXXXX";
static char state_dir[96], config[96], sysfs[96];

typedef struct Seen {
        unsigned calls;
        int code;
        bool recorded;
        int lock;        /* state_lock() at the call: 0 when the pass had released it */
        bool has_last;   /* last.json was there */
        char result[16]; /* ... and said */
} Seen;

static void on_done(int code, bool recorded, void *userdata) {
        _cleanup_(run_record_done) RunRecord last = {};
        Seen *s = userdata;
        int fd = -EBADF;

        s->calls++;
        s->code = code;
        s->recorded = recorded;
        s->lock = state_lock(state_dir, &fd);
        safe_close(fd);
        ASSERT_OK(state_load(state_dir, &last, &s->has_last, NULL, NULL));
        if (s->has_last)
                snprintf(s->result, sizeof s->result, "%s", last.result);
}

static Args args(void) {
        return (Args) {
                .config = config,
                .state_dir = state_dir,
                .history_dir = state_dir,
                .json = JSON_OFF,
                .deadline = 10 * USEC_PER_SEC,
                .deadline_max = USEC_INFINITY,
                .trigger = "manual",
                .root = "/",
                .sysfs = "/sys",
                .debugfs = "/sys/kernel/debug",
                .started = now(CLOCK_MONOTONIC),
        };
}

TEST(main_pass_notifies) {
        Seen s = {};
        RunDone n = { .done = on_done, .userdata = &s };
        Args a = args();
        int code = -1;
        bool recorded = false;

        ASSERT_OK(verb_run(&a, &n, &code, &recorded));
        ASSERT_EQ(s.calls, 1U);
        /* What it said is what the pass returned. */
        ASSERT_EQ(s.code, code);
        ASSERT_EQ(s.recorded, recorded);
        /* Its lock released, its record saved, before the call. */
        ASSERT_EQ(s.lock, 0);
        ASSERT_TRUE(s.has_last);
        ASSERT_EQ(s.recorded, streq(s.result, "success"));
        /* Nothing without a RunDone. */
        a = args();
        ASSERT_OK(verb_run(&a, NULL, &code, NULL));
}

/* The late pass decides the knob after its record: it is nobody's to hand over early. */
TEST(late_pass_does_not) {
        Seen s = {};
        RunDone n = { .done = on_done, .userdata = &s };
        Args a = args();
        int code = -1;

        a.late = true;
        a.trigger = "hook";
        a.sleep_action = "suspend";
        a.sysfs = sysfs;
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        ASSERT_EQ(s.calls, 0U);
}

int main(void) {
        char path[160];
        FILE *f;

        if (geteuid() != 0) {
                fprintf(stderr, "skip: a pass syncs this machine's filesystems: needs root\n");
                return EXIT_TEST_SKIP;
        }
        log_setup();
        ASSERT_TRUE(mkdtemp(work) != NULL);
        snprintf(state_dir, sizeof state_dir, "%s/state", work);
        snprintf(config, sizeof config, "%s/suspend-sync.conf", work);
        snprintf(sysfs, sizeof sysfs, "%s/sys", work);
        ASSERT_TRUE((f = fopen(config, "we")) != NULL);
        fputs("[Kernel]\nSyncOnSuspend=keep\n", f);
        ASSERT_TRUE(fclose(f) == 0);
        /* The late pass's sysfs: the machine's, with a power/ of its own (never the kernel's knob). */
        ASSERT_TRUE(mkdir(sysfs, 0755) == 0);
        snprintf(path, sizeof path, "%s/power", sysfs);
        ASSERT_TRUE(mkdir(path, 0755) == 0);
        snprintf(path, sizeof path, "%s/power/sync_on_suspend", sysfs);
        ASSERT_TRUE((f = fopen(path, "we")) != NULL);
        fputs("1\n", f);
        ASSERT_TRUE(fclose(f) == 0);
        for (const char *const *d =
                     (const char *const[]) { "dev", "devices", "block", "class", "fs", "bus", NULL };
             *d; d++) {
                char target[32];

                snprintf(path, sizeof path, "%s/%s", sysfs, *d);
                snprintf(target, sizeof target, "/sys/%s", *d);
                ASSERT_TRUE(symlink(target, path) == 0);
        }

        RUN(main_pass_notifies);
        RUN(late_pass_does_not);

        snprintf(path, sizeof path, "rm -rf '%s'", work);
        return system(path) == 0 ? 0 : 1;
}
