/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "path-index.h"
#include "shared/macro.h"
#include "shared/sort-util.h"

static int cmp_path_index(const size_t *a, const size_t *b, const Sample *sample) {
        size_t x = *a, y = *b;
        unsigned nx = sample->ns_of_mount[x], ny = sample->ns_of_mount[y];
        int r;

        if (nx != ny)
                return nx < ny ? -1 : 1;
        r = strcmp(sample->table->entries[x].mount_point, sample->table->entries[y].mount_point);
        if (r != 0)
                return r;
        return CMP(x, y);
}

int path_index_build(const Sample *sample, PathIndex *ret) {
        size_t n = sample->table->n_entries;
        size_t *order = malloc(MAX(n, 1) * sizeof(size_t));

        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                order[i] = i;
        typesafe_qsort_r(order, n, cmp_path_index, sample);
        *ret = (PathIndex) { .sample = sample, .order = order, .n = n };
        return 0;
}

void path_index_done(PathIndex *pi) {
        free(pi->order);
}

/* The last mount (in table order) in namespace ns whose mount point is exactly path[0..len). */
static ssize_t path_index_find(const PathIndex *pi, unsigned ns, const char *path, size_t len) {
        const MountTable *t = pi->sample->table;
        size_t lo = 0, hi = pi->n;
        ssize_t found = -1;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2, idx = pi->order[mid];
                unsigned mns = pi->sample->ns_of_mount[idx];
                const char *mp = t->entries[idx].mount_point;
                int r = mns != ns ? (mns < ns ? -1 : 1) : strncmp(mp, path, len);

                if (r == 0 && mp[len] != 0)
                        r = 1;
                if (r == 0) {
                        found = (ssize_t) idx;
                        lo = mid + 1; /* equal paths are sorted by table index: keep the last */
                } else if (r < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return found;
}

/* The mount holding 'path' in namespace ns (table index): the one with the longest mount point
 * that is a component-wise prefix of path, the last one in table order when stacked. -1 when none. */
ssize_t mount_of_path(const PathIndex *pi, const char *path, unsigned ns) {
        size_t n = strlen(path);
        ssize_t idx;

        /* The whole path, then each prefix that ends at a component boundary, then "/". */
        for (size_t len = n; len > 0; len--) {
                if (len < n && path[len] != '/')
                        continue;
                idx = path_index_find(pi, ns, path, len);
                if (idx >= 0)
                        return idx;
        }
        return path_index_find(pi, ns, "/", 1);
}

/* The superblock holding 'path' in namespace ns, as mount_of_path(). -1 when none. */
ssize_t sb_of_path(const PathIndex *pi, const char *path, unsigned ns) {
        ssize_t idx = mount_of_path(pi, path, ns);

        return idx >= 0 ? (ssize_t) pi->sample->sb_of_mount[idx] : -1;
}
