/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * `history`: the persistent sleep-cycle history (history.c) — per mount sync time percentiles and
 * outcome counts, then the cycles newest first; `--json` for all of it. Readable unprivileged.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "history.h"
#include "log.h"
#include "shared/format-util.h"
#include "shared/json-util.h"
#include "verbs.h"

#define HISTORY_SHOW_MAX HISTORY_CYCLES_MAX

static usec_t pass_time(const CycleRecord *c) {
        return (c->has_unit ? c->unit.duration : 0) + (c->has_late ? c->late.duration : 0);
}

static const char *cycle_result(const CycleRecord *c) {
        const char *u = c->has_unit ? c->unit.result : NULL, *l = c->has_late ? c->late.result : NULL;

        if (streq_ptr(u, "error") || streq_ptr(l, "error"))
                return "error";
        if (streq_ptr(u, "timeout") || streq_ptr(l, "timeout"))
                return "timeout";
        return "success";
}

static const char *cycle_action(const CycleRecord *c) {
        SleepCycle v = cycle_record_view(c);

        return sleep_cycle_action(&v) ?: "-";
}

static int stat_to_json(const void *x, json_object *o) {
        const MountStats *s = x;
        int r;

        if ((r = json_add_string(o, "pass", s->pass)) < 0 ||
            (r = json_add_bytes(o, "mount_point", s->mount_point, SIZE_MAX)) < 0 || /* as recorded */
            (s->namespace_ino && (r = json_add_u64(o, "namespace_ino", s->namespace_ino)) < 0) ||
            (r = json_add_u64(o, "cycles", s->n)) < 0 || (r = json_add_u64(o, "p50_usec", s->p50)) < 0 ||
            (r = json_add_u64(o, "p95_usec", s->p95)) < 0 || (r = json_add_u64(o, "max_usec", s->max)) < 0 ||
            (r = json_add_u64(o, "synced", s->n_synced)) < 0 ||
            (r = json_add_u64(o, "timeout", s->n_timeout)) < 0 ||
            (r = json_add_u64(o, "error", s->n_error)) < 0)
                return r;
        return 0;
}

static int cycle_to_json(const void *x, json_object *o) {
        const CycleRecord *c = x;
        int r;

        if ((r = json_add_u64(o, "started_realtime", cycle_record_start(c))) < 0 ||
            (r = json_add_string(o, "boot_id", c->boot_id)) < 0 ||
            (r = json_add_string(o, "sleep_action", cycle_action(c))) < 0 ||
            (r = json_add_u64_or_null(o, "resumed_realtime", c->resumed_realtime, 0)) < 0 ||
            (r = c->has_unit ? json_add_u64(o, "unit_duration_usec", c->unit.duration)
                             : json_add_null(o, "unit_duration_usec")) < 0 ||
            (r = json_add_u64_or_null(o, "unit_eta_usec", c->has_unit ? c->unit.eta : 0, 0)) < 0 ||
            (r = c->has_late ? json_add_u64(o, "late_duration_usec", c->late.duration)
                             : json_add_null(o, "late_duration_usec")) < 0 ||
            (r = json_add_string(o, "result", cycle_result(c))) < 0)
                return r;
        return 0;
}

/* Adds under key an array of n objects, element i filled by fill(base + i * size). */
static int add_array(json_object *root, const char *key, const void *base, size_t n, size_t size,
                     int (*fill)(const void *x, json_object *o)) {
        json_object *a = json_object_new_array();
        int r;

        r = json_add(root, key, a);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                json_object *o = json_object_new_object();

                r = json_append(a, o);
                if (r >= 0)
                        r = fill((const uint8_t *) base + i * size, o);
        }
        return r;
}

static int print_stats(const Args *a, const MountStats *s, size_t n) {
        static const char *const headers[] = { "MOUNT", "PASS",   "CYCLES",  "P50",  "P95",
                                               "MAX",   "SYNCED", "TIMEOUT", "ERROR" };
        _cleanup_(table_freep) Table *t = table_new(ELEMENTSOF(headers), headers);

        if (!t)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                char p50[FORMAT_TIMESPAN_MAX], p95[FORMAT_TIMESPAN_MAX], max[FORMAT_TIMESPAN_MAX], cyc[24],
                        ok[24], to[24], er[24];
                _cleanup_free_ char *where = NULL;
                const char *cells[ELEMENTSOF(headers)];

                if (s[i].namespace_ino && asprintf(&where, "%s (mnt:[%llu])", s[i].mount_point,
                                                   (unsigned long long) s[i].namespace_ino) < 0)
                        return log_oom();
                snprintf(cyc, sizeof cyc, "%zu", s[i].n);
                snprintf(ok, sizeof ok, "%zu", s[i].n_synced);
                snprintf(to, sizeof to, "%zu", s[i].n_timeout);
                snprintf(er, sizeof er, "%zu", s[i].n_error);
                cells[0] = where ?: s[i].mount_point;
                cells[1] = s[i].pass;
                cells[2] = cyc;
                cells[3] = format_timespan(p50, sizeof p50, s[i].p50);
                cells[4] = format_timespan(p95, sizeof p95, s[i].p95);
                cells[5] = format_timespan(max, sizeof max, s[i].max);
                cells[6] = ok;
                cells[7] = to;
                cells[8] = er;
                if (table_add_row(t, cells) < 0)
                        return log_oom();
        }
        return table_print_styled(t, stdout, a->legend, &a->style);
}

static int print_cycles(const Args *a, const CycleRecord *c, size_t n) {
        static const char *const headers[] = { "STARTED",   "ACTION", "UNIT PASS", "ETA",
                                               "LATE PASS", "TOTAL",  "RESULT",    "BOOT" };
        _cleanup_(table_freep) Table *t = table_new(ELEMENTSOF(headers), headers);

        if (!t)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                char when[FORMAT_TIMESTAMP_MAX], u[FORMAT_TIMESPAN_MAX], l[FORMAT_TIMESPAN_MAX],
                        tot[FORMAT_TIMESPAN_MAX], boot[9], eta[FORMAT_TIMESPAN_MAX];
                const char *cells[ELEMENTSOF(headers)];

                format_timestamp(when, sizeof when, cycle_record_start(&c[i]));
                snprintf(boot, sizeof boot, "%.8s", *c[i].boot_id ? c[i].boot_id : "-");
                cells[0] = when;
                cells[1] = cycle_action(&c[i]);
                cells[2] = c[i].has_unit ? format_timespan(u, sizeof u, c[i].unit.duration) : "-";
                cells[3] = c[i].has_unit && c[i].unit.eta ? format_timespan(eta, sizeof eta, c[i].unit.eta)
                                                          : "-";
                cells[4] = c[i].has_late ? format_timespan(l, sizeof l, c[i].late.duration) : "-";
                cells[5] = format_timespan(tot, sizeof tot, pass_time(&c[i]));
                cells[6] = cycle_result(&c[i]);
                cells[7] = boot;
                if (table_add_row(t, cells) < 0)
                        return log_oom();
        }
        return table_print_styled(t, stdout, a->legend, &a->style);
}

int verb_history(const Args *a) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ MountStats *s = NULL;
        CycleRecord *c = NULL;
        size_t n = 0, n_bad = 0, n_s = 0;
        int r;

        fd = open(a->history_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno != ENOENT)
                return log_error_errno(negative_errno(), "Failed to open '%s': %m", a->history_dir);
        if (fd >= 0) {
                r = history_load(fd, HISTORY_SHOW_MAX, &c, &n, &n_bad);
                if (r < 0)
                        return log_error_errno(r, "Failed to read the history in '%s': %m", a->history_dir);
        }
        if (n_bad > 0)
                log_warning("%zu cycle file(s) in '%s/" HISTORY_SUBDIR "' could not be read, ignoring them.",
                            n_bad, a->history_dir);
        r = history_mount_stats(c, n, &s, &n_s);
        if (r < 0) {
                cycle_record_array_free(c, n);
                return log_oom();
        }

        if (a->json != JSON_OFF) {
                _cleanup_json_ json_object *root = json_object_new_object();

                r = root ? add_array(root, "mounts", s, n_s, sizeof(MountStats), stat_to_json) : -ENOMEM;
                if (r >= 0)
                        r = add_array(root, "cycles", c, n, sizeof(CycleRecord), cycle_to_json);
                cycle_record_array_free(c, n);
                return r < 0 ? log_oom() : print_json(root, a->json);
        }
        if (n == 0) {
                printf("No sleep cycle recorded in '%s' yet (it is written after each resume).\n",
                       a->history_dir);
                return 0;
        }
        printf("Sync time per mount over the last %zu sleep cycle(s):\n", n);
        r = print_stats(a, s, n_s);
        if (r >= 0) {
                printf("\nSleep cycles (newest first):\n");
                r = print_cycles(a, c, n);
        }
        cycle_record_array_free(c, n);
        return r;
}
