/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Plan: a pure decision with a human-readable reason for every mount: skip pseudo filesystems,
 * read-only mounts, duplicates of an already planned superblock, proven-clean filesystems (only
 * with positive evidence, per filesystem type, see docs/CLEAN-EVIDENCE.md); otherwise sync with a
 * timeout. Ordered by device group, larger estimated work first.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "baseline.h"
#include "policy.h"
#include "sample.h"
#include "shared/macro.h"
#include "shared/time-util.h"

typedef enum PlanAction {
        PLAN_SYNC,
        PLAN_SKIP,
        _PLAN_ACTION_MAX,
} PlanAction;

const char *plan_action_to_string(PlanAction a);

typedef struct PlanEntry {
        const char *mount_point;    /* borrowed from the Sample's MountTable */
        const char *fstype;
        const char *source;
        dev_t dev;
        const char *group;          /* borrowed from the Superblock */
        size_t sb;                  /* index into Sample.sbs */
        PlanAction action;
        char *reason;               /* owned */
        usec_t timeout;             /* per-mount timeout (sync only) */
        uint64_t dirty_bytes;       /* UINT64_MAX unknown */
        usec_t eta;                 /* estimated sync time, USEC_INFINITY unknown */
        const char *rule;           /* matching rule name or NULL */
        int mount_id;               /* the mount this entry stands for */
        char *path;                 /* what the worker opens: the mount point, or
                                     * /proc/PID/root/<mount point> for another mount namespace */
        uint64_t namespace_ino;     /* 0: our own mount namespace */
        bool uncovered;             /* skipped although it may hold data (clean rule, Action=skip, late
                                     * scope): the kernel's own sync is then not redundant */
        const char *counter_path;   /* borrowed: read by the worker after syncfs (clean baseline) */
        char *covered_if_path;      /* overlays: their upperdir (owned); the worker skips the overlay's
                                     * own syncfs if this path is on covered_if_dev, the upper layer's
                                     * superblock synced just before in the same group */
        dev_t covered_if_dev;
        const char *flush_device;   /* block device node to fsync() after syncfs, for filesystems
                                     * whose sync_fs sends no cache FLUSH (vfat, exfat); borrowed */
        bool primary;               /* the mount through which its superblock is synced */
        bool unlisted;              /* in no mount table (MountEntry.unlisted): path is our root or a
                                     * process's open file; a failure to reach it never means "gone" */
} PlanEntry;

typedef struct Plan {
        PlanEntry *entries;         /* every mount, sync entries first in execution order */
        size_t n_entries;
        size_t n_sync;
        usec_t eta;                 /* USEC_INFINITY unknown */
        usec_t deadline;            /* from policy */
        unsigned max_parallel;
        usec_t t_plan;              /* phase time (set by caller) */
        bool complete;              /* the sample saw every superblock (Sample.complete) */
} Plan;

Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

/* The evidence rule for the superblock's fstype: true only when the facts prove that syncfs would
 * write nothing. *ret_why gets a static description of the evidence, or of what is missing.
 * base may be NULL (no baseline for this superblock). */
bool plan_proven_clean(const Superblock *s, const BaselineEntry *base, const char **ret_why);

/* Filters for a restricted pass (the late system-sleep hook): only local block filesystems whose
 * devices are not backed by files on FUSE/network filesystems. */
typedef enum PlanScope {
        PLAN_SCOPE_ALL,
        PLAN_SCOPE_LOCAL_BLOCK,
} PlanScope;

/* Decides every mount of the sample. baseline may be NULL. Pure. */
int plan_build(const Sample *sample, const Policy *policy, const Baseline *baseline, PlanScope scope,
               Plan **ret);
