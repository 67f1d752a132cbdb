/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Checked number and boolean parsing. Never atoi().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decimal unsigned 64-bit; leading/trailing whitespace refused; -EINVAL or -ERANGE. */
int safe_atou64(const char *s, uint64_t *ret);
/* The same of the n bytes at s (not NUL-terminated): no more than 20 of them, -ERANGE beyond. */
int safe_atou64_n(const char *s, size_t n, uint64_t *ret);
int safe_atou(const char *s, unsigned *ret);
/* yes/no/true/false/on/off/1/0 (case-insensitive): 1, 0, or -EINVAL. */
int parse_boolean(const char *s);

/* Parses "<blanks><decimal digits><blanks><unit><blanks>" covering exactly [p, end), where blanks
 * are spaces, tabs and CR and unit is matched exactly ("" for none): the value of lines such as
 * "Dirty:   123 kB" after the colon. Returns 0, -EINVAL or -ERANGE; the unit is not applied. */
int parse_u64_with_unit(const char *p, const char *end, const char *unit, uint64_t *ret);
