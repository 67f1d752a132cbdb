/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Other mount namespaces, for sample_load() (private to the sample module): one member process per
 * namespace other than ours, found through proc/PID/ns/mnt, whose mountinfo is appended to the table
 * and whose proc/PID/root reaches its mounts. With the kernel's list of mount namespaces (Linux 6.12+,
 * unlisted_list_namespaces()) the walk over proc stops once each listed namespace has an unchrooted
 * member; without it, every process is read. A listed namespace that adds nothing to our own table
 * (unlisted_namespace_covered(): every superblock ours reaches, or a pseudo filesystem) is left out
 * before the walk: no member is looked for and none of its mounts enter the table.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"

/* The inode number of proc/<pid>/ns/mnt ("mnt:[ino]"). negative errno. */
int sample_read_ns(int proc_fd, const char *pid, uint64_t *ret);

/* A member process of a mount namespace; chrooted: its proc/PID/root is not "/" (root: where). */
typedef struct SampleNsMember {
        unsigned pid;
        bool chrooted;
        char root[128];
} SampleNsMember;

/* How many members are tried, one after the other, when they exit or leave while their namespace's
 * table is read (each try after the second walks proc). */
#define SAMPLE_NS_MEMBER_TRIES 8U

/* Another member of namespace ino than process 'except', for a candidate that exited or left:
 * the first unchrooted one, else the first chrooted one. 1 with *ret, 0 when there is none, negative
 * errno when proc could not be listed (no verdict). Walks proc_fd from its first process with an fd
 * of its own, whatever the offset of proc_fd (exported for tests). */
int sample_ns_other_member(int proc_fd, uint64_t ino, unsigned except, SampleNsMember *ret);

/* The mountinfo text of process pid (bounded by SAMPLE_NAMESPACE_MAX_BYTES), checked after the read
 * to come from namespace ino: -ESRCH when the process exited or is in another namespace (setns(2),
 * or its number reused); another negative errno when it could not be read or checked (exported for
 * tests). */
int sample_ns_member_mountinfo(int proc_fd, unsigned pid, uint64_t ino, char **ret, size_t *ret_size);

/* Without the kernel's list of mount namespaces (unlisted_list_namespaces() failed with list_error,
 * or it was not used: walk_all, selinux), one kept only by an open file (no process in it, no nsfs
 * mount) is seen by nothing: on a real procfs (a fixture has no namespaces of its own) that is a
 * reason in why, so the view is incomplete and the kernel's sync stays on. Not for EPERM in a PID
 * namespace of its own (a container, whose view is the container's: its walk over /proc never saw the
 * rest of the machine either, and the kernel does not list namespaces to it). 0 or -ENOMEM (exported
 * for tests: the errors of other kernels). */
int sample_ns_unlisted_reason(int proc_fd, int list_error, bool walk_all, bool selinux, Reasons *why);

/* Marks in ret (n entries of t, cleared by the caller) the mounts of t that a path does not reach: a
 * mount on the same path or above covers them (sample.c). 0 or -ENOMEM. */
int sample_mark_overmounted(const MountTable *t, bool *ret);

/*
 * Mounts that exist only in other mount namespaces, appended to t: *ns_of maps each entry of t to 0
 * (ours) or 1 + its index into *ret_ns. walk_all: read every process (tests; the way taken before
 * 6.12). cover_own: t is our whole view (not a chroot's), so that namespaces it covers may be left
 * out. A namespace's table comes through listmount/statmount by namespace id where the kernel
 * serves it (mount_table_load_namespace()), else from a member's mountinfo text; backend
 * MOUNT_TABLE_BACKEND_MOUNTINFO: always the text (tests, benchmarks). until (CLOCK_MONOTONIC, 0:
 * none): this process's own work on them (one statmount(2) per mount of each namespace, the walk over
 * proc, each table read) stops there, the rest a reason (review AE, H1). What cannot be read becomes
 * a reason in why; chrooted-only namespaces are compared through listmount into hidden. negative
 * errno (-ENOMEM).
 */
int sample_add_namespaces(int root_fd, bool walk_all, bool cover_own, MountTableBackend backend, usec_t until,
                          MountTable *t, unsigned **ns_of, MountNamespace **ret_ns, size_t *ret_n,
                          HiddenSet *hidden, Reasons *why);
