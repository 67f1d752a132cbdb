/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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
                if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                        continue;
                if (*n >= SLEEP_HOOKS_MAX)
                        return -E2BIG;
                r = strv_consume(l, n, TAKE_PTR(path));
                if (r < 0)
                        return r;
        }
        return errno > 0 ? -errno : 0;
}

int sleep_hooks_list(int root_fd, PolicyProgress progress, void *userdata, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        struct stat seen[ELEMENTSOF(sleep_hook_dirs)];
        size_t n = 0, n_seen = 0;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(sleep_hook_dirs); i++) {
                struct stat st;
                bool dup = false;

                if (progress)
                        progress(sleep_hook_dirs[i], userdata);
                /* /lib is /usr/lib on a merged /usr: each directory once. */
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
                r = list_dir(root_fd, sleep_hook_dirs[i], progress, userdata, &l, &n);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return (int) n;
}
