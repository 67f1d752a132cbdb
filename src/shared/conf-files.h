/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Configuration files with systemd's drop-in semantics (as systemd's conf-files.c and
 * "systemd-analyze cat-config"), below a root directory fd:
 *
 *  - the main file NAME is the first DIR/NAME that exists, trying dirs in order;
 *  - then every DIR/NAME.d/ *.conf of every dir, sorted by file name whatever its directory;
 *  - a file name in an earlier dir hides the same name in later ones; a name that is a symlink to
 *    /dev/null (or /dev/null itself) masks it: neither it nor what it hides is listed.
 *
 * Pure listing: nothing is read, no domain headers. Missing or unreadable directories hold nothing.
 */

#include <stdbool.h>
#include <stddef.h>

#define CONF_FILES_MAX_CANDIDATES 4096U /* drop-in directory entries looked at, in all dirs together */

/* Called with each path (leading '/') right before it is looked at: each main file candidate, then
 * each drop-in directory. */
typedef void (*ConfFilesProgress)(const char *path, void *userdata);

/*
 * Lists the files of configuration 'name' under root_fd (dirs: absolute, e.g. "/etc", NULL-terminated),
 * in the order they apply, as paths with a leading '/'. At most max_files; *ret_truncated (may be
 * NULL) says whether more drop-ins (or more than CONF_FILES_MAX_CANDIDATES entries) were left out.
 * Returns 0 (an empty vector when there is nothing), -ENOMEM, or the error of a drop-in directory
 * that is there but could not be listed in full (progress was last called with it, or with a
 * symlink in it).
 */
int conf_files_list(int root_fd, const char *const *dirs, const char *name, size_t max_files,
                    ConfFilesProgress progress, void *userdata, char ***ret, bool *ret_truncated);
