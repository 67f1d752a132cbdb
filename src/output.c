/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "shared/string-table.h"

#define TABLE_MAX_ROWS 1000000U

struct Table {
        size_t n_columns;
        char **cells;          /* row-major, header row first */
        size_t n_rows;         /* including the header */
        size_t *width;
};

static const char *const json_mode_table[_JSON_MODE_MAX] = {
        [JSON_OFF] = "off",
        [JSON_SHORT] = "short",
        [JSON_PRETTY] = "pretty",
};

DEFINE_STRING_TABLE_LOOKUP(json_mode, JsonMode);

char *escape_for_display(const char *s) {
        char *buf, *p;

        buf = malloc(strlen(s) * 4 + 1);
        if (!buf)
                return NULL;
        for (p = buf; *s; s++) {
                unsigned char c = (unsigned char) *s;
                if (c == '\n') {
                        *p++ = '\\';
                        *p++ = 'n';
                } else if (c == '\t') {
                        *p++ = '\\';
                        *p++ = 't';
                } else if (c == '\\') {
                        *p++ = '\\';
                        *p++ = '\\';
                } else if (c < ' ' || c == 0x7f)
                        p += sprintf(p, "\\x%02x", c);
                else
                        *p++ = (char) c;
        }
        *p = 0;
        return buf;
}

Table *table_free(Table *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t->width);
        free(t);
        return NULL;
}

Table *table_new(size_t n_columns, const char *const *headers) {
        Table *t = calloc(1, sizeof(Table));

        if (!t)
                return NULL;
        t->n_columns = n_columns;
        t->width = calloc(n_columns, sizeof(size_t));
        if (!t->width || table_add_row(t, headers) < 0)
                return table_free(t);
        return t;
}

int table_add_row(Table *t, const char *const *cells) {
        char **n;

        if (t->n_rows >= TABLE_MAX_ROWS)
                return -E2BIG;
        n = reallocarray(t->cells, (t->n_rows + 1) * t->n_columns, sizeof(char *));
        if (!n)
                return -ENOMEM;
        t->cells = n;
        for (size_t c = 0; c < t->n_columns; c++) {
                char *e = escape_for_display(cells[c] ? cells[c] : "-");
                if (!e) {
                        for (size_t k = 0; k < c; k++)
                                free(t->cells[t->n_rows * t->n_columns + k]);
                        return -ENOMEM;
                }
                t->cells[t->n_rows * t->n_columns + c] = e;
                t->width[c] = MAX(t->width[c], strlen(e));
        }
        t->n_rows++;
        return 0;
}

int table_print(const Table *t, FILE *f, bool legend) {
        for (size_t r = legend ? 0 : 1; r < t->n_rows; r++) {
                for (size_t c = 0; c < t->n_columns; c++) {
                        const char *cell = t->cells[r * t->n_columns + c];
                        if (c + 1 < t->n_columns)
                                fprintf(f, "%-*s ", (int) t->width[c], cell);
                        else
                                fprintf(f, "%s\n", cell);
                }
        }
        return ferror(f) ? -EIO : 0;
}
