/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Worker: what runs in a forked sync worker of the executor (executor.c is its only user; test
 * sync_one replacements call worker_report_syncing()). The default sync_one (open the mount point,
 * verify the mount, syncfs, flush the device) and the worker's main loop, which reports on a pipe;
 * the record and the parent's reader of that pipe. Runs after fork(): no sd-event, no allocation
 * beyond what reading /proc/self/mountinfo for the "gone" check needs.
 */

#include <stddef.h>
#include <stdint.h>

#include "executor.h"
#include "shared/macro.h"

typedef enum WorkerReportKind {
        REPORT_DONE = 1,    /* the job ended: error, duration, started, waited are set */
        REPORT_SYNCING = 2, /* the job is about to enter syncfs(): its open and mount check are
                             * behind it, only syncfs and the device flush are ahead. flags is set,
                             * the others are 0 */
        REPORT_OPENING = 3, /* the job's wait for its device's writeback is over: it walks to the
                             * mount now (overlay check, open, mount check), where a path through a
                             * dead FUSE or NFS server holds it above its device. The others are 0 */
} WorkerReportKind;

/* REPORT_SYNCING flags. */
#define WORKER_SYNCING_ACCOUNTED \
        1U /* every leaf disk of the job accounts its I/O (queue/iostats 1,
                                     * read by the worker: in the parent, that read could wait on a
                                     * queue lock held by a stuck task): its completion counters
                                     * are evidence (progress.h) */

/* One record, written by the worker on its pipe: for each job one REPORT_OPENING, at most one
 * REPORT_SYNCING, then one REPORT_DONE, in that order. 40 bytes < PIPE_BUF: writes are atomic. The size is a multiple of 8
 * and every field is named (reserved included): no padding whose bytes would travel unset. */
typedef struct WorkerReport {
        uint32_t kind;     /* WorkerReportKind; any other value is ignored */
        uint32_t index;    /* job index in ExecJob[] */
        int32_t error;     /* positive errno, 0 on success */
        uint32_t flags;    /* REPORT_SYNCING: WORKER_SYNCING_*; else 0 */
        uint64_t duration; /* usec spent in the wait for writeback + open+syncfs+close, measured in
                            * the worker */
        uint64_t started;  /* CLOCK_MONOTONIC (system-wide) when the worker began the job */
        uint64_t waited;   /* usec of that spent waiting for the device's writeback (writeback.h) */
} WorkerReport;

/* The parent's reassembly buffer for one pipe: a read may return part of a record. */
typedef struct WorkerReportBuffer {
        uint8_t buf[sizeof(WorkerReport)];
        size_t len;
} WorkerReportBuffer;

/* Reads the next record from the non-blocking pipe fd (never more than one record's bytes, so the
 * records keep their order and framing). Returns 1 with *ret set when a whole record is in, 0 when
 * nothing more is there now (a partial record stays in b), -EPIPE at EOF, negative errno on error. */
int worker_report_read(int fd, WorkerReportBuffer *b, WorkerReport *ret);

/* In a worker (the default sync_one, or a replacement in tests): tells the parent that job, the one
 * being run now, enters syncfs(). Call it right before syncfs(), after everything that may block
 * elsewhere (open, path walk, FUSE OPENDIR): a worker abandoned without it is never reported hung,
 * since only a device stuck in syncfs would block the kernel's own sync. 0, or negative errno
 * (-EINVAL outside a worker or for another job than the current one). */
int worker_report_syncing(const ExecJob *job);

/* The default ExecOps.sync_one (see executor.h): 0, or negative errno; -EIDRM when the mount is
 * gone (job->gone_check), -EALREADY when an overlay's upperdir is covered (job->covered_if_path). */
int worker_sync_one(const ExecJob *job, void *userdata);

/* The worker process: clean signal state, fds 0-2 on /dev/null, report_fd moved to 3, the bdi stats
 * of a job that waits for writeback (ExecJob.settle) on 4, sysfs dev/block of the jobs' leaf disks
 * on 5 (worker_report_syncing() reads their queue/iostats), every other fd closed; then, for
 * jobs[order[pos]] .. jobs[order[end - 1]], the wait (writeback.h; settle_quiet is its quiet window)
 * and sync_one, one REPORT_DONE each on fd 3 (after the REPORT_SYNCING that sync_one may send through
 * worker_report_syncing()). Never returns. */
_noreturn_ void worker_child_main(const ExecJob *jobs, const size_t *order, size_t pos, size_t end,
                                  int (*sync_one)(const ExecJob *job, void *userdata), void *userdata,
                                  int report_fd, usec_t settle_quiet);
