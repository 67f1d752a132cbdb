/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <json-c/json.h>

#include "shared/fileio.h"
#include "shared/macro.h"
#include "state.h"

#define STATE_LAST_FILE "last.json"
#define STATE_HISTORY_DIR "history"
#define STATE_HISTORY_SCAN_MAX 4096U     /* directory entries looked at, bounded */
#define STATE_LOCK_FILE "lock"

/* history array → record → mounts array → mount: 4 levels; leave a little room, no more. */
#define STATE_JSON_DEPTH 8
#define STATE_ERRNO_MAX 4095

#define JSON_FLAGS_PRETTY (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)
#define JSON_FLAGS_SHORT (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static inline void json_object_unrefp(json_object **p) {
        if (*p)
                (void) json_object_put(*p);
}
#define _cleanup_json_ _cleanup_(json_object_unrefp)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_tokener *, json_tokener_free);

/* ---- byte helpers ---- */

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. Returns the
 * length of the valid sequence at s (at most n bytes available), or 0 if it is invalid. */
static size_t utf8_sequence_length(const unsigned char *s, size_t n) {
        unsigned char c = s[0];
        size_t len, i;
        unsigned char lo = 0x80, hi = 0xBF;

        if (c < 0x80)
                return 1;
        if (c < 0xC2)
                return 0;
        if (c < 0xE0)
                len = 2;
        else if (c < 0xF0) {
                len = 3;
                if (c == 0xE0)
                        lo = 0xA0;
                else if (c == 0xED)
                        hi = 0x9F;
        } else if (c < 0xF5) {
                len = 4;
                if (c == 0xF0)
                        lo = 0x90;
                else if (c == 0xF4)
                        hi = 0x8F;
        } else
                return 0;

        if (n < len)
                return 0;
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (i = 2; i < len; i++)
                if (s[i] < 0x80 || s[i] > 0xBF)
                        return 0;
        return len;
}

static bool utf8_is_valid(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s;

        while (n > 0) {
                size_t l = utf8_sequence_length(p, n);
                if (l == 0)
                        return false;
                p += l;
                n -= l;
        }
        return true;
}

/* Copy of s with every byte that does not start a valid sequence replaced by U+FFFD. */
static char *utf8_lossy(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s;
        char *buf, *q;

        buf = malloc(n * 3 + 1);
        if (!buf)
                return NULL;
        q = buf;
        while (n > 0) {
                size_t l = utf8_sequence_length(p, n);
                if (l == 0) {
                        memcpy(q, "\xEF\xBF\xBD", 3);
                        q += 3;
                        l = 1;
                } else {
                        memcpy(q, p, l);
                        q += l;
                }
                p += l;
                n -= l;
        }
        *q = 0;
        return buf;
}

static char *hexmem(const char *s, size_t n) {
        static const char digits[] = "0123456789abcdef";
        char *buf;
        size_t i;

        buf = malloc(n * 2 + 1);
        if (!buf)
                return NULL;
        for (i = 0; i < n; i++) {
                buf[2 * i] = digits[(unsigned char) s[i] >> 4];
                buf[2 * i + 1] = digits[(unsigned char) s[i] & 0xF];
        }
        buf[2 * n] = 0;
        return buf;
}

static int unhexchar(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EBADMSG;
}

/* Decodes hex into a NUL-terminated string; refuses odd lengths, non-hex digits and NUL bytes. */
static int unhexstr(const char *s, size_t n, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t i;

        if (n % 2 != 0)
                return -EBADMSG;
        buf = malloc(n / 2 + 1);
        if (!buf)
                return -ENOMEM;
        for (i = 0; i < n / 2; i++) {
                int a = unhexchar(s[2 * i]), b = unhexchar(s[2 * i + 1]);
                if (a < 0 || b < 0)
                        return -EBADMSG;
                if (a == 0 && b == 0)
                        return -EBADMSG;
                buf[i] = (char) (a << 4 | b);
        }
        buf[n / 2] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

static const char *errno_to_name(int e) {
        if (e <= 0)
                return NULL;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
        return strerrorname_np(e);
#else
        static const struct {
                int e;
                const char *name;
        } table[] = {
                { EPERM, "EPERM" },   { ENOENT, "ENOENT" },       { EINTR, "EINTR" },
                { EIO, "EIO" },       { ENXIO, "ENXIO" },         { EBADF, "EBADF" },
                { ECHILD, "ECHILD" }, { EAGAIN, "EAGAIN" },       { ENOMEM, "ENOMEM" },
                { EACCES, "EACCES" }, { EBUSY, "EBUSY" },         { ENODEV, "ENODEV" },
                { ENOTDIR, "ENOTDIR" }, { EINVAL, "EINVAL" },     { ENOSPC, "ENOSPC" },
                { EROFS, "EROFS" },   { ENOSYS, "ENOSYS" },       { ETIMEDOUT, "ETIMEDOUT" },
                { EDQUOT, "EDQUOT" }, { ENOTCONN, "ENOTCONN" },   { ESTALE, "ESTALE" },
                { ECONNABORTED, "ECONNABORTED" }, { EHOSTDOWN, "EHOSTDOWN" },
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].e == e)
                        return table[i].name;
        return NULL;
#endif
}

/* ---- JSON building ---- */

/* Takes ownership of v (NULL v means allocation failure). */
static int json_add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                (void) json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int json_add_null(json_object *o, const char *key) {
        return json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0;
}

static int json_add_u64(json_object *o, const char *key, uint64_t u) {
        return json_add(o, key, json_object_new_uint64(u));
}

/* Adds a string (or null for NULL); invalid UTF-8 is written lossily plus "<key>_hex". */
static int json_add_str(json_object *o, const char *key, const char *s) {
        _cleanup_free_ char *lossy = NULL, *hex = NULL, *hex_key = NULL;
        size_t n;
        int r;

        if (!s)
                return json_add_null(o, key);
        n = strlen(s);
        if (n > STATE_STRING_MAX)
                return -E2BIG;
        if (utf8_is_valid(s, n))
                return json_add(o, key, json_object_new_string_len(s, (int) n));

        lossy = utf8_lossy(s, n);
        hex = hexmem(s, n);
        if (!lossy || !hex || asprintf(&hex_key, "%s_hex", key) < 0)
                return -ENOMEM;
        r = json_add(o, key, json_object_new_string(lossy));
        if (r < 0)
                return r;
        return json_add(o, hex_key, json_object_new_string(hex));
}

static int run_mount_to_json(const RunMount *m, json_object **ret) {
        _cleanup_json_ json_object *o = NULL;
        const char *name;
        int r;

        if (!m->mount_point || !m->action || !m->outcome)
                return -EINVAL;
        if (m->error < 0 || m->error > STATE_ERRNO_MAX || m->abandoned_pid < 0)
                return -EINVAL;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;

        if ((r = json_add_str(o, "mount_point", m->mount_point)) < 0 ||
            (r = json_add_str(o, "fstype", m->fstype)) < 0 ||
            (r = json_add_str(o, "action", m->action)) < 0 ||
            (r = json_add_str(o, "reason", m->reason)) < 0 ||
            (r = json_add_str(o, "outcome", m->outcome)) < 0 ||
            (r = json_add_u64(o, "duration_usec", m->duration)) < 0 ||
            (r = json_add(o, "errno", json_object_new_int(m->error))) < 0)
                return r;

        name = errno_to_name(m->error);
        r = name ? json_add_str(o, "errno_name", name) : json_add_null(o, "errno_name");
        if (r < 0)
                return r;

        r = m->abandoned_pid > 0 ? json_add(o, "abandoned_pid", json_object_new_int(m->abandoned_pid))
                                 : json_add_null(o, "abandoned_pid");
        if (r < 0)
                return r;
        if (m->namespace_ino > 0 && (r = json_add_u64(o, "namespace_ino", m->namespace_ino)) < 0)
                return r;

        *ret = TAKE_PTR(o);
        return 0;
}

static int run_record_to_json(const RunRecord *rec, json_object **ret) {
        _cleanup_json_ json_object *o = NULL, *phases = NULL, *mounts = NULL;
        int r;

        if (!rec || !rec->result)
                return -EINVAL;
        if (rec->n_mounts > STATE_MAX_MOUNTS)
                return -E2BIG;
        if (rec->n_mounts > 0 && !rec->mounts)
                return -EINVAL;

        o = json_object_new_object();
        phases = json_object_new_object();
        mounts = json_object_new_array_ext((int) rec->n_mounts);
        if (!o || !phases || !mounts)
                return -ENOMEM;

        if ((r = json_add_u64(o, "started_realtime_usec", rec->started_realtime)) < 0 ||
            (r = json_add_u64(o, "duration_usec", rec->duration)) < 0 ||
            (r = json_add_str(o, "result", rec->result)) < 0 ||
            (r = json_add_str(o, "trigger", rec->trigger)) < 0 ||
            (r = json_add_str(o, "sleep_action", rec->sleep_action)) < 0 ||
            (r = json_add_u64(o, "deadline_usec", rec->deadline)) < 0)
                return r;

        if ((r = json_add_u64(phases, "read", rec->t_read)) < 0 ||
            (r = json_add_u64(phases, "sample", rec->t_sample)) < 0 ||
            (r = json_add_u64(phases, "plan", rec->t_plan)) < 0 ||
            (r = json_add_u64(phases, "execute", rec->t_execute)) < 0 ||
            (r = json_add_u64(phases, "record", rec->t_record)) < 0)
                return r;
        r = json_add(o, "phases_usec", TAKE_PTR(phases));
        if (r < 0)
                return r;

        for (size_t i = 0; i < rec->n_mounts; i++) {
                json_object *m = NULL;

                r = run_mount_to_json(rec->mounts + i, &m);
                if (r < 0)
                        return r;
                if (json_object_array_add(mounts, m) < 0) {
                        (void) json_object_put(m);
                        return -ENOMEM;
                }
        }
        r = json_add(o, "mounts", TAKE_PTR(mounts));
        if (r < 0)
                return r;

        if (rec->has_complete) {
                _cleanup_json_ json_object *why = NULL;

                if (rec->n_incomplete_why > STATE_REASONS_MAX)
                        return -E2BIG;
                why = json_object_new_array();
                if (!why)
                        return -ENOMEM;
                for (size_t i = 0; i < rec->n_incomplete_why; i++) {
                        if (!rec->incomplete_why[i] || strlen(rec->incomplete_why[i]) > STATE_STRING_MAX)
                                return -EINVAL;
                        if (json_object_array_add(why, json_object_new_string(rec->incomplete_why[i])) < 0)
                                return -ENOMEM;
                }
                r = json_add(o, "complete", json_object_new_boolean(rec->complete));
                if (r < 0)
                        return r;
                r = json_add(o, "incomplete_why", TAKE_PTR(why));
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(o);
        return 0;
}

static int json_to_string(json_object *o, int flags, char **ret) {
        const char *s;
        size_t len = 0;
        char *copy;

        s = json_object_to_json_string_length(o, flags, &len);
        if (!s)
                return -ENOMEM;
        copy = strndup(s, len);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}

int run_record_to_json_string(const RunRecord *r, bool pretty, char **ret) {
        _cleanup_json_ json_object *o = NULL;
        int k;

        k = run_record_to_json(r, &o);
        if (k < 0)
                return k;
        return json_to_string(o, pretty ? JSON_FLAGS_PRETTY : JSON_FLAGS_SHORT, ret);
}

/* ---- JSON parsing ---- */

/* Looks up key; a missing key and JSON null are the same (returns NULL). */
static json_object *json_get(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

static int json_get_u64(json_object *o, const char *key, bool required, uint64_t *ret) {
        json_object *v = json_get(o, key);

        if (!v) {
                if (required)
                        return -EBADMSG;
                *ret = 0;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return -EBADMSG;
        if (json_object_get_int64(v) < 0)
                return -EBADMSG;
        *ret = json_object_get_uint64(v);
        return 0;
}

static int json_get_int(json_object *o, const char *key, int max, int *ret) {
        uint64_t u;
        int r;

        r = json_get_u64(o, key, false, &u);
        if (r < 0)
                return r;
        if (u > (uint64_t) max)
                return -EBADMSG;
        *ret = (int) u;
        return 0;
}

static int json_get_str(json_object *o, const char *key, bool required, char **ret) {
        _cleanup_free_ char *hex_key = NULL;
        json_object *v;
        const char *s;
        size_t n;
        char *copy;

        if (asprintf(&hex_key, "%s_hex", key) < 0)
                return -ENOMEM;

        /* The raw bytes, if present, win over the lossy UTF-8 form. */
        v = json_get(o, hex_key);
        if (v) {
                if (!json_object_is_type(v, json_type_string))
                        return -EBADMSG;
                n = (size_t) json_object_get_string_len(v);
                if (n > 2 * (size_t) STATE_STRING_MAX)
                        return -EBADMSG;
                return unhexstr(json_object_get_string(v), n, ret);
        }

        v = json_get(o, key);
        if (!v) {
                if (required)
                        return -EBADMSG;
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return -EBADMSG;
        s = json_object_get_string(v);
        n = (size_t) json_object_get_string_len(v);
        /* \u escapes can still produce NUL or lone surrogates */
        if (n > STATE_STRING_MAX || memchr(s, 0, n) || !utf8_is_valid(s, n))
                return -EBADMSG;
        copy = strndup(s, n);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}

static void run_mount_done(RunMount *m) {
        free(m->mount_point);
        free(m->fstype);
        free(m->action);
        free(m->reason);
        free(m->outcome);
        *m = (RunMount) {};
}

static int run_mount_from_json(json_object *o, RunMount *ret) {
        RunMount m = {};
        json_object *v;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;

        if ((r = json_get_str(o, "mount_point", true, &m.mount_point)) < 0 ||
            (r = json_get_str(o, "fstype", false, &m.fstype)) < 0 ||
            (r = json_get_str(o, "action", true, &m.action)) < 0 ||
            (r = json_get_str(o, "reason", false, &m.reason)) < 0 ||
            (r = json_get_str(o, "outcome", true, &m.outcome)) < 0 ||
            (r = json_get_u64(o, "duration_usec", false, &m.duration)) < 0 ||
            (r = json_get_int(o, "errno", STATE_ERRNO_MAX, &m.error)) < 0 ||
            (r = json_get_int(o, "abandoned_pid", INT_MAX, &m.abandoned_pid)) < 0 ||
            (r = json_get_u64(o, "namespace_ino", false, &m.namespace_ino)) < 0)
                goto fail;

        /* Derived from errno on output; only its type is checked. */
        v = json_get(o, "errno_name");
        if (v && !json_object_is_type(v, json_type_string)) {
                r = -EBADMSG;
                goto fail;
        }

        *ret = m;
        return 0;
fail:
        run_mount_done(&m);
        return r;
}

static int run_record_from_json(json_object *o, RunRecord *ret) {
        _cleanup_(run_record_done) RunRecord rec = {};
        json_object *phases, *mounts;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;

        if ((r = json_get_u64(o, "started_realtime_usec", true, &rec.started_realtime)) < 0 ||
            (r = json_get_u64(o, "duration_usec", false, &rec.duration)) < 0 ||
            (r = json_get_str(o, "result", true, &rec.result)) < 0 ||
            (r = json_get_str(o, "trigger", false, &rec.trigger)) < 0 ||
            (r = json_get_str(o, "sleep_action", false, &rec.sleep_action)) < 0 ||
            (r = json_get_u64(o, "deadline_usec", false, &rec.deadline)) < 0)
                return r;

        phases = json_get(o, "phases_usec");
        if (phases) {
                if (!json_object_is_type(phases, json_type_object))
                        return -EBADMSG;
                if ((r = json_get_u64(phases, "read", false, &rec.t_read)) < 0 ||
                    (r = json_get_u64(phases, "sample", false, &rec.t_sample)) < 0 ||
                    (r = json_get_u64(phases, "plan", false, &rec.t_plan)) < 0 ||
                    (r = json_get_u64(phases, "execute", false, &rec.t_execute)) < 0 ||
                    (r = json_get_u64(phases, "record", false, &rec.t_record)) < 0)
                        return r;
        }

        {
                json_object *c = json_get(o, "complete"), *why = json_get(o, "incomplete_why");

                if (c) {
                        if (!json_object_is_type(c, json_type_boolean))
                                return -EBADMSG;
                        rec.has_complete = true;
                        rec.complete = json_object_get_boolean(c);
                }
                if (why) {
                        size_t n;

                        if (!json_object_is_type(why, json_type_array))
                                return -EBADMSG;
                        n = json_object_array_length(why);
                        if (n > STATE_REASONS_MAX)
                                return -EBADMSG;
                        rec.incomplete_why = calloc(MAX(n, 1), sizeof(char *));
                        if (!rec.incomplete_why)
                                return -ENOMEM;
                        for (size_t i = 0; i < n; i++) {
                                json_object *v = json_object_array_get_idx(why, i);

                                if (!json_object_is_type(v, json_type_string) ||
                                    (size_t) json_object_get_string_len(v) > STATE_STRING_MAX)
                                        return -EBADMSG;
                                rec.incomplete_why[i] = strdup(json_object_get_string(v));
                                if (!rec.incomplete_why[i])
                                        return -ENOMEM;
                                rec.n_incomplete_why = i + 1;
                        }
                }
        }

        mounts = json_get(o, "mounts");
        if (mounts) {
                size_t n;

                if (!json_object_is_type(mounts, json_type_array))
                        return -EBADMSG;
                n = json_object_array_length(mounts);
                if (n > STATE_MAX_MOUNTS)
                        return -EBADMSG;
                if (n > 0) {
                        rec.mounts = calloc(n, sizeof(RunMount));
                        if (!rec.mounts)
                                return -ENOMEM;
                }
                for (size_t i = 0; i < n; i++) {
                        r = run_mount_from_json(json_object_array_get_idx(mounts, i), rec.mounts + i);
                        if (r < 0)
                                return r;
                        rec.n_mounts++;
                }
        }

        *ret = rec;
        rec = (RunRecord) {};
        return 0;
}

/* Parses exactly 'len' bytes of strict JSON (valid UTF-8, bounded depth, nothing trailing). */
static int json_parse_bounded(const char *text, size_t len, json_object **ret) {
        _cleanup_(json_tokener_freep) struct json_tokener *tok = NULL;
        json_object *o;
        enum json_tokener_error e;

        if (len > STATE_FILE_MAX)
                return -EFBIG;
        /* json-c's own check lets surrogates (ED A0..BF ..) through; ours is strict. */
        if (memchr(text, 0, len) || !utf8_is_valid(text, len))
                return -EBADMSG;

        tok = json_tokener_new_ex(STATE_JSON_DEPTH);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);

        o = json_tokener_parse_ex(tok, text, (int) len);
        e = json_tokener_get_error(tok);
        if (e != json_tokener_success || !o) {
                if (o)
                        (void) json_object_put(o);
                return -EBADMSG;
        }
        /* Only whitespace may follow the value. */
        for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
                if (!strchr(" \t\r\n", text[i])) {
                        (void) json_object_put(o);
                        return -EBADMSG;
                }

        *ret = o;
        return 0;
}

int run_record_from_json_string(const char *text, RunRecord *ret) {
        _cleanup_json_ json_object *o = NULL;
        size_t len;
        int r;

        if (!text)
                return -EINVAL;
        len = strnlen(text, (size_t) STATE_FILE_MAX + 1);
        r = json_parse_bounded(text, len, &o);
        if (r < 0)
                return r;
        return run_record_from_json(o, ret);
}

void run_record_done(RunRecord *r) {
        if (!r)
                return;
        free(r->result);
        free(r->trigger);
        free(r->sleep_action);
        for (size_t i = 0; i < r->n_mounts; i++)
                run_mount_done(r->mounts + i);
        free(r->mounts);
        for (size_t i = 0; i < r->n_incomplete_why; i++)
                free(r->incomplete_why[i]);
        free(r->incomplete_why);
        *r = (RunRecord) {};
}

void run_record_array_free(RunRecord *a, size_t n) {
        if (!a)
                return;
        for (size_t i = 0; i < n; i++)
                run_record_done(a + i);
        free(a);
}

static int write_string_file(int dir_fd, const char *name, const char *s) {
        _cleanup_free_ char *buf = NULL;
        size_t n = strlen(s);

        buf = malloc(n + 2);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, s, n);
        buf[n] = '\n';
        buf[n + 1] = 0;
        return write_file_atomic_at(dir_fd, name, buf, n + 1);
}

/* ---- history ----
 *
 * One file per run in history/, named "<started_realtime_usec, 20 digits>-<pid>.json" so that names
 * sort by age. A run writes its own file and removes the oldest beyond STATE_HISTORY_MAX; it never
 * reads or rewrites the others (at 1000 mounts a record is ~200 kB: parsing and rewriting 16 of
 * them cost a run 100 ms and 40 MiB). A file that does not parse is skipped on load and counted. */

static bool history_name_valid(const char *n) {
        size_t pid_len;

        /* <20 digits>-<digits>.json */
        if (strspn(n, "0123456789") != 20 || n[20] != '-')
                return false;
        pid_len = strspn(n + 21, "0123456789");
        return pid_len > 0 && pid_len <= 10 && streq(n + 21 + pid_len, ".json");
}

static int cmp_name_desc(const void *a, const void *b) {
        return -strcmp(*(char *const *) a, *(char *const *) b);
}

static void strv_free_n(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* History file names, newest first. */
static int history_list(int dir_fd, char ***ret, size_t *ret_n) {
        _cleanup_close_ int fd = -EBADF;
        char **names = NULL;
        size_t n = 0;
        DIR *d;
        struct dirent *de;

        fd = openat(dir_fd, STATE_HISTORY_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                if (errno != ENOENT)
                        return negative_errno();
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        d = fdopendir(TAKE_FD(fd));
        if (!d)
                return negative_errno();
        names = calloc(STATE_HISTORY_SCAN_MAX, sizeof(char *));
        if (!names) {
                closedir(d);
                return -ENOMEM;
        }
        while ((de = readdir(d)) && n < STATE_HISTORY_SCAN_MAX) {
                if (!history_name_valid(de->d_name))
                        continue;
                names[n] = strdup(de->d_name);
                if (!names[n]) {
                        closedir(d);
                        strv_free_n(names, n);
                        return -ENOMEM;
                }
                n++;
        }
        closedir(d);
        qsort(names, n, sizeof(char *), cmp_name_desc);
        *ret = names;
        *ret_n = n;
        return 0;
}

int state_load_history(const char *dir, RunRecord **ret, size_t *ret_n, size_t *ret_n_corrupt) {
        _cleanup_close_ int dir_fd = -EBADF, hist_fd = -EBADF;
        RunRecord *records = NULL;
        char **names = NULL;
        size_t n_names = 0, n = 0, n_corrupt = 0;
        int r;

        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0 && errno != ENOENT)
                return negative_errno();
        if (dir_fd >= 0) {
                r = history_list(dir_fd, &names, &n_names);
                if (r < 0)
                        return r;
        }
        if (n_names > 0) {
                hist_fd = openat(dir_fd, STATE_HISTORY_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                records = calloc(MIN(n_names, (size_t) STATE_HISTORY_MAX), sizeof(RunRecord));
                if (hist_fd < 0 || !records) {
                        r = hist_fd < 0 ? negative_errno() : -ENOMEM;
                        strv_free_n(names, n_names);
                        free(records);
                        return r;
                }
        }
        for (size_t i = 0; i < n_names && n < STATE_HISTORY_MAX; i++) {
                _cleanup_free_ char *text = NULL;
                size_t size = 0;

                r = read_full_file_at(hist_fd, names[i], STATE_FILE_MAX, &text, &size);
                if (r == -ENOMEM) {
                        strv_free_n(names, n_names);
                        run_record_array_free(records, n);
                        return r;
                }
                if (r < 0 || memchr(text, 0, size) || run_record_from_json_string(text, records + n) < 0) {
                        n_corrupt++;
                        continue;
                }
                n++;
        }
        strv_free_n(names, n_names);
        if (n == 0) {
                free(records);
                records = NULL;
        }
        *ret = records;
        *ret_n = n;
        if (ret_n_corrupt)
                *ret_n_corrupt = n_corrupt;
        return 0;
}

/* Writes this run's history file and drops the oldest beyond STATE_HISTORY_MAX. */
static int history_append(int dir_fd, const RunRecord *r, const char *text) {
        _cleanup_close_ int hist_fd = -EBADF;
        char name[64], **names = NULL;
        size_t n = 0;
        int k;

        if (mkdirat(dir_fd, STATE_HISTORY_DIR, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        hist_fd = openat(dir_fd, STATE_HISTORY_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (hist_fd < 0)
                return negative_errno();
        snprintf(name, sizeof name, "%020llu-%d.json", (unsigned long long) r->started_realtime, (int) getpid());
        k = write_string_file(hist_fd, name, text);
        if (k < 0)
                return k;

        k = history_list(dir_fd, &names, &n);
        if (k < 0)
                return k;
        for (size_t i = STATE_HISTORY_MAX; i < n; i++)
                (void) unlinkat(hist_fd, names[i], 0);
        strv_free_n(names, n);
        return 0;
}

/* ---- directory ---- */

static int mkdir_p(const char *path, mode_t mode) {
        _cleanup_free_ char *copy = NULL;

        if (!path || path[0] != '/')
                return -EINVAL;
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;

        for (char *p = copy + 1;; p++) {
                char c = *p;

                if (c != '/' && c != 0)
                        continue;
                *p = 0;
                if (mkdir(copy, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                *p = c;
                if (c == 0)
                        break;
        }
        return 0;
}

static int state_dir_open(const char *dir) {
        int r, fd;

        r = mkdir_p(dir, 0755);
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return fd;
}


int state_save(const char *dir, const RunRecord *r) {
        _cleanup_json_ json_object *rec = NULL;
        _cleanup_free_ char *last = NULL, *shortform = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        int k;

        if (!dir || dir[0] != '/')
                return -EINVAL;

        /* Serialise first: a bad record touches nothing. */
        k = run_record_to_json(r, &rec);
        if (k < 0)
                return k;
        k = json_to_string(rec, JSON_FLAGS_PRETTY, &last);
        if (k < 0)
                return k;
        if (strlen(last) + 1 > STATE_FILE_MAX)
                return -EFBIG;
        k = json_to_string(rec, JSON_FLAGS_SHORT, &shortform);
        if (k < 0)
                return k;

        dir_fd = state_dir_open(dir);
        if (dir_fd < 0)
                return dir_fd;

        k = write_string_file(dir_fd, STATE_LAST_FILE, last);
        if (k < 0)
                return k;
        return history_append(dir_fd, r, shortform);
}

int state_load(const char *dir, RunRecord *ret_last, bool *ret_has_last, RunRecord **ret_history,
               size_t *ret_n_history) {
        _cleanup_(run_record_done) RunRecord last = {};
        _cleanup_close_ int dir_fd = -EBADF;
        bool want_last = ret_last || ret_has_last, want_history = ret_history || ret_n_history;
        bool has_last = false;
        RunRecord *h = NULL;
        size_t n = 0;
        int r;

        if (!dir)
                return -EINVAL;

        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0 && errno != ENOENT)
                return negative_errno();

        /* A missing directory: never run. */
        if (want_last && dir_fd >= 0) {
                _cleanup_free_ char *text = NULL;
                size_t size = 0;

                r = read_full_file_at(dir_fd, STATE_LAST_FILE, STATE_FILE_MAX, &text, &size);
                if (r >= 0) {
                        if (memchr(text, 0, size))
                                return -EBADMSG;
                        r = run_record_from_json_string(text, &last);
                        if (r < 0)
                                return r;
                        has_last = true;
                } else if (r != -ENOENT)
                        return r;
        }

        if (want_history) {
                r = state_load_history(dir, &h, &n, NULL);
                if (r < 0)
                        return r;
        }

        if (ret_last) {
                *ret_last = last;
                last = (RunRecord) {};
        }
        if (ret_has_last)
                *ret_has_last = has_last;
        if (ret_history)
                *ret_history = h;
        else
                run_record_array_free(h, n);
        if (ret_n_history)
                *ret_n_history = n;
        return 0;
}

int state_dir_check(const char *dir, bool *ret_is_tmpfs) {
        _cleanup_free_ char *path = NULL;
        struct statfs sfs;

        if (!dir || dir[0] != '/')
                return -EINVAL;
        path = strdup(dir);
        if (!path)
                return -ENOMEM;

        /* Walk up to the nearest existing ancestor: that is where the directory would be made. */
        while (statfs(path, &sfs) < 0) {
                char *slash;

                if (errno != ENOENT)
                        return negative_errno();
                slash = strrchr(path, '/');
                if (!slash || slash == path) {
                        if (statfs("/", &sfs) < 0)
                                return negative_errno();
                        break;
                }
                *slash = 0;
        }

        *ret_is_tmpfs = (unsigned long) sfs.f_type == (unsigned long) TMPFS_MAGIC ||
                        (unsigned long) sfs.f_type == (unsigned long) RAMFS_MAGIC;
        return 0;
}

int state_lock(const char *dir, int *ret_fd) {
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;

        dir_fd = state_dir_open(dir);
        if (dir_fd < 0)
                return dir_fd;

        fd = openat(dir_fd, STATE_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
        if (fd < 0)
                return negative_errno();

        while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EINTR)
                        continue;
                if (errno == EWOULDBLOCK)
                        return -EBUSY;
                return negative_errno();
        }

        *ret_fd = TAKE_FD(fd);
        return 0;
}
