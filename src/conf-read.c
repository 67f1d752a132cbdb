/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf-read.h"
#include "config.h"
#include "shared/bounded-child.h"
#include "shared/fd-util.h"
#include "shared/fileio.h"
#include "shared/strv.h"
#include "sleep-hooks.h"

/* ---- serialization (pure) --------------------------------------------------------------------- */

typedef struct Buf {
        char *data;
        size_t size, allocated;
} Buf;

static int buf_put(Buf *b, const void *p, size_t n) {
        if (n > CONF_STREAM_MAX || b->size > CONF_STREAM_MAX - n)
                return -E2BIG;
        if (b->size + n > b->allocated) {
                size_t a = MAX(b->allocated * 2, b->size + n + 256);
                char *t = realloc(b->data, a);

                if (!t)
                        return -ENOMEM;
                b->data = t;
                b->allocated = a;
        }
        if (n > 0)
                memcpy(b->data + b->size, p, n);
        b->size += n;
        return 0;
}

static int buf_put_u32(Buf *b, uint32_t v) {
        return buf_put(b, &v, sizeof v);
}

int conf_sources_serialize(const PolicySources *s, char **ret, size_t *ret_size) {
        Buf b = {};
        uint8_t flags = (s->explicit ? 1 : 0) | (s->truncated ? 2 : 0);
        int r;

        r = buf_put(&b, &flags, 1);
        if (r >= 0)
                r = buf_put_u32(&b, (uint32_t) s->n_files);
        for (size_t i = 0; r >= 0 && i < s->n_files; i++) {
                const PolicyFile *f = &s->files[i];
                int32_t error = f->error;
                uint8_t kind = (uint8_t) f->kind;
                size_t pl = strlen(f->path), size = f->error < 0 ? 0 : f->size;

                r = buf_put(&b, &error, sizeof error);
                if (r >= 0)
                        r = buf_put(&b, &kind, sizeof kind);
                if (r >= 0)
                        r = buf_put_u32(&b, (uint32_t) pl);
                if (r >= 0)
                        r = buf_put_u32(&b, (uint32_t) size);
                if (r >= 0)
                        r = buf_put(&b, f->path, pl);
                if (r >= 0)
                        r = buf_put(&b, f->text, size);
        }
        if (r < 0) {
                free(b.data);
                return r;
        }
        *ret = b.data;
        *ret_size = b.size;
        return 0;
}

typedef struct Reader {
        const char *p;
        size_t left;
} Reader;

static bool take(Reader *rd, void *out, size_t n) {
        if (rd->left < n)
                return false;
        if (out)
                memcpy(out, rd->p, n);
        rd->p += n;
        rd->left -= n;
        return true;
}

int conf_sources_parse(const char *buf, size_t size, PolicySources **ret) {
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        Reader rd = { buf, size };
        uint32_t n_files;
        uint8_t flags;
        int r;

        s = calloc(1, sizeof(PolicySources));
        if (!s)
                return -ENOMEM;
        if (!take(&rd, &flags, 1) || !take(&rd, &n_files, sizeof n_files) || (flags & ~3U) ||
            n_files > POLICY_MAX_SOURCES)
                return -EBADMSG;
        s->explicit = flags & 1;
        s->truncated = flags & 2;

        for (uint32_t i = 0; i < n_files; i++) {
                _cleanup_free_ char *path = NULL;
                uint32_t pl, tl;
                int32_t error;
                uint8_t kind;
                const char *text;

                if (!take(&rd, &error, sizeof error) || !take(&rd, &kind, sizeof kind) ||
                    !take(&rd, &pl, sizeof pl) || !take(&rd, &tl, sizeof tl))
                        return -EBADMSG;
                if (error > 0 || error < -4095 || pl == 0 || pl > PATH_MAX || tl > POLICY_MAX_FILE_SIZE ||
                    (error < 0 && tl > 0) || rd.left < (size_t) pl + tl)
                        return -EBADMSG;
                /* A directory not listed has its error; a notice has none (its text: a path or ""). */
                if (kind >= _POLICY_FILE_KIND_MAX || (kind == POLICY_FILE_UNLISTED_DIR && error == 0) ||
                    (kind != POLICY_FILE_CONF && kind != POLICY_FILE_UNLISTED_DIR &&
                     (error != 0 || tl > PATH_MAX || memchr(rd.p + pl, 0, tl))))
                        return -EBADMSG;
                path = strndup(rd.p, pl);
                if (!path)
                        return -ENOMEM;
                if (strlen(path) != pl)
                        return -EBADMSG; /* NUL inside the path */
                take(&rd, NULL, pl);
                text = rd.p;
                take(&rd, NULL, tl);
                r = policy_sources_add_kind(s, (PolicyFileKind) kind, path, error, text, tl);
                if (r < 0)
                        return r == -E2BIG ? -EBADMSG : r;
        }
        if (rd.left != 0)
                return -EBADMSG;

        *ret = TAKE_PTR(s);
        return 0;
}

void conf_stream_done(ConfStream *s) {
        s->progress = mfree(s->progress);
        s->sources = policy_sources_free(s->sources);
        s->hooks = strv_free(s->hooks);
        s->n_hooks = 0;
        s->hooks_done = false;
        s->hook_ours = -ENODATA;
        s->hook_other = mfree(s->hook_other);
        s->error = 0;
}

int conf_stream_parse(const char *buf, size_t size, ConfStream *ret) {
        _cleanup_(conf_stream_done) ConfStream st = { .hook_ours = -ENODATA };
        Reader rd = { buf, size };
        int r;

        while (rd.left >= 5 && !st.hooks_done) {
                char kind = rd.p[0];
                uint32_t len;

                memcpy(&len, rd.p + 1, sizeof len);
                /* P any time; one S, then one O; H and E (the end of the hooks) only after them. */
                if (!strchr("PHSOEX", kind) || kind == '\0' || (kind == 'S' && st.sources) ||
                    (kind == 'O' && (!st.sources || st.hook_ours != -ENODATA)) ||
                    ((kind == 'H' || kind == 'E') && st.hook_ours == -ENODATA) || (kind == 'E' && len != 0) ||
                    ((kind == 'P' || kind == 'H') && (len == 0 || len > PATH_MAX)) ||
                    (kind == 'O' && (len == 0 || len > PATH_MAX + 1)) ||
                    (kind == 'X' && len != sizeof(int32_t)))
                        return -EBADMSG;
                if (rd.left - 5 < len)
                        break; /* incomplete: more to come */
                take(&rd, NULL, 5);
                if (kind == 'P') {
                        free(st.progress);
                        st.progress = strndup(rd.p, len);
                        if (!st.progress)
                                return -ENOMEM;
                } else if (kind == 'H') {
                        if (st.n_hooks > SLEEP_HOOKS_MAX || memchr(rd.p, 0, len))
                                return -EBADMSG;
                        r = strv_consume(&st.hooks, &st.n_hooks, strndup(rd.p, len));
                        if (r < 0)
                                return r;
                } else if (kind == 'O') {
                        if (!strchr("10e", rd.p[0]) || rd.p[0] == '\0' || (rd.p[0] != '0' && len != 1) ||
                            memchr(rd.p, 0, len))
                                return -EBADMSG;
                        st.hook_ours = rd.p[0] == '1' ? 1 : rd.p[0] == '0' ? 0 : -EIO;
                        if (len > 1) {
                                st.hook_other = strndup(rd.p + 1, len - 1);
                                if (!st.hook_other)
                                        return -ENOMEM;
                        }
                } else if (kind == 'X') {
                        int32_t e;

                        memcpy(&e, rd.p, sizeof e);
                        if (e <= 0 || e >= 4096)
                                return -EBADMSG;
                        st.error = -e;
                } else if (kind == 'S') {
                        r = conf_sources_parse(rd.p, len, &st.sources);
                        if (r < 0)
                                return r;
                } else
                        st.hooks_done = true;
                take(&rd, NULL, len);
        }

        conf_stream_done(ret);
        *ret = st;
        st = (ConfStream) {};
        return 0;
}

/* ---- the child -------------------------------------------------------------------------------- */

static int write_record(int fd, char kind, const char *p, size_t n) {
        char head[5];
        uint32_t len = (uint32_t) n;
        int r;

        head[0] = kind;
        memcpy(head + 1, &len, sizeof len);
        r = loop_write(fd, head, sizeof head);
        return r < 0 ? r : loop_write(fd, p, n);
}

/* One write per progress record: the parent wakes once per path, not twice. */
static void child_progress(const char *path, void *userdata) {
        char rec[5 + PATH_MAX];
        uint32_t n = (uint32_t) strlen(path);

        if (n == 0 || n > PATH_MAX)
                return;
        rec[0] = 'P';
        memcpy(rec + 1, &n, sizeof n);
        memcpy(rec + 5, path, n);
        (void) loop_write(*(int *) userdata, rec, 5 + n);
}

/* The other hooks as 'H' records; a directory that cannot be read is named instead (it may hold one). */
static int child_hooks(int root_fd, int fd) {
        _cleanup_strv_free_ char **hooks = NULL;
        int r;

        r = sleep_hooks_list(root_fd, child_progress, &fd, &hooks);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                static const char unreadable[] = "a system-sleep directory that cannot be read";
                return write_record(fd, 'H', unreadable, sizeof unreadable - 1);
        }
        for (char **h = hooks; h && *h; h++) {
                r = write_record(fd, 'H', *h, strlen(*h));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Our own system-sleep entry, one 'O' record. Tests: below $SUSPEND_SYNC_TEST_SLEEP_ROOT instead (a
 * suspend-sync installed there, on a machine where it is not). */
static int child_ours(int root_fd, int fd) {
        _cleanup_free_ char *other = NULL, *rec = NULL;
        _cleanup_close_ int test_fd = -EBADF;
        const char *test_root = getenv("SUSPEND_SYNC_TEST_SLEEP_ROOT");
        int r;

        if (test_root)
                test_fd = open(test_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = test_root && test_fd < 0 ? -errno
                                     : sleep_hook_ours(test_root ? test_fd : root_fd, SYSTEM_SLEEP_DIR,
                                                       child_progress, &fd, &other);
        if (r == -ENOMEM)
                return r;
        if (asprintf(&rec, "%c%s", r < 0 ? 'e' : r > 0 ? '1' : '0', r == 0 && other ? other : "") < 0)
                return -ENOMEM;
        return write_record(fd, 'O', rec, MIN(strlen(rec), (size_t) PATH_MAX + 1));
}

/* What the child is given (config_path, want_hooks) and what the parent received. */
struct ConfReader {
        const char *config_path;
        bool want_hooks;
        bool want_ours; /* conf_reader_want_hook_ours() */
        ConfStream st;
        BoundedChild child;
};

static int child(int fd, int root_fd, void *userdata) {
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_free_ char *data = NULL;
        const ConfReader *x = userdata;
        size_t size;
        int32_t e;
        int r;

        /* The configuration first: a hook directory that hangs then costs the hooks only. */
        r = policy_read_sources(root_fd, x->config_path, child_progress, &fd, &s);
        if (r >= 0)
                r = conf_sources_serialize(s, &data, &size);
        if (r >= 0)
                r = write_record(fd, 'S', data, size);
        if (r >= 0)
                r = child_ours(root_fd, fd);
        if (r >= 0 && x->want_hooks) {
                r = child_hooks(root_fd, fd);
                if (r >= 0)
                        r = write_record(fd, 'E', NULL, 0);
        }
        if (r >= 0)
                return EXIT_SUCCESS;
        /* Why, for the parent's message (EMFILE, ENOMEM: not a protocol error, review AS, AS-5). */
        e = (int32_t) -r;
        (void) write_record(fd, 'X', (const char *) &e, sizeof e);
        return EXIT_FAILURE;
}

/* ---- the parent ------------------------------------------------------------------------------- */

ConfReader *conf_reader_free(ConfReader *x) {
        if (!x)
                return NULL;
        bounded_child_cancel(&x->child);
        conf_stream_done(&x->st);
        free(x);
        return NULL;
}

bool conf_stream_complete(const ConfStream *s, bool want_hooks, bool want_ours) {
        return s->sources && (!want_ours || s->hook_ours != -ENODATA) && (!want_hooks || s->hooks_done);
}

/* Complete as soon as the stream is (conf_stream_complete()): the child's exit is not waited for. */
static int feed(const char *buf, size_t size, void *userdata) {
        ConfReader *x = userdata;
        int r;

        r = conf_stream_parse(buf, size, &x->st);
        return r < 0 ? r : conf_stream_complete(&x->st, x->want_hooks, x->want_ours);
}

void conf_reader_want_hook_ours(ConfReader *x) {
        x->want_ours = true;
}

/* Started now (prepared false: bounded_child_start(), with timeout), or prepared to start at
 * conf_read_go() (bounded_child_prepare(), named idle_name meanwhile). */
static int reader_fork(int root_fd, const char *config_path, bool want_hooks, bool prepared,
                       const char *idle_name, usec_t timeout, ConfReader **ret) {
        _cleanup_(conf_reader_freep) ConfReader *x = NULL;
        int r;

        x = malloc(sizeof *x);
        if (!x)
                return -ENOMEM;
        *x = (ConfReader) { .config_path = config_path,
                            .want_hooks = want_hooks,
                            .st.hook_ours = -ENODATA,
                            .child = BOUNDED_CHILD_NULL };
        r = prepared ? bounded_child_prepare(root_fd, CONF_STREAM_MAX, idle_name, child, x, &x->child)
                     : bounded_child_start(root_fd, timeout, CONF_STREAM_MAX, child, x, &x->child);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(x);
        return 0;
}

int conf_read_start(int root_fd, const char *config_path, usec_t timeout, bool want_hooks, ConfReader **ret) {
        return reader_fork(root_fd, config_path, want_hooks, false, NULL, timeout, ret);
}

int conf_read_prepare(int root_fd, const char *config_path, bool want_hooks, const char *idle_name,
                      ConfReader **ret) {
        return reader_fork(root_fd, config_path, want_hooks, true, idle_name, 0, ret);
}

bool conf_reader_prepared_for(const ConfReader *x, const char *config_path, bool want_hooks) {
        return x && x->child.pid > 0 && x->child.go_fd >= 0 && streq_ptr(x->config_path, config_path) &&
               x->want_hooks == want_hooks;
}

int conf_read_go(ConfReader *x, usec_t timeout) {
        return bounded_child_go(&x->child, timeout);
}

int conf_reader_fd(const ConfReader *x) {
        return x->child.fd;
}

usec_t conf_reader_until(const ConfReader *x) {
        return x->child.until;
}

int conf_read_step(ConfReader *x) {
        return bounded_child_step(&x->child, feed, x);
}

int conf_read_finish(ConfReader *x, PolicySources **ret, char ***ret_hooks, int *ret_hooks_error,
                     char **ret_stuck_at) {
        int r;

        assert(x->want_hooks == !!ret_hooks);
        *ret_stuck_at = NULL;
        if (ret_hooks_error)
                *ret_hooks_error = -ENODATA;
        r = bounded_child_finish(&x->child, feed, x);
        if (r <= 0 && !x->st.sources) {
                /* Stuck (most likely in the kernel, on a hung mount) or failed: the child was killed
                 * and abandoned. */
                if (r == -ETIMEDOUT)
                        *ret_stuck_at = TAKE_PTR(x->st.progress);
                /* EOF without sources: the child failed, and said why ('X'), or died */
                r = r < 0 ? r : x->st.error < 0 ? x->st.error : -EPROTO;
                if (ret_hooks_error)
                        *ret_hooks_error = r;
                return r;
        }

        /* The configuration is in; the hooks only when their end arrived too. */
        if (ret_hooks && x->st.hooks_done) {
                *ret_hooks = TAKE_PTR(x->st.hooks);
                *ret_hooks_error = 0;
        } else if (ret_hooks)
                *ret_hooks_error = r < 0 ? r : x->st.error < 0 ? x->st.error : -EPROTO;
        *ret = TAKE_PTR(x->st.sources);
        return 0;
}

int conf_read_hook_ours(ConfReader *x, char **ret_other) {
        if (ret_other)
                *ret_other = TAKE_PTR(x->st.hook_other);
        return x->st.hook_ours;
}

int conf_read_bounded(int root_fd, const char *config_path, usec_t timeout, PolicySources **ret,
                      char ***ret_hooks, int *ret_hooks_error, char **ret_stuck_at) {
        _cleanup_(conf_reader_freep) ConfReader *x = NULL;
        int r;

        r = conf_read_start(root_fd, config_path, timeout, ret_hooks, &x);
        if (r < 0) {
                *ret_stuck_at = NULL;
                if (ret_hooks_error)
                        *ret_hooks_error = r;
                return r;
        }
        return conf_read_finish(x, ret, ret_hooks, ret_hooks_error, ret_stuck_at);
}
