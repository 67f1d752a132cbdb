/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A listing that fails part way, as on a filesystem that returns EIO: in a test linked with
 * -Wl,--wrap=readdir64 and test/wrap-readdir.c (test/meson.build), readdir() ends with EIO at the
 * entry named wrap_readdir_fail_at (NULL: every listing as it is).
 */

extern const char *wrap_readdir_fail_at;
