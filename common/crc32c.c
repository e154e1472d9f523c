/* SPDX-License-Identifier: Apache-2.0 */
#include "common/crc32c.h"

#include <pthread.h>
#include <string.h>

#define CRC32C_POLY_REFLECTED 0x82F63B78u /* Castagnoli polynomial, bit-reversed */

static uint32_t crc_table[8][256];
static int use_hw;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* Slicing-by-8: eight table lookups per 8 bytes, for CPUs without the instruction. */
static uint32_t crc32c_sw(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= crc;
		crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
		      crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
		      crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
		      crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
/*
 * The crc32 instruction takes 3 cycles but can start one every cycle, so a
 * single dependent chain uses a third of it. Long runs are cut in three
 * lanes of CRC_LONG (then CRC_SHORT) bytes whose chains run side by side,
 * then joined: the register is linear over GF(2), so
 *   crc(c, A || B) = shift(crc(c, A), |B|) ^ crc(0, B),
 * where shift(x, n) is x run through n zero bytes, a 32x32 bit matrix kept
 * as four byte tables per lane length (the method of Intel's white paper
 * "Fast CRC Computation for iSCSI Polynomial Using CRC32 Instruction"; the
 * tables are built here from the bit-wise definition). The lane lengths:
 * long enough that the two joins (8 table look-ups) cost little against the
 * lane, short enough that a 64 KiB piece or a 4 KiB header run gets them.
 */
#define CRC_LANES 3
#define CRC_LONG 8192u
#define CRC_SHORT 256u

static uint32_t crc_shift_long[4][256];
static uint32_t crc_shift_short[4][256];

/* Fills t with the operator "run through n zero bytes", from its 32 basis vectors. */
static void shift_table(uint32_t t[4][256], size_t n)
{
	static const unsigned char zeros[CRC_LONG];
	uint32_t basis[32];
	for (unsigned j = 0; j < 32; j++)
		basis[j] = crc32c_sw(1u << j, zeros, n);
	for (unsigned k = 0; k < 4; k++)
		for (unsigned b = 0; b < 256; b++) {
			uint32_t v = 0;
			for (unsigned i = 0; i < 8; i++)
				if (b & (1u << i))
					v ^= basis[8 * k + i];
			t[k][b] = v;
		}
}

static uint32_t crc_shift(const uint32_t t[4][256], uint32_t c)
{
	return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

static uint64_t load64(const unsigned char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

/* Three lanes of lane bytes each (a multiple of 8) from p, joined into the register c. */
__attribute__((target("sse4.2"))) static uint64_t crc32c_hw_lanes(uint64_t c, const unsigned char *p,
								   size_t lane, const uint32_t t[4][256])
{
	uint64_t c1 = 0, c2 = 0;
	for (const unsigned char *end = p + lane; p < end; p += 8) {
		c = __builtin_ia32_crc32di(c, load64(p));
		c1 = __builtin_ia32_crc32di(c1, load64(p + lane));
		c2 = __builtin_ia32_crc32di(c2, load64(p + 2 * lane));
	}
	c = crc_shift(t, (uint32_t)c) ^ (uint32_t)c1;
	return crc_shift(t, (uint32_t)c) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw_run(uint32_t crc, const unsigned char *p,
								 size_t len)
{
	uint64_t c = crc;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	for (; len >= CRC_LANES * CRC_LONG; p += CRC_LANES * CRC_LONG, len -= CRC_LANES * CRC_LONG)
		c = crc32c_hw_lanes(c, p, CRC_LONG, crc_shift_long);
	for (; len >= CRC_LANES * CRC_SHORT; p += CRC_LANES * CRC_SHORT, len -= CRC_LANES * CRC_SHORT)
		c = crc32c_hw_lanes(c, p, CRC_SHORT, crc_shift_short);
	for (; len >= 8; p += 8, len -= 8)
		c = __builtin_ia32_crc32di(c, load64(p));
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

static void crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY_REFLECTED & (0u - (c & 1u)));
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
#if defined(__x86_64__)
	__builtin_cpu_init();
	use_hw = __builtin_cpu_supports("sse4.2");
	if (use_hw) {
		shift_table(crc_shift_long, CRC_LONG);
		shift_table(crc_shift_short, CRC_SHORT);
	}
#endif
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc32c_init);
	crc = ~crc;
#if defined(__x86_64__)
	if (use_hw)
		return ~crc32c_hw_run(crc, buf, len);
#endif
	return ~crc32c_sw(crc, buf, len);
}

int crc32c_hw(void)
{
	pthread_once(&crc_once, crc32c_init);
	return use_hw != 0;
}

uint32_t crc32c_portable(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc32c_init);
	return ~crc32c_sw(~crc, buf, len);
}
