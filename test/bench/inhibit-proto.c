/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A benchmark prototype, not the product: what suspend-sync's main pass would cost run by a
 * resident process on logind's delay lock instead of by a unit on sleep.target
 * (docs/PERFORMANCE.md, "A resident process on logind's delay lock"; test/bench/suspend-e2e
 * contender "lockpass").
 *
 *   inhibit-proto [--timeout SEC] -- COMMAND [ARG...]
 *
 * Takes logind's "delay" inhibitor lock for "sleep"; on PrepareForSleep(true) runs COMMAND (its
 * environment without INVOCATION_ID, as a pass run in-process by a daemon would see no unit of its
 * own), waits for it at most SEC seconds (default 4: under logind's InhibitDelayMaxSec=, 5 s by
 * default; a COMMAND still running then is killed, and its exit is not waited for), and releases
 * the lock; on PrepareForSleep(false) takes it again. Each step is logged to stderr (the journal,
 * run as a service) with CLOCK_MONOTONIC times. Exits on SIGTERM/SIGINT or when the bus goes away.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

typedef struct {
        sd_bus *bus;
        int lock_fd;
        char **argv;
        int timeout_ms;
} Proto;

static double mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int take_lock(Proto *p) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int fd = -1, r;

        r = sd_bus_call_method(p->bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                               "org.freedesktop.login1.Manager", "Inhibit", &error, &reply, "ssss",
                               "sleep", "suspend-sync-bench", "benchmark prototype: main pass on the delay lock",
                               "delay");
        if (r < 0) {
                fprintf(stderr, "inhibit-proto: Inhibit failed: %s\n", error.message ?: strerror(-r));
                sd_bus_error_free(&error);
                return r;
        }
        r = sd_bus_message_read(reply, "h", &fd);
        if (r >= 0) {
                p->lock_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                r = p->lock_fd < 0 ? -errno : 0;
        }
        sd_bus_message_unref(reply);
        if (r >= 0)
                fprintf(stderr, "inhibit-proto: %.3f lock taken\n", mono_ms());
        return r;
}

/* Runs the pass; returns once it exited or its timeout passed. */
static void run_pass(Proto *p) {
        double t0 = mono_ms();
        int pidfd, status = -1;
        pid_t pid;

        while (waitpid(-1, NULL, WNOHANG) > 0) /* a pass killed in an earlier sleep */
                ;
        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "inhibit-proto: fork: %m\n");
                return;
        }
        if (pid == 0) {
                sigset_t mask;

                sigemptyset(&mask); /* the pass gets SIGTERM like any process: not blocked as here */
                sigprocmask(SIG_SETMASK, &mask, NULL);
                unsetenv("INVOCATION_ID");
                execv(p->argv[0], p->argv);
                _exit(127);
        }
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd >= 0) {
                struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
                if (poll(&pfd, 1, p->timeout_ms) == 0) {
                        kill(pid, SIGKILL);
                        fprintf(stderr, "inhibit-proto: %.3f pass killed after %d ms\n", mono_ms(), p->timeout_ms);
                        close(pidfd);
                        return; /* not waited for: it may be stuck on a device; reaped later */
                }
                close(pidfd);
        } else /* no pidfd (before Linux 5.3): look every 10 ms */
                for (int waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited += 10) {
                        if (waited >= p->timeout_ms) {
                                kill(pid, SIGKILL);
                                fprintf(stderr, "inhibit-proto: %.3f pass killed after %d ms\n", mono_ms(),
                                        p->timeout_ms);
                                return;
                        }
                        usleep(10 * 1000);
                }
        (void) waitpid(pid, &status, 0);
        fprintf(stderr, "inhibit-proto: %.3f pass ended (status %d) after %.3f ms\n", mono_ms(), status,
                mono_ms() - t0);
}

static int on_prepare(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Proto *p = userdata;
        int start, r;

        (void) ret_error;
        r = sd_bus_message_read(m, "b", &start);
        if (r < 0)
                return 0;
        fprintf(stderr, "inhibit-proto: %.3f PrepareForSleep(%s)\n", mono_ms(), start ? "true" : "false");
        if (start) {
                run_pass(p);
                if (p->lock_fd >= 0) {
                        close(p->lock_fd);
                        p->lock_fd = -1;
                        fprintf(stderr, "inhibit-proto: %.3f lock released\n", mono_ms());
                }
        } else if (p->lock_fd < 0 && take_lock(p) < 0)
                /* No lock, no use: exit, so that the harness (suspend-e2e lock_holder) starts it anew. */
                (void) sd_event_exit(sd_bus_get_event(p->bus), 1);
        return 0;
}

int main(int argc, char **argv) {
        Proto p = { .lock_fd = -1, .timeout_ms = 4000 };
        sd_event *event = NULL;
        sigset_t mask;
        int i = 1, r;

        if (i + 1 < argc && strcmp(argv[i], "--timeout") == 0) {
                p.timeout_ms = atoi(argv[i + 1]) * 1000;
                i += 2;
        }
        if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc || p.timeout_ms <= 0) {
                fprintf(stderr, "usage: inhibit-proto [--timeout SEC] -- COMMAND [ARG...]\n");
                return 2;
        }
        p.argv = argv + i + 1;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        if ((r = sd_event_default(&event)) < 0 || (r = sd_bus_open_system(&p.bus)) < 0 ||
            (r = sd_bus_attach_event(p.bus, event, SD_EVENT_PRIORITY_NORMAL)) < 0 ||
            (r = sd_bus_match_signal(p.bus, NULL, "org.freedesktop.login1", "/org/freedesktop/login1",
                                     "org.freedesktop.login1.Manager", "PrepareForSleep", on_prepare, &p)) < 0 ||
            (r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL)) < 0 ||
            (r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL)) < 0 || (r = take_lock(&p)) < 0) {
                fprintf(stderr, "inhibit-proto: %s\n", strerror(-r));
                return 1;
        }
        r = sd_event_loop(event);
        sd_bus_flush_close_unref(p.bus);
        sd_event_unref(event);
        return r < 0 ? 1 : 0;
}
