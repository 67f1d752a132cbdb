/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Policy parsing. inih does the key=value splitting; our own reader (policy_reader) feeds it one
 * line at a time, counts lines, and hands inih only lines it would parse correctly:
 *
 *  - over-long lines: with the stock fgets()-style readers inih (55, default build, 200-byte line
 *    buffer) reads the first 199 bytes of a longer line and then parses the tail as a NEW line, so
 *    "Path=<long>MaxParallel=1" would silently set MaxParallel. We warn and pass an empty line;
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "device.h"
#include "policy.h"
#include "shared/fileio.h"
#include "shared/parse-util.h"
#include "shared/strv.h"

#define POLICY_MAX_CANDIDATES 4096U             /* drop-in directory entries looked at, in total */
#define POLICY_MAX_TIMESPAN (24U * 3600U * USEC_PER_SEC)
#define INIH_MAX_SECTION 50                     /* compile-time in libinih: names are cut at 49 */
#define INIH_MAX_NAME 50

#define DEFAULT_MAX_PARALLEL 16U
#define DEFAULT_MOUNT_TIMEOUT (10U * USEC_PER_SEC)
#define DEFAULT_DEADLINE (30U * USEC_PER_SEC)

static const char *const config_dirs[] = { "/etc", "/run", "/usr/local/lib", "/usr/lib" };

/* ---- enum tables ------------------------------------------------------------------------------ */

static const char *const rule_action_table[_RULE_ACTION_MAX] = {
        [RULE_ACTION_SYNC] = "sync",
        [RULE_ACTION_SKIP] = "skip",
        [RULE_ACTION_AUTO] = "auto",
};

static const char *const on_timeout_table[_ON_TIMEOUT_MAX] = {
        [ON_TIMEOUT_CONTINUE] = "continue",
        [ON_TIMEOUT_FAIL] = "fail",
};

static const char *const sync_on_suspend_mode_table[_SYNC_ON_SUSPEND_MAX] = {
        [SYNC_ON_SUSPEND_AUTO] = "auto",
        [SYNC_ON_SUSPEND_KEEP] = "keep",
        [SYNC_ON_SUSPEND_OFF] = "off",
};

static int table_lookup(const char *const *table, size_t n, const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (int) i;
        return -EINVAL;
}

const char *rule_action_to_string(RuleAction a) {
        return a >= 0 && a < _RULE_ACTION_MAX ? rule_action_table[a] : NULL;
}

RuleAction rule_action_from_string(const char *s) {
        return (RuleAction) table_lookup(rule_action_table, _RULE_ACTION_MAX, s);
}

const char *on_timeout_to_string(OnTimeout a) {
        return a >= 0 && a < _ON_TIMEOUT_MAX ? on_timeout_table[a] : NULL;
}

OnTimeout on_timeout_from_string(const char *s) {
        return (OnTimeout) table_lookup(on_timeout_table, _ON_TIMEOUT_MAX, s);
}

const char *sync_on_suspend_mode_to_string(SyncOnSuspendMode m) {
        return m >= 0 && m < _SYNC_ON_SUSPEND_MAX ? sync_on_suspend_mode_table[m] : NULL;
}

SyncOnSuspendMode sync_on_suspend_mode_from_string(const char *s) {
        return (SyncOnSuspendMode) table_lookup(sync_on_suspend_mode_table, _SYNC_ON_SUSPEND_MAX, s);
}

/* ---- Policy object ---------------------------------------------------------------------------- */

static void rule_done(Rule *r) {
        free(r->name);
        free(r->disabled_reason);
        strv_free(r->paths);
        strv_free(r->types);
}

static void policy_set_defaults(Policy *p) {
        p->max_parallel = DEFAULT_MAX_PARALLEL;
        p->mount_timeout = DEFAULT_MOUNT_TIMEOUT;
        p->deadline = DEFAULT_DEADLINE;
        p->skip_clean = false;
        p->on_timeout = ON_TIMEOUT_CONTINUE;
        p->sync_on_suspend = SYNC_ON_SUSPEND_AUTO;
        p->o_max_parallel = p->o_mount_timeout = p->o_deadline = p->o_skip_clean = p->o_on_timeout =
                p->o_sync_on_suspend = (Origin) {};
}

int policy_new(Policy **ret) {
        Policy *p;

        p = calloc(1, sizeof(Policy));
        if (!p)
                return -ENOMEM;
        /* Empty vectors rather than NULL, so callers can always iterate. */
        p->files = calloc(1, sizeof(char *));
        p->warnings = calloc(1, sizeof(char *));
        if (!p->files || !p->warnings)
                return policy_free(p), -ENOMEM;
        policy_set_defaults(p);
        *ret = p;
        return 0;
}

Policy *policy_free(Policy *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_rules; i++)
                rule_done(&p->rules[i]);
        free(p->rules);
        strv_free(p->files);
        for (size_t i = 0; i < p->n_warnings; i++)
                free((char *) p->warning_origins[i].file);
        free(p->warning_origins);
        strv_free(p->warnings);
        free(p);
        return NULL;
}

/* Appends "file:line: message" (or "file: message" for line 0). Bounded: the last slot says that
 * further warnings were dropped. */
_printf_(4, 5) static int policy_warn(Policy *p, const char *file, unsigned line, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        Origin *o;
        char *w;
        va_list ap;
        int r;

        if (p->n_warnings >= POLICY_MAX_WARNINGS)
                return 0;

        /* The origin first, one slot ahead: strv_consume() below is the last step that can fail. */
        o = reallocarray(p->warning_origins, p->n_warnings + 1, sizeof(Origin));
        if (!o)
                return -ENOMEM;
        p->warning_origins = o;
        o[p->n_warnings] = (Origin) { .file = strdup(file ?: "(null)"), .line = line };
        if (!o[p->n_warnings].file)
                return -ENOMEM;

        if (p->n_warnings == POLICY_MAX_WARNINGS - 1)
                r = asprintf(&msg, "too many warnings, ignoring further ones");
        else {
                va_start(ap, fmt);
                r = vasprintf(&msg, fmt, ap);
                va_end(ap);
        }
        if (r < 0)
                goto fail;

        if (line > 0)
                r = asprintf(&w, "%s:%u: %s", file ?: "(null)", line, msg);
        else
                r = asprintf(&w, "%s: %s", file ?: "(null)", msg);
        if (r < 0)
                goto fail;

        r = strv_consume(&p->warnings, &p->n_warnings, w);
        if (r < 0)
                goto fail;
        return r;
fail:
        free((char *) o[p->n_warnings].file);
        return -ENOMEM;
}

/* ---- the parser ------------------------------------------------------------------------------- */

typedef enum SectionKind {
        SECTION_NONE,     /* before the first header */
        SECTION_SYNC,
        SECTION_KERNEL,
        SECTION_RULE,
        SECTION_IGNORED,  /* unknown or invalid section: already warned, keys dropped silently */
} SectionKind;

typedef struct ParseState {
        Policy *policy;
        const char *file;       /* owned by policy->files */
        const char *pos, *end;
        unsigned line;
        SectionKind section;
        size_t rule;            /* index into policy->rules when section == SECTION_RULE */
        int error;              /* first -ENOMEM */
} ParseState;

#define WARN(s, ...)                                                                             \
        do {                                                                                     \
                int _w_ = policy_warn((s)->policy, (s)->file, (s)->line, __VA_ARGS__);           \
                if (_w_ < 0 && (s)->error == 0)                                                  \
                        (s)->error = _w_;                                                        \
        } while (0)

static Origin here(const ParseState *s) {
        return (Origin) { .file = s->file, .line = s->line };
}

/* Fails closed: a rule with a line we cannot understand is disabled whole, for good (a later valid
 * line does not bring it back), so it can never skip a mount it was not written for. One warning
 * per bad line, naming the rule. */
_printf_(3, 4) static void rule_disable(ParseState *s, Rule *rule, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0) {
                if (s->error == 0)
                        s->error = -ENOMEM;
                return;
        }
        WARN(s, "rule '%s' disabled: %s", rule->name, msg);
        if (rule->disabled)
                return;
        rule->disabled = true;
        rule->disabled_reason = TAKE_PTR(msg);
        rule->o_disabled = here(s);
}

static Rule *current_rule(ParseState *s) {
        return s->section == SECTION_RULE ? &s->policy->rules[s->rule] : NULL;
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
                .action = RULE_ACTION_AUTO,
                .mount_timeout = USEC_INFINITY,
                .origin = here(s),
        };
        s->rule = p->n_rules++;
        return 1;
}

/* Parses a "[...]" line (leading whitespace already stripped) and sets s->section. Returns true
 * when the line may be handed to inih, false when it must be replaced by an empty line. */
static bool parse_section_line(ParseState *s, const char *l) {
        const char *close, *after, *name;
        size_t len;
        int r;

        s->section = SECTION_IGNORED;

        close = strchr(l, ']');
        if (!close || memchr(l, ';', close - l)) {
                WARN(s, "Invalid section header '%s', ignoring section", l);
                return false;
        }
        after = close + 1 + strspn(close + 1, " \t");
        if (*after && *after != '#' && *after != ';') {
                WARN(s, "Garbage after section header '%.*s', ignoring section", (int) (close - l + 1), l);
                return false;
        }

        name = l + 1;
        len = close - name;
        if (len >= INIH_MAX_SECTION) {
                WARN(s, "Section name too long (max %d bytes), ignoring section", INIH_MAX_SECTION - 1);
                return false;
        }

        if (len == 4 && memcmp(name, "Sync", 4) == 0)
                s->section = SECTION_SYNC;
        else if (len == 6 && memcmp(name, "Kernel", 6) == 0)
                s->section = SECTION_KERNEL;
        else if (len >= 4 && memcmp(name, "Rule", 4) == 0 && (len == 4 || name[4] == ' ' || name[4] == '\t')) {
                const char *rn = name + 4, *e = close;

                while (rn < e && (*rn == ' ' || *rn == '\t'))
                        rn++;
                while (e > rn && (e[-1] == ' ' || e[-1] == '\t'))
                        e--;
                if (rn == e) {
                        WARN(s, "Rule section without a name, ignoring section");
                        return false;
                }
                for (const char *c = rn; c < e; c++)
                        if ((unsigned char) *c < 0x20 || *c == 0x7f || *c == '[' || *c == '#') {
                                WARN(s, "Invalid rule name '%.*s', ignoring section", (int) (e - rn), rn);
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
        } else {
                WARN(s, "Unknown section [%.*s], ignoring section", (int) len, name);
                return false;
        }
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
                        rule_disable(s, current_rule(s), "missing '=' in '%s'", l);
                else
                        WARN(s, "Missing '=', ignoring");
                return false;
        }
        if (k == 0 || *e != '=') {
                if (current_rule(s))
                        rule_disable(s, current_rule(s), "invalid key name in '%s'", l);
                else
                        WARN(s, "Invalid key name in '%s', ignoring", l);
                return false;
        }
        if (k >= INIH_MAX_NAME) {
                if (current_rule(s))
                        rule_disable(s, current_rule(s), "key name too long (max %d bytes)", INIH_MAX_NAME - 1);
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
        if (len > (size_t) num - 1) {
                /* A header we cannot read: do not let its keys land in the previous section. A
                 * key we cannot read in a rule may be the one that narrows it: disable the rule. */
                if (l[skip] == '[') {
                        WARN(s, "Line too long (%zu bytes, max %d), ignoring", len, num - 1);
                        s->section = SECTION_IGNORED;
                } else if (current_rule(s))
                        rule_disable(s, current_rule(s), "line too long (%zu bytes, max %d)", len, num - 1);
                else
                        WARN(s, "Line too long (%zu bytes, max %d), ignoring", len, num - 1);
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

/* ---- value parsers ---------------------------------------------------------------------------- */

static int parse_time_value(ParseState *s, const char *key, const char *value, usec_t *ret) {
        usec_t u;
        int r;

        r = parse_timespan(value, &u);
        if (r < 0) {
                WARN(s, "Invalid %s= value '%s', ignoring", key, value);
                return 0;
        }
        if (u == 0 || u > POLICY_MAX_TIMESPAN) {
                WARN(s, "Invalid %s= value '%s' (must be more than 0 and at most 24h), ignoring", key, value);
                return 0;
        }
        *ret = u;
        return 1;
}

static void handle_sync(ParseState *s, const char *key, const char *value) {
        Policy *p = s->policy;
        usec_t u;
        int r;

        if (streq(key, "MaxParallel")) {
                unsigned v;

                if (isempty(value))
                        p->max_parallel = DEFAULT_MAX_PARALLEL;
                else if (safe_atou(value, &v) < 0 || v < 1 || v > POLICY_MAX_PARALLEL_LIMIT) {
                        WARN(s, "Invalid MaxParallel= value '%s' (expected 1..%u), ignoring", value,
                             POLICY_MAX_PARALLEL_LIMIT);
                        return;
                } else
                        p->max_parallel = v;
                p->o_max_parallel = here(s);

        } else if (streq(key, "MountTimeoutSec")) {
                if (isempty(value))
                        p->mount_timeout = DEFAULT_MOUNT_TIMEOUT;
                else if (parse_time_value(s, key, value, &u) <= 0)
                        return;
                else
                        p->mount_timeout = u;
                p->o_mount_timeout = here(s);

        } else if (streq(key, "DeadlineSec")) {
                if (isempty(value))
                        p->deadline = DEFAULT_DEADLINE;
                else if (parse_time_value(s, key, value, &u) <= 0)
                        return;
                else
                        p->deadline = u;
                p->o_deadline = here(s);

        } else if (streq(key, "SkipClean")) {
                if (isempty(value))
                        p->skip_clean = false;
                else {
                        r = parse_boolean(value);
                        if (r < 0) {
                                WARN(s, "Invalid SkipClean= value '%s' (expected a boolean), ignoring", value);
                                return;
                        }
                        p->skip_clean = r;
                }
                p->o_skip_clean = here(s);

        } else if (streq(key, "OnTimeout")) {
                OnTimeout t;

                if (isempty(value))
                        p->on_timeout = ON_TIMEOUT_CONTINUE;
                else {
                        t = on_timeout_from_string(value);
                        if (t < 0) {
                                WARN(s, "Invalid OnTimeout= value '%s' (expected continue|fail), ignoring", value);
                                return;
                        }
                        p->on_timeout = t;
                }
                p->o_on_timeout = here(s);

        } else
                WARN(s, "Unknown key '%s' in section [Sync], ignoring", key);
}

static void handle_kernel(ParseState *s, const char *key, const char *value) {
        Policy *p = s->policy;

        if (streq(key, "SyncOnSuspend")) {
                SyncOnSuspendMode m;

                if (isempty(value))
                        p->sync_on_suspend = SYNC_ON_SUSPEND_AUTO;
                else {
                        m = sync_on_suspend_mode_from_string(value);
                        if (m < 0) {
                                WARN(s, "Invalid SyncOnSuspend= value '%s' (expected auto|keep|off), ignoring",
                                     value);
                                return;
                        }
                        p->sync_on_suspend = m;
                }
                p->o_sync_on_suspend = here(s);
        } else
                WARN(s, "Unknown key '%s' in section [Kernel], ignoring", key);
}

/* Path= and Type=: a list of globs, replacing the earlier list; empty unsets. A list we cannot take
 * disables the rule (keeping the earlier list, or none, would widen it). */
static void handle_glob_list(ParseState *s, Rule *rule, const char *key, const char *value, bool path,
                             char ***list, Origin *o) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = strv_split_words(value, POLICY_MAX_PATTERNS, &l);
        if (r == -ENOMEM) {
                s->error = r;
                return;
        }
        if (r == -E2BIG) {
                rule_disable(s, rule, "too many patterns in %s= (max %u)", key, POLICY_MAX_PATTERNS);
                return;
        }
        if (path)
                for (char **i = l; i && *i; i++)
                        if ((*i)[0] != '/' && (*i)[0] != '*') {
                                rule_disable(s, rule, "invalid Path= pattern '%s' (must start with '/' or '*')",
                                             *i);
                                return;
                        }

        strv_free(*list);
        *list = TAKE_PTR(l);    /* NULL when the value was empty: any */
        *o = here(s);
}

static void handle_rule(ParseState *s, const char *key, const char *value) {
        Rule *rule = &s->policy->rules[s->rule];

        if (streq(key, "Path"))
                handle_glob_list(s, rule, key, value, true, &rule->paths, &rule->o_paths);
        else if (streq(key, "Type"))
                handle_glob_list(s, rule, key, value, false, &rule->types, &rule->o_types);
        else if (streq(key, "Device")) {
                unsigned mask = 0;

                for (const char *v = value;;) {
                        char word[64];
                        size_t k;
                        int c;

                        v += strspn(v, " \t");
                        if (!*v)
                                break;
                        k = strcspn(v, " \t");
                        if (k >= sizeof(word))
                                c = -EINVAL;
                        else {
                                memcpy(word, v, k);
                                word[k] = 0;
                                c = device_class_from_string(word);
                        }
                        if (c <= 0) {
                                rule_disable(s, rule, "unknown device class '%.*s' in Device=", (int) k, v);
                                return;
                        }
                        mask |= (unsigned) c;
                        v += k;
                }
                rule->device_classes = mask;
                rule->o_device = here(s);

        } else if (streq(key, "Action")) {
                RuleAction a;

                if (isempty(value))
                        a = RULE_ACTION_AUTO;
                else {
                        a = rule_action_from_string(value);
                        if (a < 0) {
                                /* What the rule matches is understood, what to do is not: the one
                                 * choice that cannot lose data. */
                                WARN(s, "Invalid Action= value '%s' in rule '%s' (expected sync|skip|auto), "
                                     "using Action=sync", value, rule->name);
                                a = RULE_ACTION_SYNC;
                        }
                }
                rule->action = a;
                rule->o_action = here(s);

        } else if (streq(key, "MountTimeoutSec")) {
                usec_t u;

                if (isempty(value))
                        u = USEC_INFINITY;
                else if (parse_time_value(s, key, value, &u) <= 0)
                        return;
                rule->mount_timeout = u;
                rule->o_mount_timeout = here(s);

        } else
                /* Perhaps a misspelt match key ("Paht="): ignoring it would widen the rule. */
                rule_disable(s, rule, "unknown key '%s'", key);
}

static int policy_handler(void *user, const char *section, const char *name, const char *value) {
        ParseState *s = user;

        if (s->error < 0)
                return 1;
        if (!value)
                value = "";

        switch (s->section) {
        case SECTION_SYNC:
                handle_sync(s, name, value);
                break;
        case SECTION_KERNEL:
                handle_kernel(s, name, value);
                break;
        case SECTION_RULE:
                handle_rule(s, name, value);
                break;
        default:
                /* The reader does not pass such lines; be safe anyway. */
                break;
        }
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
        r = strv_consume(&p->files, &n_files, strdup(filename));
        if (r < 0)
                return r;

        s = (ParseState) {
                .policy = p,
                .file = p->files[n_files - 1],
                .pos = text,
                .end = text + size,
        };

        nul = size > 0 ? memchr(text, 0, size) : NULL;
        if (nul) {
                unsigned line = 1;

                for (const char *c = text; c < nul; c++)
                        if (*c == '\n')
                                line++;
                return policy_warn(p, s.file, line, "NUL byte in file, ignoring file");
        }
        if (size == 0)
                return 0;

        (void) ini_parse_stream(policy_reader, &s, policy_handler, &s);
        return s.error;
}

/* ---- finding files ---------------------------------------------------------------------------- */

typedef struct Candidate {
        char *name;
        unsigned prio;          /* index into config_dirs */
        bool masked;            /* symlink to /dev/null (or /dev/null itself) */
} Candidate;

static int candidate_cmp(const void *a, const void *b) {
        const Candidate *x = a, *y = b;
        int c = strcmp(x->name, y->name);

        if (c != 0)
                return c;
        return x->prio < y->prio ? -1 : x->prio > y->prio;
}

static bool is_dev_null(int dfd, const char *name, const struct dirent *de) {
        char target[16];
        struct stat st;
        ssize_t n;

        if (de->d_type == DT_LNK || de->d_type == DT_UNKNOWN) {
                n = readlinkat(dfd, name, target, sizeof(target) - 1);
                if (n >= 0) {
                        target[n] = 0;
                        if (streq(target, "/dev/null"))
                                return true;
                }
        }
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISCHR(st.st_mode) &&
            major(st.st_rdev) == 1 && minor(st.st_rdev) == 3)
                return true;
        return false;
}

/* Gathers drop-in candidates from one directory. Sets *truncated when the candidate bound is hit. */
static int gather_dropins(int root_fd, unsigned prio, Candidate **c, size_t *n, bool *truncated,
                          PolicyProgress progress, void *userdata) {
        _cleanup_free_ char *dir = NULL;
        DIR *d;
        int dfd, r = 0;

        if (asprintf(&dir, "%s/suspend-sync.conf.d", config_dirs[prio]) < 0)
                return -ENOMEM;
        if (progress)
                progress(dir, userdata);
        dfd = open_dir_at(root_fd, dir);
        if (dfd < 0)
                return 0;       /* missing or unreadable directory: nothing there */
        d = fdopendir(dfd);
        if (!d) {
                safe_close(dfd);
                return 0;
        }

        for (struct dirent *de; (de = readdir(d));) {
                size_t len = strlen(de->d_name);
                struct stat st;
                Candidate *t;
                bool masked;

                if (de->d_name[0] == '.' || len <= 5 || !streq(de->d_name + len - 5, ".conf"))
                        continue;
                masked = is_dev_null(dirfd(d), de->d_name, de);
                if (!masked && (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode)))
                        continue;
                if (*n >= POLICY_MAX_CANDIDATES) {
                        *truncated = true;
                        break;
                }
                t = realloc(*c, (*n + 1) * sizeof(Candidate));
                if (!t) {
                        r = -ENOMEM;
                        break;
                }
                *c = t;
                (*c)[*n] = (Candidate) { .name = strdup(de->d_name), .prio = prio, .masked = masked };
                if (!(*c)[*n].name) {
                        r = -ENOMEM;
                        break;
                }
                (*n)++;
        }
        closedir(d);
        return r;
}

static int find_files(int root_fd, char ***ret, bool *ret_truncated, PolicyProgress progress, void *userdata) {
        _cleanup_strv_free_ char **l = NULL;
        Candidate *c = NULL;
        size_t n = 0, n_files = 0;
        bool truncated = false;
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(config_dirs); i++) {
                _cleanup_free_ char *path = NULL;
                struct stat st;

                if (asprintf(&path, "%s/suspend-sync.conf", config_dirs[i]) < 0)
                        return -ENOMEM;
                if (progress)
                        progress(path, userdata);
                if (fstatat(root_fd, skip_root_prefix(path), &st, 0) >= 0) {
                        r = strv_consume(&l, &n_files, TAKE_PTR(path));
                        if (r < 0)
                                return r;
                        break;
                }
        }

        for (unsigned i = 0; i < ELEMENTSOF(config_dirs); i++) {
                r = gather_dropins(root_fd, i, &c, &n, &truncated, progress, userdata);
                if (r < 0)
                        goto finish;
        }

        if (n > 0)
                qsort(c, n, sizeof(Candidate), candidate_cmp);
        for (size_t i = 0; i < n; i++) {
                char *path;

                if (i > 0 && streq(c[i].name, c[i - 1].name))
                        continue;       /* hidden by the same name in an earlier directory */
                if (c[i].masked)
                        continue;
                if (n_files >= POLICY_MAX_FILES) {
                        truncated = true;
                        break;
                }
                if (asprintf(&path, "%s/suspend-sync.conf.d/%s", config_dirs[c[i].prio], c[i].name) < 0)
                        path = NULL;
                r = strv_consume(&l, &n_files, path);
                if (r < 0)
                        goto finish;
        }

        if (!l) {
                l = calloc(1, sizeof(char *));
                if (!l) {
                        r = -ENOMEM;
                        goto finish;
                }
        }
        *ret = TAKE_PTR(l);
        if (ret_truncated)
                *ret_truncated = truncated;
        r = 0;
finish:
        for (size_t i = 0; i < n; i++)
                free(c[i].name);
        free(c);
        return r;
}

int policy_find_files(int root_fd, char ***ret) {
        return find_files(root_fd, ret, NULL, NULL, NULL);
}

PolicySources *policy_sources_free(PolicySources *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_files; i++) {
                free(s->files[i].path);
                free(s->files[i].text);
        }
        free(s->files);
        free(s);
        return NULL;
}

int policy_sources_add(PolicySources *s, const char *path, int error, const char *text, size_t size) {
        PolicyFile *t, f = { .error = error, .size = error < 0 ? 0 : size };

        if (s->n_files >= POLICY_MAX_FILES)
                return -E2BIG;
        f.path = strdup(path);
        f.text = error < 0 ? NULL : malloc(size + 1);
        if (!f.path || (error >= 0 && !f.text))
                goto oom;
        if (f.text) {
                if (size > 0)
                        memcpy(f.text, text, size);
                f.text[size] = 0;
        }
        t = reallocarray(s->files, s->n_files + 1, sizeof(PolicyFile));
        if (!t)
                goto oom;
        s->files = t;
        s->files[s->n_files++] = f;
        return 0;
oom:
        free(f.path);
        free(f.text);
        return -ENOMEM;
}

/* Reads one file into s; the total of all texts is bounded by POLICY_MAX_TOTAL_SIZE. */
static int read_one(PolicySources *s, int dir_fd, const char *path, size_t *total, PolicyProgress progress,
                    void *userdata) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int r;

        if (progress)
                progress(path, userdata);
        if (*total >= POLICY_MAX_TOTAL_SIZE)
                return policy_sources_add(s, path, -E2BIG, NULL, 0);
        r = read_full_file_at(dir_fd, path, MIN(POLICY_MAX_FILE_SIZE, POLICY_MAX_TOTAL_SIZE - *total), &text,
                              &size);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG && POLICY_MAX_TOTAL_SIZE - *total < POLICY_MAX_FILE_SIZE)
                r = -E2BIG;
        if (r >= 0)
                *total += size;
        return policy_sources_add(s, path, r < 0 ? r : 0, text, size);
}

int policy_read_sources(int root_fd, const char *config_path, PolicyProgress progress, void *userdata,
                        PolicySources **ret) {
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_strv_free_ char **files = NULL;
        size_t total = 0;
        int r;

        s = calloc(1, sizeof(PolicySources));
        if (!s)
                return -ENOMEM;

        if (config_path) {
                s->explicit = true;
                /* Absolute: below root_fd; relative: from the working directory. */
                r = read_one(s, config_path[0] == '/' ? root_fd : AT_FDCWD, config_path, &total, progress,
                             userdata);
                if (r < 0)
                        return r;
        } else {
                r = find_files(root_fd, &files, &s->truncated, progress, userdata);
                if (r < 0)
                        return r;
                for (char **f = files; *f; f++) {
                        r = read_one(s, root_fd, *f, &total, progress, userdata);
                        if (r < 0)
                                return r;
                }
        }

        *ret = TAKE_PTR(s);
        return 0;
}

static int build_one(Policy *p, const PolicyFile *f, bool explicit) {
        if (f->error == -ENOENT && !explicit)
                return 0;       /* vanished since we listed it */
        if (f->error == -ENOENT)
                return policy_warn(p, f->path, 0, "File not found, using defaults");
        if (f->error == -EFBIG)
                return policy_warn(p, f->path, 0, "File larger than %u bytes, ignoring", POLICY_MAX_FILE_SIZE);
        if (f->error == -E2BIG)
                return policy_warn(p, f->path, 0, "Configuration larger than %u bytes in total, ignoring this file",
                                   POLICY_MAX_TOTAL_SIZE);
        if (f->error < 0)
                return policy_warn(p, f->path, 0, "Failed to read: %s, ignoring", strerror(-f->error));
        return policy_parse_text(p, f->path, f->text, f->size);
}

int policy_build(const PolicySources *s, Policy **ret) {
        _cleanup_(policy_freep) Policy *p = NULL;
        int r;

        r = policy_new(&p);
        if (r < 0)
                return r;
        if (s->truncated) {
                r = policy_warn(p, "suspend-sync.conf.d", 0, "Too many drop-in files (max %u in total), ignoring the rest",
                                POLICY_MAX_FILES);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < s->n_files; i++) {
                r = build_one(p, &s->files[i], s->explicit);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(p);
        return 0;
}

int policy_load(int root_fd, const char *config_path, Policy **ret) {
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        int r;

        r = policy_read_sources(root_fd, config_path, NULL, NULL, &s);
        if (r < 0)
                return r;
        return policy_build(s, ret);
}

/* ---- matching --------------------------------------------------------------------------------- */

static bool globs_match(char *const *patterns, const char *s) {
        if (!patterns)
                return true;
        if (!s)
                return false;
        for (char *const *i = patterns; *i; i++)
                if (fnmatch(*i, s, 0) == 0)
                        return true;
        return false;
}

const Rule *policy_match(const Policy *p, const char *mount_point, const char *fstype,
                         unsigned device_classes) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_rules; i++) {
                const Rule *r = &p->rules[i];

                if (r->disabled)
                        continue;
                if (!globs_match(r->paths, mount_point))
                        continue;
                if (!globs_match(r->types, fstype))
                        continue;
                if (r->device_classes != 0 && (r->device_classes & device_classes) == 0)
                        continue;
                return r;
        }
        return NULL;
}

/* ---- formatting ------------------------------------------------------------------------------- */

/* The origin comment line; note says what an unset (default) value means. */
static void put_origin(FILE *f, Origin o, const char *note) {
        if (o.file)
                fprintf(f, "# from %s:%u\n", o.file, o.line);
        else if (note)
                fprintf(f, "# default (%s)\n", note);
        else
                fputs("# default\n", f);
}

static void put_time(FILE *f, const char *key, usec_t u, Origin o, const char *note) {
        char buf[FORMAT_TIMESPAN_MAX];

        put_origin(f, o, note);
        fprintf(f, "%s=%s\n", key, u == USEC_INFINITY ? "" : format_timespan(buf, sizeof(buf), u));
}

static void put_list(FILE *f, const char *key, char *const *l, Origin o) {
        put_origin(f, o, "any");
        fprintf(f, "%s=", key);
        for (char *const *i = l; i && *i; i++)
                fprintf(f, "%s%s", i == l ? "" : " ", *i);
        fputc('\n', f);
}

int policy_format(const Policy *p, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        if (!p)
                return -EINVAL;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;

        fputs("# Effective suspend-sync configuration.\n", f);
        if (strv_length(p->files) == 0)
                fputs("# No configuration files read: built-in defaults.\n", f);
        else {
                fputs("# Files read, in order:\n", f);
                for (char **i = p->files; *i; i++)
                        fprintf(f, "#   %s\n", *i);
        }

        fputs("\n[Sync]\n", f);
        put_origin(f, p->o_max_parallel, NULL);
        fprintf(f, "MaxParallel=%u\n", p->max_parallel);
        put_time(f, "MountTimeoutSec", p->mount_timeout, p->o_mount_timeout, NULL);
        put_time(f, "DeadlineSec", p->deadline, p->o_deadline, NULL);
        put_origin(f, p->o_skip_clean, NULL);
        if (p->skip_clean)
                fputs("# " POLICY_SKIP_CLEAN_NO_EFFECT "\n", f);
        fprintf(f, "SkipClean=%s\n", p->skip_clean ? "yes" : "no");
        put_origin(f, p->o_on_timeout, NULL);
        fprintf(f, "OnTimeout=%s\n", on_timeout_to_string(p->on_timeout) ?: "");

        fputs("\n[Kernel]\n", f);
        put_origin(f, p->o_sync_on_suspend, NULL);
        fprintf(f, "SyncOnSuspend=%s\n", sync_on_suspend_mode_to_string(p->sync_on_suspend) ?: "");

        for (size_t i = 0; i < p->n_rules; i++) {
                const Rule *r = &p->rules[i];

                fputc('\n', f);
                put_origin(f, r->origin, NULL);
                if (r->disabled)
                        fprintf(f, "# DISABLED, matches no mount: %s (%s:%u)\n", r->disabled_reason ?: "",
                                r->o_disabled.file ?: "", r->o_disabled.line);
                fprintf(f, "[Rule %s]\n", r->name);
                put_list(f, "Path", r->paths, r->o_paths);
                put_list(f, "Type", r->types, r->o_types);
                put_origin(f, r->o_device, "any");
                fputs("Device=", f);
                for (unsigned bit = 1, first = 1; bit <= _DEVICE_CLASS_ALL; bit <<= 1)
                        if (r->device_classes & bit) {
                                fprintf(f, "%s%s", first ? "" : " ", device_class_to_string(bit) ?: "?");
                                first = 0;
                        }
                fputc('\n', f);
                put_origin(f, r->o_action, NULL);
                fprintf(f, "Action=%s\n", rule_action_to_string(r->action) ?: "");
                put_time(f, "MountTimeoutSec", r->mount_timeout, r->o_mount_timeout, "[Sync] MountTimeoutSec=");
        }

        if (ferror(f)) {
                (void) fclose(f);
                return -ENOMEM;
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}
