/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Type-checked qsort() and qsort_r(): the comparison function takes typed pointers (and a typed
 * context), so no sort needs a file-scope global to reach its data. As systemd's sort-util.h.
 *
 *     static int cmp(const size_t *a, const size_t *b, const Table *t) { ... }
 *     typesafe_qsort_r(order, n, cmp, table);
 */

#include <stdlib.h>

typedef int (*comparison_fn_t)(const void *, const void *);
typedef int (*comparison_userdata_fn_t)(const void *, const void *, void *);

/* A NULL base with n == 0 is fine (qsort() itself would be undefined behaviour). */
static inline void qsort_safe(void *base, size_t n, size_t size, comparison_fn_t cmp) {
        if (n <= 1)
                return;
        qsort(base, n, size, cmp);
}

static inline void qsort_r_safe(void *base, size_t n, size_t size, comparison_userdata_fn_t cmp,
                                void *userdata) {
        if (n <= 1)
                return;
        qsort_r(base, n, size, cmp, userdata);
}

#define typesafe_qsort(p, n, func)                                                            \
        ({                                                                                    \
                int (*_func_)(const __typeof__((p)[0]) *, const __typeof__((p)[0]) *) = func; \
                qsort_safe((p), (n), sizeof((p)[0]), (comparison_fn_t) _func_);               \
        })

#define typesafe_qsort_r(p, n, func, userdata)                                            \
        ({                                                                                \
                int (*_func_)(const __typeof__((p)[0]) *, const __typeof__((p)[0]) *,     \
                              __typeof__(userdata)) = func;                               \
                qsort_r_safe((p), (n), sizeof((p)[0]), (comparison_userdata_fn_t) _func_, \
                             (void *) (userdata));                                        \
        })

/* Three-way comparison of two scalars. */
#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)
