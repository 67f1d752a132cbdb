/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Fuzzes baseline_from_json_string(). When the input parses, the baseline must serialise and parse
 * back into an equal baseline.
 */

#include <errno.h>

#include "baseline.h"
#include "fuzz.h"

static int baseline_equal(const Baseline *a, const Baseline *b) {
        if (strcmp(a->boot_id, b->boot_id) != 0 || a->n_entries != b->n_entries)
                return 0;
        for (size_t i = 0; i < a->n_entries; i++) {
                const BaselineEntry *x = a->entries + i, *y = b->entries + i;

                if (x->dev != y->dev || !fuzz_streq_ptr(x->fstype, y->fstype) ||
                    !fuzz_streq_ptr(x->bdi_name, y->bdi_name) || x->bdi_dirtied != y->bdi_dirtied ||
                    x->bdi_written != y->bdi_written || x->fs_written_kb != y->fs_written_kb)
                        return 0;
        }
        return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(baseline_freep) Baseline *b = NULL, *again = NULL;
        _cleanup_free_ char *json = NULL;
        char *text;
        int r;

        text = fuzz_strndup(data, size);
        if (!text)
                return 0;
        r = baseline_from_json_string(text, &b);
        free(text);
        FUZZ_ASSERT(r >= 0 || r == -EBADMSG || r == -ENOMEM);
        if (r < 0)
                return 0;
        FUZZ_ASSERT(b);
        FUZZ_ASSERT(b->n_entries <= BASELINE_MAX_ENTRIES);
        FUZZ_ASSERT(strnlen(b->boot_id, BOOT_ID_MAX) < BOOT_ID_MAX);
        for (size_t i = 0; i < b->n_entries; i++)
                FUZZ_ASSERT(baseline_find(b, b->entries[i].dev) == b->entries + i);

        r = baseline_to_json_string(b, &json);
        if (r == -ENOMEM)
                return 0;
        FUZZ_ASSERT(r >= 0);
        r = baseline_from_json_string(json, &again);
        if (r < 0)
                fprintf(stderr, "re-parse failed (%s) on:\n%s\n", strerror(-r), json);
        FUZZ_ASSERT(r >= 0);
        if (!baseline_equal(b, again))
                fprintf(stderr, "round trip changed the baseline; serialised as:\n%s\n", json);
        FUZZ_ASSERT(baseline_equal(b, again));
        return 0;
}
