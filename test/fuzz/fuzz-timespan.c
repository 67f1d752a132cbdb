/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Fuzzes parse_timespan() on the input as a string and format_timespan() on the parsed value and
 * on the first 8 input bytes taken as a raw usec_t, into buffers of every size up to
 * FORMAT_TIMESPAN_MAX (ASan catches a write past a short buffer). A formatted value must parse back
 * and (format keeps milliseconds only above a second) land within 1 ms below the original.
 */

#include <errno.h>

#include "fuzz.h"
#include "shared/time-util.h"

static void format_all_sizes(usec_t u) {
        char full[FORMAT_TIMESPAN_MAX];
        usec_t back;

        format_timespan(full, sizeof(full), u);
        FUZZ_ASSERT(strnlen(full, sizeof(full)) < sizeof(full));

        for (size_t len = 1; len <= FORMAT_TIMESPAN_MAX; len++) {
                char *buf = malloc(len);    /* exact size, so ASan sees any overflow */

                if (!buf)
                        return;
                format_timespan(buf, len, u);
                FUZZ_ASSERT(strlen(buf) < len);
                FUZZ_ASSERT(strncmp(buf, full, len - 1) == 0);
                free(buf);
        }

        if (u == USEC_INFINITY)
                return;
        FUZZ_ASSERT(parse_timespan(full, &back) == 0);
        FUZZ_ASSERT(back <= u && u - back < USEC_PER_MSEC);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s;
        usec_t u = 0x55aa55aa;
        int r;

        if (size >= sizeof(usec_t)) {
                usec_t raw;

                memcpy(&raw, data, sizeof(raw));
                format_all_sizes(raw);
        }

        s = fuzz_strndup(data, size);
        if (!s)
                return 0;
        r = parse_timespan(s, &u);
        FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r == 0) {
                /* USEC_INFINITY is reserved: a parsed span is always finite. */
                FUZZ_ASSERT(u != USEC_INFINITY);
                format_all_sizes(u);
        } else
                FUZZ_ASSERT(u == 0x55aa55aa);       /* untouched on failure */
        free(s);
        return 0;
}
