/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "conf-files.h"
#include "fileio.h"
#include "macro.h"
#include "sort-util.h"
#include "strv.h"

typedef struct Candidate {
        char *name;
        size_t prio; /* index into dirs: lower wins */
        bool masked; /* symlink to /dev/null (or /dev/null itself) */
} Candidate;

typedef struct Candidates {
        Candidate *c;
        size_t n;
        bool truncated;
} Candidates;

static void candidates_done(Candidates *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->c[i].name);
        free(c->c);
}

static int candidate_cmp(const Candidate *x, const Candidate *y) {
        int c = strcmp(x->name, y->name);

        return c != 0 ? c : CMP(x->prio, y->prio);
}

static bool is_dev_null(int dfd, const char *name, const struct dirent *de) {
        char target[16];
        struct stat st;
        ssize_t n;

        if (de->d_type == DT_LNK || de->d_type == DT_UNKNOWN) {
                n = readlinkat(dfd, name, target, sizeof(target) - 1);
                if (n >= 0) {
                        target[n] = 0;
                        if (streq(target, "/dev/null"))
                                return true;
                }
        }
        return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISCHR(st.st_mode) &&
               major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
}

static int candidates_add(Candidates *c, const char *name, size_t prio, bool masked) {
        Candidate *t;
        char *n;

        if (c->n >= CONF_FILES_MAX_CANDIDATES) {
                c->truncated = true;
                return 0;
        }
        n = strdup(name);
        if (!n)
                return -ENOMEM;
        t = reallocarray(c->c, c->n + 1, sizeof(Candidate));
        if (!t) {
                free(n);
                return -ENOMEM;
        }
        c->c = t;
        c->c[c->n++] = (Candidate) { .name = n, .prio = prio, .masked = masked };
        return 1;
}

/* A symlink is followed to another place, maybe another filesystem (which may hang): named on its
 * own. Entries of the directory itself are covered by the directory's name. */
static void entry_progress(const char *dir, const struct dirent *de, ConfFilesProgress progress,
                           void *userdata) {
        _cleanup_free_ char *path = NULL;

        if (progress && (de->d_type == DT_LNK || de->d_type == DT_UNKNOWN) &&
            asprintf(&path, "%s/%s", dir, de->d_name) >= 0)
                progress(path, userdata);
}

/* Gathers the "*.conf" entries of one drop-in directory. */
static int gather_dropins(int root_fd, const char *dir, size_t prio, ConfFilesProgress progress,
                          void *userdata, Candidates *c) {
        _cleanup_closedir_ DIR *d = NULL;
        int r = opendir_at(root_fd, dir, &d);

        if (r == -ENOENT || r == -ENOTDIR)
                return 0; /* no directory: nothing there */
        if (r < 0)
                return r; /* there but unreadable: its drop-ins are not known */

        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                size_t len = strlen(de->d_name);
                struct stat st;
                bool masked;

                if (de->d_name[0] == '.' || len <= 5 || !streq(de->d_name + len - 5, ".conf"))
                        continue;
                entry_progress(dir, de, progress, userdata);
                masked = is_dev_null(dirfd(d), de->d_name, de);
                if (!masked && (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode)))
                        continue;
                r = candidates_add(c, de->d_name, prio, masked);
                if (r <= 0)
                        return r;
        }
        return errno > 0 ? -errno : 0; /* a read error part way: not all of it */
}

/* Appends the first DIR/NAME that exists. */
static int find_main(int root_fd, const char *const *dirs, const char *name, ConfFilesProgress progress,
                     void *userdata, char ***l, size_t *n) {
        for (const char *const *d = dirs; *d; d++) {
                _cleanup_free_ char *path = NULL;
                struct stat st;

                if (asprintf(&path, "%s/%s", *d, name) < 0)
                        return -ENOMEM;
                if (progress)
                        progress(path, userdata);
                if (fstatat(root_fd, skip_root_prefix(path), &st, 0) >= 0)
                        return strv_consume(l, n, TAKE_PTR(path));
        }
        return 0;
}

int conf_files_list(int root_fd, const char *const *dirs, const char *name, size_t max_files,
                    ConfFilesProgress progress, void *userdata, char ***ret, bool *ret_truncated) {
        _cleanup_(candidates_done) Candidates c = {};
        _cleanup_strv_free_ char **l = NULL;
        size_t n_files = 0;
        int r;

        r = find_main(root_fd, dirs, name, progress, userdata, &l, &n_files);
        if (r < 0)
                return r;

        for (size_t i = 0; dirs[i]; i++) {
                _cleanup_free_ char *dir = NULL;

                if (asprintf(&dir, "%s/%s.d", dirs[i], name) < 0)
                        return -ENOMEM;
                if (progress)
                        progress(dir, userdata);
                r = gather_dropins(root_fd, dir, i, progress, userdata, &c);
                if (r < 0)
                        return r;
        }

        typesafe_qsort(c.c, c.n, candidate_cmp);
        for (size_t i = 0; i < c.n; i++) {
                char *path;

                if (i > 0 && streq(c.c[i].name, c.c[i - 1].name))
                        continue; /* hidden by the same name in an earlier directory */
                if (c.c[i].masked)
                        continue;
                if (n_files >= max_files) {
                        c.truncated = true;
                        break;
                }
                if (asprintf(&path, "%s/%s.d/%s", dirs[c.c[i].prio], name, c.c[i].name) < 0)
                        path = NULL;
                r = strv_consume(&l, &n_files, path); /* NULL: -ENOMEM */
                if (r < 0)
                        return r;
        }

        if (!l) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        if (ret_truncated)
                *ret_truncated = c.truncated;
        return 0;
}
