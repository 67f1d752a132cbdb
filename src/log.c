/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "log.h"

#define LOG_LINE_MAX 2048

static int max_level = LOG_INFO;
static bool journal = false;

void log_setup(void) {
        const char *e = getenv("JOURNAL_STREAM"), *lvl = getenv("SUSPEND_SYNC_LOG_LEVEL");
        unsigned long long dev, ino;
        struct stat st;

        journal = false;
        if (e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) >= 0 &&
            (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino)
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

static void emit(int level, const char *message_id, const char *mount, const char *outcome,
                 usec_t duration, int error, const char *msg) {
        char f_msg[LOG_LINE_MAX + 16], f_prio[32], f_id[64], f_dur[64], f_err[32];
        _cleanup_free_ char *f_mount = NULL, *f_outcome = NULL;
        struct iovec iov[8];
        size_t n = 0;

        if (!journal) {
                fprintf(stderr, "%s\n", msg);
                return;
        }

#define ADD(s) iov[n++] = (struct iovec) { .iov_base = (void *) (s), .iov_len = strlen(s) }
        snprintf(f_msg, sizeof f_msg, "MESSAGE=%s", msg);
        ADD(f_msg);
        snprintf(f_prio, sizeof f_prio, "PRIORITY=%i", level);
        ADD(f_prio);
        ADD("SYSLOG_IDENTIFIER=suspend-sync");
        if (message_id) {
                snprintf(f_id, sizeof f_id, "MESSAGE_ID=%s", message_id);
                ADD(f_id);
        }
        if (mount && asprintf(&f_mount, "SUSPEND_SYNC_MOUNT=%s", mount) >= 0)
                ADD(f_mount);
        if (outcome && asprintf(&f_outcome, "SUSPEND_SYNC_OUTCOME=%s", outcome) >= 0)
                ADD(f_outcome);
        if (duration != USEC_INFINITY) {
                snprintf(f_dur, sizeof f_dur, "SUSPEND_SYNC_DURATION_USEC=%llu", (unsigned long long) duration);
                ADD(f_dur);
        }
        if (error != 0) {
                snprintf(f_err, sizeof f_err, "ERRNO=%i", error);
                ADD(f_err);
        }
#undef ADD
        (void) sd_journal_sendv(iov, (int) n);
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
        emit(level, NULL, NULL, NULL, USEC_INFINITY, error, buf);
        return -error;
}

void log_event(int level, const char *message_id, const char *mount, const char *outcome,
               usec_t duration, int error, const char *fmt, ...) {
        char buf[LOG_LINE_MAX];
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > max_level)
                return;

        errno = error;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        emit(level, message_id, mount, outcome, duration, error, buf);
}
