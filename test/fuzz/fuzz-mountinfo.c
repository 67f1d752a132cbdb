/* SPDX-License-Identifier: GPL-2.0-or-later */

/* Fuzzes mount_table_parse() (mountinfo text via libmount), then walks every entry. */

#include "fuzz.h"
#include "mount-table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(mount_table_freep) MountTable *t = NULL;
        unsigned n_bad = 0;
        size_t total = 0;

        if (mount_table_parse((const char *) data, size, &t, &n_bad) < 0)
                return 0;
        FUZZ_ASSERT(t);
        FUZZ_ASSERT(t->n_entries <= MOUNT_TABLE_MAX_ENTRIES);
        FUZZ_ASSERT(t->n_entries == 0 || t->entries);
        for (size_t i = 0; i < t->n_entries; i++) {
                const MountEntry *e = t->entries + i;

                /* Touch every string so ASan sees any dangling or unterminated one. */
                total += e->root ? strlen(e->root) : 0;
                total += e->mount_point ? strlen(e->mount_point) : 0;
                total += e->fstype ? strlen(e->fstype) : 0;
                total += e->source ? strlen(e->source) : 0;
                total += e->vfs_options ? strlen(e->vfs_options) : 0;
                total += e->fs_options ? strlen(e->fs_options) : 0;
        }
        /* Unescaping only shrinks: no entry can produce more text than the input held. */
        FUZZ_ASSERT(total <= size);
        return 0;
}
