/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Time: one unit (usec_t, microseconds). Deadlines use CLOCK_MONOTONIC, records CLOCK_REALTIME.
 * Parsing and formatting of systemd-style time spans ("500ms", "10s", "1min 30s").
 */

#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;

#define USEC_INFINITY ((usec_t) UINT64_MAX)
#define USEC_PER_SEC ((usec_t) 1000000ULL)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define USEC_PER_MINUTE ((usec_t) (60ULL * USEC_PER_SEC))
#define NSEC_PER_USEC ((uint64_t) 1000ULL)

#define FORMAT_TIMESPAN_MAX 64

usec_t now(clockid_t clock);
/* CLOCK_MONOTONIC and CLOCK_BOOTTIME of one moment, their difference (how long this boot has been
 * suspended) within NOW_BOOT_PAIR_SLACK: CLOCK_BOOTTIME is read between two reads of CLOCK_MONOTONIC,
 * again (a few times at most) while those are further apart, as when the process or its virtual
 * CPU was preempted between them. *ret_boottime is never below *ret_monotonic. */
#define NOW_BOOT_PAIR_SLACK ((usec_t) 50ULL)
void now_monotonic_boottime(usec_t *ret_monotonic, usec_t *ret_boottime);
usec_t timespec_load(const struct timespec *ts);
struct timespec *timespec_store(struct timespec *ts, usec_t u);

/* Parses "500ms", "10s", "1min", "1h 2min", "1.5s", ".5s"; a bare number is seconds. Rejects what
 * systemd's parse_time() rejects ("1.5.5s", "5..5s", "5.", "3.s", a sign), and "infinity".
 * Returns 0 and writes *ret, or -EINVAL / -ERANGE. */
int parse_timespan(const char *s, usec_t *ret);

/* Formats like "1.234s", "250ms", "12us", "infinity"; returns buf. */
const char *format_timespan(char *buf, size_t len, usec_t u);

/* a + b, saturating at USEC_INFINITY. */
static inline usec_t usec_add(usec_t a, usec_t b) {
        return a > USEC_INFINITY - b ? USEC_INFINITY : a + b;
}
