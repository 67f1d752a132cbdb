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
        RunRecord *records = NULL;
        _cleanup_free_ SleepCycle *cycles = NULL;
        _cleanup_free_ char *text = NULL;
        size_t n = 0;
        int n_cycles, r;

        r = state_load_history(a->state_dir, &records, &n, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to read the run records in '%s': %m", a->state_dir);
        n_cycles = sleep_cycles_build(records, n, &cycles);
        r = n_cycles < 0 ? n_cycles
                         : metrics_format(n_cycles > 0 ? &cycles[0] : NULL, (size_t) n_cycles, &text);
        run_record_array_free(records, n);
        if (r < 0)
                return log_oom();
        fputs(text, stdout);
        return fflush(stdout) == 0 ? 0 : log_error_errno(negative_errno(), "Failed to write the metrics: %m");
}
