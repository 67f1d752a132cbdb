/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. Byte counts,
 * never NUL-terminated assumptions: the input may hold NUL bytes (each is a valid one-byte
 * sequence).
 */

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid sequence at s (n > 0 bytes available), or 0 if it is invalid or cut short. */
size_t utf8_sequence_length(const char *s, size_t n);

/* Whether all n bytes at s are valid UTF-8. */
bool utf8_is_valid_n(const char *s, size_t n);

/* A NUL-terminated copy of the n bytes at s with every byte that does not start a valid sequence
 * replaced by U+FFFD (EF BF BD); NULL when out of memory. */
char *utf8_escape_invalid_n(const char *s, size_t n);
