/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The late pass through the daemon: what the system-sleep hook (hook-client.c, a binary of libc
 * alone) and suspend-sync-daemon.service (verb-daemon.c) say to each other. Pure.
 *
 * systemd-sleep runs the hook with "pre ACTION". The hook connects to HOOK_SOCKET_PATH
 * (SOCK_SEQPACKET, in the daemon's RuntimeDirectory=, mode 0600; both ends check that the peer is
 * root), and sends one request: the action systemd-sleep named and $SYSTEMD_SLEEP_ACTION. The
 * daemon forks the late pass (verb_run() --late --trigger=hook, no exec: the code, libraries and
 * caches of a warm process), whose first act is the ack: the CLOCK_MONOTONIC time by which it
 * ends. Once its knob is decided and its state lock released it answers "done" and its exit
 * status. Each message is one datagram of text: "ACTION ENV_ACTION", "ack LIMIT_USEC", "done CODE";
 * an action is a token of [a-z0-9-], "-" for none.
 *
 * The hook falls back to exec'ing the whole late pass ("suspend-sync pre ACTION") whenever no ack
 * came: no daemon, a daemon busy with another late pass, no answer within HOOK_ACK_TIMEOUT. After
 * the ack it waits for "done" until LIMIT + HOOK_DONE_MARGIN at most, and then exits whatever came:
 * the late pass only ever turns the kernel's own sync off after syncing everything that sync would
 * write, and while the hook still waits (HookLate's gate, verb-daemon.c), so a pass that died or
 * is late leaves that sync as the backstop.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon.h"

#define HOOK_SOCKET_PATH DAEMON_RUNTIME_DIR "/late-pass"
/* One datagram; larger ones are cut and fail to parse. */
#define HOOK_MSG_MAX 128U
/* An action (suspend, hibernate, ..., or what $SYSTEMD_SLEEP_ACTION says) with its NUL. */
#define HOOK_ACTION_MAX 48U
/* The daemon's ack comes within a fork: this is for a daemon that is stuck or gone. */
#define HOOK_ACK_TIMEOUT (500U * 1000U)
/* The hook's start for the "suspend-sync pre" it execs after the daemon did not take the late pass,
 * "PID USEC" (the hook's PID, which the exec keeps; CLOCK_MONOTONIC): that pass counts its deadline
 * from the hook's start, not from its own, so the hook's wait for an ack and a slow exec are inside
 * DeadlineSec= (review AF, F2; review AG, F3: judged by age, a slow exec's value was thrown away).
 * A value of another PID (inherited) or in the future: ignored; an old one counts, however old (the
 * PID proves it the hook's own start: review AH, L4). */
#define HOOK_STARTED_ENV "SUSPEND_SYNC_HOOK_STARTED"
/* After the pass's limit: its log flush and exit. */
#define HOOK_DONE_MARGIN (2U * 1000U * 1000U)
/* The hook never waits longer than this after the ack, below systemd-sleep's 90 s for its hooks
 * (verb-daemon.c checks that the late pass's limit and the margin fit). */
#define HOOK_WAIT_MAX (85U * 1000U * 1000U)

/* KeepCheapSync= (late-skip.h): the unit's pass of this sleep left the late pass out when
 * HOOK_LATE_SKIP_FILE in the state directory holds its token, the one HOOK_UNIT_MARK_FILE holds
 * (handover.h). The same names as STATE_DIR_DEFAULT, LATE_SKIP_FILE and HANDOVER_UNIT_MARK_FILE
 * (test-hook-socket checks), spelled out: the hook is built without those headers. */
#define HOOK_STATE_DIR "/run/suspend-sync"
#define HOOK_LATE_SKIP_FILE "late-skip"
#define HOOK_UNIT_MARK_FILE "unit-pass"
/* The knob and the record of its original (kernel-knob.h KNOB_SYSFS_PATH, KNOB_RECORD_FILE), for
 * hook_give_up_knob(). */
#define HOOK_SYSFS_DIR "/sys"
#define HOOK_KNOB_PATH "power/sync_on_suspend"
#define HOOK_KNOB_RECORD_FILE "knob.orig"
/* How long hook_give_up_knob() waits for the knob's lock before it writes without it. */
#define HOOK_KNOB_LOCK_WAIT (200U * 1000U)

/* Whether s is one of the sleep actions systemd-sleep runs hooks for. */
bool sleep_action_valid(const char *s);
/* The hook's sleep action: what systemd-sleep named (arg), else $SYSTEMD_SLEEP_ACTION (env) when
 * it is one we know (it may read suspend-after-failed-hibernate), else NULL. */
const char *hook_sleep_action(const char *arg, const char *env);

/* The request, into buf (HOOK_MSG_MAX): its length. Either action may be NULL; one that is not a
 * token is sent as none. */
size_t hook_request_format(const char *action, const char *env_action, char *buf, size_t size);
/* Parses a request into the two actions ("" for none). 0, or -EBADMSG. */
int hook_request_parse(const char *buf, size_t n, char action[static HOOK_ACTION_MAX],
                       char env_action[static HOOK_ACTION_MAX]);

size_t hook_ack_format(uint64_t limit_usec, char *buf, size_t size);
int hook_ack_parse(const char *buf, size_t n, uint64_t *ret_limit_usec);

/* The daemon's late pass: whether the hook on fd still waits for it (connected, and it sent nothing
 * after its request: its close reads as EOF, POLLIN or POLLHUP) and now_usec is before limit_usec.
 * poll(2) without waiting. */
bool hook_requester_waits(int fd, uint64_t now_usec, uint64_t limit_usec);

size_t hook_done_format(int code, char *buf, size_t size);
/* 0 and the exit status (0..255), or -EBADMSG. */
int hook_done_parse(const char *buf, size_t n, int *ret_code);
