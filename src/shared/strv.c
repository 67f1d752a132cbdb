/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

size_t strv_length(char *const *l) {
        size_t n = 0;

        if (l)
                while (l[n])
                        n++;
        return n;
}

bool strv_contains(char *const *l, const char *s) {
        if (l)
                for (char *const *i = l; *i; i++)
                        if (streq_ptr(*i, s))
                                return true;
        return false;
}

char **strv_free(char **l) {
        if (l) {
                for (char **i = l; *i; i++)
                        free(*i);
                free(l);
        }
        return NULL;
}

int strv_consume(char ***l, size_t *n, char *s) {
        char **t;

        if (!s)
                return -ENOMEM;
        t = realloc(*l, (*n + 2) * sizeof(char *));
        if (!t) {
                free(s);
                return -ENOMEM;
        }
        t[(*n)++] = s;
        t[*n] = NULL;
        *l = t;
        return 0;
}

int strv_extend(char ***l, size_t *n, const char *s) {
        return strv_consume(l, n, strdup(s));
}

int strv_split_words(const char *s, size_t max, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0;
        int r;

        for (;;) {
                size_t k;

                s += strspn(s, " \t");
                if (!*s)
                        break;
                k = strcspn(s, " \t");
                if (n >= max)
                        return -E2BIG;
                r = strv_consume(&l, &n, strndup(s, k));
                if (r < 0)
                        return r;
                s += k;
        }
        *ret = TAKE_PTR(l);
        return (int) n;
}
