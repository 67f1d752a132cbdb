/* SPDX-License-Identifier: GPL-2.0-or-later */

#include "wrap-bounded-child.h"

BoundedChildWork wrap_bounded_child_work;
usec_t wrap_bounded_child_timeout;

int __real_bounded_child_run(int keep_fd, usec_t timeout, size_t max_size, BoundedChildWork work,
                             BoundedChildFeed feed, void *userdata);
int __wrap_bounded_child_run(int keep_fd, usec_t timeout, size_t max_size, BoundedChildWork work,
                             BoundedChildFeed feed, void *userdata);

int __wrap_bounded_child_run(int keep_fd, usec_t timeout, size_t max_size, BoundedChildWork work,
                             BoundedChildFeed feed, void *userdata) {
        return __real_bounded_child_run(keep_fd, wrap_bounded_child_timeout ?: timeout, max_size,
                                        wrap_bounded_child_work ?: work, feed, userdata);
}
