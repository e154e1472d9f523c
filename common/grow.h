/* SPDX-License-Identifier: Apache-2.0 */
/* Growing an array one element at a time (doubling), for the lists the catalog and the migrator build. */
#ifndef VTL_COMMON_GROW_H
#define VTL_COMMON_GROW_H

#include <stddef.h>

/* Grows *arr (of *cap elements of size elsz) to hold at least n + 1; VTL_E_NOMEM if it cannot. */
int vtl_grow(void **arr, size_t *cap, size_t n, size_t elsz);

#endif
