/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Bounded flock(2): the state lock, the knob's lock and the flusher kick's lock never block.
 */

#include "shared/time-util.h"

/* Takes flock(LOCK_EX|LOCK_NB) on fd, tried every poll until 'until' (CLOCK_MONOTONIC; 0: once).
 * 0, -EBUSY when another open file description still holds it then, or another negative errno. */
int flock_until(int fd, usec_t until, usec_t poll);
