/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Executor: the only module that forks and waits (the worker side is in worker.c). Runs one forked worker per device group (it
 * opens each mount point and calls syncfs(2), in plan order), at most max_parallel at once, driven
 * by sd-event child and timer sources. Per-mount timeout and a global deadline: a worker that does
 * not report in time is abandoned (never waited for past the deadline) and reported with its pid.
 * A worker whose device completes no I/O for a stall window gives its slot up, so stuck devices
 * never starve healthy ones; from a "last call" before the deadline every group still waiting gets
 * a worker, so no mount is left unstarted while time remains.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs-type.h"
#include "progress.h"
#include "writeback.h"
#include "shared/macro.h"
#include "shared/string-table.h"
#include "shared/time-util.h"

typedef enum Outcome {
        OUTCOME_PENDING, /* not started or not finished (internal) */
        OUTCOME_SYNCED,
        OUTCOME_TIMEOUT,
        OUTCOME_ERROR,
        OUTCOME_SKIPPED,  /* not run (callers: planned skips) */
        OUTCOME_GONE,     /* no mount of the superblock is left (unmounting synced it): not ours */
        OUTCOME_COVERED,  /* an overlay whose upperdir lies on the upper layer synced before it */
        OUTCOME_DEFERRED, /* not run: the late pass syncs it (run_jobs_defer(), defer-commit.h) */
        _OUTCOME_MAX,
        _OUTCOME_INVALID = -EINVAL,
} Outcome;

DECLARE_STRING_TABLE_LOOKUP(outcome, Outcome);

typedef struct ExecJob {
        /* in */
        const char *path;         /* path to open in the worker (mount point, maybe via /proc/PID/root) */
        const char *group;        /* jobs with the same group run one after another in one worker */
        usec_t timeout;           /* per-mount timeout */
        dev_t dev;                /* the superblock's device (as in mountinfo) */
        int mount_id;             /* > 0: the worker checks that path opens this mount (statx
                                    * STATX_MNT_ID). On a mismatch, or when the path is missing,
                                    * and gone_check is set: if no mount of dev is left in the
                                    * worker's mount table the job ends OUTCOME_GONE, error EIDRM
                                    * (unmounted, which synced it); else, while this mount is still
                                    * in the table, another directory mount of dev whose path leads
                                    * to it over local filesystems only, checked the same way, is
                                    * synced (moved, or overmounted by a bind of itself); with none,
                                    * OUTCOME_ERROR, ESTALE (ENOENT for a missing path: hidden, not
                                    * reachable). A FUSE mount's owner (run_as_uid) looks for no
                                    * other mount */
        uint64_t mount_id_unique; /* with mount_id: that mount's id that is never reused (listmount),
                                   * compared instead when the kernel gives it (statx
                                   * STATX_MNT_ID_UNIQUE, Linux 6.8). 0: not known, and the line of
                                   * mount_id in mountinfo_pid's mountinfo must name dev: the text's
                                   * ids are reused, so another filesystem mounted at path since the
                                   * table was read may have the planned mount's id */
        pid_t mountinfo_pid;      /* whose mountinfo lists the mount: 0 ours, > 0 that process's (another
                                   * namespace), -1 none (an unlisted path: mount_id alone) */
        bool gone_check;          /* path is in our own mount namespace */
        FsFlush flush;            /* the cache FLUSH after syncfs, for filesystems whose sync_fs
                                    * sends none or sends it before its last writes: FS_FLUSH_DEVICE,
                                    * an fsync() of the block device dev — flush_device (when not
                                    * NULL), else /dev/block/MAJ:MIN; ENODEV when neither node is
                                    * there (EACCES/EPERM when refused). FS_FLUSH_DEVICE_OR_SYNCFS:
                                    * without a node, a second syncfs() (ext4 without a journal:
                                    * its sync_fs flushes after the first one's writes) */
        const char *flush_device;
        const char *rt_flush_device; /* after syncfs (and the flush above), whatever flush says: an
                                      * fsync() of this node, which must be a block device other
                                      * than dev and held by a filesystem (an O_EXCL open of it
                                      * fails with EBUSY), else ENODEV: the realtime device of an
                                      * xfs (fs-type.h fs_type_rt_flush_device()). NULL: none */
        const char *covered_if_path; /* overlays: if this path (upperdir) lies on covered_if_dev, a
                                      * superblock synced earlier in the same group, the job ends
                                      * OUTCOME_COVERED (error EALREADY) without a syncfs of its own */
        dev_t covered_if_dev;
        const char *walk;              /* not used here: PlanEntry.walk, for run_jobs_build() */
        const char *open_key;          /* not used here: PlanEntry.open_key, for run_job_stuck_key() */
        const ProgressProbe *progress; /* completion counters of the job's device (progress.h), read
                                        * by the parent; NULL: no evidence */
        SettleMode settle;             /* before syncfs(), the worker waits for the writeback of the
                                        * progress probe's bdi to drain (writeback.h), within half
                                        * the timeout; SETTLE_NONE: syncfs() at once */
        uid_t run_as_uid;              /* (uid_t) -1: as we are. Otherwise, when we are root, the worker
                                    * walks to path as root (O_PATH), opens flush_device, then drops
                                    * privileges FOR GOOD (no supplementary groups, real/effective/
                                    * saved ids = these) and opens path from there: FUSE without
                                    * allow_other admits only its owner. Such a job must be alone in
                                    * its group (later jobs of the worker would run as the owner) */
        gid_t run_as_gid;
        /* out */
        Outcome outcome;
        int error;           /* positive errno for OUTCOME_ERROR; EIDRM for OUTCOME_GONE,
                                    * EALREADY for OUTCOME_COVERED (what sync_one returned); for
                                    * OUTCOME_TIMEOUT with abandoned_pid 0, why no worker could be
                                    * started for it (fork(): EAGAIN, ENOMEM), else 0 */
        usec_t duration;     /* time spent in open+syncfs (or until abandoned), the wait included */
        usec_t waited;       /* of that, waiting for the device's writeback (reported jobs only) */
        usec_t started;      /* CLOCK_MONOTONIC when the job was handed to its worker (the
                                    * parent's view: the worker's start or its previous report);
                                    * 0: never started */
        pid_t abandoned_pid; /* worker pid left behind on timeout, 0 otherwise */
        bool hung;           /* OUTCOME_TIMEOUT only: the device was proven stuck — the
                                    * job's worker, or the worker ahead of it in its group, was
                                    * abandoned inside syncfs (or the device flush after it: the
                                    * worker said so, worker_report_syncing()) and its progress
                                    * counters were readable and did not move for the whole
                                    * proof window. False when the evidence was missing (slow and
                                    * stuck cannot be told apart) and for a worker stuck before
                                    * syncfs (in open: a dead FUSE or NFS server, which the
                                    * kernel's own sync never asks) */
        bool reached_sync;   /* OUTCOME_TIMEOUT with abandoned_pid: its worker had said it entered
                                    * syncfs (worker_report_syncing()), so it waits on the device;
                                    * false: stuck on its way to the mount (open: a dead FUSE or NFS
                                    * server above it), which says nothing of the device */
        bool stuck;          /* abandoned_pid is still in the kernel (has not exited), as of the
                                    * last executor_check_stuck(); false after executor_run() */
} ExecJob;

typedef struct ExecOps {
        /* Runs in the worker for one job: returns 0 or negative errno; -EIDRM ends the job
         * OUTCOME_GONE, -EALREADY OUTCOME_COVERED, any other error OUTCOME_ERROR. Default: open(O_RDONLY|
         * O_DIRECTORY|O_CLOEXEC|O_NOCTTY), on ENOTDIR (file bind mount) again without O_DIRECTORY
         * and with O_NONBLOCK, then syncfs() and close(). No O_NOFOLLOW (following a symlink syncs
         * some filesystem, missing one is worse), never O_PATH (syncfs fails with EBADF). Tests
         * substitute it. It runs after fork() with fds 0-2 on /dev/null, every other fd closed,
         * default signal handlers and an empty signal mask: it must not use the caller's fds or
         * event loop, and should not allocate much. It calls worker_report_syncing() (worker.h)
         * right before its syncfs(): a job stuck without that call is never reported hung. */
        int (*sync_one)(const ExecJob *job, void *userdata);
        /* Runs in the parent: the current progress counter of the job's device, or negative errno
         * when unknown, and whether the device holds I/O it has not completed (progress_read():
         * a device whose counters are quiet but holds nothing is waited on from above, and is never
         * proven stuck). Default: progress_read(job->progress). Must not block (the default's busy
         * fallback, kernels before 6.10, costs a pass at most PROGRESS_BUSY_BUDGET +
         * PROGRESS_BUSY_TIMEOUT in all). */
        int (*progress)(const ExecJob *job, void *userdata, uint64_t *ret, bool *ret_held);
        void *userdata;
        usec_t stall;     /* a worker whose device completes no I/O for this long gives its slot
                             * up. 0: default, (deadline - now) / 8 clamped to 250 ms .. 2 s. A
                             * device is proven stuck (ExecJob.hung) after max(stall, (deadline -
                             * now) / 4) without progress; when set here, after 'stall' */
        usec_t last_call; /* absolute CLOCK_MONOTONIC; 0: default, deadline - min((deadline -
                             * now) / 4, 2 s); USEC_INFINITY: never */
        /* Tests only (NULL in production): runs in the parent right before the fork() of a worker
         * whose first job is 'job'; a negative errno makes that start fail as fork() would (EAGAIN:
         * the cgroup's TasksMax= or pid_max; ENOMEM). */
        int (*before_fork)(const ExecJob *job, void *userdata);
        /* Tests only (NULL in production): runs in the parent right after the fork() of worker 'pid'
         * whose first job is 'job'; a negative errno makes the worker's set-up fail as an sd-event
         * call would: the worker is killed (SIGKILL) and the start fails with that errno. */
        int (*after_fork)(const ExecJob *job, pid_t pid, void *userdata);
        /* Whether worker 'pid', killed right after its fork (above), is known dead: no worker of its
         * group starts before. Default (NULL): a zombie of ours, or no child of ours
         * (!executor_worker_stuck()). Tests substitute it: a child that outlives SIGKILL (in syncfs)
         * cannot be made at will. */
        bool (*worker_gone)(pid_t pid, void *userdata);
} ExecOps;

/* The least time a worker still on its way to its mount (after REPORT_OPENING, before syncfs) is
 * given before it is abandoned to free the rest of its group, however short the stall window (review
 * P, P4): a walk through a slow but live NFS or FUSE parent takes a few hundred ms. */
#define EXECUTOR_OPEN_STALL_MIN_USEC (1 * USEC_PER_SEC)

/*
 * Runs jobs (already in execution order: groups in order of first appearance) with at most
 * max_parallel workers until done or until 'deadline' (CLOCK_MONOTONIC absolute usec). Jobs not
 * started by the deadline get OUTCOME_TIMEOUT with duration 0. Returns the number of jobs that did
 * not end SYNCED, or negative errno if the executor itself could not run (its event loop could not
 * be set up; then no job was touched): a worker that cannot be forked is not such a failure.
 * ops may be NULL for the default.
 *
 * Details:
 * - Jobs with equal 'group' strings run one after another in one worker, in array order; a NULL
 *   group is a group of its own. max_parallel is clamped to 1..64. At most 2^20 jobs (-E2BIG).
 * - timeout 0 or USEC_INFINITY: no per-job timeout (only the deadline). Each job of a group gets
 *   its own timeout, counted from the moment the previous job's result arrived.
 * - Per-job timeout: the job gets OUTCOME_TIMEOUT, abandoned_pid = the worker, duration = time until
 *   abandoned; the worker is sent SIGKILL and no longer counted against max_parallel; the rest of
 *   the group runs in a fresh worker (each worker consumes at least one job: at most n_jobs forks)
 *   unless the device was proven stuck in syncfs (ExecJob.hung): then the rest of the group gets
 *   OUTCOME_TIMEOUT with hung set and pid 0 at once — a new worker would only get stuck too. A
 *   worker stuck before syncfs (in open) is a plain timeout, whatever the counters say.
 * - Stall: the progress counter of every running worker's job is read every stall/4 (at least
 *   every 100 ms). A worker with no counter change and no report for 'stall' stops counting
 *   against max_parallel (it keeps running and its results still count; its group stays with
 *   it, so one device never has two workers). Evidence-free workers (counter unknown) are
 *   released the same way, but are never reported hung.
 * - Last call: from ops->last_call on, groups not started yet are started regardless of
 *   max_parallel (at most 64 counted workers), so a mount is only "not started" if the deadline
 *   leaves no time at all.
 * - Deadline: running jobs as above; jobs not started get OUTCOME_TIMEOUT, error 0 (or the errno of
 *   a worker that could not be started, above), duration 0, abandoned_pid 0 ("not started before
 *   the deadline"). Returns within a few ms of the deadline.
 * - A worker that dies without reporting its current job (crash, OOM kill): that job gets
 *   OUTCOME_ERROR with error = ECHILD (not a filesystem error); the rest of its group runs in a
 *   fresh worker. syncfs/open errors give OUTCOME_ERROR with their errno and the worker goes on;
 *   a mount found gone gives OUTCOME_GONE, an overlay found covered OUTCOME_COVERED (see ExecJob).
 * - Stuck on the way to the mount: a worker that reported REPORT_OPENING (worker.h) but not
 *   REPORT_SYNCING, with jobs of its group behind it, is abandoned (a timeout, never hung, whatever
 *   the job's own timeout) once it has been there max(stall, EXECUTOR_OPEN_STALL_MIN_USEC), or, from
 *   the last call on, a stall window: the rest of its group then runs in a fresh worker.
 * - A worker that cannot be started (fork() or pipe() failing: EAGAIN from the cgroup's TasksMax= or
 *   pid_max, ENOMEM) is tried again after 10-50 ms while other groups start, for 2 s of failures
 *   in a row or until the deadline. Only then do that group's jobs end OUTCOME_TIMEOUT with
 *   abandoned_pid 0 and error = the last start's errno ("not started: no worker"); never the pass.
 *   A worker that sd-event could not watch is killed right after its fork; until it is known dead
 *   (ExecOps.worker_gone) every start of its group fails as above, with the same errno (its
 *   device is never synced by two workers at once), and should its group's jobs end so, the first
 *   one carries its pid as abandoned_pid, error 0 (a worker left behind, as on a timeout).
 * - Children: finished workers are reaped. Abandoned workers are reaped if they die within ~5 ms
 *   of the return; one stuck in the kernel stays a child of the caller, who may reap it later with
 *   waitpid(abandoned_pid, WNOHANG). SIGCHLD is blocked during the call; the caller's signal mask
 *   is restored before returning. Uses its own sd_event, not the caller's default loop.
 */
int executor_run(ExecJob *jobs, size_t n_jobs, unsigned max_parallel, usec_t deadline, const ExecOps *ops);

/* Whether an abandoned worker (ExecJob.abandoned_pid) is still stuck in the kernel: a child of
 * ours that has not exited (waitid WEXITED|WNOHANG|WNOWAIT: reaps nothing). False for pid <= 0 or
 * a pid that is not our child. */
bool executor_worker_stuck(pid_t pid);
/* Sets ExecJob.stuck of each job from executor_worker_stuck(abandoned_pid): call it right before
 * the answer is used, since a stuck worker may end at any moment. */
void executor_check_stuck(ExecJob *jobs, size_t n_jobs);
