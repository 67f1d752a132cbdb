/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake-logind: the part of logind's bus API the daemon uses to hold its delay lock, on a private bus
 * (integration/daemon-bus.sh: a dbus-daemon of the test's own, which the daemon reaches as
 * $DBUS_SYSTEM_BUS_ADDRESS). It owns org.freedesktop.login1 and serves, on /org/freedesktop/login1,
 * the Manager's properties InhibitDelayMaxUSec (5 s) and PreparingForSleep (the last signal's B, false
 * before any) and method Inhibit, whose lock is the write end of
 * a pipe, as logind's is a FIFO's: its read end hangs up once every copy of it is closed, which is
 * the lock's release. ListInhibitors answers an empty list.
 *
 * Driven by lines on stdin, it tells what happened in lines on stdout:
 *   hold        Inhibit calls are held, unanswered, from now on    -> "holding"
 *   answer      the held calls answered, in order, and no more held -> "granted K" for each
 *   fail        the next Inhibit call refused with an error         -> "failing", then "refused K"
 *   busy        the same, OperationInProgress (logind still sleeping) -> "busy", then "refused K"
 *   signal B    PrepareForSleep(B), B 0 or 1                      -> "signalled B"
 *   ping        org.freedesktop.DBus.Peer.Ping to the daemon (the peer of the last call): its
 *               answer comes after everything the daemon sent while handling what came before it
 *                                                                  -> "pong", or "ping-failed"
 * and by itself: "ready" (the name owned), "inhibit K" (the K-th call came), "granted K" (answered),
 * "released K" (the K-th lock's last copy closed).
 * It exits at the end of stdin.
 *
 * With --systemd1 it also owns org.freedesktop.systemd1 and stands for PID 1 as far as the daemon
 * asks it (manager.c, ManagerUnitFacts: org.freedesktop.DBus.Properties.Get on the unit's object):
 * the object of suspend-sync.service only, at its path escaped as systemd escapes it (written out
 * here, not computed with sd_bus_path_encode(), so that a daemon asking at another path gets
 * UnknownObject), with org.freedesktop.systemd1.Unit's RequiredBy, RequisiteOf and BoundBy (empty:
 * no unit requires it) and ActiveState ("inactive"). Without a requirer and inactive, the daemon
 * marks its pass (daemon_mark_why_not()). Two more commands change the answers:
 *   require UNIT   RequiredBy lists UNIT from now on ("require" alone: empty again) -> "required UNIT"
 *   state S        ActiveState is S from now on                                  -> "state S"
 * and each Get answered is told: "asked PROPERTY".
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "shared/macro.h"
#include "shared/string-util.h"

#define INHIBIT_MAX 8192 /* daemon-alloc.sh: a daemon a lifecycle, ~4000 calls */

typedef struct Fake {
        sd_event *event;
        sd_bus *bus;
        char *peer;    /* the daemon's unique name */
        bool holding;  /* Inhibit calls are held */
        bool failing;  /* the next Inhibit call is refused */
        bool busy;     /* the next Inhibit call is refused as logind does while it still sleeps */
        int preparing; /* PreparingForSleep: the last PrepareForSleep signal's argument */
        sd_bus_message *held[INHIBIT_MAX];         /* ... these, by number */
        unsigned n_inhibit;                        /* Inhibit calls so far */
        sd_event_source *lock_source[INHIBIT_MAX]; /* each lock's read end, until it hangs up */
        char line[256];
        size_t n_line;
        char required_by[64];  /* --systemd1: suspend-sync.service's RequiredBy ("": none) */
        char active_state[32]; /* ... its ActiveState */
} Fake;

/* suspend-sync.service's object, as systemd names it: '-' and '.' escaped as _2d and _2e. */
#define UNIT_PATH "/org/freedesktop/systemd1/unit/suspend_2dsync_2eservice"

static void say(const char *fmt, ...) _printf_(1, 2);
static void say(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

static void peer_note(Fake *f, sd_bus_message *m) {
        const char *s = sd_bus_message_get_sender(m);

        /* The last caller: a daemon started after another one exited is the one to ping. */
        if (s && !streq_ptr(f->peer, s)) {
                free(f->peer);
                f->peer = strdup(s);
        }
}

static int on_lock_hangup(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Fake *f = userdata;

        for (unsigned k = 1; k <= f->n_inhibit; k++)
                if (f->lock_source[k] == s) {
                        say("released %u", k);
                        f->lock_source[k] = sd_event_source_disable_unref(s);
                }
        return 0;
}

/* The K-th call answered with a new lock. */
static int grant(Fake *f, unsigned k) {
        int fds[2], r;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        r = sd_event_add_io(f->event, &f->lock_source[k], fds[0], EPOLLIN, on_lock_hangup, f);
        if (r >= 0)
                r = sd_event_source_set_io_fd_own(f->lock_source[k], true);
        if (r >= 0)
                r = sd_bus_reply_method_return(f->held[k], "h", fds[1]);
        close(fds[1]);
        f->held[k] = sd_bus_message_unref(f->held[k]);
        if (r < 0)
                return r;
        say("granted %u", k);
        return 0;
}

static int method_inhibit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Fake *f = userdata;
        unsigned k;

        peer_note(f, m);
        if (f->n_inhibit + 1 >= INHIBIT_MAX)
                return sd_bus_error_set(error, SD_BUS_ERROR_LIMITS_EXCEEDED, "Too many calls.");
        k = ++f->n_inhibit;
        say("inhibit %u", k);
        if (f->failing) {
                f->failing = false;
                say("refused %u", k);
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Refused by the test.");
        }
        if (f->busy) {
                f->busy = false;
                say("refused %u", k);
                return sd_bus_error_set(error, "org.freedesktop.login1.OperationInProgress",
                                        "Busy by the test.");
        }
        f->held[k] = sd_bus_message_ref(m);
        if (f->holding)
                return 1;
        return grant(f, k);
}

static int method_list_inhibitors(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_reply_method_return(m, "a(ssssuu)", 0);
}

static int property_delay(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "t", (uint64_t) 5000000);
}

static int property_preparing(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Fake *f = userdata;

        return sd_bus_message_append(reply, "b", f->preparing);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("InhibitDelayMaxUSec", "t", property_delay, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("PreparingForSleep", "b", property_preparing, 0, 0),
        SD_BUS_METHOD("Inhibit", "ssss", "h", method_inhibit, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("ListInhibitors", "", "a(ssssuu)", method_list_inhibitors, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL("PrepareForSleep", "b", 0),
        SD_BUS_VTABLE_END
};

/* RequiredBy, RequisiteOf, BoundBy: "as"; only RequiredBy lists a unit (require UNIT). */
static int property_requirers(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Fake *f = userdata;
        char *none[] = { NULL }, *one[] = { f->required_by, NULL };
        int r;

        r = sd_bus_message_append_strv(reply,
                                       streq(property, "RequiredBy") && f->required_by[0] ? one : none);
        if (r >= 0)
                say("asked %s", property);
        return r;
}

static int property_active_state(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Fake *f = userdata;
        int r;

        r = sd_bus_message_append(reply, "s", f->active_state);
        if (r >= 0)
                say("asked %s", property);
        return r;
}

static const sd_bus_vtable unit_vtable[] = { SD_BUS_VTABLE_START(0),
                                             SD_BUS_PROPERTY("RequiredBy", "as", property_requirers, 0, 0),
                                             SD_BUS_PROPERTY("RequisiteOf", "as", property_requirers, 0, 0),
                                             SD_BUS_PROPERTY("BoundBy", "as", property_requirers, 0, 0),
                                             SD_BUS_PROPERTY("ActiveState", "s", property_active_state, 0, 0),
                                             SD_BUS_VTABLE_END };

static int on_pong(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        say(sd_bus_message_is_method_error(m, NULL) ? "ping-failed" : "pong");
        return 0;
}

static void command(Fake *f, const char *c) {
        int r = 0;

        if (streq(c, "hold")) {
                f->holding = true;
                say("holding");
        } else if (streq(c, "fail")) {
                f->failing = true;
                say("failing");
        } else if (streq(c, "busy")) {
                f->busy = true;
                say("busy");
        } else if (streq(c, "answer")) {
                f->holding = false;
                for (unsigned k = 1; k <= f->n_inhibit && r >= 0; k++)
                        if (f->held[k])
                                r = grant(f, k);
        } else if (streq(c, "signal 0") || streq(c, "signal 1")) {
                r = sd_bus_emit_signal(f->bus, "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                                       "PrepareForSleep", "b", c[7] == '1');
                if (r >= 0) {
                        f->preparing = c[7] == '1';
                        say("signalled %c", c[7]);
                }
        } else if (streq(c, "ping")) {
                r = f->peer ? sd_bus_call_method_async(f->bus, NULL, f->peer, "/",
                                                       "org.freedesktop.DBus.Peer", "Ping", on_pong, f, NULL)
                            : -ENOTCONN;
                if (r < 0)
                        say("ping-failed");
                r = 0;
        } else if (streq(c, "require") || startswith(c, "require ")) {
                (void) snprintf(f->required_by, sizeof f->required_by, "%s", c[7] ? c + 8 : "");
                say("required %s", f->required_by);
        } else if (startswith(c, "state ")) {
                (void) snprintf(f->active_state, sizeof f->active_state, "%s", c + 6);
                say("state %s", f->active_state);
        } else
                say("unknown command '%s'", c);
        if (r < 0) {
                fprintf(stderr, "fake-logind: '%s' failed: %s\n", c, strerror(-r));
                (void) sd_event_exit(f->event, 1);
        }
}

static int on_stdin(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Fake *f = userdata;
        ssize_t n;

        n = read(fd, f->line + f->n_line, sizeof f->line - 1 - f->n_line);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0)
                return sd_event_exit(f->event, 0);
        f->n_line += (size_t) n;
        for (char *nl; (nl = memchr(f->line, '\n', f->n_line));) {
                *nl = 0;
                command(f, f->line);
                f->n_line -= (size_t) (nl + 1 - f->line);
                memmove(f->line, nl + 1, f->n_line);
        }
        if (f->n_line == sizeof f->line - 1)
                return sd_event_exit(f->event, 1);
        return 0;
}

int main(int argc, char *argv[]) {
        Fake f = { .active_state = "inactive" };
        bool systemd1 = argc > 1 && streq(argv[1], "--systemd1");
        int r;

        r = sd_event_default(&f.event);
        if (r >= 0)
                r = sd_bus_open_system(&f.bus);
        if (r >= 0)
                r = sd_bus_add_object_vtable(f.bus, NULL, "/org/freedesktop/login1",
                                             "org.freedesktop.login1.Manager", manager_vtable, &f);
        if (r >= 0)
                r = sd_bus_request_name(f.bus, "org.freedesktop.login1", 0);
        if (r >= 0 && systemd1)
                r = sd_bus_add_object_vtable(f.bus, NULL, UNIT_PATH, "org.freedesktop.systemd1.Unit",
                                             unit_vtable, &f);
        if (r >= 0 && systemd1)
                r = sd_bus_request_name(f.bus, "org.freedesktop.systemd1", 0);
        if (r >= 0)
                r = sd_bus_attach_event(f.bus, f.event, 0);
        if (r >= 0)
                r = sd_event_add_io(f.event, NULL, STDIN_FILENO, EPOLLIN, on_stdin, &f);
        if (r < 0) {
                fprintf(stderr, "fake-logind: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        say("ready");
        r = sd_event_loop(f.event);
        for (unsigned k = 0; k < INHIBIT_MAX; k++) {
                sd_bus_message_unref(f.held[k]);
                sd_event_source_disable_unref(f.lock_source[k]);
        }
        free(f.peer);
        sd_bus_flush_close_unref(f.bus);
        sd_event_unref(f.event);
        return r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
