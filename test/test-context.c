/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * context.c, the steps every verb shares: the configuration read (bounded) into the parsed policy
 * and the view the verbs act on, command-line overrides kept out of the parsed policy, the error an
 * explicitly named --config= leaves, the bound on the read, and a full prepare (policy, sample,
 * plan) on the laptop fixture root. Logs go to stderr.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf-bounds.h"
#include "conf-read.h"
#include "shared/bounded-child.h"
#include "context.h"
#include "log.h"
#include "message-ids.h"
#include "tests.h"

#define CONFIG_DIR FIXTURES_DIR "/config"

static Args args(const char *root) {
        return (Args) {
                .state_dir = "/nonexistent",
                .json = JSON_OFF,
                .legend = true,
                .deadline = USEC_INFINITY,
                .deadline_max = USEC_INFINITY,
                .trigger = "manual",
                .root = root,
                .sysfs = "/nonexistent",
                .debugfs = "/nonexistent",
                .started = now(CLOCK_MONOTONIC),
        };
}

/* --deadline= is what the verbs use; the parsed policy keeps the file's value and origin. */
TEST(overrides_not_in_config) {
        _cleanup_(context_done) Context c = CONTEXT_NULL, d = CONTEXT_NULL;
        Args a = args(CONFIG_DIR "/dropins");

        ASSERT_OK(context_load_policy(&a, &c));
        ASSERT_U64_EQ(c.config->deadline, 20 * USEC_PER_SEC);
        ASSERT_TRUE(c.policy == &c.effective);
        ASSERT_U64_EQ(c.policy->deadline, 20 * USEC_PER_SEC);
        ASSERT_STREQ(c.policy->o_deadline.file, "/etc/suspend-sync.conf");
        ASSERT_EQ(c.config_error, 0);

        a.deadline = 5 * USEC_PER_SEC;
        ASSERT_OK(context_load_policy(&a, &d));
        ASSERT_U64_EQ(d.config->deadline, 20 * USEC_PER_SEC);
        ASSERT_STREQ(d.config->o_deadline.file, "/etc/suspend-sync.conf");
        ASSERT_EQ(d.config->o_deadline.line, 4);
        ASSERT_U64_EQ(d.policy->deadline, 5 * USEC_PER_SEC);
        ASSERT_STREQ(d.policy->o_deadline.file, "--deadline=");
        /* Everything else is the configuration's, shared. */
        ASSERT_EQ(d.policy->max_parallel, d.config->max_parallel);
        ASSERT_TRUE(d.policy->rules == d.config->rules && d.policy->n_rules == 2);
        ASSERT_U64_EQ(context_overrides(&a).deadline, 5 * USEC_PER_SEC);
}

/* DeferCommit= (review M, M3): the unit's pass learns whether systemd-sleep reaches our system-sleep
 * entry; a root without it: 0, so that the pass leaves no commit to a late pass that never runs. */
TEST(hook_entry_missing) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        Args a = args(CONFIG_DIR "/dropins");

        a.trigger = "unit";
        ASSERT_OK(context_load_policy(&a, &c));
        ASSERT_EQ(c.hook_ours, 0);
        ASSERT_TRUE(!c.hook_other);
}

/* Review W, W3: test-context is linked with --wrap=localtime_r too. glibc's localtime_r() (and
 * gmtime_r()) read the time zone database (/etc/localtime, then the zoneinfo file it links to) the first
 * time a process converts a time: an open() and read() in the pass's main process, on the path where
 * the configuration could not be read because a filesystem (/etc, /usr) does not answer. */
static unsigned localtime_calls;

struct tm *__real_localtime_r(const time_t *t, struct tm *tm);
struct tm *__wrap_localtime_r(const time_t *t, struct tm *tm);

struct tm *__wrap_localtime_r(const time_t *t, struct tm *tm) {
        localtime_calls++;
        return __real_localtime_r(t, tm);
}

/* The reader child's 'O' record (our system-sleep entry) sent only once the parent has read all that
 * came before it, the sources included (test-context is linked with --wrap=loop_write,
 * test/meson.build; every other write, and every write while o_after_drain is off, passes through):
 * a parent that does not wait for the 'O' is done by then. */
static pid_t o_after_drain; /* the test's own pid: armed in its children */

int __real_loop_write(int fd, const void *p, size_t n);
int __wrap_loop_write(int fd, const void *p, size_t n);

int __wrap_loop_write(int fd, const void *p, size_t n) {
        /* Bounded (1 s): a parent done without the rest (the manual run of the control) never
         * drains the pipe, and its child must not wait on (review AQ: they piled up). */
        if (o_after_drain > 0 && getpid() != o_after_drain && n == 5 && ((const char *) p)[0] == 'O')
                for (unsigned i = 0; i < 1000; i++) {
                        int left = 0;

                        if (ioctl(fd, FIONREAD, &left) < 0 || left == 0)
                                break;
                        (void) usleep(1000);
                }
        return __real_loop_write(fd, p, n);
}

/* ... and so the unit's pass waits for it (C01): our entry is told after the sources, not lost to a
 * reader done with them (DeferCommit= needs it). The control: a manual run does not ask, and is done
 * with the sources alone (the seam holds the 'O' back). */
TEST(hook_entry_after_sources) {
        static const char *const triggers[] = { "unit", "manual" };

        for (size_t i = 0; i < ELEMENTSOF(triggers); i++) {
                _cleanup_(context_done) Context c = CONTEXT_NULL;
                Args a = args(CONFIG_DIR "/dropins");
                int want = i == 0 ? 0 : -ENODATA;

                a.trigger = triggers[i];
                o_after_drain = getpid();
                ASSERT_OK(context_load_policy(&a, &c));
                o_after_drain = 0;
                fprintf(stderr, "  trigger %s: hook_ours %d\n", triggers[i], c.hook_ours);
                ASSERT_EQ(c.hook_ours, want);
                ASSERT_TRUE(!c.hook_other);
        }
}

/* The sample made again right before the knob's write is bounded by the time the caller has left,
 * as the pass's own sample: with none left, the search for a process holding a file on the hidden
 * superblocks of the hidden-sb root is cut short, not run for its own bound. */
TEST(sample_again_until) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        Args a = args(FIXTURES_DIR "/roots/hidden-sb");

        a.sysfs = FIXTURES_DIR "/roots/hidden-sb/sys";
        a.debugfs = FIXTURES_DIR "/roots/hidden-sb/debugfs";
        ASSERT_OK(context_open_root(&a, &c));
        ASSERT_OK(context_load_policy(&a, &c));
        for (int late = 0; late <= 1; late++) {
                _cleanup_(sample_freep) Sample *s = NULL;
                bool cut = false;

                ASSERT_OK(context_sample_again(&a, PLAN_SCOPE_ALL, CONTEXT_RUN, &c,
                                               late ? 1 : now(CLOCK_MONOTONIC) + 60 * USEC_PER_SEC, &s));
                for (size_t i = 0; i < s->n_incomplete_why; i++) {
                        fprintf(stderr, "  until %s: %s\n", late ? "passed" : "in a minute",
                                s->incomplete_why[i]);
                        cut = cut || strstr(s->incomplete_why[i], "did not finish within");
                }
                ASSERT_EQ(cut, (bool) late);
        }
}

/* --deadline-max= (the daemon's pass) only ever shortens: DeadlineSec=, --deadline= and the bound on
 * the configuration read. */
TEST(deadline_max) {
        _cleanup_(context_done) Context c = CONTEXT_NULL, d = CONTEXT_NULL, e = CONTEXT_NULL;
        Args a = args(CONFIG_DIR "/dropins");

        a.deadline_max = 4 * USEC_PER_SEC;
        ASSERT_OK(context_read_policy(&a, &c));
        ASSERT_U64_EQ(c.config->deadline, 20 * USEC_PER_SEC);
        ASSERT_U64_EQ(c.policy->deadline, 4 * USEC_PER_SEC);
        ASSERT_STREQ(c.policy->o_deadline.file, "--deadline-max=");
        ASSERT_U64_EQ(context_deadline_bound(&a), 4 * USEC_PER_SEC);
        ASSERT_U64_EQ(context_conf_read_timeout(&a), CONF_READ_TIMEOUT);

        /* A shorter DeadlineSec= (here from --deadline=) stays as it is. */
        a.deadline = 2 * USEC_PER_SEC;
        ASSERT_OK(context_read_policy(&a, &d));
        ASSERT_U64_EQ(d.policy->deadline, 2 * USEC_PER_SEC);
        ASSERT_STREQ(d.policy->o_deadline.file, "--deadline=");
        ASSERT_U64_EQ(context_deadline_bound(&a), 2 * USEC_PER_SEC);

        /* ... and a longer --deadline= is capped. */
        a.deadline = 60 * USEC_PER_SEC;
        a.deadline_max = 1 * USEC_PER_SEC;
        ASSERT_OK(context_read_policy(&a, &e));
        ASSERT_U64_EQ(e.policy->deadline, 1 * USEC_PER_SEC);
        ASSERT_U64_EQ(context_conf_read_timeout(&a), 500 * USEC_PER_MSEC);
}

/* cat-config: the file's value with its origin, the override apart. */
TEST(format_with_overrides) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        _cleanup_free_ char *text = NULL, *plain = NULL;
        Args a = args(CONFIG_DIR "/dropins");
        PolicyOverrides o;

        a.deadline = 5 * USEC_PER_SEC;
        o = context_overrides(&a);
        ASSERT_OK(context_load_policy(&a, &c));
        ASSERT_OK(policy_format_overrides(c.config, &o, &text));
        ASSERT_TRUE(strstr(text, "# from /etc/suspend-sync.conf:4\n"
                                 "# overridden on the command line: --deadline=5s\n"
                                 "DeadlineSec=20s\n"));
        ASSERT_TRUE(!strstr(text, "DeadlineSec=5s"));
        /* Without overrides: no such line. */
        ASSERT_OK(policy_format(c.config, &plain));
        ASSERT_TRUE(strstr(plain, "# from /etc/suspend-sync.conf:4\nDeadlineSec=20s\n"));
        ASSERT_TRUE(!strstr(plain, "overridden"));
}

/* --config= that cannot be read: the error is kept for cat-config; the policy has the defaults. */
TEST(explicit_config_error) {
        _cleanup_(context_done) Context c = CONTEXT_NULL, d = CONTEXT_NULL, e = CONTEXT_NULL,
                                        f = CONTEXT_NULL;
        Args a = args(CONFIG_DIR "/dropins");

        a.config = "/etc/nonexistent.conf";
        ASSERT_OK(context_read_policy(&a, &c));
        ASSERT_ERR(c.config_error, ENOENT);
        ASSERT_EQ(c.config->max_parallel, 16);
        /* what the named file sets is unknown: the kernel's sync is left alone */
        ASSERT_TRUE(c.config->unread && c.config->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);

        a.config = "/etc/suspend-sync.conf.d"; /* a directory */
        ASSERT_OK(context_read_policy(&a, &d));
        ASSERT_ERR(d.config_error, EISDIR);

        a.config = "/etc/custom.conf";
        ASSERT_OK(context_read_policy(&a, &e));
        ASSERT_EQ(e.config_error, 0);
        ASSERT_EQ(e.config->max_parallel, 11);
        ASSERT_TRUE(!e.config->unread); /* negative control: read in full */

        /* Without --config=, an unreadable file is a warning, not an error of the command. */
        a = args(CONFIG_DIR "/unreadable");
        ASSERT_OK(context_read_policy(&a, &f));
        ASSERT_EQ(f.config_error, 0);
        ASSERT_EQ(f.config->n_warnings, 2); /* the file, and SyncOnSuspend=keep */
        ASSERT_TRUE(f.config->unread && f.config->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
}

/* Review S, L1: a warning about a file not read (no line) goes out under CONFIG_NOT_READ, whose
 * catalog entry explains the stand-in and SyncOnSuspend=keep; an invalid setting (a line) under
 * CONFIG_WARNING, whose entry says "(line N) was invalid". The IDs are read off the datagrams. */
TEST(config_warnings_message_ids) {
        static const char bad[] = "[Sync]\nMaxParallel=many\n";
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        PolicySources *s = calloc(1, sizeof(PolicySources));
        unsigned n_not_read = 0, n_invalid = 0;
        char buf[JOURNAL_DATAGRAM_MAX + 1];
        int sv[2];
        ssize_t n;

        ASSERT_TRUE(s);
        ASSERT_OK(policy_sources_add(s, "/etc/suspend-sync.conf.d/10-a.conf", -EIO, NULL, 0));
        ASSERT_OK(policy_sources_add(s, "/etc/suspend-sync.conf.d/20-b.conf", 0, bad, strlen(bad)));
        ASSERT_OK(policy_build(s, &c.config));
        policy_sources_free(s);

        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        log_set_journal_fd_for_test(sv[0]);
        context_log_policy(&c);
        log_set_journal_fd_for_test(-1);
        while ((n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT)) > 0) {
                bool not_read, invalid;

                buf[n] = 0;
                not_read = strstr(buf, "MESSAGE_ID=" SUSPEND_SYNC_MESSAGE_CONFIG_NOT_READ_STR "\n");
                invalid = strstr(buf, "MESSAGE_ID=" SUSPEND_SYNC_MESSAGE_CONFIG_WARNING_STR "\n");
                if (strstr(buf, "MESSAGE=/etc/suspend-sync.conf.d/10-a.conf: ")) {
                        ASSERT_TRUE(not_read && !invalid);
                        ASSERT_TRUE(!strstr(buf, "SUSPEND_SYNC_CONFIG_LINE="));
                        n_not_read++;
                } else if (strstr(buf, "MESSAGE=/etc/suspend-sync.conf.d/20-b.conf:2: ")) {
                        ASSERT_TRUE(invalid && !not_read);
                        ASSERT_TRUE(strstr(buf, "SUSPEND_SYNC_CONFIG_LINE=2\n"));
                        n_invalid++;
                }
        }
        close(sv[0]);
        close(sv[1]);
        /* "Failed to read" and "not read in full" (both of 10-a.conf), the invalid value */
        ASSERT_EQ(n_not_read, 2);
        ASSERT_EQ(n_invalid, 1);
}

TEST(conf_read_timeout) {
        Args a = args("/");

        ASSERT_U64_EQ(context_conf_read_timeout(&a), CONF_READ_TIMEOUT);
        a.deadline = 10 * USEC_PER_SEC;
        ASSERT_U64_EQ(context_conf_read_timeout(&a), CONF_READ_TIMEOUT);
        a.deadline = 1 * USEC_PER_SEC;
        ASSERT_U64_EQ(context_conf_read_timeout(&a), 500 * USEC_PER_MSEC);
}

/* The search through proc is bounded by UNLISTED_REACH_TIMEOUT, or a quarter of a short deadline. */
TEST(reach_timeout) {
        Policy p = { .deadline = 30 * USEC_PER_SEC };

        ASSERT_U64_EQ(context_reach_timeout(&p), UNLISTED_REACH_TIMEOUT);
        p.deadline = 2 * USEC_PER_SEC;
        ASSERT_U64_EQ(context_reach_timeout(&p), 500 * USEC_PER_MSEC);
}

/* The whole preparation on a fixture root: the plan follows --deadline=, the configuration not. */
TEST(prepare) {
        _cleanup_(context_done) Context c = CONTEXT_NULL, d = CONTEXT_NULL;
        Args a = args(FIXTURES_DIR "/roots/laptop");

        a.sysfs = FIXTURES_DIR "/sysfs/laptop";
        a.debugfs = FIXTURES_DIR "/roots/laptop/debugfs";
        ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL, &c));
        ASSERT_TRUE(c.sample && c.plan && c.debugfs_fd >= 0);
        ASSERT_U64_EQ(c.plan->deadline, 30 * USEC_PER_SEC);
        ASSERT_TRUE(c.plan->n_entries > 0 && c.plan->n_sync > 0);

        a.deadline = 7 * USEC_PER_SEC;
        ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL, &d));
        ASSERT_U64_EQ(d.plan->deadline, 7 * USEC_PER_SEC);
        ASSERT_U64_EQ(d.config->deadline, 30 * USEC_PER_SEC);
        ASSERT_TRUE(d.config->o_deadline.file == NULL);

        context_done(&d);
        ASSERT_TRUE(d.policy == NULL && d.config == NULL && d.plan == NULL && d.root_fd < 0);
        context_done(&d); /* twice is fine */
}

/* The messages a full prepare on root logs (MESSAGE= of each datagram), joined by newlines. */
static char *prepare_messages(Args *a) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        char buf[JOURNAL_DATAGRAM_MAX + 1], *text = NULL;
        size_t size = 0;
        FILE *f;
        ssize_t n;
        int sv[2];

        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        ASSERT_TRUE(f = open_memstream(&text, &size));
        log_set_journal_fd_for_test(sv[0]);
        ASSERT_OK(context_prepare(a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL, &c));
        log_set_journal_fd_for_test(-1);
        while ((n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT)) > 0) {
                const char *m;

                buf[n] = 0;
                m = strncmp(buf, "MESSAGE=", 8) == 0 ? buf + 8 : strstr(buf, "\nMESSAGE=");
                if (m && m != buf + 8)
                        m += 9;
                if (m)
                        fprintf(f, "%.*s\n", (int) strcspn(m, "\n"), m);
        }
        close(sv[0]);
        close(sv[1]);
        ASSERT_TRUE(fclose(f) == 0 && text);
        fprintf(stderr, "%s", text);
        return text;
}

/* Review AS, AS-5: what is missing from the sample is said with its cause, not a guess. debugfs that
 * is not there is "not mounted"; one that cannot be opened (a file here; EMFILE, ENOMEM alike) says
 * its error; proc/meminfo that cannot be read, proc/self/ns/mnt and sysfs that classifies nothing,
 * too. Negative control: the old text said "debugfs not mounted or not readable", "no
 * proc/self/ns/mnt", and no error for meminfo or sysfs. */
TEST(missing_facts_say_why) {
        _cleanup_free_ char *missing = NULL, *notdir = NULL, *nosysfs = NULL, *nomem = NULL;
        Args a = args(FIXTURES_DIR "/roots/laptop");

        a.sysfs = FIXTURES_DIR "/sysfs/laptop";
        a.debugfs = "/nonexistent";
        missing = prepare_messages(&a);
        ASSERT_TRUE(strstr(missing, "No bdi stats under '/nonexistent/bdi' (debugfs not mounted): "));
        ASSERT_TRUE(!strstr(missing, "not readable"));

        a.debugfs = FIXTURES_DIR "/roots/laptop/proc/meminfo"; /* not a directory */
        notdir = prepare_messages(&a);
        ASSERT_TRUE(strstr(notdir, "/proc/meminfo/bdi' (not readable: Not a directory): "));
        ASSERT_TRUE(!strstr(notdir, "debugfs not mounted"));
        /* the laptop's proc has no ns/mnt */
        ASSERT_TRUE(strstr(notdir,
                           "Incomplete view: mount namespaces cannot be told apart (proc/self/ns/mnt: No "
                           "such file or directory): "));

        /* the laptop's one unclassified filesystem met no error: none said */
        ASSERT_TRUE(strstr(notdir, "could not classify 1 block filesystem(s) (device stack"));
        ASSERT_TRUE(!strstr(notdir, "first error"));

        a.sysfs = FIXTURES_DIR "/roots/laptop/proc/meminfo"; /* sysfs that cannot be opened */
        nosysfs = prepare_messages(&a);
        ASSERT_TRUE(strstr(nosysfs,
                           "/proc/meminfo' could not classify 3 block filesystem(s), first error: Not a "
                           "directory (device stack"));

        a = args(FIXTURES_DIR "/roots/hidden-sb"); /* no proc/meminfo */
        nomem = prepare_messages(&a);
        ASSERT_TRUE(strstr(nomem, "Could not read proc/meminfo under '" FIXTURES_DIR
                                  "/roots/hidden-sb', ignoring: No such file or directory\n"));
}

static const Superblock *sb_of(const Context *c, dev_t dev) {
        for (size_t k = 0; k < c->sample->n_sbs; k++)
                if (c->sample->sbs[k].dev == dev)
                        return &c->sample->sbs[k];
        return NULL;
}

/* Where a loop device writes is asked (a bounded child) only for a pass that may defer, or for plan:
 * an ext4 on loop3 of the laptop sysfs, whose node this root lacks, so the answer is an error. */
TEST(prepare_loop_backing) {
        _cleanup_(context_done) Context c = CONTEXT_NULL, d = CONTEXT_NULL, e = CONTEXT_NULL;
        Args a = args(FIXTURES_DIR "/roots/clean-ext4");
        const Superblock *s;

        a.sysfs = FIXTURES_DIR "/sysfs/laptop";
        ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL, &c));
        ASSERT_TRUE((s = sb_of(&c, makedev(7, 3))) && s->device.loop_backing_file);
        ASSERT_TRUE(s->loop_backing_error < 0 && s->loop_backing_error != -ENODATA);

        ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, 0, &d));
        ASSERT_TRUE((s = sb_of(&d, makedev(7, 3))));
        ASSERT_EQ(s->loop_backing_error, -ENODATA); /* not asked */

        ASSERT_OK(context_prepare(&a, PLAN_SCOPE_LOCAL_BLOCK, CONTEXT_DEFERRAL, &e));
        ASSERT_TRUE((s = sb_of(&e, makedev(7, 3))));
        ASSERT_EQ(s->loop_backing_error, -ENODATA);
}

/* A configuration file of its own, in a directory of its own below the working directory: its path,
 * relative (an absolute --config= is below the root), in path. */
static void config_file(char dir[static 64], char path[static 128], const char *text) {
        FILE *f;

        strcpy(dir, "test-context.XXXXXX");
        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        snprintf(path, 128, "%s/suspend-sync.conf", dir);
        ASSERT_TRUE((f = fopen(path, "we")) != NULL);
        ASSERT_TRUE(fputs(text, f) >= 0);
        ASSERT_OK(fclose(f));
}

static void config_file_remove(const char *dir, const char *path) {
        ASSERT_OK(unlink(path));
        ASSERT_OK(rmdir(dir));
}

/* context_prepare() samples while the configuration is read, reading what an assumed configuration
 * asks for (the daemon's last read, else the defaults). The configuration read decides at the gate
 * whether the loop driver is asked (DeferCommit=), and a rule on rotational devices, which no
 * assumption may read, costs a second sample. Counted by the children forked: the configuration's
 * reader, then one loop-backing child per sample that asks on the clean-ext4 root (loop3, its node
 * missing). */
TEST(prepare_samples_by_the_configuration) {
        char dir[64], path[128];
        _cleanup_(policy_freep) Policy *assumed = NULL, *assumed_rot = NULL;
        Args a = args(FIXTURES_DIR "/roots/clean-ext4");
        const Superblock *sb;
        unsigned n;

        a.sysfs = FIXTURES_DIR "/sysfs/laptop";

        /* DeferCommit=no read, the defaults assumed: the gate says not to ask. */
        config_file(dir, path, "[Sync]\nDeferCommit=no\n");
        a.config = path;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_TRUE(!c.policy->defer_commit);
                ASSERT_TRUE((sb = sb_of(&c, makedev(7, 3))));
                ASSERT_EQ(sb->loop_backing_error, -ENODATA); /* the configuration's: not asked */
                ASSERT_EQ(bounded_child_started() - n, 1U);  /* the reader alone: one sample */
        }
        /* The same assumed (the daemon read it): the same. */
        ASSERT_OK(policy_load(AT_FDCWD, path, &assumed));
        ASSERT_TRUE(!assumed->defer_commit);
        a.assumed_config = assumed;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_TRUE((sb = sb_of(&c, makedev(7, 3))));
                ASSERT_EQ(sb->loop_backing_error, -ENODATA);
                ASSERT_EQ(bounded_child_started() - n, 1U);
        }
        config_file_remove(dir, path);

        /* The file says DeferCommit=yes now, the assumption says no: asked, in the one sample. */
        config_file(dir, path, "[Sync]\nDeferCommit=yes\n");
        a.config = path;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_TRUE(c.policy->defer_commit);
                ASSERT_TRUE((sb = sb_of(&c, makedev(7, 3))));
                ASSERT_TRUE(sb->loop_backing_error < 0 && sb->loop_backing_error != -ENODATA);
                ASSERT_EQ(bounded_child_started() - n, 2U); /* reader, the sample's child */
        }
        config_file_remove(dir, path);
        a.assumed_config = NULL;

        /* A rule on rotational devices: sampled again, reading queue/rotational in a child of its
         * own (and a loop-backing child in each sample); a plan never samples on an assumption that
         * skips it (no CONTEXT_RUN: read in the first sample already, by its child too). */
        config_file(dir, path, "[Rule spin]\nDevice=rotational\nAction=sync\n");
        a.config = path;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL, d = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_EQ(bounded_child_started() - n, 4U); /* reader, loop; loop, rotational */
                ASSERT_EQ(c.sample->n_rotational_unknown, 0U);

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL, &d));
                ASSERT_EQ(bounded_child_started() - n, 3U); /* reader; loop, rotational */
        }
        /* The daemon read that rule and the file still has it: read first, then one sample. */
        ASSERT_OK(policy_load(AT_FDCWD, path, &assumed_rot));
        a.assumed_config = assumed_rot;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_EQ(bounded_child_started() - n, 3U); /* reader; one sample's two children */
        }
        /* The daemon read that rule, the file no longer has it: the assumption reads no
         * queue/rotational all the same (a task stuck in a disk's revalidation would hold it), and
         * the sample stands. */
        config_file_remove(dir, path);
        config_file(dir, path, "[Sync]\nMaxParallel=3\n");
        a.config = path;
        a.assumed_config = assumed_rot;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_EQ(bounded_child_started() - n, 2U); /* reader, one sample's child */
        }
        a.assumed_config = NULL;
        config_file_remove(dir, path);

        /* DeadlineSec= other than assumed: one sample either way. Where it forks a child, it waits
         * for the configuration first, whose bounds the child gets (test-sample: sample_gate). */
        config_file(dir, path, "[Sync]\nDeadlineSec=3s\n");
        a.config = path;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL, d = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_U64_EQ(c.policy->deadline, 3 * USEC_PER_SEC);
                ASSERT_TRUE((sb = sb_of(&c, makedev(7, 3))));
                ASSERT_TRUE(sb->loop_backing_error < 0 && sb->loop_backing_error != -ENODATA);
                ASSERT_EQ(bounded_child_started() - n, 2U); /* reader, the sample's child */

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_RUN, &d));
                ASSERT_U64_EQ(d.policy->deadline, 3 * USEC_PER_SEC);
                ASSERT_EQ(bounded_child_started() - n, 1U); /* reader only */
                ASSERT_TRUE(d.sample && d.plan && d.plan->n_entries == c.plan->n_entries);
        }
        /* The child gets the configuration's bounds: a pass started 10 s ago may sample until 1 s
         * after its start by DeadlineSec=3s (by the defaults' 30 s: until 5 s from now), so the
         * child is killed at once. */
        a.started = now(CLOCK_MONOTONIC) - 10 * USEC_PER_SEC;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_TRUE((sb = sb_of(&c, makedev(7, 3))));
                ASSERT_EQ(sb->loop_backing_error, -ETIMEDOUT);
        }
        config_file_remove(dir, path);
}

/* The configuration hangs (a FUSE file nobody serves: open() blocks, as on a dead server; a FIFO is
 * refused at once) while the sample runs: the prepare returns after the read's bound (half of
 * --deadline=1s), with the defaults and SyncOnSuspend=keep, and its sample and plan. */
static void prepare_config_hung_body(void *userdata) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        Args a = args(FIXTURES_DIR "/roots/laptop");
        usec_t t0, took;

        bounded_child_forget_parent(); /* the test's earlier children are not ours */
        a.config = userdata;
        a.deadline = USEC_PER_SEC;
        a.sysfs = FIXTURES_DIR "/sysfs/laptop";
        t0 = now(CLOCK_MONOTONIC);
        ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_RUN, &c));
        took = now(CLOCK_MONOTONIC) - t0;
        fprintf(stderr, "   prepare with a hung configuration returned after %.3fs\n",
                (double) took / USEC_PER_SEC);
        ASSERT_TRUE(took >= 500 * USEC_PER_MSEC && took < 1500 * USEC_PER_MSEC);
        ASSERT_TRUE(c.config->unread && c.config->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
        ASSERT_EQ(c.config_error, -ETIMEDOUT);
        ASSERT_TRUE(c.sample && c.plan && c.plan->n_entries > 0);
}

TEST(prepare_config_hung) {
        char dir[] = "test-context.XXXXXX", path[128];

        ASSERT_TRUE(test_mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/suspend-sync.conf", dir);
        safe_close(open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
        test_with_hung_file(path, 60, prepare_config_hung_body, path);
        ASSERT_OK(unlink(path));
        ASSERT_OK(rmdir(dir));
}

/* A configuration of DeadlineSec=3s and MountTimeoutSec=2s in dir/path, read in full by a with its
 * state directory dir/state (made), and its bounds saved there (conf-bounds.h). */
static void bounds_read_in_full(char dir[static 64], char path[static 128], char state[static 128], Args *a) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;

        config_file(dir, path, "[Sync]\nDeadlineSec=3s\nMountTimeoutSec=2s\n");
        snprintf(state, 128, "%s/state", dir);
        ASSERT_OK(mkdir(state, 0755));
        a->state_dir = state;
        a->config = path;
        ASSERT_OK(context_read_policy(a, &c));
        ASSERT_TRUE(!c.config->unread && c.policy->deadline == 3 * USEC_PER_SEC);
        ASSERT_OK(context_save_bounds(a, &c));
}

/* Review U, U4: a configuration not read in full gets the defaults only as long as the last full read
 * allowed (conf-bounds.h): a pass saves its DeadlineSec= and MountTimeoutSec=, and one that finds the
 * same --config= missing (not read in full, the defaults) uses them where they are shorter; the
 * parsed configuration (cat-config) keeps the defaults, the command line's values stand, and a
 * record of another --config= or another state directory changes nothing. */
TEST(unread_capped_by_last_full_read) {
        char dir[64], path[128], state[128], gone[160];
        _cleanup_(policy_freep) Policy *p = NULL;
        Args a = args(FIXTURES_DIR "/roots/laptop");

        bounds_read_in_full(dir, path, state, &a);
        /* The same file gone: not read in full, the defaults, capped. */
        snprintf(gone, sizeof gone, "%s.gone", path);
        ASSERT_OK(rename(path, gone));
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                localtime_calls = 0;
                ASSERT_OK(context_read_policy(&a, &c));
                /* review W, W3: no time zone conversion in the main process on this path */
                ASSERT_EQ(localtime_calls, 0U);
                ASSERT_TRUE(c.config->unread && c.config->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
                ASSERT_U64_EQ(c.config->deadline, 30 * USEC_PER_SEC);
                ASSERT_U64_EQ(c.policy->deadline, 3 * USEC_PER_SEC);
                ASSERT_U64_EQ(c.policy->mount_timeout, 2 * USEC_PER_SEC);
                ASSERT_STREQ(c.policy->o_deadline.file, CONF_BOUNDS_ORIGIN);
                ASSERT_OK(context_save_bounds(&a, &c)); /* nothing: not read in full */
        }
        /* --deadline= stands; --deadline-max= caps below. */
        a.deadline = 7 * USEC_PER_SEC;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                ASSERT_OK(context_read_policy(&a, &c));
                ASSERT_U64_EQ(c.policy->deadline, 7 * USEC_PER_SEC);
                ASSERT_U64_EQ(c.policy->mount_timeout, 2 * USEC_PER_SEC);
        }
        a.deadline = USEC_INFINITY;
        a.deadline_max = 1 * USEC_PER_SEC;
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                ASSERT_OK(context_read_policy(&a, &c));
                ASSERT_U64_EQ(c.policy->deadline, 1 * USEC_PER_SEC);
        }
        a.deadline_max = USEC_INFINITY;
        /* Read in full, the file no longer setting them: the defaults, uncapped, and recorded so. */
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;
                FILE *f;

                ASSERT_TRUE((f = fopen(path, "we")) != NULL);
                ASSERT_TRUE(fputs("[Sync]\nMaxParallel=3\n", f) >= 0);
                ASSERT_OK(fclose(f));
                ASSERT_OK(context_read_policy(&a, &c));
                ASSERT_TRUE(!c.config->unread && c.policy->max_parallel == 3);
                ASSERT_U64_EQ(c.policy->deadline, 30 * USEC_PER_SEC);
                ASSERT_U64_EQ(c.policy->mount_timeout, 10 * USEC_PER_SEC);
                ASSERT_OK(context_save_bounds(&a, &c));
                ASSERT_OK(unlink(path));
        }
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                ASSERT_OK(context_read_policy(&a, &c));
                ASSERT_TRUE(c.config->unread);
                ASSERT_U64_EQ(c.policy->deadline, 30 * USEC_PER_SEC);
                ASSERT_U64_EQ(c.policy->mount_timeout, 10 * USEC_PER_SEC);
        }
        /* The record of another --config= (the default locations): the defaults. */
        ASSERT_OK(policy_new(&p));
        p->deadline = 1 * USEC_PER_SEC;
        ASSERT_OK(conf_bounds_save(state, a.root, NULL, p));
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                ASSERT_OK(context_read_policy(&a, &c));
                ASSERT_TRUE(c.config->unread);
                ASSERT_U64_EQ(c.policy->deadline, 30 * USEC_PER_SEC);
                ASSERT_U64_EQ(c.policy->mount_timeout, 10 * USEC_PER_SEC);
        }
        ASSERT_OK(rename(gone, path));
        {
                char f[192];

                snprintf(f, sizeof f, "%s/" CONF_BOUNDS_FILE, state);
                ASSERT_OK(unlink(f));
        }
        ASSERT_OK(rmdir(state));
        config_file_remove(dir, path);
}

/* ... and so does a configuration that cannot be read within its bound (the reader times out: a FUSE
 * file nobody serves), in the same state directory as the last full read; in another, the defaults. */
static void config_hung_capped_body(void *userdata) {
        const char *const *paths = userdata; /* the configuration, the state directory with its record */
        Args a = args(FIXTURES_DIR "/roots/laptop");

        bounded_child_forget_parent();
        a.config = paths[0];
        a.state_dir = paths[1];
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                ASSERT_OK(context_read_policy(&a, &c));
                ASSERT_EQ(c.config_error, -ETIMEDOUT);
                ASSERT_TRUE(c.config->unread && c.config->sync_on_suspend == SYNC_ON_SUSPEND_KEEP);
                ASSERT_U64_EQ(c.config->deadline, 30 * USEC_PER_SEC);
                ASSERT_U64_EQ(c.policy->deadline, 3 * USEC_PER_SEC);
                ASSERT_U64_EQ(c.policy->mount_timeout, 2 * USEC_PER_SEC);
        }
        a.state_dir = "/nonexistent";
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                ASSERT_OK(context_read_policy(&a, &c));
                ASSERT_EQ(c.config_error, -ETIMEDOUT);
                ASSERT_U64_EQ(c.policy->deadline, 30 * USEC_PER_SEC);
                ASSERT_U64_EQ(c.policy->mount_timeout, 10 * USEC_PER_SEC);
        }
}

TEST(config_hung_capped) {
        char dir[64], path[128], state[128], f[192];
        const char *paths[2] = { path, state };
        Args a = args(FIXTURES_DIR "/roots/laptop");

        bounds_read_in_full(dir, path, state, &a);
        test_with_hung_file(path, 60, config_hung_capped_body, paths);
        snprintf(f, sizeof f, "%s/" CONF_BOUNDS_FILE, state);
        ASSERT_OK(unlink(f));
        ASSERT_OK(rmdir(state));
        config_file_remove(dir, path);
}

/* The daemon's standby pass: its reader, forked ahead (conf_read_prepare()), reads when the pass
 * lets it go, not when it was forked (the file is changed in between), and the pass forks no other;
 * one prepared for other reads (the late pass's hooks) is not used, and a reader is forked as
 * before. */
TEST(prepare_prepared_reader) {
        char dir[64], path[128];
        Args a = args(FIXTURES_DIR "/roots/clean-ext4");
        ConfReader *reader = NULL;
        _cleanup_close_ int root_fd = open(a.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        FILE *f;
        unsigned n;

        ASSERT_TRUE(root_fd >= 0);
        a.sysfs = FIXTURES_DIR "/sysfs/laptop";
        config_file(dir, path, "[Sync]\nDeferCommit=yes\n");
        a.config = path;
        a.prepared_reader = &reader;
        ASSERT_OK(conf_read_prepare(root_fd, path, false, NULL, &reader));
        usleep(200 * 1000); /* a reader that did not wait would have read the first text by now */
        ASSERT_TRUE((f = fopen(path, "we")) != NULL);
        ASSERT_TRUE(fputs("[Sync]\nDeferCommit=no\n", f) >= 0);
        ASSERT_OK(fclose(f));
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_TRUE(reader == NULL); /* taken */
                ASSERT_TRUE(!c.policy->defer_commit && c.config_error == 0);
                ASSERT_EQ(bounded_child_started() - n, 0U); /* no fork on the pass's path */
        }
        /* Prepared with the hooks (the late pass's reads): not this pass's; freed, one forked. */
        ASSERT_OK(conf_read_prepare(root_fd, path, true, NULL, &reader));
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, &c));
                ASSERT_TRUE(reader == NULL);
                ASSERT_TRUE(!c.policy->defer_commit && c.config_error == 0);
                ASSERT_EQ(bounded_child_started() - n, 1U);
        }
        /* The serial order (context_load_policy(), the unit's pass with dirty data) takes it too. */
        ASSERT_OK(conf_read_prepare(root_fd, path, false, NULL, &reader));
        {
                _cleanup_(context_done) Context c = CONTEXT_NULL;

                n = bounded_child_started();
                ASSERT_OK(context_load_policy(&a, &c));
                ASSERT_TRUE(reader == NULL && !c.policy->defer_commit);
                ASSERT_EQ(bounded_child_started() - n, 0U);
        }
        config_file_remove(dir, path);
}

static const PlanEntry *entry_of(const Context *c, const char *mount_point) {
        for (size_t i = 0; i < c->plan->n_entries; i++)
                if (streq(c->plan->entries[i].mount_point, mount_point))
                        return &c->plan->entries[i];
        return NULL;
}

#define ROTATIONAL_SKIP_RULE "[Rule hdd]\nDevice=rotational\nAction=skip\n"
/* A rule that syncs on the class, with a longer timeout, before one that skips the rest. */
#define ROTATIONAL_SYNC_RULE                                                             \
        "[Rule hdd]\nDevice=rotational\nAction=sync\nMountTimeoutSec=25s\n[Rule rest]\n" \
        "Path=/mnt/*\nAction=skip\n"
#define LOOP3_ROTATIONAL "/devices/virtual/block/loop3/queue/rotational"

/* A pass with a Device=rotational rule on the clean-ext4 root over the laptop sysfs, whose / (dm-0
 * over sda2) and /mnt/clean (loop3) are both on rotational disks. */
static void rotational_pass(const char *sysfs, const char *config, Context *c) {
        char dir[64], path[128];
        Args a = args(FIXTURES_DIR "/roots/clean-ext4");

        a.sysfs = sysfs;
        a.deadline = 4 * USEC_PER_SEC;
        config_file(dir, path, config);
        a.config = path;
        ASSERT_OK(context_prepare(&a, PLAN_SCOPE_ALL, CONTEXT_DEFERRAL | CONTEXT_RUN, c));
        config_file_remove(dir, path);
}

/* Review O, O9: the attribute readable (its bounded child answers), the rules apply as before. */
TEST(rotational_rule_applies) {
        _cleanup_(context_done) Context c = CONTEXT_NULL, d = CONTEXT_NULL;
        const PlanEntry *e;
        const Superblock *sb;

        rotational_pass(FIXTURES_DIR "/sysfs/laptop", ROTATIONAL_SYNC_RULE, &d);
        ASSERT_TRUE((e = entry_of(&d, "/mnt/clean")) && e->action == PLAN_SYNC);
        ASSERT_STREQ(e->reason, "rule 'hdd': Action=sync");
        ASSERT_U64_EQ(e->timeout, 25 * USEC_PER_SEC);

        rotational_pass(FIXTURES_DIR "/sysfs/laptop", ROTATIONAL_SKIP_RULE, &c);
        ASSERT_EQ(c.sample->n_rotational_unknown, 0U);
        ASSERT_TRUE((sb = sb_of(&c, makedev(7, 3))) && (sb->device.classes & DEVICE_ROTATIONAL));
        ASSERT_TRUE(!(device_info_unknown_classes(&sb->device) & DEVICE_ROTATIONAL));
        ASSERT_TRUE((e = entry_of(&c, "/mnt/clean")) && e->action == PLAN_SKIP && e->skip_rule);
        ASSERT_STREQ(e->reason, "rule 'hdd': Action=skip");
        ASSERT_TRUE((e = entry_of(&c, "/")) && e->action == PLAN_SKIP);
}

/* Review O, O9: loop3's queue/rotational is a FUSE file whose server never answers (not even
 * FUSE_INIT), as the attribute waits on the queue's limits lock that a disk in revalidation holds
 * for tens of seconds. The pass returns all the same (its sample's child abandoned at its bound, cut
 * to the pass's deadline): the rule fails closed for /mnt/clean, synced with a reason, and still
 * skips / (dm-0 answered). Run in a child in a mount namespace of its own (the mount dies with it),
 * watched: a pass that reads the attribute in its own process never returns, and the watch kills
 * it and fails, rather than hanging. */
TEST(rotational_blocked) {
        char tmp[] = "/tmp/test-context-rot.XXXXXX", sysfs[64], file[256], cmd[512];
        int pipefd[2], status;
        struct pollfd pfd;
        usec_t t0;
        pid_t pid;
        char ok = 0;

        if (geteuid() != 0) {
                test_skip("not root: the FUSE attribute that blocks");
                return;
        }
        ASSERT_TRUE(test_mkdtemp(tmp) != NULL);
        snprintf(sysfs, sizeof sysfs, "%s/sysfs", tmp);
        snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", FIXTURES_DIR "/sysfs/laptop", sysfs);
        ASSERT_EQ(system(cmd), 0);
        ASSERT_OK(pipe2(pipefd, O_CLOEXEC));
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                _cleanup_(context_done) Context c = CONTEXT_NULL, d = CONTEXT_NULL;
                char opts[128];
                const PlanEntry *e;
                const Superblock *sb;
                int fuse;

                pipefd[0] = safe_close(pipefd[0]);
                bounded_child_forget_parent(); /* the test's earlier children are not ours */
                snprintf(file, sizeof file, "%s" LOOP3_ROTATIONAL, sysfs);
                fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
                snprintf(opts, sizeof opts, "fd=%d,rootmode=100000,user_id=0,group_id=0", fuse);
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                    fuse < 0 || mount("test-context", file, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
                        fprintf(stderr, "  cannot mount a FUSE file over %s: %m\n", file);
                        _exit(EXIT_TEST_SKIP);
                }
                rotational_pass(sysfs, ROTATIONAL_SKIP_RULE, &c);
                fprintf(stderr, "   the pass returned; /mnt/clean: %s\n",
                        entry_of(&c, "/mnt/clean") ? entry_of(&c, "/mnt/clean")->reason : "(none)");
                ASSERT_EQ(c.sample->n_rotational_unknown, 1U);
                ASSERT_EQ(c.sample->rotational_error, -ETIMEDOUT);
                ASSERT_TRUE((sb = sb_of(&c, makedev(7, 3))) && !(sb->device.classes & DEVICE_ROTATIONAL));
                ASSERT_TRUE(device_info_unknown_classes(&sb->device) & DEVICE_ROTATIONAL);
                /* Fails closed: synced, and the plan says which rule was not applied and why. */
                ASSERT_TRUE((e = entry_of(&c, "/mnt/clean")) && e->action == PLAN_SYNC && !e->skip_rule);
                ASSERT_TRUE(strstr(e->reason, "rule 'hdd': Action=skip not applied"));
                /* The disks that answered still decide. */
                ASSERT_TRUE((e = entry_of(&c, "/")) && e->action == PLAN_SKIP && e->skip_rule);
                ASSERT_STREQ(e->reason, "rule 'hdd': Action=skip");
                /* A rule that syncs on the class is taken as matching (not as "not rotational"): no
                 * later rule skips the mount, and its longer timeout applies. */
                rotational_pass(sysfs, ROTATIONAL_SYNC_RULE, &d);
                ASSERT_EQ(d.sample->n_rotational_unknown, 1U);
                ASSERT_TRUE((e = entry_of(&d, "/mnt/clean")) && e->action == PLAN_SYNC && !e->skip_rule);
                ASSERT_TRUE(strstr(e->reason, "rule 'hdd': Action=sync (its Device= counted as matching"));
                ASSERT_U64_EQ(e->timeout, 25 * USEC_PER_SEC);
                ok = 1;
                _exit(write(pipefd[1], &ok, 1) == 1 ? 0 : 3);
        }
        pipefd[1] = safe_close(pipefd[1]);
        /* Not a measurement: a watch, minutes beyond the pass's 4 s deadline, so that a pass stuck in
         * the read fails the test rather than hang it. */
        t0 = now(CLOCK_MONOTONIC);
        pfd = (struct pollfd) { .fd = pipefd[0], .events = POLLIN };
        if (poll(&pfd, 1, 60 * 1000) == 0) {
                fprintf(stderr, "  the pass did not return within 60s: queue/rotational read in its own "
                                "process?\n");
                ASSERT_OK(kill(pid, SIGKILL));
        } else
                (void) read(pipefd[0], &ok, 1);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        fprintf(stderr, "   the child ended after %.2fs\n",
                (double) (now(CLOCK_MONOTONIC) - t0) / USEC_PER_SEC);
        safe_close(pipefd[0]);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        ASSERT_EQ(system(cmd), 0);
        if (test_child_skipped(status))
                return;
        ASSERT_EQ(status, 0);
        ASSERT_EQ(ok, 1);
}

int main(void) {
        log_setup();
        RUN(overrides_not_in_config);
        RUN(hook_entry_missing);
        RUN(hook_entry_after_sources);
        RUN(sample_again_until);
        RUN(deadline_max);
        RUN(format_with_overrides);
        RUN(explicit_config_error);
        RUN(config_warnings_message_ids);
        RUN(conf_read_timeout);
        RUN(reach_timeout);
        RUN(prepare);
        RUN(missing_facts_say_why);
        RUN(prepare_loop_backing);
        RUN(prepare_samples_by_the_configuration);
        RUN(prepare_config_hung);
        RUN(unread_capped_by_last_full_read);
        RUN(config_hung_capped);
        RUN(prepare_prepared_reader);
        RUN(rotational_rule_applies);
        RUN(rotational_blocked);
        return 0;
}
