/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/strv.h"
#include "sleep-hooks.h"

/* Every directory some systemd release reads hooks from (SYSTEM_SLEEP_PATH and the configuration
 * directories), /lib for releases built with a split /usr. */
static const char *const sleep_hook_dirs[] = {
        "/etc/systemd/system-sleep",     "/run/systemd/system-sleep", "/usr/local/lib/systemd/system-sleep",
        "/usr/lib/systemd/system-sleep", "/lib/systemd/system-sleep",
};

bool sleep_hook_name_other(const char *name) {
        return name && name[0] != '\0' && name[0] != '.' && !streq(name, SLEEP_HOOK_OURS);
}

static int list_dir(int root_fd, const char *dir, PolicyProgress progress, void *userdata, char ***l,
                    size_t *n) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = opendir_at(root_fd, dir, &d);
        if (r == -ENOENT || r == -ENOTDIR)
                return 0;
        if (r < 0)
                return r;
        while ((errno = 0, de = readdir(d))) {
                _cleanup_free_ char *path = NULL;
                struct stat st;

                if (!sleep_hook_name_other(de->d_name))
                        continue;
                if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
                        return -ENOMEM;
                /* Symlinks followed, as systemd does: a dangling one or one to /dev/null runs nothing.
                 * Followed elsewhere (a filesystem that may hang): named on its own. */
                if (progress && (de->d_type == DT_LNK || de->d_type == DT_UNKNOWN))
                        progress(path, userdata);
                if (fstatat(dirfd(d), de->d_name, &st, 0) < 0) {
                        /* Gone, or a symbolic link to nothing: runs nothing. One that is there but
                         * cannot be looked at now (EIO, ESTALE, EACCES, ELOOP) may run by the time
                         * systemd-sleep looks: a hook, as an entry of the configuration that cannot
                         * be looked at is a file not read (fail closed). */
                        if (errno == ENOENT)
                                continue;
                } else if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                        continue;
                if (*n >= SLEEP_HOOKS_MAX)
                        return -E2BIG;
                r = strv_consume(l, n, TAKE_PTR(path));
                if (r < 0)
                        return r;
        }
        return errno > 0 ? -errno : 0;
}

/* Each of sleep_hook_dirs that exists, once (/lib is /usr/lib on a merged /usr), and none that is
 * *skip (may be NULL): cb(dir). */
static int for_each_dir(int root_fd, const struct stat *skip, PolicyProgress progress, void *userdata,
                        int (*cb)(int root_fd, const char *dir, void *data), void *data) {
        struct stat seen[ELEMENTSOF(sleep_hook_dirs) + 1];
        size_t n_seen = 0;
        int r;

        if (skip)
                seen[n_seen++] = *skip;
        for (size_t i = 0; i < ELEMENTSOF(sleep_hook_dirs); i++) {
                struct stat st;
                bool dup = false;

                if (progress)
                        progress(sleep_hook_dirs[i], userdata);
                if (fstatat(root_fd, skip_root_prefix(sleep_hook_dirs[i]), &st, 0) < 0) {
                        if (errno == ENOENT || errno == ENOTDIR)
                                continue; /* none there */
                        return -errno;
                }
                for (size_t j = 0; j < n_seen && !dup; j++)
                        dup = seen[j].st_dev == st.st_dev && seen[j].st_ino == st.st_ino;
                if (dup)
                        continue;
                seen[n_seen++] = st;
                r = cb(root_fd, sleep_hook_dirs[i], data);
                if (r != 0)
                        return r;
        }
        return 0;
}

typedef struct ListData {
        PolicyProgress progress;
        void *userdata;
        char **l;
        size_t n;
} ListData;

static int list_one(int root_fd, const char *dir, void *data) {
        ListData *d = data;

        return list_dir(root_fd, dir, d->progress, d->userdata, &d->l, &d->n);
}

int sleep_hooks_list(int root_fd, PolicyProgress progress, void *userdata, char ***ret) {
        ListData d = { .progress = progress, .userdata = userdata };
        int r;

        r = for_each_dir(root_fd, NULL, progress, userdata, list_one, &d);
        if (r < 0) {
                strv_free(d.l);
                return r;
        }
        *ret = d.l;
        return (int) d.n;
}

typedef struct OursData {
        bool home; /* the directory is systemd-sleep's own: our link counts there */
        bool ours; /* ... and it was found there */
        char *other;
} OursData;

/* The entry in dir: none, the link as installed (counted in systemd-sleep's own directory; beside
 * it, where a release or a patch may read too, it is ours all the same), or anything else (1: its
 * path kept). */
static int ours_one(int root_fd, const char *dir, void *data) {
        char target[sizeof SLEEP_HOOK_LINK + 1], path[PATH_MAX];
        OursData *d = data;
        ssize_t n;

        if (snprintf(path, sizeof path, "%s/" SLEEP_HOOK_OURS, dir) >= (int) sizeof path)
                return -ENAMETOOLONG;
        n = readlinkat(root_fd, skip_root_prefix(path), target, sizeof target);
        if (n < 0 && (errno == ENOENT || errno == ENOTDIR))
                return 0;
        if (n < 0 && errno != EINVAL) /* EINVAL: not a link (a file, a directory) */
                return -errno;
        /* the link as installed (meson), STATE_DIR_DEFAULT/HOOK_LINK_FILE (test-conf-read) */
        if (n == (ssize_t) strlen(SLEEP_HOOK_LINK) && memcmp(target, SLEEP_HOOK_LINK, n) == 0) {
                d->ours = d->ours || d->home;
                return 0;
        }
        d->other = strdup(path);
        return d->other ? 1 : -ENOMEM;
}

int sleep_hook_ours(int root_fd, const char *sleep_dir, PolicyProgress progress, void *userdata,
                    char **ret_other) {
        OursData d = { .home = true };
        struct stat home;
        int r;

        if (ret_other)
                *ret_other = NULL;
        if (progress)
                progress(sleep_dir, userdata);
        /* Where systemd-sleep looks (review M, M1): a link of ours elsewhere runs nothing. */
        if (fstatat(root_fd, skip_root_prefix(sleep_dir), &home, 0) < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        r = ours_one(root_fd, sleep_dir, &d);
        d.home = false;
        if (r == 0)
                r = for_each_dir(root_fd, &home, progress, userdata, ours_one, &d);
        if (ret_other)
                *ret_other = TAKE_PTR(d.other);
        free(d.other);
        if (r < 0)
                return r;
        return r == 0 && d.ours;
}
