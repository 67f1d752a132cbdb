/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/proc-util.h"
#include "shared/string-util.h"

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

int proc_fdinfo_mnt_ino(int proc_fd, int fd, int *ret_mnt_id, uint64_t *ret_ino) {
        _cleanup_free_ char *text = NULL;
        char path[64], *line, *save = NULL;
        bool has_mnt = false, has_ino = false;
        uint64_t mnt = 0, ino = 0;
        int r;

        snprintf(path, sizeof(path), "self/fdinfo/%d", fd);
        r = read_full_file_at(proc_fd, path, 64 * 1024, &text, NULL);
        if (r < 0)
                return r;
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (startswith(line, "mnt_id:"))
                        has_mnt = safe_atou64(line + strspn(line + 7, " \t") + 7, &mnt) >= 0 &&
                                  mnt <= INT_MAX;
                else if (startswith(line, "ino:"))
                        has_ino = safe_atou64(line + strspn(line + 4, " \t") + 4, &ino) >= 0;
        }
        if (!has_mnt)
                return -EBADMSG;
        if (!has_ino)
                return -EOPNOTSUPP; /* before Linux 5.14 */
        *ret_mnt_id = (int) mnt;
        *ret_ino = ino;
        return 0;
}

int proc_fd_is_procfs(int fd) {
        struct statfs sfs;

        if (fstatfs(fd, &sfs) < 0)
                return negative_errno();
        return sfs.f_type == PROC_SUPER_MAGIC;
}

int proc_maps_find(const char *text, size_t size, const char *name, uintptr_t *ret_start,
                   uintptr_t *ret_end) {
        size_t name_len = strlen(name);

        for (const char *p = text, *end = text + size; p < end;) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)) ?: end;
                size_t len = (size_t) (eol - p);

                /* "START-END PERMS OFFSET DEV INODE    NAME": the name last, after spaces */
                if (len > name_len && memcmp(eol - name_len, name, name_len) == 0 &&
                    eol[-name_len - 1] == ' ') {
                        unsigned long long lo, hi;
                        char line[64];
                        int n = 0;

                        (void) snprintf(line, sizeof line, "%.*s", (int) MIN(len, sizeof line - 1), p);
                        if (sscanf(line, "%llx-%llx %n", &lo, &hi, &n) != 2 || n == 0 || lo >= hi ||
                            hi > UINTPTR_MAX)
                                return -EBADMSG;
                        *ret_start = (uintptr_t) lo;
                        *ret_end = (uintptr_t) hi;
                        return 0;
                }
                p = eol + 1;
        }
        return -ENOENT;
}
