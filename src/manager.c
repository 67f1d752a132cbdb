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
        _cleanup_free_ char *path = NULL;
        int r;

        if (!unit)
                return -EINVAL;
        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        r = manager_bus_open(&q->bus);
        if (r < 0)
                return r;
        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(requirer_properties); i++) {
                r = sd_bus_call_method_async(q->bus, NULL, "org.freedesktop.systemd1", path,
                                             "org.freedesktop.DBus.Properties", "Get", requirers_reply, q,
                                             "ss", "org.freedesktop.systemd1.Unit", requirer_properties[i]);
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

/* Properties.Get of unit's property on bus within timeout: the reply, or a negative errno. */
static int unit_property(sd_bus *bus, const char *path, const char *property, usec_t timeout,
                         sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", path,
                                           "org.freedesktop.DBus.Properties", "Get");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", "org.freedesktop.systemd1.Unit", property);
        if (r >= 0)
                r = sd_bus_call(bus, m, timeout, &error, ret);
        return r;
}

int manager_unit_requirers_sync(sd_bus *bus, const char *unit, usec_t timeout, char **ret_active_state) {
        _cleanup_free_ char *path = NULL;
        bool found = false;
        int r;

        if (!bus || !unit)
                return -EINVAL;
        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(requirer_properties) && !found; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const char *name;

                r = unit_property(bus, path, requirer_properties[i], timeout, &reply);
                if (r >= 0)
                        r = sd_bus_message_enter_container(reply, 'v', "as");
                if (r >= 0)
                        r = sd_bus_message_enter_container(reply, 'a', "s");
                if (r >= 0)
                        r = sd_bus_message_read_basic(reply, 's', &name);
                if (r < 0)
                        return r;
                found = r > 0;
        }
        if (ret_active_state) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const char *state;

                r = unit_property(bus, path, "ActiveState", timeout, &reply);
                if (r >= 0)
                        r = sd_bus_message_read(reply, "v", "s", &state);
                if (r < 0)
                        return r;
                *ret_active_state = strdup(state);
                if (!*ret_active_state)
                        return -ENOMEM;
        }
        return found;
}
