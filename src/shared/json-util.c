/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "hexdecoct.h"
#include "json-util.h"
#include "macro.h"
#include "utf8.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_tokener *, json_tokener_free);

/* ---- building ---- */

int json_add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                (void) json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_append(json_object *a, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_array_add(a, v) < 0) {
                (void) json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_add_null(json_object *o, const char *key) {
        return json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0;
}

int json_add_string(json_object *o, const char *key, const char *s) {
        return s ? json_add(o, key, json_object_new_string(s)) : json_add_null(o, key);
}

/* "<key>_hex", the key of a string's twin (JSON_BYTES); NULL on -ENOMEM. */
static char *hex_key_of(const char *key) {
        char *k;

        return asprintf(&k, "%s_hex", key) < 0 ? NULL : k;
}

/* The bytes a "<key>_hex" twin v holds, at most max of them. -EBADMSG for anything but hex digits
 * of bytes other than NUL, -ENOMEM. */
static int hex_twin_decode(json_object *v, size_t max, char **ret) {
        size_t n = (size_t) json_object_get_string_len(v);

        if (!json_object_is_type(v, json_type_string) || n > 2 * max)
                return -EBADMSG;
        return unhexstr(json_object_get_string(v), n, ret);
}

int json_add_bytes(json_object *o, const char *key, const char *s, size_t max) {
        _cleanup_free_ char *lossy = NULL, *hex = NULL, *hex_key = NULL;
        size_t n;
        int r;

        if (!s)
                return json_add_null(o, key);
        n = strlen(s);
        if (n > max)
                return -E2BIG;
        if (utf8_is_valid_n(s, n))
                return json_add(o, key, json_object_new_string_len(s, (int) n));

        lossy = utf8_escape_invalid_n(s, n);
        hex = hexmem(s, n);
        hex_key = hex_key_of(key);
        if (!lossy || !hex || !hex_key)
                return -ENOMEM;
        r = json_add(o, key, json_object_new_string(lossy));
        if (r < 0)
                return r;
        return json_add(o, hex_key, json_object_new_string(hex));
}

int json_add_u64(json_object *o, const char *key, uint64_t u) {
        return json_add(o, key, json_object_new_uint64(u));
}

int json_add_u64_or_null(json_object *o, const char *key, uint64_t u, uint64_t unknown) {
        return u == unknown ? json_add_null(o, key) : json_add_u64(o, key, u);
}

int json_add_int(json_object *o, const char *key, int i) {
        return json_add(o, key, json_object_new_int(i));
}

int json_add_bool(json_object *o, const char *key, bool b) {
        return json_add(o, key, json_object_new_boolean(b));
}

int json_add_bytes_array(json_object *o, const char *key, char *const *v, size_t n, size_t max) {
        _cleanup_json_ json_object *a = NULL, *hexes = NULL;
        _cleanup_free_ char *hex_key = NULL;
        bool all_valid = true;
        int r;

        for (size_t i = 0; i < n; i++) {
                if (!v[i])
                        return -EINVAL;
                if (strlen(v[i]) > max)
                        return -E2BIG;
                all_valid = all_valid && utf8_is_valid_n(v[i], strlen(v[i]));
        }

        a = json_object_new_array_ext((int) MIN(n, (size_t) INT_MAX));
        if (!a)
                return -ENOMEM;
        if (!all_valid) {
                hexes = json_object_new_array_ext((int) MIN(n, (size_t) INT_MAX));
                hex_key = hex_key_of(key);
                if (!hexes || !hex_key)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(v[i]);
                _cleanup_free_ char *lossy = NULL, *hex = NULL;

                if (utf8_is_valid_n(v[i], len)) {
                        r = json_append(a, json_object_new_string_len(v[i], (int) len));
                        if (r >= 0 && hexes)
                                r = json_object_array_add(hexes, NULL) < 0 ? -ENOMEM : 0;
                        if (r < 0)
                                return r;
                        continue;
                }
                lossy = utf8_escape_invalid_n(v[i], len);
                hex = hexmem(v[i], len);
                if (!lossy || !hex)
                        return -ENOMEM;
                if ((r = json_append(a, json_object_new_string(lossy))) < 0 ||
                    (r = json_append(hexes, json_object_new_string(hex))) < 0)
                        return r;
        }
        r = json_add(o, key, TAKE_PTR(a));
        if (r < 0 || !hexes)
                return r;
        return json_add(o, hex_key, TAKE_PTR(hexes));
}

int json_to_string_dup(json_object *o, int flags, char **ret) {
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

/* ---- streaming ---- */

/* A placeholder prints as this byte and the nesting level + 1: json-c escapes every control
 * character inside strings, so the byte appears nowhere else in its output. */
#define JSON_STREAM_MARK '\001'
#define JSON_STREAM_LEVEL_MAX 100

struct JsonStream {
        char *text; /* the document as printed, placeholders included */
        size_t len, pos;
        int flags;
        FILE *f;
        uint64_t size;
        int error;
};

static int placeholder_to_json_string(json_object *o, struct printbuf *pb, int level, int flags) {
        char m[2] = { JSON_STREAM_MARK, (char) (MIN(level, JSON_STREAM_LEVEL_MAX) + 1) };

        return printbuf_memappend(pb, m, sizeof m);
}

int json_stream_array_new(size_t n, json_object **ret) {
        _cleanup_json_ json_object *a = NULL, *mark = NULL;
        int r;

        if (n > INT_MAX)
                return -E2BIG;
        a = json_object_new_array_ext((int) n);
        mark = json_object_new_object();
        if (!a || !mark)
                return -ENOMEM;
        json_object_set_serializer(mark, placeholder_to_json_string, NULL, NULL);
        for (size_t i = 0; i < n; i++) {
                r = json_append(a, json_object_get(mark));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

static int stream_write(JsonStream *s, const char *p, size_t n) {
        if (s->error < 0)
                return s->error;
        /* Unlocked: the stream is ours alone, and the indentation makes many small writes. */
        if (n > 0 && fwrite_unlocked(p, 1, n, s->f) != n) {
                s->error = errno > 0 ? -errno : -EIO;
                return s->error;
        }
        s->size += n;
        return 0;
}

/* The document's text from the current position to the next placeholder or its end. */
static int stream_advance(JsonStream *s) {
        const char *m = memchr(s->text + s->pos, JSON_STREAM_MARK, s->len - s->pos);
        size_t n = m ? (size_t) (m - s->text) - s->pos : s->len - s->pos;
        int r;

        r = stream_write(s, s->text + s->pos, n);
        if (r < 0)
                return r;
        s->pos += n;
        return 0;
}

int json_stream_begin(json_object *doc, int flags, FILE *f, JsonStream **ret) {
        _cleanup_(json_stream_freep) JsonStream *s = NULL;
        int r;

        s = calloc(1, sizeof(JsonStream));
        if (!s)
                return -ENOMEM;
        r = json_to_string_dup(doc, flags, &s->text);
        if (r < 0)
                return r;
        s->len = strlen(s->text);
        s->flags = flags;
        s->f = f;
        r = stream_advance(s);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

int json_stream_depth(const JsonStream *s) {
        if (s->error < 0)
                return s->error;
        if (s->pos + 2 > s->len || s->text[s->pos] != JSON_STREAM_MARK)
                return -EINVAL;
        return MIN(s->text[s->pos + 1] - 1, JSON_STREAM_LEVEL_MAX);
}

int json_stream_text(JsonStream *s, const char *text, size_t len) {
        int r;

        r = json_stream_depth(s);
        if (r < 0)
                return (s->error = r);
        s->pos += 2;
        r = stream_write(s, text, len);
        if (r < 0)
                return r;
        return stream_advance(s);
}

int json_stream_element(JsonStream *s, json_object *element) {
        bool tab = s->flags & JSON_C_TO_STRING_PRETTY_TAB;
        char indent[2 * JSON_STREAM_LEVEL_MAX];
        size_t len = 0, n_indent;
        const char *t, *end;
        int level, r;

        level = json_stream_depth(s);
        if (level < 0)
                return (s->error = level);
        s->pos += 2;
        n_indent = (size_t) level * (tab ? 1 : 2);
        memset(indent, tab ? '\t' : ' ', n_indent);

        /* Printed at depth 0; at depth L json-c indents every line after the first by L more
         * steps (every newline it prints is structural: strings escape theirs). */
        t = element ? json_object_to_json_string_length(element, s->flags, &len) : "null";
        if (!t)
                return (s->error = -ENOMEM);
        if (!element)
                len = strlen(t);
        end = t + len;
        while (t < end) {
                const char *nl = (s->flags & JSON_C_TO_STRING_PRETTY) ? memchr(t, '\n', (size_t) (end - t))
                                                                      : NULL;
                size_t n = nl ? (size_t) (nl - t) + 1 : (size_t) (end - t);

                r = stream_write(s, t, n);
                if (r >= 0 && nl)
                        r = stream_write(s, indent, n_indent);
                if (r < 0)
                        return r;
                t += n;
        }
        return stream_advance(s);
}

int json_stream_end(JsonStream *s, uint64_t *ret_size) {
        if (s->error < 0)
                return s->error;
        if (s->pos < s->len) /* a placeholder left */
                return (s->error = -EINVAL);
        if (ret_size)
                *ret_size = s->size;
        return 0;
}

JsonStream *json_stream_free(JsonStream *s) {
        if (!s)
                return NULL;
        free(s->text);
        free(s);
        return NULL;
}

/* ---- printing by hand ---- */

/* Room for n more bytes: a pointer to them (the length grown by n), or NULL (b->error). */
static char *buf_grow(JsonBuf *b, size_t n) {
        char *p;

        if (b->error < 0)
                return NULL;
        if (n > b->size - b->len) {
                size_t want;
                char *q;

                if (n > SIZE_MAX / 2 - b->len) { /* never, short of memory itself */
                        b->error = -ENOMEM;
                        return NULL;
                }
                want = MAX(b->len + n, MAX(b->size * 2, (size_t) 1024));
                if (!(q = realloc(b->text, want))) {
                        b->error = -ENOMEM;
                        return NULL;
                }
                b->text = q;
                b->size = want;
        }
        p = b->text + b->len;
        b->len += n;
        return p;
}

static void buf_add(JsonBuf *b, const char *p, size_t n) {
        char *q = buf_grow(b, n);

        if (q)
                memcpy(q, p, n);
}

void json_buf_open(JsonBuf *b, int flags, unsigned depth) {
        b->flags = flags;
        b->depth = MIN(depth, (unsigned) JSON_STREAM_LEVEL_MAX);
        b->n_members = 0;
        buf_add(b, "{", 1);
}

/* A newline and json-c's indentation of depth (two spaces a step). */
static void buf_newline(JsonBuf *b, unsigned depth) {
        char *q = buf_grow(b, 1 + 2 * (size_t) depth);

        if (!q)
                return;
        q[0] = '\n';
        memset(q + 1, ' ', 2 * (size_t) depth);
}

/* json-c: a comma after each member but the last, then (pretty) a newline and the indentation of
 * the members' depth, the quoted key, a colon and (pretty: spaced) a space. */
void json_buf_key(JsonBuf *b, const char *key) {
        bool pretty = b->flags & JSON_C_TO_STRING_PRETTY;

        if (b->n_members++ > 0)
                buf_add(b, ",", 1);
        if (pretty)
                buf_newline(b, b->depth + 1);
        json_buf_string(b, key, strlen(key));
        buf_add(b, pretty ? ": " : ":", pretty ? 2 : 1);
}

/* json-c's escapes: the two-letter ones, other control characters as \u00xx (lower-case hex), and
 * '/' as is with JSON_C_TO_STRING_NOSLASHESCAPE (else "\/"); every other byte as is. */
void json_buf_string(JsonBuf *b, const char *s, size_t n) {
        static const char hex[] = "0123456789abcdef", from[] = "\b\n\r\t\f\"\\/", to[] = "bnrtf\"\\/";
        size_t start = 0;

        buf_add(b, "\"", 1);
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                char e[6] = { '\\', 0 };
                const char *x;
                size_t k = 2;

                /* the common case first: nothing to escape */
                if (c >= 0x20 && c != '"' && c != '\\' && c != '/')
                        continue;
                if (c == '/' && (b->flags & JSON_C_TO_STRING_NOSLASHESCAPE))
                        continue;
                x = memchr(from, c, sizeof from - 1);
                if (x)
                        e[1] = to[x - from];
                else {
                        memcpy(e + 1, "u00", 3);
                        e[4] = hex[c >> 4];
                        e[5] = hex[c & 0xf];
                        k = 6;
                }
                buf_add(b, s + start, i - start);
                buf_add(b, e, k);
                start = i + 1;
        }
        buf_add(b, s + start, n - start);
        buf_add(b, "\"", 1);
}

void json_buf_string_or_null(JsonBuf *b, const char *s) {
        if (s)
                json_buf_string(b, s, strlen(s));
        else
                json_buf_null(b);
}

void json_buf_u64(JsonBuf *b, uint64_t u) {
        char t[sizeof("18446744073709551615")];

        buf_add(b, t, (size_t) snprintf(t, sizeof t, "%" PRIu64, u));
}

void json_buf_int(JsonBuf *b, int i) {
        char t[sizeof("-2147483648")];

        buf_add(b, t, (size_t) snprintf(t, sizeof t, "%d", i));
}

void json_buf_null(JsonBuf *b) {
        buf_add(b, "null", 4);
}

/* json-c: after the last member (pretty) a newline at the object's depth, then the brace. */
void json_buf_close(JsonBuf *b) {
        if (b->flags & JSON_C_TO_STRING_PRETTY)
                buf_newline(b, b->depth);
        buf_add(b, "}", 1);
}

void json_buf_reset(JsonBuf *b) {
        b->len = 0;
        b->n_members = 0;
}

void json_buf_done(JsonBuf *b) {
        free(b->text);
        *b = (JsonBuf) {};
}

/* ---- reading ---- */

json_object *json_get(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

/* The value of key checked against type: 1 and *ret, 0 (absent, optional), or -EBADMSG. */
static int json_get_typed(json_object *o, const char *key, JsonFlags flags, json_type type,
                          json_object **ret) {
        json_object *v = json_get(o, key);

        *ret = v;
        if (!v)
                return flags & JSON_MANDATORY ? -EBADMSG : 0;
        return json_object_is_type(v, type) ? 1 : -EBADMSG;
}

int json_get_object(json_object *o, const char *key, JsonFlags flags, json_object **ret) {
        json_object *v;
        int r;

        r = json_get_typed(o, key, flags, json_type_object, &v);
        if (r < 0)
                return r;
        *ret = v;
        return r;
}

int json_get_array(json_object *o, const char *key, JsonFlags flags, size_t max, json_object **ret) {
        json_object *v;
        int r;

        r = json_get_typed(o, key, flags, json_type_array, &v);
        if (r < 0)
                return r;
        if (v && json_object_array_length(v) > max)
                return -EBADMSG;
        *ret = v;
        return r;
}

int json_get_u64(json_object *o, const char *key, JsonFlags flags, uint64_t def, uint64_t *ret) {
        json_object *v;
        int r;

        r = json_get_typed(o, key, flags, json_type_int, &v);
        if (r <= 0) {
                if (r == 0)
                        *ret = def;
                return r;
        }
        if (json_object_get_int64(v) < 0)
                return -EBADMSG;
        *ret = json_object_get_uint64(v);
        return 1;
}

int json_get_int(json_object *o, const char *key, JsonFlags flags, int max, int def, int *ret) {
        uint64_t u;
        int r;

        r = json_get_u64(o, key, flags, 0, &u);
        if (r < 0)
                return r;
        if (r == 0) {
                *ret = def;
                return 0;
        }
        if (max < 0 || u > (uint64_t) max)
                return -EBADMSG;
        *ret = (int) u;
        return 1;
}

int json_get_bool(json_object *o, const char *key, JsonFlags flags, bool def, bool *ret) {
        json_object *v;
        int r;

        r = json_get_typed(o, key, flags, json_type_boolean, &v);
        if (r >= 0)
                *ret = r > 0 ? json_object_get_boolean(v) : def;
        return r;
}

int json_get_string(json_object *o, const char *key, JsonFlags flags, size_t max, char **ret) {
        json_object *v;
        const char *s;
        size_t n;
        char *copy;
        int r;

        if (flags & JSON_BYTES) {
                _cleanup_free_ char *hex_key = hex_key_of(key);

                if (!hex_key)
                        return -ENOMEM;
                r = json_get_typed(o, hex_key, JSON_OPTIONAL, json_type_string, &v);
                if (r < 0)
                        return r;
                if (r > 0) {
                        r = hex_twin_decode(v, max, ret);
                        return r < 0 ? r : 1;
                }
        }

        r = json_get_typed(o, key, flags, json_type_string, &v);
        if (r <= 0) {
                if (r == 0)
                        *ret = NULL;
                return r;
        }
        s = json_object_get_string(v);
        n = (size_t) json_object_get_string_len(v);
        /* \u escapes can still produce NUL or lone surrogates */
        if (n > max || memchr(s, 0, n) || !utf8_is_valid_n(s, n))
                return -EBADMSG;
        copy = strndup(s, n);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 1;
}

static void string_vector_free(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* Element i of an array of strings: that of hexes (JSON_BYTES, "<key>_hex") when there is one, else
 * that of a, copied up to its first NUL. */
static int string_array_element(json_object *a, json_object *hexes, size_t i, size_t max_len, char **ret) {
        json_object *e = hexes ? json_object_array_get_idx(hexes, i) : NULL;
        char *copy;
        int r;

        if (e) {
                /* The twin stands for a string of the array, which must be one all the same. */
                if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_string))
                        return -EBADMSG;
                r = hex_twin_decode(e, max_len, ret);
                return r < 0 ? r : 0;
        }
        e = json_object_array_get_idx(a, i);
        if (!json_object_is_type(e, json_type_string) || (size_t) json_object_get_string_len(e) > max_len)
                return -EBADMSG;
        copy = strdup(json_object_get_string(e));
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}

int json_get_string_array(json_object *o, const char *key, JsonFlags flags, size_t max_n, size_t max_len,
                          char ***ret, size_t *ret_n) {
        json_object *a, *hexes = NULL;
        char **v;
        size_t n;
        int r;

        r = json_get_array(o, key, flags, max_n, &a);
        if (r <= 0) {
                if (r == 0) {
                        *ret = NULL;
                        *ret_n = 0;
                }
                return r;
        }
        n = json_object_array_length(a);
        if (flags & JSON_BYTES) {
                _cleanup_free_ char *hex_key = hex_key_of(key);

                if (!hex_key)
                        return -ENOMEM;
                r = json_get_array(o, hex_key, JSON_OPTIONAL, max_n, &hexes);
                if (r < 0)
                        return r;
                if (hexes && json_object_array_length(hexes) != n)
                        return -EBADMSG;
        }
        v = calloc(n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                r = string_array_element(a, hexes, i, max_len, &v[i]);
                if (r < 0) {
                        string_vector_free(v, i);
                        return r;
                }
        }
        *ret = v;
        *ret_n = n;
        return 1;
}

/* text (len bytes of valid UTF-8) with each character above U+007F written as its \u escape (two, a
 * surrogate pair, above U+FFFF): the same JSON, in ASCII. json-c 0.18's strict mode refuses every
 * byte above 0x7f, a signed char taken for a control character (json-c issues #875, #892: Debian 13
 * has it), so a record with "é" or U+FFFD in a mount point would not load; json-c decodes the
 * escapes back to the same UTF-8. Outside a string an escape is as invalid as the character was;
 * after a backslash the character is an invalid escape, refused here (-EBADMSG). -ENOMEM. */
static int ascii_escaped(const char *text, size_t len, char **ret, size_t *ret_len) {
        static const char hex[] = "0123456789abcdef";
        _cleanup_free_ char *out = NULL;
        size_t n = 0, backslashes = 0;

        /* at most 12 bytes ("\ud83d\udcbe") for a 4-byte character: 3 per input byte */
        out = malloc(len * 3 + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                const unsigned char *c = (const unsigned char *) text + i;
                size_t k = *c < 0x80 ? 1 : utf8_sequence_length(text + i, len - i);
                uint32_t cp;

                if (k <= 1) { /* ASCII (0: not after utf8_is_valid_n(), but never a loop) */
                        backslashes = text[i] == '\\' ? backslashes + 1 : 0;
                        out[n++] = text[i++];
                        continue;
                }
                /* "\é" is an invalid escape; "\\u00e9" would be a valid one */
                if (backslashes % 2 == 1)
                        return -EBADMSG;
                backslashes = 0;
                cp = k == 2   ? (uint32_t) (c[0] & 0x1f) << 6 | (c[1] & 0x3f)
                     : k == 3 ? (uint32_t) (c[0] & 0x0f) << 12 | (uint32_t) (c[1] & 0x3f) << 6 | (c[2] & 0x3f)
                              : (uint32_t) (c[0] & 0x07) << 18 | (uint32_t) (c[1] & 0x3f) << 12 |
                                        (uint32_t) (c[2] & 0x3f) << 6 | (c[3] & 0x3f);
                for (int half = 0; half < (cp > 0xffff ? 2 : 1); half++) {
                        uint32_t u = cp <= 0xffff ? cp
                                     : half == 0  ? 0xd800 + ((cp - 0x10000) >> 10)
                                                  : 0xdc00 + ((cp - 0x10000) & 0x3ff);

                        out[n++] = '\\';
                        out[n++] = 'u';
                        for (int shift = 12; shift >= 0; shift -= 4)
                                out[n++] = hex[(u >> shift) & 0xf];
                }
                i += k;
        }
        out[n] = 0;
        *ret = TAKE_PTR(out);
        *ret_len = n;
        return 0;
}

/* Whether text has an integer literal outside what json-c holds (above UINT64_MAX, below INT64_MIN):
 * json-c 0.16 saturates one, 0.18's strict mode refuses it ("number expected"); refused on both. */
static bool integer_out_of_range(const char *text, size_t len) {
        bool in_string = false;

        for (size_t i = 0; i < len; i++) {
                const char *limit;
                size_t start, end;

                if (in_string) {
                        if (text[i] == '\\')
                                i++;
                        else if (text[i] == '"')
                                in_string = false;
                        continue;
                }
                if (text[i] == '"') {
                        in_string = true;
                        continue;
                }
                if (text[i] != '-' && !(text[i] >= '0' && text[i] <= '9'))
                        continue;
                start = text[i] == '-' ? i + 1 : i;
                for (end = start; end < len && text[end] >= '0' && text[end] <= '9'; end++)
                        ;
                limit = text[i] == '-' ? "9223372036854775808" : "18446744073709551615";
                /* a fraction or an exponent makes it a double, json-c's to judge */
                if (end >= len || !strchr(".eE", text[end]))
                        if (end - start > strlen(limit) ||
                            (end - start == strlen(limit) && memcmp(text + start, limit, end - start) > 0))
                                return true;
                /* past the rest of the number (a fraction, an exponent): the loop goes on with the
                 * byte after it */
                for (i = end; i < len && text[i] && strchr(".eE+-0123456789", text[i]); i++)
                        ;
                i--;
        }
        return false;
}

int json_parse_strict(const char *text, size_t len, size_t max, int depth, json_object **ret) {
        _cleanup_(json_tokener_freep) struct json_tokener *tok = NULL;
        _cleanup_json_ json_object *o = NULL;
        _cleanup_free_ char *ascii = NULL;

        if (len > max)
                return -EFBIG;
        if (len > INT_MAX)
                return -EFBIG;
        /* json-c's own check lets surrogates (ED A0..BF ..) through; ours is strict. */
        if (memchr(text, 0, len) || !utf8_is_valid_n(text, len) || integer_out_of_range(text, len))
                return -EBADMSG;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) text[i] >= 0x80) {
                        int r = ascii_escaped(text, len, &ascii, &len);

                        if (r < 0)
                                return r;
                        if (len > INT_MAX)
                                return -EFBIG;
                        text = ascii;
                        break;
                }

        tok = json_tokener_new_ex(depth);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);

        /* json-c (before 0.17) has no error of its own for an allocation that failed: malloc()'s
         * errno tells it from text that does not parse (review AS, AS-5: "Bad message" was shown). */
        errno = 0;
        o = json_tokener_parse_ex(tok, text, (int) len);
        if (json_tokener_get_error(tok) != json_tokener_success || !o)
                return errno == ENOMEM ? -ENOMEM : -EBADMSG;
        /* Only whitespace may follow the value. */
        for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
                if (!strchr(" \t\r\n", text[i]))
                        return -EBADMSG;

        *ret = TAKE_PTR(o);
        return 0;
}
