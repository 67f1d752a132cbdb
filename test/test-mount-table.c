/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>

#include "mount-table.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/mount-api.h"
#include "tests.h"

static MountTable *load_file(const char *rel, unsigned *ret_n_bad) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        MountTable *t = NULL;
        size_t size;

        fd = open(FIXTURES_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(read_full_file_at(fd, rel, MOUNT_TABLE_MAX_BYTES, &buf, &size));
        ASSERT_OK(mount_table_parse(buf, size, &t, ret_n_bad));
        ASSERT_TRUE(t);
        return t;
}

static MountTable *load_root(const char *scenario, unsigned *ret_n_bad) {
        _cleanup_close_ int fd = -EBADF;
        char path[512];
        MountTable *t = NULL;

        snprintf(path, sizeof(path), "%s/roots/%s", FIXTURES_DIR, scenario);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mount_table_load(fd, &t, ret_n_bad));
        ASSERT_TRUE(t);
        return t;
}

static const MountEntry *find(const MountTable *t, const char *mount_point) {
        for (size_t i = 0; i < t->n_entries; i++)
                if (streq_ptr(t->entries[i].mount_point, mount_point))
                        return &t->entries[i];
        return NULL;
}

TEST(escaped_paths) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        const MountEntry *e;
        unsigned n_bad = 99;

        t = load_file("mountinfo/escaped-paths.mountinfo", &n_bad);
        ASSERT_EQ(n_bad, 0);
        ASSERT_EQ(t->n_entries, 7);

        /* Exact strings: these fail if the \ooo escapes are left raw or unescaped twice. */
        e = &t->entries[1];
        ASSERT_STREQ(e->mount_point, "/mnt/with space");
        ASSERT_STREQ(e->root, "/srv/my files");
        ASSERT_TRUE(!strstr(e->mount_point, "\\040"));
        ASSERT_EQ(e->dev, makedev(259, 2));

        e = &t->entries[2];
        ASSERT_STREQ(e->mount_point, "/mnt/tab\there");
        ASSERT_STREQ(e->source, "tmp fs");

        e = &t->entries[3];
        ASSERT_STREQ(e->mount_point, "/mnt/new\nline");

        e = &t->entries[4];
        ASSERT_STREQ(e->mount_point, "/mnt/back\\slash");
        ASSERT_STREQ(e->root, "/a\\b");
        ASSERT_STREQ(e->source, "/dev/disk/by-label/My Disk");
        ASSERT_TRUE(e->read_only); /* "ro" in the superblock options only */
        ASSERT_STREQ(e->vfs_options, "rw,relatime");
        ASSERT_STREQ(e->fs_options, "ro");

        /* A directory literally named 'literal\040' is escaped by the kernel as "\134040": one
         * round of unescaping only. */
        ASSERT_STREQ(t->entries[5].mount_point, "/mnt/literal\\040");
        ASSERT_STREQ(t->entries[6].mount_point, "/mnt/deleted (deleted)");

        /* Negative control: the raw file does carry the escapes we removed. */
        {
                _cleanup_free_ char *raw = NULL;
                _cleanup_close_ int fd = open(FIXTURES_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                ASSERT_OK(read_full_file_at(fd, "mountinfo/escaped-paths.mountinfo", 1 << 20, &raw, NULL));
                ASSERT_TRUE(strstr(raw, "/mnt/with\\040space"));
                ASSERT_TRUE(!strstr(raw, "/mnt/with space"));
        }
}

TEST(laptop) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        const MountEntry *e, *home, *data;
        unsigned n_bad = 99;

        t = load_root("laptop", &n_bad);
        ASSERT_EQ(n_bad, 0);
        ASSERT_EQ(t->n_entries, 19);

        e = &t->entries[0];
        ASSERT_EQ(e->mount_id, 21);
        ASSERT_EQ(e->parent_id, 1);
        ASSERT_EQ(e->dev, makedev(259, 2));
        ASSERT_STREQ(e->root, "/");
        ASSERT_STREQ(e->mount_point, "/");
        ASSERT_STREQ(e->fstype, "ext4");
        ASSERT_STREQ(e->source, "/dev/nvme0n1p2");
        ASSERT_STREQ(e->vfs_options, "rw,relatime");
        ASSERT_STREQ(e->fs_options, "rw,errors=remount-ro");
        ASSERT_TRUE(!e->read_only); /* "errors=remount-ro" is not "ro" */

        ASSERT_TRUE((e = find(t, "/boot/efi")));
        ASSERT_STREQ(e->fstype, "vfat");
        ASSERT_EQ(e->dev, makedev(259, 1));

        /* btrfs subvolumes: same superblock device, different roots. */
        ASSERT_TRUE((home = find(t, "/home")));
        ASSERT_TRUE((data = find(t, "/srv/data")));
        ASSERT_EQ(home->dev, makedev(0, 35));
        ASSERT_EQ(home->dev, data->dev);
        ASSERT_STREQ(home->root, "/@home");
        ASSERT_STREQ(data->root, "/@data");
        ASSERT_STREQ(data->vfs_options, "rw,noatime");

        /* bind mounts of the root filesystem */
        ASSERT_TRUE((e = find(t, "/srv/www")));
        ASSERT_EQ(e->dev, t->entries[0].dev);
        ASSERT_STREQ(e->root, "/var/www");
        ASSERT_TRUE(!e->read_only);
        ASSERT_TRUE((e = find(t, "/opt/vendor")));
        ASSERT_TRUE(e->read_only); /* per-mount ro, superblock rw */
        ASSERT_STREQ(e->fs_options, "rw,errors=remount-ro");

        ASSERT_TRUE((e = find(t, "/home/alice/remote")));
        ASSERT_STREQ(e->fstype, "fuse.sshfs");
        ASSERT_STREQ(e->source, "alice@nas:/srv/alice");
        ASSERT_EQ(e->parent_id, 31);

        ASSERT_TRUE((e = find(t, "/mnt/nfs")));
        ASSERT_STREQ(e->fstype, "nfs4");
        ASSERT_STREQ(e->source, "nas:/export/share");
        ASSERT_EQ(e->dev, makedev(0, 52));

        ASSERT_TRUE((e = find(t, "/var/lib/containers/storage/overlay/merged")));
        ASSERT_STREQ(e->fstype, "overlay");
        ASSERT_TRUE(strstr(e->fs_options, "upperdir=/var/lib/containers/storage/overlay/upper"));

        ASSERT_TRUE((e = find(t, "/snap/core22/1380")));
        ASSERT_STREQ(e->fstype, "squashfs");
        ASSERT_TRUE(e->read_only);
        ASSERT_EQ(e->dev, makedev(7, 0));

        ASSERT_TRUE((e = find(t, "/dev")));
        ASSERT_STREQ(e->source, "udev");
        ASSERT_TRUE((e = find(t, "/sys/fs/cgroup")));
        ASSERT_STREQ(e->fstype, "cgroup2");

        ASSERT_TRUE(!find(t, "/nonexistent"));
}

/* Review G, G4: read-only is the first word of an option string, which the kernel prints as "ro" or
 * "rw"; an "ro" later is part of a value (an overlay's lowerdir with an escaped comma, which the
 * table unescapes). */
TEST(read_only_first_word) {
        static const char text[] =
                "40 1 0:50 / /ovl rw,relatime - overlay ovl rw,lowerdir=/lo\\054ro,upperdir=/u,workdir=/w\n"
                "41 1 0:51 / /sb-ro rw,relatime - tmpfs x ro,size=1024k\n"
                "42 1 0:52 / /mnt-ro ro,relatime - tmpfs x rw\n";
        _cleanup_(mount_table_freep) MountTable *t = NULL;

        ASSERT_OK(mount_table_parse(text, sizeof text - 1, &t, NULL));
        ASSERT_EQ(t->n_entries, 3);
        ASSERT_STREQ(t->entries[0].fs_options, "rw,lowerdir=/lo,ro,upperdir=/u,workdir=/w");
        ASSERT_TRUE(!t->entries[0].read_only);
        ASSERT_TRUE(t->entries[1].read_only);
        ASSERT_TRUE(t->entries[2].read_only);
        ASSERT_TRUE(mount_options_read_only("ro"));
        ASSERT_TRUE(mount_options_read_only("ro,relatime"));
        ASSERT_TRUE(!mount_options_read_only("rw,ro"));
        ASSERT_TRUE(!mount_options_read_only("rox"));
        ASSERT_TRUE(!mount_options_read_only("r"));
        ASSERT_TRUE(!mount_options_read_only(""));
        ASSERT_TRUE(!mount_options_read_only(NULL));
}

TEST(malformed_middle) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        unsigned n_bad = 0;

        t = load_file("mountinfo/malformed-middle.mountinfo", &n_bad);
        ASSERT_EQ(n_bad, 3);
        ASSERT_EQ(t->n_entries, 4);
        ASSERT_STREQ(t->entries[0].mount_point, "/");
        ASSERT_STREQ(t->entries[1].mount_point, "/proc");
        ASSERT_STREQ(t->entries[2].mount_point, "/sys");
        ASSERT_STREQ(t->entries[3].mount_point, "/run");
        ASSERT_EQ(t->entries[3].mount_id, 26);

        /* n_bad may be NULL */
        mount_table_free(TAKE_PTR(t));
        t = load_file("mountinfo/malformed-middle.mountinfo", NULL);
        ASSERT_EQ(t->n_entries, 4);
}

TEST(malformed_variants) {
        static const char *const bad[] = {
                "21 1 8:1 / /a rw shared:1 ext4 /dev/sda1 rw\n", /* no " - " separator */
                "21 1 8:1 / /a rw - ext4\n",                     /* no source, no options */
                "21 1 8:1 / /a rw - ext4 /dev/sda1\n",           /* no superblock options */
                "21 1 8:1 / /a\n",                               /* truncated */
                "21 1 8 / /a rw - ext4 /dev/sda1 rw\n",          /* no minor */
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(mount_table_freep) MountTable *t = NULL;
                char buf[512];
                unsigned n_bad = 0;

                snprintf(buf, sizeof(buf),
                         "20 1 8:2 / / rw - ext4 /dev/sda2 rw\n%s"
                         "22 20 0:5 / /tmp rw - tmpfs tmpfs rw\n",
                         bad[i]);
                ASSERT_OK(mount_table_parse(buf, strlen(buf), &t, &n_bad));
                ASSERT_EQ(n_bad, 1);
                ASSERT_EQ(t->n_entries, 2);
                ASSERT_STREQ(t->entries[1].mount_point, "/tmp");
        }
}

TEST(malformed_first_line) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        unsigned n_bad = 0;

        /* libmount guesses the table format from the first line: must not read this as fstab */
        t = load_file("mountinfo/malformed-first-line.mountinfo", &n_bad);
        ASSERT_EQ(n_bad, 1);
        ASSERT_EQ(t->n_entries, 2);
        ASSERT_STREQ(t->entries[0].fstype, "ext4");
        ASSERT_STREQ(t->entries[1].mount_point, "/proc");
}

TEST(empty_and_odd_inputs) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        unsigned n_bad = 99;
        const char *s;

        t = load_file("mountinfo/empty.mountinfo", &n_bad);
        ASSERT_EQ(t->n_entries, 0);
        ASSERT_EQ(n_bad, 0);
        mount_table_free(TAKE_PTR(t));

        ASSERT_OK(mount_table_parse(NULL, 0, &t, NULL));
        ASSERT_EQ(t->n_entries, 0);
        mount_table_free(TAKE_PTR(t));

        ASSERT_OK(mount_table_parse("\n\n", 2, &t, &n_bad));
        ASSERT_EQ(t->n_entries, 0);
        ASSERT_EQ(n_bad, 0);
        mount_table_free(TAKE_PTR(t));

        ASSERT_OK(mount_table_parse("garbage", 7, &t, &n_bad));
        ASSERT_EQ(t->n_entries, 0);
        ASSERT_EQ(n_bad, 1);
        mount_table_free(TAKE_PTR(t));

        /* Not NUL-terminated, no final newline: size is honoured (the "X" after it is not read). */
        s = "21 1 8:1 / / rw - ext4 /dev/sda1 rwX";
        ASSERT_OK(mount_table_parse(s, strlen(s) - 1, &t, &n_bad));
        ASSERT_EQ(t->n_entries, 1);
        ASSERT_STREQ(t->entries[0].fs_options, "rw");
        ASSERT_EQ(t->entries[0].dev, makedev(8, 1));
        mount_table_free(TAKE_PTR(t));

        /* Output untouched on failure; over the byte bound. */
        t = NULL;
        ASSERT_ERR(mount_table_parse(s, (size_t) MOUNT_TABLE_MAX_BYTES + 1, &t, NULL), E2BIG);
        ASSERT_TRUE(!t);
}

/* Our own text past its bounds (review AN, AN-1): a line over 64 KiB (a mount point any user makes
 * 1 MiB deep) is left out and counted, and what is past 64 MiB counted as one; the rest is read (it
 * failed whole, and the sample with it). */
TEST(own_text_bounded) {
        char root[] = "/tmp/test-mount-table-text.XXXXXX", path[PATH_MAX];
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_free_ char *line = malloc(4001), *huge = malloc(70 * 1024 + 64);
        _cleanup_close_ int fd = -EBADF;
        unsigned n_bad = 0;
        FILE *f;

        ASSERT_TRUE(line && huge && test_mkdtemp(root));
        snprintf(path, sizeof path, "%s/proc/self", root);
        ASSERT_OK(mkdir_p_public(path));
        snprintf(path, sizeof path, "%s/proc/self/mountinfo", root);
        ASSERT_TRUE(f = fopen(path, "we"));
        memset(line, 'p', 4000);
        line[4000] = 0;
        memset(huge, 'h', 70 * 1024);
        huge[70 * 1024] = 0;
        fprintf(f, "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n22 21 0:5 / /%s rw - tmpfs tmpfs rw\n", huge);
        for (int i = 0; i < 17000; i++) /* 68 MB */
                fprintf(f, "%d 21 0:5 / /%s%d rw - tmpfs tmpfs rw\n", 100 + i, line, i);
        ASSERT_EQ(fclose(f), 0);
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(mount_table_load_backend(fd, MOUNT_TABLE_BACKEND_MOUNTINFO, &t, &n_bad, NULL));
        fprintf(stderr, "  %zu entries, %u not read\n", t->n_entries, n_bad);
        ASSERT_EQ(n_bad, 2); /* the long line, and what is past 64 MiB */
        ASSERT_STREQ(t->entries[0].mount_point, "/");
        ASSERT_EQ(t->entries[1].mount_id, 100);
        ASSERT_TRUE(t->n_entries > 16000 && t->n_entries < 17000);
        ASSERT_OK(unlink(path));
        snprintf(path, sizeof path, "%s/proc/self", root);
        ASSERT_OK(rmdir(path));
        snprintf(path, sizeof path, "%s/proc", root);
        ASSERT_OK(rmdir(path));
        ASSERT_OK(rmdir(root));
}

TEST(too_many_lines) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_free_ char *buf = NULL;
        const char *line = "21 1 0:5 / /x rw - tmpfs tmpfs rw\n";
        size_t len = strlen(line), n = MOUNT_TABLE_MAX_ENTRIES + 1;

        buf = malloc(len * n);
        ASSERT_TRUE(buf);
        for (size_t i = 0; i < n; i++)
                memcpy(buf + i * len, line, len);
        ASSERT_ERR(mount_table_parse(buf, len * n, &t, NULL), E2BIG);
        ASSERT_TRUE(!t);

        /* exactly at the bound is fine */
        ASSERT_OK(mount_table_parse(buf, len * (n - 1), &t, NULL));
        ASSERT_EQ(t->n_entries, MOUNT_TABLE_MAX_ENTRIES);
}

/* Merged tables are bounded by their strings too (review AK, AK-2): tables of 4 KiB mount points,
 * as any user can make in namespaces of their own, are taken in up to MOUNT_TABLE_MERGE_MAX_BYTES;
 * the one past it is refused whole and left with its owner. */
TEST(merge_bytes_bound) {
        _cleanup_(mount_table_freep) MountTable *into = NULL, *from = NULL;
        _cleanup_free_ char *buf = NULL, *name = NULL;
        size_t n = 512, len, merged = 0, rounds = 0, before;
        int r;

        name = malloc(4001);
        ASSERT_TRUE(name);
        memset(name, 'n', 4000);
        name[0] = '/';
        name[4000] = 0;
        ASSERT_TRUE((len = (size_t) asprintf(&buf, "21 1 0:5 / %s rw - tmpfs tmpfs rw\n", name)) > 4000);
        ASSERT_TRUE(into = calloc(1, sizeof(MountTable)));
        {
                _cleanup_free_ char *text = malloc(len * n);

                ASSERT_TRUE(text);
                for (size_t i = 0; i < n; i++)
                        memcpy(text + i * len, buf, len);
                for (;;) {
                        ASSERT_OK(mount_table_parse(text, len * n, &from, NULL));
                        ASSERT_EQ(from->n_entries, n);
                        before = into->n_entries;
                        r = mount_table_merge(into, &from);
                        if (r < 0)
                                break;
                        ASSERT_TRUE(!from);
                        merged += n;
                        rounds++;
                        ASSERT_TRUE(rounds < 1000);
                }
        }
        ASSERT_EQ(r, -E2BIG);
        ASSERT_TRUE(from && from->n_entries == n); /* nothing moved */
        ASSERT_EQ(into->n_entries, before);
        ASSERT_EQ(into->n_entries, merged);
        ASSERT_TRUE(into->merged_bytes <= MOUNT_TABLE_MERGE_MAX_BYTES);
        ASSERT_TRUE(into->merged_bytes + n * mount_entry_bytes(from->entries) > MOUNT_TABLE_MERGE_MAX_BYTES);
        ASSERT_TRUE(merged > 4096); /* more than 16 MiB of mount points taken in */
        fprintf(stderr, "  %zu mounts of 4000-byte mount points taken in, %zu bytes counted\n", merged,
                into->merged_bytes);
}

TEST(container_host_1000) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct timespec a, b;
        unsigned n_bad = 99, n_ro = 0, n_overlay = 0;
        size_t size;
        const int rounds = 200;
        double usec;

        t = load_root("container-host-1000", &n_bad);
        ASSERT_EQ(n_bad, 0);
        ASSERT_EQ(t->n_entries, 1000);
        for (size_t i = 0; i < t->n_entries; i++) {
                n_ro += t->entries[i].read_only;
                n_overlay += streq(t->entries[i].fstype, "overlay");
        }
        ASSERT_EQ(n_overlay, 111);
        ASSERT_EQ(n_ro, 110 * 2); /* sysfs and resolv.conf per complete container */
        ASSERT_STREQ(t->entries[15].mount_point, "/var/lib/containers/storage/overlay/c1/merged/data");
        ASSERT_STREQ(t->entries[15].root, "/volumes/vol 1/_data");

        /* Timing (reported, not asserted). */
        fd = open(FIXTURES_DIR "/roots/container-host-1000", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(read_full_file_at(fd, "proc/self/mountinfo", MOUNT_TABLE_MAX_BYTES, &buf, &size));
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < rounds; i++) {
                MountTable *x = NULL;

                ASSERT_OK(mount_table_parse(buf, size, &x, NULL));
                mount_table_free(x);
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        usec = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / rounds;
        fprintf(stderr, "mount_table_parse: 1000 mounts (%zu bytes) in %.1f us per parse (avg of %d)\n", size,
                usec, rounds);
}

TEST(real_machine_capture) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        const MountEntry *e;
        unsigned n_bad = 99;

        t = load_file("mountinfo/real-kernel-6.18.mountinfo", &n_bad);
        ASSERT_EQ(n_bad, 0);
        ASSERT_EQ(t->n_entries, 20);
        ASSERT_TRUE((e = find(t, "/")));
        ASSERT_STREQ(e->fstype, "ext4");
        ASSERT_EQ(e->dev, makedev(254, 0));
        ASSERT_STREQ(e->source, "/dev/vda");
        ASSERT_TRUE((e = find(t, "/mnt/sandboxing/model_tools_env/v1/python")));
        ASSERT_TRUE(e->read_only);
}

/* The live loader on both backends: listmount is only ever used for our own root. */
static void load_live_and_missing_with(MountTableBackend backend) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_close_ int fd = -EBADF;
        MountTableBackend used = _MOUNT_TABLE_BACKEND_MAX;
        int r;

        fprintf(stderr, "  backend %s\n", mount_table_backend_to_string(backend));

        /* A fixture root is never listed with listmount: its own text, or -EXDEV when forced. */
        fd = open(FIXTURES_DIR "/roots/degraded", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        if (backend == MOUNT_TABLE_BACKEND_LISTMOUNT)
                ASSERT_ERR(mount_table_load_backend(fd, backend, &t, NULL, &used), EXDEV);
        else {
                ASSERT_OK(mount_table_load_backend(fd, backend, &t, NULL, &used));
                ASSERT_EQ(used, MOUNT_TABLE_BACKEND_MOUNTINFO);
                t = mount_table_free(t);
        }
        fd = safe_close(fd);

        /* A root without proc/ gives -ENOENT. */
        fd = open(FIXTURES_DIR "/mountinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_ERR(mount_table_load_backend(
                           fd,
                           backend == MOUNT_TABLE_BACKEND_LISTMOUNT ? MOUNT_TABLE_BACKEND_DEFAULT : backend,
                           &t, NULL, NULL),
                   ENOENT);
        ASSERT_TRUE(!t);
        fd = safe_close(fd);

        /* This machine's own table: must contain "/", unless our root is not a mount point (a
         * chroot into a directory: mountinfo lists only mounts below the root). */
        fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = mount_table_load_backend(fd, backend, &t, NULL, &used);
        if (backend == MOUNT_TABLE_BACKEND_LISTMOUNT && (r == -ENOSYS || r == -EPERM || r == -EOPNOTSUPP)) {
                test_skip("listmount/statmount unusable here: %s", strerror(-r));
                return;
        }
        ASSERT_OK(r);
        if (backend != MOUNT_TABLE_BACKEND_DEFAULT)
                ASSERT_EQ(used, backend);
        /* The id that is never reused comes with listmount only (the worker compares it). */
        for (size_t i = 0; i < t->n_entries; i++)
                ASSERT_EQ(t->entries[i].mount_id_unique != 0, used == MOUNT_TABLE_BACKEND_LISTMOUNT);
        if (!find(t, "/")) {
                struct statx stx;

                ASSERT_OK(statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx));
                for (size_t i = 0; i < t->n_entries; i++)
                        ASSERT_TRUE((uint64_t) t->entries[i].mount_id != stx.stx_mnt_id);
                test_skip("the \"/\" check: our root is not a mount point in our table (chroot)");
                return;
        }
}

TEST(load_live_and_missing) {
        load_live_and_missing_with(MOUNT_TABLE_BACKEND_MOUNTINFO);
        load_live_and_missing_with(MOUNT_TABLE_BACKEND_LISTMOUNT);
        load_live_and_missing_with(MOUNT_TABLE_BACKEND_DEFAULT);
}

/* The production default falls back to the mountinfo text whenever listmount or statmount fails:
 * a seccomp filter in a child makes one of them fail with errno. */
static void fallback_child(long nr, int err) {
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned) nr, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned) err),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = ELEMENTSOF(filter), .filter = filter };
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_close_ int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        MountTableBackend used = _MOUNT_TABLE_BACKEND_MAX;

        ASSERT_TRUE(fd >= 0);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                fprintf(stderr, "  skipped: no seccomp filter: %m\n");
                _exit(77);
        }
        ASSERT_ERR(mount_table_load_listmount(&t, NULL), err);
        ASSERT_TRUE(!t);
        /* The daemon's preload sees the text path coming and loads libmount for it. */
        ASSERT_EQ(mount_table_preload(fd), 1);
        ASSERT_OK(mount_table_load_backend(fd, MOUNT_TABLE_BACKEND_DEFAULT, &t, NULL, &used));
        ASSERT_EQ(used, MOUNT_TABLE_BACKEND_MOUNTINFO);
        ASSERT_TRUE(t->n_entries > 0);
        _exit(0);
}

TEST(listmount_failure_falls_back) {
        static const struct {
                long nr;
                int err;
        } cases[] = {
                { __NR_listmount, ENOSYS }, { __NR_listmount, EPERM },  { __NR_statmount, ENOSYS },
                { __NR_statmount, EPERM },  { __NR_statmount, EINVAL },
        };

        for (size_t k = 0; k < ELEMENTSOF(cases); k++) {
                int status;
                pid_t pid = fork();

                ASSERT_TRUE(pid >= 0);
                if (pid == 0)
                        fallback_child(cases[k].nr, cases[k].err);
                ASSERT_EQ(waitpid(pid, &status, 0), pid);
                ASSERT_TRUE(WIFEXITED(status));
                if (test_child_skipped(status))
                        return;
                ASSERT_EQ(WEXITSTATUS(status), 0);
        }
}

/* Whether libmount is in this process (dlopen'd): RTLD_NOLOAD loads nothing. */
static bool libmount_loaded(void) {
        void *h = dlopen(MOUNT_TABLE_LIBMOUNT, RTLD_NOW | RTLD_NOLOAD);

        if (h)
                (void) dlclose(h); /* the reference NOLOAD took */
        return h;
}

/* In a fresh child of a process that has not loaded libmount: 0 when preload(root) returned want
 * and left libmount loaded exactly when it said so (1). */
static int preload_child(const char *root, int want) {
        _cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r;

        if (fd < 0 || libmount_loaded())
                return 2;
        r = mount_table_preload(fd);
        if (r != want || libmount_loaded() != (r == 1)) {
                fprintf(stderr, "  preload(%s) = %d, wanted %d; libmount %s\n", root, r, want,
                        libmount_loaded() ? "loaded" : "not loaded");
                return r != want ? 3 : 4;
        }
        return 0;
}

/* mount_table_preload(): nothing loaded where listmount serves our own table; libmount loaded for
 * any other root (its table is text). Runs first: no test before it has loaded libmount. */
TEST(preload) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        struct {
                const char *root;
                int want;
        } cases[] = {
                { "/", mount_table_load_listmount(&t, NULL) >= 0 ? 0 : 1 },
                { FIXTURES_DIR "/roots/container-host-1000", 1 },
        };

        ASSERT_TRUE(!libmount_loaded());
        for (size_t k = 0; k < ELEMENTSOF(cases); k++) {
                int status;
                pid_t pid = fork();

                ASSERT_TRUE(pid >= 0);
                if (pid == 0)
                        _exit(preload_child(cases[k].root, cases[k].want));
                ASSERT_EQ(waitpid(pid, &status, 0), pid);
                ASSERT_TRUE(WIFEXITED(status));
                ASSERT_EQ(WEXITSTATUS(status), 0);
        }
}

static MountTable *parse_text(const char *text) {
        MountTable *t = NULL;
        unsigned bad = 0;

        ASSERT_OK(mount_table_parse(text, strlen(text), &t, &bad));
        ASSERT_EQ(bad, 0U);
        return t;
}

static char *mount_points(const MountTable *t) {
        char *s = strdup("");

        for (size_t i = 0; t && i < t->n_entries; i++) {
                char *n = NULL;

                ASSERT_TRUE(asprintf(&n, "%s%s%d:%s", s, i > 0 ? " " : "", t->entries[i].mount_id,
                                     t->entries[i].mount_point) > 0);
                free(s);
                s = n;
        }
        ASSERT_TRUE(s);
        return s;
}

/* Another namespace through listmount, seen from its first mount: a container's root (134) moved
 * over "/" of the old root (72), whose own mounts (73, 74, 75) its processes cannot reach. */
TEST(keep_below) {
        static const char layout[] = "72 71 254:0 / / rw - ext4 /dev/vda rw\n"
                                     "73 72 0:30 / /mnt/host rw - tmpfs t rw\n"
                                     "134 72 0:40 / / rw - overlay o rw\n"
                                     "74 72 0:5 / /proc rw - proc proc rw\n"
                                     "135 134 0:41 / /tmp rw - tmpfs t rw\n"
                                     "136 135 0:42 / /tmp/a rw - tmpfs t rw\n"
                                     "75 73 0:43 / /mnt/host/deep rw - tmpfs t rw\n"
                                     "137 134 0:5 / /proc rw - proc proc rw\n";
        _cleanup_(mount_table_freep) MountTable *t = parse_text(layout), *out = NULL;
        _cleanup_free_ char *kept = NULL, *outside = NULL;

        ASSERT_OK(mount_table_keep_below(t, 134, &out));
        kept = mount_points(t);
        outside = mount_points(out);
        ASSERT_STREQ(kept, "134:/ 135:/tmp 136:/tmp/a 137:/proc");
        ASSERT_STREQ(outside, "72:/ 73:/mnt/host 74:/proc 75:/mnt/host/deep");
        mount_table_free(TAKE_PTR(t));
        mount_table_free(TAKE_PTR(out));

        /* The usual case (a host's namespace, our root its first mount): all kept, none outside. */
        t = parse_text(layout);
        ASSERT_OK(mount_table_keep_below(t, 72, &out));
        ASSERT_EQ(t->n_entries, 8U);
        ASSERT_TRUE(out == NULL);
        mount_table_free(TAKE_PTR(t));

        /* A root not in the table, or not at "/" (its paths would not be its processes'): -EXDEV,
         * and the table as it was. */
        t = parse_text(layout);
        ASSERT_EQ(mount_table_keep_below(t, 999, &out), -EXDEV);
        ASSERT_EQ(mount_table_keep_below(t, 135, &out), -EXDEV);
        ASSERT_EQ(t->n_entries, 8U);
        mount_table_free(TAKE_PTR(t));

        /* Parent ids that loop or point at themselves lead nowhere: outside. */
        t = parse_text("10 1 0:40 / / rw - tmpfs t rw\n"
                       "11 12 0:41 / /a rw - tmpfs t rw\n"
                       "12 11 0:42 / /b rw - tmpfs t rw\n"
                       "13 13 0:43 / /c rw - tmpfs t rw\n"
                       "14 10 0:44 / /d rw - tmpfs t rw\n");
        ASSERT_OK(mount_table_keep_below(t, 10, &out));
        kept = mfree(kept);
        outside = mfree(outside);
        kept = mount_points(t);
        outside = mount_points(out);
        ASSERT_STREQ(kept, "10:/ 14:/d");
        ASSERT_STREQ(outside, "11:/a 12:/b 13:/c");
}

int main(void) {
        RUN(preload);
        RUN(keep_below);
        RUN(escaped_paths);
        RUN(laptop);
        RUN(read_only_first_word);
        RUN(malformed_middle);
        RUN(malformed_variants);
        RUN(malformed_first_line);
        RUN(empty_and_odd_inputs);
        RUN(own_text_bounded);
        RUN(too_many_lines);
        RUN(merge_bytes_bound);
        RUN(container_host_1000);
        RUN(real_machine_capture);
        RUN(load_live_and_missing);
        RUN(listmount_failure_falls_back);
        return test_result();
}
