/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A migrated cartridge loaded into a drive, as a host sees it while the
 * library stages it back: NOT READY / becoming ready until the first records
 * are on disk, reads that follow the stage (read-through) and wait when they
 * overtake it, a MEDIUM ERROR (never a false end of data) for what a failed
 * stage could not bring back, a write that waits for the whole cartridge
 * and tells the library its physical copies are stale, and a load that asks
 * a copy in progress to let go of the cartridge. No command waits on a
 * stage that never ends for longer than the drive's stage wait: it ends with
 * NOT READY / becoming ready, and works once the stage has ended; a write the
 * library cannot record ends with HARDWARE ERROR and changes nothing.
 *
 * A thread of the test plays the migrator: it appends blocks to the
 * cartridge through its own writable open, as a stage does.
 */
#include "tests/unit/scsi_host.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "common/vtl_error.h"

#define BC "M00001L8"
#define BLOCK 4096u
#define READY_WAIT_MS 5000

/* The library as the drive sees it: what the stage says, and what the drive asked. */
struct fake_lib {
	atomic_int stage; /* enum ssc_stage */
	atomic_int requests, yields, modifies;
	atomic_bool modify_fails; /* the catalog cannot record a host's write */
	struct vtl_cart *holder; /* a copy in progress: let go on yield */
};

static void f_request(void *arg, const char *barcode)
{
	(void)barcode;
	atomic_fetch_add(&((struct fake_lib *)arg)->requests, 1);
}

static enum ssc_stage f_poll(void *arg, const char *barcode)
{
	(void)barcode;
	return (enum ssc_stage)atomic_load(&((struct fake_lib *)arg)->stage);
}

static void f_yield(void *arg, const char *barcode)
{
	(void)barcode;
	struct fake_lib *l = arg;
	atomic_fetch_add(&l->yields, 1);
	if (l->holder) {
		EXPECT_RC(vtl_cart_close(l->holder), 0);
		l->holder = NULL;
	}
}

static int f_modify(void *arg, const char *barcode)
{
	(void)barcode;
	struct fake_lib *l = arg;
	atomic_fetch_add(&l->modifies, 1);
	return atomic_load(&l->modify_fails) ? VTL_E_IO : VTL_OK;
}

static const struct ssc_stage_ops fake_ops = {
	.request = f_request, .poll = f_poll, .yield = f_yield, .modify = f_modify,
};

/* The stage: blocks 0..n-1, then a filemark unless cut short; the stage ends as end_state says. */
struct stager {
	struct vtl_pool *pool;
	struct fake_lib *lib;
	unsigned blocks, stop_after; /* stop_after < blocks: the stage fails there */
	unsigned delay_us;
	atomic_bool done;
	int rc;
};

static void *stage_thread(void *arg)
{
	struct stager *s = arg;
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = NULL;
	uint8_t *b = malloc(BLOCK); /* plain malloc: the test's allocator is not for other threads */
	s->rc = b ? vtl_cart_open(s->pool, BC, &p, &c) : VTL_E_NOMEM;
	bool cut = s->stop_after < s->blocks;
	for (unsigned i = 0; s->rc == VTL_OK && i < s->blocks && i < s->stop_after; i++) {
		gen_data(b, BLOCK, i, i & 1);
		s->rc = vtl_cart_write_block(c, b, BLOCK);
		if (s->rc == VTL_OK && i % 8 == 7)
			s->rc = vtl_cart_sync(c);
		usleep(s->delay_us);
	}
	if (s->rc == VTL_OK && !cut)
		s->rc = vtl_cart_write_filemarks(c, 1);
	if (c) {
		int rc = vtl_cart_close(c);
		s->rc = s->rc ? s->rc : rc;
	}
	free(b);
	atomic_store(&s->done, true);
	atomic_store(&s->lib->stage, cut ? SSC_STAGE_FAILED : SSC_STAGE_DONE);
	return NULL;
}

static void tur(struct host *h)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_simple(cdb, 0x00), SCSI_DIR_NONE, NULL, 0);
}

static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Loads the migrated cartridge (its catalog end of data: eod) into a drive that asks lib. */
static void load_migrated(struct host *h, struct fake_lib *lib, uint64_t eod)
{
	atomic_store(&lib->stage, SSC_STAGE_RUNNING);
	host_stage(h, &fake_ops, lib);
	host_new_cart(h, BC, 0);
	struct ssc_medium m = {.barcode = BC, .migrated = true, .eod = eod};
	char err[128];
	EXPECT_RC(ssc_insert(h->d, &m, err, sizeof err), 0);
	assert_int_equal(atomic_load(&lib->requests), 1);
}

/* Waits for TEST UNIT READY to say GOOD, after the attention of the load; fails after READY_WAIT_MS. */
static void wait_ready(struct host *h)
{
	uint64_t until = ms_now() + READY_WAIT_MS;
	for (;;) {
		tur(h);
		if (h->c.status == SCSI_GOOD)
			return;
		if (ms_now() > until)
			fail_msg("the drive did not become ready");
		usleep(1000);
	}
}

static void read_block(struct host *h, unsigned key)
{
	uint8_t cdb[6], want[BLOCK], got[BLOCK];
	host_cmd(h, cdb, cdb_read6(cdb, false, false, BLOCK), SCSI_DIR_IN, got, BLOCK);
	expect_good(h);
	gen_data(want, BLOCK, key, key & 1);
	assert_memory_equal(got, want, BLOCK);
}

static void becoming_ready_then_read_through(void **state)
{
	struct host *h = *state;
	struct fake_lib lib = {0};
	load_migrated(h, &lib, 201);
	tur(h);
	expect_sense(h, SK_NOT_READY, ASC_BECOMING_READY); /* nothing on disk yet */
	tur(h);
	expect_sense(h, SK_NOT_READY, ASC_BECOMING_READY);
	struct ssc_status st;
	ssc_status(h->d, &st);
	assert_int_equal(st.state, SSC_STAGING);

	struct stager s = {.pool = h->fx->pool, .lib = &lib, .blocks = 200, .stop_after = 200, .delay_us = 3000};
	atomic_init(&s.done, false);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, stage_thread, &s), 0);
	wait_ready(h);
	/* Ready before the stage ends, and the first block arrives while it still runs: read-through. */
	read_block(h, 0);
	assert_false(atomic_load(&s.done));
	for (unsigned i = 1; i < 200; i++)
		read_block(h, i);
	uint8_t cdb[6], b[BLOCK];
	host_cmd(h, cdb, cdb_read6(cdb, false, false, BLOCK), SCSI_DIR_IN, b, BLOCK);
	expect_sense(h, SK_NO_SENSE, ASC_FILEMARK_DETECTED);
	host_cmd(h, cdb, cdb_read6(cdb, false, false, BLOCK), SCSI_DIR_IN, b, BLOCK);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED); /* only once the stage has ended */
	assert_true(atomic_load(&s.done));
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	/* Whole again: an append works and tells the library once. */
	memset(b, 0x5a, sizeof b);
	host_cmd(h, cdb, cdb_write6(cdb, false, BLOCK), SCSI_DIR_OUT, b, BLOCK);
	expect_good(h);
	host_cmd(h, cdb, cdb_write6(cdb, false, BLOCK), SCSI_DIR_OUT, b, BLOCK);
	expect_good(h);
	assert_int_equal(atomic_load(&lib.modifies), 1);
	assert_int_equal(host_position(h), 203);
}

static void failed_stage_is_a_medium_error(void **state)
{
	struct host *h = *state;
	struct fake_lib lib = {0};
	load_migrated(h, &lib, 41);
	struct stager s = {.pool = h->fx->pool, .lib = &lib, .blocks = 40, .stop_after = 12, .delay_us = 1000};
	atomic_init(&s.done, false);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, stage_thread, &s), 0);
	wait_ready(h);
	for (unsigned i = 0; i < 12; i++)
		read_block(h, i);
	uint8_t cdb[6], b[BLOCK];
	host_cmd(h, cdb, cdb_read6(cdb, false, false, BLOCK), SCSI_DIR_IN, b, BLOCK);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR); /* never BLANK CHECK: the data exists */
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	host_cmd(h, cdb, cdb_read6(cdb, false, false, BLOCK), SCSI_DIR_IN, b, BLOCK);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	assert_int_equal(host_position(h), 12);
}

static void write_waits_for_the_whole_stage(void **state)
{
	struct host *h = *state;
	struct fake_lib lib = {0};
	load_migrated(h, &lib, 101);
	struct stager s = {.pool = h->fx->pool, .lib = &lib, .blocks = 100, .stop_after = 100, .delay_us = 2000};
	atomic_init(&s.done, false);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, stage_thread, &s), 0);
	wait_ready(h);
	read_block(h, 0);
	read_block(h, 1);
	/* Overwriting from block 2 on: the drive lets the stage finish, then writes. */
	uint8_t cdb[6], b[BLOCK];
	memset(b, 0xa5, sizeof b);
	host_cmd(h, cdb, cdb_write6(cdb, false, BLOCK), SCSI_DIR_OUT, b, BLOCK);
	expect_good(h);
	assert_true(atomic_load(&s.done));
	assert_int_equal(atomic_load(&lib.modifies), 1);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_int_equal(host_position(h), 3);
	/* What the host wrote is the end of the tape now. */
	host_cmd(h, cdb, cdb_read6(cdb, false, false, BLOCK), SCSI_DIR_IN, b, BLOCK);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
}

static void unload_while_staging(void **state)
{
	struct host *h = *state;
	struct fake_lib lib = {0};
	load_migrated(h, &lib, 10);
	tur(h);
	expect_sense(h, SK_NOT_READY, ASC_BECOMING_READY);
	EXPECT_RC(ssc_eject(h->d), 0);
	char bc[VTL_LABEL_LEN + 1];
	EXPECT_RC(ssc_remove(h->d, bc), 0);
	assert_string_equal(bc, BC);
	tur(h);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
}

static void load_makes_a_copy_let_go(void **state)
{
	struct host *h = *state;
	struct fake_lib lib = {0};
	host_stage(h, &fake_ops, &lib);
	host_new_cart(h, BC, 0);
	/* The migrator reads it for a copy: its shared lock keeps a writer out until it lets go. */
	struct vtl_cart_params ro = {.readonly = true};
	EXPECT_RC(vtl_cart_open(h->fx->pool, BC, &ro, &lib.holder), 0);
	host_load(h, BC);
	assert_int_equal(atomic_load(&lib.yields), 1);
	assert_null(lib.holder);
	tur(h);
	expect_good(h);
	assert_int_equal(atomic_load(&lib.requests), 0); /* on disk: nothing to recall */
}

struct pending_read {
	struct host *h;
	int status;
};

static void *read_in_thread(void *arg)
{
	struct pending_read *p = arg;
	uint8_t cdb[6];
	uint8_t *b = malloc(BLOCK);
	host_cmd(p->h, cdb, cdb_read6(cdb, false, false, BLOCK), SCSI_DIR_IN, b, BLOCK);
	p->status = p->h->c.status;
	free(b);
	return NULL;
}

/* A read waiting on the stage holds its drive, not the changer or the operator's status. */
static void status_while_a_read_waits(void **state)
{
	struct host *h = *state;
	struct fake_lib lib = {0};
	load_migrated(h, &lib, 4);
	struct stager s = {.pool = h->fx->pool, .lib = &lib, .blocks = 3, .stop_after = 3, .delay_us = 400000};
	atomic_init(&s.done, false);
	pthread_t t, r;
	assert_int_equal(pthread_create(&t, NULL, stage_thread, &s), 0);
	wait_ready(h);
	read_block(h, 0);
	struct pending_read p = {.h = h};
	assert_int_equal(pthread_create(&r, NULL, read_in_thread, &p), 0);
	usleep(100000); /* the read of block 1 now waits for it to come off the tape */
	uint64_t t0 = ms_now();
	struct ssc_status st;
	ssc_status_now(h->d, &st);
	assert_true(ms_now() - t0 < 50);
	assert_true(st.busy);
	assert_int_equal(st.state, SSC_LOADED);
	assert_string_equal(st.barcode, BC);
	pthread_join(r, NULL);
	assert_int_equal(p.status, SCSI_GOOD);
	pthread_join(t, NULL);
	ssc_status_now(h->d, &st);
	assert_false(st.busy);
}

#define WAIT_MS 300    /* the drive's stage wait in the tests of the deadline */
#define SLACK_MS 1500  /* what a loaded machine may add to it */

/* A stage that brought blocks 0..n-1 back, then stalls: the migrator is gone, its job still "running". */
static void stalled_after(struct host *h, struct fake_lib *lib, unsigned n)
{
	struct stager s = {.pool = h->fx->pool, .lib = lib, .blocks = n, .stop_after = n + 1};
	atomic_init(&s.done, false);
	stage_thread(&s); /* writes n blocks and a filemark; the stage's state is set below */
	assert_int_equal(s.rc, 0);
	atomic_store(&lib->stage, SSC_STAGE_RUNNING);
}

/* Runs one command and checks it ended within the deadline, not before it. */
static void within_the_deadline(struct host *h, const uint8_t *cdb, uint8_t len, enum scsi_dir dir, void *b,
				size_t n)
{
	uint64_t t0 = ms_now();
	host_cmd(h, cdb, len, dir, b, n);
	uint64_t took = ms_now() - t0;
	if (took + 5 < WAIT_MS || took > WAIT_MS + SLACK_MS)
		fail_msg("the command took %llu ms; the stage wait is %u ms", (unsigned long long)took, WAIT_MS);
}

static void write_on_a_stalled_stage_is_becoming_ready(void **state)
{
	struct host *h = *state;
	struct fake_lib lib = {0};
	h->stage_wait_ms = WAIT_MS;
	load_migrated(h, &lib, 50);
	stalled_after(h, &lib, 4);
	wait_ready(h);
	read_block(h, 0);
	uint8_t cdb[6], b[BLOCK];
	memset(b, 0x3c, sizeof b);
	uint8_t len = cdb_write6(cdb, false, BLOCK);
	within_the_deadline(h, cdb, len, SCSI_DIR_OUT, b, BLOCK);
	expect_sense(h, SK_NOT_READY, ASC_BECOMING_READY);
	assert_int_equal(atomic_load(&lib.modifies), 0); /* the copies still hold its data */
	assert_int_equal(host_position(h), 1);
	/* Again, and again the same answer: the drive is not stuck, the stage is. */
	within_the_deadline(h, cdb, len, SCSI_DIR_OUT, b, BLOCK);
	expect_sense(h, SK_NOT_READY, ASC_BECOMING_READY);
	tur(h);
	expect_good(h); /* what is back stays readable meanwhile */
	/* The stage ends: the write goes through. */
	atomic_store(&lib.stage, SSC_STAGE_DONE);
	host_cmd(h, cdb, len, SCSI_DIR_OUT, b, BLOCK);
	expect_good(h);
	assert_int_equal(atomic_load(&lib.modifies), 1);
	assert_int_equal(host_position(h), 2);
}

static void read_past_a_stalled_stage_is_becoming_ready(void **state)
{
	struct host *h = *state;
	struct fake_lib lib = {0};
	h->stage_wait_ms = WAIT_MS;
	load_migrated(h, &lib, 9);
	stalled_after(h, &lib, 3);
	wait_ready(h);
	for (unsigned i = 0; i < 3; i++)
		read_block(h, i);
	uint8_t cdb[6], b[BLOCK];
	uint8_t len = cdb_read6(cdb, false, false, BLOCK);
	/* The filemark the stall left is on disk: the read after it overtakes the stage. */
	host_cmd(h, cdb, len, SCSI_DIR_IN, b, BLOCK);
	expect_sense(h, SK_NO_SENSE, ASC_FILEMARK_DETECTED);
	within_the_deadline(h, cdb, len, SCSI_DIR_IN, b, BLOCK);
	expect_sense(h, SK_NOT_READY, ASC_BECOMING_READY); /* never BLANK CHECK: the stage may still bring it */
	assert_int_equal(host_position(h), 4);
	uint8_t sp[10];
	within_the_deadline(h, sp, cdb_space6(sp, 0, 2), SCSI_DIR_NONE, NULL, 0); /* SPACE 2 blocks */
	expect_sense(h, SK_NOT_READY, ASC_BECOMING_READY);
	within_the_deadline(h, sp, cdb_locate10(sp, 6), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_NOT_READY, ASC_BECOMING_READY);
	within_the_deadline(h, sp, cdb_space6(sp, 3, 0), SCSI_DIR_NONE, NULL, 0); /* SPACE to end of data */
	expect_sense(h, SK_NOT_READY, ASC_BECOMING_READY);
	host_cmd(h, sp, cdb_locate10(sp, 4), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	/* The stage fails for good: what it did not bring back is a MEDIUM ERROR, at once. */
	atomic_store(&lib.stage, SSC_STAGE_FAILED);
	uint64_t t0 = ms_now();
	host_cmd(h, cdb, len, SCSI_DIR_IN, b, BLOCK);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	assert_true(ms_now() - t0 < WAIT_MS);
	host_cmd(h, sp, cdb_locate10(sp, 6), SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR); /* LOCATE too: never a false end of data */
}

static void unrecorded_write_is_refused(void **state)
{
	struct host *h = *state;
	struct fake_lib lib = {0};
	host_stage(h, &fake_ops, &lib);
	host_new_cart(h, BC, 0);
	host_load(h, BC);
	tur(h);
	expect_good(h);
	atomic_store(&lib.modify_fails, true);
	uint8_t cdb[6], b[BLOCK];
	memset(b, 0x11, sizeof b);
	uint8_t len = cdb_write6(cdb, false, BLOCK);
	host_cmd(h, cdb, len, SCSI_DIR_OUT, b, BLOCK);
	expect_sense(h, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	assert_int_equal(host_position(h), 0); /* nothing written */
	host_cmd(h, cdb, cdb_read6(cdb, false, false, BLOCK), SCSI_DIR_IN, b, BLOCK);
	expect_sense(h, SK_BLANK_CHECK, ASC_EOD_DETECTED);
	/* Once the library can record it, the next write asks again and goes through. */
	atomic_store(&lib.modify_fails, false);
	host_cmd(h, cdb, cdb_write6(cdb, false, BLOCK), SCSI_DIR_OUT, b, BLOCK);
	expect_good(h);
	assert_int_equal(atomic_load(&lib.modifies), 2);
	assert_int_equal(host_position(h), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(becoming_ready_then_read_through, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(failed_stage_is_a_medium_error, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(write_waits_for_the_whole_stage, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(unload_while_staging, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(load_makes_a_copy_let_go, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(status_while_a_read_waits, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(write_on_a_stalled_stage_is_becoming_ready, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(read_past_a_stalled_stage_is_becoming_ready, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(unrecorded_write_is_refused, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
