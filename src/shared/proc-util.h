/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Facts about a process from procfs, relative to a proc root dir fd.
 */

#include <stdint.h>
#include <sys/types.h>

/* Reads field 22 (start time, clock ticks since boot) and field 3 (state: 'R', 'S', 'D', 'Z', ...)
 * of proc_fd/PID/stat; either output may be NULL. -ENOENT when the process is gone, -EBADMSG for
 * unexpected content. COMM may hold anything: fields are counted after its last ')'. */
int proc_pid_start_time(int proc_fd, pid_t pid, uint64_t *ret_start_time, char *ret_state);
