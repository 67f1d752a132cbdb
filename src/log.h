/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Logging for the verbs (core modules never log): to the journal with structured fields when
 * stderr is connected to journald ($JOURNAL_STREAM matches stderr's dev:inode), else plain text on
 * stderr. sd_journal_send() silently succeeds without journald, so the choice is made here.
 */

#include <stdbool.h>
#include <syslog.h>

#include "shared/macro.h"
#include "shared/time-util.h"

void log_setup(void);
void log_set_max_level(int level);
bool log_to_journal(void);

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

/*
 * A structured event: MESSAGE_ID plus the suspend-sync fields. mount/outcome may be NULL,
 * duration USEC_INFINITY = none, error 0 = none. On stderr only the message is printed.
 */
void log_event(int level, const char *message_id, const char *mount, const char *outcome,
               usec_t duration, int error, const char *fmt, ...) _printf_(7, 8);
