/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The streamed record writer (run_record_write_json(), json_stream_*) against the json-c tree it
 * replaces: the same bytes, pretty and short, for records of every shape; and what state_save()
 * leaves on disk.
 */

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/json-util.h"
#include "shared/macro.h"
#include "shared/string-util.h"
#include "state.h"
#include "tests.h"

static char test_root[] = "/tmp/test-state-stream.XXXXXX";

static void fill_mount(RunMount *m, size_t i) {
        static const char *const paths[] = {
                "/",
                "/mnt/a\nb\tc\"d\\e\xff/f",
                "/mnt/ünïcödé",
                "/x/\x01\x7f/y",
                "/srv/data/with/a/long/path",
        };
        char mp[128];

        snprintf(mp, sizeof mp, "%s%s%zu", paths[i % ELEMENTSOF(paths)], i % 3 ? "/" : "", i);
        *m = (RunMount) {
                .mount_point = strdup(mp),
                .fstype = i % 4 == 3 ? NULL : strdup(i % 2 ? "tmpfs" : "ext4"),
                .action = strdup(i % 2 ? "skip" : "sync"),
                .reason = i % 5 == 4 ? NULL : strdup(i % 2 ? "no writeback" : "default"),
                .outcome = strdup(i % 2        ? "skipped"
                                  : i % 7 == 6 ? "error"
                                               : "synced"),
                .duration = i * 1013,
                .start_offset = i % 3 == 1 ? i * 7 : 0,
                .writeback_wait = i % 4 == 2 ? i * 11 : 0,
                .error = i % 7 == 6 ? 5 : 0,
                .abandoned_pid = i % 11 == 10 ? (int) (4000 + i) : 0,
                .namespace_ino = i % 13 == 12 ? 4026532301ULL + i : 0,
        };
        ASSERT_TRUE(m->mount_point && m->action && m->outcome);
}

static void make_record(RunRecord *r, size_t n_mounts, bool complete) {
        static char *why[] = { (char *) "mount namespace mnt:[4026532301]: \xfe", (char *) "second" };

        *r = (RunRecord) {
                .started_realtime = 1764590000123456ULL,
                .duration = 845012,
                .result = strdup("success"),
                .trigger = n_mounts % 2 ? strdup("hook") : NULL,
                .sleep_action = n_mounts % 3 ? strdup("suspend") : NULL,
                .deadline = 5 * USEC_PER_SEC,
                .eta = n_mounts % 2 ? 1234 : 0,
                .t_read = 2100,
                .t_sample = 310,
                .t_plan = 42,
                .t_execute = 840000,
                .t_record = 560,
                .n_mounts = n_mounts,
        };
        if (complete) {
                r->has_complete = true;
                r->incomplete_why = calloc(3, sizeof(char *));
                ASSERT_TRUE(r->incomplete_why);
                for (size_t i = 0; i < 2; i++)
                        r->incomplete_why[i] = strdup(why[i]);
                r->n_incomplete_why = 2;
        }
        if (n_mounts > 0) {
                r->mounts = calloc(n_mounts, sizeof(RunMount));
                ASSERT_TRUE(r->mounts);
        }
        for (size_t i = 0; i < n_mounts; i++)
                fill_mount(&r->mounts[i], i);
}

/* The streamed text against the tree's, both formats, written at once. */
static void check_same(const RunRecord *r) {
        _cleanup_free_ char *tree_pretty = NULL, *tree_short = NULL, *pretty = NULL, *shortform = NULL;
        size_t n_pretty = 0, n_short = 0;
        uint64_t size = 0;
        FILE *fp, *fs;

        ASSERT_OK(run_record_to_json_string(r, true, &tree_pretty));
        ASSERT_OK(run_record_to_json_string(r, false, &tree_short));
        fp = open_memstream(&pretty, &n_pretty);
        fs = open_memstream(&shortform, &n_short);
        ASSERT_TRUE(fp && fs);
        ASSERT_OK(run_record_write_json(r, fp, fs, &size));
        ASSERT_EQ(fclose(fp), 0);
        ASSERT_EQ(fclose(fs), 0);
        ASSERT_EQ(size, strlen(tree_pretty) + 1);
        ASSERT_EQ(n_pretty, strlen(tree_pretty) + 1);
        ASSERT_EQ(n_short, strlen(tree_short) + 1);
        ASSERT_TRUE(memcmp(pretty, tree_pretty, n_pretty - 1) == 0 && pretty[n_pretty - 1] == '\n');
        ASSERT_TRUE(memcmp(shortform, tree_short, n_short - 1) == 0 && shortform[n_short - 1] == '\n');

        /* One format alone gives the same bytes. */
        free(pretty);
        pretty = NULL;
        fp = open_memstream(&pretty, &n_pretty);
        ASSERT_TRUE(fp);
        ASSERT_OK(run_record_write_json(r, fp, NULL, NULL));
        ASSERT_EQ(fclose(fp), 0);
        ASSERT_TRUE(n_pretty == strlen(tree_pretty) + 1 && memcmp(pretty, tree_pretty, n_pretty - 1) == 0);
}

TEST(same_bytes) {
        static const size_t sizes[] = { 0, 1, 2, 3, 13, 1000 };

        for (size_t k = 0; k < ELEMENTSOF(sizes); k++)
                for (int complete = 0; complete <= 1; complete++) {
                        _cleanup_(run_record_done) RunRecord r = {};

                        make_record(&r, sizes[k], complete);
                        check_same(&r);
                }
}

/* Every record fixture that loads (test/fixtures/state/good-*.json). */
TEST(fixtures) {
        _cleanup_close_ int fd = open(FIXTURES_DIR "/state", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = opendir(FIXTURES_DIR "/state");
        struct dirent *de;
        size_t n = 0;

        ASSERT_TRUE(fd >= 0 && d);
        while ((de = readdir(d))) {
                _cleanup_(run_record_done) RunRecord r = {};
                _cleanup_free_ char *text = NULL;

                if (strncmp(de->d_name, "good-", 5) != 0)
                        continue;
                ASSERT_OK(read_full_file_at(fd, de->d_name, STATE_FILE_MAX, &text, NULL));
                ASSERT_OK(run_record_from_json_string(text, &r));
                check_same(&r);
                n++;
        }
        closedir(d);
        ASSERT_TRUE(n >= 5);
}

/* Mounts printed by hand (state.c) against json-c: every byte from 0x01 to 0x7f in each string,
 * multi-byte UTF-8, the largest numbers, every optional member present and absent, errno names; and
 * one string that is not UTF-8 in a record of mounts that are (json-c prints that one). */
TEST(every_byte) {
        _cleanup_(run_record_done) RunRecord r = {};
        char all[128];

        for (int c = 1; c < 128; c++)
                all[c - 1] = (char) c;
        all[127] = 0;
        make_record(&r, 6, true);
        for (size_t i = 0; i < r.n_mounts; i++) {
                RunMount *m = &r.mounts[i];

                free(m->mount_point);
                free(m->reason);
                m->mount_point = strdup(i % 2 ? all : "/mnt/\xc3\xbc\xe2\x82\xac\xf0\x9f\x92\xbe/x y");
                m->reason = i == 3 ? NULL : strdup(all);
                ASSERT_TRUE(m->mount_point && (i == 3 || m->reason));
                m->duration = i == 0 ? UINT64_MAX : i;
                m->start_offset = i == 1 ? UINT64_MAX : i == 4 ? 1 : 0;
                m->writeback_wait = i == 2 ? UINT64_MAX : i == 3 ? 1 : 0;
                m->error = i == 4 ? 4095 : (int) i; /* state.c STATE_ERRNO_MAX */
                m->abandoned_pid = i == 5 ? INT_MAX : 0;
                m->namespace_ino = i == 5 ? UINT64_MAX : 0;
        }
        check_same(&r);
        free(r.mounts[2].fstype);
        r.mounts[2].fstype = strdup("ext4\xff");
        ASSERT_TRUE(r.mounts[2].fstype);
        check_same(&r);
}

/* A refused record writes nothing. */
TEST(refused) {
        _cleanup_(run_record_done) RunRecord r = {};
        _cleanup_free_ char *text = NULL;
        size_t n = 0;
        FILE *f;

        make_record(&r, 5, true);
        free(r.mounts[3].action);
        r.mounts[3].action = NULL;
        f = open_memstream(&text, &n);
        ASSERT_TRUE(f);
        ASSERT_ERR(run_record_write_json(&r, f, NULL, NULL), EINVAL);
        r.mounts[3].action = strdup("sync");
        r.mounts[4].error = -1;
        ASSERT_ERR(run_record_write_json(&r, f, NULL, NULL), EINVAL);
        r.mounts[4].error = 0;
        ASSERT_ERR(run_record_write_json(NULL, f, NULL, NULL), EINVAL);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(n, 0);
}

/* A mount with a string over STATE_STRING_MAX (a mount point any user can make, by mounting on a
 * relative path deep down) is left out and counted, never the whole record refused (review AK). */
TEST(string_too_long_omitted) {
        _cleanup_(run_record_done) RunRecord r = {}, back = {};
        _cleanup_free_ char *text = NULL;
        size_t n = 0;
        FILE *f;

        make_record(&r, 5, true);
        r.n_mounts_omitted = 2; /* carried: a record read back and written again keeps its count */
        free(r.mounts[2].mount_point);
        ASSERT_TRUE(asprintf(&r.mounts[2].mount_point, "/%0*d", (int) STATE_STRING_MAX, 0) > 0);
        f = open_memstream(&text, &n);
        ASSERT_TRUE(f);
        ASSERT_OK(run_record_write_json(&r, f, NULL, NULL));
        ASSERT_EQ(fclose(f), 0);
        ASSERT_OK(run_record_from_json_string(text, &back));
        ASSERT_EQ(back.n_mounts, 4);
        ASSERT_EQ(back.n_mounts_omitted, 3);
        ASSERT_STREQ(back.mounts[1].mount_point, r.mounts[1].mount_point);
        ASSERT_STREQ(back.mounts[2].mount_point, r.mounts[3].mount_point);
        ASSERT_TRUE(strstr(text, "\"mounts_omitted\": 3") != NULL);
}

/* The stream API itself: placeholders at another depth, too few or too many elements. */
TEST(stream_api) {
        _cleanup_json_ json_object *doc = NULL, *full = NULL, *inner = NULL, *a = NULL;
        _cleanup_(json_stream_freep) JsonStream *s = NULL;
        _cleanup_free_ char *text = NULL;
        const char *want;
        size_t n = 0;
        FILE *f;

        /* {"x": {"y": [ 3 elements ], "z": 1}, "w": [[]]} */
        doc = json_object_new_object();
        inner = json_object_new_object();
        ASSERT_OK(json_stream_array_new(3, &a));
        ASSERT_OK(json_add(inner, "y", json_object_get(a)));
        ASSERT_OK(json_add_int(inner, "z", 1));
        ASSERT_OK(json_add(doc, "x", json_object_get(inner)));
        ASSERT_OK(json_add(doc, "w", json_object_new_array()));

        full = json_object_new_object();
        {
                json_object *fi = json_object_new_object(), *fa = json_object_new_array(), *e;

                e = json_object_new_object();
                ASSERT_OK(json_add_string(e, "k", "v\n"));
                ASSERT_OK(json_append(fa, e));
                ASSERT_OK(json_object_array_add(fa, NULL) < 0 ? -ENOMEM : 0); /* prints null */
                ASSERT_OK(json_append(fa, json_object_new_array()));
                ASSERT_OK(json_add(fi, "y", fa));
                ASSERT_OK(json_add_int(fi, "z", 1));
                ASSERT_OK(json_add(full, "x", fi));
                ASSERT_OK(json_add(full, "w", json_object_new_array()));
        }

        for (int pretty = 0; pretty <= 1; pretty++) {
                int flags = pretty ? JSON_FORMAT_PRETTY : JSON_FORMAT_SHORT;
                json_object *y = json_object_object_get(json_object_object_get(full, "x"), "y");

                f = open_memstream(&text, &n);
                ASSERT_TRUE(f);
                ASSERT_OK(json_stream_begin(doc, flags, f, &s));
                for (size_t i = 0; i < 3; i++)
                        ASSERT_OK(json_stream_element(s, json_object_array_get_idx(y, i)));
                ASSERT_OK(json_stream_end(s, NULL));
                s = json_stream_free(s);
                ASSERT_EQ(fclose(f), 0);
                want = json_object_to_json_string_ext(full, flags);
                ASSERT_STREQ(text, want);
                text = mfree(text);

                /* one element short, one too many */
                f = open_memstream(&text, &n);
                ASSERT_TRUE(f);
                ASSERT_OK(json_stream_begin(doc, flags, f, &s));
                ASSERT_OK(json_stream_element(s, NULL));
                ASSERT_ERR(json_stream_end(s, NULL), EINVAL);
                s = json_stream_free(s);
                ASSERT_OK(json_stream_begin(doc, flags, f, &s));
                for (size_t i = 0; i < 3; i++)
                        ASSERT_OK(json_stream_element(s, NULL));
                ASSERT_ERR(json_stream_element(s, NULL), EINVAL);
                ASSERT_ERR(json_stream_end(s, NULL), EINVAL);
                s = json_stream_free(s);
                ASSERT_EQ(fclose(f), 0);
                text = mfree(text);
        }
}

static char *read_file(const char *dir, const char *name) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char *text = NULL;

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(read_full_file_at(fd, name, STATE_FILE_MAX, &text, NULL));
        return text;
}

static int not_dot(const struct dirent *de) {
        return de->d_name[0] != '.';
}

/* Entries of a directory, "." and ".." aside. */
static size_t count_entries(const char *path) {
        struct dirent **v = NULL;
        int n = scandir(path, &v, not_dot, NULL);

        ASSERT_TRUE(n >= 0);
        for (int i = 0; i < n; i++)
                free(v[i]);
        free(v);
        return (size_t) n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

/* What state_save() leaves: the tree's text in both files, nothing else, 0644. */
TEST(state_save_files) {
        _cleanup_(run_record_done) RunRecord r = {};
        _cleanup_free_ char *dir = NULL, *pretty = NULL, *shortform = NULL, *last = NULL, *hist = NULL,
                            *hist_name = NULL, *hist_path = NULL;
        struct stat st;

        ASSERT_TRUE(asprintf(&dir, "%s/state", test_root) >= 0);
        make_record(&r, 1000, true);
        ASSERT_OK(state_save(dir, &r));
        ASSERT_OK(run_record_to_json_string(&r, true, &pretty));
        ASSERT_OK(run_record_to_json_string(&r, false, &shortform));
        last = read_file(dir, "last.json");
        ASSERT_TRUE(asprintf(&hist_name, "history/%020llu-%d.json", (unsigned long long) r.started_realtime,
                             (int) getpid()) >= 0);
        hist = read_file(dir, hist_name);
        ASSERT_TRUE(strlen(last) == strlen(pretty) + 1 && strncmp(last, pretty, strlen(pretty)) == 0);
        ASSERT_TRUE(strlen(hist) == strlen(shortform) + 1 &&
                    strncmp(hist, shortform, strlen(shortform)) == 0);
        ASSERT_TRUE(asprintf(&hist_path, "%s/%s", dir, hist_name) >= 0);
        ASSERT_OK(stat(hist_path, &st) < 0 ? -errno : 0);
        ASSERT_EQ(st.st_mode & 0777, 0644);

        ASSERT_EQ(count_entries(dir), 2); /* last.json, history/: no temporary file left */
}

/* More mounts than a record holds (review AK, AK-1: any user's namespace with thousands of mounts
 * with 4 KiB names made every record too large, so status showed an earlier run as the last): the
 * record is written all the same, within STATE_FILE_MAX, the mounts synced or tried listed first,
 * the rest counted. The worst case: every string at STATE_STRING_MAX and control characters
 * (escaped 6 bytes a byte), and 64 reasons of the same that are not UTF-8 (their hex twins too:
 * review AM, AM-6, a bound of half the file for the rest did not hold). */
TEST(state_save_size_bound) {
        _cleanup_(run_record_done) RunRecord r = {}, small = {}, back = {};
        _cleanup_free_ char *dir = NULL, *last = NULL, *hist = NULL;
        size_t n = STATE_FILE_MAX / STATE_STRING_MAX + 16, n_sync = 0, listed_sync = 0;
        struct stat st;

        ASSERT_TRUE(asprintf(&dir, "%s/big", test_root) >= 0);
        make_record(&small, 3, false);
        ASSERT_OK(state_save(dir, &small));

        make_record(&r, n, false);
        for (size_t i = 0; i < n; i++) {
                RunMount *m = r.mounts + i;

                free(m->reason);
                free(m->mount_point);
                ASSERT_TRUE((m->reason = malloc(STATE_STRING_MAX + 1)));
                memset(m->reason, 'r', STATE_STRING_MAX);
                m->reason[STATE_STRING_MAX] = 0;
                ASSERT_TRUE((m->mount_point = malloc(STATE_STRING_MAX + 1)));
                memset(m->mount_point, '\x01', STATE_STRING_MAX);
                m->mount_point[0] = '/';
                m->mount_point[STATE_STRING_MAX] = 0;
                /* the mounts synced last in the plan's order: listed all the same */
                free(m->action);
                ASSERT_TRUE((m->action = strdup(i + 8 >= n ? "sync" : "skip")));
                n_sync += i + 8 >= n;
        }
        r.incomplete_why = calloc(STATE_REASONS_MAX + 1, sizeof(char *));
        ASSERT_TRUE(r.incomplete_why);
        for (size_t i = 0; i < STATE_REASONS_MAX; i++) {
                ASSERT_TRUE((r.incomplete_why[i] = malloc(STATE_STRING_MAX + 1)));
                memset(r.incomplete_why[i], '\x02', STATE_STRING_MAX);
                r.incomplete_why[i][1] = '\xff'; /* not UTF-8: a hex twin too, 8 bytes a byte (AM-6) */
                r.incomplete_why[i][STATE_STRING_MAX] = 0;
        }
        r.n_incomplete_why = STATE_REASONS_MAX;
        r.has_complete = true;
        ASSERT_OK(state_save(dir, &r));

        ASSERT_TRUE(asprintf(&hist, "%s/last.json", dir) >= 0);
        ASSERT_TRUE(stat(hist, &st) == 0);
        hist = mfree(hist);
        ASSERT_TRUE((uint64_t) st.st_size <= STATE_FILE_MAX);
        last = read_file(dir, "last.json");
        ASSERT_OK(run_record_from_json_string(last, &back));
        ASSERT_TRUE(back.n_mounts > 0 && back.n_mounts < n);
        ASSERT_EQ(back.n_mounts + back.n_mounts_omitted, n);
        ASSERT_EQ(back.started_realtime, r.started_realtime);
        for (size_t i = 0; i < back.n_mounts; i++)
                listed_sync += streq(back.mounts[i].action, "sync");
        ASSERT_EQ(listed_sync, n_sync);
        ASSERT_EQ(back.n_incomplete_why, STATE_REASONS_MAX);
        fprintf(stderr, "  %zu of %zu mounts listed, last.json %lld bytes\n", back.n_mounts, n,
                (long long) st.st_size);
        ASSERT_EQ(count_entries(dir), 2); /* last.json, history/: no temporary file left */
        ASSERT_TRUE(asprintf(&hist, "%s/history", dir) >= 0);
        ASSERT_EQ(count_entries(hist), 1); /* this one's, under the small run's name (same start, PID) */
}

/* Other namespaces' mounts take at most STATE_OTHER_NS_BYTES_MAX of a record (review
 * AM, AM-3: AK-1's namespace gave 7 MB records, 16 of them kept on tmpfs, 140-410 MB to read
 * back): ours and those synced are listed whole. */
TEST(other_skipped_bound) {
        _cleanup_(run_record_done) RunRecord r = {}, back = {};
        _cleanup_free_ char *text = NULL;
        size_t n = 5000, size = 0, own = 0, other = 0;
        FILE *f;

        make_record(&r, n, false);
        for (size_t i = 0; i < n; i++) {
                RunMount *m = r.mounts + i;

                free(m->action);
                free(m->mount_point);
                /* half of the other namespace's synced (a user's overlays over a disk: review AN,
                 * AN-2): bounded all the same */
                ASSERT_TRUE((m->action = strdup(i < 3 || (i >= 103 && i % 2) ? "sync" : "skip")));
                m->namespace_ino = i < 103 ? 0 : 4026532301ULL;
                ASSERT_TRUE((m->mount_point = malloc(4000)));
                memset(m->mount_point, 'p', 3999);
                m->mount_point[0] = '/';
                m->mount_point[3999] = 0;
        }
        f = open_memstream(&text, &size);
        ASSERT_TRUE(f);
        ASSERT_OK(run_record_write_json(&r, f, NULL, NULL));
        ASSERT_EQ(fclose(f), 0);
        ASSERT_OK(run_record_from_json_string(text, &back));
        for (size_t i = 0; i < back.n_mounts; i++) {
                own += back.mounts[i].namespace_ino == 0;
                other += back.mounts[i].namespace_ino != 0;
        }
        fprintf(stderr, "  %zu bytes: %zu of ours, %zu of another namespace's of %zu\n", size, own, other,
                n - 103);
        ASSERT_EQ(own, 103);
        ASSERT_TRUE(other > 0 && other < n - 103);
        ASSERT_EQ(back.n_mounts_omitted, n - 103 - other);
        ASSERT_TRUE(size < 2U * 1024U * 1024U); /* the 7 MB of AM-3 */
}

int main(void) {
        ASSERT_TRUE(test_mkdtemp(test_root));
        RUN(same_bytes);
        RUN(fixtures);
        RUN(every_byte);
        RUN(refused);
        RUN(stream_api);
        RUN(state_save_files);
        RUN(string_too_long_omitted);
        RUN(state_save_size_bound);
        RUN(other_skipped_bound);
        (void) nftw(test_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        return 0;
}
