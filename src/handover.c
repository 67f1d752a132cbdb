/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "handover.h"
#include "late-skip.h"
#include "shared/devnum-util.h"
#include "shared/fileio.h"
#include "shared/hexdecoct.h"
#include "shared/macro.h"
#include "shared/parse-util.h"
#include "shared/proc-util.h"
#include "shared/string-util.h"
#include "shared/strv.h"

#define HANDOVER_HEADER "# suspend-sync handover v1: what one pass leaves for the next (see handover.h)\n"

void handover_done(Handover *h) {
        if (!h)
                return;
        for (size_t i = 0; i < h->n_stuck; i++)
                free(h->stuck[i].group);
        free(h->stuck);
        free(h->unsynced);
        free(h->unsynced_boottime);
        free(h->synced);
        free(h->synced_boottime);
        free(h->synced_mount);
        *h = (Handover) {};
}

static bool group_valid(const char *g) {
        if (!g || !*g || strlen(g) > 4096)
                return false;
        for (const char *p = g; *p; p++)
                if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
                        return false;
        return true;
}

int handover_add_stuck(Handover *h, pid_t pid, uint64_t start_time, bool hung, usec_t boottime,
                       const char *boot_id, const char *group) {
        StuckWorker *n;
        char *g;

        if (pid <= 0 || !group_valid(group) || !id128_string_valid(boot_id))
                return -EINVAL;
        if (h->n_stuck >= HANDOVER_ENTRIES_MAX)
                return -E2BIG;
        n = reallocarray(h->stuck, h->n_stuck + 1, sizeof(StuckWorker));
        if (!n)
                return -ENOMEM;
        h->stuck = n;
        g = strdup(group);
        if (!g)
                return -ENOMEM;
        h->stuck[h->n_stuck++] = (StuckWorker) {
                .pid = pid,
                .start_time = start_time,
                .hung = hung,
                .boottime = boottime,
                .group = g,
        };
        memcpy(h->stuck[h->n_stuck - 1].boot_id, boot_id, sizeof h->stuck[0].boot_id);
        return 0;
}

/* Appends (dev, boottime) to one list of superblocks of the unit's pass. */
static int devs_add(dev_t **devs, usec_t **boottimes, size_t *n, dev_t dev, usec_t boottime) {
        dev_t *d;
        usec_t *b;

        if (*n >= HANDOVER_ENTRIES_MAX)
                return -E2BIG;
        d = reallocarray(*devs, *n + 1, sizeof(dev_t));
        if (!d)
                return -ENOMEM;
        *devs = d;
        b = reallocarray(*boottimes, *n + 1, sizeof(usec_t));
        if (!b)
                return -ENOMEM;
        *boottimes = b;
        d[*n] = dev;
        b[*n] = boottime;
        (*n)++;
        return 0;
}

int handover_add_unsynced(Handover *h, dev_t dev, usec_t boottime) {
        return devs_add(&h->unsynced, &h->unsynced_boottime, &h->n_unsynced, dev, boottime);
}

int handover_add_synced(Handover *h, dev_t dev, uint64_t mount_id, usec_t boottime) {
        uint64_t *m;

        if (h->n_synced >= HANDOVER_ENTRIES_MAX)
                return -E2BIG;
        m = reallocarray(h->synced_mount, h->n_synced + 1, sizeof(uint64_t));
        if (!m)
                return -ENOMEM;
        h->synced_mount = m;
        m[h->n_synced] = mount_id;
        return devs_add(&h->synced, &h->synced_boottime, &h->n_synced, dev, boottime);
}

void handover_clear_unsynced(Handover *h) {
        h->unsynced = mfree(h->unsynced);
        h->unsynced_boottime = mfree(h->unsynced_boottime);
        h->n_unsynced = 0;
        h->synced = mfree(h->synced);
        h->synced_boottime = mfree(h->synced_boottime);
        h->synced_mount = mfree(h->synced_mount);
        h->n_synced = 0;
        h->unit_pass = 0;
        memset(h->unit_boot_id, 0, sizeof h->unit_boot_id);
        memset(h->unit_token, 0, sizeof h->unit_token);
}

void handover_set_stuck_progress(Handover *h, size_t i, uint64_t progress) {
        h->stuck[i].progress = progress;
        h->stuck[i].progress_known = true;
}

void handover_clear_stuck(Handover *h) {
        for (size_t i = 0; i < h->n_stuck; i++)
                free(h->stuck[i].group);
        h->stuck = mfree(h->stuck);
        h->n_stuck = 0;
}

const StuckWorker *handover_find_stuck(const Handover *h, const char *group) {
        if (!group)
                return NULL;
        for (size_t i = 0; i < h->n_stuck; i++)
                if (streq(h->stuck[i].group, group))
                        return &h->stuck[i];
        return NULL;
}

/* A time in the future (another boot's file on a persistent directory) is not fresh. */
static bool fresh(usec_t t, usec_t now_boottime) {
        return t <= now_boottime && now_boottime - t <= HANDOVER_UNSYNCED_MAX_AGE;
}

bool handover_unsynced_fresh(const Handover *h, size_t i, usec_t now_boottime) {
        return fresh(h->unsynced_boottime[i], now_boottime);
}

static bool mount_among(uint64_t id, const uint64_t *ids, size_t n) {
        if (id == 0)
                return true;
        for (size_t i = 0; i < n; i++)
                if (ids[i] == id)
                        return true;
        return false;
}

bool handover_unit_saw(const Handover *h, dev_t dev, const uint64_t *mount_ids, size_t n_mount_ids,
                       usec_t now_boottime) {
        for (size_t i = 0; i < h->n_synced; i++)
                if (h->synced[i] == dev && fresh(h->synced_boottime[i], now_boottime) &&
                    mount_among(h->synced_mount[i], mount_ids, n_mount_ids))
                        return true;
        for (size_t i = 0; i < h->n_unsynced; i++)
                if (h->unsynced[i] == dev && fresh(h->unsynced_boottime[i], now_boottime))
                        return true;
        return false;
}

int handover_set_unit_pass(Handover *h, usec_t boottime, const char *boot_id, const char *token) {
        if (boottime == 0 || !id128_string_valid(boot_id) || !id128_string_valid(token))
                return -EINVAL;
        h->unit_pass = boottime;
        memcpy(h->unit_boot_id, boot_id, sizeof h->unit_boot_id);
        memcpy(h->unit_token, token, sizeof h->unit_token);
        return 0;
}

bool handover_unit_pass_fresh(const Handover *h, usec_t now_boottime, const char *boot_id,
                              const char *token) {
        return h->unit_pass > 0 && id128_string_valid(boot_id) && streq(h->unit_boot_id, boot_id) &&
               id128_string_valid(token) && streq(h->unit_token, token) && fresh(h->unit_pass, now_boottime);
}

static int parse_line(Handover *h, const char *line) {
        _cleanup_strv_free_ char **w = NULL;
        int n = strv_split_words(line, 8, &w);
        uint64_t pid, start, hung, boot;
        dev_t dev;

        if (n == -ENOMEM)
                return n;

        /* (a line without the boot id, as written before it was added, is malformed: dropped; one
         * without the counter, as written before it was, has none: not proven still stuck) */
        if ((n == 7 || n == 8) && streq(w[0], "stuck")) {
                uint64_t progress = 0;
                int r;

                if (safe_atou64(w[1], &pid) < 0 || pid == 0 || pid > INT32_MAX ||
                    safe_atou64(w[2], &start) < 0 || safe_atou64(w[3], &hung) < 0 || hung > 1 ||
                    safe_atou64(w[4], &boot) < 0 || (n == 8 && safe_atou64(w[7], &progress) < 0))
                        return -EINVAL;
                r = handover_add_stuck(h, (pid_t) pid, start, hung, boot, w[5], w[6]);
                if (r >= 0 && n == 8)
                        handover_set_stuck_progress(h, h->n_stuck - 1, progress);
                return r;
        }
        /* (likewise a "unit" line without the token) */
        if (n == 4 && streq(w[0], "unit"))
                return safe_atou64(w[1], &boot) < 0 ? -EINVAL : handover_set_unit_pass(h, boot, w[2], w[3]);
        if (n == 3 && streq(w[0], "unsynced")) {
                if (parse_devnum(w[1], &dev) < 0 || safe_atou64(w[2], &boot) < 0)
                        return -EINVAL;
                return handover_add_unsynced(h, dev, boot);
        }
        if ((n == 3 || n == 4) && streq(w[0], "synced")) {
                uint64_t mount_id = 0;

                if (parse_devnum(w[1], &dev) < 0 || safe_atou64(w[2], &boot) < 0 ||
                    (n == 4 && (safe_atou64(w[3], &mount_id) < 0 || mount_id == 0)))
                        return -EINVAL;
                return handover_add_synced(h, dev, mount_id, boot);
        }
        return -EINVAL;
}

int handover_parse(const char *text, Handover *ret) {
        _cleanup_(handover_done) Handover h = {};
        _cleanup_free_ char *copy = strdup(text);
        char *save = NULL;
        int r;

        if (!copy)
                return -ENOMEM;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (line[0] == '#' || line[strspn(line, " \t")] == 0)
                        continue;
                r = parse_line(&h, line);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        h.n_bad++;
        }
        *ret = h;
        h = (Handover) {};
        return 0;
}

/* short_open: a stuck worker's "open:MAJ:MIN@ID,..." key as its superblock's "open:MAJ:MIN", which
 * blocks more (every mount of that superblock), never less (review W, W4). */
static int format_impl(const Handover *h, bool short_open, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fputs(HANDOVER_HEADER, f);
        for (size_t i = 0; i < h->n_stuck; i++) {
                if (h->stuck[i].pid <= 0 || !group_valid(h->stuck[i].group))
                        continue;
                /* "open:": PLAN_OPEN_KEY_PREFIX (plan.h), run_stuck_open_blocks() (run.h) */
                const char *g = h->stuck[i].group, *at = startswith(g, "open:") ? strchr(g, '@') : NULL;
                int len = short_open && at ? (int) (at - g) : (int) strlen(g);

                fprintf(f, "stuck %d %" PRIu64 " %d %" PRIu64 " %s %.*s", (int) h->stuck[i].pid,
                        h->stuck[i].start_time, h->stuck[i].hung, (uint64_t) h->stuck[i].boottime,
                        h->stuck[i].boot_id, len, g);
                if (h->stuck[i].progress_known)
                        fprintf(f, " %" PRIu64, h->stuck[i].progress);
                fputc('\n', f);
        }
        for (size_t i = 0; i < h->n_unsynced; i++)
                fprintf(f, "unsynced %s %" PRIu64 "\n", FORMAT_DEVNUM(h->unsynced[i]),
                        (uint64_t) h->unsynced_boottime[i]);
        for (size_t i = 0; i < h->n_synced; i++) {
                fprintf(f, "synced %s %" PRIu64, FORMAT_DEVNUM(h->synced[i]),
                        (uint64_t) h->synced_boottime[i]);
                if (h->synced_mount[i] != 0)
                        fprintf(f, " %" PRIu64, h->synced_mount[i]);
                fputc('\n', f);
        }
        if (h->unit_pass > 0)
                fprintf(f, "unit %" PRIu64 " %s %s\n", (uint64_t) h->unit_pass, h->unit_boot_id,
                        h->unit_token);
        if (memstream_finish(f, &buf) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

int handover_format(const Handover *h, char **ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = format_impl(h, false, &text);
        if (r < 0)
                return r;
        /* Larger than a reader takes, the whole file would be ignored, the keys of workers stuck
         * inside syncfs with the rest: the path keys give way to their superblocks' first. */
        if (strlen(text) > HANDOVER_FILE_MAX) {
                text = mfree(text);
                r = format_impl(h, true, &text);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(text);
        return 0;
}

size_t handover_prune(Handover *h, int proc_fd, const char *boot_id) {
        size_t kept = 0, dropped = 0;

        for (size_t i = 0; i < h->n_stuck; i++) {
                StuckWorker *w = &h->stuck[i];
                uint64_t start;
                char state;

                if (!id128_string_valid(boot_id) || !streq(w->boot_id, boot_id) ||
                    proc_pid_start_time(proc_fd, w->pid, &start, &state) < 0 || start != w->start_time ||
                    state == 'Z' || state == 'X' || state == 'x') {
                        free(w->group);
                        dropped++;
                        continue;
                }
                h->stuck[kept++] = *w;
        }
        h->n_stuck = kept;
        return dropped;
}

int handover_load(int state_dir_fd, Handover *ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        *ret = (Handover) {};
        r = read_full_file_at_flags(state_dir_fd, HANDOVER_FILE, HANDOVER_FILE_MAX, READ_FULL_STATE, &text,
                                    NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return handover_parse(text, ret);
}

int handover_save(int state_dir_fd, const Handover *h) {
        _cleanup_free_ char *text = NULL;
        int r;

        if (h->n_stuck == 0 && h->n_unsynced == 0 && h->n_synced == 0 && h->unit_pass == 0) {
                if (unlinkat(state_dir_fd, HANDOVER_FILE, 0) < 0 && errno != ENOENT)
                        return -errno;
                return 0;
        }
        r = handover_format(h, &text);
        if (r >= 0)
                r = write_file_atomic_at(state_dir_fd, HANDOVER_FILE, text, strlen(text));
        if (r < 0)
                /* What is there is an earlier pass's: it must not stand for this one (its "unit" line
                 * would vouch for a pass whose unsynced superblocks it does not list). Without it the
                 * late pass keeps the kernel's sync on; stuck workers are forgotten (at worst a second
                 * worker on a stuck device). unlink works on a full tmpfs. */
                (void) unlinkat(state_dir_fd, HANDOVER_FILE, 0);
        return r;
}

/* The token and a newline, atomically, to name (HANDOVER_UNIT_MARK_FILE or LATE_SKIP_FILE). */
static int token_write(int state_dir_fd, const char *name, const char *token) {
        char line[34];

        if (!id128_string_valid(token))
                return -EINVAL;
        (void) snprintf(line, sizeof line, "%s\n", token);
        return write_file_atomic_at(state_dir_fd, name, line, strlen(line));
}

/* Whether HOOK_LINK_FILE points at SLEEP_HOOK_BINARY: 1, 0 when it points elsewhere, -ENOENT when
 * missing, or another negative errno. */
static int hook_link_check(int state_dir_fd) {
        char target[sizeof(SLEEP_HOOK_BINARY) + 1];
        ssize_t n;

        n = readlinkat(state_dir_fd, HOOK_LINK_FILE, target, sizeof target);
        if (n < 0)
                return negative_errno();
        return n == (ssize_t) strlen(SLEEP_HOOK_BINARY) && memcmp(target, SLEEP_HOOK_BINARY, n) == 0;
}

bool handover_hook_link_up(int state_dir_fd) {
        return state_dir_fd >= 0 && hook_link_check(state_dir_fd) > 0;
}

/* HOOK_LINK_FILE -> SLEEP_HOOK_BINARY, replaced atomically when it is missing or points elsewhere.
 * Returns 1 when it was missing, 0 when it was there, or negative errno. */
static int hook_link_restore(int state_dir_fd) {
        int r;

        r = hook_link_check(state_dir_fd);
        if (r > 0)
                return 0;
        r = r == -ENOENT;
        (void) unlinkat(state_dir_fd, HOOK_LINK_FILE ".new", 0);
        if (symlinkat(SLEEP_HOOK_BINARY, state_dir_fd, HOOK_LINK_FILE ".new") < 0)
                return -errno;
        if (renameat(state_dir_fd, HOOK_LINK_FILE ".new", state_dir_fd, HOOK_LINK_FILE) < 0) {
                r = -errno;
                (void) unlinkat(state_dir_fd, HOOK_LINK_FILE ".new", 0);
        }
        return r;
}

int handover_unit_mark_write(int state_dir_fd, const char *token) {
        int r;

        /* An earlier pass's late-skip names another token: never followed, gone all the same, and
         * the hook reachable again (a link that cannot be made leaves the kernel's sync on). */
        (void) unlinkat(state_dir_fd, LATE_SKIP_FILE, 0);
        (void) hook_link_restore(state_dir_fd);
        r = token_write(state_dir_fd, HANDOVER_UNIT_MARK_FILE, token);
        if (r < 0)
                (void) unlinkat(state_dir_fd, HANDOVER_UNIT_MARK_FILE, 0);
        return r;
}

static int token_read(int state_dir_fd, const char *name, char ret[static 33]) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int r;

        r = read_full_file_at_flags(state_dir_fd, name, 64, READ_FULL_STATE, &text, &size);
        if (r < 0)
                return r;
        /* exactly the token and a newline, as written */
        if (size != 33 || text[32] != '\n')
                return -EBADMSG;
        text[32] = 0;
        if (!id128_string_valid(text))
                return -EBADMSG;
        memcpy(ret, text, 33);
        return 0;
}

int handover_unit_mark_read(int state_dir_fd, char ret[static 33]) {
        return token_read(state_dir_fd, HANDOVER_UNIT_MARK_FILE, ret);
}

int handover_cycle_owed_write(int state_dir_fd, const char *token, usec_t before) {
        char line[64];

        if (!id128_string_valid(token) || before == 0 || before == USEC_INFINITY)
                return -EINVAL;
        (void) snprintf(line, sizeof line, "%s %" PRIu64 "\n", token, before);
        return write_file_atomic_at(state_dir_fd, HANDOVER_CYCLE_OWED_FILE, line, strlen(line));
}

int handover_cycle_owed_read(int state_dir_fd, char ret[static 33], usec_t *ret_before) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        uint64_t before;
        int r;

        r = read_full_file_at_flags(state_dir_fd, HANDOVER_CYCLE_OWED_FILE, 64, READ_FULL_STATE, &text,
                                    &size);
        if (r < 0)
                return r;
        /* exactly the token, one space, the time and a newline, as written */
        if (size < 35 || size > 54 || text[32] != ' ' || text[size - 1] != '\n')
                return -EBADMSG;
        text[32] = text[size - 1] = 0;
        if (!id128_string_valid(text) || strspn(text + 33, "0123456789") != size - 34 ||
            safe_atou64(text + 33, &before) < 0 || before == 0 || before == USEC_INFINITY)
                return -EBADMSG;
        memcpy(ret, text, 33);
        if (ret_before)
                *ret_before = before;
        return 0;
}

int handover_cycle_owed_remove(int state_dir_fd) {
        if (unlinkat(state_dir_fd, HANDOVER_CYCLE_OWED_FILE, 0) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int handover_unit_mark_remove(int state_dir_fd, bool *ret_hook_was_down) {
        bool skipped = true;
        int r = 0, k;

        if (unlinkat(state_dir_fd, LATE_SKIP_FILE, 0) < 0) {
                skipped = false;
                if (errno != ENOENT)
                        r = -errno;
        }
        if (unlinkat(state_dir_fd, HANDOVER_UNIT_MARK_FILE, 0) < 0 && errno != ENOENT)
                r = -errno;
        k = hook_link_restore(state_dir_fd);
        if (k < 0 && r == 0)
                r = k;
        /* Down because a pass left the late pass out (the marker goes first, the link after it):
         * not a link never made (no tmpfiles.d), nor a manual restore-knob on a fresh directory. */
        if (ret_hook_was_down)
                *ret_hook_was_down = skipped && k > 0;
        return r;
}

int handover_unit_mark_end(int state_dir_fd, const char *token, bool *ret_hook_was_down) {
        char mark[33];

        if (token && handover_unit_mark_read(state_dir_fd, mark) >= 0 && !streq(mark, token)) {
                if (ret_hook_was_down)
                        *ret_hook_was_down = false;
                return -ESTALE;
        }
        return handover_unit_mark_remove(state_dir_fd, ret_hook_was_down);
}

int handover_late_skip_write(int state_dir_fd, const char *token) {
        char mark[33];
        int r;

        /* Only for the unit's pass that stands for this sleep: a later one (the unit's own, after
         * the daemon's overran logind's wait) wrote its token already, and decides for itself. */
        r = handover_unit_mark_read(state_dir_fd, mark);
        if (r < 0)
                return r == -ENOENT ? -ESTALE : r;
        if (!streq(mark, token))
                return -ESTALE;
        r = token_write(state_dir_fd, LATE_SKIP_FILE, token);
        if (r < 0)
                return r;
        /* The marker first: a hook that still runs (the link made again since) sees it. A link
         * that cannot be removed takes the marker with it: the late pass runs, as reported. */
        if (unlinkat(state_dir_fd, HOOK_LINK_FILE, 0) < 0 && errno != ENOENT) {
                r = -errno;
                (void) unlinkat(state_dir_fd, LATE_SKIP_FILE, 0);
                return r;
        }
        return 0;
}
