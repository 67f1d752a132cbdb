/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-id128.h>
#include <systemd/sd-login.h>

#include "config.h"
#include "context.h"
#include "daemon.h"
#include "defer-commit.h"
#include "evidence.h"
#include "executor.h"
#include "handover.h"
#include "shared/devnum-util.h"
#include "shared/lock-util.h"
#include "shared/proc-util.h"
#include "history.h"
#include "kernel-knob.h"
#include "late-skip.h"
#include "lock-holder.h"
#include "writeback.h"
#include "log.h"
#include "meminfo.h"
#include "manager.h"
#include "message-ids.h"
#include "notify.h"
#include "raw-cache.h"
#include "run.h"
#include "state.h"
#include "verb-knob.h"
#include "verb-scope.h"
#include "verbs.h"

/* How long the unit's pass waits for PID 1 to say which units require it (asked at its start), and
 * never past its deadline: no answer by then keeps DeferCommit= out of this sleep. */
#define REQUIRERS_TIMEOUT (500 * USEC_PER_MSEC)
/* The unit's TimeoutStartSec= (units/suspend-sync.service.in): what a pass that waited for the state
 * lock asks to have left after the wait. */
#define UNIT_START_TIMEOUT (45 * USEC_PER_SEC)

/* Time kept back from the executor for what follows it (the record on tmpfs, a journal message per
 * mount left out, the late pass's evidence and knob), so the whole command returns by DeadlineSec.
 * That work grows with the plan: measured 4 ms at 1,000 mounts, 48 ms plus 36 ms of messages at
 * 20,000 (review, stop 27); 10 µs per entry leaves room for a slower machine. */
static usec_t record_reserve(usec_t deadline, size_t n_entries) {
        return MIN(deadline / 10, 50 * USEC_PER_MSEC + (usec_t) MIN(n_entries, MOUNT_TABLE_MAX_ENTRIES) * 10);
}

/* After the raw-device look: the knob, its write and message (RAW_CACHE_RESERVE), and moving stuck
 * workers (the look's child among them, if stuck in an fsync) to a scope, a round trip to PID 1. */
#define RAW_CACHE_RESERVE (20U * USEC_PER_MSEC)
#define RAW_CACHE_SCOPE_RESERVE (200U * USEC_PER_MSEC)
#define RAW_CACHE_CHILD_MIN (100U * USEC_PER_MSEC) /* the least the look's child is given */
/* The second sample before the knob's write (pass_knob_changed()): its children's bound. */
#define SAMPLE_AGAIN_MAX (250U * USEC_PER_MSEC)

/* The late pass that decides the knob keeps back, on top, the raw-device look and what follows it:
 * a pass that the deadline stops (a stuck device) still looks, and still moves its stuck workers
 * (review of 87cc0de). */
static usec_t knob_reserve(usec_t deadline) {
        return MIN(deadline / 8, RAW_CACHE_RESERVE + RAW_CACHE_SCOPE_RESERVE + RAW_CACHE_CHILD_MIN);
}

/* What the look leaves before the deadline: knob_reserve() less the child's least, so that a
 * short DeadlineSec= still gives the child its time (the scope's then has less). */
static usec_t raw_cache_margin(usec_t deadline) {
        usec_t k = knob_reserve(deadline);
        return k > RAW_CACHE_CHILD_MIN + RAW_CACHE_RESERVE ? k - RAW_CACHE_CHILD_MIN : RAW_CACHE_RESERVE;
}


/* Whether plan entry e is a plain FUSE superblock the late pass left out, for which evidence is read
 * (evidence.h). */
static bool fuse_evidence_wanted(const PlanEntry *e) {
        return e->uncovered && e->fuse_evidence;
}

static bool fuse_evidence_any(const Plan *p) {
        for (size_t i = p->n_sync; i < p->n_entries; i++)
                if (fuse_evidence_wanted(&p->entries[i]))
                        return true;
        return false;
}

/* Loads the writeback lists of every such superblock's bdi into bdi[i] (result in bdi_r[i]) for plan
 * entry i; returns how many there are. */
static size_t fuse_lists_load(const Context *c, BdiStats *bdi, int *bdi_r) {
        const Plan *p = c->plan;
        size_t n = 0;

        for (size_t i = p->n_sync; i < p->n_entries; i++) {
                const PlanEntry *e = &p->entries[i];

                if (!fuse_evidence_wanted(e))
                        continue;
                bdi_r[i] = c->debugfs_fd >= 0 && e->bdi_name
                                   ? bdi_stats_load(c->debugfs_fd, e->bdi_name, &bdi[i])
                                   : -ENODATA;
                n++;
        }
        return n;
}

/* The system's writeback count, refreshed (evidence.h), in a child bounded by half of what is left
 * before until and by EVIDENCE_GLOBAL_MAX: its refresh may wait for a CPU. No answer is no evidence.
 * The child is *ahead when that was prepared (evidence_global_prepare(): its fork is not waited
 * for here), which is then used up; else one forked now. */
static int fuse_global_load(const Context *c, usec_t until, BoundedChild *ahead, Meminfo *ret) {
        usec_t t = now(CLOCK_MONOTONIC), timeout = t < until ? MIN(EVIDENCE_GLOBAL_MAX, (until - t) / 2) : 0;
        int r;

        if (ahead && ahead->pid > 0) {
                r = evidence_global_load_prepared(ahead, timeout, ret);
                if (r != -ESTALE)
                        return r;
        }
        return evidence_load_global(c->root_fd, timeout, ret);
}

/* Evidence for the plain FUSE superblocks the late pass left out (evidence.h), read after the
 * workers: every such bdi's writeback lists first, then the system's writeback once, by until. Fills
 * clean[i] for plan entry i; returns how many were proven clean. Reasons are appended to the
 * records' in run_record_build(). Not enough alone: pass_fuse_prelook() below. */
static size_t late_fuse_evidence(const Context *c, usec_t until, BoundedChild *ahead, const char **why,
                                 bool *clean) {
        const Plan *p = c->plan;
        _cleanup_free_ BdiStats *bdi = calloc(MAX(p->n_entries, 1), sizeof(BdiStats));
        _cleanup_free_ int *bdi_r = calloc(MAX(p->n_entries, 1), sizeof(int));
        Meminfo global = {};
        int global_r;
        size_t n_clean = 0;

        if (!bdi || !bdi_r)
                return 0; /* no evidence: uncovered */
        if (fuse_lists_load(c, bdi, bdi_r) == 0)
                return 0;
        global_r = fuse_global_load(c, until, ahead, &global);
        for (size_t i = p->n_sync; i < p->n_entries; i++) {
                const PlanEntry *e = &p->entries[i];

                if (!fuse_evidence_wanted(e))
                        continue;
                clean[i] = evidence_fuse_clean(&bdi[i], bdi_r[i], &global, global_r, &why[i]);
                n_clean += clean[i];
        }
        return n_clean;
}

static bool touches_knob(const Args *a) {
        return streq_ptr(a->trigger, "unit") || streq_ptr(a->trigger, "hook");
}

/* One pass of the run verb: what its steps hand each other. */
typedef struct Pass {
        const Args *a;
        Args waited; /* a unit's pass that waited for the state lock: its clock starts when it got it */
        Context c;
        Handover ho; /* what earlier passes left; updated for the next one */
        RunJobs j;
        RunRecord rec;
        RunTally t;
        int lock_fd, state_fd, proc_fd, sysfs_fd;
        bool earlier_hung, carried;
        /* carried only for not knowing: the state directory or the handover not read */
        bool carried_unknown;
        bool unit_pass;      /* the late pass: a fresh record of the unit's pass of this sleep */
        bool saved;          /* this pass's record was written (state_save()) */
        bool late_skip_told; /* KeepCheapSync=: the marker for the hook is written (late-skip.h) */
        char unit_token[33]; /* the unit's pass: its token (handover.h), "" when it could not write one */
        char boot_id[33];    /* this boot's id, "" when it cannot be read */
        bool state_on_disk;  /* the state directory is not on tmpfs (or cannot tell) */
        bool handover_bad;   /* the handover could not be read whole: what the unit's pass left is unknown */
        bool kick_failed;    /* WritebackFirst=: a device was dirty and the flushers could not be woken */
        int kicked;          /* the flushers were woken: 1; could not be: < 0; not tried: 0 */
        usec_t kicked_at;    /* CLOCK_MONOTONIC, when a kick first worked; 0: none did */
        ManagerRequirers *requirers; /* the unit's pass: PID 1 asked which units require it */
        int requirers_error;         /* ... or why it could not be asked */
        usec_t requirers_until;      /* how long its answer is waited for */
        usec_t started_rt, started_mono, started_bt, deadline, t_executed, t_execute;
        /* The late pass: the FUSE evidence read before its workers (pass_fuse_prelook()), per plan
         * entry: proven clean then, or why not (NULL when no look was made or the reason could not be
         * kept: not proven either) */
        bool *fuse_pre;
        char **fuse_pre_why;
        size_t n_fuse_pre;
        BoundedChild fuse_after; /* ... and the child of the look after them, forked ahead */
} Pass;

/* The state directory is locked and open: the record and the handover can be read and written. */
static bool pass_has_state(const Pass *p) {
        return p->lock_fd >= 0 && p->state_fd >= 0;
}

static void pass_done(Pass *p) {
        safe_close(p->lock_fd);
        safe_close(p->state_fd);
        safe_close(p->proc_fd);
        safe_close(p->sysfs_fd);
        run_tally_done(&p->t);
        run_record_done(&p->rec);
        run_jobs_done(&p->j);
        handover_done(&p->ho);
        context_done(&p->c);
        manager_requirers_free(p->requirers);
        bounded_child_cancel(&p->fuse_after);
        free(p->fuse_pre);
        if (p->fuse_pre_why)
                for (size_t i = 0; i < p->n_fuse_pre; i++)
                        free(p->fuse_pre_why[i]);
        free(p->fuse_pre_why);
}

static bool pass_is_unit(const Pass *p) {
        return streq_ptr(p->a->trigger, "unit") && !p->a->late;
}

/* The unit pass's mark with its token into dir_fd (r: an error before, or 0); on failure none stands,
 * and the late pass keeps the kernel's sync on. */
static void pass_mark_write(Pass *p, int dir_fd, int r) {
        if (r >= 0)
                r = handover_unit_mark_write(dir_fd, p->unit_token);
        if (r >= 0)
                return;
        p->unit_token[0] = 0;
        if (dir_fd >= 0)
                (void) handover_unit_mark_remove(dir_fd, NULL);
        log_warning_errno(r,
                          "Failed to write '%s/" HANDOVER_UNIT_MARK_FILE "', the late pass will keep the "
                          "kernel's sync on: %m",
                          p->a->state_dir);
}

/* The unit's pass, first thing and without the lock: a new token (handover.h), the daemon's
 * (--token=: its restore-knob ends this pass's cycle and no later one's) or a random one. From now on
 * no earlier pass's "unit" line vouches for this sleep, whether or not this one gets the lock. */
static void pass_mark_unit(Pass *p) {
        _cleanup_close_ int dir_fd = -EBADF;
        sd_id128_t id;
        int r;

        r = dir_fd = state_dir_open(p->a->state_dir);
        if (r >= 0 && p->a->token)
                (void) snprintf(p->unit_token, sizeof p->unit_token, "%s", p->a->token);
        else if (r >= 0 && (r = sd_id128_randomize(&id)) >= 0)
                (void) sd_id128_to_string(id, p->unit_token);
        pass_mark_write(p, dir_fd, r);
}

/* What earlier passes left: workers still stuck in the kernel (their devices get no second
 * worker), what the unit's pass left unsynced. Only under the lock. */
static void pass_load_handover(Pass *p) {
        const char *dir = p->a->state_dir;
        char token[33] = "";
        sd_id128_t id;
        int r;

        /* The "unit" line is matched to this boot (a state directory may outlive one). */
        if (sd_id128_get_boot(&id) >= 0)
                (void) sd_id128_to_string(id, p->boot_id);

        p->state_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        p->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = p->state_fd < 0 ? negative_errno() : handover_load(p->state_fd, &p->ho);
        if (r < 0)
                log_warning_errno(r, "Failed to read '%s/" HANDOVER_FILE "', ignoring: %m", dir);
        else if (p->ho.n_bad > 0)
                log_notice("Ignored %zu malformed lines in '%s/" HANDOVER_FILE "'.", p->ho.n_bad, dir);
        p->handover_bad = r < 0 || p->ho.n_bad > 0;
        /* ... and to the unit's pass of this sleep (its token) */
        if (p->a->late && p->state_fd >= 0)
                (void) handover_unit_mark_read(p->state_fd, token);
        p->unit_pass = !p->handover_bad &&
                       handover_unit_pass_fresh(&p->ho, now(CLOCK_BOOTTIME), p->boot_id, token);
        /* Its mark again, now under the lock: an earlier unit's pass (the daemon's, past logind's
         * wait) that held the lock may have left the late pass out since this one first wrote it,
         * its marker and the hook's link down; this pass decides that for itself. */
        if (pass_is_unit(p) && p->unit_token[0] != 0 && p->state_fd >= 0)
                pass_mark_write(p, p->state_fd, 0);
        /* The unit's pass stands for this sleep from now on: an earlier one's record (its sleep called
         * off before any hook ran) must not vouch for it should this one end before it writes its
         * own (an error, SIGKILL). */
        if (pass_is_unit(p) && p->ho.unit_pass != 0) {
                p->ho.unit_pass = 0;
                r = handover_save(p->state_fd, &p->ho);
                if (r < 0)
                        log_warning_errno(r, "Failed to write '%s/" HANDOVER_FILE "', ignoring: %m", dir);
        }
        if (p->proc_fd >= 0) {
                (void) handover_prune(&p->ho, p->proc_fd, p->boot_id);
                p->earlier_hung = run_earlier_hung(&p->ho);
        } else
                /* Cannot tell live from ended: forget them (at worst a second worker). */
                handover_clear_stuck(&p->ho);
}

/* The unit's pass found the state lock held: most likely the daemon's pass of this sleep, still
 * running after logind stopped waiting for it (verb-daemon.c), whose deadline is at most
 * DAEMON_PASS_DEADLINE_MAX. This pass waits for it, with the service manager's start timeout
 * extended first, and then starts its clock anew: its DeadlineSec= counts from when it can sync.
 * The wait ends at DAEMON_UNIT_LOCK_WAIT, and as soon as the holder's mark (lock-holder.h) is known,
 * at its own deadline and LOCK_HOLDER_GRACE: whoever holds the lock (a manual run too, review AE,
 * H2), it is waited for no longer than it may run. --deadline-max= ("end within this, whatever
 * DeadlineSec= says") bounds the wait and the pass after it together: the wait gets what is left of
 * it less RUN_AFTER_WAIT_MIN, the pass the rest. */
#define RUN_AFTER_WAIT_MIN (1U * USEC_PER_SEC)
/* How often the holder's mark is read again while the lock is waited for. */
#define RUN_HOLDER_POLL (50U * USEC_PER_MSEC)

/* The holder's mark, when it is known and different from *known: said, and the wait's end moved to
 * its deadline and grace (never later than *until). */
static void pass_lock_holder(const Pass *p, int dir_fd, LockHolder *known, usec_t *until) {
        char x[FORMAT_TIMESPAN_MAX], y[FORMAT_TIMESPAN_MAX];
        LockHolder h;
        usec_t n;

        if (lock_holder_read(dir_fd, "/proc", &h) < 0 || (h.pid == known->pid && h.until == known->until))
                return;
        *known = h;
        n = now(CLOCK_MONOTONIC);
        *until = MIN(*until, usec_add(h.until, LOCK_HOLDER_GRACE));
        log_notice("'%s/lock' is held by PID %d, %s, whose deadline is %s %s: waiting at most %s.",
                   p->a->state_dir, (int) h.pid, lock_holder_kind_describe(h.kind),
                   format_timespan(x, sizeof x, h.until > n ? h.until - n : n - h.until),
                   h.until > n ? "from now" : "past",
                   format_timespan(y, sizeof y, *until > n ? *until - n : 0));
}

static int pass_lock_wait(Pass *p) {
        const char *dir = p->a->state_dir;
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        char x[FORMAT_TIMESPAN_MAX];
        usec_t t0 = now(CLOCK_MONOTONIC), wait = DAEMON_UNIT_LOCK_WAIT, left = USEC_INFINITY, until;
        LockHolder known = {};
        int r;

        if (p->a->deadline_max != USEC_INFINITY) {
                usec_t end = usec_add(p->a->started, p->a->deadline_max);

                left = end > t0 ? end - t0 : 0;
                if (left <= RUN_AFTER_WAIT_MIN)
                        return -EBUSY; /* no time to wait and then sync */
                wait = MIN(wait, left - RUN_AFTER_WAIT_MIN);
        }
        fd = state_lock_open(dir, &dir_fd);
        if (fd < 0)
                return fd;
        until = t0 + wait;
        log_notice(
                "Another suspend-sync run holds '%s/lock' (the daemon's pass of this sleep?): waiting for it, "
                "at most %s.",
                dir, format_timespan(x, sizeof x, wait));
        /* The unit's TimeoutStartSec= is left whole for what follows the wait. */
        (void) notify_extend_timeout(wait + UNIT_START_TIMEOUT);
        for (;;) {
                usec_t n;

                pass_lock_holder(p, dir_fd, &known, &until);
                n = now(CLOCK_MONOTONIC);
                r = flock_until(fd, MIN(until, n + RUN_HOLDER_POLL), STATE_LOCK_POLL_USEC);
                if (r != -EBUSY)
                        break;
                if (now(CLOCK_MONOTONIC) >= until) {
                        if (known.pid > 0)
                                log_notice("PID %d, %s, still holds '%s/lock' past its deadline and %s.",
                                           (int) known.pid, lock_holder_kind_describe(known.kind), dir,
                                           format_timespan(x, sizeof x, LOCK_HOLDER_GRACE));
                        return -EBUSY;
                }
        }
        if (r < 0)
                return r;
        p->lock_fd = TAKE_FD(fd);
        p->waited = *p->a;
        /* CLOCK_BOOTTIME of the same moment: their difference is the record's started_suspended */
        now_monotonic_boottime(&p->started_mono, &p->started_bt);
        p->waited.started = p->started_mono;
        if (left != USEC_INFINITY) /* what --deadline-max= leaves after the wait */
                p->waited.deadline_max = MAX(left - (p->waited.started - t0), (usec_t) 1);
        p->started_rt = now(CLOCK_REALTIME);
        p->a = &p->waited;
        log_info("Got '%s/lock' after %s.", dir, format_timespan(x, sizeof x, p->waited.started - t0));
        /* PID 1's answer came meanwhile, unread: its bound starts again. */
        p->requirers_until = p->waited.started + REQUIRERS_TIMEOUT;
        return 0;
}

/* A late pass refused the lock (a manual run holds it) cannot put a leftover knob record back, which
 * would race the holder between its record and its write (review H, H4). It turns the kernel's sync
 * on when a record says ours changed it, and leaves the record: a later decision of the holder is its
 * own, and the next restore puts the original back. */
static void pass_refused_knob(const Pass *p) {
        _cleanup_close_ int sysfs_fd = -EBADF, dir_fd = -EBADF;
        int value;

        if (!touches_knob(p->a) || !p->a->late)
                return;
        sysfs_fd = open(p->a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        dir_fd = open(p->a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sysfs_fd < 0 || dir_fd < 0 || knob_record_read(dir_fd, &value) == -ENOENT)
                return;
        if (knob_write(sysfs_fd, KNOB_SAFE_VALUE) >= 0)
                log_notice("Set /sys/power/sync_on_suspend to 1: a change of ours is recorded, and this pass "
                           "could not take the lock to put it back.");
}

/* " (PID N, a manual run)" when the holder's mark is known, else "". */
static void pass_holder_describe(const char *dir, char *buf, size_t size) {
        _cleanup_close_ int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        LockHolder h;

        if (dir_fd >= 0 && lock_holder_read(dir_fd, "/proc", &h) >= 0)
                (void) snprintf(buf, size, " (PID %d, %s)", (int) h.pid, lock_holder_kind_describe(h.kind));
}

static int pass_lock(Pass *p) {
        const char *dir = p->a->state_dir;
        bool is_tmpfs = true;
        int r, k;

        if (pass_is_unit(p))
                pass_mark_unit(p);
        r = state_lock(dir, &p->lock_fd);
        /* Only the unit's own (run by systemd): the daemon's pass, which runs as no unit's, must end
         * while logind waits, and refuses at once as before. */
        if (r == -EBUSY && pass_is_unit(p) && !isempty(p->a->invocation_id))
                r = pass_lock_wait(p);
        if (r == -EBUSY) {
                char who[64] = "";

                pass_refused_knob(p);
                pass_holder_describe(dir, who, sizeof who);
                return log_error_errno(
                        r, "Another suspend-sync run holds '%s/lock'%s, refusing to run twice.", dir, who);
        }
        if (r < 0)
                /* A missing or read-only state directory must not cost a sync: carry on unrecorded. */
                log_warning_errno(r, "Cannot lock state directory '%s', the run will not be recorded: %m",
                                  dir);
        /* Whether locked or not (knob.orig is written there all the same): what cannot be told is a
         * real filesystem, and the late pass keeps the kernel's sync on. */
        k = state_dir_check(dir, &is_tmpfs);
        p->state_on_disk = k < 0 || !is_tmpfs;
        if (r >= 0 && k < 0)
                log_warning_errno(k,
                                  "Cannot tell whether state directory '%s' is on tmpfs (%m): taken as a "
                                  "real filesystem, which recording dirties.",
                                  dir);
        else if (r >= 0 && p->state_on_disk)
                log_warning("State directory '%s' is not on tmpfs: recording dirties a real filesystem.",
                            dir);
        if (p->lock_fd >= 0)
                pass_load_handover(p);
        return 0;
}

int verb_kick_flushers(int root_fd) {
        _cleanup_close_ int proc_fd = -EBADF;
        unsigned value = 0, left = 0;
        int r;

        proc_fd = openat(root_fd, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = proc_fd < 0 ? negative_errno() : writeback_kick(proc_fd, &value, &left);
        if (r == -EUCLEAN)
                log_warning("Could not put vm.dirty_writeback_centisecs back to %u after waking the flusher "
                            "threads: it is %u now.",
                            value, left);
        else if (r < 0)
                log_debug("Could not wake the flusher threads (%s): syncfs() starts each device's writeback.",
                          strerror(-r));
        else
                log_debug("Woke the kernel's flusher threads (vm.dirty_writeback_centisecs %u, put back): "
                          "workers wait for their devices' data before syncfs().",
                          value);
        return r;
}

bool verb_kick_worth(int root_fd) {
        Meminfo m = {};

        return meminfo_load(root_fd, &m) >= 0 && m.has_dirty && m.dirty_bytes > settle_slack_local();
}

/* Wakes the kernel's flusher threads (writeback.h); p->kicked says how the last try went,
 * p->kicked_at when the first one worked. */
static void pass_kick(Pass *p) {
        int r = verb_kick_flushers(p->c.root_fd);

        if (r < 0 && r != -EUCLEAN) { /* -EUCLEAN: woken, the value not put back */
                p->kicked = r;
                return;
        }
        p->kicked = 1;
        if (p->kicked_at == 0)
                p->kicked_at = now(CLOCK_MONOTONIC);
}

/* WritebackFirst=, the main pass: when proc/meminfo counts dirty data, the flushers are woken as
 * soon as the policy allows it, before the sample and the plan, so that the data is on its way
 * while they are made (what sync(2) does first). Whether workers wait for it is decided as before,
 * by pass_writeback_first(). Not in the late pass: there the unit's pass has already done it, and
 * what is dirty may be a frozen user's FUSE mount, which only the plan tells apart. */
static void pass_kick_early(Pass *p) {
        if (p->a->late || !p->c.policy->writeback_first || !verb_kick_worth(p->c.root_fd))
                return;
        pass_kick(p);
}

/* Who holds the lock and by when it must let go, for a unit's pass that finds it held (lock-holder.h):
 * the daemon's pass and manual runs. Not the unit's pass nor the late pass: no pass waits for them,
 * so neither pays the write (a file renamed into place). */
static void pass_mark_holder(const Pass *p) {
        int r;

        if (p->a->late || !pass_has_state(p) || (pass_is_unit(p) && !isempty(p->a->invocation_id)))
                return;
        r = lock_holder_write(p->state_fd, pass_is_unit(p) ? LOCK_HOLDER_DAEMON : LOCK_HOLDER_MANUAL,
                              p->deadline);
        if (r < 0)
                log_debug("Could not write '%s/" LOCK_HOLDER_FILE "' (%s), ignoring.", p->a->state_dir,
                          strerror(-r));
}

/* A knob left over, then policy, sample and plan, and the deadline that follows from them. */
static int pass_prepare(Pass *p) {
        const Args *a = p->a;
        ContextFlags flags;
        PlanScope scope;
        int r;

        /* A knob left changed by a run that was killed is put back before anything else. Only the
         * late pass changes it: a sleep that does not happen after the unit's pass (cancelled, or
         * this unit's failure failed sleep.target) must find it untouched. The late pass puts it
         * back too (review G, G8): it decides afresh at its end, and should it end before (an
         * error), a 0 left from an earlier sleep whose restore never ran must not stand for this
         * one, in which no pass of ours ran before it. (The lock refused: pass_refused_knob().) */
        if (touches_knob(a)) {
                _cleanup_close_ int sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                /* without it, through the knob held open from the start; a failure is said and fails
                 * closed (the kernel's sync on) where it can (review AS, AS-1) */
                (void) verb_knob_restore(sysfs_fd, a->state_dir, KNOB_LOCK_WAIT_PASS_USEC,
                                         "left over from an interrupted run");
        }

        r = context_open_root(a, &p->c);
        if (r < 0)
                return r;
        /* Only the unit's pass defers (pass_defer_commit()). With dirty data the flushers are woken
         * first (pass_kick_early()), so the policy is needed before the sample; else the
         * configuration is read while the pass samples (context_prepare()). */
        flags = CONTEXT_RUN | (pass_is_unit(p) ? CONTEXT_DEFERRAL : 0);
        scope = a->late ? PLAN_SCOPE_LOCAL_BLOCK : PLAN_SCOPE_ALL;
        if (!a->serial_config && (a->late || !verb_kick_worth(p->c.root_fd)))
                r = context_prepare(a, scope, flags, &p->c);
        else {
                r = context_load_policy(a, &p->c);
                if (r < 0)
                        return r;
                pass_kick_early(p);
                r = context_sample_plan(a, scope, flags, &p->c);
        }
        if (r < 0)
                return r;

        p->deadline = a->started + p->c.policy->deadline;
        log_set_deadline(p->deadline);
        pass_mark_holder(p);
        /* The unit's start timeout follows DeadlineSec=: what is left of it, plus the time to record,
         * log and exit. A manager that is not listening costs nothing. */
        if (streq_ptr(a->trigger, "unit")) {
                usec_t n = now(CLOCK_MONOTONIC);

                r = notify_extend_timeout((p->deadline > n ? p->deadline - n : 0) + NOTIFY_EXIT_MARGIN);
                if (r < 0)
                        log_debug("Could not ask the service manager for more start time (%s), ignoring.",
                                  strerror(-r));
        }
        return 0;
}

/* WritebackFirst= (writeback.h): the workers of block filesystems wait for their device's
 * writeback; when one of those devices had dirty data, the flushers are woken for all of them, as
 * before the early wake-up (pass_kick_early()): data dirtied since then is started too, and whether
 * that worked decides as it always did. */
static void pass_writeback_first(Pass *p) {
        if (!p->c.policy->writeback_first ||
            !run_jobs_settle(&p->j, p->c.plan, p->c.sample, settle_slack_local()))
                return;
        pass_kick(p);
        if (p->kicked > 0)
                run_jobs_settle_all(&p->j);
        else
                p->kick_failed = true;
}

/* DeferCommit= (defer-commit.h): in the unit's pass, the jobs that wait for writeback on a
 * filesystem the late pass syncs anyway are left to it, when that is safe. */
static void pass_defer_commit(Pass *p) {
        const Args *a = p->a;
        DeferFacts f = {
                .unit_pass = streq_ptr(a->trigger, "unit") && !a->late,
                .policy = p->c.policy->defer_commit,
                .writeback_first = p->c.policy->writeback_first,
                .fail_on_timeout = p->c.policy->on_timeout == ON_TIMEOUT_FAIL,
                .kick_failed = p->kick_failed,
                .handover_ok = pass_has_state(p),
                .hook_reachable = p->unit_token[0] != 0 && handover_hook_link_up(p->state_fd),
                .hook_entry = p->c.hook_ours,
        };
        const char *why;
        size_t n;
        int value = -1, e;

        /* Without our entry where systemd-sleep looks, it runs no hook of ours; with another entry of
         * that name where some release or patch may look, it may not (review M, M3). */
        if (f.unit_pass && f.hook_entry == 0) {
                if (p->c.hook_other)
                        log_notice(
                                "%s is not suspend-sync's system-sleep entry as installed (masked or replaced): "
                                "a late pass of suspend-sync may not run in a sleep, and none is counted on.",
                                p->c.hook_other);
                else
                        log_notice(
                                "No system-sleep entry of suspend-sync is installed in " SYSTEM_SLEEP_DIR
                                ": no late pass of suspend-sync runs in a sleep, and the kernel's own sync "
                                "stays on.");
        }
        if (f.unit_pass && f.policy) {
                int requirers = p->requirers ? manager_requirers_finish(p->requirers,
                                                                        MIN(p->requirers_until, p->deadline))
                                             : p->requirers_error;

                /* the pass's own sysfs fd (pass_execute()), the errno of its open() when it could not be opened */
                f.knob = p->sysfs_fd < 0 ? p->sysfs_fd : knob_read(p->sysfs_fd, &value);
                if (f.knob >= 0)
                        f.knob = value;
                f.required = defer_commit_required(a->sleep_requires, !isempty(a->invocation_id), requirers);
                if (requirers < 0 && !isempty(a->invocation_id))
                        log_debug("Could not ask PID 1 which units require this one (%s).",
                                  strerror(-requirers));
        }
        if (!defer_commit_allowed(&f, &why)) {
                e = defer_commit_why_error(&f, why);
                if (why)
                        log_info("Committing every filesystem in this pass (DeferCommit=yes): %s%s%s%s.", why,
                                 e < 0 ? " (" : "", e < 0 ? strerror(-e) : "", e < 0 ? ")" : "");
                return;
        }
        n = run_jobs_defer(&p->j, p->c.plan);
        if (n > 0)
                log_debug("%zu superblock(s) left to the late pass.", n);
}

/* The completion counter of blocked job i's device (a worker of an earlier pass proved it stuck and
 * is still there); false when it cannot be read. No look at held I/O (no bounded child). */
static bool blocked_progress(const Pass *p, size_t i, uint64_t *ret) {
        ProgressProbe probe = p->j.probes[i];
        bool held;

        probe.memo = NULL;
        return progress_read(&probe, ret, &held) >= 0;
}

/* A device an earlier pass proved stuck stays hung only while its completion counter, which only
 * grows, still reads what that pass recorded with its worker, now that this pass's syncs are done
 * (review G, G7, and H, H2: this pass alone may last a few ms). */
static void pass_blocked_recheck(Pass *p) {
        for (size_t i = 0; i < p->j.n_jobs; i++) {
                const StuckWorker *b = p->j.blocked[i];
                bool watched;
                uint64_t v;

                if (!b || !p->j.jobs[i].hung)
                        continue;
                watched = b->progress_known && blocked_progress(p, i, &v);
                if (run_jobs_blocked_recheck(&p->j, i, watched && v == b->progress))
                        log_info("%s: the device proved stuck by an earlier pass %s; counted as not synced.",
                                 p->c.plan->entries[i].mount_point,
                                 watched ? "completed I/O since" : "cannot be watched now");
        }
}

/* Review AP, AP-1: read after the workers only, the evidence missed a FUSE write already in flight
 * when the late pass began. Its server wrote the data into a local filesystem after that
 * filesystem's syncfs, then answered, and the mount was proven clean with the data dirty there. So
 * the same evidence is read before the workers and the flushers' wake-up too: the lists of each
 * such bdi must be empty, and then, once, no page may be under writeback anywhere; writeback in
 * flight (another device's too) is waited for, up to FUSE_PRE_WAIT_MAX or a quarter of what is left
 * before until (not when an earlier pass's worker was proven hung: its pages stay under writeback).
 * Whatever a server had by then, it had answered before the workers began, so they sync it; what
 * is written after the lists were read is the window of every pass (evidence.h). A mount is proven
 * clean only when both looks say so (pass_record()).
 * Only a refreshed count decides, and each refresh is a child (evidence_load_global()), which
 * costs a fork and CPU the disks' writeback may be waiting for. Between two, the count as
 * proc/meminfo shows it is read here every FUSE_PRE_TICK: while it is further from 0 than the CPUs'
 * unfolded deltas can make up (meminfo_drift_load()), writeback is surely still in flight and no
 * refresh is made but one every FUSE_PRE_FAR (should the bound be wrong on some kernel); once it is
 * within that, one every FUSE_PRE_NEAR while it falls, else every FUSE_PRE_POLL (prelook_wait()).
 * Without the bound, one every FUSE_PRE_POLL, as before the thirty-sixth session. */
#define FUSE_PRE_WAIT_MAX (1U * USEC_PER_SEC)
#define FUSE_PRE_POLL (5U * USEC_PER_MSEC)
#define FUSE_PRE_FAR (25U * USEC_PER_MSEC)
#define FUSE_PRE_NEAR (2U * USEC_PER_MSEC)
#define FUSE_PRE_TICK (1U * USEC_PER_MSEC)

static bool writeback_in_flight(const Meminfo *m, int r) {
        return r >= 0 && m->has_writeback && evidence_writeback_pending(m);
}

/* Where the first look's wait stands between two refreshes: the bound of the unrefreshed count's
 * error in bytes (loaded on first use; when it cannot be, only FUSE_PRE_POLL applies), and that count
 * as last read (UINT64_MAX: not yet). */
typedef struct PrelookWait {
        int64_t drift;
        uint64_t seen;
} PrelookWait;
#define PRELOOK_DRIFT_UNREAD (-1)
#define PRELOOK_DRIFT_UNKNOWN (-2)
#define PRELOOK_WAIT_INIT ((PrelookWait) { .drift = PRELOOK_DRIFT_UNREAD, .seen = UINT64_MAX })

/* Waits until the next refreshed read of the writeback count is due (above), the last begun at last:
 * within the bound, every FUSE_PRE_NEAR while the unrefreshed count falls (review AY: one that stays
 * within it, a slow device's last pages or a machine of many CPUs, whose bound is tens of MiB, had a
 * child forked every 2 ms), else every FUSE_PRE_POLL. Returns false when bound leaves no time for
 * another. */
static bool prelook_wait(const Context *c, usec_t last, usec_t bound, PrelookWait *w) {
        if (w->drift == PRELOOK_DRIFT_UNREAD) {
                uint64_t d;
                w->drift = meminfo_drift_load(c->root_fd, &d) < 0 || d > INT64_MAX ? PRELOOK_DRIFT_UNKNOWN
                                                                                   : (int64_t) d;
        }
        for (;;) {
                usec_t t = now(CLOCK_MONOTONIC);
                uint64_t count;
                Meminfo m;

                if (t + FUSE_PRE_TICK >= bound)
                        return false;
                (void) usleep(FUSE_PRE_TICK);
                t = now(CLOCK_MONOTONIC);
                if (t >= last + (w->drift < 0 ? FUSE_PRE_POLL : FUSE_PRE_FAR))
                        return true;
                if (w->drift < 0 || t < last + FUSE_PRE_NEAR)
                        continue;
                if (meminfo_load(c->root_fd, &m) < 0) {
                        if (t >= last + FUSE_PRE_POLL) /* cannot tell: as without the bound */
                                return true;
                        continue;
                }
                if (!evidence_writeback_may_be_done(&m, (uint64_t) w->drift))
                        continue; /* surely in flight */
                count = m.writeback_bytes + (m.has_writeback_tmp ? m.writeback_tmp_bytes : 0);
                if (count < w->seen || t >= last + FUSE_PRE_POLL) {
                        w->seen = count;
                        return true;
                }
        }
}

static void pass_fuse_prelook(Pass *p, usec_t until) {
        const Plan *pl = p->c.plan;
        size_t n = MAX(pl->n_entries, 1), k = 0;
        _cleanup_free_ BdiStats *bdi = calloc(n, sizeof(BdiStats));
        _cleanup_free_ int *bdi_r = calloc(n, sizeof(int));
        usec_t start = now(CLOCK_MONOTONIC), bound, waited;
        char took[FORMAT_TIMESPAN_MAX];
        PrelookWait wait = PRELOOK_WAIT_INIT;
        BoundedChild next = BOUNDED_CHILD_NULL;
        Meminfo global = {};
        int global_r;

        /* The look after the workers (pass_record()): its child forked now, its fork off the tail, and
         * while this look waits, off the workers' start too (review AY). */
        if (fuse_evidence_any(pl))
                (void) evidence_global_prepare(p->c.root_fd, &p->fuse_after);
        p->fuse_pre = calloc(n, sizeof(bool));
        p->fuse_pre_why = calloc(n, sizeof(char *));
        p->n_fuse_pre = p->fuse_pre_why ? n : 0;
        if (!bdi || !bdi_r || !p->fuse_pre || !p->fuse_pre_why || fuse_lists_load(&p->c, bdi, bdi_r) == 0)
                return; /* none proven (pass_record()) */
        for (size_t i = pl->n_sync; i < pl->n_entries; i++)
                k += fuse_evidence_wanted(&pl->entries[i]) &&
                     evidence_bdi_lists_empty(&bdi[i], bdi_r[i], NULL);
        /* a worker of an earlier pass proven hung keeps its pages under writeback: one look */
        bound = start + (until > start && !p->earlier_hung ? MIN(FUSE_PRE_WAIT_MAX, (until - start) / 4) : 0);
        for (global_r = -ENODATA; k > 0;) {
                usec_t last = now(CLOCK_MONOTONIC);

                global_r = fuse_global_load(&p->c, until, &next, &global);
                if (!writeback_in_flight(&global, global_r))
                        break;
                if (next.pid <= 0) /* the next refresh's child, forked while this waits */
                        (void) evidence_global_prepare(p->c.root_fd, &next);
                if (!prelook_wait(&p->c, last, bound, &wait))
                        break;
        }
        bounded_child_cancel(&next);
        waited = now(CLOCK_MONOTONIC) - start;
        format_timespan(took, sizeof took, waited);
        for (size_t i = pl->n_sync; i < pl->n_entries; i++) {
                const char *why = NULL;

                if (!fuse_evidence_wanted(&pl->entries[i]))
                        continue;
                p->fuse_pre[i] = evidence_fuse_clean(&bdi[i], bdi_r[i], &global, global_r, &why);
                if (p->fuse_pre[i])
                        continue;
                if ((evidence_bdi_lists_empty(&bdi[i], bdi_r[i], NULL)
                             ? asprintf(&p->fuse_pre_why[i], "before this pass's workers (%s later), %s",
                                        took, why)
                             : asprintf(&p->fuse_pre_why[i], "before this pass's workers, %s", why)) < 0)
                        p->fuse_pre_why[i] = NULL;
        }
        if (k == 0)
                log_debug(
                        "FUSE mounts left out of this pass: 0 of them with no dirty inode before its workers.");
        else
                log_debug(
                        "FUSE mounts left out of this pass: %zu of them with no dirty inode before its workers, "
                        "writeback %s after %s.",
                        k,
                        global_r < 0                             ? "not read"
                        : writeback_in_flight(&global, global_r) ? "still in flight"
                                                                 : "none",
                        took);
}

static int pass_execute(Pass *p) {
        usec_t t0, reserve;
        int r;

        /* Progress evidence for the executor: sysfs and debugfs only, read from this process. */
        p->sysfs_fd = open(p->a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (p->sysfs_fd < 0) /* kept as the reason (pass_defer_commit(): sync_on_suspend cannot be read) */
                p->sysfs_fd = negative_errno();
        r = run_jobs_build(p->c.plan, p->c.sample, &p->ho, p->sysfs_fd, p->c.debugfs_fd,
                           p->a->busy_only               ? PROGRESS_HELD_BUSY
                           : progress_busy_needed_here() ? PROGRESS_HELD_STAT_OR_BUSY
                                                         : PROGRESS_HELD_STAT,
                           &p->j);
        if (r < 0)
                return log_oom();

        t0 = now(CLOCK_MONOTONIC);
        reserve = record_reserve(p->c.policy->deadline, p->c.plan->n_entries);
        if (touches_knob(p->a) && p->a->late)
                reserve += knob_reserve(p->c.policy->deadline);
        if (p->a->late) {
                pass_fuse_prelook(p, p->deadline - MIN(p->deadline, reserve));
                if (p->a->prelook_delay > 0) { /* tests: a FUSE server answers between the looks */
                        struct timespec ts;
                        (void) nanosleep(timespec_store(&ts, p->a->prelook_delay), NULL);
                }
        }
        pass_writeback_first(p);
        pass_defer_commit(p);
        r = executor_run(p->j.run, p->j.n_run, p->c.policy->max_parallel, p->deadline - reserve, NULL);
        p->t_executed = now(CLOCK_MONOTONIC);
        if (r < 0)
                return log_error_errno(r, "Failed to start the sync workers: %m");
        run_jobs_collect(&p->j);
        p->t_execute = p->t_executed - t0;
        pass_blocked_recheck(p);
        return 0;
}

/* A note's words around its mount point (at most RUN_NOTE_PATH_MAX bytes) fit a log line. */
_Static_assert(RUN_NOTE_PATH_MAX + 256 <= LOG_LINE_MAX, "a mount's note must fit a log line");

/* The planned mounts that did not sync, as the journal has always told them (run_job_note(): a
 * mount point too long for a log line is shortened in its middle, so the reason is never cut off). */
static void log_mount_outcomes(const Pass *p) {
        for (size_t i = 0; i < p->j.n_jobs; i++) {
                const ExecJob *job = &p->j.jobs[i];
                const char *mp = p->c.plan->entries[i].mount_point;
                char msg[LOG_LINE_MAX];

                switch (run_job_note(&p->j, i, mp, msg, sizeof msg)) {
                case RUN_NOTE_ERROR:
                        log_event(LOG_ERR, SUSPEND_SYNC_MESSAGE_MOUNT_ERROR_STR,
                                  &(LogEvent) { .mount = mp,
                                                .outcome = "error",
                                                .duration = job->duration,
                                                .error = job->error ?: EIO },
                                  "%s", msg);
                        break;
                case RUN_NOTE_TIMEOUT:
                        log_event(LOG_WARNING, SUSPEND_SYNC_MESSAGE_MOUNT_TIMEOUT_STR,
                                  &(LogEvent) { .mount = mp,
                                                .outcome = "timeout",
                                                .duration = p->j.blocked[i] ? 0 : job->duration },
                                  "%s", msg);
                        break;
                case RUN_NOTE_NONE:
                        break;
                }
        }
}

/* Updates the handover after the pass: adds the workers it left in the kernel; the unit's pass
 * replaces the "unsynced" lines with its own. Returns whether a fresh "unsynced" line of the
 * unit's pass names a superblock this late pass did not sync. */
static bool handover_update(Pass *p) {
        usec_t boot = now(CLOCK_BOOTTIME);
        ExecJob *jobs = p->j.jobs;
        uint64_t progress;
        int r;

        executor_check_stuck(jobs, p->j.n_jobs);
        for (size_t i = 0; i < p->j.n_jobs; i++) {
                uint64_t start;

                char key_buf[RUN_STUCK_KEY_MAX];
                const char *key;

                if (jobs[i].abandoned_pid <= 0 || !jobs[i].group || !jobs[i].stuck || p->proc_fd < 0)
                        continue;
                key = run_job_stuck_key(&jobs[i], key_buf);
                if (proc_pid_start_time(p->proc_fd, jobs[i].abandoned_pid, &start, NULL) < 0 ||
                    handover_find_stuck(&p->ho, key))
                        continue;
                r = handover_add_stuck(&p->ho, jobs[i].abandoned_pid, start, jobs[i].hung, boot, p->boot_id,
                                       key);
                /* its device's counter now, proven still: a later pass compares (pass_execute()) */
                if (r >= 0 && jobs[i].hung && blocked_progress(p, i, &progress))
                        handover_set_stuck_progress(&p->ho, p->ho.n_stuck - 1, progress);
                if (r < 0)
                        log_debug("Cannot list worker " PID_FMT " as stuck (%s), ignoring.",
                                  jobs[i].abandoned_pid, strerror(-r));
        }
        if (pass_is_unit(p)) {
                run_handover_unsynced(&p->ho, p->t.left, p->t.n_left, boot);
                run_handover_synced(&p->ho, &p->j, boot);
                run_handover_proven_clean(&p->ho, p->c.plan, boot);
                /* Its record, for one late pass: only with a complete view (what it did not see,
                 * it did not sync, and listed nothing for). */
                if (p->c.sample->complete && !p->t.gone)
                        (void) handover_set_unit_pass(&p->ho, boot, p->boot_id, p->unit_token);
        }
        if (p->a->late)
                p->ho.unit_pass = 0; /* read at load (p->unit_pass): no second late pass leans on it */
        return p->a->late && run_unsynced_carried(&p->ho, &p->j, boot);
}

/* KeepCheapSync= (late-skip.h): whether the unit's pass leaves the late pass out of this suspend,
 * decided on its record as built, before it is saved (the record says so: status, the cycle). */
static void pass_late_skip_decide(Pass *p) {
        _cleanup_(history_learned_done) HistoryLearned h = {};
        const Sample *sample = p->c.sample;
        LateSkipFacts f = {
                .mode = p->c.policy->sync_on_suspend,
                .keep_cheap_sync = p->c.policy->keep_cheap_sync,
                .unit_pass = pass_is_unit(p) && p->unit_token[0] != 0,
                .covered = p->t.covered,
                .unsynced = p->t.unsynced,
                .n_hung = p->t.n_hung,
                .n_stuck = p->ho.n_stuck,
                .below = p->a->late_skip_below,
        };
        const char *why;
        int r, value = -1;

        if (!pass_is_unit(p) || !pass_has_state(p))
                return;
        f.knob = p->sysfs_fd < 0 ? -EBADF : knob_read(p->sysfs_fd, &value);
        if (f.knob >= 0)
                f.knob = value;
        late_skip_observe(&f, sample, p->t.gone);
        /* Every other fact first (the estimate last in late_skip_why_not(), 0 passes it): the late
         * pass's learned times are parsed, from the file the plan read, only when they decide. */
        f.estimate = 0;
        why = late_skip_why_not(&f);
        if (!why) {
                r = p->c.learned ? history_learned_parse(p->c.learned, "late", &h) : -ENOENT;
                f.estimate = late_skip_estimate(&p->rec, r >= 0 ? h.l : NULL, r >= 0 ? h.n : 0);
                why = late_skip_why_not(&f);
        }
        if (why) {
                log_debug("The late pass runs in this sleep: %s.", why);
                return;
        }
        p->rec.late_left_out = true;
        p->rec.kernel_sync_estimate = f.estimate;
}

/* ... and tells the system-sleep hook (the marker went as the pass wrote its token), its record and
 * handover saved, before its report to the daemon: one small file on tmpfs. The marker names this
 * pass's token, which a unit's pass started since has replaced in HANDOVER_UNIT_MARK_FILE, so the
 * hook would not follow it. pass_log() says so. */
static void pass_late_skip_tell(Pass *p) {
        int r;

        if (!p->rec.late_left_out || !p->saved || p->state_fd < 0)
                return;
        r = handover_late_skip_write(p->state_fd, p->unit_token);
        if (r == -ESTALE)
                log_info("A later pass of this sleep (the unit's) stands for it now: the late pass is not "
                         "left out here, that pass decides.");
        else if (r < 0)
                log_warning_errno(r, "Failed to write '%s/" LATE_SKIP_FILE "', the late pass runs: %m",
                                  p->a->state_dir);
        p->late_skip_told = r >= 0;
}

/* Late FUSE evidence, the record (saved under the lock), the handover for the next pass. */
static int pass_record(Pass *p) {
        size_t n = MAX(p->c.plan->n_entries, 1), n_clean = 0;
        _cleanup_free_ const char **fuse_why = calloc(n, sizeof(char *));
        _cleanup_free_ bool *fuse_clean = calloc(n, sizeof(bool));
        const Args *a = p->a;
        SuspendStats suspend = SUSPEND_STATS_NULL;
        RunInput in = {
                .plan = p->c.plan,
                .sample = p->c.sample,
                .jobs = &p->j,
                .fuse_clean = fuse_clean,
                .fuse_why = fuse_why,
                .trigger = a->trigger,
                .sleep_action = a->sleep_action,
                .started_realtime = p->started_rt,
                .started_monotonic = p->started_mono,
                .started_boottime = p->started_bt,
                .pid = getpid(),
                .deadline = p->c.policy->deadline,
                .t_execute = p->t_execute,
                .flushers_woken = p->kicked_at,
                /* the late pass: what the unit's pass of this sleep saw (p->ho as loaded) */
                .unit = a->late && p->unit_pass ? &p->ho : NULL,
                .now_boottime = now(CLOCK_BOOTTIME),
                .boot_id = p->boot_id,
                .suspend = &suspend,
        };
        int r;

        /* The late pass: the kernel's suspend counts before the state write, which status compares
         * with the post hook's (two small sysfs reads). */
        if (a->late)
                suspend_stats_load(p->sysfs_fd, false, &suspend);

        /* Plain FUSE mounts the late pass left out: proven clean now, after our workers? */
        if (!fuse_why || !fuse_clean)
                return log_oom();
        if (a->late)
                n_clean = late_fuse_evidence(
                        &p->c, p->deadline - MIN(p->deadline, knob_reserve(p->c.policy->deadline)),
                        &p->fuse_after, fuse_why, fuse_clean);
        /* ... and before its workers (pass_fuse_prelook()): both looks, or it is not proven */
        for (size_t i = p->c.plan->n_sync; a->late && i < p->c.plan->n_entries; i++)
                if (fuse_clean[i] && !(p->fuse_pre && p->fuse_pre[i])) {
                        fuse_clean[i] = false;
                        n_clean--;
                        fuse_why[i] = p->fuse_pre_why && p->fuse_pre_why[i]
                                              ? p->fuse_pre_why[i]
                                              : "not looked at before this pass's workers";
                }
        if (n_clean > 0)
                log_debug("%zu FUSE mount(s) left out of this pass proven clean.", n_clean);

        executor_check_stuck(p->j.jobs, p->j.n_jobs);
        r = run_record_build(&in, &p->rec, &p->t);
        if (r < 0)
                return log_oom();
        log_mount_outcomes(p);
        pass_late_skip_decide(p);

        if (p->lock_fd >= 0) {
                usec_t t2 = now(CLOCK_MONOTONIC);
                p->rec.duration = t2 - a->started;
                /* What happened after the workers: assembling the record. The write itself cannot
                 * be inside the record it writes (tmpfs, ~100 us). */
                p->rec.t_record = t2 - p->t_executed;
                r = state_save(a->state_dir, &p->rec);
                if (r < 0)
                        log_warning_errno(r, "Failed to record the run in '%s', ignoring: %m", a->state_dir);
                p->saved = r >= 0;
        }
        if (p->state_fd >= 0) {
                p->carried = handover_update(p);
                r = handover_save(p->state_fd, &p->ho);
                if (r < 0)
                        log_warning_errno(r, "Failed to write '%s/" HANDOVER_FILE "', ignoring: %m",
                                          a->state_dir);
        }
        if (p->carried)
                log_notice("The unit's pass of this sleep left superblocks unsynced (errors, timeouts, "
                           "Action=skip) that this pass did not sync.");
        else if (a->late && (!pass_has_state(p) || p->handover_bad)) {
                /* What the unit's pass left (unsynced, or to this pass) is not known: fail closed. */
                p->carried = p->carried_unknown = true;
                log_notice("Cannot read what the unit's pass of this sleep left to this pass.");
        }
        return 0;
}


/* Block devices written straight to, on the disks of the superblocks of the sample (raw-cache.h): the
 * devices of writable superblocks explain their own cache (a read-only one's cache is looked at);
 * the leaf disks of a device proven stuck (of this pass, or an earlier one's worker still there)
 * are asked last, their failures no reason. 1 with the reason in *ret_why, 0, -ENOMEM. Logs what it
 * synced. */
static int pass_raw_cache(const Pass *p, char **ret_why) {
        const Sample *sample = p->c.sample;
        _cleanup_free_ const char **bdis = calloc(MAX(sample->n_sbs, 1), sizeof(char *));
        _cleanup_free_ char *names = malloc(MAX(sample->n_sbs, 1) * DEVNUM_STR_MAX), *synced = NULL;
        _cleanup_free_ dev_t *known = calloc(MAX(sample->n_sbs, 1), sizeof(dev_t)), *stuck = NULL;
        usec_t margin = raw_cache_margin(p->c.policy->deadline);
        RawCacheLook look = {
                .bdis = bdis,
                .n_bdis = sample->n_sbs,
                .known = known,
                /* Stuck workers, and this look's child if it is stuck in an fsync, go to a scope of
                 * their own after it (verb_stuck_to_scope()). */
                .until = p->deadline > margin ? p->deadline - margin : 0,
                .max_timeout = context_reach_timeout(p->c.policy),
        };
        int r = 0;

        if (!bdis || !names || !known)
                return -ENOMEM;
        for (size_t k = 0; k < sample->n_sbs; k++) {
                const Superblock *sb = &sample->sbs[k];

                if (!sb->all_read_only)
                        known[look.n_known++] = sb->dev;
                bdis[k] = sb->device.bdi_name
                                  ?: format_devnum(names + k * DEVNUM_STR_MAX,
                                                   sb->device.whole_disk ?: sb->dev);
        }
        /* A malformed group names no disk: that disk is looked at like any other. */
        for (size_t i = 0; i < p->j.n_jobs && r != -ENOMEM; i++)
                if (run_job_hung(&p->j, i))
                        r = raw_cache_group_disks(p->j.jobs[i].group, &stuck, &look.n_stuck);
        for (size_t i = 0; i < p->ho.n_stuck && r != -ENOMEM; i++)
                if (p->ho.stuck[i].hung)
                        r = raw_cache_group_disks(p->ho.stuck[i].group, &stuck, &look.n_stuck);
        if (r == -ENOMEM)
                return r;
        look.stuck = stuck;
        r = raw_cache_unexplained(p->c.root_fd, p->sysfs_fd, p->c.debugfs_fd, &look, ret_why, &synced);
        if (synced)
                log_info("Synced the page cache of block devices written straight to: %s.", synced);
        return r;
}

/* What the late pass can only tell at its end (kernel-knob.h): other system-sleep hooks (listed with
 * the configuration, bounded), dirty inodes on the bdi of a device without a superblock of the
 * sample (evidence.h, debugfs) and dirty pages of the other block devices of a disk with one
 * (raw-cache.h, a bounded child). Sets f->other_hooks and f->unexplained; returns what keeps the
 * kernel's sync on, said in full (NULL: nothing, or out of memory). */
static char *pass_knob_late_facts(const Pass *p, KnobFacts *f) {
        const Context *c = &p->c;
        _cleanup_free_ const char **known = calloc(MAX(c->sample->n_sbs, 1) * 2, sizeof(char *));
        _cleanup_free_ const char **types = calloc(MAX(c->sample->n_sbs, 1), sizeof(char *));
        _cleanup_free_ char *devs = malloc(MAX(c->sample->n_sbs, 1) * DEVNUM_STR_MAX);
        _cleanup_free_ char *bdi = NULL;
        const char *why = NULL;
        size_t n = 0;
        char *s = NULL;
        int r;

        if (!known || !types || !devs)
                r = -ENOMEM;
        else {
                /* What the plan did with each superblock of the sample (synced, proven clean, left
                 * out: the facts above weigh those) accounts for its device's dirty inodes. Its bdi
                 * as classified, and its own MAJ:MIN (the bdi of a whole disk or an anonymous
                 * superblock, should classification have found none). */
                for (size_t k = 0; k < c->sample->n_sbs; k++) {
                        const Superblock *sb = &c->sample->sbs[k];
                        if (sb->device.bdi_name)
                                known[n++] = sb->device.bdi_name;
                        /* Not that of a pseudo filesystem or an overlay: they have no bdi, so one of
                         * that name is another superblock's, which took the number of one gone
                         * since (review N, N1). */
                        if (sb->fs_class != FS_CLASS_PSEUDO && sb->fs_class != FS_CLASS_OVERLAY)
                                known[n++] = format_devnum(devs + k * DEVNUM_STR_MAX, sb->dev);
                        types[k] = sb->fstype; /* bdis named after a type are counted against them */
                }
                r = evidence_unexplained_dirty(c->debugfs_fd, p->sysfs_fd, known, n, types, c->sample->n_sbs,
                                               &bdi, &why);
        }
        if (r == 0) {
                r = pass_raw_cache(p, &s);
                if (r == -ENOMEM)
                        s = strdup(
                                "out of memory while looking at the block devices of the disks of this pass");
        }
        f->unexplained = r != 0;
        f->other_hooks = c->sleep_hooks || c->sleep_hooks_error < 0;

        /* The first reason that keeps it on: the unexplained data in every mode, the hooks in auto. */
        if (s)
                return s;
        if (r > 0)
                r = asprintf(&s,
                             "device %s, on which no filesystem this pass saw is mounted, holds dirty data "
                             "(%s): written straight to the device, or a filesystem no mount table showed "
                             "(one mounted since, or one unmounted with files still open)",
                             bdi, why);
        else if (r < 0)
                r = asprintf(&s,
                             "whether a device without a mounted filesystem holds dirty data cannot be "
                             "told (debugfs bdi/: %s)",
                             strerror(-r));
        else if (c->sleep_hooks)
                r = asprintf(
                        &s,
                        "another system-sleep hook runs alongside this pass and may write after it (%s%s)",
                        c->sleep_hooks[0], c->sleep_hooks[1] ? ", and more" : "");
        else if (c->sleep_hooks_error < 0)
                r = asprintf(&s,
                             "whether another system-sleep hook runs alongside this pass is not known (%s)",
                             strerror(-c->sleep_hooks_error));
        else
                return NULL;
        return r < 0 ? NULL : s;
}

/* The last look before the kernel's sync goes off (review N, N1 and N2): the mounts sampled again.
 * Its plan accounts only for the superblocks the pass's sample had: one mounted during its syncs, a
 * read-only one remounted writable, or one whose device number a stale entry of the sample carried
 * would be synced by nobody, and its empty writeback lists are no evidence (docs/CLEAN-EVIDENCE.md).
 * Sets f->changed; returns the sentence saying why, or NULL. */
static char *pass_knob_changed(const Pass *p, KnobFacts *f) {
        _cleanup_(sample_freep) Sample *now_sample = NULL;
        char *why = NULL;
        int r;

        /* Its bounded children (the search for hidden superblocks, should one be hidden) end within
         * SAMPLE_AGAIN_MAX and leave the scope's reserve to the deadline (review P, P3): cut short,
         * the view is incomplete and the sync stays on. */
        r = context_sample_again(
                p->a, PLAN_SCOPE_LOCAL_BLOCK, CONTEXT_RUN, &p->c,
                MIN(usec_add(now(CLOCK_MONOTONIC), SAMPLE_AGAIN_MAX),
                    p->deadline > RAW_CACHE_SCOPE_RESERVE ? p->deadline - RAW_CACHE_SCOPE_RESERVE : 0),
                &now_sample);
        if (r >= 0)
                r = sample_changed_since(p->c.sample, now_sample, &why);
        f->changed = r != 0;
        if (r < 0 &&
            asprintf(&why, "the mounts could not be read again before the kernel's sync goes off: %s",
                     strerror(-r)) < 0)
                why = NULL;
        return why;
}

/* The last look (the second sample) begun at look, now at the knob's write: a look older than
 * KNOB_LOOK_MAX saw the mounts too long ago to stand for them (a filesystem mounted meanwhile is seen
 * by nobody). Sets f->changed and returns the sentence saying so, or NULL. */
static char *pass_knob_stale(usec_t look, KnobFacts *f) {
        char took[FORMAT_TIMESPAN_MAX], max[FORMAT_TIMESPAN_MAX];
        usec_t t = now(CLOCK_MONOTONIC);
        char *s;

        if (!knob_look_stale(look, t))
                return NULL;
        f->changed = true;
        if (asprintf(&s,
                     "the last look at the mounts began %s before this write, more than %s: a filesystem "
                     "mounted meanwhile would not be seen",
                     format_timespan(took, sizeof took, t >= look ? t - look : 0),
                     format_timespan(max, sizeof max, KNOB_LOOK_MAX)) < 0)
                return NULL;
        return s;
}

/* The knob's gate (kernel-knob.h KnobGate), asked under its lock before and after the write: the
 * hook still waits (the daemon's late pass), and the last look is still recent. look 0: none made,
 * closed. */
_Static_assert(KNOB_LOOK_MAX == 50 * USEC_PER_MSEC, "pass_knob_gate() says 50ms");
typedef struct KnobGateState {
        const RunDone *notify;
        usec_t look;
        usec_t stall; /* tests: after the first look found it open (Args.knob_write_stall) */
} KnobGateState;

static const char *pass_knob_gate(void *userdata) {
        KnobGateState *g = userdata;

        if (g->notify && g->notify->requester_waits && !g->notify->requester_waits(g->notify->userdata))
                return "the system-sleep hook stopped waiting for this pass (it may have slept and resumed "
                       "since)";
        if (g->look == 0 || knob_look_stale(g->look, now(CLOCK_MONOTONIC)))
                return "the last look at the mounts began more than 50ms before this write";
        if (g->stall > 0) {
                struct timespec ts;

                (void) nanosleep(timespec_store(&ts, g->stall), NULL);
                g->stall = 0;
        }
        return NULL;
}

static void pass_knob(Pass *p, const RunDone *notify) {
        const Args *a = p->a;

        /* Only the late pass, right before the kernel's own sync, may change the knob: after the
         * unit's main pass, writes may still happen before the hook runs, and the sleep may not
         * happen at all (then nothing would put the knob back). */
        if (touches_knob(a) && a->late) {
                KnobFacts f = run_knob_facts(&p->t, p->c.sample->complete, a->late, p->carried,
                                             p->earlier_hung);
                _cleanup_free_ char *detail = NULL;
                KnobGateState gate_state;
                usec_t look = 0;
                int v;

                f.records_on_disk = p->state_on_disk;
                f.unit_left_unknown = p->carried_unknown && !p->t.unsynced;
                f.unit_pass = p->unit_pass && !p->t.unit_unseen;
                /* Read only when nothing else keeps the kernel's sync on. */
                if (knob_decide(p->c.policy->sync_on_suspend, &f, &v) > 0)
                        detail = pass_knob_late_facts(p, &f);
                /* Whatever the late facts said: a reason of theirs that does not decide here (another
                 * hook, in "off" or over a hung device) must not stand in for the second sample. */
                if (knob_decide(p->c.policy->sync_on_suspend, &f, &v) > 0) {
                        char *why;

                        look = now(CLOCK_MONOTONIC); /* the last look begins (KNOB_LOOK_MAX) */
                        why = pass_knob_changed(p, &f);

                        if (a->knob_look_delay > 0) { /* tests: a look that takes this much longer */
                                struct timespec ts;
                                (void) nanosleep(timespec_store(&ts, a->knob_look_delay), NULL);
                        }
                        /* Unchanged: the look must still be recent at the write (review AD, AD1). */
                        if (!f.changed)
                                why = pass_knob_stale(look, &f);
                        if (why) {
                                free(detail);
                                detail = why;
                        }
                }
                /* Last, right before the write (the facts above may take a bounded child's time). */
                f.requester_gone = notify && notify->requester_waits &&
                                   !notify->requester_waits(notify->userdata);
                gate_state = (KnobGateState) { .notify = notify, .look = look, .stall = a->knob_write_stall };
                verb_knob_apply(a, p->c.policy, &f, detail,
                                p->t.n_uncovered > 0 ? &p->rec.mounts[p->t.first_uncovered] : NULL,
                                p->t.n_uncovered,
                                &(const KnobGate) { .closed = pass_knob_gate, .userdata = &gate_state });
        }
}

/* After the knob decision: this talks to PID 1. Runs started by systemd only (unit, hook). */
static void pass_scope(Pass *p) {
        if (touches_knob(p->a))
                verb_stuck_to_scope(p->j.jobs, p->j.n_jobs, p->deadline);
}

/* The exit status the run verb documents, from the tally. */
static int pass_exit_code(const Pass *p) {
        const RunTally *t = &p->t;

        if (t->n_error > 0)
                return EXIT_SYNC_ERROR;
        if (t->n_timeout > 0 && p->c.policy->on_timeout == ON_TIMEOUT_FAIL)
                return EXIT_SYNC_TIMEOUT;
        return EXIT_SUCCESS;
}

static bool pass_recorded(const Pass *p) {
        return p->saved && streq_ptr(p->rec.result, "success");
}

static int pass_log(const Pass *p) {
        const RunTally *t = &p->t;
        usec_t d = now(CLOCK_MONOTONIC) - p->a->started;
        char not_started[64] = "";

        /* A worker that could not be started is no slow disk (review AS, AS-5): said apart, in words
         * only; the outcome, the exit status and N_TIMED_OUT= still count it as a timeout. */
        if (t->n_not_started > 0)
                snprintf(not_started, sizeof not_started, "%zu not started: no worker could be started, ",
                         t->n_not_started);

        log_event(t->n_error + t->n_timeout > 0 ? LOG_WARNING : LOG_INFO,
                  SUSPEND_SYNC_MESSAGE_RUN_SUMMARY_STR,
                  &(LogEvent) { .outcome = p->rec.result,
                                .duration = d,
                                .trigger = p->a->trigger,
                                .sleep_action = p->a->sleep_action,
                                .n_synced = t->n_synced,
                                .n_timed_out = t->n_timeout,
                                .n_failed = t->n_error,
                                .n_skipped = t->n_skipped,
                                .deadline = p->c.policy->deadline },
                  "Synced %zu of %zu superblocks (%zu timed out, %s%zu failed, %zu mounts skipped) in %.3fs.",
                  t->n_synced, p->c.plan->n_sync, t->n_timeout - t->n_not_started, not_started, t->n_error,
                  t->n_skipped, (double) (now(CLOCK_MONOTONIC) - p->a->started) / USEC_PER_SEC);

        /* Debug: the record says it per mount, and on the sleep path each message is journald's
         * work beside PID 1's (docs/PERFORMANCE.md). */
        if (t->n_deferred > 0)
                log_debug("Left %zu superblock(s) to the late pass (DeferCommit=yes).", t->n_deferred);
        if (p->late_skip_told) {
                char x[FORMAT_TIMESPAN_MAX], y[FORMAT_TIMESPAN_MAX];

                log_info(
                        "The late pass is left out of this suspend: everything is synced, and the kernel's "
                        "own sync should take about %s, under the %s the late pass costs (KeepCheapSync=yes).",
                        format_timespan(x, sizeof x, p->rec.kernel_sync_estimate),
                        format_timespan(y, sizeof y, p->a->late_skip_below ?: LATE_SKIP_BELOW));
        }
        return pass_exit_code(p);
}

/* The configuration read in full: its bounds for a later pass that cannot read it (conf-bounds.h).
 * After the outcome is decided and told (an atomic rename on tmpfs, no lock: a pid's own temporary
 * file). Not by the late pass: systemd-sleep waits for its exit before the state write, and the
 * unit's or the daemon's pass of the same sleep read the same files moments before. */
static void pass_save_bounds(const Pass *p) {
        int r;

        if (p->a->late)
                return;
        r = context_save_bounds(p->a, &p->c);
        if (r < 0)
                log_debug_errno(r, "Failed to write '%s/" CONF_BOUNDS_FILE "', ignoring: %m",
                                p->a->state_dir);
}

/* The unit's pass started by a service manager asks PID 1 at once which units require it: the
 * answer comes while the pass reads its configuration and samples (DeferCommit=, defer-commit.h). */
static void pass_ask_requirers(Pass *p) {
        _cleanup_free_ char *unit = NULL;
        int r;

        if (!streq_ptr(p->a->trigger, "unit") || p->a->late || isempty(p->a->invocation_id))
                return;
        p->requirers_until = now(CLOCK_MONOTONIC) + REQUIRERS_TIMEOUT;
        r = sd_pid_get_unit(0, &unit);
        if (r >= 0)
                r = manager_requirers_start(unit, &p->requirers);
        p->requirers_error = r < 0 ? r : 0;
}

/* The outcome is known once the record and handover are saved (and, in the late pass, the knob
 * decided): nothing the pass does after (log, scope) writes the state directory, so the lock goes
 * first and the caller is told. */
static void pass_notify(Pass *p, const RunDone *notify) {
        if (!notify || !notify->done)
                return;
        p->lock_fd = safe_close(p->lock_fd);
        notify->done(pass_exit_code(p), pass_recorded(p), notify->userdata);
}

/* lock → prepare → execute → record (late-skip: the unit's pass) → (notify: main pass) → knob → (notify:
 * late pass) → scope → the configuration's bounds → log. */
int verb_run(const Args *a, const RunDone *notify, int *ret_exit, bool *ret_recorded) {
        _cleanup_(pass_done) Pass p = {
                .a = a,
                .c = CONTEXT_NULL,
                .lock_fd = -EBADF,
                .state_fd = -EBADF,
                .proc_fd = -EBADF,
                .sysfs_fd = -EBADF,
                .fuse_after = BOUNDED_CHILD_NULL,
                .started_rt = now(CLOCK_REALTIME),
        };
        int r;

        /* one moment's pair (the initializers' reads are in no set order): started_suspended */
        now_monotonic_boottime(&p.started_mono, &p.started_bt);
        *ret_exit = EXIT_FAILURE;

        pass_ask_requirers(&p);
        r = pass_lock(&p);
        if (r < 0)
                return r;
        r = pass_prepare(&p);
        if (r < 0)
                return r;
        r = pass_execute(&p);
        if (r < 0)
                return r;
        r = pass_record(&p);
        if (r < 0)
                return r;
        pass_late_skip_tell(&p);
        if (!a->late)
                pass_notify(&p, notify);
        pass_knob(&p, notify);
        if (a->late)
                pass_notify(&p, notify);
        pass_scope(&p);
        pass_save_bounds(&p);
        *ret_exit = pass_log(&p);
        if (ret_recorded)
                *ret_recorded = pass_recorded(&p);
        return 0;
}
