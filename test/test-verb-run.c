/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verb_run()'s RunDone (verbs.h), in process: the main pass tells its caller once, what its exit
 * status and record will say, with its record built and not yet saved, its state lock held until it
 * is (the late pass and restore-knob wait for it); the late pass once its knob is decided, its lock
 * released and its record saved, having asked right before whether its requester still waits (the
 * daemon's late pass for the system-sleep hook, hook-socket.h), and keeps the kernel's sync on when
 * not. The daemon's pass reports through it (pass_child()), so logind's lock goes before the pass
 * saves its record and logs its outcome. A manual pass of this machine (root: it syncs), its state
 * and configuration in a temporary directory on /dev/shm.
 */

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-id128.h>

#include "config.h"
#include "daemon.h"
#include "handover.h"
#include "late-skip.h"
#include "log.h"
#include "state.h"
#include "tests.h"
#include "verbs.h"

static char work[] = "/dev/shm/test-verb-run.XXXXXX";
static char state_dir[96], config[96], config_off[96], config_nocheap[96], config_cheap[96], sysfs[96],
        debugfs[96];
static const char *debugfs_path = "/sys/kernel/debug";

static void write_text(const char *path, const char *text) {
        FILE *f;

        ASSERT_TRUE((f = fopen(path, "we")) != NULL);
        fputs(text, f);
        ASSERT_TRUE(fclose(f) == 0);
}

static bool state_has_file(const char *name) {
        char path[160];

        snprintf(path, sizeof path, "%s/%s", state_dir, name);
        return access(path, F_OK) == 0;
}

typedef struct Seen {
        unsigned calls;
        int code;
        bool recorded;
        int lock;        /* state_lock() at the call: 0 when the pass had released it */
        bool has_last;   /* last.json was there */
        char result[16]; /* ... and said */
        usec_t started;  /* ... and its start (CLOCK_REALTIME) */
        bool late_skip;  /* the marker for the hook was there (late-skip.h) */
        unsigned saved_calls;
        unsigned calls_at_saved; /* done's calls when saved came */
        int saved_lock;          /* state_lock() when saved came */
        usec_t saved_started;    /* last.json's start then */
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
        if (s->has_last) {
                snprintf(s->result, sizeof s->result, "%s", last.result);
                s->started = last.started_realtime;
        }
        s->late_skip = state_has_file(LATE_SKIP_FILE);
}

static void on_saved(void *userdata) {
        _cleanup_(run_record_done) RunRecord last = {};
        Seen *s = userdata;
        bool has = false;
        int fd = -EBADF;

        s->saved_calls++;
        s->calls_at_saved = s->calls;
        s->saved_lock = state_lock(state_dir, &fd);
        safe_close(fd);
        ASSERT_OK(state_load(state_dir, &last, &has, NULL, NULL));
        s->saved_started = has ? last.started_realtime : 0;
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
                .debugfs = debugfs_path,
                .started = now(CLOCK_MONOTONIC),
        };
}

TEST(main_pass_notifies) {
        _cleanup_(run_record_done) RunRecord last = {};
        Seen s = {};
        RunDone n = { .done = on_done, .saved = on_saved, .userdata = &s };
        Args a = args();
        usec_t before = now(CLOCK_REALTIME);
        int code = -1, fd = -EBADF;
        bool recorded = false, has = false;

        ASSERT_OK(verb_run(&a, &n, &code, &recorded));
        ASSERT_EQ(s.calls, 1U);
        /* What it said is what the pass returned, and what the record it saved after says. */
        ASSERT_EQ(s.code, code);
        ASSERT_EQ(s.recorded, recorded);
        ASSERT_OK(state_load(state_dir, &last, &has, NULL, NULL));
        ASSERT_TRUE(has && last.started_realtime >= before);
        ASSERT_EQ(recorded, streq(last.result, "success"));
        /* At the call its lock was held, this pass's record not saved yet (an earlier one's, if any,
         * was there) ... */
        ASSERT_EQ(s.lock, -EBUSY);
        ASSERT_TRUE(!s.has_last || s.started < before);
        /* ... then saved, after the call, with the lock released and the record there. */
        ASSERT_EQ(s.saved_calls, 1U);
        ASSERT_EQ(s.calls_at_saved, 1U);
        ASSERT_EQ(s.saved_lock, 0);
        ASSERT_EQ(s.saved_started, last.started_realtime);
        /* ... and after, the lock is free. */
        ASSERT_OK(state_lock(state_dir, &fd));
        safe_close(fd);
        /* $SUSPEND_SYNC_TEST_SAVE_FIRST (the benchmark's savefirst): saved before the call. */
        s = (Seen) {};
        a = args();
        a.save_first = true;
        before = now(CLOCK_REALTIME);
        ASSERT_OK(verb_run(&a, &n, &code, &recorded));
        ASSERT_EQ(s.calls, 1U);
        ASSERT_TRUE(s.has_last && s.started >= before);
        ASSERT_EQ(s.recorded, streq(s.result, "success"));
        /* Nothing without a RunDone. */
        a = args();
        ASSERT_OK(verb_run(&a, NULL, &code, NULL));
}

/* The late pass tells once its knob is decided: it asks whether its requester still waits right
 * before, then reports with its lock released and its record saved. */
typedef struct Late {
        Seen seen;
        unsigned asked;
        bool asked_after_done;
        bool waits; /* what requester_waits answers */
} Late;

static void on_late_done(int code, bool recorded, void *userdata) {
        on_done(code, recorded, &((Late *) userdata)->seen);
}

static bool on_waits(void *userdata) {
        Late *l = userdata;

        l->asked++;
        l->asked_after_done = l->seen.calls > 0;
        return l->waits;
}

static int knob_value(void) {
        char path[160], c = 0;
        FILE *f;

        snprintf(path, sizeof path, "%s/power/sync_on_suspend", sysfs);
        ASSERT_TRUE((f = fopen(path, "re")) != NULL);
        ASSERT_TRUE(fread(&c, 1, 1, f) == 1);
        fclose(f);
        return c - '0';
}

static void knob_reset(void) {
        char path[160];

        snprintf(path, sizeof path, "%s/power/sync_on_suspend", sysfs);
        write_text(path, "1\n");
        snprintf(path, sizeof path, "%s/knob.orig", state_dir);
        (void) unlink(path);
}

static Args late_args(const char *conf) {
        Args a = args();

        a.late = true;
        a.trigger = "hook";
        a.sleep_action = "suspend";
        a.sysfs = sysfs;
        a.config = conf;
        return a;
}

TEST(late_pass_notifies_after_knob) {
        Late l = { .waits = true };
        RunDone n = { .done = on_late_done, .requester_waits = on_waits, .userdata = &l };
        Args a = late_args(config);
        int code = -1;

        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        ASSERT_EQ(l.asked, 1U);
        ASSERT_TRUE(!l.asked_after_done);
        ASSERT_EQ(l.seen.calls, 1U);
        ASSERT_EQ(l.seen.code, code);
        ASSERT_EQ(l.seen.lock, 0);
        ASSERT_TRUE(l.seen.has_last);
        /* Without requester_waits: told all the same. */
        l = (Late) {};
        n.requester_waits = NULL;
        a = late_args(config);
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        ASSERT_EQ(l.seen.calls, 1U);
}

/* SyncOnSuspend=off: a late pass whose requester no longer waits leaves the kernel's sync on. The
 * control (the requester waits) turns it off only where this machine's late pass covers everything
 * it must (a complete view, nothing left unsynced): elsewhere the pair proves nothing and says so. */
TEST(requester_gone_keeps_kernel_sync) {
        Late l = { .waits = false };
        RunDone n = { .done = on_late_done, .requester_waits = on_waits, .userdata = &l };
        Args a = late_args(config_off);
        int code = -1;

        knob_reset();
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        ASSERT_EQ(l.asked, 1U);
        ASSERT_EQ(knob_value(), 1);

        l = (Late) { .waits = true };
        a = late_args(config_off);
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        ASSERT_EQ(l.asked, 1U);
        if (knob_value() == 1)
                fprintf(stderr, "note: this machine's late pass keeps the kernel's sync on by itself; "
                                "the gone requester's check above is not contrasted here\n");
        else
                ASSERT_EQ(knob_value(), 0);
        knob_reset();
}

static bool state_has(const char *name, char *ret_text, size_t size) {
        char path[160];
        FILE *f;
        size_t n;

        snprintf(path, sizeof path, "%s/%s", state_dir, name);
        f = fopen(path, "re");
        if (!f)
                return false;
        n = fread(ret_text, 1, size - 1, f);
        ret_text[n] = 0;
        fclose(f);
        return true;
}

static bool hook_link_up(void) {
        char path[160], target[PATH_MAX];
        ssize_t n;

        snprintf(path, sizeof path, "%s/" HOOK_LINK_FILE, state_dir);
        n = readlink(path, target, sizeof target - 1);
        if (n < 0)
                return false;
        target[n] = 0;
        return streq(target, SLEEP_HOOK_BINARY);
}

/* A unit's pass with KeepCheapSync=yes and the bound at 1 h: how fast this machine syncs is not the
 * question. */
static void unit_pass_cheap(int *code) {
        Args a = args();

        a.trigger = "unit";
        a.sysfs = sysfs;
        a.config = config_cheap;
        a.late_skip_below = 3600 * USEC_PER_SEC;
        ASSERT_OK(verb_run(&a, NULL, code, NULL));
}

/* The daemon's pass (a unit's pass with a RunDone) that leaves the late pass out has written the
 * marker for the hook, and taken the hook's link down, by the time it reports: logind goes on then. */
TEST(report_after_late_skip_marker) {
        _cleanup_(run_record_done) RunRecord last = {};
        Seen s = {};
        RunDone n = { .done = on_done, .userdata = &s };
        Args a = args();
        bool has = false;
        int code = -1;

        knob_reset();
        a.trigger = "unit";
        a.sysfs = sysfs;
        a.config = config_cheap;
        a.late_skip_below = 3600 * USEC_PER_SEC;
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        ASSERT_EQ(s.calls, 1U);
        ASSERT_OK(state_load(state_dir, &last, &has, NULL, NULL));
        ASSERT_TRUE(has);
        if (!last.late_left_out) {
                ASSERT_TRUE(!s.late_skip);
                fprintf(stderr,
                        "note: this machine's view or filesystems keep the late pass in: the marker's "
                        "order is not contrasted here\n");
                return;
        }
        ASSERT_TRUE(s.late_skip);
        ASSERT_TRUE(!hook_link_up());
        a = args();
        a.sysfs = sysfs;
        ASSERT_OK(verb_restore_knob(&a));
}

/* KeepCheapSync= (late-skip.h): the unit's pass removes an earlier marker as it starts, writes one
 * naming its own token only when it may (here: whether this machine's syncs were quick enough is
 * its own, so that half is noted, not asserted), and restore-knob removes it after the sleep. */
TEST(unit_pass_late_skip) {
        char path[160], mark[64], skip[64];
        Args a = args();
        int code = -1;

        snprintf(path, sizeof path, "%s/late-skip", state_dir);
        write_text(path, "0123456789abcdef0123456789abcdef\n");
        a.trigger = "unit";
        a.sysfs = sysfs; /* the unit's pass puts a leftover knob back: never the kernel's */
        a.config = config_nocheap;
        ASSERT_OK(verb_run(&a, NULL, &code, NULL));
        ASSERT_TRUE(!state_has("late-skip", skip, sizeof skip));
        ASSERT_TRUE(state_has("unit-pass", mark, sizeof mark));

        /* The kernel's sync off: never left out, however quick (the bound at 1 h). */
        knob_reset();
        snprintf(path, sizeof path, "%s/power/sync_on_suspend", sysfs);
        write_text(path, "0\n");
        unit_pass_cheap(&code);
        ASSERT_TRUE(!state_has("late-skip", skip, sizeof skip));
        ASSERT_TRUE(hook_link_up());
        knob_reset();

        snprintf(path, sizeof path, "%s/late-skip", state_dir);
        unit_pass_cheap(&code);
        ASSERT_TRUE(state_has("unit-pass", mark, sizeof mark));
        if (state_has("late-skip", skip, sizeof skip)) {
                ASSERT_STREQ(skip, mark);
                ASSERT_TRUE(!hook_link_up()); /* systemd-sleep finds no hook of ours */
        } else {
                ASSERT_TRUE(hook_link_up());
                fprintf(stderr, "note: this machine's view or filesystems keep the late pass in (not its "
                                "speed: the bound is 1 h here)\n");
        }
        /* After the sleep: gone, whichever it was, the link back. */
        write_text(path, mark);
        a = args();
        a.sysfs = sysfs;
        ASSERT_OK(verb_restore_knob(&a));
        ASSERT_TRUE(!state_has("late-skip", skip, sizeof skip));
        ASSERT_TRUE(hook_link_up());
}

/* With the link down no post hook ran: restore-knob, the first after the sleep, records the resume;
 * with it up (the post hook ran and recorded it) it does not. */
TEST(restore_knob_records_resume_without_hook) {
        char link[160], resume[160], skip[160], text[256];
        Args a = args();

        snprintf(link, sizeof link, "%s/" HOOK_LINK_FILE, state_dir);
        snprintf(resume, sizeof resume, "%s/last-resume", state_dir);
        a.sysfs = sysfs;

        ASSERT_TRUE(unlink(resume) == 0 || errno == ENOENT);
        ASSERT_OK(verb_restore_knob(&a)); /* makes the link if missing: the cycle before */
        (void) unlink(resume);
        ASSERT_OK(verb_restore_knob(&a));
        ASSERT_TRUE(hook_link_up());
        ASSERT_TRUE(!state_has("last-resume", text, sizeof text));

        ASSERT_EQ(unlink(link), 0); /* missing, but no pass took it down: no record */
        ASSERT_OK(verb_restore_knob(&a));
        ASSERT_TRUE(hook_link_up());
        ASSERT_TRUE(!state_has("last-resume", text, sizeof text));

        snprintf(skip, sizeof skip, "%s/" LATE_SKIP_FILE, state_dir);
        write_text(skip, "0123456789abcdef0123456789abcdef\n");
        ASSERT_EQ(unlink(link), 0); /* as a pass that left the late pass out leaves them */
        ASSERT_OK(verb_restore_knob(&a));
        ASSERT_TRUE(hook_link_up());
        ASSERT_TRUE(state_has("last-resume", text, sizeof text));
        ASSERT_TRUE(strstr(text, "ACTION=unknown\n") != NULL);
        ASSERT_TRUE(strstr(text, "REALTIME=") != NULL);
}

/* Another process holds the state lock, as the daemon's pass does while it saves after its report,
 * until *ret_release is closed (or for hold, when not USEC_INFINITY): its PID, once it holds it. */
static pid_t lock_holder(usec_t hold, int *ret_release) {
        int p[2], q[2], fd = -EBADF;
        char c = 0;
        pid_t pid;

        ASSERT_TRUE(pipe2(p, O_CLOEXEC) == 0 && pipe2(q, O_CLOEXEC) == 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                safe_close(q[1]);
                if (state_lock(state_dir, &fd) < 0)
                        _exit(1);
                (void) write(p[1], "x", 1);
                if (hold != USEC_INFINITY)
                        (void) usleep(hold);
                else
                        (void) read(q[0], &c, 1); /* until the other end is closed */
                _exit(0);
        }
        safe_close(p[1]);
        safe_close(q[0]);
        ASSERT_TRUE(read(p[0], &c, 1) == 1);
        safe_close(p[0]);
        if (ret_release)
                *ret_release = q[1];
        else
                safe_close(q[1]);
        return pid;
}

/* Waits for the holder (closing *release first, when given). */
static void lock_holder_wait(pid_t pid, int *release) {
        int status = -1;

        if (release)
                *release = safe_close(*release);
        ASSERT_TRUE(waitpid(pid, &status, 0) == pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The late pass waits for a state lock held while the daemon's pass saves (DAEMON_PASS_SAVE_WAIT),
 * once its deadline is known and within a quarter of it; one held past that refuses it, as before
 * (the kernel's sync stays on), and never costs the deadline. */
TEST(late_pass_waits_for_a_save) {
        Late l = { .waits = true };
        RunDone n = { .done = on_late_done, .requester_waits = on_waits, .userdata = &l };
        Args a = late_args(config);
        int code = -1, release = -EBADF;
        usec_t t0;
        pid_t pid;

        pid = lock_holder(200 * USEC_PER_MSEC, NULL);
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        ASSERT_EQ(l.seen.calls, 1U);
        ASSERT_TRUE(l.seen.has_last);
        lock_holder_wait(pid, NULL);

        /* Held past DAEMON_PASS_SAVE_WAIT (DeadlineSec= 30 s by default): refused. */
        l = (Late) { .waits = true };
        a = late_args(config);
        pid = lock_holder(USEC_INFINITY, &release);
        ASSERT_ERR(verb_run(&a, &n, &code, NULL), EBUSY);
        ASSERT_EQ(l.seen.calls, 0U);

        /* DeadlineSec=200ms: it waits 50 ms from its start at most, not DAEMON_PASS_SAVE_WAIT. The
         * bound checked is the promise's, 20 times the wait, so that a loaded machine cannot fail it;
         * waiting the whole DAEMON_PASS_SAVE_WAIT (the code before the deadline counted) does. */
        l = (Late) { .waits = true };
        a = late_args(config);
        a.deadline = 200 * USEC_PER_MSEC;
        t0 = now(CLOCK_MONOTONIC);
        a.started = t0;
        ASSERT_ERR(verb_run(&a, &n, &code, NULL), EBUSY);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t0 < DAEMON_PASS_SAVE_WAIT);
        ASSERT_EQ(l.seen.calls, 0U);
        lock_holder_wait(pid, &release);
}

/* A handover as the unit's pass of a sleep leaves it: its "unit" line, with this boot's id. */
static void handover_with_unit_line(int dir_fd) {
        _cleanup_(handover_done) Handover h = {};
        char boot[33];
        sd_id128_t id;

        ASSERT_OK(sd_id128_get_boot(&id));
        (void) sd_id128_to_string(id, boot);
        ASSERT_OK(handover_load(dir_fd, &h));
        ASSERT_OK(handover_set_unit_pass(&h, now(CLOCK_BOOTTIME), boot, "0123456789abcdef0123456789abcdef"));
        ASSERT_OK(handover_save(dir_fd, &h));
}

static usec_t handover_unit_line(int dir_fd) {
        _cleanup_(handover_done) Handover h = {};

        ASSERT_OK(handover_load(dir_fd, &h));
        return h.unit_pass;
}

/* restore-knob drops the unit's "unit" line from the handover under the lock, and waits for it as
 * the late pass does: the daemon's pass of a sleep that ended at once (a fake /sys/power) may still
 * be saving that line. The post hook's (trigger "hook") does not wait: nothing there may hold up the
 * end of a resume, and the daemon's restore-knob comes after it. */
TEST(restore_knob_waits_for_a_save) {
        _cleanup_close_ int dir_fd = -EBADF;
        Args a = args();
        pid_t pid;

        a.sysfs = sysfs;
        ASSERT_TRUE((dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0);
        handover_with_unit_line(dir_fd);
        ASSERT_TRUE(handover_unit_line(dir_fd) != 0);

        pid = lock_holder(200 * USEC_PER_MSEC, NULL);
        ASSERT_OK(verb_restore_knob(&a));
        lock_holder_wait(pid, NULL);
        ASSERT_EQ(handover_unit_line(dir_fd), (usec_t) 0);

        /* The post hook's, the lock held 500 ms: it does not wait, the line stays (the daemon's drops
         * it). One that waited would get the lock and drop it. */
        handover_with_unit_line(dir_fd);
        pid = lock_holder(500 * USEC_PER_MSEC, NULL);
        a.trigger = "hook";
        ASSERT_OK(verb_restore_knob(&a));
        ASSERT_TRUE(handover_unit_line(dir_fd) != 0);
        lock_holder_wait(pid, NULL);
        a.trigger = "manual";
        ASSERT_OK(verb_restore_knob(&a));
        ASSERT_EQ(handover_unit_line(dir_fd), (usec_t) 0);
}

int main(void) {
        char path[160];

        if (geteuid() != 0) {
                fprintf(stderr, "skip: a pass syncs this machine's filesystems: needs root\n");
                return EXIT_TEST_SKIP;
        }
        log_setup();
        ASSERT_TRUE(mkdtemp(work) != NULL);
        snprintf(state_dir, sizeof state_dir, "%s/state", work);
        snprintf(config, sizeof config, "%s/suspend-sync.conf", work);
        snprintf(sysfs, sizeof sysfs, "%s/sys", work);
        write_text(config, "[Kernel]\nSyncOnSuspend=keep\n");
        snprintf(config_nocheap, sizeof config_nocheap, "%s/nocheap.conf", work);
        write_text(config_nocheap, "[Kernel]\nSyncOnSuspend=auto\nKeepCheapSync=no\n");
        snprintf(config_cheap, sizeof config_cheap, "%s/cheap.conf", work);
        write_text(config_cheap, "[Sync]\nDeferCommit=no\n[Kernel]\nSyncOnSuspend=auto\n");
        snprintf(config_off, sizeof config_off, "%s/off.conf", work);
        write_text(config_off, "[Kernel]\nSyncOnSuspend=off\n");
        /* The late pass's sysfs: the machine's, with a power/ of its own (never the kernel's knob). */
        ASSERT_TRUE(mkdir(sysfs, 0755) == 0);
        snprintf(path, sizeof path, "%s/power", sysfs);
        ASSERT_TRUE(mkdir(path, 0755) == 0);
        snprintf(path, sizeof path, "%s/power/sync_on_suspend", sysfs);
        write_text(path, "1\n");
        for (const char *const *d =
                     (const char *const[]) { "dev", "devices", "block", "class", "fs", "bus", NULL };
             *d; d++) {
                char target[32];

                snprintf(path, sizeof path, "%s/%s", sysfs, *d);
                snprintf(target, sizeof target, "/sys/%s", *d);
                ASSERT_TRUE(symlink(target, path) == 0);
        }

        /* debugfs for the late pass's evidence (without it the kernel's sync stays on whatever
         * happens, and requester_gone_keeps_kernel_sync has no contrast): mounted in a mount
         * namespace of this test's own, so nothing is left behind. */
        snprintf(debugfs, sizeof debugfs, "%s/debug", work);
        ASSERT_TRUE(mkdir(debugfs, 0755) == 0);
        if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
            mount("debugfs", debugfs, "debugfs", 0, NULL) == 0)
                debugfs_path = debugfs;
        else
                fprintf(stderr, "note: cannot mount debugfs in a namespace of our own: %m\n");

        RUN(main_pass_notifies);
        RUN(late_pass_notifies_after_knob);
        RUN(requester_gone_keeps_kernel_sync);
        RUN(unit_pass_late_skip);
        RUN(restore_knob_records_resume_without_hook);
        RUN(report_after_late_skip_marker);
        RUN(late_pass_waits_for_a_save);
        RUN(restore_knob_waits_for_a_save);

        /* Detached, not unmounted: on a loaded machine a process a pass forked (a child it abandoned
         * at its bound, a worker on its way out) may still hold a debugfs fd, and umount(2) failed
         * with EBUSY (twice in this stop, each time beside a benchmark); the namespace is ours, so
         * nothing outlives the last of us. */
        if (debugfs_path == debugfs)
                ASSERT_TRUE(umount2(debugfs, MNT_DETACH) == 0);
        snprintf(path, sizeof path, "rm -rf '%s'", work);
        return system(path) == 0 ? 0 : 1;
}
