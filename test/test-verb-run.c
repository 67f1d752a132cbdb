/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verb_run()'s RunDone (verbs.h), in process: the main pass tells its caller once, with its state
 * lock already released, its record saved and what its exit status and record will say; the late
 * pass once its knob is decided, having asked right before whether its requester still waits (the
 * daemon's late pass for the system-sleep hook, hook-socket.h), and keeps the kernel's sync on when
 * not. The daemon's pass reports through it (pass_child()), so logind's lock goes
 * before the pass logs its outcome. A manual pass of this machine (root: it syncs), its state and
 * configuration in a temporary directory on /dev/shm.
 */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf-read.h"
#include "config.h"
#include "context.h"
#include "evidence.h"
#include "executor.h"
#include "handover.h"
#include "late-skip.h"
#include "shared/fileio.h"
#include "shared/string-util.h"
#include "shared/strv.h"
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
                .debugfs = debugfs_path,
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
        /* Asked before the decision, and where the knob is written, again under the knob's lock
         * right before and right after the write (the gate, review AF F1). */
        ASSERT_EQ(l.asked, knob_value() == 0 ? 3U : 1U);
        ASSERT_TRUE(!l.asked_after_done);
        if (knob_value() == 1) {
                test_skip("this machine's late pass keeps the kernel's sync on by itself; "
                          "the gone requester's check above is not contrasted here");
        } else
                ASSERT_EQ(knob_value(), 0);
        knob_reset();
}

/* Review G, G8: a late pass that ends before its knob decision (here: its root cannot be opened)
 * puts back a knob that an earlier sleep left at 0 and whose restore never ran. */
TEST(late_pass_restores_leftover_knob) {
        char path[160];
        Args a = late_args(config);
        int code = -1;

        knob_reset();
        snprintf(path, sizeof path, "%s/power/sync_on_suspend", sysfs);
        write_text(path, "0\n");
        snprintf(path, sizeof path, "%s/knob.orig", state_dir);
        write_text(path, "1\n");
        a.root = "/nonexistent-suspend-sync-root";
        ASSERT_TRUE(verb_run(&a, NULL, &code, NULL) < 0);
        ASSERT_EQ(knob_value(), 1);
        ASSERT_TRUE(access(path, F_OK) < 0 && errno == ENOENT);

        /* Review H, H4: the lock refused (a manual run holds it): the kernel's sync goes on, the
         * record stays for the holder and the next restore. */
        {
                char knob[160];
                int lock_fd = -EBADF;

                snprintf(knob, sizeof knob, "%s/power/sync_on_suspend", sysfs);
                write_text(knob, "0\n");
                write_text(path, "1\n");
                ASSERT_OK(state_lock(state_dir, &lock_fd));
                a = late_args(config);
                ASSERT_ERR(verb_run(&a, NULL, &code, NULL), EBUSY);
                safe_close(lock_fd);
                ASSERT_EQ(knob_value(), 1);
                ASSERT_OK(access(path, F_OK));
        }
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
                test_skip("this machine's view or filesystems keep the late pass in (not its "
                          "speed: the bound is 1 h here)");
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

/* Review A's A1: the daemon's pass overran logind's wait, so systemd started the unit, whose pass
 * wrote its token and waits for the lock the daemon's pass holds; that pass then leaves the late
 * pass out (its marker, the link down; played here by the test, in the order the old code allowed)
 * and releases the lock. The unit's pass, which does not leave it out, must find the link back and
 * the stale marker gone: its mark is written again once it holds the lock. */
TEST(unit_pass_after_an_overrun) {
        static const char old[] = "0123456789abcdef0123456789abcdef\n";
        char path[160], mark[64] = "", skip[64];
        int lock_fd = -EBADF, status;
        usec_t until;
        pid_t pid;

        snprintf(path, sizeof path, "%s/unit-pass", state_dir);
        write_text(path, old);
        ASSERT_OK(state_lock(state_dir, &lock_fd));
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                Args a = args();
                int code = -1;

                safe_close(lock_fd);
                a.trigger = "unit";
                a.sysfs = sysfs;
                a.config = config_cheap;
                a.invocation_id = "0123456789abcdef0123456789abcdef"; /* run by systemd: waits */
                a.late_skip_below = 1; /* never quick enough: it wants the late pass */
                _exit(verb_run(&a, NULL, &code, NULL) < 0 ? 2 : 0);
        }
        /* its token written (without the lock), then: the earlier pass's late-skip, the link down */
        until = now(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC;
        while ((!state_has("unit-pass", mark, sizeof mark) || streq(mark, old)) &&
               now(CLOCK_MONOTONIC) < until)
                usleep(1000);
        ASSERT_TRUE(!streq(mark, old));
        snprintf(path, sizeof path, "%s/late-skip", state_dir);
        write_text(path, old);
        snprintf(path, sizeof path, "%s/" HOOK_LINK_FILE, state_dir);
        ASSERT_OK(unlink(path));
        safe_close(lock_fd);

        ASSERT_TRUE(waitpid(pid, &status, 0) == pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ASSERT_TRUE(state_has("unit-pass", skip, sizeof skip) && streq(skip, mark));
        ASSERT_TRUE(!state_has("late-skip", skip, sizeof skip));
        ASSERT_TRUE(hook_link_up());
        knob_reset();
}

/* The late pass's facts right before the write (linked with --wrap, test/meson.build): its second
 * sample of the mounts (context_sample_again()), the other system-sleep hooks as its reader listed
 * them (conf_read_finish()), and its look at bdis no superblock of its sample explains
 * (evidence_unexplained_dirty(), whose list of known bdis is kept here). Each may be made to fail. */
int __real_context_sample_again(const Args *a, PlanScope scope, ContextFlags flags, const Context *c,
                                usec_t until, Sample **ret);
int __wrap_context_sample_again(const Args *a, PlanScope scope, ContextFlags flags, const Context *c,
                                usec_t until, Sample **ret);
int __real_conf_read_finish(ConfReader *x, PolicySources **ret, char ***ret_hooks, int *ret_hooks_error,
                            char **ret_stuck_at);
int __wrap_conf_read_finish(ConfReader *x, PolicySources **ret, char ***ret_hooks, int *ret_hooks_error,
                            char **ret_stuck_at);
int __real_evidence_unexplained_dirty(int debugfs_fd, int sysfs_fd, const char *const *known, size_t n_known,
                                      const char *const *types, size_t n_types, char **ret_name,
                                      const char **ret_why);
int __wrap_evidence_unexplained_dirty(int debugfs_fd, int sysfs_fd, const char *const *known, size_t n_known,
                                      const char *const *types, size_t n_types, char **ret_name,
                                      const char **ret_why);

static unsigned sample_again_calls, unexplained_calls;
static int sample_again_fails, hooks_fail, unexplained_fails; /* errno, or 0 */
static char known_seen[256][32];
static size_t n_known_seen;

int __wrap_context_sample_again(const Args *a, PlanScope scope, ContextFlags flags, const Context *c,
                                usec_t until, Sample **ret) {
        sample_again_calls++;
        if (sample_again_fails != 0)
                return -sample_again_fails;
        return __real_context_sample_again(a, scope, flags, c, until, ret);
}

int __wrap_conf_read_finish(ConfReader *x, PolicySources **ret, char ***ret_hooks, int *ret_hooks_error,
                            char **ret_stuck_at) {
        int r = __real_conf_read_finish(x, ret, ret_hooks, ret_hooks_error, ret_stuck_at);

        /* the hooks' listing failed, the configuration read all the same */
        if (r >= 0 && hooks_fail != 0 && ret_hooks) {
                *ret_hooks = strv_free(*ret_hooks);
                *ret_hooks_error = -hooks_fail;
        }
        return r;
}

int __wrap_evidence_unexplained_dirty(int debugfs_fd, int sysfs_fd, const char *const *known, size_t n_known,
                                      const char *const *types, size_t n_types, char **ret_name,
                                      const char **ret_why) {
        unexplained_calls++;
        n_known_seen = 0;
        for (size_t i = 0; i < n_known && n_known_seen < ELEMENTSOF(known_seen); i++)
                snprintf(known_seen[n_known_seen++], sizeof known_seen[0], "%s", known[i]);
        if (unexplained_fails != 0)
                return -unexplained_fails;
        return __real_evidence_unexplained_dirty(debugfs_fd, sysfs_fd, known, n_known, types, n_types,
                                                 ret_name, ret_why);
}

static bool known_has(const char *name) {
        for (size_t i = 0; i < n_known_seen; i++)
                if (streq(known_seen[i], name))
                        return true;
        return false;
}

/* A late pass with conf that this machine lets turn the kernel's sync off (its control); false, with
 * a note, when this machine keeps it on by itself. */
static bool late_pass_turns_off(const char *conf, const char *what) {
        Late l = { .waits = true };
        RunDone n = { .done = on_late_done, .requester_waits = on_waits, .userdata = &l };
        Args a = late_args(conf);
        int code = -1;

        knob_reset();
        sample_again_calls = unexplained_calls = 0;
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        if (knob_value() == 0) {
                /* it looked at the bdis and sampled again before the write */
                ASSERT_TRUE(unexplained_calls > 0 && sample_again_calls > 0);
                return true;
        }
        test_skip("this machine's late pass keeps the kernel's sync on by itself; %s is not "
                  "contrasted here",
                  what);
        knob_reset();
        return false;
}

/* One more late pass with conf after the control: it keeps the kernel's sync on, and puts back the
 * 0 the control left (its record gone). */
static void late_pass_keeps(const char *conf) {
        Late l = { .waits = true };
        RunDone n = { .done = on_late_done, .requester_waits = on_waits, .userdata = &l };
        Args a = late_args(conf);
        char path[160];
        int code = -1;

        ASSERT_EQ(knob_value(), 0);
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        ASSERT_EQ(knob_value(), 1);
        snprintf(path, sizeof path, "%s/knob.orig", state_dir);
        ASSERT_TRUE(access(path, F_OK) < 0 && errno == ENOENT);
}

/* Review N, N1 and N2: the mounts cannot be sampled again right before the write: that is no proof
 * that nothing changed, and the kernel's sync stays on (put back on over the control's 0), in off
 * and in auto. */
TEST(second_sample_fails_keeps_kernel_sync) {
        const char *confs[] = { config_off, config_nocheap };

        for (size_t i = 0; i < ELEMENTSOF(confs); i++) {
                if (!late_pass_turns_off(confs[i], "a second sample that fails"))
                        continue;
                sample_again_fails = EIO;
                late_pass_keeps(confs[i]);
                sample_again_fails = 0;
                knob_reset();
        }
}

/* Whether a device without a mounted filesystem holds dirty data cannot be told (debugfs bdi/ not
 * read): kept on in every mode. */
TEST(unexplained_unknown_keeps_kernel_sync) {
        const char *confs[] = { config_off, config_nocheap };

        for (size_t i = 0; i < ELEMENTSOF(confs); i++) {
                if (!late_pass_turns_off(confs[i], "bdis that cannot be read"))
                        continue;
                unexplained_fails = EIO;
                late_pass_keeps(confs[i]);
                unexplained_fails = 0;
                knob_reset();
        }
}

/* Whether another system-sleep hook runs alongside is not known (its listing failed): auto keeps
 * the kernel's sync on, as for a hook found. */
TEST(hooks_unknown_keep_kernel_sync_in_auto) {
        if (!late_pass_turns_off(config_nocheap, "a hooks' listing that fails"))
                return;
        hooks_fail = EIO;
        late_pass_keeps(config_nocheap);
        hooks_fail = 0;
        knob_reset();
}

/* Review AQ (#77): a handover with a line the late pass cannot read: what the unit's pass of this
 * sleep left unsynced is not known, and the kernel's sync stays on (put back on over the control's
 * 0), in auto and in off. */
TEST(bad_handover_keeps_kernel_sync) {
        const char *confs[] = { config_off, config_nocheap };
        char path[192];

        snprintf(path, sizeof path, "%s/handover", state_dir);
        for (size_t i = 0; i < ELEMENTSOF(confs); i++) {
                if (!late_pass_turns_off(confs[i], "a handover that cannot be read"))
                        continue;
                write_text(path, "unsynced garbage\n");
                late_pass_keeps(confs[i]);
                (void) unlink(path);
                knob_reset();
        }
}

/* Review AW, L3: a late pass with a read-only state directory cannot read what the unit's pass of
 * this sleep left unsynced: the kernel's sync stays on, and its reason says that, not "a mount was
 * left unsynced", which no mount was. The messages are read off the journal datagrams. */
TEST(read_only_state_dir_said) {
        char ro[160], buf[JOURNAL_DATAGRAM_MAX + 1];
        Late l = { .waits = true };
        RunDone n = { .done = on_late_done, .requester_waits = on_waits, .userdata = &l };
        Args a = late_args(config_nocheap);
        bool said = false, blamed = false;
        int code = -1, sv[2];
        ssize_t k;

        if (debugfs_path != debugfs) {
                test_skip("no mount namespace of our own");
                return;
        }
        snprintf(ro, sizeof ro, "%s/ro-state", work);
        ASSERT_TRUE(mkdir(ro, 0755) == 0);
        ASSERT_TRUE(mount(ro, ro, NULL, MS_BIND, NULL) == 0);
        ASSERT_TRUE(mount(NULL, ro, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0);
        a.state_dir = ro;
        knob_reset();
        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        log_set_journal_fd_for_test(sv[0]);
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        log_set_journal_fd_for_test(-1);
        while ((k = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT)) > 0) {
                buf[k] = 0;
                if (!strstr(buf, "MESSAGE=Leaving the kernel's own sync on: "))
                        continue;
                said = said || strstr(buf, "what the unit's pass of this sleep left unsynced is not known");
                blamed = blamed || strstr(buf, "a mount was left unsynced");
        }
        close(sv[1]);
        ASSERT_EQ(knob_value(), 1);
        ASSERT_TRUE(said);
        ASSERT_TRUE(!blamed);
        ASSERT_TRUE(umount2(ro, MNT_DETACH) == 0);
        knob_reset();
}

/* Review AQ (#73), review G's G1: a FUSE mount made after the unit's pass of the sleep. The late pass
 * leaves it out and the unit's pass never saw it, so with SyncOnSuspend=off that pass's record does
 * not vouch for it and the kernel's sync stays on. The control: the late pass alone turns it off here
 * (everything else covered). The mount has no server: the late pass asks nothing of it (statmount,
 * sysfs and debugfs only), as of a frozen one. */
TEST(mounted_after_unit_pass_keeps_kernel_sync) {
        _cleanup_close_ int fuse_fd = -EBADF;
        char mnt[160], opts[128];
        Late l = { .waits = true };
        RunDone n = { .done = on_late_done, .requester_waits = on_waits, .userdata = &l };
        Args a = args();
        int code = -1;

        if (debugfs_path != debugfs) {
                test_skip("no mount namespace of our own");
                return;
        }
        fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fuse_fd < 0) {
                test_skip("no /dev/fuse: %m");
                return;
        }
        if (!late_pass_turns_off(config_off, "a FUSE mount made after the unit's pass"))
                return;
        knob_reset();
        a.trigger = "unit";
        a.sysfs = sysfs;
        a.config = config_off;
        ASSERT_OK(verb_run(&a, NULL, &code, NULL));

        snprintf(mnt, sizeof mnt, "%s/fuse", work);
        ASSERT_OK(mkdir(mnt, 0755));
        snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse_fd);
        ASSERT_OK(mount("ss-vr-fuse", mnt, "fuse.ssvr", MS_NOSUID | MS_NODEV, opts));
        /* No server, ever: the connection aborted, so that anything asking it (this test's cleanup
         * after a failed check) gets ENOTCONN at once instead of waiting for its INIT. */
        fuse_fd = safe_close(fuse_fd);
        a = late_args(config_off);
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        ASSERT_EQ(knob_value(), 1);
        ASSERT_OK(umount2(mnt, MNT_DETACH));
        knob_reset();
}

/* The MAJ:MIN of a mount in this test's namespace (mountinfo's third field), into buf. */
static bool mount_devnum(const char *mount_point, char *buf, size_t size) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[4096], mp[PATH_MAX], dev[32];
        bool found = false;

        ASSERT_TRUE(f != NULL);
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "%*s %*s %31s %*s %4095s", dev, mp) == 2 && streq(mp, mount_point)) {
                        snprintf(buf, size, "%s", dev);
                        found = true; /* the last one: the mount on top */
                }
        return found;
}

/* Review N, N1: a pseudo filesystem or an overlay has no bdi; a bdi of its number is another
 * superblock's (one that took the number of one gone since), so the late pass does not count it
 * among the bdis its sample explains. A tmpfs and an overlay mounted in this test's namespace: their
 * numbers are not in the list; the root filesystem's is (on a block device). */
TEST(pseudo_overlay_numbers_explain_no_bdi) {
        char tmp[160], ov[160], lower[192], upper[192], wd[192], opts[640], tmp_dev[32], ov_dev[32],
                root_dev[32];

        if (debugfs_path != debugfs) {
                test_skip("no mount namespace of our own");
                return;
        }
        snprintf(tmp, sizeof tmp, "%s/pseudo", work);
        snprintf(ov, sizeof ov, "%s/ov", work);
        ASSERT_OK(mkdir(tmp, 0755));
        ASSERT_OK(mkdir(ov, 0755));
        ASSERT_OK(mount("ss-vr-tmp", tmp, "tmpfs", 0, "size=1m"));
        snprintf(lower, sizeof lower, "%s/l", tmp);
        snprintf(upper, sizeof upper, "%s/u", tmp);
        snprintf(wd, sizeof wd, "%s/w", tmp);
        ASSERT_OK(mkdir(lower, 0755));
        ASSERT_OK(mkdir(upper, 0755));
        ASSERT_OK(mkdir(wd, 0755));
        snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, wd);
        if (mount("ss-vr-ov", ov, "overlay", 0, opts) < 0) {
                test_skip("no overlay: %m");
                ASSERT_OK(umount2(tmp, MNT_DETACH));
                return;
        }
        ASSERT_TRUE(mount_devnum(tmp, tmp_dev, sizeof tmp_dev));
        ASSERT_TRUE(mount_devnum(ov, ov_dev, sizeof ov_dev));
        ASSERT_TRUE(mount_devnum("/", root_dev, sizeof root_dev));

        if (late_pass_turns_off(config_off, "the bdis a pseudo filesystem or an overlay explains")) {
                /* the list seen (the root filesystem's number, where it is a block device's) */
                ASSERT_TRUE(n_known_seen > 0 && (startswith(root_dev, "0:") || known_has(root_dev)));
                ASSERT_TRUE(!known_has(tmp_dev));
                ASSERT_TRUE(!known_has(ov_dev));
        }
        knob_reset();
        ASSERT_OK(umount2(ov, MNT_DETACH));
        ASSERT_OK(umount2(tmp, MNT_DETACH));
}

/* The late pass's FUSE evidence (evidence.h) on fixtures of this test's mount namespace, bind-mounted
 * over the kernel's files: a proc/meminfo whose Writeback the test sets (the machine's otherwise),
 * and a proc/sys/vm/stat_refresh that is a plain file, whose size tells whether the pass refreshed
 * the system's writeback count, which it does only to read FUSE evidence. Linked with
 * --wrap=executor_run (test/meson.build): the fixture's Writeback changes as the workers start. */
static char meminfo_text[32768], meminfo_fixture[96], refresh_fixture[96];
static long writeback_at_workers = -1;    /* kB; -1: unchanged */
static bool refresh_fails_until_workers;  /* stat_refresh is /dev/full (writes fail) until then */
static usec_t writeback_at_workers_after; /* ... changed this long after the workers are called */

int __real_executor_run(ExecJob *jobs, size_t n_jobs, unsigned max_parallel, usec_t deadline,
                        const ExecOps *ops);
int __wrap_executor_run(ExecJob *jobs, size_t n_jobs, unsigned max_parallel, usec_t deadline,
                        const ExecOps *ops);

/* The machine's meminfo with Writeback: writeback_kb, written over the fixture in place (the same
 * inode: what the bind mount shows). */
static void meminfo_set(long writeback_kb) {
        FILE *f;

        ASSERT_TRUE((f = fopen(meminfo_fixture, "we")) != NULL);
        for (const char *l = meminfo_text; *l;) {
                const char *end = strchrnul(l, '\n');

                if (startswith(l, "Writeback:"))
                        fprintf(f, "Writeback:      %8ld kB\n", writeback_kb);
                else
                        fprintf(f, "%.*s\n", (int) (end - l), l);
                l = *end ? end + 1 : end;
        }
        ASSERT_TRUE(fclose(f) == 0);
}

int __wrap_executor_run(ExecJob *jobs, size_t n_jobs, unsigned max_parallel, usec_t deadline,
                        const ExecOps *ops) {
        if (refresh_fails_until_workers) {
                ASSERT_OK(umount2("/proc/sys/vm/stat_refresh", MNT_DETACH));
                ASSERT_OK(mount(refresh_fixture, "/proc/sys/vm/stat_refresh", NULL, MS_BIND, NULL));
                refresh_fails_until_workers = false;
        }
        if (writeback_at_workers >= 0) {
                if (writeback_at_workers_after > 0) {
                        struct timespec ts;
                        (void) nanosleep(timespec_store(&ts, writeback_at_workers_after), NULL);
                }
                meminfo_set(writeback_at_workers);
        }
        return __real_executor_run(jobs, n_jobs, max_parallel, deadline, ops);
}

static bool proc_fixture_mount(void) {
        FILE *f;
        size_t n;

        ASSERT_TRUE((f = fopen("/proc/meminfo", "re")) != NULL);
        n = fread(meminfo_text, 1, sizeof meminfo_text - 1, f);
        meminfo_text[n] = 0;
        fclose(f);
        ASSERT_TRUE(strstr(meminfo_text, "\nWriteback:") != NULL);
        snprintf(meminfo_fixture, sizeof meminfo_fixture, "%s/meminfo", work);
        snprintf(refresh_fixture, sizeof refresh_fixture, "%s/stat_refresh", work);
        meminfo_set(0);
        write_text(refresh_fixture, "");
        if (mount(meminfo_fixture, "/proc/meminfo", NULL, MS_BIND, NULL) < 0) {
                test_skip("cannot bind-mount a fixture over /proc/meminfo: %m");
                return false;
        }
        if (mount(refresh_fixture, "/proc/sys/vm/stat_refresh", NULL, MS_BIND, NULL) < 0) {
                test_skip("cannot bind-mount a fixture over /proc/sys/vm/stat_refresh: %m");
                ASSERT_OK(umount2("/proc/meminfo", MNT_DETACH));
                return false;
        }
        return true;
}

static void proc_fixture_umount(void) {
        ASSERT_OK(umount2("/proc/sys/vm/stat_refresh", MNT_DETACH));
        ASSERT_OK(umount2("/proc/meminfo", MNT_DETACH));
        writeback_at_workers = -1;
}

/* Whether a plain FUSE mount of a user (user_id= not 0) other than this test's is in the mount table
 * of any process: the late pass reads FUSE evidence for it, whatever this test mounts. */
static bool other_user_fuse(void) {
        _cleanup_closedir_ DIR *d = opendir("/proc");
        struct dirent *de;
        bool found = false;

        ASSERT_TRUE(d != NULL);
        while (!found && (de = readdir(d))) {
                _cleanup_free_ char *text = NULL;
                char path[sizeof de->d_name + 16];

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof path, "/proc/%s/mountinfo", de->d_name);
                if (read_full_file_at(AT_FDCWD, path, 64U << 20, &text, NULL) < 0)
                        continue; /* gone, or a kernel thread */
                for (char *l = text, *end; !found && *l; l = *end ? end + 1 : end) {
                        char type[64], source[64], opts[512];
                        const char *sep, *u;

                        end = strchrnul(l, '\n');
                        sep = strstr(l, " - ");
                        if (!sep || sep > end || sscanf(sep, " - %63s %63s %511s", type, source, opts) != 3)
                                continue;
                        u = strstr(opts, "user_id=");
                        found = (streq(type, "fuse") || startswith(type, "fuse.")) &&
                                !startswith(source, "ss-vr-") && u && u[8] != '0';
                }
        }
        return found;
}

/* A late pass (SyncOnSuspend=auto) within deadline with a FUSE mount of user uid that it leaves out,
 * the fixture's Writeback writeback_kb before it and at_workers (-1: unchanged) once its workers
 * start. The mount's reason in its record goes to reason; returns whether the pass refreshed the
 * system's writeback count. The mount has no server: the late pass asks nothing of it. */
static bool late_pass_fuse(unsigned uid, long writeback_kb, long at_workers, usec_t deadline, char *reason,
                           size_t size) {
        _cleanup_(run_record_done) RunRecord last = {};
        _cleanup_close_ int fuse_fd = -EBADF;
        Late l = { .waits = true };
        RunDone n = { .done = on_late_done, .requester_waits = on_waits, .userdata = &l };
        Args a = late_args(config_nocheap);
        char mnt[160], opts[128];
        bool has = false, found = false;
        struct stat st;
        usec_t t;
        int code = -1;

        knob_reset();
        fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        ASSERT_TRUE(fuse_fd >= 0);
        snprintf(mnt, sizeof mnt, "%s/fuse-%u", work, uid);
        ASSERT_OK(mkdir(mnt, 0755));
        snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=%u,group_id=%u", fuse_fd, uid, uid);
        ASSERT_OK(mount("ss-vr-fuse", mnt, "fuse.ssvr", MS_NOSUID | MS_NODEV, opts));
        fuse_fd = safe_close(fuse_fd); /* aborted: anything that asks gets ENOTCONN at once */

        meminfo_set(writeback_kb);
        writeback_at_workers = at_workers;
        write_text(refresh_fixture, "");
        a.deadline = deadline;
        t = now(CLOCK_MONOTONIC);
        ASSERT_OK(verb_run(&a, &n, &code, NULL));
        t = now(CLOCK_MONOTONIC) - t;
        writeback_at_workers = -1;

        ASSERT_OK(state_load(state_dir, &last, &has, NULL, NULL));
        ASSERT_TRUE(has);
        for (size_t i = 0; i < last.n_mounts && !found; i++)
                if (streq(last.mounts[i].mount_point, mnt)) {
                        snprintf(reason, size, "%s", last.mounts[i].reason ?: "");
                        found = true;
                }
        ASSERT_TRUE(found);
        fprintf(stderr, "  user_id=%u, writeback %ld kB, at the workers %ld kB: pass %.3fs, %s: %s\n", uid,
                writeback_kb, at_workers, (double) t / USEC_PER_SEC, mnt, reason);
        ASSERT_OK(umount2(mnt, MNT_DETACH));
        ASSERT_OK(rmdir(mnt));
        ASSERT_OK(stat(refresh_fixture, &st));
        return st.st_size > 0;
}

/* What late_pass_fuse() needs: a mount namespace of our own, /dev/fuse, the proc fixtures mounted
 * (proc_fixture_umount() after). Skips the test when not. */
static bool fuse_fixture_ready(void) {
        if (debugfs_path != debugfs) {
                test_skip("no mount namespace of our own");
                return false;
        }
        if (access("/dev/fuse", R_OK | W_OK) < 0) {
                test_skip("no /dev/fuse: %m");
                return false;
        }
        return proc_fixture_mount();
}

/* Review AR (#02): FUSE evidence is read only for a plain FUSE superblock of an unprivileged server
 * (plan.c fuse_evidence_applies()); the late pass leaves out other superblocks too (a root-owned
 * FUSE, NFS, an overlay), whose lists and the system's writeback prove nothing. For them it neither
 * refreshes the system's count nor waits (up to a second, before its workers) for writeback in
 * flight, and nothing proves them clean (the record's own check, run.c, ignores evidence for them
 * too). A root-owned FUSE mount whose bdi lists are empty, with no writeback anywhere; the control:
 * the same mount of user 1000, proven clean (the count refreshed). */
TEST(fuse_evidence_only_for_user_fuse) {
        char reason[1024];
        bool refreshed;

        if (!fuse_fixture_ready())
                return;
        if (other_user_fuse()) {
                test_skip("a FUSE mount of a user is mounted here: the late pass reads FUSE evidence anyway");
                proc_fixture_umount();
                return;
        }
        refreshed = late_pass_fuse(0, 0, -1, 10 * USEC_PER_SEC, reason, sizeof reason);
        if (refreshed && other_user_fuse())
                test_skip("a FUSE mount of a user was mounted during the pass: the late pass read FUSE "
                          "evidence for it");
        else
                ASSERT_TRUE(!refreshed);
        ASSERT_TRUE(!strstr(reason, "proven clean"));
        ASSERT_EQ(knob_value(), 1);

        ASSERT_TRUE(late_pass_fuse(1000, 0, -1, 10 * USEC_PER_SEC, reason, sizeof reason));
        ASSERT_TRUE(startswith(reason, "late pass: FUSE, proven clean"));
        proc_fixture_umount();
        knob_reset();
}

/* The control of a FUSE evidence test: no writeback at either look, both refreshes working: the
 * mount of user 1000 proven clean. Then the fixtures go. */
static void fuse_control_and_done(void) {
        char reason[1024];

        ASSERT_TRUE(late_pass_fuse(1000, 0, 0, 10 * USEC_PER_SEC, reason, sizeof reason));
        ASSERT_TRUE(startswith(reason, "late pass: FUSE, proven clean"));
        proc_fixture_umount();
        knob_reset();
}

/* Review AR (#03), review AP, AP-1: before the workers a user's FUSE mount lists no dirty inode, but
 * pages are under writeback (at its server) for the whole of the pre-look, and none once the workers
 * start: the look after the workers alone would prove the mount clean, with the server's data possibly
 * written into a filesystem already synced. The pre-look decides on the system's writeback count,
 * not on the lists alone: not proven clean, the knob stays on. A short deadline keeps its wait (a
 * quarter of what is left) short. The control: no writeback at either look, proven clean. */
TEST(fuse_prelook_writeback_keeps_unproven) {
        char reason[1024];

        if (!fuse_fixture_ready())
                return;
        ASSERT_TRUE(late_pass_fuse(1000, 4, 0, 2 * USEC_PER_SEC, reason, sizeof reason));
        ASSERT_TRUE(strstr(reason, "FUSE, not proven clean: before this pass's workers") != NULL);
        ASSERT_TRUE(strstr(reason, "pages are under writeback") != NULL);
        ASSERT_EQ(knob_value(), 1);

        fuse_control_and_done();
}

/* The look after the workers forks its child ahead, before them (evidence_global_prepare()): the
 * refresh and the read must still be made when that look reads the lists, after the workers, not at
 * the fork. No page under writeback before the workers (the pre-look proves the mount clean), 4 kB
 * once they start (a FUSE server's write answered meanwhile; 50 ms after the workers are called, so
 * that a child forked before them has run by then): a read made at the fork would prove
 * the mount clean and turn the knob off. The control: none at either look, proven clean. */
TEST(fuse_after_look_reads_after_workers) {
        char reason[1024];

        if (!fuse_fixture_ready())
                return;
        /* A child forked before the workers has had the time to read by then (were it to read). */
        writeback_at_workers_after = 50 * USEC_PER_MSEC;
        ASSERT_TRUE(late_pass_fuse(1000, 0, 4, 10 * USEC_PER_SEC, reason, sizeof reason));
        writeback_at_workers_after = 0;
        ASSERT_TRUE(strstr(reason, "FUSE, not proven clean") != NULL);
        ASSERT_TRUE(strstr(reason, "before this pass's workers") == NULL);
        ASSERT_TRUE(strstr(reason, "pages are under writeback") != NULL);
        ASSERT_EQ(knob_value(), 1);

        fuse_control_and_done();
}

/* Review AY: the first look's refresh of the system's count fails (as under a lockdown LSM, or a CPU
 * that cannot run its kworker, where it times out), and the one after the workers works, with no page
 * under writeback at either: a first look that took the failure for "none in flight" would let the
 * look after the workers prove the mount clean alone (review AP, AP-1's hole). /dev/full stands in for
 * that stat_refresh until the workers start (its writes fail with ENOSPC). The control: both work. */
TEST(fuse_prelook_refresh_fails_keeps_unproven) {
        char reason[1024];

        if (!fuse_fixture_ready())
                return;
        ASSERT_OK(umount2("/proc/sys/vm/stat_refresh", MNT_DETACH));
        ASSERT_OK(mount("/dev/full", "/proc/sys/vm/stat_refresh", NULL, MS_BIND, NULL));
        refresh_fails_until_workers = true;
        ASSERT_TRUE(late_pass_fuse(1000, 0, 0, 10 * USEC_PER_SEC, reason, sizeof reason));
        ASSERT_TRUE(!refresh_fails_until_workers); /* the workers ran: the refresh after them works */
        ASSERT_TRUE(strstr(reason, "FUSE, not proven clean: before this pass's workers") != NULL);
        ASSERT_TRUE(strstr(reason, "could not be read exactly") != NULL);
        ASSERT_EQ(knob_value(), 1);

        fuse_control_and_done();
}

/* Review BE (review AZ, AZ-1's glue): a unit's pass that skips a user's plain FUSE mount proven clean
 * lists it in its handover as synced (run_handover_proven_clean()), so that a late pass that cannot
 * prove it clean itself may lean on that record as on a mount the unit's pass synced. test-plan
 * calls the function; this checks that the pass does. A FUSE mount of user 1000 without a server,
 * its bdi's lists empty, the fixture's Writeback 0: skipped "proven clean", and in the handover; the
 * control: the same mount with pages under writeback is synced (a worker meets ENOTCONN) and not
 * listed. */
TEST(unit_pass_lists_proven_clean_fuse) {
        _cleanup_close_ int state_fd = -EBADF;
        char mnt[160], opts[128], devnum[32];
        unsigned maj, min;

        if (!fuse_fixture_ready())
                return;
        snprintf(mnt, sizeof mnt, "%s/fuse-clean", work);
        ASSERT_OK(mkdir(mnt, 0755));
        for (long writeback_kb = 0; writeback_kb <= 4; writeback_kb += 4) {
                _cleanup_(run_record_done) RunRecord last = {};
                _cleanup_(handover_done) Handover h = {};
                _cleanup_close_ int fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
                Args a = args();
                const char *reason = NULL;
                bool has = false, listed = false;
                int code = -1;

                ASSERT_TRUE(fuse_fd >= 0);
                snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=1000,group_id=1000", fuse_fd);
                ASSERT_OK(mount("ss-vr-fuse", mnt, "fuse.ssvr", MS_NOSUID | MS_NODEV, opts));
                fuse_fd = safe_close(fuse_fd); /* aborted: anything that asks gets ENOTCONN at once */
                ASSERT_TRUE(mount_devnum(mnt, devnum, sizeof devnum));
                ASSERT_EQ(sscanf(devnum, "%u:%u", &maj, &min), 2);
                meminfo_set(writeback_kb);
                a.trigger = "unit";
                a.sysfs = sysfs;
                a.config = config_nocheap;
                ASSERT_OK(verb_run(&a, NULL, &code, NULL));

                ASSERT_OK(state_load(state_dir, &last, &has, NULL, NULL));
                ASSERT_TRUE(has);
                for (size_t i = 0; i < last.n_mounts; i++)
                        if (streq(last.mounts[i].mount_point, mnt))
                                reason = last.mounts[i].reason;
                ASSERT_TRUE(reason != NULL);
                fprintf(stderr, "  writeback %ld kB: %s: %s\n", writeback_kb, mnt, reason);
                state_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ASSERT_TRUE(state_fd >= 0);
                ASSERT_OK(handover_load(state_fd, &h));
                state_fd = safe_close(state_fd);
                for (size_t i = 0; i < h.n_synced; i++) /* its mount's id aside (handover_unit_saw()) */
                        listed = listed || h.synced[i] == makedev(maj, min);
                if (writeback_kb == 0) {
                        ASSERT_TRUE(startswith(reason, "FUSE, proven clean"));
                        ASSERT_TRUE(listed);
                } else {
                        ASSERT_TRUE(!startswith(reason, "FUSE, proven clean"));
                        ASSERT_TRUE(!listed);
                }
                ASSERT_OK(umount2(mnt, MNT_DETACH));
        }
        ASSERT_OK(rmdir(mnt));
        proc_fixture_umount();
        knob_reset();
}

/* Review I, I4 (and L1): restore-knob with the daemon's token (--token=) ends that pass's cycle only.
 * The "unit" line of another pass (whose mark a restore without a token removed) and what that pass
 * left unsynced stay; with that pass's own token, or none, the list goes. */
TEST(restore_knob_keeps_another_pass_record) {
        static const char other[] = "fedcba9876543210fedcba9876543210",
                          own[] = "0123456789abcdef0123456789abcdef";
        const char *const tokens[] = { other, own, NULL };
        _cleanup_close_ int dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ASSERT_TRUE(dir_fd >= 0);
        for (size_t i = 0; i < ELEMENTSOF(tokens); i++) {
                _cleanup_(handover_done) Handover h = {}, back = {};
                Args a = args();
                char path[160];

                snprintf(path, sizeof path, "%s/" HANDOVER_UNIT_MARK_FILE, state_dir);
                ASSERT_TRUE(unlink(path) == 0 || errno == ENOENT); /* a restore of no token removed it */
                ASSERT_OK(handover_set_unit_pass(&h, now(CLOCK_BOOTTIME), own, own));
                ASSERT_OK(handover_add_unsynced(&h, makedev(8, 1), now(CLOCK_BOOTTIME)));
                ASSERT_OK(handover_save(dir_fd, &h));
                a.sysfs = sysfs;
                a.token = tokens[i];
                ASSERT_OK(verb_restore_knob(&a));
                ASSERT_OK(handover_load(dir_fd, &back));
                ASSERT_EQ(back.n_unsynced, i == 0 ? 1U : 0U);
        }
        knob_reset();
}

int main(void) {
        char path[160];

        if (geteuid() != 0) {
                fprintf(stderr, "skip: a pass syncs this machine's filesystems: needs root\n");
                return EXIT_TEST_SKIP;
        }
        log_setup();
        ASSERT_TRUE(test_mkdtemp(work) != NULL);
        snprintf(state_dir, sizeof state_dir, "%s/state", work);
        snprintf(config, sizeof config, "%s/suspend-sync.conf", work);
        snprintf(sysfs, sizeof sysfs, "%s/sys", work);
        write_text(config, "[Sync]\nWritebackFirst=no\n[Kernel]\nSyncOnSuspend=keep\n");
        snprintf(config_nocheap, sizeof config_nocheap, "%s/nocheap.conf", work);
        write_text(config_nocheap,
                   "[Sync]\nWritebackFirst=no\n[Kernel]\nSyncOnSuspend=auto\nKeepCheapSync=no\n");
        snprintf(config_cheap, sizeof config_cheap, "%s/cheap.conf", work);
        write_text(config_cheap, "[Sync]\nDeferCommit=no\nWritebackFirst=no\n[Kernel]\nSyncOnSuspend=auto\n");
        snprintf(config_off, sizeof config_off, "%s/off.conf", work);
        write_text(config_off, "[Sync]\nWritebackFirst=no\n[Kernel]\nSyncOnSuspend=off\n");
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
        else {
                test_skip("cannot mount debugfs in a namespace of our own: %m");
        }

        RUN(main_pass_notifies);
        RUN(late_pass_notifies_after_knob);
        RUN(requester_gone_keeps_kernel_sync);
        RUN(late_pass_restores_leftover_knob);
        RUN(unit_pass_late_skip);
        RUN(restore_knob_records_resume_without_hook);
        RUN(unit_pass_after_an_overrun);
        RUN(second_sample_fails_keeps_kernel_sync);
        RUN(unexplained_unknown_keeps_kernel_sync);
        RUN(hooks_unknown_keep_kernel_sync_in_auto);
        RUN(bad_handover_keeps_kernel_sync);
        RUN(read_only_state_dir_said);
        RUN(mounted_after_unit_pass_keeps_kernel_sync);
        RUN(pseudo_overlay_numbers_explain_no_bdi);
        RUN(fuse_evidence_only_for_user_fuse);
        RUN(fuse_prelook_writeback_keeps_unproven);
        RUN(fuse_after_look_reads_after_workers);
        RUN(fuse_prelook_refresh_fails_keeps_unproven);
        RUN(unit_pass_lists_proven_clean_fuse);
        RUN(restore_knob_keeps_another_pass_record);

        /* Detached, not unmounted: on a loaded machine a process a pass forked (a child it abandoned
         * at its bound, a worker on its way out) may still hold a debugfs fd, and umount(2) failed
         * with EBUSY (twice in this stop, each time beside a benchmark); the namespace is ours, so
         * nothing outlives the last of us. */
        if (debugfs_path == debugfs)
                ASSERT_TRUE(umount2(debugfs, MNT_DETACH) == 0);
        snprintf(path, sizeof path, "rm -rf '%s'", work);
        if (system(path) != 0)
                return 1;
        /* a check this machine did not let contrast with its control is no check passed (review AQ:
         * mutants of the late pass's facts lived through runs on a busy machine) */
        return test_result();
}
