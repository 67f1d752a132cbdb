/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "meminfo.h"
#include "shared/fileio.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"
#include "shared/macro.h"

#define MEMINFO_MAX_BYTES (1024U * 1024U)

/* Parses " <digits> kB" (the rest of a meminfo line after "Key:") into bytes. Leading and trailing
 * blanks are allowed; the unit is required; overflow is an error. */
static int parse_kb_value(const char *p, const char *end, uint64_t *ret) {
        uint64_t v;
        int r;

        r = parse_u64_with_unit(p, end, "kB", &v);
        if (r < 0)
                return r;
        if (v > UINT64_MAX / 1024)
                return -ERANGE;
        *ret = v * 1024;
        return 0;
}

int meminfo_parse(const char *text, Meminfo *ret) {
        Meminfo m = {};
        bool has_nfs_unstable = false;
        const char *p = text;

        if (!text)
                return -EINVAL;

        while (*p) {
                const char *eol = strchrnul(p, '\n'), *colon;
                size_t klen;
                uint64_t v;

                colon = memchr(p, ':', (size_t) (eol - p));
                if (colon) {
                        klen = (size_t) (colon - p);
                        /* The first valid occurrence of a key wins; invalid values leave it absent. */
                        if (klen == 5 && memcmp(p, "Dirty", 5) == 0) {
                                if (!m.has_dirty && parse_kb_value(colon + 1, eol, &v) >= 0) {
                                        m.dirty_bytes = v;
                                        m.has_dirty = true;
                                }
                        } else if (klen == 9 && memcmp(p, "Writeback", 9) == 0) {
                                if (!m.has_writeback && parse_kb_value(colon + 1, eol, &v) >= 0) {
                                        m.writeback_bytes = v;
                                        m.has_writeback = true;
                                }
                        } else if (klen == 12 && memcmp(p, "WritebackTmp", 12) == 0) {
                                if (!m.has_writeback_tmp && parse_kb_value(colon + 1, eol, &v) >= 0) {
                                        m.writeback_tmp_bytes = v;
                                        m.has_writeback_tmp = true;
                                }
                        } else if (klen == 12 && memcmp(p, "NFS_Unstable", 12) == 0) {
                                if (!has_nfs_unstable && parse_kb_value(colon + 1, eol, &v) >= 0) {
                                        m.nfs_unstable_bytes = v;
                                        has_nfs_unstable = true;
                                }
                        }
                }
                p = *eol ? eol + 1 : eol;
        }

        if (!m.has_dirty && !m.has_writeback)
                return -EBADMSG;

        *ret = m;
        return 0;
}

int meminfo_load(int root_fd, Meminfo *ret) {
        _cleanup_free_ char *buf = NULL;
        int r;

        r = read_full_file_at(root_fd, "proc/meminfo", MEMINFO_MAX_BYTES, &buf, NULL);
        if (r < 0)
                return r;

        return meminfo_parse(buf, ret);
}

#define ZONEINFO_MAX_BYTES (4U * 1024U * 1024U)

int meminfo_drift_parse(const char *text, uint64_t *ret_pages) {
        uint64_t cpus = 0, node_cpus = 0, zone_cpus = 0;
        bool in_node = false;
        unsigned node = 0;

        if (!text)
                return -EINVAL;
        /* A node's zones come one after another; its CPUs: the most any of its zones lists. */
        for (const char *p = text, *next; *p; p = next) {
                const char *eol = strchrnul(p, '\n');
                unsigned n;

                next = *eol ? eol + 1 : eol;
                if (startswith(p, "Node ") && sscanf(p, "Node %u,", &n) == 1) {
                        node_cpus = MAX(node_cpus, zone_cpus);
                        zone_cpus = 0;
                        if (in_node && n != node) {
                                cpus += node_cpus;
                                node_cpus = 0;
                        }
                        node = n;
                        in_node = true;
                } else if (in_node && startswith(p + strspn(p, " \t"), "cpu:"))
                        zone_cpus++;
        }
        cpus += MAX(node_cpus, zone_cpus);
        if (cpus == 0)
                return -EBADMSG;
        *ret_pages = cpus * VMSTAT_THRESHOLD_MAX;
        return 0;
}

int meminfo_drift_load(int root_fd, uint64_t *ret_bytes) {
        _cleanup_free_ char *buf = NULL;
        long page = sysconf(_SC_PAGESIZE);
        uint64_t pages;
        int r;

        if (page <= 0)
                return -EINVAL;
        r = read_full_file_at(root_fd, "proc/zoneinfo", ZONEINFO_MAX_BYTES, &buf, NULL);
        if (r < 0)
                return r;
        r = meminfo_drift_parse(buf, &pages);
        if (r < 0)
                return r;
        if (pages > UINT64_MAX / (uint64_t) page)
                return -ERANGE;
        *ret_bytes = pages * (uint64_t) page;
        return 0;
}
