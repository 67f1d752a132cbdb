/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "manager.h"
#include "scope.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/proc-util.h"

/* /proc/PID/cgroup is one line per hierarchy: a dozen lines on cgroup v1. */
#define CGROUP_FILE_MAX (64U * 1024U)
/* How often to look whether PID 1 has moved the processes. */
#define SCOPE_POLL_USEC (2 * USEC_PER_MSEC)

const char *scope_name(pid_t first, char buf[static SCOPE_NAME_MAX]) {
        snprintf(buf, SCOPE_NAME_MAX, "suspend-sync-stuck-%d.scope", (int) first);
        return buf;
}

int scope_cgroup_parse(const char *text, char **ret_unified, char **ret_named) {
        _cleanup_free_ char *u = NULL, *v1 = NULL;

        for (const char *l = text, *eol; *l; l = *eol ? eol + 1 : eol) {
                /* "ID:CONTROLLERS:PATH" */
                const char *c1 = strchr(l, ':'), *c2 = NULL;
                char **dest = NULL;

                eol = strchrnul(l, '\n');
                if (c1 && c1 < eol)
                        c2 = strchr(c1 + 1, ':');
                if (!c2 || c2 > eol || c2 + 1 == eol)
                        continue;
                if (c1 - l == 1 && l[0] == '0' && c2 == c1 + 1)
                        dest = &u;
                else if ((size_t) (c2 - c1 - 1) == strlen("name=systemd") &&
                         strncmp(c1 + 1, "name=systemd", c2 - c1 - 1) == 0)
                        dest = &v1;
                if (!dest || *dest)
                        continue;
                *dest = strndup(c2 + 1, eol - c2 - 1);
                if (!*dest)
                        return -ENOMEM;
        }
        if (!u && !v1)
                return -ENODATA;
        *ret_unified = TAKE_PTR(u);
        *ret_named = TAKE_PTR(v1);
        return 0;
}

/* A process's place in the hierarchies systemd may use. Which one it does use (unified, hybrid,
 * legacy; a container with a unified hierarchy on a hybrid host still lists the host's unchanging
 * name=systemd line) does not matter: a move by PID 1 changes at least one of them. */
typedef struct CgroupId {
        char *unified, *named;
} CgroupId;

static void cgroup_id_done(CgroupId *c) {
        c->unified = mfree(c->unified);
        c->named = mfree(c->named);
}

static int read_cgroup(int proc_fd, const char *pid, CgroupId *ret) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        int r;

        snprintf(path, sizeof(path), "%s/cgroup", pid);
        r = read_full_file_at(proc_fd, path, CGROUP_FILE_MAX, &text, NULL);
        if (r < 0)
                return r;
        return scope_cgroup_parse(text, &ret->unified, &ret->named);
}

/* Whether pid is no longer in the cgroup 'ours': moved, exited, or a zombie (which cannot be moved,
 * and leaves with its parent). */
static bool pid_left(int proc_fd, pid_t pid, const CgroupId *ours) {
        _cleanup_(cgroup_id_done) CgroupId cg = {};
        char name[32], state = 0;
        int r;

        snprintf(name, sizeof(name), "%d", (int) pid);
        r = read_cgroup(proc_fd, name, &cg);
        if (r == -ENOENT || r == -ESRCH)
                return true;
        if (r < 0)
                return false;
        if (!streq_ptr(cg.unified, ours->unified) || !streq_ptr(cg.named, ours->named))
                return true;
        return proc_pid_start_time(proc_fd, pid, NULL, &state) >= 0 && state == 'Z';
}

static int start_scope(const char *name, const pid_t *pids, size_t n, usec_t deadline) {
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        usec_t t;
        int r;

        /* sd_bus_call() would finish the authentication with a wait of its own (up to 25 s). */
        r = manager_bus_open(&bus);
        if (r >= 0)
                r = manager_bus_wait_ready(bus, deadline);
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ss", name, "fail");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)", "Description", "s",
                                  "suspend-sync workers stuck on a hung device", "Slice", "s", "system.slice",
                                  "CollectMode", "s", "inactive-or-failed", "TimeoutStopUSec", "t",
                                  (uint64_t) USEC_PER_SEC);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "PIDs");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "au");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "u");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(m, "u", (uint32_t) pids[i]);
        for (int k = 0; r >= 0 && k < 3; k++)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m); /* a(sv) */
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0); /* no auxiliary units */
        if (r < 0)
                return r;

        t = now(CLOCK_MONOTONIC);
        if (t >= deadline) /* sd_bus_call() takes 0 for its default timeout (25 s) */
                return -ETIMEDOUT;
        r = sd_bus_call(bus, m, deadline - t, &error, &reply);
        if (r < 0)
                return sd_bus_error_has_name(&error, "org.freedesktop.systemd1.UnitExists") ? -EEXIST : r;
        return 0;
}

int scope_adopt(const pid_t *pids, size_t n, usec_t timeout, char **ret_unit) {
        _cleanup_close_ int proc_fd = -EBADF;
        _cleanup_(cgroup_id_done) CgroupId ours = {};
        usec_t deadline = now(CLOCK_MONOTONIC) + timeout;
        char name[SCOPE_NAME_MAX];
        int r;

        if (!pids || n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (pids[i] <= 1)
                        return -EINVAL;
        if (sd_booted() <= 0)
                return -ENOMEDIUM;

        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return negative_errno();
        r = read_cgroup(proc_fd, "self", &ours);
        if (r < 0)
                return r;

        r = start_scope(scope_name(pids[0], name), pids, n, deadline);
        if (r < 0)
                return r;

        /* PID 1 answers once the job is queued; it moves the processes when the job runs. */
        for (;;) {
                usec_t t;
                size_t left = 0;

                for (size_t i = 0; i < n; i++)
                        if (!pid_left(proc_fd, pids[i], &ours))
                                left++;
                if (left == 0)
                        break;
                t = now(CLOCK_MONOTONIC);
                if (t >= deadline)
                        return -ETIMEDOUT;
                (void) clock_nanosleep(
                        CLOCK_MONOTONIC, 0,
                        timespec_store(&(struct timespec) {}, MIN(SCOPE_POLL_USEC, deadline - t)), NULL);
        }

        if (ret_unit) {
                char *s = strdup(name);
                if (!s)
                        return -ENOMEM;
                *ret_unit = s;
        }
        return 0;
}
