/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * sysfs for device.c (private to the device module): block device nodes, their attributes, links
 * and directories, through one interface with two backends:
 *  - a directory fd on sysfs_root (the default, production included): attributes, links and
 *    directories are read with openat()/readlinkat() on that fd. Symlinks are resolved lexically
 *    relative to the link's directory, as in real sysfs, where all links are relative and point at
 *    real directories. USB ancestry: the nearest ancestor directory whose 'subsystem' link ends in
 *    "usb" and whose uevent says DEVTYPE=usb_device.
 *  - libudev, on request and only on the real "/sys" (SYSFS_UDEV): udev_device_new_from_devnum(),
 *    udev_device_get_sysattr_value(), udev_device_get_parent(), and
 *    udev_device_get_parent_with_subsystem_devtype("usb", "usb_device"). This needs no udevd: it
 *    reads sysfs (udev properties from the udev database are never used). Kept as the reference the
 *    directory-fd backend is checked against (test-device --compare-all, integration/device-loop.sh):
 *    both give the same DeviceInfo on every block device; libudev costs ~60 extra system calls per
 *    device (a path walk of /sys with an openat+newfstatat+close per component, three times).
 *    device-sysfs.c is the only file that includes libudev.
 * A backend provides five operations (SysfsBackend); reading links (bdi, fs/btrfs/...) and listing
 * directories (slaves/, fs/btrfs/) is done once for both with readlinkat()/openat() on root_fd and
 * the node's path (libudev has no API for those), as is trimming attribute values.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "device.h"

#define DEVICE_ATTR_MAX (8U * 1024U)

struct udev;
struct udev_device;

typedef struct Sysfs Sysfs;

typedef struct Node {
        struct udev_device *ud; /* libudev backend */
        char *path;             /* libudev: absolute syspath; dir-fd backend: relative to root_fd */
        dev_t devnum;
} Node;

/* What differs between the backends. Everything else — attribute clean-up, links, directory
 * listings (readlinkat()/openat() on root_fd and the node's path in both: libudev has no API for
 * those) and the walk — is written once on top of these. */
typedef struct SysfsBackend {
        /* The node of block device dev. -ENOENT: no such block device; -ENOMEM. */
        int (*node_from_devnum)(Sysfs *s, dev_t dev, Node *ret);
        /* Attribute value as read (name may contain '/'). -ENOENT if missing/unreadable; -ENOMEM. */
        int (*attr)(Sysfs *s, const Node *n, const char *name, char **ret);
        /* Parent device (the disk of a partition). -ENOENT or -ENOMEM. */
        int (*parent)(Sysfs *s, const Node *n, Node *ret);
        bool (*is_partition)(Sysfs *s, const Node *n);
        /* 1 if a usb_device is among the node's ancestors, 0 if not (or unknown), -ENOMEM. */
        int (*is_usb)(Sysfs *s, const Node *n);
} SysfsBackend;

struct Sysfs {
        int root_fd;       /* sysfs_root; non-device paths (fs/btrfs, class/bdi) are read here */
        bool live;         /* sysfs_root is exactly "/sys" (or "/sys/"): the running system's, whose
                            * /dev names can be resolved */
        struct udev *udev; /* libudev backend only */
        const SysfsBackend *backend;
};

void node_done(Node *n);

/* Opens sysfs_root with the given backend. negative errno (-ENOMEM, -EINVAL, or sysfs_root missing). */
int sysfs_open(const char *sysfs_root, SysfsBackendKind kind, Sysfs *ret);
void sysfs_done(Sysfs *s);
/* The directory-fd backend on root_fd, which stays the caller's: no sysfs_done() (a bounded child's
 * kept fd, device-rotational.c). */
Sysfs sysfs_on_fd(int root_fd);

/* Attribute value with trailing whitespace removed. -ENOENT if missing/unreadable; -ENOMEM. */
int sysfs_node_attr(Sysfs *s, const Node *n, const char *name, char **ret);
/* A 0/1 attribute: 1 when it reads 1, 0 when another number; -ENOENT when missing or unreadable,
 * -EBADMSG when no number (the value is not known), -ENOMEM. */
int sysfs_node_attr_bool(Sysfs *s, const Node *n, const char *name);
/* A "MAJ:MIN" attribute of the node. -ENOENT, -EINVAL or -ENOMEM. */
int sysfs_node_attr_devnum(Sysfs *s, const Node *n, const char *name, dev_t *ret);
/* Basename of the target of the link 'name' in the node's directory. -ENOENT or -ENOMEM. */
int sysfs_node_link_name(Sysfs *s, const Node *n, const char *name, char **ret);
/* Entry names of the directory 'name' in the node's directory, as sysfs_list_dir(). */
int sysfs_node_list_dir(Sysfs *s, const Node *n, const char *name, size_t max, char ***ret, size_t *ret_n);

/* The same for paths relative to the sysfs root (fs/btrfs/..., class/bdi/...). */
int sysfs_link_name(Sysfs *s, const char *path, char **ret);
/* Entry names (no dot files), at most max, as a strv (NULL when empty). -ENOENT (no such directory),
 * -E2BIG (more than max), another errno when it cannot be read in full, or -ENOMEM. */
int sysfs_list_dir(Sysfs *s, const char *path, size_t max, char ***ret, size_t *ret_n);
int sysfs_read_devnum(Sysfs *s, const char *path, dev_t *ret);

/* The part of p after its last '/'. */
const char *sysfs_last_component(const char *p);
