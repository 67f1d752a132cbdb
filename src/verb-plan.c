/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <sys/sysmacros.h>

#include "context.h"
#include "log.h"
#include "verbs.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

static json_object *u64_or_null(uint64_t v, uint64_t unknown) {
        return v == unknown ? NULL : json_object_new_uint64(v);
}

static json_object *device_classes_json(unsigned classes) {
        json_object *a = json_object_new_array();

        for (unsigned bit = 1; a && bit <= _DEVICE_CLASS_ALL; bit <<= 1)
                if (classes & bit)
                        json_object_array_add(a, json_object_new_string(device_class_to_string(bit)));
        return a;
}

int plan_to_json(const Sample *sample, const Plan *plan, json_object **ret) {
        _cleanup_(json_object_putp) json_object *root = json_object_new_object();
        json_object *mounts = json_object_new_array(), *phases = json_object_new_object();

        if (!root || !mounts || !phases) {
                json_object_put(mounts);
                json_object_put(phases);
                return -ENOMEM;
        }
        json_object_object_add(root, "eta_usec", u64_or_null(plan->eta, USEC_INFINITY));
        json_object_object_add(root, "deadline_usec", json_object_new_uint64(plan->deadline));
        json_object_object_add(root, "max_parallel", json_object_new_int((int) plan->max_parallel));
        json_object_object_add(root, "dirty_bytes",
                               sample->has_meminfo && sample->meminfo.has_dirty
                                       ? json_object_new_uint64(sample->meminfo.dirty_bytes) : NULL);
        json_object_object_add(root, "writeback_bytes",
                               sample->has_meminfo && sample->meminfo.has_writeback
                                       ? json_object_new_uint64(sample->meminfo.writeback_bytes) : NULL);
        json_object_object_add(root, "bdi_stats_available", json_object_new_boolean(sample->has_debugfs));
        json_object_object_add(root, "complete", json_object_new_boolean(sample->complete));
        json_object_object_add(root, "view_restricted", json_object_new_boolean(sample->view_restricted));
        {
                json_object *why = json_object_new_array();
                if (!why)
                        return -ENOMEM;
                for (size_t i = 0; i < sample->n_incomplete_why; i++)
                        json_object_array_add(why, json_object_new_string(sample->incomplete_why[i]));
                if (sample->n_incomplete_dropped > 0) {
                        char more[64];
                        snprintf(more, sizeof more, "... and %zu more", sample->n_incomplete_dropped);
                        json_object_array_add(why, json_object_new_string(more));
                }
                json_object_object_add(root, "incomplete_why", why);
        }
        json_object_object_add(phases, "read", json_object_new_uint64(sample->t_read));
        json_object_object_add(phases, "sample", json_object_new_uint64(sample->t_sample));
        json_object_object_add(phases, "plan", json_object_new_uint64(plan->t_plan));
        json_object_object_add(root, "phases_usec", phases);
        json_object_object_add(root, "mounts", mounts);

        for (size_t i = 0; i < plan->n_entries; i++) {
                const PlanEntry *e = &plan->entries[i];
                const Superblock *s = &sample->sbs[e->sb];
                json_object *o = json_object_new_object();
                char dev[32];

                if (!o)
                        return -ENOMEM;
                snprintf(dev, sizeof dev, "%u:%u", major(e->dev), minor(e->dev));
                json_object_object_add(o, "mount_point", json_object_new_string(e->mount_point));
                json_object_object_add(o, "fstype", json_object_new_string(e->fstype));
                json_object_object_add(o, "source", json_object_new_string(e->source ? e->source : ""));
                json_object_object_add(o, "device", json_object_new_string(dev));
                json_object_object_add(o, "group", json_object_new_string(e->group));
                json_object_object_add(o, "action", json_object_new_string(plan_action_to_string(e->action)));
                json_object_object_add(o, "reason", json_object_new_string(e->reason));
                json_object_object_add(o, "timeout_usec", json_object_new_uint64(e->timeout));
                json_object_object_add(o, "dirty_bytes", u64_or_null(e->dirty_bytes, UINT64_MAX));
                json_object_object_add(o, "eta_usec", u64_or_null(e->eta, USEC_INFINITY));
                json_object_object_add(o, "rule", e->rule ? json_object_new_string(e->rule) : NULL);
                json_object_object_add(o, "class", json_object_new_string(fs_class_to_string(s->fs_class)));
                json_object_object_add(o, "device_classes", device_classes_json(s->device.classes));
                json_object_object_add(o, "bdi", s->device.bdi_name ? json_object_new_string(s->device.bdi_name) : NULL);
                json_object_object_add(o, "mount_id", json_object_new_int(e->mount_id));
                json_object_object_add(o, "path", json_object_new_string(e->path));
                json_object_object_add(o, "unlisted", json_object_new_boolean(e->unlisted));
                if (e->namespace_ino) {
                        char ns[64];
                        snprintf(ns, sizeof ns, "mnt:[%llu]", (unsigned long long) e->namespace_ino);
                        json_object_object_add(o, "namespace", json_object_new_string(ns));
                } else
                        json_object_object_add(o, "namespace", NULL);
                json_object_object_add(o, "flush_device",
                                       e->flush_device ? json_object_new_string(e->flush_device) : NULL);
                if (e->run_as_uid != (uid_t) -1) {
                        struct json_object *owner = json_object_new_object();
                        json_object_object_add(owner, "uid", json_object_new_uint64(e->run_as_uid));
                        json_object_object_add(owner, "gid", json_object_new_uint64(e->run_as_gid));
                        json_object_object_add(o, "run_as", owner);
                } else
                        json_object_object_add(o, "run_as", NULL);
                json_object_array_add(mounts, o);
        }
        *ret = TAKE_PTR(root);
        return 0;
}

static void format_bytes(char *buf, size_t len, uint64_t b) {
        if (b == UINT64_MAX)
                snprintf(buf, len, "-");
        else if (b >= 10ULL << 30)
                snprintf(buf, len, "%" PRIu64 "G", b >> 30);
        else if (b >= 10ULL << 20)
                snprintf(buf, len, "%" PRIu64 "M", b >> 20);
        else if (b >= 10ULL << 10)
                snprintf(buf, len, "%" PRIu64 "K", b >> 10);
        else
                snprintf(buf, len, "%" PRIu64 "B", b);
}

static int plan_print_table(const Args *a, const Sample *sample, const Plan *plan) {
        static const char *const headers[] = { "MOUNT", "TYPE", "DEVICE", "ACTION", "TIMEOUT", "DIRTY", "REASON" };
        _cleanup_(table_freep) Table *t = table_new(ELEMENTSOF(headers), headers);
        char eta[FORMAT_TIMESPAN_MAX], dl[FORMAT_TIMESPAN_MAX];
        size_t n_groups = 0;
        int r;

        if (!t)
                return log_oom();
        for (size_t i = 0; i < plan->n_entries; i++) {
                const PlanEntry *e = &plan->entries[i];
                char dev[32], tmo[FORMAT_TIMESPAN_MAX], dirty[32];
                const char *cells[ELEMENTSOF(headers)];
                _cleanup_free_ char *where = NULL;

                snprintf(dev, sizeof dev, "%u:%u", major(e->dev), minor(e->dev));
                format_bytes(dirty, sizeof dirty, e->dirty_bytes);
                if (e->namespace_ino &&
                    asprintf(&where, "%s (mnt:[%llu])", e->mount_point, (unsigned long long) e->namespace_ino) < 0)
                        return log_oom();
                cells[0] = where ? where : e->mount_point;
                cells[1] = e->fstype;
                cells[2] = dev;
                cells[3] = plan_action_to_string(e->action);
                cells[4] = e->action == PLAN_SYNC ? format_timespan(tmo, sizeof tmo, e->timeout) : "-";
                cells[5] = dirty;
                cells[6] = e->reason;
                r = table_add_row(t, cells);
                if (r < 0)
                        return log_oom();
                if (e->action == PLAN_SYNC && (i == 0 || !streq(plan->entries[i - 1].group, e->group)))
                        n_groups++;
        }
        r = table_print(t, stdout, a->legend);
        if (r < 0)
                return r;
        if (a->legend)
                printf("\n%zu mounts: %zu to sync in %zu device groups, %zu skipped; ETA %s, deadline %s.%s\n",
                       plan->n_entries, plan->n_sync, n_groups, plan->n_entries - plan->n_sync,
                       plan->eta == USEC_INFINITY ? "unknown" : format_timespan(eta, sizeof eta, plan->eta),
                       format_timespan(dl, sizeof dl, plan->deadline),
                       sample->has_debugfs ? "" : " (no bdi stats: dirty data and ETA unknown)");
        if (a->legend && !sample->complete) {
                printf("Incomplete: not every superblock the kernel's own sync writes can be reached:\n");
                for (size_t i = 0; i < sample->n_incomplete_why; i++)
                        printf("  - %s\n", sample->incomplete_why[i]);
                if (sample->n_incomplete_dropped > 0)
                        printf("  - ... and %zu more\n", sample->n_incomplete_dropped);
        }
        return 0;
}

int verb_plan(const Args *a) {
        _cleanup_(context_done) Context c = CONTEXT_NULL;
        int r;

        r = context_prepare(a, a->late ? PLAN_SCOPE_LOCAL_BLOCK : PLAN_SCOPE_ALL, &c);
        if (r < 0)
                return r;

        if (a->json != JSON_OFF) {
                _cleanup_(json_object_putp) json_object *o = NULL;
                r = plan_to_json(c.sample, c.plan, &o);
                if (r < 0)
                        return log_oom();
                return print_json(o, a->json);
        }
        return plan_print_table(a, c.sample, c.plan);
}
