/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Who holds the state lock, and by when it must let go (review AE, H2). A pass that holds
 * DIR/lock writes DIR/lock-holder (tmpfs, one line, written atomically):
 *
 *   PID START KIND UNTIL
 *
 * START is the process's start time (/proc/PID/stat, clock ticks since boot), so that a PID used
 * again by a holder that writes no mark is not taken for the old one (review AG, F2). KIND is manual
 * or daemon (lock_holder_kind_name()); UNTIL is the pass's own deadline,
 * CLOCK_MONOTONIC in usec. The two are what a unit's pass can meet holding the lock: the unit's own
 * pass and the late pass write none (no pass waits for them, and they are on the sleep path). The unit's pass that finds the lock held (verb-run.c) waits for the
 * daemon's pass of this sleep; with the mark it waits no longer than the holder's deadline and
 * LOCK_HOLDER_GRACE, whoever holds it, where it could only wait DAEMON_UNIT_LOCK_WAIT before. A
 * mark counts only while the kernel's list of locks (/proc/locks) names its PID as the holder of
 * that very file: one left by a process that has let go, or died, says nothing, nor does the mark
 * of a holder that has not written its own yet.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/time-util.h"

#define LOCK_HOLDER_FILE "lock-holder"
/* After its deadline a pass still saves its record and exits (a few ms; notify.h gives PID 1 10 s). */
#define LOCK_HOLDER_GRACE (5 * USEC_PER_SEC)
/* /proc/locks lists every lock of the machine: read this much of it at most. */
#define LOCK_HOLDER_PROC_LOCKS_MAX (4U * 1024U * 1024U)

typedef enum LockHolderKind {
        LOCK_HOLDER_MANUAL,
        LOCK_HOLDER_DAEMON, /* the daemon's pass (run --trigger=unit as no unit's) */
        _LOCK_HOLDER_KIND_MAX,
} LockHolderKind;

typedef struct LockHolder {
        pid_t pid;
        uint64_t start_time; /* /proc/PID/stat field 22 */
        LockHolderKind kind;
        usec_t until; /* CLOCK_MONOTONIC */
} LockHolder;

/* "manual", "daemon"; NULL out of range. */
const char *lock_holder_kind_name(LockHolderKind k);
/* For messages: "a manual run", "the daemon's pass". */
const char *lock_holder_kind_describe(LockHolderKind k);

/* The line (pure). Returns 0 or -ENOMEM / -EINVAL; free *ret. */
int lock_holder_format(const LockHolder *h, char **ret);
/* The file's text (pure): exactly one line as lock_holder_format() writes it. -EBADMSG otherwise. */
int lock_holder_parse(const char *text, LockHolder *ret);

/* /proc/locks' text (pure): the PID of the FLOCK on the file dev:ino (the lock's fd, fstat()).
 * -ENOENT when none is listed; -EBADMSG when a line does not parse. */
int lock_holder_proc_locks_find(const char *text, dev_t dev, ino_t ino, pid_t *ret);

/* Writes this process's mark into state_dir_fd (the caller holds the lock). 0 or negative errno. */
int lock_holder_write(int state_dir_fd, LockHolderKind kind, usec_t until);

/* The PID that proc's locks (proc: "/proc", or a --root='s; tests) names as the holder of
 * state_dir_fd's lock: 0 and *ret; -ENOENT when nobody holds it; other negative errno when either
 * cannot be read. */
int lock_holder_pid(int state_dir_fd, const char *proc, pid_t *ret);

/* The mark of whoever holds the lock now: 0 and *ret; -ENOENT when nobody holds it, or there is no
 * mark, or it is of another process than the one lock_holder_pid() names (another PID, or the same
 * PID started at another time); -EBADMSG when it does not parse; other negative errno when a file
 * cannot be read. */
int lock_holder_read(int state_dir_fd, const char *proc, LockHolder *ret);
