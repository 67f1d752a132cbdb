/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "scope.h"
#include "shared/macro.h"
#include "tests.h"

/* Captured on Debian 13 (systemd 257) booted with the unified hierarchy only. */
#define CGROUP_UNIFIED "0::/system.slice/suspend-sync.service\n"

/* Captured on this kind of machine (kernel 6.18, hybrid: v1 controllers plus name=systemd). */
#define CGROUP_HYBRID                                              \
        "9:name=systemd:/system.slice/suspend-sync.service\n"      \
        "8:pids:/\n"                                               \
        "4:memory:/process_api/752fe324f0684463d998677b6e6744a6\n" \
        "1:cpu:/\n"                                                \
        "0::/\n"

/* A container whose systemd uses the unified hierarchy on that hybrid host (systemd-nspawn with
 * SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1, as the e2e suite boots): the host's name=systemd line is
 * listed too, and never changes when the container's PID 1 moves a process. */
#define CGROUP_CONTAINER                                           \
        "9:name=systemd:/\n"                                       \
        "4:memory:/process_api/752fe324f0684463d998677b6e6744a6\n" \
        "0::/system.slice/suspend-sync-stuck-47.scope\n"

static void parse(const char *text, const char *unified, const char *named) {
        _cleanup_free_ char *u = NULL, *n = NULL;

        ASSERT_OK(scope_cgroup_parse(text, &u, &n));
        ASSERT_TRUE(streq_ptr(u, unified));
        ASSERT_TRUE(streq_ptr(n, named));
}

TEST(cgroup) {
        parse(CGROUP_UNIFIED, "/system.slice/suspend-sync.service", NULL);
        parse(CGROUP_HYBRID, "/", "/system.slice/suspend-sync.service");
        parse(CGROUP_CONTAINER, "/system.slice/suspend-sync-stuck-47.scope", "/");
        /* Pure legacy, cgroup2 not mounted: no "0::" line. */
        parse("2:name=systemd:/system.slice/a.service\n1:cpu:/\n", NULL, "/system.slice/a.service");
        /* No final newline; the first of repeated lines counts. */
        parse("0::/a.scope\n0::/b.scope", "/a.scope", NULL);
}

TEST(cgroup_garbage) {
        char *u = NULL, *n = NULL;

        ASSERT_ERR(scope_cgroup_parse("", &u, &n), ENODATA);
        ASSERT_ERR(scope_cgroup_parse("garbage\nno colons here\n", &u, &n), ENODATA);
        ASSERT_ERR(scope_cgroup_parse("4:memory:/x\n1:cpu:/\n", &u, &n), ENODATA); /* v1, no systemd */
        ASSERT_ERR(scope_cgroup_parse("0::\n", &u, &n), ENODATA);
        ASSERT_ERR(scope_cgroup_parse("1:name=systemdx:/a\n10::/b\n", &u, &n), ENODATA);
        ASSERT_TRUE(u == NULL && n == NULL);
}

TEST(name) {
        char buf[SCOPE_NAME_MAX];

        ASSERT_STREQ(scope_name(47, buf), "suspend-sync-stuck-47.scope");
        ASSERT_STREQ(scope_name(2147483647, buf), "suspend-sync-stuck-2147483647.scope");
}

TEST(adopt_args) {
        pid_t pids[] = { getpid(), 1 };
        char *unit = NULL;

        ASSERT_ERR(scope_adopt(NULL, 0, USEC_PER_SEC, &unit), EINVAL);
        ASSERT_ERR(scope_adopt(pids, 2, USEC_PER_SEC, &unit), EINVAL); /* never PID 1 */
        ASSERT_TRUE(unit == NULL);
}

TEST(adopt_not_booted) {
        pid_t pid = getpid();
        char *unit = NULL;

        if (sd_booted() > 0) {
                fprintf(stderr, "systemd is PID 1 here: not moving the test into a scope\n");
                return;
        }
        ASSERT_ERR(scope_adopt(&pid, 1, USEC_PER_SEC, &unit), ENOMEDIUM);
        ASSERT_TRUE(unit == NULL);
}

int main(void) {
        RUN(cgroup);
        RUN(cgroup_garbage);
        RUN(name);
        RUN(adopt_args);
        RUN(adopt_not_booted);
        return 0;
}
