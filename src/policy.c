/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * The Policy object: defaults from the key table, warnings, reading and building the configuration
 * from its files, matching rules, command-line overrides and cat-config's text. The parser is in
 * policy-parse.c, the key table and its kinds of values in policy-keys.c.
 */

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-keys.h"
#include "shared/conf-files.h"
#include "shared/fileio.h"
#include "shared/string-util.h"
#include "shared/strv.h"

static const char *const config_dirs[] = { "/etc", "/run", "/usr/local/lib", "/usr/lib", NULL };

/* ---- Policy object ---------------------------------------------------------------------------- */

static void rule_done(Rule *r) {
        free(r->name);
        free(r->disabled_reason);
        strv_free(r->paths);
        strv_free(r->types);
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
        policy_keys_reset(p, false);
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
        strv_free(p->unread_paths);
        policy_keys_done(p, false);
        for (size_t i = 0; i < p->n_warnings; i++)
                free((char *) p->warning_origins[i].file);
        free(p->warning_origins);
        free(p->warning_notices);
        strv_free(p->warnings);
        free(p);
        return NULL;
}

/* Appends "file:line: message" (or "file: message" for line 0), a notice or a warning. Bounded: the
 * last slot says that further warnings were dropped. */
static int policy_addv(Policy *p, bool notice, const char *file, unsigned line, const char *fmt, va_list ap) {
        _cleanup_free_ char *msg = NULL;
        bool *n;
        Origin *o;
        char *w;
        int r;

        if (p->n_warnings >= POLICY_MAX_WARNINGS)
                return 0;

        /* The origin and kind first, one slot ahead: strv_consume() below is the last step that can
         * fail. */
        n = reallocarray(p->warning_notices, p->n_warnings + 1, sizeof(bool));
        if (!n)
                return -ENOMEM;
        p->warning_notices = n;
        n[p->n_warnings] = notice && p->n_warnings < POLICY_MAX_WARNINGS - 1;
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
                r = vasprintf(&msg, fmt, ap);
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

int policy_warnv(Policy *p, const char *file, unsigned line, const char *fmt, va_list ap) {
        return policy_addv(p, false, file, line, fmt, ap);
}

int policy_warn(Policy *p, const char *file, unsigned line, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = policy_warnv(p, file, line, fmt, ap);
        va_end(ap);
        return r;
}

_printf_(4, 5) static int policy_notice(Policy *p, const char *file, unsigned line, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = policy_addv(p, true, file, line, fmt, ap);
        va_end(ap);
        return r;
}

/* ---- reading ------------------------------------------------------------------------------------ */

int policy_find_files(int root_fd, char ***ret) {
        _cleanup_(conf_files_done) ConfFiles c = {};
        int r;

        r = conf_files_list(root_fd, config_dirs, "suspend-sync.conf", POLICY_MAX_FILES, NULL, NULL, &c);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c.files);
        return 0;
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

int policy_sources_add_kind(PolicySources *s, PolicyFileKind kind, const char *path, int error,
                            const char *text, size_t size) {
        PolicyFile *t, f = { .kind = kind, .error = error, .size = error < 0 ? 0 : size };

        if (kind < 0 || kind >= _POLICY_FILE_KIND_MAX)
                return -EINVAL;
        if (s->n_files >= POLICY_MAX_SOURCES)
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

int policy_sources_add(PolicySources *s, const char *path, int error, const char *text, size_t size) {
        return policy_sources_add_kind(s, POLICY_FILE_CONF, path, error, text, size);
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
        /* A FIFO or a device as the main file never blocks the reader (review S, M2). */
        r = read_full_file_at_flags(dir_fd, path, MIN(POLICY_MAX_FILE_SIZE, POLICY_MAX_TOTAL_SIZE - *total),
                                    READ_FULL_REGULAR, &text, &size);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG && POLICY_MAX_TOTAL_SIZE - *total < POLICY_MAX_FILE_SIZE)
                r = -E2BIG;
        if (r >= 0)
                *total += size;
        return policy_sources_add(s, path, r < 0 ? r : 0, text, size);
}

/* Every drop-in directory not listed (one at most each), the notices and the first drop-in left out
 * fit beside the files. */
_Static_assert(ELEMENTSOF(config_dirs) - 1 + CONF_FILES_MAX_NOTICES + 1 <=
                       POLICY_MAX_SOURCES - POLICY_MAX_FILES,
               "POLICY_MAX_SOURCES too small for what the listing finds besides the files");

/* What the listing found besides the files, as entries ahead of them: a drop-in directory not listed
 * (the configuration is not read in full), and the notices. */
static int add_issues(PolicySources *s, const ConfFiles *c) {
        int r;

        for (size_t i = 0; i < c->n_issues; i++) {
                const ConfFilesIssue *x = &c->issues[i];

                if (x->kind == CONF_FILES_UNLISTED)
                        r = policy_sources_add_kind(s, POLICY_FILE_UNLISTED_DIR, x->path, x->error ?: -EIO,
                                                    NULL, 0);
                else
                        r = policy_sources_add_kind(
                                s,
                                x->kind == CONF_FILES_NOT_DIRECTORY ? POLICY_FILE_NOT_DIRECTORY
                                                                    : POLICY_FILE_DANGLING,
                                x->path, 0, x->other ?: "", x->other ? strlen(x->other) : 0);
                if (r < 0)
                        return r;
        }
        if (c->left_out)
                return policy_sources_add_kind(s, POLICY_FILE_LEFT_OUT, c->left_out, 0, "", 0);
        return 0;
}

int policy_read_sources(int root_fd, const char *config_path, PolicyProgress progress, void *userdata,
                        PolicySources **ret) {
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_(conf_files_done) ConfFiles c = {};
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
                /* A directory there but not listed in full is an entry of its own; the other
                 * directories and the main file still count (policy_build()). */
                r = conf_files_list(root_fd, config_dirs, "suspend-sync.conf", POLICY_MAX_FILES, progress,
                                    userdata, &c);
                if (r < 0)
                        return r;
                s->truncated = c.truncated;
                r = add_issues(s, &c);
                if (r < 0)
                        return r;
                for (char **f = c.files; *f; f++) {
                        r = read_one(s, root_fd, *f, &total, progress, userdata);
                        if (r < 0)
                                return r;
                }
        }

        *ret = TAKE_PTR(s);
        return 0;
}

/* The listing's notices: the layout may be a mistake, what is read is as systemd reads it. */
static int build_notice(Policy *p, const PolicyFile *f) {
        if (f->kind == POLICY_FILE_NOT_DIRECTORY && f->text && f->text[0])
                return policy_notice(p, f->path, 0,
                                     "'%s' is not a directory, so no drop-ins are read from here, ignoring",
                                     f->text);
        if (f->kind == POLICY_FILE_NOT_DIRECTORY)
                return policy_notice(p, f->path, 0,
                                     "Not a directory, so no drop-ins are read from it, ignoring");
        /* Not a notice (review S, M1): its target may be the administrator's file on a filesystem
         * not mounted now; policy_build() counts it as not read in full. */
        if (f->text && f->text[0])
                return policy_warn(p, f->path, 0,
                                   "Symbolic link to nothing, not read: '%s' applies in its place (a "
                                   "symbolic link to /dev/null masks it)",
                                   f->text);
        return policy_warn(p, f->path, 0, "Symbolic link to nothing, not read");
}

static int build_one(Policy *p, const PolicyFile *f, bool explicit) {
        if (f->kind == POLICY_FILE_LEFT_OUT)
                return 0; /* policy_build() */
        if (f->kind == POLICY_FILE_NOT_DIRECTORY || f->kind == POLICY_FILE_DANGLING)
                return build_notice(p, f);
        if (f->kind == POLICY_FILE_UNLISTED_DIR)
                return policy_warn(p, f->path, 0, "Failed to read directory: %s, ignoring its drop-ins",
                                   strerror(-f->error));
        if (f->error == -ENOENT && !explicit)
                /* Gone since it was listed: neither it nor the file of its name it hid was read. */
                return policy_warn(p, f->path, 0, "File vanished while the configuration was read, ignoring");
        if (f->error == -ENOENT)
                return policy_warn(p, f->path, 0, "File not found, using defaults");
        if (f->error == -EBADFD)
                return policy_warn(p, f->path, 0, "Not a regular file, ignoring");
        if (f->error == -EBUSY)
                return policy_warn(p, f->path, 0,
                                   "File changed while it was read, ignoring (write a configuration file "
                                   "by renaming a complete one into place)");
        if (f->error == -EFBIG)
                return policy_warn(p, f->path, 0, "File larger than %u bytes, ignoring",
                                   POLICY_MAX_FILE_SIZE);
        if (f->error == -E2BIG)
                return policy_warn(p, f->path, 0,
                                   "Configuration larger than %u bytes in total, ignoring this file",
                                   POLICY_MAX_TOTAL_SIZE);
        if (f->error < 0)
                return policy_warn(p, f->path, 0, "Failed to read: %s, ignoring", strerror(-f->error));
        return policy_parse_text(p, f->path, f->text, f->size);
}

int policy_mark_unread(Policy *p, const char *file) {
        p->unread = true;
        p->sync_on_suspend = SYNC_ON_SUSPEND_KEEP;
        p->o_sync_on_suspend = (Origin) {};
        return policy_warn(p, file, 0,
                           "Configuration not read in full: SyncOnSuspend=keep whatever it sets, the "
                           "kernel's own sync stays as it is");
}

/* Drop-ins left out past the limit: what names them (review S, L5), NULL when they were not. */
static const char *left_out(const PolicySources *s) {
        for (size_t i = 0; i < s->n_files; i++)
                if (s->files[i].kind == POLICY_FILE_LEFT_OUT)
                        return s->files[i].path;
        return s->truncated ? "suspend-sync.conf.d" : NULL;
}

int policy_build(const PolicySources *s, Policy **ret) {
        _cleanup_(policy_freep) Policy *p = NULL;
        const char *unread = left_out(s);
        int r;

        r = policy_new(&p);
        if (r < 0)
                return r;
        if (unread) {
                if (endswith(unread, ".conf"))
                        r = policy_warn(p, unread, 0,
                                        "Too many drop-in files (max %u in total), ignoring this one and "
                                        "the ones after it",
                                        POLICY_MAX_FILES);
                else
                        r = policy_warn(p, unread, 0,
                                        "Too many drop-in files (max %u in total, %u entries looked at), "
                                        "ignoring the rest",
                                        POLICY_MAX_FILES, CONF_FILES_MAX_CANDIDATES);
                /* The drop-ins not read may change any rule by its name. */
                if (r >= 0)
                        r = policy_add_unread_rule(p, unread, 0,
                                                   "drop-in files past the limit were not read");
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < s->n_files; i++) {
                const PolicyFile *f = &s->files[i];
                bool dir = f->kind == POLICY_FILE_UNLISTED_DIR, dangling = f->kind == POLICY_FILE_DANGLING;

                r = build_one(p, f, s->explicit);
                if (r < 0)
                        return r;
                /* Not read (a drop-in that vanished since it was listed too, review S, H2): its rules,
                 * where they would have been, are unknown. A directory not listed may have held any
                 * drop-in, or masked one of another directory that is read now. A symbolic link to
                 * nothing (review S, M1) may point to the administrator's file on a filesystem that
                 * is not mounted now: the file of its name that applies instead is read, but no skip
                 * rule stands. */
                if (dir || dangling || (f->kind == POLICY_FILE_CONF && f->error < 0)) {
                        if (!unread)
                                unread = f->path;
                        r = policy_add_unread_rule(
                                p, f->path, 0,
                                dir        ? "the drop-in directory could not be read"
                                : dangling ? "a symbolic link to nothing: its target was not read"
                                           : "the file could not be read");
                        if (r < 0)
                                return r;
                }
        }
        if (unread) {
                r = policy_mark_unread(p, unread);
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
                         unsigned device_classes, unsigned device_unknown, const Rule **ret_unsure) {
        const Rule *blocker = NULL;

        if (ret_unsure)
                *ret_unsure = NULL;
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_rules; i++) {
                const Rule *r = &p->rules[i];
                bool skip = r->action == RULE_ACTION_SKIP;

                /* A disabled rule, whatever its action reads (the line not understood may have been
                 * the one that set it): it may match, and with it the mount might not be skipped. */
                if (r->disabled) {
                        blocker = blocker ?: r;
                        continue;
                }
                if (!globs_match(r->paths, mount_point))
                        continue;
                if (!globs_match(r->types, fstype))
                        continue;
                if (r->device_classes != 0 && (r->device_classes & device_classes) == 0) {
                        /* Only classes not read could match: not proven to match, nor not to. One
                         * that skips is passed over; another may have kept the mount. */
                        if ((r->device_classes & device_unknown) && !skip)
                                blocker = blocker ?: r;
                        continue;
                }
                if (skip && blocker) {
                        if (ret_unsure)
                                *ret_unsure = blocker;
                        return blocker->disabled ? NULL : blocker;
                }
                return r;
        }
        return NULL;
}

/* ---- formatting ------------------------------------------------------------------------------- */

/* The command-line options that override a key (each a time span): PolicyOverrides field, option,
 * key. */
static const struct {
        size_t offset;
        const char *option;
        const char *section, *name;
} policy_override_table[] = {
        { offsetof(PolicyOverrides, deadline), "--deadline=", "Sync", "DeadlineSec" },
};

/* The value of key k's override in o (may be NULL), or USEC_INFINITY; *ret_option its option. */
static usec_t override_of(const PolicyOverrides *o, const PolicyKey *k, const char **ret_option) {
        for (size_t i = 0; o && i < ELEMENTSOF(policy_override_table); i++) {
                usec_t v = *(const usec_t *) ((const uint8_t *) o + policy_override_table[i].offset);

                if (v != USEC_INFINITY && streq(policy_override_table[i].section, k->section) &&
                    streq(policy_override_table[i].name, k->name)) {
                        *ret_option = policy_override_table[i].option;
                        return v;
                }
        }
        return USEC_INFINITY;
}

void policy_apply_overrides(const Policy *p, const PolicyOverrides *o, Policy *ret) {
        *ret = *p;
        for (size_t i = 0; i < policy_n_keys; i++) {
                const PolicyKey *k = &policy_keys[i];
                const char *option;
                usec_t v = override_of(o, k, &option);

                if (v == USEC_INFINITY || policy_key_is_rule(k))
                        continue;
                *(usec_t *) policy_key_field(k, ret) = v;
                *policy_key_origin(k, ret) = (Origin) { .file = option };
        }
}

/* One key of base (the Policy, or a Rule), saying when o overrides it. */
static void put_key(FILE *f, const PolicyKey *k, const void *base, const PolicyOverrides *o) {
        char buf[FORMAT_TIMESPAN_MAX], note[64 + FORMAT_TIMESPAN_MAX];
        const char *option;
        usec_t v = override_of(o, k, &option);

        if (v != USEC_INFINITY)
                (void) snprintf(note, sizeof note, "overridden on the command line: %s%s", option,
                                format_timespan(buf, sizeof buf, v));
        policy_key_print(f, k, base, v != USEC_INFINITY ? note : NULL);
}

static void put_rule_keys(FILE *f, const Rule *r) {
        fprintf(f, "[Rule %s]\n", r->name);
        for (size_t i = 0; i < policy_n_keys; i++)
                if (policy_key_is_rule(&policy_keys[i]))
                        put_key(f, &policy_keys[i], r, NULL);
}

/* A disabled rule, read back, must stay what it is, where it is (policy_match()): its header, its keys
 * as comments (a key left out prints as "any", which would make it a live, wider rule), and a line
 * that is no assignment, which disables the rule again. */
#define DISABLED_LINE "DISABLED (not an assignment: this rule stays disabled when the text is read back)"

/* "file:line", or "file" for line 0 (a stand-in for a file or directory not read). */
static void put_rule_comment(FILE *f, const char *prefix, const Origin *o) {
        fputs(prefix, f);
        policy_put_comment_text(f, o->file ?: "");
        if (o->line > 0)
                fprintf(f, ":%u", o->line);
}

static int put_disabled_rule(FILE *f, const Rule *r) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *m;

        fputs("# DISABLED: ", f);
        policy_put_comment_text(f, r->disabled_reason);
        put_rule_comment(f, " (", &r->o_disabled);
        fputs("). It may match any mount, and no rule after it may skip one it may match.\n", f);
        fprintf(f, "[Rule %s]\n", r->name);
        m = open_memstream(&text, &size);
        if (!m)
                return -ENOMEM;
        for (size_t i = 0; i < policy_n_keys; i++)
                if (policy_key_is_rule(&policy_keys[i]))
                        put_key(m, &policy_keys[i], r, NULL);
        if (memstream_finish(m, &text) < 0)
                return -ENOMEM;
        for (char *l = text, *nl; l && *l; l = nl ? nl + 1 : NULL) {
                nl = strchr(l, '\n');
                fprintf(f, "# %.*s\n", nl ? (int) (nl - l) : (int) strlen(l), l);
        }
        fputs(DISABLED_LINE "\n", f);
        return 0;
}

static int put_rule(FILE *f, const Rule *r) {
        fputc('\n', f);
        if (r->origin.file) {
                put_rule_comment(f, "# from ", &r->origin);
                fputc('\n', f);
        } else if (!r->disabled)
                fputs("# default\n", f);
        if (r->disabled)
                return put_disabled_rule(f, r);
        put_rule_keys(f, r);
        return 0;
}

int policy_format_overrides(const Policy *p, const PolicyOverrides *o, char **ret) {
        _cleanup_free_ char *buf = NULL;
        const char *section = NULL;
        size_t size = 0;
        FILE *f;

        if (!p)
                return -EINVAL;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;

        fputs("# Effective suspend-sync configuration.\n", f);
        if (strv_length(p->unread_paths) > 0) {
                /* Each stands as a disabled rule below. Ahead of the files read, whose list ends at
                 * the first empty line (test/integration/cat-config.sh reads it so). */
                fputs("# Not read (see the warnings):\n", f);
                for (char **i = p->unread_paths; *i; i++) {
                        fputs("#   ", f);
                        policy_put_comment_text(f, *i);
                        fputc('\n', f);
                }
        }
        if (strv_length(p->files) == 0)
                fputs(strv_length(p->unread_paths) > 0
                              ? "# No other configuration file read: built-in defaults, and SyncOnSuspend=keep for what "
                                "was not read (below).\n"
                              : "# No configuration files read: built-in defaults.\n",
                      f);
        else {
                fputs("# Files read, in order:\n", f);
                for (char **i = p->files; *i; i++) {
                        fputs("#   ", f);
                        policy_put_comment_text(f, *i);
                        fputc('\n', f);
                }
        }

        for (size_t i = 0; i < policy_n_keys; i++) {
                const PolicyKey *k = &policy_keys[i];

                if (policy_key_is_rule(k))
                        continue;
                if (!section || !streq(section, k->section))
                        fprintf(f, "\n[%s]\n", k->section);
                section = k->section;
                if (p->unread && k->offset == offsetof(Policy, sync_on_suspend))
                        policy_key_print(f, k, p,
                                         "keep: the configuration was not read in full (see the warnings)");
                else
                        put_key(f, k, p, o);
        }
        for (size_t i = 0; i < p->n_rules; i++)
                if (put_rule(f, &p->rules[i]) < 0) {
                        (void) fclose(f);
                        return -ENOMEM;
                }

        if (memstream_finish(f, &buf) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

int policy_format(const Policy *p, char **ret) {
        return policy_format_overrides(p, NULL, ret);
}

bool policy_uses_device_class(const Policy *p, unsigned c) {
        for (size_t i = 0; p && i < p->n_rules; i++)
                if (p->rules[i].device_classes & c)
                        return true;
        return false;
}
