/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Handover: what one pass leaves for the next, in the state directory (tmpfs) file "handover".
 *
 *   stuck PID STARTTIME HUNG BOOTTIME BOOT_ID GROUP [PROGRESS]
 *                                             a worker abandoned in the kernel (D state) on the
 *                                             device group GROUP; STARTTIME is field 22 of
 *                                             /proc/PID/stat (so a reused pid is not taken for it),
 *                                             HUNG 1 when its device was proven stuck, BOOT_ID the
 *                                             boot it was abandoned in (a state directory that
 *                                             outlives a boot must not block a group for good);
 *                                             PROGRESS the device's completion counter then
 *                                             (progress.h), when it could be read: a later pass
 *                                             counts it hung only while it stands still
 *   unsynced MAJ:MIN BOOTTIME                 a superblock the unit's pass left unsynced (error,
 *                                             timeout without proof of a hang, not started)
 *   synced MAJ:MIN BOOTTIME [MOUNT]           a superblock the unit's pass synced, through the
 *                                             mount of that never reused id (listmount; none: not
 *                                             known): the late pass leans on its record only for
 *                                             mounts it left out that are listed (a mount made
 *                                             since the unit's pass is not: review G, G1), and with
 *                                             MOUNT only while that mount is one of the
 *                                             superblock's (a device number given to another
 *                                             filesystem since: review H, H3)
 *   unit BOOTTIME BOOT_ID TOKEN               the unit's pass ended with a complete view and wrote
 *                                             the "unsynced" and "synced" lines above;
 *                                             BOOT_ID (32 hex digits) is the boot it ran in, TOKEN
 *                                             (32 hex digits) the one it wrote to "unit-pass" as it
 *                                             started
 *
 * BOOTTIME is CLOCK_BOOTTIME (usec) when the line was written: it counts across the sleep itself.
 * Every pass reads the file, drops workers that have ended, never starts a worker on a group that
 * still has one stuck (the earlier worker may end any moment, a second one only piles up), and
 * writes it back with its own abandoned workers. The unit's pass replaces the "unsynced" lines with
 * its own; the late pass, the only one that may turn the kernel's own sync off, counts those it
 * did not sync itself as unsynced (the kernel sync is their only chance). The "unit" line is for one
 * late pass only, which drops it: without a fresh one of this boot, what the unit's pass synced or
 * left is not known (it did not run, did not finish, saw only part, or a later sleep of
 * suspend-then-hibernate), and the knob decision may not lean on it (kernel-knob.h
 * KnobFacts.unit_pass). restore-knob (after resume, or when the sleep did not happen) drops the
 * "unsynced" and "unit" lines.
 *
 * The file "unit-pass" holds the TOKEN of the unit's pass of this sleep: that pass writes a new
 * one first thing (random, or the daemon's), without the lock, and again under it; restore-knob
 * removes it at the end of the cycle, under the lock when it is free, and with the daemon's --token=
 * only when it holds that token (handover_unit_mark_end(): not the next sleep's, review I, I4). A
 * "unit" line vouches only with the same TOKEN there: a unit's pass that
 * could not take the lock (a manual run holds it), or ended before it wrote its line, leaves an
 * earlier sleep's line behind, and that line must not stand for this sleep (review, stop 26).
 *
 * Parsing is pure; unknown or malformed lines are skipped and counted (a damaged file costs at
 * most a second worker or a kernel sync left on, never a skipped sync).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/time-util.h"

#define HANDOVER_FILE "handover"
#define HANDOVER_UNIT_MARK_FILE "unit-pass"
/* The token of a daemon's pass whose mark stood for its sleep (so no ExecStopPost= records that
 * cycle): written after the mark, removed once the daemon's record-cycle for it has ended. A daemon
 * that finds it at its start, outside a sleep, owes that cycle its post steps (review BF, F5). */
#define HANDOVER_CYCLE_OWED_FILE "cycle-owed"
#define HANDOVER_FILE_MAX (256U * 1024U)
#define HANDOVER_ENTRIES_MAX 1024U
/* "unsynced" lines older than this are ignored: a sleep that never came. */
#define HANDOVER_UNSYNCED_MAX_AGE (10 * USEC_PER_MINUTE)

typedef struct StuckWorker {
        pid_t pid;
        uint64_t start_time; /* /proc/PID/stat field 22 (clock ticks since boot) */
        bool hung;           /* its device was proven stuck when it was abandoned */
        usec_t boottime;     /* when it was recorded */
        char boot_id[33];    /* of the boot it was recorded in */
        char *group;         /* device group (Superblock.group): printable, no blanks */
        uint64_t progress;   /* the device's completion counter when recorded, if progress_known */
        bool progress_known;
} StuckWorker;

typedef struct Handover {
        StuckWorker *stuck;
        size_t n_stuck;
        dev_t *unsynced;
        usec_t *unsynced_boottime;
        size_t n_unsynced;
        dev_t *synced;
        usec_t *synced_boottime;
        uint64_t *synced_mount; /* 0: not known */
        size_t n_synced;
        usec_t unit_pass;      /* the "unit" line: CLOCK_BOOTTIME; 0 when there is none */
        char unit_boot_id[33]; /* ... its boot id */
        char unit_token[33];   /* ... and its pass's token (HANDOVER_UNIT_MARK_FILE) */
        size_t n_bad;          /* lines skipped by the parser */
} Handover;

void handover_done(Handover *h);

/* Pure. Parses the file's text (NUL-terminated). Returns 0 or -ENOMEM; malformed lines are
 * counted in n_bad, entries beyond HANDOVER_ENTRIES_MAX dropped (and counted). */
int handover_parse(const char *text, Handover *ret);

/* Pure. The file's text for h; entries whose group is not a valid token are left out. Should it be
 * longer than HANDOVER_FILE_MAX (the reader's bound), the stuck workers' path keys
 * ("open:MAJ:MIN@ID,...") are written as their superblocks' ("open:MAJ:MIN"), which block more,
 * never less (review W, W4). */
int handover_format(const Handover *h, char **ret);

/* Appends one stuck worker / unsynced superblock (copies group). -ENOMEM, -E2BIG when full,
 * -EINVAL for a group that is empty or holds blanks or control characters, or a boot id that is not
 * 32 lowercase hex digits. */
int handover_add_stuck(Handover *h, pid_t pid, uint64_t start_time, bool hung, usec_t boottime,
                       const char *boot_id, const char *group);
int handover_add_unsynced(Handover *h, dev_t dev, usec_t boottime);
int handover_add_synced(Handover *h, dev_t dev, uint64_t mount_id, usec_t boottime);
/* Forgets what the unit's pass left: the "unsynced" and "synced" lines and the "unit" line. */
void handover_clear_unsynced(Handover *h);
void handover_clear_stuck(Handover *h);
/* The completion counter of stuck worker i's device as it is recorded (StuckWorker.progress). */
void handover_set_stuck_progress(Handover *h, size_t i, uint64_t progress);

/* The live stuck worker of group, or NULL. */
const StuckWorker *handover_find_stuck(const Handover *h, const char *group);
/* Whether the unit's pass saw dev: an "unsynced" line of it, or a "synced" one whose mount is not
 * known or is among mount_ids (the never reused ids of the superblock's mounts now, 0 for none
 * known), no older than HANDOVER_UNSYNCED_MAX_AGE at boottime now. */
bool handover_unit_saw(const Handover *h, dev_t dev, const uint64_t *mount_ids, size_t n_mount_ids,
                       usec_t now_boottime);
/* Whether dev has an "unsynced" line no older than HANDOVER_UNSYNCED_MAX_AGE at boottime now. */
bool handover_unsynced_fresh(const Handover *h, size_t i, usec_t now_boottime);
/* Sets the "unit" line (boot_id, token: 32 lowercase hex digits each, else -EINVAL). */
int handover_set_unit_pass(Handover *h, usec_t boottime, const char *boot_id, const char *token);
/* Whether there is a "unit" line of boot_id and token (the one in HANDOVER_UNIT_MARK_FILE now) no
 * older than HANDOVER_UNSYNCED_MAX_AGE at boottime now. */
bool handover_unit_pass_fresh(const Handover *h, usec_t now_boottime, const char *boot_id, const char *token);

/* Drops stuck workers that are gone: of another boot than boot_id (all of them when boot_id is not
 * known), no such pid, another process under that pid (start time), or a zombie
 * (proc_pid_start_time(), shared/proc-util.h). Returns the number dropped. */
size_t handover_prune(Handover *h, int proc_fd, const char *boot_id);

/* Loads state_dir_fd/HANDOVER_FILE (missing: empty). Returns 0 or negative errno (then *ret is
 * empty and usable). */
int handover_load(int state_dir_fd, Handover *ret);
/* Writes it atomically; an empty handover removes the file. */
int handover_save(int state_dir_fd, const Handover *h);

/* HANDOVER_UNIT_MARK_FILE. write: token (32 lowercase hex digits) atomically; on failure the file
 * is removed (an earlier token must not outlive a pass that could not write its own). read: the
 * token into ret (33 bytes), -ENOENT without one, -EBADMSG for anything but a token. remove: no
 * pass of this sleep stands; a missing file is not an error. Both write and remove take LATE_SKIP_FILE
 * (late-skip.h) with them: it stands only beside the mark of the same token; and both put
 * HOOK_LINK_FILE back (late-skip.h). remove tells in *ret_hook_was_down (may be NULL) whether the link
 * was missing beside LATE_SKIP_FILE: a unit's pass took it down, and systemd-sleep has run no hook of
 * ours since, post included. */
int handover_unit_mark_write(int state_dir_fd, const char *token);

/* Whether the link through which systemd-sleep reaches our hook (HOOK_LINK_FILE) points at it: a
 * late pass will run (a full /run may have kept handover_unit_mark_write() from putting it back). */
bool handover_hook_link_up(int state_dir_fd);
int handover_unit_mark_read(int state_dir_fd, char ret[static 33]);
int handover_unit_mark_remove(int state_dir_fd, bool *ret_hook_was_down);
/* HANDOVER_CYCLE_OWED_FILE: write (a token and the CLOCK_BOOTTIME after that sleep's unit pass began
 * and before the next one can, which record-cycle's --cycle-before-boottime= takes: review BG, F-4;
 * else -EINVAL), read (-ENOENT without one, -EBADMSG for anything but what is written) and remove (a
 * missing file is not an error). */
int handover_cycle_owed_write(int state_dir_fd, const char *token, usec_t before);
int handover_cycle_owed_read(int state_dir_fd, char ret[static 33], usec_t *ret_before);
int handover_cycle_owed_remove(int state_dir_fd);
/* The end of the cycle of the unit's pass that wrote token: handover_unit_mark_remove() unless
 * HANDOVER_UNIT_MARK_FILE holds another token, -ESTALE then (the next sleep's unit pass has begun:
 * its mark, marker and link stay as they are, *ret_hook_was_down false). A file that is no token is
 * removed (nothing leans on it). token NULL: handover_unit_mark_remove(). */
int handover_unit_mark_end(int state_dir_fd, const char *token, bool *ret_hook_was_down);
/* KeepCheapSync=: LATE_SKIP_FILE with the unit's pass's token, as the mark is written, then
 * HOOK_LINK_FILE removed; under the state lock. -ESTALE when HANDOVER_UNIT_MARK_FILE holds no token
 * or another one (a later unit's pass of this sleep wrote its own: it decides). When the link cannot
 * be removed the marker goes too, and the late pass runs. */
int handover_late_skip_write(int state_dir_fd, const char *token);
