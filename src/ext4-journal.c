/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ext4-journal.h"
#include "shared/fileio.h"
#include "shared/macro.h"

int ext4_journal_parse(const char *text) {
        size_t n;

        if (!text)
                return -EINVAL;
        n = strcspn(text, "\n");
        if (text[n] == '\n' && text[n + 1] != 0)
                return -EINVAL;
        if (n == strlen("<none>") && strncmp(text, "<none>", n) == 0)
                return EXT4_JOURNAL_NONE;
        if (n == 0 || n > 10 || strspn(text, "0123456789") != n)
                return -EINVAL;
        return EXT4_JOURNAL_YES;
}

bool ext4_journal_readable(const char *release) {
        unsigned major = 0, minor = 0;

        if (!release || sscanf(release, "%u.%u", &major, &minor) != 2)
                return false;
        return major > 5 || (major == 5 && minor >= 7);
}

/* A block device's kernel name, as a path component. */
static int check_name(int dir_fd, const char *name) {
        if (dir_fd < 0)
                return -EBADF;
        if (!name)
                return -ENOENT;
        if (!*name || strchr(name, '/') || streq(name, ".") || streq(name, ".."))
                return -EINVAL;
        if (strlen(name) > NAME_MAX)
                return -ENAMETOOLONG;
        return 0;
}

/* fs/ext4/<name>/<file> below dir_fd (sysfs or proc), at most max bytes. */
static int read_ext4_file(int dir_fd, const char *name, const char *file, size_t max, char **ret) {
        char path[64 + NAME_MAX];
        int r;

        r = check_name(dir_fd, name);
        if (r < 0)
                return r;
        snprintf(path, sizeof path, "fs/ext4/%.*s/%s", NAME_MAX, name, file);
        return read_full_file_at(dir_fd, path, max, ret, NULL);
}

int ext4_journal_load(int sysfs_fd, const char *name) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_ext4_file(sysfs_fd, name, "journal_task", 64, &text);
        if (r < 0)
                return r;
        return ext4_journal_parse(text);
}

bool ext4_journal_internal_entry(const char *entry, const char *name) {
        size_t n, digits;

        if (!entry || !name || !*name)
                return false;
        n = strlen(name);
        if (strncmp(entry, name, n) != 0 || entry[n] != '-')
                return false;
        entry += n + 1;
        digits = strspn(entry, "0123456789");
        /* "%lu" of an inode number: no sign, no leading zero, at most 20 digits */
        return digits > 0 && digits <= 20 && entry[digits] == 0 && entry[0] != '0';
}

int ext4_journal_internal(int proc_fd, const char *name) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        unsigned n = 0;
        int r;

        r = check_name(proc_fd, name);
        if (r < 0)
                return r;
        r = opendir_at(proc_fd, "fs/jbd2", &d);
        if (r < 0)
                return r;
        for (errno = 0; (de = readdir(d)); errno = 0) {
                if (++n > EXT4_JOURNAL_JBD2_MAX)
                        return -E2BIG;
                if (ext4_journal_internal_entry(de->d_name, name))
                        return 1;
        }
        return errno > 0 ? -errno : 0;
}

int ext4_options_nobarrier_parse(const char *text) {
        int r = -EINVAL;

        if (!text)
                return -EINVAL;
        for (const char *p = text; *p;) {
                size_t n = strcspn(p, "\n");

                if (n == strlen("nobarrier") && strncmp(p, "nobarrier", n) == 0)
                        return 1;
                if (n == strlen("barrier") && strncmp(p, "barrier", n) == 0)
                        r = 0;
                p += n;
                if (*p)
                        p++;
        }
        return r;
}

static int options_nobarrier_named(int proc_fd, const char *name) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_ext4_file(proc_fd, name, "options", 4096, &text);
        if (r < 0)
                return r;
        return ext4_options_nobarrier_parse(text);
}

/* Without a name: every ext4 superblock of the kernel has its directory under proc fs/ext4/ (not
 * per namespace), the one asked about among them, so when each says "barrier", so does that one.
 * One that says "nobarrier" may be it: -ENODEV, unknown. */
static int options_nobarrier_any(int proc_fd) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        unsigned n = 0;
        int r;

        r = opendir_at(proc_fd, "fs/ext4", &d);
        if (r < 0)
                return r;
        for (errno = 0; (de = readdir(d)); errno = 0) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (++n > EXT4_OPTIONS_ANY_MAX)
                        return -E2BIG;
                r = options_nobarrier_named(proc_fd, de->d_name);
                if (r != 0)
                        return r < 0 ? r : -ENODEV;
        }
        if (errno > 0)
                return -errno;
        return n > 0 ? 0 : -ENOENT; /* none listed: not the kernel's list */
}

int ext4_options_nobarrier(int proc_fd, const char *name) {
        return name ? options_nobarrier_named(proc_fd, name) : options_nobarrier_any(proc_fd);
}

bool ext4_journal_on_own_device(int journal, int internal) {
        return journal == EXT4_JOURNAL_NONE || internal == 1;
}
