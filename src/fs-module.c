/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs-module.h"
#include "fs-type.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/proc-util.h"
#include "shared/sort-util.h"
#include "shared/strv.h"

/* proc/filesystems: a line per registered type, well under 4 KiB on any kernel. */
#define FS_MODULE_FILESYSTEMS_MAX (64U * 1024U)

int fs_module_parse_filesystems(const char *text, char ***ret, char ***ret_block) {
        _cleanup_strv_free_ char **v = NULL, **b = NULL;
        size_t n = 0, n_b = 0;

        for (const char *p = text; p && *p;) {
                const char *eol = strchrnul(p, '\n'), *tab = memchr(p, '\t', eol - p);
                char *name;

                if (tab && tab + 1 < eol && memchr(tab + 1, '\t', eol - tab - 1) == NULL &&
                    (tab == p || (tab - p == 5 && strncmp(p, "nodev", 5) == 0))) {
                        name = strndup(tab + 1, eol - tab - 1);
                        if (!name || strv_consume(&v, &n, name) < 0)
                                return -ENOMEM;
                        if (tab == p && ret_block && strv_extend(&b, &n_b, v[n - 1]) < 0)
                                return -ENOMEM;
                }
                p = *eol ? eol + 1 : eol;
        }
        if ((!v && !(v = calloc(1, sizeof(char *)))) || (ret_block && !b && !(b = calloc(1, sizeof(char *)))))
                return -ENOMEM;
        *ret = TAKE_PTR(v);
        if (ret_block)
                *ret_block = TAKE_PTR(b);
        return 0;
}

int fs_module_reason(const char *m, int64_t refcnt, size_t seen, Reasons *why) {
        if (refcnt == -ENOENT)
                return reasons_add(
                               why,
                               "filesystem type or module '%s' is registered but its superblocks cannot be "
                               "counted (built into the kernel, or modules cannot be unloaded), so one no "
                               "mount table shows (unmounted lazily while a file is held) cannot be "
                               "ruled out",
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

/* A registered type that is counted, and the module serving it here. */
typedef struct Served {
        const char *type; /* borrowed from the registered list */
        char module[64];  /* "" when none: built in, or listed (then skipped) */
} Served;

typedef struct DevOf {
        size_t module; /* index of the first Served with that module */
        dev_t dev;
} DevOf;

static int cmp_dev_of(const DevOf *a, const DevOf *b) {
        if (a->module != b->module)
                return a->module < b->module ? -1 : 1;
        return a->dev < b->dev ? -1 : a->dev > b->dev;
}

/* The first Served index with s[k]'s module. */
static size_t module_index(const Served *s, size_t k) {
        for (size_t j = 0; j < k; j++)
                if (streq(s[j].module, s[k].module))
                        return j;
        return k;
}

/* The distinct devices of the superblocks in t and h of each module's types, one pass over them:
 * seen[module_index()] (seen has n_served entries, zeroed by the caller). */
static int count_seen(const Served *served, size_t n_served, const MountTable *t, const HiddenSet *h,
                      size_t *seen) {
        _cleanup_free_ DevOf *d = calloc(t->n_entries + h->n + 1, sizeof(DevOf));
        size_t n = 0;

        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_entries + h->n; i++) {
                const char *fstype = i < t->n_entries ? t->entries[i].fstype : h->v[i - t->n_entries].fstype;

                for (size_t k = 0; k < n_served; k++)
                        if (streq_ptr(fstype, served[k].type)) {
                                d[n++] = (DevOf) { module_index(served, k),
                                                   i < t->n_entries ? t->entries[i].dev
                                                                    : h->v[i - t->n_entries].dev };
                                break;
                        }
        }
        typesafe_qsort(d, n, cmp_dev_of);
        for (size_t i = 0; i < n; i++)
                if (i == 0 || cmp_dev_of(&d[i], &d[i - 1]) != 0)
                        seen[d[i].module]++;
        return 0;
}

/* The first of the candidates ("a|b") that sysfs lists under module/, into buf ("" when none is);
 * a look that fails otherwise than with ENOENT: that errno. */
static int resolve_module(int sysfs_fd, const char *candidates, char *buf, size_t size) {
        const char *p = candidates;

        buf[0] = 0;
        if (sysfs_fd < 0)
                return -EBADF;
        while (p && *p) {
                size_t len = strcspn(p, "|");
                char path[128];

                snprintf(path, sizeof path, "module/%.*s", (int) len, p);
                if (faccessat(sysfs_fd, path, F_OK, 0) >= 0) {
                        snprintf(buf, size, "%.*s", (int) len, p);
                        return 0;
                }
                if (errno != ENOENT)
                        return negative_errno();
                p += len + (p[len] == '|');
        }
        return 0;
}

/* Whether registered (in proc/filesystems order) lists type right before next. */
static bool registered_before(char *const *registered, const char *type, const char *next) {
        for (size_t i = 0; registered[i]; i++)
                if (streq(registered[i], type))
                        return registered[i + 1] && streq(registered[i + 1], next);
        return false;
}

static int read_registered(int proc_fd, char ***ret, char ***ret_block, Reasons *why) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_file_at(proc_fd, "filesystems", FS_MODULE_FILESYSTEMS_MAX, &text, NULL);
        /* A fixture root has none; a real procfs without it (subset=pid) cannot tell. */
        if (r == -ENOENT && proc_fd_is_procfs(proc_fd) == 0)
                return 0;
        if (r < 0)
                return reasons_add(
                               why,
                               "the kernel's list of filesystem types could not be read (%s): superblocks "
                               "of types no listing shows were not counted",
                               strerror(-r)) < 0
                               ? -ENOMEM
                               : 0;
        r = fs_module_parse_filesystems(text, ret, ret_block);
        return r < 0 ? r : 1;
}

/* Which module serves registered type, into s (s->module "" when none); 1 to count it, 0 when it
 * needs no count (listed, or read-only), or a reason added (-ENOMEM, else 0 after the reason). */
static int serve(int sysfs_fd, char *const *registered, const char *type, bool block, Served *s,
                 Reasons *why) {
        const FsType *row = fs_type_lookup(type);
        int r;

        *s = (Served) { .type = type };
        /* rows name their module; a block type without a row is counted by its name */
        if (!row->module && (!block || row->uncounted || row->sysfs_lists))
                return 0;
        r = resolve_module(sysfs_fd, row->module ?: type, s->module, sizeof s->module);
        if (r >= 0 && !s->module[0] && row->served_before &&
            registered_before(registered, type, row->served_before)) {
                /* registered by the driver of served_before right before its own type (ext2 by ext4,
                 * "ntfs" by ntfs3): listed with it, or counted by its module */
                const FsType *by = fs_type_lookup(row->served_before);

                if (by->sysfs_lists)
                        return 0;
                r = resolve_module(sysfs_fd, by->module ?: row->served_before, s->module, sizeof s->module);
        }
        if (r < 0 || !s->module[0])
                return fs_module_reason(type, r < 0 ? r : -ENOENT, 0, why) < 0 ? -ENOMEM : 0;
        return 1;
}

struct FsModuleCounts {
        char **registered, **block;
        Served *served;
        size_t n_served;
        int64_t *before; /* refcnt read by fs_module_begin(), per Served (negative errno: not read) */
};

FsModuleCounts *fs_module_counts_free(FsModuleCounts *c) {
        if (!c)
                return NULL;
        strv_free(c->registered);
        strv_free(c->block);
        free(c->served);
        free(c->before);
        free(c);
        return NULL;
}

static int64_t read_refcnt(int sysfs_fd, const char *m) {
        char path[128];
        uint64_t v;
        int r;

        snprintf(path, sizeof path, "module/%s/refcnt", m);
        r = read_u64_file_at(sysfs_fd, path, &v);
        if (r >= 0 && v > INT64_MAX)
                r = -ERANGE;
        return r < 0 ? r : (int64_t) v;
}

int fs_module_begin(int proc_fd, int sysfs_fd, FsModuleCounts **ret, Reasons *why) {
        _cleanup_(fs_module_counts_freep) FsModuleCounts *c = NULL;
        size_t n;
        int r;

        *ret = NULL;
        /* No procfs: sample-ns.c and the mount table's read say so first. */
        if (proc_fd < 0)
                return 0;
        c = calloc(1, sizeof(FsModuleCounts));
        if (!c)
                return -ENOMEM;
        r = read_registered(proc_fd, &c->registered, &c->block, why);
        if (r <= 0)
                return r;
        n = strv_length(c->registered);
        c->served = calloc(n + 1, sizeof(Served));
        c->before = calloc(n + 1, sizeof(int64_t));
        if (!c->served || !c->before)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = serve(sysfs_fd, c->registered, c->registered[i],
                          strv_contains(c->block, c->registered[i]), &c->served[c->n_served], why);
                if (r < 0)
                        return r;
                if (r > 0) {
                        /* once per module: its first type */
                        if (module_index(c->served, c->n_served) == c->n_served)
                                c->before[c->n_served] = read_refcnt(sysfs_fd, c->served[c->n_served].module);
                        c->n_served++;
                }
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int fs_module_end(FsModuleCounts *c, int sysfs_fd, const MountTable *t, const HiddenSet *h, Reasons *why) {
        _cleanup_free_ size_t *seen = NULL;
        int r;

        if (!c || c->n_served == 0)
                return 0;
        seen = calloc(c->n_served, sizeof(size_t));
        if (!seen)
                return -ENOMEM;
        r = count_seen(c->served, c->n_served, t, h, seen);
        if (r < 0)
                return r;
        for (size_t k = 0; k < c->n_served; k++) {
                int64_t after;

                if (module_index(c->served, k) != k)
                        continue;
                /* Read before and after the tables: a mount made or undone meanwhile cannot hide a
                 * hidden superblock from both (a module directory without refcnt: built in with
                 * parameters, or no unloading). */
                after = read_refcnt(sysfs_fd, c->served[k].module);
                r = fs_module_reason(c->served[k].module,
                                     c->before[k] < 0 ? c->before[k]
                                     : after < 0      ? after
                                                      : MAX(after, c->before[k]),
                                     seen[k], why);
                if (r < 0)
                        return r;
        }
        return 0;
}

int fs_module_check(int proc_fd, int sysfs_fd, const MountTable *t, const HiddenSet *h, Reasons *why) {
        _cleanup_(fs_module_counts_freep) FsModuleCounts *c = NULL;
        int r;

        r = fs_module_begin(proc_fd, sysfs_fd, &c, why);
        return r < 0 ? r : fs_module_end(c, sysfs_fd, t, h, why);
}
