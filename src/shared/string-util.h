/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Small string helpers: comma-separated mount option lists.
 */

#include <stdbool.h>
#include <stddef.h>

/* True if the comma-separated option list contains 'opt' as a whole token. */
bool options_has(const char *opts, const char *opt);

/* Finds "key=value" in a comma-separated option list; returns a newly allocated value in *ret
 * (1), 0 when absent, -ENOMEM. */
int options_get(const char *opts, const char *key, char **ret);
