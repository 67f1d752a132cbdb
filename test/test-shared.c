/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/shared: time spans, checked number and boolean parsing, option lists, bounded and
 * atomic file I/O, bounded children.
 */

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/bounded-child.h"
#include "shared/devnum-util.h"
#include "shared/dirent-util.h"
#include "shared/fd-util.h"
#include "shared/fileio.h"
#include "shared/format-util.h"
#include "shared/hexdecoct.h"
#include "shared/json-util.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/proc-util.h"
#include "shared/sort-util.h"
#include "shared/string-table.h"
#include "shared/string-util.h"
#include "shared/strv.h"
#include "shared/time-util.h"
#include "shared/utf8.h"
#include "tests.h"

TEST(timespan) {
        usec_t u;
        char buf[FORMAT_TIMESPAN_MAX];

        ASSERT_OK(parse_timespan("500ms", &u));
        ASSERT_U64_EQ(u, 500 * USEC_PER_MSEC);
        ASSERT_OK(parse_timespan("10s", &u));
        ASSERT_U64_EQ(u, 10 * USEC_PER_SEC);
        ASSERT_OK(parse_timespan("10", &u));
        ASSERT_U64_EQ(u, 10 * USEC_PER_SEC);
        ASSERT_OK(parse_timespan("1min", &u));
        ASSERT_U64_EQ(u, 60 * USEC_PER_SEC);
        ASSERT_OK(parse_timespan("1min 30s", &u));
        ASSERT_U64_EQ(u, 90 * USEC_PER_SEC);
        ASSERT_OK(parse_timespan("1.5s", &u));
        ASSERT_U64_EQ(u, 1500 * USEC_PER_MSEC);
        ASSERT_OK(parse_timespan("250us", &u));
        ASSERT_U64_EQ(u, 250);
        ASSERT_OK(parse_timespan("2h", &u));
        ASSERT_U64_EQ(u, 7200 * USEC_PER_SEC);
        ASSERT_ERR(parse_timespan("", &u), EINVAL);
        ASSERT_ERR(parse_timespan("s", &u), EINVAL);
        ASSERT_ERR(parse_timespan("-1s", &u), EINVAL);
        ASSERT_ERR(parse_timespan("10 parsecs", &u), EINVAL);
        ASSERT_ERR(parse_timespan("99999999999999999999s", &u), ERANGE);
        ASSERT_ERR(parse_timespan("18446744073709551615min", &u), ERANGE);

        ASSERT_STREQ(format_timespan(buf, sizeof buf, 0), "0us");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 250 * USEC_PER_MSEC), "250ms");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 1234 * USEC_PER_MSEC), "1.234s");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 10 * USEC_PER_SEC), "10s");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 120 * USEC_PER_SEC), "2min");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 90 * USEC_PER_SEC), "1min 30s");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, 3723500 * USEC_PER_MSEC), "1h 2min 3.500s");
        ASSERT_STREQ(format_timespan(buf, sizeof buf, (25 * 3600 + 1) * USEC_PER_SEC), "1d 1h 1s");
        /* what it prints, it parses back */
        ASSERT_OK(parse_timespan("1h 2min 3.500s", &u));
        ASSERT_U64_EQ(u, 3723500 * USEC_PER_MSEC);
        ASSERT_OK(parse_timespan("1d 1h 1s", &u));
        ASSERT_U64_EQ(u, (25 * 3600 + 1) * USEC_PER_SEC);
        ASSERT_STREQ(format_timespan(buf, sizeof buf, USEC_INFINITY), "infinity");
}

/* Review Q, L2: what systemd's parse_time() rejects ("systemd-analyze timespan 1.5.5s" fails) is
 * rejected, not read as a sum (1.5.5s was 2s, 5..5s 5.5s); what the man page documents still parses. */
TEST(timespan_strict) {
        static const char *const bad[] = {
                "1.5.5s", "5..5s", "5.",    "5.s",   "3. 1",     "1.5.5", "5 .",    ".",
                "..5",    "1..",   "2.min", "1.5.s", "infinity", "+5s",   "5s -1s",
        };
        static const struct {
                const char *s;
                usec_t u;
        } good[] = {
                { "500ms", 500 * USEC_PER_MSEC },
                { "1.5s", 1500 * USEC_PER_MSEC },
                { "1min 30s", 90 * USEC_PER_SEC },
                { "1h 2min", 3720 * USEC_PER_SEC },
                { "10s", 10 * USEC_PER_SEC },
                { "1min", 60 * USEC_PER_SEC },
                { "30", 30 * USEC_PER_SEC },
                { "24h", 24 * 3600 * USEC_PER_SEC },
                /* as systemd: a leading '.', a space before the unit, a fraction after a unit or a
                 * space, units without spaces */
                { ".5s", 500 * USEC_PER_MSEC },
                { "5 s", 5 * USEC_PER_SEC },
                { "1.5 .5s", 2 * USEC_PER_SEC },
                { "1.5s.5", 2 * USEC_PER_SEC },
                { "1min30s", 90 * USEC_PER_SEC },
                { "1.500s", 1500 * USEC_PER_MSEC },
                { " 2 sec ", 2 * USEC_PER_SEC },
        };
        usec_t u;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                u = 4242;
                fprintf(stderr, "   bad: '%s'\n", bad[i]);
                ASSERT_ERR(parse_timespan(bad[i], &u), EINVAL);
                ASSERT_U64_EQ(u, 4242); /* untouched */
        }
        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                fprintf(stderr, "   good: '%s'\n", good[i].s);
                ASSERT_OK(parse_timespan(good[i].s, &u));
                ASSERT_U64_EQ(u, good[i].u);
        }
}

TEST(numbers) {
        uint64_t v;
        unsigned u;

        ASSERT_OK(safe_atou64("18446744073709551615", &v));
        ASSERT_U64_EQ(v, UINT64_MAX);
        ASSERT_ERR(safe_atou64("18446744073709551616", &v), ERANGE);
        ASSERT_ERR(safe_atou64("-1", &v), EINVAL);
        ASSERT_ERR(safe_atou64(" 1", &v), EINVAL);
        ASSERT_ERR(safe_atou64("1x", &v), EINVAL);
        ASSERT_ERR(safe_atou64("", &v), EINVAL);
        /* a span of a longer text: only its n bytes */
        ASSERT_OK(safe_atou64_n("123 456", 3, &v));
        ASSERT_U64_EQ(v, 123);
        ASSERT_ERR(safe_atou64_n("123 456", 4, &v), EINVAL);
        ASSERT_ERR(safe_atou64_n("123", 0, &v), EINVAL);
        ASSERT_OK(safe_atou64_n("18446744073709551615x", 20, &v));
        ASSERT_U64_EQ(v, UINT64_MAX);
        ASSERT_ERR(safe_atou64_n("000000000000000000001", 21, &v), ERANGE);
        ASSERT_ERR(safe_atou("4294967296", &u), ERANGE);
        ASSERT_OK(safe_atou("4", &u));
        ASSERT_EQ(u, 4);

        ASSERT_EQ(parse_boolean("yes"), 1);
        ASSERT_EQ(parse_boolean("On"), 1);
        ASSERT_EQ(parse_boolean("1"), 1);
        ASSERT_EQ(parse_boolean("TRUE"), 1);
        ASSERT_EQ(parse_boolean("off"), 0);
        ASSERT_EQ(parse_boolean("0"), 0);
        ASSERT_EQ(parse_boolean("false"), 0);
        ASSERT_ERR(parse_boolean("maybe"), EINVAL);
        ASSERT_ERR(parse_boolean(""), EINVAL);
}

TEST(options) {
        _cleanup_free_ char *v = NULL;

        ASSERT_TRUE(options_has("rw,relatime", "rw"));
        ASSERT_TRUE(options_has("relatime,ro", "ro"));
        ASSERT_TRUE(!options_has("rw,errors=remount-ro", "ro"));
        ASSERT_TRUE(!options_has("", "ro"));
        ASSERT_TRUE(!options_has(NULL, "ro"));
        ASSERT_EQ(options_get("lowerdir=/a:/b,upperdir=/u/p,workdir=/w", "upperdir", &v), 1);
        ASSERT_STREQ(v, "/u/p");
        ASSERT_EQ(options_get("lowerdir=/a", "upperdir", &v), 0);
        ASSERT_EQ(options_get("upperdirx=/a", "upperdir", &v), 0);
        ASSERT_EQ(options_get("rw,logdev=/dev/sdb1", "logdev", NULL), 1); /* only whether */
        ASSERT_EQ(options_get("rw,logdevx=/dev/sdb1,logdev", "logdev", NULL), 0);
}

/* memstream_finish(): the text of a stream, closed. (Its -ENOMEM when glibc's last realloc in
 * fclose() fails, review AS, AS-2, needs an allocator that fails: checked with AS's LD_PRELOAD
 * injector on cat-config, every allocation failed in turn.) */
TEST(memstream) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        ASSERT_TRUE((f = open_memstream(&buf, &size)) != NULL);
        fputs("one\ntwo\n", f);
        ASSERT_OK(memstream_finish(f, &buf));
        ASSERT_STREQ(buf, "one\ntwo\n");
}

TEST(files) {
        char dir[] = "/tmp/test-shared-XXXXXX";
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *a = NULL, *b = NULL;
        size_t n;

        ASSERT_TRUE(test_mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(write_file_atomic_at(fd, "x", "hello\n", 6));
        ASSERT_OK(read_full_file_at(fd, "/x", 100, &a, &n));
        ASSERT_EQ(n, 6U);
        ASSERT_STREQ(a, "hello\n");
        ASSERT_ERR(read_full_file_at(fd, "x", 5, &b, &n), EFBIG);
        ASSERT_ERR(read_full_file_at(fd, "missing", 5, &b, &n), ENOENT);
        ASSERT_OK(write_file_atomic_at(fd, "x", "", 0));
        free(a);
        a = NULL;
        ASSERT_OK(read_full_file_at(fd, "x", 5, &a, &n));
        ASSERT_EQ(n, 0U);
        ASSERT_STREQ(skip_root_prefix("/"), ".");
        ASSERT_STREQ(skip_root_prefix("//proc/x"), "proc/x");
        /* public whatever the umask: the unit runs with UMask=0027 */
        {
                mode_t old = umask(0077);
                struct stat st;

                ASSERT_OK(write_file_atomic_at(fd, "x", "y", 1));
                ASSERT_OK(mkdirat_public(fd, "d"));
                ASSERT_OK(mkdirat_public(fd, "d")); /* already there */
                umask(old);
                ASSERT_TRUE(fstatat(fd, "x", &st, 0) == 0 && (st.st_mode & 0777) == PUBLIC_FILE_MODE);
                ASSERT_TRUE(fstatat(fd, "d", &st, 0) == 0 && (st.st_mode & 0777) == PUBLIC_DIR_MODE);
                ASSERT_TRUE(unlinkat(fd, "d", AT_REMOVEDIR) == 0);
        }
        ASSERT_TRUE(unlinkat(fd, "x", 0) == 0);
        ASSERT_TRUE(rmdir(dir) == 0);
}

/* READ_FULL_REGULAR (the configuration's files): /dev/null, however reached, reads as empty (a masked
 * main file); another device or a directory is refused, not read (its read is a failure, and the
 * configuration not read in full). stat_is_dev_null() is 1:3 only. */
TEST(read_full_regular) {
        char dir[] = "/tmp/test-shared-regular-XXXXXX";
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *a = NULL;
        struct stat st;
        size_t n = 1;

        ASSERT_TRUE(test_mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(symlinkat("/dev/null", fd, "null"));
        ASSERT_OK(symlinkat("/dev/zero", fd, "zero"));
        ASSERT_OK(mkdirat(fd, "d", 0755));

        ASSERT_OK(read_full_file_at_flags(fd, "null", 100, READ_FULL_REGULAR, &a, &n));
        ASSERT_EQ(n, 0U);
        ASSERT_STREQ(a, "");
        ASSERT_ERR(read_full_file_at_flags(fd, "zero", 100, READ_FULL_REGULAR, &a, &n), EBADFD);
        ASSERT_ERR(read_full_file_at_flags(fd, "d", 100, READ_FULL_REGULAR, &a, &n), EISDIR);

        ASSERT_TRUE(stat("/dev/null", &st) == 0 && stat_is_dev_null(&st));
        ASSERT_TRUE(stat("/dev/zero", &st) == 0 && !stat_is_dev_null(&st));
        ASSERT_TRUE(stat("/dev/full", &st) < 0 || !stat_is_dev_null(&st));
        ASSERT_TRUE(fstat(fd, &st) == 0 && !stat_is_dev_null(&st));

        ASSERT_TRUE(unlinkat(fd, "null", 0) == 0);
        ASSERT_TRUE(unlinkat(fd, "zero", 0) == 0);
        ASSERT_TRUE(unlinkat(fd, "d", AT_REMOVEDIR) == 0);
        ASSERT_TRUE(rmdir(dir) == 0);
}

/* -Wl,--wrap=read: after the first read(2) that returns data, when append_after_read >= 0, that fd is
 * written to (a writer appending while the configuration is read). */
ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);
static int append_after_read = -1;

ssize_t __wrap_read(int fd, void *buf, size_t n) {
        ssize_t r = __real_read(fd, buf, n);

        if (r > 0 && append_after_read >= 0) {
                int w = append_after_read;

                append_after_read = -1;
                ASSERT_TRUE(write(w, "Path=/mnt/nfs\n", 14) == 14);
        }
        return r;
}

/* Review S, L4: a configuration file written to while it is read (a script appending line by line)
 * is not read, rather than read half: "[Rule x]\nAction=skip\n" read before its match keys would be
 * a rule that skips every mount. A file not written to meanwhile reads as before (control). */
TEST(read_full_regular_changed) {
        static const char head[] = "[Rule x]\nAction=skip\n";
        char dir[] = "/tmp/test-shared-changed-XXXXXX";
        _cleanup_close_ int fd = -EBADF, w = -EBADF;
        _cleanup_free_ char *a = NULL;
        size_t n = 0;

        ASSERT_TRUE(test_mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        w = openat(fd, "f.conf", O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
        ASSERT_TRUE(w >= 0);
        ASSERT_TRUE(write(w, head, strlen(head)) == (ssize_t) strlen(head));

        ASSERT_OK(read_full_file_at_flags(fd, "f.conf", 4096, READ_FULL_REGULAR, &a, &n));
        ASSERT_EQ(n, strlen(head));
        a = mfree(a);

        append_after_read = w;
        ASSERT_ERR(read_full_file_at_flags(fd, "f.conf", 4096, READ_FULL_REGULAR, &a, &n), EBUSY);
        ASSERT_TRUE(a == NULL && append_after_read == -1);
        /* without the flag (sysfs and proc files), no such check: what was read */
        append_after_read = w;
        ASSERT_OK(read_full_file_at(fd, "f.conf", 4096, &a, &n));
        append_after_read = -1;

        ASSERT_TRUE(unlinkat(fd, "f.conf", 0) == 0);
        ASSERT_TRUE(rmdir(dir) == 0);
}

/* DirBatch gives what readdir(3) gives, a few entries per getdents64(2), with an fd of its own. */
TEST(dir_batch) {
        char dir[] = "/tmp/test-shared-XXXXXX", name[256];
        _cleanup_close_ int fd = -EBADF;
        _cleanup_dir_batch_ DirBatch b = { .fd = -EBADF };
        const struct dirent64 *de;
        bool seen[300] = {};
        size_t n = 0, dots = 0;

        ASSERT_TRUE(test_mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        /* 300 entries, some with names of 255 bytes (one entry then fills a quarter of a batch) */
        for (unsigned i = 0; i < 300; i++) {
                int l = snprintf(name, sizeof name, "%u-", i);

                if (i % 7 == 0) {
                        memset(name + l, 'x', 255 - l);
                        name[255] = 0;
                }
                ASSERT_TRUE(mknodat(fd, name, S_IFREG | 0644, 0) == 0);
        }
        /* an earlier readdir through a dup moves fd's offset to the end: DirBatch starts anew */
        {
                DIR *d = fdopendir(fcntl(fd, F_DUPFD_CLOEXEC, 3));

                ASSERT_TRUE(d != NULL);
                while (readdir(d))
                        ;
                closedir(d);
        }
        ASSERT_OK(dir_batch_open(fd, ".", &b));
        while ((de = dir_batch_next(&b))) {
                unsigned i;

                if (streq(de->d_name, ".") || streq(de->d_name, "..")) {
                        dots++;
                        continue;
                }
                ASSERT_TRUE(sscanf(de->d_name, "%u-", &i) == 1 && i < 300);
                ASSERT_TRUE(!seen[i]);
                ASSERT_EQ(strlen(de->d_name),
                          i % 7 == 0 ? 255U : (size_t) snprintf(name, sizeof name, "%u-", i));
                seen[i] = true;
                n++;
        }
        ASSERT_EQ(b.error, 0);
        ASSERT_EQ(n, 300U);
        ASSERT_EQ(dots, 2U);
        ASSERT_TRUE(dir_batch_next(&b) == NULL); /* stays at the end */
        dir_batch_close(&b);
        dir_batch_close(&b); /* idempotent */
        ASSERT_TRUE(dir_batch_next(&b) == NULL);
        ASSERT_ERR(dir_batch_open(fd, "missing", &b), ENOENT);
        ASSERT_TRUE(b.fd < 0 && dir_batch_next(&b) == NULL);
        ASSERT_ERR(dir_batch_open(fd, "1-", &b), ENOTDIR);

        for (unsigned i = 0; i < 300; i++) {
                int l = snprintf(name, sizeof name, "%u-", i);

                if (i % 7 == 0) {
                        memset(name + l, 'x', 255 - l);
                        name[255] = 0;
                }
                ASSERT_TRUE(unlinkat(fd, name, 0) == 0);
        }
        ASSERT_TRUE(rmdir(dir) == 0);
}

/* fdinfo's mount id and inode number are what statx() says of the same fd; an fd that is not
 * open has none. */
TEST(fdinfo_mnt_ino) {
        _cleanup_close_ int fd = open("/proc/self", O_PATH | O_CLOEXEC), dir = open("/", O_PATH | O_CLOEXEC),
                            proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct statx stx;
        uint64_t ino, proc_ino;
        int mnt_id, proc_mnt_id;

        ASSERT_TRUE(fd >= 0 && dir >= 0 && proc >= 0);
        ASSERT_EQ(statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &stx), 0);
        ASSERT_OK(proc_fdinfo_mnt_ino(proc, fd, &mnt_id, &ino));
        ASSERT_U64_EQ(ino, stx.stx_ino);
        ASSERT_U64_EQ((uint64_t) mnt_id, stx.stx_mnt_id);
        proc_ino = ino, proc_mnt_id = mnt_id;
        /* control: another file on another mount differs in both */
        ASSERT_EQ(statx(dir, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &stx), 0);
        ASSERT_OK(proc_fdinfo_mnt_ino(proc, dir, &mnt_id, &ino));
        ASSERT_U64_EQ(ino, stx.stx_ino);
        ASSERT_U64_EQ((uint64_t) mnt_id, stx.stx_mnt_id);
        ASSERT_TRUE(mnt_id != proc_mnt_id && ino != proc_ino);
        ASSERT_ERR(proc_fdinfo_mnt_ino(proc, 999999, &mnt_id, &ino), ENOENT);
}

/* The mappings the daemon's standby prefaults: found by name (the last field), not by a name that
 * only ends a path or is a substring; the first of two; malformed addresses refused; and this
 * process's own [stack] holds a local variable. */
TEST(proc_maps_find) {
        static const char text[] =
                "55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]x\n"
                "7f0000000000-7f0000001000 r--p 00000000 fe:01 123                        /tmp/my[heap]\n"
                "55d0c0c00000-55d0c0c42000 rw-p 00000000 00:00 0                          [heap]\n"
                "55d0c0d00000-55d0c0d01000 rw-p 00000000 00:00 0                          [heap]\n"
                "7ffd10000000-7ffd10021000 rw-p 00000000 00:00 0                          [stack]";
        static const char bad[] = "zzzz-7ffd10021000 rw-p 00000000 00:00 0 [stack]\n";
        _cleanup_free_ char *maps = NULL;
        uintptr_t start = 0, end = 0;
        size_t size = 0;
        /* This frame's own address, not a local's: under ASan's detect_stack_use_after_return (on
         * by default since GCC 13's libasan) locals live on a fake stack in the heap. */
        uintptr_t frame = (uintptr_t) __builtin_frame_address(0);

        ASSERT_OK(proc_maps_find(text, sizeof text - 1, "[heap]", &start, &end));
        ASSERT_TRUE(start == (uintptr_t) 0x55d0c0c00000ULL && end == (uintptr_t) 0x55d0c0c42000ULL);
        ASSERT_OK(proc_maps_find(text, sizeof text - 1, "[stack]", &start, &end)); /* no newline at the end */
        ASSERT_TRUE(start == (uintptr_t) 0x7ffd10000000ULL && end == (uintptr_t) 0x7ffd10021000ULL);
        ASSERT_ERR(proc_maps_find(text, sizeof text - 1, "[vdso]", &start, &end), ENOENT);
        ASSERT_ERR(proc_maps_find(bad, sizeof bad - 1, "[stack]", &start, &end), EBADMSG);
        ASSERT_ERR(proc_maps_find("", 0, "[stack]", &start, &end), ENOENT);

        ASSERT_OK(read_full_file_at(AT_FDCWD, "/proc/self/maps", 1024 * 1024, &maps, &size));
        ASSERT_OK(proc_maps_find(maps, size, "[stack]", &start, &end));
        ASSERT_TRUE(frame >= start && frame < end);
}

/* open_cached_at(): a path whose dentries are not cached (a process never looked up in /proc: a
 * corner of its directory no /proc walker reads, task/TID/fdinfo) is refused with -EAGAIN, not
 * walked; once looked up, it opens. A magic link (/proc/PID/root, cwd) is never followed from the
 * cache alone: always -EAGAIN. */
TEST(open_cached) {
        _cleanup_close_ int fd = -EBADF;
        char path[64], link[80];
        struct stat st;
        pid_t pid;

        fd = open_cached_at(AT_FDCWD, "/", O_PATH);
        if (fd == -ENOSYS || fd == -EINVAL) {
                test_skip("no openat2 RESOLVE_CACHED (before Linux 5.12)");
                return;
        }
        ASSERT_TRUE(fd >= 0);
        fd = safe_close(fd);

        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                alarm(10);
                pause();
                _exit(0);
        }
        snprintf(path, sizeof path, "/proc/%d/task/%d/fdinfo", (int) pid, (int) pid);
        snprintf(link, sizeof link, "/proc/%d/cwd", (int) pid);
        fd = open_cached_at(AT_FDCWD, path, O_RDONLY | O_DIRECTORY);
        ASSERT_EQ(fd, -EAGAIN);
        ASSERT_OK(stat(path, &st)); /* the walk that may wait: now it is in the cache */
        fd = open_cached_at(AT_FDCWD, path, O_RDONLY | O_DIRECTORY);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(stat(link, &st));
        ASSERT_EQ(open_cached_at(AT_FDCWD, link, O_PATH), -EAGAIN);
        ASSERT_OK(kill(pid, SIGKILL));
        ASSERT_TRUE(waitpid(pid, NULL, 0) == pid);
}

/* path_walk_long(): a path longer than PATH_MAX, walked in pieces; what the open at its end finds
 * (by inode) against the same tree walked one component at a time. Unprivileged: a tree of 24
 * directories with 200-byte names in a temporary directory, made and removed one mkdirat() and
 * unlinkat() at a time. */
#define WALK_DEPTH 24
#define WALK_NAME_LEN 200

static void walk_check(const char *path, ino_t want, const char *want_rest) {
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        const char *rest;
        struct stat st;

        ASSERT_OK(path_walk_long(path, &dir_fd, &rest));
        ASSERT_TRUE(dir_fd >= 0);
        ASSERT_TRUE(strlen(rest) < PATH_MAX);
        if (want_rest)
                ASSERT_STREQ(rest, want_rest);
        fd = openat(dir_fd, rest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(fstat(fd, &st));
        ASSERT_EQ(st.st_ino, want);
}

TEST(path_walk_long) {
        char dir[] = "/tmp/test-shared-walk.XXXXXX", name[WALK_DEPTH][WALK_NAME_LEN + 1];
        size_t size = sizeof dir + WALK_DEPTH * (WALK_NAME_LEN + 2) + 2 * PATH_MAX, len;
        _cleanup_free_ char *path = malloc(size), *odd = malloc(2 * size);
        int fds[WALK_DEPTH + 1], dir_fd = -EBADF;
        const char *rest;
        struct stat st;

        ASSERT_TRUE(path && odd);
        /* short: untouched, no fd */
        ASSERT_OK(path_walk_long("/tmp", &dir_fd, &rest));
        ASSERT_EQ(dir_fd, AT_FDCWD);
        ASSERT_STREQ(rest, "/tmp");
        ASSERT_OK(path_walk_long("", &dir_fd, &rest));
        ASSERT_EQ(dir_fd, AT_FDCWD);
        ASSERT_STREQ(rest, "");

        ASSERT_TRUE(test_mkdtemp(dir));
        fds[0] = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fds[0] >= 0);
        len = (size_t) snprintf(path, size, "%s", dir);
        for (int i = 0; i < WALK_DEPTH; i++) {
                memset(name[i], 'a' + i, WALK_NAME_LEN);
                name[i][WALK_NAME_LEN] = '\0';
                ASSERT_OK(mkdirat(fds[i], name[i], 0700));
                fds[i + 1] = openat(fds[i], name[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
                ASSERT_TRUE(fds[i + 1] >= 0);
                len += (size_t) snprintf(path + len, size - len, "/%s", name[i]);
        }
        ASSERT_TRUE(len > PATH_MAX);
        ASSERT_TRUE(open(path, O_PATH | O_CLOEXEC) < 0 && errno == ENAMETOOLONG);
        ASSERT_OK(fstat(fds[WALK_DEPTH], &st));
        walk_check(path, st.st_ino, NULL);

        /* "//" and a trailing run of slashes as long as PATH_MAX: still the same directory */
        len = (size_t) snprintf(odd, 2 * size, "%s", dir);
        for (int i = 0; i < WALK_DEPTH; i++)
                len += (size_t) snprintf(odd + len, 2 * size - len, "//%s", name[i]);
        memset(odd + len, '/', PATH_MAX);
        odd[len + PATH_MAX] = '\0';
        walk_check(odd, st.st_ino, ".");

        /* a symbolic link in the middle is followed, as open(2) follows it */
        ASSERT_OK(symlinkat(name[0], fds[0], "link"));
        len = (size_t) snprintf(odd, 2 * size, "%s/link", dir);
        for (int i = 1; i < WALK_DEPTH; i++)
                len += (size_t) snprintf(odd + len, 2 * size - len, "/%s", name[i]);
        walk_check(odd, st.st_ino, NULL);
        ASSERT_OK(unlinkat(fds[0], "link", 0));

        /* errors of the walk: a missing piece, a file in the middle, a name without '/' */
        dir_fd = -EBADF;
        rest = NULL;
        snprintf(odd, 2 * size, "%s/missing%s", dir, path + strlen(dir) + 1 + WALK_NAME_LEN);
        ASSERT_ERR(path_walk_long(odd, &dir_fd, &rest), ENOENT);
        ASSERT_OK(close(openat(fds[0], "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0600)));
        snprintf(odd, 2 * size, "%s/file%s", dir, path + strlen(dir) + 1 + WALK_NAME_LEN);
        ASSERT_ERR(path_walk_long(odd, &dir_fd, &rest), ENOTDIR);
        ASSERT_OK(unlinkat(fds[0], "file", 0));
        memset(odd, 'x', PATH_MAX);
        odd[PATH_MAX] = '\0';
        ASSERT_ERR(path_walk_long(odd, &dir_fd, &rest), ENAMETOOLONG);
        ASSERT_TRUE(dir_fd == -EBADF && !rest); /* nothing written on failure */

        for (int i = WALK_DEPTH - 1; i >= 0; i--) {
                ASSERT_OK(unlinkat(fds[i], name[i], AT_REMOVEDIR));
                safe_close(fds[i + 1]);
        }
        safe_close(fds[0]);
        ASSERT_OK(rmdir(dir));
}

TEST(ellipsize_middle) {
        char s[64], buf[32];
        const char *r;

        /* short enough: s itself */
        snprintf(s, sizeof s, "/mnt/data");
        ASSERT_TRUE(ellipsize_middle(s, 16, buf, sizeof buf) == s);
        memset(s, 'a', 40);
        memcpy(s + 30, "0123456789", 10);
        s[40] = '\0';
        r = ellipsize_middle(s, 20, buf, sizeof buf);
        ASSERT_TRUE(r == buf);
        ASSERT_EQ(strlen(r), 20U);
        ASSERT_STREQ(r, "aaaaaaaa\u2026123456789");
        /* refused bounds: s itself */
        ASSERT_TRUE(ellipsize_middle(s, 8, buf, sizeof buf) == s);
        ASSERT_TRUE(ellipsize_middle(s, 32, buf, sizeof buf) == s);
        /* a two-byte character at either cut stays whole; the result is shorter then */
        snprintf(s, sizeof s, "abcdefg\xc3\xa9xxxxxxxxxxxxxxxxxxxxxxxxxx\xc3\xa9yyyyyyyy");
        r = ellipsize_middle(s, 20, buf, sizeof buf);
        ASSERT_TRUE(utf8_is_valid_n(r, strlen(r)));
        ASSERT_TRUE(strlen(r) <= 20);
        ASSERT_STREQ(r, "abcdefg\u2026yyyyyyyy");
        /* bytes that are no UTF-8 are cut where they fall */
        memset(s, 0x80, 40);
        s[40] = '\0';
        r = ellipsize_middle(s, 20, buf, sizeof buf);
        ASSERT_EQ(strlen(r), 20U);
}

TEST(strv) {
        _cleanup_strv_free_ char **l = NULL, **w = NULL;
        size_t n = 0;

        ASSERT_EQ(strv_length(NULL), 0U);
        ASSERT_OK(strv_extend(&l, &n, "a"));
        ASSERT_OK(strv_consume(&l, &n, strdup("b")));
        ASSERT_ERR(strv_consume(&l, &n, NULL), ENOMEM);
        ASSERT_EQ(strv_length(l), 2U);
        ASSERT_TRUE(strv_contains(l, "b"));
        ASSERT_TRUE(!strv_contains(l, "c"));
        ASSERT_EQ(strv_split_words("  x\ty  z ", 3, &w), 3);
        ASSERT_STREQ(w[0], "x");
        ASSERT_STREQ(w[2], "z");
        ASSERT_TRUE(w[3] == NULL);
        w = strv_free(w);
        ASSERT_ERR(strv_split_words("x y z", 2, &w), E2BIG);
        ASSERT_TRUE(w == NULL);
        ASSERT_EQ(strv_split_words(" \t ", 2, &w), 0);
        ASSERT_TRUE(w == NULL);
}

typedef enum Color { COLOR_RED, COLOR_BLUE, _COLOR_MAX, _COLOR_INVALID = -EINVAL } Color;
static const char *const color_table[_COLOR_MAX] = { [COLOR_RED] = "red", [COLOR_BLUE] = "blue" };
DEFINE_PRIVATE_STRING_TABLE_LOOKUP(color, Color);

TEST(string_table) {
        ASSERT_STREQ(color_to_string(COLOR_BLUE), "blue");
        ASSERT_TRUE(color_to_string(_COLOR_MAX) == NULL);
        ASSERT_TRUE(color_to_string(_COLOR_INVALID) == NULL);
        ASSERT_EQ(color_from_string("red"), COLOR_RED);
        ASSERT_EQ(color_from_string("green"), _COLOR_INVALID);
        ASSERT_EQ(color_from_string(NULL), _COLOR_INVALID);
}

static int cmp_by_key(const size_t *a, const size_t *b, const int *keys) {
        return CMP(keys[*a], keys[*b]);
}

TEST(sort) {
        int keys[] = { 30, 10, 20 };
        size_t order[] = { 0, 1, 2 };

        typesafe_qsort_r(order, ELEMENTSOF(order), cmp_by_key, (const int *) keys);
        ASSERT_EQ(order[0], 1U);
        ASSERT_EQ(order[1], 2U);
        ASSERT_EQ(order[2], 0U);
        typesafe_qsort_r((size_t *) NULL, 0, cmp_by_key, (const int *) keys);
}

TEST(utf8) {
        _cleanup_free_ char *a = NULL, *b = NULL;

        ASSERT_EQ(utf8_sequence_length("a", 1), 1U);
        ASSERT_EQ(utf8_sequence_length("\xC3\xA9", 2), 2U);
        ASSERT_EQ(utf8_sequence_length("\xC3\xA9", 1), 0U); /* cut short */
        ASSERT_EQ(utf8_sequence_length("\xE2\x82\xAC", 3), 3U);
        ASSERT_EQ(utf8_sequence_length("\xF0\x9F\x98\x80", 4), 4U);
        ASSERT_EQ(utf8_sequence_length("\xC0\xAF", 2), 0U);         /* overlong */
        ASSERT_EQ(utf8_sequence_length("\xE0\x80\xAF", 3), 0U);     /* overlong */
        ASSERT_EQ(utf8_sequence_length("\xED\xA0\x80", 3), 0U);     /* surrogate */
        ASSERT_EQ(utf8_sequence_length("\xF4\x90\x80\x80", 4), 0U); /* > U+10FFFF */
        ASSERT_EQ(utf8_sequence_length("\xF5\x80\x80\x80", 4), 0U);
        ASSERT_EQ(utf8_sequence_length("\x80", 1), 0U);         /* continuation */
        ASSERT_EQ(utf8_sequence_length("\xE2\x28\xA1", 3), 0U); /* bad continuation */

        ASSERT_TRUE(utf8_is_valid_n("", 0));
        ASSERT_TRUE(utf8_is_valid_n("/mnt/caf\xC3\xA9", 10));
        ASSERT_TRUE(utf8_is_valid_n("a\0b", 3)); /* NUL is a character */
        ASSERT_TRUE(!utf8_is_valid_n("/mnt/\xff", 6));
        ASSERT_TRUE(!utf8_is_valid_n("\xC3\xA9", 1));

        a = utf8_escape_invalid_n("a\xff"
                                  "b\xC3\xA9",
                                  5);
        ASSERT_STREQ(a, "a\xEF\xBF\xBD"
                        "b\xC3\xA9");
        b = utf8_escape_invalid_n("\xE2\x82", 2); /* each byte of a cut sequence */
        ASSERT_STREQ(b, "\xEF\xBF\xBD\xEF\xBF\xBD");
}

/* What a terminal would not show as itself (review Q, M3 and L4). */
TEST(utf8_escape_display) {
        static const struct {
                const char *in, *out, *out_backslash;
        } cases[] = {
                { "/mnt/plain", "/mnt/plain", "/mnt/plain" },
                { "a\nb\tc\\d", "a\\nb\\tc\\d", "a\\nb\\tc\\\\d" },
                { "\x1b[2J\x07\x7f", "\\x1b[2J\\x07\\x7f", "\\x1b[2J\\x07\\x7f" },
                /* C1 controls (U+009B is a CSI to some terminals), not U+00A0 */
                { "\xc2\x9b"
                  "1m\xc2\x85\xc2\xa0",
                  "\\u009b1m\\u0085\xc2\xa0", "\\u009b1m\\u0085\xc2\xa0" },
                /* bidirectional formatting, not its neighbours U+2029, U+202F, U+2065, U+206A */
                { "\xe2\x80\xae\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f",
                  "\\u202e\\u2066\\u2069\\u200e\\u200f", "\\u202e\\u2066\\u2069\\u200e\\u200f" },
                { "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa",
                  "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa",
                  "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa" },
                { "caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80",
                  "caf\xc3\xa9 \xf0\x9f\x98\x80" },
                { "\xff\xe2\x80", "\\xff\\xe2\\x80", "\\xff\\xe2\\x80" },
        };
        char buf[64];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                size_t n = strlen(cases[i].in);

                ASSERT_EQ(utf8_escape_display(cases[i].in, n, 0, buf, sizeof buf), strlen(cases[i].out));
                ASSERT_STREQ(buf, cases[i].out);
                ASSERT_EQ(utf8_escape_display(cases[i].in, n, UTF8_ESCAPE_BACKSLASH, buf, sizeof buf),
                          strlen(cases[i].out_backslash));
                ASSERT_STREQ(buf, cases[i].out_backslash);
        }
        /* Cut short: before an escape or a character that does not fit, never inside one. */
        ASSERT_EQ(utf8_escape_display("ab\x1b", 3, 0, buf, 6), 2U);
        ASSERT_STREQ(buf, "ab");
        ASSERT_EQ(utf8_escape_display("ab\x1b", 3, 0, buf, 7), 6U);
        ASSERT_STREQ(buf, "ab\\x1b");
        ASSERT_EQ(utf8_escape_display("a\xc3\xa9", 3, 0, buf, 3), 1U);
        ASSERT_STREQ(buf, "a");
        ASSERT_EQ(utf8_escape_display("abc", 3, 0, buf, 1), 0U);
        ASSERT_STREQ(buf, "");
        /* the worst case, every byte escaped, fits 4 * n + 1 */
        ASSERT_EQ(utf8_escape_display("\xff\xff\xff", 3, 0, buf, 13), 12U);
}

TEST(hex) {
        _cleanup_free_ char *h = NULL, *e = NULL, *s = NULL;

        ASSERT_EQ(unhexchar('0'), 0);
        ASSERT_EQ(unhexchar('9'), 9);
        ASSERT_EQ(unhexchar('a'), 10);
        ASSERT_EQ(unhexchar('F'), 15);
        ASSERT_ERR(unhexchar('g'), EINVAL);
        ASSERT_ERR(unhexchar(' '), EINVAL);

        h = hexmem("/\n\xff", 3);
        ASSERT_STREQ(h, "2f0aff");
        e = hexmem("", 0);
        ASSERT_STREQ(e, "");

        ASSERT_OK(unhexstr("2f0aFF", 6, &s));
        ASSERT_STREQ(s, "/\n\xff");
        ASSERT_ERR(unhexstr("2f0", 3, &s), EBADMSG);  /* odd */
        ASSERT_ERR(unhexstr("2g", 2, &s), EBADMSG);   /* not a digit */
        ASSERT_ERR(unhexstr("2f00", 4, &s), EBADMSG); /* NUL byte */
        ASSERT_STREQ(s, "/\n\xff");                   /* untouched on error */
}

TEST(json_build) {
        _cleanup_json_ json_object *o = json_object_new_object();
        _cleanup_free_ char *text = NULL;
        char *v[] = { (char *) "x", (char *) "y" };

        ASSERT_TRUE(o);
        ASSERT_OK(json_add_string(o, "s", "a/b"));
        ASSERT_OK(json_add_string(o, "n", NULL));
        ASSERT_OK(json_add_bytes(o, "p", "/\xff", 100));
        ASSERT_OK(json_add_bytes(o, "q", "ok", 100));
        ASSERT_ERR(json_add_bytes(o, "big", "abc", 2), E2BIG);
        ASSERT_OK(json_add_u64(o, "u", UINT64_MAX));
        ASSERT_OK(json_add_u64_or_null(o, "unknown", 7, 7));
        ASSERT_OK(json_add_u64_or_null(o, "known", 6, 7));
        ASSERT_OK(json_add_int(o, "i", -3));
        ASSERT_OK(json_add_bool(o, "b", true));
        ASSERT_OK(json_add_bytes_array(o, "a", v, ELEMENTSOF(v), 100));
        ASSERT_ERR(json_add(o, "alloc", NULL), ENOMEM);
        ASSERT_OK(json_to_string_dup(o, JSON_FORMAT_SHORT, &text));
        ASSERT_STREQ(text,
                     "{\"s\":\"a/b\",\"n\":null,\"p\":\"/\xEF\xBF\xBD\",\"p_hex\":\"2fff\",\"q\":\"ok\","
                     "\"u\":18446744073709551615,\"unknown\":null,\"known\":6,\"i\":-3,\"b\":true,"
                     "\"a\":[\"x\",\"y\"]}");
}

/* An array of raw strings: lossy, with "<key>_hex" (null for the valid ones) only when one is not
 * valid UTF-8; read back exactly with JSON_BYTES, lossily without; an array without "_hex" (as
 * written before it existed) reads as it is; a "_hex" array that does not match is refused. */
TEST(json_bytes_array) {
        _cleanup_json_ json_object *o = json_object_new_object(), *plain = json_object_new_object(),
                                   *back = NULL;
        _cleanup_free_ char *text = NULL, *text_plain = NULL;
        char *v[] = { (char *) "ok", (char *) "/m\xff\xfe\"q", (char *) "caf\xc3\xa9" }, *nul[] = { NULL };
        char **got = NULL;
        size_t n = 0;

        ASSERT_TRUE(o && plain);
        ASSERT_OK(json_add_bytes_array(o, "a", v, ELEMENTSOF(v), 100));
        ASSERT_OK(json_add_bytes_array(plain, "a", (char *[]) { v[0], v[2] }, 2, 100));
        ASSERT_ERR(json_add_bytes_array(plain, "big", v, ELEMENTSOF(v), 5), E2BIG);
        ASSERT_ERR(json_add_bytes_array(plain, "null", nul, 1, 5), EINVAL);
        ASSERT_OK(json_to_string_dup(o, JSON_FORMAT_SHORT, &text));
        ASSERT_STREQ(text, "{\"a\":[\"ok\",\"/m\xEF\xBF\xBD\xEF\xBF\xBD\\\"q\",\"caf\xc3\xa9\"],"
                           "\"a_hex\":[null,\"2f6dfffe2271\",null]}");
        ASSERT_OK(json_to_string_dup(plain, JSON_FORMAT_SHORT, &text_plain));
        ASSERT_STREQ(text_plain, "{\"a\":[\"ok\",\"caf\xc3\xa9\"]}");

        ASSERT_OK(json_parse_strict(text, strlen(text), 4096, 4, &back));
        ASSERT_EQ(json_get_string_array(back, "a", JSON_BYTES, 3, 100, &got, &n), 1);
        ASSERT_EQ(n, 3U);
        for (size_t i = 0; i < n; i++)
                ASSERT_STREQ(got[i], v[i]);
        strv_free(got);
        ASSERT_EQ(json_get_string_array(back, "a", JSON_OPTIONAL, 3, 100, &got, &n), 1);
        ASSERT_STREQ(got[1], "/m\xEF\xBF\xBD\xEF\xBF\xBD\"q");
        strv_free(got);
        ASSERT_ERR(json_get_string_array(back, "a", JSON_BYTES, 3, 5, &got, &n), EBADMSG); /* 12 digits */
        json_object_put(TAKE_PTR(back));

        static const char *const bad[] = {
                "{\"a\":[\"x\"],\"a_hex\":[null,null]}", /* not as long */
                "{\"a\":[\"x\"],\"a_hex\":[\"2g\"]}",    /* not hex */
                "{\"a\":[\"x\"],\"a_hex\":[\"7800\"]}",  /* a NUL byte */
                "{\"a\":[\"x\"],\"a_hex\":[5]}",         "{\"a\":[\"x\"],\"a_hex\":\"78\"}",
                "{\"a\":[5],\"a_hex\":[\"78\"]}", /* the element the twin stands for is no string */
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ASSERT_OK(json_parse_strict(bad[i], strlen(bad[i]), 4096, 4, &back));
                ASSERT_ERR(json_get_string_array(back, "a", JSON_BYTES, 3, 100, &got, &n), EBADMSG);
                json_object_put(TAKE_PTR(back));
        }
}

/* An object printed by hand (JsonBuf) against json-c's text of the same members, both formats, at
 * depth 0 and 2: every byte from 0x01 to 0x7f in a string (the escapes, lower-case hex, '/'
 * unescaped), multi-byte UTF-8, the extremes of the numbers, null; reset keeps the memory and starts
 * a new object. */
TEST(json_buf_as_json_c) {
        static const int formats[] = { JSON_FORMAT_PRETTY, JSON_FORMAT_SHORT };
        char all[128];

        for (int c = 1; c < 128; c++)
                all[c - 1] = (char) c;
        all[127] = 0;
        for (size_t f = 0; f < ELEMENTSOF(formats); f++) {
                _cleanup_json_ json_object *o = json_object_new_object();
                _cleanup_(json_buf_done) JsonBuf b = { .flags = formats[f] };
                const char *want;
                size_t len = 0;

                ASSERT_TRUE(o);
                ASSERT_OK(json_add_string(o, "all", all));
                ASSERT_OK(json_add_string(o, "utf8", "/mnt/\xc3\xbc\xe2\x82\xac\xf0\x9f\x92\xbe \"x\""));
                ASSERT_OK(json_add_string(o, "empty", ""));
                ASSERT_OK(json_add_null(o, "none"));
                ASSERT_OK(json_add_u64(o, "max", UINT64_MAX));
                ASSERT_OK(json_add_u64(o, "zero", 0));
                ASSERT_OK(json_add_int(o, "min", INT_MIN));
                ASSERT_OK(json_add_int(o, "int", 4095));
                want = json_object_to_json_string_length(o, formats[f], &len);
                ASSERT_TRUE(want);

                /* at depth 0, then at depth 2 (in an array in an object: the mounts of a record) */
                for (int round = 0; round < 2; round++) {
                        _cleanup_json_ json_object *doc = NULL, *array = NULL;
                        const char *pre = round == 0                        ? ""
                                          : formats[f] == JSON_FORMAT_SHORT ? "{\"x\":["
                                                                            : "{\n  \"x\": [\n    ";
                        const char *post = round == 0                        ? ""
                                           : formats[f] == JSON_FORMAT_SHORT ? "]}"
                                                                             : "\n  ]\n}";

                        if (round == 1) {
                                ASSERT_TRUE((doc = json_object_new_object()) &&
                                            (array = json_object_new_array()));
                                ASSERT_OK(json_append(array, json_object_get(o)));
                                ASSERT_OK(json_add(doc, "x", TAKE_PTR(array)));
                                want = json_object_to_json_string_length(doc, formats[f], &len);
                                ASSERT_TRUE(want && len > strlen(pre) + strlen(post));
                                ASSERT_TRUE(strncmp(want, pre, strlen(pre)) == 0 &&
                                            strcmp(want + len - strlen(post), post) == 0);
                                want += strlen(pre);
                                len -= strlen(pre) + strlen(post);
                        }
                        json_buf_reset(&b);
                        json_buf_open(&b, formats[f], round == 0 ? 0 : 2);
                        json_buf_key(&b, "all");
                        json_buf_string(&b, all, strlen(all));
                        json_buf_key(&b, "utf8");
                        json_buf_string_or_null(&b, "/mnt/\xc3\xbc\xe2\x82\xac\xf0\x9f\x92\xbe \"x\"");
                        json_buf_key(&b, "empty");
                        json_buf_string(&b, "", 0);
                        json_buf_key(&b, "none");
                        json_buf_string_or_null(&b, NULL);
                        json_buf_key(&b, "max");
                        json_buf_u64(&b, UINT64_MAX);
                        json_buf_key(&b, "zero");
                        json_buf_u64(&b, 0);
                        json_buf_key(&b, "min");
                        json_buf_int(&b, INT_MIN);
                        json_buf_key(&b, "int");
                        json_buf_int(&b, 4095);
                        json_buf_close(&b);
                        ASSERT_OK(b.error);
                        ASSERT_EQ(b.len, len);
                        ASSERT_TRUE(memcmp(b.text, want, len) == 0);
                }
        }
}

#ifdef __SANITIZE_ADDRESS__
/* json_buf_out_of_memory: a request the allocator cannot serve returns NULL under ASan too, as it
 * does under glibc (ASAN_OPTIONS from the environment still apply on top). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
        return "allocator_may_return_null=1";
}
#endif

/* A JsonBuf's allocation failure is kept (-ENOMEM) and everything after it adds nothing, reset
 * included: the printer's caller checks once per object (state.c), so nothing half-printed may pass
 * for an object. Both ways it fails: realloc() refusing (a buffer grown to a quarter of the address
 * space asks for half of it), and the guard against a length that would overflow (where realloc()
 * would refuse too: the guard only keeps the sum from wrapping). */
TEST(json_buf_out_of_memory) {
        _cleanup_(json_buf_done) JsonBuf b = {};
        size_t len, size;

        json_buf_open(&b, JSON_FORMAT_SHORT, 0);
        json_buf_key(&b, "a");
        json_buf_u64(&b, 1);
        ASSERT_EQ(b.error, 0);
        len = b.len;
        size = b.size;

        for (int round = 0; round < 2; round++) {
                /* The text as if that long: no byte past the real one is touched, since every call
                 * below must grow it first. */
                b.len = b.size = round == 0 ? SIZE_MAX / 4 : SIZE_MAX / 2;
                b.error = 0;
                json_buf_key(&b, "b");
                ASSERT_EQ(b.error, -ENOMEM);
                ASSERT_EQ(b.len, round == 0 ? SIZE_MAX / 4 : SIZE_MAX / 2);
                json_buf_string(&b, "x", 1);
                json_buf_string_or_null(&b, NULL);
                json_buf_u64(&b, UINT64_MAX);
                json_buf_int(&b, -1);
                json_buf_null(&b);
                json_buf_close(&b);
                ASSERT_EQ(b.len, round == 0 ? SIZE_MAX / 4 : SIZE_MAX / 2);
                ASSERT_EQ(b.error, -ENOMEM);
                json_buf_reset(&b);
                json_buf_open(&b, JSON_FORMAT_SHORT, 0);
                json_buf_key(&b, "c");
                ASSERT_EQ(b.len, (size_t) 0);
                ASSERT_EQ(b.error, -ENOMEM);
        }
        /* The text itself was left as it was. */
        b.len = len;
        b.size = size;
        ASSERT_TRUE(len == 6 && memcmp(b.text, "{\"a\":1", len) == 0);
}

TEST(json_get) {
        _cleanup_json_ json_object *o = NULL;
        json_object *sub = NULL, *ar = NULL;
        _cleanup_free_ char *s = NULL, *p = NULL, *none = NULL;
        char **v = NULL;
        size_t n = 99;
        uint64_t u = 0;
        int i = 0;
        bool b = false;
        const char *text =
                "{\"u\": 5, \"neg\": -1, \"null\": null, \"s\": \"caf\\u00e9\", \"nul\": \"a\\u0000\","
                "\"p\": \"/?\", \"p_hex\": \"2fff\", \"b\": false, \"o\": {}, \"a\": [\"x\", \"yy\"],"
                "\"str\": \"5\"}";

        ASSERT_OK(json_parse_strict(text, strlen(text), 4096, 4, &o));
        ASSERT_EQ(json_get_u64(o, "u", JSON_MANDATORY, 0, &u), 1);
        ASSERT_U64_EQ(u, 5);
        ASSERT_EQ(json_get_u64(o, "missing", JSON_OPTIONAL, 42, &u), 0);
        ASSERT_U64_EQ(u, 42);
        ASSERT_EQ(json_get_u64(o, "null", JSON_OPTIONAL, 43, &u), 0);
        ASSERT_U64_EQ(u, 43);
        ASSERT_ERR(json_get_u64(o, "missing", JSON_MANDATORY, 0, &u), EBADMSG);
        ASSERT_ERR(json_get_u64(o, "neg", JSON_OPTIONAL, 0, &u), EBADMSG);
        ASSERT_ERR(json_get_u64(o, "str", JSON_OPTIONAL, 0, &u), EBADMSG);
        ASSERT_U64_EQ(u, 43); /* untouched on error */

        ASSERT_EQ(json_get_int(o, "u", JSON_OPTIONAL, 5, -1, &i), 1);
        ASSERT_EQ(i, 5);
        ASSERT_ERR(json_get_int(o, "u", JSON_OPTIONAL, 4, -1, &i), EBADMSG);
        ASSERT_EQ(json_get_int(o, "missing", JSON_OPTIONAL, 4, -1, &i), 0);
        ASSERT_EQ(i, -1);

        ASSERT_EQ(json_get_bool(o, "b", JSON_OPTIONAL, true, &b), 1);
        ASSERT_TRUE(!b);
        ASSERT_EQ(json_get_bool(o, "missing", JSON_OPTIONAL, true, &b), 0);
        ASSERT_TRUE(b);
        ASSERT_ERR(json_get_bool(o, "u", JSON_OPTIONAL, true, &b), EBADMSG);

        ASSERT_EQ(json_get_string(o, "s", JSON_MANDATORY, 100, &s), 1);
        ASSERT_STREQ(s, "caf\xC3\xA9");
        ASSERT_ERR(json_get_string(o, "s", JSON_MANDATORY, 4, &none), EBADMSG); /* 5 bytes */
        ASSERT_ERR(json_get_string(o, "nul", JSON_OPTIONAL, 100, &none), EBADMSG);
        ASSERT_ERR(json_get_string(o, "u", JSON_OPTIONAL, 100, &none), EBADMSG);
        ASSERT_EQ(json_get_string(o, "missing", JSON_OPTIONAL, 100, &none), 0);
        ASSERT_TRUE(none == NULL);
        ASSERT_EQ(json_get_string(o, "p", JSON_BYTES, 100, &p), 1);
        ASSERT_STREQ(p, "/\xff");
        ASSERT_ERR(json_get_string(o, "p", JSON_BYTES, 1, &none), EBADMSG); /* 4 digits > 2 * 1 */

        ASSERT_EQ(json_get_object(o, "o", JSON_OPTIONAL, &sub), 1);
        ASSERT_TRUE(sub);
        ASSERT_ERR(json_get_object(o, "a", JSON_OPTIONAL, &sub), EBADMSG);
        ASSERT_EQ(json_get_array(o, "a", JSON_OPTIONAL, 2, &ar), 1);
        ASSERT_EQ(json_object_array_length(ar), 2U);
        ASSERT_ERR(json_get_array(o, "a", JSON_OPTIONAL, 1, &ar), EBADMSG);
        ASSERT_EQ(json_get_array(o, "missing", JSON_OPTIONAL, 1, &ar), 0);
        ASSERT_TRUE(ar == NULL);

        ASSERT_EQ(json_get_string_array(o, "a", JSON_OPTIONAL, 2, 2, &v, &n), 1);
        ASSERT_EQ(n, 2U);
        ASSERT_STREQ(v[1], "yy");
        ASSERT_TRUE(v[2] == NULL);
        strv_free(v);
        ASSERT_ERR(json_get_string_array(o, "a", JSON_OPTIONAL, 2, 1, &v, &n), EBADMSG); /* "yy" too long */
        ASSERT_ERR(json_get_string_array(o, "o", JSON_OPTIONAL, 2, 2, &v, &n), EBADMSG);
        ASSERT_EQ(json_get_string_array(o, "missing", JSON_OPTIONAL, 2, 2, &v, &n), 0);
        ASSERT_TRUE(v == NULL);
        ASSERT_EQ(n, 0U);
}

TEST(json_parse) {
        json_object *o = NULL;

#define PARSE(t) json_parse_strict(t, strlen(t), 256, 3, &o)
        ASSERT_ERR(PARSE("{\"a\": 1,}"), EBADMSG);                    /* strict */
        ASSERT_ERR(PARSE("{} x"), EBADMSG);                           /* trailing */
        ASSERT_ERR(PARSE("[[[[1]]]]"), EBADMSG);                      /* depth */
        ASSERT_ERR(PARSE("\"\xED\xA0\x80\""), EBADMSG);               /* raw surrogate */
        ASSERT_ERR(json_parse_strict("{}\0", 3, 64, 3, &o), EBADMSG); /* NUL */
        ASSERT_ERR(json_parse_strict("{}", 2, 1, 3, &o), EFBIG);
        ASSERT_TRUE(o == NULL);
        ASSERT_OK(PARSE(" {\"a\": [1]} \n"));
        ASSERT_TRUE(json_object_is_type(o, json_type_object));
        json_object_put(o);
        o = NULL;
        ASSERT_ERR(PARSE("[\xc3\xa9]"), EBADMSG);       /* a character outside a string, escaped or not */
        ASSERT_ERR(PARSE("[\"\\\xc3\xa9\"]"), EBADMSG); /* "\é": an invalid escape, not "\\u00e9" */
        ASSERT_ERR(PARSE("{\"\\\xf0\x9f\x92\xbe\": 1}"), EBADMSG);
        /* Integers beyond json-c's range are refused (0.16 saturated them, 0.18 refuses them);
         * the limits themselves, doubles and digits in strings are not. */
        ASSERT_ERR(PARSE("[18446744073709551616]"), EBADMSG);
        ASSERT_ERR(PARSE("[1, 99999999999999999999999]"), EBADMSG);
        ASSERT_ERR(PARSE("[-9223372036854775809]"), EBADMSG);
        ASSERT_ERR(PARSE("[1,-9223372036854775809]"), EBADMSG);          /* right after another number */
        ASSERT_ERR(PARSE("[\"a\\\\\", 18446744073709551616]"), EBADMSG); /* after a string ending in \\ */
        ASSERT_ERR(PARSE("[\"\\\"\", 18446744073709551616]"), EBADMSG);  /* after a string of \" */
        ASSERT_ERR(PARSE("[1.5e-3,99999999999999999999999]"), EBADMSG);
        ASSERT_TRUE(o == NULL);
        ASSERT_OK(PARSE(
                "[18446744073709551615, -9223372036854775808, 99999999999999999999999.5, 99999999999999999999999e-3]"));
        ASSERT_U64_EQ(json_object_get_uint64(json_object_array_get_idx(o, 0)), UINT64_MAX);
        json_object_put(TAKE_PTR(o));
        ASSERT_OK(PARSE("{\"k\\\"99999999999999999999\": \"99999999999999999999\\\\\"}"));
        json_object_put(TAKE_PTR(o));
#undef PARSE
}

/* Characters above U+007F in keys and values, in every UTF-8 length, U+FFFD (the lossy form of a
 * raw byte), escaped and raw side by side: each decodes to its own UTF-8. json-c 0.18's strict mode
 * refuses every raw byte above 0x7f (json-c issues #875, #892; Debian 13): json_parse_strict() hands
 * it the text with those characters as \u escapes. */
TEST(json_parse_non_ascii) {
        static const char text[] = "{\"m\xc3\xbcnt\": \"/media/Donn\xc3\xa9\x65s \xe2\x82\xac \xef\xbf\xbd\","
                                   " \"disk\": \"\xf0\x9f\x92\xbe\\ud83d\\udcbe\xf4\x8f\xbf\xbf\","
                                   " \"max\": \"\xef\xbf\xbf\xc2\x80\\u00e9\", \"bs\": \"\\\\\xc3\xa9\"}";
        _cleanup_json_ json_object *o = NULL;
        _cleanup_free_ char *m = NULL, *d = NULL, *x = NULL, *b = NULL;

        ASSERT_OK(json_parse_strict(text, strlen(text), 4096, 3, &o));
        ASSERT_OK(json_get_string(o, "m\xc3\xbcnt", 0, 256, &m));
        ASSERT_STREQ(m, "/media/Donn\xc3\xa9\x65s \xe2\x82\xac \xef\xbf\xbd");
        ASSERT_OK(json_get_string(o, "disk", 0, 256, &d));
        ASSERT_STREQ(d, "\xf0\x9f\x92\xbe\xf0\x9f\x92\xbe\xf4\x8f\xbf\xbf");
        ASSERT_OK(json_get_string(o, "max", 0, 256, &x));
        ASSERT_STREQ(x, "\xef\xbf\xbf\xc2\x80\xc3\xa9");
        ASSERT_OK(json_get_string(o, "bs", 0, 256, &b)); /* an escaped backslash, then a character */
        ASSERT_STREQ(b, "\\\xc3\xa9");
}

TEST(devnum) {
        dev_t d = 0;
        char buf[DEVNUM_STR_MAX];

        ASSERT_STREQ(format_devnum(buf, makedev(259, 3)), "259:3");
        ASSERT_STREQ(FORMAT_DEVNUM(makedev(0, 52)), "0:52");
        ASSERT_STREQ(FORMAT_DEVNUM(makedev(4294967295U, 4294967295U)), "4294967295:4294967295");

        ASSERT_OK(parse_devnum("259:3", &d));
        ASSERT_EQ(major(d), 259U);
        ASSERT_EQ(minor(d), 3U);
        ASSERT_OK(parse_devnum("0:0", &d));
        ASSERT_EQ(d, 0U);
        ASSERT_OK(parse_devnum("4294967295:4294967295", &d));
        ASSERT_EQ(major(d), 4294967295U);
        ASSERT_ERR(parse_devnum("259", &d), EINVAL);
        ASSERT_ERR(parse_devnum(":3", &d), EINVAL);
        ASSERT_ERR(parse_devnum("259:", &d), EINVAL);
        ASSERT_ERR(parse_devnum("259:3:1", &d), EINVAL);
        ASSERT_ERR(parse_devnum(" 259:3", &d), EINVAL);
        ASSERT_ERR(parse_devnum("259: 3", &d), EINVAL);
        ASSERT_ERR(parse_devnum("-1:3", &d), EINVAL);
        ASSERT_ERR(parse_devnum("0000000000000001:3", &d), EINVAL); /* 16 characters */
        ASSERT_ERR(parse_devnum("4294967296:0", &d), ERANGE);
        ASSERT_ERR(parse_devnum(NULL, &d), EINVAL);
        ASSERT_EQ(major(d), 4294967295U); /* untouched on error */
}

TEST(format) {
        char b[FORMAT_BYTES_MAX], r[FORMAT_RELATIVE_MAX], t[FORMAT_TIMESTAMP_MAX];
        usec_t n = 1764583418ULL * USEC_PER_SEC; /* Mon 2025-12-01 10:03:38 UTC */

        ASSERT_STREQ(format_bytes(b, sizeof b, 0), "0B");
        ASSERT_STREQ(format_bytes(b, sizeof b, 1023), "1023B");
        ASSERT_STREQ(format_bytes(b, sizeof b, 1024), "1.0K");
        ASSERT_STREQ(format_bytes(b, sizeof b, 7130316), "6.7M");
        ASSERT_STREQ(format_bytes(b, sizeof b, 7130317), "6.8M");
        ASSERT_STREQ(format_bytes(b, sizeof b, 5ULL << 30), "5.0G");
        ASSERT_STREQ(format_bytes(b, sizeof b, UINT64_MAX), "15.9E");

        ASSERT_STREQ(format_relative(r, sizeof r, n, n), "now");
        ASSERT_STREQ(format_relative(r, sizeof r, n - 850 * USEC_PER_MSEC, n), "850ms ago");
        ASSERT_STREQ(format_relative(r, sizeof r, n - 183 * USEC_PER_SEC, n), "3min 3s ago");
        ASSERT_STREQ(format_relative(r, sizeof r, n - 300 * USEC_PER_SEC, n), "5min ago");
        ASSERT_STREQ(format_relative(r, sizeof r, n - 7500 * USEC_PER_SEC, n), "2h 5min ago");
        ASSERT_STREQ(format_relative(r, sizeof r, n - 3 * 86400 * USEC_PER_SEC, n), "3 days ago");
        ASSERT_STREQ(format_relative(r, sizeof r, n + 10 * USEC_PER_SEC, n), "10s left");
        ASSERT_STREQ(format_relative(r, sizeof r, 0, n), "n/a");

        setenv("TZ", "UTC", 1);
        tzset();
        ASSERT_STREQ(format_timestamp(t, sizeof t, n), "Mon 2025-12-01 10:03:38 UTC");
        ASSERT_STREQ(format_timestamp(t, sizeof t, 0), "n/a");
}

/* The child writes its pid, then answers "done" or waits forever (killed at the timeout). */
static int child_pid_then(int pipe_fd, int keep_fd, void *userdata) {
        pid_t pid = getpid();
        bool answer = *(bool *) userdata;

        (void) keep_fd;
        if (write(pipe_fd, &pid, sizeof pid) != sizeof pid)
                return EXIT_FAILURE;
        if (answer)
                return write(pipe_fd, "done", 4) == 4 ? EXIT_SUCCESS : EXIT_FAILURE;
        for (;;)
                pause();
}

typedef struct PidFeed {
        bool answer;
        pid_t pid;
} PidFeed;

static int feed_pid(const char *buf, size_t size, void *userdata) {
        PidFeed *f = userdata;

        if (size >= sizeof(pid_t))
                memcpy(&f->pid, buf, sizeof(pid_t));
        return size >= sizeof(pid_t) + 4;
}

/* Waits (bounded, 5 s) until none is listed; the listing reaps them. */
static size_t abandoned_settle(pid_t *pids, size_t max) {
        size_t n = bounded_child_abandoned(max, pids);

        for (int i = 0; i < 500 && n > 0; i++) {
                usleep(10 * 1000);
                n = bounded_child_abandoned(max, pids);
        }
        return n;
}

TEST(bounded_child_abandoned) {
        pid_t pids[BOUNDED_CHILD_ABANDONED_MAX];
        PidFeed f = { .answer = true };
        size_t n;

        /* An answer: never listed, even while it exits (no scope for a child on its way out). */
        ASSERT_EQ(bounded_child_run(-EBADF, 5 * USEC_PER_SEC, 64, child_pid_then, feed_pid, &f), 1);
        ASSERT_TRUE(f.pid > 0);
        ASSERT_EQ(bounded_child_abandoned(ELEMENTSOF(pids), pids), 0U);
        (void) waitpid(f.pid, NULL, 0);

        /* No answer: killed at the timeout (1 s: the child writes its pid first, on a loaded machine
         * too). Listed while it is there (a SIGKILL takes a moment), never after it exited, and
         * reaped by then (by the run, or by the listing). */
        f = (PidFeed) { .answer = false };
        ASSERT_ERR(bounded_child_run(-EBADF, USEC_PER_SEC, 64, child_pid_then, feed_pid, &f), ETIMEDOUT);
        ASSERT_TRUE(f.pid > 0);
        n = bounded_child_abandoned(ELEMENTSOF(pids), pids);
        ASSERT_TRUE(n == 0 || (n == 1 && pids[0] == f.pid));
        ASSERT_EQ(abandoned_settle(pids, ELEMENTSOF(pids)), 0U);
        ASSERT_TRUE(waitpid(f.pid, NULL, WNOHANG) < 0 && errno == ECHILD);
        /* max 0: nothing written (ret_pids may be NULL). */
        ASSERT_EQ(bounded_child_abandoned(0, NULL), 0U);
}

/* In two steps: the parent works between start and finish (the answer waits in the pipe); the bound
 * counts from start; a child cancelled is killed and abandoned like one that timed out; each start
 * is counted. */
TEST(bounded_child_start_finish) {
        pid_t pids[BOUNDED_CHILD_ABANDONED_MAX];
        PidFeed f = { .answer = true };
        BoundedChild c = BOUNDED_CHILD_NULL;
        unsigned n0 = bounded_child_started();
        usec_t t0;

        ASSERT_OK(bounded_child_start(-EBADF, 5 * USEC_PER_SEC, 64, child_pid_then, &f, &c));
        ASSERT_TRUE(c.pid > 0 && c.fd >= 0);
        ASSERT_EQ(bounded_child_started() - n0, 1U);
        usleep(50 * 1000); /* the parent's own work */
        ASSERT_EQ(bounded_child_finish(&c, feed_pid, &f), 1);
        ASSERT_TRUE(f.pid > 0 && c.pid == 0 && c.fd < 0);
        bounded_child_cancel(&c); /* finished: nothing to do */
        (void) waitpid(f.pid, NULL, 0);

        /* In one go, a child started past its bound is killed at once, whatever it could answer:
         * nothing is read past the bound (20 tries: a fast child would answer in some of them). */
        for (int i = 0; i < 20; i++) {
                f = (PidFeed) { .answer = true };
                ASSERT_ERR(bounded_child_run(-EBADF, 1, 64, child_pid_then, feed_pid, &f), ETIMEDOUT);
        }
        ASSERT_EQ(abandoned_settle(pids, ELEMENTSOF(pids)), 0U);

        /* An answer in the pipe when finish looks, past the bound, counts. */
        f = (PidFeed) { .answer = true };
        ASSERT_OK(bounded_child_start(-EBADF, 100 * USEC_PER_MSEC, 64, child_pid_then, &f, &c));
        usleep(300 * 1000);
        ASSERT_EQ(bounded_child_finish(&c, feed_pid, &f), 1);
        (void) waitpid(f.pid, NULL, 0);

        /* The bound counts from start: work longer than it leaves finish nothing to wait for. */
        f = (PidFeed) { .answer = false };
        ASSERT_OK(bounded_child_start(-EBADF, 200 * USEC_PER_MSEC, 64, child_pid_then, &f, &c));
        usleep(300 * 1000);
        t0 = now(CLOCK_MONOTONIC);
        ASSERT_ERR(bounded_child_finish(&c, feed_pid, &f), ETIMEDOUT);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t0 < 100 * USEC_PER_MSEC);
        ASSERT_EQ(abandoned_settle(pids, ELEMENTSOF(pids)), 0U);

        /* Cancelled before its answer: killed, listed until it is gone, then reaped. */
        f = (PidFeed) { .answer = false };
        ASSERT_OK(bounded_child_start(-EBADF, 5 * USEC_PER_SEC, 64, child_pid_then, &f, &c));
        f.pid = c.pid;
        bounded_child_cancel(&c);
        ASSERT_TRUE(c.pid == 0 && c.fd < 0);
        ASSERT_EQ(abandoned_settle(pids, ELEMENTSOF(pids)), 0U);
        ASSERT_TRUE(waitpid(f.pid, NULL, WNOHANG) < 0 && errno == ECHILD); /* killed, reaped */
        ASSERT_EQ(bounded_child_started() - n0, 24U);
}

/* Writes userdata's count of bytes, then exits. */
static int child_stream(int pipe_fd, int keep_fd, void *userdata) {
        static char buf[65536];
        size_t n = *(size_t *) userdata;

        (void) keep_fd;
        memset(buf, 'x', sizeof buf);
        while (n > 0) {
                ssize_t k = write(pipe_fd, buf, MIN(n, sizeof buf));

                if (k <= 0)
                        return EXIT_FAILURE;
                n -= (size_t) k;
        }
        return EXIT_SUCCESS;
}

/* Complete at *userdata bytes. */
static int feed_count(const char *buf, size_t size, void *userdata) {
        return size >= *(size_t *) userdata;
}

/* bounded_child_step() until it says anything but -EAGAIN (bounded, 10 s). */
static int step_until(BoundedChild *c, BoundedChildFeed feed, void *userdata) {
        int r = -EAGAIN;

        for (int i = 0; i < 10000 && (r = bounded_child_step(c, feed, userdata)) == -EAGAIN; i++)
                usleep(1000);
        return r;
}

/* What the pipe holds, read without waiting, for a parent on an event loop (the daemon's reads of
 * its configuration, review U, U5 and review Y, Y2). */
TEST(bounded_child_step) {
        pid_t pids[BOUNDED_CHILD_ABANDONED_MAX];
        BoundedChild c = BOUNDED_CHILD_NULL;
        PidFeed f = { .answer = false };
        size_t n, want;
        int avail = -1;

        /* Alive, its first bytes read (the pipe emptied), its answer not complete: more to come. */
        ASSERT_OK(bounded_child_start(-EBADF, 60 * USEC_PER_SEC, 64, child_pid_then, &f, &c));
        for (int i = 0; i < 5000 && c.got_size < sizeof(pid_t); i++) {
                ASSERT_ERR(bounded_child_step(&c, feed_pid, &f), EAGAIN);
                usleep(1000);
        }
        ASSERT_EQ(c.got_size, sizeof(pid_t));
        ASSERT_TRUE(ioctl(c.fd, FIONREAD, &avail) >= 0 && avail == 0);
        ASSERT_ERR(bounded_child_step(&c, feed_pid, &f), EAGAIN);
        bounded_child_cancel(&c);
        ASSERT_TRUE(c.got == NULL && c.got_size == 0);

        /* Answered: complete, and finish returns it at once from what was read. */
        f = (PidFeed) { .answer = true };
        ASSERT_OK(bounded_child_start(-EBADF, 60 * USEC_PER_SEC, 64, child_pid_then, &f, &c));
        ASSERT_EQ(step_until(&c, feed_pid, &f), 1);
        ASSERT_EQ(bounded_child_finish(&c, feed_pid, &f), 1);
        ASSERT_TRUE(f.pid > 0 && c.pid == 0 && c.got == NULL);

        /* Gone before its answer was complete: 0, and finish says so too. */
        n = 100;
        want = 200;
        ASSERT_OK(bounded_child_start(-EBADF, 60 * USEC_PER_SEC, 1024, child_stream, &n, &c));
        ASSERT_EQ(step_until(&c, feed_count, &want), 0);
        ASSERT_EQ(c.got_size, 100U);
        ASSERT_EQ(bounded_child_finish(&c, feed_count, &want), 0);

        /* Longer than the pipe holds (1 MiB grown): read as it comes, complete. */
        n = want = 3U << 20;
        ASSERT_OK(bounded_child_start(-EBADF, 60 * USEC_PER_SEC, 4U << 20, child_stream, &n, &c));
        ASSERT_EQ(step_until(&c, feed_count, &want), 1);
        ASSERT_EQ(bounded_child_finish(&c, feed_count, &want), 1);

        /* ... and one more than finish accepts: -E2BIG, from step as from finish. */
        n = 8192;
        want = SIZE_MAX;
        ASSERT_OK(bounded_child_start(-EBADF, 60 * USEC_PER_SEC, 4096, child_stream, &n, &c));
        ASSERT_ERR(step_until(&c, feed_count, &want), E2BIG);
        ASSERT_ERR(bounded_child_finish(&c, feed_count, &want), E2BIG);

        /* Silent past its bound: more to come, says step; finish ends it. */
        f = (PidFeed) { .answer = false };
        ASSERT_OK(bounded_child_start(-EBADF, 1, 64, child_pid_then, &f, &c));
        ASSERT_ERR(bounded_child_finish(&c, feed_pid, &f), ETIMEDOUT);
        ASSERT_EQ(abandoned_settle(pids, ELEMENTSOF(pids)), 0U);
}

/* Writes when it began (CLOCK_MONOTONIC) and its name (comm), then answers. */
typedef struct GoAnswer {
        usec_t began;
        char comm[16];
} GoAnswer;

static int child_began(int pipe_fd, int keep_fd, void *userdata) {
        GoAnswer g = { .began = now(CLOCK_MONOTONIC) };

        (void) keep_fd;
        (void) userdata;
        if (prctl(PR_GET_NAME, g.comm) < 0)
                return EXIT_FAILURE;
        return write(pipe_fd, &g, sizeof g) == sizeof g ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int feed_began(const char *buf, size_t size, void *userdata) {
        if (size < sizeof(GoAnswer))
                return 0;
        memcpy(userdata, buf, sizeof(GoAnswer));
        return 1;
}

static int read_comm(pid_t pid, char ret[static 16]) {
        char path[64], buf[17] = ""; /* 15 characters, a newline */
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        (void) snprintf(path, sizeof path, "/proc/%d/comm", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof buf - 1);
        if (n <= 0)
                return -EIO;
        buf[strcspn(buf, "\n")] = 0;
        if (strlen(buf) > 15)
                return -EINVAL;
        memcpy(ret, buf, strlen(buf) + 1);
        return 0;
}

/* Creates the file userdata names: proof that the work ran. */
static int child_touch(int pipe_fd, int keep_fd, void *userdata) {
        (void) pipe_fd;
        (void) keep_fd;
        return mknod(userdata, S_IFREG | 0600, 0) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Forked ahead: the fork is counted at prepare; the child waits, named idle_name, and runs its work
 * only once told to go, by the name its parent has then; its bound counts from the go (it was
 * prepared longer ago than the bound; and a child that hangs after its go is given up by the go's
 * bound); finish before a go returns at once; a prepared child cancelled exits at the end of its
 * socket, its work not done, not killed and not abandoned; and one gone before its go makes go fail,
 * so that the caller starts another. */
TEST(bounded_child_prepare_go) {
        pid_t pids[BOUNDED_CHILD_ABANDONED_MAX];
        BoundedChild c = BOUNDED_CHILD_NULL;
        unsigned n0 = bounded_child_started();
        char comm[16] = "", idle[16] = "", marker[] = "/tmp/test-shared-go.XXXXXX";
        PidFeed f = { .answer = false };
        siginfo_t si = {};
        GoAnswer g = {};
        usec_t t_go;
        pid_t pid;

        ASSERT_OK(prctl(PR_GET_NAME, comm));
        ASSERT_OK(bounded_child_prepare(-EBADF, 64, "test-idle", child_began, NULL, &c));
        ASSERT_TRUE(c.pid > 0 && c.fd >= 0 && c.go_fd >= 0);
        ASSERT_EQ(bounded_child_started() - n0, 1U);
        usleep(300 * 1000); /* longer than the bound below */
        ASSERT_OK(read_comm(c.pid, idle));
        ASSERT_STREQ(idle, "test-idle");
        t_go = now(CLOCK_MONOTONIC);
        ASSERT_OK(prctl(PR_SET_NAME, "test-go-name"));
        ASSERT_OK(bounded_child_go(&c, 200 * USEC_PER_MSEC));
        ASSERT_OK(prctl(PR_SET_NAME, comm));
        ASSERT_TRUE(c.go_fd < 0);
        ASSERT_EQ(bounded_child_finish(&c, feed_began, &g), 1);
        ASSERT_TRUE(g.began >= t_go); /* nothing of its work before the go */
        ASSERT_STREQ(g.comm, "test-go-name");
        ASSERT_EQ(bounded_child_started() - n0, 1U); /* the go forked nothing */

        /* A child that hangs after its go: given up at the go's bound, not waited for. */
        ASSERT_OK(bounded_child_prepare(-EBADF, 64, NULL, child_pid_then, &f, &c));
        ASSERT_OK(bounded_child_go(&c, 100 * USEC_PER_MSEC));
        t_go = now(CLOCK_MONOTONIC);
        ASSERT_ERR(bounded_child_finish(&c, feed_pid, &f), ETIMEDOUT);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t_go < 2 * USEC_PER_SEC);
        ASSERT_EQ(abandoned_settle(pids, ELEMENTSOF(pids)), 0U);

        /* Finish before its go: nothing to wait for (no bound yet), let go unstarted. */
        ASSERT_OK(bounded_child_prepare(-EBADF, 64, NULL, child_began, NULL, &c));
        ASSERT_ERR(bounded_child_finish(&c, feed_began, &g), ESTALE);
        ASSERT_TRUE(c.pid == 0 && c.fd < 0 && c.go_fd < 0);

        /* Cancelled before its go: it exits at the end of its socket, its work not done; not
         * killed, not listed as abandoned (no scope for it). Stopped until the module is done with
         * it: one that exits at once is reaped by the module (child_leave(), reap_exiting()), and
         * its status would be lost to this check. */
        ASSERT_TRUE(test_mkdtemp(marker) != NULL);
        ASSERT_OK(rmdir(marker));
        ASSERT_OK(bounded_child_prepare(-EBADF, 64, NULL, child_touch, marker, &c));
        pid = c.pid;
        ASSERT_OK(kill(pid, SIGSTOP));
        ASSERT_OK(waitid(P_PID, (id_t) pid, &si, WSTOPPED));
        bounded_child_cancel(&c);
        ASSERT_TRUE(c.pid == 0 && c.fd < 0 && c.go_fd < 0);
        ASSERT_EQ(bounded_child_abandoned(ELEMENTSOF(pids), pids), 0U);
        ASSERT_OK(kill(pid, SIGCONT));
        ASSERT_OK(waitid(P_PID, (id_t) pid, &si, WEXITED)); /* reaped here, not by the module */
        ASSERT_TRUE(si.si_code == CLD_EXITED && si.si_status == EXIT_FAILURE);
        ASSERT_TRUE(access(marker, F_OK) < 0 && errno == ENOENT);

        /* Gone before its go (killed by somebody else): go fails and leaves it. */
        ASSERT_OK(bounded_child_prepare(-EBADF, 64, NULL, child_began, NULL, &c));
        pid = c.pid;
        ASSERT_OK(kill(pid, SIGKILL));
        for (int i = 0; i < 500; i++) {
                si = (siginfo_t) {};
                if (waitid(P_PID, (id_t) pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
                        break; /* a zombie now, its socket closed (not reaped: the module's to do) */
                usleep(10 * 1000);
        }
        ASSERT_TRUE(bounded_child_go(&c, USEC_PER_SEC) < 0);
        ASSERT_TRUE(c.pid == 0 && c.fd < 0 && c.go_fd < 0);
        ASSERT_EQ(abandoned_settle(pids, ELEMENTSOF(pids)), 0U);
        ASSERT_EQ(bounded_child_started() - n0, 5U);
}

/* Children that answered are reaped by later runs (by pidfd), not left as zombies: after 40 in a row
 * and one more run, none of the 40 is still our child. */
TEST(bounded_child_reaped) {
        pid_t pids[40];
        PidFeed f;
        size_t left = 0;

        for (size_t i = 0; i < ELEMENTSOF(pids); i++) {
                f = (PidFeed) { .answer = true };
                ASSERT_EQ(bounded_child_run(-EBADF, 5 * USEC_PER_SEC, 64, child_pid_then, feed_pid, &f), 1);
                pids[i] = f.pid;
        }
        /* every one has exited (a zombie until reaped): waited for without reaping it, however
         * loaded the machine (a fixed sleep was a timed assertion; review AC) */
        for (size_t i = 0; i < ELEMENTSOF(pids); i++) {
                siginfo_t si = {};

                if (waitid(P_PID, (id_t) pids[i], &si, WEXITED | WNOWAIT) < 0)
                        ASSERT_EQ(errno, ECHILD); /* reaped already by a later run */
        }
        f = (PidFeed) { .answer = true };
        ASSERT_EQ(bounded_child_run(-EBADF, 5 * USEC_PER_SEC, 64, child_pid_then, feed_pid, &f), 1);
        for (size_t i = 0; i < ELEMENTSOF(pids); i++) {
                siginfo_t si = {};

                if (waitid(P_PID, (id_t) pids[i], &si, WEXITED | WNOHANG | WNOWAIT) == 0)
                        left++; /* still ours: a zombie */
        }
        ASSERT_EQ(left, 0U);
        /* Reaped by somebody else (here): the next run forgets it, whatever its pid becomes. */
        (void) waitpid(f.pid, NULL, 0);
        f = (PidFeed) { .answer = true };
        ASSERT_EQ(bounded_child_run(-EBADF, 5 * USEC_PER_SEC, 64, child_pid_then, feed_pid, &f), 1);
        (void) waitpid(f.pid, NULL, 0);
}

/* Writes its pid, answers, then exits once keep_fd (a pipe's read end) reads its end. */
static int child_answer_then_wait(int pipe_fd, int keep_fd, void *userdata) {
        pid_t pid = getpid();
        char c;

        (void) userdata;
        if (write(pipe_fd, &pid, sizeof pid) != sizeof pid || write(pipe_fd, "done", 4) != 4)
                return EXIT_FAILURE;
        while (read(keep_fd, &c, 1) > 0)
                ;
        return EXIT_SUCCESS;
}

/* Review AW, L4: restore-knob and record-cycle wait, bounded, for their helpers that answered, so
 * that none is left in the unit after them. A child that answered and does not end yet: counted and
 * waited for at most the bound; once it ends, waited for and reaped. */
TEST(bounded_child_reap_exiting) {
        PidFeed f = { .answer = true };
        int p[2];
        usec_t t;

        ASSERT_OK(pipe2(p, O_CLOEXEC));
        ASSERT_EQ(bounded_child_run(p[0], 5 * USEC_PER_SEC, 64, child_answer_then_wait, feed_pid, &f), 1);
        ASSERT_TRUE(f.pid > 0);
        ASSERT_EQ(bounded_child_reap_exiting(0), 1U);
        t = now(CLOCK_MONOTONIC);
        ASSERT_EQ(bounded_child_reap_exiting(50 * USEC_PER_MSEC), 1U); /* bounded */
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t >= 50 * USEC_PER_MSEC);
        ASSERT_TRUE(waitpid(f.pid, NULL, WNOHANG) == 0); /* still ours, still there */
        safe_close(p[0]);
        safe_close(p[1]); /* it reads the end and exits */
        ASSERT_EQ(bounded_child_reap_exiting(5 * USEC_PER_SEC), 0U);
        ASSERT_TRUE(waitpid(f.pid, NULL, WNOHANG) < 0 && errno == ECHILD); /* reaped */
}

/* Writes its pid, answers, then stays (until killed): exiting, remembered by pidfd, when the run
 * returns. */
static int child_pid_answer_stay(int pipe_fd, int keep_fd, void *userdata) {
        pid_t pid = getpid();

        (void) keep_fd;
        (void) userdata;
        if (write(pipe_fd, &pid, sizeof pid) != sizeof pid || write(pipe_fd, "done", 4) != 4)
                return EXIT_FAILURE;
        for (;;)
                pause();
}

/* close_all_fds_from(), both ways: close_range(2), and its loop where a seccomp filter refuses it
 * (as before Linux 5.9). In a child: 0 when fds from 10 on are closed and 3-9 stay. */
static int close_all_child(bool refuse) {
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned) __NR_close_range, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = ELEMENTSOF(filter), .filter = filter };
        int fds[40];

        if (refuse && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0))
                return 77;
        if (refuse && close_range(10, ~0U, 0) >= 0)
                return 2; /* the filter does not hold */
        for (int i = 3; i < 10; i++)
                if (fcntl(i, F_GETFD) < 0 && dup2(STDERR_FILENO, i) < 0)
                        return 3;
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                if ((fds[i] = open("/dev/null", O_RDONLY)) < 0)
                        return 4;
        if (dup2(STDERR_FILENO, 1000) != 1000)
                return 5;
        close_all_fds_from(10);
        for (int i = 3; i < 10; i++)
                if (fcntl(i, F_GETFD) < 0)
                        return 6;
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                if (fds[i] >= 10 && fcntl(fds[i], F_GETFD) >= 0)
                        return 7;
        return fcntl(1000, F_GETFD) < 0 ? 0 : 8;
}

TEST(close_all_fds_from) {
        for (int refuse = 0; refuse <= 1; refuse++) {
                int status;
                pid_t pid = fork();

                ASSERT_TRUE(pid >= 0);
                if (pid == 0)
                        _exit(close_all_child(refuse));
                ASSERT_EQ(waitpid(pid, &status, 0), pid);
                ASSERT_TRUE(WIFEXITED(status));
                if (WEXITSTATUS(status) == 77) {
                        test_skip("no seccomp filter");
                        continue;
                }
                ASSERT_EQ(WEXITSTATUS(status), 0);
        }
}

/* In a child: the pipes' read ends wanted at 3 and 5, swapped (one of them at 3 now, in the other's
 * way), nothing at 4, every other fd closed; what is at 3 and 5 is what was asked for (each pipe
 * holds its own byte). Exit status 0, else the first check that failed. */
static int keep_child(void) {
        int a[2], b[2], fds[3], extra;
        char c = 0;

        close_all_fds_from(3);
        if (pipe(a) < 0 || pipe(b) < 0 || a[0] != 3) /* a[0] 3, a[1] 4, b[0] 5, b[1] 6 */
                return 1;
        if (write(a[1], "a", 1) != 1 || write(b[1], "b", 1) != 1)
                return 1;
        extra = dup(b[1]);
        fds[0] = b[0], fds[1] = -EBADF, fds[2] = a[0];
        if (close_all_fds_but(fds, 3) != 0 || fds[0] != 3 || fds[1] != -EBADF || fds[2] != 5)
                return 2;
        if (fcntl(4, F_GETFD) >= 0 || fcntl(6, F_GETFD) >= 0 || fcntl(extra, F_GETFD) >= 0)
                return 3; /* closed: the slot of the missing one, and everything else */
        if (fcntl(3, F_GETFD) < 0 || fcntl(5, F_GETFD) < 0)
                return 4;
        if (read(3, &c, 1) != 1 || c != 'b' || read(5, &c, 1) != 1 || c != 'a')
                return 5;
        /* Both write ends are closed: each kept read end reads EOF, and nothing else holds them. */
        if (read(3, &c, 1) != 0 || read(5, &c, 1) != 0)
                return 6;
        return 0;
}

TEST(close_all_fds_but) {
        int status;
        pid_t pid = fork();

        ASSERT_TRUE(pid >= 0);
        if (pid == 0)
                _exit(keep_child());
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 0);
}

static int highest_fd(void) {
        _cleanup_closedir_ DIR *d = opendir("/proc/self/fd");
        struct dirent *de;
        int max = -1;

        ASSERT_TRUE(d);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        max = MAX(max, atoi(de->d_name));
        return max; /* opendir's own fd counts too: one more than needed at worst */
}

/* A child forked without exec (the daemon's pass) closes what it inherited and opens its own fds,
 * which reuse the numbers of the parent's pidfds (all below hi): its first bounded_child_run() must
 * not take them for its own exiting children and close them. Exit status: how many of its fds were
 * closed (at most 100), 100 + on other failures. */
static int forked_pass(bool forget, int hi) {
        PidFeed f = { .answer = true };
        int fds[256], n = 0, closed = 0;

        close_all_fds_from(3);
        if (forget)
                bounded_child_forget_parent();
        /* Every number from 3 up to hi is ours again. */
        while (n < (int) ELEMENTSOF(fds) && (n == 0 || fds[n - 1] < hi))
                if ((fds[n++] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
                        return 101;
        if (fds[n - 1] < hi)
                return 102;
        if (bounded_child_run(-EBADF, 5 * USEC_PER_SEC, 64, child_pid_then, feed_pid, &f) != 1)
                return 103;
        for (int i = 0; i < n; i++)
                closed += fcntl(fds[i], F_GETFD) < 0;
        return MIN(closed, 100);
}

TEST(bounded_child_forget_parent) {
        for (int forget = 1; forget >= 0; forget--) {
                PidFeed stay = { .answer = true };
                int status, hi;
                pid_t pid;

                /* The parent's child, still there (its pidfd kept) when the fork comes. */
                ASSERT_EQ(bounded_child_run(-EBADF, 5 * USEC_PER_SEC, 64, child_pid_answer_stay, feed_pid,
                                            &stay),
                          1);
                ASSERT_TRUE(stay.pid > 0);
                hi = highest_fd() + 1; /* above every fd of ours, its pidfd among them */
                ASSERT_TRUE(hi > 3 && hi < 256);
                pid = fork();
                ASSERT_TRUE(pid >= 0);
                if (pid == 0)
                        _exit(forked_pass(forget, hi));
                ASSERT_EQ(waitpid(pid, &status, 0), pid);
                ASSERT_TRUE(WIFEXITED(status));
                if (forget)
                        ASSERT_EQ(WEXITSTATUS(status), 0);
                else /* the negative control: without it, one of the child's own fds is closed */
                        ASSERT_TRUE(WEXITSTATUS(status) >= 1 && WEXITSTATUS(status) <= 100);
                ASSERT_OK(kill(stay.pid, SIGKILL));
                ASSERT_EQ(waitpid(stay.pid, NULL, 0), stay.pid); /* the next run forgets its pidfd */
        }
}

int main(void) {
        RUN(timespan);
        RUN(timespan_strict);
        RUN(numbers);
        RUN(options);
        RUN(memstream);
        RUN(files);
        RUN(read_full_regular);
        RUN(read_full_regular_changed);
        RUN(dir_batch);
        RUN(fdinfo_mnt_ino);
        RUN(proc_maps_find);
        RUN(open_cached);
        RUN(path_walk_long);
        RUN(ellipsize_middle);
        RUN(strv);
        RUN(string_table);
        RUN(sort);
        RUN(format);
        RUN(bounded_child_abandoned);
        RUN(bounded_child_start_finish);
        RUN(bounded_child_step);
        RUN(bounded_child_prepare_go);
        RUN(bounded_child_reaped);
        RUN(bounded_child_reap_exiting);
        RUN(bounded_child_forget_parent);
        RUN(close_all_fds_from);
        RUN(close_all_fds_but);
        RUN(utf8);
        RUN(utf8_escape_display);
        RUN(hex);
        RUN(json_build);
        RUN(json_bytes_array);
        RUN(json_buf_as_json_c);
        RUN(json_buf_out_of_memory);
        RUN(json_get);
        RUN(json_parse);
        RUN(json_parse_non_ascii);
        RUN(devnum);
        return test_result();
}
