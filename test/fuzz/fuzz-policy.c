/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Fuzzes the configuration parser: policy_parse_text() on the input (split at the first NUL into a
 * main file and a drop-in, so that "later assignments win" is exercised too), then policy_match()
 * against a few fixed mounts and policy_format(); the formatted text is parsed again (it must be
 * accepted without crashing or leaking, like any other text).
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

static void check(const Policy *p) {
        FUZZ_ASSERT(p->n_rules <= POLICY_MAX_RULES);
        FUZZ_ASSERT(p->n_warnings <= POLICY_MAX_WARNINGS);
        FUZZ_ASSERT(p->max_parallel >= 1 && p->max_parallel <= POLICY_MAX_PARALLEL_LIMIT);
        for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
                const Rule *r = policy_match(p, mounts[i].mount_point, mounts[i].fstype, mounts[i].classes);

                FUZZ_ASSERT(!r || (r >= p->rules && r < p->rules + p->n_rules));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;
        _cleanup_free_ char *text = NULL;
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
        check(p);

        if (policy_format(p, &text) < 0)
                return 0;
        FUZZ_ASSERT(text);

        /* Whatever cat-config prints must itself be a configuration we can read. */
        if (policy_new(&q) < 0)
                return 0;
        r = policy_parse_text(q, "cat-config.conf", text, strlen(text));
        FUZZ_ASSERT(r >= 0 || r == -ENOMEM);
        check(q);
        return 0;
}
