/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-cartridge compression feedback under a simulated clock: a
 * cartridge whose compression costs more writer time than the disk time it
 * saves stops compressing and says why; a probe turns it back on once the
 * disk is slow enough for the saving to pay; a cartridge with no disk time
 * measured, or with data that does not shrink, keeps compressing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backend/compress_policy.h"

#define MIB (1ull << 20)
#define MS 1000000ull

static uint64_t fake_ns;
static uint64_t fake_clock(void)
{
	return fake_ns;
}

/* The machine being simulated: writer time to compress a MiB, disk time per stored MiB. */
struct sim {
	uint64_t cpu_ns_per_mib;
	uint64_t disk_ns_per_mib; /* paid at the sync, as buffered writes pay it */
	unsigned ratio_div;       /* stored = plain / ratio_div when compressed */
	uint64_t since_sync;      /* stored bytes not yet synced */
};

/* One 1 MiB record as cart_write.c records it; returns whether it was compressed. */
static bool sim_record(struct cpol *p, struct sim *s)
{
	bool offered = cpol_compress_next(p);
	uint64_t stored = MIB;
	if (offered) {
		uint64_t t0 = cpol_now(p);
		fake_ns += s->cpu_ns_per_mib;
		cpol_cpu_done(p, t0);
		stored = MIB / s->ratio_div;
	}
	uint64_t t0 = cpol_now(p);
	fake_ns += 1000; /* the write() into the page cache */
	cpol_io_done(p, t0, stored, false);
	s->since_sync += stored;
	cpol_record(p, MIB, stored, offered);
	return offered;
}

static void sim_sync(struct cpol *p, struct sim *s)
{
	uint64_t t0 = cpol_now(p);
	fake_ns += s->disk_ns_per_mib * s->since_sync / MIB;
	cpol_io_done(p, t0, 0, true);
	s->since_sync = 0;
}

/* n MiB with a sync (WRITE FILEMARKS) after every 16 MiB; returns how many records were compressed. */
static unsigned sim_write(struct cpol *p, struct sim *s, unsigned n)
{
	unsigned comp = 0;
	for (unsigned i = 0; i < n; i++) {
		comp += sim_record(p, s);
		if (i % 16 == 15)
			sim_sync(p, s);
	}
	return comp;
}

static void unmeasured_disk_keeps_compressing(void **state)
{
	(void)state;
	struct cpol p;
	cpol_init(&p, fake_clock);
	struct sim s = {.cpu_ns_per_mib = 5 * MS, .disk_ns_per_mib = 1 * MS, .ratio_div = 2};
	/* No sync at all: the disk's cost is unknown, so the mode page's choice stands. */
	for (unsigned i = 0; i < 4 * CPOL_WINDOW / MIB; i++)
		assert_true(sim_record(&p, &s));
	assert_string_equal(cpol_reason(&p), "on (disk not measured)");
}

static void cpu_bound_stops_and_resumes_when_the_disk_slows(void **state)
{
	(void)state;
	struct cpol p;
	cpol_init(&p, fake_clock);
	/* 4 ms to compress a MiB to half; the disk takes 1 ms per MiB: saving 0.5 ms costs 4. */
	struct sim s = {.cpu_ns_per_mib = 4 * MS, .disk_ns_per_mib = 1 * MS, .ratio_div = 2};
	unsigned w = (unsigned)(CPOL_WINDOW / MIB);
	assert_int_equal(sim_write(&p, &s, w), w); /* the first window compresses and measures */
	assert_false(cpol_compress_next(&p));
	assert_string_equal(cpol_reason(&p), "off (CPU-bound)");
	/* Stored raw for CPOL_PROBE_EVERY windows, then one probe window compresses. */
	assert_int_equal(sim_write(&p, &s, CPOL_PROBE_EVERY * w), 0);
	assert_true(cpol_compress_next(&p));
	assert_string_equal(cpol_reason(&p), "on (probing)");
	/* Still CPU-bound: the probe turns it off again. */
	assert_int_equal(sim_write(&p, &s, w), w);
	assert_false(cpol_compress_next(&p));
	/* The disk becomes 20 ms per MiB (another cartridge hammers it): saving 10 ms costs 4. The probe
	 * that failed doubled the wait for the next one. */
	s.disk_ns_per_mib = 20 * MS;
	unsigned comp = sim_write(&p, &s, 2 * CPOL_PROBE_EVERY * w);
	assert_int_equal(comp, 0);
	assert_int_equal(sim_write(&p, &s, w), w); /* the probe */
	assert_true(cpol_compress_next(&p));
	assert_string_equal(cpol_reason(&p), "on (pays)");
	assert_int_equal(sim_write(&p, &s, 4 * w), 4 * w);
}

/* A stream that stays CPU-bound is probed less and less often: after 8, 16, 32, then every 64 windows. */
static void probes_back_off_while_cpu_bound(void **state)
{
	(void)state;
	struct cpol p;
	cpol_init(&p, fake_clock);
	struct sim s = {.cpu_ns_per_mib = 4 * MS, .disk_ns_per_mib = 1 * MS, .ratio_div = 2};
	unsigned w = (unsigned)(CPOL_WINDOW / MIB);
	assert_int_equal(sim_write(&p, &s, w), w);
	assert_false(cpol_compress_next(&p));
	static const unsigned waits[] = {CPOL_PROBE_EVERY, 2 * CPOL_PROBE_EVERY, 4 * CPOL_PROBE_EVERY, CPOL_PROBE_MAX,
					 CPOL_PROBE_MAX};
	for (unsigned i = 0; i < sizeof waits / sizeof waits[0]; i++) {
		assert_int_equal(sim_write(&p, &s, (waits[i] - 1) * w), 0);
		assert_false(cpol_compress_next(&p));
		assert_int_equal(sim_write(&p, &s, w), 0); /* the last raw window: the next is the probe */
		assert_true(cpol_compress_next(&p));
		assert_int_equal(sim_write(&p, &s, w), w); /* the probe, still CPU-bound */
		assert_false(cpol_compress_next(&p));
	}
	/* The disk slows: the next probe (64 windows on) turns it on, and a later stop waits 8 again. */
	s.disk_ns_per_mib = 20 * MS;
	assert_int_equal(sim_write(&p, &s, CPOL_PROBE_MAX * w), 0);
	assert_int_equal(sim_write(&p, &s, w), w);
	assert_string_equal(cpol_reason(&p), "on (pays)");
	s.disk_ns_per_mib = 1 * MS;
	assert_int_equal(sim_write(&p, &s, w), w);
	assert_false(cpol_compress_next(&p));
	assert_int_equal(sim_write(&p, &s, CPOL_PROBE_EVERY * w), 0);
	assert_true(cpol_compress_next(&p));
}

static void disk_bound_keeps_compressing(void **state)
{
	(void)state;
	struct cpol p;
	cpol_init(&p, fake_clock);
	struct sim s = {.cpu_ns_per_mib = 1 * MS, .disk_ns_per_mib = 5 * MS, .ratio_div = 2};
	unsigned n = (unsigned)(8 * CPOL_WINDOW / MIB);
	assert_int_equal(sim_write(&p, &s, n), n);
	assert_string_equal(cpol_reason(&p), "on (pays)");
}

static void incompressible_data_is_not_called_cpu_bound(void **state)
{
	(void)state;
	struct cpol p;
	cpol_init(&p, fake_clock);
	/* Sampling random data is cheap but saves nothing: the samples already store it raw. */
	struct sim s = {.cpu_ns_per_mib = 1 * MS / 10, .disk_ns_per_mib = 1 * MS, .ratio_div = 1};
	unsigned n = (unsigned)(4 * CPOL_WINDOW / MIB);
	assert_int_equal(sim_write(&p, &s, n), n);
	assert_true(cpol_compress_next(&p));
}

static void a_small_sync_measures_latency_not_rate(void **state)
{
	(void)state;
	struct cpol p;
	cpol_init(&p, fake_clock);
	struct sim s = {.cpu_ns_per_mib = 4 * MS, .disk_ns_per_mib = 1 * MS, .ratio_div = 2};
	/* A sync after every record: each covers less than CPOL_SYNC_MIN, so none is taken as the disk's rate. */
	for (unsigned i = 0; i < 2 * CPOL_WINDOW / MIB; i++) {
		assert_true(sim_record(&p, &s));
		sim_sync(&p, &s);
	}
	assert_string_equal(cpol_reason(&p), "on (disk not measured)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unmeasured_disk_keeps_compressing),
		cmocka_unit_test(cpu_bound_stops_and_resumes_when_the_disk_slows),
		cmocka_unit_test(probes_back_off_while_cpu_bound),
		cmocka_unit_test(disk_bound_keeps_compressing),
		cmocka_unit_test(incompressible_data_is_not_called_cpu_bound),
		cmocka_unit_test(a_small_sync_measures_latency_not_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
