/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>

#include "defer-commit.h"
#include "shared/macro.h"
#include "tests.h"

/* Every fact alone withholds deferral (a control flips it back), and only "not the unit's pass"
 * and DeferCommit=no withhold it without a reason for the journal. */
TEST(allowed) {
        const DeferFacts ok = {
                .unit_pass = true,
                .policy = true,
                .writeback_first = true,
                .knob = 1,
                .required = 0,
                .handover_ok = true,
                .hook_reachable = true,
                .hook_entry = 1,
        };
        DeferFacts f;
        const char *why = "unset";

        ASSERT_TRUE(defer_commit_allowed(&ok, &why));
        ASSERT_TRUE(why == NULL);

        f = ok;
        f.unit_pass = false; /* the late pass, a manual run */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why == NULL);
        f = ok;
        f.policy = false;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why == NULL);

        f = ok;
        f.writeback_first = false;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "WritebackFirst"));
        ASSERT_EQ(defer_commit_why_error(&f, why), 0); /* control: no fact unread */
        f = ok;
        f.knob = 0; /* no backstop */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "off"));
        f.knob = -ENOENT; /* a kernel without the knob: unknown, so no */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "cannot be read"));
        /* ... and why it cannot be read is told (review AS, AS-5: EMFILE was not) */
        ASSERT_EQ(defer_commit_why_error(&f, why), -ENOENT);
        f.knob = -EMFILE;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_EQ(defer_commit_why_error(&f, why), -EMFILE);
        f = ok;
        f.required = 1;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "require-sync.conf"));
        f.required = -EACCES; /* unknown counts as required */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        f = ok;
        f.fail_on_timeout = true; /* OnTimeout=fail: the unit's result tells of every timeout */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "OnTimeout=fail"));
        f = ok;
        f.handover_ok = false; /* the late pass would not learn what was left to it */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "state directory"));
        f = ok;
        f.hook_reachable = false; /* the link down (a full /run): no late pass would commit it */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "link"));
        f = ok;
        f.hook_entry = 0; /* masked or replaced by the administrator (review K, K3): no late pass runs */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "masked"));
        f.hook_entry = -ENODATA; /* not read in time */
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "could not be read"));
        ASSERT_EQ(defer_commit_why_error(&f, why), 0); /* no answer: nothing to add */
        f.hook_entry = -EIO;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_EQ(defer_commit_why_error(&f, why), -EIO);
        f = ok;
        f.kick_failed = true;
        ASSERT_TRUE(!defer_commit_allowed(&f, &why));
        ASSERT_TRUE(why && strstr(why, "flusher"));
}

/* The drop-in's variable wins; otherwise a run by a service manager asks PID 1, and anything but
 * "no unit requires it" withholds deferral; a run outside a service manager is required by none. */
TEST(required) {
        static const int answers[] = { 0, 1, -ETIMEDOUT, -ECONNREFUSED, -EPERM };

        for (size_t i = 0; i < ELEMENTSOF(answers); i++) {
                int q = answers[i];

                ASSERT_EQ(defer_commit_required("1", true, q), 1);
                ASSERT_EQ(defer_commit_required("yes", false, q), 1);
                ASSERT_EQ(defer_commit_required("garbage", false, q), 1); /* unknown: fail closed */
                ASSERT_EQ(defer_commit_required(NULL, false, q), 0);      /* a manual run, a test */
                ASSERT_EQ(defer_commit_required("", false, q), 0);
                ASSERT_EQ(defer_commit_required("no", false, q), 0);
                ASSERT_EQ(defer_commit_required(NULL, true, q), q == 0 ? 0 : 1);
                ASSERT_EQ(defer_commit_required("0", true, q), q == 0 ? 0 : 1); /* PID 1 knows better */
        }
}

int main(void) {
        RUN(allowed);
        RUN(required);
        return 0;
}
