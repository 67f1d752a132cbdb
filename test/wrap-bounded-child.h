/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A bounded child that does other work than asked (one that dies before its answer, or after its
 * first): in a test linked with -Wl,--wrap=bounded_child_run and test/wrap-bounded-child.c
 * (test/meson.build), bounded_child_run() runs wrap_bounded_child_work in the child instead of its
 * work when it is not NULL, and waits wrap_bounded_child_timeout for it instead of the caller's
 * timeout when that is not 0: a test of what an answer means must not depend on how fast a fork
 * runs on a loaded machine.
 */

#include "shared/bounded-child.h"

extern BoundedChildWork wrap_bounded_child_work;
extern usec_t wrap_bounded_child_timeout;
