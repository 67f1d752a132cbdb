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

/* A length <= n at which s (more than n bytes) can be cut without splitting a UTF-8 sequence: at most
 * 3 continuation bytes back; n itself where s[n] is still one then (no UTF-8 there). */
size_t utf8_cut(const char *s, size_t n);

/* Whether all n bytes at s are valid UTF-8. */
bool utf8_is_valid_n(const char *s, size_t n);

/* A NUL-terminated copy of the n bytes at s with every byte that does not start a valid sequence
 * replaced by U+FFFD (EF BF BD); NULL when out of memory. */
char *utf8_escape_invalid_n(const char *s, size_t n);

/* utf8_escape_display() flags. */
#define UTF8_ESCAPE_BACKSLASH 1U /* a backslash doubled: the text can be read back unambiguously */

/*
 * Copies the n bytes at s to buf, NUL-terminated, with what a terminal would not show as itself
 * escaped: a newline and a tab as \n and \t, other C0 controls, DEL and bytes of no valid sequence as \xNN, C1
 * controls (U+0080..U+009F, which some terminals obey) and the bidirectional formatting characters
 * (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069: they reorder what follows on screen) as
 * \uXXXX. Stops before an escape or a character that would not fit (size > 0), so a cut text is
 * still valid; 4 * n + 1 bytes always hold it all. Returns the length written.
 */
size_t utf8_escape_display(const char *s, size_t n, unsigned flags, char *buf, size_t size);
