/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "shared/exe-util.h"

/* statx() of pid's exe link, followed: the inode the process runs, kept by the kernel while it runs. */
static int exe_statx(int proc_fd, pid_t pid, unsigned mask, struct statx *ret) {
        char path[32];

        if (pid < 0)
                return -EINVAL;
        if (pid == 0)
                (void) snprintf(path, sizeof path, "self/exe");
        else
                (void) snprintf(path, sizeof path, "%d/exe", (int) pid);
        if (statx(proc_fd, path, AT_STATX_DONT_SYNC, mask, ret) < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        return 0;
}

int proc_exe_is(int proc_fd, pid_t pid, const char *path) {
        struct statx exe, file;
        int r;

        r = exe_statx(proc_fd, pid, STATX_INO, &exe);
        if (r < 0)
                return r;
        if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO, &file) < 0)
                return -errno;
        if (!(exe.stx_mask & file.stx_mask & STATX_INO))
                return -EOPNOTSUPP;
        return exe.stx_dev_major == file.stx_dev_major && exe.stx_dev_minor == file.stx_dev_minor &&
               exe.stx_ino == file.stx_ino;
}

int proc_exe_unlinked(int proc_fd, pid_t pid) {
        struct statx exe;
        int r;

        r = exe_statx(proc_fd, pid, STATX_NLINK, &exe);
        if (r < 0)
                return r;
        if (!(exe.stx_mask & STATX_NLINK))
                return -EOPNOTSUPP;
        return exe.stx_nlink == 0;
}
