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

/*
 * How far the Writeback (or WritebackTmp) line can be from the exact count when no write to
 * proc/sys/vm/stat_refresh came just before (mm/vmstat.c): each online CPU holds, per node, a delta
 * not yet folded in, in either direction, at most the node's stat threshold, which is at most
 * VMSTAT_THRESHOLD_MAX pages (the kernel's cap; under memory pressure the thresholds only drop). So
 * the bound is VMSTAT_THRESHOLD_MAX pages per node and online CPU, both counted in proc/zoneinfo
 * (its "Node N, zone Z" headers; a populated zone's pagesets list a "cpu: C" per online CPU). A
 * count further from 0 than that cannot be 0; use it only to tell when a refreshed read is worth
 * making, never as evidence (evidence.h).
 * meminfo_drift_parse(): pure, from zoneinfo text, in pages; -EBADMSG when it shows no node with a
 * CPU. meminfo_drift_load(): from <root_fd>/proc/zoneinfo, in bytes.
 */
#define VMSTAT_THRESHOLD_MAX 125U
int meminfo_drift_parse(const char *text, uint64_t *ret_pages);
int meminfo_drift_load(int root_fd, uint64_t *ret_bytes);
