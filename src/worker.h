/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Worker: what runs in a forked sync worker of the executor (executor.c is its only user). The
 * default sync_one (open the mount point, verify the mount, syncfs, flush the device) and the
 * worker's main loop, which reports each job on a pipe. Runs after fork(): no sd-event, no
 * allocation beyond what reading /proc/self/mountinfo for the "gone" check needs.
 */

#include <stddef.h>
#include <stdint.h>

#include "executor.h"
#include "shared/macro.h"

/* One record per job, written by the worker on its pipe. 32 bytes < PIPE_BUF: writes are atomic. */
typedef struct WorkerReport {
        uint32_t index;    /* job index in ExecJob[] */
        int32_t error;     /* positive errno, 0 on success */
        uint64_t duration; /* usec spent in the wait for writeback + open+syncfs+close, measured in
                            * the worker */
        uint64_t started;  /* CLOCK_MONOTONIC (system-wide) when the worker began the job */
        uint64_t waited;   /* usec of that spent waiting for the device's writeback (writeback.h) */
} WorkerReport;

/* The default ExecOps.sync_one (see executor.h): 0, or negative errno; -EIDRM when the mount is
 * gone (job->gone_check), -EALREADY when an overlay's upperdir is covered (job->covered_if_path). */
int worker_sync_one(const ExecJob *job, void *userdata);

/* The worker process: clean signal state, fds 0-2 on /dev/null, report_fd moved to 3, the bdi stats
 * of a job that waits for writeback (ExecJob.settle) on 4, every other fd closed; then, for
 * jobs[order[pos]] .. jobs[order[end - 1]], the wait (writeback.h; settle_quiet is its quiet window)
 * and sync_one, one WorkerReport each on fd 3. Never returns. */
_noreturn_ void worker_child_main(const ExecJob *jobs, const size_t *order, size_t pos, size_t end,
                                  int (*sync_one)(const ExecJob *job, void *userdata), void *userdata,
                                  int report_fd, usec_t settle_quiet);
