/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon: the unit's pass started when logind announces the sleep, not when systemd gets to
 * suspend-sync.service (suspend-sync-daemon.service; docs/SYSTEMD.md, "The daemon").
 *
 * Holds logind's "delay" inhibitor lock for "sleep". On PrepareForSleep(true) it runs
 * "suspend-sync run --trigger=unit --deadline-max=BOUND" (BOUND under logind's InhibitDelayMaxUSec:
 * logind sleeps when that has passed, whatever a lock holder is doing) and asks PID 1 whether any
 * unit requires suspend-sync.service. When the pass succeeded (exit 0) and none does, it creates
 * DAEMON_PASS_MARK, which suspend-sync.service's ConditionPathExists=! reads: systemd does not
 * start that unit for this sleep. Then it releases the lock. In every other case (a pass that
 * failed, timed out, or could not start; a requirer, or no answer) there is no mark and the unit
 * runs its own pass as before: the daemon can only save a pass, never lose one.
 *
 * On PrepareForSleep(false) (resumed, or the sleep called off) it removes the mark, takes the lock
 * again, and, when its mark kept the unit from running, does what the unit's ExecStopPost= would
 * have: restore-knob, then record-cycle. The mark lives in the daemon's RuntimeDirectory=, which
 * systemd removes whenever the daemon stops, a crash included.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "daemon.h"
#include "log.h"
#include "manager.h"
#include "notify.h"
#include "shared/fileio.h"
#include "state.h"
#include "verbs.h"

#define LOGIN1 "org.freedesktop.login1"
#define LOGIN1_PATH "/org/freedesktop/login1"
#define LOGIN1_MANAGER LOGIN1 ".Manager"

typedef struct Daemon {
        const Args *a;
        sd_event *event;
        sd_bus *bus;
        int lock_fd;
        usec_t delay_max; /* logind's InhibitDelayMaxUSec */
        pid_t pass_pid;   /* the pass under way, 0 when none */
        usec_t pass_started;
        usec_t pass_started_realtime;
        sd_event_source *pass_timer;
        ManagerRequirers *requirers;
        bool marked; /* this sleep's mark is set: the unit's ExecStopPost= is ours to do */
} Daemon;

static int mark_remove(void) {
        if (unlink(DAEMON_PASS_MARK) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

static int mark_create(void) {
        _cleanup_close_ int fd = -EBADF;

        if (mkdir(DAEMON_RUNTIME_DIR, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        fd = open(DAEMON_PASS_MARK, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        return fd < 0 ? negative_errno() : 0;
}

static int lock_take(Daemon *d) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint64_t delay = 0;
        int fd, r;

        r = sd_bus_get_property_trivial(d->bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "InhibitDelayMaxUSec",
                                        &error, 't', &delay);
        if (r < 0)
                return log_error_errno(r, "Failed to read logind's InhibitDelayMaxUSec: %s",
                                       error.message ?: strerror(-r));
        d->delay_max = delay;
        r = sd_bus_call_method(d->bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "Inhibit", &error, &reply, "ssss",
                               "sleep", "suspend-sync", "Syncing filesystems before sleep", "delay");
        if (r < 0)
                return log_error_errno(r, "Failed to take logind's delay lock: %s",
                                       error.message ?: strerror(-r));
        r = sd_bus_message_read(reply, "h", &fd);
        if (r < 0)
                return log_error_errno(r, "Failed to read logind's answer: %m");
        d->lock_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (d->lock_fd < 0)
                return log_error_errno(negative_errno(), "Failed to keep the lock's fd: %m");
        return 0;
}

static void lock_release(Daemon *d) {
        d->lock_fd = safe_close(d->lock_fd);
}

/* Every child's event source ends with the child. */
static int on_child_done(sd_event_source *s, const siginfo_t *si, void *userdata) {
        sd_event_source_unref(s);
        return 0;
}

/* Forks "suspend-sync ARGS..." with the environment of a process no service manager started (a
 * pass that saw our $INVOCATION_ID or $NOTIFY_SOCKET would take this unit for its own), reaped by
 * an event source whose callback (NULL: none) must unref it. Returns the pid or a negative errno. */
static pid_t spawn(Daemon *d, char *const *argv, sd_event_child_handler_t callback) {
        sd_event_source *s = NULL;
        pid_t pid = fork();
        int r;

        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                static const char *const vars[] = { "INVOCATION_ID", "NOTIFY_SOCKET",     "WATCHDOG_PID",
                                                    "WATCHDOG_USEC", "RUNTIME_DIRECTORY", "MAINPID" };
                sigset_t mask;

                (void) sigemptyset(&mask);
                (void) sigprocmask(SIG_SETMASK, &mask, NULL);
                for (size_t i = 0; i < ELEMENTSOF(vars); i++)
                        (void) unsetenv(vars[i]);
                (void) execv("/proc/self/exe", argv);
                _exit(EXIT_FAILURE);
        }
        r = sd_event_add_child(d->event, &s, pid, WEXITED, callback ?: on_child_done, d);
        if (r < 0) /* it runs all the same; a zombie once it ends, until we exit */
                log_warning_errno(r, "Failed to watch child " PID_FMT ": %m", pid);
        return pid;
}

/* Whether the pass that just exited 0 synced everything it planned: its record (last.json) is ours
 * (a unit's pass that began after we started it) and says "success". Exit status 0 also covers
 * timeouts with OnTimeout=continue, which the unit's pass, with all of DeadlineSec=, might not
 * have had. NULL when so, else why not. */
static const char *pass_record_why_not(const Daemon *d) {
        _cleanup_(run_record_done) RunRecord rec = {};
        bool has = false;

        if (state_load(d->a->state_dir, &rec, &has, NULL, NULL) < 0 || !has)
                return "its record cannot be read";
        if (!streq_ptr(rec.trigger, "unit") || rec.started_realtime < d->pass_started_realtime)
                return "its record is not there";
        if (!streq_ptr(rec.result, "success"))
                return "it did not sync everything (see its record)";
        return NULL;
}

/* The pass is over (exited, or past its bound): set the mark or not, release the lock. */
static void pass_end(Daemon *d, int status) {
        usec_t n = now(CLOCK_MONOTONIC);
        int required = -ETIMEDOUT, r;
        char t[FORMAT_TIMESPAN_MAX];
        const char *why = NULL;

        d->pass_timer = sd_event_source_disable_unref(d->pass_timer);
        d->pass_pid = 0;
        if (d->requirers)
                required = manager_requirers_finish(d->requirers, n + DAEMON_REQUIRERS_TIMEOUT);
        d->requirers = manager_requirers_free(d->requirers);
        (void) format_timespan(t, sizeof t, n > d->pass_started ? n - d->pass_started : 0);
        if (status == 0)
                why = pass_record_why_not(d);
        if (status != 0)
                log_notice("The pass ended %s after %s: suspend-sync.service runs its own.",
                           status < 0 ? "without an exit status" : "with an error", t);
        else if (why)
                log_notice("The pass took %s, but %s: suspend-sync.service runs its own.", t, why);
        else if (required != 0)
                log_notice("The pass took %s; suspend-sync.service runs its own: %s.", t,
                           required > 0 ? "a unit requires it" : "PID 1 did not say which units require it");
        else {
                r = mark_create();
                if (r < 0)
                        log_warning_errno(r, "Failed to create " DAEMON_PASS_MARK
                                             ", suspend-sync.service runs its own pass: %m");
                else {
                        d->marked = true;
                        log_info("The pass took %s; suspend-sync.service is not needed for this sleep.", t);
                }
        }
        lock_release(d);
}

static int on_pass_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Daemon *d = userdata;

        sd_event_source_unref(s);
        if (si->si_pid != d->pass_pid) /* a pass that ended after its bound: already dealt with */
                return 0;
        pass_end(d, si->si_code == CLD_EXITED ? si->si_status : -1);
        return 0;
}

static int on_pass_bound(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        /* The pass promises to end by its deadline; one that did not is left to end on its own
         * (its workers may be in the kernel) and logind must not wait for it. */
        log_warning("The pass did not end within its bound; releasing the delay lock.");
        (void) kill(d->pass_pid, SIGKILL);
        pass_end(d, -1);
        return 0;
}

static void pass_start(Daemon *d) {
        usec_t bound = daemon_pass_bound(d->delay_max);
        char opt[64], x[FORMAT_TIMESPAN_MAX];
        pid_t pid;
        int r;

        if (bound == 0) {
                log_notice("logind waits for delay locks only %s: suspend-sync.service runs the pass.",
                           format_timespan(x, sizeof x, d->delay_max));
                return lock_release(d);
        }
        (void) snprintf(opt, sizeof opt, "--deadline-max=%" PRIu64 "us", bound - DAEMON_EXIT_SLACK);
        char *argv[] = { (char *) "suspend-sync", (char *) "run", (char *) "--trigger=unit", opt, NULL, NULL };
        _cleanup_free_ char *state = NULL;
        if (!streq(d->a->state_dir, STATE_DIR_DEFAULT) &&
            asprintf(&state, "--state-dir=%s", d->a->state_dir) >= 0)
                argv[4] = state;

        r = manager_requirers_start(SUSPEND_SYNC_UNIT, &d->requirers);
        if (r < 0)
                log_debug_errno(r, "Cannot ask PID 1 which units require " SUSPEND_SYNC_UNIT ": %m");
        d->pass_started = now(CLOCK_MONOTONIC);
        d->pass_started_realtime = now(CLOCK_REALTIME);
        pid = spawn(d, argv, on_pass_exit);
        if (pid < 0) {
                log_warning_errno(pid, "Failed to start the pass: %m");
                return pass_end(d, -1);
        }
        d->pass_pid = pid;
        r = sd_event_add_time(d->event, &d->pass_timer, CLOCK_MONOTONIC, d->pass_started + bound, 0,
                              on_pass_bound, d);
        if (r < 0) {
                log_warning_errno(r, "Failed to arm the pass's bound, not waiting for it: %m");
                pass_end(d, -1);
        }
}

/* After a sleep our mark kept suspend-sync.service from: its ExecStopPost= steps, in order. */
static int on_restored(sd_event_source *s, const siginfo_t *si, void *userdata) {
        static char *const argv[] = { (char *) "suspend-sync", (char *) "record-cycle", NULL };
        Daemon *d = userdata;

        sd_event_source_unref(s);
        (void) spawn(d, argv, NULL);
        return 0;
}

static int on_prepare_for_sleep(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Daemon *d = userdata;
        int start, r;

        r = sd_bus_message_read(m, "b", &start);
        if (r < 0)
                return 0;
        r = mark_remove();
        if (r < 0)
                log_warning_errno(r, "Failed to remove " DAEMON_PASS_MARK ": %m");
        if (start) {
                d->marked = false;
                if (d->pass_pid != 0 || d->lock_fd < 0)
                        return 0; /* a pass is under way, or we hold no lock to delay anything */
                pass_start(d);
                return 0;
        }
        if (d->marked) {
                static char *const argv[] = { (char *) "suspend-sync", (char *) "restore-knob", NULL };

                (void) spawn(d, argv, on_restored);
        }
        d->marked = false;
        if (d->lock_fd < 0 && lock_take(d) < 0)
                /* Without the lock we are of no use: exit, so that systemd restarts us. */
                (void) sd_event_exit(d->event, -ENOLCK);
        return 0;
}

int verb_daemon(const Args *a) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        Daemon d = { .a = a, .lock_fd = -EBADF };
        char x[FORMAT_TIMESPAN_MAX], y[FORMAT_TIMESPAN_MAX];
        sigset_t mask;
        int r;

        if (geteuid() != 0)
                return log_error_errno(EPERM, "'daemon' needs root (it runs the pass).");
        (void) sigemptyset(&mask);
        (void) sigaddset(&mask, SIGTERM);
        (void) sigaddset(&mask, SIGINT);
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
        if (r < 0)
                return log_error_errno(r, "Failed to set up the event loop: %m");
        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_set_exit_on_disconnect(bus, true);
        if (r >= 0) /* logind that does not answer must not hold us for sd-bus's 25 s */
                r = sd_bus_set_method_call_timeout(bus, DAEMON_BUS_TIMEOUT);
        if (r >= 0)
                r = sd_bus_match_signal(bus, NULL, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "PrepareForSleep",
                                        on_prepare_for_sleep, &d);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to logind on the system bus: %m");
        d.event = event;
        d.bus = bus;
        r = lock_take(&d);
        if (r < 0)
                return r;
        log_info("Holding logind's delay lock for sleep (logind waits at most %s; the pass ends within %s).",
                 format_timespan(x, sizeof x, d.delay_max),
                 format_timespan(y, sizeof y, daemon_pass_bound(d.delay_max)));
        (void) notify_send("READY=1");

        r = sd_event_loop(event);
        (void) notify_send("STOPPING=1");
        (void) mark_remove();
        lock_release(&d);
        d.requirers = manager_requirers_free(d.requirers);
        d.pass_timer = sd_event_source_disable_unref(d.pass_timer);
        if (r < 0)
                return log_error_errno(r, "The daemon stops: %s",
                                       r == -ENOLCK ? "cannot take the delay lock again" : strerror(-r));
        return 0;
}
