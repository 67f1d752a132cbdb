/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "log.h"
#include "meminfo.h"
#include "shared/json-util.h"
#include "state.h"
#include "verbs.h"

static void format_realtime(char *buf, size_t len, usec_t t) {
        time_t sec = (time_t) (t / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&sec, &tm) || strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                snprintf(buf, len, "-");
}

static bool mount_listed_before(const RunRecord *r, size_t i) {
        const RunMount *m = &r->mounts[i];

        for (size_t j = 0; j < i; j++) {
                const RunMount *o = &r->mounts[j];

                if (o->namespace_ino == m->namespace_ino && streq(o->mount_point, m->mount_point) &&
                    streq_ptr(o->fstype, m->fstype) && streq(o->action, m->action) &&
                    streq(o->outcome, m->outcome) && streq_ptr(o->reason, m->reason) &&
                    o->error == m->error && o->abandoned_pid == m->abandoned_pid)
                        return true;
        }
        return false;
}

static int print_record(const Args *a, const RunRecord *r) {
        static const char *const headers[] = { "MOUNT", "ACTION", "OUTCOME", "TIME", "ERROR", "REASON" };
        _cleanup_(table_freep) Table *t = table_new(ELEMENTSOF(headers), headers);
        char when[64], dur[FORMAT_TIMESPAN_MAX];

        if (!t)
                return log_oom();
        format_realtime(when, sizeof when, r->started_realtime);
        printf("Last run: %s, trigger %s, sleep action %s, result %s, took %s\n", when,
               r->trigger ? r->trigger : "-", r->sleep_action ? r->sleep_action : "-", r->result,
               format_timespan(dur, sizeof dur, r->duration));
        if (r->has_complete && !r->complete) {
                printf("Incomplete pass: not every superblock the kernel's own sync writes was reached:\n");
                for (size_t i = 0; i < r->n_incomplete_why; i++)
                        printf("  - %s\n", r->incomplete_why[i]);
        }
        for (size_t i = 0; i < r->n_mounts; i++) {
                const RunMount *m = &r->mounts[i];
                char d[FORMAT_TIMESPAN_MAX], err[64] = "-";
                const char *cells[ELEMENTSOF(headers)];
                _cleanup_free_ char *where = NULL;

                /* A mount of another namespace is named with it, as plan does; a row that would
                 * repeat an earlier one (same mount point and namespace, same result) is left out. */
                if (mount_listed_before(r, i))
                        continue;
                if (m->namespace_ino > 0 &&
                    asprintf(&where, "%s (mnt:[%llu])", m->mount_point, (unsigned long long) m->namespace_ino) < 0)
                        return log_oom();

                if (m->error)
                        snprintf(err, sizeof err, "%s", strerror(m->error));
                else if (m->abandoned_pid)
                        snprintf(err, sizeof err, "worker %d abandoned", m->abandoned_pid);
                cells[0] = where ?: m->mount_point;
                cells[1] = m->action;
                cells[2] = m->outcome;
                cells[3] = streq(m->action, "sync") ? format_timespan(d, sizeof d, m->duration) : "-";
                cells[4] = err;
                cells[5] = m->reason;
                if (table_add_row(t, cells) < 0)
                        return log_oom();
        }
        return table_print(t, stdout, a->legend);
}

/* "now": the global dirty and writeback bytes, null where unknown (mi NULL: no meminfo). */
static int meminfo_to_json(const Meminfo *mi, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        if ((r = mi && mi->has_dirty ? json_add_u64(o, "dirty_bytes", mi->dirty_bytes)
                                     : json_add_null(o, "dirty_bytes")) < 0 ||
            (r = mi && mi->has_writeback ? json_add_u64(o, "writeback_bytes", mi->writeback_bytes)
                                         : json_add_null(o, "writeback_bytes")) < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

/* {"now", "last_run" (null when last is NULL), "history"}: the records as the state module writes
 * them, built from the loaded structs. */
static int status_to_json(const Meminfo *mi, const RunRecord *last, const RunRecord *history, size_t n_history,
                          json_object **ret) {
        _cleanup_json_ json_object *root = json_object_new_object(), *hist = json_object_new_array();
        json_object *o = NULL;
        int r;

        if (!root || !hist)
                return -ENOMEM;
        if ((r = meminfo_to_json(mi, &o)) < 0 || (r = json_add(root, "now", o)) < 0)
                return r;
        o = NULL;
        if (last && ((r = run_record_to_json(last, &o)) < 0 || (r = json_add(root, "last_run", o)) < 0))
                return r;
        if (!last && (r = json_add_null(root, "last_run")) < 0)
                return r;
        for (size_t i = 0; i < n_history; i++)
                if ((r = run_record_to_json(&history[i], &o)) < 0 || (r = json_append(hist, o)) < 0)
                        return r;
        r = json_add(root, "history", TAKE_PTR(hist));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(root);
        return 0;
}

static int print_status_text(const Args *a, const Meminfo *mi, const RunRecord *last, const RunRecord *history,
                             size_t n_history) {
        int r = 0;

        if (mi)
                printf("Dirty: %llu kB, Writeback: %llu kB\n", (unsigned long long) mi->dirty_bytes / 1024,
                       (unsigned long long) mi->writeback_bytes / 1024);
        else
                printf("Dirty: unknown (no meminfo)\n");
        if (last)
                r = print_record(a, last);
        else
                printf("No run recorded in '%s'.\n", a->state_dir);
        if (a->legend && n_history > 0) {
                printf("\nHistory (newest first):\n");
                for (size_t i = 0; i < n_history; i++) {
                        char when[64], dur[FORMAT_TIMESPAN_MAX];
                        format_realtime(when, sizeof when, history[i].started_realtime);
                        printf("  %s  %-7s %-8s %-22s %s\n", when, history[i].result,
                               history[i].trigger ? history[i].trigger : "-",
                               history[i].sleep_action ? history[i].sleep_action : "-",
                               format_timespan(dur, sizeof dur, history[i].duration));
                }
        }
        return r;
}

int verb_status(const Args *a) {
        _cleanup_(run_record_done) RunRecord last = {};
        RunRecord *history = NULL;
        size_t n_history = 0, n_corrupt = 0;
        _cleanup_close_ int root_fd = -EBADF;
        bool has_last = false, has_meminfo;
        Meminfo mi = {};
        int r, r_hist;

        root_fd = open(a->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return log_error_errno(negative_errno(), "Failed to open root directory '%s': %m", a->root);
        has_meminfo = meminfo_load(root_fd, &mi) >= 0;

        r = state_load(a->state_dir, &last, &has_last, NULL, NULL);
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Failed to read the last run from '%s', ignoring: %m", a->state_dir);
        r_hist = state_load_history(a->state_dir, &history, &n_history, &n_corrupt);
        if (r_hist < 0)
                log_warning_errno(r_hist, "Failed to read the history from '%s', ignoring: %m", a->state_dir);
        else if (n_corrupt > 0)
                log_warning("%zu record(s) in '%s/history' could not be read, ignoring them.", n_corrupt,
                            a->state_dir);

        if (a->json != JSON_OFF) {
                _cleanup_json_ json_object *root = NULL;

                r = status_to_json(has_meminfo ? &mi : NULL, has_last ? &last : NULL, history, n_history, &root);
                run_record_array_free(history, n_history);
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0)
                        return log_error_errno(r, "Failed to format the run records: %m");
                return print_json(root, a->json);
        }

        r = print_status_text(a, has_meminfo ? &mi : NULL, has_last ? &last : NULL, history, n_history);
        run_record_array_free(history, n_history);
        return r;
}
