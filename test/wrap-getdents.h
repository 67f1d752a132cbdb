/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/stat.h>

/*
 * A directory whose listing fails, as a sysfs or proc read error: in a test linked with
 * -Wl,--wrap=getdents64 and test/wrap-getdents.c (test/meson.build), getdents64() on the directory
 * whose device and inode are wrap_getdents_fail_dir's fails with wrap_getdents_fail_errno (0: every
 * listing as it is).
 */

extern struct stat wrap_getdents_fail_dir;
extern int wrap_getdents_fail_errno;
