/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * benchtime: run a command, print "<wall_usec> <maxrss_kib> <status>" on stdout.
 *
 *   benchtime [-t TIMEOUT_MS] [-q] -- COMMAND [ARG...]
 *
 * Wall time is CLOCK_MONOTONIC from just before fork() to the moment waitpid() returns (so it
 * includes fork+exec+dynamic loading, like a shell would see). maxrss is the child's peak RSS
 * (getrusage(RUSAGE_CHILDREN), KiB; this helper has no other children). status is the exit code,
 * "sig<N>" or "timeout": with -t the command is sent SIGKILL after TIMEOUT_MS and NOT waited for
 * (a process in uninterruptible sleep cannot die before its device wakes); the wall time printed
 * is then the timeout. -q sends the child's stdout and stderr to /dev/null.
 * Test tool only: it prints, and takes no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

int main(int argc, char **argv) {
        uint64_t timeout_usec = 0, start, end;
        int quiet = 0, c, status = 0;
        struct rusage ru = {};
        pid_t pid;

        while ((c = getopt(argc, argv, "+t:q")) >= 0)
                switch (c) {
                case 't':
                        timeout_usec = strtoull(optarg, NULL, 10) * 1000ULL;
                        break;
                case 'q':
                        quiet = 1;
                        break;
                default:
                        return 2;
                }
        if (optind >= argc) {
                fprintf(stderr, "usage: benchtime [-t TIMEOUT_MS] [-q] -- COMMAND [ARG...]\n");
                return 2;
        }

        start = now_usec();
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                if (quiet) {
                        int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

                        if (fd >= 0) {
                                dup2(fd, 1);
                                dup2(fd, 2);
                        }
                }
                execvp(argv[optind], argv + optind);
                _exit(127);
        }

        for (;;) {
                pid_t r = waitpid(pid, &status, timeout_usec > 0 ? WNOHANG : 0);

                if (r == pid)
                        break;
                if (r < 0 && errno != EINTR)
                        return 1;
                if (timeout_usec > 0 && now_usec() - start >= timeout_usec) {
                        (void) kill(pid, SIGKILL);
                        printf("%llu 0 timeout %d\n", (unsigned long long) timeout_usec, (int) pid);
                        return 0;
                }
                if (r == 0)
                        usleep(200);
        }
        end = now_usec();
        getrusage(RUSAGE_CHILDREN, &ru);

        if (WIFEXITED(status))
                printf("%llu %ld %d\n", (unsigned long long) (end - start), ru.ru_maxrss, WEXITSTATUS(status));
        else
                printf("%llu %ld sig%d\n", (unsigned long long) (end - start), ru.ru_maxrss,
                       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        return 0;
}
