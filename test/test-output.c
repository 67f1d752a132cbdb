/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for output.c: the --json= mode names, display escaping and column tables (padding, the
 * header that --no-legend drops, "-" for missing cells, write errors).
 */

#include <stdio.h>
#include <stdlib.h>

#include "output.h"
#include "shared/macro.h"
#include "tests.h"

TEST(json_mode) {
        ASSERT_EQ(json_mode_from_string("off"), JSON_OFF);
        ASSERT_EQ(json_mode_from_string("short"), JSON_SHORT);
        ASSERT_EQ(json_mode_from_string("pretty"), JSON_PRETTY);
        ASSERT_EQ(json_mode_from_string("Pretty"), _JSON_MODE_INVALID);
        ASSERT_EQ(json_mode_from_string(""), _JSON_MODE_INVALID);
        ASSERT_EQ(json_mode_from_string(NULL), _JSON_MODE_INVALID);
        ASSERT_STREQ(json_mode_to_string(JSON_SHORT), "short");
        ASSERT_TRUE(json_mode_to_string(_JSON_MODE_MAX) == NULL);
        ASSERT_TRUE(json_mode_to_string(_JSON_MODE_INVALID) == NULL);
}

TEST(escape) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "", "" },
                { "/mnt/plain", "/mnt/plain" },
                { "a\nb", "a\\nb" },
                { "a\tb", "a\\tb" },
                { "a\\b", "a\\\\b" },
                { "\x01\x1f\x7f", "\\x01\\x1f\\x7f" },
                { "caf\xc3\xa9 \xe2\x80\xa6", "caf\xc3\xa9 \xe2\x80\xa6" }, /* UTF-8 as it is */
                /* a byte that is not UTF-8 (a lone one, a sequence cut short, an overlong form, a
                 * surrogate) escaped, as status, plan and history show raw paths and rule names */
                { "/mnt/bad\xff\xfe", "/mnt/bad\\xff\\xfe" },
                { "\xe2\x80 x", "\\xe2\\x80 x" },
                { "\xc0\xaf\xed\xa0\x80", "\\xc0\\xaf\\xed\\xa0\\x80" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *e = escape_for_display(cases[i].in);

                ASSERT_STREQ(e, cases[i].out);
        }
}

/* The table printed into a string. */
static char *print_to_string(const Table *t, bool legend) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ASSERT_TRUE(f);
        ASSERT_OK(table_print(t, f, legend));
        ASSERT_TRUE(fclose(f) == 0);
        return buf;
}

TEST(table) {
        static const char *const headers[] = { "MOUNT", "ACTION", "REASON" };
        static const char *const row1[] = { "/", "sync", "default" };
        static const char *const row2[] = { "/mnt/a\nb", NULL, "last column is not padded" };
        _cleanup_(table_freep) Table *t = table_new(ELEMENTSOF(headers), headers);
        _cleanup_free_ char *with = NULL, *without = NULL, *empty = NULL;

        ASSERT_TRUE(t);
        empty = print_to_string(t, true);
        ASSERT_STREQ(empty, "MOUNT ACTION REASON\n");
        ASSERT_OK(table_add_row(t, row1));
        ASSERT_OK(table_add_row(t, row2));

        /* Widths follow the escaped cells ("/mnt/a\nb" is 9 columns); NULL prints as "-". */
        with = print_to_string(t, true);
        ASSERT_STREQ(with, "MOUNT     ACTION REASON\n"
                           "/         sync   default\n"
                           "/mnt/a\\nb -      last column is not padded\n");
        without = print_to_string(t, false);
        ASSERT_STREQ(without, "/         sync   default\n"
                              "/mnt/a\\nb -      last column is not padded\n");
}

TEST(table_write_error) {
        static const char *const headers[] = { "A", "B" };
        _cleanup_(table_freep) Table *t = table_new(ELEMENTSOF(headers), headers);
        _cleanup_fclose_ FILE *f = fopen("/dev/null", "re");

        ASSERT_TRUE(t);
        ASSERT_TRUE(f);
        ASSERT_ERR(table_print(t, f, true), EIO);
        ASSERT_TRUE(table_free(NULL) == NULL);
}

int main(void) {
        RUN(json_mode);
        RUN(escape);
        RUN(table);
        RUN(table_write_error);
        return 0;
}
