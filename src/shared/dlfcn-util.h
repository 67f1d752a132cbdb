/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Optional libraries loaded on first use (systemd's dlopen_many_sym_or_warn() in small, without the
 * logging): a library needed on one path only is not mapped, relocated and initialised by every
 * start of the process. Never includes domain headers.
 */

#include <stddef.h>

typedef struct DlSymbol {
        void (**fn)(void); /* where the address goes */
        const char *name;
} DlSymbol;

/* A row for the variable sym_<name> (declared as "static typeof(name) *sym_<name>;"). */
/* clang-format 14 and 19 lay out a macro whose body is a braced initializer differently. */
/* clang-format off */
#define DL_SYMBOL(name) \
        { (void (**)(void)) & sym_##name, #name }
/* clang-format on */

/* Opens filename (RTLD_NOW) unless *dlp already holds its handle, and resolves every symbol. All or
 * nothing: on failure the handle is closed, every pointer reset to NULL, and -ELIBACC returned with
 * dlerror()'s text in *ret_error (may be NULL; a static buffer, valid until the next failure). */
int dlopen_many_sym(void **dlp, const char *filename, const DlSymbol *syms, size_t n, const char **ret_error);
