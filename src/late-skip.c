/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <string.h>

#include "late-skip.h"

void late_skip_observe(LateSkipFacts *f, const Sample *s, bool gone) {
        f->complete = s->complete && !gone;
        f->n_remote = 0;
        for (size_t i = 0; i < s->n_sbs; i++) {
                const Superblock *sb = &s->sbs[i];

                if (!sb->all_read_only && (sb->fs_class == FS_CLASS_NETWORK ||
                                           sb->fs_class == FS_CLASS_FUSE || sb->device.served_remotely))
                        f->n_remote++;
        }
}

const char *late_skip_why_not(const LateSkipFacts *f) {
        if (!f->keep_cheap_sync)
                return "KeepCheapSync=no";
        if (f->mode != SYNC_ON_SUSPEND_AUTO)
                return "SyncOnSuspend= is not auto";
        if (!f->unit_pass)
                return "not the unit's pass";
        if (f->knob != 1)
                return f->knob == 0
                               ? "the kernel's own sync is off (sync_on_suspend reads 0)"
                               : "sync_on_suspend cannot be read: the kernel's own sync is not known to be on";
        if (!f->complete)
                return "the view of the mounts was incomplete";
        if (f->unsynced || !f->covered)
                return "a mount was left unsynced or out of the pass";
        if (f->n_hung > 0 || f->n_stuck > 0)
                return "a device is stuck: the kernel's sync would block on it";
        if (f->n_remote > 0)
                return "a filesystem is served by a process or the network";
        if (f->estimate == USEC_INFINITY)
                return "what the kernel's sync would take is not known";
        if (f->estimate >= (f->below ?: LATE_SKIP_BELOW))
                return "the kernel's sync would take longer than the late pass";
        return NULL;
}

static const PlanLearned *learned_find(const PlanLearned *l, size_t n, const RunMount *m) {
        for (size_t i = 0; i < n; i++)
                if (l[i].mount_point && streq(l[i].mount_point, m->mount_point) &&
                    l[i].namespace_ino == m->namespace_ino)
                        return &l[i];
        return NULL;
}

usec_t late_skip_estimate(const RunRecord *rec, const PlanLearned *late, size_t n_late) {
        usec_t sum = 0;

        for (size_t i = 0; i < rec->n_mounts; i++) {
                const RunMount *m = &rec->mounts[i];
                const PlanLearned *l;

                if (!m->outcome || !m->mount_point)
                        return USEC_INFINITY;
                if (streq(m->outcome, "synced"))
                        sum = usec_add(sum, m->duration);
                else if (streq(m->outcome, "deferred")) {
                        l = learned_find(late, n_late, m);
                        if (!l || l->p50 == USEC_INFINITY)
                                return USEC_INFINITY;
                        sum = usec_add(sum, l->p50);
                } else if (!STR_IN_SET(m->outcome, "skipped", "covered", "gone"))
                        return USEC_INFINITY; /* timeout, error, hung, anything new */
        }
        return sum;
}
