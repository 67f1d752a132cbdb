/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <stdio.h>

#include "daemon.h"

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
