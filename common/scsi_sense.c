/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sense data both ways: the target's encoders (fixed format by default, descriptor format when the
 * host set D_SENSE) and the initiators' decoder. The decoder reads bytes a device chose: every offset
 * is checked against the buffer and against the lengths the bytes claim, whichever ends first.
 */
#include "common/scsi_sense.h"

#include <string.h>

size_t sense_encode(const struct scsi_sense *s, uint8_t *out, size_t cap)
{
	uint8_t b[SENSE_FIXED_LEN];
	memset(b, 0, sizeof b);
	b[SENSE_FS_RESPONSE] = (uint8_t)((s->deferred ? SENSE_FIXED_DEFERRED : SENSE_FIXED_CURRENT) |
					 (s->info_valid ? SENSE_BIT_VALID : 0));
	b[SENSE_FS_FLAGS] = (uint8_t)((s->filemark ? SENSE_BIT_FILEMARK : 0) | (s->eom ? SENSE_BIT_EOM : 0) |
				      (s->ili ? SENSE_BIT_ILI : 0) | ((unsigned)s->key & SENSE_KEY_MASK));
	uint32_t info = (uint32_t)s->info;
	for (int i = 0; i < 4; i++)
		b[SENSE_FS_INFORMATION + i] = (uint8_t)(info >> (24 - 8 * i));
	b[SENSE_FS_ADDITIONAL_LEN] = SENSE_FIXED_LEN - (SENSE_FS_ADDITIONAL_LEN + 1);
	b[SENSE_FS_ASC] = SCSI_ASC_OF(s->asc);
	b[SENSE_FS_ASCQ] = SCSI_ASCQ_OF(s->asc);
	if (s->sks_valid) {
		b[SENSE_FS_SKS] = (uint8_t)(SENSE_BIT_SKSV | (s->sks_cdb ? SENSE_BIT_CD : 0) |
				      (s->sks_bit_valid ? SENSE_BIT_BPV | (s->sks_bit & SENSE_BIT_POINTER_MASK) : 0));
		b[SENSE_FS_SKS + 1] = (uint8_t)(s->sks_field >> 8);
		b[SENSE_FS_SKS + 2] = (uint8_t)s->sks_field;
	}
	size_t n = cap < sizeof b ? cap : sizeof b;
	memcpy(out, b, n);
	return n;
}

size_t sense_encode_desc(const struct scsi_sense *s, uint8_t *out, size_t cap)
{
	uint8_t b[SENSE_DS_HEADER + SENSE_DESC_INFORMATION_LEN + SENSE_DESC_SKS_LEN + SENSE_DESC_STREAM_LEN];
	memset(b, 0, sizeof b);
	b[SENSE_DS_RESPONSE] = s->deferred ? SENSE_DESC_DEFERRED : SENSE_DESC_CURRENT;
	b[SENSE_DS_KEY] = (uint8_t)((unsigned)s->key & SENSE_KEY_MASK);
	b[SENSE_DS_ASC] = SCSI_ASC_OF(s->asc);
	b[SENSE_DS_ASCQ] = SCSI_ASCQ_OF(s->asc);
	size_t at = SENSE_DS_HEADER;
	if (s->info_valid) {
		b[at] = SENSE_DESC_INFORMATION;
		b[at + 1] = SENSE_DESC_INFORMATION_LEN - SENSE_DESC_HEADER;
		b[at + 2] = SENSE_BIT_VALID;
		/* The 8-byte field holds the residue sign-extended, as the 4-byte fixed field holds it. */
		uint64_t info = (uint64_t)(int64_t)s->info;
		for (int i = 0; i < 8; i++)
			b[at + 4 + i] = (uint8_t)(info >> (56 - 8 * i));
		at += SENSE_DESC_INFORMATION_LEN;
	}
	if (s->sks_valid) {
		b[at] = SENSE_DESC_SKS;
		b[at + 1] = SENSE_DESC_SKS_LEN - SENSE_DESC_HEADER;
		b[at + 4] = (uint8_t)(SENSE_BIT_SKSV | (s->sks_cdb ? SENSE_BIT_CD : 0) |
				      (s->sks_bit_valid ? SENSE_BIT_BPV | (s->sks_bit & SENSE_BIT_POINTER_MASK) : 0));
		b[at + 5] = (uint8_t)(s->sks_field >> 8);
		b[at + 6] = (uint8_t)s->sks_field;
		at += SENSE_DESC_SKS_LEN;
	}
	if (s->filemark || s->eom || s->ili) {
		b[at] = SENSE_DESC_STREAM;
		b[at + 1] = SENSE_DESC_STREAM_LEN - SENSE_DESC_HEADER;
		b[at + 3] = (uint8_t)((s->filemark ? SENSE_BIT_FILEMARK : 0) | (s->eom ? SENSE_BIT_EOM : 0) |
				      (s->ili ? SENSE_BIT_ILI : 0));
		at += SENSE_DESC_STREAM_LEN;
	}
	b[SENSE_DS_ADDITIONAL_LEN] = (uint8_t)(at - SENSE_DS_HEADER);
	size_t n = cap < at ? cap : at;
	memcpy(out, b, n);
	return n;
}

static struct scsi_sense field_pointer(enum scsi_asc asc, bool cdb, uint16_t byte, int bit)
{
	struct scsi_sense s = {.key = SK_ILLEGAL_REQUEST, .asc = asc, .sks_valid = true, .sks_cdb = cdb,
			       .sks_field = byte};
	if (bit >= 0 && bit <= 7) {
		s.sks_bit_valid = true;
		s.sks_bit = (uint8_t)bit;
	}
	return s;
}

struct scsi_sense sense_invalid_cdb_field(uint16_t byte, int bit)
{
	return field_pointer(ASC_INVALID_FIELD_IN_CDB, true, byte, bit);
}

struct scsi_sense sense_invalid_param_field(uint16_t byte, int bit)
{
	return field_pointer(ASC_INVALID_FIELD_IN_PARAMETERS, false, byte, bit);
}

struct scsi_sense sense_of(enum scsi_sense_key key, enum scsi_asc asc)
{
	return (struct scsi_sense){.key = key, .asc = asc};
}

/* ------------------------------------------------------------------ decoding */

/* The n-byte big-endian number at p. */
static uint64_t get_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The sense-key specific field pointer at p (3 bytes), when its SKSV bit says it is one. */
static void decode_sks(const uint8_t *p, struct scsi_sense *s)
{
	if (!(p[0] & SENSE_BIT_SKSV))
		return;
	s->sks_valid = true;
	s->sks_cdb = p[0] & SENSE_BIT_CD;
	s->sks_bit_valid = p[0] & SENSE_BIT_BPV;
	s->sks_bit = p[0] & SENSE_BIT_POINTER_MASK;
	s->sks_field = (uint16_t)get_be(p + 1, 2);
}

static void decode_stream_bits(uint8_t bits, struct scsi_sense *s)
{
	s->filemark = bits & SENSE_BIT_FILEMARK;
	s->eom = bits & SENSE_BIT_EOM;
	s->ili = bits & SENSE_BIT_ILI;
}

static bool decode_fixed(const uint8_t *b, size_t len, struct scsi_sense *s)
{
	if (len <= SENSE_FS_FLAGS)
		return false;
	decode_stream_bits(b[SENSE_FS_FLAGS], s);
	s->key = (enum scsi_sense_key)(b[SENSE_FS_FLAGS] & SENSE_KEY_MASK);
	/* The ADDITIONAL SENSE LENGTH may say less than was sent, or more: the bytes read are the fewer. */
	size_t end = len;
	if (len > SENSE_FS_ADDITIONAL_LEN && (size_t)SENSE_FS_ADDITIONAL_LEN + 1 + b[SENSE_FS_ADDITIONAL_LEN] < end)
		end = (size_t)SENSE_FS_ADDITIONAL_LEN + 1 + b[SENSE_FS_ADDITIONAL_LEN];
	if (end >= SENSE_FS_INFORMATION + 4) {
		s->info_valid = b[SENSE_FS_RESPONSE] & SENSE_BIT_VALID;
		s->info = (int32_t)(uint32_t)get_be(b + SENSE_FS_INFORMATION, 4); /* SSC: a residue, signed */
	}
	if (end > SENSE_FS_ASCQ)
		s->asc = (enum scsi_asc)SCSI_ASC_PAIR(b[SENSE_FS_ASC], b[SENSE_FS_ASCQ]);
	if (end >= SENSE_FS_SKS + 3)
		decode_sks(b + SENSE_FS_SKS, s);
	return true;
}

static bool decode_desc(const uint8_t *b, size_t len, struct scsi_sense *s)
{
	if (len <= SENSE_DS_ASCQ)
		return false;
	s->key = (enum scsi_sense_key)(b[SENSE_DS_KEY] & SENSE_KEY_MASK);
	s->asc = (enum scsi_asc)SCSI_ASC_PAIR(b[SENSE_DS_ASC], b[SENSE_DS_ASCQ]);
	if (len < SENSE_DS_HEADER)
		return true;
	size_t end = SENSE_DS_HEADER + (size_t)b[SENSE_DS_ADDITIONAL_LEN];
	if (end > len)
		end = len;
	for (size_t at = SENSE_DS_HEADER; at + SENSE_DESC_HEADER <= end;) {
		size_t dl = SENSE_DESC_HEADER + (size_t)b[at + 1];
		if (dl > end - at)
			break; /* a descriptor cut by the buffer: what it holds is not known */
		const uint8_t *d = b + at;
		if (d[0] == SENSE_DESC_INFORMATION && dl >= SENSE_DESC_INFORMATION_LEN) {
			s->info_valid = d[2] & SENSE_BIT_VALID;
			s->info = (int64_t)get_be(d + 4, 8);
		} else if (d[0] == SENSE_DESC_SKS && dl >= SENSE_DESC_SKS_LEN) {
			decode_sks(d + 4, s);
		} else if (d[0] == SENSE_DESC_STREAM && dl >= SENSE_DESC_STREAM_LEN) {
			decode_stream_bits(d[3], s);
		}
		at += dl;
	}
	return true;
}

bool sense_decode(const uint8_t *b, size_t len, struct scsi_sense *out)
{
	memset(out, 0, sizeof *out);
	if (!b || len == 0)
		return false;
	bool ok = false;
	switch (b[SENSE_FS_RESPONSE] & SENSE_RESPONSE_MASK) {
	case SENSE_FIXED_CURRENT:
	case SENSE_FIXED_DEFERRED:
		out->deferred = (b[SENSE_FS_RESPONSE] & SENSE_RESPONSE_MASK) == SENSE_FIXED_DEFERRED;
		ok = decode_fixed(b, len, out);
		break;
	case SENSE_DESC_CURRENT:
	case SENSE_DESC_DEFERRED:
		out->deferred = (b[SENSE_DS_RESPONSE] & SENSE_RESPONSE_MASK) == SENSE_DESC_DEFERRED;
		ok = decode_desc(b, len, out);
		break;
	default:
		break;
	}
	if (!ok)
		memset(out, 0, sizeof *out);
	return ok;
}
