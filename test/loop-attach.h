/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/* A loop device on file (a temporary one of the test's, under the test lock): its node in ret_path
 * (size bytes), and the fd holding it attached, with LO_FLAGS_AUTOCLEAR: detached when its last fd
 * closes, so a test that aborts leaves no device. -errno when none can be had. For tests linked
 * with test/loop-attach.c (test/meson.build). */
int loop_attach(const char *file, char *ret_path, size_t size);
