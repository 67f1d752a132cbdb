/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <unistd.h>

#include "dirent-util.h"
#include "fileio.h"

int dir_batch_open(int dir_fd, const char *path, DirBatch *ret) {
        int fd;

        ret->fd = -EBADF;
        ret->error = 0;
        ret->pos = ret->len = 0;
        fd = open_dir_at(dir_fd, path);
        if (fd < 0)
                return fd;
        ret->fd = fd;
        return 0;
}

const struct dirent64 *dir_batch_next(DirBatch *d) {
        const struct dirent64 *de;

        if (d->fd < 0 || d->error < 0)
                return NULL;
        if (d->pos >= d->len) {
                ssize_t n = getdents64(d->fd, d->buf, sizeof d->buf);

                if (n <= 0) {
                        d->error = n < 0 ? negative_errno() : 0;
                        d->pos = d->len = 0;
                        return NULL;
                }
                d->pos = 0;
                d->len = (size_t) n;
        }
        de = (const struct dirent64 *) (d->buf + d->pos);
        if (de->d_reclen == 0 || de->d_reclen > d->len - d->pos) {
                d->error = -EBADMSG; /* not what the kernel writes */
                return NULL;
        }
        d->pos += de->d_reclen;
        return de;
}

void dir_batch_close(DirBatch *d) {
        if (d && d->fd >= 0) {
                (void) close(d->fd);
                d->fd = -EBADF;
        }
}
