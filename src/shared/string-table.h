/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * One way to map an enum to and from its string: a table indexed by the enum value, as systemd's
 * DEFINE_STRING_TABLE_LOOKUP. Unknown strings map to -EINVAL (declare the enum with a
 * _NAME_INVALID = -EINVAL member), out-of-range values to NULL.
 *
 *     static const char *const color_table[_COLOR_MAX] = { [COLOR_RED] = "red", ... };
 *     DEFINE_STRING_TABLE_LOOKUP(color, Color);
 *
 * defines color_to_string() and color_from_string(); DECLARE_STRING_TABLE_LOOKUP(color, Color) in the
 * header declares them.
 */

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

#include "macro.h"

/* Index of s in table[0..n) (NULL entries skipped), or -EINVAL. */
static inline ssize_t string_table_lookup(const char *const *table, size_t n, const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (ssize_t) i;
        return -EINVAL;
}

#define _DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, scope) \
        scope const char *name##_to_string(type i) {             \
                if ((size_t) i >= ELEMENTSOF(name##_table))      \
                        return NULL;                             \
                return name##_table[i];                          \
        }

#define _DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type, scope)                            \
        scope type name##_from_string(const char *s) {                                        \
                return (type) string_table_lookup(name##_table, ELEMENTSOF(name##_table), s); \
        }

/* The prototypes, for the header. */
#define DECLARE_STRING_TABLE_LOOKUP(name, type) \
        const char *name##_to_string(type i);   \
        type name##_from_string(const char *s)

#define DEFINE_STRING_TABLE_LOOKUP(name, type)              \
        _DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, ) \
        _DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type, )

#define DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type) _DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, )
#define DEFINE_PRIVATE_STRING_TABLE_LOOKUP(name, type)            \
        _DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, static) \
        _DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type, static)
