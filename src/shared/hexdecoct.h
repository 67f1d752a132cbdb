/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Hexadecimal encoding of raw bytes (lower case) and its strict inverse.
 */

#include <stddef.h>

/* Value of one hex digit (either case), or -EINVAL. */
int unhexchar(char c);

/* 2n lower-case hex digits for the n bytes at p, NUL-terminated; NULL when out of memory. */
char *hexmem(const void *p, size_t n);

/* Decodes the n hex digits at s into a NUL-terminated string. -EBADMSG for an odd length, a
 * character that is not a hex digit or a decoded NUL byte (the result is a C string); -ENOMEM. */
int unhexstr(const char *s, size_t n, char **ret);
