/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Whether a mounted ext4 superblock has a journal, and (at the end) whether it turned barriers
 * off. The journal, from sysfs fs/ext4/<device>/journal_task
 * ("<none>" without a journal, else the pid of its jbd2 thread: 0 when that thread is outside our
 * pid namespace).
 *
 * Why it matters: without a journal, ext4_sync_fs() sends its cache FLUSH before
 * sync_filesystem()'s last step, sync_blockdev(), writes the metadata buffers (inode tables,
 * bitmaps, the extent changes of unwritten extents converted when their data completed), so a
 * syncfs() leaves those writes in the disk's volatile cache. With a journal they are committed
 * (FLUSH, then the commit block FUA) before ->sync_fs returns. The worker then fsyncs the block
 * device after syncfs (fs-type.h, device flush), unless a journal is proven here.
 */

#include <stdbool.h>

typedef enum Ext4Journal {
        EXT4_JOURNAL_NONE = 0, /* "<none>" */
        EXT4_JOURNAL_YES = 1,  /* a pid */
} Ext4Journal;

/* Parses journal_task's text (pure): EXT4_JOURNAL_YES for a decimal number, EXT4_JOURNAL_NONE for
 * "<none>" (a trailing newline allowed either way), -EINVAL for anything else. */
int ext4_journal_parse(const char *text);

/* Whether journal_task may be read on a kernel of this release (uname -r, pure): from 5.7 on.
 * Before "ext4: unregister sysfs path before destroying jbd2 journal" (5.7) a read racing with an
 * unmount could touch the freed journal. Older kernels keep the device flush (one FLUSH). */
bool ext4_journal_readable(const char *release);

/* Reads fs/ext4/<name>/journal_task below the directory fd standing for "/sys", for the superblock
 * on the block device of that kernel name (DeviceInfo.name). Negative errno when it cannot be told
 * (-ENOENT: no name, no such attribute; -EINVAL: not a name). */
int ext4_journal_load(int sysfs_fd, const char *name);

/*
 * Where the journal lies. The late pass may be the first to write a superblock whose device it
 * reaches (defer-commit.h), but a journal on a device of its own (mkfs.ext4 -J device=, on a device
 * made with -O journal_dev) is in no device stack the sample knows: it may be served over the
 * network, or be the device that hangs, and the late pass's syncfs waits for its commit there.
 * jbd2 names its directory under proc fs/jbd2/ after the journal (fs/jbd2/journal.c, j_devname):
 * "<device>-<inode number>" for a journal in an inode of the filesystem on <device>
 * (jbd2_journal_init_inode()), "<device>" for a journal device (jbd2_journal_init_dev()); a '/' in
 * a device name is written '!' in both, as in sysfs. Seen on 6.18: "loop0-8" for the ext4 on loop0,
 * "loop1" for the journal device of the ext4 on loop2 (and no "loop2-<n>").
 */

/* Whether an entry of fs/jbd2/ names the journal in an inode of the superblock on the block device
 * of that kernel name (pure): the name, '-', and an inode number in decimal without leading zeros. */
bool ext4_journal_internal_entry(const char *entry, const char *name);

#define EXT4_JOURNAL_JBD2_MAX 4096U /* entries of fs/jbd2/ looked at */

/* Whether the journal of the ext4 superblock on the block device of that kernel name
 * (DeviceInfo.name) lies in the filesystem, from fs/jbd2/ below the directory fd standing for
 * "/proc": 1 an entry names it; 0 none does (a journal device, no journal, or jbd2 under another
 * name); negative errno when it cannot be told (-ENOENT: no name, no fs/jbd2/; -EINVAL: not a name;
 * -E2BIG: more than EXT4_JOURNAL_JBD2_MAX entries). Only 1 proves it: no block device is named
 * "<another's name>-<digits>" (dm-N's "dm" is no device), so the entry is no journal device's. */
int ext4_journal_internal(int proc_fd, const char *name);

/* Whether the superblock's journal, if any, is written where its device is (pure): none
 * (ext4_journal_load() said EXT4_JOURNAL_NONE), or one proven in the filesystem
 * (ext4_journal_internal() said 1). Unknown either way: no. */
bool ext4_journal_on_own_device(int journal, int internal);

/*
 * Whether the superblock sends no cache FLUSH (barriers off), from proc fs/ext4/<device>/options,
 * which lists every option (_ext4_show_options() with nodefs). The mount table does not show
 * "nobarrier" when the superblock's own defaults set it (tune2fs -o nobarrier, or -E
 * mount_opts=nobarrier): fs/ext4/super.c takes s_def_mount_opt after ext4_set_def_opts() and
 * parse_apply_sb_mount_options(), and /proc/self/mountinfo shows only what differs from it. Such
 * an ext4 commits without PREFLUSH/FUA (JBD2_BARRIER off) and ext4_sync_fs() sends no FLUSH (review
 * AA, AA1).
 */
/* Parses the options text (pure): 1 a line reads "nobarrier", 0 a line reads "barrier", -EINVAL
 * neither (not the text of that file). */
int ext4_options_nobarrier_parse(const char *text);
/* Reads fs/ext4/<name>/options below the directory fd standing for "/proc" and parses it: 1
 * barriers off, 0 on, negative errno when it cannot be told. name NULL (sysfs could not name the
 * device): 0 when every superblock listed under fs/ext4/ says "barrier" (the one asked about is
 * among them), -ENODEV when one says "nobarrier" (it may be that one), -ENOENT when none is listed,
 * -E2BIG past EXT4_OPTIONS_ANY_MAX, or the first read's error. */
#define EXT4_OPTIONS_ANY_MAX 4096U
int ext4_options_nobarrier(int proc_fd, const char *name);
