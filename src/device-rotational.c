/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device-rotational.h"
#include "device-sysfs.h"
#include "shared/bounded-child.h"
#include "shared/fileio.h"
#include "shared/macro.h"

/* In the child: the sysfs root is fd 4 (keep_fd). Each attribute read as the classifier reads it
 * (sysfs_node_attr_bool()), one record each, in order. */
static int rotational_child(int pipe_fd, int sysfs_fd, void *userdata) {
        const DeviceRotationalRun *x = userdata;
        Sysfs s = sysfs_on_fd(sysfs_fd);

        for (size_t i = 0; i < x->n; i++) {
                Node node = { .path = (char *) x->q[i].disk };
                DeviceRotationalRecord rec = { .index = (uint32_t) i };

                rec.value = sysfs_node_attr_bool(&s, &node, "queue/rotational");
                if (loop_write(pipe_fd, &rec, sizeof rec) < 0)
                        return 1;
        }
        return 0;
}

int device_rotational_feed(const char *buf, size_t size, void *userdata) {
        DeviceRotationalRun *x = userdata;

        for (; x->done < x->n && (x->done + 1) * sizeof(DeviceRotationalRecord) <= size; x->done++) {
                DeviceRotationalRecord rec;

                memcpy(&rec, buf + x->done * sizeof rec, sizeof rec);
                if (rec.index != x->done || rec.value > 1)
                        return -EBADMSG;
                x->q[x->done].value = rec.value;
        }
        return x->done == x->n;
}

int device_rotational_query(int sysfs_fd, DeviceRotationalQuery *q, size_t n, usec_t timeout) {
        DeviceRotationalRun x = { .q = q, .n = MIN(n, (size_t) DEVICE_ROTATIONAL_QUERY_MAX) };
        int r;

        for (size_t i = 0; i < n; i++)
                q[i].value = i < x.n ? -ETIMEDOUT : -E2BIG;
        if (sysfs_fd < 0) {
                for (size_t i = 0; i < n; i++)
                        q[i].value = -EBADF;
                return -EBADF;
        }
        if (x.n == 0)
                return 0;
        r = bounded_child_run(sysfs_fd, timeout, x.n * sizeof(DeviceRotationalRecord), rotational_child,
                              device_rotational_feed, &x);
        /* What arrived counts; the rest carries why it did not, our own failure to ask included. */
        for (size_t i = x.done; i < x.n; i++)
                q[i].value = r < 0 ? r : -EPROTO;
        return 0;
}

static int cmp_query_disk(const void *key, const void *elem) {
        return strcmp(key, ((const DeviceRotationalQuery *) elem)->disk);
}

void device_info_apply_rotational(DeviceInfo *d, const DeviceRotationalQuery *q, size_t n) {
        bool unknown = false, rotational = false;

        if (!d->rotational_disks)
                return;
        for (char **disk = d->rotational_disks; *disk; disk++) {
                const DeviceRotationalQuery *a = n > 0 ? bsearch(*disk, q, n, sizeof *q, cmp_query_disk)
                                                       : NULL;

                if (a && a->value > 0)
                        rotational = true;
                else if (!a || a->value < 0)
                        unknown = true;
        }
        /* The union over the disks, as the classifier makes it (device.h: classes_unknown). */
        d->classes_unknown &= ~DEVICE_ROTATIONAL;
        if (rotational)
                d->classes |= DEVICE_ROTATIONAL;
        else if (unknown)
                d->classes_unknown |= DEVICE_ROTATIONAL;
}
