/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-id128.h>

#include "last-resume.h"
#include "shared/fileio.h"
#include "shared/hexdecoct.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

int last_resume_format(const char *action, const char *systemd_sleep_action, const struct timespec *realtime,
                       const LastResume *facts, char **ret) {
        const SuspendStats *st = &facts->stats;
        _cleanup_free_ char *buf = NULL;
        char stamp[sizeof("YYYY-MM-DDTHH:MM:SS") + 16];
        size_t size = 0;
        struct tm tm;
        time_t t = realtime->tv_sec;
        FILE *f;

        *ret = NULL;
        if (!gmtime_r(&t, &tm) || strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                return -EINVAL;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "ACTION=%s\nSYSTEMD_SLEEP_ACTION=%s\nREALTIME=%s.%09ldZ\nBOOTTIME_SEC=%llu.%02llu\n",
                action ?: "unknown", systemd_sleep_action ?: "", stamp, (long) realtime->tv_nsec,
                (unsigned long long) (facts->boottime / USEC_PER_SEC),
                (unsigned long long) (facts->boottime % USEC_PER_SEC / 10000));
        if (facts->suspended != USEC_INFINITY)
                fprintf(f, "SUSPENDED_USEC=%llu\n", (unsigned long long) facts->suspended);
        if (facts->boottime > 0)
                fprintf(f, "BOOTTIME_USEC=%llu\n", (unsigned long long) facts->boottime);
        if (facts->boot_id[0])
                fprintf(f, "BOOT_ID=%s\n", facts->boot_id);
        if (st->success != SUSPEND_STATS_UNKNOWN)
                fprintf(f, "SUSPEND_SUCCESS=%llu\n", (unsigned long long) st->success);
        if (st->fail != SUSPEND_STATS_UNKNOWN)
                fprintf(f, "SUSPEND_FAIL=%llu\n", (unsigned long long) st->fail);
        if (st->last_failed_step[0])
                fprintf(f, "SUSPEND_LAST_FAILED_STEP=%s\n", st->last_failed_step);
        if (st->last_failed_dev[0])
                fprintf(f, "SUSPEND_LAST_FAILED_DEV=%s\n", st->last_failed_dev);
        if (st->last_failed_errno < 0)
                fprintf(f, "SUSPEND_LAST_FAILED_ERRNO=%d\n", st->last_failed_errno);
        if (memstream_finish(f, &buf) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

int last_resume_save(const char *dir, int sysfs_fd, const char *action, const char *systemd_sleep_action) {
        _cleanup_close_ int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;
        LastResume facts = {};
        struct timespec ts;
        sd_id128_t id;
        usec_t mono;
        int r;

        if (dir_fd < 0)
                return negative_errno();
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return negative_errno();
        /* one moment's pair: a preemption between two plain reads adds to "suspended" (review BB) */
        now_monotonic_boottime(&mono, &facts.boottime);
        facts.suspended = facts.boottime >= mono ? facts.boottime - mono : 0;
        if (sd_id128_get_boot(&id) >= 0)
                (void) sd_id128_to_string(id, facts.boot_id);
        suspend_stats_load(sysfs_fd, true, &facts.stats);
        r = last_resume_format(action, systemd_sleep_action, &ts, &facts, &text);
        if (r < 0)
                return r;
        return write_file_atomic_at(dir_fd, "last-resume", text, strlen(text));
}

bool last_resume_after(const LastResume *lr, const char *boot_id, usec_t realtime, usec_t boottime,
                       usec_t duration) {
        if (lr->boot_id[0] && !isempty(boot_id)) {
                if (!streq(lr->boot_id, boot_id))
                        return false;
                if (lr->boottime > 0 && boottime > 0)
                        return lr->boottime > usec_add(boottime, duration);
        }
        return lr->realtime > usec_add(realtime, duration);
}

/* The value of KEY= at the start of a line of text (its length, up to the end of the line, in
 * *ret_len); NULL when there is none. */
static const char *find_key(const char *text, const char *key, size_t *ret_len) {
        size_t k = strlen(key);

        for (const char *p = text;;) {
                if (strncmp(p, key, k) == 0 && p[k] == '=') {
                        *ret_len = strcspn(p + k + 1, "\n");
                        return p + k + 1;
                }
                p = strchr(p, '\n');
                if (!p)
                        return NULL;
                p++;
        }
}

static usec_t parse_realtime(const char *v) {
        usec_t frac = 0, scale = USEC_PER_SEC;
        struct tm tm = {};
        const char *end;

        if (!(end = strptime(v, "%Y-%m-%dT%H:%M:%S", &tm)))
                return 0;
        /* ".NNNNNNNNN": a sleep shorter than a second must still end after it began */
        if (*end == '.')
                for (end++; *end >= '0' && *end <= '9'; end++)
                        if (scale > 1) {
                                scale /= 10;
                                frac += (usec_t) (*end - '0') * scale;
                        }
        return (usec_t) timegm(&tm) * USEC_PER_SEC + frac;
}

static uint64_t parse_u64(const char *text, const char *key, uint64_t unknown) {
        const char *v;
        size_t n = 0;
        uint64_t u = unknown;

        v = find_key(text, key, &n);
        /* the largest value stands for "unknown" too */
        if (v && safe_atou64_n(v, n, &u) < 0)
                u = unknown;
        return u;
}

/* A name of at most size - 1 bytes of SUSPEND_STATS_NAME_CHARS and the '?' that suspend_stats_name()
 * puts for any other character; else "". */
static void parse_name(const char *text, const char *key, char *buf, size_t size) {
        const char *v;
        size_t n = 0;

        buf[0] = 0;
        v = find_key(text, key, &n);
        if (!v || n == 0 || n >= size || strspn(v, SUSPEND_STATS_NAME_CHARS "?") < n)
                return;
        memcpy(buf, v, n);
        buf[n] = 0;
}

void last_resume_parse(const char *text, LastResume *ret) {
        const char *action, *sleep_action, *realtime, *err;
        size_t n_action = 0, n_sleep_action = 0, n_realtime = 0, n_err = 0;
        uint64_t e;

        action = find_key(text, "ACTION", &n_action);
        sleep_action = find_key(text, "SYSTEMD_SLEEP_ACTION", &n_sleep_action);
        realtime = find_key(text, "REALTIME", &n_realtime);
        *ret = (LastResume) {
                .realtime = realtime ? parse_realtime(realtime) : 0,
                .suspended = parse_u64(text, "SUSPENDED_USEC", USEC_INFINITY),
                .boottime = parse_u64(text, "BOOTTIME_USEC", 0),
                .stats = SUSPEND_STATS_NULL,
                .by_hook = (action && n_action > 0 &&
                            !(n_action == strlen("unknown") && strncmp(action, "unknown", n_action) == 0)) ||
                           (sleep_action && n_sleep_action > 0),
        };
        parse_name(text, "BOOT_ID", ret->boot_id, sizeof ret->boot_id);
        if (!id128_string_valid(ret->boot_id))
                ret->boot_id[0] = 0;
        ret->stats.success = parse_u64(text, "SUSPEND_SUCCESS", SUSPEND_STATS_UNKNOWN);
        ret->stats.fail = parse_u64(text, "SUSPEND_FAIL", SUSPEND_STATS_UNKNOWN);
        parse_name(text, "SUSPEND_LAST_FAILED_STEP", ret->stats.last_failed_step,
                   sizeof ret->stats.last_failed_step);
        parse_name(text, "SUSPEND_LAST_FAILED_DEV", ret->stats.last_failed_dev,
                   sizeof ret->stats.last_failed_dev);
        err = find_key(text, "SUSPEND_LAST_FAILED_ERRNO", &n_err);
        if (err && n_err > 1 && err[0] == '-' && safe_atou64_n(err + 1, n_err - 1, &e) >= 0 && e > 0 &&
            e <= 4095)
                ret->stats.last_failed_errno = -(int) e;
}

void last_resume_read(const char *dir, LastResume *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t size;

        *ret = (LastResume) { .suspended = USEC_INFINITY, .stats = SUSPEND_STATS_NULL };
        if (asprintf(&path, "%s/last-resume", dir) < 0) {
                path = NULL;
                return;
        }
        if (read_full_file_at_flags(AT_FDCWD, path, 4096, READ_FULL_STATE, &text, &size) < 0)
                return;
        last_resume_parse(text, ret);
}
