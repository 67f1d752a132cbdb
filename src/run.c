/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "run.h"
#include "shared/hexdecoct.h"
#include "shared/string-util.h"
#include "shared/utf8.h"

void run_jobs_done(RunJobs *j) {
        if (!j)
                return;
        free(j->jobs);
        free(j->probes);
        free(j->memos);
        free(j->busy);
        free(j->blocked);
        free(j->run);
        free(j->run_index);
        *j = (RunJobs) {};
}

static ExecJob job_from_entry(const PlanEntry *e, const Sample *s, const ProgressProbe *probe) {
        return (ExecJob) {
                .path = e->path,
                .group = e->group,
                .timeout = e->timeout,
                .dev = e->dev,
                .mount_id = e->mount_id,
                .mount_id_unique = e->mount_id_unique,
                .mountinfo_pid = e->unlisted ? -1 : e->namespace_pid,
                /* "Gone" needs the whole table: a restricted view (chroot) or an unlisted path
                 * cannot tell unmounted from invisible. */
                .gone_check = e->namespace_ino == 0 && !s->view_restricted && !e->unlisted,
                .flush = e->flush,
                .flush_device = e->flush_device,
                .rt_flush_device = e->rt_flush_device,
                .covered_if_path = e->covered_if_path,
                .covered_if_dev = e->covered_if_dev,
                .walk = e->walk,
                .open_key = e->open_key,
                .progress = probe,
                .run_as_uid = e->run_as_uid,
                .run_as_gid = e->run_as_gid,
        };
}

int run_jobs_build(const Plan *p, const Sample *s, const Handover *h, int sysfs_fd, int debugfs_fd,
                   ProgressHeld held_from, RunJobs *ret) {
        _cleanup_(run_jobs_done) RunJobs j = {};
        size_t n = p->n_sync;

        j.jobs = calloc(MAX(n, 1), sizeof(ExecJob));
        j.probes = calloc(MAX(n, 1), sizeof(ProgressProbe));
        j.memos = calloc(MAX(n, 1), sizeof(ProgressMemo));
        j.busy = calloc(1, sizeof(ProgressBusy));
        j.blocked = calloc(MAX(n, 1), sizeof(StuckWorker *));
        j.run = calloc(MAX(n, 1), sizeof(ExecJob));
        j.run_index = calloc(MAX(n, 1), sizeof(size_t));
        if (!j.jobs || !j.probes || !j.memos || !j.busy || !j.blocked || !j.run || !j.run_index)
                return -ENOMEM;
        j.n_jobs = n;

        for (size_t i = 0; i < n; i++) {
                const PlanEntry *e = &p->entries[i];
                const Superblock *sb = &s->sbs[e->sb];

                /* Progress evidence for the executor: sysfs and debugfs only. */
                j.probes[i] = (ProgressProbe) {
                        .sysfs_fd = sb->device.is_block ? sysfs_fd : -EBADF,
                        .debugfs_fd = debugfs_fd,
                        .leaves = sb->device.leaves,
                        .n_leaves = sb->device.n_leaves,
                        .bdi_name = sb->device.bdi_name,
                        .memo = sb->device.is_block && held_from != PROGRESS_HELD_STAT ? &j.memos[i] : NULL,
                        .busy = j.busy,
                        .busy_only = held_from == PROGRESS_HELD_BUSY,
                };
                j.jobs[i] = job_from_entry(e, s, &j.probes[i]);
                /* A worker of an earlier pass is still stuck on this device, or on the way to this
                 * mount: a second one would only get stuck too (and pile up from sleep to sleep). */
                j.blocked[i] = handover_find_stuck(h, j.jobs[i].group);
                for (size_t k = 0; !j.blocked[i] && k < h->n_stuck; k++)
                        if (run_stuck_open_blocks(h->stuck[k].group, &j.jobs[i]))
                                j.blocked[i] = &h->stuck[k];
                if (j.blocked[i]) {
                        j.jobs[i].outcome = OUTCOME_TIMEOUT;
                        j.jobs[i].hung = j.blocked[i]->hung;
                        continue;
                }
                j.run_index[j.n_run] = i;
                j.run[j.n_run++] = j.jobs[i];
        }
        *ret = j;
        j = (RunJobs) {};
        return 0;
}

/* Whether job i can wait for its device's writeback (writeback.h): a block filesystem whose bdi
 * stats were read from debugfs, not a job that becomes a FUSE owner. */
static bool settle_eligible(const RunJobs *j, const Sample *s, const Plan *p, size_t i) {
        const Superblock *sb = &s->sbs[p->entries[i].sb];

        return j->probes[i].debugfs_fd >= 0 && sb->fs_class == FS_CLASS_BLOCK && sb->device.bdi_name &&
               sb->has_bdi_stats && j->jobs[i].run_as_uid == (uid_t) -1;
}

bool run_jobs_settle(RunJobs *j, const Plan *p, const Sample *s, uint64_t slack) {
        bool dirty = false;

        for (size_t k = 0; k < j->n_run; k++) {
                size_t i = j->run_index[k];
                const Superblock *sb = &s->sbs[p->entries[i].sb];

                if (!settle_eligible(j, s, p, i))
                        continue;
                j->jobs[i].settle = j->run[k].settle = SETTLE_IN_FLIGHT;
                if (bdi_stats_has(&sb->bdi, BDI_STAT_RECLAIMABLE) &&
                    sb->bdi.value[BDI_STAT_RECLAIMABLE] > slack)
                        dirty = true;
        }
        return dirty;
}

void run_jobs_settle_all(RunJobs *j) {
        for (size_t k = 0; k < j->n_run; k++)
                if (j->run[k].settle == SETTLE_IN_FLIGHT)
                        j->jobs[j->run_index[k]].settle = j->run[k].settle = SETTLE_ALL;
}

/* Whether sync entry i is the upper layer of an overlay planned after it: the overlay's job is
 * "covered" only by an upper layer synced before it, never by one deferred. */
static bool upper_of_overlay(const Plan *p, size_t i) {
        for (size_t k = 0; k < p->n_sync; k++)
                if (p->entries[k].covered_if_path && p->entries[k].covered_if_dev == p->entries[i].dev)
                        return true;
        return false;
}

size_t run_jobs_defer(RunJobs *j, const Plan *p) {
        size_t n = 0, kept = 0;

        for (size_t k = 0; k < j->n_run; k++) {
                size_t i = j->run_index[k];

                if (!p->entries[i].late_commit || j->run[k].settle == SETTLE_NONE || upper_of_overlay(p, i)) {
                        j->run_index[kept] = i;
                        j->run[kept++] = j->run[k];
                        continue;
                }
                /* No worker and no wait here: the late pass waits for the data and commits. */
                j->jobs[i].outcome = OUTCOME_DEFERRED;
                j->jobs[i].error = 0;
                n++;
        }
        j->n_run = kept;
        return n;
}

void run_jobs_collect(RunJobs *j) {
        for (size_t k = 0; k < j->n_run; k++)
                j->jobs[j->run_index[k]] = j->run[k];
}

const char *run_job_stuck_key(const ExecJob *job, char buf[static RUN_STUCK_KEY_MAX]) {
        if (job->hung || job->reached_sync)
                return job->group;
        if (job->open_key)
                return job->open_key;
        snprintf(buf, RUN_STUCK_KEY_MAX, RUN_STUCK_OPEN_PREFIX "%u:%u", major(job->dev), minor(job->dev));
        return buf;
}

/* Whether the mount named id (up to end) is among walk's (",ID,ID,"). */
static bool walk_has(const char *walk, const char *id, size_t len) {
        for (const char *p = walk; (p = strchr(p, ',')); p++)
                if (strncmp(p + 1, id, len) == 0 && p[1 + len] == ',')
                        return true;
        return false;
}

bool run_stuck_open_blocks(const char *key, const ExecJob *job) {
        const char *p = startswith(key, RUN_STUCK_OPEN_PREFIX), *at;
        unsigned ma, mi;
        int n = 0;

        if (!p || sscanf(p, "%u:%u%n", &ma, &mi, &n) != 2 || n <= 0)
                return false;
        at = p + n;
        if (*at != '@' || !job->walk)
                /* The superblock's key (a handover of an older version, too many mounts to name), or a
                 * job whose walk is not known: every job of that device number, fail closed. */
                return (*at == 0 || *at == '@') && job->dev == makedev(ma, mi);
        for (const char *id = at + 1; *id;) {
                size_t len = strcspn(id, ",");

                if (len > 0 && walk_has(job->walk, id, len))
                        return true;
                id += len;
                if (*id == ',')
                        id++;
        }
        return false;
}

/* Whether b, which blocks a job, waits on the way to its mount rather than on its device. */
static bool blocked_before_sync(const StuckWorker *b) {
        return startswith(b->group, RUN_STUCK_OPEN_PREFIX);
}

bool run_job_hung(const RunJobs *j, size_t i) {
        const ExecJob *jobs = j->jobs;

        if (jobs[i].outcome != OUTCOME_TIMEOUT || !jobs[i].hung)
                return false;
        /* Not started: a worker of an earlier pass is still there on the device, which was proven
         * stuck then (handover_prune() checked that it exists, is that process and is no zombie). */
        if (j->blocked[i])
                return true;
        if (jobs[i].abandoned_pid > 0)
                return jobs[i].stuck;
        /* Not started behind a stuck worker of its group: hung while that worker is. */
        for (size_t k = 0; k < j->n_jobs; k++)
                if (k != i && jobs[k].abandoned_pid > 0 && jobs[k].hung &&
                    streq_ptr(jobs[k].group, jobs[i].group))
                        return jobs[k].stuck;
        return false;
}

const char *run_note_path(const char *mount_point, char buf[static RUN_NOTE_PATH_MAX + 1]) {
        char shown[PATH_MAX * 4 + 1];

        (void) utf8_escape_display(mount_point, strlen(mount_point), UTF8_ESCAPE_BACKSLASH, shown,
                                   sizeof shown);
        if (ellipsize_middle(shown, RUN_NOTE_PATH_MAX, buf, RUN_NOTE_PATH_MAX + 1) == shown)
                strcpy(buf, shown); /* short enough as it is: it fits */
        return buf;
}

RunNote run_job_note(const RunJobs *j, size_t i, const char *mount_point, char *buf, size_t size) {
        const ExecJob *job = &j->jobs[i];
        char short_mp[RUN_NOTE_PATH_MAX + 1];
        const char *mp = run_note_path(mount_point, short_mp);

        if (job->outcome == OUTCOME_SYNCED || job->outcome == OUTCOME_GONE ||
            job->outcome == OUTCOME_COVERED || job->outcome == OUTCOME_DEFERRED)
                return RUN_NOTE_NONE;
        if (job->outcome != OUTCOME_TIMEOUT) {
                snprintf(buf, size, "Sync of %s failed: %s", mp, strerror(job->error ?: EIO));
                return RUN_NOTE_ERROR;
        }
        if (j->blocked[i])
                snprintf(buf, size, "Sync of %s not started: worker %d of an earlier pass is still stuck %s.",
                         mp, (int) j->blocked[i]->pid,
                         blocked_before_sync(j->blocked[i]) ? "on its way to it" : "on its device");
        else if (job->abandoned_pid > 0)
                snprintf(buf, size, "Sync of %s timed out, worker %d abandoned.", mp,
                         (int) job->abandoned_pid);
        else if (job->error > 0)
                snprintf(buf, size, "Sync of %s not started: no worker could be started: %s.", mp,
                         strerror(job->error));
        else
                snprintf(buf, size, "Sync of %s not started before the deadline.", mp);
        return RUN_NOTE_TIMEOUT;
}

void run_tally_done(RunTally *t) {
        if (!t)
                return;
        free(t->left);
        *t = (RunTally) {};
}

/* A reason of the sample for the record, at most RUN_REASON_MAX bytes: cut at a character's start,
 * with "…" after it. Reasons name paths any user chooses (an nsfs mount 17 KiB deep: review AM,
 * AM-1, refused the whole record, STATE_STRING_MAX). NULL when out of memory. */
static char *reason_dup(const char *s) {
        size_t cut;
        char *r;

        if (strlen(s) <= RUN_REASON_MAX)
                return strdup(s);
        cut = utf8_cut(s, RUN_REASON_MAX - strlen("…"));
        r = malloc(cut + strlen("…") + 1);
        if (!r)
                return NULL;
        memcpy(r, s, cut);
        strcpy(r + cut, "…");
        return r;
}

static int record_header(const RunInput *in, RunRecord *rec) {
        const Sample *s = in->sample;

        *rec = (RunRecord) {
                .started_realtime = in->started_realtime,
                .started_boottime = in->started_boottime,
                .started_suspended = in->started_boottime > 0 && in->started_monotonic > 0 &&
                                                     in->started_boottime >= in->started_monotonic
                                             ? in->started_boottime - in->started_monotonic
                                             : USEC_INFINITY,
                .pid = in->pid,
                .deadline = in->deadline,
                .t_read = s->t_read,
                .t_sample = s->t_sample,
                .t_plan = in->plan->t_plan,
                .t_execute = in->t_execute,
                .flushers_woken = in->flushers_woken > in->started_monotonic
                                          ? in->flushers_woken - in->started_monotonic
                                          : 0,
                .eta = in->plan->eta == USEC_INFINITY ? 0 : in->plan->eta,
                .has_complete = true,
                .complete = s->complete,
        };
        if (in->suspend && in->suspend->success != SUSPEND_STATS_UNKNOWN &&
            in->suspend->fail != SUSPEND_STATS_UNKNOWN) {
                rec->suspend_counts_known = true;
                rec->suspend_success = in->suspend->success;
                rec->suspend_fail = in->suspend->fail;
        }
        if (id128_string_valid(in->boot_id))
                memcpy(rec->boot_id, in->boot_id, sizeof rec->boot_id);
        if (s->n_incomplete_why > 0) {
                rec->incomplete_why = calloc(s->n_incomplete_why, sizeof(char *));
                if (!rec->incomplete_why)
                        return -ENOMEM;
                for (size_t i = 0; i < s->n_incomplete_why && i < STATE_REASONS_MAX; i++) {
                        rec->incomplete_why[i] = reason_dup(s->incomplete_why[i]);
                        if (!rec->incomplete_why[i])
                                return -ENOMEM;
                        rec->n_incomplete_why = i + 1;
                }
        }
        rec->trigger = strdup(in->trigger);
        if (in->sleep_action && !(rec->sleep_action = strdup(in->sleep_action)))
                return -ENOMEM;
        rec->mounts = calloc(MAX(in->plan->n_entries, 1), sizeof(RunMount));
        if (!rec->trigger || !rec->mounts)
                return -ENOMEM;
        rec->n_mounts = in->plan->n_entries;
        return 0;
}

static int set_string(char **s, const char *v) {
        char *c = strdup(v);

        if (!c)
                return -ENOMEM;
        free(*s);
        *s = c;
        return 0;
}

static void left_unsynced(RunTally *t, dev_t dev) {
        t->unsynced = true;
        t->left[t->n_left++] = dev;
}

/* Whether the unit's pass of this sleep saw the superblock of e: its device on its lists, through a
 * mount the superblock still has where the list names one (review H, H3: a device number is given to
 * the next filesystem once free). 1 yes, 0 no, -ENOMEM. */
static int unit_saw(const RunInput *in, const PlanEntry *e) {
        const Superblock *sb = &in->sample->sbs[e->sb];
        _cleanup_free_ uint64_t *ids = calloc(MAX(sb->n_mounts, 1), sizeof(uint64_t));

        if (!ids)
                return -ENOMEM;
        for (size_t k = 0; k < sb->n_mounts; k++)
                ids[k] = in->sample->table->entries[sb->mounts[k]].mount_id_unique;
        return handover_unit_saw(in->unit, e->dev, ids, sb->n_mounts, in->now_boottime);
}

/* A mount the plan skipped. The kernel sync is redundant only if nothing it would write was left
 * out (late scope, Action=skip), unless evidence read after our own workers proves it clean. A
 * superblock skipped by rule is left unsynced (not an error: the run did what it was told): the
 * kernel's sync is its only chance, in every mode. The unit's pass hands it to the late pass
 * (t->left), and the late pass's own skip keeps the knob on too (one mounted since the unit's
 * pass is on no list). */
static int record_skipped_entry(const RunInput *in, size_t i, RunMount *m, RunTally *t) {
        const PlanEntry *e = &in->plan->entries[i];
        bool clean = in->fuse_clean && in->fuse_clean[i];
        const char *why = in->fuse_why ? in->fuse_why[i] : NULL;

        t->n_skipped++;
        if (e->skip_rule && e->primary)
                left_unsynced(t, e->dev);
        if (e->uncovered && e->fuse_evidence && (clean || why)) {
                char *reason;

                if (clean ? asprintf(&reason,
                                     "late pass: FUSE, proven clean: no dirty inode on its bdi %s, "
                                     "no page under writeback",
                                     e->bdi_name) < 0
                          : asprintf(&reason, "%s; FUSE, not proven clean: %s", e->reason, why) < 0)
                        return -ENOMEM;
                free(m->reason);
                m->reason = reason;
                if (clean)
                        return 0;
        }
        if (e->uncovered) {
                if (t->covered)
                        t->first_uncovered = i;
                t->covered = false;
                t->n_uncovered++;
                /* Made since the unit's pass (a network or FUSE mount): not synced by it (review G,
                 * G1), whatever its record says of the others. */
                if (in->unit) {
                        int r = unit_saw(in, e);

                        if (r < 0)
                                return r;
                        t->unit_unseen = t->unit_unseen || r == 0;
                }
        }
        return 0;
}

/* The reason of a timed-out job, and whether it is hung (else left to the kernel's sync). */
static int timeout_reason(const RunJobs *j, size_t i, bool *ret_hung, char **ret) {
        const StuckWorker *b = j->blocked[i];
        const ExecJob *job = &j->jobs[i];

        if (b) {
                const char *what = "busy", *tail = ": left to the kernel's sync";

                /* job->hung: proven stuck then, and not seen to wake since (run_jobs_blocked_recheck()) */
                *ret_hung = b->hung && job->hung;
                if (*ret_hung)
                        what = "hung", tail = "";
                else if (b->hung)
                        what = "woke up",
                        tail = ", which completed I/O since it was proven stuck, or cannot be watched now: left "
                               "to the kernel's sync";
                return asprintf(ret,
                                "%s: not started, worker %d of an earlier pass is still in the kernel %s%s",
                                what, (int) b->pid,
                                blocked_before_sync(b)
                                        ? "on its way to this mount (above its device: a path through a "
                                          "server that does not answer)"
                                        : "on this device",
                                tail) < 0
                               ? -ENOMEM
                               : 0;
        }
        *ret_hung = run_job_hung(j, i);
        if (!*ret_hung && job->abandoned_pid == 0 && job->error > 0)
                /* the executor tried until the deadline (fork(): EAGAIN from TasksMax=, ENOMEM) */
                return asprintf(ret, "not started: no worker could be started: %s", strerror(job->error)) < 0
                               ? -ENOMEM
                               : 0;
        if (*ret_hung)
                *ret = strdup(
                        job->abandoned_pid > 0
                                ? "hung: its device completed no I/O for the proof window, worker still in the kernel"
                                : "hung: not started, its device is stuck");
        else
                /* Past syncfs, the worker is in it or in the flushes after it: "before syncfs" would
                 * send the admin to the wrong place (review R, R5); a realtime device's flush is not
                 * watched for progress, so a hang there is never proven. */
                *ret = strdup(job->abandoned_pid == 0 ? "not started before the deadline"
                              : job->hung             ? "stuck device woke up: left to the kernel's sync"
                              : !job->reached_sync
                                      ? "slow, stuck before syncfs, above its disks (they held no request) "
                                        "or without progress evidence: left to the kernel's sync"
                              : job->rt_flush_device
                                      ? "slow, in syncfs or the flush of its realtime device (not watched "
                                        "for progress), or its disks still completed I/O: left to the "
                                        "kernel's sync"
                                      : "slow, in syncfs: its disks still completed I/O, or there is no "
                                        "progress evidence: left to the kernel's sync");
        return *ret ? 0 : -ENOMEM;
}

/* A planned mount: what its job did. */
static int record_job(const RunInput *in, size_t i, RunMount *m, RunTally *t) {
        const ExecJob *job = &in->jobs->jobs[i];
        dev_t dev = in->plan->entries[i].dev;
        char *reason;
        bool hung;
        int r;

        m->duration = job->duration;
        m->writeback_wait = job->waited;
        m->start_offset = job->started > in->started_monotonic ? job->started - in->started_monotonic : 0;
        m->error = job->error;
        m->abandoned_pid = (int) job->abandoned_pid;

        switch (job->outcome) {
        case OUTCOME_SYNCED:
                t->n_synced++;
                return 0;
        case OUTCOME_DEFERRED:
                /* On the handover's list: a late pass that does not sync it keeps the kernel's sync
                 * on, and only the late pass may turn that off. */
                m->error = 0;
                t->n_deferred++;
                t->left[t->n_left++] = dev;
                return set_string(&m->reason, "left to the late pass, which waits for its data and commits "
                                              "it; the kernel's own sync is on until then");
        case OUTCOME_TIMEOUT:
                t->n_timeout++;
                r = timeout_reason(in->jobs, i, &hung, &reason);
                if (r < 0)
                        return r;
                free(m->reason);
                m->reason = reason;
                if (hung)
                        t->n_hung++;
                else
                        left_unsynced(t, dev);
                /* as timeout_reason() tells it: "not started: no worker could be started" */
                if (!in->jobs->blocked[i] && !hung && job->abandoned_pid == 0 && job->error > 0)
                        t->n_not_started++;
                return 0;
        case OUTCOME_GONE:
        case OUTCOME_COVERED:
                /* Gone: no mount of this superblock is left (unmounting synced it); not a sync
                 * failure, but not ours either, and a lazily unmounted superblock lives on while
                 * files are open: only the kernel's sync still reaches it. Covered: an overlay whose
                 * upperdir lies on the upper superblock just synced. */
                m->error = 0;
                t->n_skipped++;
                t->gone = t->gone || job->outcome == OUTCOME_GONE;
                r = set_string(&m->outcome, outcome_to_string(OUTCOME_SKIPPED));
                if (r >= 0)
                        r = set_string(
                                &m->reason,
                                job->outcome == OUTCOME_GONE
                                        ? "gone: unmounted since the plan was made"
                                        : "overlay: upperdir verified on its upper layer, synced before it");
                return r;
        default:
                t->n_error++;
                left_unsynced(t, dev);
                return 0;
        }
}

static const char *record_outcome(const RunInput *in, size_t i) {
        return outcome_to_string(i < in->plan->n_sync ? in->jobs->jobs[i].outcome : OUTCOME_SKIPPED);
}

int run_record_build(const RunInput *in, RunRecord *ret, RunTally *ret_tally) {
        _cleanup_(run_record_done) RunRecord rec = {};
        _cleanup_(run_tally_done) RunTally t = { .covered = true };
        const Plan *p = in->plan;
        int r;

        r = record_header(in, &rec);
        if (r < 0)
                return r;
        t.left = calloc(MAX(p->n_entries, 1), sizeof(dev_t));
        if (!t.left)
                return -ENOMEM;

        for (size_t i = 0; i < p->n_entries; i++) {
                const PlanEntry *e = &p->entries[i];
                RunMount *m = &rec.mounts[i];

                m->mount_point = strdup(e->mount_point);
                m->namespace_ino = e->namespace_ino;
                m->fstype = strdup(e->fstype);
                m->action = strdup(plan_action_to_string(e->action));
                m->reason = strdup(e->reason);
                m->outcome = strdup(record_outcome(in, i));
                if (!m->mount_point || !m->fstype || !m->action || !m->reason || !m->outcome)
                        return -ENOMEM;
                r = i < p->n_sync ? record_job(in, i, m, &t) : record_skipped_entry(in, i, m, &t);
                if (r < 0)
                        return r;
        }

        rec.result = strdup(t.n_error > 0 ? "error" : t.n_timeout > 0 ? "timeout" : "success");
        if (!rec.result)
                return -ENOMEM;
        *ret = rec;
        rec = (RunRecord) {};
        *ret_tally = t;
        t = (RunTally) {};
        return 0;
}

KnobFacts run_knob_facts(const RunTally *t, bool complete, bool late, bool carried, bool earlier_hung) {
        return (KnobFacts) {
                .unsynced = t->unsynced || carried,
                .hung = t->n_hung > 0 || earlier_hung,
                .complete = complete && !t->gone,
                .covered = t->covered && late,
        };
}

bool run_jobs_blocked_recheck(RunJobs *j, size_t i, bool still_stuck) {
        if (!j->blocked[i] || !j->jobs[i].hung || still_stuck)
                return false;
        j->jobs[i].hung = false;
        return true;
}

bool run_earlier_hung(const Handover *h) {
        /* A device an earlier pass proved stuck, whose worker still is: the kernel's sync would
         * block on it whether or not this pass plans it (FUSE). */
        for (size_t i = 0; i < h->n_stuck; i++)
                if (h->stuck[i].hung)
                        return true;
        return false;
}

/* Lists dev on the unit's record once. Returns false when the list is full: those beyond are not
 * listed, and the late pass does not lean on the record for them. */
static bool handover_list_synced(Handover *h, dev_t dev, uint64_t mount_id, usec_t now_boottime) {
        for (size_t k = 0; k < h->n_synced; k++)
                if (h->synced[k] == dev)
                        return true;
        return handover_add_synced(h, dev, mount_id, now_boottime) >= 0;
}

void run_handover_synced(Handover *h, const RunJobs *j, usec_t now_boottime) {
        for (size_t i = 0; i < j->n_jobs; i++)
                if ((j->jobs[i].outcome == OUTCOME_SYNCED || j->jobs[i].outcome == OUTCOME_COVERED) &&
                    !handover_list_synced(h, j->jobs[i].dev, j->jobs[i].mount_id_unique, now_boottime))
                        return;
}

void run_handover_proven_clean(Handover *h, const Plan *p, usec_t now_boottime) {
        for (size_t i = p->n_sync; i < p->n_entries; i++)
                if (p->entries[i].proven_clean &&
                    !handover_list_synced(h, p->entries[i].dev, p->entries[i].mount_id_unique, now_boottime))
                        return;
}

void run_handover_unsynced(Handover *h, const dev_t *left, size_t n_left, usec_t now_boottime) {
        handover_clear_unsynced(h);
        for (size_t k = 0; k < n_left; k++)
                if (handover_add_unsynced(h, left[k], now_boottime) < 0) {
                        /* Full: 0:0 is a superblock no pass ever syncs, so the late pass keeps the
                         * kernel's sync on. */
                        if (h->n_unsynced > 0)
                                h->unsynced[h->n_unsynced - 1] = 0;
                        break;
                }
}

bool run_unsynced_carried(const Handover *h, const RunJobs *j, usec_t now_boottime) {
        for (size_t k = 0; k < h->n_unsynced; k++) {
                bool done = false;

                if (!handover_unsynced_fresh(h, k, now_boottime))
                        continue;
                /* Synced by this pass, or on a device it proved stuck: the kernel's serial sync
                 * would block there, not write it (KnobFacts.hung decides then). */
                for (size_t i = 0; i < j->n_jobs && !done; i++)
                        done = j->jobs[i].dev == h->unsynced[k] &&
                               (j->jobs[i].outcome == OUTCOME_SYNCED || run_job_hung(j, i));
                if (!done)
                        return true;
        }
        return false;
}
