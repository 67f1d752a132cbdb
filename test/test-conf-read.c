/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/conf-read.c: the records the reader child sends (round trip, malformed input), a
 * bounded read giving exactly what policy_load() gives in-process, and a read that hangs (a FIFO
 * with no writer as the main file: open() blocks like on a dead NFS server) returning -ETIMEDOUT
 * within its bound and naming the path it was stuck at.
 */

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf-read.h"
#include "policy.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "tests.h"

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
        _cleanup_free_ char *data = NULL, *progress = NULL;
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

        /* Every cut of the payload is refused, never misread. */
        for (size_t cut = 0; cut < size; cut++) {
                PolicySources *u = NULL;
                ASSERT_ERR(conf_sources_parse(data, cut, &u), EBADMSG);
        }

        /* The stream: progress records, then the sources; an incomplete tail is "more to come". */
        stream = malloc(64 + size);
        ASSERT_TRUE(stream);
        memcpy(stream, "P\x04\0\0\0/etcP\x08\0\0\0/usr/lib", 22);
        stream[22] = 'S';
        memcpy(stream + 23, &(uint32_t) { (uint32_t) size }, 4);
        memcpy(stream + 27, data, size);
        t = policy_sources_free(t);
        ASSERT_OK(conf_stream_parse(stream, 27 + size - 1, &progress, &t));
        ASSERT_STREQ(progress, "/usr/lib");
        ASSERT_TRUE(t == NULL);
        progress = mfree(progress);
        ASSERT_OK(conf_stream_parse(stream, 27 + size, &progress, &t));
        ASSERT_TRUE(t && t->n_files == 3);
        progress = mfree(progress);
        t = policy_sources_free(t);
        stream[0] = 'X';
        ASSERT_ERR(conf_stream_parse(stream, 27 + size, &progress, &t), EBADMSG);
        free(stream);
}

/* The child reads, the parent parses: the same Policy as policy_load() in-process. */
TEST(bounded_equals_inprocess) {
        _cleanup_close_ int fd = open_root("dropins");
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_(policy_freep) Policy *p = NULL, *q = NULL;
        _cleanup_free_ char *stuck = NULL, *a = NULL, *b = NULL;

        ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, &stuck));
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
        ASSERT_OK(conf_read_bounded(fd, "/etc/custom.conf", CONF_READ_TIMEOUT, &s, &stuck));
        ASSERT_TRUE(s->explicit && s->n_files == 1);
        ASSERT_STREQ(s->files[0].path, "/etc/custom.conf");
}

/* A main file whose open() never returns: -ETIMEDOUT in about the bound, the path named. */
TEST(hung_open) {
        char dir[] = "/tmp/test-conf-read.XXXXXX", path[128];
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_free_ char *stuck = NULL;
        _cleanup_close_ int fd = -EBADF;
        usec_t t0, took;

        ASSERT_TRUE(mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/etc", dir);
        ASSERT_OK(mkdir(path, 0755));
        snprintf(path, sizeof path, "%s/etc/suspend-sync.conf", dir);
        ASSERT_OK(mkfifo(path, 0644)); /* no writer: open(O_RDONLY) blocks */
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);

        t0 = now(CLOCK_MONOTONIC);
        ASSERT_ERR(conf_read_bounded(fd, NULL, 200 * USEC_PER_MSEC, &s, &stuck), ETIMEDOUT);
        took = now(CLOCK_MONOTONIC) - t0;
        fprintf(stderr, "   hung read returned after %.3fs, stuck at %s\n", (double) took / USEC_PER_SEC,
                stuck ?: "(null)");
        ASSERT_TRUE(took >= 200 * USEC_PER_MSEC && took < 700 * USEC_PER_MSEC);
        ASSERT_STREQ(stuck, "/etc/suspend-sync.conf");
        ASSERT_TRUE(s == NULL);

        /* Explicit --config= on the FIFO: the same. */
        stuck = mfree(stuck);
        ASSERT_ERR(conf_read_bounded(AT_FDCWD, path, 100 * USEC_PER_MSEC, &s, &stuck), ETIMEDOUT);
        ASSERT_STREQ(stuck, path);

        ASSERT_OK(unlink(path));
        snprintf(path, sizeof path, "%s/etc", dir);
        ASSERT_OK(rmdir(path));
        ASSERT_OK(rmdir(dir));
}

int main(void) {
        RUN(roundtrip);
        RUN(bounded_equals_inprocess);
        RUN(hung_open);
        return 0;
}
