/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Device classification.
 *
 * Block facts are read through device-sysfs.h: a directory fd on sysfs_root (libudev on request, to
 * cross-check), with the walking rules below written once on top of either. A DeviceClassifier opens
 * sysfs once for all the superblocks of a sample.
 *
 * Grouping: DeviceInfo.leaves holds the *whole disks* at the bottom of the device stack, sorted
 * and without duplicates: a partition contributes its disk, so two partitions of one disk share
 * a leaf (they share a request queue), and dm-crypt on sda2 has the leaf sda (8:0). md0 over
 * sda1 and sdb1 has leaves 8:0 and 8:16. A btrfs superblock (anonymous 0:N) has the leaves of its
 * member devices (fs/btrfs/<uuid>/devices/). When nothing better is known, leaves is [dev].
 *
 * Classes: usb, removable, rotational and loop are the union over the whole disk of dev and all
 * leaf disks (dm-crypt on a usb stick is "usb"); crypt is set when dm/uuid starts with "CRYPT-" on
 * any device from the whole disk of dev down to the leaves; network/fuse come from the fstype.
 * loop_backing_file is the one of the first loop device among the whole disk and the leaves.
 *
 * Bounds: slaves/ recursion depth 16, 1024 devices visited, 256 leaves, 64 btrfs filesystems. A stack
 * beyond a bound, or one with a listing or member that cannot be read, is not classified (incomplete):
 * what was seen of it is never taken for all of it.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device-sysfs.h"
#include "device.h"
#include "shared/devnum-util.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "shared/strv.h"

#define DEVICE_SLAVES_DEPTH_MAX 16U
#define DEVICE_VISIT_MAX 1024U
#define DEVICE_LEAVES_MAX 256U
#define DEVICE_BTRFS_FS_MAX 64U

/* ---------------------------------------------------------------------------------------------- */
/* device classes */

/* Indexed by bit number: DEVICE_USB is bit 0, DEVICE_REMOVABLE bit 1, ... */
static const char *const device_class_index_table[] = {
        "usb", "removable", "rotational", "network", "fuse", "loop", "crypt",
};

DEFINE_PRIVATE_STRING_TABLE_LOOKUP(device_class_index, int);

const char *device_class_to_string(unsigned bit) {
        if (bit == 0 || (bit & (bit - 1)) != 0 || (bit & ~_DEVICE_CLASS_ALL) != 0)
                return NULL;
        return device_class_index_to_string(__builtin_ctz(bit));
}

int device_class_from_string(const char *s) {
        int i = device_class_index_from_string(s);

        return i < 0 ? i : (int) (1U << i);
}

/* ---------------------------------------------------------------------------------------------- */
/* classification */

typedef struct Walk {
        Sysfs *sysfs;
        DeviceRotationalRead rotational; /* device_classifier_set_rotational_read() */
        dev_t *leaves;
        size_t n_leaves;
        unsigned visits;
        unsigned classes;
        unsigned unknown; /* classes whose attribute could not be read (or was not asked for) */
        char *backing_file;
        dev_t loop_dev;
        char *loop_devname;
        unsigned n_loops;
        bool served_remotely;
        bool incomplete;         /* a part of the stack could not be read or was beyond a bound */
        int error;               /* the first error met reading it (negative errno), 0: none */
        char **rotational_disks; /* DEVICE_ROTATIONAL_DEFER: the disks whose attribute decides */
        size_t n_rotational_disks;
} Walk;

/* What could not be read is remembered for the message, the first error only (walk_fail() also
 * marks the stack incomplete). ENOENT of a device sysfs does not know is no error. */
static void walk_note(Walk *w, int r) {
        if (r < 0 && w->error == 0)
                w->error = r;
}

static void walk_fail(Walk *w, int r) {
        w->incomplete = true;
        walk_note(w, r);
}

static int walk_add_leaf(Walk *w, dev_t d) {
        dev_t *nl;

        for (size_t i = 0; i < w->n_leaves; i++)
                if (w->leaves[i] == d)
                        return 0;
        if (w->n_leaves >= DEVICE_LEAVES_MAX) {
                w->incomplete = true;
                return 0;
        }
        nl = realloc(w->leaves, (w->n_leaves + 1) * sizeof(dev_t));
        if (!nl)
                return -ENOMEM;
        w->leaves = nl;
        w->leaves[w->n_leaves++] = d;
        return 0;
}

/* An NVMe multipath head (devices/virtual/nvme-subsystem/nvme-subsysN/nvmeXnY): local when every
 * controller of its subsystem (the nvmeX links next to it) has transport "pcie". 1, 0, -ENOMEM. */
static int nvme_head_local(Sysfs *s, const Node *disk) {
        _cleanup_strv_free_ char **names = NULL;
        size_t n = 0, n_ctrl = 0;
        int r;

        r = sysfs_node_list_dir(s, disk, "..", 4096, &names, &n);
        if (r == -ENOMEM)
                return r;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *t = NULL;
                char attr[128];

                if (!startswith(names[i], "nvme") || !names[i][4] ||
                    strspn(names[i] + 4, "0123456789") != strlen(names[i] + 4))
                        continue;
                snprintf(attr, sizeof attr, "../%s/transport", names[i]);
                r = sysfs_node_attr(s, disk, attr, &t);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || !streq(t, "pcie"))
                        return 0;
                n_ctrl++;
        }
        return r >= 0 && n_ctrl > 0;
}

/* Whether a whole disk is served by the kernel on this machine, by where sysfs puts it: under
 * devices/virtual/ only the kernel's own stacking and memory devices and NVMe multipath heads over
 * PCIe are (nbd, ublk, rbd, vduse's virtio and NVMe over fabrics live there too, served by a
 * process or over the network), and a SCSI disk below an iSCSI session is served over the network.
 * A path that is not known counts as not served by the kernel. 1, 0, -ENOMEM. */
static int disk_served_locally(Sysfs *s, const Node *disk, const char *name) {
        static const char *const kernel_virtual[] = { "loop", "dm-", "md", "zram", "ram", "nullb" };
        const char *path = disk->path, *v;

        if (!path)
                return 0;
        for (const char *p = strstr(path, "/session"); p; p = strstr(p + 1, "/session"))
                if (p[8] >= '0' && p[8] <= '9')
                        return 0;
        v = startswith(path, "devices/virtual/") ? path : strstr(path, "/devices/virtual/");
        if (!v)
                return 1;
        if (strstr(v, "virtual/nvme-subsystem/"))
                return nvme_head_local(s, disk);
        if (!strstr(v, "virtual/block/"))
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(kernel_virtual); i++)
                if (startswith(name, kernel_virtual[i]))
                        return 1;
        return 0;
}

/* The node a device's uevent names: MAJOR=, MINOR= and DEVNAME=, a single path component. */
static int node_uevent(Sysfs *s, const Node *n, dev_t *ret_dev, char **ret_name) {
        _cleanup_free_ char *uevent = NULL, *name = NULL;
        unsigned maj = UINT_MAX, min = UINT_MAX;
        char *line, *save = NULL;
        int r;

        r = sysfs_node_attr(s, n, "uevent", &uevent);
        if (r < 0)
                return r;
        for (line = strtok_r(uevent, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                const char *v;

                if ((v = startswith(line, "MAJOR=")) && safe_atou(v, &maj) < 0)
                        return -EINVAL;
                if ((v = startswith(line, "MINOR=")) && safe_atou(v, &min) < 0)
                        return -EINVAL;
                if ((v = startswith(line, "DEVNAME="))) {
                        if (isempty(v) || strchr(v, '/') || streq(v, ".") || streq(v, ".."))
                                return -EINVAL;
                        free(name);
                        name = strdup(v);
                        if (!name)
                                return -ENOMEM;
                }
        }
        if (maj > 0xfffU || min > 0xfffffU || !name)
                return -ENOENT;
        *ret_dev = makedev(maj, min);
        *ret_name = TAKE_PTR(name);
        return 0;
}

/* The first loop device of the stack: its backing file's path (for humans) and how to ask the
 * driver where that file really is (loop-backing.h): the node its uevent names. */
static int loop_facts(Walk *w, const Node *disk) {
        _cleanup_free_ char *bf = NULL;
        int r;

        r = sysfs_node_attr(w->sysfs, disk, "loop/backing_file", &bf);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && !isempty(bf))
                w->backing_file = TAKE_PTR(bf);
        r = node_uevent(w->sysfs, disk, &w->loop_dev, &w->loop_devname);
        return r == -ENOMEM ? r : 0;
}

/* Facts of a whole disk: removable, rotational, usb, loop (+ backing file), served locally. */
static int disk_facts(Walk *w, const Node *disk) {
        Sysfs *s = w->sysfs;
        const char *name = disk->path ? sysfs_last_component(disk->path) : "";
        int r;

        /* An attribute not read leaves its class unknown: no rule may skip on its absence. */
        r = sysfs_node_attr_bool(s, disk, "removable");
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                w->unknown |= DEVICE_REMOVABLE;
        if (r > 0)
                w->classes |= DEVICE_REMOVABLE;
        r = w->rotational == DEVICE_ROTATIONAL_READ ? sysfs_node_attr_bool(s, disk, "queue/rotational")
                                                    : -ENODATA;
        if (r == -ENOMEM)
                return r;
        /* Deferred: unknown until the child's answer is applied (device_info_apply_rotational()); a
         * disk whose directory is not known is listed as "", which nobody asks: it stays unknown. */
        if (w->rotational == DEVICE_ROTATIONAL_DEFER &&
            !strv_contains(w->rotational_disks, disk->path ?: "") &&
            strv_extend(&w->rotational_disks, &w->n_rotational_disks, disk->path ?: "") < 0)
                return -ENOMEM;
        if (r < 0)
                w->unknown |= DEVICE_ROTATIONAL;
        if (r > 0)
                w->classes |= DEVICE_ROTATIONAL;
        r = s->backend->is_usb(s, disk);
        if (r < 0)
                return r;
        if (r > 0)
                w->classes |= DEVICE_USB;
        r = disk_served_locally(s, disk, name);
        if (r < 0)
                return r;
        if (r == 0)
                w->served_remotely = true;
        if (strncmp(name, "loop", 4) == 0) {
                w->classes |= DEVICE_LOOP;
                w->n_loops++;
                if (w->n_loops == 1)
                        return loop_facts(w, disk);
        }
        return 0;
}

/* Turns a partition node into its disk (in place); other nodes stay. */
static int node_to_whole(Sysfs *s, Node *n) {
        Node p;
        int r;

        if (!s->backend->is_partition(s, n))
                return 0;
        r = s->backend->parent(s, n, &p);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        node_done(n);
        *n = p;
        return 0;
}

static int walk_node(Walk *w, Node *node, unsigned depth) {
        Sysfs *s = w->sysfs;
        _cleanup_strv_free_ char **slaves = NULL;
        _cleanup_free_ char *uuid = NULL;
        size_t n_slaves = 0, n_used = 0;
        int r;

        if (++w->visits > DEVICE_VISIT_MAX) {
                w->incomplete = true;
                return 0;
        }

        /* The top node (depth 0) is a whole disk already, its facts read by walk_block(). */
        r = depth > 0 ? node_to_whole(s, node) : 0;
        if (r < 0)
                return r;

        r = sysfs_node_attr(s, node, "dm/uuid", &uuid);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && strncmp(uuid, "CRYPT-", 6) == 0)
                w->classes |= DEVICE_CRYPT;

        /* No slaves/ directory: a disk of its own. One that cannot be listed in full, a slave that
         * cannot be followed, or a stack deeper than the bound: what lies below is not known. */
        r = sysfs_node_list_dir(s, node, "slaves", DEVICE_LEAVES_MAX * 2, &slaves, &n_slaves);
        if (r == -ENOMEM)
                return r;
        if ((r < 0 && r != -ENOENT) || (n_slaves > 0 && depth >= DEVICE_SLAVES_DEPTH_MAX)) {
                walk_fail(w, r == -ENOENT ? 0 : r);
                n_slaves = 0;
        }

        for (size_t i = 0; i < n_slaves; i++) {
                _cleanup_free_ char *attr = NULL;
                Node child;
                dev_t d;

                if (asprintf(&attr, "slaves/%s/dev", slaves[i]) < 0)
                        return -ENOMEM;
                r = sysfs_node_attr_devnum(s, node, attr, &d);
                if (r >= 0)
                        r = s->backend->node_from_devnum(s, d, &child);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        walk_fail(w, r);
                        continue;
                }
                n_used++;
                r = walk_node(w, &child, depth + 1);
                node_done(&child);
                if (r < 0)
                        return r;
        }

        if (n_used > 0)
                return 0;

        /* A leaf (or the end of what we can follow): the whole disk. */
        r = depth > 0 ? disk_facts(w, node) : 0;
        if (r < 0)
                return r;
        if (node->devnum != 0)
                return walk_add_leaf(w, node->devnum);
        return 0;
}

static int cmp_dev(const void *a, const void *b) {
        dev_t x = *(const dev_t *) a, y = *(const dev_t *) b;
        return x < y ? -1 : x > y;
}

/* Walks the block device 'dev' into w. Returns 1 if found, 0 if not a block device here. */
static int walk_block(Walk *w, dev_t dev, dev_t *ret_whole, char **ret_bdi, char **ret_name) {
        Node n = {};
        int r;

        r = w->sysfs->backend->node_from_devnum(w->sysfs, dev, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (r != -ENOENT)
                        walk_note(w, r);
                return 0;
        }
        if (ret_name) {
                *ret_name = strdup(sysfs_last_component(n.path));
                if (!*ret_name) {
                        r = -ENOMEM;
                        goto finish;
                }
        }

        r = node_to_whole(w->sysfs, &n);
        if (r < 0)
                goto finish;
        if (ret_whole)
                *ret_whole = n.devnum;
        if (ret_bdi) {
                r = sysfs_node_link_name(w->sysfs, &n, "bdi", ret_bdi);
                if (r == -ENOMEM)
                        goto finish;
        }
        /* Facts of the top whole disk itself (a dm/md device is not a leaf but is loop/usb/...
         * when it says so), then the leaves. */
        r = disk_facts(w, &n);
        if (r < 0)
                goto finish;
        r = walk_node(w, &n, 0);
        if (r < 0)
                goto finish;
        r = 1;
finish:
        node_done(&n);
        return r;
}

#define DEV_LINK_HOPS_MAX 8U

/* dir/target made one path below /dev, lexically ("." and ".." resolved; a /dev/... target taken as
 * it is): -EXDEV when it leaves /dev. dir and the result are relative to /dev. */
static int dev_rel_join(const char *dir, const char *target, char **ret) {
        _cleanup_free_ char *in = NULL, *out = NULL;
        size_t n = 0;

        if (target[0] == '/') {
                if (!startswith(target, "/dev/"))
                        return -EXDEV;
                in = strdup(target + 5);
        } else if (asprintf(&in, "%s/%s", dir, target) < 0)
                in = NULL;
        out = malloc(strlen(in ?: "") + 1);
        if (!in || !out)
                return -ENOMEM;
        for (char *c = in, *next; c; c = next) {
                next = strchr(c, '/');
                if (next)
                        *next++ = '\0';
                if (isempty(c) || streq(c, "."))
                        continue;
                if (streq(c, "..")) {
                        if (n == 0)
                                return -EXDEV;
                        while (n > 0 && out[n - 1] != '/')
                                n--;
                        n = n > 0 ? n - 1 : 0;
                        continue;
                }
                n += (size_t) sprintf(out + n, "%s%s", n > 0 ? "/" : "", c);
        }
        if (n == 0)
                return -EINVAL;
        out[n] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

/* The name a /dev path resolves to (/dev/mapper/x, /dev/disk/by-...: links to /dev/dm-N, /dev/sdX),
 * read without waiting: /dev itself is opened from the lookup cache (open_cached_at()) and must be
 * in memory (devtmpfs or tmpfs); below it each link is opened O_PATH|O_NOFOLLOW without leaving
 * that mount (RESOLVE_BENEATH, RESOLVE_NO_XDEV) and read, and followed by hand. Not a cached walk
 * through the links: following a link updates its atime, which an RCU walk cannot, so that walk
 * fails whenever relatime asks for it (a link never followed since it was made, or not for a day).
 * Negative errno when it cannot be had so: the member is then matched by the name as given. */
static int dev_path_resolve(const char *path, char **ret) {
        _cleanup_close_ int dev_fd = -EBADF;
        _cleanup_free_ char *rel = NULL;
        struct statfs sfs;
        int r;

        if (!startswith(path, "/dev/"))
                return -EINVAL;
        dev_fd = open_cached_at(AT_FDCWD, "/dev", O_PATH | O_DIRECTORY);
        if (dev_fd < 0)
                return dev_fd;
        if (fstatfs(dev_fd, &sfs) < 0)
                return -errno;
        if (sfs.f_type != TMPFS_MAGIC && sfs.f_type != RAMFS_MAGIC)
                return -EOPNOTSUPP;
        r = dev_rel_join("", path, &rel);
        if (r < 0)
                return r;
        for (unsigned hop = 0; hop <= DEV_LINK_HOPS_MAX; hop++) {
                struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV |
                                                   RESOLVE_NO_MAGICLINKS };
                _cleanup_free_ char *target = NULL, *dir = NULL, *next = NULL;
                _cleanup_close_ int fd = -EBADF;
                struct stat st;
                char *slash;

                fd = (int) syscall(SYS_openat2, dev_fd, rel, &how, sizeof how);
                if (fd < 0 || fstat(fd, &st) < 0)
                        return -errno;
                if (!S_ISLNK(st.st_mode)) {
                        if (!S_ISBLK(st.st_mode))
                                return -ENOTBLK;
                        char *p;

                        if (asprintf(&p, "/dev/%s", rel) < 0)
                                return -ENOMEM;
                        *ret = p;
                        return 0;
                }
                r = readlink_malloc_at(fd, "", &target);
                if (r < 0)
                        return r;
                dir = strdup(rel);
                if (!dir)
                        return -ENOMEM;
                slash = strrchr(dir, '/');
                *(slash ?: dir) = '\0';
                r = dev_rel_join(dir, target, &next);
                if (r < 0)
                        return r;
                free(rel);
                rel = TAKE_PTR(next);
        }
        return -ELOOP;
}

/* Finds the btrfs filesystem with a member device named like the mount source; walks its member
 * devices and reads its bdi name. Returns 1 if found, 0 if not. */
static int walk_btrfs(Walk *w, const char *source, char **ret_bdi) {
        _cleanup_strv_free_ char **fss = NULL;
        _cleanup_free_ char *real = NULL;
        const char *want, *want_real = NULL;
        size_t n_fss = 0;
        int r;

        if (isempty(source))
                return 0;
        want = sysfs_last_component(source);
        if (isempty(want))
                return 0;
        /* Real sysfs only: a fixture's names are not this machine's /dev. */
        if (w->sysfs->live && strncmp(source, "/dev/", 5) == 0) {
                r = dev_path_resolve(source, &real);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0)
                        want_real = sysfs_last_component(real);
        }

        r = sysfs_list_dir(w->sysfs, "fs/btrfs", DEVICE_BTRFS_FS_MAX, &fss, &n_fss);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && r != -ENOENT)
                walk_note(w, r);
        for (size_t i = 0; i < n_fss; i++) {
                _cleanup_strv_free_ char **devs = NULL;
                _cleanup_free_ char *dir = NULL, *bdi_link = NULL;
                size_t n_devs = 0;
                bool match = false;

                if (asprintf(&dir, "fs/btrfs/%s/devices", fss[i]) < 0)
                        return -ENOMEM;
                r = sysfs_list_dir(w->sysfs, dir, DEVICE_LEAVES_MAX, &devs, &n_devs);
                if (r == -ENOMEM)
                        return r;
                for (size_t j = 0; j < n_devs && !match; j++)
                        match = streq(devs[j], want) || streq_ptr(devs[j], want_real);
                if (!match)
                        continue;

                for (size_t j = 0; j < n_devs; j++) {
                        _cleanup_free_ char *p = NULL;
                        dev_t d;

                        if (asprintf(&p, "%s/%s/dev", dir, devs[j]) < 0)
                                return -ENOMEM;
                        r = sysfs_read_devnum(w->sysfs, p, &d);
                        if (r == -ENOMEM)
                                return r;
                        /* A member that cannot be followed: the stack is not known in full. */
                        if (r < 0) {
                                walk_fail(w, r);
                                continue;
                        }
                        r = walk_block(w, d, NULL, NULL, NULL);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                w->incomplete = true;
                }

                if (asprintf(&bdi_link, "fs/btrfs/%s/bdi", fss[i]) < 0)
                        return -ENOMEM;
                r = sysfs_link_name(w->sysfs, bdi_link, ret_bdi);
                if (r == -ENOMEM)
                        return r;
                return 1;
        }
        return 0;
}

void device_info_done(DeviceInfo *d) {
        if (!d)
                return;
        free(d->bdi_name);
        free(d->name);
        free(d->leaves);
        free(d->loop_backing_file);
        free(d->loop_devname);
        strv_free(d->rotational_disks);
        *d = (DeviceInfo) {};
}

struct DeviceClassifier {
        Sysfs sysfs;
        bool has_sysfs;  /* false: sysfs_root could not be opened, nothing is classified */
        int sysfs_error; /* ... and why */
        DeviceRotationalRead rotational;
};

void device_classifier_set_rotational_read(DeviceClassifier *c, DeviceRotationalRead how) {
        c->rotational = how;
}

int device_classifier_new(const char *sysfs_root, SysfsBackendKind kind, DeviceClassifier **ret) {
        _cleanup_(device_classifier_freep) DeviceClassifier *c = NULL;
        int r;

        c = calloc(1, sizeof(DeviceClassifier));
        if (!c)
                return -ENOMEM;
        c->sysfs.root_fd = -EBADF;
        if (sysfs_root) {
                r = sysfs_open(sysfs_root, kind, &c->sysfs);
                if (r == -ENOMEM || (r < 0 && kind == SYSFS_UDEV))
                        return r;
                c->has_sysfs = r >= 0; /* no sysfs: unclassified */
                c->sysfs_error = MIN(r, 0);
        }
        *ret = TAKE_PTR(c);
        return 0;
}

DeviceClassifier *device_classifier_free(DeviceClassifier *c) {
        if (!c)
                return NULL;
        sysfs_done(&c->sysfs);
        free(c);
        return NULL;
}

static int classify_sysfs(Sysfs *s, DeviceRotationalRead rotational, dev_t dev, const char *fstype,
                          const char *source, DeviceInfo *info) {
        Walk w = { .sysfs = s, .rotational = rotational };
        int r;

        if (major(dev) != 0) {
                r = walk_block(&w, dev, &info->whole_disk, &info->bdi_name, &info->name);
                if (r < 0)
                        goto finish;
                if (r > 0) {
                        info->is_block = true;
                        info->classified = true;
                }
        }

        if (!info->classified && streq_ptr(fstype, "btrfs")) {
                r = walk_btrfs(&w, source, &info->bdi_name);
                if (r < 0)
                        goto finish;
                if (r > 0)
                        info->classified = true;
        }

        if (w.incomplete) {
                /* Some of the stack could not be read: its leaves (device group, the disks whose
                 * counters prove a hang) and its classes (served remotely?) are not known. So it is
                 * not classified: synced by the main pass, never proven stuck, out of the late pass,
                 * never deferred. The top device's own bdi is still its bdi. */
                info->is_block = info->classified = false;
                info->incomplete = true;
                w.served_remotely = true;
        } else if (!info->classified) {
                /* Superblocks with their own anonymous bdi (nfs, fuse, ...): class/bdi/MAJ:MIN. */
                char p[64];

                snprintf(p, sizeof(p), "class/bdi/%s", FORMAT_DEVNUM(dev));
                if (faccessat(s->root_fd, p, F_OK, 0) == 0) {
                        info->bdi_name = strdup(p + strlen("class/bdi/"));
                        if (!info->bdi_name) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        info->classified = true;
                }
        }

        if (w.n_leaves > 0 && !w.incomplete) {
                qsort(w.leaves, w.n_leaves, sizeof(dev_t), cmp_dev);
                info->leaves = TAKE_PTR(w.leaves);
                info->n_leaves = w.n_leaves;
        }
        if (!info->classified)
                info->error = w.error;
        info->classes |= w.classes;
        info->classes_unknown = w.unknown & ~info->classes;
        info->loop_backing_file = TAKE_PTR(w.backing_file);
        info->loop_dev = w.loop_dev;
        info->loop_devname = TAKE_PTR(w.loop_devname);
        info->n_loops = w.n_loops;
        info->served_remotely = w.served_remotely;
        /* Not classified: every class is unknown whatever is read (device_info_unknown_classes()). */
        if (info->classified)
                info->rotational_disks = TAKE_PTR(w.rotational_disks);
        r = 0;
finish:
        free(w.leaves);
        free(w.backing_file);
        free(w.loop_devname);
        strv_free(w.rotational_disks);
        return r;
}

int device_classifier_classify(DeviceClassifier *c, dev_t dev, const char *fstype, const char *source,
                               DeviceInfo *ret) {
        DeviceInfo info = { .dev = dev };
        int r;

        switch (fs_class_from_fstype(fstype)) {
        case FS_CLASS_NETWORK:
                info.classes |= DEVICE_NETWORK;
                break;
        case FS_CLASS_FUSE:
                info.classes |= DEVICE_FUSE;
                break;
        default:
                break;
        }

        if (c->has_sysfs) {
                r = classify_sysfs(&c->sysfs, c->rotational, dev, fstype, source, &info);
                if (r < 0) {
                        device_info_done(&info);
                        return r;
                }
        } else
                info.error = c->sysfs_error;

        if (info.n_leaves == 0) {
                free(info.leaves);
                info.leaves = malloc(sizeof(dev_t));
                if (!info.leaves) {
                        device_info_done(&info);
                        return -ENOMEM;
                }
                info.leaves[0] = dev;
                info.n_leaves = 1;
        }

        *ret = info;
        return 0;
}

int device_classify(const char *sysfs_root, dev_t dev, const char *fstype, const char *source,
                    DeviceInfo *ret) {
        _cleanup_(device_classifier_freep) DeviceClassifier *c = NULL;
        int r;

        r = device_classifier_new(sysfs_root, SYSFS_DIRFD, &c);
        if (r < 0)
                return r;
        return device_classifier_classify(c, dev, fstype, source, ret);
}
