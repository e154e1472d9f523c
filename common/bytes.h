/* SPDX-License-Identifier: Apache-2.0 */
/* Big-endian integers in SCSI CDBs, parameter lists and answers (SPC-5 3.5: most significant byte first). */
#ifndef VTL_COMMON_BYTES_H
#define VTL_COMMON_BYTES_H

#include <stdint.h>

/* Reads a big-endian integer of n bytes (n <= 8). */
static inline uint64_t be_get(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Writes v as n big-endian bytes. */
static inline void be_put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

#endif
