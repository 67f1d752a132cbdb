/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A directory read a few entries at a time. readdir(3) asks getdents64(2) for 32 KiB at once, and
 * proc's readdir builds a dentry for every process it lists: a walk of /proc that stops after the
 * first processes (sample-ns.c) paid for every process of the machine. DirBatch asks for
 * DIR_BATCH_BYTES (30-40 processes) per call. Its fd is its own: an fdopendir() of a dup of the
 * caller's fd shares, and moves, the caller's directory offset, so a second walk through another
 * dup started where the first one's read-ahead had ended, usually at the end.
 */

#include <dirent.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

#define DIR_BATCH_BYTES 1024U

typedef struct DirBatch {
        int fd;
        int error;       /* the error that ended the walk (negative errno), 0 at a plain end */
        size_t pos, len; /* the next entry in buf, the bytes in buf */
        _Alignas(struct dirent64) uint8_t buf[DIR_BATCH_BYTES];
} DirBatch;

/* Opens dir_fd/path (open_dir_at(): "." for dir_fd itself) for dir_batch_next(). Returns 0 or negative errno; on error *ret holds no fd. */
int dir_batch_open(int dir_fd, const char *path, DirBatch *ret);

/* The next entry ("." and ".." included, as readdir(3) gives them), valid until the next call on d.
 * NULL at the end and on an error, which d->error then says (negative errno). */
const struct dirent64 *dir_batch_next(DirBatch *d);

/* Closes the fd (idempotent). */
void dir_batch_close(DirBatch *d);
#define _cleanup_dir_batch_ _cleanup_(dir_batch_close)
