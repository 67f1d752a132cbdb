/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <sys/resource.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"

void close_all_fds_from(int first) {
        struct rlimit rl;
        int max = 65536;

        if (first < 0)
                first = 0;
        if (close_range((unsigned) first, ~0U, 0) >= 0)
                return;
        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur != RLIM_INFINITY)
                max = (int) MIN(rl.rlim_cur, (rlim_t) 65536);
        for (int i = first; i < max; i++)
                (void) close(i);
}
