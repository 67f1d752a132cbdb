/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/format-util.h"
#include "shared/hexdecoct.h"
#include "shared/json-util.h"
#include "shared/lock-util.h"
#include "shared/macro.h"
#include "shared/sort-util.h"
#include "shared/strv.h"
#include "shared/utf8.h"
#include "state.h"

#define STATE_LAST_FILE "last.json"
#define STATE_HISTORY_DIR "history"
#define STATE_HISTORY_SCAN_MAX 4096U /* directory entries looked at, bounded */
#define STATE_WRITE_BUFFER (64U * 1024U)

/* history array → record → mounts array → mount: 4 levels; leave a little room, no more. */
#define STATE_JSON_DEPTH 8
#define STATE_ERRNO_MAX 4095

/* ---- JSON building ---- */

/* Every string of a record is raw bytes (see state.h): "<key>_hex" when not valid UTF-8. */
static int add_str(json_object *o, const char *key, const char *s) {
        return json_add_bytes(o, key, s, STATE_STRING_MAX);
}

static int get_str(json_object *o, const char *key, JsonFlags flags, char **ret) {
        return json_get_string(o, key, flags | JSON_BYTES, STATE_STRING_MAX, ret);
}

/* A mount's strings with their keys, in the order of its JSON object (both printers). */
typedef struct RunMountString {
        const char *key, *s;
} RunMountString;

static void run_mount_strings(const RunMount *m, RunMountString ret[static 5]) {
        ret[0] = (RunMountString) { "mount_point", m->mount_point };
        ret[1] = (RunMountString) { "fstype", m->fstype };
        ret[2] = (RunMountString) { "action", m->action };
        ret[3] = (RunMountString) { "reason", m->reason };
        ret[4] = (RunMountString) { "outcome", m->outcome };
}

/* What run_mount_to_json() refuses, checked without building anything. */
static int run_mount_check(const RunMount *m) {
        RunMountString strs[5];

        if (!m->mount_point || !m->action || !m->outcome)
                return -EINVAL;
        if (m->error < 0 || m->error > STATE_ERRNO_MAX || m->abandoned_pid < 0)
                return -EINVAL;
        run_mount_strings(m, strs);
        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                if (strs[i].s && strlen(strs[i].s) > STATE_STRING_MAX)
                        return -E2BIG;
        return 0;
}

static int run_mount_to_json(const RunMount *m, json_object **ret) {
        _cleanup_json_ json_object *o = NULL;
        RunMountString strs[5];
        int r;

        r = run_mount_check(m);
        if (r < 0)
                return r;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        run_mount_strings(m, strs);
        for (size_t i = 0; i < ELEMENTSOF(strs); i++) {
                r = add_str(o, strs[i].key, strs[i].s);
                if (r < 0)
                        return r;
        }
        if ((r = json_add_u64(o, "duration_usec", m->duration)) < 0 ||
            (m->start_offset > 0 && (r = json_add_u64(o, "start_offset_usec", m->start_offset)) < 0) ||
            (m->writeback_wait > 0 && (r = json_add_u64(o, "writeback_wait_usec", m->writeback_wait)) < 0) ||
            (r = json_add_int(o, "errno", m->error)) < 0 ||
            (r = json_add_string(o, "errno_name", errno_to_name(m->error))) < 0 ||
            (r = m->abandoned_pid > 0 ? json_add_int(o, "abandoned_pid", m->abandoned_pid)
                                      : json_add_null(o, "abandoned_pid")) < 0 ||
            (m->namespace_ino > 0 && (r = json_add_u64(o, "namespace_ino", m->namespace_ino)) < 0))
                return r;

        *ret = TAKE_PTR(o);
        return 0;
}

/* Whether run_mount_print() can print m: its strings are valid UTF-8. */
static bool run_mount_printable(const RunMount *m) {
        RunMountString strs[5];

        run_mount_strings(m, strs);
        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                if (strs[i].s && !utf8_is_valid_n(strs[i].s, strlen(strs[i].s)))
                        return false;
        return true;
}

/* run_mount_to_json()'s object printed by hand in the format and at the depth of b (JsonBuf): the
 * same members in the same order, so the same bytes as json-c's (test-state-stream), without a
 * json-c object per mount and its printbuf (docs/PERFORMANCE.md). Only for a mount
 * run_mount_printable() passes: a string that is not valid UTF-8 has json_add_bytes()'s lossy text
 * and "_hex" twin, json-c's to print. The mount was checked (run_mount_check()). */
static void run_mount_print(const RunMount *m, JsonBuf *b) {
        RunMountString strs[5];

        run_mount_strings(m, strs);
        json_buf_reset(b);
        json_buf_open(b, b->flags, b->depth);
        for (size_t i = 0; i < ELEMENTSOF(strs); i++) {
                json_buf_key(b, strs[i].key);
                json_buf_string_or_null(b, strs[i].s);
        }
        json_buf_key(b, "duration_usec");
        json_buf_u64(b, m->duration);
        if (m->start_offset > 0) {
                json_buf_key(b, "start_offset_usec");
                json_buf_u64(b, m->start_offset);
        }
        if (m->writeback_wait > 0) {
                json_buf_key(b, "writeback_wait_usec");
                json_buf_u64(b, m->writeback_wait);
        }
        json_buf_key(b, "errno");
        json_buf_int(b, m->error);
        json_buf_key(b, "errno_name");
        json_buf_string_or_null(b, errno_to_name(m->error));
        json_buf_key(b, "abandoned_pid");
        if (m->abandoned_pid > 0)
                json_buf_int(b, m->abandoned_pid);
        else
                json_buf_null(b);
        if (m->namespace_ino > 0) {
                json_buf_key(b, "namespace_ino");
                json_buf_u64(b, m->namespace_ino);
        }
        json_buf_close(b);
}

static int run_record_phases_to_json(const RunRecord *rec, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        if ((r = json_add_u64(o, "read", rec->t_read)) < 0 ||
            (r = json_add_u64(o, "sample", rec->t_sample)) < 0 ||
            (r = json_add_u64(o, "plan", rec->t_plan)) < 0 ||
            (r = json_add_u64(o, "execute", rec->t_execute)) < 0 ||
            (r = json_add_u64(o, "record", rec->t_record)) < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

static int run_record_mounts_to_json(const RunRecord *rec, json_object **ret) {
        _cleanup_json_ json_object *a = json_object_new_array_ext((int) rec->n_mounts);
        int r;

        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < rec->n_mounts; i++) {
                json_object *m = NULL;

                r = run_mount_to_json(rec->mounts + i, &m);
                if (r < 0)
                        return r;
                r = json_append(a, m);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

/* "complete" and "incomplete_why", written only when the pass said (has_complete). The reasons name
 * paths (a hidden superblock's mount point, an nsfs file, a chroot's root): raw bytes, with
 * "incomplete_why_hex" when one is not valid UTF-8 (json_add_bytes_array()). */
static int run_record_complete_to_json(const RunRecord *rec, json_object *o) {
        int r;

        if (!rec->has_complete)
                return 0;
        if (rec->n_incomplete_why > STATE_REASONS_MAX)
                return -E2BIG;
        for (size_t i = 0; i < rec->n_incomplete_why; i++)
                if (!rec->incomplete_why[i] || strlen(rec->incomplete_why[i]) > STATE_STRING_MAX)
                        return -EINVAL;
        r = json_add_bool(o, "complete", rec->complete);
        if (r < 0)
                return r;
        return json_add_bytes_array(o, "incomplete_why", rec->incomplete_why, rec->n_incomplete_why,
                                    STATE_STRING_MAX);
}

/* The record's tree; with stream, "mounts" holds n_stream json_stream_array_new() placeholders that
 * run_record_write_json() fills, and "mounts_omitted" says how many of the pass's are not among
 * them (omitted: those run_record_select() left out, plus the record's own count). */
static int run_record_build_json(const RunRecord *rec, bool stream, size_t n_stream, size_t omitted,
                                 json_object **ret) {
        _cleanup_json_ json_object *o = NULL;
        json_object *phases = NULL, *mounts = NULL;
        int r;

        if (!rec || !rec->result)
                return -EINVAL;
        if ((stream ? n_stream : rec->n_mounts) > STATE_MAX_MOUNTS)
                return -E2BIG;
        if (!stream)
                omitted = rec->n_mounts_omitted;
        if (rec->n_mounts > 0 && !rec->mounts)
                return -EINVAL;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        if (rec->pid < 0)
                return -EINVAL;
        if ((r = json_add_u64(o, "started_realtime_usec", rec->started_realtime)) < 0 ||
            (rec->started_boottime > 0 &&
             (r = json_add_u64(o, "started_boottime_usec", rec->started_boottime)) < 0) ||
            (rec->started_boottime > 0 && rec->started_suspended != USEC_INFINITY &&
             (r = json_add_u64(o, "started_suspended_usec", rec->started_suspended)) < 0) ||
            (rec->pid > 0 && (r = json_add_int(o, "pid", rec->pid)) < 0) ||
            (rec->boot_id[0] && (r = json_add_string(o, "boot_id", rec->boot_id)) < 0) ||
            (rec->suspend_counts_known &&
             ((r = json_add_u64(o, "suspend_success", rec->suspend_success)) < 0 ||
              (r = json_add_u64(o, "suspend_fail", rec->suspend_fail)) < 0)) ||
            (r = json_add_u64(o, "duration_usec", rec->duration)) < 0 ||
            (r = add_str(o, "result", rec->result)) < 0 || (r = add_str(o, "trigger", rec->trigger)) < 0 ||
            (r = add_str(o, "sleep_action", rec->sleep_action)) < 0 ||
            (r = json_add_u64(o, "deadline_usec", rec->deadline)) < 0 ||
            (rec->eta > 0 && (r = json_add_u64(o, "eta_usec", rec->eta)) < 0) ||
            (r = run_record_phases_to_json(rec, &phases)) < 0 ||
            (rec->flushers_woken > 0 &&
             (r = json_add_u64(o, "flushers_woken_usec", rec->flushers_woken)) < 0) ||
            (rec->late_left_out &&
             ((r = json_add_bool(o, "late_left_out", true)) < 0 ||
              (r = json_add_u64(o, "kernel_sync_estimate_usec", rec->kernel_sync_estimate)) < 0)) ||
            (r = json_add(o, "phases_usec", phases)) < 0 ||
            (r = stream ? json_stream_array_new(n_stream, &mounts)
                        : run_record_mounts_to_json(rec, &mounts)) < 0 ||
            (r = json_add(o, "mounts", mounts)) < 0 ||
            (omitted > 0 && (r = json_add_u64(o, "mounts_omitted", omitted)) < 0) ||
            (r = run_record_complete_to_json(rec, o)) < 0)
                return r;

        *ret = TAKE_PTR(o);
        return 0;
}

int run_record_to_json(const RunRecord *rec, json_object **ret) {
        return run_record_build_json(rec, false, 0, 0, ret);
}

int run_record_to_json_string(const RunRecord *r, bool pretty, char **ret) {
        _cleanup_json_ json_object *o = NULL;
        int k;

        k = run_record_to_json(r, &o);
        if (k < 0)
                return k;
        return json_to_string_dup(o, pretty ? JSON_FORMAT_PRETTY : JSON_FORMAT_SHORT, ret);
}

/* At least the bytes s takes as a value in a record (json_add_bytes()): escaped by json-c (a control
 * character as \u00XX, a quote, backslash or slash with a backslash), each byte of an invalid UTF-8
 * sequence as U+FFFD, and then "<key>_hex" too. fast: 8 bytes a byte, the most any byte takes. */
static size_t json_bytes_bound(const char *s, bool fast) {
        size_t n = 0, len;

        if (!s)
                return 0;
        len = strlen(s);
        if (fast)
                return 8 * len;
        for (const unsigned char *c = (const unsigned char *) s; *c; c++)
                n += *c < 0x20 || *c == 0x7f                ? 6
                     : *c == '"' || *c == '\\' || *c == '/' ? 2
                     : *c >= 0x80                           ? 3
                                                            : 1;
        return utf8_is_valid_n(s, len) ? n : n + 2 * len;
}

/* More than the bytes m takes in either text of a record (STATE_MOUNTS_BYTES_MAX): its strings,
 * each with its key (and a hex twin's), and 512 for the rest (keys, numbers, indentation). fast:
 * without looking at each byte (every record of a machine with a few thousand ordinary mounts fits
 * that way). */
static size_t run_mount_bytes_bound(const RunMount *m, bool fast) {
        RunMountString strs[5];
        size_t n = 512;

        run_mount_strings(m, strs);
        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                n += 64 + json_bytes_bound(strs[i].s, fast);
        return n;
}

/* More than the bytes of a record without its mounts: its strings (reasons, result, trigger, sleep
 * action) at 8 bytes a byte, and 4096 for the rest. */
static size_t run_record_rest_bound(const RunRecord *rec) {
        const char *const strs[] = { rec->result, rec->trigger, rec->sleep_action };
        size_t n = 4096;

        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                n += 64 + json_bytes_bound(strs[i], true);
        for (size_t i = 0; i < rec->n_incomplete_why; i++)
                n += 64 + json_bytes_bound(rec->incomplete_why[i], true);
        return n;
}

/* Which mounts a record of at most max bytes lists (*ret_include, NULL when all, which is the rule):
 * within what the rest of the record leaves of max (at most STATE_MOUNTS_BYTES_MAX), and within
 * STATE_MAX_MOUNTS: those synced or tried first, of our own mount namespace, then of others, then
 * the skipped ones in the same order, other namespaces' within STATE_OTHER_NS_BYTES_MAX, each in
 * order; a mount with a string over STATE_STRING_MAX never. -EINVAL for a mount that lacks what
 * every mount has (checked before anything else is looked at: review AN, AN-4). */
static int run_record_select(const RunRecord *rec, size_t max, bool **ret_include, size_t *ret_n) {
        _cleanup_free_ bool *include = NULL;
        size_t total = 0, other = 0, n = 0, rest = run_record_rest_bound(rec), budget;
        bool all = rec->n_mounts <= STATE_MAX_MOUNTS;
        int r;

        budget = MIN(max > rest ? max - rest : 0, (size_t) STATE_MOUNTS_BYTES_MAX);
        for (size_t i = 0; i < rec->n_mounts && all; i++) {
                const RunMount *m = rec->mounts + i;
                size_t b;

                r = run_mount_check(m);
                if (r == -E2BIG) {
                        all = false;
                        break;
                }
                if (r < 0)
                        return r;
                b = run_mount_bytes_bound(m, true);
                total += b;
                if (m->namespace_ino != 0)
                        other += b;
                all = total <= budget && other <= STATE_OTHER_NS_BYTES_MAX;
        }
        if (all) {
                *ret_include = NULL;
                *ret_n = rec->n_mounts;
                return 0;
        }

        include = calloc(MAX(rec->n_mounts, (size_t) 1), sizeof(bool));
        if (!include)
                return -ENOMEM;
        total = other = 0;
        for (int round = 0; round <= 3; round++)
                for (size_t i = 0; i < rec->n_mounts; i++) {
                        const RunMount *m = rec->mounts + i;
                        int want;
                        size_t b;

                        r = run_mount_check(m);
                        if (r == -E2BIG)
                                continue;
                        if (r < 0)
                                return r;
                        /* synced or tried (ours, then other namespaces'), then skipped (the same) */
                        want = streq(m->action, "skip") * 2 + (m->namespace_ino != 0);
                        if (want != round)
                                continue;
                        b = run_mount_bytes_bound(m, false);
                        if (n >= STATE_MAX_MOUNTS || b > budget - total ||
                            (round % 2 == 1 && b > STATE_OTHER_NS_BYTES_MAX - other))
                                continue;
                        include[i] = true;
                        total += b;
                        other += round % 2 == 1 ? b : 0;
                        n++;
                }
        *ret_include = TAKE_PTR(include);
        *ret_n = n;
        return 0;
}

static void run_mount_done(RunMount *m);

int run_record_trim(RunRecord *rec, size_t max) {
        _cleanup_free_ bool *include = NULL;
        size_t n, k = 0;
        int r;

        if (!rec || (rec->n_mounts > 0 && !rec->mounts))
                return -EINVAL;
        r = run_record_select(rec, max, &include, &n);
        if (r < 0 || !include)
                return r;
        for (size_t i = 0; i < rec->n_mounts; i++) {
                if (!include[i]) {
                        run_mount_done(rec->mounts + i);
                        continue;
                }
                rec->mounts[k++] = rec->mounts[i];
        }
        rec->n_mounts_omitted += rec->n_mounts - k;
        rec->n_mounts = k;
        return 0;
}

/* The record's tree with placeholders for the mounts it lists (*ret_include, as
 * run_record_select()), every mount checked: what can be refused is refused before a byte is
 * written. */
static int record_stream_prepare(const RunRecord *rec, json_object **ret, bool **ret_include) {
        _cleanup_free_ bool *include = NULL;
        size_t n;
        int r;

        if (!rec || (rec->n_mounts > 0 && !rec->mounts))
                return -EINVAL;
        r = run_record_select(rec, STATE_FILE_MAX, &include, &n);
        if (r < 0)
                return r;
        r = run_record_build_json(rec, true, n, rec->n_mounts_omitted + (rec->n_mounts - n), ret);
        if (r < 0)
                return r;
        *ret_include = TAKE_PTR(include);
        return 0;
}

/* The depth of the stream's mounts (none: no stream) for b. */
static int stream_depth(const JsonStream *s, JsonBuf *b) {
        int r = s ? json_stream_depth(s) : 0;

        if (r >= 0)
                b->depth = (unsigned) r;
        return r;
}

static int record_stream_write(const RunRecord *rec, json_object *o, const bool *include, FILE *pretty,
                               FILE *shortform, uint64_t *ret_pretty_size) {
        _cleanup_(json_stream_freep) JsonStream *sp = NULL, *ss = NULL;
        _cleanup_(json_buf_done) JsonBuf bp = { .flags = JSON_FORMAT_PRETTY },
                                         bs = { .flags = JSON_FORMAT_SHORT };
        uint64_t size = 0;
        int r;

        if ((pretty && (r = json_stream_begin(o, JSON_FORMAT_PRETTY, pretty, &sp)) < 0) ||
            (shortform && (r = json_stream_begin(o, JSON_FORMAT_SHORT, shortform, &ss)) < 0))
                return r;
        /* One mount's object at a time, printed to both at their depth: by hand, or by json-c (a
         * string that is not valid UTF-8). */
        if (rec->n_mounts > 0 && ((r = stream_depth(sp, &bp)) < 0 || (r = stream_depth(ss, &bs)) < 0))
                return r;
        for (size_t i = 0; i < rec->n_mounts; i++) {
                const RunMount *mount = rec->mounts + i;
                _cleanup_json_ json_object *m = NULL;

                if (include && !include[i])
                        continue;
                if (run_mount_printable(mount)) {
                        if (sp)
                                run_mount_print(mount, &bp);
                        if (ss)
                                run_mount_print(mount, &bs);
                        if (bp.error < 0 || bs.error < 0)
                                return -ENOMEM;
                        if ((sp && (r = json_stream_text(sp, bp.text, bp.len)) < 0) ||
                            (ss && (r = json_stream_text(ss, bs.text, bs.len)) < 0))
                                return r;
                        continue;
                }
                if ((r = run_mount_to_json(mount, &m)) < 0 || (sp && (r = json_stream_element(sp, m)) < 0) ||
                    (ss && (r = json_stream_element(ss, m)) < 0))
                        return r;
        }
        if ((sp &&
             ((r = json_stream_end(sp, &size)) < 0 || (r = fputc('\n', pretty) == EOF ? -EIO : 0) < 0)) ||
            (ss &&
             ((r = json_stream_end(ss, NULL)) < 0 || (r = fputc('\n', shortform) == EOF ? -EIO : 0) < 0)))
                return r;
        if (ret_pretty_size)
                *ret_pretty_size = size + 1;
        return 0;
}

int run_record_write_json(const RunRecord *rec, FILE *pretty, FILE *shortform, uint64_t *ret_pretty_size) {
        _cleanup_json_ json_object *o = NULL;
        _cleanup_free_ bool *include = NULL;
        int r;

        r = record_stream_prepare(rec, &o, &include);
        if (r < 0)
                return r;
        return record_stream_write(rec, o, include, pretty, shortform, ret_pretty_size);
}

/* ---- JSON parsing ---- */

static void run_mount_done(RunMount *m) {
        free(m->mount_point);
        free(m->fstype);
        free(m->action);
        free(m->reason);
        free(m->outcome);
        *m = (RunMount) {};
}

static int run_mount_from_json(json_object *o, RunMount *ret) {
        _cleanup_(run_mount_done) RunMount m = {};
        json_object *v;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;
        if ((r = get_str(o, "mount_point", JSON_MANDATORY, &m.mount_point)) < 0 ||
            (r = get_str(o, "fstype", JSON_OPTIONAL, &m.fstype)) < 0 ||
            (r = get_str(o, "action", JSON_MANDATORY, &m.action)) < 0 ||
            (r = get_str(o, "reason", JSON_OPTIONAL, &m.reason)) < 0 ||
            (r = get_str(o, "outcome", JSON_MANDATORY, &m.outcome)) < 0 ||
            (r = json_get_u64(o, "duration_usec", JSON_OPTIONAL, 0, &m.duration)) < 0 ||
            (r = json_get_u64(o, "start_offset_usec", JSON_OPTIONAL, 0, &m.start_offset)) < 0 ||
            (r = json_get_u64(o, "writeback_wait_usec", JSON_OPTIONAL, 0, &m.writeback_wait)) < 0 ||
            (r = json_get_int(o, "errno", JSON_OPTIONAL, STATE_ERRNO_MAX, 0, &m.error)) < 0 ||
            (r = json_get_int(o, "abandoned_pid", JSON_OPTIONAL, INT_MAX, 0, &m.abandoned_pid)) < 0 ||
            (r = json_get_u64(o, "namespace_ino", JSON_OPTIONAL, 0, &m.namespace_ino)) < 0)
                return r;

        /* Derived from errno on output; only its type is checked. */
        v = json_get(o, "errno_name");
        if (v && !json_object_is_type(v, json_type_string))
                return -EBADMSG;

        *ret = m;
        m = (RunMount) {};
        return 0;
}

int run_record_from_json(json_object *o, RunRecord *ret) {
        _cleanup_(run_record_done) RunRecord rec = {};
        _cleanup_free_ char *boot_id = NULL;
        json_object *phases = NULL, *mounts = NULL;
        uint64_t omitted = 0;
        int pid = 0, r;

        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;
        if ((r = json_get_u64(o, "started_realtime_usec", JSON_MANDATORY, 0, &rec.started_realtime)) < 0 ||
            (r = json_get_u64(o, "started_boottime_usec", JSON_OPTIONAL, 0, &rec.started_boottime)) < 0 ||
            (r = json_get_u64(o, "started_suspended_usec", JSON_OPTIONAL, USEC_INFINITY,
                              &rec.started_suspended)) < 0 ||
            (r = json_get_int(o, "pid", JSON_OPTIONAL, INT_MAX, 0, &pid)) < 0 ||
            (r = get_str(o, "boot_id", JSON_OPTIONAL, &boot_id)) < 0 ||
            (r = json_get_u64(o, "suspend_success", JSON_OPTIONAL, UINT64_MAX, &rec.suspend_success)) < 0 ||
            (r = json_get_u64(o, "suspend_fail", JSON_OPTIONAL, UINT64_MAX, &rec.suspend_fail)) < 0 ||
            (r = json_get_u64(o, "duration_usec", JSON_OPTIONAL, 0, &rec.duration)) < 0 ||
            (r = get_str(o, "result", JSON_MANDATORY, &rec.result)) < 0 ||
            (r = get_str(o, "trigger", JSON_OPTIONAL, &rec.trigger)) < 0 ||
            (r = get_str(o, "sleep_action", JSON_OPTIONAL, &rec.sleep_action)) < 0 ||
            (r = json_get_u64(o, "deadline_usec", JSON_OPTIONAL, 0, &rec.deadline)) < 0 ||
            (r = json_get_u64(o, "eta_usec", JSON_OPTIONAL, 0, &rec.eta)) < 0 ||
            (r = json_get_u64(o, "flushers_woken_usec", JSON_OPTIONAL, 0, &rec.flushers_woken)) < 0 ||
            (r = json_get_bool(o, "late_left_out", JSON_OPTIONAL, false, &rec.late_left_out)) < 0 ||
            (r = json_get_u64(o, "kernel_sync_estimate_usec", JSON_OPTIONAL, 0, &rec.kernel_sync_estimate)) <
                    0 ||
            (r = json_get_object(o, "phases_usec", JSON_OPTIONAL, &phases)) < 0 ||
            (r = json_get_u64(o, "mounts_omitted", JSON_OPTIONAL, 0, &omitted)) < 0)
                return r;
        if (omitted > SIZE_MAX / 2)
                return -EBADMSG;
        rec.n_mounts_omitted = (size_t) omitted;
        rec.pid = pid;
        rec.suspend_counts_known = rec.suspend_success != UINT64_MAX && rec.suspend_fail != UINT64_MAX;
        /* not this form: not known (the wall clock pairs it with a resume, as before the key) */
        if (id128_string_valid(boot_id))
                memcpy(rec.boot_id, boot_id, sizeof rec.boot_id);
        /* A missing phases_usec reads as an empty object: every phase 0. */
        if ((r = json_get_u64(phases, "read", JSON_OPTIONAL, 0, &rec.t_read)) < 0 ||
            (r = json_get_u64(phases, "sample", JSON_OPTIONAL, 0, &rec.t_sample)) < 0 ||
            (r = json_get_u64(phases, "plan", JSON_OPTIONAL, 0, &rec.t_plan)) < 0 ||
            (r = json_get_u64(phases, "execute", JSON_OPTIONAL, 0, &rec.t_execute)) < 0 ||
            (r = json_get_u64(phases, "record", JSON_OPTIONAL, 0, &rec.t_record)) < 0)
                return r;

        r = json_get_bool(o, "complete", JSON_OPTIONAL, false, &rec.complete);
        if (r < 0)
                return r;
        rec.has_complete = r > 0;
        r = json_get_string_array(o, "incomplete_why", JSON_OPTIONAL | JSON_BYTES, STATE_REASONS_MAX,
                                  STATE_STRING_MAX, &rec.incomplete_why, &rec.n_incomplete_why);
        if (r < 0)
                return r;

        r = json_get_array(o, "mounts", JSON_OPTIONAL, STATE_MAX_MOUNTS, &mounts);
        if (r < 0)
                return r;
        if (mounts && json_object_array_length(mounts) > 0) {
                rec.mounts = calloc(json_object_array_length(mounts), sizeof(RunMount));
                if (!rec.mounts)
                        return -ENOMEM;
        }
        for (size_t i = 0; mounts && i < json_object_array_length(mounts); i++) {
                r = run_mount_from_json(json_object_array_get_idx(mounts, i), rec.mounts + i);
                if (r < 0)
                        return r;
                rec.n_mounts++;
        }

        *ret = rec;
        rec = (RunRecord) {};
        return 0;
}

int run_record_from_json_string(const char *text, RunRecord *ret) {
        _cleanup_json_ json_object *o = NULL;
        int r;

        if (!text)
                return -EINVAL;
        r = json_parse_strict(text, strnlen(text, (size_t) STATE_FILE_MAX + 1), STATE_FILE_MAX,
                              STATE_JSON_DEPTH, &o);
        if (r < 0)
                return r;
        return run_record_from_json(o, ret);
}

void run_record_done(RunRecord *r) {
        if (!r)
                return;
        free(r->result);
        free(r->trigger);
        free(r->sleep_action);
        for (size_t i = 0; i < r->n_mounts; i++)
                run_mount_done(r->mounts + i);
        free(r->mounts);
        for (size_t i = 0; i < r->n_incomplete_why; i++)
                free(r->incomplete_why[i]);
        free(r->incomplete_why);
        *r = (RunRecord) {};
}

void run_record_array_free(RunRecord *a, size_t n) {
        if (!a)
                return;
        for (size_t i = 0; i < n; i++)
                run_record_done(a + i);
        free(a);
}

/* ---- history ----
 *
 * One file per run in history/, named "<started_realtime_usec, 20 digits>-<pid>.json" so that names
 * sort by age. A run writes its own file and removes the oldest beyond STATE_HISTORY_MAX; it never
 * reads or rewrites the others (at 1000 mounts a record is ~200 kB: parsing and rewriting 16 of
 * them cost a run 100 ms and 40 MiB). A file that does not parse is skipped on load and counted. */

static bool history_name_valid(const char *n) {
        size_t pid_len;

        /* <20 digits>-<digits>.json */
        if (strspn(n, "0123456789") != 20 || n[20] != '-')
                return false;
        pid_len = strspn(n + 21, "0123456789");
        return pid_len > 0 && pid_len <= 10 && streq(n + 21 + pid_len, ".json");
}

static int cmp_name_desc(char *const *a, char *const *b) {
        return -strcmp(*a, *b);
}

/* History file names (a strv), newest first. */
static int history_list(int dir_fd, char ***ret, size_t *ret_n) {
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;
        size_t n = 0;
        int r;

        fd = openat(dir_fd, STATE_HISTORY_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                if (errno != ENOENT)
                        return negative_errno();
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        d = fdopendir(fd);
        if (!d)
                return negative_errno();
        TAKE_FD(fd);
        while (n < STATE_HISTORY_SCAN_MAX && (de = readdir(d))) {
                if (!history_name_valid(de->d_name))
                        continue;
                r = strv_extend(&names, &n, de->d_name);
                if (r < 0)
                        return r;
        }
        typesafe_qsort(names, n, cmp_name_desc);
        *ret = TAKE_PTR(names);
        *ret_n = n;
        return 0;
}

int state_load_history(const char *dir, RunRecord **ret, size_t *ret_n, size_t *ret_n_corrupt,
                       size_t *ret_n_nomem) {
        _cleanup_close_ int dir_fd = -EBADF, hist_fd = -EBADF;
        _cleanup_strv_free_ char **names = NULL;
        RunRecord *records = NULL;
        size_t n_names = 0, n = 0, n_corrupt = 0, n_nomem = 0;
        int r;

        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0 && errno != ENOENT)
                return negative_errno();
        if (dir_fd >= 0) {
                r = history_list(dir_fd, &names, &n_names);
                if (r < 0)
                        return r;
        }
        if (n_names > 0) {
                hist_fd = openat(dir_fd, STATE_HISTORY_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (hist_fd < 0)
                        return negative_errno();
                records = calloc(MIN(n_names, (size_t) STATE_HISTORY_MAX), sizeof(RunRecord));
                if (!records)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n_names && n < STATE_HISTORY_MAX; i++) {
                _cleanup_free_ char *text = NULL;
                size_t size = 0;

                r = read_full_file_at_flags(hist_fd, names[i], STATE_FILE_MAX, READ_FULL_STATE, &text, &size);
                if (r == -ENOMEM) {
                        run_record_array_free(records, n);
                        return r;
                }
                if (r >= 0 && !memchr(text, 0, size))
                        r = run_record_from_json_string(text, records + n);
                else if (r >= 0)
                        r = -EBADMSG;
                if (r < 0) {
                        /* skipped all the same; memory is not corruption (review AS, AS-5) */
                        if (r == -ENOMEM)
                                n_nomem++;
                        else
                                n_corrupt++;
                        continue;
                }
                n++;
        }
        if (n == 0)
                records = mfree(records);
        *ret = records;
        *ret_n = n;
        if (ret_n_corrupt)
                *ret_n_corrupt = n_corrupt;
        if (ret_n_nomem)
                *ret_n_nomem = n_nomem;
        return 0;
}

/* Moves this run's history file (tmp, in dir_fd) into place as name and drops the oldest beyond
 * STATE_HISTORY_MAX. */
static int history_append(int dir_fd, const char *tmp, const char *name) {
        _cleanup_close_ int hist_fd = -EBADF;
        _cleanup_strv_free_ char **names = NULL;
        size_t n = 0;
        int k;

        k = mkdirat_public(dir_fd, STATE_HISTORY_DIR);
        if (k < 0)
                return k;
        hist_fd = openat(dir_fd, STATE_HISTORY_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (hist_fd < 0)
                return negative_errno();
        if (renameat(dir_fd, tmp, hist_fd, name) < 0)
                return negative_errno();

        k = history_list(dir_fd, &names, &n);
        if (k < 0)
                return k;
        for (size_t i = STATE_HISTORY_MAX; i < n; i++)
                (void) unlinkat(hist_fd, names[i], 0);
        return 0;
}

/* ---- directory ---- */

int state_dir_open(const char *dir) {
        int r, fd;

        r = mkdir_p_public(dir);
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return fd;
}


/* A new temporary file in dir_fd (PUBLIC_FILE_MODE whatever the umask) as a stream with buf
 * (STATE_WRITE_BUFFER bytes, to outlive the stream; glibc's own would be 4 KiB): a 1000-mount record
 * goes out in a few writes. */
static int tmp_open(int dir_fd, const char *name, char *buf, FILE **ret) {
        _cleanup_close_ int fd = -EBADF;
        FILE *f;

        fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, PUBLIC_FILE_MODE);
        if (fd < 0)
                return negative_errno();
        if (fchmod(fd, PUBLIC_FILE_MODE) < 0 || !(f = fdopen(fd, "w"))) {
                int r = negative_errno();

                (void) unlinkat(dir_fd, name, 0);
                return r;
        }
        TAKE_FD(fd);
        (void) setvbuf(f, buf, _IOFBF, STATE_WRITE_BUFFER);
        *ret = f;
        return 0;
}

/* Closes f (NULL: nothing); the first error of the stream or of its close. */
static int tmp_close(FILE *f) {
        int r = 0;

        if (!f)
                return 0;
        if (fflush(f) != 0 || ferror(f))
                r = errno > 0 ? -errno : -EIO;
        if (fclose(f) != 0 && r == 0)
                r = errno > 0 ? -errno : -EIO;
        return r;
}

/* Both files of a run streamed to temporary files in dir_fd (the record's tree is never held
 * whole: at 1000 mounts it was 1.7 MiB, its two texts another 1 MiB), then renamed into place. */
static int state_write(int dir_fd, const RunRecord *r, json_object *o, const bool *include) {
        _cleanup_free_ char *buf_last = malloc(STATE_WRITE_BUFFER), *buf_hist = malloc(STATE_WRITE_BUFFER);
        char tmp_last[64], tmp_hist[64], name[64];
        FILE *last = NULL, *hist = NULL;
        uint64_t size = 0;
        int k, k2;

        snprintf(tmp_last, sizeof tmp_last, STATE_LAST_FILE ".tmp.%d", (int) getpid());
        snprintf(name, sizeof name, "%020llu-%d.json", (unsigned long long) r->started_realtime,
                 (int) getpid());
        snprintf(tmp_hist, sizeof tmp_hist, "history.tmp.%d", (int) getpid());

        if (!buf_last || !buf_hist)
                return -ENOMEM;
        k = tmp_open(dir_fd, tmp_last, buf_last, &last);
        if (k >= 0)
                k = tmp_open(dir_fd, tmp_hist, buf_hist, &hist);
        if (k >= 0)
                k = record_stream_write(r, o, include, last, hist, &size);
        k2 = tmp_close(last);
        k = k < 0 ? k : k2;
        k2 = tmp_close(hist);
        k = k < 0 ? k : k2;
        if (k >= 0 && size > STATE_FILE_MAX)
                k = -EFBIG;
        if (k >= 0 && renameat(dir_fd, tmp_last, dir_fd, STATE_LAST_FILE) < 0)
                k = negative_errno();
        if (k >= 0)
                k = history_append(dir_fd, tmp_hist, name);
        (void) unlinkat(dir_fd, tmp_last, 0);
        (void) unlinkat(dir_fd, tmp_hist, 0);
        return k;
}

int state_save(const char *dir, const RunRecord *r) {
        _cleanup_json_ json_object *o = NULL;
        _cleanup_free_ bool *include = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        int k;

        if (!dir || dir[0] != '/')
                return -EINVAL;

        /* Check first: a bad record touches nothing. */
        k = record_stream_prepare(r, &o, &include);
        if (k < 0)
                return k;

        dir_fd = state_dir_open(dir);
        if (dir_fd < 0)
                return dir_fd;
        return state_write(dir_fd, r, o, include);
}

int state_load(const char *dir, RunRecord *ret_last, bool *ret_has_last, RunRecord **ret_history,
               size_t *ret_n_history) {
        _cleanup_(run_record_done) RunRecord last = {};
        _cleanup_close_ int dir_fd = -EBADF;
        bool want_last = ret_last || ret_has_last, want_history = ret_history || ret_n_history;
        bool has_last = false;
        RunRecord *h = NULL;
        size_t n = 0;
        int r;

        if (!dir)
                return -EINVAL;

        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0 && errno != ENOENT)
                return negative_errno();

        /* A missing directory: never run. */
        if (want_last && dir_fd >= 0) {
                _cleanup_free_ char *text = NULL;
                size_t size = 0;

                r = read_full_file_at_flags(dir_fd, STATE_LAST_FILE, STATE_FILE_MAX, READ_FULL_STATE, &text,
                                            &size);
                if (r >= 0) {
                        if (memchr(text, 0, size))
                                return -EBADMSG;
                        r = run_record_from_json_string(text, &last);
                        if (r < 0)
                                return r;
                        has_last = true;
                } else if (r != -ENOENT)
                        return r;
        }

        if (want_history) {
                r = state_load_history(dir, &h, &n, NULL, NULL);
                if (r < 0)
                        return r;
        }

        if (ret_last) {
                *ret_last = last;
                last = (RunRecord) {};
        }
        if (ret_has_last)
                *ret_has_last = has_last;
        if (ret_history)
                *ret_history = h;
        else
                run_record_array_free(h, n);
        if (ret_n_history)
                *ret_n_history = n;
        return 0;
}

int state_dir_check(const char *dir, bool *ret_is_tmpfs) {
        _cleanup_free_ char *path = NULL;
        struct statfs sfs;

        if (!dir || dir[0] != '/')
                return -EINVAL;
        path = strdup(dir);
        if (!path)
                return -ENOMEM;

        /* Walk up to the nearest existing ancestor: that is where the directory would be made. */
        while (statfs(path, &sfs) < 0) {
                char *slash;

                if (errno != ENOENT)
                        return negative_errno();
                slash = strrchr(path, '/');
                if (!slash || slash == path) {
                        if (statfs("/", &sfs) < 0)
                                return negative_errno();
                        break;
                }
                *slash = 0;
        }

        *ret_is_tmpfs = (unsigned long) sfs.f_type == (unsigned long) TMPFS_MAGIC ||
                        (unsigned long) sfs.f_type == (unsigned long) RAMFS_MAGIC;
        return 0;
}

int state_lock_open(const char *dir, int *ret_dir_fd) {
        _cleanup_close_ int dir_fd = state_dir_open(dir);
        int fd;

        if (dir_fd < 0)
                return dir_fd;
        fd = openat(dir_fd, STATE_LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
        if (fd < 0)
                return negative_errno();
        if (ret_dir_fd)
                *ret_dir_fd = TAKE_FD(dir_fd);
        return fd;
}

int state_lock_wait(const char *dir, usec_t until, int *ret_fd) {
        _cleanup_close_ int fd = state_lock_open(dir, NULL);
        int r;

        if (fd < 0)
                return fd;
        r = flock_until(fd, until, STATE_LOCK_POLL_USEC);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int state_lock(const char *dir, int *ret_fd) {
        return state_lock_wait(dir, 0, ret_fd);
}
