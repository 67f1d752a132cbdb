/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * One sleep cycle as an SVG timeline, like `systemd-analyze plot` (pure: bars in, text out): one
 * bar per synced mount (start, end, outcome colour), the unit pass's deadline, the late pass and
 * the moment the sleep was handed to the kernel (the end of the late pass: systemd-sleep writes
 * /sys/power/state right after its hooks).
 */

#include <stddef.h>

#include "shared/time-util.h"

typedef struct PlotBar {
        const char *label;   /* mount point (any bytes: escaped) */
        const char *pass;    /* "unit" | "late" */
        const char *outcome; /* "synced" | "timeout" | "error" | ... (colour) */
        usec_t start, end;   /* realtime */
} PlotBar;

typedef struct PlotCycle {
        const char *title;           /* e.g. "suspend, Tue 2026-12-01 10:00:00 UTC" */
        usec_t unit_start, unit_end; /* 0/0: no unit pass */
        usec_t deadline;             /* realtime of the unit pass's deadline, 0 none */
        usec_t late_start, late_end; /* 0/0: no late pass */
        const PlotBar *bars;
        size_t n_bars;
} PlotCycle;

#define PLOT_BARS_MAX 4096U

/* Returns 0, -ENOMEM, -EINVAL (no pass), -E2BIG (more than PLOT_BARS_MAX bars). */
int plot_svg(const PlotCycle *c, char **ret);
