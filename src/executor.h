/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Executor: the only module that forks and waits. Runs one forked worker per device group (it
 * opens each mount point and calls syncfs(2), in plan order), at most max_parallel at once, driven
 * by sd-event child and timer sources. Per-mount timeout and a global deadline: a worker that does
 * not report in time is abandoned (never waited for past the deadline) and reported with its pid.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shared/macro.h"
#include "shared/time-util.h"

typedef enum Outcome {
        OUTCOME_PENDING,   /* not started or not finished (internal) */
        OUTCOME_SYNCED,
        OUTCOME_TIMEOUT,
        OUTCOME_ERROR,
        OUTCOME_SKIPPED,
        _OUTCOME_MAX,
        _OUTCOME_INVALID = -EINVAL,
} Outcome;

const char *outcome_to_string(Outcome o);
Outcome outcome_from_string(const char *s);

typedef struct ExecJob {
        /* in */
        const char *path;          /* path to open in the worker (mount point, maybe via /proc/PID/root) */
        const char *group;         /* jobs with the same group run one after another in one worker */
        usec_t timeout;            /* per-mount timeout */
        /* out */
        Outcome outcome;
        int error;                 /* positive errno for OUTCOME_ERROR */
        usec_t duration;           /* time spent in open+syncfs (or until abandoned) */
        pid_t abandoned_pid;       /* worker pid left behind on timeout, 0 otherwise */
} ExecJob;

typedef struct ExecOps {
        /* Runs in the worker for one job: returns 0 or negative errno. Default: open(O_RDONLY|
         * O_DIRECTORY|O_CLOEXEC|O_NOFOLLOW?) + syncfs. Tests substitute it. */
        int (*sync_one)(const char *path, void *userdata);
        void *userdata;
} ExecOps;

/*
 * Runs jobs (already in execution order: groups in order of first appearance) with at most
 * max_parallel workers until done or until 'deadline' (CLOCK_MONOTONIC absolute usec). Jobs not
 * started by the deadline get OUTCOME_TIMEOUT with duration 0. Returns the number of jobs that did
 * not end SYNCED, or negative errno if the executor itself could not run (then no job was touched).
 * ops may be NULL for the default.
 */
int executor_run(ExecJob *jobs, size_t n_jobs, unsigned max_parallel, usec_t deadline,
                 const ExecOps *ops);
