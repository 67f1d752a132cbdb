/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-decision: times the in-process decision pieces of suspend-sync one by one, in one process
 * (no fork/exec, no dynamic loading), so the per-phase cost can be attributed:
 *   read-text    read proc/self/mountinfo into memory (kernel text generation + copy)
 *   parse        mount_table_parse() on that text (libmount)
 *   table-mi     mount_table_load_backend(mountinfo): read-text + parse
 *   table-lm     mount_table_load_backend(listmount): listmount + one statmount per mount
 *   meminfo      meminfo_load()
 *   sample-nons  sample_load() without the other-namespace scan
 *   sample       sample_load() as the verbs call it (namespace scan on)
 *   plan         plan_build() with the default policy
 * The sample and plan phases run once per backend ("-mi", "-lm" suffixes).
 * usage: bench-decision [ITERATIONS] [ROOT] [SYSFS] [DEBUGFS] [both|mountinfo|listmount]; prints
 * "name median_usec min_usec", then the peak RSS of this process. Test tool: prints to stdout.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "meminfo.h"
#include "mount-table.h"
#include "plan.h"
#include "policy.h"
#include "sample.h"
#include "shared/fileio.h"
#include "shared/time-util.h"

#define MAX_ITER 1000

static int cmp_u64(const void *a, const void *b) {
        const usec_t *x = a, *y = b;
        return *x < *y ? -1 : *x > *y;
}

static void report(const char *name, usec_t *t, unsigned n) {
        qsort(t, n, sizeof(usec_t), cmp_u64);
        printf("%-14s %8llu %8llu\n", name, (unsigned long long) t[n / 2], (unsigned long long) t[0]);
}

#define N_PHASES 13

static const char *const names[N_PHASES] = {
        "read-text", "parse", "table-mi", "table-lm", "meminfo",
        "sample-nons-mi", "sample-mi", "plan-mi", "sample-nons-lm", "sample-lm", "plan-lm",
        "decision-mi", "decision-lm",
};

/* sample (namespace scan off, then on) and plan through one backend into t[first..first+2]; the
 * whole read+sample+plan (scan on) into t[total]. */
static int sample_and_plan(int root_fd, const char *sysfs, int debugfs_fd, MountTableBackend b, const Policy *policy,
                           usec_t *t_nons, usec_t *t_sample, usec_t *t_plan, usec_t *t_total) {
        SampleSources src = { .root_fd = root_fd, .sysfs_root = sysfs, .debugfs_fd = debugfs_fd, .mount_backend = b };
        Sample *s = NULL;
        Plan *p = NULL;
        usec_t a;

        a = now(CLOCK_MONOTONIC);
        if (sample_load(&src, &s) < 0)
                return -1;
        *t_nons = now(CLOCK_MONOTONIC) - a;
        sample_free(s);

        src.scan_namespaces = true;
        a = now(CLOCK_MONOTONIC);
        if (sample_load(&src, &s) < 0)
                return -1;
        *t_sample = now(CLOCK_MONOTONIC) - a;
        a = now(CLOCK_MONOTONIC);
        if (plan_build(s, policy, PLAN_SCOPE_ALL, &p) < 0)
                return -1;
        *t_plan = now(CLOCK_MONOTONIC) - a;
        *t_total = *t_sample + *t_plan;
        plan_free(p);
        sample_free(s);
        return 0;
}

int main(int argc, char **argv) {
        unsigned n = argc > 1 ? (unsigned) atoi(argv[1]) : 50;
        const char *root = argc > 2 ? argv[2] : "/";
        const char *sysfs = argc > 3 ? argv[3] : "/sys";
        const char *debugfs = argc > 4 ? argv[4] : "/sys/kernel/debug";
        const char *which = argc > 5 ? argv[5] : "both";
        bool mi = !strcmp(which, "both") || !strcmp(which, "mountinfo");
        bool lm = !strcmp(which, "both") || !strcmp(which, "listmount");
        static usec_t t[N_PHASES][MAX_ITER];
        int root_fd, debugfs_fd;
        Policy *policy = NULL;
        struct rusage ru;

        if (n == 0 || n > MAX_ITER)
                n = 50;
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        debugfs_fd = open(debugfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0 || policy_new(&policy) < 0)
                return 1;

        for (unsigned i = 0; i < n; i++) {
                MountTable *mt = NULL;
                Meminfo m;
                char *text = NULL;
                size_t size = 0;
                usec_t a;

                for (unsigned k = 0; k < 2; k++) {
                        /* Alternate which backend goes first, so neither always runs on a warm cache. */
                        bool use_lm = (k + i) % 2;

                        if (!use_lm && mi) {
                                a = now(CLOCK_MONOTONIC);
                                if (read_full_file_at(root_fd, "proc/self/mountinfo", MOUNT_TABLE_MAX_BYTES, &text,
                                                      &size) < 0)
                                        return 1;
                                t[0][i] = now(CLOCK_MONOTONIC) - a;

                                a = now(CLOCK_MONOTONIC);
                                if (mount_table_parse(text, size, &mt, NULL) < 0)
                                        return 1;
                                t[1][i] = now(CLOCK_MONOTONIC) - a;
                                mt = mount_table_free(mt);
                                text = mfree(text);

                                a = now(CLOCK_MONOTONIC);
                                if (mount_table_load_backend(root_fd, MOUNT_TABLE_BACKEND_MOUNTINFO, &mt, NULL, NULL) < 0)
                                        return 1;
                                t[2][i] = now(CLOCK_MONOTONIC) - a;
                                mt = mount_table_free(mt);
                        }
                        if (use_lm && lm) {
                                a = now(CLOCK_MONOTONIC);
                                if (mount_table_load_backend(root_fd, MOUNT_TABLE_BACKEND_LISTMOUNT, &mt, NULL, NULL) < 0) {
                                        fprintf(stderr, "listmount backend unusable here\n");
                                        return 1;
                                }
                                t[3][i] = now(CLOCK_MONOTONIC) - a;
                                mt = mount_table_free(mt);
                        }
                }

                a = now(CLOCK_MONOTONIC);
                (void) meminfo_load(root_fd, &m);
                t[4][i] = now(CLOCK_MONOTONIC) - a;

                /* Alternate which backend goes first, so neither always runs on a warm cache. */
                for (unsigned k = 0; k < 2; k++) {
                        bool use_lm = (k + i) % 2;

                        if ((use_lm && !lm) || (!use_lm && !mi))
                                continue;
                        if (sample_and_plan(root_fd, sysfs, debugfs_fd,
                                            use_lm ? MOUNT_TABLE_BACKEND_LISTMOUNT : MOUNT_TABLE_BACKEND_MOUNTINFO,
                                            policy, &t[use_lm ? 8 : 5][i], &t[use_lm ? 9 : 6][i],
                                            &t[use_lm ? 10 : 7][i], &t[use_lm ? 12 : 11][i]) < 0)
                                return 1;
                }
        }
        for (unsigned k = 0; k < N_PHASES; k++) {
                bool is_lm = strstr(names[k], "-lm") != NULL, is_mi = k < 3 || strstr(names[k], "-mi") != NULL;

                if ((is_lm && !lm) || (is_mi && !mi))
                        continue;
                report(names[k], t[k], n);
        }
        if (getrusage(RUSAGE_SELF, &ru) == 0)
                printf("%-14s %8ld KiB\n", "peak-rss", ru.ru_maxrss);
        policy_free(policy);
        return 0;
}
