/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Human formats shared by every verb, as systemd writes them: bytes ("6.8M"), relative times
 * ("5min ago") and timestamps ("Tue 2026-12-01 10:43:38 UTC").
 */

#include <stddef.h>
#include <stdint.h>

#include "time-util.h"

#define FORMAT_BYTES_MAX 16
#define FORMAT_TIMESTAMP_MAX 64
#define FORMAT_RELATIVE_MAX 64

/* IEC units with one decimal, truncated: "0B", "512B", "1.0K", "6.8M", "16.0E". */
const char *format_bytes(char *buf, size_t len, uint64_t bytes);
/* "Tue 2026-12-01 10:43:38 UTC" in the local zone; "n/a" for 0 or USEC_INFINITY. */
const char *format_timestamp(char *buf, size_t len, usec_t t);
/* How long before n the time t was, systemd's way: "now", "850ms ago", "5min 3s ago", "2h 5min
 * ago", "3 days ago", and "left" instead of "ago" for a time after n; "n/a" for 0. */
const char *format_relative(char *buf, size_t len, usec_t t, usec_t n);
/* The errno's symbolic name ("EBUSY") for e > 0; NULL for none, or one not known. */
const char *errno_to_name(int e);
