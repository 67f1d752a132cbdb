/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libudev.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device-sysfs.h"
#include "shared/devnum-util.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/strv.h"

/* ---------------------------------------------------------------------------------------------- */
/* small helpers */

/* A device number as sysfs writes it: "MAJ:MIN" within the kernel's MAJORBITS 12 and MINORBITS 20
 * (include/linux/kdev_t.h). -EINVAL otherwise. */
static int parse_kernel_devnum(const char *s, dev_t *ret) {
        dev_t d;

        if (parse_devnum(s, &d) < 0 || major(d) > 0xfffU || minor(d) > 0xfffffU)
                return -EINVAL;
        *ret = d;
        return 0;
}

static void strip_trailing_space(char *s) {
        size_t n = strlen(s);

        while (n > 0 && strchr(" \t\n\r", s[n - 1]))
                s[--n] = 0;
}

const char *sysfs_last_component(const char *p) {
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

/* ---------------------------------------------------------------------------------------------- */
/* sysfs backends: libudev for "/sys", a directory fd otherwise */

void node_done(Node *n) {
        if (n->ud)
                udev_device_unref(n->ud);
        n->ud = NULL;
        n->path = mfree(n->path);
}

/* Path usable with readlinkat/openat(root_fd, ...) for 'name' in the node's directory. */
static int node_subpath(const Node *n, const char *name, char **ret) {
        char *p = path_join2(n->path, name);
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/* Attribute value with trailing whitespace removed. -ENOENT if missing/unreadable; -ENOMEM. */
int sysfs_node_attr(Sysfs *s, const Node *n, const char *name, char **ret) {
        char *v;
        int r;

        r = s->backend->attr(s, n, name, &v);
        if (r < 0)
                return r;
        strip_trailing_space(v);
        *ret = v;
        return 0;
}

/* --- libudev --- */

static int udev_node_from_devnum(Sysfs *s, dev_t dev, Node *ret) {
        Node n = { .devnum = dev };
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

static int udev_node_attr(Sysfs *s, const Node *n, const char *name, char **ret) {
        const char *v = udev_device_get_sysattr_value(n->ud, name);

        if (!v)
                return -ENOENT;
        *ret = strdup(v);
        return *ret ? 0 : -ENOMEM;
}

static int udev_node_parent(Sysfs *s, const Node *n, Node *ret) {
        struct udev_device *u = udev_device_get_parent(n->ud);
        const char *sp = u ? udev_device_get_syspath(u) : NULL;
        Node p = {};

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

static bool udev_node_is_partition(Sysfs *s, const Node *n) {
        return streq_ptr(udev_device_get_devtype(n->ud), "partition");
}

static int udev_node_is_usb(Sysfs *s, const Node *n) {
        return udev_device_get_parent_with_subsystem_devtype(n->ud, "usb", "usb_device") != NULL;
}

static const SysfsBackend sysfs_backend_udev = {
        .node_from_devnum = udev_node_from_devnum,
        .attr = udev_node_attr,
        .parent = udev_node_parent,
        .is_partition = udev_node_is_partition,
        .is_usb = udev_node_is_usb,
};

/* --- directory fd --- */

static int dirfd_node_from_devnum(Sysfs *s, dev_t dev, Node *ret) {
        Node n = { .devnum = dev };
        char link[64];
        _cleanup_free_ char *target = NULL;
        int r, fd;

        snprintf(link, sizeof(link), "dev/block/%s", FORMAT_DEVNUM(dev));
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

static int dirfd_node_attr(Sysfs *s, const Node *n, const char *name, char **ret) {
        _cleanup_free_ char *p = NULL;
        int r;

        r = node_subpath(n, name, &p);
        if (r < 0)
                return r;
        r = read_full_file_at(s->root_fd, p, DEVICE_ATTR_MAX, ret, NULL);
        return r == -ENOMEM || r >= 0 ? r : -ENOENT;
}

/* The parent directory; its devnum is read from 'dev' (0 when it has none). */
static int dirfd_node_parent(Sysfs *s, const Node *n, Node *ret) {
        const char *slash = strrchr(n->path, '/');
        _cleanup_free_ char *v = NULL;
        Node p = {};
        int r;

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
        if (r < 0 || parse_kernel_devnum(v, &p.devnum) < 0)
                p.devnum = 0;
        *ret = p;
        return 0;
}

static bool dirfd_node_is_partition(Sysfs *s, const Node *n) {
        _cleanup_free_ char *p = NULL;

        /* Out of memory here only makes the partition look like a disk (a fact left unknown). */
        p = path_join2(n->path, "partition");
        return p && faccessat(s->root_fd, p, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The nearest ancestor directory whose 'subsystem' link ends in "usb" and whose uevent says
 * DEVTYPE=usb_device, as libudev's udev_device_get_parent_with_subsystem_devtype(). */
static int dirfd_node_is_usb(Sysfs *s, const Node *n) {
        _cleanup_free_ char *path = NULL;

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
                if (r < 0 || !streq(sysfs_last_component(target), "usb"))
                        continue;
                r = read_full_file_at(s->root_fd, ue, DEVICE_ATTR_MAX, &uevent, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && (strncmp(uevent, "DEVTYPE=usb_device\n", 19) == 0 ||
                               strstr(uevent, "\nDEVTYPE=usb_device\n")))
                        return 1;
        }
}

static const SysfsBackend sysfs_backend_dirfd = {
        .node_from_devnum = dirfd_node_from_devnum,
        .attr = dirfd_node_attr,
        .parent = dirfd_node_parent,
        .is_partition = dirfd_node_is_partition,
        .is_usb = dirfd_node_is_usb,
};

/* --- on top of either --- */

void sysfs_done(Sysfs *s) {
        s->root_fd = safe_close(s->root_fd);
        if (s->udev)
                udev_unref(s->udev);
        s->udev = NULL;
}

Sysfs sysfs_on_fd(int root_fd) {
        return (Sysfs) { .root_fd = root_fd, .backend = &sysfs_backend_dirfd };
}

static bool sysfs_root_is_real(const char *sysfs_root) {
        return streq(sysfs_root, "/sys") || streq(sysfs_root, "/sys/");
}

int sysfs_open(const char *sysfs_root, SysfsBackendKind kind, Sysfs *ret) {
        Sysfs s = { .root_fd = -EBADF,
                    .backend = &sysfs_backend_dirfd,
                    .live = sysfs_root_is_real(sysfs_root) };
        int fd;

        if (kind == SYSFS_UDEV && !s.live)
                return -EINVAL;
        fd = open(sysfs_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        s.root_fd = fd;
        if (kind == SYSFS_UDEV) {
                s.udev = udev_new();
                if (!s.udev) {
                        int r = errno == ENOMEM ? -ENOMEM : -EIO;
                        sysfs_done(&s);
                        return r;
                }
                s.backend = &sysfs_backend_udev;
        }
        *ret = s;
        return 0;
}

/* 1 if the attribute exists and reads as a positive integer or boolean true, 0 otherwise. */
int sysfs_node_attr_bool(Sysfs *s, const Node *n, const char *name) {
        _cleanup_free_ char *v = NULL;
        unsigned u;
        int r;

        r = sysfs_node_attr(s, n, name, &v);
        if (r < 0)
                return r == -ENOMEM ? r : -ENOENT;
        if (safe_atou(v, &u) < 0)
                return -EBADMSG;
        return u == 1;
}

/* Basename of the target of the link 'path' (relative to the sysfs root, or absolute). -ENOENT or
 * -ENOMEM. */
int sysfs_link_name(Sysfs *s, const char *path, char **ret) {
        _cleanup_free_ char *target = NULL;
        char *b;
        int r;

        r = readlink_malloc_at(s->root_fd, path, &target);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || isempty(sysfs_last_component(target)))
                return -ENOENT;
        b = strdup(sysfs_last_component(target));
        if (!b)
                return -ENOMEM;
        *ret = b;
        return 0;
}

/* Basename of the target of the link 'name' in the node's directory. -ENOENT or -ENOMEM. */
int sysfs_node_link_name(Sysfs *s, const Node *n, const char *name, char **ret) {
        _cleanup_free_ char *p = NULL;
        int r;

        r = node_subpath(n, name, &p);
        if (r < 0)
                return r;
        return sysfs_link_name(s, p, ret);
}

/* Entry names of the directory 'path' (relative to the sysfs root, or absolute), at most max of them,
 * as a strv (NULL when empty). -ENOENT when there is no such directory; a listing that cannot be had in
 * full is an error, never a shorter list: -E2BIG beyond max entries, the errno of open or readdir;
 * -ENOMEM. *ret is set on success only. */
int sysfs_list_dir(Sysfs *s, const char *path, size_t max, char ***ret, size_t *ret_n) {
        _cleanup_strv_free_ char **v = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        size_t n = 0;
        int fd, r;

        fd = openat(s->root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -ENOMEM;
        }
        for (;;) {
                struct dirent *de;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno > 0)
                                return -errno;
                        break;
                }
                if (de->d_name[0] == '.')
                        continue;
                if (n >= max)
                        return -E2BIG;
                r = strv_extend(&v, &n, de->d_name);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

/* A "MAJ:MIN" file (relative to the sysfs root). -ENOENT, -EINVAL or -ENOMEM. */
int sysfs_read_devnum(Sysfs *s, const char *path, dev_t *ret) {
        _cleanup_free_ char *v = NULL;
        int r;

        r = read_full_file_at(s->root_fd, path, DEVICE_ATTR_MAX, &v, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : -ENOENT;
        strip_trailing_space(v);
        return parse_kernel_devnum(v, ret);
}

/* The directory 'name' in the node's directory, as sysfs_list_dir(). */
int sysfs_node_list_dir(Sysfs *s, const Node *n, const char *name, size_t max, char ***ret, size_t *ret_n) {
        _cleanup_free_ char *p = NULL;
        int r;

        r = node_subpath(n, name, &p);
        if (r < 0)
                return r;
        return sysfs_list_dir(s, p, max, ret, ret_n);
}

/* A "MAJ:MIN" attribute of the node. -ENOENT, -EINVAL or -ENOMEM. */
int sysfs_node_attr_devnum(Sysfs *s, const Node *n, const char *name, dev_t *ret) {
        _cleanup_free_ char *v = NULL;
        int r;

        r = sysfs_node_attr(s, n, name, &v);
        if (r < 0)
                return r;
        return parse_kernel_devnum(v, ret);
}
