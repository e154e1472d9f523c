/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a cartridge barcode may be. The pool names files after it, the
 * catalog keys cartridges by it and the control protocol carries it as one
 * word, so the rule lives below all three.
 */
#ifndef VTL_COMMON_BARCODE_H
#define VTL_COMMON_BARCODE_H

#include "common/vtl_error.h"

#define VTL_BARCODE_MAX 32 /* SMC primary volume tag field is 32 bytes */

/* Returns 0 if barcode is acceptable: 1..32 of ASCII 0x21..0x7E, no / or \\, not starting with "."; else VTL_E_INVAL. */
VTL_MUST_CHECK int vtl_barcode_check(const char *barcode);

#endif
