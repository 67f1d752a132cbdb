/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The knob verbs' shared steps (verb-knob.c): verb-run.c's passes and restore-knob. Log. */

#include <stddef.h>

#include "context.h"
#include "kernel-knob.h"
#include "run.h"

/* Puts back the value a pass recorded in state_dir (kernel-knob.h knob_restore()), saying why.
 * sysfs_fd may be < 0 (the fd of knob_keep_open() is used then). Where the restore cannot be done (the
 * state directory or the record unreadable, the lock or the write failing), the kernel's sync is
 * turned on (knob_fail_safe()) and said. Negative errno only when even that failed: the kernel's
 * own sync may stay off (logged as an error). */
int verb_knob_restore(int sysfs_fd, const char *state_dir, usec_t lock_wait, const char *why);

/* Carries out knob_decide() for policy p and facts f: sets the knob (the original saved first) through
 * gate (kernel-knob.h; may be NULL), or keeps it on and says why — detail, when given, in full; else
 * the first reason, with the first of uncovered[n_uncovered] (mounts the pass left out) where that
 * is why. */
void verb_knob_apply(const Args *a, const Policy *p, const KnobFacts *f, const char *detail,
                     const RunMount *uncovered, size_t n_uncovered, const KnobGate *gate);
