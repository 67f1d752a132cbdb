/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/lock-util.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "writeback.h"

static const char *const settle_result_table[] = {
        [SETTLE_WAIT] = "wait",   [SETTLE_DRAINED] = "drained", [SETTLE_STALLED] = "stalled",
        [SETTLE_QUIET] = "quiet", [SETTLE_CAPPED] = "capped",   [SETTLE_NO_EVIDENCE] = "no-evidence",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(settle_result, SettleResult);

uint64_t settle_slack(unsigned n_cpus, uint64_t page_size) {
        unsigned log2 = 0;

        n_cpus = MAX(n_cpus, 1U);
        for (unsigned v = n_cpus; v > 1; v >>= 1)
                log2++;
        return (uint64_t) n_cpus * 8U * (1U + log2) * page_size;
}

uint64_t settle_slack_local(void) {
        long n_cpus = sysconf(_SC_NPROCESSORS_CONF), page = sysconf(_SC_PAGESIZE);

        /* Twice the bound: CONF counts the CPUs present, the kernel's nr_cpu_ids the possible ones. */
        return 2U * settle_slack(n_cpus > 0 ? (unsigned) n_cpus : 1U, page > 0 ? (uint64_t) page : 4096U);
}

SettleResult settle_step(SettleState *s, SettleMode mode, const BdiStats *st, uint64_t slack, usec_t now,
                         const SettleWindows *w) {
        uint64_t wb, written;

        if (mode == SETTLE_NONE)
                return SETTLE_DRAINED;
        if (!bdi_stats_has(st, BDI_STAT_WRITEBACK) || !bdi_stats_has(st, BDI_STAT_WRITTEN) ||
            (mode == SETTLE_ALL && !bdi_stats_has(st, BDI_STAT_RECLAIMABLE)))
                return SETTLE_NO_EVIDENCE;

        wb = st->value[BDI_STAT_WRITEBACK];
        written = st->value[BDI_STAT_WRITTEN];
        if (!s->seen) {
                /* What is there now: written (in flight, and dirty when the flushers were woken). */
                uint64_t goal = written + wb + (mode == SETTLE_ALL ? st->value[BDI_STAT_RECLAIMABLE] : 0);
                *s = (SettleState) {
                        .started = now, .last_progress = now, .written = written, .goal = goal, .seen = true
                };
        } else if (written != s->written) {
                s->written = written;
                s->last_progress = now;
        }
        if (wb > slack)
                s->saw_writeback = true;

        /* Woken flushers write what was dirty; once they made their pass (writeback seen) what is
         * still dirty is new, and syncfs() writes it. Before they start, dirty data waits for them. */
        if (wb <= slack &&
            (mode == SETTLE_IN_FLIGHT || s->saw_writeback || st->value[BDI_STAT_RECLAIMABLE] <= slack))
                return SETTLE_DRAINED;
        /* A writer that goes on keeps the writeback busy: what was there at the start is enough. */
        if (written + slack >= s->goal)
                return SETTLE_DRAINED;
        if (now - s->started >= w->cap)
                return SETTLE_CAPPED;
        /* Nothing in flight and nothing completing: the flushers are not coming. While data is in
         * flight, completions may come in bursts (a loop device completes a whole request at once),
         * up to the quiet window. */
        if (now - s->last_progress >= (wb <= slack ? w->idle : w->quiet))
                return wb <= slack ? SETTLE_STALLED : SETTLE_QUIET;
        return SETTLE_WAIT;
}

/* The whole of a small procfs/debugfs file from its start, as a string. */
static int pread_text(int fd, char *buf, size_t size) {
        ssize_t n = pread(fd, buf, size - 1, 0);

        if (n < 0)
                return negative_errno();
        buf[n] = 0;
        return 0;
}

static int read_stats(int fd, BdiStats *ret) {
        char buf[4096];
        int r = pread_text(fd, buf, sizeof buf);

        return r < 0 ? r : bdi_stats_parse(buf, ret);
}

usec_t settle_poll_next(usec_t prev_usec) {
        if (prev_usec < SETTLE_POLL_FIRST_USEC)
                return SETTLE_POLL_FIRST_USEC;
        return MIN(prev_usec * 2, (usec_t) SETTLE_POLL_USEC);
}

SettleResult settle_wait(int stats_fd, SettleMode mode, const SettleWindows *w) {
        uint64_t slack = settle_slack_local();
        SettleState s = {};
        usec_t poll = 0;

        if (mode == SETTLE_NONE)
                return SETTLE_DRAINED;
        if (stats_fd < 0)
                return SETTLE_NO_EVIDENCE;
        for (;;) {
                struct timespec ts;
                BdiStats st = {};
                SettleResult r;

                if (read_stats(stats_fd, &st) < 0)
                        return SETTLE_NO_EVIDENCE;
                r = settle_step(&s, mode, &st, slack, now(CLOCK_MONOTONIC), w);
                if (r != SETTLE_WAIT)
                        return r;
                poll = settle_poll_next(poll);
                ts = (struct timespec) { .tv_nsec = (long) (poll * NSEC_PER_USEC) };
                (void) nanosleep(&ts, NULL);
        }
}

static int write_value(int fd, unsigned v) {
        char buf[16];
        int n = snprintf(buf, sizeof buf, "%u\n", v);

        if (pwrite(fd, buf, (size_t) n, 0) != n)
                return errno > 0 ? -errno : -EIO;
        return 0;
}

static int read_value(int fd, unsigned *ret) {
        char buf[32];
        int r = pread_text(fd, buf, sizeof buf);

        if (r < 0)
                return r;
        buf[strcspn(buf, "\n")] = 0;
        if (safe_atou(buf, ret) < 0 || *ret > INT_MAX)
                return -EBADMSG;
        return 0;
}

int writeback_kick(int proc_fd, unsigned *ret_value, unsigned *ret_left) {
        _cleanup_close_ int fd = -EBADF;
        unsigned v, other;
        int r;

        fd = openat(proc_fd, "sys/vm/dirty_writeback_centisecs", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        /* Two runs at once (another --state-dir) must not read each other's "other" value and put
         * that back: one kick at a time; a run that finds the lock taken leaves the waking to the
         * other (which wakes every device's flushers too) without counting on it. */
        r = flock_until(fd, 0, 0);
        if (r < 0)
                return r;
        r = read_value(fd, &v);
        if (r < 0)
                return r;
        if (ret_value)
                *ret_value = v;

        /* The kernel wakes the flushers when the value changes to another non-zero one
         * (dirty_writeback_centisecs_handler()): v + 1 is never 0. */
        other = v < INT_MAX ? v + 1 : v - 1;
        /* The administrator's value is kept as far as a sysctl allows (review I, I2): no signal
         * that can be blocked ends us between the two writes (systemd's stop, ^C; SIGKILL cannot
         * be), and v goes back only over our own value: another writer's (TLP, tuned, sysctl) that
         * reads back in between stays, one that reads as no value of ours either. There is no
         * compare-and-swap on a sysctl: a value written between our read of v and our first write,
         * or between the re-read and the write of v, is still replaced (review K, K2); each window
         * is a few system calls wide. */
        sigset_t all, old;
        (void) sigfillset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, &old);
        r = write_value(fd, other);
        if (r >= 0) {
                unsigned now_v;
                int k = read_value(fd, &now_v);

                if ((k >= 0 && now_v != other) || k == -EBADMSG)
                        r = 1; /* changed since: theirs stays */
        }
        if (r == 0) {
                r = write_value(fd, v);
                if (r < 0)
                        r = write_value(fd, v);
                if (r < 0)
                        r = -EUCLEAN;
        }
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        if (r == -EUCLEAN && ret_left)
                *ret_left = other;
        return r < 0 ? r : 0;
}
