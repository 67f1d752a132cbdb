/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "format-util.h"
#include "macro.h"

const char *format_bytes(char *buf, size_t len, uint64_t bytes) {
        static const char suffix[] = "KMGTPE";
        uint64_t factor = 1024;
        unsigned i = 0;

        if (bytes < 1024) {
                snprintf(buf, len, "%lluB", (unsigned long long) bytes);
                return buf;
        }
        while (i + 1 < sizeof(suffix) - 1 && bytes / factor >= 1024) {
                factor *= 1024;
                i++;
        }
        snprintf(buf, len, "%llu.%llu%c", (unsigned long long) (bytes / factor),
                 (unsigned long long) ((bytes % factor) * 10 / factor), suffix[i]);
        return buf;
}

const char *format_timestamp(char *buf, size_t len, usec_t t) {
        time_t sec = (time_t) (t / USEC_PER_SEC);
        struct tm tm;

        if (t == 0 || t == USEC_INFINITY || !localtime_r(&sec, &tm) ||
            strftime(buf, len, "%a %Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                snprintf(buf, len, "n/a");
        return buf;
}

#define USEC_PER_HOUR (60 * USEC_PER_MINUTE)
#define USEC_PER_DAY (24 * USEC_PER_HOUR)
#define USEC_PER_WEEK (7 * USEC_PER_DAY)
#define USEC_PER_MONTH (2629800ULL * USEC_PER_SEC)
#define USEC_PER_YEAR (31557600ULL * USEC_PER_SEC)

const char *format_relative(char *buf, size_t len, usec_t t, usec_t n) {
        const char *s;
        usec_t d;

        if (t == 0 || t == USEC_INFINITY) {
                snprintf(buf, len, "n/a");
                return buf;
        }
        if (n >= t)
                d = n - t, s = "ago";
        else
                d = t - n, s = "left";

#define U(x) ((unsigned long long) (x))
        if (d >= USEC_PER_YEAR)
                snprintf(buf, len, "%llu years %llu months %s", U(d / USEC_PER_YEAR),
                         U((d % USEC_PER_YEAR) / USEC_PER_MONTH), s);
        else if (d >= USEC_PER_MONTH)
                snprintf(buf, len, "%llu months %llu days %s", U(d / USEC_PER_MONTH),
                         U((d % USEC_PER_MONTH) / USEC_PER_DAY), s);
        else if (d >= USEC_PER_WEEK)
                snprintf(buf, len, "%llu weeks %llu days %s", U(d / USEC_PER_WEEK),
                         U((d % USEC_PER_WEEK) / USEC_PER_DAY), s);
        else if (d >= 2 * USEC_PER_DAY)
                snprintf(buf, len, "%llu days %s", U(d / USEC_PER_DAY), s);
        else if (d >= 25 * USEC_PER_HOUR)
                snprintf(buf, len, "1 day %lluh %s", U((d - USEC_PER_DAY) / USEC_PER_HOUR), s);
        else if (d >= 6 * USEC_PER_HOUR)
                snprintf(buf, len, "%lluh %s", U(d / USEC_PER_HOUR), s);
        else if (d >= USEC_PER_HOUR)
                snprintf(buf, len, "%lluh %llumin %s", U(d / USEC_PER_HOUR),
                         U((d % USEC_PER_HOUR) / USEC_PER_MINUTE), s);
        else if (d >= 5 * USEC_PER_MINUTE)
                snprintf(buf, len, "%llumin %s", U(d / USEC_PER_MINUTE), s);
        else if (d >= USEC_PER_MINUTE)
                snprintf(buf, len, "%llumin %llus %s", U(d / USEC_PER_MINUTE),
                         U((d % USEC_PER_MINUTE) / USEC_PER_SEC), s);
        else if (d >= USEC_PER_SEC)
                snprintf(buf, len, "%llus %s", U(d / USEC_PER_SEC), s);
        else if (d >= USEC_PER_MSEC)
                snprintf(buf, len, "%llums %s", U(d / USEC_PER_MSEC), s);
        else if (d > 0)
                snprintf(buf, len, "%lluus %s", U(d), s);
        else
                snprintf(buf, len, "now");
#undef U
        return buf;
}

const char *errno_to_name(int e) {
        if (e <= 0)
                return NULL;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
        return strerrorname_np(e);
#else
        static const struct {
                int e;
                const char *name;
        } table[] = {
                { EPERM, "EPERM" },         { ENOENT, "ENOENT" },
                { EINTR, "EINTR" },         { EIO, "EIO" },
                { ENXIO, "ENXIO" },         { EBADF, "EBADF" },
                { ECHILD, "ECHILD" },       { EAGAIN, "EAGAIN" },
                { ENOMEM, "ENOMEM" },       { EACCES, "EACCES" },
                { EBUSY, "EBUSY" },         { ENODEV, "ENODEV" },
                { ENOTDIR, "ENOTDIR" },     { EINVAL, "EINVAL" },
                { ENOSPC, "ENOSPC" },       { EROFS, "EROFS" },
                { ENOSYS, "ENOSYS" },       { ETIMEDOUT, "ETIMEDOUT" },
                { EDQUOT, "EDQUOT" },       { ENOTCONN, "ENOTCONN" },
                { ESTALE, "ESTALE" },       { ECONNABORTED, "ECONNABORTED" },
                { EHOSTDOWN, "EHOSTDOWN" },
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].e == e)
                        return table[i].name;
        return NULL;
#endif
}
