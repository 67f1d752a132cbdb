/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Unlisted superblocks: filesystems the kernel's suspend sync writes although no scanned mount
 * table shows them. Our own root when it is not a mount point (a chroot: mountinfo lists only
 * mounts below the root); superblocks the kernel lists under sysfs fs/<type>/ (ext4, xfs, f2fs,
 * btrfs: detached ones included) and anonymous bdis under debugfs bdi/ that no mount table has;
 * mounts of mount namespaces kept alive
 * only by an nsfs bind mount (listmount(2)/statmount(2), Linux 6.8+, another namespace since 6.11).
 * What can be reached is added to the mount table as an "unlisted" entry whose mount point is the
 * path the worker opens (our root "/", or /proc/PID/fd/N, /proc/PID/cwd of a process holding a file
 * on it, found by a child bounded in time); what cannot is described in a list of reasons that makes
 * the sample incomplete.
 * Loaders take the root dir fd (proc/) and a sysfs dir fd, so fixture trees work.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "mount-table.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define REASONS_MAX 32U

/* Why a sample is incomplete: human-readable sentences, bounded (n_dropped counts the rest). */
typedef struct Reasons {
        char **v; /* strv (shared/strv.h), n of them */
        size_t n;
        size_t n_dropped;
} Reasons;

int reasons_add(Reasons *r, const char *fmt, ...) _printf_(2, 3);
void reasons_done(Reasons *r);

/* A superblock found outside every scanned table, not yet reached. */
typedef struct HiddenSb {
        dev_t dev;
        char *fstype;
        char *what;   /* where it was seen: "sysfs fs/ext4/loop3", "mount namespace …" */
        char *source; /* "/dev/loop3" or NULL */
} HiddenSb;

#define HIDDEN_MAX 4096U

typedef struct HiddenSet {
        HiddenSb *v;
        size_t n;
        size_t n_dropped;     /* found beyond HIDDEN_MAX: counted, not kept */
        int reach_error;      /* unlisted_reach() did not finish: -ETIMEDOUT (after reach_timeout) or
                               * why it failed; 0 when it did (or found nothing to look for) */
        usec_t reach_timeout; /* its bound */
        uint64_t *ns_listed;  /* mount namespaces (nsfs inode) whose whole mount list was compared
                               * through listmount (unlisted_scan_unseen_namespaces()) */
        size_t n_ns_listed;
} HiddenSet;

void hidden_set_done(HiddenSet *h);
/* Drops the superblocks t has after all (found while t was still being filled). */
void hidden_set_prune(HiddenSet *h, const MountTable *t);

/* Our root's superblock and mount, for an entry "/" when it is no mount point of our table. */
typedef struct UnlistedRoot {
        dev_t dev;
        int mount_id;    /* old-style (mountinfo) id, 0: not known */
        char fstype[64]; /* "unknown" for a type without a name or an overlay (synced all the same) */
} UnlistedRoot;

/* The bound on unlisted_root_facts()'s child: the smaller of this and the search's bound. */
#define UNLISTED_ROOT_TIMEOUT (250U * USEC_PER_MSEC)

/* root_fd's mount: from the VFS alone where the kernel has statmount (Linux 6.8+: the old mount id
 * from proc_fd's self/fdinfo, that mount found through our namespace's listmount, or as the parent of
 * a mount below our root, such as our proc, in a chroot), else (or !use_vfs: tests) from statx() and
 * fstatfs() in a bounded child (shared/bounded-child.h), since both may call into the filesystem (an
 * RPC on 9p, CIFS or NFS, a request a frozen FUSE server never answers). Returns 0, or -ETIMEDOUT
 * (the child abandoned after timeout), -EPROTO (it failed), another negative errno. */
int unlisted_root_facts(int root_fd, int proc_fd, bool use_vfs, usec_t timeout, UnlistedRoot *ret);

/* Whether entries[0..n_own) (our own mountinfo) shows a mount at "/" (pure). */
bool unlisted_root_listed(const MountTable *t, size_t n_own);

/* Whether entries[0..n_own) (our own mountinfo) shows a mount at "/". When not, appends an unlisted
 * entry for "/" (unlisted_root_facts(), its child bounded by timeout) and returns 1 (a restricted
 * view); 0 when "/" is listed; negative errno. */
int unlisted_add_root(int root_fd, int proc_fd, usec_t timeout, MountTable *t, size_t n_own);

/* Superblocks under sysfs fs/{ext4,xfs,f2fs}/<block device> (device number from
 * class/block/<name>/dev) that no entry of t has. sysfs_fd < 0 or no such directory: nothing. A
 * directory that cannot be listed in full (an error, more than 4096 entries) is a reason in why. */
int unlisted_scan_sysfs(int sysfs_fd, const MountTable *t, HiddenSet *h, Reasons *why);

/* Anonymous per-superblock bdis under debugfs bdi/ ("0:N": FUSE, NFS, …) whose device no entry of t
 * has. debugfs_fd < 0: nothing. A listing not had in full (more than 65536) is a reason in why. */
int unlisted_scan_bdis(int debugfs_fd, const MountTable *t, HiddenSet *h, Reasons *why);

/* nsfs mounts (fstype nsfs, root "mnt:[ino]") in t of mount namespaces that were not scanned (ino not
 * in scanned_inos nor in h->ns_listed): their mounts are listed with listmount/statmount; superblocks
 * (not pseudo filesystems) that t does not have go into h. When the namespace cannot be listed (kernel
 * before 6.11, no permission), a reason. ns_of/ns_pids locate an entry of another namespace
 * (/proc/PID/root/<mount point>); ns_of may be NULL (all ours). The path is walked from the lookup
 * cache only (open_cached_at()): one that would need I/O or a server's answer is a reason too, and so
 * is every path through /proc/PID/root (a magic link is never followed from the cache). With the
 * kernel's list of namespaces (6.12+) these namespaces were listed already (h->ns_listed). */
int unlisted_scan_nsfs(int root_fd, const MountTable *t, const unsigned *ns_of, const int *ns_pids,
                       const uint64_t *scanned_inos, size_t n_scanned, usec_t until, HiddenSet *h,
                       Reasons *why);

/* Our own mount table as another namespace's mounts are compared with: its entries sorted by device
 * (by_dev: indices into t), and those a path of ours reaches (reachable: not under another mount, not
 * an unlisted entry). */
typedef struct NsCover {
        const MountTable *t;
        const size_t *by_dev;
        const bool *reachable;
        usec_t until; /* CLOCK_MONOTONIC: -ETIME past it (0: no bound) */
} NsCover;

/* Whether a mount of superblock dev, of type fstype ("type.subtype"), in another namespace adds
 * nothing to our own table: t lists that superblock, under that type only, through a mount a path of
 * ours reaches (or it is a pseudo filesystem), or t lacks it and it is a pseudo filesystem. Pure. */
bool ns_cover_mount(const NsCover *c, dev_t dev, const char *fstype);

/* Whether every mount of the namespace behind nsfs file ns_fd passes ns_cover_mount() (listmount/
 * statmount by namespace id, asking for the device and type only): 1 yes, 0 no (at the first that
 * does not), negative errno when it cannot be told (-EOPNOTSUPP before Linux 6.15, whose statmount
 * does not say whether it reports subtypes; -ETIME past c->until: one statmount(2) per mount, and
 * every copy of our namespace, every service's PrivateTmp=, every user's own, has all of ours). */
int unlisted_namespace_covered(int ns_fd, const NsCover *c);

/* The inode numbers of every mount namespace but ours (proc_fd's self/ns/mnt) that the kernel lists
 * (nsfs ioctls NS_MNT_GET_PREV/NS_MNT_GET_NEXT, Linux 6.12+: every mount namespace on the system that
 * is alive, when the caller is in the initial PID namespace with CAP_SYS_ADMIN in the initial user
 * namespace), sorted, at most max in all. With cover, those unlisted_namespace_covered() answers 1
 * for go to *ret_covered instead (sorted; may be NULL without cover). -ENOTTY or -EINVAL before 6.12,
 * -EPERM without that privilege, -ENOENT or -ENOTTY when proc_fd is not a real /proc (fixtures),
 * -E2BIG over max, -ETIME past cover->until, -ENOMEM. */
int unlisted_list_namespaces(int proc_fd, size_t max, const NsCover *cover, uint64_t **ret, size_t *ret_n,
                             uint64_t **ret_covered, size_t *ret_n_covered);

/* The mount namespaces the kernel lists (as unlisted_list_namespaces()) whose inode number is not in
 * seen (the namespaces whose members the walk over proc found, at most SAMPLE_MAX_NAMESPACES): kept by an fd only, or their
 * processes in another PID namespace. Each is listed as unlisted_scan_namespace() does, into h; one
 * that cannot be listed, or a list that cannot be read again, becomes a reason, and so do those left
 * once until (CLOCK_MONOTONIC, 0: none) has passed. -ENOMEM or 0. */
int unlisted_scan_unseen_namespaces(int proc_fd, const uint64_t *seen, size_t n_seen, const MountTable *t,
                                    usec_t until, HiddenSet *h, Reasons *why);

/* Lists every mount of the namespace behind nsfs file ns_fd (listmount/statmount by namespace id,
 * Linux 6.11+); superblocks (not pseudo filesystems) that t lacks go into h, described as
 * "<desc>, at <mount point>". -ENOSYS, -EINVAL, -ENOTTY on older kernels; -ETIME once until
 * (CLOCK_MONOTONIC, 0: none) has passed. */
int unlisted_scan_namespace(int ns_fd, const char *desc, const MountTable *t, usec_t until, HiddenSet *h);

/* The same for mounts already listed (mount_table_keep_below()'s outside ones): superblocks (not
 * pseudo filesystems) that t lacks go into h as "<desc>, at <mount point>". 0 or -ENOMEM. */
int unlisted_hide_entries(const MountTable *entries, const char *desc, const MountTable *t, HiddenSet *h);

/* The bound on unlisted_reach() used by the verbs (a quarter of a shorter DeadlineSec=). Measured
 * (sanitizer build, fork included): 4 ms over 85 processes, 135 ms over 54,000 open files. */
#define UNLISTED_REACH_TIMEOUT (1U * USEC_PER_SEC)

/* How unlisted_reach() looks at proc/PID/<name>: statx(2) of the file behind the magic link, with
 * STATX_TYPE and STATX_MNT_ID. Tests put in one that blocks like a dead server. */
typedef int (*UnlistedStatFn)(int proc_fd, const char *path, struct statx *ret);

/* Looks for a process (proc/PID/{cwd,root,fd/N}, regular files and directories only, at most
 * 65536 fds) holding a file on each hidden superblock; appends an unlisted entry for each one found
 * (mount point "/proc/PID/fd/N", mount id of that file's mount so the worker notices a reused fd
 * number) to t and drops it from h. statx with AT_STATX_DONT_SYNC is only a hint (CIFS and 9p may
 * still ask their server), so the scan runs in a forked child (shared/bounded-child.h) that sends
 * each hit back; what did not arrive within timeout stays in h, with h->reach_error = -ETIMEDOUT
 * (another error of the child, or -EPROTO when it died, the same way), which unlisted_report() puts
 * into the reasons. Nothing is forked when h is empty. stat_fn NULL: statx(2). Returns the number
 * reached, or -ENOMEM. */
int unlisted_reach(int root_fd, usec_t timeout, UnlistedStatFn stat_fn, HiddenSet *h, MountTable *t);

/* One reason per superblock left in h: that no process holds a file on it, or that the search for one
 * did not finish within its bound or failed (h->reach_error). */
int unlisted_report(const HiddenSet *h, Reasons *why);

/* btrfs: filesystems under sysfs fs/btrfs/<uuid>/ whose bdi (the 'bdi' link) is none of bdi_names
 * (the sampled btrfs superblocks' bdis) give a reason each; so does a listing not had in full. */
int unlisted_check_btrfs(int sysfs_fd, char *const *bdi_names, size_t n_bdi_names, Reasons *why);
