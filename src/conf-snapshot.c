/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf-snapshot.h"
#include "shared/fileio.h"
#include "shared/hexdecoct.h"
#include "shared/macro.h"

#define SNAPSHOT_MAGIC "suspend-sync config-snapshot v1 "
/* The header line at most: magic, token, two hex paths and separators. */
#define SNAPSHOT_HEADER_MAX (sizeof SNAPSHOT_MAGIC + 33 + 2 * (2 * PATH_MAX + 1) + 2)

static bool token_valid(const char *s) {
        return s && strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

/* "TOKEN ROOT CONFIG" as the header carries them; NULL when out of memory. */
static char *header_fields(const char *token, const char *root, const char *config_path) {
        _cleanup_free_ char *r = hexmem(root, strlen(root));
        _cleanup_free_ char *c = config_path ? hexmem(config_path, strlen(config_path)) : strdup("-");
        char *s;

        if (!r || !c || asprintf(&s, "%s %s %s", token, r, c) < 0)
                return NULL;
        return s;
}

int conf_snapshot_format(const char *token, const char *root, const char *config_path, const char *stream,
                         size_t size, char **ret, size_t *ret_size) {
        _cleanup_free_ char *fields = NULL;
        size_t head;
        char *buf;

        if (!token_valid(token) || !root)
                return -EINVAL;
        fields = header_fields(token, root, config_path);
        if (!fields)
                return -ENOMEM;
        head = strlen(SNAPSHOT_MAGIC) + strlen(fields) + 1;
        buf = malloc(head + size + 1);
        if (!buf)
                return -ENOMEM;
        (void) snprintf(buf, head + 1, SNAPSHOT_MAGIC "%s\n", fields);
        if (size > 0)
                memcpy(buf + head, stream, size);
        buf[head + size] = 0;
        *ret = buf;
        *ret_size = head + size;
        return 0;
}

int conf_snapshot_parse(const char *buf, size_t size, const char *token, const char *root,
                        const char *config_path, ConfStream *ret) {
        _cleanup_(conf_stream_done) ConfStream st = {};
        _cleanup_free_ char *fields = NULL;
        const char *nl;
        size_t n;
        int r;

        nl = memchr(buf, '\n', MIN(size, SNAPSHOT_HEADER_MAX));
        n = strlen(SNAPSHOT_MAGIC);
        if (!nl || (size_t) (nl - buf) < n || memcmp(buf, SNAPSHOT_MAGIC, n) != 0)
                return -EBADMSG;
        if (!token_valid(token) || !root)
                return -ESTALE;
        fields = header_fields(token, root, config_path);
        if (!fields)
                return -ENOMEM;
        if ((size_t) (nl - buf) - n != strlen(fields) || memcmp(buf + n, fields, strlen(fields)) != 0)
                return -ESTALE;

        r = conf_stream_parse(nl + 1, size - (size_t) (nl + 1 - buf), &st);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;
        if (!st.sources || !st.hooks_done)
                return -EBADMSG;
        conf_stream_done(ret);
        *ret = st;
        st = (ConfStream) {};
        return 0;
}

int conf_snapshot_save(int dir_fd, const char *token, const char *root, const char *config_path,
                       const char *stream, size_t size) {
        _cleanup_free_ char *buf = NULL;
        size_t n;
        int r;

        r = conf_snapshot_format(token, root, config_path, stream, size, &buf, &n);
        if (r >= 0)
                r = write_file_atomic_at(dir_fd, CONF_SNAPSHOT_FILE, buf, n);
        if (r < 0)
                (void) conf_snapshot_remove(dir_fd);
        return r;
}

int conf_snapshot_load(int dir_fd, const char *token, const char *root, const char *config_path,
                       ConfStream *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        int r;

        r = read_full_file_at(dir_fd, CONF_SNAPSHOT_FILE, SNAPSHOT_HEADER_MAX + CONF_STREAM_MAX, &buf, &size);
        if (r < 0)
                return r;
        return conf_snapshot_parse(buf, size, token, root, config_path, ret);
}

int conf_snapshot_remove(int dir_fd) {
        if (unlinkat(dir_fd, CONF_SNAPSHOT_FILE, 0) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}
