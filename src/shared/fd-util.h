/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * File descriptors of a forked child.
 */

#include <stddef.h>

/* The highest fd number the fallback of close_all_fds_from() closes (its bound, with RLIMIT_NOFILE). */
#define CLOSE_ALL_FDS_MAX 65536

/* Closes every fd from first (>= 3: stdio stays) on: close_range(2), else (before Linux 5.9, or a
 * seccomp filter that refuses it) one close(2) each below RLIMIT_NOFILE, at most CLOSE_ALL_FDS_MAX.
 * System calls only (for a forked child). */
void close_all_fds_from(int first);

/* Keeps fds[i] as fd 3 + i and closes every other fd from 3 on: a negative entry stays as it is
 * (AT_FDCWD, -EBADF) and its number is closed; one that could not be moved becomes -EBADF, and the
 * first such error is returned (0 else). n at most FDS_KEEP_MAX. System calls only (for a forked
 * child). */
#define FDS_KEEP_MAX 8U
int close_all_fds_but(int fds[], size_t n);
