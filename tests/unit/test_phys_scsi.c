/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The physical libraries' SCSI initiator (migrator/phys_scsi.c) over a
 * scripted transport: what the migrator sees (the result, the error in
 * words) when a drive answers with unit attentions, BUSY, sense in either
 * format, or refuses the long READ POSITION; and phys.h's thread contract
 * for moves: a move waits for the drive's running call, and the robot is
 * free while a loaded drive gets ready, which the drive's next call waits for.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/grow.h"
#include "common/scsi_sense.h"
#include "migrator/phys_scsi.h"

#define SCRIPT_MAX 16
#define SENT_MAX 32

/* One scripted answer: a status, sense (encoded in the format asked), data-in. */
struct answer {
	int status;
	bool has_sense, desc;
	struct scsi_sense sense;
	uint8_t data[64];
	size_t data_len;
};

struct fake {
	struct phys_scsi scsi; /* first, as in every implementation */
	struct answer script[SCRIPT_MAX];
	unsigned n, next;
	uint8_t sent[SENT_MAX][2]; /* opcode and byte 1 of each CDB sent */
	unsigned n_sent;
};

_Static_assert(SCRIPT_MAX >= 8, "every test scripts at most 8 answers at a time");

static int fake_execute(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
			unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len, struct phys_scsi_result *res)
{
	(void)u;
	(void)op;
	(void)dir;
	struct fake *f = (struct fake *)s;
	assert_true(cdb_len >= 2);
	assert_true(f->n_sent < SENT_MAX);
	f->sent[f->n_sent][0] = cdb[0];
	f->sent[f->n_sent][1] = cdb[1];
	f->n_sent++;
	assert_true(f->next < f->n); /* a command the script did not expect */
	const struct answer *a = &f->script[f->next++];
	res->status = a->status;
	size_t n = a->data_len < len ? a->data_len : len;
	if (n)
		memcpy(buf, a->data, n);
	res->residual = len - n;
	if (a->has_sense)
		res->sense_len = a->desc ? sense_encode_desc(&a->sense, res->sense, sizeof res->sense)
					 : sense_encode(&a->sense, res->sense, sizeof res->sense);
	return VTL_OK;
}

static const struct phys_scsi_transport fake_transport = {.execute = fake_execute};
static const struct phys_ops no_ops = {.kind = "fake"};

static struct fake *fake_new(unsigned busy_retries)
{
	struct fake *f = calloc(1, sizeof *f);
	assert_non_null(f);
	assert_int_equal(phys_scsi_init(&f->scsi, &no_ops, &fake_transport, busy_retries, 4096), VTL_OK);
	snprintf(f->scsi.changer.name, sizeof f->scsi.changer.name, "changer (fake)");
	return f;
}

static void fake_free(struct fake *f)
{
	phys_scsi_release(&f->scsi);
	free(f);
}

static void answer_status(struct fake *f, int status)
{
	assert_true(f->n < SCRIPT_MAX);
	f->script[f->n++] = (struct answer){.status = status};
}

static void answer_sense(struct fake *f, struct scsi_sense s, bool desc)
{
	assert_true(f->n < SCRIPT_MAX);
	f->script[f->n++] = (struct answer){.status = SCSI_CHECK_CONDITION, .has_sense = true, .desc = desc, .sense = s};
}

static struct phys_scsi_unit drive0 = {.id = 1, .name = "drive 0 (LUN 1)"};

/* A unit attention means the command was not executed: it is sent again, and the second answer counts. */
static void unit_attention_is_retried(void **state)
{
	(void)state;
	struct fake *f = fake_new(2);
	struct phys_scsi_unit u = drive0;
	answer_sense(f, sense_of(SK_UNIT_ATTENTION, ASC_MODE_PARAMETERS_CHANGED), false);
	answer_status(f, SCSI_GOOD);
	struct phys_scsi_reply r;
	assert_int_equal(phys_scsi_test_unit_ready(&f->scsi, &u, &r), VTL_OK);
	assert_int_equal(r.status, SCSI_GOOD);
	assert_int_equal(f->n_sent, 2);
	assert_false(u.position_lost); /* 2Ah says nothing of the position */
	fake_free(f);
}

/* After a reset (29h) a command that depends on the position is refused, until the drive is positioned. */
static void reset_refuses_positional_commands(void **state)
{
	(void)state;
	struct fake *f = fake_new(2);
	struct phys_scsi_unit u = drive0;
	answer_sense(f, sense_of(SK_UNIT_ATTENTION, ASC_POWER_ON_RESET), true); /* descriptor format, too */
	uint8_t wfm[6] = {SCSI_OP_WRITE_FILEMARKS6};
	struct phys_scsi_reply r;
	assert_int_equal(phys_scsi_exec(&f->scsi, &u, "WRITE FILEMARKS(6)", wfm, sizeof wfm, PHYS_SCSI_NONE, NULL, 0,
					PHYS_SCSI_POSITIONAL, &r),
			 VTL_OK);
	assert_int_equal(f->n_sent, 1); /* not sent again behind the caller's back */
	assert_true(u.position_lost);
	assert_int_equal(phys_scsi_fail_reply(&f->scsi, &u, "WRITE FILEMARKS(6)", &r), VTL_E_IO);
	assert_non_null(strstr(phys_error(&f->scsi.pub), "the tape position is no longer known"));
	/* Refused without being sent. */
	assert_int_equal(phys_scsi_run_nodata(&f->scsi, &u, "WRITE FILEMARKS(6)", wfm, sizeof wfm, PHYS_SCSI_POSITIONAL),
			 VTL_E_IO);
	assert_int_equal(f->n_sent, 1);
	assert_non_null(strstr(phys_error(&f->scsi.pub), "not sent: the drive was reset"));
	/* A rewind puts it at a known place again. */
	answer_status(f, SCSI_GOOD);
	answer_status(f, SCSI_GOOD);
	uint8_t rew[6] = {SCSI_OP_REWIND};
	assert_int_equal(phys_scsi_known_place(&u, phys_scsi_run_nodata(&f->scsi, &u, "REWIND", rew, sizeof rew, 0)),
			 VTL_OK);
	assert_int_equal(phys_scsi_run_nodata(&f->scsi, &u, "WRITE FILEMARKS(6)", wfm, sizeof wfm, PHYS_SCSI_POSITIONAL),
			 VTL_OK);
	assert_int_equal(f->n_sent, 3);
	fake_free(f);
}

/* BUSY is sent again busy_retries times, then reported by name. */
static void busy_gives_up(void **state)
{
	(void)state;
	struct fake *f = fake_new(1);
	struct phys_scsi_unit u = drive0;
	answer_status(f, SCSI_BUSY);
	answer_status(f, SCSI_BUSY);
	uint8_t tur[6] = {SCSI_OP_TEST_UNIT_READY};
	assert_int_equal(phys_scsi_run_nodata(&f->scsi, &u, "TEST UNIT READY", tur, sizeof tur, 0), VTL_E_IO);
	assert_int_equal(f->n_sent, 2);
	assert_string_equal(phys_error(&f->scsi.pub), "drive 0 (LUN 1): TEST UNIT READY: BUSY (status 08h)");
	answer_status(f, SCSI_RESERVATION_CONFLICT);
	assert_int_equal(phys_scsi_run_nodata(&f->scsi, &u, "TEST UNIT READY", tur, sizeof tur, 0), VTL_E_BUSY);
	fake_free(f);
}

/* What each sense stands for, in either format, and the words the operator reads. */
static void sense_to_errors(void **state)
{
	(void)state;
	static const struct {
		enum scsi_sense_key key;
		enum scsi_asc asc;
		int rc;
	} cases[] = {
		{SK_MEDIUM_ERROR, ASC_WRITE_ERROR, VTL_E_MEDIUM},
		{SK_DATA_PROTECT, ASC_WRITE_PROTECTED, VTL_E_READONLY},
		{SK_BLANK_CHECK, ASC_EOD_DETECTED, VTL_E_EOD},
		{SK_VOLUME_OVERFLOW, ASC_EOM_DETECTED, VTL_E_EOM},
		{SK_NO_SENSE, ASC_BOT_DETECTED, VTL_E_NOTFOUND},
		{SK_ILLEGAL_REQUEST, ASC_MEDIUM_SOURCE_EMPTY, VTL_E_SRC_EMPTY},
		{SK_ILLEGAL_REQUEST, ASC_MEDIUM_DESTINATION_FULL, VTL_E_DST_FULL},
		{SK_ILLEGAL_REQUEST, ASC_MEDIUM_MAGAZINE_NOT_ACCESSIBLE, VTL_E_INACCESSIBLE},
		{SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED, VTL_E_BUSY},
		{SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB, VTL_E_INVAL},
		{SK_NOT_READY, ASC_INCOMPATIBLE_MEDIUM, VTL_E_INCOMPATIBLE},
		{SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE, VTL_E_IO},
	};
	struct fake *f = fake_new(0);
	uint8_t mv[PHYS_MOVE_CDB_LEN];
	char name[48];
	phys_move_cdb(mv, 0, 1025, 257, name, sizeof name);
	for (size_t i = 0; i < VTL_ARRAY_SIZE(cases); i++)
		for (int desc = 0; desc < 2; desc++) {
			f->n = f->next = 0;
			answer_sense(f, sense_of(cases[i].key, cases[i].asc), desc);
			assert_int_equal(phys_scsi_move(&f->scsi, 1025, 257), cases[i].rc);
		}
	assert_string_equal(phys_error(&f->scsi.pub),
			    "changer (fake): MOVE MEDIUM 1025 -> 257: HARDWARE ERROR, internal target failure (44/00h)");
	fake_free(f);
}

/* An older drive refuses the long READ POSITION: the short form answers, and is used from then on. */
static void read_position_falls_back(void **state)
{
	(void)state;
	struct fake *f = fake_new(0);
	struct phys_scsi_unit u = drive0;
	bool short_form = false;
	answer_sense(f, sense_invalid_cdb_field(1, 4), false);
	struct answer s = {.status = SCSI_GOOD, .data = {0x80, 0, 0, 0, 0, 0, 0, 42}, .data_len = 20};
	assert_true(f->n < SCRIPT_MAX);
	f->script[f->n++] = s;
	struct phys_drive_status st = {.file = 7};
	assert_int_equal(phys_scsi_read_position(&f->scsi, &u, &short_form, &st), VTL_OK);
	assert_true(short_form);
	assert_true(st.bot);
	assert_true(st.block == 42);
	assert_true(st.file == UINT64_MAX);
	f->script[f->n++] = s;
	assert_int_equal(phys_scsi_read_position(&f->scsi, &u, &short_form, &st), VTL_OK);
	assert_int_equal(f->n_sent, 3);
	assert_int_equal(f->sent[0][1], SCSI_RP_LONG);
	assert_int_equal(f->sent[1][1], SCSI_RP_SHORT);
	assert_int_equal(f->sent[2][1], SCSI_RP_SHORT);
	/* The long form: block and file. */
	short_form = false;
	struct answer l = {.status = SCSI_GOOD, .data_len = 32};
	l.data[15] = 9;  /* logical object number, bytes 8..15 */
	l.data[23] = 2;  /* logical file identifier, bytes 16..23 */
	f->script[f->n++] = l;
	assert_int_equal(phys_scsi_read_position(&f->scsi, &u, &short_form, &st), VTL_OK);
	assert_false(short_form);
	assert_false(st.bot);
	assert_true(st.block == 9 && st.file == 2);
	/* Any other refusal is an error, and st is left as it was. */
	answer_sense(f, sense_of(SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT), false);
	assert_int_equal(phys_scsi_read_position(&f->scsi, &u, &short_form, &st), VTL_E_IO);
	assert_true(st.block == 9 && st.file == 2);
	fake_free(f);
}

/* A drive that is becoming ready is polled until it is; one that says something else is an error. */
static void wait_ready_polls(void **state)
{
	(void)state;
	struct fake *f = fake_new(0);
	struct phys_scsi_unit u = drive0;
	u.position_lost = true;
	answer_sense(f, sense_of(SK_NOT_READY, ASC_BECOMING_READY), false);
	answer_sense(f, sense_of(SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT), true);
	answer_status(f, SCSI_GOOD);
	assert_int_equal(phys_scsi_wait_ready(&f->scsi, &u, 5), VTL_OK);
	assert_int_equal(f->n_sent, 3);
	assert_false(u.position_lost); /* a tape just loaded is at its beginning */
	answer_sense(f, sense_of(SK_MEDIUM_ERROR, ASC_MEDIA_LOAD_EJECT_FAILED), false);
	assert_int_equal(phys_scsi_wait_ready(&f->scsi, &u, 5), VTL_E_MEDIUM);
	assert_non_null(strstr(phys_error(&f->scsi.pub), "not ready after a load (waited up to 5 s)"));
	fake_free(f);
}

/* ------------------------------------------------------------- moves and threads */

#define SLOW_MS 200
#define DRIVE_ADDR 256
#define SLOT_ADDR 1024

/* A transport whose drive commands take SLOW_MS, and a drive whose readiness after a load takes as long;
 * what the other threads saw is recorded, not asserted, off the test's own thread. */
struct slow {
	struct phys_scsi scsi;
	struct phys_scsi_unit drive;
	atomic_bool drive_busy, arriving;
	atomic_int moves, moves_during_drive_command;
};

static int slow_execute(struct phys_scsi *s, struct phys_scsi_unit *u, const char *op, const uint8_t *cdb,
			unsigned cdb_len, enum phys_scsi_dir dir, void *buf, size_t len, struct phys_scsi_result *res)
{
	(void)op;
	(void)cdb_len;
	(void)dir;
	(void)buf;
	struct slow *sl = (struct slow *)s;
	if (u == &sl->drive) {
		atomic_store(&sl->drive_busy, true);
		phys_sleep_ms(SLOW_MS);
		atomic_store(&sl->drive_busy, false);
	} else if (cdb[0] == SCSI_OP_MOVE_MEDIUM) {
		atomic_fetch_add(&sl->moves, 1);
		if (atomic_load(&sl->drive_busy))
			atomic_fetch_add(&sl->moves_during_drive_command, 1);
	}
	res->status = SCSI_GOOD;
	res->residual = len; /* READ ELEMENT STATUS: an empty answer */
	return VTL_OK;
}

static const struct phys_scsi_transport slow_transport = {.execute = slow_execute};

static struct phys_scsi_unit *slow_unit(struct phys_scsi *s, unsigned d)
{
	(void)d;
	return &((struct slow *)s)->drive;
}

static int slow_left(struct phys_scsi *s, unsigned d)
{
	(void)s;
	(void)d;
	return VTL_OK;
}

static int slow_arrived(struct phys_scsi *s, unsigned d)
{
	(void)d;
	struct slow *sl = (struct slow *)s;
	atomic_store(&sl->arriving, true);
	phys_sleep_ms(SLOW_MS);
	atomic_store(&sl->arriving, false);
	return VTL_OK;
}

static const struct phys_scsi_move_ops slow_moves = {slow_unit, slow_left, slow_arrived};

/* A drive call as an implementation makes it: TEST UNIT READY under the drive's lock. */
static void *drive_call(void *arg)
{
	struct slow *sl = arg;
	struct phys_scsi_reply r;
	phys_scsi_lock(&sl->drive);
	vtl_ignore(phys_scsi_test_unit_ready(&sl->scsi, &sl->drive, &r)); /* the transport always answers GOOD */
	phys_scsi_unlock(&sl->drive);
	return NULL;
}

static void *load(void *arg)
{
	struct slow *sl = arg;
	vtl_ignore(phys_scsi_move_medium(&sl->scsi.pub, &slow_moves, SLOT_ADDR, DRIVE_ADDR)); /* counted in sl */
	return NULL;
}

static void wait_for(atomic_bool *flag)
{
	for (unsigned i = 0; i < 10 * SLOW_MS && !atomic_load(flag); i++)
		phys_sleep_ms(1);
	assert_true(atomic_load(flag));
}

static void moves_wait_for_the_drive(void **state)
{
	(void)state;
	struct slow *sl = calloc(1, sizeof *sl);
	assert_non_null(sl);
	assert_int_equal(phys_scsi_init(&sl->scsi, &no_ops, &slow_transport, 0, 4096), VTL_OK);
	assert_int_equal(phys_scsi_unit_init(&sl->drive, VTL_LOCK_PHYS_DRIVE), VTL_OK);
	snprintf(sl->drive.name, sizeof sl->drive.name, "drive 0");
	sl->scsi.pub.drives = 1;
	sl->scsi.pub.drive_addr[0] = DRIVE_ADDR;

	/* A load asked for while the drive runs a command: MOVE MEDIUM goes only once the command is done. */
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, drive_call, sl), 0);
	wait_for(&sl->drive_busy);
	assert_int_equal(phys_scsi_move_medium(&sl->scsi.pub, &slow_moves, SLOT_ADDR, DRIVE_ADDR), VTL_OK);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&sl->moves), 1);
	assert_int_equal(atomic_load(&sl->moves_during_drive_command), 0);

	/* While the loaded drive gets ready, the robot serves an inventory; the drive's next call waits. */
	assert_int_equal(pthread_create(&t, NULL, load, sl), 0);
	wait_for(&sl->arriving);
	struct phys_element e[4];
	unsigned n;
	assert_int_equal(phys_scsi_inventory(&sl->scsi.pub, e, 4, &n), VTL_OK);
	assert_true(atomic_load(&sl->arriving)); /* done without waiting for the drive */
	phys_scsi_lock(&sl->drive);
	assert_false(atomic_load(&sl->arriving)); /* the drive's lock came only after the load was complete */
	phys_scsi_unlock(&sl->drive);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&sl->moves), 2);

	phys_scsi_unit_destroy(&sl->drive);
	phys_scsi_release(&sl->scsi);
	free(sl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unit_attention_is_retried),
		cmocka_unit_test(reset_refuses_positional_commands),
		cmocka_unit_test(busy_gives_up),
		cmocka_unit_test(sense_to_errors),
		cmocka_unit_test(read_position_falls_back),
		cmocka_unit_test(wait_ready_polls),
		cmocka_unit_test(moves_wait_for_the_drive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
