/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <string.h>

#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "suspend-stats.h"

void suspend_stats_name(const char *text, char *buf, size_t size) {
        size_t n = 0;

        if (size == 0)
                return;
        for (const char *p = text; *p && *p != '\n' && n + 1 < size; p++)
                buf[n++] = strchr(SUSPEND_STATS_NAME_CHARS, *p) ? *p : '?';
        buf[n] = 0;
}

static void load_name(int dir_fd, const char *path, char *buf, size_t size) {
        _cleanup_free_ char *text = NULL;

        buf[0] = 0;
        if (read_full_file_at(dir_fd, path, 256, &text, NULL) >= 0)
                suspend_stats_name(text, buf, size);
}

static int load_errno(int dir_fd) {
        _cleanup_free_ char *text = NULL;
        unsigned v;

        if (read_full_file_at(dir_fd, "last_failed_errno", 64, &text, NULL) < 0)
                return 0;
        text[strcspn(text, "\n")] = 0;
        /* "-16", or "0" when none failed */
        if (text[0] != '-' || safe_atou(text + 1, &v) < 0 || v == 0 || v > 4095)
                return 0;
        return -(int) v;
}

void suspend_stats_load(int sysfs_fd, bool details, SuspendStats *ret) {
        _cleanup_close_ int fd = -EBADF;

        *ret = SUSPEND_STATS_NULL;
        if (sysfs_fd < 0)
                return;
        fd = open_dir_at(sysfs_fd, SUSPEND_STATS_DIR);
        if (fd < 0)
                return;
        if (read_u64_file_at(fd, "success", &ret->success) < 0)
                ret->success = SUSPEND_STATS_UNKNOWN;
        if (read_u64_file_at(fd, "fail", &ret->fail) < 0)
                ret->fail = SUSPEND_STATS_UNKNOWN;
        if (!details)
                return;
        ret->last_failed_errno = load_errno(fd);
        load_name(fd, "last_failed_step", ret->last_failed_step, sizeof ret->last_failed_step);
        load_name(fd, "last_failed_dev", ret->last_failed_dev, sizeof ret->last_failed_dev);
}
