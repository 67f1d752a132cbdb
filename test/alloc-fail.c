/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * LD_PRELOAD for pass-robust.sh alloc: fails the ALLOC_FAIL_AT-th allocation (malloc, calloc, realloc) of
 * the process once, with ENOMEM; every other one goes to the allocator after it (glibc's, or
 * ASan's in the developer build); strdup(), strndup() and reallocarray() allocate through malloc()
 * and realloc() here (ASan serves its own of these past us otherwise). With ALLOC_FAIL_COUNT set,
 * prints how many there were at exit. A forked child counts on from its parent's count.
 * alloc_fail_next() fails the next allocation instead (alloc-fail-check.c).
 *
 * For a resident process (integration/daemon-alloc.sh), two more, both off unless set:
 *   ALLOC_FAIL_ARM=1   nothing fails until the process gets SIGUSR2; then the ALLOC_FAIL_AT-th
 *                      allocation after it does (once). A child forked after that counts on from its
 *                      parent; one forked before, or exec'd, waits for a SIGUSR2 of its own.
 *   ALLOC_FAIL_SAY=1   the allocation failed is told on stderr ("alloc-fail: PID P failed allocation
 *                      N" and its backtrace, addresses to resolve with addr2line), so that a test knows
 *                      which process it hit, if any.
 */

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static long n;
static volatile long fail_at = -1;
static int resolving, env_read;
static long arm_at = -1; /* ALLOC_FAIL_ARM: ALLOC_FAIL_AT, counted from the SIGUSR2 */
static volatile sig_atomic_t armed;
static int say;

/* dlsym() may allocate: those few come from here */
static char early[4096];
static size_t early_used;

static int is_early(const void *p) {
        return (const char *) p >= early && (const char *) p < early + sizeof early;
}

static void *early_alloc(size_t size) {
        void *p;

        if (size > sizeof early)
                return NULL;
        size = (size + 15) & ~(size_t) 15;
        if (early_used + size > sizeof early)
                return NULL;
        p = early + early_used;
        early_used += size;
        return p;
}

static void resolve(void) {
        if (next_malloc || resolving)
                return;
        resolving = 1;
        next_calloc = (void *(*) (size_t, size_t)) dlsym(RTLD_NEXT, "calloc");
        next_realloc = (void *(*) (void *, size_t)) dlsym(RTLD_NEXT, "realloc");
        next_free = (void (*)(void *)) dlsym(RTLD_NEXT, "free");
        next_malloc = (void *(*) (size_t)) dlsym(RTLD_NEXT, "malloc");
        resolving = 0;
}

static void env_load(void) {
        /* ASan's runtime allocates before the environment is set up */
        if (!env_read && environ) {
                const char *e = getenv("ALLOC_FAIL_AT");

                env_read = 1;
                if (e && getenv("ALLOC_FAIL_ARM"))
                        arm_at = atol(e);
                else if (e)
                        fail_at = atol(e);
        }
}

static int fails(void) {
        env_load();
        if (++n != fail_at)
                return 0;
        if (say) {
                void *frames[12];
                char buf[96];
                int k = snprintf(buf, sizeof buf, "alloc-fail: PID %d failed allocation %ld\n",
                                 (int) getpid(), n);

                (void) !write(STDERR_FILENO, buf, (size_t) k);
                backtrace_symbols_fd(frames, backtrace(frames, 12), STDERR_FILENO);
        }
        errno = ENOMEM;
        return 1;
}

static void on_arm(int sig) {
        if (armed || arm_at <= 0)
                return;
        armed = 1;
        fail_at = n + arm_at;
}

__attribute__((constructor)) static void setup(void) {
        env_load();
        if (getenv("ALLOC_FAIL_SAY")) {
                void *frame;

                say = 1;
                (void) backtrace(&frame, 1); /* loads what it needs now, not in the allocation failed */
        }
        if (getenv("ALLOC_FAIL_ARM"))
                (void) sigaction(SIGUSR2,
                                 &(struct sigaction) { .sa_handler = on_arm, .sa_flags = SA_RESTART }, NULL);
}

void *malloc(size_t size) {
        resolve();
        if (!next_malloc)
                return early_alloc(size);
        return fails() ? NULL : next_malloc(size);
}

void *calloc(size_t a, size_t b) {
        size_t size;

        resolve();
        if (!next_calloc) /* zeroed: static storage, used once */
                return __builtin_mul_overflow(a, b, &size) ? NULL : early_alloc(size);
        return fails() ? NULL : next_calloc(a, b);
}

void *realloc(void *p, size_t size) {
        resolve();
        if (!next_realloc || !next_malloc || is_early(p)) {
                /* one of the few from dlsym(), or while it runs: moved, never handed to the allocator
                 * that did not make it */
                size_t left = p ? (size_t) (early + sizeof early - (char *) p) : 0;
                void *q = malloc(size);

                if (q && p)
                        memcpy(q, p, left < size ? left : size);
                return q;
        }
        return fails() ? NULL : next_realloc(p, size);
}

void *reallocarray(void *p, size_t a, size_t b) {
        size_t size;

        if (__builtin_mul_overflow(a, b, &size)) {
                errno = ENOMEM;
                return NULL;
        }
        return realloc(p, size);
}

void free(void *p) {
        if (!p || is_early(p))
                return;
        resolve();
        if (next_free)
                next_free(p);
}

void alloc_fail_next(void);
void alloc_fail_next(void) {
        env_read = 1;
        fail_at = n + 1;
}

/* ASan's strdup() does not go through malloc(): these do, so that they can fail too (json-c copies
 * an object's key with strdup()) */
char *strdup(const char *s) {
        size_t size = strlen(s) + 1;
        char *p = malloc(size);

        return p ? memcpy(p, s, size) : NULL;
}

char *strndup(const char *s, size_t max) {
        size_t len = strnlen(s, max);
        char *p = malloc(len + 1);

        if (!p)
                return NULL;
        memcpy(p, s, len);
        p[len] = 0;
        return p;
}

__attribute__((destructor)) static void report(void) {
        char buf[64];
        int k;

        if (!getenv("ALLOC_FAIL_COUNT"))
                return;
        k = snprintf(buf, sizeof buf, "alloc-fail: %ld allocations\n", n);
        (void) !write(STDERR_FILENO, buf, (size_t) k);
}
