/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <assert.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"

void close_all_fds_from(int first) {
        struct rlimit rl;
        int max = CLOSE_ALL_FDS_MAX;

        assert(first >= 3);
        if (close_range((unsigned) first, ~0U, 0) >= 0)
                return;
        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur != RLIM_INFINITY)
                max = (int) MIN(rl.rlim_cur, (rlim_t) CLOSE_ALL_FDS_MAX);
        for (int i = first; i < max; i++)
                (void) close(i);
}
