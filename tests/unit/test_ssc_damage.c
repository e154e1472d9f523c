/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A damaged cartridge as a host sees it: a middle segment cut short. READ
 * at a damaged block gets MEDIUM ERROR, UNRECOVERED READ ERROR (03h/11h/00h)
 * with VALID and the residue, and the position moves past it so that
 * reading on works; LOCATE beyond the damage works; SPACE over it stops at
 * it with MEDIUM ERROR and the count not spaced. The load records the
 * damage in the catalog's event log.
 */
#include "tests/unit/scsi_host.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/format.h"
#include "common/vtl_error.h"
#include "vtl/drive/ssc_internal.h"

#define BL 10000 /* 6 records in a 64 KiB segment: segment 2 holds objects 12..17 */
#define NBLK 30
#define BC "E00001L8"

static uint8_t wbuf[BL], rbuf[BL + 64];

static void cmd_read(struct host *h)
{
	uint8_t cdb[6];
	memset(rbuf, 0xEE, sizeof rbuf);
	host_cmd(h, cdb, cdb_read6(cdb, false, false, BL), SCSI_DIR_IN, rbuf, BL);
}

static void expect_block(struct host *h, uint64_t i)
{
	cmd_read(h);
	expect_good(h);
	gen_data(wbuf, BL, 500 + i, false);
	if (memcmp(rbuf, wbuf, BL) != 0)
		fail_msg("block %llu reads back wrong", (unsigned long long)i);
}

static void locate(struct host *h, uint32_t obj)
{
	uint8_t cdb[10];
	host_cmd(h, cdb, cdb_locate10(cdb, obj), SCSI_DIR_NONE, NULL, 0);
}

static int find_damage(const struct cat_event *ev, void *arg)
{
	if (strstr(ev->what, "cartridge " BC ": damaged: segment cut short in segment file 00000002.seg: "
				 "objects 14..17 unreadable"))
		++*(int *)arg;
	return 0;
}

/* A tape of 30 blocks in 64 KiB segments, unloaded; then segment 2 is cut in its third record. */
static void damaged_tape(struct host *h)
{
	host_pool_quota(h, 0, 64u << 10);
	host_new_cart(h, BC, 0);
	host_load(h, BC);
	uint8_t cdb[6];
	for (unsigned i = 0; i < NBLK; i++) {
		gen_data(wbuf, BL, 500 + i, false);
		host_cmd(h, cdb, cdb_write6(cdb, false, BL), SCSI_DIR_OUT, wbuf, BL);
		expect_good(h);
	}
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	char path[700];
	snprintf(path, sizeof path, "%s/%s/00000002.seg", h->fx->mpath[0], BC);
	assert_int_equal(truncate(path, SEG_HEADER_LEN + 2 * (REC_HEADER_LEN + BL) + 100), 0);
	host_load(h, BC);
}

static void read_at_damage(void **state)
{
	struct host *h = *state;
	damaged_tape(h);
	int events = 0;
	EXPECT_RC(catalog_event_list(h->cat, 0, 0, find_damage, &events), 0);
	assert_int_equal(events, 1);
	locate(h, 12);
	expect_good(h);
	expect_block(h, 12);
	expect_block(h, 13);
	/* The first damaged block: MEDIUM ERROR, VALID, INFORMATION = the residue (the whole request). */
	cmd_read(h);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	assert_int_equal(sense_info(h), BL);
	assert_int_equal(host_position(h), 15);
	/* Reading on: the other damaged blocks one by one, then the data after them. */
	for (unsigned i = 15; i < 18; i++) {
		cmd_read(h);
		expect_sense(h, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
		assert_int_equal(host_position(h), i + 1);
	}
	expect_block(h, 18);
	/* LOCATE beyond it, and back before it. */
	locate(h, 25);
	expect_good(h);
	expect_block(h, 25);
	locate(h, 3);
	expect_good(h);
	expect_block(h, 3);
}

static void space_over_damage(void **state)
{
	struct host *h = *state;
	damaged_tape(h);
	uint8_t cdb[6];
	locate(h, 12);
	expect_good(h);
	/* Forward: stops at the damage after 2 blocks, MEDIUM ERROR, INFORMATION = 8 not spaced. */
	host_cmd(h, cdb, cdb_space6(cdb, 0, 10), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	assert_int_equal(sense_info(h), 8);
	assert_int_equal(host_position(h), 14);
	/* Backward from 20: stops after it, at 18, with 8 of 10 not spaced. */
	locate(h, 20);
	host_cmd(h, cdb, cdb_space6(cdb, 0, -10), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	assert_int_equal(sense_info(h), 8);
	assert_int_equal(host_position(h), 18);
	/* Beyond the damage a space is as before, to end of data. */
	host_cmd(h, cdb, cdb_space6(cdb, 0, 5), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 23);
	host_cmd(h, cdb, cdb_space6(cdb, 0, 10), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	assert_int_equal(sense_info(h), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(read_at_damage, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(space_over_damage, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
