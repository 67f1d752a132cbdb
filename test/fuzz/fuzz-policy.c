/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Fuzzes the configuration parser: policy_parse_text() on the input (split at the first NUL into a
 * main file and a drop-in, so that "later assignments win" is exercised too; a NUL in the drop-in
 * makes it a file not read), then policy_match() against a few fixed mounts, each with its device
 * classes known and unknown, checked against what failing closed means (no disabled rule returned;
 * a skip only when no disabled rule comes first and the rule's Device= matches a known class), and
 * policy_format(); the formatted text is parsed again and must decide as the policy it was printed
 * from, for every mount (cat-config's text read back is the same policy).
 */

#include <errno.h>

#include "device.h"
#include "fuzz.h"
#include "policy.h"

static const struct {
        const char *mount_point;
        const char *fstype;
        unsigned classes;
} mounts[] = {
        { "/", "ext4", 0 },
        { "/home", "btrfs", DEVICE_ROTATIONAL },
        { "/media/usb", "vfat", DEVICE_USB | DEVICE_REMOVABLE },
        { "/mnt/nfs", "nfs4", DEVICE_NETWORK },
        { "/run/user/1000/gvfs", "fuse.gvfsd-fuse", DEVICE_FUSE },
        { "/srv/crypt", "xfs", DEVICE_CRYPT | DEVICE_LOOP },
        { "/weird/\n\\ \xff path", NULL, _DEVICE_CLASS_ALL },
};

#define N_MOUNTS (sizeof(mounts) / sizeof(mounts[0]))

typedef struct Decision {
        int action; /* of the rule returned, -1: none */
        usec_t timeout;
        bool unsure;
} Decision;

/* Checks policy_match() of mount i, with its classes unknown or not, against the rules; returns it. */
static Decision check_one(const Policy *p, size_t i, bool unknown) {
        unsigned classes = unknown ? 0 : mounts[i].classes,
                 unknown_mask = unknown ? _DEVICE_CLASS_ALL & ~(DEVICE_NETWORK | DEVICE_FUSE) : 0;
        const Rule *unsure, *r = policy_match(p, mounts[i].mount_point, mounts[i].fstype, classes, unknown_mask,
                                              &unsure);
        bool disabled_before = false;

        FUZZ_ASSERT(!r || (r >= p->rules && r < p->rules + p->n_rules));
        FUZZ_ASSERT(!unsure || (unsure >= p->rules && unsure < p->rules + p->n_rules));
        FUZZ_ASSERT(!r || !r->disabled);
        for (const Rule *x = p->rules; r && x < r; x++)
                disabled_before = disabled_before || x->disabled;
        if (r && r->action == RULE_ACTION_SKIP) {
                FUZZ_ASSERT(!disabled_before && !unsure);
                FUZZ_ASSERT(r->device_classes == 0 || (r->device_classes & classes));
        }
        if (!r && unsure)
                FUZZ_ASSERT(unsure->disabled);
        if (r && unsure)
                FUZZ_ASSERT(unsure == r && r->action != RULE_ACTION_SKIP);
        return (Decision) { .action = r ? (int) r->action : -1,
                            .timeout = r ? r->mount_timeout : USEC_INFINITY,
                            .unsure = unsure != NULL };
}

static void check(const Policy *p, Decision d[static N_MOUNTS * 2]) {
        FUZZ_ASSERT(p->n_rules <= POLICY_MAX_RULES);
        FUZZ_ASSERT(p->n_warnings <= POLICY_MAX_WARNINGS);
        FUZZ_ASSERT(p->max_parallel >= 1 && p->max_parallel <= POLICY_MAX_PARALLEL_LIMIT);
        for (size_t i = 0; i < N_MOUNTS; i++) {
                d[2 * i] = check_one(p, i, false);
                d[2 * i + 1] = check_one(p, i, true);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;
        _cleanup_free_ char *text = NULL;
        Decision a[N_MOUNTS * 2], b[N_MOUNTS * 2];
        const uint8_t *nul;
        size_t n1;
        int r;

        if (policy_new(&p) < 0)
                return 0;

        nul = memchr(data, 0, size);
        n1 = nul ? (size_t) (nul - data) : size;
        r = policy_parse_text(p, "fuzz.conf", (const char *) data, n1);
        FUZZ_ASSERT(r >= 0 || r == -ENOMEM);
        if (nul) {
                r = policy_parse_text(p, "fuzz.conf.d/50-fuzz.conf", (const char *) nul + 1, size - n1 - 1);
                FUZZ_ASSERT(r >= 0 || r == -ENOMEM);
        }
        check(p, a);

        if (policy_format(p, &text) < 0)
                return 0;
        FUZZ_ASSERT(text);

        /* Whatever cat-config prints must itself be a configuration we can read, deciding the same;
         * not when a bound was hit (the rules, or the warnings, whose last says "too many"). */
        if (policy_new(&q) < 0)
                return 0;
        r = policy_parse_text(q, "cat-config.conf", text, strlen(text));
        FUZZ_ASSERT(r >= 0 || r == -ENOMEM);
        check(q, b);
        if (r < 0 || p->n_rules >= POLICY_MAX_RULES || p->n_warnings >= POLICY_MAX_WARNINGS ||
            q->n_warnings >= POLICY_MAX_WARNINGS)
                return 0;
        for (size_t i = 0; i < N_MOUNTS * 2; i++)
                FUZZ_ASSERT(a[i].action == b[i].action && a[i].timeout == b[i].timeout &&
                            a[i].unsure == b[i].unsure);
        return 0;
}
