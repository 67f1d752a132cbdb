/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Manager: PID 1 on its private bus (unix:path=/run/systemd/private: root only, no dbus-daemon
 * needed, which may not run this early or this late in a sleep). Every wait is bounded by a
 * deadline of the caller's (sd_bus_call() would wait up to 25 s). Does not log.
 *
 * Which units require this one: a unit that has Requires=, Requisite= or BindsTo= on it (RequiredBy=,
 * RequisiteOf=, BoundBy= of this unit, as PID 1 loaded them: links, unit files, drop-ins of any
 * kind, aliases, specifiers) fails or stops when it fails; when that is a sleep target, a failure
 * of the unit's pass calls the sleep off (defer-commit.h). Asked early and answered late, so that
 * the round trip runs beside the pass's own work.
 *
 * The resident daemon asks the same, and the unit's ActiveState, on the system bus it already holds
 * (ManagerUnitFacts: no connection set up during a sleep, and no private connection kept open,
 * which PID 1 would send every unit and job signal to), answered through its event loop.
 */

#include <systemd/sd-bus.h>

#include "shared/macro.h"
#include "shared/time-util.h"

/* A new connection to PID 1's private bus, being set up (sd_bus_start()): messages may be queued
 * at once. */
int manager_bus_open(sd_bus **ret);
/* Finishes the connection's setup by 'deadline' and checks that the peer is root, as systemctl
 * does. -ETIMEDOUT, -EPERM, or sd-bus's negative errno. */
int manager_bus_wait_ready(sd_bus *bus, usec_t deadline);

typedef struct ManagerRequirers ManagerRequirers;

/* Asks PID 1, without waiting, which units require 'unit'. Negative errno when it cannot ask. */
int manager_requirers_start(const char *unit, ManagerRequirers **ret);
/* The answer, waited for until 'deadline': 1 some unit requires it, 0 none does, negative errno
 * when no complete answer came (-ETIMEDOUT, an error reply, a closed connection). */
int manager_requirers_finish(ManagerRequirers *q, usec_t deadline);
ManagerRequirers *manager_requirers_free(ManagerRequirers *q);
/* The same question and the unit's ActiveState, asked on the caller's bus (the system bus, or PID
 * 1's private one) attached to the caller's event loop, which dispatches the answers: nothing here
 * waits. Read what has come so far with the getters; free cancels the rest. */
typedef struct ManagerUnitFacts ManagerUnitFacts;
/* Called after each answer (from the event loop); it may free q. */
typedef int (*ManagerUnitFactsAnswer)(void *userdata);

int manager_unit_facts_start(sd_bus *bus, const char *unit, ManagerUnitFactsAnswer on_answer, void *userdata,
                             ManagerUnitFacts **ret);
/* 1 some unit requires it, 0 none does (all three answers in), negative errno: an answer failed
 * (-ETIMEDOUT: not all of them in yet; -ENOTCONN: q is NULL). */
int manager_unit_facts_required(const ManagerUnitFacts *q);
/* Whether an answer that matters is still to come. */
bool manager_unit_facts_pending(const ManagerUnitFacts *q);
/* Its ActiveState, NULL until it has come (or when it failed). */
const char *manager_unit_facts_active_state(const ManagerUnitFacts *q);
ManagerUnitFacts *manager_unit_facts_free(ManagerUnitFacts *q);
DEFINE_TRIVIAL_CLEANUP_FUNC(ManagerUnitFacts *, manager_unit_facts_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(ManagerRequirers *, manager_requirers_free);
