/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf-files.h"
#include "fileio.h"
#include "macro.h"
#include "sort-util.h"
#include "string-util.h"
#include "strv.h"

typedef struct Candidate {
        char *name;
        size_t prio;   /* index into dirs: lower wins */
        bool masked;   /* symlink to /dev/null (or /dev/null itself) */
        bool dangling; /* symlink to nothing: hides nothing, named in a notice */
} Candidate;

typedef struct Candidates {
        Candidate *c;
        size_t n;
        bool truncated;
        char *truncated_dir; /* the directory whose entries past the limit were not looked at */
} Candidates;

static void candidates_done(Candidates *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->c[i].name);
        free(c->c);
        free(c->truncated_dir);
}

static int candidate_cmp(const Candidate *x, const Candidate *y) {
        int c = strcmp(x->name, y->name);

        return c != 0 ? c : CMP(x->prio, y->prio);
}

void conf_files_done(ConfFiles *c) {
        c->files = strv_free(c->files);
        c->n_files = 0;
        for (size_t i = 0; i < c->n_issues; i++) {
                free(c->issues[i].path);
                free(c->issues[i].other);
        }
        c->issues = mfree(c->issues);
        c->n_issues = 0;
        c->truncated = false;
        c->left_out = mfree(c->left_out);
}

/* Appends an issue (path and other copied; other may be NULL). Notices beyond CONF_FILES_MAX_NOTICES
 * are dropped. */
static int issue_add(ConfFiles *c, ConfFilesIssueKind kind, const char *path, int error, const char *other) {
        _cleanup_free_ char *p = NULL, *o = NULL;
        ConfFilesIssue *t;
        size_t n_notices = 0;

        for (size_t i = 0; i < c->n_issues; i++)
                n_notices += c->issues[i].kind != CONF_FILES_UNLISTED;
        if (kind != CONF_FILES_UNLISTED && n_notices >= CONF_FILES_MAX_NOTICES)
                return 0;
        p = strdup(path);
        if (!p || (other && !(o = strdup(other))))
                return -ENOMEM;
        t = reallocarray(c->issues, c->n_issues + 1, sizeof(ConfFilesIssue));
        if (!t)
                return -ENOMEM;
        c->issues = t;
        c->issues[c->n_issues++] =
                (ConfFilesIssue) { .kind = kind, .path = TAKE_PTR(p), .error = error, .other = TAKE_PTR(o) };
        return 0;
}

/* Whether a symbolic link's text is "/dev/null" (it masks even where that does not resolve, a
 * chroot without /dev). */
static bool links_to_dev_null(int dfd, const char *name, const struct dirent *de) {
        char target[16];
        ssize_t n;

        if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
                return false;
        n = readlinkat(dfd, name, target, sizeof(target) - 1);
        if (n < 0)
                return false;
        target[n] = 0;
        return streq(target, "/dev/null");
}

/* After a stat() that followed name failed with ENOENT: whether name is a symbolic link (to nothing),
 * rather than gone since it was seen. */
static bool is_dangling(int dfd, const char *name) {
        struct stat st;

        return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISLNK(st.st_mode);
}

static int candidates_add(Candidates *c, const char *name, size_t prio, bool masked, bool dangling) {
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
        c->c[c->n++] = (Candidate) { .name = n, .prio = prio, .masked = masked, .dangling = dangling };
        return 1;
}

/* After opening dir gave ENOTDIR: its first component that is there and no directory (review S, L2:
 * with /run a file, the notice named /run/NAME.d). NULL when there is none any more, or no memory. */
static char *non_directory_component(int root_fd, const char *dir) {
        _cleanup_free_ char *p = strdup(dir);

        if (!p)
                return NULL;
        for (char *s = p + 1;; s++) {
                char saved = *s;
                struct stat st;

                if (saved != '/' && saved != 0)
                        continue;
                *s = 0;
                if (fstatat(root_fd, skip_root_prefix(p), &st, 0) >= 0 && !S_ISDIR(st.st_mode))
                        return TAKE_PTR(p);
                if (saved == 0)
                        return NULL;
                *s = saved;
        }
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

/* Gathers the "*.conf" entries of one drop-in directory. A directory that is there but cannot be
 * listed (in full) is an issue of out; -ENOMEM only. */
static int gather_dropins(int root_fd, const char *dir, size_t prio, ConfFilesProgress progress,
                          void *userdata, Candidates *c, ConfFiles *out) {
        _cleanup_closedir_ DIR *d = NULL;
        int r = opendir_at(root_fd, dir, &d);

        if (r == -ENOENT) {
                /* Nothing there; a symbolic link to nothing is worth a notice. */
                if (is_dangling(root_fd, skip_root_prefix(dir)))
                        return issue_add(out, CONF_FILES_DANGLING, dir, 0, NULL);
                return 0;
        }
        if (r == -ENOTDIR) { /* no directory: nothing there, as in systemd */
                _cleanup_free_ char *component = non_directory_component(root_fd, dir);

                return issue_add(out, CONF_FILES_NOT_DIRECTORY, dir, 0,
                                 component && !streq(component, dir) ? component : NULL);
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0) /* there but unreadable: its drop-ins are not known */
                return issue_add(out, CONF_FILES_UNLISTED, dir, r, NULL);

        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                bool masked, dangling = false;
                struct stat st;

                if (de->d_name[0] == '.' || !endswith(de->d_name, ".conf"))
                        continue;
                entry_progress(dir, de, progress, userdata);
                masked = links_to_dev_null(dirfd(d), de->d_name, de);
                if (!masked && fstatat(dirfd(d), de->d_name, &st, 0) < 0) {
                        /* Only what is not there is no drop-in: one that is there but cannot be
                         * looked at (ELOOP, EIO, ESTALE, EACCES) is listed, hiding the later ones of
                         * its name, so that its read fails and says so. */
                        if (errno == ENOENT) {
                                dangling = is_dangling(dirfd(d), de->d_name);
                                if (!dangling)
                                        continue; /* gone since readdir() */
                        }
                } else if (!masked && stat_is_dev_null(&st))
                        masked = true; /* the node, or a link to it however spelled (review S, H1) */
                /* A directory or a FIFO named like a drop-in is listed too, unlike in systemd (which
                 * ignores it, and lets it hide nothing): what the administrator meant by it is not
                 * known, so its read fails and says so, and it counts as not read in full (review
                 * S, L3), as a main file that is no regular file does. */
                r = candidates_add(c, de->d_name, prio, masked, dangling);
                if (r < 0)
                        return r;
                if (r == 0) { /* c->truncated: the rest of this directory is not looked at */
                        if (!c->truncated_dir && !(c->truncated_dir = strdup(dir)))
                                return -ENOMEM;
                        return 0;
                }
        }
        /* A read error part way: not all of it. */
        return errno > 0 ? issue_add(out, CONF_FILES_UNLISTED, dir, -errno, NULL) : 0;
}

/* Appends the first DIR/NAME that exists, or that is there but cannot be looked at (its read fails
 * and says so; the next ones stay hidden). A symbolic link to nothing before it is a notice. */
static int find_main(int root_fd, const char *const *dirs, const char *name, ConfFilesProgress progress,
                     void *userdata, ConfFiles *out) {
        _cleanup_strv_free_ char **dangling = NULL;
        _cleanup_free_ char *found = NULL;
        size_t n_dangling = 0;
        int r;

        for (const char *const *d = dirs; *d && !found; d++) {
                _cleanup_free_ char *path = NULL;
                struct stat st;

                if (asprintf(&path, "%s/%s", *d, name) < 0)
                        return -ENOMEM;
                if (progress)
                        progress(path, userdata);
                /* Not there: ENOENT, or ENOTDIR (a component is a file: nothing can be there). */
                if (fstatat(root_fd, skip_root_prefix(path), &st, 0) >= 0 ||
                    (errno != ENOENT && errno != ENOTDIR))
                        found = TAKE_PTR(path);
                else if (is_dangling(root_fd, skip_root_prefix(path))) {
                        r = strv_consume(&dangling, &n_dangling, TAKE_PTR(path));
                        if (r < 0)
                                return r;
                }
        }
        for (size_t i = 0; i < n_dangling; i++) {
                r = issue_add(out, CONF_FILES_DANGLING, dangling[i], 0, found);
                if (r < 0)
                        return r;
        }
        return found ? strv_consume(&out->files, &out->n_files, TAKE_PTR(found)) : 0;
}

static int dropin_path(const char *const *dirs, const char *name, const Candidate *c, char **ret) {
        return asprintf(ret, "%s/%s.d/%s", dirs[c->prio], name, c->name) < 0 ? -ENOMEM : 0;
}

/* One file name of the sorted candidates c[i..j): the first that is no dangling link applies,
 * unless it masks; a dangling link before it is a notice naming it. */
static int merge_name(const char *const *dirs, const char *name, const Candidate *c, size_t n,
                      size_t max_files, ConfFiles *out) {
        _cleanup_free_ char *path = NULL;
        size_t first = 0;
        int r;

        while (first < n && c[first].dangling)
                first++;
        if (first < n) {
                r = dropin_path(dirs, name, &c[first], &path);
                if (r < 0)
                        return r;
        }
        for (size_t k = 0; k < first; k++) {
                _cleanup_free_ char *link = NULL;

                r = dropin_path(dirs, name, &c[k], &link);
                if (r >= 0)
                        r = issue_add(out, CONF_FILES_DANGLING, link, 0,
                                      first < n && !c[first].masked ? path : NULL);
                if (r < 0)
                        return r;
        }
        if (first >= n || c[first].masked)
                return 0;
        if (out->n_files >= max_files) {
                out->truncated = true;
                if (!out->left_out) /* review S, L5: the first one, by name */
                        out->left_out = TAKE_PTR(path);
                return 0;
        }
        return strv_consume(&out->files, &out->n_files, TAKE_PTR(path));
}

int conf_files_list(int root_fd, const char *const *dirs, const char *name, size_t max_files,
                    ConfFilesProgress progress, void *userdata, ConfFiles *ret) {
        _cleanup_(candidates_done) Candidates c = {};
        _cleanup_(conf_files_done) ConfFiles out = {};
        int r;

        r = find_main(root_fd, dirs, name, progress, userdata, &out);
        if (r < 0)
                return r;

        for (size_t i = 0; dirs[i]; i++) {
                _cleanup_free_ char *dir = NULL;

                if (asprintf(&dir, "%s/%s.d", dirs[i], name) < 0)
                        return -ENOMEM;
                if (progress)
                        progress(dir, userdata);
                r = gather_dropins(root_fd, dir, i, progress, userdata, &c, &out);
                if (r < 0)
                        return r;
        }
        out.truncated = c.truncated;
        out.left_out = TAKE_PTR(c.truncated_dir);

        typesafe_qsort(c.c, c.n, candidate_cmp);
        for (size_t i = 0, j; i < c.n; i = j) {
                for (j = i + 1; j < c.n && streq(c.c[j].name, c.c[i].name); j++)
                        ;
                r = merge_name(dirs, name, c.c + i, j - i, max_files, &out);
                if (r < 0)
                        return r;
        }

        if (!out.files) {
                out.files = calloc(1, sizeof(char *));
                if (!out.files)
                        return -ENOMEM;
        }
        *ret = out;
        out = (ConfFiles) {};
        return 0;
}
