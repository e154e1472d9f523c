/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Append-only mode as a host (IBM Storage Protect's CHECKTAPEPOS) sees it:
 * the Device Configuration Extension page's WRITE MODE and its refusals;
 * WRITE, WRITE FILEMARKS and ERASE refused before end of data with nothing
 * changed; ALLOW OVERWRITE naming the position (and refused when it does
 * not), used up by one command; FORMAT MEDIUM after ALLOW OVERWRITE format.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>

#include "common/vtl_error.h"
#include "vtl/drive/ssc_internal.h"

#define BUF 512
#define BLK 1000u

static uint8_t wbuf[BLK], rbuf[BLK * 2];

/* MODE SELECT(10) of page 10h/01h with this WRITE MODE. */
static int select_write_mode(struct host *h, uint8_t mode)
{
	uint8_t list[8 + 32] = {0};
	list[3] = 0x10;
	uint8_t *p = list + 8;
	p[0] = 0x50;
	p[1] = 0x01;
	p[3] = 0x1C;
	p[5] = (uint8_t)(mode << 4);
	uint8_t cdb[10] = {0x55, 0x10, 0, 0, 0, 0, 0, 0, sizeof list, 0};
	return host_cmd(h, cdb, 10, SCSI_DIR_OUT, list, sizeof list);
}

/* MODE SENSE(10) of page 10h/01h with page control pc: byte 5 of the page. */
static uint8_t write_mode_byte(struct host *h, uint8_t pc)
{
	uint8_t b[BUF];
	uint8_t cdb[10] = {0x5A, 0x08, (uint8_t)(pc << 6 | 0x10), 0x01, 0, 0, 0, BUF >> 8, BUF & 0xFF, 0};
	host_cmd(h, cdb, 10, SCSI_DIR_IN, b, BUF);
	expect_good(h);
	assert_int_equal(h->c.data_len, 8 + 32);
	assert_int_equal(b[8], 0x50);
	assert_int_equal(b[9], 0x01);
	assert_int_equal(b[10] << 8 | b[11], 0x1C);
	return b[8 + 5];
}

static int allow_overwrite(struct host *h, uint8_t what, uint8_t partition, uint64_t object)
{
	uint8_t cdb[16] = {0x82, 0, what, partition};
	be_put(cdb + 4, object, 8);
	return host_cmd(h, cdb, 16, SCSI_DIR_NONE, NULL, 0);
}

static int write_block(struct host *h, uint64_t k)
{
	uint8_t cdb[6];
	gen_data(wbuf, BLK, k, false);
	return host_cmd(h, cdb, cdb_write6(cdb, false, BLK), SCSI_DIR_OUT, wbuf, BLK);
}

static void simple(struct host *h, uint8_t op, uint32_t n)
{
	uint8_t cdb[6] = {op, 0, (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n, 0};
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
}

static void locate(struct host *h, uint32_t obj)
{
	uint8_t cdb[10];
	host_cmd(h, cdb, cdb_locate10(cdb, obj), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

/* Fails unless the tape holds exactly blocks 0..n-1 as written (read from BOT to end of data). */
static void expect_tape(struct host *h, unsigned n)
{
	locate(h, 0);
	for (unsigned i = 0; i < n; i++) {
		uint8_t cdb[6];
		host_cmd(h, cdb, cdb_read6(cdb, false, false, BLK), SCSI_DIR_IN, rbuf, BLK);
		expect_good(h);
		gen_data(wbuf, BLK, i, false);
		assert_memory_equal(rbuf, wbuf, BLK);
	}
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_read6(cdb, false, false, BLK), SCSI_DIR_IN, rbuf, BLK);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
}

static void expect_refused(struct host *h, uint64_t pos)
{
	expect_sense(h, SK_DATA_PROTECT, ASC_APPEND_ONLY_OVERWRITE);
	assert_int_equal(host_position(h), pos);
}

/* A cartridge with blocks 0, 1, 2, the drive in append-only mode. */
static void three_blocks_append_only(struct host *h, const char *bc)
{
	host_new_cart(h, bc, 0);
	host_load(h, bc);
	for (unsigned i = 0; i < 3; i++) {
		write_block(h, i);
		expect_good(h);
	}
	select_write_mode(h, 1);
	expect_good(h);
}

/* ------------------------------------------------------------------ tests */

static void page_round_trip(void **state)
{
	struct host *h = *state;
	assert_int_equal(write_mode_byte(h, 0), 0x00);
	assert_int_equal(write_mode_byte(h, 1), 0xF0);
	/* Only the two modes: 2h refused at byte 5 bit 7 of the page (list offset 8). */
	select_write_mode(h, 2);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 8 + 5, 7);
	select_write_mode(h, 0);
	expect_good(h);
	select_write_mode(h, 1);
	expect_good(h);
	assert_int_equal(write_mode_byte(h, 0), 0x10);
	assert_int_equal(write_mode_byte(h, 2), 0x00);
	/* Append-only is not taken back by a MODE SELECT. */
	select_write_mode(h, 0);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 8 + 5, 7);
	assert_int_equal(write_mode_byte(h, 0), 0x10);
}

static void writes_refused_before_eod(void **state)
{
	struct host *h = *state;
	three_blocks_append_only(h, "W00001L8");
	locate(h, 1);
	write_block(h, 9);
	expect_refused(h, 1);
	simple(h, 0x10, 1); /* WRITE FILEMARKS(6) */
	expect_refused(h, 1);
	simple(h, 0x19, 0); /* ERASE(6) */
	expect_refused(h, 1);
	/* WRITE FILEMARKS of 0 writes nothing: it only flushes. */
	simple(h, 0x10, 0);
	expect_good(h);
	expect_tape(h, 3);
	/* At end of data everything goes. */
	write_block(h, 3);
	expect_good(h);
	simple(h, 0x10, 1);
	expect_good(h);
	assert_int_equal(host_position(h), 5);
}

static void allow_overwrite_names_the_position(void **state)
{
	struct host *h = *state;
	three_blocks_append_only(h, "W00002L8");
	locate(h, 2);
	/* A position that is not the drive's: SEQUENTIAL POSITIONING ERROR, and no allowance. */
	allow_overwrite(h, 1, 0, 1);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_SEQUENTIAL_POSITIONING_ERROR);
	write_block(h, 2);
	expect_refused(h, 2);
	/* Fields refused: another partition, an unknown value, reserved bits. */
	allow_overwrite(h, 1, 1, 2);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 3, 7);
	allow_overwrite(h, 3, 0, 2);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 2, 3);
	allow_overwrite(h, 0x11, 0, 2);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_CDB, true, 2, 4);
	/* The position named: one write there, which cuts the tape as any overwrite does. */
	allow_overwrite(h, 1, 0, 2);
	expect_good(h);
	write_block(h, 2);
	expect_good(h);
	/* Used up: back at block 1, the next write needs an allowance of its own. */
	locate(h, 1);
	write_block(h, 1);
	expect_refused(h, 1);
	/* Disabled (0h) takes an allowance back. */
	allow_overwrite(h, 1, 0, 1);
	expect_good(h);
	allow_overwrite(h, 0, 0, 0);
	expect_good(h);
	write_block(h, 1);
	expect_refused(h, 1);
	expect_tape(h, 3);
}

static void format_needs_allow_format(void **state)
{
	struct host *h = *state;
	three_blocks_append_only(h, "W00003L8");
	locate(h, 0);
	/* FORMAT MEDIUM at BOT of a written medium: refused; an allowance for the current position is not enough. */
	simple(h, 0x04, 0);
	expect_refused(h, 0);
	allow_overwrite(h, 1, 0, 0);
	expect_good(h);
	simple(h, 0x04, 0);
	expect_refused(h, 0);
	expect_tape(h, 3);
	locate(h, 0);
	allow_overwrite(h, 2, 0, 0);
	expect_good(h);
	simple(h, 0x04, 0);
	expect_good(h);
	expect_tape(h, 0);
}

/* Unloads the drive and takes the cartridge out; fails unless it was bc. */
static void unload(struct host *h, const char *bc)
{
	uint8_t cdb[6] = {0x1B, 0, 0, 0, 0, 0};
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	char out[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, out), 0);
	assert_string_equal(out, bc);
}

static void load_forgets_allowance(void **state)
{
	struct host *h = *state;
	/* W00005L8 gets three blocks while overwriting is still allowed. */
	host_new_cart(h, "W00005L8", 0);
	host_load(h, "W00005L8");
	for (unsigned i = 0; i < 3; i++) {
		write_block(h, i);
		expect_good(h);
	}
	unload(h, "W00005L8");
	three_blocks_append_only(h, "W00004L8");
	locate(h, 1);
	allow_overwrite(h, 1, 0, 1);
	expect_good(h);
	/* Another cartridge in the drive: the allowance named a position on the first one. */
	unload(h, "W00004L8");
	host_load(h, "W00005L8");
	locate(h, 1);
	write_block(h, 7);
	expect_refused(h, 1);
	expect_tape(h, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(page_round_trip, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(writes_refused_before_eod, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(allow_overwrite_names_the_position, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(format_needs_allow_format, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(load_forgets_allowance, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
