/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Service manager notifications (sd_notify(3) protocol) that never block: one datagram to
 * $NOTIFY_SOCKET (a path, or "@name" for the abstract namespace), sent with MSG_DONTWAIT on a
 * socket of our own. libsystemd's sd_notify() sends blocking; nothing on the run path before the
 * knob decision may wait on a socket. Verbs only.
 */

#include "shared/time-util.h"

/* Sends text (e.g. "EXTEND_TIMEOUT_USEC=40000000"). Returns 1 when sent, 0 when there is no
 * $NOTIFY_SOCKET (not started by a service manager, or one that does not listen), negative errno
 * otherwise (-EAGAIN: the manager's queue is full; -EINVAL: an address this sender does not
 * speak, such as vsock). */
int notify_send(const char *text);

/* Asks the service manager to allow this start at least 'usec' more (EXTEND_TIMEOUT_USEC=): the
 * unit's TimeoutStartSec= follows DeadlineSec=. Same returns as notify_send(). */
int notify_extend_timeout(usec_t usec);

/* What the run verb asks for beyond its deadline: recording, the knob, moving stuck workers to a
 * scope and flushing the log are all bounded well inside it. */
#define NOTIFY_EXIT_MARGIN (10 * USEC_PER_SEC)
