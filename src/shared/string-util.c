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
