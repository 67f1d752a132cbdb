/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "wrap-readdir.h"

const char *wrap_readdir_fail_at;

struct dirent *__real_readdir64(DIR *d);
struct dirent *__wrap_readdir64(DIR *d);

struct dirent *__wrap_readdir64(DIR *d) {
        struct dirent *de = __real_readdir64(d);

        if (de && wrap_readdir_fail_at && strcmp(de->d_name, wrap_readdir_fail_at) == 0) {
                errno = EIO;
                return NULL;
        }
        return de;
}
