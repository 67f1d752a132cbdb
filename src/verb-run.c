/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "evidence.h"
#include "executor.h"
#include "handover.h"
#include "shared/proc-util.h"
#include "kernel-knob.h"
#include "log.h"
#include "message-ids.h"
#include "notify.h"
#include "scope.h"
#include "state.h"
#include "verbs.h"

/* Time kept back from the executor for recording the run (tmpfs writes), so the whole command
 * returns by DeadlineSec. */
static usec_t record_reserve(usec_t deadline) {
        return MIN(deadline / 20, 50 * USEC_PER_MSEC);
}

/* A timed-out job is "hung" only if the executor proved its device stuck (no I/O completed for the
 * proof window) and its worker is still stuck: a job that merely was not started before the
 * deadline, a slow device, or one without evidence does not make the kernel's own sync harmful. */
static bool job_hung(const ExecJob *jobs, const StuckWorker *const *blocked, size_t n, size_t i) {
        if (jobs[i].outcome != OUTCOME_TIMEOUT || !jobs[i].hung)
                return false;
        /* Not started: a worker of an earlier pass is still stuck on the device, which was proven
         * stuck then (handover_prune() checked just now that it still is in the kernel). */
        if (blocked[i])
                return true;
        if (jobs[i].abandoned_pid > 0)
                return executor_worker_stuck(jobs[i].abandoned_pid);
        /* Not started behind a stuck worker of its group: hung while that worker is. */
        for (size_t j = 0; j < n; j++)
                if (j != i && jobs[j].abandoned_pid > 0 && jobs[j].hung && streq_ptr(jobs[j].group, jobs[i].group))
                        return executor_worker_stuck(jobs[j].abandoned_pid);
        return false;
}

/* Updates the handover after the pass: adds the workers it left in the kernel; the unit's pass
 * replaces the "unsynced" lines with its own (left[]). Returns whether a fresh "unsynced" line of
 * the unit's pass names a superblock this late pass did not sync. */
static bool handover_update(Handover *h, const Args *a, const ExecJob *jobs, size_t n, int proc_fd,
                            const dev_t *left, size_t n_left) {
        usec_t boot = now(CLOCK_BOOTTIME);
        bool carried = false;
        int r;

        for (size_t i = 0; i < n; i++) {
                uint64_t start;

                if (jobs[i].abandoned_pid <= 0 || !jobs[i].group || !executor_worker_stuck(jobs[i].abandoned_pid) ||
                    proc_fd < 0 || proc_pid_start_time(proc_fd, jobs[i].abandoned_pid, &start, NULL) < 0 ||
                    handover_find_stuck(h, jobs[i].group))
                        continue;
                r = handover_add_stuck(h, jobs[i].abandoned_pid, start, jobs[i].hung, boot, jobs[i].group);
                if (r < 0)
                        log_debug("Cannot list worker " PID_FMT " as stuck (%s), ignoring.",
                                  jobs[i].abandoned_pid, strerror(-r));
        }

        if (streq_ptr(a->trigger, "unit") && !a->late) {
                handover_clear_unsynced(h);
                for (size_t k = 0; k < n_left; k++)
                        if (handover_add_unsynced(h, left[k], boot) < 0) {
                                /* Full: 0:0 is a superblock no pass ever syncs, so the late pass keeps
                                 * the kernel's sync on. */
                                h->unsynced[h->n_unsynced - 1] = 0;
                                break;
                        }
        }

        if (a->late)
                for (size_t k = 0; k < h->n_unsynced && !carried; k++) {
                        bool synced = false;

                        if (!handover_unsynced_fresh(h, k, boot))
                                continue;
                        for (size_t i = 0; i < n && !synced; i++)
                                synced = jobs[i].dev == h->unsynced[k] && jobs[i].outcome == OUTCOME_SYNCED;
                        carried = !synced;
                }
        return carried;
}

/* Abandoned workers still in the kernel would keep the unit that ran us busy after resume
 * (systemd-suspend.service "deactivating", "left-over process" at suspend-sync.service's next start):
 * hand them to a scope of their own, with what is left before the deadline (less a few ms for the
 * summary). */
static void stuck_workers_to_scope(const ExecJob *jobs, size_t n, usec_t deadline) {
        _cleanup_free_ pid_t *pids = calloc(MAX(n, 1), sizeof(pid_t));
        _cleanup_free_ char *unit = NULL;
        usec_t t = now(CLOCK_MONOTONIC), margin = 5 * USEC_PER_MSEC;
        size_t k = 0;
        int r;

        if (!pids) {
                log_oom();
                return;
        }
        for (size_t i = 0; i < n; i++) {
                bool seen = false;
                for (size_t j = 0; j < k; j++)
                        seen = seen || pids[j] == jobs[i].abandoned_pid;
                if (!seen && executor_worker_stuck(jobs[i].abandoned_pid))
                        pids[k++] = jobs[i].abandoned_pid;
        }
        if (k == 0)
                return;
        r = t + margin < deadline ? scope_adopt(pids, k, deadline - margin - t, &unit) : -ETIMEDOUT;
        if (r == -ENOMEDIUM)
                log_debug("systemd is not PID 1: %zu stuck worker(s) stay in our cgroup.", k);
        else if (r < 0)
                log_warning_errno(r, "Failed to move %zu stuck worker(s) out of this unit to a scope, ignoring: %m",
                                  k);
        else
                log_notice("Moved %zu stuck worker(s) out of this unit to %s.", k, unit);
}

/* Evidence for the plain FUSE superblocks the late pass left out (evidence.h), read after the
 * workers: every such bdi's writeback lists first, then the system's writeback once. Fills
 * clean[i] for plan entry i; returns how many were proven clean. Reasons are appended to the
 * records' in verb_run(). */
static size_t late_fuse_evidence(const Context *c, const char **why, bool *clean) {
        const Plan *p = c->plan;
        _cleanup_free_ BdiStats *bdi = calloc(MAX(p->n_entries, 1), sizeof(BdiStats));
        _cleanup_free_ int *bdi_r = calloc(MAX(p->n_entries, 1), sizeof(int));
        Meminfo global = {};
        int global_r;
        size_t n = 0, n_clean = 0;

        if (!bdi || !bdi_r)
                return 0; /* no evidence: uncovered */
        for (size_t i = p->n_sync; i < p->n_entries; i++) {
                const PlanEntry *e = &p->entries[i];

                if (!e->uncovered || !e->fuse_evidence)
                        continue;
                bdi_r[i] = c->debugfs_fd >= 0 && e->bdi_name ? bdi_stats_load(c->debugfs_fd, e->bdi_name, &bdi[i])
                                                             : -ENODATA;
                n++;
        }
        if (n == 0)
                return 0;
        global_r = evidence_load_global(c->root_fd, &global);
        for (size_t i = p->n_sync; i < p->n_entries; i++) {
                const PlanEntry *e = &p->entries[i];

                if (!e->uncovered || !e->fuse_evidence)
                        continue;
                clean[i] = evidence_fuse_clean(&bdi[i], bdi_r[i], &global, global_r, &why[i]);
                n_clean += clean[i];
        }
        return n_clean;
}

/* A job that ended without a sync of its own that is not a failure: recorded as skipped. */
static int record_as_skipped(RunMount *m, const char *reason) {
        free(m->outcome);
        free(m->reason);
        m->outcome = strdup(outcome_to_string(OUTCOME_SKIPPED));
        m->reason = strdup(reason);
        m->error = 0;
        return m->outcome && m->reason ? 0 : -ENOMEM;
}

static bool touches_knob(const Args *a) {
        return streq_ptr(a->trigger, "unit") || streq_ptr(a->trigger, "hook");
}

static void knob_restore_logged(int sysfs_fd, const char *state_dir, const char *why) {
        _cleanup_close_ int dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int value = -1, r;

        if (dir_fd < 0)
                return;
        r = knob_restore(sysfs_fd, dir_fd, &value);
        if (r == -ENOENT)
                log_notice("The kernel has no sync_on_suspend knob any more; dropped the record.");
        else if (r < 0)
                log_warning_errno(r, "Failed to restore /sys/power/sync_on_suspend, ignoring: %m");
        else if (r != KNOB_RESTORE_NOTHING)
                log_event(LOG_NOTICE, SUSPEND_SYNC_MESSAGE_KNOB_RESTORED_STR, &(LogEvent) { .knob_new = value },
                          "Restored /sys/power/sync_on_suspend to %d (%s)%s.", value, why,
                          r == KNOB_RESTORE_SAFE ? ", record was garbled: used the kernel default" : "");
}

/* The sleep happened or was called off: what the unit's pass left unsynced is no longer news for a
 * late pass. Stuck workers stay listed until they end. Under the lock, or not at all. */
static void handover_end_cycle(const char *state_dir) {
        _cleanup_(handover_done) Handover h = {};
        _cleanup_close_ int lock_fd = -EBADF, dir_fd = -EBADF;

        if (state_lock(state_dir, &lock_fd) < 0)
                return;
        dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0 || handover_load(dir_fd, &h) < 0 || h.n_unsynced == 0)
                return;
        handover_clear_unsynced(&h);
        if (handover_save(dir_fd, &h) < 0)
                log_debug("Failed to update the handover file, ignoring.");
}

int verb_restore_knob(const Args *a) {
        _cleanup_close_ int sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (sysfs_fd < 0)
                return log_error_errno(negative_errno(), "Failed to open '%s': %m", a->sysfs);
        knob_restore_logged(sysfs_fd, a->state_dir, "resume");
        handover_end_cycle(a->state_dir);
        return 0;
}

static const char *knob_kept_why(const KnobFacts *f) {
        if (f->unsynced)
                return "a mount was left unsynced (error, slow device or timeout without proof of a hang)";
        if (!f->complete)
                return "the view of the mounts was incomplete";
        if (!f->covered)
                return "this pass left mounts out, or writes may still follow it";
        return NULL;
}

static void knob_apply(const Args *a, const Policy *p, const KnobFacts *f, const RunMount *uncovered,
                       size_t n_uncovered) {
        _cleanup_close_ int sysfs_fd = -EBADF, dir_fd = -EBADF;
        const char *why;
        int value, r;

        r = knob_decide(p->sync_on_suspend, f, &value);
        if (r < 0)
                return;
        if (r == 0) {
                why = knob_kept_why(f);
                if (!why || p->sync_on_suspend == SYNC_ON_SUSPEND_KEEP)
                        return;
                /* An earlier pass of this cycle (the unit's) may have turned the kernel sync off:
                 * what this pass found wins, so put the original back. */
                sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sysfs_fd >= 0)
                        knob_restore_logged(sysfs_fd, a->state_dir, why);
                if (f->unsynced || !f->complete)
                        log_notice("Leaving the kernel's own sync on: %s.", why);
                else if (uncovered)
                        /* Which mount kept it on, so that an administrator can tell. */
                        log_notice("Leaving the kernel's own sync on: this pass left %s out (%s)%s.",
                                   uncovered->mount_point, uncovered->reason,
                                   n_uncovered > 1 ? ", and more mounts" : "");
                return;
        }
        sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        dir_fd = open(a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sysfs_fd < 0 || dir_fd < 0) {
                log_warning_errno(negative_errno(), "Cannot reach sysfs or the state directory, leaving "
                                  "sync_on_suspend alone: %m");
                return;
        }
        r = knob_save_and_set(sysfs_fd, dir_fd, value);
        if (r == -ENOENT)
                log_event(LOG_NOTICE, SUSPEND_SYNC_MESSAGE_KNOB_ABSENT_STR, NULL,
                          "SyncOnSuspend=%s: this kernel has no /sys/power/sync_on_suspend, carrying on.",
                          sync_on_suspend_mode_to_string(p->sync_on_suspend));
        else if (r < 0)
                log_warning_errno(r, "Failed to set /sys/power/sync_on_suspend, ignoring: %m");
        else if (r > 0)
                /* r > 0: the knob (0 or 1, else -EBADMSG) was written, so it held the other value. */
                log_event(LOG_NOTICE, SUSPEND_SYNC_MESSAGE_KNOB_CHANGED_STR,
                          &(LogEvent) { .knob_old = !value, .knob_new = value },
                          "Set /sys/power/sync_on_suspend to %d for this sleep (%s).", value,
                          f->hung ? "a mount is hung, the kernel sync would block on it"
                                  : "everything the kernel sync would write was just synced");
}

int verb_run(const Args *a, int *ret_exit) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        _cleanup_(run_record_done) RunRecord rec = {};
        _cleanup_(handover_done) Handover ho = {};
        _cleanup_free_ ExecJob *jobs = NULL, *run_jobs = NULL;
        _cleanup_free_ size_t *run_index = NULL;
        _cleanup_free_ const StuckWorker **blocked = NULL;
        _cleanup_free_ ProgressProbe *probes = NULL;
        _cleanup_close_ int lock_fd = -EBADF, probe_sysfs_fd = -EBADF, state_fd = -EBADF, proc_fd = -EBADF;
        _cleanup_free_ dev_t *left = NULL;
        _cleanup_free_ const char **fuse_why = NULL;
        _cleanup_free_ bool *fuse_clean = NULL;
        size_t n_run = 0, n_blocked = 0, n_left = 0, n_fuse_clean = 0, n_uncovered = 0, first_uncovered = 0;
        bool carried = false, earlier_hung = false;
        usec_t started_rt = now(CLOCK_REALTIME), deadline, t0, t1;
        size_t n_synced = 0, n_timeout = 0, n_hung = 0, n_error = 0, n_skipped = 0;
        bool is_tmpfs = true, covered = true, unsynced = false, gone = false;
        int r;

        *ret_exit = EXIT_FAILURE;

        r = state_lock(a->state_dir, &lock_fd);
        if (r == -EBUSY)
                return log_error_errno(r, "Another suspend-sync run holds '%s/lock', refusing to run twice.",
                                       a->state_dir);
        if (r < 0)
                /* A missing or read-only state directory must not cost a sync: carry on unrecorded. */
                log_warning_errno(r, "Cannot lock state directory '%s', the run will not be recorded: %m",
                                  a->state_dir);
        else if (state_dir_check(a->state_dir, &is_tmpfs) >= 0 && !is_tmpfs)
                log_warning("State directory '%s' is not on tmpfs: recording dirties a real filesystem.",
                            a->state_dir);

        /* What earlier passes left: workers still stuck in the kernel (their devices get no second
         * worker), what the unit's pass left unsynced. Only under the lock. */
        if (lock_fd >= 0) {
                state_fd = open(a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = state_fd < 0 ? negative_errno() : handover_load(state_fd, &ho);
                if (r < 0)
                        log_warning_errno(r, "Failed to read '%s/" HANDOVER_FILE "', ignoring: %m", a->state_dir);
                else if (ho.n_bad > 0)
                        log_notice("Ignored %zu malformed lines in '%s/" HANDOVER_FILE "'.", ho.n_bad, a->state_dir);
                if (proc_fd >= 0) {
                        (void) handover_prune(&ho, proc_fd);
                        /* A device an earlier pass proved stuck, whose worker still is: the kernel's
                         * sync would block on it whether or not this pass plans it (FUSE). */
                        for (size_t i = 0; i < ho.n_stuck; i++)
                                earlier_hung = earlier_hung || ho.stuck[i].hung;
                } else
                        /* Cannot tell live from ended: forget them (at worst a second worker). */
                        handover_clear_stuck(&ho);
        }

        /* A knob left changed by a run that was killed is put back before anything else. Only the
         * late pass changes it: a sleep that does not happen after the unit's pass (cancelled, or
         * this unit's failure failed sleep.target) must find it untouched. */
        if (touches_knob(a) && !a->late) {
                _cleanup_close_ int sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sysfs_fd >= 0)
                        knob_restore_logged(sysfs_fd, a->state_dir, "left over from an interrupted run");
        }

        r = context_prepare(a, a->late ? PLAN_SCOPE_LOCAL_BLOCK : PLAN_SCOPE_ALL, &c);
        if (r < 0)
                return r;

        deadline = a->started + c.policy->deadline;
        log_set_deadline(deadline);
        /* The unit's start timeout follows DeadlineSec=: what is left of it, plus the time to record,
         * log and exit. A manager that is not listening costs nothing. */
        if (streq_ptr(a->trigger, "unit")) {
                usec_t n = now(CLOCK_MONOTONIC);

                r = notify_extend_timeout((deadline > n ? deadline - n : 0) + NOTIFY_EXIT_MARGIN);
                if (r < 0)
                        log_debug("Could not ask the service manager for more start time (%s), ignoring.",
                                  strerror(-r));
        }
        jobs = calloc(MAX(c.plan->n_sync, 1), sizeof(ExecJob));
        run_jobs = calloc(MAX(c.plan->n_sync, 1), sizeof(ExecJob));
        run_index = calloc(MAX(c.plan->n_sync, 1), sizeof(size_t));
        blocked = calloc(MAX(c.plan->n_sync, 1), sizeof(StuckWorker *));
        probes = calloc(MAX(c.plan->n_sync, 1), sizeof(ProgressProbe));
        left = calloc(MAX(c.plan->n_sync, 1), sizeof(dev_t));
        if (!jobs || !run_jobs || !run_index || !blocked || !probes || !left)
                return log_oom();
        /* Progress evidence for the executor: sysfs and debugfs only, read from this process. */
        probe_sysfs_fd = open(a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (size_t i = 0; i < c.plan->n_sync; i++) {
                const Superblock *s = &c.sample->sbs[c.plan->entries[i].sb];

                probes[i] = (ProgressProbe) {
                        .sysfs_fd = s->device.is_block ? probe_sysfs_fd : -EBADF,
                        .debugfs_fd = c.debugfs_fd,
                        .leaves = s->device.leaves,
                        .n_leaves = s->device.n_leaves,
                        .bdi_name = s->device.bdi_name,
                };
                jobs[i] = (ExecJob) {
                        .path = c.plan->entries[i].path,
                        .group = c.plan->entries[i].group,
                        .timeout = c.plan->entries[i].timeout,
                        .dev = c.plan->entries[i].dev,
                        .mount_id = c.plan->entries[i].mount_id,
                        /* "Gone" needs the whole table: a restricted view (chroot) or an
                         * unlisted path cannot tell unmounted from invisible. */
                        .gone_check = c.plan->entries[i].namespace_ino == 0 && !c.sample->view_restricted &&
                                      !c.plan->entries[i].unlisted,
                        .flush_device = c.plan->entries[i].flush_device,
                        .covered_if_path = c.plan->entries[i].covered_if_path,
                        .covered_if_dev = c.plan->entries[i].covered_if_dev,
                        .progress = &probes[i],
                        .run_as_uid = c.plan->entries[i].run_as_uid,
                        .run_as_gid = c.plan->entries[i].run_as_gid,
                };
                /* A worker of an earlier pass is still stuck on this device: a second one would
                 * only get stuck too (and pile up from sleep to sleep). */
                blocked[i] = handover_find_stuck(&ho, jobs[i].group);
                if (blocked[i]) {
                        jobs[i].outcome = OUTCOME_TIMEOUT;
                        jobs[i].hung = blocked[i]->hung;
                        n_blocked++;
                        continue;
                }
                run_index[n_run] = i;
                run_jobs[n_run++] = jobs[i];
        }

        t0 = now(CLOCK_MONOTONIC);
        r = executor_run(run_jobs, n_run, c.policy->max_parallel,
                         deadline - record_reserve(c.policy->deadline), NULL);
        t1 = now(CLOCK_MONOTONIC);
        if (r < 0)
                return log_error_errno(r, "Failed to start the sync workers: %m");
        for (size_t k = 0; k < n_run; k++)
                jobs[run_index[k]] = run_jobs[k];

        /* Plain FUSE mounts the late pass left out: proven clean now, after our workers? */
        fuse_why = calloc(MAX(c.plan->n_entries, 1), sizeof(char *));
        fuse_clean = calloc(MAX(c.plan->n_entries, 1), sizeof(bool));
        if (!fuse_why || !fuse_clean)
                return log_oom();
        if (a->late)
                n_fuse_clean = late_fuse_evidence(&c, fuse_why, fuse_clean);
        if (n_fuse_clean > 0)
                log_debug("%zu FUSE mount(s) left out of this pass proven clean.", n_fuse_clean);

        /* Record. */
        rec = (RunRecord) {
                .started_realtime = started_rt,
                .deadline = c.policy->deadline,
                .t_read = c.sample->t_read,
                .t_sample = c.sample->t_sample,
                .t_plan = c.plan->t_plan,
                .t_execute = t1 - t0,
        };
        rec.has_complete = true;
        rec.complete = c.sample->complete;
        if (c.sample->n_incomplete_why > 0) {
                rec.incomplete_why = calloc(c.sample->n_incomplete_why, sizeof(char *));
                if (!rec.incomplete_why)
                        return log_oom();
                for (size_t i = 0; i < c.sample->n_incomplete_why && i < STATE_REASONS_MAX; i++) {
                        rec.incomplete_why[i] = strdup(c.sample->incomplete_why[i]);
                        if (!rec.incomplete_why[i])
                                return log_oom();
                        rec.n_incomplete_why = i + 1;
                }
        }
        rec.trigger = strdup(a->trigger);
        if (a->sleep_action && !(rec.sleep_action = strdup(a->sleep_action)))
                return log_oom();
        rec.mounts = calloc(MAX(c.plan->n_entries, 1), sizeof(RunMount));
        if (!rec.trigger || !rec.mounts)
                return log_oom();
        rec.n_mounts = c.plan->n_entries;

        for (size_t i = 0; i < c.plan->n_entries; i++) {
                const PlanEntry *e = &c.plan->entries[i];
                RunMount *m = &rec.mounts[i];
                Outcome o = i < c.plan->n_sync ? jobs[i].outcome : OUTCOME_SKIPPED;

                m->mount_point = strdup(e->mount_point);
                m->namespace_ino = e->namespace_ino;
                m->fstype = strdup(e->fstype);
                m->action = strdup(plan_action_to_string(e->action));
                m->reason = strdup(e->reason);
                m->outcome = strdup(outcome_to_string(o));
                if (!m->mount_point || !m->fstype || !m->action || !m->reason || !m->outcome)
                        return log_oom();

                if (i >= c.plan->n_sync) {
                        n_skipped++;
                        /* The kernel sync is redundant only if nothing it would write was left out
                         * (late scope, Action=skip), unless evidence read now, after our own
                         * workers, proves the mount clean. */
                        if (e->uncovered && e->fuse_evidence && (fuse_clean[i] || fuse_why[i])) {
                                free(m->reason);
                                if (fuse_clean[i]
                                    ? asprintf(&m->reason, "late pass: FUSE, proven clean: no dirty inode on "
                                               "its bdi %s, no page under writeback", e->bdi_name) < 0
                                    : asprintf(&m->reason, "%s; FUSE, not proven clean: %s", e->reason,
                                               fuse_why[i]) < 0) {
                                        m->reason = NULL;
                                        return log_oom();
                                }
                                if (fuse_clean[i])
                                        continue;
                        }
                        if (e->uncovered) {
                                if (covered)
                                        first_uncovered = i;
                                covered = false;
                                n_uncovered++;
                        }
                        continue;
                }
                m->duration = jobs[i].duration;
                m->error = jobs[i].error;
                m->abandoned_pid = (int) jobs[i].abandoned_pid;

                switch (o) {
                case OUTCOME_SYNCED:
                        n_synced++;
                        break;
                case OUTCOME_TIMEOUT:
                        n_timeout++;
                        free(m->reason);
                        if (blocked[i]) {
                                if (blocked[i]->hung)
                                        n_hung++;
                                else {
                                        unsynced = true;
                                        left[n_left++] = e->dev;
                                }
                                if (asprintf(&m->reason, "%s: not started, worker " PID_FMT " of an earlier pass is "
                                             "still in the kernel on this device%s",
                                             blocked[i]->hung ? "hung" : "busy", blocked[i]->pid,
                                             blocked[i]->hung ? "" : ": left to the kernel's sync") < 0)
                                        m->reason = NULL;
                        } else if (job_hung(jobs, blocked, c.plan->n_sync, i)) {
                                n_hung++;
                                m->reason = strdup(jobs[i].abandoned_pid > 0
                                                   ? "hung: its device completed no I/O for the proof window, "
                                                     "worker still in the kernel"
                                                   : "hung: not started, its device is stuck");
                        } else {
                                unsynced = true;
                                left[n_left++] = e->dev;
                                m->reason = strdup(jobs[i].abandoned_pid == 0 ? "not started before the deadline"
                                                   : jobs[i].hung ? "stuck device woke up: left to the kernel's sync"
                                                   : "slow or without progress evidence: left to the kernel's sync");
                        }
                        if (!m->reason)
                                return log_oom();
                        if (blocked[i])
                                log_event(LOG_WARNING, SUSPEND_SYNC_MESSAGE_MOUNT_TIMEOUT_STR,
                                          &(LogEvent) { .mount = e->mount_point, .outcome = "timeout" },
                                          "Sync of %s not started: worker " PID_FMT " of an earlier pass is "
                                          "still stuck on its device.", e->mount_point, blocked[i]->pid);
                        else
                                log_event(LOG_WARNING, SUSPEND_SYNC_MESSAGE_MOUNT_TIMEOUT_STR,
                                          &(LogEvent) { .mount = e->mount_point, .outcome = "timeout",
                                                        .duration = jobs[i].duration },
                                          jobs[i].abandoned_pid > 0
                                                  ? "Sync of %s timed out, worker " PID_FMT " abandoned."
                                                  : "Sync of %s not started before the deadline.",
                                          e->mount_point, jobs[i].abandoned_pid);
                        break;
                default:
                        if (o == OUTCOME_GONE) {
                                /* Gone: no mount of this superblock is left (unmounting synced it).
                                 * Not a sync failure, but not ours either. */
                                if (record_as_skipped(m, "gone: unmounted since the plan was made") < 0)
                                        return log_oom();
                                n_skipped++;
                                /* A lazily unmounted superblock lives on while files are open: only
                                 * the kernel's sync still reaches it. */
                                gone = true;
                                break;
                        }
                        if (o == OUTCOME_COVERED) {
                                /* An overlay whose upperdir lies on the upper superblock just synced. */
                                if (record_as_skipped(m, "overlay: upperdir verified on its upper layer, synced "
                                                         "before it") < 0)
                                        return log_oom();
                                n_skipped++;
                                break;
                        }
                        n_error++;
                        unsynced = true;
                        left[n_left++] = e->dev;
                        log_event(LOG_ERR, SUSPEND_SYNC_MESSAGE_MOUNT_ERROR_STR,
                                  &(LogEvent) { .mount = e->mount_point, .outcome = "error",
                                                .duration = jobs[i].duration, .error = jobs[i].error ?: EIO },
                                  "Sync of %s failed: %s", e->mount_point,
                                  strerror(jobs[i].error ? jobs[i].error : EIO));
                        break;
                }
        }

        rec.result = strdup(n_error > 0 ? "error" : n_timeout > 0 ? "timeout" : "success");
        if (!rec.result)
                return log_oom();

        if (lock_fd >= 0) {
                usec_t t2 = now(CLOCK_MONOTONIC);
                rec.duration = t2 - a->started;
                /* What happened after the workers: assembling the record. The write itself cannot
                 * be inside the record it writes (tmpfs, ~100 us). */
                rec.t_record = t2 - t1;
                r = state_save(a->state_dir, &rec);
                if (r < 0)
                        log_warning_errno(r, "Failed to record the run in '%s', ignoring: %m", a->state_dir);
        }

        if (state_fd >= 0) {
                carried = handover_update(&ho, a, jobs, c.plan->n_sync, proc_fd, left, n_left);
                r = handover_save(state_fd, &ho);
                if (r < 0)
                        log_warning_errno(r, "Failed to write '%s/" HANDOVER_FILE "', ignoring: %m", a->state_dir);
        }
        if (carried)
                log_notice("The unit's pass of this sleep left superblocks unsynced that this pass did not sync.");

        /* Only the late pass, right before the kernel's own sync, may change the knob: after the
         * unit's main pass, writes may still happen before the hook runs, and the sleep may not
         * happen at all (then nothing would put the knob back). */
        if (touches_knob(a) && a->late) {
                KnobFacts f = {
                        .unsynced = unsynced || carried,
                        .hung = n_hung > 0 || earlier_hung,
                        .complete = c.sample->complete && !gone,
                        .covered = covered && a->late,
                };
                knob_apply(a, c.policy, &f, n_uncovered > 0 ? &rec.mounts[first_uncovered] : NULL, n_uncovered);
        }
        /* After the knob decision: this talks to PID 1. Runs started by systemd only (unit, hook). */
        if (touches_knob(a))
                stuck_workers_to_scope(jobs, c.plan->n_sync, deadline);

        log_event(n_error + n_timeout > 0 ? LOG_WARNING : LOG_INFO, SUSPEND_SYNC_MESSAGE_RUN_SUMMARY_STR,
                  &(LogEvent) { .outcome = rec.result, .duration = now(CLOCK_MONOTONIC) - a->started,
                                .trigger = a->trigger, .sleep_action = a->sleep_action },
                  "Synced %zu of %zu superblocks (%zu timed out, %zu failed, %zu mounts skipped) in %.3fs.",
                  n_synced, c.plan->n_sync, n_timeout, n_error, n_skipped,
                  (double) (now(CLOCK_MONOTONIC) - a->started) / USEC_PER_SEC);

        if (n_error > 0)
                *ret_exit = EXIT_SYNC_ERROR;
        else if (n_timeout > 0 && c.policy->on_timeout == ON_TIMEOUT_FAIL)
                *ret_exit = EXIT_SYNC_TIMEOUT;
        else
                *ret_exit = EXIT_SUCCESS;
        return 0;
}
