/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Human output for the verbs: column tables with a header and a legend (footer) line that
 * --no-legend drops, and display escaping of raw paths (control characters, newlines).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "shared/macro.h"

typedef enum JsonMode {
        JSON_OFF,
        JSON_SHORT,
        JSON_PRETTY,
        _JSON_MODE_MAX,
        _JSON_MODE_INVALID = -EINVAL,
} JsonMode;

/* "off", "short", "pretty" (--json=); unknown or NULL: _JSON_MODE_INVALID. */
JsonMode json_mode_from_string(const char *s) _pure_;
const char *json_mode_to_string(JsonMode m) _pure_;

typedef struct Table Table;

Table *table_new(size_t n_columns, const char *const *headers);
Table *table_free(Table *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Table *, table_free);

/* Copies n_columns cells (NULL prints as "-"); escapes them for display. */
int table_add_row(Table *t, const char *const *cells);
/* Prints the header (when legend) and the rows; the last column is not padded. */
int table_print(const Table *t, FILE *f, bool legend);

/* C-style escapes for control characters and backslashes; newly allocated. */
char *escape_for_display(const char *s);
