/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * `plot`: the last sleep cycle as an SVG timeline on stdout (plot.c). The run records under /run
 * first; after a reboot (none there), the newest cycle of the persistent history.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "history.h"
#include "log.h"
#include "shared/format-util.h"
#include "plot.h"
#include "verbs.h"

/* Bars of the mounts a pass synced or tried. A mount's start is the pass start plus its recorded
 * offset (records older than the offset: the pass start). */
static size_t add_bars(PlotBar *bars, size_t n, const RunRecord *r, const char *pass) {
        for (size_t i = 0; r && i < r->n_mounts && n < PLOT_BARS_MAX; i++) {
                const RunMount *m = &r->mounts[i];
                usec_t start;

                if (!streq(m->action, "sync"))
                        continue;
                start = usec_add(r->started_realtime, m->start_offset);
                bars[n++] = (PlotBar) { .label = m->mount_point,
                                        .pass = pass,
                                        .outcome = m->outcome,
                                        .start = start,
                                        .end = usec_add(start, m->duration) };
        }
        return n;
}

static int plot_passes(const RunRecord *unit, const RunRecord *late) {
        _cleanup_free_ PlotBar *bars = NULL;
        _cleanup_free_ char *svg = NULL;
        const RunRecord *first = unit ? unit : late;
        char title[160], when[FORMAT_TIMESTAMP_MAX];
        PlotCycle c = {};
        size_t n = 0;
        int r;

        bars = calloc(PLOT_BARS_MAX, sizeof(PlotBar));
        if (!bars)
                return log_oom();
        n = add_bars(bars, n, unit, "unit");
        n = add_bars(bars, n, late, "late");
        format_timestamp(when, sizeof when, first->started_realtime);
        snprintf(title, sizeof title, "%s, %s",
                 (late && late->sleep_action) ? late->sleep_action
                                              : (first->sleep_action ? first->sleep_action : "sleep"),
                 when);
        c.title = title;
        if (unit) {
                c.unit_start = unit->started_realtime;
                c.unit_end = usec_add(unit->started_realtime, unit->duration);
                c.deadline = usec_add(unit->started_realtime, unit->deadline);
        }
        if (late) {
                c.late_start = late->started_realtime;
                c.late_end = usec_add(late->started_realtime, late->duration);
        }
        c.bars = bars;
        c.n_bars = n;
        r = plot_svg(&c, &svg);
        if (r < 0)
                return log_error_errno(r, "Failed to draw the cycle: %m");
        fputs(svg, stdout);
        return fflush(stdout) == 0 ? 0 : log_error_errno(negative_errno(), "Failed to write the plot: %m");
}

int verb_plot(const Args *a) {
        RunRecord *records = NULL;
        _cleanup_free_ SleepCycle *cycles = NULL;
        size_t n = 0;
        int n_cycles, r;

        r = state_load_history(a->state_dir, &records, &n, NULL);
        if (r < 0)
                log_debug_errno(r, "No run records in '%s' (%m).", a->state_dir);
        n_cycles = r < 0 ? 0 : sleep_cycles_build(records, n, &cycles);
        if (n_cycles < 0) {
                run_record_array_free(records, n);
                return log_oom();
        }
        if (n_cycles > 0) {
                r = plot_passes(cycles[0].unit, cycles[0].late);
                run_record_array_free(records, n);
                return r;
        }
        run_record_array_free(records, n);

        /* After a reboot: the persistent history. */
        _cleanup_close_ int fd = open(a->history_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CycleRecord *c = NULL;
        size_t n_c = 0;

        if (fd >= 0 && history_load(fd, 1, &c, &n_c, NULL) >= 0 && n_c == 1) {
                r = plot_passes(c[0].has_unit ? &c[0].unit : NULL, c[0].has_late ? &c[0].late : NULL);
                cycle_record_array_free(c, n_c);
                return r;
        }
        cycle_record_array_free(c, n_c);
        return log_error_errno(ENOENT, "No sleep cycle recorded in '%s' or '%s' yet.", a->state_dir,
                               a->history_dir);
}
