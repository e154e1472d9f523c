/* SPDX-License-Identifier: Apache-2.0 */
/* Sense data as a host decodes it (SPC-4 4.5): the encoders, and the decoder the initiators use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/scsi_sense.h"

static void plain_key_and_code(void **state)
{
	(void)state;
	struct scsi_sense s = sense_of(SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	uint8_t b[32];
	memset(b, 0xEE, sizeof b);
	assert_int_equal(sense_encode(&s, b, sizeof b), 18);
	static const uint8_t want[18] = {0x70, 0, 0x02, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x3A, 0x00, 0, 0, 0, 0};
	assert_memory_equal(b, want, 18);
	assert_int_equal(b[18], 0xEE); /* nothing past the sense data */
}

/* A READ(6) in variable mode of 1000 bytes meeting a 1500-byte block: ILI, VALID, residue -500. */
static void short_read_residue(void **state)
{
	(void)state;
	struct scsi_sense s = {.key = SK_NO_SENSE, .asc = ASC_NONE, .ili = true, .info_valid = true, .info = -500};
	uint8_t b[18];
	sense_encode(&s, b, sizeof b);
	assert_int_equal(b[0], 0xF0); /* VALID + current */
	assert_int_equal(b[2], 0x20); /* ILI, NO SENSE */
	assert_int_equal(b[3], 0xFF);
	assert_int_equal(b[4], 0xFF);
	assert_int_equal(b[5], 0xFE);
	assert_int_equal(b[6], 0x0C); /* -500 in two's complement */
}

/* SPACE over a filemark, and early warning on a write: the FILEMARK and EOM bits with their codes. */
static void filemark_and_eom_bits(void **state)
{
	(void)state;
	struct scsi_sense fm = {.key = SK_NO_SENSE, .asc = ASC_FILEMARK_DETECTED, .filemark = true,
				.info_valid = true, .info = 3};
	uint8_t b[18];
	sense_encode(&fm, b, sizeof b);
	assert_int_equal(b[2], 0x80);
	assert_int_equal(b[6], 3);
	assert_int_equal(b[12], 0x00);
	assert_int_equal(b[13], 0x01);
	struct scsi_sense ew = {.key = SK_VOLUME_OVERFLOW, .asc = ASC_EOM_DETECTED, .eom = true};
	sense_encode(&ew, b, sizeof b);
	assert_int_equal(b[0], 0x70); /* no VALID without INFORMATION */
	assert_int_equal(b[2], 0x4D);
	assert_int_equal(b[13], 0x02);
}

static void field_pointers(void **state)
{
	(void)state;
	uint8_t b[18];
	struct scsi_sense s = sense_invalid_cdb_field(1, 1); /* e.g. the FIXED bit of READ(6) */
	sense_encode(&s, b, sizeof b);
	assert_int_equal(b[2], 0x05);
	assert_int_equal(b[12], 0x24);
	assert_int_equal(b[15], 0x80 | 0x40 | 0x08 | 1); /* SKSV, C/D = CDB, BPV, bit 1 */
	assert_int_equal(b[16], 0);
	assert_int_equal(b[17], 1);
	s = sense_invalid_param_field(300, -1);
	sense_encode(&s, b, sizeof b);
	assert_int_equal(b[12], 0x26);
	assert_int_equal(b[15], 0x80); /* parameter data, no bit pointer */
	assert_int_equal(b[16], 0x01);
	assert_int_equal(b[17], 0x2C);
}

static void deferred_and_short_buffer(void **state)
{
	(void)state;
	struct scsi_sense s = sense_of(SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	s.deferred = true;
	uint8_t b[8];
	memset(b, 0, sizeof b);
	assert_int_equal(sense_encode(&s, b, sizeof b), 8); /* an allocation length shorter than the data */
	assert_int_equal(b[0], 0x71);
	assert_int_equal(b[2], 0x03);
	assert_int_equal(b[7], 10);
}

static void descriptor_format(void **state)
{
	(void)state;
	uint8_t b[64];
	memset(b, 0xEE, sizeof b);
	/* A long block read: ILI with a negative residue, as descriptors. */
	struct scsi_sense s = sense_of(SK_NO_SENSE, ASC_NONE);
	s.ili = true;
	s.info_valid = true;
	s.info = -900;
	size_t n = sense_encode_desc(&s, b, sizeof b);
	assert_int_equal(n, 8 + 12 + 4);
	assert_int_equal(b[0], 0x72);
	assert_int_equal(b[1], SK_NO_SENSE);
	assert_int_equal(b[7], 16);
	/* Information descriptor: type 00h, length 0Ah, VALID, 8-byte value sign-extended. */
	static const uint8_t info[12] = {0x00, 0x0A, 0x80, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFC, 0x7C};
	assert_memory_equal(b + 8, info, 12);
	/* Stream commands descriptor: type 04h, length 02h, ILI. */
	static const uint8_t stream[4] = {0x04, 0x02, 0x00, 0x20};
	assert_memory_equal(b + 20, stream, 4);
	assert_int_equal(b[24], 0xEE);
	/* A field pointer becomes a sense-key specific descriptor; deferred is 73h. */
	s = sense_invalid_cdb_field(4, 1);
	s.deferred = true;
	n = sense_encode_desc(&s, b, sizeof b);
	assert_int_equal(n, 16);
	assert_int_equal(b[0], 0x73);
	assert_int_equal(b[2], 0x24);
	static const uint8_t sks[8] = {0x02, 0x06, 0, 0, 0xC9, 0x00, 0x04, 0};
	assert_memory_equal(b + 8, sks, 8);
	/* Cut to the room given. */
	memset(b, 0xEE, sizeof b);
	assert_int_equal(sense_encode_desc(&s, b, 5), 5);
	assert_int_equal(b[5], 0xEE);
}

/* ------------------------------------------------------------------ decoding */

/* Every field of a against b (not memcmp: padding bytes are not part of the value). */
static void assert_sense_equal(const struct scsi_sense *a, const struct scsi_sense *b)
{
	assert_int_equal(a->key, b->key);
	assert_int_equal(a->asc, b->asc);
	assert_int_equal(a->deferred, b->deferred);
	assert_int_equal(a->filemark, b->filemark);
	assert_int_equal(a->eom, b->eom);
	assert_int_equal(a->ili, b->ili);
	assert_int_equal(a->info_valid, b->info_valid);
	assert_true(a->info == b->info);
	assert_int_equal(a->sks_valid, b->sks_valid);
	assert_int_equal(a->sks_cdb, b->sks_cdb);
	assert_int_equal(a->sks_bit_valid, b->sks_bit_valid);
	assert_int_equal(a->sks_bit, b->sks_bit);
	assert_int_equal(a->sks_field, b->sks_field);
}

/* A drive's answer to a READ(6) of 1000 bytes meeting a 1500-byte block, fixed format, as sent. */
static void decode_fixed(void **state)
{
	(void)state;
	static const uint8_t b[18] = {0xF0, 0, 0x20, 0xFF, 0xFF, 0xFE, 0x0C, 10, 0, 0, 0, 0, 0x00, 0x00, 0, 0, 0, 0};
	struct scsi_sense s;
	assert_true(sense_decode(b, sizeof b, &s));
	assert_int_equal(s.key, SK_NO_SENSE);
	assert_int_equal(s.asc, ASC_NONE);
	assert_true(s.ili);
	assert_false(s.filemark);
	assert_false(s.eom);
	assert_false(s.deferred);
	assert_true(s.info_valid);
	assert_int_equal(s.info, -500);
	/* A changer refusing a move: 05h/3Bh/0Eh, deferred, with a field pointer into the CDB. */
	static const uint8_t c[18] = {0x71, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x3B, 0x0E, 0, 0xC8, 0x00, 0x04};
	assert_true(sense_decode(c, sizeof c, &s));
	assert_int_equal(s.key, SK_ILLEGAL_REQUEST);
	assert_int_equal(s.asc, ASC_MEDIUM_SOURCE_EMPTY);
	assert_true(s.deferred);
	assert_false(s.info_valid);
	assert_true(s.sks_valid);
	assert_true(s.sks_cdb);
	assert_true(s.sks_bit_valid);
	assert_int_equal(s.sks_field, 4);
	/* Filemark and early warning bits. */
	static const uint8_t f[14] = {0x70, 0, 0xC0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0x00, 0x02};
	assert_true(sense_decode(f, sizeof f, &s));
	assert_true(s.filemark);
	assert_true(s.eom);
	assert_int_equal(s.asc, ASC_EOM_DETECTED);
}

/* Descriptor format: information (64-bit), sense-key specific and stream descriptors, and one of a type
 * the decoder does not know, which it passes over. */
static void decode_descriptor(void **state)
{
	(void)state;
	static const uint8_t b[] = {0x72, 0x03, 0x11, 0x00, 0, 0, 0, 8 + 12 + 4 + 4,
				    0x80, 0x06, 1, 2, 3, 4, 5, 6,             /* vendor specific descriptor */
				    0x00, 0x0A, 0x80, 0, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
				    0x04, 0x02, 0x00, 0x80,                   /* stream: FILEMARK */
				    0x02, 0x02, 0x00, 0x00};                  /* sks cut short: ignored */
	struct scsi_sense s;
	assert_true(sense_decode(b, sizeof b, &s));
	assert_int_equal(s.key, SK_MEDIUM_ERROR);
	assert_int_equal(s.asc, ASC_UNRECOVERED_READ_ERROR);
	assert_true(s.info_valid);
	assert_true(s.info == (int64_t)1 << 32);
	assert_true(s.filemark);
	assert_false(s.eom);
	assert_false(s.ili);
	assert_false(s.sks_valid);
	/* What the encoder writes, the decoder reads back: both formats. */
	struct scsi_sense in = sense_invalid_cdb_field(4, 1);
	in.deferred = true;
	in.ili = true;
	in.info_valid = true;
	in.info = -900;
	uint8_t e[SENSE_MAX_LEN];
	size_t n = sense_encode_desc(&in, e, sizeof e);
	assert_true(sense_decode(e, n, &s));
	assert_sense_equal(&s, &in);
	n = sense_encode(&in, e, sizeof e);
	assert_true(sense_decode(e, n, &s));
	assert_sense_equal(&s, &in);
}

/* Bytes cut short: what they reach is decoded, nothing beyond them is read (ASan watches the copies). */
static void decode_short(void **state)
{
	(void)state;
	struct scsi_sense in = {.key = SK_NOT_READY, .asc = ASC_BECOMING_READY, .eom = true, .info_valid = true, .info = 7};
	uint8_t full[SENSE_FIXED_LEN];
	sense_encode(&in, full, sizeof full);
	for (size_t len = 0; len <= sizeof full; len++) {
		uint8_t *b = len ? malloc(len) : NULL;
		if (len)
			memcpy(b, full, len);
		struct scsi_sense s;
		bool ok = sense_decode(b, len, &s);
		assert_int_equal(ok, len >= 3);
		assert_int_equal(s.key, len >= 3 ? SK_NOT_READY : SK_NO_SENSE);
		assert_int_equal(s.eom, len >= 3);
		assert_int_equal(s.info_valid, len >= 7);
		assert_int_equal(s.asc, len >= 14 ? ASC_BECOMING_READY : ASC_NONE);
		free(b);
	}
	/* An ADDITIONAL SENSE LENGTH that stops before the ASC: the ASC is not there. */
	uint8_t cut[SENSE_FIXED_LEN];
	memcpy(cut, full, sizeof cut);
	cut[7] = 4;
	struct scsi_sense s;
	assert_true(sense_decode(cut, sizeof cut, &s));
	assert_int_equal(s.asc, ASC_NONE);
	assert_true(s.info_valid);
	/* Descriptor format claiming 200 additional bytes in 12: the header is read, the cut descriptor not. */
	static const uint8_t d[12] = {0x73, 0x06, 0x29, 0x00, 0, 0, 0, 200, 0x00, 0x0A, 0x80, 0};
	assert_true(sense_decode(d, sizeof d, &s));
	assert_true(s.deferred);
	assert_int_equal(s.key, SK_UNIT_ATTENTION);
	assert_int_equal(s.asc, ASC_POWER_ON_RESET);
	assert_false(s.info_valid);
	assert_false(sense_decode(d, 3, &s));
	assert_true(sense_decode(d, 4, &s));
}

/* What is not sense data is not decoded: other response codes, nothing at all. */
static void decode_garbage(void **state)
{
	(void)state;
	struct scsi_sense s;
	memset(&s, 0xAA, sizeof s);
	assert_false(sense_decode(NULL, 0, &s));
	assert_int_equal(s.key, SK_NO_SENSE);
	assert_false(s.info_valid);
	static const uint8_t codes[] = {0x00, 0x6F, 0x74, 0x7E, 0x7F};
	for (size_t i = 0; i < sizeof codes; i++) {
		uint8_t b[SENSE_FIXED_LEN] = {codes[i], 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x24, 0x00};
		memset(&s, 0xAA, sizeof s);
		assert_false(sense_decode(b, sizeof b, &s));
		assert_int_equal(s.key, SK_NO_SENSE);
		assert_int_equal(s.asc, ASC_NONE);
	}
	/* A descriptor of length 0xFF in a short list ends the walk; a zero-length list has none. */
	static const uint8_t d[16] = {0x72, 0x05, 0x24, 0x00, 0, 0, 0, 8, 0x04, 0xFF, 0, 0xE0, 0, 0, 0, 0};
	assert_true(sense_decode(d, sizeof d, &s));
	assert_false(s.filemark || s.eom || s.ili);
	assert_int_equal(s.asc, ASC_INVALID_FIELD_IN_CDB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_key_and_code),
		cmocka_unit_test(short_read_residue),
		cmocka_unit_test(filemark_and_eom_bits),
		cmocka_unit_test(field_pointers),
		cmocka_unit_test(deferred_and_short_buffer),
		cmocka_unit_test(descriptor_format),
		cmocka_unit_test(decode_fixed),
		cmocka_unit_test(decode_descriptor),
		cmocka_unit_test(decode_short),
		cmocka_unit_test(decode_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
