/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "shared/fileio.h"
#include "state.h"
#include "tests.h"

#define WEIRD_PATH "/mnt/a\nb\tc\"d\\e\xff/f"
#define WEIRD_HEX "2f6d6e742f610a62096322645c65ff2f66"

static char test_root[] = "/tmp/test-state.XXXXXX";

static char *path_join(const char *a, const char *b) {
        char *p;
        ASSERT_TRUE(asprintf(&p, "%s/%s", a, b) >= 0);
        return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

static void rm_rf(const char *path) {
        (void) chmod(path, 0755);
        (void) nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory under the test root. */
static char *fresh_dir(const char *name) {
        char *p = path_join(test_root, name);
        rm_rf(p);
        ASSERT_OK(mkdir(p, 0755) < 0 ? -errno : 0);
        return p;
}

static void fill_mount(RunMount *m, const char *mp, const char *fstype, const char *action,
                       const char *reason, const char *outcome, usec_t duration, int error, int pid) {
        *m = (RunMount) {
                .mount_point = strdup(mp),
                .fstype = fstype ? strdup(fstype) : NULL,
                .action = strdup(action),
                .reason = reason ? strdup(reason) : NULL,
                .outcome = strdup(outcome),
                .duration = duration,
                .error = error,
                .abandoned_pid = pid,
        };
}

static void make_record(RunRecord *r, usec_t started) {
        *r = (RunRecord) {
                .started_realtime = started,
                .duration = 845012,
                .result = strdup("timeout"),
                .trigger = strdup("hook"),
                .sleep_action = strdup("suspend-then-hibernate"),
                .deadline = 5 * USEC_PER_SEC,
                .t_read = 2100,
                .t_sample = 310,
                .t_plan = 42,
                .t_execute = 840000,
                .t_record = 560,
                .flushers_woken = 4264,
                .pid = 31337,
                .started_boottime = 86400123456ULL,
                .started_suspended = 3600000123ULL,
                .boot_id = "0123456789abcdef0123456789abcdef",
                .suspend_counts_known = true,
                .suspend_success = 41,
                .suspend_fail = 0,
        };
        r->n_mounts = 4;
        r->mounts = calloc(r->n_mounts, sizeof(RunMount));
        ASSERT_TRUE(r->mounts);
        fill_mount(&r->mounts[0], "/", "ext4", "sync", "default", "synced", 812000, 0, 0);
        fill_mount(&r->mounts[1], WEIRD_PATH, "vfat", "sync", "removable", "timeout", 5000000, 0, 4242);
        fill_mount(&r->mounts[2], "/mnt/nfs/ünïcödé", "nfs4", "sync", NULL, "error", 1200, EIO, 0);
        fill_mount(&r->mounts[3], "/run", NULL, "skip", "no writeback", "skipped", 0, 0, 0);
        r->mounts[3].namespace_ino = 4026532301ULL;
        r->mounts[1].start_offset = 1500;
        r->mounts[0].writeback_wait = 512000;
}

static void assert_record_eq(const RunRecord *a, const RunRecord *b) {
        ASSERT_U64_EQ(a->started_realtime, b->started_realtime);
        ASSERT_U64_EQ(a->duration, b->duration);
        ASSERT_TRUE(streq_ptr(a->result, b->result));
        ASSERT_TRUE(streq_ptr(a->trigger, b->trigger));
        ASSERT_TRUE(streq_ptr(a->sleep_action, b->sleep_action));
        ASSERT_U64_EQ(a->deadline, b->deadline);
        ASSERT_U64_EQ(a->t_read, b->t_read);
        ASSERT_U64_EQ(a->t_sample, b->t_sample);
        ASSERT_U64_EQ(a->t_plan, b->t_plan);
        ASSERT_U64_EQ(a->t_execute, b->t_execute);
        ASSERT_U64_EQ(a->t_record, b->t_record);
        ASSERT_U64_EQ(a->flushers_woken, b->flushers_woken);
        ASSERT_EQ(a->pid, b->pid);
        ASSERT_U64_EQ(a->started_boottime, b->started_boottime);
        if (a->started_boottime > 0) /* written with it; else loads as not recorded */
                ASSERT_U64_EQ(a->started_suspended, b->started_suspended);
        ASSERT_STREQ(a->boot_id, b->boot_id);
        ASSERT_TRUE(a->suspend_counts_known == b->suspend_counts_known);
        if (a->suspend_counts_known)
                ASSERT_TRUE(a->suspend_success == b->suspend_success && a->suspend_fail == b->suspend_fail);
        ASSERT_EQ(a->n_mounts, b->n_mounts);
        for (size_t i = 0; i < a->n_mounts; i++) {
                const RunMount *x = a->mounts + i, *y = b->mounts + i;
                ASSERT_TRUE(streq_ptr(x->mount_point, y->mount_point));
                ASSERT_TRUE(streq_ptr(x->fstype, y->fstype));
                ASSERT_U64_EQ(x->namespace_ino, y->namespace_ino);
                ASSERT_U64_EQ(x->start_offset, y->start_offset);
                ASSERT_U64_EQ(x->writeback_wait, y->writeback_wait);
                ASSERT_TRUE(streq_ptr(x->action, y->action));
                ASSERT_TRUE(streq_ptr(x->reason, y->reason));
                ASSERT_TRUE(streq_ptr(x->outcome, y->outcome));
                ASSERT_U64_EQ(x->duration, y->duration);
                ASSERT_EQ(x->error, y->error);
                ASSERT_EQ(x->abandoned_pid, y->abandoned_pid);
        }
}

/* Whether json-c's strict mode takes a byte above 0x7f: json-c 0.18's refuses every one (json-c
 * issues #875, #892; json_parse_strict() works around it, the check below must not depend on that). */
static bool strict_takes_utf8(void) {
        struct json_tokener *tok = json_tokener_new();
        json_object *o;
        bool ok;

        ASSERT_TRUE(tok);
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, "\"\xc3\xa9\"", 4);
        ok = o && json_tokener_get_error(tok) == json_tokener_success;
        json_object_put(o);
        json_tokener_free(tok);
        return ok;
}

/* Independent check that the output is valid UTF-8 JSON: json-c's own validating tokener, strict
 * where json-c's strict mode takes UTF-8. */
static json_object *parse_strict(const char *s) {
        struct json_tokener *tok = json_tokener_new();
        json_object *o;

        ASSERT_TRUE(tok);
        json_tokener_set_flags(tok,
                               JSON_TOKENER_VALIDATE_UTF8 | (strict_takes_utf8() ? JSON_TOKENER_STRICT : 0));
        o = json_tokener_parse_ex(tok, s, (int) strlen(s));
        ASSERT_EQ(json_tokener_get_error(tok), json_tokener_success);
        json_tokener_free(tok);
        ASSERT_TRUE(o);
        return o;
}

TEST(round_trip) {
        _cleanup_(run_record_done) RunRecord r = {}, back = {};
        _cleanup_free_ char *s = NULL;
        json_object *o, *mounts, *m, *v;

        make_record(&r, 1767225600123456ULL);
        ASSERT_OK(run_record_to_json_string(&r, true, &s));
        ASSERT_OK(run_record_from_json_string(s, &back));
        assert_record_eq(&r, &back);

        /* The 0xff byte never reaches the JSON text; the raw bytes are kept as hex. */
        ASSERT_TRUE(!strchr(s, '\xff'));
        o = parse_strict(s);
        ASSERT_TRUE(json_object_object_get_ex(o, "mounts", &mounts));
        m = json_object_array_get_idx(mounts, 1);
        ASSERT_TRUE(json_object_object_get_ex(m, "mount_point_hex", &v));
        ASSERT_STREQ(json_object_get_string(v), WEIRD_HEX);
        ASSERT_TRUE(json_object_object_get_ex(m, "mount_point", &v));
        ASSERT_STREQ(json_object_get_string(v), "/mnt/a\nb\tc\"d\\e\xef\xbf\xbd/f");
        ASSERT_TRUE(json_object_object_get_ex(m, "abandoned_pid", &v));
        ASSERT_EQ(json_object_get_int(v), 4242);

        /* Negative control: valid UTF-8 (multibyte) gets no _hex twin and is kept verbatim. */
        m = json_object_array_get_idx(mounts, 2);
        ASSERT_TRUE(!json_object_object_get_ex(m, "mount_point_hex", NULL));
        ASSERT_TRUE(json_object_object_get_ex(m, "mount_point", &v));
        ASSERT_STREQ(json_object_get_string(v), "/mnt/nfs/ünïcödé");
        ASSERT_TRUE(json_object_object_get_ex(m, "errno", &v));
        ASSERT_EQ(json_object_get_int(v), EIO);
        ASSERT_TRUE(json_object_object_get_ex(m, "errno_name", &v));
        ASSERT_STREQ(json_object_get_string(v), "EIO");
        ASSERT_TRUE(json_object_object_get_ex(m, "reason", &v));
        ASSERT_TRUE(v == NULL); /* JSON null */

        m = json_object_array_get_idx(mounts, 0);
        ASSERT_TRUE(json_object_object_get_ex(m, "errno_name", &v));
        ASSERT_TRUE(v == NULL);
        ASSERT_TRUE(json_object_object_get_ex(m, "abandoned_pid", &v));
        ASSERT_TRUE(v == NULL);

        ASSERT_TRUE(json_object_object_get_ex(o, "phases_usec", &v));
        ASSERT_TRUE(json_object_object_get_ex(v, "execute", &v));
        ASSERT_EQ(json_object_get_int64(v), 840000);
        json_object_put(o);

        /* Names from the schema contract, no escaped slashes. */
        ASSERT_TRUE(strstr(s, "\"started_realtime_usec\""));
        ASSERT_TRUE(strstr(s, "\"deadline_usec\""));
        ASSERT_TRUE(strstr(s, "\"flushers_woken_usec\": 4264"));
        ASSERT_TRUE(strstr(s, "\"pid\": 31337"));
        ASSERT_TRUE(strstr(s, "\"started_boottime_usec\": 86400123456"));
        ASSERT_TRUE(strstr(s, "\"started_suspended_usec\": 3600000123"));
        ASSERT_TRUE(strstr(s, "\"mount_point\": \"/\""));
        ASSERT_TRUE(!strstr(s, "\\/"));
}

/* The json_object interface (status --json embeds records): the same JSON as the text, and back. */
TEST(object_interface) {
        _cleanup_(run_record_done) RunRecord r = {}, back = {};
        _cleanup_free_ char *s = NULL;
        json_object *o = NULL, *bad;

        make_record(&r, 1767225600123456ULL);
        r.has_complete = true;
        r.incomplete_why = calloc(2, sizeof(char *));
        ASSERT_TRUE(r.incomplete_why);
        r.incomplete_why[0] = strdup("a reason");
        r.n_incomplete_why = 1;
        ASSERT_OK(run_record_to_json(&r, &o));
        ASSERT_OK(run_record_to_json_string(&r, false, &s));
        ASSERT_STREQ(
                json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                s);
        ASSERT_OK(run_record_from_json(o, &back));
        assert_record_eq(&r, &back);
        ASSERT_TRUE(back.has_complete && !back.complete);
        ASSERT_EQ(back.n_incomplete_why, 1U);
        ASSERT_STREQ(back.incomplete_why[0], "a reason");
        json_object_put(o);

        ASSERT_ERR(run_record_to_json(NULL, &o), EINVAL);
        bad = json_object_new_array();
        ASSERT_ERR(run_record_from_json(bad, &back), EBADMSG);
        json_object_put(bad);
}

/* Issue 9 cases 2 and 10: the record says whether the pass was complete and why not; records from
 * before the field load as "unknown" (has_complete false), never as complete. */
TEST(completeness) {
        _cleanup_(run_record_done) RunRecord r = {}, back = {}, old = {};
        _cleanup_free_ char *s = NULL, *s_old = NULL;
        char *why[] = { (char *) "ext4 superblock 7:3 (/dev/loop3) is mounted but in no scanned mount table",
                        (char *) "our root directory is not a mount point of our mount table (a chroot?)" };

        make_record(&r, 1767225600123456ULL);
        ASSERT_OK(run_record_to_json_string(&r, false, &s_old));
        ASSERT_TRUE(!strstr(s_old, "\"complete\""));
        ASSERT_OK(run_record_from_json_string(s_old, &old));
        ASSERT_TRUE(!old.has_complete);

        r.has_complete = true;
        r.complete = false;
        r.incomplete_why = why;
        r.n_incomplete_why = 2;
        ASSERT_OK(run_record_to_json_string(&r, false, &s));
        r.incomplete_why = NULL; /* not ours to free */
        r.n_incomplete_why = 0;
        ASSERT_TRUE(strstr(s, "\"complete\":false"));
        ASSERT_OK(run_record_from_json_string(s, &back));
        ASSERT_TRUE(back.has_complete && !back.complete);
        ASSERT_EQ(back.n_incomplete_why, 2U);
        ASSERT_STREQ(back.incomplete_why[0], why[0]);
        ASSERT_STREQ(back.incomplete_why[1], why[1]);
        /* A non-boolean completeness is refused. */
        ASSERT_ERR(run_record_from_json_string(
                           "{\"started_realtime_usec\":1,\"result\":\"success\",\"complete\":\"yes\"}", &old),
                   EBADMSG);
}

/* Review B F4: a reason naming a path that is not valid UTF-8 (a hidden superblock's mount point,
 * an nsfs file, a chroot's root) must not make the record unreadable. Saved, the files are strict
 * UTF-8 JSON, the lossy reason carries U+FFFD and "incomplete_why_hex" the bytes (null for a
 * valid reason); loaded back, the bytes are exact. A record without "incomplete_why_hex" (all
 * valid, or written before it existed) still reads as it is, and a reader that ignores it gets
 * the lossy text. */
TEST(incomplete_why_bytes) {
        _cleanup_free_ char *dir = fresh_dir("why-bytes"), *last_path = path_join(dir, "last.json");
        _cleanup_(run_record_done) RunRecord r = {}, last = {}, old = {};
        _cleanup_free_ char *s = NULL, *text = NULL;
        char *why[] = { (char *) "ext4 superblock 7:3 (/dev/loop3), at /tmp/m/hid\xff",
                        (char *) "mount namespace mnt:[4026532301] held only by /tmp/nsf\xfe\"x",
                        (char *) "our root directory is not a mount point (caf\xc3\xa9)" };
        json_object *o, *v;
        RunRecord *hist = NULL;
        bool has_last = false;
        size_t n = 0, n_corrupt = 0;

        make_record(&r, 1767225600123456ULL);
        r.has_complete = true;
        r.incomplete_why = calloc(ELEMENTSOF(why), sizeof(char *));
        ASSERT_TRUE(r.incomplete_why);
        for (size_t i = 0; i < ELEMENTSOF(why); i++)
                ASSERT_TRUE(r.incomplete_why[i] = strdup(why[i]));
        r.n_incomplete_why = ELEMENTSOF(why);

        ASSERT_OK(run_record_to_json_string(&r, false, &s));
        o = parse_strict(s);
        ASSERT_TRUE(json_object_object_get_ex(o, "incomplete_why", &v));
        ASSERT_STREQ(json_object_get_string(json_object_array_get_idx(v, 0)),
                     "ext4 superblock 7:3 (/dev/loop3), at /tmp/m/hid\xEF\xBF\xBD");
        ASSERT_STREQ(json_object_get_string(json_object_array_get_idx(v, 2)), why[2]);
        ASSERT_TRUE(json_object_object_get_ex(o, "incomplete_why_hex", &v));
        ASSERT_EQ(json_object_array_length(v), 3U);
        ASSERT_TRUE(json_object_array_get_idx(v, 0) && json_object_array_get_idx(v, 1));
        ASSERT_TRUE(!json_object_array_get_idx(v, 2));
        json_object_put(o);

        /* saved and loaded back: last.json and the history file */
        ASSERT_OK(state_save(dir, &r));
        ASSERT_OK(read_full_file_at(AT_FDCWD, last_path, STATE_FILE_MAX, &text, NULL));
        json_object_put(parse_strict(text));
        ASSERT_OK(state_load(dir, &last, &has_last, NULL, NULL));
        ASSERT_TRUE(has_last && last.has_complete && !last.complete);
        ASSERT_EQ(last.n_incomplete_why, ELEMENTSOF(why));
        for (size_t i = 0; i < ELEMENTSOF(why); i++)
                ASSERT_STREQ(last.incomplete_why[i], why[i]);
        assert_record_eq(&r, &last);
        ASSERT_OK(state_load_history(dir, &hist, &n, &n_corrupt, NULL));
        ASSERT_EQ(n, 1U);
        ASSERT_EQ(n_corrupt, 0U);
        ASSERT_STREQ(hist[0].incomplete_why[1], why[1]);
        run_record_array_free(hist, n);

        /* without the twin (a reader that ignores it): the lossy text */
        ASSERT_TRUE(strstr(s, ",\"incomplete_why_hex\":["));
        strstr(s, ",\"incomplete_why_hex\":[")[0] = '}';
        strstr(s, "}\"incomplete_why_hex\":[")[1] = 0;
        ASSERT_OK(run_record_from_json_string(s, &old));
        ASSERT_STREQ(old.incomplete_why[0], "ext4 superblock 7:3 (/dev/loop3), at /tmp/m/hid\xEF\xBF\xBD");
        ASSERT_STREQ(old.incomplete_why[2], why[2]);
        run_record_done(&old);

        /* a record as written before the twin existed, all reasons valid: as it is */
        ASSERT_OK(
                run_record_from_json_string("{\"started_realtime_usec\":1,\"result\":\"success\","
                                            "\"complete\":false,\"incomplete_why\":[\"a\",\"caf\xc3\xa9\"]}",
                                            &old));
        ASSERT_EQ(old.n_incomplete_why, 2U);
        ASSERT_STREQ(old.incomplete_why[1], "caf\xc3\xa9");
        run_record_done(&old);
        /* a twin that does not match the reasons is refused */
        ASSERT_ERR(run_record_from_json_string("{\"started_realtime_usec\":1,\"result\":\"success\","
                                               "\"incomplete_why\":[\"a\"],\"incomplete_why_hex\":[]}",
                                               &old),
                   EBADMSG);
}

TEST(extremes) {
        _cleanup_(run_record_done) RunRecord r = {}, back = {};
        _cleanup_free_ char *s = NULL;

        r.started_realtime = USEC_INFINITY;
        r.deadline = USEC_INFINITY;
        r.result = strdup("success");
        ASSERT_OK(run_record_to_json_string(&r, false, &s));
        ASSERT_TRUE(strstr(s, "18446744073709551615"));
        ASSERT_TRUE(!strstr(s, "flushers_woken_usec")); /* 0: not written */
        ASSERT_TRUE(!strstr(s, "\"pid\"") && !strstr(s, "started_boottime_usec") &&
                    !strstr(s, "started_suspended_usec"));
        ASSERT_OK(run_record_from_json_string(s, &back));
        assert_record_eq(&r, &back);
        ASSERT_TRUE(back.trigger == NULL);
        ASSERT_EQ(back.n_mounts, 0);
}

TEST(pretty_vs_short) {
        _cleanup_(run_record_done) RunRecord r = {}, a = {}, b = {};
        _cleanup_free_ char *pretty = NULL, *plain = NULL;

        make_record(&r, 42);
        ASSERT_OK(run_record_to_json_string(&r, true, &pretty));
        ASSERT_OK(run_record_to_json_string(&r, false, &plain));
        ASSERT_TRUE(strchr(pretty, '\n'));
        ASSERT_TRUE(strstr(pretty, "\"result\": \"timeout\""));
        /* The only newline in the short form is the escaped one inside the weird path. */
        ASSERT_TRUE(!strchr(plain, '\n'));
        ASSERT_TRUE(strstr(plain, "\"result\":\"timeout\""));
        ASSERT_TRUE(strstr(plain, "a\\nb\\tc\\\"d\\\\e"));
        ASSERT_TRUE(strlen(plain) < strlen(pretty));
        ASSERT_TRUE(pretty[strlen(pretty) - 1] != '\n');
        ASSERT_OK(run_record_from_json_string(pretty, &a));
        ASSERT_OK(run_record_from_json_string(plain, &b));
        assert_record_eq(&a, &b);
        assert_record_eq(&r, &a);
}

TEST(serialise_rejects) {
        _cleanup_(run_record_done) RunRecord r = {};
        char *s = NULL, *big;

        /* result is required */
        ASSERT_ERR(run_record_to_json_string(&r, false, &s), EINVAL);
        ASSERT_ERR(run_record_to_json_string(NULL, false, &s), EINVAL);
        make_record(&r, 1);
        ASSERT_OK(run_record_to_json_string(&r, false, &s));
        free(s);
        s = NULL;

        r.mounts[2].error = -EIO;
        ASSERT_ERR(run_record_to_json_string(&r, false, &s), EINVAL);
        r.mounts[2].error = EIO;
        r.mounts[1].abandoned_pid = -1;
        ASSERT_ERR(run_record_to_json_string(&r, false, &s), EINVAL);
        r.mounts[1].abandoned_pid = 0;
        r.pid = -1;
        ASSERT_ERR(run_record_to_json_string(&r, false, &s), EINVAL);
        r.pid = 1;

        big = malloc(STATE_STRING_MAX + 2);
        ASSERT_TRUE(big);
        memset(big, 'x', STATE_STRING_MAX + 1);
        big[STATE_STRING_MAX + 1] = 0;
        free(r.mounts[3].reason);
        r.mounts[3].reason = big;
        ASSERT_ERR(run_record_to_json_string(&r, false, &s), E2BIG);
        /* exactly at the limit is fine, and reads back */
        big[STATE_STRING_MAX] = 0;
        ASSERT_OK(run_record_to_json_string(&r, false, &s));
        {
                _cleanup_(run_record_done) RunRecord back = {};
                ASSERT_OK(run_record_from_json_string(s, &back));
                assert_record_eq(&r, &back);
        }
        free(s);
        s = NULL;

        free(r.mounts[0].action);
        r.mounts[0].action = NULL;
        ASSERT_ERR(run_record_to_json_string(&r, false, &s), EINVAL);
        ASSERT_TRUE(s == NULL);
}

static char *read_fixture(const char *name, size_t *ret_size) {
        _cleanup_close_ int dfd = -EBADF;
        char *text = NULL;

        dfd = open(FIXTURES_DIR "/state", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(dfd >= 0);
        ASSERT_OK(read_full_file_at(dfd, name, STATE_FILE_MAX, &text, ret_size));
        return text;
}

TEST(fixtures) {
        DIR *d;
        struct dirent *de;
        unsigned n_good = 0, n_bad = 0;

        d = opendir(FIXTURES_DIR "/state");
        ASSERT_TRUE(d);
        while ((de = readdir(d))) {
                _cleanup_free_ char *text = NULL;
                RunRecord r = { .started_realtime = 0xdead, .result = (char *) "untouched" };
                size_t size = 0;
                int k;

                if (!strstr(de->d_name, ".json"))
                        continue;
                text = read_fixture(de->d_name, &size);
                k = run_record_from_json_string(text, &r);
                if (strncmp(de->d_name, "good-", 5) == 0) {
                        if (k < 0)
                                fprintf(stderr, "%s: %s\n", de->d_name, strerror(-k));
                        ASSERT_OK(k);
                        run_record_done(&r);
                        n_good++;
                } else {
                        ASSERT_TRUE(strncmp(de->d_name, "bad-", 4) == 0);
                        if (k != -EBADMSG)
                                fprintf(stderr, "%s: got %d\n", de->d_name, k);
                        ASSERT_ERR(k, EBADMSG);
                        /* never partial output */
                        ASSERT_U64_EQ(r.started_realtime, 0xdead);
                        ASSERT_STREQ(r.result, "untouched");
                        n_bad++;
                }
        }
        closedir(d);
        ASSERT_TRUE(n_good >= 5);
        ASSERT_TRUE(n_bad >= 30);
}

/* "mounts_omitted" (review AK): read back, and written again as it was. */
TEST(mounts_omitted) {
        _cleanup_(run_record_done) RunRecord r = {};
        _cleanup_free_ char *text = NULL, *again = NULL;

        text = read_fixture("good-mounts-omitted.json", NULL);
        ASSERT_OK(run_record_from_json_string(text, &r));
        ASSERT_EQ(r.n_mounts, 1);
        ASSERT_EQ(r.n_mounts_omitted, 4999);
        ASSERT_OK(run_record_to_json_string(&r, false, &again));
        ASSERT_TRUE(strstr(again, "\"mounts_omitted\":4999") != NULL);
}

/* The kernel's counts are known only both together; a boot id not of its form is none (the wall
 * clock pairs the record then). */
TEST(suspend_counts_keys) {
        static const struct {
                const char *json;
                bool known;
                const char *boot;
        } cases[] = {
                { "{\"started_realtime_usec\":1,\"result\":\"success\",\"suspend_success\":4,\"suspend_fail\":0}",
                  true, "" },
                { "{\"started_realtime_usec\":1,\"result\":\"success\",\"suspend_success\":4}", false, "" },
                { "{\"started_realtime_usec\":1,\"result\":\"success\",\"suspend_fail\":4}", false, "" },
                { "{\"started_realtime_usec\":1,\"result\":\"success\",\"boot_id\":\"0123456789abcdef0123456789abcdef\"}",
                  false, "0123456789abcdef0123456789abcdef" },
                { "{\"started_realtime_usec\":1,\"result\":\"success\",\"boot_id\":\"0123456789ABCDEF0123456789abcdef\"}",
                  false, "" },
                { "{\"started_realtime_usec\":1,\"result\":\"success\",\"boot_id\":\"0123456789abcdef0123456789abcdef0\"}",
                  false, "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(run_record_done) RunRecord r = {};

                ASSERT_OK(run_record_from_json_string(cases[i].json, &r));
                ASSERT_TRUE(r.suspend_counts_known == cases[i].known);
                ASSERT_STREQ(r.boot_id, cases[i].boot);
        }
}

TEST(fixture_contents) {
        _cleanup_(run_record_done) RunRecord full = {}, min = {}, mm = {}, hex = {};
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

        a = read_fixture("good-full.json", NULL);
        ASSERT_OK(run_record_from_json_string(a, &full));
        ASSERT_U64_EQ(full.started_realtime, 1767225600123456ULL);
        ASSERT_STREQ(full.result, "timeout");
        ASSERT_STREQ(full.trigger, "hook");
        ASSERT_STREQ(full.sleep_action, "suspend");
        ASSERT_U64_EQ(full.t_execute, 840000);
        ASSERT_EQ(full.n_mounts, 4);
        ASSERT_STREQ(full.mounts[1].mount_point, "/media/usb");
        ASSERT_EQ(full.mounts[1].abandoned_pid, 4242);
        ASSERT_EQ(full.mounts[2].error, EIO);
        ASSERT_STREQ(full.mounts[3].outcome, "skipped");
        ASSERT_U64_EQ(full.mounts[3].namespace_ino, 0);  /* records without the key: our namespace */
        ASSERT_EQ(full.n_mounts_omitted, 0);             /* records without the key: every mount listed */
        ASSERT_U64_EQ(full.mounts[1].start_offset, 0);   /* records without the key: unknown */
        ASSERT_U64_EQ(full.mounts[0].writeback_wait, 0); /* records without the key: no wait */
        ASSERT_U64_EQ(full.flushers_woken, 0);           /* records without the key: not woken */
        ASSERT_EQ(full.pid, 0);                          /* records without the keys: not known */
        ASSERT_U64_EQ(full.started_boottime, 0);
        ASSERT_U64_EQ(full.started_suspended, USEC_INFINITY);        /* records without the key: not known */
        ASSERT_TRUE(!full.boot_id[0] && !full.suspend_counts_known); /* records without the keys */

        /* missing optional fields → defaults */
        b = read_fixture("good-minimal.json", NULL);
        ASSERT_OK(run_record_from_json_string(b, &min));
        ASSERT_U64_EQ(min.started_realtime, 1);
        ASSERT_U64_EQ(min.duration, 0);
        ASSERT_U64_EQ(min.deadline, 0);
        ASSERT_U64_EQ(min.t_read, 0);
        ASSERT_TRUE(min.trigger == NULL);
        ASSERT_TRUE(min.sleep_action == NULL); /* records older than the key still load */
        ASSERT_EQ(min.n_mounts, 0);
        ASSERT_TRUE(min.mounts == NULL);

        c = read_fixture("good-mount-minimal.json", NULL);
        ASSERT_OK(run_record_from_json_string(c, &mm));
        ASSERT_EQ(mm.n_mounts, 1);
        ASSERT_TRUE(mm.mounts[0].fstype == NULL);
        ASSERT_TRUE(mm.mounts[0].reason == NULL);
        ASSERT_EQ(mm.mounts[0].error, ENOSPC);
        ASSERT_EQ(mm.mounts[0].abandoned_pid, 0);

        /* hex wins over the lossy form */
        d = read_fixture("good-hex.json", NULL);
        ASSERT_OK(run_record_from_json_string(d, &hex));
        ASSERT_STREQ(hex.mounts[0].mount_point, "/mnt/\n\t\"\\\xff");

        /* json-c turns an escaped lone surrogate into U+FFFD; pairs decode normally */
        {
                _cleanup_(run_record_done) RunRecord x = {}, y = {};
                _cleanup_free_ char *e = read_fixture("good-escaped-lone-surrogate.json", NULL);
                _cleanup_free_ char *f = read_fixture("good-escaped-pair.json", NULL);
                ASSERT_OK(run_record_from_json_string(e, &x));
                ASSERT_STREQ(x.trigger, "\xef\xbf\xbd");
                ASSERT_OK(run_record_from_json_string(f, &y));
                ASSERT_STREQ(y.trigger, "\xf0\x9f\x98\x80 ok");
        }

        /* An integer above UINT64_MAX is refused whatever json-c would make of it (0.16 saturated
         * it, 0.18 refuses it): bad-usec-overflow.json, with the other bad-* fixtures. The
         * largest value loads. */
        {
                _cleanup_(run_record_done) RunRecord x = {};
                ASSERT_OK(run_record_from_json_string(
                        "{\"started_realtime_usec\": 18446744073709551615, \"result\": \"success\"}", &x));
                ASSERT_U64_EQ(x.started_realtime, USEC_INFINITY);
        }
}

TEST(huge_inputs) {
        RunRecord r = {};
        size_t n = 10U * 1024U * 1024U;
        char *text;
        const char *pre = "{\"started_realtime_usec\": 1, \"result\": \"", *post = "\"}";
        size_t lp = strlen(pre), lq = strlen(post);

        /* 10 MB string: below STATE_FILE_MAX, far above STATE_STRING_MAX */
        text = malloc(lp + n + lq + 1);
        ASSERT_TRUE(text);
        memcpy(text, pre, lp);
        memset(text + lp, 'a', n);
        memcpy(text + lp + n, post, lq + 1);
        ASSERT_ERR(run_record_from_json_string(text, &r), EBADMSG);
        free(text);

        /* more than STATE_FILE_MAX of text: refused before parsing */
        n = STATE_FILE_MAX + 16;
        text = malloc(n + 1);
        ASSERT_TRUE(text);
        memset(text, ' ', n);
        text[0] = '{';
        text[n - 1] = '}';
        text[n] = 0;
        ASSERT_ERR(run_record_from_json_string(text, &r), EFBIG);
        free(text);

        /* too many mounts */
        {
                size_t cnt = STATE_MAX_MOUNTS + 1, len = 0, cap = 64 + cnt * 3;
                char *t = malloc(cap);
                ASSERT_TRUE(t);
                len += (size_t) sprintf(t, "{\"started_realtime_usec\":1,\"result\":\"x\",\"mounts\":[");
                for (size_t i = 0; i < cnt; i++) {
                        memcpy(t + len, i ? ",{}" : "{}", i ? 3 : 2);
                        len += i ? 3 : 2;
                }
                memcpy(t + len, "]}", 3);
                ASSERT_ERR(run_record_from_json_string(t, &r), EBADMSG);
                free(t);
        }

        /* deep nesting generated far beyond the fixture */
        n = 200000;
        text = malloc(2 * n + 1);
        ASSERT_TRUE(text);
        memset(text, '[', n);
        memset(text + n, ']', n);
        text[2 * n] = 0;
        ASSERT_ERR(run_record_from_json_string(text, &r), EBADMSG);
        free(text);

        ASSERT_TRUE(r.result == NULL && r.mounts == NULL);
}

TEST(history_cap) {
        _cleanup_free_ char *dir = fresh_dir("cap");
        _cleanup_(run_record_done) RunRecord last = {};
        RunRecord *hist = NULL;
        size_t n = 0;
        bool has_last = true;

        /* never run */
        ASSERT_OK(state_load(dir, &last, &has_last, &hist, &n));
        ASSERT_TRUE(!has_last);
        ASSERT_EQ(n, 0);
        run_record_array_free(hist, n);

        for (unsigned i = 0; i < 20; i++) {
                _cleanup_(run_record_done) RunRecord r = {};
                make_record(&r, 1000 + i);
                ASSERT_OK(state_save(dir, &r));

                ASSERT_OK(state_load(dir, NULL, NULL, &hist, &n));
                ASSERT_EQ(n, MIN(i + 1, STATE_HISTORY_MAX));
                run_record_array_free(hist, n);
        }

        ASSERT_OK(state_load(dir, &last, &has_last, &hist, &n));
        ASSERT_TRUE(has_last);
        ASSERT_U64_EQ(last.started_realtime, 1019);
        ASSERT_EQ(n, STATE_HISTORY_MAX);
        for (size_t i = 0; i < n; i++)
                ASSERT_U64_EQ(hist[i].started_realtime, 1019 - i);
        /* the weird path survives the history round trip too */
        ASSERT_STREQ(hist[STATE_HISTORY_MAX - 1].mounts[1].mount_point, WEIRD_PATH);
        assert_record_eq(&last, &hist[0]);
        run_record_array_free(hist, n);

        /* the directory itself holds exactly the cap (the loader would hide extra files) */
        {
                _cleanup_free_ char *p = path_join(dir, "history");
                DIR *d = opendir(p);
                struct dirent *de;
                size_t files = 0;

                ASSERT_TRUE(d);
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.')
                                files++;
                closedir(d);
                ASSERT_EQ(files, STATE_HISTORY_MAX);
        }
}

static void write_file(const char *dir, const char *name, const char *content) {
        _cleanup_free_ char *p = path_join(dir, name);
        FILE *f = fopen(p, "we");
        ASSERT_TRUE(f);
        fputs(content, f);
        ASSERT_EQ(fclose(f), 0);
}

/* json-c's parser running out of memory (linked with --wrap=json_tokener_parse_ex, test/meson.build):
 * it fails with malloc()'s errno ENOMEM and no error of its own (json-c 0.16). */
struct json_object *__real_json_tokener_parse_ex(struct json_tokener *tok, const char *str, int len);
struct json_object *__wrap_json_tokener_parse_ex(struct json_tokener *tok, const char *str, int len);
static bool parse_nomem;

struct json_object *__wrap_json_tokener_parse_ex(struct json_tokener *tok, const char *str, int len) {
        if (parse_nomem) {
                errno = ENOMEM;
                return NULL;
        }
        return __real_json_tokener_parse_ex(tok, str, len);
}

/* Review AS, AS-5: a record that could not be parsed for lack of memory is not corrupt: last.json
 * gives -ENOMEM (it gave -EBADMSG, "Bad message"), a history record is counted apart (it was counted
 * as one that does not parse), and skipped as before. */
TEST(history_nomem_not_corrupt) {
        _cleanup_free_ char *dir = fresh_dir("nomem");
        _cleanup_(run_record_done) RunRecord r = {}, last = {};
        RunRecord *hist = NULL;
        size_t n = 0, n_corrupt = 0, n_nomem = 0;
        bool has_last = false;

        make_record(&r, 5);
        ASSERT_OK(state_save(dir, &r));
        parse_nomem = true;
        ASSERT_ERR(state_load(dir, &last, &has_last, NULL, NULL), ENOMEM);
        ASSERT_OK(state_load_history(dir, &hist, &n, &n_corrupt, &n_nomem));
        parse_nomem = false;
        ASSERT_EQ(n, 0);
        ASSERT_EQ(n_corrupt, 0);
        ASSERT_EQ(n_nomem, 1);
        /* control: with memory, it loads */
        ASSERT_OK(state_load_history(dir, &hist, &n, &n_corrupt, &n_nomem));
        ASSERT_EQ(n, 1);
        ASSERT_EQ(n_nomem, 0);
        run_record_array_free(hist, n);
        ASSERT_OK(state_load(dir, &last, &has_last, NULL, NULL));
        ASSERT_TRUE(has_last);
}

TEST(corrupt_history) {
        _cleanup_free_ char *dir = fresh_dir("corrupt"), *hdir = NULL;
        _cleanup_(run_record_done) RunRecord r = {}, last = {};
        RunRecord *hist = NULL;
        size_t n = 0, n_corrupt = 0;
        bool has_last = false;

        make_record(&r, 5);
        ASSERT_OK(state_save(dir, &r));
        /* a damaged history file is skipped and counted; the others still load */
        hdir = path_join(dir, "history");
        write_file(hdir, "00000000000000000009-1.json", "[{\"started_realtime_usec\": 1, \"result\": \"succ");
        write_file(hdir, "00000000000000000008-1.json",
                   "{\"started_realtime_usec\": \"x\", \"result\": \"success\"}");
        write_file(hdir, "not-a-record.txt", "ignored");
        ASSERT_OK(state_load_history(dir, &hist, &n, &n_corrupt, NULL));
        ASSERT_EQ(n, 1);
        ASSERT_EQ(n_corrupt, 2);
        ASSERT_U64_EQ(hist[0].started_realtime, 5);
        run_record_array_free(hist, n);
        /* negative control: nothing corrupt, nothing counted */
        {
                _cleanup_free_ char *p1 = path_join(hdir, "00000000000000000009-1.json");
                _cleanup_free_ char *p2 = path_join(hdir, "00000000000000000008-1.json");
                ASSERT_OK(unlink(p1));
                ASSERT_OK(unlink(p2));
        }
        ASSERT_OK(state_load_history(dir, &hist, &n, &n_corrupt, NULL));
        ASSERT_EQ(n, 1);
        ASSERT_EQ(n_corrupt, 0);
        run_record_array_free(hist, n);

        /* corrupt last.json: -EBADMSG for that part only */
        write_file(dir, "last.json", "{\"started_realtime_usec\": 1}");
        ASSERT_ERR(state_load(dir, &last, &has_last, NULL, NULL), EBADMSG);
        ASSERT_OK(state_load(dir, NULL, NULL, &hist, &n));
        ASSERT_EQ(n, 1);
        run_record_array_free(hist, n);
        /* a NUL byte in last.json */
        {
                _cleanup_free_ char *p = path_join(dir, "last.json");
                FILE *f = fopen(p, "we");
                ASSERT_TRUE(f);
                ASSERT_EQ(fwrite("{\"a\":1}\0 ", 1, 9, f), 9);
                ASSERT_EQ(fclose(f), 0);
                ASSERT_ERR(state_load(dir, &last, &has_last, NULL, NULL), EBADMSG);
        }
}

TEST(missing_dir) {
        _cleanup_free_ char *base = fresh_dir("missing"), *dir = path_join(base, "a/b/c");
        _cleanup_(run_record_done) RunRecord r = {}, last = {};
        RunRecord *hist = NULL;
        size_t n = 5;
        bool has_last = true;
        struct stat st;

        ASSERT_OK(state_load(dir, &last, &has_last, &hist, &n));
        ASSERT_TRUE(!has_last);
        ASSERT_EQ(n, 0);

        make_record(&r, 77);
        ASSERT_OK(state_save(dir, &r));
        ASSERT_OK(stat(dir, &st) < 0 ? -errno : 0);
        ASSERT_TRUE(S_ISDIR(st.st_mode));
        ASSERT_EQ(st.st_mode & 0700, 0700);
        ASSERT_OK(state_load(dir, &last, &has_last, &hist, &n));
        ASSERT_TRUE(has_last);
        ASSERT_EQ(n, 1);
        assert_record_eq(&r, &last);
        run_record_array_free(hist, n);

        /* relative paths are refused */
        ASSERT_ERR(state_save("relative/dir", &r), EINVAL);
}

TEST(not_a_dir) {
        _cleanup_free_ char *base = fresh_dir("notdir"), *dir = NULL, *below = NULL;
        _cleanup_(run_record_done) RunRecord r = {};
        int fd;

        write_file(base, "state", "I am a file\n");
        dir = path_join(base, "state");
        below = path_join(base, "state/sub");
        make_record(&r, 1);
        ASSERT_ERR(state_save(dir, &r), ENOTDIR);
        ASSERT_ERR(state_save(below, &r), ENOTDIR);
        ASSERT_ERR(state_lock(dir, &fd), ENOTDIR);
}

static int access_in(const char *dir, const char *name) {
        _cleanup_free_ char *p = path_join(dir, name);
        return access(p, F_OK);
}

TEST(read_only) {
        _cleanup_free_ char *dir = fresh_dir("ro");
        _cleanup_(run_record_done) RunRecord r = {};
        pid_t pid;
        int status;

        if (geteuid() != 0) {
                test_skip("read_only: not root");
                return;
        }
        if (!root_is_mount_point()) {
                test_skip("read_only: %s", ROOT_NOT_MOUNT_POINT_REASON);
                return;
        }
        make_record(&r, 3);
        /* Private mount namespace in a child: the read-only bind mount vanishes with it. */
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(EXIT_TEST_SKIP);
                if (mount(dir, dir, NULL, MS_BIND, NULL) < 0 ||
                    mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
                        _exit(EXIT_TEST_SKIP);
                if (state_save(dir, &r) != -EROFS)
                        _exit(1);
                /* nothing was left behind */
                if (faccessat(AT_FDCWD, dir, F_OK, 0) < 0 || access_in(dir, "last.json") == 0)
                        _exit(2);
                _exit(0);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        if (WEXITSTATUS(status) == EXIT_TEST_SKIP) {
                test_skip("read_only: cannot make a read-only bind mount");
                return;
        }
        ASSERT_EQ(WEXITSTATUS(status), 0);
        /* negative control: the same directory is writable outside the namespace */
        ASSERT_OK(state_save(dir, &r));
}

static off_t size_in(const char *dir, const char *name) {
        _cleanup_free_ char *p = path_join(dir, name);
        struct stat st;

        ASSERT_OK(stat(p, &st) < 0 ? -errno : 0);
        return st.st_size;
}

/* The name of the one file in dir/history. */
static char *only_history_file(const char *dir) {
        _cleanup_free_ char *p = path_join(dir, "history");
        struct dirent *de;
        char *name = NULL;
        DIR *d = opendir(p);

        ASSERT_TRUE(d);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.') {
                        ASSERT_TRUE(!name);
                        name = path_join("history", de->d_name);
                }
        closedir(d);
        ASSERT_TRUE(name);
        return name;
}

/* The record fits in the stream's buffer, so the only write of last.json is the final flush: when
 * that fails (ENOSPC on a full /run, EFBIG, EIO) the save is an error and the truncated file is not
 * renamed over the previous record. A file size limit between the record's short form (history) and
 * its pretty form (last.json) makes exactly that flush fail, with EFBIG. */
TEST(last_flush_fails) {
        _cleanup_free_ char *sizes = fresh_dir("flush-sizes"), *dir = fresh_dir("flush"), *hist = NULL;
        _cleanup_(run_record_done) RunRecord a = {}, b = {}, last = {};
        bool has_last = false;
        off_t size_last, size_hist;
        pid_t pid;
        int status;

        make_record(&a, 10);
        make_record(&b, 11);
        /* The sizes of b's two files, saved where nothing else is. */
        ASSERT_OK(state_save(sizes, &b));
        size_last = size_in(sizes, "last.json");
        hist = only_history_file(sizes);
        size_hist = size_in(sizes, hist);
        ASSERT_TRUE(size_hist < size_last - 1);

        ASSERT_OK(state_save(dir, &a));
        fflush(stderr);
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                struct rlimit rl = { .rlim_cur = (rlim_t) size_last - 1, .rlim_max = (rlim_t) size_last - 1 };

                ASSERT_TRUE(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
                ASSERT_OK(setrlimit(RLIMIT_FSIZE, &rl));
                ASSERT_ERR(state_save(dir, &b), EFBIG);
                _exit(EXIT_SUCCESS);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        /* The previous record stands, whole; no temporary file is left. */
        ASSERT_OK(state_load(dir, &last, &has_last, NULL, NULL));
        ASSERT_TRUE(has_last);
        assert_record_eq(&a, &last);
        {
                _cleanup_free_ char *tmp = NULL;

                ASSERT_TRUE(asprintf(&tmp, "last.json.tmp.%d", (int) pid) > 0);
                ASSERT_TRUE(access_in(dir, tmp) < 0 && errno == ENOENT);
        }
        /* control: without the limit, the same record is saved */
        ASSERT_OK(state_save(dir, &b));
        run_record_done(&last);
        ASSERT_OK(state_load(dir, &last, &has_last, NULL, NULL));
        assert_record_eq(&b, &last);
}

TEST(lock) {
        _cleanup_free_ char *dir = fresh_dir("lock"), *sub = NULL;
        int a = -1, b = -1, status;
        pid_t pid;

        sub = path_join(dir, "new/state");
        ASSERT_OK(state_lock(sub, &a));
        ASSERT_TRUE(a >= 0);
        ASSERT_TRUE(fcntl(a, F_GETFD) & FD_CLOEXEC);
        /* a second open file description in the same process */
        ASSERT_ERR(state_lock(sub, &b), EBUSY);
        ASSERT_EQ(b, -1);

        /* another process */
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int fd = -1;
                close(a);
                _exit(state_lock(sub, &fd) == -EBUSY ? 0 : 1);
        }
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        /* released on close */
        close(a);
        ASSERT_OK(state_lock(sub, &b));
        ASSERT_TRUE(b >= 0);
        close(b);
}

/* The unit's pass waits for the daemon's: the lock is taken once its holder lets go, and a holder
 * that does not is given up on at the bound. */
TEST(lock_wait) {
        _cleanup_free_ char *dir = fresh_dir("lock-wait");
        int a = -1, b = -1, status, ready[2];
        char c;
        usec_t t0;
        pid_t pid;

        ASSERT_OK(state_lock(dir, &a));
        /* held throughout: -EBUSY at the bound, not before */
        t0 = now(CLOCK_MONOTONIC);
        ASSERT_ERR(state_lock_wait(dir, t0 + 50 * USEC_PER_MSEC, &b), EBUSY);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) >= t0 + 50 * USEC_PER_MSEC);
        ASSERT_EQ(b, -1);

        /* held by another process for 100 ms: the wait takes it once released */
        close(a);
        ASSERT_OK(pipe2(ready, O_CLOEXEC));
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int fd = -1;

                if (state_lock(dir, &fd) < 0)
                        _exit(1);
                if (write(ready[1], "x", 1) != 1)
                        _exit(1);
                (void) usleep(100 * 1000);
                _exit(0);
        }
        close(ready[1]);
        ASSERT_EQ(read(ready[0], &c, 1), 1); /* the child holds it now */
        close(ready[0]);
        ASSERT_ERR(state_lock(dir, &b), EBUSY); /* held: what follows has to wait for the child */
        ASSERT_OK(state_lock_wait(dir, now(CLOCK_MONOTONIC) + 10 * USEC_PER_SEC, &b));
        ASSERT_TRUE(b >= 0);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(b);
}

static const char *fstype_of(const char *mp) {
        static char buf[64];
        char line[4096];
        FILE *f = fopen("/proc/self/mounts", "re");
        const char *res = NULL;

        if (!f)
                return NULL;
        while (fgets(line, sizeof line, f)) {
                char src[1024], where[1024], type[64];
                if (sscanf(line, "%1023s %1023s %63s", src, where, type) == 3 && streq(where, mp)) {
                        snprintf(buf, sizeof buf, "%s", type);
                        res = buf;
                }
        }
        fclose(f);
        return res;
}

TEST(dir_check) {
        const char *t;
        bool is_tmpfs = true;

        ASSERT_OK(state_dir_check("/proc/sys", &is_tmpfs));
        ASSERT_TRUE(!is_tmpfs);
        ASSERT_ERR(state_dir_check("relative", &is_tmpfs), EINVAL);

        t = fstype_of("/dev/shm");
        if (t && streq(t, "tmpfs")) {
                is_tmpfs = false;
                /* a missing directory is judged by where it would be created */
                ASSERT_OK(state_dir_check("/dev/shm/does-not-exist/suspend-sync", &is_tmpfs));
                ASSERT_TRUE(is_tmpfs);
        } else
                test_skip("dir_check: /dev/shm is not tmpfs here: the positive case");
}

int main(void) {
        ASSERT_TRUE(test_mkdtemp(test_root));

        RUN(round_trip);
        RUN(object_interface);
        RUN(completeness);
        RUN(incomplete_why_bytes);
        RUN(extremes);
        RUN(pretty_vs_short);
        RUN(serialise_rejects);
        RUN(fixtures);
        RUN(mounts_omitted);
        RUN(suspend_counts_keys);
        RUN(fixture_contents);
        RUN(huge_inputs);
        RUN(history_cap);
        RUN(corrupt_history);
        RUN(history_nomem_not_corrupt);
        RUN(missing_dir);
        RUN(not_a_dir);
        RUN(read_only);
        RUN(last_flush_fails);
        RUN(lock);
        RUN(lock_wait);
        RUN(dir_check);

        rm_rf(test_root);
        return test_result();
}
