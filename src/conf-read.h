/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Bounded configuration read: the configuration files (main file and drop-in directories in /etc,
 * /run, /usr/local/lib, /usr/lib) are listed and read by a forked child that sends their names and
 * texts back on a pipe; the parent parses them (policy_build()). Any of those directories may sit on
 * a hung NFS or FUSE mount, where open() and stat() do not return: a child that does not answer in
 * time is killed and abandoned (never waited for), and the caller carries on with the defaults.
 *
 * For the late pass the child also lists the other system-sleep hooks (sleep-hooks.h), whose
 * directories may be on such a mount too.
 *
 * Every reader also looks at our own system-sleep entry (sleep_hook_ours()), for the unit's pass:
 * a masked one runs no late pass.
 *
 * The pipe carries records: 'P' <u32 len> <path> before each path the child looks at (so a timeout
 * can name where it got stuck), one 'S' <u32 len> <sources> with everything read, one 'O' <u32 len>
 * <'1' ours | '0' not, then the other entry's path, if any | 'e' not known>, then (hooks asked)
 * 'H' <u32 len> <path> for each other hook (or a hook directory that could not be read: it may hold
 * one) and 'E' <u32 0>, the end of the hooks. A child that fails says why last: 'X' <u32 4> <i32
 * errno>. The configuration comes first: a hook directory that hangs costs the hooks only. Integers
 * are host-endian (same machine, same binary).
 */

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define CONF_READ_TIMEOUT (1U * USEC_PER_SEC) /* the bound used by the verbs */
#define CONF_STREAM_MAX (8U * 1024U * 1024U)  /* bytes the parent accepts from the child */

/* Serializes sources as the payload of an 'S' record (pure). */
int conf_sources_serialize(const PolicySources *s, char **ret, size_t *ret_size);
/* Parses an 'S' payload (pure). -EBADMSG on anything malformed. */
int conf_sources_parse(const char *buf, size_t size, PolicySources **ret);

/* What the records in a buffer say so far. */
typedef struct ConfStream {
        char *progress;         /* the last complete 'P' path, NULL: none */
        PolicySources *sources; /* the 'S' record, NULL: not complete yet */
        char **hooks;           /* the 'H' paths so far, NULL: none */
        size_t n_hooks;
        bool hooks_done;  /* 'E' arrived: hooks is the whole list */
        int hook_ours;    /* 'O': sleep_hook_ours()'s answer, -EIO when the child could not tell;
                          * -ENODATA until it arrived */
        char *hook_other; /* ... and the entry that is not ours, NULL: none */
        int error;        /* 'X': the child failed, with this negative errno; 0: it did not say */
} ConfStream;

void conf_stream_done(ConfStream *s);

/* Whether the stream has what the reader waits for (pure): the sources, our entry's 'O' when
 * want_ours, the end of the hooks when want_hooks. */
bool conf_stream_complete(const ConfStream *s, bool want_hooks, bool want_ours);

/* Walks the records in buf (pure) into *ret (whatever it held is freed). -EBADMSG on an unknown
 * record, one out of order ('S' or 'O' twice, 'O', 'H' or 'E' before 'S', 'H' or 'E' before 'O') or
 * a malformed 'S', 'O' or 'X'. */
int conf_stream_parse(const char *buf, size_t size, ConfStream *ret);

/*
 * Reads the configuration (see policy_read_sources()) in a child, waiting at most 'timeout'.
 * Returns 0 and the sources; -ETIMEDOUT when the child did not finish in time (it is killed with
 * SIGKILL and abandoned; *ret_stuck_at names the last path it was looking at, or is NULL); another
 * negative errno when the child could not be started or failed.
 * With ret_hooks (and ret_hooks_error), the child then lists the other system-sleep hooks, within the
 * same bound: *ret_hooks (NULL when there are none) and *ret_hooks_error 0, or *ret_hooks_error
 * negative when they are not known (the sources may still be).
 */
int conf_read_bounded(int root_fd, const char *config_path, usec_t timeout, PolicySources **ret,
                      char ***ret_hooks, int *ret_hooks_error, char **ret_stuck_at);

/*
 * conf_read_bounded() in two steps, so that the caller works while the child reads: start forks the
 * child (the bound counts from here; want_hooks as ret_hooks above); finish waits for its answer at
 * most until the bound and returns what conf_read_bounded() would, with the same outputs (ret_hooks
 * given exactly when want_hooks was). Finish is called at most once; conf_reader_free() kills and
 * abandons a child not finished.
 */
typedef struct ConfReader ConfReader;

int conf_read_start(int root_fd, const char *config_path, usec_t timeout, bool want_hooks, ConfReader **ret);
int conf_read_finish(ConfReader *x, PolicySources **ret, char ***ret_hooks, int *ret_hooks_error,
                     char **ret_stuck_at);
/* Before conf_read_finish(): wait for our system-sleep entry's 'O' too (the unit's pass, for
 * DeferCommit=). Without it the reader is done with the sources (and hooks), and a hung system-sleep
 * directory costs no other reader the bound (review M, M2). */
void conf_reader_want_hook_ours(ConfReader *x);
/* After conf_read_finish(): our system-sleep entry as sleep_hook_ours() tells (*ret_other the entry
 * that is not ours, NULL for none; may be NULL), or -ENODATA when the child did not tell in time, or
 * -EIO when it could not. */
int conf_read_hook_ours(ConfReader *x, char **ret_other);
/*
 * The child forked ahead (the daemon's standby pass, before its sleep): prepare forks it, go lets it
 * read, its bound counted from the go, and finish as after start. The child waits named idle_name
 * (when not NULL). conf_reader_prepared_for() tells whether x is one not yet gone for config_path and
 * want_hooks; go returns a negative errno when the child is gone meanwhile (the caller starts
 * another, and frees this one).
 */
int conf_read_prepare(int root_fd, const char *config_path, bool want_hooks, const char *idle_name,
                      ConfReader **ret);
bool conf_reader_prepared_for(const ConfReader *x, const char *config_path, bool want_hooks);
int conf_read_go(ConfReader *x, usec_t timeout);
/* For a caller that waits on an event loop (the daemon's reads after a sleep and on SIGHUP): the
 * child's pipe (watched edge-triggered) and bound, and what the pipe holds read without waiting
 * (bounded_child_step(): 1 complete, 0 the child gone, -EAGAIN more to come); conf_read_finish()
 * once it says anything but -EAGAIN, or at the bound. */
int conf_reader_fd(const ConfReader *x);
usec_t conf_reader_until(const ConfReader *x);
int conf_read_step(ConfReader *x);
ConfReader *conf_reader_free(ConfReader *x);
DEFINE_TRIVIAL_CLEANUP_FUNC(ConfReader *, conf_reader_free);
