/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shared/conf-files: systemd's drop-in semantics on the config fixture trees (the same order as
 * "systemd-analyze cat-config", see integration/cat-config.sh) and on a tree made here for the
 * bounds and masking by a /dev/null device node.
 */

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shared/conf-files.h"
#include "shared/macro.h"
#include "shared/strv.h"
#include "tests.h"

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
                /* not: .hidden.conf, 80-directory.conf (a directory), not-a-dropin.txt */
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

        ASSERT_OK(conf_files_list(fd, dirs, "suspend-sync.conf", 256, record, &seen, &l, &truncated));
        assert_list(l, expected, ELEMENTSOF(expected));
        ASSERT_TRUE(!truncated);
        /* Progress: each main file candidate until one exists, then each drop-in directory and each
         * symlink in it (followed elsewhere, maybe onto a filesystem that hangs). */
        assert_list(seen, looked_at, ELEMENTSOF(looked_at));
        l = strv_free(l);

        /* Bounded: the main file counts. */
        ASSERT_OK(conf_files_list(fd, dirs, "suspend-sync.conf", 3, NULL, NULL, &l, &truncated));
        assert_list(l, expected, 3);
        ASSERT_TRUE(truncated);
        l = strv_free(l);

        /* Another name: nothing there, an empty list. */
        ASSERT_OK(conf_files_list(fd, dirs, "other.conf", 256, NULL, NULL, &l, NULL));
        ASSERT_TRUE(l && !l[0]);
}

TEST(main_file_order) {
        _cleanup_close_ int a = open_root("mainorder"), b = open_root("mainorder-usr"),
                            e = open_root("empty");
        _cleanup_strv_free_ char **l = NULL, **m = NULL, **n = NULL;

        ASSERT_OK(conf_files_list(a, dirs, "suspend-sync.conf", 256, NULL, NULL, &l, NULL));
        assert_list(l, (const char *const[]) { "/run/suspend-sync.conf" }, 1);
        ASSERT_OK(conf_files_list(b, dirs, "suspend-sync.conf", 256, NULL, NULL, &m, NULL));
        assert_list(m, (const char *const[]) { "/usr/local/lib/suspend-sync.conf" }, 1);
        ASSERT_OK(conf_files_list(e, dirs, "suspend-sync.conf", 256, NULL, NULL, &n, NULL));
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

        ASSERT_OK(conf_files_list(fd, (const char *const[]) { "/etc", "/run", NULL }, "x", 16, record, &seen,
                                  &l, NULL));
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

int main(void) {
        RUN(dropins);
        RUN(main_file_order);
        RUN(masked_by_device_node);
        return 0;
}
