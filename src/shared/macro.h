/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Generic helpers: cleanup attributes, ownership hand-over, array sizes.
 * Never includes domain headers.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _pure_ __attribute__((pure))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Hand over ownership: returns the value and resets the variable so its cleanup does nothing. */
#define TAKE_PTR(p)                      \
        ({                               \
                __typeof__(p) _p_ = (p); \
                (p) = NULL;              \
                _p_;                     \
        })
#define TAKE_FD(fd)              \
        ({                       \
                int _fd_ = (fd); \
                (fd) = -EBADF;   \
                _fd_;            \
        })

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

/* free() that returns NULL, for "p = mfree(p)". */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}
static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Declares a cleanup helper 'name##p' that calls 'func' on a non-NULL pointer. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
        static inline void func##p(type *p) {   \
                if (*p)                         \
                        func(*p);               \
        }

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}
#define streq(a, b) (strcmp((a), (b)) == 0)
#define isempty(s) (!(s) || !(s)[0])

/* Whether s equals one of the listed strings. */
#define STR_IN_SET(s, ...)                                           \
        ({                                                           \
                const char *_set_[] = { __VA_ARGS__ };               \
                bool _found_ = false;                                \
                for (size_t _i_ = 0; _i_ < ELEMENTSOF(_set_); _i_++) \
                        if (streq_ptr((s), _set_[_i_]))              \
                                _found_ = true;                      \
                _found_;                                             \
        })

/* Returns errno as a negative value, never 0 (for syscalls that failed without setting errno). */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
