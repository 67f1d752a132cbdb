/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>

#include "executor.h"
#include "worker.h"
#include "shared/sort-util.h"
#include "shared/string-table.h"

/* Hard bounds: workers alive at once, and jobs per run (the index travels as uint32_t). */
#define EXECUTOR_PARALLEL_MAX 64U
#define EXECUTOR_JOBS_MAX (1U << 20)

/* After the loop, give workers we just SIGKILLed this long to die so they can be reaped. */
#define REAP_GRACE_USEC (5 * USEC_PER_MSEC)

/* Accuracy of our timers: sd-event's default (250 ms) is far too coarse for a deadline. */
#define TIMER_ACCURACY_USEC (1 * USEC_PER_MSEC)

/* Stall window bounds, and the longest a last call waits before the deadline. */
#define STALL_MIN_USEC (250 * USEC_PER_MSEC)
#define STALL_MAX_USEC (2 * USEC_PER_SEC)
#define TICK_MAX_USEC (100 * USEC_PER_MSEC)
#define LAST_CALL_MAX_USEC (2 * USEC_PER_SEC)

/* A worker that could not be started (review O, O7: fork() failing with EAGAIN from the cgroup's
 * TasksMax= or pid_max, or ENOMEM) is tried again after a backoff that doubles from the first to the
 * last of these; its group gives up after START_RETRY_SPAN_USEC of failures in a row. */
#define START_RETRY_FIRST_USEC (10 * USEC_PER_MSEC)
#define START_RETRY_MAX_USEC (50 * USEC_PER_MSEC)
#define START_RETRY_SPAN_USEC (2 * USEC_PER_SEC)

static const char *const outcome_table[_OUTCOME_MAX] = {
        [OUTCOME_PENDING] = "pending", [OUTCOME_SYNCED] = "synced",     [OUTCOME_TIMEOUT] = "timeout",
        [OUTCOME_ERROR] = "error",     [OUTCOME_SKIPPED] = "skipped",   [OUTCOME_GONE] = "gone",
        [OUTCOME_COVERED] = "covered", [OUTCOME_DEFERRED] = "deferred",
};

DEFINE_STRING_TABLE_LOOKUP(outcome, Outcome);

typedef struct JobResult {
        Outcome outcome;
        int error;
        usec_t duration, waited;
        usec_t started; /* CLOCK_MONOTONIC, parent's view; 0: not started */
        pid_t abandoned_pid;
        bool hung;
        bool reached_sync;
} JobResult;

typedef struct Child {
        pid_t pid;
        bool reaped; /* sd-event reaped it (child source dispatched) or we did */
        bool killed; /* we sent SIGKILL */
} Child;

typedef struct Group {
        size_t start, end;       /* [start, end) in Executor.order */
        size_t next;             /* first job not yet handed to a worker (valid while !busy) */
        bool busy;               /* a worker (counted or released) is running this group */
        int start_error;         /* < 0: the last start of a worker for it failed (fork: EAGAIN, ENOMEM) */
        unsigned start_failures; /* starts failed in a row */
        usec_t failing_since;    /* the first of them */
        usec_t retry_at;         /* no new start before this */
        Child *killed_worker;    /* killed right after its fork, not known dead: no start till then */
} Group;

typedef struct Executor Executor;

typedef struct Worker {
        Executor *executor;
        Child *child;
        int fd; /* read end of the report pipe, non-blocking */
        Group *group;
        size_t pos;       /* position in Executor.order of the job running now */
        usec_t job_start; /* CLOCK_MONOTONIC, parent's view */
        /* Progress evidence of the current job's device. */
        uint64_t progress;    /* last counter read, valid when known_since != USEC_INFINITY */
        usec_t known_since;   /* start of the current run of successful reads; USEC_INFINITY:
                                 * the last read failed or none was made for this job */
        usec_t last_progress; /* last counter change or report */
        bool held;            /* seen holding I/O since the last counter change (sticky: a
                               * controller reset requeues, and for a moment holds nothing) */
        bool released;        /* gave its slot up: no progress for a stall window */
        bool syncing;         /* the current job reported REPORT_SYNCING: it is in syncfs or the
                               * device flush after it (else still in open, or waiting before) */
        usec_t opening_since; /* when the current job reported REPORT_OPENING: its wait for writeback
                               * is over, it walks to the mount; USEC_INFINITY: not yet */
        bool accounted;       /* ... and its leaf disks account their I/O (WORKER_SYNCING_ACCOUNTED):
                               * frozen counters are evidence */
        sd_event_source *io_source, *child_source, *timer_source;
        WorkerReportBuffer buf;
} Worker;

struct Executor {
        const ExecJob *jobs;
        size_t n_jobs;
        int (*sync_one)(const ExecJob *job, void *userdata);
        int (*progress)(const ExecJob *job, void *userdata, uint64_t *ret, bool *ret_held);
        int (*before_fork)(const ExecJob *job, void *userdata);
        int (*after_fork)(const ExecJob *job, pid_t pid, void *userdata);
        bool (*worker_gone)(pid_t pid, void *userdata);
        void *userdata;
        unsigned max_parallel;
        usec_t deadline;
        usec_t stall, tick, last_call;
        usec_t open_stall;      /* on its way to its mount this long, a worker frees its group */
        usec_t proof;           /* quiet this long (with evidence) proves a device stuck */
        usec_t held_back_since; /* groups have waited for a slot since then (USEC_INFINITY: none waits) */

        sd_event *event;
        size_t *order; /* job indices, grouped: groups in order of first appearance */
        Group *groups;
        size_t n_groups;
        JobResult *results; /* indexed like jobs; copied out only when the run succeeds */
        size_t n_done;

        Worker *workers[EXECUTOR_PARALLEL_MAX]; /* counted (not abandoned) workers */
        size_t n_workers;
        Worker **released; /* running, but no longer counted: stalled (at most n_jobs) */
        size_t n_released;
        sd_event_source *tick_source, *last_call_source;
        sd_event_source *retry_source; /* the next start of a group whose last one failed */
        Child *children;               /* every fork, at most n_jobs (each worker consumes >= 1 job) */
        size_t n_children;
};

static int progress_default(const ExecJob *job, void *userdata, uint64_t *ret, bool *ret_held) {
        return progress_read(job->progress, ret, ret_held);
}

/* --- parent side --- */

/* The first result of a job counts; later ones (a report racing a timeout) are ignored whole. */
static void executor_set_result(Executor *e, size_t pos, JobResult res) {
        JobResult *r = &e->results[e->order[pos]];

        if (r->outcome != OUTCOME_PENDING)
                return;
        res.hung = res.hung && res.outcome == OUTCOME_TIMEOUT;
        *r = res;
        e->n_done++;
}

static void executor_check_done(Executor *e) {
        /* Done when every job has a result and no worker is left to reap. */
        if (e->n_done >= e->n_jobs && e->n_workers == 0 && e->n_released == 0)
                (void) sd_event_exit(e->event, 0);
}

static Worker *worker_free(Worker *w) {
        if (!w)
                return NULL;
        w->io_source = sd_event_source_disable_unref(w->io_source);
        w->child_source = sd_event_source_disable_unref(w->child_source);
        w->timer_source = sd_event_source_disable_unref(w->timer_source);
        safe_close(w->fd);
        free(w);
        return NULL;
}

static bool worker_list_remove(Worker **list, size_t *n, Worker *w) {
        for (size_t i = 0; i < *n; i++)
                if (list[i] == w) {
                        list[i] = list[--*n];
                        return true;
                }
        return false;
}

/* Removes a worker (counted or released) from the executor and frees it. */
static void worker_detach(Worker *w) {
        Executor *e = w->executor;

        if (w->released)
                (void) worker_list_remove(e->released, &e->n_released, w);
        else
                (void) worker_list_remove(e->workers, &e->n_workers, w);
        w->group->busy = false;
        worker_free(w);
}

/* A new job starts (or a report arrived): progress by definition, and the evidence starts anew,
 * since the next job may sit on another device; the new job has not reached syncfs yet. */
static void worker_progress_reset(Worker *w, usec_t n) {
        w->job_start = n;
        w->last_progress = n;
        w->known_since = USEC_INFINITY;
        w->held = false;
        w->syncing = w->accounted = false;
        w->opening_since = USEC_INFINITY;
}

/* Reads the progress counter of the worker's current job. */
static void worker_probe(Worker *w, usec_t n) {
        Executor *e = w->executor;
        bool held = false;
        uint64_t v;

        if (w->pos >= w->group->end)
                return;
        if (!e->progress || e->progress(&e->jobs[e->order[w->pos]], e->userdata, &v, &held) < 0) {
                w->known_since = USEC_INFINITY;
                return;
        }
        if (w->known_since == USEC_INFINITY)
                w->known_since = n; /* a new baseline, not a change */
        else if (v != w->progress)
                w->last_progress = n;
        w->held = (w->held && v == w->progress) || held; /* sticky while nothing completes */
        w->progress = v;
}

/* Proven stuck: the counter was readable throughout the last stall window and did not move, and
 * meanwhile the device was seen holding I/O it had not completed (else what waits does so above it). */
static bool worker_proven_stuck(const Worker *w, usec_t n) {
        const Executor *e = w->executor;
        usec_t quiet_since;

        if (w->known_since == USEC_INFINITY || !w->held)
                return false;
        quiet_since = MAX(w->known_since, w->last_progress);
        return n >= quiet_since && n - quiet_since >= e->proof;
}

/* Stuck on its way to the mount (review O, O1): a whole stall window since its wait for writeback
 * ended, not in syncfs yet, and jobs of its group wait behind it. Its path walk hangs on another
 * filesystem (a dead FUSE or NFS server, an autofs trigger above the mount point), not on its
 * device: it is abandoned (killed, its job a timeout, never hung) so that the rest of the group gets
 * a fresh worker now rather than at its timeout. Killed, it never reaches syncfs should the server
 * answer (the waits of a path walk are killable), so the device still has one worker at a time. */
static usec_t worker_opening_for(const Worker *w, usec_t n) {
        return !w->syncing && w->opening_since != USEC_INFINITY && n >= w->opening_since
                       ? n - w->opening_since
                       : 0;
}

/* How long that takes (review P, P4): a stall window, but at least EXECUTOR_OPEN_STALL_MIN_USEC
 * (executor_set_windows()), since a walk through a slow but live NFS or FUSE parent takes a few
 * hundred ms and a stall window is 250 ms at a short deadline; a worker killed there leaves its
 * superblock unsynced by us every time. The floor costs the rest of the group that wait, and it is
 * never allowed to cost them their start: from the last call on, the time that the design keeps for
 * mounts still waiting (every group not started then gets a worker, executor_fill()), a worker that
 * has been on its way for a stall window is given up as before the floor. So siblings behind a stuck
 * walk start at the last call at the latest, with the same share of the time left as any other group
 * started then, and the floor only ever moves the kill within [stall window, last call]. Without a
 * last call (USEC_INFINITY: callers that set it so) the floor applies alone. Giving its slot up is
 * another matter (on_tick(), review O, O2): that kills nothing and costs no sync, so a worker on its
 * way still stops counting against max_parallel after the shortest window once groups wait. */
static bool worker_stuck_opening(const Worker *w, usec_t n) {
        const Executor *e = w->executor;
        usec_t t = worker_opening_for(w, n);

        if (w->pos + 1 >= w->group->end || t < e->stall)
                return false;
        return t >= e->open_stall || n >= e->last_call;
}

/* No counter change and no report for a stall window: stop counting the worker against
 * max_parallel. It keeps its group (one worker per device) and its results still count. */
static void worker_release(Worker *w) {
        Executor *e = w->executor;

        if (w->released || !worker_list_remove(e->workers, &e->n_workers, w))
                return;
        w->released = true;
        e->released[e->n_released++] = w;
}

static usec_t job_timeout(const Executor *e, size_t pos) {
        usec_t t = e->jobs[e->order[pos]].timeout;

        return t == 0 ? USEC_INFINITY : t;
}

static void worker_arm_timer(Worker *w) {
        Executor *e = w->executor;
        usec_t t;

        if (w->pos >= w->group->end || (t = job_timeout(e, w->pos)) == USEC_INFINITY ||
            t > USEC_INFINITY - 1 - w->job_start) {
                (void) sd_event_source_set_enabled(w->timer_source, SD_EVENT_OFF);
                return;
        }

        /* If this fails the deadline still bounds the job. */
        if (sd_event_source_set_time(w->timer_source, w->job_start + t) >= 0)
                (void) sd_event_source_set_enabled(w->timer_source, SD_EVENT_ONESHOT);
}

/* What a worker's report means: the worker's sync_one says "gone" with EIDRM (no mount of the
 * superblock left: unmounting synced it) and "covered" with EALREADY (an overlay whose upperdir
 * lies on the upper superblock synced before it), see worker_sync_one(). */
static Outcome report_outcome(int32_t error) {
        switch (error) {
        case 0:
                return OUTCOME_SYNCED;
        case EIDRM:
                return OUTCOME_GONE;
        case EALREADY:
                return OUTCOME_COVERED;
        default:
                return OUTCOME_ERROR;
        }
}

/* Reads every report available now. Returns true on EOF or read error. */
static bool worker_drain(Worker *w) {
        Executor *e = w->executor;
        bool progressed = false;
        WorkerReport rep;
        int r;

        while ((r = worker_report_read(w->fd, &w->buf, &rep)) > 0) {
                /* Reports come in order, each names its job: anything else is ignored (the timers
                 * still apply), so a job's DONE never counts for the next job's SYNCING. */
                if (w->pos >= w->group->end || rep.index != e->order[w->pos])
                        continue;
                if (rep.kind == REPORT_SYNCING) {
                        w->syncing = true;
                        w->accounted = rep.flags & WORKER_SYNCING_ACCOUNTED;
                        continue;
                }
                if (rep.kind == REPORT_OPENING) {
                        if (w->opening_since == USEC_INFINITY)
                                w->opening_since = now(CLOCK_MONOTONIC);
                        continue;
                }
                if (rep.kind != REPORT_DONE)
                        continue;

                executor_set_result(
                        e, w->pos,
                        (JobResult) { .outcome = report_outcome(rep.error),
                                      .error = rep.error > 0 ? rep.error : (rep.error == 0 ? 0 : EIO),
                                      .duration = rep.duration,
                                      .waited = rep.waited,
                                      .started = rep.started });
                w->pos++;
                worker_progress_reset(w, now(CLOCK_MONOTONIC));
                progressed = true;
        }

        if (progressed)
                worker_arm_timer(w);
        if (r < 0)
                (void) sd_event_source_set_enabled(w->io_source, SD_EVENT_OFF);
        return r < 0;
}

/* Gives up on a worker: its current job gets 'o' with the worker's pid when 'o' is a timeout. A
 * worker proven stuck in syncfs takes the rest of its group with it: a new worker would only get
 * stuck too. One stuck before syncfs (in open: a FUSE or NFS server gone) proves nothing about
 * the device the kernel's sync would write: an ordinary timeout, never hung. */
static void worker_abandon(Worker *w, Outcome o, int error) {
        Executor *e = w->executor;
        usec_t n = now(CLOCK_MONOTONIC);
        bool hung;

        /* The proof rests on a reading of now, not on the last tick's: a parent that ran late may
         * have missed a completion since (review K). */
        if (o == OUTCOME_TIMEOUT)
                worker_probe(w, n);
        hung = o == OUTCOME_TIMEOUT && worker_proven_stuck(w, n) && w->syncing && w->accounted;

        if (w->pos < w->group->end) {
                executor_set_result(e, w->pos,
                                    (JobResult) { .outcome = o,
                                                  .error = error,
                                                  .duration = n > w->job_start ? n - w->job_start : 0,
                                                  .started = w->job_start,
                                                  .abandoned_pid = o == OUTCOME_TIMEOUT ? w->child->pid : 0,
                                                  .hung = hung,
                                                  .reached_sync = w->syncing });
                w->group->next = w->pos + 1;
        } else
                w->group->next = w->group->end;

        if (hung) {
                for (size_t pos = w->group->next; pos < w->group->end; pos++)
                        executor_set_result(e, pos, (JobResult) { .outcome = OUTCOME_TIMEOUT, .hung = true });
                w->group->next = w->group->end;
        }

        if (!w->child->reaped && !w->child->killed) {
                (void) kill(w->child->pid, SIGKILL);
                w->child->killed = true;
        }
        worker_detach(w);
}

static void executor_fill(Executor *e);

static int on_worker_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Worker *w = userdata;
        Executor *e = w->executor;

        (void) worker_drain(w);
        executor_fill(e);
        executor_check_done(e);
        return 0;
}

static int on_worker_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Worker *w = userdata;
        Executor *e = w->executor;

        /* sd-event reaps the child right after this callback returns. */
        w->child->reaped = true;

        /* Everything the worker wrote is in the pipe now. */
        (void) worker_drain(w);

        /* Died without reporting its current job (crash, killed, OOM): that job is an error
         * (ECHILD), the rest of the group gets a fresh worker. */
        worker_abandon(w, OUTCOME_ERROR, ECHILD);

        executor_fill(e);
        executor_check_done(e);
        return 0;
}

static int on_worker_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Worker *w = userdata;
        Executor *e = w->executor;
        size_t pos;

        /* A report that arrived together with the timer wins over the timeout. */
        (void) worker_drain(w);
        pos = w->pos;
        if (pos < w->group->end) {
                usec_t t = job_timeout(e, pos);

                if (t != USEC_INFINITY && now(CLOCK_MONOTONIC) >= w->job_start + t)
                        worker_abandon(w, OUTCOME_TIMEOUT, 0);
        }

        executor_fill(e);
        executor_check_done(e);
        return 0;
}

/* Whether the group's worker killed right after its fork (worker_start()) may still run (review R,
 * R3): while it may, it could be in syncfs (a SIGKILL waits for it to return), so no other worker of
 * the group starts. Known dead (a zombie: waitid(WNOWAIT) reaps nothing), it is forgotten here and
 * reaped with the other killed children (executor_done()). */
static bool group_killed_worker_alive(Executor *e, Group *g) {
        Child *c = g->killed_worker;

        if (!c)
                return false;
        if (c->reaped ||
            (e->worker_gone ? e->worker_gone(c->pid, e->userdata) : !executor_worker_stuck(c->pid)))
                g->killed_worker = NULL;
        return g->killed_worker;
}

/* Ends the jobs of a group that no worker was given: 'o' with 'error' (a positive errno). A worker
 * killed after its fork that may still run is left behind on the first of them as a timed-out worker
 * is (abandoned_pid, error 0), and as one that reached syncfs, since it may be in it: the caller sees
 * it stuck (executor_check_stuck()), and a later pass does not start the group (its device, not only
 * that mount: run_job_stuck_key()) while it is there. */
static void group_end_rest(Executor *e, Group *g, Outcome o, int error) {
        pid_t left;

        if (g->next >= g->end)
                return;
        left = o == OUTCOME_TIMEOUT && group_killed_worker_alive(e, g) ? g->killed_worker->pid : 0;
        for (size_t pos = g->next; pos < g->end; pos++) {
                bool first = pos == g->next && left > 0;

                executor_set_result(e, pos,
                                    (JobResult) { .outcome = o,
                                                  .error = first ? 0 : error,
                                                  .abandoned_pid = first ? left : 0,
                                                  .reached_sync = first });
        }
        g->next = g->end;
}

/* Running jobs: TIMEOUT, abandoned. Not-started jobs: TIMEOUT, duration 0, error 0, no pid ("not
 * started before the deadline"; error: why, when no worker could be started for them), or ERROR with
 * 'error' when the loop itself failed. */
static void executor_expire_all(Executor *e, int error) {
        while (e->n_workers > 0 || e->n_released > 0) {
                Worker *w = e->n_workers > 0 ? e->workers[0] : e->released[0];

                (void) worker_drain(w);
                worker_abandon(w, OUTCOME_TIMEOUT, 0);
        }

        for (size_t g = 0; g < e->n_groups; g++)
                group_end_rest(e, &e->groups[g], error > 0 ? OUTCOME_ERROR : OUTCOME_TIMEOUT,
                               error > 0 ? error : -e->groups[g].start_error);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        Executor *e = userdata;
        usec_t n = now(CLOCK_MONOTONIC);

        /* Released workers are probed too: whether they are proven stuck is decided when they are
         * abandoned. Iterate backwards: releasing moves the last counted worker into the gap. */
        for (size_t i = e->n_released; i > 0; i--) {
                Worker *w = e->released[i - 1];

                worker_probe(w, n);
                if (worker_stuck_opening(w, n) && !worker_drain(w) && worker_stuck_opening(w, n))
                        worker_abandon(w, OUTCOME_TIMEOUT, 0);
        }
        /* Groups held back for a whole stall window already (review F, F1): a worker whose device's
         * counters are readable and still is released after the shortest window, so k stuck groups
         * planned first cost the groups behind them one stall window, not k / MaxParallel of them. So
         * is one still on its way to its mount (review O, O2): it does no I/O on any device, counters
         * or not (a dead NFS or FUSE server without debugfs evidence). Any other worker without such
         * evidence keeps the whole window: it may be busy on a healthy device. */
        bool held_back = e->held_back_since != USEC_INFINITY && n - e->held_back_since >= e->stall;
        for (size_t i = e->n_workers; i > 0; i--) {
                Worker *w = e->workers[i - 1];
                usec_t stall = held_back && w->known_since != USEC_INFINITY ? MIN(e->stall, STALL_MIN_USEC)
                                                                            : e->stall;

                worker_probe(w, n);
                if (worker_stuck_opening(w, n) && !worker_drain(w) && worker_stuck_opening(w, n))
                        worker_abandon(w, OUTCOME_TIMEOUT, 0);
                else if (n - w->last_progress >= stall ||
                         (held_back && worker_opening_for(w, n) >= MIN(e->stall, STALL_MIN_USEC)))
                        worker_release(w);
        }

        executor_fill(e);
        executor_check_done(e);

        if (sd_event_source_set_time(s, n + e->tick) >= 0)
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Executor *e = userdata;

        executor_fill(e);
        executor_check_done(e);
        return 0;
}

static int on_last_call(sd_event_source *s, uint64_t usec, void *userdata) {
        Executor *e = userdata;

        executor_fill(e);
        executor_check_done(e);
        return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Executor *e = userdata;

        executor_expire_all(e, 0);
        (void) sd_event_exit(e->event, 0);
        return 0;
}

static int worker_start(Executor *e, Group *g) {
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
        int fds[2], r;
        Worker *w;
        Child *c;
        pid_t pid;

        if (group_killed_worker_alive(e, g))
                /* Its worker killed after its fork may still sync the device (a SIGKILL waits for
                 * syncfs to return): this start fails too, for the same reason as that one. */
                return g->start_error < 0 ? g->start_error : -EBUSY;

        if (e->n_children >= e->n_jobs)
                /* Every worker set up consumes at least one job; one killed right after its fork
                 * (sd-event could not watch it) consumes none but a slot here: its group is tried
                 * again once it is dead and, should the slots run out, fails closed at the deadline. */
                return -EAGAIN;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        rfd = fds[0];
        wfd = fds[1];
        if (fcntl(rfd, F_SETFL, O_NONBLOCK) < 0)
                return -errno;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;

        if (e->before_fork) {
                r = e->before_fork(&e->jobs[e->order[g->next]], e->userdata);
                if (r < 0) {
                        free(w);
                        return r;
                }
        }

        pid = fork();
        if (pid < 0) {
                r = -errno;
                free(w);
                return r;
        }
        if (pid == 0)
                worker_child_main(e->jobs, e->order, g->next, g->end, e->sync_one, e->userdata, wfd,
                                  e->stall / 2);

        c = &e->children[e->n_children++];
        *c = (Child) { .pid = pid };

        *w = (Worker) {
                .executor = e,
                .child = c,
                .fd = TAKE_FD(rfd),
                .group = g,
                .pos = g->next,
        };
        worker_progress_reset(w, now(CLOCK_MONOTONIC));
        wfd = safe_close(wfd);

        r = e->after_fork ? e->after_fork(&e->jobs[e->order[g->next]], pid, e->userdata) : 0;
        if (r >= 0)
                r = sd_event_add_io(e->event, &w->io_source, w->fd, EPOLLIN, on_worker_io, w);
        if (r >= 0)
                r = sd_event_source_set_priority(w->io_source, SD_EVENT_PRIORITY_IMPORTANT);
        if (r >= 0)
                r = sd_event_add_child(e->event, &w->child_source, pid, WEXITED, on_worker_exit, w);
        if (r >= 0)
                r = sd_event_add_time(e->event, &w->timer_source, CLOCK_MONOTONIC, USEC_INFINITY,
                                      TIMER_ACCURACY_USEC, on_worker_timeout, w);
        if (r < 0) {
                /* Not watched: the group waits until it is known dead (review R, R3). */
                (void) kill(pid, SIGKILL);
                c->killed = true;
                g->killed_worker = c;
                worker_free(w);
                return r;
        }

        worker_arm_timer(w);
        g->busy = true;
        e->workers[e->n_workers++] = w;
        return 0;
}

/* Whether a group has jobs left and no worker: it waits for a slot (or for its next start). */
static bool group_waiting(const Group *g) {
        return !g->busy && g->next < g->end;
}

/* A start failed (review O, O7): fork() fails for a while (EAGAIN: the cgroup's TasksMax=, which
 * workers and bounded children of earlier passes may fill; pid_max; ENOMEM), so the group is tried
 * again after a short backoff, while the others start as they can: one failure never ends the pass.
 * After START_RETRY_SPAN_USEC of failures in a row, or at the deadline (executor_expire_all(), with
 * the errno), its jobs fail, closed: a timeout, unsynced, so the kernel's sync stays on. The span
 * bounds what a lasting failure costs the sleep (TasksMax= filled by workers stuck on a dead
 * server stays filled): 2 s, not the whole DeadlineSec=. */
static void group_start_failed(Executor *e, Group *g, int error, usec_t n) {
        usec_t backoff = START_RETRY_FIRST_USEC << MIN(g->start_failures, 3U);

        if (g->start_failures++ == 0)
                g->failing_since = n;
        g->start_error = error;
        g->retry_at = n + MIN(backoff, START_RETRY_MAX_USEC);

        if (n - g->failing_since >= START_RETRY_SPAN_USEC)
                group_end_rest(e, g, OUTCOME_TIMEOUT, -error);
}

/* Arms the retry timer for the earliest group waiting out its backoff (off when none, or when no
 * slot is free: a retry due already would fire at once, again and again, until one frees; the
 * executor_fill() of whatever frees it retries the group then). */
static void executor_arm_retry(Executor *e, bool slot_free) {
        usec_t at = USEC_INFINITY;

        for (size_t i = 0; slot_free && i < e->n_groups; i++)
                if (group_waiting(&e->groups[i]) && e->groups[i].start_failures > 0)
                        at = MIN(at, e->groups[i].retry_at);
        if (at == USEC_INFINITY || !e->retry_source) {
                if (e->retry_source)
                        (void) sd_event_source_set_enabled(e->retry_source, SD_EVENT_OFF);
                return;
        }
        /* If this fails, the next tick starts it (executor_fill() runs on every tick). */
        if (sd_event_source_set_time(e->retry_source, at) >= 0)
                (void) sd_event_source_set_enabled(e->retry_source, SD_EVENT_ONESHOT);
}

static void executor_fill(Executor *e) {
        /* Each group's start is tried at most once per call: a backoff ends after the call began. */
        usec_t began = now(CLOCK_MONOTONIC);
        bool slot_free = true;

        for (;;) {
                usec_t n = now(CLOCK_MONOTONIC);
                /* From the last call on, every group waiting gets a worker while time remains. */
                size_t limit = n >= e->last_call ? EXECUTOR_PARALLEL_MAX : e->max_parallel;
                Group *g = NULL;
                int r;

                if (e->n_workers >= limit) {
                        bool waiting = false;

                        for (size_t i = 0; i < e->n_groups && !waiting; i++)
                                waiting = group_waiting(&e->groups[i]);
                        if (!waiting)
                                e->held_back_since = USEC_INFINITY;
                        else if (e->held_back_since == USEC_INFINITY)
                                e->held_back_since = n;
                        slot_free = false;
                        break;
                }

                /* Nothing starts at or after the deadline: the deadline timer reports it. */
                if (e->deadline != USEC_INFINITY && n >= e->deadline)
                        break;

                /* The first group waiting whose last start, if any, failed long enough ago. */
                for (size_t i = 0; i < e->n_groups; i++)
                        if (group_waiting(&e->groups[i]) &&
                            (e->groups[i].start_failures == 0 || began >= e->groups[i].retry_at)) {
                                g = &e->groups[i];
                                break;
                        }
                if (!g) {
                        e->held_back_since = USEC_INFINITY; /* nothing waits for a slot */
                        break;
                }

                r = worker_start(e, g);
                if (r >= 0) {
                        g->start_failures = 0;
                        g->start_error = 0;
                        continue;
                }
                group_start_failed(e, g, r, n);
        }
        executor_arm_retry(e, slot_free);
}

static int group_cmp(const size_t *a, const size_t *b, const ExecJob *jobs) {
        size_t i = *a, j = *b;
        const char *x = jobs[i].group, *y = jobs[j].group;
        int c;

        /* NULL groups sort first and never compare equal to each other (see same_group()). */
        if (!x != !y)
                return x ? 1 : -1;
        if (x && (c = strcmp(x, y)) != 0)
                return c;
        return CMP(i, j);
}

static bool same_group(const ExecJob *jobs, size_t i, size_t j) {
        return jobs[i].group && jobs[j].group && streq(jobs[i].group, jobs[j].group);
}

static int group_first_cmp(const Group *x, const Group *y, size_t *order) {
        return CMP(order[x->start], order[y->start]);
}

/* Builds order[] and groups[]: groups by first appearance, jobs of a group in the given order. */
static int executor_build_groups(Executor *e) {
        _cleanup_free_ size_t *sorted = NULL;
        size_t n = e->n_jobs, k = 0;

        sorted = calloc(n, sizeof(size_t));
        e->order = calloc(n, sizeof(size_t));
        e->groups = calloc(n, sizeof(Group));
        if (!sorted || !e->order || !e->groups)
                return -ENOMEM;

        for (size_t i = 0; i < n; i++)
                sorted[i] = i;
        typesafe_qsort_r(sorted, n, group_cmp, e->jobs);

        /* Runs of equal groups in 'sorted' are in index order: the run's first is its first
         * appearance. Record runs as groups over 'sorted', sort groups by first appearance, then
         * lay them out in order[]. */
        for (size_t i = 0; i < n; i++) {
                if (i == 0 || !same_group(e->jobs, sorted[i - 1], sorted[i]))
                        e->groups[e->n_groups++] = (Group) { .start = i };
                e->groups[e->n_groups - 1].end = i + 1;
        }
        typesafe_qsort_r(e->groups, e->n_groups, group_first_cmp, sorted);

        for (size_t g = 0; g < e->n_groups; g++) {
                size_t len = e->groups[g].end - e->groups[g].start;

                memcpy(e->order + k, sorted + e->groups[g].start, len * sizeof(size_t));
                e->groups[g] = (Group) { .start = k, .end = k + len, .next = k };
                k += len;
        }
        return 0;
}

static void executor_done(Executor *e) {
        usec_t grace_end;
        bool left;

        while (e->n_workers > 0 || e->n_released > 0)
                worker_abandon(e->n_workers > 0 ? e->workers[0] : e->released[0], OUTCOME_TIMEOUT, 0);
        e->tick_source = sd_event_source_disable_unref(e->tick_source);
        e->last_call_source = sd_event_source_disable_unref(e->last_call_source);
        e->retry_source = sd_event_source_disable_unref(e->retry_source);
        e->event = sd_event_unref(e->event);

        /* Reap what can be reaped without blocking: workers that finished but were not dispatched,
         * and abandoned workers that already died. Workers killed just now get a few ms; anything
         * still alive (stuck in the kernel) is left for the caller (ExecJob.abandoned_pid). */
        grace_end = now(CLOCK_MONOTONIC) + REAP_GRACE_USEC;
        for (;;) {
                left = false;
                for (size_t i = 0; i < e->n_children; i++) {
                        Child *c = &e->children[i];

                        if (c->reaped)
                                continue;
                        if (waitpid(c->pid, NULL, WNOHANG) != 0)
                                c->reaped = true; /* reaped, or not our child anymore */
                        else
                                left = true;
                }
                if (!left || now(CLOCK_MONOTONIC) >= grace_end)
                        break;
                (void) usleep(200);
        }

        free(e->order);
        free(e->groups);
        free(e->results);
        free(e->children);
        free(e->released);
}

/* The stall window, the probe interval and the last call, from ops or derived from the time left. */
static void executor_set_windows(Executor *e, const ExecOps *ops) {
        usec_t n = now(CLOCK_MONOTONIC);
        usec_t left = e->deadline == USEC_INFINITY ? USEC_INFINITY : e->deadline > n ? e->deadline - n : 0;

        e->stall = ops && ops->stall > 0   ? ops->stall
                   : left == USEC_INFINITY ? STALL_MAX_USEC
                                           : MIN(MAX(left / 8, STALL_MIN_USEC), STALL_MAX_USEC);
        e->tick = MAX(MIN(e->stall / 4, TICK_MAX_USEC), TIMER_ACCURACY_USEC);
        /* Its floor yields to the last call: worker_stuck_opening(). */
        e->open_stall = MAX(e->stall, EXECUTOR_OPEN_STALL_MIN_USEC);
        /* Proving a hang takes longer than giving a slot up: a disk spinning up, or one long cache
         * flush, completes nothing for seconds. A quarter of the time left (7.5 s of the default
         * 30 s) covers both; callers that set the stall window set the proof window with it. */
        e->proof = ops && ops->stall > 0   ? ops->stall
                   : left == USEC_INFINITY ? e->stall
                                           : MAX(e->stall, left / 4);
        if (ops && ops->last_call > 0)
                e->last_call = ops->last_call;
        else
                e->last_call = left == USEC_INFINITY ? USEC_INFINITY
                                                     : e->deadline - MIN(left / 4, LAST_CALL_MAX_USEC);
}

static void sigmask_restorep(sigset_t **ss) {
        if (*ss)
                (void) sigprocmask(SIG_SETMASK, *ss, NULL);
}

/* The results into the caller's jobs; the number of jobs that did not end SYNCED. */
static int executor_copy_results(const Executor *e, ExecJob *jobs) {
        int n = 0;

        for (size_t i = 0; i < e->n_jobs; i++) {
                ExecJob *j = &jobs[i];

                j->outcome = e->results[i].outcome;
                j->error = e->results[i].error;
                j->duration = e->results[i].duration;
                j->waited = e->results[i].waited;
                j->started = e->results[i].started;
                j->abandoned_pid = e->results[i].abandoned_pid;
                j->hung = e->results[i].hung;
                j->reached_sync = e->results[i].reached_sync;
                j->stuck = false; /* workers are reaped on return: executor_check_stuck() */
                if (j->outcome != OUTCOME_SYNCED)
                        n++;
        }
        return n;
}

int executor_run(ExecJob *jobs, size_t n_jobs, unsigned max_parallel, usec_t deadline, const ExecOps *ops) {
        sigset_t saved, chld;
        /* Cleanup runs bottom-up: sources, then executor (reaping), then the caller's mask. */
        _cleanup_(sigmask_restorep) sigset_t *restore = NULL;
        _cleanup_(executor_done) Executor e = {};
        _cleanup_(sd_event_source_disable_unrefp) sd_event_source *deadline_source = NULL;
        int r;

        if (n_jobs > 0 && !jobs)
                return -EINVAL;
        if (n_jobs > EXECUTOR_JOBS_MAX)
                return -E2BIG;
        for (size_t i = 0; i < n_jobs; i++)
                if (!jobs[i].path)
                        return -EINVAL;
        if (n_jobs == 0)
                return 0;

        e = (Executor) {
                .jobs = jobs,
                .n_jobs = n_jobs,
                .sync_one = ops && ops->sync_one ? ops->sync_one : worker_sync_one,
                .progress = ops && ops->progress ? ops->progress : progress_default,
                .before_fork = ops ? ops->before_fork : NULL,
                .after_fork = ops ? ops->after_fork : NULL,
                .worker_gone = ops ? ops->worker_gone : NULL,
                .userdata = ops ? ops->userdata : NULL,
                .max_parallel = MIN(MAX(max_parallel, 1U), EXECUTOR_PARALLEL_MAX),
                .deadline = deadline,
                .held_back_since = USEC_INFINITY,
        };
        executor_set_windows(&e, ops);

        e.results = calloc(n_jobs, sizeof(JobResult));
        e.children = calloc(n_jobs, sizeof(Child));
        e.released = calloc(n_jobs, sizeof(Worker *));
        if (!e.results || !e.children || !e.released)
                return -ENOMEM;
        r = executor_build_groups(&e);
        if (r < 0)
                return r;

        if (deadline != USEC_INFINITY && now(CLOCK_MONOTONIC) >= deadline)
                /* Nothing can start: every job is "not started before the deadline". */
                executor_expire_all(&e, 0);
        else {
                /* sd-event wants SIGCHLD blocked before child sources; the caller's mask comes back
                 * when we return. */
                sigemptyset(&chld);
                sigaddset(&chld, SIGCHLD);
                if (sigprocmask(SIG_BLOCK, &chld, &saved) < 0)
                        return -errno;
                restore = &saved;

                r = sd_event_new(&e.event);
                if (r < 0)
                        return r;

                if (deadline != USEC_INFINITY) {
                        r = sd_event_add_time(e.event, &deadline_source, CLOCK_MONOTONIC, deadline, 1,
                                              on_deadline, &e);
                        if (r < 0)
                                return r;
                        /* Before anything else: results already in the pipes are drained by
                         * on_deadline() itself, nothing can delay it. */
                        r = sd_event_source_set_priority(deadline_source, SD_EVENT_PRIORITY_IMPORTANT - 100);
                        if (r < 0)
                                return r;
                }

                r = sd_event_add_time(e.event, &e.tick_source, CLOCK_MONOTONIC, now(CLOCK_MONOTONIC) + e.tick,
                                      TIMER_ACCURACY_USEC, on_tick, &e);
                if (r < 0)
                        return r;
                if (e.last_call != USEC_INFINITY) {
                        r = sd_event_add_time(e.event, &e.last_call_source, CLOCK_MONOTONIC, e.last_call,
                                              TIMER_ACCURACY_USEC, on_last_call, &e);
                        if (r < 0)
                                return r;
                }

                r = sd_event_add_time(e.event, &e.retry_source, CLOCK_MONOTONIC, USEC_INFINITY,
                                      TIMER_ACCURACY_USEC, on_retry, &e);
                if (r < 0)
                        return r;
                r = sd_event_source_set_enabled(e.retry_source, SD_EVENT_OFF);
                if (r < 0)
                        return r;

                executor_fill(&e);
                executor_check_done(&e);
                r = sd_event_loop(e.event);
                /* Normally nothing is left here; if the loop itself failed after workers started,
                 * what is left is an error. */
                executor_expire_all(&e, r < 0 ? -r : EIO);
        }

        return executor_copy_results(&e, jobs);
}

bool executor_worker_stuck(pid_t pid) {
        siginfo_t si = {};

        if (pid <= 0)
                return false;
        if (waitid(P_PID, (id_t) pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
                return false;
        return si.si_pid == 0;
}

void executor_check_stuck(ExecJob *jobs, size_t n_jobs) {
        for (size_t i = 0; i < n_jobs; i++)
                jobs[i].stuck = executor_worker_stuck(jobs[i].abandoned_pid);
}
