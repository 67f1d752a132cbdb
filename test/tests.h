/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Minimal unit-test helpers: each test file is one executable; a failed check prints file:line and
 * the expression and aborts (so ASan/UBSan reports and meson both see the failure).
 * EXIT_TEST_SKIP (77) makes meson report a skip.
 */

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_TEST_SKIP 77

/* Whether "/" is the root of a mount. Not inside a chroot whose root is a plain directory: there a
 * private mount namespace cannot be set up (changing the propagation of "/" fails with EINVAL), and
 * tests that need one skip, saying so. */
static inline bool root_is_mount_point(void) {
        struct statx stx;

        if (statx(AT_FDCWD, "/", 0, 0, &stx) < 0 || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
                return true;    /* unknown: let the test try */
        return stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
}

#define ROOT_NOT_MOUNT_POINT_REASON "our root is not a mount point (a chroot into a directory): the propagation of \"/\" cannot be changed for a private mount namespace"

#define ASSERT_TRUE(expr)                                                                       \
        do {                                                                                    \
                if (!(expr)) {                                                                  \
                        fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #expr); \
                        abort();                                                                \
                }                                                                               \
        } while (0)

/* A negative errno, or -1 from a system call (its errno said too: -1 is also -EPERM). */
#define ASSERT_OK(expr)                                                                         \
        do {                                                                                    \
                errno = 0;                                                                      \
                long long _r_ = (long long) (expr);                                             \
                if (_r_ < 0) {                                                                  \
                        int _e_ = errno;                                                        \
                        fprintf(stderr, "%s:%d: %s failed: %s%s%s\n", __FILE__, __LINE__, #expr, \
                                strerror((int) -_r_), _r_ == -1 && _e_ > 0 ? "; errno: " : "",   \
                                _r_ == -1 && _e_ > 0 ? strerror(_e_) : "");                     \
                        abort();                                                                \
                }                                                                               \
        } while (0)

#define ASSERT_ERR(expr, err)                                                                   \
        do {                                                                                    \
                long long _r_ = (long long) (expr);                                             \
                if (_r_ != -(long long) (err)) {                                                \
                        fprintf(stderr, "%s:%d: %s returned %lld, expected -%s\n", __FILE__, __LINE__, \
                                #expr, _r_, #err);                                              \
                        abort();                                                                \
                }                                                                               \
        } while (0)

#define ASSERT_EQ(a, b)                                                                         \
        do {                                                                                    \
                long long _a_ = (long long) (a), _b_ = (long long) (b);                         \
                if (_a_ != _b_) {                                                               \
                        fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, \
                                #a, #b, _a_, _b_);                                              \
                        abort();                                                                \
                }                                                                               \
        } while (0)

#define ASSERT_U64_EQ(a, b)                                                                     \
        do {                                                                                    \
                unsigned long long _a_ = (unsigned long long) (a), _b_ = (unsigned long long) (b); \
                if (_a_ != _b_) {                                                               \
                        fprintf(stderr, "%s:%d: %s == %s failed: %llu != %llu\n", __FILE__, __LINE__, \
                                #a, #b, _a_, _b_);                                              \
                        abort();                                                                \
                }                                                                               \
        } while (0)

#define ASSERT_STREQ(a, b)                                                                      \
        do {                                                                                    \
                const char *_a_ = (a), *_b_ = (b);                                              \
                if (!_a_ || !_b_ || strcmp(_a_, _b_) != 0) {                                    \
                        fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                                #a, #b, _a_ ? _a_ : "(null)", _b_ ? _b_ : "(null)");           \
                        abort();                                                                \
                }                                                                               \
        } while (0)

/* FIXTURES_DIR is defined by meson as the absolute path of test/fixtures. */
#define TEST(name) static void test_##name(void)
#define RUN(name)                                                                               \
        do {                                                                                    \
                fprintf(stderr, "== %s\n", #name);                                              \
                test_state()->current = #name;                                                  \
                test_##name();                                                                  \
        } while (0)

/* Subtests that could not run here (not root, no FUSE, a chroot, ...). A program with one ends
 * with test_result() == EXIT_TEST_SKIP, so meson never counts it as passed when part of it did not
 * run; a failed check of the parts that did run still aborts it. */
typedef struct TestState {
        const char *current;
        const char *skipped[8];
        unsigned n_skipped;
} TestState;

static inline TestState *test_state(void) {
        static TestState s;
        return &s;
}

/* Says why the current subtest (or a part of it) cannot run here; the caller then returns. */
__attribute__((format(printf, 1, 2))) static inline void test_skip(const char *format, ...) {
        TestState *s = test_state();
        va_list ap;

        fprintf(stderr, "  skipped: ");
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputc('\n', stderr);
        if (s->n_skipped < sizeof s->skipped / sizeof s->skipped[0])
                s->skipped[s->n_skipped] = s->current ?: "main";
        s->n_skipped++;
}

/* A forked part of a subtest that cannot run exits with EXIT_TEST_SKIP, its reason printed; the
 * parent passes the status here. True when it was a skip (counted), else the status must be 0. */
static inline bool test_child_skipped(int status) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != EXIT_TEST_SKIP)
                return false;
        test_skip("(a child of the subtest, its reason above)");
        return true;
}

/* Runs fn(userdata) in a forked child in which the existing regular file 'path' hangs: a FUSE mount
 * over it, in a private mount namespace, that no server answers, so that its open (and stat) waits as
 * on a dead server, killably. A check that fails in fn aborts the child and fails the subtest; a child
 * that cannot set it up (not root, no FUSE) skips it. A watch of watch_sec (not a measurement:
 * minutes beyond any bound under test) kills a child that hangs and fails the subtest. */
static inline void test_with_hung_file(const char *path, unsigned watch_sec, void (*fn)(void *userdata),
                                       void *userdata) {
        int status = 0;
        pid_t pid;

        fflush(stderr);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                char opts[128];
                int fuse = -1;

                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                    (fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC)) < 0) {
                        fprintf(stderr, "  skipped: no private mount namespace or /dev/fuse: %s\n",
                                strerror(errno));
                        _exit(EXIT_TEST_SKIP);
                }
                /* The fd stays open: closed, the connection is aborted and the open fails at once. */
                snprintf(opts, sizeof opts, "fd=%d,rootmode=100000,user_id=0,group_id=0", fuse);
                if (mount("test-hung-file", path, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
                        fprintf(stderr, "  skipped: cannot mount a FUSE file over %s: %s\n", path, strerror(errno));
                        _exit(EXIT_TEST_SKIP);
                }
                fn(userdata);
                _exit(EXIT_SUCCESS);
        }
        for (unsigned i = 0; i < watch_sec * 100; i++) {
                pid_t r = waitpid(pid, &status, WNOHANG);

                ASSERT_TRUE(r >= 0);
                if (r == pid)
                        break;
                if (i + 1 == watch_sec * 100) {
                        fprintf(stderr, "  the child did not end within %us: it waited on the hung file\n",
                                watch_sec);
                        (void) kill(pid, SIGKILL);
                        ASSERT_TRUE(waitpid(pid, &status, 0) == pid);
                        ASSERT_TRUE(false);
                }
                usleep(10000);
        }
        if (test_child_skipped(status))
                return;
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Temporary directories made by test_mkdtemp(): removed when a check fails (abort()), so that a
 * failing test leaves nothing in /tmp; the subtest removes its own when it passes. Only by the
 * process that made them (a forked child's failure leaves its parent's), never across a mount (a
 * test may mount inside its directory in a namespace of its own). */
typedef struct TestTmp {
        char *paths[64];
        unsigned n;
        pid_t pid;
} TestTmp;

static inline TestTmp *test_tmp(void) {
        static TestTmp t;
        return &t;
}

static inline int test_tmp_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        (void) remove(path);
        return 0;
}

static inline void test_tmp_on_abort(int sig) {
        TestTmp *t = test_tmp();

        (void) sig;
        if (getpid() != t->pid)
                return;
        for (unsigned i = 0; i < t->n; i++)
                (void) nftw(t->paths[i], test_tmp_remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* mkdtemp(template), the directory registered for removal should a check fail. */
static inline char *test_mkdtemp(char *template) {
        TestTmp *t = test_tmp();
        char *p = mkdtemp(template);

        if (!p)
                return NULL;
        if (t->pid != getpid()) { /* the first in this process (a forked child starts a list of its own) */
                t->n = 0;
                t->pid = getpid();
                (void) signal(SIGABRT, test_tmp_on_abort);
        }
        /* a copy: the template is most often on the subtest's stack */
        if (t->n < sizeof t->paths / sizeof t->paths[0] && (t->paths[t->n] = strdup(p)))
                t->n++;
        return p;
}

/* main()'s exit status: 0, or EXIT_TEST_SKIP naming the subtests that did not run in full. */
static inline int test_result(void) {
        TestState *s = test_state();
        unsigned shown = s->n_skipped < 8 ? s->n_skipped : 8;

        if (s->n_skipped == 0)
                return EXIT_SUCCESS;
        fprintf(stderr, "%u subtest part%s did not run here:", s->n_skipped, s->n_skipped == 1 ? "" : "s");
        for (unsigned i = 0; i < shown; i++)
                fprintf(stderr, " %s", s->skipped[i]);
        fprintf(stderr, "%s (the rest passed)\n", s->n_skipped > shown ? " ..." : "");
        return EXIT_TEST_SKIP;
}
