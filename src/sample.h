/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Sample: one record per superblock, joining the mount table, meminfo, device classification and
 * bdi stats. sample_build() is pure (takes already-read facts through a Facts provider); sample_load()
 * does the reading.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bdi-stats.h"
#include "device.h"
#include "meminfo.h"
#include "mount-table.h"
#include "unlisted.h"
#include "shared/macro.h"
#include "shared/time-util.h"

typedef struct Superblock {
        dev_t dev;
        char *fstype;
        char *source;
        FsClass fs_class;
        size_t *mounts; /* indices into the MountTable, in table order */
        size_t n_mounts;
        bool all_read_only; /* every mount of it is read-only (or the sb is) */
        /* Not 0: 1 + the index of a mount of the same device number listed with another type than
         * the first (the number went to another filesystem while the tables were read, review G,
         * G5): a reason, and the type is the first one that is not a pseudo filesystem's. */
        size_t type_conflict;
        DeviceInfo device;
        char *group; /* device group key: sorted leaf devices "8:0,8:16", or
                                     * "sb:MAJ:MIN" for superblocks without block device */
        bool has_bdi_stats;
        BdiStats bdi;  /* valid when has_bdi_stats */
        int bdi_error; /* why stats are missing (negative errno) or 0 */
        int journal;   /* types that need a device flush unless they have a journal (ext4):
                                     * ext4_journal_load()'s answer, 1 a journal, 0 none, negative
                                     * errno unknown; other types: -ENODATA (not read) */
        /* The same types, unless journal is 0: ext4_journal_internal()'s answer, 1 the journal lies in
         * the filesystem, 0 not proven so, negative errno unknown; otherwise -ENODATA (not read). */
        int journal_internal;
        /* The same types, also where the stack below could not be read in full (is_block false):
         * ext4_options_nobarrier()'s answer by DeviceInfo.name (NULL when sysfs could not name it:
         * the answer of every ext4 of the kernel), 1 the superblock sends no FLUSH (its own default,
         * not shown in the mount table), 0 it does, negative errno unknown; otherwise -ENODATA (not
         * read: another type, or no SampleOps.nobarrier). */
        int nobarrier;
        /* A stack with one loop device (DeviceInfo.loop_dev): the filesystem its backing file is on,
         * as the driver answers (loop-backing.h), when loop_backing_error is 0. Otherwise unknown:
         * -ENODATA not asked (SampleSources.loop_backing), or why the answer is missing. */
        int loop_backing_error;
        dev_t loop_backing_dev;
        dev_t loop_backing_rdev; /* not 0: the "file" is that device's node (a loop device on a disk) */
} Superblock;

/* A mount namespace other than our own, reached through /proc/<pid>/root. */
typedef struct MountNamespace {
        uint64_t ino;        /* from the "mnt:[ino]" link */
        int pid;             /* a process in it */
        bool foreign_userns; /* owned by another user namespace than ours (NS_GET_USERNS): a rootless
                              * container's, where a FUSE mount answers only its own processes */
} MountNamespace;

#define SAMPLE_MAX_NAMESPACES 1024U
#define SAMPLE_NAMESPACE_MAX_BYTES (4U * 1024U * 1024U) /* mountinfo read per other namespace */

typedef struct Sample {
        MountTable *table; /* owned */
        Superblock *sbs;
        size_t n_sbs;
        size_t *sb_of_mount;      /* MountTable index -> index into sbs */
        bool *overmounted;        /* MountTable index -> another mount sits on top at that path */
        ssize_t *parent_of_mount; /* MountTable index -> the index of the entry with its parent id, -1:
                                   * none (any entry of that id: filter by namespace and unlisted) */
        unsigned *ns_of_mount;    /* MountTable index -> 0 (our namespace) or 1 + index into namespaces */
        MountNamespace *namespaces;
        size_t n_namespaces;
        Meminfo meminfo;
        bool has_meminfo;
        int meminfo_error; /* !has_meminfo: why (negative errno) */
        /* After every superblock's bdi stats were read, the system's writeback count refreshed
         * (evidence_load_global()): 1 no page under writeback, 0 some, a negative errno not read
         * (-ENODATA: not asked; sample_build() leaves it so). The pass asks it for plan.c's proof that
         * a plain FUSE mount of a user is clean (plan_fuse_proof_wanted()). */
        int writeback_idle;
        /* The running kernel (<root_fd>/proc/sys/kernel/osrelease) is one the FUSE rule was checked on
         * (evidence_fuse_kernel_checked()); false also when it cannot be read, for an identity_only
         * sample (not read), and in sample_build(). plan.c applies the rule only then. */
        bool fuse_kernel_checked;
        bool has_debugfs;      /* debugfs bdi/ directory was readable */
        int debugfs_error;     /* !has_debugfs: why (negative errno; the open's, when debugfs_fd held
                                * one, see SampleSources) */
        bool complete;         /* every superblock the kernel's own sync would write is in the table
                                     * (listed or reached, see unlisted.h); false: incomplete_why says
                                     * what was not seen or cannot be reached */
        bool view_restricted;  /* our root is not a mount point of our own table (chroot): a mount
                                     * we do not see may still be mounted, never call one "gone" */
        char **incomplete_why; /* sentences, at most REASONS_MAX */
        size_t n_incomplete_why;
        size_t n_incomplete_dropped; /* reasons beyond REASONS_MAX, not kept */
        /* queue/rotational, read in a bounded child (device-rotational.h) unless
         * SampleSources.no_rotational: how many disks gave no answer (their devices' class unknown:
         * no Device=rotational rule that skips applies to them) and the first one's reason. */
        size_t n_rotational_unknown;
        int rotational_error;
        usec_t timestamp; /* CLOCK_MONOTONIC when sampled */
        /* Phase times for the run record (usec). */
        usec_t t_read, t_sample;
} Sample;

Sample *sample_free(Sample *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sample *, sample_free);

/* What a sample's bounded children depend on, known only when the first of them is about to run:
 * open() is called then, once, and sets reach_timeout and until (as in SampleSources), which replace
 * the sources' own, and loop_backing, which decides whether the loop driver is asked where the
 * sources' loop_backing says it may be; a negative return leaves no time and asks nothing (each
 * child is killed at once, what it would have found not known; no loop device placed). */
typedef struct SampleGate {
        int (*open)(struct SampleGate *g);
        void *userdata;
        bool opened;
        usec_t reach_timeout, until;
        bool loop_backing;
} SampleGate;

/* Every field but those a gate decides (reach_timeout, until, loop_backing) is compared by
 * sample_sources_same_reads(): add one there too. */
typedef struct SampleSources {
        int root_fd;                     /* "/" or fixture root: proc/self/mountinfo, proc/meminfo */
        const char *sysfs_root;          /* "/sys" or fixture path */
        int debugfs_fd;                  /* debugfs root (contains bdi/); negative = unavailable: the
                                          * negative errno of its open(), or -EBADF */
        bool scan_namespaces;            /* also read mounts of other mount namespaces (proc/PID/mountinfo);
                                     * when false the sample is incomplete */
        MountTableBackend mount_backend; /* our own table: 0 = the production default; tests and
                                          * benchmarks pick one (mount-table.h); MOUNTINFO also reads
                                          * other namespaces' tables as text */
        bool walk_all_processes;         /* tests: find other namespaces' members by reading every
                                          * process's ns/mnt, the way taken before Linux 6.12, instead
                                          * of stopping once each namespace the kernel lists (nsfs
                                          * NS_MNT_GET_NEXT) has a member */
        usec_t reach_timeout;            /* bound on the search through /proc for holders of files on
                                          * superblocks no table shows (unlisted_reach(), in a child);
                                          * 0: UNLISTED_REACH_TIMEOUT */
        usec_t until;                    /* CLOCK_MONOTONIC: no bounded child of the sample (reach,
                                          * loop backing, root facts) runs past it, whatever its own
                                          * bound; a pass sets it to its start + half its deadline
                                          * (context.c), however long the configuration took; 0: none */
        UnlistedStatFn reach_stat;       /* tests: how that search looks at a file; NULL: statx(2) */
        bool no_rotational;              /* leave queue/rotational unread (device.h); otherwise it
                                          * is read in a bounded child, bounded as the search
                                          * above, never in this process (device-rotational.h) */
        bool loop_backing;               /* ask the loop driver where the backing file of each
                                          * writable superblock on one loop device is (in a child,
                                          * bounded as the search above); "dev" below root_fd */
        bool identity_only;              /* the superblocks, their mounts and the view's completeness
                                          * only, what sample_changed_since() compares: no bdi stats,
                                          * ext4 journal or barriers read (Superblock.has_bdi_stats
                                          * false, journal, journal_internal and nobarrier -ENODATA);
                                          * devices are classified (btrfs is checked by bdi) */
        SampleGate *gate;                /* not NULL: the bounds and loop_backing above come from it
                                          * (context_prepare(): the configuration, read while the sample
                                          * runs) */
} SampleSources;

/* Whether a sample read from a behind a gate reads what one read from b would (pure): every field but
 * those the gate decides (the bounds, loop_backing). */
bool sample_sources_same_reads(const SampleSources *a, const SampleSources *b);

/* Reads everything and builds the sample. Missing meminfo/debugfs/sysfs facts degrade (recorded in
 * the Sample), they never fail the sample. Completeness: our own root when it is not a mount point,
 * namespaces seen only through a chrooted process, nsfs-held namespaces, and superblocks under sysfs
 * fs/<type>/ that no table shows are reached where possible (unlisted.h) and otherwise make the
 * sample incomplete, each with a reason. */
int sample_load(const SampleSources *src, Sample **ret);

/* Whether now, a sample taken after before, shows a superblock that before's plan cannot account
 * for (review N, N1 and N2): one that is not a pseudo filesystem and whose device number before did
 * not list (mounted since, or given to another filesystem while the tables were read: a stale entry
 * of before masked it), listed under another type, or writable where before found it read-only; or
 * a view that is no longer complete. 1 with a sentence saying which in *ret_why, 0, or -ENOMEM.
 * Superblocks gone since are no change (unmounting synced them). Pure. */
int sample_changed_since(const Sample *before, const Sample *now, char **ret_why);


/* Builds superblock records from a table (takes ownership of *table on success). Device
 * classification and bdi loading go through the callbacks so tests can supply facts. */
typedef struct SampleOps {
        int (*classify)(void *userdata, dev_t dev, const char *fstype, const char *source, DeviceInfo *ret);
        int (*bdi_stats)(void *userdata, const char *bdi_name, BdiStats *ret); /* -ENOENT ok */
        int (*journal)(void *userdata, const char *name); /* Superblock.journal from the device's
                                                           * kernel name; NULL: unknown */
        /* Superblock.journal_internal, the same way; NULL: unknown. */
        int (*journal_internal)(void *userdata, const char *name);
        /* Superblock.nobarrier, by the device's kernel name, which may be NULL (ext4-journal.h);
         * NULL: not asked. */
        int (*nobarrier)(void *userdata, const char *name);
        void *userdata;
} SampleOps;

int sample_build(MountTable **table, const SampleOps *ops, Sample **ret);
