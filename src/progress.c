/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bdi-stats.h"
#include "progress.h"
#include "shared/bounded-child.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

#define STAT_FILE_MAX 1024U

int progress_parse_block_stat(const char *text, uint64_t *ret, uint64_t *ret_in_flight) {
        /* 0-based field indices that only move when a request completes. */
        static const unsigned completion_fields[] = { 0, 2, 4, 6, 11, 13, 15 };
        uint64_t v[17] = {}, sum = 0;
        const char *p = text;
        unsigned n = 0;

        if (!text)
                return -EINVAL;

        while (n < ELEMENTSOF(v)) {
                char *end;

                p += strspn(p, " \t");
                if (*p < '0' || *p > '9')
                        break;
                errno = 0;
                v[n] = strtoull(p, &end, 10);
                if (errno != 0)
                        return -EBADMSG;
                n++;
                p = end;
        }
        p += strspn(p, " \t\n");
        if (n < 11 || (n < ELEMENTSOF(v) && *p != '\0'))
                return -EBADMSG;

        for (size_t i = 0; i < ELEMENTSOF(completion_fields); i++)
                if (completion_fields[i] < n)
                        sum += v[completion_fields[i]];
        *ret = sum;
        if (ret_in_flight)
                *ret_in_flight = v[8];
        return 0;
}

static int leaf_read(int sysfs_fd, dev_t dev, uint64_t *ret, uint64_t *ret_in_flight) {
        _cleanup_free_ char *text = NULL;
        char path[96];
        int r;

        /* Never queue/iostats here: reading it takes the queue's limits lock, which a task stuck in
         * the device's revalidation or reconfiguration holds (sd_revalidate_disk(), a loop device
         * frozen on a dead backing file). The worker reads it (worker.h); partitions have no queue/
         * of their own, leaves are whole disks. part_stat_show() takes no lock. */
        snprintf(path, sizeof path, "dev/block/%u:%u/stat", major(dev), minor(dev));
        r = read_full_file_at(sysfs_fd, path, STAT_FILE_MAX, &text, NULL);
        if (r < 0)
                return r;
        return progress_parse_block_stat(text, ret, ret_in_flight);
}

bool progress_busy_needed(const char *release) {
        unsigned maj, min;

        /* Unknown: field 9 alone, and no debugfs read that might wait (6.16+ takes a lock there). */
        if (!release || sscanf(release, "%u.%u", &maj, &min) != 2)
                return false;
        return maj < 6 || (maj == 6 && min < 10);
}

bool progress_busy_needed_here(void) {
        static int cached = -1;
        struct utsname u;

        if (cached < 0)
                cached = uname(&u) >= 0 && progress_busy_needed(u.release);
        return cached;
}

#define BUSY_LEAVES_MAX 16U
#define BUSY_NAME_MAX 64U
#define BUSY_ANSWER_MAX (PROGRESS_BUSY_IDS_MAX * (PROGRESS_BUSY_ID_MAX + 1) + 2)

typedef struct BusyAsk {
        char names[BUSY_LEAVES_MAX][BUSY_NAME_MAX + 1];
        size_t n;
        ProgressMemo *memo; /* the answer: memo->now (parent side) */
} BusyAsk;

/* The kernel's name of a whole disk (sysfs dev/block/MAJ:MIN links to .../block/NAME). */
static int leaf_name(int sysfs_fd, dev_t dev, char ret[static BUSY_NAME_MAX + 1]) {
        _cleanup_free_ char *link = NULL;
        char path[64];
        const char *name;
        int r;

        snprintf(path, sizeof path, "dev/block/%u:%u", major(dev), minor(dev));
        r = readlink_malloc_at(sysfs_fd, path, &link);
        if (r < 0)
                return r;
        name = strrchr(link, '/');
        name = name ? name + 1 : link;
        if (isempty(name) || strlen(name) > BUSY_NAME_MAX || streq(name, "..") || streq(name, "."))
                return -EINVAL;
        strcpy(ret, name);
        return 0;
}

/* Writes the identity of every flush request the driver has started and not completed for this
 * disk: the first word of each ".op=FLUSH" line of its blk-mq debugfs block/<disk>/hctx<N>/busy
 * files (the request's address as %p prints it), at most *budget of them. Only flushes: the one
 * request field 9 misses before 6.10; others (a passthrough command of smartd, say) move no
 * completion counter, and one seen twice on a disk that waits from above would prove it stuck. Only
 * hexadecimal words: "(____ptrval____)", printed before the kernel's pointer key is ready, is the
 * same for every request. */
static void leaf_busy_ids(int pipe_fd, int debugfs_fd, const char *name, size_t *budget) {
        _cleanup_closedir_ DIR *d = NULL;
        char path[BUSY_NAME_MAX + 16];
        struct dirent *de;

        snprintf(path, sizeof path, "block/%s", name);
        if (opendir_at(debugfs_fd, path, &d) < 0)
                return;
        while (*budget > 0 && (de = readdir(d))) {
                _cleanup_free_ char *text = NULL;
                char busy[64];

                if (!startswith(de->d_name, "hctx") || strlen(de->d_name) > 32)
                        continue;
                snprintf(busy, sizeof busy, "%.32s/busy", de->d_name);
                if (read_full_file_at(dirfd(d), busy, 64 * 1024, &text, NULL) < 0)
                        continue;
                for (const char *l = text; *l && *budget > 0; l += strcspn(l, "\n"), l += !!*l) {
                        size_t k = strcspn(l, " \n"), len = strcspn(l, "\n");

                        if (k == 0 || k > PROGRESS_BUSY_ID_MAX || strspn(l, "0123456789abcdef") != k ||
                            !memmem(l, len, "{.op=FLUSH,", strlen("{.op=FLUSH,")))
                                continue;
                        (void) loop_write(pipe_fd, l, k);
                        (void) loop_write(pipe_fd, "\n", 1);
                        (*budget)--;
                }
        }
}

static int busy_child(int pipe_fd, int keep_fd, void *userdata) {
        const BusyAsk *x = userdata;
        size_t budget = PROGRESS_BUSY_IDS_MAX;

        for (size_t i = 0; i < x->n; i++)
                leaf_busy_ids(pipe_fd, keep_fd, x->names[i], &budget);
        return loop_write(pipe_fd, ".\n", 2) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Complete at the ".\n" line; the identities before it go to memo->now. */
static int busy_feed(const char *buf, size_t size, void *userdata) {
        BusyAsk *x = userdata;
        ProgressMemo *m = x->memo;

        if (size < 2 || buf[size - 1] != '\n' || (size > 2 && buf[size - 3] != '\n') || buf[size - 2] != '.')
                return 0;
        m->n_now = 0;
        for (const char *l = buf; l < buf + size - 2 && m->n_now < PROGRESS_BUSY_IDS_MAX;) {
                size_t k = strcspn(l, "\n");

                if (k > 0 && k <= PROGRESS_BUSY_ID_MAX) {
                        memcpy(m->now[m->n_now], l, k);
                        m->now[m->n_now++][k] = '\0';
                }
                l += k + 1;
        }
        return 1;
}

/* Asked in a bounded child: a kernel that took the busy file's lock before 6.16 (a backport) must
 * not hold the executor. Held: a request seen now was also seen at this quiet spell's earlier ask,
 * so one request has been in the driver across that time (a single sighting could be a stale tag
 * entry of an old kernel's iteration). The flush request is one object per queue, at one address
 * for every flush; a flush that completed between the asks moved the flush counter (stat field 16,
 * Linux 5.8+) or the caller's request's write counter, which ended the spell. No answer in time:
 * no, and no more asks in this pass (ProgressBusy.off); nor once the asks have cost the pass
 * PROGRESS_BUSY_BUDGET. */
static bool leaves_busy(const ProgressProbe *p, ProgressMemo *m) {
        BusyAsk x = { .memo = m };
        usec_t t0;
        int r;

        for (size_t i = 0; i < p->n_leaves && x.n < BUSY_LEAVES_MAX; i++)
                if (leaf_name(p->sysfs_fd, p->leaves[i], x.names[x.n]) >= 0)
                        x.n++;
        if (x.n == 0)
                return false;
        m->n_before = m->n_now;
        memcpy(m->before, m->now, sizeof m->now);
        m->n_now = 0;
        t0 = now(CLOCK_MONOTONIC);
        r = bounded_child_run(p->debugfs_fd, PROGRESS_BUSY_TIMEOUT, BUSY_ANSWER_MAX, busy_child, busy_feed,
                              &x);
        p->busy->spent = usec_add(p->busy->spent, now(CLOCK_MONOTONIC) - t0);
        if (r != 1 || p->busy->spent >= PROGRESS_BUSY_BUDGET)
                p->busy->off = true;
        if (r != 1) {
                m->n_now = 0;
                return false;
        }
        for (size_t i = 0; i < m->n_now; i++)
                for (size_t j = 0; j < m->n_before; j++)
                        if (streq(m->now[i], m->before[j]))
                                return true;
        return false;
}

/* The busy fallback of one read: asks at the 1st, 2nd, 4th, 8th, ... read of a quiet spell (no
 * completion since the spell began), so a wait above the disk costs a few children, and keeps a yes
 * until a completion ends the spell. */
static bool busy_fallback(const ProgressProbe *p, uint64_t sum, bool ask) {
        ProgressMemo *m = p->memo;

        if (!m->read || m->sum != sum) { /* a first read, or a completion: a new spell */
                *m = (ProgressMemo) { .read = true, .sum = sum };
                return false;
        }
        m->quiet_reads++;
        if (ask && !m->held && !p->busy->off && (m->quiet_reads & (m->quiet_reads - 1)) == 0)
                m->held = leaves_busy(p, m);
        return m->held;
}

int progress_read(const ProgressProbe *p, uint64_t *ret, bool *ret_held) {
        uint64_t sum = 0, v, in_flight, held = 0;
        bool any = false;

        if (!p)
                return -ENODATA;

        /* Every leaf or none: I/O on a leaf that cannot be read, or does not account it, would pass
         * for a stall of the others, and a device proven stuck turns the kernel's sync off. Nor do
         * the bdi's BdiWritten count a journal's writes. */
        if (p->n_leaves > 0 && p->sysfs_fd < 0)
                return -ENODATA;
        for (size_t i = 0; i < p->n_leaves; i++) {
                if (leaf_read(p->sysfs_fd, p->leaves[i], &v, &in_flight) < 0)
                        return -ENODATA;
                sum += v;
                held += p->busy_only ? 0 : in_flight;
                any = true;
        }

        if (p->debugfs_fd >= 0 && p->bdi_name) {
                BdiStats st;

                if (bdi_stats_load(p->debugfs_fd, p->bdi_name, &st) >= 0 &&
                    bdi_stats_has(&st, BDI_STAT_WRITTEN)) {
                        sum += st.value[BDI_STAT_WRITTEN];
                        any = true;
                }
        }

        if (!any)
                return -ENODATA;
        /* Before Linux 6.10 field 9 counts no pending cache FLUSH (progress.h): ask the driver. Every
         * read updates the memo, so that a completion ends a spell whatever field 9 said. */
        if (p->memo && p->busy &&
            busy_fallback(p, sum, ret_held && held == 0 && p->sysfs_fd >= 0 && p->debugfs_fd >= 0))
                held = held ?: 1;
        *ret = sum;
        if (ret_held)
                *ret_held = p->n_leaves == 0 || held > 0;
        return 0;
}
