/* SPDX-License-Identifier: Apache-2.0 */
/* Fixed-format sense data as a host decodes it (SPC-4 4.5.3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vtl/scsi/sense.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_key_and_code),
		cmocka_unit_test(short_read_residue),
		cmocka_unit_test(filemark_and_eom_bits),
		cmocka_unit_test(field_pointers),
		cmocka_unit_test(deferred_and_short_buffer),
		cmocka_unit_test(descriptor_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
