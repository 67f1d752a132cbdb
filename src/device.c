/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Device classification.
 *
 * Block facts are read through a tiny accessor ("Sysfs" + "Node") with two backends:
 *  - libudev, when sysfs_root is exactly "/sys" (or "/sys/"): udev_device_new_from_devnum(),
 *    udev_device_get_sysattr_value(), udev_device_get_parent(), and
 *    udev_device_get_parent_with_subsystem_devtype("usb", "usb_device"). This needs no udevd: it
 *    reads sysfs (udev properties from the udev database are never used).
 *  - a directory fd on sysfs_root for anything else (fixture trees in tests; "/sys/." forces this
 *    backend on the real sysfs, which the integration test uses to cross-check both backends).
 *    Symlinks are resolved lexically relative to the link's directory, as in real sysfs, where all
 *    links are relative and point at real directories. USB ancestry: the nearest ancestor
 *    directory whose 'subsystem' link ends in "usb" and whose uevent says DEVTYPE=usb_device.
 * Reading links (bdi, fs/btrfs/...) and listing directories (slaves/, fs/btrfs/) is done with
 * readlinkat()/openat() in both backends; libudev has no API for those.
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
 * Bounds: slaves/ recursion depth 16, 1024 devices visited, 256 leaves, 64 btrfs filesystems.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libudev.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device.h"
#include "shared/fileio.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"

#define DEVICE_SLAVES_DEPTH_MAX 16U
#define DEVICE_VISIT_MAX 1024U
#define DEVICE_LEAVES_MAX 256U
#define DEVICE_BTRFS_FS_MAX 64U
#define DEVICE_ATTR_MAX (8U * 1024U)

/* ---------------------------------------------------------------------------------------------- */
/* device classes */

/* Indexed by bit number: DEVICE_USB is 1U << DEVICE_CLASS_INDEX_USB ... */
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
/* small helpers */

static int parse_devnum(const char *s, dev_t *ret) {
        _cleanup_free_ char *m = NULL;
        const char *colon;
        unsigned maj, min;

        if (!s)
                return -EINVAL;
        colon = strchr(s, ':');
        if (!colon)
                return -EINVAL;
        m = strndup(s, (size_t) (colon - s));
        if (!m)
                return -ENOMEM;
        if (safe_atou(m, &maj) < 0 || safe_atou(colon + 1, &min) < 0)
                return -EINVAL;
        if (maj > 0xfffU || min > 0xfffffU) /* MAJORBITS 12, MINORBITS 20 */
                return -EINVAL;
        *ret = makedev(maj, min);
        return 0;
}

static void strip_trailing_space(char *s) {
        size_t n = strlen(s);

        while (n > 0 && strchr(" \t\n\r", s[n - 1]))
                s[--n] = 0;
}

static const char *last_component(const char *p) {
        const char *s = strrchr(p, '/');
        return s ? s + 1 : p;
}

static char *path_join2(const char *a, const char *b) {
        char *r;

        if (asprintf(&r, "%s/%s", a, b) < 0)
                return NULL;
        return r;
}

/* Joins the relative link target 'target' to the directory 'dir' (both relative to the tree root)
 * and removes "." and ".." lexically. -EINVAL if it leaves the tree or is absolute. */
static int resolve_link_path(const char *dir, const char *target, char **ret) {
        _cleanup_free_ char *joined = NULL, *out = NULL;
        size_t n = 0;
        char *save = NULL;

        if (target[0] == '/')
                return -EINVAL;
        joined = path_join2(dir, target);
        out = malloc(strlen(dir) + strlen(target) + 2);
        if (!joined || !out)
                return -ENOMEM;
        out[0] = 0;
        for (char *c = strtok_r(joined, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (streq(c, "."))
                        continue;
                if (streq(c, "..")) {
                        char *slash;

                        if (n == 0)
                                return -EINVAL;
                        slash = strrchr(out, '/');
                        n = slash ? (size_t) (slash - out) : 0;
                        out[n] = 0;
                        continue;
                }
                if (n > 0)
                        out[n++] = '/';
                strcpy(out + n, c);
                n += strlen(c);
        }
        if (n == 0)
                return -EINVAL;
        *ret = TAKE_PTR(out);
        return 0;
}

static int readlink_malloc_at(int dir_fd, const char *path, char **ret) {
        char buf[PATH_MAX];
        ssize_t n;
        char *r;

        n = readlinkat(dir_fd, path, buf, sizeof(buf) - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = 0;
        r = strdup(buf);
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* sysfs accessor: libudev for "/sys", a directory fd otherwise */

typedef struct Sysfs {
        int root_fd;        /* sysfs_root; non-device paths (fs/btrfs, class/bdi) are read here */
        struct udev *udev;  /* non-NULL: libudev backend */
} Sysfs;

typedef struct Node {
        struct udev_device *ud; /* libudev backend */
        char *path;             /* libudev: absolute syspath; fd backend: relative to root_fd */
        dev_t devnum;
} Node;

static void node_done(Node *n) {
        if (n->ud)
                udev_device_unref(n->ud);
        n->ud = NULL;
        free(n->path);
        n->path = NULL;
}

static void sysfs_done(Sysfs *s) {
        s->root_fd = safe_close(s->root_fd);
        if (s->udev)
                udev_unref(s->udev);
        s->udev = NULL;
}

static bool sysfs_root_is_real(const char *sysfs_root) {
        return streq(sysfs_root, "/sys") || streq(sysfs_root, "/sys/");
}

static int sysfs_open(const char *sysfs_root, Sysfs *ret) {
        Sysfs s = { .root_fd = -EBADF };
        int fd;

        fd = open(sysfs_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        s.root_fd = fd;
        if (sysfs_root_is_real(sysfs_root)) {
                s.udev = udev_new();
                if (!s.udev) {
                        int r = errno == ENOMEM ? -ENOMEM : -EIO;
                        sysfs_done(&s);
                        return r;
                }
        }
        *ret = s;
        return 0;
}

/* Path usable with readlinkat/openat(root_fd, ...) for the node's directory. */
static int node_subpath(const Node *n, const char *name, char **ret) {
        char *p = path_join2(n->path, name);
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/* -ENOENT: no such block device; -ENOMEM. */
static int sysfs_node_from_devnum(Sysfs *s, dev_t dev, Node *ret) {
        Node n = { .devnum = dev };
        char link[64];
        _cleanup_free_ char *target = NULL;
        int r, fd;

        if (s->udev) {
                const char *sp;

                errno = 0;
                n.ud = udev_device_new_from_devnum(s->udev, 'b', dev);
                if (!n.ud)
                        return errno == ENOMEM ? -ENOMEM : -ENOENT;
                sp = udev_device_get_syspath(n.ud);
                n.path = sp ? strdup(sp) : NULL;
                if (!n.path) {
                        node_done(&n);
                        return sp ? -ENOMEM : -ENOENT;
                }
                *ret = n;
                return 0;
        }

        snprintf(link, sizeof(link), "dev/block/%u:%u", major(dev), minor(dev));
        r = readlink_malloc_at(s->root_fd, link, &target);
        if (r < 0)
                return r == -ENOMEM ? r : -ENOENT;
        r = resolve_link_path("dev/block", target, &n.path);
        if (r < 0)
                return r == -ENOMEM ? r : -ENOENT;
        fd = openat(s->root_fd, n.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                node_done(&n);
                return -ENOENT;
        }
        safe_close(fd);
        *ret = n;
        return 0;
}

/* Attribute value with trailing whitespace removed. -ENOENT if missing/unreadable; -ENOMEM. */
static int sysfs_node_attr(Sysfs *s, const Node *n, const char *name, char **ret) {
        _cleanup_free_ char *p = NULL, *buf = NULL;
        int r;

        if (s->udev) {
                const char *v = udev_device_get_sysattr_value(n->ud, name);
                char *c;

                if (!v)
                        return -ENOENT;
                c = strdup(v);
                if (!c)
                        return -ENOMEM;
                strip_trailing_space(c);
                *ret = c;
                return 0;
        }

        r = node_subpath(n, name, &p);
        if (r < 0)
                return r;
        r = read_full_file_at(s->root_fd, p, DEVICE_ATTR_MAX, &buf, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return -ENOENT;
        strip_trailing_space(buf);
        *ret = TAKE_PTR(buf);
        return 0;
}

/* 1 if the attribute exists and reads as a positive integer or boolean true, 0 otherwise. */
static int sysfs_node_attr_true(Sysfs *s, const Node *n, const char *name) {
        _cleanup_free_ char *v = NULL;
        unsigned u;
        int r;

        r = sysfs_node_attr(s, n, name, &v);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        if (safe_atou(v, &u) >= 0)
                return u == 1;
        return 0;
}

/* Basename of the target of the link 'name' in the node's directory. -ENOENT or -ENOMEM. */
static int sysfs_node_link_name(Sysfs *s, const Node *n, const char *name, char **ret) {
        _cleanup_free_ char *p = NULL, *target = NULL;
        char *b;
        int r;

        r = node_subpath(n, name, &p);
        if (r < 0)
                return r;
        r = readlink_malloc_at(s->root_fd, p, &target);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || isempty(last_component(target)))
                return -ENOENT;
        b = strdup(last_component(target));
        if (!b)
                return -ENOMEM;
        *ret = b;
        return 0;
}

static bool node_is_partition(Sysfs *s, const Node *n) {
        _cleanup_free_ char *p = NULL;

        if (s->udev)
                return streq_ptr(udev_device_get_devtype(n->ud), "partition");
        /* Out of memory here only makes the partition look like a disk (a fact left unknown). */
        p = path_join2(n->path, "partition");
        return p && faccessat(s->root_fd, p, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Parent device (the disk of a partition). -ENOENT or -ENOMEM. devnum is read from 'dev'. */
static int sysfs_node_parent(Sysfs *s, const Node *n, Node *ret) {
        Node p = {};
        _cleanup_free_ char *v = NULL;
        int r;

        if (s->udev) {
                struct udev_device *u = udev_device_get_parent(n->ud);
                const char *sp;

                if (!u)
                        return -ENOENT;
                sp = udev_device_get_syspath(u);
                if (!sp)
                        return -ENOENT;
                p.path = strdup(sp);
                if (!p.path)
                        return -ENOMEM;
                p.ud = udev_device_ref(u);
                p.devnum = udev_device_get_devnum(u);
                *ret = p;
                return 0;
        }

        const char *slash = strrchr(n->path, '/');
        if (!slash)
                return -ENOENT;
        p.path = strndup(n->path, (size_t) (slash - n->path));
        if (!p.path)
                return -ENOMEM;
        r = sysfs_node_attr(s, &p, "dev", &v);
        if (r == -ENOMEM) {
                node_done(&p);
                return r;
        }
        if (r < 0 || parse_devnum(v, &p.devnum) < 0)
                p.devnum = 0;
        *ret = p;
        return 0;
}

static int sysfs_node_is_usb(Sysfs *s, const Node *n) {
        _cleanup_free_ char *path = NULL;

        if (s->udev)
                return udev_device_get_parent_with_subsystem_devtype(n->ud, "usb", "usb_device") != NULL;

        path = strdup(n->path);
        if (!path)
                return -ENOMEM;
        for (;;) {
                _cleanup_free_ char *sub = NULL, *target = NULL, *ue = NULL, *uevent = NULL;
                char *slash = strrchr(path, '/');
                int r;

                if (!slash)
                        return 0;
                *slash = 0;
                sub = path_join2(path, "subsystem");
                ue = path_join2(path, "uevent");
                if (!sub || !ue)
                        return -ENOMEM;
                r = readlink_malloc_at(s->root_fd, sub, &target);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || !streq(last_component(target), "usb"))
                        continue;
                r = read_full_file_at(s->root_fd, ue, DEVICE_ATTR_MAX, &uevent, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && (strncmp(uevent, "DEVTYPE=usb_device\n", 19) == 0 ||
                               strstr(uevent, "\nDEVTYPE=usb_device\n")))
                        return 1;
        }
}

/* Entry names of the directory 'name' inside the node (bounded), NULL-terminated. */
static int list_dir_at(int dir_fd, const char *path, size_t max, char ***ret, size_t *ret_n) {
        _cleanup_close_ int fd = -EBADF;
        DIR *d;
        char **v = NULL;
        size_t n = 0;
        struct dirent *de;

        fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOMEM ? -ENOMEM : -ENOENT;
        d = fdopendir(fd);
        if (!d)
                return -ENOMEM;
        TAKE_FD(fd);
        v = calloc(1, sizeof(char *));
        if (!v) {
                closedir(d);
                return -ENOMEM;
        }
        while (n < max && (de = readdir(d))) {
                char **nv;

                if (de->d_name[0] == '.')
                        continue;
                nv = realloc(v, (n + 2) * sizeof(char *));
                if (!nv)
                        goto oom;
                v = nv;
                v[n] = strdup(de->d_name);
                if (!v[n])
                        goto oom;
                v[++n] = NULL;
        }
        closedir(d);
        *ret = v;
        *ret_n = n;
        return 0;
oom:
        closedir(d);
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
        return -ENOMEM;
}

static void strv_freep(char ***v) {
        if (!*v)
                return;
        for (char **i = *v; *i; i++)
                free(*i);
        free(*v);
}

/* ---------------------------------------------------------------------------------------------- */
/* classification */

typedef struct Walk {
        Sysfs *sysfs;
        dev_t *leaves;
        size_t n_leaves;
        unsigned visits;
        unsigned classes;
        char *backing_file;
} Walk;

static int walk_add_leaf(Walk *w, dev_t d) {
        dev_t *nl;

        for (size_t i = 0; i < w->n_leaves; i++)
                if (w->leaves[i] == d)
                        return 0;
        if (w->n_leaves >= DEVICE_LEAVES_MAX)
                return 0;
        nl = realloc(w->leaves, (w->n_leaves + 1) * sizeof(dev_t));
        if (!nl)
                return -ENOMEM;
        w->leaves = nl;
        w->leaves[w->n_leaves++] = d;
        return 0;
}

/* Facts of a whole disk: removable, rotational, usb, loop (+ backing file). */
static int disk_facts(Walk *w, const Node *disk) {
        Sysfs *s = w->sysfs;
        const char *name = disk->path ? last_component(disk->path) : "";
        int r;

        r = sysfs_node_attr_true(s, disk, "removable");
        if (r < 0)
                return r;
        if (r > 0)
                w->classes |= DEVICE_REMOVABLE;
        r = sysfs_node_attr_true(s, disk, "queue/rotational");
        if (r < 0)
                return r;
        if (r > 0)
                w->classes |= DEVICE_ROTATIONAL;
        r = sysfs_node_is_usb(s, disk);
        if (r < 0)
                return r;
        if (r > 0)
                w->classes |= DEVICE_USB;
        if (strncmp(name, "loop", 4) == 0) {
                w->classes |= DEVICE_LOOP;
                if (!w->backing_file) {
                        _cleanup_free_ char *bf = NULL;

                        r = sysfs_node_attr(s, disk, "loop/backing_file", &bf);
                        if (r == -ENOMEM)
                                return r;
                        if (r >= 0 && !isempty(bf))
                                w->backing_file = TAKE_PTR(bf);
                }
        }
        return 0;
}

/* Turns a partition node into its disk (in place); other nodes stay. */
static int node_to_whole(Sysfs *s, Node *n) {
        Node p;
        int r;

        if (!node_is_partition(s, n))
                return 0;
        r = sysfs_node_parent(s, n, &p);
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
        _cleanup_(strv_freep) char **slaves = NULL;
        _cleanup_free_ char *uuid = NULL, *sp = NULL;
        size_t n_slaves = 0, n_used = 0;
        int r;

        if (++w->visits > DEVICE_VISIT_MAX)
                return 0;

        r = node_to_whole(s, node);
        if (r < 0)
                return r;

        r = sysfs_node_attr(s, node, "dm/uuid", &uuid);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && strncmp(uuid, "CRYPT-", 6) == 0)
                w->classes |= DEVICE_CRYPT;

        if (depth < DEVICE_SLAVES_DEPTH_MAX) {
                r = node_subpath(node, "slaves", &sp);
                if (r < 0)
                        return r;
                r = list_dir_at(s->root_fd, sp, DEVICE_LEAVES_MAX * 2, &slaves, &n_slaves);
                if (r == -ENOMEM)
                        return r;
        }

        for (size_t i = 0; i < n_slaves; i++) {
                _cleanup_free_ char *attr = NULL, *v = NULL;
                Node child;
                dev_t d;

                if (asprintf(&attr, "slaves/%s/dev", slaves[i]) < 0)
                        return -ENOMEM;
                r = sysfs_node_attr(s, node, attr, &v);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                r = parse_devnum(v, &d);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                r = sysfs_node_from_devnum(s, d, &child);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                n_used++;
                r = walk_node(w, &child, depth + 1);
                node_done(&child);
                if (r < 0)
                        return r;
        }

        if (n_used > 0)
                return 0;

        /* A leaf (or the end of what we can follow): the whole disk. */
        r = disk_facts(w, node);
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
static int walk_block(Walk *w, dev_t dev, dev_t *ret_whole, char **ret_bdi) {
        Node n = {};
        int r;

        r = sysfs_node_from_devnum(w->sysfs, dev, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;

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

/* Finds the btrfs filesystem with a member device named like the mount source; walks its member
 * devices and reads its bdi name. Returns 1 if found, 0 if not. */
static int walk_btrfs(Walk *w, const char *source, char **ret_bdi) {
        _cleanup_(strv_freep) char **fss = NULL;
        _cleanup_free_ char *real = NULL;
        const char *want, *want_real = NULL;
        size_t n_fss = 0;
        int r;

        if (isempty(source))
                return 0;
        want = last_component(source);
        if (isempty(want))
                return 0;
        /* /dev/mapper/x and /dev/disk/by-... are symlinks to /dev/dm-N, /dev/sdX (real sysfs only). */
        if (w->sysfs->udev && strncmp(source, "/dev/", 5) == 0) {
                real = realpath(source, NULL);
                if (!real && errno == ENOMEM)
                        return -ENOMEM;
                if (real)
                        want_real = last_component(real);
        }

        r = list_dir_at(w->sysfs->root_fd, "fs/btrfs", DEVICE_BTRFS_FS_MAX, &fss, &n_fss);
        if (r == -ENOMEM)
                return r;
        for (size_t i = 0; i < n_fss; i++) {
                _cleanup_(strv_freep) char **devs = NULL;
                _cleanup_free_ char *dir = NULL, *bdi_link = NULL, *target = NULL;
                size_t n_devs = 0;
                bool match = false;

                if (asprintf(&dir, "fs/btrfs/%s/devices", fss[i]) < 0)
                        return -ENOMEM;
                r = list_dir_at(w->sysfs->root_fd, dir, DEVICE_LEAVES_MAX, &devs, &n_devs);
                if (r == -ENOMEM)
                        return r;
                for (size_t j = 0; j < n_devs && !match; j++)
                        match = streq(devs[j], want) || streq_ptr(devs[j], want_real);
                if (!match)
                        continue;

                for (size_t j = 0; j < n_devs; j++) {
                        _cleanup_free_ char *p = NULL, *v = NULL;
                        dev_t d;

                        if (asprintf(&p, "%s/%s/dev", dir, devs[j]) < 0)
                                return -ENOMEM;
                        r = read_full_file_at(w->sysfs->root_fd, p, DEVICE_ATTR_MAX, &v, NULL);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                continue;
                        strip_trailing_space(v);
                        r = parse_devnum(v, &d);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                continue;
                        r = walk_block(w, d, NULL, NULL);
                        if (r < 0)
                                return r;
                }

                if (asprintf(&bdi_link, "fs/btrfs/%s/bdi", fss[i]) < 0)
                        return -ENOMEM;
                r = readlink_malloc_at(w->sysfs->root_fd, bdi_link, &target);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && !isempty(last_component(target))) {
                        char *b = strdup(last_component(target));
                        if (!b)
                                return -ENOMEM;
                        *ret_bdi = b;
                }
                return 1;
        }
        return 0;
}

void device_info_done(DeviceInfo *d) {
        if (!d)
                return;
        free(d->bdi_name);
        free(d->leaves);
        free(d->loop_backing_file);
        *d = (DeviceInfo) {};
}

static int device_classify_sysfs(const char *sysfs_root, dev_t dev, const char *fstype, const char *source,
                                 DeviceInfo *info) {
        _cleanup_(sysfs_done) Sysfs s = { .root_fd = -EBADF };
        Walk w = {};
        int r;

        r = sysfs_open(sysfs_root, &s);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0; /* no sysfs: unclassified */
        w.sysfs = &s;

        if (major(dev) != 0) {
                r = walk_block(&w, dev, &info->whole_disk, &info->bdi_name);
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

        if (!info->classified) {
                /* Superblocks with their own anonymous bdi (nfs, fuse, ...): class/bdi/MAJ:MIN. */
                char p[64];

                snprintf(p, sizeof(p), "class/bdi/%u:%u", major(dev), minor(dev));
                if (faccessat(s.root_fd, p, F_OK, 0) == 0) {
                        info->bdi_name = strdup(p + strlen("class/bdi/"));
                        if (!info->bdi_name) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        info->classified = true;
                }
        }

        if (w.n_leaves > 0) {
                qsort(w.leaves, w.n_leaves, sizeof(dev_t), cmp_dev);
                info->leaves = TAKE_PTR(w.leaves);
                info->n_leaves = w.n_leaves;
        }
        info->classes |= w.classes;
        info->loop_backing_file = TAKE_PTR(w.backing_file);
        r = 0;
finish:
        free(w.leaves);
        free(w.backing_file);
        return r;
}

int device_classify(const char *sysfs_root, dev_t dev, const char *fstype, const char *source,
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

        if (sysfs_root) {
                r = device_classify_sysfs(sysfs_root, dev, fstype, source, &info);
                if (r < 0) {
                        device_info_done(&info);
                        return r;
                }
        }

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
