/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-id128.h>
#include <unistd.h>

#include "conf-bounds.h"
#include "shared/fileio.h"
#include "shared/hexdecoct.h"
#include "shared/macro.h"
#include "shared/parse-util.h"

/* What the configuration accepts for a TIMESPAN (policy.h): more than 0, at most 24 h. */
#define BOUND_MAX (24U * 60U * USEC_PER_MINUTE)

void conf_bounds_record_done(ConfBoundsRecord *r) {
        if (!r)
                return;
        free(r->root);
        free(r->config);
        *r = (ConfBoundsRecord) {};
}

static bool bound_valid(usec_t u) {
        return u > 0 && u <= BOUND_MAX;
}

static bool path_field_valid(const char *s) {
        return s && !strchr(s, '\n') && strlen(s) < PATH_MAX;
}

int conf_bounds_format(const ConfBoundsRecord *r, char **ret) {
        if (!id128_string_valid(r->boot_id) || isempty(r->root) || !path_field_valid(r->root) ||
            !path_field_valid(r->config ?: "") || !bound_valid(r->bounds.deadline) ||
            !bound_valid(r->bounds.mount_timeout))
                return -EINVAL;
        if (asprintf(ret,
                     "BOOT_ID=%s\nREALTIME_USEC=%" PRIu64 "\nROOT=%s\nCONFIG=%s\nDEADLINE_USEC=%" PRIu64
                     "\nMOUNT_TIMEOUT_USEC=%" PRIu64 "\n",
                     r->boot_id, (uint64_t) r->bounds.realtime, r->root, r->config ?: "",
                     (uint64_t) r->bounds.deadline, (uint64_t) r->bounds.mount_timeout) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

enum {
        KEY_BOOT_ID,
        KEY_REALTIME,
        KEY_ROOT,
        KEY_CONFIG,
        KEY_DEADLINE,
        KEY_MOUNT_TIMEOUT,
        _KEY_MAX,
};

static const char *const keys[_KEY_MAX] = {
        [KEY_BOOT_ID] = "BOOT_ID",
        [KEY_REALTIME] = "REALTIME_USEC",
        [KEY_ROOT] = "ROOT",
        [KEY_CONFIG] = "CONFIG",
        [KEY_DEADLINE] = "DEADLINE_USEC",
        [KEY_MOUNT_TIMEOUT] = "MOUNT_TIMEOUT_USEC",
};

/* One line's value (len bytes at v) for key k into x. -EBADMSG when it does not fit the key. */
static int parse_value(int k, const char *v, size_t len, ConfBoundsRecord *x) {
        _cleanup_free_ char *s = strndup(v, len);
        uint64_t u;

        if (!s)
                return -ENOMEM;
        if (strlen(s) != len)
                return -EBADMSG; /* an embedded NUL */
        switch (k) {
        case KEY_BOOT_ID:
                if (!id128_string_valid(s))
                        return -EBADMSG;
                memcpy(x->boot_id, s, sizeof x->boot_id);
                return 0;
        case KEY_ROOT:
                if (len == 0 || len >= PATH_MAX)
                        return -EBADMSG;
                x->root = TAKE_PTR(s);
                return 0;
        case KEY_CONFIG:
                if (len >= PATH_MAX)
                        return -EBADMSG;
                x->config = TAKE_PTR(s);
                return 0;
        default:
                if (safe_atou64(s, &u) < 0)
                        return -EBADMSG;
                if (k == KEY_REALTIME)
                        x->bounds.realtime = u;
                else if (!bound_valid(u))
                        return -EBADMSG;
                else if (k == KEY_DEADLINE)
                        x->bounds.deadline = u;
                else
                        x->bounds.mount_timeout = u;
                return 0;
        }
}

int conf_bounds_parse(const char *text, ConfBoundsRecord *ret) {
        _cleanup_(conf_bounds_record_done) ConfBoundsRecord x = {};
        bool seen[_KEY_MAX] = {};
        const char *p = text;
        int r;

        if (strlen(text) > CONF_BOUNDS_FILE_MAX)
                return -EBADMSG;
        while (*p) {
                const char *nl = strchr(p, '\n'), *eq;
                size_t len;
                int k;

                if (!nl)
                        return -EBADMSG; /* cut short: every line ends in a newline */
                len = (size_t) (nl - p);
                eq = memchr(p, '=', len);
                if (!eq)
                        return -EBADMSG;
                for (k = 0; k < _KEY_MAX; k++)
                        if ((size_t) (eq - p) == strlen(keys[k]) && memcmp(p, keys[k], eq - p) == 0)
                                break;
                if (k < _KEY_MAX) {
                        if (seen[k])
                                return -EBADMSG;
                        seen[k] = true;
                        r = parse_value(k, eq + 1, (size_t) (nl - eq - 1), &x);
                        if (r < 0)
                                return r;
                }
                p = nl + 1;
        }
        for (int k = 0; k < _KEY_MAX; k++)
                if (!seen[k])
                        return -EBADMSG;
        *ret = x;
        x = (ConfBoundsRecord) {};
        return 0;
}

bool conf_bounds_match(const ConfBoundsRecord *r, const char *boot_id, const char *root, const char *config) {
        return boot_id && id128_string_valid(boot_id) && streq(r->boot_id, boot_id) && r->root && root &&
               streq(r->root, root) && r->config && streq(r->config, config ?: "");
}

unsigned conf_bounds_cap(const ConfBounds *b, Policy *p) {
        unsigned capped = 0;

        if (!b || b->deadline == 0)
                return 0;
        if (!p->o_deadline.file && b->deadline < p->deadline) {
                p->deadline = b->deadline;
                p->o_deadline = (Origin) { .file = CONF_BOUNDS_ORIGIN };
                capped |= CONF_BOUNDS_CAPPED_DEADLINE;
        }
        if (!p->o_mount_timeout.file && b->mount_timeout > 0 && b->mount_timeout < p->mount_timeout) {
                p->mount_timeout = b->mount_timeout;
                p->o_mount_timeout = (Origin) { .file = CONF_BOUNDS_ORIGIN };
                capped |= CONF_BOUNDS_CAPPED_MOUNT_TIMEOUT;
        }
        return capped;
}

static int this_boot(char ret[static 33]) {
        sd_id128_t id;

        if (sd_id128_get_boot(&id) < 0)
                return -ENODATA;
        (void) sd_id128_to_string(id, ret);
        return 0;
}

int conf_bounds_save(const char *state_dir, const char *root, const char *config, const Policy *p) {
        _cleanup_close_ int dir_fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        ConfBoundsRecord x = {
                .bounds = { .deadline = p->deadline,
                            .mount_timeout = p->mount_timeout,
                            .realtime = now(CLOCK_REALTIME) },
                .root = (char *) root,
                .config = (char *) config,
        };
        int r;

        r = this_boot(x.boot_id);
        if (r < 0)
                return r;
        r = conf_bounds_format(&x, &text);
        if (r < 0)
                return r;
        dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return negative_errno();
        return write_file_atomic_at(dir_fd, CONF_BOUNDS_FILE, text, strlen(text));
}

int conf_bounds_load(const char *state_dir, const char *root, const char *config, ConfBounds *ret) {
        _cleanup_(conf_bounds_record_done) ConfBoundsRecord x = {};
        _cleanup_free_ char *path = NULL, *text = NULL;
        char boot_id[33];
        size_t size;
        int r;

        if (asprintf(&path, "%s/" CONF_BOUNDS_FILE, state_dir) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        r = read_full_file_at_flags(AT_FDCWD, path, CONF_BOUNDS_FILE_MAX, READ_FULL_REGULAR, &text, &size);
        if (r < 0)
                return r;
        if (strlen(text) != size)
                return -EBADMSG;
        r = conf_bounds_parse(text, &x);
        if (r < 0)
                return r;
        if (this_boot(boot_id) < 0 || !conf_bounds_match(&x, boot_id, root, config))
                return -ESTALE;
        *ret = x.bounds;
        return 0;
}
