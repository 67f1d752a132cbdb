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

int last_resume_format(const char *action, const char *systemd_sleep_action, const struct timespec *realtime,
                       usec_t boottime, char **ret) {
        char stamp[sizeof("YYYY-MM-DDTHH:MM:SS") + 16];
        struct tm tm;
        time_t t = realtime->tv_sec;

        if (!gmtime_r(&t, &tm) || strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                return -EINVAL;
        if (asprintf(ret,
                     "ACTION=%s\nSYSTEMD_SLEEP_ACTION=%s\nREALTIME=%s.%09ldZ\nBOOTTIME_SEC=%llu.%02llu\n",
                     action ?: "unknown", systemd_sleep_action ?: "", stamp, (long) realtime->tv_nsec,
                     (unsigned long long) (boottime / USEC_PER_SEC),
                     (unsigned long long) (boottime % USEC_PER_SEC / 10000)) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

int last_resume_save(const char *dir, const char *action, const char *systemd_sleep_action) {
        _cleanup_close_ int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;
        struct timespec ts;
        int r;

        if (dir_fd < 0)
                return negative_errno();
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return negative_errno();
        r = last_resume_format(action, systemd_sleep_action, &ts, now(CLOCK_BOOTTIME), &text);
        if (r < 0)
                return r;
        return write_file_atomic_at(dir_fd, "last-resume", text, strlen(text));
}

usec_t last_resume_load(const char *dir) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        usec_t frac = 0, scale = USEC_PER_SEC;
        struct tm tm = {};
        const char *p, *end;
        size_t size;

        if (asprintf(&path, "%s/last-resume", dir) < 0) {
                path = NULL;
                return 0;
        }
        if (read_full_file_at_flags(AT_FDCWD, path, 4096, READ_FULL_STATE, &text, &size) < 0)
                return 0;
        p = strstr(text, "REALTIME=");
        if (!p || !(end = strptime(p + 9, "%Y-%m-%dT%H:%M:%S", &tm)))
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
