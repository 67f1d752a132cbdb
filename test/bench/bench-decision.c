/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-decision: times the in-process decision pieces of suspend-sync one by one, in one process
 * (no fork/exec, no dynamic loading), so the per-phase cost can be attributed:
 *   read-text    read proc/self/mountinfo into memory (kernel text generation + copy)
 *   parse        mount_table_parse() on that text (libmount)
 *   meminfo      meminfo_load()
 *   sample-nons  sample_load() without the other-namespace scan
 *   sample       sample_load() as the verbs call it (namespace scan on)
 *   plan         plan_build() with the default policy
 * usage: bench-decision [ITERATIONS] [ROOT] [SYSFS] [DEBUGFS]; prints "name median_usec min_usec".
 * Test tool: prints to stdout.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
        printf("%-12s %8llu %8llu\n", name, (unsigned long long) t[n / 2], (unsigned long long) t[0]);
}

int main(int argc, char **argv) {
        unsigned n = argc > 1 ? (unsigned) atoi(argv[1]) : 50;
        const char *root = argc > 2 ? argv[2] : "/";
        const char *sysfs = argc > 3 ? argv[3] : "/sys";
        const char *debugfs = argc > 4 ? argv[4] : "/sys/kernel/debug";
        static usec_t t[6][MAX_ITER];
        int root_fd, debugfs_fd;
        Policy *policy = NULL;

        if (n == 0 || n > MAX_ITER)
                n = 50;
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        debugfs_fd = open(debugfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0 || policy_new(&policy) < 0)
                return 1;

        for (unsigned i = 0; i < n; i++) {
                SampleSources src = { .root_fd = root_fd, .sysfs_root = sysfs, .debugfs_fd = debugfs_fd };
                MountTable *mt = NULL;
                Sample *s = NULL;
                Plan *p = NULL;
                Meminfo mi;
                char *text = NULL;
                size_t size = 0;
                usec_t a;

                a = now(CLOCK_MONOTONIC);
                if (read_full_file_at(root_fd, "proc/self/mountinfo", MOUNT_TABLE_MAX_BYTES, &text, &size) < 0)
                        return 1;
                t[0][i] = now(CLOCK_MONOTONIC) - a;

                a = now(CLOCK_MONOTONIC);
                if (mount_table_parse(text, size, &mt, NULL) < 0)
                        return 1;
                t[1][i] = now(CLOCK_MONOTONIC) - a;
                mount_table_free(mt);
                free(text);

                a = now(CLOCK_MONOTONIC);
                (void) meminfo_load(root_fd, &mi);
                t[2][i] = now(CLOCK_MONOTONIC) - a;

                a = now(CLOCK_MONOTONIC);
                if (sample_load(&src, &s) < 0)
                        return 1;
                t[3][i] = now(CLOCK_MONOTONIC) - a;
                sample_free(s);

                src.scan_namespaces = true;
                a = now(CLOCK_MONOTONIC);
                if (sample_load(&src, &s) < 0)
                        return 1;
                t[4][i] = now(CLOCK_MONOTONIC) - a;

                a = now(CLOCK_MONOTONIC);
                if (plan_build(s, policy, PLAN_SCOPE_ALL, &p) < 0)
                        return 1;
                t[5][i] = now(CLOCK_MONOTONIC) - a;
                plan_free(p);
                sample_free(s);
        }
        report("read-text", t[0], n);
        report("parse", t[1], n);
        report("meminfo", t[2], n);
        report("sample-nons", t[3], n);
        report("sample", t[4], n);
        report("plan", t[5], n);
        policy_free(policy);
        return 0;
}
