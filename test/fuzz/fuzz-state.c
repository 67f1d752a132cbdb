/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Fuzzes run_record_from_json_string(). When the input parses, the record must serialise (pretty
 * and short), and each serialisation must parse back into an equal record: the state format is
 * documented as lossless, raw bytes included.
 */

#include <errno.h>

#include "fuzz.h"
#include "state.h"

static int run_mount_equal(const RunMount *a, const RunMount *b) {
        return fuzz_streq_ptr(a->mount_point, b->mount_point) &&
                fuzz_streq_ptr(a->fstype, b->fstype) &&
                fuzz_streq_ptr(a->action, b->action) &&
                fuzz_streq_ptr(a->reason, b->reason) &&
                fuzz_streq_ptr(a->outcome, b->outcome) &&
                a->duration == b->duration &&
                a->error == b->error &&
                a->abandoned_pid == b->abandoned_pid;
}

static int run_record_equal(const RunRecord *a, const RunRecord *b) {
        if (a->started_realtime != b->started_realtime || a->duration != b->duration ||
            a->deadline != b->deadline || a->t_read != b->t_read || a->t_sample != b->t_sample ||
            a->t_plan != b->t_plan || a->t_execute != b->t_execute || a->t_record != b->t_record ||
            !fuzz_streq_ptr(a->result, b->result) || !fuzz_streq_ptr(a->trigger, b->trigger) ||
            a->n_mounts != b->n_mounts)
                return 0;
        for (size_t i = 0; i < a->n_mounts; i++)
                if (!run_mount_equal(a->mounts + i, b->mounts + i))
                        return 0;
        return 1;
}

static void round_trip(const RunRecord *rec, bool pretty) {
        _cleanup_(run_record_done) RunRecord again = {};
        _cleanup_free_ char *json = NULL;
        int r;

        r = run_record_to_json_string(rec, pretty, &json);
        if (r == -ENOMEM)
                return;
        if (r < 0)
                fprintf(stderr, "run_record_to_json_string(pretty=%d) on a parsed record: %s\n",
                        pretty, strerror(-r));
        FUZZ_ASSERT(r >= 0);
        r = run_record_from_json_string(json, &again);
        if (r == -ENOMEM)
                return;
        if (r < 0)
                fprintf(stderr, "re-parse failed (%s) on:\n%s\n", strerror(-r), json);
        FUZZ_ASSERT(r >= 0);
        if (!run_record_equal(rec, &again))
                fprintf(stderr, "round trip changed the record; serialised as:\n%s\n", json);
        FUZZ_ASSERT(run_record_equal(rec, &again));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(run_record_done) RunRecord rec = {};
        char *text;
        int r;

        text = fuzz_strndup(data, size);
        if (!text)
                return 0;
        r = run_record_from_json_string(text, &rec);
        free(text);
        FUZZ_ASSERT(r >= 0 || r == -EBADMSG || r == -EFBIG || r == -ENOMEM);
        if (r < 0)
                return 0;
        FUZZ_ASSERT(rec.result);
        FUZZ_ASSERT(rec.n_mounts <= STATE_MAX_MOUNTS);
        for (size_t i = 0; i < rec.n_mounts; i++)
                FUZZ_ASSERT(rec.mounts[i].mount_point && rec.mounts[i].action && rec.mounts[i].outcome);

        round_trip(&rec, true);
        round_trip(&rec, false);
        return 0;
}
