/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "devnum-util.h"
#include "parse-util.h"

char *format_devnum(char buf[static DEVNUM_STR_MAX], dev_t d) {
        (void) snprintf(buf, DEVNUM_STR_MAX, "%u:%u", major(d), minor(d));
        return buf;
}

int parse_devnum(const char *s, dev_t *ret) {
        const char *colon;
        unsigned ma, mi;
        char buf[16];
        int r;

        if (!s)
                return -EINVAL;
        colon = strchr(s, ':');
        if (!colon || (size_t) (colon - s) >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, s, (size_t) (colon - s));
        buf[colon - s] = 0;
        r = safe_atou(buf, &ma);
        if (r < 0)
                return r;
        r = safe_atou(colon + 1, &mi);
        if (r < 0)
                return r;
        if (major(makedev(ma, mi)) != ma || minor(makedev(ma, mi)) != mi)
                return -ERANGE;
        *ret = makedev(ma, mi);
        return 0;
}
