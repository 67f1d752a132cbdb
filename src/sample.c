/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>

#include "device-rotational.h"
#include "evidence.h"
#include "ext4-journal.h"
#include "fs-module.h"
#include "loop-backing.h"
#include "sample.h"
#include "sample-ns.h"
#include "shared/fileio.h"
#include "shared/parse-util.h"
#include "shared/sort-util.h"
#include "shared/string-util.h"
#include "shared/strv.h"

static void superblock_done(Superblock *s) {
        free(s->fstype);
        free(s->source);
        free(s->mounts);
        free(s->group);
        device_info_done(&s->device);
}

Sample *sample_free(Sample *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_sbs; i++)
                superblock_done(&s->sbs[i]);
        free(s->sbs);
        free(s->sb_of_mount);
        free(s->overmounted);
        free(s->parent_of_mount);
        free(s->ns_of_mount);
        free(s->namespaces);
        for (size_t i = 0; i < s->n_incomplete_why; i++)
                free(s->incomplete_why[i]);
        free(s->incomplete_why);
        mount_table_free(s->table);
        free(s);
        return NULL;
}

static int cmp_dev(dev_t a, dev_t b) {
        return a < b ? -1 : a > b;
}

static int cmp_mount_index(const size_t *a, const size_t *b, const MountTable *t) {
        int r = cmp_dev(t->entries[*a].dev, t->entries[*b].dev);

        if (r != 0)
                return r;
        return CMP(*a, *b);
}

static int cmp_mount_id(const size_t *a, const size_t *b, const MountTable *t) {
        return CMP(t->entries[*a].mount_id, t->entries[*b].mount_id);
}

static ssize_t find_mount_id(const MountTable *t, const size_t *by_id, int id) {
        size_t lo = 0, hi = t->n_entries;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int m = t->entries[by_id[mid]].mount_id;

                if (m == id)
                        return (ssize_t) by_id[mid];
                if (m < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

static int cmp_parent_path(const size_t *a, const size_t *b, const MountTable *t) {
        const MountEntry *x = &t->entries[*a], *y = &t->entries[*b];

        if (x->parent_id != y->parent_id)
                return x->parent_id < y->parent_id ? -1 : 1;
        return strcmp(x->mount_point, y->mount_point);
}

/* Whether some mount has parent_id and mount point path; by_parent sorted with cmp_parent_path. */
static bool has_child_at(const MountTable *t, const size_t *by_parent, int parent_id, const char *path) {
        size_t lo = 0, hi = t->n_entries;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const MountEntry *m = &t->entries[by_parent[mid]];
                int r = m->parent_id != parent_id ? (m->parent_id < parent_id ? -1 : 1)
                                                  : strcmp(m->mount_point, path);

                if (r == 0)
                        return true;
                if (r < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

/* Whether path lies at or below dir (absolute paths as mountinfo writes them). */
static bool path_within(const char *path, const char *dir) {
        size_t l = strlen(dir);

        if (streq(dir, "/"))
                return path[0] == '/';
        return strncmp(path, dir, l) == 0 && (path[l] == '/' || path[l] == 0);
}

/* A mount is hidden when a child mount sits on the same path (mount --bind twice, or a mount over
 * a mount point), or when a sibling (same parent) sits on a directory above its mount point (files
 * mounted under /run/host, then /run/host bound over itself, as systemd-nspawn does), and so is
 * everything mounted below a hidden mount: path lookup walks into the mount on top. 'order' is
 * scratch space of n entries; 'parent' (n entries) gets each mount's parent in the table, -1: none
 * (Sample.parent_of_mount). */
static void mark_overmounted(const MountTable *t, size_t *order, ssize_t *parent, bool *ret) {
        size_t n = t->n_entries;
        bool changed = true;

        /* Each mount's parent in the table (-1: none), looked up once. */
        for (size_t i = 0; i < n; i++)
                order[i] = i;
        typesafe_qsort_r(order, n, cmp_mount_id, t);
        for (size_t i = 0; i < n; i++)
                parent[i] = find_mount_id(t, order, t->entries[i].parent_id);

        for (size_t i = 0; i < n; i++)
                order[i] = i;
        typesafe_qsort_r(order, n, cmp_parent_path, t);
        for (size_t i = 0; i < n; i++) {
                const char *mp = t->entries[i].mount_point;
                char path[PATH_MAX], *slash;
                size_t min_len = 1;

                if (strlen(mp) >= sizeof path)
                        continue;
                /* Siblings are mounted inside the parent mount, at or below its mount point: shorter
                 * directories above it cannot hold one (1000 mounts below one directory: one lookup
                 * each instead of one per path component). */
                if (parent[i] >= 0 && path_within(mp, t->entries[parent[i]].mount_point))
                        min_len = MAX(strlen(t->entries[parent[i]].mount_point), (size_t) 1);
                strcpy(path, mp);
                while ((slash = strrchr(path, '/')) && slash > path && (size_t) (slash - path) >= min_len) {
                        *slash = '\0';
                        if (has_child_at(t, order, t->entries[i].parent_id, path)) {
                                ret[i] = true;
                                break;
                        }
                }
        }

        for (size_t i = 0; i < n; i++) {
                ssize_t p = parent[i];

                if (p >= 0 && (size_t) p != i && streq(t->entries[p].mount_point, t->entries[i].mount_point))
                        ret[p] = true;
        }

        /* Down the tree, bounded by its depth (at most n passes, usually two or three). */
        for (size_t pass = 0; changed && pass < n; pass++) {
                changed = false;
                for (size_t i = 0; i < n; i++) {
                        ssize_t p = parent[i];

                        if (!ret[i] && p >= 0 && (size_t) p != i && ret[p] &&
                            !streq(t->entries[p].mount_point, t->entries[i].mount_point)) {
                                ret[i] = true;
                                changed = true;
                        }
                }
        }
}

int sample_mark_overmounted(const MountTable *t, bool *ret) {
        _cleanup_free_ size_t *order = malloc(MAX(t->n_entries, 1) * sizeof(size_t));
        _cleanup_free_ ssize_t *parent = malloc(MAX(t->n_entries, 1) * sizeof(ssize_t));

        if (!order || !parent)
                return -ENOMEM;
        mark_overmounted(t, order, parent, ret);
        return 0;
}

static int cmp_first_mount(const Superblock *a, const Superblock *b) {
        return CMP(a->mounts[0], b->mounts[0]);
}

static int cmp_devp(const dev_t *a, const dev_t *b) {
        return cmp_dev(*a, *b);
}

/* Group key: the sorted, de-duplicated leaf devices ("8:0,8:16"): superblocks that share a leaf
 * share a queue and are synced one after another. Without leaves: the superblock alone. */
static int make_group(Superblock *s) {
        _cleanup_free_ dev_t *leaves = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, len = 0;

        /* A superblock without a block device (nfs, fuse, overlay) is its own group. */
        if (s->device.n_leaves == 0 ||
            (!s->device.is_block && s->device.n_leaves == 1 && s->device.leaves[0] == s->dev)) {
                if (asprintf(&s->group, "sb:%u:%u", major(s->dev), minor(s->dev)) < 0)
                        return -ENOMEM;
                return 0;
        }

        leaves = malloc(s->device.n_leaves * sizeof(dev_t));
        buf = malloc(s->device.n_leaves * 24 + 1);
        if (!leaves || !buf)
                return -ENOMEM;
        memcpy(leaves, s->device.leaves, s->device.n_leaves * sizeof(dev_t));
        typesafe_qsort(leaves, s->device.n_leaves, cmp_devp);
        for (size_t i = 0; i < s->device.n_leaves; i++) {
                if (i > 0 && leaves[i] == leaves[i - 1])
                        continue;
                len += (size_t) sprintf(buf + len, "%s%u:%u", n > 0 ? "," : "", major(leaves[i]),
                                        minor(leaves[i]));
                n++;
        }
        s->group = TAKE_PTR(buf);
        return 0;
}

#define FSTYPE_CACHE_MAX 64U

typedef struct FsTypeClass {
        const char *fstype;
        FsClass class;
} FsTypeClass;

static FsClass fs_class_cached(FsTypeClass *cache, size_t *n, const char *fstype) {
        FsClass c;

        for (size_t i = 0; i < *n; i++)
                if (streq(cache[i].fstype, fstype))
                        return cache[i].class;
        c = fs_class_from_fstype(fstype);
        if (*n < FSTYPE_CACHE_MAX)
                cache[(*n)++] = (FsTypeClass) { .fstype = fstype, .class = c };
        return c;
}

/* A superblock's device, group, bdi stats and (ext4) journal; -ENOMEM only. */
static int superblock_facts(Superblock *sb, const SampleOps *ops) {
        int r;

        sb->device.dev = sb->dev;
        /* Pseudo filesystems have no device; overlays follow their upper layer's. */
        if (sb->fs_class != FS_CLASS_PSEUDO && sb->fs_class != FS_CLASS_OVERLAY && ops && ops->classify) {
                r = ops->classify(ops->userdata, sb->dev, sb->fstype, sb->source, &sb->device);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        sb->device = (DeviceInfo) { .dev = sb->dev };
        }
        r = make_group(sb);
        if (r < 0)
                return r;

        if (sb->device.bdi_name && ops && ops->bdi_stats) {
                r = ops->bdi_stats(ops->userdata, sb->device.bdi_name, &sb->bdi);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        sb->bdi_error = r;
                else
                        sb->has_bdi_stats = true;
        } else
                sb->bdi_error = -ENOENT;

        sb->loop_backing_error = -ENODATA;
        sb->journal = sb->journal_internal = sb->nobarrier = -ENODATA;
        if (!fs_type_lookup(sb->fstype)->flush_unless_journal || !ops)
                return 0;
        /* Barriers are the superblock's, not its stack's: asked by the device's name also where the
         * stack below could not be read in full (DeviceInfo.incomplete, is_block false), whose
         * device-or-syncfs would otherwise end, without a device node, in a second syncfs that sends
         * no FLUSH either. Where sysfs could not name the device at all, it is asked without a name
         * (every ext4 of the kernel saying "barrier" answers for it), never left "not asked"
         * (review AC, AC1). */
        if (ops->nobarrier)
                sb->nobarrier = ops->nobarrier(ops->userdata, sb->device.name);
        if (!sb->device.is_block)
                return 0;
        if (ops->journal)
                sb->journal = ops->journal(ops->userdata, sb->device.name);
        if (ops->journal_internal && sb->journal != EXT4_JOURNAL_NONE)
                sb->journal_internal = ops->journal_internal(ops->userdata, sb->device.name);
        return 0;
}

int sample_build(MountTable **table, const SampleOps *ops, Sample **ret) {
        _cleanup_(sample_freep) Sample *s = NULL;
        _cleanup_free_ size_t *order = NULL;
        MountTable *t = *table;
        size_t n = t->n_entries;

        s = calloc(1, sizeof(Sample));
        if (!s)
                return -ENOMEM;
        s->writeback_idle = -ENODATA;

        order = malloc(MAX(n, 1) * sizeof(size_t));
        s->sbs = calloc(MAX(n, 1), sizeof(Superblock));
        if (!order || !s->sbs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                order[i] = i;
        typesafe_qsort_r(order, n, cmp_mount_index, (const MountTable *) t);

        /* One record per distinct superblock device, mounts in table order. A host has a handful
         * of distinct fstypes and up to thousands of mounts: classify each type once. */
        FsTypeClass cache[FSTYPE_CACHE_MAX];
        size_t n_cache = 0;

        for (size_t i = 0; i < n;) {
                const MountEntry *m = &t->entries[order[i]];
                Superblock *sb = &s->sbs[s->n_sbs++];
                size_t j = i;

                while (j < n && t->entries[order[j]].dev == m->dev)
                        j++;

                sb->dev = m->dev;
                sb->fstype = strdup(m->fstype ? m->fstype : "");
                sb->source = strdup(m->source ? m->source : "");
                sb->mounts = malloc((j - i) * sizeof(size_t));
                if (!sb->fstype || !sb->source || !sb->mounts)
                        return -ENOMEM;
                memcpy(sb->mounts, order + i, (j - i) * sizeof(size_t));
                sb->n_mounts = j - i;
                /* the cache keeps the table's strings, which outlive it */
                sb->fs_class = fs_class_cached(cache, &n_cache, m->fstype ? m->fstype : "");
                /* Tables are read one after another, and a device number freed in between goes to
                 * the next superblock (lowest first): read-only only when every mount says so, and
                 * of two types never the pseudo one. */
                sb->all_read_only = true;
                for (size_t k = i; k < j; k++) {
                        const MountEntry *e = &t->entries[order[k]];

                        sb->all_read_only = sb->all_read_only && mount_options_read_only(e->fs_options);
                        if (streq_ptr(e->fstype, m->fstype))
                                continue;
                        if (sb->type_conflict == 0)
                                sb->type_conflict = order[k] + 1;
                        if (sb->fs_class == FS_CLASS_PSEUDO && e->fstype &&
                            fs_class_cached(cache, &n_cache, e->fstype) != FS_CLASS_PSEUDO) {
                                free(sb->fstype);
                                sb->fstype = strdup(e->fstype);
                                if (!sb->fstype)
                                        return -ENOMEM;
                                sb->fs_class = fs_class_cached(cache, &n_cache, e->fstype);
                        }
                }
                i = j;
        }

        /* Keep superblocks in order of their first mount so output follows the mount table. */
        typesafe_qsort(s->sbs, s->n_sbs, cmp_first_mount);

        for (size_t i = 0; i < s->n_sbs; i++) {
                int r = superblock_facts(&s->sbs[i], ops);
                if (r < 0)
                        return r;
        }

        s->ns_of_mount = calloc(MAX(n, 1), sizeof(unsigned));
        if (!s->ns_of_mount)
                return -ENOMEM;

        /* Inverse map and overmount flags, O(n log n) so 1000-mount hosts stay cheap. */
        s->sb_of_mount = malloc(MAX(n, 1) * sizeof(size_t));
        s->overmounted = calloc(MAX(n, 1), sizeof(bool));
        if (!s->sb_of_mount || !s->overmounted)
                return -ENOMEM;
        for (size_t k = 0; k < s->n_sbs; k++)
                for (size_t i = 0; i < s->sbs[k].n_mounts; i++)
                        s->sb_of_mount[s->sbs[k].mounts[i]] = k;
        s->parent_of_mount = malloc(MAX(n, 1) * sizeof(ssize_t));
        if (!s->parent_of_mount)
                return -ENOMEM;
        mark_overmounted(t, order, s->parent_of_mount, s->overmounted);

        s->table = TAKE_PTR(*table);
        *ret = TAKE_PTR(s);
        return 0;
}

typedef struct LiveFacts {
        const char *sysfs_root;
        int sysfs_fd;
        int proc_fd;
        int journal_readable; /* ext4_journal_readable() of the running kernel; -1 not asked yet */
        int debugfs_fd;
        DeviceClassifier *classifier; /* opened at the first superblock that needs it */
        bool no_rotational;
} LiveFacts;

static int live_classify(void *userdata, dev_t dev, const char *fstype, const char *source, DeviceInfo *ret) {
        LiveFacts *f = userdata;

        if (!f->classifier) {
                int r = device_classifier_new(f->sysfs_root, SYSFS_DIRFD, &f->classifier);
                if (r < 0)
                        return r;
                /* Never read here: the attribute waits on the queue's limits lock (ask_rotational()). */
                device_classifier_set_rotational_read(
                        f->classifier, f->no_rotational ? DEVICE_ROTATIONAL_UNREAD : DEVICE_ROTATIONAL_DEFER);
        }
        return device_classifier_classify(f->classifier, dev, fstype, source, ret);
}

static int live_journal(void *userdata, const char *name) {
        LiveFacts *f = userdata;

        if (f->journal_readable < 0) {
                struct utsname u;

                f->journal_readable = uname(&u) >= 0 && ext4_journal_readable(u.release);
        }
        if (!f->journal_readable)
                return -EOPNOTSUPP;
        return ext4_journal_load(f->sysfs_fd, name);
}

static int live_journal_internal(void *userdata, const char *name) {
        LiveFacts *f = userdata;
        return ext4_journal_internal(f->proc_fd, name);
}

static int live_nobarrier(void *userdata, const char *name) {
        LiveFacts *f = userdata;
        return ext4_options_nobarrier(f->proc_fd, name);
}

static int live_bdi_stats(void *userdata, const char *name, BdiStats *ret) {
        LiveFacts *f = userdata;
        if (f->debugfs_fd < 0)
                return -ENOENT;
        return bdi_stats_load(f->debugfs_fd, name, ret);
}

/* Opens a gate once (SampleGate). */
static void gate_open(SampleGate *g) {
        if (g->opened)
                return;
        g->opened = true;
        if (g->open(g) < 0) { /* nothing known: no time, nothing asked */
                g->reach_timeout = g->until = 1;
                g->loop_backing = false;
        }
}

/* A bounded child's time: its own bound, cut to what is left before src->until (at least 1 µs: a
 * child past it is killed at once, and what it would have found counts as not known); behind a gate,
 * the gate's. */
static usec_t child_timeout(const SampleSources *src) {
        usec_t reach = src->reach_timeout, until = src->until, t, n;
        SampleGate *g = src->gate;

        if (g) {
                gate_open(g);
                reach = g->reach_timeout;
                until = g->until;
        }
        t = reach > 0 ? reach : UNLISTED_REACH_TIMEOUT;
        if (until > 0) {
                n = now(CLOCK_MONOTONIC);
                t = MIN(t, until > n ? until - n : 1);
        }
        return MAX(t, (usec_t) 1);
}

/* The main process's own look at the other mount namespaces (sample_add_namespaces(), and those an
 * nsfs mount keeps): one statmount(2) per mount of each, the walk over proc, each table read, none of
 * it in a bounded child. A few milliseconds on a machine as it comes; it stops at the sample's start
 * + SAMPLE_SCAN_MAX, or src->until if sooner, the rest a reason (review AE, H1: 80 copies of a
 * namespace of 30,000 mounts, made by an unprivileged user, took 9.6 s). */
#define SAMPLE_SCAN_MAX (1U * USEC_PER_SEC)

static usec_t scan_until(const SampleSources *src, usec_t t0) {
        usec_t u = usec_add(t0, SAMPLE_SCAN_MAX), s = src->until;

        if (src->gate && src->gate->opened)
                s = src->gate->until;
        return s > 0 ? MIN(u, s) : u;
}

/* The unlisted superblocks: nsfs-held namespaces and sysfs fs/<type>/ lists, compared with the
 * table; what a process holds a file on is reached, the rest becomes reasons. */
static int find_unlisted(const SampleSources *src, int sysfs_fd, int proc_fd, MountTable *t, unsigned **ns_of,
                         const MountNamespace *nss, size_t n_nss, FsModuleCounts *counts, usec_t until,
                         HiddenSet *hidden, Reasons *why) {
        _cleanup_free_ uint64_t *inos = NULL;
        _cleanup_free_ int *pids = NULL;
        size_t n_inos = 0, before;
        int r;

        inos = calloc(n_nss + 1, sizeof(uint64_t));
        pids = calloc(n_nss + 1, sizeof(int));
        if (!inos || !pids)
                return -ENOMEM;
        for (size_t i = 0; i < n_nss; i++) {
                inos[n_inos++] = nss[i].ino;
                pids[i] = nss[i].pid;
        }
        if (proc_fd >= 0 && sample_read_ns(proc_fd, "self", &inos[n_inos]) >= 0)
                n_inos++;

        /* Chroot-only namespaces were listed while the table was still growing. */
        hidden_set_prune(hidden, t);
        r = unlisted_scan_nsfs(src->root_fd, t, *ns_of, pids, inos, n_inos, until, hidden, why);
        if (r < 0)
                return r;
        r = unlisted_scan_sysfs(sysfs_fd, t, hidden, why);
        if (r < 0)
                return r;
        r = unlisted_scan_bdis(src->debugfs_fd, t, hidden, why);
        if (r < 0)
                return r;

        before = t->n_entries;
        /* In a child, bounded: a hit that arrived counts, a superblock not reached in time stays hidden
         * with that reason. */
        r = unlisted_reach(src->root_fd, hidden->n > 0 ? child_timeout(src) : 1, src->reach_stat, hidden, t);
        /* Entries reached (even before a failure) are ours: ns_of must cover them. */
        if (t->n_entries > before) {
                unsigned *x = reallocarray(*ns_of, t->n_entries, sizeof(unsigned));
                if (!x)
                        return -ENOMEM;
                memset(x + before, 0, (t->n_entries - before) * sizeof(unsigned));
                *ns_of = x;
        }
        if (r < 0)
                return r;
        /* Types no listing shows: counted by their module (the first half read before the tables). */
        r = fs_module_end(counts, sysfs_fd, t, hidden, why);
        if (r < 0)
                return r;
        return unlisted_report(hidden, why);
}

/* btrfs superblocks are anonymous (0:N): compared by bdi, known only after classification. */
static int check_btrfs(int sysfs_fd, const Sample *s, Reasons *why) {
        _cleanup_free_ char **names = calloc(MAX(s->n_sbs, 1), sizeof(char *));
        size_t n = 0;

        if (!names)
                return -ENOMEM;
        for (size_t k = 0; k < s->n_sbs; k++)
                if (s->sbs[k].device.bdi_name)
                        names[n++] = s->sbs[k].device.bdi_name;
        return unlisted_check_btrfs(sysfs_fd, names, n, why);
}

/* Whether our /dev is a memory filesystem, as our own table shows it: a lookup there never waits. */
static bool dev_in_memory(const Sample *s) {
        const MountTable *t = s->table;

        for (size_t i = 0; i < t->n_entries; i++)
                if (s->ns_of_mount[i] == 0 && !s->overmounted[i] && !t->entries[i].unlisted &&
                    streq(t->entries[i].mount_point, "/dev") &&
                    STR_IN_SET(t->entries[i].fstype, "devtmpfs", "tmpfs"))
                        return true;
        return false;
}

/* Where the backing file of each writable superblock on one loop device lives (loop-backing.h), when
 * src->loop_backing asks: one bounded child for all of them. Read-only ones never write through it;
 * the others keep -ENODATA. */
static int ask_loop_backing(const SampleSources *src, Sample *s) {
        _cleanup_free_ LoopBackingQuery *q = NULL;
        _cleanup_free_ size_t *of = NULL;
        size_t n = 0, max = MIN(s->n_sbs, (size_t) LOOP_BACKING_QUERY_MAX);
        int r;

        if (!src->loop_backing)
                return 0;
        q = calloc(MAX(max, 1), sizeof(LoopBackingQuery));
        of = calloc(MAX(max, 1), sizeof(size_t));
        if (!q || !of)
                return -ENOMEM;
        for (size_t k = 0; k < s->n_sbs && n < max; k++) {
                const DeviceInfo *d = &s->sbs[k].device;

                if (d->n_loops != 1 || !d->loop_devname || s->sbs[k].all_read_only)
                        continue;
                q[n] = (LoopBackingQuery) { .loop = d->loop_dev, .name = d->loop_devname };
                of[n++] = k;
        }
        if (n == 0)
                return 0;
        /* Behind a gate (where src->loop_backing says the pass may ask) the configuration decides. */
        if (src->gate) {
                gate_open(src->gate);
                if (!src->gate->loop_backing)
                        return 0;
        }
        r = loop_backing_query(src->root_fd, dev_in_memory(s), q, n, child_timeout(src));
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                Superblock *sb = &s->sbs[of[i]];

                sb->loop_backing_error = q[i].error;
                if (q[i].error == 0) {
                        sb->loop_backing_dev = q[i].backing_dev;
                        sb->loop_backing_rdev = q[i].backing_rdev;
                }
        }
        return 0;
}

static int cmp_rotational_query(const DeviceRotationalQuery *a, const DeviceRotationalQuery *b) {
        return strcmp(a->disk, b->disk);
}

/* queue/rotational of every disk a classified device lists (DeviceInfo.rotational_disks), each disk
 * once, in one bounded child (device-rotational.h), bounded as the sample's other children; the
 * answers applied to every device. A disk without one leaves the class unknown. */
static int ask_rotational(const SampleSources *src, int sysfs_fd, Sample *s) {
        _cleanup_free_ DeviceRotationalQuery *q = NULL;
        size_t n = 0, m = 0, max = 0;

        if (src->no_rotational)
                return 0;
        for (size_t k = 0; k < s->n_sbs; k++)
                max += strv_length(s->sbs[k].device.rotational_disks);
        if (max == 0)
                return 0;
        q = calloc(max, sizeof(DeviceRotationalQuery));
        if (!q)
                return -ENOMEM;
        for (size_t k = 0; k < s->n_sbs; k++)
                for (char **d = s->sbs[k].device.rotational_disks; d && *d; d++)
                        if (!isempty(*d)) /* a disk whose directory is not known: unknown */
                                q[n++] = (DeviceRotationalQuery) { .disk = *d };
        typesafe_qsort(q, n, cmp_rotational_query);
        for (size_t i = 0; i < n; i++)
                if (m == 0 || !streq(q[m - 1].disk, q[i].disk))
                        q[m++] = q[i];
        if (m > 0)
                (void) device_rotational_query(sysfs_fd, q, m, child_timeout(src));
        for (size_t i = 0; i < m; i++)
                if (q[i].value < 0) {
                        if (s->n_rotational_unknown++ == 0)
                                s->rotational_error = q[i].value;
                }
        for (size_t k = 0; k < s->n_sbs; k++)
                device_info_apply_rotational(&s->sbs[k].device, q, m);
        return 0;
}

/* Our own view first: in a chroot, "/" is not in our table, yet syncfs("/") reaches it. Sets
 * *ret_restricted when our root is not a mount point of our table. */
static int add_own_root(int root_fd, int proc_fd, usec_t timeout, MountTable *table, Reasons *why,
                        bool *ret_restricted) {
        int r = unlisted_add_root(root_fd, proc_fd, MIN(timeout, UNLISTED_ROOT_TIMEOUT), table,
                                  table->n_entries);

        if (r == -ENOMEM)
                return r;
        *ret_restricted = r != 0;
        if (r < 0)
                return reasons_add(why,
                                   "our root directory is not a mount point of our mount table (a chroot?), "
                                   "and it could not be examined: %s",
                                   strerror(-r));
        if (r > 0)
                return reasons_add(why,
                                   "our root directory is not a mount point of our mount table (a chroot?): "
                                   "mounts outside it are invisible here; \"/\" itself is synced");
        return 0;
}

static const Superblock *sample_find_dev(const Sample *s, dev_t dev) {
        for (size_t k = 0; k < s->n_sbs; k++)
                if (s->sbs[k].dev == dev)
                        return &s->sbs[k];
        return NULL;
}

/* Whether mounts a (of before) and b (of now) are one mount: its id that is never reused where both
 * have it (listmount), else the old id, where it is mounted and what it shows (the mountinfo text's
 * ids are reused, so a remount of the same device at the same place may pass: a limit of kernels
 * before 6.15, whose tables come as text). */
static bool same_mount(const MountEntry *a, const MountEntry *b) {
        if (a->mount_id_unique != 0 && b->mount_id_unique != 0)
                return a->mount_id_unique == b->mount_id_unique;
        if (a->unlisted || b->unlisted) /* a path to a process's file: it may change between samples */
                return a->unlisted && b->unlisted && a->mount_id == b->mount_id;
        return a->mount_id == b->mount_id && streq_ptr(a->mount_point, b->mount_point) &&
               streq_ptr(a->root, b->root);
}

/* Whether superblock n of now still is superblock b of before: one of its mounts was there then. A
 * filesystem mounted again since with the same number and type (a loop device freed and taken
 * again, review P, P2) has none. */
static bool same_superblock(const Sample *before, const Superblock *b, const Sample *now,
                            const Superblock *n) {
        for (size_t i = 0; i < n->n_mounts; i++)
                for (size_t j = 0; j < b->n_mounts; j++)
                        if (same_mount(&before->table->entries[b->mounts[j]],
                                       &now->table->entries[n->mounts[i]]))
                                return true;
        return false;
}

int sample_changed_since(const Sample *before, const Sample *now, char **ret_why) {
        int r = 0;

        *ret_why = NULL;
        if (before->complete && !now->complete)
                r = asprintf(ret_why, "the view of the mounts is no longer complete: %s",
                             now->n_incomplete_why > 0 ? now->incomplete_why[0] : "a reason was dropped");
        for (size_t k = 0; r == 0 && k < now->n_sbs; k++) {
                const Superblock *n = &now->sbs[k], *b;
                const char *mp = now->table->entries[n->mounts[0]].mount_point;

                if (n->fs_class == FS_CLASS_PSEUDO)
                        continue;
                b = sample_find_dev(before, n->dev);
                if (!b)
                        r = asprintf(ret_why, "superblock %u:%u (%s) at %s was mounted since the pass looked",
                                     major(n->dev), minor(n->dev), n->fstype, mp);
                else if (!streq(b->fstype, n->fstype))
                        r = asprintf(
                                ret_why,
                                "device number %u:%u is a %s at %s now, and was a %s when the pass looked "
                                "(given to another filesystem meanwhile)",
                                major(n->dev), minor(n->dev), n->fstype, mp, b->fstype);
                else if (b->all_read_only && !n->all_read_only)
                        r = asprintf(ret_why,
                                     "superblock %u:%u (%s) at %s is writable now, and was read-only",
                                     major(n->dev), minor(n->dev), n->fstype, mp);
                else if (!same_superblock(before, b, now, n))
                        r = asprintf(
                                ret_why,
                                "superblock %u:%u (%s) at %s has none of the mounts it had when the pass "
                                "looked (mounted again since, another filesystem with its number)",
                                major(n->dev), minor(n->dev), n->fstype, mp);
        }
        if (r < 0) {
                *ret_why = NULL;
                return -ENOMEM;
        }
        return *ret_why ? 1 : 0;
}

bool sample_sources_same_reads(const SampleSources *a, const SampleSources *b) {
        return a->root_fd == b->root_fd && streq_ptr(a->sysfs_root, b->sysfs_root) &&
               a->debugfs_fd == b->debugfs_fd && a->scan_namespaces == b->scan_namespaces &&
               a->mount_backend == b->mount_backend && a->walk_all_processes == b->walk_all_processes &&
               a->reach_stat == b->reach_stat && a->no_rotational == b->no_rotational &&
               a->identity_only == b->identity_only;
}

/* The running kernel (<root_fd>/proc/sys/kernel/osrelease) is one the FUSE rule was checked on. */
static bool fuse_kernel_checked(int root_fd) {
        _cleanup_free_ char *release = NULL;

        return read_full_file_at(root_fd, "proc/sys/kernel/osrelease", 256, &release, NULL) >= 0 &&
               evidence_fuse_kernel_checked(release);
}

int sample_load(const SampleSources *src, Sample **ret) {
        _cleanup_(mount_table_freep) MountTable *table = NULL;
        _cleanup_(sample_freep) Sample *s = NULL;
        _cleanup_close_ int sysfs_fd = open(src->sysfs_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int proc_fd = openat(src->root_fd, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_(reasons_done) Reasons why = {};
        _cleanup_(hidden_set_done) HiddenSet hidden = {};
        _cleanup_(fs_module_counts_freep) FsModuleCounts *counts = NULL;
        LiveFacts facts = {
                .sysfs_root = src->sysfs_root,
                .sysfs_fd = sysfs_fd,
                .proc_fd = proc_fd,
                .journal_readable = -1,
                .debugfs_fd = src->debugfs_fd,
                .no_rotational = src->no_rotational,
        };
        SampleOps ops = {
                .classify = live_classify,
                .bdi_stats = live_bdi_stats,
                .journal = live_journal,
                .journal_internal = live_journal_internal,
                .nobarrier = live_nobarrier,
                .userdata = &facts,
        };
        _cleanup_free_ unsigned *ns_of = NULL;
        _cleanup_free_ MountNamespace *nss = NULL;
        size_t n_nss = 0;
        Meminfo mi = {};
        usec_t t0, t1;
        bool restricted;
        unsigned n_bad = 0;
        int r, meminfo_r;
        bool fuse_kernel;

        if (src->identity_only) {
                ops.bdi_stats = NULL;
                ops.journal = ops.journal_internal = ops.nobarrier = NULL;
        }
        t0 = now(CLOCK_MONOTONIC);
        r = fs_module_begin(proc_fd, sysfs_fd, &counts, &why);
        if (r < 0)
                return r;
        r = mount_table_load_backend(src->root_fd, src->mount_backend, &table, &n_bad, NULL);
        if (r < 0)
                return r;
        /* A line libmount could not read is a mount not seen (review B, F8). */
        if (n_bad > 0 &&
            reasons_add(&why,
                        "%u mount(s) of our mount table could not be read (a line of proc/self/mountinfo, or "
                        "a mount too large to read): "
                        "the mounts they describe were not scanned",
                        n_bad) < 0)
                return -ENOMEM;

        r = add_own_root(src->root_fd, proc_fd,
                         unlisted_root_listed(table, table->n_entries) ? 1 : child_timeout(src), table, &why,
                         &restricted);
        if (r < 0)
                return r;

        if (src->scan_namespaces) {
                r = sample_add_namespaces(src->root_fd, src->walk_all_processes, !restricted,
                                          src->mount_backend, scan_until(src, t0), table, &ns_of, &nss,
                                          &n_nss, &hidden, &why);
                if (r < 0)
                        return r;
        } else if (reasons_add(&why, "other mount namespaces were not scanned") < 0 ||
                   !(ns_of = calloc(MAX(table->n_entries, 1), sizeof(unsigned))))
                return -ENOMEM;
        r = find_unlisted(src, sysfs_fd, proc_fd, table, &ns_of, nss, n_nss, counts, scan_until(src, t0),
                          &hidden, &why);
        if (r == -ENOMEM)
                return r;
        /* Looking for them must not cost the sync of what we do see: incomplete, with the reason. */
        if (r < 0 && reasons_add(&why, "could not look for superblocks outside the mount tables: %s",
                                 strerror(-r)) < 0)
                return -ENOMEM;
        meminfo_r = meminfo_load(src->root_fd, &mi);
        /* Only plan.c's FUSE rule reads it: not the identity the late pass's second look compares. */
        fuse_kernel = !src->identity_only && fuse_kernel_checked(src->root_fd);
        t1 = now(CLOCK_MONOTONIC);

        r = sample_build(&table, &ops, &s);
        facts.classifier = device_classifier_free(facts.classifier);
        if (r < 0)
                return r;
        free(s->ns_of_mount);
        s->ns_of_mount = TAKE_PTR(ns_of);
        s->namespaces = TAKE_PTR(nss);
        s->n_namespaces = n_nss;

        r = ask_loop_backing(src, s);
        if (r < 0)
                return r;
        r = ask_rotational(src, sysfs_fd, s);
        if (r < 0)
                return r;

        for (size_t k = 0; k < s->n_sbs; k++) {
                const Superblock *sb = &s->sbs[k];

                if (sb->type_conflict > 0 &&
                    reasons_add(&why,
                                "superblock %u:%u is listed as '%s' and as '%s': its device number went to "
                                "another filesystem while the mount tables were read",
                                major(sb->dev), minor(sb->dev), s->table->entries[sb->mounts[0]].fstype,
                                s->table->entries[sb->type_conflict - 1].fstype) < 0)
                        return -ENOMEM;
        }

        r = check_btrfs(sysfs_fd, s, &why);
        if (r == -ENOMEM || (r < 0 && reasons_add(&why,
                                                  "could not compare btrfs filesystems with the mount "
                                                  "tables: %s",
                                                  strerror(-r)) < 0))
                return -ENOMEM;

        s->meminfo = mi;
        s->has_meminfo = meminfo_r >= 0;
        s->fuse_kernel_checked = fuse_kernel;
        s->meminfo_error = MIN(meminfo_r, 0);
        s->view_restricted = restricted;
        s->complete = why.n == 0 && why.n_dropped == 0;
        s->incomplete_why = TAKE_PTR(why.v);
        s->n_incomplete_why = why.n;
        s->n_incomplete_dropped = why.n_dropped;
        why = (Reasons) {};
        s->debugfs_error = src->debugfs_fd < 0                                     ? src->debugfs_fd
                           : faccessat(src->debugfs_fd, "bdi", R_OK | X_OK, 0) < 0 ? negative_errno()
                                                                                   : 0;
        s->has_debugfs = s->debugfs_error == 0;
        s->timestamp = now(CLOCK_MONOTONIC);
        s->t_read = t1 - t0;
        s->t_sample = s->timestamp - t1;
        *ret = TAKE_PTR(s);
        return 0;
}
