/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Verb context: the parsed command line and the steps every verb shares (open the roots, load the
 * policy and log its warnings, sample, plan). Verbs only.
 */

#include <stdbool.h>

#include "conf-bounds.h"
#include "output.h"
#include "plan.h"
#include "policy.h"
#include "sample.h"
#include "shared/time-util.h"

typedef struct Args {
        const char *config;      /* --config=: exactly this file */
        const char *state_dir;   /* --state-dir= */
        const char *history_dir; /* --history-dir= (persistent cycles) */
        JsonMode json;
        bool legend;
        bool all;                   /* -a --all: skipped mounts too */
        bool full;                  /* -l --full: never ellipsize */
        OutputStyle style;          /* tables on stdout: width, colours (from full and the terminal) */
        usec_t deadline;            /* --deadline=, USEC_INFINITY = from policy */
        usec_t deadline_max;        /* --deadline-max=: caps the deadline (the daemon's pass) */
        bool late;                  /* --late */
        const char *trigger;        /* --trigger= */
        const char *sleep_action;   /* --sleep-action= or $SYSTEMD_SLEEP_ACTION */
        const char *sleep_requires; /* $SUSPEND_SYNC_REQUIRED (require-sync.conf, defer-commit.h) */
        const char *invocation_id;  /* $INVOCATION_ID: run by a service manager (defer-commit.h) */
        const char *token;        /* --token=: the unit's pass's token (the daemon's, handover.h), or the one
                                     * pass whose cycle restore-knob ends; NULL: a new random one / any */
        usec_t cycle_before;      /* --cycle-before-boottime=: record-cycle records the newest cycle this
                                   * boot began before this CLOCK_BOOTTIME (the daemon's); 0: the newest */
        bool serial_config;       /* $SUSPEND_SYNC_TEST_SERIAL_CONFIG: a pass reads its configuration before
                                 * it samples, not while (measurement only: context_prepare()) */
        bool busy_only;           /* $SUSPEND_SYNC_TEST_BUSY_ONLY: held I/O from debugfs busy alone (tests) */
        usec_t conf_read_timeout; /* $SUSPEND_SYNC_TEST_CONF_READ_TIMEOUT: the configuration reader's
                                   * bound (tests); 0: context_conf_read_timeout() as built */
        usec_t knob_look_delay;   /* $SUSPEND_SYNC_TEST_KNOB_LOOK_DELAY: the late pass's last look
                                   * before the knob takes this much longer (tests: KNOB_LOOK_MAX) */
        usec_t knob_write_stall;  /* $SUSPEND_SYNC_TEST_KNOB_WRITE_STALL: the late pass stalls this long
                                   * right after the knob's gate was found open, before its write (tests
                                   * of the gate's second look, review AF F1) */
        usec_t prelook_delay;     /* $SUSPEND_SYNC_TEST_PRELOOK_DELAY: the late pass waits this long
                                   * after its first FUSE look, before its workers (tests: the two
                                   * looks must both prove a mount clean, review AR, #01) */
        usec_t late_skip_below;   /* KeepCheapSync='s bound (late-skip.h); 0: LATE_SKIP_BELOW, else
                                 * $SUSPEND_SYNC_TEST_LATE_SKIP_BELOW (tests: a slow machine's syncs) */
        const char *root;         /* --root= (proc/ and config files) */
        const char *sysfs;        /* --sysfs= */
        const char *debugfs;      /* --debugfs= */
        usec_t started;           /* CLOCK_MONOTONIC at process start */
        /* The daemon's passes: the configuration as the daemon read it last, which context_prepare()
         * samples by while the pass reads it again; NULL: the defaults. */
        const Policy *assumed_config;
        /* The daemon's standby pass: its configuration reader, forked before the sleep
         * (conf_read_prepare()), which the first read takes and lets go, setting the slot to NULL
         * (the one thing a const Args lets change); NULL or *NULL: forked when it is read. */
        struct ConfReader **prepared_reader;
} Args;

typedef struct Context {
        int root_fd;
        int debugfs_fd; /* negative: not open, the errno of its open() (the sample tells why) */
        Policy *config; /* the configuration as its files say (cat-config): never changed */
        Policy *policy; /* what the verbs act on: config with the command line's overrides
                                     * applied (points to 'effective', a view sharing config's rules) */
        Policy effective;
        int config_error;      /* --config= named a file that could not be read: its negative errno */
        char **sleep_hooks;    /* the late pass (--late): the other system-sleep hooks (sleep-hooks.h),
                                 * NULL when none */
        int sleep_hooks_error; /* ... or why they are not known (negative errno; -ENODATA: not asked) */
        int hook_ours;         /* our own system-sleep entry (sleep_hook_ours(), read with the
                                 * configuration): 1 as installed, 0 masked, replaced or missing, or a
                                 * negative errno (-ENODATA: not read) */
        char *hook_other;      /* ... the entry that is not ours, NULL: none */
        Sample *sample;
        Plan *plan;
        char *learned;        /* the state directory's HISTORY_LEARNED_FILE as the plan read it, NULL when
                        * missing or unreadable: the unit's pass reads its late entries too (late-skip.h) */
        ConfBounds last_full; /* the configuration not read in full: the bounds of the last full read
                               * (conf-bounds.h), which cap the defaults in policy; deadline 0: none */
} Context;

#define CONTEXT_NULL                                \
        ((Context) { .root_fd = -EBADF,             \
                     .debugfs_fd = -EBADF,          \
                     .sleep_hooks_error = -ENODATA, \
                     .hook_ours = -ENODATA })

void context_done(Context *c);

/* The late pass started by systemd-sleep (--late --trigger=hook) ends within this, whatever
 * DeadlineSec= says: systemd-sleep gives all its hooks together 90 s (DEFAULT_TIMEOUT_USEC) before
 * it kills them. */
#define LATE_PASS_DEADLINE_MAX (80U * USEC_PER_SEC)

/* What the command line overrides in the configuration (--deadline=). */
PolicyOverrides context_overrides(const Args *a);
/* The deadline the command line allows at most: --deadline= capped by --deadline-max=
 * (USEC_INFINITY: neither given). */
usec_t context_deadline_bound(const Args *a);
/* The bound on reading the configuration: CONF_READ_TIMEOUT, or half of a shorter deadline bound. */
usec_t context_conf_read_timeout(const Args *a);
/* The bound on the search through /proc for holders of files on superblocks no mount table shows:
 * UNLISTED_REACH_TIMEOUT, or a quarter of a shorter DeadlineSec= (with --deadline= applied). */
usec_t context_reach_timeout(const Policy *p);

/* How a command samples and plans. */
typedef enum ContextFlags {
        CONTEXT_DEFERRAL = 1U << 0, /* the plan may leave superblocks to the late pass (plan.h) */
        CONTEXT_RUN = 1U << 1,      /* a pass that syncs, bound by its deadline: sysfs attributes that
                                     * may wait on a queue lock (queue/rotational, read in a bounded
                                     * child by every verb) are read only where a rule needs them */
} ContextFlags;

/* Opens a->root as c->root_fd, unless it is open already. */
int context_open_root(const Args *a, Context *c);
/* Opens the root and reads the configuration (bounded, see conf-read.h) into c->config, and sets
 * c->policy. Logs only what kept it from being read (then: the defaults) or read in full; then the
 * values still at their defaults are, in c->policy, no longer than the last full read's
 * (conf-bounds.h), which it says. */
int context_read_policy(const Args *a, Context *c);
/* The same in two steps, for a caller that waits for the reader on an event loop (the daemon):
 * start opens the root (its error returned) and forks the reader (*ret_start_error, which finish
 * takes: then *ret is NULL); conf_read_step() tells when finish would not wait. finish does not
 * free x. */
int context_read_policy_start(const Args *a, Context *c, struct ConfReader **ret, int *ret_start_error);
int context_read_policy_finish(const Args *a, Context *c, struct ConfReader *x, int start_error);
/* The configuration read in full (c->config, not unread): its DeadlineSec= and MountTimeoutSec= into
 * the state directory (conf-bounds.h), for a later read that fails. 0 when there is nothing to save,
 * else conf_bounds_save()'s result. Logs nothing. */
int context_save_bounds(const Args *a, const Context *c);
/* Logs the configuration's warnings (file:line) and notices. */
void context_log_policy(const Context *c);
/* Both: the policy, its warnings logged. */
int context_load_policy(const Args *a, Context *c);
/* Policy, sample and plan. Logs what is missing (debugfs, meminfo). deferral: the caller may leave
 * commits to the late pass, or shows what the unit's pass would (plan.h: late_commit), so the sample
 * asks where loop devices write (loop-backing.h, a bounded child) when DeferCommit= is on; a manual
 * run or the late pass never defers and need not ask.
 * The configuration is read by its child while this process samples, by the sources of
 * a->assumed_config (else the defaults), queue/rotational never read on that assumption; the sample
 * waits for the configuration before its first bounded child (SampleGate: bounds, loop backing), and
 * when the configuration read asks to read otherwise (sample_sources_same_reads()), it samples
 * again. The sample and plan are those of the configuration read, as context_load_policy() then
 * context_sample_plan() would make them; only the order of the messages differs (the
 * configuration's after the sample's reads). */
int context_prepare(const Args *a, PlanScope scope, ContextFlags flags, Context *c);
/* Its second half: sample and plan, the policy already loaded. */
int context_sample_plan(const Args *a, PlanScope scope, ContextFlags flags, Context *c);
/* A sample read as the pass's was (c's sources and policy), its bounded children ending by until,
 * for sample_changed_since(): never asks where loop devices write, nor reads queue/rotational, bdi
 * stats, an ext4's journal or barriers (none is compared: SampleSources.identity_only). Logs
 * nothing. */
int context_sample_again(const Args *a, PlanScope scope, ContextFlags flags, const Context *c, usec_t until,
                         Sample **ret);

/* JSON output of an object according to the mode, to stdout. */
struct json_object;
int print_json(struct json_object *o, JsonMode mode);
