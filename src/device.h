/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Device classification: block device facts read from sysfs through a directory fd (device-sysfs.c;
 * libudev, which only that file includes, on request for cross-checks): whole disk, bdi name, leaf devices of
 * stacked dm/md, loop backing file, removable, usb, rotational, dm-crypt. Anything not determinable
 * is left unknown; callers treat unknown as "must sync". Filesystem type classes: fs-type.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fs-type.h"
#include "shared/macro.h"

/* Device classes usable in policy Device= (bit mask). */
typedef enum DeviceClassBit {
        DEVICE_USB = 1U << 0,
        DEVICE_REMOVABLE = 1U << 1,
        DEVICE_ROTATIONAL = 1U << 2,
        DEVICE_NETWORK = 1U << 3,
        DEVICE_FUSE = 1U << 4,
        DEVICE_LOOP = 1U << 5,
        DEVICE_CRYPT = 1U << 6,
} DeviceClassBit;

#define _DEVICE_CLASS_ALL 0x7FU

const char *device_class_to_string(unsigned bit); /* single bit */
int device_class_from_string(const char *s);      /* bit or -EINVAL */

typedef struct DeviceInfo {
        dev_t dev;        /* superblock device as in mountinfo */
        bool is_block;    /* a real block device (has /sys/dev/block/M:m) */
        dev_t whole_disk; /* parent disk for partitions, dev itself for disks; 0 unknown */
        char *bdi_name;   /* name under debugfs bdi/, e.g. "7:0", "8:0", "btrfs-1", "0:52" */
        char *name;       /* kernel name of the block device dev ("sda1", "dm-0", "loop3": the
                                    * target of sysfs dev/block/MAJ:MIN), NULL when not one */
        dev_t *leaves;    /* leaf *whole disks* (slaves/ followed recursively, partitions
                                    * mapped to their disk), sorted, unique, at most 256; btrfs:
                                    * those of its member devices; never empty: [dev] when
                                    * nothing better is known */
        size_t n_leaves;
        char *loop_backing_file;  /* loop/backing_file of the first loop device among the whole
                                    * disk and the leaves, NULL if none */
        dev_t loop_dev;           /* that loop device's node, as its uevent names it: MAJOR:MINOR */
        char *loop_devname;       /* and DEVNAME (one path component below /dev); NULL if none or
                                    * not known (loop_dev is then 0) */
        unsigned classes;         /* DeviceClassBit mask: usb/removable/rotational/loop are the
                                    * union over the whole disk and the leaves, crypt over the
                                    * stack, network/fuse from fstype */
        unsigned classes_unknown; /* of a classified device, the classes whose attribute could not be
                                    * read on some disk of the stack (removable, rotational; rotational
                                    * also when not asked for): device_info_unknown_classes() */
        bool classified;          /* sysfs/udev facts were read; false: only fstype classes, or
                                    * (incomplete) the classes of the part of the stack read */
        bool incomplete;          /* the device stack could not be read in full (a slaves/ or
                                    * btrfs devices/ listing or a member unreadable, or beyond
                                    * the bounds): not classified, leaves [dev] */
        int error;                /* not classified: the first error met reading sysfs (negative
                                    * errno; the sysfs root's own when it could not be opened), 0
                                    * when none (a device sysfs does not know, a bound) */
        unsigned n_loops;         /* loop devices among the whole disk and the leaves */
        bool served_remotely;     /* a disk of the stack is served by a user-space process or over
                                    * the network (nbd, ublk, rbd, vduse, NVMe over fabrics, iSCSI:
                                    * a device under devices/virtual/ other than loop, dm, md, zram,
                                    * ram, nullb or an NVMe multipath head whose controllers are all
                                    * PCIe; or below an iSCSI session), or where its device lives
                                    * is not known */
        char **rotational_disks;  /* DEVICE_ROTATIONAL_DEFER: the sysfs directories (relative to
                                    * the sysfs root; libudev's: absolute) of the disks whose
                                    * queue/rotational decides the class, NULL-terminated, NULL
                                    * when none; the class is unknown until
                                    * device_info_apply_rotational() (device-rotational.h) */
} DeviceInfo;

void device_info_done(DeviceInfo *d);

/* The classes policy_match() must count as unknown for d: those not read, and for a device not
 * classified every class it does not have (network and fuse come from the filesystem type, but a
 * classification that failed leaves none of them: sample.c). */
static inline unsigned device_info_unknown_classes(const DeviceInfo *d) {
        if (!d->classified)
                return _DEVICE_CLASS_ALL & ~d->classes;
        return d->classes_unknown & ~d->classes;
}

/*
 * Classifies the device behind a superblock. sysfs_root is the directory that stands for "/sys"
 * ("/sys" in production, a fixture tree in tests). fstype/source are used for network/fuse classes
 * and for btrfs (bdi "btrfs-N" found via sysfs fs/btrfs/<uuid>/bdi when possible).
 * Never fails for lack of information: returns 0 with classified=false when sysfs/udev say nothing;
 * negative errno only for -ENOMEM.
 */
int device_classify(const char *sysfs_root, dev_t dev, const char *fstype, const char *source,
                    DeviceInfo *ret);

/* The same for many superblocks: sysfs_root is opened once (NULL or missing: nothing is classified).
 * kind picks the sysfs backend (device-sysfs.h): SYSFS_DIRFD always; SYSFS_UDEV (libudev, real "/sys"
 * only) to cross-check it. device_classifier_new() fails only with -ENOMEM (or, for SYSFS_UDEV, when
 * libudev cannot open sysfs_root). */
typedef struct DeviceClassifier DeviceClassifier;

typedef enum SysfsBackendKind {
        SYSFS_DIRFD, /* directory fd: the default */
        SYSFS_UDEV,  /* libudev: only on the real "/sys" (-EINVAL otherwise); for cross-checks */
} SysfsBackendKind;

int device_classifier_new(const char *sysfs_root, SysfsBackendKind kind, DeviceClassifier **ret);
DeviceClassifier *device_classifier_free(DeviceClassifier *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(DeviceClassifier *, device_classifier_free);
/* How the "rotational" class is read. Its attribute, queue/rotational, takes the queue's limits lock
 * (Linux 6.11+), which a task stuck in the disk's revalidation (a SCSI command to a disk that stopped
 * answering, a USB disk reset or pulled) or a loop device's reconfiguration holds for tens of seconds:
 * a sample never reads it in its own process (review O, O9). */
typedef enum DeviceRotationalRead {
        DEVICE_ROTATIONAL_READ,   /* here, in this process (the default: tests and cross-checks) */
        DEVICE_ROTATIONAL_UNREAD, /* not at all: no disk has the class, every one has it unknown */
        DEVICE_ROTATIONAL_DEFER,  /* later: the disks are listed in DeviceInfo.rotational_disks, the
                                   * class unknown until device_info_apply_rotational() applies what a
                                   * bounded child read (device_rotational_query()) */
} DeviceRotationalRead;

void device_classifier_set_rotational_read(DeviceClassifier *c, DeviceRotationalRead how);
int device_classifier_classify(DeviceClassifier *c, dev_t dev, const char *fstype, const char *source,
                               DeviceInfo *ret);
