/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Per backing-device writeback statistics from debugfs (bdi/<name>/stats). Not ABI: parsed by key,
 * unknown keys ignored, each known key has a presence bit. Absence of the file is a normal result.
 * The plan reads dirty bytes and write bandwidth for its order and ETA only, never to skip a mount
 * (plan.h); the writeback lists and counters serve evidence.h, writeback.h and progress.h.
 */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum BdiStatKey {
        BDI_STAT_WRITEBACK,       /* BdiWriteback (bytes) */
        BDI_STAT_RECLAIMABLE,     /* BdiReclaimable (bytes) */
        BDI_STAT_DIRTY_THRESH,    /* BdiDirtyThresh (bytes) */
        BDI_STAT_DIRTIED,         /* BdiDirtied (bytes, cumulative) */
        BDI_STAT_WRITTEN,         /* BdiWritten (bytes, cumulative) */
        BDI_STAT_WRITE_BANDWIDTH, /* BdiWriteBandwidth (bytes per second) */
        BDI_STAT_B_DIRTY,         /* b_dirty (inodes) */
        BDI_STAT_B_IO,            /* b_io (inodes) */
        BDI_STAT_B_MORE_IO,       /* b_more_io (inodes) */
        BDI_STAT_B_DIRTY_TIME,    /* b_dirty_time (inodes) */
        _BDI_STAT_MAX,
        _BDI_STAT_INVALID = -EINVAL,
} BdiStatKey;

typedef struct BdiStats {
        uint64_t value[_BDI_STAT_MAX]; /* bytes, bytes/s or inode counts as noted above */
        uint32_t present;              /* bit (1U << key) set when the key was read */
} BdiStats;

static inline bool bdi_stats_has(const BdiStats *s, BdiStatKey k) {
        return s->present & (1U << k);
}

const char *bdi_stat_key_to_string(BdiStatKey k);

/* Parses the stats text. Values in kB are converted to bytes, "kBps" to bytes per second.
 * Returns the number of keys read (0 is valid: an unknown layout). */
int bdi_stats_parse(const char *text, BdiStats *ret);

/* What a bdi's name says (mm/backing-dev.c, fs/super.c): a block device's, and a FUSE or NFS
 * superblock's, is its "MAJ:MIN" (FUSE on a block device: "MAJ:MIN-fuseblk"); any other superblock
 * with a bdi of its own is named after its filesystem type, "<type>-<n>" (super_setup_bdi(): btrfs,
 * cifs, smb3, 9p, ceph, vboxsf, zfs, ...), which does not give its device; anything else (ubifs's
 * "ubifs_<n>_<n>") names neither. Pure. */
typedef enum BdiNameKind {
        BDI_NAME_DEVICE,  /* *ret_dev */
        BDI_NAME_FUSEBLK, /* *ret_dev */
        BDI_NAME_TYPE,    /* type[] */
        BDI_NAME_OTHER,
} BdiNameKind;

#define BDI_TYPE_MAX 29 /* "%.28s-%ld": the type's first 28 bytes */

BdiNameKind bdi_name_kind(const char *name, dev_t *ret_dev, char type[static BDI_TYPE_MAX]);

/* bdis named after a filesystem type, counted per type, for at most BDI_TYPES_MAX types. Pure. */
#define BDI_TYPES_MAX 32U

typedef struct BdiTypeCounts {
        struct {
                char type[BDI_TYPE_MAX];
                char name[NAME_MAX + 1]; /* the first bdi of it, for a reason */
                unsigned n;
        } v[BDI_TYPES_MAX];
        size_t n;
} BdiTypeCounts;

/* Counts bdi name, named after type. -E2BIG when it is of a type more than BDI_TYPES_MAX. */
int bdi_type_counts_add(BdiTypeCounts *c, const char *type, const char *name);

/* Reads <debugfs_fd>/bdi/<name>/stats. -ENOENT when missing. */
int bdi_stats_load(int debugfs_fd, const char *bdi_name, BdiStats *ret);
