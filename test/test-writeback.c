/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/macro.h"
#include "tests.h"
#include "writeback.h"

/*
 * Writeback first: the wait's decision step on hand-made counter samples (each case with a control
 * that flips one input), the counters' error bound, and the flusher kick on a fixture proc tree.
 */

#define KB 1024U
#define SLACK (128U * KB)
#define STALL 100U
#define QUIET 300U
#define CAP 5000U

static const SettleWindows windows = { .idle = STALL, .quiet = QUIET, .cap = CAP };

static BdiStats stats(uint64_t writeback, uint64_t reclaimable, uint64_t written) {
        BdiStats s = {};

        s.value[BDI_STAT_WRITEBACK] = writeback;
        s.value[BDI_STAT_RECLAIMABLE] = reclaimable;
        s.value[BDI_STAT_WRITTEN] = written;
        s.present = (1U << BDI_STAT_WRITEBACK) | (1U << BDI_STAT_RECLAIMABLE) | (1U << BDI_STAT_WRITTEN);
        return s;
}

static SettleResult step(SettleState *s, SettleMode m, uint64_t wb, uint64_t dirty, uint64_t written,
                         usec_t t) {
        BdiStats st = stats(wb, dirty, written);
        return settle_step(s, m, &st, SLACK, t, &windows);
}

TEST(slack) {
        /* wb_stat_error(): nr_cpu_ids * 8 * (1 + ilog2(nr_cpu_ids)) pages */
        ASSERT_U64_EQ(settle_slack(1, 4096), 8U * 4096U);
        ASSERT_U64_EQ(settle_slack(2, 4096), 2U * 16U * 4096U);
        ASSERT_U64_EQ(settle_slack(3, 4096), 3U * 16U * 4096U);
        ASSERT_U64_EQ(settle_slack(64, 4096), 64U * 56U * 4096U);
        ASSERT_U64_EQ(settle_slack(0, 4096), 8U * 4096U);
        ASSERT_TRUE(settle_slack_local() >= settle_slack(1, 4096));
}

TEST(in_flight) {
        SettleState s = {};

        /* data in flight: wait while it completes, in bursts or not */
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000, 0), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000, QUIET - 1),
                  SETTLE_WAIT); /* a burst to come */
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 2048 * KB, 0, 3000, QUIET + 1), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, SLACK, 0, 5000, QUIET + 3), SETTLE_DRAINED);

        /* control: nothing in flight at the start, dirty data or not: at once */
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 0, 64 * 1024 * KB, 1000, 0), SETTLE_DRAINED);
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, SLACK + 1, 0, 1000, 0), SETTLE_WAIT);

        /* in flight, nothing completing for the quiet window (a stuck device): syncfs() now, so that
         * the worker is in it before the executor gives up on it */
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000, 10), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000, 10 + STALL), SETTLE_WAIT); /* not idle */
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000, 10 + QUIET), SETTLE_QUIET);

        /* a writer that goes on keeps data in flight: what was there at the start is enough */
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000, 0), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000 + 2048 * KB, 100), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000 + 4096 * KB - SLACK, 200), SETTLE_DRAINED);
        /* control: one byte less than that, within the counters' error, is not enough */
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000, 0), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000 + 4096 * KB - SLACK - 1, 200), SETTLE_WAIT);
        /* woken flushers: the dirty data counts too */
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_ALL, 1024 * KB, 4096 * KB, 1000, 0), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 4096 * KB, 4096 * KB, 1000 + 1024 * KB, 100), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 4096 * KB, 4096 * KB, 1000 + 5120 * KB, 200), SETTLE_DRAINED);

        /* bounded: completing for ever (a writer that never stops) ends at the cap */
        s = (SettleState) {};
        for (usec_t t = 0; t < CAP; t += 100)
                ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000 + t, t), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_IN_FLIGHT, 4096 * KB, 0, 1000 + CAP, CAP), SETTLE_CAPPED);
}

TEST(all) {
        SettleState s = {};

        /* the flushers were woken: dirty data waits for them to start, then for the writeback */
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 4096 * KB, 1000, 0), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 4096 * KB, 1000, STALL - 1), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 4096 * KB, 0, 1000, STALL + 5), SETTLE_WAIT); /* started */
        ASSERT_EQ(step(&s, SETTLE_ALL, 1024 * KB, 0, 4000, STALL + 400), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 0, 5000, STALL + 500), SETTLE_DRAINED);

        /* once the flushers made their pass, what is still dirty is new: syncfs() writes it */
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_ALL, 4096 * KB, 512 * KB, 1000, 0), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 512 * KB, 5000, 300), SETTLE_DRAINED);

        /* control: the flushers never come (nothing in flight, nothing completing) */
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 4096 * KB, 1000, 0), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 4096 * KB, 1000, STALL), SETTLE_STALLED);
        /* control: the same, but pages complete (another writer's): not stalled */
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 4096 * KB, 1000, 0), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 4096 * KB, 1100, STALL - 10), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 4096 * KB, 1100, STALL + 10), SETTLE_WAIT);
        ASSERT_EQ(step(&s, SETTLE_ALL, 0, 4096 * KB, 1100, 2 * STALL - 10), SETTLE_STALLED);
        /* control: within the counters' error is nothing */
        s = (SettleState) {};
        ASSERT_EQ(step(&s, SETTLE_ALL, SLACK, SLACK, 1000, 0), SETTLE_DRAINED);
}

TEST(no_evidence) {
        SettleState s = {};
        BdiStats st = stats(4096 * KB, 0, 0);

        st.present &= ~(1U << BDI_STAT_WRITEBACK);
        ASSERT_EQ(settle_step(&s, SETTLE_IN_FLIGHT, &st, SLACK, 0, &windows), SETTLE_NO_EVIDENCE);
        st = stats(0, 4096 * KB, 0);
        st.present &= ~(1U << BDI_STAT_RECLAIMABLE);
        ASSERT_EQ(settle_step(&s, SETTLE_ALL, &st, SLACK, 0, &windows), SETTLE_NO_EVIDENCE);
        /* control: in-flight mode does not need the dirty count */
        ASSERT_EQ(settle_step(&s, SETTLE_IN_FLIGHT, &st, SLACK, 0, &windows), SETTLE_DRAINED);
        ASSERT_EQ(settle_step(&s, SETTLE_NONE, &st, SLACK, 0, &windows), SETTLE_DRAINED);
        ASSERT_EQ(settle_wait(-EBADF, SETTLE_IN_FLIGHT, &windows), SETTLE_NO_EVIDENCE);
        ASSERT_STREQ(settle_result_to_string(SETTLE_STALLED), "stalled");
}

TEST(poll) {
        usec_t t = 0, sum = 0, v = 0;
        unsigned n = 0;

        /* 250 us, 500 us, 1 ms, then every 2 ms: the first polls come sooner, a long wait polls as
         * before. */
        ASSERT_EQ(settle_poll_next(0), 250U);
        ASSERT_EQ(settle_poll_next(250), 500U);
        ASSERT_EQ(settle_poll_next(500), 1000U);
        ASSERT_EQ(settle_poll_next(1000), 2000U);
        ASSERT_EQ(settle_poll_next(2000), 2000U);
        ASSERT_EQ(settle_poll_next(1), 250U);
        /* Never longer than before, never faster than the first. */
        for (; n < 100; n++) {
                v = settle_poll_next(v);
                ASSERT_TRUE(v >= SETTLE_POLL_FIRST_USEC && v <= SETTLE_POLL_USEC);
                sum += v;
                if (n < 4)
                        t = sum;
        }
        ASSERT_EQ(t, 250U + 500U + 1000U + 2000U);
        ASSERT_EQ(sum, t + 96U * 2000U);
}

/* A proc tree with sys/vm/dirty_writeback_centisecs holding text; returns the proc dir fd. */
static int proc_tree(char *dir, const char *text) {
        char path[512];
        FILE *f;
        int fd;

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/sys", dir);
        ASSERT_OK(mkdir(path, 0755));
        snprintf(path, sizeof path, "%s/sys/vm", dir);
        ASSERT_OK(mkdir(path, 0755));
        if (text) {
                snprintf(path, sizeof path, "%s/sys/vm/dirty_writeback_centisecs", dir);
                f = fopen(path, "we");
                ASSERT_TRUE(f != NULL);
                fputs(text, f);
                fclose(f);
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        return fd;
}

static void read_back(const char *dir, char *buf, size_t size) {
        char path[512];
        FILE *f;
        size_t n;

        snprintf(path, sizeof path, "%s/sys/vm/dirty_writeback_centisecs", dir);
        f = fopen(path, "re");
        ASSERT_TRUE(f != NULL);
        n = fread(buf, 1, size - 1, f);
        buf[n] = 0;
        fclose(f);
}

static void rm_tree(const char *dir) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        ASSERT_EQ(system(cmd), 0);
}

TEST(kick) {
        char dir[] = "/tmp/test-writeback.XXXXXX", buf[64];
        unsigned v = 0, left = 0;
        int fd = proc_tree(dir, "500\n");

        /* the value is put back: the kernel's wake-up is the change in between */
        ASSERT_OK(writeback_kick(fd, &v, &left));
        ASSERT_EQ(v, 500U);
        read_back(dir, buf, sizeof buf);
        ASSERT_STREQ(buf, "500\n");

        /* control: another run holds the lock: nothing is written */
        {
                char path[512];
                int other;

                snprintf(path, sizeof path, "%s/sys/vm/dirty_writeback_centisecs", dir);
                other = open(path, O_RDWR | O_CLOEXEC);
                ASSERT_TRUE(other >= 0);
                ASSERT_OK(flock(other, LOCK_EX));
                ASSERT_ERR(writeback_kick(fd, &v, &left), EBUSY);
                close(other);
                ASSERT_OK(writeback_kick(fd, &v, &left));
        }
        close(fd);
        rm_tree(dir);

        /* 0 (periodic writeback off) stays 0 */
        strcpy(dir, "/tmp/test-writeback.XXXXXX");
        fd = proc_tree(dir, "0\n");
        ASSERT_OK(writeback_kick(fd, &v, &left));
        ASSERT_EQ(v, 0U);
        read_back(dir, buf, sizeof buf);
        ASSERT_STREQ(buf, "0\n");
        close(fd);
        rm_tree(dir);

        /* control: a value that is not a number is never overwritten */
        strcpy(dir, "/tmp/test-writeback.XXXXXX");
        fd = proc_tree(dir, "5oo\n");
        ASSERT_ERR(writeback_kick(fd, &v, &left), EBADMSG);
        read_back(dir, buf, sizeof buf);
        ASSERT_STREQ(buf, "5oo\n");
        close(fd);
        rm_tree(dir);

        /* control: no such file (a fixture root, an old kernel) */
        strcpy(dir, "/tmp/test-writeback.XXXXXX");
        fd = proc_tree(dir, NULL);
        ASSERT_ERR(writeback_kick(fd, &v, &left), ENOENT);
        close(fd);
        rm_tree(dir);
}

/* Between the kick's two writes (linked with --wrap=pwrite64, test/meson.build): another writer, or
 * a signal. */
ssize_t __real_pwrite64(int fd, const void *buf, size_t n, off_t off);
ssize_t __wrap_pwrite64(int fd, const void *buf, size_t n, off_t off);
static enum { BETWEEN_NOTHING, BETWEEN_WRITER, BETWEEN_NEGATIVE, BETWEEN_SIGNAL } between;
static unsigned kick_writes;
static char value_path[512];
static char at_signal[64];

ssize_t __wrap_pwrite64(int fd, const void *buf, size_t n, off_t off) {
        ssize_t r = __real_pwrite64(fd, buf, n, off);

        if (++kick_writes == 1 && (between == BETWEEN_WRITER || between == BETWEEN_NEGATIVE)) {
                const char *value = between == BETWEEN_WRITER ? "1500\n" : "-1\n";
                _cleanup_close_ int o = open(value_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
                ASSERT_TRUE(o >= 0 && write(o, value, strlen(value)) == (ssize_t) strlen(value));
        } else if (kick_writes == 1 && between == BETWEEN_SIGNAL)
                ASSERT_OK(raise(SIGUSR1));
        return r;
}

static void on_usr1(int sig) {
        int o = open(value_path, O_RDONLY | O_CLOEXEC);
        ssize_t n = o < 0 ? -1 : read(o, at_signal, sizeof at_signal - 1);

        at_signal[n < 0 ? 0 : n] = 0;
        if (o >= 0)
                close(o);
        (void) sig;
}

/* Review I, I2: the administrator's value is never lost to a kick. */
TEST(kick_keeps_the_value) {
        char dir[] = "/tmp/test-writeback.XXXXXX", buf[64];
        unsigned v = 0, left = 0;
        int fd = proc_tree(dir, "500\n");
        struct sigaction sa = { .sa_handler = on_usr1 }, old;

        snprintf(value_path, sizeof value_path, "%s/sys/vm/dirty_writeback_centisecs", dir);

        /* another writer (TLP, tuned, sysctl) between the two writes: its value stays */
        between = BETWEEN_WRITER;
        kick_writes = 0;
        ASSERT_OK(writeback_kick(fd, &v, &left));
        ASSERT_EQ(v, 500U);
        ASSERT_EQ(kick_writes, 1U);
        read_back(dir, buf, sizeof buf);
        ASSERT_STREQ(buf, "1500\n");

        /* one that is no value of ours (proc_dointvec takes a negative number) stays too (review K) */
        between = BETWEEN_NEGATIVE;
        kick_writes = 0;
        ASSERT_OK(writeback_kick(fd, &v, &left));
        read_back(dir, buf, sizeof buf);
        ASSERT_STREQ(buf, "-1\n");
        ASSERT_OK(write_file_atomic_at(AT_FDCWD, value_path, "1500\n", 5));

        /* a signal between them (systemd's stop) is taken only once the value is back */
        ASSERT_OK(sigaction(SIGUSR1, &sa, &old));
        between = BETWEEN_SIGNAL;
        kick_writes = 0;
        at_signal[0] = 0;
        ASSERT_OK(writeback_kick(fd, &v, &left));
        ASSERT_EQ(v, 1500U);
        ASSERT_STREQ(at_signal, "1500\n");
        ASSERT_OK(sigaction(SIGUSR1, &old, NULL));

        between = BETWEEN_NOTHING;
        close(fd);
        rm_tree(dir);
}

int main(void) {
        RUN(slack);
        RUN(in_flight);
        RUN(all);
        RUN(no_evidence);
        RUN(poll);
        RUN(kick);
        RUN(kick_keeps_the_value);
        return 0;
}
