/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "loop-attach.h"

int loop_attach(const char *file, char *ret_path, size_t size) {
        int ctl, n, loop = -EBADF, backing, r = -EBUSY;

        ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        if (ctl < 0)
                return -errno;
        backing = open(file, O_RDWR | O_CLOEXEC);
        for (int try = 0; backing >= 0 && try < 10 && r == -EBUSY; try++) {
                n = ioctl(ctl, LOOP_CTL_GET_FREE);
                if (n < 0) {
                        r = -errno;
                        break;
                }
                snprintf(ret_path, size, "/dev/loop%d", n);
                loop = open(ret_path, O_RDWR | O_CLOEXEC);
                if (loop < 0) {
                        r = -errno;
                        break;
                }
                if (ioctl(loop, LOOP_SET_FD, backing) >= 0) {
                        /* Detached when its last fd closes: a test that aborts leaves no device. */
                        struct loop_info64 info = { .lo_flags = LO_FLAGS_AUTOCLEAR };

                        r = ioctl(loop, LOOP_SET_STATUS64, &info) < 0 ? -errno : 0;
                        if (r < 0) {
                                (void) ioctl(loop, LOOP_CLR_FD);
                                close(loop);
                                loop = -EBADF;
                                break;
                        }
                } else {
                        r = -errno;
                        close(loop);
                        loop = -EBADF;
                }
        }
        if (backing >= 0)
                close(backing);
        close(ctl);
        return r < 0 ? r : loop;
}
