/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Work that may block in the kernel (a path on a hung NFS, CIFS, 9p or FUSE server), bounded in time
 * without threads: a forked child does it and writes its answer to a pipe; the parent collects what
 * arrives until the answer is complete, the child closes the pipe, or a deadline passes. A child that
 * did not complete its answer is killed with SIGKILL and abandoned, never waited for (one stuck in
 * the kernel dies only when the server answers). The child keeps nothing of the parent's but the pipe
 * and one directory fd: an abandoned child holds no lock (an flock() belongs to the open file
 * description) and no pipe somebody reads until EOF (our stdout or stderr).
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "time-util.h"

/* Runs in the child: the pipe's write end is fd 3, keep_fd is fd 4 (a negative keep_fd, such as
 * AT_FDCWD, is passed on as it is), stdin, stdout and stderr are /dev/null, every other fd is closed.
 * Returns the exit status. */
typedef int (*BoundedChildWork)(int pipe_fd, int keep_fd, void *userdata);

/* Runs in the parent each time data arrived, with everything received so far (the buffer only grows
 * at its end). Returns 0 to wait for more, > 0 when the answer is complete, a negative errno when
 * the stream is malformed. */
typedef int (*BoundedChildFeed)(const char *buf, size_t size, void *userdata);

/*
 * Forks a child that runs work(userdata) and feeds what it writes to feed(userdata), waiting at most
 * timeout in all. Returns 1 when feed said the answer is complete (the child, exiting, is reaped if
 * it has exited already, else left to our own exit); 0 when the child closed the pipe first (it
 * exited or died); -ETIMEDOUT when the timeout passed first; -E2BIG when it sent more than max_size
 * bytes; feed's negative errno; or the error of pipe2(), fork(), poll() or read(). In every case but
 * 1 the child is killed and abandoned. Both sides share userdata as it was at fork().
 */
int bounded_child_run(int keep_fd, usec_t timeout, size_t max_size, BoundedChildWork work,
                      BoundedChildFeed feed, void *userdata);

/* A child started and not yet collected: bounded_child_finish() or bounded_child_cancel() exactly
 * once. */
typedef struct BoundedChild {
        pid_t pid; /* 0: none (finished, cancelled) */
        int fd;    /* the pipe's read end */
        int go_fd; /* prepared, not yet told to go: the socket bounded_child_go() writes; else -EBADF */
        usec_t until;
        size_t max_size;
        char *got; /* what bounded_child_step() read (finish goes on from it) */
        size_t got_size, got_allocated;
        int got_error; /* ... and the error it returned, which finish returns */
} BoundedChild;

#define BOUNDED_CHILD_NULL ((BoundedChild) { .fd = -EBADF, .go_fd = -EBADF })

/*
 * bounded_child_run() in two steps, so that the parent works while the child does: start forks the
 * child (its bound, timeout, counts from here); finish collects its answer as bounded_child_run()
 * does, waiting at most until the bound, and returns what bounded_child_run() would, but for one
 * thing: called past the bound, it still reads what the pipe holds then (an answer written while the
 * parent worked counts), where bounded_child_run() reads nothing past it. Start makes the pipe hold
 * up to max_size (at most 1 MiB, best effort): a larger answer the child could not write into it
 * while the parent worked is not there to read past the bound. userdata must
 * stay valid until finish. cancel kills and abandons a child whose answer is no longer wanted (a
 * caller's error path; a no-op on one finished or never started).
 */
int bounded_child_start(int keep_fd, usec_t timeout, size_t max_size, BoundedChildWork work, void *userdata,
                        BoundedChild *ret);
int bounded_child_finish(BoundedChild *c, BoundedChildFeed feed, void *userdata);
void bounded_child_cancel(BoundedChild *c);
/*
 * For a parent that waits on an event loop (the daemon's configuration reads): reads what the pipe
 * holds now, without waiting, and feeds everything received so far. Returns 1 when feed says the
 * answer is complete, 0 when the child closed the pipe first, -EAGAIN when more may come, or feed's
 * or read's error. Called on each readable edge of c->fd (edge-triggered: each call empties the
 * pipe, so every later write makes a new edge, and an answer longer than the pipe goes through);
 * then, once it returns anything but -EAGAIN or c->until has passed, bounded_child_finish(), which
 * goes on from what was read here and returns at once when that was complete. c: started and not
 * finished.
 */
int bounded_child_step(BoundedChild *c, BoundedChildFeed feed, void *userdata);
/*
 * bounded_child_start() with the fork done ahead, off a path that is waited for (the daemon's standby
 * pass prepares its configuration reader): prepare forks the child, which waits (named idle_name
 * meanwhile, when not NULL; at its go it takes the name its parent has then); go lets it run
 * work(userdata) with its bound, timeout, counted from the go; then bounded_child_finish() as after
 * start (before a go it returns -ESTALE at once, the child let go unstarted). Cancelled (or the
 * parent gone) before its go, it exits at the end of its socket without running work, and is not
 * killed nor listed as abandoned. go returns 0, or a negative errno when the child cannot be told
 * (gone meanwhile): it is then left (killed, reaped or abandoned), and the caller starts another.
 * userdata is the child's as it was at prepare.
 */
int bounded_child_prepare(int keep_fd, size_t max_size, const char *idle_name, BoundedChildWork work,
                          void *userdata, BoundedChild *ret);
int bounded_child_go(BoundedChild *c, usec_t timeout);

/* How many children this process has forked here: a caller tells whether some work forked any
 * (and so depended on their bounds) from the count before and after. */
unsigned bounded_child_started(void);

/* How many abandoned children this process remembers (the first ones; later ones are not). */
#define BOUNDED_CHILD_ABANDONED_MAX 16U

/*
 * The children bounded_child_run() killed and abandoned that are still there (not yet exited: most
 * likely in the kernel, on a hung device or server), at most max of them in ret_pids; those that
 * have exited are reaped and forgotten, as are those that answered and have exited since (a resident
 * process calls this to leave no zombie between its calls). A child that answered is never listed
 * (it is exiting). A
 * process started by systemd hands them to a scope of their own with its stuck workers (scope.h):
 * left in the unit's cgroup, they would keep it busy after resume.
 */
size_t bounded_child_abandoned(size_t max, pid_t *ret_pids);

/* Waits, at most timeout, for the children that answered (exiting, not yet reaped) to end, and reaps
 * them. A short-lived process of a unit (ExecStopPost=) that exits before them leaves them in the
 * unit, which systemd then names ("remains running after unit stopped": review AW, L4). Returns how
 * many are left (still running, or not watched: before Linux 5.4, no pidfd). */
size_t bounded_child_reap_exiting(usec_t timeout);

/* In a child forked without exec (the daemon's pass): the parent's abandoned and exiting children
 * are forgotten, not reaped and not closed (they are not ours to wait for; the pidfds are the
 * parent's, closed with the rest of its fds). Without it, the child's first bounded_child_run()
 * would close fd numbers it has reused since, and could reap its own sync worker by a reused pid. */
void bounded_child_forget_parent(void);
