/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"

#include "shared/macro.h"
#include "state.h"

const char *daemon_pass_why_not(const DaemonStartFacts *f, char *buf, size_t size) {
        char x[FORMAT_TIMESPAN_MAX];

        if (f->bound == 0)
                return "logind waits for delay locks too briefly for a pass";
        if (f->unread)
                return "its configuration could not be read when it was last read (see the message then)";
        if (f->deadline > DAEMON_PASS_DEADLINE_MAX) {
                (void) snprintf(buf, size, "DeadlineSec= is above %s, which the unit's pass would wait for",
                                format_timespan(x, sizeof x, DAEMON_PASS_DEADLINE_MAX));
                return buf;
        }
        if (f->replaced)
                return "this daemon does not run the installed binary, replaced since it started? (restart "
                       "suspend-sync-daemon.service)";
        if (f->busy)
                return "the last sleep's pass or bookkeeping still runs";
        return NULL;
}

const char *daemon_mark_why_not(const DaemonPassFacts *f, char *buf, size_t size) {
        if (!f->same_sleep)
                return "logind announced another sleep or the end of this one while it ran";
        if (!f->ended)
                return "it did not end while logind waited";
        if (f->status != 0) {
                if (f->status < 0)
                        return "it was killed";
                (void) snprintf(buf, size, "it exited with status %d", f->status);
                return buf;
        }
        if (f->record)
                return f->record;
        /* A requirer: the unit's failure calls the sleep off, so its pass must commit everything
         * itself (defer-commit.h), which ours, run as no unit's, does not. */
        if (f->required < 0)
                return "PID 1 did not say which units require suspend-sync.service";
        if (f->required > 0)
                return "a unit requires suspend-sync.service";
        /* inactive, or failed the last time: not running. Anything else is the last sleep's unit
         * still stopping: its ExecStopPost= (restore-knob) removes this sleep's record. */
        if (!f->unit_state)
                return "PID 1 did not say whether suspend-sync.service runs";
        if (!STR_IN_SET(f->unit_state, "inactive", "failed")) {
                (void) snprintf(buf, size, "suspend-sync.service is %s", f->unit_state);
                return buf;
        }
        if (f->inhibitors < 0)
                return "logind did not say which other programs delay the sleep";
        if (f->inhibitors > 0) {
                /* Their work (saving state on PrepareForSleep) may write after the pass: the unit,
                 * which systemd starts once every delay lock is released, runs after it. */
                (void) snprintf(buf, size,
                                "another program delays the sleep too (%s), and may write after it",
                                f->other_who ?: "unknown");
                return buf;
        }
        return NULL;
}

void daemon_report_format(int code, bool recorded, unsigned char buf[static DAEMON_REPORT_SIZE]) {
        buf[0] = 'R';
        buf[1] = (unsigned char) (code & 0xff);
        buf[2] = recorded;
        buf[3] = '\n';
}

int daemon_report_parse(const unsigned char *buf, size_t n, int *ret_code, bool *ret_recorded) {
        if (n != DAEMON_REPORT_SIZE || buf[0] != 'R' || buf[2] > 1 || buf[3] != '\n')
                return -EBADMSG;
        *ret_code = buf[1];
        *ret_recorded = buf[2] == 1;
        return 0;
}

const char *daemon_record_why_not(const RunRecord *rec, pid_t pass_pid, usec_t pass_started_boottime) {
        if (!rec || !streq_ptr(rec->trigger, "unit") || pass_pid <= 0 || rec->pid != pass_pid ||
            rec->started_boottime == 0 || rec->started_boottime < pass_started_boottime)
                return "its record is not there";
        if (!streq_ptr(rec->result, "success"))
                return "it did not sync everything (see its record)";
        return NULL;
}
