/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "shared/parse-util.h"
#include "shared/utf8.h"
#include "shared/string-table.h"

#define TABLE_MAX_ROWS 1000000U

struct Table {
        size_t n_columns;
        char **cells;        /* row-major, header row first */
        const char **colors; /* row-major, NULL: none */
        size_t n_rows;       /* including the header */
        size_t *width;       /* display width */
        bool *ellipsize;
};

static const char *const json_mode_table[_JSON_MODE_MAX] = {
        [JSON_OFF] = "off",
        [JSON_SHORT] = "short",
        [JSON_PRETTY] = "pretty",
};

DEFINE_STRING_TABLE_LOOKUP(json_mode, JsonMode);

char *escape_for_display(const char *s) {
        size_t n = strlen(s);
        char *buf = malloc(n * 4 + 1);

        if (buf)
                (void) utf8_escape_display(s, n, UTF8_ESCAPE_BACKSLASH, buf, n * 4 + 1);
        return buf;
}

Table *table_free(Table *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t->colors);
        free(t->width);
        free(t->ellipsize);
        free(t);
        return NULL;
}

Table *table_new(size_t n_columns, const char *const *headers) {
        Table *t = calloc(1, sizeof(Table));

        if (!t)
                return NULL;
        t->n_columns = n_columns;
        t->width = calloc(n_columns, sizeof(size_t));
        t->ellipsize = calloc(n_columns, sizeof(bool));
        if (!t->width || !t->ellipsize || table_add_row(t, headers) < 0)
                return table_free(t);
        return t;
}

int table_add_row(Table *t, const char *const *cells) {
        char **n;

        if (t->n_rows >= TABLE_MAX_ROWS)
                return -E2BIG;
        const char **col;

        n = reallocarray(t->cells, (t->n_rows + 1) * t->n_columns, sizeof(char *));
        if (!n)
                return -ENOMEM;
        t->cells = n;
        col = reallocarray(t->colors, (t->n_rows + 1) * t->n_columns, sizeof(char *));
        if (!col)
                return -ENOMEM;
        t->colors = col;
        for (size_t c = 0; c < t->n_columns; c++) {
                char *e = escape_for_display(cells[c] ? cells[c] : "-");
                if (!e) {
                        for (size_t k = 0; k < c; k++)
                                free(t->cells[t->n_rows * t->n_columns + k]);
                        return -ENOMEM;
                }
                t->cells[t->n_rows * t->n_columns + c] = e;
                t->colors[t->n_rows * t->n_columns + c] = NULL;
                t->width[c] = MAX(t->width[c], display_width(e));
        }
        t->n_rows++;
        return 0;
}

/* Bytes of the character at s: a valid UTF-8 sequence, else one byte (one column either way). */
static size_t char_bytes(const char *s) {
        size_t n = utf8_sequence_length(s, strnlen(s, 4));

        return n > 0 ? n : 1;
}

size_t display_width(const char *s) {
        size_t w = 0;

        for (; *s; s += char_bytes(s))
                w++;
        return w;
}

/* Bytes of s that fill at most w columns. */
static size_t bytes_for_width(const char *s, size_t w) {
        const char *p = s;

        for (; *p && w > 0; w--)
                p += char_bytes(p);
        return (size_t) (p - s);
}

int table_set_ellipsize(Table *t, size_t column) {
        if (column >= t->n_columns)
                return -EINVAL;
        t->ellipsize[column] = true;
        return 0;
}

int table_set_color(Table *t, size_t column, const char *ansi) {
        if (column >= t->n_columns || t->n_rows < 2)
                return -EINVAL;
        t->colors[(t->n_rows - 1) * t->n_columns + column] = ansi;
        return 0;
}

static bool env_utf8(void) {
        const char *v = getenv("LC_ALL");

        if (isempty(v))
                v = getenv("LC_CTYPE");
        if (isempty(v))
                v = getenv("LANG");
        return v && (strcasestr(v, "UTF-8") || strcasestr(v, "utf8"));
}

OutputStyle output_style(FILE *f, bool full) {
        OutputStyle s = { .utf8 = env_utf8() };
        const char *c = getenv("COLUMNS"), *sc = getenv("SYSTEMD_COLORS");
        bool tty = isatty(fileno(f)) > 0;
        unsigned long k;
        char *end;

        if (!full) {
                struct winsize ws = {};

                errno = 0;
                if (!isempty(c) && (k = strtoul(c, &end, 10)) > 0 && !*end && errno == 0 && k < 100000)
                        s.width = k;
                else if (tty && ioctl(fileno(f), TIOCGWINSZ, &ws) >= 0 && ws.ws_col > 0)
                        s.width = ws.ws_col;
        }
        if (!isempty(sc)) {
                int b = parse_boolean(sc);

                s.colors = b >= 0 ? b > 0 : STR_IN_SET(sc, "16", "256", "24bit");
        } else if (getenv("NO_COLOR") || streq_ptr(getenv("TERM"), "dumb"))
                s.colors = false;
        else
                s.colors = tty;
        return s;
}

/* Shrinks the widest ellipsizable column until the table fits (each keeps at least 8 columns). */
static void fit_widths(const Table *t, size_t *w, size_t width) {
        size_t total = 0;

        for (size_t c = 0; c < t->n_columns; c++)
                total += w[c] + (c + 1 < t->n_columns);
        while (width > 0 && total > width) {
                size_t widest = SIZE_MAX;

                for (size_t c = 0; c < t->n_columns; c++)
                        if (t->ellipsize[c] && w[c] > 8 && (widest == SIZE_MAX || w[c] > w[widest]))
                                widest = c;
                if (widest == SIZE_MAX)
                        break;
                w[widest]--;
                total--;
        }
}

static void print_cell(FILE *f, const char *cell, size_t w, bool last, const char *color,
                       const OutputStyle *s) {
        size_t dw = display_width(cell);
        const char *ell = s->utf8 ? "\u2026" : "...";
        size_t ell_w = s->utf8 ? 1 : 3;

        if (color && s->colors)
                fputs(color, f);
        if (dw > w && w > ell_w) {
                fwrite(cell, 1, bytes_for_width(cell, w - ell_w), f);
                fputs(ell, f);
                dw = w;
        } else
                fputs(cell, f);
        if (color && s->colors)
                fputs(ANSI_NORMAL, f);
        if (!last)
                fprintf(f, "%*s", (int) (w - MIN(dw, w) + 1), "");
}

int table_print_styled(const Table *t, FILE *f, bool legend, const OutputStyle *style) {
        _cleanup_free_ size_t *w = calloc(t->n_columns, sizeof(size_t));

        if (!w)
                return -ENOMEM;
        memcpy(w, t->width, t->n_columns * sizeof(size_t));
        fit_widths(t, w, style->width);
        for (size_t r = legend ? 0 : 1; r < t->n_rows; r++)
                for (size_t c = 0; c < t->n_columns; c++) {
                        bool last = c + 1 == t->n_columns;

                        /* The last column is only cut when it alone overflows the terminal. */
                        print_cell(f, t->cells[r * t->n_columns + c],
                                   last && !t->ellipsize[c] ? SIZE_MAX : w[c], last,
                                   t->colors[r * t->n_columns + c], style);
                        if (last)
                                fputc('\n', f);
                }
        return ferror(f) ? -EIO : 0;
}

int table_print(const Table *t, FILE *f, bool legend) {
        OutputStyle s = output_style(f, false);

        return table_print_styled(t, f, legend, &s);
}
