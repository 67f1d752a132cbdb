/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Human output for the verbs: column tables with a header and a legend (footer) line that
 * --no-legend drops, and display escaping of raw paths (control characters, newlines, bytes that
 * are not UTF-8).
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
/* The column that gives way first (ellipsized) when the table is wider than the terminal; more
 * than one may be set, the widest shrinks first. */
int table_set_ellipsize(Table *t, size_t column);
/* Colours the cell of column in the row added last (an ANSI sequence from the ANSI_* below), shown
 * only when colours are on. */
int table_set_color(Table *t, size_t column, const char *ansi);

/* How tables come out: width 0 = as wide as they are (not a terminal, or --full), colours. */
typedef struct OutputStyle {
        size_t width;
        bool colors;
        bool utf8; /* ellipsis "…" instead of "..." */
} OutputStyle;

/* The style for f, as systemd's tools decide it: $COLUMNS, else the terminal's width when f is a
 * terminal, else unlimited; full: unlimited. Colours: $SYSTEMD_COLORS (a boolean, or 16/256/24bit:
 * on), else off with $NO_COLOR or TERM=dumb, else when f is a terminal. UTF-8 from $LC_ALL,
 * $LC_CTYPE, $LANG. */
OutputStyle output_style(FILE *f, bool full);

#define ANSI_RED "\x1B[0;1;31m"
#define ANSI_YELLOW "\x1B[0;1;33m"
#define ANSI_GREY "\x1B[0;38;5;245m"
#define ANSI_NORMAL "\x1B[0m"

/* Prints the header (when legend) and the rows in the style of output_style(f, false); the last
 * column is not padded. */
int table_print(const Table *t, FILE *f, bool legend);
int table_print_styled(const Table *t, FILE *f, bool legend, const OutputStyle *style);

/* Display width of s: code points of valid UTF-8, every other byte one column. */
size_t display_width(const char *s);

/* C-style escapes for control characters, backslashes and bytes that are not valid UTF-8 ("\xff"):
 * what a terminal shows is what was there; newly allocated. */
char *escape_for_display(const char *s);
