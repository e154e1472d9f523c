/* SPDX-License-Identifier: Apache-2.0 */
#include "common/grow.h"

#include <stdint.h>
#include <stdlib.h>

#include "common/vtl_error.h"

#define GROW_FIRST 16 /* elements of a first allocation */

int vtl_grow_to(void **arr, size_t *cap, size_t need, size_t elsz)
{
	if (need <= *cap)
		return VTL_OK;
	if (!elsz)
		return VTL_E_INVAL;
	size_t nc = *cap ? *cap : GROW_FIRST;
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return VTL_E_NOMEM;
		nc *= 2;
	}
	if (nc > SIZE_MAX / elsz)
		return VTL_E_NOMEM;
	void *p = realloc(*arr, nc * elsz);
	if (!p)
		return VTL_E_NOMEM;
	*arr = p;
	*cap = nc;
	return VTL_OK;
}

int vtl_grow(void **arr, size_t *cap, size_t n, size_t elsz)
{
	if (n == SIZE_MAX)
		return VTL_E_NOMEM;
	return vtl_grow_to(arr, cap, n + 1, elsz);
}
