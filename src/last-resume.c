/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "last-resume.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"

int last_resume_format(const char *action, const char *systemd_sleep_action, const struct timespec *realtime,
                       usec_t boottime, usec_t suspended, char **ret) {
        char stamp[sizeof("YYYY-MM-DDTHH:MM:SS") + 16];
        struct tm tm;
        time_t t = realtime->tv_sec;

        if (!gmtime_r(&t, &tm) || strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                return -EINVAL;
        if (asprintf(ret,
                     "ACTION=%s\nSYSTEMD_SLEEP_ACTION=%s\nREALTIME=%s.%09ldZ\nBOOTTIME_SEC=%llu.%02llu\n"
                     "SUSPENDED_USEC=%llu\n",
                     action ?: "unknown", systemd_sleep_action ?: "", stamp, (long) realtime->tv_nsec,
                     (unsigned long long) (boottime / USEC_PER_SEC),
                     (unsigned long long) (boottime % USEC_PER_SEC / 10000),
                     (unsigned long long) suspended) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

int last_resume_save(const char *dir, const char *action, const char *systemd_sleep_action) {
        _cleanup_close_ int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;
        struct timespec ts;
        usec_t mono, boot;
        int r;

        if (dir_fd < 0)
                return negative_errno();
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return negative_errno();
        /* one moment's pair: a preemption between two plain reads adds to "suspended" (review BB) */
        now_monotonic_boottime(&mono, &boot);
        r = last_resume_format(action, systemd_sleep_action, &ts, boot, boot >= mono ? boot - mono : 0,
                               &text);
        if (r < 0)
                return r;
        return write_file_atomic_at(dir_fd, "last-resume", text, strlen(text));
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

void last_resume_parse(const char *text, LastResume *ret) {
        const char *action, *sleep_action, *realtime, *suspended;
        size_t n_action = 0, n_sleep_action = 0, n_realtime = 0, n_suspended = 0;
        uint64_t v = USEC_INFINITY;

        action = find_key(text, "ACTION", &n_action);
        sleep_action = find_key(text, "SYSTEMD_SLEEP_ACTION", &n_sleep_action);
        realtime = find_key(text, "REALTIME", &n_realtime);
        suspended = find_key(text, "SUSPENDED_USEC", &n_suspended);
        /* USEC_INFINITY (its largest value too): not known */
        if (suspended)
                (void) safe_atou64_n(suspended, n_suspended, &v);
        *ret = (LastResume) {
                .realtime = realtime ? parse_realtime(realtime) : 0,
                .suspended = v,
                .by_hook = (action && n_action > 0 &&
                            !(n_action == strlen("unknown") && strncmp(action, "unknown", n_action) == 0)) ||
                           (sleep_action && n_sleep_action > 0),
        };
}

void last_resume_read(const char *dir, LastResume *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t size;

        *ret = (LastResume) { .suspended = USEC_INFINITY };
        if (asprintf(&path, "%s/last-resume", dir) < 0) {
                path = NULL;
                return;
        }
        if (read_full_file_at_flags(AT_FDCWD, path, 4096, READ_FULL_STATE, &text, &size) < 0)
                return;
        last_resume_parse(text, ret);
}

usec_t last_resume_load(const char *dir) {
        LastResume lr;

        last_resume_read(dir, &lr);
        return lr.realtime;
}
