/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"
#include "shared/macro.h"

/* The text of one record line ("prio,seq,usec,flags;text"): after the ';', or NULL (continuation
 * lines " KEY=value" and garbage). */
static const char *record_text(const char *line, size_t len, size_t *ret_len) {
        const char *semi = memchr(line, ';', len);

        if (!semi || line[0] == ' ' || !memchr(line, ',', (size_t) (semi - line)))
                return NULL;
        *ret_len = len - (size_t) (semi + 1 - line);
        return semi + 1;
}

static bool starts(const char *t, size_t n, const char *prefix) {
        size_t k = strlen(prefix);

        return n >= k && memcmp(t, prefix, k) == 0;
}

/* "N.MMM seconds" → usec; false when it does not parse. */
static bool parse_seconds(const char *t, size_t n, usec_t *ret) {
        char buf[64], *end;
        unsigned long long s, ms = 0;

        if (n >= sizeof buf)
                return false;
        memcpy(buf, t, n);
        buf[n] = 0;
        errno = 0;
        s = strtoull(buf, &end, 10);
        if (errno || end == buf)
                return false;
        if (*end == '.') {
                char *e2;
                ms = strtoull(end + 1, &e2, 10);
                if (e2 - (end + 1) != 3)
                        return false;
                end = e2;
        }
        if (!starts(end, strlen(end), " seconds"))
                return false;
        *ret = s * USEC_PER_SEC + ms * USEC_PER_MSEC;
        return true;
}

KernelSync kmsg_last_sleep_sync(const char *text, size_t size) {
        KernelSync k = {};
        const char *p = text, *end = text + size;
        bool in_entry = false;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t len = (size_t) ((nl ? nl : end) - p), n;
                const char *t = record_text(p, len, &n);

                p = nl ? nl + 1 : end;
                if (!t)
                        continue;
                if (starts(t, n, "PM: suspend entry")) {
                        k = (KernelSync) { .state = KERNEL_SYNC_UNKNOWN };
                        strcpy(k.action, "suspend");
                        in_entry = true;
                } else if (starts(t, n, "PM: hibernation: hibernation entry") ||
                           starts(t, n, "PM: hibernation entry")) {
                        k = (KernelSync) { .state = KERNEL_SYNC_UNKNOWN };
                        strcpy(k.action, "hibernation");
                        in_entry = true;
                } else if (in_entry &&
                           (starts(t, n, "Filesystems sync: ") || starts(t, n, "PM: Filesystems sync: "))) {
                        size_t skip = t[0] == 'P' ? 22 : 18;
                        usec_t u;

                        if (parse_seconds(t + skip, n - skip, &u)) {
                                k.state = KERNEL_SYNC_DONE;
                                k.usec = u;
                        }
                        in_entry = false;
                } else if (in_entry && (starts(t, n, "Freezing user space processes") ||
                                        starts(t, n, "Freezing remaining freezable tasks"))) {
                        k.state = KERNEL_SYNC_SKIPPED;
                        in_entry = false;
                }
        }
        return k;
}

int kmsg_read(int root_fd, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;

        fd = openat(root_fd, "dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        buf = malloc(KMSG_READ_MAX + 1);
        if (!buf)
                return -ENOMEM;
        /* /dev/kmsg returns one record per read() and EAGAIN at the end; a plain file (fixtures)
         * returns chunks and 0 at the end. EPIPE: a record was overwritten while we read; go on. */
        while (size < KMSG_READ_MAX) {
                ssize_t k = read(fd, buf + size, KMSG_READ_MAX - size);

                if (k < 0 && errno == EPIPE)
                        continue;
                if (k < 0 && (errno == EAGAIN || errno == EINVAL))
                        break; /* EINVAL: the next record does not fit what is left */
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                size += (size_t) k;
        }
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}
