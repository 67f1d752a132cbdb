/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Persistent history of sleep cycles (default /var/lib/suspend-sync/cycles/, made by record-cycle):
 * one JSON file per cycle — boot id, resume time, the unit's pass and the late pass as run
 * records (state's schema) — written after resume only (never before sleep: nothing may be
 * written to a disk that was just synced), atomically, mode 0644 so that an unprivileged `status`
 * reads it; bounded in count and bytes, oldest removed first. Statistics over it are pure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cycle.h"
#include "plan.h"
#include "state.h"

#define HISTORY_DIR_DEFAULT "/var/lib/suspend-sync"
#define HISTORY_SUBDIR "cycles"
#define HISTORY_CYCLES_MAX 64U
#define HISTORY_FILE_MAX (2U * 1024U * 1024U)   /* one cycle; a larger one is not written */
#define HISTORY_BYTES_MAX (16U * 1024U * 1024U) /* the whole directory */

typedef struct CycleRecord {
        char boot_id[33];        /* 32 hex digits, "" unknown */
        usec_t resumed_realtime; /* 0: unknown */
        bool has_unit, has_late;
        RunRecord unit, late;
} CycleRecord;

void cycle_record_done(CycleRecord *c);
void cycle_record_array_free(CycleRecord *a, size_t n);

/* Copies the records of a cycle (deep copy through the JSON schema). */
int cycle_record_from_cycle(const SleepCycle *c, const char *boot_id, usec_t resumed_realtime,
                            CycleRecord *ret);
/* The cycle as a SleepCycle pointing into c (sleep_cycle_start(), sleep_cycle_action()). */
SleepCycle cycle_record_view(const CycleRecord *c);
/* The record of pass "unit" or "late", NULL when the cycle has none. */
const RunRecord *cycle_record_pass(const CycleRecord *c, const char *pass);
/* Start of the cycle's first pass (realtime), 0 when it has none. */
usec_t cycle_record_start(const CycleRecord *c);

/* JSON, pure. -EINVAL for a cycle without passes; from: -EBADMSG when malformed. */
int cycle_record_to_json_string(const CycleRecord *c, char **ret);
int cycle_record_from_json_string(const char *text, CycleRecord *ret);

/* Appends the cycle under dir_fd/cycles/ as "<start usec>-<boot id>.json" (the same cycle
 * appended twice is written once: the name exists), then removes the oldest files beyond
 * HISTORY_CYCLES_MAX or HISTORY_BYTES_MAX. Returns 1 written, 0 already there, negative errno
 * (-E2BIG when the cycle alone exceeds HISTORY_FILE_MAX). */
int history_append(int dir_fd, const CycleRecord *c);

/* Loads at most max cycles, newest first; unreadable or malformed files are counted in
 * *ret_n_corrupt (may be NULL) and skipped. A missing directory is an empty history. */
int history_load(int dir_fd, size_t max, CycleRecord **ret, size_t *ret_n, size_t *ret_n_corrupt);

/* Per mount (pass, namespace, mount point) over the cycles: sync time percentiles (nearest rank)
 * of the mounts with action "sync", and outcome counts. Pure; points into cycles[]. */
typedef struct MountStats {
        const char *pass; /* "unit" | "late" */
        const char *mount_point;
        uint64_t namespace_ino;
        size_t n; /* cycles in which it was synced or tried */
        usec_t min, p50, p95, max;
        size_t n_synced, n_timeout, n_error;
} MountStats;

int history_mount_stats(const CycleRecord *cycles, size_t n, MountStats **ret, size_t *ret_n);

/* What plan_learn() needs, as a small file under the state directory (tmpfs: the run may read it
 * before the knob decision; it never reads /var/lib): record-cycle writes it after each resume. */
#define HISTORY_LEARNED_FILE "eta-learned"
#define HISTORY_LEARNED_OLD_FILE "eta-learned.json" /* its JSON form, once: record-cycle removes it */
#define HISTORY_LEARNED_MAX 4096U

/* Plain text, not JSON: every pass reads it, and json-c before 0.18 (Debian 12 ships 0.16) crashes
 * when an allocation fails while it parses an object's key (review AS, AS-3); a pass must not die
 * over a summary of past times. A header line, then one line per mount that synced at least once:
 *
 *   suspend-sync eta-learned 1
 *   PASS NAMESPACE_INO MIN_USEC P50_USEC MOUNT_POINT
 *
 * PASS "unit" or "late", NAMESPACE_INO 0 for our own namespace, MOUNT_POINT its bytes in lower-case
 * hex (any byte may be in a mount point). Mount points longer than STATE_STRING_MAX are left out, and
 * lines that would take the file past HISTORY_FILE_MAX (which a pass reads no further than). */
#define HISTORY_LEARNED_HEADER "suspend-sync eta-learned 1"
int history_learned_format(const MountStats *s, size_t n, char **ret);

/* The entries of one pass ("unit" or "late"); the strings point into *ret_owned (free with
 * history_learned_done()). -EBADMSG for anything malformed (a header other than ours, a line cut
 * or not of five fields, a number out of range, a mount point not in hex or holding a NUL byte), -EFBIG
 * over HISTORY_FILE_MAX. Pure; allocates nothing json-c would. */
typedef struct HistoryLearned {
        PlanLearned *l;
        size_t n;
        char **strings;
} HistoryLearned;
int history_learned_parse(const char *text, const char *pass, HistoryLearned *ret);
void history_learned_done(HistoryLearned *h);

/* How close the plans' ETAs came to the time the executor took, over run records with both:
 * ratios actual / ETA in thousandths (1000 = exact). Pure. */
typedef struct EtaAccuracy {
        size_t n;
        unsigned min, median, max;
} EtaAccuracy;
EtaAccuracy history_eta_accuracy(const RunRecord *r, size_t n);

/* Nearest-rank percentile (0 < pct <= 100) of n sorted values; 0 for n == 0. */
usec_t percentile_sorted(const usec_t *v, size_t n, unsigned pct);
