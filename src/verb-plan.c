/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "context.h"
#include "ext4-journal.h"
#include "history.h"
#include "log.h"
#include "shared/format-util.h"
#include "shared/string-util.h"
#include "shared/devnum-util.h"
#include "shared/json-util.h"
#include "verbs.h"

/* A string from the system (a path, a source, a rule's name, a reason naming them): raw bytes, with
 * "<key>_hex" when not valid UTF-8, as in the run records (json_add_bytes()). */
static int add_bytes(json_object *o, const char *key, const char *s) {
        return json_add_bytes(o, key, s, SIZE_MAX);
}

static int device_classes_to_json(unsigned classes, json_object **ret) {
        _cleanup_json_ json_object *a = json_object_new_array();
        int r;

        if (!a)
                return -ENOMEM;
        for (unsigned bit = 1; bit <= _DEVICE_CLASS_ALL; bit <<= 1)
                if (classes & bit &&
                    (r = json_append(a, json_object_new_string(device_class_to_string(bit)))) < 0)
                        return r;
        *ret = TAKE_PTR(a);
        return 0;
}

/* "run_as": {"uid", "gid"} of a FUSE mount synced as its owner, else null. */
static int plan_entry_add_run_as(json_object *o, const PlanEntry *e) {
        _cleanup_json_ json_object *owner = NULL;
        int r;

        if (e->run_as_uid == (uid_t) -1)
                return json_add_null(o, "run_as");
        owner = json_object_new_object();
        if (!owner)
                return -ENOMEM;
        if ((r = json_add_u64(owner, "uid", e->run_as_uid)) < 0 ||
            (r = json_add_u64(owner, "gid", e->run_as_gid)) < 0)
                return r;
        return json_add(o, "run_as", TAKE_PTR(owner));
}

/* "journal": what sysfs said of an ext4/ext3 superblock's journal, "nobarrier": what proc's
 * options file said of its barriers (ext4-journal.h); null when it was not read or could not be
 * told (the device flush then stays). */
static int plan_entry_add_journal(json_object *o, const Superblock *s) {
        int r;

        if (s->journal == EXT4_JOURNAL_YES || s->journal == EXT4_JOURNAL_NONE)
                r = json_add_bool(o, "journal", s->journal == EXT4_JOURNAL_YES);
        else
                r = json_add_null(o, "journal");
        if (r < 0 || s->nobarrier == -ENODATA)
                return r;
        if (s->nobarrier == 0 || s->nobarrier == 1)
                return json_add_bool(o, "nobarrier", s->nobarrier == 1);
        return json_add_null(o, "nobarrier");
}

/* A superblock on loop devices: its backing file as sysfs names it, and where the loop driver placed
 * it (loop-backing.h: its filesystem, and the device when the "file" is a device node) or why it did
 * not — what DeferCommit= went by. */
static int plan_entry_add_loop(json_object *o, const Superblock *s) {
        _cleanup_json_ json_object *l = NULL;
        int e = s->loop_backing_error, r;

        if (!(s->device.classes & DEVICE_LOOP))
                return 0;
        l = json_object_new_object();
        if (!l)
                return -ENOMEM;
        if ((r = add_bytes(l, "backing_file", s->device.loop_backing_file)) < 0 ||
            (r = json_add_u64(l, "loop_devices", s->device.n_loops)) < 0 ||
            (r = e == 0 ? json_add_string(l, "backing_device", FORMAT_DEVNUM(s->loop_backing_dev))
                        : json_add_null(l, "backing_device")) < 0 ||
            (r = e == 0 && s->loop_backing_rdev != 0
                         ? json_add_string(l, "backing_rdev", FORMAT_DEVNUM(s->loop_backing_rdev))
                         : json_add_null(l, "backing_rdev")) < 0 ||
            (r = json_add_string(l, "backing_error",
                                 e == 0          ? NULL
                                 : e == -ENODATA ? "not asked"
                                                 : strerror(-e))) < 0)
                return r;
        return json_add(o, "loop", TAKE_PTR(l));
}

static int plan_entry_to_json(const PlanEntry *e, const Superblock *s, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        _cleanup_free_ char *ns = NULL;
        json_object *classes = NULL;
        int r;

        if (!o)
                return -ENOMEM;
        if (e->namespace_ino > 0 && asprintf(&ns, "mnt:[%llu]", (unsigned long long) e->namespace_ino) < 0)
                return -ENOMEM;
        if ((r = add_bytes(o, "mount_point", e->mount_point)) < 0 ||
            (r = add_bytes(o, "fstype", e->fstype)) < 0 ||
            (r = add_bytes(o, "source", e->source ?: "")) < 0 ||
            (r = json_add_string(o, "device", FORMAT_DEVNUM(e->dev))) < 0 ||
            (r = json_add_string(o, "group", e->group)) < 0 ||
            (r = json_add_string(o, "action", plan_action_to_string(e->action))) < 0 ||
            (r = add_bytes(o, "reason", e->reason)) < 0 ||
            (r = json_add_u64(o, "timeout_usec", e->timeout)) < 0 ||
            (r = json_add_u64_or_null(o, "dirty_bytes", e->dirty_bytes, UINT64_MAX)) < 0 ||
            (r = json_add_u64_or_null(o, "eta_usec", e->eta, USEC_INFINITY)) < 0 ||
            (r = add_bytes(o, "rule", e->rule)) < 0 ||
            (r = json_add_string(o, "class", fs_class_to_string(s->fs_class))) < 0 ||
            (r = device_classes_to_json(s->device.classes, &classes)) < 0 ||
            (r = json_add(o, "device_classes", classes)) < 0 ||
            (r = add_bytes(o, "bdi", s->device.bdi_name)) < 0 ||
            (r = json_add_int(o, "mount_id", e->mount_id)) < 0 || (r = add_bytes(o, "path", e->path)) < 0 ||
            (r = json_add_bool(o, "unlisted", e->unlisted)) < 0 ||
            (r = json_add_string(o, "namespace", ns)) < 0 ||
            (r = add_bytes(o, "flush_device", e->flush_device)) < 0 ||
            (r = json_add_string(o, "flush", fs_flush_to_string(e->flush))) < 0 ||
            (r = add_bytes(o, "rt_flush_device", e->rt_flush_device)) < 0 ||
            (r = json_add_bool(o, "late_commit", e->late_commit)) < 0 ||
            (r = plan_entry_add_journal(o, s)) < 0 || (r = plan_entry_add_run_as(o, e)) < 0 ||
            (r = plan_entry_add_loop(o, s)) < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

/* The reasons the view is incomplete, and "... and N more" for those dropped: raw bytes (they name
 * paths), with "incomplete_why_hex" as in the run records (json_add_bytes_array()). */
static int add_incomplete_why(json_object *root, const Sample *sample) {
        _cleanup_free_ char **why = NULL;
        char more[64];
        size_t n = sample->n_incomplete_why;

        why = calloc(n + 1, sizeof(char *));
        if (!why)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                why[i] = sample->incomplete_why[i];
        if (sample->n_incomplete_dropped > 0) {
                snprintf(more, sizeof more, "... and %zu more", sample->n_incomplete_dropped);
                why[n++] = more;
        }
        return json_add_bytes_array(root, "incomplete_why", why, n, SIZE_MAX);
}

static int plan_phases_to_json(const Sample *sample, const Plan *plan, json_object **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        if ((r = json_add_u64(o, "read", sample->t_read)) < 0 ||
            (r = json_add_u64(o, "sample", sample->t_sample)) < 0 ||
            (r = json_add_u64(o, "plan", plan->t_plan)) < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

int plan_to_json(const Sample *sample, const Plan *plan, json_object **ret) {
        _cleanup_json_ json_object *root = json_object_new_object(), *mounts = json_object_new_array();
        const Meminfo *mi = sample->has_meminfo ? &sample->meminfo : NULL;
        json_object *phases = NULL;
        int r;

        if (!root || !mounts)
                return -ENOMEM;
        if ((r = json_add_u64_or_null(root, "eta_usec", plan->eta, USEC_INFINITY)) < 0 ||
            (r = json_add_u64(root, "deadline_usec", plan->deadline)) < 0 ||
            (r = json_add_int(root, "max_parallel", (int) plan->max_parallel)) < 0 ||
            (r = mi && mi->has_dirty ? json_add_u64(root, "dirty_bytes", mi->dirty_bytes)
                                     : json_add_null(root, "dirty_bytes")) < 0 ||
            (r = mi && mi->has_writeback ? json_add_u64(root, "writeback_bytes", mi->writeback_bytes)
                                         : json_add_null(root, "writeback_bytes")) < 0 ||
            (r = json_add_bool(root, "bdi_stats_available", sample->has_debugfs)) < 0 ||
            (r = json_add_bool(root, "complete", sample->complete)) < 0 ||
            (r = json_add_bool(root, "view_restricted", sample->view_restricted)) < 0 ||
            (r = add_incomplete_why(root, sample)) < 0 ||
            (r = plan_phases_to_json(sample, plan, &phases)) < 0 ||
            (r = json_add(root, "phases_usec", phases)) < 0)
                return r;

        for (size_t i = 0; i < plan->n_entries; i++) {
                const PlanEntry *e = &plan->entries[i];
                json_object *o = NULL;

                if ((r = plan_entry_to_json(e, &sample->sbs[e->sb], &o)) < 0 ||
                    (r = json_append(mounts, o)) < 0)
                        return r;
        }
        r = json_add(root, "mounts", TAKE_PTR(mounts));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(root);
        return 0;
}

static int plan_print_table(const Args *a, const Sample *sample, const Plan *plan) {
        static const char *const headers[] = { "MOUNT",   "TYPE",  "DEVICE", "ACTION",
                                               "TIMEOUT", "DIRTY", "REASON" };
        _cleanup_(table_freep) Table *t = table_new(ELEMENTSOF(headers), headers);
        char eta[FORMAT_TIMESPAN_MAX], dl[FORMAT_TIMESPAN_MAX];
        size_t n_groups = 0, folded = 0;
        int r;

        if (!t)
                return log_oom();
        (void) table_set_ellipsize(t, 0);
        (void) table_set_ellipsize(t, 6);
        for (size_t i = 0; i < plan->n_entries; i++) {
                const PlanEntry *e = &plan->entries[i];
                char tmo[FORMAT_TIMESPAN_MAX], dirty[32];
                const char *cells[ELEMENTSOF(headers)];
                _cleanup_free_ char *where = NULL;

                if (e->action == PLAN_SYNC && (i == 0 || !streq(plan->entries[i - 1].group, e->group)))
                        n_groups++;
                /* Pseudo filesystems are most of a desktop's mounts and never hold data: one line. */
                if (!a->all && e->action == PLAN_SKIP && startswith(e->reason, "pseudo filesystem")) {
                        folded++;
                        continue;
                }

                if (e->dirty_bytes == UINT64_MAX)
                        snprintf(dirty, sizeof dirty, "-");
                else
                        format_bytes(dirty, sizeof dirty, e->dirty_bytes);
                if (e->namespace_ino && asprintf(&where, "%s (mnt:[%llu])", e->mount_point,
                                                 (unsigned long long) e->namespace_ino) < 0)
                        return log_oom();
                cells[0] = where ? where : e->mount_point;
                cells[1] = e->fstype;
                cells[2] = FORMAT_DEVNUM(e->dev);
                cells[3] = plan_action_to_string(e->action);
                cells[4] = e->action == PLAN_SYNC ? format_timespan(tmo, sizeof tmo, e->timeout) : "-";
                cells[5] = dirty;
                cells[6] = e->reason;
                r = table_add_row(t, cells);
                if (r < 0)
                        return log_oom();
        }
        r = table_print_styled(t, stdout, a->legend, &a->style);
        if (r < 0)
                return r;
        if (a->legend && folded > 0)
                printf("%zu pseudo filesystem%s not shown (no backing store, never synced); --all shows them.\n",
                       folded, folded == 1 ? "" : "s");
        if (a->legend)
                printf("\n%zu mount%s: %zu to sync in %zu device group%s, %zu skipped; ETA %s, deadline %s.%s\n",
                       plan->n_entries, plan->n_entries == 1 ? "" : "s", plan->n_sync, n_groups,
                       n_groups == 1 ? "" : "s", plan->n_entries - plan->n_sync,
                       plan->eta == USEC_INFINITY ? "unknown" : format_timespan(eta, sizeof eta, plan->eta),
                       format_timespan(dl, sizeof dl, plan->deadline),
                       sample->has_debugfs ? "" : " (no bdi stats: dirty data and ETA unknown)");
        if (a->legend && !sample->complete) {
                printf("Incomplete: not every superblock the kernel's own sync writes can be reached:\n");
                for (size_t i = 0; i < sample->n_incomplete_why; i++) {
                        _cleanup_free_ char *e = escape_for_display(sample->incomplete_why[i]);

                        if (!e)
                                return log_oom();
                        printf("  - %s\n", e);
                }
                if (sample->n_incomplete_dropped > 0)
                        printf("  - ... and %zu more\n", sample->n_incomplete_dropped);
        }
        return 0;
}

/* What the ETA expects past a limit: the pass past DeadlineSec=, a mount past its MountTimeoutSec=
 * (--deadline= and a rule's MountTimeoutSec= included; an estimate, as "Past ETAs" shows), and what
 * becomes of a mount not synced by then. */
static int print_overruns(const Plan *plan, SyncOnSuspendMode knob) {
        static const char header[] = "Expected past a limit (an estimate):\n";
        char eta[FORMAT_TIMESPAN_MAX], limit[FORMAT_TIMESPAN_MAX];
        bool any = false;

        if (plan->eta != USEC_INFINITY && plan->eta > plan->deadline) {
                printf("%s  the pass: ETA %s, deadline %s\n", header,
                       format_timespan(eta, sizeof eta, plan->eta),
                       format_timespan(limit, sizeof limit, plan->deadline));
                any = true;
        }
        for (size_t i = 0; i < plan->n_sync; i++) {
                const PlanEntry *e = &plan->entries[i];
                _cleanup_free_ char *where = NULL;
                char ns[32] = "";

                if (e->action != PLAN_SYNC || e->eta == USEC_INFINITY || e->eta <= e->timeout)
                        continue;
                where = escape_for_display(e->mount_point);
                if (!where)
                        return log_oom();
                if (!any)
                        fputs(header, stdout);
                any = true;
                if (e->namespace_ino)
                        (void) snprintf(ns, sizeof ns, " (mnt:[%llu])",
                                        (unsigned long long) e->namespace_ino);
                printf("  %s%s: ETA %s, timeout %s\n", where, ns, format_timespan(eta, sizeof eta, e->eta),
                       format_timespan(limit, sizeof limit, e->timeout));
        }
        if (any)
                printf("What is not synced by its limit is left to the kernel's own suspend sync, %s.\n",
                       knob == SYNC_ON_SUSPEND_KEEP
                               ? "which SyncOnSuspend=keep leaves as /sys/power/sync_on_suspend has it"
                               : "which then stays on (suspend-sync turns it off only after a pass that "
                                 "synced everything, or over a device proven stuck)");
        return 0;
}

/* How close past ETAs came (the run records under the state directory). */
static void print_eta_accuracy(const Args *a) {
        RunRecord *h = NULL;
        size_t n = 0;
        EtaAccuracy acc;

        if (state_load_history(a->state_dir, &h, &n, NULL, NULL) < 0)
                return;
        acc = history_eta_accuracy(h, n);
        run_record_array_free(h, n);
        if (acc.n > 0)
                printf("Past ETAs: the runs took %u.%02ux their ETA (median of %zu; %u.%02ux to %u.%02ux).\n",
                       acc.median / 1000, acc.median % 1000 / 10, acc.n, acc.min / 1000, acc.min % 1000 / 10,
                       acc.max / 1000, acc.max % 1000 / 10);
}

int verb_plan(const Args *a) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        int r;

        r = context_prepare(a, a->late ? PLAN_SCOPE_LOCAL_BLOCK : PLAN_SCOPE_ALL, CONTEXT_DEFERRAL, &c);
        if (r < 0)
                return r;

        if (a->json != JSON_OFF) {
                _cleanup_json_ json_object *o = NULL;

                r = plan_to_json(c.sample, c.plan, &o);
                if (r < 0)
                        return log_oom();
                return print_json(o, a->json);
        }
        r = plan_print_table(a, c.sample, c.plan);
        if (r >= 0 && a->legend)
                r = print_overruns(c.plan, c.policy->sync_on_suspend);
        if (r >= 0 && a->legend)
                print_eta_accuracy(a);
        return r;
}
