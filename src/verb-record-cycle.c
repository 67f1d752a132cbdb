/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * `record-cycle`: after resume (the unit's ExecStopPost=, bounded by its TimeoutStopSec=; not the
 * post hook, which holds up the end of the resume), copies the last sleep cycle from the run records under /run into the persistent history and
 * writes the Prometheus textfile. Never before sleep: these are the first writes to a disk that
 * was just synced. Idempotent: the second call for the same cycle writes nothing new to the
 * history (the textfile is rewritten with the same content).
 */

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "history.h"
#include "last-resume.h"
#include "log.h"
#include "metrics.h"
#include "shared/bounded-child.h"
#include "shared/fileio.h"
#include "verb-scope.h"
#include "verbs.h"

/* The boot id without dashes, "" when unknown; -ENOMEM when it could not be read for want of memory
 * (the cycle is not recorded then, rather than recorded without it: review BF), else 0. */
static int read_boot_id(const Args *a, char ret[static 33]) {
        _cleanup_close_ int root_fd = -EBADF;
        _cleanup_free_ char *s = NULL;
        size_t n = 0, size;
        int r;

        ret[0] = 0;
        root_fd = open(a->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return 0;
        r = read_full_file_at(root_fd, "proc/sys/kernel/random/boot_id", 64, &s, &size);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        for (const char *p = s; *p && n < 32; p++)
                if (strchr("0123456789abcdef", *p))
                        ret[n++] = *p;
        ret[n == 32 ? 32 : 0] = 0;
        return 0;
}

/* The boot of the cycle: its last pass's record's (every pass writes it since review BB), else the
 * running boot's, running (older records, the fixtures); review BG, F-6: always the running boot's,
 * so a cycle recorded after a reboot (a state directory that outlives one) named the wrong boot. */
static const char *cycle_boot_id(const SleepCycle *c, const char *running) {
        const RunRecord *last = c->late ?: c->unit;

        return last && last->boot_id[0] != 0 ? last->boot_id : running;
}

/* When the machine woke from the cycle's sleep: the resume's record (the post hook's, or
 * restore-knob's where the unit's pass left the late pass out and no hook of ours ran) when it is
 * after the cycle's last pass, else now (ExecStopPost= runs right after resume); 0 for a sleep that
 * did not happen (no late pass, and none left out: review BG, F-6, a late-skipped sleep, the
 * commonest of a laptop with the defaults, was recorded as never resumed). */
static usec_t resumed_at(const Args *a, const SleepCycle *c) {
        const RunRecord *last = c->late ?: (c->unit && c->unit->late_left_out ? c->unit : NULL);
        LastResume lr;

        if (!last)
                return 0;
        last_resume_read(a->state_dir, &lr);
        /* after it by CLOCK_BOOTTIME in this boot (review BB, L2), and a time after its start (a wall
         * clock set back meanwhile would make the cycle end before it began) */
        return lr.realtime > last->started_realtime &&
                               last_resume_after(&lr, last->boot_id, last->started_realtime,
                                                 last->started_boottime, last == c->late ? 0 : last->duration)
                       ? lr.realtime
                       : now(CLOCK_REALTIME);
}

/* Review BG, F-2: the daemon's record-cycle for a sleep may run after the next sleep has begun (a
 * suspend right after the resume), whose unit pass's record is the newest by then: that half cycle
 * was kept for good, and the sleep the steps were for not at all. With --cycle-before-boottime= the
 * newest cycle this boot (boot_id) began before it; by CLOCK_BOOTTIME, since the wall clock may
 * step back at a resume. A cycle of another boot, or of unknown time, began before. NULL: none. */
static const SleepCycle *cycle_pick(const Args *a, const CycleSet *set, const char *boot_id) {
        for (size_t i = 0; i < set->n_cycles; i++) {
                const SleepCycle *c = &set->cycles[i];
                const RunRecord *first = c->unit ?: c->late;

                if (a->cycle_before == 0 || !streq(first->boot_id, boot_id) || first->started_boottime == 0 ||
                    first->started_boottime < a->cycle_before)
                        return c;
        }
        return NULL;
}

static int open_or_create_dir(const char *path) {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 && errno == ENOENT && mkdir_p_public(path) >= 0)
                fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* The summary the plan's ETA learns from, into the state directory (tmpfs), from every cycle of
 * the persistent history (history_fd). Negative errno. */
static int write_learned(const Args *a, int history_fd) {
        _cleanup_free_ MountStats *s = NULL;
        _cleanup_free_ char *text = NULL, *path = NULL;
        CycleRecord *c = NULL;
        size_t n = 0, n_s = 0;
        int r;

        r = history_load(history_fd, HISTORY_CYCLES_MAX, &c, &n, NULL);
        if (r >= 0)
                r = history_mount_stats(c, n, &s, &n_s);
        if (r >= 0)
                r = history_learned_format(s, n_s, &text);
        if (r >= 0)
                r = asprintf(&path, "%s/" HISTORY_LEARNED_FILE, a->state_dir) < 0 ? -ENOMEM : 0;
        if (r >= 0)
                r = write_file_atomic_at(AT_FDCWD, path, text, strlen(text));
        if (r >= 0) {
                /* its JSON form, which no pass reads any more (history.h) */
                _cleanup_free_ char *old = NULL;

                if (asprintf(&old, "%s/" HISTORY_LEARNED_OLD_FILE, a->state_dir) >= 0)
                        (void) unlink(old);
        }
        cycle_record_array_free(c, n);
        return r < 0 ? r : 0;
}

/* The answer of record-cycle's bounded children: two negative errnos (or counts), the first member
 * of the userdata both sides share. */
typedef int32_t ChildAnswer[2];

static int answer_feed(const char *buf, size_t size, void *userdata) {
        if (size < sizeof(ChildAnswer))
                return 0;
        memcpy(userdata, buf, sizeof(ChildAnswer));
        return 1;
}

/* The history's part, in a bounded child: /var/lib may be on a server that stopped answering (an
 * NFS root), and the unit's ExecStopPost= or the daemon's post step would wait for it, holding up
 * the next sleep (review F, F3). */
typedef struct HistoryWrite {
        ChildAnswer answer; /* first: history_append()'s (> 0 recorded, 0 there already, negative
                             * errno), then write_learned()'s */
        const Args *a;
        const CycleRecord *c;
} HistoryWrite;
_Static_assert(offsetof(HistoryWrite, answer) == 0, "answer_feed() fills the first member");

static int history_child(int pipe_fd, int keep_fd, void *userdata) {
        const HistoryWrite *x = userdata;
        _cleanup_close_ int fd = open_or_create_dir(x->a->history_dir);
        int32_t answer[2] = { fd < 0 ? fd : history_append(fd, x->c), -EBADF };

        if (fd >= 0)
                answer[1] = write_learned(x->a, fd);
        return loop_write(pipe_fd, answer, sizeof answer) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int write_history(const Args *a, const CycleRecord *c) {
        HistoryWrite x = { .a = a, .c = c };
        char ts[FORMAT_TIMESPAN_MAX];
        int r;

        r = bounded_child_run(AT_FDCWD, RECORD_CYCLE_HISTORY_TIMEOUT, sizeof x.answer, history_child,
                              answer_feed, &x);
        if (r == -ETIMEDOUT)
                return log_warning_errno(r,
                                         "History directory '%s' did not answer within %s (on a hung "
                                         "filesystem?): the last sleep cycle was not recorded.",
                                         a->history_dir,
                                         format_timespan(ts, sizeof ts, RECORD_CYCLE_HISTORY_TIMEOUT));
        if (r <= 0)
                return log_warning_errno(r < 0 ? r : -EPROTO,
                                         "Failed to add the last sleep cycle to '%s': %m", a->history_dir);
        if (x.answer[1] < 0)
                log_debug_errno(x.answer[1], "Could not write what the ETA learns into '%s', ignoring: %m",
                                a->state_dir);
        if (x.answer[0] < 0)
                return log_warning_errno(x.answer[0], "Failed to add the last sleep cycle to '%s': %m",
                                         a->history_dir);
        log_debug("%s the last sleep cycle in '%s'.", x.answer[0] > 0 ? "Recorded" : "Already recorded",
                  a->history_dir);
        return 0;
}

/* The metrics write, in a bounded child: the directory may be on a hung server. */
typedef struct TextfileWrite {
        ChildAnswer answer; /* first: the negative errno of open() of the directory, then of the write;
                             * 0: done */
        const char *dir, *text;
} TextfileWrite;
_Static_assert(offsetof(TextfileWrite, answer) == 0, "answer_feed() fills the first member");

static int textfile_child(int pipe_fd, int keep_fd, void *userdata) {
        const TextfileWrite *x = userdata;
        _cleanup_close_ int fd = open(x->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int32_t answer[2] = { fd < 0 ? negative_errno() : 0, 0 };

        if (fd >= 0)
                answer[1] = write_file_atomic_at(fd, METRICS_FILE_NAME, x->text, strlen(x->text));
        return loop_write(pipe_fd, answer, sizeof answer) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* [Metrics] TextfileDirectory=: written only when the directory exists. */
static int write_textfile(const Args *a, const SleepCycle *last, size_t n_cycles) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        _cleanup_free_ char *text = NULL;
        TextfileWrite x = {};
        char ts[FORMAT_TIMESPAN_MAX];
        int r;

        r = context_load_policy(a, &c);
        if (r < 0)
                return r;
        x.dir = c.policy->textfile_directory;
        if (!x.dir)
                return 0;
        r = metrics_format(last, n_cycles, &text);
        if (r < 0)
                return log_oom();
        x.text = text;
        r = bounded_child_run(AT_FDCWD, RECORD_CYCLE_TEXTFILE_TIMEOUT, sizeof x.answer, textfile_child,
                              answer_feed, &x);
        if (r == -ETIMEDOUT)
                return log_warning_errno(
                        r,
                        "Metrics directory '%s' did not answer within %s (on a hung filesystem?): "
                        "metrics not written.",
                        x.dir, format_timespan(ts, sizeof ts, RECORD_CYCLE_TEXTFILE_TIMEOUT));
        if (r <= 0)
                return log_warning_errno(r < 0 ? r : -EPROTO, "Failed to write metrics into '%s': %m", x.dir);
        if (x.answer[0] < 0) {
                log_debug_errno(x.answer[0], "No metrics directory '%s' (%m), not writing metrics.", x.dir);
                return 0;
        }
        if (x.answer[1] < 0)
                return log_warning_errno(x.answer[1], "Failed to write '%s/" METRICS_FILE_NAME "': %m",
                                         x.dir);
        log_debug("Wrote '%s/" METRICS_FILE_NAME "'.", x.dir);
        return 0;
}

int verb_record_cycle(const Args *a) {
        _cleanup_(cycle_set_done) CycleSet set = {};
        _cleanup_(cycle_record_done) CycleRecord c = {};
        const SleepCycle *cycle;
        char boot_id[33];
        size_t n_nomem = 0;
        int r, ret = 0;

        /* A record skipped for want of memory (state_load_history()) would leave its cycle without
         * that pass, or make an earlier cycle the last one, and that is what the history would keep
         * for good, and the ETA learn: none rather than a wrong one (review BF). */
        r = cycle_set_load(a->state_dir, &set, NULL, &n_nomem);
        if (r == -ENOMEM || (r >= 0 && n_nomem > 0))
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "Failed to read the run records in '%s': %m", a->state_dir);
        if (set.n_cycles == 0) {
                log_debug("No sleep cycle in '%s', nothing to record.", a->state_dir);
                return 0;
        }

        if (read_boot_id(a, boot_id) == -ENOMEM)
                return log_oom();
        cycle = cycle_pick(a, &set, boot_id);
        if (!cycle) {
                log_debug("No sleep cycle in '%s' began before the one after it, nothing to record.",
                          a->state_dir);
                return 0;
        }
        r = cycle_record_from_cycle(cycle, cycle_boot_id(cycle, boot_id), resumed_at(a, cycle), &c);
        if (r < 0)
                ret = log_warning_errno(r, "Failed to add the last sleep cycle to '%s': %m", a->history_dir);
        else
                ret = write_history(a, &c);

        r = write_textfile(a, cycle, set.n_cycles);
        /* Run by systemd (the unit's ExecStopPost=): a configuration reader killed on a hung server
         * would stay in suspend-sync.service ("left-over process" at its next start). */
        if (!isempty(a->invocation_id))
                verb_stuck_to_scope(NULL, 0, usec_add(now(CLOCK_MONOTONIC), RECORD_CYCLE_SCOPE_TIMEOUT));
        return ret < 0 ? ret : r;
}
