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
 * Pure listing: nothing is read, no domain headers. A name that is not there (ENOENT) is absent; one
 * that is there but cannot be looked at (ELOOP, EIO, EACCES, ESTALE), or is no regular file (a
 * directory, a FIFO: systemd ignores those), is listed all the same, so that its read fails and says
 * so. A drop-in directory that is not there, or not a directory, holds
 * nothing; one that is there but cannot be listed is an issue, and the other directories still count.
 */

#include <stdbool.h>
#include <stddef.h>

#define CONF_FILES_MAX_CANDIDATES 4096U /* drop-in directory entries looked at, in all dirs together */
#define CONF_FILES_MAX_NOTICES 8U       /* NOT_DIRECTORY and DANGLING issues kept; more are dropped */

/* Called with each path (leading '/') right before it is looked at: each main file candidate, then
 * each drop-in directory. */
typedef void (*ConfFilesProgress)(const char *path, void *userdata);

typedef enum ConfFilesIssueKind {
        /* A drop-in directory there but not listed in full (error: why): which drop-ins it holds, and
         * which of the other directories' it hides or masks, is not known. */
        CONF_FILES_UNLISTED,
        /* Notices, as in systemd no change to what is listed; said in case they are a mistake: */
        CONF_FILES_NOT_DIRECTORY, /* a drop-in directory's name that is no directory (ENOTDIR);
                                   * other: the component that is there and no directory, when it is
                                   * one above (e.g. "/run" is a file), NULL when it is the name */
        CONF_FILES_DANGLING,      /* a symbolic link to nothing: no file, and it hides nothing;
                                   * other: the file of that name that applies instead, NULL: none */
        _CONF_FILES_ISSUE_KIND_MAX,
} ConfFilesIssueKind;

typedef struct ConfFilesIssue {
        ConfFilesIssueKind kind;
        char *path; /* leading '/' */
        int error;  /* UNLISTED: negative errno; otherwise 0 */
        char *other;
} ConfFilesIssue;

typedef struct ConfFiles {
        char **files; /* in the order they apply, leading '/', NULL-terminated */
        size_t n_files;
        ConfFilesIssue *issues; /* every UNLISTED one, at most CONF_FILES_MAX_NOTICES others */
        size_t n_issues;
        bool truncated; /* more drop-ins (or more than CONF_FILES_MAX_CANDIDATES entries) were left out */
        char *left_out; /* when truncated: the first drop-in left out, or the directory whose entries
                         * past CONF_FILES_MAX_CANDIDATES were not looked at */
} ConfFiles;

void conf_files_done(ConfFiles *c);

/*
 * Lists the files of configuration 'name' under root_fd (dirs: absolute, e.g. "/etc", NULL-terminated),
 * in the order they apply. At most max_files. Returns 0 and *ret (files an empty vector when there
 * is nothing; a directory that could not be listed is an issue, not a failure), or -ENOMEM.
 */
int conf_files_list(int root_fd, const char *const *dirs, const char *name, size_t max_files,
                    ConfFilesProgress progress, void *userdata, ConfFiles *ret);
