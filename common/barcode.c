/* SPDX-License-Identifier: Apache-2.0 */
#include "common/barcode.h"

#include <string.h>

int vtl_barcode_check(const char *barcode)
{
	if (!barcode)
		return VTL_E_INVAL;
	size_t n = strnlen(barcode, VTL_BARCODE_MAX + 1);
	/* A leading dot would hide the pool's files; / and \ would reach outside its folders. */
	if (n == 0 || n > VTL_BARCODE_MAX || barcode[0] == '.')
		return VTL_E_INVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)barcode[i];
		if (ch <= ' ' || ch > '~' || ch == '/' || ch == '\\')
			return VTL_E_INVAL;
	}
	return VTL_OK;
}
