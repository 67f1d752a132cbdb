/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Filesystem types: one table row per type (or type pattern such as "fuse.*") holding every fact
 * the rest of the program knows about a type by its name — its class, whether its sync_fs leaves
 * the written data in the device's volatile cache (the worker then fsyncs the block device), its
 * FUSE transport, whether sysfs lists its superblocks under fs/<type>/<device>, its statfs magic and
 * its clean rule. Pure: no I/O. A new type is one row in fs-type.c (plus a case in test-fs-type).
 *
 * Clean rules: no filesystem type has an exact test for "syncfs would write nothing"
 * (docs/CLEAN-EVIDENCE.md), so every row says FS_CLEAN_RULE_NONE and the planner syncs whatever may
 * hold data. A rule would come with the write counter its test reads (a sysfs attribute under
 * fs/<type>/<device>/, as ext4's lifetime_write_kbytes once was): none is read today.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum FsClass {
        FS_CLASS_BLOCK,   /* block-device backed (ext4, xfs, btrfs, vfat, ...) or unknown */
        FS_CLASS_NETWORK, /* nfs, nfs4, cifs, smb3, 9p, ceph, glusterfs, fuse.sshfs, ... */
        FS_CLASS_FUSE,    /* other fuse, fuseblk */
        FS_CLASS_PSEUDO,  /* proc, sysfs, tmpfs, devtmpfs, cgroup*, ... : nothing to sync */
        FS_CLASS_OVERLAY, /* overlay: sync the upper filesystem (it has its own mount) */
        _FS_CLASS_MAX,
        _FS_CLASS_INVALID = -EINVAL,
} FsClass;

const char *fs_class_to_string(FsClass c);

/* How a FUSE filesystem reaches its server. */
typedef enum FsFuse {
        FS_FUSE_NONE,  /* not FUSE */
        FS_FUSE_PLAIN, /* "fuse", "fuse.*": a /dev/fuse server; FUSE_SYNCFS only where the server is
                           * privileged (fc->sync_fs) */
        FS_FUSE_BLK,   /* "fuseblk", "fuseblk.*": a server on a block device (ntfs-3g, exfat-fuse) */
} FsFuse;

/* What a superblock of the type must show to be skipped as clean. */
typedef enum FsCleanRule {
        FS_CLEAN_RULE_NONE, /* never skipped as clean (every row today: docs/CLEAN-EVIDENCE.md) */
        _FS_CLEAN_RULE_MAX,
        _FS_CLEAN_RULE_INVALID = -EINVAL,
} FsCleanRule;

const char *fs_clean_rule_to_string(FsCleanRule r);

typedef struct FsType {
        const char *name; /* exact fstype as in mountinfo ("type.subtype"), or a prefix
                                    * pattern ending in ".*" ("fuse.*" matches "fuse.x" and "fuse.") */
        FsClass class;
        bool device_flush;         /* sync_fs sends no cache FLUSH: fsync the block device (the mount's
                                    * /dev source) after syncfs; sources in fs-type.c */
        bool flush_unless_journal; /* the same, unless sysfs proves the superblock has a journal
                                    * (ext4, ext4-journal.h) */
        bool clean_sync_flushes;   /* syncfs of a clean superblock still sends a cache FLUSH
                                    * (ext4_sync_fs() flushes when no commit will): a second pass
                                    * costs one FLUSH whatever the first did (defer-commit.h) */
        FsFuse fuse;
        bool sysfs_lists;          /* sysfs fs/<name>/<block device name> per mounted superblock (used to
                                    * find superblocks no mount table shows, unlisted.h) */
        unsigned long magic;       /* statfs f_type naming the type for a root that is no mount point in
                                    * our table (unlisted.h); 0: none */
        const char *module;        /* the kernel module serving the type, or candidates "a|b" (the
                                     * first loaded serves it), whose refcnt counts its superblocks
                                     * (fs-module.h); NULL: the type's own name, for a block type */
        const char *served_before; /* with no candidate loaded, the type belongs to the driver of this
                                     * type when proc/filesystems lists it right before this one, the
                                     * order that driver registers both in (ext2 by ext4, "ntfs" by
                                     * ntfs3) */
        bool uncounted;            /* a block type whose hidden superblocks need no count: listed
                                     * (btrfs in sysfs, a FUSE bdi in debugfs) or read-only */
        FsCleanRule clean_rule;
        const char *write_counter; /* sysfs fs/<name>/<device>/ attribute its clean rule reads; NULL:
                                    * none (no rule, no counter today) */
} FsType;

/* The row of a type: an exact name first, then the first matching pattern, then the default row for
 * unknown and empty types (class block, nothing else). Never NULL; NULL fstype is the empty type. */
const FsType *fs_type_lookup(const char *fstype);

/* The table itself, in order (unknown types are not in it), for tables and tests. */
const FsType *fs_type_table(size_t *ret_n);

/* How a superblock gets its cache FLUSH after syncfs(). */
typedef enum FsFlush {
        FS_FLUSH_NONE,             /* its sync_fs sends one after all its writes */
        FS_FLUSH_DEVICE,           /* fsync() of its block device; without the node: an error */
        FS_FLUSH_DEVICE_OR_SYNCFS, /* the same, but without the node a second syncfs(), whose
                                    * sync_fs flushes after the first one's writes (ext4 without a
                                    * journal, barriers on) */
        _FS_FLUSH_MAX,
        _FS_FLUSH_INVALID = -EINVAL,
} FsFlush;

const char *fs_flush_to_string(FsFlush f);

/* Shorthands for fs_type_lookup(fstype)->... */
FsClass fs_class_from_fstype(const char *fstype);

/* Whether fstype ("type" or "type.subtype", as a mount table shows it) is of filesystem type type. */
bool fstype_is(const char *fstype, const char *type);

/* Whether a path walk through a mount of a filesystem of class c (type fstype) may wait on a server:
 * a FUSE or network filesystem revalidates the names it crosses (d_revalidate, answered by its
 * server) and autofs holds the walk until its daemon has mounted (review U, U1). A local block or
 * pseudo filesystem answers for the path to a mount point from the dentry cache (the mount pins
 * every dentry on that path); so does an overlay, unless one of its layers is on such a server (which
 * its class does not say: callers that walk to a mount avoid overlays too). */
bool fs_walk_may_wait(FsClass c, const char *fstype);

/* journal: what ext4_journal_load() said of the superblock (1 a journal, 0 none, negative errno
 * unknown); only rows with flush_unless_journal look at it, and only a proven journal spares them.
 * fs_options: the superblock's options (NULL: none); "nobarrier" or "barrier=0" means its sync_fs
 * sends no FLUSH at all, whatever the type: FS_FLUSH_DEVICE (a second syncfs would not flush). */
FsFlush fs_type_flush(const char *fstype, int journal, const char *fs_options);

/* A device of the superblock outside its stack whose cache its sync_fs never flushes, which the
 * worker fsyncs after syncfs too: the realtime device of an xfs, as the rtdev= option of its
 * superblock names it (the name given at mount time, unchecked: the worker checks the node).
 * Returns 1 and the name in *ret (owned), 0 when there is none, -ENOMEM. */
int fs_type_rt_flush_device(const char *fstype, const char *fs_options, char **ret);

/* Whether syncfs of a clean superblock of the type, flushed as flush says, sends a cache FLUSH: its
 * row says so (ext4, ext3) or it gets a device flush. */
bool fs_type_clean_sync_flushes(const char *fstype, FsFlush flush);

FsFuse fs_type_fuse(const char *fstype);
FsCleanRule fs_type_clean_rule(const char *fstype);

/* The type named by a statfs magic, "unknown" when no row has it. Overlay has no magic on purpose:
 * an overlay entry without its upperdir option would be planned as "nothing to write". */
const char *fs_type_from_magic(unsigned long magic);
