/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Policy parsing. inih does the key=value splitting; our own reader (policy_reader) feeds it one
 * line at a time, counts lines, and hands inih only lines it would parse correctly:
 *
 *  - over-long lines: with the stock fgets()-style readers inih (55, default build, 200-byte line
 *    buffer) reads the first 199 bytes of a longer line and then parses the tail as a NEW line, so
 *    "Path=<long>MaxParallel=1" would silently set MaxParallel. We warn and pass an empty line.
 *    A line may have num - 2 bytes (198 with inih's 200-byte buffer), so that it never fills the
 *    buffer: inih built with INI_ALLOW_REALLOC (Debian 13's 59) takes a full buffer without a
 *    newline for a line that goes on and asks the reader for more into the rest of it, which glued
 *    the next lines onto a line of 199 bytes;
 *  - leading whitespace is stripped, because inih treats an indented line as a continuation of the
 *    previous key's value (INI_ALLOW_MULTILINE);
 *  - section headers are validated here (inih silently keeps the previous section on a header it
 *    cannot parse, e.g. "[Rule a ;b]"), and keys in an ignored section are dropped here;
 *  - lines inih would report as errors without calling the handler (no '=', "key:value") get a
 *    warning here instead of disappearing.
 *
 * inih calls the handler for line N before it asks the reader for line N+1, so the handler can use
 * the reader's line counter and section state.
 */

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-keys.h"
#include "shared/strv.h"

#define INIH_MAX_SECTION 50 /* compile-time in libinih: names are cut at 49 */
#define INIH_MAX_NAME 50

/* ---- the parser ------------------------------------------------------------------------------- */

typedef enum SectionKind {
        SECTION_NONE, /* before the first header */
        SECTION_KEYS, /* a section of the key table other than rules: [Sync], [Kernel] */
        SECTION_RULE,
        SECTION_IGNORED, /* unknown or invalid section: already warned, keys dropped silently */
} SectionKind;

struct ParseState {
        Policy *policy;
        const char *file; /* owned by policy->files */
        const char *pos, *end;
        unsigned line;
        SectionKind section;
        const char *section_name; /* the key table's name of it ("Sync", ...; "Rule") */
        size_t rule;              /* index into policy->rules when section == SECTION_RULE */
        int error;                /* first -ENOMEM */
};

#define WARN(s, ...) policy_parse_warn(s, __VA_ARGS__)

static Origin here(const ParseState *s) {
        return (Origin) { .file = s->file, .line = s->line };
}

/* Fails closed: a rule with a line we cannot understand is disabled whole, for good (a later valid
 * line does not bring it back), so it can never skip a mount it was not written for. One warning
 * per bad line, naming the rule. */
static Rule *current_rule(const ParseState *s) {
        return s->section == SECTION_RULE ? &s->policy->rules[s->rule] : NULL;
}

void policy_parse_warn(ParseState *s, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = policy_warnv(s->policy, s->file, s->line, fmt, ap);
        va_end(ap);
        if (r < 0 && s->error == 0)
                s->error = r;
}

void policy_parse_oom(ParseState *s) {
        if (s->error == 0)
                s->error = -ENOMEM;
}

const char *policy_parse_rule_name(const ParseState *s) {
        return current_rule(s) ? current_rule(s)->name : NULL;
}

void policy_parse_disable_rule(ParseState *s, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        Rule *rule = current_rule(s);
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return policy_parse_oom(s);
        WARN(s, "rule '%s' disabled: %s", rule->name, msg);
        if (rule->disabled)
                return;
        rule->disabled = true;
        rule->disabled_reason = TAKE_PTR(msg);
        rule->o_disabled = here(s);
}

static int find_or_add_rule(ParseState *s, const char *name, size_t len) {
        Policy *p = s->policy;
        Rule *t;
        char *n;

        for (size_t i = 0; i < p->n_rules; i++)
                if (strlen(p->rules[i].name) == len && memcmp(p->rules[i].name, name, len) == 0) {
                        s->rule = i;
                        return 1;
                }

        if (p->n_rules >= POLICY_MAX_RULES) {
                WARN(s, "Too many rules (max %u), ignoring", POLICY_MAX_RULES);
                return 0;
        }

        n = strndup(name, len);
        if (!n)
                return -ENOMEM;
        t = realloc(p->rules, (p->n_rules + 1) * sizeof(Rule));
        if (!t) {
                free(n);
                return -ENOMEM;
        }
        p->rules = t;
        p->rules[p->n_rules] = (Rule) {
                .name = n,
                .origin = here(s),
        };
        policy_keys_reset(&p->rules[p->n_rules], true);
        s->rule = p->n_rules++;
        return 1;
}

int policy_add_unread_rule(Policy *p, const char *file, unsigned line, const char *why) {
        _cleanup_free_ char *name = NULL, *reason = NULL;
        const char *owned = NULL;
        Rule *t;
        int r;

        r = line > 0 ? asprintf(&name, "(%s:%u)", file, line) : asprintf(&name, "(%s)", file);
        if (r < 0 || !(reason = strdup(why)))
                return -ENOMEM;
        /* A name that cat-config can print in a header ("[Rule NAME]"), whatever the file is called. */
        for (char *c = name; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f || strchr("[]#;", *c))
                        *c = '?';
        /* Origins point into p->files; a file or directory never parsed gets its copy in
         * p->unread_paths, so that cat-config names it. */
        for (char **f = p->files; f && *f; f++)
                if (streq(*f, file))
                        owned = *f;
        for (char **f = p->unread_paths; !owned && f && *f; f++)
                if (streq(*f, file))
                        owned = *f;
        if (!owned) {
                size_t n = strv_length(p->unread_paths);

                r = strv_extend(&p->unread_paths, &n, file);
                if (r < 0)
                        return r;
                owned = p->unread_paths[n - 1];
        }
        if (p->n_rules >= POLICY_MAX_RULES) {
                /* No room: the first rule stands in, disabled (policy_match() counts any). */
                if (!p->rules[0].disabled) {
                        p->rules[0].disabled = true;
                        p->rules[0].disabled_reason = TAKE_PTR(reason);
                        p->rules[0].o_disabled = (Origin) { .file = owned, .line = line };
                }
                return 0;
        }
        t = reallocarray(p->rules, p->n_rules + 1, sizeof(Rule));
        if (!t)
                return -ENOMEM;
        p->rules = t;
        memmove(p->rules + 1, p->rules, p->n_rules * sizeof(Rule));
        p->rules[0] = (Rule) {
                .name = TAKE_PTR(name),
                .origin = { .file = owned, .line = line },
                .disabled = true,
                .disabled_reason = TAKE_PTR(reason),
                .o_disabled = { .file = owned, .line = line },
        };
        policy_keys_reset(&p->rules[0], true);
        p->n_rules++;
        return 0;
}

/* Whether an ignored section header may have been a rule's: it names one ("rule" anywhere in it,
 * any case: "[rule x]", "[ Rule x]", "[Rules]"), or cannot be read at all (no ']'). */
static bool header_may_be_rule(const char *header, size_t len) {
        if (!memchr(header, ']', len))
                return true;
        for (size_t i = 0; i + 4 <= len; i++)
                if (strncasecmp(header + i, "rule", 4) == 0)
                        return true;
        return false;
}

/* The section ignored at s's line: a stand-in for the rule it may have been (policy_add_unread_rule()). */
static void ignored_section_may_be_rule(ParseState *s, const char *header, const char *why) {
        if (!header_may_be_rule(header, strlen(header)))
                return;
        if (policy_add_unread_rule(s->policy, s->file, s->line, why) < 0)
                policy_parse_oom(s);
}

/* "[Rule NAME]": name is the text between '[' and ']' after "Rule". */
static bool parse_rule_header(ParseState *s, const char *name, const char *close) {
        const char *rn = name + 4, *e = close;
        int r;

        while (rn < e && (*rn == ' ' || *rn == '\t'))
                rn++;
        while (e > rn && (e[-1] == ' ' || e[-1] == '\t'))
                e--;
        if (rn == e) {
                WARN(s, "Rule section without a name, ignoring section");
                ignored_section_may_be_rule(s, name - 1, "a [Rule] section without a name was ignored");
                return false;
        }
        for (const char *c = rn; c < e; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f || *c == '[' || *c == '#') {
                        WARN(s, "Invalid rule name '%.*s', ignoring section", (int) (e - rn), rn);
                        ignored_section_may_be_rule(s, name - 1,
                                                    "a [Rule] section with an invalid name was ignored");
                        return false;
                }
        r = find_or_add_rule(s, rn, e - rn);
        if (r < 0) {
                if (s->error == 0)
                        s->error = r;
                return false;
        }
        if (r == 0)
                return false;
        s->section = SECTION_RULE;
        s->section_name = "Rule";
        return true;
}

/* Parses a "[...]" line (leading whitespace already stripped) and sets s->section. Returns true
 * when the line may be handed to inih, false when it must be replaced by an empty line. */
static bool parse_section_line(ParseState *s, const char *l) {
        const char *close, *after, *name;
        size_t len;

        s->section = SECTION_IGNORED;

        close = strchr(l, ']');
        if (!close || memchr(l, ';', close - l)) {
                WARN(s, "Invalid section header '%s', ignoring section", l);
                ignored_section_may_be_rule(s, l, "a section header that could not be read was ignored");
                return false;
        }
        after = close + 1 + strspn(close + 1, " \t");
        if (*after && *after != '#' && *after != ';') {
                WARN(s, "Garbage after section header '%.*s', ignoring section", (int) (close - l + 1), l);
                ignored_section_may_be_rule(s, l, "a section header with garbage after it was ignored");
                return false;
        }

        name = l + 1;
        len = close - name;
        if (len >= INIH_MAX_SECTION) {
                WARN(s, "Section name too long (max %d bytes), ignoring section", INIH_MAX_SECTION - 1);
                ignored_section_may_be_rule(s, l, "a section with a name too long was ignored");
                return false;
        }

        if (len >= 4 && memcmp(name, "Rule", 4) == 0 && (len == 4 || name[4] == ' ' || name[4] == '\t'))
                return parse_rule_header(s, name, close);
        s->section_name = policy_key_section(name, len);
        if (!s->section_name) {
                WARN(s, "Unknown section [%.*s], ignoring section", (int) len, name);
                ignored_section_may_be_rule(s, l, "an unknown section named like a rule was ignored");
                return false;
        }
        s->section = SECTION_KEYS;
        return true;
}

/* Checks an assignment line; returns true when inih may see it. */
static bool check_assignment_line(ParseState *s, const char *l) {
        size_t k;
        const char *e;

        if (s->section == SECTION_IGNORED)
                return false;
        if (s->section == SECTION_NONE) {
                WARN(s, "Assignment outside of a section, ignoring");
                return false;
        }

        k = 0;
        while (isalnum((unsigned char) l[k]) || l[k] == '_')
                k++;
        e = l + k + strspn(l + k, " \t");
        if (!strchr(l, '=')) {
                if (current_rule(s))
                        policy_parse_disable_rule(s, "missing '=' in '%s'", l);
                else
                        WARN(s, "Missing '=', ignoring");
                return false;
        }
        if (k == 0 || *e != '=') {
                if (current_rule(s))
                        policy_parse_disable_rule(s, "invalid key name in '%s'", l);
                else
                        WARN(s, "Invalid key name in '%s', ignoring", l);
                return false;
        }
        if (k >= INIH_MAX_NAME) {
                if (current_rule(s))
                        policy_parse_disable_rule(s, "key name too long (max %d bytes)", INIH_MAX_NAME - 1);
                else
                        WARN(s, "Key name too long (max %d bytes), ignoring", INIH_MAX_NAME - 1);
                return false;
        }
        return true;
}

static char *policy_reader(char *str, int num, void *stream) {
        ParseState *s = stream;
        const char *nl, *l;
        size_t len, skip;

        if (s->pos >= s->end || num < 2)
                return NULL;

        nl = memchr(s->pos, '\n', s->end - s->pos);
        l = s->pos;
        len = nl ? (size_t) (nl - l) : (size_t) (s->end - l);
        s->pos = nl ? nl + 1 : s->end;
        s->line++;
        str[0] = 0;

        if (s->error < 0)
                return str;

        if (len > 0 && l[len - 1] == '\r')
                len--;
        if (s->line == 1 && len >= 3 && memcmp(l, "\xEF\xBB\xBF", 3) == 0) {
                l += 3;
                len -= 3;
        }
        skip = 0;
        while (skip < len && (l[skip] == ' ' || l[skip] == '\t'))
                skip++;
        /* Comments and blank lines never reach inih, so they may be of any length. */
        if (skip == len || l[skip] == '#' || l[skip] == ';')
                return str;
        /* num - 2: a line that never fills inih's buffer (above) */
        if (len > (size_t) num - 2) {
                /* A header we cannot read: do not let its keys land in the previous section. A
                 * key we cannot read in a rule may be the one that narrows it: disable the rule. */
                if (current_rule(s) && l[skip] != '[')
                        policy_parse_disable_rule(s, "line too long (%zu bytes, max %d)", len, num - 2);
                else
                        WARN(s, "Line too long (%zu bytes, max %d), ignoring", len, num - 2);
                if (l[skip] == '[') {
                        s->section = SECTION_IGNORED;
                        if (header_may_be_rule(l + skip, len - skip) &&
                            policy_add_unread_rule(s->policy, s->file, s->line,
                                                   "a section header line too long was ignored") < 0)
                                policy_parse_oom(s);
                }
                return str;
        }

        memcpy(str, l + skip, len - skip);
        str[len - skip] = 0;

        if (str[0] == '[') {
                if (!parse_section_line(s, str))
                        str[0] = 0;
                return str;
        }
        if (!check_assignment_line(s, str))
                str[0] = 0;
        return str;
}

/* ---- assignments ------------------------------------------------------------------------------ */

static void unknown_key(ParseState *s, const char *name) {
        const PolicyKey *k = policy_key_find(s->section_name, name, true);
        _cleanup_free_ char *hint = NULL;

        if (k && asprintf(&hint, " (did you mean '%s'?)", k->name) < 0) {
                policy_parse_oom(s);
                return;
        }
        if (current_rule(s))
                /* Perhaps a misspelt match key ("Paht="): ignoring it would widen the rule. */
                policy_parse_disable_rule(s, "unknown key '%s'%s", name, hint ?: "");
        else
                WARN(s, "Unknown key '%s' in section [%s]%s, ignoring", name, s->section_name, hint ?: "");
}

static int policy_handler(void *user, const char *section, const char *name, const char *value) {
        ParseState *s = user;
        const PolicyKey *k;
        void *base;

        /* The reader passes only lines of known sections; be safe anyway. */
        if (s->error < 0 || (s->section != SECTION_KEYS && s->section != SECTION_RULE))
                return 1;
        if (!value)
                value = "";

        k = policy_key_find(s->section_name, name, false);
        if (!k) {
                unknown_key(s, name);
                return 1;
        }
        base = current_rule(s) ?: (void *) s->policy;
        if (isempty(value))
                k->kind->reset(k, policy_key_field(k, base));
        else if (k->kind->parse(s, k, value, policy_key_field(k, base)) <= 0)
                return 1;
        *policy_key_origin(k, base) = here(s);
        return 1;
}

int policy_parse_text(Policy *p, const char *filename, const char *text, size_t size) {
        ParseState s;
        const char *nul;
        size_t n_files;
        int r;

        if (!p || !filename || (!text && size > 0))
                return -EINVAL;

        n_files = strv_length(p->files);
        if (n_files >= POLICY_MAX_FILES)
                return policy_warn(p, filename, 0, "Too many configuration files (max %u), ignoring file",
                                   POLICY_MAX_FILES);
        nul = size > 0 ? memchr(text, 0, size) : NULL;
        if (nul) {
                unsigned line = 1;

                for (const char *c = text; c < nul; c++)
                        if (*c == '\n')
                                line++;
                /* What the file sets is unknown: fail closed as for a file not read, and listed with
                 * those (cat-config's "Not read"), not with the files read (review AL, 4). */
                r = policy_warn(p, filename, line, "NUL byte in file, ignoring file");
                if (r >= 0)
                        r = policy_add_unread_rule(p, filename, 0, "the file was ignored (a NUL byte in it)");
                return r < 0 ? r : policy_mark_unread(p, filename);
        }
        r = strv_consume(&p->files, &n_files, strdup(filename));
        if (r < 0)
                return r;

        s = (ParseState) {
                .policy = p,
                .file = p->files[n_files - 1],
                .pos = text,
                .end = text + size,
        };

        if (size == 0)
                return 0;

        (void) ini_parse_stream(policy_reader, &s, policy_handler, &s);
        return s.error;
}
