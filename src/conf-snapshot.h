/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The configuration the unit's pass read, handed to the late pass of the same sleep. The late pass
 * runs on the sleep path, after systemd-sleep froze user.slice and ran the hooks: reading the
 * configuration in a bounded child (conf-read.h) costs it a fork and a round trip (1-5 ms, more on
 * a slow machine) for the files the unit's pass read moments before. So the unit's pass leaves what
 * its child sent — the conf-read stream: the sources, then the other system-sleep hooks and their
 * end — in the state directory, under the token it wrote to "unit-pass" (handover.h) and the
 * --root= and --config= it read them with. A late pass parses that instead of starting a child only
 * when its state directory is on tmpfs (nothing there hangs), the handover holds a fresh "unit"
 * line of this sleep naming the token "unit-pass" holds now (the same sleep: a sleep called off
 * leaves a token the next unit's pass replaces), and root and config are the same; anything else —
 * no file, another token or arguments, a file that does not parse whole — reads as before.
 * The unit's pass lists the hooks for it within the reader's bound, after the configuration: a
 * system-sleep directory on a hung mount whose suspend-sync.conf.d (in the same /etc, /run,
 * /usr/local/lib, /usr/lib trees) answered would cost it that bound, as it costs the late pass.
 *
 * File CONF_SNAPSHOT_FILE: one line "suspend-sync config-snapshot v1 TOKEN ROOT CONFIG\n" (TOKEN 32
 * hex digits; ROOT and CONFIG the paths in hex, CONFIG "-" for none), then the stream, whole.
 */

#include <stddef.h>

#include "conf-read.h"

#define CONF_SNAPSHOT_FILE "config-snapshot"

/* The file's bytes (pure). -EINVAL for a token that is not 32 hex digits, -ENOMEM. */
int conf_snapshot_format(const char *token, const char *root, const char *config_path, const char *stream,
                         size_t size, char **ret, size_t *ret_size);

/* Parses the file's bytes (pure) into *ret (sources and hooks; whatever it held is freed).
 * -ESTALE when it is another token's, root's or configuration's; -EBADMSG when it is malformed or
 * its stream is not whole (sources and the end of the hooks); -ENOMEM. */
int conf_snapshot_parse(const char *buf, size_t size, const char *token, const char *root,
                        const char *config_path, ConfStream *ret);

/* Writes it atomically below dir_fd; on failure removes any older one. */
int conf_snapshot_save(int dir_fd, const char *token, const char *root, const char *config_path,
                       const char *stream, size_t size);

/* Reads and parses it (conf_snapshot_parse()); -ENOENT when there is none. */
int conf_snapshot_load(int dir_fd, const char *token, const char *root, const char *config_path,
                       ConfStream *ret);

/* Removes it (restore-knob: the sleep is over). 0 also when there is none. */
int conf_snapshot_remove(int dir_fd);
