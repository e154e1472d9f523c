/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The write throttle: the schedule's arithmetic (writes spaced at the rate,
 * no credit saved up while idle), which commands it slows, and over a real
 * pool: idle below its fill threshold, slowing writes (never reads) above it,
 * never with a threshold of 0; a reload's new threshold and rate (throttle_set)
 * take effect at the next write.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "backend/cartridge.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"
#include "vtl/library/throttle.h"

#define NS 1000000000ull
#define MB 1000000ull
#define QUOTA (4u << 20)

static void schedule_spaces_writes_at_the_rate(void **state)
{
	(void)state;
	uint64_t next = 0;
	/* 10 MB/s: writes of 1 MB asked at once start 0.1 s apart. */
	assert_int_equal(throttle_schedule(&next, 0, MB, 10 * MB), 0);
	assert_int_equal(throttle_schedule(&next, 0, MB, 10 * MB), NS / 10);
	assert_int_equal(throttle_schedule(&next, 0, MB, 10 * MB), 2 * NS / 10);
	assert_int_equal(next, 3 * NS / 10);
	/* A write asked while the earlier ones still run waits for the rest of them only. */
	assert_int_equal(throttle_schedule(&next, NS / 10, 2 * MB, 10 * MB), 2 * NS / 10);
	assert_int_equal(next, 5 * NS / 10);
	/* After an idle second nothing was saved up: the next write starts at once, the one after waits again. */
	assert_int_equal(throttle_schedule(&next, 2 * NS, MB, 10 * MB), 0);
	assert_int_equal(throttle_schedule(&next, 2 * NS, 0, 10 * MB), NS / 10); /* a filemark waits its turn */
	assert_int_equal(next, 2 * NS + NS / 10);

	uint8_t cdb[16] = {0x0A};
	assert_true(throttle_is_write(cdb));
	cdb[0] = 0x10;
	assert_true(throttle_is_write(cdb));
	cdb[0] = 0x08; /* READ(6) */
	assert_false(throttle_is_write(cdb));
	cdb[0] = 0x00; /* TEST UNIT READY */
	assert_false(throttle_is_write(cdb));
}

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static int setup(void **state)
{
	if (fx_setup_dirs(state, "vtl-throttle", 1) != 0)
		return -1;
	struct fx *f = *state;
	fx_pool_config(f, 1, VTL_SEGMENT_SIZE_MIN);
	f->cfg.member_quota = QUOTA;
	tl_pool_open(&f->cfg, &f->pool);
	return 0;
}

/* Writes len bytes of incompressible data to a new cartridge: the pool's fill grows by about len. */
static void fill(struct fx *f, const char *bc, size_t len)
{
	EXPECT_RC(vtl_cart_create(f->pool, bc), 0);
	struct vtl_cart *c = tl_cart_open(f->pool, bc, NULL);
	static uint8_t buf[64 << 10];
	for (size_t done = 0; done < len; done += sizeof buf) {
		gen_data(buf, sizeof buf, done, false);
		EXPECT_RC(vtl_cart_write_block(c, buf, sizeof buf), 0);
	}
	EXPECT_RC(vtl_cart_close(c), 0);
}

/* Runs the gate on a command with opcode op and xfer bytes; returns how long it took (ns). */
static uint64_t gate(struct throttle *t, uint8_t op, size_t xfer)
{
	struct scsi_cmd c = {.cdb = {op}, .cdb_len = 6, .xfer_len = xfer};
	uint64_t t0 = mono();
	throttle_gate(t, &c);
	return mono() - t0;
}

static void slows_writes_above_the_threshold(void **state)
{
	struct fx *f = *state;
	struct throttle *t;
	EXPECT_RC(throttle_create(f->pool, 50, 10, &t), 0);
	struct throttle_state st;
	throttle_state(t, &st);
	assert_false(st.active);
	assert_true(st.fill < 50);
	assert_int_equal(st.threshold, 50);
	assert_int_equal(st.rate, 10);
	assert_true(gate(t, 0x0A, MB) < NS / 20);
	assert_true(gate(t, 0x0A, MB) < NS / 20); /* not throttled: no spacing */

	fill(f, "FILL01", 3u << 20); /* 75 % of the quota */
	struct timespec pause = {.tv_sec = 1, .tv_nsec = 50 * 1000 * 1000};
	nanosleep(&pause, NULL); /* the fill is measured at most once a second */
	throttle_state(t, &st);
	assert_true(st.fill >= 70);
	assert_true(st.active);
	/* 10 MB/s: the first 1 MB write goes at once, the second waits about 0.1 s; reads never wait. */
	gate(t, 0x0A, MB);
	uint64_t waited = gate(t, 0x0A, MB);
	print_message("  second 1 MB write waited %.3f s\n", (double)waited / NS);
	assert_true(waited >= NS / 10 - NS / 100);
	assert_true(waited < NS / 2);
	gate(t, 0x0A, MB);
	assert_true(gate(t, 0x08, MB) < NS / 100);
	throttle_destroy(t);

	/* Threshold 0: never throttled, however full. */
	EXPECT_RC(throttle_create(f->pool, 0, 10, &t), 0);
	throttle_state(t, &st);
	assert_false(st.active);
	assert_true(st.fill >= 70);
	gate(t, 0x0A, MB);
	assert_true(gate(t, 0x0A, MB) < NS / 20);
	throttle_destroy(t);
	assert_int_equal(throttle_create(f->pool, 50, 0, &t), VTL_E_INVAL);
}

static void a_reload_changes_threshold_and_rate(void **state)
{
	struct fx *f = *state;
	struct throttle *t;
	fill(f, "FILL02", 3u << 20); /* 75 % of the quota */
	EXPECT_RC(throttle_create(f->pool, 90, 10, &t), 0);
	struct throttle_state st;
	throttle_state(t, &st);
	assert_false(st.active); /* 75 % is below 90 */
	gate(t, 0x0A, MB);
	assert_true(gate(t, 0x0A, MB) < NS / 20);
	/* Threshold 50 at 5 MB/s: the very next writes are measured against it and spaced 0.2 s apart. */
	EXPECT_RC(throttle_set(t, 50, 5), 0);
	throttle_state(t, &st);
	assert_true(st.active);
	assert_int_equal(st.threshold, 50);
	assert_int_equal(st.rate, 5);
	gate(t, 0x0A, MB);
	uint64_t waited = gate(t, 0x0A, MB);
	assert_true(waited >= NS / 5 - NS / 100);
	assert_true(waited < NS);
	/* Back to 0 (never): at once again; a rate of 0 is refused and changes nothing. */
	EXPECT_RC(throttle_set(t, 0, 5), 0);
	gate(t, 0x0A, MB);
	assert_true(gate(t, 0x0A, MB) < NS / 20);
	EXPECT_RC(throttle_set(t, 50, 0), VTL_E_INVAL);
	throttle_state(t, &st);
	assert_int_equal(st.threshold, 0);
	assert_int_equal(st.rate, 5);
	throttle_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(schedule_spaces_writes_at_the_rate),
		cmocka_unit_test_setup_teardown(slows_writes_above_the_threshold, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(a_reload_changes_threshold_and_rate, setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
