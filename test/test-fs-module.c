/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs-module.h"
#include "shared/macro.h"
#include "shared/strv.h"
#include "tests.h"

TEST(parse_filesystems) {
        _cleanup_strv_free_ char **v = NULL, **b = NULL;

        ASSERT_OK(fs_module_parse_filesystems("nodev\tsysfs\n"
                                              "\text4\n"
                                              "nodev\tfuse\n"
                                              "\tjfs\n"
                                              "jfs\n"         /* no tab */
                                              "nodevx\tbad\n" /* not "nodev" */
                                              "nodev jfs2\n"  /* a blank, not a tab */
                                              "\t\n"          /* no name */
                                              "\ta\tb\n"      /* two tabs */
                                              "\n"
                                              "\tnilfs2", /* no final newline */
                                              &v, &b));
        ASSERT_EQ(strv_length(v), 5U);
        ASSERT_STREQ(v[0], "sysfs");
        ASSERT_STREQ(v[1], "ext4");
        ASSERT_STREQ(v[2], "fuse");
        ASSERT_STREQ(v[3], "jfs");
        ASSERT_STREQ(v[4], "nilfs2");
        ASSERT_EQ(strv_length(b), 3U); /* the block types: no "nodev" */
        ASSERT_STREQ(b[0], "ext4");
        ASSERT_STREQ(b[1], "jfs");
        ASSERT_STREQ(b[2], "nilfs2");
        v = strv_free(v);
        b = strv_free(b);
        ASSERT_OK(fs_module_parse_filesystems("", &v, &b));
        ASSERT_TRUE(v && strv_length(v) == 0 && b && strv_length(b) == 0);
        v = strv_free(v);
        ASSERT_OK(fs_module_parse_filesystems("\text4\n", &v, NULL));
        ASSERT_EQ(strv_length(v), 1U);
}

TEST(reason) {
        _cleanup_(reasons_done) Reasons why = {};

        ASSERT_OK(fs_module_reason("jfs", 0, 0, &why));
        ASSERT_OK(fs_module_reason("jfs", 2, 2, &why));
        ASSERT_OK(fs_module_reason("jfs", 1, 3, &why)); /* cannot be; not a hidden one */
        ASSERT_EQ(why.n, 0U);
        ASSERT_OK(fs_module_reason("jfs", 3, 2, &why));
        ASSERT_OK(fs_module_reason("jfs", -ENOENT, 5, &why));
        ASSERT_OK(fs_module_reason("jfs", -EACCES, 0, &why));
        ASSERT_EQ(why.n, 3U);
        ASSERT_TRUE(strstr(why.v[0], "module 'jfs' holds 3 reference(s), and the mount tables show 2"));
        ASSERT_TRUE(strstr(why.v[1], "'jfs' is registered but its superblocks cannot be counted"));
        ASSERT_TRUE(strstr(why.v[2], "could not be read (Permission denied)"));
}

static void write_at(const char *dir, const char *path, const char *text) {
        char p[512];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", dir, path);
        f = fopen(p, "we");
        ASSERT_TRUE(f);
        fputs(text, f);
        ASSERT_EQ(fclose(f), 0);
}

/* fs_module_check() gives exactly the reasons first (and second, unless NULL), in that order. */
static void check_reasons(int proc_fd, int sys_fd, const MountTable *t, const char *first,
                          const char *second) {
        _cleanup_(reasons_done) Reasons why = {};

        ASSERT_OK(fs_module_check(proc_fd, sys_fd, t, &(HiddenSet) {}, &why));
        for (size_t k = 0; k < why.n; k++)
                fprintf(stderr, "   %s\n", why.v[k]);
        ASSERT_EQ(why.n, second ? 2U : 1U);
        ASSERT_TRUE(strstr(why.v[0], first));
        ASSERT_TRUE(!second || strstr(why.v[1], second));
}

/* One module, two types (gfs2 and gfs2meta, whose mount shares the gfs2 superblock): counted once,
 * by distinct device, over mounts of several namespaces and the hidden set; unregistered types are
 * not looked at; a missing list (a fixture root) is nothing, an unreadable one a reason. */
TEST(check) {
        char root[] = "/tmp/test-fs-module.XXXXXX", cmd[512];
        _cleanup_close_ int proc_fd = -EBADF, sys_fd = -EBADF;
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        static const char mi[] = "20 1 254:0 / / rw - ext4 /dev/vda rw\n"
                                 "30 20 8:1 / /g rw - gfs2 /dev/sda1 rw\n"
                                 "31 20 8:1 / /gm rw - gfs2meta /dev/sda1 rw\n"
                                 "32 20 8:1 / /g2 rw - gfs2 /dev/sda1 rw\n"
                                 "33 20 8:5 / /n rw - ntfs /dev/sda5 rw\n"
                                 "34 20 8:6 / /n3 rw - ntfs3 /dev/sda6 rw\n";
        unsigned n_bad = 0;

        ASSERT_OK(mount_table_parse(mi, sizeof mi - 1, &t, &n_bad));
        ASSERT_EQ(n_bad, 0U);
        ASSERT_TRUE(test_mkdtemp(root));
        snprintf(
                cmd, sizeof cmd,
                "mkdir -p %s/proc %s/sys/module/gfs2 %s/sys/module/jfs %s/sys/module/ntfs3 && echo 2 >%s/sys/module/ntfs3/refcnt",
                root, root, root, root, root);
        ASSERT_EQ(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "%s/proc", root);
        proc_fd = open(cmd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        snprintf(cmd, sizeof cmd, "%s/sys", root);
        sys_fd = open(cmd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(proc_fd >= 0 && sys_fd >= 0);

        struct {
                const char *filesystems, *gfs2_refcnt;
                const HiddenSet *hidden;
                size_t n_reasons;
                const char *want;
        } cases[] = {
                /* no list: nothing */
                { NULL, "9\n", NULL, 0, NULL },
                /* gfs2 not registered: its count is not read */
                { "\text4\n", "9\n", NULL, 0, NULL },
                { "\text4\n\tgfs2\n\tgfs2meta\n", "1\n", NULL, 0, NULL },
                { "\text4\n\tgfs2\n\tgfs2meta\n", "2\n", NULL, 1,
                  "module 'gfs2' holds 2 reference(s), and the mount tables show 1" },
                { "\tgfs2meta\n", "2\n", NULL, 1, "module 'gfs2' holds 2" },
                /* jfs registered, its module directory without refcnt (built in with parameters, or
                 * no unloading) */
                { "\tjfs\n\tgfs2\n", "1\n", NULL, 1,
                  "'jfs' is registered but its superblocks cannot be counted" },
                /* vfat registered, no module directory at all: built in */
                { "\tvfat\n", "1\n", NULL, 1, "'vfat' is registered but its superblocks cannot be counted" },
                /* ext2 with no module of its own, right before ext4 (ext4_init_fs()'s order): ext4
                 * serves it, listed in sysfs, not counted; elsewhere fs/ext2 is built in: a reason
                 * (review, stop 27) */
                { "\text3\n\text2\n\text4\n", "1\n", NULL, 0, NULL },
                { "\text2\n\text4\n", "1\n", NULL, 0, NULL },
                { "\text2\n\text3\n\text4\n", "1\n", NULL, 1,
                  "'ext2' is registered but its superblocks cannot be counted" },
                { "\text3\n\text4\n\text2\n", "1\n", NULL, 1,
                  "'ext2' is registered but its superblocks cannot be counted" },
                { "\text2\n", "1\n", NULL, 1, "'ext2' is registered but its superblocks cannot be counted" },
                /* "ntfs" right before "ntfs3", no module "ntfs": ntfs3's alias, one module for both */
                { "\tntfs\n\tntfs3\n", "1\n", NULL, 0, NULL },
                /* "ntfs" elsewhere with no module of that name: a built-in driver, not ntfs3's; its mount
                 * then is not ntfs3's either, which holds 2 references for 1 superblock */
                { "\tntfs3\n\tntfs\n", "1\n", NULL, 2,
                  "'ntfs' is registered but its superblocks cannot be counted" },
                /* every block type is counted, by its name where no row names a module (review, stop
                 * 27: hpfs, ufs, affs, ...); read-only and listed ones and nodev types are not */
                { "\thpfs\n", "1\n", NULL, 1, "'hpfs' is registered but its superblocks cannot be counted" },
                { "\tiso9660\n\tsquashfs\n\tbtrfs\n\txfs\n\tfuseblk\n\text3\nnodev\tmyfs\n", "1\n", NULL, 0,
                  NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(reasons_done) Reasons why = {};
                HiddenSet none = {};

                snprintf(cmd, sizeof cmd, "%s/proc/filesystems", root);
                (void) unlink(cmd);
                if (cases[i].filesystems)
                        write_at(root, "proc/filesystems", cases[i].filesystems);
                write_at(root, "sys/module/gfs2/refcnt", cases[i].gfs2_refcnt);
                ASSERT_OK(fs_module_check(proc_fd, sys_fd, t, cases[i].hidden ?: &none, &why));
                for (size_t k = 0; k < why.n; k++)
                        fprintf(stderr, "   case %zu: %s\n", i, why.v[k]);
                ASSERT_EQ(why.n, cases[i].n_reasons);
                if (cases[i].want)
                        ASSERT_TRUE(strstr(why.v[0], cases[i].want));
        }

        /* A superblock in the hidden set (found by another listing, a reason of its own) counts as
         * seen: one reason for it, not two. */
        {
                _cleanup_(reasons_done) Reasons why = {};
                HiddenSb sb = { .dev = makedev(8, 2), .fstype = (char *) "gfs2" };
                HiddenSet h = { .v = &sb, .n = 1 };

                write_at(root, "proc/filesystems", "\tgfs2\n");
                write_at(root, "sys/module/gfs2/refcnt", "2\n");
                ASSERT_OK(fs_module_check(proc_fd, sys_fd, t, &h, &why));
                ASSERT_EQ(why.n, 0U);
                ASSERT_OK(fs_module_check(proc_fd, -EBADF, t, &h, &why));
                ASSERT_EQ(why.n, 1U);
                ASSERT_TRUE(strstr(why.v[0],
                                   "references to module 'gfs2' could not be read (Bad file descriptor)"));
        }

        /* ntfs3 holding more references than both types show; ext2 with a module of its own */
        write_at(root, "proc/filesystems", "\tntfs\n\tntfs3\n\text2\n");
        write_at(root, "sys/module/ntfs3/refcnt", "3\n");
        snprintf(cmd, sizeof cmd, "mkdir -p %s/sys/module/ext2 && echo 1 >%s/sys/module/ext2/refcnt", root,
                 root);
        ASSERT_EQ(system(cmd), 0);
        check_reasons(proc_fd, sys_fd, t, "module 'ntfs3' holds 3 reference(s), and the mount tables show 2",
                      "module 'ext2' holds 1 reference(s), and the mount tables show 0");

        /* "ntfs" with a module of that name loaded is that module's, not ntfs3's (review, stop 27) */
        write_at(root, "proc/filesystems", "\tntfs3\n\tntfs\n");
        write_at(root, "sys/module/ntfs3/refcnt", "1\n");
        snprintf(cmd, sizeof cmd, "mkdir -p %s/sys/module/ntfs && echo 2 >%s/sys/module/ntfs/refcnt", root,
                 root);
        ASSERT_EQ(system(cmd), 0);
        check_reasons(proc_fd, sys_fd, t, "module 'ntfs' holds 2 reference(s), and the mount tables show 1",
                      NULL);

        /* a look under module/ that fails otherwise than "no such module": a reason, not "built in" */
        {
                _cleanup_(reasons_done) Reasons why = {};

                write_at(root, "proc/filesystems", "\tvfat\n");
                snprintf(cmd, sizeof cmd, "cd %s/sys && mv module module.d && touch module", root);
                ASSERT_EQ(system(cmd), 0);
                ASSERT_OK(fs_module_check(proc_fd, sys_fd, t, &(HiddenSet) {}, &why));
                snprintf(cmd, sizeof cmd, "cd %s/sys && rm module && mv module.d module", root);
                ASSERT_EQ(system(cmd), 0);
                ASSERT_EQ(why.n, 1U);
                ASSERT_TRUE(
                        strstr(why.v[0], "references to module 'vfat' could not be read (Not a directory)"));
        }

        /* Read before and after the tables (review, stop 27): a visible superblock unmounted, or one
         * mounted, in between does not hide a hidden one from both reads. */
        {
                static const char *const counts[][2] = { { "2\n", "1\n" },
                                                         { "1\n", "2\n" },
                                                         { "1\n", "1\n" } };

                write_at(root, "proc/filesystems", "\tgfs2\n");
                for (size_t i = 0; i < ELEMENTSOF(counts); i++) {
                        _cleanup_(fs_module_counts_freep) FsModuleCounts *c = NULL;
                        _cleanup_(reasons_done) Reasons why = {};

                        write_at(root, "sys/module/gfs2/refcnt", counts[i][0]);
                        ASSERT_OK(fs_module_begin(proc_fd, sys_fd, &c, &why));
                        ASSERT_TRUE(c != NULL);
                        write_at(root, "sys/module/gfs2/refcnt", counts[i][1]);
                        ASSERT_OK(fs_module_end(c, sys_fd, t, &(HiddenSet) {}, &why));
                        ASSERT_EQ(why.n, i < 2 ? 1U : 0U);
                }
        }

        /* the list itself unreadable (here: a directory) */
        {
                _cleanup_(reasons_done) Reasons why = {};

                snprintf(cmd, sizeof cmd, "%s/proc/filesystems", root);
                ASSERT_EQ(unlink(cmd), 0);
                ASSERT_EQ(mkdir(cmd, 0755), 0);
                ASSERT_OK(fs_module_check(proc_fd, sys_fd, t, &(HiddenSet) {}, &why));
                ASSERT_EQ(why.n, 1U);
                ASSERT_TRUE(strstr(why.v[0], "list of filesystem types could not be read"));
        }
        ASSERT_OK(fs_module_check(-EBADF, sys_fd, t, &(HiddenSet) {}, &(Reasons) {}));

        /* A real procfs without the list (subset=pid) cannot tell: a reason, not a fixture's nothing. */
        if (geteuid() == 0) {
                _cleanup_(reasons_done) Reasons why = {};
                _cleanup_close_ int sub = -EBADF;

                snprintf(cmd, sizeof cmd,
                         "mkdir -p %s/pidproc && mount -t proc -o subset=pid none %s/pidproc", root, root);
                if (system(cmd) == 0) {
                        snprintf(cmd, sizeof cmd, "%s/pidproc", root);
                        sub = open(cmd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        ASSERT_TRUE(sub >= 0);
                        ASSERT_OK(fs_module_check(sub, sys_fd, t, &(HiddenSet) {}, &why));
                        sub = safe_close(sub);
                        ASSERT_OK(umount2(cmd, MNT_DETACH));
                        ASSERT_EQ(why.n, 1U);
                        ASSERT_TRUE(strstr(why.v[0], "list of filesystem types could not be read"));
                } else
                        test_skip("cannot mount a procfs with subset=pid");
        }

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

int main(void) {
        RUN(parse_filesystems);
        RUN(reason);
        RUN(check);
        return test_result();
}
