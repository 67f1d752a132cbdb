/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Hidden superblocks of the types no listing shows, counted by their kernel module.
 *
 * A superblock no scanned mount table shows (unmounted lazily while a process holds a file on it,
 * or mounted only in a namespace nobody scanned) is found by the listings of unlisted.h: sysfs
 * fs/{ext4,xfs,f2fs}/, btrfs, debugfs's anonymous bdis, listmount of every namespace the kernel
 * lists. Of the other block types, the late pass's look at the writeback lists (evidence.h) sees
 * the dirty inodes and buffers, but a journaled or log-structured one may hold a running transaction
 * no list shows (FsType.module: jfs, nilfs2, reiserfs, gfs2, ocfs2, bcachefs, hfsplus).
 *
 * Each superblock holds a reference on the module of its type (fs/super.c: sget_fc() takes it with
 * get_filesystem(), deactivate_locked_super() drops it), and so does a mount being set up (an
 * fs_context) and any module built on it. So where proc/filesystems lists such a type, a sysfs
 * module/<m>/refcnt above the number of superblocks of the module's types the tables show means
 * one may be hidden; a type built into the kernel (no refcnt file) cannot be counted. Either is a
 * reason: the view is incomplete, and the late pass keeps the kernel's sync on. A type that is not
 * registered has no superblock: nothing to read beyond proc/filesystems (~20 µs).
 */

#include "mount-table.h"
#include "unlisted.h"

/* Pure. The type names of proc/filesystems text ("nodev\tNAME" and "\tNAME" lines), as a strv
 * (shared/strv.h). 0 or -ENOMEM; lines of another shape are skipped. */
int fs_module_parse_filesystems(const char *text, char ***ret);

/* Pure. Appends to why the reason for module m whose refcnt read as refcnt (a negative errno: could
 * not be read, -ENOENT: built in or no module unloading) when seen superblocks of its types are
 * fewer; nothing otherwise. -ENOMEM or 0. */
int fs_module_reason(const char *m, int64_t refcnt, size_t seen, Reasons *why);

/* For each module of FsType.module with a type registered in proc_fd's "filesystems", the
 * superblocks of its types in t and h (distinct devices) against its sysfs_fd "module/<m>/refcnt"
 * (fs_module_reason()). proc_fd < 0, or no "filesystems" file (a fixture root): nothing; another
 * error reading it is a reason. -ENOMEM or 0. */
int fs_module_check(int proc_fd, int sysfs_fd, const MountTable *t, const HiddenSet *h, Reasons *why);
