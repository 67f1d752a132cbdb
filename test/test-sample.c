/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Sample tests: one record per superblock, bind mounts and subvolumes folded, overmounted mounts
 * flagged, the loaders joined on fixture roots (proc, sysfs, debugfs), and degraded roots.
 */

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs-type.h"
#include "sample-ns.h"
#include "sample.h"
#include "shared/mount-api.h"
#include "tests.h"
#include "wrap-readdir.h"
#include "unlisted-internal.h"
#include "unlisted.h"
#include "wrap-getdents.h"

static const Superblock *find_sb(const Sample *s, unsigned ma, unsigned mi) {
        for (size_t k = 0; k < s->n_sbs; k++)
                if (s->sbs[k].dev == makedev(ma, mi))
                        return &s->sbs[k];
        return NULL;
}

static Sample *build(const char *root) {
        _cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        MountTable *t = NULL;
        Sample *s = NULL;

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mount_table_load(fd, &t, NULL));
        ASSERT_OK(sample_build(&t, NULL, &s));
        return s;
}

TEST(laptop_superblocks) {
        _cleanup_(sample_freep) Sample *s = build(FIXTURES_DIR "/roots/laptop");
        const Superblock *root, *btrfs, *squash;

        root = find_sb(s, 259, 2);
        ASSERT_TRUE(root);
        ASSERT_EQ(root->n_mounts, 3U); /* /, /srv/www, /opt/vendor */
        ASSERT_STREQ(root->fstype, "ext4");
        ASSERT_TRUE(!root->all_read_only); /* /opt/vendor is ro per mount only */
        btrfs = find_sb(s, 0, 35);
        ASSERT_TRUE(btrfs && btrfs->n_mounts == 2);
        squash = find_sb(s, 7, 0);
        ASSERT_TRUE(squash && squash->all_read_only);
        ASSERT_EQ(find_sb(s, 0, 21)->fs_class, FS_CLASS_PSEUDO);
        ASSERT_EQ(find_sb(s, 0, 53)->fs_class, FS_CLASS_OVERLAY);
        ASSERT_EQ(find_sb(s, 0, 52)->fs_class, FS_CLASS_NETWORK);

        /* Without classification every superblock is its own group. */
        ASSERT_STREQ(root->group, "sb:259:2");

        /* Inverse map is consistent, and records follow mount table order. */
        for (size_t i = 0; i < s->table->n_entries; i++)
                ASSERT_TRUE(s->sbs[s->sb_of_mount[i]].dev == s->table->entries[i].dev);
        for (size_t k = 1; k < s->n_sbs; k++)
                ASSERT_TRUE(s->sbs[k - 1].mounts[0] < s->sbs[k].mounts[0]);
}

TEST(overmounted) {
        _cleanup_(sample_freep) Sample *s = build(FIXTURES_DIR "/roots/odd-paths");
        size_t n = 0;

        for (size_t i = 0; i < s->table->n_entries; i++)
                if (s->overmounted[i]) {
                        ASSERT_STREQ(s->table->entries[i].mount_point, "/mnt/stack");
                        ASSERT_EQ(s->table->entries[i].mount_id, 51);
                        n++;
                }
        ASSERT_EQ(n, 1U);
        ASSERT_TRUE(find_sb(s, 0, 60)->all_read_only);
}

/* systemd-nspawn mounts /run/host/os-release and /run/host/incoming on /run, then binds /run/host
 * over itself read-only: the first two (132, 133) stay in the table, on /run (128), but path
 * lookup of /run/host now enters 129, so they are unreachable although no mount has their exact
 * mount point on top of them. Reaching 254:0 through 132 made every sync in such a container fail
 * with ESTALE (the path leads to 130). The same for /proc/sys/kernel/random/boot_id: 54 on /proc
 * (135) is hidden by /proc/sys (136) bound over itself, 53 on 136 is the one reached. */
TEST(hidden_by_sibling_on_ancestor_path) {
        _cleanup_(sample_freep) Sample *s = build(FIXTURES_DIR "/roots/nspawn");
        size_t n = 0;

        for (size_t i = 0; i < s->table->n_entries; i++) {
                int id = s->table->entries[i].mount_id;
                bool want = id == 132 || id == 133 || id == 54;

                if (s->overmounted[i] != want)
                        fprintf(stderr, "mount %d %s: overmounted=%d\n", id, s->table->entries[i].mount_point,
                                s->overmounted[i]);
                ASSERT_EQ(s->overmounted[i], want);
                n += s->overmounted[i];
        }
        ASSERT_EQ(n, 3U);
}

/* The laptop fixture's root, sysfs and debugfs; both fds are the caller's. */
static SampleSources laptop_sources(int *ret_root_fd, int *ret_debugfs_fd) {
        int root_fd = open(FIXTURES_DIR "/roots/laptop", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ASSERT_TRUE(root_fd >= 0);
        *ret_root_fd = root_fd;
        *ret_debugfs_fd = openat(root_fd, "debugfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(*ret_debugfs_fd >= 0);
        return (SampleSources) { .root_fd = root_fd,
                                 .sysfs_root = FIXTURES_DIR "/sysfs/laptop",
                                 .debugfs_fd = *ret_debugfs_fd };
}

TEST(load_fixture_root) {
        _cleanup_close_ int root_fd = -EBADF, dbg = -EBADF;
        _cleanup_(sample_freep) Sample *s = NULL;
        SampleSources src = laptop_sources(&root_fd, &dbg);
        const Superblock *root;

        ASSERT_OK(sample_load(&src, &s));
        ASSERT_TRUE(s->has_meminfo && s->has_debugfs);
        ASSERT_U64_EQ(s->meminfo.dirty_bytes, 14880ULL * 1024);
        ASSERT_TRUE(s->fuse_kernel_checked); /* proc/sys/kernel/osrelease: 6.18.44 */
        root = find_sb(s, 259, 2);
        ASSERT_TRUE(root);
        ASSERT_STREQ(root->device.bdi_name, "259:0");
        ASSERT_TRUE(root->has_bdi_stats);
        ASSERT_U64_EQ(root->bdi.value[BDI_STAT_RECLAIMABLE], 14336ULL * 1024);
        /* The EFI partition is on the same disk: same group. */
        ASSERT_STREQ(root->group, find_sb(s, 259, 1)->group);
        /* proc/fs/jbd2/nvme0n1p2-8: its journal lies in it (sysfs has no fs/ext4 here: unknown);
         * vfat's is not looked for */
        ASSERT_STREQ(root->device.name, "nvme0n1p2");
        ASSERT_TRUE(root->journal < 0);
        ASSERT_EQ(root->journal_internal, 1);
        ASSERT_EQ(find_sb(s, 259, 1)->journal_internal, -ENODATA);
}

/* The second sample before the knob (context_sample_again()): what sample_changed_since() compares
 * is that of a full sample, and nothing else is read. */
TEST(identity_only) {
        _cleanup_close_ int root_fd = -EBADF, dbg = -EBADF;
        _cleanup_(sample_freep) Sample *full = NULL, *light = NULL;
        _cleanup_free_ char *why = NULL;
        SampleSources src = laptop_sources(&root_fd, &dbg);
        size_t n_ext4 = 0;

        ASSERT_OK(sample_load(&src, &full));
        src.identity_only = true;
        ASSERT_OK(sample_load(&src, &light));

        ASSERT_EQ(light->complete, full->complete);
        ASSERT_EQ(light->n_incomplete_why, full->n_incomplete_why);
        ASSERT_EQ(light->n_sbs, full->n_sbs);
        ASSERT_EQ(sample_changed_since(full, light, &why), 0);
        ASSERT_EQ(sample_changed_since(light, full, &why), 0);
        for (size_t k = 0; k < light->n_sbs; k++) {
                const Superblock *l = &light->sbs[k], *f = find_sb(full, major(l->dev), minor(l->dev));

                ASSERT_TRUE(f);
                ASSERT_STREQ(l->fstype, f->fstype);
                ASSERT_EQ(l->all_read_only, f->all_read_only);
                ASSERT_EQ(l->n_mounts, f->n_mounts);
                ASSERT_EQ(l->fs_class, f->fs_class);
                /* classified (btrfs is checked by bdi), the rest not read */
                ASSERT_TRUE(streq_ptr(l->device.bdi_name, f->device.bdi_name));
                ASSERT_TRUE(!l->has_bdi_stats);
                ASSERT_EQ(l->journal, -ENODATA);
                ASSERT_EQ(l->journal_internal, -ENODATA);
                ASSERT_EQ(l->nobarrier, -ENODATA);
                n_ext4 += streq(l->fstype, "ext4");
        }
        /* Not vacuous: the full sample read them for the same superblocks (load_fixture_root). */
        ASSERT_TRUE(n_ext4 > 0);
        ASSERT_TRUE(find_sb(full, 259, 2)->has_bdi_stats);
        ASSERT_EQ(find_sb(full, 259, 2)->journal_internal, 1);
}

TEST(degraded_root) {
        _cleanup_close_ int root_fd = open(FIXTURES_DIR "/roots/degraded",
                                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_(sample_freep) Sample *s = NULL;
        SampleSources src = { .root_fd = root_fd, .sysfs_root = "/nonexistent", .debugfs_fd = -EBADF };

        ASSERT_TRUE(root_fd >= 0);
        ASSERT_OK(sample_load(&src, &s));
        ASSERT_TRUE(!s->has_meminfo);
        ASSERT_TRUE(!s->has_debugfs);
        ASSERT_TRUE(!s->fuse_kernel_checked); /* no osrelease: no FUSE rule (review AZ, AZ-3) */
        for (size_t k = 0; k < s->n_sbs; k++) {
                ASSERT_TRUE(!s->sbs[k].has_bdi_stats);
                ASSERT_TRUE(!s->sbs[k].device.classified);
                ASSERT_TRUE(s->sbs[k].journal_internal != 1);
        }
}

TEST(container_host_1000) {
        usec_t t0 = now(CLOCK_MONOTONIC);
        _cleanup_(sample_freep) Sample *s = build(FIXTURES_DIR "/roots/container-host-1000");

        fprintf(stderr, "read+sample of %zu mounts: %llu us (informational)\n", s->table->n_entries,
                (unsigned long long) (now(CLOCK_MONOTONIC) - t0));
        ASSERT_EQ(s->table->n_entries, 1000U);
        ASSERT_TRUE(s->n_sbs > 0 && s->n_sbs <= 1000U);
}


/* The sample of the root directory root, with root/sysfs as sysfs and root/debugfs as debugfs. */
static Sample *load_dir(const char *root, const char *sysfs) {
        char sys[PATH_MAX];
        _cleanup_close_ int root_fd = -EBADF, dbg = -EBADF;
        SampleSources src;
        Sample *s = NULL;

        snprintf(sys, sizeof sys, "%s/%s", root, sysfs);
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(root_fd >= 0);
        dbg = openat(root_fd, "debugfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        src = (SampleSources) {
                .root_fd = root_fd, .sysfs_root = sys, .debugfs_fd = dbg, .scan_namespaces = true
        };
        ASSERT_OK(sample_load(&src, &s));
        return s;
}

static Sample *load_root(const char *name, const char *sysfs) {
        char root[PATH_MAX];

        snprintf(root, sizeof root, "%s/roots/%s", FIXTURES_DIR, name);
        return load_dir(root, sysfs);
}

/* load_root() of a copy of the fixture root, changed by the shell command change run in it first;
 * prints the reasons. */
static Sample *load_changed_root(const char *name, const char *change) {
        char tmpl[] = "/tmp/test-sample.XXXXXX", cmd[PATH_MAX * 2];
        Sample *s;

        ASSERT_TRUE(test_mkdtemp(tmpl));
        snprintf(cmd, sizeof cmd, "cp -a '%s/roots/%s/.' '%s' && cd '%s' && %s", FIXTURES_DIR, name, tmpl,
                 tmpl, change);
        ASSERT_EQ(system(cmd), 0);
        s = load_dir(tmpl, "sys");
        for (size_t k = 0; k < s->n_incomplete_why; k++)
                fprintf(stderr, "%s: incomplete: %s\n", change, s->incomplete_why[k]);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
        ASSERT_EQ(system(cmd), 0);
        return s;
}

static bool has_reason(const Sample *s, const char *a, const char *b) {
        for (size_t i = 0; i < s->n_incomplete_why; i++)
                if (strstr(s->incomplete_why[i], a) && (!b || strstr(s->incomplete_why[i], b)))
                        return true;
        return false;
}

/* Issue 9 case 2: superblocks that sysfs fs/<type>/ lists (detached ones included) or that have an
 * anonymous bdi in debugfs, but that no mount table shows, and a namespace held only by an nsfs mount
 * make the sample incomplete, each with a reason. */
TEST(hidden_superblocks) {
        _cleanup_(sample_freep) Sample *s = load_root("hidden-sb", "sys");

        for (size_t i = 0; i < s->n_incomplete_why; i++)
                fprintf(stderr, "incomplete: %s\n", s->incomplete_why[i]);
        ASSERT_TRUE(!s->complete);
        ASSERT_TRUE(!s->view_restricted);
        ASSERT_EQ(s->n_incomplete_why, 4U);
        ASSERT_TRUE(has_reason(s, "superblock 0:77 is mounted but in no scanned mount table",
                               "debugfs bdi/0:77"));
        ASSERT_TRUE(!has_reason(s, "0:21", NULL));
        ASSERT_TRUE(has_reason(s, "ext4 superblock 7:3 (/dev/loop3) is mounted but in no scanned mount table",
                               "sysfs fs/ext4/loop3"));
        ASSERT_TRUE(
                has_reason(s, "btrfs filesystem 5e1f0c3a-0d5b-4c4e-9a57-6b1d2a9f0c11 (bdi btrfs-7)", NULL));
        ASSERT_TRUE(has_reason(s, "mount namespace mnt:[4026532186] is kept by the nsfs mount /run/held-ns",
                               NULL));
        /* vda is listed; features/ and xfs stats/ are not devices. */
        ASSERT_TRUE(!has_reason(s, "254:0", NULL));
        ASSERT_TRUE(!has_reason(s, "features", NULL));
        /* Nothing was reached (no process in the fixture): no unlisted entry. */
        for (size_t i = 0; i < s->table->n_entries; i++)
                ASSERT_TRUE(!s->table->entries[i].unlisted);
}

/* The control: every superblock sysfs lists is in the table, no nsfs mount: complete. */
TEST(all_listed) {
        _cleanup_(sample_freep) Sample *s = load_root("all-listed", "sys");

        for (size_t i = 0; i < s->n_incomplete_why; i++)
                fprintf(stderr, "incomplete: %s\n", s->incomplete_why[i]);
        ASSERT_TRUE(s->complete);
        ASSERT_EQ(s->n_incomplete_why, 0U);
        ASSERT_TRUE(!s->view_restricted);
}

/* Review B F8: a line of our mount table that cannot be read is a mount not seen: incomplete. */
TEST(unreadable_mountinfo_line) {
        _cleanup_(sample_freep)
                Sample *s = load_changed_root("all-listed", "printf '55 21 0:60 / /mnt/cut ro,rel' >> "
                                                            "proc/self/mountinfo");

        ASSERT_TRUE(!s->complete);
        ASSERT_TRUE(has_reason(s, "1 mount(s) of our mount table could not be read", NULL));
}

/* A fuseblk superblock (ntfs-3g, fuse2fs) has a bdi named "MAJ:MIN-fuseblk" after its block device,
 * and no sysfs listing: one no table shows (lazily unmounted, a file still open) makes the view
 * incomplete (review, seventh session); the control: the same bdi with its mount in the table. */
TEST(hidden_fuseblk) {
        _cleanup_(sample_freep) Sample *s = load_changed_root("all-listed", "mkdir debugfs/bdi/8:17-fuseblk");
        _cleanup_(sample_freep) Sample *c = load_changed_root(
                "all-listed",
                "mkdir debugfs/bdi/8:17-fuseblk && echo '30 20 8:17 / /media/win rw,relatime shared:30 - "
                "fuseblk /dev/sdb1 rw,user_id=0,group_id=0,allow_other,blksize=4096' >>proc/self/mountinfo");

        ASSERT_TRUE(!s->complete);
        ASSERT_TRUE(has_reason(s, "superblock 8:17 is mounted but in no scanned mount table",
                               "debugfs bdi/8:17-fuseblk, a FUSE filesystem on a block device"));
        ASSERT_TRUE(c->complete);
}

/* Review G, G3: a superblock of a type whose bdi is named after it ("zfs-1", "cifs-2": no device in
 * the name) that no table shows is found by no listing; more such bdis of a type than the tables hold
 * superblocks of it make the view incomplete. Controls: as many mounts as bdis; mtd-0 (the MTD
 * devices', no filesystem's). */
TEST(hidden_type_named_bdi) {
        static const char zfs_mount[] = "echo '31 20 0:61 / /tank rw,relatime shared:31 - zfs tank rw,xattr' "
                                        ">>proc/self/mountinfo",
                          cifs_mount[] = "echo '32 20 0:62 / /srv/share rw,relatime shared:32 - cifs //h/s "
                                         "rw,vers=3.1.1' >>proc/self/mountinfo";
        char cmd[512];
        _cleanup_(sample_freep) Sample *s = load_changed_root("all-listed", "mkdir debugfs/bdi/zfs-1");
        _cleanup_(sample_freep) Sample *two = NULL, *one = NULL, *cifs = NULL, *mtd = NULL;

        ASSERT_TRUE(!s->complete);
        ASSERT_TRUE(has_reason(s, "1 bdis named after the filesystem type 'zfs' (such as bdi/zfs-1)",
                               "the mount tables 0 superblocks of it"));
        snprintf(cmd, sizeof cmd, "mkdir debugfs/bdi/zfs-1 debugfs/bdi/zfs-2 && %s", zfs_mount);
        two = load_changed_root("all-listed", cmd);
        ASSERT_TRUE(!two->complete);
        ASSERT_TRUE(has_reason(two, "2 bdis named after the filesystem type 'zfs'", "1 superblocks of it"));
        snprintf(cmd, sizeof cmd, "mkdir debugfs/bdi/zfs-2 && %s", zfs_mount);
        one = load_changed_root("all-listed", cmd);
        ASSERT_TRUE(one->complete);
        snprintf(cmd, sizeof cmd, "mkdir debugfs/bdi/cifs-1 && %s", cifs_mount);
        cifs = load_changed_root("all-listed", cmd);
        ASSERT_TRUE(cifs->complete);
        mtd = load_changed_root("all-listed", "mkdir debugfs/bdi/mtd-0");
        ASSERT_TRUE(mtd->complete);
}

/* Review G, G5: one device number listed with two types (a tmpfs's number given to a FUSE mount
 * between the reads of two tables), or read-only in one table and not in the other: a reason, and
 * neither the pseudo class nor read-only decides for it. */
TEST(device_number_reused) {
        _cleanup_(sample_freep) Sample *s = load_changed_root(
                "all-listed",
                "printf '60 20 0:70 / /run/a rw - tmpfs tmpfs rw\\n61 20 0:70 / /mnt/b rw - fuse.sshfs h:/ "
                "rw,user_id=0,group_id=0\\n62 20 0:71 / /mnt/c ro - ext4 /dev/x ro\\n63 20 0:71 / /mnt/d rw "
                "- ext4 /dev/x rw\\n' >>proc/self/mountinfo");
        const Superblock *a = NULL, *c = NULL;

        for (size_t k = 0; k < s->n_sbs; k++) {
                if (s->sbs[k].dev == makedev(0, 70))
                        a = &s->sbs[k];
                if (s->sbs[k].dev == makedev(0, 71))
                        c = &s->sbs[k];
        }
        ASSERT_TRUE(a && c);
        ASSERT_TRUE(!s->complete);
        ASSERT_TRUE(has_reason(s, "superblock 0:70 is listed as 'tmpfs' and as 'fuse.sshfs'", NULL));
        ASSERT_STREQ(a->fstype, "fuse.sshfs");
        ASSERT_TRUE(a->fs_class != FS_CLASS_PSEUDO);
        ASSERT_TRUE(!c->all_read_only);
        ASSERT_TRUE(!has_reason(s, "0:71", NULL)); /* one type: a remount, no reuse */
}

/* The same root with its listings broken one at a time: a directory that cannot be listed and one
 * with more entries than the bound are reasons, never a shorter list taken for all of it. */
TEST(unlisted_listings_fail_closed) {
        static const char *const breaks[] = {
                "rm -rf sys/fs/xfs && echo x >sys/fs/xfs",                              /* ENOTDIR */
                "rm -rf debugfs/bdi && echo x >debugfs/bdi",                            /* ENOTDIR */
                "mkdir -p sys/fs/btrfs && cd sys/fs/btrfs && seq 0 4096 | xargs mkdir", /* 4097 */
        };
        static const char *const want[] = {
                "sysfs fs/xfs could not be listed in full (Not a directory)",
                "debugfs bdi could not be listed in full (Not a directory)",
                "sysfs fs/btrfs lists more than 4096 entries",
        };

        for (size_t i = 0; i < ELEMENTSOF(breaks); i++) {
                _cleanup_(sample_freep) Sample *s = load_changed_root("all-listed", breaks[i]);

                ASSERT_TRUE(!s->complete);
                ASSERT_TRUE(has_reason(s, want[i], NULL));
        }
}

/* Review AQ (#57): a listing that fails part way (readdir(3) ends with EIO, here at an entry of
 * debugfs bdi/, and at sysfs fs/ext4/features) is a reason, never taken for the end of the list. The control:
 * the same root listed whole is complete. */
TEST(unlisted_listing_cut_short) {
        static const struct {
                const char *change, *entry, *want;
        } cases[] = {
                { "mkdir debugfs/bdi/253:7", "253:7",
                  "debugfs bdi could not be listed in full (Input/output error)" },
                { "true", "features", "sysfs fs/ext4 could not be listed in full (Input/output error)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(sample_freep) Sample *whole = load_changed_root("all-listed", cases[i].change);
                _cleanup_(sample_freep) Sample *cut = NULL;

                ASSERT_TRUE(whole->complete);
                wrap_readdir_fail_at = cases[i].entry;
                cut = load_changed_root("all-listed", cases[i].change);
                wrap_readdir_fail_at = NULL;
                ASSERT_TRUE(!cut->complete);
                ASSERT_TRUE(has_reason(cut, cases[i].want, NULL));
        }
}

/* One step of the search for superblocks no mount table shows fails with scan_bdis_error (test-sample is
 * linked with --wrap=unlisted_scan_bdis, test/meson.build; 0: passes through). */
static int scan_bdis_error;

int __real_unlisted_scan_bdis(int debugfs_fd, const MountTable *t, HiddenSet *h, Reasons *why);
int __wrap_unlisted_scan_bdis(int debugfs_fd, const MountTable *t, HiddenSet *h, Reasons *why);

int __wrap_unlisted_scan_bdis(int debugfs_fd, const MountTable *t, HiddenSet *h, Reasons *why) {
        if (scan_bdis_error < 0)
                return scan_bdis_error;
        return __real_unlisted_scan_bdis(debugfs_fd, t, h, why);
}

/* Review AQ (#54): a search that fails part way, with any error but ENOMEM, leaves the view
 * incomplete with the reason, never complete. Every step of it turns what it meets into a reason
 * itself today, so only an injected error reaches this: it pins the contract for steps to come.
 * Control: the same root without the fault, complete. */
TEST(unlisted_search_fails) {
        _cleanup_(sample_freep) Sample *whole = load_changed_root("all-listed", "true");
        _cleanup_(sample_freep) Sample *cut = NULL;

        ASSERT_TRUE(whole->complete);
        scan_bdis_error = -EIO;
        cut = load_changed_root("all-listed", "true");
        scan_bdis_error = 0;
        ASSERT_TRUE(!cut->complete);
        ASSERT_TRUE(has_reason(
                cut, "could not look for superblocks outside the mount tables: Input/output error", NULL));
}

/* Review J (mutations U03, U04): what a listing cannot compare is a reason. A filesystem sysfs
 * fs/<type>/ lists whose device number cannot be read; bdis named after more filesystem types than
 * are counted (BDI_TYPES_MAX): 33 types, 32 of them mounted. Control: 32 types, all mounted,
 * complete. */
TEST(unlisted_uncompared_fail_closed) {
        char cmd[512];
        _cleanup_(sample_freep) Sample *nodev = load_changed_root("all-listed", "mkdir sys/fs/ext4/sdz9");
        _cleanup_(sample_freep) Sample *many = NULL, *enough = NULL;

        ASSERT_TRUE(!nodev->complete);
        ASSERT_TRUE(has_reason(nodev, "sysfs fs/ext4/sdz9: a filesystem whose device number cannot be read",
                               NULL));

        for (unsigned n = BDI_TYPES_MAX; n <= BDI_TYPES_MAX + 1; n++) {
                snprintf(cmd, sizeof cmd,
                         "for i in $(seq 0 %u); do mkdir debugfs/bdi/t$i-1; done && "
                         "for i in $(seq 0 %u); do echo \"$((100 + i)) 20 0:$((200 + i)) / /mnt/t$i "
                         "rw,relatime - t$i t$i rw\" >>proc/self/mountinfo; done",
                         n - 1, BDI_TYPES_MAX - 1);
                if (n == BDI_TYPES_MAX)
                        enough = load_changed_root("all-listed", cmd);
                else
                        many = load_changed_root("all-listed", cmd);
        }
        ASSERT_TRUE(enough->complete);
        /* which types are counted follows the listing's order: one mounted type may be the one
         * beyond, and t32 then counted (a reason of its own), but the one beyond is always said */
        ASSERT_TRUE(!many->complete);
        ASSERT_TRUE(has_reason(many, "debugfs lists bdis named after more than 32 filesystem types", NULL));
}

/* Types no listing shows (jfs, ...; fs-module.h): a superblock the tables do not show is found by
 * counting the module's references (stop 27, the gap left open at stop 26: a jfs unmounted lazily
 * while a file is held). The control: the same count with the mount in the table is complete. */
TEST(hidden_counted_by_module) {
        static const char *const fs = "printf 'nodev\\tproc\\n\\text4\\n\\tjfs\\n' >proc/filesystems && "
                                      "mkdir -p sys/module/jfs && ";
        static const char *const mount = " && echo '30 20 8:17 / /mnt/j rw - jfs /dev/sdb1 rw' "
                                         ">>proc/self/mountinfo";
        char cmd[512];
        struct {
                const char *refcnt, *extra, *want;
                bool complete;
        } cases[] = {
                { "echo 1 >sys/module/jfs/refcnt", "",
                  "module 'jfs' holds 1 reference(s), and the mount "
                  "tables show 0 superblock(s)",
                  false },
                { "echo 1 >sys/module/jfs/refcnt", mount, NULL, true },
                { "echo 2 >sys/module/jfs/refcnt", mount, "show 1 superblock(s)", false },
                { "true", mount, "'jfs' is registered but its superblocks cannot be counted", false },
                { "echo x >sys/module/jfs/refcnt", mount, "references to module 'jfs' could not be read",
                  false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                snprintf(cmd, sizeof cmd, "%s%s%s", fs, cases[i].refcnt, cases[i].extra);
                _cleanup_(sample_freep) Sample *s = load_changed_root("all-listed", cmd);

                ASSERT_EQ(s->complete, cases[i].complete);
                if (cases[i].want)
                        ASSERT_TRUE(has_reason(s, cases[i].want, NULL));
        }
}

/* An nsfs mount point that is no longer nsfs (a directory mounted over it, replaced) is never opened
 * for reading, only O_PATH, and is a reason: opened for reading, a FUSE directory there could wait on
 * its server. */
TEST(nsfs_no_longer_nsfs) {
        _cleanup_(sample_freep) Sample *s = load_changed_root("hidden-sb", "mkdir -p run/held-ns");

        ASSERT_TRUE(has_reason(s, "kept by the nsfs mount /run/held-ns", strerror(EMEDIUMTYPE)));
}

/* Issue 9 case 10: inside a chroot "/" is not in our own table: a restricted view, incomplete, and
 * "/" itself added (unlisted) so that it is synced through the root directory. */
TEST(chroot_view) {
        _cleanup_(sample_freep) Sample *s = load_root("chroot-view", "nonexistent");
        const MountEntry *root = NULL;

        ASSERT_TRUE(s->view_restricted);
        ASSERT_TRUE(!s->complete);
        ASSERT_TRUE(has_reason(s, "our root directory is not a mount point", NULL));
        for (size_t i = 0; i < s->table->n_entries; i++)
                if (streq(s->table->entries[i].mount_point, "/"))
                        root = &s->table->entries[i];
        ASSERT_TRUE(root && root->unlisted);
}

/* Issue 9 case 2c: a namespace is read through a member at its root, not a chrooted one; a namespace
 * with chrooted members only is not called completely scanned. */
TEST(chrooted_namespaces) {
        _cleanup_(sample_freep) Sample *s = load_root("chroot-ns", "nonexistent");
        bool data = false;

        for (size_t i = 0; i < s->n_incomplete_why; i++)
                fprintf(stderr, "incomplete: %s\n", s->incomplete_why[i]);
        ASSERT_EQ(s->n_namespaces, 2U);
        for (size_t k = 0; k < s->n_namespaces; k++)
                if (s->namespaces[k].ino == 4026532500ULL)
                        ASSERT_EQ(s->namespaces[k].pid, 124);
        for (size_t i = 0; i < s->table->n_entries; i++)
                data = data || (streq(s->table->entries[i].mount_point, "/data") && s->ns_of_mount[i] != 0);
        ASSERT_TRUE(data);
        ASSERT_TRUE(!s->complete);
        ASSERT_EQ(s->n_incomplete_why, 1U);
        ASSERT_TRUE(
                has_reason(s,
                           "mount namespace mnt:[4026532600] (seen only through chrooted process 200, root "
                           "/srv/jail2)",
                           "mounts outside that root were not scanned"));
}

/* One line of another namespace's table that cannot be parsed (the text backend: the fixture's
 * namespaces are read through proc/PID/mountinfo) hides a mount of that namespace: a reason, naming
 * the namespace and the member read. The control: the fixture as it is, no such reason. */
TEST(unreadable_line_of_other_namespace) {
        static const char want[] =
                "1 line(s) of the mount table of mount namespace mnt:[4026532500] (process "
                "124) could not be read";
        _cleanup_(sample_freep) Sample *s = NULL, *control = NULL;

        s = load_changed_root("chroot-ns", "printf '814 800 0:61 / /mnt/cut rw,rel' >> proc/124/mountinfo");
        ASSERT_TRUE(!s->complete);
        ASSERT_TRUE(has_reason(s, want, "the mounts they describe were not scanned"));
        control = load_changed_root("chroot-ns", "true");
        ASSERT_TRUE(!has_reason(control, want, NULL));
        ASSERT_EQ(control->n_incomplete_why, 1U); /* the chrooted namespace alone (chrooted_namespaces) */
}

static void print_reasons(const Sample *s) {
        for (size_t i = 0; i < s->n_incomplete_why; i++)
                fprintf(stderr, "incomplete: %s\n", s->incomplete_why[i]);
}

/* The walk over proc that finds the other namespaces' members stops on an error (EACCES from hidepid=
 * or an LSM, EIO): the namespaces of the processes not listed were never seen, a reason whatever the
 * errno. The control: the listing as it is, no such reason. */
TEST(proc_walk_fails) {
        static const int errors[] = { EACCES, EIO, EPERM };

        ASSERT_OK(stat(FIXTURES_DIR "/roots/chroot-ns/proc", &wrap_getdents_fail_dir));
        for (size_t i = 0; i <= ELEMENTSOF(errors); i++) {
                _cleanup_(sample_freep) Sample *s = NULL;
                char want[256];

                wrap_getdents_fail_errno = i < ELEMENTSOF(errors) ? errors[i] : 0;
                s = load_root("chroot-ns", "nonexistent");
                wrap_getdents_fail_errno = 0;
                print_reasons(s);
                ASSERT_TRUE(!s->complete);
                snprintf(want, sizeof want, "the processes in proc could not all be listed (%s)",
                         strerror(i < ELEMENTSOF(errors) ? errors[i] : EIO));
                if (i < ELEMENTSOF(errors))
                        ASSERT_TRUE(has_reason(s, want, "mount namespaces of the rest were not scanned"));
                else
                        ASSERT_TRUE(!has_reason(s, "the processes in proc could not all be listed", NULL));
        }
}

/* The namespaces are read one by one while the sample's bound allows (review AE, H1): with it
 * passed (until 1) after a walk over proc too short to look at the clock (fewer than 64 processes),
 * no namespace is read and a reason says so. The control: no bound, both namespaces read. */
TEST(namespace_reads_bounded) {
        for (usec_t until = 0; until <= 1; until++) {
                _cleanup_close_ int root_fd = open(FIXTURES_DIR "/roots/chroot-ns",
                                                   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                SampleSources src = { .root_fd = root_fd,
                                      .sysfs_root = FIXTURES_DIR "/roots/chroot-ns/nonexistent",
                                      .debugfs_fd = -EBADF,
                                      .scan_namespaces = true,
                                      .until = until };
                _cleanup_(sample_freep) Sample *s = NULL;

                ASSERT_TRUE(root_fd >= 0);
                ASSERT_OK(sample_load(&src, &s));
                print_reasons(s);
                ASSERT_TRUE(!s->complete);
                if (until > 0) {
                        ASSERT_TRUE(has_reason(
                                s, "2 of 2 mount namespaces were not read within the sample's bound",
                                "their mounts were not scanned"));
                        ASSERT_EQ(s->n_namespaces, 0U);
                } else {
                        ASSERT_TRUE(!has_reason(s, "within the sample's bound", NULL));
                        ASSERT_EQ(s->n_namespaces, 2U);
                }
        }
}

/* A candidate that exited or left its namespace: another member is looked for from the first
 * process, whatever an earlier walk left in proc_fd's offset (the walks used to read through dups of
 * proc_fd, which share it, so the second started where the first one's read-ahead had ended); an
 * unchrooted member first, else a chrooted one. Fixture: 123 (mnt:[4026532500], chrooted), 124
 * (4026532500, root "/"), 200 (4026532600, chrooted). */
TEST(other_member_after_a_walk) {
        _cleanup_close_ int proc_fd = open(FIXTURES_DIR "/roots/chroot-ns/proc",
                                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        SampleNsMember m;
        DIR *d;
        size_t n = 0;

        ASSERT_TRUE(proc_fd >= 0);
        /* an earlier walk, to the end, through a dup */
        d = fdopendir(fcntl(proc_fd, F_DUPFD_CLOEXEC, 3));
        ASSERT_TRUE(d != NULL);
        while (readdir(d))
                n++;
        closedir(d);
        ASSERT_EQ(n, 6U); /* ".", "..", 123, 124, 200, self */

        ASSERT_EQ(sample_ns_other_member(proc_fd, 4026532500ULL, 123, &m), 1);
        ASSERT_TRUE(m.pid == 124 && !m.chrooted);
        ASSERT_EQ(sample_ns_other_member(proc_fd, 4026532500ULL, 0, &m), 1); /* unchrooted first */
        ASSERT_TRUE(m.pid == 124 && !m.chrooted);
        ASSERT_EQ(sample_ns_other_member(proc_fd, 4026532500ULL, 124, &m), 1); /* else chrooted */
        ASSERT_TRUE(m.pid == 123 && m.chrooted);
        ASSERT_STREQ(m.root, "/srv/jail");
        ASSERT_EQ(sample_ns_other_member(proc_fd, 4026532600ULL, 200, &m), 0);
        ASSERT_EQ(sample_ns_other_member(proc_fd, 4026532999ULL, 0, &m), 0);
}

/* A member's text counts only if the member is still in the namespace after the read: a process
 * that moved (setns) or whose number was reused shows another namespace's mounts. */
TEST(member_mountinfo_checked) {
        _cleanup_close_ int proc_fd = open(FIXTURES_DIR "/roots/chroot-ns/proc",
                                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char *text = NULL;
        size_t size = 0;

        ASSERT_TRUE(proc_fd >= 0);
        ASSERT_OK(sample_ns_member_mountinfo(proc_fd, 124, 4026532500ULL, &text, &size));
        ASSERT_TRUE(text && size > 0);
        free(text);
        text = NULL;
        /* 124 is in mnt:[4026532500], not in the namespace asked for: as if it had moved */
        ASSERT_ERR(sample_ns_member_mountinfo(proc_fd, 124, 4026532600ULL, &text, &size), ESRCH);
        ASSERT_TRUE(text == NULL);
        ASSERT_ERR(sample_ns_member_mountinfo(proc_fd, 999, 4026532500ULL, &text, &size), ESRCH);
}

/* ---- the search through proc, bounded (unlisted_reach() in a child) ---------------------------- */

/* Stands in for statx(2) on the reach-hung fixture: proc/100/cwd on 0:77, proc/100/fd/3 on 0:78. */
static int fake_stat(int proc_fd, const char *path, struct statx *ret) {
        (void) proc_fd;
        *ret = (struct statx) { .stx_mask = STATX_TYPE | STATX_MNT_ID, .stx_dev_major = 0 };
        if (streq(path, "100/cwd")) {
                ret->stx_mode = S_IFDIR;
                ret->stx_dev_minor = 77;
                ret->stx_mnt_id = 177;
                return 0;
        }
        if (streq(path, "100/fd/3")) {
                ret->stx_mode = S_IFREG;
                ret->stx_dev_minor = 78;
                ret->stx_mnt_id = 178;
                return 0;
        }
        return -ENOENT;
}

/* The same, but proc/100/fd/3 never answers: a file on a dead CIFS or 9p server, whose getattr asks
 * the server in spite of AT_STATX_DONT_SYNC. */
static int fake_stat_hung(int proc_fd, const char *path, struct statx *ret) {
        if (streq(path, "100/fd/3"))
                for (;;)
                        pause();
        return fake_stat(proc_fd, path, ret);
}

static Sample *load_reach_gate(UnlistedStatFn stat_fn, usec_t timeout, usec_t until, SampleGate *gate,
                               usec_t *ret_took) {
        _cleanup_close_ int root_fd = open(FIXTURES_DIR "/roots/reach-hung",
                                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int dbg = -EBADF;
        SampleSources src;
        Sample *s = NULL;
        usec_t t0;

        ASSERT_TRUE(root_fd >= 0);
        dbg = openat(root_fd, "debugfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(dbg >= 0);
        src = (SampleSources) { .root_fd = root_fd,
                                .sysfs_root = "/nonexistent",
                                .debugfs_fd = dbg,
                                .scan_namespaces = true,
                                .reach_timeout = timeout,
                                .until = until,
                                .reach_stat = stat_fn,
                                .gate = gate };
        t0 = now(CLOCK_MONOTONIC);
        ASSERT_OK(sample_load(&src, &s));
        if (ret_took)
                *ret_took = now(CLOCK_MONOTONIC) - t0;
        for (size_t i = 0; i < s->n_incomplete_why; i++)
                fprintf(stderr, "   incomplete: %s\n", s->incomplete_why[i]);
        return s;
}

static Sample *load_reach_until(UnlistedStatFn stat_fn, usec_t timeout, usec_t until, usec_t *ret_took) {
        return load_reach_gate(stat_fn, timeout, until, NULL, ret_took);
}

static Sample *load_reach(UnlistedStatFn stat_fn, usec_t timeout, usec_t *ret_took) {
        return load_reach_until(stat_fn, timeout, 0, ret_took);
}

static const MountEntry *find_unlisted(const Sample *s, const char *path) {
        for (size_t i = 0; i < s->table->n_entries; i++)
                if (s->table->entries[i].unlisted && streq(s->table->entries[i].mount_point, path))
                        return &s->table->entries[i];
        return NULL;
}

/* Found by the child, applied by the parent: the unlisted entries are the ones the scan in the main
 * process gave (mount point, device, mount id), and nothing is left to report. */
TEST(reach_bounded) {
        _cleanup_(sample_freep) Sample *s = load_reach(fake_stat, 0, NULL);
        const MountEntry *e;

        ASSERT_TRUE(s->complete);
        e = find_unlisted(s, "/proc/100/cwd");
        ASSERT_TRUE(e && e->dev == makedev(0, 77) && e->mount_id == 177);
        e = find_unlisted(s, "/proc/100/fd/3");
        ASSERT_TRUE(e && e->dev == makedev(0, 78) && e->mount_id == 178);
        ASSERT_TRUE(find_sb(s, 0, 77) && find_sb(s, 0, 78));

        /* statx(2) itself: proc/100/fd/3 points nowhere, nothing is reached, as before. */
        s = sample_free(s);
        s = load_reach(NULL, 0, NULL);
        ASSERT_TRUE(!s->complete);
        ASSERT_EQ(s->n_incomplete_why, 2U);
        ASSERT_TRUE(has_reason(s, "superblock 0:77 is mounted but in no scanned mount table",
                               "and no process holds a file on it"));
        ASSERT_TRUE(has_reason(s, "superblock 0:78", "and no process holds a file on it"));
}

/* The scan blocks on proc/100/fd/3 (a dead server): the sample returns within the bound, 0:77 (found
 * before) is reached, 0:78 stays hidden and makes the sample incomplete, the reason naming the
 * bound. */
TEST(reach_hung) {
        usec_t took;
        _cleanup_(sample_freep) Sample *s = load_reach(fake_stat_hung, 200 * USEC_PER_MSEC, &took);
        const MountEntry *e;

        fprintf(stderr, "   hung reach returned after %.3fs\n", (double) took / USEC_PER_SEC);
        ASSERT_TRUE(took >= 200 * USEC_PER_MSEC && took < 700 * USEC_PER_MSEC);
        ASSERT_TRUE(!s->complete);
        ASSERT_EQ(s->n_incomplete_why, 1U);
        ASSERT_TRUE(has_reason(s, "superblock 0:78 is mounted but in no scanned mount table",
                               "did not finish within 200ms"));
        e = find_unlisted(s, "/proc/100/cwd");
        ASSERT_TRUE(e && e->dev == makedev(0, 77) && e->mount_id == 177);
        ASSERT_TRUE(find_unlisted(s, "/proc/100/fd/3") == NULL);
}

/* The sample's children end by SampleSources.until whatever their own bound (a pass whose
 * configuration took long to read has less left of its deadline): the hung scan given 2 s returns
 * by until, 250 ms away; and a child started past until is killed at once. */
TEST(reach_hung_until) {
        usec_t took;
        _cleanup_(sample_freep) Sample *s = load_reach_until(
                fake_stat_hung, 2 * USEC_PER_SEC, now(CLOCK_MONOTONIC) + 250 * USEC_PER_MSEC, &took);

        fprintf(stderr, "   hung reach with until 250 ms away returned after %.3fs\n",
                (double) took / USEC_PER_SEC);
        ASSERT_TRUE(took >= 200 * USEC_PER_MSEC && took < 750 * USEC_PER_MSEC);
        ASSERT_TRUE(!s->complete);
        ASSERT_TRUE(has_reason(s, "superblock 0:78 is mounted but in no scanned mount table",
                               "did not finish within"));

        s = sample_free(s);
        s = load_reach_until(fake_stat, 2 * USEC_PER_SEC, now(CLOCK_MONOTONIC) - 1, &took);
        fprintf(stderr, "   reach past until returned after %.3fs\n", (double) took / USEC_PER_SEC);
        ASSERT_TRUE(took < 500 * USEC_PER_MSEC);
        ASSERT_TRUE(!s->complete); /* never taken as complete: what it would have found is not known */
}

typedef struct GateCount {
        unsigned n;
        int r;
        usec_t reach_timeout;
        bool loop_backing;
} GateCount;

static int gate_open(SampleGate *g) {
        GateCount *c = g->userdata;

        c->n++;
        g->reach_timeout = c->reach_timeout;
        g->until = 0;
        g->loop_backing = c->loop_backing;
        return c->r;
}

/* A gate (context_prepare(): the configuration read while the sample runs) is opened once, right
 * before the first bounded child, and its bounds replace the sources': the hung scan given 2 s by the
 * sources returns by the gate's 200 ms. A gate that fails leaves the child no time (not known: the
 * view incomplete). A sample that forks no child never opens it. */
TEST(sample_gate) {
        _cleanup_close_ int laptop_fd = -EBADF;
        GateCount count = { .reach_timeout = 200 * USEC_PER_MSEC };
        SampleGate gate = { .open = gate_open, .userdata = &count };
        SampleSources src;
        Sample *s = NULL;
        usec_t took;

        s = load_reach_gate(fake_stat_hung, 2 * USEC_PER_SEC, 0, &gate, &took);
        fprintf(stderr, "   hung reach behind a gate of 200 ms returned after %.3fs\n",
                (double) took / USEC_PER_SEC);
        ASSERT_TRUE(took >= 200 * USEC_PER_MSEC && took < 1500 * USEC_PER_MSEC);
        ASSERT_EQ(count.n, 1U);
        ASSERT_TRUE(gate.opened);
        ASSERT_TRUE(has_reason(s, "superblock 0:78 is mounted but in no scanned mount table",
                               "did not finish within 200ms"));
        s = sample_free(s);

        /* The gate fails: no time for the child, which is killed at once. */
        gate = (SampleGate) { .open = gate_open, .userdata = &count };
        count = (GateCount) { .r = -ENOMEM, .reach_timeout = 2 * USEC_PER_SEC };
        s = load_reach_gate(fake_stat, 2 * USEC_PER_SEC, 0, &gate, &took);
        ASSERT_EQ(count.n, 1U);
        ASSERT_TRUE(took < 1500 * USEC_PER_MSEC);
        ASSERT_TRUE(!s->complete);
        s = sample_free(s);

        /* No child: never opened. */
        laptop_fd = open(FIXTURES_DIR "/roots/laptop", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(laptop_fd >= 0);
        gate = (SampleGate) { .open = gate_open, .userdata = &count };
        count = (GateCount) {};
        src = (SampleSources) {
                .root_fd = laptop_fd, .sysfs_root = "/nonexistent", .debugfs_fd = -EBADF, .gate = &gate
        };
        ASSERT_OK(sample_load(&src, &s));
        ASSERT_EQ(count.n, 0U);
        ASSERT_TRUE(!gate.opened);
        s = sample_free(s);
}

/* What a sample behind a gate reads, compared without what the gate decides: each field apart. */
TEST(sources_same_reads) {
        SampleSources a = { .root_fd = 3,
                            .sysfs_root = "/sys",
                            .debugfs_fd = 4,
                            .scan_namespaces = true,
                            .reach_timeout = 1,
                            .until = 2,
                            .loop_backing = true },
                      b = a;

        ASSERT_TRUE(sample_sources_same_reads(&a, &b));
        b.reach_timeout = 5;
        b.until = 6;
        ASSERT_TRUE(sample_sources_same_reads(&a, &b)); /* the gate's */
        b = a, b.loop_backing = false;
        ASSERT_TRUE(sample_sources_same_reads(&a, &b)); /* the gate's too */
        b = a, b.no_rotational = true;
        ASSERT_TRUE(!sample_sources_same_reads(&a, &b));
        b = a, b.identity_only = true;
        ASSERT_TRUE(!sample_sources_same_reads(&a, &b));
        b = a, b.sysfs_root = "/other";
        ASSERT_TRUE(!sample_sources_same_reads(&a, &b));
        b = a, b.scan_namespaces = false;
        ASSERT_TRUE(!sample_sources_same_reads(&a, &b));
        b = a, b.walk_all_processes = true;
        ASSERT_TRUE(!sample_sources_same_reads(&a, &b));
        b = a, b.mount_backend = MOUNT_TABLE_BACKEND_MOUNTINFO;
        ASSERT_TRUE(!sample_sources_same_reads(&a, &b));
        b = a, b.debugfs_fd = 5;
        ASSERT_TRUE(!sample_sources_same_reads(&a, &b));
        b = a, b.root_fd = 5;
        ASSERT_TRUE(!sample_sources_same_reads(&a, &b));
        b = a, b.reach_stat = fake_stat;
        ASSERT_TRUE(!sample_sources_same_reads(&a, &b));
}

/* The child through the kernel: proc/<pid>/{cwd,fd/N} of a fake proc tree are symlinks, which statx
 * follows as it follows the magic links. Our own process (the parent's pid) is never looked at. */
static int real_stat_hung(int proc_fd, const char *path, struct statx *ret) {
        if (streq(path, "100/fd/3"))
                for (;;)
                        pause();
        return statx(proc_fd, path, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MNT_ID, ret) < 0 ? -errno : 0;
}

static void make_link(const char *dir, const char *name, const char *target) {
        char path[PATH_MAX];

        snprintf(path, sizeof path, "%s/%s", dir, name);
        ASSERT_OK(symlink(target, path));
}

static dev_t dev_of(const char *path, int *ret_mnt_id) {
        struct statx stx;

        ASSERT_OK(statx(AT_FDCWD, path, 0, STATX_MNT_ID, &stx));
        if (ret_mnt_id)
                *ret_mnt_id = (stx.stx_mask & STATX_MNT_ID) ? (int) stx.stx_mnt_id : 0;
        return makedev(stx.stx_dev_major, stx.stx_dev_minor);
}

static int hidden_one(HiddenSet *h, dev_t dev) {
        HiddenSb *v = reallocarray(h->v, h->n + 1, sizeof(HiddenSb));

        ASSERT_TRUE(v);
        h->v = v;
        h->v[h->n] = (HiddenSb) { .dev = dev, .fstype = strdup("unknown"), .what = strdup("a test") };
        ASSERT_TRUE(h->v[h->n].fstype && h->v[h->n].what);
        h->n++;
        return 0;
}

static void reach_tree(bool hung) {
        char dir[] = "/tmp/test-sample-reach.XXXXXX", path[PATH_MAX], target[PATH_MAX];
        _cleanup_(mount_table_freep) MountTable *t = calloc(1, sizeof(MountTable));
        _cleanup_(reasons_done) Reasons why = {};
        _cleanup_(hidden_set_done) HiddenSet h = {};
        _cleanup_close_ int root_fd = -EBADF;
        int mnt_tmp, mnt_proc, r;
        usec_t t0, took;

        ASSERT_TRUE(t && test_mkdtemp(dir));
        snprintf(path, sizeof path, "%s/proc", dir);
        ASSERT_OK(mkdir(path, 0755));
        snprintf(path, sizeof path, "%s/proc/100", dir);
        ASSERT_OK(mkdir(path, 0755));
        snprintf(path, sizeof path, "%s/proc/100/fd", dir);
        ASSERT_OK(mkdir(path, 0755));
        snprintf(path, sizeof path, "%s/proc/%d", dir, (int) getpid());
        ASSERT_OK(mkdir(path, 0755));
        make_link(dir, "proc/100/cwd", dir);                 /* the tree's filesystem */
        make_link(dir, "proc/100/fd/3", "/proc");            /* procfs */
        snprintf(target, sizeof target, "%s/proc/100", dir); /* the tree's again: one entry */
        make_link(dir, "proc/100/fd/4", target);
        snprintf(path, sizeof path, "proc/%d/cwd", (int) getpid());
        make_link(dir, path, "/sys"); /* ours: never looked at */
        ASSERT_OK(hidden_one(&h, dev_of(dir, &mnt_tmp)));
        ASSERT_OK(hidden_one(&h, dev_of("/proc", &mnt_proc)));
        ASSERT_OK(hidden_one(&h, dev_of("/sys", NULL)));
        ASSERT_TRUE(h.v[0].dev != h.v[1].dev && h.v[0].dev != h.v[2].dev && h.v[1].dev != h.v[2].dev);
        root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(root_fd >= 0);

        t0 = now(CLOCK_MONOTONIC);
        r = unlisted_reach(root_fd, 200 * USEC_PER_MSEC, hung ? real_stat_hung : NULL, &h, t);
        took = now(CLOCK_MONOTONIC) - t0;
        ASSERT_EQ(r, hung ? 1 : 2);
        ASSERT_EQ(t->n_entries, (size_t) r);
        ASSERT_STREQ(t->entries[0].mount_point, "/proc/100/cwd");
        ASSERT_TRUE(t->entries[0].unlisted && t->entries[0].dev == dev_of(dir, NULL));
        ASSERT_EQ(t->entries[0].mount_id, mnt_tmp);
        /* and the mount's id that is never reused, for the worker (review H, H6; Linux 6.8+) */
        {
                struct statx u;

                ASSERT_OK(statx(AT_FDCWD, dir, 0, SS_STATX_MNT_ID_UNIQUE, &u));
                ASSERT_U64_EQ(t->entries[0].mount_id_unique,
                              (u.stx_mask & SS_STATX_MNT_ID_UNIQUE) ? u.stx_mnt_id : 0);
        }
        if (hung) {
                ASSERT_TRUE(took >= 200 * USEC_PER_MSEC && took < 700 * USEC_PER_MSEC);
                ASSERT_EQ(h.reach_error, -ETIMEDOUT);
        } else {
                ASSERT_STREQ(t->entries[1].mount_point, "/proc/100/fd/3");
                ASSERT_EQ(t->entries[1].mount_id, mnt_proc);
                ASSERT_EQ(h.reach_error, 0);
        }
        /* Left hidden: /sys (and procfs when hung), in the order found. */
        ASSERT_EQ(h.n, hung ? 2U : 1U);
        ASSERT_TRUE(h.v[h.n - 1].dev == dev_of("/sys", NULL));
        ASSERT_OK(unlisted_report(&h, &why));
        ASSERT_EQ(why.n, h.n);
        ASSERT_TRUE(strstr(why.v[0], hung ? "did not finish within 200ms" : "no process holds a file on it"));

        /* Nothing hidden: nothing forked, nothing to report. */
        hidden_set_done(&h);
        ASSERT_EQ(unlisted_reach(root_fd, 0, fake_stat_hung, &h, t), 0);
        ASSERT_EQ(h.reach_error, 0);

        snprintf(path, sizeof path, "rm -rf -- '%s'", dir);
        ASSERT_EQ(system(path), 0);
}

TEST(reach_tree) {
        reach_tree(false);
        reach_tree(true);
}

/* The live sample on both mount-table backends: the same superblocks, mounts and read-only state
 * (sysfs and debugfs left out: only the table differs). Read again when the shared machine's table
 * changed in between. */
static bool same_superblocks(const Sample *a, const Sample *b) {
        if (a->n_sbs != b->n_sbs || a->table->n_entries != b->table->n_entries)
                return false;
        for (size_t k = 0; k < a->n_sbs; k++) {
                const Superblock *x = &a->sbs[k], *y = &b->sbs[k];

                if (x->dev != y->dev || !streq(x->fstype, y->fstype) || !streq(x->source, y->source) ||
                    x->fs_class != y->fs_class || x->n_mounts != y->n_mounts ||
                    x->all_read_only != y->all_read_only)
                        return false;
                for (size_t i = 0; i < x->n_mounts; i++)
                        if (x->mounts[i] != y->mounts[i] ||
                            a->overmounted[x->mounts[i]] != b->overmounted[y->mounts[i]])
                                return false;
        }
        return a->complete == b->complete && a->view_restricted == b->view_restricted;
}

TEST(live_both_backends) {
        _cleanup_close_ int root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        SampleSources src = { .root_fd = root_fd, .sysfs_root = "/nonexistent", .debugfs_fd = -EBADF };

        ASSERT_TRUE(root_fd >= 0);
        for (unsigned attempt = 0;; attempt++) {
                _cleanup_(sample_freep) Sample *a = NULL, *b = NULL;
                int r;

                src.mount_backend = MOUNT_TABLE_BACKEND_MOUNTINFO;
                ASSERT_OK(sample_load(&src, &a));
                src.mount_backend = MOUNT_TABLE_BACKEND_LISTMOUNT;
                r = sample_load(&src, &b);
                if (r == -ENOSYS || r == -EPERM || r == -EOPNOTSUPP) {
                        test_skip("listmount/statmount unusable here: %s", strerror(-r));
                        return;
                }
                ASSERT_OK(r);
                if (same_superblocks(a, b)) {
                        fprintf(stderr, "  %zu superblocks, %zu mounts: the same through both backends\n",
                                a->n_sbs, a->table->n_entries);
                        return;
                }
                ASSERT_TRUE(attempt < 5); /* a table that keeps changing: too busy to compare */
                fprintf(stderr, "  the samples differ (the table changed meanwhile?), again\n");
                usleep(100 * 1000);
        }
}

/* A child in a mount namespace of its own (private propagation), set up by setup(userdata, ret_devs),
 * which fills n devices for the parent (0: done, else an exit status); returns its pid (0: cannot,
 * saying why) with ret_devs filled, and writing to *ret_release lets it exit. */
static pid_t spawn_child_namespace(int (*setup)(const void *userdata, dev_t *devs), const void *userdata,
                                   dev_t *ret_devs, size_t n, int *ret_release) {
        int ready[2], release[2], status = 0;
        size_t size = n * sizeof(dev_t);
        pid_t pid;
        char c;

        ASSERT_OK(pipe2(ready, O_CLOEXEC));
        ASSERT_OK(pipe2(release, O_CLOEXEC));
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int r;

                close(ready[0]);
                close(release[1]);
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(1);
                r = setup(userdata, ret_devs);
                if (r != 0)
                        _exit(r);
                if (write(ready[1], ret_devs, size) != (ssize_t) size)
                        _exit(1);
                (void) !read(release[0], &c, 1);
                _exit(0);
        }
        close(ready[1]);
        close(release[0]);
        if (read(ready[0], ret_devs, size) != (ssize_t) size) {
                close(ready[0]);
                close(release[1]);
                (void) waitpid(pid, &status, 0);
                fprintf(stderr, "  the child could not set up (exit %d)\n",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                return 0;
        }
        close(ready[0]);
        *ret_release = release[1];
        return pid;
}

/* An overlay at dir/m over directories of the tmpfs at dir (a superblock in no table of ours). */
static int mount_overlay_in(const char *dir, dev_t *ret) {
        char path[PATH_MAX], opts[3 * PATH_MAX];
        struct stat st;

        for (const char *d = "l\0u\0w\0m\0"; *d; d += 2) {
                snprintf(path, sizeof path, "%s/%s", dir, d);
                if (mkdir(path, 0755) < 0)
                        return -errno;
        }
        snprintf(path, sizeof path, "%s/m", dir);
        snprintf(opts, sizeof opts, "lowerdir=%s/l,upperdir=%s/u,workdir=%s/w", dir, dir, dir);
        if (mount("overlay", path, "overlay", 0, opts) < 0 || stat(path, &st) < 0)
                return -errno;
        *ret = st.st_dev;
        return 0;
}

/* A tmpfs at dir only this namespace sees, and an overlay in it: a superblock no table of ours has,
 * so the namespace is read, not left out as covered by ours (a tmpfs alone is nothing to sync). */
static int setup_tmpfs(const void *userdata, dev_t *devs) {
        const char *dir = userdata;
        struct stat st;
        dev_t overlay;

        if (mount("tmpfs", dir, "tmpfs", 0, "size=1m") < 0 || stat(dir, &st) < 0)
                return 1;
        if (mount_overlay_in(dir, &overlay) < 0)
                return 2;
        devs[0] = st.st_dev;
        return 0;
}

/* As setup_tmpfs, the overlay's device for the parent. */
static int setup_overlay(const void *userdata, dev_t *devs) {
        const char *dir = userdata;

        if (mount("tmpfs", dir, "tmpfs", 0, "size=1m") < 0)
                return 1;
        if (mount_overlay_in(dir, &devs[0]) < 0)
                return 2;
        return 0;
}

/* A child in a mount namespace of its own with a tmpfs only it sees; returns its pid (0: cannot) and
 * the tmpfs's device; writing to *ret_release lets it exit. */
static pid_t spawn_namespace(const char *dir, dev_t *ret_dev, int *ret_release) {
        return spawn_child_namespace(setup_tmpfs, dir, ret_dev, 1, ret_release);
}

/* The inode of pid's mount namespace ("mnt:[ino]"). */
static uint64_t ns_ino_of(pid_t pid) {
        char path[64], link[64];
        unsigned long long ino;
        ssize_t n;

        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
        n = readlink(path, link, sizeof link - 1);
        ASSERT_TRUE(n > 0);
        link[n] = 0;
        ASSERT_EQ(sscanf(link, "mnt:[%llu]", &ino), 1);
        return ino;
}

/* Whether sample s has the namespace of pid with a mount of dev in it. */
static bool has_namespace_mount(const Sample *s, pid_t pid, dev_t dev) {
        uint64_t ino = ns_ino_of(pid);

        for (size_t i = 0; i < s->table->n_entries; i++)
                if (s->ns_of_mount[i] != 0 && s->namespaces[s->ns_of_mount[i] - 1].ino == ino &&
                    s->table->entries[i].dev == dev)
                        return true;
        return false;
}

/* Where the kernel lists mount namespaces (6.12+), the namespace of pid is among them: the path the
 * first sample of live_namespaces_both_ways takes. */
static void kernel_lists_namespace(pid_t pid) {
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ uint64_t *inos = NULL;
        char path[64];
        struct stat st;
        size_t n = 0;
        bool found = false;
        int r;

        ASSERT_TRUE(proc_fd >= 0);
        r = unlisted_list_namespaces(proc_fd, SAMPLE_MAX_NAMESPACES, NULL, &inos, &n, NULL, NULL);
        if (r < 0) {
                printf("  no kernel list of mount namespaces (%s): both ways walk every process\n",
                       strerror(-r));
                return;
        }
        snprintf(path, sizeof path, "%d/ns/mnt", (int) pid);
        ASSERT_OK(fstatat(proc_fd, path, &st, 0));
        for (size_t i = 0; i < n; i++)
                found = found || inos[i] == (uint64_t) st.st_ino;
        ASSERT_TRUE(found);
        printf("  the kernel lists %zu other mount namespaces, ours among them\n", n);
}

/* Whether this kernel lets a namespace be left out as covered by our table: it lists the namespaces
 * (6.12+) and its statmount says that it reports subtypes (6.15+, as our own table through listmount
 * needs). */
/* Whether the kernel lists the mount namespaces to us (nsfs NS_MNT_GET_NEXT: Linux 6.12+, root). */
static bool kernel_lists_namespaces(void) {
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ uint64_t *inos = NULL;
        size_t n = 0;

        ASSERT_TRUE(proc_fd >= 0);
        return unlisted_list_namespaces(proc_fd, SAMPLE_MAX_NAMESPACES, NULL, &inos, &n, NULL, NULL) >= 0;
}

/* A live test that needs root and the kernel's list of mount namespaces: false (and a skip) without. */
static bool live_namespace_list_or_skip(void) {
        if (geteuid() != 0) {
                test_skip("not root");
                return false;
        }
        if (!kernel_lists_namespaces()) {
                test_skip("no kernel list of mount namespaces");
                return false;
        }
        return true;
}

static bool kernel_covers(void) {
        _cleanup_close_ int root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        MountTableBackend used = MOUNT_TABLE_BACKEND_MOUNTINFO;

        ASSERT_TRUE(root_fd >= 0);
        if (!kernel_lists_namespaces())
                return false;
        ASSERT_OK(mount_table_load_backend(root_fd, MOUNT_TABLE_BACKEND_LISTMOUNT, &t, NULL, &used));
        return used == MOUNT_TABLE_BACKEND_LISTMOUNT;
}

/* Whether namespace ino of walked (a sample that read every process) adds nothing to walked's own
 * table, by the test's own look: each of its mounts is of a pseudo filesystem that our table lists
 * under no other type, or of a superblock one of our mounts that nothing covers has, under the same
 * type. */
static bool covered_in(const Sample *walked, uint64_t ino) {
        const MountTable *t = walked->table;

        for (size_t i = 0; i < t->n_entries; i++) {
                const MountEntry *e = &t->entries[i];
                bool ours = false, other_type = false;

                if (walked->ns_of_mount[i] == 0 || walked->namespaces[walked->ns_of_mount[i] - 1].ino != ino)
                        continue;
                for (size_t j = 0; j < t->n_entries; j++)
                        if (walked->ns_of_mount[j] == 0 && t->entries[j].dev == e->dev) {
                                other_type = other_type || !streq(t->entries[j].fstype, e->fstype);
                                ours = ours || !walked->overmounted[j];
                        }
                if (other_type || (!ours && fs_class_from_fstype(e->fstype) != FS_CLASS_PSEUDO))
                        return false;
        }
        return true;
}

/* The namespaces of listed (the kernel's list) against those of walked (every process read): the
 * same, or, where the kernel lets a namespace be left out (covers), those of walked that our table
 * covers left out. */
static bool listed_as_walked(const Sample *listed, const Sample *walked, bool covers, size_t *ret_left_out) {
        size_t left_out = 0;

        for (size_t i = 0; i < listed->n_namespaces; i++) {
                bool found = false;

                for (size_t j = 0; j < walked->n_namespaces && !found; j++)
                        found = listed->namespaces[i].ino == walked->namespaces[j].ino;
                if (!found)
                        return false;
        }
        for (size_t j = 0; j < walked->n_namespaces; j++) {
                bool found = false;

                for (size_t i = 0; i < listed->n_namespaces && !found; i++)
                        found = listed->namespaces[i].ino == walked->namespaces[j].ino;
                if (found)
                        continue;
                if (!covers || !covered_in(walked, walked->namespaces[j].ino))
                        return false;
                left_out++;
        }
        *ret_left_out = left_out;
        return true;
}

static bool same_namespaces(const Sample *a, const Sample *b) {
        if (a->n_namespaces != b->n_namespaces)
                return false;
        for (size_t i = 0; i < a->n_namespaces; i++) {
                bool found = false;

                for (size_t j = 0; j < b->n_namespaces && !found; j++)
                        found = a->namespaces[i].ino == b->namespaces[j].ino;
                if (!found)
                        return false;
        }
        return true;
}

/* The entries of pid's namespace in s, each compared with the entry of the same mount id in o: both
 * backends give the same table (listmount by namespace id, the member's mountinfo text). */
static size_t same_namespace_entries(const Sample *s, const Sample *o, pid_t pid) {
        uint64_t ino = ns_ino_of(pid);
        size_t n = 0;

        for (size_t i = 0; i < s->table->n_entries; i++) {
                const MountEntry *e = &s->table->entries[i], *f = NULL;

                if (s->ns_of_mount[i] == 0 || s->namespaces[s->ns_of_mount[i] - 1].ino != ino)
                        continue;
                for (size_t j = 0; j < o->table->n_entries && !f; j++)
                        if (o->ns_of_mount[j] != 0 && o->namespaces[o->ns_of_mount[j] - 1].ino == ino &&
                            o->table->entries[j].mount_id == e->mount_id)
                                f = &o->table->entries[j];
                ASSERT_TRUE(f != NULL);
                ASSERT_EQ(e->parent_id, f->parent_id);
                ASSERT_EQ(e->dev, f->dev);
                ASSERT_STREQ(e->root, f->root);
                ASSERT_STREQ(e->mount_point, f->mount_point);
                ASSERT_STREQ(e->fstype, f->fstype);
                ASSERT_STREQ(e->source, f->source);
                ASSERT_STREQ(e->vfs_options, f->vfs_options);
                ASSERT_STREQ(e->fs_options, f->fs_options);
                ASSERT_EQ(e->read_only, f->read_only);
                n++;
        }
        return n;
}

/* Other mount namespaces are found the same way with the kernel's namespace list (Linux 6.12+: the
 * walk over proc stops once each has a member) and by reading every process (older kernels): a
 * namespace of our own making, with a tmpfs only it has, and the same set of namespaces. */
TEST(live_namespaces_both_ways) {
        char dir[] = "/tmp/test-sample-ns.XXXXXX";
        int release = -1;
        dev_t dev = 0;
        pid_t pid;

        if (geteuid() != 0) {
                test_skip("not root");
                return;
        }
        ASSERT_TRUE(test_mkdtemp(dir));
        pid = spawn_namespace(dir, &dev, &release);
        if (pid == 0) {
                test_skip("cannot make a mount namespace");
                ASSERT_OK(rmdir(dir));
                return;
        }
        kernel_lists_namespace(pid);
        for (unsigned attempt = 0;; attempt++) {
                _cleanup_(sample_freep) Sample *a = NULL, *b = NULL;
                _cleanup_close_ int root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                SampleSources src = { .root_fd = root_fd,
                                      .sysfs_root = "/sys",
                                      .debugfs_fd = -EBADF,
                                      .scan_namespaces = true };

                size_t left_out = 0;

                ASSERT_OK(sample_load(&src, &a));
                src.walk_all_processes = true;
                ASSERT_OK(sample_load(&src, &b));
                ASSERT_TRUE(has_namespace_mount(a, pid, dev));
                ASSERT_TRUE(has_namespace_mount(b, pid, dev));
                if (listed_as_walked(a, b, kernel_covers(), &left_out)) {
                        _cleanup_(sample_freep) Sample *c = NULL;
                        size_t n;

                        fprintf(stderr,
                                "  %zu other namespaces: the same both ways, but %zu that ours covers, left "
                                "out of the kernel's list\n",
                                a->n_namespaces, left_out);
                        /* the namespace's table as text (mountinfo backend) equals what a got */
                        src.walk_all_processes = false;
                        src.mount_backend = MOUNT_TABLE_BACKEND_MOUNTINFO;
                        ASSERT_OK(sample_load(&src, &c));
                        ASSERT_TRUE(has_namespace_mount(c, pid, dev));
                        n = same_namespace_entries(a, c, pid);
                        ASSERT_EQ(n, same_namespace_entries(c, a, pid));
                        ASSERT_TRUE(n > 0);
                        fprintf(stderr, "  its %zu mounts: the same through listmount and as text\n", n);
                        break;
                }
                ASSERT_TRUE(attempt < 5); /* namespaces that keep coming and going: too busy to compare */
                fprintf(stderr, "  the namespaces differ (one came or went meanwhile?), again\n");
                usleep(100 * 1000);
        }
        close(release);
        ASSERT_TRUE(waitpid(pid, NULL, 0) == pid);
        ASSERT_OK(rmdir(dir));
}

/* A namespace whose processes' root was moved over "/" (systemd-nspawn's way into a container):
 * the old root and its mounts stay below, at paths of the old root that no process there reaches,
 * and listmount by namespace id lists them all. In the child: a tmpfs new root with a tmpfs at /sub,
 * and, left in the old tree, an overlay (no pseudo filesystem, in no other table). Sends the devices
 * of /sub and of the overlay. */
static int setup_moved_root(const void *userdata, dev_t *devs) {
        const char *const *dirs = userdata, *root = dirs[0], *left = dirs[1];
        char path[PATH_MAX], opts[3 * PATH_MAX];
        struct stat st;

        if (mount("tmpfs", left, "tmpfs", 0, "size=1m") < 0)
                return 1;
        for (const char *d = "l\0u\0w\0m\0"; *d; d += 2) {
                snprintf(path, sizeof path, "%s/%s", left, d);
                if (mkdir(path, 0755) < 0)
                        return 1;
        }
        snprintf(path, sizeof path, "%s/m", left);
        snprintf(opts, sizeof opts, "lowerdir=%s/l,upperdir=%s/u,workdir=%s/w", left, left, left);
        if (mount("overlay", path, "overlay", 0, opts) < 0 || stat(path, &st) < 0)
                return 2;
        devs[1] = st.st_dev;
        snprintf(path, sizeof path, "%s/sub", root);
        if (mount("tmpfs", root, "tmpfs", 0, "size=1m") < 0 || mkdir(path, 0755) < 0 ||
            mount("tmpfs", path, "tmpfs", 0, "size=1m") < 0 || stat(path, &st) < 0)
                return 1;
        devs[0] = st.st_dev;
        if (chdir(root) < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 || chdir("/") < 0)
                return 3;
        return 0;
}

static pid_t spawn_moved_root(const char *root, const char *left, dev_t ret_dev[static 2], int *ret_release) {
        const char *dirs[] = { root, left };

        return spawn_child_namespace(setup_moved_root, dirs, ret_dev, 2, ret_release);
}

/* The mount of dev in pid's namespace in s, or NULL. */
static const MountEntry *namespace_mount(const Sample *s, pid_t pid, dev_t dev) {
        uint64_t ino = ns_ino_of(pid);

        for (size_t i = 0; i < s->table->n_entries; i++)
                if (s->ns_of_mount[i] != 0 && s->namespaces[s->ns_of_mount[i] - 1].ino == ino &&
                    s->table->entries[i].dev == dev)
                        return &s->table->entries[i];
        return NULL;
}

/* Through listmount, such a namespace is what its processes see, as in its mountinfo text: the old
 * root's mounts are not its mounts at paths of theirs (they were, "/" and "/proc" twice over), and a
 * superblock only they have is hidden (a reason: no process reaches it). */
TEST(live_namespace_root_moved) {
        char root[] = "/tmp/test-sample-root.XXXXXX", left[] = "/tmp/test-sample-left.XXXXXX";
        _cleanup_(sample_freep) Sample *a = NULL, *c = NULL;
        _cleanup_close_ int root_fd = -EBADF;
        char desc[128];
        const MountEntry *e;
        int release = -1;
        dev_t dev[2] = {};
        size_t n;
        pid_t pid;

        if (geteuid() != 0) {
                test_skip("not root");
                return;
        }
        ASSERT_TRUE(test_mkdtemp(root) && test_mkdtemp(left));
        pid = spawn_moved_root(root, left, dev, &release);
        if (pid == 0) {
                test_skip("cannot make such a mount namespace");
                ASSERT_OK(rmdir(root));
                ASSERT_OK(rmdir(left));
                return;
        }
        root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(root_fd >= 0);
        for (unsigned attempt = 0;; attempt++) {
                SampleSources src = { .root_fd = root_fd,
                                      .sysfs_root = "/sys",
                                      .debugfs_fd = -EBADF,
                                      .scan_namespaces = true };

                a = sample_free(a);
                c = sample_free(c);
                ASSERT_OK(sample_load(&src, &a));
                src.mount_backend = MOUNT_TABLE_BACKEND_MOUNTINFO;
                ASSERT_OK(sample_load(&src, &c));
                if (same_namespaces(a, c))
                        break;
                ASSERT_TRUE(attempt < 5);
                usleep(100 * 1000);
        }
        e = namespace_mount(a, pid, dev[0]);
        ASSERT_TRUE(e && streq(e->mount_point, "/sub"));
        ASSERT_TRUE(namespace_mount(c, pid, dev[0]));
        n = same_namespace_entries(a, c, pid);
        ASSERT_EQ(n, same_namespace_entries(c, a, pid));
        fprintf(stderr, "  its %zu mounts its processes see: the same through listmount and as text\n", n);
        ASSERT_TRUE(!namespace_mount(a, pid, dev[1]));
        snprintf(desc, sizeof desc, "mount namespace mnt:[%llu] (below the root of its process %d)",
                 (unsigned long long) ns_ino_of(pid), (int) pid);
        for (size_t k = 0; k < a->n_incomplete_why; k++)
                fprintf(stderr, "  incomplete: %s\n", a->incomplete_why[k]);
        ASSERT_TRUE(!a->complete && has_reason(a, desc, "overlay"));

        close(release);
        ASSERT_TRUE(waitpid(pid, NULL, 0) == pid);
        ASSERT_OK(rmdir(root));
        ASSERT_OK(rmdir(left));
}

/* A sample of the real root, its namespaces found through the kernel's list or by reading every
 * process (walk_all), our own table by backend b. */
static Sample *load_live_backend(bool walk_all, MountTableBackend b) {
        _cleanup_close_ int root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        SampleSources src = { .root_fd = root_fd,
                              .sysfs_root = "/sys",
                              .debugfs_fd = -EBADF,
                              .scan_namespaces = true,
                              .walk_all_processes = walk_all,
                              .mount_backend = b };
        Sample *s = NULL;

        ASSERT_OK(sample_load(&src, &s));
        return s;
}

static Sample *load_live(bool walk_all) {
        return load_live_backend(walk_all, MOUNT_TABLE_BACKEND_DEFAULT);
}

/* A mount namespace kept only by an nsfs mount whose mount point is hidden under another mount (its
 * copy of our mounts detached at once: it must pin no other test's filesystem or loop device): with
 * the kernel's list of namespaces (6.12+) it is compared through listmount and never walked to (no
 * reason names it); found by reading every process instead, the walk to its mount point is made
 * and, the point being hidden, is a reason (fail closed); once it is not hidden, the walk reaches
 * the namespace and reads it (no reason). */
TEST(live_nsfs_listed_not_walked) {
        char dir[] = "/tmp/test-sample-nsfs.XXXXXX", sub[64], nsf[80], cmd[768], want[128];

        if (!live_namespace_list_or_skip())
                return;
        ASSERT_TRUE(test_mkdtemp(dir));
        snprintf(sub, sizeof sub, "%s/sub", dir);
        snprintf(nsf, sizeof nsf, "%s/ns", sub);
        snprintf(cmd, sizeof cmd,
                 "mkdir '%s' && touch '%s' && unshare --mount='%s' --propagation private sh -c "
                 "'findmnt -rn -o TARGET | grep -vx / | sort -r | while read -r m; do "
                 "umount -l \"$(printf %%b \"$m\")\" 2>/dev/null; done; true' && "
                 "mount -t tmpfs ss-test-over '%s'",
                 sub, nsf, nsf, sub);
        if (system(cmd) != 0) {
                test_skip("cannot keep a mount namespace by an nsfs mount");
                snprintf(cmd, sizeof cmd, "umount -l '%s' 2>/dev/null; rm -rf '%s'", nsf, dir);
                (void) !system(cmd);
                return;
        }
        snprintf(want, sizeof want, "kept by the nsfs mount %s", nsf);
        bool named[2] = {}, reached_named;
        for (int walk_all = 0; walk_all <= 1; walk_all++) {
                _cleanup_(sample_freep) Sample *s = load_live(walk_all);

                for (size_t k = 0; k < s->n_incomplete_why; k++)
                        if (strstr(s->incomplete_why[k], nsf) ||
                            strstr(s->incomplete_why[k], "no process in it seen"))
                                fprintf(stderr, "  walk_all=%d: %s\n", walk_all, s->incomplete_why[k]);
                named[walk_all] = has_reason(s, want, NULL);
        }
        /* Not hidden any more: the walk reaches the nsfs file (told by fdinfo's mount id and inode
         * number, not by fstatfs()) and reads the namespace's mounts; no reason. */
        snprintf(cmd, sizeof cmd, "umount '%s'", sub);
        ASSERT_EQ(system(cmd), 0);
        {
                _cleanup_(sample_freep) Sample *s = load_live(true);

                for (size_t k = 0; k < s->n_incomplete_why; k++)
                        if (strstr(s->incomplete_why[k], nsf))
                                fprintf(stderr, "  reached: %s\n", s->incomplete_why[k]);
                reached_named = has_reason(s, want, NULL);
        }
        /* The mounts go before any assertion can end the test. */
        snprintf(cmd, sizeof cmd, "umount '%s' && rm -rf '%s'", nsf, dir);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_TRUE(!named[0]);
        ASSERT_TRUE(named[1]);
        ASSERT_TRUE(!reached_named);
}

/* A mount namespace no process is in, kept by an nsfs mount (its copy of our mounts detached at once),
 * with a tmpfs and an overlay of its own: listed through listmount (unlisted_scan_namespace(), by the
 * kernel's list or through the nsfs mount on the walk), its overlay is a superblock in no table of
 * ours, a reason that names it; its tmpfs (nothing to sync) is none. */
TEST(live_nsfs_namespace_overlay_hidden) {
        char dir[] = "/tmp/test-sample-nsov.XXXXXX", nsf[64], cmd[1536], want[64];
        unsigned ma = 0, mi = 0;
        bool named[2] = {}, tmpfs_named = false;
        FILE *f;

        if (!live_namespace_list_or_skip())
                return;
        ASSERT_TRUE(test_mkdtemp(dir));
        snprintf(nsf, sizeof nsf, "%s/ns", dir);
        snprintf(cmd, sizeof cmd,
                 "mkdir '%s/t' && touch '%s' && unshare --mount='%s' --propagation private sh -c "
                 "'findmnt -rn -o TARGET | grep -vx / | sort -r | while read -r m; do "
                 "umount -l \"$(printf %%b \"$m\")\" 2>/dev/null; done; "
                 "mount -t tmpfs ss-test-t %s/t && mkdir %s/t/l %s/t/u %s/t/w %s/t/m && "
                 "mount -t overlay ss-test-ov -o lowerdir=%s/t/l,upperdir=%s/t/u,workdir=%s/t/w %s/t/m && "
                 "mountpoint -d %s/t/m'",
                 dir, nsf, nsf, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir);
        f = popen(cmd, "r");
        ASSERT_TRUE(f);
        if (fscanf(f, "%u:%u", &ma, &mi) != 2 || pclose(f) != 0) {
                test_skip("cannot keep a mount namespace with an overlay by an nsfs mount");
                snprintf(cmd, sizeof cmd, "umount -l '%s' 2>/dev/null; rm -rf '%s'", nsf, dir);
                (void) !system(cmd);
                return;
        }
        snprintf(want, sizeof want, "overlay superblock %u:%u ", ma, mi);
        for (int walk_all = 0; walk_all <= 1; walk_all++) {
                _cleanup_(sample_freep) Sample *s = load_live(walk_all);

                named[walk_all] = has_reason(s, want, NULL);
                tmpfs_named = tmpfs_named || has_reason(s, "tmpfs superblock", "ss-test-t");
                fprintf(stderr, "  walk_all=%d: the overlay %s\n", walk_all,
                        named[walk_all] ? "is a reason" : "is NOT a reason");
        }
        /* The mounts go before any assertion can end the test. */
        snprintf(cmd, sizeof cmd, "umount '%s' && rm -rf '%s'", nsf, dir);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_TRUE(named[0]);
        ASSERT_TRUE(named[1]);
        ASSERT_TRUE(!tmpfs_named);
}

/* The prologue of the live tests of a namespace with an overlay: the kernel's list of namespaces
 * (else skipped), dir made, a child in a namespace of its own with an overlay mounted below dir
 * (spawn_child_namespace()). Returns its pid, or 0 when skipped (dir removed). */
static pid_t spawn_overlay_namespace_or_skip(char *dir, dev_t *dev, int *release) {
        pid_t pid;

        if (!live_namespace_list_or_skip())
                return 0;
        ASSERT_TRUE(test_mkdtemp(dir));
        pid = spawn_child_namespace(setup_overlay, dir, dev, 1, release);
        if (pid == 0) {
                test_skip("cannot make a mount namespace with an overlay");
                ASSERT_OK(rmdir(dir));
        }
        return pid;
}

/* A mount namespace that only an open file keeps (its process exited), with an overlay of its own:
 * the walk finds no member, so the namespaces the kernel lists and the walk did not find are listed
 * through listmount (ns_scan_unseen()), and its overlay, a superblock in no table of ours, is a
 * reason that names it. */
TEST(live_namespace_kept_by_fd) {
        char dir[] = "/tmp/test-sample-nsfd.XXXXXX", path[64], want[64];
        int release = -1, ns_fd;
        bool named;
        dev_t dev = 0;
        pid_t pid;

        pid = spawn_overlay_namespace_or_skip(dir, &dev, &release);
        if (pid == 0)
                return;
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
        ns_fd = open(path, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(ns_fd >= 0);
        close(release);
        ASSERT_TRUE(waitpid(pid, NULL, 0) == pid);
        snprintf(want, sizeof want, "overlay superblock %u:%u ", major(dev), minor(dev));
        {
                _cleanup_(sample_freep) Sample *s = load_live(false);

                named = has_reason(s, want, NULL);
        }
        close(ns_fd); /* the namespace goes, its mounts with it */
        ASSERT_OK(rmdir(dir));
        ASSERT_TRUE(named);
}

/* Every way the kernel's list of mount namespaces can be missing on a real procfs is a reason, each
 * named: the errors of kernels before 6.12 (ENOTTY, EINVAL), over the bound (E2BIG), and any other,
 * EPERM included outside a PID namespace of its own (this test runs in the initial one). A fixture
 * procfs gives none (it has no namespaces of its own). */
TEST(namespace_list_errors) {
        static const struct {
                int error;
                const char *want;
        } cases[] = {
                { -ENOTTY, "was not had (Linux 6.12 or later is needed)" },
                { -EINVAL, "was not had (Linux 6.12 or later is needed)" },
                { -E2BIG, "was not had (more mount namespaces than it is read for)" },
                { -EPERM, "was not had (Operation not permitted)" },
                { -ENOSYS, "was not had (Function not implemented)" },
        };
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int fixture_fd = open(FIXTURES_DIR "/roots/laptop/proc",
                                              O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;

        ASSERT_TRUE(proc_fd >= 0 && fixture_fd >= 0);
        if (fstatat(proc_fd, "self/ns/pid", &st, 0) < 0 || st.st_ino != 0xEFFFFFFCULL) {
                test_skip("not in the initial PID namespace");
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(reasons_done) Reasons why = {}, none = {};

                ASSERT_OK(sample_ns_unlisted_reason(proc_fd, cases[i].error, false, false, &why));
                ASSERT_EQ(why.n, 1U);
                fprintf(stderr, "   %s\n", why.v[0]);
                ASSERT_TRUE(strstr(why.v[0], cases[i].want));
                ASSERT_OK(sample_ns_unlisted_reason(fixture_fd, cases[i].error, false, false, &none));
                ASSERT_EQ(none.n, 0U);
        }
}

/* Review (stop 26, finding 1): without the kernel's list of mount namespaces (before 6.12, SELinux,
 * no privilege, more than it is read for) a namespace kept only by an open file is seen by nothing:
 * on the real /proc that is a reason; with the list (the control), or on a fixture, none. */
TEST(namespace_list_unavailable) {
        static const char want[] = "the kernel's list of mount namespaces was not used (every process read "
                                   "instead)";
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ uint64_t *inos = NULL;
        _cleanup_(sample_freep) Sample *f = load_root("laptop", "nonexistent");
        size_t n = 0;

        ASSERT_TRUE(!has_reason(f, "the kernel's list of mount namespaces", NULL));
        ASSERT_TRUE(proc_fd >= 0);
        if (unlisted_list_namespaces(proc_fd, SAMPLE_MAX_NAMESPACES, NULL, &inos, &n, NULL, NULL) < 0) {
                test_skip("no kernel list of mount namespaces");
                return;
        }
        /* Under SELinux the list is not trusted: a root whose sys/fs/selinux/enforce exists, its proc
         * the real one (a bind mount, gone before any assertion). */
        {
                char dir[] = "/tmp/test-sample-selinux.XXXXXX", cmd[256];
                _cleanup_close_ int root_fd = -EBADF;
                _cleanup_(sample_freep) Sample *s = NULL;
                SampleSources src = { .sysfs_root = "/sys", .debugfs_fd = -EBADF, .scan_namespaces = true };
                int r;

                ASSERT_TRUE(test_mkdtemp(dir));
                snprintf(cmd, sizeof cmd,
                         "mkdir -p %s/proc %s/sys/fs/selinux && touch %s/sys/fs/selinux/enforce && "
                         "mount --bind /proc %s/proc",
                         dir, dir, dir, dir);
                if (system(cmd) == 0) {
                        root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        src.root_fd = root_fd;
                        r = sample_load(&src, &s);
                        snprintf(cmd, sizeof cmd, "umount %s/proc", dir);
                        ASSERT_EQ(system(cmd), 0);
                        ASSERT_OK(r);
                        ASSERT_TRUE(has_reason(s,
                                               "the kernel's list of mount namespaces was not used (SELinux "
                                               "may leave namespaces out of it)",
                                               NULL));
                } else
                        test_skip("cannot bind /proc: the SELinux case");
                snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
                ASSERT_EQ(system(cmd), 0);
        }
        for (int walk_all = 0; walk_all <= 1; walk_all++) {
                _cleanup_(sample_freep) Sample *s = load_live(walk_all);

                ASSERT_EQ(has_reason(s, want, NULL), walk_all == 1);
                if (walk_all)
                        ASSERT_TRUE(!s->complete);
        }
}

/* The grandchild of pidns_sample_reason(), PID 1 of its namespace: 0 when the reason is there, 1
 * when not, 77 when the case cannot be set up here, 2 on failure. */
static int pidns_grandchild(bool own_proc) {
        char dir[] = "/tmp/test-sample-pidns.XXXXXX", proc[64] = "";
        _cleanup_free_ uint64_t *inos = NULL;
        int root_fd = -EBADF, proc_fd = -EBADF, ret = 77;
        Sample *s = NULL;
        SampleSources src = { .sysfs_root = "/sys", .debugfs_fd = -EBADF, .scan_namespaces = true };
        size_t n = 0;

        if (own_proc) {
                if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || !test_mkdtemp(dir))
                        return 77;
                snprintf(proc, sizeof proc, "%s/proc", dir);
                if (mkdir(proc, 0755) < 0 || mount("proc", proc, "proc", 0, NULL) < 0)
                        goto finish;
        }
        root_fd = open(own_proc ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        proc_fd = openat(root_fd, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* listed, or refused for another reason than the PID namespace: another case */
        if (proc_fd < 0 ||
            unlisted_list_namespaces(proc_fd, SAMPLE_MAX_NAMESPACES, NULL, &inos, &n, NULL, NULL) != -EPERM)
                goto finish;
        src.root_fd = root_fd;
        ret = sample_load(&src, &s) < 0                                                  ? 2
              : has_reason(s, "the kernel's list of mount namespaces was not had", NULL) ? 0
                                                                                         : 1;
        sample_free(s);
finish:
        safe_close(proc_fd);
        safe_close(root_fd);
        if (own_proc) {
                (void) umount(proc);
                (void) rmdir(proc);
                (void) rmdir(dir);
        }
        return ret;
}

/* In a PID namespace of its own (a grandchild after unshare(CLONE_NEWPID)), the kernel does not list
 * namespaces (EPERM). Returns pidns_grandchild()'s status. own_proc: a procfs of its own (a
 * container), else the machine's /proc. */
static int pidns_sample_reason(bool own_proc) {
        pid_t child = fork();
        int status;

        ASSERT_TRUE(child >= 0);
        if (child == 0) {
                pid_t g;

                if (unshare(CLONE_NEWPID | (own_proc ? CLONE_NEWNS : 0)) < 0)
                        _exit(77);
                g = fork();
                if (g < 0)
                        _exit(77);
                if (g == 0)
                        _exit(pidns_grandchild(own_proc));
                if (waitpid(g, &status, 0) != g || !WIFEXITED(status))
                        _exit(2);
                _exit(WEXITSTATUS(status));
        }
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* Review (stop 26, third): EPERM in a PID namespace is the container's view only when its procfs is
 * its own; seen through the machine's /proc (unshare -p without a new /proc), every process shows,
 * and a namespace kept only by an open file is seen by nothing: a reason. */
TEST(namespace_list_pidns) {
        int machine = pidns_sample_reason(false), own = pidns_sample_reason(true);

        if (machine == 77 || own == 77) {
                test_skip("no PID namespace without the kernel's list here");
                return;
        }
        ASSERT_EQ(machine, 0); /* the machine's /proc: a reason */
        ASSERT_EQ(own, 1);     /* a container's own procfs: none */
}

/* The walk's last check (review, stop 26: mount ids are reused): the mount our fd is on must be
 * listed, under its id, as the nsfs mount of that namespace. A namespace kept by an nsfs mount
 * (unshare --mount=FILE): listed; another inode, a tmpfs's id, an id no mount has: not. */
TEST(nsfs_mount_listed) {
        char dir[] = "/tmp/test-sample-nsfs.XXXXXX", cmd[256], path[128];
        struct statx ns, tmp;
        _cleanup_close_ int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r1, r2, r3, r4;

        if (geteuid() != 0) {
                test_skip("not root");
                return;
        }
        ASSERT_TRUE(proc >= 0);
        ASSERT_TRUE(test_mkdtemp(dir));
        snprintf(cmd, sizeof cmd,
                 "cd %s && mkdir t && mount -t tmpfs none t && touch ns && unshare --mount=%s/ns true", dir,
                 dir);
        if (system(cmd) != 0) {
                test_skip("cannot keep a mount namespace by an nsfs mount");
                snprintf(cmd, sizeof cmd, "umount -l %s/t; rm -rf %s", dir, dir);
                (void) !system(cmd);
                return;
        }
        snprintf(path, sizeof path, "%s/ns", dir);
        ASSERT_OK(statx(AT_FDCWD, path, 0, STATX_MNT_ID | STATX_INO, &ns));
        snprintf(path, sizeof path, "%s/t", dir);
        ASSERT_OK(statx(AT_FDCWD, path, 0, STATX_MNT_ID | STATX_INO, &tmp));
        r1 = unlisted_nsfs_mount_listed(proc, 0, (int) ns.stx_mnt_id, ns.stx_ino);
        r2 = unlisted_nsfs_mount_listed(proc, 0, (int) ns.stx_mnt_id, ns.stx_ino + 1);
        r3 = unlisted_nsfs_mount_listed(proc, 0, (int) tmp.stx_mnt_id, ns.stx_ino);
        r4 = unlisted_nsfs_mount_listed(proc, 0, INT_MAX, ns.stx_ino);
        snprintf(cmd, sizeof cmd, "umount %s/ns %s/t && rm -rf %s", dir, dir, dir);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_EQ(r1, 1);
        ASSERT_EQ(r2, 0);
        ASSERT_EQ(r3, 0);
        ASSERT_EQ(r4, 0);
}

/* ns_cover_mount(): a mount of another namespace adds nothing to our table only when our table
 * reaches the same superblock under the same type, or when it is a pseudo filesystem that our table
 * lists under no other type. */
TEST(ns_cover_mount_rules) {
        MountEntry e[] = {
                { .dev = makedev(8, 1), .fstype = (char *) "ext4" },        /* 0 reachable */
                { .dev = makedev(0, 40), .fstype = (char *) "fuse.sshfs" }, /* 1 reachable */
                { .dev = makedev(8, 2), .fstype = (char *) "xfs" },         /* 2 covered */
                { .dev = makedev(0, 30), .fstype = (char *) "tmpfs" },      /* 3 covered */
                { .dev = makedev(8, 3), .fstype = (char *) "btrfs" },       /* 4 covered */
                { .dev = makedev(8, 3), .fstype = (char *) "btrfs" },       /* 5 reachable */
                { .dev = makedev(0, 50), .fstype = (char *) "tmpfs" },      /* 6 reachable */
        };
        MountTable t = { .entries = e, .n_entries = ELEMENTSOF(e) };
        bool reachable[] = { true, true, false, false, false, true, true };
        size_t by_dev[ELEMENTSOF(e)];
        NsCover c = { .t = &t, .by_dev = by_dev, .reachable = reachable };

        /* sorted by device, as ns_cover_make() sorts */
        for (size_t i = 0; i < ELEMENTSOF(e); i++)
                by_dev[i] = i;
        for (size_t i = 1; i < ELEMENTSOF(e); i++)
                for (size_t j = i; j > 0 && e[by_dev[j - 1]].dev > e[by_dev[j]].dev; j--) {
                        size_t x = by_dev[j];
                        by_dev[j] = by_dev[j - 1];
                        by_dev[j - 1] = x;
                }

        ASSERT_TRUE(ns_cover_mount(&c, makedev(8, 1), "ext4"));
        ASSERT_TRUE(ns_cover_mount(&c, makedev(0, 40), "fuse.sshfs"));
        ASSERT_TRUE(ns_cover_mount(&c, makedev(8, 3), "btrfs"));  /* one of its mounts reachable */
        ASSERT_TRUE(ns_cover_mount(&c, makedev(0, 99), "tmpfs")); /* pseudo, in no table of ours */
        ASSERT_TRUE(ns_cover_mount(&c, makedev(0, 30), "tmpfs")); /* pseudo, ours covered */
        ASSERT_TRUE(ns_cover_mount(&c, makedev(0, 50), "tmpfs"));
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(8, 9), "ext4")); /* in no table of ours */
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(0, 99), "overlay"));
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(0, 99), "fuse.sshfs"));
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(8, 2), "xfs")); /* ours under another mount */
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(8, 1), "xfs")); /* the number went elsewhere */
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(0, 40), "fuse.other"));
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(0, 40), "fuse"));
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(0, 50), "proc")); /* pseudo, yet listed as tmpfs */
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(0, 30), "sysfs"));

        t.n_entries = 0; /* an empty table */
        ASSERT_TRUE(ns_cover_mount(&c, makedev(0, 99), "tmpfs"));
        ASSERT_TRUE(!ns_cover_mount(&c, makedev(8, 1), "ext4"));
}

static int setup_nothing(const void *userdata, dev_t *devs) {
        devs[0] = 0;
        return 0;
}

static bool has_namespace(const Sample *s, pid_t pid) {
        uint64_t ino = ns_ino_of(pid);

        for (size_t i = 0; i < s->n_namespaces; i++)
                if (s->namespaces[i].ino == ino)
                        return true;
        return false;
}

/* A private tmpfs and a bind mount of a directory of ours: nothing our table does not reach. */
static int setup_covered(const void *userdata, dev_t *devs) {
        const char *dir = userdata;
        char sub[PATH_MAX];
        struct stat st;

        snprintf(sub, sizeof sub, "%s/t", dir);
        if (mount(dir, dir, NULL, MS_BIND, NULL) < 0 || mount("tmpfs", sub, "tmpfs", 0, "size=1m") < 0 ||
            stat(dir, &st) < 0)
                return 1;
        devs[0] = st.st_dev;
        return 0;
}

/* The whole view of the namespaces (the kernel lists them, 6.12+; statmount says it reports
 * subtypes, 6.15+): a namespace whose mounts are all of superblocks our table reaches (a service's
 * copy of ours with a private /tmp) is left out of the table, member or not; read by walking every
 * process, it is there. The namespace of live_namespaces_both_ways (an overlay of its own) is the
 * control: it is read both ways. */
/* A child in a mount namespace of its own that our table covers (setup_covered(), below dir, a
 * "/tmp/...XXXXXX" template), its device in *dev: its pid, or 0 when the test is skipped (not root,
 * no namespace to be had; nothing left behind). covered_namespace_end() lets it go and cleans up. */
static pid_t covered_namespace_begin(char *dir, char sub[static PATH_MAX], dev_t *dev, int *release) {
        pid_t pid;

        if (geteuid() != 0) {
                test_skip("not root");
                return 0;
        }
        ASSERT_TRUE(test_mkdtemp(dir));
        snprintf(sub, PATH_MAX, "%s/t", dir);
        ASSERT_OK(mkdir(sub, 0755));
        pid = spawn_child_namespace(setup_covered, dir, dev, 1, release);
        if (pid == 0) {
                test_skip("cannot make a mount namespace");
                ASSERT_OK(rmdir(sub));
                ASSERT_OK(rmdir(dir));
        }
        return pid;
}

static void covered_namespace_end(pid_t pid, int release, const char *dir, const char *sub) {
        close(release);
        ASSERT_TRUE(waitpid(pid, NULL, 0) == pid);
        ASSERT_OK(rmdir(sub));
        ASSERT_OK(rmdir(dir));
}

TEST(live_namespace_covered) {
        char dir[] = "/tmp/test-sample-cov.XXXXXX", sub[PATH_MAX];
        int release = -1;
        dev_t dev = 0;
        pid_t pid = covered_namespace_begin(dir, sub, &dev, &release);

        if (pid == 0)
                return;
        {
                _cleanup_(sample_freep) Sample *listed = load_live(false), *walked = load_live(true);
                bool covers = kernel_covers();

                ASSERT_TRUE(has_namespace(walked, pid));
                ASSERT_TRUE(has_namespace_mount(walked, pid, dev));
                fprintf(stderr, "  %s: %zu other namespaces read, %zu by walking every process\n",
                        covers ? "left out" : "read (no kernel list, or statmount before 6.15)",
                        listed->n_namespaces, walked->n_namespaces);
                ASSERT_EQ(has_namespace(listed, pid), !covers);
        }
        covered_namespace_end(pid, release, dir, sub);
}

/* Review AE, H1: the main process's own look at other namespaces (one statmount(2) per mount of
 * each, the walk over proc, each table read) stops at the sample's bound: with it passed before the
 * sample begins (until 1), a namespace of ours is neither read nor taken as looked at, and a reason
 * says why, whether the kernel lists the namespaces (their cover check stops) or every process is
 * read (the walk, or the reads after it, stop). Without a bound (the control) no such reason. */
TEST(live_namespaces_scan_bounded) {
        char dir[] = "/tmp/test-sample-bnd.XXXXXX", sub[PATH_MAX];
        int release = -1;
        dev_t dev = 0;
        pid_t pid = covered_namespace_begin(dir, sub, &dev, &release);

        if (pid == 0)
                return;
        for (int walk_all = 0; walk_all <= 1; walk_all++)
                for (usec_t until = 0; until <= 1; until++) {
                        _cleanup_close_ int root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        SampleSources src = { .root_fd = root_fd,
                                              .sysfs_root = "/sys",
                                              .debugfs_fd = -EBADF,
                                              .scan_namespaces = true,
                                              .walk_all_processes = walk_all,
                                              .until = until };
                        _cleanup_(sample_freep) Sample *s = NULL;
                        bool said = false;

                        ASSERT_OK(sample_load(&src, &s));
                        for (size_t i = 0; i < s->n_incomplete_why; i++)
                                said = said || strstr(s->incomplete_why[i], "within the sample's bound");
                        fprintf(stderr, "  %s, %s: %zu other namespaces read, bound said: %s\n",
                                walk_all ? "every process" : "the kernel's list",
                                until ? "bound passed" : "no bound", s->n_namespaces, said ? "yes" : "no");
                        ASSERT_EQ(said, until > 0);
                        if (until > 0) {
                                ASSERT_TRUE(!s->complete);
                                ASSERT_TRUE(!has_namespace(s, pid));
                        } else if (walk_all)
                                ASSERT_TRUE(has_namespace(s, pid));
                }
        covered_namespace_end(pid, release, dir, sub);
}

/* The opens below proc of one process fail as after its exit, proc_gone_pid (0: none; test-sample is
 * linked with --wrap=openat64, test/meson.build; every other open passes through): a member the walk
 * over proc saw that is gone by the time its namespace's table is read. */
static pid_t proc_gone_pid;

int __real_openat64(int dir_fd, const char *path, int flags, ...);
int __wrap_openat64(int dir_fd, const char *path, int flags, ...);

int __wrap_openat64(int dir_fd, const char *path, int flags, ...) {
        char prefix[32];
        int mode = 0, n;

        if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
                va_list ap;

                va_start(ap, flags);
                mode = va_arg(ap, int);
                va_end(ap);
        }
        n = snprintf(prefix, sizeof prefix, "%d/", (int) proc_gone_pid);
        if (proc_gone_pid > 0 && path && strncmp(path, prefix, (size_t) n) == 0) {
                errno = ESRCH;
                return -1;
        }
        return __real_openat64(dir_fd, path, flags, mode);
}

/* The only member of a namespace is gone between the walk over proc and the read of the namespace's
 * table (ns_load_listmount() and ns_member_text() get ESRCH: the "gone" candidate), while the kernel
 * still lists the namespace (an fd may keep it; here the member itself, its opens below proc failing
 * as after its exit). Never read as gone with the sample complete: listed through listmount as one
 * the walk did not find (ns_scan_unseen()), its overlay, a superblock in no table of ours, is a
 * superblock of the sample or a reason that names it. Our table by both backends (listmount first,
 * or the mountinfo text alone); the control without the fault reads the namespace through its member. */
TEST(live_namespace_member_gone_before_read) {
        static const MountTableBackend backends[] = { MOUNT_TABLE_BACKEND_LISTMOUNT,
                                                      MOUNT_TABLE_BACKEND_MOUNTINFO };
        char dir[] = "/tmp/test-sample-nsgone.XXXXXX", want[64];
        bool control_read, control_named, via_member[2], seen[2];
        int release = -1;
        dev_t dev = 0;
        pid_t pid;

        pid = spawn_overlay_namespace_or_skip(dir, &dev, &release);
        if (pid == 0)
                return;
        snprintf(want, sizeof want, "overlay superblock %u:%u ", major(dev), minor(dev));
        {
                _cleanup_(sample_freep) Sample *s = load_live(false);

                control_read = has_namespace_mount(s, pid, dev);
                control_named = has_reason(s, want, NULL);
        }
        for (size_t b = 0; b < ELEMENTSOF(backends); b++) {
                _cleanup_(sample_freep) Sample *s = NULL;

                proc_gone_pid = pid;
                s = load_live_backend(false, backends[b]);
                proc_gone_pid = 0;
                via_member[b] = has_namespace(s, pid);
                seen[b] = find_sb(s, major(dev), minor(dev)) || has_reason(s, want, NULL);
                for (size_t k = 0; k < s->n_incomplete_why; k++)
                        if (strstr(s->incomplete_why[k], want))
                                fprintf(stderr, "  backend %zu: %s\n", b, s->incomplete_why[k]);
                fprintf(stderr, "  backend %zu, member gone: namespace %s, overlay %s\n", b,
                        via_member[b] ? "read" : "not read through a member", seen[b] ? "seen" : "NOT seen");
        }
        close(release);
        ASSERT_TRUE(waitpid(pid, NULL, 0) == pid);
        ASSERT_OK(rmdir(dir));
        ASSERT_TRUE(control_read);
        ASSERT_TRUE(!control_named);
        for (size_t b = 0; b < ELEMENTSOF(backends); b++) {
                ASSERT_TRUE(!via_member[b]); /* the fault took: no member read */
                ASSERT_TRUE(seen[b]);
        }
}

/* Faults in the listmount and statmount calls about one mount namespace, cover_fault_ns (test-sample
 * is linked with --wrap=syscall, test/meson.build; every other call passes through): what
 * unlisted_namespace_covered() makes of a namespace it cannot list or read in full. */
typedef enum CoverFault {
        COVER_FAULT_NONE,
        COVER_FAULT_LISTMOUNT,    /* listmount fails (EPERM) */
        COVER_FAULT_STATMOUNT,    /* the cover's statmount fails (EPERM): no unmount meanwhile */
        COVER_FAULT_NO_SUPPORTED, /* statmount does not say that it reports subtypes (before 6.15) */
        COVER_FAULT_BAD_OFFSET,   /* the type's offset at the end of the buffer */
        COVER_FAULT_LONG_TYPE,    /* a type longer than any of ours (a FUSE subtype may be) */
        _COVER_FAULT_MAX,
} CoverFault;

static CoverFault cover_fault;
static uint64_t cover_fault_ns;

/* What the cover asks statmount for (unlisted.c, NS_COVER_WANT). */
#define COVER_WANT \
        (SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_FS_TYPE | SS_STATMOUNT_FS_SUBTYPE | SS_STATMOUNT_SUPPORTED_MASK)

long __real_syscall(long n, ...);
long __wrap_syscall(long n, ...);

/* Every syscall() of ours takes at most four arguments. */
long __wrap_syscall(long n, ...) {
        const struct ss_mnt_id_req *q;
        struct ss_statmount *sm;
        size_t size;
        long a[4], r;
        va_list ap;

        va_start(ap, n);
        for (size_t i = 0; i < ELEMENTSOF(a); i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        q = (const struct ss_mnt_id_req *) a[0];
        if (cover_fault == COVER_FAULT_NONE || (n != __NR_listmount && n != __NR_statmount) ||
            q->mnt_ns_id != cover_fault_ns || (n == __NR_statmount && q->param != COVER_WANT))
                return __real_syscall(n, a[0], a[1], a[2], a[3]);
        if (n == __NR_listmount || cover_fault == COVER_FAULT_STATMOUNT) {
                if (n == __NR_listmount && cover_fault != COVER_FAULT_LISTMOUNT)
                        return __real_syscall(n, a[0], a[1], a[2], a[3]);
                errno = EPERM;
                return -1;
        }
        r = __real_syscall(n, a[0], a[1], a[2], a[3]);
        sm = (struct ss_statmount *) a[1];
        size = (size_t) a[2];
        if (r < 0)
                return r;
        if (cover_fault == COVER_FAULT_NO_SUPPORTED)
                sm->mask &= ~(uint64_t) SS_STATMOUNT_SUPPORTED_MASK;
        else if (cover_fault == COVER_FAULT_BAD_OFFSET)
                sm->fs_type = (uint32_t) (size - sizeof *sm);
        else if (cover_fault == COVER_FAULT_LONG_TYPE) {
                /* "ext4xxx...": 300 characters, at the end of the strings */
                size_t at = size - sizeof *sm - 301;

                memset(sm->str + at, 'x', 300);
                memcpy(sm->str + at, "ext4", 4);
                sm->str[at + 300] = 0;
                sm->fs_type = (uint32_t) at;
                sm->mask &= ~(uint64_t) SS_STATMOUNT_FS_SUBTYPE;
        }
        return r;
}

/* A namespace the cover cannot read in full is never left out as covered (fail closed): with each
 * fault in its listing, the namespace of live_namespace_covered (a copy of ours with a private tmpfs)
 * is read; without one (the control), it is left out. */
TEST(live_namespace_cover_faults) {
        static const char *const names[_COVER_FAULT_MAX] = {
                "none",
                "listmount fails",
                "statmount fails",
                "no supported_mask",
                "offset out of the buffer",
                "type too long",
        };
        char dir[] = "/tmp/test-sample-covf.XXXXXX", sub[PATH_MAX], path[64];
        int release = -1, ns_fd;
        dev_t dev = 0;
        pid_t pid;

        if (geteuid() != 0) {
                test_skip("not root");
                return;
        }
        if (!kernel_covers()) {
                test_skip("no kernel list of namespaces, or statmount before 6.15: nothing is left out");
                return;
        }
        ASSERT_TRUE(test_mkdtemp(dir));
        snprintf(sub, sizeof sub, "%s/t", dir);
        ASSERT_OK(mkdir(sub, 0755));
        pid = spawn_child_namespace(setup_covered, dir, &dev, 1, &release);
        if (pid == 0) {
                test_skip("cannot make a mount namespace");
                ASSERT_OK(rmdir(sub));
                ASSERT_OK(rmdir(dir));
                return;
        }
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
        ns_fd = open(path, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(ns_fd >= 0);
        ASSERT_OK(mount_table_namespace_id(ns_fd, &cover_fault_ns));
        close(ns_fd);
        for (CoverFault f = COVER_FAULT_NONE; f < _COVER_FAULT_MAX; f++) {
                _cleanup_(sample_freep) Sample *s = NULL;

                cover_fault = f;
                s = load_live(false);
                cover_fault = COVER_FAULT_NONE;
                fprintf(stderr, "  %s: %s\n", names[f], has_namespace(s, pid) ? "read" : "left out");
                ASSERT_EQ(has_namespace(s, pid), f != COVER_FAULT_NONE);
        }
        close(release);
        ASSERT_TRUE(waitpid(pid, NULL, 0) == pid);
        ASSERT_OK(rmdir(sub));
        ASSERT_OK(rmdir(dir));
}

/* The other namespace's overlay (setup: nothing, a copy of ours at the time) is left out as covered
 * while our mount of it reaches all of it, and read once change() has made our mount of it (dir/m)
 * no longer reach it: a tmpfs over it; or a read-only bind remount (review P, P5: the superblock stays
 * writable, and a read-only mount of ours would have it taken for read-only in the plan). Run in a
 * child of our own namespace (ours for the sample). Exit status: 0 or the number of the check that
 * failed, 90 and above: not set up. */
static int covered_then(const char *dir, int (*change)(const char *path)) {
        char path[PATH_MAX];
        int release = -1, r;
        dev_t overlay, none;
        pid_t pid;

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", dir, "tmpfs", 0, "size=1m") < 0 || mount_overlay_in(dir, &overlay) < 0)
                return 90;
        pid = spawn_child_namespace(setup_nothing, NULL, &none, 1, &release);
        if (pid == 0)
                return 91;
        {
                _cleanup_(sample_freep) Sample *s = load_live(false);

                /* left out while our mount reaches all of it */
                r = has_namespace(s, pid) && kernel_covers() ? 1 : 0;
        }
        snprintf(path, sizeof path, "%s/m", dir);
        if (r == 0 && change(path) < 0)
                r = 92;
        if (r == 0) {
                _cleanup_(sample_freep) Sample *s = load_live(false), *w = load_live(true);

                if (!has_namespace_mount(w, pid, overlay))
                        r = 93; /* the test's premise: walking every process reads it */
                else if (!has_namespace_mount(s, pid, overlay))
                        r = 2;
        }
        close(release);
        (void) waitpid(pid, NULL, 0);
        return r;
}

static int overmount(const char *path) {
        return mount("tmpfs", path, "tmpfs", 0, "size=1m");
}

static int remount_read_only(const char *path) {
        return mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
}

static void test_covered_then(int (*change)(const char *path), const char *what) {
        char dir[] = "/tmp/test-sample-cov.XXXXXX";
        int status = 0;
        pid_t pid;

        if (geteuid() != 0) {
                test_skip("not root");
                return;
        }
        ASSERT_TRUE(test_mkdtemp(dir));
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0)
                _exit(covered_then(dir, change));
        ASSERT_TRUE(waitpid(pid, &status, 0) == pid);
        ASSERT_OK(rmdir(dir));
        ASSERT_TRUE(WIFEXITED(status));
        if (WEXITSTATUS(status) >= 90) {
                test_skip("cannot set up mount namespaces with an overlay (%d)", WEXITSTATUS(status));
                return;
        }
        fprintf(stderr, "  %s%s\n", kernel_covers() ? "left out, then read once " : "read both times",
                kernel_covers() ? what : " (no kernel list, or statmount before 6.15)");
        ASSERT_EQ(WEXITSTATUS(status), 0);
}

TEST(live_namespace_covered_until_overmounted) {
        test_covered_then(overmount, "ours is covered");
}

TEST(live_namespace_covered_until_read_only) {
        test_covered_then(remount_read_only, "our mount is read-only");
}

static Sample *sample_of_text(const char *text) {
        MountTable *t = NULL;
        Sample *s = NULL;
        unsigned n_bad = 0;

        ASSERT_OK(mount_table_parse(text, strlen(text), &t, &n_bad));
        ASSERT_EQ(n_bad, 0U);
        ASSERT_OK(sample_build(&t, NULL, &s));
        s->complete = true;
        return s;
}

/* sample_changed_since() (review N, N1 and N2): what a sample taken again right before the knob's
 * write may show that the pass's plan cannot account for. */
TEST(changed_since) {
        static const char base[] = "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                                   "21 20 0:5 / /tmp rw - tmpfs tmpfs rw\n"
                                   "22 20 8:2 / /data ro,relatime - ext4 /dev/sda2 ro\n"
                                   "23 20 0:70 / /run/x rw - tmpfs tmpfs rw\n";
        static const struct {
                const char *now, *why; /* why: NULL when nothing changed */
        } cases[] = {
                { base, NULL },
                /* gone since: unmounting synced it */
                { "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                  "21 20 0:5 / /tmp rw - tmpfs tmpfs rw\n",
                  NULL },
                /* a pseudo filesystem mounted since: nothing to sync */
                { "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                  "25 20 0:80 / /mnt/t rw - tmpfs tmpfs rw\n",
                  NULL },
                /* a bind mount of a superblock it had: nothing new */
                { "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                  "26 20 8:1 /srv /mnt/b rw - ext4 /dev/sda1 rw\n",
                  NULL },
                { "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                  "24 20 0:41 / /mnt/ov rw - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n",
                  "superblock 0:41 (overlay) at /mnt/ov was mounted since the pass looked" },
                { "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                  "27 20 8:3 / /mnt/usb rw - vfat /dev/sda3 rw\n",
                  "superblock 8:3 (vfat) at /mnt/usb was mounted since the pass looked" },
                /* the stale tmpfs entry's number taken by a FUSE mount */
                { "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                  "28 20 0:70 / /run/y rw - fuse.sshfs host: rw,user_id=0,group_id=0\n",
                  "device number 0:70 is a fuse.sshfs at /run/y now, and was a tmpfs when the pass looked "
                  "(given to another filesystem meanwhile)" },
                { "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                  "22 20 8:2 / /data rw,relatime - ext4 /dev/sda2 rw\n",
                  "superblock 8:2 (ext4) at /data is writable now, and was read-only" },
                /* review P, P2: unmounted and mounted again with the number and the type it had (a
                 * loop device freed and taken again, an anonymous number lowest free first) */
                { "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                  "31 20 0:70 / /srv/b rw - tmpfs tmpfs rw\n"
                  "32 20 8:2 / /data2 ro,relatime - ext4 /dev/sda2 ro\n",
                  "superblock 8:2 (ext4) at /data2 has none of the mounts it had when the pass looked "
                  "(mounted again since, another filesystem with its number)" },
        };
        _cleanup_(sample_freep) Sample *before = sample_of_text(base);

        /* an sshfs at 0:50 unmounted, another one mounted elsewhere took 0:50 (review P, P2) */
        {
                _cleanup_(sample_freep) Sample *b = sample_of_text(
                        "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                        "24 20 0:50 / /mnt/a rw - fuse.sshfs a: rw,user_id=1000,group_id=1000\n");
                _cleanup_(sample_freep) Sample *n = sample_of_text(
                        "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                        "31 20 0:50 / /srv/b rw - fuse.sshfs b: rw,user_id=1000,group_id=1000\n");
                _cleanup_free_ char *why = NULL;

                ASSERT_EQ(sample_changed_since(b, n, &why), 1);
                /* the same mount through listmount: its id that is never reused decides */
                b->table->entries[1].mount_id_unique = n->table->entries[1].mount_id_unique = 0x80000031;
                free(why);
                why = NULL;
                ASSERT_EQ(sample_changed_since(b, n, &why), 0);
        }

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(sample_freep) Sample *now = sample_of_text(cases[i].now);
                _cleanup_free_ char *why = NULL;

                ASSERT_EQ(sample_changed_since(before, now, &why), cases[i].why ? 1 : 0);
                if (cases[i].why)
                        ASSERT_STREQ(why, cases[i].why);
                else
                        ASSERT_TRUE(!why);
        }

        /* a view no longer complete */
        {
                _cleanup_(sample_freep) Sample *now = sample_of_text(base);
                _cleanup_free_ char *why = NULL;
                char *reasons[] = { (char *) "a superblock 0:99 is mounted but in no scanned mount table" };

                now->complete = false;
                now->incomplete_why = reasons;
                now->n_incomplete_why = 1;
                ASSERT_EQ(sample_changed_since(before, now, &why), 1);
                ASSERT_STREQ(why,
                             "the view of the mounts is no longer complete: a superblock 0:99 is mounted but "
                             "in no scanned mount table");
                now->incomplete_why = NULL;
                now->n_incomplete_why = 0;
                /* ... unless it was not complete before either (the knob is kept on for that already) */
                before->complete = false;
                free(why);
                why = NULL;
                ASSERT_EQ(sample_changed_since(before, now, &why), 0);
                before->complete = true;
        }
        /* Review P, P2 where an id is reused: an old mount id ("22") that another mount now has,
         * elsewhere or of another directory, is none of the mounts the superblock had; and through
         * listmount, the id never reused decides even where everything else matches. */
        {
                static const char *const again[] = {
                        "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                        "22 20 8:2 / /data2 ro,relatime - ext4 /dev/sda2 ro\n",
                        "20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                        "22 20 8:2 /sub /data ro,relatime - ext4 /dev/sda2 ro\n",
                };

                for (size_t i = 0; i < ELEMENTSOF(again); i++) {
                        _cleanup_(sample_freep) Sample *now = sample_of_text(again[i]);
                        _cleanup_free_ char *why = NULL;

                        ASSERT_EQ(sample_changed_since(before, now, &why), 1);
                        ASSERT_TRUE(strstr(why, "has none of the mounts it had"));
                }
        }
        {
                _cleanup_(sample_freep) Sample *b = sample_of_text(base), *n = sample_of_text(base);
                _cleanup_free_ char *why = NULL;

                /* 8:2 at /data, mount id 22 both times: the same mount by the text, yet the
                 * listmount ids tell another one */
                ASSERT_STREQ(b->table->entries[2].mount_point, "/data");
                b->table->entries[2].mount_id_unique = 0x80000022;
                n->table->entries[2].mount_id_unique = 0x80000040;
                ASSERT_EQ(sample_changed_since(b, n, &why), 1);
                ASSERT_TRUE(strstr(why, "has none of the mounts it had"));
        }
        {
                /* 0:60 reached before only through a process's file (an unlisted entry, mount id 40):
                 * a mount listed now with that id is not the same mount */
                _cleanup_(sample_freep)
                        Sample *b = sample_of_text("20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                                                   "40 20 0:60 / /proc/123/fd/5 rw - ext4 /dev/sdb1 rw\n");
                _cleanup_(sample_freep)
                        Sample *n = sample_of_text("20 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
                                                   "40 20 0:60 / /proc/123/fd/5 rw - ext4 /dev/sdb1 rw\n");
                _cleanup_free_ char *why = NULL;

                ASSERT_STREQ(b->table->entries[1].mount_point, "/proc/123/fd/5");
                b->table->entries[1].unlisted = true;
                ASSERT_EQ(sample_changed_since(b, n, &why), 1);
                ASSERT_TRUE(strstr(why, "has none of the mounts it had"));
                /* ... and the same process's file both times is */
                n->table->entries[1].unlisted = true;
                free(why);
                why = NULL;
                ASSERT_EQ(sample_changed_since(b, n, &why), 0);
        }
}

/* In the child: a user namespace of its own (root mapped to root) owning its mount namespace, a
 * tmpfs at dir and an overlay in it (a superblock no table of ours has, so it is read). */
static int setup_userns(const void *userdata, dev_t *devs) {
        const char *dir = userdata;
        struct stat st;
        dev_t overlay;
        int fd;

        if (unshare(CLONE_NEWUSER) < 0)
                return 3;
        fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "0 0 1", 5) != 5)
                return 3;
        close(fd);
        fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
                (void) !write(fd, "deny", 4);
                close(fd);
        }
        fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "0 0 1", 5) != 5)
                return 3;
        close(fd);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return 3;
        if (mount("tmpfs", dir, "tmpfs", 0, "size=1m") < 0 || stat(dir, &st) < 0)
                return 3;
        if (mount_overlay_in(dir, &overlay) < 0)
                return 3;
        devs[0] = overlay;
        return 0;
}

/* Review N, N3: a namespace owned by another user namespace (a rootless container) is marked, so
 * that the plan leaves its FUSE mounts to the kernel's sync; one of ours is not. */
TEST(live_namespace_foreign_userns) {
        char dir[] = "/tmp/test-sample-userns.XXXXXX", dir2[] = "/tmp/test-sample-userns2.XXXXXX";
        int release = -1, release2 = -1;
        dev_t dev = 0, dev2 = 0;
        pid_t pid, pid2;

        if (geteuid() != 0) {
                test_skip("not root");
                return;
        }
        ASSERT_TRUE(test_mkdtemp(dir));
        ASSERT_TRUE(test_mkdtemp(dir2));
        pid2 = spawn_namespace(dir2, &dev2, &release2); /* ours: no user namespace of its own */
        pid = spawn_child_namespace(setup_userns, dir, &dev, 1, &release);
        if (pid == 0 || pid2 == 0) {
                test_skip("cannot make a user namespace with an overlay in its mount namespace");
        } else {
                _cleanup_(sample_freep) Sample *s = load_live(false);
                uint64_t ino = ns_ino_of(pid), ino2 = ns_ino_of(pid2);
                int seen = 0;

                for (size_t i = 0; i < s->n_namespaces; i++) {
                        if (s->namespaces[i].ino == ino) {
                                ASSERT_TRUE(s->namespaces[i].foreign_userns);
                                seen++;
                        }
                        if (s->namespaces[i].ino == ino2) {
                                ASSERT_TRUE(!s->namespaces[i].foreign_userns);
                                seen++;
                        }
                }
                ASSERT_EQ(seen, 2);
                ASSERT_TRUE(has_namespace_mount(s, pid, dev));
        }
        if (release >= 0) {
                close(release);
                ASSERT_TRUE(waitpid(pid, NULL, 0) == pid);
        }
        if (release2 >= 0) {
                close(release2);
                ASSERT_TRUE(waitpid(pid2, NULL, 0) == pid2);
        }
        ASSERT_OK(rmdir(dir));
        ASSERT_OK(rmdir(dir2));
}

/* Whether path is on an overlay (the test's own look; the code under test never calls statfs()). */
static bool on_overlay(const char *path) {
        struct statfs sfs;

        ASSERT_OK(statfs(path, &sfs));
        return sfs.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* A superblock no table shows is added to a table that other namespaces' tables filled to their
 * bounds (review AK): the bounds are for what tables bring in; refused, the whole sample failed, and
 * a pass synced nothing. */
TEST(unlisted_after_full_merge) {
        _cleanup_(mount_table_freep) MountTable *t = calloc(1, sizeof(MountTable));

        ASSERT_TRUE(t);
        ASSERT_TRUE(t->entries = calloc(MOUNT_TABLE_MAX_ENTRIES, sizeof(MountEntry)));
        t->n_entries = MOUNT_TABLE_MAX_ENTRIES;
        t->merged_bytes = MOUNT_TABLE_MERGE_MAX_BYTES;
        ASSERT_OK(append_unlisted(t, "/proc/1/fd/3", makedev(0, 99), 5, "fuse", NULL, false));
        ASSERT_EQ(t->n_entries, MOUNT_TABLE_MAX_ENTRIES + 1);
        ASSERT_TRUE(t->entries[MOUNT_TABLE_MAX_ENTRIES].unlisted);
        ASSERT_STREQ(t->entries[MOUNT_TABLE_MAX_ENTRIES].mount_point, "/proc/1/fd/3");
        ASSERT_STREQ(t->entries[MOUNT_TABLE_MAX_ENTRIES].source, "none");
}

/* Our root in a chroot (unlisted_add_root()): never a call into its filesystem in our process
 * (reviews, stop 26 and 27: fstatfs() there is an RPC on an NFS root, statx() one on 9p or CIFS, a
 * request a frozen FUSE server never answers). From the VFS alone (fdinfo, listmount, statmount), or
 * from a bounded child. On "/" both ways give the same device, mount id and type; on a FUSE mount
 * whose server never answers (not even FUSE_INIT) the VFS answers at once and the child is abandoned
 * after its bound. */
TEST(root_facts) {
        char dir[] = "/tmp/test-sample-fuse.XXXXXX", opts[128];
        _cleanup_close_ int root = -EBADF, fuse = -EBADF, d = -EBADF,
                            proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        UnlistedRoot vfs, child;
        struct statx stx;
        usec_t t0, took;
        int r;

        root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(root >= 0);
        ASSERT_OK(statx(root, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx));
        ASSERT_OK(unlisted_root_facts(root, proc, true, UNLISTED_ROOT_TIMEOUT, &vfs));
        ASSERT_OK(unlisted_root_facts(root, proc, false, UNLISTED_ROOT_TIMEOUT, &child));
        fprintf(stderr, "   '/': %u:%u mount %d '%s' from the VFS, %u:%u mount %d '%s' from the child\n",
                major(vfs.dev), minor(vfs.dev), vfs.mount_id, vfs.fstype, major(child.dev), minor(child.dev),
                child.mount_id, child.fstype);
        ASSERT_TRUE(vfs.dev == makedev(stx.stx_dev_major, stx.stx_dev_minor) && vfs.dev == child.dev);
        ASSERT_TRUE(vfs.mount_id == (int) stx.stx_mnt_id && child.mount_id == vfs.mount_id);
        /* Known, but on an overlay (a container's root): its type is "unknown" by design (below). */
        ASSERT_EQ(streq(vfs.fstype, "unknown"), on_overlay("/"));
        ASSERT_EQ(streq(child.fstype, "unknown"), on_overlay("/"));

        if (geteuid() != 0) {
                test_skip("not root: the chroot, overlay and frozen FUSE cases");
                return;
        }
        /* In a chroot into a directory (review, stop 27): listmount leaves out the mount our root is
         * in; it is the parent of our proc's mount. The VFS answers (a zero bound: the child would
         * time out at once), the same device as statx of that directory from outside. */
        {
                char croot[] = "/tmp/test-sample-chroot.XXXXXX", path[128];
                int pipefd[2];
                struct {
                        int r;
                        UnlistedRoot f;
                } got = {};
                pid_t pid;

                ASSERT_TRUE(test_mkdtemp(croot));
                snprintf(path, sizeof path, "%s/proc", croot);
                ASSERT_OK(mkdir(path, 0755));
                ASSERT_OK(statx(AT_FDCWD, croot, 0, STATX_MNT_ID, &stx));
                ASSERT_OK(pipe2(pipefd, O_CLOEXEC));
                pid = fork();
                ASSERT_TRUE(pid >= 0);
                if (pid == 0) {
                        int cr, cp;

                        if (unshare(CLONE_NEWNS) < 0 ||
                            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                            mount("proc", path, "proc", 0, NULL) < 0 || chroot(croot) < 0 || chdir("/") < 0)
                                _exit(2);
                        cr = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                        cp = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        got.r = unlisted_root_facts(cr, cp, true, 0, &got.f);
                        _exit(write(pipefd[1], &got, sizeof got) == (ssize_t) sizeof got ? 0 : 3);
                }
                pipefd[1] = safe_close(pipefd[1]);
                ASSERT_EQ(read(pipefd[0], &got, sizeof got), (ssize_t) sizeof got);
                safe_close(pipefd[0]);
                ASSERT_EQ(waitpid(pid, NULL, 0), pid);
                fprintf(stderr, "   chroot: %s, %u:%u '%s' (outside: %u:%u)\n", strerror(-got.r),
                        major(got.f.dev), minor(got.f.dev), got.f.fstype, stx.stx_dev_major,
                        stx.stx_dev_minor);
                ASSERT_OK(rmdir(path));
                ASSERT_OK(rmdir(croot));
                ASSERT_OK(got.r);
                ASSERT_TRUE(got.f.dev == makedev(stx.stx_dev_major, stx.stx_dev_minor) && got.f.mount_id > 0);
                ASSERT_EQ(streq(got.f.fstype, "unknown"), on_overlay("/tmp"));
        }
        /* An overlay root is "unknown" both ways (review, stop 27): as "overlay" without its upperdir
         * option, the plan would call it "nothing to write". */
        {
                char ovl[] = "/tmp/test-sample-ovl.XXXXXX", cmd[512], path[128];
                _cleanup_close_ int o = -EBADF;

                ASSERT_TRUE(test_mkdtemp(ovl));
                snprintf(
                        cmd, sizeof cmd,
                        "cd %s && mkdir l u w m && mount -t overlay overlay -o lowerdir=l,upperdir=u,workdir=w m",
                        ovl);
                if (system(cmd) == 0) {
                        snprintf(path, sizeof path, "%s/m", ovl);
                        o = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        ASSERT_TRUE(o >= 0);
                        ASSERT_OK(unlisted_root_facts(o, proc, true, UNLISTED_ROOT_TIMEOUT, &vfs));
                        ASSERT_OK(unlisted_root_facts(o, proc, false, UNLISTED_ROOT_TIMEOUT, &child));
                        ASSERT_STREQ(vfs.fstype, "unknown");
                        ASSERT_STREQ(child.fstype, "unknown");
                        o = safe_close(o);
                        ASSERT_OK(umount2(path, MNT_DETACH));
                } else
                        test_skip("cannot mount an overlay: the overlay case");
                snprintf(cmd, sizeof cmd, "rm -rf %s", ovl);
                ASSERT_EQ(system(cmd), 0);
        }
        fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        ASSERT_TRUE(test_mkdtemp(dir));
        snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse);
        if (fuse < 0 || mount("test-sample", dir, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
                test_skip("cannot mount FUSE: the frozen FUSE case");
                (void) rmdir(dir);
                return;
        }
        d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(d >= 0);
        t0 = now(CLOCK_MONOTONIC);
        ASSERT_OK(unlisted_root_facts(d, proc, true, UNLISTED_ROOT_TIMEOUT, &vfs));
        took = now(CLOCK_MONOTONIC) - t0;
        r = unlisted_root_facts(d, proc, false, UNLISTED_ROOT_TIMEOUT, &child);
        fprintf(stderr,
                "   frozen FUSE: '%s' mount %d from the VFS (%.1f ms); the child: %s (%.1f ms in all)\n",
                vfs.fstype, vfs.mount_id, (double) took / USEC_PER_MSEC, strerror(-r),
                (double) (now(CLOCK_MONOTONIC) - t0) / USEC_PER_MSEC);
        ASSERT_STREQ(vfs.fstype, "fuse");
        ASSERT_TRUE(vfs.mount_id > 0 && major(vfs.dev) == 0);
        ASSERT_EQ(r, -ETIMEDOUT);
        d = safe_close(d);
        ASSERT_OK(umount2(dir, MNT_DETACH));
        fuse = safe_close(fuse); /* aborts the connection: the abandoned child's request ends */
        ASSERT_OK(rmdir(dir));
}

int main(void) {
        RUN(laptop_superblocks);
        RUN(namespace_list_errors);
        RUN(namespace_list_unavailable);
        RUN(namespace_list_pidns);
        RUN(live_both_backends);
        RUN(overmounted);
        RUN(hidden_by_sibling_on_ancestor_path);
        RUN(load_fixture_root);
        RUN(identity_only);
        RUN(degraded_root);
        RUN(container_host_1000);
        RUN(hidden_superblocks);
        RUN(all_listed);
        RUN(unreadable_mountinfo_line);
        RUN(hidden_fuseblk);
        RUN(hidden_type_named_bdi);
        RUN(device_number_reused);
        RUN(unlisted_listings_fail_closed);
        RUN(unlisted_listing_cut_short);
        RUN(unlisted_search_fails);
        RUN(unlisted_uncompared_fail_closed);
        RUN(hidden_counted_by_module);
        RUN(nsfs_no_longer_nsfs);
        RUN(chroot_view);
        RUN(chrooted_namespaces);
        RUN(unreadable_line_of_other_namespace);
        RUN(proc_walk_fails);
        RUN(namespace_reads_bounded);
        RUN(other_member_after_a_walk);
        RUN(member_mountinfo_checked);
        RUN(reach_bounded);
        RUN(reach_hung);
        RUN(reach_hung_until);
        RUN(sample_gate);
        RUN(sources_same_reads);
        RUN(reach_tree);
        RUN(live_namespaces_both_ways);
        RUN(live_namespace_root_moved);
        RUN(ns_cover_mount_rules);
        RUN(changed_since);
        RUN(live_namespace_covered);
        RUN(live_namespaces_scan_bounded);
        RUN(live_namespace_cover_faults);
        RUN(live_namespace_foreign_userns);
        RUN(live_namespace_covered_until_overmounted);
        RUN(live_namespace_covered_until_read_only);
        RUN(live_nsfs_listed_not_walked);
        RUN(live_nsfs_namespace_overlay_hidden);
        RUN(live_namespace_kept_by_fd);
        RUN(live_namespace_member_gone_before_read);
        RUN(nsfs_mount_listed);
        RUN(unlisted_after_full_merge);
        RUN(root_facts);
        return test_result();
}
