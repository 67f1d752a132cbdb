/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The other system-sleep hooks. systemd-sleep runs every executable of its system-sleep directory
 * in parallel with ours, before it writes the sleep state: what they write may land after the late
 * pass's syncs, and only the kernel's own sync would still write it. So SyncOnSuspend=auto keeps
 * that sync on while another hook exists (kernel-knob.h KnobFacts.other_hooks).
 *
 * Every directory a systemd release may read is looked at, each entry on its own (no masking
 * across directories: a release that reads fewer directories must not hide a hook): an entry
 * counts when it is an executable regular file, symlinks followed (a hook masked by a symlink to
 * /dev/null is not), whose name is not hidden (".name") and is not ours (SLEEP_HOOK_OURS: the one
 * systemd runs under that name is ours, or none of ours runs at all). A package manager's backup
 * ("name.dpkg-old") counts: some releases may skip it, but counting it can only keep the kernel's
 * sync on. Any of these directories may be on a hung NFS mount:
 * this runs in conf-read's bounded child.
 */

#include "policy.h"

#define SLEEP_HOOK_OURS "suspend-sync"
#define SLEEP_HOOKS_MAX 256U

/* Pure: whether a directory entry of this name counts as another hook (not hidden, not ours). */
bool sleep_hook_name_other(const char *name);

/* Lists the other hooks below root_fd (absolute paths as seen from root_fd's root), calling progress
 * with each directory before it is read. Missing directories are none. Returns the number found
 * (*ret NULL when 0), -E2BIG past SLEEP_HOOKS_MAX, -ENOMEM, or the negative errno of a directory
 * that exists but cannot be read (then the hooks are not known). */
int sleep_hooks_list(int root_fd, PolicyProgress progress, void *userdata, char ***ret);

/* Our own entry, as systemd-sleep finds it (review K, K3; M, M1): 1 when sleep_dir (systemd-sleep's
 * own directory, SYSTEM_SLEEP_DIR: the only one releases 252-257 read) holds the link as installed,
 * to SLEEP_HOOK_LINK (config.h: STATE_DIR_DEFAULT/HOOK_LINK_FILE, late-skip.h), and no directory some
 * release or patch may read holds anything else of that name (a mask: a link to /dev/null or an
 * empty file; a copy, a link elsewhere); 0 otherwise, the other entry's path in *ret_other (NULL for
 * none; ret_other may be NULL); the negative errno of an entry or directory that cannot be read.
 * Not 1, a late pass may not run: the unit's pass must not leave commits to one (defer-commit.h). */
int sleep_hook_ours(int root_fd, const char *sleep_dir, PolicyProgress progress, void *userdata,
                    char **ret_other);
