/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <stdarg.h>
#include <stdio.h>

#include "hook-client.h"
#include "hook-socket.h"
#include "shared/exe-util.h"
#include "shared/hexdecoct.h"
#include "shared/lock-util.h"
#include "shared/time-util.h"

/* One datagram by until (CLOCK_MONOTONIC, µs): its length, 0 at EOF, -ETIMEDOUT, or another
 * negative errno. */
static ssize_t recv_until(int fd, char *buf, size_t size, uint64_t until) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                uint64_t t = now(CLOCK_MONOTONIC);
                ssize_t n;
                int r;

                n = recv(fd, buf, size, MSG_DONTWAIT);
                if (n >= 0)
                        return n;
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (t >= until)
                        return -ETIMEDOUT;
                /* Rounded up: never a busy loop on the last millisecond. */
                r = poll(&p, 1, (int) ((until - t + 999U) / 1000U));
                if (r < 0 && errno != EINTR)
                        return -errno;
        }
}

/* 1 when the daemon (pid) runs the binary installed at installed, 0 when it runs another (an upgrade
 * replaced it since the daemon started), negative errno when that cannot be told (no PID: a peer in
 * another PID namespace, review AI, AI-2). Without a binary at installed (a build run from its
 * tree), whether the daemon's own program file still has a link. */
static int hook_peer_current(const char *proc_dir, const char *installed, pid_t pid) {
        int proc_fd, r;

        if (pid <= 0)
                return -ESRCH;
        proc_fd = open(proc_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return -errno;
        r = installed ? proc_exe_is(proc_fd, pid, installed) : -ENOENT;
        if (r == -ENOENT) {
                r = proc_exe_unlinked(proc_fd, pid);
                r = r < 0 ? r : !r;
        }
        (void) close(proc_fd);
        return r;
}

static int fail(HookClientResult *ret, int r, const char *why) {
        ret->why = why;
        return r;
}

int hook_client_run(const char *path, uid_t peer_uid, const char *proc_dir, const char *installed,
                    const char *action, const char *env_action, uint64_t ack_timeout, HookClientResult *ret) {
        union {
                struct sockaddr sa;
                struct sockaddr_un un;
        } sa = { .un.sun_family = AF_UNIX };
        struct ucred cred;
        socklen_t len = sizeof cred;
        char buf[HOOK_MSG_MAX];
        uint64_t limit, t0 = now(CLOCK_MONOTONIC);
        size_t n;
        ssize_t k;
        int fd, r;

        *ret = (HookClientResult) { .code = -1 };
        if (strlen(path) >= sizeof sa.un.sun_path)
                return fail(ret, -ENAMETOOLONG, "the socket's path is too long");
        memcpy(sa.un.sun_path, path, strlen(path) + 1);
        /* Non-blocking: connect(2) would wait for room in a full backlog. */
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return fail(ret, -errno, "no socket");
        if (connect(fd, &sa.sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1)) <
            0) {
                r = -errno;
                (void) close(fd);
                return fail(ret, r,
                            r == -ENOENT || r == -ECONNREFUSED ? "the daemon is not running"
                                                               : "cannot connect to the daemon");
        }
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != peer_uid) {
                (void) close(fd);
                return fail(ret, -EPERM, "the socket is not the daemon's");
        }
        /* Before the request: a daemon an upgrade left running forks the late pass of the code it
         * started with, which may lack what this version fixed (review AH, M1). */
        r = hook_peer_current(proc_dir, installed, cred.pid);
        if (r <= 0) {
                (void) close(fd);
                return fail(ret, -ESTALE,
                            r < 0 ? "cannot tell whether the daemon runs the installed binary"
                                  : "the daemon does not run the installed binary (replaced by an upgrade "
                                    "since its start? restart suspend-sync-daemon.service)");
        }
        n = hook_request_format(action, env_action, buf, sizeof buf);
        if (send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) n) {
                r = -errno ?: -EIO;
                (void) close(fd);
                return fail(ret, r, "the request could not be sent");
        }
        k = recv_until(fd, buf, sizeof buf, t0 + ack_timeout);
        if (k <= 0 || hook_ack_parse(buf, (size_t) k, &limit) < 0) {
                /* Closed first: a pass the daemon forks now fails to send its ack and ends. */
                (void) close(fd);
                return fail(ret, k == -ETIMEDOUT ? -ETIMEDOUT : -EBADMSG,
                            k == -ETIMEDOUT ? "no answer from the daemon in time"
                            : k == 0        ? "the daemon did not take the pass (another one runs?)"
                                            : "the daemon's answer was not an ack");
        }
        /* Taken: from here on, whatever comes, no second pass. Never past HOOK_WAIT_MAX from now, so
         * systemd-sleep's own limit on its hooks is never reached by us. */
        limit = limit > UINT64_MAX - HOOK_DONE_MARGIN ? UINT64_MAX : limit + HOOK_DONE_MARGIN;
        if (limit > now(CLOCK_MONOTONIC) + HOOK_WAIT_MAX)
                limit = now(CLOCK_MONOTONIC) + HOOK_WAIT_MAX;
        k = recv_until(fd, buf, sizeof buf, limit);
        (void) close(fd);
        if (k > 0 && hook_done_parse(buf, (size_t) k, &ret->code) >= 0)
                return 1;
        ret->why = k == -ETIMEDOUT ? "the daemon's late pass did not end within its limit"
                   : k == 0        ? "the daemon's late pass ended without an answer"
                                   : "the daemon's late pass gave no valid answer";
        return 0;
}

int hook_give_up_knob(const char *state_dir, const char *sysfs) {
        int dir_fd, lock_fd, sys_fd, fd, r;
        struct stat st;
        ssize_t n;

        dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return errno == ENOENT ? 0 : -errno;
        lock_fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (lock_fd >= 0 && flock_until(lock_fd, now(CLOCK_MONOTONIC) + HOOK_KNOB_LOCK_WAIT, 5000U) < 0) {
                (void) close(lock_fd);
                lock_fd = -1; /* written without it, as a restore does */
        }
        r = fstatat(dir_fd, HOOK_KNOB_RECORD_FILE, &st, AT_SYMLINK_NOFOLLOW);
        if (r < 0 && errno == ENOENT)
                r = 0; /* nothing of ours to undo */
        else {
                sys_fd = open(sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                fd = sys_fd < 0 ? -1
                                : openat(sys_fd, HOOK_KNOB_PATH,
                                         O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
                r = fd < 0 ? -errno : 1;
                if (fd >= 0) {
                        do
                                n = write(fd, "1\n", 2);
                        while (n < 0 && errno == EINTR);
                        if (n != 2)
                                r = n < 0 ? -errno : -EIO;
                        (void) close(fd);
                }
                if (sys_fd >= 0)
                        (void) close(sys_fd);
        }
        if (lock_fd >= 0)
                (void) close(lock_fd);
        (void) close(dir_fd);
        return r;
}

/* The file's whole text if it is a token and a newline (33 bytes), into buf. */
static bool read_token(int dir_fd, const char *name, char buf[static 34]) {
        int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        ssize_t n;

        if (fd < 0)
                return false;
        n = read(fd, buf, 34);
        (void) close(fd);
        if (n != 33 || buf[32] != '\n')
                return false;
        buf[32] = 0;
        return id128_string_valid(buf);
}

bool hook_late_skipped(const char *state_dir) {
        char skip[34], unit[34];
        int dir_fd;
        bool r;

        dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return false;
        r = read_token(dir_fd, HOOK_LATE_SKIP_FILE, skip) && read_token(dir_fd, HOOK_UNIT_MARK_FILE, unit) &&
            streq(skip, unit);
        (void) close(dir_fd);
        return r;
}

void hook_say(int fd, const char *fmt, ...) {
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        char buf[512];
        va_list ap;
        int type, n;
        socklen_t len = sizeof type;

        va_start(ap, fmt);
        n = vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        if ((size_t) n >= sizeof buf)
                n = sizeof buf - 1;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) >= 0) {
                (void) !send(fd, buf, (size_t) n, MSG_DONTWAIT | MSG_NOSIGNAL);
                return;
        }
        if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) && !(p.revents & (POLLERR | POLLHUP)))
                (void) !write(fd, buf, (size_t) n);
}
