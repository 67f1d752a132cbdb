/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Verb context: the parsed command line and the steps every verb shares (open the roots, load the
 * policy and log its warnings, sample, plan). Verbs only.
 */

#include <stdbool.h>

#include "output.h"
#include "plan.h"
#include "policy.h"
#include "sample.h"
#include "shared/time-util.h"

typedef struct Args {
        const char *config;         /* --config=: exactly this file */
        const char *state_dir;      /* --state-dir= */
        JsonMode json;
        bool legend;
        usec_t deadline;            /* --deadline=, USEC_INFINITY = from policy */
        bool late;                  /* --late */
        const char *trigger;        /* --trigger= */
        const char *sleep_action;   /* --sleep-action= or $SYSTEMD_SLEEP_ACTION */
        const char *root;           /* --root= (proc/ and config files) */
        const char *sysfs;          /* --sysfs= */
        const char *debugfs;        /* --debugfs= */
        usec_t started;             /* CLOCK_MONOTONIC at process start */
} Args;

typedef struct Context {
        int root_fd;
        int debugfs_fd;
        Policy *policy;
        Sample *sample;
        Plan *plan;
} Context;

#define CONTEXT_NULL ((Context) { .root_fd = -EBADF, .debugfs_fd = -EBADF })

void context_done(Context *c);

/* Loads the policy only (logs its warnings). */
int context_load_policy(const Args *a, Context *c);
/* Policy, sample and plan. Logs what is missing (debugfs, meminfo). */
int context_prepare(const Args *a, PlanScope scope, Context *c);

/* JSON output of an object according to the mode, to stdout. */
struct json_object;
int print_json(struct json_object *o, JsonMode mode);
