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

static int plot_cycle(const SleepCycle *cyc) {
        const RunRecord *unit = cyc->unit, *late = cyc->late;
        _cleanup_free_ PlotBar *bars = NULL;
        _cleanup_free_ char *svg = NULL;
        char title[160], when[FORMAT_TIMESTAMP_MAX];
        PlotCycle c = {};
        size_t n = 0;
        int r;

        bars = calloc(PLOT_BARS_MAX, sizeof(PlotBar));
        if (!bars)
                return log_oom();
        n = add_bars(bars, n, unit, "unit");
        n = add_bars(bars, n, late, "late");
        format_timestamp(when, sizeof when, sleep_cycle_start(cyc));
        snprintf(title, sizeof title, "%s, %s", sleep_cycle_action(cyc) ?: "sleep", when);
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
        _cleanup_(cycle_set_done) CycleSet set = {};
        _cleanup_close_ int fd = -EBADF;
        CycleRecord *c = NULL;
        size_t n_c = 0;
        int r;

        r = cycle_set_load(a->state_dir, &set, NULL, NULL);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                log_debug_errno(r, "No run records in '%s' (%m).", a->state_dir);
        if (set.n_cycles > 0)
                return plot_cycle(&set.cycles[0]);

        /* After a reboot: the persistent history. */
        fd = open(a->history_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0 && history_load(fd, 1, &c, &n_c, NULL) >= 0 && n_c == 1) {
                SleepCycle v = cycle_record_view(&c[0]);

                r = plot_cycle(&v);
                cycle_record_array_free(c, n_c);
                return r;
        }
        cycle_record_array_free(c, n_c);
        return log_error_errno(ENOENT, "No sleep cycle recorded in '%s' or '%s' yet.", a->state_dir,
                               a->history_dir);
}
