/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Small string helpers: comma-separated mount option lists.
 */

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* True if the comma-separated option list contains 'opt' as a whole token. */
bool options_has(const char *opts, const char *opt);

/* Finds "key=value" in a comma-separated option list; returns a newly allocated value in *ret
 * (1), 0 when absent, -ENOMEM. ret NULL: only whether it is there (1 or 0). */
int options_get(const char *opts, const char *key, char **ret);

/* s without prefix when s starts with it, else NULL. */
static inline const char *startswith(const char *s, const char *prefix) {
        size_t n = strlen(prefix);

        return s && strncmp(s, prefix, n) == 0 ? s + n : NULL;
}
