/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shared/conf-files: systemd's drop-in semantics on the config fixture trees (the same order as
 * "systemd-analyze cat-config", see integration/cat-config.sh) and on a tree made here for the
 * bounds and masking by a /dev/null device node.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shared/conf-files.h"
#include "shared/macro.h"
#include "shared/strv.h"
#include "tests.h"
#include "wrap-readdir.h"

static const char *const dirs[] = { "/etc", "/run", "/usr/local/lib", "/usr/lib", NULL };

static int open_root(const char *scenario) {
        char path[4096];
        int fd;

        snprintf(path, sizeof(path), "%s/config/%s", FIXTURES_DIR, scenario);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        return fd;
}

static void assert_list(char **l, const char *const *expected, size_t n) {
        size_t i = 0;

        for (; l[i]; i++) {
                fprintf(stderr, "   file: %s\n", l[i]);
                ASSERT_TRUE(i < n);
                ASSERT_STREQ(l[i], expected[i]);
        }
        ASSERT_EQ(i, n);
}

/* conf_files_list() where no issue is expected: the files and whether they were truncated. */
static int list(int fd, const char *const *d, const char *name, size_t max, ConfFilesProgress progress,
                void *userdata, char ***ret, bool *ret_truncated) {
        _cleanup_(conf_files_done) ConfFiles c = {};
        int r;

        r = conf_files_list(fd, d, name, max, progress, userdata, &c);
        if (r < 0)
                return r;
        for (size_t i = 0; i < c.n_issues; i++)
                fprintf(stderr, "   issue %d: %s\n", (int) c.issues[i].kind, c.issues[i].path);
        ASSERT_EQ(c.n_issues, 0);
        ASSERT_EQ(c.n_files, strv_length(c.files));
        *ret = TAKE_PTR(c.files);
        if (ret_truncated)
                *ret_truncated = c.truncated;
        return 0;
}

static void record(const char *path, void *userdata) {
        char ***seen = userdata;
        size_t n = strv_length(*seen);

        ASSERT_OK(strv_extend(seen, &n, path));
}

TEST(dropins) {
        static const char *const expected[] = {
                "/etc/suspend-sync.conf", /* hides /usr/lib/suspend-sync.conf */
                "/run/suspend-sync.conf.d/05-early.conf", "/usr/lib/suspend-sync.conf.d/10-vendor.conf",
                "/run/suspend-sync.conf.d/20-local.conf", /* hides /usr/local/lib's */
                "/etc/suspend-sync.conf.d/30-admin.conf", /* hides /usr/lib's */
                /* 40-masked.conf: /etc's is a symlink to /dev/null, /usr/lib's is not read */
                "/usr/lib/suspend-sync.conf.d/50-kernel.conf", "/etc/suspend-sync.conf.d/60-reset.conf",
                "/etc/suspend-sync.conf.d/70-rule.conf",
                /* not: .hidden.conf, not-a-dropin.txt */
        };
        static const char *const looked_at[] = {
                "/etc/suspend-sync.conf",
                "/etc/suspend-sync.conf.d",
                "/etc/suspend-sync.conf.d/40-masked.conf", /* a symlink: followed, named */
                "/run/suspend-sync.conf.d",
                "/usr/local/lib/suspend-sync.conf.d",
                "/usr/lib/suspend-sync.conf.d",
        };
        _cleanup_close_ int fd = open_root("dropins");
        _cleanup_strv_free_ char **l = NULL, **seen = NULL;
        bool truncated = true;

        ASSERT_OK(list(fd, dirs, "suspend-sync.conf", 256, record, &seen, &l, &truncated));
        assert_list(l, expected, ELEMENTSOF(expected));
        ASSERT_TRUE(!truncated);
        /* Progress: each main file candidate until one exists, then each drop-in directory and each
         * symlink in it (followed elsewhere, maybe onto a filesystem that hangs). */
        assert_list(seen, looked_at, ELEMENTSOF(looked_at));
        l = strv_free(l);

        /* Bounded: the main file counts. */
        ASSERT_OK(list(fd, dirs, "suspend-sync.conf", 3, NULL, NULL, &l, &truncated));
        assert_list(l, expected, 3);
        ASSERT_TRUE(truncated);
        l = strv_free(l);
        /* ... and the first file left out is named (review S, L5); none when all are listed. */
        {
                _cleanup_(conf_files_done) ConfFiles c = {}, all = {};

                ASSERT_OK(conf_files_list(fd, dirs, "suspend-sync.conf", 3, NULL, NULL, &c));
                ASSERT_TRUE(c.truncated);
                ASSERT_STREQ(c.left_out, expected[3]);
                ASSERT_OK(conf_files_list(fd, dirs, "suspend-sync.conf", ELEMENTSOF(expected), NULL, NULL,
                                          &all));
                ASSERT_TRUE(!all.truncated && all.left_out == NULL);
        }

        /* Another name: nothing there, an empty list. */
        ASSERT_OK(list(fd, dirs, "other.conf", 256, NULL, NULL, &l, NULL));
        ASSERT_TRUE(l && !l[0]);
}

TEST(main_file_order) {
        _cleanup_close_ int a = open_root("mainorder"), b = open_root("mainorder-usr"),
                            e = open_root("empty");
        _cleanup_strv_free_ char **l = NULL, **m = NULL, **n = NULL;

        ASSERT_OK(list(a, dirs, "suspend-sync.conf", 256, NULL, NULL, &l, NULL));
        assert_list(l, (const char *const[]) { "/run/suspend-sync.conf" }, 1);
        ASSERT_OK(list(b, dirs, "suspend-sync.conf", 256, NULL, NULL, &m, NULL));
        assert_list(m, (const char *const[]) { "/usr/local/lib/suspend-sync.conf" }, 1);
        ASSERT_OK(list(e, dirs, "suspend-sync.conf", 256, NULL, NULL, &n, NULL));
        ASSERT_TRUE(n && !n[0]);
}

/* A tree made here: /dev/null itself (a device node, when we may make one) masks like a symlink; a
 * symlink to a drop-in elsewhere is followed, and named in the progress. */
TEST(masked_by_device_node) {
        char tmp[] = "/tmp/test-conf-files-XXXXXX";
        _cleanup_strv_free_ char **l = NULL, **seen = NULL;
        _cleanup_close_ int fd = -EBADF;
        bool node;

        ASSERT_TRUE(test_mkdtemp(tmp));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mkdirat(fd, "etc", 0755));
        ASSERT_OK(mkdirat(fd, "etc/x.d", 0755));
        ASSERT_OK(mkdirat(fd, "run", 0755));
        ASSERT_OK(mkdirat(fd, "run/x.d", 0755));
        close(openat(fd, "run/x.d/a.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(openat(fd, "run/x.d/b.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(openat(fd, "c.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        ASSERT_OK(symlinkat("../../c.conf", fd, "run/x.d/c.conf"));
        node = mknodat(fd, "etc/x.d/a.conf", S_IFCHR | 0666, makedev(1, 3)) >= 0;
        if (!node)
                fprintf(stderr, "   cannot make a device node (%m): masking by a node not tested\n");

        ASSERT_OK(list(fd, (const char *const[]) { "/etc", "/run", NULL }, "x", 16, record, &seen, &l, NULL));
        if (node)
                assert_list(l, (const char *const[]) { "/run/x.d/b.conf", "/run/x.d/c.conf" }, 2);
        else
                assert_list(l,
                            (const char *const[]) { "/run/x.d/a.conf", "/run/x.d/b.conf", "/run/x.d/c.conf" },
                            3);
        /* The directories, and the one symlink (a node or a file of the directory is not named). */
        assert_list(seen,
                    (const char *const[]) { "/etc/x", "/run/x", "/etc/x.d", "/run/x.d", "/run/x.d/c.conf" },
                    5);

        (void) unlinkat(fd, "etc/x.d/a.conf", 0);
        (void) unlinkat(fd, "run/x.d/a.conf", 0);
        (void) unlinkat(fd, "run/x.d/b.conf", 0);
        (void) unlinkat(fd, "run/x.d/c.conf", 0);
        (void) unlinkat(fd, "c.conf", 0);
        (void) unlinkat(fd, "etc/x.d", AT_REMOVEDIR);
        (void) unlinkat(fd, "run/x.d", AT_REMOVEDIR);
        (void) unlinkat(fd, "etc", AT_REMOVEDIR);
        (void) unlinkat(fd, "run", AT_REMOVEDIR);
        ASSERT_OK(rmdir(tmp));
}

/* Review Q: what is there but cannot be looked at is listed (H2: its read fails and says so, and it
 * hides the later ones of its name); a drop-in directory that cannot be listed is an issue and the
 * others still count (M1); a directory's name that is no directory and a symbolic link to nothing
 * are notices, and change nothing (L3: as systemd, a dangling link masks nothing). */
TEST(issues) {
        static const char *const d3[] = { "/etc", "/run", "/usr/lib", NULL };
        char tmp[] = "/tmp/test-conf-files-issues-XXXXXX";
        _cleanup_(conf_files_done) ConfFiles c = {};
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(test_mkdtemp(tmp));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mkdirat(fd, "etc", 0755));
        ASSERT_OK(mkdirat(fd, "etc/x.d", 0755));
        ASSERT_OK(mkdirat(fd, "usr", 0755));
        ASSERT_OK(mkdirat(fd, "usr/lib", 0755));
        ASSERT_OK(mkdirat(fd, "usr/lib/x.d", 0755));
        close(openat(fd, "usr/lib/x", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(openat(fd, "usr/lib/x.d/a.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(openat(fd, "usr/lib/x.d/b.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(openat(fd, "usr/lib/x.d/c.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        /* /etc: a loop (there, not to be looked at), a link to nothing over /usr/lib's, one alone */
        ASSERT_OK(symlinkat("a.conf", fd, "etc/x.d/a.conf"));
        ASSERT_OK(symlinkat("missing.conf", fd, "etc/x.d/b.conf"));
        ASSERT_OK(symlinkat("missing.conf", fd, "etc/x.d/d.conf"));
        /* /run: a file where the directory would be */
        ASSERT_OK(mkdirat(fd, "run", 0755));
        close(openat(fd, "run/x.d", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        /* the main file: /etc's loops, hiding /usr/lib's */
        ASSERT_OK(symlinkat("x", fd, "etc/x"));

        ASSERT_OK(conf_files_list(fd, d3, "x", 16, NULL, NULL, &c));
        assert_list(c.files,
                    (const char *const[]) { "/etc/x", "/etc/x.d/a.conf", "/usr/lib/x.d/b.conf",
                                            "/usr/lib/x.d/c.conf" },
                    4);
        ASSERT_TRUE(!c.truncated);
        ASSERT_EQ(c.n_issues, 3);
        ASSERT_EQ(c.issues[0].kind, CONF_FILES_NOT_DIRECTORY);
        ASSERT_STREQ(c.issues[0].path, "/run/x.d");
        ASSERT_TRUE(c.issues[0].other == NULL); /* the name itself is the file */
        ASSERT_EQ(c.issues[1].kind, CONF_FILES_DANGLING);
        ASSERT_STREQ(c.issues[1].path, "/etc/x.d/b.conf");
        ASSERT_STREQ(c.issues[1].other, "/usr/lib/x.d/b.conf");
        ASSERT_EQ(c.issues[2].kind, CONF_FILES_DANGLING);
        ASSERT_STREQ(c.issues[2].path, "/etc/x.d/d.conf");
        ASSERT_TRUE(c.issues[2].other == NULL);
        conf_files_done(&c);

        /* The main file: a link to nothing names the one that applies instead. /usr/lib's drop-in
         * directory that loops: an issue with its error, the others still listed. */
        ASSERT_OK(unlinkat(fd, "etc/x", 0));
        ASSERT_OK(symlinkat("missing", fd, "etc/x"));
        ASSERT_OK(unlinkat(fd, "run/x.d", 0));
        ASSERT_OK(symlinkat("x.d", fd, "run/x.d"));
        ASSERT_OK(conf_files_list(fd, d3, "x", 16, NULL, NULL, &c));
        assert_list(c.files,
                    (const char *const[]) { "/usr/lib/x", "/etc/x.d/a.conf", "/usr/lib/x.d/b.conf",
                                            "/usr/lib/x.d/c.conf" },
                    4);
        ASSERT_EQ(c.n_issues, 4);
        ASSERT_EQ(c.issues[0].kind, CONF_FILES_DANGLING);
        ASSERT_STREQ(c.issues[0].path, "/etc/x");
        ASSERT_STREQ(c.issues[0].other, "/usr/lib/x");
        ASSERT_EQ(c.issues[1].kind, CONF_FILES_UNLISTED);
        ASSERT_STREQ(c.issues[1].path, "/run/x.d");
        ASSERT_EQ(c.issues[1].error, -ELOOP);
        conf_files_done(&c);

        /* Controls: what is not there at all is no issue and no file. */
        ASSERT_OK(unlinkat(fd, "etc/x", 0));
        ASSERT_OK(unlinkat(fd, "run/x.d", 0));
        ASSERT_OK(unlinkat(fd, "etc/x.d/a.conf", 0));
        ASSERT_OK(unlinkat(fd, "etc/x.d/b.conf", 0));
        ASSERT_OK(unlinkat(fd, "etc/x.d/d.conf", 0));
        ASSERT_OK(conf_files_list(fd, d3, "x", 16, NULL, NULL, &c));
        assert_list(c.files,
                    (const char *const[]) { "/usr/lib/x", "/usr/lib/x.d/a.conf", "/usr/lib/x.d/b.conf",
                                            "/usr/lib/x.d/c.conf" },
                    4);
        ASSERT_EQ(c.n_issues, 0);
        conf_files_done(&c);

        /* /run a file: nothing can be under it, so /run/x is not there (ENOTDIR, as ENOENT) and
         * /usr/lib's main file applies; /run/x.d is a notice, as a file where a directory would be. */
        ASSERT_OK(unlinkat(fd, "run", AT_REMOVEDIR));
        close(openat(fd, "run", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        ASSERT_OK(conf_files_list(fd, d3, "x", 16, NULL, NULL, &c));
        assert_list(c.files,
                    (const char *const[]) { "/usr/lib/x", "/usr/lib/x.d/a.conf", "/usr/lib/x.d/b.conf",
                                            "/usr/lib/x.d/c.conf" },
                    4);
        ASSERT_EQ(c.n_issues, 1);
        ASSERT_EQ(c.issues[0].kind, CONF_FILES_NOT_DIRECTORY);
        ASSERT_STREQ(c.issues[0].path, "/run/x.d");
        ASSERT_STREQ(c.issues[0].other, "/run"); /* what is no directory (review S, L2) */
        conf_files_done(&c);
        ASSERT_OK(unlinkat(fd, "run", 0));
        ASSERT_OK(mkdirat(fd, "run", 0755));

        /* Notices are bounded. */
        for (unsigned i = 0; i < 2 * CONF_FILES_MAX_NOTICES; i++) {
                char name[64];

                snprintf(name, sizeof name, "etc/x.d/n%02u.conf", i);
                ASSERT_OK(symlinkat("missing.conf", fd, name));
        }
        ASSERT_OK(conf_files_list(fd, d3, "x", 16, NULL, NULL, &c));
        ASSERT_EQ(c.n_issues, CONF_FILES_MAX_NOTICES);
        ASSERT_EQ(c.n_files, 4);
        conf_files_done(&c);
        for (unsigned i = 0; i < 2 * CONF_FILES_MAX_NOTICES; i++) {
                char name[64];

                snprintf(name, sizeof name, "etc/x.d/n%02u.conf", i);
                ASSERT_OK(unlinkat(fd, name, 0));
        }

        /* Review S, L3: a directory over /usr/lib's c.conf and a FIFO named like a drop-in are listed
         * (systemd ignores them): what they were meant to be is not known, so their read fails and
         * says so; the directory hides /usr/lib's c.conf as a file of its name would. */
        ASSERT_OK(mkdirat(fd, "etc/x.d/c.conf", 0755));
        ASSERT_OK(mkfifoat(fd, "etc/x.d/f.conf", 0644));
        ASSERT_OK(conf_files_list(fd, d3, "x", 16, NULL, NULL, &c));
        assert_list(c.files,
                    (const char *const[]) { "/usr/lib/x", "/usr/lib/x.d/a.conf", "/usr/lib/x.d/b.conf",
                                            "/etc/x.d/c.conf", "/etc/x.d/f.conf" },
                    5);
        ASSERT_EQ(c.n_issues, 0);
        conf_files_done(&c);
        ASSERT_OK(unlinkat(fd, "etc/x.d/c.conf", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc/x.d/f.conf", 0));

        /* Review S, L5: past CONF_FILES_MAX_CANDIDATES entries, the directory whose rest was not
         * looked at is named. */
        for (unsigned i = 0; i <= CONF_FILES_MAX_CANDIDATES; i++) {
                char name[64];

                snprintf(name, sizeof name, "etc/x.d/m%05u.conf", i);
                close(openat(fd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        }
        ASSERT_OK(conf_files_list(fd, d3, "x", 16, NULL, NULL, &c));
        ASSERT_TRUE(c.truncated);
        ASSERT_STREQ(c.left_out, "/etc/x.d");
        conf_files_done(&c);
        for (unsigned i = 0; i <= CONF_FILES_MAX_CANDIDATES; i++) {
                char name[64];

                snprintf(name, sizeof name, "etc/x.d/m%05u.conf", i);
                ASSERT_OK(unlinkat(fd, name, 0));
        }

        ASSERT_OK(unlinkat(fd, "usr/lib/x", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/x.d/a.conf", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/x.d/b.conf", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/x.d/c.conf", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/x.d", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr/lib", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc/x.d", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "run", AT_REMOVEDIR));
        ASSERT_OK(rmdir(tmp));
}

/* More drop-in entries than CONF_FILES_MAX_CANDIDATES: the ones not looked at may override any file
 * by its name, so the list is truncated, even where the files listed stay below max_files (here every
 * entry but one masks). */
TEST(candidates_bounded) {
        char tmp[] = "/tmp/test-conf-files-cand-XXXXXX";
        _cleanup_(conf_files_done) ConfFiles c = {};
        _cleanup_close_ int fd = -EBADF;
        char name[64];

        ASSERT_TRUE(test_mkdtemp(tmp));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mkdirat(fd, "etc", 0755));
        ASSERT_OK(mkdirat(fd, "etc/x.d", 0755));
        close(openat(fd, "etc/x.d/a.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        for (unsigned i = 0; i < CONF_FILES_MAX_CANDIDATES; i++) {
                snprintf(name, sizeof name, "etc/x.d/m%05u.conf", i);
                ASSERT_OK(symlinkat("/dev/null", fd, name));
        }

        ASSERT_OK(conf_files_list(fd, (const char *const[]) { "/etc", NULL }, "x", 16, NULL, NULL, &c));
        ASSERT_TRUE(c.n_files <= 1);
        ASSERT_TRUE(c.truncated);
        conf_files_done(&c);

        /* Negative control: one entry fewer, all looked at. */
        ASSERT_OK(unlinkat(fd, "etc/x.d/m00000.conf", 0));
        ASSERT_OK(conf_files_list(fd, (const char *const[]) { "/etc", NULL }, "x", 16, NULL, NULL, &c));
        ASSERT_EQ(c.n_files, 1);
        ASSERT_TRUE(!c.truncated);

        for (unsigned i = 1; i < CONF_FILES_MAX_CANDIDATES; i++) {
                snprintf(name, sizeof name, "etc/x.d/m%05u.conf", i);
                ASSERT_OK(unlinkat(fd, name, 0));
        }
        ASSERT_OK(unlinkat(fd, "etc/x.d/a.conf", 0));
        ASSERT_OK(unlinkat(fd, "etc/x.d", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc", AT_REMOVEDIR));
        ASSERT_OK(rmdir(tmp));
}

/* A drop-in directory not listed in full (a read error part way) is an issue with its error: the
 * drop-ins past the error may override any file by its name. */
TEST(listing_fails_part_way) {
        static const char *const d2[] = { "/etc", "/usr/lib", NULL };
        char tmp[] = "/tmp/test-conf-files-eio-XXXXXX";
        _cleanup_(conf_files_done) ConfFiles c = {};
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(test_mkdtemp(tmp));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mkdirat(fd, "etc", 0755));
        ASSERT_OK(mkdirat(fd, "etc/x.d", 0755));
        ASSERT_OK(mkdirat(fd, "usr", 0755));
        ASSERT_OK(mkdirat(fd, "usr/lib", 0755));
        ASSERT_OK(mkdirat(fd, "usr/lib/x.d", 0755));
        close(openat(fd, "etc/x.d/a.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(openat(fd, "etc/x.d/fail.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(openat(fd, "usr/lib/x.d/b.conf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));

        wrap_readdir_fail_at = "fail.conf";
        ASSERT_OK(conf_files_list(fd, d2, "x", 16, NULL, NULL, &c));
        wrap_readdir_fail_at = NULL;
        ASSERT_EQ(c.n_issues, 1);
        ASSERT_EQ(c.issues[0].kind, CONF_FILES_UNLISTED);
        ASSERT_STREQ(c.issues[0].path, "/etc/x.d");
        ASSERT_EQ(c.issues[0].error, -EIO);
        ASSERT_TRUE(strv_contains(c.files, "/usr/lib/x.d/b.conf")); /* the other directory still counts */
        conf_files_done(&c);

        /* Negative control: listed in full, no issue. */
        ASSERT_OK(conf_files_list(fd, d2, "x", 16, NULL, NULL, &c));
        ASSERT_EQ(c.n_issues, 0);
        ASSERT_EQ(c.n_files, 3);

        ASSERT_OK(unlinkat(fd, "etc/x.d/a.conf", 0));
        ASSERT_OK(unlinkat(fd, "etc/x.d/fail.conf", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/x.d/b.conf", 0));
        ASSERT_OK(unlinkat(fd, "usr/lib/x.d", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr/lib", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "usr", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc/x.d", AT_REMOVEDIR));
        ASSERT_OK(unlinkat(fd, "etc", AT_REMOVEDIR));
        ASSERT_OK(rmdir(tmp));
}

int main(void) {
        RUN(dropins);
        RUN(main_file_order);
        RUN(masked_by_device_node);
        RUN(issues);
        RUN(candidates_bounded);
        RUN(listing_fails_part_way);
        return 0;
}
