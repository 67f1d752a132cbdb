/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The live mount-table loaders against each other (root, a kernel with listmount/statmount): our own
 * table through both backends, odd mounts in a private mount namespace, and another namespace's table
 * through mount_table_load_namespace() against its mountinfo. Exits 77 with the reason where the
 * kernel or privileges are missing. The parser's own tests: test-mount-table.c.
 */

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "mount-table.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/proc-util.h"
#include "tests.h"

static const MountEntry *find(const MountTable *t, const char *mount_point) {
        for (size_t i = 0; i < t->n_entries; i++)
                if (streq_ptr(t->entries[i].mount_point, mount_point))
                        return &t->entries[i];
        return NULL;
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

/* Appends "/" and 200 times c to the path of length len until it would reach limit bytes. */
static void grow_path(char *path, size_t len, char c, size_t limit) {
        while (len + 201 < limit) {
                path[len++] = '/';
                memset(path + len, c, 200);
                len += 200;
                path[len] = 0;
        }
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

/* The table of the namespace ns_fd, kept to what the root of its member pid reaches, as sample-ns
 * reads it: a container's root moved over "/" (systemd-nspawn) leaves the old root's mounts below,
 * which listmount by namespace id lists and the member's mountinfo does not. */
static void load_namespace_seen_from(int ns_fd, pid_t pid, MountTable **ret) {
        _cleanup_(mount_table_freep) MountTable *outside = NULL;
        _cleanup_close_ int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), root = -EBADF;
        char path[64];
        uint64_t ino;
        int root_id;

        snprintf(path, sizeof path, "%d/root", (int) pid);
        ASSERT_TRUE(proc >= 0 && (root = openat(proc, path, O_PATH | O_CLOEXEC)) >= 0);
        ASSERT_OK(proc_fdinfo_mnt_ino(proc, root, &root_id, &ino));
        ASSERT_OK(mount_table_load_namespace(ns_fd, ret));
        ASSERT_OK(mount_table_keep_below(*ret, root_id, &outside));
        if (outside)
                fprintf(stderr, "  %zu mounts below the member's root left out (a root moved over \"/\")\n",
                        outside->n_entries);
}

/* Namespace ns_pid is in, seen from a namespace of our own (a grandchild that unshares): its table
 * through mount_table_load_namespace() against its /proc/PID/mountinfo parsed, entry by entry. Our
 * own namespace through its ns fd against the listmount backend too. */
static void namespace_child(pid_t ns_pid) {
        _cleanup_(mount_table_freep) MountTable *a = NULL, *b = NULL, *own = NULL, *own_ns = NULL;
        _cleanup_close_ int ns_fd = -EBADF, self_fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        const char *diff;
        char path[64];
        size_t size, i;

        if (unshare(CLONE_NEWNS) < 0)
                _exit(1);
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int) ns_pid);
        ASSERT_TRUE((ns_fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0);
        load_namespace_seen_from(ns_fd, ns_pid, &b);
        snprintf(path, sizeof path, "/proc/%d/mountinfo", (int) ns_pid);
        ASSERT_OK(read_full_file_at(AT_FDCWD, path, MOUNT_TABLE_MAX_BYTES, &text, &size));
        ASSERT_OK(mount_table_parse(text, size, &a, NULL));
        if ((diff = tables_differ(a, b, &i))) {
                print_entry("mountinfo", a, i);
                print_entry("namespace", b, i);
                fprintf(stderr, "%s:%d: the namespace's table differs in %s\n", __FILE__, __LINE__, diff);
                abort();
        }
        fprintf(stderr, "  %zu mounts of another namespace, identical through its mountinfo\n", a->n_entries);

        ASSERT_TRUE((self_fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC)) >= 0);
        load_namespace_seen_from(self_fd, getpid(), &own_ns);
        ASSERT_OK(mount_table_load_listmount(&own, NULL));
        ASSERT_TRUE(!tables_differ(own, own_ns, &i));
        ASSERT_TRUE(mount_table_load_namespace(STDERR_FILENO, &own) < 0); /* not a namespace */
        _exit(0);
}

static void compare_namespace(void) {
        pid_t self = getpid(), pid = fork();
        int status;

        ASSERT_TRUE(pid >= 0);
        if (pid == 0)
                namespace_child(self);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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
        bool listmount_usable = true;
        int fuse_fd, n;

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
        grow_path(longa, (size_t) snprintf(longa, sizeof longa, "%s/long", base), 'a', 3000);
        mkdir_p_or_die(longa);
        MOUNT_OR_DIE("long", longa, "tmpfs", 0, NULL);
        memcpy(longb, longa, strlen(longa) + 1);
        grow_path(longb, strlen(longb), 'c', 3000 + 1000);
        mkdir_p_or_die(longb);
        grow_path(path, (size_t) snprintf(path, sizeof path, "%s/bind-long", base), 'b', 3400);
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
                /* The mountinfo backend is checked alone; the program then reports a skip. */
                _cleanup_close_ int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                MountTableBackend used;

                fprintf(stderr, "  listmount/statmount unusable here (%s): the mountinfo backend alone\n",
                        strerror(-n));
                ASSERT_OK(mount_table_load_backend(root, MOUNT_TABLE_BACKEND_MOUNTINFO, &t, NULL, &used));
                listmount_usable = false;
        } else
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
        if (!listmount_usable)
                _exit(EXIT_TEST_SKIP);
        compare_namespace();
        _exit(0);
}

/* More mounts than one listmount call returns (512 ids a call): the ids are asked for again after the
 * last one seen until a call returns fewer, so every mount is listed. 600 bind mounts of one tmpfs
 * directory in a private mount namespace; both backends must give the same table, each of the 600
 * in it, and the id listing as many ids as mountinfo has lines. */
#define MANY_MOUNTS 600U

static void many_mounts_child(const char *base) {
        _cleanup_(mount_table_freep) MountTable *t = NULL, *l = NULL;
        _cleanup_close_ int root = -EBADF;
        _cleanup_free_ uint64_t *ids = NULL;
        char path[PATH_MAX], src[PATH_MAX];
        MountTableBackend used;
        size_t n_ids = 0;
        int n;

        MOUNT_OR_DIE("many", base, "tmpfs", 0, "mode=755");
        snprintf(src, sizeof src, "%s/src", base);
        mkdir_p_or_die(src);
        for (unsigned i = 0; i < MANY_MOUNTS; i++) {
                snprintf(path, sizeof path, "%s/m%u", base, i);
                mkdir_p_or_die(path);
                MOUNT_OR_DIE(src, path, NULL, MS_BIND, NULL);
        }

        n = compare_backends(&t);
        if (n < 0) {
                fprintf(stderr, "  skipped: listmount unusable here: %s\n", strerror(-n));
                _exit(77);
        }
        fprintf(stderr, "  %d mounts, identical through both backends\n", n);
        ASSERT_TRUE(n > (int) MANY_MOUNTS);
        ASSERT_OK(mount_table_list_ids(0, &ids, &n_ids));
        ASSERT_EQ(n_ids, (size_t) n);
        root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(root >= 0);
        ASSERT_OK(mount_table_load_backend(root, MOUNT_TABLE_BACKEND_LISTMOUNT, &l, NULL, &used));
        ASSERT_EQ(used, MOUNT_TABLE_BACKEND_LISTMOUNT);
        for (unsigned i = 0; i < MANY_MOUNTS; i++) {
                snprintf(path, sizeof path, "%s/m%u", base, i);
                ASSERT_TRUE(find(l, path));
        }
        _exit(0);
}

/* child(base) in a forked child, in a private mount namespace of its own (none to be had: skipped),
 * base a new directory under /tmp; root only. */
static void in_child(const char *what, void (*child)(const char *base)) {
        char base[] = "/tmp/test-mount-table.XXXXXX";
        pid_t pid;
        int status;

        if (geteuid() != 0) {
                test_skip("not root (%s need a private mount namespace)", what);
                return;
        }
        if (!root_is_mount_point()) {
                test_skip("%s", ROOT_NOT_MOUNT_POINT_REASON);
                return;
        }
        ASSERT_TRUE(test_mkdtemp(base));
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                        fprintf(stderr, "  skipped: no private mount namespace: %m\n");
                        _exit(77);
                }
                child(base);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_OK(rmdir(base));
        ASSERT_TRUE(WIFEXITED(status));
        if (!test_child_skipped(status))
                ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* Review AN, AN-1: any user can make a mount point of our own table longer than statmount's
 * largest buffer (a FUSE mount through setuid fusermount3, then one rename of an ancestor into a
 * chain 1 MiB deep). It is left out and counted, not the whole table failed (which failed the
 * sample: the pass synced nothing). */
static void oversized_child(const char *base) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        char name[251], path[PATH_MAX];
        unsigned n_bad = 99, n_dropped = 0;
        int fd, top, root, r;

        MOUNT_OR_DIE("oversized", base, "tmpfs", 0, "mode=755");
        snprintf(path, sizeof path, "%s/s/m", base);
        mkdir_p_or_die(path);
        MOUNT_OR_DIE("deep", path, "tmpfs", 0, "size=1m");
        r = mount_table_load_listmount(&t, &n_dropped);
        if (r < 0) {
                fprintf(stderr, "  skipped: listmount unusable here: %s\n", strerror(-r));
                _exit(77);
        }
        t = mount_table_free(t);

        memset(name, 'd', 250);
        name[250] = 0;
        top = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        fd = dup(top);
        if (top < 0 || fd < 0)
                _exit(1);
        for (int i = 0; i < 4300; i++) { /* 4300 * 251 bytes: past 1 MiB */
                int nfd;

                if (mkdirat(fd, name, 0755) < 0 ||
                    (nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                        _exit(1);
                close(fd);
                fd = nfd;
        }
        if (renameat(top, "s", fd, "s") < 0) {
                fprintf(stderr, "  rename into the chain: %m\n");
                _exit(1);
        }

        r = mount_table_load_listmount(&t, &n_dropped);
        fprintf(stderr, "  listmount: %s, %zu entries, %u left out\n", r < 0 ? strerror(-r) : "ok",
                r < 0 ? 0 : t->n_entries, n_dropped);
        if (r < 0 || n_dropped != 1 || !find(t, "/") || !find(t, base))
                _exit(1);
        t = mount_table_free(t);
        root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = root < 0 ? -errno : mount_table_load(root, &t, &n_bad);
        fprintf(stderr, "  default backend: %s, %u not read\n", r < 0 ? strerror(-r) : "ok", n_bad);
        if (r < 0 || n_bad != 1 || !find(t, "/"))
                _exit(1);
        /* The text, as kernels before 6.15 have only it: the line left out, the rest read. */
        t = mount_table_free(t);
        n_bad = 99;
        r = mount_table_load_backend(root, MOUNT_TABLE_BACKEND_MOUNTINFO, &t, &n_bad, NULL);
        fprintf(stderr, "  mountinfo backend: %s, %u not read\n", r < 0 ? strerror(-r) : "ok", n_bad);
        _exit(r >= 0 && n_bad == 1 && find(t, "/") && find(t, base) ? 0 : 1);
}

/* The backend comparison; a skip with the reason when the kernel cannot serve listmount (the odd
 * mounts still check the mountinfo backend then) or we are not root. */
int main(void) {
        int r;

        fprintf(stderr, "== listmount_matches_mountinfo\n");
        test_state()->current = "listmount_matches_mountinfo";
        r = listmount_matches_mountinfo();
        if (r < 0)
                test_skip("listmount/statmount unusable here (%s): the mountinfo backend serves alone",
                          strerror(-r));
        fprintf(stderr, "== odd_mounts\n");
        test_state()->current = "odd_mounts";
        in_child("odd mounts", odd_mounts_child);
        fprintf(stderr, "== oversized\n");
        test_state()->current = "oversized";
        in_child("oversized mounts", oversized_child);
        fprintf(stderr, "== many_mounts\n");
        test_state()->current = "many_mounts";
        in_child("more than 512 mounts", many_mounts_child);
        return test_result();
}
