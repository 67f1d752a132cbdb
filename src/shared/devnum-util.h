/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Device numbers as text: "MAJ:MIN" in decimal, as the kernel writes them (mountinfo, sysfs
 * dev/block/, bdi names of anonymous superblocks) and as our own files and output do.
 */

#include <sys/types.h>

/* "4294967295:4294967295" and its NUL. */
#define DEVNUM_STR_MAX 22

/* Writes "MAJ:MIN" into buf and returns it. */
char *format_devnum(char buf[static DEVNUM_STR_MAX], dev_t d);
/* A buffer that lives until the end of the enclosing block: printf("%s", FORMAT_DEVNUM(d)). */
#define FORMAT_DEVNUM(d) format_devnum((char[DEVNUM_STR_MAX]) {}, (d))

/* Parses exactly "MAJ:MIN" (decimal digits only, at most 15 characters before the colon).
 * -EINVAL for anything else, -ERANGE when a number does not fit in a dev_t. */
int parse_devnum(const char *s, dev_t *ret);
