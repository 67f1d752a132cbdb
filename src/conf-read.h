/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Bounded configuration read: the configuration files (main file and drop-in directories in /etc,
 * /run, /usr/local/lib, /usr/lib) are listed and read by a forked child that sends their names and
 * texts back on a pipe; the parent parses them (policy_build()). Any of those directories may sit on
 * a hung NFS or FUSE mount, where open() and stat() do not return: a child that does not answer in
 * time is killed and abandoned (never waited for), and the caller carries on with the defaults.
 *
 * The pipe carries records: 'P' <u32 len> <path> before each path the child looks at (so a timeout
 * can name where it got stuck), then one 'S' <u32 len> <sources> with everything read. Integers are
 * host-endian (same machine, same binary).
 */

#include "policy.h"
#include "shared/time-util.h"

#define CONF_READ_TIMEOUT (1U * USEC_PER_SEC) /* the bound used by the verbs */
#define CONF_STREAM_MAX (8U * 1024U * 1024U)  /* bytes the parent accepts from the child */

/* Serializes sources as the payload of an 'S' record (pure). */
int conf_sources_serialize(const PolicySources *s, char **ret, size_t *ret_size);
/* Parses an 'S' payload (pure). -EBADMSG on anything malformed. */
int conf_sources_parse(const char *buf, size_t size, PolicySources **ret);

/* Walks the records in buf (pure): *ret_progress points to the last complete 'P' path (copied, may be
 * NULL), *ret_sources gets the parsed 'S' record, or NULL if it is not complete yet. -EBADMSG on an
 * unknown record or a malformed 'S'. */
int conf_stream_parse(const char *buf, size_t size, char **ret_progress, PolicySources **ret_sources);

/*
 * Reads the configuration (see policy_read_sources()) in a child, waiting at most 'timeout'.
 * Returns 0 and the sources; -ETIMEDOUT when the child did not finish in time (it is killed with
 * SIGKILL and abandoned; *ret_stuck_at names the last path it was looking at, or is NULL); another
 * negative errno when the child could not be started or failed.
 */
int conf_read_bounded(int root_fd, const char *config_path, usec_t timeout, PolicySources **ret,
                      char **ret_stuck_at);
