/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "baseline.h"
#include "shared/fileio.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(json_tokener *, json_tokener_free);

static void entry_done(BaselineEntry *e) {
        free(e->fstype);
        free(e->bdi_name);
}

Baseline *baseline_free(Baseline *b) {
        if (!b)
                return NULL;
        for (size_t i = 0; i < b->n_entries; i++)
                entry_done(&b->entries[i]);
        free(b->entries);
        free(b);
        return NULL;
}

int baseline_new(const char *boot_id, Baseline **ret) {
        Baseline *b;

        if (!boot_id || strlen(boot_id) >= BOOT_ID_MAX)
                return -EINVAL;
        b = calloc(1, sizeof(Baseline));
        if (!b)
                return -ENOMEM;
        strcpy(b->boot_id, boot_id);
        *ret = b;
        return 0;
}

const BaselineEntry *baseline_find(const Baseline *b, dev_t dev) {
        if (!b)
                return NULL;
        for (size_t i = 0; i < b->n_entries; i++)
                if (b->entries[i].dev == dev)
                        return &b->entries[i];
        return NULL;
}

void baseline_forget(Baseline *b, dev_t dev) {
        for (size_t i = 0; b && i < b->n_entries; i++)
                if (b->entries[i].dev == dev) {
                        entry_done(&b->entries[i]);
                        b->entries[i] = b->entries[--b->n_entries];
                        return;
                }
}

int baseline_put(Baseline *b, dev_t dev, const char *fstype, const char *bdi_name, uint64_t dirtied,
                 uint64_t written, uint64_t fs_written_kb) {
        BaselineEntry e = {
                .dev = dev,
                .bdi_dirtied = dirtied,
                .bdi_written = written,
                .fs_written_kb = fs_written_kb,
        };

        e.fstype = strdup(fstype ? fstype : "");
        e.bdi_name = strdup(bdi_name ? bdi_name : "");
        if (!e.fstype || !e.bdi_name) {
                entry_done(&e);
                return -ENOMEM;
        }

        baseline_forget(b, dev);
        if (b->n_entries >= BASELINE_MAX_ENTRIES) {
                entry_done(&e);
                return -E2BIG;
        }
        if (b->n_entries % 16 == 0) {
                BaselineEntry *n = reallocarray(b->entries, b->n_entries + 16, sizeof(BaselineEntry));
                if (!n) {
                        entry_done(&e);
                        return -ENOMEM;
                }
                b->entries = n;
        }
        b->entries[b->n_entries++] = e;
        return 0;
}

int baseline_to_json_string(const Baseline *b, char **ret) {
        _cleanup_(json_object_putp) json_object *root = NULL;
        json_object *arr;
        const char *s;
        char *copy;

        root = json_object_new_object();
        arr = json_object_new_array();
        if (!root || !arr) {
                json_object_put(arr);
                return -ENOMEM;
        }
        json_object_object_add(root, "boot_id", json_object_new_string(b->boot_id));
        json_object_object_add(root, "entries", arr);
        for (size_t i = 0; i < b->n_entries; i++) {
                const BaselineEntry *e = &b->entries[i];
                json_object *o = json_object_new_object();
                char dev[32];

                if (!o)
                        return -ENOMEM;
                snprintf(dev, sizeof dev, "%u:%u", major(e->dev), minor(e->dev));
                json_object_object_add(o, "dev", json_object_new_string(dev));
                json_object_object_add(o, "fstype", json_object_new_string(e->fstype));
                json_object_object_add(o, "bdi", json_object_new_string(e->bdi_name));
                json_object_object_add(o, "bdi_dirtied", json_object_new_uint64(e->bdi_dirtied));
                json_object_object_add(o, "bdi_written", json_object_new_uint64(e->bdi_written));
                json_object_object_add(o, "fs_written_kb", json_object_new_uint64(e->fs_written_kb));
                json_object_array_add(arr, o);
        }
        s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        copy = s ? strdup(s) : NULL;
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}

static int get_u64(json_object *o, const char *key, uint64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return -EBADMSG;
        errno = 0;
        *ret = json_object_get_uint64(v);
        return errno != 0 ? -EBADMSG : 0;
}

static const char *get_str(json_object *o, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

int baseline_from_json_string(const char *text, Baseline **ret) {
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;
        _cleanup_(json_object_putp) json_object *root = NULL;
        _cleanup_(baseline_freep) Baseline *b = NULL;
        json_object *arr;
        const char *boot_id;
        size_t n;
        int r;

        tok = json_tokener_new_ex(8);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        root = json_tokener_parse_ex(tok, text, (int) strnlen(text, 1U << 24) + 1);
        if (!root || json_tokener_get_error(tok) != json_tokener_success ||
            !json_object_is_type(root, json_type_object))
                return -EBADMSG;

        boot_id = get_str(root, "boot_id");
        if (!boot_id || strlen(boot_id) >= BOOT_ID_MAX)
                return -EBADMSG;
        r = baseline_new(boot_id, &b);
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(root, "entries", &arr) || !json_object_is_type(arr, json_type_array))
                return -EBADMSG;
        n = json_object_array_length(arr);
        if (n > BASELINE_MAX_ENTRIES)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(arr, i);
                uint64_t dirtied, written, fsw;
                const char *dev, *fstype, *bdi;
                unsigned ma, mi;
                int c = 0;

                if (!json_object_is_type(o, json_type_object))
                        return -EBADMSG;
                dev = get_str(o, "dev");
                fstype = get_str(o, "fstype");
                bdi = get_str(o, "bdi");
                if (!dev || !fstype || !bdi || sscanf(dev, "%u:%u%n", &ma, &mi, &c) != 2 || dev[c] != 0)
                        return -EBADMSG;
                if (get_u64(o, "bdi_dirtied", &dirtied) < 0 || get_u64(o, "bdi_written", &written) < 0 ||
                    get_u64(o, "fs_written_kb", &fsw) < 0)
                        return -EBADMSG;
                r = baseline_put(b, makedev(ma, mi), fstype, bdi, dirtied, written, fsw);
                if (r < 0)
                        return r == -E2BIG ? -EBADMSG : r;
        }
        *ret = TAKE_PTR(b);
        return 0;
}

int baseline_load(const char *dir, const char *boot_id, Baseline **ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        _cleanup_(baseline_freep) Baseline *b = NULL;
        int r;

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = read_full_file_at(fd, "baseline.json", 1U << 22, &text, NULL);
        if (r < 0)
                return r;
        r = baseline_from_json_string(text, &b);
        if (r < 0)
                return r;
        if (!streq(b->boot_id, boot_id))
                return -ESTALE;
        *ret = TAKE_PTR(b);
        return 0;
}

int baseline_save(const char *dir, const Baseline *b) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        int r;

        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = baseline_to_json_string(b, &text);
        if (r < 0)
                return r;
        return write_file_atomic_at(fd, "baseline.json", text, strlen(text));
}

int read_boot_id(int root_fd, char *buf) {
        _cleanup_free_ char *text = NULL;
        size_t n;
        int r;

        r = read_full_file_at(root_fd, "proc/sys/kernel/random/boot_id", 128, &text, NULL);
        if (r < 0)
                return r;
        n = strcspn(text, "\n");
        if (n == 0 || n >= BOOT_ID_MAX)
                return -EBADMSG;
        memcpy(buf, text, n);
        buf[n] = 0;
        return 0;
}
