/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Checked number and boolean parsing. Never atoi().
 */

#include <stdbool.h>
#include <stdint.h>

/* Decimal unsigned 64-bit; leading/trailing whitespace refused; -EINVAL or -ERANGE. */
int safe_atou64(const char *s, uint64_t *ret);
int safe_atou(const char *s, unsigned *ret);
/* yes/no/true/false/on/off/1/0 (case-insensitive): 1, 0, or -EINVAL. */
int parse_boolean(const char *s);
