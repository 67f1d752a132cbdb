/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "fs-type.h"
#include "shared/fd-util.h"
#include "mount-table.h"
#include "shared/fileio.h"
#include "shared/mount-api.h"
#include "shared/string-util.h"
#include "worker.h"
#include "writeback.h"

/* --- the report pipe --- */

_Static_assert(sizeof(WorkerReport) == 40 && sizeof(WorkerReport) % 8 == 0, "WorkerReport has padding");
_Static_assert(sizeof(WorkerReport) <= PIPE_BUF, "WorkerReport writes must be atomic");

/* The job the worker runs now and its index, set by worker_child_main() before each sync_one, for
 * worker_report_syncing(): state of the worker process (after fork), like its report pipe on fd 3. */
static const ExecJob *current_job = NULL;
static uint32_t current_index = 0;
static int block_dir_fd = -EBADF; /* sysfs dev/block (fd 5), or -EBADF */

/* Whether every leaf disk of job accounts its I/O: queue/iostats reads 1 (no allocation). A job
 * without leaves (FUSE, NFS: the bdi's own counters) is accounted. */
static bool leaves_accounted(const ExecJob *job) {
        const ProgressProbe *p = job->progress;

        if (!p || p->n_leaves == 0)
                return true;
        if (p->sysfs_fd < 0 || block_dir_fd < 0)
                return false;
        for (size_t i = 0; i < p->n_leaves; i++) {
                char path[64], buf[16];
                ssize_t k;
                int fd;

                snprintf(path, sizeof path, "%u:%u/queue/iostats", major(p->leaves[i]), minor(p->leaves[i]));
                fd = openat(block_dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0)
                        return false;
                k = read(fd, buf, sizeof buf - 1);
                safe_close(fd);
                if (k < 1 || buf[0] != '1' || (k > 1 && buf[1] != '\n'))
                        return false;
        }
        return true;
}

int worker_report_syncing(const ExecJob *job) {
        WorkerReport rep = { .kind = REPORT_SYNCING };

        if (!job || job != current_job)
                return -EINVAL;
        rep.index = current_index;
        rep.flags = leaves_accounted(job) ? WORKER_SYNCING_ACCOUNTED : 0;
        return loop_write(3, &rep, sizeof(rep));
}

int worker_report_read(int fd, WorkerReportBuffer *b, WorkerReport *ret) {
        for (;;) {
                ssize_t k = read(fd, b->buf + b->len, sizeof(b->buf) - b->len);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EAGAIN ? 0 : -errno;
                }
                if (k == 0)
                        return -EPIPE;
                b->len += (size_t) k;
                if (b->len == sizeof(b->buf)) {
                        memcpy(ret, b->buf, sizeof(*ret));
                        b->len = 0;
                        return 1;
                }
        }
}

/* --- the default sync_one --- */

/* Opens path if it is the block device dev, else /dev/block/MAJ:MIN; -ENODEV if neither is. */
static int open_block_device(const char *path, dev_t dev) {
        char alt[64];
        const char *paths[2] = { path, alt };
        int r = -ENODEV;

        snprintf(alt, sizeof alt, "/dev/block/%u:%u", major(dev), minor(dev));
        for (size_t i = 0; i < 2; i++) {
                struct stat st;
                int fd;

                if (!paths[i])
                        continue;
                fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd < 0) {
                        /* a node that is there but refused says more than "no device" */
                        if (errno == EACCES || errno == EPERM)
                                r = -errno;
                        continue;
                }
                if (fstat(fd, &st) >= 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
                        return fd;
                safe_close(fd);
        }
        return r;
}

/* The mount id and superblock device of the mountinfo line at p ("<id> <parent> <major>:<minor>
 * ..."): 0, or -EBADMSG. */
static int mountinfo_line_ids(const char *p, int *ret_id, dev_t *ret_dev) {
        unsigned maj, min;
        int id, n = 0;

        if (sscanf(p, "%d %*d %u:%u%n", &id, &maj, &min, &n) != 3 || n == 0 || (p[n] != ' ' && p[n] != '\t'))
                return -EBADMSG;
        *ret_id = id;
        *ret_dev = makedev(maj, min);
        return 0;
}

/* The superblock of mount id in the mountinfo of pid (0: ours): 1 and *ret_dev, 0 when no line has
 * that id, negative errno when unknown. Reading it touches no mounted filesystem. */
static int mountinfo_dev_of(pid_t pid, int id, dev_t *ret_dev) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        int r;

        if (pid > 0)
                snprintf(path, sizeof path, "/proc/%d/mountinfo", (int) pid);
        else
                snprintf(path, sizeof path, "/proc/self/mountinfo");
        r = read_full_file_at(AT_FDCWD, path, MOUNT_TABLE_MAX_BYTES, &text, NULL);
        if (r < 0)
                return r;
        for (const char *p = text; *p;) {
                const char *eol = strchrnul(p, '\n');
                int line_id;

                if (mountinfo_line_ids(p, &line_id, ret_dev) >= 0 && line_id == id)
                        return 1;
                p = *eol ? eol + 1 : eol;
        }
        return 0;
}

/* Whether any mount of the superblock dev is in our mount namespace's table: 1 yes, 0 no,
 * negative errno when unknown. Runs in the worker (reading /proc/self/mountinfo touches no mounted
 * filesystem); the text is scanned in place, bounded. */
static int superblock_mounted(dev_t dev) {
        _cleanup_free_ char *text = NULL;
        char root_id[32];
        struct statx stx;
        int r;

        r = read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", MOUNT_TABLE_MAX_BYTES, &text, NULL);
        if (r < 0)
                return r;
        /* A restricted view (chroot: the root is not a mount point) lists only the mounts below the
         * root; a superblock missing from it may be mounted all the same: unknown, never "gone". */
        if (statx(AT_FDCWD, "/", 0, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
                return -ENODATA;
        snprintf(root_id, sizeof root_id, "\n%llu ", (unsigned long long) stx.stx_mnt_id);
        if (strncmp(text, root_id + 1, strlen(root_id + 1)) != 0 && !strstr(text, root_id))
                return -ENODATA;
        for (const char *p = text; *p;) {
                const char *eol = strchrnul(p, '\n');
                dev_t line_dev;
                int line_id;

                if (mountinfo_line_ids(p, &line_id, &line_dev) >= 0 && line_dev == dev)
                        return 1;
                p = *eol ? eol + 1 : eol;
        }
        return 0;
}

static int open_mount(const ExecJob *job, bool dir_only);
static int mount_is_planned(const ExecJob *job, int fd);

/* The entry of t with mount id id, or NULL. */
static const MountEntry *table_find_id(const MountTable *t, int id) {
        for (size_t i = 0; i < t->n_entries; i++)
                if (t->entries[i].mount_id == id && !t->entries[i].unlisted)
                        return &t->entries[i];
        return NULL;
}

/* Whether the planned mount is still in t: its never reused id where both have it, else its id with
 * the planned superblock. A superblock's device number is its own only while it lives: with the
 * planned mount gone, another superblock may have that number since (a loop device attached again
 * and mounted elsewhere: review AT, AT-2), and the planned one was unmounted, which synced it. */
static bool planned_still_mounted(const MountTable *t, const ExecJob *job) {
        for (size_t i = 0; i < t->n_entries; i++) {
                const MountEntry *e = &t->entries[i];

                if (e->unlisted || e->dev != job->dev)
                        continue;
                if (job->mount_id_unique != 0 && e->mount_id_unique != 0
                            ? e->mount_id_unique == job->mount_id_unique
                            : e->mount_id == job->mount_id)
                        return true;
        }
        return false;
}

/* Whether the walk to e crosses only local block or pseudo filesystems: no FUSE, network, autofs nor
 * overlay mount above it, on which a server could hold the walk (review AT, AT-1; the planner's
 * choice of a mount follows the same rule, plan.c mount_path_local()). A parent not in t: no. */
static bool path_local(const MountTable *t, const MountEntry *e) {
        for (size_t n = 0; n < t->n_entries; n++) {
                const MountEntry *p;
                FsClass c;

                if (streq_ptr(e->mount_point, "/"))
                        return true; /* nothing above it on the path */
                p = table_find_id(t, e->parent_id);
                if (!p || p == e)
                        return false;
                c = fs_class_from_fstype(p->fstype);
                if (fs_walk_may_wait(c, p->fstype) || c == FS_CLASS_OVERLAY)
                        return false;
                e = p;
        }
        return false;
}

/* Another mount of the planned superblock whose path leads to it, where the planned path no longer
 * does (review AO, AO-2): moved, or overmounted by a bind of its own directory, since the plan.
 * syncfs() on any of its mounts syncs it. Only while the planned mount itself is still there
 * (planned_still_mounted()); only directories (a file bind mount may be a FIFO or a device, whose
 * open does something: review AT, AT-4), on paths that cross no filesystem a server answers for
 * (path_local()); each checked as the planned one is (mount_is_planned(): the fd holds its mount,
 * whose id cannot be handed out again meanwhile). At most WORKER_OTHER_MOUNTS_MAX tried; an fd, or
 * -ENOENT when none leads to the superblock. */
#define WORKER_OTHER_MOUNTS_MAX 16U
static int open_other_mount(const ExecJob *job) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_close_ int root_fd = -EBADF;
        unsigned tries = 0;
        int r;

        if (job->mount_id <= 0)
                return -ENOENT;
        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return negative_errno();
        r = mount_table_load(root_fd, &t, NULL);
        if (r < 0)
                return r;
        if (!planned_still_mounted(t, job))
                return -ENOENT;
        for (size_t i = 0; i < t->n_entries && tries < WORKER_OTHER_MOUNTS_MAX; i++) {
                const MountEntry *e = &t->entries[i];
                ExecJob other;
                int fd;

                if (e->dev != job->dev || e->unlisted || !e->mount_point || e->mount_id <= 0 ||
                    !path_local(t, e))
                        continue;
                tries++;
                other = *job;
                other.path = e->mount_point;
                other.mount_id = e->mount_id;
                other.mount_id_unique = e->mount_id_unique;
                other.mountinfo_pid = 0;
                fd = open_mount(&other, true);
                if (fd < 0)
                        continue;
                if (mount_is_planned(&other, fd) > 0)
                        return fd;
                safe_close(fd);
        }
        return -ENOENT;
}

/* The path did not lead to the planned mount (error: -ENOENT or -ESTALE): gone (EIDRM) if no mount
 * of the superblock is left; else, with follow, an fd on another of its mounts
 * (open_other_mount()); else the error given. */
static int not_reached(const ExecJob *job, int error, bool follow) {
        int r, fd;

        if (!job->gone_check)
                return error;
        r = superblock_mounted(job->dev);
        if (r == 0)
                return -EIDRM;
        if (r < 0 || !follow)
                return error;
        fd = open_other_mount(job);
        return fd >= 0 ? fd : error;
}

/* Whether the job wants another owner than we are, and we are root, who can become it. */
static bool wants_owner(const ExecJob *job) {
        uid_t ruid, euid, suid;
        gid_t rgid, egid, sgid;

        if (job->run_as_uid == (uid_t) -1 || geteuid() != 0)
                return false;
        if (getresuid(&ruid, &euid, &suid) < 0 || getresgid(&rgid, &egid, &sgid) < 0)
                return true;
        return !(ruid == job->run_as_uid && euid == ruid && suid == ruid && rgid == job->run_as_gid &&
                 egid == rgid && sgid == rgid);
}

/* FUSE without allow_other admits a process only if its uid, euid, suid are the mount's user_id=
 * and its gid, egid, sgid its group_id= (fs/fuse/dir.c fuse_permissible_uidgid): root gets EACCES.
 * Walk to the mount as we are (O_PATH does not enter it; /proc/PID/root may be closed to the
 * owner; a path longer than PATH_MAX in pieces, as open_mount() does), take what needs root (the
 * device to flush), become the owner for good, and open the mount from the O_PATH fd. The planner
 * puts such a job in a group of its own. */
static int open_as_owner(const ExecJob *job, int *ret_flush_fd) {
        _cleanup_close_ int dir_fd = -EBADF, path_fd = -EBADF, flush_fd = -EBADF;
        const char *rest;
        char proc[64];
        int fd;

        fd = path_walk_long(job->path, &dir_fd, &rest);
        if (fd < 0)
                return fd;
        path_fd = openat(dir_fd, rest, O_PATH | O_CLOEXEC);
        if (path_fd < 0)
                return negative_errno();
        dir_fd = safe_close(dir_fd);
        if (job->flush != FS_FLUSH_NONE) {
                flush_fd = open_block_device(job->flush_device, job->dev);
                if (flush_fd < 0 && job->flush != FS_FLUSH_DEVICE_OR_SYNCFS)
                        return flush_fd;
        }
        if (setgroups(0, NULL) < 0 || setresgid(job->run_as_gid, job->run_as_gid, job->run_as_gid) < 0 ||
            setresuid(job->run_as_uid, job->run_as_uid, job->run_as_uid) < 0)
                return negative_errno();

        fd = openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && errno == ENOTDIR) {
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", path_fd);
                fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        }
        if (fd < 0)
                return negative_errno();
        *ret_flush_fd = TAKE_FD(flush_fd);
        return fd;
}

/* The cache FLUSH after syncfs(): fsync() on the block device writes its buffers and sends one;
 * without the device node, a filesystem whose own ->sync_fs flushes gets a second syncfs(), whose
 * FLUSH follows every write of the first. Takes flush_fd (the node, opened early, or -EBADF). */
static int flush_after_syncfs(const ExecJob *job, int mount_fd, int flush_fd) {
        _cleanup_close_ int fd = flush_fd;

        if (fd < 0)
                fd = open_block_device(job->flush_device, job->dev);
        if (fd >= 0)
                return fsync(fd) < 0 ? negative_errno() : 0;
        if (job->flush != FS_FLUSH_DEVICE_OR_SYNCFS)
                return fd;
        return syncfs(mount_fd) < 0 ? negative_errno() : 0;
}

/* The realtime device of an xfs (rtdev=): its sync_fs never flushes that cache (fs-type.c). The
 * option holds the name given at mount time, which may name another node by now: it must be a block
 * device other than the superblock's own and held by a filesystem (a mounted filesystem holds its
 * devices exclusively, so an O_EXCL open fails with EBUSY); an unclaimed device cannot be ours.
 * Anything else is ENODEV (EACCES/EPERM when refused), never "synced". */
/* The node rtdev= names, where the mount was made (review R, R2): in another mount namespace below
 * its member's root, with RESOLVE_IN_ROOT so that an absolute link (/dev/disk/by-*) stays in it; in
 * ours as it is; for an unlisted path (no namespace known) nowhere. A file descriptor, or -errno. */
static int open_rt_node(const ExecJob *job, int flags) {
        struct open_how how = { .flags = (uint64_t) (flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK),
                                .resolve = RESOLVE_IN_ROOT };
        _cleanup_close_ int root_fd = -EBADF;
        char root[32];
        int fd;

        if (job->mountinfo_pid == 0)
                fd = open(job->rt_flush_device, (int) how.flags);
        else if (job->mountinfo_pid < 0)
                return -ENOENT;
        else {
                snprintf(root, sizeof root, "/proc/%d/root", (int) job->mountinfo_pid);
                root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root_fd < 0)
                        return -errno;
                fd = (int) syscall(SYS_openat2, root_fd, job->rt_flush_device, &how, sizeof how);
        }
        return fd < 0 ? -errno : fd;
}

static int flush_rt_device(const ExecJob *job) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int excl;

        if (job->rt_flush_device[0] != '/')
                return -ENODEV;
        fd = open_rt_node(job, O_RDONLY);
        if (fd < 0)
                return fd == -EACCES || fd == -EPERM ? fd : -ENODEV;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISBLK(st.st_mode) || st.st_rdev == job->dev)
                return -ENODEV;
        excl = open_rt_node(job, O_RDONLY | O_EXCL);
        if (excl >= 0) {
                safe_close(excl);
                return -ENODEV;
        }
        if (excl != -EBUSY)
                return excl == -EACCES || excl == -EPERM ? excl : -ENODEV;
        return fsync(fd) < 0 ? negative_errno() : 0;
}

/* Whether the overlay's upperdir lies on covered_if_dev (a path of any length, see open_mount()). */
static bool covered(const ExecJob *job) {
        _cleanup_close_ int dir_fd = -EBADF;
        const char *rest;
        struct stat st;

        return path_walk_long(job->covered_if_path, &dir_fd, &rest) >= 0 &&
               fstatat(dir_fd, rest, &st, 0) >= 0 && st.st_dev == job->covered_if_dev;
}

/* Opens job->path for syncfs(). A mount point is a directory; a file bind mount is not: retry
 * without O_DIRECTORY (with O_NONBLOCK so a bind-mounted FIFO cannot block the open). Never O_PATH:
 * syncfs() on an O_PATH fd fails with EBADF. A path longer than PATH_MAX (which the mount table
 * holds as it is) is walked to in pieces first (path_walk_long()); a shorter one is opened with one
 * open(), as always. */
static int open_mount(const ExecJob *job, bool dir_only) {
        _cleanup_close_ int dir_fd = -EBADF;
        const char *rest;
        int fd;

        fd = path_walk_long(job->path, &dir_fd, &rest);
        if (fd < 0)
                return fd;
        fd = openat(dir_fd, rest, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && errno == ENOTDIR && !dir_only)
                fd = openat(dir_fd, rest, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        return fd;
}

/* Whether fd, opened at job->path, is on the planned mount: 1 yes, 0 no, negative errno when
 * unknown. The mountinfo text's ids are handed out lowest free first: a mount unmounted since the
 * table was read and another filesystem mounted at the path may carry the planned mount's id, and its
 * syncfs() would leave the planned superblock unsynced though reported synced (review G, G2). So the
 * id that is never reused where the table gave it (listmount), else the old id and, as the fd holds
 * the mount (its id stays its own), the superblock its line in the namespace's mountinfo names. */
static int mount_is_planned(const ExecJob *job, int fd) {
        struct statx stx;
        dev_t dev;
        int r;

        if (job->mount_id_unique != 0 && statx(fd, "", AT_EMPTY_PATH, SS_STATX_MNT_ID_UNIQUE, &stx) >= 0 &&
            (stx.stx_mask & SS_STATX_MNT_ID_UNIQUE))
                return stx.stx_mnt_id == job->mount_id_unique;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0)
                return negative_errno();
        if (!(stx.stx_mask & STATX_MNT_ID))
                return 1; /* before Linux 5.8: the path is trusted, as by `sync -f` */
        if (stx.stx_mnt_id != (uint64_t) job->mount_id)
                return 0;
        if (job->mountinfo_pid < 0)
                return 1; /* an unlisted path (a process's open file): no table line to compare */
        r = mountinfo_dev_of(job->mountinfo_pid, job->mount_id, &dev);
        if (r <= 0)
                return r; /* no line: detached since we opened it */
        return dev == job->dev;
}

int worker_sync_one(const ExecJob *job, void *userdata) {
        _cleanup_close_ int flush_fd = -EBADF;
        int fd, planned = 1, r = 0;
        bool owner;

        if (job->covered_if_path && covered(job))
                return -EALREADY;

        owner = wants_owner(job);
        fd = owner ? open_as_owner(job, &flush_fd) : open_mount(job, false);
        /* The path must still lead to the mount that was planned: another mount may have been put
         * on top of it, or it may have been unmounted (and another mounted there), since the mount
         * table was read. Unknown: synced all the same (most likely it is the one), but reported as
         * an error, so the superblock counts as not synced (review H, H5). Not it: gone, or reached
         * through another of its mounts (not as a FUSE mount's owner, who already is that user). */
        if (fd >= 0 && job->mount_id > 0) {
                planned = mount_is_planned(job, fd);
                if (planned == 0) {
                        safe_close(fd);
                        fd = not_reached(job, -ESTALE, !owner);
                        planned = 1; /* another mount, checked as the planned one is */
                }
        } else if (fd == -ENOENT)
                fd = not_reached(job, fd, !owner);
        if (fd < 0)
                return fd;

        /* Only now may the worker block on the device the kernel's sync would block on too: an
         * open stuck on a FUSE or NFS server says nothing about that (worker_report_syncing()). */
        (void) worker_report_syncing(job);
        if (syncfs(fd) < 0)
                r = negative_errno();
        if (r >= 0 && job->flush != FS_FLUSH_NONE)
                r = flush_after_syncfs(job, fd, TAKE_FD(flush_fd));
        if (r >= 0 && job->rt_flush_device)
                r = flush_rt_device(job);
        safe_close(fd);
        return r >= 0 && planned < 0 ? planned : r;
}

/* --- the worker process (after fork; no sd-event, no allocation) --- */

/* The worker's fds: 0-2 /dev/null, 3 the report pipe, 4 stats_fd and 5 block_fd (when >= 0; both
 * were opened above 15), nothing else. */
static int worker_setup_fds(int report_fd, int stats_fd, int block_fd) {
        int null_fd, keep = 6;

        if (report_fd != 3) {
                if (dup2(report_fd, 3) < 0)
                        return -errno;
                report_fd = 3;
        }

        /* Do not keep the caller's stdio open: an abandoned worker holding a pipe that somebody
         * reads until EOF would block them until the device wakes up. */
        null_fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (null_fd >= 0) {
                for (int i = 0; i < 3; i++)
                        if (null_fd != i)
                                (void) dup2(null_fd, i);
        } else
                for (int i = 0; i < 3; i++)
                        (void) close(i);

        if (stats_fd < 0 || dup2(stats_fd, 4) < 0)
                (void) close(4);
        if (block_fd < 0 || dup2(block_fd, 5) < 0)
                (void) close(5);
        close_all_fds_from(keep);
        return report_fd;
}

/* openat() onto an fd above 15 (the worker's fds 3-5 are placed by dup2 later); -EBADF on failure. */
static int open_high(int dir_fd, const char *path, int flags) {
        int fd = openat(dir_fd, path, flags), fd2;

        if (fd < 0)
                return -EBADF;
        fd2 = fcntl(fd, F_DUPFD_CLOEXEC, 16);
        safe_close(fd);
        return fd2 >= 0 ? fd2 : -EBADF;
}

/* The bdi stats file of the first job of ours that waits for writeback (writeback.h), opened
 * while the parent's debugfs fd is still ours, on an fd above 15; -EBADF when none. */
static int open_settle_stats(const ExecJob *jobs, const size_t *order, size_t pos, size_t end,
                             const char **ret_bdi) {
        for (; pos < end; pos++) {
                const ExecJob *job = &jobs[order[pos]];
                char path[128];

                if (job->settle == SETTLE_NONE || !job->progress || job->progress->debugfs_fd < 0 ||
                    !job->progress->bdi_name || strchr(job->progress->bdi_name, '/') ||
                    job->progress->bdi_name[0] == '.')
                        continue;
                snprintf(path, sizeof path, "bdi/%s/stats", job->progress->bdi_name);
                *ret_bdi = job->progress->bdi_name;
                return open_high(job->progress->debugfs_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        }
        return -EBADF;
}

/* sysfs dev/block for the leaf disks of our jobs, opened while the parent's sysfs fd is still ours, on
 * an fd above 15; -EBADF when none has leaves. */
static int open_block_dir(const ExecJob *jobs, const size_t *order, size_t pos, size_t end) {
        for (; pos < end; pos++) {
                const ProgressProbe *p = jobs[order[pos]].progress;

                if (!p || p->n_leaves == 0 || p->sysfs_fd < 0)
                        continue;
                return open_high(p->sysfs_fd, "dev/block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        return -EBADF;
}

/* Before syncfs(): the device's writeback drains first (writeback.h), within half the timeout.
 * Returns the time waited. */
static usec_t settle(const ExecJob *job, int stats_fd, const char *stats_bdi, usec_t quiet) {
        SettleWindows w = { .idle = MIN(SETTLE_IDLE_USEC, quiet), .quiet = quiet, .cap = job->timeout / 2 };
        usec_t t0;

        if (job->settle == SETTLE_NONE || stats_fd < 0 || !job->progress ||
            !streq_ptr(job->progress->bdi_name, stats_bdi))
                return 0;
        t0 = now(CLOCK_MONOTONIC);
        (void) settle_wait(stats_fd, job->settle, &w);
        return now(CLOCK_MONOTONIC) - t0;
}

void worker_child_main(const ExecJob *jobs, const size_t *order, size_t pos, size_t end,
                       int (*sync_one)(const ExecJob *job, void *userdata), void *userdata, int report_fd,
                       usec_t settle_quiet) {
        struct sigaction sa = { .sa_handler = SIG_DFL };
        const char *stats_bdi = NULL;
        int stats_fd = open_settle_stats(jobs, order, pos, end, &stats_bdi),
            block_fd = open_block_dir(jobs, order, pos, end);
        sigset_t ss;

        /* Start from a clean signal state: default handlers, nothing blocked. */
        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) sigaction(sig, &sa, NULL);
        sigemptyset(&ss);
        (void) sigprocmask(SIG_SETMASK, &ss, NULL);

        report_fd = worker_setup_fds(report_fd, stats_fd, block_fd);
        if (report_fd < 0)
                _exit(EXIT_FAILURE);
        stats_fd = stats_fd >= 0 ? 4 : -EBADF;
        block_dir_fd = block_fd >= 0 ? 5 : -EBADF;

        for (; pos < end; pos++) {
                size_t i = order[pos];
                usec_t t0 = now(CLOCK_MONOTONIC);
                usec_t waited = settle(&jobs[i], stats_fd, stats_bdi, settle_quiet);
                WorkerReport opening = { .kind = REPORT_OPENING, .index = (uint32_t) i };
                int r;

                if (loop_write(report_fd, &opening, sizeof(opening)) < 0)
                        _exit(EXIT_FAILURE);
                current_job = &jobs[i];
                current_index = (uint32_t) i;
                r = sync_one(&jobs[i], userdata);
                current_job = NULL;

                WorkerReport rep = {
                        .kind = REPORT_DONE,
                        .index = (uint32_t) i,
                        .error = r < 0 ? -r : 0,
                        .duration = now(CLOCK_MONOTONIC) - t0,
                        .started = t0,
                        .waited = waited,
                };

                if (loop_write(report_fd, &rep, sizeof(rep)) < 0)
                        _exit(EXIT_FAILURE);
        }
        _exit(EXIT_SUCCESS);
}
