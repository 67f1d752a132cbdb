/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bdi-stats.h"
#include "fs-type.h"
#include "shared/bounded-child.h"
#include "shared/fileio.h"
#include "shared/mount-api.h"
#include "shared/parse-util.h"
#include "shared/proc-util.h"
#include "shared/sort-util.h"
#include "shared/strv.h"
#include "unlisted-internal.h"
#include "unlisted.h"

int reasons_add(Reasons *r, const char *fmt, ...) {
        va_list ap;
        char *s;
        int k;

        if (r->n >= REASONS_MAX) {
                r->n_dropped++;
                return 0;
        }
        va_start(ap, fmt);
        k = vasprintf(&s, fmt, ap);
        va_end(ap);
        return strv_consume(&r->v, &r->n, k < 0 ? NULL : s);
}

void reasons_done(Reasons *r) {
        strv_free(r->v);
        *r = (Reasons) {};
}

void hidden_sb_done(HiddenSb *s) {
        free(s->fstype);
        free(s->what);
        free(s->source);
}

void hidden_set_done(HiddenSet *h) {
        for (size_t i = 0; i < h->n; i++)
                hidden_sb_done(&h->v[i]);
        free(h->v);
        free(h->ns_listed);
        *h = (HiddenSet) {};
}

static bool hidden_has(const HiddenSet *h, dev_t dev) {
        for (size_t i = 0; i < h->n; i++)
                if (h->v[i].dev == dev)
                        return true;
        return false;
}

static int hidden_add(HiddenSet *h, dev_t dev, const char *fstype, const char *source, const char *fmt, ...)
        _printf_(5, 6);

static int hidden_add(HiddenSet *h, dev_t dev, const char *fstype, const char *source, const char *fmt, ...) {
        HiddenSb *v, s = { .dev = dev };
        va_list ap;
        int k;

        if (hidden_has(h, dev))
                return 0;
        if (h->n >= HIDDEN_MAX) {
                h->n_dropped++;
                return 0;
        }
        va_start(ap, fmt);
        k = vasprintf(&s.what, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        s.fstype = strdup(fstype);
        s.source = source ? strdup(source) : NULL;
        v = reallocarray(h->v, h->n + 1, sizeof(HiddenSb));
        if (!s.fstype || (source && !s.source) || !v) {
                if (v)
                        h->v = v;
                hidden_sb_done(&s);
                return -ENOMEM;
        }
        h->v = v;
        h->v[h->n++] = s;
        return 0;
}

static bool table_has_dev(const MountTable *t, dev_t dev) {
        for (size_t i = 0; i < t->n_entries; i++)
                if (t->entries[i].dev == dev)
                        return true;
        return false;
}

void hidden_set_prune(HiddenSet *h, const MountTable *t) {
        for (size_t i = 0; i < h->n;)
                if (table_has_dev(t, h->v[i].dev)) {
                        hidden_sb_done(&h->v[i]);
                        h->v[i] = h->v[--h->n];
                } else
                        i++;
}

/* Not through mount_table_merge(): its bounds are for what tables bring in, which other namespaces'
 * can fill; a superblock reached here (at most HIDDEN_MAX, and our root) is added whatever they
 * took, or the whole sample would fail with it (review AK). */
static int table_append(MountTable *t, MountEntry *e) {
        MountEntry *n;

        n = reallocarray(t->entries, t->n_entries + 1, sizeof(MountEntry));
        if (!n)
                return -ENOMEM;
        t->entries = n;
        t->entries[t->n_entries++] = *e;
        *e = (MountEntry) {};
        return 0;
}

int append_unlisted(MountTable *t, const char *path, dev_t dev, int mount_id, const char *fstype,
                    const char *source, bool read_only) {
        MountEntry e = {
                .mount_id = mount_id,
                .dev = dev,
                .root = strdup("/"),
                .mount_point = strdup(path),
                .fstype = strdup(fstype),
                .source = strdup(source ? source : "none"),
                .vfs_options = strdup(read_only ? "ro" : "rw"),
                .fs_options = strdup(read_only ? "ro" : "rw"),
                .read_only = read_only,
                .unlisted = true,
        };
        int r;

        if (!e.root || !e.mount_point || !e.fstype || !e.source || !e.vfs_options || !e.fs_options) {
                mount_entry_done(&e);
                return -ENOMEM;
        }
        r = table_append(t, &e);
        mount_entry_done(&e);
        return r;
}

/* statmount() of the mount with unique id: its old id, device and type into *ret when its old id is
 * old_id; its parent's unique id into *ret_parent. 1 found, 0 not this one, negative errno. */
static int root_facts_one(struct ss_statmount *sm, size_t sm_size, uint64_t id, int old_id, UnlistedRoot *ret,
                          uint64_t *ret_parent) {
        struct ss_mnt_id_req q = {
                .size = SS_MNT_ID_REQ_SIZE_VER0,
                .mnt_id = id,
                .param = SS_STATMOUNT_MNT_BASIC | SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_FS_TYPE,
        };

        if (ss_statmount(&q, sm, sm_size, 0) < 0)
                return errno == ENOENT ? 0 : negative_errno(); /* ENOENT: unmounted meanwhile */
        if ((sm->mask & q.param) != q.param)
                return -EOPNOTSUPP;
        if (ret_parent)
                *ret_parent = sm->mnt_parent_id;
        if ((int) sm->mnt_id_old != old_id)
                return 0;
        *ret = (UnlistedRoot) { .dev = makedev(sm->sb_dev_major, sm->sb_dev_minor), .mount_id = old_id };
        snprintf(ret->fstype, sizeof ret->fstype, "%s", sm->str + sm->fs_type);
        return 1;
}

/* Our root's mount from the VFS alone (Linux 6.8+): its old mount id from proc_fd's self/fdinfo, then
 * that mount among our namespace's listmount(2) ids, or (in a chroot, where listmount leaves out the
 * mounts our root cannot reach, the one our root is in among them) the parent of one of them (our
 * proc is mounted below our root); device and type by statmount(2). No call reaches the filesystem.
 * -ENOENT when none is that mount. */
static int root_facts_vfs(int root_fd, int proc_fd, UnlistedRoot *ret) {
        _cleanup_free_ struct ss_statmount *sm = NULL;
        _cleanup_free_ uint64_t *ids = NULL;
        const size_t sm_size = 4096;
        uint64_t ino, parent;
        size_t n;
        int mnt_id, r;

        r = proc_fdinfo_mnt_ino(proc_fd, root_fd, &mnt_id, &ino);
        if (r < 0)
                return r;
        r = mount_table_list_ids(0, &ids, &n);
        if (r < 0)
                return r;
        sm = malloc(sm_size);
        if (!sm)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                parent = 0;
                r = root_facts_one(sm, sm_size, ids[i], mnt_id, ret, &parent);
                if (r == 0 && parent != 0 && parent != ids[i])
                        r = root_facts_one(sm, sm_size, parent, mnt_id, ret, NULL);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return -ENOENT;
}

/* The child's way (before Linux 6.8, or when the VFS alone did not answer): statx() and fstatfs(),
 * which call into the filesystem (AT_STATX_DONT_SYNC is only a hint for CIFS and 9p; fstatfs() is an
 * RPC on NFS, a request a frozen FUSE server never answers). fd 4 is the root. */
static int root_facts_work(int pipe_fd, int keep_fd, void *userdata) {
        UnlistedRoot f = {};
        struct statfs sfs;
        struct statx stx;

        if (statx(keep_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 ||
            fstatfs(keep_fd, &sfs) < 0)
                return EXIT_FAILURE;
        f.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
        f.mount_id = (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id <= INT_MAX ? (int) stx.stx_mnt_id : 0;
        snprintf(f.fstype, sizeof f.fstype, "%s", fs_type_from_magic((unsigned long) sfs.f_type));
        return write(pipe_fd, &f, sizeof f) == (ssize_t) sizeof f ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int root_facts_feed(const char *buf, size_t size, void *userdata) {
        if (size < sizeof(UnlistedRoot))
                return 0;
        memcpy(userdata, buf, sizeof(UnlistedRoot));
        return 1;
}

int unlisted_root_facts(int root_fd, int proc_fd, bool use_vfs, usec_t timeout, UnlistedRoot *ret) {
        UnlistedRoot f = {};
        int r;

        if (use_vfs && proc_fd >= 0 && root_facts_vfs(root_fd, proc_fd, &f) >= 0)
                goto done;
        r = bounded_child_run(root_fd, timeout, sizeof f, root_facts_work, root_facts_feed, &f);
        if (r < 0)
                return r;
        if (r == 0)
                return -EPROTO; /* the child failed or died */
        f.fstype[sizeof f.fstype - 1] = 0;
done:
        /* An overlay entry without its upperdir option would be planned as "nothing to write"
         * (plan.c): as an unknown type it is synced, which syncs its upper layer. */
        if (fs_class_from_fstype(f.fstype) == FS_CLASS_OVERLAY)
                snprintf(f.fstype, sizeof f.fstype, "unknown");
        *ret = f;
        return 0;
}

bool unlisted_root_listed(const MountTable *t, size_t n_own) {
        for (size_t i = 0; i < n_own && i < t->n_entries; i++)
                if (streq(t->entries[i].mount_point, "/"))
                        return true;
        return false;
}

int unlisted_add_root(int root_fd, int proc_fd, usec_t timeout, MountTable *t, size_t n_own) {
        UnlistedRoot f;
        int r;

        if (unlisted_root_listed(t, n_own))
                return 0;

        /* Not a mount point in our own table: a chroot. syncfs() on our root syncs its superblock
         * even so; the entry's mount id lets the worker check it opened that very mount. Never "ro":
         * statfs()'s ST_RDONLY is also set by a read-only mount of a writable superblock (a
         * read-only bind as our root), and syncfs() on a read-only superblock costs nothing. */
        r = unlisted_root_facts(root_fd, proc_fd, true, timeout, &f);
        if (r < 0)
                return r;
        return append_unlisted(t, "/", f.dev, f.mount_id, f.fstype, "(root directory)", false) < 0 ? -ENOMEM
                                                                                                   : 1;
}

static int read_dev_file(int sysfs_fd, const char *name, dev_t *ret) {
        _cleanup_free_ char *text = NULL;
        char path[PATH_MAX];
        unsigned ma, mi;
        int n = 0, r;

        if (strchr(name, '/') || name[0] == '.')
                return -EINVAL;
        snprintf(path, sizeof path, "class/block/%s/dev", name);
        r = read_full_file_at(sysfs_fd, path, 64, &text, NULL);
        if (r < 0)
                return r;
        if (sscanf(text, "%u:%u %n", &ma, &mi, &n) != 2 || text[n] != 0)
                return -EBADMSG;
        *ret = makedev(ma, mi);
        return 0;
}

/* Calls f(dir_fd, name, userdata) for each entry of dir_fd/path but "." and "..", at most max
 * entries. A missing directory, or dir_fd < 0, has none (absence is normal: a filesystem type not
 * loaded, no debugfs). A listing that cannot be had in full (open or readdir failing, more than max
 * entries) is a reason in why, naming what (desc) and that its superblocks were not all compared:
 * the view is incomplete. Returns f's first negative return, or -ENOMEM. */
static int foreach_entry(int dir_fd, const char *path, const char *desc, size_t max,
                         int (*f)(int dir_fd, const char *name, void *userdata), void *userdata,
                         Reasons *why) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_strv_free_ char **names = NULL;
        size_t n = 0;
        int r;

        if (dir_fd < 0)
                return 0;
        r = opendir_at(dir_fd, path, &d);
        if (r == -ENOENT)
                return 0;
        /* The names first, so that a listing cut short is said before what its entries say (the
         * reasons are bounded too). */
        while (r >= 0) {
                struct dirent *de;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        r = errno > 0 ? -errno : 1;
                        break;
                }
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (n >= max) {
                        r = -E2BIG;
                        break;
                }
                r = strv_extend(&names, &n, de->d_name);
        }
        if (r == -ENOMEM)
                return r;
        if (r == -E2BIG)
                r = reasons_add(why,
                                "%s lists more than %zu entries: superblocks it shows beyond them "
                                "were not compared with the mount tables",
                                desc, max);
        else if (r < 0)
                r = reasons_add(why,
                                "%s could not be listed in full (%s): superblocks it shows were "
                                "not all compared with the mount tables",
                                desc, strerror(-r));
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = f(dir_fd, names[i], userdata);
        return r < 0 ? r : 0;
}

typedef struct SysfsScan {
        const MountTable *t;
        HiddenSet *h;
        Reasons *why;
        const char *type;
} SysfsScan;

/* The entries of sysfs fs/<type>/ that are not a filesystem: any other one is, and one that cannot be
 * read is a reason, never taken for one of these. */
static bool sysfs_fs_not_a_filesystem(const char *name) {
        return name[0] == '.' || STR_IN_SET(name, "features", "stats", "extra", "debug");
}

static int scan_sysfs_entry(int sysfs_fd, const char *name, void *userdata) {
        SysfsScan *x = userdata;
        char source[300];
        dev_t dev;

        if (sysfs_fs_not_a_filesystem(name))
                return 0;
        if (read_dev_file(sysfs_fd, name, &dev) < 0)
                return reasons_add(x->why,
                                   "sysfs fs/%s/%s: a filesystem whose device number cannot be read "
                                   "(class/block/%s/dev): it was not compared with the mount tables",
                                   x->type, name, name);
        if (table_has_dev(x->t, dev))
                return 0;
        snprintf(source, sizeof source, "/dev/%s", name);
        return hidden_add(x->h, dev, x->type, source, "sysfs fs/%s/%s", x->type, name);
}

int unlisted_scan_sysfs(int sysfs_fd, const MountTable *t, HiddenSet *h, Reasons *why) {
        const FsType *types;
        size_t n_types;

        types = fs_type_table(&n_types);
        for (size_t k = 0; k < n_types; k++) {
                SysfsScan x = { .t = t, .h = h, .why = why, .type = types[k].name };
                char path[32], desc[48];
                int r;

                if (!types[k].sysfs_lists)
                        continue;
                snprintf(path, sizeof path, "fs/%s", types[k].name);
                snprintf(desc, sizeof desc, "sysfs %s", path);
                r = foreach_entry(sysfs_fd, path, desc, 4096, scan_sysfs_entry, &x, why);
                if (r < 0)
                        return r;
        }
        return 0;
}

typedef struct BdiScan {
        const MountTable *t;
        HiddenSet *h;
        BdiTypeCounts types; /* bdis named after a filesystem type ("<type>-<n>") */
        bool types_overflow;
} BdiScan;

/* "0:N": the per-superblock bdi of a filesystem without a block device (FUSE, NFS, …); block disks'
 * bdis exist whether mounted or not, btrfs-N is checked by bdi. "MAJ:MIN-fuseblk": the bdi of a
 * fuseblk superblock (ntfs-3g, fuse2fs: fuse_bdi_init()), whose device is the block device MAJ:MIN
 * and which no sysfs listing shows. "<type>-<n>": counted per type (unlisted_scan_bdis()). */
static int scan_bdi_entry(int debugfs_fd, const char *name, void *userdata) {
        BdiScan *x = userdata;
        char type[BDI_TYPE_MAX];
        dev_t dev;

        switch (bdi_name_kind(name, &dev, type)) {
        case BDI_NAME_DEVICE:
                if (major(dev) != 0 || table_has_dev(x->t, dev))
                        return 0;
                return hidden_add(x->h, dev, "unknown", NULL,
                                  "debugfs bdi/%s, a filesystem without a block device", name);
        case BDI_NAME_FUSEBLK:
                if (table_has_dev(x->t, dev))
                        return 0;
                return hidden_add(x->h, dev, "fuseblk", NULL,
                                  "debugfs bdi/%s, a FUSE filesystem on a block device", name);
        case BDI_NAME_TYPE:
                /* btrfs: each filesystem's bdi is compared through sysfs (unlisted_check_btrfs());
                 * mtd: the MTD devices' own, no filesystem's (jffs2 and ubifs are counted by their
                 * modules, fs-module). */
                if (!streq(type, "btrfs") && !streq(type, "mtd") &&
                    bdi_type_counts_add(&x->types, type, name) < 0)
                        x->types_overflow = true;
                return 0;
        case BDI_NAME_OTHER:
                return 0;
        }
        return 0;
}

static int cmp_dev(const dev_t *a, const dev_t *b) {
        return CMP(*a, *b);
}

/* The superblocks of filesystem type (subtypes included) in t: distinct devices. -ENOMEM. */
static ssize_t table_count_type(const MountTable *t, const char *type) {
        _cleanup_free_ dev_t *devs = NULL;
        size_t n = 0, distinct = 0;

        devs = calloc(MAX(t->n_entries, 1), sizeof(dev_t));
        if (!devs)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_entries; i++)
                if (fstype_is(t->entries[i].fstype, type))
                        devs[n++] = t->entries[i].dev;
        typesafe_qsort(devs, n, cmp_dev);
        for (size_t i = 0; i < n; i++)
                distinct += i == 0 || devs[i] != devs[i - 1];
        return (ssize_t) distinct;
}

int unlisted_scan_bdis(int debugfs_fd, const MountTable *t, HiddenSet *h, Reasons *why) {
        _cleanup_free_ BdiScan *x = calloc(1, sizeof(BdiScan));
        int r;

        if (!x)
                return -ENOMEM;
        *x = (BdiScan) { .t = t, .h = h };
        r = foreach_entry(debugfs_fd, "bdi", "debugfs bdi", 65536, scan_bdi_entry, x, why);
        if (r < 0)
                return r;
        /* A bdi named after its type does not give its superblock's device (review G, G3): one more
         * of a type than the tables hold superblocks of it is a superblock no table shows, which no
         * search can reach by device. */
        for (size_t i = 0; i < x->types.n && r >= 0; i++) {
                ssize_t n = table_count_type(t, x->types.v[i].type);

                if (n < 0)
                        return (int) n;
                if (x->types.v[i].n > (size_t) n)
                        r = reasons_add(
                                why,
                                "debugfs lists %u bdis named after the filesystem type '%s' (such as "
                                "bdi/%s), and the mount tables %zu superblocks of it: a filesystem no "
                                "mount table shows, whose device its bdi's name does not give",
                                x->types.v[i].n, x->types.v[i].type, x->types.v[i].name, (size_t) n);
        }
        if (r >= 0 && x->types_overflow)
                r = reasons_add(why,
                                "debugfs lists bdis named after more than %u filesystem types: those beyond "
                                "them were not compared with the mount tables",
                                BDI_TYPES_MAX);
        return r < 0 ? r : 0;
}

int unlisted_parse_ns_root(const char *root, uint64_t *ret) {
        unsigned long long v;
        int n = 0;

        if (!root || sscanf(root, "mnt:[%llu]%n", &v, &n) != 1 || root[n] != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* nsfs mount namespace iteration (Linux 6.12, include/uapi/linux/nsfs.h). */
struct ss_mnt_ns_info {
        uint32_t size;
        uint32_t nr_mounts;
        uint64_t mnt_ns_id;
};
#define SS_NS_MNT_GET_NEXT _IOR(0xb7, 11, struct ss_mnt_ns_info)
#define SS_NS_MNT_GET_PREV _IOR(0xb7, 12, struct ss_mnt_ns_info)

static int cmp_u64(const uint64_t *a, const uint64_t *b) {
        return CMP(*a, *b);
}

/* Calls cb(ns_fd, ino, userdata) for every mount namespace the kernel lists but ours: from our own
 * namespace backwards to the first, then forwards to the last. Stops at cb's first nonzero return
 * and returns it; 0 at the end; negative errno when the list cannot be read (see
 * unlisted_list_namespaces()). */
static int ns_foreach(int proc_fd, int (*cb)(int ns_fd, uint64_t ino, void *userdata), void *userdata) {
        static const unsigned long dirs[] = { SS_NS_MNT_GET_PREV, SS_NS_MNT_GET_NEXT };
        _cleanup_close_ int self_fd = -EBADF;

        self_fd = openat(proc_fd, "self/ns/mnt", O_RDONLY | O_CLOEXEC);
        if (self_fd < 0)
                return negative_errno();
        for (size_t d = 0; d < ELEMENTSOF(dirs); d++)
                for (int fd = self_fd;;) {
                        struct ss_mnt_ns_info info = { .size = sizeof info };
                        struct stat st;
                        int next = ioctl(fd, dirs[d], &info), r = negative_errno();

                        if (fd != self_fd)
                                safe_close(fd);
                        if (next < 0 && r == -ENOENT)
                                break; /* the end of the list */
                        if (next < 0)
                                return r; /* -ENOTTY, -EINVAL: before 6.12; -EPERM: not allowed to see all */
                        r = fstat(next, &st) < 0 ? negative_errno()
                                                 : cb(next, (uint64_t) st.st_ino, userdata);
                        if (r != 0) {
                                safe_close(next);
                                return r;
                        }
                        fd = next;
                }
        return 0;
}

bool ns_cover_mount(const NsCover *c, dev_t dev, const char *fstype) {
        size_t lo = 0, hi = c->t->n_entries;
        bool reachable = false;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (c->t->entries[c->by_dev[mid]].dev < dev)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == c->t->n_entries || c->t->entries[c->by_dev[lo]].dev != dev)
                /* In no table of ours: nothing to sync only for a filesystem without backing store. */
                return fs_class_from_fstype(fstype) == FS_CLASS_PSEUDO;
        for (size_t i = lo; i < c->t->n_entries && c->t->entries[c->by_dev[i]].dev == dev; i++) {
                size_t k = c->by_dev[i];

                /* Listed as another type: its number went to another filesystem between the reads
                 * (sample.h, type_conflict), which only the merged tables tell. */
                if (!streq(c->t->entries[k].fstype, fstype))
                        return false;
                reachable = reachable || c->reachable[k];
        }
        return reachable || fs_class_from_fstype(fstype) == FS_CLASS_PSEUDO;
}

/* Calls cb(sm, size, userdata) for every mount of namespace ns_id that statmount still finds (one
 * unmounted since the listing is left out), asking for want. Stops at cb's first nonzero return, and
 * with -ETIME once until (CLOCK_MONOTONIC, 0: none) has passed: the main process's own work, one
 * system call per mount, which no child's bound covers (review AE, H1). */
static int ns_foreach_mount(uint64_t ns_id, uint64_t want, usec_t until,
                            int (*cb)(const struct ss_statmount *sm, size_t size, void *userdata),
                            void *userdata) {
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_free_ struct ss_statmount *sm = NULL;
        const size_t sm_size = 16384;
        size_t n;
        int r;

        if (until > 0 && now(CLOCK_MONOTONIC) >= until)
                return -ETIME;
        sm = malloc(sm_size);
        if (!sm)
                return -ENOMEM;
        r = mount_table_list_ids(ns_id, &ids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                if (until > 0 && i % 16 == 15 && now(CLOCK_MONOTONIC) >= until)
                        return -ETIME;
                struct ss_mnt_id_req q = {
                        .size = SS_MNT_ID_REQ_SIZE_VER1,
                        .mnt_id = ids[i],
                        .param = want,
                        .mnt_ns_id = ns_id,
                };

                if (ss_statmount(&q, sm, sm_size, 0) < 0) {
                        if (errno == ENOENT)
                                continue; /* unmounted meanwhile */
                        return negative_errno();
                }
                r = cb(sm, sm_size, userdata);
                if (r != 0)
                        return r;
        }
        return 0;
}

#define NS_COVER_WANT \
        (SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_FS_TYPE | SS_STATMOUNT_FS_SUBTYPE | SS_STATMOUNT_SUPPORTED_MASK)

static int ns_cover_one(const struct ss_statmount *sm, size_t size, void *userdata) {
        const NsCover *c = userdata;
        char fstype[256];
        const char *type, *subtype;

        /* Without the kernel's word that it reports subtypes (6.15), "fuse" alone may be "fuse.sshfs". */
        if (!(sm->mask & SS_STATMOUNT_SUPPORTED_MASK) ||
            (sm->supported_mask & (NS_COVER_WANT & ~SS_STATMOUNT_SUPPORTED_MASK)) !=
                    (NS_COVER_WANT & ~SS_STATMOUNT_SUPPORTED_MASK) ||
            (sm->mask & (SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_FS_TYPE)) !=
                    (SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_FS_TYPE))
                return -EOPNOTSUPP;
        if (sm->fs_type >= size - sizeof *sm ||
            ((sm->mask & SS_STATMOUNT_FS_SUBTYPE) && sm->fs_subtype >= size - sizeof *sm))
                return -EBADMSG;
        type = sm->str + sm->fs_type;
        subtype = (sm->mask & SS_STATMOUNT_FS_SUBTYPE) ? sm->str + sm->fs_subtype : "";
        if ((size_t) snprintf(fstype, sizeof fstype, "%s%s%s", type, *subtype ? "." : "", subtype) >=
            sizeof fstype)
                return 1; /* no type of ours is that long */
        return ns_cover_mount(c, makedev(sm->sb_dev_major, sm->sb_dev_minor), fstype) ? 0 : 1;
}

int unlisted_namespace_covered(int ns_fd, const NsCover *c) {
        uint64_t ns_id;
        int r;

        r = mount_table_namespace_id(ns_fd, &ns_id);
        if (r < 0)
                return r;
        r = ns_foreach_mount(ns_id, NS_COVER_WANT, c->until, ns_cover_one, (void *) c);
        return r < 0 ? r : r == 0;
}

typedef struct NsList {
        uint64_t *inos, *covered;
        size_t n, n_covered, max;
        const NsCover *cover;
} NsList;

static int ns_list_one(int ns_fd, uint64_t ino, void *userdata) {
        NsList *l = userdata;
        int r;

        if (l->n + l->n_covered >= l->max)
                return -E2BIG;
        r = l->cover ? unlisted_namespace_covered(ns_fd, l->cover) : 0;
        if (r == -ENOMEM || r == -ETIME)
                return r;
        if (r == -EOPNOTSUPP)
                l->cover = NULL; /* a kernel before 6.15: so for every namespace */
        if (r > 0)
                l->covered[l->n_covered++] = ino;
        else
                l->inos[l->n++] = ino;
        return 0;
}

int unlisted_list_namespaces(int proc_fd, size_t max, const NsCover *cover, uint64_t **ret, size_t *ret_n,
                             uint64_t **ret_covered, size_t *ret_n_covered) {
        _cleanup_free_ uint64_t *inos = NULL, *covered = NULL;
        NsList l = { .max = max, .cover = cover };
        int r;

        l.inos = inos = malloc(MAX(max, 1) * sizeof(uint64_t));
        l.covered = covered = malloc(MAX(cover ? max : 0, 1) * sizeof(uint64_t));
        if (!inos || !covered)
                return -ENOMEM;
        r = ns_foreach(proc_fd, ns_list_one, &l);
        if (r < 0)
                return r;
        typesafe_qsort(inos, l.n, cmp_u64);
        typesafe_qsort(covered, l.n_covered, cmp_u64);
        *ret = TAKE_PTR(inos);
        *ret_n = l.n;
        if (ret_covered) {
                *ret_covered = TAKE_PTR(covered);
                *ret_n_covered = l.n_covered;
        }
        return 0;
}

int unlisted_u64_append(uint64_t **v, size_t *n, uint64_t x) {
        if (*n % 16 == 0) {
                uint64_t *w = reallocarray(*v, *n + 16, sizeof(uint64_t));
                if (!w)
                        return -ENOMEM;
                *v = w;
        }
        (*v)[(*n)++] = x;
        return 0;
}

typedef struct NsUnseen {
        const uint64_t *seen;
        size_t n_seen;
        const MountTable *t;
        usec_t until;
        HiddenSet *h;
        Reasons *why;
} NsUnseen;

static int ns_scan_unseen_one(int ns_fd, uint64_t ino, void *userdata) {
        NsUnseen *x = userdata;
        char desc[128];
        int r;

        for (size_t i = 0; i < x->n_seen; i++)
                if (x->seen[i] == ino)
                        return 0;
        snprintf(desc, sizeof desc,
                 "mount namespace mnt:[%llu] (listed by the kernel, no process in it seen)",
                 (unsigned long long) ino);
        r = unlisted_scan_namespace(ns_fd, desc, x->t, x->until, x->h);
        if (r == -ENOMEM)
                return r;
        if (r == -ETIME) /* the rest too: said once */
                return reasons_add(x->why, "%s and any after it: not listed within the bound", desc) < 0
                               ? -ENOMEM
                               : -ETIME;
        if (r < 0)
                return reasons_add(x->why, "%s: its mounts could not be listed (%s)", desc, strerror(-r));
        /* Listed in full: an nsfs mount that keeps it needs no second look (unlisted_scan_nsfs()). */
        return unlisted_u64_append(&x->h->ns_listed, &x->h->n_ns_listed, ino);
}

int unlisted_scan_unseen_namespaces(int proc_fd, const uint64_t *seen, size_t n_seen, const MountTable *t,
                                    usec_t until, HiddenSet *h, Reasons *why) {
        NsUnseen x = { .seen = seen, .n_seen = n_seen, .t = t, .until = until, .h = h, .why = why };
        int r;

        r = ns_foreach(proc_fd, ns_scan_unseen_one, &x);
        if (r == -ENOMEM)
                return r;
        if (r == -ETIME) /* said */
                return 0;
        if (r < 0 && reasons_add(why,
                                 "the kernel's list of mount namespaces could not be read again (%s): "
                                 "namespaces with no process seen were not scanned",
                                 strerror(-r)) < 0)
                return -ENOMEM;
        return 0;
}

typedef struct NsHide {
        const char *desc;
        const MountTable *t;
        HiddenSet *h;
} NsHide;

static int ns_hide_one(const struct ss_statmount *sm, size_t size, void *userdata) {
        NsHide *x = userdata;
        const char *fstype, *mp;
        dev_t dev;

        if ((sm->mask & (SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_FS_TYPE)) !=
            (SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_FS_TYPE))
                return -EOPNOTSUPP;
        (void) size;
        fstype = sm->str + sm->fs_type;
        mp = (sm->mask & SS_STATMOUNT_MNT_POINT) ? sm->str + sm->mnt_point : "?";
        dev = makedev(sm->sb_dev_major, sm->sb_dev_minor);
        if (fs_class_from_fstype(fstype) == FS_CLASS_PSEUDO || table_has_dev(x->t, dev))
                return 0;
        return hidden_add(x->h, dev, fstype, NULL, "%s, at %s", x->desc, mp);
}

int unlisted_scan_namespace(int ns_fd, const char *desc, const MountTable *t, usec_t until, HiddenSet *h) {
        NsHide x = { .desc = desc, .t = t, .h = h };
        uint64_t ns_id;
        int r;

        r = mount_table_namespace_id(ns_fd, &ns_id);
        if (r < 0)
                return r;
        return ns_foreach_mount(ns_id, SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_MNT_POINT | SS_STATMOUNT_FS_TYPE,
                                until, ns_hide_one, &x);
}

int unlisted_hide_entries(const MountTable *entries, const char *desc, const MountTable *t, HiddenSet *h) {
        for (size_t i = 0; i < entries->n_entries; i++) {
                const MountEntry *e = &entries->entries[i];
                int r;

                if (fs_class_from_fstype(e->fstype) == FS_CLASS_PSEUDO || table_has_dev(t, e->dev))
                        continue;
                r = hidden_add(h, e->dev, e->fstype, e->source, "%s, at %s", desc, e->mount_point);
                if (r < 0)
                        return r;
        }
        return 0;
}

int unlisted_report(const HiddenSet *h, Reasons *why) {
        char how[FORMAT_TIMESPAN_MAX + 128];

        if (h->reach_error == -ETIMEDOUT) {
                char ts[FORMAT_TIMESPAN_MAX];
                snprintf(how, sizeof how,
                         "and the search for a process holding a file on it did not finish within %s",
                         format_timespan(ts, sizeof ts, h->reach_timeout));
        } else if (h->reach_error < 0)
                snprintf(how, sizeof how, "and the search for a process holding a file on it failed: %s",
                         strerror(-h->reach_error));
        else
                snprintf(how, sizeof how, "and no process holds a file on it");
        if (h->n_dropped > 0 &&
            reasons_add(why, "%zu more superblocks are mounted but in no scanned mount table", h->n_dropped) <
                    0)
                return -ENOMEM;
        for (size_t i = 0; i < h->n; i++)
                if (reasons_add(why,
                                "%s superblock %u:%u%s%s%s is mounted but in no scanned mount table "
                                "(%s), %s",
                                streq(h->v[i].fstype, "unknown") ? "a" : h->v[i].fstype, major(h->v[i].dev),
                                minor(h->v[i].dev), h->v[i].source ? " (" : "",
                                h->v[i].source ? h->v[i].source : "", h->v[i].source ? ")" : "", h->v[i].what,
                                how) < 0)
                        return -ENOMEM;
        return 0;
}

typedef struct BtrfsCheck {
        char *const *bdi_names;
        size_t n_bdi_names;
        Reasons *why;
} BtrfsCheck;

static int check_btrfs_entry(int sysfs_fd, const char *fs, void *userdata) {
        const BtrfsCheck *x = userdata;
        char path[PATH_MAX], link[PATH_MAX];
        const char *name;
        ssize_t k;

        if (sysfs_fs_not_a_filesystem(fs))
                return 0;
        snprintf(path, sizeof path, "fs/btrfs/%s/bdi", fs);
        k = readlinkat(sysfs_fd, path, link, sizeof link - 1);
        if (k < 0)
                return reasons_add(x->why,
                                   "btrfs filesystem %s: its bdi cannot be read (sysfs fs/btrfs/%s/bdi: %s), "
                                   "so it was not compared with the mount tables",
                                   fs, fs, strerror(errno));
        link[k] = 0;
        name = strrchr(link, '/');
        name = name ? name + 1 : link;
        for (size_t i = 0; i < x->n_bdi_names; i++)
                if (streq_ptr(x->bdi_names[i], name))
                        return 0;
        return reasons_add(x->why,
                           "btrfs filesystem %s (bdi %s) is mounted but in no scanned mount table "
                           "(sysfs fs/btrfs/%s)",
                           fs, name, fs);
}

int unlisted_check_btrfs(int sysfs_fd, char *const *bdi_names, size_t n_bdi_names, Reasons *why) {
        BtrfsCheck x = { .bdi_names = bdi_names, .n_bdi_names = n_bdi_names, .why = why };

        return foreach_entry(sysfs_fd, "fs/btrfs", "sysfs fs/btrfs", 4096, check_btrfs_entry, &x, why);
}
