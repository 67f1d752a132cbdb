/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hook-client: the system-sleep hook against a fake daemon (a forked process on a socket of its
 * own), one behaviour each. What the hook must do: run the late pass itself (a negative return)
 * whenever the daemon did not take it, never once it did, and never wait past the limit it was told.
 * A daemon that answers after the hook gave up must find it gone (its ack fails), so that a pass
 * forked late does nothing.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hook-client.h"
#include "hook-socket.h"
#include "shared/exe-util.h"
#include "tests.h"

static char dir[] = "/tmp/test-hook-client.XXXXXX";
static char path[96];

typedef enum Behaviour {
        SERVE_DONE,      /* ack, then "done 74" */
        SERVE_CLOSE,     /* close without an ack (busy, malformed) */
        SERVE_SILENT,    /* no answer; after the hook's ack timeout, the ack: must fail */
        SERVE_ACK_CLOSE, /* ack, then close (the pass died) */
        SERVE_ACK_LATE,  /* ack with a limit 100 ms away, then nothing */
        SERVE_NACK,      /* an answer that is not an ack */
        SERVE_ACK_BAD,   /* ack, then an answer that is not "done" */
        SERVE_NOTHING,   /* must see no request: the hook closes first */
} Behaviour;

static uint64_t mono(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000U + (uint64_t) ts.tv_nsec / 1000U;
}

static int listen_at(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        unlink(path);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        ASSERT_TRUE((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) >= 0);
        ASSERT_TRUE(bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0);
        ASSERT_TRUE(listen(fd, 4) == 0);
        return fd;
}

static void send_text(int fd, const char *s) {
        (void) send(fd, s, strlen(s), MSG_NOSIGNAL);
}

/* The fake daemon: one connection, then exits 0 when what it saw is what it should have (the
 * request "ACTION ENV"; for SERVE_SILENT, its late ack failing). */
static pid_t serve(Behaviour b, const char *expect_request) {
        int lfd = listen_at();
        pid_t pid = fork();

        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                char buf[HOOK_MSG_MAX], ack[HOOK_MSG_MAX];
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                ssize_t n;

                if (fd < 0)
                        _exit(10);
                n = recv(fd, buf, sizeof buf - 1, 0);
                if (n < 0)
                        _exit(11);
                if (b == SERVE_NOTHING)
                        _exit(n == 0 ? 0 : 16);
                buf[n] = 0;
                if (strcmp(buf, expect_request) != 0) {
                        fprintf(stderr, "request '%s', expected '%s'\n", buf, expect_request);
                        _exit(12);
                }
                hook_ack_format(mono() + (b == SERVE_ACK_LATE ? 100000U : 5000000U), ack, sizeof ack);
                switch (b) {
                case SERVE_DONE:
                        send_text(fd, ack);
                        usleep(50000);
                        send_text(fd, "done 74");
                        break;
                case SERVE_CLOSE:
                        break;
                case SERVE_SILENT:
                        usleep(400000); /* the hook waits 200 ms */
                        if (send(fd, ack, strlen(ack), MSG_NOSIGNAL) >= 0)
                                _exit(13);
                        if (errno != EPIPE && errno != ECONNRESET)
                                _exit(14);
                        break;
                case SERVE_ACK_CLOSE:
                        send_text(fd, ack);
                        break;
                case SERVE_ACK_LATE:
                        send_text(fd, ack);
                        /* Waits while the hook waits, and sees it go once it gave up. */
                        for (int i = 0; i < 100 && hook_requester_waits(fd, 0, 1); i++)
                                usleep(100000);
                        if (hook_requester_waits(fd, 0, 1))
                                _exit(15);
                        break;
                case SERVE_NACK:
                        send_text(fd, "nack 1");
                        break;
                case SERVE_ACK_BAD:
                        send_text(fd, ack);
                        send_text(fd, "done -1");
                        break;
                case SERVE_NOTHING:
                        break;
                }
                close(fd);
                _exit(0);
        }
        close(lfd);
        return pid;
}

static void reap(pid_t pid) {
        int status;

        ASSERT_TRUE(waitpid(pid, &status, 0) == pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fprintf(stderr, "fake daemon: status 0x%x\n", status);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(served) {
        HookClientResult res;
        pid_t pid = serve(SERVE_DONE, "suspend hibernate");

        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", NULL, "suspend", "hibernate", 1000000U, &res), 1);
        ASSERT_EQ(res.code, 74);
        reap(pid);
        /* Actions that are not tokens travel as none. */
        pid = serve(SERVE_DONE, "- -");
        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", NULL, "a b", NULL, 1000000U, &res), 1);
        reap(pid);
}

TEST(not_taken) {
        HookClientResult res;
        uint64_t t0;
        pid_t pid;

        /* No daemon: no socket, or a socket no one listens on. */
        unlink(path);
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", NULL, "suspend", NULL, 1000000U, &res), ENOENT);
        ASSERT_TRUE(res.why != NULL);
        close(listen_at());
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", NULL, "suspend", NULL, 1000000U, &res),
                   ECONNREFUSED);
        /* Another peer than the one required. */
        pid = serve(SERVE_CLOSE, "suspend -");
        ASSERT_ERR(hook_client_run(path, geteuid() + 1, "/proc", NULL, "suspend", NULL, 1000000U, &res),
                   EPERM);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        /* Closed without an ack, or answered otherwise. */
        pid = serve(SERVE_CLOSE, "suspend -");
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", NULL, "suspend", NULL, 1000000U, &res), EBADMSG);
        reap(pid);
        pid = serve(SERVE_NACK, "suspend -");
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", NULL, "suspend", NULL, 1000000U, &res), EBADMSG);
        reap(pid);
        /* No answer within the ack timeout: the hook gives up, and the daemon's late ack fails. */
        pid = serve(SERVE_SILENT, "suspend -");
        t0 = mono();
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", NULL, "suspend", NULL, 200000U, &res),
                   ETIMEDOUT);
        ASSERT_TRUE(mono() - t0 >= 200000U);
        reap(pid);
}

TEST(taken_without_answer) {
        HookClientResult res;
        uint64_t t0;
        pid_t pid;

        /* Taken, then the pass ended without "done": no second pass. */
        pid = serve(SERVE_ACK_CLOSE, "suspend -");
        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", NULL, "suspend", NULL, 1000000U, &res), 0);
        ASSERT_TRUE(strstr(res.why, "without an answer") != NULL);
        reap(pid);
        pid = serve(SERVE_ACK_BAD, "suspend -");
        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", NULL, "suspend", NULL, 1000000U, &res), 0);
        reap(pid);
        /* Past its limit and the margin: the hook goes, and the pass sees it gone. */
        pid = serve(SERVE_ACK_LATE, "suspend -");
        t0 = mono();
        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", NULL, "suspend", NULL, 1000000U, &res), 0);
        ASSERT_TRUE(mono() - t0 >= 100000U + HOOK_DONE_MARGIN);
        ASSERT_TRUE(strstr(res.why, "within its limit") != NULL);
        reap(pid);
}

static void put(const char *name, const char *text) {
        char p[160];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", dir, name);
        if (!text) {
                unlink(p);
                return;
        }
        ASSERT_TRUE((f = fopen(p, "we")) != NULL);
        fputs(text, f);
        ASSERT_TRUE(fclose(f) == 0);
}

/* KeepCheapSync=: both files, the same token, as written; anything else runs the late pass. */
TEST(late_skipped) {
        const char *tok = "0123456789abcdef0123456789abcdef\n";

        put(HOOK_LATE_SKIP_FILE, NULL);
        put(HOOK_UNIT_MARK_FILE, NULL);
        ASSERT_TRUE(!hook_late_skipped(dir));
        put(HOOK_LATE_SKIP_FILE, tok);
        ASSERT_TRUE(!hook_late_skipped(dir)); /* no unit pass of this sleep */
        put(HOOK_UNIT_MARK_FILE, tok);
        ASSERT_TRUE(hook_late_skipped(dir));
        ASSERT_TRUE(!hook_late_skipped("/nonexistent-suspend-sync"));
        /* Another unit's pass began since: its token. */
        put(HOOK_UNIT_MARK_FILE, "ffffffffffffffffffffffffffffffff\n");
        ASSERT_TRUE(!hook_late_skipped(dir));
        /* Malformed either way. */
        put(HOOK_UNIT_MARK_FILE, tok);
        put(HOOK_LATE_SKIP_FILE, "0123456789abcdef0123456789abcdef");
        ASSERT_TRUE(!hook_late_skipped(dir));
        put(HOOK_LATE_SKIP_FILE, "0123456789ABCDEF0123456789ABCDEF\n");
        put(HOOK_UNIT_MARK_FILE, "0123456789ABCDEF0123456789ABCDEF\n");
        ASSERT_TRUE(!hook_late_skipped(dir));
        put(HOOK_LATE_SKIP_FILE, "0123456789abcdef0123456789abcdef\nx");
        put(HOOK_UNIT_MARK_FILE, "0123456789abcdef0123456789abcdef\nx");
        ASSERT_TRUE(!hook_late_skipped(dir));
        put(HOOK_LATE_SKIP_FILE, NULL);
        put(HOOK_UNIT_MARK_FILE, NULL);
}

/* Review AG, F1: the hook that gave up on the daemon's late pass turns the kernel's sync on for this
 * sleep where a change of ours is recorded, and leaves the knob alone where none is. */
static int knob_value(const char *sysfs) {
        char p[200], buf[4] = "";
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", sysfs, HOOK_KNOB_PATH);
        ASSERT_TRUE((f = fopen(p, "re")) != NULL);
        ASSERT_TRUE(fgets(buf, sizeof buf, f) != NULL);
        fclose(f);
        return buf[0] - '0';
}

TEST(give_up_knob) {
        char sysfs[160], power[200], rec[200];
        int held, other;
        uint64_t t0;

        snprintf(sysfs, sizeof sysfs, "%s/sys", dir);
        snprintf(power, sizeof power, "%s/power", sysfs);
        snprintf(rec, sizeof rec, "%s/%s", dir, HOOK_KNOB_RECORD_FILE);
        ASSERT_TRUE(mkdir(sysfs, 0755) == 0 && mkdir(power, 0755) == 0);
        put("sys/" HOOK_KNOB_PATH, "0\n");
        /* no record: an administrator's 0 stays */
        ASSERT_EQ(hook_give_up_knob(dir, sysfs), 0);
        ASSERT_EQ(knob_value(sysfs), 0);
        ASSERT_EQ(hook_give_up_knob("/nonexistent-suspend-sync", sysfs), 0);
        /* our 0, recorded: 1, the record kept for the resume's restore */
        put(HOOK_KNOB_RECORD_FILE, "1\n");
        ASSERT_EQ(hook_give_up_knob(dir, sysfs), 1);
        ASSERT_EQ(knob_value(sysfs), 1);
        ASSERT_TRUE(access(rec, F_OK) == 0);
        /* the knob's lock held by another (a stalled pass): written all the same, after the wait */
        put("sys/" HOOK_KNOB_PATH, "0\n");
        ASSERT_TRUE((held = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0);
        ASSERT_TRUE(flock(held, LOCK_EX | LOCK_NB) == 0);
        t0 = now(CLOCK_MONOTONIC);
        ASSERT_EQ(hook_give_up_knob(dir, sysfs), 1);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t0 >= HOOK_KNOB_LOCK_WAIT);
        ASSERT_EQ(knob_value(sysfs), 1);
        /* ... and as soon as the lock is free */
        put("sys/" HOOK_KNOB_PATH, "0\n");
        ASSERT_TRUE(flock(held, LOCK_UN) == 0);
        close(held);
        ASSERT_EQ(hook_give_up_knob(dir, sysfs), 1);
        ASSERT_EQ(knob_value(sysfs), 1);
        /* a record that is not a regular file counts as one */
        put(HOOK_KNOB_RECORD_FILE, NULL);
        ASSERT_TRUE(mkfifo(rec, 0600) == 0);
        put("sys/" HOOK_KNOB_PATH, "0\n");
        ASSERT_EQ(hook_give_up_knob(dir, sysfs), 1);
        ASSERT_EQ(knob_value(sysfs), 1);
        ASSERT_TRUE(unlink(rec) == 0);
        ASSERT_TRUE(symlink("elsewhere", rec) == 0);
        put("sys/" HOOK_KNOB_PATH, "0\n");
        ASSERT_EQ(hook_give_up_knob(dir, sysfs), 1);
        ASSERT_EQ(knob_value(sysfs), 1);
        ASSERT_TRUE(unlink(rec) == 0);
        /* no knob (an old kernel): said, nothing made */
        put("sys/" HOOK_KNOB_PATH, NULL);
        put(HOOK_KNOB_RECORD_FILE, "1\n");
        ASSERT_TRUE(hook_give_up_knob(dir, sysfs) == -ENOENT);
        put(HOOK_KNOB_RECORD_FILE, NULL);
        other = rmdir(power) | rmdir(sysfs);
        ASSERT_TRUE(other == 0);
}

/* Review O, O6: a line to a stream nobody reads is dropped, never waited for: a full pipe, a full
 * socket (journald's stream), a pipe whose reader is gone; one with room gets it whole. */
TEST(say_never_waits) {
        int p[2], s[2], flags;
        char buf[4096];

        ASSERT_OK(pipe(p));
        flags = fcntl(p[1], F_GETFL);
        ASSERT_OK(fcntl(p[1], F_SETFL, flags | O_NONBLOCK));
        while (write(p[1], buf, sizeof buf) > 0)
                ;
        ASSERT_OK(fcntl(p[1], F_SETFL, flags));          /* blocking again, as a stderr pipe is */
        hook_say(p[1], "suspend-sync: %s\n", "dropped"); /* would block for good */
        /* room again: the line arrives whole */
        while (read(p[0], buf, sizeof buf) == (ssize_t) sizeof buf) {
                struct pollfd q = { .fd = p[0], .events = POLLIN };
                if (poll(&q, 1, 0) != 1)
                        break;
        }
        hook_say(p[1], "suspend-sync: %s\n", "said");
        ASSERT_EQ(read(p[0], buf, sizeof buf), (ssize_t) strlen("suspend-sync: said\n"));
        close(p[0]);
        hook_say(p[1], "suspend-sync: no reader\n"); /* no SIGPIPE either: POLLERR */
        close(p[1]);

        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
        flags = fcntl(s[1], F_GETFL);
        ASSERT_OK(fcntl(s[1], F_SETFL, flags | O_NONBLOCK));
        while (write(s[1], buf, sizeof buf) > 0)
                ;
        ASSERT_OK(fcntl(s[1], F_SETFL, flags));
        hook_say(s[1], "suspend-sync: %s\n", "dropped");
        close(s[0]);
        close(s[1]);
}

/* A copy of sleep(1) at path, as an installer writes a binary. */
static void copy_sleep(const char *file) {
        char buf[65536];
        int in, out;
        ssize_t n;

        ASSERT_TRUE((in = open("/bin/sleep", O_RDONLY | O_CLOEXEC)) >= 0);
        ASSERT_TRUE((out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755)) >= 0);
        while ((n = read(in, buf, sizeof buf)) > 0)
                ASSERT_TRUE(write(out, buf, (size_t) n) == n);
        ASSERT_TRUE(n == 0);
        close(in);
        ASSERT_TRUE(close(out) == 0);
}

/* A process run from path (started through it, a link or not), until killed: its PID once it runs
 * the exec'd program; exe_wants, what its exe link then names. */
static pid_t run_from(const char *file, const char *exe_wants) {
        char exe[256];
        pid_t pid = fork();

        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                execl(file, "sleep", "60", (char *) NULL);
                _exit(127);
        }
        for (int i = 0; i < 5000; i++) {
                char link[64];
                ssize_t k;

                snprintf(link, sizeof link, "/proc/%d/exe", (int) pid);
                k = readlink(link, exe, sizeof exe - 1);
                if (k > 0 && (exe[k] = 0, strcmp(exe, exe_wants) == 0))
                        return pid;
                usleep(1000);
        }
        ASSERT_TRUE(false);
        return -1;
}

static void stop(pid_t pid) {
        kill(pid, SIGKILL);
        ASSERT_TRUE(waitpid(pid, NULL, 0) == pid);
}

/* An upgrade as dpkg makes it: the old file kept as a backup link, the new one renamed over the path
 * (review AI, AI-1: the old program file still has a link). */
static void upgrade_keeping_backup(const char *file, const char *backup) {
        char tmp[160];

        snprintf(tmp, sizeof tmp, "%s.new", file);
        ASSERT_TRUE(link(file, backup) == 0);
        copy_sleep(tmp);
        ASSERT_TRUE(rename(tmp, file) == 0);
}

TEST(exe_identity) {
        char bin[128], backup[160], a[128], b[128], sym[128], self[PATH_MAX];
        int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        pid_t pid;

        ASSERT_TRUE(proc_fd >= 0);
        ASSERT_TRUE(realpath("/proc/self/exe", self) != NULL);
        ASSERT_EQ(proc_exe_is(proc_fd, 0, self), 1); /* ourselves */
        ASSERT_EQ(proc_exe_unlinked(proc_fd, 0), 0);

        /* Replaced with the old file still linked: the identity sees it, the link count does not. */
        snprintf(bin, sizeof bin, "%s/bin", dir);
        snprintf(backup, sizeof backup, "%s.dpkg-tmp", bin);
        copy_sleep(bin);
        pid = run_from(bin, bin);
        ASSERT_EQ(proc_exe_is(proc_fd, pid, bin), 1);
        upgrade_keeping_backup(bin, backup);
        ASSERT_EQ(proc_exe_is(proc_fd, pid, bin), 0);
        ASSERT_EQ(proc_exe_unlinked(proc_fd, pid), 0);
        ASSERT_TRUE(unlink(backup) == 0); /* dpkg's unpack done */
        ASSERT_EQ(proc_exe_unlinked(proc_fd, pid), 1);
        ASSERT_EQ(proc_exe_is(proc_fd, pid, bin), 0);
        stop(pid);
        ASSERT_ERR(proc_exe_is(proc_fd, pid, bin), ESRCH); /* gone */
        ASSERT_ERR(proc_exe_unlinked(proc_fd, pid), ESRCH);

        /* Started through a symlink that is then switched to another version. */
        snprintf(a, sizeof a, "%s/v1", dir);
        snprintf(b, sizeof b, "%s/v2", dir);
        snprintf(sym, sizeof sym, "%s/current", dir);
        copy_sleep(a);
        copy_sleep(b);
        ASSERT_TRUE(symlink(a, sym) == 0);
        pid = run_from(sym, a);
        ASSERT_EQ(proc_exe_is(proc_fd, pid, sym), 1);
        ASSERT_TRUE(unlink(sym) == 0 && symlink(b, sym) == 0);
        ASSERT_EQ(proc_exe_is(proc_fd, pid, sym), 0);
        ASSERT_ERR(proc_exe_is(proc_fd, pid, "/nonexistent/suspend-sync"), ENOENT);
        ASSERT_ERR(proc_exe_is(proc_fd, -1, sym), EINVAL);
        stop(pid);
        unlink(sym);
        unlink(a);
        unlink(b);
        unlink(bin);
        close(proc_fd);
}

/* fixture/PID/exe removed, PID ours (serve_as()). */
static void fixture_clear(const char *fixture, char piddir[static 160], char exe[static 192]) {
        snprintf(piddir, 160, "%s/%d", fixture, (int) getpid());
        snprintf(exe, 192, "%s/exe", piddir);
        (void) unlink(exe);
        (void) rmdir(piddir);
}

/* serve() for a peer whose program the hook looks at through fixture/PID/exe, a link to target
 * (NULL: no such entry). PID is ours: the peer's credentials are those of the listen(2), which
 * serve() makes before its fork. */
static pid_t serve_as(Behaviour b, const char *expect, const char *fixture, const char *target) {
        char piddir[160], exe[192];
        pid_t pid = serve(b, expect);

        fixture_clear(fixture, piddir, exe);
        if (target) {
                ASSERT_TRUE(mkdir(piddir, 0755) == 0);
                ASSERT_TRUE(symlink(target, exe) == 0);
        }
        return pid;
}

/* Reviews AH, M1 and AI, AI-1, AI-2: a daemon that does not run the installed binary (an upgrade
 * replaced it since its start) is sent no request (its late pass would be the old code): the hook
 * runs the new one, and says why (-ESTALE). Without an installed binary (a build run from its tree),
 * a daemon whose program file has no link left. A daemon that cannot be looked at: the same. */
TEST(peer_replaced) {
        char proc[128], bin[128], backup[160], target[64], gone[128], other[128], piddir[160], exe[192];
        HookClientResult res;
        pid_t sleeper, pid;

        snprintf(proc, sizeof proc, "%s/proc", dir);
        snprintf(bin, sizeof bin, "%s/installed", dir);
        snprintf(backup, sizeof backup, "%s.dpkg-tmp", bin);
        snprintf(gone, sizeof gone, "%s/not-installed", dir);
        snprintf(other, sizeof other, "%s/other", dir);
        ASSERT_TRUE(mkdir(proc, 0755) == 0);
        copy_sleep(bin);
        copy_sleep(other);
        sleeper = run_from(bin, bin);
        snprintf(target, sizeof target, "/proc/%d/exe", (int) sleeper);

        /* The installed binary: served. */
        pid = serve_as(SERVE_DONE, "suspend -", proc, target);
        ASSERT_EQ(hook_client_run(path, geteuid(), proc, bin, "suspend", NULL, 1000000U, &res), 1);
        reap(pid);
        /* Another file than the installed one: not asked. */
        pid = serve_as(SERVE_NOTHING, "", proc, other);
        ASSERT_ERR(hook_client_run(path, geteuid(), proc, bin, "suspend", NULL, 1000000U, &res), ESTALE);
        ASSERT_TRUE(strstr(res.why, "replaced") != NULL);
        reap(pid);
        /* Replaced as dpkg does, the old file still linked: not asked. */
        upgrade_keeping_backup(bin, backup);
        pid = serve_as(SERVE_NOTHING, "", proc, target);
        ASSERT_ERR(hook_client_run(path, geteuid(), proc, bin, "suspend", NULL, 1000000U, &res), ESTALE);
        ASSERT_TRUE(strstr(res.why, "replaced") != NULL);
        reap(pid);
        /* No installed binary: its link count. Still linked (the backup): served. */
        pid = serve_as(SERVE_DONE, "suspend -", proc, target);
        ASSERT_EQ(hook_client_run(path, geteuid(), proc, gone, "suspend", NULL, 1000000U, &res), 1);
        reap(pid);
        ASSERT_TRUE(unlink(backup) == 0);
        pid = serve_as(SERVE_NOTHING, "", proc, target);
        ASSERT_ERR(hook_client_run(path, geteuid(), proc, gone, "suspend", NULL, 1000000U, &res), ESTALE);
        ASSERT_TRUE(strstr(res.why, "replaced") != NULL);
        reap(pid);
        /* Not known (no such entry): not asked either, and said (review AI, AI-4). */
        pid = serve_as(SERVE_NOTHING, "", proc, NULL);
        ASSERT_ERR(hook_client_run(path, geteuid(), proc, bin, "suspend", NULL, 1000000U, &res), ESTALE);
        ASSERT_TRUE(strstr(res.why, "cannot tell") != NULL);
        reap(pid);

        /* Review AI, AI-2: a hook in a PID namespace of its own sees no PID for the daemon (0), which
         * must not be taken for itself. Root only (a PID namespace). */
        if (geteuid() == 0) {
                pid_t c;
                int status;

                pid = serve(SERVE_NOTHING, "");
                c = fork();
                ASSERT_TRUE(c >= 0);
                if (c == 0) {
                        pid_t g;

                        if (unshare(CLONE_NEWPID) < 0)
                                _exit(20);
                        g = fork();
                        if (g == 0) {
                                int r = hook_client_run(path, geteuid(), "/proc", NULL, "suspend", NULL,
                                                        1000000U, &res);
                                _exit(r == -ESTALE && strstr(res.why, "cannot tell") ? 0 : 21);
                        }
                        if (g < 0 || waitpid(g, &status, 0) != g)
                                _exit(22);
                        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 23);
                }
                ASSERT_TRUE(waitpid(c, &status, 0) == c);
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        fprintf(stderr, "the hook in a PID namespace of its own: status 0x%x\n", status);
                ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
                reap(pid);
        }

        stop(sleeper);
        fixture_clear(proc, piddir, exe);
        unlink(bin);
        unlink(other);
        rmdir(proc);
}

int main(void) {
        signal(SIGPIPE, SIG_IGN);
        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/late-pass", dir);
        RUN(served);
        RUN(not_taken);
        RUN(taken_without_answer);
        RUN(late_skipped);
        RUN(give_up_knob);
        RUN(say_never_waits);
        RUN(exe_identity);
        RUN(peer_replaced);
        unlink(path);
        rmdir(dir);
        return 0;
}
