/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Hidden superblocks of the types no listing shows, counted by their kernel module.
 *
 * A superblock no scanned mount table shows (unmounted lazily while a process holds a file on it,
 * or mounted only in a namespace nobody scanned) is found by the listings of unlisted.h: sysfs
 * fs/{ext4,xfs,f2fs}/, btrfs, debugfs's anonymous bdis, listmount of every namespace the kernel
 * lists. Of the other block types (FsType.module), the late pass's look at the writeback lists
 * (evidence.h) sees dirty inodes only on a disk without a known superblock, and a journaled or
 * log-structured one may hold a running transaction no list shows at all: vfat, msdos, exfat, hfs,
 * hfsplus, minix, ext2, udf, ntfs3, jfs, nilfs2, reiserfs, gfs2, ocfs2, bcachefs, ubifs, jffs2.
 *
 * Each superblock holds a reference on the module of its type (fs/super.c: sget_fc() takes it with
 * get_filesystem(), deactivate_locked_super() drops it after kill_sb), and so do a mount being set up
 * (an fs_context), a module built on it and an open file of its. So where proc/filesystems lists such
 * a type, the sysfs module/<m>/refcnt of the module serving it (the first of the row's candidates
 * sysfs has: "ntfs" is the classic driver's where a module "ntfs" is loaded, else ntfs3's since 6.9) above the number of superblocks of that module's types
 * the tables show means one may be hidden. No module directory (built in), or one without refcnt
 * (built in with parameters, no module unloading), cannot be counted; but ext2 with no module of its
 * own is ext4's where CONFIG_EXT4_USE_FOR_EXT2 is set, listed in sysfs fs/ext4, which proc/filesystems
 * shows by ext4's registration order ("ext3", "ext2", "ext4" in a row); fs/ext2 built in cannot be
 * counted. Each is a reason: the view is incomplete, and the late pass keeps the kernel's sync
 * on. A type that is not registered has no superblock: one read of proc/filesystems (~20 µs).
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

/* For each module serving a type of FsType.module registered in proc_fd's "filesystems", the
 * superblocks of its types in t and h (distinct devices) against its sysfs_fd "module/<m>/refcnt"
 * (fs_module_reason()). proc_fd < 0, or no "filesystems" file where proc_fd is no procfs (a fixture
 * root): nothing; another error reading it is a reason. -ENOMEM or 0. */
int fs_module_check(int proc_fd, int sysfs_fd, const MountTable *t, const HiddenSet *h, Reasons *why);
