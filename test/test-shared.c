/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/shared: time spans, checked number and boolean parsing, option lists, bounded and
 * atomic file I/O.
 */

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/sort-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "shared/strv.h"
#include "shared/time-util.h"
#include "tests.h"

TEST(timespan) {
        usec_t u;
        char buf[FORMAT_TIMESPAN_MAX];

        ASSERT_OK(parse_timespan("500ms", &u));
        ASSERT_U64_EQ(u, 500 * USEC_PER_MSEC);
        ASSERT_OK(parse_timespan("10s", &u));
        ASSERT_U64_EQ(u, 10 * USEC_PER_SEC);
        ASSERT_OK(parse_timespan("10", &u));
        ASSERT_U64_EQ(u, 10 * USEC_PER_SEC);
        ASSERT_OK(parse_timespan("1min", &u));
        ASSERT_U64_EQ(u, 60 * USEC_PER_SEC);
        ASSERT_OK(parse_timespan("1min 30s", &u));
        ASSERT_U64_EQ(u, 90 * USEC_PER_SEC);
        ASSERT_OK(parse_timespan("1.5s", &u));
        ASSERT_U64_EQ(u, 1500 * USEC_PER_MSEC);
        ASSERT_OK(parse_timespan("250us", &u));
        ASSERT_U64_EQ(u, 250);
        ASSERT_OK(parse_timespan("2h", &u));
        ASSERT_U64_EQ(u, 7200 * USEC_PER_SEC);
        ASSERT_ERR(parse_timespan("", &u), EINVAL);
        ASSERT_ERR(parse_timespan("s", &u), EINVAL);
        ASSERT_ERR(parse_timespan("-1s", &u), EINVAL);
        ASSERT_ERR(parse_timespan("10 parsecs", &u), EINVAL);
        ASSERT_ERR(parse_timespan("99999999999999999999s", &u), ERANGE);
        ASSERT_ERR(parse_timespan("18446744073709551615min", &u), ERANGE);

        ASSERT_STREQ(format_timespan(buf, sizeof buf, 0), "0us");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 250 * USEC_PER_MSEC), "250ms");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 1234 * USEC_PER_MSEC), "1.234s");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 10 * USEC_PER_SEC), "10s");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 120 * USEC_PER_SEC), "2min");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, USEC_INFINITY), "infinity");
}

TEST(numbers) {
        uint64_t v;
        unsigned u;

        ASSERT_OK(safe_atou64("18446744073709551615", &v));
        ASSERT_U64_EQ(v, UINT64_MAX);
        ASSERT_ERR(safe_atou64("18446744073709551616", &v), ERANGE);
        ASSERT_ERR(safe_atou64("-1", &v), EINVAL);
        ASSERT_ERR(safe_atou64(" 1", &v), EINVAL);
        ASSERT_ERR(safe_atou64("1x", &v), EINVAL);
        ASSERT_ERR(safe_atou64("", &v), EINVAL);
        ASSERT_ERR(safe_atou("4294967296", &u), ERANGE);
        ASSERT_OK(safe_atou("4", &u));
        ASSERT_EQ(u, 4);

        ASSERT_EQ(parse_boolean("yes"), 1);
        ASSERT_EQ(parse_boolean("On"), 1);
        ASSERT_EQ(parse_boolean("1"), 1);
        ASSERT_EQ(parse_boolean("TRUE"), 1);
        ASSERT_EQ(parse_boolean("off"), 0);
        ASSERT_EQ(parse_boolean("0"), 0);
        ASSERT_EQ(parse_boolean("false"), 0);
        ASSERT_ERR(parse_boolean("maybe"), EINVAL);
        ASSERT_ERR(parse_boolean(""), EINVAL);
}

TEST(options) {
        _cleanup_free_ char *v = NULL;

        ASSERT_TRUE(options_has("rw,relatime", "rw"));
        ASSERT_TRUE(options_has("relatime,ro", "ro"));
        ASSERT_TRUE(!options_has("rw,errors=remount-ro", "ro"));
        ASSERT_TRUE(!options_has("", "ro"));
        ASSERT_TRUE(!options_has(NULL, "ro"));
        ASSERT_EQ(options_get("lowerdir=/a:/b,upperdir=/u/p,workdir=/w", "upperdir", &v), 1);
        ASSERT_STREQ(v, "/u/p");
        ASSERT_EQ(options_get("lowerdir=/a", "upperdir", &v), 0);
        ASSERT_EQ(options_get("upperdirx=/a", "upperdir", &v), 0);
}

TEST(files) {
        char dir[] = "/tmp/test-shared-XXXXXX";
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *a = NULL, *b = NULL;
        size_t n;

        ASSERT_TRUE(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(write_file_atomic_at(fd, "x", "hello\n", 6));
        ASSERT_OK(read_full_file_at(fd, "/x", 100, &a, &n));
        ASSERT_EQ(n, 6U);
        ASSERT_STREQ(a, "hello\n");
        ASSERT_ERR(read_full_file_at(fd, "x", 5, &b, &n), EFBIG);
        ASSERT_ERR(read_full_file_at(fd, "missing", 5, &b, &n), ENOENT);
        ASSERT_OK(write_file_atomic_at(fd, "x", "", 0));
        free(a);
        a = NULL;
        ASSERT_OK(read_full_file_at(fd, "x", 5, &a, &n));
        ASSERT_EQ(n, 0U);
        ASSERT_STREQ(skip_root_prefix("/"), ".");
        ASSERT_STREQ(skip_root_prefix("//proc/x"), "proc/x");
        ASSERT_TRUE(unlinkat(fd, "x", 0) == 0);
        ASSERT_TRUE(rmdir(dir) == 0);
}

TEST(strv) {
        _cleanup_strv_free_ char **l = NULL, **w = NULL;
        size_t n = 0;

        ASSERT_EQ(strv_length(NULL), 0U);
        ASSERT_OK(strv_extend(&l, &n, "a"));
        ASSERT_OK(strv_consume(&l, &n, strdup("b")));
        ASSERT_ERR(strv_consume(&l, &n, NULL), ENOMEM);
        ASSERT_EQ(strv_length(l), 2U);
        ASSERT_TRUE(strv_contains(l, "b"));
        ASSERT_TRUE(!strv_contains(l, "c"));
        ASSERT_EQ(strv_split_words("  x\ty  z ", 3, &w), 3);
        ASSERT_STREQ(w[0], "x");
        ASSERT_STREQ(w[2], "z");
        ASSERT_TRUE(w[3] == NULL);
        w = strv_free(w);
        ASSERT_ERR(strv_split_words("x y z", 2, &w), E2BIG);
        ASSERT_TRUE(w == NULL);
        ASSERT_EQ(strv_split_words(" \t ", 2, &w), 0);
        ASSERT_TRUE(w == NULL);
}

typedef enum Color { COLOR_RED, COLOR_BLUE, _COLOR_MAX, _COLOR_INVALID = -EINVAL } Color;
static const char *const color_table[_COLOR_MAX] = { [COLOR_RED] = "red", [COLOR_BLUE] = "blue" };
DEFINE_PRIVATE_STRING_TABLE_LOOKUP(color, Color);

TEST(string_table) {
        ASSERT_STREQ(color_to_string(COLOR_BLUE), "blue");
        ASSERT_TRUE(color_to_string(_COLOR_MAX) == NULL);
        ASSERT_TRUE(color_to_string(_COLOR_INVALID) == NULL);
        ASSERT_EQ(color_from_string("red"), COLOR_RED);
        ASSERT_EQ(color_from_string("green"), _COLOR_INVALID);
        ASSERT_EQ(color_from_string(NULL), _COLOR_INVALID);
}

static int cmp_by_key(const size_t *a, const size_t *b, const int *keys) {
        return CMP(keys[*a], keys[*b]);
}

TEST(sort) {
        int keys[] = { 30, 10, 20 };
        size_t order[] = { 0, 1, 2 };

        typesafe_qsort_r(order, ELEMENTSOF(order), cmp_by_key, (const int *) keys);
        ASSERT_EQ(order[0], 1U);
        ASSERT_EQ(order[1], 2U);
        ASSERT_EQ(order[2], 0U);
        typesafe_qsort_r((size_t *) NULL, 0, cmp_by_key, (const int *) keys);
}

int main(void) {
        RUN(timespan);
        RUN(numbers);
        RUN(options);
        RUN(files);
        RUN(strv);
        RUN(string_table);
        RUN(sort);
        return 0;
}
