/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <libmount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "mount-table.h"
#include "shared/fileio.h"

/*
 * Parsing goes through libmount (2.38 verified): it unescapes the kernel's octal escapes (\040 \011
 * \012 \134) in root, mount point and source, splits the optional fields off at " - ", keeps
 * "fuse.sshfs" as the fstype and keeps a literal "none" source. Two libmount behaviours we work
 * around:
 *  - the table format (mountinfo/fstab/utab) is guessed from the first non-blank line, so one
 *    malformed first line would make libmount read the whole table as fstab. We therefore skip (and
 *    count) leading lines that do not start like a mountinfo line ("<id> <parent> ") and hand
 *    libmount the text from the first plausible line on;
 *  - a malformed line later on is reported through the parser error callback, which tells libmount
 *    to skip it (return 1) and counts it.
 */

void mount_entry_done(MountEntry *e) {
        free(e->root);
        free(e->mount_point);
        free(e->fstype);
        free(e->source);
        free(e->vfs_options);
        free(e->fs_options);
}

MountTable *mount_table_free(MountTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_entries; i++)
                mount_entry_done(&t->entries[i]);
        free(t->entries);
        free(t);
        return NULL;
}

static void mnt_unref_tablep(struct libmnt_table **tb) {
        if (*tb)
                mnt_unref_table(*tb);
}

static void mnt_free_iterp(struct libmnt_iter **it) {
        if (*it)
                mnt_free_iter(*it);
}

/* libmount's parser error callback has no userdata argument: the counter goes through the table's
 * userdata pointer. Returning 1 means "recoverable: skip this line and continue". */
static int parser_errcb(struct libmnt_table *tb, const char *filename, int line) {
        unsigned *n_bad = mnt_table_get_userdata(tb);

        if (n_bad)
                (*n_bad)++;
        return 1;
}

/* True if the line starts like "<digits> <digits> ", the only thing libmount's format guess
 * looks at. */
static bool line_looks_like_mountinfo(const char *p, const char *end) {
        for (unsigned field = 0; field < 2; field++) {
                const char *start = p;

                while (p < end && *p >= '0' && *p <= '9')
                        p++;
                if (p == start || p >= end || *p != ' ')
                        return false;
                p++;
        }
        return true;
}

static bool line_is_blank(const char *p, const char *end) {
        for (; p < end; p++)
                if (!strchr(" \t\r", *p))
                        return false;
        return true;
}

/* Number of lines, a last line without '\n' included; saturates above the entry bound. */
static int count_lines(const char *p, const char *end) {
        unsigned n = 0;

        while (p < end && n <= MOUNT_TABLE_MAX_ENTRIES) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));

                n++;
                p = eol ? eol + 1 : end;
        }
        return (int) n;
}

static int strdup_or_null(const char *s, char **ret) {
        char *c = NULL;

        if (s) {
                c = strdup(s);
                if (!c)
                        return -ENOMEM;
        }
        *ret = c;
        return 0;
}

/* Does the comma-separated option string contain exactly the option "ro"? */
static bool options_have_ro(const char *opts) {
        const char *p = opts;

        if (!opts)
                return false;
        for (;;) {
                size_t n = strcspn(p, ",");

                if (n == 2 && p[0] == 'r' && p[1] == 'o')
                        return true;
                if (!p[n])
                        return false;
                p += n + 1;
        }
}

static int mount_entry_fill(struct libmnt_fs *fs, MountEntry *e) {
        int r;

        *e = (MountEntry) {
                .mount_id = mnt_fs_get_id(fs),
                .parent_id = mnt_fs_get_parent_id(fs),
                .dev = mnt_fs_get_devno(fs),
        };

        if ((r = strdup_or_null(mnt_fs_get_root(fs), &e->root)) < 0 ||
            (r = strdup_or_null(mnt_fs_get_target(fs), &e->mount_point)) < 0 ||
            (r = strdup_or_null(mnt_fs_get_fstype(fs), &e->fstype)) < 0 ||
            (r = strdup_or_null(mnt_fs_get_source(fs), &e->source)) < 0 ||
            (r = strdup_or_null(mnt_fs_get_vfs_options(fs), &e->vfs_options)) < 0 ||
            (r = strdup_or_null(mnt_fs_get_fs_options(fs), &e->fs_options)) < 0) {
                mount_entry_done(e);
                return r;
        }

        e->read_only = options_have_ro(e->vfs_options) || options_have_ro(e->fs_options);
        return 0;
}

int mount_table_parse(const char *text, size_t size, MountTable **ret, unsigned *ret_n_bad) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *tb = NULL;
        _cleanup_(mnt_free_iterp) struct libmnt_iter *it = NULL;
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        const char *p, *end;
        struct libmnt_fs *fs;
        unsigned n_bad = 0;
        int n, r;

        if (!text && size > 0)
                return -EINVAL;
        if (size > MOUNT_TABLE_MAX_BYTES)
                return -E2BIG;
        if (!text)
                text = "";
        p = text;
        end = text + size;

        t = calloc(1, sizeof(MountTable));
        if (!t)
                return -ENOMEM;

        /* Skip leading lines libmount would mis-guess the format from (see above). */
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));
                const char *next = eol ? eol + 1 : end;

                if (line_looks_like_mountinfo(p, eol ?: end))
                        break;
                if (!line_is_blank(p, eol ?: end))
                        n_bad++;
                p = next;
        }

        /* Bound libmount's work and memory before it allocates an fs per line. */
        r = count_lines(p, end);
        if ((unsigned) r > MOUNT_TABLE_MAX_ENTRIES)
                return -E2BIG;

        if (p < end) {
                tb = mnt_new_table();
                if (!tb)
                        return -ENOMEM;
                r = mnt_table_set_userdata(tb, &n_bad);
                if (r < 0)
                        return r;
                r = mnt_table_set_parser_errcb(tb, parser_errcb);
                if (r < 0)
                        return r;

                f = fmemopen((void *) p, (size_t) (end - p), "r");
                if (!f)
                        return negative_errno();

                /* libmount resolves this name (realpath(), to guess a thread id): a relative one
                 * would be looked up in the working directory, which may be on a hung NFS or FUSE
                 * mount. A procfs path resolves without touching any other filesystem. */
                r = mnt_table_parse_stream(tb, f, "/proc/self/mountinfo");
                if (r < 0)
                        return r;

                n = mnt_table_get_nents(tb);
                if (n < 0)
                        return n;
                if ((unsigned) n > MOUNT_TABLE_MAX_ENTRIES)
                        return -E2BIG;

                if (n > 0) {
                        t->entries = calloc((size_t) n, sizeof(MountEntry));
                        if (!t->entries)
                                return -ENOMEM;
                }

                it = mnt_new_iter(MNT_ITER_FORWARD);
                if (!it)
                        return -ENOMEM;

                while (t->n_entries < (size_t) n && mnt_table_next_fs(tb, it, &fs) == 0) {
                        r = mount_entry_fill(fs, &t->entries[t->n_entries]);
                        if (r < 0)
                                return r;
                        t->n_entries++;
                }
        }

        *ret = TAKE_PTR(t);
        if (ret_n_bad)
                *ret_n_bad = n_bad;
        return 0;
}

int mount_table_load(int root_fd, MountTable **ret, unsigned *ret_n_bad) {
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        r = read_full_file_at(root_fd, "proc/self/mountinfo", MOUNT_TABLE_MAX_BYTES, &buf, &size);
        if (r == -EFBIG)
                return -E2BIG;
        if (r < 0)
                return r;

        return mount_table_parse(buf, size, ret, ret_n_bad);
}

int mount_table_merge(MountTable *into, MountTable **from) {
        MountTable *f = *from;
        MountEntry *n;

        if (f->n_entries == 0) {
                *from = mount_table_free(f);
                return 0;
        }
        if (into->n_entries + f->n_entries > MOUNT_TABLE_MAX_ENTRIES)
                return -E2BIG;
        n = reallocarray(into->entries, into->n_entries + f->n_entries, sizeof(MountEntry));
        if (!n)
                return -ENOMEM;
        into->entries = n;
        memcpy(into->entries + into->n_entries, f->entries, f->n_entries * sizeof(MountEntry));
        into->n_entries += f->n_entries;
        /* The entries' strings now belong to 'into'. */
        f->n_entries = 0;
        *from = mount_table_free(f);
        return 0;
}
