/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loop-backing.h"
#include "shared/bounded-child.h"
#include "shared/fileio.h"
#include "shared/macro.h"

static int query_one(int dev_fd, const LoopBackingQuery *q, LoopBackingRecord *rec) {
        _cleanup_close_ int fd = -EBADF;
        struct loop_info64 info = {};
        struct stat st;

        if (!q->name || !q->name[0] || strchr(q->name, '/') || streq(q->name, ".") || streq(q->name, ".."))
                return -EINVAL;
        fd = openat(dev_fd, q->name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISBLK(st.st_mode) || st.st_rdev != q->loop)
                return -ENOTBLK;
        if (ioctl(fd, LOOP_GET_STATUS64, &info) < 0)
                return -errno;
        rec->dev = info.lo_device;
        rec->ino = info.lo_inode;
        rec->rdev = info.lo_rdevice;
        return 0;
}

static int loop_backing_child(int pipe_fd, int root_fd, void *userdata) {
        const LoopBackingRun *x = userdata;
        _cleanup_close_ int dev_fd = openat(root_fd, "dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int dev_error = dev_fd < 0 ? -errno : 0;

        for (size_t i = 0; i < x->n_ask; i++) {
                LoopBackingRecord rec = { .index = (uint32_t) i };

                rec.error = dev_error ?: query_one(dev_fd, &x->q[x->ask[i]], &rec);
                if (loop_write(pipe_fd, &rec, sizeof rec) < 0)
                        return 1;
        }
        return 0;
}

int loop_backing_feed(const char *buf, size_t size, void *userdata) {
        LoopBackingRun *x = userdata;

        for (; (x->done + 1) * sizeof(LoopBackingRecord) <= size; x->done++) {
                LoopBackingRecord rec;
                LoopBackingQuery *q;

                memcpy(&rec, buf + x->done * sizeof rec, sizeof rec);
                if (rec.index != x->done || rec.error > 0)
                        return -EBADMSG;
                q = &x->q[x->ask[x->done]];
                q->error = rec.error;
                if (rec.error == 0) {
                        q->backing_dev = (dev_t) rec.dev;
                        q->backing_ino = rec.ino;
                        q->backing_rdev = (dev_t) rec.rdev;
                }
        }
        return x->done == x->n_ask;
}

/* A node that does not exist, found without a child: only on a /dev the caller knows is in memory. */
static bool node_missing(int dev_fd, const char *name) {
        return dev_fd >= 0 && name && !strchr(name, '/') &&
               faccessat(dev_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

int loop_backing_query(int root_fd, bool dev_in_memory, LoopBackingQuery *q, size_t n, usec_t timeout) {
        _cleanup_close_ int dev_fd = -EBADF;
        size_t ask[LOOP_BACKING_QUERY_MAX];
        LoopBackingRun x = { .q = q, .ask = ask };
        int r;

        if (n > LOOP_BACKING_QUERY_MAX)
                return -E2BIG;
        if (dev_in_memory)
                dev_fd = openat(root_fd, "dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (size_t i = 0; i < n; i++) {
                q[i].error = -ETIMEDOUT;
                if (node_missing(dev_fd, q[i].name))
                        q[i].error = -ENOENT;
                else
                        ask[x.n_ask++] = i;
        }
        if (x.n_ask == 0)
                return 0;
        r = bounded_child_run(root_fd, timeout, x.n_ask * sizeof(LoopBackingRecord), loop_backing_child,
                              loop_backing_feed, &x);
        /* What arrived counts; the rest carries why it did not, our own failure to ask included. */
        for (size_t i = x.done; i < x.n_ask; i++)
                q[ask[i]].error = r < 0 ? r : -EPROTO;
        return 0;
}
