/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Namespaces kept by an nsfs mount (unlisted.h unlisted_scan_nsfs()): the walk to the nsfs file from
 * the lookup cache only, and the checks that it is that mount of that namespace. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/proc-util.h"
#include "unlisted-internal.h"
#include "unlisted.h"

int unlisted_nsfs_mount_listed(int proc_fd, int pid, int mnt_id, uint64_t ns_ino) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_free_ char *text = NULL;
        char path[64];
        size_t size = 0;
        uint64_t ino;
        int r;

        if (pid > 0)
                snprintf(path, sizeof path, "%d/mountinfo", pid);
        else
                snprintf(path, sizeof path, "self/mountinfo");
        r = read_full_file_at(proc_fd, path, MOUNT_TABLE_MAX_BYTES, &text, &size);
        if (r < 0)
                return r;
        r = mount_table_parse(text, size, &t, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n_entries; i++)
                if (t->entries[i].mount_id == mnt_id)
                        return streq_ptr(t->entries[i].fstype, "nsfs") &&
                               unlisted_parse_ns_root(t->entries[i].root, &ino) >= 0 && ino == ns_ino;
        return 0;
}

/* The nsfs file of namespace ns_ino mounted at e, in our namespace (pid 0) or through pid's root, for
 * reading: the path walked from the lookup cache only (open_cached_at()), first as O_PATH, which opens
 * nothing (an nsfs mount replaced by a FUSE directory meanwhile is never opened: its server might not
 * answer), then opened again through /proc/self/fd once it is that mount's inode of that namespace.
 * That is told by /proc/self/fdinfo, never by fstatfs() or fstat(), which call into whatever
 * filesystem the path now leads to (an RPC to a dead NFS or 9p server would never return). -EAGAIN
 * when the walk would wait, -EMEDIUMTYPE when the path leads elsewhere now. */
static int open_nsfs(int root_fd, int pid, const MountEntry *e, uint64_t ns_ino) {
        _cleanup_close_ int base = -EBADF, p = -EBADF, proc_fd = -EBADF;
        uint64_t ino;
        char path[64];
        int fd, mnt_id, r;

        if (pid > 0) {
                /* The magic link, opened O_PATH: a jump to that root, no lookup below it. */
                snprintf(path, sizeof path, "proc/%d/root", pid);
                base = openat(root_fd, path, O_PATH | O_CLOEXEC);
                if (base < 0)
                        return negative_errno();
        }
        p = open_cached_at(pid > 0 ? base : root_fd, skip_root_prefix(e->mount_point), O_PATH);
        if (p < 0)
                return p;
        /* Our own procfs (the fd is ours), whatever root is scanned. */
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return negative_errno();
        r = proc_fdinfo_mnt_ino(proc_fd, p, &mnt_id, &ino);
        if (r < 0)
                return r;
        if (mnt_id != e->mount_id || ino != ns_ino)
                return -EMEDIUMTYPE;
        r = unlisted_nsfs_mount_listed(proc_fd, pid, mnt_id, ns_ino);
        if (r < 0)
                return r;
        if (r == 0)
                return -EMEDIUMTYPE;
        snprintf(path, sizeof path, "self/fd/%d", p);
        fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

int unlisted_scan_nsfs(int root_fd, const MountTable *t, const unsigned *ns_of, const int *ns_pids,
                       const uint64_t *scanned_inos, size_t n_scanned, usec_t until, HiddenSet *h,
                       Reasons *why) {
        _cleanup_free_ uint64_t *done = NULL;
        size_t n_done = 0;
        int r;

        for (size_t i = 0; i < t->n_entries; i++) {
                const MountEntry *e = &t->entries[i];
                _cleanup_close_ int fd = -EBADF;
                unsigned ns = ns_of ? ns_of[i] : 0;
                uint64_t ino;
                bool known = false;

                if (!streq_ptr(e->fstype, "nsfs") || unlisted_parse_ns_root(e->root, &ino) < 0)
                        continue;
                for (size_t j = 0; j < n_scanned && !known; j++)
                        known = scanned_inos[j] == ino;
                for (size_t j = 0; j < n_done && !known; j++)
                        known = done[j] == ino;
                for (size_t j = 0; j < h->n_ns_listed && !known; j++)
                        known = h->ns_listed[j] == ino;
                if (known)
                        continue;
                r = unlisted_u64_append(&done, &n_done, ino);
                if (r < 0)
                        return r;

                /* In the main process: never a lookup that waits (a mount point below a network or
                 * FUSE mount, a hung disk). */
                fd = open_nsfs(root_fd, ns == 0 ? 0 : ns_pids[ns - 1], e, ino);
                if (fd < 0)
                        r = fd;
                else {
                        char desc[PATH_MAX + 128];
                        snprintf(desc, sizeof desc,
                                 "mount namespace mnt:[%llu] (kept by the nsfs mount %s, no "
                                 "process in it)",
                                 (unsigned long long) ino, e->mount_point);
                        r = unlisted_scan_namespace(fd, desc, t, until, h);
                }
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && reasons_add(why,
                                         "mount namespace mnt:[%llu] is kept by the nsfs mount %s with no "
                                         "process in it: its mounts could not be listed (%s)",
                                         (unsigned long long) ino, e->mount_point,
                                         r == -EAGAIN ? "its path cannot be walked from the lookup cache "
                                                        "alone, and a walk that may wait is not made here"
                                                      : strerror(-r)) < 0)
                        return -ENOMEM;
        }
        return 0;
}
