/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The kernel's own suspend sync as the kernel log tells it: after "PM: suspend entry" (or a
 * hibernation entry), "Filesystems sync: 0.004 seconds" (kernel/power/main.c, ksys_sync_helper();
 * older kernels' "PM: " prefix accepted) when it synced; no such line before
 * the freezer starts when /sys/power/sync_on_suspend was 0. Parsing is pure (the /dev/kmsg record
 * format, "prio,seq,usec,flags;text"); the loader reads /dev/kmsg without blocking and bounded.
 */

#include <stdbool.h>
#include <stddef.h>

#include "shared/time-util.h"

#define KMSG_READ_MAX (4U * 1024U * 1024U)

typedef enum KernelSyncState {
        KERNEL_SYNC_UNKNOWN, /* no sleep entry in what the log still holds */
        KERNEL_SYNC_DONE,    /* it synced, for 'usec' */
        KERNEL_SYNC_SKIPPED, /* the sleep began and the freezer started without a sync */
} KernelSyncState;

typedef struct KernelSync {
        KernelSyncState state;
        usec_t usec;     /* KERNEL_SYNC_DONE */
        char action[32]; /* "suspend", "hibernation", "" */
} KernelSync;

/* The last sleep entry in text (records, one per line, as /dev/kmsg gives them) and what the
 * kernel's sync did in it. Pure; never fails. */
KernelSync kmsg_last_sleep_sync(const char *text, size_t size);

/* Reads the records /dev/kmsg holds below root_fd (at most KMSG_READ_MAX bytes, never blocking).
 * -EACCES/-EPERM unprivileged (dmesg_restrict), -ENOENT without it. */
int kmsg_read(int root_fd, char **ret, size_t *ret_size);
