/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The listmount(2)/statmount(2) ABI (Linux 6.8+), defined here once because Debian 12's headers
 * (Linux 6.1) have none of it: struct mnt_id_req with mnt_ns_id (6.11), struct statmount up to
 * supported_mask (6.15), the STATMOUNT_* request bits, MOUNT_ATTR_* and SB_* flags as statmount
 * reports them, NS_GET_MNTNS_ID. Field availability is probed through the returned mask (and
 * supported_mask), never by kernel version. Never includes domain headers.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The same numbers on every architecture that uses the unified syscall table. */
#ifndef __NR_statmount
#define __NR_statmount 457
#endif
#ifndef __NR_listmount
#define __NR_listmount 458
#endif

struct ss_mnt_id_req {
        uint32_t size;
        uint32_t spare;
        uint64_t mnt_id;
        uint64_t param;     /* statmount: request mask; listmount: last id seen */
        uint64_t mnt_ns_id; /* 6.11+; 0 = our own namespace */
};
#define SS_MNT_ID_REQ_SIZE_VER0 24U
#define SS_MNT_ID_REQ_SIZE_VER1 32U

struct ss_statmount {
        uint32_t size;
        uint32_t mnt_opts; /* [str] superblock options, escaped like mountinfo (6.10) */
        uint64_t mask;     /* what was written */
        uint32_t sb_dev_major;
        uint32_t sb_dev_minor;
        uint64_t sb_magic;
        uint32_t sb_flags; /* SS_SB_* */
        uint32_t fs_type;  /* [str] */
        uint64_t mnt_id;   /* unique (64-bit) ids */
        uint64_t mnt_parent_id;
        uint32_t mnt_id_old; /* the ids proc/PID/mountinfo shows */
        uint32_t mnt_parent_id_old;
        uint64_t mnt_attr; /* SS_MOUNT_ATTR_* */
        uint64_t mnt_propagation;
        uint64_t mnt_peer_group;
        uint64_t mnt_master;
        uint64_t propagate_from;
        uint32_t mnt_root;   /* [str] unescaped */
        uint32_t mnt_point;  /* [str] raw */
        uint64_t mnt_ns_id;  /* 6.11 */
        uint32_t fs_subtype; /* [str] 6.13; absent from mask when the type has none */
        uint32_t sb_source;  /* [str] 6.13, unescaped; absent when the mount has none */
        uint32_t opt_num;
        uint32_t opt_array;
        uint32_t opt_sec_num;
        uint32_t opt_sec_array;
        uint64_t supported_mask; /* 6.15 */
        uint64_t spare2[45];
        char str[];
};

_Static_assert(offsetof(struct ss_statmount, mnt_root) == 104, "statmount layout");
_Static_assert(offsetof(struct ss_statmount, supported_mask) == 144, "statmount layout");
_Static_assert(sizeof(struct ss_statmount) == 512, "statmount layout");

#define SS_STATMOUNT_SB_BASIC 0x00000001U
#define SS_STATMOUNT_MNT_BASIC 0x00000002U
#define SS_STATMOUNT_MNT_ROOT 0x00000008U
#define SS_STATMOUNT_MNT_POINT 0x00000010U
#define SS_STATMOUNT_FS_TYPE 0x00000020U
#define SS_STATMOUNT_MNT_OPTS 0x00000080U       /* 6.10 */
#define SS_STATMOUNT_FS_SUBTYPE 0x00000100U     /* 6.13 */
#define SS_STATMOUNT_SB_SOURCE 0x00000200U      /* 6.13 */
#define SS_STATMOUNT_SUPPORTED_MASK 0x00001000U /* 6.15 */

#define SS_LSMT_ROOT UINT64_MAX

/* mnt_attr bits (linux/mount.h MOUNT_ATTR_*). */
#define SS_MOUNT_ATTR_RDONLY 0x00000001U
#define SS_MOUNT_ATTR_NOSUID 0x00000002U
#define SS_MOUNT_ATTR_NODEV 0x00000004U
#define SS_MOUNT_ATTR_NOEXEC 0x00000008U
#define SS_MOUNT_ATTR_NOATIME 0x00000010U
#define SS_MOUNT_ATTR_STRICTATIME 0x00000020U
#define SS_MOUNT_ATTR_NODIRATIME 0x00000080U
#define SS_MOUNT_ATTR_IDMAP 0x00100000U
#define SS_MOUNT_ATTR_NOSYMFOLLOW 0x00200000U

/* sb_flags bits (the kernel's SB_*, the only ones statmount reports). */
#define SS_SB_RDONLY 0x00000001U
#define SS_SB_SYNCHRONOUS 0x00000010U
#define SS_SB_DIRSYNC 0x00000080U
#define SS_SB_LAZYTIME 0x02000000U

#define SS_NS_GET_MNTNS_ID _IOR(0xb7, 0x5, uint64_t)

/* statx(2): the mount's unique (64-bit) id, the one statmount takes (6.8). */
#define SS_STATX_MNT_ID_UNIQUE 0x00004000U

static inline long ss_listmount(const struct ss_mnt_id_req *req, uint64_t *ids, size_t n, unsigned flags) {
        return syscall(__NR_listmount, req, ids, n, flags);
}

static inline long ss_statmount(const struct ss_mnt_id_req *req, struct ss_statmount *buf, size_t size,
                                unsigned flags) {
        return syscall(__NR_statmount, req, buf, size, flags);
}
