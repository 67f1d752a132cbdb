/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <stdio.h>
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

/* The code point of a valid sequence of l bytes that utf8_escape_display() shows escaped, else 0. */
static unsigned escaped_code_point(const unsigned char *s, size_t l) {
        unsigned cp;

        if (l == 1)
                return 0;
        if (l == 2) {
                cp = ((s[0] & 0x1FU) << 6) | (s[1] & 0x3FU);
                return cp < 0xA0 ? cp : 0;
        }
        if (l != 3)
                return 0;
        cp = ((s[0] & 0x0FU) << 12) | ((s[1] & 0x3FU) << 6) | (s[2] & 0x3FU);
        return cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
                               (cp >= 0x2066 && cp <= 0x2069)
                       ? cp
                       : 0;
}

size_t utf8_escape_display(const char *s, size_t n, unsigned flags, char *buf, size_t size) {
        size_t pos = 0;

        while (n > 0) {
                unsigned char c = (unsigned char) *s;
                size_t l = utf8_sequence_length(s, n), k;
                char e[8];
                unsigned cp;

                if (l == 0 || (l == 1 && (c < ' ' || c == 0x7f) && c != '\n' && c != '\t')) {
                        l = 1;
                        k = (size_t) snprintf(e, sizeof e, "\\x%02x", c);
                } else if (c == '\n' || c == '\t' || (c == '\\' && (flags & UTF8_ESCAPE_BACKSLASH))) {
                        e[0] = '\\', e[1] = c == '\n' ? 'n' : c == '\t' ? 't' : '\\';
                        k = 2;
                } else if ((cp = escaped_code_point((const unsigned char *) s, l)) != 0)
                        k = (size_t) snprintf(e, sizeof e, "\\u%04x", cp);
                else
                        k = 0;
                if (pos + (k ?: l) >= size)
                        break;
                memcpy(buf + pos, k ? e : s, k ?: l);
                pos += k ?: l;
                s += l;
                n -= l;
        }
        if (size > 0)
                buf[pos] = 0;
        return pos;
}

size_t utf8_cut(const char *s, size_t n) {
        size_t m = n;

        while (m > 0 && n - m < 3 && ((unsigned char) s[m] & 0xC0) == 0x80)
                m--;
        return ((unsigned char) s[m] & 0xC0) == 0x80 ? n : m;
}
