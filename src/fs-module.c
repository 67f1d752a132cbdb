/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "fs-module.h"
#include "fs-type.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/sort-util.h"
#include "shared/strv.h"

/* proc/filesystems: a line per registered type, well under 4 KiB on any kernel. */
#define FS_MODULE_FILESYSTEMS_MAX (64U * 1024U)

int fs_module_parse_filesystems(const char *text, char ***ret) {
        _cleanup_strv_free_ char **v = NULL;
        size_t n = 0;

        for (const char *p = text; p && *p;) {
                const char *eol = strchrnul(p, '\n'), *tab = memchr(p, '\t', eol - p);
                char *name;

                if (tab && tab + 1 < eol && memchr(tab + 1, '\t', eol - tab - 1) == NULL &&
                    (tab == p || (tab - p == 5 && strncmp(p, "nodev", 5) == 0))) {
                        name = strndup(tab + 1, eol - tab - 1);
                        if (!name || strv_consume(&v, &n, name) < 0)
                                return -ENOMEM;
                }
                p = *eol ? eol + 1 : eol;
        }
        if (!v) {
                v = calloc(1, sizeof(char *));
                if (!v)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

int fs_module_reason(const char *m, int64_t refcnt, size_t seen, Reasons *why) {
        if (refcnt == -ENOENT)
                return reasons_add(
                               why,
                               "filesystem type or module '%s' is registered but its superblocks cannot be "
                               "counted (built into the kernel, or modules cannot be unloaded), so one no "
                               "mount table shows (unmounted lazily while a file is held) cannot be ruled out",
                               m) < 0
                               ? -ENOMEM
                               : 0;
        if (refcnt < 0)
                return reasons_add(why,
                                   "the references to module '%s' could not be read (%s): its superblocks "
                                   "were not counted",
                                   m, strerror((int) -refcnt)) < 0
                               ? -ENOMEM
                               : 0;
        if ((uint64_t) refcnt <= seen)
                return 0;
        return reasons_add(why,
                           "module '%s' holds %" PRIi64
                           " reference(s), and the mount tables show %zu superblock(s) "
                           "of its types: the others (unmounted lazily while a file is held, or being "
                           "mounted) were not compared",
                           m, refcnt, seen) < 0
                       ? -ENOMEM
                       : 0;
}

static int cmp_dev(const dev_t *a, const dev_t *b) {
        return *a < *b ? -1 : *a > *b;
}

/* A registered type of a counted row and the module that serves it here. */
typedef struct Served {
        const FsType *row;
        char module[64]; /* "" when no candidate is loaded (built in, or served by a listed driver) */
} Served;

/* Distinct devices of the superblocks in t and h whose type is one of served[] with module m. */
static int count_seen(const char *m, const Served *served, size_t n_served, const MountTable *t,
                      const HiddenSet *h, size_t *ret) {
        _cleanup_free_ dev_t *devs = calloc(t->n_entries + h->n + 1, sizeof(dev_t));
        size_t n = 0, distinct = 0;

        if (!devs)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_entries + h->n; i++) {
                const char *fstype = i < t->n_entries ? t->entries[i].fstype : h->v[i - t->n_entries].fstype;
                const FsType *row = fs_type_lookup(fstype);

                for (size_t k = 0; k < n_served; k++)
                        if (served[k].row == row && streq(served[k].module, m)) {
                                devs[n++] = i < t->n_entries ? t->entries[i].dev : h->v[i - t->n_entries].dev;
                                break;
                        }
        }
        typesafe_qsort(devs, n, cmp_dev);
        for (size_t i = 0; i < n; i++)
                if (i == 0 || devs[i] != devs[i - 1])
                        distinct++;
        *ret = distinct;
        return 0;
}

/* The first of row's candidate modules ("a|b") that sysfs lists under module/, into buf; "" when
 * none is. */
static void resolve_module(int sysfs_fd, const FsType *row, char *buf, size_t size) {
        const char *p = row->module;

        buf[0] = 0;
        while (p && *p) {
                size_t len = strcspn(p, "|");
                char path[128];

                snprintf(path, sizeof path, "module/%.*s", (int) len, p);
                if (sysfs_fd >= 0 && faccessat(sysfs_fd, path, F_OK, 0) >= 0) {
                        snprintf(buf, size, "%.*s", (int) len, p);
                        return;
                }
                p += len + (p[len] == '|');
        }
}

/* Whether registered (in proc/filesystems order) shows row's type right between the two names of
 * row->listed_between ("A|B"). */
static bool listed_between(const FsType *row, char *const *registered) {
        size_t n = strv_length(registered), len;
        const char *bar;

        if (!row->listed_between || !(bar = strchr(row->listed_between, '|')))
                return false;
        len = (size_t) (bar - row->listed_between);
        for (size_t i = 1; i + 1 < n; i++)
                if (streq(registered[i], row->name))
                        return strlen(registered[i - 1]) == len &&
                               strncmp(registered[i - 1], row->listed_between, len) == 0 &&
                               streq(registered[i + 1], bar + 1);
        return false;
}

static int read_registered(int proc_fd, char ***ret, Reasons *why) {
        _cleanup_free_ char *text = NULL;
        struct statfs sfs;
        int r;

        r = read_full_file_at(proc_fd, "filesystems", FS_MODULE_FILESYSTEMS_MAX, &text, NULL);
        /* A fixture root has none; a real procfs without it (subset=pid) cannot tell. */
        if (r == -ENOENT && (fstatfs(proc_fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC))
                return 0;
        if (r < 0)
                return reasons_add(
                               why,
                               "the kernel's list of filesystem types could not be read (%s): superblocks "
                               "of types no listing shows were not counted",
                               strerror(-r)) < 0
                               ? -ENOMEM
                               : 0;
        r = fs_module_parse_filesystems(text, ret);
        return r < 0 ? r : 1;
}

int fs_module_check(int proc_fd, int sysfs_fd, const MountTable *t, const HiddenSet *h, Reasons *why) {
        _cleanup_strv_free_ char **registered = NULL;
        _cleanup_free_ Served *served = NULL;
        size_t n_rows, n_served = 0;
        const FsType *rows;
        int r;

        if (proc_fd < 0)
                return 0;
        r = read_registered(proc_fd, &registered, why);
        if (r <= 0)
                return r;
        rows = fs_type_table(&n_rows);
        served = calloc(n_rows, sizeof(Served));
        if (!served)
                return -ENOMEM;
        for (size_t k = 0; k < n_rows; k++)
                if (rows[k].module && strv_contains(registered, rows[k].name)) {
                        served[n_served].row = &rows[k];
                        resolve_module(sysfs_fd, &rows[k], served[n_served].module,
                                       sizeof served[n_served].module);
                        n_served++;
                }

        for (size_t k = 0; k < n_served; k++) {
                const char *m = served[k].module;
                bool done = false;
                char path[128];
                uint64_t refcnt;
                size_t seen;

                if (!m[0]) {
                        /* ext2 with no module of its own: ext4's (listed in sysfs) when registered
                         * between ext3 and ext4; else fs/ext2 built in, not countable. */
                        if (listed_between(served[k].row, registered))
                                continue;
                        r = fs_module_reason(served[k].row->name, -ENOENT, 0, why);
                        if (r < 0)
                                return r;
                        continue;
                }
                for (size_t j = 0; j < k && !done; j++)
                        done = streq(served[j].module, m);
                if (done)
                        continue;
                r = count_seen(m, served, n_served, t, h, &seen);
                if (r < 0)
                        return r;
                snprintf(path, sizeof path, "module/%s/refcnt", m);
                r = sysfs_fd < 0 ? -EBADF : read_u64_file_at(sysfs_fd, path, &refcnt);
                if (r >= 0 && refcnt > INT64_MAX)
                        r = -ERANGE;
                /* a module directory without refcnt: built in with parameters, or no unloading */
                r = fs_module_reason(m, r < 0 ? r : (int64_t) refcnt, seen, why);
                if (r < 0)
                        return r;
        }
        return 0;
}
