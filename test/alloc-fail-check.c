/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * alloc-fail.so checked on its own (pass-alloc.sh trusts it to fail every allocation of a pass): built
 * like the passes (ASan in the developer build, whose runtime serves strdup(), strndup() and
 * reallocarray() itself), run under it. Each way of allocating must fail, with ENOMEM, when the
 * preload says the next allocation fails, and work again after; realloc() of NULL is an allocation;
 * a reallocarray() whose size overflows returns NULL. Without the preload: skipped.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void (*fail_next)(void);
static int failed;

static void *a_malloc(void) {
        return malloc(16);
}
static void *a_calloc(void) {
        return calloc(4, 4);
}
static void *a_realloc_null(void) {
        return realloc(NULL, 16);
}
static void *a_realloc(void) {
        char *p = malloc(16), *q;

        if (!p)
                return NULL;
        fail_next();
        q = realloc(p, 1 << 20);
        if (!q)
                free(p);
        return q;
}
static void *a_reallocarray(void) {
        return reallocarray(NULL, 4, 4);
}
static void *a_strdup(void) {
        return strdup("suspend-sync");
}
static void *a_strndup(void) {
        return strndup("suspend-sync", 7);
}

static void check(const char *name, void *(*f)(void), int arms_itself) {
        void *p;

        if (!arms_itself)
                fail_next();
        errno = 0;
        p = f();
        if (p || errno != ENOMEM) {
                fprintf(stderr, "FAIL: %s: not failed (%p, errno %d)\n", name, p, errno);
                failed = 1;
        }
        free(p);
        p = f == a_realloc ? realloc(NULL, 16) : f(); /* a_realloc arms the preload itself */
        if (!p) {
                fprintf(stderr, "FAIL: %s: the allocation after the failed one failed too\n", name);
                failed = 1;
        }
        free(p);
}

int main(void) {
        volatile size_t half = SIZE_MAX / 2;
        void *p;

        fail_next = (void (*)(void)) dlsym(RTLD_DEFAULT, "alloc_fail_next");
        if (!fail_next) {
                printf("SKIP: alloc-fail.so is not preloaded\n");
                return 77;
        }
        check("malloc", a_malloc, 0);
        check("calloc", a_calloc, 0);
        check("realloc(NULL, n)", a_realloc_null, 0);
        check("realloc(p, n)", a_realloc, 1);
        check("reallocarray", a_reallocarray, 0);
        check("strdup", a_strdup, 0);
        check("strndup", a_strndup, 0);
        p = reallocarray(NULL, half, 3); /* ours: no allocation; ASan's would abort */
        if (p) {
                fprintf(stderr, "FAIL: reallocarray() of an overflowing size returned memory\n");
                failed = 1;
        }
        return failed;
}
