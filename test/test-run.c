/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <sys/sysmacros.h>

#include "run.h"
#include "shared/string-util.h"
#include "shared/utf8.h"
#include "tests.h"

#define BOOT_ID "0123456789abcdef0123456789abcdef"

/*
 * The pure steps of a pass on small hand-built plans: no fixture root, no worker. Each case sets
 * the executor's results by hand (as executor_run() and executor_check_stuck() would) and checks
 * the record, the tallies, the knob facts and the handover inputs; a control next to each
 * assertion flips one input.
 */

#define MAXE 8

typedef struct Bed {
        PlanEntry entries[MAXE];
        Plan plan;
        dev_t leaves[MAXE];
        Superblock sbs[MAXE];
        Sample sample;
        Handover ho;
        RunJobs j;
        RunRecord rec;
        RunTally t;
        usec_t flushers_woken; /* RunInput.flushers_woken, CLOCK_MONOTONIC (the pass started at 1000) */
} Bed;

/* n_sync planned entries, then n_skip skipped ones; entry i on superblock i, dev 8:i, group "gI". */
static void bed_init(Bed *b, size_t n_sync, size_t n_skip) {
        static const char *const groups[MAXE] = { "g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7" };
        static const char *const mps[MAXE] = { "/m0", "/m1", "/m2", "/m3", "/m4", "/m5", "/m6", "/m7" };
        static char reason_sync[] = "planned", reason_skip[] = "late pass: fuse left out";

        *b = (Bed) {};
        ASSERT_TRUE(n_sync + n_skip <= MAXE);
        for (size_t i = 0; i < n_sync + n_skip; i++) {
                b->leaves[i] = makedev(8, (unsigned) i);
                b->sbs[i] = (Superblock) {
                        .dev = makedev(8, (unsigned) i),
                        .device = { .is_block = i % 2 == 0,
                                    .leaves = &b->leaves[i],
                                    .n_leaves = 1,
                                    .bdi_name = (char *) "8:0" },
                        .group = (char *) groups[i],
                };
                b->entries[i] = (PlanEntry) {
                        .mount_point = mps[i],
                        .fstype = "ext4",
                        .dev = makedev(8, (unsigned) i),
                        .group = groups[i],
                        .sb = i,
                        .action = i < n_sync ? PLAN_SYNC : PLAN_SKIP,
                        .reason = i < n_sync ? reason_sync : reason_skip,
                        .timeout = 1000,
                        .mount_id = 100 + (int) i,
                        .path = (char *) mps[i],
                        .run_as_uid = (uid_t) -1,
                        .run_as_gid = (gid_t) -1,
                        .bdi_name = "0:52",
                };
        }
        b->plan =
                (Plan) { .entries = b->entries, .n_entries = n_sync + n_skip, .n_sync = n_sync, .t_plan = 3 };
        b->sample = (Sample) {
                .sbs = b->sbs, .n_sbs = n_sync + n_skip, .complete = true, .t_read = 1, .t_sample = 2
        };
}

static void bed_done(Bed *b) {
        run_tally_done(&b->t);
        run_record_done(&b->rec);
        run_jobs_done(&b->j);
        handover_done(&b->ho);
}

static void bed_jobs(Bed *b) {
        ASSERT_OK(run_jobs_build(&b->plan, &b->sample, &b->ho, 10, 11, PROGRESS_HELD_STAT, &b->j));
}

/* Builds the record from the jobs as they are now (after bed_jobs() and hand-set results); unit:
 * the unit's pass's lines, for a late pass (NULL: none). */
static void bed_record_unit(Bed *b, const bool *clean, const char *const *why, const Handover *unit) {
        RunInput in = {
                .plan = &b->plan,
                .sample = &b->sample,
                .jobs = &b->j,
                .fuse_clean = clean,
                .fuse_why = why,
                .trigger = "hook",
                .sleep_action = "suspend",
                .started_realtime = 5,
                .started_monotonic = 1000,
                .deadline = 30,
                .t_execute = 4,
                .flushers_woken = b->flushers_woken,
                .unit = unit,
                .now_boottime = 100 * USEC_PER_MINUTE,
        };

        run_tally_done(&b->t);
        run_record_done(&b->rec);
        ASSERT_OK(run_record_build(&in, &b->rec, &b->t));
}

static void bed_record_with(Bed *b, const bool *clean, const char *const *why) {
        bed_record_unit(b, clean, why, NULL);
}

static void bed_record(Bed *b) {
        bed_record_with(b, NULL, NULL);
}

static void set_result(ExecJob *j, Outcome o, int error, pid_t pid, bool hung, bool stuck) {
        j->outcome = o;
        j->error = error;
        j->duration = 7;
        j->started = o == OUTCOME_TIMEOUT && !pid && !hung ? 0 : 1250; /* not started: 0 */
        j->abandoned_pid = pid;
        j->hung = hung;
        j->stuck = stuck;
}

TEST(jobs_from_plan) {
        Bed b;

        bed_init(&b, 3, 1);
        b.entries[2].namespace_ino = 4026531840; /* another namespace: no "gone" check */
        b.entries[2].namespace_pid = 77;         /* its member: whose mountinfo lists the mount */
        b.entries[1].unlisted = true;            /* a process's open file: no table line */
        b.entries[0].mount_id_unique = 0x80000064;
        b.entries[0].flush_device = "/dev/sda";
        b.entries[0].rt_flush_device = (char *) "/dev/sdb";
        ASSERT_OK(handover_add_stuck(&b.ho, 4242, 99, true, 0, BOOT_ID, "g1"));
        bed_jobs(&b);

        ASSERT_EQ(b.j.n_jobs, 3); /* sync entries only */
        ASSERT_STREQ(b.j.jobs[0].path, "/m0");
        ASSERT_STREQ(b.j.jobs[0].group, "g0");
        ASSERT_STREQ(b.j.jobs[0].flush_device, "/dev/sda");
        ASSERT_STREQ(b.j.jobs[0].rt_flush_device, "/dev/sdb");
        ASSERT_TRUE(!b.j.jobs[1].rt_flush_device);
        ASSERT_EQ(b.j.jobs[0].mount_id, 100);
        ASSERT_EQ(b.j.jobs[0].dev, makedev(8, 0));
        ASSERT_EQ(b.j.jobs[0].run_as_uid, (uid_t) -1);
        ASSERT_TRUE(b.j.jobs[0].gone_check);
        ASSERT_TRUE(!b.j.jobs[2].gone_check);
        /* how the worker tells the planned mount (review G, G2) */
        ASSERT_U64_EQ(b.j.jobs[0].mount_id_unique, 0x80000064);
        ASSERT_U64_EQ(b.j.jobs[1].mount_id_unique, 0);
        ASSERT_EQ(b.j.jobs[0].mountinfo_pid, 0);
        ASSERT_EQ(b.j.jobs[1].mountinfo_pid, -1);
        ASSERT_EQ(b.j.jobs[2].mountinfo_pid, 77);
        /* progress probes: sysfs only for a block device, debugfs always */
        ASSERT_TRUE(b.j.jobs[0].progress == &b.j.probes[0]);
        ASSERT_EQ(b.j.probes[0].sysfs_fd, 10);
        ASSERT_EQ(b.j.probes[1].sysfs_fd, -EBADF);
        ASSERT_EQ(b.j.probes[1].debugfs_fd, 11);
        ASSERT_EQ(b.j.probes[2].leaves[0], makedev(8, 2));

        /* g1 is held by a worker of an earlier pass: not handed to the executor */
        ASSERT_TRUE(!b.j.blocked[0] && b.j.blocked[1] && !b.j.blocked[2]);
        ASSERT_EQ(b.j.blocked[1]->pid, 4242);
        ASSERT_EQ(b.j.jobs[1].outcome, OUTCOME_TIMEOUT);
        ASSERT_TRUE(b.j.jobs[1].hung);
        ASSERT_EQ(b.j.n_run, 2);
        ASSERT_EQ(b.j.run_index[0], 0);
        ASSERT_EQ(b.j.run_index[1], 2);
        ASSERT_STREQ(b.j.run[1].path, "/m2");

        /* results come back to their plan entries */
        b.j.run[1].outcome = OUTCOME_SYNCED;
        b.j.run[0].outcome = OUTCOME_ERROR;
        run_jobs_collect(&b.j);
        ASSERT_EQ(b.j.jobs[0].outcome, OUTCOME_ERROR);
        ASSERT_EQ(b.j.jobs[1].outcome, OUTCOME_TIMEOUT);
        ASSERT_EQ(b.j.jobs[2].outcome, OUTCOME_SYNCED);
        bed_done(&b);

        /* control: a restricted view or an unlisted path is never checked for "gone" */
        bed_init(&b, 2, 0);
        b.sample.view_restricted = true;
        bed_jobs(&b);
        ASSERT_TRUE(!b.j.jobs[0].gone_check && !b.j.jobs[1].gone_check);
        bed_done(&b);
        bed_init(&b, 2, 0);
        b.entries[1].unlisted = true;
        bed_jobs(&b);
        ASSERT_TRUE(b.j.jobs[0].gone_check && !b.j.jobs[1].gone_check);
        ASSERT_EQ(b.j.n_run, 2);
        bed_done(&b);
}

/* Synced, failed, gone, covered, not started; plus a planned skip. */
/* The sample's reasons go into the record cut to RUN_REASON_MAX at a character's start (review AM,
 * AM-1: an nsfs mount 17 KiB deep, any user's, named in a reason, refused the whole record). */
/* How long this boot had been suspended at the pass's start: CLOCK_BOOTTIME less CLOCK_MONOTONIC at
 * the same moment (status tells from it how long the machine slept after the late pass); not
 * recorded without a boot time. */
TEST(record_suspended) {
        Bed b;
        RunInput in;

        bed_init(&b, 1, 0);
        bed_jobs(&b);
        in = (RunInput) { .plan = &b.plan,
                          .sample = &b.sample,
                          .jobs = &b.j,
                          .trigger = "hook",
                          .started_monotonic = 1000,
                          .started_boottime = 6000,
                          .deadline = 30 };
        ASSERT_OK(run_record_build(&in, &b.rec, &b.t));
        ASSERT_U64_EQ(b.rec.started_suspended, 5000);
        run_tally_done(&b.t);
        run_record_done(&b.rec);
        in.started_boottime = 0;
        ASSERT_OK(run_record_build(&in, &b.rec, &b.t));
        ASSERT_U64_EQ(b.rec.started_suspended, USEC_INFINITY);
        /* neither the boot nor the kernel's counts given: not recorded */
        ASSERT_TRUE(!b.rec.boot_id[0] && !b.rec.suspend_counts_known);
        run_tally_done(&b.t);
        run_record_done(&b.rec);
        /* the boot and the counts as given; a count not known: neither */
        SuspendStats st = { .success = 7, .fail = 1 };
        in.boot_id = "0123456789abcdef0123456789abcdef";
        in.suspend = &st;
        ASSERT_OK(run_record_build(&in, &b.rec, &b.t));
        ASSERT_STREQ(b.rec.boot_id, in.boot_id);
        ASSERT_TRUE(b.rec.suspend_counts_known && b.rec.suspend_success == 7 && b.rec.suspend_fail == 1);
        run_tally_done(&b.t);
        run_record_done(&b.rec);
        st.fail = SUSPEND_STATS_UNKNOWN;
        in.boot_id = "";
        ASSERT_OK(run_record_build(&in, &b.rec, &b.t));
        ASSERT_TRUE(!b.rec.boot_id[0] && !b.rec.suspend_counts_known);
        bed_done(&b);
}

TEST(long_reason_cut) {
        _cleanup_free_ char *longest = malloc(20001), *exact = malloc(RUN_REASON_MAX + 1);
        char *why[3];
        Bed b;

        ASSERT_TRUE(longest && exact);
        /* "é" (2 bytes) from the start: the cut falls inside one unless it backs off */
        for (size_t i = 0; i < 20000; i += 2)
                memcpy(longest + i, "\xc3\xa9", 2);
        longest[20000] = 0;
        memset(exact, 'x', RUN_REASON_MAX);
        exact[RUN_REASON_MAX] = 0;
        why[0] = longest;
        why[1] = exact;
        why[2] = (char *) "short";
        bed_init(&b, 1, 0);
        b.sample.complete = false;
        b.sample.incomplete_why = why;
        b.sample.n_incomplete_why = 3;
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        bed_record(&b);

        ASSERT_EQ(b.rec.n_incomplete_why, 3);
        ASSERT_TRUE(strlen(b.rec.incomplete_why[0]) <= RUN_REASON_MAX);
        ASSERT_TRUE(strlen(b.rec.incomplete_why[0]) >= RUN_REASON_MAX - 4);
        ASSERT_TRUE(utf8_is_valid_n(b.rec.incomplete_why[0], strlen(b.rec.incomplete_why[0])));
        ASSERT_TRUE(endswith(b.rec.incomplete_why[0], "\xc3\xa9…"));
        ASSERT_STREQ(b.rec.incomplete_why[1], exact); /* at the bound: whole */
        ASSERT_STREQ(b.rec.incomplete_why[2], "short");
        bed_done(&b);
}

TEST(tallies) {
        Bed b;

        bed_init(&b, 5, 1);
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        b.j.jobs[0].waited = 5;
        set_result(&b.j.jobs[1], OUTCOME_ERROR, EIO, 0, false, false);
        set_result(&b.j.jobs[2], OUTCOME_GONE, EIDRM, 0, false, false);
        set_result(&b.j.jobs[3], OUTCOME_COVERED, EALREADY, 0, false, false);
        set_result(&b.j.jobs[4], OUTCOME_TIMEOUT, 0, 0, false, false);
        bed_record(&b);

        ASSERT_EQ(b.t.n_synced, 1);
        ASSERT_EQ(b.t.n_error, 1);
        ASSERT_EQ(b.t.n_timeout, 1);
        ASSERT_EQ(b.t.n_hung, 0);
        ASSERT_EQ(b.t.n_skipped, 3); /* gone, covered, the planned skip */
        ASSERT_TRUE(b.t.unsynced);
        ASSERT_TRUE(b.t.gone);
        ASSERT_TRUE(b.t.covered); /* the skip is not "uncovered" */
        ASSERT_EQ(b.t.n_left, 2); /* the error and the timeout */
        ASSERT_EQ(b.t.left[0], makedev(8, 1));
        ASSERT_EQ(b.t.left[1], makedev(8, 4));

        ASSERT_STREQ(b.rec.result, "error");
        ASSERT_STREQ(b.rec.trigger, "hook");
        ASSERT_STREQ(b.rec.sleep_action, "suspend");
        ASSERT_EQ(b.rec.started_realtime, 5);
        ASSERT_EQ(b.rec.deadline, 30);
        ASSERT_EQ(b.rec.t_read, 1);
        ASSERT_EQ(b.rec.t_sample, 2);
        ASSERT_EQ(b.rec.t_plan, 3);
        ASSERT_EQ(b.rec.t_execute, 4);
        ASSERT_TRUE(b.rec.has_complete && b.rec.complete);
        ASSERT_EQ(b.rec.n_mounts, 6);
        ASSERT_STREQ(b.rec.mounts[0].outcome, "synced");
        ASSERT_STREQ(b.rec.mounts[0].reason, "planned");
        ASSERT_STREQ(b.rec.mounts[0].action, "sync");
        ASSERT_EQ(b.rec.mounts[0].duration, 7);
        ASSERT_U64_EQ(b.rec.mounts[0].start_offset, 250); /* job start - pass start */
        ASSERT_U64_EQ(b.rec.flushers_woken, 0);           /* not woken */
        b.flushers_woken = 1100;
        bed_record(&b);
        ASSERT_U64_EQ(b.rec.flushers_woken, 100); /* since the pass started */
        b.flushers_woken = 0;
        bed_record(&b);
        ASSERT_U64_EQ(b.rec.mounts[0].writeback_wait, 5);
        ASSERT_U64_EQ(b.rec.mounts[1].writeback_wait, 0); /* control: no wait reported */
        ASSERT_STREQ(b.rec.mounts[1].outcome, "error");
        ASSERT_EQ(b.rec.mounts[1].error, EIO);
        ASSERT_STREQ(b.rec.mounts[2].outcome, "skipped");
        ASSERT_STREQ(b.rec.mounts[2].reason, "gone: unmounted since the plan was made");
        ASSERT_EQ(b.rec.mounts[2].error, 0);
        ASSERT_STREQ(b.rec.mounts[3].outcome, "skipped");
        ASSERT_STREQ(b.rec.mounts[3].reason,
                     "overlay: upperdir verified on its upper layer, synced before it");
        ASSERT_EQ(b.rec.mounts[3].error, 0);
        ASSERT_STREQ(b.rec.mounts[4].outcome, "timeout");
        ASSERT_STREQ(b.rec.mounts[4].reason, "not started before the deadline");
        ASSERT_STREQ(b.rec.mounts[5].outcome, "skipped");
        ASSERT_STREQ(b.rec.mounts[5].action, "skip");
        ASSERT_STREQ(b.rec.mounts[5].reason, "late pass: fuse left out");

        /* control: without the error the result is "timeout", without both "success" */
        set_result(&b.j.jobs[1], OUTCOME_SYNCED, 0, 0, false, false);
        bed_record(&b);
        ASSERT_STREQ(b.rec.result, "timeout");
        ASSERT_EQ(b.t.n_left, 1);
        set_result(&b.j.jobs[4], OUTCOME_SYNCED, 0, 0, false, false);
        set_result(&b.j.jobs[2], OUTCOME_COVERED, EALREADY, 0, false, false);
        bed_record(&b);
        ASSERT_STREQ(b.rec.result, "success");
        ASSERT_TRUE(!b.t.unsynced);
        ASSERT_TRUE(!b.t.gone); /* covered is not gone */
        ASSERT_EQ(b.t.n_synced, 3);
        ASSERT_EQ(b.t.n_left, 0);
        bed_done(&b);
}

/* Review O, O1: a worker stuck on its way to its mount (before syncfs: a dead server above a healthy
 * mount point) is listed under its superblock, "open:MAJ:MIN", not its device group: later passes
 * leave that mount alone and sync the other filesystems of its disk. One that reached syncfs, or was
 * proven hung, keeps blocking the group. */
TEST(stuck_on_the_way_blocks_its_mount_only) {
        ExecJob job = { .group = "8:0", .dev = makedev(8, 1) };
        char key[RUN_STUCK_KEY_MAX];
        Bed b;

        ASSERT_STREQ(run_job_stuck_key(&job, key), "open:8:1");
        job.reached_sync = true;
        ASSERT_STREQ(run_job_stuck_key(&job, key), "8:0");
        job.reached_sync = false, job.hung = true;
        ASSERT_STREQ(run_job_stuck_key(&job, key), "8:0");

        /* entries 0 and 1 on one disk (group g1); a worker of an earlier pass stuck on the way to 1 */
        bed_init(&b, 3, 0);
        b.entries[0].group = "g1";
        ASSERT_OK(handover_add_stuck(&b.ho, 4242, 99, false, 0, BOOT_ID, "open:8:1"));
        bed_jobs(&b);
        ASSERT_TRUE(!b.j.blocked[0] && b.j.blocked[1] && !b.j.blocked[2]);
        ASSERT_EQ(b.j.n_run, 2);
        ASSERT_STREQ(b.j.run[0].path, "/m0");
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        set_result(&b.j.jobs[2], OUTCOME_SYNCED, 0, 0, false, false);
        ASSERT_TRUE(!run_job_hung(&b.j, 1));
        bed_record(&b);
        ASSERT_EQ(b.t.n_timeout, 1);
        ASSERT_TRUE(b.t.unsynced);
        ASSERT_STREQ(b.rec.mounts[1].reason,
                     "busy: not started, worker 4242 of an earlier pass is still in the kernel on its way to "
                     "this mount (above its device: a path through a server that does not answer): left to "
                     "the kernel's sync");
        bed_done(&b);

        /* control: listed under the group, it blocks the whole disk, as a worker in syncfs does */
        bed_init(&b, 3, 0);
        b.entries[0].group = "g1";
        ASSERT_OK(handover_add_stuck(&b.ho, 4242, 99, false, 0, BOOT_ID, "g1"));
        bed_jobs(&b);
        ASSERT_TRUE(b.j.blocked[0] && b.j.blocked[1] && !b.j.blocked[2]);
        bed_done(&b);
}

/* Review U, U1 and U2: a worker stuck on its way to a mount is listed under that path
 * (PlanEntry.open_key: the mount, the FUSE mount on the way to it), not under the superblock's device
 * number. A later pass syncs the superblock through another mount that does not cross that path, and
 * a superblock that got the device number since is not blocked; a mount below the same server, the
 * same mount, and a job whose walk is not known stay blocked (fail closed), as does every job of the
 * device number under an older version's "open:MAJ:MIN". */
TEST(stuck_on_the_way_blocks_its_path) {
        static const char stuck_key[] = "open:8:1@u47,u30";
        const struct {
                const char *key;  /* in the handover */
                dev_t dev;        /* entry 1's superblock now */
                const char *walk; /* and its walk, NULL: not known (unlisted) */
                bool blocked;
        } cases[] = {
                { stuck_key, makedev(8, 1), ",u48,u21,", false },        /* its local mount (U1) */
                { stuck_key, makedev(8, 1), ",u47,u30,u21,", true },     /* the stuck mount itself */
                { stuck_key, makedev(8, 1), ",u49,u30,u21,", true },     /* below the same FUSE mount */
                { stuck_key, makedev(8, 1), ",u49,u47,u30,u21,", true }, /* below the stuck mount */
                { stuck_key, makedev(8, 1), ",u30,u21,", true },         /* the FUSE mount itself */
                { stuck_key, makedev(8, 1), ",u4,u3,u21,", false },      /* "u4" is not "u47"... */
                { stuck_key, makedev(8, 1), ",u470,u300,u21,", false },  /* ...nor "u470" */
                { stuck_key, makedev(8, 1), NULL, true },                /* walk not known: fail closed */
                { stuck_key, makedev(8, 9), NULL, false },               /* ...for that device only */
                { "open:8:1", makedev(8, 1), ",u48,u21,", true },        /* an older version's key */
                { "open:8:1", makedev(8, 9), ",u47,u30,u21,", false },   /* ...names the device only */
                { "open:8:1x", makedev(8, 1), ",u48,u21,", false },      /* malformed: no key */
                { "open:8:1@o8.1.47.00000000000000ab", makedev(8, 1), ",o8.1.47.00000000000000ab,o0.41.30.1,",
                  true }, /* an older kernel's names */
        };

        for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
                Bed b;

                bed_init(&b, 3, 0);
                b.entries[1].dev = b.sbs[1].dev = cases[c].dev;
                b.entries[1].walk = (char *) cases[c].walk;
                b.entries[0].walk = (char *) ",u47,u30,u21,"; /* another device, the stuck mount's path */
                ASSERT_OK(handover_add_stuck(&b.ho, 4242, 99, false, 0, BOOT_ID, cases[c].key));
                bed_jobs(&b);
                if (!!b.j.blocked[1] != cases[c].blocked)
                        fprintf(stderr, "case %zu: blocked %d\n", c, !!b.j.blocked[1]);
                ASSERT_EQ(!!b.j.blocked[1], cases[c].blocked);
                ASSERT_TRUE(!b.j.blocked[2]);
                /* entry 0 (8:0) crosses the stuck path: blocked by that path's key, never by a
                 * device key */
                ASSERT_EQ(!!b.j.blocked[0], cases[c].key == stuck_key);
                ASSERT_EQ(b.j.n_run, 3U - !!b.j.blocked[0] - !!b.j.blocked[1]);
                if (cases[c].blocked) {
                        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
                        set_result(&b.j.jobs[2], OUTCOME_SYNCED, 0, 0, false, false);
                        bed_record(&b);
                        ASSERT_STREQ(
                                b.rec.mounts[1].reason,
                                "busy: not started, worker 4242 of an earlier pass is still in the kernel "
                                "on its way to this mount (above its device: a path through a server that "
                                "does not answer): left to the kernel's sync");
                }
                bed_done(&b);
        }
}

/* The key a worker stuck on its way leaves: its entry's path key; the superblock's without one; its
 * group once it entered syncfs or was proven hung. */
TEST(stuck_key_names_the_path) {
        ExecJob job = { .group = "8:0", .dev = makedev(8, 1), .open_key = "open:8:1@u47,u30" };
        char key[RUN_STUCK_KEY_MAX];

        ASSERT_STREQ(run_job_stuck_key(&job, key), "open:8:1@u47,u30");
        ASSERT_TRUE(run_stuck_open_blocks(run_job_stuck_key(&job, key),
                                          &(ExecJob) { .dev = makedev(9, 9), .walk = ",u47,u1," }));
        job.reached_sync = true;
        ASSERT_STREQ(run_job_stuck_key(&job, key), "8:0");
        job.reached_sync = false, job.open_key = NULL;
        ASSERT_STREQ(run_job_stuck_key(&job, key), "open:8:1");
        /* keys of device groups never block as "open:" ones */
        ASSERT_TRUE(!run_stuck_open_blocks("8:1", &(ExecJob) { .dev = makedev(8, 1), .walk = ",u1," }));
        ASSERT_TRUE(!run_stuck_open_blocks("sb:8:1", &(ExecJob) { .dev = makedev(8, 1) }));
}

/* Blocked by a stuck worker of an earlier pass: hung when that worker was proven hung, else busy. */
TEST(hung_blocked_by_earlier_pass) {
        Bed b;

        bed_init(&b, 2, 0);
        ASSERT_OK(handover_add_stuck(&b.ho, 4242, 99, true, 0, BOOT_ID, "g1"));
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        ASSERT_TRUE(run_job_hung(&b.j, 1));
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 1);
        ASSERT_EQ(b.t.n_timeout, 1);
        ASSERT_TRUE(!b.t.unsynced);
        ASSERT_EQ(b.t.n_left, 0);
        ASSERT_STREQ(b.rec.mounts[1].outcome, "timeout");
        ASSERT_STREQ(
                b.rec.mounts[1].reason,
                "hung: not started, worker 4242 of an earlier pass is still in the kernel on this device");
        ASSERT_EQ(b.rec.mounts[1].abandoned_pid, 0);
        bed_done(&b);

        /* control: the earlier worker was not proven hung: busy, left to the kernel's sync */
        bed_init(&b, 2, 0);
        ASSERT_OK(handover_add_stuck(&b.ho, 4242, 99, false, 0, BOOT_ID, "g1"));
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        ASSERT_TRUE(!run_job_hung(&b.j, 1));
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 0);
        ASSERT_EQ(b.t.n_timeout, 1);
        ASSERT_TRUE(b.t.unsynced);
        ASSERT_EQ(b.t.n_left, 1);
        ASSERT_EQ(b.t.left[0], makedev(8, 1));
        ASSERT_STREQ(b.rec.mounts[1].reason,
                     "busy: not started, worker 4242 of an earlier pass is still in the "
                     "kernel on this device: left to the kernel's sync");
        bed_done(&b);

        /* Review G, G7: proven stuck then, but its counter moved during this pass (or could not be
         * read): it woke up, and the superblock is left to the kernel's sync, not hung. */
        bed_init(&b, 2, 0);
        ASSERT_OK(handover_add_stuck(&b.ho, 4242, 99, true, 0, BOOT_ID, "g1"));
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        ASSERT_TRUE(!run_jobs_blocked_recheck(&b.j, 0, false)); /* not blocked: untouched */
        ASSERT_TRUE(!run_jobs_blocked_recheck(&b.j, 1, true));  /* still: still hung */
        ASSERT_TRUE(run_job_hung(&b.j, 1));
        ASSERT_TRUE(run_jobs_blocked_recheck(&b.j, 1, false));
        ASSERT_TRUE(!run_job_hung(&b.j, 1));
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 0);
        ASSERT_TRUE(b.t.unsynced);
        ASSERT_EQ(b.t.n_left, 1);
        ASSERT_TRUE(!run_knob_facts(&b.t, true, true, false, false).hung);
        ASSERT_TRUE(strstr(b.rec.mounts[1].reason, "woke up: not started, worker 4242"));
        bed_done(&b);
}

/* Abandoned on a device proven stuck: hung while its worker is still stuck; a worker that exited
 * (the device woke up) leaves the mount to the kernel's sync, as does a slow device. */
TEST(hung_abandoned) {
        Bed b;

        bed_init(&b, 1, 0);
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_TIMEOUT, 0, 777, true, true);
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 1);
        ASSERT_TRUE(!b.t.unsynced);
        ASSERT_STREQ(b.rec.result, "timeout");
        ASSERT_EQ(b.rec.mounts[0].abandoned_pid, 777);
        ASSERT_STREQ(b.rec.mounts[0].reason,
                     "hung: its device completed no I/O for the proof window, worker still in the kernel");

        /* abandoned but exited */
        b.j.jobs[0].stuck = false;
        ASSERT_TRUE(!run_job_hung(&b.j, 0));
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 0);
        ASSERT_TRUE(b.t.unsynced);
        ASSERT_EQ(b.t.n_left, 1);
        ASSERT_STREQ(b.rec.mounts[0].reason, "stuck device woke up: left to the kernel's sync");

        /* still stuck, but never proven hung (slow, or no evidence) */
        b.j.jobs[0].stuck = true;
        b.j.jobs[0].hung = false;
        ASSERT_TRUE(!run_job_hung(&b.j, 0));
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 0);
        ASSERT_TRUE(b.t.unsynced);
        ASSERT_STREQ(b.rec.mounts[0].reason,
                     "slow, stuck before syncfs, above its disks (they held no request) or without progress "
                     "evidence: left to the kernel's sync");
        /* ... past syncfs: not "before syncfs" (review R, R5), and a realtime device's flush named */
        b.j.jobs[0].reached_sync = true;
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 0);
        ASSERT_TRUE(b.t.unsynced);
        ASSERT_STREQ(b.rec.mounts[0].reason,
                     "slow, in syncfs: its disks still completed I/O, or there is no progress evidence: left "
                     "to the kernel's sync");
        b.j.jobs[0].rt_flush_device = "/dev/loop9";
        bed_record(&b);
        ASSERT_STREQ(b.rec.mounts[0].reason,
                     "slow, in syncfs or the flush of its realtime device (not watched for progress), or its "
                     "disks still completed I/O: left to the kernel's sync");
        b.j.jobs[0].rt_flush_device = NULL;
        b.j.jobs[0].reached_sync = false;

        /* only a timeout can be hung */
        set_result(&b.j.jobs[0], OUTCOME_ERROR, EIO, 0, true, true);
        ASSERT_TRUE(!run_job_hung(&b.j, 0));
        bed_done(&b);
}

/* Not started behind the stuck worker of its own group: hung while that worker is stuck. */
TEST(hung_behind_group_worker) {
        Bed b;

        bed_init(&b, 3, 0);
        b.entries[1].group = "g0"; /* same device group as entry 0 */
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_TIMEOUT, 0, 777, true, true);
        set_result(&b.j.jobs[1], OUTCOME_TIMEOUT, 0, 0, true, false);
        set_result(&b.j.jobs[2], OUTCOME_SYNCED, 0, 0, false, false);
        ASSERT_TRUE(run_job_hung(&b.j, 1));
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 2);
        ASSERT_EQ(b.t.n_timeout, 2);
        ASSERT_TRUE(!b.t.unsynced);
        ASSERT_STREQ(b.rec.mounts[1].reason, "hung: not started, its device is stuck");

        /* control: the group's worker has exited: both left to the kernel's sync */
        b.j.jobs[0].stuck = false;
        ASSERT_TRUE(!run_job_hung(&b.j, 1));
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 0);
        ASSERT_EQ(b.t.n_left, 2);
        ASSERT_STREQ(b.rec.mounts[1].reason, "not started before the deadline");
        ASSERT_EQ(b.t.n_not_started, 0); /* control: not started in time is a timeout, said so */

        /* no worker could be started for it until the deadline (review O, O7): why, and unsynced */
        b.j.jobs[1].error = EAGAIN;
        bed_record(&b);
        ASSERT_EQ(b.t.n_left, 2);
        /* still a timeout (outcome, exit status), but the summary says "not started" (review AS, AS-5) */
        ASSERT_EQ(b.t.n_timeout, 2);
        ASSERT_EQ(b.t.n_not_started, 1);
        ASSERT_STREQ(b.rec.mounts[1].outcome, "timeout");
        ASSERT_EQ(b.rec.mounts[1].error, EAGAIN);
        ASSERT_STREQ(b.rec.mounts[1].reason, "not started: no worker could be started: Resource temporarily "
                                             "unavailable");
        b.j.jobs[1].error = 0;

        /* control: a stuck worker of another group says nothing about this one */
        b.j.jobs[0].stuck = true;
        b.entries[1].group = "g1";
        b.j.jobs[1].group = "g1";
        ASSERT_TRUE(!run_job_hung(&b.j, 1));
        bed_done(&b);
}

/* Review J (mutation R15): a group whose first worker was abandoned slow (never proven stuck), and
 * whose next worker was then proven stuck: the jobs behind the stuck one are hung while that worker
 * is in the kernel, whatever became of the slow one; and left to the kernel's sync once it is not,
 * even while the slow one still is. */
TEST(hung_behind_second_group_worker) {
        Bed b;

        bed_init(&b, 3, 0);
        b.entries[1].group = b.entries[2].group = "g0";
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_TIMEOUT, 0, 776, false, false); /* slow, exited since */
        set_result(&b.j.jobs[1], OUTCOME_TIMEOUT, 0, 777, true, true);   /* proven stuck */
        set_result(&b.j.jobs[2], OUTCOME_TIMEOUT, 0, 0, true, false);    /* not started behind it */
        ASSERT_TRUE(run_job_hung(&b.j, 2));
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 2);
        ASSERT_EQ(b.t.n_left, 1); /* the slow one's mount only */
        ASSERT_EQ(b.t.left[0], makedev(8, 0));

        /* the stuck worker woke up, the slow one is still in the kernel: not hung */
        b.j.jobs[0].stuck = true;
        b.j.jobs[1].stuck = false;
        ASSERT_TRUE(!run_job_hung(&b.j, 2));
        bed_record(&b);
        ASSERT_EQ(b.t.n_hung, 0);
        ASSERT_EQ(b.t.n_left, 3);
        bed_done(&b);
}

/* A late pass that left a mount out: not covered, unless the FUSE evidence proves it clean. */
TEST(knob_facts_late_left_out) {
        const char *why[3] = {};
        bool clean[3] = {};
        KnobFacts f;
        Bed b;
        int v = -1;

        bed_init(&b, 1, 2);
        b.entries[2].uncovered = true;
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        bed_record(&b);
        ASSERT_TRUE(!b.t.covered);
        ASSERT_EQ(b.t.n_uncovered, 1);
        ASSERT_EQ(b.t.first_uncovered, 2);
        ASSERT_EQ(b.t.n_skipped, 2);
        f = run_knob_facts(&b.t, true, true, false, false);
        ASSERT_TRUE(!f.unsynced && !f.hung && f.complete && !f.covered);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &f, &v), 0); /* kernel's sync stays on */

        /* control: nothing left out: covered, and auto turns the kernel's sync off */
        b.entries[2].uncovered = false;
        bed_record(&b);
        ASSERT_TRUE(b.t.covered);
        ASSERT_EQ(b.t.n_uncovered, 0);
        f = run_knob_facts(&b.t, true, true, false, false);
        ASSERT_TRUE(f.covered);
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &f, &v), 1);
        ASSERT_EQ(v, 0);
        /* the unit's pass is never "covered": writes may follow it */
        ASSERT_TRUE(!run_knob_facts(&b.t, true, false, false, false).covered);

        /* a plain FUSE mount left out, proven clean: covered, and the record says why */
        b.entries[2].uncovered = true;
        b.entries[2].fuse_evidence = true;
        clean[2] = true;
        bed_record_with(&b, clean, why);
        ASSERT_TRUE(b.t.covered);
        ASSERT_STREQ(
                b.rec.mounts[2].reason,
                "late pass: FUSE, proven clean: no dirty inode on its bdi 0:52, no page under writeback");
        /* not proven clean: uncovered, with the reason appended */
        clean[2] = false;
        why[2] = "writeback lists not empty";
        bed_record_with(&b, clean, why);
        ASSERT_TRUE(!b.t.covered);
        ASSERT_EQ(b.t.first_uncovered, 2);
        ASSERT_STREQ(b.rec.mounts[2].reason,
                     "late pass: fuse left out; FUSE, not proven clean: writeback lists not empty");

        /* gone makes the view incomplete; carried makes it unsynced; an earlier hung worker, hung */
        f = run_knob_facts(&b.t, false, true, false, false);
        ASSERT_TRUE(!f.complete);
        set_result(&b.j.jobs[0], OUTCOME_GONE, EIDRM, 0, false, false);
        bed_record(&b);
        f = run_knob_facts(&b.t, true, true, false, false);
        ASSERT_TRUE(!f.complete && !f.unsynced && !f.hung);
        f = run_knob_facts(&b.t, true, true, true, true);
        ASSERT_TRUE(f.unsynced && f.hung);
        bed_done(&b);
}

/* run_unsynced_carried() on a late pass whose jobs are these (none held by an earlier pass). */
static bool carried(const Handover *h, ExecJob *jobs, size_t n, usec_t now_boottime) {
        const StuckWorker *blocked[MAXE] = {};
        RunJobs j = { .jobs = jobs, .blocked = blocked, .n_jobs = n };

        ASSERT_TRUE(n <= MAXE);
        return run_unsynced_carried(h, &j, now_boottime);
}

TEST(handover_inputs) {
        const usec_t boot = 100 * USEC_PER_MINUTE;
        dev_t left[2] = { makedev(8, 1), makedev(8, 3) };
        ExecJob jobs[2] = {
                { .dev = makedev(8, 1), .outcome = OUTCOME_SYNCED },
                { .dev = makedev(8, 3), .outcome = OUTCOME_TIMEOUT },
        };
        Handover h = {};

        ASSERT_TRUE(!run_earlier_hung(&h));
        ASSERT_OK(handover_add_stuck(&h, 11, 1, false, boot, BOOT_ID, "g0"));
        ASSERT_TRUE(!run_earlier_hung(&h));
        ASSERT_OK(handover_add_stuck(&h, 12, 1, true, boot, BOOT_ID, "g1"));
        ASSERT_TRUE(run_earlier_hung(&h));

        /* the unit's pass replaces what an earlier one left */
        ASSERT_OK(handover_add_unsynced(&h, makedev(9, 9), boot));
        run_handover_unsynced(&h, left, 2, boot);
        ASSERT_EQ(h.n_unsynced, 2);
        ASSERT_EQ(h.unsynced[0], makedev(8, 1));
        ASSERT_EQ(h.unsynced[1], makedev(8, 3));

        /* the late pass synced 8:1 but not 8:3: carried */
        ASSERT_TRUE(carried(&h, jobs, 2, boot + 1));
        jobs[1].outcome = OUTCOME_SYNCED;
        ASSERT_TRUE(!carried(&h, jobs, 2, boot + 1));
        /* 8:3 on a device the late pass proved stuck, its worker still in the kernel: the kernel's
         * sync would block there, not write it; not carried (the knob follows KnobFacts.hung) */
        set_result(&jobs[1], OUTCOME_TIMEOUT, 0, 4243, true, true);
        ASSERT_TRUE(!carried(&h, jobs, 2, boot + 1));
        jobs[1].stuck = false; /* control: the worker ended, the device woke up */
        ASSERT_TRUE(carried(&h, jobs, 2, boot + 1));
        jobs[1].stuck = true, jobs[1].hung = false; /* control: slow, not proven stuck */
        ASSERT_TRUE(carried(&h, jobs, 2, boot + 1));
        /* control: stale lines (an older sleep) carry nothing */
        jobs[1].outcome = OUTCOME_ERROR;
        ASSERT_TRUE(carried(&h, jobs, 2, boot + HANDOVER_UNSYNCED_MAX_AGE));
        ASSERT_TRUE(!carried(&h, jobs, 2, boot + HANDOVER_UNSYNCED_MAX_AGE + 1));
        /* review J (mutation R18): a stale line before a fresh one does not end the look */
        handover_clear_unsynced(&h);
        ASSERT_OK(handover_add_unsynced(&h, makedev(9, 9), boot - HANDOVER_UNSYNCED_MAX_AGE - 1));
        ASSERT_OK(handover_add_unsynced(&h, makedev(8, 3), boot));
        ASSERT_TRUE(carried(&h, jobs, 2, boot + 1));

        run_handover_unsynced(&h, left, 0, boot);
        ASSERT_EQ(h.n_unsynced, 0);
        ASSERT_TRUE(!carried(&h, jobs, 2, boot));
        handover_done(&h);
}

/* Review G, G1: the unit's pass lists what it synced; the late pass leans on its record only for the
 * mounts it left out that the record lists (synced or unsynced). A network mount made since the
 * unit's pass is on neither list: its record does not stand for it. */
TEST(unit_record_lists_what_it_saw) {
        const usec_t boot = 100 * USEC_PER_MINUTE;
        ExecJob jobs[4] = {
                { .dev = makedev(0, 60), .mount_id_unique = 0x80000100, .outcome = OUTCOME_SYNCED },
                { .dev = makedev(0, 60), .outcome = OUTCOME_SYNCED }, /* a second mount: listed once */
                { .dev = makedev(8, 1), .outcome = OUTCOME_COVERED },
                { .dev = makedev(8, 3), .outcome = OUTCOME_ERROR }, /* on the "unsynced" list */
        };
        RunJobs j = { .jobs = jobs, .n_jobs = 4 };
        dev_t left[1] = { makedev(8, 3) };
        Handover h = {};
        Bed b;

        run_handover_unsynced(&h, left, 1, boot);
        run_handover_synced(&h, &j, boot);
        ASSERT_EQ(h.n_synced, 2);
        ASSERT_EQ(h.synced[0], makedev(0, 60));
        ASSERT_U64_EQ(h.synced_mount[0], 0x80000100);
        ASSERT_EQ(h.synced[1], makedev(8, 1));
        /* Review H, H3: 0:60 through a mount the superblock still has, or one it no longer has
         * (the number given to another filesystem since: not seen) */
        ASSERT_TRUE(handover_unit_saw(&h, makedev(0, 60), (const uint64_t[]) { 0, 0x80000100 }, 2, boot + 1));
        ASSERT_TRUE(!handover_unit_saw(&h, makedev(0, 60), (const uint64_t[]) { 0x80000200 }, 1, boot + 1));
        ASSERT_TRUE(!handover_unit_saw(&h, makedev(0, 60), NULL, 0, boot + 1)); /* no mount now */
        ASSERT_TRUE(handover_unit_saw(&h, makedev(8, 1), NULL, 0, boot + 1));   /* its mount not known */
        ASSERT_TRUE(handover_unit_saw(&h, makedev(8, 3), NULL, 0, boot + 1));   /* left unsynced: seen */
        ASSERT_TRUE(!handover_unit_saw(&h, makedev(0, 61), NULL, 0, boot + 1));
        ASSERT_TRUE(!handover_unit_saw(&h, makedev(0, 60), (const uint64_t[]) { 0x80000100 }, 1,
                                       boot + HANDOVER_UNSYNCED_MAX_AGE + 1));

        /* the late pass left out entry 2 (a network mount), dev 8:2 in the bed: not on the lists */
        bed_init(&b, 1, 2);
        b.entries[2].uncovered = true;
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        bed_record_unit(&b, NULL, NULL, &h);
        ASSERT_TRUE(b.t.unit_unseen);
        /* control: the unit's pass synced it */
        ASSERT_OK(handover_add_synced(&h, makedev(8, 2), 0, boot));
        bed_record_unit(&b, NULL, NULL, &h);
        ASSERT_TRUE(!b.t.unit_unseen);
        /* control: no unit's record given (not a late pass): nothing said */
        bed_record_unit(&b, NULL, NULL, NULL);
        ASSERT_TRUE(!b.t.unit_unseen);
        bed_done(&b);

        /* a full list: what does not fit is not listed (the late pass keeps the kernel's sync on) */
        handover_clear_unsynced(&h);
        for (unsigned k = 0; k < HANDOVER_ENTRIES_MAX; k++)
                ASSERT_OK(handover_add_synced(&h, makedev(1, k), 0, boot));
        run_handover_synced(&h, &j, boot);
        ASSERT_EQ(h.n_synced, HANDOVER_ENTRIES_MAX);
        ASSERT_TRUE(!handover_unit_saw(&h, makedev(0, 60), NULL, 0, boot + 1));
        handover_done(&h);
}

/* The thirty-sixth session: a user's plain FUSE mount the main pass skipped proven clean is on the
 * unit's record as synced (its sync would have done nothing), once per superblock; other skipped
 * entries are not. Without it, a late pass that leaves the mount out and cannot prove it clean itself
 * (a device proven stuck keeps pages under writeback) keeps the knob on, over the hung device. */
TEST(unit_record_lists_proven_clean) {
        const usec_t boot = 100 * USEC_PER_MINUTE;
        PlanEntry entries[5] = {
                { .dev = makedev(8, 1), .action = PLAN_SYNC },
                { .dev = makedev(0, 61),
                  .action = PLAN_SKIP,
                  .proven_clean = true,
                  .mount_id_unique = 0x80000061 },
                { .dev = makedev(0, 61), .action = PLAN_SKIP, .proven_clean = true }, /* its second mount */
                { .dev = makedev(0, 62), .action = PLAN_SKIP, .uncovered = true, .skip_rule = true },
                { .dev = makedev(0, 24), .action = PLAN_SKIP }, /* a pseudo filesystem */
        };
        Plan p = { .entries = entries, .n_entries = 5, .n_sync = 1 };
        Handover h = {};

        run_handover_proven_clean(&h, &p, boot);
        ASSERT_EQ(h.n_synced, 1);
        ASSERT_EQ(h.synced[0], makedev(0, 61));
        ASSERT_U64_EQ(h.synced_mount[0], 0x80000061);
        ASSERT_TRUE(handover_unit_saw(&h, makedev(0, 61), (const uint64_t[]) { 0x80000061 }, 1, boot + 1));
        ASSERT_TRUE(!handover_unit_saw(&h, makedev(0, 62), NULL, 0, boot + 1));
        handover_done(&h);
}

/* Review finding (stop 26, F1): a superblock skipped by an Action=skip rule is synced by no pass,
 * so the unit's pass hands it to the late pass as unsynced; with the unit's record alone the late
 * pass would turn the kernel's sync off over it (off; auto with a hung device). */
TEST(skip_rule_handed_over) {
        const usec_t boot = 100 * USEC_PER_MINUTE;
        ExecJob late_jobs[1] = { { .dev = makedev(8, 0), .outcome = OUTCOME_SYNCED } };
        Handover h = {};
        KnobFacts f;
        Bed b;
        int v = -1;

        /* the unit's pass: 8:0 synced, 8:1 skipped by rule (its primary mount), 8:2 a duplicate */
        bed_init(&b, 1, 2);
        b.entries[1].uncovered = b.entries[1].skip_rule = b.entries[1].primary = true;
        b.entries[2].uncovered = b.entries[2].skip_rule = true;
        b.entries[2].dev = makedev(8, 1);
        bed_jobs(&b);
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        bed_record(&b);
        ASSERT_TRUE(b.t.unsynced);                  /* its only chance is the kernel's sync */
        ASSERT_EQ(b.t.n_error + b.t.n_timeout, 0U); /* not an error: the run did what it was told */
        ASSERT_EQ(b.t.n_left, 1);
        ASSERT_EQ(b.t.left[0], makedev(8, 1));
        run_handover_unsynced(&h, b.t.left, b.t.n_left, boot);
        ASSERT_OK(handover_set_unit_pass(&h, boot, "0123456789abcdef0123456789abcdef",
                                         "00112233445566778899aabbccddeeff"));

        /* the late pass syncs 8:0 and leaves 8:1 out: carried, the kernel's sync stays on */
        ASSERT_TRUE(carried(&h, late_jobs, 1, boot + 1));
        f = (KnobFacts) { .unsynced = true, .complete = true, .unit_pass = true };
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &f, &v), 0);
        f.hung = true;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &f, &v), 0);
        /* control: without the carried superblock both modes turn it off */
        f.unsynced = false;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &f, &v), 1);
        f.hung = false;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &f, &v), 1);

        /* The late pass's own rule skip (a stick mounted since the unit's pass, on no list): the
         * record of the unit's pass does not let it go (review of the fix, stop 26) */
        f = run_knob_facts(&b.t, true, true, false, false);
        f.unit_pass = true;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_OFF, &f, &v), 0);
        f.hung = true;
        ASSERT_EQ(knob_decide(SYNC_ON_SUSPEND_AUTO, &f, &v), 0);

        /* control: a skip that is no rule's (late scope, network) is not listed */
        b.entries[1].skip_rule = b.entries[2].skip_rule = false;
        bed_record(&b);
        ASSERT_EQ(b.t.n_left, 0);
        ASSERT_TRUE(!b.t.unsynced);
        handover_done(&h);
        bed_done(&b);
}

/* More unsynced superblocks than the handover holds: the last line becomes 0:0, which no pass
 * syncs, so the late pass keeps the kernel's sync on. */
TEST(handover_unsynced_full) {
        size_t n = HANDOVER_ENTRIES_MAX + 1;
        _cleanup_free_ dev_t *left = calloc(n, sizeof(dev_t));
        ExecJob jobs[1] = { { .dev = makedev(8, 1), .outcome = OUTCOME_SYNCED } };
        Handover h = {};

        ASSERT_TRUE(left);
        for (size_t i = 0; i < n; i++)
                left[i] = makedev(8, 1);
        run_handover_unsynced(&h, left, n - 1, 0);
        ASSERT_EQ(h.n_unsynced, HANDOVER_ENTRIES_MAX);
        ASSERT_EQ(h.unsynced[HANDOVER_ENTRIES_MAX - 1], makedev(8, 1)); /* control: it fits */
        ASSERT_TRUE(!carried(&h, jobs, 1, 0));
        run_handover_unsynced(&h, left, n, 0);
        ASSERT_EQ(h.n_unsynced, HANDOVER_ENTRIES_MAX);
        ASSERT_EQ(h.unsynced[HANDOVER_ENTRIES_MAX - 1], 0);
        ASSERT_TRUE(carried(&h, jobs, 1, 0));
        handover_done(&h);
}

/* WritebackFirst=: which jobs wait for their device's writeback, and whether to wake the flushers. */
TEST(settle) {
        const uint64_t slack = 128 * 1024;
        Bed b;

        bed_init(&b, 4, 0);
        for (size_t i = 0; i < 4; i++) {
                b.sbs[i].has_bdi_stats = true;
                b.sbs[i].bdi.present = 1U << BDI_STAT_RECLAIMABLE;
        }
        b.sbs[0].bdi.value[BDI_STAT_RECLAIMABLE] = 4 << 20; /* dirty */
        b.sbs[1].fs_class = FS_CLASS_FUSE;                  /* never waits */
        b.sbs[1].bdi.value[BDI_STAT_RECLAIMABLE] = 4 << 20;
        b.sbs[3].has_bdi_stats = false; /* no evidence: never waits */
        bed_jobs(&b);
        ASSERT_TRUE(run_jobs_settle(&b.j, &b.plan, &b.sample, slack));
        ASSERT_EQ(b.j.jobs[0].settle, SETTLE_IN_FLIGHT);
        ASSERT_EQ(b.j.jobs[1].settle, SETTLE_NONE);
        ASSERT_EQ(b.j.jobs[2].settle, SETTLE_IN_FLIGHT);
        ASSERT_EQ(b.j.jobs[3].settle, SETTLE_NONE);
        ASSERT_EQ(b.j.run[0].settle, SETTLE_IN_FLIGHT); /* what the executor gets */
        run_jobs_settle_all(&b.j);
        ASSERT_EQ(b.j.run[0].settle, SETTLE_ALL);
        ASSERT_EQ(b.j.jobs[2].settle, SETTLE_ALL);
        ASSERT_EQ(b.j.jobs[1].settle, SETTLE_NONE);
        ASSERT_EQ(b.j.jobs[3].settle, SETTLE_NONE);
        bed_done(&b);

        /* control: only a FUSE device is dirty, or the dirt is within the counters' error: no wake-up */
        bed_init(&b, 2, 0);
        b.sbs[0].has_bdi_stats = b.sbs[1].has_bdi_stats = true;
        b.sbs[0].bdi.present = b.sbs[1].bdi.present = 1U << BDI_STAT_RECLAIMABLE;
        b.sbs[0].bdi.value[BDI_STAT_RECLAIMABLE] = slack;
        b.sbs[1].fs_class = FS_CLASS_FUSE;
        b.sbs[1].bdi.value[BDI_STAT_RECLAIMABLE] = 4 << 20;
        bed_jobs(&b);
        ASSERT_TRUE(!run_jobs_settle(&b.j, &b.plan, &b.sample, slack));
        ASSERT_EQ(b.j.jobs[0].settle, SETTLE_IN_FLIGHT);
        bed_done(&b);

        /* control: without debugfs nothing waits; a job held by an earlier pass's worker neither */
        bed_init(&b, 2, 0);
        b.sbs[0].has_bdi_stats = b.sbs[1].has_bdi_stats = true;
        ASSERT_OK(handover_add_stuck(&b.ho, 4242, 99, true, 0, BOOT_ID, "g1"));
        bed_jobs(&b);
        b.j.probes[0].debugfs_fd = -EBADF;
        ASSERT_TRUE(!run_jobs_settle(&b.j, &b.plan, &b.sample, slack));
        ASSERT_EQ(b.j.jobs[0].settle, SETTLE_NONE);
        ASSERT_EQ(b.j.jobs[1].settle, SETTLE_NONE);
        bed_done(&b);
}

/* DeferCommit=: which jobs are left to the late pass (no worker: they leave run[]), and what the
 * record and the handover say of them. */
TEST(defer) {
        static char upper[] = "/m0/upper";
        Bed b;

        bed_init(&b, 4, 0);
        for (size_t i = 0; i < 4; i++)
                b.sbs[i].has_bdi_stats = true;
        b.entries[0].late_commit = b.entries[1].late_commit = b.entries[2].late_commit = true;
        b.sbs[2].has_bdi_stats = false; /* control: no wait, nobody woke its flushers: never deferred */
        /* entry 3 (not late_commit) is an overlay whose upper layer is entry 1 */
        b.entries[3].covered_if_path = upper;
        b.entries[3].covered_if_dev = b.entries[1].dev;
        bed_jobs(&b);
        (void) run_jobs_settle(&b.j, &b.plan, &b.sample, 0);
        ASSERT_EQ(b.j.n_run, 4U);
        ASSERT_EQ(run_jobs_defer(&b.j, &b.plan), 1U);
        ASSERT_EQ(b.j.jobs[0].outcome, OUTCOME_DEFERRED);
        ASSERT_EQ(b.j.jobs[0].error, 0);
        /* what the executor gets: the others, in their order, each with its index */
        ASSERT_EQ(b.j.n_run, 3U);
        for (size_t k = 0; k < 3; k++) {
                ASSERT_EQ(b.j.run_index[k], k + 1);
                ASSERT_STREQ(b.j.run[k].path, b.j.jobs[k + 1].path);
                ASSERT_EQ(b.j.jobs[k + 1].outcome, OUTCOME_PENDING);
        }
        /* entry 1: the overlay counts on it being synced before it; entry 2: control above */

        /* the record: deferred, error 0, listed for the handover but not unsynced */
        for (size_t k = 0; k < 3; k++) /* as the executor would */
                set_result(&b.j.run[k], OUTCOME_SYNCED, 0, 0, false, false);
        run_jobs_collect(&b.j); /* the results back into jobs[]: job 0 stays deferred */
        ASSERT_EQ(b.j.jobs[0].outcome, OUTCOME_DEFERRED);
        ASSERT_EQ(b.j.jobs[3].outcome, OUTCOME_SYNCED);
        bed_record(&b);
        ASSERT_STREQ(b.rec.mounts[0].outcome, "deferred");
        ASSERT_EQ(b.rec.mounts[0].error, 0);
        ASSERT_TRUE(strstr(b.rec.mounts[0].reason, "late pass") != NULL);
        ASSERT_STREQ(b.rec.result, "success");
        ASSERT_EQ(b.t.n_deferred, 1U);
        ASSERT_EQ(b.t.n_synced, 3U);
        ASSERT_TRUE(!b.t.unsynced);
        ASSERT_EQ(b.t.n_left, 1U);
        ASSERT_EQ(b.t.left[0], b.entries[0].dev);
        /* control: synced, it is on no list */
        set_result(&b.j.jobs[0], OUTCOME_SYNCED, 0, 0, false, false);
        bed_record(&b);
        ASSERT_STREQ(b.rec.mounts[0].outcome, "synced");
        ASSERT_EQ(b.t.n_left, 0U);
        ASSERT_EQ(b.t.n_deferred, 0U);
        bed_done(&b);

        /* a late pass that does not sync the deferred superblock carries it: the knob stays on */
        {
                dev_t left[1] = { makedev(8, 0) };
                ExecJob late[1] = { { .dev = makedev(8, 0), .outcome = OUTCOME_ERROR } };
                Handover h = {};

                run_handover_unsynced(&h, left, 1, 0);
                ASSERT_TRUE(carried(&h, late, 1, 1));
                late[0].outcome = OUTCOME_SYNCED; /* control */
                ASSERT_TRUE(!carried(&h, late, 1, 1));
                handover_done(&h);
        }
}

/* The journal's note of a mount that did not sync (review B, F6): for a mount point longer than
 * PATH_MAX the reason came after 2048 bytes of path and was cut off with the line (log.h,
 * LOG_LINE_MAX). Formatted into a buffer of that size, as the run verb does: the reason is there,
 * at the end, with the start and the end of the path. */
#define NOTE_LINE_MAX 2048U /* LOG_LINE_MAX */

static void note_check(const RunJobs *j, size_t i, const char *mp, RunNote want, const char *want_end) {
        char msg[NOTE_LINE_MAX];
        size_t n, e = strlen(want_end);

        memset(msg, 'X', sizeof msg);
        ASSERT_EQ(run_job_note(j, i, mp, msg, sizeof msg), want);
        n = strnlen(msg, sizeof msg);
        ASSERT_TRUE(n < sizeof msg);
        ASSERT_TRUE(n > e && streq(msg + n - e, want_end));
        ASSERT_TRUE(strncmp(msg, "Sync of ", 8) == 0);
        if (strlen(mp) <= RUN_NOTE_PATH_MAX) {
                ASSERT_TRUE(strncmp(msg + 8, mp, strlen(mp)) == 0);
                return;
        }
        /* shortened in the middle: its head, "…", its tail */
        ASSERT_TRUE(strncmp(msg + 8, mp, 256) == 0);
        ASSERT_TRUE(strstr(msg, "\u2026") != NULL);
        ASSERT_TRUE(strncmp(msg + n - e - 256, mp + strlen(mp) - 256, 256) == 0);
        ASSERT_TRUE(n <= 8 + RUN_NOTE_PATH_MAX + e);
}

TEST(job_note) {
        StuckWorker earlier = { .pid = 4242 };
        const StuckWorker *blocked[2] = { NULL, NULL };
        ExecJob jobs[2] = {};
        RunJobs j = { .jobs = jobs, .blocked = blocked, .n_jobs = 2 };
        char mp[5001], utf8[5001], msg[NOTE_LINE_MAX];

        /* a 4998-byte mount point: 24 components of 208 bytes, then "/m/end" */
        for (size_t k = 0; k < 24; k++) {
                mp[k * 208] = '/';
                memset(mp + k * 208 + 1, 'a' + (int) k, 207);
        }
        memcpy(mp + 24 * 208, "/m/end", 6);
        mp[24 * 208 + 6] = '\0';
        ASSERT_EQ(strlen(mp), 24U * 208U + 6U);

        jobs[0] = (ExecJob) { .outcome = OUTCOME_ERROR, .error = ENAMETOOLONG };
        note_check(&j, 0, mp, RUN_NOTE_ERROR, " failed: File name too long");
        note_check(&j, 0, "/m0", RUN_NOTE_ERROR, " failed: File name too long"); /* control: short */
        ASSERT_TRUE(run_job_note(&j, 0, "/m0", msg, sizeof msg) == RUN_NOTE_ERROR &&
                    streq(msg, "Sync of /m0 failed: File name too long"));
        jobs[0].error = 0; /* no error recorded: EIO, as always */
        note_check(&j, 0, mp, RUN_NOTE_ERROR, " failed: Input/output error");
        jobs[0].outcome = OUTCOME_SKIPPED;
        note_check(&j, 0, mp, RUN_NOTE_ERROR, " failed: Input/output error");

        jobs[0] = (ExecJob) { .outcome = OUTCOME_TIMEOUT, .abandoned_pid = 77 };
        note_check(&j, 0, mp, RUN_NOTE_TIMEOUT, " timed out, worker 77 abandoned.");
        jobs[0].abandoned_pid = 0;
        note_check(&j, 0, mp, RUN_NOTE_TIMEOUT, " not started before the deadline.");
        jobs[0].error = EAGAIN; /* no worker could be started (review O, O7) */
        note_check(&j, 0, mp, RUN_NOTE_TIMEOUT,
                   " not started: no worker could be started: Resource temporarily "
                   "unavailable.");
        jobs[0].error = 0;
        blocked[0] = &earlier;
        note_check(&j, 0, mp, RUN_NOTE_TIMEOUT,
                   " not started: worker 4242 of an earlier pass is still stuck on its device.");

        /* nothing to say: buf untouched */
        snprintf(msg, sizeof msg, "untouched");
        for (Outcome o = OUTCOME_SYNCED; o < _OUTCOME_MAX; o++) {
                if (o != OUTCOME_SYNCED && o != OUTCOME_GONE && o != OUTCOME_COVERED && o != OUTCOME_DEFERRED)
                        continue;
                jobs[1] = (ExecJob) { .outcome = o };
                ASSERT_EQ(run_job_note(&j, 1, mp, msg, sizeof msg), RUN_NOTE_NONE);
                ASSERT_STREQ(msg, "untouched");
        }

        /* two-byte characters: the cuts keep them whole, the note is valid UTF-8 */
        utf8[0] = '/';
        for (size_t k = 1; k + 1 < 5000; k += 2)
                memcpy(utf8 + k, "\xc3\xa9", 2); /* é */
        utf8[4999] = '\0';
        jobs[0] = (ExecJob) { .outcome = OUTCOME_ERROR, .error = ENAMETOOLONG };
        ASSERT_EQ(run_job_note(&j, 0, utf8, msg, sizeof msg), RUN_NOTE_ERROR);
        ASSERT_TRUE(utf8_is_valid_n(msg, strlen(msg)));
        ASSERT_TRUE(strstr(msg, "failed: File name too long") != NULL);

        /* a user's mount point with a line and a terminal title of its own in it, escaped as in the
         * tables (review Q, M3); and 5000 bytes of newlines (20000 escaped) still end in the reason */
        ASSERT_EQ(run_job_note(&j, 0, "/home/u/x\nSync of / synced\x1b]0;t\x07\\", msg, sizeof msg),
                  RUN_NOTE_ERROR);
        ASSERT_STREQ(msg,
                     "Sync of /home/u/x\\nSync of / synced\\x1b]0;t\\x07\\\\ failed: File name too long");
        memset(utf8 + 1, '\n', 4998);
        memset(msg, 'X', sizeof msg);
        ASSERT_EQ(run_job_note(&j, 0, utf8, msg, sizeof msg), RUN_NOTE_ERROR);
        ASSERT_TRUE(strlen(msg) <= 8 + RUN_NOTE_PATH_MAX + 27);
        ASSERT_TRUE(strncmp(msg, "Sync of /\\n\\n", 13) == 0 && !strchr(msg, '\n'));
        ASSERT_TRUE(strlen(msg) > 31 && streq(msg + strlen(msg) - 31, "\\n\\n failed: File name too long"));

        /* The same for any line naming a mount point (the knob's, review R, R4): escaped, then
         * shortened, never longer than RUN_NOTE_PATH_MAX; short ones whole. */
        {
                char shown[RUN_NOTE_PATH_MAX + 1];

                ASSERT_TRUE(strlen(run_note_path(utf8, shown)) <= RUN_NOTE_PATH_MAX);
                ASSERT_TRUE(strstr(shown, "\u2026") && !strchr(shown, '\n'));
                ASSERT_STREQ(run_note_path("/m\x1b[2J", shown), "/m\\x1b[2J");
        }
}

int main(void) {
        RUN(record_suspended);
        RUN(long_reason_cut);
        RUN(jobs_from_plan);
        RUN(settle);
        RUN(defer);
        RUN(tallies);
        RUN(hung_blocked_by_earlier_pass);
        RUN(stuck_on_the_way_blocks_its_mount_only);
        RUN(stuck_on_the_way_blocks_its_path);
        RUN(stuck_key_names_the_path);
        RUN(hung_abandoned);
        RUN(hung_behind_group_worker);
        RUN(hung_behind_second_group_worker);
        RUN(knob_facts_late_left_out);
        RUN(handover_inputs);
        RUN(unit_record_lists_what_it_saw);
        RUN(unit_record_lists_proven_clean);
        RUN(handover_unsynced_full);
        RUN(skip_rule_handed_over);
        RUN(job_note);
        return 0;
}
