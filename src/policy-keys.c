/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * The key table: one row per key (POLICY_KEYS, RULE_KEYS in policy.h) with its kind of value. A
 * kind parses a value (warning with the exact texts the man page and tests know), resets a field
 * to the row's default and prints it for cat-config.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "device.h"
#include "policy-keys.h"
#include "shared/parse-util.h"
#include "shared/string-table.h"
#include "shared/strv.h"

#define POLICY_MAX_TIMESPAN (24U * 3600U * USEC_PER_SEC)

/* ---- enum tables ------------------------------------------------------------------------------ */

static const char *const rule_action_table[_RULE_ACTION_MAX] = {
        [RULE_ACTION_SYNC] = "sync",
        [RULE_ACTION_SKIP] = "skip",
        [RULE_ACTION_AUTO] = "auto",
};

DEFINE_STRING_TABLE_LOOKUP(rule_action, RuleAction);

static const char *const on_timeout_table[_ON_TIMEOUT_MAX] = {
        [ON_TIMEOUT_CONTINUE] = "continue",
        [ON_TIMEOUT_FAIL] = "fail",
};

DEFINE_STRING_TABLE_LOOKUP(on_timeout, OnTimeout);

static const char *const sync_on_suspend_mode_table[_SYNC_ON_SUSPEND_MAX] = {
        [SYNC_ON_SUSPEND_AUTO] = "auto",
        [SYNC_ON_SUSPEND_KEEP] = "keep",
        [SYNC_ON_SUSPEND_OFF] = "off",
};

DEFINE_STRING_TABLE_LOOKUP(sync_on_suspend_mode, SyncOnSuspendMode);

/* ---- kinds of values ----------------------------------------------------------------------------- */

static int parse_time_value(ParseState *s, const char *key, const char *value, usec_t *ret) {
        usec_t u;
        int r;

        r = parse_timespan(value, &u);
        if (r < 0) {
                policy_parse_warn(s, "Invalid %s= value '%s', ignoring", key, value);
                return 0;
        }
        if (u == 0 || u > POLICY_MAX_TIMESPAN) {
                policy_parse_warn(s, "Invalid %s= value '%s' (must be more than 0 and at most 24h), ignoring",
                                  key, value);
                return 0;
        }
        *ret = u;
        return 1;
}

static int parse_unsigned_key(ParseState *s, const PolicyKey *k, const char *value, void *field) {
        unsigned v;

        if (safe_atou(value, &v) < 0 || v < 1 || v > k->max) {
                policy_parse_warn(s, "Invalid %s= value '%s' (expected 1..%u), ignoring", k->name, value,
                                  k->max);
                return 0;
        }
        *(unsigned *) field = v;
        return 1;
}

static int parse_timespan_key(ParseState *s, const PolicyKey *k, const char *value, void *field) {
        return parse_time_value(s, k->name, value, field);
}

static int parse_boolean_key(ParseState *s, const PolicyKey *k, const char *value, void *field) {
        int r = parse_boolean(value);

        if (r < 0) {
                policy_parse_warn(s, "Invalid %s= value '%s' (expected a boolean), ignoring", k->name, value);
                return 0;
        }
        *(bool *) field = r;
        return 1;
}

/* "a|b|c" for warnings. */
static const char *enum_choices(const PolicyKey *k, char *buf, size_t size) {
        size_t n = 0;

        buf[0] = 0;
        for (size_t i = 0; i < k->n_table && n < size; i++)
                n += (size_t) snprintf(buf + n, size - n, "%s%s", i > 0 ? "|" : "", k->table[i]);
        return buf;
}

/* What an administrator who wrote a boolean where a key takes a word most likely meant: the word
 * for no, and for yes. The value is still invalid (the earlier one or the default is kept). */
static const struct {
        const char *section, *name, *no, *yes;
} enum_boolean_hints[] = {
        /* the kernel's own sync: "yes" leaves it on (keep), "no" turns it off where that is safe */
        { "Kernel", "SyncOnSuspend", "off", "keep" },
};

static const char *enum_boolean_hint(const PolicyKey *k, const char *value) {
        int b = parse_boolean(value);

        if (b < 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(enum_boolean_hints); i++)
                if (streq(enum_boolean_hints[i].section, k->section) &&
                    streq(enum_boolean_hints[i].name, k->name))
                        return b ? enum_boolean_hints[i].yes : enum_boolean_hints[i].no;
        return NULL;
}

static int parse_enum_key(ParseState *s, const PolicyKey *k, const char *value, void *field) {
        ssize_t i = string_table_lookup(k->table, k->n_table, value);
        const char *hint;
        char choices[128];

        if (i < 0) {
                hint = enum_boolean_hint(k, value);
                if (hint)
                        policy_parse_warn(s,
                                          "Invalid %s= value '%s' (expected %s, not a boolean; did you "
                                          "mean '%s'?), ignoring",
                                          k->name, value, enum_choices(k, choices, sizeof choices), hint);
                else
                        policy_parse_warn(s, "Invalid %s= value '%s' (expected %s), ignoring", k->name, value,
                                          enum_choices(k, choices, sizeof choices));
                return 0;
        }
        *(int *) field = (int) i;
        return 1;
}

/* What the rule matches is understood, what to do is not: the one choice that cannot lose data. */
static int parse_action_key(ParseState *s, const PolicyKey *k, const char *value, void *field) {
        ssize_t i = string_table_lookup(k->table, k->n_table, value);
        char choices[128];

        if (i < 0) {
                policy_parse_warn(s, "Invalid %s= value '%s' in rule '%s' (expected %s), using %s=%s",
                                  k->name, value, policy_parse_rule_name(s),
                                  enum_choices(k, choices, sizeof choices), k->name,
                                  rule_action_to_string(RULE_ACTION_SYNC));
                i = RULE_ACTION_SYNC;
        }
        *(int *) field = (int) i;
        return 1;
}

/* Path= and Type=: a list of globs, replacing the earlier list. A list we cannot take disables the
 * rule (keeping the earlier list, or none, would widen it). */
static int parse_globs_key(ParseState *s, const PolicyKey *k, const char *value, void *field) {
        _cleanup_strv_free_ char **l = NULL;
        char ***list = field;
        int r;

        r = strv_split_words(value, POLICY_MAX_PATTERNS, &l);
        if (r == -ENOMEM) {
                policy_parse_oom(s);
                return 0;
        }
        if (r == -E2BIG) {
                policy_parse_disable_rule(s, "too many patterns in %s= (max %u)", k->name,
                                          POLICY_MAX_PATTERNS);
                return 0;
        }
        if (k->absolute)
                for (char **i = l; i && *i; i++)
                        if ((*i)[0] != '/' && (*i)[0] != '*') {
                                policy_parse_disable_rule(
                                        s, "invalid %s= pattern '%s' (must start with '/' or '*')", k->name,
                                        *i);
                                return 0;
                        }

        strv_free(*list);
        *list = TAKE_PTR(l);
        return 1;
}

static int parse_device_key(ParseState *s, const PolicyKey *k, const char *value, void *field) {
        unsigned mask = 0;

        for (const char *v = value;;) {
                char word[64];
                size_t n;
                int c;

                v += strspn(v, " \t");
                if (!*v)
                        break;
                n = strcspn(v, " \t");
                if (n >= sizeof(word))
                        c = -EINVAL;
                else {
                        memcpy(word, v, n);
                        word[n] = 0;
                        c = device_class_from_string(word);
                }
                if (c <= 0) {
                        policy_parse_disable_rule(s, "unknown device class '%.*s' in %s=", (int) n, v,
                                                  k->name);
                        return 0;
                }
                mask |= (unsigned) c;
                v += n;
        }
        *(unsigned *) field = mask;
        return 1;
}

/* An absolute directory, or "no"/"off": none. */
static int parse_path_key(ParseState *s, const PolicyKey *k, const char *value, void *field) {
        char *copy;

        if (STR_IN_SET(value, "no", "off"))
                copy = NULL;
        else if (value[0] != '/') {
                policy_parse_warn(s, "%s= must be an absolute path or 'no', ignoring: %s", k->name, value);
                return 0;
        } else if (!(copy = strdup(value))) {
                policy_parse_oom(s);
                return 0;
        }
        free(*(char **) field);
        *(char **) field = copy;
        return 1;
}

static void reset_path(const PolicyKey *k, void *field) {
        free(*(char **) field);
        /* Out of memory here leaves the key unset ("no"): only metrics are at stake. */
        *(char **) field = k->path_default ? strdup(k->path_default) : NULL;
}

static void done_path(void *field) {
        *(char **) field = mfree(*(char **) field);
}

static void print_path(FILE *f, const PolicyKey *k, const void *field) {
        const char *v = *(char *const *) field;

        fputs(v ? v : "no", f);
}

static void reset_unsigned(const PolicyKey *k, void *field) {
        *(unsigned *) field = (unsigned) k->def;
}

static void reset_usec(const PolicyKey *k, void *field) {
        *(usec_t *) field = k->def;
}

static void reset_bool(const PolicyKey *k, void *field) {
        *(bool *) field = k->def;
}

static void reset_int(const PolicyKey *k, void *field) {
        *(int *) field = (int) k->def;
}

static void reset_strv(const PolicyKey *k, void *field) {
        *(char ***) field = strv_free(*(char ***) field);
}

static void print_unsigned(FILE *f, const PolicyKey *k, const void *field) {
        fprintf(f, "%u", *(const unsigned *) field);
}

static void print_usec(FILE *f, const PolicyKey *k, const void *field) {
        char buf[FORMAT_TIMESPAN_MAX];
        usec_t u = *(const usec_t *) field;

        fputs(u == USEC_INFINITY ? "" : format_timespan(buf, sizeof(buf), u), f);
}

static void print_bool(FILE *f, const PolicyKey *k, const void *field) {
        fputs(*(const bool *) field ? "yes" : "no", f);
}

static void print_enum(FILE *f, const PolicyKey *k, const void *field) {
        int v = *(const int *) field;

        fputs(v >= 0 && (size_t) v < k->n_table && k->table[v] ? k->table[v] : "", f);
}

static void print_strv(FILE *f, const PolicyKey *k, const void *field) {
        char *const *l = *(char *const *const *) field;

        for (char *const *i = l; i && *i; i++)
                fprintf(f, "%s%s", i == l ? "" : " ", *i);
}

static void print_device(FILE *f, const PolicyKey *k, const void *field) {
        unsigned mask = *(const unsigned *) field;
        bool first = true;

        for (unsigned bit = 1; bit <= _DEVICE_CLASS_ALL; bit <<= 1)
                if (mask & bit) {
                        fprintf(f, "%s%s", first ? "" : " ", device_class_to_string(bit) ?: "?");
                        first = false;
                }
}

static const PolicyKind kind_UNSIGNED = { .parse = parse_unsigned_key,
                                          .reset = reset_unsigned,
                                          .print = print_unsigned };
static const PolicyKind kind_TIMESPAN = { .parse = parse_timespan_key,
                                          .reset = reset_usec,
                                          .print = print_usec };
static const PolicyKind kind_BOOLEAN = { .parse = parse_boolean_key,
                                         .reset = reset_bool,
                                         .print = print_bool };
static const PolicyKind kind_ENUM = { .parse = parse_enum_key, .reset = reset_int, .print = print_enum };
static const PolicyKind kind_ACTION = { .parse = parse_action_key, .reset = reset_int, .print = print_enum };
static const PolicyKind kind_GLOBS = { .parse = parse_globs_key, .reset = reset_strv, .print = print_strv };
static const PolicyKind kind_DEVICE = { .parse = parse_device_key,
                                        .reset = reset_unsigned,
                                        .print = print_device };
static const PolicyKind kind_PATH = {
        .parse = parse_path_key, .reset = reset_path, .print = print_path, .done = done_path
};

/* ---- the table ---------------------------------------------------------------------------------- */

#define KIND_ARG_UNSIGNED(a) .max = (a)
#define KIND_ARG_TIMESPAN(a) .unset = (a)
#define KIND_ARG_BOOLEAN(a) .yes_note = (a)
#define KIND_ARG_ENUM(a) .table = a##_table, .n_table = ELEMENTSOF(a##_table)
#define KIND_ARG_ACTION(a) KIND_ARG_ENUM(a)
#define KIND_ARG_GLOBS(a) .absolute = (a), .unset = "any"
#define KIND_ARG_DEVICE(a) .unset = "any"
#define KIND_ARG_PATH(a) .path_default = (a)

#define KEY_ROW(type, section_, key, ctype, field, origin, knd, arg, def_) \
        {                                                                  \
                .section = #section_,                                      \
                .name = #key,                                              \
                .kind = &kind_##knd,                                       \
                .offset = offsetof(type, field),                           \
                .origin_offset = offsetof(type, origin),                   \
                .def = (uint64_t) (def_),                                  \
                KIND_ARG_##knd(arg),                                       \
        },
#define POLICY_ROW(...) KEY_ROW(Policy, __VA_ARGS__)
#define RULE_ROW(...) KEY_ROW(Rule, __VA_ARGS__)

const PolicyKey policy_keys[] = { POLICY_KEYS(POLICY_ROW) RULE_KEYS(RULE_ROW) };
const size_t policy_n_keys = ELEMENTSOF(policy_keys);

/* Each row's C type has the size its kind writes. */
#define KIND_CTYPE_UNSIGNED unsigned
#define KIND_CTYPE_TIMESPAN usec_t
#define KIND_CTYPE_BOOLEAN bool
#define KIND_CTYPE_ENUM int
#define KIND_CTYPE_ACTION int
#define KIND_CTYPE_GLOBS char **
#define KIND_CTYPE_DEVICE unsigned
#define KIND_CTYPE_PATH char *
#define CHECK_ROW(section, key, ctype, field, origin, kind, arg, def) \
        _Static_assert(sizeof(ctype) == sizeof(KIND_CTYPE_##kind), #key ": C type and kind differ");
POLICY_KEYS(CHECK_ROW)
RULE_KEYS(CHECK_ROW)

void policy_keys_reset(void *base, bool rule) {
        for (size_t i = 0; i < policy_n_keys; i++)
                if (policy_key_is_rule(&policy_keys[i]) == rule)
                        policy_keys[i].kind->reset(&policy_keys[i], policy_key_field(&policy_keys[i], base));
}

void policy_keys_done(void *base, bool rule) {
        for (size_t i = 0; i < policy_n_keys; i++)
                if (policy_key_is_rule(&policy_keys[i]) == rule && policy_keys[i].kind->done)
                        policy_keys[i].kind->done(policy_key_field(&policy_keys[i], base));
}

const PolicyKey *policy_key_find(const char *section, const char *name, bool case_insensitive) {
        for (size_t i = 0; i < policy_n_keys; i++) {
                const char *n = policy_keys[i].name;

                if (streq(policy_keys[i].section, section) &&
                    (case_insensitive ? strcasecmp(n, name) : strcmp(n, name)) == 0)
                        return &policy_keys[i];
        }
        return NULL;
}

const char *policy_key_section(const char *name, size_t len) {
        for (size_t i = 0; i < policy_n_keys; i++)
                if (!policy_key_is_rule(&policy_keys[i]) && strlen(policy_keys[i].section) == len &&
                    memcmp(policy_keys[i].section, name, len) == 0)
                        return policy_keys[i].section;
        return NULL;
}

void policy_put_comment_text(FILE *f, const char *s) {
        for (; s && *s; s++)
                fputc((unsigned char) *s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

void policy_key_print(FILE *f, const PolicyKey *k, const void *base, const char *override_note) {
        const void *field = (const uint8_t *) base + k->offset;
        Origin o = *(const Origin *) ((const uint8_t *) base + k->origin_offset);

        if (o.file) {
                fputs("# from ", f);
                policy_put_comment_text(f, o.file);
                fprintf(f, ":%u\n", o.line);
        } else if (k->unset)
                fprintf(f, "# default (%s)\n", k->unset);
        else
                fputs("# default\n", f);
        if (k->yes_note && *(const bool *) field)
                fprintf(f, "# %s\n", k->yes_note);
        if (override_note)
                fprintf(f, "# %s\n", override_note);
        fprintf(f, "%s=", k->name);
        k->kind->print(f, k, field);
        fputc('\n', f);
}
