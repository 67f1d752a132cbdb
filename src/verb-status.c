/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * `status`: the last sleep cycle at a glance — both passes, the sleep action, when the machine
 * slept and woke, what the kernel's own sync did — then its mounts, slowest first, skipped ones
 * folded unless --all. Without a sleep cycle, the last run. --json: the records as state writes
 * them, plus the cycle.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "cycle.h"
#include "handover.h"
#include "kmsg.h"
#include "last-resume.h"
#include "lock-holder.h"
#include "log.h"
#include "meminfo.h"
#include "shared/fileio.h"
#include "shared/format-util.h"
#include "shared/json-util.h"
#include "shared/parse-util.h"
#include "shared/proc-util.h"
#include "shared/sort-util.h"
#include "state.h"
#include "verbs.h"

typedef struct StatusFacts {
        const Meminfo *mi; /* NULL: no meminfo */
        usec_t now;
        LastResume resume;    /* the last resume; realtime 0: unknown */
        bool state_read_only; /* the state directory is on a read-only mount: no pass records there */
        KernelSync ksync;
        int ksync_error;   /* reading the kernel log: 0 or negative errno */
        Handover handover; /* live stuck workers */
        pid_t lock_pid;    /* who holds the state lock now (/proc/locks); 0: nobody, or unknown */
        bool has_holder;   /* ... and its mark (lock-holder.h) */
        LockHolder holder;
        usec_t mono_now; /* CLOCK_MONOTONIC, for the holder's deadline */
} StatusFacts;

/* One row of the mount table: a mount of one pass. */
typedef struct Row {
        const RunMount *m;
        const char *pass;
} Row;

static int cmp_row(const Row *a, const Row *b) {
        bool sa = streq(a->m->action, "sync"), sb = streq(b->m->action, "sync");

        if (sa != sb)
                return sa ? -1 : 1;
        return CMP(b->m->duration, a->m->duration); /* slowest first */
}

/* The worker is still in the kernel: listed as stuck in the handover, same process (start time). */
static bool worker_still_stuck(const StatusFacts *f, int proc_fd, pid_t pid) {
        for (size_t i = 0; i < f->handover.n_stuck; i++) {
                uint64_t start;

                if (f->handover.stuck[i].pid == pid)
                        return proc_fd >= 0 && proc_pid_start_time(proc_fd, pid, &start, NULL) >= 0 &&
                               start == f->handover.stuck[i].start_time;
        }
        return false;
}

static const char *outcome_color(const RunMount *m) {
        if (STR_IN_SET(m->outcome, "timeout", "error"))
                return ANSI_RED;
        return streq(m->outcome, "skipped") ? ANSI_GREY : NULL;
}

static int add_row(Table *t, const Row *row, const StatusFacts *f, int proc_fd, bool with_pass) {
        const RunMount *m = row->m;
        char d[FORMAT_TIMESPAN_MAX], err[96] = "-";
        const char *cells[6];
        _cleanup_free_ char *where = NULL;
        size_t k = 0;
        bool stuck = false;

        if (m->namespace_ino > 0 &&
            asprintf(&where, "%s (mnt:[%llu])", m->mount_point, (unsigned long long) m->namespace_ino) < 0)
                return -ENOMEM;
        if (m->error)
                snprintf(err, sizeof err, "%s", strerror(m->error));
        else if (m->abandoned_pid) {
                stuck = worker_still_stuck(f, proc_fd, m->abandoned_pid);
                snprintf(err, sizeof err, "worker %d %s", m->abandoned_pid,
                         stuck ? "still stuck" : "abandoned");
        }
        cells[k++] = where ?: m->mount_point;
        if (with_pass)
                cells[k++] = row->pass;
        cells[k++] = m->outcome;
        /* "-" for a mount not synced and a job never started */
        cells[k++] = streq(m->action, "sync") && (m->duration > 0 || streq(m->outcome, "synced"))
                             ? format_timespan(d, sizeof d, m->duration)
                             : "-";
        cells[k++] = err;
        cells[k++] = m->reason;
        if (table_add_row(t, cells) < 0)
                return -ENOMEM;
        if (outcome_color(m))
                (void) table_set_color(t, with_pass ? 2 : 1, outcome_color(m));
        if (stuck)
                (void) table_set_color(t, with_pass ? 4 : 3, ANSI_RED);
        return 0;
}

/* The mounts of the passes, slowest first; skipped ones only with --all (counted otherwise). */
static int print_mounts(const Args *a, const RunRecord *const *passes, const char *const *names,
                        size_t n_passes, const StatusFacts *f, int proc_fd) {
        static const char *const headers_pass[] = { "MOUNT", "PASS", "OUTCOME", "TIME", "ERROR", "REASON" };
        static const char *const headers[] = { "MOUNT", "OUTCOME", "TIME", "ERROR", "REASON" };
        bool with_pass = n_passes > 1;
        _cleanup_(table_freep) Table *t = with_pass ? table_new(ELEMENTSOF(headers_pass), headers_pass)
                                                    : table_new(ELEMENTSOF(headers), headers);
        _cleanup_free_ Row *rows = NULL;
        size_t n = 0, n_rows = 0, folded = 0;
        int r;

        for (size_t p = 0; p < n_passes; p++)
                n += passes[p]->n_mounts;
        rows = calloc(MAX(n, 1U), sizeof(Row));
        if (!t || !rows)
                return log_oom();
        for (size_t p = 0; p < n_passes; p++)
                for (size_t i = 0; i < passes[p]->n_mounts; i++)
                        rows[n_rows++] = (Row) { &passes[p]->mounts[i], names[p] };
        typesafe_qsort(rows, n_rows, cmp_row);
        (void) table_set_ellipsize(t, 0);
        (void) table_set_ellipsize(t, with_pass ? 5 : 4);

        for (size_t i = 0; i < n_rows; i++) {
                if (!a->all && streq(rows[i].m->action, "skip")) {
                        folded++;
                        continue;
                }
                if (add_row(t, &rows[i], f, proc_fd, with_pass) < 0)
                        return log_oom();
        }
        r = table_print_styled(t, stdout, a->legend, &a->style);
        if (r < 0)
                return log_error_errno(r, "Failed to write the table: %m");
        if (folded > 0)
                printf("%s%zu skipped mount%s not shown (pseudo filesystems, read-only and already synced "
                       "superblocks); --all shows them.%s\n",
                       a->style.colors ? ANSI_GREY : "", folded, folded == 1 ? "" : "s",
                       a->style.colors ? ANSI_NORMAL : "");
        return 0;
}

static void print_pass(const char *label, const RunRecord *r) {
        char when[FORMAT_TIMESTAMP_MAX], dur[FORMAT_TIMESPAN_MAX], dl[FORMAT_TIMESPAN_MAX];
        size_t synced = 0, deferred = 0, tried = 0;

        for (size_t i = 0; i < r->n_mounts; i++)
                if (streq(r->mounts[i].action, "sync")) {
                        tried++;
                        synced += streq(r->mounts[i].outcome, "synced");
                        deferred += streq(r->mounts[i].outcome, "deferred");
                }
        printf("%12s: %s, took %s, result %s (deadline %s), %zu of %zu mounts synced", label,
               format_timestamp(when, sizeof when, r->started_realtime),
               format_timespan(dur, sizeof dur, r->duration), r->result,
               format_timespan(dl, sizeof dl, r->deadline), synced, tried);
        if (deferred > 0)
                printf(", %zu left to the late pass", deferred);
        putchar('\n');
        if (r->n_mounts_omitted > 0)
                printf("%12s  %zu more mount%s not in the record (its size bound; skipped ones are left out "
                       "first): the counts are of those listed\n",
                       "", r->n_mounts_omitted, r->n_mounts_omitted == 1 ? "" : "s");
        if (r->has_complete && !r->complete) {
                printf("%12s  incomplete view: not every superblock the kernel's own sync writes was reached:\n",
                       "");
                for (size_t i = 0; i < r->n_incomplete_why; i++) {
                        _cleanup_free_ char *e = escape_for_display(r->incomplete_why[i]);

                        printf("%12s    - %s\n", "", e ?: "(out of memory)");
                }
        }
}

/* The cycle's unit's pass has no late pass recorded after it, and was not to have one, yet the post
 * hook recorded a resume after it: systemd-sleep ran its hooks, ours among them, so the pre phase
 * ran too, and its late pass left no record (killed mid-pass, refused: the state lock held, or its
 * record not written; review AW, L3). */
static bool late_pass_unrecorded(const SleepCycle *c, const StatusFacts *f) {
        return !c->late && c->unit && !c->unit->late_left_out && f->resume.by_hook &&
               last_resume_after(&f->resume, c->unit->boot_id, c->unit->started_realtime,
                                 c->unit->started_boottime, c->unit->duration);
}

/* Whether the resume recorded came after the cycle's late pass (last_resume_after(): by
 * CLOCK_BOOTTIME within one boot, review BB, L2). */
static bool resumed_after_late(const SleepCycle *c, const StatusFacts *f) {
        return c->late && last_resume_after(&f->resume, c->late->boot_id, c->late->started_realtime,
                                            c->late->started_boottime, c->late->duration);
}

/* What the kernel counted between the cycle's late pass and the resume after it
 * (/sys/power/suspend_stats, suspend-stats.h): suspends that happened (entered), attempts that failed
 * (failed). False when not known (no counts at either end, no resume after the late pass, or counts
 * that went back: another boot's), and when they say nothing of this sleep: a hibernation is counted
 * in neither, so for any action but "suspend" (hibernate, hybrid-sleep, whose suspend is not
 * pm_suspend()'s, and suspend-then-hibernate, whose late passes do not tell its two phases apart)
 * counts that did not move are no proof that the machine did not sleep. */
static bool cycle_kernel_suspends(const SleepCycle *c, const StatusFacts *f, uint64_t *ret_entered,
                                  uint64_t *ret_failed) {
        const SuspendStats *st = &f->resume.stats;

        if (!resumed_after_late(c, f) || !streq_ptr(c->late->sleep_action, "suspend") ||
            !c->late->suspend_counts_known || st->success == SUSPEND_STATS_UNKNOWN ||
            st->fail == SUSPEND_STATS_UNKNOWN || st->success < c->late->suspend_success ||
            st->fail < c->late->suspend_fail)
                return false;
        *ret_entered = st->success - c->late->suspend_success;
        *ret_failed = st->fail - c->late->suspend_fail;
        return true;
}

/* How long the machine was suspended between the cycle's late pass and the resume recorded after
 * it, as the kernel's clocks count it: both record how long this boot had been suspended
 * (CLOCK_BOOTTIME less CLOCK_MONOTONIC). 0: none counted, which a failed or refused state write
 * gives, and so does a sleep these clocks do not count (review BB, M1: s2idle where no idle state
 * stops timekeeping, a VM's say; a suspend under the RTC's second); a count above 0 is a sleep.
 * USEC_INFINITY: not known (no late pass, no resume after it, or records older than the counts). */
static usec_t cycle_suspended(const SleepCycle *c, const StatusFacts *f) {
        usec_t before, after;

        if (!resumed_after_late(c, f) || c->late->started_suspended == USEC_INFINITY ||
            f->resume.suspended == USEC_INFINITY)
                return USEC_INFINITY;
        before = c->late->started_suspended;
        after = f->resume.suspended;
        /* Each count is two clock reads apart (microseconds): under a millisecond either way is none. */
        if (after < before)
                return before - after < USEC_PER_MSEC ? 0 : USEC_INFINITY;
        return after - before < USEC_PER_MSEC ? 0 : after - before;
}

static void print_kernel_sync(const SleepCycle *c, const StatusFacts *f) {
        char d[FORMAT_TIMESPAN_MAX];

        if (!c->late && c->unit && c->unit->late_left_out)
                printf("%12s: left on, no late pass (KeepCheapSync=yes: the unit's pass synced everything, "
                       "the kernel's sync was to take about %s)\n",
                       "Kernel sync", format_timespan(d, sizeof d, c->unit->kernel_sync_estimate));
        else if (!c->late && !late_pass_unrecorded(c, f))
                printf("%12s: no late pass: the sleep did not go ahead, or the hook did not run\n",
                       "Kernel sync");
        else if (f->ksync_error == -EACCES || f->ksync_error == -EPERM)
                printf("%12s: the kernel log is not readable (needs root, dmesg_restrict)\n", "Kernel sync");
        else if (f->ksync_error < 0)
                printf("%12s: no kernel log (%s)\n", "Kernel sync", strerror(-f->ksync_error));
        else if (f->ksync.state == KERNEL_SYNC_DONE)
                printf("%12s: %s (kernel log, last %s)\n", "Kernel sync",
                       format_timespan(d, sizeof d, f->ksync.usec), f->ksync.action);
        else if (f->ksync.state == KERNEL_SYNC_SKIPPED)
                printf("%12s: did not run (sync_on_suspend was 0 in the last %s)\n", "Kernel sync",
                       f->ksync.action);
        else
                printf("%12s: not in the kernel log (no sleep since boot, or the log has rotated)\n",
                       "Kernel sync");
}

/* The kernel's last failure to suspend as the post hook recorded it: "EBUSY; last recorded failure,
 * perhaps an earlier attempt's: step suspend, device usb1", each part only when known. pm_suspend()
 * records the errno of every failed attempt, but a step and a device only where one failed: none for
 * its lock held (-EBUSY), a wakeup event, or a state it cannot enter, whose step and device are an
 * earlier failure's, of a resume too (review BD, M3). */
static const char *format_suspend_failure(const SuspendStats *st, char *buf, size_t size) {
        const char *e = st->last_failed_errno < 0 ? errno_to_name(-st->last_failed_errno) : NULL;
        bool step = st->last_failed_step[0], dev = st->last_failed_dev[0];

        (void) snprintf(buf, size, "%s%s%s%s%s%s%s", e ?: "error not known",
                        step || dev ? "; last recorded failure, perhaps an earlier attempt's: " : "",
                        step ? "step " : "", st->last_failed_step, step && dev ? ", " : "",
                        dev ? "device " : "", st->last_failed_dev);
        return buf;
}

/* Whether and how long the machine slept after the late pass: the kernel's suspend counts say
 * whether it did (review BB, M1), the clocks how long; without them the wall clock, hedged (review
 * AW, L3: the post hook runs all the same when the state write fails). */
static void print_slept(const SleepCycle *c, const StatusFacts *f) {
        usec_t slept = usec_add(c->late->started_realtime, c->late->duration),
               suspended = cycle_suspended(c, f);
        char t1[FORMAT_TIMESTAMP_MAX], t2[FORMAT_TIMESTAMP_MAX], d[FORMAT_TIMESPAN_MAX], why[256];
        uint64_t entered = 0, failed = 0;
        bool counted = cycle_kernel_suspends(c, f, &entered, &failed);

        if (!resumed_after_late(c, f)) {
                printf("%12s: from %s; no resume recorded after it\n", "Slept",
                       format_timestamp(t1, sizeof t1, slept));
                return;
        }
        format_timestamp(t1, sizeof t1, slept);
        format_timestamp(t2, sizeof t2, f->resume.realtime);
        if (counted && entered == 0 && failed > 0)
                printf("%12s: no: the kernel's suspend failed%s (%s; /sys/power/suspend_stats), the resume "
                       "recorded at %s\n",
                       "Slept", failed > 1 ? " more than once" : "",
                       format_suspend_failure(&f->resume.stats, why, sizeof why), t2);
        else if (counted && entered == 0 && suspended == 0)
                printf("%12s: no: the kernel's suspend counts did not move and its clocks counted no time "
                       "asleep before the resume recorded at %s (a refused state write)\n",
                       "Slept", t2);
        else if (suspended == 0 && counted)
                printf("%12s: %s until %s (the kernel suspended; its clocks counted no time asleep: s2idle on "
                       "some machines, or under a second)\n",
                       "Slept", t1, t2);
        else if (suspended == 0)
                printf("%12s: none counted: no time suspended between the late pass and the resume recorded at "
                       "%s (a failed or refused state write, or a sleep the kernel's clocks do not count: "
                       "s2idle on some machines, one under a second)\n",
                       "Slept", t2);
        else if (suspended != USEC_INFINITY)
                printf("%12s: %s until %s (%s suspended%s)\n", "Slept", t1, t2,
                       format_timespan(d, sizeof d,
                                       suspended < USEC_PER_SEC ? suspended / USEC_PER_MSEC * USEC_PER_MSEC
                                                                : suspended / USEC_PER_SEC * USEC_PER_SEC),
                       f->resume.realtime <= slept ? "; the wall clock was set back meanwhile" : "");
        else if (counted && entered > 0) /* the clocks not recorded (a record of an older version) */
                printf("%12s: %s until %s (the kernel suspended)\n", "Slept", t1, t2);
        else if (f->resume.realtime > slept && f->resume.realtime - slept < USEC_PER_SEC)
                printf("%12s: %s until %s (under 1s: the sleep may not have gone ahead, a failed state write "
                       "looks the same)\n",
                       "Slept", t1, t2);
        else if (f->resume.realtime > slept)
                printf("%12s: %s until %s (%s)\n", "Slept", t1, t2,
                       format_timespan(d, sizeof d,
                                       (f->resume.realtime - slept) / USEC_PER_SEC * USEC_PER_SEC));
        else /* after it by CLOCK_BOOTTIME: the wall clock was set back meanwhile */
                printf("%12s: %s until %s (the wall clock was set back meanwhile)\n", "Slept", t1, t2);
        /* More than one sleep: not all of them this cycle's (one systemd-sleep writes the state until
         * one suspends). Failed attempts beside one: systemd-sleep tries each of SuspendState= in turn
         * (mem failing, freeze sleeping), which another program's attempt cannot be told from. */
        if (counted && entered > 1)
                printf("%12s: %" PRIu64 " suspend(s) and %" PRIu64 " failed attempt(s) since the late pass "
                       "(/sys/power/suspend_stats): not all of them had a pass of ours\n",
                       "Counted", entered, failed);
        else if (counted && entered == 1 && failed > 0)
                printf("%12s: 1 suspend and %" PRIu64 " failed attempt(s) since the late pass "
                       "(/sys/power/suspend_stats): states that failed before the one that slept "
                       "(systemd-sleep tries each of SuspendState= in turn), or another program's attempts\n",
                       "Counted", failed);
}

static int print_cycle(const Args *a, const SleepCycle *c, const StatusFacts *f, int proc_fd) {
        const RunRecord *passes[2];
        const char *names[2];
        size_t n = 0;
        char when[FORMAT_TIMESTAMP_MAX], rel[FORMAT_RELATIVE_MAX];
        usec_t start = sleep_cycle_start(c);

        printf("%12s: %s, %s; %s\n", "Last sleep", sleep_cycle_action(c) ?: "unknown action",
               format_timestamp(when, sizeof when, start), format_relative(rel, sizeof rel, start, f->now));
        if (c->unit) {
                print_pass("Unit pass", c->unit);
                passes[n] = c->unit;
                names[n++] = "unit";
        }
        if (late_pass_unrecorded(c, f)) {
                char t[FORMAT_TIMESTAMP_MAX];

                printf("%12s: not recorded: the system-sleep hook ran (it recorded the resume at %s), its "
                       "pass left no record (killed, refused, or its record not written)\n",
                       "Late pass", format_timestamp(t, sizeof t, f->resume.realtime));
        }
        if (c->late) {
                print_pass("Late pass", c->late);
                passes[n] = c->late;
                names[n++] = "late";
                print_slept(c, f);
        }
        print_kernel_sync(c, f);
        putchar('\n');
        return print_mounts(a, passes, names, n, f, proc_fd);
}

/* Without a sleep cycle: the last run (a manual one, say). */
static int print_last_run(const Args *a, const RunRecord *r, const StatusFacts *f, int proc_fd) {
        const RunRecord *passes[1] = { r };
        const char *names[1] = { r->trigger ?: "run" };
        char rel[FORMAT_RELATIVE_MAX];

        print_pass("Last run", r);
        printf("%12s  trigger %s; %s\n\n", "", r->trigger ?: "-",
               format_relative(rel, sizeof rel, r->started_realtime, f->now));
        return print_mounts(a, passes, names, 1, f, proc_fd);
}

/* What could not be read of the records (review Q, M2): the last run's error, the history's, and how
 * many of its records did not parse. */
typedef struct Unread {
        int last_error, history_error; /* negative errno, 0 */
        size_t n_corrupt;
        size_t n_nomem; /* history records not parsed for lack of memory: not corrupt */
} Unread;

static bool unread_any(const Unread *u) {
        return u->last_error < 0 || u->history_error < 0 || u->n_corrupt > 0 || u->n_nomem > 0;
}

/* Whether a sleep.target wants or requires our unit in one of the unit directories a system's
 * links go to: enabled (/etc), --runtime (/run), by the distribution (/usr/lib, /lib); review Q, L6. */
static bool unit_enabled(int root_fd) {
        static const char *const dirs[] = { "etc", "run", "usr/lib", "lib" };
        static const char *const kinds[] = { "wants", "requires" };
        char path[128];

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                        snprintf(path, sizeof path, "%s/systemd/system/sleep.target.%s/suspend-sync.service",
                                 dirs[i], kinds[k]);
                        if (faccessat(root_fd, path, F_OK, AT_SYMLINK_NOFOLLOW) >= 0)
                                return true;
                }
        return false;
}

/* "Nothing happened": say why it may be; or that records are there that could not be read, which is
 * not the same thing. */
static void print_hints(const Args *a, int root_fd, const Unread *u) {
        if (unread_any(u)) {
                printf("Run records in '%s' could not be read:", a->state_dir);
                if (u->last_error < 0)
                        printf(" last.json: %s;", strerror(-u->last_error));
                if (u->history_error < 0)
                        printf(" history: %s;", strerror(-u->history_error));
                if (u->n_corrupt > 0)
                        printf(" %zu history record(s) do not parse;", u->n_corrupt);
                if (u->n_nomem > 0)
                        printf(" %zu history record(s) not parsed: out of memory;", u->n_nomem);
                printf(" nothing else recorded.\n");
        } else
                printf("No sleep and no run recorded in '%s' since boot.\n", a->state_dir);
        if (!unit_enabled(root_fd))
                printf("Hint: suspend-sync.service is not enabled: systemctl enable suspend-sync.service\n");
        if (access(a->state_dir, R_OK | X_OK) < 0 && errno == EACCES)
                printf("Hint: '%s' is not readable by this user; try as root.\n", a->state_dir);
        printf("Hint: 'suspend-sync history' shows sleeps recorded before this boot.\n");
}

/* "running": the pass that holds the state lock now, or null. */
static int running_to_json(const StatusFacts *f, json_object *root) {
        _cleanup_json_ json_object *o = NULL;
        int r;

        if (f->lock_pid <= 0)
                return json_add_null(root, "running");
        if (!(o = json_object_new_object()))
                return -ENOMEM;
        if ((r = json_add_int(o, "pid", f->lock_pid)) < 0 ||
            (r = f->has_holder ? json_add_string(o, "kind", lock_holder_kind_name(f->holder.kind))
                               : json_add_null(o, "kind")) < 0 ||
            (r = f->has_holder
                         ? json_add_u64(o, "deadline_left_usec",
                                        f->holder.until > f->mono_now ? f->holder.until - f->mono_now : 0)
                         : json_add_null(o, "deadline_left_usec")) < 0)
                return r;
        return json_add(root, "running", TAKE_PTR(o));
}

/* What holds the state lock now, if anything: a pass running, or one stuck. */
static void print_running(const StatusFacts *f) {
        char x[FORMAT_TIMESPAN_MAX];

        if (f->lock_pid <= 0)
                return;
        if (!f->has_holder)
                printf("%12s: PID %d holds the state lock\n", "Running", (int) f->lock_pid);
        else if (f->holder.until > f->mono_now)
                printf("%12s: PID %d, %s, its deadline in %s\n", "Running", (int) f->lock_pid,
                       lock_holder_kind_describe(f->holder.kind),
                       format_timespan(x, sizeof x, f->holder.until - f->mono_now));
        else
                printf("%12s: PID %d, %s, %s past its deadline, still holds the state lock\n", "Running",
                       (int) f->lock_pid, lock_holder_kind_describe(f->holder.kind),
                       format_timespan(x, sizeof x, f->mono_now - f->holder.until));
}

/* {"now", "running", "last_run", "history", "last_cycle", "unread"}: the records as the state module writes
 * them, and what of them could not be read. */
/* "kernel_suspends": what the kernel counted between the late pass and the resume
 * (cycle_kernel_suspends()), its last failure's step, device and errno where one was counted; null
 * when not known. */
static int add_kernel_suspends(json_object *cyc, const SleepCycle *c, const StatusFacts *f) {
        _cleanup_json_ json_object *o = NULL;
        const SuspendStats *st = &f->resume.stats;
        uint64_t entered, failed;
        int r;

        if (!cycle_kernel_suspends(c, f, &entered, &failed))
                return json_add_null(cyc, "kernel_suspends");
        if (!(o = json_object_new_object()))
                return -ENOMEM;
        if ((r = json_add_u64(o, "entered", entered)) < 0 || (r = json_add_u64(o, "failed", failed)) < 0)
                return r;
        if (failed > 0 &&
            ((r = st->last_failed_step[0] ? json_add_string(o, "last_failed_step", st->last_failed_step)
                                          : json_add_null(o, "last_failed_step")) < 0 ||
             (r = st->last_failed_dev[0] ? json_add_string(o, "last_failed_dev", st->last_failed_dev)
                                         : json_add_null(o, "last_failed_dev")) < 0 ||
             (r = errno_to_name(-st->last_failed_errno)
                          ? json_add_string(o, "last_failed_errno", errno_to_name(-st->last_failed_errno))
                          : json_add_null(o, "last_failed_errno")) < 0))
                return r;
        return json_add(cyc, "kernel_suspends", TAKE_PTR(o));
}

static int status_to_json(const StatusFacts *f, const RunRecord *last, const RunRecord *history,
                          size_t n_history, const SleepCycle *c, const Unread *u, json_object **ret) {
        _cleanup_json_ json_object *root = json_object_new_object(), *hist = json_object_new_array(),
                                   *now = NULL, *cyc = NULL, *unread = NULL;
        json_object *o = NULL;
        int r;

        if (!root || !hist || !(now = json_object_new_object()) || !(unread = json_object_new_object()))
                return -ENOMEM;
        if ((r = f->mi && f->mi->has_dirty ? json_add_u64(now, "dirty_bytes", f->mi->dirty_bytes)
                                           : json_add_null(now, "dirty_bytes")) < 0 ||
            (r = f->mi && f->mi->has_writeback ? json_add_u64(now, "writeback_bytes", f->mi->writeback_bytes)
                                               : json_add_null(now, "writeback_bytes")) < 0 ||
            (r = json_add(root, "now", TAKE_PTR(now))) < 0)
                return r;
        if ((r = running_to_json(f, root)) < 0 ||
            (r = json_add_bool(root, "state_dir_read_only", f->state_read_only)) < 0)
                return r;
        if (last && ((r = run_record_to_json(last, &o)) < 0 || (r = json_add(root, "last_run", o)) < 0))
                return r;
        if (!last && (r = json_add_null(root, "last_run")) < 0)
                return r;
        for (size_t i = 0; i < n_history; i++)
                if ((r = run_record_to_json(&history[i], &o)) < 0 || (r = json_append(hist, o)) < 0)
                        return r;
        if ((r = json_add(root, "history", TAKE_PTR(hist))) < 0)
                return r;
        if (!c) {
                r = json_add_null(root, "last_cycle");
                goto done;
        }
        if (!(cyc = json_object_new_object()))
                return -ENOMEM;
        if ((r = json_add_string(cyc, "sleep_action", sleep_cycle_action(c))) < 0 ||
            (r = json_add_u64(cyc, "started_realtime", sleep_cycle_start(c))) < 0 ||
            /* the passes by their records' start (history[] holds them) */
            (r = json_add_u64_or_null(cyc, "unit_started_realtime", c->unit ? c->unit->started_realtime : 0,
                                      0)) < 0 ||
            (r = json_add_u64_or_null(cyc, "late_started_realtime", c->late ? c->late->started_realtime : 0,
                                      0)) < 0 ||
            (r = json_add_bool(cyc, "late_left_out", c->unit && c->unit->late_left_out)) < 0 ||
            /* the text's "Late pass: not recorded" (late_pass_unrecorded()) */
            (r = json_add_bool(cyc, "late_unrecorded", late_pass_unrecorded(c, f))) < 0 ||
            (r = json_add_u64_or_null(cyc, "resumed_realtime", f->resume.realtime, 0)) < 0 ||
            /* cycle_suspended(): 0, no sleep happened; null, not known */
            (r = json_add_u64_or_null(cyc, "suspended_usec", cycle_suspended(c, f), USEC_INFINITY)) < 0 ||
            (r = add_kernel_suspends(cyc, c, f)) < 0 ||
            (r = json_add_string(cyc, "kernel_sync",
                                 f->ksync_error < 0                      ? "unknown"
                                 : f->ksync.state == KERNEL_SYNC_DONE    ? "done"
                                 : f->ksync.state == KERNEL_SYNC_SKIPPED ? "skipped"
                                                                         : "unknown")) < 0 ||
            (r = json_add_u64_or_null(cyc, "kernel_sync_usec",
                                      f->ksync.state == KERNEL_SYNC_DONE ? f->ksync.usec : 0, 0)) < 0 ||
            (r = json_add(root, "last_cycle", TAKE_PTR(cyc))) < 0)
                return r;
done:
        if (r < 0 ||
            (r = u->last_error < 0 ? json_add_string(unread, "last_run", strerror(-u->last_error))
                                   : json_add_null(unread, "last_run")) < 0 ||
            (r = u->history_error < 0 ? json_add_string(unread, "history", strerror(-u->history_error))
                                      : json_add_null(unread, "history")) < 0 ||
            (r = json_add_u64(unread, "history_records", u->n_corrupt + u->n_nomem)) < 0 ||
            (r = json_add(root, "unread", TAKE_PTR(unread))) < 0)
                return r;
        *ret = TAKE_PTR(root);
        return 0;
}

static void print_dirty(const Meminfo *mi) {
        char d[FORMAT_BYTES_MAX], w[FORMAT_BYTES_MAX];

        if (mi && mi->has_dirty)
                printf("%12s: %s dirty, %s under writeback\n", "Now",
                       format_bytes(d, sizeof d, mi->dirty_bytes),
                       format_bytes(w, sizeof w, mi->has_writeback ? mi->writeback_bytes : 0));
        else
                printf("%12s: dirty memory unknown (no meminfo)\n", "Now");
}

/* The clock for "5min ago"; $SUSPEND_SYNC_NOW_USEC (testing: golden outputs) overrides it. */
static usec_t status_now(void) {
        const char *e = getenv("SUSPEND_SYNC_NOW_USEC");
        uint64_t u;

        if (e && safe_atou64(e, &u) >= 0)
                return u;
        return now(CLOCK_REALTIME);
}

static void load_facts(const Args *a, int root_fd, StatusFacts *f, Meminfo *mi) {
        _cleanup_free_ char *k = NULL, *proc = NULL;
        _cleanup_close_ int state_fd = -EBADF;
        struct statvfs sv;
        size_t size;

        f->mi = meminfo_load(root_fd, mi) >= 0 ? mi : NULL;
        f->now = status_now();
        last_resume_read(a->state_dir, &f->resume);
        f->ksync_error = kmsg_read(root_fd, &k, &size);
        if (f->ksync_error >= 0)
                f->ksync = kmsg_last_sleep_sync(k, size);
        state_fd = open(a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0)
                return;
        f->state_read_only = fstatvfs(state_fd, &sv) >= 0 && (sv.f_flag & ST_RDONLY);
        (void) handover_load(state_fd, &f->handover);
        /* Read only: never the lock itself, which a pass starting now would then find taken. */
        if (asprintf(&proc, "%s/proc", a->root) < 0) {
                proc = NULL;
                return;
        }
        /* The kernel's list once where the holder left its mark; by PID alone where it did not. */
        f->has_holder = lock_holder_read(state_fd, proc, &f->holder) >= 0;
        if (f->has_holder)
                f->lock_pid = f->holder.pid;
        else if (lock_holder_pid(state_fd, proc, &f->lock_pid) < 0)
                f->lock_pid = 0;
        f->mono_now = now(CLOCK_MONOTONIC);
}

int verb_status(const Args *a) {
        _cleanup_(run_record_done) RunRecord last = {};
        _cleanup_(cycle_set_done) CycleSet set = {};
        _cleanup_close_ int root_fd = -EBADF, proc_fd = -EBADF;
        const SleepCycle *cycle;
        Unread u = {};
        StatusFacts f = {};
        bool has_last = false;
        Meminfo mi = {};
        int r;

        root_fd = open(a->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return log_error_errno(negative_errno(), "Failed to open root directory '%s': %m", a->root);
        proc_fd = openat(root_fd, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        r = state_load(a->state_dir, &last, &has_last, NULL, NULL);
        if (r < 0 && r != -ENOENT) {
                u.last_error = r;
                log_warning_errno(r, "Failed to read the last run from '%s', ignoring: %m", a->state_dir);
        }
        r = cycle_set_load(a->state_dir, &set, &u.n_corrupt, &u.n_nomem);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0) {
                u.history_error = r;
                log_warning_errno(r, "Failed to read the history from '%s', ignoring: %m", a->state_dir);
        } else {
                if (u.n_corrupt > 0)
                        log_warning("%zu record(s) in '%s/history' could not be read, ignoring them.",
                                    u.n_corrupt, a->state_dir);
                /* Not corruption: the records are as they were (review AS, AS-5). */
                if (u.n_nomem > 0)
                        log_warning("%zu record(s) in '%s/history' could not be parsed for lack of memory, "
                                    "ignoring them.",
                                    u.n_nomem, a->state_dir);
        }
        cycle = set.n_cycles > 0 ? &set.cycles[0] : NULL;

        load_facts(a, root_fd, &f, &mi);
        if (a->json != JSON_OFF) {
                _cleanup_json_ json_object *root = NULL;

                r = status_to_json(&f, has_last ? &last : NULL, set.records, set.n_records, cycle, &u, &root);
                if (r == -ENOMEM)
                        r = log_oom();
                else if (r < 0)
                        r = log_error_errno(r, "Failed to format the run records: %m");
                else
                        r = print_json(root, a->json);
        } else {
                print_dirty(f.mi);
                print_running(&f);
                /* Nothing can say when it became so: every record shown may be older (review AW, L3). */
                if (f.state_read_only)
                        printf("%12s: '%s' is read-only: no pass can record there, a sleep since it became "
                               "so is not shown\n",
                               "Records", a->state_dir);
                if (cycle)
                        r = print_cycle(a, cycle, &f, proc_fd);
                else if (has_last)
                        r = print_last_run(a, &last, &f, proc_fd);
                else {
                        print_hints(a, root_fd, &u);
                        r = 0;
                }
        }
        handover_done(&f.handover);
        /* Records there and none of them read: not "nothing recorded" to a script either. */
        if (r >= 0 && !cycle && !has_last && unread_any(&u))
                return u.last_error < 0 ? u.last_error : u.history_error < 0 ? u.history_error : -EBADMSG;
        return r;
}
