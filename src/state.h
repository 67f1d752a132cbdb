/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * State: run records under the state directory (default /run/suspend-sync, tmpfs): last.json
 * written atomically, plus a bounded history (history/, one file per run, STATE_HISTORY_MAX newest kept). Records are
 * JSON (json-c through shared/json-util); parsing is pure (text or json_object in, struct out). Nothing here ever fsyncs: the directory is
 * meant to be on tmpfs and a run must not dirty real filesystems.
 *
 * Strings are raw bytes (mount points can hold anything but NUL). JSON must be valid UTF-8, so a
 * string that is not valid UTF-8 is written lossily (each invalid byte becomes U+FFFD) and the raw
 * bytes are added hex-encoded under "<key>_hex" (e.g. "mount_point_hex"); the parser prefers the
 * "_hex" form, so a round trip is lossless (json_add_bytes() and JSON_BYTES in shared/json-util.h).
 * The reasons of incomplete_why too: "incomplete_why_hex", an array as long, the hex of each reason
 * that is not valid UTF-8 and null for the others (json_add_bytes_array()); a record without it (all
 * valid, or written before it existed) reads as it is.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/macro.h"
#include "shared/time-util.h"

struct json_object;

#define STATE_DIR_DEFAULT "/run/suspend-sync"
#define STATE_HISTORY_MAX 16U
#define STATE_MAX_MOUNTS 65536U
#define STATE_FILE_MAX (16U * 1024U * 1024U)
#define STATE_STRING_MAX (16U * 1024U) /* bytes per string field (mount point, reason, ...) */
/* What the mounts of a record written may take at most, bounded from above per mount (each byte
 * of its strings as escaped, and its hex twin, and 512 for the rest), and no more than the rest of
 * the record (its reasons and header, bounded the same way) leaves of STATE_FILE_MAX; of that, the
 * mounts of other mount namespaces at most STATE_OTHER_NS_BYTES_MAX (review AN, AN-2: a user's
 * overlays over a disk are synced, not skipped). Past it, and for a mount with a string over
 * STATE_STRING_MAX, mounts are left out, other namespaces' skipped first, then our own skipped ones,
 * then other namespaces' synced ones, and counted ("mounts_omitted"): any user can make
 * thousands of mounts with 4 KiB names in a namespace of their own (review AK, AK-1: every record
 * refused, status showed an earlier run as the last; review AM, AM-3: 7 MB records of them, 16 in
 * the history on tmpfs). */
#define STATE_MOUNTS_BYTES_MAX (STATE_FILE_MAX / 2U)
#define STATE_OTHER_NS_BYTES_MAX (1024U * 1024U)

typedef struct RunMount {
        char *mount_point; /* required */
        char *fstype;      /* may be NULL */
        char *action;      /* "sync" | "skip"; required */
        char *reason;      /* may be NULL */
        char *outcome;     /* "synced" | "timeout" | "error" | "skipped"; required */
        usec_t duration;
        usec_t start_offset;    /* when its sync began, from the start of the pass; 0: not started or
                              * unknown (JSON "start_offset_usec", written only when not 0) */
        usec_t writeback_wait;  /* of duration, waiting for the device's writeback (WritebackFirst=;
                                 * JSON "writeback_wait_usec", written only when not 0) */
        int error;              /* positive errno, 0 none */
        int abandoned_pid;      /* 0 none */
        uint64_t namespace_ino; /* mount namespace ("mnt:[ino]") for a mount of another namespace;
                                 * 0: our own (JSON "namespace_ino", written only when not 0; older
                                 * records load as 0) */
} RunMount;

typedef struct RunRecord {
        usec_t started_realtime;
        /* The pass's process and its start, CLOCK_BOOTTIME (which no clock setting moves): what tells
         * a record from an earlier one (the daemon's pass_record_why_not()). 0: not recorded (JSON
         * "pid", "started_boottime_usec", written only when not 0; older records load as 0). */
        pid_t pid;
        usec_t started_boottime;
        /* How long this boot had been suspended at its start: CLOCK_BOOTTIME less CLOCK_MONOTONIC (the
         * one counts a sleep, the other does not). With last-resume's SUSPENDED_USEC= it tells how long
         * the machine slept after the late pass as the clocks count it: 0 when the state write failed,
         * and for a sleep they do not count (review AW, L3; BB, M1). JSON
         * "started_suspended_usec", written with "started_boottime_usec"; USEC_INFINITY: not recorded
         * (older records, and any without started_boottime). */
        usec_t started_suspended;
        /* The boot it ran in (JSON "boot_id", 32 lowercase hex digits, written when known; older
         * records load as ""): its times compare with last-resume's only within one boot. */
        char boot_id[33];
        /* The late pass: the kernel's counts of its suspends as it recorded (suspend-stats.h; JSON
         * "suspend_success", "suspend_fail", both written when known, else neither, and so read):
         * with last-resume's, whether the sleep after it happened. */
        bool suspend_counts_known;
        uint64_t suspend_success, suspend_fail;
        usec_t duration;
        char *result;       /* "success" | "timeout" | "error"; required */
        char *trigger;      /* "run" | "hook" | ... (free text), may be NULL */
        char *sleep_action; /* "suspend" | "hibernate" | ... (--sleep-action=, $SYSTEMD_SLEEP_ACTION;
                             * free text), NULL when none was given or in records older than it */
        usec_t deadline;
        usec_t eta; /* the plan's ETA for the pass; 0: unknown or not recorded (JSON "eta_usec",
                             * written only when known) */
        /* phase times, usec */
        usec_t t_read, t_sample, t_plan, t_execute, t_record;
        usec_t flushers_woken; /* since the start of the pass, when WritebackFirst= woke the kernel's
                                * flusher threads; 0: not woken (JSON "flushers_woken_usec", written
                                * only when not 0) */
        /* The unit's pass left the late pass out of this suspend (KeepCheapSync=, late-skip.h): the
         * kernel's sync was to take about kernel_sync_estimate (JSON "late_left_out" and
         * "kernel_sync_estimate_usec", written only when true) */
        bool late_left_out;
        usec_t kernel_sync_estimate;
        RunMount *mounts;
        size_t n_mounts;
        /* Mounts of the pass not in mounts (STATE_MOUNTS_BYTES_MAX; JSON "mounts_omitted", written
         * only when not 0). Written: this plus those the writer leaves out. */
        size_t n_mounts_omitted;
        /* Whether the pass saw every superblock the kernel's own sync writes (Sample.complete);
         * records written before this field existed load with has_complete false. */
        bool has_complete;
        bool complete;
        char **incomplete_why; /* at most STATE_REASONS_MAX */
        size_t n_incomplete_why;
} RunRecord;

#define STATE_REASONS_MAX 64U

/* Frees the contents and zeroes the struct; accepts NULL and zeroed records. Usable as
 * _cleanup_(run_record_done) on a RunRecord variable. */
void run_record_done(RunRecord *r);
/* Frees an array of n records (as returned by state_load()); accepts NULL. */
void run_record_array_free(RunRecord *a, size_t n);

/* JSON (de)serialisation, pure.
 * run_record_to_json_string(): pretty (indented, multi-line) or short (one line); no trailing
 * newline. -EINVAL when a required string is NULL, error is out of range (0..4095) or
 * abandoned_pid or pid is negative; -E2BIG when a string exceeds STATE_STRING_MAX or there are
 * more than STATE_MAX_MOUNTS mounts (such a record could not be read back).
 * run_record_from_json_string(): strict JSON, valid UTF-8, nesting depth limited; unknown keys
 * are ignored; missing or null optional fields get defaults (0 / NULL). -EFBIG when the text is
 * longer than STATE_FILE_MAX, -EBADMSG for anything malformed (syntax, wrong types, negative,
 * non-integer or out-of-range numbers (above UINT64_MAX: json-c 0.16 would saturate them, 0.18
 * refuses them), embedded NUL, too many mounts, over-long strings, bad hex). *ret is
 * written only on success. */
int run_record_to_json_string(const RunRecord *r, bool pretty, char **ret);
/* The same record as a json-c object (what run_record_to_json_string() prints), for callers that
 * embed it in their own output (status --json). Same errors. */
int run_record_to_json(const RunRecord *r, struct json_object **ret);
/* The text of run_record_to_json_string(), pretty and short, each followed by a newline, written to
 * pretty and shortform (either may be NULL) with the mounts printed one at a time: the tree of all
 * the mounts is never held (at 1000 mounts it is ~1.7 MiB, its two texts ~1 MiB more). Within
 * STATE_MOUNTS_BYTES_MAX: the mounts past it, and any with a string over STATE_STRING_MAX, are left
 * out and counted in "mounts_omitted" (refused by run_record_to_json_string()). The same other
 * refusals, all checked before the first byte; then a failed write (-EIO or its errno).
 * *ret_pretty_size (may be NULL): bytes written to pretty. */
int run_record_write_json(const RunRecord *r, FILE *pretty, FILE *shortform, uint64_t *ret_pretty_size);
int run_record_from_json_string(const char *text, RunRecord *ret);
/* Leaves in rec the mounts a record of at most max bytes lists, in the order and within the bounds
 * of the writer (STATE_MOUNTS_BYTES_MAX), the others freed and counted in n_mounts_omitted: for a
 * copy kept under a smaller bound (the history of cycles). -EINVAL for a mount that lacks what every
 * mount has. */
int run_record_trim(RunRecord *rec, size_t max);
/* The record from an already parsed json-c object (e.g. one member of a larger document): the
 * same checks on every member as run_record_from_json_string() (-EBADMSG, -ENOMEM); the text-level
 * ones (size, strict UTF-8 of the whole text, depth) are the caller's parser's. */
int run_record_from_json(struct json_object *o, RunRecord *ret);

/* Records a run: writes last.json (pretty) atomically and history/<started>-<pid>.json (one line),
 * then removes the oldest history files beyond STATE_HISTORY_MAX. Never reads or rewrites earlier
 * records (their size grows with the mount count); both are streamed (run_record_write_json()) to
 * temporary files that are renamed into place. Creates the directory (0755, with parents) if
 * missing. dir is an absolute path (-EINVAL otherwise). Never fsyncs. Errors: the record's
 * serialisation errors (nothing touched), -EFBIG for a last.json over STATE_FILE_MAX (nothing
 * replaced, no file left; STATE_MOUNTS_BYTES_MAX keeps it from happening), or the errno of mkdir/open/write (-ENOTDIR when a file
 * sits where the directory should be, -EROFS, ...). Callers serialise runs with state_lock(). */
int state_save(const char *dir, const RunRecord *r);

/* The history, newest first, at most STATE_HISTORY_MAX records; files that do not parse are skipped
 * and counted in *ret_n_corrupt, those that could not be parsed for lack of memory in *ret_n_nomem
 * (either may be NULL). A missing directory: 0 records. */
int state_load_history(const char *dir, RunRecord **ret, size_t *ret_n, size_t *ret_n_corrupt,
                       size_t *ret_n_nomem);

/* Loads the last record and the history (newest first, may be 0 entries). Either part can be
 * skipped by passing NULL for both of its outputs, so a caller can get each part's error
 * separately. last.json missing → *ret_has_last=false (ret_last zeroed); no history → 0
 * entries. A corrupt part → -EBADMSG (-EFBIG when too large); other read errors as negative
 * errno. All-or-nothing: on error no output is written. Free the history with
 * run_record_array_free(). */
int state_load(const char *dir, RunRecord *ret_last, bool *ret_has_last, RunRecord **ret_history,
               size_t *ret_n_history);

/* Reports whether dir (or, when it does not exist yet, its nearest existing ancestor, where it
 * would be created) is on tmpfs or ramfs. Returns 0 or negative errno from statfs(). */
int state_dir_check(const char *dir, bool *ret_is_tmpfs);

/* Creates dir and its parents (0755) when missing, and opens it (O_DIRECTORY). Returns the fd or
 * negative errno. */
int state_dir_open(const char *dir);

#define STATE_LOCK_FILE "lock"

/* Creates dir (like state_save()) and takes flock(LOCK_EX|LOCK_NB) on dir/lock. Returns 0 and the
 * locked fd (O_CLOEXEC; close it to release), or -EBUSY when another open file description holds
 * the lock (another run, or the same process through a different fd). The lock file is never
 * removed. */
int state_lock(const char *dir, int *ret_fd);
/* The same, tried every STATE_LOCK_POLL_USEC until 'until' (CLOCK_MONOTONIC; shared/lock-util.h):
 * -EBUSY when it is still held then. */
int state_lock_wait(const char *dir, usec_t until, int *ret_fd);
#define STATE_LOCK_POLL_USEC (5 * USEC_PER_MSEC)
/* dir/lock, opened (both made when missing), not locked: the fd, and the directory's in
 * *ret_dir_fd when not NULL; or negative errno. */
int state_lock_open(const char *dir, int *ret_dir_fd);
