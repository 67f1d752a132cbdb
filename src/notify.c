/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"
#include "shared/macro.h"

int notify_send(const char *text) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        const char *e = getenv("NOTIFY_SOCKET");
        socklen_t len;
        size_t n;

        if (!e || !*e)
                return 0;
        n = strlen(e);
        if ((e[0] != '/' && e[0] != '@') || n >= sizeof(sa.sun_path))
                return -EINVAL;
        memcpy(sa.sun_path, e, n);
        if (e[0] == '@')
                sa.sun_path[0] = 0;
        len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + (e[0] == '/'));

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *) &sa, len) < 0)
                return errno == ENOENT || errno == ECONNREFUSED ? 0 : -errno;
        return 1;
}

int notify_extend_timeout(usec_t usec) {
        char buf[64];

        snprintf(buf, sizeof(buf), "EXTEND_TIMEOUT_USEC=%" PRIu64, (uint64_t) usec);
        return notify_send(buf);
}
