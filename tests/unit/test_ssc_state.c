/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The drive's readiness as a host sees it: unit attentions per nexus,
 * TEST UNIT READY and REQUEST SENSE through loads and unloads, PREVENT
 * ALLOW MEDIUM REMOVAL, LOAD UNLOAD, cleaning cartridges and the LTO
 * generation rules.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>
#include <unistd.h>

#include "common/vtl_error.h"

static void tur(struct host *h)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x00), SCSI_DIR_NONE, NULL, 0);
}

static void no_medium_then_loaded(void **state)
{
	struct host *h = *state;
	tur(h);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	host_new_cart(h, "A00001L8", 0);
	host_load(h, "A00001L8"); /* checks the NOT READY TO READY attention */
	tur(h);
	expect_good(h);
}

static void unit_attention_per_nexus(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00001L8", 0);
	host_load(h, "A00001L8");
	/* A second initiator first learns of the power-on, and only then of nothing else (power-on covers it). */
	h->nexus = 0x200;
	uint8_t inq[6] = {0x12, 0, 0, 0, 36, 0};
	uint8_t b[64];
	host_cmd(h, inq, 6, SCSI_DIR_IN, b, 36);
	expect_good(h); /* INQUIRY neither reports nor clears it */
	tur(h);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	tur(h);
	expect_good(h);
	/* An eject and a new load: both nexuses are told, each once. */
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	assert_string_equal(bc, "A00001L8");
	struct ssc_medium m = {.barcode = "A00001L8"};
	char err[128];
	EXPECT_RC(ssc_insert(h->d, &m, err, sizeof err), 0);
	for (uint64_t n = 0x100; n <= 0x200; n += 0x100) {
		h->nexus = n;
		tur(h);
		expect_sense(h, SK_UNIT_ATTENTION, ASC_NOT_READY_TO_READY);
		tur(h);
		expect_good(h);
	}
}

static void request_sense_reports_and_clears(void **state)
{
	struct host *h = *state;
	ssc_reset(h->d);
	uint8_t rs[6] = {0x03, 0, 0, 0, 18, 0};
	uint8_t b[32];
	host_cmd(h, rs, 6, SCSI_DIR_IN, b, 18);
	expect_good(h);
	assert_int_equal(h->c.data_len, 18);
	assert_int_equal(b[0], 0x70);
	assert_int_equal(b[2] & 0x0F, SK_UNIT_ATTENTION);
	assert_int_equal(b[12], 0x29);
	host_cmd(h, rs, 6, SCSI_DIR_IN, b, 18);
	assert_int_equal(b[2] & 0x0F, SK_NOT_READY); /* no medium: the state TEST UNIT READY would report */
	assert_int_equal(b[12], 0x3A);
	/* Descriptor format when asked. */
	rs[1] = 1;
	host_cmd(h, rs, 6, SCSI_DIR_IN, b, 32);
	expect_good(h);
	assert_int_equal(b[0], 0x72);
	assert_int_equal(b[1], SK_NOT_READY);
	assert_int_equal(b[2], 0x3A);
	/* The allocation length cuts it. */
	rs[1] = 0;
	rs[4] = 8;
	host_cmd(h, rs, 6, SCSI_DIR_IN, b, 32);
	assert_int_equal(h->c.data_len, 8);
}

static void prevent_blocks_unload(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00002L8", 0);
	host_load(h, "A00002L8");
	uint8_t pa[6] = {0x1E, 0, 0, 0, 1, 0};
	host_cmd(h, pa, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	uint8_t unload[6] = {0x1B, 0, 0, 0, 0, 0};
	host_cmd(h, unload, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED);
	EXPECT_RC(ssc_eject(h->d), VTL_E_BUSY);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), VTL_E_BUSY);
	/* A reserved value of PREVENT. */
	pa[4] = 2;
	host_cmd(h, pa, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_true(h->c.sense.sks_valid && h->c.sense.sks_cdb);
	assert_int_equal(h->c.sense.sks_field, 4);
	/* Allow, then unload: the cartridge waits in the drive, not ready, until the robot takes it. */
	pa[4] = 0;
	host_cmd(h, pa, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	host_cmd(h, unload, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	tur(h);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	/* LOAD again before the robot takes it. */
	uint8_t load[6] = {0x1B, 0, 0, 0, 1, 0};
	host_cmd(h, load, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	tur(h);
	expect_good(h);
	/* A nexus that goes away takes its prevent with it. */
	pa[4] = 1;
	host_cmd(h, pa, 6, SCSI_DIR_NONE, NULL, 0);
	ssc_nexus_lost(h->d, HOST_NEXUS);
	EXPECT_RC(ssc_eject(h->d), 0);
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	tur(h);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET); /* the forgotten nexus starts afresh */
	/* LOAD with EOT set is not allowed; LOAD UNLOAD with nothing in the drive is NOT READY. */
	load[4] = 0x05;
	host_cmd(h, load, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	load[4] = 0x01;
	host_cmd(h, load, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
}

static void unload_with_hold(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00003L8", 0);
	host_load(h, "A00003L8");
	/* HOLD keeps the cartridge in the drive: not ready until a LOAD, and the robot cannot take it. */
	uint8_t unload[6] = {0x1B, 0, 0, 0, 0x08, 0};
	host_cmd(h, unload, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	tur(h);
	expect_sense(h, SK_NOT_READY, ASC_NOT_READY_INIT_REQUIRED);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), VTL_E_BUSY);
	uint8_t load[6] = {0x1B, 0, 0, 0, 0x01, 0};
	host_cmd(h, load, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	tur(h);
	expect_good(h);
	/* Unload without HOLD ejects it; LOAD with HOLD then only brings it back to the held position. */
	unload[4] = 0;
	host_cmd(h, unload, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	tur(h);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	load[4] = 0x09;
	host_cmd(h, load, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	tur(h);
	expect_sense(h, SK_NOT_READY, ASC_NOT_READY_INIT_REQUIRED);
	/* The operator's eject button ejects a held cartridge. */
	EXPECT_RC(ssc_eject(h->d), 0);
	EXPECT_RC(ssc_remove(h->d, bc), 0);
}

/* MODE SELECT(6) of page 1Ch: flags (DEXCPT 08h, TEST 04h), MRIE and the test flag number. */
static void select_ie(struct host *h, uint8_t flags, uint8_t mrie, int32_t test_flag)
{
	uint8_t list[4 + 12] = {0};
	list[4] = 0x1C;
	list[5] = 10;
	list[6] = flags;
	list[7] = mrie;
	uint32_t f = (uint32_t)test_flag;
	list[12] = (uint8_t)(f >> 24);
	list[13] = (uint8_t)(f >> 16);
	list[14] = (uint8_t)(f >> 8);
	list[15] = (uint8_t)f;
	uint8_t cdb[6] = {0x15, 0x10, 0, 0, sizeof list, 0};
	host_cmd(h, cdb, 6, SCSI_DIR_OUT, list, sizeof list);
	expect_good(h);
}

static void informational_exceptions(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "A00004L8", 0);
	host_load(h, "A00004L8");
	/* MRIE 4 and a test: the next command completes and reports RECOVERED ERROR 5Dh/FFh, once. */
	select_ie(h, 0x04, 4, 0);
	tur(h);
	expect_sense(h, SK_RECOVERED_ERROR, ASC_FAILURE_PREDICTION_TEST);
	tur(h);
	expect_good(h);
	/* MRIE 4: a new TapeAlert flag (set through the test flag number) is reported as 5Dh/00h. */
	select_ie(h, 0x04, 4, 20);
	uint8_t rp[10] = {0x34};
	uint8_t b[32];
	host_cmd(h, rp, 10, SCSI_DIR_IN, b, 20);
	expect_sense(h, SK_RECOVERED_ERROR, ASC_FAILURE_PREDICTION);
	assert_int_equal(h->c.data_len, 20); /* the data still arrived */
	tur(h);
	expect_good(h);
	/* MRIE 2: a unit attention to every nexus. */
	select_ie(h, 0x04, 2, 21);
	tur(h);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_FAILURE_PREDICTION);
	h->nexus = 0x300;
	tur(h);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	h->nexus = HOST_NEXUS;
	/* MRIE 6: only REQUEST SENSE tells, with NO SENSE. */
	select_ie(h, 0x04, 6, 22);
	tur(h);
	expect_good(h);
	uint8_t rs[6] = {0x03, 0, 0, 0, 18, 0};
	host_cmd(h, rs, 6, SCSI_DIR_IN, b, 18);
	expect_good(h);
	assert_int_equal(b[2] & 0x0F, SK_NO_SENSE);
	assert_int_equal(b[12], 0x5D);
	assert_int_equal(b[13], 0x00);
	/* DEXCPT set again: nothing is reported. */
	select_ie(h, 0x0C, 4, 23);
	tur(h);
	expect_good(h);
}

static void generation_rules(void **state)
{
	struct host *h = *state;
	/* LTO-8 reads and writes LTO-7 and LTO-8, refuses LTO-6 and LTO-9. */
	const char *refused[] = {"A00010L6", "A00011L9"};
	for (unsigned i = 0; i < 2; i++) {
		host_new_cart(h, refused[i], 0);
		struct ssc_medium m;
		memset(&m, 0, sizeof m);
		strcpy(m.barcode, refused[i]);
		char err[128] = "";
		EXPECT_RC(ssc_insert(h->d, &m, err, sizeof err), VTL_E_INCOMPATIBLE);
		assert_non_null(strstr(err, "cannot read"));
		struct ssc_status st;
		ssc_status(h->d, &st);
		assert_int_equal(st.state, SSC_EMPTY);
	}
	host_new_cart(h, "A00012L7", 0);
	host_load(h, "A00012L7");
	/* An LTO-9 drive reads and writes LTO-8 but not LTO-7. */
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_eject(h->d), 0);
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	host_drive_model(h, "IBM", "ULT3580-TD9");
	struct ssc_medium m = {.barcode = "A00012L7"};
	char err[128];
	EXPECT_RC(ssc_insert(h->d, &m, err, sizeof err), VTL_E_INCOMPATIBLE);
}

static void cleaning_cartridge(void **state)
{
	struct host *h = *state;
	host_new_cart(h, "CLN001L1", 0);
	struct ssc_medium m = {.barcode = "CLN001L1"};
	char err[128];
	EXPECT_RC(ssc_insert(h->d, &m, err, sizeof err), 0);
	tur(h);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_NOT_READY_TO_READY);
	tur(h);
	/* The configured cleaning time of the test drive is 0: the cycle ends at once and the drive ejects it. */
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	struct ssc_status st;
	ssc_status(h->d, &st);
	assert_int_equal(st.state, SSC_EJECTED);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	assert_string_equal(bc, "CLN001L1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(no_medium_then_loaded, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(unit_attention_per_nexus, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(request_sense_reports_and_clears, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(prevent_blocks_unload, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(unload_with_hold, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(informational_exceptions, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(generation_rules, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(cleaning_cartridge, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
