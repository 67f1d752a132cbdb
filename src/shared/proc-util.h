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

/* The mount fd is on ("mnt_id:", the id of /proc/PID/mountinfo and STATX_MNT_ID) and its inode
 * number ("ino:", Linux 5.14+; else -EOPNOTSUPP), from proc_fd's self/fdinfo/FD (proc_fd: our procfs;
 * a path from "/" would be looked up on the root filesystem first): procfs alone, no call into the
 * file's filesystem (fstatfs() or fstat() would make one: an RPC on NFS or 9p, a request to a FUSE
 * server). */
int proc_fdinfo_mnt_ino(int proc_fd, int fd, int *ret_mnt_id, uint64_t *ret_ino);

/* The first mapping of /proc/PID/maps text (size bytes) named name ("[heap]", "[stack]"): its
 * start and end addresses. -ENOENT when there is none, -EBADMSG for a line of that name that does
 * not parse. Pure. */
int proc_maps_find(const char *text, size_t size, const char *name, uintptr_t *ret_start, uintptr_t *ret_end);

/* Whether fd is a directory of a procfs (statfs magic), as opposed to a fixture tree: 1, 0, or
 * negative errno when fstatfs() fails. procfs answers it from memory. */
int proc_fd_is_procfs(int fd);
