/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "parse-util.h"

/* Relative to a root dir fd, "/proc/x" means "proc/x"; relative to the cwd it stays absolute. */
static const char *at_path(int dir_fd, const char *path) {
        return dir_fd == AT_FDCWD ? path : skip_root_prefix(path);
}

const char *skip_root_prefix(const char *path) {
        while (*path == '/')
                path++;
        return *path ? path : ".";
}

int open_dir_at(int dir_fd, const char *path) {
        int fd;

        fd = openat(dir_fd, at_path(dir_fd, path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return fd;
}

int readlink_malloc_at(int dir_fd, const char *path, char **ret) {
        char buf[PATH_MAX];
        ssize_t n;
        char *r;

        n = readlinkat(dir_fd, path, buf, sizeof buf - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = 0;
        r = strdup(buf);
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

int open_cached_at(int dir_fd, const char *path, int flags) {
        struct open_how how = { .flags = (uint64_t) flags | O_CLOEXEC, .resolve = RESOLVE_CACHED };
        long fd = -1;

        for (unsigned i = 0; i < OPEN_CACHED_TRIES; i++) {
                fd = syscall(SYS_openat2, dir_fd, at_path(dir_fd, path), &how, sizeof how);
                if (fd >= 0 || errno != EAGAIN)
                        break;
        }
        if (fd < 0)
                return negative_errno();
        return (int) fd;
}

int path_walk_long(const char *path, int *ret_dir_fd, const char **ret_rest) {
        _cleanup_close_ int dir_fd = AT_FDCWD;
        const char *p = path;
        char piece[PATH_MAX];

        while (strnlen(p, PATH_MAX) >= PATH_MAX) {
                /* The last '/' that leaves a piece (with that '/') shorter than PATH_MAX. */
                const char *slash = memrchr(p, '/', PATH_MAX - 1);
                size_t n;
                int fd;

                if (!slash)
                        return -ENAMETOOLONG;
                n = (size_t) (slash - p) + 1;
                memcpy(piece, p, n);
                piece[n] = '\0';
                fd = openat(dir_fd, piece, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                safe_close(dir_fd);
                dir_fd = fd;
                /* "a//b" is "a/b"; and a piece opened from an fd must not be absolute. */
                for (p = slash + 1; *p == '/'; p++)
                        ;
        }
        *ret_rest = p == path || *p ? p : ".";
        *ret_dir_fd = TAKE_FD(dir_fd);
        return 0;
}

bool stat_is_dev_null(const struct stat *st) {
        return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3;
}

int read_full_file_at(int dir_fd, const char *path, size_t max, char **ret, size_t *ret_size) {
        return read_full_file_at_flags(dir_fd, path, max, 0, ret, ret_size);
}

int read_full_file_at_flags(int dir_fd, const char *path, size_t max, ReadFullFlags flags, char **ret,
                            size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, alloc = 0;
        struct stat st = {}; /* set with READ_FULL_REGULAR */

        /* O_NONBLOCK: a FIFO's open does not wait for a writer; a regular file ignores it. */
        fd = openat(dir_fd, at_path(dir_fd, path),
                    O_RDONLY | O_CLOEXEC | O_NOCTTY | ((flags & READ_FULL_REGULAR) ? O_NONBLOCK : 0) |
                            ((flags & READ_FULL_NOFOLLOW) ? O_NOFOLLOW : 0));
        if (fd < 0)
                return negative_errno();
        if (flags & READ_FULL_REGULAR) {
                if (fstat(fd, &st) < 0)
                        return negative_errno();
                if (stat_is_dev_null(&st))
                        max = 0; /* /dev/null: empty */
                else if (S_ISDIR(st.st_mode))
                        return -EISDIR;
                else if (!S_ISREG(st.st_mode))
                        return -EBADFD;
        }

        for (;;) {
                ssize_t n;

                if (alloc - size < 4096) {
                        size_t want = alloc ? alloc * 2 : 16384;
                        char *p;

                        if (want > max + 1)
                                want = max + 1;
                        if (want <= size)
                                return -EFBIG;
                        p = realloc(buf, want + 1);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        alloc = want;
                }
                n = read(fd, buf + size, alloc - size);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                size += (size_t) n;
                if (size > max)
                        return -EFBIG;
        }

        if ((flags & READ_FULL_REGULAR) && S_ISREG(st.st_mode)) {
                struct stat after;

                /* Written to while it was read (a script appending line by line, review S, L4): what
                 * was read may be any prefix of what is meant, "[Rule x]\nAction=skip\n" before its
                 * match keys. Not read, rather than read half. */
                if (fstat(fd, &after) < 0)
                        return negative_errno();
                if (after.st_size != st.st_size || after.st_mtim.tv_sec != st.st_mtim.tv_sec ||
                    after.st_mtim.tv_nsec != st.st_mtim.tv_nsec ||
                    after.st_ctim.tv_sec != st.st_ctim.tv_sec || after.st_ctim.tv_nsec != st.st_ctim.tv_nsec)
                        return -EBUSY;
        }

        if (!buf) {
                buf = malloc(1);
                if (!buf)
                        return -ENOMEM;
        }
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int write_file_atomic_at(int dir_fd, const char *path, const char *data, size_t size) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *p = at_path(dir_fd, path);
        size_t done = 0;

        if (asprintf(&tmp, "%s.tmp.%d", p, (int) getpid()) < 0)
                return -ENOMEM;

        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, PUBLIC_FILE_MODE);
        if (fd < 0)
                return negative_errno();
        if (fchmod(fd, PUBLIC_FILE_MODE) < 0) {
                int r = negative_errno();

                (void) unlinkat(dir_fd, tmp, 0);
                return r;
        }

        while (done < size) {
                ssize_t n = write(fd, data + done, size - done);
                if (n < 0) {
                        int r;
                        if (errno == EINTR)
                                continue;
                        r = negative_errno();
                        (void) unlinkat(dir_fd, tmp, 0);
                        return r;
                }
                done += (size_t) n;
        }
        fd = safe_close(fd);

        if (renameat(dir_fd, tmp, dir_fd, p) < 0) {
                int r = negative_errno();
                (void) unlinkat(dir_fd, tmp, 0);
                return r;
        }
        return 0;
}

int read_u64_file_at(int dir_fd, const char *path, uint64_t *ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_file_at(dir_fd, path, 64, &text, NULL);
        if (r < 0)
                return r;
        text[strcspn(text, "\n")] = 0;
        return safe_atou64(text, ret);
}

int opendir_at(int dir_fd, const char *path, DIR **ret) {
        DIR *d;
        int fd;

        fd = openat(dir_fd, skip_root_prefix(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -ENOMEM;
        }
        *ret = d;
        return 0;
}

int mkdirat_public(int dir_fd, const char *path) {
        struct stat st;

        /* One that exists is only looked at: mkdir(2) asks for write access to the parent's
         * filesystem before it finds the name taken (filename_create(): mnt_want_write(), i.e.
         * sb_start_write()), which waits without bound while that filesystem is frozen (fsfreeze,
         * a snapshot being taken), even to say EEXIST. */
        if (fstatat(dir_fd, path, &st, 0) >= 0 && S_ISDIR(st.st_mode))
                return 0;
        if (mkdirat(dir_fd, path, PUBLIC_DIR_MODE) < 0)
                return errno == EEXIST ? 0 : negative_errno();
        return fchmodat(dir_fd, path, PUBLIC_DIR_MODE, 0) < 0 ? negative_errno() : 0;
}

int mkdir_p_public(const char *path) {
        _cleanup_free_ char *copy = NULL;
        int r;

        if (!path || path[0] != '/')
                return -EINVAL;
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;

        for (char *p = copy + 1;; p++) {
                char c = *p;

                if (c != '/' && c != 0)
                        continue;
                *p = 0;
                r = mkdirat_public(AT_FDCWD, copy);
                if (r < 0)
                        return r;
                *p = c;
                if (c == 0)
                        break;
        }
        return 0;
}

int memstream_finish(FILE *f, char **buf) {
        bool bad = fflush(f) != 0 || ferror(f);

        if (fclose(f) != 0)
                bad = true;
        return bad || !*buf ? -ENOMEM : 0;
}

int loop_write(int fd, const void *p, size_t n) {
        const uint8_t *b = p;

        while (n > 0) {
                ssize_t k = write(fd, b, n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                b += k;
                n -= (size_t) k;
        }
        return 0;
}
