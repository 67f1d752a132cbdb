/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The bounds of the configuration as last read in full (review U, U4): DeadlineSec= and
 * MountTimeoutSec= of the [Sync] section, in the state directory (tmpfs) file CONF_BOUNDS_FILE,
 * key=value lines, written atomically by every pass but the late one (the daemon's, the unit's, a
 * manual run: the late pass's exit is on the sleep path, and the unit's or the daemon's pass of the
 * same sleep read the same files) and by the daemon's own reads that read the configuration in full:
 *
 *   BOOT_ID=0123...cdef          the boot it was read in (32 lowercase hex digits)
 *   REALTIME_USEC=N              when (CLOCK_REALTIME), for the message
 *   ROOT=/                       what was read: --root= ...
 *   CONFIG=                      ... and --config= (empty: the default locations)
 *   DEADLINE_USEC=N              DeadlineSec= as read (not the command line's --deadline=)
 *   MOUNT_TIMEOUT_USEC=N         MountTimeoutSec= as read
 *
 * A configuration not read in full (its reader timed out or failed, or a file of it was not read)
 * gets the defaults, 30 s and 10 s, where its files set nothing that was read: an admin's
 * DeadlineSec=5s would become 30 s exactly when devices are dead (a hung NFS drop-in directory). A
 * pass then caps those defaults by this record (conf_bounds_cap()): never raises them. A record of
 * another boot (a state directory that is not /run outlives one; /run cannot), of another root or
 * --config=, or that does not parse is ignored: the defaults apply, as without it.
 *
 * Parsing, formatting, matching and the cap are pure.
 */

#include <stdbool.h>

#include "policy.h"
#include "shared/time-util.h"

#define CONF_BOUNDS_FILE "conf-bounds"
#define CONF_BOUNDS_FILE_MAX 8192U
/* The origin of a value the cap lowered (cat-config's "# from" comment, Policy.o_deadline). */
#define CONF_BOUNDS_ORIGIN "the last full read (" CONF_BOUNDS_FILE ")"

typedef struct ConfBounds {
        usec_t deadline;      /* DeadlineSec=; 0: none known (no record) */
        usec_t mount_timeout; /* MountTimeoutSec= */
        usec_t realtime;      /* when it was read, CLOCK_REALTIME */
} ConfBounds;

typedef struct ConfBoundsRecord {
        ConfBounds bounds;
        char boot_id[33];
        char *root;   /* --root= */
        char *config; /* --config=, "" for the default locations */
} ConfBoundsRecord;

void conf_bounds_record_done(ConfBoundsRecord *r);

/* Pure. The file's text for r. -EINVAL for a boot id that is not 32 lowercase hex digits, a root
 * that is empty, a root or config that holds a newline or is longer than PATH_MAX, or a bound that is
 * 0 or above 24 h (what the configuration accepts); -ENOMEM. */
int conf_bounds_format(const ConfBoundsRecord *r, char **ret);

/* Pure. The file's text (NUL-terminated) into *ret: every key once, the numbers decimal and in range
 * (as conf_bounds_format() takes them), unknown keys ignored. -EBADMSG for anything else, -ENOMEM.
 * *ret is written only on success. */
int conf_bounds_parse(const char *text, ConfBoundsRecord *ret);

/* Pure. Whether r stands for the configuration a pass with root and config (NULL: the default
 * locations) reads in the boot boot_id (NULL or invalid: not known, nothing matches). */
bool conf_bounds_match(const ConfBoundsRecord *r, const char *boot_id, const char *root, const char *config);

/* Pure. The values of p (a configuration not read in full, or its effective copy) that stand at their
 * built-in defaults (origin: none) lowered to b's, the origin of each lowered one set to
 * CONF_BOUNDS_ORIGIN; never raised. b NULL or without a record (deadline 0): nothing. Returns a mask
 * of CONF_BOUNDS_CAPPED_* of what was lowered. */
#define CONF_BOUNDS_CAPPED_DEADLINE (1U << 0)
#define CONF_BOUNDS_CAPPED_MOUNT_TIMEOUT (1U << 1)
unsigned conf_bounds_cap(const ConfBounds *b, Policy *p);

/* Writes state_dir/CONF_BOUNDS_FILE for p (its DeadlineSec= and MountTimeoutSec=), read now in full
 * from root and config, atomically. A missing state_dir is not made (-ENOENT). Never fsyncs.
 * Returns 0 or negative errno (-ENODATA: this boot's id cannot be read). */
int conf_bounds_save(const char *state_dir, const char *root, const char *config, const Policy *p);

/* The bounds in state_dir/CONF_BOUNDS_FILE when they stand for root and config in this boot
 * (conf_bounds_match()). Never blocks on the file (a regular file, opened O_NONBLOCK). -ENOENT
 * without one, -EBADMSG when it does not parse, -ESTALE when it is of another boot, root or config
 * (or this boot's id cannot be read), or another negative errno. *ret is written only on success. */
int conf_bounds_load(const char *state_dir, const char *root, const char *config, ConfBounds *ret);
