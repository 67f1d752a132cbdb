/* SPDX-License-Identifier: GPL-2.0-or-later */

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

int ext4_journal_load(int sysfs_fd, const char *name) {
        _cleanup_free_ char *text = NULL;
        char path[64 + NAME_MAX];
        int r;

        if (sysfs_fd < 0)
                return -EBADF;
        if (!name)
                return -ENOENT;
        if (!*name || strchr(name, '/') || streq(name, ".") || streq(name, ".."))
                return -EINVAL;
        if (strlen(name) > NAME_MAX)
                return -ENAMETOOLONG;

        snprintf(path, sizeof path, "fs/ext4/%.*s/journal_task", NAME_MAX, name);
        r = read_full_file_at(sysfs_fd, path, 64, &text, NULL);
        if (r < 0)
                return r;
        return ext4_journal_parse(text);
}
