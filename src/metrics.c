/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "shared/fileio.h"
#include "shared/utf8.h"

/* Outcomes in the order they are written; every one is written, 0 included, so that a series
 * does not vanish from one cycle to the next. */
static const char *const outcomes[] = { "synced", "deferred", "skipped", "timeout", "error" };

static void put_seconds(FILE *f, usec_t u) {
        fprintf(f, "%llu.%06llu", (unsigned long long) (u / USEC_PER_SEC),
                (unsigned long long) (u % USEC_PER_SEC));
}

static void put_label_value(FILE *f, const char *v) {
        const unsigned char *s = (const unsigned char *) (v ? v : "");

        fputc('"', f);
        while (*s) {
                size_t n = utf8_sequence_length((const char *) s, strnlen((const char *) s, 4));

                if (n == 0) {
                        fprintf(f, "\\\\x%02x", *s);
                        s++;
                } else if (*s == '\\' || *s == '"') {
                        fputc('\\', f);
                        fputc(*s++, f);
                } else if (*s == '\n') {
                        fputs("\\n", f);
                        s++;
                } else {
                        fwrite(s, 1, n, f);
                        s += n;
                }
        }
        fputc('"', f);
}

static void put_header(FILE *f, const char *name, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

typedef struct Pass {
        const char *name;
        const RunRecord *r;
} Pass;

/* One gauge per pass of a usec field of the record (offset in RunRecord). */
static void put_pass_seconds(FILE *f, const Pass *p, size_t n, const char *name, const char *help,
                             size_t offset) {
        put_header(f, name, help);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s{pass=\"%s\"} ", name, p[i].name);
                put_seconds(f, *(const usec_t *) ((const uint8_t *) p[i].r + offset));
                fputc('\n', f);
        }
}

static void put_pass_series(FILE *f, const Pass *p, size_t n) {
        put_pass_seconds(f, p, n, "suspend_sync_pass_start_timestamp_seconds",
                         "When the pass of the last sleep cycle started (Unix time).",
                         offsetof(RunRecord, started_realtime));
        put_pass_seconds(f, p, n, "suspend_sync_pass_duration_seconds",
                         "How long the pass of the last sleep cycle took.", offsetof(RunRecord, duration));
        put_pass_seconds(f, p, n, "suspend_sync_pass_deadline_seconds", "The pass's DeadlineSec=.",
                         offsetof(RunRecord, deadline));
        put_header(f, "suspend_sync_pass_success", "1 if the pass ended with result success, else 0.");
        for (size_t i = 0; i < n; i++)
                fprintf(f, "suspend_sync_pass_success{pass=\"%s\"} %d\n", p[i].name,
                        streq(p[i].r->result, "success"));
        put_header(f, "suspend_sync_pass_complete_view",
                   "1 if the pass saw every superblock the kernel's sync writes.");
        for (size_t i = 0; i < n; i++)
                if (p[i].r->has_complete)
                        fprintf(f, "suspend_sync_pass_complete_view{pass=\"%s\"} %d\n", p[i].name,
                                p[i].r->complete);
        put_header(f, "suspend_sync_pass_mounts",
                   "Mounts of the pass by outcome (synced, deferred, skipped, timeout, error).");
        for (size_t i = 0; i < n; i++)
                for (size_t o = 0; o < ELEMENTSOF(outcomes); o++) {
                        size_t k = 0;

                        for (size_t m = 0; m < p[i].r->n_mounts; m++)
                                k += streq(p[i].r->mounts[m].outcome, outcomes[o]);
                        fprintf(f, "suspend_sync_pass_mounts{pass=\"%s\",outcome=\"%s\"} %zu\n", p[i].name,
                                outcomes[o], k);
                }
        /* A record lists its mounts within a byte bound (state.h): those left out are in no series
         * above, and a fleet's sums would silently miss them. */
        put_header(f, "suspend_sync_pass_mounts_omitted",
                   "Mounts of the pass left out of its record (past its size bound), in no other series.");
        for (size_t i = 0; i < n; i++)
                fprintf(f, "suspend_sync_pass_mounts_omitted{pass=\"%s\"} %zu\n", p[i].name,
                        p[i].r->n_mounts_omitted);
}

static void put_mount_series(FILE *f, const Pass *p, size_t n) {
        put_header(f, "suspend_sync_mount_duration_seconds",
                   "How long syncing the mount took in the last sleep cycle (mounts with action sync).");
        for (size_t i = 0; i < n; i++)
                for (size_t m = 0; m < p[i].r->n_mounts; m++) {
                        const RunMount *x = &p[i].r->mounts[m];

                        if (!streq(x->action, "sync"))
                                continue;
                        fprintf(f, "suspend_sync_mount_duration_seconds{pass=\"%s\",mount_point=", p[i].name);
                        put_label_value(f, x->mount_point);
                        fputs(",fstype=", f);
                        put_label_value(f, x->fstype);
                        fputs(",outcome=", f);
                        put_label_value(f, x->outcome);
                        if (x->namespace_ino)
                                fprintf(f, ",namespace=\"mnt:[%llu]\"",
                                        (unsigned long long) x->namespace_ino);
                        fputs("} ", f);
                        put_seconds(f, x->duration);
                        fputc('\n', f);
                }
}

int metrics_format(const SleepCycle *c, size_t n_cycles, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        _cleanup_fclose_ FILE *f = open_memstream(&buf, &size);
        Pass p[2];
        size_t n = 0;

        if (!f)
                return -ENOMEM;
        put_header(f, "suspend_sync_cycles", "Sleep cycles in the recorded history.");
        fprintf(f, "suspend_sync_cycles %zu\n", n_cycles);
        if (c) {
                if (c->unit)
                        p[n++] = (Pass) { "unit", c->unit };
                if (c->late)
                        p[n++] = (Pass) { "late", c->late };
                put_header(f, "suspend_sync_cycle_info", "The last sleep cycle's sleep action, as a label.");
                fputs("suspend_sync_cycle_info{sleep_action=", f);
                put_label_value(f, sleep_cycle_action(c) ? sleep_cycle_action(c) : "unknown");
                fputs("} 1\n", f);
                put_pass_series(f, p, n);
                put_mount_series(f, p, n);
        }
        if (memstream_finish(TAKE_PTR(f), &buf) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}
