/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "handover.h"
#include "late-skip.h"
#include "shared/fileio.h"
#include "shared/proc-util.h"
#include "shared/macro.h"
#include "tests.h"

#define BOOT_ID "0123456789abcdef0123456789abcdef"
#define TOKEN "00112233445566778899aabbccddeeff"

TEST(round_trip) {
        _cleanup_(handover_done) Handover h = {}, back = {};
        _cleanup_free_ char *text = NULL, *text2 = NULL;

        ASSERT_OK(handover_add_stuck(&h, 1234, 98765, true, 5000000, BOOT_ID, "7:3"));
        handover_set_stuck_progress(&h, 0, 18446744073709551615ULL);
        ASSERT_OK(handover_add_stuck(&h, 42, 1, false, 6000000, BOOT_ID, "owner:1000:1000:sb:0:55"));
        ASSERT_OK(handover_add_unsynced(&h, makedev(259, 1048575), 7000000));
        ASSERT_OK(handover_add_synced(&h, makedev(0, 61), 0x80000105, 7000000));
        ASSERT_OK(handover_add_synced(&h, makedev(0, 62), 0, 7000000)); /* its mount not known */
        ASSERT_OK(handover_set_unit_pass(&h, 7000001, "0123456789abcdef0123456789abcdef", TOKEN));
        ASSERT_OK(handover_format(&h, &text));
        ASSERT_OK(handover_parse(text, &back));
        ASSERT_EQ(back.n_bad, 0U);
        ASSERT_EQ(back.n_stuck, 2U);
        ASSERT_EQ(back.stuck[0].pid, 1234);
        ASSERT_U64_EQ(back.stuck[0].start_time, 98765);
        ASSERT_TRUE(back.stuck[0].hung);
        ASSERT_U64_EQ(back.stuck[0].boottime, 5000000);
        ASSERT_STREQ(back.stuck[0].group, "7:3");
        ASSERT_STREQ(back.stuck[0].boot_id, BOOT_ID);
        ASSERT_TRUE(!back.stuck[1].hung);
        /* the device's counter when proven stuck (review H, H2): kept, or none */
        ASSERT_TRUE(back.stuck[0].progress_known);
        ASSERT_U64_EQ(back.stuck[0].progress, 18446744073709551615ULL);
        ASSERT_TRUE(!back.stuck[1].progress_known);
        ASSERT_EQ(back.n_unsynced, 1U);
        ASSERT_TRUE(back.unsynced[0] == makedev(259, 1048575));
        ASSERT_EQ(back.n_synced, 2U);
        ASSERT_TRUE(back.synced[0] == makedev(0, 61));
        ASSERT_U64_EQ(back.synced_boottime[0], 7000000);
        ASSERT_U64_EQ(back.synced_mount[0], 0x80000105);
        ASSERT_U64_EQ(back.synced_mount[1], 0);
        ASSERT_U64_EQ(back.unit_pass, 7000001);
        ASSERT_STREQ(back.unit_boot_id, "0123456789abcdef0123456789abcdef");
        ASSERT_STREQ(back.unit_token, TOKEN);
        ASSERT_OK(handover_format(&back, &text2));
        ASSERT_STREQ(text, text2);

        ASSERT_TRUE(handover_find_stuck(&back, "7:3") == &back.stuck[0]);
        ASSERT_TRUE(handover_find_stuck(&back, "7:30") == NULL);
        ASSERT_TRUE(handover_find_stuck(&back, NULL) == NULL);
}

/* Review U, U1 and U2: a worker stuck on its way to a mount is kept under the path it is stuck on,
 * "open:MAJ:MIN@ID,...", and a line an older version wrote, "open:MAJ:MIN", is read as it is (run.h
 * run_stuck_open_blocks() still blocks the whole superblock on it). */
TEST(open_keys) {
        static const char path_key[] = "open:7:0@u47,o0.41.30.00000000000000ab";
        _cleanup_(handover_done) Handover h = {};
        _cleanup_free_ char *text = NULL;

        ASSERT_OK(handover_parse("stuck 12 34 0 56 " BOOT_ID " open:7:0\n"
                                 "stuck 13 35 0 57 " BOOT_ID " open:7:0@u47,o0.41.30.00000000000000ab\n",
                                 &h));
        ASSERT_EQ(h.n_bad, 0U);
        ASSERT_EQ(h.n_stuck, 2U);
        ASSERT_STREQ(h.stuck[0].group, "open:7:0");
        ASSERT_STREQ(h.stuck[1].group, path_key);
        ASSERT_TRUE(handover_find_stuck(&h, path_key) == &h.stuck[1]); /* no second line for it */
        ASSERT_OK(handover_add_stuck(&h, 14, 36, false, 58, BOOT_ID, "open:7:1@u48"));
        ASSERT_OK(handover_format(&h, &text));
        ASSERT_TRUE(strstr(text, " open:7:0\n") &&
                    strstr(text, " open:7:0@u47,o0.41.30.00000000000000ab\n") &&
                    strstr(text, " open:7:1@u48\n"));
}

/* Review W, W4: a handover longer than its reader's bound would be ignored whole, the keys of workers
 * stuck inside syncfs with it. The path keys are written as their superblocks' then: the file fits,
 * every group key stays, and each path key becomes one that blocks more, not less. */
TEST(open_keys_shortened_to_fit) {
        _cleanup_(handover_done) Handover h = {}, back = {};
        _cleanup_free_ char *text = NULL;
        char group[32];

        for (unsigned i = 0; i < HANDOVER_ENTRIES_MAX; i++) {
                _cleanup_free_ char *g = NULL;

                if (i % 2 == 0) { /* a path key of ~610 bytes */
                        ASSERT_TRUE(asprintf(&g, "open:7:%u@u1%0600u", i, 0U) > 0);
                        ASSERT_OK(handover_add_stuck(&h, (pid_t) (100 + i), 1, false, 1, BOOT_ID, g));
                } else {
                        snprintf(group, sizeof group, "8:%u", i);
                        ASSERT_OK(handover_add_stuck(&h, (pid_t) (100 + i), 1, true, 1, BOOT_ID, group));
                }
        }
        ASSERT_OK(handover_format(&h, &text));
        ASSERT_TRUE(strlen(text) <= HANDOVER_FILE_MAX);
        ASSERT_OK(handover_parse(text, &back));
        ASSERT_EQ(back.n_bad, 0U);
        ASSERT_EQ(back.n_stuck, (size_t) HANDOVER_ENTRIES_MAX);
        for (unsigned i = 0; i < HANDOVER_ENTRIES_MAX; i++) {
                if (i % 2 == 0)
                        snprintf(group, sizeof group, "open:7:%u", i);
                else
                        snprintf(group, sizeof group, "8:%u", i);
                ASSERT_STREQ(back.stuck[i].group, group);
        }
}

/* The handover with path keys padded to 'total' bytes as written in full (handover_format() without
 * shortening), the header and every line counted. */
static void handover_of_size(Handover *h, unsigned n, size_t total) {
        _cleanup_free_ char *text = NULL;
        size_t base;

        for (unsigned i = 0; i < n; i++) {
                char g[32];

                snprintf(g, sizeof g, "open:7:%u@u1", i);
                ASSERT_OK(handover_add_stuck(h, (pid_t) (100 + i), 1, false, 1, BOOT_ID, g));
        }
        ASSERT_OK(handover_format(h, &text));
        base = strlen(text);
        ASSERT_TRUE(base < total);
        for (unsigned i = 0; i < n; i++) {
                size_t pad = (total - base) / n + (i < (total - base) % n);
                size_t len = strlen(h->stuck[i].group);
                char *g = realloc(h->stuck[i].group, len + pad + 1);

                ASSERT_TRUE(g);
                memset(g + len, 'x', pad);
                g[len + pad] = 0;
                h->stuck[i].group = g;
        }
}

/* The bound exactly (review W, W4): a handover of HANDOVER_FILE_MAX bytes is read, and written as it
 * is; one byte more would be refused whole by handover_load(), so it is written with its path keys
 * shortened, and every worker still blocks a later pass. */
TEST(open_keys_shortened_at_the_bound) {
        char root[] = "/tmp/test-handover.XXXXXX", cmd[64];
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(test_mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        for (size_t extra = 0; extra <= 1; extra++) {
                _cleanup_(handover_done) Handover h = {}, back = {};
                _cleanup_free_ char *text = NULL;

                handover_of_size(&h, 100, HANDOVER_FILE_MAX + extra);
                ASSERT_OK(handover_format(&h, &text));
                if (extra == 0) /* fits: kept in full */
                        ASSERT_EQ(strlen(text), (size_t) HANDOVER_FILE_MAX);
                else
                        ASSERT_TRUE(strlen(text) < HANDOVER_FILE_MAX);
                ASSERT_OK(handover_save(fd, &h));
                ASSERT_OK(handover_load(fd, &back));
                ASSERT_EQ(back.n_bad, 0U);
                ASSERT_EQ(back.n_stuck, 100U);
                for (unsigned i = 0; i < 100; i++) {
                        char g[32];

                        snprintf(g, sizeof g, "open:7:%u", i);
                        if (extra == 0)
                                ASSERT_STREQ(back.stuck[i].group, h.stuck[i].group);
                        else
                                ASSERT_STREQ(back.stuck[i].group, g);
                }
        }
        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

TEST(bad_input) {
        _cleanup_(handover_done) Handover h = {};

        /* Groups that could not be read back are refused. */
        ASSERT_ERR(handover_add_stuck(&h, 1, 1, true, 1, BOOT_ID, "a b"), EINVAL);
        ASSERT_ERR(handover_add_stuck(&h, 1, 1, true, 1, BOOT_ID, ""), EINVAL);
        ASSERT_ERR(handover_add_stuck(&h, 1, 1, true, 1, BOOT_ID, "a\nstuck"), EINVAL);
        ASSERT_ERR(handover_add_stuck(&h, 0, 1, true, 1, BOOT_ID, "7:3"), EINVAL);
        ASSERT_ERR(handover_add_stuck(&h, 1, 1, true, 1, "", "7:3"), EINVAL); /* boot id unknown */
        ASSERT_EQ(h.n_stuck, 0U);

        ASSERT_OK(handover_parse("# comment\n"
                                 "\n"
                                 "stuck 12 34 1 56 " BOOT_ID " 7:3\n"
                                 "stuck 12 34 2 56 " BOOT_ID " 7:3\n" /* hung not 0/1 */
                                 "stuck 0 34 1 56 " BOOT_ID " 7:3\n"  /* pid 0 */
                                 "stuck -5 34 1 56 " BOOT_ID " 7:3\n"
                                 "stuck 12 34 1 56 " BOOT_ID "\n" /* no group */
                                 "stuck 12 34 1 56 " BOOT_ID " 7:3 extra\n"
                                 "stuck 12 34 1 56 " BOOT_ID " 7:3 -1\n"  /* not a counter */
                                 "stuck 12 34 1 56 " BOOT_ID " 7:3 1 2\n" /* one word too many */
                                 "stuck 12 34 1 56 7:3\n" /* no boot id (written before it was) */
                                 "stuck 12 34 1 56 0123456789ABCDEF 7:3\n" /* not a boot id */
                                 "unsynced 8:1 99\n"
                                 "unsynced 8 99\n"
                                 "unsynced 8:x 99\n"
                                 "unsynced 99999999999:1 99\n"
                                 "synced 0:60 99 0\n" /* a mount id is never 0 */
                                 "synced 0:60 99 x\n"
                                 "synced 0:60 99 5 6\n"
                                 "future 1 2 3\n"
                                 "unit 0 0123456789abcdef0123456789abcdef " TOKEN "\n"
                                 "unit x 0123456789abcdef0123456789abcdef " TOKEN "\n"
                                 "unit 5\n"
                                 "unit 5 0123456789ABCDEF0123456789ABCDEF " TOKEN "\n"
                                 "unit 5 0123456789abcdef " TOKEN "\n"
                                 "unit 5 " BOOT_ID "\n"            /* no token (written before it was) */
                                 "unit 5 " BOOT_ID " 0123456789\n" /* not a token */
                                 "unit 5 " BOOT_ID " " TOKEN " x\n"
                                 "stuck 12 34 1 56 " BOOT_ID " 8:0", /* no final newline */
                                 &h));
        ASSERT_EQ(h.n_stuck, 2U);
        ASSERT_STREQ(h.stuck[1].group, "8:0");
        ASSERT_EQ(h.n_unsynced, 1U);
        ASSERT_U64_EQ(h.unit_pass, 0);
        ASSERT_EQ(h.n_bad, 24U);
        ASSERT_TRUE(!h.stuck[0].progress_known); /* written before the counter was */
}

TEST(bounded) {
        _cleanup_(handover_done) Handover h = {}, back = {};
        _cleanup_free_ char *text = NULL;
        int r = 0;

        for (unsigned i = 0; i < HANDOVER_ENTRIES_MAX + 5 && r >= 0; i++)
                r = handover_add_unsynced(&h, makedev(8, i), 1);
        ASSERT_EQ(r, -E2BIG);
        ASSERT_EQ(h.n_unsynced, HANDOVER_ENTRIES_MAX);
        ASSERT_OK(handover_format(&h, &text));
        /* A longer file than the limit is read up to the limit; the rest counts as bad. */
        ASSERT_OK(handover_parse(text, &back));
        ASSERT_EQ(back.n_unsynced, HANDOVER_ENTRIES_MAX);
}

TEST(fresh) {
        _cleanup_(handover_done) Handover h = {};

        ASSERT_OK(handover_add_unsynced(&h, makedev(8, 1), 100 * USEC_PER_SEC));
        ASSERT_TRUE(handover_unsynced_fresh(&h, 0, 100 * USEC_PER_SEC));
        ASSERT_TRUE(handover_unsynced_fresh(&h, 0, 100 * USEC_PER_SEC + HANDOVER_UNSYNCED_MAX_AGE));
        ASSERT_TRUE(!handover_unsynced_fresh(&h, 0, 101 * USEC_PER_SEC + HANDOVER_UNSYNCED_MAX_AGE));
        /* From the future: another boot. */
        ASSERT_TRUE(!handover_unsynced_fresh(&h, 0, 99 * USEC_PER_SEC));
        /* review J (mutation H01): so far in the future that the age wraps around to a small one */
        ASSERT_OK(handover_add_unsynced(&h, makedev(8, 2), UINT64_MAX - 10 * USEC_PER_SEC));
        ASSERT_TRUE(!handover_unsynced_fresh(&h, 1, 100 * USEC_PER_SEC));
        /* review J (mutation H14): a stale "unsynced" line does not say the unit's pass saw it */
        ASSERT_TRUE(handover_unit_saw(&h, makedev(8, 1), NULL, 0, 100 * USEC_PER_SEC));
        ASSERT_TRUE(!handover_unit_saw(&h, makedev(8, 1), NULL, 0,
                                       101 * USEC_PER_SEC + HANDOVER_UNSYNCED_MAX_AGE));

        /* The unit's pass: none, fresh, stale, from the future, another boot, another pass's token
         * (or none: the mark file gone); forgotten with its lines. */
        const char *boot = "0123456789abcdef0123456789abcdef", *other = "fedcba9876543210fedcba9876543210";
        ASSERT_TRUE(!handover_unit_pass_fresh(&h, 100 * USEC_PER_SEC, boot, TOKEN));
        ASSERT_ERR(handover_set_unit_pass(&h, 100 * USEC_PER_SEC, "not-a-boot-id", TOKEN), EINVAL);
        ASSERT_ERR(handover_set_unit_pass(&h, 0, boot, TOKEN), EINVAL);
        ASSERT_ERR(handover_set_unit_pass(&h, 100 * USEC_PER_SEC, boot, ""), EINVAL);
        ASSERT_OK(handover_set_unit_pass(&h, 100 * USEC_PER_SEC, boot, TOKEN));
        ASSERT_TRUE(
                handover_unit_pass_fresh(&h, 100 * USEC_PER_SEC + HANDOVER_UNSYNCED_MAX_AGE, boot, TOKEN));
        ASSERT_TRUE(
                !handover_unit_pass_fresh(&h, 101 * USEC_PER_SEC + HANDOVER_UNSYNCED_MAX_AGE, boot, TOKEN));
        ASSERT_TRUE(!handover_unit_pass_fresh(&h, 99 * USEC_PER_SEC, boot, TOKEN));
        ASSERT_TRUE(!handover_unit_pass_fresh(&h, 100 * USEC_PER_SEC, other, TOKEN));
        ASSERT_TRUE(!handover_unit_pass_fresh(&h, 100 * USEC_PER_SEC, "", TOKEN));
        ASSERT_TRUE(!handover_unit_pass_fresh(&h, 100 * USEC_PER_SEC, boot, other));
        ASSERT_TRUE(!handover_unit_pass_fresh(&h, 100 * USEC_PER_SEC, boot, ""));
        handover_clear_unsynced(&h);
        ASSERT_TRUE(h.n_unsynced == 0 && h.unit_pass == 0 && h.unit_token[0] == 0);
        ASSERT_TRUE(!handover_unit_pass_fresh(&h, 100 * USEC_PER_SEC, boot, TOKEN));
}

/* A fake /proc: PID/stat files. */
static void put_stat(int dir_fd, int pid, const char *comm, char state, unsigned long long start) {
        char dir[32], text[512];
        _cleanup_close_ int fd = -EBADF;

        snprintf(dir, sizeof dir, "%d", pid);
        ASSERT_TRUE(mkdirat(dir_fd, dir, 0755) == 0 || errno == EEXIST);
        snprintf(dir, sizeof dir, "%d/stat", pid);
        snprintf(text, sizeof text, "%d (%s) %c 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 %llu 20 21\n",
                 pid, comm, state, start);
        fd = openat(dir_fd, dir, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, text, strlen(text)), (ssize_t) strlen(text));
}

TEST(prune) {
        char root[] = "/tmp/test-handover.XXXXXX", cmd[64];
        _cleanup_(handover_done) Handover h = {};
        _cleanup_close_ int fd = -EBADF;
        uint64_t start = 0;
        char state = 0;

        ASSERT_TRUE(test_mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        put_stat(fd, 10, "suspend-sync", 'D', 500);
        put_stat(fd, 11, "evil) D 1 2 (x", 'D', 600); /* comm with ") " inside */
        put_stat(fd, 12, "suspend-sync", 'Z', 700);
        put_stat(fd, 13, "reused", 'S', 9999);

        ASSERT_OK(proc_pid_start_time(fd, 11, &start, &state));
        ASSERT_U64_EQ(start, 600);
        ASSERT_EQ(state, 'D');
        ASSERT_ERR(proc_pid_start_time(fd, 99, &start, &state), ENOENT);

        ASSERT_OK(handover_add_stuck(&h, 10, 500, true, 1, BOOT_ID, "g10"));
        ASSERT_OK(handover_add_stuck(&h, 11, 600, true, 1, BOOT_ID, "g11"));
        ASSERT_OK(handover_add_stuck(&h, 12, 700, true, 1, BOOT_ID, "g12")); /* zombie */
        ASSERT_OK(handover_add_stuck(&h, 13, 800, true, 1, BOOT_ID, "g13")); /* pid reused */
        ASSERT_OK(handover_add_stuck(&h, 14, 900, true, 1, BOOT_ID, "g14")); /* gone */
        /* Review (stop 26, F3): recorded in another boot, a live pid with the same start time is
         * another process (a state directory that outlived the boot) */
        ASSERT_OK(handover_add_stuck(&h, 11, 600, true, 1, "fedcba9876543210fedcba9876543210", "g15"));
        ASSERT_EQ(handover_prune(&h, fd, BOOT_ID), 4U);
        ASSERT_EQ(h.n_stuck, 2U);
        ASSERT_STREQ(h.stuck[0].group, "g10");
        ASSERT_STREQ(h.stuck[1].group, "g11");
        /* our boot unknown: none can be told live */
        ASSERT_EQ(handover_prune(&h, fd, ""), 2U);
        ASSERT_EQ(h.n_stuck, 0U);

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

/* The real /proc: our own start time, and a child that ended is pruned once reaped. */
TEST(prune_real_proc) {
        _cleanup_(handover_done) Handover h = {};
        _cleanup_close_ int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        uint64_t start;
        pid_t child;

        ASSERT_TRUE(proc >= 0);
        child = fork();
        ASSERT_TRUE(child >= 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        ASSERT_OK(proc_pid_start_time(proc, child, &start, NULL));
        ASSERT_OK(handover_add_stuck(&h, child, start, true, 1, BOOT_ID, "g"));
        ASSERT_EQ(handover_prune(&h, proc, BOOT_ID), 0U);
        ASSERT_EQ(kill(child, SIGKILL), 0);
        ASSERT_EQ(waitpid(child, NULL, 0), child);
        ASSERT_EQ(handover_prune(&h, proc, BOOT_ID), 1U);
        ASSERT_EQ(h.n_stuck, 0U);
}

TEST(load_save) {
        char root[] = "/tmp/test-handover.XXXXXX", cmd[64];
        _cleanup_(handover_done) Handover h = {}, back = {}, empty = {};
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(test_mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(handover_load(fd, &back)); /* missing: empty */
        ASSERT_EQ(back.n_stuck + back.n_unsynced, 0U);
        ASSERT_OK(handover_add_unsynced(&h, makedev(8, 1), 1));
        ASSERT_OK(handover_save(fd, &h));
        ASSERT_OK(handover_load(fd, &back));
        ASSERT_EQ(back.n_unsynced, 1U);
        ASSERT_OK(handover_save(fd, &empty)); /* empty: file removed */
        ASSERT_TRUE(faccessat(fd, HANDOVER_FILE, F_OK, 0) < 0 && errno == ENOENT);
        ASSERT_OK(handover_save(fd, &empty)); /* idempotent */
        /* A FIFO or a link at its name (review AF, F3): an error at once, never a wait for a writer,
         * nor a file elsewhere read as ours; the token's file likewise. */
        handover_done(&back);
        ASSERT_OK(mkfifoat(fd, HANDOVER_FILE, 0600));
        ASSERT_ERR(handover_load(fd, &back), EBADFD);
        ASSERT_OK(unlinkat(fd, HANDOVER_FILE, 0));
        ASSERT_OK(handover_save(fd, &h));
        ASSERT_OK(renameat(fd, HANDOVER_FILE, fd, "elsewhere"));
        ASSERT_OK(symlinkat("elsewhere", fd, HANDOVER_FILE));
        ASSERT_ERR(handover_load(fd, &back), ELOOP);
        ASSERT_OK(unlinkat(fd, HANDOVER_FILE, 0));
        {
                char got[33];

                ASSERT_OK(mkfifoat(fd, HANDOVER_UNIT_MARK_FILE, 0600));
                ASSERT_ERR(handover_unit_mark_read(fd, got), EBADFD);
                ASSERT_OK(unlinkat(fd, HANDOVER_UNIT_MARK_FILE, 0));
        }

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

/* Review (stop 26, F2): a handover that cannot be written must not leave the earlier one in place,
 * whose "unit" line would vouch for this pass (its unsynced superblocks unlisted). The write fails
 * here because its temporary file's name is taken by a directory. */
TEST(save_failure_removes_stale) {
        char root[] = "/tmp/test-handover.XXXXXX", tmp[64], cmd[64];
        _cleanup_(handover_done) Handover h = {};
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(test_mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(handover_set_unit_pass(&h, 100, "0123456789abcdef0123456789abcdef", TOKEN));
        ASSERT_OK(handover_save(fd, &h));
        ASSERT_EQ(faccessat(fd, HANDOVER_FILE, F_OK, 0), 0);

        snprintf(tmp, sizeof tmp, HANDOVER_FILE ".tmp.%d", (int) getpid());
        ASSERT_EQ(mkdirat(fd, tmp, 0700), 0);
        ASSERT_OK(handover_add_unsynced(&h, makedev(8, 1), 100));
        ASSERT_TRUE(handover_save(fd, &h) < 0);
        ASSERT_TRUE(faccessat(fd, HANDOVER_FILE, F_OK, 0) < 0 && errno == ENOENT);

        /* control: the write works again */
        ASSERT_EQ(unlinkat(fd, tmp, AT_REMOVEDIR), 0);
        ASSERT_OK(handover_save(fd, &h));
        ASSERT_EQ(faccessat(fd, HANDOVER_FILE, F_OK, 0), 0);

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

/* Review (stop 26, open until stop 27): the unit's mark file. A write that fails removes the
 * earlier token (the pass that could not write its own must not inherit one); anything but one
 * token reads as -EBADMSG; removal of a missing file is no error. */
TEST(unit_mark) {
        char root[] = "/tmp/test-handover.XXXXXX", tmp[64], cmd[64], got[33];
        _cleanup_close_ int fd = -EBADF;
        usec_t before = 0;

        ASSERT_TRUE(test_mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_ERR(handover_unit_mark_read(fd, got), ENOENT);
        ASSERT_ERR(handover_unit_mark_write(fd, "short"), EINVAL);
        ASSERT_OK(handover_unit_mark_write(fd, TOKEN));
        ASSERT_OK(handover_unit_mark_read(fd, got));
        ASSERT_STREQ(got, TOKEN);

        snprintf(tmp, sizeof tmp, HANDOVER_UNIT_MARK_FILE ".tmp.%d", (int) getpid());
        ASSERT_EQ(mkdirat(fd, tmp, 0700), 0);
        ASSERT_TRUE(handover_unit_mark_write(fd, "fedcba9876543210fedcba9876543210") < 0);
        ASSERT_ERR(handover_unit_mark_read(fd, got), ENOENT);
        ASSERT_EQ(unlinkat(fd, tmp, AT_REMOVEDIR), 0);

        ASSERT_OK(write_file_atomic_at(fd, HANDOVER_UNIT_MARK_FILE, TOKEN "x\n", 34));
        ASSERT_ERR(handover_unit_mark_read(fd, got), EBADMSG);
        ASSERT_OK(write_file_atomic_at(fd, HANDOVER_UNIT_MARK_FILE, "", 0));
        ASSERT_ERR(handover_unit_mark_read(fd, got), EBADMSG);
        ASSERT_OK(write_file_atomic_at(fd, HANDOVER_UNIT_MARK_FILE, TOKEN, 32)); /* no newline */
        ASSERT_ERR(handover_unit_mark_read(fd, got), EBADMSG);
        ASSERT_OK(write_file_atomic_at(fd, HANDOVER_UNIT_MARK_FILE, TOKEN "\n\n", 34));
        ASSERT_ERR(handover_unit_mark_read(fd, got), EBADMSG);
        /* review J (mutation H13): the right length, but no newline at its end */
        ASSERT_OK(write_file_atomic_at(fd, HANDOVER_UNIT_MARK_FILE, TOKEN "x", 33));
        ASSERT_ERR(handover_unit_mark_read(fd, got), EBADMSG);
        ASSERT_OK(handover_unit_mark_remove(fd, NULL));
        ASSERT_OK(handover_unit_mark_remove(fd, NULL));
        ASSERT_ERR(handover_unit_mark_read(fd, got), ENOENT);

        /* The daemon's note of a marked sleep's post steps (review BF, F5): a file of its own in the
         * mark's format, left alone by the mark's write and removal (the post hook removes the mark
         * before the daemon's record-cycle runs). */
        ASSERT_ERR(handover_cycle_owed_read(fd, got, &before), ENOENT);
        ASSERT_ERR(handover_cycle_owed_write(fd, "", 1), EINVAL);
        ASSERT_ERR(handover_cycle_owed_write(fd, TOKEN, 0), EINVAL);
        ASSERT_ERR(handover_cycle_owed_write(fd, TOKEN, USEC_INFINITY), EINVAL);
        ASSERT_OK(handover_cycle_owed_write(fd, TOKEN, UINT64_C(123456789012)));
        ASSERT_OK(handover_unit_mark_write(fd, "fedcba9876543210fedcba9876543210"));
        ASSERT_OK(handover_unit_mark_remove(fd, NULL));
        ASSERT_OK(handover_cycle_owed_read(fd, got, &before));
        ASSERT_STREQ(got, TOKEN);
        ASSERT_EQ(before, UINT64_C(123456789012));
        ASSERT_OK(handover_cycle_owed_read(fd, got, NULL));
        /* the time is part of it: a note without one (or with anything else) is none */
        static const char *const bad[] = { TOKEN "\n",
                                           TOKEN " \n",
                                           TOKEN " 0\n",
                                           TOKEN " 12x\n",
                                           TOKEN " 12",
                                           TOKEN "  12\n",
                                           TOKEN " 18446744073709551615\n",
                                           TOKEN "x 12\n" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ASSERT_OK(write_file_atomic_at(fd, HANDOVER_CYCLE_OWED_FILE, bad[i], strlen(bad[i])));
                ASSERT_ERR(handover_cycle_owed_read(fd, got, &before), EBADMSG);
        }
        /* a NUL after the digits (review BI, BI-4) */
        ASSERT_OK(write_file_atomic_at(fd, HANDOVER_CYCLE_OWED_FILE, TOKEN " 12\0x\n", 38));
        ASSERT_ERR(handover_cycle_owed_read(fd, got, &before), EBADMSG);
        ASSERT_OK(handover_cycle_owed_remove(fd));
        ASSERT_OK(handover_cycle_owed_remove(fd));
        ASSERT_ERR(handover_cycle_owed_read(fd, got, &before), ENOENT);

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

static bool hook_link_up(int fd) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(fd, HOOK_LINK_FILE, target, sizeof target - 1);

        if (n < 0)
                return false;
        target[n] = 0;
        return streq(target, SLEEP_HOOK_BINARY);
}

/* KeepCheapSync=: the link systemd-sleep reaches the hook through. The unit's pass writes the marker,
 * then takes the link down; the next unit's pass and the end of the sleep put it back (a wrong target
 * or a plain file too), and the end of the sleep tells whether it was down (no post hook ran). */
TEST(hook_link) {
        char root[] = "/tmp/test-handover.XXXXXX", cmd[64];
        _cleanup_close_ int fd = -EBADF;
        bool down = true;

        ASSERT_TRUE(test_mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);

        /* a unit's pass starts: the link is made */
        ASSERT_OK(handover_unit_mark_write(fd, TOKEN));
        ASSERT_TRUE(hook_link_up(fd));
        /* it leaves the late pass out: marker written, link gone */
        ASSERT_OK(handover_late_skip_write(fd, TOKEN));
        ASSERT_EQ(faccessat(fd, LATE_SKIP_FILE, F_OK, 0), 0);
        ASSERT_TRUE(faccessat(fd, HOOK_LINK_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
        /* the sleep ends: link back, marker gone, and it was down */
        ASSERT_OK(handover_unit_mark_remove(fd, &down));
        ASSERT_TRUE(down);
        ASSERT_TRUE(hook_link_up(fd));
        ASSERT_TRUE(faccessat(fd, LATE_SKIP_FILE, F_OK, 0) < 0 && errno == ENOENT);
        /* a second end (the daemon's and the unit's ExecStopPost=): it was up */
        ASSERT_OK(handover_unit_mark_remove(fd, &down));
        ASSERT_TRUE(!down);
        ASSERT_TRUE(hook_link_up(fd));

        /* missing without the marker (never made: no tmpfiles.d): made, but no pass took it down */
        ASSERT_EQ(unlinkat(fd, HOOK_LINK_FILE, 0), 0);
        ASSERT_OK(handover_unit_mark_remove(fd, &down));
        ASSERT_TRUE(!down);
        ASSERT_TRUE(hook_link_up(fd));

        /* a link elsewhere, or a plain file, is replaced and counts as up (systemd-sleep ran it) */
        ASSERT_EQ(unlinkat(fd, HOOK_LINK_FILE, 0), 0);
        ASSERT_EQ(symlinkat("/bin/true", fd, HOOK_LINK_FILE), 0);
        ASSERT_TRUE(!handover_hook_link_up(fd)); /* what DeferCommit= asks (review I, I3) */
        ASSERT_OK(handover_unit_mark_remove(fd, &down));
        ASSERT_TRUE(handover_hook_link_up(fd));
        ASSERT_TRUE(!down);
        ASSERT_TRUE(hook_link_up(fd));
        ASSERT_EQ(unlinkat(fd, HOOK_LINK_FILE, 0), 0);
        ASSERT_OK(write_file_atomic_at(fd, HOOK_LINK_FILE, "x", 1));
        ASSERT_OK(handover_unit_mark_write(fd, TOKEN));
        ASSERT_TRUE(hook_link_up(fd));

        /* a pass left over from an earlier sleep: its start puts the link back */
        ASSERT_OK(handover_late_skip_write(fd, TOKEN));
        ASSERT_TRUE(!hook_link_up(fd));
        ASSERT_OK(handover_unit_mark_write(fd, "fedcba9876543210fedcba9876543210"));
        ASSERT_TRUE(hook_link_up(fd));
        ASSERT_TRUE(faccessat(fd, LATE_SKIP_FILE, F_OK, 0) < 0 && errno == ENOENT);

        /* no mark, or another pass's token in it (a later unit's pass of this sleep wrote its own,
         * review A's A1): no marker, the link stays */
        ASSERT_OK(handover_unit_mark_remove(fd, NULL));
        ASSERT_ERR(handover_late_skip_write(fd, TOKEN), ESTALE);
        ASSERT_ERR(handover_late_skip_write(fd, "short"), ESTALE);
        ASSERT_OK(handover_unit_mark_write(fd, "fedcba9876543210fedcba9876543210"));
        ASSERT_ERR(handover_late_skip_write(fd, TOKEN), ESTALE);
        ASSERT_TRUE(hook_link_up(fd));
        ASSERT_TRUE(faccessat(fd, LATE_SKIP_FILE, F_OK, 0) < 0 && errno == ENOENT);

        /* the link cannot be removed (here a directory with a file in it): the marker goes too, so
         * the hook that systemd-sleep still reaches runs the late pass (review A's A2) */
        ASSERT_OK(handover_unit_mark_write(fd, TOKEN));
        ASSERT_EQ(unlinkat(fd, HOOK_LINK_FILE, 0), 0);
        ASSERT_EQ(mkdirat(fd, HOOK_LINK_FILE, 0755), 0);
        ASSERT_EQ(mkdirat(fd, HOOK_LINK_FILE "/x", 0755), 0);
        ASSERT_TRUE(handover_late_skip_write(fd, TOKEN) < 0);
        ASSERT_TRUE(faccessat(fd, LATE_SKIP_FILE, F_OK, 0) < 0 && errno == ENOENT);
        /* ... nor be put back: the unit's pass then defers nothing to a late pass */
        ASSERT_OK(handover_unit_mark_write(fd, TOKEN));
        ASSERT_TRUE(!handover_hook_link_up(fd));
        ASSERT_TRUE(!handover_hook_link_up(-EBADF));

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

/* Review I, I4: the daemon's restore-knob ends its own pass's cycle only. Run late, after the next
 * sleep's unit pass wrote its token (and left the late pass out), it leaves that mark, marker and
 * link alone; its own token, no token, or a mark that is no token, it ends as before. */
TEST(unit_mark_end) {
        static const char *const next = "fedcba9876543210fedcba9876543210";
        char root[] = "/tmp/test-handover.XXXXXX", cmd[64], got[33];
        _cleanup_close_ int fd = -EBADF;
        bool down = true;

        ASSERT_TRUE(test_mkdtemp(root));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);

        /* the next sleep's pass has begun and took the link down: all of it stays */
        ASSERT_OK(handover_unit_mark_write(fd, next));
        ASSERT_OK(handover_late_skip_write(fd, next));
        ASSERT_ERR(handover_unit_mark_end(fd, TOKEN, &down), ESTALE);
        ASSERT_TRUE(!down);
        ASSERT_OK(handover_unit_mark_read(fd, got));
        ASSERT_STREQ(got, next);
        ASSERT_EQ(faccessat(fd, LATE_SKIP_FILE, F_OK, 0), 0);
        ASSERT_TRUE(!hook_link_up(fd));
        /* its own restore ends it, and tells the link was down */
        ASSERT_OK(handover_unit_mark_end(fd, next, &down));
        ASSERT_TRUE(down);
        ASSERT_ERR(handover_unit_mark_read(fd, got), ENOENT);
        ASSERT_TRUE(faccessat(fd, LATE_SKIP_FILE, F_OK, 0) < 0 && errno == ENOENT);
        ASSERT_TRUE(hook_link_up(fd));
        /* none there: nothing to end, no error */
        ASSERT_OK(handover_unit_mark_end(fd, TOKEN, &down));
        ASSERT_TRUE(!down);
        /* a mark that is no token vouches for nothing: removed */
        ASSERT_OK(write_file_atomic_at(fd, HANDOVER_UNIT_MARK_FILE, "garbage\n", 8));
        ASSERT_OK(handover_unit_mark_end(fd, TOKEN, NULL));
        ASSERT_ERR(handover_unit_mark_read(fd, got), ENOENT);
        /* no token (the unit's ExecStopPost=, the post hook, a manual run): whatever stands */
        ASSERT_OK(handover_unit_mark_write(fd, next));
        ASSERT_OK(handover_unit_mark_end(fd, NULL, NULL));
        ASSERT_ERR(handover_unit_mark_read(fd, got), ENOENT);

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

int main(void) {
        RUN(round_trip);
        RUN(bad_input);
        RUN(open_keys);
        RUN(open_keys_shortened_to_fit);
        RUN(open_keys_shortened_at_the_bound);
        RUN(bounded);
        RUN(fresh);
        RUN(prune);
        RUN(prune_real_proc);
        RUN(load_save);
        RUN(save_failure_removes_stale);
        RUN(unit_mark);
        RUN(hook_link);
        RUN(unit_mark_end);
        return 0;
}
