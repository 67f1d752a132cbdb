/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * faultdisk: a fault-injection "disk" for tests, built on libfuse3 (high-level API, multi-threaded).
 *
 * File mode (default): the mount point holds ONE regular file, "disk", of --size bytes, meant to be
 * the backing file of a loop device. It behaves like a disk with a volatile write cache:
 *   - a WRITE lands in memory and marks its 4 KiB blocks dirty; reads return the newest data;
 *   - an FSYNC (the loop driver turns a block FLUSH into fsync of the backing file) persists exactly
 *     the blocks dirty when it arrived into --image (the "platter"), then marks them clean;
 *   - power-cut drops every dirty block, keeping a reproducible random subset (per mille, seed);
 *     while powered off, writes are dropped silently (mode=drop, default) or fail with EIO
 *     (mode=eio), flushes persist nothing, reads return the platter; power-on resumes service;
 *   - latency: per-write delay, per-flush delay, bandwidth limit (charged on WRITE payload bytes
 *     only, never on the flush's persisted bytes), serial mode (one request at a time);
 *   - hang (all requests, or only writes+flushes) until resume, or until --hang-max elapsed;
 *   - EIO on writes and/or flushes; "lying flush" (acknowledge, persist nothing).
 * Passthrough mode (--passthrough=DIR): exposes DIR read/write with the kernel writeback cache on,
 * so dirty data stays in the page cache like on NFS; the same hang/latency/EIO/lie knobs apply.
 * The mounted fstype is "fuse.faultdisk" in both modes (source "faultdisk").
 *
 * Control: a UNIX stream socket (--control=PATH), one command per line, one reply line per command
 * ("OK ..." or "ERR reason"); the socket exists only once the mount is up (readiness). Client:
 * "faultdisk ctl SOCKET COMMAND..." prints the reply and exits non-zero unless it is "OK".
 * "faultdisk gen SEED BYTES" writes deterministic pseudo-random bytes (test oracle content).
 * See test/TESTING.md for the command list.
 */

#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define FD_BLOCK 4096ULL
#define DISK_NAME "disk"
#define LINE_MAX_LEN 1024
#define USEC_PER_SEC 1000000ULL
#define MIN_SZ(a, b) ((size_t) (a) < (size_t) (b) ? (size_t) (a) : (size_t) (b))
#define MIN_U64(a, b) ((uint64_t) (a) < (uint64_t) (b) ? (uint64_t) (a) : (uint64_t) (b))

enum req_kind { REQ_META, REQ_READ, REQ_WRITE, REQ_FLUSH };
enum hang_mode { HANG_NONE, HANG_ALL, HANG_IO };
static const char *const hang_mode_str[] = { "none", "all", "io" };

static struct {
        /* configuration (immutable after start) */
        const char *mountpoint, *image_path, *control_path, *status_path, *pid_path, *passthrough;
        uint64_t size, nblocks;
        int image_fd, root_fd;
        bool writeback_cache;
        bool private_mount;             /* no allow_other: only the mounting user gets in */
        dev_t fuse_dev;

        /* state, protected by lock */
        pthread_mutex_t lock;
        pthread_cond_t cond;
        pthread_mutex_t serial_lock;
        uint8_t **cache;                /* per block: NULL (clean) or newest 4 KiB (dirty) */
        enum hang_mode hung;
        uint64_t hang_deadline;         /* CLOCK_MONOTONIC usec */
        uint64_t hang_max_usec;
        bool powered, power_off_eio, eio_write, eio_flush, lie, serial, shutting_down;
        uint64_t write_delay_usec, flush_delay_usec, bandwidth;
        uint64_t parked, writes, reads, flushes, bytes_written, bytes_read, bytes_flushed, dirty_blocks;
        uint64_t dropped_writes, failed_writes, failed_flushes, power_cuts, last_kept, last_lost;
        uint64_t auto_resumes, status_gen;
} g = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .serial_lock = PTHREAD_MUTEX_INITIALIZER,
        .image_fd = -1,
        .root_fd = -1,
        .powered = true,
        .hang_max_usec = 120 * USEC_PER_SEC,
        .writeback_cache = true,
};

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static void sleep_usec(uint64_t usec) {
        struct timespec ts = { .tv_sec = usec / USEC_PER_SEC, .tv_nsec = (usec % USEC_PER_SEC) * 1000 };
        while (usec > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* splitmix64: reproducible sequence from a seed (power-cut keep set, oracle content). */
static uint64_t splitmix64(uint64_t *state) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/* "123", "4K", "16M", "1G" (1024-based) */
static int parse_size(const char *s, uint64_t *ret) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno != 0 || end == s || *s == '-')
                return -EINVAL;
        uint64_t mul = 1;
        if (*end == 'K' || *end == 'k')
                mul = 1024, end++;
        else if (*end == 'M' || *end == 'm')
                mul = 1024 * 1024, end++;
        else if (*end == 'G' || *end == 'g')
                mul = 1024ULL * 1024 * 1024, end++;
        if (*end != '\0' || (mul > 1 && v > UINT64_MAX / mul))
                return -EINVAL;
        *ret = v * mul;
        return 0;
}

/* "500" (usec), "500us", "20ms", "2s" */
static int parse_usec(const char *s, uint64_t *ret) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno != 0 || end == s || *s == '-')
                return -EINVAL;
        uint64_t mul;
        if (*end == '\0' || strcmp(end, "us") == 0)
                mul = 1;
        else if (strcmp(end, "ms") == 0)
                mul = 1000;
        else if (strcmp(end, "s") == 0)
                mul = USEC_PER_SEC;
        else
                return -EINVAL;
        if (v > UINT64_MAX / mul)
                return -ERANGE;
        *ret = v * mul;
        return 0;
}

static int parse_onoff(const char *s, bool *ret) {
        if (strcmp(s, "on") == 0 || strcmp(s, "1") == 0 || strcmp(s, "yes") == 0)
                *ret = true;
        else if (strcmp(s, "off") == 0 || strcmp(s, "0") == 0 || strcmp(s, "no") == 0)
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

/* ---- request gate: hang/park, serial mode ---- */

static bool hang_applies_locked(enum req_kind kind) {
        if (g.shutting_down)
                return false;
        if (g.hung != HANG_NONE && now_usec() >= g.hang_deadline) {
                g.hung = HANG_NONE;     /* safety net: automatic resume */
                g.auto_resumes++;
                g.status_gen++;
                pthread_cond_broadcast(&g.cond);
        }
        if (g.hung == HANG_ALL)
                return true;
        return g.hung == HANG_IO && (kind == REQ_WRITE || kind == REQ_FLUSH);
}

/* Serial mode: the serial mutex is held across the request; remember per thread whether we hold it. */
static __thread bool holds_serial;

static void req_begin_io(enum req_kind kind) {
        pthread_mutex_lock(&g.lock);
        if (hang_applies_locked(kind)) {
                g.parked++;
                g.status_gen++;
                while (hang_applies_locked(kind)) {
                        struct timespec ts = {
                                .tv_sec = g.hang_deadline / USEC_PER_SEC,
                                .tv_nsec = (g.hang_deadline % USEC_PER_SEC) * 1000,
                        };
                        pthread_cond_timedwait(&g.cond, &g.lock, &ts);
                }
                g.parked--;
                g.status_gen++;
        }
        bool serial = g.serial;
        pthread_mutex_unlock(&g.lock);
        if (serial) {
                pthread_mutex_lock(&g.serial_lock);
                holds_serial = true;
        }
}

static void req_end_io(void) {
        if (holds_serial) {
                holds_serial = false;
                pthread_mutex_unlock(&g.serial_lock);
        }
}

#define REQ(kind) req_begin_io(kind)
#define REQ_DONE() req_end_io()

static uint64_t write_cost_usec_locked(size_t len) {
        uint64_t d = g.write_delay_usec;
        if (g.bandwidth > 0)
                d += (uint64_t) len * USEC_PER_SEC / g.bandwidth;
        return d;
}

/* Returns -EIO or 0: whether a write should fail / be dropped. Counts it. */
static int account_write_locked(size_t len, bool *ret_drop) {
        g.writes++;
        g.status_gen++;
        *ret_drop = false;
        if (!g.powered) {
                if (g.power_off_eio) {
                        g.failed_writes++;
                        return -EIO;
                }
                g.dropped_writes++;
                *ret_drop = true;
                return 0;
        }
        if (g.eio_write) {
                g.failed_writes++;
                return -EIO;
        }
        g.bytes_written += len;
        return 0;
}

/* ---- file mode ---- */

static int fd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
        int r = 0;
        REQ(REQ_META);
        memset(st, 0, sizeof(*st));
        if (strcmp(path, "/") == 0) {
                st->st_mode = S_IFDIR | 0755;
                st->st_nlink = 2;
        } else if (strcmp(path, "/" DISK_NAME) == 0) {
                st->st_mode = S_IFREG | 0600;
                st->st_nlink = 1;
                st->st_size = (off_t) g.size;
                st->st_blocks = (blkcnt_t) (g.size / 512);
        } else
                r = -ENOENT;
        REQ_DONE();
        return r;
}

static int fd_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
        int r = 0;
        REQ(REQ_META);
        if (strcmp(path, "/") != 0)
                r = -ENOTDIR;
        else {
                filler(buf, ".", NULL, 0, 0);
                filler(buf, "..", NULL, 0, 0);
                filler(buf, DISK_NAME, NULL, 0, 0);
        }
        REQ_DONE();
        return r;
}

static int fd_open(const char *path, struct fuse_file_info *fi) {
        int r = 0;
        REQ(REQ_META);
        if (strcmp(path, "/" DISK_NAME) != 0)
                r = -ENOENT;
        else {
                /* no kernel page cache for the disk file: a power cut must not be hidden by it */
                fi->direct_io = 1;
                fi->keep_cache = 0;
        }
        REQ_DONE();
        return r;
}

static int fd_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
        return (uint64_t) size == g.size ? 0 : -EINVAL;
}

static int read_block_locked(uint64_t b, uint8_t *out) {
        if (g.cache[b]) {
                memcpy(out, g.cache[b], FD_BLOCK);
                return 0;
        }
        ssize_t n = pread(g.image_fd, out, FD_BLOCK, (off_t) (b * FD_BLOCK));
        if (n < 0)
                return -errno;
        if ((size_t) n < FD_BLOCK)
                memset(out + n, 0, FD_BLOCK - (size_t) n);
        return 0;
}

static int fd_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi) {
        uint8_t block[FD_BLOCK];
        int r = 0;

        REQ(REQ_READ);
        if ((uint64_t) off >= g.size) {
                REQ_DONE();
                return 0;
        }
        if ((uint64_t) off + len > g.size)
                len = g.size - (uint64_t) off;

        pthread_mutex_lock(&g.lock);
        g.reads++;
        g.bytes_read += len;
        size_t done = 0;
        while (done < len) {
                uint64_t pos = (uint64_t) off + done, b = pos / FD_BLOCK, in = pos % FD_BLOCK;
                size_t n = MIN_SZ(len - done, FD_BLOCK - in);
                r = read_block_locked(b, block);
                if (r < 0)
                        break;
                memcpy(buf + done, block + in, n);
                done += n;
        }
        pthread_mutex_unlock(&g.lock);
        REQ_DONE();
        return r < 0 ? r : (int) done;
}

static int fd_write(const char *path, const char *buf, size_t len, off_t off, struct fuse_file_info *fi) {
        int r;
        bool drop;

        REQ(REQ_WRITE);
        if ((uint64_t) off >= g.size || (uint64_t) off + len > g.size) {
                REQ_DONE();
                return -ENOSPC;
        }

        pthread_mutex_lock(&g.lock);
        uint64_t delay = write_cost_usec_locked(len);
        pthread_mutex_unlock(&g.lock);
        sleep_usec(delay);

        pthread_mutex_lock(&g.lock);
        r = account_write_locked(len, &drop);
        if (r == 0 && !drop) {
                size_t done = 0;
                while (done < len) {
                        uint64_t pos = (uint64_t) off + done, b = pos / FD_BLOCK, in = pos % FD_BLOCK;
                        size_t n = MIN_SZ(len - done, FD_BLOCK - in);
                        if (!g.cache[b]) {
                                uint8_t *p = malloc(FD_BLOCK);
                                if (!p) {
                                        r = -ENOMEM;
                                        break;
                                }
                                if (n < FD_BLOCK) {
                                        r = read_block_locked(b, p);
                                        if (r < 0) {
                                                free(p);
                                                break;
                                        }
                                }
                                g.cache[b] = p;
                                g.dirty_blocks++;
                        }
                        memcpy(g.cache[b] + in, buf + done, n);
                        done += n;
                }
        }
        pthread_mutex_unlock(&g.lock);
        REQ_DONE();
        return r < 0 ? r : (int) len;
}

static int fd_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
        uint64_t *snap = NULL, nsnap = 0;
        bool oom = false;
        int r = 0;

        REQ(REQ_FLUSH);
        pthread_mutex_lock(&g.lock);
        g.flushes++;
        g.status_gen++;
        if (g.dirty_blocks > 0) {
                snap = malloc(g.dirty_blocks * sizeof(uint64_t));
                oom = !snap;
                if (snap)
                        for (uint64_t b = 0; b < g.nblocks && nsnap < g.dirty_blocks; b++)
                                if (g.cache[b])
                                        snap[nsnap++] = b;
        }
        uint64_t delay = g.flush_delay_usec;
        pthread_mutex_unlock(&g.lock);
        if (oom) {
                REQ_DONE();
                return -ENOMEM;
        }

        sleep_usec(delay);

        pthread_mutex_lock(&g.lock);
        if (g.eio_flush) {
                g.failed_flushes++;
                r = -EIO;
        } else if (!g.powered) {
                r = g.power_off_eio ? -EIO : 0;
        } else if (!g.lie) {
                for (uint64_t i = 0; i < nsnap; i++) {
                        uint64_t b = snap[i];
                        if (!g.cache[b])
                                continue;
                        /* a write after the snapshot is included: it is newer, still correct */
                        if (pwrite(g.image_fd, g.cache[b], FD_BLOCK, (off_t) (b * FD_BLOCK)) !=
                            (ssize_t) FD_BLOCK) {
                                r = -EIO;
                                break;
                        }
                        free(g.cache[b]);
                        g.cache[b] = NULL;
                        g.dirty_blocks--;
                        g.bytes_flushed += FD_BLOCK;
                }
        }
        g.status_gen++;
        pthread_mutex_unlock(&g.lock);
        free(snap);
        REQ_DONE();
        return r;
}

static int fd_flush(const char *path, struct fuse_file_info *fi) {
        return 0;       /* close(), not a cache flush */
}

static int fd_release(const char *path, struct fuse_file_info *fi) {
        return 0;
}

/* ---- passthrough mode ---- */

static const char *rel(const char *path) {
        while (*path == '/')
                path++;
        return *path ? path : ".";
}

static int pt_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
        int r;
        REQ(REQ_META);
        if (fi)
                r = fstat((int) fi->fh, st) < 0 ? -errno : 0;
        else
                r = fstatat(g.root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
        REQ_DONE();
        return r;
}

static int pt_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
        int r = 0;
        REQ(REQ_META);
        int fd = openat(g.root_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
        } else {
                struct dirent *de;
                while ((de = readdir(d))) {
                        struct stat st = { .st_ino = de->d_ino, .st_mode = (mode_t) DTTOIF(de->d_type) };
                        if (filler(buf, de->d_name, &st, 0, 0))
                                break;
                }
                closedir(d);
        }
        REQ_DONE();
        return r;
}

#define PT_SIMPLE(kind, expr)                           \
        do {                                            \
                int _r;                                 \
                REQ(kind);                              \
                _r = (expr) < 0 ? -errno : 0;           \
                REQ_DONE();                             \
                return _r;                              \
        } while (0)

static int pt_mkdir(const char *path, mode_t mode) {
        PT_SIMPLE(REQ_META, mkdirat(g.root_fd, rel(path), mode));
}
static int pt_unlink(const char *path) {
        PT_SIMPLE(REQ_META, unlinkat(g.root_fd, rel(path), 0));
}
static int pt_rmdir(const char *path) {
        PT_SIMPLE(REQ_META, unlinkat(g.root_fd, rel(path), AT_REMOVEDIR));
}
static int pt_symlink(const char *target, const char *path) {
        PT_SIMPLE(REQ_META, symlinkat(target, g.root_fd, rel(path)));
}
static int pt_rename(const char *from, const char *to, unsigned int flags) {
        PT_SIMPLE(REQ_META, renameat2(g.root_fd, rel(from), g.root_fd, rel(to), flags));
}
static int pt_link(const char *from, const char *to) {
        PT_SIMPLE(REQ_META, linkat(g.root_fd, rel(from), g.root_fd, rel(to), 0));
}
static int pt_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
        PT_SIMPLE(REQ_META, fi ? fchmod((int) fi->fh, mode) : fchmodat(g.root_fd, rel(path), mode, 0));
}
static int pt_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
        PT_SIMPLE(REQ_META, fi ? fchown((int) fi->fh, uid, gid)
                               : fchownat(g.root_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW));
}
static int pt_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
        PT_SIMPLE(REQ_META, fi ? futimens((int) fi->fh, tv)
                               : utimensat(g.root_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW));
}

static int pt_readlink(const char *path, char *buf, size_t size) {
        int r = 0;
        REQ(REQ_META);
        ssize_t n = readlinkat(g.root_fd, rel(path), buf, size - 1);
        if (n < 0)
                r = -errno;
        else
                buf[n] = '\0';
        REQ_DONE();
        return r;
}

static int pt_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
        int r = 0;
        REQ(REQ_WRITE);
        if (fi)
                r = ftruncate((int) fi->fh, size) < 0 ? -errno : 0;
        else {
                int fd = openat(g.root_fd, rel(path), O_WRONLY | O_CLOEXEC);
                if (fd < 0 || ftruncate(fd, size) < 0)
                        r = -errno;
                if (fd >= 0)
                        close(fd);
        }
        REQ_DONE();
        return r;
}

static int pt_fix_flags(int flags) {
        /* with the writeback cache the kernel may read from write-only files and handles O_APPEND */
        if (g.writeback_cache) {
                if ((flags & O_ACCMODE) == O_WRONLY)
                        flags = (flags & ~O_ACCMODE) | O_RDWR;
                flags &= ~O_APPEND;
        }
        return flags | O_CLOEXEC;
}

static int pt_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
        int r = 0;
        REQ(REQ_META);
        int fd = openat(g.root_fd, rel(path), pt_fix_flags(fi->flags) | O_CREAT, mode);
        if (fd < 0)
                r = -errno;
        else
                fi->fh = (uint64_t) fd;
        REQ_DONE();
        return r;
}

static int pt_open(const char *path, struct fuse_file_info *fi) {
        int r = 0;
        REQ(REQ_META);
        int fd = openat(g.root_fd, rel(path), pt_fix_flags(fi->flags));
        if (fd < 0)
                r = -errno;
        else
                fi->fh = (uint64_t) fd;
        REQ_DONE();
        return r;
}

static int pt_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi) {
        REQ(REQ_READ);
        ssize_t n = pread((int) fi->fh, buf, len, off);
        int r = n < 0 ? -errno : (int) n;
        pthread_mutex_lock(&g.lock);
        g.reads++;
        if (n > 0)
                g.bytes_read += (uint64_t) n;
        pthread_mutex_unlock(&g.lock);
        REQ_DONE();
        return r;
}

static int pt_write(const char *path, const char *buf, size_t len, off_t off, struct fuse_file_info *fi) {
        bool drop;
        int r;

        REQ(REQ_WRITE);
        pthread_mutex_lock(&g.lock);
        uint64_t delay = write_cost_usec_locked(len);
        pthread_mutex_unlock(&g.lock);
        sleep_usec(delay);
        pthread_mutex_lock(&g.lock);
        r = account_write_locked(len, &drop);
        pthread_mutex_unlock(&g.lock);
        if (r == 0 && !drop) {
                ssize_t n = pwrite((int) fi->fh, buf, len, off);
                r = n < 0 ? -errno : (int) n;
        } else if (r == 0)
                r = (int) len;
        REQ_DONE();
        return r;
}

static int pt_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
        int r = 0;
        REQ(REQ_FLUSH);
        pthread_mutex_lock(&g.lock);
        g.flushes++;
        g.status_gen++;
        uint64_t delay = g.flush_delay_usec;
        pthread_mutex_unlock(&g.lock);
        sleep_usec(delay);
        pthread_mutex_lock(&g.lock);
        bool eio = g.eio_flush, skip = g.lie || !g.powered;
        if (eio)
                g.failed_flushes++;
        pthread_mutex_unlock(&g.lock);
        if (eio)
                r = -EIO;
        else if (!skip && fi)
                r = (datasync ? fdatasync((int) fi->fh) : fsync((int) fi->fh)) < 0 ? -errno : 0;
        REQ_DONE();
        return r;
}

static int pt_flush(const char *path, struct fuse_file_info *fi) {
        return 0;
}

static int pt_release(const char *path, struct fuse_file_info *fi) {
        close((int) fi->fh);
        return 0;
}

static int pt_statfs(const char *path, struct statvfs *st) {
        PT_SIMPLE(REQ_META, fstatvfs(g.root_fd, st));
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
        cfg->use_ino = 0;
        cfg->hard_remove = 1;
        if (g.passthrough) {
                cfg->entry_timeout = 1;
                cfg->attr_timeout = 1;
                if (g.writeback_cache && (conn->capable & FUSE_CAP_WRITEBACK_CACHE))
                        conn->want |= FUSE_CAP_WRITEBACK_CACHE;
        } else {
                cfg->direct_io = 1;
                cfg->kernel_cache = 0;
                conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
        }
        return NULL;
}

static const struct fuse_operations file_ops = {
        .init = fs_init,
        .getattr = fd_getattr,
        .readdir = fd_readdir,
        .open = fd_open,
        .truncate = fd_truncate,
        .read = fd_read,
        .write = fd_write,
        .fsync = fd_fsync,
        .flush = fd_flush,
        .release = fd_release,
};

static const struct fuse_operations pt_ops = {
        .init = fs_init,
        .getattr = pt_getattr,
        .readdir = pt_readdir,
        .mkdir = pt_mkdir,
        .unlink = pt_unlink,
        .rmdir = pt_rmdir,
        .symlink = pt_symlink,
        .readlink = pt_readlink,
        .rename = pt_rename,
        .link = pt_link,
        .chmod = pt_chmod,
        .chown = pt_chown,
        .utimens = pt_utimens,
        .truncate = pt_truncate,
        .create = pt_create,
        .open = pt_open,
        .read = pt_read,
        .write = pt_write,
        .fsync = pt_fsync,
        .flush = pt_flush,
        .release = pt_release,
        .statfs = pt_statfs,
};

/* ---- control ---- */

static void status_format_locked(char *buf, size_t n, char sep) {
        snprintf(buf, n,
                 "mode=%s%cpowered=%d%chung=%s%cparked=%" PRIu64 "%cwrites=%" PRIu64 "%creads=%" PRIu64
                 "%cflushes=%" PRIu64 "%cbytes_written=%" PRIu64 "%cbytes_read=%" PRIu64
                 "%cbytes_flushed=%" PRIu64 "%cdirty_blocks=%" PRIu64 "%cdropped_writes=%" PRIu64
                 "%cfailed_writes=%" PRIu64 "%cfailed_flushes=%" PRIu64 "%ceio_write=%d%ceio_flush=%d"
                 "%clie=%d%cserial=%d%cwrite_delay_us=%" PRIu64 "%cflush_delay_us=%" PRIu64
                 "%cbandwidth=%" PRIu64 "%cpower_cuts=%" PRIu64 "%clast_kept_blocks=%" PRIu64
                 "%clast_lost_blocks=%" PRIu64 "%cauto_resumes=%" PRIu64 "%chang_max_us=%" PRIu64
                 "%cpower_off_mode=%s%csize=%" PRIu64 "%cpid=%d",
                 g.passthrough ? "passthrough" : "file", sep, g.powered, sep, hang_mode_str[g.hung], sep,
                 g.parked, sep, g.writes, sep, g.reads, sep, g.flushes, sep, g.bytes_written, sep,
                 g.bytes_read, sep, g.bytes_flushed, sep, g.dirty_blocks, sep, g.dropped_writes, sep,
                 g.failed_writes, sep, g.failed_flushes, sep, g.eio_write, sep, g.eio_flush, sep, g.lie,
                 sep, g.serial, sep, g.write_delay_usec, sep, g.flush_delay_usec, sep, g.bandwidth, sep,
                 g.power_cuts, sep, g.last_kept, sep, g.last_lost, sep, g.auto_resumes, sep,
                 g.hang_max_usec, sep, g.power_off_eio ? "eio" : "drop", sep, g.size, sep, (int) getpid());
}

static void status_write_file(void) {
        char buf[2048], tmp[PATH_MAX];

        if (!g.status_path)
                return;
        pthread_mutex_lock(&g.lock);
        (void) hang_applies_locked(REQ_META);   /* lets the auto-resume show up */
        status_format_locked(buf, sizeof(buf), '\n');
        pthread_mutex_unlock(&g.lock);
        snprintf(tmp, sizeof(tmp), "%s.tmp", g.status_path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return;
        size_t len = strlen(buf);
        buf[len++] = '\n';
        bool ok = write(fd, buf, len) == (ssize_t) len;
        close(fd);
        if (ok)
                (void) rename(tmp, g.status_path);
        else
                (void) unlink(tmp);
}

static void power_cut_locked(unsigned keep, uint64_t seed) {
        uint64_t state = seed, kept = 0, lost = 0;
        for (uint64_t b = 0; b < g.nblocks; b++) {
                if (!g.cache[b])
                        continue;
                if (splitmix64(&state) % 1000 < keep &&
                    pwrite(g.image_fd, g.cache[b], FD_BLOCK, (off_t) (b * FD_BLOCK)) == (ssize_t) FD_BLOCK)
                        kept++;
                else
                        lost++;
                free(g.cache[b]);
                g.cache[b] = NULL;
        }
        g.dirty_blocks = 0;
        g.last_kept = kept;
        g.last_lost = lost;
        g.power_cuts++;
        g.powered = false;
}

static void handle_command(char *line, char *reply, size_t n) {
        char *argv[8], *save = NULL;
        int argc = 0;
        for (char *t = strtok_r(line, " \t\r\n", &save); t && argc < 8; t = strtok_r(NULL, " \t\r\n", &save))
                argv[argc++] = t;
        if (argc == 0) {
                snprintf(reply, n, "ERR empty command");
                return;
        }

        const char *cmd = argv[0];
        uint64_t v;
        bool b;
        int r = 0;
        pthread_mutex_lock(&g.lock);
        if (strcmp(cmd, "ping") == 0 && argc == 1)
                snprintf(reply, n, "OK pong");
        else if (strcmp(cmd, "status") == 0 && argc == 1) {
                (void) hang_applies_locked(REQ_META);
                char buf[2048];
                status_format_locked(buf, sizeof(buf), ' ');
                snprintf(reply, n, "OK %s", buf);
        } else if (strcmp(cmd, "hang") == 0 && argc <= 2) {
                enum hang_mode m = HANG_ALL;
                if (argc == 2 && strcmp(argv[1], "io") == 0)
                        m = HANG_IO;
                else if (argc == 2 && strcmp(argv[1], "all") != 0)
                        r = -EINVAL;
                if (r == 0) {
                        g.hung = m;
                        g.hang_deadline = now_usec() + g.hang_max_usec;
                        snprintf(reply, n, "OK hung=%s", hang_mode_str[m]);
                }
        } else if (strcmp(cmd, "resume") == 0 && argc == 1) {
                g.hung = HANG_NONE;
                pthread_cond_broadcast(&g.cond);
                snprintf(reply, n, "OK parked=%" PRIu64, g.parked);
        } else if (strcmp(cmd, "hang-max") == 0 && argc == 2) {
                r = parse_usec(argv[1], &v);
                if (r == 0 && v == 0)
                        r = -EINVAL;
                if (r == 0) {
                        g.hang_max_usec = v;
                        snprintf(reply, n, "OK");
                }
        } else if (strcmp(cmd, "power-cut") == 0) {
                uint64_t keep = 0, seed = 0;
                bool eio = false;
                for (int i = 1; i < argc && r == 0; i++) {
                        if (strncmp(argv[i], "keep=", 5) == 0)
                                r = parse_size(argv[i] + 5, &keep) < 0 || keep > 1000 ? -EINVAL : 0;
                        else if (strncmp(argv[i], "seed=", 5) == 0)
                                r = parse_size(argv[i] + 5, &seed);
                        else if (strcmp(argv[i], "mode=eio") == 0)
                                eio = true;
                        else if (strcmp(argv[i], "mode=drop") == 0)
                                eio = false;
                        else
                                r = -EINVAL;
                }
                if (r == 0 && g.passthrough)
                        r = -EOPNOTSUPP;
                if (r == 0) {
                        g.power_off_eio = eio;
                        power_cut_locked((unsigned) keep, seed);
                        snprintf(reply, n, "OK kept=%" PRIu64 " lost=%" PRIu64, g.last_kept, g.last_lost);
                }
        } else if (strcmp(cmd, "power-on") == 0 && argc == 1) {
                g.powered = true;
                snprintf(reply, n, "OK");
        } else if (strcmp(cmd, "eio") == 0 && (argc == 2 || argc == 3)) {
                const char *what = argc == 3 ? argv[1] : "all";
                r = parse_onoff(argv[argc - 1], &b);
                if (r == 0 && strcmp(what, "write") == 0)
                        g.eio_write = b;
                else if (r == 0 && strcmp(what, "flush") == 0)
                        g.eio_flush = b;
                else if (r == 0 && strcmp(what, "all") == 0)
                        g.eio_write = g.eio_flush = b;
                else
                        r = -EINVAL;
                if (r == 0)
                        snprintf(reply, n, "OK eio_write=%d eio_flush=%d", g.eio_write, g.eio_flush);
        } else if (strcmp(cmd, "lie") == 0 && argc == 2) {
                r = parse_onoff(argv[1], &g.lie);
                if (r == 0)
                        snprintf(reply, n, "OK lie=%d", g.lie);
        } else if (strcmp(cmd, "serial") == 0 && argc == 2) {
                r = parse_onoff(argv[1], &g.serial);
                if (r == 0)
                        snprintf(reply, n, "OK serial=%d", g.serial);
        } else if (strcmp(cmd, "write-delay") == 0 && argc == 2) {
                r = parse_usec(argv[1], &g.write_delay_usec);
                if (r == 0)
                        snprintf(reply, n, "OK write_delay_us=%" PRIu64, g.write_delay_usec);
        } else if (strcmp(cmd, "flush-delay") == 0 && argc == 2) {
                r = parse_usec(argv[1], &g.flush_delay_usec);
                if (r == 0)
                        snprintf(reply, n, "OK flush_delay_us=%" PRIu64, g.flush_delay_usec);
        } else if (strcmp(cmd, "bandwidth") == 0 && argc == 2) {
                r = parse_size(argv[1], &g.bandwidth);
                if (r == 0)
                        snprintf(reply, n, "OK bandwidth=%" PRIu64, g.bandwidth);
        } else if (strcmp(cmd, "reset-counters") == 0 && argc == 1) {
                g.writes = g.reads = g.flushes = g.bytes_written = g.bytes_read = g.bytes_flushed = 0;
                g.dropped_writes = g.failed_writes = g.failed_flushes = g.auto_resumes = 0;
                snprintf(reply, n, "OK");
        } else
                r = -EBADRQC;
        if (r < 0)
                snprintf(reply, n, "ERR %s: %s", cmd, r == -EBADRQC ? "unknown command or wrong arguments"
                                                                  : strerror(-r));
        g.status_gen++;
        pthread_mutex_unlock(&g.lock);
}

static void serve_client(int fd) {
        char buf[LINE_MAX_LEN], reply[2300];
        size_t have = 0;
        struct timeval tv = { .tv_sec = 10 };
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        for (;;) {
                char *nl = memchr(buf, '\n', have);
                if (!nl) {
                        if (have == sizeof(buf))
                                return; /* over-long line: drop the client */
                        ssize_t k = read(fd, buf + have, sizeof(buf) - have);
                        if (k <= 0)
                                return;
                        have += (size_t) k;
                        continue;
                }
                *nl = '\0';
                handle_command(buf, reply, sizeof(reply) - 1);
                status_write_file();
                size_t len = strlen(reply);
                reply[len++] = '\n';
                if (write(fd, reply, len) != (ssize_t) len)
                        return;
                size_t used = (size_t) (nl - buf) + 1;
                memmove(buf, nl + 1, have - used);
                have -= used;
        }
}

static void *control_thread(void *arg) {
        int lfd = *(int *) arg;
        uint64_t written_gen = UINT64_MAX;
        for (;;) {
                struct pollfd p = { .fd = lfd, .events = POLLIN };
                int k = poll(&p, 1, 500);
                if (k > 0) {
                        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                        if (c >= 0) {
                                serve_client(c);
                                close(c);
                        }
                }
                pthread_mutex_lock(&g.lock);
                (void) hang_applies_locked(REQ_META);
                uint64_t gen = g.status_gen;
                pthread_mutex_unlock(&g.lock);
                if (gen != written_gen) {
                        status_write_file();
                        written_gen = gen;
                }
        }
        return NULL;
}

static struct fuse *the_fuse;

static void *signal_thread(void *arg) {
        sigset_t *set = arg;
        int sig, count = 0;
        for (;;) {
                if (sigwait(set, &sig) != 0)
                        continue;
                count++;
                pthread_mutex_lock(&g.lock);
                g.shutting_down = true;
                g.hung = HANG_NONE;
                pthread_cond_broadcast(&g.cond);
                pthread_mutex_unlock(&g.lock);
                fuse_exit(the_fuse);
                /* lazy unmount: the connection ends once the last user (e.g. a loop device) lets go */
                (void) umount2(g.mountpoint, MNT_DETACH);
                if (count >= 2) {
                        /* second signal: abort the connection so the daemon can exit now */
                        char p[64];
                        snprintf(p, sizeof(p), "/sys/fs/fuse/connections/%u/abort", minor(g.fuse_dev));
                        int fd = open(p, O_WRONLY | O_CLOEXEC);
                        if (fd >= 0) {
                                (void) !write(fd, "1", 1);
                                close(fd);
                        }
                }
        }
        return NULL;
}

/* ---- client and helpers ---- */

static int ctl_main(int argc, char **argv) {
        char line[LINE_MAX_LEN] = "", reply[4096];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (argc < 2) {
                fprintf(stderr, "usage: faultdisk ctl SOCKET COMMAND [ARG...]\n");
                return 2;
        }
        if (strlen(argv[0]) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "faultdisk ctl: socket path too long\n");
                return 2;
        }
        strcpy(sa.sun_path, argv[0]);
        for (int i = 1; i < argc; i++) {
                if (strlen(line) + strlen(argv[i]) + 2 >= sizeof(line)) {
                        fprintf(stderr, "faultdisk ctl: command too long\n");
                        return 2;
                }
                if (i > 1)
                        strcat(line, " ");
                strcat(line, argv[i]);
        }
        strcat(line, "\n");

        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                fprintf(stderr, "faultdisk ctl: cannot connect to %s: %m\n", argv[0]);
                return 1;
        }
        struct timeval tv = { .tv_sec = 30 };
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (write(fd, line, strlen(line)) != (ssize_t) strlen(line)) {
                fprintf(stderr, "faultdisk ctl: write: %m\n");
                return 1;
        }
        size_t have = 0;
        while (have < sizeof(reply) - 1 && !memchr(reply, '\n', have)) {
                ssize_t k = read(fd, reply + have, sizeof(reply) - 1 - have);
                if (k <= 0) {
                        fprintf(stderr, "faultdisk ctl: no reply from %s\n", argv[0]);
                        return 1;
                }
                have += (size_t) k;
        }
        close(fd);
        reply[have] = '\0';
        char *nl = strchr(reply, '\n');
        if (nl)
                *nl = '\0';
        bool ok = strncmp(reply, "OK", 2) == 0;
        fprintf(ok ? stdout : stderr, "%s\n", reply);
        return ok ? 0 : 1;
}

static int gen_main(int argc, char **argv) {
        uint64_t seed, bytes;
        if (argc != 2 || parse_size(argv[0], &seed) < 0 || parse_size(argv[1], &bytes) < 0) {
                fprintf(stderr, "usage: faultdisk gen SEED BYTES\n");
                return 2;
        }
        uint64_t state = seed ^ 0x5eedf00dULL;
        uint8_t buf[65536];
        while (bytes > 0) {
                size_t n = (size_t) MIN_U64(bytes, sizeof(buf));
                for (size_t i = 0; i < n; i += 8) {
                        uint64_t x = splitmix64(&state);
                        memcpy(buf + i, &x, MIN_SZ(8, n - i));
                }
                if (fwrite(buf, 1, n, stdout) != n)
                        return 1;
                bytes -= n;
        }
        return fflush(stdout) == 0 ? 0 : 1;
}

/* The FUSE connection number is the minor of the mount's device: look it up in mountinfo. */
static dev_t fuse_dev_of(const char *abs_mnt) {
        char line[4096], target[PATH_MAX];
        unsigned ma, mi;
        dev_t d = 0;
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                /* mount points with spaces are escaped (\040): not used by the test library */
                if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &ma, &mi, target) == 3 &&
                    strcmp(target, abs_mnt) == 0)
                        d = makedev(ma, mi);    /* the last one is ours */
        fclose(f);
        return d;
}

static void usage(void) {
        fprintf(stderr,
                "usage: faultdisk [OPTIONS] MOUNTPOINT         (file mode: needs --image and --size)\n"
                "       faultdisk --passthrough=DIR [OPTIONS] MOUNTPOINT\n"
                "       faultdisk ctl SOCKET COMMAND [ARG...]\n"
                "       faultdisk gen SEED BYTES\n"
                "options: --image=PATH --size=BYTES[K|M|G] --control=PATH --status=PATH --pidfile=PATH\n"
                "         --daemon --hang-max=TIME --write-delay=TIME --flush-delay=TIME\n"
                "         --bandwidth=BYTES_PER_SEC --serial --no-writeback-cache (passthrough)\n"
                "         --no-allow-other (only the mounting user, even root, may enter)\n"
                "TIME is N[us|ms|s]; default unit us.\n");
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "image", required_argument, NULL, 'i' },
                { "size", required_argument, NULL, 's' },
                { "control", required_argument, NULL, 'c' },
                { "status", required_argument, NULL, 'S' },
                { "pidfile", required_argument, NULL, 'p' },
                { "passthrough", required_argument, NULL, 'P' },
                { "daemon", no_argument, NULL, 'd' },
                { "foreground", no_argument, NULL, 'f' },
                { "hang-max", required_argument, NULL, 'H' },
                { "write-delay", required_argument, NULL, 'w' },
                { "flush-delay", required_argument, NULL, 'F' },
                { "bandwidth", required_argument, NULL, 'b' },
                { "serial", no_argument, NULL, 'z' },
                { "no-writeback-cache", no_argument, NULL, 'W' },
                { "no-allow-other", no_argument, NULL, 'A' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        bool daemonize = false;
        int c;

        if (argc >= 2 && strcmp(argv[1], "ctl") == 0)
                return ctl_main(argc - 2, argv + 2);
        if (argc >= 2 && strcmp(argv[1], "gen") == 0)
                return gen_main(argc - 2, argv + 2);

        while ((c = getopt_long(argc, argv, "fh", opts, NULL)) >= 0) {
                int r = 0;
                switch (c) {
                case 'i': g.image_path = optarg; break;
                case 's': r = parse_size(optarg, &g.size); break;
                case 'c': g.control_path = optarg; break;
                case 'S': g.status_path = optarg; break;
                case 'p': g.pid_path = optarg; break;
                case 'P': g.passthrough = optarg; break;
                case 'd': daemonize = true; break;
                case 'f': daemonize = false; break;
                case 'H': r = parse_usec(optarg, &g.hang_max_usec); break;
                case 'w': r = parse_usec(optarg, &g.write_delay_usec); break;
                case 'F': r = parse_usec(optarg, &g.flush_delay_usec); break;
                case 'b': r = parse_size(optarg, &g.bandwidth); break;
                case 'z': g.serial = true; break;
                case 'W': g.writeback_cache = false; break;
                case 'A': g.private_mount = true; break;
                case 'h': usage(); return 0;
                default: usage(); return 2;
                }
                if (r < 0) {
                        fprintf(stderr, "faultdisk: invalid value '%s'\n", optarg);
                        return 2;
                }
        }
        if (optind + 1 != argc) {
                usage();
                return 2;
        }
        g.mountpoint = argv[optind];

        if (g.passthrough) {
                g.root_fd = open(g.passthrough, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (g.root_fd < 0) {
                        fprintf(stderr, "faultdisk: cannot open %s: %m\n", g.passthrough);
                        return 1;
                }
        } else {
                if (!g.image_path || g.size == 0 || g.size % FD_BLOCK != 0) {
                        fprintf(stderr, "faultdisk: file mode needs --image and --size (multiple of 4K)\n");
                        return 2;
                }
                g.nblocks = g.size / FD_BLOCK;
                g.image_fd = open(g.image_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
                struct stat st;
                if (g.image_fd < 0 || fstat(g.image_fd, &st) < 0) {
                        fprintf(stderr, "faultdisk: cannot open %s: %m\n", g.image_path);
                        return 1;
                }
                if ((uint64_t) st.st_size < g.size && ftruncate(g.image_fd, (off_t) g.size) < 0) {
                        fprintf(stderr, "faultdisk: cannot size %s: %m\n", g.image_path);
                        return 1;
                }
                g.cache = calloc(g.nblocks, sizeof(uint8_t *));
                if (!g.cache)
                        return 1;
        }

        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&g.cond, &ca);

        char fsopts[] = "fsname=faultdisk,subtype=faultdisk,allow_other,default_permissions";
        char private_fsopts[] = "fsname=faultdisk,subtype=faultdisk,default_permissions";
        char *fargv[] = { argv[0], (char *) "-o", g.private_mount ? private_fsopts : fsopts, NULL };
        struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
        the_fuse = fuse_new(&args, g.passthrough ? &pt_ops : &file_ops,
                            g.passthrough ? sizeof(pt_ops) : sizeof(file_ops), NULL);
        if (!the_fuse) {
                fprintf(stderr, "faultdisk: fuse_new failed\n");
                return 1;
        }
        char abs_mnt[PATH_MAX];
        if (!realpath(g.mountpoint, abs_mnt)) {
                fprintf(stderr, "faultdisk: bad mount point %s: %m\n", g.mountpoint);
                fuse_destroy(the_fuse);
                return 1;
        }
        if (fuse_mount(the_fuse, g.mountpoint) != 0) {
                fprintf(stderr, "faultdisk: cannot mount on %s\n", g.mountpoint);
                fuse_destroy(the_fuse);
                return 1;
        }
        /* never stat the mount point here: nobody serves requests yet */
        g.fuse_dev = fuse_dev_of(abs_mnt);

        int lfd = -1;
        if (g.control_path) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                if (strlen(g.control_path) >= sizeof(sa.sun_path)) {
                        fprintf(stderr, "faultdisk: control path too long\n");
                        goto fail_unmount;
                }
                strcpy(sa.sun_path, g.control_path);
                (void) unlink(g.control_path);
                lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(lfd, 16) < 0) {
                        fprintf(stderr, "faultdisk: cannot listen on %s: %m\n", g.control_path);
                        goto fail_unmount;
                }
        }

        if (daemonize && fuse_daemonize(0) != 0)
                goto fail_unmount;
        if (g.pid_path) {
                FILE *f = fopen(g.pid_path, "we");
                if (f) {
                        fprintf(f, "%d\n", (int) getpid());
                        fclose(f);
                }
        }
        status_write_file();

        static sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        signal(SIGPIPE, SIG_IGN);

        pthread_t t;
        if (pthread_create(&t, NULL, signal_thread, &set) != 0)
                goto fail_unmount;
        pthread_detach(t);
        if (lfd >= 0) {
                if (pthread_create(&t, NULL, control_thread, &lfd) != 0)
                        goto fail_unmount;
                pthread_detach(t);
        }

        struct fuse_loop_config *cfg = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(cfg, 64);
        fuse_loop_cfg_set_idle_threads(cfg, 8);
        int r = fuse_loop_mt(the_fuse, cfg);
        fuse_loop_cfg_destroy(cfg);

        pthread_mutex_lock(&g.lock);
        g.shutting_down = true;
        g.hung = HANG_NONE;
        pthread_cond_broadcast(&g.cond);
        pthread_mutex_unlock(&g.lock);
        status_write_file();
        if (g.control_path)
                (void) unlink(g.control_path);
        if (g.pid_path)
                (void) unlink(g.pid_path);
        /* detached threads may still run: end the process without tearing down shared state */
        (void) umount2(g.mountpoint, MNT_DETACH);
        _exit(r < 0 ? 1 : 0);

fail_unmount:
        fuse_unmount(the_fuse);
        fuse_destroy(the_fuse);
        return 1;
}
