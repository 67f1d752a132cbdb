/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Internal to the policy module: the key table made from the rows of POLICY_KEYS and RULE_KEYS
 * (policy.h), and the kinds of values — how each is parsed, reset to its default and printed.
 * policy-parse.c assigns through it, policy.c sets defaults and formats cat-config with it.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"

typedef struct ParseState ParseState; /* policy-parse.c: one file being parsed */
typedef struct PolicyKey PolicyKey;

/* How a kind of value is parsed (an empty value never gets here: it resets to the default), reset
 * to the default and printed for cat-config. parse returns 1 when it stored the value (its origin is
 * then this line), 0 when it warned and ignored it (or disabled the rule, or ran out of memory, which
 * it recorded in the state). */
typedef struct PolicyKind {
        int (*parse)(ParseState *s, const PolicyKey *k, const char *value, void *field);
        void (*reset)(const PolicyKey *k, void *field);
        void (*print)(FILE *f, const PolicyKey *k, const void *field);
        void (*done)(void *field); /* frees what the field owns; NULL: nothing */
} PolicyKind;

struct PolicyKey {
        const char *section; /* "Sync", "Kernel"; "Rule": the fields are in Rule */
        const char *name;
        const PolicyKind *kind;
        size_t offset, origin_offset; /* in Policy, or in Rule */
        uint64_t def;
        unsigned max;             /* UNSIGNED */
        const char *const *table; /* ENUM, ACTION */
        size_t n_table;
        bool absolute;            /* GLOBS: patterns start with '/' or '*' */
        const char *unset;        /* cat-config: what an unset value means */
        const char *yes_note;     /* BOOLEAN: cat-config's comment when yes */
        const char *path_default; /* PATH: the default directory, NULL: none */
};

extern const PolicyKey policy_keys[];
extern const size_t policy_n_keys;

static inline bool policy_key_is_rule(const PolicyKey *k) {
        return streq(k->section, "Rule");
}

static inline void *policy_key_field(const PolicyKey *k, void *base) {
        return (uint8_t *) base + k->offset;
}

static inline Origin *policy_key_origin(const PolicyKey *k, void *base) {
        return (Origin *) ((uint8_t *) base + k->origin_offset);
}

/* Sets every key of base (a Policy, or with rule a Rule) to its default. */
void policy_keys_reset(void *base, bool rule);
/* Frees what the keys of base own (kinds with a done function). */
void policy_keys_done(void *base, bool rule);
/* The row of section.name; with case_insensitive, of a name that differs from it only in case. */
const PolicyKey *policy_key_find(const char *section, const char *name, bool case_insensitive);
/* The table's name of section [name] (len bytes), rules aside; NULL when there is none. */
const char *policy_key_section(const char *name, size_t len);
/* s for a comment line of cat-config's text: a control character (a newline in a file's name would
 * end the comment and start a live line) as '?'. */
void policy_put_comment_text(FILE *f, const char *s);

/* "Key=value" with its origin and notes above, as cat-config shows it; base: Policy or Rule. */
void policy_key_print(FILE *f, const PolicyKey *k, const void *base, const char *override_note);

/* policy-parse.c, for the kinds' parsers: a warning at the current line; the current rule disabled
 * (fail closed); its name; out of memory. */
_printf_(2, 3) void policy_parse_warn(ParseState *s, const char *fmt, ...);
_printf_(2, 3) void policy_parse_disable_rule(ParseState *s, const char *fmt, ...);
const char *policy_parse_rule_name(const ParseState *s);
void policy_parse_oom(ParseState *s);

/* policy.c: appends "file:line: message" (or "file: message" for line 0) to p's warnings. */
_printf_(4, 0) int policy_warnv(Policy *p, const char *file, unsigned line, const char *fmt, va_list ap);
_printf_(4, 5) int policy_warn(Policy *p, const char *file, unsigned line, const char *fmt, ...);
