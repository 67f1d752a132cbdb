/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The key table (POLICY_KEYS and RULE_KEYS in policy.h) against its documentation: every key of
 * the table is known to the parser, is described in man/suspend-sync.conf.5.scd under its
 * section's heading ("*Key=*" on a line of its own) and appears in conf/suspend-sync.conf under
 * its section ("#Key=" for settings, "# Key=" in the example rule), and in docs/CONFIG.md, the
 * reference README points to ("| `Key=` | default | ... |" under "## [Section]"); every key
 * documented in any of them is in the table; and the default each documents for a key of [Sync],
 * [Kernel] and [Metrics] ("Default: _X_" in the man page, CONFIG.md's second column) is the one
 * policy_format() prints for a configuration that sets nothing (review X, X3: CONFIG.md lacked a key
 * nobody noticed). SOURCE_ROOT (meson) is the source tree.
 */

#include <ctype.h>
#include <fcntl.h>
#include <strings.h>
#include <unistd.h>

#include "policy.h"
#include "shared/fileio.h"
#include "shared/string-util.h"
#include "tests.h"

#define MAN_PAGE SOURCE_ROOT "/man/suspend-sync.conf.5.scd"
#define SHIPPED_CONF SOURCE_ROOT "/conf/suspend-sync.conf"
#define CONFIG_MD SOURCE_ROOT "/docs/CONFIG.md"
#define MAX_KEYS 64

typedef struct Key {
        char section[32];
        char name[64];
        char def[128]; /* the default documented for it, "" when none was found */
} Key;

typedef struct Keys {
        Key k[MAX_KEYS];
        size_t n;
} Keys;

#define TABLE_ROW(section, key, ...) { #section, #key },
static const Key table[] = { POLICY_KEYS(TABLE_ROW) RULE_KEYS(TABLE_ROW) };

static bool has(const Keys *l, const char *section, const char *name) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->k[i].section, section) && streq(l->k[i].name, name))
                        return true;
        return false;
}

static bool in_table(const char *section, const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(table[i].section, section) && streq(table[i].name, name))
                        return true;
        return false;
}

static Key *add(Keys *l, const char *section, const char *name, size_t len) {
        Key *k = &l->k[l->n];

        ASSERT_TRUE(l->n < MAX_KEYS && len < sizeof(l->k[0].name));
        *k = (Key) {};
        snprintf(k->section, sizeof k->section, "%s", section);
        memcpy(k->name, name, len);
        k->name[len] = 0;
        l->n++;
        return k;
}

static void def_set(Key *k, const char *v, size_t len) {
        ASSERT_TRUE(len < sizeof k->def);
        memcpy(k->def, v, len);
        k->def[len] = 0;
}

/* "[Word ...]" at p: the table's spelling of the section Word (matched without case: the man page
 * writes [SYNC]), or Word itself as written when the table has no such section. */
static void section_of(const char *p, char *buf, size_t size) {
        size_t len = strcspn(p + 1, " ]");

        snprintf(buf, size, "%.*s", (int) len, p + 1);
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (strlen(table[i].section) == len && strncasecmp(table[i].section, p + 1, len) == 0)
                        ASSERT_TRUE((size_t) snprintf(buf, size, "%s", table[i].section) < size);
}

static char *read_source(const char *path) {
        _cleanup_close_ int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char *text = NULL;
        size_t size;

        ASSERT_TRUE(root >= 0);
        if (read_full_file_at(root, path, 1U << 20, &text, &size) < 0) {
                fprintf(stderr, "%s: cannot read it\n", path);
                ASSERT_TRUE(false);
        }
        return text;
}

/* Man page: a heading "# [SECTION] ..." opens a section, any other heading closes it; a key is
 * "*Key=*" alone on a line; its default the first "Default: _X_" (perhaps across a line break)
 * before the next key or heading. */
static void man_keys(const char *text, Keys *l) {
        char section[32] = "";
        Key *key = NULL;

        for (const char *p = text; *p;) {
                const char *nl = strchrnul(p, '\n'), *d;
                size_t n = nl - p;

                if (p[0] == '#' && p[1] == ' ') {
                        section[0] = 0;
                        key = NULL;
                        if (p[2] == '[')
                                section_of(p + 2, section, sizeof section);
                } else if (n > 3 && p[0] == '*' && p[n - 2] == '=' && p[n - 1] == '*' && section[0]) {
                        key = add(l, section, p + 1, n - 3);
                } else if (key && !key->def[0] && (d = strstr(p, "Default:")) && d < nl) {
                        d += strlen("Default:");
                        d += strspn(d, " \t\n");
                        if (*d == '_')
                                def_set(key, d + 1, strcspn(d + 1, "_\n"));
                }
                p = *nl ? nl + 1 : nl;
        }
}

/* CONFIG.md: a heading "## [Section ...]" opens a section, any other "## " heading closes it; a key
 * is a table row "| `Key=` | `default` | ... |" (the default without its backquotes). */
static void config_md_keys(const char *text, Keys *l) {
        char section[32] = "";

        for (const char *p = text; *p;) {
                const char *nl = strchrnul(p, '\n');

                if (startswith(p, "## ")) {
                        section[0] = 0;
                        if (p[3] == '[')
                                section_of(p + 3, section, sizeof section);
                } else if (section[0] && startswith(p, "| `")) {
                        const char *name = p + 3, *eq = strchr(name, '=');

                        if (eq && eq < nl && startswith(eq, "=` | ")) {
                                Key *k = add(l, section, name, eq - name);
                                const char *v = eq + strlen("=` | ");
                                size_t len = strcspn(v, "|\n");

                                while (len > 0 && v[len - 1] == ' ')
                                        len--;
                                if (len >= 2 && v[0] == '`' && v[len - 1] == '`')
                                        def_set(k, v + 1, len - 2);
                                else
                                        def_set(k, v, len);
                        }
                }
                p = *nl ? nl + 1 : nl;
        }
}

/* What policy_format() prints for a configuration that sets nothing: "[Section]", "Key=value". */
static void format_defaults(Keys *l) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_free_ char *text = NULL;
        char section[32] = "";

        ASSERT_OK(policy_new(&p));
        ASSERT_OK(policy_format(p, &text));
        for (const char *q = text; *q;) {
                const char *nl = strchrnul(q, '\n'), *eq = strchr(q, '=');

                if (*q == '[')
                        section_of(q, section, sizeof section);
                else if (isupper((unsigned char) *q) && eq && eq < nl && section[0])
                        def_set(add(l, section, q, eq - q), eq + 1, nl - eq - 1);
                q = *nl ? nl + 1 : nl;
        }
}

/* Every key of doc outside [Rule] documents the default defaults has, and no other. */
static size_t check_defaults(const char *what, const Keys *doc, const Keys *defaults) {
        size_t errors = 0;

        for (size_t i = 0; i < doc->n; i++) {
                const Key *k = &doc->k[i];
                const char *want = NULL;

                if (streq(k->section, "Rule"))
                        continue;
                for (size_t j = 0; j < defaults->n; j++)
                        if (streq(defaults->k[j].section, k->section) && streq(defaults->k[j].name, k->name))
                                want = defaults->k[j].def;
                if (!want || !streq(k->def, want)) {
                        fprintf(stderr, "%s: [%s] %s= documents the default '%s', the code's is '%s'\n", what,
                                k->section, k->name, k->def, want ?: "(none)");
                        errors++;
                }
        }
        fprintf(stderr, "   %s: defaults, %zu problems\n", what, errors);
        return errors;
}

/* Shipped configuration: "[Section]" (perhaps commented out, "# [Rule NAME]") opens a section; a key
 * is a commented-out assignment "#Key=" or "# Key=" starting with a capital letter. */
static void conf_keys(const char *text, Keys *l) {
        char section[32] = "";

        for (const char *p = text; *p;) {
                const char *nl = strchrnul(p, '\n'), *q = p;
                size_t k = 0;

                if (*q == '#')
                        q += 1 + (q[1] == ' ');
                if (*q == '[')
                        section_of(q, section, sizeof section);
                else if (isupper((unsigned char) *q)) {
                        while (isalnum((unsigned char) q[k]))
                                k++;
                        if (q[k] == '=' && section[0])
                                add(l, section, q, k);
                }
                p = *nl ? nl + 1 : nl;
        }
}

static size_t check(const char *what, const Keys *doc) {
        size_t errors = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (!has(doc, table[i].section, table[i].name)) {
                        fprintf(stderr, "%s: key [%s] %s= of the table is missing\n", what, table[i].section,
                                table[i].name);
                        errors++;
                }
        for (size_t i = 0; i < doc->n; i++)
                if (!in_table(doc->k[i].section, doc->k[i].name)) {
                        fprintf(stderr, "%s: documents [%s] %s=, which is not in the table\n", what,
                                doc->k[i].section, doc->k[i].name);
                        errors++;
                }
        fprintf(stderr, "   %s: %zu keys, %zu problems\n", what, doc->n, errors);
        return errors;
}

/* Every row parses: an empty value (the default) of each key in its section, without a warning. */
TEST(table_parses) {
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(policy_freep) Policy *p = NULL;
                _cleanup_free_ char *text = NULL;

                ASSERT_TRUE(asprintf(&text, "[%s%s]\n%s=\n", table[i].section,
                                     streq(table[i].section, "Rule") ? " t" : "", table[i].name) > 0);
                ASSERT_OK(policy_new(&p));
                ASSERT_OK(policy_parse_text(p, "t.conf", text, strlen(text)));
                if (p->n_warnings > 0)
                        fprintf(stderr, "%s\n", p->warnings[0]);
                ASSERT_EQ(p->n_warnings, 0);
        }
}

TEST(man_page) {
        _cleanup_free_ char *text = read_source(MAN_PAGE);
        Keys doc = {}, defaults = {};

        man_keys(text, &doc);
        format_defaults(&defaults);
        ASSERT_EQ(check("man/suspend-sync.conf.5.scd", &doc), 0);
        ASSERT_EQ(check_defaults("man/suspend-sync.conf.5.scd", &doc, &defaults), 0);
}

TEST(config_md) {
        _cleanup_free_ char *text = read_source(CONFIG_MD);
        Keys doc = {}, defaults = {};

        config_md_keys(text, &doc);
        format_defaults(&defaults);
        ASSERT_EQ(check("docs/CONFIG.md", &doc), 0);
        ASSERT_EQ(check_defaults("docs/CONFIG.md", &doc, &defaults), 0);
}

TEST(shipped_conf) {
        _cleanup_free_ char *text = read_source(SHIPPED_CONF);
        Keys doc = {};

        conf_keys(text, &doc);
        ASSERT_EQ(check("conf/suspend-sync.conf", &doc), 0);
}

/* The checkers themselves: a key missing, one too many, a section unknown to the table. */
TEST(checkers_can_fail) {
        Keys man = {}, conf = {};

        man_keys("# [SYNC] SECTION OPTIONS\n\n*MaxParallel=*\n\ttext\n*Colour=*\n# [FOO] SECTION\n*Bar=*\n"
                 "# EXAMPLES\n*Baz=*\n",
                 &man);
        ASSERT_EQ(man.n, 3);
        ASSERT_TRUE(has(&man, "Sync", "MaxParallel") && has(&man, "Sync", "Colour") &&
                    has(&man, "FOO", "Bar"));
        ASSERT_EQ(check("(negative control)", &man), ELEMENTSOF(table) - 1 + 2);

        conf_keys(
                "[Sync]\n#MaxParallel=16\n# Prose=not a key? it is\n# lower=no\n#[Kernel]\n#SyncOnSuspend=auto\n"
                "# [Rule x]\n# Path=/a\n",
                &conf);
        ASSERT_EQ(conf.n, 4);
        ASSERT_TRUE(has(&conf, "Kernel", "SyncOnSuspend") && has(&conf, "Rule", "Path"));
        ASSERT_TRUE(!in_table("Sync", "Prose"));
}

/* The default checks: a wrong default, one not documented, a row of an unknown section. */
TEST(default_checkers_can_fail) {
        Keys man = {}, md = {}, defaults = {};

        format_defaults(&defaults);
        ASSERT_TRUE(defaults.n >= 10);
        man_keys("# [SYNC] SECTION OPTIONS\n\n*MaxParallel=*\n\tworkers. Default: _16_.\n*DeadlineSec=*\n"
                 "\ttext. Default:\n\t_20s_.\n*OnTimeout=*\n\tno default here.\n# [RULE NAME] SECTIONS\n"
                 "*Action=*\n\tDefault: _auto_.\n",
                 &man);
        ASSERT_EQ(man.n, 4);
        ASSERT_STREQ(man.k[0].def, "16");
        ASSERT_STREQ(man.k[1].def, "20s");
        ASSERT_EQ(check_defaults("(negative control)", &man, &defaults), 2); /* 20s, none */

        config_md_keys(
                "## [Sync]\n\n| Key | Default | Meaning |\n|---|---|---|\n| `MaxParallel=` | `16` | x |\n"
                "| `MountTimeoutSec=` | `9s` | y |\n## [Kernel]\n| `KeepCheapSync=` | `yes` | z |\n"
                "## Examples\n| `Colour=` | `red` | not a key |\n",
                &md);
        ASSERT_EQ(md.n, 3);
        ASSERT_TRUE(has(&md, "Kernel", "KeepCheapSync") && !has(&md, "Sync", "Colour"));
        ASSERT_EQ(check_defaults("(negative control)", &md, &defaults), 1); /* 9s */
        ASSERT_EQ(check("(negative control)", &md), ELEMENTSOF(table) - 3);
}

int main(void) {
        RUN(table_parses);
        RUN(man_page);
        RUN(shipped_conf);
        RUN(config_md);
        RUN(checkers_can_fail);
        RUN(default_checkers_can_fail);
        return 0;
}
