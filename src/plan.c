/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <limits.h>

#include "evidence.h"
#include "ext4-journal.h"
#include "fs-type.h"
#include "path-index.h"
#include "plan.h"
#include "shared/parse-util.h"
#include "shared/sort-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"

static const char *const plan_action_table[_PLAN_ACTION_MAX] = {
        [PLAN_SYNC] = "sync",
        [PLAN_SKIP] = "skip",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(plan_action, PlanAction);

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_entries; i++) {
                free(p->entries[i].reason);
                free(p->entries[i].path);
                free(p->entries[i].covered_if_path);
                free(p->entries[i].rt_flush_device);
                free(p->entries[i].own_group);
                free(p->entries[i].walk);
                free(p->entries[i].open_key);
        }
        free(p->entries);
        free(p);
        return NULL;
}

static uint64_t sb_dirty_bytes(const Superblock *s) {
        if (!s->has_bdi_stats || !bdi_stats_has(&s->bdi, BDI_STAT_RECLAIMABLE) ||
            !bdi_stats_has(&s->bdi, BDI_STAT_WRITEBACK))
                return UINT64_MAX;
        return s->bdi.value[BDI_STAT_RECLAIMABLE] + s->bdi.value[BDI_STAT_WRITEBACK];
}

static usec_t sb_eta(const Superblock *s, uint64_t dirty) {
        uint64_t bw;

        if (dirty == UINT64_MAX || !bdi_stats_has(&s->bdi, BDI_STAT_WRITE_BANDWIDTH))
                return USEC_INFINITY;
        bw = s->bdi.value[BDI_STAT_WRITE_BANDWIDTH];
        if (dirty == 0)
                return 0;
        if (bw == 0)
                return USEC_INFINITY;
        if (dirty > UINT64_MAX / USEC_PER_SEC)
                return USEC_INFINITY;
        return dirty * USEC_PER_SEC / bw;
}

/* What the late pass syncs: a block device of its own, or (btrfs) member devices that are. Loop
 * devices are in, wherever their backing file lives: the kernel's own sync would flush them too
 * (ext4_sync_fs() ends with a cache FLUSH even on a clean filesystem, which the loop driver turns
 * into an fsync of the backing file), and where that file is on a FUSE server that systemd froze
 * before the hooks, or a dead NFS server, the kernel's sync never returns, while our worker is
 * bounded, proven stuck and handed over (so the knob can go off over it). The same FLUSH makes
 * the backing file durable, so no order between a loop filesystem and its backing one is needed.
 * FUSE (fuseblk included: its server gets FUSE_SYNCFS) and network filesystems stay out: their
 * servers may be frozen, and evidence.h covers what can be covered of them. */
static bool is_local_block(const Superblock *s) {
        const DeviceInfo *d = &s->device;

        if (s->fs_class != FS_CLASS_BLOCK || !d->classified || (d->classes & (DEVICE_NETWORK | DEVICE_FUSE)))
                return false;
        if (d->is_block)
                return true;
        return d->n_leaves > 0 && !(d->n_leaves == 1 && d->leaves[0] == s->dev);
}

/* A plain FUSE superblock (a /dev/fuse server; not fuseblk, not virtiofs) mounted by an unprivileged
 * user (user_id= not 0): the kernel's own sync can only write back its dirty pages and inodes and
 * wait for that writeback — fuse_sync_fs() sends FUSE_SYNCFS only where fc->sync_fs is set
 * (virtiofs, fuseblk and privileged servers) — and each of those shows in evidence.h's facts. */
static bool fuse_evidence_applies(const Sample *sample, const Superblock *s, const MountEntry *m) {
        _cleanup_free_ char *u = NULL;
        unsigned uid;

        /* ... on a kernel the rule was checked on (review AZ, AZ-3) */
        if (!sample->fuse_kernel_checked || !s->device.bdi_name || !s->fstype || !m->fs_options)
                return false;
        if (fs_type_fuse(s->fstype) != FS_FUSE_PLAIN)
                return false;
        if (options_get(m->fs_options, "user_id", &u) <= 0 || safe_atou(u, &uid) < 0)
                return false;
        return uid != 0 && uid != UINT_MAX;
}

/* Such a superblock whose bdi's writeback lists read empty in the sample: proven clean once the
 * system's writeback count, refreshed after them, reads none too (Sample.writeback_idle). Its syncfs
 * would then write back no page, wait for none and send its server nothing. */
static bool fuse_lists_clean(const Sample *sample, const Superblock *s, const MountEntry *m) {
        return !s->all_read_only && fuse_evidence_applies(sample, s, m) && s->has_bdi_stats &&
               evidence_bdi_lists_empty(&s->bdi, 0, NULL);
}

static bool fuse_proven_clean(const Sample *sample, const Superblock *s, const MountEntry *m) {
        return fuse_lists_clean(sample, s, m) && sample->writeback_idle == 1;
}

bool plan_fuse_proof_wanted(const Sample *sample) {
        for (size_t k = 0; k < sample->n_sbs; k++) {
                const Superblock *s = &sample->sbs[k];

                if (s->n_mounts > 0 && fuse_lists_clean(sample, s, &sample->table->entries[s->mounts[0]]))
                        return true;
        }
        return false;
}

typedef struct SbDecision {
        PlanAction action;
        const char *group;     /* device group to run in, NULL: the superblock's own */
        char *covered_if_path; /* overlays: upperdir, see PlanEntry */
        dev_t covered_if_dev;
        bool uncovered;     /* skipped, yet possibly holding data: see PlanEntry */
        bool skip_rule;     /* see PlanEntry */
        bool fuse_evidence; /* see PlanEntry */
        bool proven_clean;  /* see PlanEntry */
        bool eta_elsewhere; /* plan_group() counted its work as nothing: see PlanEntry.eta_work */
        char *reason;
        usec_t timeout;
        const char *rule;
        size_t primary; /* table index of the mount to open */
        bool decided;
} SbDecision;

/* The parent of mount idx in its own namespace (Sample.parent_of_mount, checked): -1 for a
 * namespace's root, a parent not in the table or of another namespace, and unlisted entries, whose
 * path is not a walk through mounts. */
static ssize_t parent_mount(const Sample *sample, size_t idx) {
        ssize_t p = sample->parent_of_mount ? sample->parent_of_mount[idx] : -1;

        if (p < 0 || (size_t) p == idx || sample->table->entries[idx].unlisted ||
            sample->table->entries[p].unlisted || sample->ns_of_mount[p] != sample->ns_of_mount[idx])
                return -1;
        return p;
}

/* Whether a path walk through a mount of s may wait on a server (fs_walk_may_wait(); an overlay: see
 * mount_path_local()). */
static bool walk_may_wait(const Superblock *s) {
        return fs_walk_may_wait(s->fs_class, s->fstype);
}

/* Whether every mount above mount idx, up to its namespace's root (parent_mount()), is a
 * local block or pseudo filesystem: no FUSE, network, autofs nor overlay (whose layers may be on a
 * server) on the way, nothing a server could hold the walk to it on. */
static bool mount_path_local(const Sample *sample, size_t idx) {
        if (sample->table->entries[idx].unlisted)
                return false; /* reached through a process's file: its path is not a walk we know */
        for (ssize_t p, n = 0; (p = parent_mount(sample, idx)) >= 0 && (size_t) n < sample->table->n_entries;
             n++) {
                const Superblock *a;

                idx = (size_t) p;
                a = &sample->sbs[sample->sb_of_mount[idx]];
                if (walk_may_wait(a) || a->fs_class == FS_CLASS_OVERLAY)
                        return false;
        }
        return true;
}

/* Through which mount a superblock is synced: the first one that is not hidden under another mount,
 * preferring writable mounts; its first mount when all are hidden. When the path to that one crosses
 * a filesystem a server answers for, or an overlay (review U, U1: a mount below a hung FUSE, NFS or
 * autofs directory holds the worker in its walk), another mount of the same namespace whose path
 * leaves no local filesystem, writable first: never one of another namespace (review W, W2 and W5:
 * its user namespace, overlay layers and rules are that namespace's). */
static size_t choose_primary(const Sample *sample, const Superblock *s) {
        size_t first = s->mounts[0];
        bool found = false;

        for (int pass = 0; pass < 2 && !found; pass++)
                for (size_t i = 0; i < s->n_mounts && !found; i++) {
                        size_t idx = s->mounts[i];

                        if (sample->overmounted[idx] || (pass == 0 && sample->table->entries[idx].read_only))
                                continue;
                        first = idx;
                        found = true;
                }
        if (!found || mount_path_local(sample, first))
                return first;
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < s->n_mounts; i++) {
                        size_t idx = s->mounts[i];

                        if (sample->overmounted[idx] ||
                            sample->ns_of_mount[idx] != sample->ns_of_mount[first])
                                continue;
                        if (pass == 0 && sample->table->entries[idx].read_only)
                                continue;
                        if (mount_path_local(sample, idx))
                                return idx;
                }
        return first;
}

/* An overlay superblock k (no Action=skip rule): left undecided, to follow the superblock of its
 * upperdir, when that is another one in the table; decided here otherwise. */
static int decide_overlay(const Sample *sample, const PathIndex *pi, PlanScope scope, size_t k,
                          const MountEntry *m, SbDecision *d) {
        _cleanup_free_ char *upper = NULL;
        ssize_t u;
        int r;

        r = options_get(m->fs_options, "upperdir", &upper);
        if (r < 0)
                return r;
        if (r == 0) {
                d->action = PLAN_SKIP;
                r = asprintf(&d->reason, "overlay without upper layer: nothing to write");
                return r < 0 ? -ENOMEM : 0;
        }
        u = sb_of_path(pi, upper, sample->ns_of_mount[d->primary]);
        if (u >= 0 && (size_t) u != k && sample->sbs[u].fs_class != FS_CLASS_OVERLAY) {
                /* Decided by plan_decide_overlays() once the upper superblock is decided. */
                d->decided = false;
                d->primary = (size_t) u;
                d->covered_if_path = TAKE_PTR(upper);
                return 0;
        }
        if (scope == PLAN_SCOPE_LOCAL_BLOCK) {
                /* Its upper layer could be anywhere, FUSE included. */
                d->action = PLAN_SKIP;
                d->uncovered = true;
                r = asprintf(&d->reason, "late pass: overlay whose upper layer is not in the mount table");
                return r < 0 ? -ENOMEM : 0;
        }
        d->action = PLAN_SYNC;
        r = asprintf(&d->reason, "overlay: upper layer not found in the mount table");
        return r < 0 ? -ENOMEM : 0;
}

/* A rule decides for the mounts it matches: a superblock is skipped only when a skip rule matches
 * every one of its mounts in the namespace of its primary mount (paths are matched as that
 * namespace names them: a container's view of the same disk under another path does not undo a
 * host's rule). Returns true with the rule of the first mount none matches (NULL: no rule matches
 * it) in *ret_rule; false when skip rules match them all. */
static bool skip_rule_misses(const Sample *sample, const Policy *policy, const Superblock *s, size_t primary,
                             const Rule **ret_rule) {
        unsigned ns = sample->ns_of_mount[primary];

        /* Ours, whenever it is mounted in our namespace at all (the primary may be another
         * namespace's mount when all of ours are read-only or covered). */
        for (size_t i = 0; i < s->n_mounts && ns != 0; i++)
                if (sample->ns_of_mount[s->mounts[i]] == 0)
                        ns = 0;
        for (size_t i = 0; i < s->n_mounts; i++) {
                const MountEntry *o = &sample->table->entries[s->mounts[i]];
                const Rule *r;

                if (sample->ns_of_mount[s->mounts[i]] != ns)
                        continue;
                r = policy_match(policy, o->mount_point, s->fstype, s->device.classes,
                                 device_info_unknown_classes(&s->device), NULL);

                if (!r || r->action != RULE_ACTION_SKIP) {
                        *ret_rule = r;
                        return true;
                }
        }
        return false;
}

static int decide_sb(const Sample *sample, const PathIndex *pi, const Policy *policy, PlanScope scope,
                     size_t k, SbDecision *d) {
        const Superblock *s = &sample->sbs[k];
        const MountTable *t = sample->table;
        const MountEntry *m;
        const Rule *rule, *unsure = NULL;
        RuleAction ra = RULE_ACTION_AUTO;
        int r;

        d->primary = choose_primary(sample, s);
        m = &t->entries[d->primary];
        d->timeout = policy->mount_timeout;
        d->decided = true;

        if (s->fs_class == FS_CLASS_PSEUDO) {
                d->action = PLAN_SKIP;
                r = asprintf(&d->reason, "pseudo filesystem (%s): no backing store", s->fstype);
                return r < 0 ? -ENOMEM : 0;
        }
        if (s->all_read_only) {
                d->action = PLAN_SKIP;
                r = asprintf(&d->reason, "read-only superblock");
                return r < 0 ? -ENOMEM : 0;
        }
        if (scope == PLAN_SCOPE_LOCAL_BLOCK && !is_local_block(s) && s->fs_class != FS_CLASS_OVERLAY) {
                /* FUSE and network servers may be frozen by now: the late pass leaves them to the
                 * main pass. An overlay follows its upper layer (below). */
                d->action = PLAN_SKIP;
                d->uncovered = true;
                d->fuse_evidence = fuse_evidence_applies(sample, s, m);
                r = asprintf(&d->reason, "late pass: not a local block filesystem");
                return r < 0 ? -ENOMEM : 0;
        }

        if (fs_type_fuse(s->fstype) != FS_FUSE_NONE && sample->ns_of_mount[d->primary] != 0 &&
            sample->namespaces[sample->ns_of_mount[d->primary] - 1].foreign_userns) {
                /* Review N, N3: its server answers only the processes of its own user namespace (a
                 * rootless container's fuse-overlayfs or sshfs): root outside is refused (EACCES),
                 * with allow_other too. Left to the kernel's sync, as a skip rule leaves a mount,
                 * rather than an error at every sleep. */
                d->action = PLAN_SKIP;
                d->uncovered = d->skip_rule = true;
                r = asprintf(&d->reason, "FUSE mounted in a user namespace (a rootless container): only its "
                                         "processes may enter it; left to the kernel's sync");
                return r < 0 ? -ENOMEM : 0;
        }

        rule = policy_match(policy, m->mount_point, s->fstype, s->device.classes,
                            device_info_unknown_classes(&s->device), &unsure);
        if (rule) {
                ra = rule->action;
                d->rule = rule->name;
                if (rule->mount_timeout != USEC_INFINITY)
                        d->timeout = rule->mount_timeout;
        }

        if (ra == RULE_ACTION_SKIP && skip_rule_misses(sample, policy, s, d->primary, &rule)) {
                /* another mount of it (bind mount, subvolume) is not skipped: that one decides */
                ra = rule ? rule->action : RULE_ACTION_AUTO;
                d->rule = rule ? rule->name : NULL;
                d->timeout = rule && rule->mount_timeout != USEC_INFINITY ? rule->mount_timeout
                                                                          : policy->mount_timeout;
        }
        if (ra == RULE_ACTION_SKIP) {
                d->action = PLAN_SKIP;
                d->uncovered = d->skip_rule = true;
                r = asprintf(&d->reason, "rule '%s': Action=skip", rule->name);
                return r < 0 ? -ENOMEM : 0;
        }

        if (s->fs_class == FS_CLASS_OVERLAY)
                return decide_overlay(sample, pi, scope, k, m, d);

        if (ra == RULE_ACTION_SYNC) {
                d->action = PLAN_SYNC;
                r = unsure == rule ? asprintf(&d->reason,
                                              "rule '%s': Action=sync (its Device= counted as matching: the "
                                              "device's classes could not all be read)",
                                              rule->name)
                                   : asprintf(&d->reason, "rule '%s': Action=sync", rule->name);
                return r < 0 ? -ENOMEM : 0;
        }
        if (unsure && unsure->disabled && !d->rule) {
                /* policy_match(): a rule that cannot be understood may have matched; no later rule
                 * may skip in its place. */
                d->action = PLAN_SYNC;
                r = asprintf(
                        &d->reason,
                        "rule '%s' is disabled and may match this mount: a later skip rule does not apply",
                        unsure->name);
                return r < 0 ? -ENOMEM : 0;
        }

        /* A plain FUSE mount of a user proven clean (fuse_proven_clean()): the main pass leaves it
         * untouched, so that a server that no longer answers (an sshfs whose network is gone) holds
         * no worker; the late pass looks again before the kernel's sync may go off
         * (docs/CLEAN-EVIDENCE.md). */
        if (scope == PLAN_SCOPE_ALL && fuse_proven_clean(sample, s, m)) {
                d->action = PLAN_SKIP;
                d->proven_clean = true;
                r = asprintf(&d->reason,
                             "%s%s%sFUSE, proven clean: no dirty inode on its bdi %s, no page under "
                             "writeback; its server is not asked",
                             d->rule ? "rule '" : "", d->rule ?: "", d->rule ? "': Action=auto; " : "",
                             s->device.bdi_name);
                return r < 0 ? -ENOMEM : 0;
        }

        /* auto: no filesystem type has an exact test for "syncfs would write nothing" (see
         * docs/CLEAN-EVIDENCE.md): every row of fs-type.c has the clean rule "none"
         * (fs_type_clean_rule()), so whatever may hold data is synced, whatever SkipClean= says.
         * (FUSE above is no such test: its sync is only the writeback those facts count.) */
        d->action = PLAN_SYNC;
        if (!d->rule && device_info_unknown_classes(&s->device) != 0) {
                /* A skip rule that matches should the classes not read be there: passed over
                 * (policy_match()), said, as a rotational disk whose queue/rotational gave no answer
                 * in time (device-rotational.h) is not taken for one that is not. */
                const Rule *passed = policy_match(policy, m->mount_point, s->fstype,
                                                  s->device.classes | device_info_unknown_classes(&s->device),
                                                  0, NULL);

                if (passed && passed->action == RULE_ACTION_SKIP) {
                        r = asprintf(&d->reason,
                                     "rule '%s': Action=skip not applied (its Device= not proven: the "
                                     "device's classes could not all be read); writable: may hold unsynced "
                                     "data",
                                     passed->name);
                        return r < 0 ? -ENOMEM : 0;
                }
        }
        {
                uint64_t dirty = sb_dirty_bytes(s);
                _cleanup_free_ char *by_rule = NULL;
                char span[FORMAT_TIMESPAN_MAX];

                /* A rule that only sets the timeout, or says auto, is named too, as in --json
                 * (review Q, L7). */
                r = 0;
                if (d->rule && d->timeout != policy->mount_timeout)
                        r = asprintf(&by_rule, "rule '%s': MountTimeoutSec=%s; ", d->rule,
                                     format_timespan(span, sizeof span, d->timeout));
                else if (d->rule)
                        r = asprintf(&by_rule, "rule '%s': Action=auto; ", d->rule);
                if (r < 0)
                        return -ENOMEM;
                if (dirty != UINT64_MAX && dirty > 0)
                        r = asprintf(&d->reason,
                                     "%swritable: may hold unsynced data; ~%" PRIu64
                                     " bytes dirty or under writeback on bdi %s",
                                     by_rule ?: "", dirty, s->device.bdi_name);
                else
                        r = asprintf(&d->reason, "%swritable: may hold unsynced data", by_rule ?: "");
        }
        return r < 0 ? -ENOMEM : 0;
}

static bool bdi_seen_before(const Sample *sample, const size_t *sbs, size_t n, const Superblock *s) {
        if (!s->device.bdi_name)
                return false;
        for (size_t i = 0; i < n; i++)
                if (streq(sample->sbs[sbs[i]].group, s->group) &&
                    streq_ptr(sample->sbs[sbs[i]].device.bdi_name, s->device.bdi_name))
                        return true;
        return false;
}

static int entry_set_path(const Sample *sample, size_t idx, PlanEntry *e) {
        unsigned ns = sample->ns_of_mount[idx];
        const MountNamespace *n;

        if (ns == 0) {
                e->path = strdup(e->mount_point);
                return e->path ? 0 : -ENOMEM;
        }
        n = &sample->namespaces[ns - 1];
        e->namespace_ino = n->ino;
        e->namespace_pid = n->pid;
        if (asprintf(&e->path, "/proc/%d/root%s", n->pid, streq(e->mount_point, "/") ? "" : e->mount_point) <
            0) {
                e->path = NULL;
                return -ENOMEM;
        }
        return 0;
}

static void entry_init(PlanEntry *e, const Superblock *s, size_t k, const MountEntry *m, const SbDecision *d,
                       PlanAction action) {
        *e = (PlanEntry) {
                .mount_point = m->mount_point,
                .fstype = s->fstype,
                .source = m->source,
                .dev = s->dev,
                .group = s->group,
                .sb = k,
                .action = action,
                .dirty_bytes = sb_dirty_bytes(s),
                .rule = d->rule,
                .mount_id = m->mount_id,
                .mount_id_unique = m->mount_id_unique,
                .uncovered = d->uncovered,
                .skip_rule = d->skip_rule,
                .fuse_evidence = d->fuse_evidence,
                .bdi_name = s->device.bdi_name,
                .proven_clean = d->proven_clean,
                .run_as_uid = (uid_t) -1,
                .run_as_gid = (gid_t) -1,
                .unlisted = m->unlisted,
        };
}

/* FUSE without allow_other admits only the user who mounted it: the kernel (fs/fuse/dir.c
 * fuse_allow_current_process → fuse_permissible_uidgid) wants uid, euid and suid equal to user_id=
 * and gid, egid and sgid equal to group_id=, and refuses root itself (EACCES). gvfsd-fuse, the
 * document portal and a user's sshfs mount that way. Returns 1 with the owner when the mount needs
 * one that is not root, 0 when anyone may enter, it is owned by root:root, its ids are missing or do
 * not parse (then it is opened as we are), or it is not FUSE; -ENOMEM. */
static int fuse_owner(const char *fstype, const char *opts, uid_t *ret_uid, gid_t *ret_gid) {
        _cleanup_free_ char *u = NULL, *g = NULL;
        unsigned uid, gid;
        int r;

        if (fs_type_fuse(fstype) == FS_FUSE_NONE)
                return 0;
        if (!opts || options_has(opts, "allow_other"))
                return 0;
        r = options_get(opts, "user_id", &u);
        if (r <= 0)
                return r;
        r = options_get(opts, "group_id", &g);
        if (r <= 0)
                return r;
        if (safe_atou(u, &uid) < 0 || safe_atou(g, &gid) < 0 || uid == UINT_MAX || gid == UINT_MAX)
                return 0;
        if (uid == 0 && gid == 0)
                return 0;
        *ret_uid = (uid_t) uid;
        *ret_gid = (gid_t) gid;
        return 1;
}

typedef struct GroupWork {
        const char *group;
        usec_t work; /* sum of known ETAs; unknown counts as 0 for ordering */
        uint64_t dirty;
        size_t first; /* first superblock index (stable tie-break) */
} GroupWork;

static int cmp_group_work(const GroupWork *x, const GroupWork *y) {
        if (x->work != y->work)
                return x->work > y->work ? -1 : 1;
        if (x->dirty != y->dirty)
                return x->dirty > y->dirty ? -1 : 1;
        return CMP(x->first, y->first);
}

/* The state plan_build() passes from phase to phase. */
typedef struct PlanBuild {
        const Sample *sample;
        const Policy *policy;
        PlanScope scope;
        PathIndex pi;
        SbDecision *dec;   /* one per superblock */
        GroupWork *groups; /* device groups with something to sync, in execution order */
        size_t n_groups;
        size_t *sync_sbs; /* superblocks to sync, in superblock order */
        size_t n_sync_sbs;
        bool eta_known; /* every superblock to sync has a known ETA */
        Plan *plan;
        size_t pos; /* entries of plan filled so far */
} PlanBuild;

static void plan_build_done(PlanBuild *b) {
        path_index_done(&b->pi);
        for (size_t k = 0; b->dec && k < b->sample->n_sbs; k++) {
                free(b->dec[k].reason);
                free(b->dec[k].covered_if_path);
        }
        free(b->dec);
        free(b->groups);
        free(b->sync_sbs);
        /* plan->n_entries tells plan_free how many reasons to release. */
        if (b->plan)
                b->plan->n_entries = b->pos;
        plan_free(b->plan);
}

const char *plan_mount_ident(const MountEntry *m, char buf[static PLAN_MOUNT_IDENT_MAX]) {
        uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a */

        if (m->mount_id_unique != 0) {
                snprintf(buf, PLAN_MOUNT_IDENT_MAX, "u%" PRIu64, m->mount_id_unique);
                return buf;
        }
        for (const char *c = m->mount_point; c && *c; c++) {
                h ^= (unsigned char) *c;
                h *= UINT64_C(0x100000001b3);
        }
        snprintf(buf, PLAN_MOUNT_IDENT_MAX, "o%u.%u.%d.%016" PRIx64, major(m->dev), minor(m->dev),
                 m->mount_id, h);
        return buf;
}

/* A list of mount names (plan_mount_ident()), joined by sep. */
typedef struct IdentList {
        char (*ids)[PLAN_MOUNT_IDENT_MAX];
        size_t n, max;
} IdentList;

static void ident_list_add(IdentList *l, const MountEntry *m) {
        if (l->n < l->max)
                (void) plan_mount_ident(m, l->ids[l->n]);
        l->n++; /* counted beyond max: the caller sees it overflow */
}

static char *ident_list_join(const IdentList *l, const char *prefix, const char *sep, const char *suffix) {
        size_t len = strlen(prefix) + strlen(suffix) + 1;
        char *s, *p;

        for (size_t i = 0; i < l->n; i++)
                len += strlen(l->ids[i]) + strlen(sep);
        s = p = malloc(len);
        if (!s)
                return NULL;
        p = stpcpy(p, prefix);
        for (size_t i = 0; i < l->n; i++) {
                if (i > 0)
                        p = stpcpy(p, sep);
                p = stpcpy(p, l->ids[i]);
        }
        stpcpy(p, suffix);
        return s;
}

/* PlanEntry.walk and open_key of sync entry e, whose mount is table entry idx of superblock s
 * (review U, U1 and U2). The key names the mount and where its worker is most likely stuck: when s
 * itself is a filesystem a server answers for (walk_may_wait()), its own server, so its other mounts
 * too; else the nearest mount above it a server can hold a walk on, the one a local filesystem below
 * a dead FUSE or NFS directory waits behind. Not every such mount above (review W, W1): an autofs
 * /net above a dead NFS share, or an automounted /home above a user's dead sshfs, would then block
 * the healthy shares and disks below them for the rest of the boot. At most
 * PLAN_OPEN_KEY_MOUNTS_MAX of them, else no key (the superblock's: run_job_stuck_key()). An overlay
 * on the way is not named, though mount_path_local() avoids it: a container's root is one, and its
 * layers are rarely on a server; named, it would block every mount of the container. Unlisted
 * mounts get neither. */
static int entry_set_walk(const PlanBuild *b, const Superblock *s, size_t idx, PlanEntry *e) {
        const Sample *sample = b->sample;
        const MountTable *t = sample->table;
        size_t depth = 1;
        _cleanup_free_ char(*walk_ids)[PLAN_MOUNT_IDENT_MAX] = NULL;
        char key_ids[PLAN_OPEN_KEY_MOUNTS_MAX][PLAN_MOUNT_IDENT_MAX], prefix[64];
        IdentList walk, key = { .ids = key_ids, .max = PLAN_OPEN_KEY_MOUNTS_MAX };
        bool named;

        if (t->entries[idx].unlisted)
                return 0;
        for (ssize_t x = (ssize_t) idx; (x = parent_mount(sample, (size_t) x)) >= 0 && depth <= t->n_entries;)
                depth++;
        walk_ids = calloc(depth, PLAN_MOUNT_IDENT_MAX);
        if (!walk_ids)
                return -ENOMEM;
        walk = (IdentList) { .ids = walk_ids, .max = depth };

        ident_list_add(&walk, &t->entries[idx]);
        ident_list_add(&key, &t->entries[idx]);
        named = walk_may_wait(s); /* its own server: no mount above is named */
        for (ssize_t x = (ssize_t) idx, n = 1;
             (x = parent_mount(sample, (size_t) x)) >= 0 && (size_t) n < depth; n++) {
                ident_list_add(&walk, &t->entries[x]);
                if (!named && walk_may_wait(&sample->sbs[sample->sb_of_mount[x]])) {
                        ident_list_add(&key, &t->entries[x]);
                        named = true;
                }
        }
        for (size_t i = 0; walk_may_wait(s) && i < s->n_mounts; i++)
                if (s->mounts[i] != idx && !t->entries[s->mounts[i]].unlisted)
                        ident_list_add(&key, &t->entries[s->mounts[i]]);

        e->walk = ident_list_join(&walk, ",", ",", ",");
        if (!e->walk)
                return -ENOMEM;
        if (key.n > key.max)
                return 0;
        snprintf(prefix, sizeof prefix, PLAN_OPEN_KEY_PREFIX "%u:%u@", major(s->dev), minor(s->dev));
        e->open_key = ident_list_join(&key, prefix, ",", "");
        return e->open_key ? 0 : -ENOMEM;
}

/* Phase 1: a decision for every superblock (overlays over another superblock stay undecided). */
static int plan_decide(PlanBuild *b) {
        const MountTable *t = b->sample->table;
        int r;

        for (size_t k = 0; k < b->sample->n_sbs; k++) {
                SbDecision *d = &b->dec[k];
                const MountEntry *m;
                char *x;

                r = decide_sb(b->sample, &b->pi, b->policy, b->scope, k, d);
                if (r < 0)
                        return r;
                m = &t->entries[d->primary];
                if (!d->decided || !m->unlisted || !d->reason)
                        continue;
                /* Say how a superblock no mount table shows is reached. */
                if (asprintf(&x, "%s: %s",
                             streq(m->mount_point, "/")
                                     ? "our root, not a mount point in our table (restricted view)"
                                     : "in no mount table, reached through a process's open file",
                             d->reason) < 0)
                        return -ENOMEM;
                free(d->reason);
                d->reason = x;
        }
        return 0;
}

/* Phase 2: overlays follow their upper layer's superblock. */
static int plan_decide_overlays(PlanBuild *b) {
        const Sample *sample = b->sample;
        const MountTable *t = sample->table;
        int r;

        for (size_t k = 0; k < sample->n_sbs; k++) {
                SbDecision *d = &b->dec[k], *u;
                size_t upper_sb = d->primary;

                if (d->decided)
                        continue;
                u = &b->dec[upper_sb];
                d->primary = sample->sbs[k].mounts[0];
                d->decided = true;
                if (u->action == PLAN_SYNC) {
                        /* Its upper layer's superblock is synced first, in the same worker; the
                         * worker then only checks that upperdir really lies on it (the option is a
                         * path string: the upper may have been moved or lazily unmounted), and
                         * syncs the overlay itself otherwise. */
                        const Superblock *us = &sample->sbs[upper_sb];
                        d->action = PLAN_SYNC;
                        d->group = us->group;
                        d->covered_if_dev = us->dev;
                        r = asprintf(&d->reason,
                                     "overlay: upper layer on %s (%u:%u) is synced first, "
                                     "the overlay itself only if its upperdir is not there",
                                     t->entries[u->primary].mount_point, major(us->dev), minor(us->dev));
                } else {
                        d->action = PLAN_SKIP;
                        d->uncovered = u->uncovered;
                        d->skip_rule = u->skip_rule;
                        /* Its upper proven clean (a user's plain FUSE): the overlay's syncfs is that
                         * of its upper, so the unit's record lists it too, as when the unit's pass
                         * synced both (run_handover_proven_clean(); review AZ). */
                        d->proven_clean = u->proven_clean;
                        d->covered_if_path = mfree(d->covered_if_path);
                        r = asprintf(&d->reason, "overlay: upper layer skipped (%s)", u->reason);
                }
                if (r < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Phase 3: the superblocks to sync, grouped by device group, groups ordered by estimated work,
 * largest first. */
static void plan_group(PlanBuild *b) {
        const Sample *sample = b->sample;

        b->eta_known = true;
        for (size_t k = 0; k < sample->n_sbs; k++) {
                const Superblock *s = &sample->sbs[k];
                SbDecision *d = &b->dec[k];
                uint64_t dirty;
                usec_t eta;
                size_t g;

                if (d->action != PLAN_SYNC)
                        continue;
                if (!d->group)
                        d->group = s->group;
                b->sync_sbs[b->n_sync_sbs++] = k;
                dirty = sb_dirty_bytes(s);
                eta = sb_eta(s, dirty);
                for (g = 0; g < b->n_groups; g++)
                        if (streq(b->groups[g].group, d->group))
                                break;
                if (g == b->n_groups)
                        b->groups[b->n_groups++] = (GroupWork) { .group = d->group, .first = k };
                /* Partitions of one disk share its bdi: count its dirty data once per group. An
                 * overlay costs a stat() when its upper layer was synced. */
                d->eta_elsewhere = d->covered_if_path ||
                                   bdi_seen_before(sample, b->sync_sbs, b->n_sync_sbs - 1, s);
                if (d->eta_elsewhere)
                        continue;
                if (eta != USEC_INFINITY)
                        b->groups[g].work += eta;
                else
                        b->eta_known = false;
                if (dirty != UINT64_MAX)
                        b->groups[g].dirty += dirty;
        }
        typesafe_qsort(b->groups, b->n_groups, cmp_group_work);
}

/* A FUSE mount without allow_other is synced by its owner, in a group of its own (the worker
 * becomes the owner for good). */
static int sync_entry_set_owner(PlanEntry *e, const Superblock *s, const MountEntry *m) {
        char *reason = NULL;
        int r;

        r = fuse_owner(s->fstype, m->fs_options, &e->run_as_uid, &e->run_as_gid);
        if (r <= 0)
                return r;
        if (asprintf(&e->own_group, "owner:%u:%u:%s", (unsigned) e->run_as_uid, (unsigned) e->run_as_gid,
                     e->group) < 0) {
                e->own_group = NULL;
                return -ENOMEM;
        }
        if (asprintf(&reason, "%s; as its owner %u:%u (FUSE without allow_other)", e->reason,
                     (unsigned) e->run_as_uid, (unsigned) e->run_as_gid) < 0)
                return -ENOMEM;
        e->group = e->own_group;
        free(e->reason);
        e->reason = reason;
        return 0;
}

/* Whether the late pass can be the first to write a superblock's data: it reaches the device as
 * well as the unit's pass did. Not so for a stack with a disk a process or the network serves
 * (DeviceInfo.served_remotely: nbd, iSCSI, ...), nor with more than one loop device, nor for an ext4
 * whose journal is not proven to be in it (ext4-journal.h: a journal device is in no stack). A loop
 * device writes through its backing file, so it needs that file's filesystem to be reachable the same way:
 * memory, or a block filesystem that passes this test itself (depth bounds the recursion); not a
 * network filesystem, an overlay, nor FUSE — whoever mounted it, its server may run in a user's
 * session (sudo keeps the session's scope), which systemd 256 and later freeze before the hooks.
 * The file is placed by the st_dev the loop driver answers (Superblock.loop_backing_dev), among the
 * superblocks of the sample; not by the path it reports, a name that may resolve elsewhere here (the
 * loop attached in another namespace, or the mount under the path changed since). A file the driver
 * did not place, whose filesystem no scanned table shows, or that is a device node (its writes go to
 * that device, in no stack walked here), is not reachable. Nor is a filesystem with a device outside
 * its stack: an xfs with logdev= or rtdev=. */
static bool late_reachable(const PlanBuild *b, const Superblock *s, unsigned depth) {
        const DeviceInfo *d = &s->device;
        const Superblock *bs = NULL;
        const char *opts = s->n_mounts > 0 ? b->sample->table->entries[s->mounts[0]].fs_options : NULL;

        if (d->served_remotely || d->n_loops > 1)
                return false;
        if (options_get(opts, "logdev", NULL) > 0 || options_get(opts, "rtdev", NULL) > 0)
                return false;
        if (fs_type_lookup(s->fstype)->flush_unless_journal &&
            !ext4_journal_on_own_device(s->journal, s->journal_internal))
                return false;
        if (!(d->classes & DEVICE_LOOP))
                return true;
        if (depth == 0 || s->loop_backing_error < 0 || s->loop_backing_rdev != 0)
                return false;
        for (size_t k = 0; k < b->sample->n_sbs && !bs; k++)
                if (b->sample->sbs[k].dev == s->loop_backing_dev)
                        bs = &b->sample->sbs[k];
        if (!bs || bs == s)
                return false;
        switch (bs->fs_class) {
        case FS_CLASS_PSEUDO: /* memory; not proc, sysfs, ... */
                return STR_IN_SET(bs->fstype, "tmpfs", "ramfs", "devtmpfs");
        case FS_CLASS_BLOCK:
                return is_local_block(bs) && late_reachable(b, bs, depth - 1);
        default:
                return false;
        }
}

/* The entry through which superblock k is synced. */
static int plan_add_sync_entry(PlanBuild *b, size_t k) {
        const Superblock *s = &b->sample->sbs[k];
        SbDecision *d = &b->dec[k];
        const MountEntry *m = &b->sample->table->entries[d->primary];
        PlanEntry *e = &b->plan->entries[b->pos++];
        int r;

        entry_init(e, s, k, m, d, PLAN_SYNC);
        e->group = d->group;
        e->covered_if_path = TAKE_PTR(d->covered_if_path);
        e->covered_if_dev = d->covered_if_dev;
        e->reason = TAKE_PTR(d->reason);
        e->timeout = d->timeout;
        e->primary = true;
        e->eta = sb_eta(s, e->dirty_bytes);
        e->eta_work = d->eta_elsewhere ? 0 : e->eta;
        /* The worker checks the node against the superblock's device: a btrfs (0:N, no node of its
         * own) mounted nobarrier ends in ENODEV, never in a flush of one member of several. */
        e->flush = fs_type_flush(s->fstype, s->journal, m->fs_options);
        /* Barriers off by the superblock's own defaults, which the mount table does not show
         * (ext4-journal.h), or not known because proc's options file could not be read: its
         * sync_fs may send no FLUSH, the device gets one. -ENODATA: not asked (no such fact). */
        if (fs_type_lookup(s->fstype)->flush_unless_journal && s->nobarrier != 0 && s->nobarrier != -ENODATA)
                e->flush = FS_FLUSH_DEVICE;
        if (e->flush != FS_FLUSH_NONE && m->source && startswith(m->source, "/dev/"))
                e->flush_device = m->source;
        r = fs_type_rt_flush_device(s->fstype, m->fs_options, &e->rt_flush_device);
        if (r < 0)
                return r;
        r = entry_set_path(b->sample, d->primary, e);
        if (r < 0)
                return r;
        r = entry_set_walk(b, s, d->primary, e);
        if (r < 0)
                return r;
        r = sync_entry_set_owner(e, s, m);
        /* The late pass syncs it again, and that costs a FLUSH however clean it is by then. Only
         * mounts of our own table: the late pass runs in the same namespace. */
        e->late_commit = b->scope == PLAN_SCOPE_ALL && b->policy->defer_commit && is_local_block(s) &&
                         e->namespace_ino == 0 && !e->unlisted && e->run_as_uid == (uid_t) -1 &&
                         fs_type_clean_sync_flushes(s->fstype, e->flush) && late_reachable(b, s, 4);
        return r;
}

/* Phase 4: sync entries, in execution order: group by group, larger superblocks first. */
static int plan_order_sync(PlanBuild *b) {
        PlanEntry *entries = b->plan->entries;
        int r;

        for (size_t g = 0; g < b->n_groups; g++) {
                size_t start = b->pos;

                for (size_t i = 0; i < b->n_sync_sbs; i++) {
                        size_t k = b->sync_sbs[i];

                        if (!streq(b->dec[k].group, b->groups[g].group))
                                continue;
                        r = plan_add_sync_entry(b, k);
                        if (r < 0)
                                return r;
                }
                /* Within a group: larger known work first (insertion sort, groups are small). */
                for (size_t i = start + 1; i < b->pos; i++)
                        for (size_t j = i;
                             j > start && entries[j - 1].dirty_bytes + 1 < entries[j].dirty_bytes + 1; j--) {
                                PlanEntry tmp = entries[j];
                                entries[j] = entries[j - 1];
                                entries[j - 1] = tmp;
                        }
        }
        b->plan->n_sync = b->pos;
        return 0;
}

/* Phase 5: everything else, in mount table order. */
static int plan_add_skipped(PlanBuild *b) {
        const Sample *sample = b->sample;
        const MountTable *t = sample->table;
        int r;

        for (size_t i = 0; i < t->n_entries; i++) {
                size_t k = sample->sb_of_mount[i];
                const Superblock *s = &sample->sbs[k];
                const SbDecision *d = &b->dec[k];
                const char *primary_mp = t->entries[d->primary].mount_point;
                PlanEntry *e;

                if (d->action == PLAN_SYNC && d->primary == i)
                        continue;
                e = &b->plan->entries[b->pos++];
                entry_init(e, s, k, &t->entries[i], d, PLAN_SKIP);
                e->primary = d->primary == i;
                r = entry_set_path(sample, i, e);
                if (r < 0)
                        return r;
                if (d->primary == i)
                        e->reason = d->reason ? strdup(d->reason) : NULL;
                else if (d->action == PLAN_SYNC) {
                        if (asprintf(&e->reason, "same superblock %u:%u as %s (bind mount or subvolume)",
                                     major(s->dev), minor(s->dev), primary_mp) < 0)
                                e->reason = NULL;
                } else if (asprintf(&e->reason, "same superblock %u:%u as %s: %s", major(s->dev),
                                    minor(s->dev), primary_mp, d->reason ? d->reason : "skipped") < 0)
                        e->reason = NULL;
                if (!e->reason)
                        return -ENOMEM;
        }
        return 0;
}

/* Phase 6, ETA: longest-processing-time-first over max_parallel workers, groups as units. */
static int plan_eta(PlanBuild *b) {
        _cleanup_free_ usec_t *work = calloc(MAX(b->n_groups, 1U), sizeof(usec_t));

        if (!work)
                return -ENOMEM;
        for (size_t g = 0; g < b->n_groups; g++)
                work[g] = b->groups[g].work;
        b->plan->eta = b->eta_known ? plan_lpt_eta(work, b->n_groups, b->policy->max_parallel)
                                    : USEC_INFINITY;
        return 0;
}

int plan_build(const Sample *sample, const Policy *policy, PlanScope scope, Plan **ret) {
        _cleanup_(plan_build_done) PlanBuild b = {
                .sample = sample,
                .policy = policy,
                .scope = scope,
        };
        size_t n = MAX(sample->n_sbs, 1);
        int r;

        b.plan = calloc(1, sizeof(Plan));
        b.dec = calloc(n, sizeof(SbDecision));
        b.groups = calloc(n, sizeof(GroupWork));
        b.sync_sbs = calloc(n, sizeof(size_t));
        if (!b.plan || !b.dec || !b.groups || !b.sync_sbs)
                return -ENOMEM;
        b.plan->entries = calloc(MAX(sample->table->n_entries, 1), sizeof(PlanEntry));
        if (!b.plan->entries)
                return -ENOMEM;
        b.plan->deadline = policy->deadline;
        b.plan->max_parallel = policy->max_parallel;
        b.plan->complete = sample->complete;

        r = path_index_build(sample, &b.pi);
        if (r < 0)
                return r;
        r = plan_decide(&b);
        if (r < 0)
                return r;
        r = plan_decide_overlays(&b);
        if (r < 0)
                return r;
        plan_group(&b);
        r = plan_order_sync(&b);
        if (r < 0)
                return r;
        r = plan_add_skipped(&b);
        if (r < 0)
                return r;
        r = plan_eta(&b);
        if (r < 0)
                return r;

        b.plan->n_entries = b.pos;
        *ret = TAKE_PTR(b.plan);
        return 0;
}
