/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "shared/bounded-child.h"
#include "shared/hexdecoct.h"
#include "shared/parse-util.h"
#include "context.h"
#include "defer-commit.h"
#include "history.h"
#include "kernel-knob.h"
#include "hook-socket.h"
#include "log.h"
#include "state.h"
#include "verbs.h"

/* How long restore-knob and record-cycle wait for their helpers that answered to end (normally well
 * under a millisecond each). */
#define MAIN_REAP_EXITING_MAX (200U * USEC_PER_MSEC)

static void help(void) {
        printf("suspend-sync [OPTIONS] COMMAND\n\n"
               "Sync filesystems before sleep: fast, bounded and safe.\n\n"
               "Commands:\n"
               "  run             Sync now (plan, then syncfs in bounded parallel) and record the run\n"
               "  plan            Show what run would do; syncs nothing\n"
               "  status          Show the dirty state and the last runs\n"
               "  cat-config      Show the effective configuration and where each value came from\n"
               "  restore-knob    Put /sys/power/sync_on_suspend back if suspend-sync changed it\n"
               "  record-cycle    After resume: keep the last sleep cycle in the history, write metrics\n"
               "  daemon          Run the unit's pass when logind announces a sleep (holds its delay\n"
               "                  lock; suspend-sync-daemon.service)\n"
               "  history         Sync times per mount (p50/p95/max) and the cycles of the history\n"
               "  metrics         The last sleep cycle in Prometheus text format\n"
               "  plot            The last sleep cycle as an SVG timeline\n"
               "  pre|post [ACTION]\n"
               "                  The system-sleep hook, as systemd-sleep runs it: the late pass before\n"
               "                  the sleep; after it, restore-knob and the time of the resume\n"
               "                  (ACTION: as --sleep-action=, default $SYSTEMD_SLEEP_ACTION)\n\n"
               "Options:\n"
               "  -h --help               Show this help\n"
               "     --version            Show the version\n"
               "     --config=PATH        Read exactly this configuration file (no drop-ins)\n"
               "     --state-dir=DIR      State directory [%s]\n"
               "     --history-dir=DIR    Persistent history directory [%s]\n"
               "     --json=pretty|short|off  JSON output (plan, status, history); --json=help lists them\n"
               "  -j                      Same as --json=pretty on a terminal, --json=short otherwise\n"
               "     --legend=BOOL        Tables with header and footer [yes]\n"
               "     --no-legend          Same as --legend=no\n"
               "  -a --all                status, plan: show skipped mounts too\n"
               "  -l --full               Do not ellipsize table cells to fit the terminal\n"
               "     --no-pager           Accepted for systemd compatibility (output is never paged)\n"
               "     --deadline=TIMESPAN  Override DeadlineSec=\n"
               "     --deadline-max=TIMESPAN  End within this, whatever DeadlineSec= says\n"
               "     --late               Late pass (system-sleep hook): local block filesystems only\n"
               "     --trigger=NAME       Which pass this is: unit, hook or manual [manual]; see suspend-sync(8)\n"
               "     --sleep-action=ACT   suspend, hibernate, hybrid-sleep, suspend-then-hibernate\n"
               "     --token=TOKEN        (the daemon's) the token of the unit's pass it runs\n"
               "     --cycle-before-boottime=USEC  (the daemon's) record-cycle: the last cycle begun before it\n"
               "     --root=DIR           (testing) read proc/ and configuration below DIR [/]\n"
               "     --sysfs=DIR          (testing) sysfs root [/sys]\n"
               "     --debugfs=DIR        (testing) debugfs root [/sys/kernel/debug]\n\n"
               "Exit status:\n"
               "  0  success: every planned mount synced or skipped (timeouts too, with OnTimeout=continue)\n"
               "  1  failure: could not be carried out (see suspend-sync(8))\n"
               "  2  invalid arguments, or run without root\n"
               "  74 a mount reported a sync error (e.g. EIO; EX_IOERR)\n"
               "  75 a mount timed out and OnTimeout=fail (EX_TEMPFAIL)\n\n"
               "See suspend-sync(8) and suspend-sync.conf(5).\n",
               STATE_DIR_DEFAULT, HISTORY_DIR_DEFAULT);
}

enum {
        ARG_VERSION = 0x100,
        ARG_CONFIG,
        ARG_STATE_DIR,
        ARG_HISTORY_DIR,
        ARG_JSON,
        ARG_NO_LEGEND,
        ARG_LEGEND,
        ARG_NO_PAGER,
        ARG_DEADLINE,
        ARG_DEADLINE_MAX,
        ARG_LATE,
        ARG_TRIGGER,
        ARG_SLEEP_ACTION,
        ARG_ROOT,
        ARG_SYSFS,
        ARG_DEBUGFS,
        ARG_TOKEN,
        ARG_CYCLE_BEFORE,
};

/* The options that shape output (--json=, -j, --legend=, -a, -l, --no-pager): 1 when taken, 0
 * when done (--json=help), negative errno. */
static int parse_output_option(int c, Args *a) {
        switch (c) {
        case ARG_JSON:
                if (streq(optarg, "help")) {
                        for (JsonMode m = 0; m < _JSON_MODE_MAX; m++)
                                puts(json_mode_to_string(m));
                        return 0;
                }
                a->json = json_mode_from_string(optarg);
                if (a->json < 0)
                        return log_error_errno(EINVAL, "Invalid --json= mode '%s' (pretty, short, off).",
                                               optarg);
                break;
        case ARG_NO_LEGEND:
                a->legend = false;
                break;
        case ARG_LEGEND: {
                int b = parse_boolean(optarg);

                if (b < 0)
                        return log_error_errno(EINVAL, "Invalid --legend= '%s' (a boolean).", optarg);
                a->legend = b;
                break;
        }
        case ARG_NO_PAGER:
                break;
        case 'j':
                a->json = isatty(STDOUT_FILENO) > 0 ? JSON_PRETTY : JSON_SHORT;
                break;
        case 'a':
                a->all = true;
                break;
        case 'l':
                a->full = true;
                break;
        default:
                abort();
        }
        return 1;
}

/* The hook's start, when it exec'd us (hook-socket.h HOOK_STARTED_ENV: "PID USEC", its PID ours),
 * else now. However long ago: the hook sets it as it starts, and an exec that took longer than the
 * deadline leaves the pass none (review AH, L4: a bound on its age gave a slow exec its whole
 * DeadlineSec= again). */
static usec_t hook_started(usec_t now_usec) {
        const char *e = getenv(HOOK_STARTED_ENV), *space;
        _cleanup_free_ char *pid_text = NULL;
        uint64_t pid, t;

        if (!e || !(space = strchr(e, ' ')) || !(pid_text = strndup(e, space - e)) ||
            safe_atou64(pid_text, &pid) < 0 || pid != (uint64_t) getpid() || safe_atou64(space + 1, &t) < 0 ||
            t > now_usec)
                return now_usec;
        return t;
}

/* The system-sleep hook: systemd-sleep runs every executable of its directory with "pre" or "post"
 * and the action (units/meson.build links ours to this binary). Arguments after the action are
 * systemd's to add and are ignored: nothing here may keep a sleep from happening. */
static bool is_hook_verb(const char *verb) {
        return STR_IN_SET(verb, "pre", "post");
}

static int parse_argv(int argc, char *argv[], Args *a, const char **ret_verb, const char **ret_hook_action) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "state-dir", required_argument, NULL, ARG_STATE_DIR },
                { "history-dir", required_argument, NULL, ARG_HISTORY_DIR },
                { "json", required_argument, NULL, ARG_JSON },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                { "legend", required_argument, NULL, ARG_LEGEND },
                { "no-pager", no_argument, NULL, ARG_NO_PAGER },
                { "all", no_argument, NULL, 'a' },
                { "full", no_argument, NULL, 'l' },
                { "deadline", required_argument, NULL, ARG_DEADLINE },
                { "deadline-max", required_argument, NULL, ARG_DEADLINE_MAX },
                { "late", no_argument, NULL, ARG_LATE },
                { "trigger", required_argument, NULL, ARG_TRIGGER },
                { "sleep-action", required_argument, NULL, ARG_SLEEP_ACTION },
                { "root", required_argument, NULL, ARG_ROOT },
                { "sysfs", required_argument, NULL, ARG_SYSFS },
                { "debugfs", required_argument, NULL, ARG_DEBUGFS },
                { "token", required_argument, NULL, ARG_TOKEN },
                { "cycle-before-boottime", required_argument, NULL, ARG_CYCLE_BEFORE },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "hjal", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("suspend-sync %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_CONFIG:
                        a->config = optarg;
                        break;
                case ARG_STATE_DIR:
                        if (optarg[0] != '/')
                                return log_error_errno(EINVAL, "--state-dir= must be an absolute path.");
                        a->state_dir = optarg;
                        break;
                case ARG_HISTORY_DIR:
                        if (optarg[0] != '/')
                                return log_error_errno(EINVAL, "--history-dir= must be an absolute path.");
                        a->history_dir = optarg;
                        break;
                case ARG_DEADLINE:
                        if (parse_timespan(optarg, &a->deadline) < 0 || a->deadline == 0 ||
                            a->deadline == USEC_INFINITY)
                                return log_error_errno(
                                        EINVAL, "Invalid --deadline= '%s' (a finite time span).", optarg);
                        break;
                case ARG_DEADLINE_MAX:
                        if (parse_timespan(optarg, &a->deadline_max) < 0 || a->deadline_max == 0 ||
                            a->deadline_max == USEC_INFINITY)
                                return log_error_errno(
                                        EINVAL, "Invalid --deadline-max= '%s' (a finite time span).", optarg);
                        break;
                case ARG_LATE:
                        a->late = true;
                        break;
                case ARG_TRIGGER:
                        /* It selects the pass (the knob, the deferral, the scope), not a label
                         * (review X, X1): a misspelt one must not act as another. */
                        if (!STR_IN_SET(optarg, "unit", "hook", "manual"))
                                return log_error_errno(
                                        EINVAL, "Invalid --trigger= '%s' (unit, hook or manual).", optarg);
                        a->trigger = optarg;
                        break;
                case ARG_SLEEP_ACTION:
                        if (!sleep_action_valid(optarg))
                                return log_error_errno(EINVAL, "Invalid --sleep-action= '%s'.", optarg);
                        a->sleep_action = optarg;
                        break;
                case ARG_ROOT:
                        a->root = optarg;
                        break;
                case ARG_SYSFS:
                        a->sysfs = optarg;
                        break;
                case ARG_DEBUGFS:
                        a->debugfs = optarg;
                        break;
                case ARG_TOKEN:
                        if (!id128_string_valid(optarg))
                                return log_error_errno(
                                        EINVAL, "Invalid --token= '%s' (32 lowercase hex digits).", optarg);
                        a->token = optarg;
                        break;
                case ARG_CYCLE_BEFORE:
                        if (safe_atou64(optarg, &a->cycle_before) < 0 || a->cycle_before == 0)
                                return log_error_errno(
                                        EINVAL, "Invalid --cycle-before-boottime= '%s' (microseconds).",
                                        optarg);
                        break;
                case '?':
                        return -EINVAL;
                default:
                        r = parse_output_option(c, a);
                        if (r <= 0)
                                return r;
                }

        if (optind >= argc)
                return log_error_errno(EINVAL, "A command is required, see --help.");
        *ret_verb = argv[optind];
        if (is_hook_verb(argv[optind])) {
                *ret_hook_action = optind + 1 < argc ? argv[optind + 1] : NULL;
                return 1;
        }
        if (optind + 1 < argc)
                return log_error_errno(EINVAL, "Too many arguments.");
        return 1;
}

/* What was printed must have arrived: a full disk or a closed pipe is an error, said once (a verb
 * that failed, r < 0, has said why). */
static int output_flushed(int r) {
        if (fflush(stdout) != 0) {
                int e = errno ?: EIO;

                if (r >= 0)
                        r = log_error_errno(e, "Failed to write the output: %s", strerror(e));
        } else if (ferror(stdout) && r >= 0)
                r = log_error_errno(EIO, "Failed to write the output: %s", strerror(EIO));
        return r;
}

int main(int argc, char *argv[]) {
        Args a = {
                .state_dir = STATE_DIR_DEFAULT,
                .history_dir = HISTORY_DIR_DEFAULT,
                .json = JSON_OFF,
                .legend = true,
                .deadline = USEC_INFINITY,
                .deadline_max = USEC_INFINITY,
                .trigger = "manual",
                .root = "/",
                .sysfs = "/sys",
                .debugfs = "/sys/kernel/debug",
                .started = now(CLOCK_MONOTONIC),
        };
        const char *verb = NULL, *hook_action = NULL, *e;
        int r, code = EXIT_FAILURE;

        /* A file size limit (LimitFSIZE=, inherited) makes a write past it fail with EFBIG, which
         * every write of ours reports, instead of killing us with no word (review AS, AS-4). */
        (void) signal(SIGXFSZ, SIG_IGN);
        log_setup();
        a.sleep_action = getenv("SYSTEMD_SLEEP_ACTION");
        a.sleep_requires = getenv(DEFER_COMMIT_REQUIRED_ENV);
        a.invocation_id = getenv("INVOCATION_ID");
        /* Tests only: the held evidence of kernels before 6.10 (progress.h) on this kernel. */
        a.busy_only = parse_boolean(getenv("SUSPEND_SYNC_TEST_BUSY_ONLY")) > 0;
        a.serial_config = parse_boolean(getenv("SUSPEND_SYNC_TEST_SERIAL_CONFIG")) > 0;
        /* Tests only: KeepCheapSync='s bound, so that a check of the late pass left out does not
         * depend on how fast this machine's disks flush. */
        e = getenv("SUSPEND_SYNC_TEST_LATE_SKIP_BELOW");
        if (e && parse_timespan(e, &a.late_skip_below) < 0)
                a.late_skip_below = 0;
        /* Tests only: a late pass's look before the knob that takes this much longer than it
         * does, so that a check of KNOB_LOOK_MAX does not depend on this machine's speed. */
        e = getenv("SUSPEND_SYNC_TEST_KNOB_LOOK_DELAY");
        if (e && parse_timespan(e, &a.knob_look_delay) < 0)
                a.knob_look_delay = 0;
        e = getenv("SUSPEND_SYNC_TEST_PRELOOK_DELAY");
        if (e && parse_timespan(e, &a.prelook_delay) < 0)
                a.prelook_delay = 0;
        e = getenv("SUSPEND_SYNC_TEST_KNOB_WRITE_STALL");
        if (e && parse_timespan(e, &a.knob_write_stall) < 0)
                a.knob_write_stall = 0;
        /* Tests only: the configuration reader's bound, so that a check of what waits for it
         * does not depend on this machine's speed. */
        e = getenv("SUSPEND_SYNC_TEST_CONF_READ_TIMEOUT");
        if (e && parse_timespan(e, &a.conf_read_timeout) < 0)
                a.conf_read_timeout = 0;

        r = parse_argv(argc, argv, &a, &verb, &hook_action);
        if (r < 0)
                return EXIT_USAGE;
        if (r == 0) /* --help, --version, --json=help */
                return output_flushed(0) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        /* A verb that may have to put the kernel's sync back on holds the knob from here, before
         * any other file: out of file descriptors later, a 0 left by an earlier sleep can still be
         * turned back to 1 (review AS, AS-1). Not there, or not root: as before. (The daemon writes
         * it only in its passes, each of which opens it first: child_detach().) */
        if (geteuid() == 0 && (is_hook_verb(verb) || streq(verb, "restore-knob") ||
                               (streq(verb, "run") && STR_IN_SET(a.trigger, "unit", "hook"))))
                (void) knob_keep_open(a.sysfs);
        a.style = output_style(stdout, a.full);
        /* A script that asks for JSON must not get text (review B, F9). */
        if (a.json != JSON_OFF && !STR_IN_SET(verb, "plan", "status", "history")) {
                log_error("'%s' has no JSON output (--json= and -j are for plan, status and history).", verb);
                (void) log_flush(LOG_FLUSH_WAIT);
                return EXIT_USAGE;
        }
        /* The daemon's: its pass's token, and the restore that ends that pass's cycle only. Never
         * from a unit's command line (the daemon's children have no $INVOCATION_ID): a token given
         * there would be the same every sleep, and an earlier sleep's record could then vouch for a
         * later one (review L, L5). */
        if (a.token &&
            (!(streq(verb, "restore-knob") || (streq(verb, "run") && streq(a.trigger, "unit") && !a.late)) ||
             !isempty(a.invocation_id))) {
                log_error("--token= is the daemon's, for 'run --trigger=unit' and 'restore-knob' only, "
                          "never in a unit's command.");
                (void) log_flush(LOG_FLUSH_WAIT);
                return EXIT_USAGE;
        }
        /* The daemon's too: which cycle its record-cycle is for (review BG, F-2). */
        if (a.cycle_before != 0 && (!streq(verb, "record-cycle") || !isempty(a.invocation_id))) {
                log_error(
                        "--cycle-before-boottime= is the daemon's, for 'record-cycle' only, never in a unit's "
                        "command.");
                (void) log_flush(LOG_FLUSH_WAIT);
                return EXIT_USAGE;
        }
        if (is_hook_verb(verb)) {
                /* The action systemd-sleep names, else $SYSTEMD_SLEEP_ACTION when it is one we know
                 * (it may read suspend-after-failed-hibernate), else none. */
                a.sleep_action = hook_sleep_action(hook_action, a.sleep_action);
                a.trigger = "hook";
                a.late = streq(verb, "pre");
                a.started = hook_started(a.started);
        }

        /* A pass of a sleep (the unit's, or the late one from the hook in systemd-suspend.service):
         * every message names our unit, so that "journalctl -u suspend-sync.service" shows it. */
        if (STR_IN_SET(a.trigger, "unit", "hook"))
                log_set_object_unit(SUSPEND_SYNC_UNIT);

        /* Logging never blocks; what it queued gets one bounded last chance (never past the run's
         * deadline, which verb_run() sets once the configuration is known). */
        if (context_deadline_bound(&a) != USEC_INFINITY)
                log_set_deadline(a.started + context_deadline_bound(&a));

        if (is_hook_verb(verb)) {
                (void) verb_hook(&a, verb);
                (void) log_flush(LOG_FLUSH_WAIT);
                return EXIT_SUCCESS;
        }
        if (streq(verb, "run")) {
                /* Unprivileged, every syncfs of another user's mount and every knob write would
                 * fail: one clear refusal instead of every mount reported as a sync error. */
                if (geteuid() != 0) {
                        log_error("'run' needs root (syncs every filesystem, writes /sys/power and %s); "
                                  "'plan' and 'status' work unprivileged.",
                                  a.state_dir);
                        return EXIT_USAGE;
                }
                r = verb_run(&a, NULL, &code, NULL);
                (void) log_flush(LOG_FLUSH_WAIT);
                return r < 0 ? EXIT_FAILURE : code;
        }
        if (streq(verb, "plan"))
                r = verb_plan(&a);
        else if (streq(verb, "status"))
                r = verb_status(&a);
        else if (streq(verb, "cat-config"))
                r = verb_cat_config(&a);
        else if (streq(verb, "restore-knob") || streq(verb, "record-cycle")) {
                r = streq(verb, "restore-knob") ? verb_restore_knob(&a) : verb_record_cycle(&a);
                /* ExecStopPost= after resume: the helpers that answered end in the unit, not after it
                 * (review AW, L4). Off the sleep path; bounded. */
                (void) bounded_child_reap_exiting(MAIN_REAP_EXITING_MAX);
        } else if (streq(verb, "daemon"))
                r = verb_daemon(&a);
        else if (streq(verb, "history"))
                r = verb_history(&a);
        else if (streq(verb, "metrics"))
                r = verb_metrics(&a);
        else if (streq(verb, "plot"))
                r = verb_plot(&a);
        else {
                log_error("Unknown command '%s', see --help.", verb);
                (void) log_flush(LOG_FLUSH_WAIT);
                return EXIT_USAGE;
        }
        r = output_flushed(r);
        (void) log_flush(LOG_FLUSH_WAIT);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
