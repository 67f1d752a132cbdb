/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <sys/file.h>
#include <sys/sysmacros.h>

#include "lock-holder.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/proc-util.h"
#include "tests.h"

static char test_root[] = "/tmp/test-lock-holder.XXXXXX";

TEST(format_parse) {
        LockHolder h = { .pid = 4242, .start_time = 99, .kind = LOCK_HOLDER_DAEMON, .until = 123456789 }, got;
        char *t = NULL;

        ASSERT_OK(lock_holder_format(&h, &t));
        ASSERT_STREQ(t, "4242 99 daemon 123456789\n");
        ASSERT_OK(lock_holder_parse(t, &got));
        ASSERT_EQ(got.pid, 4242);
        ASSERT_U64_EQ(got.start_time, 99);
        ASSERT_EQ(got.kind, LOCK_HOLDER_DAEMON);
        ASSERT_U64_EQ(got.until, 123456789);
        free(t);
        for (LockHolderKind k = 0; k < _LOCK_HOLDER_KIND_MAX; k++) {
                ASSERT_TRUE(lock_holder_kind_name(k) && lock_holder_kind_describe(k));
                h.kind = k;
                ASSERT_OK(lock_holder_format(&h, &t));
                ASSERT_OK(lock_holder_parse(t, &got));
                ASSERT_EQ(got.kind, k);
                free(t);
        }
        ASSERT_TRUE(!lock_holder_kind_name(_LOCK_HOLDER_KIND_MAX));
        ASSERT_ERR(lock_holder_format(&(LockHolder) { .pid = 0 }, &t), EINVAL);
        ASSERT_ERR(lock_holder_format(&(LockHolder) { .pid = 1, .kind = _LOCK_HOLDER_KIND_MAX }, &t), EINVAL);
}

/* Only the line as written counts: anything else says nothing of the holder. */
TEST(parse_rejects) {
        static const char *const bad[] = {
                "",
                "\n",
                "12 7 manual 5",     /* no newline: cut short */
                "12 7 manual 5\n\n", /* more after it */
                "12 7 manual 5\nx",
                "-1 7 manual 5\n", /* no such PID */
                "0 7 manual 5\n",
                "+12 7 manual 5\n",
                " 12 7 manual 5\n",
                "12 7  manual 5\n",
                "12 7 manual  5\n",
                "12 7 manual -5\n",
                "12 7 manual +5\n",
                "12 7 manual 05\n",
                "12 7 Manual 5\n",
                "12 7 late 5\n", /* the late pass writes none */
                "12 7 unit 5\n", /* nor the unit's pass */
                "12 7 manual\n",
                "12 7 manual 5 6\n",
                "12 manual 5\n", /* no start time (an older mark) */
                "12 -7 manual 5\n",
                "12 07 manual 5\n",
                "12 7 manual 99999999999999999999\n",
                "4294967308 7 manual 5\n", /* a PID past int */
        };
        LockHolder h = { .pid = 77 };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                fprintf(stderr, "  '%s'\n", bad[i]);
                ASSERT_ERR(lock_holder_parse(bad[i], &h), EBADMSG);
                ASSERT_EQ(h.pid, 77);
        }
}

/* fs/locks.c's lines: other kinds of lock, waiters ("->"), other files; major and minor in hex. */
TEST(proc_locks_find) {
        const char *text = "1: POSIX  ADVISORY  WRITE 900 00:1a:77 0 EOF\n"
                           "2: OFDLCK ADVISORY  READ  -1 00:1a:77 0 EOF\n"
                           "3: FLOCK  ADVISORY  WRITE 901 00:1b:77 0 EOF\n"
                           "4: FLOCK  ADVISORY  WRITE 902 fd:01:77 0 EOF\n"
                           "5: FLOCK  ADVISORY  WRITE 903 00:1a:77 0 EOF\n"
                           "5: -> FLOCK  ADVISORY  WRITE 904 00:1a:77 0 EOF\n"
                           "6: LEASE  ACTIVE    READ  905 00:1a:78 0 EOF\n";
        pid_t pid = 0;

        ASSERT_OK(lock_holder_proc_locks_find(text, makedev(0, 0x1a), 77, &pid));
        ASSERT_EQ(pid, 903);
        ASSERT_OK(lock_holder_proc_locks_find(text, makedev(0xfd, 1), 77, &pid));
        ASSERT_EQ(pid, 902);
        ASSERT_ERR(lock_holder_proc_locks_find(text, makedev(0, 0x1a), 78, &pid), ENOENT);
        ASSERT_ERR(lock_holder_proc_locks_find("", makedev(0, 0x1a), 77, &pid), ENOENT);
        ASSERT_ERR(lock_holder_proc_locks_find("1: FLOCK ADVISORY WRITE 9 zz 0 EOF\n", makedev(0, 0x1a), 77,
                                               &pid),
                   EBADMSG);
        ASSERT_ERR(lock_holder_proc_locks_find("garbage\n", makedev(0, 0x1a), 77, &pid), EBADMSG);
        /* no newline at the end */
        ASSERT_OK(lock_holder_proc_locks_find("7: FLOCK  ADVISORY  WRITE 906 00:1a:79 0 EOF",
                                              makedev(0, 0x1a), 79, &pid));
        ASSERT_EQ(pid, 906);
}

/* The kernel's own list decides whose mark counts: ours while we hold the lock; none once we let
 * go, nor one left by another process, nor ours while another holds the lock. */
TEST(read_live) {
        _cleanup_close_ int dir_fd = open(test_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -EBADF;
        usec_t until = now(CLOCK_MONOTONIC) + 3 * USEC_PER_SEC;
        LockHolder h = {};
        pid_t pid, holder;
        int status;

        ASSERT_TRUE(dir_fd >= 0);
        ASSERT_TRUE((fd = openat(dir_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644)) >= 0);
        /* No mark, no lock. */
        ASSERT_ERR(lock_holder_read(dir_fd, "/proc", &h), ENOENT);
        ASSERT_ERR(lock_holder_pid(dir_fd, "/proc", &holder), ENOENT);
        ASSERT_TRUE(flock(fd, LOCK_EX | LOCK_NB) == 0);
        ASSERT_OK(lock_holder_pid(dir_fd, "/proc", &holder));
        ASSERT_EQ(holder, getpid());
        ASSERT_ERR(lock_holder_read(dir_fd, "/proc", &h), ENOENT);
        ASSERT_OK(lock_holder_write(dir_fd, LOCK_HOLDER_MANUAL, until));
        ASSERT_OK(lock_holder_read(dir_fd, "/proc", &h));
        ASSERT_EQ(h.pid, getpid());
        ASSERT_EQ(h.kind, LOCK_HOLDER_MANUAL);
        ASSERT_U64_EQ(h.until, until);
        /* Let go: the mark stays, and says nothing. */
        ASSERT_TRUE(flock(fd, LOCK_UN) == 0);
        ASSERT_ERR(lock_holder_read(dir_fd, "/proc", &h), ENOENT);
        /* Another process holds it, before it writes its mark: ours is not its. */
        int p[2];
        char c;
        ASSERT_TRUE(pipe2(p, O_CLOEXEC) == 0);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int l = openat(dir_fd, "lock", O_RDWR | O_CLOEXEC);

                if (l < 0 || flock(l, LOCK_EX | LOCK_NB) < 0 || write(p[1], "x", 1) != 1)
                        _exit(1);
                pause(); /* until killed */
                _exit(0);
        }
        close(p[1]);
        ASSERT_TRUE(read(p[0], &c, 1) == 1);
        ASSERT_OK(lock_holder_pid(dir_fd, "/proc", &holder));
        ASSERT_EQ(holder, pid);
        ASSERT_ERR(lock_holder_read(dir_fd, "/proc", &h), ENOENT);
        /* ... and once it has, its own. */
        ASSERT_OK(write_file_atomic_at(dir_fd, LOCK_HOLDER_FILE, "1 1 manual 5\n", 13));
        ASSERT_ERR(lock_holder_read(dir_fd, "/proc", &h), ENOENT);
        {
                _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                char line[64];
                uint64_t start;
                int n;

                ASSERT_OK(proc_pid_start_time(proc_fd, pid, &start, NULL));
                /* its PID, another start: a PID used again (review AG, F2) */
                n = snprintf(line, sizeof line, "%d %" PRIu64 " daemon 7\n", (int) pid, start + 1);
                ASSERT_OK(write_file_atomic_at(dir_fd, LOCK_HOLDER_FILE, line, n));
                ASSERT_ERR(lock_holder_read(dir_fd, "/proc", &h), ENOENT);
                n = snprintf(line, sizeof line, "%d %" PRIu64 " daemon 7\n", (int) pid, start);
                ASSERT_OK(write_file_atomic_at(dir_fd, LOCK_HOLDER_FILE, line, n));
        }
        ASSERT_OK(lock_holder_read(dir_fd, "/proc", &h));
        ASSERT_EQ(h.pid, pid);
        ASSERT_EQ(h.kind, LOCK_HOLDER_DAEMON);
        ASSERT_U64_EQ(h.until, 7);
        ASSERT_TRUE(kill(pid, SIGKILL) == 0);
        ASSERT_TRUE(waitpid(pid, &status, 0) == pid);
        close(p[0]);
        /* Dead: its lock went with it. */
        ASSERT_ERR(lock_holder_read(dir_fd, "/proc", &h), ENOENT);
        ASSERT_ERR(lock_holder_pid(dir_fd, "/proc", &holder), ENOENT);
        /* A mark that does not parse, a list that cannot be read. */
        ASSERT_TRUE(flock(fd, LOCK_EX | LOCK_NB) == 0);
        ASSERT_OK(write_file_atomic_at(dir_fd, LOCK_HOLDER_FILE, "junk\n", 5));
        ASSERT_ERR(lock_holder_read(dir_fd, "/proc", &h), EBADMSG);
        ASSERT_OK(lock_holder_write(dir_fd, LOCK_HOLDER_DAEMON, until));
        ASSERT_ERR(lock_holder_read(dir_fd, "/nonexistent", &h), ENOENT);
        ASSERT_OK(lock_holder_read(dir_fd, "/proc", &h));
        ASSERT_EQ(h.kind, LOCK_HOLDER_DAEMON);
        ASSERT_TRUE(unlinkat(dir_fd, LOCK_HOLDER_FILE, 0) == 0);
        ASSERT_TRUE(unlinkat(dir_fd, "lock", 0) == 0);
}

int main(void) {
        ASSERT_TRUE(test_mkdtemp(test_root));
        RUN(format_parse);
        RUN(parse_rejects);
        RUN(proc_locks_find);
        RUN(read_live);
        ASSERT_TRUE(rmdir(test_root) == 0);
        return test_result();
}
