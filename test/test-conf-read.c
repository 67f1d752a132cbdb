/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/conf-read.c: the records the reader child sends (round trip, malformed input), a
 * bounded read giving exactly what policy_load() gives in-process, and a read that hangs (a FIFO
 * with no writer as the main file: open() blocks like on a dead NFS server) returning -ETIMEDOUT
 * within its bound and naming the path it was stuck at.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf-read.h"
#include "config.h"
#include "late-skip.h"
#include "policy.h"
#include "shared/bounded-child.h"
#include "sleep-hooks.h"
#include "shared/macro.h"
#include "shared/strv.h"
#include "shared/time-util.h"
#include "tests.h"
#include "wrap-readdir.h"

#define CONFIG_DIR FIXTURES_DIR "/config"

static int open_root(const char *scenario) {
        char path[4096];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", CONFIG_DIR, scenario);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        return fd;
}

TEST(roundtrip) {
        _cleanup_(policy_sources_freep) PolicySources *s = calloc(1, sizeof(PolicySources)), *t = NULL;
        _cleanup_(conf_stream_done) ConfStream st = {};
        _cleanup_free_ char *data = NULL;
        char *stream;
        size_t size;

        ASSERT_TRUE(s);
        s->truncated = true;
        ASSERT_OK(policy_sources_add(s, "/etc/suspend-sync.conf", 0, "[Sync]\nMaxParallel=2\n", 21));
        ASSERT_OK(policy_sources_add(s, "/run/suspend-sync.conf.d/a.conf", -EACCES, NULL, 0));
        ASSERT_OK(policy_sources_add(s, "/usr/lib/suspend-sync.conf.d/empty.conf", 0, "", 0));
        ASSERT_OK(conf_sources_serialize(s, &data, &size));
        ASSERT_OK(conf_sources_parse(data, size, &t));
        ASSERT_EQ(t->n_files, 3);
        ASSERT_TRUE(t->truncated && !t->explicit);
        ASSERT_STREQ(t->files[0].path, "/etc/suspend-sync.conf");
        ASSERT_STREQ(t->files[0].text, "[Sync]\nMaxParallel=2\n");
        ASSERT_EQ(t->files[0].size, 21);
        ASSERT_EQ(t->files[1].error, -EACCES);
        ASSERT_TRUE(t->files[1].text == NULL);
        ASSERT_STREQ(t->files[2].text, "");

        /* What the listing found besides the files travels too (review Q): a directory not listed,
         * with its error, and the notices, a dangling link with the file that applies instead. */
        {
                _cleanup_(policy_sources_freep) PolicySources *k = calloc(1, sizeof(PolicySources)),
                                                              *v = NULL;
                _cleanup_free_ char *d = NULL;
                size_t n;

                ASSERT_TRUE(k);
                ASSERT_OK(policy_sources_add(k, "/etc/suspend-sync.conf", 0, "[Sync]\nMaxParallel=2\n", 21));
                ASSERT_OK(policy_sources_add_kind(k, POLICY_FILE_UNLISTED_DIR, "/usr/lib/suspend-sync.conf.d",
                                                  -ELOOP, NULL, 0));
                ASSERT_OK(policy_sources_add_kind(k, POLICY_FILE_NOT_DIRECTORY, "/run/suspend-sync.conf.d", 0,
                                                  "", 0));
                ASSERT_OK(policy_sources_add_kind(k, POLICY_FILE_DANGLING, "/etc/suspend-sync.conf.d/b.conf",
                                                  0, "/usr/lib/suspend-sync.conf.d/b.conf", 35));
                ASSERT_OK(policy_sources_add_kind(k, POLICY_FILE_NOT_DIRECTORY, "/x/suspend-sync.conf.d", 0,
                                                  "/x", 2));
                ASSERT_OK(policy_sources_add_kind(k, POLICY_FILE_LEFT_OUT, "/etc/suspend-sync.conf.d/z.conf",
                                                  0, "", 0));
                ASSERT_OK(conf_sources_serialize(k, &d, &n));
                ASSERT_OK(conf_sources_parse(d, n, &v));
                ASSERT_EQ(v->n_files, 6);
                ASSERT_EQ(v->files[4].kind, POLICY_FILE_NOT_DIRECTORY);
                ASSERT_STREQ(v->files[4].text, "/x");
                ASSERT_EQ(v->files[5].kind, POLICY_FILE_LEFT_OUT);
                ASSERT_STREQ(v->files[5].path, "/etc/suspend-sync.conf.d/z.conf");
                ASSERT_EQ(v->files[0].kind, POLICY_FILE_CONF);
                ASSERT_EQ(v->files[1].kind, POLICY_FILE_UNLISTED_DIR);
                ASSERT_EQ(v->files[1].error, -ELOOP);
                ASSERT_STREQ(v->files[1].path, "/usr/lib/suspend-sync.conf.d");
                ASSERT_EQ(v->files[2].kind, POLICY_FILE_NOT_DIRECTORY);
                ASSERT_EQ(v->files[3].kind, POLICY_FILE_DANGLING);
                ASSERT_STREQ(v->files[3].text, "/usr/lib/suspend-sync.conf.d/b.conf");
        }
        {
                /* One entry per kind: its kind byte follows the flags, the count and its error. */
                _cleanup_(policy_sources_freep) PolicySources *one = calloc(1, sizeof(PolicySources));
                _cleanup_free_ char *d = NULL;
                PolicySources *u = NULL;
                size_t n;

                ASSERT_TRUE(one);
                ASSERT_OK(policy_sources_add_kind(one, POLICY_FILE_UNLISTED_DIR, "/d", -EIO, NULL, 0));
                ASSERT_OK(conf_sources_serialize(one, &d, &n));
                ASSERT_EQ(d[1 + 4 + 4], POLICY_FILE_UNLISTED_DIR);
                ASSERT_OK(conf_sources_parse(d, n, &u));
                u = policy_sources_free(u);
                d[1 + 4 + 4] = _POLICY_FILE_KIND_MAX; /* no such kind */
                ASSERT_ERR(conf_sources_parse(d, n, &u), EBADMSG);
                d[1 + 4 + 4] = POLICY_FILE_DANGLING; /* a notice with an error */
                ASSERT_ERR(conf_sources_parse(d, n, &u), EBADMSG);
                d[1 + 4 + 4] = POLICY_FILE_LEFT_OUT; /* so is the later kind */
                ASSERT_ERR(conf_sources_parse(d, n, &u), EBADMSG);
                memset(d + 1 + 4, 0, 4);                 /* error 0 */
                d[1 + 4 + 4] = POLICY_FILE_UNLISTED_DIR; /* a directory not listed without its error */
                ASSERT_ERR(conf_sources_parse(d, n, &u), EBADMSG);
                d[1 + 4 + 4] = POLICY_FILE_NOT_DIRECTORY; /* control: a notice, no error */
                ASSERT_OK(conf_sources_parse(d, n, &u));
                ASSERT_EQ(u->files[0].kind, POLICY_FILE_NOT_DIRECTORY);
                policy_sources_free(u);
        }

        /* Every cut of the payload is refused, never misread. */
        for (size_t cut = 0; cut < size; cut++) {
                PolicySources *u = NULL;
                ASSERT_ERR(conf_sources_parse(data, cut, &u), EBADMSG);
        }

        /* The stream: progress records, then the sources, our own entry, then the hooks and their
         * end; an incomplete tail is "more to come". */
        stream = malloc(128 + 2 * size);
        ASSERT_TRUE(stream);
        memcpy(stream, "P\x04\0\0\0/etcP\x08\0\0\0/usr/lib", 22);
        stream[22] = 'S';
        memcpy(stream + 23, &(uint32_t) { (uint32_t) size }, 4);
        memcpy(stream + 27, data, size);
        memcpy(stream + 27 + size,
               "O\x06\0\0\0"
               "0/lib/"
               "P\x04\0\0\0/lib"
               "H\x06\0\0\0/lib/a"
               "H\x06\0\0\0/lib/b"
               "E\0\0\0\0",
               11 + 9 + 11 + 11 + 5);
        t = policy_sources_free(t);
        ASSERT_OK(conf_stream_parse(stream, 27 + size - 1, &st));
        ASSERT_STREQ(st.progress, "/usr/lib");
        ASSERT_TRUE(st.sources == NULL && st.hooks == NULL && !st.hooks_done);
        ASSERT_OK(conf_stream_parse(stream, 27 + size, &st));
        ASSERT_TRUE(st.sources && st.sources->n_files == 3);
        ASSERT_TRUE(st.hooks == NULL && !st.hooks_done);
        ASSERT_EQ(st.hook_ours, -ENODATA);
        /* what each reader waits for: the sources; 'O' for the unit's pass (review M, M2: no other
         * waits on a system-sleep directory); the hooks' end for the late pass */
        ASSERT_TRUE(conf_stream_complete(&st, false, false));
        ASSERT_TRUE(!conf_stream_complete(&st, false, true));
        ASSERT_TRUE(!conf_stream_complete(&st, true, false));
        ASSERT_OK(conf_stream_parse(stream, 27 + size + 10, &st)); /* 'O' not whole yet */
        ASSERT_EQ(st.hook_ours, -ENODATA);
        ASSERT_OK(conf_stream_parse(stream, 27 + size + 11, &st));
        ASSERT_EQ(st.hook_ours, 0);
        ASSERT_TRUE(conf_stream_complete(&st, false, true));
        ASSERT_TRUE(!conf_stream_complete(&st, true, true));
        ASSERT_STREQ(st.hook_other, "/lib/");
        ASSERT_OK(conf_stream_parse(stream, 27 + size + 11 + 9 + 11 + 11 + 4, &st)); /* 'E' not whole yet */
        ASSERT_STREQ(st.progress, "/lib");
        ASSERT_TRUE(st.n_hooks == 2 && !st.hooks_done);
        ASSERT_STREQ(st.hooks[0], "/lib/a");
        ASSERT_STREQ(st.hooks[1], "/lib/b");
        ASSERT_TRUE(st.hooks[2] == NULL);
        ASSERT_OK(conf_stream_parse(stream, 27 + size + 11 + 9 + 11 + 11 + 5, &st));
        ASSERT_TRUE(st.n_hooks == 2 && st.hooks_done);
        ASSERT_TRUE(conf_stream_complete(&st, true, true));
        /* Out of order: a hook, the end or our entry before the sources; a hook or the end before
         * our entry; our entry twice, or malformed; the sources twice. */
        ASSERT_ERR(conf_stream_parse("H\x02\0\0\0/a", 7, &st), EBADMSG);
        ASSERT_ERR(conf_stream_parse("E\0\0\0\0", 5, &st), EBADMSG);
        ASSERT_ERR(conf_stream_parse("O\x01\0\0\0"
                                     "1",
                                     6, &st),
                   EBADMSG);
        memcpy(stream + 27 + size, "H\x02\0\0\0/a", 7);
        ASSERT_ERR(conf_stream_parse(stream, 27 + size + 7, &st), EBADMSG);
        memcpy(stream + 27 + size, "E\0\0\0\0", 5);
        ASSERT_ERR(conf_stream_parse(stream, 27 + size + 5, &st), EBADMSG);
        memcpy(stream + 27 + size,
               "O\x01\0\0\0"
               "1"
               "O\x01\0\0\0"
               "1",
               12);
        ASSERT_ERR(conf_stream_parse(stream, 27 + size + 12, &st), EBADMSG);
        ASSERT_OK(conf_stream_parse(stream, 27 + size + 6, &st));
        ASSERT_EQ(st.hook_ours, 1);
        ASSERT_TRUE(st.hook_other == NULL);
        memcpy(stream + 27 + size,
               "O\x01\0\0\0"
               "e",
               6);
        ASSERT_OK(conf_stream_parse(stream, 27 + size + 6, &st));
        ASSERT_EQ(st.hook_ours, -EIO);
        memcpy(stream + 27 + size,
               "O\x02\0\0\0"
               "1x",
               7); /* only "not ours" names an entry */
        ASSERT_ERR(conf_stream_parse(stream, 27 + size + 7, &st), EBADMSG);
        memcpy(stream + 27 + size,
               "O\x01\0\0\0"
               "x",
               6);
        ASSERT_ERR(conf_stream_parse(stream, 27 + size + 6, &st), EBADMSG);
        memcpy(stream + 27 + size, "O\0\0\0\0", 5);
        ASSERT_ERR(conf_stream_parse(stream, 27 + size + 5, &st), EBADMSG);
        memcpy(stream + 27 + size, stream + 22, 5 + size);
        ASSERT_ERR(conf_stream_parse(stream, 27 + size + 5 + size, &st), EBADMSG);
        stream[0] = 'Z';
        ASSERT_ERR(conf_stream_parse(stream, 27 + size, &st), EBADMSG);
        free(stream);
}

/* Review AS, AS-5: a child that fails says why ('X' and its errno), before or after the sources, and
 * the parent tells that instead of a protocol error; anything but a 4-byte errno in 1..4095 is
 * malformed. Negative control: the old parser refused 'X' (EBADMSG) and kept no error. */
TEST(child_error_record) {
        _cleanup_(conf_stream_done) ConfStream st = { .hook_ours = -ENODATA };
        char rec[5 + 4] = "X\x04\0\0\0";

        memcpy(rec + 5, &(int32_t) { EMFILE }, 4);
        ASSERT_OK(conf_stream_parse(rec, sizeof rec, &st));
        ASSERT_EQ(st.error, -EMFILE);
        ASSERT_TRUE(st.sources == NULL && !conf_stream_complete(&st, false, false));
        ASSERT_OK(conf_stream_parse(rec, sizeof rec - 1, &st)); /* not whole yet */
        ASSERT_EQ(st.error, 0);
        memcpy(rec + 5, &(int32_t) { 0 }, 4);
        ASSERT_ERR(conf_stream_parse(rec, sizeof rec, &st), EBADMSG);
        memcpy(rec + 5, &(int32_t) { 4096 }, 4);
        ASSERT_ERR(conf_stream_parse(rec, sizeof rec, &st), EBADMSG);
        ASSERT_ERR(conf_stream_parse("X\x02\0\0\0ab", 7, &st), EBADMSG);
}

/* The child reads, the parent parses: the same Policy as policy_load() in-process. */
TEST(bounded_equals_inprocess) {
        _cleanup_close_ int fd = open_root("dropins");
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;
        _cleanup_free_ char *stuck = NULL, *a = NULL, *b = NULL;

        ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, NULL, NULL, &stuck));
        ASSERT_TRUE(stuck == NULL);
        ASSERT_OK(policy_build(s, &p));
        ASSERT_OK(policy_load(fd, NULL, &q));
        ASSERT_OK(policy_format(p, &a));
        ASSERT_OK(policy_format(q, &b));
        ASSERT_STREQ(a, b);
        ASSERT_EQ(p->n_warnings, q->n_warnings);
        ASSERT_EQ(p->max_parallel, 3);

        /* --config= names one file, relative to the root for an absolute path. */
        s = policy_sources_free(s);
        ASSERT_OK(conf_read_bounded(fd, "/etc/custom.conf", CONF_READ_TIMEOUT, &s, NULL, NULL, &stuck));
        ASSERT_TRUE(s->explicit && s->n_files == 1);
        ASSERT_STREQ(s->files[0].path, "/etc/custom.conf");
}

/* A drop-in directory that is there but cannot be listed (here a symlink loop: ELOOP; an I/O error
 * part way on a real disk): its drop-ins are not known, so the configuration is not read in full
 * (SyncOnSuspend=keep), with a warning naming it; the control reads the same tree without it. Before
 * the seventh session such a directory counted as empty. */
TEST(unreadable_dropin_dir) {
        char dir[] = "/tmp/test-conf-read-dir.XXXXXX", cmd[256];
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_free_ char *stuck = NULL;
        _cleanup_close_ int fd = -EBADF;
        bool named = false;

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        snprintf(cmd, sizeof cmd,
                 "mkdir -p %s/etc && printf '[Kernel]\nSyncOnSuspend=auto\n' >%s/etc/suspend-sync.conf", dir,
                 dir);
        ASSERT_OK(system(cmd));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);

        /* control: read in full */
        ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, NULL, NULL, &stuck));
        ASSERT_OK(policy_build(s, &p));
        ASSERT_TRUE(!p->unread);
        p = policy_free(p);
        s = policy_sources_free(s);

        snprintf(cmd, sizeof cmd, "ln -s suspend-sync.conf.d %s/etc/suspend-sync.conf.d", dir);
        ASSERT_OK(system(cmd));
        ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, NULL, NULL, &stuck));
        ASSERT_OK(policy_build(s, &p));
        ASSERT_TRUE(p->unread);
        ASSERT_EQ(p->sync_on_suspend, SYNC_ON_SUSPEND_KEEP);
        for (size_t i = 0; i < p->n_warnings; i++) {
                fprintf(stderr, "   %s: %s\n", p->warning_origins[i].file, p->warnings[i]);
                named = named || streq_ptr(p->warning_origins[i].file, "/etc/suspend-sync.conf.d");
        }
        ASSERT_TRUE(named);

        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ASSERT_OK(system(cmd));
}

/* Review Q through the reader child: an /etc drop-in that cannot be looked at (a loop: ELOOP; H2), a
 * drop-in directory that cannot be listed (M1), a file where a drop-in directory would be and a
 * dangling link (L3 notices): each reaches the parent as what it is, and the Policy is the one built
 * in-process, warnings, notices and stand-ins alike. */
TEST(issues_through_the_stream) {
        char dir[] = "/tmp/test-conf-read-issues.XXXXXX", cmd[1024];
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;
        _cleanup_free_ char *stuck = NULL, *a = NULL, *b = NULL;
        bool unlisted = false, notdir = false, dangling = false, loop = false;

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        snprintf(cmd, sizeof cmd,
                 "cd %s && mkdir -p etc/suspend-sync.conf.d run usr/local/lib usr/lib/suspend-sync.conf.d && "
                 "printf '[Sync]\nMaxParallel=4\n' >etc/suspend-sync.conf && "
                 "printf '[Rule nfs]\nType=nfs4\nAction=skip\n' >usr/lib/suspend-sync.conf.d/05-v.conf && "
                 "printf '[Sync]\nDeadlineSec=7s\n' >usr/lib/suspend-sync.conf.d/20-d.conf && "
                 "ln -s 10-v.conf etc/suspend-sync.conf.d/10-v.conf && "
                 "ln -s missing.conf etc/suspend-sync.conf.d/20-d.conf && "
                 ": >run/suspend-sync.conf.d && "
                 "ln -s suspend-sync.conf.d usr/local/lib/suspend-sync.conf.d",
                 dir);
        ASSERT_OK(system(cmd));
        {
                _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                ASSERT_TRUE(fd >= 0);
                ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, NULL, NULL, &stuck));
                ASSERT_OK(policy_load(fd, NULL, &q));
        }
        for (size_t i = 0; i < s->n_files; i++) {
                const PolicyFile *f = &s->files[i];

                fprintf(stderr, "   %d %s %d\n", (int) f->kind, f->path, f->error);
                unlisted = unlisted ||
                           (f->kind == POLICY_FILE_UNLISTED_DIR &&
                            streq(f->path, "/usr/local/lib/suspend-sync.conf.d") && f->error == -ELOOP);
                notdir = notdir ||
                         (f->kind == POLICY_FILE_NOT_DIRECTORY && streq(f->path, "/run/suspend-sync.conf.d"));
                dangling = dangling || (f->kind == POLICY_FILE_DANGLING &&
                                        streq(f->path, "/etc/suspend-sync.conf.d/20-d.conf") &&
                                        streq_ptr(f->text, "/usr/lib/suspend-sync.conf.d/20-d.conf"));
                loop = loop || (f->kind == POLICY_FILE_CONF &&
                                streq(f->path, "/etc/suspend-sync.conf.d/10-v.conf") && f->error == -ELOOP);
        }
        ASSERT_TRUE(unlisted && notdir && dangling && loop);

        ASSERT_OK(policy_build(s, &p));
        for (size_t i = 0; i < p->n_warnings; i++)
                fprintf(stderr, "   %s%s\n", p->warning_notices[i] ? "notice: " : "", p->warnings[i]);
        ASSERT_TRUE(p->unread && p->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
        ASSERT_EQ(p->max_parallel, 4);                /* the main file still applies (M1) */
        ASSERT_U64_EQ(p->deadline, 7 * USEC_PER_SEC); /* the dangling link masks nothing (L3) */
        ASSERT_TRUE(policy_match(p, "/mnt/nfs", "nfs4", 0, 0, NULL) == NULL); /* no skip (H2) */
        /* three stand-ins (the directory, the loop, the dangling link: review S, M1) and the
         * vendor's rule */
        ASSERT_EQ(p->n_rules, 4);
        ASSERT_TRUE(p->rules[0].disabled && p->rules[1].disabled && p->rules[2].disabled);
        /* the notice arrives as a notice: the file for /run's directory; the dangling link warns */
        {
                size_t n_notices = 0;

                for (size_t i = 0; i < p->n_warnings; i++)
                        n_notices += p->warning_notices[i];
                ASSERT_EQ(n_notices, 1);
                ASSERT_EQ(p->n_warnings, 5);
        }
        /* the same as in-process */
        ASSERT_OK(policy_format(p, &a));
        ASSERT_OK(policy_format(q, &b));
        ASSERT_STREQ(a, b);
        ASSERT_EQ(p->n_warnings, q->n_warnings);
        for (size_t i = 0; i < p->n_warnings; i++) {
                ASSERT_STREQ(p->warnings[i], q->warnings[i]);
                ASSERT_EQ(p->warning_notices[i], q->warning_notices[i]);
        }

        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ASSERT_OK(system(cmd));
}

/* A main file whose open() never returns (a FUSE file nobody serves, as on a dead server; a FIFO
 * is refused at once, review S, M2): -ETIMEDOUT in about the bound, the path named. */
typedef struct HungOpen {
        const char *dir, *path;
} HungOpen;

static void hung_open_body(void *userdata) {
        const HungOpen *h = userdata;
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_free_ char *stuck = NULL;
        _cleanup_close_ int fd = -EBADF;
        usec_t t0, took;

        bounded_child_forget_parent(); /* the test's earlier children are not ours */
        fd = open(h->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        t0 = now(CLOCK_MONOTONIC);
        ASSERT_ERR(conf_read_bounded(fd, NULL, 200 * USEC_PER_MSEC, &s, NULL, NULL, &stuck), ETIMEDOUT);
        took = now(CLOCK_MONOTONIC) - t0;
        fprintf(stderr, "   hung read returned after %.3fs, stuck at %s\n", (double) took / USEC_PER_SEC,
                stuck ?: "(null)");
        ASSERT_TRUE(took >= 200 * USEC_PER_MSEC && took < 700 * USEC_PER_MSEC);
        ASSERT_STREQ(stuck, "/etc/suspend-sync.conf");
        ASSERT_TRUE(s == NULL);

        /* Explicit --config= on it: the same. */
        stuck = mfree(stuck);
        ASSERT_ERR(conf_read_bounded(AT_FDCWD, h->path, 100 * USEC_PER_MSEC, &s, NULL, NULL, &stuck),
                   ETIMEDOUT);
        ASSERT_STREQ(stuck, h->path);

        /* In two steps, the caller working past the bound: finish has nothing left to wait for. */
        {
                _cleanup_(conf_reader_freep) ConfReader *x = NULL;

                stuck = mfree(stuck);
                ASSERT_OK(conf_read_start(fd, NULL, 200 * USEC_PER_MSEC, false, &x));
                usleep(300 * 1000);
                t0 = now(CLOCK_MONOTONIC);
                ASSERT_ERR(conf_read_finish(x, &s, NULL, NULL, &stuck), ETIMEDOUT);
                ASSERT_TRUE(now(CLOCK_MONOTONIC) - t0 < 100 * USEC_PER_MSEC);
                ASSERT_STREQ(stuck, "/etc/suspend-sync.conf");
                ASSERT_TRUE(s == NULL);
        }
        /* Freed unfinished (the caller's error path): killed, never waited for. */
        {
                ConfReader *x = NULL;

                ASSERT_OK(conf_read_start(fd, NULL, 5 * USEC_PER_SEC, false, &x));
                t0 = now(CLOCK_MONOTONIC);
                x = conf_reader_free(x);
                ASSERT_TRUE(now(CLOCK_MONOTONIC) - t0 < 100 * USEC_PER_MSEC);
        }
}

TEST(hung_open) {
        char dir[] = "/tmp/test-conf-read.XXXXXX", path[128];
        HungOpen h = { .dir = dir, .path = path };

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/etc", dir);
        ASSERT_OK(mkdir(path, 0755));
        snprintf(path, sizeof path, "%s/etc/suspend-sync.conf", dir);
        safe_close(open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
        test_with_hung_file(path, 60, hung_open_body, &h);

        ASSERT_OK(unlink(path));
        snprintf(path, sizeof path, "%s/etc", dir);
        ASSERT_OK(rmdir(path));
        ASSERT_OK(rmdir(dir));
}

/* A main file that is a FIFO, or a device (review S, M2): refused at once, "Not a regular file",
 * never a read that waits for a writer until the reader's bound, which lost every setting. It counts
 * as not read in full. */
TEST(fifo_refused) {
        char dir[] = "/tmp/test-conf-read.XXXXXX", path[128];
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_free_ char *stuck = NULL;
        _cleanup_close_ int fd = -EBADF;

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/etc", dir);
        ASSERT_OK(mkdir(path, 0755));
        snprintf(path, sizeof path, "%s/etc/suspend-sync.conf", dir);
        ASSERT_OK(mkfifo(path, 0644)); /* no writer */
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(conf_read_bounded(fd, NULL, 5 * USEC_PER_SEC, &s, NULL, NULL, &stuck));
        ASSERT_OK(policy_build(s, &p));
        ASSERT_TRUE(p->unread && p->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
        ASSERT_TRUE(p->n_warnings >= 1 &&
                    strstr(p->warnings[0], "/etc/suspend-sync.conf: Not a regular file"));
        /* explicit --config= too */
        s = policy_sources_free(s);
        ASSERT_OK(conf_read_bounded(AT_FDCWD, path, 5 * USEC_PER_SEC, &s, NULL, NULL, &stuck));
        ASSERT_TRUE(s->n_files == 1 && s->files[0].error == -EBADFD);

        ASSERT_OK(unlink(path));
        snprintf(path, sizeof path, "%s/etc", dir);
        ASSERT_OK(rmdir(path));
        ASSERT_OK(rmdir(dir));
}

/* A configuration larger than a pipe's default 64 KiB, read in time while the caller works past the
 * bound: all of it counts (start made the pipe hold it; the child could write it all). */
TEST(large_read_finished_late) {
        char dir[] = "/tmp/test-conf-read.XXXXXX", path[128];
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_(conf_reader_freep) ConfReader *x = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_free_ char *stuck = NULL;
        _cleanup_close_ int fd = -EBADF;
        FILE *f;

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/etc", dir);
        ASSERT_OK(mkdir(path, 0755));
        snprintf(path, sizeof path, "%s/etc/suspend-sync.conf", dir);
        ASSERT_TRUE((f = fopen(path, "we")) != NULL);
        for (int i = 0; i < 3000; i++) /* ~200 KB of comments */
                fprintf(f, "# %04d a comment line long enough to fill the file quickly, as admins write\n",
                        i);
        fprintf(f, "[Sync]\nMaxParallel=7\n");
        ASSERT_OK(fclose(f));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);

        ASSERT_OK(conf_read_start(fd, NULL, USEC_PER_SEC, false, &x));
        usleep(1200 * 1000);
        ASSERT_OK(conf_read_finish(x, &s, NULL, NULL, &stuck));
        ASSERT_OK(policy_build(s, &p));
        ASSERT_TRUE(!p->unread);
        ASSERT_EQ(p->max_parallel, 7);

        ASSERT_OK(unlink(path));
        snprintf(path, sizeof path, "%s/etc", dir);
        ASSERT_OK(rmdir(path));
        ASSERT_OK(rmdir(dir));
}

static void put_file(const char *root, const char *rel, mode_t mode) {
        char path[512];
        int fd;

        snprintf(path, sizeof path, "%s/%s", root, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(fchmod(fd, mode));
        close(fd);
}

static void record(const char *path, void *userdata) {
        char ***seen = userdata;
        size_t n = strv_length(*seen);

        ASSERT_OK(strv_extend(seen, &n, path));
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* An entry that cannot be read (linked with --wrap=readlinkat): EIO for a path that ends in
 * fail_readlink_at. */
ssize_t __real_readlinkat(int dfd, const char *path, char *buf, size_t size);
ssize_t __wrap_readlinkat(int dfd, const char *path, char *buf, size_t size);
static const char *fail_readlink_at;

ssize_t __wrap_readlinkat(int dfd, const char *path, char *buf, size_t size) {
        size_t n = strlen(path), m = fail_readlink_at ? strlen(fail_readlink_at) : 0;

        if (fail_readlink_at && n >= m && streq(path + n - m, fail_readlink_at)) {
                errno = EIO;
                return -1;
        }
        return __real_readlinkat(dfd, path, buf, size);
}

/* The other system-sleep hooks, listed by the child after the configuration: executables only
 * (symlinks followed: a masked one, to /dev/null, and a dangling one are none), not hidden, not
 * ours, from every directory a systemd release may read. */
TEST(hooks) {
        char root[] = "/tmp/test-conf-read-hooks.XXXXXX", cmd[256];
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_strv_free_ char **hooks = NULL, **seen = NULL, **listed = NULL;
        _cleanup_free_ char *stuck = NULL;
        _cleanup_close_ int fd = -EBADF;
        int hooks_error = 1;

        ASSERT_TRUE(test_mkdtemp(root) != NULL);
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);

        /* None yet: no directory at all. */
        ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, &hooks, &hooks_error, &stuck));
        ASSERT_TRUE(hooks == NULL && hooks_error == 0 && s);

        snprintf(cmd, sizeof cmd, "mkdir -p %s/usr/lib/systemd/system-sleep %s/etc/systemd/system-sleep/dir",
                 root, root);
        ASSERT_OK(system(cmd));
        put_file(root, "usr/lib/systemd/system-sleep/suspend-sync", 0755); /* ours */
        put_file(root, "usr/lib/systemd/system-sleep/other", 0755);
        put_file(root, "usr/lib/systemd/system-sleep/.hidden", 0755);
        put_file(root, "usr/lib/systemd/system-sleep/plain", 0644);
        put_file(root, "etc/systemd/system-sleep/admin.sh", 0700);
        snprintf(cmd, sizeof cmd,
                 "ln -s /dev/null %s/usr/lib/systemd/system-sleep/masked && "
                 "ln -s nowhere %s/usr/lib/systemd/system-sleep/dangling",
                 root, root);
        ASSERT_OK(system(cmd));

        s = policy_sources_free(s);
        ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, &hooks, &hooks_error, &stuck));
        ASSERT_TRUE(s && hooks_error == 0);
        ASSERT_EQ(strv_length(hooks), 2);
        qsort(hooks, 2, sizeof(char *), cmp_str);
        ASSERT_STREQ(hooks[0], "/etc/systemd/system-sleep/admin.sh");
        ASSERT_STREQ(hooks[1], "/usr/lib/systemd/system-sleep/other");

        /* A symlink is followed elsewhere (maybe onto a filesystem that hangs): it is named in the
         * progress, so a reader stuck on it says where; a file of the directory is covered by the
         * directory's name. */
        ASSERT_EQ(sleep_hooks_list(fd, record, &seen, &listed), 2);
        ASSERT_TRUE(strv_contains(seen, "/usr/lib/systemd/system-sleep"));
        ASSERT_TRUE(strv_contains(seen, "/usr/lib/systemd/system-sleep/masked"));
        ASSERT_TRUE(strv_contains(seen, "/usr/lib/systemd/system-sleep/dangling"));
        ASSERT_TRUE(!strv_contains(seen, "/usr/lib/systemd/system-sleep/other"));

        /* An entry there that cannot be looked at (a loop here; EIO, ESTALE alike) may run by the time
         * systemd-sleep looks: a hook, not nothing (fail closed). */
        snprintf(cmd, sizeof cmd, "ln -s loop %s/usr/lib/systemd/system-sleep/loop", root);
        ASSERT_OK(system(cmd));
        listed = strv_free(listed);
        ASSERT_EQ(sleep_hooks_list(fd, NULL, NULL, &listed), 3);
        ASSERT_TRUE(strv_contains(listed, "/usr/lib/systemd/system-sleep/loop"));
        snprintf(cmd, sizeof cmd, "rm %s/usr/lib/systemd/system-sleep/loop", root);
        ASSERT_OK(system(cmd));

        /* A directory listed only in part (EIO) may hold a hook past the error: not "these only". */
        wrap_readdir_fail_at = "admin.sh";
        listed = strv_free(listed);
        ASSERT_EQ(sleep_hooks_list(fd, NULL, NULL, &listed), -EIO);
        wrap_readdir_fail_at = NULL;
        ASSERT_TRUE(listed == NULL);

        /* /lib is /usr/lib (merged /usr): each hook once. */
        snprintf(cmd, sizeof cmd, "ln -s usr/lib %s/lib", root);
        ASSERT_OK(system(cmd));
        listed = strv_free(listed);
        ASSERT_EQ(sleep_hooks_list(fd, NULL, NULL, &listed), 2);
        /* A split /usr: /lib's own directory, the last one looked at, is read too. */
        snprintf(cmd, sizeof cmd, "rm %1$s/lib && mkdir -p %1$s/lib/systemd/system-sleep", root);
        ASSERT_OK(system(cmd));
        put_file(root, "lib/systemd/system-sleep/split", 0755);
        listed = strv_free(listed);
        ASSERT_EQ(sleep_hooks_list(fd, NULL, NULL, &listed), 3);
        ASSERT_TRUE(strv_contains(listed, "/lib/systemd/system-sleep/split"));

        /* A regular file where a hook directory (or one of its parents) would be holds no hook, as a
         * missing directory: systemd-sleep skips such a path (ENOTDIR), so the hooks are the others. */
        snprintf(cmd, sizeof cmd,
                 "mkdir -p %1$s/run/systemd %1$s/usr/local/lib && : > %1$s/run/systemd/system-sleep && "
                 ": > %1$s/usr/local/lib/systemd",
                 root);
        ASSERT_OK(system(cmd));
        listed = strv_free(listed);
        ASSERT_EQ(sleep_hooks_list(fd, NULL, NULL, &listed), 3);
        snprintf(cmd, sizeof cmd, "rm -r %1$s/run %1$s/usr/local", root);
        ASSERT_OK(system(cmd));

        /* A directory that cannot be read (a loop here) may hold a hook: an error, and through the
         * child a record that names it, so that the hooks are not "none". */
        snprintf(
                cmd, sizeof cmd,
                "rm -r %1$s/lib %1$s/etc/systemd/system-sleep && ln -s system-sleep %1$s/etc/systemd/system-sleep",
                root);
        ASSERT_OK(system(cmd));
        listed = strv_free(listed);
        ASSERT_EQ(sleep_hooks_list(fd, NULL, NULL, &listed), -ELOOP);
        ASSERT_TRUE(listed == NULL);
        s = policy_sources_free(s);
        hooks = strv_free(hooks);
        ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, &hooks, &hooks_error, &stuck));
        ASSERT_TRUE(s && hooks_error == 0);
        ASSERT_EQ(strv_length(hooks), 1);
        ASSERT_STREQ(hooks[0], "a system-sleep directory that cannot be read");

        /* Not asked: not listed, and said so. */
        s = policy_sources_free(s);
        hooks = strv_free(hooks);
        ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, NULL, &hooks_error, &stuck));
        ASSERT_TRUE(hooks_error == -ENODATA);

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_OK(system(cmd));
}

/* Ours, as installed: systemd-sleep's directory links suspend-sync to /run/suspend-sync/sleep-hook.
 * A mask (a link to /dev/null, an empty file), a copy or a link elsewhere, in any directory some
 * release reads, or none at all: no late pass can be counted on (review K, K3). Through the child
 * too. */
static int ours_in(const char *root, const char *setup, char **ret_other) {
        _cleanup_close_ int fd = -EBADF;
        char cmd[1024];

        snprintf(cmd, sizeof cmd,
                 "rm -rf %1$s/etc %1$s/usr %1$s/lib && mkdir -p %1$s/usr/lib/systemd/system-sleep "
                 "%1$s/etc/systemd/system-sleep && cd %1$s && %2$s",
                 root, setup);
        if (system(cmd) != 0)
                return -ENOEXEC;
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : sleep_hook_ours(fd, "/usr/lib/systemd/system-sleep", NULL, NULL, ret_other);
}

TEST(hook_ours) {
        static const char *const L = "usr/lib/systemd/system-sleep/suspend-sync";
        static const char *const E = "etc/systemd/system-sleep/suspend-sync";
        char root[] = "/tmp/test-conf-read.XXXXXX", setup[512], cmd[128];
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_(conf_reader_freep) ConfReader *x = NULL;
        _cleanup_free_ char *other = NULL, *stuck = NULL;
        _cleanup_close_ int fd = -EBADF;

        /* what the install links to is where the unit's pass makes the link (review M, M4) */
        ASSERT_STREQ(SLEEP_HOOK_LINK, STATE_DIR_DEFAULT "/" HOOK_LINK_FILE);
        ASSERT_TRUE(test_mkdtemp(root));
#define OURS(want, want_other, ...)                            \
        do {                                                   \
                snprintf(setup, sizeof setup, __VA_ARGS__);    \
                other = mfree(other);                          \
                ASSERT_EQ(ours_in(root, setup, &other), want); \
                if (want_other)                                \
                        ASSERT_STREQ(other, want_other);       \
                else                                           \
                        ASSERT_TRUE(other == NULL);            \
        } while (0)
        OURS(1, NULL, "ln -s /run/suspend-sync/sleep-hook %s", L);
        OURS(0, NULL, "true");                                                          /* none */
        OURS(0, "/usr/lib/systemd/system-sleep/suspend-sync", "ln -s /dev/null %s", L); /* masked */
        OURS(0, "/usr/lib/systemd/system-sleep/suspend-sync", ": > %s", L);             /* masked */
        OURS(0, "/usr/lib/systemd/system-sleep/suspend-sync", "ln -s /usr/libexec/x %s", L);
        OURS(0, "/usr/lib/systemd/system-sleep/suspend-sync", "ln -s /run/suspend-sync/sleep-hook2 %s", L);
        OURS(0, "/usr/lib/systemd/system-sleep/suspend-sync", "ln -s /run/suspend-sync/sleep-hoo %s", L);
        /* masked in /etc (a release or a patch that reads it) over ours */
        OURS(0, "/etc/systemd/system-sleep/suspend-sync",
             "ln -s /run/suspend-sync/sleep-hook %s && ln -s /dev/null %s", L, E);
        OURS(1, NULL, "ln -s /run/suspend-sync/sleep-hook %s && ln -s /run/suspend-sync/sleep-hook %s", L, E);
        /* /lib as /usr/lib (merged /usr): looked at once, still ours */
        OURS(1, NULL, "ln -s usr/lib lib && ln -s /run/suspend-sync/sleep-hook %s", L);
        /* ours only where systemd-sleep 252-257 never looks (review M, M1): none that it runs */
        OURS(0, NULL, "ln -s /run/suspend-sync/sleep-hook %s", E);
        OURS(0, NULL,
             "mkdir -p usr/local/lib/systemd/system-sleep && "
             "ln -s /run/suspend-sync/sleep-hook usr/local/lib/systemd/system-sleep/suspend-sync");
        OURS(0, NULL,
             "mkdir -p run/systemd/system-sleep && ln -s /run/suspend-sync/sleep-hook run/systemd/system-sleep/suspend-sync");
        /* split /usr, systemd's directory /lib (here /usr/lib): ours in /lib is not counted */
        OURS(0, NULL,
             "mkdir -p lib/systemd/system-sleep && ln -s /run/suspend-sync/sleep-hook lib/systemd/system-sleep/suspend-sync");
        /* a regular file where a directory some release reads would be holds no entry, as a missing
         * directory (ENOTDIR is a definite answer, and systemd-sleep skips such a path): ours still
         * counts, never "not known"; one where systemd-sleep's own directory would be: not ours */
        OURS(1, NULL,
             "ln -s /run/suspend-sync/sleep-hook %s && rmdir etc/systemd/system-sleep && "
             ": > etc/systemd/system-sleep",
             L);
        OURS(1, NULL, "ln -s /run/suspend-sync/sleep-hook %s && rm -r etc/systemd && : > etc/systemd", L);
        OURS(0, NULL, "rm -r usr/lib/systemd/system-sleep && : > usr/lib/systemd/system-sleep");
        /* a directory that cannot be read: not known */
        OURS(-ELOOP, NULL,
             "ln -s /run/suspend-sync/sleep-hook %s && rm -r etc/systemd/system-sleep && "
             "ln -s system-sleep etc/systemd/system-sleep",
             L);
        /* an entry that cannot be read where a release or a patch may look (EIO): not known */
        fail_readlink_at = E;
        OURS(-EIO, NULL, "ln -s /run/suspend-sync/sleep-hook %s && ln -s /run/suspend-sync/sleep-hook %s", L,
             E);
        fail_readlink_at = NULL;
#undef OURS

        /* the child tells it, in the build's directory, to a reader that waits for it (the unit's
         * pass); the hooks not asked */
        snprintf(setup, sizeof setup, "mkdir -p .%1$s && ln -s /dev/null .%1$s/suspend-sync",
                 SYSTEM_SLEEP_DIR);
        ASSERT_TRUE(ours_in(root, setup, NULL) >= 0);
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(conf_read_start(fd, NULL, CONF_READ_TIMEOUT, false, &x));
        conf_reader_want_hook_ours(x);
        ASSERT_OK(conf_read_finish(x, &s, NULL, NULL, &stuck));
        other = mfree(other);
        ASSERT_EQ(conf_read_hook_ours(x, &other), 0);
        ASSERT_STREQ(other, SYSTEM_SLEEP_DIR "/suspend-sync");
        x = conf_reader_free(x);
        s = policy_sources_free(s);
        snprintf(setup, sizeof setup,
                 "mkdir -p .%1$s && ln -s /run/suspend-sync/sleep-hook .%1$s/suspend-sync", SYSTEM_SLEEP_DIR);
        ASSERT_TRUE(ours_in(root, setup, NULL) >= 0);
        ASSERT_OK(conf_read_start(fd, NULL, CONF_READ_TIMEOUT, true, &x));
        {
                _cleanup_strv_free_ char **hooks = NULL;
                int hooks_error;

                ASSERT_OK(conf_read_finish(x, &s, &hooks, &hooks_error, &stuck));
                ASSERT_EQ(hooks_error, 0);
        }
        other = mfree(other);
        ASSERT_EQ(conf_read_hook_ours(x, &other), 1);
        ASSERT_TRUE(other == NULL);

        /* a directory some release reads that cannot be read: not known through the child either
         * (its 'e' record), never "ours", whatever is in systemd-sleep's own directory */
        x = conf_reader_free(x);
        s = policy_sources_free(s);
        snprintf(setup, sizeof setup,
                 "mkdir -p .%1$s && ln -s /run/suspend-sync/sleep-hook .%1$s/suspend-sync && "
                 "rm -r etc/systemd/system-sleep && ln -s system-sleep etc/systemd/system-sleep",
                 SYSTEM_SLEEP_DIR);
        ASSERT_TRUE(ours_in(root, setup, NULL) < 0);
        ASSERT_OK(conf_read_start(fd, NULL, CONF_READ_TIMEOUT, false, &x));
        conf_reader_want_hook_ours(x);
        ASSERT_OK(conf_read_finish(x, &s, NULL, NULL, &stuck));
        other = mfree(other);
        ASSERT_TRUE(conf_read_hook_ours(x, &other) < 0);
        ASSERT_TRUE(other == NULL);

        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_OK(system(cmd));
}

int main(void) {
        RUN(roundtrip);
        RUN(child_error_record);
        RUN(bounded_equals_inprocess);
        RUN(hung_open);
        RUN(fifo_refused);
        RUN(large_read_finished_late);
        RUN(unreadable_dropin_dir);
        RUN(issues_through_the_stream);
        RUN(hooks);
        RUN(hook_ours);
        return 0;
}
