/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Policy: /etc/suspend-sync.conf and suspend-sync.conf.d/ drop-ins (systemd semantics), parsed
 * with inih through our own line reader so warnings carry file:line. Config never kills a run: a bad
 * value or unknown key yields a warning and the default (or earlier value) is kept — except in a
 * [Rule] section, which fails closed: any line of it that cannot be understood (a bad Path=, Type=
 * or Device= value, an unknown key, an unparsable or over-long line) disables the whole rule for
 * good, and an invalid Action= makes it Action=sync. A rule that cannot be understood never skips.
 */

#include <stdbool.h>
#include <stddef.h>

#include "shared/macro.h"
#include "shared/string-table.h"
#include "shared/time-util.h"

#define POLICY_MAX_RULES 256U
#define POLICY_MAX_PATTERNS 64U /* per rule and key */
#define POLICY_MAX_WARNINGS 256U
#define POLICY_MAX_FILES 256U
/* PolicySources entries: the files, and what the listing found besides (a drop-in directory not
 * listed, a notice, the first drop-in left out: at most 4 + CONF_FILES_MAX_NOTICES + 1 with our 4
 * directories). */
#define POLICY_MAX_SOURCES (POLICY_MAX_FILES + 16U)
#define POLICY_MAX_PARALLEL_LIMIT 64U
#define POLICY_MAX_FILE_SIZE (1024U * 1024U)
#define POLICY_MAX_TOTAL_SIZE (4U * 1024U * 1024U) /* all files together */
/* node_exporter's textfile directory in Debian's prometheus-node-exporter: metrics are written
 * there after each resume, only if the directory exists. */
#define METRICS_TEXTFILE_DIR_DEFAULT "/var/lib/prometheus/node-exporter"

typedef enum RuleAction {
        RULE_ACTION_SYNC,
        RULE_ACTION_SKIP,
        RULE_ACTION_AUTO, /* the built-in decision: sync whatever may hold data */
        _RULE_ACTION_MAX,
        _RULE_ACTION_INVALID = -EINVAL,
} RuleAction;

DECLARE_STRING_TABLE_LOOKUP(rule_action, RuleAction);

typedef enum OnTimeout {
        ON_TIMEOUT_CONTINUE,
        ON_TIMEOUT_FAIL,
        _ON_TIMEOUT_MAX,
        _ON_TIMEOUT_INVALID = -EINVAL,
} OnTimeout;

DECLARE_STRING_TABLE_LOOKUP(on_timeout, OnTimeout);

typedef enum SyncOnSuspendMode {
        SYNC_ON_SUSPEND_AUTO,
        SYNC_ON_SUSPEND_KEEP,
        SYNC_ON_SUSPEND_OFF,
        _SYNC_ON_SUSPEND_MAX,
        _SYNC_ON_SUSPEND_INVALID = -EINVAL,
} SyncOnSuspendMode;

DECLARE_STRING_TABLE_LOOKUP(sync_on_suspend_mode, SyncOnSuspendMode);

/* Where a value came from, for cat-config: file (owned by Policy.files) and line; file NULL = default. */
typedef struct Origin {
        const char *file;
        unsigned line;
} Origin;

/* SkipClean=yes asked to skip filesystems proven clean. No filesystem type has an exact test for
 * that (docs/CLEAN-EVIDENCE.md), so the key is accepted and ignored; verbs say so once. */
#define POLICY_SKIP_CLEAN_NO_EFFECT                                                                  \
        "SkipClean=yes has no effect: no filesystem type has an exact clean test, every mount that " \
        "may hold data is synced (see suspend-sync.conf(5))"

/*
 * The key table: one row per key, X(section, key, C type, field, origin field, kind, argument,
 * default). The fields of Policy and Rule below are made from these rows, and policy.c makes from
 * them the parser, the defaults, the origins and cat-config's output; test-conf-keys checks every
 * row against suspend-sync.conf(5) and conf/suspend-sync.conf, and back. A new key is one row here,
 * its consumer, the man page and the shipped configuration.
 *
 * Kinds (policy.c): UNSIGNED 1..argument; TIMESPAN more than 0 and at most 24h (argument: what an
 * unset value means, for cat-config); BOOLEAN (argument: cat-config's comment when yes); ENUM
 * (argument: the name of its string table, an invalid value is ignored); and in rules, which fail
 * closed (see above), GLOBS (argument: patterns must start with '/' or '*'), DEVICE (device
 * classes) and ACTION (an invalid value gives Action=sync); PATH (an absolute directory or "no";
 * argument: the default directory, owned copies). An empty value resets to the default.
 */
#define POLICY_KEYS(X)                                                                                       \
        X(Sync, MaxParallel, unsigned, max_parallel, o_max_parallel, UNSIGNED, POLICY_MAX_PARALLEL_LIMIT,    \
          16U)                                                                                               \
        X(Sync, MountTimeoutSec, usec_t, mount_timeout, o_mount_timeout, TIMESPAN, NULL, 10U * USEC_PER_SEC) \
        X(Sync, DeadlineSec, usec_t, deadline, o_deadline, TIMESPAN, NULL, 30U * USEC_PER_SEC)               \
        /* Parsed for old configurations, changes nothing: see POLICY_SKIP_CLEAN_NO_EFFECT */                \
        X(Sync, SkipClean, bool, skip_clean, o_skip_clean, BOOLEAN, POLICY_SKIP_CLEAN_NO_EFFECT, false)      \
        X(Sync, OnTimeout, OnTimeout, on_timeout, o_on_timeout, ENUM, on_timeout, ON_TIMEOUT_CONTINUE)       \
        X(Sync, WritebackFirst, bool, writeback_first, o_writeback_first, BOOLEAN, NULL, true)               \
        X(Sync, DeferCommit, bool, defer_commit, o_defer_commit, BOOLEAN, NULL, true)                        \
        X(Kernel, SyncOnSuspend, SyncOnSuspendMode, sync_on_suspend, o_sync_on_suspend, ENUM,                \
          sync_on_suspend_mode, SYNC_ON_SUSPEND_AUTO)                                                        \
        X(Kernel, KeepCheapSync, bool, keep_cheap_sync, o_keep_cheap_sync, BOOLEAN, NULL, true)              \
        X(Metrics, TextfileDirectory, char *, textfile_directory, o_textfile_directory, PATH,                \
          METRICS_TEXTFILE_DIR_DEFAULT, 0)

/* [Rule NAME]: paths and types are NULL-terminated globs (NULL = any), device_classes a
 * DeviceClassBit mask (0 = any), mount_timeout USEC_INFINITY = inherit [Sync] MountTimeoutSec=. */
#define RULE_KEYS(X)                                                                         \
        X(Rule, Path, char **, paths, o_paths, GLOBS, true, 0)                               \
        X(Rule, Type, char **, types, o_types, GLOBS, false, 0)                              \
        X(Rule, Device, unsigned, device_classes, o_device, DEVICE, 0, 0U)                   \
        X(Rule, Action, RuleAction, action, o_action, ACTION, rule_action, RULE_ACTION_AUTO) \
        X(Rule, MountTimeoutSec, usec_t, mount_timeout, o_mount_timeout, TIMESPAN,           \
          "[Sync] MountTimeoutSec=", USEC_INFINITY)

#define _POLICY_KEY_FIELD(section, key, ctype, field, origin, kind, arg, def) ctype field;
#define _POLICY_KEY_ORIGIN(section, key, ctype, field, origin, kind, arg, def) Origin origin;

typedef struct Rule {
        char *name; /* from "[Rule NAME]" */
        RULE_KEYS(_POLICY_KEY_FIELD)
        bool disabled;         /* a line of it could not be understood: it matches nothing (fail
                                     * closed: a dropped match key would widen it to every mount) */
        char *disabled_reason; /* the first such line's problem (owned) */
        Origin origin;         /* where the section started */
        RULE_KEYS(_POLICY_KEY_ORIGIN)
        Origin o_disabled;
} Rule;

typedef struct Policy {
        POLICY_KEYS(_POLICY_KEY_FIELD)
        POLICY_KEYS(_POLICY_KEY_ORIGIN)

        Rule *rules; /* in file order; first match wins */
        size_t n_rules;

        char **files;            /* files read, in order (NULL-terminated) */
        char **unread_paths;     /* files and directories not read that a stand-in rule names
                                  * (policy_add_unread_rule()): its origin points here */
        char **warnings;         /* "file:line: message" (NULL-terminated), bounded */
        Origin *warning_origins; /* n_warnings: file (owned copy) and line (0: none) of each */
        bool *warning_notices;   /* n_warnings: a notice, not a problem of the configuration (a
                                  * layout that may be a mistake): verbs log it at notice level */
        size_t n_warnings;

        bool unread; /* not read in full (policy_mark_unread()): SyncOnSuspend= is keep */
} Policy;

/* What the command line sets over the configuration (--deadline=): applied where the values are
 * used (policy_apply_overrides() for the verbs), never written into a parsed Policy, so that
 * cat-config shows the file's value and origin, and the override next to it. */
typedef struct PolicyOverrides {
        usec_t deadline; /* USEC_INFINITY: not given */
} PolicyOverrides;

#define POLICY_OVERRIDES_NULL ((PolicyOverrides) { .deadline = USEC_INFINITY })

/* SkipClean=yes asked to skip filesystems proven clean. No filesystem type has an exact test for
 * that (docs/CLEAN-EVIDENCE.md), so the key is accepted and ignored; verbs say so once. */
#define POLICY_SKIP_CLEAN_NO_EFFECT                                                                  \
        "SkipClean=yes has no effect: no filesystem type has an exact clean test, every mount that " \
        "may hold data is synced (see suspend-sync.conf(5))"

/* Whether a rule matches by device class c (a DeviceClassBit). */
bool policy_uses_device_class(const Policy *p, unsigned c);

/* A Policy with every default set and no rules. */
int policy_new(Policy **ret);

/* The configuration was not read in full: a file could not be read or was ignored whole (too large,
 * too many), or the reader did not answer. What it sets is unknown, so the kernel's own sync is
 * left as it is (SyncOnSuspend=keep, whatever the files read say): fail closed. Warns, naming file;
 * the other values stay as read (defaults where nothing was). negative errno only on -ENOMEM. */
int policy_mark_unread(Policy *p, const char *file);
/* Puts first of all rules a disabled rule that stands for rules not read: a [Rule] section (or one
 * that may be: a header naming "rule" in any case, an unreadable one) ignored at file:line, or a
 * file not read in full (line 0). What was not read may have been any rule, or a change to any
 * earlier one by its name, so no rule may skip in its place (policy_match()); named "(file:line)"
 * or "(file)", why says what was not read. When the table is full (POLICY_MAX_RULES) the last rule
 * gives way to it. -ENOMEM or 0. */
int policy_add_unread_rule(Policy *p, const char *file, unsigned line, const char *why);
Policy *policy_free(Policy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Policy *, policy_free);

/* Parses one file's text into p (later assignments win; empty value resets to the default).
 * Warnings are appended to p->warnings. filename is used for messages and origins. Never fails on
 * bad content; returns negative errno only on -ENOMEM. */
int policy_parse_text(Policy *p, const char *filename, const char *text, size_t size);

/* Lists the files that make up the configuration, in the order they are applied (shared/conf-files.h:
 * systemd's semantics): the main file (first of etc/, run/, usr/local/lib/, usr/lib/ that is there)
 * then drop-ins suspend-sync.conf.d/ *.conf from those directories, sorted by file name, a name in an
 * earlier directory masking the same name in a later one. Paths are relative to root_fd, returned
 * with a leading '/'. */
int policy_find_files(int root_fd, char ***ret);

/* The configuration as read from disk, before parsing: every file in the order it applies, with its
 * text or the error that kept it from being read. policy_read_sources() does the I/O (it may block
 * on a hung filesystem: conf-read runs it in a child with a timeout); policy_build() is pure. */
typedef enum PolicyFileKind {
        /* A file of the configuration: its text, or the error that kept it from being read. */
        POLICY_FILE_CONF,
        /* A drop-in directory there but not listed in full (error < 0): what it holds, and hides
         * or masks in the other directories, is unknown, so the configuration is not read in full. */
        POLICY_FILE_UNLISTED_DIR,
        /* Notices (shared/conf-files.h), nothing else changes: a drop-in directory's name that is no
         * directory, whose text is the component above it that is no directory ("": the name
         * itself); a symbolic link to nothing, whose text is the file of its name that applies
         * instead ("": none). */
        POLICY_FILE_NOT_DIRECTORY,
        POLICY_FILE_DANGLING,
        /* With truncated: the first drop-in left out, or the directory whose entries past the
         * listing's limit were not looked at; what the warning and the stand-in name. */
        POLICY_FILE_LEFT_OUT,
        _POLICY_FILE_KIND_MAX,
} PolicyFileKind;

typedef struct PolicyFile {
        PolicyFileKind kind;
        char *path; /* as in warnings and origins, e.g. "/etc/suspend-sync.conf" */
        int error;  /* 0 or negative errno (-EFBIG: file too big, -E2BIG: total too big) */
        char *text; /* NUL-terminated, NULL on error */
        size_t size;
} PolicyFile;

typedef struct PolicySources {
        PolicyFile *files; /* what the listing found besides the files first (unlisted, notices) */
        size_t n_files;    /* at most POLICY_MAX_SOURCES, of them POLICY_MAX_FILES files */
        bool explicit;     /* exactly one named file (--config=): a missing one is a warning */
        bool truncated;    /* more drop-ins than POLICY_MAX_FILES */
} PolicySources;

PolicySources *policy_sources_free(PolicySources *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolicySources *, policy_sources_free);
/* Appends an entry of kind (text copied, size bytes; ignored when error < 0). -E2BIG beyond
 * POLICY_MAX_SOURCES, -EINVAL for a kind out of range. */
int policy_sources_add_kind(PolicySources *s, PolicyFileKind kind, const char *path, int error,
                            const char *text, size_t size);
/* The same for a file of the configuration (POLICY_FILE_CONF). */
int policy_sources_add(PolicySources *s, const char *path, int error, const char *text, size_t size);

/* Called with each path (relative to root_fd, leading '/') right before it is looked at. */
typedef void (*PolicyProgress)(const char *path, void *userdata);

/* Lists and reads the configuration under root_fd, or exactly 'config_path' when not NULL (absolute:
 * below root_fd; relative: from the working directory). Texts total at most POLICY_MAX_TOTAL_SIZE.
 * Fails only with -ENOMEM. */
int policy_read_sources(int root_fd, const char *config_path, PolicyProgress progress, void *userdata,
                        PolicySources **ret);

/* Parses sources into a Policy (pure). A missing file is not an error (defaults) unless it was
 * named explicitly; an unreadable one, a drop-in directory not listed, or more drop-ins than
 * POLICY_MAX_FILES is a warning, a stand-in rule (policy_add_unread_rule()) and SyncOnSuspend=keep
 * (policy_mark_unread()); the listing's notices are warnings marked as notices. */
int policy_build(const PolicySources *s, Policy **ret);

/* policy_read_sources() + policy_build(), in this process (tests, fixtures). */
int policy_load(int root_fd, const char *config_path, Policy **ret);

/* Finds the rule that decides for a mount, failing closed (pure): the first that matches, in
 * order. device_classes are the mount's DeviceClassBits, device_unknown those whose value could not
 * be read (device_info_unknown_classes(): an unclassified device, an unreadable attribute). A rule
 * that cannot be evaluated for the mount never lets a later rule skip it:
 *  - a disabled rule (a line of it not understood), whatever its action reads, and a stand-in
 *    (policy_add_unread_rule(): an ignored rule section or a file not read, first of all rules);
 *  - a Device= rule that does not skip and that only the unknown classes could match (one that
 *    skips is passed over: it cannot be proven to match).
 * A later rule that does not skip still decides. When a skip rule is refused, the result is NULL
 * (the defaults: sync) after a disabled rule, or that Device= rule (its action and timeout), and
 * *ret_unsure (may be NULL) names the rule that refused it. NULL and *ret_unsure NULL when no rule
 * matches. */
const Rule *policy_match(const Policy *p, const char *mount_point, const char *fstype,
                         unsigned device_classes, unsigned device_unknown, const Rule **ret_unsure);

/* Effective configuration as ini text with "# file:line" comments naming the origin of each value
 * (cat-config). Returns a newly allocated string. */
int policy_format(const Policy *p, char **ret);
/* The same, with a comment under each value that o overrides (o may be NULL). */
int policy_format_overrides(const Policy *p, const PolicyOverrides *o, char **ret);

/* The values the verbs act on: *ret becomes a shallow copy of p (it shares p's rules, files and
 * warnings, so it must not outlive p and is never freed) with o applied, the origin of each
 * overridden value naming its option. p itself is not changed. */
void policy_apply_overrides(const Policy *p, const PolicyOverrides *o, Policy *ret);
