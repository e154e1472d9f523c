/* SPDX-License-Identifier: Apache-2.0 */
/* Arrays: their element count, and growing one an element at a time (doubling) for the lists the catalog,
 * the migrator and vtlctl build. */
#ifndef VTL_COMMON_GROW_H
#define VTL_COMMON_GROW_H

#include <stddef.h>

/* The number of elements of array a (an array, never a pointer). */
#define VTL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Grows *arr (of *cap elements of size elsz) to hold at least n + 1; VTL_E_NOMEM if it cannot (or would overflow). */
int vtl_grow(void **arr, size_t *cap, size_t n, size_t elsz);

/* Grows *arr (of *cap elements of size elsz) to hold at least need, doubling; VTL_E_NOMEM as vtl_grow. */
int vtl_grow_to(void **arr, size_t *cap, size_t need, size_t elsz);

#endif
