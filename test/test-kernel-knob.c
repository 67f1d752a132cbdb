/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * kernel-knob tests on a fixture sysfs in a temporary directory: <tmp>/sys/power/sync_on_suspend is
 * a plain file, <tmp>/run is the state directory. Covers every SyncOnSuspend= mode (decision table
 * and its application), restore after resume, restore after SIGKILL in the middle of a run, absent
 * knob, garbage content, and a read-only look at the real /sys when present.
 */

#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hook-socket.h"
#include "kernel-knob.h"
#include "shared/fd-util.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/string-util.h"
#include "tests.h"

static char tmpdir[] = "/tmp/test-kernel-knob.XXXXXX";
static char tmpdir_sys[sizeof tmpdir + 8]; /* its sys/, the fixture's sysfs root */
static int sysfs_fd = -EBADF, state_fd = -EBADF;

static void put(int dir_fd, const char *path, const char *text) {
        ASSERT_OK(write_file_atomic_at(dir_fd, path, text, strlen(text)));
}

static char *get(int dir_fd, const char *path) {
        char *buf = NULL;
        int r = read_full_file_at(dir_fd, path, 4096, &buf, NULL);
        return r < 0 ? NULL : buf;
}

static bool exists(int dir_fd, const char *path) {
        return faccessat(dir_fd, path, F_OK, 0) >= 0;
}

/* Fresh fixture: knob holds 'knob' (NULL = absent), no record. */
static void setup(const char *knob) {
        char path[256];

        (void) unlinkat(state_fd, KNOB_RECORD_FILE, 0);
        (void) unlinkat(sysfs_fd, KNOB_SYSFS_PATH, 0);
        if (knob)
                put(sysfs_fd, KNOB_SYSFS_PATH, knob);
        snprintf(path, sizeof path, "%s/run/%s", tmpdir, KNOB_RECORD_FILE);
        ASSERT_TRUE(access(path, F_OK) < 0);
}

static int knob_now(void) {
        int v = -1;
        ASSERT_OK(knob_read(sysfs_fd, &v));
        return v;
}

/* The system-sleep hook's give-up (hook-client.h) writes this knob when this record exists. */
TEST(hook_names) {
        ASSERT_STREQ(HOOK_KNOB_PATH, KNOB_SYSFS_PATH);
        ASSERT_STREQ(HOOK_KNOB_RECORD_FILE, KNOB_RECORD_FILE);
        ASSERT_EQ(KNOB_SAFE_VALUE, 1);
}

TEST(parse) {
        int v = -1;

        ASSERT_OK(knob_parse("1\n", 2, &v));
        ASSERT_EQ(v, 1);
        ASSERT_OK(knob_parse("0", 1, &v));
        ASSERT_EQ(v, 0);
        v = 7;
        ASSERT_ERR(knob_parse("", 0, &v), EBADMSG);
        ASSERT_ERR(knob_parse("2\n", 2, &v), EBADMSG);
        ASSERT_ERR(knob_parse("1 ", 2, &v), EBADMSG);
        ASSERT_ERR(knob_parse("10\n", 3, &v), EBADMSG);
        ASSERT_ERR(knob_parse("1\n\n", 3, &v), EBADMSG);
        ASSERT_ERR(knob_parse("\n", 1, &v), EBADMSG);
        ASSERT_ERR(knob_parse("yes", 3, &v), EBADMSG);
        ASSERT_EQ(v, 7); /* outputs untouched on failure */
}

TEST(decide_table) {
        static const SyncOnSuspendMode modes[] = { SYNC_ON_SUSPEND_AUTO, SYNC_ON_SUSPEND_KEEP,
                                                   SYNC_ON_SUSPEND_OFF };

        for (size_t m = 0; m < ELEMENTSOF(modes); m++)
                for (unsigned bits = 0; bits < 1024; bits++) {
                        KnobFacts f = {
                                .complete = bits & 1,
                                .covered = bits & 2,
                                .hung = bits & 4,
                                .unsynced = bits & 8,
                                .records_on_disk = bits & 16,
                                .other_hooks = bits & 32,
                                .unexplained = bits & 64,
                                .unit_pass = bits & 128,
                                .requester_gone = bits & 256,
                                .changed = bits & 512,
                        };
                        bool expect_off;
                        int v = 42, r;

                        switch (modes[m]) {
                        case SYNC_ON_SUSPEND_KEEP:
                                expect_off = false;
                                break;
                        case SYNC_ON_SUSPEND_AUTO:
                                expect_off = !f.unsynced && f.complete && !f.unexplained && !f.changed &&
                                             !f.requester_gone &&
                                             ((f.covered && !f.records_on_disk && !f.other_hooks) ||
                                              (f.hung && (f.covered || f.unit_pass)));
                                break;
                        default:
                                expect_off = !f.unsynced && f.complete && !f.unexplained && !f.changed &&
                                             !f.requester_gone && (f.covered || f.unit_pass);
                        }

                        r = knob_decide(modes[m], &f, &v);
                        ASSERT_OK(r);
                        ASSERT_EQ(r, expect_off ? 1 : 0);
                        ASSERT_EQ(v, expect_off ? 0 : 42);
                }

        /* Spot checks written out, independent of the loop's formula. */
        int v = 42;
#define FACTS(u, h, c, cov) \
        (&(KnobFacts) { .unsynced = u, .hung = h, .complete = c, .covered = cov, .unit_pass = true })
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, FACTS(false, false, true, false), &v),
                  0); /* late pass left FUSE out */
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, FACTS(false, false, true, true), &v), 1); /* redundant */
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, FACTS(false, true, true, true), &v), 1);  /* harmful */
        /* a hung device turns it off even with mounts left out: the kernel sync would never end
         * (the whole-suspend benchmark: "did not finish" with the knob kept on) */
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, FACTS(false, true, true, false), &v), 1);
        /* ... but never over a mount left unsynced, nor with an incomplete view */
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, FACTS(true, true, true, false), &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, FACTS(false, true, false, false), &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, FACTS(false, true, true, false), &v), 1);
        /* issue 9 case 1: a healthy mount left unsynced next to a hung one keeps the kernel sync */
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, FACTS(true, true, true, false), &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, FACTS(true, true, true, true), &v), 0);
        /* issue 9 case 7: an incomplete view (gone mount, unread namespace) keeps it, in every mode */
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, FACTS(false, false, false, true), &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, FACTS(false, true, false, true), &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, FACTS(true, false, true, true), &v), 0); /* error: keep */
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, FACTS(false, false, true, false), &v), 1);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_KEEP, FACTS(false, true, true, true), &v), 0);
        /* F6: the record written after the syncs to a state directory on a real filesystem keeps
         * it in auto (only the kernel sync would write it), not with a hung device, not in off */
        KnobFacts disk = { .complete = true, .covered = true, .records_on_disk = true };
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &disk, &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &disk, &v), 1);
        disk.hung = true;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &disk, &v), 1);
        /* Another system-sleep hook writes alongside: kept in auto as a record on disk is (a hung
         * device still wins, off ignores it). */
        KnobFacts hooks = { .complete = true, .covered = true, .other_hooks = true };
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &hooks, &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &hooks, &v), 1);
        hooks.hung = true;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &hooks, &v), 1);
        /* Dirty inodes on a bdi no synced filesystem explains (a dd straight to a disk): kept in
         * every mode, hung device or not, as an incomplete view is. */
        KnobFacts raw = { .complete = true, .covered = true, .unexplained = true };
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &raw, &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &raw, &v), 0);
        raw.hung = true;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &raw, &v), 0);
        ASSERT_ERR(knob_decide(_SYNC_ON_SUSPEND_INVALID, FACTS(false, true, true, true), &v), EINVAL);
        ASSERT_ERR(knob_decide(_SYNC_ON_SUSPEND_MAX, FACTS(false, true, true, true), &v), EINVAL);
        ASSERT_ERR(knob_decide(SYNC_ON_SUSPEND_AUTO, NULL, &v), EINVAL);
        /* Mounts left out by this pass that no unit's pass of this sleep synced (none ran, it did
         * not finish or saw only part): neither off nor a hung device turns the kernel sync off
         * then; a pass that left nothing out needs no such record. */
        KnobFacts alone = { .complete = true, .hung = true };
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &alone, &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &alone, &v), 0);
        alone.hung = false;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &alone, &v), 0);
        alone.covered = true;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &alone, &v), 1);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &alone, &v), 1);
        alone = (KnobFacts) { .complete = true, .hung = true, .unit_pass = true };
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &alone, &v), 1);
        /* The daemon's late pass whose hook no longer waits (hook-socket.h): it may run after the
         * sleep, so it is not the last pass before the kernel's sync. Kept in every mode, a hung
         * device and all. */
        KnobFacts gone = { .complete = true, .covered = true, .unit_pass = true, .requester_gone = true };
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &gone, &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &gone, &v), 0);
        gone.hung = true;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &gone, &v), 0);
        gone.requester_gone = false;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &gone, &v), 1);
        /* Review N, N1 and N2: the mounts sampled again right before the write differ from the
         * pass's sample, or cannot be sampled again: kept in every mode, a hung device and all. */
        KnobFacts changed = { .complete = true, .covered = true, .unit_pass = true, .changed = true };
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &changed, &v), 0);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &changed, &v), 0);
        changed.hung = true;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &changed, &v), 0);
        changed.changed = false;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &changed, &v), 1);
}

/* One sleep cycle as the service would run it (after the unit's pass): decide, apply, (sleep), restore
 * on resume. */
/* Review AD: the last look's age at the write. Up to KNOB_LOOK_MAX it stands, one microsecond more
 * and it is stale; a clock that went back (never for CLOCK_MONOTONIC) is stale too. */
TEST(look_stale) {
        usec_t t0 = 5 * USEC_PER_SEC;

        ASSERT_TRUE(!knob_look_stale(t0, t0));
        ASSERT_TRUE(!knob_look_stale(t0, t0 + 3 * USEC_PER_MSEC));
        ASSERT_TRUE(!knob_look_stale(t0, t0 + KNOB_LOOK_MAX));
        ASSERT_TRUE(knob_look_stale(t0, t0 + KNOB_LOOK_MAX + 1));
        ASSERT_TRUE(knob_look_stale(t0, t0 + 250 * USEC_PER_MSEC)); /* the second sample's bound */
        ASSERT_TRUE(knob_look_stale(t0, t0 - 1));
        /* Shorter than the second sample's children's bound, or the window would not be bounded by it. */
        ASSERT_TRUE(KNOB_LOOK_MAX < 250 * USEC_PER_MSEC);
}

static void cycle(SyncOnSuspendMode mode, bool unsynced, bool hung, bool covered, bool expect_change) {
        KnobFacts f = {
                .complete = true, .covered = covered, .hung = hung, .unsynced = unsynced, .unit_pass = true
        };
        int v, r;

        setup("1\n");
        r = knob_decide(mode, &f, &v);
        ASSERT_OK(r);
        if (r > 0)
                ASSERT_EQ(knob_save_and_set(sysfs_fd, state_fd, v, KNOB_LOCK_WAIT_PASS_USEC), 1);

        if (expect_change) {
                ASSERT_EQ(knob_now(), 0);
                ASSERT_EQ((knob_record_read(state_fd, &v), v), 1);
        } else {
                ASSERT_EQ(knob_now(), 1);
                ASSERT_ERR(knob_record_read(state_fd, &v), ENOENT);
        }

        /* resume: ExecStopPost= / post hook */
        v = -1;
        r = knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v);
        ASSERT_EQ(r, expect_change ? KNOB_RESTORE_ORIGINAL : KNOB_RESTORE_NOTHING);
        if (expect_change)
                ASSERT_EQ(v, 1);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));
        /* idempotent: second restore has nothing to do */
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, NULL), KNOB_RESTORE_NOTHING);
}

TEST(modes_applied) {
        /*     mode                  unsynced hung  covered  changed */
        cycle(SYNC_ON_SUSPEND_KEEP, false, true, true, false);
        cycle(SYNC_ON_SUSPEND_AUTO, false, false, true, true);
        cycle(SYNC_ON_SUSPEND_AUTO, false, false, false, false);
        cycle(SYNC_ON_SUSPEND_AUTO, false, true, false, true); /* hung: off even with mounts left out */
        cycle(SYNC_ON_SUSPEND_AUTO, false, true, true, true);
        cycle(SYNC_ON_SUSPEND_AUTO, true, true, false, false);
        cycle(SYNC_ON_SUSPEND_OFF, false, false, false, true);
        cycle(SYNC_ON_SUSPEND_OFF, true, false, false, false);
}

TEST(original_zero_kept) {
        /* Admin already turned the kernel sync off: nothing written, nothing recorded, and restore
         * must not "restore" it to the kernel default. */
        int v;

        setup("0\n");
        ASSERT_EQ(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), 0);
        ASSERT_ERR(knob_record_read(state_fd, &v), ENOENT);
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, NULL), KNOB_RESTORE_NOTHING);
        ASSERT_EQ(knob_now(), 0);
}

TEST(second_run_keeps_true_original) {
        /* An interrupted run left knob=0 and record=1; the next run must not record 0. */
        int v = -1;

        setup("1\n");
        ASSERT_EQ(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), 1);
        ASSERT_EQ(knob_now(), 0);
        /* next run, no restore in between */
        ASSERT_EQ(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), 0);
        ASSERT_OK(knob_record_read(state_fd, &v));
        ASSERT_EQ(v, 1);
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_ORIGINAL);
        ASSERT_EQ(knob_now(), 1);
}

/* The gate (review AF, F1/F4): asked under the lock before anything changes and again right after
 * the write; a value of KNOB_SAFE_VALUE never asks it. */
typedef struct GateScript {
        const char *answers[2]; /* what closed() says at its 1st and 2nd call */
        unsigned calls;
} GateScript;

static const char *gate_scripted(void *userdata) {
        GateScript *g = userdata;

        return g->calls < 2 ? g->answers[g->calls++] : "asked a third time";
}

TEST(gate) {
        GateScript g = {};
        KnobGate gate = { .closed = gate_scripted, .userdata = &g };
        const char *why = NULL;
        int v = -1;

        /* open both times: written, recorded */
        setup("1\n");
        ASSERT_EQ(knob_save_and_set_gated(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC, &gate, &why), 1);
        ASSERT_EQ(g.calls, 2);
        ASSERT_EQ(knob_now(), 0);
        ASSERT_OK(knob_record_read(state_fd, &v));
        ASSERT_EQ(v, 1);
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_ORIGINAL);

        /* closed before: nothing written, no record */
        g = (GateScript) { .answers = { "the hook gave up", NULL } };
        ASSERT_ERR(knob_save_and_set_gated(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC, &gate, &why),
                   ESTALE);
        ASSERT_STREQ(why, "the hook gave up");
        ASSERT_EQ(g.calls, 1);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_ERR(knob_record_read(state_fd, &v), ENOENT);

        /* closed during the write (a stall between the check and the write): put back at once, the
         * record kept for the next restore */
        g = (GateScript) { .answers = { NULL, "the hook gave up meanwhile" } };
        why = NULL;
        ASSERT_ERR(knob_save_and_set_gated(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC, &gate, &why),
                   ECANCELED);
        ASSERT_STREQ(why, "the hook gave up meanwhile");
        ASSERT_EQ(knob_now(), 1);
        ASSERT_OK(knob_record_read(state_fd, &v));
        ASSERT_EQ(v, 1);
        /* the knob already reads the original: nothing to write, the record dropped (review AF F7:
         * not "restored") */
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_UNCHANGED);
        ASSERT_EQ(v, 1);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_ERR(knob_record_read(state_fd, &v), ENOENT);

        /* the safe value never asks: turning the kernel's sync on needs no gate */
        setup("0\n");
        g = (GateScript) { .answers = { "closed", "closed" } };
        ASSERT_EQ(knob_save_and_set_gated(sysfs_fd, state_fd, 1, KNOB_LOCK_WAIT_PASS_USEC, &gate, NULL), 1);
        ASSERT_EQ(g.calls, 0);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_ORIGINAL);
        ASSERT_EQ(knob_now(), 0);

        /* no gate: as knob_save_and_set() */
        setup("1\n");
        ASSERT_EQ(knob_save_and_set_gated(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC, NULL, NULL), 1);
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_ORIGINAL);
}

TEST(restore_after_kill) {
        /* A child changes the knob as a run would, then is killed with SIGKILL before restoring. */
        int status, v = -1;
        pid_t pid;

        setup("1\n");
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                if (knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC) != 1)
                        _exit(1);
                (void) kill(getpid(), SIGKILL);
                _exit(2);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

        ASSERT_EQ(knob_now(), 0); /* the kill left the knob changed */
        ASSERT_OK(knob_record_read(state_fd, &v));
        ASSERT_EQ(v, 1);
        /* no leftover temporary files */
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE ".tmp.0"));

        /* next start of suspend-sync restores first */
        v = -1;
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_ORIGINAL);
        ASSERT_EQ(v, 1);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));
}

TEST(kill_between_record_and_write) {
        /* Killed after recording, before writing: knob unchanged, record present; restore is a no-op
         * on the knob but clears the record. */
        int v = -1;

        setup("1\n");
        put(state_fd, KNOB_RECORD_FILE, "1\n");
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_UNCHANGED);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));
        /* killed inside record_create(), before its rename: the temporary records go with the next
         * restore (review AF F7), under the knob's lock */
        put(state_fd, KNOB_RECORD_FILE ".tmp.4242", "1\n");
        put(state_fd, KNOB_RECORD_FILE ".tmp.4243", "1\n");
        put(state_fd, "knob.orig-not-ours", "x");
        ASSERT_EQ(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), 1);
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_ORIGINAL);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE ".tmp.4242") &&
                    !exists(state_fd, KNOB_RECORD_FILE ".tmp.4243"));
        ASSERT_TRUE(exists(state_fd, "knob.orig-not-ours"));
        ASSERT_OK(unlinkat(state_fd, "knob.orig-not-ours", 0));
}

TEST(absent_knob) {
        int v = 5;

        setup(NULL);
        ASSERT_ERR(knob_read(sysfs_fd, &v), ENOENT);
        ASSERT_ERR(knob_write(sysfs_fd, 0), ENOENT);
        ASSERT_ERR(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), ENOENT);
        ASSERT_TRUE(!exists(sysfs_fd, KNOB_SYSFS_PATH));  /* not created by us */
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE)); /* nothing recorded */
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, NULL), KNOB_RESTORE_NOTHING);
        ASSERT_EQ(v, 5);

        /* stale record but the knob vanished (kernel changed across reboot? /run is tmpfs, but a
         * test or --state-dir elsewhere can do it): record removed, -ENOENT reported */
        put(state_fd, KNOB_RECORD_FILE, "1\n");
        ASSERT_ERR(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, NULL), ENOENT);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));
        ASSERT_TRUE(!exists(sysfs_fd, KNOB_SYSFS_PATH));
}

TEST(garbage_knob) {
        static const char *const bad[] = { "", "2\n", "[1] 0\n", "yes\n", "1\n1\n" };
        int v = 5;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *after = NULL;

                setup(bad[i]);
                ASSERT_ERR(knob_read(sysfs_fd, &v), EBADMSG);
                ASSERT_ERR(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), EBADMSG);
                after = get(sysfs_fd, KNOB_SYSFS_PATH);
                ASSERT_STREQ(after, bad[i]); /* untouched */
                ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));
        }

        /* oversized content is garbage too, not an I/O error */
        {
                char big[KNOB_FILE_MAX * 4];
                memset(big, '1', sizeof big - 1);
                big[sizeof big - 1] = 0;
                setup(big);
                ASSERT_ERR(knob_read(sysfs_fd, &v), EBADMSG);
        }
        ASSERT_EQ(v, 5);

        ASSERT_ERR(knob_write(sysfs_fd, 2), EINVAL);
        ASSERT_ERR(knob_save_and_set(sysfs_fd, state_fd, -1, KNOB_LOCK_WAIT_PASS_USEC), EINVAL);
}

/* Review J (mutation K08): a knob that reads as garbage when the original is put back is written
 * with the original all the same, and only then is the record removed; one that cannot be read must
 * not leave the kernel's sync off for good. */
TEST(restore_over_garbage_knob) {
        _cleanup_free_ char *after = NULL;
        int v = 5;

        setup("1\n");
        ASSERT_EQ(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), 1);
        ASSERT_EQ(knob_now(), 0);
        put(sysfs_fd, KNOB_SYSFS_PATH, "garbage\n");
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_ORIGINAL);
        ASSERT_EQ(v, 1);
        after = get(sysfs_fd, KNOB_SYSFS_PATH);
        ASSERT_STREQ(after, "1\n");
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));
}

TEST(garbage_record) {
        int v = -1;
        _cleanup_free_ char *rec = NULL;

        /* restore with a garbled record: the safe value goes back */
        setup("0\n");
        put(state_fd, KNOB_RECORD_FILE, "banana\n");
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_SAFE);
        ASSERT_EQ(v, KNOB_SAFE_VALUE);
        ASSERT_EQ(knob_now(), KNOB_SAFE_VALUE);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));

        /* save with a garbled record: record replaced by the safe value, never by the current 0 */
        setup("0\n");
        put(state_fd, KNOB_RECORD_FILE, "");
        ASSERT_EQ(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), 0);
        rec = get(state_fd, KNOB_RECORD_FILE);
        ASSERT_STREQ(rec, "1\n");
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_ORIGINAL);
        ASSERT_EQ(knob_now(), 1);
}

TEST(record_is_not_a_symlink_target) {
        /* A symbolic link at the record's name is no record (it is not followed, review AF F3): the
         * knob must stay untouched (a record that restore cannot read would leave the kernel sync
         * off for good), and nothing is written through the link. */
        int v = -1;

        setup("1\n");
        ASSERT_OK(symlinkat("/nonexistent-knob-target", state_fd, KNOB_RECORD_FILE));
        ASSERT_ERR(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), ELOOP);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_TRUE(access("/nonexistent-knob-target", F_OK) < 0);
        ASSERT_OK(unlinkat(state_fd, KNOB_RECORD_FILE, 0));
        /* a link to a file that reads 0: not the original, and the restore fails closed (1) */
        setup("0\n");
        put(state_fd, "elsewhere", "0\n");
        ASSERT_OK(symlinkat("elsewhere", state_fd, KNOB_RECORD_FILE));
        ASSERT_ERR(knob_record_read(state_fd, &v), ELOOP);
        ASSERT_TRUE(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v) < 0);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_OK(unlinkat(state_fd, KNOB_RECORD_FILE, 0));
        ASSERT_OK(unlinkat(state_fd, "elsewhere", 0));
        /* a FIFO nobody writes: no wait, and the same */
        setup("0\n");
        ASSERT_OK(mkfifoat(state_fd, KNOB_RECORD_FILE, 0600));
        ASSERT_ERR(knob_record_read(state_fd, &v), EBADFD);
        ASSERT_TRUE(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v) < 0);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_ERR(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), EBADFD);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_OK(unlinkat(state_fd, KNOB_RECORD_FILE, 0));
        setup("1\n");
}

TEST(real_sysfs_readonly) {
        _cleanup_close_ int fd = open("/sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int v = -1, r;

        if (fd < 0)
                return;
        r = knob_read(fd, &v);
        if (r == -ENOENT) {
                fprintf(stderr, "   (this kernel has no /sys/power/sync_on_suspend)\n");
                return;
        }
        ASSERT_OK(r);
        ASSERT_TRUE(v == 0 || v == 1);
}

/* Review I, I1: the knob and its record change only under the knob's lock. Held by another
 * process, neither call touches them: the late pass leaves the knob on, and restore-knob writes 1
 * and keeps the record for the next restore. Without the lock a restore would remove a record a
 * late pass had just made, which then wrote 0: the knob off and no record. */
TEST(lock_held_elsewhere) {
        _cleanup_close_ int held = openat(state_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        usec_t t;
        int v = -1;

        ASSERT_TRUE(held >= 0);
        ASSERT_OK(flock(held, LOCK_EX));

        /* in this process a second open file description of the directory: as another process's */
        setup("1\n");
        t = now(CLOCK_MONOTONIC);
        ASSERT_ERR(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), EBUSY);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t >= KNOB_LOCK_WAIT_PASS_USEC); /* it waited, then gave up */
        ASSERT_EQ(knob_now(), 1);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));

        /* a sleep's late pass turned it off; the restore finds the lock held */
        setup("0\n");
        put(state_fd, KNOB_RECORD_FILE, "0\n"); /* a record (never 0 in practice: any value) ... */
        ASSERT_ERR(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), EBUSY);
        ASSERT_EQ(knob_now(), KNOB_SAFE_VALUE); /* ... is not trusted while another holds it */
        ASSERT_OK(knob_record_read(state_fd, &v));
        ASSERT_EQ(v, 0);

        /* released: the next restore puts the original back and removes the record */
        ASSERT_OK(flock(held, LOCK_UN));
        ASSERT_EQ(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), KNOB_RESTORE_ORIGINAL);
        ASSERT_EQ(v, 0);
        ASSERT_EQ(knob_now(), 0);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));
        setup("1\n");
}

/* Review K, K1: a restore that cannot take the lock for any reason, or cannot read the record,
 * leaves no 0 standing: it writes 1 and keeps the record (linked with --wrap=flock, test/meson.build). */
int __real_flock(int fd, int op);
int __wrap_flock(int fd, int op);
static int flock_fails; /* errno for every flock(), or 0 */

int __wrap_flock(int fd, int op) {
        if (flock_fails != 0) {
                errno = flock_fails;
                return -1;
        }
        return __real_flock(fd, op);
}

/* Opens of the knob (a path ending in KNOB_SYSFS_PATH) fail with this errno, or 0. */
static int knob_open_fails;

int __wrap_openat64(int dir_fd, const char *path, int flags, ...);
int __real_openat64(int dir_fd, const char *path, int flags, ...);
int __wrap_openat64(int dir_fd, const char *path, int flags, ...) {
        mode_t mode = 0;
        va_list ap;

        if (knob_open_fails != 0 && endswith(path, KNOB_SYSFS_PATH)) {
                errno = knob_open_fails;
                return -1;
        }
        if (flags & (O_CREAT | O_TMPFILE)) {
                va_start(ap, flags);
                mode = va_arg(ap, mode_t);
                va_end(ap);
        }
        return __real_openat64(dir_fd, path, flags, mode);
}

TEST(restore_fails_closed) {
        int v = -1;

        /* after a sleep whose late pass turned the sync off */
        setup("0\n");
        put(state_fd, KNOB_RECORD_FILE, "1\n");
        flock_fails = ENOLCK;
        ASSERT_ERR(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v), ENOLCK);
        flock_fails = 0;
        ASSERT_EQ(knob_now(), 1);
        ASSERT_OK(knob_record_read(state_fd, &v));
        ASSERT_EQ(v, 1);
        /* the late pass cannot take it either: nothing changes */
        ASSERT_OK(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v));
        flock_fails = ENOLCK;
        ASSERT_ERR(knob_save_and_set(sysfs_fd, state_fd, 0, KNOB_LOCK_WAIT_PASS_USEC), ENOLCK);
        flock_fails = 0;
        ASSERT_EQ(knob_now(), 1);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE));

        /* a record that cannot be read (here a directory) */
        setup("0\n");
        ASSERT_OK(mkdirat(state_fd, KNOB_RECORD_FILE, 0755));
        ASSERT_TRUE(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v) < 0);
        ASSERT_EQ(knob_now(), 1);
        ASSERT_OK(unlinkat(state_fd, KNOB_RECORD_FILE, AT_REMOVEDIR));
        setup("1\n");
}

/* Review AS, AS-1: a 0 of an earlier sleep, then a restore with no file descriptor left (EMFILE,
 * as under a tiny RLIMIT_NOFILE or a full system file table): the knob held open from the start
 * puts the kernel's sync back on. In a child, whose limit is set so that no new fd can be had. 1
 * when the child's restore left the knob at 1, 0 when at 0. */
static int restore_out_of_fds(bool keep_open) {
        pid_t pid;
        int status;

        setup("0\n");
        put(state_fd, KNOB_RECORD_FILE, "1\n");
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                struct rlimit rl;
                int v = -1, fd, r;

                if (keep_open)
                        ASSERT_OK(knob_keep_open(tmpdir_sys));
                fd = dup(0); /* the lowest free number: every one below it is taken */
                ASSERT_TRUE(fd >= 0);
                safe_close(fd);
                rl = (struct rlimit) { .rlim_cur = (rlim_t) fd, .rlim_max = (rlim_t) fd };
                ASSERT_OK(setrlimit(RLIMIT_NOFILE, &rl));
                ASSERT_TRUE(open("/dev/null", O_RDONLY | O_CLOEXEC) < 0 && errno == EMFILE);
                r = knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_PASS_USEC, &v);
                ASSERT_TRUE(r < 0); /* no lock to be had: the record stays */
                /* what a verb does then, also with no sysfs fd at all */
                r = knob_fail_safe(sysfs_fd);
                if (keep_open) {
                        ASSERT_OK(r);
                        ASSERT_OK(knob_fail_safe(-EBADF));
                        ASSERT_OK(knob_read(-EBADF, &v));
                        ASSERT_EQ(v, 1);
                        /* a child that closed its fds: the number is not the knob's any more */
                        knob_keep_forget();
                        ASSERT_ERR(knob_write(-EBADF, 1), EBADF);
                } else
                        ASSERT_ERR(r, EMFILE);
                _exit(EXIT_SUCCESS);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        /* the record is kept for the next restore */
        ASSERT_TRUE(exists(state_fd, KNOB_RECORD_FILE));
        return knob_now();
}

TEST(restore_out_of_fds) {
        ASSERT_EQ(restore_out_of_fds(true), 1);
        /* control: without the knob held open, it stays 0 */
        ASSERT_EQ(restore_out_of_fds(false), 0);
        setup("1\n");
}

/* Review BE: knob_fail_safe() turns a 0 into 1 (what every restore that cannot be done relies on,
 * restore_out_of_fds above meets the knob already put back by knob_restore()), leaves a 1 alone and
 * an absent knob absent. */
TEST(fail_safe) {
        setup("0\n");
        ASSERT_OK(knob_fail_safe(sysfs_fd));
        ASSERT_EQ(knob_now(), 1);
        ASSERT_TRUE(!exists(state_fd, KNOB_RECORD_FILE)); /* it writes no record */
        setup("1\n");
        ASSERT_OK(knob_fail_safe(sysfs_fd));
        ASSERT_EQ(knob_now(), 1);
        setup(NULL);
        ASSERT_OK(knob_fail_safe(sysfs_fd));
        ASSERT_TRUE(!exists(sysfs_fd, KNOB_SYSFS_PATH));
        setup("1\n");
}

/* The knob's text replaced in place (put() renames a new file over it: the fd held open would be
 * another file's). */
static void put_in_place(const char *text) {
        _cleanup_close_ int fd = openat(sysfs_fd, KNOB_SYSFS_PATH, O_WRONLY | O_TRUNC | O_CLOEXEC);

        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(write(fd, text, strlen(text)) == (ssize_t) strlen(text));
}

/* Review BE: the knob held open (knob_keep_open()) stands in for an open that fails for want of a
 * file (EMFILE, ENFILE: the system's table full, ENOMEM), never for one refused (EACCES), and only
 * while its number is still the knob's: a process that closed its fds and got that number for
 * another file writes nothing there. In a child: the held fd is process state. */
TEST(reserve_only_for_the_knob) {
        pid_t pid;
        int status;

        setup("0\n");
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                static const int spare[] = { ENFILE, ENOMEM, EMFILE };
                _cleanup_close_ int other = -EBADF;
                _cleanup_free_ char *text = NULL;
                int fd, v = -1;

                fd = dup(0); /* the number knob_keep_open() gets: the lowest free */
                ASSERT_TRUE(fd >= 0);
                safe_close(fd);
                ASSERT_OK(knob_keep_open(tmpdir_sys));
                for (size_t i = 0; i < ELEMENTSOF(spare); i++) {
                        put_in_place("0\n");
                        knob_open_fails = spare[i];
                        ASSERT_OK(knob_write(sysfs_fd, 1));
                        ASSERT_OK(knob_read(sysfs_fd, &v));
                        knob_open_fails = 0;
                        ASSERT_EQ(v, 1);
                        ASSERT_EQ(knob_now(), 1);
                }
                /* refused: not ours to write by another way */
                put_in_place("0\n");
                knob_open_fails = EACCES;
                ASSERT_ERR(knob_write(sysfs_fd, 1), EACCES);
                knob_open_fails = 0;
                ASSERT_EQ(knob_now(), 0);
                /* the number handed to another file (a child that closed its fds, no knob_keep_forget()) */
                put(state_fd, "other", "0\n");
                other = openat(state_fd, "other", O_RDWR | O_CLOEXEC);
                ASSERT_TRUE(other >= 0);
                ASSERT_TRUE(dup2(other, fd) == fd);
                ASSERT_ERR(knob_write(-EBADF, 1), EBADF);
                ASSERT_ERR(knob_read(-EBADF, &v), EBADF);
                ASSERT_TRUE(text = get(state_fd, "other"));
                ASSERT_STREQ(text, "0\n");
                (void) unlinkat(state_fd, "other", 0);
                _exit(EXIT_SUCCESS);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        setup("1\n");
}

/* The race itself (review I's reproducer): a late pass turning the knob off against a restore,
 * started together, many rounds. A stress check, not the guard: without the lock it fails in about
 * one run in five (review K); lock_held_elsewhere fails every time. Allowed ends: knob 0 with the record (the restore first: the post
 * hook restores it) or knob 1 without (the late pass first). Never knob 0 without a record. */
TEST(race_with_restore) {
        unsigned rounds = 300, off_recorded = 0, on_clean = 0;

        for (unsigned i = 0; i < rounds; i++) {
                int pipe_fd[2], status, knob, rec = -1, r;
                pid_t kids[2];
                char c = 0;

                setup("1\n");
                ASSERT_OK(pipe2(pipe_fd, O_CLOEXEC));
                for (unsigned k = 0; k < 2; k++) {
                        kids[k] = fork();
                        ASSERT_TRUE(kids[k] >= 0);
                        if (kids[k] == 0) {
                                safe_close(pipe_fd[1]);
                                if (read(pipe_fd[0], &c, 1) < 0)
                                        _exit(3);
                                if (k == 0)
                                        _exit(knob_save_and_set(sysfs_fd, state_fd, 0,
                                                                KNOB_LOCK_WAIT_RESTORE_USEC) < 0);
                                _exit(knob_restore(sysfs_fd, state_fd, KNOB_LOCK_WAIT_RESTORE_USEC, NULL) <
                                      0);
                        }
                }
                safe_close(pipe_fd[0]);
                safe_close(pipe_fd[1]); /* both go */
                for (unsigned k = 0; k < 2; k++) {
                        ASSERT_EQ(waitpid(kids[k], &status, 0), kids[k]);
                        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
                }
                knob = knob_now();
                r = knob_record_read(state_fd, &rec);
                if (knob == 0 && r >= 0 && rec == 1)
                        off_recorded++;
                else if (knob == 1 && r == -ENOENT)
                        on_clean++;
                else {
                        fprintf(stderr, "   round %u: knob %d, record %d (%d): lost\n", i, knob, rec, r);
                        ASSERT_TRUE(false);
                }
        }
        fprintf(stderr, "   %u rounds: %u restore first, %u late pass first\n", rounds, off_recorded,
                on_clean);
        setup("1\n");
}

static void cleanup_tmp(void) {
        char cmd[sizeof tmpdir + 32];
        snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", tmpdir);
        (void) !system(cmd);
}

int main(void) {
        char path[sizeof tmpdir + 32];

        ASSERT_TRUE(test_mkdtemp(tmpdir));
        atexit(cleanup_tmp);
        snprintf(path, sizeof path, "%s/sys", tmpdir);
        ASSERT_TRUE(mkdir(path, 0755) >= 0);
        snprintf(path, sizeof path, "%s/sys/power", tmpdir);
        ASSERT_TRUE(mkdir(path, 0755) >= 0);
        snprintf(path, sizeof path, "%s/run", tmpdir);
        ASSERT_TRUE(mkdir(path, 0755) >= 0);
        snprintf(path, sizeof path, "%s/sys", tmpdir);
        snprintf(tmpdir_sys, sizeof tmpdir_sys, "%s/sys", tmpdir);
        sysfs_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(sysfs_fd >= 0);
        snprintf(path, sizeof path, "%s/run", tmpdir);
        state_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(state_fd >= 0);

        RUN(hook_names);
        RUN(parse);
        RUN(decide_table);
        RUN(look_stale);
        RUN(modes_applied);
        RUN(original_zero_kept);
        RUN(second_run_keeps_true_original);
        RUN(gate);
        RUN(restore_after_kill);
        RUN(kill_between_record_and_write);
        RUN(absent_knob);
        RUN(garbage_knob);
        RUN(restore_over_garbage_knob);
        RUN(garbage_record);
        RUN(record_is_not_a_symlink_target);
        RUN(lock_held_elsewhere);
        RUN(restore_fails_closed);
        RUN(restore_out_of_fds);
        RUN(fail_safe);
        RUN(reserve_only_for_the_knob);
        RUN(race_with_restore);
        RUN(real_sysfs_readonly);

        safe_close(sysfs_fd);
        safe_close(state_fd);
        return 0;
}
