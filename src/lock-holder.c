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
        if (asprintf(ret, "%d %s %" PRIu64 "\n", (int) h->pid, k, (uint64_t) h->until) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

int lock_holder_parse(const char *text, LockHolder *ret) {
        _cleanup_free_ char *again = NULL;
        unsigned long long until;
        char kind[16];
        LockHolder h;
        int pid;

        if (sscanf(text, "%d %15s %llu", &pid, kind, &until) != 3)
                return -EBADMSG;
        h = (LockHolder) { .pid = pid, .kind = _LOCK_HOLDER_KIND_MAX, .until = until };
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
        _cleanup_free_ char *text = NULL;
        int r;

        r = lock_holder_format(&(LockHolder) { .pid = getpid(), .kind = kind, .until = until }, &text);
        if (r < 0)
                return r;
        return write_file_atomic_at(state_dir_fd, LOCK_HOLDER_FILE, text, strlen(text));
}

int lock_holder_pid(int state_dir_fd, const char *proc_locks, pid_t *ret) {
        _cleanup_free_ char *locks = NULL;
        struct stat st;
        int r;

        if (fstatat(state_dir_fd, STATE_LOCK_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        r = read_full_file_at(AT_FDCWD, proc_locks, LOCK_HOLDER_PROC_LOCKS_MAX, &locks, NULL);
        if (r < 0)
                return r;
        return lock_holder_proc_locks_find(locks, st.st_dev, st.st_ino, ret);
}

int lock_holder_read(int state_dir_fd, const char *proc_locks, LockHolder *ret) {
        _cleanup_free_ char *mark = NULL;
        LockHolder h;
        pid_t pid;
        int r;

        r = read_full_file_at_flags(state_dir_fd, LOCK_HOLDER_FILE, 64, READ_FULL_STATE, &mark, NULL);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        r = lock_holder_parse(mark, &h);
        if (r < 0)
                return r;
        r = lock_holder_pid(state_dir_fd, proc_locks, &pid);
        if (r < 0)
                return r;
        if (pid != h.pid)
                return -ENOENT; /* a mark left behind; the holder has not written its own yet */
        *ret = h;
        return 0;
}
