/* SPDX-License-Identifier: GPL-2.0-or-later */

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
                fprintf(stderr, "  skipped: listmount/statmount unusable here: %s\n", strerror(-r));
                return;
        }
        ASSERT_OK(r);
        if (backend != MOUNT_TABLE_BACKEND_DEFAULT)
                ASSERT_EQ(used, backend);
        if (!find(t, "/")) {
                struct statx stx;

                ASSERT_OK(statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx));
                for (size_t i = 0; i < t->n_entries; i++)
                        ASSERT_TRUE((uint64_t) t->entries[i].mount_id != stx.stx_mnt_id);
                fprintf(stderr,
                        "  skipped the \"/\" check: our root is not a mount point in our table (chroot)\n");
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
        ASSERT_ERR(mount_table_load_listmount(&t), err);
        ASSERT_TRUE(!t);
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
                if (WEXITSTATUS(status) == 77)
                        return;
                ASSERT_EQ(WEXITSTATUS(status), 0);
        }
}

/* First difference between two tables, or NULL: same order, ids, dev, root, mount point, fstype,
 * source, both option strings and read-only state. */
static const char *tables_differ(const MountTable *a, const MountTable *b, size_t *ret_i) {
        *ret_i = 0;
        if (a->n_entries != b->n_entries)
                return "number of entries";
        for (size_t i = 0; i < a->n_entries; i++) {
                const MountEntry *x = &a->entries[i], *y = &b->entries[i];

                *ret_i = i;
                if (x->mount_id != y->mount_id)
                        return "mount id";
                if (x->parent_id != y->parent_id)
                        return "parent id";
                if (x->dev != y->dev)
                        return "dev";
                if (!streq_ptr(x->root, y->root))
                        return "root";
                if (!streq_ptr(x->mount_point, y->mount_point))
                        return "mount point";
                if (!streq_ptr(x->fstype, y->fstype))
                        return "fstype";
                if (!streq_ptr(x->source, y->source))
                        return "source";
                if (!streq_ptr(x->vfs_options, y->vfs_options))
                        return "vfs options";
                if (!streq_ptr(x->fs_options, y->fs_options))
                        return "fs options";
                if (x->read_only != y->read_only)
                        return "read-only";
                if (x->unlisted || y->unlisted)
                        return "unlisted";
        }
        return NULL;
}

static void print_entry(const char *what, const MountTable *t, size_t i) {
        const MountEntry *e;

        if (i >= t->n_entries) {
                fprintf(stderr, "  %s: %zu entries\n", what, t->n_entries);
                return;
        }
        e = &t->entries[i];
        fprintf(stderr, "  %s[%zu] of %zu: %d %d %u:%u root=\"%s\" at \"%s\" %s source=\"%s\" %s | %s%s\n",
                what, i, t->n_entries, e->mount_id, e->parent_id, major(e->dev), minor(e->dev), e->root,
                e->mount_point, e->fstype, e->source, e->vfs_options, e->fs_options,
                e->read_only ? " (ro)" : "");
}

/* Loads both backends of our own table (mountinfo, listmount, mountinfo again: a table that changed
 * meanwhile, on a shared machine, is read again) and asserts they are equal. Returns the number of
 * entries, or a negative errno from listmount when the kernel cannot serve it. */
static int compare_backends(MountTable **ret_mountinfo) {
        _cleanup_close_ int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        const char *diff = "not compared";
        size_t i = 0;
        int n = 0;

        ASSERT_TRUE(fd >= 0);
        for (unsigned attempt = 0; attempt < 10; attempt++) {
                _cleanup_(mount_table_freep) MountTable *a = NULL, *b = NULL, *a2 = NULL;
                MountTableBackend used;
                size_t j;
                int r;

                ASSERT_OK(mount_table_load_backend(fd, MOUNT_TABLE_BACKEND_MOUNTINFO, &a, NULL, &used));
                r = mount_table_load_backend(fd, MOUNT_TABLE_BACKEND_LISTMOUNT, &b, NULL, &used);
                if (r < 0)
                        return r;
                ASSERT_EQ(used, MOUNT_TABLE_BACKEND_LISTMOUNT);
                ASSERT_OK(mount_table_load_backend(fd, MOUNT_TABLE_BACKEND_MOUNTINFO, &a2, NULL, &used));
                diff = tables_differ(a, b, &i);
                if (!diff) {
                        n = (int) a->n_entries;
                        if (ret_mountinfo)
                                *ret_mountinfo = TAKE_PTR(a);
                        return n;
                }
                print_entry("mountinfo", a, i);
                print_entry("listmount", b, i);
                if (!tables_differ(a, a2, &j)) {
                        fprintf(stderr, "%s:%d: backends differ in %s\n", __FILE__, __LINE__, diff);
                        abort();
                }
                fprintf(stderr, "  the table changed while it was read (%s), again\n", diff);
                usleep(100 * 1000);
        }
        fprintf(stderr, "%s:%d: the table kept changing, last difference: %s\n", __FILE__, __LINE__, diff);
        abort();
}

/* This machine's table, whatever is mounted on it now, the same through both backends. */
static int listmount_matches_mountinfo(void) {
        int n = compare_backends(NULL);

        if (n >= 0)
                fprintf(stderr, "  %d mounts, identical through both backends\n", n);
        return n;
}

static void mkdir_p_or_die(char *path) {
        for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
                *p = 0;
                if (mkdir(path, 0755) < 0 && errno != EEXIST) {
                        fprintf(stderr, "mkdir %s: %m\n", path);
                        _exit(1);
                }
                *p = '/';
        }
        if (mkdir(path, 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "mkdir %s: %m\n", path);
                _exit(1);
        }
}

#define MOUNT_OR_DIE(src, dst, type, flags, data)                                                            \
        do {                                                                                                 \
                if (mount(src, dst, type, flags, data) < 0) {                                                \
                        fprintf(stderr, "%s:%d: mount %s on %s: %m\n", __FILE__, __LINE__, type ?: "(bind)", \
                                dst);                                                                        \
                        _exit(1);                                                                            \
                }                                                                                            \
        } while (0)

/* Odd mount points, sources, options and sizes in a private mount namespace (a child process: the
 * mounts go with it), compared through both backends: the strings must come out raw from both. */
static void odd_mounts_child(const char *base) {
        static const char *const names[] = {
                "with space",  "new\nline",        "tab\there", "literal\\040",
                "back\\slash", "comma,and=equals", "#hash",
        };
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        char path[PATH_MAX], upper[PATH_MAX], work[PATH_MAX], lower[PATH_MAX], data[3 * PATH_MAX + 64];
        char longa[PATH_MAX], longb[PATH_MAX], longc[PATH_MAX];
        const MountEntry *e;
        int fuse_fd, n;
        size_t len;

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                fprintf(stderr, "  skipped: no private mount namespace: %m\n");
                _exit(77);
        }
        MOUNT_OR_DIE("odd source\twith tab", base, "tmpfs", 0, "mode=755");

        for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                snprintf(path, sizeof path, "%s/%s", base, names[k]);
                mkdir_p_or_die(path);
                MOUNT_OR_DIE(names[k], path, "tmpfs", 0, "size=1m");
        }

        /* Per-mount and per-superblock flags, each word of both option strings. */
        snprintf(path, sizeof path, "%s/noatime", base);
        mkdir_p_or_die(path);
        MOUNT_OR_DIE("x", path, "tmpfs", MS_NOATIME | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
        snprintf(path, sizeof path, "%s/strictatime", base);
        mkdir_p_or_die(path);
        MOUNT_OR_DIE("x", path, "tmpfs", MS_STRICTATIME | MS_NODIRATIME, NULL);
        snprintf(path, sizeof path, "%s/sb-ro", base);
        mkdir_p_or_die(path);
        MOUNT_OR_DIE("x", path, "tmpfs",
                     MS_RDONLY | MS_SYNCHRONOUS | MS_DIRSYNC | MS_LAZYTIME | MS_NOSYMFOLLOW,
                     "mode=700,uid=1,gid=2");
        snprintf(path, sizeof path, "%s/bind-ro", base);
        mkdir_p_or_die(path);
        snprintf(lower, sizeof lower, "%s/with space", base);
        MOUNT_OR_DIE(lower, path, NULL, MS_BIND, NULL);
        MOUNT_OR_DIE(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);

        /* Overlay options carry escaped paths (a space): libmount unescapes them, so must we. */
        snprintf(lower, sizeof lower, "%s/with space/lo wer", base);
        snprintf(upper, sizeof upper, "%s/with space/up per", base);
        snprintf(work, sizeof work, "%s/with space/wo rk", base);
        mkdir_p_or_die(lower);
        mkdir_p_or_die(upper);
        mkdir_p_or_die(work);
        snprintf(path, sizeof path, "%s/overlay", base);
        mkdir_p_or_die(path);
        snprintf(data, sizeof data, "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
        MOUNT_OR_DIE("over lay", path, "overlay", 0, data);

        /* Long paths: a mount point of ~3000 bytes, and a bind mount whose root and mount point are
         * both that long, which outgrows statmount's first buffer (EOVERFLOW, bounded growth). */
        len = (size_t) snprintf(longa, sizeof longa, "%s/long", base);
        while (len + 201 < 3000) {
                longa[len++] = '/';
                memset(longa + len, 'a', 200);
                len += 200;
                longa[len] = 0;
        }
        mkdir_p_or_die(longa);
        MOUNT_OR_DIE("long", longa, "tmpfs", 0, NULL);
        memcpy(longb, longa, strlen(longa) + 1);
        len = strlen(longb);
        while (len + 201 < 3000 + 1000) {
                longb[len++] = '/';
                memset(longb + len, 'c', 200);
                len += 200;
                longb[len] = 0;
        }
        mkdir_p_or_die(longb);
        len = (size_t) snprintf(path, sizeof path, "%s/bind-long", base);
        while (len + 201 < 3400) {
                path[len++] = '/';
                memset(path + len, 'b', 200);
                len += 200;
                path[len] = 0;
        }
        mkdir_p_or_die(path);
        MOUNT_OR_DIE(longb, path, NULL, MS_BIND, NULL);
        memcpy(longc, path, strlen(path) + 1);

        /* A subtype: a FUSE mount without a server (nothing here asks it anything; the connection goes
         * with our /dev/fuse fd when this process exits). */
        fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fuse_fd >= 0) {
                snprintf(path, sizeof path, "%s/fuse", base);
                mkdir_p_or_die(path);
                snprintf(data, sizeof data, "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse_fd);
                MOUNT_OR_DIE("fuse src", path, "fuse.odd sub", MS_NOSUID | MS_NODEV, data);
        } else
                fprintf(stderr, "  (no /dev/fuse: no subtype mount)\n");

        n = compare_backends(&t);
        if (n < 0) {
                fprintf(stderr, "  skipped: listmount/statmount unusable here: %s\n", strerror(-n));
                _exit(77);
        }
        fprintf(stderr, "  %d mounts, odd ones included, identical through both backends\n", n);

        /* And the strings are the raw ones (so neither backend is wrong in the same way). */
        for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                snprintf(path, sizeof path, "%s/%s", base, names[k]);
                ASSERT_TRUE((e = find(t, path)));
                ASSERT_STREQ(e->source, names[k]);
        }
        ASSERT_TRUE((e = find(t, base)));
        ASSERT_STREQ(e->source, "odd source\twith tab");
        snprintf(path, sizeof path, "%s/overlay", base);
        ASSERT_TRUE((e = find(t, path)));
        ASSERT_TRUE(strstr(e->fs_options, upper));
        snprintf(path, sizeof path, "%s/sb-ro", base);
        ASSERT_TRUE((e = find(t, path)) && e->read_only);
        ASSERT_STREQ(e->fs_options, "ro,sync,dirsync,lazytime,mode=700,uid=1,gid=2");
        ASSERT_STREQ(e->vfs_options, "ro,relatime,nosymfollow");
        snprintf(path, sizeof path, "%s/bind-ro", base);
        ASSERT_TRUE((e = find(t, path)) && e->read_only);
        ASSERT_STREQ(e->root, "/");
        ASSERT_TRUE((e = find(t, longa)));
        ASSERT_TRUE(strlen(e->mount_point) > 2800);
        ASSERT_TRUE((e = find(t, longc))); /* the long bind mount */
        ASSERT_TRUE(strlen(e->root) > 900 && strlen(e->mount_point) > 3200);
        if (fuse_fd >= 0) {
                snprintf(path, sizeof path, "%s/fuse", base);
                ASSERT_TRUE((e = find(t, path)));
                ASSERT_STREQ(e->fstype, "fuse.odd sub");
        }
        _exit(0);
}

static int odd_mounts(void) {
        char base[] = "/tmp/test-mount-table.XXXXXX";
        pid_t pid;
        int status;

        if (geteuid() != 0) {
                fprintf(stderr, "  skipped: not root (odd mounts need a private mount namespace)\n");
                return 77;
        }
        if (!root_is_mount_point()) {
                fprintf(stderr, "  skipped: %s\n", ROOT_NOT_MOUNT_POINT_REASON);
                return 77;
        }
        ASSERT_TRUE(mkdtemp(base));
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0)
                odd_mounts_child(base);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_OK(rmdir(base));
        ASSERT_TRUE(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77)
                return 77;
        ASSERT_EQ(WEXITSTATUS(status), 0);
        return 0;
}

/* "test-mount-table listmount": the backend comparison; exit 77 with the reason when the kernel
 * cannot serve listmount or we are not root. */
static int run_listmount(void) {
        int r;

        fprintf(stderr, "== listmount_matches_mountinfo\n");
        r = listmount_matches_mountinfo();
        if (r < 0) {
                fprintf(stderr,
                        "  skipped: listmount/statmount unusable here (%s): the mountinfo backend "
                        "serves alone\n",
                        strerror(-r));
                return EXIT_TEST_SKIP;
        }
        fprintf(stderr, "== odd_mounts\n");
        return odd_mounts();
}

int main(int argc, char **argv) {
        if (argc > 1 && streq(argv[1], "listmount"))
                return run_listmount();
        RUN(escaped_paths);
        RUN(laptop);
        RUN(malformed_middle);
        RUN(malformed_variants);
        RUN(malformed_first_line);
        RUN(empty_and_odd_inputs);
        RUN(too_many_lines);
        RUN(container_host_1000);
        RUN(real_machine_capture);
        RUN(load_live_and_missing);
        RUN(listmount_failure_falls_back);
        return 0;
}
