/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "bdi-stats.h"
#include "shared/fileio.h"
#include "shared/parse-util.h"
#include "shared/macro.h"
#include "shared/string-table.h"

#define BDI_STATS_MAX_BYTES (64U * 1024U)

/*
 * Layouts seen in mm/backing-dev.c bdi_debug_stats_show() (values are "%lu", widths vary):
 *  2.6.32:    BdiWriteback, BdiReclaimable, BdiDirtyThresh, DirtyThresh, BackgroundThresh (kB),
 *             WritebackThreads, b_dirty, b_io, b_more_io, bdi_list, state (hex), wb_mask, wb_list,
 *             wb_cnt
 *  2.6.37-3.0: the kB block, then b_dirty, b_io, b_more_io, bdi_list, state
 *  3.1+:      + BdiDirtied, BdiWritten (kB), BdiWriteBandwidth (kBps)
 *  4.0+:      + b_dirty_time (lazytime); this is still the 6.18 layout (captured in
 *             test/fixtures/bdi/kernel-6.18-real-*.stats).
 * Keys we do not use (DirtyThresh, BackgroundThresh, bdi_list, state, ...) are ignored.
 */

typedef enum BdiUnit {
        UNIT_KB,    /* "kB": value * 1024 bytes */
        UNIT_KBPS,  /* "kBps": value * 1024 bytes per second */
        UNIT_COUNT, /* bare number */
} BdiUnit;

static const char *const bdi_stat_key_table[_BDI_STAT_MAX] = {
        [BDI_STAT_WRITEBACK] = "BdiWriteback",
        [BDI_STAT_RECLAIMABLE] = "BdiReclaimable",
        [BDI_STAT_DIRTY_THRESH] = "BdiDirtyThresh",
        [BDI_STAT_DIRTIED] = "BdiDirtied",
        [BDI_STAT_WRITTEN] = "BdiWritten",
        [BDI_STAT_WRITE_BANDWIDTH] = "BdiWriteBandwidth",
        [BDI_STAT_B_DIRTY] = "b_dirty",
        [BDI_STAT_B_IO] = "b_io",
        [BDI_STAT_B_MORE_IO] = "b_more_io",
        [BDI_STAT_B_DIRTY_TIME] = "b_dirty_time",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(bdi_stat_key, BdiStatKey);

static const BdiUnit bdi_stat_unit[_BDI_STAT_MAX] = {
        [BDI_STAT_WRITEBACK] = UNIT_KB,    [BDI_STAT_RECLAIMABLE] = UNIT_KB,
        [BDI_STAT_DIRTY_THRESH] = UNIT_KB, [BDI_STAT_DIRTIED] = UNIT_KB,
        [BDI_STAT_WRITTEN] = UNIT_KB,      [BDI_STAT_WRITE_BANDWIDTH] = UNIT_KBPS,
        [BDI_STAT_B_DIRTY] = UNIT_COUNT,   [BDI_STAT_B_IO] = UNIT_COUNT,
        [BDI_STAT_B_MORE_IO] = UNIT_COUNT, [BDI_STAT_B_DIRTY_TIME] = UNIT_COUNT,
};

/* The key spelled p[0..len) (not NUL-terminated), or -ENOENT. */
static int lookup_key(const char *p, size_t len) {
        for (unsigned k = 0; k < _BDI_STAT_MAX; k++)
                if (strlen(bdi_stat_key_table[k]) == len && memcmp(bdi_stat_key_table[k], p, len) == 0)
                        return (int) k;
        return -ENOENT;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

/* Parses the value part " <digits>[ unit]" of one line, with exactly the expected unit. */
static int parse_value(const char *p, const char *end, BdiUnit unit, uint64_t *ret) {
        static const char *const unit_str[] = {
                [UNIT_KB] = "kB",
                [UNIT_KBPS] = "kBps",
                [UNIT_COUNT] = "",
        };
        uint64_t v;
        int r;

        r = parse_u64_with_unit(p, end, unit_str[unit], &v);
        if (r < 0)
                return r;
        if (unit != UNIT_COUNT) {
                if (v > UINT64_MAX / 1024)
                        return -ERANGE;
                v *= 1024;
        }
        *ret = v;
        return 0;
}

int bdi_stats_parse(const char *text, BdiStats *ret) {
        BdiStats s = {};
        const char *p = text;
        int n = 0;

        if (!text)
                return -EINVAL;

        while (*p) {
                const char *eol = strchrnul(p, '\n'), *colon, *kend;
                uint64_t v;
                int k;

                colon = memchr(p, ':', (size_t) (eol - p));
                if (colon) {
                        kend = colon;
                        while (kend > p && is_blank(kend[-1]))
                                kend--;
                        k = lookup_key(p, (size_t) (kend - p));
                        /* The first valid occurrence wins; a malformed or overflowing value leaves
                         * the key absent. */
                        if (k >= 0 && !(s.present & (1U << k)) &&
                            parse_value(colon + 1, eol, bdi_stat_unit[k], &v) >= 0) {
                                s.value[k] = v;
                                s.present |= 1U << k;
                                n++;
                        }
                }
                p = *eol ? eol + 1 : eol;
        }

        *ret = s;
        return n;
}

static bool bdi_name_is_valid(const char *name) {
        return !isempty(name) && !strchr(name, '/') && !strstr(name, "..") && !streq(name, ".") &&
               strlen(name) < 256;
}

/* Reads <debugfs_fd>/bdi/<name>/<file>, bounded. */
static int bdi_read(int debugfs_fd, const char *bdi_name, const char *file, size_t max, char **ret) {
        char path[300];
        int r;

        if (!bdi_name_is_valid(bdi_name))
                return -EINVAL;
        r = snprintf(path, sizeof(path), "bdi/%s/%s", bdi_name, file);
        if (r < 0 || (size_t) r >= sizeof(path))
                return -EINVAL;
        return read_full_file_at(debugfs_fd, path, max, ret, NULL);
}

BdiNameKind bdi_name_kind(const char *name, dev_t *ret_dev, char type[static BDI_TYPE_MAX]) {
        unsigned maj, min;
        const char *dash;
        int k = 0;

        if (sscanf(name, "%u:%u%n", &maj, &min, &k) == 2 && k > 0 &&
            (name[k] == 0 || streq(name + k, "-fuseblk")) && strspn(name, "0123456789") > 0) {
                *ret_dev = makedev(maj, min);
                return name[k] == 0 ? BDI_NAME_DEVICE : BDI_NAME_FUSEBLK;
        }
        dash = strrchr(name, '-');
        if (dash && dash > name && (size_t) (dash - name) < BDI_TYPE_MAX && dash[1] != 0 &&
            strspn(dash + 1, "0123456789") == strlen(dash + 1) &&
            !memchr(name, ':', (size_t) (dash - name))) {
                memcpy(type, name, (size_t) (dash - name));
                type[dash - name] = 0;
                return BDI_NAME_TYPE;
        }
        return BDI_NAME_OTHER;
}

int bdi_type_counts_add(BdiTypeCounts *c, const char *type, const char *name) {
        size_t i;

        for (i = 0; i < c->n; i++)
                if (streq(c->v[i].type, type))
                        break;
        if (i == c->n) {
                if (i == BDI_TYPES_MAX)
                        return -E2BIG;
                snprintf(c->v[i].type, sizeof c->v[i].type, "%s", type);
                snprintf(c->v[i].name, sizeof c->v[i].name, "%s", name);
                c->v[i].n = 0;
                c->n++;
        }
        c->v[i].n++;
        return 0;
}

int bdi_stats_load(int debugfs_fd, const char *bdi_name, BdiStats *ret) {
        _cleanup_free_ char *buf = NULL;
        int r;

        r = bdi_read(debugfs_fd, bdi_name, "stats", BDI_STATS_MAX_BYTES, &buf);
        if (r < 0)
                return r;
        return bdi_stats_parse(buf, ret);
}
