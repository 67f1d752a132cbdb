/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Non-blocking logging. Two targets ("sinks"), each with a bounded queue:
 *
 *  - the journal: our own AF_UNIX datagram socket (SOCK_NONBLOCK) connected to
 *    /run/systemd/journal/socket, native protocol, send(MSG_DONTWAIT). sd_journal_sendv() is not
 *    used: it blocks while journald does not read (measured: a 2 s run held 15 s).
 *  - stderr: a socket (journald's stream, a terminal emulator's socket) gets send(MSG_DONTWAIT); an
 *    anonymous pipe or a terminal is reopened through /proc/self/fd/2 with O_NONBLOCK (a new open
 *    file description: whoever shares our fd 2 is not affected); another pipe (FIFO) is written
 *    only when poll() says it has room, one atomic write of at most PIPE_BUF bytes; anything else
 *    (a regular file, /dev/null) is written plainly.
 *
 * A message the target does not take now (EAGAIN) is queued; the queue is retried, in order,
 * before each new message and by log_flush(); when full, the least important message (highest
 * level, oldest first) gives way. Dropped messages are counted, and the count is reported once the
 * target takes messages again.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "message-ids.h"
#include "shared/utf8.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

typedef struct Msg {
        int level;
        size_t len, off; /* off: bytes already written (a stream took part of it) */
        char *data;
} Msg;

typedef enum SinkKind {
        SINK_NONE,  /* not opened yet, or unusable */
        SINK_SEND,  /* socket: send(MSG_DONTWAIT | MSG_NOSIGNAL) */
        SINK_WRITE, /* our own O_NONBLOCK open file description: write() */
        SINK_POLL,  /* shared blocking pipe: poll(POLLOUT, 0), then one write <= PIPE_BUF */
        SINK_PLAIN, /* regular file, /dev/null, other devices: write() */
} SinkKind;

typedef struct Sink {
        const char *name;
        SinkKind kind;
        bool opened; /* open attempted */
        int fd;
        bool owns_fd;
        Msg queue[LOG_QUEUE_MAX];
        size_t n_queue;
        unsigned n_dropped, n_reported;
} Sink;

static int max_level = LOG_INFO;
static bool journal = false;
static usec_t flush_deadline = USEC_INFINITY;
static const char *object_unit = NULL;
static Sink journal_sink = { .name = "the journal", .fd = -EBADF };
static Sink stderr_sink = { .name = "stderr", .fd = -EBADF };

/* ---- what each message sends ------------------------------------------------------------------ */

static const char *const field_names[_LOG_FIELD_MAX] = {
        [LOG_FIELD_MOUNT] = "SUSPEND_SYNC_MOUNT",
        [LOG_FIELD_OUTCOME] = "SUSPEND_SYNC_OUTCOME",
        [LOG_FIELD_DURATION_USEC] = "SUSPEND_SYNC_DURATION_USEC",
        [LOG_FIELD_ERRNO] = "ERRNO",
        [LOG_FIELD_TRIGGER] = "SUSPEND_SYNC_TRIGGER",
        [LOG_FIELD_SLEEP_ACTION] = "SUSPEND_SYNC_SLEEP_ACTION",
        [LOG_FIELD_KNOB_OLD] = "SUSPEND_SYNC_KNOB_OLD",
        [LOG_FIELD_KNOB_NEW] = "SUSPEND_SYNC_KNOB_NEW",
        [LOG_FIELD_CONFIG_FILE] = "SUSPEND_SYNC_CONFIG_FILE",
        [LOG_FIELD_CONFIG_LINE] = "SUSPEND_SYNC_CONFIG_LINE",
        [LOG_FIELD_SYNCED] = "SUSPEND_SYNC_SYNCED",
        [LOG_FIELD_TIMED_OUT] = "SUSPEND_SYNC_TIMED_OUT",
        [LOG_FIELD_FAILED] = "SUSPEND_SYNC_FAILED",
        [LOG_FIELD_SKIPPED] = "SUSPEND_SYNC_SKIPPED",
        [LOG_FIELD_DEADLINE_USEC] = "SUSPEND_SYNC_DEADLINE_USEC",
};

const char *log_field_name(LogField f) {
        return f >= 0 && f < _LOG_FIELD_MAX ? field_names[f] : NULL;
}

#define B(f) LOG_FIELD_BIT(LOG_FIELD_##f)
const LogEventSpec log_event_specs[] = {
        { SUSPEND_SYNC_MESSAGE_RUN_SUMMARY_STR, B(OUTCOME) | B(DURATION_USEC) | B(TRIGGER) | B(SLEEP_ACTION) |
                                                        B(SYNCED) | B(TIMED_OUT) | B(FAILED) | B(SKIPPED) |
                                                        B(DEADLINE_USEC) },
        { SUSPEND_SYNC_MESSAGE_MOUNT_TIMEOUT_STR, B(MOUNT) | B(OUTCOME) | B(DURATION_USEC) },
        { SUSPEND_SYNC_MESSAGE_MOUNT_ERROR_STR, B(MOUNT) | B(OUTCOME) | B(DURATION_USEC) | B(ERRNO) },
        { SUSPEND_SYNC_MESSAGE_KNOB_CHANGED_STR, B(KNOB_OLD) | B(KNOB_NEW) },
        { SUSPEND_SYNC_MESSAGE_KNOB_RESTORED_STR, B(KNOB_NEW) },
        { SUSPEND_SYNC_MESSAGE_CONFIG_WARNING_STR, B(CONFIG_FILE) | B(CONFIG_LINE) },
        { SUSPEND_SYNC_MESSAGE_CONFIG_NOT_READ_STR, B(CONFIG_FILE) },
        { SUSPEND_SYNC_MESSAGE_CONFIG_UNREADABLE_STR, 0 },
        { SUSPEND_SYNC_MESSAGE_KNOB_ABSENT_STR, 0 },
};
#undef B
const size_t log_event_specs_n = ELEMENTSOF(log_event_specs);

const LogEventSpec *log_event_spec(const char *message_id) {
        if (!message_id)
                return NULL;
        for (size_t i = 0; i < log_event_specs_n; i++)
                if (streq(log_event_specs[i].message_id, message_id))
                        return &log_event_specs[i];
        return NULL;
}

/* ---- the journal native protocol (pure) ------------------------------------------------------- */

size_t journal_encode(const JournalField *fields, size_t n_fields, char *buf, size_t size) {
        size_t pos = 0;

        for (size_t i = 0; i < n_fields; i++) {
                const char *k = fields[i].key, *v = fields[i].value ? fields[i].value : "";
                size_t kl = strlen(k), vl = strlen(v), cap, over;
                bool binary;

                cap = streq(k, "MESSAGE") ? LOG_LINE_MAX : LOG_FIELD_MAX;
                if (vl > cap)
                        vl = utf8_cut(v, cap);
                binary = memchr(v, '\n', vl) != NULL;
                over = binary ? kl + 1 + 8 + 1 : kl + 2;
                if (kl == 0 || pos + over > size)
                        continue; /* not even the key fits: left out */
                if (pos + over + vl > size)
                        vl = utf8_cut(v, size - pos - over);

                memcpy(buf + pos, k, kl);
                pos += kl;
                if (binary) {
                        uint64_t le = vl;

                        buf[pos++] = '\n';
                        for (unsigned b = 0; b < 8; b++, le >>= 8)
                                buf[pos++] = (char) (le & 0xff);
                } else
                        buf[pos++] = '=';
                memcpy(buf + pos, v, vl);
                pos += vl;
                buf[pos++] = '\n';
        }
        return pos;
}

/* ---- sinks ------------------------------------------------------------------------------------ */

static void journal_open(Sink *s) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        int fd;

        s->opened = true;
        s->kind = SINK_NONE;
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return;
        /* Connecting a datagram socket only looks the path up (on /run, tmpfs); it never waits. */
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                safe_close(fd);
                return;
        }
        s->fd = fd;
        s->owns_fd = true;
        s->kind = SINK_SEND;
}

static bool is_anonymous_pipe_or_tty(void) {
        char link[64];
        ssize_t n = readlink("/proc/self/fd/2", link, sizeof link - 1);

        if (n <= 0)
                return false;
        link[n] = 0;
        return strncmp(link, "pipe:[", 6) == 0 || strncmp(link, "/dev/", 5) == 0;
}

/* Classifies fd 2 without touching the filesystem it may live on (no fstat, no open of a path). */
static void stderr_open(Sink *s) {
        socklen_t sl = sizeof(int);
        int type, fl, fd;

        s->opened = true;
        s->fd = STDERR_FILENO;
        s->owns_fd = false;
        if (getsockopt(STDERR_FILENO, SOL_SOCKET, SO_TYPE, &type, &sl) >= 0) {
                s->kind = SINK_SEND;
                return;
        }
        fl = fcntl(STDERR_FILENO, F_GETFL);
        if (fl < 0) {
                s->kind = SINK_NONE; /* closed */
                s->fd = -EBADF;
                return;
        }
        if (fl & O_NONBLOCK) {
                s->kind = SINK_WRITE;
                return;
        }
        if (fcntl(STDERR_FILENO, F_GETPIPE_SZ) < 0 && !isatty(STDERR_FILENO)) {
                s->kind = SINK_PLAIN;
                return;
        }
        if (is_anonymous_pipe_or_tty()) {
                fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
                if (fd >= 0) {
                        s->fd = fd;
                        s->owns_fd = true;
                        s->kind = SINK_WRITE;
                        return;
                }
        }
        s->kind = SINK_POLL;
}

/* Bytes written (possibly fewer than len on a stream), or negative errno (-EAGAIN: not now). */
static ssize_t sink_try(Sink *s, const char *p, size_t len) {
        bool reconnected = false;
        struct pollfd pfd;
        ssize_t n;

        for (;;) {
                switch (s->kind) {
                case SINK_SEND:
                        n = send(s->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
                        break;
                case SINK_POLL:
                        pfd = (struct pollfd) { .fd = s->fd, .events = POLLOUT };
                        n = poll(&pfd, 1, 0);
                        if (n == 0)
                                return -EAGAIN;
                        if (n > 0)
                                n = write(s->fd, p, MIN(len, (size_t) PIPE_BUF));
                        break;
                case SINK_WRITE:
                case SINK_PLAIN:
                        n = write(s->fd, p, len);
                        break;
                default:
                        return -EBADF;
                }
                if (n >= 0)
                        return n;
                if (errno == EINTR)
                        continue;
                /* journald restarted: its new socket has the same path. Reconnect once per message. */
                if (s == &journal_sink && s->owns_fd && (errno == ECONNREFUSED || errno == ENOTCONN) &&
                    !reconnected) {
                        reconnected = true;
                        safe_close(s->fd);
                        s->fd = -EBADF;
                        journal_open(s);
                        continue;
                }
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        }
}

static void msg_free(Msg *m) {
        m->data = mfree(m->data);
}

static void queue_remove(Sink *s, size_t i) {
        msg_free(&s->queue[i]);
        memmove(s->queue + i, s->queue + i + 1, (s->n_queue - i - 1) * sizeof(Msg));
        s->n_queue--;
}

/* Queues bytes p[off..len); when the queue is full the least important message gives way. */
static void queue_add(Sink *s, int level, const char *p, size_t len, size_t off) {
        char *data;

        if (s->n_queue >= LOG_QUEUE_MAX) {
                size_t victim = SIZE_MAX;

                /* A partly written head stays: dropping it would leave half a line in the stream. */
                for (size_t i = s->queue[0].off > 0 ? 1 : 0; i < s->n_queue; i++)
                        if (victim == SIZE_MAX || s->queue[i].level > s->queue[victim].level)
                                victim = i;
                if (victim == SIZE_MAX || s->queue[victim].level < level) {
                        s->n_dropped++;
                        return;
                }
                queue_remove(s, victim);
                s->n_dropped++;
        }
        data = malloc(len);
        if (!data) {
                s->n_dropped++;
                return;
        }
        memcpy(data, p, len);
        s->queue[s->n_queue++] = (Msg) { .level = level, .len = len, .off = off, .data = data };
}

/* Sends queued messages in order. Returns true when the queue is empty. */
static bool sink_drain(Sink *s) {
        while (s->n_queue > 0) {
                Msg *m = &s->queue[0];
                ssize_t n = sink_try(s, m->data + m->off, m->len - m->off);

                if (n == -EAGAIN)
                        return false;
                if (n < 0) {
                        queue_remove(s, 0);
                        s->n_dropped++;
                        continue;
                }
                m->off += (size_t) n;
                if (m->off < m->len)
                        return false;
                queue_remove(s, 0);
        }
        return true;
}

/* The format of a message for a sink: a journal datagram, or a line on stderr. */
static size_t format_for(const Sink *s, int level, const char *message_id, const LogEvent *e, int error,
                         const char *msg, char *buf, size_t size) {
        char prio[16], num[_LOG_FIELD_MAX][32];
        JournalField f[5 + _LOG_FIELD_MAX];
        const LogEventSpec *spec = log_event_spec(message_id);
        unsigned fields = spec ? spec->fields : 0;
        size_t n = 0, len;

        if (s != &journal_sink) {
                len = strnlen(msg, MIN(size - 1, (size_t) LOG_LINE_MAX));
                len = utf8_cut(msg, len);
                memcpy(buf, msg, len);
                buf[len++] = '\n';
                return len;
        }

        snprintf(prio, sizeof prio, "%i", level);
        f[n++] = (JournalField) { "MESSAGE", msg };
        f[n++] = (JournalField) { "PRIORITY", prio };
        f[n++] = (JournalField) { "SYSLOG_IDENTIFIER", "suspend-sync" };
        if (message_id)
                f[n++] = (JournalField) { "MESSAGE_ID", message_id };
        if (object_unit)
                f[n++] = (JournalField) { "OBJECT_SYSTEMD_UNIT", object_unit };
        if (error != 0)
                fields |= LOG_FIELD_BIT(LOG_FIELD_ERRNO);
        for (LogField k = 0; k < _LOG_FIELD_MAX; k++) {
                const char *v = NULL;

                if (!(fields & LOG_FIELD_BIT(k)))
                        continue;
                switch (k) {
                case LOG_FIELD_MOUNT:
                        v = e ? e->mount : NULL;
                        break;
                case LOG_FIELD_OUTCOME:
                        v = e ? e->outcome : NULL;
                        break;
                case LOG_FIELD_DURATION_USEC:
                        if (e && e->duration != USEC_INFINITY)
                                v = num[k],
                                snprintf(num[k], sizeof num[k], "%llu", (unsigned long long) e->duration);
                        break;
                case LOG_FIELD_ERRNO:
                        v = num[k], snprintf(num[k], sizeof num[k], "%i", error);
                        break;
                case LOG_FIELD_TRIGGER:
                        v = e ? e->trigger : NULL;
                        break;
                case LOG_FIELD_SLEEP_ACTION:
                        v = e ? e->sleep_action : NULL;
                        break;
                case LOG_FIELD_KNOB_OLD:
                        v = num[k], snprintf(num[k], sizeof num[k], "%i", e ? e->knob_old : -1);
                        break;
                case LOG_FIELD_KNOB_NEW:
                        v = num[k], snprintf(num[k], sizeof num[k], "%i", e ? e->knob_new : -1);
                        break;
                case LOG_FIELD_CONFIG_FILE:
                        v = e ? e->config_file : NULL;
                        break;
                case LOG_FIELD_CONFIG_LINE:
                        v = num[k], snprintf(num[k], sizeof num[k], "%u", e ? e->config_line : 0);
                        break;
                case LOG_FIELD_SYNCED:
                case LOG_FIELD_TIMED_OUT:
                case LOG_FIELD_FAILED:
                case LOG_FIELD_SKIPPED: {
                        const size_t *c = e ? (k == LOG_FIELD_SYNCED      ? &e->n_synced
                                               : k == LOG_FIELD_TIMED_OUT ? &e->n_timed_out
                                               : k == LOG_FIELD_FAILED    ? &e->n_failed
                                                                          : &e->n_skipped)
                                            : NULL;

                        if (c)
                                v = num[k], snprintf(num[k], sizeof num[k], "%zu", *c);
                        break;
                }
                case LOG_FIELD_DEADLINE_USEC:
                        if (e && e->deadline > 0 && e->deadline != USEC_INFINITY)
                                v = num[k],
                                snprintf(num[k], sizeof num[k], "%llu", (unsigned long long) e->deadline);
                        break;
                default:
                        break;
                }
                f[n++] = (JournalField) { field_names[k], v ?: "n/a" };
        }
        return journal_encode(f, n, buf, size);
}

/* Reports dropped messages once the queue is empty; tried once, never queued itself unless a
 * stream took part of it. */
static void sink_report_drops(Sink *s) {
        char msg[160], buf[JOURNAL_DATAGRAM_MAX];
        unsigned n_new = s->n_dropped - s->n_reported;
        size_t len;
        ssize_t n;

        if (n_new == 0 || s->n_queue > 0)
                return;
        snprintf(msg, sizeof msg,
                 "%u log message(s) could not be written to %s without waiting and were dropped.", n_new,
                 s->name);
        len = format_for(s, LOG_WARNING, NULL, NULL, 0, msg, buf, sizeof buf);
        n = sink_try(s, buf, len);
        if (n < 0)
                return;
        s->n_reported += n_new;
        if ((size_t) n < len)
                queue_add(s, LOG_WARNING, buf, len, (size_t) n);
}

static void sink_submit(Sink *s, int level, const char *p, size_t len) {
        ssize_t n;

        if (!sink_drain(s)) {
                queue_add(s, level, p, len, 0);
                return;
        }
        sink_report_drops(s);
        if (s->n_queue > 0) {
                queue_add(s, level, p, len, 0);
                return;
        }
        n = sink_try(s, p, len);
        if (n == -EAGAIN)
                queue_add(s, level, p, len, 0);
        else if (n < 0)
                s->n_dropped++;
        else if ((size_t) n < len)
                queue_add(s, level, p, len, (size_t) n);
}

static void sink_close(Sink *s) {
        while (s->n_queue > 0)
                queue_remove(s, s->n_queue - 1);
        if (s->owns_fd)
                safe_close(s->fd);
        s->fd = -EBADF;
        s->owns_fd = false;
        s->opened = false;
        s->kind = SINK_NONE;
}

/* ---- API -------------------------------------------------------------------------------------- */

void log_setup(void) {
        const char *e = getenv("JOURNAL_STREAM"), *lvl = getenv("SUSPEND_SYNC_LOG_LEVEL");
        unsigned long long dev, ino;
        socklen_t sl = sizeof(int);
        struct stat st;
        int type;

        /* journald's stream is a socket: fstat() only a socket (never a file on some filesystem). */
        journal = false;
        if (e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 &&
            getsockopt(STDERR_FILENO, SOL_SOCKET, SO_TYPE, &type, &sl) >= 0 &&
            fstat(STDERR_FILENO, &st) >= 0 && (unsigned long long) st.st_dev == dev &&
            (unsigned long long) st.st_ino == ino)
                journal = true;

        if (lvl) {
                if (streq(lvl, "debug"))
                        max_level = LOG_DEBUG;
                else if (streq(lvl, "info"))
                        max_level = LOG_INFO;
                else if (streq(lvl, "notice"))
                        max_level = LOG_NOTICE;
                else if (streq(lvl, "warning"))
                        max_level = LOG_WARNING;
                else if (streq(lvl, "err"))
                        max_level = LOG_ERR;
        }
}

void log_set_max_level(int level) {
        max_level = level;
}

bool log_to_journal(void) {
        return journal;
}

void log_set_object_unit(const char *unit) {
        object_unit = unit;
}

void log_set_deadline(usec_t deadline) {
        flush_deadline = deadline;
}

void log_forget_parent(void) {
        sink_close(&journal_sink);
        sink_close(&stderr_sink);
        journal_sink.n_dropped = journal_sink.n_reported = 0;
        stderr_sink.n_dropped = stderr_sink.n_reported = 0;
}

void log_set_journal_fd_for_test(int fd) {
        log_forget_parent(); /* the same reset, before the test's fd */
        if (fd < 0) {
                log_setup();
                return;
        }
        journal = true;
        journal_sink.opened = true;
        journal_sink.fd = fd;
        journal_sink.owns_fd = true;
        journal_sink.kind = SINK_SEND;
}

unsigned log_dropped(void) {
        return journal_sink.n_dropped + stderr_sink.n_dropped;
}

static void emit(int level, const char *message_id, const LogEvent *e, int error, const char *raw) {
        char buf[JOURNAL_DATAGRAM_MAX], msg[LOG_LINE_MAX];
        Sink *s = &stderr_sink;
        size_t len;

        /* A mount point is any user's choice (their FUSE mount): no control character, escape
         * sequence or bidirectional override of it reaches a terminal or forges a line (review Q,
         * M3). The message only: SUSPEND_SYNC_MOUNT= keeps the bytes. */
        (void) utf8_escape_display(raw, strlen(raw), 0, msg, sizeof msg);

        if (journal) {
                if (!journal_sink.opened)
                        journal_open(&journal_sink);
                /* No journal socket (journald not running): its stream on stderr still takes text. */
                if (journal_sink.kind != SINK_NONE)
                        s = &journal_sink;
        }
        if (s == &stderr_sink && !stderr_sink.opened)
                stderr_open(&stderr_sink);
        if (s->kind == SINK_NONE)
                return;

        len = format_for(s, level, message_id, e, error, msg, buf, sizeof buf);
        sink_submit(s, level, buf, len);
}

static void sink_flush(Sink *s, usec_t until) {
        while (!sink_drain(s)) {
                struct pollfd pfd = { .fd = s->fd, .events = POLLOUT };
                usec_t t = now(CLOCK_MONOTONIC);

                if (t >= until)
                        break;
                if (poll(&pfd, 1, (int) ((until - t + USEC_PER_MSEC - 1) / USEC_PER_MSEC)) < 0 &&
                    errno != EINTR)
                        break;
        }
        /* What is left is dropped; a partly written line is left as it is. */
        while (s->n_queue > 0) {
                queue_remove(s, s->n_queue - 1);
                s->n_dropped++;
        }
        sink_report_drops(s);
        while (s->n_queue > 0) { /* a report a stream took only part of */
                queue_remove(s, s->n_queue - 1);
        }
}

unsigned log_flush(usec_t max_wait) {
        usec_t t = now(CLOCK_MONOTONIC), until = max_wait >= USEC_INFINITY - t ? USEC_INFINITY : t + max_wait;

        if (flush_deadline != USEC_INFINITY)
                until = MIN(until, flush_deadline);
        if (journal_sink.opened)
                sink_flush(&journal_sink, until);
        if (stderr_sink.opened)
                sink_flush(&stderr_sink, until);
        return log_dropped();
}

int log_internal(int level, int error, const char *fmt, ...) {
        char buf[LOG_LINE_MAX];
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > max_level)
                return -error;

        errno = error;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        emit(level, NULL, NULL, error, buf);
        return -error;
}

void log_event(int level, const char *message_id, const LogEvent *e, const char *fmt, ...) {
        char buf[LOG_LINE_MAX];
        int error = e ? e->error : 0;
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > max_level)
                return;

        errno = error;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        emit(level, message_id, e, error, buf);
}
