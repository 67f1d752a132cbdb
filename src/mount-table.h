/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Mount table: the host's mounts as read from proc/self/mountinfo (via libmount), with unescaped
 * paths, the superblock's device number, fstype, source, options and read-only state.
 * Pure parser on text + a loader on a root dir fd. For our own mount namespace seen from the real
 * "/", the same entries can also come from listmount(2)/statmount(2) (Linux 6.15+: every field
 * needed, probed through statmount's supported mask), with mountinfo as the fallback; another
 * namespace's, through an fd of it, from the same calls. libmount is loaded on first use.
 *
 * Why libmount for the text: mountinfo's escapes and optional fields are its job, and every systemd
 * system has it already; loaded only where text is parsed, since it pulls libblkid, libselinux and
 * libpcre2 (0.3 ms and 0.6 MiB per process, docs/PERFORMANCE.md). listmount/statmount is preferred
 * wherever the kernel reports every field: it is faster (measured in docs/PERFORMANCE.md).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "shared/macro.h"

#define MOUNT_TABLE_MAX_ENTRIES 65536U
#define MOUNT_TABLE_MAX_BYTES (64U * 1024U * 1024U)
/* What mount_table_merge() takes into a table at most, each entry counted with its strings: any
 * user can make tens of thousands of mounts with 4 KiB names in mount namespaces of their own
 * (review AK, AK-2: 260-500 MB in a pass, and work past the bound of the look at them). */
#define MOUNT_TABLE_MERGE_MAX_BYTES (32U * 1024U * 1024U)

typedef struct MountEntry {
        int mount_id;
        uint64_t mount_id_unique; /* listmount's id, never reused in a boot; 0: not known (the
                                   * mountinfo text has only mount_id, which the next mount may get
                                   * once this one is gone) */
        int parent_id;
        dev_t dev;         /* superblock device (major:minor field) */
        char *root;        /* root of the mount within its filesystem (unescaped) */
        char *mount_point; /* unescaped */
        char *fstype;      /* "ext4", "fuse.sshfs", ... (type.subtype joined with '.') */
        char *source;      /* unescaped; may be "none" */
        char *vfs_options; /* per-mount options */
        char *fs_options;  /* superblock options */
        bool read_only;    /* mount or superblock is read-only */
        bool unlisted;     /* in no mount table (see unlisted.h): our root directory, or a
                                 * superblock reached through a process's open file; mount_point is
                                 * the path to open */
} MountEntry;

/* Whether an option string of a mount table (per mount or per superblock) says read-only: its first
 * word, which the kernel always prints as "ro" or "rw" (show_mountinfo(); statmount's flags are
 * printed the same way here). A later "ro" is part of a value the mounter chose, such as an overlay's
 * lowerdir with an escaped comma (review G, G4). */
bool mount_options_read_only(const char *opts);

/* Frees the strings of one entry (not the entry itself). */
void mount_entry_done(MountEntry *e);

typedef struct MountTable {
        MountEntry *entries;
        size_t n_entries;
        size_t merged_bytes; /* taken in by mount_table_merge(), as mount_entry_bytes() counts */
} MountTable;

/* An entry's size with its strings, for MOUNT_TABLE_MERGE_MAX_BYTES. */
size_t mount_entry_bytes(const MountEntry *e) _pure_;

/* The parser's library, loaded (dlopen) the first time text is parsed. */
#define MOUNT_TABLE_LIBMOUNT "libmount.so.1"

/* Parses mountinfo text (size bytes, need not be NUL-terminated). Malformed lines are skipped and
 * counted in *ret_n_bad (may be NULL). Returns 0 or negative errno (-ENOMEM, -E2BIG over max,
 * -ELIBACC when MOUNT_TABLE_LIBMOUNT cannot be loaded: mount_table_libmount_error() says why). */
int mount_table_parse(const char *text, size_t size, MountTable **ret, unsigned *ret_n_bad);
/* dlerror()'s text for the last failure to load MOUNT_TABLE_LIBMOUNT, NULL when none. */
const char *mount_table_libmount_error(void);

typedef enum MountTableBackend {
        MOUNT_TABLE_BACKEND_DEFAULT,   /* production: see mount_table_load() */
        MOUNT_TABLE_BACKEND_MOUNTINFO, /* <root_fd>/proc/self/mountinfo, parsed by libmount */
        MOUNT_TABLE_BACKEND_LISTMOUNT, /* listmount/statmount only, no fallback (tests, benchmarks) */
        _MOUNT_TABLE_BACKEND_MAX,
} MountTableBackend;

const char *mount_table_backend_to_string(MountTableBackend b) _pure_;

/* Reads <root_fd>/proc/self/mountinfo. (MOUNT_TABLE_BACKEND_DEFAULT: see mount-table.c for whether
 * listmount is tried first when root_fd is our own root; any listmount failure falls back to the
 * mountinfo text, never to a partial table.) *ret_n_bad: the mounts not in the table, a line the
 * parser could not read or a mount too large (mount_table_load_listmount()). */
int mount_table_load(int root_fd, MountTable **ret, unsigned *ret_n_bad);
/* For a process whose children read tables without exec (the daemon's passes): loads libmount now,
 * once, when the default backend would parse text here (listmount fails: a kernel before 6.15,
 * seccomp), rather than in every child. 1: loaded, 0: not needed, or a negative errno (the child
 * then loads it on first use, as any process does). */
int mount_table_preload(int root_fd);

/* mount_table_load() with an explicit backend; *ret_used (may be NULL) says which one answered.
 * MOUNT_TABLE_BACKEND_LISTMOUNT: -EXDEV when root_fd is not our own root, else as below. */
int mount_table_load_backend(int root_fd, MountTableBackend backend, MountTable **ret, unsigned *ret_n_bad,
                             MountTableBackend *ret_used);

/* Every mount of our own mount namespace visible from our root, through listmount(LSMT_ROOT) and one
 * statmount per mount, mapped exactly as the mountinfo parser maps a line (mountinfo ids, raw
 * strings, options as libmount unescapes them). -ENOSYS/-EPERM from the kernel, -EOPNOTSUPP when
 * statmount cannot say it supports every field used (before 6.15), -E2BIG over
 * MOUNT_TABLE_MAX_ENTRIES entries. A mount whose strings pass 1 MiB, or 16 KiB once the table has
 * MOUNT_TABLE_MAX_BYTES, is left out and counted in *ret_n_dropped (may be NULL): any user can make
 * such mounts (fusermount3, then a rename). */
int mount_table_load_listmount(MountTable **ret, unsigned *ret_n_dropped);

/* Every mount of the mount namespace ns_fd refers to (an open /proc/PID/ns/mnt; ours too), the same
 * calls and mapping as mount_table_load_listmount() with the namespace's id (NS_MNT_GET_INFO's
 * NS_GET_MNTNS_ID ioctl, Linux 6.12; listmount's mnt_ns_id, 6.11). For another namespace the kernel
 * answers as seen from the first mount on the namespace's root (grab_requested_root()): what
 * /proc/PID/mountinfo shows for a process whose root is that mount, entry by entry (a chrooted
 * process's mountinfo shows only the mounts below its root, with paths relative to it; a process
 * whose root is a mount stacked on it, mount_table_keep_below()). Needs
 * CAP_SYS_ADMIN over the namespace's user namespace for another namespace (-ENOENT otherwise).
 * For another namespace also -E2BIG past MOUNT_TABLE_MAX_BYTES, as mount_entry_bytes() counts.
 * -ENOTTY/-EINVAL when ns_fd is not a mount namespace, else as mount_table_load_listmount(). */
int mount_table_load_namespace(int ns_fd, MountTable **ret);

/* The id of the mount namespace ns_fd refers to (NS_GET_MNTNS_ID, Linux 6.12). negative errno. */
int mount_table_namespace_id(int ns_fd, uint64_t *ret);
/* Every mount id of namespace ns_id (0: ours) through listmount, in chunks, at most
 * MOUNT_TABLE_MAX_ENTRIES (-E2BIG over it). negative errno. */
int mount_table_list_ids(uint64_t ns_id, uint64_t **ret, size_t *ret_n);

/* Moves every entry of *from to the end of into and frees *from. -E2BIG over MOUNT_TABLE_MAX_ENTRIES
 * entries, or when into would have taken in more than MOUNT_TABLE_MERGE_MAX_BYTES (nothing moved). */
int mount_table_merge(MountTable *into, MountTable **from);

/* Pure. Keeps in t the mount root_id and the mounts below it (their parents lead to it), in order,
 * and moves the others into *ret_outside (NULL when none). Another namespace's table through
 * listmount is seen from the first mount on the namespace's root, which may lie under a process's
 * root: a container whose root was moved over "/" (systemd-nspawn) keeps the old root and its mounts
 * below its own, at paths of the old root that its processes cannot reach. -EXDEV when root_id is not
 * in t or is not mounted at "/" (the paths would not be that root's), -ENOMEM. */
int mount_table_keep_below(MountTable *t, int root_id, MountTable **ret_outside);

MountTable *mount_table_free(MountTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(MountTable *, mount_table_free);
