/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Fuzzes meminfo_parse() on a NUL-terminated copy of the input. */

#include <errno.h>

#include "fuzz.h"
#include "meminfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Meminfo m = { .dirty_bytes = 0x5a5a5a5a };
        char *text;
        int r;

        text = fuzz_strndup(data, size);
        if (!text)
                return 0;
        r = meminfo_parse(text, &m);
        FUZZ_ASSERT(r >= 0 || r == -EBADMSG || r == -ENOMEM);
        if (r >= 0)
                FUZZ_ASSERT(m.has_dirty || m.has_writeback);
        free(text);
        return 0;
}
