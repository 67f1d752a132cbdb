/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stddef.h>

#include "defer-commit.h"
#include "shared/macro.h"
#include "shared/parse-util.h"

static const char why_knob_unread[] =
        "sync_on_suspend cannot be read: no backstop if the late pass does not run";
static const char why_hook_unread[] =
        "suspend-sync's system-sleep entry could not be read: a late pass is not certain";

bool defer_commit_allowed(const DeferFacts *f, const char **ret_why) {
        *ret_why = NULL;
        if (!f->unit_pass || !f->policy)
                return false;
        if (!f->writeback_first)
                *ret_why = "WritebackFirst=no: the late pass would commit while the data is in flight";
        else if (f->knob < 0)
                *ret_why = why_knob_unread;
        else if (f->knob == 0)
                *ret_why = "the kernel's own sync is off: no backstop if the late pass does not run";
        else if (f->required != 0)
                *ret_why = "the sleep requires this unit (require-sync.conf, a Requires= on it, or no answer "
                           "from PID 1): it commits everything itself";
        else if (f->fail_on_timeout)
                *ret_why = "OnTimeout=fail: the unit's own result must tell of every timeout";
        else if (!f->handover_ok)
                *ret_why = "no usable state directory: the late pass would not learn what was left to it";
        else if (f->hook_entry <= 0)
                *ret_why =
                        f->hook_entry == 0
                                ? "suspend-sync's system-sleep entry is masked, replaced or missing: no late pass would "
                                  "sync it"
                                : why_hook_unread;
        else if (!f->hook_reachable)
                *ret_why =
                        "the system-sleep hook's link is down or this pass has no token: no late pass would sync it";
        else if (f->kick_failed)
                *ret_why = "the flusher threads could not be woken: the data would wait for the late pass";
        return !*ret_why;
}

int defer_commit_why_error(const DeferFacts *f, const char *why) {
        if (why == why_knob_unread)
                return MIN(f->knob, 0);
        /* -ENODATA: no answer from the reader, an absence, not an error to show */
        if (why == why_hook_unread)
                return f->hook_entry == -ENODATA ? 0 : MIN(f->hook_entry, 0);
        return 0;
}

int defer_commit_required(const char *env_value, bool managed, int requirers) {
        if (env_value && env_value[0] && parse_boolean(env_value) != 0)
                return 1;
        if (!managed)
                return 0; /* not run by a service manager: no unit's start waits for ours */
        return requirers != 0;
}
