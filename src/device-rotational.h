/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The "rotational" device class, read off the sample's own process (review O, O9). A disk's
 * queue/rotational is read under its queue's limits lock (Linux 6.11+), which sd_revalidate_disk()
 * holds across its SCSI commands: a USB disk reset or pulled while it revalidates, or one in SCSI
 * error handling, holds it for the commands' timeouts times their retries, tens of seconds. So the
 * classifier only lists the disks (DEVICE_ROTATIONAL_DEFER, DeviceInfo.rotational_disks), one bounded
 * child (shared/bounded-child.h) reads the attribute of each, and the answers are applied to every
 * device that lists the disk. A disk without an answer (the bound passed, the child died, an
 * unreadable attribute) leaves the class unknown on every device of it: policy_match() then takes a
 * Device=rotational rule as neither proven to match nor not to (a skip rule is passed over).
 */

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "shared/time-util.h"

#define DEVICE_ROTATIONAL_QUERY_MAX 1024U

typedef struct DeviceRotationalQuery {
        const char *disk; /* in: the disk's sysfs directory, relative to the sysfs root */
        int value;        /* out: 1 rotational, 0 not; or a negative errno: -ENOENT missing or
                           * unreadable, -EBADMSG not a number, -ETIMEDOUT no answer in time,
                           * -EPROTO the child died first, -E2BIG not asked (beyond the bound) */
} DeviceRotationalQuery;

/* The child's answer to one query, as it travels on the pipe. */
typedef struct DeviceRotationalRecord {
        uint32_t index; /* position in the query list */
        int32_t value;  /* 1, 0 or a negative errno */
} DeviceRotationalRecord;

typedef struct DeviceRotationalRun {
        DeviceRotationalQuery *q;
        size_t n;
        size_t done; /* records applied */
} DeviceRotationalRun;

/* The parent's side of the pipe (a BoundedChildFeed, pure): applies the whole records in buf beyond
 * those applied. 1 when every query is answered, 0 to wait for more, -EBADMSG for a record out of
 * order or with a value that is neither 0, 1 nor a negative errno. */
int device_rotational_feed(const char *buf, size_t size, void *userdata);

/* Answers q[0..n) for the disks below sysfs_fd in one child bounded by timeout; the parent never
 * opens an attribute. A query without an answer gets the reason as its value (the child's failure
 * included: the answer is optional, it never fails the caller); those beyond
 * DEVICE_ROTATIONAL_QUERY_MAX get -E2BIG and are not asked. Returns 0, or -EBADF without a sysfs_fd
 * (every value then -EBADF). */
int device_rotational_query(int sysfs_fd, DeviceRotationalQuery *q, size_t n, usec_t timeout);

/* Applies the answers in q[0..n), sorted by disk (strcmp), to d: the class when a disk it lists reads
 * 1; unknown when none does and one has no answer (or is not among q); known absent when every one
 * reads 0. A device that lists no disk is left as it is. Pure. */
void device_info_apply_rotational(DeviceInfo *d, const DeviceRotationalQuery *q, size_t n);
