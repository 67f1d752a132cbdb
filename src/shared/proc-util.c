/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/proc-util.h"

int proc_pid_start_time(int proc_fd, pid_t pid, uint64_t *ret_start_time, char *ret_state) {
        _cleanup_free_ char *text = NULL;
        char path[32], *p, *save = NULL;
        uint64_t start;
        char state;
        int r;

        snprintf(path, sizeof(path), "%d/stat", (int) pid);
        r = read_full_file_at(proc_fd, path, 4096, &text, NULL);
        if (r < 0)
                return r == -ENOENT || r == -ESRCH ? -ENOENT : r;
        /* "PID (COMM) S ..." where COMM may hold anything: fields start after the last ')'. */
        p = strrchr(text, ')');
        if (!p || p[1] != ' ')
                return -EBADMSG;
        p += 2;
        state = *p;
        /* Field 3 is the state; field 22 the start time: 19 more words. */
        p = strtok_r(p, " ", &save);
        for (int field = 3; p && field < 22; field++)
                p = strtok_r(NULL, " ", &save);
        if (!p || safe_atou64(p, &start) < 0)
                return -EBADMSG;
        if (ret_start_time)
                *ret_start_time = start;
        if (ret_state)
                *ret_state = state;
        return 0;
}
