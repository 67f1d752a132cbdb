/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sample-ns.h"
#include "shared/dirent-util.h"
#include "shared/fileio.h"
#include "shared/parse-util.h"
#include "shared/proc-util.h"
#include "shared/sort-util.h"
#include "unlisted-internal.h"

static int parse_ns_link(const char *link, uint64_t *ret) {
        unsigned long long v;
        int n = 0;

        if (sscanf(link, "mnt:[%llu]%n", &v, &n) != 1 || link[n] != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

int sample_read_ns(int proc_fd, const char *pid, uint64_t *ret) {
        char path[64], link[64];
        ssize_t n;

        if (strlen(pid) > 20)
                return -EINVAL;
        snprintf(path, sizeof path, "%.20s/ns/mnt", pid);
        n = readlinkat(proc_fd, path, link, sizeof link - 1);
        if (n < 0)
                return negative_errno();
        link[n] = 0;
        return parse_ns_link(link, ret);
}
/* A candidate process for reading a namespace's mounts: one whose root is the namespace's root
 * ("/" as seen from us) shows all of them; a chrooted one only those below its root. */
typedef struct NsCandidate {
        uint64_t ino;
        unsigned pid, alt_pid; /* alt: another member, tried when pid exited meanwhile */
        bool chrooted;
        bool gone;      /* every member exited or left before its table was read */
        bool foreign;   /* owned by another user namespace than ours (ns_foreign_userns()) */
        bool ours;      /* owned by ours, as far as could be told (ns_order()) */
        char root[128]; /* its root (proc/PID/root link), when chrooted */
} NsCandidate;

static bool proc_root_chrooted(int proc_fd, unsigned pid, char *ret, size_t size) {
        char path[64];
        ssize_t n;

        snprintf(path, sizeof path, "%u/root", pid);
        n = readlinkat(proc_fd, path, ret, size - 1);
        if (n < 0) {
                snprintf(ret, size, "?");
                return true;
        }
        ret[n] = 0;
        return !streq(ret, "/");
}

/* The kernel's own list of the other mount namespaces (unlisted_list_namespaces(), Linux 6.12+): a
 * process can only be in one of those, or in one made after the list was taken (as it could be made
 * after a whole walk), so the walk over proc stops once each has an unchrooted member. */
typedef struct NsKnown {
        uint64_t *inos; /* sorted */
        bool *found;    /* inos[i] has an unchrooted candidate */
        size_t n, n_found;
        bool stopped; /* the walk stopped early: alt_pid was not looked for */
} NsKnown;

/* The index of x in v (n values, sorted), or n when it is not there. */
static size_t u64_sorted_find(const uint64_t *v, size_t n, uint64_t x) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (v[mid] == x)
                        return mid;
                if (v[mid] < x)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return n;
}

static void ns_known_found(NsKnown *k, uint64_t ino) {
        size_t i = k ? u64_sorted_find(k->inos, k->n, ino) : 0;

        if (!k || i == k->n)
                return;
        if (!k->found[i])
                k->n_found++;
        k->found[i] = true;
}

/* One candidate per mount namespace other than 'self', from the processes in proc (at most
 * SAMPLE_MAX_NAMESPACES; *ret_overflow says there were more). known: NULL, or the namespaces the
 * kernel lists, to stop early. *ret_walk_error: the error that ended the listing of proc early (the
 * candidates found until then are returned), or 0. */
static int ns_candidates(int proc_fd, uint64_t self, NsKnown *known, const uint64_t *covered,
                         size_t n_covered, usec_t until, NsCandidate **ret, size_t *ret_n, bool *ret_overflow,
                         int *ret_walk_error) {
        _cleanup_free_ NsCandidate *cand = NULL;
        _cleanup_dir_batch_ DirBatch d = { .fd = -EBADF };
        const struct dirent64 *de;
        size_t n_cand = 0, n_seen = 0;
        bool overflow = false;
        int r, timed_out = 0;

        /* A few processes at a time: the walk usually stops at the first ones (dirent-util.h). */
        r = dir_batch_open(proc_fd, ".", &d);
        if (r < 0)
                return r;
        while ((de = dir_batch_next(&d))) {
                NsCandidate *c = NULL;
                char root[128];
                uint64_t ino;
                unsigned pid;
                bool chrooted;

                if (known && known->n_found == known->n) {
                        known->stopped = true;
                        break;
                }
                /* ~25 µs a process: a machine's pid_max of them is no bound (review AE, H1) */
                if (until > 0 && ++n_seen % 64 == 0 && now(CLOCK_MONOTONIC) >= until) {
                        timed_out = -ETIME;
                        break;
                }

                if (safe_atou(de->d_name, &pid) < 0 || sample_read_ns(proc_fd, de->d_name, &ino) < 0 ||
                    ino == self || u64_sorted_find(covered, n_covered, ino) < n_covered)
                        continue;
                for (size_t i = 0; i < n_cand && !c; i++)
                        if (cand[i].ino == ino)
                                c = &cand[i];
                if (c && !c->chrooted && c->alt_pid != 0)
                        continue;
                chrooted = proc_root_chrooted(proc_fd, pid, root, sizeof root);
                if (c) {
                        if (c->chrooted && !chrooted) {
                                c->alt_pid = c->pid;
                                c->pid = pid;
                                c->chrooted = false;
                                ns_known_found(known, ino);
                        } else if (c->alt_pid == 0 && chrooted == c->chrooted)
                                c->alt_pid = pid;
                        continue;
                }
                if (n_cand >= SAMPLE_MAX_NAMESPACES) {
                        overflow = true;
                        continue;
                }
                if (n_cand % 16 == 0) {
                        NsCandidate *x = reallocarray(cand, n_cand + 16, sizeof(NsCandidate));
                        if (!x)
                                return -ENOMEM;
                        cand = x;
                }
                cand[n_cand] = (NsCandidate) { .ino = ino, .pid = pid, .chrooted = chrooted };
                if (!chrooted)
                        ns_known_found(known, ino);
                snprintf(cand[n_cand].root, sizeof cand[n_cand].root, "%s", root);
                n_cand++;
        }
        *ret_walk_error = timed_out ?: d.error;
        *ret = TAKE_PTR(cand);
        *ret_n = n_cand;
        *ret_overflow = overflow;
        return 0;
}

/* The namespaces read so far, merged into t. */
typedef struct NsScan {
        int proc_fd;
        MountTable *t;
        unsigned *of; /* table index -> 0 or 1 + index into nss */
        MountNamespace *nss;
        size_t n;
        HiddenSet *hidden;
        Reasons *why;
        usec_t until;          /* CLOCK_MONOTONIC: no namespace begun past it (0: none) */
        bool text_only;        /* MOUNT_TABLE_BACKEND_MOUNTINFO: never listmount (tests, benchmarks) */
        struct stat self_user; /* our own user namespace (proc/self/ns/user), read once ... */
        int self_user_read;    /* ... 0: not yet, 1: read, < 0: could not be */
} NsScan;

int sample_ns_other_member(int proc_fd, uint64_t ino, unsigned except, SampleNsMember *ret) {
        _cleanup_dir_batch_ DirBatch d = { .fd = -EBADF };
        const struct dirent64 *de;
        SampleNsMember first_chrooted = {};
        int r;

        /* From the first process: a walk of its own (dirent-util.h), not a dup of proc_fd. */
        r = dir_batch_open(proc_fd, ".", &d);
        if (r < 0)
                return r;
        while ((de = dir_batch_next(&d))) {
                SampleNsMember m = {};
                uint64_t i;

                if (safe_atou(de->d_name, &m.pid) < 0 || m.pid == except ||
                    sample_read_ns(proc_fd, de->d_name, &i) < 0 || i != ino)
                        continue;
                m.chrooted = proc_root_chrooted(proc_fd, m.pid, m.root, sizeof m.root);
                if (!m.chrooted) {
                        *ret = m;
                        return 1;
                }
                if (first_chrooted.pid == 0)
                        first_chrooted = m;
        }
        if (d.error < 0)
                return d.error;
        *ret = first_chrooted;
        return first_chrooted.pid != 0;
}

int sample_ns_member_mountinfo(int proc_fd, unsigned pid, uint64_t ino, char **ret, size_t *ret_size) {
        _cleanup_free_ char *text = NULL;
        char path[64], name[16];
        uint64_t now_ino;
        size_t size;
        int r;

        snprintf(path, sizeof path, "%u/mountinfo", pid);
        r = read_full_file_at(proc_fd, path, SAMPLE_NAMESPACE_MAX_BYTES, &text, &size);
        if (r == -ENOENT || r == -ESRCH)
                return -ESRCH;
        if (r < 0)
                return r;
        /* After the read: the text is the namespace's only if the process is still in it (it may
         * have moved with setns(2), or exited and its number been reused). */
        snprintf(name, sizeof name, "%u", pid);
        r = sample_read_ns(proc_fd, name, &now_ino);
        if (r == -ENOENT || r == -ESRCH || (r >= 0 && now_ino != ino))
                return -ESRCH;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(text);
        *ret_size = size;
        return 0;
}

/* A namespace seen only through chrooted process pid lists only mounts below its root: compare with
 * the namespace's whole list, which listmount gives without entering it. */
static int ns_check_chrooted(NsScan *x, const NsCandidate *c, unsigned pid, const char *root) {
        _cleanup_close_ int ns_fd = -EBADF;
        char path[64], desc[256];
        int r;

        snprintf(path, sizeof path, "%u/ns/mnt", pid);
        snprintf(desc, sizeof desc,
                 "mount namespace mnt:[%llu] (seen only through chrooted "
                 "process %u, root %s)",
                 (unsigned long long) c->ino, pid, root);
        ns_fd = openat(x->proc_fd, path, O_RDONLY | O_CLOEXEC);
        r = ns_fd < 0 ? negative_errno() : unlisted_scan_namespace(ns_fd, desc, x->t, x->until, x->hidden);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && reasons_add(x->why,
                                 "%s: mounts outside that root were not scanned (listmount: "
                                 "%s)",
                                 desc, strerror(-r)) < 0)
                return -ENOMEM;
        return 0;
}

/* The table of the namespace c through listmount/statmount by namespace id (no text to generate
 * and parse, no libmount): only for a member whose root is a mount at "/" of the namespace's first
 * mount, only when the fd opened is still that namespace (the process may have exited and its PID
 * been reused). The mounts its root does not reach (an old root left below it: mount_table_keep_below())
 * go to *ret_outside. Any failure: -errno, and the caller reads the mountinfo text as before. */
static int ns_load_listmount(int proc_fd, const NsCandidate *c, bool text_only, MountTable **ret,
                             MountTable **ret_outside) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_close_ int ns_fd = -EBADF, root_fd = -EBADF;
        struct stat st;
        uint64_t root_ino;
        char path[64];
        int root_id, r;

        if (c->chrooted || text_only)
                return -EOPNOTSUPP;
        /* The member's root mount, from the VFS alone (fdinfo of an O_PATH fd: nothing asks its
         * filesystem); then its namespace, which must still be c's. */
        snprintf(path, sizeof path, "%u/root", c->pid);
        root_fd = openat(proc_fd, path, O_PATH | O_CLOEXEC);
        if (root_fd < 0)
                return negative_errno();
        r = proc_fdinfo_mnt_ino(proc_fd, root_fd, &root_id, &root_ino);
        if (r < 0)
                return r;
        snprintf(path, sizeof path, "%u/ns/mnt", c->pid);
        ns_fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (ns_fd < 0)
                return negative_errno();
        if (fstat(ns_fd, &st) < 0)
                return negative_errno();
        if ((uint64_t) st.st_ino != c->ino)
                return -ESRCH;
        r = mount_table_load_namespace(ns_fd, &t);
        if (r < 0)
                return r;
        r = mount_table_keep_below(t, root_id, ret_outside);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

/* The mountinfo text of a member of c's namespace: *m (c's process, as set by the caller), else the
 * other member the walk saw, else one looked for now, up to SAMPLE_NS_MEMBER_TRIES of them. *m says
 * which member it came from. -ESRCH when no member is left: the namespace is gone. */
static int ns_member_text(NsScan *x, const NsCandidate *c, SampleNsMember *m, char **ret, size_t *ret_size) {
        int r;

        for (unsigned i = 0;; i++) {
                unsigned left = m->pid;

                r = sample_ns_member_mountinfo(x->proc_fd, m->pid, c->ino, ret, ret_size);
                if (r != -ESRCH || i + 1 >= SAMPLE_NS_MEMBER_TRIES)
                        return r;
                if (i == 0 && c->alt_pid != 0) {
                        m->pid = c->alt_pid;
                        m->chrooted = proc_root_chrooted(x->proc_fd, m->pid, m->root, sizeof m->root);
                        continue;
                }
                r = sample_ns_other_member(x->proc_fd, c->ino, left, m);
                if (r <= 0)
                        return r == 0 ? -ESRCH : r;
        }
}

#define SS_NS_GET_USERNS _IO(0xb7, 0x1)

/* Whether the mount namespace of process pid is owned by another user namespace than ours (a
 * rootless container): 1, 0, or a negative errno when it cannot be told. */
static int ns_userns_foreign(NsScan *x, unsigned pid) {
        _cleanup_close_ int ns_fd = -EBADF, user_fd = -EBADF;
        struct stat theirs;
        char path[64];

        if (x->self_user_read == 0)
                x->self_user_read = fstatat(x->proc_fd, "self/ns/user", &x->self_user, 0) < 0 ? -errno : 1;
        if (x->self_user_read < 0)
                return x->self_user_read;
        snprintf(path, sizeof path, "%u/ns/mnt", pid);
        ns_fd = openat(x->proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (ns_fd < 0)
                return -errno;
        user_fd = ioctl(ns_fd, SS_NS_GET_USERNS);
        if (user_fd < 0 || fstat(user_fd, &theirs) < 0)
                return -errno;
        return theirs.st_ino != x->self_user.st_ino || theirs.st_dev != x->self_user.st_dev;
}

/* ns_userns_foreign(), anything that cannot be told: false (MountNamespace.foreign_userns). */
static bool ns_foreign_userns(NsScan *x, unsigned pid) {
        return ns_userns_foreign(x, pid) > 0;
}

/* Namespaces owned by our own user namespace first (root's services and containers), then the rest,
 * each in the walk's order: what other namespaces' tables bring in is bounded
 * (mount_table_merge()), and any user can fill it from namespaces of their own (review AM, AM-5: one
 * user namespace pushed a root-owned one out of the pass). -ENOMEM. */
static int ns_order(NsScan *x, NsCandidate *cand, size_t n) {
        _cleanup_free_ NsCandidate *v = NULL;
        size_t k = 0;

        if (n == 0)
                return 0;
        v = malloc(n * sizeof(NsCandidate));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int r = ns_userns_foreign(x, cand[i].pid);

                cand[i].foreign = r > 0;
                cand[i].ours = r == 0; /* one that cannot be told goes last (review AN, AN-3) */
        }
        for (int round = 0; round <= 1; round++)
                for (size_t i = 0; i < n; i++)
                        if (cand[i].ours == (round == 0))
                                v[k++] = cand[i];
        memcpy(cand, v, n * sizeof(NsCandidate));
        return 0;
}

/* Reads the mounts of candidate c's namespace into x. 0 (also when its table would pass the
 * bounds of what other namespaces bring in: said, and the next one tried), -ENOMEM. */
static int ns_add(NsScan *x, NsCandidate *c) {
        _cleanup_(mount_table_freep) MountTable *other = NULL, *outside = NULL;
        _cleanup_free_ char *text = NULL;
        SampleNsMember m = { .pid = c->pid, .chrooted = c->chrooted };
        unsigned *nof, n_bad = 0;
        size_t size, before;
        int r;

        snprintf(m.root, sizeof m.root, "%s", c->root);
        r = ns_load_listmount(x->proc_fd, c, x->text_only, &other, &outside);
        if (r == -ENOMEM)
                return r;
        if (r >= 0) {
                char desc[128];

                if (!outside)
                        goto loaded;
                /* Their superblocks are the kernel's to sync all the same, out of reach of every
                 * path through this namespace's processes: hidden, as a chrooted member's are. */
                snprintf(desc, sizeof desc, "mount namespace mnt:[%llu] (below the root of its process %u)",
                         (unsigned long long) c->ino, c->pid);
                r = unlisted_hide_entries(outside, desc, x->t, x->hidden);
                if (r < 0)
                        return r;
                goto loaded;
        }

        r = ns_member_text(x, c, &m, &text, &size);
        if (r == -ESRCH) {
                /* Every member exited or left: gone, unless an fd or an nsfs mount keeps it (then the
                 * kernel still lists it, and ns_scan_unseen() or unlisted_scan_nsfs() reads it). */
                c->gone = true;
                return 0;
        }
        if (r >= 0)
                r = mount_table_parse(text, size, &other, &n_bad);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && n_bad > 0 &&
            reasons_add(x->why,
                        "%u line(s) of the mount table of mount namespace mnt:[%llu] (process %u) could not "
                        "be read: the mounts they describe were not scanned",
                        n_bad, (unsigned long long) c->ino, m.pid) < 0)
                return -ENOMEM;
        if (r < 0)
                return reasons_add(x->why,
                                   "mounts of mount namespace mnt:[%llu] (process %u) could not be "
                                   "read: %s",
                                   (unsigned long long) c->ino, m.pid, strerror(-r));

loaded:
        if (x->n % 16 == 0) {
                MountNamespace *y = reallocarray(x->nss, x->n + 16, sizeof(MountNamespace));
                if (!y)
                        return -ENOMEM;
                x->nss = y;
        }
        before = x->t->n_entries;
        nof = reallocarray(x->of, before + other->n_entries + 1, sizeof(unsigned));
        if (!nof)
                return -ENOMEM;
        x->of = nof;
        r = mount_table_merge(x->t, &other);
        if (r == -E2BIG)
                return reasons_add(
                               x->why,
                               "mount namespace mnt:[%llu] (process %u): its %zu mounts would pass what other "
                               "mount namespaces may bring in (%u mounts, %u MiB of mount tables): not scanned",
                               (unsigned long long) c->ino, m.pid, other->n_entries, MOUNT_TABLE_MAX_ENTRIES,
                               MOUNT_TABLE_MERGE_MAX_BYTES / (1024U * 1024U)) < 0
                               ? -ENOMEM
                               : 0;
        if (r < 0)
                return r;
        x->nss[x->n] = (MountNamespace) { .ino = c->ino,
                                          .pid = (int) m.pid,
                                          .foreign_userns = m.pid == c->pid ? c->foreign
                                                                            : ns_foreign_userns(x, m.pid) };
        for (size_t i = before; i < x->t->n_entries; i++)
                x->of[i] = (unsigned) x->n + 1;
        x->n++;

        return m.chrooted ? ns_check_chrooted(x, c, m.pid, m.root) : 0;
}

/* The namespaces the kernel lists with no candidate from the walk (held by an fd only, or their
 * processes in another PID namespace): listed through listmount, their superblocks that t lacks into
 * x->hidden (unlisted.h). 0 or -ENOMEM. */
static int ns_scan_unseen(int proc_fd, const NsCandidate *cand, size_t n_cand, const uint64_t *covered,
                          size_t n_covered, NsScan *x) {
        _cleanup_free_ uint64_t *seen = malloc(MAX(n_cand + n_covered, 1) * sizeof(uint64_t));
        size_t n = 0;

        if (!seen)
                return -ENOMEM;
        for (size_t i = 0; i < n_cand; i++)
                if (!cand[i].gone)
                        seen[n++] = cand[i].ino;
        for (size_t i = 0; i < n_covered; i++)
                seen[n++] = covered[i];
        return unlisted_scan_unseen_namespaces(proc_fd, seen, n, x->t, x->until, x->hidden, x->why);
}

/* The initial PID namespace has a fixed inode number (PROC_PID_INIT_INO). */
#define PID_NS_INIT_INO 0xEFFFFFFCULL

int sample_ns_unlisted_reason(int proc_fd, int list_error, bool walk_all, bool selinux, Reasons *why) {
        struct stat st, init;

        if (proc_fd_is_procfs(proc_fd) <= 0)
                return 0;
        /* ... and only when this procfs is that PID namespace's own (its PID 1 is in it): a procfs of
         * the whole machine seen from a PID namespace (unshare -p without a new /proc) shows every
         * process, and its view is no container's. */
        if (!walk_all && !selinux && list_error == -EPERM && fstatat(proc_fd, "self/ns/pid", &st, 0) >= 0 &&
            (unsigned long long) st.st_ino != PID_NS_INIT_INO &&
            fstatat(proc_fd, "1/ns/pid", &init, 0) >= 0 && init.st_ino == st.st_ino &&
            init.st_dev == st.st_dev)
                return 0;
        return reasons_add(
                why,
                "the kernel's list of mount namespaces was not %s (%s): a namespace kept only by an open "
                "file, with no process in it, would be seen by nothing",
                walk_all || selinux ? "used" : "had",
                walk_all                                         ? "every process read instead"
                : selinux                                        ? "SELinux may leave namespaces out of it"
                : list_error == -ENOTTY || list_error == -EINVAL ? "Linux 6.12 or later is needed"
                : list_error == -E2BIG                           ? "more mount namespaces than it is read for"
                                                                 : strerror(-list_error));
}

/*
 * Mounts that exist only in other mount namespaces (containers, flatpak, unshare -m): one process
 * per distinct namespace, its mountinfo appended to the table. An unchrooted member is preferred:
 * a chrooted process's mountinfo lists only mounts below its root; when only chrooted members
 * exist, the namespace's whole mount list is compared through listmount (into hidden) or the scan
 * is declared incomplete. Processes come and go while we scan: a namespace whose members all
 * exited is gone (its mounts with it, unless an nsfs mount keeps it: see unlisted_scan_nsfs()).
 */
static int cmp_index_dev(const size_t *a, const size_t *b, const MountTable *t) {
        return CMP(t->entries[*a].dev, t->entries[*b].dev);
}

/* t as it stands (our own table), for unlisted_namespace_covered(); *ret's arrays are the caller's. */
static int ns_cover_make(const MountTable *t, size_t **ret_by_dev, bool **ret_reachable, NsCover *ret) {
        _cleanup_free_ size_t *by_dev = malloc(MAX(t->n_entries, 1) * sizeof(size_t));
        _cleanup_free_ bool *reachable = calloc(MAX(t->n_entries, 1), sizeof(bool));
        int r;

        if (!by_dev || !reachable)
                return -ENOMEM;
        /* overmounted first, then flipped: reachable is what no other mount covers */
        r = sample_mark_overmounted(t, reachable);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n_entries; i++) {
                const MountEntry *e = &t->entries[i];

                by_dev[i] = i;
                /* Nor a read-only mount of a writable superblock (review P, P5): the plan syncs
                 * through a writable mount where there is one (choose_primary()), perhaps theirs. */
                reachable[i] = !reachable[i] && !e->unlisted &&
                               (!e->read_only || mount_options_read_only(e->fs_options));
        }
        typesafe_qsort_r(by_dev, t->n_entries, cmp_index_dev, t);
        *ret = (NsCover) { .t = t, .by_dev = by_dev, .reachable = reachable };
        *ret_by_dev = TAKE_PTR(by_dev);
        *ret_reachable = TAKE_PTR(reachable);
        return 0;
}

int sample_add_namespaces(int root_fd, bool walk_all, bool cover_own, MountTableBackend backend, usec_t until,
                          MountTable *t, unsigned **ns_of, MountNamespace **ret_ns, size_t *ret_n,
                          HiddenSet *hidden, Reasons *why) {
        _cleanup_free_ NsCandidate *cand = NULL;
        _cleanup_free_ uint64_t *covered = NULL;
        _cleanup_free_ size_t *cover_by_dev = NULL;
        _cleanup_free_ bool *cover_reachable = NULL;
        _cleanup_close_ int proc_fd = -EBADF;
        NsScan x = {
                .t = t,
                .hidden = hidden,
                .why = why,
                .until = until,
                .text_only = backend == MOUNT_TABLE_BACKEND_MOUNTINFO,
        };
        NsKnown known = {};
        NsCover cover = {};
        uint64_t self;
        size_t n_cand = 0, n_covered = 0;
        bool overflow = false, listed, unseen, selinux;
        int r, walk_error = 0;

        x.of = calloc(MAX(t->n_entries, 1), sizeof(unsigned));
        if (!x.of)
                return -ENOMEM;
        proc_fd = openat(root_fd, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = proc_fd < 0 ? negative_errno() : sample_read_ns(proc_fd, "self", &self);
        if (r < 0) {
                /* No way to tell namespaces apart: other namespaces' mounts are unknown. Said with the
                 * cause: EMFILE is not a missing proc (review AS, AS-5). */
                *ns_of = TAKE_PTR(x.of);
                *ret_ns = NULL;
                *ret_n = 0;
                return reasons_add(why,
                                   "mount namespaces cannot be told apart (%s: %s): other namespaces' mounts "
                                   "were not scanned",
                                   proc_fd < 0 ? "proc" : "proc/self/ns/mnt", strerror(-r));
        }
        x.proc_fd = proc_fd;

        /* Without the kernel's list (before 6.12, no privilege, a fixture): every process is read. The
         * list leaves out namespaces whose owning user namespace we lack CAP_SYS_ADMIN in
         * (ns_capable_noaudit() in get_sequential_mnt_ns()); for root in the initial user namespace
         * only an LSM can deny that, and SELinux does per class (cap_userns): not trusted there. */
        selinux = faccessat(root_fd, "sys/fs/selinux/enforce", F_OK, 0) >= 0;
        /* A namespace whose every mount is of a superblock our own table reaches (a service's
         * ProtectSystem= copy of ours, kdevtmpfs's devtmpfs) needs no member and no place in t: we
         * sync those superblocks through our own mounts. Only with our whole view (no chroot). */
        r = cover_own && !walk_all && !selinux ? ns_cover_make(t, &cover_by_dev, &cover_reachable, &cover)
                                               : 0;
        if (r < 0) {
                free(x.of);
                return r;
        }
        cover.until = until;
        r = walk_all || selinux
                    ? -EOPNOTSUPP
                    : unlisted_list_namespaces(proc_fd, SAMPLE_MAX_NAMESPACES, cover.t ? &cover : NULL,
                                               &known.inos, &known.n, &covered, &n_covered);
        if (r >= 0) {
                known.found = calloc(MAX(known.n, 1), sizeof(bool));
                if (!known.found)
                        r = -ENOMEM;
        }
        if (r == -ENOMEM) {
                free(x.of);
                free(known.inos);
                return r;
        }
        if (r == -ETIME) {
                /* Looking at them cost more than the sample may spend (review AE, H1): our own
                 * table is synced, the view incomplete, the kernel's sync kept on. */
                free(known.inos);
                *ns_of = TAKE_PTR(x.of);
                *ret_ns = NULL;
                *ret_n = 0;
                return reasons_add(why, "the other mount namespaces could not all be looked at within the "
                                        "sample's bound: their mounts were not scanned");
        }
        listed = r >= 0;
        if (!listed && sample_ns_unlisted_reason(proc_fd, r, walk_all, selinux, why) < 0) {
                free(x.of);
                free(known.inos);
                return -ENOMEM;
        }
        /* Listed in full through listmount: an nsfs mount that keeps one needs no second look. */
        r = 0;
        for (size_t i = 0; r >= 0 && i < n_covered; i++)
                r = unlisted_u64_append(&hidden->ns_listed, &hidden->n_ns_listed, covered[i]);
        if (r >= 0 && !(listed && known.n == 0))
                r = ns_candidates(proc_fd, self, listed ? &known : NULL, covered, n_covered, until, &cand,
                                  &n_cand, &overflow, &walk_error);
        /* A walk that did not find a member of every namespace the kernel lists: those left are
         * listed by the kernel after the merge (ns_scan_unseen()). */
        unseen = listed && known.n_found < known.n;
        free(known.inos);
        free(known.found);
        if (r >= 0 && overflow &&
            reasons_add(why, "more than %u mount namespaces: the rest were not scanned",
                        SAMPLE_MAX_NAMESPACES) < 0)
                r = -ENOMEM;
        if (r >= 0 && walk_error == -ETIME &&
            reasons_add(why, "the walk over the processes in proc did not end within the sample's bound: "
                             "mount namespaces of the rest were not scanned") < 0)
                r = -ENOMEM;
        if (r >= 0 && walk_error < 0 && walk_error != -ETIME &&
            reasons_add(why,
                        "the processes in proc could not all be listed (%s): mount namespaces of the "
                        "rest were not scanned",
                        strerror(-walk_error)) < 0)
                r = -ENOMEM;
        if (r >= 0)
                r = ns_order(&x, cand, n_cand);
        for (size_t c = 0; r >= 0 && c < n_cand; c++) {
                if (until > 0 && now(CLOCK_MONOTONIC) >= until) {
                        r = reasons_add(
                                why,
                                "%zu of %zu mount namespaces were not read within the sample's bound: "
                                "their mounts were not scanned",
                                n_cand - c, n_cand);
                        unseen = false; /* nor those: the bound has passed */
                        break;
                }
                r = ns_add(&x, &cand[c]);
                /* its members gone while the kernel may still list it: compare it all the same */
                unseen = unseen || (listed && cand[c].gone);
        }
        if (r >= 0 && unseen)
                r = ns_scan_unseen(proc_fd, cand, n_cand, covered, n_covered, &x);
        if (r < 0) {
                free(x.of);
                free(x.nss);
                return r;
        }

        *ns_of = TAKE_PTR(x.of);
        *ret_ns = TAKE_PTR(x.nss);
        *ret_n = x.n;
        return 0;
}
