/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <stdio.h>

#include "context.h"
#include "log.h"
#include "verbs.h"

int verb_cat_config(const Args *a) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = context_load_policy(a, &c);
        if (r < 0)
                return r;
        r = policy_format(c.policy, &text);
        if (r < 0)
                return log_oom();
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : log_error_errno(negative_errno(), "Failed to write output: %m");
}
