/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Fuzzes conf_stream_parse() (the records the configuration reader child sends): never crashes,
 * complete sources serialize back to the same payload and build a Policy, and hooks arrive only
 * after the sources, each a non-empty path. */

#include <errno.h>

#include "conf-read.h"
#include "fuzz.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ConfStream st = {};
        PolicySources *s;
        Policy *p = NULL;
        char *again = NULL;
        size_t n;
        int r;

        r = conf_stream_parse((const char *) data, size, &st);
        FUZZ_ASSERT(r >= 0 || r == -EBADMSG || r == -ENOMEM);
        s = st.sources;
        FUZZ_ASSERT(!st.hooks || s);
        FUZZ_ASSERT(!st.hooks_done || s);
        for (size_t i = 0; i < st.n_hooks; i++)
                FUZZ_ASSERT(st.hooks[i] && st.hooks[i][0] != '\0');
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
        conf_stream_done(&st);
        return 0;
}
