/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Hidden superblocks of the types no listing shows, counted by their kernel module.
 *
 * A superblock no scanned mount table shows (unmounted lazily while a process holds a file on it,
 * or mounted only in a namespace nobody scanned) is found by the listings of unlisted.h: sysfs
 * fs/{ext4,xfs,f2fs}/ and fs/btrfs/, debugfs's anonymous bdis, listmount of every namespace the
 * kernel lists. Of every other block type, the late pass's look at the writeback lists (evidence.h)
 * sees dirty inodes only on a disk without a known superblock, and a journal's running transaction
 * not at all: vfat, exfat, ntfs3, hfsplus, udf, jfs, nilfs2, gfs2, ocfs2, bcachefs, hpfs, ufs, ...;
 * and ubifs and jffs2, whose bdi is no device number.
 *
 * Each superblock holds a reference on the module of its type (fs/super.c: sget_fc() takes it with
 * get_filesystem(), deactivate_locked_super() drops it after kill_sb), and so do a mount being set up
 * (an fs_context), a module built on it and an open file of its. So each type proc/filesystems
 * registers is counted: block types ("nodev" absent) but those listed or read-only
 * (FsType.uncounted, FsType.sysfs_lists), and the rows naming a module (FsType.module: ubifs,
 * jffs2). The module serving it is the first of the row's candidates sysfs has under module/, else
 * the type's own name; with none loaded, a type its row says another driver registers right before
 * its own (FsType.served_before: ext2 by ext4, "ntfs" by ntfs3) when proc/filesystems shows that order
 * is that driver's (listed, or counted with it). A refcnt above the superblocks of the module's
 * types the tables show means one may be hidden; no module (built in), no refcnt (built in with
 * parameters, or no module unloading) or an unreadable one cannot be counted. Each is a reason: the
 * view is incomplete, and the late pass keeps the kernel's sync on (for good where such a type is
 * built in: upstream arm64's defconfig has vfat so). One read of proc/filesystems when nothing is
 * registered to count.
 */

#include "mount-table.h"
#include "shared/macro.h"
#include "unlisted.h"

/* Pure. The type names of proc/filesystems text ("nodev\tNAME" and "\tNAME" lines), in order, as a
 * strv (shared/strv.h); ret_block (may be NULL): those of block types (no "nodev"). 0 or -ENOMEM;
 * lines of another shape are skipped. */
int fs_module_parse_filesystems(const char *text, char ***ret, char ***ret_block);

/* Pure. Appends to why the reason for module m whose refcnt read as refcnt (a negative errno: could
 * not be read, -ENOENT: built in or no module unloading) when seen superblocks of its types are
 * fewer; nothing otherwise. -ENOMEM or 0. */
int fs_module_reason(const char *m, int64_t refcnt, size_t seen, Reasons *why);

/* The counts, read in two halves around the mount tables' read. */
typedef struct FsModuleCounts FsModuleCounts;
FsModuleCounts *fs_module_counts_free(FsModuleCounts *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(FsModuleCounts *, fs_module_counts_free);

/* Before the tables are read: which registered types are counted, by which module (a reason in why for
 * each that cannot be), and their refcnt. proc_fd < 0, or no "filesystems" file where proc_fd is no
 * procfs (a fixture root): *ret NULL, nothing to count; another error reading it is a reason.
 * -ENOMEM or 0. */
int fs_module_begin(int proc_fd, int sysfs_fd, FsModuleCounts **ret, Reasons *why);

/* After: the superblocks of each module's types in t and h (distinct devices) against the larger of
 * its refcnt then and now (fs_module_reason()), so that a mount made or undone in between does not
 * hide a hidden one. c NULL: nothing. -ENOMEM or 0. */
int fs_module_end(FsModuleCounts *c, int sysfs_fd, const MountTable *t, const HiddenSet *h, Reasons *why);

/* Both halves at once (tests). */
int fs_module_check(int proc_fd, int sysfs_fd, const MountTable *t, const HiddenSet *h, Reasons *why);
