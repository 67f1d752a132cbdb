/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Fuzzes bdi_stats_parse() on a NUL-terminated copy of the input. */

#include "bdi-stats.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        BdiStats s = {};
        char *text;
        int r;

        text = fuzz_strndup(data, size);
        if (!text)
                return 0;
        r = bdi_stats_parse(text, &s);
        if (r >= 0) {
                /* The count returned is the number of keys read, each with its presence bit. */
                FUZZ_ASSERT(r == __builtin_popcount(s.present));
                FUZZ_ASSERT((s.present & ~((1U << _BDI_STAT_MAX) - 1)) == 0);
                for (BdiStatKey k = 0; k < _BDI_STAT_MAX; k++)
                        FUZZ_ASSERT(bdi_stat_key_to_string(k));
        }
        free(text);
        return 0;
}
