/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Small string helpers: comma-separated mount option lists, a long string shortened in its middle.
 */

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* True if the comma-separated option list contains 'opt' as a whole token. */
bool options_has(const char *opts, const char *opt);

/* Finds "key=value" in a comma-separated option list; returns a newly allocated value in *ret
 * (1), 0 when absent, -ENOMEM. ret NULL: only whether it is there (1 or 0). */
int options_get(const char *opts, const char *key, char **ret);

/* s shortened for a message: s itself when it is at most max bytes long, else its head and its tail
 * around "\u2026" (3 bytes), max bytes in all, written to buf (size > max). The cuts never split a
 * UTF-8 sequence (bytes that are not UTF-8 are cut where they fall). Returns s or buf (s also when
 * max < ELLIPSIS_MIDDLE_MIN or size <= max). For a value whose end matters as much as its start (a
 * mount point) in a message that goes on after it. */
#define ELLIPSIS_MIDDLE_MIN 16U /* the smallest max */
const char *ellipsize_middle(const char *s, size_t max, char *buf, size_t size);

/* s without prefix when s starts with it, else NULL. */
static inline const char *startswith(const char *s, const char *prefix) {
        size_t n = strlen(prefix);

        return s && strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* Whether s ends with suffix. */
static inline bool endswith(const char *s, const char *suffix) {
        size_t n = s ? strlen(s) : 0, m = strlen(suffix);

        return s && n >= m && memcmp(s + n - m, suffix, m) == 0;
}
