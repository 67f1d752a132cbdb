/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Clean baseline: per superblock, the writeback counters read right after suspend-sync's last
 * successful syncfs of it in this boot. Part of the evidence that a filesystem is clean (see
 * docs/CLEAN-EVIDENCE.md): if nothing was dirtied or written since, syncfs would write nothing.
 * Stored as JSON in <state-dir>/baseline.json (tmpfs). Parsing is pure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/macro.h"

#define BASELINE_MAX_ENTRIES 4096U
#define BOOT_ID_MAX 64U

typedef struct BaselineEntry {
        dev_t dev;
        char *fstype;
        char *bdi_name;
        uint64_t bdi_dirtied;       /* BdiDirtied, bytes */
        uint64_t bdi_written;       /* BdiWritten, bytes */
        uint64_t fs_written_kb;     /* lifetime_write_kbytes */
} BaselineEntry;

typedef struct Baseline {
        char boot_id[BOOT_ID_MAX];
        BaselineEntry *entries;
        size_t n_entries;
} Baseline;

Baseline *baseline_free(Baseline *b);
DEFINE_TRIVIAL_CLEANUP_FUNC(Baseline *, baseline_free);

int baseline_new(const char *boot_id, Baseline **ret);
/* Adds or replaces the entry for dev. */
int baseline_put(Baseline *b, dev_t dev, const char *fstype, const char *bdi_name, uint64_t dirtied,
                 uint64_t written, uint64_t fs_written_kb);
const BaselineEntry *baseline_find(const Baseline *b, dev_t dev);
/* Drops the entry for dev (e.g. after a failed or timed-out sync). */
void baseline_forget(Baseline *b, dev_t dev);

int baseline_to_json_string(const Baseline *b, char **ret);
/* -EBADMSG on malformed input. */
int baseline_from_json_string(const char *text, Baseline **ret);

/* Loads <dir>/baseline.json; returns -ENOENT when absent, and -ESTALE when its boot id differs
 * from boot_id (a baseline never survives a reboot). */
int baseline_load(const char *dir, const char *boot_id, Baseline **ret);
int baseline_save(const char *dir, const Baseline *b);

/* Reads <root_fd>/proc/sys/kernel/random/boot_id into buf (BOOT_ID_MAX). */
int read_boot_id(int root_fd, char *buf);
