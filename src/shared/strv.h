/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * NULL-terminated string vectors (char **), owned: every string and the array are malloc()ed.
 */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

size_t strv_length(char *const *l) _pure_;
bool strv_contains(char *const *l, const char *s) _pure_;

/* Frees every string and the array; returns NULL, for "l = strv_free(l)". */
char **strv_free(char **l);
static inline void strv_freep(char ***l) {
        strv_free(*l);
}
#define _cleanup_strv_free_ _cleanup_(strv_freep)

/* Appends s, taking ownership (freed on failure, NULL counts as -ENOMEM); *n is the length of *l,
 * kept by the caller so that appending stays O(1). */
int strv_consume(char ***l, size_t *n, char *s);
/* Appends a copy of s. */
int strv_extend(char ***l, size_t *n, const char *s);

/* Splits s on spaces and tabs into a new vector. Returns the number of words, -E2BIG when there
 * are more than max, -ENOMEM. *ret is NULL when s holds no word. */
int strv_split_words(const char *s, size_t max, char ***ret);
