/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <stdlib.h>
#include <string.h>

#include "utf8.h"

size_t utf8_sequence_length(const char *str, size_t n) {
        const unsigned char *s = (const unsigned char *) str;
        unsigned char c = s[0], lo = 0x80, hi = 0xBF;
        size_t len;

        if (c < 0x80)
                return 1;
        if (c < 0xC2)
                return 0;
        if (c < 0xE0)
                len = 2;
        else if (c < 0xF0) {
                len = 3;
                if (c == 0xE0)
                        lo = 0xA0;
                else if (c == 0xED)
                        hi = 0x9F;
        } else if (c < 0xF5) {
                len = 4;
                if (c == 0xF0)
                        lo = 0x90;
                else if (c == 0xF4)
                        hi = 0x8F;
        } else
                return 0;

        if (n < len)
                return 0;
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (s[i] < 0x80 || s[i] > 0xBF)
                        return 0;
        return len;
}

bool utf8_is_valid_n(const char *s, size_t n) {
        while (n > 0) {
                size_t l = utf8_sequence_length(s, n);

                if (l == 0)
                        return false;
                s += l;
                n -= l;
        }
        return true;
}

char *utf8_escape_invalid_n(const char *s, size_t n) {
        char *buf, *q;

        buf = malloc(n * 3 + 1);
        if (!buf)
                return NULL;
        q = buf;
        while (n > 0) {
                size_t l = utf8_sequence_length(s, n);

                if (l == 0) {
                        memcpy(q, "\xEF\xBF\xBD", 3);
                        q += 3;
                        l = 1;
                } else {
                        memcpy(q, s, l);
                        q += l;
                }
                s += l;
                n -= l;
        }
        *q = 0;
        return buf;
}
