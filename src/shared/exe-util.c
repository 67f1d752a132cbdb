/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "shared/exe-util.h"

int proc_exe_unlinked(int proc_fd, pid_t pid) {
        char path[32];
        struct stat st;

        if (pid < 0)
                return -EINVAL;
        if (pid == 0)
                (void) snprintf(path, sizeof path, "self/exe");
        else
                (void) snprintf(path, sizeof path, "%d/exe", (int) pid);
        if (fstatat(proc_fd, path, &st, 0) < 0)
                return -errno;
        return st.st_nlink == 0;
}
