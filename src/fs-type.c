/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <string.h>

#include "fs-type.h"
#include "shared/macro.h"
#include "shared/string-table.h"
#include "shared/string-util.h"

static const char *const fs_class_table[_FS_CLASS_MAX] = {
        [FS_CLASS_BLOCK] = "block",   [FS_CLASS_NETWORK] = "network", [FS_CLASS_FUSE] = "fuse",
        [FS_CLASS_PSEUDO] = "pseudo", [FS_CLASS_OVERLAY] = "overlay",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(fs_class, FsClass);

static const char *const fs_clean_rule_table[_FS_CLEAN_RULE_MAX] = {
        [FS_CLEAN_RULE_NONE] = "none",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(fs_clean_rule, FsCleanRule);

static const char *const fs_flush_table[_FS_FLUSH_MAX] = {
        [FS_FLUSH_NONE] = "none",
        [FS_FLUSH_DEVICE] = "device",
        [FS_FLUSH_DEVICE_OR_SYNCFS] = "device-or-syncfs",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(fs_flush, FsFlush);

/* Every field not named is 0: no device flush, not FUSE, not listed in sysfs, no magic, clean rule
 * "none", no write counter. */
/* clang-format 14 and 19 lay out a macro whose body is a braced initializer differently. */
/* clang-format off */
#define NETWORK(n) \
        { .name = n, .class = FS_CLASS_NETWORK }
#define NETWORK_FUSE(n) \
        { .name = n, .class = FS_CLASS_NETWORK, .fuse = FS_FUSE_PLAIN }
#define PSEUDO(n) \
        { .name = n, .class = FS_CLASS_PSEUDO }
#define FLUSH(n) \
        { .name = n, .class = FS_CLASS_BLOCK, .device_flush = true }
#define READ_ONLY(n) \
        { .name = n, .class = FS_CLASS_BLOCK, .uncounted = true }
#define COUNTED(n, m) \
        { .name = n, .class = FS_CLASS_BLOCK, .module = m }
#define COUNTED_FLUSH(n, m) \
        { .name = n, .class = FS_CLASS_BLOCK, .device_flush = true, .module = m }
/* clang-format on */

/*
 * Device flush: filesystems whose ->sync_fs sends no cache FLUSH (or that have none): syncfs() writes
 * everything but leaves it in the device's volatile cache (fs/sync.c sync_filesystem() then only
 * calls sync_blockdev(), which sends no FLUSH). The worker fsyncs the block device after syncfs,
 * which does (block/fops.c blkdev_fsync → blkdev_issue_flush). Sources (Linux 6.x):
 *   vfat, msdos, fat, minix: no ->sync_fs at all;
 *   exfat: exfat_sync_fs() → sync_blockdev() and a superblock write with sync_dirty_buffer()
 *     (REQ_SYNC, no PREFLUSH);
 *   hfs: hfs_sync_fs() → hfs_mdb_commit() only; hfsplus flushes unless "nobarrier" (kept here:
 *     one redundant FLUSH at most);
 *   ext2: fs/ext2 ext2_sync_fs() → ext2_sync_super(): mark_buffer_dirty + sync_dirty_buffer, no
 *     FLUSH. Where the ext4 driver serves "ext2" (CONFIG_EXT4_USE_FOR_EXT2, Debian's kernels)
 *     ext4_sync_fs() flushes even without a journal (needs_barrier when BARRIER): one redundant
 *     FLUSH, measured on the fault disk (also ext4 ^has_journal: 1 FLUSH per syncfs);
 *   ext4 without a journal (flush_unless_journal): ext4_sync_fs() sends its FLUSH, and then
 *     sync_filesystem()'s last sync_blockdev() writes the metadata buffers it dirtied (inode tables,
 *     bitmaps, extents converted when their data completed: 2 blocks after the FLUSH per run on the
 *     fault disk, test/reliability/flush-parity.sh). With a journal they are committed first. An
 *     ext4 (or ext3: norecovery leaves it without one) is spared the device flush only when sysfs
 *     shows its journal (ext4-journal.h); without the device node a second syncfs flushes;
 *   any type mounted "nobarrier" (ext4, btrfs, f2fs), "barrier=0" or "barrier=none" (reiserfs), or
 *   with a barrier= value not known to turn barriers on: its sync_fs sends no FLUSH;
 *     the sync(2) of the kernel sends none either, but "synced" must mean durable here;
 *     an ext4 (ext3, ext2) whose superblock sets nobarrier as its own default (tune2fs -o
 *     nobarrier, -E mount_opts=nobarrier) shows no such option in the mount table: the plan reads
 *     proc fs/ext4/<device>/options (Superblock.nobarrier, ext4-journal.h; review AA, AA1);
 *   udf: udf_sync_fs() only marks the LVID buffer dirty ("Blockdevice will be synced later");
 *   ntfs3 (also registered as "ntfs"): ntfs_sync_fs() writes inodes and ntfs_update_mftmirr(),
 *     no blkdev_issue_flush();
 *   fuseblk (ntfs-3g, exfat-fuse, fuse2fs): fuse_sync_fs() sends at most FUSE_SYNCFS to a server
 *     that asked for it; the server's own writes to the device stay in its cache (measured on the
 *     fault disk with ntfs-3g: 0 FLUSH per syncfs). The device node is the mount's source.
 *   xfs (review Z, Z1): xfs_fs_sync_fs() → xfs_log_force(XFS_LOG_SYNC) flushes only when the log
 *     has something to write. A file overwritten in place (allocated, written extents: no
 *     transaction at I/O completion) after the log was forced (any fsync on the same filesystem, or
 *     xfs's log worker every 30 s) gets its data written by syncfs() and no FLUSH: measured on the
 *     fault disk, 1 MiB overwritten, another file fsynced, then syncfs: 0 FLUSH, 256 unflushed
 *     blocks, the overwrite lost at a power cut (sync(2) alike; ext4 flushes when no commit will,
 *     btrfs commits the transaction its ordered extent joined). test/reliability/flush-parity.sh
 *     "xfs-overwrite";
 *   f2fs, by reading (not in this project's test kernel): f2fs_sync_fs() writes a checkpoint, and
 *     with it a FLUSH, only when the superblock is dirty; data updated in place (IPU) needs none;
 *   xfs with a realtime device (rtdev=, fs_type_rt_flush_device()): xfs_fs_sync_fs() only forces
 *     the log, whose writes flush the log device and, with an external log, the data device
 *     (xlog_write_iclog()); nothing flushes the realtime device, which holds the data of realtime
 *     files. Only xfs_file_fsync() does, for a realtime inode. Measured (Debian's 6.12 kernel,
 *     CONFIG_XFS_RT=y, virtio disks with a write-back cache): 1 MiB written to a realtime file,
 *     then syncfs: 2048 sectors written to the rt device, 0 FLUSH there (2 on the data device); the
 *     same after an overwrite and after sync(1); fsync of the file: 1. Linux 6.18 has the same
 *     code; kernels built without CONFIG_XFS_RT (this project's test machine) refuse to mount an
 *     xfs with a realtime section (ENOSYS) but accept rtdev= on one without: one spare FLUSH.
 *
 * Classes: network filesystems (data lives behind a server; may be unreachable during suspend)
 * include the FUSE filesystems that are network clients; pseudo filesystems have nothing to write
 * back to a device; every other "fuse.*" / "fuseblk.*" is FUSE; unknown types are block.
 *
 * sysfs_lists: ext4, xfs and f2fs create fs/<type>/<block device name>/ per mounted superblock (the
 * order of these rows is the order unlisted.c scans them in).
 */
static const FsType fs_types[] = {
        /* local block filesystems */
        { .name = "ext4",
          .class = FS_CLASS_BLOCK,
          .flush_unless_journal = true,
          .clean_sync_flushes = true,
          .sysfs_lists = true,
          .magic = 0xEF53 },
        /* served by the ext4 driver (fs/ext4/<device> in sysfs): journaled, except when mounted
         * read-write with norecovery/noload over a clean journal */
        { .name = "ext3",
          .class = FS_CLASS_BLOCK,
          .flush_unless_journal = true,
          .clean_sync_flushes = true,
          .uncounted = true },
        { .name = "xfs",
          .class = FS_CLASS_BLOCK,
          .device_flush = true,
          .sysfs_lists = true,
          .magic = 0x58465342 },
        { .name = "f2fs",
          .class = FS_CLASS_BLOCK,
          .device_flush = true,
          .sysfs_lists = true,
          .magic = 0xF2F52010 },
        /* listed in sysfs fs/btrfs (unlisted.h), not counted */
        { .name = "btrfs", .class = FS_CLASS_BLOCK, .magic = 0x9123683E, .uncounted = true },
        /* read-only: nothing to write back, not counted */
        { .name = "squashfs", .class = FS_CLASS_BLOCK, .magic = 0x73717368, .uncounted = true },
        READ_ONLY("iso9660"),
        READ_ONLY("erofs"),
        READ_ONLY("cramfs"),
        READ_ONLY("romfs"),
        READ_ONLY("efs"),
        READ_ONLY("befs"),
        READ_ONLY("qnx4"),
        READ_ONLY("qnx6"),
        READ_ONLY("vxfs"),
        /* .module: no listing shows a hidden superblock of these types (unmounted lazily while a
         * file is held); counted by the references to their module instead (fs-module.h). Their
         * dirty inodes would be seen on their disk's bdi lists (evidence.h), but not on a disk
         * that also holds a known superblock, and a journal's running transaction not at all. */
        { .name = "vfat", .class = FS_CLASS_BLOCK, .device_flush = true, .magic = 0x4d44, .module = "vfat" },
        { .name = "exfat",
          .class = FS_CLASS_BLOCK,
          .device_flush = true,
          .magic = 0x2011BAB0,
          .module = "exfat" },
        COUNTED_FLUSH("msdos", "msdos"),
        FLUSH("fat"), /* no type of that name; kept for the table's users */
        COUNTED_FLUSH("hfs", "hfs"),
        COUNTED_FLUSH("hfsplus", "hfsplus"),
        COUNTED_FLUSH("minix", "minix"),
        /* Without a module of its own, served by ext4 (CONFIG_EXT4_USE_FOR_EXT2, listed in sysfs
         * fs/ext4: ext4_init_fs() registers "ext2" right before "ext4"), or fs/ext2 built in, which
         * registers after ext4 (fs/Makefile) and cannot be counted. */
        { .name = "ext2",
          .class = FS_CLASS_BLOCK,
          .device_flush = true,
          .module = "ext2",
          .served_before = "ext4" },
        COUNTED_FLUSH("udf", "udf"),
        COUNTED_FLUSH("ntfs3", "ntfs3"),
        /* the classic driver's (before Linux 6.9, and again where a new one replaces ntfs3's alias)
         * where a module "ntfs" is loaded; ntfs3's since 6.9, which registers it right before "ntfs3" */
        { .name = "ntfs",
          .class = FS_CLASS_BLOCK,
          .device_flush = true,
          .module = "ntfs",
          .served_before = "ntfs3" },
        /* jfs_sync_fs() sends no FLUSH, and its log writes carry no PREFLUSH or FUA */
        COUNTED_FLUSH("jfs", "jfs"),
        /* journaled or log-structured; otherwise as an unknown type */
        COUNTED("nilfs2", "nilfs2"),
        COUNTED("reiserfs", "reiserfs"),
        COUNTED("gfs2", "gfs2"),
        COUNTED("gfs2meta", "gfs2"),
        COUNTED("ocfs2", "ocfs2"),
        COUNTED("bcachefs", "bcachefs"),
        /* the sysv module registers both */
        COUNTED("sysv", "sysv"),
        COUNTED("v7", "sysv"),
        /* on MTD: their bdi is no device number, which debugfs's listing does not compare */
        COUNTED("ubifs", "ubifs"),
        COUNTED("jffs2", "jffs2"),

        /* network */
        { .name = "nfs", .class = FS_CLASS_NETWORK, .magic = 0x6969 },
        NETWORK("nfs4"),
        NETWORK("cifs"),
        NETWORK("smb3"),
        NETWORK("smbfs"),
        NETWORK("9p"),
        NETWORK("ceph"),
        NETWORK("glusterfs"),
        NETWORK("afs"),
        NETWORK("ncpfs"),
        NETWORK("ncp"),
        NETWORK("lustre"),
        NETWORK("coda"),
        NETWORK("orangefs"),
        NETWORK("davfs"),
        NETWORK("vboxsf"),
        NETWORK("virtiofs"),
        NETWORK_FUSE("fuse.sshfs"),
        NETWORK_FUSE("fuse.s3fs"),
        NETWORK_FUSE("fuse.rclone"),
        NETWORK_FUSE("fuse.glusterfs"),
        NETWORK_FUSE("fuse.ceph"),
        NETWORK_FUSE("fuse.ceph-fuse"),
        NETWORK_FUSE("fuse.cephfs"),
        NETWORK_FUSE("fuse.davfs2"),
        NETWORK_FUSE("fuse.curlftpfs"),
        NETWORK_FUSE("fuse.gcsfuse"),
        NETWORK_FUSE("fuse.goofys"),
        NETWORK_FUSE("fuse.juicefs"),
        NETWORK_FUSE("fuse.mfs"),
        NETWORK_FUSE("fuse.moosefs"),
        NETWORK_FUSE("fuse.lizardfs"),
        NETWORK_FUSE("fuse.seaweedfs"),
        NETWORK_FUSE("fuse.smbnetfs"),
        NETWORK_FUSE("fuse.gvfsd-fuse"),
        NETWORK_FUSE("fuse.afpfs"),
        NETWORK_FUSE("fuse.httpfs"),
        NETWORK_FUSE("fuse.blobfuse"),
        NETWORK_FUSE("fuse.blobfuse2"),
        NETWORK_FUSE("fuse.onedriver"),
        NETWORK_FUSE("fuse.beegfs"),
        NETWORK_FUSE("fuse.geesefs"),
        NETWORK_FUSE("fuse.s3backer"),

        /* FUSE */
        { .name = "fuse", .class = FS_CLASS_FUSE, .fuse = FS_FUSE_PLAIN, .magic = 0x65735546 },
        /* a bdi of its own ("MAJ:MIN-fuseblk" in debugfs, after its device): its dirty pages are on no
         * disk's lists, and the late pass checks every bdi no known superblock has (evidence.h); the
         * fuse module's refcnt also counts /dev/fuse users */
        { .name = "fuseblk",
          .class = FS_CLASS_FUSE,
          .fuse = FS_FUSE_BLK,
          .device_flush = true,
          .uncounted = true },
        { .name = "fuse.*", .class = FS_CLASS_FUSE, .fuse = FS_FUSE_PLAIN },
        { .name = "fuseblk.*", .class = FS_CLASS_FUSE, .fuse = FS_FUSE_BLK, .device_flush = true },

        /* pseudo */
        { .name = "tmpfs", .class = FS_CLASS_PSEUDO, .magic = 0x01021994 },
        { .name = "ramfs", .class = FS_CLASS_PSEUDO, .magic = 0x858458f6 },
        PSEUDO("proc"),
        PSEUDO("sysfs"),
        PSEUDO("devtmpfs"),
        PSEUDO("devpts"),
        PSEUDO("cgroup"),
        PSEUDO("cgroup2"),
        PSEUDO("debugfs"),
        PSEUDO("tracefs"),
        PSEUDO("securityfs"),
        PSEUDO("pstore"),
        PSEUDO("bpf"),
        PSEUDO("configfs"),
        PSEUDO("hugetlbfs"),
        PSEUDO("mqueue"),
        PSEUDO("autofs"),
        PSEUDO("binfmt_misc"),
        PSEUDO("efivarfs"),
        PSEUDO("fusectl"),
        PSEUDO("rpc_pipefs"),
        PSEUDO("nsfs"),
        PSEUDO("selinuxfs"),
        PSEUDO("smackfs"),
        PSEUDO("nfsd"),
        PSEUDO("rootfs"),
        PSEUDO("pipefs"),
        PSEUDO("sockfs"),
        PSEUDO("anon_inodefs"),
        PSEUDO("dmabuf"),
        PSEUDO("devfs"),
        PSEUDO("usbfs"),
        PSEUDO("xenfs"),
        PSEUDO("sunrpc"),
        PSEUDO("pidfs"),
        PSEUDO("secretmem"),

        /* overlay ("overlayfs": the old name) */
        { .name = "overlay", .class = FS_CLASS_OVERLAY },
        { .name = "overlayfs", .class = FS_CLASS_OVERLAY },
};

static const FsType fs_type_unknown = { .name = "", .class = FS_CLASS_BLOCK };

const FsType *fs_type_table(size_t *ret_n) {
        *ret_n = ELEMENTSOF(fs_types);
        return fs_types;
}

/* "fuse.*" matches every name that starts with "fuse.". */
static bool pattern_matches(const char *pattern, const char *fstype) {
        size_t n = strlen(pattern);

        return n >= 2 && streq(pattern + n - 2, ".*") && strncmp(fstype, pattern, n - 1) == 0;
}

const FsType *fs_type_lookup(const char *fstype) {
        if (isempty(fstype))
                return &fs_type_unknown;
        for (size_t i = 0; i < ELEMENTSOF(fs_types); i++)
                if (streq(fs_types[i].name, fstype))
                        return &fs_types[i];
        for (size_t i = 0; i < ELEMENTSOF(fs_types); i++)
                if (pattern_matches(fs_types[i].name, fstype))
                        return &fs_types[i];
        return &fs_type_unknown;
}

FsClass fs_class_from_fstype(const char *fstype) {
        return fs_type_lookup(fstype)->class;
}

bool fstype_is(const char *fstype, const char *type) {
        size_t len = strlen(type);

        return fstype && strncmp(fstype, type, len) == 0 && (fstype[len] == 0 || fstype[len] == '.');
}

bool fs_walk_may_wait(FsClass c, const char *fstype) {
        return c == FS_CLASS_FUSE || c == FS_CLASS_NETWORK || fstype_is(fstype, "autofs");
}

FsFlush fs_type_flush(const char *fstype, int journal, const char *fs_options) {
        const FsType *t = fs_type_lookup(fstype);
        _cleanup_free_ char *barrier = NULL;

        /* barrier=VALUE: only a value that turns barriers on is trusted ("1"; reiserfs's "flush");
         * "0", reiserfs's "none" and anything unknown mean no FLUSH from sync_fs. */
        if (options_has(fs_options, "nobarrier") ||
            (options_get(fs_options, "barrier", &barrier) != 0 &&
             (!barrier || !(streq(barrier, "1") || streq(barrier, "flush")))))
                return t->class == FS_CLASS_PSEUDO ? FS_FLUSH_NONE : FS_FLUSH_DEVICE;
        if (t->device_flush)
                return FS_FLUSH_DEVICE;
        if (t->flush_unless_journal && journal <= 0)
                return FS_FLUSH_DEVICE_OR_SYNCFS;
        return FS_FLUSH_NONE;
}

int fs_type_rt_flush_device(const char *fstype, const char *fs_options, char **ret) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (!fstype_is(fstype, "xfs"))
                return 0;
        r = options_get(fs_options, "rtdev", &path);
        if (r <= 0)
                return r;
        *ret = TAKE_PTR(path);
        return 1;
}

bool fs_type_clean_sync_flushes(const char *fstype, FsFlush flush) {
        return flush != FS_FLUSH_NONE || fs_type_lookup(fstype)->clean_sync_flushes;
}

FsFuse fs_type_fuse(const char *fstype) {
        return fs_type_lookup(fstype)->fuse;
}

FsCleanRule fs_type_clean_rule(const char *fstype) {
        return fs_type_lookup(fstype)->clean_rule;
}

const char *fs_type_from_magic(unsigned long magic) {
        if (magic == 0)
                return "unknown";
        for (size_t i = 0; i < ELEMENTSOF(fs_types); i++)
                if (fs_types[i].magic == magic)
                        return fs_types[i].name;
        return "unknown";
}
