/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "time-util.h"

usec_t timespec_load(const struct timespec *ts) {
        if (ts->tv_sec < 0 || ts->tv_nsec < 0)
                return USEC_INFINITY;
        return (usec_t) ts->tv_sec * USEC_PER_SEC + (usec_t) ts->tv_nsec / NSEC_PER_USEC;
}

struct timespec *timespec_store(struct timespec *ts, usec_t u) {
        ts->tv_sec = (time_t) (u / USEC_PER_SEC);
        ts->tv_nsec = (long) ((u % USEC_PER_SEC) * NSEC_PER_USEC);
        return ts;
}

usec_t now(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return timespec_load(&ts);
}

void now_monotonic_boottime(usec_t *ret_monotonic, usec_t *ret_boottime) {
        usec_t best_gap = USEC_INFINITY, mono = 0, boot = 0;

        for (unsigned i = 0; i < 8 && best_gap > NOW_BOOT_PAIR_SLACK; i++) {
                usec_t m1 = now(CLOCK_MONOTONIC), b = now(CLOCK_BOOTTIME), m2 = now(CLOCK_MONOTONIC);

                /* BOOTTIME less MONOTONIC at b's read lies between b - m2 and b - m1: the later
                 * read, so a sleep between the reads can only make the difference larger */
                if (m2 >= m1 && m2 - m1 < best_gap) {
                        best_gap = m2 - m1;
                        mono = m2;
                        boot = b;
                }
        }
        *ret_monotonic = mono;
        *ret_boottime = MAX(boot, mono);
}

static const struct {
        const char *suffix;
        usec_t usec;
} time_units[] = {
        /* Longest suffixes first, so that "ms" is not read as "m" + garbage. */
        { "usec", 1 },
        { "msec", USEC_PER_MSEC },
        { "seconds", USEC_PER_SEC },
        { "second", USEC_PER_SEC },
        { "sec", USEC_PER_SEC },
        { "minutes", 60 * USEC_PER_SEC },
        { "minute", 60 * USEC_PER_SEC },
        { "min", 60 * USEC_PER_SEC },
        { "hours", 3600 * USEC_PER_SEC },
        { "hour", 3600 * USEC_PER_SEC },
        { "hr", 3600 * USEC_PER_SEC },
        { "days", 24 * 3600 * USEC_PER_SEC },
        { "day", 24 * 3600 * USEC_PER_SEC },
        { "d", 24 * 3600 * USEC_PER_SEC },
        { "us", 1 },
        { "ms", USEC_PER_MSEC },
        { "s", USEC_PER_SEC },
        { "m", 60 * USEC_PER_SEC },
        { "h", 3600 * USEC_PER_SEC },
};

int parse_timespan(const char *s, usec_t *ret) {
        usec_t total = 0;
        bool any = false;

        if (!s)
                return -EINVAL;

        for (const char *p = s;;) {
                unsigned long long whole = 0, frac = 0, frac_div = 1;
                bool digits = false;
                usec_t mult = USEC_PER_SEC, part;
                const char *end;
                size_t n;

                p += strspn(p, " \t");
                if (*p == 0)
                        break;

                if (*p == '-' || *p == '+')
                        return -EINVAL;
                for (; isdigit((unsigned char) *p); p++) {
                        if (whole > (UINT64_MAX - 9) / 10)
                                return -ERANGE;
                        whole = whole * 10 + (unsigned) (*p - '0');
                        digits = true;
                }
                if (*p == '.') {
                        p++;
                        /* As systemd's parse_time(): no "3.", "3.s", "5..5s", "3. 1". */
                        if (!isdigit((unsigned char) *p))
                                return -EINVAL;
                        for (; isdigit((unsigned char) *p); p++) {
                                if (frac_div < 1000000000ULL) {
                                        frac = frac * 10 + (unsigned) (*p - '0');
                                        frac_div *= 10;
                                }
                                digits = true;
                        }
                }
                if (!digits)
                        return -EINVAL;

                end = p;
                p += strspn(p, " \t");
                n = strcspn(p, " \t0123456789.");
                if (n == 0 && p == end && *p != 0)
                        /* A number right after another, neither a unit nor a space between: as
                         * systemd, no "1.5.5s" (accepted: "1.5 .5s", "1.5s.5"). */
                        return -EINVAL;
                if (n > 0) {
                        size_t i;
                        for (i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++)
                                if (strlen(time_units[i].suffix) == n &&
                                    strncmp(p, time_units[i].suffix, n) == 0)
                                        break;
                        if (i >= sizeof(time_units) / sizeof(time_units[0]))
                                return -EINVAL;
                        mult = time_units[i].usec;
                        p += n;
                }

                if (whole > USEC_INFINITY / mult)
                        return -ERANGE;
                part = (usec_t) whole * mult + (usec_t) ((frac * mult) / frac_div);
                if (part > USEC_INFINITY - 1 - total)
                        return -ERANGE;
                total += part;
                any = true;
        }

        if (!any)
                return -EINVAL;
        *ret = total;
        return 0;
}

/* Below a minute: one unit ("1.234s", "250ms", "12us"). From a minute on, systemd's way: the units
 * that are not zero, largest first, the seconds with milliseconds when there are any
 * ("1min 30s", "1h 2min 3.500s", "2d 1h"). */
const char *format_timespan(char *buf, size_t len, usec_t u) {
        static const struct {
                const char *suffix;
                usec_t usec;
        } units[] = {
                { "d", 24 * 60 * USEC_PER_MINUTE },
                { "h", 60 * USEC_PER_MINUTE },
                { "min", USEC_PER_MINUTE },
        };
        size_t n = 0;

        if (u == USEC_INFINITY)
                snprintf(buf, len, "infinity");
        else if (u >= USEC_PER_MINUTE) {
                buf[0] = 0;
                for (size_t i = 0; i < ELEMENTSOF(units) && n < len; i++)
                        if (u >= units[i].usec) {
                                n += (size_t) snprintf(buf + n, len - n, "%s%llu%s", n ? " " : "",
                                                       (unsigned long long) (u / units[i].usec),
                                                       units[i].suffix);
                                u %= units[i].usec;
                        }
                if (u > 0 && n < len) {
                        char rest[FORMAT_TIMESPAN_MAX];

                        snprintf(buf + n, len - n, " %s", format_timespan(rest, sizeof rest, u));
                }
        } else if (u >= USEC_PER_SEC && u % USEC_PER_SEC == 0)
                snprintf(buf, len, "%llus", (unsigned long long) (u / USEC_PER_SEC));
        else if (u >= USEC_PER_SEC)
                snprintf(buf, len, "%llu.%03llus", (unsigned long long) (u / USEC_PER_SEC),
                         (unsigned long long) ((u % USEC_PER_SEC) / USEC_PER_MSEC));
        else if (u >= USEC_PER_MSEC && u % USEC_PER_MSEC == 0)
                snprintf(buf, len, "%llums", (unsigned long long) (u / USEC_PER_MSEC));
        else if (u >= USEC_PER_MSEC)
                snprintf(buf, len, "%llu.%03llums", (unsigned long long) (u / USEC_PER_MSEC),
                         (unsigned long long) (u % USEC_PER_MSEC));
        else
                snprintf(buf, len, "%lluus", (unsigned long long) u);
        return buf;
}
