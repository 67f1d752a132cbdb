/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Sleep cycles from run records (pure): a sleep runs the unit's pass (trigger "unit", before
 * sleep.target) and then, when the sleep goes ahead, the late pass (trigger "hook", from
 * systemd-sleep). Records of other triggers (a manual `suspend-sync run`) belong to no cycle.
 */

#include <stddef.h>

#include "state.h"

/* The late pass follows its unit's pass within seconds (it runs after sleep.target is reached);
 * a hook record later than this after the end of the unit's pass starts a cycle of its own. */
#define CYCLE_PAIR_WINDOW_USEC (5U * 60U * USEC_PER_SEC)

typedef struct SleepCycle {
        const RunRecord *unit; /* NULL: the unit's pass is not recorded (older than the history) */
        const RunRecord *late; /* NULL: no late pass (sleep called off, or the hook did not run) */
} SleepCycle;

/* Groups records (any order) into cycles, newest first (by the start of their first pass). The
 * cycles point into records[]. Returns the number of cycles (0 with *ret NULL when there is
 * none), -ENOMEM. */
int sleep_cycles_build(const RunRecord *records, size_t n, SleepCycle **ret);

/* The run records of a state directory and their cycles (newest first), owned together. */
typedef struct CycleSet {
        RunRecord *records;
        size_t n_records;
        SleepCycle *cycles;
        size_t n_cycles;
} CycleSet;

/* Loads dir's history (state_load_history(); unreadable records counted in *ret_n_corrupt, those
 * not parsed for lack of memory in *ret_n_nomem, either may be NULL) and groups it. 0, or the load's
 * negative errno, or -ENOMEM; *ret is empty on error. */
int cycle_set_load(const char *dir, CycleSet *ret, size_t *ret_n_corrupt, size_t *ret_n_nomem);
void cycle_set_done(CycleSet *s);

/* The cycle's sleep action (the late pass's, else the unit's), NULL when neither recorded one. */
const char *sleep_cycle_action(const SleepCycle *c);
/* Start of the cycle's first pass (realtime). */
usec_t sleep_cycle_start(const SleepCycle *c);
