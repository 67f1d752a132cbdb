/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * `metrics`: the Prometheus text of the last sleep cycle on stdout (what record-cycle writes for
 * node_exporter's textfile collector).
 */

#include <stdio.h>

#include "log.h"
#include "metrics.h"
#include "verbs.h"

int verb_metrics(const Args *a) {
        _cleanup_(cycle_set_done) CycleSet set = {};
        _cleanup_free_ char *text = NULL;
        int r;

        r = cycle_set_load(a->state_dir, &set, NULL, NULL);
        if (r < 0 && r != -ENOMEM)
                return log_error_errno(r, "Failed to read the run records in '%s': %m", a->state_dir);
        if (r >= 0)
                r = metrics_format(set.n_cycles > 0 ? &set.cycles[0] : NULL, set.n_cycles, &text);
        if (r < 0)
                return log_oom();
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : log_error_errno(negative_errno(), "Failed to write the metrics: %m");
}
