/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "evidence.h"
#include "shared/macro.h"

bool evidence_fuse_clean(const BdiStats *bdi, int bdi_r, const Meminfo *global, int global_r,
                         const char **ret_why) {
        static const BdiStatKey lists[] = {
                BDI_STAT_B_DIRTY,
                BDI_STAT_B_IO,
                BDI_STAT_B_MORE_IO,
                BDI_STAT_B_DIRTY_TIME,
        };
        const char *why = NULL;

        if (bdi_r < 0 || !bdi)
                why = "no writeback lists for its bdi (debugfs)";
        else
                for (size_t i = 0; i < ELEMENTSOF(lists) && !why; i++) {
                        if (!bdi_stats_has(bdi, lists[i]))
                                why = "its bdi's writeback lists are not all shown (debugfs layout)";
                        else if (bdi->value[lists[i]] != 0)
                                why = "its bdi lists dirty inodes";
                }
        if (!why) {
                if (global_r < 0 || !global || !global->has_writeback)
                        why = "the system's writeback count could not be read exactly";
                else if (global->writeback_bytes != 0 ||
                         (global->has_writeback_tmp && global->writeback_tmp_bytes != 0))
                        why = "pages are under writeback";
        }
        if (ret_why)
                *ret_why = why;
        return !why;
}

int evidence_load_global(int root_fd, Meminfo *ret) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(root_fd, "proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (write(fd, "1", 1) != 1)
                return errno > 0 ? -errno : -EIO;
        return meminfo_load(root_fd, ret);
}
