/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <unistd.h>

#include "device.h"
#include "policy.h"
#include "shared/fileio.h"
#include "shared/string-util.h"
#include "shared/strv.h"
#include "tests.h"

#define CONFIG_DIR FIXTURES_DIR "/config"
#define SOURCE_CONF FIXTURES_DIR "/../../conf/suspend-sync.conf"

static int open_root(const char *scenario) {
        char path[4096];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", CONFIG_DIR, scenario);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        return fd;
}

static Policy *parse(const char *text) {
        Policy *p = NULL;

        ASSERT_OK(policy_new(&p));
        ASSERT_OK(policy_parse_text(p, "t.conf", text, strlen(text)));
        return p;
}

static bool has_warning(const Policy *p, const char *w) {
        for (size_t i = 0; i < p->n_warnings; i++) {
                /* The origin of each warning (sent as SUSPEND_SYNC_CONFIG_FILE=/_LINE=) matches its text. */
                char prefix[PATH_MAX + 32];

                if (p->warning_origins[i].line > 0)
                        snprintf(prefix, sizeof prefix, "%s:%u: ", p->warning_origins[i].file,
                                 p->warning_origins[i].line);
                else
                        snprintf(prefix, sizeof prefix, "%s: ", p->warning_origins[i].file);
                ASSERT_TRUE(strncmp(p->warnings[i], prefix, strlen(prefix)) == 0);
        }
        for (size_t i = 0; i < p->n_warnings; i++)
                if (streq(p->warnings[i], w))
                        return true;
        return false;
}

static void dump_warnings(const Policy *p) {
        for (size_t i = 0; i < p->n_warnings; i++)
                fprintf(stderr, "   warning: %s\n", p->warnings[i]);
}

#define ASSERT_WARNING(p, w)                        \
        do {                                        \
                if (!has_warning((p), (w)))         \
                        dump_warnings(p);           \
                ASSERT_TRUE(has_warning((p), (w))); \
        } while (0)

/* The defaults; a configuration not read in full keeps the kernel's sync alone (SyncOnSuspend=keep). */
static void assert_defaults(const Policy *p) {
        ASSERT_EQ(p->max_parallel, 16);
        ASSERT_U64_EQ(p->mount_timeout, 10 * USEC_PER_SEC);
        ASSERT_U64_EQ(p->deadline, 30 * USEC_PER_SEC);
        ASSERT_TRUE(!p->skip_clean);
        ASSERT_EQ(p->on_timeout, ON_TIMEOUT_CONTINUE);
        ASSERT_EQ(p->sync_on_suspend, p->unread ? SYNC_ON_SUSPEND_KEEP : SYNC_ON_SUSPEND_AUTO);
}

#define UNREAD_WARNING                                                                                \
        "Configuration not read in full: SyncOnSuspend=keep whatever it sets, the kernel's own sync " \
        "stays as it is"

TEST(defaults_and_tables) {
        _cleanup_(policy_freep) Policy *p = NULL;

        ASSERT_OK(policy_new(&p));
        assert_defaults(p);
        ASSERT_EQ(p->n_rules, 0);
        ASSERT_EQ(p->n_warnings, 0);
        ASSERT_TRUE(p->o_max_parallel.file == NULL);

        for (int i = 0; i < _RULE_ACTION_MAX; i++)
                ASSERT_EQ(rule_action_from_string(rule_action_to_string(i)), i);
        for (int i = 0; i < _ON_TIMEOUT_MAX; i++)
                ASSERT_EQ(on_timeout_from_string(on_timeout_to_string(i)), i);
        for (int i = 0; i < _SYNC_ON_SUSPEND_MAX; i++)
                ASSERT_EQ(sync_on_suspend_mode_from_string(sync_on_suspend_mode_to_string(i)), i);
        ASSERT_ERR(rule_action_from_string("Sync"), EINVAL);
        ASSERT_ERR(rule_action_from_string(NULL), EINVAL);
        ASSERT_ERR(on_timeout_from_string(""), EINVAL);
        ASSERT_ERR(sync_on_suspend_mode_from_string("on"), EINVAL);
        ASSERT_TRUE(rule_action_to_string(_RULE_ACTION_MAX) == NULL);
        ASSERT_STREQ(sync_on_suspend_mode_to_string(SYNC_ON_SUSPEND_KEEP), "keep");
}

TEST(every_key) {
        _cleanup_(policy_freep) Policy *p = parse("[Sync]\n"                                    /* 1 */
                                                  "MaxParallel=64\n"                            /* 2 */
                                                  "MountTimeoutSec=500ms\n"                     /* 3 */
                                                  "DeadlineSec=1min\n"                          /* 4 */
                                                  "SkipClean=no\n"                              /* 5 */
                                                  "OnTimeout=fail\n"                            /* 6 */
                                                  "[Kernel]\n"                                  /* 7 */
                                                  "SyncOnSuspend=keep\n"                        /* 8 */
                                                  "[Rule removable]\n"                          /* 9 */
                                                  "Path=/media/* /run/media/*\n"                /* 10 */
                                                  "Type=vfat exfat fuse.*\n"                    /* 11 */
                                                  "Device=usb removable\n"                      /* 12 */
                                                  "Action=skip\n"                               /* 13 */
                                                  "MountTimeoutSec=2s\n"                        /* 14 */
                                                  "[Rule  spaced name ]\n"                      /* 15 */
                                                  "Device=rotational network fuse loop crypt\n" /* 16 */
                                                  "Action=sync\n");                             /* 17 */
        const Rule *r;

        dump_warnings(p);
        ASSERT_EQ(p->n_warnings, 0);
        ASSERT_EQ(p->max_parallel, 64);
        ASSERT_U64_EQ(p->mount_timeout, 500 * USEC_PER_MSEC);
        ASSERT_U64_EQ(p->deadline, 60 * USEC_PER_SEC);
        ASSERT_TRUE(!p->skip_clean);
        ASSERT_EQ(p->on_timeout, ON_TIMEOUT_FAIL);
        ASSERT_EQ(p->sync_on_suspend, SYNC_ON_SUSPEND_KEEP);
        ASSERT_STREQ(p->o_max_parallel.file, "t.conf");
        ASSERT_EQ(p->o_max_parallel.line, 2);
        ASSERT_EQ(p->o_mount_timeout.line, 3);
        ASSERT_EQ(p->o_deadline.line, 4);
        ASSERT_EQ(p->o_skip_clean.line, 5);
        ASSERT_EQ(p->o_on_timeout.line, 6);
        ASSERT_EQ(p->o_sync_on_suspend.line, 8);

        ASSERT_EQ(p->n_rules, 2);
        r = &p->rules[0];
        ASSERT_STREQ(r->name, "removable");
        ASSERT_EQ(r->origin.line, 9);
        ASSERT_STREQ(r->paths[0], "/media/*");
        ASSERT_STREQ(r->paths[1], "/run/media/*");
        ASSERT_TRUE(r->paths[2] == NULL);
        ASSERT_STREQ(r->types[2], "fuse.*");
        ASSERT_TRUE(r->types[3] == NULL);
        ASSERT_EQ(r->device_classes, DEVICE_USB | DEVICE_REMOVABLE);
        ASSERT_EQ(r->action, RULE_ACTION_SKIP);
        ASSERT_U64_EQ(r->mount_timeout, 2 * USEC_PER_SEC);
        ASSERT_EQ(r->o_paths.line, 10);
        ASSERT_EQ(r->o_types.line, 11);
        ASSERT_EQ(r->o_device.line, 12);
        ASSERT_EQ(r->o_action.line, 13);
        ASSERT_EQ(r->o_mount_timeout.line, 14);

        r = &p->rules[1];
        ASSERT_STREQ(r->name, "spaced name");
        ASSERT_TRUE(r->paths == NULL && r->types == NULL);
        ASSERT_EQ(r->device_classes,
                  DEVICE_ROTATIONAL | DEVICE_NETWORK | DEVICE_FUSE | DEVICE_LOOP | DEVICE_CRYPT);
        ASSERT_EQ(r->action, RULE_ACTION_SYNC);
        ASSERT_U64_EQ(r->mount_timeout, USEC_INFINITY);
        ASSERT_TRUE(r->o_paths.file == NULL);
        ASSERT_EQ(p->files[0] == r->origin.file, 1); /* origins point into p->files */
}

TEST(bad_values_fixture) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_close_ int fd = open_root("bad");

        ASSERT_OK(policy_load(fd, NULL, &p));
        dump_warnings(p);
        ASSERT_STREQ(p->files[0], "/etc/suspend-sync.conf");
        ASSERT_TRUE(p->files[1] == NULL);

        /* The valid line 3 is kept, every bad value later is ignored. */
        ASSERT_EQ(p->max_parallel, 6);
        ASSERT_STREQ(p->o_max_parallel.file, "/etc/suspend-sync.conf");
        ASSERT_EQ(p->o_max_parallel.line, 3);
        ASSERT_U64_EQ(p->mount_timeout, 10 * USEC_PER_SEC);
        ASSERT_U64_EQ(p->deadline, 30 * USEC_PER_SEC);
        ASSERT_TRUE(!p->skip_clean);
        ASSERT_EQ(p->on_timeout, ON_TIMEOUT_CONTINUE);
        ASSERT_EQ(p->sync_on_suspend, SYNC_ON_SUSPEND_AUTO);
        ASSERT_TRUE(p->o_mount_timeout.file == NULL);
        ASSERT_TRUE(p->o_sync_on_suspend.file == NULL);

        /* The nameless [Rule] section of line 23 is ignored, and stands as a disabled rule in its
         * place (policy_add_unread_rule()). */
        ASSERT_EQ(p->n_rules, 2);
        ASSERT_STREQ(p->rules[0].name, "(/etc/suspend-sync.conf:23)");
        ASSERT_TRUE(p->rules[0].disabled);
        ASSERT_EQ(p->rules[0].o_disabled.line, 23);
        ASSERT_STREQ(p->rules[1].name, "r");
        ASSERT_EQ(p->rules[1].device_classes, 0);
        ASSERT_EQ(p->rules[1].action, RULE_ACTION_SYNC); /* invalid Action=: sync */
        ASSERT_TRUE(p->rules[1].paths == NULL);
        ASSERT_U64_EQ(p->rules[1].mount_timeout, USEC_INFINITY);
        /* Fails closed: disabled from its first bad line on, it matches nothing. */
        ASSERT_TRUE(p->rules[1].disabled);
        ASSERT_EQ(p->rules[1].o_disabled.line, 16);
        ASSERT_STREQ(p->rules[1].disabled_reason, "unknown device class 'floppy' in Device=");
        ASSERT_TRUE(policy_match(p, "/", "ext4", 0, 0, NULL) == NULL);

#define F "/etc/suspend-sync.conf:"
        ASSERT_WARNING(p, F "4: Invalid MaxParallel= value '0' (expected 1..64), ignoring");
        ASSERT_WARNING(p, F "5: Invalid MaxParallel= value '65' (expected 1..64), ignoring");
        ASSERT_WARNING(p, F "6: Invalid MaxParallel= value 'four' (expected 1..64), ignoring");
        ASSERT_WARNING(p, F "7: Invalid MountTimeoutSec= value 'ten', ignoring");
        ASSERT_WARNING(
                p, F "8: Invalid MountTimeoutSec= value '0' (must be more than 0 and at most 24h), ignoring");
        ASSERT_WARNING(p, F
                       "9: Invalid DeadlineSec= value '25h' (must be more than 0 and at most 24h), ignoring");
        ASSERT_WARNING(p, F "10: Invalid SkipClean= value 'maybe' (expected a boolean), ignoring");
        ASSERT_WARNING(p, F "11: Invalid OnTimeout= value 'panic' (expected continue|fail), ignoring");
        ASSERT_WARNING(p, F "12: Unknown key 'Colour' in section [Sync], ignoring");
        ASSERT_WARNING(p,
                       F "14: Invalid SyncOnSuspend= value 'sometimes' (expected auto|keep|off), ignoring");
        ASSERT_WARNING(p, F "16: rule 'r' disabled: unknown device class 'floppy' in Device=");
        ASSERT_WARNING(
                p, F
                "17: Invalid Action= value 'maybe' in rule 'r' (expected sync|skip|auto), using Action=sync");
        ASSERT_WARNING(
                p,
                F "18: rule 'r' disabled: invalid Path= pattern 'relative/*' (must start with '/' or '*')");
        ASSERT_WARNING(p, F "19: Invalid MountTimeoutSec= value '-1s', ignoring");
        ASSERT_WARNING(p, F "20: rule 'r' disabled: unknown key 'Flavour'");
        ASSERT_WARNING(p, F "21: Unknown section [Unknown], ignoring section");
        ASSERT_WARNING(p, F "23: Rule section without a name, ignoring section");
        ASSERT_WARNING(p, F "26: Missing '=', ignoring");
        ASSERT_WARNING(p, F "27: Invalid key name in 'Max:Parallel=1', ignoring");
        ASSERT_WARNING(p, F "28: Garbage after section header '[Sync]', ignoring section");
#undef F
        /* Keys in ignored sections are dropped silently: exactly one warning per bad line above. */
        ASSERT_EQ(p->n_warnings, 20);
}

TEST(syntax_corners) {
        _cleanup_(policy_freep) Policy *p = parse(
                "\xEF\xBB\xBF[Sync]\r\n"                  /* 1: BOM, CRLF */
                "MaxParallel=3\r\n"                       /* 2 */
                "   DeadlineSec = 12s ; inline comment\n" /* 3: indented: NOT a continuation */
                "; comment\n"                             /* 4 */
                "# comment\n"                             /* 5 */
                "\t\n"                                    /* 6 */
                "OnTimeout=fail # not a comment\n"        /* 7: '#' inline is part of the value */
                "[Rule a ;b]\n"                           /* 8: invalid header (inih would keep [Sync]) */
                "MaxParallel=5\n"                         /* 9: must not land in [Sync] */
                "MaxParallel=\n");                        /* 10: silently dropped as well */

        dump_warnings(p);
        ASSERT_EQ(p->max_parallel, 3);
        ASSERT_U64_EQ(p->deadline, 12 * USEC_PER_SEC);
        ASSERT_EQ(p->o_deadline.line, 3);
        ASSERT_EQ(p->on_timeout, ON_TIMEOUT_CONTINUE);
        ASSERT_WARNING(
                p,
                "t.conf:7: Invalid OnTimeout= value 'fail # not a comment' (expected continue|fail), ignoring");
        ASSERT_WARNING(p, "t.conf:8: Invalid section header '[Rule a ;b]', ignoring section");
        ASSERT_EQ(p->n_warnings, 2);
        /* A rule's header not read: a disabled rule stands in its place. */
        ASSERT_EQ(p->n_rules, 1);
        ASSERT_STREQ(p->rules[0].name, "(t.conf:8)");
        ASSERT_TRUE(p->rules[0].disabled);

        policy_free(TAKE_PTR(p));
        p = parse("MaxParallel=3\n[Sync]\nMaxParallel=5"); /* no trailing newline */
        ASSERT_WARNING(p, "t.conf:1: Assignment outside of a section, ignoring");
        ASSERT_EQ(p->n_warnings, 1);
        ASSERT_EQ(p->max_parallel, 5);
        ASSERT_EQ(p->o_max_parallel.line, 3);
}

/* Issue 13 §5: an unknown key that differs from a known key of its section only in case gets a hint. */
TEST(did_you_mean) {
        _cleanup_(policy_freep) Policy *p = parse("[Sync]\n"            /* 1 */
                                                  "maxparallel=3\n"     /* 2 */
                                                  "Deadlinesec=5s\n"    /* 3 */
                                                  "[Kernel]\n"          /* 4 */
                                                  "SYNCONSUSPEND=off\n" /* 5 */
                                                  "MaxParallel=2\n"  /* 6: another section's key: no hint */
                                                  "[Rule r]\n"       /* 7 */
                                                  "path=/x\n"        /* 8 */
                                                  "[Sync]\n"         /* 9 */
                                                  "MaxParalel=4\n"); /* 10: not only case: no hint */

        dump_warnings(p);
        ASSERT_WARNING(
                p,
                "t.conf:2: Unknown key 'maxparallel' in section [Sync] (did you mean 'MaxParallel'?), ignoring");
        ASSERT_WARNING(
                p,
                "t.conf:3: Unknown key 'Deadlinesec' in section [Sync] (did you mean 'DeadlineSec'?), ignoring");
        ASSERT_WARNING(
                p,
                "t.conf:5: Unknown key 'SYNCONSUSPEND' in section [Kernel] (did you mean 'SyncOnSuspend'?), "
                "ignoring");
        ASSERT_WARNING(p, "t.conf:6: Unknown key 'MaxParallel' in section [Kernel], ignoring");
        ASSERT_WARNING(p, "t.conf:8: rule 'r' disabled: unknown key 'path' (did you mean 'Path'?)");
        ASSERT_WARNING(p, "t.conf:10: Unknown key 'MaxParalel' in section [Sync], ignoring");
        ASSERT_EQ(p->n_warnings, 6);
        /* Still ignored: a hint, not a guess. */
        assert_defaults(p);
        ASSERT_TRUE(p->rules[0].disabled);
}

static char *make_line(const char *prefix, size_t total, const char *suffix) {
        char *s = malloc(total + 1);
        size_t a = strlen(prefix), b = strlen(suffix);

        ASSERT_TRUE(s && a + b <= total);
        memcpy(s, prefix, a);
        memset(s + a, 'x', total - a - b);
        memcpy(s + total - b, suffix, b);
        s[total] = 0;
        return s;
}

TEST(long_lines) {
        _cleanup_free_ char *l198 = make_line("Path=/", 198, ""), *l199 = make_line("Path=/", 199, ""),
                            *l200 = make_line("Path=/", 200, " MaxParallel=9"),
                            *l204 = make_line("Path=/", 204, "MaxParallel=1"),
                            *h = make_line("[Rule ", 60, "]"), *c = make_line("  # ", 300, "MaxParallel=1"),
                            *text = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;

        /* With inih's own readers the tail of l204 ("MaxParallel=1") becomes a new line. */
        ASSERT_TRUE(asprintf(&text,
                             "[Sync]\n"         /* 1 */
                             "%s\n"             /* 2: 204 bytes, tail looks like an assignment */
                             "DeadlineSec=3s\n" /* 3: line numbers stay right after it */
                             "[Rule a]\n"       /* 4 */
                             "%s\n"             /* 5: 198 bytes: accepted */
                             "%s\n"             /* 6: 200 bytes: too long */
                             "%s\n"             /* 7: over-long section name */
                             "Action=skip\n"    /* 8: must not land in [Rule a] */
                             "%s\n"             /* 9: a long comment is fine */
                             "[Rule b]\n"       /* 10 */
                             "%s\n"             /* 11: 199 bytes: too long */
                             "Action=skip\n",   /* 12: never glued onto line 11 */
                             l204, l198, l200, h, c, l199) > 0);
        p = parse(text);
        dump_warnings(p);
        ASSERT_EQ(p->max_parallel, 16);
        ASSERT_EQ(p->o_deadline.line, 3);
        ASSERT_WARNING(p, "t.conf:2: Line too long (204 bytes, max 198), ignoring");
        /* A line of a rule we cannot read may be the key that narrows it: the rule is disabled. */
        ASSERT_WARNING(p, "t.conf:6: rule 'a' disabled: line too long (200 bytes, max 198)");
        ASSERT_WARNING(p, "t.conf:7: Section name too long (max 49 bytes), ignoring section");
        ASSERT_WARNING(p, "t.conf:11: rule 'b' disabled: line too long (199 bytes, max 198)");
        ASSERT_EQ(p->n_warnings, 4);
        /* The ignored [Rule …] of line 7 stands as a disabled rule in its place. */
        ASSERT_EQ(p->n_rules, 3);
        ASSERT_STREQ(p->rules[0].name, "(t.conf:7)"); /* a stand-in comes first of all */
        ASSERT_TRUE(p->rules[0].disabled);
        ASSERT_EQ(strlen(p->rules[1].paths[0]), 193);
        ASSERT_EQ(p->rules[1].o_paths.line, 5);
        ASSERT_EQ(p->rules[1].action, RULE_ACTION_AUTO);
        ASSERT_TRUE(p->rules[1].disabled);
        /* inih built with INI_ALLOW_REALLOC (Debian 13) read on into a full buffer: line 12 was
         * glued onto a 199-byte line 11 and lost. */
        ASSERT_EQ(p->rules[2].action, RULE_ACTION_SKIP);
        ASSERT_EQ(p->rules[2].o_action.line, 12);
        ASSERT_TRUE(p->rules[2].disabled);
}

TEST(nul_byte) {
        static const char text[] = "[Sync]\nMaxParallel=2\nDeadline\0Sec=1s\n";
        _cleanup_(policy_freep) Policy *p = NULL;

        ASSERT_OK(policy_new(&p));
        ASSERT_OK(policy_parse_text(p, "n.conf", text, sizeof(text) - 1));
        ASSERT_WARNING(p, "n.conf:3: NUL byte in file, ignoring file");
        /* What it sets is unknown: fails closed as a file not read (the knob kept, and a disabled
         * rule in its place, so that no later rule skips what its rules may have kept). */
        ASSERT_WARNING(p, "n.conf: " UNREAD_WARNING);
        ASSERT_EQ(p->n_warnings, 2);
        ASSERT_TRUE(p->unread);
        assert_defaults(p); /* nothing of the file applied, not even line 2 */
        ASSERT_EQ(p->n_rules, 1);
        ASSERT_STREQ(p->rules[0].name, "(n.conf)");
        ASSERT_TRUE(p->rules[0].disabled);
        /* ... and cat-config lists it as not read, not among the files read (review AL, 4). */
        ASSERT_EQ(strv_length(p->files), 0U);
        ASSERT_EQ(strv_length(p->unread_paths), 1U);
        ASSERT_STREQ(p->unread_paths[0], "n.conf");
        ASSERT_TRUE(p->rules[0].o_disabled.file == p->unread_paths[0]);
        {
                _cleanup_free_ char *shown = NULL;

                ASSERT_OK(policy_format(p, &shown));
                ASSERT_TRUE(strstr(shown,
                                   "# Not read (see the warnings):\n#   n.conf\n# No other configuration "
                                   "file read: built-in defaults, and SyncOnSuspend=keep"));
        }
}

TEST(empty_value_resets) {
        _cleanup_(policy_freep) Policy *p = NULL;
        static const char a[] =
                "[Sync]\nMaxParallel=7\nMountTimeoutSec=3s\nDeadlineSec=9s\nSkipClean=yes\nOnTimeout=fail\n"
                "[Kernel]\nSyncOnSuspend=off\n"
                "[Rule x]\nPath=/a\nType=ext4\nDevice=usb\nAction=skip\nMountTimeoutSec=1s\n";
        static const char b[] =
                "[Sync]\nMaxParallel=\nMountTimeoutSec=\nDeadlineSec=\nSkipClean=\nOnTimeout=\n"
                "[Kernel]\nSyncOnSuspend=\n"
                "[Rule x]\nPath=\nType=\nDevice=\nAction=\nMountTimeoutSec=\n";

        ASSERT_OK(policy_new(&p));
        ASSERT_OK(policy_parse_text(p, "a.conf", a, strlen(a)));
        ASSERT_EQ(p->max_parallel, 7);
        ASSERT_TRUE(p->rules[0].paths != NULL);
        ASSERT_OK(policy_parse_text(p, "b.conf", b, strlen(b)));
        ASSERT_EQ(p->n_warnings, 0);
        assert_defaults(p);
        ASSERT_STREQ(p->o_max_parallel.file, "b.conf"); /* the reset is where the value came from */
        ASSERT_EQ(p->o_max_parallel.line, 2);
        ASSERT_EQ(p->n_rules, 1);
        ASSERT_TRUE(p->rules[0].paths == NULL);
        ASSERT_TRUE(p->rules[0].types == NULL);
        ASSERT_EQ(p->rules[0].device_classes, 0);
        ASSERT_EQ(p->rules[0].action, RULE_ACTION_AUTO);
        ASSERT_U64_EQ(p->rules[0].mount_timeout, USEC_INFINITY);
        ASSERT_STREQ(p->rules[0].origin.file, "a.conf");
        ASSERT_STREQ(p->rules[0].o_paths.file, "b.conf");
        ASSERT_STREQ(p->files[0], "a.conf");
        ASSERT_STREQ(p->files[1], "b.conf");
}

TEST(find_files_and_dropins) {
        static const char *const expected[] = {
                "/etc/suspend-sync.conf",
                "/run/suspend-sync.conf.d/05-early.conf",
                "/usr/lib/suspend-sync.conf.d/10-vendor.conf",
                "/run/suspend-sync.conf.d/20-local.conf",
                "/etc/suspend-sync.conf.d/30-admin.conf",
                "/usr/lib/suspend-sync.conf.d/50-kernel.conf",
                "/etc/suspend-sync.conf.d/60-reset.conf",
                "/etc/suspend-sync.conf.d/70-rule.conf",
        };
        _cleanup_close_ int fd = open_root("dropins");
        _cleanup_(policy_freep) Policy *p = NULL;
        char **files = NULL;
        size_t n = 0;

        ASSERT_OK(policy_find_files(fd, &files));
        for (; files[n]; n++) {
                fprintf(stderr, "   file: %s\n", files[n]);
                ASSERT_TRUE(n < ELEMENTSOF(expected));
                ASSERT_STREQ(files[n], expected[n]);
                free(files[n]);
        }
        free(files);
        ASSERT_EQ(n, ELEMENTSOF(expected));

        ASSERT_OK(policy_load(fd, NULL, &p));
        dump_warnings(p);
        ASSERT_EQ(p->n_warnings, 0);
        for (n = 0; p->files[n]; n++)
                ASSERT_STREQ(p->files[n], expected[n]);
        ASSERT_EQ(n, ELEMENTSOF(expected));

        /* 05-early (MaxParallel=9) sorts before 10-vendor (MaxParallel=3), across directories. */
        ASSERT_EQ(p->max_parallel, 3);
        ASSERT_STREQ(p->o_max_parallel.file, "/usr/lib/suspend-sync.conf.d/10-vendor.conf");
        ASSERT_EQ(p->o_max_parallel.line, 2);
        /* /run/.../20-local.conf hides /usr/local/lib/.../20-local.conf (5s). */
        ASSERT_U64_EQ(p->mount_timeout, 7 * USEC_PER_SEC);
        ASSERT_STREQ(p->o_mount_timeout.file, "/run/suspend-sync.conf.d/20-local.conf");
        /* 40-masked.conf in /usr/lib is masked by /etc/.../40-masked.conf -> /dev/null. */
        ASSERT_U64_EQ(p->deadline, 20 * USEC_PER_SEC);
        ASSERT_STREQ(p->o_deadline.file, "/etc/suspend-sync.conf");
        ASSERT_EQ(p->o_deadline.line, 4);
        ASSERT_EQ(p->on_timeout, ON_TIMEOUT_FAIL);
        ASSERT_STREQ(p->o_on_timeout.file, "/etc/suspend-sync.conf.d/30-admin.conf");
        /* Negative control: every hidden/masked file says SkipClean=no; none may be used (the
         * default is no as well: the origin tells). */
        ASSERT_TRUE(!p->skip_clean);
        ASSERT_TRUE(p->o_skip_clean.file == NULL);
        /* 50-kernel sets off, 60-reset resets to the default. */
        ASSERT_EQ(p->sync_on_suspend, SYNC_ON_SUSPEND_AUTO);
        ASSERT_STREQ(p->o_sync_on_suspend.file, "/etc/suspend-sync.conf.d/60-reset.conf");
        ASSERT_EQ(p->o_sync_on_suspend.line, 3);

        /* [Rule usb] from 10-vendor is extended by 70-rule and keeps its position. */
        ASSERT_EQ(p->n_rules, 2);
        ASSERT_STREQ(p->rules[0].name, "usb");
        ASSERT_EQ(p->rules[0].device_classes, DEVICE_USB);
        ASSERT_EQ(p->rules[0].action, RULE_ACTION_SKIP);
        ASSERT_STREQ(p->rules[0].origin.file, "/usr/lib/suspend-sync.conf.d/10-vendor.conf");
        ASSERT_STREQ(p->rules[0].o_action.file, "/etc/suspend-sync.conf.d/70-rule.conf");
        ASSERT_STREQ(p->rules[1].name, "home");
}

TEST(main_file_order) {
        _cleanup_close_ int a = open_root("mainorder"), b = open_root("mainorder-usr");
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;

        ASSERT_OK(policy_load(a, NULL, &p));
        ASSERT_STREQ(p->files[0], "/run/suspend-sync.conf");
        ASSERT_TRUE(p->files[1] == NULL);
        ASSERT_EQ(p->max_parallel, 5);

        ASSERT_OK(policy_load(b, NULL, &q));
        ASSERT_STREQ(q->files[0], "/usr/local/lib/suspend-sync.conf");
        ASSERT_TRUE(q->files[1] == NULL);
        ASSERT_EQ(q->max_parallel, 6);
}

TEST(config_path_only) {
        _cleanup_close_ int fd = open_root("dropins");
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;

        ASSERT_OK(policy_load(fd, "/etc/custom.conf", &p));
        ASSERT_EQ(p->n_warnings, 0);
        ASSERT_STREQ(p->files[0], "/etc/custom.conf");
        ASSERT_TRUE(p->files[1] == NULL);
        ASSERT_EQ(p->max_parallel, 11);
        ASSERT_EQ(p->on_timeout, ON_TIMEOUT_CONTINUE); /* 30-admin.conf not read */
        ASSERT_EQ(p->n_rules, 0);

        ASSERT_TRUE(!p->unread);
        /* An explicitly named file that does not exist: defaults, SyncOnSuspend=keep, two warnings. */
        ASSERT_OK(policy_load(fd, "/etc/nonexistent.conf", &q));
        ASSERT_TRUE(q->unread);
        assert_defaults(q);
        ASSERT_WARNING(q, "/etc/nonexistent.conf: File not found, using defaults");
        ASSERT_WARNING(q, "/etc/nonexistent.conf: " UNREAD_WARNING);
        ASSERT_EQ(q->n_warnings, 2);
}

TEST(missing_and_unreadable) {
        _cleanup_close_ int e = open_root("empty"), u = open_root("unreadable");
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;

        ASSERT_OK(policy_load(e, NULL, &p));
        assert_defaults(p);
        ASSERT_EQ(p->n_warnings, 0);
        ASSERT_TRUE(p->files && p->files[0] == NULL);
        ASSERT_TRUE(!p->unread); /* no file at all is not a file unread */

        /* What an unreadable file sets is unknown: fail closed, the kernel's sync left alone. */
        ASSERT_OK(policy_load(u, NULL, &q));
        ASSERT_TRUE(q->unread);
        assert_defaults(q);
        dump_warnings(q);
        ASSERT_WARNING(q, "/etc/suspend-sync.conf: Failed to read: Is a directory, ignoring");
        ASSERT_WARNING(q, "/etc/suspend-sync.conf: " UNREAD_WARNING);
        ASSERT_EQ(q->n_warnings, 2);
}

static Policy *build(bool truncated, int error_a, const char *text_b) {
        PolicySources s = { .truncated = truncated };
        Policy *p = NULL;

        ASSERT_OK(policy_sources_add(&s, "/etc/suspend-sync.conf.d/10-a.conf", error_a, "", 0));
        ASSERT_OK(policy_sources_add(&s, "/etc/suspend-sync.conf.d/20-b.conf", 0, text_b, strlen(text_b)));
        ASSERT_OK(policy_build(&s, &p));
        for (size_t i = 0; i < s.n_files; i++) {
                free(s.files[i].path);
                free(s.files[i].text);
        }
        free(s.files);
        return p;
}

/* A configuration not read in full keeps the kernel's sync alone whatever the files read set; so does
 * a drop-in that vanished between the listing and the read (the file of its name it hid was not read
 * either: review S). */
TEST(unread_keeps_the_knob) {
        static const char off[] = "[Kernel]\nSyncOnSuspend=off\n[Sync]\nMaxParallel=5\n";
        _cleanup_(policy_freep) Policy *a = build(false, -EIO, off), *b = build(false, -EFBIG, off),
                                       *c = build(true, 0, off), *d = build(false, -ENOENT, off),
                                       *e = build(false, 0, off), *f = build(false, -EBUSY, off);

        ASSERT_TRUE(a->unread && a->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
        ASSERT_EQ(a->max_parallel, 5); /* the rest as read */
        ASSERT_TRUE(a->o_sync_on_suspend.file == NULL);
        ASSERT_WARNING(a, "/etc/suspend-sync.conf.d/10-a.conf: " UNREAD_WARNING);
        ASSERT_TRUE(b->unread && b->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
        ASSERT_TRUE(c->unread && c->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
        ASSERT_WARNING(c, "suspend-sync.conf.d: " UNREAD_WARNING);
        ASSERT_TRUE(d->unread && d->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
        /* written to while it was read (review S, L4) */
        ASSERT_TRUE(f->unread && f->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
        ASSERT_WARNING(
                f, "/etc/suspend-sync.conf.d/10-a.conf: File changed while it was read, ignoring (write a "
                   "configuration file by renaming a complete one into place)");
        /* negative control: read in full */
        ASSERT_TRUE(!e->unread && e->sync_on_suspend == SYNC_ON_SUSPEND_OFF);
        ASSERT_EQ(e->n_warnings, 0);
}

/* A drop-in that cannot be read while the rule table is full (POLICY_MAX_RULES rules): no stand-in
 * rule fits, so the first rule stands in, disabled, and no skip rule applies any more (the file not
 * read may have turned the skip into a sync by its name). With room, a stand-in is added instead. */
TEST(unread_dropin_rule_table_full) {
        for (unsigned n = POLICY_MAX_RULES - 1; n <= POLICY_MAX_RULES; n++) {
                PolicySources s = {};
                _cleanup_(policy_freep) Policy *p = NULL;
                _cleanup_free_ char *text = NULL;
                size_t size = 0;
                FILE *f;

                f = open_memstream(&text, &size);
                ASSERT_TRUE(f);
                fputs("[Rule data]\nPath=/data\nAction=skip\n", f);
                for (unsigned i = 1; i < n; i++)
                        fprintf(f, "[Rule r%u]\nPath=/other/%u\nAction=sync\n", i, i);
                ASSERT_TRUE(fclose(f) == 0);
                ASSERT_OK(policy_sources_add(&s, "/etc/suspend-sync.conf.d/10-a.conf", 0, text, size));
                ASSERT_OK(policy_sources_add(&s, "/etc/suspend-sync.conf.d/20-b.conf", -EACCES, "", 0));
                ASSERT_OK(policy_build(&s, &p));
                for (size_t i = 0; i < s.n_files; i++) {
                        free(s.files[i].path);
                        free(s.files[i].text);
                }
                free(s.files);

                dump_warnings(p);
                ASSERT_TRUE(p->unread);
                ASSERT_EQ(p->n_rules, POLICY_MAX_RULES);
                ASSERT_TRUE(p->rules[0].disabled);
                ASSERT_STREQ(p->rules[0].disabled_reason, "the file could not be read");
                ASSERT_STREQ(p->rules[0].o_disabled.file, "/etc/suspend-sync.conf.d/20-b.conf");
                if (n == POLICY_MAX_RULES)
                        ASSERT_STREQ(p->rules[0].name, "data"); /* no room: the first rule stands in */
                else
                        ASSERT_STREQ(p->rules[1].name, "data"); /* control: a stand-in added */
                ASSERT_TRUE(policy_match(p, "/data", "ext4", 0, 0, NULL) == NULL);
        }
}

/* Review Q: a skip rule must never stand while a file that may change it by name was not read. */
static void write_at(int fd, const char *path, const char *text) {
        int f = openat(fd, path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);

        ASSERT_TRUE(f >= 0);
        ASSERT_TRUE(write(f, text, strlen(text)) == (ssize_t) strlen(text));
        close(f);
}

static void assert_nfs_not_skipped(const Policy *p) {
        const Rule *r = policy_match(p, "/mnt/nfs", "nfs4", 0, 0, NULL);

        if (r && r->action == RULE_ACTION_SKIP)
                dump_warnings(p);
        ASSERT_TRUE(!r || r->action != RULE_ACTION_SKIP);
}

#define VENDOR_SKIP "[Rule nfs]\nType=nfs4\nAction=skip\n"

/* Too many drop-ins: the ones past the limit may override a shipped skip rule by its name. */
TEST(truncated_dropins_block_skip) {
        _cleanup_(policy_freep) Policy *p = build(true, 0, VENDOR_SKIP);

        ASSERT_TRUE(p->unread);
        assert_nfs_not_skipped(p);
}

/* A temporary root (tmp, a mkdtemp template) with empty etc/ and usr/lib/ drop-in directories; its
 * fd. */
static int conf_tree(char *tmp) {
        int fd;

        ASSERT_TRUE(test_mkdtemp(tmp));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mkdirat(fd, "etc", 0755));
        ASSERT_OK(mkdirat(fd, "etc/suspend-sync.conf.d", 0755));
        ASSERT_OK(mkdirat(fd, "usr", 0755));
        ASSERT_OK(mkdirat(fd, "usr/lib", 0755));
        ASSERT_OK(mkdirat(fd, "usr/lib/suspend-sync.conf.d", 0755));
        return fd;
}

/* Removes what conf_tree() made, once the test has emptied its drop-in directories. */
static void conf_tree_remove(int fd, const char *tmp) {
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr/lib", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc", AT_REMOVEDIR));
        ASSERT_OK(rmdir(tmp));
}

/* The same read from a tree (review Q, H1): more drop-ins than POLICY_MAX_FILES, the vendor's skip
 * rule among the ones read. Those past the limit may override it by its name. */
TEST(truncated_listing_blocks_skip) {
        char tmp[] = "/tmp/test-policy-many-XXXXXX", name[64];
        _cleanup_close_ int fd = -EBADF;

        fd = conf_tree(tmp);
        write_at(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", VENDOR_SKIP);
        for (unsigned i = 0; i < POLICY_MAX_FILES; i++) {
                snprintf(name, sizeof name, "etc/suspend-sync.conf.d/50-%03u.conf", i);
                write_at(fd, name, "");
        }
        {
                _cleanup_(policy_freep) Policy *p = NULL;

                ASSERT_OK(policy_load(fd, NULL, &p));
                ASSERT_TRUE(p->unread && p->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
                assert_nfs_not_skipped(p);
        }
        /* Negative control: one fewer, all read; the vendor's rule applies. */
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d/50-000.conf", 0));
        {
                _cleanup_(policy_freep) Policy *p = NULL;

                ASSERT_OK(policy_load(fd, NULL, &p));
                ASSERT_TRUE(!p->unread && p->n_warnings == 0);
                ASSERT_TRUE(policy_match(p, "/mnt/nfs", "nfs4", 0, 0, NULL)->action == RULE_ACTION_SKIP);
        }
        for (unsigned i = 1; i < POLICY_MAX_FILES; i++) {
                snprintf(name, sizeof name, "etc/suspend-sync.conf.d/50-%03u.conf", i);
                ASSERT_OK(unlinkat(fd, name, 0));
        }
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", 0));
        conf_tree_remove(fd, tmp);
}

/* The configuration under fd loads as not read in full, and the vendor's skip rule does not apply;
 * with the warning 'warning' when not NULL. */
static void assert_loads_unread_with(int fd, const char *warning) {
        _cleanup_(policy_freep) Policy *p = NULL;

        ASSERT_OK(policy_load(fd, NULL, &p));
        if (warning)
                ASSERT_WARNING(p, warning);
        ASSERT_TRUE(p->unread);
        assert_nfs_not_skipped(p);
}

static void assert_loads_unread(int fd) {
        assert_loads_unread_with(fd, NULL);
}

/* Review S, L5: past the limit of drop-ins, the warning and the stand-in name the first file left out
 * (they named "suspend-sync.conf.d"), and the vendor's skip rule still does not apply. */
TEST(truncated_dropins_named) {
        char tmp[] = "/tmp/test-policy-many-XXXXXX";
        _cleanup_close_ int fd = -EBADF;
        _cleanup_(policy_freep) Policy *p = NULL;
        char first_left_out[96];

        fd = conf_tree(tmp);
        write_at(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", VENDOR_SKIP);
        /* 10-v.conf, then a000..: the limit's first file left out is a(POLICY_MAX_FILES - 1). */
        for (unsigned i = 0; i < POLICY_MAX_FILES + 8; i++) {
                char name[96];

                snprintf(name, sizeof name, "etc/suspend-sync.conf.d/a%03u.conf", i);
                write_at(fd, name, "");
        }
        snprintf(first_left_out, sizeof first_left_out, "/etc/suspend-sync.conf.d/a%03u.conf",
                 POLICY_MAX_FILES - 1);

        ASSERT_OK(policy_load(fd, NULL, &p));
        dump_warnings(p);
        ASSERT_TRUE(p->unread && p->n_rules >= 1 && p->rules[0].disabled);
        ASSERT_STREQ(p->rules[0].o_disabled.file, first_left_out);
        ASSERT_TRUE(startswith(p->warnings[0], first_left_out));
        ASSERT_TRUE(strstr(p->warnings[0],
                           ": Too many drop-in files (max 256 in total), ignoring this one and "
                           "the ones after it"));
        assert_nfs_not_skipped(p);

        for (unsigned i = 0; i < POLICY_MAX_FILES + 8; i++) {
                char name[96];

                snprintf(name, sizeof name, "etc/suspend-sync.conf.d/a%03u.conf", i);
                ASSERT_OK(unlinkat(fd, name, 0));
        }
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", 0));
        conf_tree_remove(fd, tmp);
}

/* A drop-in, or the main file, that exists but cannot be looked at (ELOOP here; EIO, ESTALE, EACCES
 * alike) is not "absent": it neither lets the lower directory's file of that name through silently,
 * nor loses what it may set about rules. */
TEST(unstatable_entries_block_skip) {
        char tmp[] = "/tmp/test-policy-unstat-XXXXXX";
        _cleanup_close_ int fd = -EBADF;

        fd = conf_tree(tmp);

        /* A drop-in of /etc that loops hides the vendor's of the same name. */
        write_at(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", VENDOR_SKIP);
        ASSERT_OK(symlinkat("10-v.conf", fd, "etc/suspend-sync.conf.d/10-v.conf"));
        assert_loads_unread(fd);
        /* A drop-in of its own name that loops (it may have overridden the rule to sync). */
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d/10-v.conf", 0));
        ASSERT_OK(symlinkat("99-admin.conf", fd, "etc/suspend-sync.conf.d/99-admin.conf"));
        assert_loads_unread(fd);
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d/99-admin.conf", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", 0));

        /* The main file of /etc that loops replaces the vendor's main file. */
        write_at(fd, "usr/lib/suspend-sync.conf", VENDOR_SKIP);
        ASSERT_OK(symlinkat("suspend-sync.conf", fd, "etc/suspend-sync.conf"));
        assert_loads_unread(fd);
        /* Negative control: no /etc main file at all, the vendor's applies. */
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf", 0));
        {
                _cleanup_(policy_freep) Policy *p = NULL;

                ASSERT_OK(policy_load(fd, NULL, &p));
                ASSERT_TRUE(!p->unread);
                ASSERT_TRUE(policy_match(p, "/mnt/nfs", "nfs4", 0, 0, NULL)->action == RULE_ACTION_SKIP);
        }
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf", 0));
        conf_tree_remove(fd, tmp);
}

/* Review S: a drop-in listed, then gone before it is read (an admin reverting to the vendor's file of
 * that name: rm /etc/.../50-sync.conf). Neither it nor the vendor's file it hid is read; a skip rule
 * that both the configuration before and the one after override must not apply. */
static void unlink_on_read(const char *path, void *userdata) {
        int *fd = userdata;

        if (streq(path, "/etc/suspend-sync.conf.d/50-sync.conf"))
                (void) unlinkat(*fd, "etc/suspend-sync.conf.d/50-sync.conf", 0);
}

TEST(vanished_dropin_blocks_skip) {
        char tmp[] = "/tmp/test-policy-vanish-XXXXXX";
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_close_ int fd = -EBADF;

        fd = conf_tree(tmp);
        write_at(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", VENDOR_SKIP);
        write_at(fd, "usr/lib/suspend-sync.conf.d/50-sync.conf", "[Rule nfs]\nAction=sync\n");
        write_at(fd, "etc/suspend-sync.conf.d/50-sync.conf", "[Rule nfs]\nAction=sync\nMountTimeoutSec=5s\n");

        /* Control: before and after the removal, the rule syncs. */
        {
                _cleanup_(policy_freep) Policy *q = NULL;

                ASSERT_OK(policy_load(fd, NULL, &q));
                assert_nfs_not_skipped(q);
        }
        ASSERT_OK(policy_read_sources(fd, NULL, unlink_on_read, &fd, &s));
        ASSERT_OK(policy_build(s, &p));
        assert_nfs_not_skipped(p);
        {
                _cleanup_(policy_freep) Policy *q = NULL;

                ASSERT_OK(policy_load(fd, NULL, &q));
                assert_nfs_not_skipped(q);
        }
        (void) unlinkat(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", 0);
        (void) unlinkat(fd, "usr/lib/suspend-sync.conf.d/50-sync.conf", 0);
        (void) unlinkat(fd, "usr/lib/suspend-sync.conf.d", AT_REMOVEDIR);
        (void) unlinkat(fd, "usr/lib", AT_REMOVEDIR);
        (void) unlinkat(fd, "usr", AT_REMOVEDIR);
        (void) unlinkat(fd, "etc/suspend-sync.conf.d", AT_REMOVEDIR);
        (void) unlinkat(fd, "etc", AT_REMOVEDIR);
        (void) rmdir(tmp);
}


/* Review S, M1, for a drop-in directory: /etc/suspend-sync.conf.d a symbolic link to nothing (the
 * administrator's directory on a filesystem not mounted now) may hold drop-ins that override or mask
 * the vendor's skip rule by its name: not read in full, and no skip rule stands. */
TEST(dangling_dropin_dir_blocks_skip) {
        char tmp[] = "/tmp/test-policy-dangdir-XXXXXX";
        _cleanup_close_ int fd = -EBADF;

        fd = conf_tree(tmp);
        write_at(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", VENDOR_SKIP);
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d", AT_REMOVEDIR));
        ASSERT_OK(symlinkat("/nonexistent-test-policy/suspend-sync.conf.d", fd, "etc/suspend-sync.conf.d"));
        {
                _cleanup_(policy_freep) Policy *p = NULL;

                ASSERT_OK(policy_load(fd, NULL, &p));
                dump_warnings(p);
                ASSERT_WARNING(p, "/etc/suspend-sync.conf.d: Symbolic link to nothing, not read");
                ASSERT_TRUE(p->unread && p->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
                assert_nfs_not_skipped(p);
        }
        /* Negative control: no /etc directory at all, the vendor's rule applies. */
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d", 0));
        {
                _cleanup_(policy_freep) Policy *p = NULL;

                ASSERT_OK(policy_load(fd, NULL, &p));
                ASSERT_TRUE(!p->unread && p->n_warnings == 0);
                ASSERT_TRUE(policy_match(p, "/mnt/nfs", "nfs4", 0, 0, NULL)->action == RULE_ACTION_SKIP);
        }
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr/lib", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc", AT_REMOVEDIR));
        ASSERT_OK(rmdir(tmp));
}

/* The main file of /etc masked (a symbolic link to /dev/null, as systemd masks): the vendor's main
 * file is not read, and the mask is read as an empty file, in full: no warning, no stand-in. */
TEST(main_file_masked) {
        char tmp[] = "/tmp/test-policy-mainmask-XXXXXX";
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_close_ int fd = -EBADF;

        fd = conf_tree(tmp);
        write_at(fd, "usr/lib/suspend-sync.conf", VENDOR_SKIP "[Kernel]\nSyncOnSuspend=off\n");
        ASSERT_OK(symlinkat("/dev/null", fd, "etc/suspend-sync.conf"));
        ASSERT_OK(policy_load(fd, NULL, &p));
        dump_warnings(p);
        ASSERT_EQ(p->n_warnings, 0);
        ASSERT_TRUE(!p->unread && p->n_rules == 0);
        ASSERT_EQ(p->sync_on_suspend, SYNC_ON_SUSPEND_AUTO);
        ASSERT_STREQ(p->files[0], "/etc/suspend-sync.conf");
        ASSERT_TRUE(p->files[1] == NULL);

        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf", 0));
        conf_tree_remove(fd, tmp);
}

/* Review S: a drop-in that resolves to /dev/null masks, however the link is spelled (systemd's
 * null_or_empty() looks at what the name resolves to): "//dev/null", "../../dev/null" or a link to a
 * link. An admin who masks the vendor's skip rule so must not get it applied. */
TEST(mask_through_any_link_to_dev_null) {
        static const char *const targets[] = { "/dev/null", "//dev/null", "/dev/../dev/null", "../mask" };
        char tmp[] = "/tmp/test-policy-mask-XXXXXX";
        _cleanup_close_ int fd = -EBADF;

        fd = conf_tree(tmp);
        ASSERT_OK(symlinkat("/dev/null", fd, "etc/mask"));
        write_at(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", VENDOR_SKIP);
        for (size_t i = 0; i < ELEMENTSOF(targets); i++) {
                _cleanup_(policy_freep) Policy *p = NULL;

                ASSERT_OK(symlinkat(targets[i], fd, "etc/suspend-sync.conf.d/10-v.conf"));
                ASSERT_OK(policy_load(fd, NULL, &p));
                ASSERT_TRUE(p->files[0] == NULL);
                assert_nfs_not_skipped(p);
                ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d/10-v.conf", 0));
        }
        ASSERT_OK(unlinkat(fd, "etc/mask", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", 0));
        conf_tree_remove(fd, tmp);
}

/* Review Q: a drop-in directory that cannot be listed (ELOOP here; EIO, EACCES alike) makes the
 * configuration not read in full; the other files still apply (suspend-sync(8), CONFIGURATION READ:
 * "its warning is followed by ... and the other files apply"). */
TEST(unlistable_dropin_dir_keeps_other_files) {
        char tmp[] = "/tmp/test-policy-unlist-XXXXXX";
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_close_ int fd = -EBADF;
        int f;

        ASSERT_TRUE(test_mkdtemp(tmp));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mkdirat(fd, "etc", 0755));
        ASSERT_OK(mkdirat(fd, "usr", 0755));
        ASSERT_OK(mkdirat(fd, "usr/lib", 0755));
        f = openat(fd, "etc/suspend-sync.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        ASSERT_TRUE(f >= 0);
        ASSERT_TRUE(write(f, "[Sync]\nMaxParallel=4\nOnTimeout=fail\n", 36) == 36);
        close(f);
        ASSERT_OK(symlinkat("suspend-sync.conf.d", fd, "usr/lib/suspend-sync.conf.d"));

        ASSERT_OK(policy_load(fd, NULL, &p));
        dump_warnings(p);
        ASSERT_TRUE(p->unread);
        ASSERT_TRUE(p->n_rules >= 1 && p->rules[0].disabled);
        ASSERT_EQ(p->max_parallel, 4);             /* 16 before review Q, M1 */
        ASSERT_EQ(p->on_timeout, ON_TIMEOUT_FAIL); /* continue before review Q, M1 */
        ASSERT_STREQ(p->files[0], "/etc/suspend-sync.conf");
        ASSERT_STREQ(p->rules[0].o_disabled.file, "/usr/lib/suspend-sync.conf.d"); /* not "(:0)" */

        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf", 0));
        ASSERT_OK(unlinkat(fd, "etc", AT_REMOVEDIR));
        ASSERT_OK(rmdir(tmp));
}

/* Review Q, M1: the stand-in for a file or directory not read names it in cat-config (it printed
 * "(:0)": origins pointed into p->files only), and cat-config lists what was not read. */
TEST(unread_stand_in_origin) {
        _cleanup_(policy_freep) Policy *p = build(false, -EIO, "[Sync]\nMaxParallel=5\n"),
                                       *t = build(true, 0, "");
        _cleanup_(policy_sources_freep) PolicySources *s = calloc(1, sizeof(PolicySources));
        _cleanup_(policy_freep) Policy *q = NULL;
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;

        ASSERT_OK(policy_format(p, &a));
        fputs(a, stderr);
        ASSERT_TRUE(
                strstr(a, "# from /etc/suspend-sync.conf.d/10-a.conf\n# DISABLED: the file could not be read "
                          "(/etc/suspend-sync.conf.d/10-a.conf). It may match"));
        ASSERT_TRUE(strstr(a, "# Not read (see the warnings):\n#   /etc/suspend-sync.conf.d/10-a.conf\n"));
        ASSERT_TRUE(!strstr(a, "(:0)"));
        ASSERT_STREQ(p->rules[0].o_disabled.file, "/etc/suspend-sync.conf.d/10-a.conf");
        ASSERT_EQ(p->rules[0].o_disabled.line, 0);

        /* The limit of drop-ins (H1): a stand-in named after the directories, first of all rules. */
        ASSERT_OK(policy_format(t, &b));
        ASSERT_TRUE(t->n_rules == 1 && t->rules[0].disabled);
        ASSERT_STREQ(t->rules[0].name, "(suspend-sync.conf.d)");
        ASSERT_TRUE(
                strstr(b, "# DISABLED: drop-in files past the limit were not read (suspend-sync.conf.d)."));

        /* A directory not listed (M1), as the reader sends it. */
        ASSERT_TRUE(s);
        ASSERT_OK(policy_sources_add_kind(s, POLICY_FILE_UNLISTED_DIR, "/usr/lib/suspend-sync.conf.d", -ELOOP,
                                          NULL, 0));
        ASSERT_OK(policy_sources_add(s, "/etc/suspend-sync.conf", 0, "[Sync]\nMaxParallel=4\n", 21));
        ASSERT_OK(policy_build(s, &q));
        ASSERT_OK(policy_format(q, &c));
        fputs(c, stderr);
        ASSERT_TRUE(q->unread && q->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
        ASSERT_EQ(q->max_parallel, 4);
        ASSERT_WARNING(q,
                       "/usr/lib/suspend-sync.conf.d: Failed to read directory: Too many levels of symbolic "
                       "links, ignoring its drop-ins");
        ASSERT_WARNING(q, "/usr/lib/suspend-sync.conf.d: " UNREAD_WARNING);
        ASSERT_TRUE(strstr(
                c, "# from /usr/lib/suspend-sync.conf.d\n# DISABLED: the drop-in directory could not be "
                   "read (/usr/lib/suspend-sync.conf.d). It may match"));
        ASSERT_TRUE(strstr(c, "[Rule (/usr/lib/suspend-sync.conf.d)]\n"));
        ASSERT_TRUE(!strstr(c, "(:0)"));
        /* negative control: read in full, nothing listed as not read */
        policy_free(TAKE_PTR(q));
        free(TAKE_PTR(c));
        s->files[0].kind = POLICY_FILE_CONF;
        s->files[0].error = 0; /* read, empty (review S: one gone since it was listed is not read) */
        s->files[0].text = strdup("");
        s->files[0].size = 0;
        ASSERT_TRUE(s->files[0].text);
        ASSERT_OK(policy_build(s, &q));
        ASSERT_OK(policy_format(q, &c));
        ASSERT_TRUE(!q->unread && q->n_rules == 0);
        ASSERT_TRUE(!strstr(c, "Not read"));
}

/* The configuration under fd loads with one notice, text, and in full: the vendor's skip rule (the
 * one file read) applies, a layout notice changes nothing. */
static void assert_one_notice(int fd, const char *text) {
        _cleanup_(policy_freep) Policy *p = NULL;

        ASSERT_OK(policy_load(fd, NULL, &p));
        dump_warnings(p);
        ASSERT_WARNING(p, text);
        ASSERT_EQ(p->n_warnings, 1);
        ASSERT_TRUE(p->warning_notices[0]);
        ASSERT_TRUE(!p->unread);
        ASSERT_STREQ(p->files[0], "/usr/lib/suspend-sync.conf.d/10-v.conf");
        ASSERT_TRUE(policy_match(p, "/mnt/nfs", "nfs4", 0, 0, NULL)->action == RULE_ACTION_SKIP);
}

/* Review Q, L3: a drop-in directory's name that is no directory, and a symbolic link to nothing,
 * get a notice; what is read does not change (as systemd: a dangling link masks nothing). */
TEST(layout_notices) {
        char tmp[] = "/tmp/test-policy-notice-XXXXXX";
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(test_mkdtemp(tmp));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mkdirat(fd, "etc", 0755));
        ASSERT_OK(mkdirat(fd, "usr", 0755));
        ASSERT_OK(mkdirat(fd, "usr/lib", 0755));
        ASSERT_OK(mkdirat(fd, "usr/lib/suspend-sync.conf.d", 0755));
        write_at(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", VENDOR_SKIP);
        write_at(fd, "etc/suspend-sync.conf.d", "[Rule nfs]\nAction=sync\n"); /* a file, not a directory */
        assert_one_notice(fd, "/etc/suspend-sync.conf.d: Not a directory, so no drop-ins are read from it, "
                              "ignoring");
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d", 0));
        ASSERT_OK(mkdirat(fd, "etc/suspend-sync.conf.d", 0755));
        ASSERT_OK(symlinkat("/nonexistent-test-policy/10-v.conf", fd, "etc/suspend-sync.conf.d/10-v.conf"));
        ASSERT_OK(symlinkat("missing.conf", fd, "etc/suspend-sync.conf.d/20-mine.conf"));
        {
                _cleanup_(policy_freep) Policy *p = NULL;

                ASSERT_OK(policy_load(fd, NULL, &p));
                dump_warnings(p);
                ASSERT_WARNING(p, "/etc/suspend-sync.conf.d/10-v.conf: Symbolic link to nothing, not read: "
                                  "'/usr/lib/suspend-sync.conf.d/10-v.conf' applies in its place (a symbolic "
                                  "link to /dev/null masks it)");
                ASSERT_WARNING(p,
                               "/etc/suspend-sync.conf.d/20-mine.conf: Symbolic link to nothing, not read");
                /* Its target may be the admin's file on a filesystem not mounted now (review S, M1):
                 * the vendor's file of its name is read, but no skip rule stands. */
                ASSERT_EQ(p->n_warnings, 3);
                ASSERT_TRUE(!p->warning_notices[0] && !p->warning_notices[1]);
                ASSERT_TRUE(p->unread && p->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
                assert_nfs_not_skipped(p);
                ASSERT_STREQ(p->files[0], "/usr/lib/suspend-sync.conf.d/10-v.conf");
        }
        /* Negative control: the admin's link masks (to /dev/null): no notice, no vendor rule. */
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d/10-v.conf", 0));
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d/20-mine.conf", 0));
        ASSERT_OK(symlinkat("/dev/null", fd, "etc/suspend-sync.conf.d/10-v.conf"));
        {
                _cleanup_(policy_freep) Policy *p = NULL;

                ASSERT_OK(policy_load(fd, NULL, &p));
                ASSERT_EQ(p->n_warnings, 0);
                ASSERT_EQ(p->n_rules, 0);
        }
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d/10-v.conf", 0));
        /* Review S, L3: a directory or a FIFO where the admin's drop-in would be (systemd ignores it,
         * and the vendor's file of its name applies): what it was meant to be is not known, so it
         * hides the vendor's file, its read fails and says so, and no skip rule stands. */
        ASSERT_OK(mkdirat(fd, "etc/suspend-sync.conf.d/10-v.conf", 0755));
        assert_loads_unread_with(fd, "/etc/suspend-sync.conf.d/10-v.conf: Failed to read: Is a directory, "
                                     "ignoring");
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d/10-v.conf", AT_REMOVEDIR));
        ASSERT_OK(mkfifoat(fd, "etc/suspend-sync.conf.d/20-mine.conf", 0644));
        assert_loads_unread_with(fd, "/etc/suspend-sync.conf.d/20-mine.conf: Not a regular file, ignoring");
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d/20-mine.conf", 0));
        ASSERT_OK(unlinkat(fd, "etc/suspend-sync.conf.d", AT_REMOVEDIR));
        /* Review S, L2: with /run a file, the notice names /run, which is what is no directory. */
        write_at(fd, "run", "");
        assert_one_notice(fd, "/run/suspend-sync.conf.d: '/run' is not a directory, so no drop-ins are read "
                              "from here, ignoring");
        ASSERT_OK(unlinkat(fd, "run", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d/10-v.conf", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/suspend-sync.conf.d", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr/lib", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc", AT_REMOVEDIR));
        ASSERT_OK(rmdir(tmp));
}

/* Review Q, L8: a boolean in SyncOnSuspend= gets a hint at the value meant; the value is still
 * invalid and the earlier one (or the default) stays, as suspend-sync.conf(5) says. */
TEST(sync_on_suspend_boolean_hint) {
        static const struct {
                const char *value, *hint;
        } cases[] = {
                { "yes", "keep" }, { "on", "keep" },   { "true", "keep" }, { "1", "keep" },
                { "no", "off" },   { "false", "off" }, { "0", "off" },     { "OFF", "off" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = NULL, *w = NULL;
                _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;

                ASSERT_TRUE(asprintf(&text, "[Kernel]\nSyncOnSuspend=%s\n", cases[i].value) > 0);
                ASSERT_TRUE(
                        asprintf(&w,
                                 "t.conf:2: Invalid SyncOnSuspend= value '%s' (expected auto|keep|off, not a "
                                 "boolean; did you mean '%s'?), ignoring",
                                 cases[i].value, cases[i].hint) > 0);
                p = parse(text);
                ASSERT_WARNING(p, w);
                ASSERT_EQ(p->n_warnings, 1);
                ASSERT_EQ(p->sync_on_suspend, SYNC_ON_SUSPEND_AUTO); /* the default stays */
                ASSERT_TRUE(p->o_sync_on_suspend.file == NULL);
                free(TAKE_PTR(text));
                ASSERT_TRUE(asprintf(&text, "[Kernel]\nSyncOnSuspend=off\nSyncOnSuspend=%s\n",
                                     cases[i].value) > 0);
                q = parse(text);
                ASSERT_EQ(q->sync_on_suspend, SYNC_ON_SUSPEND_OFF); /* the earlier value stays */
                ASSERT_EQ(q->n_warnings, 1);
        }
        /* Controls: no guess for a word that is no boolean, nor for another key. */
        {
                _cleanup_(policy_freep)
                        Policy *p = parse("[Kernel]\nSyncOnSuspend=always\n[Sync]\nOnTimeout=yes\n");

                ASSERT_WARNING(p, "t.conf:2: Invalid SyncOnSuspend= value 'always' (expected auto|keep|off), "
                                  "ignoring");
                ASSERT_WARNING(p,
                               "t.conf:4: Invalid OnTimeout= value 'yes' (expected continue|fail), ignoring");
                ASSERT_EQ(p->n_warnings, 2);
        }
}

/* Review Q, L2: a time span systemd rejects is a bad value (warning, earlier value kept), not a sum. */
TEST(timespan_values_strict) {
        _cleanup_(policy_freep) Policy *p = parse("[Sync]\nDeadlineSec=20s\nDeadlineSec=1.5.5s\n"
                                                  "MountTimeoutSec=5..5s\nMountTimeoutSec=3.\n"
                                                  "[Rule r]\nPath=/mnt\nMountTimeoutSec=1min 30s\n");

        dump_warnings(p);
        ASSERT_WARNING(p, "t.conf:3: Invalid DeadlineSec= value '1.5.5s', ignoring");
        ASSERT_WARNING(p, "t.conf:4: Invalid MountTimeoutSec= value '5..5s', ignoring");
        ASSERT_WARNING(p, "t.conf:5: Invalid MountTimeoutSec= value '3.', ignoring");
        ASSERT_EQ(p->n_warnings, 3);
        ASSERT_U64_EQ(p->deadline, 20 * USEC_PER_SEC);
        ASSERT_U64_EQ(p->mount_timeout, 10 * USEC_PER_SEC);
        ASSERT_U64_EQ(p->rules[0].mount_timeout, 90 * USEC_PER_SEC);
}

TEST(matching) {
        _cleanup_(policy_freep)
                Policy *p = parse("[Rule home]\nPath=/home\nAction=sync\n"
                                  "[Rule media]\nPath=/media/* /mnt/usb\nAction=skip\n"
                                  "[Rule fuse]\nType=fuse.* fuseblk\nMountTimeoutSec=1s\n"
                                  "[Rule usbext]\nType=ext4\nDevice=usb removable\nAction=skip\n"
                                  "[Rule both]\nPath=/srv/*\nType=xfs\n"
                                  "[Rule media]\nAction=auto\n" /* extends rule 2, keeps its place */
                                  "[Rule all]\nAction=sync\n");

        ASSERT_EQ(p->n_warnings, 0);
        ASSERT_EQ(p->n_rules, 6);
        ASSERT_STREQ(policy_match(p, "/home", "ext4", 0, 0, NULL)->name, "home");
        /* "/home" is exact: not the mounts below it. */
        ASSERT_STREQ(policy_match(p, "/home/user", "ext4", 0, 0, NULL)->name, "all");
        /* '*' matches across '/' (FNM_PATHNAME off). */
        ASSERT_STREQ(policy_match(p, "/media/usb", "vfat", 0, 0, NULL)->name, "media");
        ASSERT_STREQ(policy_match(p, "/media/usb/stick", "vfat", 0, 0, NULL)->name, "media");
        ASSERT_EQ(policy_match(p, "/media/usb", "vfat", 0, 0, NULL)->action, RULE_ACTION_AUTO);
        ASSERT_STREQ(policy_match(p, "/media", "vfat", 0, 0, NULL)->name, "all");
        ASSERT_STREQ(policy_match(p, "/mnt/usb", "vfat", 0, 0, NULL)->name, "media");
        /* first match wins: /media/x on fuse is "media", not "fuse" */
        ASSERT_STREQ(policy_match(p, "/media/x", "fuse.sshfs", DEVICE_FUSE, 0, NULL)->name, "media");
        ASSERT_STREQ(policy_match(p, "/data", "fuse.sshfs", 0, 0, NULL)->name, "fuse");
        ASSERT_STREQ(policy_match(p, "/data", "fuseblk", 0, 0, NULL)->name, "fuse");
        /* Device: at least one of the listed classes */
        ASSERT_STREQ(policy_match(p, "/data", "ext4", DEVICE_REMOVABLE | DEVICE_ROTATIONAL, 0, NULL)->name,
                     "usbext");
        ASSERT_STREQ(policy_match(p, "/data", "ext4", DEVICE_ROTATIONAL, 0, NULL)->name, "all");
        ASSERT_STREQ(policy_match(p, "/data", "ext4", 0, 0, NULL)->name, "all");
        /* every given key must match */
        ASSERT_STREQ(policy_match(p, "/srv/a", "xfs", 0, 0, NULL)->name, "both");
        ASSERT_STREQ(policy_match(p, "/srv/a", "ext4", 0, 0, NULL)->name, "all");
        ASSERT_STREQ(policy_match(p, "/srv/a", NULL, 0, 0, NULL)->name, "all");

        policy_free(TAKE_PTR(p));
        p = parse("[Rule only]\nPath=/x\n");
        ASSERT_TRUE(policy_match(p, "/y", "ext4", 0, 0, NULL) == NULL);
        ASSERT_TRUE(policy_match(p, NULL, "ext4", 0, 0, NULL) == NULL);
        ASSERT_TRUE(policy_match(NULL, "/x", "ext4", 0, 0, NULL) == NULL);
}

/* Issue 9 case 5: a rule that cannot be understood never widens to every mount. */
/* Whether a rule asks for a device class (context.c reads queue/rotational in a pass only then). */
TEST(uses_device_class) {
        _cleanup_(policy_freep)
                Policy *none = parse("[Sync]\nDeadlineSec=20s\n"),
                       *usb = parse("[Rule a]\nDevice=usb removable\nAction=skip\n"),
                       *rot = parse("[Rule a]\nDevice=usb\n[Rule b]\nDevice=rotational\nAction=skip\n");

        ASSERT_TRUE(!policy_uses_device_class(none, DEVICE_ROTATIONAL));
        ASSERT_TRUE(!policy_uses_device_class(usb, DEVICE_ROTATIONAL));
        ASSERT_TRUE(policy_uses_device_class(usb, DEVICE_USB));
        ASSERT_TRUE(policy_uses_device_class(rot, DEVICE_ROTATIONAL));
        ASSERT_TRUE(!policy_uses_device_class(NULL, DEVICE_ROTATIONAL));
}

TEST(rules_fail_closed) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_free_ char *text = NULL;

        /* The reported cases: a relative Path= and an unknown device class used to drop the key and
         * leave "Action=skip" for every mount. */
        p = parse("[Rule usb-sticks]\nPath=media/*\nAction=skip\n"
                  "[Rule usb2]\nDevice=usb-stick\nAction=skip\n");
        dump_warnings(p);
        ASSERT_WARNING(
                p, "t.conf:2: rule 'usb-sticks' disabled: invalid Path= pattern 'media/*' (must start with "
                   "'/' or '*')");
        ASSERT_WARNING(p, "t.conf:5: rule 'usb2' disabled: unknown device class 'usb-stick' in Device=");
        ASSERT_EQ(p->n_warnings, 2);
        ASSERT_TRUE(p->rules[0].disabled && p->rules[1].disabled);
        ASSERT_TRUE(policy_match(p, "/", "ext4", 0, 0, NULL) == NULL);
        ASSERT_TRUE(policy_match(p, "/media/stick", "vfat", DEVICE_USB | DEVICE_REMOVABLE, 0, NULL) == NULL);
        policy_free(TAKE_PTR(p));

        /* Unknown (misspelt) keys and lines that are no assignment disable the rule they are in;
         * outside rules they stay plain warnings. */
        p = parse("[Rule a]\nPaht=/media/*\nAction=skip\n"  /* 1-3 */
                  "[Rule b]\nPath /media/*\nAction=skip\n"  /* 4-6 */
                  "[Rule c]\nPa:th=/media/*\nAction=skip\n" /* 7-9 */
                  "[Sync]\nColour=blue\n");                 /* 10-11 */
        dump_warnings(p);
        ASSERT_WARNING(p, "t.conf:2: rule 'a' disabled: unknown key 'Paht'");
        ASSERT_WARNING(p, "t.conf:5: rule 'b' disabled: missing '=' in 'Path /media/*'");
        ASSERT_WARNING(p, "t.conf:8: rule 'c' disabled: invalid key name in 'Pa:th=/media/*'");
        ASSERT_WARNING(p, "t.conf:11: Unknown key 'Colour' in section [Sync], ignoring");
        ASSERT_EQ(p->n_warnings, 4);
        ASSERT_TRUE(policy_match(p, "/", "ext4", 0, 0, NULL) == NULL);
        ASSERT_TRUE(policy_match(p, "/media/x", "vfat", 0, 0, NULL) == NULL);
        policy_free(TAKE_PTR(p));

        /* Disabled for good: a later valid line, in the same file or a drop-in, does not bring the
         * rule back; a later rule still matches. */
        ASSERT_OK(policy_new(&p));
        text = strdup("[Rule m]\nPath=media/*\nAction=skip\n[Rule all]\nAction=sync\n");
        ASSERT_OK(policy_parse_text(p, "a.conf", text, strlen(text)));
        free(text);
        text = strdup("[Rule m]\nPath=/media/*\n");
        ASSERT_OK(policy_parse_text(p, "b.conf", text, strlen(text)));
        ASSERT_EQ(p->n_warnings, 1);
        ASSERT_TRUE(p->rules[0].disabled);
        ASSERT_STREQ(p->rules[0].o_disabled.file, "a.conf");
        ASSERT_STREQ(policy_match(p, "/media/x", "vfat", 0, 0, NULL)->name, "all");
        ASSERT_STREQ(policy_match(p, "/", "ext4", 0, 0, NULL)->name, "all");
        policy_free(TAKE_PTR(p));

        /* Invalid Action=: the rule still matches what it says, and syncs it. */
        p = parse("[Rule n]\nType=nfs4\nAction=skpi\n");
        ASSERT_WARNING(p,
                       "t.conf:3: Invalid Action= value 'skpi' in rule 'n' (expected sync|skip|auto), using "
                       "Action=sync");
        ASSERT_EQ(policy_match(p, "/mnt", "nfs4", DEVICE_NETWORK, 0, NULL)->action, RULE_ACTION_SYNC);
        ASSERT_TRUE(!p->rules[0].disabled);
        ASSERT_TRUE(policy_match(p, "/", "ext4", 0, 0, NULL) == NULL);
        policy_free(TAKE_PTR(p));

        /* An invalid MountTimeoutSec= in a rule keeps what it had (inherit [Sync]): no skip either way. */
        p = parse("[Rule t]\nType=nfs4\nMountTimeoutSec=soon\n");
        ASSERT_EQ(p->n_warnings, 1);
        ASSERT_TRUE(!p->rules[0].disabled);
        ASSERT_U64_EQ(policy_match(p, "/mnt", "nfs4", 0, 0, NULL)->mount_timeout, USEC_INFINITY);
        policy_free(TAKE_PTR(p));

        /* A rule written without match keys means every mount: understood, kept (the test suites
         * skip the machine's other mounts that way). */
        p = parse("[Rule rest]\nAction=skip\n");
        ASSERT_EQ(p->n_warnings, 0);
        ASSERT_EQ(policy_match(p, "/", "ext4", 0, 0, NULL)->action, RULE_ACTION_SKIP);
        policy_free(TAKE_PTR(p));

        /* cat-config says so, and its text keeps it disabled (a live "[Rule usb-sticks]" with the
         * bad key printed as "any" would skip every mount). */
        p = parse("[Rule usb-sticks]\nPath=media/*\nAction=skip\n");
        text = mfree(text);
        ASSERT_OK(policy_format(p, &text));
        ASSERT_TRUE(strstr(
                text, "# DISABLED: invalid Path= pattern 'media/*' (must start with '/' or '*') (t.conf:2). "
                      "It may match any mount, and no rule after it may skip one it may match.\n"
                      "[Rule usb-sticks]\n# # default (any)\n# Path=\n"));
        ASSERT_TRUE(strstr(text,
                           "\nDISABLED (not an assignment: this rule stays disabled when the text is read "
                           "back)\n"));
}

/* What a rule decides for a mount, for comparing two policies: the action of the rule returned (-1:
 * none), its timeout, and whether a rule that cannot be evaluated stood in the way. */
typedef struct Decision {
        int action;
        usec_t timeout;
        bool unsure;
} Decision;

static Decision decide(const Policy *p, const char *mp, const char *type, unsigned classes,
                       unsigned unknown) {
        const Rule *unsure, *r = policy_match(p, mp, type, classes, unknown, &unsure);

        return (Decision) { .action = r ? (int) r->action : -1,
                            .timeout = r ? r->mount_timeout : USEC_INFINITY,
                            .unsure = unsure != NULL };
}

static const struct {
        const char *mp, *type;
        unsigned classes, unknown;
} probe_mounts[] = {
        { "/", "ext4", 0, 0 },
        { "/mnt/keep", "xfs", 0, 0 },
        { "/mnt/x", "vfat", DEVICE_USB | DEVICE_REMOVABLE, 0 },
        { "/mnt/x", "vfat", 0, DEVICE_USB | DEVICE_REMOVABLE | DEVICE_ROTATIONAL },
        { "/mnt/y", "ext4", DEVICE_ROTATIONAL, DEVICE_REMOVABLE },
        { "/srv/nfs", "nfs4", DEVICE_NETWORK, 0 },
        { "/media/stick", "exfat", 0, 0 },
};

/* cat-config's text read back decides as the policy it was printed from, for every probe mount. */
static void assert_format_round_trip(const Policy *p) {
        _cleanup_(policy_freep) Policy *q = NULL;
        _cleanup_free_ char *text = NULL;

        ASSERT_OK(policy_format(p, &text));
        q = parse(text);
        for (size_t i = 0; i < ELEMENTSOF(probe_mounts); i++) {
                Decision a = decide(p, probe_mounts[i].mp, probe_mounts[i].type, probe_mounts[i].classes,
                                    probe_mounts[i].unknown),
                         b = decide(q, probe_mounts[i].mp, probe_mounts[i].type, probe_mounts[i].classes,
                                    probe_mounts[i].unknown);

                if (a.action != b.action || a.timeout != b.timeout || a.unsure != b.unsure) {
                        fprintf(stderr, "%s: %d/%" PRIu64 "/%d, read back %d/%" PRIu64 "/%d\n%s",
                                probe_mounts[i].mp, a.action, a.timeout, a.unsure, b.action, b.timeout,
                                b.unsure, text);
                        ASSERT_TRUE(false);
                }
        }
}

/* A rule that cannot be evaluated lets no later rule skip a mount it may match (review B, F1-F3, F7). */
TEST(rules_fail_closed_later_skip) {
        static const char v[] = "[Rule scratch]\nPath=/scratch\nAction=skip\n[Rule nfs]\nType=nfs4\n"
                                "[Rule rest]\nPath=/*\nAction=skip\n",
                          d[] = "[Rule scratch]\nAction: sync\n";
        _cleanup_(policy_freep) Policy *p = NULL;
        const Rule *unsure, *r;

        /* A disabled sync exception: the broader skip rule after it does not take its mounts. */
        p = parse("[Rule always]\nPath=mnt/keep\nAction=sync\n"        /* 1-3: disabled (relative) */
                  "[Rule nfs]\nType=nfs4\nMountTimeoutSec=30s\n"       /* 4-6 */
                  "[Rule rest]\nPath=/mnt/* /media/*\nAction=skip\n"); /* 7-9 */
        ASSERT_TRUE(p->rules[0].disabled);
        ASSERT_TRUE(policy_match(p, "/mnt/keep", "xfs", 0, 0, &unsure) == NULL);
        ASSERT_TRUE(unsure == &p->rules[0]);
        /* A later rule that does not skip still decides; no rule at all: the defaults. */
        r = policy_match(p, "/srv/nfs", "nfs4", DEVICE_NETWORK, 0, &unsure);
        ASSERT_TRUE(r && streq(r->name, "nfs") && !unsure);
        ASSERT_TRUE(policy_match(p, "/", "ext4", 0, 0, &unsure) == NULL && !unsure);
        assert_format_round_trip(p);
        policy_free(TAKE_PTR(p));

        /* A disabled rule whose action reads skip refuses later skips too: the line not understood
         * may have been the one that made it sync (review E, E1: a drop-in's "Action: sync"). A later
         * rule that does not skip still decides. */
        ASSERT_OK(policy_new(&p));
        ASSERT_OK(policy_parse_text(p, "10-vendor.conf", v, sizeof(v) - 1));
        ASSERT_OK(policy_parse_text(p, "50-admin.conf", d, sizeof(d) - 1));
        ASSERT_TRUE(p->rules[0].disabled && p->rules[0].action == RULE_ACTION_SKIP);
        ASSERT_TRUE(policy_match(p, "/scratch", "xfs", 0, 0, &unsure) == NULL);
        ASSERT_TRUE(unsure == &p->rules[0]);
        r = policy_match(p, "/srv/nfs", "nfs4", DEVICE_NETWORK, 0, &unsure);
        ASSERT_TRUE(r && streq(r->name, "nfs") && !unsure);
        assert_format_round_trip(p);
        policy_free(TAKE_PTR(p));

        /* A Device= rule on classes not read refuses later skips, but does not take the mounts of
         * a later rule that does not skip (review E, E4: its timeout is not theirs). */
        p = parse(
                "[Rule usb]\nDevice=usb\nMountTimeoutSec=1s\n[Rule home]\nPath=/home\nMountTimeoutSec=5min\n");
        r = policy_match(p, "/home", "ext4", 0, DEVICE_USB, &unsure);
        ASSERT_TRUE(r && streq(r->name, "home") && !unsure);
        policy_free(TAKE_PTR(p));

        /* A section named like a rule but ignored stands in first of all: it may have changed any
         * rule by its name (review E, E2), "[rule x]" or "[ Rule x]" alike. */
        p = parse("[Rule scratch]\nPath=/scratch\nAction=skip\n[ Rule scratch]\nAction=sync\n");
        ASSERT_EQ(p->n_rules, 2);
        ASSERT_STREQ(p->rules[0].name, "(t.conf:4)");
        ASSERT_TRUE(policy_match(p, "/scratch", "xfs", 0, 0, &unsure) == NULL && unsure == &p->rules[0]);
        assert_format_round_trip(p);
        policy_free(TAKE_PTR(p));

        /* An ignored section named like a rule stands as a disabled rule in its place; an ignored
         * section of another name does not. */
        p = parse("[Syncc]\nMaxParallel=2\n"                   /* 1-2 */
                  "[rule keep]\nPath=/mnt/keep\nAction=sync\n" /* 3-5 */
                  "[Rule rest]\nPath=/mnt/*\nAction=skip\n");  /* 6-8 */
        ASSERT_EQ(p->n_rules, 2);
        ASSERT_STREQ(p->rules[0].name, "(t.conf:3)");
        ASSERT_TRUE(policy_match(p, "/mnt/keep", "xfs", 0, 0, &unsure) == NULL);
        ASSERT_TRUE(unsure == &p->rules[0]);
        assert_format_round_trip(p);
        policy_free(TAKE_PTR(p));
        p = parse("[Syncc]\nMaxParallel=2\n[Rule rest]\nPath=/mnt/*\nAction=skip\n");
        ASSERT_EQ(p->n_rules, 1);
        ASSERT_EQ(policy_match(p, "/mnt/keep", "xfs", 0, 0, NULL)->action, RULE_ACTION_SKIP);
        policy_free(TAKE_PTR(p));

        /* Device= on a device whose classes could not be read: a sync rule decides as if it matched,
         * a skip rule is passed over; read classes decide as before. */
        p = parse("[Rule usb]\nDevice=usb\nAction=sync\nMountTimeoutSec=2s\n"
                  "[Rule rot-skip]\nDevice=rotational\nAction=skip\n"
                  "[Rule rest]\nPath=/mnt/*\nAction=skip\n");
        r = policy_match(p, "/mnt/x", "vfat", 0, DEVICE_USB | DEVICE_REMOVABLE | DEVICE_ROTATIONAL, &unsure);
        ASSERT_TRUE(r && streq(r->name, "usb") && unsure == r);
        r = policy_match(p, "/mnt/x", "vfat", DEVICE_USB, 0, &unsure);
        ASSERT_TRUE(r && streq(r->name, "usb") && !unsure);
        r = policy_match(p, "/mnt/x", "vfat", 0, 0, &unsure);
        ASSERT_TRUE(r && streq(r->name, "rest") && !unsure);
        ASSERT_TRUE(policy_match(p, "/srv", "ext4", 0, DEVICE_ROTATIONAL, &unsure) == NULL && !unsure);
        ASSERT_STREQ(policy_match(p, "/srv", "ext4", DEVICE_ROTATIONAL, 0, NULL)->name, "rot-skip");
        assert_format_round_trip(p);
        policy_free(TAKE_PTR(p));

        /* A file's name with a newline in it stays in its comment lines (review E, E5): read back,
         * cat-config's text has no live rule of it. */
        ASSERT_OK(policy_new(&p));
        ASSERT_OK(policy_parse_text(p, "x\n[Rule evil]\nAction=skip\n#.conf", d, sizeof(d) - 1));
        assert_format_round_trip(p);
        {
                _cleanup_free_ char *t = NULL;

                ASSERT_OK(policy_format(p, &t));
                ASSERT_TRUE(!strstr(t, "\n[Rule evil]"));
        }
        policy_free(TAKE_PTR(p));

        /* A file not read in full stands as a disabled rule where its rules would have been. */
        static const char a[] = "[Rule x]\nType=nfs4\n", b[] = "[Rule keep]\nPath=/mnt/keep\0\n",
                          c[] = "[Rule rest]\nPath=/mnt/*\nAction=skip\n";

        ASSERT_OK(policy_new(&p));
        ASSERT_OK(policy_parse_text(p, "a.conf", a, sizeof(a) - 1));
        ASSERT_OK(policy_parse_text(p, "b.conf", b, sizeof(b) - 1));
        ASSERT_OK(policy_parse_text(p, "c.conf", c, sizeof(c) - 1));
        ASSERT_EQ(p->n_rules, 3);
        ASSERT_STREQ(p->rules[0].name, "(b.conf)");
        ASSERT_TRUE(policy_match(p, "/mnt/keep", "xfs", 0, 0, &unsure) == NULL);
        ASSERT_TRUE(unsure == &p->rules[0]);
        ASSERT_EQ(p->sync_on_suspend, SYNC_ON_SUSPEND_KEEP);
        assert_format_round_trip(p);
}

TEST(bounds) {
        _cleanup_free_ char *text = NULL, *pats = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        size_t size = 0;
        FILE *f;

        /* POLICY_MAX_RULES + 1 rules */
        f = open_memstream(&text, &size);
        ASSERT_TRUE(f);
        for (unsigned i = 0; i <= POLICY_MAX_RULES; i++)
                fprintf(f, "[Rule r%u]\nAction=skip\n", i);
        ASSERT_TRUE(fclose(f) == 0);
        p = parse(text);
        ASSERT_EQ(p->n_rules, POLICY_MAX_RULES);
        ASSERT_EQ(p->n_warnings, 1);
        ASSERT_WARNING(p, "t.conf:513: Too many rules (max 256), ignoring");
        ASSERT_STREQ(p->rules[POLICY_MAX_RULES - 1].name, "r255");
        policy_free(TAKE_PTR(p));
        free(TAKE_PTR(text));

        /* 64 patterns are fine, 65 are not (one-letter patterns: a line holds at most 198 bytes) */
        for (unsigned n = 64; n <= 65; n++) {
                f = open_memstream(&pats, &size);
                for (unsigned i = 0; i < n; i++)
                        fprintf(f, " %c", 'a' + (int) (i % 26));
                ASSERT_TRUE(fclose(f) == 0);
                ASSERT_TRUE(asprintf(&text, "[Rule x]\nType=%s\n", pats) > 0);
                p = parse(text);
                ASSERT_EQ(p->n_warnings, n == 64 ? 0 : 1);
                ASSERT_TRUE((p->rules[0].types != NULL) == (n == 64));
                ASSERT_TRUE(p->rules[0].disabled == (n == 65));
                if (n == 65)
                        ASSERT_WARNING(p, "t.conf:2: rule 'x' disabled: too many patterns in Type= (max 64)");
                policy_free(TAKE_PTR(p));
                free(TAKE_PTR(text));
                free(TAKE_PTR(pats));
        }

        /* warnings are bounded */
        f = open_memstream(&text, &size);
        fputs("[Sync]\n", f);
        for (unsigned i = 0; i < 2 * POLICY_MAX_WARNINGS; i++)
                fputs("MaxParallel=0\n", f);
        ASSERT_TRUE(fclose(f) == 0);
        p = parse(text);
        ASSERT_EQ(p->n_warnings, POLICY_MAX_WARNINGS);
        ASSERT_STREQ(p->warnings[POLICY_MAX_WARNINGS - 1],
                     "t.conf:257: too many warnings, ignoring further ones");
        ASSERT_TRUE(p->warnings[POLICY_MAX_WARNINGS] == NULL);
        ASSERT_EQ(p->max_parallel, 16);
}

TEST(format) {
        _cleanup_close_ int fd = open_root("dropins");
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL, *d = NULL;
        _cleanup_free_ char *s = NULL, *t = NULL, *u = NULL;

        ASSERT_OK(policy_load(fd, NULL, &p));
        ASSERT_OK(policy_format(p, &s));
        fputs(s, stderr);
        ASSERT_TRUE(strstr(
                s,
                "# Files read, in order:\n#   /etc/suspend-sync.conf\n#   /run/suspend-sync.conf.d/05-early.conf\n"));
        ASSERT_TRUE(strstr(s, "# from /usr/lib/suspend-sync.conf.d/10-vendor.conf:2\nMaxParallel=3\n"));
        ASSERT_TRUE(strstr(s, "# from /run/suspend-sync.conf.d/20-local.conf:2\nMountTimeoutSec=7s\n"));
        ASSERT_TRUE(strstr(s, "# from /etc/suspend-sync.conf:4\nDeadlineSec=20s\n"));
        ASSERT_TRUE(strstr(s, "# default\nSkipClean=no\n"));
        ASSERT_TRUE(strstr(s, "# from /etc/suspend-sync.conf.d/60-reset.conf:3\nSyncOnSuspend=auto\n"));
        ASSERT_TRUE(strstr(s, "# from /usr/lib/suspend-sync.conf.d/10-vendor.conf:4\n[Rule usb]\n"));
        ASSERT_TRUE(strstr(s, "# from /etc/suspend-sync.conf.d/70-rule.conf:3\nAction=skip\n"));
        ASSERT_TRUE(strstr(s, "Device=usb\n"));
        ASSERT_TRUE(strstr(s, "# default (any)\nPath=\n"));
        ASSERT_TRUE(strstr(s, "# default ([Sync] MountTimeoutSec=)\nMountTimeoutSec=\n"));
        /* Negative control: hidden and masked files never show up. */
        ASSERT_TRUE(!strstr(s, "/usr/local/lib/suspend-sync.conf.d/20-local.conf"));
        ASSERT_TRUE(!strstr(s, "40-masked"));
        ASSERT_TRUE(!strstr(s, "/usr/lib/suspend-sync.conf.d/30-admin.conf"));

        /* The output is itself a valid configuration with the same values. */
        q = parse(s);
        dump_warnings(q);
        ASSERT_EQ(q->n_warnings, 0);
        ASSERT_OK(policy_format(q, &t));
        ASSERT_EQ(q->max_parallel, p->max_parallel);
        ASSERT_U64_EQ(q->mount_timeout, p->mount_timeout);
        ASSERT_U64_EQ(q->deadline, p->deadline);
        ASSERT_EQ(q->on_timeout, p->on_timeout);
        ASSERT_EQ(q->n_rules, p->n_rules);
        ASSERT_EQ(q->rules[0].device_classes, p->rules[0].device_classes);
        ASSERT_EQ(q->rules[1].action, p->rules[1].action);
        ASSERT_STREQ(q->rules[1].paths[0], "/home");
        ASSERT_TRUE(q->rules[0].paths == NULL);

        /* Long file names make long "# from" lines: comments have no length limit. */
        policy_free(TAKE_PTR(q));
        free(TAKE_PTR(t));
        {
                _cleanup_free_ char *name = make_line("/etc/suspend-sync.conf.d/", 250, ".conf");

                ASSERT_OK(policy_new(&q));
                ASSERT_OK(policy_parse_text(q, name, "[Sync]\nMaxParallel=2\n", 21));
                ASSERT_OK(policy_format(q, &t));
                policy_free(TAKE_PTR(q));
                q = parse(t);
                ASSERT_EQ(q->n_warnings, 0);
                ASSERT_EQ(q->max_parallel, 2);
        }

        ASSERT_OK(policy_new(&d));
        ASSERT_OK(policy_format(d, &u));
        ASSERT_TRUE(strstr(u, "# No configuration files read: built-in defaults.\n"));
        ASSERT_TRUE(strstr(
                u,
                "# default\nMaxParallel=16\n# default\nMountTimeoutSec=10s\n# default\nDeadlineSec=30s\n"));
        ASSERT_TRUE(!strstr(u, "# from"));
}

/* The shipped conf/suspend-sync.conf lists every key commented out with its default: parsing it
 * as is, and with every "#Key=" line uncommented, must give the defaults without warnings. */
/* Issue 9, case 3: SkipClean= outlived the only clean rule. Old configurations keep parsing without a
 * warning; cat-config says that yes has no effect (the plan tests show that it changes nothing). */
TEST(skip_clean_without_effect) {
        static const char text[] = "[Sync]\nSkipClean=yes\n";
        _cleanup_(policy_freep) Policy *p = NULL, *d = NULL;
        _cleanup_free_ char *s = NULL, *t = NULL;

        p = parse(text);
        ASSERT_EQ(p->n_warnings, 0);
        ASSERT_TRUE(p->skip_clean);
        ASSERT_EQ(p->o_skip_clean.line, 2);
        ASSERT_OK(policy_format(p, &s));
        ASSERT_TRUE(strstr(s, ":2\n# " POLICY_SKIP_CLEAN_NO_EFFECT "\nSkipClean=yes\n"));
        /* The default (no) says nothing of the kind. */
        ASSERT_OK(policy_new(&d));
        ASSERT_OK(policy_format(d, &t));
        ASSERT_TRUE(strstr(t, "# default\nSkipClean=no\n"));
        ASSERT_TRUE(!strstr(t, "no effect"));
}

TEST(shipped_config) {
        _cleanup_free_ char *text = NULL, *un = NULL;
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;
        _cleanup_close_ int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        size_t size, keys = 0;
        char *o;

        if (read_full_file_at(root, SOURCE_CONF, 1U << 20, &text, &size) < 0) {
                test_skip("%s missing", SOURCE_CONF);
                return;
        }
        p = parse(text);
        dump_warnings(p);
        ASSERT_EQ(p->n_warnings, 0);
        assert_defaults(p);
        ASSERT_EQ(p->n_rules, 0);

        un = malloc(size + 1);
        ASSERT_TRUE(un);
        o = un;
        for (const char *l = text; *l;) {
                const char *nl = strchrnul(l, '\n');

                /* "#Key=" (no space after '#') is a commented-out setting, "#[Section]" a header */
                if (l[0] == '#' && (l[1] == '[' || (l[1] >= 'A' && l[1] <= 'Z'))) {
                        l++;
                        keys++;
                }
                memcpy(o, l, nl - l);
                o += nl - l;
                if (*nl)
                        *o++ = '\n';
                l = *nl ? nl + 1 : nl;
        }
        *o = 0;
        q = parse(un);
        dump_warnings(q);
        ASSERT_EQ(q->n_warnings, 0);
        assert_defaults(q);
        /* Every [Sync] and [Kernel] key, once (6 today), counted from the key table so that a new key
         * needs no edit here. */
#define COUNT_ROW(...) +1
        ASSERT_EQ(keys, 0 POLICY_KEYS(COUNT_ROW));
        ASSERT_TRUE(keys >= 6);
        ASSERT_TRUE(q->o_max_parallel.file && q->o_deadline.file && q->o_sync_on_suspend.file &&
                    q->o_skip_clean.file && q->o_on_timeout.file && q->o_mount_timeout.file);
#define ORIGIN_SET(section, key, ctype, field, origin, ...) ASSERT_TRUE(q->origin.file);
        POLICY_KEYS(ORIGIN_SET)
#undef ORIGIN_SET
#undef COUNT_ROW
}

int main(void) {
        RUN(defaults_and_tables);
        RUN(every_key);
        RUN(bad_values_fixture);
        RUN(syntax_corners);
        RUN(long_lines);
        RUN(nul_byte);
        RUN(did_you_mean);
        RUN(empty_value_resets);
        RUN(find_files_and_dropins);
        RUN(main_file_order);
        RUN(config_path_only);
        RUN(missing_and_unreadable);
        RUN(unread_keeps_the_knob);
        RUN(truncated_dropins_block_skip);
        RUN(truncated_dropins_named);
        RUN(truncated_listing_blocks_skip);
        RUN(unstatable_entries_block_skip);
        RUN(dangling_dropin_dir_blocks_skip);
        RUN(main_file_masked);
        RUN(mask_through_any_link_to_dev_null);
        RUN(vanished_dropin_blocks_skip);
        RUN(unlistable_dropin_dir_keeps_other_files);
        RUN(unread_stand_in_origin);
        RUN(layout_notices);
        RUN(sync_on_suspend_boolean_hint);
        RUN(timespan_values_strict);
        RUN(matching);
        RUN(rules_fail_closed);
        RUN(rules_fail_closed_later_skip);
        RUN(uses_device_class);
        RUN(bounds);
        RUN(unread_dropin_rule_table_full);
        RUN(format);
        RUN(skip_clean_without_effect);
        RUN(shipped_config);
        return test_result();
}
