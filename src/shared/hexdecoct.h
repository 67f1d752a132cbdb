/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Hexadecimal encoding of raw bytes (lower case) and its strict inverse.
 */

#include <stdbool.h>
#include <stddef.h>

/* Value of one hex digit (either case), or -EINVAL. */
int unhexchar(char c);

/* 2n lower-case hex digits for the n bytes at p, NUL-terminated; NULL when out of memory. */
char *hexmem(const void *p, size_t n);

/* Whether s is an id128 as systemd prints one (sd_id128_to_string()): 32 lowercase hex digits. */
bool id128_string_valid(const char *s);

/* Decodes the n hex digits at s into a NUL-terminated string. -EBADMSG for an odd length, a
 * character that is not a hex digit or a decoded NUL byte (the result is a C string); -ENOMEM. */
int unhexstr(const char *s, size_t n, char **ret);
