/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The system-sleep hook systemd-sleep runs (units/meson.build links systemd's system-sleep entry
 * "suspend-sync" to /run/suspend-sync/sleep-hook, which points here: a unit's pass that leaves the
 * late pass out takes that link down, and then nothing of ours runs; late-skip.h): "pre ACTION" asks
 * suspend-sync-daemon.service for the late pass (hook-client.h, hook-socket.h), and runs it itself,
 * exec'ing "suspend-sync pre ACTION" (verb-hook.c), whenever the daemon does not take it, unless the
 * unit's pass of this suspend left the late pass out all the same (KeepCheapSync=, the marker:
 * the link was made again since). Everything else ("post ACTION", not root) is
 * that binary's to do. Exits 0 whatever happens: systemd-sleep ignores the status, and nothing here
 * may stop a sleep.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "hook-client.h"
#include "hook-socket.h"

int main(int argc, char *argv[]) {
        HookClientResult res;
        struct timespec ts;
        int r;

        /* Before anything: the pass this may exec counts its deadline from here. */
        if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0) {
                char started[48];

                (void) snprintf(started, sizeof started, "%d %llu", (int) getpid(),
                                (unsigned long long) ts.tv_sec * 1000000ULL +
                                        (unsigned long long) ts.tv_nsec / 1000ULL);
                (void) setenv(HOOK_STARTED_ENV, started, 1);
        }
        if (argc > 1 && strcmp(argv[1], "pre") == 0 && geteuid() == 0) {
                const char *arg = argc > 2 ? argv[2] : NULL, *env = getenv("SYSTEMD_SLEEP_ACTION");
                const char *action = hook_sleep_action(arg, env);

                /* KeepCheapSync= (late-skip.h): the unit's pass found the kernel's own sync cheaper
                 * than a late pass, and said so (its journal message). Only sync_on_suspend's sleep. */
                if (action && strcmp(action, "suspend") == 0 && hook_late_skipped(HOOK_STATE_DIR))
                        return EXIT_SUCCESS;
                r = hook_client_run(HOOK_SOCKET_PATH, 0, "/proc", SUSPEND_SYNC_BINARY, arg, env,
                                    HOOK_ACK_TIMEOUT, &res);
                if (r > 0)
                        return EXIT_SUCCESS;
                if (r == 0) {
                        int k = hook_give_up_knob(HOOK_STATE_DIR, HOOK_SYSFS_DIR);

                        if (k > 0)
                                hook_say(STDERR_FILENO,
                                         "suspend-sync: %s; set /sys/power/sync_on_suspend to 1: the "
                                         "kernel's own sync runs for this sleep.\n",
                                         res.why);
                        else if (k == 0)
                                hook_say(STDERR_FILENO,
                                         "suspend-sync: %s; the kernel's own sync stays on (no change of "
                                         "ours to it).\n",
                                         res.why);
                        else
                                hook_say(STDERR_FILENO,
                                         "suspend-sync: %s; could not set /sys/power/sync_on_suspend to 1: "
                                         "%s.\n",
                                         res.why, strerror(-k));
                        return EXIT_SUCCESS;
                }
                /* Without the daemon (not enabled, stopped) this is how it always runs: quietly. */
                if (r == -ESTALE)
                        hook_say(STDERR_FILENO, "suspend-sync: %s, running the late pass here.\n", res.why);
                else if (r != -ENOENT && r != -ECONNREFUSED)
                        hook_say(STDERR_FILENO, "suspend-sync: %s (%s), running the late pass here.\n",
                                 res.why, strerror(-r));
        }
        argv[0] = (char *) "suspend-sync";
        (void) execv(SUSPEND_SYNC_BINARY, argv);
        hook_say(STDERR_FILENO, "suspend-sync: cannot run %s: %s\n", SUSPEND_SYNC_BINARY, strerror(errno));
        return EXIT_SUCCESS;
}
