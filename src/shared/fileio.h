/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Files relative to a directory fd (the "root" of a fixture tree or "/"): bounded reads, atomic
 * writes, directories opened O_CLOEXEC (and a cleanup for DIR *).
 */

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/* Reads the whole file 'path' (relative to dir_fd; a leading '/' is stripped) into a NUL-terminated
 * buffer. Refuses files larger than max bytes with -EFBIG. Returns 0 or negative errno. */
int read_full_file_at(int dir_fd, const char *path, size_t max, char **ret, size_t *ret_size);

/* Whether st (of a path followed to its end) is /dev/null: a character device 1:3, the node itself
 * or what a link to it, however spelled, resolves to. */
bool stat_is_dev_null(const struct stat *st);

typedef enum ReadFullFlags {
        /* Only a regular file (or /dev/null, read as empty), opened without waiting (O_NONBLOCK): a
         * FIFO, a device or a socket is -EBADFD at once, never a read that blocks; a directory
         * -EISDIR. A file whose size, modification or change time moved while it was read is -EBUSY
         * (written to meanwhile: what was read may be half of it). */
        READ_FULL_REGULAR = 1 << 0,
        /* The last component is not followed (O_NOFOLLOW): a symbolic link is -ELOOP. */
        READ_FULL_NOFOLLOW = 1 << 1,
        /* Our own state files under /run: a FIFO, device, directory or link put there never blocks
         * a pass nor stands for a record (review AF, F3). */
        READ_FULL_STATE = READ_FULL_REGULAR | READ_FULL_NOFOLLOW,
} ReadFullFlags;

/* read_full_file_at() with flags. */
int read_full_file_at_flags(int dir_fd, const char *path, size_t max, ReadFullFlags flags, char **ret,
                            size_t *ret_size);

/* Reads a small file holding one decimal number (a trailing newline allowed), e.g. a sysfs
 * counter. Returns 0, or negative errno (-EINVAL/-ERANGE for other content). */
int read_u64_file_at(int dir_fd, const char *path, uint64_t *ret);

/* Writes all n bytes to fd, retrying short writes and EINTR (pipes, sockets). Allocates nothing:
 * safe in a forked child. Returns 0 or negative errno. */
int loop_write(int fd, const void *p, size_t n);

/* Ends an open_memstream(3) stream f whose buffer is *buf: flushes it, checks its error flag and
 * closes it (f is closed either way). 0 with *buf the text, or -ENOMEM: a write failed, or glibc's
 * last realloc in fclose() did, which leaves *buf NULL yet returns 0 (review AS, AS-2). */
int memstream_finish(FILE *f, char **buf);

/* Writes 'data' to dir_fd/path atomically: temporary file in the same directory, fsync-free
 * (tmpfs), rename. Mode 0644. */
int write_file_atomic_at(int dir_fd, const char *path, const char *data, size_t size);

/* What suspend-sync writes is meant for everyone to read (records, history, metrics): files
 * written by write_file_atomic_at() get PUBLIC_FILE_MODE and directories made by
 * mkdirat_public() PUBLIC_DIR_MODE whatever the umask (the unit runs with UMask=0027, so that
 * anything else stays private). */
#define PUBLIC_FILE_MODE 0644
#define PUBLIC_DIR_MODE 0755
/* mkdirat() with PUBLIC_DIR_MODE; 0 when made or already there, negative errno. */
int mkdirat_public(int dir_fd, const char *path);
/* The absolute path and every missing parent, each as mkdirat_public() makes it (an existing one is
 * only looked at). 0, or a negative errno (-EINVAL: not absolute). */
int mkdir_p_public(const char *path);

/* Opens a directory relative to dir_fd (O_DIRECTORY|O_CLOEXEC), leading '/' stripped. */
int open_dir_at(int dir_fd, const char *path);

/* The target of the symbolic link at path, relative to dir_fd as readlinkat() takes it (an absolute
 * path is not stripped), at most PATH_MAX - 1 bytes. *ret is set on success only; negative errno
 * otherwise. */
int readlink_malloc_at(int dir_fd, const char *path, char **ret);

/* openat() that never waits in the path walk (openat2() with RESOLVE_CACHED, Linux 5.12): every
 * component must be in the kernel's lookup cache, needing no I/O and no revalidation (a network or
 * FUSE server, a hung disk). Leading '/' stripped relative to a dir fd. Returns the fd, -EAGAIN when
 * the walk would have had to wait, -ENOSYS/-EINVAL before 5.12, or another negative errno. Not with
 * O_CREAT or O_TRUNC. The cached walk is the kernel's RCU walk, which also gives up (-EAGAIN) when a
 * mount, unmount or rename anywhere on the machine changed a sequence count under it: tried
 * OPEN_CACHED_TRIES times. */
#define OPEN_CACHED_TRIES 4
int open_cached_at(int dir_fd, const char *path, int flags);

/* Where to open a path that may be longer than PATH_MAX, which open(2) refuses (ENAMETOOLONG). A
 * path shorter than PATH_MAX is left whole, with no system call: *ret_dir_fd = AT_FDCWD, *ret_rest =
 * path, so that openat(*ret_dir_fd, *ret_rest, ...) is the open(path, ...) it always was. A longer
 * one is walked in pieces cut after a '/', each shorter than PATH_MAX, from the working directory
 * (an absolute path's first piece starts at "/"): each piece is opened O_PATH|O_DIRECTORY from the
 * one before, following symbolic links (and triggering automounts) as open(2) does in the middle of
 * a path; *ret_dir_fd is the last piece's fd (the caller's to close), *ret_rest the rest of path
 * (shorter than PATH_MAX; "." when path ends in '/') to open from it with the caller's flags. System
 * calls only, no allocation (for a forked worker). 0, or the negative errno of the walk
 * (-ENAMETOOLONG when no '/' leaves a piece shorter than PATH_MAX). */
int path_walk_long(const char *path, int *ret_dir_fd, const char **ret_rest);

/* Skips leading slashes so absolute paths can be used relative to a root dir fd; "/" gives ".". */
const char *skip_root_prefix(const char *path);

/* Opens dir_fd/path (leading '/' stripped) as a directory stream, O_CLOEXEC. Returns 0, or the
 * negative errno of the open (-ENOMEM when the stream cannot be allocated). */
int opendir_at(int dir_fd, const char *path, DIR **ret);

static inline void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}
#define _cleanup_closedir_ __attribute__((cleanup(closedirp)))
