/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "defer-commit.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

bool defer_commit_allowed(const DeferFacts *f, const char **ret_why) {
        *ret_why = NULL;
        if (!f->unit_pass || !f->policy)
                return false;
        if (!f->writeback_first)
                *ret_why = "WritebackFirst=no: the late pass would commit while the data is in flight";
        else if (f->knob < 0)
                *ret_why = "sync_on_suspend cannot be read: no backstop if the late pass does not run";
        else if (f->knob == 0)
                *ret_why = "the kernel's own sync is off: no backstop if the late pass does not run";
        else if (f->required != 0)
                *ret_why = "the sleep requires this unit (require-sync.conf): it commits everything itself";
        else if (f->fail_on_timeout)
                *ret_why = "OnTimeout=fail: the unit's own result must tell of every timeout";
        else if (!f->handover_ok)
                *ret_why = "no usable state directory: the late pass would not learn what was left to it";
        else if (f->kick_failed)
                *ret_why = "the flusher threads could not be woken: the data would wait for the late pass";
        return !*ret_why;
}

/* Units that call the sleep off when a unit they require fails (systemd.special(7)). */
static const char *const sleep_units[] = {
        "sleep.target",
        "suspend.target",
        "hibernate.target",
        "hybrid-sleep.target",
        "suspend-then-hibernate.target",
        "systemd-suspend.service",
        "systemd-hibernate.service",
        "systemd-hybrid-sleep.service",
        "systemd-suspend-then-hibernate.service",
};

/* systemd's system unit search path (systemd.unit(5)), below the root. */
static const char *const unit_dirs[] = {
        "etc/systemd/system.control",   "run/systemd/system.control",  "run/systemd/transient",
        "run/systemd/generator.early",  "etc/systemd/system",          "etc/systemd/system.attached",
        "run/systemd/system",           "run/systemd/system.attached", "run/systemd/generator",
        "usr/local/lib/systemd/system", "usr/lib/systemd/system",      "run/systemd/generator.late",
};

#define UNIT_TEXT_MAX (64U * 1024U) /* a unit file or drop-in larger than this counts as requiring */
#define DIR_ENTRIES_MAX 4096U       /* a unit directory with more entries counts as requiring */

bool defer_commit_text_requires(const char *text) {
        static const char *const keys[] = { "Requires", "Requisite", "BindsTo" };
        const char *p = text;

        while (p && *p) {
                const char *end = p, *eq, *k;
                size_t klen;

                /* One logical line: a backslash before the newline continues it. */
                while (*end && !(*end == '\n' && (end == p || end[-1] != '\\')))
                        end++;
                p += strspn(p, " \t");
                eq = memchr(p, '=', end - p);
                if (eq && *p != '#' && *p != ';') {
                        for (klen = eq - p; klen > 0 && strchr(" \t", p[klen - 1]); klen--)
                                ;
                        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                                k = keys[i];
                                if (klen != strlen(k) || strncmp(p, k, klen) != 0)
                                        continue;
                                /* Any mention in the value: a false "yes" costs only the deferral. */
                                if (memmem(eq, end - eq, DEFER_COMMIT_UNIT, strlen(DEFER_COMMIT_UNIT)))
                                        return true;
                        }
                }
                p = *end ? end + 1 : NULL;
        }
        return false;
}

/* Whether NAME, an entry of a unit directory, is where unit's requirement on this unit can be
 * written: the unit file, its .requires/ directory, or a drop-in directory that applies to it (its
 * own, one per dash prefix: "systemd-.service.d", and one per type: "service.d"). */
static bool names_sleep_unit(const char *name, bool *ret_requires_dir) {
        const char *suffix;
        size_t base;

        *ret_requires_dir = false;
        suffix = endswith(name, ".requires") ?: endswith(name, ".d");
        base = suffix ? (size_t) (suffix - name) : strlen(name);
        for (size_t i = 0; i < ELEMENTSOF(sleep_units); i++) {
                const char *u = sleep_units[i], *type = strrchr(u, '.'); /* ".target" */
                bool own = base == strlen(u) && strneq(name, u, base);

                if (!suffix || suffix[1] == 'r') {
                        if (own) {
                                *ret_requires_dir = suffix;
                                return true;
                        }
                        continue;
                }
                /* ".d": its own, "target.d" (every unit of the type), "systemd-.service.d" and
                 * "systemd-suspend-.service.d" (every unit with that prefix) */
                if (own || (base == strlen(type + 1) && strneq(name, type + 1, base)))
                        return true;
                for (const char *dash = strchr(u, '-'); dash && dash < type; dash = strchr(dash + 1, '-')) {
                        size_t plen = dash - u + 1;

                        if (base == plen + strlen(type) && strneq(name, u, plen) &&
                            strneq(name + plen, type, strlen(type)))
                                return true;
                }
        }
        return false;
}

/* 1 when the file dir_fd/path (a unit file or drop-in) requires this unit, 0 when not, or when it
 * is gone; 1 too when it cannot be read whole. */
static int file_requires(int dir_fd, const char *path) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_file_at(dir_fd, path, UNIT_TEXT_MAX, &text, NULL);
        if (r == -ENOENT)
                return 0;
        return r < 0 || defer_commit_text_requires(text);
}

static int dropin_dir_requires(int dir_fd, const char *name) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = opendir_at(dir_fd, name, &d);
        if (r == -ENOENT || r == -ENOTDIR)
                return 0;
        if (r < 0)
                return 1;
        for (size_t n = 0; (errno = 0, de = readdir(d)); n++) {
                _cleanup_free_ char *path = NULL;

                if (n >= DIR_ENTRIES_MAX)
                        return 1;
                if (!endswith(de->d_name, ".conf"))
                        continue;
                if (asprintf(&path, "%s/%s", name, de->d_name) < 0 || file_requires(dir_fd, path))
                        return 1;
        }
        return errno != 0;
}

/* One directory of the unit search path, listed once. The vendor's copies of systemd's own sleep
 * units are not read (they come with systemd; an administrator's copy in /etc takes their place):
 * their drop-in directories and links are. */
static int unit_dir_requires(int root_fd, const char *dir) {
        bool vendor = streq(dir, "usr/lib/systemd/system");
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = opendir_at(root_fd, dir, &d);
        if (r == -ENOENT || r == -ENOTDIR)
                return 0;
        if (r < 0)
                return 1;
        for (size_t n = 0; (errno = 0, de = readdir(d)); n++) {
                bool requires_dir;
                struct stat st;

                if (n >= DIR_ENTRIES_MAX)
                        return 1;
                if (de->d_name[0] == '.' || !names_sleep_unit(de->d_name, &requires_dir))
                        continue;
                if (requires_dir) {
                        /* The link itself, followed or not: its presence is what systemctl enable made. */
                        _cleanup_free_ char *link = NULL;

                        if (asprintf(&link, "%s/" DEFER_COMMIT_UNIT, de->d_name) < 0)
                                return 1;
                        if (fstatat(dirfd(d), link, &st, AT_SYMLINK_NOFOLLOW) >= 0 ||
                            (errno != ENOENT && errno != ENOTDIR))
                                return 1;
                } else if (endswith(de->d_name, ".d")) {
                        if (dropin_dir_requires(dirfd(d), de->d_name))
                                return 1;
                } else if (!vendor && file_requires(dirfd(d), de->d_name))
                        return 1;
        }
        return errno != 0;
}

int defer_commit_sleep_requires(int root_fd, const char *env_value) {
        if (env_value && env_value[0] && parse_boolean(env_value) != 0)
                return 1;
        for (size_t i = 0; i < ELEMENTSOF(unit_dirs); i++)
                if (unit_dir_requires(root_fd, unit_dirs[i]))
                        return 1;
        return 0;
}
