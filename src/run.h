/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Run: the pure steps of one pass between the plan and what it leaves behind. Plan → executor jobs
 * (minus the groups a stuck worker of an earlier pass still holds); jobs + plan → the run record's
 * mounts and the tallies; the tallies → the knob facts; what the handover keeps for the next pass.
 * No I/O, no clock, no logging: times are passed in, file descriptors are only stored in progress
 * probes, and whether an abandoned worker is still stuck comes from ExecJob.stuck (set by
 * executor_check_stuck() right before the call).
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "executor.h"
#include "handover.h"
#include "kernel-knob.h"
#include "plan.h"
#include "progress.h"
#include "sample.h"
#include "shared/time-util.h"
#include "state.h"
#include "suspend-stats.h"

typedef struct RunJobs {
        ExecJob *jobs;               /* one per sync entry of the plan, in plan order */
        ProgressProbe *probes;       /* jobs[i].progress = &probes[i] */
        ProgressMemo *memos;         /* probes[i].memo = &memos[i] where the kernel needs it */
        ProgressBusy *busy;          /* every probe's busy: one pass's busy fallback */
        const StuckWorker **blocked; /* non-NULL: a worker of an earlier pass is still stuck on
                                         * jobs[i]'s group (borrowed from the Handover): not
                                         * started, OUTCOME_TIMEOUT, hung as that worker was */
        size_t n_jobs;
        ExecJob *run;      /* what executor_run() gets: the jobs not blocked */
        size_t *run_index; /* run[k] stands for jobs[run_index[k]] */
        size_t n_run;
} RunJobs;

void run_jobs_done(RunJobs *j);

/* One job per sync entry of p (s is the sample p was built from, h what earlier passes left;
 * sysfs_fd and debugfs_fd are stored in the progress probes: sysfs only for block devices; block
 * devices' probes get a ProgressMemo unless held_from is PROGRESS_HELD_STAT). "Gone"
 * is checked only for mounts of our own namespace in a full view, never for unlisted paths. The
 * strings stay borrowed from p and s. 0 or -ENOMEM. */
int run_jobs_build(const Plan *p, const Sample *s, const Handover *h, int sysfs_fd, int debugfs_fd,
                   ProgressHeld held_from, RunJobs *ret);
/* Writeback first (writeback.h): the jobs to run on a block filesystem with bdi stats wait for
 * their device's writeback in flight before syncfs(). Returns whether any of their devices had
 * more than slack bytes dirty when sampled: worth waking the kernel's flusher threads. */
bool run_jobs_settle(RunJobs *j, const Plan *p, const Sample *s, uint64_t slack);
/* After the flushers were woken: those jobs wait for the dirty data to be written as well. */
void run_jobs_settle_all(RunJobs *j);

/* The unit's pass, when defer-commit.h allows it, after run_jobs_settle() (and the flushers woken
 * for what it found dirty): the jobs to run that wait for writeback on an entry with
 * PlanEntry.late_commit are left to the late pass, unless an overlay planned here counts on them as
 * its synced upper layer. They leave run[] (no worker) and end OUTCOME_DEFERRED. Returns how
 * many. */
size_t run_jobs_defer(RunJobs *j, const Plan *p);

/* Copies the results of run[] back into jobs[], after executor_run(). */
void run_jobs_collect(RunJobs *j);

/* What an abandoned worker of job blocks in later passes (the handover's key, StuckWorker.group):
 * its device group when it had entered syncfs or was proven hung (a second worker on that device
 * would wait behind it), else, stuck on its way to the mount (review O, O1: a dead FUSE or NFS
 * server above a healthy mount point), the path it is stuck on: PlanEntry.open_key,
 * "open:MAJ:MIN@ID,...", its mount and the mounts on the way to it a server can hold (review U, U1
 * and U2: not a device number another superblock may get, nor the superblock's other mounts at a
 * local path); without one (unlisted, too many mounts), the superblock, "open:MAJ:MIN" in buf. The
 * other filesystems of its disk stay free. (Not "sb:", which is the group of a superblock without
 * leaf disks: such a stuck worker stays its group's.) */
#define RUN_STUCK_KEY_MAX 32U
#define RUN_STUCK_OPEN_PREFIX PLAN_OPEN_KEY_PREFIX
const char *run_job_stuck_key(const ExecJob *job, char buf[static RUN_STUCK_KEY_MAX]);
/* Whether the handover key of a stuck worker (StuckWorker.group) blocks job as one stuck on its way:
 * "open:MAJ:MIN" (the superblock's key, and the only form before review U) every job of that device
 * number; "open:MAJ:MIN@ID,..." a job whose walk (ExecJob.walk) crosses one of the mounts it names,
 * and, fail closed, every job of that device number whose walk is not known. Other keys: false. */
bool run_stuck_open_blocks(const char *key, const ExecJob *job);

/* Whether jobs[i] timed out on a device that blocks the kernel's sync: proven stuck (ExecJob.hung)
 * and still stuck — its own worker, or the stuck worker of its group it waited behind, or a worker
 * of an earlier pass (blocked[i], checked against /proc when the handover was read). A job not
 * started before the deadline, a slow device, or one without evidence is not hung. */
bool run_job_hung(const RunJobs *j, size_t i);

/* What the journal says of jobs[i] when it did not sync. */
typedef enum RunNote {
        RUN_NOTE_NONE,    /* synced, gone, covered or deferred: nothing */
        RUN_NOTE_ERROR,   /* "Sync of M failed: ERROR" (a job that ended otherwise than below too) */
        RUN_NOTE_TIMEOUT, /* timed out, not started before the deadline, or not started behind a
                           * stuck worker of an earlier pass (blocked[i]) */
} RunNote;

/* The longest mount point in a note, bytes: what follows it (the error, the worker) always fits a
 * log line (log.h, LOG_LINE_MAX: 2048 bytes, where a message is cut). */
#define RUN_NOTE_PATH_MAX 1024U

/* A mount point as a log line shows it: escaped as the tables escape it (a user's FUSE mount point
 * may hold anything: review Q, M3), then shortened in its middle to RUN_NOTE_PATH_MAX bytes, so
 * that what follows it in the line is never cut (review R, R4). Returns buf. */
const char *run_note_path(const char *mount_point, char buf[static RUN_NOTE_PATH_MAX + 1]);

/* The message of jobs[i], whose mount point is mount_point, in buf (size bytes): the mount point
 * shortened in its middle (ellipsize_middle()) to RUN_NOTE_PATH_MAX bytes, so that a path up to
 * the kernel's limit and longer still shows the reason after it; the whole path is in the run
 * record. Returns which kind of note it is; RUN_NOTE_NONE (buf untouched) when there is none. */
RunNote run_job_note(const RunJobs *j, size_t i, const char *mount_point, char *buf, size_t size);

typedef struct RunTally {
        size_t n_synced, n_timeout, n_hung, n_error;
        size_t n_not_started; /* of n_timeout: no worker could be started (fork() failed until the
                               * deadline: EAGAIN from pids.max, ENOMEM); an outcome of timeout all
                               * the same, only the summary's words tell it apart */
        size_t n_skipped;     /* mounts: planned skips, gone, covered */
        size_t n_deferred;    /* left to the late pass, DeferCommit= (listed in left, but
                                         * not unsynced: the kernel's sync is the backstop) */
        bool unsynced;        /* a planned mount is left to the kernel's sync: an error, a
                                         * timeout without proof of a hang, not started */
        bool gone;            /* a superblock was unmounted since the plan (a lazily
                                         * unmounted one lives on, out of our reach) */
        bool covered;         /* no skipped mount may hold data the kernel's sync would
                                         * write (PlanEntry.uncovered, unless proven clean) */
        size_t n_uncovered;
        size_t first_uncovered; /* index in the plan (and the record) of the first one */
        bool unit_unseen;       /* one of them the unit's pass did not see (RunInput.unit): its
                                         * record does not stand for it */
        dev_t *left;            /* the superblocks left unsynced (deferred and skipped by rule
                                         * included), n_left */
        size_t n_left;
} RunTally;

void run_tally_done(RunTally *t);

typedef struct RunInput {
        const Plan *plan;
        const Sample *sample;
        const RunJobs *jobs;         /* after executor_run(), run_jobs_collect() and
                                         * executor_check_stuck() */
        const bool *fuse_clean;      /* per plan entry: a left-out FUSE mount proven clean (evidence.h);
                                         * NULL: none */
        const char *const *fuse_why; /* per plan entry: why it was not proven clean; NULL: none */
        const char *trigger;         /* --trigger= */
        const char *sleep_action;    /* may be NULL */
        usec_t started_realtime;
        usec_t started_monotonic;    /* the same moment, CLOCK_MONOTONIC: jobs' start offsets */
        usec_t started_boottime;     /* ... and CLOCK_BOOTTIME (RunRecord.started_boottime) */
        pid_t pid;                   /* the pass's process (RunRecord.pid) */
        usec_t deadline;             /* DeadlineSec= */
        usec_t t_execute;            /* phase time of the executor */
        usec_t flushers_woken;       /* CLOCK_MONOTONIC when WritebackFirst= woke the flusher threads, 0:
                                   * not woken */
        const Handover *unit;        /* the late pass: what the unit's pass of this sleep listed as synced
                                   * and unsynced (its record is fresh); NULL: none */
        usec_t now_boottime;         /* CLOCK_BOOTTIME now, for unit's lines */
        const char *boot_id;         /* this boot's (RunRecord.boot_id); NULL or "": not known */
        const SuspendStats *suspend; /* the kernel's suspend counts (RunRecord.suspend_*); NULL or
                                      * unknown: not recorded */
} RunInput;

/* The run record of the pass (every field but duration and t_record, which the caller sets when
 * it saves it) and its tallies. Reasons and outcomes are those the record has always shown: gone
 * and covered mounts are "skipped", a hung or timed-out mount says why. The sample's reasons are
 * cut to RUN_REASON_MAX bytes. 0 or -ENOMEM (nothing written then). */
#define RUN_REASON_MAX 1024U
int run_record_build(const RunInput *in, RunRecord *ret, RunTally *ret_tally);

/* The knob facts of the pass: complete is Sample.complete, carried whether the unit's pass of this
 * sleep left superblocks unsynced that this pass did not sync, earlier_hung whether a worker of an
 * earlier pass still stuck was proven hung (run_earlier_hung()). */
KnobFacts run_knob_facts(const RunTally *t, bool complete, bool late, bool carried, bool earlier_hung);
bool run_earlier_hung(const Handover *h);

/* Review G, G7: job i, blocked by a worker of an earlier pass on a device proven stuck then, stays
 * hung only when its device's completion counter stood still (still_stuck) since that pass recorded
 * it with the stuck worker (StuckWorker.progress) to after this pass's syncs: one that completes I/O now woke up (a spin-up longer than the proof
 * window; the old worker writing a backlog), and one not watched now is not proven still stuck.
 * Either way it ends a plain timeout, so its superblock counts as unsynced and the kernel's sync
 * stays on. Returns whether it was hung and no longer is. */
bool run_jobs_blocked_recheck(RunJobs *j, size_t i, bool still_stuck);

/* The unit's pass replaces the handover's "unsynced" superblocks with the ones it left (t->left)
 * (and drops the "unit" line: the caller sets it); when the list is full its last entry becomes 0:0, a superblock no pass ever syncs, so the late
 * pass keeps the kernel's sync on. */
void run_handover_unsynced(Handover *h, const dev_t *left, size_t n_left, usec_t now_boottime);
/* Then lists the superblocks it synced (jobs synced or covered), as far as the list holds them: the
 * late pass leans on the unit's record only for mounts it left out that the record lists. */
void run_handover_synced(Handover *h, const RunJobs *j, usec_t now_boottime);
/* ... and those its plan skipped proven clean (PlanEntry.proven_clean): their sync would have done
 * nothing, so the unit's pass stands for them as for one it synced. Without them a late pass that
 * left such a mount out and could not prove it clean itself (a device proven stuck keeps pages under
 * writeback) kept the knob on over a hung device, where the pass before this rule had synced it. */
void run_handover_proven_clean(Handover *h, const Plan *p, usec_t now_boottime);
/* The late pass: whether a fresh "unsynced" (or deferred) superblock of the unit's pass was neither
 * synced by it nor on a device it proved stuck (run_job_hung(), so after executor_check_stuck()). */
bool run_unsynced_carried(const Handover *h, const RunJobs *j, usec_t now_boottime);
