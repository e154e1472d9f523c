/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SET DATA ENCRYPTION page parse (SSC-4 8.5.3.2). Every field is checked
 * against what the drive's capability pages (ssc_crypt.c) say it offers,
 * so a host that reads them first is never refused.
 */
#include "vtl/drive/sde.h"

#include <string.h>

#include "common/bytes.h"

/* Byte offsets in the page (SSC-4 table "SET DATA ENCRYPTION page"). */
#define B_PAGE 0
#define B_LEN 2
#define B_SCOPE 4      /* SCOPE bits 7-5, LOCK bit 0 */
#define SCOPE_SHIFT 5
#define LOCK_BIT 0x01
#define B_FLAGS SDE_FLAGS_BYTE
#define CEEM_MASK 0xC0
#define CEEM_NOT_CHECKED 0x40 /* 01b: the encryption mode of blocks read is not checked */
#define CEEM_SHIFT 6
#define RDMC_SHIFT 4
#define RDMC_MASK 0x30
#define SDK_BIT 0x08
#define CKOD_BIT 0x04
#define CKORP_BIT (1u << SDE_CKORP_BIT)
#define CKORL_BIT (1u << SDE_CKORL_BIT)
#define B_ENC 6
#define B_DEC 7
#define B_ALG 8
#define B_KEYFMT 9
#define B_KADFMT 10
#define B_RSVD 11      /* 11..17 reserved */
#define B_KEYLEN 18
#define B_KEY 20
#define KAD_HEAD 4     /* KAD descriptor: type, reserved, length (2) */
#define KADF_ASCII 2   /* KAD format: 0 unspecified, 1 binary, 2 ASCII */

static enum sde_result bad(uint16_t at, int b, uint16_t *byte, int *bit)
{
	*byte = at;
	*bit = b;
	return SDE_BAD_FIELD;
}

enum sde_result sde_parse(const uint8_t *p, size_t len, struct sde *out, uint16_t *byte, int *bit)
{
	memset(out, 0, sizeof *out);
	*byte = 0;
	*bit = -1;
	if (len < SDE_FIXED_LEN)
		return SDE_BAD_LENGTH;
	if (be_get(p + B_PAGE, 2) != SDE_PAGE)
		return bad(B_PAGE, -1, byte, bit);
	size_t end = 4 + (size_t)be_get(p + B_LEN, 2);
	if (end > len || end < SDE_FIXED_LEN)
		return SDE_BAD_LENGTH;
	uint8_t s = p[B_SCOPE];
	if (s & 0x1E)
		return bad(B_SCOPE, 4, byte, bit);
	out->scope = s >> SCOPE_SHIFT;
	if (out->scope > SDE_SCOPE_ALL)
		return bad(B_SCOPE, 7, byte, bit);
	out->lock = s & LOCK_BIT;
	uint8_t f = p[B_FLAGS];
	/* No external encryption mode check (EEMC_C 0): CEEM 00b or 01b only; no supplemental keys. */
	if ((f & CEEM_MASK) > CEEM_NOT_CHECKED)
		return bad(B_FLAGS, 7, byte, bit);
	out->ceem = (uint8_t)((f & CEEM_MASK) >> CEEM_SHIFT);
	out->rdmc = (uint8_t)((f & RDMC_MASK) >> RDMC_SHIFT);
	if (out->rdmc == 1)
		return bad(B_FLAGS, 5, byte, bit); /* 01b is reserved */
	if (f & SDK_BIT)
		return bad(B_FLAGS, 3, byte, bit);
	out->ckod = f & CKOD_BIT;
	out->ckorp = f & CKORP_BIT;
	out->ckorl = f & CKORL_BIT;
	if (out->scope == SDE_SCOPE_PUBLIC)
		return SDE_OK; /* PUBLIC: every field but SCOPE and LOCK is ignored (SSC-4 8.5.3.2) */
	out->enc_mode = p[B_ENC];
	out->dec_mode = p[B_DEC];
	if (out->enc_mode != SDE_ENC_DISABLE && out->enc_mode != SDE_ENC_ENCRYPT)
		return bad(B_ENC, -1, byte, bit); /* EXTERNAL: the drive has no external encryption (ENCRYPT_C 2) */
	if (out->dec_mode == SDE_DEC_RAW || out->dec_mode > SDE_DEC_MIXED)
		return bad(B_DEC, -1, byte, bit); /* RAW: no raw reads (DECRYPT_C 2) */
	bool keyed = out->enc_mode != SDE_ENC_DISABLE || out->dec_mode != SDE_DEC_DISABLE;
	out->algorithm = p[B_ALG];
	if (keyed && out->algorithm != SDE_ALGORITHM_INDEX)
		return bad(B_ALG, -1, byte, bit);
	if (keyed && p[B_KEYFMT] != SDE_KEY_FORMAT_PLAIN)
		return bad(B_KEYFMT, -1, byte, bit);
	out->kad_format = p[B_KADFMT];
	if (out->kad_format > KADF_ASCII)
		return bad(B_KADFMT, -1, byte, bit);
	for (uint16_t i = B_RSVD; i < B_KEYLEN; i++)
		if (p[i])
			return bad(i, -1, byte, bit);
	size_t klen = (size_t)be_get(p + B_KEYLEN, 2);
	if (B_KEY + klen > end)
		return SDE_BAD_LENGTH;
	if (keyed ? klen != VTL_KEY_LEN : klen != 0 && klen != VTL_KEY_LEN)
		return bad(B_KEYLEN, -1, byte, bit);
	if (keyed) {
		memcpy(out->key, p + B_KEY, VTL_KEY_LEN);
		out->has_key = true;
	}
	bool seen[4] = {false};
	for (size_t at = B_KEY + klen; at < end;) {
		if (at + KAD_HEAD > end)
			return SDE_BAD_LENGTH;
		uint8_t type = p[at];
		size_t n = (size_t)be_get(p + at + 2, 2);
		if (at + KAD_HEAD + n > end)
			return SDE_BAD_LENGTH;
		/* No nonce (NONCE_C 0) and no metadata KAD; each kind at most once. */
		if (type > SDE_KAD_AKAD || seen[type])
			return bad((uint16_t)at, -1, byte, bit);
		if (p[at + 1])
			return bad((uint16_t)(at + 1), -1, byte, bit);
		seen[type] = true;
		size_t max = type == SDE_KAD_UKAD ? VTL_UKAD_MAX : VTL_AKAD_MAX;
		if (n > max)
			return bad((uint16_t)(at + 2), -1, byte, bit);
		if (type == SDE_KAD_UKAD) {
			out->kad.ukad_len = (uint8_t)n;
			memcpy(out->kad.ukad, p + at + KAD_HEAD, n);
		} else {
			out->kad.akad_len = (uint8_t)n;
			memcpy(out->kad.akad, p + at + KAD_HEAD, n);
		}
		at += KAD_HEAD + n;
	}
	return SDE_OK;
}
