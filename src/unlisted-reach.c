/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Unlisted superblocks (unlisted.h), the second half: reaching hidden superblocks through the files
 * processes hold (proc/PID/{cwd,root,fd/N}), in a bounded child.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shared/bounded-child.h"
#include "shared/fileio.h"
#include "shared/mount-api.h"
#include "shared/parse-util.h"
#include "unlisted-internal.h"
#include "unlisted.h"

#define PROC_FDS_MAX 65536U /* fds looked at per reach scan */

/* What the child sends for each superblock it reached: its index into the HiddenSet as it was at
 * fork(), the mount id of the file, the path below proc/. index UINT32_MAX ends the scan, mnt_id
 * then being 0 or the scan's negative errno. One write() each (below PIPE_BUF: never split). */
#define REACH_PATH_MAX 56

typedef struct ReachRecord {
        uint32_t index;
        int32_t mnt_id;
        uint64_t mnt_id_unique;    /* the mount's id that is never reused, 0: not known (before 6.8) */
        char path[REACH_PATH_MAX]; /* "4294967295/fd/4294967295" at most */
} ReachRecord;

typedef struct Reach {
        const HiddenSet *h; /* as at fork(): the child's copy does not change */
        UnlistedStatFn stat_fn;
        pid_t parent;
        bool *reached; /* per index of h; each side updates its own copy */
        size_t n_left; /* child: not reached yet */
        /* The parent's side. */
        MountTable *t;
        size_t consumed; /* bytes of records applied */
        int end_error;   /* from the end record */
} Reach;

static int statx_dont_sync(int dir_fd, const char *path, struct statx *ret) {
        return statx(dir_fd, path, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MNT_ID, ret) < 0 ? negative_errno()
                                                                                           : 0;
}

/* proc/PID/<name>: a regular file or directory on a hidden superblock? Index into h or -1. statx with
 * AT_STATX_DONT_SYNC lets FUSE and NFS answer from their caches (the magic link is followed without
 * LOOKUP_OPEN/LOOKUP_REVAL, so NFS's weak revalidation stays local too), but it is only a hint: CIFS
 * revalidates an expired attribute cache with the server, 9p with cache=none always asks it. So this
 * runs in a child the main process abandons after a bound (unlisted_reach()). Opening the path is
 * left to the worker. */
static ssize_t on_hidden(int proc_fd, const char *path, const Reach *x, int *ret_mnt_id,
                         uint64_t *ret_mnt_id_unique) {
        struct statx stx;
        dev_t dev;

        if (x->stat_fn(proc_fd, path, &stx) < 0)
                return -1;
        if (!S_ISREG(stx.stx_mode) && !S_ISDIR(stx.stx_mode))
                return -1;
        dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
        for (size_t i = 0; i < x->h->n; i++)
                if (x->h->v[i].dev == dev) {
                        /* The worker checks it opens this very mount: fd numbers get reused, and so
                         * do the old mount ids (review H, H6): the one that never is too. */
                        *ret_mnt_id = (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id <= INT_MAX
                                              ? (int) stx.stx_mnt_id
                                              : 0;
                        *ret_mnt_id_unique = statx(proc_fd, path, AT_STATX_DONT_SYNC, SS_STATX_MNT_ID_UNIQUE,
                                                   &stx) >= 0 &&
                                                             (stx.stx_mask & SS_STATX_MNT_ID_UNIQUE)
                                                     ? stx.stx_mnt_id
                                                     : 0;
                        return (ssize_t) i;
                }
        return -1;
}

static int write_record(int fd, const ReachRecord *rec) {
        while (write(fd, rec, sizeof *rec) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return 0;
}

/* Child: one path, sent to the parent when it is on a hidden superblock not reached yet. */
static int reach_one(int proc_fd, int fd, const char *path, Reach *x) {
        ReachRecord rec = {};
        uint64_t mnt_id_unique = 0;
        ssize_t k;
        int mnt_id = 0;

        k = on_hidden(proc_fd, path, x, &mnt_id, &mnt_id_unique);
        if (k < 0 || x->reached[k])
                return 0;
        x->reached[k] = true;
        x->n_left--;
        rec.index = (uint32_t) k;
        rec.mnt_id = mnt_id;
        rec.mnt_id_unique = mnt_id_unique;
        snprintf(rec.path, sizeof rec.path, "%s", path);
        return write_record(fd, &rec);
}

/* Child: every process's cwd, root and open files (at most PROC_FDS_MAX), but the parent's and ours. */
static int reach_scan(int proc_fd, int fd, Reach *x) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        size_t n_fds = 0;
        int r;

        r = opendir_at(proc_fd, ".", &d);
        if (r < 0)
                return r;
        while (x->n_left > 0 && n_fds < PROC_FDS_MAX && (de = readdir(d))) {
                static const char *const links[] = { "cwd", "root" };
                _cleanup_closedir_ DIR *fds = NULL;
                char path[REACH_PATH_MAX];
                struct dirent *fe;
                unsigned pid;

                if (safe_atou(de->d_name, &pid) < 0 || pid == (unsigned) x->parent ||
                    pid == (unsigned) getpid())
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(links) && x->n_left > 0; i++) {
                        snprintf(path, sizeof path, "%u/%s", pid, links[i]);
                        r = reach_one(proc_fd, fd, path, x);
                        if (r < 0)
                                return r;
                }
                snprintf(path, sizeof path, "%u/fd", pid);
                if (opendir_at(proc_fd, path, &fds) < 0)
                        continue;
                while (x->n_left > 0 && n_fds < PROC_FDS_MAX && (fe = readdir(fds))) {
                        unsigned nfd;

                        if (safe_atou(fe->d_name, &nfd) < 0)
                                continue;
                        n_fds++;
                        snprintf(path, sizeof path, "%u/fd/%u", pid, nfd);
                        r = reach_one(proc_fd, fd, path, x);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int reach_child(int fd, int proc_fd, void *userdata) {
        Reach *x = userdata;
        ReachRecord end = { .index = UINT32_MAX };

        x->n_left = x->h->n;
        end.mnt_id = reach_scan(proc_fd, fd, x);
        return write_record(fd, &end) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Parent: applies the records that arrived since the last call. 1 at the end record. */
static int reach_feed(const char *buf, size_t size, void *userdata) {
        Reach *x = userdata;

        for (; size - x->consumed >= sizeof(ReachRecord); x->consumed += sizeof(ReachRecord)) {
                const HiddenSb *s;
                ReachRecord rec;
                char path[REACH_PATH_MAX + 8];
                size_t l;
                int r;

                memcpy(&rec, buf + x->consumed, sizeof rec);
                if (rec.index == UINT32_MAX) {
                        if (rec.mnt_id > 0 || rec.mnt_id < -4095)
                                return -EBADMSG;
                        x->end_error = rec.mnt_id;
                        return 1;
                }
                l = strnlen(rec.path, sizeof rec.path);
                if (rec.index >= x->h->n || x->reached[rec.index] || rec.mnt_id < 0 || l == 0 ||
                    l == sizeof rec.path)
                        return -EBADMSG;
                s = &x->h->v[rec.index];
                snprintf(path, sizeof path, "/proc/%s", rec.path);
                r = append_unlisted(x->t, path, s->dev, rec.mnt_id, s->fstype, s->source, false);
                if (r < 0)
                        return r;
                x->t->entries[x->t->n_entries - 1].mount_id_unique = rec.mnt_id_unique;
                x->reached[rec.index] = true;
        }
        return 0;
}

int unlisted_reach(int root_fd, usec_t timeout, UnlistedStatFn stat_fn, HiddenSet *h, MountTable *t) {
        _cleanup_close_ int proc_fd = -EBADF;
        _cleanup_free_ bool *reached = NULL;
        size_t n_before = h->n, k = 0;
        Reach x;
        int r;

        h->reach_error = 0;
        h->reach_timeout = timeout;
        if (h->n == 0)
                return 0;
        proc_fd = openat(root_fd, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return 0;
        reached = calloc(h->n, sizeof(bool));
        if (!reached)
                return -ENOMEM;
        x = (Reach) {
                .h = h, .stat_fn = stat_fn ?: statx_dont_sync, .parent = getpid(), .reached = reached, .t = t
        };

        r = bounded_child_run(proc_fd, timeout, (h->n + 1) * sizeof(ReachRecord), reach_child, reach_feed,
                              &x);
        /* Whatever arrived counts, even when the child did not finish: it is in t already. */
        for (size_t i = 0; i < n_before; i++)
                if (reached[i])
                        hidden_sb_done(&h->v[i]);
                else
                        h->v[k++] = h->v[i];
        h->n = k;
        if (r == -ENOMEM)
                return r; /* ours, not the child's */
        /* EOF before the end record: the child died (out of memory, killed). */
        h->reach_error = r == 1 ? x.end_error : r == 0 ? -EPROTO : r;
        return (int) (n_before - k);
}
