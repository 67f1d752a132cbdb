/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Logging for the verbs (core modules never log): to the journal with structured fields when
 * stderr is connected to journald ($JOURNAL_STREAM matches stderr's dev:inode), else plain text on
 * stderr. sd_journal_send() silently succeeds without journald, so the choice is made here.
 *
 * Logging never blocks: a journald that stops reading (stuck on a hung disk) or a full stderr pipe
 * must not hold a run past its deadline. Journal messages are sent with the native protocol on our
 * own non-blocking datagram socket; stderr is written without blocking (send(MSG_DONTWAIT) on a
 * socket, a non-blocking reopen of a pipe or terminal, poll() first otherwise). A message that
 * cannot go out now waits in a small bounded queue, is retried at the next log call and at
 * log_flush(), and is then dropped and counted; the count is reported once the target accepts
 * messages again. See suspend-sync(8), LOGGING.
 */

#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

#include "shared/macro.h"
#include "shared/time-util.h"

/* Size bounds of one journal datagram and its fields. JOURNAL_DATAGRAM_MAX stays below the smallest
 * send buffer the kernel allows an AF_UNIX socket (SOCK_MIN_SNDBUF, 4608 bytes on 64-bit, minus 32):
 * a datagram this small is never refused with EMSGSIZE, so no memfd fallback is needed. */
#define JOURNAL_DATAGRAM_MAX 4096U
#define LOG_LINE_MAX 2048U                    /* MESSAGE= (and a stderr line), bytes */
#define LOG_FIELD_MAX 1024U                   /* any other field value (mount paths), bytes */
#define LOG_QUEUE_MAX 16U                     /* messages waiting for a target that is not accepting */
#define LOG_FLUSH_WAIT (250U * USEC_PER_MSEC) /* longest log_flush() wait, within the deadline */

void log_setup(void);
void log_set_max_level(int level);
bool log_to_journal(void);

/* A unit every later journal message names as OBJECT_SYSTEMD_UNIT= (NULL: none, the default), e.g.
 * "suspend-sync.service" for both passes of a sleep. "journalctl -u UNIT" matches that field in
 * messages from root (_UID=0, a trusted field from the socket's credentials), so it shows the late
 * pass (which runs in systemd-suspend.service) and a pass whose _SYSTEMD_UNIT journald could not
 * read because the process had exited. Not copied: unit must outlive the logging. */
void log_set_object_unit(const char *unit);

/* CLOCK_MONOTONIC time after which log_flush() never waits (the run's deadline). */
void log_set_deadline(usec_t deadline);

/* In a forked child that goes on without exec: drops the parent's queued messages (the parent sends
 * them) and closes the child's copies of the sinks' fds; the next message opens them anew. */
void log_forget_parent(void);
/* Tries to send what is queued, waiting at most max_wait and never past the deadline; then drops
 * and counts what is left and reports the count of dropped messages once (without blocking).
 * Returns the number of messages dropped in total. Call once at the end of a verb. */
unsigned log_flush(usec_t max_wait);

/* Logs and returns -abs(error) (or 0 when error is 0). %m expands to strerror(abs(error)). */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_error_errno(e, ...) log_internal(LOG_ERR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, (e), __VA_ARGS__)
#define log_error(...) log_internal(LOG_ERR, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_oom() log_internal(LOG_ERR, ENOMEM, "Out of memory.")
#define log_debug(...) log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_DEBUG, (e), __VA_ARGS__)

/*
 * The suspend-sync fields of structured events. Which of them a message sends is decided by its
 * MESSAGE_ID alone, through log_event_specs (log.c): the single list that the encoder follows and
 * that test-log checks the catalog (catalog/suspend-sync.catalog) against, so that "journalctl -x"
 * never shows a placeholder for a field that was not sent.
 */
typedef enum LogField {
        LOG_FIELD_MOUNT,         /* SUSPEND_SYNC_MOUNT= */
        LOG_FIELD_OUTCOME,       /* SUSPEND_SYNC_OUTCOME= */
        LOG_FIELD_DURATION_USEC, /* SUSPEND_SYNC_DURATION_USEC= */
        LOG_FIELD_ERRNO,         /* ERRNO= (also sent by any message with an error) */
        LOG_FIELD_TRIGGER,       /* SUSPEND_SYNC_TRIGGER= */
        LOG_FIELD_SLEEP_ACTION,  /* SUSPEND_SYNC_SLEEP_ACTION= */
        LOG_FIELD_KNOB_OLD,      /* SUSPEND_SYNC_KNOB_OLD= */
        LOG_FIELD_KNOB_NEW,      /* SUSPEND_SYNC_KNOB_NEW= */
        LOG_FIELD_CONFIG_FILE,   /* SUSPEND_SYNC_CONFIG_FILE= */
        LOG_FIELD_CONFIG_LINE,   /* SUSPEND_SYNC_CONFIG_LINE= */
        LOG_FIELD_SYNCED,        /* SUSPEND_SYNC_SYNCED=: superblocks synced by the pass */
        LOG_FIELD_TIMED_OUT,     /* SUSPEND_SYNC_TIMED_OUT= */
        LOG_FIELD_FAILED,        /* SUSPEND_SYNC_FAILED= */
        LOG_FIELD_SKIPPED,       /* SUSPEND_SYNC_SKIPPED=: mounts */
        LOG_FIELD_DEADLINE_USEC, /* SUSPEND_SYNC_DEADLINE_USEC= */
        _LOG_FIELD_MAX,
} LogField;

#define LOG_FIELD_BIT(f) (1U << (f))

/* The journal key of a field, e.g. "SUSPEND_SYNC_MOUNT". */
const char *log_field_name(LogField f);

/* The fields one MESSAGE_ID sends (a set of LOG_FIELD_BIT()s), all of them, every time. */
typedef struct LogEventSpec {
        const char *message_id;
        unsigned fields;
} LogEventSpec;

extern const LogEventSpec log_event_specs[];
extern const size_t log_event_specs_n;

/* The spec of a MESSAGE_ID, or NULL for an unknown one (which then sends no suspend-sync field). */
const LogEventSpec *log_event_spec(const char *message_id);

/* The values of an event. Only the fields of the message's spec are sent, whatever else is set;
 * a string field of the spec left NULL is sent as "n/a". error != 0 is sent as ERRNO= always. */
typedef struct LogEvent {
        const char *mount;
        const char *outcome;
        usec_t duration;
        int error;
        const char *trigger;
        const char *sleep_action;
        int knob_old, knob_new;
        const char *config_file;
        unsigned config_line;
        size_t n_synced, n_timed_out, n_failed, n_skipped; /* the run summary's tallies */
        usec_t deadline;
} LogEvent;

/* A structured event: MESSAGE_ID plus the fields of its spec, taken from e (may be NULL: nothing
 * set). On stderr only the message is printed. */
void log_event(int level, const char *message_id, const LogEvent *e, const char *fmt, ...) _printf_(4, 5);

/* One journal field: KEY (A-Z, 0-9, '_'; not checked here) and a NUL-terminated value. */
typedef struct JournalField {
        const char *key;
        const char *value;
} JournalField;

/*
 * Encodes fields as one datagram of the journal native protocol (pure): "KEY=value\n", or for a
 * value containing a newline the binary-safe "KEY\n" <value length, 64-bit little endian> "value\n".
 * A value longer than LOG_LINE_MAX (MESSAGE) or LOG_FIELD_MAX (others) is cut at a UTF-8 character
 * boundary; a field that does not fit in the rest of the buffer is cut the same way, or left out if
 * not even its key fits. Returns the number of bytes written to buf (at most size).
 */
size_t journal_encode(const JournalField *fields, size_t n_fields, char *buf, size_t size);

/* Tests: sends journal messages to fd (a connected datagram socket; taken over) instead of
 * /run/systemd/journal/socket, and logs in journal mode. -1 restores the default. Either way both
 * targets start afresh: queues and counters emptied, stderr classified again at its next use. */
void log_set_journal_fd_for_test(int fd);
/* Tests: messages dropped so far (both targets). */
unsigned log_dropped(void);
