/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Plan: a pure decision with a human-readable reason for every mount: skip pseudo filesystems,
 * read-only mounts, duplicates of an already planned superblock and what an Action=skip rule (or
 * the late pass's scope) leaves out; sync everything else with a timeout. No filesystem is ever
 * skipped as "clean": no filesystem type has an exact test for it (docs/CLEAN-EVIDENCE.md).
 * Ordered by device group, larger estimated work first.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs-type.h"
#include "policy.h"
#include "sample.h"
#include "shared/macro.h"
#include "shared/time-util.h"

typedef enum PlanAction {
        PLAN_SYNC,
        PLAN_SKIP,
        _PLAN_ACTION_MAX,
        _PLAN_ACTION_INVALID = -EINVAL,
} PlanAction;

const char *plan_action_to_string(PlanAction a);

typedef struct PlanEntry {
        const char *mount_point; /* borrowed from the Sample's MountTable */
        const char *fstype;
        const char *source;
        dev_t dev;
        const char *group; /* borrowed from the Superblock */
        size_t sb;         /* index into Sample.sbs */
        PlanAction action;
        char *reason;             /* owned */
        usec_t timeout;           /* per-mount timeout (sync only) */
        uint64_t dirty_bytes;     /* UINT64_MAX unknown */
        usec_t eta;               /* estimated sync time, USEC_INFINITY unknown */
        usec_t eta_work;          /* what the plan's ETA counts of it in its group: eta, or 0 where
                                   * that is counted once already (a partition whose disk's dirty
                                   * data an entry before it counted) or costs a stat() (an overlay
                                   * whose upper layer is synced first); plan_learn() adds to both */
        const char *rule;         /* matching rule name or NULL */
        int mount_id;             /* the mount this entry stands for */
        uint64_t mount_id_unique; /* and its id that is never reused, 0: not known (MountEntry) */
        char *path;               /* what the worker opens: the mount point, or
                                     * /proc/PID/root/<mount point> for another mount namespace */
        uint64_t namespace_ino;   /* 0: our own mount namespace */
        pid_t namespace_pid;      /* its member whose root the path goes through; 0: ours */
        bool uncovered;           /* skipped although it may hold data (Action=skip, late scope): the
                                     * kernel's own sync is then not redundant */
        bool skip_rule;           /* skipped by an Action=skip rule (or an overlay over such a
                                     * layer): no pass syncs it, the kernel's sync is its only chance */
        char *covered_if_path;    /* overlays: their upperdir (owned); the worker skips the overlay's
                                     * own syncfs if this path is on covered_if_dev, the upper layer's
                                     * superblock synced just before in the same group */
        dev_t covered_if_dev;
        FsFlush flush;            /* how the cache FLUSH after syncfs is sent (fs_type_flush():
                                     * vfat, exfat, ext4 without a proven journal, nobarrier, ...) */
        const char *flush_device; /* with flush: the mount's /dev source, tried before
                                     * /dev/block/MAJ:MIN; NULL: only that; borrowed */
        char *rt_flush_device;    /* a device outside the superblock's stack whose cache its sync_fs
                                     * never flushes, fsynced after syncfs too: an xfs's rtdev=
                                     * (fs_type_rt_flush_device()); NULL: none; owned */
        bool primary;             /* the mount through which its superblock is synced */
        bool late_commit;         /* the unit's pass may leave its commit to the late pass
                                     * (defer-commit.h): a local block filesystem the late pass
                                     * syncs again, whose syncfs sends a FLUSH even when clean
                                     * (fs_type_clean_sync_flushes()); DeferCommit=yes */
        uid_t run_as_uid;         /* FUSE without allow_other admits only its owner, not even root:
                                     * the worker syncs it as user_id=/group_id= of the mount, in a
                                     * group of its own ("owner:UID:GID:<group>", so the worker may
                                     * drop privileges for good). (uid_t) -1: as we are */
        gid_t run_as_gid;
        char *own_group;      /* owned storage behind group for such a group of its own */
        bool unlisted;        /* in no mount table (MountEntry.unlisted): path is our root or a
                                     * process's open file; a failure to reach it never means "gone" */
        bool fuse_evidence;   /* late scope left out a plain FUSE superblock of an unprivileged
                                     * server: uncovered, unless evidence.h proves it clean at the end
                                     * of the pass from its bdi (bdi_name) */
        const char *bdi_name; /* borrowed from the Superblock; NULL unknown */
        bool proven_clean;    /* the main pass skips it proven clean (a user's plain FUSE: plan.c): the
                               * unit's record lists it as synced (run_handover_proven_clean()) */
        /* Sync entries (review U, U1 and U2), NULL for unlisted paths: */
        char *walk;     /* the mounts the worker's path walk crosses, its own first, then up to its
                         * namespace's root, as ",ID,ID,...," (plan_mount_ident()); owned */
        char *open_key; /* what a worker stuck on its way to it blocks in later passes:
                         * "open:MAJ:MIN@ID[,ID...]", its mount, the mounts on the way a server can
                         * hold a walk on (FUSE, network, autofs) and, for such a superblock, its other
                         * mounts; NULL: too many, blocks the superblock ("open:MAJ:MIN",
                         * run_job_stuck_key()); owned */
} PlanEntry;

/* A mount's name in PlanEntry.walk and open_key: "u<id>", its id that is never reused, where the
 * table has it; else "o<MAJ>.<MIN>.<old id>.<hash of its mount point>" (old ids are reused once a
 * mount is gone: with the same device and mount point that is the same mount made again). Returns
 * buf. */
#define PLAN_MOUNT_IDENT_MAX 64U
#define PLAN_OPEN_KEY_PREFIX "open:"
#define PLAN_OPEN_KEY_MOUNTS_MAX 8U
const char *plan_mount_ident(const MountEntry *m, char buf[static PLAN_MOUNT_IDENT_MAX]);

typedef struct Plan {
        PlanEntry *entries; /* every mount, sync entries first in execution order */
        size_t n_entries;
        size_t n_sync;
        usec_t eta;      /* USEC_INFINITY unknown */
        usec_t deadline; /* from policy */
        unsigned max_parallel;
        usec_t t_plan; /* phase time (set by caller) */
        bool complete; /* the sample saw every superblock (Sample.complete) */
} Plan;

Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

/* Filters for a restricted pass (the late system-sleep hook): block filesystems (loop devices
 * included), overlays through their upper layer; no FUSE, fuseblk or network filesystem (their
 * servers may be frozen by then: see plan.c is_local_block()). */
typedef enum PlanScope {
        PLAN_SCOPE_ALL,
        PLAN_SCOPE_LOCAL_BLOCK,
} PlanScope;

/* Decides every mount of the sample. Pure. */
/* What past sleep cycles taught about one mount (history.c: over the persistent history): the
 * shortest and the median sync time of its superblock. */
typedef struct PlanLearned {
        const char *mount_point;
        uint64_t namespace_ino; /* 0: our own namespace */
        usec_t min, p50;
} PlanLearned;

/* Adds to each planned sync what the history says (pure): a known ETA gets the mount's shortest
 * past sync time on top (journal commit, cache flush: what no dirty counter shows); an unknown one
 * becomes its median. The plan's ETA is computed again. Returns how many entries learned. */
size_t plan_learn(Plan *plan, const PlanLearned *l, size_t n);

/* Longest processing time first: n works (largest first) over n_slots workers; USEC_INFINITY on
 * -ENOMEM. Pure (plan-eta.c, with plan_learn()). */
usec_t plan_lpt_eta(const usec_t *work, size_t n, unsigned n_slots);

int plan_build(const Sample *sample, const Policy *policy, PlanScope scope, Plan **ret);

/* Whether the sample holds a writable plain FUSE superblock of an unprivileged user whose bdi lists
 * read empty: then Sample.writeback_idle is worth reading, for plan_build() to skip it in the main
 * pass as proven clean when that is 1. Pure. */
bool plan_fuse_proof_wanted(const Sample *sample);
