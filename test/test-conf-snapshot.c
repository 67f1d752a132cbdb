/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/conf-snapshot.c: the configuration the unit's pass hands to the late pass. The
 * stream of a real bounded read (a configuration and two other hooks below a temporary root) goes
 * through the file and back whole; another token, root or configuration is refused as stale;
 * anything cut or damaged is refused as malformed, never misread; save, load and remove on a
 * directory.
 */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf-read.h"
#include "conf-snapshot.h"
#include "policy.h"
#include "shared/fileio.h"
#include "shared/macro.h"
#include "shared/strv.h"
#include "tests.h"

#define TOKEN "0123456789abcdef0123456789abcdef"
#define OTHER "fedcba9876543210fedcba9876543210"

static char root[] = "/tmp/test-conf-snapshot.XXXXXX";
static char *stream;
static size_t stream_size;

static void put(const char *path, const char *text, mode_t mode) {
        char p[4096];
        int fd;

        snprintf(p, sizeof p, "%s/%s", root, path);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(loop_write(fd, text, strlen(text)));
        close(fd);
}

/* A configuration and two other hooks, read by the bounded reader: its stream, whole. */
static void make_stream(void) {
        _cleanup_(policy_sources_freep) PolicySources *s = NULL;
        _cleanup_strv_free_ char **hooks = NULL;
        _cleanup_free_ char *stuck = NULL;
        _cleanup_close_ int fd = -EBADF;
        char cmd[512];
        int hooks_error = 1;

        ASSERT_TRUE(mkdtemp(root) != NULL);
        snprintf(cmd, sizeof cmd, "mkdir -p %s/etc/suspend-sync.conf.d %s/usr/lib/systemd/system-sleep", root,
                 root);
        ASSERT_OK(system(cmd));
        put("etc/suspend-sync.conf", "[Sync]\nDeadlineSec=7s\n", 0644);
        put("etc/suspend-sync.conf.d/a.conf", "[Kernel]\nSyncOnSuspend=off\n", 0644);
        put("usr/lib/systemd/system-sleep/other", "#!/bin/sh\n", 0755);
        put("usr/lib/systemd/system-sleep/second", "#!/bin/sh\n", 0755);
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(conf_read_bounded(fd, NULL, CONF_READ_TIMEOUT, &s, &hooks, &hooks_error, &stuck, &stream,
                                    &stream_size));
        ASSERT_TRUE(stream && stream_size > 0 && hooks_error == 0);
        ASSERT_EQ(strv_length(hooks), 2);
}

static int parse(const char *buf, size_t size, const char *token, const char *r, const char *config,
                 ConfStream *st) {
        return conf_snapshot_parse(buf, size, token, r, config, st);
}

TEST(roundtrip) {
        _cleanup_(conf_stream_done) ConfStream st = {};
        _cleanup_free_ char *buf = NULL;
        size_t size;

        ASSERT_OK(conf_snapshot_format(TOKEN, "/", NULL, stream, stream_size, &buf, &size));
        ASSERT_TRUE(size > stream_size);
        ASSERT_OK(parse(buf, size, TOKEN, "/", NULL, &st));
        ASSERT_TRUE(st.sources && st.hooks_done);
        ASSERT_EQ(st.sources->n_files, 2);
        ASSERT_TRUE(strstr(st.sources->files[0].path, "suspend-sync.conf") != NULL);
        ASSERT_TRUE(strstr(st.sources->files[0].text, "DeadlineSec=7s") != NULL);
        ASSERT_EQ(st.n_hooks, 2);

        /* The file read back is what conf_read_bounded() gave. */
        buf = mfree(buf);
        ASSERT_OK(conf_snapshot_format(TOKEN, "/srv/root", "/etc/custom.conf", stream, stream_size, &buf,
                                       &size));
        ASSERT_OK(parse(buf, size, TOKEN, "/srv/root", "/etc/custom.conf", &st));
        ASSERT_EQ(st.sources->n_files, 2);
}

TEST(stale) {
        _cleanup_(conf_stream_done) ConfStream st = {};
        _cleanup_free_ char *buf = NULL;
        size_t size;

        ASSERT_OK(conf_snapshot_format(TOKEN, "/", "/etc/custom.conf", stream, stream_size, &buf, &size));
        ASSERT_ERR(parse(buf, size, OTHER, "/", "/etc/custom.conf", &st), ESTALE);
        ASSERT_ERR(parse(buf, size, TOKEN, "/other", "/etc/custom.conf", &st), ESTALE);
        ASSERT_ERR(parse(buf, size, TOKEN, "/", NULL, &st), ESTALE);
        ASSERT_ERR(parse(buf, size, TOKEN, "/", "/etc/custom.con", &st), ESTALE);
        ASSERT_ERR(parse(buf, size, TOKEN, "/", "/etc/custom.conf2", &st), ESTALE);
        ASSERT_ERR(parse(buf, size, "", "/", "/etc/custom.conf", &st), ESTALE);
        ASSERT_TRUE(!st.sources);
        /* A token that is not one is never written. */
        ASSERT_ERR(conf_snapshot_format("0123", "/", NULL, stream, stream_size, &buf, &size), EINVAL);
        ASSERT_ERR(conf_snapshot_format(NULL, "/", NULL, stream, stream_size, &buf, &size), EINVAL);
}

TEST(malformed) {
        _cleanup_(conf_stream_done) ConfStream st = {};
        _cleanup_free_ char *buf = NULL;
        size_t size, head;

        ASSERT_OK(conf_snapshot_format(TOKEN, "/", NULL, stream, stream_size, &buf, &size));
        head = size - stream_size;
        /* Every cut is refused: the header (malformed or, cut inside its fields, stale), the stream
         * without its end of the hooks. */
        for (size_t cut = 0; cut < size; cut++) {
                int r = parse(buf, cut, TOKEN, "/", NULL, &st);

                ASSERT_TRUE(r == -EBADMSG || (cut < head && r == -ESTALE));
                ASSERT_TRUE(!st.sources);
        }
        /* Another magic, another version. */
        buf[strlen("suspend-sync config-snapshot v")] = '2';
        ASSERT_ERR(parse(buf, size, TOKEN, "/", NULL, &st), EBADMSG);
        buf[strlen("suspend-sync config-snapshot v")] = '1';
        buf[0] = 'S';
        ASSERT_ERR(parse(buf, size, TOKEN, "/", NULL, &st), EBADMSG);
        buf[0] = 's';
        /* A damaged record kind in the stream. */
        buf[head] = 'X';
        ASSERT_ERR(parse(buf, size, TOKEN, "/", NULL, &st), EBADMSG);
        ASSERT_TRUE(!st.sources);
}

TEST(files) {
        _cleanup_(conf_stream_done) ConfStream st = {};
        _cleanup_close_ int fd = -EBADF;
        char dir[] = "/tmp/test-conf-snapshot-dir.XXXXXX", path[256];
        struct stat sb;

        ASSERT_TRUE(mkdtemp(dir) != NULL);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_ERR(conf_snapshot_load(fd, TOKEN, "/", NULL, &st), ENOENT);
        ASSERT_OK(conf_snapshot_remove(fd));
        ASSERT_OK(conf_snapshot_save(fd, TOKEN, "/", NULL, stream, stream_size));
        ASSERT_OK(conf_snapshot_load(fd, TOKEN, "/", NULL, &st));
        ASSERT_EQ(st.n_hooks, 2);
        ASSERT_ERR(conf_snapshot_load(fd, OTHER, "/", NULL, &st), ESTALE);
        /* A token that cannot be written: the older file goes, none is left. */
        ASSERT_ERR(conf_snapshot_save(fd, "bad", "/", NULL, stream, stream_size), EINVAL);
        ASSERT_TRUE(fstatat(fd, CONF_SNAPSHOT_FILE, &sb, 0) < 0 && errno == ENOENT);
        ASSERT_OK(conf_snapshot_save(fd, TOKEN, "/", NULL, stream, stream_size));
        ASSERT_OK(conf_snapshot_remove(fd));
        ASSERT_TRUE(fstatat(fd, CONF_SNAPSHOT_FILE, &sb, 0) < 0 && errno == ENOENT);
        ASSERT_OK(rmdir(dir));
        snprintf(path, sizeof path, "rm -rf %s", root);
        ASSERT_OK(system(path));
}

int main(void) {
        make_stream();
        RUN(roundtrip);
        RUN(stale);
        RUN(malformed);
        RUN(files);
        free(stream);
        return 0;
}
