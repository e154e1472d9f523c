/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logical block protection (SSC-4 4.2.22; the Control Data Protection mode
 * page 0Ah/F0h, SSC-4 8.3.9), as IBM and HP LTO drives offer it: with LBP_W
 * every block a WRITE sends carries 4 bytes of protection information after
 * its data, which the drive checks before anything reaches the medium; with
 * LBP_R every block a READ returns carries them.
 *
 * The protection information is one of two CRCs of the block's data:
 * CRC32C (Castagnoli, method 02h), sent least significant byte first as
 * iSCSI sends its digests; or the Reed-Solomon CRC of ECMA-319 (method
 * 01h), a 4-symbol Reed-Solomon remainder over GF(2^8), sent most
 * significant byte first. The CRC32C is the one kept end to end: the
 * record of every block holds the CRC32C of the host's uncompressed block
 * (docs/format.md, "block CRC"), checked here at the host's edge on write
 * and returned as it was stored on read. The Reed-Solomon CRC is computed
 * from the data both ways.
 */
#include "vtl/drive/ssc_internal.h"

#include <pthread.h>
#include <string.h>

#include "common/crc32c.h"
#include "vtl/scsi/spc_mode.h"

/* Control Data Protection mode page (SSC-4 table 143): sub_page format, 32 bytes. */
#define LBP_METHOD 4         /* LOGICAL BLOCK PROTECTION METHOD */
#define LBP_LEN_BYTE 5       /* bits 5..0: LOGICAL BLOCK PROTECTION INFORMATION LENGTH */
#define LBP_LEN_MASK 0x3F
#define LBP_LEN_BIT 5
#define LBP_FLAGS 6
#define LBP_FLAG_W 0x80      /* LBP_W: protection information on WRITE */
#define LBP_FLAG_R 0x40      /* LBP_R: protection information on READ */
#define LBP_FLAG_RBDP 0x20   /* RBDP: on RECOVER BUFFERED DATA, which this drive does not offer */
#define LBP_FLAGS_BIT 7

const uint8_t ssc_lbp_page_mask[SSC_LBP_PAGE_LEN] = {
	[LBP_METHOD] = 0xFF, [LBP_LEN_BYTE] = LBP_LEN_MASK, [LBP_FLAGS] = LBP_FLAG_W | LBP_FLAG_R,
};

void ssc_lbp_page_render(const struct ssc_mode *m, uint8_t *p)
{
	p[LBP_METHOD] = m->lbp_method;
	p[LBP_LEN_BYTE] = m->lbp_method == LBP_METHOD_NONE ? 0 : SSC_LBP_PI_LEN;
	p[LBP_FLAGS] = (uint8_t)((m->lbp_w ? LBP_FLAG_W : 0) | (m->lbp_r ? LBP_FLAG_R : 0));
}

bool ssc_lbp_page_check(const uint8_t *p, uint16_t *byte, int *bit)
{
	uint8_t method = p[LBP_METHOD], len = p[LBP_LEN_BYTE] & LBP_LEN_MASK;
	if (method != LBP_METHOD_NONE && method != LBP_METHOD_RS_CRC && method != LBP_METHOD_CRC32C) {
		*byte = LBP_METHOD;
		*bit = SPC_MODE_FIELD_BIT;
		return false;
	}
	/* Each method has one length: 4 bytes; none has none (SSC-4 table 144). */
	if (len != (method == LBP_METHOD_NONE ? 0 : SSC_LBP_PI_LEN)) {
		*byte = LBP_LEN_BYTE;
		*bit = LBP_LEN_BIT;
		return false;
	}
	/* Protection on READ or WRITE needs a method to protect with. */
	if (method == LBP_METHOD_NONE && (p[LBP_FLAGS] & (LBP_FLAG_W | LBP_FLAG_R))) {
		*byte = LBP_FLAGS;
		*bit = top_bit(p[LBP_FLAGS] & (LBP_FLAG_W | LBP_FLAG_R));
		return false;
	}
	return true;
}

void ssc_lbp_page_apply(struct ssc_mode *m, const uint8_t *p)
{
	m->lbp_method = p[LBP_METHOD];
	m->lbp_w = p[LBP_FLAGS] & LBP_FLAG_W;
	m->lbp_r = p[LBP_FLAGS] & LBP_FLAG_R;
}

uint32_t ssc_lbp_pi_len(const struct ssc_drive *d, bool write)
{
	if (d->mode.lbp_method == LBP_METHOD_NONE)
		return 0;
	return (write ? d->mode.lbp_w : d->mode.lbp_r) ? SSC_LBP_PI_LEN : 0;
}

/* ---------------------------------------------------------- Reed-Solomon CRC */

/*
 * ECMA-319's CRC: the data bytes, most significant symbol first, divided by
 * the generator x^4 + 38h x^3 + CFh x^2 + 38h x + 01h over GF(2^8) built on
 * x^8 + x^4 + x^3 + x^2 + 1 (11Dh); the 4-byte remainder is the CRC. One
 * table entry per byte value holds that value times the generator's four
 * low coefficients, so a byte costs a shift, a lookup and an exclusive or.
 */
#define GF_POLY 0x11D
static const uint8_t rs_gen[4] = {0x38, 0xCF, 0x38, 0x01}; /* x^3, x^2, x, 1 */
static uint32_t rs_table[256];
static pthread_once_t rs_once = PTHREAD_ONCE_INIT;

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
	unsigned r = 0, x = a;
	for (; b; b >>= 1) {
		if (b & 1)
			r ^= x;
		x <<= 1;
		if (x & 0x100)
			x ^= GF_POLY;
	}
	return (uint8_t)r;
}

static void rs_table_build(void)
{
	for (unsigned t = 0; t < 256; t++) {
		uint32_t e = 0;
		for (int k = 0; k < 4; k++)
			e = (e << 8) | gf_mul((uint8_t)t, rs_gen[k]);
		rs_table[t] = e;
	}
}

uint32_t ssc_rs_crc(const void *buf, size_t len)
{
	pthread_once(&rs_once, rs_table_build);
	const uint8_t *p = buf;
	uint32_t reg = 0;
	for (size_t i = 0; i < len; i++)
		reg = (reg << 8) ^ rs_table[(p[i] ^ (reg >> 24)) & 0xFF];
	return reg;
}

/* ------------------------------------------------------------------ data */

/* The 4 bytes of protection information for crc: Reed-Solomon most significant byte first, CRC32C least. */
static void pi_encode(const struct ssc_drive *d, uint32_t crc, uint8_t out[SSC_LBP_PI_LEN])
{
	bool rs = d->mode.lbp_method == LBP_METHOD_RS_CRC;
	for (int i = 0; i < SSC_LBP_PI_LEN; i++)
		out[rs ? SSC_LBP_PI_LEN - 1 - i : i] = (uint8_t)(crc >> (8 * i));
}

static uint32_t pi_decode(const struct ssc_drive *d, const uint8_t *in)
{
	bool rs = d->mode.lbp_method == LBP_METHOD_RS_CRC;
	uint32_t v = 0;
	for (int i = 0; i < SSC_LBP_PI_LEN; i++)
		v |= (uint32_t)in[rs ? SSC_LBP_PI_LEN - 1 - i : i] << (8 * i);
	return v;
}

bool ssc_lbp_check(const struct ssc_drive *d, const uint8_t *block, size_t len)
{
	if (len <= SSC_LBP_PI_LEN)
		return false;
	size_t n = len - SSC_LBP_PI_LEN;
	uint32_t want = pi_decode(d, block + n);
	uint32_t got = d->mode.lbp_method == LBP_METHOD_RS_CRC ? ssc_rs_crc(block, n) : crc32c(0, block, n);
	return got == want;
}

int ssc_lbp_write_block(struct ssc_drive *d, const uint8_t *block, size_t len)
{
	size_t n = len - SSC_LBP_PI_LEN;
	/* A CRC32C the check just matched is the block CRC the record keeps: not computed again. */
	if (d->mode.lbp_method == LBP_METHOD_CRC32C)
		return vtl_cart_write_block_crc(d->cart, block, n, pi_decode(d, block + n));
	return vtl_cart_write_block(d->cart, block, n);
}

void ssc_lbp_append(const struct ssc_drive *d, uint8_t *p, size_t fit, struct vtl_read_result *r)
{
	size_t n = r->length;
	if (n < fit) {
		/* The whole block is in p: its protection information follows as far as the buffer goes. */
		uint32_t crc;
		if (d->mode.lbp_method == LBP_METHOD_RS_CRC)
			crc = ssc_rs_crc(p, n);
		else
			crc = r->has_block_crc ? r->block_crc : crc32c(0, p, n);
		uint8_t pi[SSC_LBP_PI_LEN];
		pi_encode(d, crc, pi);
		size_t k = fit - n < SSC_LBP_PI_LEN ? fit - n : SSC_LBP_PI_LEN;
		memcpy(p + n, pi, k);
		r->copied = (uint32_t)(n + k);
	}
	r->length += SSC_LBP_PI_LEN;
}

struct scsi_sense ssc_lbp_guard_failed(void)
{
	return sense_of(SK_HARDWARE_ERROR, ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED);
}
