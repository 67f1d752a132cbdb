/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdi-stats.h"
#include "evidence.h"
#include "fs-type.h"
#include "shared/bounded-child.h"
#include "shared/fileio.h"
#include "shared/macro.h"

bool evidence_bdi_lists_empty(const BdiStats *bdi, int bdi_r, const char **ret_why) {
        static const BdiStatKey lists[] = {
                BDI_STAT_B_DIRTY,
                BDI_STAT_B_IO,
                BDI_STAT_B_MORE_IO,
                BDI_STAT_B_DIRTY_TIME,
        };
        const char *why = NULL;

        if (bdi_r < 0 || !bdi)
                why = "no writeback lists for its bdi (debugfs)";
        else
                for (size_t i = 0; i < ELEMENTSOF(lists) && !why; i++) {
                        if (!bdi_stats_has(bdi, lists[i]))
                                why = "its bdi's writeback lists are not all shown (debugfs layout)";
                        else if (bdi->value[lists[i]] != 0)
                                why = "its bdi lists dirty inodes";
                }
        if (ret_why)
                *ret_why = why;
        return !why;
}

bool evidence_fuse_kernel_checked(const char *osrelease) {
        unsigned major, minor;
        int n = 0;

        if (!osrelease || sscanf(osrelease, "%u.%u%n", &major, &minor, &n) != 2 || n == 0)
                return false;
        return major < EVIDENCE_FUSE_KERNEL_MAJOR ||
               (major == EVIDENCE_FUSE_KERNEL_MAJOR && minor <= EVIDENCE_FUSE_KERNEL_MINOR);
}

bool evidence_writeback_pending(const Meminfo *global) {
        return global->writeback_bytes != 0 ||
               (global->has_writeback_tmp && global->writeback_tmp_bytes != 0);
}

int evidence_writeback_idle(int r, const Meminfo *global) {
        return r < 0 ? r : global->has_writeback && !evidence_writeback_pending(global);
}

bool evidence_writeback_may_be_done(const Meminfo *unrefreshed, uint64_t drift_bytes) {
        return !unrefreshed->has_writeback ||
               (unrefreshed->writeback_bytes <= drift_bytes &&
                (!unrefreshed->has_writeback_tmp || unrefreshed->writeback_tmp_bytes <= drift_bytes));
}

bool evidence_fuse_clean(const BdiStats *bdi, int bdi_r, const Meminfo *global, int global_r,
                         const char **ret_why) {
        const char *why = NULL;

        if (evidence_bdi_lists_empty(bdi, bdi_r, &why)) {
                if (global_r < 0 || !global || !global->has_writeback)
                        why = "the system's writeback count could not be read exactly";
                else if (evidence_writeback_pending(global))
                        why = "pages are under writeback";
        }
        if (ret_why)
                *ret_why = why;
        return !why;
}

static int load_global_here(int root_fd, Meminfo *ret) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(root_fd, "proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (write(fd, "1", 1) != 1)
                return errno > 0 ? -errno : -EIO;
        return meminfo_load(root_fd, ret);
}

/* The child's answer: the load's result, then what it read. */
typedef struct GlobalAnswer {
        int32_t r;
        Meminfo m;
} GlobalAnswer;

static int global_child(int pipe_fd, int root_fd, void *userdata) {
        GlobalAnswer a = {};

        a.r = load_global_here(root_fd, &a.m);
        return write(pipe_fd, &a, sizeof a) == (ssize_t) sizeof a ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int global_feed(const char *buf, size_t size, void *userdata) {
        if (size < sizeof(GlobalAnswer))
                return 0;
        memcpy(userdata, buf, sizeof(GlobalAnswer));
        return 1;
}

static int global_answer(int r, const GlobalAnswer *a, Meminfo *ret) {
        if (r < 0)
                return r;
        if (r == 0)
                return -EIO; /* the child died without an answer */
        if (a->r < 0)
                return a->r;
        *ret = a->m;
        return 0;
}

int evidence_load_global(int root_fd, usec_t timeout, Meminfo *ret) {
        GlobalAnswer a = {};

        if (timeout == 0)
                return -ETIMEDOUT;
        return global_answer(bounded_child_run(root_fd, timeout, sizeof a, global_child, global_feed, &a), &a,
                             ret);
}

int evidence_global_prepare(int root_fd, BoundedChild *ret) {
        return bounded_child_prepare(root_fd, sizeof(GlobalAnswer), NULL, global_child, NULL, ret);
}

int evidence_global_load_prepared(BoundedChild *c, usec_t timeout, Meminfo *ret) {
        GlobalAnswer a = {};
        int r;

        if (timeout == 0) {
                bounded_child_cancel(c);
                return -ETIMEDOUT;
        }
        r = bounded_child_go(c, timeout);
        if (r < 0)
                return -ESTALE;
        return global_answer(bounded_child_finish(c, global_feed, &a), &a, ret);
}

static bool name_in(const char *name, const char *const *names, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (names[i] && streq(names[i], name))
                        return true;
        return false;
}

/* Reads the words of <sysfs_fd>/fs/cgroup[/unified]/NAME (the cgroup v2 root) into *ret_io and
 * *ret_memory. 0, -ENOENT when there is no v2 root where it is looked for, another negative errno. */
static int cgroup_root_has(int sysfs_fd, const char *name, bool *ret_io, bool *ret_memory) {
        static const char *const dirs[] = { "fs/cgroup", "fs/cgroup/unified" };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *text = NULL;
                char path[64], *w, *save = NULL;
                int r;

                snprintf(path, sizeof path, "%s/%s", dirs[i], name);
                r = read_full_file_at(sysfs_fd, path, 4096, &text, NULL);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                *ret_io = *ret_memory = false;
                for (w = strtok_r(text, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
                        *ret_io = *ret_io || streq(w, "io");
                        *ret_memory = *ret_memory || streq(w, "memory");
                }
                return 0;
        }
        return -ENOENT;
}

/* Whether an inode of a block device may be written back through another writeback context than
 * the root's (cgroup writeback, inode_cgwb_enabled()): it needs the io and memory controllers on
 * cgroup v2 (the root's cgroup.controllers), and a context of its own exists per memory cgroup
 * (wb_get_create_current()), so below the root only when memory is enabled for the root's children
 * (its cgroup.subtree_control; io need not be). True unless those files are read and rule it out. */
static bool cgroup_writeback_possible(int sysfs_fd) {
        bool io, memory;

        if (sysfs_fd < 0)
                return true;
        /* Only a cgroup below the root has cgroup.type: fs/cgroup is then a cgroup namespace's root
         * (a container), whose files say nothing of the rest of the machine. */
        if (faccessat(sysfs_fd, "fs/cgroup/cgroup.type", F_OK, 0) >= 0 ||
            faccessat(sysfs_fd, "fs/cgroup/unified/cgroup.type", F_OK, 0) >= 0)
                return true;
        if (cgroup_root_has(sysfs_fd, "cgroup.controllers", &io, &memory) < 0)
                return true; /* no cgroup v2 root where it is looked for: it may be elsewhere */
        if (!io || !memory)
                return false; /* bound to cgroup v1: no cgroup writeback */
        if (cgroup_root_has(sysfs_fd, "cgroup.subtree_control", &io, &memory) < 0)
                return true;
        return memory;
}

int evidence_bdi_empty(int debugfs_fd, int sysfs_fd, const char *name, int *cgwb, const char **ret_why) {
        char path[PATH_MAX];
        const char *why = NULL;
        BdiStats s = {};
        int r;

        r = bdi_stats_load(debugfs_fd, name, &s);
        if (r == -ENOENT || r == -ENOMEM)
                return r;
        if (evidence_bdi_lists_empty(&s, r, &why)) {
                /* Before Linux 6.10 (no bdi/<name>/wb_stats) the lists are the root cgroup's only. */
                snprintf(path, sizeof path, "bdi/%s/wb_stats", name);
                if (faccessat(debugfs_fd, path, F_OK, 0) >= 0)
                        return 1;
                if (*cgwb < 0)
                        *cgwb = cgroup_writeback_possible(sysfs_fd);
                if (!*cgwb)
                        return 1;
                why = "its bdi shows the root cgroup's writeback lists only (Linux before 6.10), "
                      "and cgroup writeback may hold others (the memory controller on cgroup v2)";
        }
        if (ret_why)
                *ret_why = why;
        return 0;
}

/* The sample's superblocks of filesystem type. */
static size_t types_count(const char *const *types, size_t n_types, const char *type) {
        size_t n = 0;

        for (size_t i = 0; i < n_types; i++)
                n += fstype_is(types[i], type);
        return n;
}

static int unexplained(const char *name, const char *why, char **ret_name, const char **ret_why) {
        if (ret_name && !(*ret_name = strdup(name)))
                return -ENOMEM;
        if (ret_why)
                *ret_why = why;
        return 1;
}

int evidence_unexplained_dirty(int debugfs_fd, int sysfs_fd, const char *const *known, size_t n_known,
                               const char *const *types, size_t n_types, char **ret_name,
                               const char **ret_why) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ BdiTypeCounts *by_type = calloc(1, sizeof(BdiTypeCounts));
        struct dirent *de;
        size_t n = 0;
        int cgwb = -1, r;

        if (debugfs_fd < 0)
                return -EBADF;
        if (!by_type)
                return -ENOMEM;
        r = opendir_at(debugfs_fd, "bdi", &d);
        if (r < 0)
                return r;
        while ((errno = 0, de = readdir(d))) {
                char type[BDI_TYPE_MAX];
                const char *why = NULL;
                BdiNameKind kind;
                dev_t dev;

                if (de->d_name[0] == '.')
                        continue;
                if (++n > EVIDENCE_BDIS_MAX)
                        return -E2BIG;
                kind = bdi_name_kind(de->d_name, &dev, type);
                /* mtd-0: the MTD core's own bdi (mtd_bdi_init()), no superblock's of a type "mtd";
                 * not counted, but its lists still checked below (jffs2 writes back through it) */
                /* every one counted, known or not */
                if (kind == BDI_NAME_TYPE && !streq(type, "mtd") &&
                    bdi_type_counts_add(by_type, type, de->d_name) < 0)
                        return unexplained(de->d_name,
                                           "bdis are named after more filesystem types than are compared "
                                           "with the sample's",
                                           ret_name, ret_why);
                if (name_in(de->d_name, known, n_known))
                        continue;
                if (kind == BDI_NAME_OTHER)
                        return unexplained(de->d_name,
                                           "its name gives neither a device nor a filesystem type, so no "
                                           "superblock of the sample accounts for it",
                                           ret_name, ret_why);
                r = evidence_bdi_empty(debugfs_fd, sysfs_fd, de->d_name, &cgwb, &why);
                if (r == -ENOENT || r > 0) /* gone since the listing: nothing left on it */
                        continue;
                if (r < 0)
                        return r;
                return unexplained(de->d_name, why, ret_name, ret_why);
        }
        if (errno > 0)
                return -errno;
        for (size_t i = 0; i < by_type->n; i++)
                if (by_type->v[i].n > types_count(types, n_types, by_type->v[i].type))
                        return unexplained(
                                by_type->v[i].name,
                                "bdis named after its filesystem type outnumber the sample's "
                                "superblocks of it: one no mount table shows, whose dirty data need "
                                "not be on the writeback lists (ZFS keeps it in its transaction "
                                "group)",
                                ret_name, ret_why);
        return 0;
}
