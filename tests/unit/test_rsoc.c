/* SPDX-License-Identifier: Apache-2.0 */
/*
 * REPORT LUNS and REPORT SUPPORTED OPERATION CODES as sg_luns and
 * sg_opcodes decode them: the LUN list, the command list with and without
 * timeouts, one command's CDB usage map, and the refused options.
 */
#include "tests/unit/scsi_host.h"

#include <string.h>

#include "common/grow.h"

static void expect_cdb_field(struct host *h, uint16_t byte, int bit)
{
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_true(h->c.sense.sks_valid && h->c.sense.sks_cdb);
	assert_int_equal(h->c.sense.sks_field, byte);
	assert_int_equal(h->c.sense.sks_bit_valid, bit >= 0);
	if (bit >= 0)
		assert_int_equal(h->c.sense.sks_bit, bit);
}

static int report_luns(struct host *h, uint8_t select, uint32_t alloc, uint8_t *b, size_t xfer)
{
	uint8_t cdb[12] = {0xA0, 0, select};
	be_put(cdb + 6, alloc, 4);
	memset(b, 0xEE, xfer);
	return host_cmd(h, cdb, 12, SCSI_DIR_IN, b, xfer);
}

static void luns_default(void **state)
{
	struct host *h = *state;
	uint8_t b[64];
	report_luns(h, 0, sizeof b, b, sizeof b);
	expect_good(h);
	assert_int_equal(h->c.data_len, 16);
	const uint8_t want[16] = {0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	assert_memory_equal(b, want, 16);
	/* A new initiator's REPORT LUNS neither reports nor clears its power-on attention. */
	h->nexus = 0x777;
	report_luns(h, 0, sizeof b, b, sizeof b);
	expect_good(h);
	uint8_t tur[6] = {0x00};
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
}

static void luns_list(void **state)
{
	struct host *h = *state;
	const uint16_t luns[] = {0, 1, 7, 255, 256, 0x3FFF, 0x4000};
	ssc_set_luns(h->d, luns, VTL_ARRAY_SIZE(luns));
	uint8_t b[128];
	/* Peripheral device addressing below 256, flat space above; 0x4000 is not a single-level LUN. */
	const uint8_t want[6][2] = {{0x00, 0x00}, {0x00, 0x01}, {0x00, 0x07}, {0x00, 0xFF}, {0x41, 0x00}, {0x7F, 0xFF}};
	for (uint8_t select = 0; select <= 2; select += 2) {
		report_luns(h, select, sizeof b, b, sizeof b);
		expect_good(h);
		assert_int_equal(be_get(b, 4), 48);
		assert_int_equal(be_get(b + 4, 4), 0);
		assert_int_equal(h->c.data_len, 56);
		for (unsigned i = 0; i < 6; i++) {
			assert_memory_equal(b + 8 + 8 * i, want[i], 2);
			assert_int_equal(be_get(b + 10 + 8 * i, 6), 0);
		}
	}
	/* The allocation length cuts the list, not LUN LIST LENGTH; so does the transfer length. */
	report_luns(h, 0, 16, b, sizeof b);
	expect_good(h);
	assert_int_equal(h->c.data_len, 16);
	assert_int_equal(be_get(b, 4), 48);
	assert_int_equal(b[16], 0xEE);
	report_luns(h, 0, sizeof b, b, 20);
	assert_int_equal(h->c.data_len, 20);
	assert_int_equal(be_get(b, 4), 48);
	/* Well-known logical units only: there are none. */
	report_luns(h, 1, sizeof b, b, sizeof b);
	expect_good(h);
	assert_int_equal(h->c.data_len, 8);
	assert_int_equal(be_get(b, 4), 0);
}

static void luns_refused(void **state)
{
	struct host *h = *state;
	uint8_t b[64];
	const uint8_t bad_select[] = {0x03, 0x10, 0x11, 0x12, 0xFF};
	for (unsigned i = 0; i < sizeof bad_select; i++) {
		report_luns(h, bad_select[i], sizeof b, b, sizeof b);
		expect_cdb_field(h, 2, -1);
	}
	const uint32_t bad_alloc[] = {0, 1, 8, 15};
	for (unsigned i = 0; i < VTL_ARRAY_SIZE(bad_alloc); i++) {
		report_luns(h, 0, bad_alloc[i], b, sizeof b);
		expect_cdb_field(h, 6, -1);
	}
	/* A CDB shorter than twelve bytes. */
	uint8_t cdb[12] = {0xA0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0};
	host_cmd(h, cdb, 10, SCSI_DIR_IN, b, sizeof b);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
}

/* ------------------------------------------------- REPORT SUPPORTED OPERATION CODES */

static uint8_t big[8192];

static int rsoc(struct host *h, uint8_t options, uint8_t opcode, uint16_t sa, uint32_t alloc, size_t xfer)
{
	uint8_t cdb[12] = {0xA3, 0x0C, options, opcode};
	be_put(cdb + 4, sa, 2);
	be_put(cdb + 6, alloc, 4);
	memset(big, 0xEE, sizeof big);
	return host_cmd(h, cdb, 12, SCSI_DIR_IN, big, xfer);
}

/* Commands the drive must list, with their service action (-1: none) and CDB length. */
static const struct {
	uint8_t opcode;
	int sa;
	uint16_t len;
} must[] = {
	{0x00, -1, 6},	{0x03, -1, 6},	{0x08, -1, 6},	{0x0A, -1, 6},	{0x12, -1, 6},	{0x16, -1, 6},
	{0x17, -1, 6},	{0x1E, -1, 6},	{0x34, -1, 10}, {0x56, -1, 10}, {0x57, -1, 10}, {0x5E, 0, 10},
	{0x5E, 1, 10},	{0x5E, 2, 10},	{0x5E, 3, 10},	{0x5F, 0, 10},	{0x5F, 1, 10},	{0x5F, 2, 10},
	{0x5F, 3, 10},	{0x5F, 4, 10},	{0x5F, 5, 10},	{0x5F, 6, 10},	{0x8C, -1, 16}, {0x92, -1, 16},
	{0xA0, -1, 12}, {0xA3, 0x0C, 12},
};

static void all_commands(void **state)
{
	struct host *h = *state;
	rsoc(h, 0, 0, 0, sizeof big, sizeof big);
	expect_good(h);
	size_t len = be_get(big, 4);
	assert_int_equal(h->c.data_len, 4 + len);
	assert_int_equal(len % 8, 0);
	size_t n = len / 8;
	assert_true(n >= VTL_ARRAY_SIZE(must));
	bool found[VTL_ARRAY_SIZE(must)] = {false};
	for (size_t i = 0; i < n; i++) {
		const uint8_t *d = big + 4 + 8 * i;
		uint8_t opcode = d[0];
		bool servactv = d[5] & 1;
		uint16_t sa = (uint16_t)be_get(d + 2, 2);
		assert_int_equal(d[1], 0);
		assert_int_equal(d[4], 0);
		assert_int_equal(d[5] & ~1, 0); /* CTDP 0 without RCTD */
		assert_int_equal(servactv, opcode == 0x5E || opcode == 0x5F || opcode == 0xA3);
		if (!servactv)
			assert_int_equal(sa, 0);
		/* No command listed twice. */
		for (size_t j = 0; j < i; j++) {
			const uint8_t *e = big + 4 + 8 * j;
			assert_false(e[0] == opcode && be_get(e + 2, 2) == sa && (e[5] & 1) == servactv);
		}
		for (unsigned k = 0; k < VTL_ARRAY_SIZE(must); k++)
			if (must[k].opcode == opcode && (must[k].sa < 0 ? !servactv : servactv && must[k].sa == sa)) {
				assert_int_equal(be_get(d + 6, 2), must[k].len);
				found[k] = true;
			}
	}
	for (unsigned k = 0; k < VTL_ARRAY_SIZE(must); k++)
		if (!found[k])
			fail_msg("opcode %02Xh/%d not listed", must[k].opcode, must[k].sa);
	/* A short allocation length: the first bytes, with the full COMMAND DATA LENGTH. */
	rsoc(h, 0, 0, 0, 10, sizeof big);
	expect_good(h);
	assert_int_equal(h->c.data_len, 10);
	assert_int_equal(be_get(big, 4), len);
	assert_int_equal(big[10], 0xEE);
	/* The requested opcode and service action are ignored for 000b. */
	rsoc(h, 0, 0x0A, 7, sizeof big, sizeof big);
	assert_int_equal(be_get(big, 4), len);
}

static void all_commands_with_timeouts(void **state)
{
	struct host *h = *state;
	rsoc(h, 0, 0, 0, sizeof big, sizeof big);
	size_t n = be_get(big, 4) / 8;
	rsoc(h, 0x80, 0, 0, sizeof big, sizeof big);
	expect_good(h);
	assert_int_equal(be_get(big, 4), n * 20);
	assert_int_equal(h->c.data_len, 4 + n * 20);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *d = big + 4 + 20 * i;
		assert_int_equal(d[5] & 0x02, 0x02); /* CTDP */
		const uint8_t *t = d + 8;
		assert_int_equal(be_get(t, 2), 0x0A);
		assert_int_equal(t[2], 0);
		assert_int_equal(be_get(t + 4, 4), 0);  /* no nominal processing time given */
		assert_true(be_get(t + 8, 4) >= 60);    /* a recommended timeout for every command */
	}
}

/* The one-command answer for (options, opcode, sa); returns SUPPORT. */
static uint8_t one(struct host *h, uint8_t options, uint8_t opcode, uint16_t sa)
{
	rsoc(h, options, opcode, sa, sizeof big, sizeof big);
	expect_good(h);
	return big[1] & 0x07;
}

static void one_command(void **state)
{
	struct host *h = *state;
	/* WRITE(6): FIXED, the transfer length; the control byte is not used. */
	assert_int_equal(one(h, 1, 0x0A, 0), 0x03);
	assert_int_equal(big[0], 0);
	assert_int_equal(big[1], 0x03);
	assert_int_equal(be_get(big + 2, 2), 6);
	const uint8_t write6[6] = {0x0A, 0x01, 0xFF, 0xFF, 0xFF, 0x00};
	assert_memory_equal(big + 4, write6, 6);
	assert_int_equal(h->c.data_len, 10);
	/* PERSISTENT RESERVE OUT / RESERVE: the service action, SCOPE/TYPE, the parameter list length. */
	assert_int_equal(one(h, 2, 0x5F, 1), 0x03);
	const uint8_t reserve[10] = {0x5F, 0x01, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x00};
	assert_int_equal(be_get(big + 2, 2), 10);
	assert_memory_equal(big + 4, reserve, 10);
	/* REGISTER ignores SCOPE and TYPE. */
	one(h, 2, 0x5F, 0);
	assert_int_equal(big[4 + 2], 0);
	/* The command itself. */
	assert_int_equal(one(h, 2, 0xA3, 0x0C), 0x03);
	const uint8_t self[12] = {0xA3, 0x0C, 0x87, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0};
	assert_memory_equal(big + 4, self, 12);
	/* REPORT LUNS: SELECT REPORT and the allocation length. */
	one(h, 1, 0xA0, 0);
	const uint8_t luns[12] = {0xA0, 0, 0xFF, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0};
	assert_memory_equal(big + 4, luns, 12);
	/* Not supported: SUPPORT 001b, no CDB. */
	assert_int_equal(one(h, 1, 0x28, 0), 0x01); /* READ(10) is not a tape command */
	assert_int_equal(be_get(big + 2, 2), 0);
	assert_int_equal(h->c.data_len, 4);
	assert_int_equal(one(h, 2, 0x5E, 0x07), 0x01);
	assert_int_equal(one(h, 3, 0x5F, 0x1F), 0x01);
	/* 011b: the service action only where the opcode has them. */
	assert_int_equal(one(h, 3, 0x0A, 0x1234), 0x03);
	assert_int_equal(big[4], 0x0A);
	assert_int_equal(one(h, 3, 0x5E, 2), 0x03);
	assert_int_equal(big[5], 0x02);
	/* With RCTD: CTDP and the timeouts descriptor after the usage data. */
	one(h, 0x81, 0x01, 0);
	assert_int_equal(big[1], 0x83);
	assert_int_equal(be_get(big + 2, 2), 6);
	const uint8_t *t = big + 4 + 6;
	assert_int_equal(be_get(t, 2), 0x0A);
	assert_true(be_get(t + 8, 4) >= 60);
	assert_int_equal(h->c.data_len, 4 + 6 + 12);
	/* A short allocation length. */
	rsoc(h, 1, 0x0A, 0, 5, sizeof big);
	assert_int_equal(h->c.data_len, 5);
	assert_int_equal(big[5], 0xEE);
}

static void one_command_refused(void **state)
{
	struct host *h = *state;
	/* 001b with an opcode that has service actions; 010b with one that has none. */
	rsoc(h, 1, 0x5E, 0, sizeof big, sizeof big);
	expect_cdb_field(h, 2, 2);
	rsoc(h, 1, 0xA3, 0x0C, sizeof big, sizeof big);
	expect_cdb_field(h, 2, 2);
	rsoc(h, 2, 0x0A, 0, sizeof big, sizeof big);
	expect_cdb_field(h, 2, 2);
	for (uint8_t opt = 4; opt <= 7; opt++) {
		rsoc(h, opt, 0x00, 0, sizeof big, sizeof big);
		expect_cdb_field(h, 2, 2);
	}
	/* REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS is not there: the service action field. */
	uint8_t rstmf[12] = {0xA3, 0x0D, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0};
	host_cmd(h, rstmf, 12, SCSI_DIR_IN, big, 16);
	expect_cdb_field(h, 1, 4);
}

/* Every listed command's usage map: its opcode, its service action, a CDB as long as the list says. */
static void usage_maps_match_the_list(void **state)
{
	struct host *h = *state;
	static uint8_t list[8192];
	rsoc(h, 0, 0, 0, sizeof big, sizeof big);
	memcpy(list, big, sizeof list);
	size_t n = be_get(list, 4) / 8;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *d = list + 4 + 8 * i;
		bool servactv = d[5] & 1;
		uint16_t sa = (uint16_t)be_get(d + 2, 2);
		assert_int_equal(one(h, servactv ? 2 : 1, d[0], sa), 0x03);
		uint16_t len = (uint16_t)be_get(big + 2, 2);
		assert_int_equal(len, be_get(d + 6, 2));
		assert_int_equal(big[4], d[0]);
		if (servactv)
			assert_int_equal(big[5] & 0x1F, sa);
		assert_int_equal(big[4 + len - 1], 0); /* control byte: NACA and LINK unsupported */
		assert_int_equal(h->c.data_len, 4 + len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(luns_default, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(luns_list, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(luns_refused, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(all_commands, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(all_commands_with_timeouts, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(one_command, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(one_command_refused, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(usage_maps_match_the_list, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
