/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRC32C (Castagnoli, the iSCSI and ext4 checksum), using the CPU's crc32
 * instruction (SSE4.2) when present and a table-driven fallback otherwise.
 */
#ifndef VTL_COMMON_CRC32C_H
#define VTL_COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc over len bytes at buf; start with crc = 0. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

/* The table-driven computation alone, whatever the CPU (to check the fast one against). */
uint32_t crc32c_portable(uint32_t crc, const void *buf, size_t len);

/* Returns 1 when the hardware instruction is used, 0 for the table fallback. */
int crc32c_hw(void);

#endif
