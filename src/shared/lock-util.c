/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <sys/file.h>

#include "shared/lock-util.h"
#include "shared/macro.h"

int flock_until(int fd, usec_t until, usec_t poll) {
        while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                usec_t n;

                if (errno == EINTR)
                        continue;
                if (errno != EWOULDBLOCK)
                        return negative_errno();
                n = now(CLOCK_MONOTONIC);
                if (n >= until)
                        return -EBUSY;
                (void) nanosleep(timespec_store(&(struct timespec) {}, MIN(until - n, poll)), NULL);
        }
        return 0;
}
