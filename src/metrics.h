/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Prometheus text exposition format (version 0.0.4) of the last sleep cycle, for node_exporter's
 * textfile collector (pure: records in, text out). Every series is a gauge of the last cycle,
 * labelled with the pass ("unit", "late"); per mount only what was synced or tried (skipped
 * pseudo filesystems would only add series). Label values are escaped as the format requires
 * (\\, \", \n); a byte that is not valid UTF-8 is written as the text "\\xNN".
 */

#include "cycle.h"

#define METRICS_FILE_NAME "suspend_sync.prom"

/* Formats the cycle (NULL: no cycle recorded yet; only suspend_sync_cycles is written).
 * n_cycles is the number of cycles the history holds. Returns 0 or -ENOMEM. */
int metrics_format(const SleepCycle *c, size_t n_cycles, char **ret);
