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

typedef struct LoopBackingRecord {
        uint32_t index;
        int32_t error;
        uint64_t dev; /* lo_device: the kernel's huge_encode_dev(), glibc's dev_t encoding */
        uint64_t ino;
} LoopBackingRecord;

typedef struct LoopBackingRun {
        LoopBackingQuery *q;
        size_t *ask; /* indices into q of the queries the child answers, in order */
        size_t n_ask;
        size_t done;
} LoopBackingRun;

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
        return 0;
}

static int loop_backing_child(int pipe_fd, int dev_fd, void *userdata) {
        const LoopBackingRun *x = userdata;

        for (size_t i = 0; i < x->n_ask; i++) {
                LoopBackingRecord rec = { .index = (uint32_t) i };

                rec.error = query_one(dev_fd, &x->q[x->ask[i]], &rec);
                if (loop_write(pipe_fd, &rec, sizeof rec) < 0)
                        return 1;
        }
        return 0;
}

static int loop_backing_feed(const char *buf, size_t size, void *userdata) {
        LoopBackingRun *x = userdata;

        for (; (x->done + 1) * sizeof(LoopBackingRecord) <= size; x->done++) {
                LoopBackingRecord rec;

                memcpy(&rec, buf + x->done * sizeof rec, sizeof rec);
                LoopBackingQuery *q;

                if (rec.index != x->done || rec.error > 0)
                        return -EBADMSG;
                q = &x->q[x->ask[x->done]];
                q->error = rec.error;
                if (rec.error == 0) {
                        q->backing_dev = (dev_t) rec.dev;
                        q->backing_ino = rec.ino;
                }
        }
        return x->done == x->n_ask;
}

int loop_backing_query(int dev_fd, LoopBackingQuery *q, size_t n, usec_t timeout) {
        size_t ask[LOOP_BACKING_QUERY_MAX];
        LoopBackingRun x = { .q = q, .ask = ask };
        int r;

        if (n > LOOP_BACKING_QUERY_MAX)
                return -E2BIG;
        /* No node (a container's /dev): answered here, without a child. Whatever else a node is, the
         * child finds out: opening it may block. */
        for (size_t i = 0; i < n; i++) {
                q[i].error = dev_fd < 0 ? -EBADF : -ETIMEDOUT;
                if (dev_fd >= 0 && q[i].name && !strchr(q[i].name, '/') &&
                    faccessat(dev_fd, q[i].name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
                        q[i].error = -ENOENT;
                if (q[i].error == -ETIMEDOUT)
                        ask[x.n_ask++] = i;
        }
        if (x.n_ask == 0)
                return 0;
        r = bounded_child_run(dev_fd, timeout, x.n_ask * sizeof(LoopBackingRecord), loop_backing_child,
                              loop_backing_feed, &x);
        if (r == -ENOMEM)
                return r;
        /* What arrived counts; the rest carries why it did not. */
        for (size_t i = x.done; i < x.n_ask; i++)
                q[ask[i]].error = r < 0 ? r : -EPROTO;
        return 0;
}
