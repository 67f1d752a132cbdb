/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/history: the persistent cycle history (JSON round trip, append, bounds, a reboot,
 * corrupt files) and its statistics.
 */

#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "history.h"
#include "shared/fileio.h"
#include "tests.h"

#define T0 ((usec_t) 1764576000 * USEC_PER_SEC)
#define BOOT1 "0123456789abcdef0123456789abcdef"
#define BOOT2 "fedcba9876543210fedcba9876543210"

static RunMount mounts[2];

static RunRecord rec(const char *trigger, usec_t start, usec_t d_root, const char *outcome) {
        mounts[0] = (RunMount) { .mount_point = (char *) "/",
                                 .fstype = (char *) "ext4",
                                 .action = (char *) "sync",
                                 .outcome = (char *) outcome,
                                 .duration = d_root };
        mounts[1] = (RunMount) { .mount_point = (char *) "/proc",
                                 .fstype = (char *) "proc",
                                 .action = (char *) "skip",
                                 .outcome = (char *) "skipped" };
        return (RunRecord) { .started_realtime = start,
                             .duration = d_root + USEC_PER_MSEC,
                             .result = (char *) "success",
                             .trigger = (char *) trigger,
                             .sleep_action = (char *) "suspend",
                             .deadline = 30 * USEC_PER_SEC,
                             .mounts = mounts,
                             .n_mounts = 2 };
}

/* A cycle starting at start whose unit's pass synced / in d_root. */
static void make(CycleRecord *ret, const char *boot, usec_t start, usec_t d_root, const char *outcome) {
        RunRecord u = rec("unit", start, d_root, outcome);
        SleepCycle c = { .unit = &u };

        ASSERT_OK(cycle_record_from_cycle(&c, boot, start + 3600 * USEC_PER_SEC, ret));
        /* the late pass separately: rec() reuses the static mounts[] */
        {
                RunRecord l = rec("hook", start + USEC_PER_SEC, 2 * USEC_PER_MSEC, "synced");
                SleepCycle cl = { .late = &l };
                CycleRecord x = {};

                ASSERT_OK(cycle_record_from_cycle(&cl, boot, 0, &x));
                ret->late = x.late;
                ret->has_late = true;
                x.late = (RunRecord) {};
                x.has_late = false;
                cycle_record_done(&x);
        }
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

TEST(json) {
        _cleanup_(cycle_record_done) CycleRecord c = {}, back = {};
        _cleanup_free_ char *text = NULL, *again = NULL;
        CycleRecord empty = {};

        make(&c, BOOT1, T0, 250 * USEC_PER_MSEC, "synced");
        ASSERT_OK(cycle_record_to_json_string(&c, &text));
        ASSERT_OK(cycle_record_from_json_string(text, &back));
        ASSERT_STREQ(back.boot_id, BOOT1);
        ASSERT_U64_EQ(back.resumed_realtime, T0 + 3600 * USEC_PER_SEC);
        ASSERT_TRUE(back.has_unit && back.has_late);
        ASSERT_EQ(back.unit.n_mounts, 2U);
        ASSERT_STREQ(back.late.trigger, "hook");
        ASSERT_OK(cycle_record_to_json_string(&back, &again));
        ASSERT_STREQ(text, again);

        ASSERT_ERR(cycle_record_to_json_string(&empty, &again), EINVAL);

        /* A cycle without its unit's pass (aged out of /run) round-trips too. */
        {
                _cleanup_free_ char *t = NULL;
                _cleanup_(cycle_record_done) CycleRecord late_only = {};

                run_record_done(&back.unit);
                back.has_unit = false;
                ASSERT_OK(cycle_record_to_json_string(&back, &t));
                ASSERT_OK(cycle_record_from_json_string(t, &late_only));
                ASSERT_TRUE(!late_only.has_unit && late_only.has_late);
                ASSERT_TRUE(strstr(t, "\"unit\":null") != NULL);
        }
        ASSERT_ERR(cycle_record_from_json_string("{\"unit\":null,\"late\":null}", &back), EBADMSG);
        ASSERT_ERR(cycle_record_from_json_string("{\"boot_id\":\"xyz\",\"unit\":{}}", &back), EBADMSG);
        ASSERT_ERR(cycle_record_from_json_string("[1]", &back), EBADMSG);
        ASSERT_ERR(cycle_record_from_json_string("{\"resumed_realtime\":-1,\"unit\":{}}", &back), EBADMSG);
}

TEST(append_load_prune_reboot) {
        char dir[] = "/tmp/test-history.XXXXXX";
        _cleanup_close_ int fd = -EBADF;
        CycleRecord *got = NULL;
        size_t n = 0, bad = 0;
        struct stat st;

        ASSERT_TRUE(test_mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);

        /* Empty. */
        ASSERT_OK(history_load(fd, 10, &got, &n, &bad));
        ASSERT_EQ(n, 0U);
        free(got);

        /* Boot 1, then a "reboot": boot 2 (the /run records are gone, these stay). Written under
         * the unit's UMask=0027 and still readable by everyone. */
        mode_t old_umask = umask(0027);
        for (unsigned i = 0; i < HISTORY_CYCLES_MAX + 6; i++) {
                _cleanup_(cycle_record_done) CycleRecord c = {};

                make(&c, i < 40 ? BOOT1 : BOOT2, T0 + i * 7200 * USEC_PER_SEC, (i + 1) * USEC_PER_MSEC,
                     "synced");
                ASSERT_EQ(history_append(fd, &c), 1);
                if (i == 3)
                        ASSERT_EQ(history_append(fd, &c),
                                  0); /* ExecStopPost= again (a restart of the unit) */
        }
        ASSERT_TRUE(fstatat(fd,
                            "cycles/"
                            "1764576000000000-" BOOT1 ".json",
                            &st, 0) < 0); /* pruned */
        {
                char name[128];

                snprintf(name, sizeof name, "cycles/%llu-%s.json",
                         (unsigned long long) (T0 + (HISTORY_CYCLES_MAX + 5) * 7200 * USEC_PER_SEC), BOOT2);
                ASSERT_OK(fstatat(fd, name, &st, 0) < 0 ? -errno : 0);
                ASSERT_EQ(st.st_mode & 0777, 0644U);
                ASSERT_OK(fstatat(fd, "cycles", &st, 0) < 0 ? -errno : 0);
                ASSERT_EQ(st.st_mode & 0777, 0755U);
        }
        umask(old_umask);
        ASSERT_OK(write_file_atomic_at(fd, "cycles/1-" BOOT1 ".json", "{garbage", 8));

        ASSERT_OK(history_load(fd, 1000, &got, &n, &bad));
        ASSERT_EQ(n, HISTORY_CYCLES_MAX);
        ASSERT_EQ(bad, 1U);
        ASSERT_STREQ(got[0].boot_id, BOOT2);
        ASSERT_STREQ(got[n - 1].boot_id, BOOT1); /* cycles of the earlier boot survive */
        ASSERT_U64_EQ(cycle_record_start(&got[0]), T0 + (HISTORY_CYCLES_MAX + 5) * 7200 * USEC_PER_SEC);
        ASSERT_TRUE(cycle_record_start(&got[0]) > cycle_record_start(&got[1]));
        cycle_record_array_free(got, n);

        ASSERT_OK(history_load(fd, 5, &got, &n, NULL));
        ASSERT_EQ(n, 5U);
        cycle_record_array_free(got, n);
        ASSERT_TRUE(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
}

TEST(stats) {
        /* 20 cycles: / took 1..20 ms, one timed out, one error. */
        CycleRecord c[20] = {};
        _cleanup_free_ MountStats *s = NULL;
        size_t n = 0;

        for (unsigned i = 0; i < ELEMENTSOF(c); i++)
                make(&c[i], BOOT1, T0 + i * 7200 * USEC_PER_SEC, (20 - i) * USEC_PER_MSEC,
                     i == 0   ? "timeout"
                     : i == 1 ? "error"
                              : "synced");
        ASSERT_OK(history_mount_stats(c, ELEMENTSOF(c), &s, &n));
        ASSERT_EQ(n, 2U); /* "/" in the unit's and in the late pass; /proc is never synced */
        ASSERT_STREQ(s[0].pass, "unit");
        ASSERT_STREQ(s[0].mount_point, "/");
        ASSERT_EQ(s[0].n, 20U);
        ASSERT_U64_EQ(s[0].p50, 10 * USEC_PER_MSEC);
        ASSERT_U64_EQ(s[0].p95, 19 * USEC_PER_MSEC);
        ASSERT_U64_EQ(s[0].max, 20 * USEC_PER_MSEC);
        ASSERT_EQ(s[0].n_synced, 18U);
        ASSERT_EQ(s[0].n_timeout, 1U);
        ASSERT_EQ(s[0].n_error, 1U);
        ASSERT_STREQ(s[1].pass, "late");
        ASSERT_U64_EQ(s[1].max, 2 * USEC_PER_MSEC);
        for (unsigned i = 0; i < ELEMENTSOF(c); i++)
                cycle_record_done(&c[i]);

        usec_t v[] = { 1, 2, 3, 4 };
        ASSERT_U64_EQ(percentile_sorted(v, 4, 50), 2);
        ASSERT_U64_EQ(percentile_sorted(v, 4, 95), 4);
        ASSERT_U64_EQ(percentile_sorted(v, 1, 50), 1);
        ASSERT_U64_EQ(percentile_sorted(v, 0, 50), 0);
}

TEST(learned) {
        MountStats s[] = {
                { .pass = "unit", .mount_point = "/", .n = 3, .min = 10, .p50 = 20, .n_synced = 3 },
                { .pass = "late", .mount_point = "/", .n = 3, .min = 1, .p50 = 2, .n_synced = 3 },
                { .pass = "unit",
                  .mount_point = "/mnt/a\nb\xff",
                  .namespace_ino = 9,
                  .n = 1,
                  .min = 5,
                  .p50 = 5,
                  .n_synced = 1 },
                { .pass = "unit", .mount_point = "/hung", .n = 2, .n_timeout = 2 }, /* never synced */
        };
        _cleanup_free_ char *text = NULL;
        _cleanup_(history_learned_done) HistoryLearned u = {}, l = {};
        HistoryLearned bad = {};

        ASSERT_OK(history_learned_format(s, ELEMENTSOF(s), &text));
        ASSERT_OK(history_learned_parse(text, "unit", &u));
        ASSERT_EQ(u.n, 2U);
        ASSERT_STREQ(u.l[0].mount_point, "/");
        ASSERT_U64_EQ(u.l[0].min, 10);
        ASSERT_U64_EQ(u.l[0].p50, 20);
        ASSERT_STREQ(u.l[1].mount_point, "/mnt/a\nb\xff"); /* raw bytes survive */
        ASSERT_U64_EQ(u.l[1].namespace_ino, 9);
        ASSERT_OK(history_learned_parse(text, "late", &l));
        ASSERT_EQ(l.n, 1U);
        ASSERT_U64_EQ(l.l[0].min, 1);
        ASSERT_STREQ(text, HISTORY_LEARNED_HEADER "\n"
                                                  "unit 0 10 20 2f\n"
                                                  "late 0 1 2 2f\n"
                                                  "unit 9 5 5 2f6d6e742f610a62ff\n");

        /* the JSON form of before, and anything cut or malformed: no summary (the plan's own
         * estimates stand) */
        static const char *const bad_texts[] = {
                "{\"mounts\":[{\"pass\":\"unit\",\"mount_point\":\"/\",\"namespace_ino\":0,"
                "\"min_usec\":1,\"p50_usec\":2}]}",
                "",
                HISTORY_LEARNED_HEADER,                                         /* its newline cut */
                "suspend-sync eta-learned 2\nunit 0 1 2 2f\n",                  /* a later format */
                HISTORY_LEARNED_HEADER "\nunit 0 1 2 2f",                       /* the last line cut */
                HISTORY_LEARNED_HEADER "\nboth 0 1 2 2f\n",                     /* no such pass */
                HISTORY_LEARNED_HEADER "\nunit 0 1 2\n",                        /* four fields */
                HISTORY_LEARNED_HEADER "\nunit 0 1 2 2f 2f\n",                  /* six */
                HISTORY_LEARNED_HEADER "\nunit  0 1 2 2f\n",                    /* an empty field */
                HISTORY_LEARNED_HEADER "\nunit -1 1 2 2f\n",                    /* not a number */
                HISTORY_LEARNED_HEADER "\nunit 0 18446744073709551616 2 2f\n",  /* out of range */
                HISTORY_LEARNED_HEADER "\nunit 0 000000000000000000001 2 2f\n", /* 21 digits */
                HISTORY_LEARNED_HEADER "\nunit 0 1 2 2\n",                      /* odd hex */
                HISTORY_LEARNED_HEADER "\nunit 0 1 2 2g\n",                     /* not hex */
                HISTORY_LEARNED_HEADER "\nunit 0 1 2 2f00\n",                   /* a NUL byte */
                HISTORY_LEARNED_HEADER "\nunit 0 1 2 \n",                       /* no mount point */
                HISTORY_LEARNED_HEADER "\nlate 0 1 2 2g\n",                     /* the other pass's too */
        };
        for (size_t i = 0; i < ELEMENTSOF(bad_texts); i++) {
                fprintf(stderr, "bad text %zu\n", i);
                ASSERT_ERR(history_learned_parse(bad_texts[i], "unit", &bad), EBADMSG);
        }

        /* an empty summary is one; the largest is taken whole, one line more is not */
        ASSERT_OK(history_learned_parse(HISTORY_LEARNED_HEADER "\n", "unit", &bad));
        ASSERT_EQ(bad.n, 0U);
        history_learned_done(&bad);
}

/* HISTORY_LEARNED_MAX lines are read, one more is refused; what the writer leaves out (never synced,
 * an empty or over-long mount point) is not in the file. */
TEST(learned_bounds) {
        _cleanup_free_ MountStats *s = calloc(HISTORY_LEARNED_MAX + 3, sizeof(MountStats));
        _cleanup_free_ char *text = NULL, *longer = NULL, *huge = malloc(STATE_STRING_MAX + 2);
        _cleanup_(history_learned_done) HistoryLearned h = {};
        HistoryLearned bad = {};

        ASSERT_TRUE(s);
        ASSERT_TRUE(huge);
        memset(huge, 'x', STATE_STRING_MAX + 1);
        huge[0] = '/';
        huge[STATE_STRING_MAX + 1] = 0;
        s[0] = (MountStats) { .pass = "unit", .mount_point = huge, .n_synced = 1 };
        s[1] = (MountStats) { .pass = "unit", .mount_point = "", .n_synced = 1 };
        for (size_t i = 2; i < HISTORY_LEARNED_MAX + 3; i++)
                s[i] = (MountStats) { .pass = "late", .mount_point = "/m", .min = i, .p50 = i, .n_synced = 1 };
        ASSERT_OK(history_learned_format(s, HISTORY_LEARNED_MAX + 3, &text));
        ASSERT_OK(history_learned_parse(text, "late", &h));
        ASSERT_EQ(h.n, (size_t) HISTORY_LEARNED_MAX);
        ASSERT_U64_EQ(h.l[0].min, 2);
        ASSERT_OK(history_learned_parse(text, "unit", &bad)); /* neither of the two */
        ASSERT_EQ(bad.n, 0U);
        history_learned_done(&bad);

        ASSERT_OK(asprintf(&longer, "%slate 0 1 1 2f\n", text) >= 0 ? 0 : -ENOMEM);
        ASSERT_ERR(history_learned_parse(longer, "late", &bad), EBADMSG);
}

/* A mount point of STATE_STRING_MAX bytes is read back, a longer one's hex is refused; and however
 * long the mount points, the file the writer leaves is one a pass reads (at most HISTORY_FILE_MAX):
 * 200 of 16 KiB would be 6.4 MiB of hex, and then nothing at all would be learned. */
TEST(learned_size) {
        _cleanup_free_ MountStats *s = calloc(200, sizeof(MountStats));
        _cleanup_free_ char *text = NULL, *longest = malloc(STATE_STRING_MAX + 1), *line = NULL;
        _cleanup_(history_learned_done) HistoryLearned h = {};
        HistoryLearned bad = {};
        size_t hex = 2 * (size_t) STATE_STRING_MAX, prefix = strlen(HISTORY_LEARNED_HEADER "\nunit 0 1 2 ");

        ASSERT_TRUE(s);
        ASSERT_TRUE(longest);
        memset(longest, 'x', STATE_STRING_MAX);
        longest[0] = '/';
        longest[STATE_STRING_MAX] = 0;
        for (size_t i = 0; i < 200; i++)
                s[i] = (MountStats) {
                        .pass = "unit", .mount_point = longest, .min = i, .p50 = i, .n_synced = 1
                };
        ASSERT_OK(history_learned_format(s, 200, &text));
        ASSERT_TRUE(strlen(text) <= HISTORY_FILE_MAX);
        ASSERT_OK(history_learned_parse(text, "unit", &h));
        ASSERT_TRUE(h.n > 0);
        ASSERT_STREQ(h.l[0].mount_point, longest);

        /* the hex of STATE_STRING_MAX bytes and one byte more, by hand */
        line = malloc(prefix + hex + 4);
        ASSERT_TRUE(line);
        strcpy(line, HISTORY_LEARNED_HEADER "\nunit 0 1 2 ");
        for (size_t i = 0; i < hex + 2; i += 2)
                memcpy(line + prefix + i, "2f", 2);
        strcpy(line + prefix + hex, "\n");
        ASSERT_OK(history_learned_parse(line, "unit", &bad));
        ASSERT_EQ(bad.n, 1U);
        history_learned_done(&bad);
        strcpy(line + prefix + hex, "2f\n");
        ASSERT_ERR(history_learned_parse(line, "unit", &bad), EBADMSG);
}

/* A cycle of two passes whose records hold what a record may (review AM, AM-2: 5000 skipped mounts
 * of another namespace with 4 KiB names, any user's, made every cycle pass HISTORY_FILE_MAX and the
 * history lost the sleep): kept, with the synced mounts, the rest counted. */
TEST(big_passes_kept) {
        char dir[] = "/tmp/test-history.XXXXXX";
        _cleanup_close_ int fd = -EBADF;
        _cleanup_(cycle_record_done) CycleRecord c = {};
        _cleanup_free_ RunMount *ms = calloc(5001, sizeof(RunMount));
        _cleanup_free_ char *name = malloc(4000);
        CycleRecord *got = NULL;
        size_t n = 0;
        RunRecord u = rec("unit", T0, USEC_PER_MSEC, "synced"),
                  l = rec("hook", T0 + USEC_PER_SEC, 0, "synced");
        SleepCycle sc = { .unit = &u, .late = &l };

        ASSERT_TRUE(ms && name);
        memset(name, 'p', 3999);
        name[0] = '/';
        name[3999] = 0;
        ms[0] = mounts[0]; /* "/", synced */
        for (size_t i = 1; i < 5001; i++)
                ms[i] = (RunMount) { .mount_point = name,
                                     .fstype = (char *) "tmpfs",
                                     .action = (char *) "skip",
                                     .outcome = (char *) "skipped",
                                     .namespace_ino = i % 2 ? 4026532301ULL : 0 };
        u.mounts = l.mounts = ms;
        u.n_mounts = l.n_mounts = 5001;
        ASSERT_OK(cycle_record_from_cycle(&sc, BOOT1, T0 + 3600 * USEC_PER_SEC, &c));
        ASSERT_TRUE(c.unit.n_mounts > 1 && c.unit.n_mounts < 5001);
        ASSERT_EQ(c.unit.n_mounts + c.unit.n_mounts_omitted, 5001);
        ASSERT_STREQ(c.unit.mounts[0].mount_point, "/");
        ASSERT_STREQ(c.late.mounts[0].outcome, "synced");

        ASSERT_TRUE(test_mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(history_append(fd, &c), 1);
        ASSERT_OK(history_load(fd, 10, &got, &n, NULL));
        ASSERT_EQ(n, 1U);
        ASSERT_EQ(got[0].late.n_mounts_omitted, c.late.n_mounts_omitted);
        fprintf(stderr, "  kept %zu + %zu of 5001 mounts a pass\n", got[0].unit.n_mounts,
                got[0].late.n_mounts);
        cycle_record_array_free(got, n);
        ASSERT_TRUE(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
}

int main(void) {
        RUN(json);
        RUN(append_load_prune_reboot);
        RUN(stats);
        RUN(learned);
        RUN(learned_bounds);
        RUN(learned_size);
        RUN(big_passes_kept);
        return 0;
}
