/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The system-sleep hook's side of the late pass through the daemon (hook-socket.h): libc alone, so
 * that the hook's own start-up is an exec of a small binary. sleep-hook.c is its main().
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/macro.h"

typedef struct HookClientResult {
        int code;        /* the pass's exit status, when "done" came */
        const char *why; /* otherwise: why not (static text) */
} HookClientResult;

/* Asks the daemon listening on path (its peer must be peer_uid, and run the binary installed at
 * installed, looked at below proc_dir, not one an upgrade has replaced since its start, whose late
 * pass would be the old code: exe-util.h; without a binary at installed, a build run from its tree,
 * one whose file still has a link) for the late pass of action and env_action (hook-socket.h), waiting
 * ack_timeout µs for its ack. Returns:
 *   1: served, ret->code is the pass's exit status;
 *   0: the daemon took the pass but its "done" did not come (it ended without one, or not within
 *      its limit and HOOK_DONE_MARGIN): ret->why says which. The late pass may have run in part;
 *      the kernel's own sync was left on unless the pass turned it off after syncing everything;
 *   < 0: the daemon did not take it (no socket, no daemon, another peer, its binary replaced or not
 *      known to be the installed one: -ESTALE, no ack in time): the caller runs the late pass itself.
 *      ret->why says why. */
int hook_client_run(const char *path, uid_t peer_uid, const char *proc_dir, const char *installed,
                    const char *action, const char *env_action, uint64_t ack_timeout, HookClientResult *ret);

/* After hook_client_run() returned 0 (the daemon's late pass took the pass and did not answer in
 * time): its child may have written the knob's 0 and stalled before its answer, and the sleep would
 * begin with the kernel's own sync off while data written since its last look is dirty (review AG,
 * F1). Where a change of ours is recorded (state_dir's HOOK_KNOB_RECORD_FILE; one that is not a
 * regular file, or cannot be looked at, counts as recorded), the knob below sysfs is set to 1 (the
 * kernel syncs), under the knob's lock (an flock of state_dir) when it is had within
 * HOOK_KNOB_LOCK_WAIT, without it otherwise, as a restore does; the record stays for the resume's
 * restore. A child that writes after this finds the hook gone (its gate, kernel-knob.h) and puts 1
 * back itself. Returns 1 when written, 0 when no change of ours is recorded, or negative errno. */
int hook_give_up_knob(const char *state_dir, const char *sysfs);

/* Whether the unit's pass of this sleep left the late pass out (hook-socket.h, late-skip.h):
 * state_dir's HOOK_LATE_SKIP_FILE and HOOK_UNIT_MARK_FILE both hold the same token, as written (32
 * hex digits and a newline). Anything else, an error included, is false: the late pass runs. */
bool hook_late_skipped(const char *state_dir);

/* One line (printf-style, cut at 512 bytes) to fd, never waiting (review O, O6): the hook's stderr is
 * systemd-sleep's journal stream, shared with every other hook, and a journald that does not read
 * it must not hold the late pass. A socket gets send(MSG_DONTWAIT | MSG_NOSIGNAL); anything else a
 * write only when poll() says it has room now (a pipe then takes these bytes whole). A line that
 * does not fit now is dropped. */
void hook_say(int fd, const char *fmt, ...) _printf_(2, 3);
