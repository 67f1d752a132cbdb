/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Global dirty state from proc/meminfo: Dirty, Writeback, WritebackTmp (and NFS_Unstable on old
 * kernels).
 */

#include <stdbool.h>
#include <stdint.h>

typedef struct Meminfo {
        uint64_t dirty_bytes;
        uint64_t writeback_bytes;
        uint64_t nfs_unstable_bytes;   /* 0 when absent */
        uint64_t writeback_tmp_bytes;  /* WritebackTmp: FUSE writeback through temporary pages
                                         * (kernels before 6.14); 0 when absent */
        bool has_dirty, has_writeback; /* the keys were present and valid */
        bool has_writeback_tmp;
} Meminfo;

/* Parses meminfo text; unknown keys are ignored. Returns -EBADMSG if neither Dirty nor Writeback
 * could be read. */
int meminfo_parse(const char *text, Meminfo *ret);

/* Reads <root_fd>/proc/meminfo. */
int meminfo_load(int root_fd, Meminfo *ret);
