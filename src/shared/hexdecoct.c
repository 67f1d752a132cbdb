/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hexdecoct.h"
#include "macro.h"

int unhexchar(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

bool id128_string_valid(const char *s) {
        return s && strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

char *hexmem(const void *p, size_t n) {
        static const char digits[] = "0123456789abcdef";
        const unsigned char *s = p;
        char *buf;

        buf = malloc(n * 2 + 1);
        if (!buf)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                buf[2 * i] = digits[s[i] >> 4];
                buf[2 * i + 1] = digits[s[i] & 0xF];
        }
        buf[2 * n] = 0;
        return buf;
}

int unhexstr(const char *s, size_t n, char **ret) {
        _cleanup_free_ char *buf = NULL;

        if (n % 2 != 0)
                return -EBADMSG;
        buf = malloc(n / 2 + 1);
        if (!buf)
                return -ENOMEM;
        for (size_t i = 0; i < n / 2; i++) {
                int a = unhexchar(s[2 * i]), b = unhexchar(s[2 * i + 1]);

                if (a < 0 || b < 0 || (a == 0 && b == 0))
                        return -EBADMSG;
                buf[i] = (char) (a << 4 | b);
        }
        buf[n / 2] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}
