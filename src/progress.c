/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bdi-stats.h"
#include "progress.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

#define STAT_FILE_MAX 1024U

int progress_parse_block_stat(const char *text, uint64_t *ret, uint64_t *ret_in_flight) {
        /* 0-based field indices that only move when a request completes. */
        static const unsigned completion_fields[] = { 0, 2, 4, 6, 11, 13, 15 };
        uint64_t v[17] = {}, sum = 0;
        const char *p = text;
        unsigned n = 0;

        if (!text)
                return -EINVAL;

        while (n < ELEMENTSOF(v)) {
                char *end;

                p += strspn(p, " \t");
                if (*p < '0' || *p > '9')
                        break;
                errno = 0;
                v[n] = strtoull(p, &end, 10);
                if (errno != 0)
                        return -EBADMSG;
                n++;
                p = end;
        }
        p += strspn(p, " \t\n");
        if (n < 11 || (n < ELEMENTSOF(v) && *p != '\0'))
                return -EBADMSG;

        for (size_t i = 0; i < ELEMENTSOF(completion_fields); i++)
                if (completion_fields[i] < n)
                        sum += v[completion_fields[i]];
        *ret = sum;
        if (ret_in_flight)
                *ret_in_flight = v[8];
        return 0;
}

static int leaf_read(int sysfs_fd, dev_t dev, uint64_t *ret, uint64_t *ret_in_flight) {
        _cleanup_free_ char *text = NULL;
        char path[96];
        int r;

        /* Never queue/iostats here: reading it takes the queue's limits lock, which a task stuck in
         * the device's revalidation or reconfiguration holds (sd_revalidate_disk(), a loop device
         * frozen on a dead backing file). The worker reads it (worker.h); partitions have no queue/
         * of their own, leaves are whole disks. part_stat_show() takes no lock. */
        snprintf(path, sizeof path, "dev/block/%u:%u/stat", major(dev), minor(dev));
        r = read_full_file_at(sysfs_fd, path, STAT_FILE_MAX, &text, NULL);
        if (r < 0)
                return r;
        return progress_parse_block_stat(text, ret, ret_in_flight);
}

bool progress_busy_needed(const char *release) {
        unsigned maj, min;

        /* Unknown: field 9 alone, and no debugfs read that might wait (6.16+ takes a lock there). */
        if (!release || sscanf(release, "%u.%u", &maj, &min) != 2)
                return false;
        return maj < 6 || (maj == 6 && min < 10);
}

bool progress_busy_needed_here(void) {
        static int cached = -1;
        struct utsname u;

        if (cached < 0)
                cached = uname(&u) >= 0 && progress_busy_needed(u.release);
        return cached;
}

/* Does the driver hold a started request of this disk: one line per request in any of its blk-mq
 * debugfs block/<disk>/hctx<N>/busy files. Errors and a missing file mean no. */
static bool leaf_busy(int sysfs_fd, int debugfs_fd, dev_t dev) {
        _cleanup_free_ char *link = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        char path[96];
        const char *name;
        struct dirent *de;

        snprintf(path, sizeof path, "dev/block/%u:%u", major(dev), minor(dev));
        if (readlink_malloc_at(sysfs_fd, path, &link) < 0)
                return false;
        name = strrchr(link, '/');
        name = name ? name + 1 : link;
        if (isempty(name) || strlen(name) > 64)
                return false;
        snprintf(path, sizeof path, "block/%s", name);
        if (opendir_at(debugfs_fd, path, &d) < 0)
                return false;
        while ((de = readdir(d))) {
                _cleanup_close_ int fd = -EBADF;
                char busy[64], c;

                if (!startswith(de->d_name, "hctx") || strlen(de->d_name) > 32)
                        continue;
                snprintf(busy, sizeof busy, "%.32s/busy", de->d_name);
                fd = openat(dirfd(d), busy, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd >= 0 && read(fd, &c, 1) == 1)
                        return true;
        }
        return false;
}

int progress_read(const ProgressProbe *p, uint64_t *ret, bool *ret_held) {
        uint64_t sum = 0, v, in_flight, held = 0;
        bool any = false;

        if (!p)
                return -ENODATA;

        /* Every leaf or none: I/O on a leaf that cannot be read, or does not account it, would pass
         * for a stall of the others, and a device proven stuck turns the kernel's sync off. Nor do
         * the bdi's BdiWritten count a journal's writes. */
        if (p->n_leaves > 0 && p->sysfs_fd < 0)
                return -ENODATA;
        for (size_t i = 0; i < p->n_leaves; i++) {
                if (leaf_read(p->sysfs_fd, p->leaves[i], &v, &in_flight) < 0)
                        return -ENODATA;
                sum += v;
                held += in_flight;
                any = true;
        }

        if (p->debugfs_fd >= 0 && p->bdi_name) {
                BdiStats st;

                if (bdi_stats_load(p->debugfs_fd, p->bdi_name, &st) >= 0 &&
                    bdi_stats_has(&st, BDI_STAT_WRITTEN)) {
                        sum += st.value[BDI_STAT_WRITTEN];
                        any = true;
                }
        }

        if (!any)
                return -ENODATA;
        /* Before Linux 6.10 field 9 counts no pending cache FLUSH (progress.h): ask the driver. */
        if (ret_held && held == 0 && p->busy_fallback && p->sysfs_fd >= 0 && p->debugfs_fd >= 0)
                for (size_t i = 0; i < p->n_leaves && held == 0; i++)
                        held = leaf_busy(p->sysfs_fd, p->debugfs_fd, p->leaves[i]);
        *ret = sum;
        if (ret_held)
                *ret_held = p->n_leaves == 0 || held > 0;
        return 0;
}
