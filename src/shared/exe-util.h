/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Whether a process still runs the program it would be started from now. A package upgrade puts a
 * new binary at the path (renamed over the old one, with the old one still linked elsewhere for a
 * while, as dpkg's backup link does; through a symlink switched, a bind mount, an overlay or an image
 * swapped), and a process started from the old one, suspend-sync-daemon.service not restarted, runs
 * the old code on, the late passes it forks included (reviews AH, M1; AI, AI-1). libc only: the
 * system-sleep hook links it. Files are looked at with AT_STATX_DONT_SYNC: their attributes are not
 * fetched from a server whose filesystem might hang (review AI, AI-3); a path's lookup on a network
 * filesystem may still ask it (review AJ, AJ-6).
 */

#include <sys/types.h>

/* Whether the program of pid (0: ourselves) below proc_fd (a procfs dir fd) is the file at path now,
 * by device and inode: 1 when it is, 0 when path names another file, -ENOENT when there is no file
 * at path, another negative errno when it cannot be told (the process gone: -ESRCH; not permitted:
 * -EACCES, -EPERM). */
int proc_exe_is(int proc_fd, pid_t pid, const char *path);

/* 1 when the program file of pid (0: ourselves) has been unlinked since the process started, 0 when
 * it still has a link (which proves nothing about the path it was started from), negative errno
 * when it cannot be told (the process gone: -ESRCH). */
int proc_exe_unlinked(int proc_fd, pid_t pid);
