/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bounded-child.h"
#include "fd-util.h"
#include "macro.h"

/* Children killed and not yet reaped when bounded_child_run() returned (bounded_child_abandoned()). */
static pid_t abandoned[BOUNDED_CHILD_ABANDONED_MAX];
static size_t n_abandoned;
/* Children that answered and had not exited yet, by pidfd: zombies until reaped here (a pass that
 * asks often, progress's busy files, would otherwise pile them up against TasksMax=). By pidfd, not
 * by pid: should anything else reap one, its pid may be reused by another child of ours (a sync
 * worker), which a waitpid() here would reap from under sd-event. Without pidfds (before Linux 5.4)
 * they are left to our exit, as before. */
static int exiting[BOUNDED_CHILD_ABANDONED_MAX];
static size_t n_exiting;
#define PIPE_DEFAULT_SIZE (64U * 1024U)
#define PIPE_GROW_MAX (1024U * 1024U) /* fs.pipe-max-size's default */

/* Children forked by this process (bounded_child_started()). */
static unsigned n_started;

void bounded_child_forget_parent(void) {
        n_abandoned = 0;
        n_exiting = 0; /* their pidfds are the parent's: closed with the rest, not here */
}

static void reap_exiting(void) {
        size_t k = 0;

        for (size_t i = 0; i < n_exiting; i++) {
                siginfo_t si = {};

                if (waitid(P_PIDFD, (id_t) exiting[i], &si, WEXITED | WNOHANG) == 0 && si.si_pid == 0)
                        exiting[k++] = exiting[i]; /* still running */
                else
                        safe_close(exiting[i]); /* reaped now, or by somebody else */
        }
        n_exiting = k;
}

size_t bounded_child_reap_exiting(usec_t timeout) {
        usec_t until = usec_add(now(CLOCK_MONOTONIC), timeout);

        for (;;) {
                struct pollfd p[BOUNDED_CHILD_ABANDONED_MAX];
                usec_t t;

                reap_exiting();
                t = now(CLOCK_MONOTONIC);
                if (n_exiting == 0 || t >= until)
                        return n_exiting;
                for (size_t i = 0; i < n_exiting; i++)
                        p[i] = (struct pollfd) { .fd = exiting[i], .events = POLLIN };
                /* a pidfd reads as readable once its process has exited */
                if (poll(p, n_exiting, (int) ((until - t + USEC_PER_MSEC - 1) / USEC_PER_MSEC)) < 0 &&
                    errno != EINTR)
                        return n_exiting;
        }
}

static void remember_exiting(pid_t pid) {
        int fd;

        if (n_exiting == ELEMENTSOF(exiting))
                reap_exiting();
        if (n_exiting == ELEMENTSOF(exiting))
                return;
        fd = (int) syscall(SYS_pidfd_open, pid, 0); /* O_CLOEXEC by default */
        if (fd >= 0)
                exiting[n_exiting++] = fd;
}

/* Keeps only what the child needs: the pipe as fd 3, keep_fd as fd 4 (unless it is negative), a
 * prepared child's go socket as fd 5 (the same), stdio on /dev/null, every other fd closed. */
static void child_setup_fds(int *keep_fd, int *fd, int *go_fd) {
        int fds[3] = { *fd, *keep_fd, *go_fd }, null_fd;

        if (close_all_fds_but(fds, ELEMENTSOF(fds)) < 0)
                _exit(EXIT_FAILURE);
        null_fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        for (int i = 0; i < 3; i++)
                if (null_fd < 0)
                        (void) close(i);
                else if (null_fd != i)
                        (void) dup2(null_fd, i);
        if (null_fd > 2)
                (void) close(null_fd);
        *fd = fds[0];
        *keep_fd = fds[1];
        *go_fd = fds[2];
}

/* A prepared child (bounded_child_prepare()): named idle_name while it waits for its go, a message
 * on go_fd ("g" and the name its parent has then, bounded_child_go()), then by that name. Anything
 * else (its parent let it go unstarted or is gone: end of file) ends it, its work not done. */
static void child_wait_go(int go_fd, const char *idle_name) {
        char msg[1 + 16] = "";
        ssize_t n;

        if (idle_name)
                (void) prctl(PR_SET_NAME, idle_name);
        do
                n = recv(go_fd, msg, sizeof msg - 1, 0);
        while (n < 0 && errno == EINTR);
        if (n < 1 || msg[0] != 'g')
                _exit(EXIT_FAILURE);
        (void) close(go_fd);
        if (n > 1)
                (void) prctl(PR_SET_NAME, msg + 1);
}

typedef struct Collected {
        char *data;
        size_t size, allocated, max;
} Collected;

static int collected_put(Collected *c, const char *p, size_t n) {
        if (n > c->max || c->size > c->max - n)
                return -E2BIG;
        if (c->size + n > c->allocated) {
                size_t a = MIN(MAX(c->allocated * 2, c->size + n + 256), c->max);
                char *t = realloc(c->data, a);

                if (!t)
                        return -ENOMEM;
                c->data = t;
                c->allocated = a;
        }
        memcpy(c->data + c->size, p, n);
        c->size += n;
        return 0;
}

/* Reads from rfd until feed says complete (1), EOF (0), the deadline (-ETIMEDOUT) or an error. With
 * late (a caller that worked between start and finish), what the child has written by the time the
 * deadline is seen still counts: the bytes in the pipe then, no more, are read. Without it (start and
 * finish in one go) nothing is read past the deadline: a child started past it is killed at once,
 * whatever it could have answered meanwhile. */
static int collect(int rfd, usec_t until, bool late, Collected c, BoundedChildFeed feed, void *userdata) {
        size_t left = SIZE_MAX; /* past the deadline: what may still be read */
        char chunk[16384];
        int r = 0;

        /* What bounded_child_step() read already: complete, or more to read. */
        if (c.size > 0) {
                r = feed(c.data, c.size, userdata);
                if (r != 0) {
                        free(c.data);
                        return r;
                }
        }
        for (;;) {
                struct pollfd p = { .fd = rfd, .events = POLLIN };
                usec_t t = now(CLOCK_MONOTONIC);
                ssize_t n;

                if (t >= until && left == SIZE_MAX) {
                        int avail = 0;

                        left = !late || ioctl(rfd, FIONREAD, &avail) < 0 ? 0 : (size_t) MAX(avail, 0);
                }
                if (left == 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                n = poll(&p, 1,
                         left != SIZE_MAX ? 0
                                          : (int) MIN((until - t + USEC_PER_MSEC - 1) / USEC_PER_MSEC,
                                                      (usec_t) INT_MAX));
                if (n < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                if (n <= 0) {
                        if (left != SIZE_MAX) { /* nothing there after all */
                                r = -ETIMEDOUT;
                                break;
                        }
                        continue;
                }
                n = read(rfd, chunk, MIN(sizeof chunk, left));
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        r = -errno;
                        break;
                }
                if (n == 0) {
                        r = 0; /* EOF: the child exited (or died) without completing */
                        break;
                }
                if (left != SIZE_MAX)
                        left -= (size_t) n;
                r = collected_put(&c, chunk, (size_t) n);
                if (r < 0)
                        break;
                r = feed(c.data, c.size, userdata);
                if (r != 0)
                        break;
        }
        free(c.data);
        return r;
}

/* Forks the child. prepared: it waits for bounded_child_go() (its bound set then), named
 * idle_name meanwhile. */
static int start(int keep_fd, usec_t timeout, size_t max_size, bool grow, bool prepared,
                 const char *idle_name, BoundedChildWork work, void *userdata, BoundedChild *ret) {
        usec_t until = prepared ? USEC_INFINITY : usec_add(now(CLOCK_MONOTONIC), timeout);
        int pfd[2], gfd[2] = { -EBADF, -EBADF }, r;
        pid_t pid;

        reap_exiting();
        if (prepared && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, gfd) < 0)
                return -errno;
        if (pipe2(pfd, O_CLOEXEC) < 0) {
                r = -errno;
                safe_close(gfd[0]);
                safe_close(gfd[1]);
                return r;
        }
        /* A caller that works before it collects leaves the child writing into the pipe alone: room
         * for a whole answer (up to the unprivileged limit, 1 MiB by default; best effort), so that
         * one written in time is all there when finish looks past the bound. Before the fork: the
         * child never waits on the smaller pipe. */
        if (grow && max_size > PIPE_DEFAULT_SIZE)
                (void) fcntl(pfd[0], F_SETPIPE_SZ, (int) MIN(max_size, PIPE_GROW_MAX));
        pid = fork();
        if (pid < 0) {
                r = -errno;
                safe_close(pfd[0]);
                safe_close(pfd[1]);
                safe_close(gfd[0]);
                safe_close(gfd[1]);
                return r;
        }
        if (pid == 0) {
                int fd = pfd[1], go = gfd[1];

                safe_close(pfd[0]);
                safe_close(gfd[0]);
                child_setup_fds(&keep_fd, &fd, &go);
                if (go >= 0)
                        child_wait_go(go, idle_name);
                _exit(work(fd, keep_fd, userdata));
        }
        safe_close(pfd[1]);
        safe_close(gfd[1]);
        n_started++;
        *ret = (BoundedChild) {
                .pid = pid,
                .fd = pfd[0],
                .go_fd = gfd[0],
                .until = until,
                .max_size = max_size,
        };
        return 0;
}

/* Kills a child that did not answer (r <= 0) and forgets it: reaped if it has exited, else
 * remembered as abandoned, or, when it answered, as exiting. */
static void child_leave(BoundedChild *c, int r) {
        pid_t pid = c->pid;

        c->pid = 0;
        if (r <= 0)
                /* Stuck (most likely in the kernel, on a hung mount) or failed: killed, never waited
                 * for. */
                (void) kill(pid, SIGKILL);
        /* Reap it if it has exited already, else leave the zombie to our exit; one killed is
         * remembered (room is made by forgetting those that exited since). One that answered is
         * not: it is on its way out, and handing it to a scope would cost the pass a round trip
         * to PID 1 for nothing. */
        if (waitpid(pid, NULL, WNOHANG) == 0) {
                if (r <= 0) {
                        if (n_abandoned == ELEMENTSOF(abandoned))
                                (void) bounded_child_abandoned(0, NULL);
                        if (n_abandoned < ELEMENTSOF(abandoned))
                                abandoned[n_abandoned++] = pid;
                } else
                        remember_exiting(pid); /* reaped at a later call, not waited for */
        }
        c->fd = safe_close(c->fd);
        c->go_fd = safe_close(c->go_fd);
        c->got = mfree(c->got);
        c->got_size = c->got_allocated = 0;
        c->got_error = 0;
}

static int finish(BoundedChild *c, bool late, BoundedChildFeed feed, void *userdata) {
        int r;

        assert(c->pid > 0);
        if (c->go_fd >= 0) { /* prepared, never told to go: no bound yet, nothing to wait for */
                bounded_child_cancel(c);
                return -ESTALE;
        }
        if (c->got_error < 0) {
                r = c->got_error;
                child_leave(c, r);
                return r;
        }
        r = collect(c->fd, c->until, late,
                    (Collected) { .data = TAKE_PTR(c->got),
                                  .size = c->got_size,
                                  .allocated = c->got_allocated,
                                  .max = c->max_size },
                    feed, userdata);
        c->got_size = c->got_allocated = 0;
        child_leave(c, r);
        return r > 0 ? 1 : r;
}

int bounded_child_start(int keep_fd, usec_t timeout, size_t max_size, BoundedChildWork work, void *userdata,
                        BoundedChild *ret) {
        return start(keep_fd, timeout, max_size, true, false, NULL, work, userdata, ret);
}

int bounded_child_prepare(int keep_fd, size_t max_size, const char *idle_name, BoundedChildWork work,
                          void *userdata, BoundedChild *ret) {
        return start(keep_fd, 0, max_size, true, true, idle_name, work, userdata, ret);
}

int bounded_child_go(BoundedChild *c, usec_t timeout) {
        char msg[1 + 16] = "g";

        if (c->pid <= 0 || c->go_fd < 0)
                return -EINVAL;
        c->until = usec_add(now(CLOCK_MONOTONIC), timeout);
        /* Named as its parent is now (the daemon's standby pass has its own name back by then). */
        if (prctl(PR_GET_NAME, msg + 1) < 0)
                msg[1] = 0;
        if (send(c->go_fd, msg, 1 + strlen(msg + 1), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
                int r = -errno;

                child_leave(c, r); /* gone meanwhile (killed, out of memory): never to answer */
                return r;
        }
        c->go_fd = safe_close(c->go_fd);
        return 0;
}

int bounded_child_finish(BoundedChild *c, BoundedChildFeed feed, void *userdata) {
        return finish(c, true, feed, userdata);
}

int bounded_child_step(BoundedChild *c, BoundedChildFeed feed, void *userdata) {
        Collected col = {
                .data = c->got, .size = c->got_size, .allocated = c->got_allocated, .max = c->max_size
        };
        char chunk[16384];
        int r;

        assert(c->pid > 0 && c->go_fd < 0);
        for (;;) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                ssize_t n;

                n = poll(&p, 1, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : -EAGAIN; /* nothing more now */
                        break;
                }
                n = read(c->fd, chunk, sizeof chunk);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : 0; /* EOF: the child exited (or died) */
                        break;
                }
                r = collected_put(&col, chunk, (size_t) n);
                if (r < 0)
                        break;
                r = feed(col.data, col.size, userdata);
                if (r != 0)
                        break;
        }
        c->got = col.data;
        c->got_size = col.size;
        c->got_allocated = col.allocated;
        if (r < 0 && r != -EAGAIN)
                c->got_error = r; /* what finish returns: the stream is cut */
        return r > 0 ? 1 : r;
}

void bounded_child_cancel(BoundedChild *c) {
        if (c->pid <= 0)
                return;
        if (c->go_fd >= 0) {
                /* Prepared, never let go: it waits on the socket and exits at its end, its work not
                 * done. Nothing to kill, nothing stuck: reaped later like one that answered. */
                c->go_fd = safe_close(c->go_fd);
                child_leave(c, 1);
                return;
        }
        child_leave(c, -ECANCELED);
}

int bounded_child_run(int keep_fd, usec_t timeout, size_t max_size, BoundedChildWork work,
                      BoundedChildFeed feed, void *userdata) {
        BoundedChild c;
        int r;

        r = start(keep_fd, timeout, max_size, false, false, NULL, work, userdata, &c);
        if (r < 0)
                return r;
        return finish(&c, false, feed, userdata);
}

unsigned bounded_child_started(void) {
        return n_started;
}

size_t bounded_child_abandoned(size_t max, pid_t *ret_pids) {
        size_t k = 0, n = 0;

        reap_exiting();
        for (size_t i = 0; i < n_abandoned; i++) {
                pid_t pid = abandoned[i];

                /* Exited (reaped here) or no longer our child (reaped elsewhere): forgotten. */
                if (waitpid(pid, NULL, WNOHANG) != 0)
                        continue;
                abandoned[k++] = pid;
                if (n < max)
                        ret_pids[n++] = pid;
        }
        n_abandoned = k;
        return n;
}
