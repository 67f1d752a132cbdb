/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>

#include "cycle.h"
#include "shared/sort-util.h"

static bool is_unit(const RunRecord *r) {
        return streq_ptr(r->trigger, "unit");
}

static bool is_late(const RunRecord *r) {
        return streq_ptr(r->trigger, "hook");
}

static int cmp_started(const RunRecord *const *a, const RunRecord *const *b) {
        return CMP((*a)->started_realtime, (*b)->started_realtime);
}

usec_t sleep_cycle_start(const SleepCycle *c) {
        return c->unit ? c->unit->started_realtime : c->late->started_realtime;
}

const char *sleep_cycle_action(const SleepCycle *c) {
        if (c->late && c->late->sleep_action)
                return c->late->sleep_action;
        return c->unit ? c->unit->sleep_action : NULL;
}

/* Whether late is the late pass of the sleep whose unit's pass is unit. */
static bool pairs(const RunRecord *unit, const RunRecord *late) {
        usec_t end = usec_add(unit->started_realtime, unit->duration);

        if (late->started_realtime < unit->started_realtime)
                return false;
        if (late->started_realtime > usec_add(end, CYCLE_PAIR_WINDOW_USEC))
                return false;
        /* Both name an action: it must be the same sleep. */
        return !unit->sleep_action || !late->sleep_action || streq(unit->sleep_action, late->sleep_action);
}

int sleep_cycles_build(const RunRecord *records, size_t n, SleepCycle **ret) {
        _cleanup_free_ const RunRecord **order = NULL;
        _cleanup_free_ SleepCycle *c = NULL;
        size_t n_order = 0, n_c = 0;

        order = calloc(n ? n : 1, sizeof(*order));
        c = calloc(n ? n : 1, sizeof(*c));
        if (!order || !c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (is_unit(&records[i]) || is_late(&records[i]))
                        order[n_order++] = &records[i];
        typesafe_qsort(order, n_order, cmp_started);

        /* Oldest first: a unit record opens a cycle, a hook record closes the open one if it pairs
         * with it and opens (and closes) a late-only cycle otherwise. */
        for (size_t i = 0; i < n_order; i++) {
                const RunRecord *r = order[i];

                if (is_unit(r)) {
                        c[n_c++] = (SleepCycle) { .unit = r };
                        continue;
                }
                if (n_c > 0 && c[n_c - 1].unit && !c[n_c - 1].late && pairs(c[n_c - 1].unit, r))
                        c[n_c - 1].late = r;
                else
                        c[n_c++] = (SleepCycle) { .late = r };
        }

        /* Newest first. */
        for (size_t i = 0; i < n_c / 2; i++) {
                SleepCycle t = c[i];

                c[i] = c[n_c - 1 - i];
                c[n_c - 1 - i] = t;
        }
        if (n_c == 0) {
                *ret = NULL;
                return 0;
        }
        *ret = TAKE_PTR(c);
        return (int) n_c;
}

void cycle_set_done(CycleSet *s) {
        if (!s)
                return;
        run_record_array_free(s->records, s->n_records);
        free(s->cycles);
        *s = (CycleSet) {};
}

int cycle_set_load(const char *dir, CycleSet *ret, size_t *ret_n_corrupt, size_t *ret_n_nomem) {
        _cleanup_(cycle_set_done) CycleSet s = {};
        int r;

        *ret = (CycleSet) {};
        r = state_load_history(dir, &s.records, &s.n_records, ret_n_corrupt, ret_n_nomem);
        if (r < 0)
                return r;
        r = sleep_cycles_build(s.records, s.n_records, &s.cycles);
        if (r < 0)
                return r;
        s.n_cycles = (size_t) r;
        *ret = s;
        s = (CycleSet) {};
        return 0;
}
