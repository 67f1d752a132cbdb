/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse-util.h"

int safe_atou64(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end;

        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || *end != 0)
                return -EINVAL;
        *ret = (uint64_t) v;
        return 0;
}

int safe_atou64_n(const char *s, size_t n, uint64_t *ret) {
        char digits[21];

        if (n >= sizeof digits)
                return -ERANGE;
        memcpy(digits, s, n);
        digits[n] = 0;
        return safe_atou64(digits, ret);
}

int safe_atou(const char *s, unsigned *ret) {
        uint64_t v;
        int r;

        r = safe_atou64(s, &v);
        if (r < 0)
                return r;
        if (v > UINT_MAX)
                return -ERANGE;
        *ret = (unsigned) v;
        return 0;
}

int parse_boolean(const char *s) {
        static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
        static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
        for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        return -EINVAL;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

int parse_u64_with_unit(const char *p, const char *end, const char *unit, uint64_t *ret) {
        uint64_t v = 0;
        const char *start;
        size_t ulen = strlen(unit);

        while (p < end && is_blank(*p))
                p++;
        start = p;
        while (p < end && *p >= '0' && *p <= '9') {
                unsigned d = (unsigned) (*p - '0');

                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
                p++;
        }
        if (p == start)
                return -EINVAL;
        while (p < end && is_blank(*p))
                p++;
        if ((size_t) (end - p) < ulen || memcmp(p, unit, ulen) != 0)
                return -EINVAL;
        p += ulen;
        while (p < end && is_blank(*p))
                p++;
        if (p != end)
                return -EINVAL;
        *ret = v;
        return 0;
}
