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
#include <poll.h>
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

        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", "suspend", "hibernate", 1000000U, &res), 1);
        ASSERT_EQ(res.code, 74);
        reap(pid);
        /* Actions that are not tokens travel as none. */
        pid = serve(SERVE_DONE, "- -");
        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", "a b", NULL, 1000000U, &res), 1);
        reap(pid);
}

TEST(not_taken) {
        HookClientResult res;
        uint64_t t0;
        pid_t pid;

        /* No daemon: no socket, or a socket no one listens on. */
        unlink(path);
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", "suspend", NULL, 1000000U, &res), ENOENT);
        ASSERT_TRUE(res.why != NULL);
        close(listen_at());
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", "suspend", NULL, 1000000U, &res), ECONNREFUSED);
        /* Another peer than the one required. */
        pid = serve(SERVE_CLOSE, "suspend -");
        ASSERT_ERR(hook_client_run(path, geteuid() + 1, "/proc", "suspend", NULL, 1000000U, &res), EPERM);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        /* Closed without an ack, or answered otherwise. */
        pid = serve(SERVE_CLOSE, "suspend -");
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", "suspend", NULL, 1000000U, &res), EBADMSG);
        reap(pid);
        pid = serve(SERVE_NACK, "suspend -");
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", "suspend", NULL, 1000000U, &res), EBADMSG);
        reap(pid);
        /* No answer within the ack timeout: the hook gives up, and the daemon's late ack fails. */
        pid = serve(SERVE_SILENT, "suspend -");
        t0 = mono();
        ASSERT_ERR(hook_client_run(path, geteuid(), "/proc", "suspend", NULL, 200000U, &res), ETIMEDOUT);
        ASSERT_TRUE(mono() - t0 >= 200000U);
        reap(pid);
}

TEST(taken_without_answer) {
        HookClientResult res;
        uint64_t t0;
        pid_t pid;

        /* Taken, then the pass ended without "done": no second pass. */
        pid = serve(SERVE_ACK_CLOSE, "suspend -");
        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", "suspend", NULL, 1000000U, &res), 0);
        ASSERT_TRUE(strstr(res.why, "without an answer") != NULL);
        reap(pid);
        pid = serve(SERVE_ACK_BAD, "suspend -");
        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", "suspend", NULL, 1000000U, &res), 0);
        reap(pid);
        /* Past its limit and the margin: the hook goes, and the pass sees it gone. */
        pid = serve(SERVE_ACK_LATE, "suspend -");
        t0 = mono();
        ASSERT_EQ(hook_client_run(path, geteuid(), "/proc", "suspend", NULL, 1000000U, &res), 0);
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

/* A process whose program file is then unlinked, as an upgrade does to a running daemon's: a copy of
 * sleep(1) in dir, run until killed. Returns its PID once it runs the copy; *ret_copy its path. */
static pid_t run_copy(char ret_copy[static 128]) {
        char buf[65536], exe[256];
        int in, out;
        ssize_t n;
        pid_t pid;

        snprintf(ret_copy, 128, "%s/sleep-copy", dir);
        ASSERT_TRUE((in = open("/bin/sleep", O_RDONLY | O_CLOEXEC)) >= 0);
        ASSERT_TRUE((out = open(ret_copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755)) >= 0);
        while ((n = read(in, buf, sizeof buf)) > 0)
                ASSERT_TRUE(write(out, buf, (size_t) n) == n);
        ASSERT_TRUE(n == 0);
        close(in);
        ASSERT_TRUE(close(out) == 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                execl(ret_copy, "sleep", "60", (char *) NULL);
                _exit(127);
        }
        /* Until the exec is done: the link then names the copy. */
        for (int i = 0; i < 5000; i++) {
                char link[64];
                ssize_t k;

                snprintf(link, sizeof link, "/proc/%d/exe", (int) pid);
                k = readlink(link, exe, sizeof exe - 1);
                if (k > 0 && (exe[k] = 0, strcmp(exe, ret_copy) == 0))
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

TEST(exe_unlinked) {
        char copy[128];
        int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        pid_t pid;

        ASSERT_TRUE(proc_fd >= 0);
        ASSERT_EQ(proc_exe_unlinked(proc_fd, 0), 0); /* ourselves */
        pid = run_copy(copy);
        ASSERT_EQ(proc_exe_unlinked(proc_fd, pid), 0);
        ASSERT_TRUE(unlink(copy) == 0);
        ASSERT_EQ(proc_exe_unlinked(proc_fd, pid), 1);
        stop(pid);
        ASSERT_ERR(proc_exe_unlinked(proc_fd, pid), ENOENT);
        ASSERT_ERR(proc_exe_unlinked(proc_fd, -1), EINVAL);
        close(proc_fd);
}

/* Review AH, M1: a daemon whose binary an upgrade replaced since its start is sent no request (its
 * late pass would be the old code): the hook runs the new one. The daemon's exe is looked at below a
 * fixture proc dir whose PID/exe leads to a process running an unlinked copy, to a file still
 * linked, or to nothing. PID is ours: the peer's credentials are those of the listen(2), which
 * serve() makes before its fork. */
TEST(peer_replaced) {
        char proc[128], piddir[160], exe[192], target[64], copy[128], linked[128];
        HookClientResult res;
        pid_t sleeper, pid;

        snprintf(proc, sizeof proc, "%s/proc", dir);
        ASSERT_TRUE(mkdir(proc, 0755) == 0);
        sleeper = run_copy(copy);
        ASSERT_TRUE(unlink(copy) == 0);
        snprintf(target, sizeof target, "/proc/%d/exe", (int) sleeper);
        snprintf(linked, sizeof linked, "%s/linked", dir);
        close(open(linked, O_WRONLY | O_CREAT | O_CLOEXEC, 0755));

        /* Replaced: not asked, -ESTALE, and why. */
        pid = serve(SERVE_NOTHING, "");
        snprintf(piddir, sizeof piddir, "%s/%d", proc, (int) getpid());
        snprintf(exe, sizeof exe, "%s/exe", piddir);
        ASSERT_TRUE(mkdir(piddir, 0755) == 0);
        ASSERT_TRUE(symlink(target, exe) == 0);
        ASSERT_ERR(hook_client_run(path, geteuid(), proc, "suspend", NULL, 1000000U, &res), ESTALE);
        ASSERT_TRUE(strstr(res.why, "replaced") != NULL);
        reap(pid);
        unlink(exe);
        rmdir(piddir);

        /* Not known (no such entry): not asked either. */
        pid = serve(SERVE_NOTHING, "");
        ASSERT_ERR(hook_client_run(path, geteuid(), proc, "suspend", NULL, 1000000U, &res), ENOENT);
        ASSERT_TRUE(strstr(res.why, "cannot tell") != NULL);
        reap(pid);

        /* Still linked: served. */
        pid = serve(SERVE_DONE, "suspend -");
        snprintf(piddir, sizeof piddir, "%s/%d", proc, (int) getpid());
        snprintf(exe, sizeof exe, "%s/exe", piddir);
        ASSERT_TRUE(mkdir(piddir, 0755) == 0);
        ASSERT_TRUE(symlink(linked, exe) == 0);
        ASSERT_EQ(hook_client_run(path, geteuid(), proc, "suspend", NULL, 1000000U, &res), 1);
        reap(pid);
        unlink(exe);
        rmdir(piddir);

        stop(sleeper);
        unlink(linked);
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
        RUN(exe_unlinked);
        RUN(peer_replaced);
        unlink(path);
        rmdir(dir);
        return 0;
}
