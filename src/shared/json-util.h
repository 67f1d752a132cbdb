/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Checked helpers over json-c, for every JSON writer and reader: adding a member returns 0 or a
 * negative errno (never a silently dropped key), getters check the type, apply a default to an
 * optional key (missing and null are the same) and return -EBADMSG for anything unexpected; a
 * strict bounded parser; a streamed writer, and objects printed by hand in json-c's bytes for hot
 * paths. No domain knowledge.
 *
 * Raw bytes: JSON strings must be valid UTF-8, so json_add_bytes() writes a string that is not
 * lossily (each invalid byte becomes U+FFFD) and adds its bytes hex-encoded under "<key>_hex";
 * json_get_string(..., JSON_BYTES, ...) prefers the "_hex" form, so a round trip is lossless.
 * Arrays of strings likewise: json_add_bytes_array(), json_get_string_array(..., JSON_BYTES, ...).
 *
 * Why json-c: libsystemd 252 has no public JSON API, and json-c is small, stable and in every
 * distribution. The strict parser reads the same JSON under json-c 0.16 and 0.18 (non-ASCII handed
 * over as \u escapes, integers beyond json-c's range refused).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/* What the state files and the verbs print: pretty (indented, spaced) or short (one line). */
#define JSON_FORMAT_PRETTY \
        (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)
#define JSON_FORMAT_SHORT (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static inline void json_object_unrefp(json_object **p) {
        if (*p)
                (void) json_object_put(*p);
}
#define _cleanup_json_ __attribute__((cleanup(json_object_unrefp)))

/* ---- building: each returns 0, -ENOMEM, or the error named ---- */

/* Adds v under key (replacing an earlier member of that name), taking ownership of v even on
 * failure; v == NULL means its allocation failed: -ENOMEM. */
int json_add(json_object *o, const char *key, json_object *v);
/* Appends v to the array a, taking ownership of v even on failure (NULL v: -ENOMEM). */
int json_append(json_object *a, json_object *v);

int json_add_null(json_object *o, const char *key);
/* s as given (json-c writes its bytes; NULL: null). */
int json_add_string(json_object *o, const char *key, const char *s);
/* Raw bytes (see above); NULL: null. -E2BIG when strlen(s) > max. */
int json_add_bytes(json_object *o, const char *key, const char *s, size_t max);
int json_add_u64(json_object *o, const char *key, uint64_t u);
/* u, or null when u == unknown. */
int json_add_u64_or_null(json_object *o, const char *key, uint64_t u, uint64_t unknown);
int json_add_int(json_object *o, const char *key, int i);
int json_add_bool(json_object *o, const char *key, bool b);
/* The n strings v[0..n) as raw bytes under key: an array of strings, each lossy as in
 * json_add_bytes(); when one of them is not valid UTF-8, "<key>_hex" too, an array as long, each
 * element the hex of that string's bytes, or null where the string is valid UTF-8 (and in key as
 * it is). -EINVAL for a NULL string, -E2BIG when one is longer than max. */
int json_add_bytes_array(json_object *o, const char *key, char *const *v, size_t n, size_t max);

/* A NUL-terminated copy of o's text in json-c flags (JSON_FORMAT_*); no trailing newline. */
int json_to_string_dup(json_object *o, int flags, char **ret);

/* ---- streaming: a document with one large array, written without holding the array ----
 *
 * json_stream_array_new(n) stands in for an array of n elements in the tree (n pointers to one
 * shared placeholder). json_stream_begin() prints the tree (json-c, flags as above) and writes it to
 * f up to the first element; json_stream_element() writes each element in turn, printed by json-c
 * and indented as json-c indents it at that depth (or json_stream_text() one printed by hand at
 * json_stream_depth(), below), then the text up to the next element;
 * json_stream_end() writes the rest. The bytes written are exactly those of
 * json_object_to_json_string_ext() on the tree with the real array in place (test-state-stream).
 * Only one stream array per document. Errors: -EINVAL (more or fewer elements than placeholders, or
 * no placeholder array), -ENOMEM, -EIO (or the errno of a failed write); the stream is then done
 * with, only json_stream_free() is left. */
typedef struct JsonStream JsonStream;

int json_stream_array_new(size_t n, json_object **ret);
int json_stream_begin(json_object *doc, int flags, FILE *f, JsonStream **ret);
/* Writes element (NULL: "null"); the caller keeps its reference. */
int json_stream_element(JsonStream *s, json_object *element);
/* The depth of the next element (what json_buf_open() takes), or -EINVAL when none is left. */
int json_stream_depth(const JsonStream *s);
/* Writes the next element as text (len bytes) printed at json_stream_depth() in the stream's format
 * (a JsonBuf's, below), as it is. */
int json_stream_text(JsonStream *s, const char *text, size_t len);
/* The rest of the document; *ret_size (may be NULL): bytes written by the stream in all. */
int json_stream_end(JsonStream *s, uint64_t *ret_size);
JsonStream *json_stream_free(JsonStream *s);
static inline void json_stream_freep(JsonStream **s) {
        json_stream_free(*s);
}

/* ---- printing by hand: an object as json-c prints it, without building it ----
 *
 * For an element printed many times over, where json-c's objects and printbuf cost more than the
 * bytes (a record's mounts, state.c). An object of at least one member is printed at a depth in the
 * format of flags, JSON_FORMAT_PRETTY or JSON_FORMAT_SHORT (no other): json_buf_open(), then per
 * member json_buf_key() and one value, then json_buf_close(). The bytes are json-c's for the same
 * members (test-shared json_buf_as_json_c, test-state-stream); strings must be valid UTF-8, which
 * the caller checks (json_add_bytes() writes the others otherwise). An allocation failure is kept in
 * error (-ENOMEM) and the rest do nothing; json_buf_reset() empties the text for the next object and
 * keeps the memory. */
typedef struct JsonBuf {
        char *text;
        size_t len, size;
        int flags;
        unsigned depth;
        unsigned n_members;
        int error;
} JsonBuf;

void json_buf_open(JsonBuf *b, int flags, unsigned depth);
void json_buf_key(JsonBuf *b, const char *key);
void json_buf_string(JsonBuf *b, const char *s, size_t n); /* n bytes of valid UTF-8, escaped */
void json_buf_string_or_null(JsonBuf *b, const char *s);
void json_buf_u64(JsonBuf *b, uint64_t u);
void json_buf_int(JsonBuf *b, int i);
void json_buf_null(JsonBuf *b);
void json_buf_close(JsonBuf *b);
void json_buf_reset(JsonBuf *b);
void json_buf_done(JsonBuf *b);

/* ---- reading ---- */

typedef enum JsonFlags {
        JSON_OPTIONAL = 0,       /* a missing or null key gets the default */
        JSON_MANDATORY = 1 << 0, /* a missing or null key is -EBADMSG */
        JSON_BYTES = 1 << 1,     /* strings: "<key>_hex", when present, wins (see above) */
} JsonFlags;

/* The member key of o; a missing key and JSON null are the same: NULL. */
json_object *json_get(json_object *o, const char *key);

/* Typed getters. Each returns 1 when the key was present, 0 when the default was used (optional
 * key missing or null), -EBADMSG for a missing mandatory key or a value of the wrong type or range,
 * -ENOMEM. *ret is written on success (the default when absent). */
int json_get_object(json_object *o, const char *key, JsonFlags flags, json_object **ret);
/* An array of at most max elements (default: NULL). */
int json_get_array(json_object *o, const char *key, JsonFlags flags, size_t max, json_object **ret);
/* A non-negative integer (json_parse_strict() refuses one above UINT64_MAX). */
int json_get_u64(json_object *o, const char *key, JsonFlags flags, uint64_t def, uint64_t *ret);
/* An integer in 0..max. */
int json_get_int(json_object *o, const char *key, JsonFlags flags, int max, int def, int *ret);
int json_get_bool(json_object *o, const char *key, JsonFlags flags, bool def, bool *ret);
/* A newly allocated string of at most max bytes, valid UTF-8 without NUL (default: NULL); with
 * JSON_BYTES the "_hex" form (at most 2 * max digits) is preferred. */
int json_get_string(json_object *o, const char *key, JsonFlags flags, size_t max, char **ret);
/* An array of at most max_n strings of at most max_len bytes each, copied up to their first NUL;
 * a newly allocated NULL-terminated vector and its length (default: NULL, 0). With JSON_BYTES, the
 * non-null elements of "<key>_hex" (json_add_bytes_array()), when present, win: it must be an array
 * as long, of hex strings (at most 2 * max_len digits) or null. */
int json_get_string_array(json_object *o, const char *key, JsonFlags flags, size_t max_n, size_t max_len,
                          char ***ret, size_t *ret_n);

/* Parses exactly len bytes of strict JSON: valid UTF-8 (strict, see shared/utf8.h: json-c lets
 * surrogates through), no NUL byte, nesting at most depth, nothing but whitespace after the value.
 * -EFBIG when len > max, -EBADMSG for anything malformed, -ENOMEM. */
int json_parse_strict(const char *text, size_t len, size_t max, int depth, json_object **ret);
