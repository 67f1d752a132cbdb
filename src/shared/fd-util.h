/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * File descriptors of a forked child.
 */

/* Closes every fd from first on: close_range(2), else (before Linux 5.9, or a seccomp filter that
 * refuses it) one close(2) each up to RLIMIT_NOFILE (at most 65536). Async-signal-safe. */
void close_all_fds_from(int first);
