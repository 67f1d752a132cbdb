/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "string-util.h"

bool options_has(const char *opts, const char *opt) {
        size_t n = strlen(opt);

        for (const char *p = opts; p && *p;) {
                size_t l = strcspn(p, ",");
                if (l == n && strncmp(p, opt, n) == 0)
                        return true;
                p += l;
                if (*p == ',')
                        p++;
        }
        return false;
}

int options_get(const char *opts, const char *key, char **ret) {
        size_t n = strlen(key);

        for (const char *p = opts; p && *p;) {
                size_t l = strcspn(p, ",");
                if (l > n && strncmp(p, key, n) == 0 && p[n] == '=') {
                        char *v;

                        if (!ret)
                                return 1;
                        v = strndup(p + n + 1, l - n - 1);
                        if (!v)
                                return -ENOMEM;
                        *ret = v;
                        return 1;
                }
                p += l;
                if (*p == ',')
                        p++;
        }
        return 0;
}

static bool utf8_continuation(char c) {
        return ((unsigned char) c & 0xC0) == 0x80;
}

const char *ellipsize_middle(const char *s, size_t max, char *buf, size_t size) {
        size_t n = strlen(s), head, tail, h, t;

        if (n <= max || max < ELLIPSIS_MIDDLE_MIN || size <= max)
                return s;
        head = (max - 3) / 2;
        tail = max - 3 - head;
        /* Back off at most 3 continuation bytes: a longer run is no UTF-8 sequence anyway. */
        for (h = head; h > 0 && head - h < 3 && utf8_continuation(s[h]); h--)
                ;
        if (utf8_continuation(s[h]))
                h = head;
        for (t = n - tail; t < n && t - (n - tail) < 3 && utf8_continuation(s[t]); t++)
                ;
        if (utf8_continuation(s[t]))
                t = n - tail;
        memcpy(buf, s, h);
        memcpy(buf + h, "\u2026", 3);
        memcpy(buf + h + 3, s + t, n - t);
        buf[h + 3 + n - t] = '\0';
        return buf;
}
