/* SPDX-License-Identifier: Apache-2.0 */
#include "common/grow.h"

#include <stdlib.h>

#include "common/vtl_error.h"

int vtl_grow(void **arr, size_t *cap, size_t n, size_t elsz)
{
	if (n < *cap)
		return VTL_OK;
	size_t nc = *cap ? *cap * 2 : 16;
	void *p = realloc(*arr, nc * elsz);
	if (!p)
		return VTL_E_NOMEM;
	*arr = p;
	*cap = nc;
	return VTL_OK;
}
