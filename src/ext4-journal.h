/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Whether a mounted ext4 superblock has a journal, from sysfs fs/ext4/<device>/journal_task
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
