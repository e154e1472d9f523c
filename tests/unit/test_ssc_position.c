/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Positioning as a host sees it: SPACE(6/16) over blocks and filemarks with
 * the residue and the FILEMARK / BOT / end-of-data reports, LOCATE(10/16),
 * READ POSITION in its three forms, REWIND and ERASE.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>

#include "common/vtl_error.h"
#include "vtl/drive/ssc_internal.h"

static uint8_t buf[4096];

/* Lays out: file 0 = blocks 0..2, FM(3); file 1 = blocks 4..5, FM(6); file 2 = block 7; EOD 8. */
static void three_files(struct host *h)
{
	host_new_cart(h, "B00001L8", 0);
	host_load(h, "B00001L8");
	uint8_t cdb[6];
	const int layout[] = {3, 2, 1};
	for (int f = 0; f < 3; f++) {
		for (int b = 0; b < layout[f]; b++) {
			memset(buf, 'a' + f * 10 + b, 100);
			host_cmd(h, cdb, cdb_write6(cdb, false, 100), SCSI_DIR_OUT, buf, 100);
			expect_good(h);
		}
		if (f < 2) {
			host_cmd(h, cdb, cdb_wfm6(cdb, 1, false), SCSI_DIR_NONE, NULL, 0);
			expect_good(h);
		}
	}
	assert_int_equal(host_position(h), 8);
	host_cmd(h, cdb, cdb_simple(cdb, 0x01), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

static void space(struct host *h, uint8_t code, int32_t count)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_space6(cdb, code, count), SCSI_DIR_NONE, NULL, 0);
}

static void locate(struct host *h, uint32_t obj)
{
	uint8_t cdb[10];
	host_cmd(h, cdb, cdb_locate10(cdb, obj), SCSI_DIR_NONE, NULL, 0);
}

static void space_blocks(void **state)
{
	struct host *h = *state;
	three_files(h);
	space(h, 0, 2);
	expect_good(h);
	assert_int_equal(host_position(h), 2);
	/* Forward into the filemark: stops past it, FILEMARK, residue = count not spaced. */
	space(h, 0, 5);
	expect_sense(h, SK_NO_SENSE, ASC_FILEMARK_DETECTED);
	assert_true(h->c.sense.filemark);
	assert_int_equal(sense_info(h), 4);
	assert_int_equal(host_position(h), 4);
	/* Backward into the filemark: stops on its BOT side. */
	space(h, 0, -3);
	expect_sense(h, SK_NO_SENSE, ASC_FILEMARK_DETECTED);
	assert_int_equal(sense_info(h), 3);
	assert_int_equal(host_position(h), 3);
	/* Backward to BOT: NO SENSE, EOM, BEGINNING-OF-PARTITION/MEDIUM DETECTED. */
	locate(h, 2);
	expect_good(h);
	space(h, 0, -5);
	expect_sense(h, SK_NO_SENSE, ASC_BOT_DETECTED);
	assert_true(h->c.sense.eom);
	assert_int_equal(sense_info(h), 3);
	assert_int_equal(host_position(h), 0);
	/* Forward into end of data: BLANK CHECK, END-OF-DATA DETECTED. */
	locate(h, 7);
	space(h, 0, 3);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	assert_int_equal(sense_info(h), 2);
	assert_int_equal(host_position(h), 8);
	/* A count of 0 does nothing. */
	space(h, 0, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 8);
}

static void space_filemarks_and_eod(void **state)
{
	struct host *h = *state;
	three_files(h);
	space(h, 1, 1);
	expect_good(h);
	assert_int_equal(host_position(h), 4);
	space(h, 1, 1);
	expect_good(h);
	assert_int_equal(host_position(h), 7);
	space(h, 1, 1); /* no more filemarks */
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	assert_int_equal(sense_info(h), 1);
	assert_int_equal(host_position(h), 8);
	/* Backward: ends on the BOT side of the filemark (as mt bsf expects). */
	space(h, 1, -1);
	expect_good(h);
	assert_int_equal(host_position(h), 6);
	space(h, 1, -3);
	expect_sense(h, SK_NO_SENSE, ASC_BOT_DETECTED);
	assert_int_equal(sense_info(h), 2);
	assert_int_equal(host_position(h), 0);
	space(h, 3, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 8);
	/* Sequential filemarks and setmarks are not LTO features. */
	space(h, 2, 1);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	space(h, 4, 1);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}

static void space16(void **state)
{
	struct host *h = *state;
	three_files(h);
	uint8_t cdb[16] = {0x91, 0x01};
	be_put(cdb + 4, 2, 8);
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 7);
	be_put(cdb + 4, (uint64_t)-2, 8);
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 3);
	cdb[13] = 4; /* a parameter length: SPACE has no parameter data */
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(h->c.sense.sks_field, 12);
}

static void locate_and_read_position(void **state)
{
	struct host *h = *state;
	three_files(h);
	uint8_t rp[10] = {0x34};
	uint8_t b[64];
	/* Short form at BOT: BOP set, first and last location 0. */
	memset(b, 0xEE, sizeof b);
	host_cmd(h, rp, 10, SCSI_DIR_IN, b, 20);
	expect_good(h);
	assert_int_equal(h->c.data_len, 20);
	assert_int_equal(b[0] & 0x80, 0x80);
	assert_int_equal(be_get(b + 4, 4), 0);
	locate(h, 5);
	expect_good(h);
	host_cmd(h, rp, 10, SCSI_DIR_IN, b, 20);
	assert_int_equal(b[0] & 0x80, 0);
	assert_int_equal(be_get(b + 4, 4), 5);
	assert_int_equal(be_get(b + 8, 4), 5);
	/* Long form: object number and file number (one filemark before object 5). */
	rp[1] = 0x06;
	host_cmd(h, rp, 10, SCSI_DIR_IN, b, 32);
	expect_good(h);
	assert_int_equal(h->c.data_len, 32);
	assert_int_equal(be_get(b + 8, 8), 5);
	assert_int_equal(be_get(b + 16, 8), 1);
	/* Extended form, cut by its allocation length. */
	rp[1] = 0x08;
	rp[8] = 32;
	host_cmd(h, rp, 10, SCSI_DIR_IN, b, 32);
	expect_good(h);
	assert_int_equal(be_get(b + 2, 2), 28);
	assert_int_equal(be_get(b + 8, 8), 5);
	rp[8] = 12;
	memset(b, 0xEE, sizeof b);
	host_cmd(h, rp, 10, SCSI_DIR_IN, b, 32);
	assert_int_equal(h->c.data_len, 12);
	assert_int_equal(b[12], 0xEE);
	/* No data buffer at all: still GOOD, nothing transferred. */
	rp[1] = 0;
	rp[8] = 0;
	host_cmd(h, rp, 10, SCSI_DIR_IN, NULL, 0);
	expect_good(h);
	assert_int_equal(h->c.data_len, 0);
	/* An unknown form. */
	rp[1] = 0x02;
	host_cmd(h, rp, 10, SCSI_DIR_IN, b, 32);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	/* LOCATE past end of data: BLANK CHECK, positioned at end of data. */
	locate(h, 100);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	assert_int_equal(host_position(h), 8);
	/* A partition other than 0 does not exist. */
	uint8_t l10[10];
	cdb_locate10(l10, 1);
	l10[1] = 0x02;
	l10[8] = 1;
	host_cmd(h, l10, 10, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(h->c.sense.sks_field, 8);
	/* After locating, the block read is the one asked for. */
	locate(h, 4);
	uint8_t cdb[6];
	memset(buf, 0, 100);
	host_cmd(h, cdb, cdb_read6(cdb, false, false, 100), SCSI_DIR_IN, buf, 100);
	expect_good(h);
	assert_int_equal(buf[0], 'a' + 10);
}

static void locate16(void **state)
{
	struct host *h = *state;
	three_files(h);
	uint8_t cdb[16] = {0x92};
	be_put(cdb + 4, 6, 8);
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 6);
	cdb[1] = 1 << 3; /* DEST_TYPE logical file: file 2 starts at object 7 */
	be_put(cdb + 4, 2, 8);
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 7);
	be_put(cdb + 4, 0, 8);
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(host_position(h), 0);
	be_put(cdb + 4, 5, 8); /* there is no file 5 */
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	cdb[1] = 3 << 3; /* end of data */
	locate(h, 0);
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 8);
	cdb[1] = 2 << 3; /* reserved destination type */
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	cdb[1] = 0;
	cdb[2] = 1; /* BAM: implicit addressing */
	host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(h->c.sense.sks_field, 2);
}

static void erase_and_rewind(void **state)
{
	struct host *h = *state;
	three_files(h);
	locate(h, 4);
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x19), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 4);
	host_cmd(h, cdb, cdb_read6(cdb, false, false, 100), SCSI_DIR_IN, buf, 100);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	/* Long erase at BOT leaves a blank tape. */
	host_cmd(h, cdb, cdb_simple(cdb, 0x01), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	cdb_simple(cdb, 0x19);
	cdb[1] = 0x01;
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	host_cmd(h, cdb, cdb_read6(cdb, false, false, 100), SCSI_DIR_IN, buf, 100);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	assert_int_equal(host_position(h), 0);
	/* Positioning without a medium: NOT READY. */
	EXPECT_RC(ssc_eject(h->d), 0);
	host_cmd(h, cdb, cdb_simple(cdb, 0x01), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	uint8_t rp[10] = {0x34};
	host_cmd(h, rp, 10, SCSI_DIR_IN, buf, 20);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, host_setup, host_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(space_blocks), T(space_filemarks_and_eod), T(space16), T(locate_and_read_position), T(locate16),
		T(erase_and_rewind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
