/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "conf-bounds.h"
#include "conf-read.h"
#include "context.h"
#include "evidence.h"
#include "shared/fileio.h"
#include "shared/format-util.h"
#include "shared/strv.h"
#include "history.h"
#include "log.h"
#include "message-ids.h"

void context_done(Context *c) {
        c->root_fd = safe_close(c->root_fd);
        c->debugfs_fd = safe_close(c->debugfs_fd);
        c->plan = plan_free(c->plan);
        c->sample = sample_free(c->sample);
        c->policy = NULL;
        c->config = policy_free(c->config);
        c->sleep_hooks = strv_free(c->sleep_hooks);
        c->hook_other = mfree(c->hook_other);
        c->learned = mfree(c->learned);
}

PolicyOverrides context_overrides(const Args *a) {
        return (PolicyOverrides) { .deadline = a->deadline };
}

usec_t context_deadline_bound(const Args *a) {
        return MIN(a->deadline, a->deadline_max);
}

usec_t context_conf_read_timeout(const Args *a) {
        usec_t d = context_deadline_bound(a);

        if (a->conf_read_timeout > 0)
                return a->conf_read_timeout;

        return d != USEC_INFINITY ? MIN((usec_t) CONF_READ_TIMEOUT, d / 2) : CONF_READ_TIMEOUT;
}

usec_t context_reach_timeout(const Policy *p) {
        return MAX(MIN((usec_t) UNLISTED_REACH_TIMEOUT, p->deadline / 4), (usec_t) 1);
}

/* Reads the configuration in a child with a timeout (its directories may be on a hung NFS or FUSE
 * mount) and parses it here: policy_start() forks the child, policy_finish() parses its answer. If it
 * cannot be read in time, or the reader fails, the run carries on with the defaults: a run that syncs
 * by the defaults beats a run that never returns. */
static int policy_start(const Args *a, Context *c, ConfReader **ret) {
        usec_t timeout = context_conf_read_timeout(a);

        /* One forked ahead reads the same files from the same root, now, with the same bound. */
        if (a->prepared_reader && *a->prepared_reader) {
                _cleanup_(conf_reader_freep) ConfReader *x = TAKE_PTR(*a->prepared_reader);

                if (conf_reader_prepared_for(x, a->config, a->late) && conf_read_go(x, timeout) >= 0) {
                        log_debug("The configuration is read by the reader forked ahead.");
                        *ret = TAKE_PTR(x);
                        return 0;
                }
                log_debug("The reader forked ahead is gone or reads otherwise: forking one.");
        }
        return conf_read_start(c->root_fd, a->config, timeout, a->late, ret);
}

/* A configuration not read in full (c->config->unread): the bounds of the last full read
 * (conf-bounds.h) into c->last_full, which effective_policy() caps the defaults by, and what that
 * lowers said in buf ("" when nothing: no record of this boot, root and --config=, or none lower).
 * Returns the mask of what is lowered (CONF_BOUNDS_CAPPED_*). */
static unsigned bounds_capped(const Args *a, Context *c, char *buf, size_t size) {
        PolicyOverrides o = context_overrides(a);
        char d[FORMAT_TIMESPAN_MAX], m[FORMAT_TIMESPAN_MAX], ago[FORMAT_RELATIVE_MAX];
        usec_t n;
        Policy p;
        unsigned capped;
        int r;

        buf[0] = 0;
        c->last_full = (ConfBounds) {};
        if (!c->config->unread || !a->state_dir)
                return 0;
        r = conf_bounds_load(a->state_dir, a->root, a->config, &c->last_full);
        if (r < 0) {
                if (r != -ENOENT)
                        log_debug_errno(r, "Ignoring '%s/" CONF_BOUNDS_FILE "': %m", a->state_dir);
                c->last_full = (ConfBounds) {};
                return 0;
        }
        /* What the verbs act on: the command line's values stand (effective_policy()). */
        policy_apply_overrides(c->config, &o, &p);
        capped = conf_bounds_cap(&c->last_full, &p);
        if (capped == 0)
                return 0;
        /* How long ago, not a local time: localtime_r() would open /etc/localtime in this process,
         * on the path where /etc or /usr may not answer (review W, W3). */
        n = now(CLOCK_REALTIME);
        if (n >= c->last_full.realtime)
                (void) format_relative(ago, sizeof ago, c->last_full.realtime, n);
        else
                strcpy(ago, "(the clock was set back since)");
        format_timespan(d, sizeof d, c->last_full.deadline);
        format_timespan(m, sizeof m, c->last_full.mount_timeout);
        if (capped == (CONF_BOUNDS_CAPPED_DEADLINE | CONF_BOUNDS_CAPPED_MOUNT_TIMEOUT))
                (void) snprintf(
                        buf, size,
                        "DeadlineSec= capped at %s and MountTimeoutSec= at %s as last read in full %s", d, m,
                        ago);
        else
                (void) snprintf(buf, size, "%s capped at %s as last read in full %s",
                                capped == CONF_BOUNDS_CAPPED_DEADLINE ? "DeadlineSec=" : "MountTimeoutSec=",
                                capped == CONF_BOUNDS_CAPPED_DEADLINE ? d : m, ago);
        return capped;
}

static int policy_finish(const Args *a, Context *c, ConfReader *x, int start_error) {
        int *ret_config_error = &c->config_error;
        Policy **ret = &c->config;
        _cleanup_(policy_sources_freep) PolicySources *sources = NULL;
        _cleanup_free_ char *stuck_at = NULL;
        usec_t timeout = context_conf_read_timeout(a);
        char ts[FORMAT_TIMESPAN_MAX], cap[256];
        unsigned capped;
        int r = start_error, k;

        *ret_config_error = 0;
        /* The late pass also needs the other system-sleep hooks (kernel-knob.h): read alongside. */
        /* ... and the unit's pass whether systemd-sleep reaches our entry (DeferCommit=) */
        if (r >= 0 && streq_ptr(a->trigger, "unit") && !a->late)
                conf_reader_want_hook_ours(x);
        if (r >= 0)
                r = conf_read_finish(x, &sources, a->late ? &c->sleep_hooks : NULL, &c->sleep_hooks_error,
                                     &stuck_at);
        else
                c->sleep_hooks_error = a->late ? r : -ENODATA;
        if (r >= 0) {
                /* ... and whether systemd-sleep reaches ours (DeferCommit=, defer-commit.h) */
                c->hook_ours = conf_read_hook_ours(x, &c->hook_other);
                if (sources->explicit && sources->n_files > 0)
                        *ret_config_error = sources->files[0].error;
                r = policy_build(sources, ret);
                if (r < 0)
                        return log_error_errno(r, "Failed to load configuration: %m");
                if (bounds_capped(a, c, cap, sizeof cap))
                        log_warning("Configuration not read in full: where the files read set nothing, %s.",
                                    cap);
                return 0;
        }
        if (a->config)
                *ret_config_error = r;
        k = policy_new(ret);
        if (k >= 0)
                k = policy_mark_unread(*ret, stuck_at ?: a->config ?: "/etc/suspend-sync.conf");
        if (k < 0)
                return log_oom();
        capped = bounds_capped(a, c, cap, sizeof cap);
        if (r == -ETIMEDOUT)
                log_event(LOG_WARNING, SUSPEND_SYNC_MESSAGE_CONFIG_UNREADABLE_STR, NULL,
                          "Configuration not readable within %s (stuck at '%s'%s%s, on a hung filesystem?): "
                          "using the defaults, %s%sand SyncOnSuspend=keep.",
                          format_timespan(ts, sizeof ts, timeout), stuck_at ?: a->config ?: "/etc",
                          streq(a->root, "/") ? "" : " below ", streq(a->root, "/") ? "" : a->root, cap,
                          capped ? ", " : "");
        else
                log_event(
                        LOG_WARNING, SUSPEND_SYNC_MESSAGE_CONFIG_UNREADABLE_STR, &(LogEvent) { .error = -r },
                        "Failed to read the configuration in a helper process (%s): using the defaults, "
                        "%s%sand SyncOnSuspend=keep.",
                        r == -EPROTO ? "it ended without an answer" : strerror(-r), cap, capped ? ", " : "");
        return 0;
}

int context_open_root(const Args *a, Context *c) {
        if (c->root_fd >= 0)
                return 0;
        c->root_fd = open(a->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (c->root_fd < 0)
                return log_error_errno(negative_errno(), "Failed to open root directory '%s': %m", a->root);
        return 0;
}

/* What a verb acts on: the configuration with the command line's overrides applied and the deadline
 * capped as the pass requires (without the caps' messages). */
static void effective_policy(const Args *a, const Policy *config, const ConfBounds *last_full, Policy *ret,
                             usec_t *ret_uncapped) {
        PolicyOverrides o = context_overrides(a);

        /* The command line wins where the values are used, never in the configuration itself. */
        policy_apply_overrides(config, &o, ret);
        /* Not read in full: the defaults no longer than the last full read's (review U, U4). */
        if (config->unread)
                (void) conf_bounds_cap(last_full, ret);
        if (ret_uncapped)
                *ret_uncapped = ret->deadline;
        if (a->late && streq_ptr(a->trigger, "hook"))
                ret->deadline = MIN(ret->deadline, (usec_t) LATE_PASS_DEADLINE_MAX);
        /* The daemon's pass must end while logind still waits for its delay lock. */
        if (ret->deadline > a->deadline_max) {
                ret->deadline = a->deadline_max;
                ret->o_deadline = (Origin) { .file = "--deadline-max=" };
        }
}

/* The second half of context_read_policy(): the child's answer parsed, c->policy set. */
static int read_policy_finish(const Args *a, Context *c, ConfReader *x, int start_error) {
        usec_t uncapped;
        int r;

        r = policy_finish(a, c, x, start_error);
        if (r < 0)
                return r;
        effective_policy(a, c->config, &c->last_full, &c->effective, &uncapped);
        c->policy = &c->effective;
        /* systemd-sleep runs its hooks under one alarm (90 s as systemd builds by default) and ends
         * them with SIGTERM: the late pass must end first, with its record, knob decision and scope
         * (effective_policy() caps it). */
        if (a->late && streq_ptr(a->trigger, "hook") && uncapped > LATE_PASS_DEADLINE_MAX) {
                char t[FORMAT_TIMESPAN_MAX], u[FORMAT_TIMESPAN_MAX];

                log_notice("DeadlineSec=%s is longer than systemd-sleep waits for its hooks: this pass ends "
                           "within %s.",
                           format_timespan(t, sizeof t, uncapped),
                           format_timespan(u, sizeof u, LATE_PASS_DEADLINE_MAX));
        }
        return 0;
}

int context_read_policy_start(const Args *a, Context *c, ConfReader **ret, int *ret_start_error) {
        int r;

        *ret = NULL;
        r = context_open_root(a, c);
        if (r < 0)
                return r;
        *ret_start_error = policy_start(a, c, ret);
        return 0;
}

int context_read_policy_finish(const Args *a, Context *c, ConfReader *x, int start_error) {
        return read_policy_finish(a, c, x, start_error);
}

int context_read_policy(const Args *a, Context *c) {
        _cleanup_(conf_reader_freep) ConfReader *x = NULL;
        int r, k;

        r = context_read_policy_start(a, c, &x, &k);
        if (r < 0)
                return r;
        return read_policy_finish(a, c, x, k);
}

void context_log_policy(const Context *c) {
        const Policy *p = c->config;

        /* A notice (a layout that may be a mistake, read as systemd reads it) is no invalid
         * setting: no catalog entry. A warning without a line is about a file or directory not
         * read (in full), not an invalid setting (review S, L1: the catalog said "line 0"). */
        for (size_t i = 0; i < p->n_warnings; i++)
                if (p->warning_notices && p->warning_notices[i])
                        log_notice("%s", p->warnings[i]);
                else if (p->warning_origins[i].line == 0)
                        log_event(LOG_WARNING, SUSPEND_SYNC_MESSAGE_CONFIG_NOT_READ_STR,
                                  &(LogEvent) { .config_file = p->warning_origins[i].file }, "%s",
                                  p->warnings[i]);
                else
                        log_event(LOG_WARNING, SUSPEND_SYNC_MESSAGE_CONFIG_WARNING_STR,
                                  &(LogEvent) { .config_file = p->warning_origins[i].file,
                                                .config_line = p->warning_origins[i].line },
                                  "%s", p->warnings[i]);
        if (p->skip_clean)
                log_notice("%s:%u: %s.", p->o_skip_clean.file ?: "(default)", p->o_skip_clean.line,
                           POLICY_SKIP_CLEAN_NO_EFFECT);
}

int context_save_bounds(const Args *a, const Context *c) {
        if (!c->config || c->config->unread || !a->state_dir)
                return 0;
        return conf_bounds_save(a->state_dir, a->root, a->config, c->config);
}

int context_load_policy(const Args *a, Context *c) {
        int r;

        r = context_read_policy(a, c);
        if (r < 0)
                return r;
        context_log_policy(c);
        return 0;
}

/* Says once per kind which facts were missing. No decision to sync depends on them any more (every
 * filesystem that may hold data is synced), but the order of the work, the ETA, device groups and
 * the late pass's scope do, and an admin should know why they are off. */
/* Missing bdi stats are a fact of the machine, the same for both passes of a sleep cycle: said at
 * notice level by the unit's pass (and plan, manual runs), at debug level by the late pass (the
 * hook), so that a suspend logs it once. See suspend-sync(8), LOGGING. */
static int bdi_level(const Args *a) {
        return a->late ? LOG_DEBUG : LOG_NOTICE;
}

static void report_missing_facts(const Args *a, const Sample *s) {
        size_t n_unclassified = 0, n_incomplete = 0, n_stats = 0;
        int stats_error = 0, class_error = 0;

        for (size_t k = 0; k < s->n_sbs; k++) {
                const Superblock *sb = &s->sbs[k];

                if (sb->fs_class != FS_CLASS_BLOCK || sb->all_read_only)
                        continue;
                if (!sb->device.classified) {
                        n_unclassified++;
                        n_incomplete += sb->device.incomplete;
                        if (class_error == 0)
                                class_error = sb->device.error;
                        continue;
                }
                if (!s->has_debugfs || !sb->device.bdi_name)
                        continue;
                if (sb->bdi_error < 0 && sb->bdi_error != -ENOENT) {
                        n_stats++;
                        stats_error = sb->bdi_error;
                } else if (sb->has_bdi_stats && (!bdi_stats_has(&sb->bdi, BDI_STAT_RECLAIMABLE) ||
                                                 !bdi_stats_has(&sb->bdi, BDI_STAT_WRITEBACK))) {
                        n_stats++; /* read, but none of the keys we need: an unknown layout */
                        if (stats_error == 0)
                                stats_error = -EBADMSG;
                }
        }
        if (n_unclassified > 0)
                /* With the first error met, when one was (review AS, AS-5: EMFILE went unsaid). */
                log_notice("sysfs at '%s' could not classify %zu block filesystem(s)%s%s%s (device stack and "
                           "device group unknown): they are synced, as no Device= rule can skip them (one "
                           "that syncs counts as matching), unless a rule without Device= skips them; the "
                           "late pass leaves them to the main pass.",
                           a->sysfs, n_unclassified,
                           n_incomplete > 0 ? ", some with a device stack that could not be read in full"
                                            : "",
                           class_error < 0 ? ", first error: " : "",
                           class_error < 0 ? strerror(-class_error) : "");
        /* Never silently either: a Device=rotational rule that skips was passed over for them. */
        if (s->n_rotational_unknown > 0)
                log_notice("queue/rotational of %zu disk(s) under '%s' not read (%s): whether their "
                           "filesystems are on a rotational disk is unknown, so no Device=rotational rule "
                           "that skips applies to them, and one that syncs keeps later rules from skipping.",
                           s->n_rotational_unknown, a->sysfs,
                           s->rotational_error == -ETIMEDOUT ? "no answer within the bound, a disk in "
                                                               "revalidation or error handling?"
                                                             : strerror(-s->rotational_error));
        if (n_stats > 0)
                log_internal(bdi_level(a), 0,
                             "bdi stats under '%s/bdi' unreadable or of an unknown layout for %zu "
                             "filesystem(s) (%s): their dirty data and ETA are unknown; they are synced all "
                             "the same.",
                             a->debugfs, n_stats, strerror(-stats_error));
}

/* The ETA learns from past sleeps: the state directory's summary of the persistent history
 * (record-cycle writes it after resume; it is on tmpfs, /var/lib is never read here). Missing or
 * malformed: the plan keeps its own estimate. */
static void context_learn_eta(const Args *a, PlanScope scope, Context *c) {
        _cleanup_(history_learned_done) HistoryLearned h = {};
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t size;
        int r;

        if (asprintf(&path, "%s/" HISTORY_LEARNED_FILE, a->state_dir) < 0)
                return;
        r = read_full_file_at(AT_FDCWD, path, HISTORY_FILE_MAX, &text, &size);
        if (r < 0 || strlen(text) != size)
                return;
        r = history_learned_parse(text, scope == PLAN_SCOPE_LOCAL_BLOCK ? "late" : "unit", &h);
        if (r < 0) {
                log_debug_errno(r, "Ignoring '%s': %m", path);
                return;
        }
        r = (int) plan_learn(c->plan, h.l, h.n);
        log_debug("The ETA of %i mount(s) learned from past sleeps.", r);
        c->learned = TAKE_PTR(text);
}

/* What the sample reads, for a policy p: its bounds follow DeadlineSec=, its loop backing
 * DeferCommit=, its rotational attribute the rules. */
static SampleSources sample_sources(const Args *a, PlanScope scope, ContextFlags flags, const Context *c,
                                    const Policy *p) {
        return (SampleSources) {
                .root_fd = c->root_fd,
                .sysfs_root = a->sysfs,
                .debugfs_fd = c->debugfs_fd,
                .scan_namespaces = true,
                .reach_timeout = context_reach_timeout(p),
                /* A pass's sample may not take more than half its deadline, however long the
                 * configuration took to read: the rest is the executor's. */
                .until = (flags & CONTEXT_RUN) ? usec_add(a->started, p->deadline / 2) : 0,
                /* Only a deferral (plan.h: late_commit) needs to know where a loop device writes. */
                .loop_backing = (flags & CONTEXT_DEFERRAL) && scope == PLAN_SCOPE_ALL && p->defer_commit,
                /* queue/rotational takes the queue's limits lock, which a task stuck in the disk's
                 * revalidation holds for tens of seconds: read in a bounded child, never here
                 * (device-rotational.h), and by a pass only for a rule (Device=rotational). */
                .no_rotational = (flags & CONTEXT_RUN) && !policy_uses_device_class(p, DEVICE_ROTATIONAL),
        };
}

static int sample(const SampleSources *src, Context *c) {
        int r;

        c->sample = sample_free(c->sample);
        r = sample_load(src, &c->sample);
        if (r == -ELIBACC)
                return log_error_errno(
                        r, "Failed to read the mount table: %s is needed and could not be loaded (%s).",
                        MOUNT_TABLE_LIBMOUNT, mount_table_libmount_error() ?: "unknown error");
        if (r < 0)
                return log_error_errno(r, "Failed to read the mount table: %m");
        return 0;
}

/* The debugfs root, or the negative errno of its open(): the sample says why it has no bdi stats. */
static int open_debugfs(const Args *a) {
        int fd = open(a->debugfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return fd < 0 ? negative_errno() : fd;
}

/* What is missing from the sample, logged; then the plan. */
static int report_and_plan(const Args *a, PlanScope scope, ContextFlags flags, Context *c) {
        usec_t t0;
        int r;

        /* The cause as it is: "not mounted" only when it is not there (review AS, AS-5: EMFILE and
         * ENOMEM were told as debugfs missing). */
        if (!c->sample->has_debugfs)
                log_internal(
                        bdi_level(a), 0,
                        "No bdi stats under '%s/bdi' (%s%s): dirty data and ETA unknown, every filesystem "
                        "is synced all the same.",
                        a->debugfs,
                        c->sample->debugfs_error == -ENOENT ? "debugfs not mounted" : "not readable: ",
                        c->sample->debugfs_error == -ENOENT ? "" : strerror(-c->sample->debugfs_error));
        if (!c->sample->has_meminfo)
                log_notice("Could not read proc/meminfo under '%s', ignoring: %s", a->root,
                           strerror(-c->sample->meminfo_error));
        report_missing_facts(a, c->sample);
        /* Never silently: a pass that cannot reach every superblock must not be taken as complete. */
        for (size_t i = 0; i < c->sample->n_incomplete_why; i++)
                log_notice("Incomplete view: %s.", c->sample->incomplete_why[i]);
        if (c->sample->n_incomplete_dropped > 0)
                log_notice("Incomplete view: %zu more reasons not shown.", c->sample->n_incomplete_dropped);

        /* A plain FUSE mount of a user whose lists read empty: the system's writeback count, refreshed
         * after them, proves it clean (plan.c). A child, bounded; no answer is no proof. */
        if (scope == PLAN_SCOPE_ALL && plan_fuse_proof_wanted(c->sample)) {
                /* A pass: within what is left of the half of its deadline the sample may take. */
                usec_t t = now(CLOCK_MONOTONIC),
                       until = (flags & CONTEXT_RUN) ? usec_add(a->started, c->policy->deadline / 2)
                                                     : USEC_INFINITY;
                Meminfo m;

                r = evidence_load_global(c->root_fd,
                                         t < until ? MIN(EVIDENCE_GLOBAL_MAX, (until - t) / 2) : 0, &m);
                c->sample->writeback_idle = evidence_writeback_idle(r, &m);
                if (r < 0)
                        log_debug_errno(r, "Could not read the system's writeback count for FUSE mounts: %m");
        }

        t0 = now(CLOCK_MONOTONIC);
        r = plan_build(c->sample, c->policy, scope, &c->plan);
        if (r < 0)
                return log_error_errno(r, "Failed to build the plan: %m");
        context_learn_eta(a, scope, c);
        c->plan->t_plan = now(CLOCK_MONOTONIC) - t0;
        return 0;
}

int context_sample_plan(const Args *a, PlanScope scope, ContextFlags flags, Context *c) {
        SampleSources src;
        int r;

        assert(c->policy);

        c->debugfs_fd = open_debugfs(a);
        src = sample_sources(a, scope, flags, c, c->policy);
        r = sample(&src, c);
        if (r < 0)
                return r;
        return report_and_plan(a, scope, flags, c);
}

int context_sample_again(const Args *a, PlanScope scope, ContextFlags flags, const Context *c, usec_t until,
                         Sample **ret) {
        SampleSources src = sample_sources(a, scope, flags, c, c->policy);

        src.until = until;
        src.loop_backing = false;
        /* sample_changed_since() compares no device class, bdi stats, journal or barriers: no child
         * for queue/rotational, no file read for the rest (~0.2 ms of the late pass's tail before
         * the knob, docs/PERFORMANCE.md). */
        src.no_rotational = true;
        src.identity_only = true;
        return sample_load(&src, ret);
}

/* The configuration read while the sample runs (context_prepare()): finished at the latest when
 * the sample is about to fork its first bounded child, whose bounds follow the configuration. */
typedef struct Prepare {
        const Args *a;
        PlanScope scope;
        ContextFlags flags;
        Context *c;
        ConfReader *reader;
        int start_error;
        bool finished;
        int finish_error;
} Prepare;

static int prepare_finish(Prepare *x) {
        if (!x->finished) {
                x->finished = true;
                x->finish_error = read_policy_finish(x->a, x->c, x->reader, x->start_error);
                x->reader = conf_reader_free(x->reader);
        }
        return x->finish_error;
}

static int prepare_gate_open(SampleGate *g) {
        Prepare *x = g->userdata;
        SampleSources real;
        int r;

        r = prepare_finish(x);
        if (r < 0)
                return r;
        real = sample_sources(x->a, x->scope, x->flags, x->c, x->c->policy);
        g->reach_timeout = real.reach_timeout;
        g->until = real.until;
        g->loop_backing = real.loop_backing;
        return 0;
}

int context_prepare(const Args *a, PlanScope scope, ContextFlags flags, Context *c) {
        _cleanup_(policy_freep) Policy *defaults = NULL;
        Prepare x = { .a = a, .scope = scope, .flags = flags, .c = c };
        SampleGate gate = { .open = prepare_gate_open, .userdata = &x };
        SampleSources assumed, src;
        Policy guess;
        int r;

        r = context_open_root(a, c);
        if (r < 0)
                return r;
        /* The child reads the configuration while this process samples, reading what the
         * configuration it assumes asks for (the daemon's last read, else the defaults): on 2 CPUs
         * the read then costs little more than its fork. The configuration decides: the sample
         * waits for it before its first bounded child, whose bounds follow DeadlineSec= and which
         * asks the loop driver only by DeferCommit= (the gate); and a sample that read otherwise than
         * it would is made again. A pass never reads queue/rotational on an assumption (its child, a
         * fork bounded as the others, is for a rule only, context.h): a rule the assumed
         * configuration has is waited for first, one new since costs a second sample. */
        x.start_error = policy_start(a, c, &x.reader);
        if (!a->assumed_config && policy_new(&defaults) < 0) {
                x.reader = conf_reader_free(x.reader);
                return log_oom();
        }
        effective_policy(a, a->assumed_config ?: defaults, NULL, &guess, NULL);
        if ((flags & CONTEXT_RUN) && policy_uses_device_class(&guess, DEVICE_ROTATIONAL)) {
                /* A configuration known to read queue/rotational is waited for first, as before:
                 * its one sample reads what it asks for. */
                r = prepare_finish(&x);
                if (r < 0)
                        return r;
                context_log_policy(c);
                return context_sample_plan(a, scope, flags, c);
        }
        c->debugfs_fd = open_debugfs(a);
        assumed = sample_sources(a, scope, flags, c, &guess);
        assumed.no_rotational = assumed.no_rotational || (flags & CONTEXT_RUN);
        /* Whether the pass may ask the loop driver at all; the configuration decides at the gate. */
        assumed.loop_backing = (flags & CONTEXT_DEFERRAL) && scope == PLAN_SCOPE_ALL;
        assumed.gate = &gate;
        r = sample(&assumed, c);
        if (r < 0) {
                /* The configuration's messages as in the serial order, which logs them first. */
                if (prepare_finish(&x) >= 0)
                        context_log_policy(c);
                return r;
        }
        r = prepare_finish(&x);
        if (r < 0)
                return r;
        context_log_policy(c);
        src = sample_sources(a, scope, flags, c, c->policy);
        if (!sample_sources_same_reads(&assumed, &src)) {
                log_debug(
                        "The configuration asks the sample to read otherwise than assumed: sampling again.");
                r = sample(&src, c);
                if (r < 0)
                        return r;
        }
        return report_and_plan(a, scope, flags, c);
}

int print_json(struct json_object *o, JsonMode mode) {
        const char *s;

        s = json_object_to_json_string_ext(o, (mode == JSON_PRETTY
                                                       ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                                       : JSON_C_TO_STRING_PLAIN) |
                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        fputs(s, stdout);
        fputc('\n', stdout);
        return fflush(stdout) == 0 ? 0 : log_error_errno(errno ?: EIO, "Failed to write the output: %m");
}
