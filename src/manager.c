/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "manager.h"

#define SYSTEMD_PRIVATE_BUS "unix:path=/run/systemd/private"

int manager_bus_open(sd_bus **ret) {
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, SYSTEMD_PRIVATE_BUS);
        if (r < 0)
                return r;
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

/* Processes what is pending, or waits for the bus until 'deadline': 0 when it did either, -ETIMEDOUT
 * past the deadline, sd-bus's negative errno (a closed connection). */
static int bus_step(sd_bus *bus, usec_t deadline) {
        usec_t n;
        int r;

        r = sd_bus_process(bus, NULL);
        if (r != 0)
                return r < 0 ? r : 0;
        n = now(CLOCK_MONOTONIC);
        if (n >= deadline)
                return -ETIMEDOUT;
        r = sd_bus_wait(bus, deadline - n);
        return r < 0 && r != -EINTR ? r : 0;
}

int manager_bus_wait_ready(sd_bus *bus, usec_t deadline) {
        struct ucred peer = {};
        socklen_t len = sizeof(peer);
        int r;

        while ((r = sd_bus_is_ready(bus)) == 0) {
                r = bus_step(bus, deadline);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        /* Only PID 1 (root) listens there. */
        if (getsockopt(sd_bus_get_fd(bus), SOL_SOCKET, SO_PEERCRED, &peer, &len) < 0)
                return negative_errno();
        return peer.uid == 0 ? 0 : -EPERM;
}

struct ManagerRequirers {
        sd_bus *bus;
        unsigned pending; /* replies still to come */
        bool found;       /* a property listed a unit */
        int error;        /* the first failed reply */
};

static const char *const requirer_properties[] = { "RequiredBy", "RequisiteOf", "BoundBy" };

/* Asks PID 1 on bus, without waiting, for property of unit (org.freedesktop.systemd1.Unit). */
static int unit_property_async(sd_bus *bus, sd_bus_slot **slot, const char *unit, const char *property,
                               sd_bus_message_handler_t reply, void *userdata) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
        if (r < 0)
                return r;
        return sd_bus_call_method_async(bus, slot, "org.freedesktop.systemd1", path,
                                        "org.freedesktop.DBus.Properties", "Get", reply, userdata, "ss",
                                        "org.freedesktop.systemd1.Unit", property);
}

static int requirers_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        ManagerRequirers *q = userdata;
        const char *name;
        int r;

        (void) ret_error;
        q->pending--;
        if (sd_bus_message_is_method_error(m, NULL))
                r = -(sd_bus_message_get_errno(m) ?: EIO);
        else {
                /* "v" holding "as": one name is enough. */
                r = sd_bus_message_enter_container(m, 'v', "as");
                if (r >= 0)
                        r = sd_bus_message_enter_container(m, 'a', "s");
                if (r >= 0)
                        r = sd_bus_message_read_basic(m, 's', &name);
        }
        if (r > 0)
                q->found = true;
        else if (r < 0 && q->error == 0)
                q->error = r;
        return 0;
}

ManagerRequirers *manager_requirers_free(ManagerRequirers *q) {
        if (!q)
                return NULL;
        /* Never a flush: it waits without a bound for a connection PID 1 has not answered. */
        sd_bus_close_unref(q->bus);
        free(q);
        return NULL;
}

int manager_requirers_start(const char *unit, ManagerRequirers **ret) {
        _cleanup_(manager_requirers_freep) ManagerRequirers *q = NULL;
        int r;

        if (!unit)
                return -EINVAL;
        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        r = manager_bus_open(&q->bus);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(requirer_properties); i++) {
                r = unit_property_async(q->bus, NULL, unit, requirer_properties[i], requirers_reply, q);
                if (r < 0)
                        return r;
                q->pending++;
        }
        *ret = TAKE_PTR(q);
        return 0;
}

int manager_requirers_finish(ManagerRequirers *q, usec_t deadline) {
        int r;

        r = manager_bus_wait_ready(q->bus, deadline);
        while (r >= 0 && q->pending > 0 && !q->found)
                r = bus_step(q->bus, deadline);
        if (q->found)
                return 1;
        if (r < 0)
                return r;
        return q->error < 0 ? q->error : 0;
}

struct ManagerUnitFacts {
        ManagerRequirers requirers; /* the replies to the three requirer properties */
        ManagerUnitFactsAnswer on_answer;
        void *userdata;
        sd_bus_slot *slots[ELEMENTSOF(requirer_properties) + 1];
        char *active_state; /* the fourth: ActiveState */
        int state_error;
        bool state_pending;
};

static int facts_requirer_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        ManagerUnitFacts *q = userdata;

        (void) requirers_reply(m, &q->requirers, ret_error);
        return q->on_answer ? q->on_answer(q->userdata) : 0;
}

static int active_state_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        ManagerUnitFacts *q = userdata;
        const char *state;
        int r;

        (void) ret_error;
        q->state_pending = false;
        if (sd_bus_message_is_method_error(m, NULL))
                r = -(sd_bus_message_get_errno(m) ?: EIO);
        else
                r = sd_bus_message_read(m, "v", "s", &state);
        if (r >= 0 && !(q->active_state = strdup(state)))
                r = -ENOMEM;
        if (r < 0)
                q->state_error = r;
        return q->on_answer ? q->on_answer(q->userdata) : 0;
}

ManagerUnitFacts *manager_unit_facts_free(ManagerUnitFacts *q) {
        if (!q)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(q->slots); i++)
                sd_bus_slot_unref(q->slots[i]); /* cancels what has not been answered */
        free(q->active_state);
        free(q);
        return NULL;
}

int manager_unit_facts_start(sd_bus *bus, const char *unit, ManagerUnitFactsAnswer on_answer, void *userdata,
                             ManagerUnitFacts **ret) {
        _cleanup_(manager_unit_facts_freep) ManagerUnitFacts *q = NULL;
        int r;

        if (!bus || !unit)
                return -EINVAL;
        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->on_answer = on_answer;
        q->userdata = userdata;
        for (size_t i = 0; i < ELEMENTSOF(requirer_properties); i++) {
                r = unit_property_async(bus, &q->slots[i], unit, requirer_properties[i], facts_requirer_reply,
                                        q);
                if (r < 0)
                        return r;
                q->requirers.pending++;
        }
        r = unit_property_async(bus, &q->slots[ELEMENTSOF(requirer_properties)], unit, "ActiveState",
                                active_state_reply, q);
        if (r < 0)
                return r;
        q->state_pending = true;
        *ret = TAKE_PTR(q);
        return 0;
}

int manager_unit_facts_required(const ManagerUnitFacts *q) {
        if (!q)
                return -ENOTCONN;
        if (q->requirers.found)
                return 1;
        if (q->requirers.error < 0)
                return q->requirers.error;
        return q->requirers.pending > 0 ? -ETIMEDOUT : 0;
}

bool manager_unit_facts_pending(const ManagerUnitFacts *q) {
        return q && (q->state_pending || (q->requirers.pending > 0 && !q->requirers.found));
}

const char *manager_unit_facts_active_state(const ManagerUnitFacts *q) {
        return q && !q->state_pending && q->state_error == 0 ? q->active_state : NULL;
}
