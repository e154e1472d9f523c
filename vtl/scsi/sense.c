/* SPDX-License-Identifier: Apache-2.0 */
#include "vtl/scsi/sense.h"

#include <string.h>

/* Fixed format sense data (SPC-4 4.5.3, table 45): offsets and bits. */
enum {
	FS_RESPONSE = 0,       /* VALID (bit 7) and RESPONSE CODE */
	FS_FLAGS = 2,          /* FILEMARK (7), EOM (6), ILI (5), SENSE KEY (3..0) */
	FS_INFORMATION = 3,    /* 4 bytes, big-endian */
	FS_ADDITIONAL_LEN = 7, /* bytes after this one */
	FS_ASC = 12,
	FS_ASCQ = 13,
	FS_SKS = 15,           /* SKSV (7), C/D (6), BPV (3), BIT POINTER (2..0), then FIELD POINTER */
};

#define RESPONSE_CURRENT 0x70
#define RESPONSE_DEFERRED 0x71
#define BIT_VALID 0x80
#define BIT_FILEMARK 0x80
#define BIT_EOM 0x40
#define BIT_ILI 0x20
#define BIT_SKSV 0x80
#define BIT_CD 0x40
#define BIT_BPV 0x08

size_t sense_encode(const struct scsi_sense *s, uint8_t *out, size_t cap)
{
	uint8_t b[SENSE_FIXED_LEN];
	memset(b, 0, sizeof b);
	b[FS_RESPONSE] = (uint8_t)((s->deferred ? RESPONSE_DEFERRED : RESPONSE_CURRENT) | (s->info_valid ? BIT_VALID : 0));
	b[FS_FLAGS] = (uint8_t)((s->filemark ? BIT_FILEMARK : 0) | (s->eom ? BIT_EOM : 0) | (s->ili ? BIT_ILI : 0) |
				((unsigned)s->key & 0x0F));
	uint32_t info = (uint32_t)s->info;
	for (int i = 0; i < 4; i++)
		b[FS_INFORMATION + i] = (uint8_t)(info >> (24 - 8 * i));
	b[FS_ADDITIONAL_LEN] = SENSE_FIXED_LEN - (FS_ADDITIONAL_LEN + 1);
	b[FS_ASC] = (uint8_t)((unsigned)s->asc >> 8);
	b[FS_ASCQ] = (uint8_t)((unsigned)s->asc & 0xFF);
	if (s->sks_valid) {
		b[FS_SKS] = (uint8_t)(BIT_SKSV | (s->sks_cdb ? BIT_CD : 0) |
				      (s->sks_bit_valid ? BIT_BPV | (s->sks_bit & 7) : 0));
		b[FS_SKS + 1] = (uint8_t)(s->sks_field >> 8);
		b[FS_SKS + 2] = (uint8_t)s->sks_field;
	}
	size_t n = cap < sizeof b ? cap : sizeof b;
	memcpy(out, b, n);
	return n;
}

/* Descriptor format sense data (SPC-4 4.5.2, tables 26..31). */
enum {
	DS_RESPONSE = 0,
	DS_KEY = 1,
	DS_ASC = 2,
	DS_ASCQ = 3,
	DS_ADDITIONAL_LEN = 7,
	DS_HEADER = 8,
};
#define RESPONSE_DESC_CURRENT 0x72
#define RESPONSE_DESC_DEFERRED 0x73
#define DESC_INFORMATION 0x00     /* 12 bytes: type, 0Ah, VALID, reserved, 8-byte INFORMATION */
#define DESC_INFORMATION_LEN 12
#define DESC_SKS 0x02             /* 8 bytes: type, 06h, 2 reserved, 3 bytes SKS, reserved */
#define DESC_SKS_LEN 8
#define DESC_STREAM 0x04          /* 4 bytes: type, 02h, reserved, FILEMARK/EOM/ILI (SSC-4 4.2.24) */
#define DESC_STREAM_LEN 4

size_t sense_encode_desc(const struct scsi_sense *s, uint8_t *out, size_t cap)
{
	uint8_t b[DS_HEADER + DESC_INFORMATION_LEN + DESC_SKS_LEN + DESC_STREAM_LEN];
	memset(b, 0, sizeof b);
	b[DS_RESPONSE] = s->deferred ? RESPONSE_DESC_DEFERRED : RESPONSE_DESC_CURRENT;
	b[DS_KEY] = (uint8_t)((unsigned)s->key & 0x0F);
	b[DS_ASC] = (uint8_t)((unsigned)s->asc >> 8);
	b[DS_ASCQ] = (uint8_t)((unsigned)s->asc & 0xFF);
	size_t at = DS_HEADER;
	if (s->info_valid) {
		b[at] = DESC_INFORMATION;
		b[at + 1] = DESC_INFORMATION_LEN - 2;
		b[at + 2] = BIT_VALID;
		/* The 8-byte field holds the residue sign-extended, as the 4-byte fixed field holds it. */
		uint64_t info = (uint64_t)(int64_t)s->info;
		for (int i = 0; i < 8; i++)
			b[at + 4 + i] = (uint8_t)(info >> (56 - 8 * i));
		at += DESC_INFORMATION_LEN;
	}
	if (s->sks_valid) {
		b[at] = DESC_SKS;
		b[at + 1] = DESC_SKS_LEN - 2;
		b[at + 4] = (uint8_t)(BIT_SKSV | (s->sks_cdb ? BIT_CD : 0) |
				      (s->sks_bit_valid ? BIT_BPV | (s->sks_bit & 7) : 0));
		b[at + 5] = (uint8_t)(s->sks_field >> 8);
		b[at + 6] = (uint8_t)s->sks_field;
		at += DESC_SKS_LEN;
	}
	if (s->filemark || s->eom || s->ili) {
		b[at] = DESC_STREAM;
		b[at + 1] = DESC_STREAM_LEN - 2;
		b[at + 3] = (uint8_t)((s->filemark ? BIT_FILEMARK : 0) | (s->eom ? BIT_EOM : 0) | (s->ili ? BIT_ILI : 0));
		at += DESC_STREAM_LEN;
	}
	b[DS_ADDITIONAL_LEN] = (uint8_t)(at - DS_HEADER);
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
