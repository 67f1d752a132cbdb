/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * LD_PRELOAD for pass-robust.sh json: json-c's parsers, each reporting its call on stderr and ending the
 * process with exit status 99. The passes must parse no JSON (history.h: json-c before 0.18 crashes
 * when an allocation fails while it parses an object's key; review AS, AS-3).
 */

#include <string.h>
#include <unistd.h>

#define FORBIDDEN(name)                                                          \
        static const char msg_##name[] = "json-forbidden: " #name " called\n";   \
        void *name(void);                                                        \
        void *name(void) {                                                       \
                (void) !write(STDERR_FILENO, msg_##name, sizeof msg_##name - 1); \
                _exit(99);                                                       \
        }

FORBIDDEN(json_tokener_parse)
FORBIDDEN(json_tokener_parse_ex)
FORBIDDEN(json_tokener_parse_verbose)
FORBIDDEN(json_object_from_file)
FORBIDDEN(json_object_from_fd)
FORBIDDEN(json_object_from_fd_ex)
