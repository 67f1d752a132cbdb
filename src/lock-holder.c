/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lock-holder.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/proc-util.h"
#include "state.h"

static const char *const kind_names[_LOCK_HOLDER_KIND_MAX] = {
        [LOCK_HOLDER_MANUAL] = "manual",
        [LOCK_HOLDER_DAEMON] = "daemon",
};

const char *lock_holder_kind_name(LockHolderKind k) {
        return k >= 0 && k < _LOCK_HOLDER_KIND_MAX ? kind_names[k] : NULL;
}

const char *lock_holder_kind_describe(LockHolderKind k) {
        static const char *const d[_LOCK_HOLDER_KIND_MAX] = {
                [LOCK_HOLDER_MANUAL] = "a manual run",
                [LOCK_HOLDER_DAEMON] = "the daemon's pass",
        };

        return k >= 0 && k < _LOCK_HOLDER_KIND_MAX ? d[k] : NULL;
}

int lock_holder_format(const LockHolder *h, char **ret) {
        const char *k = lock_holder_kind_name(h->kind);

        if (!k || h->pid <= 0)
                return -EINVAL;
        if (asprintf(ret, "%d %" PRIu64 " %s %" PRIu64 "\n", (int) h->pid, h->start_time, k,
                     (uint64_t) h->until) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

int lock_holder_parse(const char *text, LockHolder *ret) {
        _cleanup_free_ char *again = NULL;
        unsigned long long until, start;
        char kind[16];
        LockHolder h;
        int pid;

        if (sscanf(text, "%d %llu %15s %llu", &pid, &start, kind, &until) != 4)
                return -EBADMSG;
        h = (LockHolder) { .pid = pid, .start_time = start, .kind = _LOCK_HOLDER_KIND_MAX, .until = until };
        for (LockHolderKind k = 0; k < _LOCK_HOLDER_KIND_MAX; k++)
                if (streq(kind, kind_names[k]))
                        h.kind = k;
        /* Only the line as written: no sign, space or anything after it. */
        if (lock_holder_format(&h, &again) < 0 || !streq(again, text))
                return -EBADMSG;
        *ret = h;
        return 0;
}

/* One line of /proc/locks (fs/locks.c lock_get_status()): "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INO
 * START END", major and minor in hex; a waiter's line has "->" after the number. */
int lock_holder_proc_locks_find(const char *text, dev_t dev, ino_t ino, pid_t *ret) {
        for (const char *l = text; *l;) {
                const char *eol = strchrnul(l, '\n');
                char type[16], arrow[4];
                unsigned maj, min;
                unsigned long long i;
                long long id;
                int pid;

                if (eol > l) {
                        if (sscanf(l, "%lld: %3s", &id, arrow) != 2)
                                return -EBADMSG;
                        if (!streq(arrow, "->")) {
                                if (sscanf(l, "%lld: %15s %*s %*s %d %x:%x:%llu", &id, type, &pid, &maj, &min,
                                           &i) != 6)
                                        return -EBADMSG;
                                if (streq(type, "FLOCK") && makedev(maj, min) == dev &&
                                    i == (unsigned long long) ino) {
                                        *ret = pid;
                                        return 0;
                                }
                        }
                }
                l = *eol ? eol + 1 : eol;
        }
        return -ENOENT;
}

int lock_holder_write(int state_dir_fd, LockHolderKind kind, usec_t until) {
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;
        LockHolder h = { .pid = getpid(), .kind = kind, .until = until };
        int r;

        if (proc_fd < 0)
                return negative_errno();
        r = proc_pid_start_time(proc_fd, h.pid, &h.start_time, NULL);
        if (r < 0)
                return r;
        r = lock_holder_format(&h, &text);
        if (r < 0)
                return r;
        return write_file_atomic_at(state_dir_fd, LOCK_HOLDER_FILE, text, strlen(text));
}

int lock_holder_pid(int state_dir_fd, const char *proc, pid_t *ret) {
        _cleanup_free_ char *locks = NULL, *path = NULL;
        struct stat st;
        int r;

        if (fstatat(state_dir_fd, STATE_LOCK_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        if (asprintf(&path, "%s/locks", proc) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        r = read_full_file_at(AT_FDCWD, path, LOCK_HOLDER_PROC_LOCKS_MAX, &locks, NULL);
        if (r < 0)
                return r;
        return lock_holder_proc_locks_find(locks, st.st_dev, st.st_ino, ret);
}

int lock_holder_read(int state_dir_fd, const char *proc, LockHolder *ret) {
        _cleanup_close_ int proc_fd = -EBADF;
        _cleanup_free_ char *mark = NULL;
        uint64_t start;
        LockHolder h;
        pid_t pid;
        int r;

        r = read_full_file_at_flags(state_dir_fd, LOCK_HOLDER_FILE, 96, READ_FULL_STATE, &mark, NULL);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        r = lock_holder_parse(mark, &h);
        if (r < 0)
                return r;
        r = lock_holder_pid(state_dir_fd, proc, &pid);
        if (r < 0)
                return r;
        if (pid != h.pid)
                return -ENOENT; /* a mark left behind; the holder has not written its own yet */
        /* ... nor is it a mark whose PID was used again by a holder that writes none (review AG, F2) */
        proc_fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return negative_errno();
        r = proc_pid_start_time(proc_fd, pid, &start, NULL);
        if (r < 0)
                return r;
        if (start != h.start_time)
                return -ENOENT;
        *ret = h;
        return 0;
}
