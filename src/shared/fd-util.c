/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
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

int close_all_fds_but(int fds[], size_t n) {
        int tmp[FDS_KEEP_MAX], r = 0;

        assert(n <= FDS_KEEP_MAX);
        /* All out of the way first: any may be at one of the numbers another is moved to. */
        for (size_t i = 0; i < n; i++)
                tmp[i] = fds[i] < 0 ? fds[i] : fcntl(fds[i], F_DUPFD_CLOEXEC, 3 + (int) n);
        for (size_t i = 0; i < n; i++) {
                int target = 3 + (int) i;

                if (fds[i] >= 0 && (tmp[i] < 0 || dup3(tmp[i], target, O_CLOEXEC) < 0)) {
                        if (r == 0)
                                r = errno > 0 ? -errno : -EBADF;
                        fds[i] = -EBADF;
                } else if (fds[i] >= 0)
                        fds[i] = target;
                if (fds[i] < 0)
                        (void) close(target);
        }
        close_all_fds_from(3 + (int) n);
        return r;
}
