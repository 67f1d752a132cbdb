/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel-knob.h"
#include "shared/fileio.h"
#include "shared/lock-util.h"
#include "shared/macro.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

/* Directory entries records_tmp_remove() looks at, at most. */
#define KNOB_TMP_SCAN_MAX 256U

int knob_parse(const char *text, size_t size, int *ret_value) {
        if (!text)
                return -EINVAL;

        /* Exactly "0" or "1", one optional trailing newline: sysfs prints "%d\n". */
        if (size == 2 && text[1] != '\n')
                return -EBADMSG;
        if (size != 1 && size != 2)
                return -EBADMSG;
        if (text[0] != '0' && text[0] != '1')
                return -EBADMSG;

        *ret_value = text[0] - '0';
        return 0;
}

static int read_value_at(int dir_fd, const char *path, ReadFullFlags flags, int *ret_value) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r, v;

        r = read_full_file_at_flags(dir_fd, path, KNOB_FILE_MAX, flags, &buf, &size);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;

        r = knob_parse(buf, size, &v);
        if (r < 0)
                return r;

        *ret_value = v;
        return 0;
}

/* knob_keep_open()'s fd, -EBADF when none, and the file it was opened on: a child that closed its
 * fds may have the number for another file (knob_keep_forget()). */
static int reserve_fd = -EBADF;
static dev_t reserve_dev;
static ino_t reserve_ino;

int knob_keep_open(const char *sysfs) {
        _cleanup_free_ char *path = NULL;
        struct stat st;
        int fd;

        if (reserve_fd >= 0)
                return 0;
        if (asprintf(&path, "%s/" KNOB_SYSFS_PATH, sysfs) < 0)
                return -ENOMEM;
        fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0) {
                safe_close(fd);
                return negative_errno();
        }
        reserve_fd = fd;
        reserve_dev = st.st_dev;
        reserve_ino = st.st_ino;
        return 0;
}

void knob_keep_forget(void) {
        reserve_fd = -EBADF;
}

/* Whether an open of the knob that failed with error may be made up for by the fd held open, which
 * must still be the knob's. */
static bool use_reserve(int sysfs_fd, int error) {
        struct stat st;

        if (reserve_fd < 0 || !(sysfs_fd < 0 || error == -EMFILE || error == -ENFILE || error == -ENOMEM))
                return false;
        return fstat(reserve_fd, &st) >= 0 && st.st_dev == reserve_dev && st.st_ino == reserve_ino;
}

static int reserve_read(int *ret_value) {
        char buf[KNOB_FILE_MAX];
        ssize_t n;

        do
                n = pread(reserve_fd, buf, sizeof buf, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        return knob_parse(buf, (size_t) n, ret_value);
}

int knob_read(int sysfs_fd, int *ret_value) {
        int r;

        r = sysfs_fd < 0 ? -EBADF : read_value_at(sysfs_fd, KNOB_SYSFS_PATH, 0, ret_value);
        return r < 0 && use_reserve(sysfs_fd, r) ? reserve_read(ret_value) : r;
}

int knob_record_read(int state_dir_fd, int *ret_value) {
        return read_value_at(state_dir_fd, KNOB_RECORD_FILE, READ_FULL_STATE, ret_value);
}

int knob_write(int sysfs_fd, int value) {
        _cleanup_close_ int fd = -EBADF;
        char buf[2] = { value == 1 ? '1' : '0', '\n' };
        ssize_t n;

        if (value != 0 && value != 1)
                return -EINVAL;

        /* No O_CREAT: the knob must already exist. O_TRUNC is what a shell's "echo 0 >" does; sysfs
         * ignores it, a fixture file gets its old content replaced. */
        fd = sysfs_fd < 0 ? -EBADF
                          : openat(sysfs_fd, KNOB_SYSFS_PATH,
                                   O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0) {
                int r = sysfs_fd < 0 ? -EBADF : negative_errno();

                if (!use_reserve(sysfs_fd, r))
                        return r;
                /* both values are two bytes: the reserved fd's text is replaced whole */
                do
                        n = pwrite(reserve_fd, buf, sizeof(buf), 0);
                while (n < 0 && errno == EINTR);
        } else
                do
                        n = write(fd, buf, sizeof(buf));
                while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != sizeof(buf))
                return -EIO;

        return 0;
}

int knob_fail_safe(int sysfs_fd) {
        int value = -1, r;

        r = knob_read(sysfs_fd, &value);
        if (r == -ENOENT || (r >= 0 && value == KNOB_SAFE_VALUE))
                return 0;
        r = knob_write(sysfs_fd, KNOB_SAFE_VALUE);
        return r == -ENOENT ? 0 : r;
}

/* Creates the record holding 'value' unless one exists already (-EEXIST then). Atomic: readers see
 * either no record or a complete one, and two racing runs cannot both create it. */
static int record_create(int state_dir_fd, int value, bool replace) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        char buf[2] = { value == 1 ? '1' : '0', '\n' };
        ssize_t n;
        int r;

        if (asprintf(&tmp, "%s.tmp.%d", KNOB_RECORD_FILE, (int) getpid()) < 0)
                return -ENOMEM;

        fd = openat(state_dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return negative_errno();

        do
                n = write(fd, buf, sizeof(buf));
        while (n < 0 && errno == EINTR);
        if (n < 0 || (size_t) n != sizeof(buf)) {
                r = n < 0 ? negative_errno() : -EIO;
                goto fail;
        }
        fd = safe_close(fd);

        if (replace) {
                if (renameat(state_dir_fd, tmp, state_dir_fd, KNOB_RECORD_FILE) < 0) {
                        r = negative_errno();
                        goto fail;
                }
                return 0;
        }

        if (renameat2(state_dir_fd, tmp, state_dir_fd, KNOB_RECORD_FILE, RENAME_NOREPLACE) >= 0)
                return 0;
        if (errno != EINVAL && errno != ENOSYS) {
                r = negative_errno();
                goto fail;
        }

        /* Filesystem without RENAME_NOREPLACE: link(2) never replaces either. */
        if (linkat(state_dir_fd, tmp, state_dir_fd, KNOB_RECORD_FILE, 0) < 0) {
                r = negative_errno();
                goto fail;
        }
        (void) unlinkat(state_dir_fd, tmp, 0);
        return 0;

fail:
        (void) unlinkat(state_dir_fd, tmp, 0);
        return r;
}

/* The knob and its record change together (review I, I1): knob_save_and_set() (the late pass,
 * under the state lock) and knob_restore() (restore-knob, which runs without the state lock: a
 * manual run may hold it) each hold an flock(2) of the state directory itself for their few system
 * calls on tmpfs and sysfs. Without it a restore could read the record just made, find the knob
 * still at the original, remove the record, and the late pass then write 0: the knob off, and no
 * record that anything would ever put back. A holder stopped in between is waited for at most
 * wait; then -EBUSY. Returns the fd that holds the lock. */
static int knob_lock(int state_dir_fd, usec_t wait) {
        _cleanup_close_ int fd = openat(state_dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r;

        if (fd < 0)
                return negative_errno();
        r = flock_until(fd, usec_add(now(CLOCK_MONOTONIC), wait), KNOB_LOCK_POLL_USEC);
        return r < 0 ? r : TAKE_FD(fd);
}

static const char *gate_closed(const KnobGate *gate, int new_value) {
        if (!gate || new_value == KNOB_SAFE_VALUE)
                return NULL;
        return gate->closed(gate->userdata);
}

int knob_save_and_set(int sysfs_fd, int state_dir_fd, int new_value, usec_t lock_wait) {
        return knob_save_and_set_gated(sysfs_fd, state_dir_fd, new_value, lock_wait, NULL, NULL);
}

int knob_save_and_set_gated(int sysfs_fd, int state_dir_fd, int new_value, usec_t lock_wait,
                            const KnobGate *gate, const char **ret_why) {
        _cleanup_close_ int lock_fd = -EBADF;
        const char *why;
        int current, recorded, r;

        if (new_value != 0 && new_value != 1)
                return -EINVAL;
        lock_fd = knob_lock(state_dir_fd, lock_wait);
        if (lock_fd < 0)
                return lock_fd;
        why = gate_closed(gate, new_value);
        if (why) {
                if (ret_why)
                        *ret_why = why;
                return -ESTALE;
        }

        r = knob_read(sysfs_fd, &current);
        if (r < 0)
                return r;

        r = knob_record_read(state_dir_fd, &recorded);
        if (r == -ENOENT) {
                if (current == new_value)
                        return 0; /* nothing to change, nothing to record */

                r = record_create(state_dir_fd, current, /* replace= */ false);
                if (r == -EEXIST) {
                        /* A concurrent run recorded the original first and its record wins, but
                         * only if it is a readable record (not, say, a dangling symlink). */
                        if (knob_record_read(state_dir_fd, &recorded) < 0)
                                return -EEXIST;
                } else if (r < 0)
                        return r;
        } else if (r == -EBADMSG) {
                /* Garbled record: the true original is unknown, the current value may be ours. */
                r = record_create(state_dir_fd, KNOB_SAFE_VALUE, /* replace= */ true);
                if (r < 0)
                        return r;
        } else if (r < 0)
                return r;
        /* else: a record from an interrupted run exists and holds the original; keep it. */

        if (current == new_value)
                return 0;

        r = knob_write(sysfs_fd, new_value);
        if (r < 0)
                return r;
        /* Closed by now: the write may have come after the hook gave up, and the restores after it. */
        why = gate_closed(gate, new_value);
        if (why) {
                if (ret_why)
                        *ret_why = why;
                r = knob_write(sysfs_fd, KNOB_SAFE_VALUE);
                return r < 0 ? r : -ECANCELED;
        }
        return 1;
}

/* KNOB_RECORD_FILE ".tmp.PID" of record_create()s that were killed before their rename. Bounded:
 * the state directory's first entries only. */
static void records_tmp_remove(int state_dir_fd) {
        _cleanup_(closedirp) DIR *d = NULL;
        unsigned n = 0;
        struct dirent *de;

        if (opendir_at(state_dir_fd, ".", &d) < 0)
                return;
        while ((de = readdir(d)) && n++ < KNOB_TMP_SCAN_MAX)
                if (startswith(de->d_name, KNOB_RECORD_FILE ".tmp."))
                        (void) unlinkat(state_dir_fd, de->d_name, 0);
}

int knob_restore(int sysfs_fd, int state_dir_fd, usec_t lock_wait, int *ret_value) {
        KnobRestore result = KNOB_RESTORE_ORIGINAL;
        _cleanup_close_ int lock_fd = -EBADF;
        int original, current, r;

        lock_fd = knob_lock(state_dir_fd, lock_wait);
        if (lock_fd < 0) {
                /* A holder that does not let go, or no lock to be had at all (EMFILE, ENOLCK, a
                 * state directory flock(2) refuses): the kernel's sync on, the record left for the
                 * next restore. Never a restore that leaves a 0 standing. */
                r = knob_write(sysfs_fd, KNOB_SAFE_VALUE);
                return r < 0 && r != -ENOENT ? r : lock_fd;
        }
        r = knob_record_read(state_dir_fd, &original);
        if (r == -ENOENT)
                return KNOB_RESTORE_NOTHING;
        if (r == -EBADMSG) {
                original = KNOB_SAFE_VALUE;
                result = KNOB_RESTORE_SAFE;
        } else if (r < 0) {
                /* A record that cannot be read (EIO, ENOMEM, EACCES): it may say we turned the
                 * kernel's sync off; turn it on, keep the record. */
                (void) knob_write(sysfs_fd, KNOB_SAFE_VALUE);
                return r;
        }

        r = knob_read(sysfs_fd, &current);
        if (r == -ENOENT) {
                /* The knob is gone: there is nothing to put back and never will be. */
                (void) unlinkat(state_dir_fd, KNOB_RECORD_FILE, 0);
                return -ENOENT;
        }
        if (r < 0 || current != original) {
                /* Unreadable or different: write the original either way. */
                r = knob_write(sysfs_fd, original);
                if (r < 0)
                        return r;
        } else if (result == KNOB_RESTORE_ORIGINAL)
                result = KNOB_RESTORE_UNCHANGED;

        /* Only now that the original is back may the record go, and the temporary records of passes
         * killed while they made theirs (under this lock nobody is making one). */
        if (unlinkat(state_dir_fd, KNOB_RECORD_FILE, 0) < 0 && errno != ENOENT)
                return negative_errno();
        records_tmp_remove(state_dir_fd);

        if (ret_value)
                *ret_value = original;
        return result;
}

bool knob_look_stale(usec_t started, usec_t now) {
        return now < started || now - started > KNOB_LOOK_MAX;
}

int knob_decide(SyncOnSuspendMode mode, const KnobFacts *f, int *ret_new_value) {
        bool safe, off;

        if (!f)
                return -EINVAL;

        /* Nothing the kernel sync could still save may be left behind, and this pass must be the
         * last before it (a late pass whose hook gave up on it may run after the sleep). */
        safe = !f->unsynced && f->complete && !f->unexplained && !f->changed && !f->requester_gone;

        switch (mode) {
        case SYNC_ON_SUSPEND_KEEP:
                return 0;
        case SYNC_ON_SUSPEND_AUTO:
                /* A device proven stuck blocks the kernel's serial sync for as long as it stays
                 * stuck: the suspend would never happen, and what that sync would write after
                 * reaching it, never be written. So a hung device turns it off even if this pass
                 * left mounts out, if the unit's pass synced those (writes since are the window
                 * every pass leaves). */
                off = safe && ((f->covered && !f->records_on_disk && !f->other_hooks) ||
                               (f->hung && (f->covered || f->unit_pass)));
                break;
        case SYNC_ON_SUSPEND_OFF:
                off = safe && (f->covered || f->unit_pass);
                break;
        default:
                return -EINVAL;
        }

        if (!off)
                return 0;

        *ret_new_value = 0;
        return 1;
}
