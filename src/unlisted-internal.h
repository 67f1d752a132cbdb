/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Shared by unlisted.c and unlisted-reach.c only. */

#include <stdbool.h>
#include <sys/types.h>

#include "unlisted.h"

void hidden_sb_done(HiddenSb *s);
/* Appends an entry for a superblock no table lists (MountEntry.unlisted), reached at path. */
int append_unlisted(MountTable *t, const char *path, dev_t dev, int mount_id, const char *fstype,
                    const char *source, bool read_only);
