/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdio.h>

#include "context.h"
#include "log.h"
#include "verbs.h"

int verb_cat_config(const Args *a) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        _cleanup_free_ char *text = NULL;
        PolicyOverrides o = context_overrides(a);
        int r;

        r = context_read_policy(a, &c);
        if (r < 0)
                return r;
        /* Asked for exactly this file: showing the defaults instead would answer another question. */
        if (c.config_error == -EPROTO) /* the reader ended without an answer (conf-read.h) */
                return log_error_errno(
                        c.config_error,
                        "Failed to read configuration file '%s' (--config=): the configuration "
                        "reader failed without saying why.",
                        a->config);
        if (c.config_error < 0)
                return log_error_errno(c.config_error,
                                       "Failed to read configuration file '%s' (--config=): %m", a->config);
        context_log_policy(&c);
        /* The files' values with their origins; what the command line overrides is noted apart. */
        r = policy_format_overrides(c.config, &o, &text);
        if (r < 0)
                return log_oom();
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : log_error_errno(negative_errno(), "Failed to write output: %m");
}
