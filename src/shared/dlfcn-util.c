/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "dlfcn-util.h"

static char dl_error[512];

static int dl_fail(void *dl, const DlSymbol *syms, size_t n, const char **ret_error) {
        const char *e = dlerror();

        snprintf(dl_error, sizeof dl_error, "%s", e ?: "unknown error");
        for (size_t i = 0; i < n; i++)
                *syms[i].fn = NULL;
        if (dl)
                (void) dlclose(dl);
        if (ret_error)
                *ret_error = dl_error;
        return -ELIBACC;
}

int dlopen_many_sym(void **dlp, const char *filename, const DlSymbol *syms, size_t n,
                    const char **ret_error) {
        void *dl;

        if (*dlp)
                return 0;
        dl = dlopen(filename, RTLD_NOW | RTLD_LOCAL);
        if (!dl)
                return dl_fail(NULL, syms, n, ret_error);
        for (size_t i = 0; i < n; i++) {
                *syms[i].fn = (void (*)(void)) dlsym(dl, syms[i].name);
                if (!*syms[i].fn)
                        return dl_fail(dl, syms, n, ret_error);
        }
        *dlp = dl;
        return 0;
}
