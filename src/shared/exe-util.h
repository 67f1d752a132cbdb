/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Whether a process still runs the program file it was started from. A package upgrade renames the
 * new binary over the old one (or removes it and writes a new file): the old inode is unlinked, and
 * a process started from it, suspend-sync-daemon.service not restarted, runs the old code on, the
 * late passes it forks included (review AH, M1). libc only: the system-sleep hook links it.
 */

#include <sys/types.h>

/* 1 when the executable of pid (0: ourselves) below proc_fd (a procfs dir fd) has been unlinked
 * since the process started, 0 when it is still linked, negative errno when it cannot be told (the
 * process gone: -ENOENT; not permitted: -EACCES, -EPERM). The link is followed to the inode the
 * process runs, which the kernel keeps while it runs. */
int proc_exe_unlinked(int proc_fd, pid_t pid);
