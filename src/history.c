/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "history.h"
#include "shared/fileio.h"
#include "shared/hexdecoct.h"
#include "shared/json-util.h"
#include "shared/parse-util.h"
#include "shared/sort-util.h"
#include "shared/strv.h"

void cycle_record_done(CycleRecord *c) {
        if (!c)
                return;
        run_record_done(&c->unit);
        run_record_done(&c->late);
        *c = (CycleRecord) {};
}

void cycle_record_array_free(CycleRecord *a, size_t n) {
        for (size_t i = 0; a && i < n; i++)
                cycle_record_done(&a[i]);
        free(a);
}

SleepCycle cycle_record_view(const CycleRecord *c) {
        return (SleepCycle) { .unit = c->has_unit ? &c->unit : NULL, .late = c->has_late ? &c->late : NULL };
}

const RunRecord *cycle_record_pass(const CycleRecord *c, const char *pass) {
        if (streq(pass, "unit"))
                return c->has_unit ? &c->unit : NULL;
        return c->has_late ? &c->late : NULL;
}

usec_t cycle_record_start(const CycleRecord *c) {
        SleepCycle v = cycle_record_view(c);

        return v.unit || v.late ? sleep_cycle_start(&v) : 0;
}

/* A deep copy through the record schema (what the history stores is what state stores), with the
 * mounts that fit half of HISTORY_FILE_MAX (run_record_trim(): a pass's record may hold up to
 * STATE_MOUNTS_BYTES_MAX of them, which any user can fill: review AM, AM-2). */
static int record_copy(const RunRecord *r, RunRecord *ret) {
        _cleanup_json_ json_object *o = NULL;
        int k;

        k = run_record_to_json(r, &o);
        if (k >= 0)
                k = run_record_from_json(o, ret);
        if (k >= 0 && (k = run_record_trim(ret, HISTORY_FILE_MAX / 2)) < 0)
                run_record_done(ret);
        return k;
}

int cycle_record_from_cycle(const SleepCycle *c, const char *boot_id, usec_t resumed_realtime,
                            CycleRecord *ret) {
        _cleanup_(cycle_record_done) CycleRecord x = {};
        int k;

        if (!c->unit && !c->late)
                return -EINVAL;
        if (boot_id && id128_string_valid(boot_id))
                memcpy(x.boot_id, boot_id, 33);
        x.resumed_realtime = resumed_realtime;
        if (c->unit) {
                k = record_copy(c->unit, &x.unit);
                if (k < 0)
                        return k;
                x.has_unit = true;
        }
        if (c->late) {
                k = record_copy(c->late, &x.late);
                if (k < 0)
                        return k;
                x.has_late = true;
        }
        *ret = x;
        x = (CycleRecord) {};
        return 0;
}

int cycle_record_to_json_string(const CycleRecord *c, char **ret) {
        _cleanup_json_ json_object *o = json_object_new_object(), *unit = NULL, *late = NULL;
        int k;

        if (!o)
                return -ENOMEM;
        if (!c->has_unit && !c->has_late)
                return -EINVAL;
        if ((c->has_unit && (k = run_record_to_json(&c->unit, &unit)) < 0) ||
            (c->has_late && (k = run_record_to_json(&c->late, &late)) < 0))
                return k;
        if ((k = json_add_string(o, "boot_id", c->boot_id)) < 0 ||
            (k = json_add_u64(o, "resumed_realtime", c->resumed_realtime)) < 0 ||
            (k = c->has_unit ? json_add(o, "unit", TAKE_PTR(unit)) : json_add_null(o, "unit")) < 0 ||
            (k = c->has_late ? json_add(o, "late", TAKE_PTR(late)) : json_add_null(o, "late")) < 0)
                return k;
        return json_to_string_dup(o, JSON_FORMAT_SHORT, ret);
}

static int pass_from_json(json_object *o, const char *key, RunRecord *ret, bool *ret_has) {
        json_object *v;
        int k;

        k = json_get_object(o, key, JSON_OPTIONAL, &v);
        if (k < 0)
                return k;
        *ret_has = k > 0;
        return k > 0 ? run_record_from_json(v, ret) : 0;
}

int cycle_record_from_json_string(const char *text, CycleRecord *ret) {
        _cleanup_json_ json_object *o = NULL;
        _cleanup_(cycle_record_done) CycleRecord x = {};
        _cleanup_free_ char *boot = NULL;
        int k;

        k = json_parse_strict(text, strlen(text), HISTORY_FILE_MAX, 64, &o);
        if (k < 0)
                return k;
        if (!json_object_is_type(o, json_type_object) ||
            json_get_string(o, "boot_id", JSON_OPTIONAL, 32, &boot) < 0 ||
            (boot && *boot && !id128_string_valid(boot)) ||
            json_get_u64(o, "resumed_realtime", JSON_OPTIONAL, 0, &x.resumed_realtime) < 0 ||
            pass_from_json(o, "unit", &x.unit, &x.has_unit) < 0 ||
            pass_from_json(o, "late", &x.late, &x.has_late) < 0 || (!x.has_unit && !x.has_late))
                return -EBADMSG;
        if (boot)
                memcpy(x.boot_id, boot, strlen(boot) + 1);
        *ret = x;
        x = (CycleRecord) {};
        return 0;
}

/* ---- the directory ---------------------------------------------------------------------------- */

typedef struct Entry {
        char *name;
        usec_t start;
        off_t size;
} Entry;

static void entries_free(Entry *e, size_t n) {
        for (size_t i = 0; e && i < n; i++)
                free(e[i].name);
        free(e);
}

static int cmp_entry_newest(const Entry *a, const Entry *b) {
        int c = CMP(b->start, a->start);

        return c ? c : strcmp(b->name, a->name);
}

/* Our files: "<digits>-<32 hex>.json". */
static bool entry_name(const char *name, usec_t *ret_start) {
        const char *dash = strchr(name, '-');
        _cleanup_free_ char *num = NULL;
        size_t len = strlen(name);

        if (!dash || dash == name || len != (size_t) (dash - name) + 1 + 32 + 5 ||
            !streq(name + len - 5, ".json"))
                return false;
        num = strndup(name, dash - name);
        return num && safe_atou64(num, ret_start) >= 0;
}

/* The history files, newest first. */
static int entries_list(int dir_fd, Entry **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        Entry *e = NULL;
        size_t n = 0;
        struct dirent *de;
        int k;

        k = opendir_at(dir_fd, HISTORY_SUBDIR, &d);
        if (k == -ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (k < 0)
                return k;
        while ((de = readdir(d))) {
                struct stat st;
                usec_t start;
                Entry *t;

                if (!entry_name(de->d_name, &start) ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (n >= 4 * HISTORY_CYCLES_MAX)
                        break; /* bounded: more than we ever keep means someone else writes here */
                t = realloc(e, (n + 1) * sizeof(Entry));
                if (!t || !(t[n].name = strdup(de->d_name))) {
                        entries_free(t ? t : e, n);
                        return -ENOMEM;
                }
                e = t;
                e[n].start = start;
                e[n++].size = st.st_size;
        }
        typesafe_qsort(e, n, cmp_entry_newest);
        *ret = e;
        *ret_n = n;
        return 0;
}

static int history_prune(int dir_fd) {
        _cleanup_close_ int fd = -EBADF;
        Entry *e = NULL;
        size_t n = 0;
        uint64_t bytes = 0;
        int k;

        k = entries_list(dir_fd, &e, &n);
        if (k < 0)
                return k;
        fd = openat(dir_fd, HISTORY_SUBDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (size_t i = 0; fd >= 0 && i < n; i++) {
                bytes += (uint64_t) e[i].size;
                if (i >= HISTORY_CYCLES_MAX || bytes > HISTORY_BYTES_MAX)
                        (void) unlinkat(fd, e[i].name, 0);
        }
        entries_free(e, n);
        return fd < 0 ? negative_errno() : 0;
}

int history_append(int dir_fd, const CycleRecord *c) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        char name[128];
        int k;

        k = cycle_record_to_json_string(c, &text);
        if (k < 0)
                return k;
        if (strlen(text) > HISTORY_FILE_MAX)
                return -E2BIG;
        k = mkdirat_public(dir_fd, HISTORY_SUBDIR);
        if (k < 0)
                return k;
        fd = openat(dir_fd, HISTORY_SUBDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        snprintf(name, sizeof name, "%llu-%s.json", (unsigned long long) cycle_record_start(c),
                 *c->boot_id ? c->boot_id : "00000000000000000000000000000000");
        if (faccessat(fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return 0;
        k = write_file_atomic_at(fd, name, text, strlen(text));
        if (k < 0)
                return k;
        (void) history_prune(dir_fd);
        return 1;
}

int history_load(int dir_fd, size_t max, CycleRecord **ret, size_t *ret_n, size_t *ret_n_corrupt) {
        Entry *e = NULL;
        CycleRecord *c = NULL;
        size_t n = 0, n_c = 0, bad = 0;
        _cleanup_close_ int fd = -EBADF;
        int k;

        k = entries_list(dir_fd, &e, &n);
        if (k < 0)
                return k;
        if (n > 0) {
                fd = openat(dir_fd, HISTORY_SUBDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                c = calloc(MIN(n, max), sizeof(CycleRecord));
                if (fd < 0 || !c) {
                        entries_free(e, n);
                        free(c);
                        return fd < 0 ? negative_errno() : -ENOMEM;
                }
        }
        for (size_t i = 0; i < n && n_c < max; i++) {
                _cleanup_free_ char *text = NULL;
                size_t size;

                if (read_full_file_at(fd, e[i].name, HISTORY_FILE_MAX, &text, &size) < 0 ||
                    strlen(text) != size || cycle_record_from_json_string(text, &c[n_c]) < 0) {
                        bad++;
                        continue;
                }
                n_c++;
        }
        entries_free(e, n);
        *ret = c;
        *ret_n = n_c;
        if (ret_n_corrupt)
                *ret_n_corrupt = bad;
        return 0;
}

/* ---- statistics ------------------------------------------------------------------------------- */

usec_t percentile_sorted(const usec_t *v, size_t n, unsigned pct) {
        size_t rank;

        if (n == 0)
                return 0;
        rank = (n * pct + 99) / 100; /* ceil(n * pct / 100), 1-based */
        return v[rank == 0 ? 0 : MIN(rank, n) - 1];
}

static int cmp_usec(const usec_t *a, const usec_t *b) {
        return CMP(*a, *b);
}

static MountStats *stats_find(MountStats *s, size_t n, const char *pass, const RunMount *m) {
        for (size_t i = 0; i < n; i++)
                if (streq(s[i].pass, pass) && s[i].namespace_ino == m->namespace_ino &&
                    streq(s[i].mount_point, m->mount_point))
                        return &s[i];
        return NULL;
}

/* Pass 1 counts and collects the keys; the durations of one key are gathered again for its
 * percentiles (n_keys × cycles, both bounded). */
static void stats_fill(MountStats *s, const CycleRecord *cycles, size_t n, usec_t *buf) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                const RunRecord *r = cycle_record_pass(&cycles[i], s->pass);

                for (size_t j = 0; r && j < r->n_mounts; j++) {
                        const RunMount *m = &r->mounts[j];

                        if (!streq(m->action, "sync") || m->namespace_ino != s->namespace_ino ||
                            !streq(m->mount_point, s->mount_point))
                                continue;
                        buf[k++] = m->duration;
                        break; /* once per cycle */
                }
        }
        typesafe_qsort(buf, k, cmp_usec);
        s->min = k ? buf[0] : 0;
        s->p50 = percentile_sorted(buf, k, 50);
        s->p95 = percentile_sorted(buf, k, 95);
        s->max = k ? buf[k - 1] : 0;
}

/* Whether r->mounts[j] is the first synced entry of its (namespace, mount point) in r. */
static bool first_in_record(const RunRecord *r, size_t j) {
        for (size_t i = 0; i < j; i++)
                if (streq(r->mounts[i].action, "sync") &&
                    r->mounts[i].namespace_ino == r->mounts[j].namespace_ino &&
                    streq(r->mounts[i].mount_point, r->mounts[j].mount_point))
                        return false;
        return true;
}

int history_mount_stats(const CycleRecord *cycles, size_t n, MountStats **ret, size_t *ret_n) {
        _cleanup_free_ MountStats *s = NULL;
        _cleanup_free_ usec_t *buf = NULL;
        size_t n_s = 0;

        buf = calloc(n ? n : 1, sizeof(usec_t));
        if (!buf)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                for (unsigned p = 0; p < 2; p++) {
                        const char *pass = p == 0 ? "unit" : "late";
                        const RunRecord *r = cycle_record_pass(&cycles[i], pass);

                        for (size_t j = 0; r && j < r->n_mounts; j++) {
                                const RunMount *m = &r->mounts[j];
                                MountStats *x;

                                if (!streq(m->action, "sync"))
                                        continue;
                                x = stats_find(s, n_s, pass, m);
                                if (!x) {
                                        MountStats *t = realloc(s, (n_s + 1) * sizeof(MountStats));

                                        if (!t)
                                                return -ENOMEM;
                                        s = t;
                                        x = &s[n_s++];
                                        *x = (MountStats) { .pass = pass,
                                                            .mount_point = m->mount_point,
                                                            .namespace_ino = m->namespace_ino };
                                } else if (!first_in_record(r, j))
                                        continue;
                                x->n++;
                                x->n_synced += streq(m->outcome, "synced");
                                x->n_timeout += streq(m->outcome, "timeout");
                                x->n_error += streq(m->outcome, "error");
                        }
                }
        for (size_t i = 0; i < n_s; i++)
                stats_fill(&s[i], cycles, n, buf);
        *ret = TAKE_PTR(s);
        *ret_n = n_s;
        return 0;
}

/* ---- what the plan learns --------------------------------------------------------------------- */

int history_learned_format(const MountStats *s, size_t n, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return -ENOMEM;
        fputs(HISTORY_LEARNED_HEADER "\n", f);
        for (size_t i = 0, k = 0, total = strlen(HISTORY_LEARNED_HEADER "\n");
             i < n && k < HISTORY_LEARNED_MAX; i++) {
                _cleanup_free_ char *hex = NULL;
                size_t len;
                int w;

                if (s[i].n_synced == 0 || !STR_IN_SET(s[i].pass, "unit", "late"))
                        continue;
                len = strlen(s[i].mount_point);
                if (len == 0 || len > STATE_STRING_MAX) /* its own estimate stands */
                        continue;
                /* A line that would take the file past what a pass reads (HISTORY_FILE_MAX) is left
                 * out: a file over it would teach nothing at all. 4 fields of at most 20 characters. */
                if (total + 4 * 21 + 2 * len + 1 > HISTORY_FILE_MAX)
                        continue;
                hex = hexmem(s[i].mount_point, len);
                if (!hex) {
                        fclose(f);
                        return -ENOMEM;
                }
                w = fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n", s[i].pass, s[i].namespace_ino,
                            (uint64_t) s[i].min, (uint64_t) s[i].p50, hex);
                if (w > 0)
                        total += (size_t) w;
                k++;
        }
        if (memstream_finish(f, &buf) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

void history_learned_done(HistoryLearned *h) {
        if (!h)
                return;
        free(h->l);
        strv_free(h->strings);
        *h = (HistoryLearned) {};
}

/* The digits at *p up to the next space as a number; *p moves past that space. */
static int learned_u64(const char **p, const char *end, uint64_t *ret) {
        const char *e = memchr(*p, ' ', (size_t) (end - *p));

        if (!e || safe_atou64_n(*p, (size_t) (e - *p), ret) < 0)
                return -EBADMSG;
        *p = e + 1;
        return 0;
}

/* One line (without its newline): PASS NAMESPACE_INO MIN_USEC P50_USEC HEX_MOUNT_POINT. The mount
 * point only for the pass asked for (*ret_mount_point NULL for the other). */
static int learned_line_parse(const char *p, const char *end, const char *pass, PlanLearned *ret,
                              char **ret_mount_point) {
        _cleanup_free_ char *mp = NULL;
        const char *sp = memchr(p, ' ', (size_t) (end - p));
        PlanLearned x = {};
        bool ours;
        int r;

        if (!sp)
                return -EBADMSG;
        if ((size_t) (sp - p) == 4 && memcmp(p, "unit", 4) == 0)
                ours = streq(pass, "unit");
        else if ((size_t) (sp - p) == 4 && memcmp(p, "late", 4) == 0)
                ours = streq(pass, "late");
        else
                return -EBADMSG;
        p = sp + 1;
        if (learned_u64(&p, end, &x.namespace_ino) < 0 || learned_u64(&p, end, &x.min) < 0 ||
            learned_u64(&p, end, &x.p50) < 0)
                return -EBADMSG;
        if (p == end || (size_t) (end - p) > 2 * (size_t) STATE_STRING_MAX ||
            memchr(p, ' ', (size_t) (end - p)))
                return -EBADMSG;
        r = unhexstr(p, (size_t) (end - p), &mp);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;
        *ret = x;
        *ret_mount_point = ours ? TAKE_PTR(mp) : NULL;
        return 0;
}

int history_learned_parse(const char *text, const char *pass, HistoryLearned *ret) {
        _cleanup_(history_learned_done) HistoryLearned h = {};
        static const char header[] = HISTORY_LEARNED_HEADER "\n";
        size_t len = strnlen(text, (size_t) HISTORY_FILE_MAX + 1), n_strings = 0, n_lines = 0;
        const char *p = text, *end = text + len;
        int r;

        if (len > HISTORY_FILE_MAX)
                return -EFBIG;
        if (len < sizeof header - 1 || memcmp(p, header, sizeof header - 1) != 0)
                return -EBADMSG;
        p += sizeof header - 1;
        for (const char *q = p; q < end && (q = memchr(q, '\n', (size_t) (end - q))); q++)
                n_lines++;
        if (n_lines > HISTORY_LEARNED_MAX)
                return -EBADMSG;
        h.l = calloc(MAX(n_lines, 1U), sizeof(PlanLearned));
        if (!h.l)
                return -ENOMEM;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                _cleanup_free_ char *mp = NULL;
                PlanLearned x;

                /* every line ends with its newline: a cut file is no summary */
                if (!nl)
                        return -EBADMSG;
                r = learned_line_parse(p, nl, pass, &x, &mp);
                if (r < 0)
                        return r;
                p = nl + 1;
                if (!mp)
                        continue;
                r = strv_consume(&h.strings, &n_strings, TAKE_PTR(mp));
                if (r < 0)
                        return r;
                x.mount_point = h.strings[n_strings - 1];
                h.l[h.n++] = x;
        }
        *ret = h;
        h = (HistoryLearned) {};
        return 0;
}

static int cmp_unsigned(const unsigned *a, const unsigned *b) {
        return CMP(*a, *b);
}

EtaAccuracy history_eta_accuracy(const RunRecord *r, size_t n) {
        unsigned ratio[STATE_HISTORY_MAX * 8];
        EtaAccuracy a = {};

        for (size_t i = 0; i < n && a.n < ELEMENTSOF(ratio); i++) {
                uint64_t q;

                if (r[i].eta == 0 || r[i].t_execute == 0)
                        continue;
                q = r[i].t_execute > UINT64_MAX / 1000 ? UINT32_MAX : r[i].t_execute * 1000 / r[i].eta;
                ratio[a.n++] = (unsigned) MIN(q, (uint64_t) UINT32_MAX);
        }
        if (a.n == 0)
                return a;
        typesafe_qsort(ratio, a.n, cmp_unsigned);
        a.min = ratio[0];
        a.median = ratio[(a.n - 1) / 2];
        a.max = ratio[a.n - 1];
        return a;
}
