/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Helpers shared by the libFuzzer targets in this directory: a NUL-terminated copy of the input
 * (most parsers take C strings) and an assertion that aborts, so libFuzzer records the input as a
 * crash. Each target defines LLVMFuzzerTestOneInput() and nothing else.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(expr)                                                                       \
        do {                                                                                    \
                if (!(expr)) {                                                                  \
                        fprintf(stderr, "%s:%d: fuzz assertion failed: %s\n", __FILE__, __LINE__, \
                                #expr);                                                         \
                        abort();                                                                \
                }                                                                               \
        } while (0)

/* Returns a malloc'ed copy of data with a terminating NUL (embedded NULs are kept, so the parser
 * sees the text up to the first one), or NULL on allocation failure. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);

        if (!s)
                return NULL;
        if (size > 0)
                memcpy(s, data, size);
        s[size] = 0;
        return s;
}

/* Both NULL, or both set and equal. */
static inline int fuzz_streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}
