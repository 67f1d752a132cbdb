/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <sys/types.h>

#include "wrap-getdents.h"

struct stat wrap_getdents_fail_dir;
int wrap_getdents_fail_errno;

ssize_t __real_getdents64(int fd, void *buf, size_t size);
ssize_t __wrap_getdents64(int fd, void *buf, size_t size);

ssize_t __wrap_getdents64(int fd, void *buf, size_t size) {
        struct stat st;

        if (wrap_getdents_fail_errno != 0 && fstat(fd, &st) >= 0 &&
            st.st_dev == wrap_getdents_fail_dir.st_dev && st.st_ino == wrap_getdents_fail_dir.st_ino) {
                errno = wrap_getdents_fail_errno;
                return -1;
        }
        return __real_getdents64(fd, buf, size);
}
