/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon: the unit's pass started when logind announces the sleep, not when systemd gets to
 * suspend-sync.service (suspend-sync-daemon.service; docs/SYSTEMD.md, "The daemon").
 *
 * Holds logind's "delay" inhibitor lock for "sleep". On PrepareForSleep(true) it wakes the flusher
 * threads (WritebackFirst=), starts the pass of "suspend-sync run --trigger=unit" (no exec: the
 * standby forked ahead, standby_child(), else forked then, pass_child()), asks logind which other
 * programs delay the sleep and PID 1 which units require suspend-sync.service, and waits for the
 * pass while logind waits for it (daemon_pass_bound()).
 * When daemon_mark_why_not() finds nothing against it (the pass ended in time, exited 0 with a
 * "success" record, in the same sleep, no other delay lock, no requirer), it creates
 * DAEMON_PASS_MARK, which suspend-sync.service's ConditionPathExists=! reads: systemd does not
 * start the unit for this sleep. Then it releases the lock. Otherwise the unit runs its own pass,
 * as without the daemon (waiting for the state lock while the daemon's pass still runs): the
 * daemon can save the unit's pass, never lose it.
 *
 * On PrepareForSleep(false) (resumed, or the sleep called off) it takes the lock again and, when
 * its mark kept the unit from running, runs what the unit's ExecStopPost= would have: restore-knob,
 * then record-cycle, each bounded. The mark is removed on every PrepareForSleep, by restore-knob
 * after every sleep, and with the daemon's RuntimeDirectory= whenever the daemon stops.
 *
 * The late pass too, when the system-sleep hook asks for it on HOOK_SOCKET_PATH (hook-socket.h):
 * forked the same way (late_child()), it acks with its limit, turns the kernel's sync off only while
 * the hook still waits, and answers "done" once its knob is decided. Without an ack the hook runs
 * the late pass itself, as without the daemon.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "conf-read.h"
#include "context.h"
#include "daemon.h"
#include "handover.h"
#include "history.h"
#include "hook-socket.h"
#include "kernel-knob.h"
#include "log.h"
#include "manager.h"
#include "mount-table.h"
#include "notify.h"
#include "shared/bounded-child.h"
#include "shared/exe-util.h"
#include "shared/fd-util.h"
#include "shared/fileio.h"
#include "shared/proc-util.h"
#include "shared/parse-util.h"
#include "state.h"
#include "verb-knob.h"
#include "verbs.h"

#define LOGIN1 "org.freedesktop.login1"
#define LOGIN1_PATH "/org/freedesktop/login1"
#define LOGIN1_MANAGER LOGIN1 ".Manager"

typedef struct Daemon {
        const Args *a;
        sd_event *event;
        sd_bus *bus;          /* the system bus: logind */
        const char *exe;      /* our binary, which restore-knob and record-cycle run */
        const char *exe_path; /* the path whose file must stay the one we run (daemon_replaced()):
                               * SUSPEND_SYNC_BINARY where there is one, else exe; NULL: not known */
        bool pass_exec;       /* $SUSPEND_SYNC_TEST_PASS_EXEC: the pass exec'd too (measurement only) */
        int root_fd;
        int lock_fd;
        usec_t delay_max;     /* logind's InhibitDelayMaxUSec, read with the lock */
        bool writeback_first; /* WritebackFirst= and ... */
        usec_t deadline;      /* ... DeadlineSec= as of the last read (start, each resume, SIGHUP) */
        Policy *config;       /* ... and the whole configuration then, which its passes sample by while
                               * they read it again (Args.assumed_config); NULL: not known */
        unsigned sleeps;      /* PrepareForSleep signals seen */
        bool sleeping;        /* the last one said true: a sleep is under way */

        pid_t standby_pid;      /* the next pass, forked ahead and waiting to start (standby_child()) */
        int standby_start_fd;   /* ... one byte on it starts it; closed, it exits */
        int standby_report_fd;  /* ... the read end of its report */
        char standby_token[33]; /* ... the token its pass will write ("": its own, random) */
        bool no_standby;        /* $SUSPEND_SYNC_TEST_NO_STANDBY: forked on the signal (measurement only) */
        unsigned child_nofile;  /* $SUSPEND_SYNC_TEST_CHILD_NOFILE: each child's RLIMIT_NOFILE once it
                                 * holds the knob (tests only: a pass out of descriptors) */

        pid_t pass_pid;       /* the pass, until it exits (also after its bound) */
        unsigned pass_sleeps; /* ... begun at this count */
        bool pass_decided;    /* ... its bound passed: decided, lock released */
        bool pass_waiting;    /* ... it exited and waits for its answers */
        bool pass_ended;      /* ... it exited before the bound, with pass_status */
        int pass_status;
        usec_t pass_exited_at;
        int report_wfd;                 /* ... the write end of its report, for the fork */
        int start_rfd;                  /* ... the standby's end of standby_start_fd, for the fork */
        sd_event_source *report_source; /* ... the read end (daemon_report_parse()) */
        bool pass_reported;             /* ... it reported: decided or waiting, its exit only reaps */
        bool pass_recorded;             /* ... its report: its record was saved and says "success" */
        bool pass_report_seen;          /* ... a report came (pass_recorded is its word), until decided */
        sd_event_source *answers_timer; /* ... and waits for the answers to come in */
        pid_t pass_last_pid;            /* the last pass's PID, kept after its exit: its record's */
        usec_t pass_started, pass_started_boottime;
        sd_event_source *pass_timer;
        sd_bus_slot *inhibitors_slot; /* logind's answer: who else delays the sleep */
        int inhibitors;               /* another delay lock for sleep: 1, none: 0, unknown: <0 */
        char other_who[64];
        ManagerUnitFacts *unit_facts; /* PID 1's: which units require the unit, its state */
        bool marked;                  /* this sleep's mark is set: the unit's ExecStopPost= is ours to do */
        bool joined_in_sleep;         /* started during a sleep (or could not tell): whose mark stood
                                       * for it is not known, so its cycle is recorded at its end */
        bool replaced_told;           /* daemon_replaced() said so once: replaced, ... */
        bool unknown_told;            /* ... cannot tell */
        char pass_token[33];          /* the token of the last pass started (handover.h), which that
                                       * pass's restore-knob ends the cycle of; "": not known */

        sd_event_source *hook_source;      /* the late pass's socket (hook-socket.h): listening */
        sd_event_source *hook_conn_source; /* ... a connection waiting for its request (one at a time) */
        pid_t late_pid;                    /* ... the late pass forked for it, until it exits */
        char late_action[HOOK_ACTION_MAX], late_env_action[HOOK_ACTION_MAX]; /* ... its request */
        int late_conn_fd; /* ... and its connection, for the fork (sd-event refuses calls after it) */

        pid_t post_pid;     /* restore-knob, then record-cycle, after a sleep the mark stood for */
        usec_t post_before; /* CLOCK_BOOTTIME when they were decided on: record-cycle records the
                             * cycle begun before it (review BG, F-2) */
        bool post_recorded;
        sd_event_source *post_timer;
        ManagerUnitFacts *owed_facts; /* a cycle-owed note found at the start: PID 1 asked ... */
        sd_event_source *owed_timer;  /* ... and asked again later, while the unit is busy */
        unsigned owed_tries;
        sd_event_source *relock_timer;
        unsigned relock_tries;
        sd_bus_slot *lock_slot; /* the lock asked for again (relock()): the call under way */
        uint64_t lock_delay;    /* ... InhibitDelayMaxUSec, as its first step read it */
        pid_t unreaped[4];      /* children spawn() could not watch, killed, to reap (0: none) */
        sd_event_source *tidy_timer;

        ConfReader *refresh;             /* the configuration read again (policy_refresh_begin()) */
        Context refresh_ctx;             /* ... for it */
        sd_event_source *refresh_source; /* ... its reader's pipe, edge-triggered */
        sd_event_source *refresh_timer;  /* ... its bound */
        bool refresh_again;              /* ... asked for again meanwhile: read again when it ends */
} Daemon;

static int mark_remove(void) {
        if (unlink(DAEMON_PASS_MARK) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

/* In the RuntimeDirectory= systemd made (never made here: a mark outside it would outlive us). */
static int mark_create(void) {
        _cleanup_close_ int fd = open(DAEMON_PASS_MARK, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

        return fd < 0 ? negative_errno() : 0;
}

/* The lock in logind's answer to Inhibit kept (a copy of its fd: the message owns the one it
 * carries), with InhibitDelayMaxUSec as read before it. */
static int lock_keep(Daemon *d, sd_bus_message *reply, uint64_t delay) {
        int fd, r;

        r = sd_bus_message_read(reply, "h", &fd);
        if (r < 0)
                return log_warning_errno(r, "Failed to read logind's answer: %m");
        d->lock_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (d->lock_fd < 0)
                return log_warning_errno(negative_errno(), "Failed to keep the lock's fd: %m");
        d->delay_max = delay;
        return 0;
}

/* At the start, before the event loop runs (nothing is served yet, READY=1 comes after it): the
 * lock, or the daemon does not start; during a sleep, none (d->sleeping set), the lock after it.
 * After a sleep: relock(), which does not wait. */
static int lock_take(Daemon *d) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint64_t delay = 0;
        int r;

        r = sd_bus_get_property_trivial(d->bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "InhibitDelayMaxUSec",
                                        &error, 't', &delay);
        if (r < 0)
                return log_warning_errno(r, "Failed to read logind's InhibitDelayMaxUSec: %s",
                                         error.message ?: strerror(-r));
        r = sd_bus_call_method(d->bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "Inhibit", &error, &reply, "ssss",
                               "sleep", "suspend-sync", "Syncing filesystems before sleep", "delay");
        if (r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.login1.OperationInProgress")) {
                /* Started (restarted) while logind carries out a sleep (review AW, L1): it takes no delay
                 * lock until that sleep's end, where exiting only had systemd start us again every
                 * second, toward its start limit. The lock after it, as after any sleep (relock()). */
                d->sleeping = true;
                d->joined_in_sleep = true;
                d->delay_max = delay;
                return 0;
        }
        if (r < 0)
                return log_warning_errno(r, "Failed to take logind's delay lock: %s",
                                         error.message ?: strerror(-r));
        return lock_keep(d, reply, delay);
}

static void lock_release(Daemon *d) {
        d->lock_fd = safe_close(d->lock_fd);
}

static int on_relock(sd_event_source *s, uint64_t usec, void *userdata);
static int on_relock_delay(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);
static int on_relock_inhibit(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);

/* A try of relock() failed (its message logged): another a second later, or after
 * DAEMON_RELOCK_TRIES counted ones in a row the exit (systemd restarts us). */
static void relock_failed(Daemon *d, bool counted) {
        int r;

        if (counted && ++d->relock_tries >= DAEMON_RELOCK_TRIES) {
                log_error("Could not take logind's delay lock again in %u tries, exiting.", d->relock_tries);
                (void) sd_event_exit(d->event, -ENOLCK);
                return;
        }
        r = sd_event_add_time_relative(d->event, &d->relock_timer, CLOCK_MONOTONIC, USEC_PER_SEC, 0,
                                       on_relock, d);
        if (r < 0)
                (void) sd_event_exit(d->event, r);
}

/*
 * After a sleep: the lock again, asked for without waiting (review O, O8): InhibitDelayMaxUSec,
 * then Inhibit, each answered in its callback (within DAEMON_BUS_TIMEOUT, the bus's method call
 * timeout, or failed), while the event loop goes on serving the hook's socket, the bound of
 * restore-knob and logind's next signal. Once at a time (lock_slot), never while one is held, a try
 * is waiting, or a sleep is under way: a PrepareForSleep(true) that comes before the answer finds no
 * lock, and the unit runs, as it always did without our lock; the answer that comes during that
 * sleep is let go (a delay lock taken after the signal would hold logind's sleep up for nothing),
 * and the PrepareForSleep(false) after it asks again.
 */
static void relock(Daemon *d) {
        int r;

        if (d->lock_fd >= 0 || d->relock_timer || d->lock_slot || d->sleeping)
                return;
        r = sd_bus_call_method_async(d->bus, &d->lock_slot, LOGIN1, LOGIN1_PATH,
                                     "org.freedesktop.DBus.Properties", "Get", on_relock_delay, d, "ss",
                                     LOGIN1_MANAGER, "InhibitDelayMaxUSec");
        if (r < 0) {
                log_warning_errno(r, "Failed to ask logind for its InhibitDelayMaxUSec: %m");
                relock_failed(d, true);
        }
}

static int on_relock(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        d->relock_timer = sd_event_source_disable_unref(d->relock_timer);
        relock(d);
        return 0;
}

static int on_relock_delay(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(m);
        Daemon *d = userdata;
        int r;

        d->lock_slot = sd_bus_slot_unref(d->lock_slot);
        if (e) {
                log_warning_errno(sd_bus_message_get_errno(m),
                                  "Failed to read logind's InhibitDelayMaxUSec: %s", e->message ?: e->name);
                relock_failed(d, true);
                return 0;
        }
        r = sd_bus_message_read(m, "v", "t", &d->lock_delay);
        if (r < 0) {
                log_warning_errno(r, "Failed to read logind's InhibitDelayMaxUSec: %m");
                relock_failed(d, true);
                return 0;
        }
        if (d->sleeping) /* asked for again by the PrepareForSleep(false) after it */
                return 0;
        r = sd_bus_call_method_async(d->bus, &d->lock_slot, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "Inhibit",
                                     on_relock_inhibit, d, "ssss", "sleep", "suspend-sync",
                                     "Syncing filesystems before sleep", "delay");
        if (r < 0) {
                log_warning_errno(r, "Failed to take logind's delay lock: %m");
                relock_failed(d, true);
        }
        return 0;
}

static int on_relock_inhibit(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(m);
        Daemon *d = userdata;

        d->lock_slot = sd_bus_slot_unref(d->lock_slot);
        if (e && sd_bus_error_has_name(e, "org.freedesktop.login1.OperationInProgress")) {
                /* logind takes no delay lock while it still carries out the sleep (method_inhibit():
                 * right after the resume, systemd#14045): routine, not a failed try; a second later. */
                log_debug("logind still carries out the sleep, taking its delay lock again in a second.");
                relock_failed(d, false);
                return 0;
        }
        if (e) {
                log_warning_errno(sd_bus_message_get_errno(m), "Failed to take logind's delay lock: %s",
                                  e->message ?: e->name);
                relock_failed(d, true);
                return 0;
        }
        if (d->sleeping) {
                /* The lock's fd goes with the message: released. */
                log_debug("logind's delay lock came after this sleep began, released; taken again after it.");
                return 0;
        }
        if (lock_keep(d, m, d->lock_delay) < 0) {
                relock_failed(d, true);
                return 0;
        }
        d->relock_tries = 0;
        log_debug("Holding logind's delay lock for sleep again.");
        return 0;
}

/* A forked pass whose outcome is told: what is left (its messages, stuck workers to a scope, its
 * exit) is on nobody's path, but on 2 CPUs it competed with logind, PID 1 and systemd-sleep, which
 * then are. SCHED_IDLE: it runs when a CPU has nothing else to do (no real-time class, which
 * RestrictRealtime= forbids anyway). */
static void child_step_aside(void) {
        (void) sched_setscheduler(0, SCHED_IDLE, &(struct sched_param) {});
}

/* The report, once, through the pass child's pipe (userdata: its fd, closed after): four bytes into
 * an empty pipe, written whole, without waiting. */
static void pass_report_send(int code, bool recorded, void *userdata) {
        int *fd = userdata;
        unsigned char buf[DAEMON_REPORT_SIZE];

        if (*fd < 0)
                return;
        daemon_report_format(code, recorded, buf);
        /* "!": with _FORTIFY_SOURCE, gcc warns about a (void) cast alone (warn_unused_result) */
        (void) !write(*fd, buf, sizeof buf);
        *fd = safe_close(*fd);
        child_step_aside();
}

/* In a forked child: nothing of the daemon's but keep[0] and keep[1] (its report's pipe, or the
 * hook's connection; a standby's start), which become fds 3 and 4. Each is set to its new number, or
 * -EBADF when there was none or it could not be kept. */
static void child_detach(Daemon *d, int keep[static 2]) {
        log_forget_parent();
        bounded_child_forget_parent();
        d->lock_fd = safe_close(d->lock_fd); /* whatever the fallback of close_all_fds_but() reaches */
        (void) close_all_fds_but(keep, 2);
        /* a pass holds the knob open from its start, as one of its own (kernel-knob.h); nothing of
         * the daemon's (it holds none) */
        knob_keep_forget();
        (void) knob_keep_open(d->a->sysfs);
        if (d->child_nofile > 0)
                (void) setrlimit(RLIMIT_NOFILE, &(struct rlimit) { d->child_nofile, d->child_nofile });
}

/* What a child we exec needs of ours: --token= (with_token, when one was chosen),
 * --cycle-before-boottime= (before, when not 0) and each location the daemon was given that is not
 * the default (--state-dir=, review L, L4; --history-dir=, --config=, --root=, --sysfs=,
 * --debugfs=: a restore-knob or record-cycle of a daemon run on other locations wrote the default
 * ones). exec_opts_append() puts them on argv at *k, which has room for EXEC_OPTS_MAX more and a
 * NULL after them; -ENOMEM when one could not be written (the child must not run then: it would go
 * by the default location, review BF). */
#define EXEC_OPTS_MAX 8
typedef struct ExecOpts {
        char token[48];
        char before[48];
        char *loc[EXEC_OPTS_MAX - 2];
} ExecOpts;

static void exec_opts_done(ExecOpts *o) {
        for (size_t i = 0; i < ELEMENTSOF(o->loc); i++)
                o->loc[i] = mfree(o->loc[i]);
}

static int exec_opts_append(const Daemon *d, bool with_token, usec_t before, char **argv, size_t *k,
                            ExecOpts *o) {
        const Args *a = d->a;
        const struct {
                const char *opt, *value, *def;
        } locs[] = {
                { "--state-dir", a->state_dir, STATE_DIR_DEFAULT },
                { "--history-dir", a->history_dir, HISTORY_DIR_DEFAULT },
                { "--config", a->config, NULL },
                { "--root", a->root, "/" },
                { "--sysfs", a->sysfs, "/sys" },
                { "--debugfs", a->debugfs, "/sys/kernel/debug" },
        };
        _Static_assert(ELEMENTSOF(locs) == ELEMENTSOF(o->loc), "one text per location");

        if (with_token && d->pass_token[0] != 0) {
                (void) snprintf(o->token, sizeof o->token, "--token=%s", d->pass_token);
                argv[(*k)++] = o->token;
        }
        if (before != 0) {
                (void) snprintf(o->before, sizeof o->before, "--cycle-before-boottime=%" PRIu64, before);
                argv[(*k)++] = o->before;
        }
        for (size_t i = 0; i < ELEMENTSOF(locs); i++) {
                o->loc[i] = NULL;
                if (!locs[i].value || streq_ptr(locs[i].value, locs[i].def))
                        continue;
                if (asprintf(&o->loc[i], "%s=%s", locs[i].opt, locs[i].value) < 0) {
                        o->loc[i] = NULL;
                        return -ENOMEM;
                }
                argv[(*k)++] = o->loc[i];
        }
        return 0;
}

/* A new token for the next pass's mark (handover.h), "" when there is none to be had (the pass
 * makes its own, and its restore-knob ends whichever cycle stands, as the unit's does). */
static void token_new(char token[static 33]) {
        sd_id128_t id;

        if (sd_id128_randomize(&id) < 0)
                token[0] = 0;
        else
                (void) sd_id128_to_string(id, token);
}

/* The pass in the forked child: "suspend-sync run --trigger=unit --deadline-max=35s" as main.c runs
 * it, with the daemon's options, but without the exec. Our code and its libraries (libmount too,
 * mount_table_preload()) are in memory already; a fresh process spends 1-2 ms on loading them
 * (docs/PERFORMANCE.md), on the sleep path. Nothing of the daemon's goes with it: its fds are
 * closed (logind's lock among them, which must go with the daemon's own copy when the pass outlasts
 * the bound), its queued messages dropped, its bounded children forgotten, and the pass makes its
 * own event loop, as it does in a process of its own. Its command line still reads "suspend-sync
 * daemon" (ps, the journal's _CMDLINE); its record and messages say trigger "unit".
 * Its report goes on fd (or none: -EBADF); reader reads its configuration when one was forked
 * ahead (standby_child(); else NULL). */
_noreturn_ static void pass_run(Daemon *d, int fd, ConfReader *reader, const char *token) {
        int code = EXIT_FAILURE;
        bool recorded = false;
        Args a = *d->a;

        a.started = now(CLOCK_MONOTONIC);
        a.token = token[0] != 0 ? token : NULL;
        a.trigger = "unit";
        a.late = false;
        a.invocation_id = NULL; /* not systemd's pass: never waits for the state lock */
        a.sleep_action = NULL;
        a.deadline_max = DAEMON_PASS_DEADLINE_MAX;
        a.assumed_config = d->config;
        a.prepared_reader = &reader;
        log_set_object_unit(SUSPEND_SYNC_UNIT);
        log_set_deadline(a.started + context_deadline_bound(&a));
        /* The daemon may decide as soon as the pass's record and handover are saved and its state
         * lock released (RunDone), before the pass logs its outcome; a pass that failed before that
         * reports as it returns. */
        if (verb_run(&a, &(const RunDone) { .done = pass_report_send, .userdata = &fd }, &code, &recorded) <
            0)
                code = EXIT_FAILURE;
        pass_report_send(code, recorded, &fd);
        reader = conf_reader_free(reader); /* not taken: the pass failed before its configuration */
        (void) log_flush(LOG_FLUSH_WAIT);
        _exit(code);
}

_noreturn_ static void pass_child(Daemon *d) {
        int keep[2] = { d->report_wfd, -EBADF };

        child_detach(d, keep);
        pass_run(d, keep[0], NULL, d->pass_token);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#define STANDBY_MAPS_MAX (1024U * 1024U)

/* The standby's heap and stack made its own while it waits: the pass's first write to each of their
 * pages would fault, to copy one the daemon shares or to map a new zero page (page faults are dear
 * in a virtual machine: 0.5-2 ms of the pass's first steps there, docs/PERFORMANCE.md). Those two
 * only, as far as the daemon has grown them: every other private mapping populated too
 * (mlockall()) made a fork in the pass 1.5 ms slower. Best effort: before Linux 5.14 nothing. */
static void standby_prefault(void) {
        static const char *const names[] = { "[heap]", "[stack]" };
        _cleanup_free_ char *text = NULL;
        size_t size = 0;

        if (read_full_file_at(AT_FDCWD, "/proc/self/maps", STANDBY_MAPS_MAX, &text, &size) < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                uintptr_t start, end;

                if (proc_maps_find(text, size, names[i], &start, &end) >= 0)
                        (void) madvise((void *) start, end - start, MADV_POPULATE_WRITE);
        }
}

/* The next pass, forked off the sleep path (standby_fork()): it waits for its start, a byte on fd 4,
 * then runs as pass_child() would have had it been forked then. The fork's cost (the parent's
 * fork(), the child's first run: 3-3.6 ms of the signal's path on a loaded 2-CPU machine) is paid
 * before the sleep, and so is its configuration reader's (conf_read_prepare(): it reads when the
 * pass lets it go, its bound counted from then), and so are the copies of its heap and stack
 * (standby_prefault()). The daemon closing fd 4 (a new configuration, the daemon gone) ends it, and
 * its reader with it. */
_noreturn_ static void standby_child(Daemon *d) {
        int keep[2] = { d->report_wfd, d->start_rfd };
        ConfReader *reader = NULL;
        char comm[16] = "";
        int root_fd;
        ssize_t n;
        char c;

        /* Named apart while they wait (ps, pgrep -x suspend-sync: nothing of a pass runs yet), the
         * standby first, so that its reader is never named otherwise before its go (at which it
         * takes the pass's name). The unit's pass reads no system-sleep hooks. */
        (void) prctl(PR_GET_NAME, comm);
        (void) prctl(PR_SET_NAME, DAEMON_STANDBY_COMM);
        child_detach(d, keep);
        if (keep[1] < 0)
                _exit(EXIT_FAILURE);
        root_fd = open(d->a->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0 || conf_read_prepare(root_fd, d->a->config, false, DAEMON_STANDBY_COMM, &reader) < 0)
                reader = NULL;
        root_fd = safe_close(root_fd);
        standby_prefault();
        do
                n = recv(keep[1], &c, 1, 0);
        while (n < 0 && errno == EINTR);
        if (n != 1)
                _exit(EXIT_SUCCESS);
        (void) close(keep[1]);
        (void) prctl(PR_SET_NAME, comm);
        pass_run(d, keep[0], reader, d->standby_token);
}

/* ---- the late pass, for the system-sleep hook (hook-socket.h) ---------------------------------- */

_Static_assert(LATE_PASS_DEADLINE_MAX + HOOK_DONE_MARGIN <= HOOK_WAIT_MAX,
               "the hook must wait for the whole late pass");

/* The forked late pass's side of the hook's connection. */
typedef struct HookLate {
        int fd;       /* the connection, until "done" is sent */
        usec_t limit; /* CLOCK_MONOTONIC: the pass's limit, as told in the ack */
} HookLate;

/* RunDone.requester_waits: the hook is still connected, and the pass within the limit it was told. */
static bool late_requester_waits(void *userdata) {
        HookLate *h = userdata;

        return hook_requester_waits(h->fd, now(CLOCK_MONOTONIC), h->limit);
}

/* RunDone.done, and the answer of a pass that failed before its record: "done CODE", once. */
static void late_report_send(int code, bool recorded, void *userdata) {
        HookLate *h = userdata;
        char buf[HOOK_MSG_MAX];
        size_t n;

        if (h->fd < 0)
                return;
        n = hook_done_format(code, buf, sizeof buf);
        (void) send(h->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        h->fd = safe_close(h->fd);
        child_step_aside();
}

/* The late pass in the forked child: "suspend-sync pre ACTION" as the hook would exec it
 * (verb-hook.c), without the exec, with the code, libraries and caches of a warm process. Its first
 * act is the ack with its limit; if the hook is gone already (it gave up waiting and runs its own
 * pass), the send fails and nothing is done. The pass turns the kernel's own sync off only while the
 * hook still waits for it (late_requester_waits()). Its messages say trigger "hook", as from the hook. */
_noreturn_ static void late_child(Daemon *d) {
        int keep[2] = { d->late_conn_fd, -EBADF };
        HookLate h;
        int code = EXIT_FAILURE;
        char buf[HOOK_MSG_MAX];
        Args a = *d->a;
        size_t n;

        child_detach(d, keep);
        h = (HookLate) { .fd = keep[0] };
        a.started = now(CLOCK_MONOTONIC);
        a.trigger = "hook";
        a.late = true;
        a.invocation_id = NULL;
        a.sleep_action = hook_sleep_action(d->late_action, d->late_env_action);
        a.deadline_max = daemon_late_bound(d->deadline, LATE_PASS_DEADLINE_MAX);
        a.assumed_config = d->config;
        h.limit = a.started + a.deadline_max;
        n = hook_ack_format(h.limit, buf, sizeof buf);
        if (h.fd < 0 || send(h.fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) n)
                _exit(EXIT_FAILURE);
        log_set_object_unit(SUSPEND_SYNC_UNIT);
        log_set_deadline(a.started + context_deadline_bound(&a));
        if (verb_run(&a,
                     &(const RunDone) { .done = late_report_send,
                                        .requester_waits = late_requester_waits,
                                        .userdata = &h },
                     &code, NULL) < 0)
                code = EXIT_FAILURE;
        late_report_send(code, false, &h);
        (void) log_flush(LOG_FLUSH_WAIT);
        _exit(code);
}

/* The children spawn() killed, reaped if they have exited, never waited for (review O, O8): SIGKILL
 * is not instant, and a child stuck in the kernel (in D state, on a hung mount) dies only when it
 * returns; the daemon's event loop must not wait for that. sd-event reaps only the children it
 * watches (which these are not, a source for them having just failed): on_tidy() and the next
 * spawn() failure reap them; one that does not fit stays a zombie until we exit. */
static void unreaped_reap(Daemon *d) {
        for (size_t i = 0; i < ELEMENTSOF(d->unreaped); i++)
                if (d->unreaped[i] > 0 && waitpid(d->unreaped[i], NULL, WNOHANG) != 0)
                        d->unreaped[i] = 0; /* reaped, or not ours any more (ECHILD) */
}

static void unreaped_add(Daemon *d, pid_t pid) {
        unreaped_reap(d);
        if (waitpid(pid, NULL, WNOHANG) != 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(d->unreaped); i++)
                if (d->unreaped[i] == 0) {
                        d->unreaped[i] = pid;
                        return;
                }
        log_debug("PID " PID_FMT " stays a zombie once it exits, until the daemon exits.", pid);
}

/* Forks "suspend-sync ARGS..." (argv NULL: child(d), which never returns) with the environment of a
 * process no service manager started (a pass that saw our $INVOCATION_ID or $NOTIFY_SOCKET would
 * take this unit for its own). Its event source (callback) must unref itself. Returns the pid or a
 * negative errno. */
static pid_t spawn(Daemon *d, char *const *argv, void (*child)(Daemon *d),
                   sd_event_child_handler_t callback) {
        static const char *const vars[] = { "INVOCATION_ID", "NOTIFY_SOCKET",     "WATCHDOG_PID",
                                            "WATCHDOG_USEC", "RUNTIME_DIRECTORY", "MAINPID" };
        sd_event_source *s = NULL;
        pid_t pid;
        int r;

        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                sigset_t mask;

                (void) sigemptyset(&mask);
                (void) sigprocmask(SIG_SETMASK, &mask, NULL);
                for (size_t i = 0; i < ELEMENTSOF(vars); i++)
                        (void) unsetenv(vars[i]);
                if (!argv)
                        child(d);
                (void) execv(d->exe, argv);
                _exit(EXIT_FAILURE);
        }
        r = sd_event_add_child(d->event, &s, pid, WEXITED, callback, d);
        if (r < 0) { /* unwatched, it would never count as ended: not at all */
                (void) kill(pid, SIGKILL);
                unreaped_add(d, pid);
                return r;
        }
        return pid;
}

/* ---- before the pass ------------------------------------------------------------------------ */

/* WritebackFirst= and DeadlineSec=, read off the sleep path (at start, after each sleep, on SIGHUP)
 * in conf-read's bounded child. The pass reads the configuration again: a change made since costs
 * at most one early wake-up of the flusher threads, which the pass would make anyway, and the pass
 * is capped (DAEMON_PASS_DEADLINE_MAX) whatever DeadlineSec= says by then. The whole configuration
 * is kept too: the pass samples by it while its child reads the files again, and samples again
 * when they say otherwise (context_prepare()). c: the read just finished (r its result). */
static void policy_refresh_apply(Daemon *d, Context *c, int r) {
        d->config = policy_free(d->config);
        if (r < 0) {
                d->writeback_first = false;
                d->deadline = USEC_INFINITY; /* not known: no daemon pass */
                return;
        }
        d->writeback_first = c->policy->writeback_first;
        /* Not read in full: the defaults capped by the last full read's (conf-bounds.h), as its
         * passes cap theirs; read in full: recorded for them. */
        d->deadline = c->policy->deadline;
        r = context_save_bounds(d->a, c);
        if (r < 0)
                log_debug_errno(r, "Failed to write '%s/" CONF_BOUNDS_FILE "', ignoring: %m",
                                d->a->state_dir);
        d->config = TAKE_PTR(c->config);
}

static int on_tidy(sd_event_source *s, uint64_t usec, void *userdata);

/* A read ended: its child reaped, and the standby forked with the configuration just read, a second
 * later (on_tidy()). */
static void tidy_later(Daemon *d) {
        if (!d->tidy_timer)
                (void) sd_event_add_time_relative(d->event, &d->tidy_timer, CLOCK_MONOTONIC, USEC_PER_SEC, 0,
                                                  on_tidy, d);
}

/* At start, before READY=1: read while nothing is served yet. */
static void policy_refresh(Daemon *d) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;

        policy_refresh_apply(d, &c, context_read_policy(d->a, &c));
        tidy_later(d);
}

/* The read under way (policy_refresh_begin()) given up: its child killed and abandoned. */
static void policy_refresh_cancel(Daemon *d) {
        d->refresh_source = sd_event_source_disable_unref(d->refresh_source);
        d->refresh_timer = sd_event_source_disable_unref(d->refresh_timer);
        d->refresh = conf_reader_free(d->refresh);
        context_done(&d->refresh_ctx);
        d->refresh_ctx = CONTEXT_NULL;
}

static void policy_refresh_begin(Daemon *d);

/* The read ended with r: applied, what is left of it freed; the next one begun when one was asked
 * for meanwhile (policy_refresh_begin()). */
static void policy_refresh_done(Daemon *d, int r) {
        policy_refresh_apply(d, &d->refresh_ctx, r);
        policy_refresh_cancel(d);
        if (d->refresh_again) {
                log_debug("The configuration was asked for again while it was read: reading it again.");
                d->refresh_again = false;
                policy_refresh_begin(d);
        }
        tidy_later(d);
}

/* The reader answered, died or ran out of its bound, or could not be started (start_error). */
static void policy_refresh_end(Daemon *d, int start_error) {
        d->refresh_source = sd_event_source_disable_unref(d->refresh_source);
        d->refresh_timer = sd_event_source_disable_unref(d->refresh_timer);
        policy_refresh_done(d, context_read_policy_finish(d->a, &d->refresh_ctx, d->refresh, start_error));
}

static int on_refresh_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Daemon *d = userdata;

        if (conf_read_step(d->refresh) != -EAGAIN)
                policy_refresh_end(d, 0);
        return 0;
}

static int on_refresh_bound(sd_event_source *s, uint64_t usec, void *userdata) {
        policy_refresh_end(userdata, 0);
        return 0;
}

/* After each sleep and on SIGHUP: the configuration read again, without waiting for its reader
 * (review U, U5): a sleep announced meanwhile is handled at once, by the last configuration read
 * (its pass reads the files itself, with its own bound), and the reader is let finish. A read still
 * under way is let finish too, and the files read again when it ends (SIGHUP: they changed since it
 * began): not given up for a new one, since one stuck on a hung filesystem stays stuck once killed
 * (in D state, a zombie beyond the BOUNDED_CHILD_ABANDONED_MAX remembered), and a SIGHUP each would
 * pile them up against TasksMax= (review Y, Y1); one at a time, as when the loop waited for it. */
static void policy_refresh_begin(Daemon *d) {
        int k, r;

        if (d->refresh) {
                d->refresh_again = true;
                return;
        }
        policy_refresh_cancel(d);
        r = context_read_policy_start(d->a, &d->refresh_ctx, &d->refresh, &k);
        if (r < 0)
                return policy_refresh_done(d, r); /* the root: no configuration known */
        if (!d->refresh)
                return policy_refresh_end(d, k);
        r = sd_event_add_io(d->event, &d->refresh_source, conf_reader_fd(d->refresh), EPOLLIN | EPOLLET,
                            on_refresh_ready, d);
        if (r >= 0)
                r = sd_event_add_time(d->event, &d->refresh_timer, CLOCK_MONOTONIC,
                                      conf_reader_until(d->refresh), 1, on_refresh_bound, d);
        if (r < 0) {
                log_debug_errno(r, "Cannot wait for the configuration's reader on the event loop, "
                                   "waiting here: %m");
                return policy_refresh_end(d, 0);
        }
        /* Answered already (a fast read): what came before the watch. */
        if (conf_read_step(d->refresh) != -EAGAIN)
                policy_refresh_end(d, 0);
}

/* What the pass does first (WritebackFirst=, verb-run.c pass_kick_early()), done here as logind
 * announces the sleep: the data starts to the disks before the pass has even been forked. */
static void kick_flushers(Daemon *d) {
        if (d->writeback_first && verb_kick_worth(d->root_fd))
                (void) verb_kick_flushers(d->root_fd);
}

static void pass_answer(Daemon *d, bool force);
static int on_unit_facts(void *userdata);

/* logind's list of inhibitors: whether a program other than us holds a delay lock for sleep (its
 * work on PrepareForSleep may write after our pass): d->inhibitors 1 (its name in other_who), 0, or
 * a negative errno. */
static int on_inhibitors(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Daemon *d = userdata;
        const char *what, *who, *why, *mode;
        uint32_t uid, pid;
        int r;

        d->inhibitors_slot = sd_bus_slot_unref(d->inhibitors_slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                d->inhibitors = -(sd_bus_message_get_errno(m) ?: EIO);
                pass_answer(d, false);
                return 0;
        }
        r = sd_bus_message_enter_container(m, 'a', "(ssssuu)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(ssssuu)", &what, &who, &why, &mode, &uid, &pid)) > 0)
                if (streq(mode, "delay") && strstr(what, "sleep") && (pid_t) pid != getpid()) {
                        (void) snprintf(d->other_who, sizeof d->other_who, "%s", who);
                        r = 1;
                        break;
                }
        d->inhibitors = r;
        pass_answer(d, false);
        return 0;
}

/* The questions of pass_decide(), sent as the pass starts (what logind and PID 1 know while the
 * lock holds the sleep) and answered while it runs; an answer not in by then counts as none. */
static void ask(Daemon *d) {
        int r;

        d->other_who[0] = 0;
        d->inhibitors = -ETIMEDOUT;
        d->inhibitors_slot = sd_bus_slot_unref(d->inhibitors_slot);
        r = sd_bus_call_method_async(d->bus, &d->inhibitors_slot, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER,
                                     "ListInhibitors", on_inhibitors, d, NULL);
        if (r < 0)
                d->inhibitors = r;
        d->unit_facts = manager_unit_facts_free(d->unit_facts);
        r = manager_unit_facts_start(d->bus, SUSPEND_SYNC_UNIT, on_unit_facts, d, &d->unit_facts);
        if (r < 0)
                log_debug_errno(r, "Cannot ask PID 1 about " SUSPEND_SYNC_UNIT ": %m");
}

/* ---- the pass ------------------------------------------------------------------------------ */

/* Its record (last.json) is this pass's (a unit's pass begun after we started it) and says
 * "success": exit status 0 also covers timeouts with OnTimeout=continue, which the unit's pass, with
 * all of DeadlineSec=, might not have had. NULL when so, else why not. A forked pass says so in its
 * report (pass_recorded); its record is read back only where the pass is exec'd (measurement only):
 * json-c before 0.18 (Debian 12's 0.16) dies when an allocation fails while it parses a key (review
 * AS, AS-3), which the passes avoid by parsing no JSON, and so does the daemon (review BC). */
static const char *pass_record_why_not(const Daemon *d) {
        _cleanup_(run_record_done) RunRecord rec = {};
        bool has = false;

        if (d->pass_report_seen)
                return "its record was not saved, or does not say \"success\" (see its record)";
        if (!d->pass_exec)
                return "it exited without its report";
        if (state_load(d->a->state_dir, &rec, &has, NULL, NULL) < 0 || !has)
                return "its record cannot be read";
        return daemon_record_why_not(&rec, d->pass_last_pid, d->pass_started_boottime);
}

/* The facts of daemon_mark_why_not() as far as they are known (the record is read by pass_decide()). */
static DaemonPassFacts pass_facts(const Daemon *d, bool ended, int status) {
        return (DaemonPassFacts) {
                .ended = ended,
                .status = status,
                .same_sleep = d->sleeps == d->pass_sleeps,
                .required = manager_unit_facts_required(d->unit_facts),
                .unit_state = manager_unit_facts_active_state(d->unit_facts),
                .inhibitors = d->inhibitors,
                .other_who = d->other_who,
        };
}

/* HANDOVER_CYCLE_OWED_FILE (review BF, F5): the marked sleep's post steps are ours. Written after
 * the lock's release (tmpfs, off the sleep's path); a daemon that ends before its record-cycle has
 * run leaves it for the next one's start (post_steps_owed()). */
static void cycle_owed_write(Daemon *d) {
        _cleanup_close_ int dir_fd = open(d->a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* the pass's record saved, so the cycle began before now; the next one cannot have */
        int r = dir_fd < 0 ? negative_errno()
                           : handover_cycle_owed_write(dir_fd, d->pass_token, now(CLOCK_BOOTTIME));

        if (r < 0)
                log_debug_errno(r, "Cannot note this sleep's post steps as ours (a restart before them "
                                   "leaves its cycle unrecorded): %m");
}

static void cycle_owed_remove(Daemon *d) {
        _cleanup_close_ int dir_fd = open(d->a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dir_fd >= 0)
                (void) handover_cycle_owed_remove(dir_fd);
}

/* The pass ended (ended, its status) or its bound passed: mark or not, and release the lock of the
 * sleep it was started for (a later sleep's lock, taken again meanwhile, stays). */
static void pass_decide(Daemon *d, bool ended, int status) {
        usec_t n = now(CLOCK_MONOTONIC);
        DaemonPassFacts f = pass_facts(d, ended, status);
        char t[FORMAT_TIMESPAN_MAX], buf[128];
        const char *why;
        int r;

        d->pass_timer = sd_event_source_disable_unref(d->pass_timer);
        d->answers_timer = sd_event_source_disable_unref(d->answers_timer);
        d->pass_waiting = false;
        /* A forked pass that reported its record saved with "success" need not be read back. */
        if (ended && status == 0)
                f.record = d->pass_recorded ? NULL : pass_record_why_not(d);
        d->pass_recorded = d->pass_report_seen = false;
        why = daemon_mark_why_not(&f, buf, sizeof buf);
        r = why ? 0 : mark_create();
        if (!why && r >= 0)
                d->marked = true;
        /* The mark first (systemd reads it once logind goes on), then the lock, then the log. */
        if (f.same_sleep)
                lock_release(d);
        (void) format_timespan(t, sizeof t, n > d->pass_started ? n - d->pass_started : 0);
        if (why)
                log_notice("The pass %s %s; %s: suspend-sync.service runs its own.",
                           ended ? "took" : "is still running after", t, why);
        else if (r < 0)
                log_warning_errno(r, "Failed to create " DAEMON_PASS_MARK
                                     ", suspend-sync.service runs its own pass: %m");
        else
                log_info("The pass took %s; suspend-sync.service is not needed for this sleep.", t);
        if (d->marked)
                cycle_owed_write(d);
        d->inhibitors_slot = sd_bus_slot_unref(d->inhibitors_slot);
        d->unit_facts = manager_unit_facts_free(d->unit_facts);
}

/* Whether the decision of a pass that has exited no longer depends on an answer still to come: all
 * are in, or what is known withholds the mark whatever the rest says (those still out taken as
 * favourable). */
static bool pass_settled(const Daemon *d) {
        bool inhibitors = d->inhibitors == -ETIMEDOUT, unit = manager_unit_facts_pending(d->unit_facts);
        DaemonPassFacts f = pass_facts(d, d->pass_ended, d->pass_status);
        char buf[128];

        if (!inhibitors && !unit)
                return true;
        if (inhibitors)
                f.inhibitors = 0;
        if (unit && f.required == -ETIMEDOUT)
                f.required = 0;
        if (unit && !f.unit_state)
                f.unit_state = "inactive";
        return daemon_mark_why_not(&f, buf, sizeof buf) != NULL;
}

/* An answer came (or a PrepareForSleep, or the wait's end): decide when the exited pass waited for
 * it. */
static void pass_answer(Daemon *d, bool force) {
        if (d->pass_waiting && (force || pass_settled(d)))
                pass_decide(d, d->pass_ended, d->pass_status);
}

static int on_unit_facts(void *userdata) {
        pass_answer(userdata, false);
        return 0;
}

/* The exited pass has waited DAEMON_ANSWERS_WAIT for its answers: what is missing counts as none. */
static int on_answers_wait(sd_event_source *s, uint64_t usec, void *userdata) {
        pass_answer(userdata, true);
        return 0;
}

static void pass_report_close(Daemon *d) {
        d->report_source = sd_event_source_disable_unref(d->report_source); /* owns the fd */
}

/* The standby pass (standby_fork()) given up: our ends closed, it exits (on_child_exit() reaps it). */
static void standby_discard(Daemon *d) {
        d->standby_pid = 0;
        d->standby_start_fd = safe_close(d->standby_start_fd);
        d->standby_report_fd = safe_close(d->standby_report_fd);
}

/* The pass ended (its report, or its exit without one) with this status: decide now, or once the
 * answers are in. */
static void pass_ended_with(Daemon *d, int status) {
        int r;

        /* Ended in time only if before the bound, whichever of the two sd-event dispatches first. */
        d->pass_exited_at = now(CLOCK_MONOTONIC);
        d->pass_ended = d->pass_exited_at < d->pass_started + daemon_pass_bound(d->delay_max);
        d->pass_status = status;
        d->pass_waiting = true;
        if (pass_settled(d)) {
                pass_decide(d, d->pass_ended, d->pass_status);
                return;
        }
        /* The answers are dispatched by the event loop like the exit: they may come just after it. */
        r = sd_event_add_time(d->event, &d->answers_timer, CLOCK_MONOTONIC,
                              MIN(d->pass_exited_at + DAEMON_ANSWERS_WAIT,
                                  d->pass_started + daemon_pass_bound(d->delay_max)),
                              1, on_answers_wait, d);
        if (r < 0)
                pass_answer(d, true);
}

/* The child's report: what its exit would say, before its messages, log flush and exit. Anything
 * but a whole report (it died first, or the bound decided already) leaves it to the exit. */
static int on_pass_report(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        unsigned char buf[DAEMON_REPORT_SIZE + 1];
        Daemon *d = userdata;
        bool recorded;
        ssize_t n;
        int code;

        n = read(fd, buf, sizeof buf);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        pass_report_close(d);
        if (n < 0 || d->pass_decided || daemon_report_parse(buf, (size_t) n, &code, &recorded) < 0)
                return 0;
        d->pass_reported = d->pass_report_seen = true;
        d->pass_recorded = recorded;
        pass_ended_with(d, code);
        return 0;
}

/* The pass's exit, or a standby's (discarded, or gone before its start): only reaped. */
static int on_child_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Daemon *d = userdata;
        bool decided;

        sd_event_source_unref(s);
        /* The report written before the exit may wait in its pipe still (sd-event dispatched the exit
         * first): taken before the exit decides (which would not know what it says). */
        if (si->si_pid == d->pass_pid && d->pass_pid != 0 && !d->pass_decided && !d->pass_reported &&
            d->report_source)
                (void) on_pass_report(d->report_source, sd_event_source_get_io_fd(d->report_source), EPOLLIN,
                                      d);
        decided = d->pass_decided || d->pass_reported;
        if (si->si_pid != d->pass_pid) {
                if (si->si_pid == d->standby_pid) {
                        log_debug("The standby pass (PID " PID_FMT ") is gone, the next pass is forked on "
                                  "the signal.",
                                  si->si_pid);
                        standby_discard(d);
                }
                return 0;
        }
        pass_report_close(d);
        d->pass_pid = 0;
        d->pass_decided = d->pass_reported = false;
        if (decided)
                return 0;
        pass_ended_with(d, si->si_code == CLD_EXITED ? si->si_status : -1);
        return 0;
}

/* logind sleeps after InhibitDelayMaxSec= whatever we do: release the lock before. The pass goes on
 * with its own deadline; the unit waits for its state lock and then runs its own. */
static int on_pass_bound(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        if (d->pass_waiting) { /* it exited and waits for answers: decide with what came */
                pass_answer(d, true);
                return 0;
        }
        d->pass_decided = true;
        pass_decide(d, false, -1);
        return 0;
}

/* The report's pipe of a forked pass: the read end watched, the write end for pass_child(). */
/* The report's read end watched, the source owning it (closed when it cannot be watched). */
static int pass_report_watch(Daemon *d, int fd) {
        int r = sd_event_add_io(d->event, &d->report_source, fd, EPOLLIN, on_pass_report, d);

        if (r < 0) {
                safe_close(fd);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(d->report_source, true);
        return 0;
}

static int pass_report_open(Daemon *d) {
        int fds[2], r;

        if (d->pass_exec)
                return 0;
        if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
                return negative_errno();
        r = pass_report_watch(d, fds[0]);
        if (r < 0) {
                safe_close(fds[1]);
                return r;
        }
        d->report_wfd = fds[1];
        return 0;
}

/* ---- the standby: the next pass forked ahead (standby_child()) ------------------------------ */

/* Off the sleep path (at start, before READY=1; on_tidy(), a second after the daemon read its
 * configuration again after each sleep and on SIGHUP): the next pass, forked now with what the
 * daemon knows now. Not where the pass is exec'd, while a pass or a late pass runs, during a sleep
 * (PrepareForSleep(true) to (false): that fork would be on the sleep's path), or while the
 * configuration is unknown (no pass of ours then). One that could not be forked, or is gone, is
 * forked at the next of those. */
static void standby_fork(Daemon *d) {
        int start[2] = { -EBADF, -EBADF }, report[2] = { -EBADF, -EBADF };
        pid_t pid;

        if (d->no_standby || d->pass_exec || d->standby_pid != 0 || d->pass_pid != 0 || d->late_pid != 0 ||
            d->sleeping || d->refresh || d->deadline == USEC_INFINITY)
                return;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, start) < 0 ||
            pipe2(report, O_CLOEXEC | O_NONBLOCK) < 0) {
                log_debug_errno(errno, "No standby pass, the pass is forked on the signal: %m");
                for (size_t i = 0; i < 2; i++) {
                        safe_close(start[i]);
                        safe_close(report[i]);
                }
                return;
        }
        d->report_wfd = report[1];
        d->start_rfd = start[1];
        token_new(d->standby_token);
        pid = spawn(d, NULL, standby_child, on_child_exit);
        d->report_wfd = safe_close(d->report_wfd);
        d->start_rfd = safe_close(d->start_rfd);
        if (pid < 0) {
                log_debug_errno(pid, "No standby pass, the pass is forked on the signal: %m");
                safe_close(start[0]);
                safe_close(report[0]);
                return;
        }
        d->standby_pid = pid;
        d->standby_start_fd = start[0];
        d->standby_report_fd = report[0];
        log_debug("The next pass waits in PID " PID_FMT ".", pid);
}

/* The standby started as this sleep's pass, its report watched: its pid, or 0 when there is none or
 * it could not be started (gone meanwhile: its end of the socket closed), for a fork. */
static pid_t standby_start(Daemon *d) {
        pid_t pid = d->standby_pid;
        int r;

        if (pid == 0)
                return 0;
        r = pass_report_watch(d, TAKE_FD(d->standby_report_fd));
        if (r >= 0 && send(d->standby_start_fd, "s", 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
                r = negative_errno();
        if (r < 0) {
                log_debug_errno(r, "The standby pass (PID " PID_FMT ") cannot start, forking one: %m", pid);
                pass_report_close(d);
                standby_discard(d);
                return 0;
        }
        d->standby_pid = 0;
        d->standby_start_fd = safe_close(d->standby_start_fd);
        return pid;
}

/* Whether our binary was replaced since we started (an upgrade that did not restart us): its passes,
 * forked from us, would run the old code, which may lack what the new one fixed (reviews AH, M1; AI,
 * AI-1): the file at exe_path is another one than we run (renamed over, the old one still linked or
 * not; a symlink switched; a bind mount or an overlay over it; or we were started from another
 * binary than the installed one), or none. Then the unit's pass and the hook's own run the installed
 * binary, until a restart. Not known counts as replaced. Each kind said once. */
static bool daemon_replaced(Daemon *d) {
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = proc_fd < 0    ? negative_errno()
                : !d->exe_path ? -ENOENT
                               : proc_exe_is(proc_fd, 0, d->exe_path);

        if (r > 0)
                return false;
        if ((r == 0 || r == -ENOENT) && !d->replaced_told) {
                log_warning("%s is not the binary this daemon runs (an upgrade replaced it since the daemon "
                            "started?): the passes of every sleep are left to suspend-sync.service and the "
                            "system-sleep hook, which run it, until the daemon is restarted "
                            "(systemctl restart suspend-sync-daemon.service).",
                            d->exe_path ?: "our binary");
                d->replaced_told = true;
        } else if (r < 0 && r != -ENOENT && !d->unknown_told) {
                log_warning_errno(r,
                                  "Cannot tell whether %s is the binary this daemon runs: the passes of this "
                                  "sleep are left to suspend-sync.service and the system-sleep hook: %m",
                                  d->exe_path ?: "our binary");
                d->unknown_told = true;
        }
        return true;
}

static void pass_start(Daemon *d) {
        char *argv[4 + EXEC_OPTS_MAX + 1] = { (char *) "suspend-sync", (char *) "run",
                                              (char *) "--trigger=unit" };
        _cleanup_(exec_opts_done) ExecOpts eo = {};
        char opt[64], buf[128];
        DaemonStartFacts f = {
                .bound = daemon_pass_bound(d->delay_max),
                .deadline = d->deadline,
                .unread = !d->config,
                .busy = d->pass_pid != 0 || d->post_pid != 0 || d->pass_timer,
                .replaced = daemon_replaced(d),
        };
        const char *why;
        pid_t pid;
        int r;

        /* logind's wait began with its signal: so does ours. */
        d->pass_started = now(CLOCK_MONOTONIC);
        d->pass_started_boottime = now(CLOCK_BOOTTIME);
        d->pass_last_pid = 0;
        d->pass_sleeps = d->sleeps;
        why = daemon_pass_why_not(&f, buf, sizeof buf);
        if (why) {
                log_notice("No pass of ours for this sleep (%s): suspend-sync.service runs it.", why);
                return lock_release(d);
        }
        /* The data starts to the disks first, then the pass, which is what logind waits for (not
         * the other way round: the pass wakes the flushers too, and one of two wake-ups at once
         * fails, -EBUSY, which costs the pass its DeferCommit=); the questions go out while it runs
         * (their answers came as it ended anyway, and sending them first delayed the pass: each
         * send wakes the bus and its peers on the sleep path). What they ask is known as of when
         * logind and PID 1 handle them, a few hundred µs later than before: our lock holds
         * the sleep meanwhile, and another program's delay lock released in between is one that
         * would have been released before our pass ended. */
        kick_flushers(d);
        pass_report_close(d);
        d->pass_reported = d->pass_recorded = d->pass_report_seen = false;
        pid = standby_start(d);
        if (pid > 0)
                memcpy(d->pass_token, d->standby_token, sizeof d->pass_token);
        else
                token_new(d->pass_token);
        if (pid == 0 && d->pass_exec) {
                size_t k = 3;

                (void) snprintf(opt, sizeof opt, "--deadline-max=%" PRIu64 "us",
                                (uint64_t) DAEMON_PASS_DEADLINE_MAX);
                argv[k++] = opt;
                pid = exec_opts_append(d, true, 0, argv, &k, &eo);
        }
        if (pid == 0) {
                r = pass_report_open(d);
                if (r < 0)
                        log_debug_errno(r, "No report from the pass, its exit decides: %m");
                pid = spawn(d, d->pass_exec ? argv : NULL, pass_child, on_child_exit);
                d->report_wfd = safe_close(d->report_wfd);
        }
        if (pid < 0) {
                pass_report_close(d);
                log_warning_errno(pid, "Failed to start the pass, suspend-sync.service runs it: %m");
                return lock_release(d);
        }
        d->pass_pid = d->pass_last_pid = pid;
        ask(d);
        log_debug("The pass of this sleep runs in PID " PID_FMT ".", pid);
        r = sd_event_add_time(d->event, &d->pass_timer, CLOCK_MONOTONIC, d->pass_started + f.bound, 1,
                              on_pass_bound, d);
        if (r < 0) {
                log_warning_errno(r, "Failed to arm the pass's bound, not waiting for it: %m");
                d->pass_decided = true;
                pass_decide(d, false, -1);
        }
}

/* ---- after a sleep the mark stood for: the unit's ExecStopPost= steps, each bounded ------------ */

static int on_post_exit(sd_event_source *s, const siginfo_t *si, void *userdata);
static void knob_leftover_restore(Daemon *d, const char *why);

static int on_post_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        char x[FORMAT_TIMESPAN_MAX];

        log_warning("'%s' did not end within %s, killing it.",
                    d->post_recorded ? "record-cycle" : "restore-knob",
                    format_timespan(x, sizeof x, DAEMON_POST_TIMEOUT));
        (void) kill(d->post_pid, SIGKILL);
        return 0;
}

/* restore-knob ends the cycle of our pass's token only: when it runs late, the next sleep's unit pass
 * may have begun, and that pass's mark and record are its own (handover_unit_mark_end()).
 * A step that cannot be started (review BF: an allocation failed, or fork()) is said, never run
 * without the daemon's locations: for restore-knob the knob is put back here, as a leftover (the
 * knob only; the next pass ends the cycle as left over), and record-cycle is run all the same. */
static void post_step(Daemon *d, const char *verb) {
        char *argv[2 + EXEC_OPTS_MAX + 1] = { (char *) "suspend-sync", (char *) verb };
        _cleanup_(exec_opts_done) ExecOpts eo = {};
        bool restore = streq(verb, "restore-knob");
        size_t k = 2;
        pid_t pid;

        d->post_timer = sd_event_source_disable_unref(d->post_timer);
        /* its pass's token (restore-knob), the daemon's locations */
        pid = exec_opts_append(d, restore, restore ? 0 : d->post_before, argv, &k, &eo);
        if (pid >= 0)
                pid = spawn(d, argv, NULL, on_post_exit);
        d->post_pid = pid > 0 ? pid : 0;
        if (pid < 0) {
                log_warning_errno(pid, "Failed to run '%s' after the sleep%s: %m", verb,
                                  restore ? ", putting back the knob it would have"
                                          : ", this sleep's cycle is not recorded");
                if (restore) {
                        knob_leftover_restore(d, "restore-knob could not be run");
                        d->post_recorded = true;
                        post_step(d, "record-cycle");
                } else
                        cycle_owed_remove(d);
                return;
        }
        log_debug("'%s' runs in PID " PID_FMT ".", verb, pid);
        if (sd_event_add_time_relative(d->event, &d->post_timer, CLOCK_MONOTONIC, DAEMON_POST_TIMEOUT, 0,
                                       on_post_timeout, d) < 0)
                log_debug("No bound on '%s'.", verb);
}

/* After restore-knob, record-cycle; a restore-knob that failed (its exec, the knob's write, killed
 * at its bound) is followed by the knob put back here, as a leftover (review BG, F-3). After
 * record-cycle, whatever its end, the cycle owes us nothing more. */
static int on_post_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Daemon *d = userdata;

        sd_event_source_unref(s);
        d->post_pid = 0;
        d->post_timer = sd_event_source_disable_unref(d->post_timer);
        if (d->post_recorded) {
                cycle_owed_remove(d);
                return 0;
        }
        if (si->si_code != CLD_EXITED || si->si_status != 0)
                knob_leftover_restore(d, "restore-knob failed");
        d->post_recorded = true;
        post_step(d, "record-cycle");
        return 0;
}

/* The configuration reader's child (conf-read, shared/bounded-child) is reaped by the next call; a
 * resident process reaps it a little after, so that no zombie waits for the next sleep. Then the
 * standby, forked with the configuration just read. */
static int on_tidy(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        d->tidy_timer = sd_event_source_disable_unref(d->tidy_timer);
        (void) bounded_child_abandoned(0, NULL);
        unreaped_reap(d);
        standby_fork(d);
        return 0;
}

/* The configuration read again: the standby, forked with the last one, replaced a second after
 * the read ends (policy_refresh_end()). */
static void policy_refresh_tidy(Daemon *d) {
        standby_discard(d);
        policy_refresh_begin(d);
}

/* ---- the hook's requests -------------------------------------------------------------------- */

static int on_late_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Daemon *d = userdata;

        sd_event_source_unref(s);
        d->late_pid = 0;
        return 0;
}

/* The request of the connection waiting: a late pass forked for it, or (malformed, another late
 * pass still running, the fork failed) the connection closed, and the hook runs its own pass. */
static int on_hook_request(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char buf[HOOK_MSG_MAX];
        Daemon *d = userdata;
        pid_t pid;
        ssize_t n;

        n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0 || hook_request_parse(buf, (size_t) n, d->late_action, d->late_env_action) < 0)
                log_debug("A malformed request on " HOOK_SOCKET_PATH ", ignoring it.");
        else if (d->late_pid != 0)
                log_notice("A late pass of ours still runs (PID " PID_FMT "): the system-sleep hook runs "
                           "its own.",
                           d->late_pid);
        else if (daemon_replaced(d))
                log_notice("Not taking the late pass: this daemon does not run the installed binary (see "
                           "above), the system-sleep hook runs its own.");
        else {
                d->late_conn_fd = fd;
                pid = spawn(d, NULL, late_child, on_late_exit);
                d->late_conn_fd = -EBADF;
                if (pid < 0)
                        log_warning_errno(pid, "Failed to start the late pass, the system-sleep hook runs "
                                               "its own: %m");
                else {
                        d->late_pid = pid;
                        /* After the fork: the pass runs meanwhile. */
                        log_info("The late pass of this sleep runs in PID " PID_FMT
                                 ", for the system-sleep hook.",
                                 pid);
                }
        }
        /* The child has its copy: ours goes (the source owns it). */
        d->hook_conn_source = sd_event_source_disable_unref(d->hook_conn_source);
        return 0;
}

/* A connection on the hook's socket: root's only (the socket is 0600 too), one waiting for its
 * request at a time (a newer one replaces it, so nothing here grows). */
static int on_hook_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        _cleanup_close_ int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        Daemon *d = userdata;
        struct ucred cred;
        socklen_t len = sizeof cred;
        int r;

        if (conn < 0)
                return 0;
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != 0) {
                log_debug("A connection on " HOOK_SOCKET_PATH " not from root, closing it.");
                return 0;
        }
        d->hook_conn_source = sd_event_source_disable_unref(d->hook_conn_source);
        r = sd_event_add_io(d->event, &d->hook_conn_source, conn, EPOLLIN, on_hook_request, d);
        if (r < 0) {
                /* closed without an ack: the hook runs its own pass, which must not go unsaid */
                log_warning_errno(r, "Cannot wait for a request on " HOOK_SOCKET_PATH
                                     ", closing it: the system-sleep hook runs its own late pass: %m");
                return 0;
        }
        (void) sd_event_source_set_io_fd_own(d->hook_conn_source, true);
        TAKE_FD(conn);
        return 0;
}

/* The socket the system-sleep hook asks on (hook-socket.h), in our RuntimeDirectory=, mode 0600.
 * Without it the hook runs the late pass itself, as without the daemon. */
static int hook_listen(Daemon *d) {
        union {
                struct sockaddr sa;
                struct sockaddr_un un;
        } sa = { .un.sun_family = AF_UNIX, .un.sun_path = HOOK_SOCKET_PATH };
        _cleanup_close_ int fd = -EBADF;
        mode_t mask;
        int r;

        _Static_assert(sizeof HOOK_SOCKET_PATH <= sizeof sa.un.sun_path, "socket path too long");
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        if (unlink(HOOK_SOCKET_PATH) < 0 && errno != ENOENT)
                return negative_errno();
        mask = umask(0077);
        r = bind(fd, &sa.sa, offsetof(struct sockaddr_un, sun_path) + sizeof HOOK_SOCKET_PATH);
        (void) umask(mask);
        if (r < 0 || listen(fd, 4) < 0)
                return negative_errno();
        r = sd_event_add_io(d->event, &d->hook_source, fd, EPOLLIN, on_hook_accept, d);
        if (r < 0)
                return r;
        (void) sd_event_source_set_io_fd_own(d->hook_source, true);
        TAKE_FD(fd);
        return 0;
}

/* ---- a knob left changed by a sleep whose end nothing of ours saw ---------------------------- */

/* Review AW, H1: the daemon's pass stood for the unit (no ExecStopPost=), systemd-sleep ended without
 * its post hook (killed in its state write), and the daemon that made the mark was stopped or
 * restarted meanwhile: nothing put the knob back, and it stayed 0 until the next pass of ours. Outside
 * a sleep a record of the original is always such a leftover (a late pass writes it in a sleep, the
 * restore after it removes it). So at the start, when logind says no sleep is under way, and after
 * every sleep, the record alone is put back: the knob only, in this process (bounded by the knob's
 * lock wait); the unit's record of that sleep is left to the next pass, which ends it as left over. */
static void knob_leftover_restore(Daemon *d, const char *why) {
        _cleanup_close_ int dir_fd = open(d->a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC),
                            sysfs_fd = -EBADF;

        if (dir_fd >= 0 && faccessat(dir_fd, KNOB_RECORD_FILE, F_OK, 0) < 0 && errno == ENOENT)
                return; /* nothing of ours to put back */
        sysfs_fd = open(d->a->sysfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sysfs_fd < 0)
                log_warning_errno(negative_errno(), "Failed to open '%s': %m", d->a->sysfs);
        (void) verb_knob_restore(sysfs_fd, d->a->state_dir, KNOB_LOCK_WAIT_RESTORE_USEC, why);
}

/* Review BF, F5: the daemon before us marked a sleep and ended before its record-cycle for it (an
 * allocation failed inside sd-bus at PrepareForSleep(false), a stop or crash at the resume): no
 * ExecStopPost= records that cycle, since the unit did not run. Its HANDOVER_CYCLE_OWED_FILE says so
 * (the unit-pass mark does not: the post hook's restore-knob removes it before logind's signal,
 * review BG, F-1). What the dead daemon would have run runs now: restore-knob for its token when
 * that pass's mark still stands (no post hook ran: the late pass left out, or systemd-sleep died),
 * then record-cycle (which records a cycle once). always: record-cycle also when nothing is owed.
 * The caller has put a knob left over back (review BG, F-3). */
static void post_steps_owed(Daemon *d, bool always) {
        _cleanup_close_ int dir_fd = open(d->a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char owed[33], mark[33];
        bool is_owed, mark_stands;
        usec_t before = 0;

        is_owed = dir_fd >= 0 && handover_cycle_owed_read(dir_fd, owed, &before) >= 0;
        if (!is_owed && !always)
                return;
        /* that sleep's cycle, not one begun since (a sleep logind did not start: review BG, F-4) */
        if (is_owed)
                d->post_before = before;
        mark_stands = is_owed && handover_unit_mark_read(dir_fd, mark) >= 0 && streq(mark, owed);
        if (is_owed)
                log_info("The daemon before this one ended after marking a sleep and before recording its "
                         "cycle: running %s now.",
                         mark_stands ? "restore-knob and record-cycle" : "record-cycle");
        if (mark_stands)
                memcpy(d->pass_token, owed, sizeof owed);
        d->post_recorded = !mark_stands;
        post_step(d, mark_stands ? "restore-knob" : "record-cycle");
}

/* Review BG, F-4: logind's "no sleep under way" does not cover a sleep it did not start (systemctl
 * start suspend.target) or the unit's ExecStopPost= still running after one, where what is owed
 * would run beside the unit's own steps. PID 1's ActiveState of the unit tells: the steps wait while
 * it is neither inactive nor failed (asked again DAEMON_OWED_RETRY later, DAEMON_OWED_TRIES times),
 * and run when it is, or when PID 1 gives no answer (they end a cycle once). A sleep of logind's
 * begun meanwhile cancels the wait: the note stays for the next start. */
static void owed_cancel(Daemon *d) {
        d->owed_facts = manager_unit_facts_free(d->owed_facts);
        d->owed_timer = sd_event_source_disable_unref(d->owed_timer);
}

static int on_owed_timer(sd_event_source *s, uint64_t usec, void *userdata);

static int on_owed_facts(void *userdata) {
        Daemon *d = userdata;
        const char *state;
        bool busy;
        int r;

        if (manager_unit_facts_pending(d->owed_facts))
                return 0;
        state = manager_unit_facts_active_state(d->owed_facts);
        busy = state && !STR_IN_SET(state, "inactive", "failed");
        if (busy && ++d->owed_tries < DAEMON_OWED_TRIES) {
                if (d->owed_tries == 1)
                        log_info("A cycle the daemon before this one marked is owed its post steps, but "
                                 "%s is %s: they wait for it.",
                                 SUSPEND_SYNC_UNIT, state);
                r = sd_event_add_time_relative(d->event, &d->owed_timer, CLOCK_MONOTONIC, DAEMON_OWED_RETRY,
                                               0, on_owed_timer, d);
                d->owed_facts = manager_unit_facts_free(d->owed_facts);
                if (r >= 0)
                        return 0;
                log_debug_errno(r, "Cannot wait for %s: running the post steps owed now: %m",
                                SUSPEND_SYNC_UNIT);
        } else if (busy)
                log_notice("%s is still %s after %u tries: running the post steps owed all the same.",
                           SUSPEND_SYNC_UNIT, state, d->owed_tries);
        else if (!state)
                log_debug("PID 1 did not say whether %s runs: running the post steps owed.",
                          SUSPEND_SYNC_UNIT);
        owed_cancel(d);
        if (!d->sleeping && d->post_pid == 0 && d->lock_fd >= 0)
                post_steps_owed(d, false);
        return 0;
}

static void owed_check(Daemon *d) {
        _cleanup_close_ int dir_fd = open(d->a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char token[33];
        int r;

        owed_cancel(d);
        if (dir_fd < 0 || handover_cycle_owed_read(dir_fd, token, NULL) < 0)
                return; /* nothing owed (an unreadable note: post_steps_owed() would not run either) */
        r = manager_unit_facts_start(d->bus, SUSPEND_SYNC_UNIT, on_owed_facts, d, &d->owed_facts);
        if (r < 0) {
                log_debug_errno(r, "Cannot ask PID 1 whether %s runs: running the post steps owed: %m",
                                SUSPEND_SYNC_UNIT);
                post_steps_owed(d, false);
        }
}

static int on_owed_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        d->owed_timer = sd_event_source_disable_unref(d->owed_timer);
        owed_check(d);
        return 0;
}

/* At the start: logind's PreparingForSleep. A sleep under way (or no answer): the restore waits for
 * its end, the next PrepareForSleep(false). */
static void knob_leftover_at_start(Daemon *d) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int preparing = 1, r;

        r = sd_bus_get_property_trivial(d->bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "PreparingForSleep",
                                        &error, 'b', &preparing);
        if (r < 0)
                log_debug_errno(r,
                                "Cannot ask logind whether a sleep is under way (%s): a knob left changed is "
                                "put back after the next sleep.",
                                error.message ?: "no message");
        else if (!preparing) {
                knob_leftover_restore(d, "left over from a sleep that ended without suspend-sync seeing it");
                /* with our lock: a sleep asked for meanwhile waits for our PrepareForSleep(true), and
                 * a restore-knob still running then ends that token's cycle only */
                if (d->lock_fd >= 0)
                        owed_check(d);
        }
        if (r < 0 || preparing)
                d->joined_in_sleep = true;
}

/* ---- logind's signal ----------------------------------------------------------------------- */

static int on_prepare_for_sleep(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Daemon *d = userdata;
        int start, r;

        r = sd_bus_message_read(m, "b", &start);
        if (r < 0)
                return 0;
        d->sleeps++;
        d->sleeping = start;
        /* A pass that exited and waits for its answers belongs to the sleep before: decided now
         * (another sleep, so no mark, and the lock, if taken again meanwhile, stays). */
        pass_answer(d, true);
        r = mark_remove();
        if (r < 0)
                log_warning_errno(r, "Failed to remove " DAEMON_PASS_MARK ": %m");
        if (start) {
                d->marked = false;
                d->joined_in_sleep = false; /* this one it sees from its start */
                if (d->owed_facts || d->owed_timer)
                        log_debug("A sleep begins: the post steps owed wait for the next start.");
                owed_cancel(d);
                if (d->refresh)
                        log_debug("The configuration is still being read: this sleep goes by the one read "
                                  "before.");
                if (d->lock_fd < 0)
                        return 0; /* nothing of ours delays this sleep: the unit runs */
                pass_start(d);
                return 0;
        }
        if (d->post_pid == 0)
                d->post_before = now(CLOCK_BOOTTIME);
        if (d->marked && d->post_pid == 0) {
                d->post_recorded = false;
                post_step(d, "restore-knob");
        } else {
                /* not our mark's sleep: the unit's ExecStopPost= or the post hook restores it, unless
                 * neither ran (review AW, H1); or our mark's, while the restore-knob of the sleep
                 * before still runs (review AZ, AZ-5) */
                knob_leftover_restore(d, "left over from a sleep that ended without its post hook");
                /* Started during this sleep: the daemon before us may have marked it, and then no
                 * ExecStopPost= records its cycle (review AW, L2). record-cycle records a cycle once,
                 * so one that the unit's ExecStopPost= records too is not recorded twice. Its note
                 * says whether it did; with that pass's mark still standing (no post hook ran),
                 * restore-knob ends its cycle first (review BG, F-5). */
                if (d->joined_in_sleep && !d->marked && d->post_pid == 0) {
                        log_debug("Started during this sleep, so whose mark stood for it is not known: "
                                  "recording its cycle.");
                        post_steps_owed(d, true);
                }
        }
        d->marked = false;
        d->joined_in_sleep = false;
        relock(d);
        policy_refresh_tidy(d);
        return 0;
}

/* SIGHUP (systemctl reload): the configuration again. */
static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        policy_refresh_tidy(userdata);
        return 0;
}

/* ---- the verb ------------------------------------------------------------------------------ */

static int daemon_connect(Daemon *d) {
        int r;

        r = sd_bus_open_system(&d->bus);
        if (r >= 0)
                r = sd_bus_attach_event(d->bus, d->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_set_exit_on_disconnect(d->bus, true);
        if (r >= 0) /* logind that does not answer must not hold us for sd-bus's 25 s */
                r = sd_bus_set_method_call_timeout(d->bus, DAEMON_BUS_TIMEOUT);
        if (r >= 0)
                r = sd_bus_match_signal(d->bus, NULL, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "PrepareForSleep",
                                        on_prepare_for_sleep, d);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to logind on the system bus: %m");
        return 0;
}

static void daemon_done(Daemon *d) {
        (void) mark_remove();
        lock_release(d);
        d->pass_timer = sd_event_source_disable_unref(d->pass_timer);
        d->post_timer = sd_event_source_disable_unref(d->post_timer);
        owed_cancel(d);
        d->relock_timer = sd_event_source_disable_unref(d->relock_timer);
        d->tidy_timer = sd_event_source_disable_unref(d->tidy_timer);
        d->answers_timer = sd_event_source_disable_unref(d->answers_timer);
        policy_refresh_cancel(d);
        pass_report_close(d);
        /* It holds nothing; killed, so that a restart finds no process of ours left (KillMode=process).
         * Its reader ends at the end of its socket. */
        if (d->standby_pid > 0)
                (void) kill(d->standby_pid, SIGKILL);
        standby_discard(d);
        if (d->hook_source)
                (void) unlink(HOOK_SOCKET_PATH);
        d->hook_source = sd_event_source_disable_unref(d->hook_source);
        d->hook_conn_source = sd_event_source_disable_unref(d->hook_conn_source);
        d->inhibitors_slot = sd_bus_slot_unref(d->inhibitors_slot);
        d->lock_slot = sd_bus_slot_unref(d->lock_slot);
        d->unit_facts = manager_unit_facts_free(d->unit_facts);
        /* Closed without a flush (review O, O8): sd_bus_flush() waits without a bound for a bus that
         * stopped reading. Nothing queued must reach it: the lock goes with its fd (above), the
         * questions and a relock's calls are moot now. */
        d->bus = sd_bus_close_unref(d->bus);
        d->root_fd = safe_close(d->root_fd);
        d->config = policy_free(d->config);
}

int verb_daemon(const Args *a) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_free_ char *exe = NULL;
        Daemon d = {
                .a = a,
                .lock_fd = -EBADF,
                .root_fd = -EBADF,
                .report_wfd = -EBADF,
                .start_rfd = -EBADF,
                .standby_start_fd = -EBADF,
                .standby_report_fd = -EBADF,
                .late_conn_fd = -EBADF,
                .refresh_ctx = CONTEXT_NULL,
        };
        char x[FORMAT_TIMESPAN_MAX], y[FORMAT_TIMESPAN_MAX];
        sigset_t mask;
        int r;

        if (geteuid() != 0)
                return log_error_errno(EPERM, "'daemon' needs root (it runs the pass).");
        /* Only as suspend-sync-daemon.service: its mark must go with the directory systemd removes. */
        if (!streq_ptr(getenv("RUNTIME_DIRECTORY"), DAEMON_RUNTIME_DIR))
                return log_error_errno(EPERM, "'daemon' runs as suspend-sync-daemon.service only "
                                              "($RUNTIME_DIRECTORY=" DAEMON_RUNTIME_DIR ").");
        /* Our own binary by its path, so that a child's comm reads suspend-sync, not "exe"; and, first
         * thing (review AJ, AJ-2), the file that must stay the one we run: the installed binary, which
         * the system-sleep hook compares us with too, where there is one, else our own. */
        exe = realpath("/proc/self/exe", NULL);
        d.exe = exe ?: "/proc/self/exe";
        d.exe_path = access(SUSPEND_SYNC_BINARY, F_OK) >= 0 ? SUSPEND_SYNC_BINARY : exe;
        (void) sigemptyset(&mask);
        (void) sigaddset(&mask, SIGTERM);
        (void) sigaddset(&mask, SIGINT);
        (void) sigaddset(&mask, SIGHUP);
        (void) sigaddset(&mask, SIGCHLD);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);

        r = mark_remove();
        if (r < 0)
                return log_error_errno(r, "Failed to remove " DAEMON_PASS_MARK ": %m");
        r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGHUP, on_reload, &d);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the event loop: %m");
        d.event = event;
        r = daemon_connect(&d);
        if (r < 0)
                goto finish;
        d.pass_exec = parse_boolean(getenv("SUSPEND_SYNC_TEST_PASS_EXEC")) > 0;
        d.no_standby = parse_boolean(getenv("SUSPEND_SYNC_TEST_NO_STANDBY")) > 0;
        if (safe_atou(getenv("SUSPEND_SYNC_TEST_CHILD_NOFILE") ?: "0", &d.child_nofile) < 0)
                d.child_nofile = 0;
        d.root_fd = open(a->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d.root_fd < 0) {
                r = log_error_errno(negative_errno(), "Failed to open root directory '%s': %m", a->root);
                goto finish;
        }
        r = mount_table_preload(d.root_fd);
        if (r > 0)
                log_debug("Loaded libmount for the passes: this kernel's mount table comes as text.");
        else if (r < 0)
                log_debug_errno(r, "Cannot load libmount now, each pass loads it: %m");
        policy_refresh(&d);
        r = hook_listen(&d);
        if (r < 0)
                log_warning_errno(r, "Cannot listen on " HOOK_SOCKET_PATH ", the system-sleep hook runs the "
                                     "late pass itself: %m");
        r = lock_take(&d);
        /* After the lock (review AZ, AZ-4): a sleep asked for after logind's answer below waits for
         * our PrepareForSleep(true), which comes after this restore; without the lock, it went on
         * meanwhile. During a sleep (no lock), that sleep's PrepareForSleep(false) restores. */
        if (r < 0 || d.lock_fd >= 0)
                knob_leftover_at_start(&d);
        if (r < 0)
                goto finish;
        if (d.lock_fd < 0)
                log_info("logind is carrying out a sleep: taking its delay lock after it (this sleep goes by "
                         "suspend-sync.service).");
        else
                log_info("Holding logind's delay lock for sleep (logind waits at most %s; the pass is waited "
                         "for %s).",
                         format_timespan(x, sizeof x, d.delay_max),
                         format_timespan(y, sizeof y, daemon_pass_bound(d.delay_max)));
        /* Ready with the next pass waiting: a sleep right after the start does not fork it. */
        standby_fork(&d);
        (void) notify_send("READY=1");

        r = sd_event_loop(event);
        (void) notify_send("STOPPING=1");
        /* 0: SIGTERM or SIGINT. Anything else (the bus went away, the lock could not be taken
         * again) is a failure, so that Restart=on-failure starts us again. */
        if (r == -ENOLCK)
                r = log_error_errno(r, "Cannot take logind's delay lock again, exiting.");
        else if (r != 0)
                /* sd-bus closes the connection on any failure to process a message, an allocation's
                 * among them, and says why at debug level only: not only a bus that went away. */
                r = log_error_errno(r < 0 ? r : EPIPE,
                                    "The connection to the system bus was closed (the bus went away, or a "
                                    "message could not be processed), exiting.");
finish:
        daemon_done(&d);
        return r;
}
