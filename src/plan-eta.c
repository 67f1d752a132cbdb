/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <stdlib.h>

#include "plan.h"
#include "shared/sort-util.h"
#include "shared/string-util.h"

/* Longest processing time first: n works (already largest first) over n_slots workers. */
usec_t plan_lpt_eta(const usec_t *work, size_t n, unsigned n_slots) {
        _cleanup_free_ usec_t *slots = calloc(MAX(n_slots, 1U), sizeof(usec_t));
        usec_t eta = 0;

        if (!slots)
                return USEC_INFINITY;
        for (size_t g = 0; g < n; g++) {
                size_t best = 0;

                for (size_t j = 1; j < MAX(n_slots, 1U); j++)
                        if (slots[j] < slots[best])
                                best = j;
                slots[best] = usec_add(slots[best], work[g]);
                eta = MAX(eta, slots[best]);
        }
        return eta;
}

static int cmp_usec_desc(const usec_t *a, const usec_t *b) {
        return CMP(*b, *a);
}

/* The plan's ETA from its entries (after plan_learn()): groups are runs of sync entries. */
static int plan_eta_from_entries(Plan *plan) {
        _cleanup_free_ usec_t *work = calloc(MAX(plan->n_sync, 1U), sizeof(usec_t));
        size_t n_groups = 0;

        if (!work)
                return -ENOMEM;
        for (size_t i = 0; i < plan->n_entries; i++) {
                const PlanEntry *e = &plan->entries[i];

                if (e->action != PLAN_SYNC)
                        continue;
                if (e->eta_work == USEC_INFINITY) {
                        plan->eta = USEC_INFINITY;
                        return 0;
                }
                if (n_groups == 0 || !streq_ptr(plan->entries[i - 1].group, e->group))
                        n_groups++;
                work[n_groups - 1] = usec_add(work[n_groups - 1], e->eta_work);
        }
        typesafe_qsort(work, n_groups, cmp_usec_desc);
        plan->eta = plan_lpt_eta(work, n_groups, plan->max_parallel);
        return 0;
}

size_t plan_learn(Plan *plan, const PlanLearned *l, size_t n) {
        size_t learned = 0;

        for (size_t i = 0; i < plan->n_entries; i++) {
                PlanEntry *e = &plan->entries[i];

                if (e->action != PLAN_SYNC)
                        continue;
                for (size_t k = 0; k < n; k++) {
                        if (l[k].namespace_ino != e->namespace_ino ||
                            !streq_ptr(l[k].mount_point, e->mount_point))
                                continue;
                        e->eta = e->eta == USEC_INFINITY ? l[k].p50 : usec_add(e->eta, l[k].min);
                        e->eta_work = e->eta_work == USEC_INFINITY ? l[k].p50
                                                                   : usec_add(e->eta_work, l[k].min);
                        learned++;
                        break;
                }
        }
        if (learned > 0 && plan_eta_from_entries(plan) < 0)
                plan->eta = USEC_INFINITY; /* out of memory: unknown rather than wrong */
        return learned;
}
