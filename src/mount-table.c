/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <fcntl.h>
#include <libmount.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "mount-table.h"
#include "shared/dlfcn-util.h"
#include "shared/fileio.h"
#include "shared/mount-api.h"
#include "shared/sort-util.h"
#include "shared/string-table.h"

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

/*
 * libmount is loaded on first use: the listmount backend (the default for our own table on Linux
 * 6.15+) never needs it, and linking it cost every start 0.3 ms and 0.6 MiB (it pulls in libblkid,
 * libselinux and libpcre2; libselinux's constructor reads /proc/filesystems and /etc/selinux).
 */
static void *libmount_dl;
static typeof(mnt_free_iter) *sym_mnt_free_iter;
static typeof(mnt_fs_get_devno) *sym_mnt_fs_get_devno;
static typeof(mnt_fs_get_fs_options) *sym_mnt_fs_get_fs_options;
static typeof(mnt_fs_get_fstype) *sym_mnt_fs_get_fstype;
static typeof(mnt_fs_get_id) *sym_mnt_fs_get_id;
static typeof(mnt_fs_get_parent_id) *sym_mnt_fs_get_parent_id;
static typeof(mnt_fs_get_root) *sym_mnt_fs_get_root;
static typeof(mnt_fs_get_source) *sym_mnt_fs_get_source;
static typeof(mnt_fs_get_target) *sym_mnt_fs_get_target;
static typeof(mnt_fs_get_vfs_options) *sym_mnt_fs_get_vfs_options;
static typeof(mnt_new_iter) *sym_mnt_new_iter;
static typeof(mnt_new_table) *sym_mnt_new_table;
static typeof(mnt_table_get_nents) *sym_mnt_table_get_nents;
static typeof(mnt_table_get_userdata) *sym_mnt_table_get_userdata;
static typeof(mnt_table_next_fs) *sym_mnt_table_next_fs;
static typeof(mnt_table_parse_stream) *sym_mnt_table_parse_stream;
static typeof(mnt_table_set_parser_errcb) *sym_mnt_table_set_parser_errcb;
static typeof(mnt_table_set_userdata) *sym_mnt_table_set_userdata;
static typeof(mnt_unref_table) *sym_mnt_unref_table;
static const char *libmount_error;

static int libmount_load(void) {
        static const DlSymbol syms[] = {
                DL_SYMBOL(mnt_free_iter),
                DL_SYMBOL(mnt_fs_get_devno),
                DL_SYMBOL(mnt_fs_get_fs_options),
                DL_SYMBOL(mnt_fs_get_fstype),
                DL_SYMBOL(mnt_fs_get_id),
                DL_SYMBOL(mnt_fs_get_parent_id),
                DL_SYMBOL(mnt_fs_get_root),
                DL_SYMBOL(mnt_fs_get_source),
                DL_SYMBOL(mnt_fs_get_target),
                DL_SYMBOL(mnt_fs_get_vfs_options),
                DL_SYMBOL(mnt_new_iter),
                DL_SYMBOL(mnt_new_table),
                DL_SYMBOL(mnt_table_get_nents),
                DL_SYMBOL(mnt_table_get_userdata),
                DL_SYMBOL(mnt_table_next_fs),
                DL_SYMBOL(mnt_table_parse_stream),
                DL_SYMBOL(mnt_table_set_parser_errcb),
                DL_SYMBOL(mnt_table_set_userdata),
                DL_SYMBOL(mnt_unref_table),
        };

        return dlopen_many_sym(&libmount_dl, MOUNT_TABLE_LIBMOUNT, syms, ELEMENTSOF(syms), &libmount_error);
}

const char *mount_table_libmount_error(void) {
        return libmount_error;
}

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
                sym_mnt_unref_table(*tb);
}

static void mnt_free_iterp(struct libmnt_iter **it) {
        if (*it)
                sym_mnt_free_iter(*it);
}

/* libmount's parser error callback has no userdata argument: the counter goes through the table's
 * userdata pointer. Returning 1 means "recoverable: skip this line and continue". */
static int parser_errcb(struct libmnt_table *tb, const char *filename, int line) {
        unsigned *n_bad = sym_mnt_table_get_userdata(tb);

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

bool mount_options_read_only(const char *opts) {
        return opts && opts[0] == 'r' && opts[1] == 'o' && (opts[2] == ',' || opts[2] == 0);
}

static int mount_entry_fill(struct libmnt_fs *fs, MountEntry *e) {
        int r;

        *e = (MountEntry) {
                .mount_id = sym_mnt_fs_get_id(fs),
                .parent_id = sym_mnt_fs_get_parent_id(fs),
                .dev = sym_mnt_fs_get_devno(fs),
        };

        if ((r = strdup_or_null(sym_mnt_fs_get_root(fs), &e->root)) < 0 ||
            (r = strdup_or_null(sym_mnt_fs_get_target(fs), &e->mount_point)) < 0 ||
            (r = strdup_or_null(sym_mnt_fs_get_fstype(fs), &e->fstype)) < 0 ||
            (r = strdup_or_null(sym_mnt_fs_get_source(fs), &e->source)) < 0 ||
            (r = strdup_or_null(sym_mnt_fs_get_vfs_options(fs), &e->vfs_options)) < 0 ||
            (r = strdup_or_null(sym_mnt_fs_get_fs_options(fs), &e->fs_options)) < 0) {
                mount_entry_done(e);
                return r;
        }

        e->read_only = mount_options_read_only(e->vfs_options) || mount_options_read_only(e->fs_options);
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
                r = libmount_load();
                if (r < 0)
                        return r;
                tb = sym_mnt_new_table();
                if (!tb)
                        return -ENOMEM;
                r = sym_mnt_table_set_userdata(tb, &n_bad);
                if (r < 0)
                        return r;
                r = sym_mnt_table_set_parser_errcb(tb, parser_errcb);
                if (r < 0)
                        return r;

                f = fmemopen((void *) p, (size_t) (end - p), "r");
                if (!f)
                        return negative_errno();

                /* libmount resolves this name (realpath(), to guess a thread id): a relative one
                 * would be looked up in the working directory, which may be on a hung NFS or FUSE
                 * mount. A procfs path resolves without touching any other filesystem. */
                r = sym_mnt_table_parse_stream(tb, f, "/proc/self/mountinfo");
                if (r < 0)
                        return r;

                n = sym_mnt_table_get_nents(tb);
                if (n < 0)
                        return n;
                if ((unsigned) n > MOUNT_TABLE_MAX_ENTRIES)
                        return -E2BIG;

                if (n > 0) {
                        t->entries = calloc((size_t) n, sizeof(MountEntry));
                        if (!t->entries)
                                return -ENOMEM;
                }

                it = sym_mnt_new_iter(MNT_ITER_FORWARD);
                if (!it)
                        return -ENOMEM;

                while (t->n_entries < (size_t) n && sym_mnt_table_next_fs(tb, it, &fs) == 0) {
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

/* Our own mountinfo text, as the listmount loader takes our table (review AN, AN-1): a line over
 * MOUNTINFO_LINE_MAX (any user's mount point made 1 MiB deep) is left out and counted, and so is,
 * as one, what is past MOUNT_TABLE_MAX_BYTES kept or MOUNTINFO_READ_MAX read; the rest is kept. */
#define MOUNTINFO_LINE_MAX (64U * 1024U)
#define MOUNTINFO_READ_MAX (256U * 1024U * 1024U)
#define MOUNTINFO_CHUNK (64U * 1024U)
static int mountinfo_read_bounded(int root_fd, char **ret, size_t *ret_size, unsigned *ret_n_dropped) {
        _cleanup_free_ char *buf = NULL, *chunk = malloc(MOUNTINFO_CHUNK);
        _cleanup_close_ int fd = -EBADF;
        size_t size = 0, cap = 0, line_start = 0, total = 0;
        unsigned n_dropped = 0;
        bool skipping = false, full = false;

        if (!chunk)
                return -ENOMEM;
        fd = openat(root_fd, "proc/self/mountinfo", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t n = read(fd, chunk, MOUNTINFO_CHUNK);
                const char *p = chunk, *end;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                total += (size_t) n;
                end = chunk + n;
                while (p < end && !full) { /* a line, or the part of one in this chunk */
                        const char *nl = memchr(p, '\n', (size_t) (end - p));
                        size_t len = (size_t) ((nl ?: end) - p);

                        if (!skipping && size - line_start + len > MOUNTINFO_LINE_MAX) {
                                size = line_start;
                                skipping = true;
                        }
                        if (!skipping) {
                                if (size + len + 1 > cap) {
                                        size_t c = MAX(cap * 2,
                                                       MAX(size + len + 1, (size_t) MOUNTINFO_CHUNK));
                                        char *b = realloc(buf, c + 1);

                                        if (!b)
                                                return -ENOMEM;
                                        buf = b;
                                        cap = c;
                                }
                                memcpy(buf + size, p, len);
                                size += len;
                                if (nl)
                                        buf[size++] = '\n';
                        }
                        if (nl) {
                                n_dropped += skipping;
                                skipping = false;
                                full = size > MOUNT_TABLE_MAX_BYTES; /* this line not kept */
                                line_start = full ? line_start : size;
                        }
                        p += len + (nl != NULL);
                }
                if (full || total >= MOUNTINFO_READ_MAX) {
                        n_dropped++; /* at least one line past the bounds (or the rest of one) */
                        break;
                }
        }
        if (!full && total < MOUNTINFO_READ_MAX)
                n_dropped += skipping || size > line_start; /* a last line cut short */
        size = line_start;
        if (!buf && !(buf = strdup("")))
                return -ENOMEM;
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        *ret_n_dropped = n_dropped;
        return 0;
}

static int mount_table_load_mountinfo(int root_fd, MountTable **ret, unsigned *ret_n_bad) {
        _cleanup_free_ char *buf = NULL;
        unsigned n_dropped = 0, n_bad = 0;
        size_t size = 0;
        int r;

        r = mountinfo_read_bounded(root_fd, &buf, &size, &n_dropped);
        if (r < 0)
                return r;
        r = mount_table_parse(buf, size, ret, &n_bad);
        if (r >= 0 && ret_n_bad)
                *ret_n_bad = n_bad + n_dropped;
        return r;
}

/*
 * listmount/statmount backend. What the run path reads of an entry: ids and mount point (overmount
 * detection), dev, fstype, source (btrfs member lookup, device flush of fuseblk-like types), root
 * (nsfs "mnt:[ino]"), the superblock options (ro, overlay upperdir, FUSE user_id/group_id/allow_other)
 * and read-only. So statmount is asked for SB_BASIC, MNT_BASIC, MNT_ROOT, MNT_POINT, FS_TYPE,
 * MNT_OPTS (6.10), FS_SUBTYPE and SB_SOURCE (6.13). The two 6.13 strings are left out of the mask
 * when a mount has none, which a kernel that does not know them does as well: a kernel is trusted
 * only when its supported_mask (6.15) lists every bit asked for. Option strings are rebuilt as
 * mountinfo prints them: vfs options from mnt_attr, superblock options as "ro|rw", the sb_flags
 * words, then mnt_opts (escaped by the kernel like mountinfo, unescaped here like libmount does).
 */
#define LISTMOUNT_WANT                                                                                     \
        (SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_MNT_BASIC | SS_STATMOUNT_MNT_ROOT | SS_STATMOUNT_MNT_POINT | \
         SS_STATMOUNT_FS_TYPE | SS_STATMOUNT_MNT_OPTS | SS_STATMOUNT_FS_SUBTYPE | SS_STATMOUNT_SB_SOURCE)
#define LISTMOUNT_ALWAYS \
        (SS_STATMOUNT_SB_BASIC | SS_STATMOUNT_MNT_BASIC | SS_STATMOUNT_MNT_ROOT | SS_STATMOUNT_FS_TYPE)
#define LISTMOUNT_CHUNK 512U /* ids per listmount call */
#define STATMOUNT_BUF_MIN 4096U
#define STATMOUNT_BUF_MAX (1024U * 1024U) /* strings of one mount: paths and options */
/* Our own table past MOUNT_TABLE_MAX_BYTES: what one more mount may take before it is left out. */
#define STATMOUNT_BUF_PAST_BOUND (16U * 1024U)

/* One round of libmount's unescaping: "\ooo" (three octal digits) becomes that byte. */
static void unescape_octal(char *s) {
        char *w = s;

        for (const char *p = s; *p;) {
                if (p[0] == '\\' && (p[1] & ~7) == '0' && (p[2] & ~7) == '0' && (p[3] & ~7) == '0') {
                        *w++ = (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
                        p += 4;
                } else
                        *w++ = *p++;
        }
        *w = 0;
}

/* Appends yes or (when not NULL) no to buf, whose size fits every flag word. */
static void append_flag(char *buf, bool cond, const char *yes, const char *no) {
        const char *w = cond ? yes : no;

        if (w)
                strcat(buf, w);
}

static char *concat3(const char *a, const char *b, const char *c) {
        size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
        char *s = malloc(la + lb + lc + 1);

        if (!s)
                return NULL;
        memcpy(s, a, la);
        memcpy(s + la, b, lb);
        memcpy(s + la + lb, c, lc + 1);
        return s;
}

/* A string of the reply, or NULL when absent or not terminated within what the kernel wrote. */
static const char *sm_str(const struct ss_statmount *sm, size_t size, uint64_t bit, uint32_t off) {
        size_t written = MIN((size_t) sm->size, size), max;

        if (written <= offsetof(struct ss_statmount, str))
                return NULL;
        max = written - offsetof(struct ss_statmount, str);
        if (!(sm->mask & bit) || off >= max || !memchr(sm->str + off, 0, max - off))
                return NULL;
        return sm->str + off;
}

static int entry_from_statmount(const struct ss_statmount *sm, size_t size, MountEntry *ret) {
        const char *type, *subtype, *source, *opts, *root, *point;
        _cleanup_(mount_entry_done) MountEntry e = {};
        char vfs[128], sb[64];
        uint64_t a = sm->mnt_attr;

        if ((sm->mask & LISTMOUNT_ALWAYS) != LISTMOUNT_ALWAYS)
                return -EOPNOTSUPP;
        if (sm->mnt_id_old > INT_MAX || sm->mnt_parent_id_old > INT_MAX)
                return -ERANGE;
        type = sm_str(sm, size, SS_STATMOUNT_FS_TYPE, sm->fs_type);
        root = sm_str(sm, size, SS_STATMOUNT_MNT_ROOT, sm->mnt_root);
        point = sm_str(sm, size, SS_STATMOUNT_MNT_POINT, sm->mnt_point);
        subtype = sm_str(sm, size, SS_STATMOUNT_FS_SUBTYPE, sm->fs_subtype);
        source = sm_str(sm, size, SS_STATMOUNT_SB_SOURCE, sm->sb_source);
        opts = sm_str(sm, size, SS_STATMOUNT_MNT_OPTS, sm->mnt_opts);
        if (!type || !root)
                return -EBADMSG;
        if (!point)
                return 0; /* not reachable from our root: mountinfo skips it too */

        e = (MountEntry) {
                .mount_id = (int) sm->mnt_id_old,
                .mount_id_unique = sm->mnt_id,
                .parent_id = (int) sm->mnt_parent_id_old,
                .dev = makedev(sm->sb_dev_major, sm->sb_dev_minor),
        };
        /* Built with memcpy, not asprintf: at 1000 mounts printf's formatting was a third of the
         * backend's time. show_mnt_opts(): relatime is "no atime bit"; strictatime prints nothing. */
        vfs[0] = 0;
        append_flag(vfs, a & SS_MOUNT_ATTR_RDONLY, "ro", "rw");
        append_flag(vfs, a & SS_MOUNT_ATTR_NOSUID, ",nosuid", NULL);
        append_flag(vfs, a & SS_MOUNT_ATTR_NODEV, ",nodev", NULL);
        append_flag(vfs, a & SS_MOUNT_ATTR_NOEXEC, ",noexec", NULL);
        append_flag(vfs, a & SS_MOUNT_ATTR_NOATIME, ",noatime", NULL);
        append_flag(vfs, a & SS_MOUNT_ATTR_NODIRATIME, ",nodiratime", NULL);
        append_flag(vfs, !(a & (SS_MOUNT_ATTR_NOATIME | SS_MOUNT_ATTR_STRICTATIME)), ",relatime", NULL);
        append_flag(vfs, a & SS_MOUNT_ATTR_NOSYMFOLLOW, ",nosymfollow", NULL);
        append_flag(vfs, a & SS_MOUNT_ATTR_IDMAP, ",idmapped", NULL);
        /* show_sb_opts(), then the security and filesystem options. */
        sb[0] = 0;
        append_flag(sb, sm->sb_flags & SS_SB_RDONLY, "ro", "rw");
        append_flag(sb, sm->sb_flags & SS_SB_SYNCHRONOUS, ",sync", NULL);
        append_flag(sb, sm->sb_flags & SS_SB_DIRSYNC, ",dirsync", NULL);
        append_flag(sb, sm->sb_flags & SS_SB_LAZYTIME, ",lazytime", NULL);
        e.vfs_options = strdup(vfs);
        e.fs_options = concat3(sb, isempty(opts) ? "" : ",", opts ?: "");
        e.fstype = concat3(type, isempty(subtype) ? "" : ".", subtype ?: "");
        e.root = strdup(root);
        e.mount_point = strdup(point);
        e.source = strdup(source ?: "none"); /* mountinfo prints "none" for a mount without one */
        if (!e.fstype || !e.vfs_options || !e.fs_options || !e.root || !e.mount_point || !e.source)
                return -ENOMEM;
        unescape_octal(e.fs_options);
        /* As for a mountinfo line: "ro" in either option string (MOUNT_ATTR_RDONLY, SB_RDONLY). */
        e.read_only = mount_options_read_only(e.vfs_options) || mount_options_read_only(e.fs_options);
        *ret = e;
        e = (MountEntry) {};
        return 1;
}

/* The request of a listmount or statmount call: our namespace (ns_id 0: the first version of the
 * struct, which every kernel with the calls takes) or the one with that id (6.11+). */
static struct ss_mnt_id_req mnt_req(uint64_t mnt_id, uint64_t param, uint64_t ns_id) {
        return (struct ss_mnt_id_req) {
                .size = ns_id ? SS_MNT_ID_REQ_SIZE_VER1 : SS_MNT_ID_REQ_SIZE_VER0,
                .mnt_id = mnt_id,
                .param = param,
                .mnt_ns_id = ns_id,
        };
}

int mount_table_list_ids(uint64_t ns_id, uint64_t **ret, size_t *ret_n) {
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n = 0;

        for (;;) {
                /* param: continue after the last id seen */
                struct ss_mnt_id_req req = mnt_req(SS_LSMT_ROOT, n > 0 ? ids[n - 1] : 0, ns_id);
                uint64_t *x;
                long k;

                x = reallocarray(ids, n + LISTMOUNT_CHUNK, sizeof(uint64_t));
                if (!x)
                        return -ENOMEM;
                ids = x;
                k = ss_listmount(&req, ids + n, LISTMOUNT_CHUNK, 0);
                if (k < 0)
                        return negative_errno();
                if ((size_t) k > LISTMOUNT_CHUNK)
                        return -EBADMSG;
                n += (size_t) k;
                if (n > MOUNT_TABLE_MAX_ENTRIES)
                        return -E2BIG;
                if ((size_t) k < LISTMOUNT_CHUNK)
                        break;
        }
        *ret = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}

/* Another namespace's table (ns_id not 0) past the bounds: -E2BIG, the namespace not scanned. Ours
 * is needed whole, but any user fills it too, through setuid fusermount3 (up to mount_max, 1000)
 * with mount points made 1 MiB long by one rename (review AN, AN-1: 1 GiB, 12-16 s; or one past
 * STATMOUNT_BUF_MAX failed the table, and with it the sample: the pass synced nothing): a mount of
 * ours past STATMOUNT_BUF_MAX, or once the table passed MOUNT_TABLE_MAX_BYTES one past
 * STATMOUNT_BUF_PAST_BOUND, is left out and counted in *ret_n_dropped, which leaves the view
 * incomplete. */
static int load_listmount(uint64_t ns_id, MountTable **ret, unsigned *ret_n_dropped) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        _cleanup_free_ struct ss_statmount *sm = NULL;
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n_ids = 0, size = STATMOUNT_BUF_MIN, bytes = 0, max = STATMOUNT_BUF_MAX;
        unsigned n_dropped = 0;
        bool checked = false;
        int r;

        r = mount_table_list_ids(ns_id, &ids, &n_ids);
        if (r < 0)
                return r;

        t = calloc(1, sizeof(MountTable));
        sm = malloc(size);
        if (!t || !sm)
                return -ENOMEM;
        if (n_ids > 0) {
                t->entries = calloc(n_ids, sizeof(MountEntry));
                if (!t->entries)
                        return -ENOMEM;
        }

        for (size_t i = 0; i < n_ids;) {
                struct ss_mnt_id_req q = mnt_req(
                        ids[i], LISTMOUNT_WANT | (checked ? 0 : SS_STATMOUNT_SUPPORTED_MASK), ns_id);

                if (ss_statmount(&q, sm, size, 0) < 0) {
                        if (errno == ENOENT) {
                                i++; /* unmounted since it was listed */
                                continue;
                        }
                        if (errno != EOVERFLOW)
                                return negative_errno();
                        if (size >= max) {
                                if (ns_id != 0)
                                        return -E2BIG;
                                n_dropped++;
                                i++;
                                continue;
                        }
                        size *= 2;
                        free(sm);
                        sm = malloc(size);
                        if (!sm)
                                return -ENOMEM;
                        continue; /* the same mount again, with room */
                }
                if (!checked) {
                        if (!(sm->mask & SS_STATMOUNT_SUPPORTED_MASK) ||
                            (sm->supported_mask & LISTMOUNT_WANT) != LISTMOUNT_WANT)
                                return -EOPNOTSUPP;
                        checked = true;
                }
                r = entry_from_statmount(sm, size, &t->entries[t->n_entries]);
                if (r < 0)
                        return r;
                t->n_entries += r;
                /* The text's bound (review AK, AK-2); ours goes on with small mounts only (review
                 * AM, AM-4: failed whole, the pass synced nothing). */
                bytes += r > 0 ? mount_entry_bytes(&t->entries[t->n_entries - 1]) : 0;
                if (bytes > MOUNT_TABLE_MAX_BYTES && max > STATMOUNT_BUF_PAST_BOUND) {
                        if (ns_id != 0)
                                return -E2BIG;
                        max = STATMOUNT_BUF_PAST_BOUND;
                        size = MIN(size, (size_t) max);
                        free(sm);
                        sm = malloc(size);
                        if (!sm)
                                return -ENOMEM;
                }
                i++;
        }

        if (ret_n_dropped)
                *ret_n_dropped = n_dropped;
        *ret = TAKE_PTR(t);
        return 0;
}

int mount_table_load_listmount(MountTable **ret, unsigned *ret_n_dropped) {
        return load_listmount(0, ret, ret_n_dropped);
}

int mount_table_namespace_id(int ns_fd, uint64_t *ret) {
        uint64_t ns_id = 0;

        if (ioctl(ns_fd, SS_NS_GET_MNTNS_ID, &ns_id) < 0)
                return negative_errno();
        if (ns_id == 0)
                return -EBADMSG;
        *ret = ns_id;
        return 0;
}

int mount_table_load_namespace(int ns_fd, MountTable **ret) {
        uint64_t ns_id;
        int r = mount_table_namespace_id(ns_fd, &ns_id);

        return r < 0 ? r : load_listmount(ns_id, ret, NULL);
}

/* Whether root_fd is our own root directory: only then do listmount's mounts (our namespace, seen
 * from our root) equal what root_fd's proc/self/mountinfo shows. AT_STATX_DONT_SYNC: the inode
 * number and mount id are the VFS's own, and an NFS or FUSE root must not be asked (CIFS and 9p
 * may ask all the same). */
static bool is_our_root(int root_fd) {
        struct statx a, b;

        if (statx(root_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &a) < 0 ||
            statx(AT_FDCWD, "/", AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &b) < 0)
                return false;
        return (a.stx_mask & b.stx_mask & STATX_MNT_ID) && a.stx_mnt_id == b.stx_mnt_id &&
               a.stx_ino == b.stx_ino && a.stx_dev_major == b.stx_dev_major &&
               a.stx_dev_minor == b.stx_dev_minor;
}

/* Measured in docs/PERFORMANCE.md ("Mount table: listmount/statmount"); -DLISTMOUNT_BY_DEFAULT=0|1
 * builds the other choice for benchmarks. */
#ifndef LISTMOUNT_BY_DEFAULT
#define LISTMOUNT_BY_DEFAULT 1
#endif

static const char *const mount_table_backend_table[_MOUNT_TABLE_BACKEND_MAX] = {
        [MOUNT_TABLE_BACKEND_DEFAULT] = "default",
        [MOUNT_TABLE_BACKEND_MOUNTINFO] = "mountinfo",
        [MOUNT_TABLE_BACKEND_LISTMOUNT] = "listmount",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(mount_table_backend, MountTableBackend);

int mount_table_load_backend(int root_fd, MountTableBackend backend, MountTable **ret, unsigned *ret_n_bad,
                             MountTableBackend *ret_used) {
        bool ours;
        int r;

        if (backend < 0 || backend >= _MOUNT_TABLE_BACKEND_MAX)
                return -EINVAL;
        ours = backend != MOUNT_TABLE_BACKEND_MOUNTINFO && is_our_root(root_fd);
        if (backend == MOUNT_TABLE_BACKEND_LISTMOUNT && !ours)
                return -EXDEV;
        if (backend == MOUNT_TABLE_BACKEND_LISTMOUNT ||
            (backend == MOUNT_TABLE_BACKEND_DEFAULT && LISTMOUNT_BY_DEFAULT && ours)) {
                unsigned n_dropped = 0;

                r = mount_table_load_listmount(ret, &n_dropped);
                if (r >= 0 || backend == MOUNT_TABLE_BACKEND_LISTMOUNT || r == -ENOMEM) {
                        if (r >= 0 && ret_n_bad)
                                *ret_n_bad = n_dropped;
                        if (r >= 0 && ret_used)
                                *ret_used = MOUNT_TABLE_BACKEND_LISTMOUNT;
                        return r;
                }
                /* Old kernel, seccomp, a mount that outgrew the bounds: the text has it all. */
        }
        r = mount_table_load_mountinfo(root_fd, ret, ret_n_bad);
        if (r >= 0 && ret_used)
                *ret_used = MOUNT_TABLE_BACKEND_MOUNTINFO;
        return r;
}

int mount_table_load(int root_fd, MountTable **ret, unsigned *ret_n_bad) {
        return mount_table_load_backend(root_fd, MOUNT_TABLE_BACKEND_DEFAULT, ret, ret_n_bad, NULL);
}

int mount_table_preload(int root_fd) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        int r;

        if (LISTMOUNT_BY_DEFAULT && is_our_root(root_fd) && mount_table_load_listmount(&t, NULL) >= 0)
                return 0;
        r = libmount_load();
        return r < 0 ? r : 1;
}

typedef struct MountIdIndex {
        int id;
        size_t i;
} MountIdIndex;

static int mount_id_index_cmp(const MountIdIndex *a, const MountIdIndex *b) {
        return CMP(a->id, b->id);
}

/* The index of the entry with mount id 'id' in by_id (sorted), or -1. */
static ssize_t mount_id_find(const MountIdIndex *by_id, size_t n, int id) {
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t m = lo + (hi - lo) / 2;

                if (by_id[m].id == id)
                        return (ssize_t) by_id[m].i;
                if (by_id[m].id < id)
                        lo = m + 1;
                else
                        hi = m;
        }
        return -1;
}

enum { BELOW_UNKNOWN, BELOW_YES, BELOW_NO };

int mount_table_keep_below(MountTable *t, int root_id, MountTable **ret_outside) {
        _cleanup_(mount_table_freep) MountTable *out = NULL;
        _cleanup_free_ MountIdIndex *by_id = NULL;
        _cleanup_free_ unsigned char *state = NULL;
        _cleanup_free_ size_t *chain = NULL;
        size_t n = t->n_entries, kept = 0;
        ssize_t root;

        by_id = calloc(MAX(n, 1), sizeof(MountIdIndex));
        state = calloc(MAX(n, 1), 1);
        chain = calloc(n + 1, sizeof(size_t));
        if (!by_id || !state || !chain)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                by_id[i] = (MountIdIndex) { .id = t->entries[i].mount_id, .i = i };
        typesafe_qsort(by_id, n, mount_id_index_cmp);
        root = mount_id_find(by_id, n, root_id);
        if (root < 0 || !streq(t->entries[root].mount_point, "/"))
                return -EXDEV;

        /* Up through the parents to the root (below it), to a mount already decided, or to one not
         * listed (outside); a loop of parent ids ends after n steps, outside. */
        state[root] = BELOW_YES;
        for (size_t i = 0; i < n; i++) {
                unsigned char v = BELOW_NO;
                size_t k = 0, j = i;

                while (state[j] == BELOW_UNKNOWN && k <= n) {
                        ssize_t p = mount_id_find(by_id, n, t->entries[j].parent_id);

                        chain[k++] = j;
                        if (p < 0 || (size_t) p == j)
                                break;
                        j = (size_t) p;
                }
                if (state[j] != BELOW_UNKNOWN)
                        v = state[j];
                for (size_t m = 0; m < k; m++)
                        state[chain[m]] = v;
        }

        for (size_t i = 0; i < n; i++)
                kept += state[i] == BELOW_YES;
        if (kept < n) { /* allocated before any entry moves: a failure leaves t as it was */
                out = calloc(1, sizeof(MountTable));
                if (!out || !(out->entries = calloc(n - kept, sizeof(MountEntry))))
                        return -ENOMEM;
                kept = 0;
                for (size_t i = 0; i < n; i++)
                        if (state[i] == BELOW_YES)
                                t->entries[kept++] = t->entries[i];
                        else
                                out->entries[out->n_entries++] = t->entries[i];
                t->n_entries = kept;
        }
        *ret_outside = TAKE_PTR(out);
        return 0;
}

size_t mount_entry_bytes(const MountEntry *e) {
        const char *const strs[] = { e->root,   e->mount_point, e->fstype,
                                     e->source, e->vfs_options, e->fs_options };
        size_t n = sizeof(MountEntry);

        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                n += strs[i] ? strlen(strs[i]) + 1 : 0;
        return n;
}

int mount_table_merge(MountTable *into, MountTable **from) {
        MountTable *f = *from;
        MountEntry *n;
        size_t bytes = 0;

        if (f->n_entries == 0) {
                *from = mount_table_free(f);
                return 0;
        }
        if (into->n_entries + f->n_entries > MOUNT_TABLE_MAX_ENTRIES)
                return -E2BIG;
        for (size_t i = 0; i < f->n_entries; i++)
                bytes += mount_entry_bytes(f->entries + i);
        if (bytes >
            MOUNT_TABLE_MERGE_MAX_BYTES - MIN(into->merged_bytes, (size_t) MOUNT_TABLE_MERGE_MAX_BYTES))
                return -E2BIG;
        n = reallocarray(into->entries, into->n_entries + f->n_entries, sizeof(MountEntry));
        if (!n)
                return -ENOMEM;
        into->entries = n;
        memcpy(into->entries + into->n_entries, f->entries, f->n_entries * sizeof(MountEntry));
        into->n_entries += f->n_entries;
        into->merged_bytes += bytes;
        /* The entries' strings now belong to 'into'. */
        f->n_entries = 0;
        *from = mount_table_free(f);
        return 0;
}
