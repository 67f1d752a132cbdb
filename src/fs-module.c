/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                return reasons_add(why,
                                   "filesystem type '%s' is registered and built into the kernel: its "
                                   "superblocks cannot be counted, so one no mount table shows (unmounted "
                                   "lazily while a file is held) cannot be ruled out",
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

/* Distinct devices of the superblocks of module m's types in t and h. */
static int count_seen(const char *m, const MountTable *t, const HiddenSet *h, size_t *ret) {
        _cleanup_free_ dev_t *devs = calloc(t->n_entries + h->n + 1, sizeof(dev_t));
        size_t n = 0, distinct = 0;

        if (!devs)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_entries; i++)
                if (streq_ptr(fs_type_lookup(t->entries[i].fstype)->module, m))
                        devs[n++] = t->entries[i].dev;
        for (size_t i = 0; i < h->n; i++)
                if (streq_ptr(fs_type_lookup(h->v[i].fstype)->module, m))
                        devs[n++] = h->v[i].dev;
        typesafe_qsort(devs, n, cmp_dev);
        for (size_t i = 0; i < n; i++)
                if (i == 0 || devs[i] != devs[i - 1])
                        distinct++;
        *ret = distinct;
        return 0;
}

/* Whether module m was checked already: an earlier registered type of the same module. */
static bool module_done(const FsType *rows, size_t k, char *const *registered) {
        for (size_t j = 0; j < k; j++)
                if (rows[j].module && streq(rows[j].module, rows[k].module) &&
                    strv_contains(registered, rows[j].name))
                        return true;
        return false;
}

int fs_module_check(int proc_fd, int sysfs_fd, const MountTable *t, const HiddenSet *h, Reasons *why) {
        _cleanup_strv_free_ char **registered = NULL;
        _cleanup_free_ char *text = NULL;
        const FsType *rows;
        size_t n_rows;
        int r;

        if (proc_fd < 0)
                return 0;
        r = read_full_file_at(proc_fd, "filesystems", FS_MODULE_FILESYSTEMS_MAX, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return reasons_add(
                               why,
                               "the kernel's list of filesystem types could not be read (%s): superblocks "
                               "of types no listing shows were not counted",
                               strerror(-r)) < 0
                               ? -ENOMEM
                               : 0;
        r = fs_module_parse_filesystems(text, &registered);
        if (r < 0)
                return r;

        rows = fs_type_table(&n_rows);
        for (size_t k = 0; k < n_rows; k++) {
                char path[128];
                uint64_t refcnt;
                size_t seen;

                if (!rows[k].module || !strv_contains(registered, rows[k].name) ||
                    module_done(rows, k, registered))
                        continue;
                r = count_seen(rows[k].module, t, h, &seen);
                if (r < 0)
                        return r;
                snprintf(path, sizeof path, "module/%s/refcnt", rows[k].module);
                r = sysfs_fd < 0 ? -EBADF : read_u64_file_at(sysfs_fd, path, &refcnt);
                if (r >= 0 && refcnt > INT64_MAX)
                        r = -ERANGE;
                r = fs_module_reason(rows[k].module, r < 0 ? r : (int64_t) refcnt, seen, why);
                if (r < 0)
                        return r;
        }
        return 0;
}
