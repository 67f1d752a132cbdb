/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf-bounds.c (review U, U4): the record of the last full read's DeadlineSec= and
 * MountTimeoutSec=, its text both ways, which pass it stands for (boot, root, --config=), the cap it
 * puts on the defaults of a configuration not read in full (never a raise), and its file in a state
 * directory (atomic, public, never a wait on something that is no regular file).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-id128.h>
#include <unistd.h>

#include "conf-bounds.h"
#include "shared/fileio.h"
#include "tests.h"

#define BOOT "0123456789abcdef0123456789abcdef"
#define OTHER_BOOT "fedcba9876543210fedcba9876543210"

static char test_root[] = "/tmp/test-conf-bounds.XXXXXX";

static void put(const char *path, const char *text) {
        FILE *w;

        ASSERT_TRUE((w = fopen(path, "we")));
        fputs(text, w);
        ASSERT_TRUE(fclose(w) == 0);
}

static ConfBoundsRecord record(const char *root, const char *config) {
        ConfBoundsRecord r = {
                .bounds = { .deadline = 5 * USEC_PER_SEC,
                            .mount_timeout = 2 * USEC_PER_SEC,
                            .realtime = 1767236400123456ULL },
                .root = (char *) root,
                .config = (char *) config,
        };

        memcpy(r.boot_id, BOOT, sizeof r.boot_id);
        return r;
}

#define TEXT                                                                                         \
        "BOOT_ID=" BOOT "\nREALTIME_USEC=1767236400123456\nROOT=/\nCONFIG=\nDEADLINE_USEC=5000000\n" \
        "MOUNT_TIMEOUT_USEC=2000000\n"

/* The text, field by field, and back; what the configuration could not have set is refused. */
TEST(format) {
        _cleanup_(conf_bounds_record_done) ConfBoundsRecord back = {};
        ConfBoundsRecord r = record("/", NULL);
        char *t = NULL;

        ASSERT_OK(conf_bounds_format(&r, &t));
        ASSERT_STREQ(t, TEXT);
        ASSERT_OK(conf_bounds_parse(t, &back));
        free(t);
        ASSERT_STREQ(back.boot_id, BOOT);
        ASSERT_STREQ(back.root, "/");
        ASSERT_STREQ(back.config, "");
        ASSERT_U64_EQ(back.bounds.deadline, 5 * USEC_PER_SEC);
        ASSERT_U64_EQ(back.bounds.mount_timeout, 2 * USEC_PER_SEC);
        ASSERT_U64_EQ(back.bounds.realtime, 1767236400123456ULL);

        r = record("/srv/root", "/etc/other.conf");
        ASSERT_OK(conf_bounds_format(&r, &t));
        ASSERT_TRUE(strstr(t, "\nROOT=/srv/root\nCONFIG=/etc/other.conf\n"));
        free(t);

        r = record("/", "/a\nDEADLINE_USEC=1");
        ASSERT_ERR(conf_bounds_format(&r, &t), EINVAL);
        r = record("", NULL);
        ASSERT_ERR(conf_bounds_format(&r, &t), EINVAL);
        r = record("/", NULL);
        r.boot_id[0] = 'X';
        ASSERT_ERR(conf_bounds_format(&r, &t), EINVAL);
        r = record("/", NULL);
        r.bounds.deadline = 0;
        ASSERT_ERR(conf_bounds_format(&r, &t), EINVAL);
        r = record("/", NULL);
        r.bounds.mount_timeout = 24 * 60 * USEC_PER_MINUTE + 1;
        ASSERT_ERR(conf_bounds_format(&r, &t), EINVAL);
}

/* Every key once, the numbers in range, each line ended; unknown keys are a later version's. */
TEST(parse) {
        static const char *const bad[] = {
                "",
                "BOOT_ID=" BOOT
                "\nREALTIME_USEC=1\nROOT=/\nCONFIG=\nDEADLINE_USEC=5000000\n", /* a key missing */
                TEXT "DEADLINE_USEC=1000000\n",                                /* twice */
                "BOOT_ID=" BOOT
                "\nREALTIME_USEC=1\nROOT=/\nCONFIG=\nDEADLINE_USEC=5000000\nMOUNT_TIMEOUT_USEC=2000000",
                "BOOT_ID=" BOOT
                "\nREALTIME_USEC=1\nROOT=/\nCONFIG=\nDEADLINE_USEC=5s\nMOUNT_TIMEOUT_USEC=2000000\n",
                "BOOT_ID=" BOOT
                "\nREALTIME_USEC=1\nROOT=/\nCONFIG=\nDEADLINE_USEC=0\nMOUNT_TIMEOUT_USEC=2000000\n",
                "BOOT_ID=" BOOT
                "\nREALTIME_USEC=1\nROOT=/\nCONFIG=\nDEADLINE_USEC=-1\nMOUNT_TIMEOUT_USEC=2000000\n",
                "BOOT_ID=" BOOT "\nREALTIME_USEC=1\nROOT=/\nCONFIG=\nDEADLINE_USEC=86400000001\n"
                "MOUNT_TIMEOUT_USEC=2000000\n",
                "BOOT_ID=" BOOT "\nREALTIME_USEC=1\nROOT=/\nCONFIG=\nDEADLINE_USEC=18446744073709551616\n"
                "MOUNT_TIMEOUT_USEC=2000000\n",
                "BOOT_ID=0123\nREALTIME_USEC=1\nROOT=/\nCONFIG=\nDEADLINE_USEC=5000000\nMOUNT_TIMEOUT_USEC=2000000\n",
                "BOOT_ID=" BOOT
                "\nREALTIME_USEC=1\nROOT=\nCONFIG=\nDEADLINE_USEC=5000000\nMOUNT_TIMEOUT_USEC=2000000\n",
                "BOOT_ID=" BOOT
                "\nREALTIME_USEC=1\nROOT=/\nCONFIG=\nDEADLINE_USEC=5000000\nMOUNT_TIMEOUT_USEC=2000000\n"
                "garbage\n",
        };
        _cleanup_(conf_bounds_record_done) ConfBoundsRecord r = {};
        _cleanup_free_ char *big = NULL;

        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                ConfBoundsRecord x = { .bounds.deadline = 42 };

                if (conf_bounds_parse(bad[i], &x) != -EBADMSG) {
                        fprintf(stderr, "  parsed: %s\n", bad[i]);
                        ASSERT_TRUE(false);
                }
                ASSERT_U64_EQ(x.bounds.deadline, 42); /* untouched */
        }
        ASSERT_OK(conf_bounds_parse("FUTURE_KEY=1\n" TEXT, &r));
        ASSERT_U64_EQ(r.bounds.deadline, 5 * USEC_PER_SEC);

        ASSERT_TRUE((big = malloc(CONF_BOUNDS_FILE_MAX + 2)));
        memset(big, '\n', CONF_BOUNDS_FILE_MAX + 1);
        big[CONF_BOUNDS_FILE_MAX + 1] = 0;
        ASSERT_ERR(conf_bounds_parse(big, &r), EBADMSG);
}

/* The same boot, root and --config= (none: the default locations), nothing else. */
TEST(match) {
        ConfBoundsRecord r = record("/", NULL), e = record("/", "/etc/x.conf");

        r.config = (char *) "";
        ASSERT_TRUE(conf_bounds_match(&r, BOOT, "/", NULL));
        ASSERT_TRUE(!conf_bounds_match(&r, OTHER_BOOT, "/", NULL));
        ASSERT_TRUE(!conf_bounds_match(&r, NULL, "/", NULL));
        ASSERT_TRUE(!conf_bounds_match(&r, "", "/", NULL));
        ASSERT_TRUE(!conf_bounds_match(&r, BOOT, "/srv", NULL));
        ASSERT_TRUE(!conf_bounds_match(&r, BOOT, "/", "/etc/x.conf"));
        ASSERT_TRUE(conf_bounds_match(&e, BOOT, "/", "/etc/x.conf"));
        ASSERT_TRUE(!conf_bounds_match(&e, BOOT, "/", NULL));
}

/* Lowers the defaults only: a value a file read set, or a record above the default, stays. */
TEST(cap) {
        _cleanup_(policy_freep) Policy *p = NULL;
        ConfBounds b = { .deadline = 5 * USEC_PER_SEC, .mount_timeout = 2 * USEC_PER_SEC };
        Policy q;

        ASSERT_OK(policy_new(&p));
        q = *p;
        ASSERT_EQ(conf_bounds_cap(&b, &q), CONF_BOUNDS_CAPPED_DEADLINE | CONF_BOUNDS_CAPPED_MOUNT_TIMEOUT);
        ASSERT_U64_EQ(q.deadline, 5 * USEC_PER_SEC);
        ASSERT_U64_EQ(q.mount_timeout, 2 * USEC_PER_SEC);
        ASSERT_STREQ(q.o_deadline.file, CONF_BOUNDS_ORIGIN);
        ASSERT_STREQ(q.o_mount_timeout.file, CONF_BOUNDS_ORIGIN);
        /* ... once: the origin now says where it came from */
        ASSERT_EQ(conf_bounds_cap(&(ConfBounds) { .deadline = 1, .mount_timeout = 1 }, &q), 0);

        /* Never raised. */
        q = *p;
        ASSERT_EQ(conf_bounds_cap(
                          &(ConfBounds) { .deadline = 60 * USEC_PER_SEC, .mount_timeout = 20 * USEC_PER_SEC },
                          &q),
                  0);
        ASSERT_U64_EQ(q.deadline, 30 * USEC_PER_SEC);
        ASSERT_U64_EQ(q.mount_timeout, 10 * USEC_PER_SEC);
        ASSERT_TRUE(!q.o_deadline.file && !q.o_mount_timeout.file);
        q = *p;
        ASSERT_EQ(conf_bounds_cap(
                          &(ConfBounds) { .deadline = 60 * USEC_PER_SEC, .mount_timeout = 2 * USEC_PER_SEC },
                          &q),
                  CONF_BOUNDS_CAPPED_MOUNT_TIMEOUT);
        ASSERT_U64_EQ(q.deadline, 30 * USEC_PER_SEC);

        /* A value a file read set (or the command line's) is the admin's word now. */
        q = *p;
        q.deadline = 20 * USEC_PER_SEC;
        q.o_deadline = (Origin) { .file = "/etc/suspend-sync.conf", .line = 2 };
        ASSERT_EQ(conf_bounds_cap(&b, &q), CONF_BOUNDS_CAPPED_MOUNT_TIMEOUT);
        ASSERT_U64_EQ(q.deadline, 20 * USEC_PER_SEC);

        /* No record. */
        q = *p;
        ASSERT_EQ(conf_bounds_cap(NULL, &q), 0);
        ASSERT_EQ(conf_bounds_cap(&(ConfBounds) {}, &q), 0);
        ASSERT_U64_EQ(q.deadline, 30 * USEC_PER_SEC);
}

/* What save writes, load reads back for the same root and --config= in this boot only; a file that
 * is not a record, of another boot, or no regular file is not taken; nothing is made. */
TEST(save_load) {
        _cleanup_(policy_freep) Policy *p = NULL;
        char f[sizeof(test_root) + 32], missing[sizeof(test_root) + 16];
        _cleanup_free_ char *text = NULL;
        usec_t before = now(CLOCK_REALTIME);
        ConfBounds b = {};
        sd_id128_t id;
        char *at;
        struct stat st;

        if (sd_id128_get_boot(&id) < 0) {
                test_skip("this boot's id cannot be read");
                return;
        }
        snprintf(f, sizeof f, "%s/" CONF_BOUNDS_FILE, test_root);
        snprintf(missing, sizeof missing, "%s/nope", test_root);
        ASSERT_ERR(conf_bounds_load(test_root, "/", NULL, &b), ENOENT);

        ASSERT_OK(policy_new(&p));
        p->deadline = 3 * USEC_PER_SEC;
        p->mount_timeout = 1500 * USEC_PER_MSEC;
        ASSERT_OK(conf_bounds_save(test_root, "/", "/etc/x.conf", p));
        ASSERT_TRUE(stat(f, &st) == 0 && (st.st_mode & 07777) == PUBLIC_FILE_MODE);
        ASSERT_OK(conf_bounds_load(test_root, "/", "/etc/x.conf", &b));
        ASSERT_U64_EQ(b.deadline, 3 * USEC_PER_SEC);
        ASSERT_U64_EQ(b.mount_timeout, 1500 * USEC_PER_MSEC);
        ASSERT_TRUE(b.realtime >= before && b.realtime <= now(CLOCK_REALTIME));
        b = (ConfBounds) { .deadline = 42 };
        ASSERT_ERR(conf_bounds_load(test_root, "/", NULL, &b), ESTALE);
        ASSERT_ERR(conf_bounds_load(test_root, "/srv", "/etc/x.conf", &b), ESTALE);
        ASSERT_U64_EQ(b.deadline, 42);

        /* Another boot's (a state directory that outlived one). */
        ASSERT_OK(read_full_file_at(AT_FDCWD, f, CONF_BOUNDS_FILE_MAX, &text, NULL));
        ASSERT_TRUE((at = strstr(text, "BOOT_ID=")));
        at[8] = at[8] == 'f' ? 'e' : 'f';
        put(f, text);
        ASSERT_ERR(conf_bounds_load(test_root, "/", "/etc/x.conf", &b), ESTALE);
        put(f, "garbage\n");
        ASSERT_ERR(conf_bounds_load(test_root, "/", "/etc/x.conf", &b), EBADMSG);

        /* A FIFO is refused at once, never read (nobody writes it: a read would wait for good). */
        ASSERT_TRUE(unlink(f) == 0);
        ASSERT_TRUE(mkfifo(f, 0600) == 0);
        ASSERT_ERR(conf_bounds_load(test_root, "/", "/etc/x.conf", &b), EBADFD);
        ASSERT_TRUE(unlink(f) == 0);

        ASSERT_ERR(conf_bounds_save(missing, "/", NULL, p), ENOENT);
        ASSERT_TRUE(access(missing, F_OK) < 0);
        ASSERT_OK(conf_bounds_save(test_root, "/", NULL, p));
        ASSERT_OK(conf_bounds_load(test_root, "/", NULL, &b));
}

int main(void) {
        char f[sizeof(test_root) + 32];

        ASSERT_TRUE(test_mkdtemp(test_root));
        RUN(format);
        RUN(parse);
        RUN(match);
        RUN(cap);
        RUN(save_load);
        /* Only the record is left: no temporary file. */
        snprintf(f, sizeof f, "%s/" CONF_BOUNDS_FILE, test_root);
        (void) unlink(f);
        ASSERT_TRUE(rmdir(test_root) == 0);
        return test_result();
}
