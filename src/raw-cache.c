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
#include "shared/string-util.h"

/* cachestat(2), Linux 6.5: the same number on every architecture of the unified table. Debian 12's
 * headers (Linux 6.1) have neither the number nor the structures. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
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

/* <dir_fd>/<entry>/uevent: its MAJOR:MINOR and DEVNAME (a single path component). */
static int uevent_node(int dir_fd, const char *entry, dev_t *ret_dev, char **ret_name) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        unsigned maj = UINT_MAX, min = UINT_MAX;
        const char *name = NULL;
        char *line, *save = NULL;
        int r;

        if (asprintf(&path, "%s/uevent", entry) < 0)
                return -ENOMEM;
        r = read_full_file_at(dir_fd, path, 4096, &text, NULL);
        if (r < 0)
                return r;
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                const char *v;

                if ((v = startswith(line, "MAJOR=")) && safe_atou(v, &maj) < 0)
                        return -EINVAL;
                if ((v = startswith(line, "MINOR=")) && safe_atou(v, &min) < 0)
                        return -EINVAL;
                if ((v = startswith(line, "DEVNAME=")))
                        name = v;
        }
        if (maj > 0xfffU || min > 0xfffffU || isempty(name) || strchr(name, '/') || streq(name, ".") ||
            streq(name, ".."))
                return -EINVAL;
        *ret_name = strdup(name);
        if (!*ret_name)
                return -ENOMEM;
        *ret_dev = makedev(maj, min);
        return 0;
}

static int add_device(int dir_fd, const char *entry, const char *bdi, const dev_t *known, size_t n_known,
                      RawDevice **devs, size_t *n) {
        _cleanup_free_ char *name = NULL;
        RawDevice *a;
        dev_t d;
        int r;

        r = uevent_node(dir_fd, entry, &d, &name);
        if (r < 0)
                return r;
        if (dev_in(d, known, n_known))
                return 0;
        if (*n >= RAW_CACHE_DEVICES_MAX)
                return -E2BIG;
        a = reallocarray(*devs, *n + 1, sizeof **devs);
        if (!a)
                return -ENOMEM;
        *devs = a;
        a[*n] = (RawDevice) { .dev = d, .name = TAKE_PTR(name), .disk = strdup(bdi), .error = -ENODATA };
        if (!a[(*n)++].disk)
                return -ENOMEM;
        return 0;
}

int raw_cache_others(int sysfs_fd, const char *bdi, const dev_t *known, size_t n_known, RawDevice **devs,
                     size_t *n) {
        _cleanup_dir_batch_ DirBatch b = { .fd = -EBADF };
        _cleanup_close_ int disk_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        const struct dirent64 *de;
        dev_t d;
        int r;

        if (parse_devnum(bdi, &d) < 0) /* anonymous-style names only: "btrfs-1" is no disk */
                return 0;
        if (asprintf(&path, "dev/block/%s", bdi) < 0)
                return -ENOMEM;
        disk_fd = open_dir_at(sysfs_fd, path);
        if (disk_fd == -ENOENT) /* no block device: an anonymous bdi (0:N) */
                return 0;
        if (disk_fd < 0)
                return disk_fd;
        if (faccessat(disk_fd, "partition", F_OK, 0) >= 0) /* a partition names no bdi */
                return 0;
        r = add_device(disk_fd, ".", bdi, known, n_known, devs, n);
        if (r < 0)
                return r;
        r = dir_batch_open(disk_fd, ".", &b);
        if (r < 0)
                return r;
        while ((de = dir_batch_next(&b))) {
                char part[NAME_MAX + 16];

                if (de->d_name[0] == '.' || de->d_type != DT_DIR)
                        continue;
                snprintf(part, sizeof part, "%s/partition", de->d_name);
                if (faccessat(disk_fd, part, F_OK, 0) < 0)
                        continue;
                r = add_device(disk_fd, de->d_name, bdi, known, n_known, devs, n);
                if (r < 0)
                        return r;
        }
        return b.error;
}

static int query_one(int dev_fd, const RawDevice *d, uint64_t *ret_dirty) {
        _cleanup_close_ int fd = -EBADF;
        struct ss_cachestat_range range = {};
        struct ss_cachestat cs = {};
        struct stat st;

        /* O_NONBLOCK: a removable disk without its medium opens all the same. */
        fd = openat(dev_fd, d->name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISBLK(st.st_mode) || st.st_rdev != d->dev)
                return -ENOTBLK;
        if (syscall(__NR_cachestat, fd, &range, &cs, 0) < 0)
                return -errno;
        *ret_dirty = cs.nr_dirty;
        return 0;
}

static int raw_cache_child(int pipe_fd, int root_fd, void *userdata) {
        const RawCacheRun *x = userdata;
        _cleanup_close_ int dev_fd = openat(root_fd, "dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int dev_error = dev_fd < 0 ? -errno : 0;

        for (size_t i = 0; i < x->n; i++) {
                RawCacheRecord rec = { .index = (uint32_t) i };

                rec.error = dev_error ?: query_one(dev_fd, &x->d[i], &rec.dirty);
                if (loop_write(pipe_fd, &rec, sizeof rec) < 0)
                        return 1;
        }
        return 0;
}

int raw_cache_feed(const char *buf, size_t size, void *userdata) {
        RawCacheRun *x = userdata;

        for (; x->done < x->n && (x->done + 1) * sizeof(RawCacheRecord) <= size; x->done++) {
                RawCacheRecord rec;

                memcpy(&rec, buf + x->done * sizeof rec, sizeof rec);
                if (rec.index != x->done || rec.error > 0)
                        return -EBADMSG;
                x->d[x->done].error = rec.error;
                x->d[x->done].dirty = rec.error == 0 ? rec.dirty : 0;
        }
        return x->done == x->n;
}

void raw_cache_query(int root_fd, RawDevice *d, size_t n, usec_t timeout) {
        RawCacheRun x = { .d = d, .n = n };
        int r;

        if (n == 0)
                return;
        r = bounded_child_run(root_fd, timeout, n * sizeof(RawCacheRecord), raw_cache_child, raw_cache_feed,
                              &x);
        /* What arrived counts; the rest carries why it did not. */
        for (size_t i = x.done; i < n; i++)
                d[i].error = r < 0 ? r : -EPROTO;
}

/* The first device with dirty pages, else the first that could not be asked: its reason. */
static int devices_verdict(const RawDevice *d, size_t n, char **ret_why) {
        const RawDevice *bad = NULL;

        for (size_t i = 0; i < n; i++) {
                if (d[i].error == 0 && d[i].dirty > 0) {
                        if (asprintf(ret_why,
                                     "block device %s (%s, on disk %s, which also holds a filesystem of "
                                     "this pass) holds %" PRIu64 " dirty pages written straight to it",
                                     d[i].name, FORMAT_DEVNUM(d[i].dev), d[i].disk, d[i].dirty) < 0)
                                return -ENOMEM;
                        return 1;
                }
                if (d[i].error < 0 && !bad)
                        bad = &d[i];
        }
        if (!bad)
                return 0;
        if (asprintf(ret_why,
                     "whether block device %s (%s, on disk %s, which also holds a filesystem of this pass) "
                     "holds dirty pages written straight to it cannot be told (cachestat: %s)",
                     bad->name, FORMAT_DEVNUM(bad->dev), bad->disk,
                     bad->error == -ENOSYS ? "needs Linux 6.5" : strerror(-bad->error)) < 0)
                return -ENOMEM;
        return 1;
}

static bool listed_before(const char *const *bdis, size_t i) {
        for (size_t j = 0; j < i; j++)
                if (bdis[j] && streq(bdis[j], bdis[i]))
                        return true;
        return false;
}

/* The other devices of disk 'bdi' (raw_cache_others()), unless its writeback lists are proven empty:
 * then nothing on any of its devices waits to be written, and none needs to be asked. */
static int disk_others(int sysfs_fd, int debugfs_fd, const char *bdi, const dev_t *known, size_t n_known,
                       int *cgwb, RawDevice **devs, size_t *n) {
        size_t before = *n;
        int r;

        r = raw_cache_others(sysfs_fd, bdi, known, n_known, devs, n);
        if (r < 0 || *n == before)
                return r;
        r = evidence_bdi_empty(debugfs_fd, sysfs_fd, bdi, cgwb, NULL);
        if (r == -ENOMEM)
                return r;
        if (r != 0) { /* proven empty, or the disk is gone (-ENOENT) */
                for (size_t k = before; k < *n; k++) {
                        free((*devs)[k].name);
                        free((*devs)[k].disk);
                }
                *n = before;
        }
        return 0;
}

int raw_cache_unexplained(int root_fd, int sysfs_fd, int debugfs_fd, const char *const *bdis, size_t n_bdis,
                          const dev_t *known, size_t n_known, usec_t timeout, char **ret_why) {
        RawDevice *devs = NULL;
        size_t n = 0;
        int cgwb = -1, r = 0;

        *ret_why = NULL;
        for (size_t i = 0; i < n_bdis && r >= 0; i++) {
                if (!bdis[i] || listed_before(bdis, i))
                        continue;
                r = disk_others(sysfs_fd, debugfs_fd, bdis[i], known, n_known, &cgwb, &devs, &n);
                if (r < 0 && r != -ENOMEM &&
                    asprintf(ret_why,
                             "the block devices of disk %s, which holds a filesystem of this pass, cannot be "
                             "listed (sysfs: %s)",
                             bdis[i], strerror(-r)) < 0)
                        r = -ENOMEM;
        }
        if (r >= 0) {
                raw_cache_query(root_fd, devs, n, timeout);
                r = devices_verdict(devs, n, ret_why);
        } else if (r != -ENOMEM)
                r = 1;
        raw_devices_free(devs, n);
        return r;
}
