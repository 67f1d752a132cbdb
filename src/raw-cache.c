/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "evidence.h"
#include "raw-cache.h"
#include "shared/bounded-child.h"
#include "shared/devnum-util.h"
#include "shared/dirent-util.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/sort-util.h"
#include "shared/string-util.h"

/* cachestat(2), Linux 6.5: the same number on every architecture of the unified table. Debian 12's
 * headers (Linux 6.1) have neither the number nor the structures. */
#ifndef __NR_cachestat
#if defined(__alpha__)
#define __NR_cachestat 561
#else
#define __NR_cachestat 451
#endif
#endif

struct ss_cachestat_range {
        uint64_t off;
        uint64_t len; /* 0: to the end */
};

struct ss_cachestat {
        uint64_t nr_cache;
        uint64_t nr_dirty;
        uint64_t nr_writeback;
        uint64_t nr_evicted;
        uint64_t nr_recently_evicted;
};

void raw_devices_free(RawDevice *d, size_t n) {
        for (size_t i = 0; d && i < n; i++) {
                free(d[i].name);
                free(d[i].disk);
        }
        free(d);
}

static bool dev_in(dev_t d, const dev_t *known, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (known[i] == d)
                        return true;
        return false;
}

/* <dir_fd>/<entry>/dev: the device number, as the kernel writes it ("MAJ:MIN\n"). */
static int dev_attr(int dir_fd, const char *entry, dev_t *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        int r;

        if (asprintf(&path, "%s/dev", entry) < 0)
                return -ENOMEM;
        r = read_full_file_at(dir_fd, path, 64, &text, NULL);
        if (r < 0)
                return r;
        text[strcspn(text, "\n")] = 0;
        return parse_devnum(text, ret);
}

/* devtmpfs names a block device's node after the kernel's name, '!' standing for '/'. */
static int node_name(const char *kernel_name, char **ret) {
        char *n;

        if (isempty(kernel_name) || strchr(kernel_name, '/') || streq(kernel_name, ".") ||
            streq(kernel_name, ".."))
                return -EINVAL;
        n = strdup(kernel_name);
        if (!n)
                return -ENOMEM;
        for (char *c = n; *c; c++)
                if (*c == '!')
                        *c = '/';
        *ret = n;
        return 0;
}

static int add_device(dev_t d, const char *kernel_name, const char *bdi, const dev_t *known, size_t n_known,
                      RawDevice **devs, size_t *n) {
        RawDevice *a;
        int r;

        if (dev_in(d, known, n_known))
                return 0;
        if (*n >= RAW_CACHE_DEVICES_MAX)
                return -E2BIG;
        a = reallocarray(*devs, *n + 1, sizeof **devs);
        if (!a)
                return -ENOMEM;
        *devs = a;
        a[*n] = (RawDevice) { .dev = d, .error = -ENODATA };
        a[*n].disk = strdup(bdi);
        r = a[*n].disk ? node_name(kernel_name, &a[*n].name) : -ENOMEM;
        if (r < 0) {
                free(a[*n].disk);
                return r;
        }
        (*n)++;
        return 0;
}

int raw_cache_others(int sysfs_fd, const char *bdi, const dev_t *known, size_t n_known, RawDevice **devs,
                     size_t *n) {
        _cleanup_dir_batch_ DirBatch b = { .fd = -EBADF };
        _cleanup_close_ int disk_fd = -EBADF;
        _cleanup_free_ char *path = NULL, *target = NULL;
        const struct dirent64 *de;
        dev_t d;
        int r;

        if (parse_devnum(bdi, &d) < 0 || major(d) == 0) /* "btrfs-1", an anonymous 0:N: no disk */
                return 0;
        if (asprintf(&path, "dev/block/%s", bdi) < 0)
                return -ENOMEM;
        disk_fd = open_dir_at(sysfs_fd, path);
        if (disk_fd == -ENOENT) /* no block device by that number */
                return 0;
        if (disk_fd < 0)
                return disk_fd;
        if (faccessat(disk_fd, "partition", F_OK, 0) >= 0) /* a partition names no bdi */
                return 0;
        /* The disk's kernel name: the last component of the link dev/block/<bdi> (../../devices/...). */
        r = readlink_malloc_at(sysfs_fd, path, &target);
        if (r < 0)
                return r;
        r = add_device(d, strrchr(target, '/') ? strrchr(target, '/') + 1 : target, bdi, known, n_known, devs,
                       n);
        if (r < 0)
                return r;
        r = dir_batch_open(disk_fd, ".", &b);
        if (r < 0)
                return r;
        while ((de = dir_batch_next(&b))) {
                char part[NAME_MAX + 16];
                dev_t pd;

                if (de->d_name[0] == '.' || de->d_type != DT_DIR)
                        continue;
                snprintf(part, sizeof part, "%s/partition", de->d_name);
                if (faccessat(disk_fd, part, F_OK, 0) < 0)
                        continue;
                r = dev_attr(disk_fd, de->d_name, &pd);
                if (r >= 0)
                        r = add_device(pd, de->d_name, bdi, known, n_known, devs, n);
                if (r < 0)
                        return r;
        }
        return b.error;
}

static int cachestat_dirty(int fd, uint64_t *ret) {
        struct ss_cachestat_range range = {};
        struct ss_cachestat cs = {};

        if (syscall(__NR_cachestat, fd, &range, &cs, 0) < 0)
                return -errno;
        *ret = cs.nr_dirty;
        return 0;
}

/* Phase 1 for one device: its node opened and checked, its dirty pages counted. The fd stays open
 * (in *ret_fd) when there are some. */
static int look_one(int dev_fd, const RawDevice *d, RawCacheRecord *rec, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        /* O_NONBLOCK: a removable disk without its medium opens all the same. The name may hold a
         * '/' (a subdirectory of devtmpfs), never a ".." (node_name()). */
        rec->stage = RAW_CACHE_OPEN;
        fd = openat(dev_fd, d->name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        rec->stage = RAW_CACHE_NODE;
        if (!S_ISBLK(st.st_mode) || st.st_rdev != d->dev)
                return -ENOTBLK;
        rec->stage = RAW_CACHE_STAT;
        r = cachestat_dirty(fd, &rec->dirty);
        if (r >= 0 && rec->dirty > 0)
                *ret_fd = TAKE_FD(fd);
        return r;
}

static int send_record(int pipe_fd, RawCacheRecord rec, RawCacheKind kind) {
        rec.kind = kind;
        return loop_write(pipe_fd, &rec, sizeof rec);
}

/* Every device is looked at before any is synced: a slow fsync costs only the answers of the
 * devices synced after it. Each device's work is announced first (RAW_CACHE_START, RAW_CACHE_SYNCING):
 * the parent knows which device the child was on when it stopped. */
static int raw_cache_child(int pipe_fd, int root_fd, void *userdata) {
        const RawCacheRun *x = userdata;
        _cleanup_close_ int dev_fd = openat(root_fd, "dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int dev_error = dev_fd < 0 ? -errno : 0;
        int *fds = calloc(MAX(x->n, 1), sizeof(int));
        RawCacheRecord *recs = calloc(MAX(x->n, 1), sizeof(RawCacheRecord));

        if (!fds || !recs)
                return 1;
        for (size_t i = 0; i < x->n; i++) {
                recs[i] = (RawCacheRecord) { .index = (uint32_t) i, .stage = RAW_CACHE_OPEN };
                fds[i] = -EBADF;
                if (send_record(pipe_fd, recs[i], RAW_CACHE_START) < 0)
                        return 1;
                recs[i].error = dev_error ?: look_one(dev_fd, &x->d[i], &recs[i], &fds[i]);
                if (fds[i] >= 0) {
                        recs[i].found = recs[i].dirty;
                        recs[i].stage = RAW_CACHE_SYNC;
                }
                if (send_record(pipe_fd, recs[i], fds[i] >= 0 ? RAW_CACHE_DIRTY : RAW_CACHE_FINAL) < 0)
                        return 1;
        }
        /* What sync_bdevs() would write, written here (and the device's cache flushed after it,
         * blkdev_fsync()), then asked again: what is still dirty was written since. */
        for (size_t i = 0; i < x->n; i++) {
                if (fds[i] < 0)
                        continue;
                if (send_record(pipe_fd, recs[i], RAW_CACHE_SYNCING) < 0)
                        return 1;
                if (fsync(fds[i]) < 0)
                        recs[i].error = -errno;
                else {
                        recs[i].synced = recs[i].found;
                        recs[i].stage = RAW_CACHE_STAT;
                        recs[i].error = cachestat_dirty(fds[i], &recs[i].dirty);
                }
                if (send_record(pipe_fd, recs[i], RAW_CACHE_FINAL) < 0)
                        return 1;
        }
        return 0;
}

/* One record, checked against what came before for its device. */
static int feed_one(RawCacheRun *x, const RawCacheRecord *rec) {
        RawDevice *d;

        if (rec->index >= x->n || rec->error > 0 || rec->stage > RAW_CACHE_SYNC ||
            rec->kind > RAW_CACHE_SYNCING)
                return -EBADMSG;
        d = &x->d[rec->index];
        if (rec->kind == RAW_CACHE_START) { /* phase 1 goes in order */
                if (rec->index != x->started)
                        return -EBADMSG;
                x->started++;
        } else if (rec->index >= x->started || d->answered ||
                   (rec->kind == RAW_CACHE_DIRTY && rec->stage != RAW_CACHE_SYNC) ||
                   (rec->kind == RAW_CACHE_SYNCING && d->stage != RAW_CACHE_SYNC))
                return -EBADMSG;
        /* The child is on a device from its START or SYNCING to its next record: only there can the
         * device itself hold it up. */
        x->current = (rec->kind == RAW_CACHE_START || rec->kind == RAW_CACHE_SYNCING) ? rec->index : SIZE_MAX;
        d->stage = rec->stage;
        d->found = rec->found;
        if (rec->kind != RAW_CACHE_FINAL)
                return 0;
        d->answered = true;
        d->error = rec->error;
        d->dirty = rec->error == 0 ? rec->dirty : 0;
        d->synced = rec->error == 0 ? rec->synced : 0;
        x->done++;
        return 0;
}

int raw_cache_feed(const char *buf, size_t size, void *userdata) {
        RawCacheRun *x = userdata;

        for (; x->done < x->n && (x->pos + 1) * sizeof(RawCacheRecord) <= size; x->pos++) {
                RawCacheRecord rec;
                int r;

                memcpy(&rec, buf + x->pos * sizeof rec, sizeof rec);
                r = feed_one(x, &rec);
                if (r < 0)
                        return r;
        }
        return x->done == x->n;
}

void raw_cache_query(int root_fd, RawDevice *d, size_t n, usec_t timeout) {
        RawCacheRun x = { .d = d, .n = n, .current = SIZE_MAX };
        int r;

        if (n == 0)
                return;
        /* At most four records per device: start, dirty, syncing, final. */
        r = bounded_child_run(root_fd, timeout, 4 * n * sizeof(RawCacheRecord), raw_cache_child,
                              raw_cache_feed, &x);
        /* What arrived counts; the rest carries why it did not. Only the device the child was on
         * when it stopped can have been held up by that device itself. */
        for (size_t i = 0; i < n; i++) {
                if (d[i].answered)
                        continue;
                d[i].error = r < 0 ? r : -EPROTO;
                d[i].current = i == x.current;
                if (!d[i].current && d[i].stage != RAW_CACHE_SYNC)
                        d[i].stage = RAW_CACHE_ASKED;
        }
}

static const char *failure(const RawDevice *d, char *buf, size_t size) {
        const char *stop = d->error == -ETIMEDOUT ? "no answer in time"
                           : d->error == -EPROTO  ? "the child asking it died"
                                                  : strerror(-d->error);

        if (!d->answered && !d->current) {
                snprintf(buf, size, "not reached: %s", stop);
                return buf;
        }
        switch (d->stage) {
        case RAW_CACHE_OPEN:
                snprintf(buf, size, "opening /dev/%s: %s", d->name, strerror(-d->error));
                break;
        case RAW_CACHE_NODE:
                snprintf(buf, size, "/dev/%s is not that block device", d->name);
                break;
        case RAW_CACHE_STAT:
                snprintf(buf, size, "cachestat: %s",
                         d->error == -ENOSYS ? "needs Linux 6.5" : strerror(-d->error));
                break;
        case RAW_CACHE_SYNC:
                snprintf(buf, size, "fsync of its %" PRIu64 " dirty pages: %s", d->found,
                         d->error == -ETIMEDOUT ? "did not end in time" : stop);
                break;
        default:
                snprintf(buf, size, "%s", stop);
        }
        return buf;
}

/* A failure of the device itself on a leaf of a device proven stuck: the child stopped on it, or
 * the kernel failed it. No one writes such a leaf if it is stuck itself (the kernel's sync blocks
 * there too), and a child stuck in the kernel on it holds the freezer off. Anything else — not
 * reached, no cachestat, no node — is no evidence. */
static bool excused(const RawDevice *d) {
        if (!d->on_stuck_disk || d->error >= 0)
                return false;
        if (d->current)
                return true;
        return d->answered && (d->stage == RAW_CACHE_OPEN || d->stage == RAW_CACHE_SYNC) &&
               (d->error == -EIO || d->error == -ENXIO || d->error == -ENODEV || d->error == -ENOMEDIUM);
}

int raw_cache_verdict(const RawDevice *d, size_t n, char **ret_why) {
        const RawDevice *bad = NULL;
        char buf[PATH_MAX + 64];

        for (size_t i = 0; i < n; i++) {
                if (d[i].error == 0 && d[i].dirty > 0)
                        return asprintf(ret_why,
                                        "block device %s (%s, on disk %s, which also holds a filesystem of "
                                        "this pass) still holds %" PRIu64 " dirty pages written straight to "
                                        "it, after this pass wrote %" PRIu64,
                                        d[i].name, FORMAT_DEVNUM(d[i].dev), d[i].disk, d[i].dirty,
                                        d[i].synced) < 0
                                       ? -ENOMEM
                                       : 1;
                if (d[i].error < 0 && !excused(&d[i]) && !bad)
                        bad = &d[i];
        }
        if (!bad)
                return 0;
        return asprintf(ret_why,
                        "whether block device %s (%s, on disk %s, which also holds a filesystem of this "
                        "pass) holds dirty pages written straight to it cannot be told (%s)",
                        bad->name, FORMAT_DEVNUM(bad->dev), bad->disk, failure(bad, buf, sizeof buf)) < 0
                       ? -ENOMEM
                       : 1;
}

static int cmp_dev(const dev_t *a, const dev_t *b) {
        return *a < *b ? -1 : *a > *b;
}

/* The disks among the bdi names, each once: MAJ:MIN, major not 0 (anonymous superblocks, of which a
 * container host has thousands, are no disk). */
static size_t disks_of(const char *const *bdis, size_t n_bdis, dev_t *ret) {
        size_t n = 0, m = 0;

        for (size_t i = 0; i < n_bdis; i++) {
                dev_t d;

                if (bdis[i] && parse_devnum(bdis[i], &d) >= 0 && major(d) != 0)
                        ret[n++] = d;
        }
        typesafe_qsort(ret, n, cmp_dev);
        for (size_t i = 0; i < n; i++)
                if (m == 0 || ret[m - 1] != ret[i])
                        ret[m++] = ret[i];
        return m;
}

/* The other devices of one disk, unless its writeback lists are proven empty. 0, or 1 with the
 * reason in *ret_why, or -ENOMEM. */
static int disk_others(int sysfs_fd, int debugfs_fd, dev_t disk, const dev_t *known, size_t n_known,
                       int *cgwb, RawDevice **devs, size_t *n, char **ret_why) {
        const char *bdi = FORMAT_DEVNUM(disk);
        int r;

        r = evidence_bdi_empty(debugfs_fd, sysfs_fd, bdi, cgwb, NULL);
        if (r == -ENOMEM)
                return r;
        if (r > 0) /* nothing on any of its devices waits to be written */
                return 0;
        /* Not proven; -ENOENT too: the kernel does not fail a bdi whose debugfs directory could not be
         * made, and a disk gone since the sample fails closed at its node. */
        r = raw_cache_others(sysfs_fd, bdi, known, n_known, devs, n);
        if (r == -ENOMEM || r >= 0)
                return r;
        if (r == -E2BIG)
                r = asprintf(ret_why,
                             "the disks of this pass have more than %u other block devices to look at",
                             RAW_CACHE_DEVICES_MAX);
        else
                r = asprintf(
                        ret_why,
                        "the block devices of disk %s, which holds a filesystem of this pass, cannot be listed "
                        "(sysfs: %s)",
                        bdi, strerror(-r));
        return r < 0 ? -ENOMEM : 1;
}

bool raw_cache_supported(void) {
        return !(syscall(__NR_cachestat, -1, NULL, NULL, 0) < 0 && errno == ENOSYS);
}

int raw_cache_group_disks(const char *group, dev_t **disks, size_t *n) {
        _cleanup_free_ char *copy = NULL;
        _cleanup_free_ dev_t *parsed = NULL;
        size_t k = 0, cap;
        char *w, *save = NULL;
        dev_t *a;

        if (!group || startswith(group, "sb:") || startswith(group, "open:"))
                return 0;
        copy = strdup(group);
        cap = strlen(group) / 2 + 1; /* a key of k disks has at least 2k - 1 characters */
        parsed = calloc(cap, sizeof(dev_t));
        if (!copy || !parsed)
                return -ENOMEM;
        /* The whole key parses, or none of it counts. */
        for (w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
                if (k >= cap || parse_devnum(w, &parsed[k++]) < 0)
                        return -EINVAL;
        a = reallocarray(*disks, *n + k + 1, sizeof **disks);
        if (!a)
                return -ENOMEM;
        *disks = a;
        memcpy(a + *n, parsed, k * sizeof(dev_t));
        *n += k;
        return 0;
}

/* The devices the child wrote, for the journal: "loop1p2 (1024 pages), ...". NULL when none. */
static int synced_summary(const RawDevice *d, size_t n, char **ret) {
        _cleanup_free_ char *s = NULL;

        for (size_t i = 0; i < n; i++) {
                char *t;

                if (d[i].synced == 0 || d[i].error < 0)
                        continue;
                if (asprintf(&t, "%s%s%s (%" PRIu64 " pages)", s ?: "", s ? ", " : "", d[i].name,
                             d[i].synced) < 0)
                        return -ENOMEM;
                free(s);
                s = t;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

int raw_cache_unexplained(int root_fd, int sysfs_fd, int debugfs_fd, const RawCacheLook *look, char **ret_why,
                          char **ret_synced) {
        _cleanup_free_ dev_t *disks = calloc(MAX(look->n_bdis, 1), sizeof(dev_t));
        RawDevice *devs = NULL;
        size_t n = 0, n_disks;
        int cgwb = -1, r = 0;
        usec_t t;

        *ret_why = *ret_synced = NULL;
        if (!disks)
                return -ENOMEM;
        n_disks = disks_of(look->bdis, look->n_bdis, disks);
        /* The leaves of devices proven stuck last: a child waiting on one of them has answered for
         * every other device by then. */
        for (int last = 0; last < 2 && r == 0; last++)
                for (size_t i = 0; i < n_disks && r == 0; i++) {
                        bool stuck = dev_in(disks[i], look->stuck, look->n_stuck);
                        size_t before = n;

                        if (stuck != last)
                                continue;
                        r = disk_others(sysfs_fd, debugfs_fd, disks[i], look->known, look->n_known, &cgwb,
                                        &devs, &n, ret_why);
                        if (r > 0 && stuck) { /* its failures are no reason */
                                *ret_why = mfree(*ret_why);
                                r = 0;
                        }
                        for (size_t k = before; k < n; k++)
                                devs[k].on_stuck_disk = stuck;
                }
        if (r == 0 && n > 0) {
                /* Reasons that need no child: no cachestat(2) here, no time left. */
                t = now(CLOCK_MONOTONIC);
                if (!raw_cache_supported()) {
                        for (size_t i = 0; i < n; i++)
                                devs[i].error = -ENOSYS, devs[i].stage = RAW_CACHE_STAT;
                } else if (look->until <= t) {
                        for (size_t i = 0; i < n; i++)
                                devs[i].error = -ETIMEDOUT, devs[i].stage = RAW_CACHE_ASKED;
                } else
                        raw_cache_query(root_fd, devs, n, MIN(look->until - t, look->max_timeout));
                r = raw_cache_verdict(devs, n, ret_why);
                if (r >= 0 && synced_summary(devs, n, ret_synced) < 0)
                        r = -ENOMEM;
        }
        raw_devices_free(devs, n);
        return r;
}
