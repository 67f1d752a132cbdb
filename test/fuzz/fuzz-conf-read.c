/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Fuzzes conf_stream_parse() (the records the configuration reader child sends): never crashes,
 * and complete sources serialize back to the same payload and build a Policy. */

#include <errno.h>

#include "conf-read.h"
#include "fuzz.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        PolicySources *s = NULL;
        Policy *p = NULL;
        char *progress = NULL, *again = NULL;
        size_t n;
        int r;

        r = conf_stream_parse((const char *) data, size, &progress, &s);
        FUZZ_ASSERT(r >= 0 || r == -EBADMSG || r == -ENOMEM);
        if (r >= 0 && s) {
                if (conf_sources_serialize(s, &again, &n) >= 0) {
                        PolicySources *t = NULL;

                        FUZZ_ASSERT(conf_sources_parse(again, n, &t) >= 0);
                        FUZZ_ASSERT(t->n_files == s->n_files);
                        policy_sources_free(t);
                        free(again);
                }
                if (policy_build(s, &p) >= 0)
                        policy_free(p);
        }
        policy_sources_free(s);
        free(progress);
        return 0;
}
