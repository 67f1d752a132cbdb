/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Planner tests: golden output with reasons for the "laptop" fixture root, no filesystem ever skipped
 * as "clean" whatever SkipClean= says, overlays, late scope, rules, ordering and ETA.
 * UPDATE_GOLDEN=1 rewrites the golden files.
 */

#include <fcntl.h>
#include <sys/statfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ext4-journal.h"
#include "plan.h"
#include "run.h"
#include "shared/fileio.h"
#include "shared/string-util.h"
#include "tests.h"

typedef struct FakeDev {
        unsigned ma, mi;
        const char *bdi;
        unsigned leaf_ma, leaf_mi; /* 0:0 = none */
        unsigned classes;
        bool is_block;
        const char *name; /* kernel name, NULL: none */
} FakeDev;

static const FakeDev laptop_devs[] = { { 259, 2, "259:0", 259, 0, 0, true, "nvme0n1p2" },
                                       { 259, 1, "259:0", 259, 0, 0, true, "nvme0n1p1" },
                                       { 0, 35, "btrfs-1", 8, 0, DEVICE_ROTATIONAL, false },
                                       { 0, 41, "0:41", 0, 0, DEVICE_NETWORK | DEVICE_FUSE, false },
                                       { 0, 52, "0:52", 0, 0, DEVICE_NETWORK, false },
                                       { 7, 0, "7:0", 7, 0, DEVICE_LOOP, true },
                                       {} };

typedef struct Facts {
        const FakeDev *devs;
        int debugfs_fd;
        int proc_fd;
} Facts;

static int fake_classify(void *userdata, dev_t dev, const char *fstype, const char *source, DeviceInfo *ret) {
        Facts *f = userdata;

        *ret = (DeviceInfo) { .dev = dev };
        for (const FakeDev *d = f->devs; d && d->bdi; d++) {
                if (makedev(d->ma, d->mi) != dev)
                        continue;
                ret->bdi_name = strdup(d->bdi);
                ASSERT_TRUE(ret->bdi_name);
                ret->classes = d->classes;
                ret->is_block = d->is_block;
                ret->classified = true;
                if (d->name) {
                        ret->name = strdup(d->name);
                        ASSERT_TRUE(ret->name);
                }
                if (d->leaf_ma || d->leaf_mi) {
                        ret->leaves = malloc(sizeof(dev_t));
                        ASSERT_TRUE(ret->leaves);
                        ret->leaves[0] = makedev(d->leaf_ma, d->leaf_mi);
                        ret->n_leaves = 1;
                }
        }
        return 0;
}

static int fake_bdi(void *userdata, const char *name, BdiStats *ret) {
        Facts *f = userdata;
        return bdi_stats_load(f->debugfs_fd, name, ret);
}

/* What sysfs says of every ext4's journal (ext4-journal.h); 1: a journal, as on most hosts. */
static int fake_journal_answer = EXT4_JOURNAL_YES;
static bool fake_journal_op = true;

static int fake_journal(void *userdata, const char *name) {
        return fake_journal_answer;
}

/* Where the journal lies, read from the fixture root's proc fs/jbd2/ (laptop: nvme0n1p2-8). */
static int fake_journal_internal(void *userdata, const char *name) {
        Facts *f = userdata;
        return ext4_journal_internal(f->proc_fd, name);
}

/* Proc's fs/ext4/<name>/options (ext4-journal.h): off unless a test asks; then "nobarrier" for the
 * device named fake_nobarrier_name only, "barrier" for any other. */
static bool fake_nobarrier_op = false;
static const char *fake_nobarrier_name = NULL;

static int fake_nobarrier(void *userdata, const char *name) {
        if (!name) /* asked without a name: as if another ext4 said "nobarrier" */
                return -ENODEV;
        return streq_ptr(name, fake_nobarrier_name) ? 1 : 0;
}

static Sample *load_sample(const char *root, const FakeDev *devs) {
        _cleanup_close_ int root_fd = -EBADF;
        MountTable *t = NULL;
        Sample *s = NULL;
        Facts f = { .devs = devs };
        SampleOps ops = { .classify = fake_classify,
                          .bdi_stats = fake_bdi,
                          .journal = fake_journal_op ? fake_journal : NULL,
                          .journal_internal = fake_journal_internal,
                          .nobarrier = fake_nobarrier_op ? fake_nobarrier : NULL,
                          .userdata = &f };

        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(root_fd >= 0);
        f.debugfs_fd = openat(root_fd, "debugfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        f.proc_fd = openat(root_fd, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_OK(mount_table_load(root_fd, &t, NULL));
        ASSERT_OK(sample_build(&t, &ops, &s));
        ASSERT_TRUE(t == NULL);
        s->fuse_kernel_checked = true; /* as sample_load() finds it on the kernels the rule holds on */
        safe_close(f.debugfs_fd);
        safe_close(f.proc_fd);
        return s;
}

static Policy *parse_policy(const char *text) {
        Policy *p = NULL;
        ASSERT_OK(policy_new(&p));
        if (text)
                ASSERT_OK(policy_parse_text(p, "test.conf", text, strlen(text)));
        ASSERT_EQ(p->n_warnings, 0);
        return p;
}

static const PlanEntry *find(const Plan *p, const char *mount_point) {
        for (size_t i = 0; i < p->n_entries; i++)
                if (streq(p->entries[i].mount_point, mount_point))
                        return &p->entries[i];
        fprintf(stderr, "no plan entry for %s\n", mount_point);
        abort();
}

static char *plan_text(const Plan *p) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ASSERT_TRUE(f);
        fprintf(f, "# eta_usec=%lld n_sync=%zu\n", p->eta == USEC_INFINITY ? -1LL : (long long) p->eta,
                p->n_sync);
        for (size_t i = 0; i < p->n_entries; i++) {
                const PlanEntry *e = &p->entries[i];
                fprintf(f, "%s\t%s\t%u:%u\t%s\t%s\t%llu\t%s\n", e->mount_point, e->fstype, major(e->dev),
                        minor(e->dev), e->group, plan_action_to_string(e->action),
                        (unsigned long long) e->timeout, e->reason);
        }
        ASSERT_TRUE(fclose(f) == 0);
        return buf;
}

static void check_golden(const char *name, const char *text) {
        _cleanup_free_ char *path = NULL, *expected = NULL;

        ASSERT_TRUE(asprintf(&path, "%s/plan/%s.golden", FIXTURES_DIR, name) > 0);
        if (getenv("UPDATE_GOLDEN")) {
                FILE *f = fopen(path, "we");
                ASSERT_TRUE(f);
                fputs(text, f);
                ASSERT_TRUE(fclose(f) == 0);
        }
        ASSERT_OK(read_full_file_at(AT_FDCWD, path, 1 << 20, &expected, NULL));
        if (!streq(expected, text)) {
                fprintf(stderr, "golden mismatch for %s:\n--- expected\n%s--- got\n%s", name, expected, text);
                abort();
        }
}

TEST(laptop_golden) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_free_ char *text = NULL;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        text = plan_text(p);
        check_golden("laptop", text);

        /* Every mount has exactly one entry and a reason. */
        ASSERT_EQ(p->n_entries, s->table->n_entries);
        for (size_t i = 0; i < p->n_entries; i++)
                ASSERT_TRUE(!isempty(p->entries[i].reason));

        ASSERT_EQ(find(p, "/")->action, PLAN_SYNC);
        ASSERT_EQ(find(p, "/srv/www")->action, PLAN_SKIP); /* bind mount of / */
        ASSERT_EQ(find(p, "/opt/vendor")->action, PLAN_SKIP);
        ASSERT_EQ(find(p, "/home")->action, PLAN_SYNC);     /* writable btrfs */
        ASSERT_EQ(find(p, "/srv/data")->action, PLAN_SKIP); /* same btrfs superblock */
        ASSERT_EQ(find(p, "/boot/efi")->action, PLAN_SYNC);
        /* vfat's sync_fs sends no cache FLUSH: the worker fsyncs the device node too. */
        ASSERT_STREQ(find(p, "/boot/efi")->flush_device, "/dev/nvme0n1p1");
        ASSERT_TRUE(find(p, "/")->flush_device == NULL);
        ASSERT_EQ(find(p, "/home/alice/remote")->action, PLAN_SYNC);
        ASSERT_EQ(find(p, "/mnt/nfs")->action, PLAN_SYNC);
        ASSERT_EQ(find(p, "/snap/core22/1380")->action, PLAN_SKIP); /* read-only */
        ASSERT_EQ(find(p, "/proc")->action, PLAN_SKIP);
        ASSERT_EQ(find(p, "/run")->action, PLAN_SKIP);
        /* The overlay runs after its upper layer (/) in the same group, and is synced itself only
         * if its upperdir turns out not to lie on 259:2. */
        {
                const PlanEntry *o = find(p, "/var/lib/containers/storage/overlay/merged");
                ASSERT_EQ(o->action, PLAN_SYNC);
                ASSERT_STREQ(o->group, find(p, "/")->group);
                ASSERT_STREQ(o->covered_if_path, "/var/lib/containers/storage/overlay/upper");
                ASSERT_TRUE(o->covered_if_dev == makedev(259, 2));
                ASSERT_TRUE(o > find(p, "/"));
        }
        ASSERT_EQ(p->n_sync, 6U);

        /* / and /boot/efi share the disk's group; they are adjacent in execution order, larger first. */
        ASSERT_STREQ(find(p, "/")->group, find(p, "/boot/efi")->group);
        for (size_t i = 0; i + 1 < p->n_sync; i++)
                if (!streq(p->entries[i].group, p->entries[i + 1].group))
                        for (size_t j = i + 2; j < p->n_sync; j++)
                                ASSERT_TRUE(!streq(p->entries[i].group, p->entries[j].group));
}

TEST(rules) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(
                "[Sync]\nMountTimeoutSec=3s\n"
                "[Rule nfs]\nDevice=network\nType=nfs4\nAction=skip\n"
                "[Rule efi]\nPath=/boot/*\nMountTimeoutSec=1s\n"
                "[Rule all-network]\nDevice=network\nAction=sync\nMountTimeoutSec=500ms\n");
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        ASSERT_EQ(find(p, "/mnt/nfs")->action, PLAN_SKIP);
        ASSERT_TRUE(strstr(find(p, "/mnt/nfs")->reason, "rule 'nfs'"));
        /* skipped by rule: no pass syncs it, the handover lists it (run.c) */
        ASSERT_TRUE(find(p, "/mnt/nfs")->skip_rule && find(p, "/mnt/nfs")->primary);
        ASSERT_TRUE(!find(p, "/boot/efi")->skip_rule && !find(p, "/run")->skip_rule);
        ASSERT_U64_EQ(find(p, "/boot/efi")->timeout, USEC_PER_SEC);
        ASSERT_U64_EQ(find(p, "/home/alice/remote")->timeout, 500 * USEC_PER_MSEC);
        ASSERT_STREQ(find(p, "/home/alice/remote")->rule, "all-network");
        ASSERT_U64_EQ(find(p, "/")->timeout, 3 * USEC_PER_SEC);
}

/* Review (stop 26, finding 4): a rule decides for the mounts it matches. /home and /srv/data are
 * subvolumes of one btrfs (0:35): a skip rule on /home alone used to skip /srv/data with it. */
TEST(skip_rule_needs_every_mount) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *one = parse_policy(
                "[Rule home]\nPath=/home\nAction=skip\n[Rule data]\nPath=/srv/*\nMountTimeoutSec=2s\n");
        _cleanup_(policy_freep)
                Policy *both = parse_policy("[Rule home]\nPath=/home /srv/data\nAction=skip\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        const PlanEntry *h, *d;

        ASSERT_OK(plan_build(s, one, PLAN_SCOPE_ALL, &p));
        h = find(p, "/home"), d = find(p, "/srv/data");
        ASSERT_TRUE((h->action == PLAN_SYNC && h->primary) || (d->action == PLAN_SYNC && d->primary));
        ASSERT_TRUE(!h->skip_rule && !d->skip_rule && !h->uncovered && !d->uncovered);
        /* the mount that is not skipped decides: its rule, its timeout */
        ASSERT_STREQ((h->action == PLAN_SYNC ? h : d)->rule, "data");
        ASSERT_U64_EQ((h->action == PLAN_SYNC ? h : d)->timeout, 2 * USEC_PER_SEC);

        /* control: skip rules on both mounts skip the superblock */
        ASSERT_OK(plan_build(s, both, PLAN_SCOPE_ALL, &q));
        h = find(q, "/home"), d = find(q, "/srv/data");
        ASSERT_EQ(h->action, PLAN_SKIP);
        ASSERT_EQ(d->action, PLAN_SKIP);
        ASSERT_TRUE(h->skip_rule && d->skip_rule);
}

/* Makes the mount at mount_point one of another namespace (the only one, pid 4242). */
static void move_to_other_namespace(Sample *s, const char *mount_point) {
        s->namespaces = calloc(1, sizeof(MountNamespace));
        ASSERT_TRUE(s->namespaces);
        s->namespaces[0] = (MountNamespace) { .ino = 4026532999ULL, .pid = 4242 };
        s->n_namespaces = 1;
        for (size_t i = 0; i < s->table->n_entries; i++)
                if (streq(s->table->entries[i].mount_point, mount_point))
                        s->ns_of_mount[i] = 1;
}

/* Review N, N3: a FUSE mount of a rootless container (its mount namespace owned by another user
 * namespace) refuses root from outside: left to the kernel's sync as a skip rule leaves a mount, not
 * an error at every sleep. Control: the same mount in a namespace of our user namespace is synced as
 * its owner, as before; and a block filesystem of that container is synced. */
TEST(fuse_of_user_namespace) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/fuse-owners", NULL);
        _cleanup_(policy_freep) Policy *pol = parse_policy("[Rule fuse]\nPath=/mnt/*\nAction=sync\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        const PlanEntry *e;

        move_to_other_namespace(s, "/mnt/plain");
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &q));
        e = find(q, "/mnt/plain");
        ASSERT_EQ(e->action, PLAN_SYNC);
        ASSERT_EQ((int) e->run_as_uid, 1000);

        s->namespaces[0].foreign_userns = true;
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        e = find(p, "/mnt/plain");
        ASSERT_EQ(e->action, PLAN_SKIP);
        ASSERT_TRUE(e->uncovered && e->skip_rule);
        ASSERT_STREQ(e->reason, "FUSE mounted in a user namespace (a rootless container): only its processes "
                                "may enter it; left to the kernel's sync");
        ASSERT_EQ(find(p, "/home/alice/remote")->action, PLAN_SYNC); /* ours */

        /* Only FUSE refuses root: a block filesystem of that container is synced. */
        {
                _cleanup_(sample_freep) Sample *l = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
                _cleanup_(plan_freep) Plan *b = NULL;

                move_to_other_namespace(l, "/boot/efi");
                l->namespaces[0].foreign_userns = true;
                ASSERT_OK(plan_build(l, pol, PLAN_SCOPE_ALL, &b));
                e = find(b, "/boot/efi");
                ASSERT_EQ(e->action, PLAN_SYNC);
                ASSERT_TRUE(!e->uncovered && !e->skip_rule);
        }
}

/* Review of that fix: paths are matched as the primary mount's namespace names them; the same disk
 * seen by a container under another path does not undo a host's skip rule. Here /srv/data is made
 * a mount of another namespace. */
TEST(skip_rule_other_namespace) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *one = parse_policy("[Rule home]\nPath=/home\nAction=skip\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        const PlanEntry *h;

        move_to_other_namespace(s, "/srv/data");
        ASSERT_OK(plan_build(s, one, PLAN_SCOPE_ALL, &p));
        h = find(p, "/home");
        ASSERT_EQ(h->action, PLAN_SKIP);
        ASSERT_TRUE(h->skip_rule && h->primary);
}

/* Review of that fix: with our own mount read-only, the primary is the other namespace's; a rule
 * matching only its path must not skip a superblock we have at a path no rule matches. */
TEST(skip_rule_ours_first) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *srv = parse_policy("[Rule srv]\nPath=/srv/*\nAction=skip\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        const PlanEntry *e = NULL;

        move_to_other_namespace(s, "/srv/data");
        for (size_t i = 0; i < s->table->n_entries; i++)
                if (streq(s->table->entries[i].mount_point, "/home"))
                        s->table->entries[i].read_only = true;
        ASSERT_OK(plan_build(s, srv, PLAN_SCOPE_ALL, &p));
        for (size_t i = 0; i < p->n_entries; i++)
                if (p->entries[i].primary && streq(p->entries[i].fstype, "btrfs") &&
                    (streq(p->entries[i].mount_point, "/home") ||
                     streq(p->entries[i].mount_point, "/srv/data")))
                        e = &p->entries[i];
        ASSERT_TRUE(e);
        ASSERT_EQ(e->action, PLAN_SYNC);
        ASSERT_TRUE(!e->skip_rule);
}

/* Issue 9 case 5: a rule whose match key could not be parsed used to match every mount, so
 * a relative "Path=media/..." skipped / with data dirty. Now the rule is disabled and / is synced. */
TEST(bad_rule_never_skips) {
        static const char *const configs[] = {
                "[Rule usb-sticks]\nPath=media/*\nAction=skip\n",
                "[Rule usb-sticks]\nDevice=usb-stick\nAction=skip\n",
                "[Rule usb-sticks]\nPaht=/media/*\nAction=skip\n",
                "[Rule usb-sticks]\nPath /media/*\nAction=skip\n",
        };
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);

        for (size_t i = 0; i < ELEMENTSOF(configs); i++) {
                _cleanup_(policy_freep) Policy *pol = NULL;
                _cleanup_(plan_freep) Plan *p = NULL;

                ASSERT_OK(policy_new(&pol));
                ASSERT_OK(policy_parse_text(pol, "test.conf", configs[i], strlen(configs[i])));
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                ASSERT_EQ(find(p, "/")->action, PLAN_SYNC);
                ASSERT_EQ(find(p, "/home")->action, PLAN_SYNC);
                ASSERT_EQ(find(p, "/boot/efi")->action, PLAN_SYNC);
                ASSERT_EQ(p->n_sync, 6U);
                for (size_t j = 0; j < p->n_entries; j++)
                        ASSERT_TRUE(p->entries[j].rule == NULL);
                ASSERT_EQ(pol->n_warnings, 1);
                ASSERT_TRUE(strstr(pol->warnings[0], "rule 'usb-sticks' disabled: "));
        }
}

/* Review B F1/F2: a Device= rule on a device whose classes could not be read, or a disabled rule,
 * lets no later skip rule take the mounts it may have kept. */
TEST(unsure_rule_never_yields_to_skip) {
        static const FakeDev none[] = { {} };
        _cleanup_(sample_freep) Sample *known = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs),
                                       *unknown = load_sample(FIXTURES_DIR "/roots/laptop", none);
        _cleanup_(policy_freep) Policy *dev = parse_policy("[Rule usb]\nDevice=usb\nAction=sync\n"
                                                           "[Rule rest]\nAction=skip\n"),
                                       *dis = NULL;
        _cleanup_(plan_freep) Plan *a = NULL, *b = NULL, *c = NULL;
        static const char bad[] = "[Rule keep]\nPath=home\nAction=sync\n[Rule rest]\nAction=skip\n";

        /* Classified, no USB disk: the skip rule decides, as written. */
        ASSERT_OK(plan_build(known, dev, PLAN_SCOPE_ALL, &a));
        ASSERT_EQ(find(a, "/home")->action, PLAN_SKIP);
        ASSERT_EQ(a->n_sync, 0U);
        /* Not classified (sysfs missing): Device=usb may match, so it decides; nothing is skipped. */
        ASSERT_OK(plan_build(unknown, dev, PLAN_SCOPE_ALL, &b));
        ASSERT_EQ(find(b, "/home")->action, PLAN_SYNC);
        ASSERT_STREQ(find(b, "/home")->rule, "usb");
        ASSERT_TRUE(strstr(find(b, "/home")->reason, "counted as matching"));
        ASSERT_EQ(b->n_sync, 6U);

        ASSERT_OK(policy_new(&dis));
        ASSERT_OK(policy_parse_text(dis, "test.conf", bad, strlen(bad)));
        ASSERT_TRUE(dis->rules[0].disabled);
        ASSERT_OK(plan_build(known, dis, PLAN_SCOPE_ALL, &c));
        ASSERT_EQ(c->n_sync, 6U);
        ASSERT_EQ(find(c, "/home")->action, PLAN_SYNC);
        ASSERT_TRUE(find(c, "/home")->rule == NULL);
        ASSERT_STREQ(find(c, "/home")->reason,
                     "rule 'keep' is disabled and may match this mount: a later skip rule does not apply");
}

/* Issue 9 case 8: every filesystem whose sync_fs sends no cache FLUSH gets the device fsynced after
 * syncfs (fuseblk: ntfs-3g and exfat-fuse on USB sticks, udf, ext2, ntfs3), like vfat; the others
 * flush by themselves and get nothing extra. */
TEST(device_flush_parity) {
        static const struct {
                const char *mount_point, *flush_device;
                FsFlush flush;
        } expect[] = {
                { "/media/alice/NTFS", "/dev/sdb1", FS_FLUSH_DEVICE },
                { "/media/alice/EXFAT", "/dev/sdb2", FS_FLUSH_DEVICE },
                { "/media/alice/DVD-RAM", "/dev/sdc1", FS_FLUSH_DEVICE },
                { "/srv/old", "/dev/sdc2", FS_FLUSH_DEVICE },
                { "/media/alice/WIN", "/dev/sdc3", FS_FLUSH_DEVICE },
                { "/media/alice/STICK", "/dev/sdc4", FS_FLUSH_DEVICE },
                /* ext4 and ext3 whose journal nothing proves (this fixture classifies no device):
                 * the node, else a second syncfs */
                { "/", "/dev/vda", FS_FLUSH_DEVICE_OR_SYNCFS },
                { "/srv/ext3", "/dev/sdc6", FS_FLUSH_DEVICE_OR_SYNCFS },
                /* xfs: its log force flushes only when the log has work (review Z, Z1) */
                { "/srv/xfs", "/dev/sdc5", FS_FLUSH_DEVICE },
                { "/srv/xfs-barrier1", "/dev/sdc9", FS_FLUSH_DEVICE },
                /* no barriers: sync_fs sends no FLUSH at all, a second syncfs would not help */
                { "/srv/btrfs-nobarrier", "/dev/sdc7", FS_FLUSH_DEVICE },
                { "/srv/ext4-barrier0", "/dev/sdc8", FS_FLUSH_DEVICE },
                /* a source that is no /dev path: the worker tries /dev/block/MAJ:MIN alone */
                { "/srv/ext4-elsewhere", NULL, FS_FLUSH_DEVICE_OR_SYNCFS },
                { "/home/alice/remote", NULL, FS_FLUSH_NONE },
                /* review N4: an xfs with a realtime device: its data device as every xfs's, and the
                 * realtime device too (rt_flush_device, below); an external log is flushed with the
                 * data device by the log writes, when there are any */
                { "/srv/xfs-rt", "/dev/sdd1", FS_FLUSH_DEVICE },
                { "/srv/xfs-log", "/dev/sdd3", FS_FLUSH_DEVICE },
        };
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/flush-parity", NULL);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        for (size_t i = 0; i < ELEMENTSOF(expect); i++) {
                const PlanEntry *e = find(p, expect[i].mount_point);

                ASSERT_EQ(e->action, PLAN_SYNC);
                if (e->flush != expect[i].flush)
                        fprintf(stderr, "%s: flush %s\n", e->mount_point, fs_flush_to_string(e->flush));
                ASSERT_EQ(e->flush, expect[i].flush);
                if (expect[i].flush_device)
                        ASSERT_STREQ(e->flush_device, expect[i].flush_device);
                else if (e->flush_device) {
                        fprintf(stderr, "%s: unexpected flush_device %s\n", e->mount_point, e->flush_device);
                        abort();
                }
                if (streq(expect[i].mount_point, "/srv/xfs-rt"))
                        ASSERT_STREQ(e->rt_flush_device, "/dev/sdd2");
                else if (e->rt_flush_device) {
                        fprintf(stderr, "%s: unexpected rt_flush_device %s\n", e->mount_point,
                                e->rt_flush_device);
                        abort();
                }
        }
}

/* Issue 9 case 6: FUSE mounts without allow_other admit only their owner (root gets EACCES): the
 * plan says whom to run as, and gives each such mount a group of its own, so the worker can drop
 * privileges for good. */
TEST(fuse_owner) {
        static const struct {
                const char *mount_point;
                int uid, gid; /* -1: as we are */
        } expect[] = {
                { "/run/user/1000/gvfs", 1000, 1000 },
                { "/run/user/1000/doc", 1000, 1000 },
                { "/home/alice/remote", 1000, 1000 },
                { "/home/bob/remote", 1001, 100 },
                { "/mnt/plain", 1000, 1000 },
                { "/srv/shared", -1, -1 },  /* allow_other: anyone */
                { "/media/stick", -1, -1 }, /* root:root: we are root */
                { "/mnt/odd", -1, -1 },     /* ids that do not parse: as we are */
                { "/", -1, -1 },
        };
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/fuse-owners", NULL);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        for (size_t i = 0; i < ELEMENTSOF(expect); i++) {
                const PlanEntry *e = find(p, expect[i].mount_point);

                ASSERT_EQ(e->action, PLAN_SYNC);
                ASSERT_EQ((int) e->run_as_uid, expect[i].uid);
                ASSERT_EQ((int) e->run_as_gid, expect[i].gid);
                if (expect[i].uid >= 0) {
                        ASSERT_TRUE(strstr(e->reason, "as its owner"));
                        ASSERT_TRUE(strncmp(e->group, "owner:", 6) == 0);
                        /* alone in its group */
                        for (size_t j = 0; j < p->n_sync; j++)
                                ASSERT_TRUE(&p->entries[j] == e || !streq(p->entries[j].group, e->group));
                } else
                        ASSERT_TRUE(strncmp(e->group, "owner:", 6) != 0);
        }
}

TEST(late_scope) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &p));
        ASSERT_EQ(find(p, "/")->action, PLAN_SYNC);
        ASSERT_EQ(find(p, "/boot/efi")->action, PLAN_SYNC);
        ASSERT_EQ(find(p, "/home/alice/remote")->action, PLAN_SKIP);
        ASSERT_EQ(find(p, "/mnt/nfs")->action, PLAN_SKIP);
        ASSERT_EQ(find(p, "/home")->action, PLAN_SYNC); /* btrfs on a local disk (leaf 8:0) */
        ASSERT_TRUE(strstr(find(p, "/mnt/nfs")->reason, "late pass"));
}

/* Issue 11: the late pass leaves FUSE out (its server may be frozen); a plain FUSE superblock of an
 * unprivileged server (user_id= not 0) is marked for the clean evidence of evidence.h, nothing
 * else is: not fuseblk (FUSE_SYNCFS), not a root-mounted server, not one whose ids do not parse. */
static const FakeDev fuse_devs[] = { { 254, 0, "254:0", 254, 0, 0, true },
                                     { 0, 60, "0:60", 0, 0, DEVICE_FUSE | DEVICE_NETWORK, false },
                                     { 0, 61, "0:61", 0, 0, DEVICE_FUSE, false },
                                     { 0, 62, "0:62", 0, 0, DEVICE_FUSE | DEVICE_NETWORK, false },
                                     { 0, 63, "0:63", 0, 0, DEVICE_FUSE | DEVICE_NETWORK, false },
                                     { 0, 64, "0:64", 0, 0, DEVICE_FUSE | DEVICE_NETWORK, false },
                                     { 8, 17, "8:16", 8, 16, DEVICE_FUSE, true },
                                     { 0, 66, "0:66", 0, 0, DEVICE_FUSE, false },
                                     { 0, 67, "0:67", 0, 0, DEVICE_FUSE, false },
                                     { 0, 68, "0:68", 0, 0, DEVICE_FUSE, false },
                                     {} };

TEST(late_scope_fuse_evidence) {
        static const struct {
                const char *mount_point;
                bool evidence;
        } expect[] = {
                { "/run/user/1000/gvfs", true },
                { "/run/user/1000/doc", true },
                { "/home/alice/remote", true },
                { "/home/bob/remote", true },
                { "/srv/shared", true }, /* allow_other, mounted by uid 1000 */
                { "/mnt/plain", true },
                { "/media/stick", false },  /* fuseblk: sync_fs sends FUSE_SYNCFS */
                { "/mnt/odd", false },      /* user_id= does not parse */
                { "/mnt/rootfuse", false }, /* user_id=0: maybe a privileged server */
        };
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/fuse-owners", fuse_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL, *all = NULL;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &p));
        ASSERT_EQ(find(p, "/")->action, PLAN_SYNC);
        for (size_t i = 0; i < ELEMENTSOF(expect); i++) {
                const PlanEntry *e = find(p, expect[i].mount_point);

                ASSERT_EQ(e->action, PLAN_SKIP);
                ASSERT_TRUE(e->uncovered); /* until the evidence is read, at the end of the pass */
                ASSERT_EQ(e->fuse_evidence, expect[i].evidence);
                if (expect[i].evidence)
                        ASSERT_TRUE(e->bdi_name && strncmp(e->bdi_name, "0:6", 3) == 0);
        }
        /* The unit pass syncs them all; no evidence is asked for. */
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &all));
        for (size_t i = 0; i < all->n_entries; i++)
                ASSERT_TRUE(!all->entries[i].fuse_evidence);

        /* Review AZ, AZ-3: a kernel the rule was not checked on (or whose release cannot be read): no
         * FUSE mount is judged by evidence, none proven clean. */
        s->fuse_kernel_checked = false;
        {
                _cleanup_(plan_freep) Plan *q = NULL;

                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &q));
                for (size_t i = 0; i < q->n_entries; i++)
                        ASSERT_TRUE(!q->entries[i].fuse_evidence);
        }
}

static Superblock *sb_of(Sample *s, const char *mount_point) {
        for (size_t k = 0; k < s->n_sbs; k++)
                for (size_t j = 0; j < s->sbs[k].n_mounts; j++)
                        if (streq(s->table->entries[s->sbs[k].mounts[j]].mount_point, mount_point))
                                return &s->sbs[k];
        ASSERT_TRUE(false);
        return NULL;
}

static MountEntry *mount_entry_of(Sample *s, const char *mount_point) {
        for (size_t i = 0; i < s->table->n_entries; i++)
                if (streq(s->table->entries[i].mount_point, mount_point))
                        return &s->table->entries[i];
        ASSERT_TRUE(false);
        return NULL;
}

/* Idle writeback lists, as debugfs shows them for a bdi with nothing dirty. */
static void sb_lists_empty(Superblock *sb) {
        sb->has_bdi_stats = true;
        for (int k = 0; k < _BDI_STAT_MAX; k++)
                sb->bdi.present |= 1U << k;
}

/* The thirty-sixth session: in the main pass a plain FUSE mount of a user whose bdi lists are empty,
 * with no page under writeback anywhere (a refreshed count read after them: Sample.writeback_idle),
 * is skipped untouched: its syncfs would do nothing, and a server that does not answer would hold a
 * worker to its timeout. Everything else about FUSE is as before: a dirty one, fuseblk, a root or
 * unknown owner are synced; without the count, or with pages under writeback, all are; the late pass
 * still leaves them out uncovered; a rule that says sync or skip decides. */
TEST(main_pass_fuse_proven_clean) {
        static const char *const clean[] = { "/run/user/1000/doc", "/home/alice/remote", "/home/bob/remote",
                                             "/srv/shared", "/mnt/plain" };
        static const char *const synced[] = { "/", "/run/user/1000/gvfs", "/media/stick", "/mnt/odd",
                                              "/mnt/rootfuse" };
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/fuse-owners", fuse_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(policy_freep)
                Policy *rules = parse_policy("[Rule keep]\nPath=/home/alice/*\nAction=sync\n"
                                             "[Rule t]\nPath=/home/bob/*\nMountTimeoutSec=3s\n"
                                             "[Rule off]\nPath=/srv/*\nAction=skip\n");
        static const int idle[] = { -ENODATA, -ETIMEDOUT, 0 };

        /* No bdi stats read: nothing to prove, nothing asked. */
        ASSERT_TRUE(!plan_fuse_proof_wanted(s));
        for (size_t k = 0; k < s->n_sbs; k++)
                sb_lists_empty(&s->sbs[k]);
        sb_of(s, "/run/user/1000/gvfs")->bdi.value[BDI_STAT_B_DIRTY] = 1; /* an inode with dirty pages */
        ASSERT_TRUE(plan_fuse_proof_wanted(s));
        /* Every superblock read-only: nothing to prove, so no count is read (a child's cost). */
        for (size_t k = 0; k < s->n_sbs; k++)
                s->sbs[k].all_read_only = true;
        ASSERT_TRUE(!plan_fuse_proof_wanted(s));
        for (size_t k = 0; k < s->n_sbs; k++)
                s->sbs[k].all_read_only = false;

        /* The count not read, not read in time, or some page under writeback: all synced, as before. */
        for (size_t i = 0; i < ELEMENTSOF(idle); i++) {
                _cleanup_(plan_freep) Plan *p = NULL;

                s->writeback_idle = idle[i];
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                for (size_t j = 0; j < ELEMENTSOF(clean); j++)
                        ASSERT_EQ(find(p, clean[j])->action, PLAN_SYNC);
        }

        s->writeback_idle = 1;
        {
                _cleanup_(plan_freep) Plan *p = NULL, *late = NULL;

                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                for (size_t j = 0; j < ELEMENTSOF(clean); j++) {
                        const PlanEntry *e = find(p, clean[j]);

                        ASSERT_EQ(e->action, PLAN_SKIP);
                        ASSERT_TRUE(!e->uncovered && !e->skip_rule);
                        ASSERT_TRUE(e->proven_clean); /* the unit's record lists it (run.h) */
                        ASSERT_TRUE(
                                startswith(e->reason, "FUSE, proven clean: no dirty inode on its bdi 0:6"));
                }
                for (size_t j = 0; j < ELEMENTSOF(synced); j++)
                        ASSERT_EQ(find(p, synced[j])->action, PLAN_SYNC);
                for (size_t i = 0; i < p->n_entries; i++)
                        ASSERT_TRUE(!p->entries[i].proven_clean || p->entries[i].action == PLAN_SKIP);

                /* The late pass: left out, uncovered, its own evidence read at its end. */
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &late));
                for (size_t j = 0; j < ELEMENTSOF(clean); j++) {
                        const PlanEntry *e = find(late, clean[j]);

                        ASSERT_EQ(e->action, PLAN_SKIP);
                        ASSERT_TRUE(e->uncovered && e->fuse_evidence);
                }
        }
        {
                _cleanup_(plan_freep) Plan *p = NULL;

                ASSERT_OK(plan_build(s, rules, PLAN_SCOPE_ALL, &p));
                ASSERT_EQ(find(p, "/home/alice/remote")->action, PLAN_SYNC); /* Action=sync */
                ASSERT_STREQ(
                        find(p, "/home/bob/remote")->reason,
                        "rule 't': Action=auto; FUSE, proven clean: no dirty inode on its bdi 0:63, no page "
                        "under writeback; its server is not asked");
                ASSERT_TRUE(find(p, "/srv/shared")->skip_rule); /* Action=skip: uncovered */
                ASSERT_TRUE(!find(p, "/srv/shared")->proven_clean);
                ASSERT_EQ(find(p, "/mnt/plain")->action, PLAN_SKIP);
        }

        /* Review BE: a fuseblk mounted by a user (ntfs-3g installed setuid root, a "user" line in
         * fstab) has user_id= not 0 too, but its sync sends FUSE_SYNCFS and flushes its block
         * device, which no bdi list of its counts: synced, and never judged by FUSE evidence. */
        {
                _cleanup_(plan_freep) Plan *p = NULL, *late = NULL;
                MountEntry *me = mount_entry_of(s, "/media/stick");
                char *opts = me->fs_options;

                me->fs_options = (char *) "rw,user_id=1000,group_id=1000,blksize=4096";
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &late));
                ASSERT_EQ(find(p, "/media/stick")->action, PLAN_SYNC);
                ASSERT_TRUE(!find(p, "/media/stick")->proven_clean);
                ASSERT_TRUE(!find(late, "/media/stick")->fuse_evidence);
                ASSERT_EQ(find(p, "/mnt/plain")->action, PLAN_SKIP); /* control */
                me->fs_options = opts;
        }

        /* A kernel the rule was not checked on (review AZ, AZ-3): all synced, as before. */
        s->fuse_kernel_checked = false;
        {
                _cleanup_(plan_freep) Plan *p = NULL;

                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                for (size_t j = 0; j < ELEMENTSOF(clean); j++)
                        ASSERT_EQ(find(p, clean[j])->action, PLAN_SYNC);
        }
        s->fuse_kernel_checked = true;

        /* Read-only: skipped as before, for that reason. */
        sb_of(s, "/mnt/plain")->all_read_only = true;
        {
                _cleanup_(plan_freep) Plan *p = NULL;

                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                ASSERT_STREQ(find(p, "/mnt/plain")->reason, "read-only superblock");
        }
}

/* Issue 11: in the late pass an overlay follows its upper layer (a container's root on the local
 * disk is synced through it, not left out); an overlay whose upper layer is not in the table is left
 * out, uncovered. */
static const FakeDev container_devs[] = { { 259, 2, "259:0", 259, 0, 0, true },
                                          { 8, 1, "8:0", 8, 0, 0, true },
                                          {} };

/* Review AZ: an overlay whose upper layer is a user's plain FUSE mount the main pass skips proven
 * clean is skipped with it ("upper layer skipped"), and the late pass leaves it out uncovered, as its
 * upper layer. Before the proven-clean skip the unit's pass synced it (covered by its upper's sync)
 * and listed it; a late pass that cannot prove it clean (no FUSE evidence is read for an overlay; a
 * device proven stuck keeps pages under writeback) leans on that list, so the unit's record must list
 * the overlay too, or the knob stays on over the hung device (run.h run_handover_proven_clean()). */
static const FakeDev fuse_overlay_devs[] = { { 254, 0, "254:0", 254, 0, 0, true },
                                             { 0, 62, "0:62", 0, 0, DEVICE_FUSE | DEVICE_NETWORK, false },
                                             {} };

TEST(main_pass_fuse_proven_clean_overlay_upper) {
        _cleanup_(sample_freep)
                Sample *s = load_sample(FIXTURES_DIR "/roots/fuse-overlay-upper", fuse_overlay_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL, *late = NULL;
        const usec_t boot = 100 * USEC_PER_MINUTE;
        const PlanEntry *ov;
        Handover h = {};

        for (size_t k = 0; k < s->n_sbs; k++)
                sb_lists_empty(&s->sbs[k]);
        s->writeback_idle = 1;
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        ASSERT_TRUE(find(p, "/home/alice/remote")->proven_clean);
        ov = find(p, "/mnt/merged");
        ASSERT_EQ(ov->action, PLAN_SKIP);
        ASSERT_TRUE(strstr(ov->reason, "upper layer skipped (FUSE, proven clean"));

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &late));
        ASSERT_TRUE(find(late, "/mnt/merged")->uncovered); /* the late pass leans on the record */

        run_handover_proven_clean(&h, p, boot);
        ASSERT_TRUE(handover_unit_saw(&h, makedev(0, 62), NULL, 0, boot + 1));
        ASSERT_TRUE(handover_unit_saw(&h, ov->dev, NULL, 0, boot + 1));
        handover_done(&h);

        /* Review BE: an upper skipped for another reason (here a rule) is not proven clean, nor is the
         * overlay: the unit's record does not list it, and the late pass keeps it uncovered. */
        {
                _cleanup_(policy_freep) Policy *off = parse_policy("[Rule off]\nPath=/home/alice/remote\n"
                                                                   "Action=skip\n");
                _cleanup_(plan_freep) Plan *q = NULL;
                Handover h2 = {};

                ASSERT_OK(plan_build(s, off, PLAN_SCOPE_ALL, &q));
                ov = find(q, "/mnt/merged");
                ASSERT_EQ(ov->action, PLAN_SKIP);
                ASSERT_TRUE(ov->uncovered && !ov->proven_clean);
                run_handover_proven_clean(&h2, q, boot);
                ASSERT_TRUE(!handover_unit_saw(&h2, ov->dev, NULL, 0, boot + 1));
                ASSERT_TRUE(!handover_unit_saw(&h2, makedev(0, 62), NULL, 0, boot + 1));
                handover_done(&h2);
        }
}

TEST(late_scope_overlay) {
        _cleanup_(sample_freep)
                Sample *s = load_sample(FIXTURES_DIR "/roots/container-host-1000", container_devs);
        _cleanup_(sample_freep) Sample *bare = load_sample(FIXTURES_DIR "/roots/container-host-1000", NULL);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        const char *c1 = "/var/lib/containers/storage/overlay/c1/merged";
        const PlanEntry *e;

        /* Upper layer on the local xfs (8:1): synced through it in the late pass too. */
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &p));
        e = find(p, c1);
        ASSERT_EQ(e->action, PLAN_SYNC);
        ASSERT_TRUE(!e->uncovered);
        ASSERT_TRUE(strstr(e->reason, "upper layer on /var/lib/containers"));
        /* Upper layer on a device not known to be local: left out with it, uncovered. */
        ASSERT_OK(plan_build(bare, pol, PLAN_SCOPE_LOCAL_BLOCK, &q));
        e = find(q, c1);
        ASSERT_EQ(e->action, PLAN_SKIP);
        ASSERT_TRUE(e->uncovered);
        ASSERT_TRUE(strstr(e->reason, "upper layer skipped (late pass"));
}

/* Issue 9, case 3: no filesystem type has an exact test for "syncfs would write nothing" (an ext4
 * rule existed and lost data with iostats=0 and with commit= longer than dirty_expire, see
 * docs/CLEAN-EVIDENCE.md). A superblock that looks as clean as that rule ever required (no dirty or
 * written bytes on its bdi) is synced, for every type and every SkipClean= value, and the plan is the
 * same whatever SkipClean= says. */
TEST(never_skipped_as_clean) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/clean-ext4", NULL);
        static const char *const confs[] = {
                NULL,
                "[Sync]\nSkipClean=yes\n",
                "[Sync]\nSkipClean=no\n",
                "[Sync]\nSkipClean=yes\n[Rule r]\nPath=/mnt/*\nAction=auto\n",
                "[Rule r]\nPath=/mnt/*\nMountTimeoutSec=5s\n",
        };
        /* the rule that matched is named (review Q, L7) */
        static const char *const reasons[] = {
                [3] = "rule 'r': Action=auto; writable: may hold unsynced data",
                [4] = "rule 'r': MountTimeoutSec=5s; writable: may hold unsynced data",
        };
        static const char *const types[] = { "ext4", "xfs", "btrfs", "ext3", "ext2", "f2fs", "vfat" };
        Superblock *sb = NULL;
        char *own_fstype;

        for (size_t k = 0; k < s->n_sbs; k++)
                if (s->sbs[k].dev == makedev(7, 3))
                        sb = &s->sbs[k];
        ASSERT_TRUE(sb);
        ASSERT_STREQ(sb->fstype, "ext4");
        /* Facts as the loader gives them for an idle, synced disk: nothing dirty, nothing written. */
        sb->has_bdi_stats = true;
        for (int k = 0; k < _BDI_STAT_MAX; k++)
                sb->bdi.present |= 1U << k;
        sb->bdi.value[BDI_STAT_WRITE_BANDWIDTH] = 100000;
        free(sb->device.bdi_name);
        sb->device.bdi_name = strdup("7:3");
        ASSERT_TRUE(sb->device.bdi_name);
        sb->device.classified = true;
        sb->device.is_block = true;

        own_fstype = sb->fstype;
        for (size_t t = 0; t < ELEMENTSOF(types); t++) {
                _cleanup_free_ char *first = NULL;

                sb->fstype = (char *) types[t];
                for (size_t c = 0; c < ELEMENTSOF(confs); c++) {
                        _cleanup_(policy_freep) Policy *pol = parse_policy(confs[c]);
                        _cleanup_(plan_freep) Plan *p = NULL;
                        _cleanup_free_ char *text = NULL;
                        const PlanEntry *e;

                        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                        e = find(p, "/mnt/clean");
                        ASSERT_EQ(e->action, PLAN_SYNC);
                        ASSERT_TRUE(!e->uncovered);
                        ASSERT_STREQ(e->reason, reasons[c] ?: "writable: may hold unsynced data");
                        ASSERT_EQ(find(p, "/")->action, PLAN_SYNC);
                        ASSERT_EQ(p->n_sync, 2U);
                        if (reasons[c])
                                continue;
                        text = plan_text(p);
                        if (!first)
                                first = TAKE_PTR(text);
                        else
                                ASSERT_STREQ(text, first);
                }
        }
        sb->fstype = own_fstype;
}

TEST(odd_paths_and_overmount) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/odd-paths", NULL);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_free_ char *text = NULL;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        text = plan_text(p);
        check_golden("odd-paths", text);
        ASSERT_EQ(find(p, "/mnt/with space\nnewline")->action, PLAN_SYNC);
        /* /mnt/stack has 8:17 mounted and then 8:18 on top: both are synced, 8:17 through its other,
         * visible mount /mnt/visible. */
        ASSERT_EQ(find(p, "/mnt/visible")->action, PLAN_SYNC);
        ASSERT_TRUE(strstr(find(p, "/mnt/visible")->reason, "") != NULL);
}

TEST(eta_and_order) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        /* Every synced bdi has a bandwidth estimate: the ETA is known; the disk's 14 MiB at
         * 186520 kBps counts once although two partitions of it are synced. */
        ASSERT_U64_EQ(p->eta, 14336ULL * 1024 * USEC_PER_SEC / (186520ULL * 1024));
        /* The dirtiest device group (259:0, 14 MiB) goes first. */
        ASSERT_STREQ(p->entries[0].mount_point, "/");
        ASSERT_U64_EQ(find(p, "/")->dirty_bytes, 14336ULL * 1024);
}

TEST(container_host_1000) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/container-host-1000", NULL);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        usec_t t0 = now(CLOCK_MONOTONIC);

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        fprintf(stderr, "plan of %zu mounts: %llu us (informational)\n", p->n_entries,
                (unsigned long long) (now(CLOCK_MONOTONIC) - t0));
        ASSERT_EQ(p->n_entries, 1000U);
        size_t n_overlay = 0;
        for (size_t i = 0; i < p->n_entries; i++) {
                ASSERT_TRUE(p->entries[i].reason);
                if (streq(p->entries[i].fstype, "overlay")) {
                        /* upperdir lives on the xfs at /var/lib/containers, not on / */
                        ASSERT_TRUE(strstr(p->entries[i].reason, "upper layer on /var/lib/containers (8:1)"));
                        ASSERT_TRUE(p->entries[i].covered_if_dev == makedev(8, 1));
                        n_overlay++;
                }
        }
        ASSERT_EQ(n_overlay, 111U);
}


/* Issue 9 case 10: run inside a chroot whose root is a directory, "/" is in no table: the plan still
 * syncs "/" itself (syncfs on the root directory reaches its superblock), never 0 to sync. */
TEST(chroot_view_syncs_root) {
        _cleanup_close_ int root_fd = open(FIXTURES_DIR "/roots/chroot-view",
                                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_(sample_freep) Sample *s = NULL;
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        SampleSources src = { .root_fd = root_fd,
                              .sysfs_root = "/nonexistent",
                              .debugfs_fd = -EBADF,
                              .scan_namespaces = true };
        const PlanEntry *e;
        struct statfs sfs;

        ASSERT_TRUE(root_fd >= 0);
        ASSERT_OK(fstatfs(root_fd, &sfs));
        if (sfs.f_type == 0x01021994 || sfs.f_type == 0x858458f6) {
                test_skip("the fixture tree is on tmpfs/ramfs, whose root has nothing to sync");
                return;
        }
        ASSERT_OK(sample_load(&src, &s));
        ASSERT_TRUE(s->view_restricted);
        ASSERT_TRUE(!s->complete);
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        ASSERT_TRUE(!p->complete);
        e = find(p, "/");
        fprintf(stderr, "/: %s %s (%s)\n", plan_action_to_string(e->action), e->path, e->reason);
        ASSERT_EQ(e->action, PLAN_SYNC);
        ASSERT_STREQ(e->path, "/");
        ASSERT_TRUE(e->unlisted);
        ASSERT_TRUE(strstr(e->reason, "restricted view"));
        ASSERT_TRUE(p->n_sync >= 1);
}

/* What past sleeps taught: a known ETA gets the shortest past sync on top, an unknown one the
 * median; the plan's ETA is the longest group first over max_parallel again, each entry counted as
 * plan_build() counted it (eta_work): a partition whose disk's dirty data an entry before it counted,
 * and an overlay whose upper layer is synced first, add only what they learned. */
TEST(learn) {
        PlanEntry e[] = {
                { .mount_point = "/", .group = "8:0", .action = PLAN_SYNC, .eta = 100, .eta_work = 100 },
                { .mount_point = "/boot", .group = "8:0", .action = PLAN_SYNC, .eta = 50, .eta_work = 50 },
                { .mount_point = "/mnt/nfs",
                  .group = "nfs",
                  .action = PLAN_SYNC,
                  .eta = USEC_INFINITY,
                  .eta_work = USEC_INFINITY },
                { .mount_point = "/mnt/ns",
                  .group = "9:0",
                  .action = PLAN_SYNC,
                  .eta = 10,
                  .eta_work = 10,
                  .namespace_ino = 7 },
                { .mount_point = "/proc", .action = PLAN_SKIP, .eta = USEC_INFINITY },
        };
        Plan p = {
                .entries = e, .n_entries = ELEMENTSOF(e), .n_sync = 4, .eta = USEC_INFINITY, .max_parallel = 1
        };
        PlanLearned l[] = {
                { .mount_point = "/", .min = 1000, .p50 = 5000 },
                { .mount_point = "/mnt/nfs", .min = 200, .p50 = 300 },
                { .mount_point = "/mnt/ns", .min = 1, .p50 = 2 }, /* other namespace: no match */
                { .mount_point = "/proc", .min = 9, .p50 = 9 },   /* skipped: no match */
        };

        ASSERT_EQ(plan_learn(&p, l, ELEMENTSOF(l)), 2U);
        ASSERT_U64_EQ(e[0].eta, 1100); /* 100 + shortest 1000 */
        ASSERT_U64_EQ(e[1].eta, 50);
        ASSERT_U64_EQ(e[2].eta, 300); /* unknown: the median */
        ASSERT_U64_EQ(e[3].eta, 10);
        ASSERT_U64_EQ(e[4].eta, USEC_INFINITY);
        ASSERT_U64_EQ(p.eta, 1150 + 300 + 10); /* one worker: all groups in a row */
        p.max_parallel = 4;
        l[0].min = 0;
        ASSERT_EQ(plan_learn(&p, l, 1), 1U);
        ASSERT_U64_EQ(p.eta, 1150); /* the longest group, 8:0 */
        /* a sync entry still unknown leaves the ETA unknown */
        e[3].eta = e[3].eta_work = USEC_INFINITY;
        ASSERT_EQ(plan_learn(&p, l, 1), 1U);
        ASSERT_U64_EQ(p.eta, USEC_INFINITY);
}

/* The ETA after learning counts what plan_build() counted: on the laptop fixture / and /boot/efi are
 * partitions of one disk (bdi 259:0), whose dirty data each one's own ETA shows but the plan's counts
 * once, and the overlay over / costs a stat() (its own ETA is unknown); learned times for each add to
 * that, and none of them makes the ETA unknown (before: the disk's data twice, or "unknown"). */
TEST(learn_counts_as_planned) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        PlanLearned l[] = {
                { .mount_point = "/", .min = 1000000, .p50 = 2000000 },
                { .mount_point = "/boot/efi", .min = 3000, .p50 = 4000 },
                { .mount_point = "/var/lib/containers/storage/overlay/merged", .min = 500, .p50 = 700 },
        };
        usec_t planned, disk;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &p));
        disk = find(p, "/")->eta;
        ASSERT_TRUE(disk > 0 && disk != USEC_INFINITY);
        ASSERT_U64_EQ(find(p, "/boot/efi")->eta, disk);
        ASSERT_U64_EQ(find(p, "/var/lib/containers/storage/overlay/merged")->eta, USEC_INFINITY);
        planned = p->eta;
        ASSERT_U64_EQ(planned, disk);
        ASSERT_EQ(plan_learn(p, l, ELEMENTSOF(l)), 3U);
        ASSERT_U64_EQ(p->eta, planned + 1000000 + 3000 + 500);
        ASSERT_U64_EQ(find(p, "/")->eta, disk + 1000000);
        ASSERT_U64_EQ(find(p, "/boot/efi")->eta, disk + 3000);
        ASSERT_U64_EQ(find(p, "/var/lib/containers/storage/overlay/merged")->eta, 700);
}

/* An ext4 without a journal sends its FLUSH before its last metadata writes: the worker fsyncs its
 * device too, and so it does whenever the journal is not proven. */
TEST(ext4_journal_device_flush) {
        static const int answers[] = { EXT4_JOURNAL_YES, EXT4_JOURNAL_NONE, -ENOENT, -EINVAL };
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);

        for (size_t i = 0; i <= ELEMENTSOF(answers); i++) {
                _cleanup_(sample_freep) Sample *s = NULL;
                _cleanup_(plan_freep) Plan *p = NULL;

                fake_journal_op = i < ELEMENTSOF(answers);
                fake_journal_answer = fake_journal_op ? answers[i] : EXT4_JOURNAL_YES;
                s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                ASSERT_STREQ(find(p, "/")->fstype, "ext4");
                if (fake_journal_op && answers[i] == EXT4_JOURNAL_YES) {
                        ASSERT_TRUE(find(p, "/")->flush_device == NULL);
                        ASSERT_EQ(find(p, "/")->flush, FS_FLUSH_NONE);
                } else {
                        ASSERT_STREQ(find(p, "/")->flush_device, find(p, "/")->source);
                        ASSERT_EQ(find(p, "/")->flush, FS_FLUSH_DEVICE_OR_SYNCFS);
                }
                /* other types ignore it; vfat never falls back to a second syncfs (its sync_fs
                 * sends no FLUSH) */
                ASSERT_TRUE(find(p, "/home")->flush_device == NULL);
                ASSERT_EQ(find(p, "/home")->flush, FS_FLUSH_NONE);
                ASSERT_STREQ(find(p, "/boot/efi")->flush_device, "/dev/nvme0n1p1");
                ASSERT_EQ(find(p, "/boot/efi")->flush, FS_FLUSH_DEVICE);
        }
        fake_journal_op = true;
        fake_journal_answer = EXT4_JOURNAL_YES;
}

/* DeferCommit=: which sync entries of the unit's pass are left to the late pass —
 * local block filesystems whose syncfs flushes even when clean (ext4; vfat through its device) —
 * and never in the late pass itself, nor with DeferCommit=no. */
TEST(late_commit) {
        static const struct {
                const char *mount_point;
                bool late_commit;
        } expect[] = {
                { "/", true },                   /* ext4: ext4_sync_fs() flushes when clean */
                { "/boot/efi", true },           /* vfat: flushed through its device */
                { "/home", false },              /* btrfs: a clean syncfs sends nothing */
                { "/home/alice/remote", false }, /* FUSE: not in the late pass's scope */
                { "/mnt/nfs", false },           /* network: neither */
        };
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(policy_freep) Policy *off = parse_policy("[Sync]\nDeferCommit=no\n");
        _cleanup_(plan_freep) Plan *p = NULL, *late = NULL, *p_off = NULL;
        size_t n = 0;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        for (size_t i = 0; i < ELEMENTSOF(expect); i++) {
                const PlanEntry *e = find(p, expect[i].mount_point);

                ASSERT_EQ(e->action, PLAN_SYNC);
                if (e->late_commit != expect[i].late_commit)
                        fprintf(stderr, "%s: late_commit %d\n", e->mount_point, e->late_commit);
                ASSERT_EQ(e->late_commit, expect[i].late_commit);
        }
        for (size_t i = p->n_sync; i < p->n_entries; i++)
                ASSERT_TRUE(!p->entries[i].late_commit); /* skipped entries never */

        /* controls: the late pass commits itself; DeferCommit=no commits in the unit's pass */
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &late));
        ASSERT_OK(plan_build(s, off, PLAN_SCOPE_ALL, &p_off));
        for (size_t i = 0; i < late->n_entries; i++)
                n += late->entries[i].late_commit;
        for (size_t i = 0; i < p_off->n_entries; i++)
                n += p_off->entries[i].late_commit;
        ASSERT_EQ(n, 0U);
        ASSERT_EQ(find(late, "/")->action, PLAN_SYNC);
        ASSERT_EQ(find(p_off, "/")->action, PLAN_SYNC);
}

/* Makes sb a loop device whose backing file the driver placed on the superblock mounted at 'on'
 * (error 0; NULL: a superblock no table shows), or did not place (error < 0). */
static void set_loop(Sample *s, const Plan *p, Superblock *sb, const char *on, int error) {
        sb->device.classes |= DEVICE_LOOP;
        sb->loop_backing_error = error;
        sb->loop_backing_dev = on ? s->sbs[find(p, on)->sb].dev : makedev(0, 4095);
}

/* late_commit of /boot/efi's superblock, made a loop device as set_loop() */
static bool efi_on_loop(Sample *s, const Policy *pol, const char *on, int error) {
        _cleanup_(plan_freep) Plan *p = NULL;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        set_loop(s, p, &s->sbs[find(p, "/boot/efi")->sb], on, error);
        plan_free(p);
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        return find(p, "/boot/efi")->late_commit;
}

/* The same, the "file" a device node of the filesystem at 'on' (lo_rdevice): its writes go to rdev. */
static bool efi_on_node(Sample *s, const Policy *pol, const char *on, dev_t rdev) {
        _cleanup_(plan_freep) Plan *p = NULL;
        Superblock *efi;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        efi = &s->sbs[find(p, "/boot/efi")->sb];
        set_loop(s, p, efi, on, 0);
        efi->loop_backing_rdev = rdev;
        plan_free(p);
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        efi->loop_backing_rdev = 0;
        return find(p, "/boot/efi")->late_commit;
}

/* DeferCommit= and loop devices: left to the late pass only when it can reach the backing file's
 * filesystem — memory or a local block filesystem; not a network one, not FUSE (its server may be
 * in a user's session, frozen before the hooks), not an unknown one. Where the file is, is the loop
 * driver's answer (its st_dev), never the path sysfs reports. */
TEST(late_commit_loop) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        Superblock *remote, *efi, *root;
        MountEntry *m;

        ASSERT_TRUE(efi_on_loop(s, pol, "/", 0));                   /* ext4, local */
        ASSERT_TRUE(!efi_on_loop(s, pol, "/mnt/nfs", 0));           /* network */
        ASSERT_TRUE(!efi_on_loop(s, pol, "/home/alice/remote", 0)); /* sshfs: network */
        ASSERT_TRUE(!efi_on_loop(s, pol, NULL, 0));                 /* in no scanned table */
        ASSERT_TRUE(!efi_on_loop(s, pol, "/", -ENODATA));           /* not asked */
        ASSERT_TRUE(!efi_on_loop(s, pol, "/", -ETIMEDOUT));         /* no answer in time */
        ASSERT_TRUE(!efi_on_loop(s, pol, "/", -ENOTBLK));           /* the node was another device */
        ASSERT_TRUE(!efi_on_loop(s, pol, "/boot/efi", 0));          /* on itself: nonsense */
        ASSERT_TRUE(efi_on_loop(s, pol, "/run", 0));                /* tmpfs: memory */
        ASSERT_TRUE(efi_on_loop(s, pol, "/dev", 0));                /* devtmpfs: memory */
        ASSERT_TRUE(!efi_on_loop(s, pol, "/proc", 0));              /* not memory one writes to */
        /* a device node (/dev/nbd0, another loop device): its writes go to a device in no stack
         * walked here, served by whoever; the node's own filesystem tells nothing */
        ASSERT_TRUE(!efi_on_node(s, pol, "/dev", makedev(43, 0)));
        ASSERT_TRUE(!efi_on_node(s, pol, "/dev", makedev(7, 1)));
        ASSERT_TRUE(!efi_on_loop(s, pol, "/var/lib/containers/storage/overlay/merged", 0));

        /* the path sysfs reports is a name only: it may place the file on "/" while the driver
         * says NFS (attached in another namespace), and the driver's answer counts */
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        efi = &s->sbs[find(p, "/boot/efi")->sb];
        efi->device.loop_backing_file = strdup("/var/lib/images/efi.img");
        ASSERT_TRUE(efi->device.loop_backing_file);
        ASSERT_TRUE(!efi_on_loop(s, pol, "/mnt/nfs", 0));
        ASSERT_TRUE(efi_on_loop(s, pol, "/", 0));

        /* a stack with a disk a process or the network serves, or with two loop devices */
        efi->device.served_remotely = true;
        ASSERT_TRUE(!efi_on_loop(s, pol, "/", 0));
        efi->device.served_remotely = false;
        efi->device.n_loops = 2;
        ASSERT_TRUE(!efi_on_loop(s, pol, "/", 0));
        efi->device.n_loops = 1;

        /* nested: the image lies on "/", itself a loop device whose file is on the NFS mount */
        root = &s->sbs[find(p, "/")->sb];
        set_loop(s, p, root, "/mnt/nfs", 0);
        ASSERT_TRUE(!efi_on_loop(s, pol, "/", 0));
        set_loop(s, p, root, "/run", 0); /* on tmpfs: reachable */
        ASSERT_TRUE(efi_on_loop(s, pol, "/", 0));
        set_loop(s, p, root, "/run", -ETIMEDOUT); /* not placed */
        ASSERT_TRUE(!efi_on_loop(s, pol, "/", 0));
        root->device.classes &= ~DEVICE_LOOP;

        /* the image's filesystem with a device outside its stack: an external log or realtime
         * device (xfs logdev=, rtdev=), which the late pass may not reach */
        m = &s->table->entries[root->mounts[0]];
        for (size_t i = 0; i < 2; i++) {
                char *saved = m->fs_options;

                m->fs_options = (char *) (i == 0 ? "rw,logdev=/dev/nbd0p1" : "rw,rtdev=/dev/sdb2,noquota");
                ASSERT_TRUE(!efi_on_loop(s, pol, "/", 0));
                m->fs_options = saved;
        }
        ASSERT_TRUE(efi_on_loop(s, pol, "/", 0)); /* the control */
        plan_free(p);
        p = NULL;

        /* a plain FUSE mount, a user's or root's (whose server may still run in a session) */
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        remote = &s->sbs[find(p, "/home/alice/remote")->sb];
        remote->fs_class = FS_CLASS_FUSE;
        remote->device.classes = DEVICE_FUSE;
        ASSERT_TRUE(!efi_on_loop(s, pol, "/home/alice/remote", 0));
        m = &s->table->entries[remote->mounts[0]];
        free(m->fs_options);
        m->fs_options = strdup("rw,user_id=0,group_id=0");
        ASSERT_TRUE(m->fs_options);
        ASSERT_TRUE(!efi_on_loop(s, pol, "/home/alice/remote", 0));
}

/* F9: an ext4 whose journal may lie on a device of its own (mkfs.ext4 -J device=), which is in no
 * device stack checked here, is not left to the late pass: only one with its journal proven in the
 * filesystem (proc fs/jbd2/<device>-<inode>, ext4-journal.h) or without a journal. */
static const FakeDev laptop_renamed_devs[] = { { 259, 2, "259:0", 259, 0, 0, true, "nvme0n1p3" },
                                               { 259, 1, "259:0", 259, 0, 0, true, "nvme0n1p1" },
                                               {} };

TEST(late_commit_journal) {
        static const struct {
                int journal, internal;
                bool late_commit;
        } cases[] = {
                { EXT4_JOURNAL_YES, 1, true },         /* fs/jbd2/nvme0n1p2-8 */
                { EXT4_JOURNAL_YES, 0, false },        /* no such entry: a journal device */
                { EXT4_JOURNAL_YES, -ENOENT, false },  /* no fs/jbd2/ */
                { EXT4_JOURNAL_YES, -E2BIG, false },   /* too many entries */
                { EXT4_JOURNAL_YES, -ENODATA, false }, /* not read */
                { -EOPNOTSUPP, 1, true },              /* journal_task not read (before 5.7) */
                { -EOPNOTSUPP, 0, false },
                { -ENOENT, -ENOENT, false },           /* nothing known */
                { EXT4_JOURNAL_NONE, -ENODATA, true }, /* no journal at all */
        };
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(sample_freep)
                Sample *renamed = load_sample(FIXTURES_DIR "/roots/laptop", laptop_renamed_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        Superblock *root;

        /* the fixture: its entry proves "/"'s journal internal; under another name there is none */
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        root = &s->sbs[find(p, "/")->sb];
        ASSERT_EQ(root->journal_internal, 1);
        ASSERT_TRUE(find(p, "/")->late_commit);
        ASSERT_OK(plan_build(renamed, pol, PLAN_SCOPE_ALL, &q));
        ASSERT_EQ(renamed->sbs[find(q, "/")->sb].journal_internal, 0);
        ASSERT_TRUE(!find(q, "/")->late_commit);
        ASSERT_TRUE(find(q, "/boot/efi")->late_commit); /* vfat: no journal to look for */
        ASSERT_EQ(renamed->sbs[find(q, "/boot/efi")->sb].journal_internal, -ENODATA);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                plan_free(p);
                p = NULL;
                root->journal = cases[i].journal;
                root->journal_internal = cases[i].internal;
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                if (find(p, "/")->late_commit != cases[i].late_commit)
                        fprintf(stderr, "case %zu: late_commit %d\n", i, find(p, "/")->late_commit);
                ASSERT_EQ(find(p, "/")->late_commit, cases[i].late_commit);
                ASSERT_EQ(find(p, "/")->action, PLAN_SYNC);
                /* a loop device whose file lies on "/" is reached only as "/" is */
                ASSERT_EQ(efi_on_loop(s, pol, "/", 0), cases[i].late_commit);
                s->sbs[find(p, "/boot/efi")->sb].device.classes &= ~DEVICE_LOOP;
        }
}

/* Review AA, AA1: an ext4 whose superblock's own defaults say nobarrier shows no such option in the
 * mount table; proc fs/ext4/<device>/options tells (Superblock.nobarrier), and the device gets the
 * FLUSH its sync_fs does not send. So does one whose options file could not be read: unknown is
 * flushed, never taken for barriers on. */
TEST(superblock_nobarrier) {
        static const struct {
                int nobarrier;
                FsFlush flush;
        } cases[] = {
                { 0, FS_FLUSH_NONE },         /* "barrier" */
                { -ENODATA, FS_FLUSH_NONE },  /* not asked (no such fact for this superblock) */
                { 1, FS_FLUSH_DEVICE },       /* "nobarrier" */
                { -ENOENT, FS_FLUSH_DEVICE }, /* no options file */
                { -EINVAL, FS_FLUSH_DEVICE }, /* neither line in it */
        };
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        Superblock *root;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        root = &s->sbs[find(p, "/")->sb];
        ASSERT_EQ(root->journal, EXT4_JOURNAL_YES);
        ASSERT_EQ(root->nobarrier, -ENODATA); /* these ops do not ask */
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const PlanEntry *e;

                plan_free(p);
                p = NULL;
                root->nobarrier = cases[i].nobarrier;
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                e = find(p, "/");
                if (e->flush != cases[i].flush)
                        fprintf(stderr, "case %zu: flush %s\n", i, fs_flush_to_string(e->flush));
                ASSERT_EQ(e->flush, cases[i].flush);
                if (cases[i].flush == FS_FLUSH_DEVICE)
                        ASSERT_STREQ(e->flush_device, "/dev/nvme0n1p2");
        }
}

/* Review AC, AC1: the superblock's barriers are asked by its device's name also where the stack
 * below it could not be read in full (DeviceInfo.incomplete: is_block false, its journal not asked).
 * Not asked, its device-or-syncfs ended without a device node (an empty /dev) in a second syncfs,
 * which an ext4 whose superblock says nobarrier answers without a FLUSH: "synced", not durable. No
 * name at all: unknown, the device flush. */
TEST(superblock_nobarrier_incomplete_stack) {
        static const FakeDev named[] = { { 259, 2, "259:0", 259, 0, 0, false, "nvme0n1p2" },
                                         { 259, 1, "259:0", 259, 0, 0, true, "nvme0n1p1" },
                                         {} };
        static const FakeDev unnamed[] = { { 259, 2, "259:0", 259, 0, 0, false, NULL },
                                           { 259, 1, "259:0", 259, 0, 0, true, "nvme0n1p1" },
                                           {} };
        static const struct {
                const FakeDev *devs;
                const char *nobarrier_name;
                int nobarrier;
                FsFlush flush;
        } cases[] = {
                { named, "nvme0n1p2", 1, FS_FLUSH_DEVICE },           /* asked by its name */
                { named, "nvme0n1p1", 0, FS_FLUSH_DEVICE_OR_SYNCFS }, /* another's nobarrier */
                { unnamed, "nvme0n1p2", -ENODEV, FS_FLUSH_DEVICE },   /* no name, asked so: unknown */
        };
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);

        fake_nobarrier_op = true;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(sample_freep) Sample *s = NULL;
                _cleanup_(plan_freep) Plan *p = NULL;
                const Superblock *root;
                const PlanEntry *e;

                fake_nobarrier_name = cases[i].nobarrier_name;
                s = load_sample(FIXTURES_DIR "/roots/laptop", cases[i].devs);
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                e = find(p, "/");
                root = &s->sbs[e->sb];
                ASSERT_TRUE(!root->device.is_block);
                ASSERT_EQ(root->journal, -ENODATA); /* the stack's facts: not asked */
                if (root->nobarrier != cases[i].nobarrier || e->flush != cases[i].flush)
                        fprintf(stderr, "case %zu: nobarrier %d, flush %s\n", i, root->nobarrier,
                                fs_flush_to_string(e->flush));
                ASSERT_EQ(root->nobarrier, cases[i].nobarrier);
                ASSERT_EQ(e->flush, cases[i].flush);
                /* the nvme0n1p1 mount (/boot/efi, vfat) is no ext4: never asked */
                ASSERT_EQ(s->sbs[find(p, "/boot/efi")->sb].nobarrier, -ENODATA);
        }
        fake_nobarrier_op = false;
        fake_nobarrier_name = NULL;
}

/* Review J (mutations P06, P07): an overlay whose upperdir lies on another overlay is not followed
 * to it (an overlay's upper layer is never an overlay): it is decided by itself, as one whose upper
 * layer is not in the table. The late pass leaves it out, uncovered (so the kernel's sync stays on);
 * the unit's pass syncs it. */
TEST(late_scope_overlay_upper_unknown) {
        _cleanup_(sample_freep)
                Sample *s = load_sample(FIXTURES_DIR "/roots/container-host-1000", container_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL, *all = NULL;
        const char *c1 = "/var/lib/containers/storage/overlay/c1/merged";
        const PlanEntry *e;
        MountEntry *m = NULL;

        for (size_t i = 0; i < s->table->n_entries; i++)
                if (streq(s->table->entries[i].mount_point, c1))
                        m = &s->table->entries[i];
        ASSERT_TRUE(m);
        free(m->fs_options);
        m->fs_options = strdup("rw,lowerdir=/var/lib/containers/storage/overlay/l/IMG1,"
                               "upperdir=/var/lib/containers/storage/overlay/c2/merged/upper,"
                               "workdir=/var/lib/containers/storage/overlay/c2/merged/work");
        ASSERT_TRUE(m->fs_options);

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &p));
        e = find(p, c1);
        ASSERT_EQ(e->action, PLAN_SKIP);
        ASSERT_TRUE(e->uncovered);
        ASSERT_TRUE(e->primary);
        ASSERT_STREQ(e->reason, "late pass: overlay whose upper layer is not in the mount table");
        /* control: the other overlay, its upper layer on the local xfs, is synced through it */
        ASSERT_EQ(find(p, "/var/lib/containers/storage/overlay/c2/merged")->action, PLAN_SYNC);

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &all));
        e = find(all, c1);
        ASSERT_EQ(e->action, PLAN_SYNC);
        ASSERT_STREQ(e->reason, "overlay: upper layer not found in the mount table");
}

/* Review J (mutations P05, P24): a filesystem of a type no row names (class block) on an anonymous
 * device (0:N, no block device: its only leaf is its own number, as device_classifier_classify()
 * leaves it) is no local block filesystem: the late pass leaves it out, uncovered, and a loop
 * device whose backing file lies on it is not left to the late pass. Here /mnt/nfs's superblock is
 * made such a one. */
TEST(late_scope_unknown_anonymous) {
        _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL, *late = NULL;
        const PlanEntry *e;
        Superblock *sb;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        sb = &s->sbs[find(p, "/mnt/nfs")->sb];
        free(sb->fstype);
        sb->fstype = strdup("zfs");
        ASSERT_TRUE(sb->fstype);
        ASSERT_EQ(fs_class_from_fstype(sb->fstype), FS_CLASS_BLOCK);
        sb->fs_class = FS_CLASS_BLOCK;
        sb->device.classes = 0;
        ASSERT_TRUE(sb->device.classified && !sb->device.is_block && sb->device.n_leaves == 0);
        sb->device.leaves = malloc(sizeof(dev_t));
        ASSERT_TRUE(sb->device.leaves);
        sb->device.leaves[0] = sb->dev;
        sb->device.n_leaves = 1;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_LOCAL_BLOCK, &late));
        e = find(late, "/mnt/nfs");
        ASSERT_EQ(e->action, PLAN_SKIP);
        ASSERT_TRUE(e->uncovered);
        ASSERT_STREQ(e->reason, "late pass: not a local block filesystem");
        ASSERT_EQ(find(late, "/")->action, PLAN_SYNC); /* control */

        ASSERT_TRUE(!efi_on_loop(s, pol, "/mnt/nfs", 0));
        ASSERT_TRUE(efi_on_loop(s, pol, "/", 0)); /* control */
}

/* Review J (mutations P26, P27): only mounts of our own table are left to the late pass: not a
 * mount of another namespace, nor one in no table (reached through a process's open file). */
TEST(late_commit_own_table_only) {
        for (size_t i = 0; i < 3; i++) {
                _cleanup_(sample_freep) Sample *s = load_sample(FIXTURES_DIR "/roots/laptop", laptop_devs);
                _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
                _cleanup_(plan_freep) Plan *p = NULL;

                if (i == 1)
                        move_to_other_namespace(s, "/boot/efi");
                if (i == 2)
                        for (size_t k = 0; k < s->table->n_entries; k++)
                                if (streq(s->table->entries[k].mount_point, "/boot/efi"))
                                        s->table->entries[k].unlisted = true;
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                ASSERT_EQ(find(p, "/boot/efi")->action, PLAN_SYNC);
                ASSERT_EQ(find(p, "/boot/efi")->late_commit, i == 0); /* i == 0: the control */
                ASSERT_TRUE(find(p, "/")->late_commit);
        }
}

/* A sample of mountinfo text, no device facts. */
static Sample *sample_from_text(const char *text) {
        MountTable *t = NULL;
        Sample *s = NULL;

        ASSERT_OK(mount_table_parse(text, strlen(text), &t, NULL));
        ASSERT_OK(sample_build(&t, NULL, &s));
        ASSERT_TRUE(t == NULL);
        return s;
}

/* Review J (mutations S02, S03): tables are read one after another, so one superblock may be listed
 * read-only and read-write, or with two types. Skipped as read-only only when every mount says so,
 * and typed by the type that is not a pseudo filesystem, whatever the order of the lines. */
TEST(sb_listed_two_ways) {
        static const char *const tables[] = {
                /* read-write first, read-only last */
                "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                "30 21 8:2 / /mnt/a rw,relatime - ext4 /dev/sda2 rw\n"
                "31 21 8:2 / /mnt/b ro,relatime - ext4 /dev/sda2 ro\n",
                /* read-only first, read-write last (the control) */
                "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                "30 21 8:2 / /mnt/a ro,relatime - ext4 /dev/sda2 ro\n"
                "31 21 8:2 / /mnt/b rw,relatime - ext4 /dev/sda2 rw\n",
        };
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);

        for (size_t i = 0; i < ELEMENTSOF(tables); i++) {
                _cleanup_(sample_freep) Sample *s = sample_from_text(tables[i]);
                _cleanup_(plan_freep) Plan *p = NULL;
                const PlanEntry *e;

                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                e = find(p, i == 0 ? "/mnt/a" : "/mnt/b");
                ASSERT_TRUE(!s->sbs[e->sb].all_read_only);
                ASSERT_EQ(e->action, PLAN_SYNC);
                ASSERT_TRUE(e->primary);
        }

        /* one device number listed as tmpfs, then as ext4 (or the other way round) */
        for (size_t i = 0; i < 2; i++) {
                _cleanup_(sample_freep) Sample *s = sample_from_text(
                        i == 0 ? "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                                 "40 21 0:50 / /mnt/t rw,relatime - tmpfs tmpfs rw\n"
                                 "41 21 0:50 / /mnt/e rw,relatime - ext4 /dev/sdc1 rw\n"
                               : "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                                 "40 21 0:50 / /mnt/e rw,relatime - ext4 /dev/sdc1 rw\n"
                                 "41 21 0:50 / /mnt/t rw,relatime - tmpfs tmpfs rw\n");
                _cleanup_(plan_freep) Plan *p = NULL;
                const PlanEntry *e;

                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                e = find(p, "/mnt/e");
                ASSERT_STREQ(s->sbs[e->sb].fstype, "ext4");
                ASSERT_TRUE(s->sbs[e->sb].type_conflict > 0);
                ASSERT_EQ(find(p, i == 0 ? "/mnt/t" : "/mnt/e")->action, PLAN_SYNC);
        }
}

/* Review U, U1: one superblock (7:0) mounted first below a FUSE mount (a server that may hang the
 * walk to it) and again at a local path: synced through the local one, read-only or not. With no
 * local path, today's order stands (the first mount that is not overmounted, writable first). */
TEST(primary_avoids_server_on_the_way) {
        static const char *const root = "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                                        "30 21 0:41 / /srv/fuse rw,relatime - fuse.faultdisk faultdisk "
                                        "rw,user_id=0,group_id=0,allow_other\n";
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        struct {
                const char *rest, *primary;
        } cases[] = {
                { "31 30 7:0 / /srv/fuse/sub rw,relatime - ext4 /dev/loop0 rw\n"
                  "32 21 7:0 / /ok rw,relatime - ext4 /dev/loop0 rw\n",
                  "/ok" },
                /* local below tmpfs (pseudo) and read-only: still before the writable one below FUSE */
                { "31 30 7:0 / /srv/fuse/sub rw,relatime - ext4 /dev/loop0 rw\n"
                  "33 21 0:50 / /run rw - tmpfs tmpfs rw\n"
                  "32 33 7:0 / /run/ok ro,relatime - ext4 /dev/loop0 rw\n",
                  "/run/ok" },
                /* an autofs directory on the way is no local path either */
                { "34 21 0:51 / /net rw - autofs systemd-1 rw\n"
                  "32 34 7:0 / /net/a rw,relatime - ext4 /dev/loop0 rw\n"
                  "31 30 7:0 / /srv/fuse/sub ro,relatime - ext4 /dev/loop0 rw\n"
                  "35 21 0:52 / /nfs rw - nfs4 srv:/ rw\n"
                  "36 35 7:0 / /nfs/b rw,relatime - ext4 /dev/loop0 rw\n",
                  "/net/a" },
                /* control: no local path, the first writable one as before */
                { "31 30 7:0 / /srv/fuse/sub ro,relatime - ext4 /dev/loop0 rw\n"
                  "35 21 0:52 / /nfs rw - nfs4 srv:/ rw\n"
                  "36 35 7:0 / /nfs/b rw,relatime - ext4 /dev/loop0 rw\n",
                  "/nfs/b" },
                /* control: a local path that is overmounted is not reachable there */
                { "31 30 7:0 / /srv/fuse/sub rw,relatime - ext4 /dev/loop0 rw\n"
                  "32 21 7:0 / /ok rw,relatime - ext4 /dev/loop0 rw\n"
                  "37 32 0:53 / /ok rw - tmpfs tmpfs rw\n",
                  "/srv/fuse/sub" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = NULL;
                _cleanup_(sample_freep) Sample *s = NULL;
                _cleanup_(plan_freep) Plan *p = NULL;
                const PlanEntry *e;

                ASSERT_TRUE(asprintf(&text, "%s%s", root, cases[i].rest) > 0);
                s = sample_from_text(text);
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                e = find(p, cases[i].primary);
                if (e->action != PLAN_SYNC || !e->primary)
                        fprintf(stderr, "case %zu: %s not the primary\n", i, cases[i].primary);
                ASSERT_EQ(e->action, PLAN_SYNC);
                ASSERT_TRUE(e->primary);
                ASSERT_EQ(e->dev, makedev(7, 0));
        }
}

/* Review W, W1: the open key of a worker stuck on its way to a FUSE or network superblock names that
 * superblock's mounts, not the FUSE, network or autofs mounts above it: its own server is where it
 * waits, and naming those above would block, for the rest of the boot, the healthy filesystem
 * mounted over a systemd automount point (/home) and every other NFS share below an autofs /net. */
static const PlanEntry *find_dev(const Plan *p, const char *mount_point, dev_t dev) {
        for (size_t i = 0; i < p->n_entries; i++)
                if (streq(p->entries[i].mount_point, mount_point) && p->entries[i].dev == dev)
                        return &p->entries[i];
        fprintf(stderr, "no plan entry for %s\n", mount_point);
        abort();
}

TEST(open_key_spares_healthy_parents) {
        /* an automounted /home (autofs, ext4 on top), a user's sshfs inside */
        _cleanup_(sample_freep) Sample *s = sample_from_text(
                "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                "30 21 0:40 / /home rw,relatime - autofs systemd-1 rw,fd=50,direct\n"
                "31 30 8:2 / /home rw,relatime - ext4 /dev/sda2 rw\n"
                "32 31 0:42 / /home/u/remote rw,relatime - fuse.sshfs u@h:/ "
                "rw,user_id=0,group_id=0,allow_other\n"
                /* autofs /net, two NFS servers below it */
                "40 21 0:50 / /net rw,relatime - autofs -hosts rw,fd=51,indirect\n"
                "41 40 0:51 / /net/a rw,relatime - nfs4 a:/ rw\n"
                "42 40 0:52 / /net/b rw,relatime - nfs4 b:/ rw\n");
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        const PlanEntry *fuse, *home, *a, *b;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        fuse = find_dev(p, "/home/u/remote", makedev(0, 42));
        home = find_dev(p, "/home", makedev(8, 2));
        a = find_dev(p, "/net/a", makedev(0, 51));
        b = find_dev(p, "/net/b", makedev(0, 52));
        ASSERT_TRUE(fuse->open_key && home->walk && a->open_key && b->walk);
        fprintf(stderr, "sshfs key %s, /home walk %s\n", fuse->open_key, home->walk);
        fprintf(stderr, "/net/a key %s, /net/b walk %s\n", a->open_key, b->walk);
        {
                /* the sshfs server hangs: its worker is stuck at its own mount; /home is a healthy disk */
                bool home_blocked = run_stuck_open_blocks(
                        fuse->open_key, &(ExecJob) { .dev = home->dev, .walk = home->walk });
                /* server a hangs: server b is healthy */
                bool b_blocked = run_stuck_open_blocks(a->open_key,
                                                       &(ExecJob) { .dev = b->dev, .walk = b->walk });

                fprintf(stderr, "/home blocked %d, /net/b blocked %d\n", home_blocked, b_blocked);
                ASSERT_TRUE(!home_blocked && !b_blocked);
        }
}

/* Review W, W2: a FUSE superblock mounted by root on the host below an NFS directory, and bound into
 * an unprivileged container (its own user namespace) at a local path, keeps the host's mount as its
 * primary: the container's would make decide_sb() skip it as "FUSE mounted in a user namespace"
 * (review N, N3), left to the kernel's sync. A primary moves off a path a server can hold only to
 * another mount of its own namespace. */
TEST(primary_stays_in_its_namespace) {
        _cleanup_(sample_freep) Sample *s = sample_from_text(
                "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                "35 21 0:52 / /nfs rw - nfs4 srv:/ rw\n"
                "36 35 0:60 / /nfs/u/remote rw,relatime - fuse.sshfs a@b:/ rw,user_id=0,group_id=0,allow_other\n"
                /* the container (an LXD/Incus-style unprivileged one, its root a directory on ext4) */
                "50 49 8:5 /containers/c1 / rw,relatime - ext4 /dev/sda5 rw\n"
                "51 50 0:60 / /data rw,relatime - fuse.sshfs a@b:/ rw,user_id=0,group_id=0,allow_other\n");
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        const PlanEntry *host;

        s->namespaces = calloc(1, sizeof(MountNamespace));
        ASSERT_TRUE(s->namespaces);
        s->namespaces[0] = (MountNamespace) { .ino = 4026532999ULL, .pid = 4242, .foreign_userns = true };
        s->n_namespaces = 1;
        for (size_t i = 0; i < s->table->n_entries; i++)
                if (s->table->entries[i].mount_id >= 50)
                        s->ns_of_mount[i] = 1;
        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        host = find_dev(p, "/nfs/u/remote", makedev(0, 60));
        fprintf(stderr, "/nfs/u/remote: action %d primary %d reason %s\n", host->action, host->primary,
                host->reason);
        ASSERT_EQ(host->action, PLAN_SYNC);
        ASSERT_TRUE(host->primary);
}

/* Review U, U1 and U2: a sync entry names the mounts its walk crosses, and the key a worker stuck on
 * its way to it leaves: its own mount and those a server can hold on the way (FUSE, network,
 * autofs), by never reused id where the table has one, else by device, old id and mount point. */
TEST(walk_and_open_key) {
        _cleanup_(sample_freep) Sample *s = sample_from_text(
                "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                "30 21 0:41 / /srv/fuse rw,relatime - fuse.faultdisk faultdisk "
                "rw,user_id=0,group_id=0,allow_other\n"
                "33 21 0:50 / /run rw - tmpfs tmpfs rw\n"
                "31 30 7:0 / /srv/fuse/sub rw,relatime - ext4 /dev/loop0 rw\n"
                "32 33 7:1 / /run/ok rw,relatime - ext4 /dev/loop1 rw\n"
                "38 30 0:42 / /srv/fuse/inner rw,relatime - fuse.sshfs a@b:/ rw,user_id=0,group_id=0\n"
                "39 33 0:42 / /run/inner rw,relatime - fuse.sshfs a@b:/ rw,user_id=0,group_id=0\n");
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_free_ char *want = NULL;
        char id[8][PLAN_MOUNT_IDENT_MAX];
        const PlanEntry *e;
        MountEntry m;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        for (size_t i = 0; i < s->table->n_entries; i++)
                (void) plan_mount_ident(&s->table->entries[i], id[i]);
        /* entries 0 /, 1 /srv/fuse, 2 /run, 3 /srv/fuse/sub, 4 /run/ok, 5 /srv/fuse/inner, 6 /run/inner */
        ASSERT_TRUE(startswith(id[3], "o7.0.31."));
        ASSERT_TRUE(strlen(id[3]) == strlen("o7.0.31.") + 16);
        m = s->table->entries[3];
        m.mount_point = (char *) "/srv/fuse/other";
        ASSERT_TRUE(!streq(plan_mount_ident(&m, id[7]), id[3])); /* the same old id elsewhere */
        m.mount_id_unique = 0x100000001ULL;
        ASSERT_STREQ(plan_mount_ident(&m, id[7]), "u4294967297");

        e = find(p, "/srv/fuse/sub");
        ASSERT_TRUE(asprintf(&want, ",%s,%s,%s,", id[3], id[1], id[0]) > 0);
        ASSERT_STREQ(e->walk, want);
        want = mfree(want);
        ASSERT_TRUE(asprintf(&want, "open:7:0@%s,%s", id[3], id[1]) > 0);
        ASSERT_STREQ(e->open_key, want);
        want = mfree(want);

        /* control: a local path names only its own mount */
        e = find(p, "/run/ok");
        ASSERT_TRUE(asprintf(&want, ",%s,%s,%s,", id[4], id[2], id[0]) > 0);
        ASSERT_STREQ(e->walk, want);
        want = mfree(want);
        ASSERT_TRUE(asprintf(&want, "open:7:1@%s", id[4]) > 0);
        ASSERT_STREQ(e->open_key, want);
        want = mfree(want);

        /* a FUSE superblock (its open may wait on its server) names its other mount too */
        e = find(p, "/run/inner");
        ASSERT_TRUE(e->primary && e->action == PLAN_SYNC);
        ASSERT_TRUE(asprintf(&want, "open:0:42@%s,%s", id[6], id[5]) > 0);
        ASSERT_STREQ(e->open_key, want);
        /* skipped entries carry neither */
        ASSERT_TRUE(!find(p, "/srv/fuse/inner")->walk && !find(p, "/srv/fuse/inner")->open_key);
}

/* Review U, U1 (mutation run 3, P05): an autofs directory on the way holds the walk to a mount below
 * it until its daemon answers, as a FUSE or NFS server does. The superblock is synced through its
 * local mount, whichever comes first; with none, its key names the autofs mount it waits behind. */
TEST(autofs_holds_the_walk) {
        static const char *const net = "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                                       "34 21 0:51 / /net rw,relatime - autofs systemd-1 rw,fd=5,direct\n"
                                       "32 34 7:0 / /net/a rw,relatime - ext4 /dev/loop0 rw\n";
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        char id[3][PLAN_MOUNT_IDENT_MAX];

        for (size_t i = 0; i < 2; i++) {
                _cleanup_free_ char *text = NULL, *want = NULL;
                _cleanup_(sample_freep) Sample *s = NULL;
                _cleanup_(plan_freep) Plan *p = NULL;
                const PlanEntry *e;

                /* i == 1: the same superblock at a local path too, listed after it */
                ASSERT_TRUE(asprintf(&text, "%s%s", net,
                                     i == 1 ? "33 21 7:0 / /ok rw,relatime - ext4 /dev/loop0 rw\n" : "") > 0);
                s = sample_from_text(text);
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                e = find(p, i == 1 ? "/ok" : "/net/a");
                ASSERT_EQ(e->action, PLAN_SYNC);
                ASSERT_TRUE(e->primary);
                if (i == 1)
                        continue;
                for (size_t k = 0; k < 3; k++)
                        (void) plan_mount_ident(&s->table->entries[k], id[k]);
                ASSERT_TRUE(asprintf(&want, "open:7:0@%s,%s", id[2], id[1]) > 0);
                ASSERT_STREQ(e->open_key, want);
        }
}

/* Review U, U1 (mutation run 3, P07, P08 and P12): every mount up to the namespace's root is on the
 * way, not only the parent: a tmpfs mounted inside a FUSE directory, the superblock below that tmpfs.
 * And an overlay on the way counts as a server (its layers may be on one), as for a container's root.
 * Either way the superblock is synced through its local mount, listed after the other, and a
 * writable one before a read-only one, as everywhere. */
TEST(primary_avoids_server_further_up) {
        static const char *const on_the_way[] = {
                "30 21 0:41 / /srv/fuse rw,relatime - fuse.faultdisk faultdisk "
                "rw,user_id=0,group_id=0,allow_other\n"
                "40 30 0:50 / /srv/fuse/tmp rw - tmpfs tmpfs rw\n"
                "31 40 7:0 / /srv/fuse/tmp/sub rw,relatime - ext4 /dev/loop0 rw\n",
                "30 21 0:45 / /srv/ov rw,relatime - overlay overlay "
                "rw,lowerdir=/l,upperdir=/u,workdir=/w\n"
                "31 30 7:0 / /srv/ov/sub rw,relatime - ext4 /dev/loop0 rw\n",
                /* a local read-only mount comes after the writable one (P12) */
                "30 21 0:41 / /srv/fuse rw,relatime - fuse.faultdisk faultdisk "
                "rw,user_id=0,group_id=0,allow_other\n"
                "31 30 7:0 / /srv/fuse/sub rw,relatime - ext4 /dev/loop0 rw\n"
                "33 21 7:0 / /ro ro,relatime - ext4 /dev/loop0 rw\n",
        };
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);

        for (size_t i = 0; i < ELEMENTSOF(on_the_way); i++) {
                _cleanup_free_ char *text = NULL;
                _cleanup_(sample_freep) Sample *s = NULL;
                _cleanup_(plan_freep) Plan *p = NULL;
                const PlanEntry *e;

                ASSERT_TRUE(asprintf(&text,
                                     "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n%s"
                                     "32 21 7:0 / /ok rw,relatime - ext4 /dev/loop0 rw\n",
                                     on_the_way[i]) > 0);
                s = sample_from_text(text);
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                e = find(p, "/ok");
                if (e->action != PLAN_SYNC || !e->primary)
                        fprintf(stderr, "case %zu: /ok not the primary\n", i);
                ASSERT_EQ(e->action, PLAN_SYNC);
                ASSERT_TRUE(e->primary);
                ASSERT_EQ(e->dev, makedev(7, 0));
        }
}

/* Review W, W1 (mutation run 3, P16): only a superblock a server answers for names its other mounts
 * in its key (it may wait on its server at any of them). A local superblock's key names the mount
 * its worker took and nothing else: its bind mount elsewhere is no path through a server, and the
 * healthy disk mounted below that bind mount must not wait for the worker stuck on the way. */
TEST(open_key_of_local_names_its_mount) {
        static const char table[] = "21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                                    "32 21 7:1 / /data rw,relatime - ext4 /dev/loop1 rw\n"
                                    "33 21 7:1 /sub /srv/bind rw,relatime - ext4 /dev/loop1 rw\n"
                                    "34 33 7:2 / /srv/bind/disk rw,relatime - ext4 /dev/loop2 rw\n";
        _cleanup_(sample_freep) Sample *s = sample_from_text(table);
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);
        _cleanup_(plan_freep) Plan *p = NULL;
        _cleanup_free_ char *want = NULL;
        char id[PLAN_MOUNT_IDENT_MAX];
        const PlanEntry *e, *disk;

        ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
        e = find(p, "/data");
        ASSERT_TRUE(e->primary && e->action == PLAN_SYNC);
        ASSERT_TRUE(asprintf(&want, "open:7:1@%s", plan_mount_ident(&s->table->entries[1], id)) > 0);
        ASSERT_STREQ(e->open_key, want);
        disk = find(p, "/srv/bind/disk");
        ASSERT_TRUE(disk->walk);
        ASSERT_TRUE(!run_stuck_open_blocks(e->open_key, &(ExecJob) { .dev = disk->dev, .walk = disk->walk }));
}

/* Review U, U2 (mutation run 3, P17): a key names up to PLAN_OPEN_KEY_MOUNTS_MAX mounts, the bound
 * included: a FUSE superblock mounted that many times keeps its path key (it blocks every job below
 * any of them); one more mount and it has none (run_job_stuck_key() falls back to the superblock's). */
TEST(open_key_bound) {
        _cleanup_(policy_freep) Policy *pol = parse_policy(NULL);

        for (unsigned n = PLAN_OPEN_KEY_MOUNTS_MAX; n <= PLAN_OPEN_KEY_MOUNTS_MAX + 1; n++) {
                _cleanup_free_ char *text = strdup("21 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n");
                _cleanup_(sample_freep) Sample *s = NULL;
                _cleanup_(plan_freep) Plan *p = NULL;
                const PlanEntry *e;

                ASSERT_TRUE(text);
                for (unsigned i = 0; i < n; i++) {
                        char *t = NULL;

                        ASSERT_TRUE(asprintf(&t,
                                             "%s%u 21 0:42 / /f%u rw,relatime - fuse.sshfs a@b:/ "
                                             "rw,user_id=0,group_id=0\n",
                                             text, 30 + i, i) > 0);
                        free(text);
                        text = t;
                }
                s = sample_from_text(text);
                ASSERT_OK(plan_build(s, pol, PLAN_SCOPE_ALL, &p));
                e = find(p, "/f0");
                ASSERT_TRUE(e->primary && e->action == PLAN_SYNC && e->walk);
                if (n > PLAN_OPEN_KEY_MOUNTS_MAX) {
                        ASSERT_TRUE(!e->open_key);
                        continue;
                }
                ASSERT_TRUE(e->open_key);
                for (unsigned i = 0; i < n; i++) {
                        char id[PLAN_MOUNT_IDENT_MAX];

                        ASSERT_TRUE(strstr(e->open_key, plan_mount_ident(&s->table->entries[1 + i], id)));
                }
        }
}

int main(void) {
        RUN(learn);
        RUN(learn_counts_as_planned);
        RUN(chroot_view_syncs_root);
        RUN(laptop_golden);
        RUN(ext4_journal_device_flush);
        RUN(rules);
        RUN(skip_rule_needs_every_mount);
        RUN(skip_rule_other_namespace);
        RUN(fuse_of_user_namespace);
        RUN(skip_rule_ours_first);
        RUN(bad_rule_never_skips);
        RUN(unsure_rule_never_yields_to_skip);
        RUN(device_flush_parity);
        RUN(fuse_owner);
        RUN(late_scope);
        RUN(late_scope_fuse_evidence);
        RUN(main_pass_fuse_proven_clean);
        RUN(main_pass_fuse_proven_clean_overlay_upper);
        RUN(late_scope_overlay);
        RUN(never_skipped_as_clean);
        RUN(odd_paths_and_overmount);
        RUN(eta_and_order);
        RUN(container_host_1000);
        RUN(late_commit);
        RUN(late_commit_loop);
        RUN(late_commit_journal);
        RUN(superblock_nobarrier);
        RUN(superblock_nobarrier_incomplete_stack);
        RUN(late_scope_overlay_upper_unknown);
        RUN(late_scope_unknown_anonymous);
        RUN(late_commit_own_table_only);
        RUN(sb_listed_two_ways);
        RUN(primary_avoids_server_on_the_way);
        RUN(walk_and_open_key);
        RUN(open_key_spares_healthy_parents);
        RUN(primary_stays_in_its_namespace);
        RUN(autofs_holds_the_walk);
        RUN(primary_avoids_server_further_up);
        RUN(open_key_of_local_names_its_mount);
        RUN(open_key_bound);
        return test_result();
}
