/* SPDX-License-Identifier: Apache-2.0 */
/* Table-driven dispatch: what a host sees for unknown, short, conflicting and medium-less commands. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vtl/scsi/dispatch.h"
#include "vtl/scsi/reserve.h"

#include "common/grow.h"

static int calls;
static const char *last;

static void h_tur(struct scsi_dev *d, struct scsi_cmd *c) { (void)d; calls++; last = "tur"; scsi_done(c, 0); }
static void h_read(struct scsi_dev *d, struct scsi_cmd *c) { (void)d; calls++; last = "read"; scsi_done(c, 512); }
static void h_pr_keys(struct scsi_dev *d, struct scsi_cmd *c) { (void)d; calls++; last = "keys"; scsi_done(c, 8); }
static void h_pr_res(struct scsi_dev *d, struct scsi_cmd *c) { (void)d; calls++; last = "res"; scsi_done(c, 8); }

static const struct scsi_op table[] = {
	{0x00, SA_NONE, 6, OP_RES_ALLOWED, "TEST UNIT READY", h_tur, {0x00}, 0},
	{0x08, SA_NONE, 6, OP_NEEDS_MEDIUM | OP_RES_READ, "READ(6)", h_read, {0x08}, 0},
	{0x5E, 0x00, 10, 0, "PERSISTENT RESERVE IN / READ KEYS", h_pr_keys, {0x5E, 0x00}, 0},
	{0x5E, 0x01, 10, 0, "PERSISTENT RESERVE IN / READ RESERVATION", h_pr_res, {0x5E, 0x01}, 0},
};
#define N (VTL_ARRAY_SIZE(table))

static struct scsi_cmd cmd_of(const uint8_t *cdb, uint8_t len)
{
	struct scsi_cmd c;
	memset(&c, 0, sizeof c);
	memcpy(c.cdb, cdb, len);
	c.cdb_len = len;
	c.status = 0xFF;
	return c;
}

static void runs_the_handler(void **state)
{
	(void)state;
	struct scsi_dev_state st = {0};
	calls = 0;
	uint8_t tur[6] = {0};
	struct scsi_cmd c = cmd_of(tur, 6);
	scsi_dispatch(table, N, NULL, &st, &c);
	assert_int_equal(c.status, SCSI_GOOD);
	assert_string_equal(last, "tur");
	uint8_t pr[10] = {0x5E, 0x01};
	c = cmd_of(pr, 10);
	scsi_dispatch(table, N, NULL, &st, &c);
	assert_string_equal(last, "res");
	assert_int_equal(c.data_len, 8);
	assert_int_equal(calls, 2);
}

static void unknown_opcode_and_service_action(void **state)
{
	(void)state;
	struct scsi_dev_state st = {0};
	calls = 0;
	uint8_t bad[6] = {0x1A}; /* MODE SENSE(6): not in this table */
	struct scsi_cmd c = cmd_of(bad, 6);
	scsi_dispatch(table, N, NULL, &st, &c);
	assert_int_equal(c.status, SCSI_CHECK_CONDITION);
	assert_int_equal(c.sense.key, SK_ILLEGAL_REQUEST);
	assert_int_equal(c.sense.asc, ASC_INVALID_OPCODE);
	uint8_t sa[10] = {0x5E, 0x07};
	c = cmd_of(sa, 10);
	scsi_dispatch(table, N, NULL, &st, &c);
	assert_int_equal(c.sense.asc, ASC_INVALID_FIELD_IN_CDB);
	assert_true(c.sense.sks_valid && c.sense.sks_cdb);
	assert_int_equal(c.sense.sks_field, 1);
	assert_int_equal(c.sense.sks_bit, 4);
	assert_int_equal(calls, 0);
}

static void short_cdb_conflict_and_no_medium(void **state)
{
	(void)state;
	calls = 0;
	uint8_t pr[10] = {0x5E, 0x00};
	struct scsi_dev_state st = {0};
	struct scsi_cmd c = cmd_of(pr, 6); /* a 10-byte command delivered as 6 */
	scsi_dispatch(table, N, NULL, &st, &c);
	assert_int_equal(c.status, SCSI_CHECK_CONDITION);
	assert_int_equal(c.sense.asc, ASC_INVALID_FIELD_IN_CDB);
	uint8_t rd[6] = {0x08, 0, 0, 1, 0, 0};
	struct scsi_res res;
	res_init(&res);
	res.spc2_held = true; /* another nexus (1) holds an SPC-2 reservation */
	res.spc2_nexus = 1;
	st.res = &res;
	c = cmd_of(rd, 6);
	scsi_dispatch(table, N, NULL, &st, &c);
	assert_int_equal(c.status, SCSI_RESERVATION_CONFLICT);
	st.res = NULL;
	struct scsi_sense no_medium = sense_of(SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	st.not_ready = &no_medium;
	c = cmd_of(rd, 6);
	scsi_dispatch(table, N, NULL, &st, &c);
	assert_int_equal(c.status, SCSI_CHECK_CONDITION);
	assert_int_equal(c.sense.key, SK_NOT_READY);
	assert_int_equal(c.sense.asc, ASC_MEDIUM_NOT_PRESENT);
	/* TEST UNIT READY itself is dispatched without a medium (its handler reports NOT READY). */
	uint8_t tur[6] = {0};
	c = cmd_of(tur, 6);
	scsi_dispatch(table, N, NULL, &st, &c);
	assert_int_equal(calls, 1);
}

static void group_code_lengths(void **state)
{
	(void)state;
	assert_int_equal(scsi_cdb_len_of(0x08), 6);   /* READ(6) */
	assert_int_equal(scsi_cdb_len_of(0x34), 10);  /* READ POSITION */
	assert_int_equal(scsi_cdb_len_of(0x5E), 10);  /* PERSISTENT RESERVE IN */
	assert_int_equal(scsi_cdb_len_of(0x91), 16);  /* SPACE(16) */
	assert_int_equal(scsi_cdb_len_of(0xA5), 12);  /* MOVE MEDIUM */
	assert_int_equal(scsi_cdb_len_of(0xC0), 0);   /* vendor specific */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_the_handler),
		cmocka_unit_test(unknown_opcode_and_service_action),
		cmocka_unit_test(short_cdb_conflict_and_no_medium),
		cmocka_unit_test(group_code_lengths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
